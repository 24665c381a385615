//! `store check` of OCFL replicas as a run (see [`crate::store::fixity`]): the objects found
//! on the replicas (and those the state database records) planned once, then checked a batch
//! at a time, each object listed and checked on every replica and the copies compared; the
//! root's own findings (declaration, stray files) kept with the run. Nothing here writes to a
//! replica.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::anchor::Anchors;
use super::check::{
    FindingKind, ObjectOnReplica, OcflFinding, check_object, in_a_root, object_dirs, of_the_root,
    root_findings,
};
use super::layout::{ROOT_DECLARATION, object_path, root_files};
use super::ops::{OcflCheckReport, compare_replicas};
use super::requires::Checked;
use crate::store::fixity::{
    Batch, CheckSchedule, CheckedRun, Pace, Plan, Session, Verdict, fold_parts,
};
use crate::store::replica::{ListedObject, Replica};
use crate::store::state::{ObjectOutcome, OcflRecord, PlannedObject, Universe};
use crate::store::{Store, StoreError};

/// What the batches of a run found, as each records it and as they add up.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Found {
    /// Objects held by some replica, or recorded.
    objects: u64,
    seen: Vec<ObjectOnReplica>,
    findings: Vec<OcflFinding>,
}

/// What webaip recorded of each object, by object directory (each batch is compared with
/// the records of its own objects only).
struct Records {
    by_dir: BTreeMap<String, Vec<OcflRecord>>,
    /// Objects the replicas held when the database first recorded one (see
    /// [`Anchors::foreign`]).
    predating: BTreeSet<String>,
    /// How many replicas the store has: a majority is counted over all of them, checked or
    /// not.
    configured: usize,
    /// Objects whose removal began and did not finish, by directory (their ids as values).
    removing: BTreeMap<String, String>,
}

impl Records {
    /// The records of `dirs`, and whether the database records any object at all (an object
    /// it does not know is then foreign, unless it predates the records).
    fn anchors(&self, dirs: &BTreeSet<&str>) -> Anchors {
        let mut a = Anchors::default();
        for d in dirs {
            for r in self.by_dir.get(*d).into_iter().flatten() {
                a.add(r.clone());
            }
            if self.predating.contains(*d) {
                a.add_predating(d.to_string());
            }
        }
        a.set_recorded_any(!self.by_dir.is_empty());
        a
    }
}

/// Keeps the findings of the batch's objects only.
fn in_batch(findings: Vec<OcflFinding>, dirs: &BTreeSet<&str>) -> Vec<OcflFinding> {
    findings.into_iter().filter(|f| dirs.contains(f.object.as_str())).collect()
}

impl Store {
    /// A check run of OCFL replicas as `schedule` says; the report covers every session.
    pub(crate) fn check_objects_run(
        &self,
        only: Option<&str>,
        deep: bool,
        schedule: &CheckSchedule,
    ) -> Result<CheckedRun<OcflCheckReport>, StoreError> {
        self.ocfl_roots("store check")?;
        let configured = self.replicas.len();
        let removing = self.removals()?;
        let mut records =
            Records { by_dir: BTreeMap::new(), predating: BTreeSet::new(), configured, removing };
        let state = self.state();
        state.each_ocfl_record(None, &mut |r| {
            records.by_dir.entry(object_path(&r.identifier)).or_default().push(r)
        })?;
        state.each_ocfl_predating(None, &mut |d| {
            records.predating.insert(d);
        })?;
        drop(state);
        let session = self.ocfl_session(only, deep, schedule, &records)?;
        let deep = session.run.deep;
        let replicas = self.replicas_in(&session.scope);
        self.sweep(&session, &mut |batch| {
            check_batch(&replicas, batch, deep, &session.pace, &records)
        })?;
        let mut found = Found::default();
        if let Some(notes) = &session.run.notes {
            found.findings = serde_json::from_str(notes)
                .map_err(|e| StoreError::RunRecord { run: session.run.id, why: e.to_string() })?;
        }
        fold_parts(self, &session, &mut |part: Found| {
            found.objects += part.objects;
            found.seen.extend(part.seen);
            found.findings.extend(part.findings);
        })?;
        let names: Vec<&str> = session.scope.iter().map(String::as_str).collect();
        let whole = self.covers_everything(&session)?;
        let checked =
            Checked { replicas: &names, seen: &found.seen, findings: &found.findings, whole };
        let missing_dependencies = self.ocfl_missing_dependencies(&checked)?;
        let not_judged = |f: &OcflFinding| f.kind == FindingKind::NotJudged;
        let problems =
            found.findings.iter().any(|f| !not_judged(f)) || !missing_dependencies.is_empty();
        let judged = !found.findings.iter().any(not_judged);
        let run = self.end_session(&session, problems, judged)?;
        let report = OcflCheckReport {
            deep,
            objects: found.objects,
            seen: found.seen,
            findings: found.findings,
            missing_dependencies,
            clean: run.verdict == Verdict::Clean,
        };
        Ok(CheckedRun { report, run })
    }

    /// Starts a run of the objects the replicas hold and the state database records (each
    /// root listed once, its own findings kept with the run), or takes up the last unfinished
    /// one (whose plan and findings are in the state database already).
    fn ocfl_session(
        &self,
        only: Option<&str>,
        deep: bool,
        schedule: &CheckSchedule,
        records: &Records,
    ) -> Result<Session, StoreError> {
        if schedule.resume {
            let plan = Plan { layout: "ocfl", only, deep, notes: None };
            let none = || Universe::Objects(Box::new(std::iter::empty()));
            return self.open_session(&plan, schedule, &mut || Ok(none()));
        }
        let mut root = Vec::new();
        let mut dirs = BTreeSet::new();
        for r in self.replicas.iter().filter(|r| only.is_none_or(|o| o == r.name())) {
            survey_root(r.as_ref(), &mut dirs, &mut root);
        }
        dirs.extend(records.by_dir.keys().cloned());
        let notes = serde_json::to_string(&root).unwrap_or_default();
        let plan = Plan { layout: "ocfl", only, deep, notes: Some(&notes) };
        let mut planned = Some(dirs);
        self.open_session(&plan, schedule, &mut || {
            let o = planned.take().unwrap_or_default();
            Ok(Universe::Objects(Box::new(o.into_iter())))
        })
    }
}

