//! What webaip itself committed: the trust anchor of OCFL replicas.
//!
//! A replica is hostile input: one replica can hold a version that is valid OCFL (inventory
//! and sidecar agree) and that webaip never wrote. Validity says nothing of who wrote it, so
//! the state database records every head inventory a put builds (its SHA-512, before the
//! commit, so a kill after the commit still leaves it known) and what each replica holds once
//! committed (`ocfl_head`). `get`, `log`, `check` and `repair` take as the object's reference
//! the latest recorded head that a replica holds; a copy whose inventory webaip did not record
//! is reported, never served, never copied. With no record of an object (a store written
//! elsewhere, or the database lost), the latest head is taken by consistency only, and said so.

use std::collections::BTreeMap;

use serde::Serialize;

use super::layout::object_path;
use crate::store::state::OcflRecord;

/// Whether webaip recorded a copy's head inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// webaip built and recorded this head inventory.
    Recorded,
    /// The state database records the object, but not this inventory: a version webaip did
    /// not commit.
    NotRecorded,
    /// The state database records nothing of the object: trusted by consistency only.
    NoRecord,
}

/// What webaip recorded of one object: the head inventories it built (SHA-512 to head).
#[derive(Debug, Clone, Default)]
pub(crate) struct Anchor {
    known: BTreeMap<String, String>,
}

impl Anchor {
    /// Whether webaip recorded head inventory `sha512` of this object.
    pub(crate) fn knows(&self, sha512: &str) -> bool {
        self.known.contains_key(&sha512.to_ascii_lowercase())
    }
}

/// What webaip recorded, by object directory.
#[derive(Debug, Clone, Default)]
pub(crate) struct Anchors(BTreeMap<String, Anchor>);

impl Anchors {
    /// Groups the state database's records by the object directory of their id.
    pub(crate) fn new(records: Vec<OcflRecord>) -> Anchors {
        let mut out: BTreeMap<String, Anchor> = BTreeMap::new();
        for r in records {
            let a = out.entry(object_path(&r.identifier)).or_default();
            a.known.insert(r.inventory_sha512, r.head);
        }
        Anchors(out)
    }

    /// The record of the object at `dir`, if any.
    pub(crate) fn of(&self, dir: &str) -> Option<&Anchor> {
        self.0.get(dir)
    }

    /// Whether a copy of the object at `dir` whose head inventory is `sha512` is recorded.
    pub(crate) fn provenance(&self, dir: &str, sha512: &str) -> Provenance {
        match self.of(dir) {
            None => Provenance::NoRecord,
            Some(a) if a.knows(sha512) => Provenance::Recorded,
            Some(_) => Provenance::NotRecorded,
        }
    }
}

/// One replica's copy of an object, as far as choosing a reference needs it: a head whose
/// inventory and sidecar agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CopyHead<'a> {
    /// The replica.
    pub replica: &'a str,
    /// The head version's number.
    pub head: u32,
    /// The head inventory's SHA-512.
    pub sha512: &'a str,
}

/// The copy an object's other copies are measured against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reference<'a> {
    /// The latest head webaip recorded that a replica holds.
    Recorded(CopyHead<'a>),
    /// No record of the object: the latest head, held by `holders` of `copies` copies.
    Unrecorded {
        /// The copy taken.
        copy: CopyHead<'a>,
        /// How many copies hold that inventory.
        holders: usize,
        /// How many copies there are.
        copies: usize,
    },
    /// Two copies at the latest head hold different inventories and nothing (no record, or
    /// a record of both) decides between them.
    Diverged(CopyHead<'a>, CopyHead<'a>),
    /// No copy to take: none holds a recorded inventory though the object is recorded.
    None,
}

impl<'a> Reference<'a> {
    /// The copy taken, when there is one.
    pub(crate) fn copy(&self) -> Option<CopyHead<'a>> {
        match self {
            Reference::Recorded(c) | Reference::Unrecorded { copy: c, .. } => Some(*c),
            _ => None,
        }
    }
}

/// Chooses the reference among `copies` (in the configuration's order): the latest recorded
/// head, or with no record, the latest head; never by a replica's name.
pub(crate) fn reference<'a>(anchor: Option<&Anchor>, copies: &[CopyHead<'a>]) -> Reference<'a> {
    let candidates: Vec<&CopyHead> =
        copies.iter().filter(|c| anchor.is_none_or(|a| a.knows(c.sha512))).collect();
    let Some(top) = candidates.iter().map(|c| c.head).max() else { return Reference::None };
    let at_top: Vec<&&CopyHead> = candidates.iter().filter(|c| c.head == top).collect();
    let first = **at_top[0];
    if let Some(other) = at_top.iter().find(|c| !c.sha512.eq_ignore_ascii_case(first.sha512)) {
        return Reference::Diverged(first, ***other);
    }
    match anchor {
        Some(_) => Reference::Recorded(first),
        None => Reference::Unrecorded { copy: first, holders: at_top.len(), copies: copies.len() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(shas: &[&str]) -> Anchor {
        Anchor { known: shas.iter().map(|s| (s.to_string(), String::new())).collect() }
    }

    #[test]
    fn the_latest_recorded_head_wins_over_a_later_unrecorded_one() {
        let honest = CopyHead { replica: "a", head: 1, sha512: "aa" };
        let forged = CopyHead { replica: "b", head: 2, sha512: "bb" };
        let a = anchor(&["aa"]);
        assert_eq!(reference(Some(&a), &[honest, forged]), Reference::Recorded(honest));
        assert_eq!(reference(Some(&anchor(&["cc"])), &[honest, forged]), Reference::None);
        // Without a record the latest head is taken, and how many hold it is said.
        assert_eq!(
            reference(None, &[honest, forged]),
            Reference::Unrecorded { copy: forged, holders: 1, copies: 2 }
        );
    }

    #[test]
    fn two_inventories_at_one_head_are_diverged_whatever_the_names() {
        let x = CopyHead { replica: "a", head: 2, sha512: "aa" };
        let y = CopyHead { replica: "b", head: 2, sha512: "bb" };
        assert!(matches!(reference(None, &[x, y]), Reference::Diverged(..)));
        assert!(matches!(
            reference(Some(&anchor(&["aa", "bb"])), &[y, x]),
            Reference::Diverged(..)
        ));
        assert_eq!(reference(Some(&anchor(&["bb"])), &[x, y]), Reference::Recorded(y));
    }
}
