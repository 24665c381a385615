//! `store repair` on OCFL replicas: an object damaged or missing on a replica is rebuilt
//! there from a replica whose copy checks clean, as a whole new object tree committed like a
//! put's (see [`super::fs`]): the intact files of the damaged copy are hard-linked, the rest
//! fetched (each content file verified against its digest as it arrives), the inventories
//! taken from the source, the tree checked deep before it is committed. In a bucket root
//! (see [`super::bucket`]) the missing and damaged files are written in place, content first
//! and the root inventory and its sidecar last; what an interrupted put left there is
//! cleared first.
//!
//! The source is a copy of the object's reference head (see [`super::anchor`]): the latest
//! head webaip recorded, never a version it did not commit; with no record of the object, a
//! head held by more than half of the configured replicas (one without the object votes
//! against it), and what is copied so is not recorded as webaip's. A repair never writes a
//! version webaip did not commit, never changes an existing version's bytes (every intact
//! version inventory of the target must be the source's), and only rolls a copy forward: a
//! copy holding a later version (by its root inventory, or by an intact version inventory
//! when the root's is damaged), or one of the same number with another inventory, or for
//! which webaip committed a later head than the source's, is left and reported; so is a copy
//! holding a version, or an object, webaip did not record. The one version a repair makes
//! visible without a record is a whole first version left in a bucket without its root
//! inventory, of an object the state database records nothing of (see [`super::bucket`]): its
//! own v1 inventory becomes the root's, and nothing is recorded as webaip's.
//! Files no inventory accounts for are moved (hard-linked, then left out of the new tree) to a
//! quarantine directory in the replica's work directory, outside the root: kept, and no
//! longer blocking puts. A replica with no storage root yet (a new or emptied disk) is made
//! one first.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;

use super::anchor::{Anchor, CopyHead, Reference};
use super::bucket::{BucketRoot, Settled};
use super::check::{FindingKind, Head, ObjectOnReplica, OcflFinding, load, read_head, root_file};
use super::fs::FsRoot;
use super::inventory::{INVENTORY, SIDECAR};
use super::layout::{OBJECT_DECLARATION, RootFile, root_files};
use super::ops::{OcflCheckReport, UNANCHORED, copy_heads, precommit};
use super::put::accounted_files;
use super::root::OcflRoot;
use crate::store::replica::{ListedObject, Replica, Source};
use crate::store::{Store, StoreError, StoreRefusal};

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
    /// The objects taken as webaip's on the user's word (`--adopt`): id and head recorded.
    pub adopted: Vec<Adopted>,
    /// Each object repaired (or not).
    pub actions: Vec<ObjectRepair>,
    /// The check after the repairs.
    pub after: OcflCheckReport,
    /// True when the check after the repairs is clean.
    pub repaired: bool,
}

/// An object taken as webaip's by `store repair --adopt`.
#[derive(Debug, Clone, Serialize)]
pub struct Adopted {
    /// The object id.
    pub id: String,
    /// The head recorded as webaip's.
    pub head: String,
    /// Its inventory's SHA-512.
    pub inventory_sha512: String,
    /// The replicas holding it (recorded as committed there).
    pub replicas: Vec<String>,
    /// How many replicas the store has.
    pub configured: usize,
    /// The latest head webaip had recorded as committed before (`null`: it recorded nothing
    /// of the object).
    pub recorded_before: Option<String>,
    /// Replicas whose copy could not be read (each `name: why`): no holders, left to the
    /// repair's check to report.
    pub unreadable: Vec<String>,
}

/// A file system's own directory at its mount point, as a storage root's listing shows it.
const LOST_AND_FOUND: &str = "lost+found/";

/// Findings that are no damage to a copy: files no inventory accounts for, which a repair
/// moves to the work directory's quarantine (they would block every later put).
const LEFT: [FindingKind; 2] = [FindingKind::Extra, FindingKind::UncommittedVersion];

