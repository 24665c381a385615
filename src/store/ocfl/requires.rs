//! What OCFL packages require (dependencies, see [`crate::store::deps`]): recorded at put by
//! the package's OBJID, warned of when not stored, and listed by `store check` when no
//! checked replica holds the required package whole.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::check::{FindingKind, ObjectOnReplica, OcflFinding};
use super::layout::object_path;
use crate::store::{MissingDependency, PutReport, Store, StoreError};

/// What a check saw, to judge whether the object keeping a required package is held whole.
pub(crate) struct Checked<'a> {
    /// The replicas checked.
    pub replicas: &'a [&'a str],
    /// Each object on each replica.
    pub seen: &'a [ObjectOnReplica],
    /// What is wrong.
    pub findings: &'a [OcflFinding],
    /// Whether every object was checked: a run of some of them (`--oldest`, `--sample`, a
    /// budget) says nothing of an object it did not see.
    pub whole: bool,
}

/// Which object copies a check saw, and which of them it found something wrong with, by
/// (replica, object directory): looked up once per dependency, so a store of many objects
/// with many dependencies is not scanned once for each.
struct SeenIndex<'a> {
    seen: HashSet<(&'a str, &'a str)>,
    faulty: HashSet<(&'a str, &'a str)>,
    objects: HashSet<&'a str>,
}

impl<'a> SeenIndex<'a> {
    fn of(checked: &Checked<'a>) -> SeenIndex<'a> {
        let seen = checked.seen.iter().map(|s| (s.replica.as_str(), s.object.as_str())).collect();
        let faulty = checked
            .findings
            .iter()
            .filter(|f| f.kind != FindingKind::NotJudged)
            .map(|f| (f.replica.as_str(), f.object.as_str()))
            .collect();
        let objects = checked.seen.iter().map(|s| s.object.as_str()).collect();
        SeenIndex { seen, faulty, objects }
    }
}

impl Checked<'_> {
    /// Whether this check looked at object directory `obj` on some replica (in a check of
    /// every object, one it did not see is on no replica).
    fn judges(&self, index: &SeenIndex, obj: &str) -> bool {
        self.whole || index.objects.contains(obj)
    }

    /// Whether some checked replica holds object directory `obj` with nothing found wrong.
    fn whole_on_one(&self, index: &SeenIndex, obj: &str) -> bool {
        self.replicas.iter().any(|r| {
            let copy = (*r, obj);
            index.seen.contains(&copy) && !index.faulty.contains(&copy)
        })
    }
}

/// Where the store keeps a package, as far as it could be looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Keeping {
    /// In this object (its id).
    Object(String),
    /// Nowhere in the store.
    Absent,
    /// Not known: the lookup failed (why).
    Unknown(String),
}

impl Store {
    /// The object keeping each of `packages`, as far as the store holds them: the object the
    /// state database records it in, else its own, else one whose version messages name it,
    /// found by one reading of the store's inventories for all those still not
    /// placed (a check with many dependencies reads the store once, not once for each).
    pub(crate) fn keeping_objects(
        &self,
        packages: &BTreeSet<String>,
    ) -> Result<BTreeMap<String, Keeping>, StoreError> {
        let mut out = BTreeMap::new();
        let mut unplaced = BTreeSet::new();
        for p in packages {
            let recorded = self.state().ocfl_package(p)?;
            let keeping = match recorded {
                Some(place) => Keeping::Object(place.object),
                None => match self.holds(p) {
                    Ok(true) => Keeping::Object(p.clone()),
                    Ok(false) => {
                        unplaced.insert(p.as_str());
                        continue;
                    }
                    Err(e) => Keeping::Unknown(e.to_string()),
                },
            };
            out.insert(p.clone(), keeping);
        }
        match self.find_kept_each(&unplaced) {
            Ok(mut found) => {
                for p in unplaced {
                    let keeping =
                        found.remove(p).map_or(Keeping::Absent, |(o, _)| Keeping::Object(o));
                    out.insert(p.to_string(), keeping);
                }
            }
            Err(e) => {
                let why = e.to_string();
                out.extend(
                    unplaced.into_iter().map(|p| (p.to_string(), Keeping::Unknown(why.clone()))),
                );
            }
        }
        Ok(out)
    }

    /// Records what the package put requires, when some replica holds the package (a put
    /// that stored nothing requires nothing of the store), and fills in those the store does
    /// not hold (a warning: packages may arrive in any order). A new version's requirements
    /// are added to the earlier ones': every version stays in the object, and what an
    /// earlier one required is still needed to read it.
    pub(crate) fn note_requires(&self, report: &mut PutReport) -> Result<(), StoreError> {
        let requires: BTreeSet<String> = report.requires.iter().cloned().collect();
        if report.failed_replicas.len() < self.replicas.len() {
            self.state().record_ocfl_dependencies(&report.package, &requires)?;
        }
        let keeping = self.keeping_objects(&requires)?;
        report.requires_missing =
            keeping.into_iter().filter(|(_, k)| *k == Keeping::Absent).map(|(p, _)| p).collect();
        Ok(())
    }

    /// The recorded dependencies the store does not hold whole: the package required is
    /// nowhere in the store, or no checked replica holds the object keeping it with nothing
    /// found wrong.
    pub(crate) fn ocfl_missing_dependencies(
        &self,
        checked: &Checked,
    ) -> Result<Vec<MissingDependency>, StoreError> {
        // Read first: the state's guard must not live through the lookups, which take it again.
        let recorded = self.state().ocfl_dependencies()?;
        let required: BTreeSet<String> = recorded.iter().map(|(_, r)| r.clone()).collect();
        let keeping = self.keeping_objects(&required)?;
        let index = SeenIndex::of(checked);
        let mut out = Vec::new();
        for (package, requires) in recorded {
            let why = match &keeping[&requires] {
                Keeping::Absent => "not in the store".to_string(),
                // Not looked at in this run: neither missing nor vouched for.
                Keeping::Object(object) if !checked.judges(&index, &object_path(object)) => {
                    continue;
                }
                Keeping::Object(object) if !checked.whole_on_one(&index, &object_path(object)) => {
                    "no replica holds it whole (see the findings of its object)".to_string()
                }
                Keeping::Object(_) => continue,
                Keeping::Unknown(e) => format!("could not be looked for: {e}"),
            };
            out.push(MissingDependency { package, requires, why });
        }
        Ok(out)
    }
}
