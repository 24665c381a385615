//! What OCFL packages require (dependencies, see [`crate::store::deps`]): recorded at put by
//! the package's OBJID, warned of when not stored, and listed by `store check` when no
//! checked replica holds the required package whole.

use std::collections::BTreeSet;

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

impl Checked<'_> {
    /// Whether this check looked at object directory `obj` on some replica (in a check of
    /// every object, one it did not see is on no replica).
    fn judges(&self, obj: &str) -> bool {
        self.whole || self.seen.iter().any(|s| s.object == obj)
    }

    /// Whether some checked replica holds object directory `obj` with nothing found wrong.
    fn whole_on_one(&self, obj: &str) -> bool {
        self.replicas.iter().any(|r| {
            let on = |replica: &str, object: &str| replica == *r && object == obj;
            self.seen.iter().any(|s| on(&s.replica, &s.object))
                && !self
                    .findings
                    .iter()
                    .any(|f| on(&f.replica, &f.object) && f.kind != FindingKind::NotJudged)
        })
    }
}

impl Store {
    /// The object keeping package `package`, when the store holds it: the object the state
    /// database records it in, its own, or one whose version messages name it.
    pub(crate) fn keeping_object(&self, package: &str) -> Result<Option<String>, StoreError> {
        if let Some(place) = self.state().ocfl_package(package)? {
            return Ok(Some(place.object));
        }
        if self.holds(package)? {
            return Ok(Some(package.into()));
        }
        Ok(self.find_kept(package)?.map(|(object, _)| object))
    }

    /// Records what the package put requires and fills in those the store does not hold
    /// (a warning: packages may arrive in any order).
    pub(crate) fn note_requires(&self, report: &mut PutReport) -> Result<(), StoreError> {
        let requires: BTreeSet<String> = report.requires.iter().cloned().collect();
        self.state().record_ocfl_dependencies(&report.package, &requires)?;
        report.requires_missing.clear();
        for r in requires {
            if self.keeping_object(&r)?.is_none() {
                report.requires_missing.push(r);
            }
        }
        Ok(())
    }

    /// The recorded dependencies the store does not hold whole: the package required is
    /// nowhere in the store, or no checked replica holds the object keeping it with nothing
    /// found wrong.
    pub(crate) fn ocfl_missing_dependencies(
        &self,
        checked: &Checked,
    ) -> Result<Vec<MissingDependency>, StoreError> {
        let mut out = Vec::new();
        // Read first: the state's guard must not live through the loop, which takes it again.
        let recorded = self.state().ocfl_dependencies()?;
        for (package, requires) in recorded {
            let why = match self.keeping_object(&requires) {
                Ok(None) => "not in the store".to_string(),
                // Not looked at in this run: neither missing nor vouched for.
                Ok(Some(object)) if !checked.judges(&object_path(&object)) => continue,
                Ok(Some(object)) if !checked.whole_on_one(&object_path(&object)) => {
                    "no replica holds it whole (see the findings of its object)".to_string()
                }
                Ok(Some(_)) => continue,
                Err(e) => format!("could not be looked for: {e}"),
            };
            out.push(MissingDependency { package, requires, why });
        }
        Ok(out)
    }
}