impl Store {
    /// Checks (with `deep`, every content file), then rebuilds every damaged or missing
    /// object copy from a replica whose copy checked clean and holds the object's reference
    /// head (the latest that webaip recorded); then checks again. OCFL replicas only.
    ///
    /// Each of `adopt` (object ids) is first taken as webaip's on the user's word: its latest
    /// head (refused when two copies of that number differ; for an object webaip recorded,
    /// see `Store::plan_adopt`) is recorded as one webaip committed, so the repair copies it
    /// to the replicas that lack it. Without that, an object the state database does not know
    /// is never copied anywhere.
    pub fn repair_objects(
        &self,
        deep: bool,
        adopt: &[String],
    ) -> Result<OcflRepairReport, StoreError> {
        let roots = self.ocfl_roots("store repair")?;
        // Every adoption decided before any is recorded: one refused records none.
        let adopted = adopt.iter().map(|id| self.plan_adopt(id)).collect::<Result<Vec<_>, _>>()?;
        for a in &adopted {
            self.record_adopted(a)?;
        }
        // What interrupted puts left in buckets is cleared first, then checked again.
        let first = self.check_objects(None, deep)?;
        let mut actions = self.finish_roots(roots, &first)?;
        actions.extend(self.settle_interrupted(roots, &first)?);
        actions.extend(self.clear_empty_dirs(roots, &first)?);
        let check = if actions.is_empty() { first } else { self.check_objects(None, deep)? };
        let anchors = self.anchors(None)?;
        let mut targets: BTreeSet<(usize, String)> = BTreeSet::new();
        // The remains of an unfinished removal are never rebuilt: `remove` finishes them.
        let repairable = |f: &&OcflFinding| {
            !f.object.is_empty()
                && !matches!(f.kind, FindingKind::Removing | FindingKind::EmptyDirectory)
        };
        for f in check.findings.iter().filter(repairable) {
            if let Some(i) = self.replicas.iter().position(|r| r.name() == f.replica) {
                targets.insert((i, f.object.clone()));
            }
        }
        for (i, object) in targets {
            let bad: Vec<&OcflFinding> = check
                .findings
                .iter()
                .filter(|f| f.object == object && f.replica == self.replicas[i].name())
                .collect();
            let job = Job { roots, i, object: &object, bad: &bad, check: &check };
            actions.push(self.repair_object(&job, anchors.of(&object)));
        }
        let after = self.check_objects(None, deep)?;
        let repaired = after.clean;
        Ok(OcflRepairReport { check, adopted, actions, after, repaired })
    }

    /// Decides what adopting object `id` takes: its latest head among the copies that read
    /// (a copy that does not is named, and not a holder). An object the state database does
    /// not know is taken on the user's word (no majority asked; two copies of the latest
    /// number that differ are refused). For one it records, only a later head than webaip
    /// committed, held by more than half of the configured replicas, and descending from the
    /// recorded head (its version inventory of that number is the one recorded): adopting
    /// never lowers, forgets or replaces what webaip committed.
    fn plan_adopt(&self, id: &str) -> Result<Adopted, StoreError> {
        self.no_removal_begun(id)?;
        let mut heads = Vec::new();
        let mut unreadable = Vec::new();
        for r in &self.replicas {
            match read_head(r.as_ref(), id) {
                Ok(Some(h)) => heads.push((r.name(), h)),
                Ok(None) => {}
                Err(e) => unreadable.push(format!("{}: {e}", r.name())),
            }
        }
        let copies: Vec<CopyHead> = heads
            .iter()
            .map(|(name, h)| CopyHead { replica: name, head: h.versions.head, sha512: &h.sha512 })
            .collect();
        let named = |c: &CopyHead| format!("v{} on {}", c.head, c.replica);
        // Counted over the holders alone here; a recorded object's majority is asked below.
        let copy = match super::anchor::reference(None, &copies, 0) {
            Reference::Unrecorded { copy, .. } => copy,
            Reference::Diverged(x, y) => {
                let (identifier, a, b) = (id.into(), named(&x), named(&y));
                return Err(StoreRefusal::Diverged { identifier, a, b }.into());
            }
            _ => return Err(StoreRefusal::NoObject(id.into()).into()),
        };
        let holders: Vec<String> = copies
            .iter()
            .filter(|c| c.sha512 == copy.sha512)
            .map(|c| c.replica.to_string())
            .collect();
        let Some((_, head)) = heads.iter().find(|(_, h)| h.sha512 == copy.sha512) else {
            return Err(StoreRefusal::NoObject(id.into()).into());
        };
        let anchors = self.anchors(Some(id))?;
        let recorded = match anchors.of(&super::layout::object_path(id)) {
            Some(a) => Some(self.adoptable(a, head, copy.replica, holders.len())?),
            None => None,
        };
        Ok(Adopted {
            id: id.into(),
            head: head.inv.head.clone(),
            inventory_sha512: copy.sha512.to_string(),
            replicas: holders,
            configured: self.replicas.len(),
            recorded_before: recorded.filter(|n| *n > 0).map(|n| format!("v{n}")),
            unreadable,
        })
    }

