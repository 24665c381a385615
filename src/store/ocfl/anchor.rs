//! What webaip itself committed: the trust anchor of OCFL replicas.
//!
//! A replica is hostile input: one replica can hold a version that is valid OCFL (inventory
//! and sidecar agree) and that webaip never wrote, an object webaip never put, or an older
//! version than webaip committed (an old backup restored). Validity says nothing of who wrote
//! it, so the state database records every head inventory a put builds (its SHA-512, before
//! the commit, so a kill after the commit still leaves it known) and what each replica holds
//! once committed (`ocfl_head`). `get`, `log`, `check` and `repair` take as the object's
//! reference the latest recorded head that a replica holds; a copy whose inventory webaip did
//! not record is reported, never served, never copied; a copy older than what webaip
//! committed on its replica is rolled back, and an object webaip committed that no replica
//! holds is missing. With no record of the object (the database lost, or a store written
//! elsewhere), the latest head is taken by consistency only, and said so, and only when more
//! than half of the replicas hold it; when the database records other objects, an object it
//! does not know is never taken at all until the user adopts it (`store repair --adopt`),
//! unless the replicas already held it when the database recorded its first object (a
//! database lost and started again: `ocfl_predating`), which is then judged by majority.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::layout::object_path;
use crate::store::state::OcflRecord;

/// Whether webaip recorded a copy's head inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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

/// What webaip recorded of one object: the head inventories it built (SHA-512 to head), and
/// the head it committed on each replica.
#[derive(Debug, Clone, Default)]
pub(crate) struct Anchor {
    /// The object id.
    pub id: String,
    known: BTreeMap<String, String>,
    /// Replica name to the number of the head webaip last committed there.
    committed: BTreeMap<String, u32>,
}

impl Anchor {
    /// Whether webaip recorded head inventory `sha512` of this object.
    pub(crate) fn knows(&self, sha512: &str) -> bool {
        self.known.contains_key(&sha512.to_ascii_lowercase())
    }

    /// The number of the head webaip last committed on `replica`, if it committed one there.
    pub(crate) fn committed_on(&self, replica: &str) -> Option<u32> {
        self.committed.get(replica).copied()
    }

    /// The latest head webaip committed on any replica (0: none recorded as committed).
    pub(crate) fn latest(&self) -> u32 {
        self.committed.values().copied().max().unwrap_or(0)
    }

    /// The replicas webaip committed the object on, with the head committed there.
    pub(crate) fn committed(&self) -> impl Iterator<Item = (&str, u32)> {
        self.committed.iter().map(|(r, n)| (r.as_str(), *n))
    }
}

