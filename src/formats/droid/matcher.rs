//! Matching a [`Pat`] against a window of bytes, forwards from the start of a file or backwards
//! from its end, by backtracking over gaps and alternatives. Gaps before a literal jump with
//! memchr's searchers instead of trying every offset; a step budget bounds pathological
//! patterns (a sequence that exhausts it is left unresolved, never called a non-match).
//!
//! A failed match also says whether it ran out of bytes: whether some step needed a byte past
//! the end of the haystack. Only then could more of the payload than the window held change
//! the answer; any other failure is final.

use std::cell::Cell;

use super::syntax::{ByteSet, Elem, Lit, Pat};

/// Steps one sequence check may take before it gives up.
pub(crate) const STEP_BUDGET: u32 = 200_000;

/// What matching one sequence against a haystack found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The sequence is there.
    Matched,
    /// The sequence is not there, whatever bytes follow the haystack.
    Refuted,
    /// Not decided: why the search stopped.
    Open(Stop),
}

/// Why a search stopped before it could decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// It needed bytes beyond the haystack (the window, not the payload, ended).
    MoreBytes,
    /// It used up [`STEP_BUDGET`].
    Budget,
    /// The spooled payload could not be read back.
    Unreadable,
}

/// A window of bytes seen in one direction: index 0 is the file's start (forwards) or its last
/// byte (backwards).
pub(crate) trait Hay {
    fn len(&self) -> usize;
    fn at(&self, i: usize) -> u8;
    /// Whether `bytes` (in this direction) are at `pos`.
    fn has(&self, pos: usize, bytes: &[u8]) -> bool;
    /// The first position in `from..=last` where `lit` is.
    fn find(&self, lit: &Lit, from: usize, last: usize) -> Option<usize>;
    /// The first position in `from..=last` holding one of `bytes` (one to three of them).
    fn find_any(&self, bytes: &[u8], from: usize, last: usize) -> Option<usize>;
}

/// memchr for one to three needles, forwards or backwards.
pub(crate) fn memchr_any(bytes: &[u8], region: &[u8], backwards: bool) -> Option<usize> {
    match (bytes, backwards) {
        ([a], false) => memchr::memchr(*a, region),
        ([a, b], false) => memchr::memchr2(*a, *b, region),
        ([a, b, c], false) => memchr::memchr3(*a, *b, *c, region),
        ([a], true) => memchr::memrchr(*a, region),
        ([a, b], true) => memchr::memrchr2(*a, *b, region),
        ([a, b, c], true) => memchr::memrchr3(*a, *b, *c, region),
        _ => None,
    }
}

/// Bytes from the start.
pub(crate) struct Fwd<'a>(pub(crate) &'a [u8]);

/// Bytes from the end, backwards.
pub(crate) struct Rev<'a>(pub(crate) &'a [u8]);

impl Hay for Fwd<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn at(&self, i: usize) -> u8 {
        self.0[i]
    }
    #[inline]
    fn has(&self, pos: usize, bytes: &[u8]) -> bool {
        self.0.get(pos..pos + bytes.len()) == Some(bytes)
    }
    fn find(&self, lit: &Lit, from: usize, last: usize) -> Option<usize> {
        let end = (last + lit.bytes.len()).min(self.0.len());
        let region = self.0.get(from..end)?;
        lit.fwd().find(region).map(|i| from + i)
    }
    fn find_any(&self, bytes: &[u8], from: usize, last: usize) -> Option<usize> {
        let region = self.0.get(from..(last + 1).min(self.0.len()))?;
        memchr_any(bytes, region, false).map(|i| from + i)
    }
}

impl Hay for Rev<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn at(&self, i: usize) -> u8 {
        self.0[self.0.len() - 1 - i]
    }
    #[inline]
    fn has(&self, pos: usize, bytes: &[u8]) -> bool {
        let n = self.0.len();
        if pos + bytes.len() > n {
            return false;
        }
        bytes.iter().enumerate().all(|(j, b)| self.0[n - 1 - pos - j] == *b)
    }
    fn find(&self, lit: &Lit, from: usize, last: usize) -> Option<usize> {
        // Reversed positions from..=last are the real bytes whose match ends at or before
        // n - from and starts at or after n - last - len: the nearest to the end wins.
        let n = self.0.len();
        let len = lit.bytes.len();
        let lo = n.saturating_sub(last + len);
        let hi = n.checked_sub(from)?;
        let region = self.0.get(lo..hi)?;
        lit.rev().rfind(region).map(|i| n - (lo + i + len))
    }
    fn find_any(&self, bytes: &[u8], from: usize, last: usize) -> Option<usize> {
        let n = self.0.len();
        let lo = n.saturating_sub(last + 1);
        let hi = n.checked_sub(from)?;
        let region = self.0.get(lo..hi)?;
        memchr_any(bytes, region, true).map(|i| n - 1 - (lo + i))
    }
}

/// One attempt at matching: the haystack and the steps left.
pub(crate) struct Matcher<'h, H: Hay> {
    hay: &'h H,
    steps: Cell<u32>,
    /// Whether the budget ran out.
    exhausted: Cell<bool>,
    /// Whether some step needed bytes past the haystack's end.
    short: Cell<bool>,
}

impl<'h, H: Hay> Matcher<'h, H> {
    pub(crate) fn new(hay: &'h H) -> Self {
        Matcher {
            hay,
            steps: Cell::new(STEP_BUDGET),
            exhausted: Cell::new(false),
            short: Cell::new(false),
        }
    }

