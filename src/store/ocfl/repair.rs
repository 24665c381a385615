//! `store repair` on OCFL replicas: an object damaged or missing on a replica is rebuilt
//! there from a replica whose copy checks clean, as a whole new object tree committed like a
//! put's (see [`super::fs`]): the intact files of the damaged copy are hard-linked, the rest
//! fetched (each content file verified against its digest as it arrives), the inventories
//! taken from the source, the tree checked deep before it is committed.
//!
//! A repair never writes a version no replica committed (it only copies committed versions),
//! never changes an existing version's bytes (a copy that differs from the source's is
//! damage only when the check says so), and never rolls a replica back: an object whose
//! damaged copy has a later head than every intact copy is left and reported. Files no
//! inventory accounts for are kept (linked into the new tree) and stay reported.

use std::collections::BTreeSet;

use serde::Serialize;

use super::check::{FindingKind, Head, OcflFinding, read_head};
use super::fs::FsRoot;
use super::inventory::{INVENTORY, SIDECAR};
use super::layout::OBJECT_DECLARATION;
use super::ops::{OcflCheckReport, accounted_files, precommit, survey};
use crate::store::replica::{Replica, Source};
use crate::store::{Store, StoreError};

/// What `store repair` did to one object on one replica.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectRepair {
    /// The replica repaired.
    pub replica: String,
    /// The object's directory.
    pub object: String,
    /// The replica it was repaired from.
    pub source: Option<String>,
    /// True when the repaired object was committed.
    pub repaired: bool,
    /// Why not, or what was done.
    pub message: String,
}

/// The result of `store repair` on OCFL replicas.
#[derive(Debug, Clone, Serialize)]
pub struct OcflRepairReport {
    /// The check that found what to repair.
    pub check: OcflCheckReport,
    /// Each object repaired (or not).
    pub actions: Vec<ObjectRepair>,
    /// The check after the repairs.
    pub after: OcflCheckReport,
    /// True when the check after the repairs is clean.
    pub repaired: bool,
}

/// Findings that a rebuilt object leaves as they are (they are no damage to a copy).
const LEFT: [FindingKind; 2] = [FindingKind::Extra, FindingKind::UncommittedVersion];

impl Store {
    /// Checks (with `deep`, every content file), then rebuilds every damaged or missing
    /// object copy from a replica whose copy checked clean; then checks again. OCFL replicas
    /// only.
    pub fn repair_objects(&self, deep: bool) -> Result<OcflRepairReport, StoreError> {
        let roots = self.ocfl_roots("store repair")?;
        let check = self.check_objects(None, deep)?;
        let mut targets: BTreeSet<(usize, String)> = BTreeSet::new();
        for f in check.findings.iter().filter(|f| !LEFT.contains(&f.kind) && !f.object.is_empty()) {
            if let Some(i) = self.replicas.iter().position(|r| r.name() == f.replica) {
                targets.insert((i, f.object.clone()));
            }
        }
        let mut actions = Vec::new();
        for (i, object) in targets {
            let bad: Vec<&OcflFinding> = check
                .findings
                .iter()
                .filter(|f| f.object == object && f.replica == self.replicas[i].name())
                .collect();
            actions.push(self.repair_object(&roots[i], i, &object, &bad, &check));
        }
        let after = self.check_objects(None, deep)?;
        let repaired = after.clean;
        Ok(OcflRepairReport { check, actions, after, repaired })
    }

    /// Rebuilds `object` on replica `i` from the best clean copy elsewhere.
    fn repair_object(
        &self,
        root: &FsRoot,
        i: usize,
        object: &str,
        bad: &[&OcflFinding],
        check: &OcflCheckReport,
    ) -> ObjectRepair {
        let mut out = ObjectRepair {
            replica: root.name.clone(),
            object: object.into(),
            source: None,
            repaired: false,
            message: String::new(),
        };
        let Some((s, head)) = self.clean_source(i, object, check) else {
            out.message = "no other replica holds a copy that checks clean".into();
            return out;
        };
        out.source = Some(self.replicas[s].name().into());
        let here = check.seen.iter().find(|o| o.replica == root.name && o.object == object);
        let here_head = here
            .and_then(|o| o.head.as_deref())
            .and_then(|h| h.strip_prefix('v')?.parse::<u32>().ok());
        if here_head.is_some_and(|h| h > head.versions.head) {
            out.message = format!(
                "this copy's head is later than {}'s; a repair never rolls a version back",
                head.inv.head
            );
            return out;
        }
        match self.rebuild(root, i, s, object, &head, bad) {
            Ok(sha) => {
                out.repaired = true;
                out.message = format!("rebuilt at {}", head.inv.head);
                if let Err(e) =
                    self.state().record_ocfl_head(&head.inv.id, &root.name, &head.inv.head, &sha)
                {
                    out.message =
                        format!("{}; the state database could not record it: {e}", out.message);
                }
            }
            Err(e) => out.message = e.to_string(),
        }
        out
    }