/// The number of version name `v3` (or `v003`); 0 when it is not one.
pub(crate) fn version_number(name: &str) -> u32 {
    name.strip_prefix('v').and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// What webaip recorded, by object directory.
#[derive(Debug, Clone, Default)]
pub(crate) struct Anchors {
    by_object: BTreeMap<String, Anchor>,
    /// The database records some OCFL object (perhaps not one of those read here).
    recorded_any: bool,
    /// Objects the replicas held when the database first recorded one (of those read here).
    predating: BTreeSet<String>,
}

impl Anchors {
    /// Adds one record of the state database, under the object directory of its id.
    pub(crate) fn add(&mut self, r: OcflRecord) {
        self.recorded_any = true;
        let a = self.by_object.entry(object_path(&r.identifier)).or_default();
        if a.id.is_empty() {
            a.id = r.identifier;
        }
        if let Some(replica) = r.replica {
            let n = version_number(&r.head);
            let at = a.committed.entry(replica).or_default();
            *at = (*at).max(n);
        }
        a.known.insert(r.inventory_sha512, r.head);
    }

    /// Notes that the database records some OCFL object (when only one object's records
    /// were read).
    pub(crate) fn set_recorded_any(&mut self, any: bool) {
        self.recorded_any |= any;
    }

    /// Notes that object `dir` was on the replicas before the database recorded any object.
    pub(crate) fn add_predating(&mut self, dir: String) {
        self.predating.insert(dir);
    }

    /// The record of the object at `dir`, if any.
    pub(crate) fn of(&self, dir: &str) -> Option<&Anchor> {
        self.by_object.get(dir)
    }

    /// True when the object at `dir` is foreign: the database records nothing of it, records
    /// other objects, and did not find it on the replicas when it first recorded one. Such an
    /// object was planted, or written by another store, after webaip's records began: never
    /// taken until the user adopts it. An object older than the records (the database lost
    /// and started again) is judged by the replicas' majority instead.
    pub(crate) fn foreign(&self, dir: &str) -> bool {
        self.recorded_any && self.of(dir).is_none() && !self.predating.contains(dir)
    }

    /// Every recorded object, by object directory.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Anchor)> {
        self.by_object.iter().map(|(d, a)| (d.as_str(), a))
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
    /// No record of the object: the latest head, held by `holders` of the `replicas`
    /// replicas compared, more than half of them.
    Unrecorded {
        /// The copy taken.
        copy: CopyHead<'a>,
        /// How many replicas hold that inventory.
        holders: usize,
        /// How many replicas were compared (a replica without the object votes against).
        replicas: usize,
    },
    /// No record of the object, and its latest head is held by no more than half of the
    /// replicas: nothing says it is right (one replica can plant or forge anything).
    NoMajority {
        /// The latest head.
        copy: CopyHead<'a>,
        /// How many replicas hold it.
        holders: usize,
        /// How many replicas were compared.
        replicas: usize,
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

/// Chooses the reference among `copies` (in the configuration's order) of the `replicas`
/// replicas compared: the latest recorded head, or with no record, the latest head when more
/// than half of the replicas hold it; never by a replica's name. One rule for every command
/// (get, log, check, repair).
pub(crate) fn reference<'a>(
    anchor: Option<&Anchor>,
    copies: &[CopyHead<'a>],
    replicas: usize,
) -> Reference<'a> {
    let candidates: Vec<&CopyHead> =
        copies.iter().filter(|c| anchor.is_none_or(|a| a.knows(c.sha512))).collect();
    let Some(top) = candidates.iter().map(|c| c.head).max() else { return Reference::None };
    let at_top: Vec<&&CopyHead> = candidates.iter().filter(|c| c.head == top).collect();
    let first = **at_top[0];
    if let Some(other) = at_top.iter().find(|c| !c.sha512.eq_ignore_ascii_case(first.sha512)) {
        return Reference::Diverged(first, ***other);
    }
    let holders = at_top.len();
    match anchor {
        Some(_) => Reference::Recorded(first),
        None if holders * 2 > replicas => Reference::Unrecorded { copy: first, holders, replicas },
        None => Reference::NoMajority { copy: first, holders, replicas },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(shas: &[&str]) -> Anchor {
        let known = shas.iter().map(|s| (s.to_string(), String::new())).collect();
        Anchor { known, ..Anchor::default() }
    }

    #[test]
    fn the_latest_recorded_head_wins_over_a_later_unrecorded_one() {
        let honest = CopyHead { replica: "a", head: 1, sha512: "aa" };
        let forged = CopyHead { replica: "b", head: 2, sha512: "bb" };
        let a = anchor(&["aa"]);
        assert_eq!(reference(Some(&a), &[honest, forged], 2), Reference::Recorded(honest));
        assert_eq!(reference(Some(&anchor(&["cc"])), &[honest, forged], 2), Reference::None);
        // Without a record the latest head is taken only when most replicas hold it; a
        // replica without the object votes against it.
        assert_eq!(
            reference(None, &[honest, forged], 2),
            Reference::NoMajority { copy: forged, holders: 1, replicas: 2 }
        );
        let planted = CopyHead { replica: "c", head: 1, sha512: "cc" };
        assert_eq!(
            reference(None, &[planted], 3),
            Reference::NoMajority { copy: planted, holders: 1, replicas: 3 }
        );
        let again = CopyHead { replica: "b", head: 2, sha512: "bb" };
        assert_eq!(
            reference(None, &[honest, forged, CopyHead { replica: "c", ..again }], 3),
            Reference::Unrecorded { copy: forged, holders: 2, replicas: 3 }
        );
    }

    #[test]
    fn two_inventories_at_one_head_are_diverged_whatever_the_names() {
        let x = CopyHead { replica: "a", head: 2, sha512: "aa" };
        let y = CopyHead { replica: "b", head: 2, sha512: "bb" };
        assert!(matches!(reference(None, &[x, y], 2), Reference::Diverged(..)));
        assert!(matches!(
            reference(Some(&anchor(&["aa", "bb"])), &[y, x], 2),
            Reference::Diverged(..)
        ));
        assert_eq!(reference(Some(&anchor(&["bb"])), &[x, y], 2), Reference::Recorded(y));
    }
}