/// Lists replica `r` once: its object directories into `dirs`, what is wrong with the root
/// itself (no declaration, files in no object, the replica unreadable) into `root`. The
/// listing is dropped here; each object is listed again when it is checked.
fn survey_root(r: &dyn Replica, dirs: &mut BTreeSet<String>, root: &mut Vec<OcflFinding>) {
    let finding = |key: &str, kind, detail: String| OcflFinding {
        replica: r.name().into(),
        object: String::new(),
        key: key.into(),
        kind,
        detail,
    };
    let listing = match r.list("") {
        Ok(l) => l,
        Err(e) => {
            root.push(finding("", FindingKind::Unreadable, e.to_string()));
            return;
        }
    };
    let here = object_dirs(&listing);
    let declared = listing.iter().any(|o| o.key == ROOT_DECLARATION.0);
    root.extend(root_findings(r, declared || !here.is_empty()));
    let root_files: Vec<String> = root_files().into_iter().map(|(n, _)| n).collect();
    let in_use = declared || !here.is_empty();
    for o in listing.iter().filter(|o| in_a_root(o, in_use) && !of_the_root(o, &root_files)) {
        if super::check::owner(&here, &o.key).is_none() {
            let (kind, detail) = super::check::stray_finding(o);
            root.push(finding(&o.key, kind, detail));
        }
    }
    dirs.extend(here);
}

/// Checks one batch of objects on every replica, then compares their copies. `None` when the
/// pace stopped it part-way.
fn check_batch(
    replicas: &[&dyn Replica],
    batch: &[PlannedObject],
    deep: bool,
    pace: &Pace,
    records: &Records,
) -> Result<Option<Batch>, StoreError> {
    let mut found = Found::default();
    let mut bytes = 0;
    let dirs: BTreeSet<&str> = batch.iter().map(|p| p.object.as_str()).collect();
    let anchors = records.anchors(&dirs);
    for p in batch {
        for r in replicas {
            let listing = match listed(*r, &p.object) {
                Ok(l) => l,
                Err(e) => {
                    found.findings.push(OcflFinding {
                        replica: r.name().into(),
                        object: p.object.clone(),
                        key: p.object.clone(),
                        kind: FindingKind::Unreadable,
                        detail: e.to_string(),
                    });
                    continue;
                }
            };
            if listing.is_empty() {
                continue; // not on this replica: the comparison says whether it should be
            }
            let size = if deep { listing.iter().map(|o| o.size).sum() } else { 0 };
            if !pace.admit(size) {
                return Ok(None);
            }
            bytes += size;
            let committed = anchors.of(&p.object).and_then(|a| a.committed_on(r.name()));
            let c = check_object(*r, &p.object, &listing, deep, committed);
            found.seen.push(c.seen);
            found.findings.extend(c.findings);
        }
    }
    for s in &mut found.seen {
        s.provenance = s.inventory_sha512.as_deref().map(|h| anchors.provenance(&s.object, h));
    }
    let names: Vec<&str> = replicas.iter().map(|r| r.name()).collect();
    let compared = compare_replicas(&names, records.configured, &found.seen, &anchors);
    found.findings.extend(in_batch(compared.findings, &dirs));
    let removing = &records.removing;
    super::remove::as_remains(&mut found.findings, &found.seen, &names, removing, Some(&dirs));
    found.objects = batch
        .iter()
        .filter(|p| {
            found.seen.iter().any(|s| s.object == p.object)
                || records.by_dir.contains_key(&p.object)
        })
        .count() as u64;
    let outcomes = outcomes(batch, &names, &found);
    let found = serde_json::to_string(&found).unwrap_or_default();
    Ok(Some(Batch { outcomes, found, bytes }))
}

/// The keys below object directory `dir` on `r` (none: the replica does not hold it).
fn listed(r: &dyn Replica, dir: &str) -> Result<Vec<ListedObject>, StoreError> {
    let prefix = format!("{dir}/");
    Ok(r.list(dir)?.into_iter().filter(|o| o.key.starts_with(&prefix)).collect())
}

/// Each object's outcome on each replica that holds it or should: unreadable, problems, or
/// clean.
fn outcomes(batch: &[PlannedObject], names: &[&str], found: &Found) -> Vec<ObjectOutcome> {
    let mut out = Vec::new();
    for p in batch {
        for name in names {
            let mine = |f: &&OcflFinding| f.object == p.object && f.replica == *name;
            let held = found.seen.iter().any(|s| s.object == p.object && s.replica == *name);
            // A majority not judged says nothing against this copy.
            let kinds: Vec<FindingKind> = found
                .findings
                .iter()
                .filter(mine)
                .map(|f| f.kind)
                .filter(|k| *k != FindingKind::NotJudged)
                .collect();
            let outcome = match kinds.first() {
                None if !held => continue,
                None => "clean",
                Some(_) if kinds.contains(&FindingKind::Unreadable) => "unreadable",
                Some(_) => "problems",
            };
            out.push(ObjectOutcome {
                object: p.object.clone(),
                replica: name.to_string(),
                outcome,
            });
        }
    }
    out
}