    /// For an object webaip recorded: the latest head it committed, when head `h` (read from
    /// `from`, held by `holders` replicas) may be adopted over it; else why not.
    fn adoptable(
        &self,
        a: &Anchor,
        h: &Head,
        from: &str,
        holders: usize,
    ) -> Result<u32, StoreError> {
        let (id, latest) = (h.inv.id.as_str(), a.latest());
        let copy = CopyHead { replica: from, head: h.versions.head, sha512: &h.sha512 };
        let refuse = |why: String| -> StoreError {
            StoreRefusal::NotAdopted { identifier: id.into(), why }.into()
        };
        if a.knows(copy.sha512) && copy.head >= latest {
            return Ok(latest); // webaip's already: recording its holders lowers nothing
        }
        if copy.head <= latest {
            return Err(refuse(format!(
                "webaip committed v{latest} (the state database says so), and the latest head \
                 the replicas hold is v{} on {}: adopting it would forget or replace a committed \
                 version; restore v{latest} on a replica and run `store repair`",
                copy.head, copy.replica
            )));
        }
        let replicas = self.replicas.len();
        if holders * 2 <= replicas {
            return Err(refuse(format!(
                "v{} is held by {holders} of {replicas} replicas, and webaip recorded the \
                 object at v{latest}: a later head it did not commit is adopted only when more \
                 than half of the configured replicas hold it",
                copy.head
            )));
        }
        let source = self.replica(copy.replica)?;
        let dir = format!("{}/{}", super::layout::object_path(id), h.versions.name(latest));
        let base = (latest > 0)
            .then(|| load(source, &dir).ok().flatten().filter(|l| l.sidecar.is_ok()))
            .flatten();
        if latest > 0 && !base.is_some_and(|l| a.knows(&l.sha512)) {
            return Err(refuse(format!(
                "v{} on {} does not descend from v{latest}, the head webaip committed (its \
                 v{latest} inventory is not the one recorded)",
                copy.head, copy.replica
            )));
        }
        Ok(latest)
    }

    /// Records what [`Store::plan_adopt`] decided: the head as one webaip built, and as
    /// committed on each replica holding it.
    pub(super) fn record_adopted(&self, a: &Adopted) -> Result<(), StoreError> {
        self.note_predating()?;
        let mut state = self.state();
        state.record_ocfl_inventory(&a.id, &a.head, &a.inventory_sha512)?;
        for r in &a.replicas {
            state.record_ocfl_head(&a.id, r, &a.head, &a.inventory_sha512)?;
        }
        Ok(())
    }

    /// Writes, on each replica whose check found its root files wanting, those webaip writes
    /// that are absent, empty or cut short (the start of webaip's bytes), under the root's
    /// lock, the declaration last; other bytes are left as they are (never overwritten:
    /// `check` goes on reporting them). One action per file written.
    fn finish_roots(
        &self,
        roots: &[OcflRoot],
        check: &OcflCheckReport,
    ) -> Result<Vec<ObjectRepair>, StoreError> {
        let files = root_files();
        let wanting =
            |f: &&OcflFinding| f.object.is_empty() && files.iter().any(|(n, _)| *n == f.key);
        let names: BTreeSet<&str> =
            check.findings.iter().filter(wanting).map(|f| f.replica.as_str()).collect();
        let mut out = Vec::new();
        for (root, r) in roots.iter().zip(&self.replicas).filter(|(_, r)| names.contains(r.name()))
        {
            let _making = root.lock("")?;
            for (name, bytes) in &files {
                let how = match root_file(r.as_ref(), name) {
                    Ok(RootFile::Absent) => "absent",
                    Ok(RootFile::CutShort) => "empty or cut short",
                    _ => continue,
                };
                crate::hooks::write_point();
                r.write_bytes(name, bytes, false)?;
                out.push(ObjectRepair {
                    replica: r.name().into(),
                    object: String::new(),
                    source: None,
                    repaired: true,
                    message: format!("wrote the root's {name}, which was {how}"),
                });
            }
        }
        Ok(out)
    }

