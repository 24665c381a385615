//! The validator's identifiers, interned: every distinct string (an ID, an IDREF token, a PREMIS
//! identifier, a digest, an event type) is stored once in one buffer and named by a 4-byte
//! [`Sym`], so the cross-reference state of a document of n pages holds n small records, not
//! n times a handful of `String`s (a package of 20,000 pages took 80 MB of them).

use std::collections::HashMap;

use sha2::{Digest, Sha256};

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
    ends: Vec<usize>,
    /// Names by a 128-bit digest of their text. Only the digest is kept (20 bytes an entry
    /// instead of a second copy of the string): finding two strings with one truncated SHA-256
    /// takes about 2^64 hash evaluations, even for someone choosing the IDs, so a collision is
    /// practically impossible; were one found, the two strings would be taken for one name
    /// (a finding missed or a false "used twice"), never memory or disk harm.
    index: HashMap<[u8; 16], Sym>,
}

impl Names {
    pub(super) fn new() -> Self {
        let mut names = Names { buf: String::new(), ends: Vec::new(), index: HashMap::new() };
        names.intern("");
        names
    }

    fn key(s: &str) -> [u8; 16] {
        let digest = Sha256::digest(s.as_bytes());
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        key
    }

    /// The name of `s`, added when new.
    pub(super) fn intern(&mut self, s: &str) -> Sym {
        let key = Self::key(s);
        if let Some(&sym) = self.index.get(&key) {
            return sym;
        }
        // 2^32 distinct names would take well over 100 GB before this point; past it every
        // new name reads as "" rather than wrapping onto another one.
        let Ok(n) = u32::try_from(self.ends.len()) else { return Sym::EMPTY };
        self.buf.push_str(s);
        self.ends.push(self.buf.len());
        self.index.insert(key, Sym(n));
        Sym(n)
    }

    /// The name of `s` if it was interned.
    pub(super) fn get(&self, s: &str) -> Option<Sym> {
        self.index.get(&Self::key(s)).copied()
    }

    /// The text of a name.
    pub(super) fn str(&self, sym: Sym) -> &str {
        let i = sym.0 as usize;
        let end = self.ends.get(i).copied().unwrap_or(0);
        let start = if i == 0 { 0 } else { self.ends.get(i - 1).copied().unwrap_or(0) };
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
}
