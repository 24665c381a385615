//! Turning raw signatures into patterns ready to match, and the cheap test that rules most of
//! them out for a given file.
//!
//! A byte sequence becomes one pattern matched at the start of its window: a leading gap for
//! the first subsequence's offset, then each subsequence (left fragments, anchor sequence,
//! right fragments, with their gaps between them), each later subsequence after a gap of its
//! own. A sequence anchored at the end of the file is the same pattern reversed, matched
//! backwards from the last byte.

use super::error::DroidError;
use super::parse::{RawByteSequence, RawFragment, RawSignature, RawSubSequence, Reference};
use super::syntax::{self, Elem, Lit, Pat};

/// A byte sequence ready to match.
#[derive(Debug, Clone)]
pub(crate) struct Sequence {
    pub(crate) reference: Reference,
    /// In the direction of matching: backwards for [`Reference::Eof`].
    pub(crate) pat: Pat,
    /// Furthest from its end of the file the pattern can reach (`None`: unbounded).
    pub(crate) reach: Option<usize>,
    /// The longest literal the pattern cannot match without (at least 3 bytes), to look for
    /// once before trying the pattern: most files lack it.
    pub(crate) required: Option<Lit>,
}

/// One byte a file must have for a signature to match, at a fixed distance from the start
/// (`from_end: false`) or from the last byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) from_end: bool,
    pub(crate) offset: usize,
    pub(crate) byte: u8,
}

/// An internal signature ready to match: every sequence must match.
#[derive(Debug, Clone)]
pub(crate) struct Signature {
    pub(crate) id: u32,
    /// `Specific` or `Generic`, as the file says.
    #[cfg_attr(
        not(feature = "test-hooks"),
        allow(dead_code, reason = "read by the test harnesses")
    )]
    pub(crate) specificity: String,
    /// The keyed sequence first (it is the cheapest to refute), then the rest.
    pub(crate) sequences: Vec<Sequence>,
    pub(crate) key: Option<Key>,
}

/// Compiles one internal signature.
pub(crate) fn signature(raw: &RawSignature) -> Result<Signature, DroidError> {
    let mut sequences = raw
        .sequences
        .iter()
        .map(|b| sequence(b).map_err(|why| syntax_error(raw.id, b, why)))
        .collect::<Result<Vec<_>, _>>()?;
    // The cheapest to refute first: the first sequence with a key, then those that reach
    // least far (a few bytes at the end refute a DXF before its `SECTION` is looked for
    // anywhere), those that may lie anywhere last. The verdict does not depend on the order.
    sequences.sort_by_key(|s| s.reach.unwrap_or(usize::MAX));
    let keyed = sequences.iter().position(|s| key(s).is_some());
    if let Some(i) = keyed {
        sequences[..=i].rotate_right(1);
    }
    let key = sequences.first().and_then(key);
    Ok(Signature { id: raw.id, specificity: raw.specificity.clone(), sequences, key })
}

fn syntax_error(id: u32, b: &RawByteSequence, why: syntax::SyntaxError) -> DroidError {
    let text = b.subsequences.iter().map(|s| s.sequence.as_str()).collect::<Vec<_>>().join(" ");
    DroidError::Syntax { signature: id, text, why }
}

/// Compiles one byte sequence.
pub(crate) fn sequence(raw: &RawByteSequence) -> Result<Sequence, syntax::SyntaxError> {
    let mut subs: Vec<&RawSubSequence> = raw.subsequences.iter().collect();
    subs.sort_by_key(|s| s.position);
    let mut pat = Pat::default();
    for (i, s) in subs.iter().enumerate() {
        let first = i == 0;
        // The first subsequence of a BOF or EOF sequence without a maximum is at its minimum
        // offset exactly; anywhere else a missing maximum means no bound.
        let fixed = first && raw.reference != Reference::Variable;
        let max = match s.max {
            Some(m) => Some(m.max(s.min)),
            None if fixed => Some(s.min),
            None => None,
        };
        pat.push(Elem::Gap { min: s.min, max });
        let body = subsequence(s)?;
        pat.extend(if raw.reference == Reference::Eof { body.reversed() } else { body });
    }
    if pat.0.iter().all(|e| matches!(e, Elem::Gap { .. })) {
        return Err(syntax::SyntaxError::Empty);
    }
    let reach = pat.max_len();
    let required = pat
        .0
        .iter()
        .filter_map(|e| match e {
            Elem::Lit(l) if l.bytes.len() >= 3 => Some(l),
            _ => None,
        })
        .max_by_key(|l| l.bytes.len())
        .map(|l| Lit::clone(l));
    Ok(Sequence { reference: raw.reference, pat, reach, required })
}

/// A subsequence in file order: left fragments, anchor, right fragments.
fn subsequence(s: &RawSubSequence) -> Result<Pat, syntax::SyntaxError> {
    let anchor = syntax::parse(&s.sequence)?;
    let left = groups(&s.left)?;
    let right = groups(&s.right)?;
    let mut pat = Pat::default();
    // Left fragments: the highest position is furthest left; each one's gap separates it from
    // its right-hand neighbour.
    for (frag, min, max) in left.into_iter().rev() {
        pat.extend(frag);
        pat.push(Elem::Gap { min, max });
    }
    pat.extend(anchor);
    for (frag, min, max) in right {
        pat.push(Elem::Gap { min, max });
        pat.extend(frag);
    }
    Ok(pat)
}

/// Fragments grouped by position (several at one position are alternatives), in position
/// order, each with the gap that separates it from the anchor side.
type Group = (Pat, usize, Option<usize>);

fn groups(frags: &[RawFragment]) -> Result<Vec<Group>, syntax::SyntaxError> {
    let mut positions: Vec<u32> = frags.iter().map(|f| f.position).collect();
    positions.sort_unstable();
    positions.dedup();
    positions
        .into_iter()
        .map(|p| {
            let at: Vec<&RawFragment> = frags.iter().filter(|f| f.position == p).collect();
            let pats = at.iter().map(|f| syntax::parse(&f.value)).collect::<Result<Vec<_>, _>>()?;
            let (min, max) = (at[0].min, at[0].max.map(|m| m.max(at[0].min)));
            let pat = match <[Pat; 1]>::try_from(pats) {
                Ok([one]) => one,
                Err(many) => Pat(vec![Elem::Alt(many)]),
            };
            Ok((pat, min, max))
        })
        .collect()
}

/// The byte at a fixed offset that the sequence starts with, if it has one.
fn key(s: &Sequence) -> Option<Key> {
    let from_end = match s.reference {
        Reference::Bof => false,
        Reference::Eof => true,
        Reference::Variable => return None,
    };
    let (offset, rest) = match s.pat.0.split_first()? {
        (Elem::Gap { min, max: Some(max) }, rest) if min == max => (*min, rest),
        (Elem::Gap { .. }, _) => return None,
        (_, _) => (0, s.pat.0.as_slice()),
    };
    match rest.first()? {
        Elem::Lit(l) => Some(Key { from_end, offset, byte: *l.bytes.first()? }),
        _ => None,
    }
}