    /// Removes the empty directories `check` found on folder roots (never a mount point's
    /// `lost+found`, which fsck needs), and the directories
    /// above them this leaves empty (nothing is in them, so nothing is lost; OCFL allows
    /// none); one action for each found.
    fn clear_empty_dirs(
        &self,
        roots: &[OcflRoot],
        check: &OcflCheckReport,
    ) -> Result<Vec<ObjectRepair>, StoreError> {
        let mut out = Vec::new();
        for f in check.findings.iter().filter(|f| f.kind == FindingKind::EmptyDirectory) {
            let Some(i) = self.replicas.iter().position(|r| r.name() == f.replica) else {
                continue;
            };
            let OcflRoot::Fs(root) = &roots[i] else { continue };
            if f.key == LOST_AND_FOUND {
                out.push(ObjectRepair {
                    replica: f.replica.clone(),
                    object: String::new(),
                    source: None,
                    repaired: false,
                    message: "left lost+found, the file system's own: OCFL allows it in no root; give a directory below the mount point as the root".into(),
                });
                continue;
            }
            let removed = root.remove_empty_from(&f.key)?;
            let inside = format!("{}/", f.object);
            let removed: Vec<&str> =
                removed.iter().map(|d| d.strip_prefix(&inside).unwrap_or(d)).collect();
            if !removed.is_empty() {
                out.push(ObjectRepair {
                    replica: f.replica.clone(),
                    object: f.object.clone(),
                    source: None,
                    repaired: true,
                    message: format!("removed the empty directories {}", removed.join(", ")),
                });
            }
        }
        Ok(out)
    }

    /// Clears, on bucket roots, what interrupted puts left that `check` found (a version
    /// never committed, a root sidecar left stale: see [`super::bucket`]), each object under
    /// its lock; one action per object cleared.
    fn settle_interrupted(
        &self,
        roots: &[OcflRoot],
        check: &OcflCheckReport,
    ) -> Result<Vec<ObjectRepair>, StoreError> {
        let left = [FindingKind::UncommittedVersion, FindingKind::SidecarStale];
        let mut objects = BTreeSet::new();
        for f in check.findings.iter().filter(|f| left.contains(&f.kind)) {
            let i = self.replicas.iter().position(|r| r.name() == f.replica);
            if let Some(i) = i.filter(|i| matches!(roots[*i], OcflRoot::Bucket(_))) {
                objects.insert((i, f.object.clone()));
            }
        }
        let mut out = Vec::new();
        for (i, obj) in objects {
            let OcflRoot::Bucket(b) = &roots[i] else { continue };
            let _lock = b.lock_object(&obj)?;
            for (replica, settled) in self.settle_object(roots, &obj, None, Some(i))? {
                let mut repaired = true;
                let message = match settled {
                    Settled::Nothing => continue,
                    Settled::Kept(files) => {
                        repaired = false;
                        format!(
                            "kept the {files} files of a first version without a root \
                             inventory: the state database does not show them to be what a \
                             put of webaip's left when killed (an object that lost its root \
                             inventory, or one webaip did not write); move them away, or \
                             restore the root inventory and `store repair --adopt` the object"
                        )
                    }
                    Settled::Removed(keys) => format!(
                        "removed the {} files of a version an interrupted put never committed \
                         (no root inventory named them)",
                        keys.len()
                    ),
                    Settled::Completed { head, .. } => format!(
                        "wrote the root inventory and its sidecar from {head}'s: a whole first \
                         version (its inventory agreeing with its sidecar, every content file of \
                         its SHA-512) that had lost them; the state database records nothing of \
                         the object, so the copy is judged by consistency, not recorded as \
                         webaip's"
                    ),
                    Settled::Sidecar { head, .. } => format!(
                        "wrote the root sidecar an interrupted put left stale (the root \
                         inventory is {head}'s, whose own sidecar names it): the copy is at {head}"
                    ),
                };
                let object = obj.clone();
                out.push(ObjectRepair { replica, object, source: None, repaired, message });
            }
        }
        Ok(out)
    }

