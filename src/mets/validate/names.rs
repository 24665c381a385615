//! The validator's identifiers, interned: every distinct string (an ID, an IDREF token, a PREMIS
//! identifier, a digest, an event type) is stored once in one buffer and named by a 4-byte
//! [`Sym`], so the cross-reference state of a document of n pages holds n small records, not
//! n times a handful of `String`s (a package of 20,000 pages took 80 MB of them).

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

/// An interned string; `Sym::EMPTY` is "".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(super) struct Sym(u32);

impl Sym {
    pub(super) const EMPTY: Sym = Sym(0);

    /// Its number: names are numbered from 0 as they are added.
    pub(super) fn index(self) -> usize {
        self.0 as usize
    }
}

/// One buffer of strings, each stored once.
pub(super) struct Names {
    buf: String,
    /// Where each name ends in `buf` (it starts where the previous one ends).
    ends: Vec<u32>,
    /// Names by a 64-bit hash of their text (12 bytes an entry, no second copy of the text).
    /// Exact, not probabilistic: a hash already taken by another text is followed by the hash
    /// of (text, 1), (text, 2) and so on, and every probe compares the stored text; the keys
    /// are random per run, so a document cannot be written to make the probes long.
    index: HashMap<[u8; 8], Sym>,
    keys: RandomState,
}

impl Names {
    pub(super) fn new() -> Self {
        let mut names = Names {
            buf: String::new(),
            ends: Vec::new(),
            index: HashMap::new(),
            keys: RandomState::new(),
        };
        names.intern("");
        names
    }

    fn key(&self, s: &str, probe: u32) -> [u8; 8] {
        self.keys.hash_one((s, probe)).to_le_bytes()
    }

    /// Where `s` is, or the first free key of its probe sequence.
    fn find(&self, s: &str) -> Result<Sym, [u8; 8]> {
        let mut probe = 0u32;
        loop {
            let key = self.key(s, probe);
            match self.index.get(&key) {
                None => return Err(key),
                Some(&sym) if self.str(sym) == s => return Ok(sym),
                Some(_) => probe = probe.wrapping_add(1),
            }
        }
    }

    /// The name of `s`, added when new.
    pub(super) fn intern(&mut self, s: &str) -> Sym {
        let key = match self.find(s) {
            Ok(sym) => return sym,
            Err(key) => key,
        };
        // Past 4 GiB of distinct names (a document far larger than any package's METS; the
        // maps of names took over 10 GB before) a new name reads as "" rather than wrapping
        // onto another one.
        let (Ok(n), Ok(end)) =
            (u32::try_from(self.ends.len()), u32::try_from(self.buf.len() + s.len()))
        else {
            return Sym::EMPTY;
        };
        self.buf.push_str(s);
        self.ends.push(end);
        self.index.insert(key, Sym(n));
        Sym(n)
    }

    /// The name of `s` if it was interned.
    pub(super) fn get(&self, s: &str) -> Option<Sym> {
        self.find(s).ok()
    }

    /// The text of a name.
    pub(super) fn str(&self, sym: Sym) -> &str {
        let i = sym.0 as usize;
        let end = self.ends.get(i).map_or(0, |&e| e as usize);
        let start = if i == 0 { 0 } else { self.ends.get(i - 1).map_or(0, |&e| e as usize) };
        self.buf.get(start..end).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stored_once_and_read_back() {
        let mut n = Names::new();
        let a = n.intern("AMD-1");
        let b = n.intern("TECH-1");
        assert_eq!(n.intern("AMD-1"), a);
        assert_ne!(a, b);
        assert_eq!(n.str(a), "AMD-1");
        assert_eq!(n.str(b), "TECH-1");
        assert_eq!(n.intern(""), Sym::EMPTY);
        assert_eq!(n.get("TECH-1"), Some(b));
        assert_eq!(n.get("nope"), None);
    }

    #[test]
    fn many_names_stay_distinct() {
        let mut n = Names::new();
        let syms: Vec<Sym> = (0..50_000).map(|i| n.intern(&format!("ID-{i}"))).collect();
        for (i, s) in syms.iter().enumerate() {
            assert_eq!(n.str(*s), format!("ID-{i}"));
            assert_eq!(n.get(&format!("ID-{i}")), Some(*s));
        }
    }
}