    /// What a finished attempt found, `matched` being its answer.
    pub(crate) fn verdict(&self, matched: bool) -> Verdict {
        if matched {
            Verdict::Matched
        } else if self.exhausted.get() {
            Verdict::Open(Stop::Budget)
        } else if self.short.get() {
            Verdict::Open(Stop::MoreBytes)
        } else {
            Verdict::Refuted
        }
    }

    /// Notes that the bytes from `pos` on, `len` of them, are not all in the haystack.
    fn past_end(&self, pos: usize, len: usize) -> bool {
        let past = pos.saturating_add(len) > self.hay.len();
        if past {
            self.short.set(true);
        }
        past
    }

    /// Whether `pat` matches with its first element at position 0.
    pub(crate) fn matches(&self, pat: &Pat) -> bool {
        self.elems(&pat.0, 0, &mut |_| true)
    }

    /// Whether `pat` matches anywhere, whatever offset its leading gap asks for (for the end
    /// window of a payload, whose offset in the file only matters to sequences that never
    /// reach it).
    pub(crate) fn matches_anywhere(&self, pat: &Pat) -> bool {
        let rest = match pat.0.split_first() {
            Some((Elem::Gap { .. }, rest)) => rest,
            _ => pat.0.as_slice(),
        };
        self.gap(0, 0, None, rest, &mut |_| true)
    }

    fn tick(&self) -> bool {
        let left = self.steps.get();
        if left == 0 {
            self.exhausted.set(true);
            return false;
        }
        self.steps.set(left - 1);
        true
    }

    /// Matches `elems` at `pos`, then hands each end to `k` until one is accepted.
    fn elems(&self, elems: &[Elem], pos: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
        let Some((first, rest)) = elems.split_first() else {
            return k(pos);
        };
        let hay = self.hay;
        match first {
            Elem::Lit(l) => {
                !self.past_end(pos, l.bytes.len())
                    && hay.has(pos, &l.bytes)
                    && self.elems(rest, pos + l.bytes.len(), k)
            }
            Elem::Set(s) => {
                !self.past_end(pos, 1) && s.contains(hay.at(pos)) && self.elems(rest, pos + 1, k)
            }
            Elem::Range { lo, hi, negate, backwards } => {
                !self.past_end(pos, lo.len())
                    && in_range(hay, pos, lo, hi, *backwards) != *negate
                    && self.elems(rest, pos + lo.len(), k)
            }
            Elem::Alt(alts) => alts.iter().any(|a| {
                self.tick() && self.elems(&a.0, pos, &mut |end| self.elems(rest, end, &mut *k))
            }),
            Elem::Gap { min, max } => self.gap(pos, *min, *max, rest, k),
        }
    }

    /// A gap of `min..=max` bytes at `pos`, then `rest`.
    fn gap(
        &self,
        pos: usize,
        min: usize,
        max: Option<usize>,
        rest: &[Elem],
        k: &mut dyn FnMut(usize) -> bool,
    ) -> bool {
        let n = self.hay.len();
        let from = pos + min;
        if self.past_end(from, 0) {
            return false;
        }
        let furthest = max.map_or(usize::MAX, |m| pos.saturating_add(m));
        let last = furthest.min(n);
        match rest.first() {
            None => k(from),
            Some(Elem::Lit(l)) => {
                // A literal the gap allows to start near or past the end may lie beyond it.
                self.past_end(furthest, l.bytes.len());
                let mut at = from;
                while at <= last {
                    let Some(found) = self.hay.find(l, at, last) else { return false };
                    if !self.tick() {
                        return false;
                    }
                    if self.elems(rest, found, k) {
                        return true;
                    }
                    at = found + 1;
                }
                false
            }
            Some(first) => {
                self.past_end(furthest, 1);
                let starts = first_bytes(first);
                if let Some(few) = starts.few() {
                    let mut at = from;
                    while at <= last {
                        let Some(found) = self.hay.find_any(&few, at, last) else { return false };
                        if !self.tick() {
                            return false;
                        }
                        if self.elems(rest, found, k) {
                            return true;
                        }
                        at = found + 1;
                    }
                    return false;
                }
                for at in from..=last {
                    if at < n && !starts.contains(self.hay.at(at)) {
                        continue;
                    }
                    if !self.tick() {
                        return false;
                    }
                    if self.elems(rest, at, k) {
                        return true;
                    }
                }
                false
            }
        }
    }
}

/// The bytes an element can start with (all of them when it can be empty).
pub(crate) fn first_bytes(e: &Elem) -> ByteSet {
    match e {
        Elem::Lit(l) => l.bytes.first().map_or(ByteSet::ALL, |b| ByteSet::range(*b, *b)),
        Elem::Set(s) => *s,
        Elem::Alt(alts) => alts.iter().fold(ByteSet::empty(), |acc, a| {
            acc.union(a.0.first().map_or(ByteSet::ALL, first_bytes))
        }),
        Elem::Range { lo, hi, negate: false, backwards: false } => match (lo.first(), hi.first()) {
            (Some(a), Some(b)) => ByteSet::range(*a, *b),
            _ => ByteSet::ALL,
        },
        Elem::Range { .. } | Elem::Gap { .. } => ByteSet::ALL,
    }
}

/// Whether the bytes at `pos`, read as a big-endian number in file order, are within
/// `lo..=hi` (`backwards`: the haystack runs from the end, so file order is reversed).
fn in_range<H: Hay>(hay: &H, pos: usize, lo: &[u8], hi: &[u8], backwards: bool) -> bool {
    let n = lo.len();
    let bytes = (0..n).map(|j| hay.at(if backwards { pos + n - 1 - j } else { pos + j }));
    bytes.clone().cmp(lo.iter().copied()) != std::cmp::Ordering::Less
        && bytes.cmp(hi.iter().copied()) != std::cmp::Ordering::Greater
}