    /// Rebuilds the object on replica `job.i` from a clean copy of its reference head.
    fn repair_object(&self, job: &Job, anchor: Option<&Anchor>) -> ObjectRepair {
        let root = &job.roots[job.i];
        let mut out = ObjectRepair {
            replica: root.name().into(),
            object: job.object.into(),
            source: None,
            repaired: false,
            message: String::new(),
        };
        if job.bad.iter().any(|f| f.kind == FindingKind::UnknownObject) {
            out.message = format!(
                "the state database records nothing of this object: left as it is, copied \
                 nowhere (`store repair --adopt {}` takes it as webaip's)",
                job.id()
            );
            return out;
        }
        if job.bad.iter().any(|f| f.kind == FindingKind::NotRecorded) {
            out.message = "holds a version webaip did not commit: left as it is (move the \
                           object away to have it rebuilt from a recorded copy)"
                .into();
            return out;
        }
        let (s, reference) = match self.repair_source(job, anchor) {
            Ok(found) => found,
            Err(why) => {
                out.message = why.to_string();
                return out;
            }
        };
        out.source = Some(self.replicas[s].name().into());
        match self.rebuild(job, s, &reference) {
            Ok((head, staged)) => {
                out.repaired = true;
                out.message = format!("rebuilt at {}", head.inv.head);
                if let Some(q) = staged.quarantined {
                    out.message = format!(
                        "{}; the files no inventory accounts for were moved to {}",
                        out.message,
                        q.display()
                    );
                }
                if !staged.dropped.is_empty() {
                    out.message = format!(
                        "{}; left out of the rebuilt object and not kept (links, FIFOs and \
                         devices are never followed nor copied): {}",
                        out.message,
                        staged.dropped.join(", ")
                    );
                }
                // A head taken by consistency only is not recorded: the record is what
                // webaip committed, and this is not known to be.
                if anchor.is_none() {
                    out.message = format!("{}; {UNANCHORED}", out.message);
                } else if let Err(e) = self.state().record_ocfl_head(
                    &head.inv.id,
                    root.name(),
                    &head.inv.head,
                    &head.sha512,
                ) {
                    out.message =
                        format!("{}; the state database could not record it: {e}", out.message);
                }
            }
            Err(e) => out.message = e.to_string(),
        }
        out
    }

    /// The replica (other than the target) to rebuild from, and the SHA-512 of the head
    /// inventory it holds: a copy that checked clean at the object's reference head. With no
    /// record of the object, that head must be held by more than half of the copies; a
    /// reference that cannot be taken is why not.
    fn repair_source(
        &self,
        job: &Job,
        anchor: Option<&Anchor>,
    ) -> Result<(usize, String), NoSource> {
        let on: Vec<&ObjectOnReplica> =
            job.check.seen.iter().filter(|o| o.object == job.object).collect();
        let copies = copy_heads(&on);
        let named = |c: &CopyHead| format!("v{} on {}", c.head, c.replica);
        let reference = match super::anchor::reference(anchor, &copies, self.replicas.len()) {
            Reference::Recorded(c) | Reference::Unrecorded { copy: c, .. } => c,
            Reference::NoMajority { copy, holders, replicas } => {
                return Err(NoSource::Minority { head: named(&copy), holders, replicas });
            }
            Reference::Diverged(x, y) => {
                return Err(NoSource::Diverged { a: named(&x), b: named(&y) });
            }
            Reference::None if on.is_empty() => return Err(NoSource::Gone),
            Reference::None => return Err(NoSource::Unrecorded),
        };
        let here = self.replicas[job.i].name();
        // Never rebuilt at a head older than the one webaip committed here.
        if let Some(n) = anchor.and_then(|a| a.committed_on(here)).filter(|n| *n > reference.head) {
            return Err(NoSource::Behind { recorded: n, reference: named(&reference) });
        }
        let clean = |name: &str| {
            !job.check.findings.iter().any(|f| {
                f.replica == name
                    && f.object == job.object
                    && !LEFT.contains(&f.kind)
                    && f.kind != FindingKind::Differs
            })
        };
        let source = copies
            .iter()
            .filter(|c| c.replica != here && c.sha512 == reference.sha512 && clean(c.replica))
            .find_map(|c| self.replicas.iter().position(|r| r.name() == c.replica));
        match source {
            Some(s) => Ok((s, reference.sha512.to_string())),
            None => Err(NoSource::NoCleanCopy(named(&reference))),
        }
    }

