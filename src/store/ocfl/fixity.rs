//! `store check` of OCFL replicas as a run (see [`crate::store::fixity`]): the objects found
//! on the replicas (and those the state database records) planned once, then checked a batch
//! at a time, each object listed and checked on every replica and the copies compared; the
//! root's own findings (declaration, stray files) kept with the run. Nothing here writes to a
//! replica.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::anchor::Anchors;
use super::check::{
    FindingKind, ObjectOnReplica, OcflFinding, check_object, in_a_root, object_dir_of, of_the_root,
    root_findings,
};
use super::layout::{IdInDir, ROOT_DECLARATION, id_in_dir, object_path, root_files};
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

/// What a run knows of the store before it checks a batch (the records of a batch's own
/// objects are read with the batch: a store's records need not fit in memory).
struct Records {
    /// Whether the database records any object at all (an object it does not know is then
    /// foreign, unless it predates the records).
    recorded_any: bool,
    /// How many replicas the store has: a majority is counted over all of them, checked or
    /// not.
    configured: usize,
    /// Objects whose removal began and did not finish, by directory (their ids as values).
    removing: BTreeMap<String, String>,
}

impl Store {
    /// What the state database records of the objects in `dirs`: the inventories webaip
    /// built and committed, and whether each predates the records (see [`Anchors::foreign`]).
    fn batch_anchors(
        &self,
        dirs: &BTreeSet<&str>,
        recorded_any: bool,
    ) -> Result<Anchors, StoreError> {
        let state = self.state();
        let mut a = Anchors::default();
        for d in dirs {
            let mut add = |r: OcflRecord| {
                if object_path(&r.identifier) == *d {
                    a.add(r);
                }
            };
            match id_in_dir(d) {
                IdInDir::Whole(id) => state.each_ocfl_record(Some(&id), &mut add)?,
                IdInDir::Start(start) => state.each_ocfl_record_from(&start, &mut add)?,
                IdInDir::Unknown => {}
            }
            state.each_ocfl_predating(Some(d), &mut |p| a.add_predating(p))?;
        }
        a.set_recorded_any(recorded_any);
        Ok(a)
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
        let recorded_any = self.state().records_any_ocfl_object()?;
        let records = Records { recorded_any, configured, removing };
        let session = self.ocfl_session(only, deep, schedule)?;
        let deep = session.run.deep;
        let replicas = self.replicas_in(&session.scope);
        self.sweep(&session, &mut |batch| {
            let dirs: BTreeSet<&str> = batch.iter().map(|p| p.object.as_str()).collect();
            let anchors = self.batch_anchors(&dirs, records.recorded_any)?;
            let run = BatchRun { deep, pace: &session.pace, records: &records, anchors: &anchors };
            check_batch(&replicas, batch, &run)
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
        self.state().each_ocfl_record(None, &mut |r| {
            dirs.insert(object_path(&r.identifier));
        })?;
        let notes = serde_json::to_string(&root).unwrap_or_default();
        let plan = Plan { layout: "ocfl", only, deep, notes: Some(&notes) };
        let mut planned = Some(dirs);
        self.open_session(&plan, schedule, &mut || {
            let o = planned.take().unwrap_or_default();
            Ok(Universe::Objects(Box::new(o.into_iter())))
        })
    }
}

/// Lists replica `r` once, streaming: its object directories into `dirs`, what is wrong
/// with the root itself (no declaration, files in no object, the replica unreadable) into
/// `root`. Only entries no object found so far owns are held until the walk ends (in a sound
/// root, none: an object's declaration sorts before its other files), so memory grows with
/// the objects' directories and the strays, never with every file; each object is listed
/// again when it is checked.
fn survey_root(r: &dyn Replica, dirs: &mut BTreeSet<String>, root: &mut Vec<OcflFinding>) {
    let finding = |key: &str, kind, detail: String| OcflFinding {
        replica: r.name().into(),
        object: String::new(),
        key: key.into(),
        kind,
        detail,
    };
    let root_files: Vec<String> = root_files().into_iter().map(|(n, _)| n).collect();
    let mut declared = false;
    let mut unowned = Vec::new();
    let walked = r.each_listed("", &mut |o| {
        declared |= o.key == ROOT_DECLARATION.0;
        if let Some(d) = object_dir_of(&o.key) {
            dirs.insert(d.to_string());
        }
        if !of_the_root(&o, &root_files) && super::check::owner(dirs, &o.key).is_none() {
            unowned.push(o);
        }
        Ok(())
    });
    if let Err(e) = walked {
        root.push(finding("", FindingKind::Unreadable, e.to_string()));
        return;
    }
    let in_use = declared || !dirs.is_empty();
    root.extend(root_findings(r, in_use));
    for o in unowned.iter().filter(|o| in_a_root(o, in_use)) {
        if super::check::owner(dirs, &o.key).is_none() {
            let (kind, detail) = super::check::stray_finding(o);
            root.push(finding(&o.key, kind, detail));
        }
    }
}

/// How a run checks each of its batches, and what it knows of the batch's objects.
#[derive(Clone, Copy)]
struct BatchRun<'a> {
    deep: bool,
    pace: &'a Pace,
    records: &'a Records,
    anchors: &'a Anchors,
}

/// Checks one batch of objects on every replica, then compares their copies. `None` when the
/// pace stopped it part-way.
fn check_batch(
    replicas: &[&dyn Replica],
    batch: &[PlannedObject],
    run: &BatchRun,
) -> Result<Option<Batch>, StoreError> {
    let BatchRun { deep, pace, records, anchors } = *run;
    let mut found = Found::default();
    let mut bytes = 0;
    let dirs: BTreeSet<&str> = batch.iter().map(|p| p.object.as_str()).collect();
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
    let compared = compare_replicas(&names, records.configured, &found.seen, anchors);
    found.findings.extend(in_batch(compared.findings, &dirs));
    let removing = &records.removing;
    super::remove::as_remains(&mut found.findings, &found.seen, &names, removing, Some(&dirs));
    found.objects = batch
        .iter()
        .filter(|p| {
            found.seen.iter().any(|s| s.object == p.object) || anchors.of(&p.object).is_some()
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