    /// The replica (other than `i`) whose copy of `object` checked clean with the latest head.
    fn clean_source(
        &self,
        i: usize,
        object: &str,
        check: &OcflCheckReport,
    ) -> Option<(usize, Head)> {
        let mut best: Option<(usize, Head)> = None;
        for (s, r) in self.replicas.iter().enumerate().filter(|(s, _)| *s != i) {
            let dirty = check.findings.iter().any(|f| {
                f.replica == r.name()
                    && f.object == object
                    && !LEFT.contains(&f.kind)
                    && f.kind != FindingKind::Differs
            });
            let seen = check.seen.iter().find(|o| o.replica == r.name() && o.object == object);
            let Some(id) = seen.and_then(|o| o.id.clone()) else { continue };
            if dirty {
                continue;
            }
            let Ok(Some(head)) = read_head(r.as_ref(), &id) else { continue };
            if best.as_ref().is_none_or(|(_, b)| head.versions.head > b.versions.head) {
                best = Some((s, head));
            }
        }
        best
    }

    /// Stages the object on replica `i` from replica `s`'s copy, keeping every intact file of
    /// its own, checks it deep, and commits it; returns the inventory's SHA-512.
    fn rebuild(
        &self,
        root: &FsRoot,
        i: usize,
        s: usize,
        object: &str,
        head: &Head,
        bad: &[&OcflFinding],
    ) -> Result<String, StoreError> {
        let _lock = root.lock(&head.inv.id)?;
        let (target, source) = (self.replicas[i].as_ref(), self.replicas[s].as_ref());
        let present = survey(target)?.objects.remove(object).unwrap_or_default();
        let damaged: BTreeSet<&str> = bad.iter().map(|f| f.key.as_str()).collect();
        let stage = root.stage(object)?;
        let prefix = format!("{object}/");
        let keep = |key: &str| {
            !damaged.contains(key) && present.iter().any(|o| o.key == key && o.problem.is_none())
        };
        let inventories: BTreeSet<String> =
            [INVENTORY, SIDECAR].iter().map(|n| format!("{object}/{n}")).collect();
        let wanted: BTreeSet<String> =
            accounted_files(head).into_iter().map(|r| format!("{object}/{r}")).collect();
        for o in present.iter().filter(|o| o.problem.is_none() && !damaged.contains(o.key.as_str()))
        {
            // Its own version inventories are kept only when they are the source's too.
            let rel = o.key.strip_prefix(&prefix).unwrap_or(&o.key);
            let inventory_file = rel.ends_with(INVENTORY) || rel.ends_with(SIDECAR);
            if inventories.contains(&o.key) || (inventory_file && wanted.contains(&o.key)) {
                continue;
            }
            stage.link(object, rel)?;
        }
        for key in wanted.iter().chain(&inventories) {
            let rel = key.strip_prefix(&prefix).unwrap_or(key);
            let linked = keep(key) && !(rel.ends_with(INVENTORY) || rel.ends_with(SIDECAR));
            if !linked {
                fetch_into(source, &stage, object, rel, head)?;
            }
        }
        precommit(root, &stage, object, true)?;
        let replacing = !present.is_empty();
        stage.commit(object, replacing)?;
        Ok(head.sha512.clone())
    }
}

/// Copies `rel` of the object from `source` into the stage: a content file verified against
/// its digest, an inventory, sidecar or declaration as it is (the deep pre-commit check reads
/// them).
fn fetch_into(
    source: &dyn Replica,
    stage: &super::fs::Stage,
    object: &str,
    rel: &str,
    head: &Head,
) -> Result<(), StoreError> {
    let key = format!("{object}/{rel}");
    let digest = head.inv.content().find(|(p, _)| *p == rel).map(|(_, d)| d.to_ascii_lowercase());
    match digest {
        Some(d) => {
            let local = Source { root: stage.dir(), name: &key };
            crate::store::fetch_verified(source, &key, local, &d)
        }
        None => {
            let mut bytes = Vec::new();
            let limit = super::inventory::MAX_INVENTORY as usize;
            source.read(&key, &mut |c| {
                if bytes.len() + c.len() > limit {
                    return Err(std::io::Error::other("larger than an inventory is read"));
                }
                bytes.extend_from_slice(c);
                Ok(())
            })?;
            if rel == OBJECT_DECLARATION.0 && bytes != OBJECT_DECLARATION.1.as_bytes() {
                return Err(StoreError::Precommit {
                    replica: source.name().into(),
                    key,
                    detail: "not an OCFL object declaration".into(),
                });
            }
            stage.write(rel, &bytes)
        }
    }
}