    /// Stages the object on the target from replica `s`'s copy, keeping every intact file of
    /// its own, checks it deep, and commits it; returns the head committed. Both replicas'
    /// locks are held throughout, and what the check saw is read again under them: a put that
    /// ran meanwhile stops the repair instead of being undone or blamed.
    fn rebuild(&self, job: &Job, s: usize, reference: &str) -> Result<(Head, Staged), StoreError> {
        let (root, object, i) = (&job.roots[job.i], job.object, job.i);
        let (target, source) = (self.replicas[i].as_ref(), self.replicas[s].as_ref());
        let stale = |what: &str| StoreError::Precommit {
            replica: target.name().into(),
            key: object.into(),
            detail: format!(
                "{what} changed since the check (a put ran?); run `store repair` again"
            ),
        };
        let id = job.check.seen.iter().find(|o| o.replica == source.name() && o.object == object);
        let id = id.and_then(|o| o.id.clone()).unwrap_or_default();
        let _locks = lock_in_order(job.roots, i, s, &id)?;
        // A new or emptied replica is made a storage root first; a directory holding other
        // things is refused, so no object is ever written into what is not a root.
        root.ensure_root(target)?;
        let head = match read_head(source, &id)? {
            Some(h) if h.sha512 == reference => h,
            _ => return Err(stale("the source's head")),
        };
        let seen = job.check.seen.iter().find(|o| o.replica == target.name() && o.object == object);
        let before = seen.and_then(|o| o.inventory_sha512.clone());
        let now =
            super::check::load(target, object)?.filter(|l| l.sidecar.is_ok() && l.parsed.is_ok());
        if now.map(|l| l.sha512) != before {
            return Err(stale("this copy's head"));
        }
        let held = held_head(target, object, seen)?;
        let other = before.as_deref().is_some_and(|b| b != reference);
        // A later head here, whether or not its root inventory or sidecar still reads, or
        // another inventory of the same number: never replaced.
        if held > head.versions.head || (other && held == head.versions.head) {
            return Err(StoreError::Precommit {
                replica: target.name().into(),
                key: object.into(),
                detail: format!(
                    "this copy holds v{held}, not behind {}: a repair never rolls a version back nor replaces one",
                    head.inv.head
                ),
            });
        }
        descends(target, source, object, &head)?;
        let staged = match root {
            OcflRoot::Fs(root) => self.stage_from(root, target, source, object, &head, job.bad)?,
            OcflRoot::Bucket(b) => {
                let copy = TargetCopy { target, bad: job.bad, checked: before.is_some() };
                rebuild_in_bucket(b, &copy, source, object, &head)?
            }
        };
        Ok((head, staged))
    }

    /// Builds the object tree from the source's head and the target's intact files, checks it
    /// deep and commits it.
    fn stage_from(
        &self,
        root: &FsRoot,
        target: &dyn Replica,
        source: &dyn Replica,
        object: &str,
        head: &Head,
        bad: &[&OcflFinding],
    ) -> Result<Staged, StoreError> {
        let present = target.list(object)?;
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
        let mut unaccounted = Vec::new();
        for o in present.iter().filter(|o| o.problem.is_none()) {
            // Its own version inventories are kept only when they are the source's too.
            let rel = o.key.strip_prefix(&prefix).unwrap_or(&o.key);
            let inventory_file = rel.ends_with(INVENTORY) || rel.ends_with(SIDECAR);
            if inventories.contains(&o.key) || (inventory_file && wanted.contains(&o.key)) {
                continue;
            }
            if !wanted.contains(&o.key) {
                unaccounted.push(rel);
            } else if !damaged.contains(o.key.as_str()) {
                stage.link(object, rel)?;
            }
        }
        let quarantined = if unaccounted.is_empty() {
            None
        } else {
            Some(root.quarantine(object, &unaccounted)?)
        };
        let dropped = not_files(root, &present, &prefix);
        for key in wanted.iter().chain(&inventories) {
            let rel = key.strip_prefix(&prefix).unwrap_or(key);
            let linked = keep(key) && !(rel.ends_with(INVENTORY) || rel.ends_with(SIDECAR));
            if !linked {
                fetch_into(source, &stage, object, rel, head)?;
            }
        }
        precommit(root, &stage, object, true)?;
        // Exchanged when the object's directory is there (even with no declaration left in
        // it), renamed into place when it is not.
        let replacing = match std::fs::symlink_metadata(root.root.join(object)) {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                return Err(StoreError::Replica {
                    replica: root.name.clone(),
                    key: object.into(),
                    source: Box::new(e.into()),
                });
            }
        };
        stage.commit(object, replacing)?;
        Ok(Staged { quarantined, dropped })
    }
}

/// Rebuilds the object in a bucket root from `source`'s copy of `head`, in place (see
/// [`BucketRoot::rebuild`]): the target's intact files kept, the files no inventory accounts
/// for moved to the local quarantine first.
fn rebuild_in_bucket(
    b: &BucketRoot,
    copy: &TargetCopy,
    source: &dyn Replica,
    object: &str,
    head: &Head,
) -> Result<Staged, StoreError> {
    let target = copy.target;
    let present = target.list(object)?;
    let damaged: BTreeSet<&str> = copy.bad.iter().map(|f| f.key.as_str()).collect();
    let prefix = format!("{object}/");
    let wanted: Vec<String> =
        accounted_files(head).into_iter().map(|r| format!("{object}/{r}")).collect();
    let roots: BTreeSet<String> =
        [INVENTORY, SIDECAR].iter().map(|n| format!("{object}/{n}")).collect();
    let unaccounted: Vec<&str> = present
        .iter()
        .filter(|o| !wanted.contains(&o.key) && !roots.contains(&o.key))
        .map(|o| o.key.strip_prefix(&prefix).unwrap_or(&o.key))
        .collect();
    let quarantined = if unaccounted.is_empty() {
        None
    } else {
        Some(b.quarantine(target, object, &unaccounted)?)
    };
    // A copy whose root inventory did not read was not checked against the manifest: each
    // content file it keeps is hashed first (what a deep pre-commit check does in a stage).
    let content: BTreeSet<String> =
        head.inv.content().map(|(p, _)| format!("{prefix}{p}")).collect();
    let intact = |key: &str| {
        if copy.checked || !content.contains(key) {
            return true;
        }
        let rel = key.strip_prefix(&prefix).unwrap_or(key);
        let digest = head.inv.content().find(|(p, _)| *p == rel).map(|(_, d)| d);
        let hashed = crate::store::hash_copy(target, key).ok();
        hashed.zip(digest).is_some_and(|(h, d)| h.eq_ignore_ascii_case(d))
    };
    let keep = |key: &str| {
        !damaged.contains(key)
            && present.iter().any(|o| o.key == key && o.problem.is_none())
            && intact(key)
    };
    b.rebuild(target, source, head, &wanted, &keep)?;
    Ok(Staged { quarantined, dropped: Vec::new() })
}

/// The copy a bucket repair rebuilds: its replica, what the check found there, and whether
/// the check could check its files (its root inventory read).
struct TargetCopy<'a> {
    target: &'a dyn Replica,
    bad: &'a [&'a OcflFinding],
    checked: bool,
}

/// What staging a rebuilt object left out of it.
struct Staged {
    /// Where the files no inventory accounts for were moved.
    quarantined: Option<PathBuf>,
    /// Links, FIFOs and devices that were in the object (each named, a link with its target).
    dropped: Vec<String>,
}

/// The entries of an object that are not regular files, named (object-relative; a link with
/// its target, read without following it).
fn not_files(root: &FsRoot, present: &[ListedObject], prefix: &str) -> Vec<String> {
    present
        .iter()
        .filter(|o| o.problem.is_some())
        .map(|o| {
            let rel = o.key.strip_prefix(prefix).unwrap_or(&o.key);
            match std::fs::read_link(root.root.join(&o.key)) {
                Ok(to) => format!("{rel} (a link to {})", to.display()),
                Err(_) => format!("{rel} ({})", o.problem.as_deref().unwrap_or_default()),
            }
        })
        .collect()
}

/// Why an object copy has no source to be rebuilt from.
#[derive(Debug, thiserror::Error)]
enum NoSource {
    /// No record of the object, and the latest head is not held by most replicas.
    #[error(
        "the state database records nothing of this object, and {head} is held by {holders} of {replicas} replicas: not taken as right by consistency alone"
    )]
    Minority {
        /// The latest head and its replica.
        head: String,
        /// Replicas holding it.
        holders: usize,
        /// Replicas in all (one without the object votes against).
        replicas: usize,
    },
    /// webaip committed the object, and no replica holds it.
    #[error("webaip committed this object, and no replica holds it: nothing to rebuild it from")]
    Gone,
    /// webaip committed a later head on the target than the reference.
    #[error(
        "webaip committed v{recorded} here, and no clean replica holds it (the latest recorded head held is {reference}): never rebuilt at an older version"
    )]
    Behind {
        /// The head number webaip committed on the target.
        recorded: u32,
        /// The reference head and its replica.
        reference: String,
    },
    /// Two versions of one number, and nothing decides.
    #[error(
        "{a} and {b} are different versions of one number, and nothing records which webaip committed: never repaired automatically"
    )]
    Diverged {
        /// One head and its replica.
        a: String,
        /// The other.
        b: String,
    },
    /// The object is recorded, and no replica holds a recorded head.
    #[error("no replica holds a version webaip committed")]
    Unrecorded,
    /// No other replica holds the reference head clean.
    #[error("no other replica holds a clean copy of {0}")]
    NoCleanCopy(String),
}

/// What one repair of one object works on.
struct Job<'a> {
    roots: &'a [OcflRoot],
    /// The target replica.
    i: usize,
    object: &'a str,
    /// What the check found on the target.
    bad: &'a [&'a OcflFinding],
    check: &'a OcflCheckReport,
}

impl Job<'_> {
    /// The object's id as a replica's inventory gives it (its directory when none does).
    fn id(&self) -> &str {
        let seen = self.check.seen.iter().filter(|o| o.object == self.object);
        seen.filter_map(|o| o.id.as_deref()).next().unwrap_or(self.object)
    }
}

/// The object's locks on replicas `a` and `b`, in the configuration's order (as a put takes
/// them, so the two never wait on each other).
fn lock_in_order(
    roots: &[OcflRoot],
    a: usize,
    b: usize,
    id: &str,
) -> Result<Vec<std::fs::File>, StoreError> {
    let (first, second) = if a < b { (a, b) } else { (b, a) };
    Ok(vec![roots[first].lock(id)?, roots[second].lock(id)?])
}

/// The latest version a copy holds: its root inventory's head when that parses (its sidecar
/// aside), or the latest version directory whose inventory is intact (valid, its sidecar
/// agreeing).
fn held_head(
    target: &dyn Replica,
    object: &str,
    seen: Option<&ObjectOnReplica>,
) -> Result<u32, StoreError> {
    let parsed = seen.map(super::ops::head_number).unwrap_or_default();
    let prefix = format!("{object}/");
    let mut intact = 0;
    for o in target.list(object)? {
        let rel = o.key.strip_prefix(&prefix).unwrap_or_default();
        let Some(v) = rel.strip_suffix(&format!("/{INVENTORY}")) else { continue };
        let n = super::anchor::version_number(v);
        if n <= intact.max(parsed) {
            continue;
        }
        let loaded = load(target, &format!("{object}/{v}"))?;
        if loaded.is_some_and(|l| l.sidecar.is_ok() && l.parsed.is_ok()) {
            intact = n;
        }
    }
    Ok(parsed.max(intact))
}

/// The target's versions must be the source's: every version inventory the target holds
/// intact (valid, its sidecar agreeing) is byte for byte the source's of that version. A copy
/// that diverged is never overwritten.
fn descends(
    target: &dyn Replica,
    source: &dyn Replica,
    object: &str,
    head: &Head,
) -> Result<(), StoreError> {
    for n in 1..=head.versions.head {
        let dir = format!("{object}/{}", head.versions.name(n));
        let Ok(Some(here)) = load(target, &dir) else { continue };
        if here.sidecar.is_err() || here.parsed.is_err() {
            continue;
        }
        let there = load(source, &dir)?.map(|l| l.sha512);
        if there.as_deref() != Some(here.sha512.as_str()) {
            return Err(StoreError::Precommit {
                replica: target.name().into(),
                key: format!("{dir}/{INVENTORY}"),
                detail: format!(
                    "diverged: this copy's {} is not {}'s; never overwritten",
                    head.versions.name(n),
                    source.name()
                ),
            });
        }
    }
    Ok(())
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
