//! `store put`, `get`, `log`, `list` and `check` on OCFL replicas.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::anchor::{Anchor, Anchors, CopyHead, Provenance, Reference};
use super::bucket::Settled;
use super::check::{
    FindingKind, Head, ObjectOnReplica, OcflFinding, check_object, load, object_dirs, owner,
    read_head, root_findings,
};
use super::fs::{FsRoot, Stage};
use super::inventory::{
    INVENTORY, Inventory, LogicalFile, SIDECAR, User, VersionMeta, Versions, next_version,
    sidecar_text,
};
use super::kept::{self, Holder};
use super::layout::{OBJECT_DECLARATION, OBJECT_DEPTH, ROOT_DECLARATION, object_path, root_files};
use super::put::{Plan, Staging, Target};
use super::requires::Checked;
use super::root::OcflRoot;
use crate::formats::digest::{Sha512, hex};
use crate::store::put::verify_package;
use crate::store::replica::{FsReplica, ListedObject, Replica, Source};
use crate::store::state::OcflPlace;
use crate::store::{
    CopyOutcome, CopyStatus, LocalListing, PackageFile, PutReport, ReadPackage, Store, StoreError,
    StoreRefusal,
};
use crate::store::{MetsProblem, PackageProblem};
use crate::store::{PutOptions, PutVerification};

/// The result of `store check` on OCFL replicas.
#[derive(Debug, Clone, Serialize)]
pub struct OcflCheckReport {
    /// True when every content file's SHA-512 was recomputed.
    pub deep: bool,
    /// Objects seen on any replica, and those webaip committed that no replica holds.
    pub objects: u64,
    /// Each object on each replica.
    pub seen: Vec<ObjectOnReplica>,
    /// What is wrong.
    pub findings: Vec<OcflFinding>,
    /// Dependencies of stored packages that no checked replica holds whole.
    pub missing_dependencies: Vec<crate::store::MissingDependency>,
    /// True when nothing was found and every dependency is held.
    pub clean: bool,
}

/// One version of an object, as `store log` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct VersionEntry {
    /// `v1`, `v2`...
    pub version: String,
    /// When it was made (RFC 3339).
    pub created: String,
    /// Why.
    pub message: Option<String>,
    /// Who.
    pub user: Option<String>,
    /// Their address.
    pub address: Option<String>,
    /// Files in the version.
    pub files: u64,
    /// Files whose content it added.
    pub added: u64,
}

/// An object's history (`store log`).
#[derive(Debug, Clone, Serialize)]
pub struct ObjectLog {
    /// The object id (OBJID).
    pub id: String,
    /// The replica it was read from.
    pub replica: String,
    /// Its head.
    pub head: String,
    /// Whether webaip recorded that head (`no-record`: taken by consistency only).
    pub provenance: Provenance,
    /// The latest head webaip committed (the state database says so), when no replica holds
    /// it: the versions after `head` are missing (`null` otherwise).
    pub recorded_head: Option<String>,
    /// Its versions, oldest first.
    pub versions: Vec<VersionEntry>,
}

/// Files of a replica below the storage root, grouped by object directory.
pub(crate) struct Survey {
    pub objects: BTreeMap<String, Vec<ListedObject>>,
    /// Keys neither in an object nor the root's own files.
    pub stray: Vec<ListedObject>,
    /// Whether the root declares itself.
    pub declared: bool,
}

/// Lists a replica and sorts its keys into objects (each key's object found by its prefixes,
/// not by scanning every object).
pub(crate) fn survey(r: &dyn Replica) -> Result<Survey, StoreError> {
    let listing = r.list("")?;
    let dirs = object_dirs(&listing);
    let mut objects: BTreeMap<String, Vec<ListedObject>> =
        dirs.iter().map(|d| (d.clone(), Vec::new())).collect();
    let mut stray = Vec::new();
    let mut declared = false;
    let root_files: Vec<String> = root_files().into_iter().map(|(n, _)| n).collect();
    for o in listing {
        if o.key == ROOT_DECLARATION.0 {
            declared = true;
        }
        match owner(&dirs, &o.key) {
            Some(d) => objects.entry(d.clone()).or_default().push(o),
            None if super::check::of_the_root(&o, &root_files) => {}
            None => stray.push(o),
        }
    }
    let in_use = declared || !objects.is_empty();
    stray.retain(|o| super::check::in_a_root(o, in_use));
    Ok(Survey { objects, stray, declared })
}

/// Adds to `out` the object directories replica `r` holds. A bucket is listed one level at a
/// time, only down the layout's three-digit tuple folders (never the whole bucket at once:
/// memory stays bounded by one level, and a key elsewhere that the store's client cannot
/// name, such as `a//b`, is never listed); a folder is surveyed.
fn held_objects(r: &dyn Replica, out: &mut BTreeSet<String>) -> Result<(), StoreError> {
    if r.moves_whole_objects() {
        out.extend(survey(r)?.objects.into_keys());
        return Ok(());
    }
    let tuple = |dir: &str| {
        let name = dir.rsplit('/').next().unwrap_or(dir);
        name.len() == 3 && name.bytes().all(|c| c.is_ascii_hexdigit())
    };
    let mut level = vec![String::new()];
    for _ in 1..OBJECT_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            next.extend(r.list_level(dir)?.dirs.into_iter().filter(|d| tuple(d)));
        }
        level = next;
    }
    let marks = [format!("/{}", OBJECT_DECLARATION.0), format!("/{INVENTORY}")];
    for dir in level {
        for obj in r.list_level(&dir)?.dirs {
            let keys = r.list_level(&obj)?.keys;
            if keys.iter().any(|k| marks.iter().any(|m| k.ends_with(m.as_str()))) {
                out.insert(obj);
            }
        }
    }
    Ok(())
}

/// The SHA-512 of bytes, in hex.
pub(super) fn sha512_of(bytes: &[u8]) -> String {
    let mut h = Sha512::new();
    h.update(bytes);
    hex(&h.finalize())
}

impl Store {
    /// What the state database records of OCFL objects (every object, or only `id`).
    pub(crate) fn anchors(&self, id: Option<&str>) -> Result<Anchors, StoreError> {
        let mut anchors = Anchors::default();
        let state = self.state();
        state.each_ocfl_record(id, &mut |r| anchors.add(r))?;
        anchors.set_recorded_any(state.records_ocfl()?);
        let dir = id.map(object_path);
        state.each_ocfl_predating(dir.as_deref(), &mut |d| anchors.add_predating(d))?;
        Ok(anchors)
    }

    /// Before the database records its first OCFL object, the objects every replica holds
    /// are recorded as older than its records (see [`Anchors::foreign`]): a database lost and
    /// started again keeps judging them by majority, not as planted. A replica that cannot be
    /// listed stops the command (nothing recorded, so the next run looks again): its objects
    /// would otherwise be judged as planted from then on.
    pub(crate) fn note_predating(&self) -> Result<(), StoreError> {
        if self.state().records_ocfl()? {
            return Ok(());
        }
        let mut objects = std::collections::BTreeSet::new();
        for r in &self.replicas {
            held_objects(r.as_ref(), &mut objects)?;
        }
        let objects: Vec<String> = objects.into_iter().collect();
        self.state().record_ocfl_predating(&objects)
    }

    /// The OCFL roots, when every replica is one.
    pub(crate) fn ocfl_roots(&self, command: &'static str) -> Result<&[OcflRoot], StoreError> {
        self.ocfl.as_deref().ok_or_else(|| StoreRefusal::NeedsOcfl { command }.into())
    }

    /// `store put` to OCFL replicas: the package becomes version 1 of its object, or the
    /// next version when the object holds other content (the same content again is a no-op).
    /// The new version is staged on every replica in the audit's read of the package (see
    /// [`super::put`]); nothing is recorded or committed unless the audit passed.
    pub(crate) fn ocfl_put(
        &self,
        roots: &[OcflRoot],
        dir: &Path,
        opts: &PutOptions,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<PutReport, StoreError> {
        let mut report = self.ocfl_put_version(roots, dir, opts, progress)?;
        self.note_requires(&mut report)?;
        Ok(report)
    }

    /// The put itself, what the package requires not yet looked for.
    fn ocfl_put_version(
        &self,
        roots: &[OcflRoot],
        dir: &Path,
        opts: &PutOptions,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<PutReport, StoreError> {
        let ReadPackage { identifier: package, files, digest, requires, listing } =
            crate::store::read_package(dir)?;
        let identifier = self.object_for(&package, dir, &files)?;
        let obj = object_path(&identifier);
        // Every replica's object lock, in the configuration's order, for the whole put.
        let _locks = roots.iter().map(|r| r.lock(&identifier)).collect::<Result<Vec<_>, _>>()?;
        self.clear_for_put(roots, &identifier)?;
        let mut report = PutReport {
            package: package.clone(),
            dir: obj.clone(),
            accepted: true,
            files: files.len() as u64,
            bytes: files.iter().map(|f| f.size).sum(),
            copies: Vec::new(),
            failed_replicas: Vec::new(),
            requires: requires.into_iter().collect(),
            requires_missing: Vec::new(),
            version: None,
            object: Some(identifier.clone()),
            verified: PutVerification::Fixity,
        };
        let (id, files) = (identifier.as_str(), files.as_slice());
        let listing = &listing;
        let rerun =
            Rerun { roots, id, obj: &obj, package: &package, dir, files, listing, opts, progress };
        if self.complete_lagging(&rerun, &mut report)? {
            return Ok(report);
        }
        let prev = self.agreed_head(&identifier, &obj)?;
        if let Some(h) = prev.as_ref().filter(|h| !h.versions.fits(h.versions.head + 1)) {
            let (width, head) = (h.versions.padding, h.inv.head.clone());
            return Err(StoreRefusal::VersionsFull { identifier, width, head }.into());
        }
        let logical: Vec<LogicalFile> = files
            .iter()
            .map(|f| LogicalFile { path: f.rel.clone(), sha512: f.sha512.clone() })
            .collect();
        let meta = self.version_meta(&kept::message(&package, &identifier, &digest));
        report.version = prev.as_ref().map(|h| h.inv.head.clone());
        let prev_pair = prev.as_ref().map(|h| (&h.inv, h.versions));
        // The same package put again is no new version, whatever was put after it.
        let earlier = prev.as_ref().and_then(|h| earlier_version(h, &package, &logical));
        let next = match earlier {
            Some(n) => {
                report.version = prev.as_ref().map(|h| h.versions.name(n));
                None
            }
            None => next_version(prev_pair, &identifier, &logical, meta),
        };
        let Some((inv, versions)) = next else {
            report.verified = verify_package(dir, files, listing, opts, None)?;
            for (root, r) in roots.iter().zip(&self.replicas) {
                root.ensure_root(r.as_ref())?; // removes what killed runs left in the work directory
            }
            report.copies = self.copies_of(&package, files, &|_| CopyStatus::Present, None);
            self.record_place(&package, &identifier, report.version.as_deref())?;
            return Ok(report);
        };
        let new = NewVersion { obj: &obj, inv: &inv, versions, files };
        let added: Vec<_> = new.added().into_values().collect();
        let replicas: Vec<&dyn Replica> = self.replicas.iter().map(|r| r.as_ref()).collect();
        super::put::keys_fit(&replicas, &obj, &added)?;
        let plan = Plan { roots, replicas, obj: &obj, prev: prev.as_ref(), added };
        let staging = Staging::new(plan, progress);
        let sha = sha512_of(&inv.to_bytes());
        let checked = if staging.uploads_only() {
            self.record_inventory(&identifier, &inv.head, &sha)?;
            self.verify_while_uploading(&staging, dir, files, listing, opts)
        } else {
            let verified = verify_package(dir, files, listing, opts, Some(&staging))?;
            self.record_inventory(&identifier, &inv.head, &sha)?;
            self.pool.install(|| staging.complete(dir)).map(|()| verified)
        };
        report.verified = self.refused_after_upload(roots, &identifier, checked)?;
        let stages = staging.into_stages();
        for (root, r) in roots.iter().zip(&self.replicas) {
            root.ensure_root(r.as_ref())?;
        }
        for (r, stage) in self.replicas.iter().zip(stages) {
            let got = stage.and_then(|stage| commit_version(stage, prev.is_some(), &new));
            self.put_outcome(&mut report, r.name(), &new, got)?;
        }
        report.version = Some(inv.head.clone());
        self.record_place(&package, &identifier, report.version.as_deref())?;
        self.note_kept_recorded(
            &identifier,
            prev.as_ref().map(|h| h.inv.head.as_str()),
            &inv.head,
        )?;
        Ok(report)
    }

    /// Notes that every package kept in object `id` up to `head` is recorded (its place
    /// recorded just before), when it was so up to `prev` (`None`: a new object, or one whose
    /// every version was read again). Recorded after the place: a put killed between leaves the
    /// object to be searched by its inventory, as before.
    pub(super) fn note_kept_recorded(
        &self,
        id: &str,
        prev: Option<&str>,
        head: &str,
    ) -> Result<(), StoreError> {
        self.state().record_kept_recorded(id, &object_path(id), prev, head)
    }

    /// Makes object `id` ready for a put (its locks held): refused while its removal is
    /// unfinished, or while a bucket holds files of it without a root inventory that are not
    /// known to be a killed put's own; what a killed put of webaip's left is cleared.
    fn clear_for_put(&self, roots: &[OcflRoot], id: &str) -> Result<(), StoreError> {
        self.no_removal_begun(id)?;
        let settled = self.settle(roots, id)?;
        if let Some((replica, _)) = settled.into_iter().find(|(_, s)| matches!(s, Settled::Kept(_)))
        {
            return Err(StoreRefusal::HeadlessObject { identifier: id.into(), replica }.into());
        }
        Ok(())
    }

    /// The object a package goes into: its own (its OBJID), unless it is an AIP (METS TYPE)
    /// made from a submission the store holds, naming it by OBJID and by the SHA-512 of its
    /// METS, the store holds nothing under the AIP's own OBJID, and a version of the
    /// submission's object holding the submission itself has that METS and every file of the
    /// AIP but its METS and manifest, byte for byte (see [`Store::made_from`]). Then it becomes
    /// the next version of the submission's object, which keeps the containers the two share
    /// once: OCFL lets an inventory point only at content inside its own object, so a
    /// separate object would store every unchanged container again. `store get` of the
    /// submission still gives the submission (its own latest version), whatever came after.
    fn object_for(
        &self,
        package: &str,
        dir: &Path,
        files: &[PackageFile],
    ) -> Result<String, StoreError> {
        let refuse = |problem| StoreRefusal::Package { dir: dir.into(), problem };
        let mets = dir.join(crate::layout::METS);
        let file = crate::layout::open_in(dir, crate::layout::METS)
            .map_err(|e| refuse(PackageProblem::from(e)))?;
        let reader = crate::mets::reader::MetsReader::strict(std::io::BufReader::new(file));
        let header = crate::mets::listing::read_header(reader).map_err(|e| {
            refuse(PackageProblem::Mets { path: mets, problem: MetsProblem::from(e) })
        })?;
        let claim =
            header.submission_objid.filter(|s| s != package).zip(header.submission_mets_sha512);
        let Some((submission, mets_sha512)) = claim else { return Ok(package.into()) };
        if header.package_type.as_deref() != Some("AIP")
            || self.holds(package)?
            || !self.holds(&submission)?
            || self.made_from(&submission, &mets_sha512, files).is_none()
        {
            return Ok(package.into());
        }
        crate::store::checked_package_dir(&submission)
            .map_err(|e| refuse(PackageProblem::from(e)))?;
        Ok(submission)
    }

    /// Whether webaip recorded object `id`, or any replica holds it.
    pub(super) fn holds(&self, id: &str) -> Result<bool, StoreError> {
        if self.anchors(Some(id))?.of(&object_path(id)).is_some() {
            return Ok(true);
        }
        for r in &self.replicas {
            if read_head(r.as_ref(), id)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Records where a package kept in another package's object is (nothing for a package in
    /// its own object: its OBJID finds it).
    pub(super) fn record_place(
        &self,
        package: &str,
        object: &str,
        version: Option<&str>,
    ) -> Result<(), StoreError> {
        let (Some(version), false) = (version, package == object) else { return Ok(()) };
        let place = OcflPlace { object: object.into(), version: version.into() };
        self.state().record_ocfl_package(package, &place)
    }

    /// Records a replica's commit (the head, only once committed) and its copies.
    pub(super) fn put_outcome(
        &self,
        report: &mut PutReport,
        replica: &str,
        new: &NewVersion,
        got: Result<String, StoreError>,
    ) -> Result<(), StoreError> {
        let added = new.added();
        let status = |f: &PackageFile| {
            if added.contains_key(f.sha512.as_str()) {
                CopyStatus::Uploaded
            } else {
                CopyStatus::Present
            }
        };
        match got {
            Ok(sha) => {
                // Under the object's id: an AIP kept in its submission's object is not its own.
                self.state().record_ocfl_head(&new.inv.id, replica, &new.inv.head, &sha)?;
                let copies = self.copies_of(&report.package, new.files, &status, Some(replica));
                report.copies.extend(copies);
            }
            Err(e) => {
                let why = e.to_string();
                let mut copies = self.copies_of(&report.package, new.files, &status, Some(replica));
                for c in &mut copies {
                    c.status = CopyStatus::Failed;
                    c.message = Some(why.clone());
                }
                report.copies.extend(copies);
                report.accepted = false;
                report.failed_replicas.push(replica.into());
            }
        }
        Ok(())
    }

    /// A copy outcome per file on each replica (or `only` one).
    pub(super) fn copies_of(
        &self,
        identifier: &str,
        files: &[PackageFile],
        status: &dyn Fn(&PackageFile) -> CopyStatus,
        only: Option<&str>,
    ) -> Vec<CopyOutcome> {
        let names = self.replicas.iter().map(|r| r.name()).filter(|n| only.is_none_or(|o| o == *n));
        names
            .flat_map(|r| {
                files.iter().map(move |f| CopyOutcome {
                    package: identifier.into(),
                    replica: r.into(),
                    file: f.rel.clone(),
                    status: status(f),
                    message: None,
                })
            })
            .collect()
    }

    /// Who and why, for a new version: the configured user, else `$USER`.
    pub(super) fn version_meta(&self, message: &str) -> VersionMeta {
        let name = self
            .user
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .or_else(login_name)
            .unwrap_or_else(|| "webaip".into());
        let address = self.user.address.clone().or_else(login_address);
        VersionMeta {
            created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            message: message.into(),
            user: User { name, address },
        }
    }

    /// A package refused once uploads may have begun (`staged`: an upload found it damaged,
    /// or its audit failed while the uploads ran) is refused, and what the uploads had
    /// written to the roots is cleared as a killed put's leftovers are (never a version: no
    /// inventory names it); a failure to clear is left to the next put or `store repair`.
    pub(super) fn refused_after_upload<T>(
        &self,
        roots: &[OcflRoot],
        id: &str,
        staged: Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if staged.is_err() {
            let _ = self.settle(roots, id);
        }
        staged
    }

    /// Records a version's inventory (`sha`, of object `id` at `head`) before the first write
    /// to a bucket, and so before any commit: what a killed put left is then known to be
    /// webaip's (and cleared), and a head a killed put committed is still one webaip made.
    fn record_inventory(&self, id: &str, head: &str, sha: &str) -> Result<(), StoreError> {
        self.note_predating()?;
        self.state().record_ocfl_inventory(id, head, sha)
    }

    /// Where every replica is a bucket, the package's audit (its METS judged, the files the
    /// version does not add hashed) runs while the uploads, which hash what they send, write
    /// the version's files: nothing is visible before the root inventory, and a refusal by
    /// either clears what was written (see [`Store::refused_after_upload`]).
    fn verify_while_uploading(
        &self,
        staging: &Staging,
        dir: &Path,
        files: &[PackageFile],
        listing: &LocalListing,
        opts: &PutOptions,
    ) -> Result<PutVerification, StoreError> {
        std::thread::scope(|s| {
            let audit = s.spawn(|| verify_package(dir, files, listing, opts, Some(staging)));
            let staged = self.pool.install(|| staging.complete(dir));
            let verified = audit.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            staged.map(|()| verified)
        })
    }

    /// Clears what an interrupted put left on each bucket root in object `id` (see
    /// [`super::bucket`]): the files of a version never committed, or a root sidecar a kill
    /// left stale (the copy is then at the head its root inventory names, recorded as
    /// committed there). The object's locks are held. Returns what was done, per replica.
    pub(crate) fn settle(
        &self,
        roots: &[OcflRoot],
        id: &str,
    ) -> Result<Vec<(String, Settled)>, StoreError> {
        self.settle_object(roots, &object_path(id), Some(id), None)
    }

    /// [`Store::settle`] of the object at `obj` (of `id`, when known: only its records are
    /// read), on every bucket root (or only replica `only`); the caller holds the locks. A
    /// repair (`only`) also commits a whole first version the database records nothing of
    /// (see [`super::bucket`]); a put leaves it.
    pub(crate) fn settle_object(
        &self,
        roots: &[OcflRoot],
        obj: &str,
        id: Option<&str>,
        only: Option<usize>,
    ) -> Result<Vec<(String, Settled)>, StoreError> {
        let anchors = self.anchors(id)?;
        let anchor = anchors.of(obj);
        let mut out = Vec::new();
        for (i, (root, r)) in roots.iter().zip(&self.replicas).enumerate() {
            let OcflRoot::Bucket(b) = root else { continue };
            if only.is_some_and(|o| o != i) {
                continue;
            }
            // Completed only for an object older than the records (or with no records at
            // all): one planted since they began is never made readable on webaip's word.
            let complete = only.is_some() && !anchors.foreign(obj);
            let settled = b.settle(r.as_ref(), obj, anchor, complete)?;
            if let (Settled::Sidecar { head, sha512 }, Some(a)) = (&settled, anchor) {
                self.state().record_ocfl_head(&a.id, r.name(), head, sha512)?;
            }
            if settled != Settled::Nothing {
                out.push((r.name().to_string(), settled));
            }
        }
        Ok(out)
    }

    /// The head every replica holds (`None`: no replica holds the object). Replicas at
    /// different heads, a head webaip did not record (when it recorded the object), or an
    /// object damaged on one, refuse the put: a version built on them would make the replicas
    /// diverge, or carry a forgery or the damage on.
    fn agreed_head(&self, id: &str, obj: &str) -> Result<Option<Head>, StoreError> {
        let mut heads = Vec::new();
        for r in &self.replicas {
            heads.push((r.name(), read_head(r.as_ref(), id)?));
        }
        let first = heads[0].1.as_ref().map(|h| h.sha512.clone());
        if heads.iter().any(|(_, h)| h.as_ref().map(|h| &h.sha512) != first.as_ref()) {
            let said: Vec<String> = heads
                .iter()
                .map(|(n, h)| {
                    format!("{n}: {}", h.as_ref().map_or("none", |h| h.inv.head.as_str()))
                })
                .collect();
            return Err(StoreRefusal::ReplicasDiffer {
                identifier: id.into(),
                heads: said.join(", "),
            }
            .into());
        }
        let anchors = self.anchors(Some(id))?;
        // An object planted (or written by another store) since webaip's records began is not
        // made webaip's by a put of the same id: the user adopts it first, on purpose.
        if first.is_some() && anchors.foreign(obj) {
            return Err(StoreRefusal::UnknownObject { identifier: id.into() }.into());
        }
        let held = heads[0].1.as_ref().map_or(0, |h| h.versions.head);
        // The latest head webaip committed on these replicas (those of this configuration):
        // building on less would make another version of a number it committed there.
        let committed = anchors.of(obj).map_or(0, |a| {
            let ours = a.committed().filter(|(r, _)| heads.iter().any(|(n, _)| n == r));
            ours.map(|(_, n)| n).max().unwrap_or(0)
        });
        if committed > held {
            let held = if held == 0 { "none".into() } else { format!("v{held}") };
            let recorded = format!("v{committed}");
            return Err(StoreRefusal::RolledBack { identifier: id.into(), recorded, held }.into());
        }
        if let (Some(sha), Some(h)) = (&first, &heads[0].1)
            && anchors.of(obj).is_some_and(|a| !a.knows(sha))
        {
            let heads = format!("{} on every replica", h.inv.head);
            return Err(StoreRefusal::Unrecorded { identifier: id.into(), heads }.into());
        }
        if first.is_some() {
            for r in &self.replicas {
                let listing = r.list(obj)?;
                let committed = anchors.of(obj).and_then(|a| a.committed_on(r.name()));
                let checked = check_object(r.as_ref(), obj, &listing, false, committed);
                if let Some(f) = checked.findings.first() {
                    let finding = format!("{}: {}", f.key, f.detail);
                    let replica = r.name().into();
                    return Err(StoreRefusal::ObjectDamaged {
                        identifier: id.into(),
                        replica,
                        finding,
                    }
                    .into());
                }
            }
        }
        Ok(heads.into_iter().next().and_then(|(_, h)| h))
    }
}

/// The latest version of `head`'s object holding `package` (its own, or kept there), when it
/// has exactly `files`: a put of it again adds nothing, whatever other package was put after
/// it. Only the latest: a package put back to earlier content is a new version (`get` gives
/// the package as last put).
pub(super) fn earlier_version(head: &Head, package: &str, files: &[LogicalFile]) -> Option<u32> {
    let who = if package == head.inv.id { Holder::Own } else { Holder::Kept(package) };
    let latest = kept::versions_of(&head.inv, &head.versions, who).next()?;
    kept::same_files(&head.inv, &head.versions, latest, files).then_some(latest)
}

/// Commits the new version on a target holding its files: into a file system stage, its
/// inventories written, the staged object checked, then exchanged into the root; into a
/// bucket, the inventories in the order [`super::bucket`] gives. Returns the new inventory's
/// SHA-512.
pub(super) fn commit_version(
    target: Target,
    replacing: bool,
    new: &NewVersion,
) -> Result<String, StoreError> {
    let bytes = new.inv.to_bytes();
    let sha = sha512_of(&bytes);
    let version = new.versions.name(new.versions.head);
    let (root, stage) = match target {
        Target::Fs(root, stage) => (root, stage),
        Target::Bucket(b, r) => {
            let content: Vec<&str> = new.inv.content().map(|(p, _)| p).collect();
            return b.commit(r, new.obj, &version, &bytes, &content);
        }
    };
    for dir in [version.as_str(), ""] {
        let at =
            |name: &str| if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
        stage.write(&at(INVENTORY), &bytes)?;
        stage.write(&at(SIDECAR), sidecar_text(&sha).as_bytes())?;
    }
    precommit(root, &stage, new.obj, false)?;
    stage.commit(new.obj, replacing)?;
    Ok(sha)
}

/// A put of `package` into object `id` run again.
pub(super) struct Rerun<'a> {
    pub roots: &'a [OcflRoot],
    pub id: &'a str,
    pub obj: &'a str,
    pub package: &'a str,
    pub dir: &'a Path,
    pub files: &'a [PackageFile],
    /// The local files the package's METS lists.
    pub listing: &'a LocalListing,
    pub opts: &'a PutOptions,
    pub progress: &'a (dyn Fn(u64) + Sync),
}

/// What a put commits: the object, the package's files, the new inventory.
pub(super) struct NewVersion<'a> {
    pub(super) obj: &'a str,
    pub(super) inv: &'a Inventory,
    pub(super) versions: Versions,
    pub(super) files: &'a [PackageFile],
}

impl NewVersion<'_> {
    /// The content files this version adds (object-relative content path, package file),
    /// keyed by digest.
    pub(super) fn added(&self) -> BTreeMap<&str, (&str, &PackageFile)> {
        let prefix = format!("{}/", self.versions.name(self.versions.head));
        let mut out = BTreeMap::new();
        for (path, digest) in self.inv.content().filter(|(p, _)| p.starts_with(&prefix)) {
            let logical = path.splitn(3, '/').nth(2).unwrap_or_default();
            if let Some(f) = self
                .files
                .iter()
                .find(|f| f.rel == logical && f.sha512.eq_ignore_ascii_case(digest))
            {
                out.insert(digest, (path, f));
            }
        }
        out
    }
}

/// The staged tree, read as a replica, must check clean (files no inventory accounts for
/// aside, which a repair keeps) before it is committed: a put or repair never commits an
/// object it would itself report.
pub(crate) fn precommit(
    root: &FsRoot,
    stage: &Stage,
    obj: &str,
    deep: bool,
) -> Result<(), StoreError> {
    let staged = FsReplica::ocfl(&root.name, stage.dir());
    let listing = staged.list(obj)?;
    let checked = check_object(&staged, obj, &listing, deep, None);
    let kept = [FindingKind::Extra, FindingKind::UncommittedVersion];
    // A staged tree without its root inventory is no object, whatever else it holds.
    let root_inventory = format!("{obj}/{INVENTORY}");
    let fault = |f: &OcflFinding| !kept.contains(&f.kind) || f.key == root_inventory;
    match checked.findings.into_iter().find(fault) {
        None => Ok(()),
        Some(f) => {
            Err(StoreError::Precommit { replica: root.name.clone(), key: f.key, detail: f.detail })
        }
    }
}

impl Store {
    /// Fetches version `version` (default: the head) of object `identifier` (or only its
    /// `file`) into `to`, each file from the first replica whose copy verifies against the
    /// inventory's SHA-512, appearing under its name only once all of it verified (as
    /// [`Store::get`] does). OCFL replicas only.
    pub fn get_version(
        &self,
        identifier: &str,
        file: Option<&str>,
        version: Option<u32>,
        to: &Path,
    ) -> Result<Vec<CopyOutcome>, StoreError> {
        self.ocfl_roots("store get --version")?;
        self.ocfl_get(identifier, file, version, to)
    }

    pub(crate) fn ocfl_get(
        &self,
        identifier: &str,
        file: Option<&str>,
        version: Option<u32>,
        to: &Path,
    ) -> Result<Vec<CopyOutcome>, StoreError> {
        let (identifier, version) = self.resolve(identifier, version)?;
        let identifier = identifier.as_str();
        let chosen = self.reference_head(identifier)?;
        if let Some(refusal) = chosen.rolled_back().filter(|_| version.is_none()) {
            return Err(refusal.into());
        }
        let heads = &chosen.heads;
        let best = &chosen.head;
        // Without --version an object's own package: its latest version holding it (an AIP
        // kept after it is got by the AIP's OBJID).
        let own = || kept::versions_of(&best.inv, &best.versions, Holder::Own).next();
        let n = version.unwrap_or_else(|| own().unwrap_or(best.versions.head));
        if n == 0 || n > best.versions.head {
            return Err(
                StoreRefusal::NoSuchVersion { identifier: identifier.into(), version: n }.into()
            );
        }
        let mut files = best.inv.files_of(&best.versions, n);
        files.retain(|f| file.is_none_or(|w| w == f.path));
        if files.is_empty() {
            let (identifier, file) = (identifier.into(), file.map(str::to_string));
            return Err(StoreRefusal::NoSuchFile { identifier, file }.into());
        }
        let obj = object_path(identifier);
        let names = files
            .iter()
            .map(|f| crate::store::confined_in(identifier, &f.path, to))
            .collect::<Result<Vec<_>, _>>()?;
        let made_to = crate::store::destination_free(to, &names)?;
        let staging = crate::store::get::Staging::new(to)?;
        let mut out = Vec::new();
        for (f, name) in files.iter().zip(&names) {
            match self.fetch_logical(identifier, &obj, heads, n, f, name, staging.path()) {
                Ok(mut o) => {
                    o.message = chosen.caveat();
                    out.push(o)
                }
                Err(e) => {
                    drop(staging);
                    if made_to {
                        let _ = std::fs::remove_dir(to);
                    }
                    return Err(e);
                }
            }
        }
        staging.publish(&names, to)?;
        Ok(out)
    }

    /// One file of a version from the first replica whose copy verifies.
    #[allow(clippy::too_many_arguments)]
    fn fetch_logical(
        &self,
        identifier: &str,
        obj: &str,
        heads: &[Option<Head>],
        n: u32,
        f: &LogicalFile,
        name: &str,
        staging: &Path,
    ) -> Result<CopyOutcome, StoreError> {
        let mut rejected = Vec::new();
        for (r, head) in self.replicas.iter().zip(heads) {
            let Some(h) = head.as_ref().filter(|h| h.versions.head >= n) else { continue };
            let Some(path) = h.inv.content_path(&f.sha512) else { continue };
            let key = format!("{obj}/{path}");
            let local = Source { root: staging, name };
            match crate::store::fetch_verified(r.as_ref(), &key, local, &f.sha512) {
                Ok(()) => {
                    return Ok(CopyOutcome {
                        package: identifier.into(),
                        replica: r.name().into(),
                        file: f.path.clone(),
                        status: CopyStatus::Verified,
                        message: None,
                    });
                }
                Err(e) => rejected.push((r.name().to_string(), e)),
            }
        }
        Err(StoreRefusal::NoGoodCopyToFetch {
            file: f.path.clone(),
            rejected: crate::store::Rejections(rejected),
            to: staging.parent().unwrap_or(staging).into(),
        }
        .into())
    }

    /// The versions of object `identifier` (`store log`), from the replica holding its
    /// reference head (the latest that webaip recorded). OCFL replicas only.
    pub fn log(&self, identifier: &str) -> Result<ObjectLog, StoreError> {
        self.ocfl_roots("store log")?;
        let (identifier, _) = self.resolve(identifier, None)?;
        let chosen = self.reference_head(&identifier)?;
        let mut log = log_of(self.replicas[chosen.at].name(), &chosen.head, chosen.provenance);
        log.recorded_head = chosen.rolled_back().map(|_| format!("v{}", chosen.recorded));
        Ok(log)
    }

    /// The object and version to read for `identifier`: the object and version a put kept it
    /// in (an AIP in its submission's object), as the state database records it, else its own
    /// object. A version asked of such a package is refused: the versions are its object's.
    pub(super) fn resolve(
        &self,
        identifier: &str,
        version: Option<u32>,
    ) -> Result<(String, Option<u32>), StoreError> {
        // The record first: an object planted under the AIP's OBJID must not hide it.
        let recorded = self.state().ocfl_package(identifier)?;
        let place = match recorded {
            Some(place) => place,
            None if self.holds(identifier)? => return Ok((identifier.into(), version)),
            // Not recorded (the database lost, or a put killed before it recorded the place):
            // the version messages say where it is kept.
            None => match self.find_kept(identifier)? {
                Some((object, n)) => OcflPlace { object, version: format!("v{n}") },
                None => return Ok((identifier.into(), version)),
            },
        };
        let kept = place.version.strip_prefix('v').and_then(|n| n.parse::<u32>().ok());
        match (version, kept) {
            (None, Some(n)) => Ok((place.object, Some(n))),
            _ => Err(StoreRefusal::KeptInObject {
                identifier: identifier.into(),
                object: place.object,
                version: place.version,
            }
            .into()),
        }
    }

    /// Where package `identifier` is kept in another object when the state database does not
    /// say (it was lost, or a put was killed before recording it): the object whose
    /// reference head has a version whose message names it (the latest such version). Reads
    /// each object's root inventory on the first replica that can be listed, one at a time
    /// (no object of the store is held but the one read, and the replica's listing), except
    /// those whose every kept package the database records up to the latest head it built
    /// (see [`Store::note_kept_recorded`]): the records already said the package is not there.
    pub(crate) fn find_kept(&self, identifier: &str) -> Result<Option<(String, u32)>, StoreError> {
        let mut found = self.find_kept_each(&BTreeSet::from([identifier]))?;
        Ok(found.remove(identifier))
    }

    /// [`Store::find_kept`] for each of `wanted` in one reading of the store: a listing and
    /// each object's root inventory once, however many packages are looked for. Packages
    /// found nowhere are not in the map.
    pub(crate) fn find_kept_each(
        &self,
        wanted: &BTreeSet<&str>,
    ) -> Result<BTreeMap<String, (String, u32)>, StoreError> {
        let mut found = BTreeMap::new();
        if wanted.is_empty() {
            return Ok(found);
        }
        let listed = self.replicas.iter().find_map(|r| Some((r, survey(r.as_ref()).ok()?)));
        let Some((r, survey)) = listed else { return Ok(found) };
        let recorded = self.state().kept_recorded_objects()?;
        for dir in survey.objects.into_keys().filter(|d| !recorded.contains(d)) {
            if found.len() == wanted.len() {
                break;
            }
            let Some(Ok((inv, versions))) = load(r.as_ref(), &dir).ok().flatten().map(|l| l.parsed)
            else {
                continue;
            };
            let named: BTreeSet<&str> = (1..=versions.head)
                .filter_map(|n| match kept::holder(&inv, &versions, n) {
                    Holder::Kept(id) => Some(id),
                    Holder::Own => None,
                })
                .filter(|id| wanted.contains(id) && !found.contains_key(*id))
                .collect();
            if named.is_empty() {
                continue;
            }
            // Named on one copy: the reference head (recorded, or a majority's) decides.
            let Ok(chosen) = self.reference_head(&inv.id) else { continue };
            let h = &chosen.head;
            for id in named {
                if let Some(n) = kept::versions_of(&h.inv, &h.versions, Holder::Kept(id)).next() {
                    found.insert(id.to_string(), (inv.id.clone(), n));
                }
            }
        }
        Ok(found)
    }

    /// Each replica's head of object `identifier` and the reference among them (see
    /// [`super::anchor`]); heads that webaip did not record are dropped when it recorded the
    /// object. Refused when no head can be taken: none readable, none recorded, or two at the
    /// latest number that nothing decides between.
    pub(crate) fn reference_head(&self, identifier: &str) -> Result<Chosen, StoreError> {
        let mut heads = Vec::new();
        let mut last = None;
        for r in &self.replicas {
            match read_head(r.as_ref(), identifier) {
                Ok(h) => heads.push(h),
                Err(e) => {
                    heads.push(None);
                    last = Some(e);
                }
            }
        }
        let anchors = self.anchors(Some(identifier))?;
        let obj = object_path(identifier);
        if anchors.foreign(&obj) && heads.iter().any(Option::is_some) {
            return Err(StoreRefusal::UnknownObject { identifier: identifier.into() }.into());
        }
        let anchor = anchors.of(&obj);
        let copies: Vec<CopyHead> = self
            .replicas
            .iter()
            .zip(&heads)
            .filter_map(|(r, h)| {
                let h = h.as_ref()?;
                Some(CopyHead { replica: r.name(), head: h.versions.head, sha512: &h.sha512 })
            })
            .collect();
        let named = |c: &CopyHead| format!("v{} on {}", c.head, c.replica);
        let replicas = self.replicas.len();
        let (taken, provenance) = match super::anchor::reference(anchor, &copies, replicas) {
            Reference::Recorded(c) => (c.replica.to_string(), Provenance::Recorded),
            Reference::Unrecorded { copy, .. } => (copy.replica.to_string(), Provenance::NoRecord),
            Reference::NoMajority { copy, holders, replicas } => {
                let (identifier, head) = (identifier.into(), named(&copy));
                return Err(StoreRefusal::NoMajority { identifier, head, holders, replicas }.into());
            }
            Reference::Diverged(x, y) => {
                let (identifier, a, b) = (identifier.into(), named(&x), named(&y));
                return Err(StoreRefusal::Diverged { identifier, a, b }.into());
            }
            Reference::None if copies.is_empty() => {
                return Err(
                    last.unwrap_or_else(|| StoreRefusal::NoObject(identifier.into()).into())
                );
            }
            Reference::None => {
                let heads = copies.iter().map(named).collect::<Vec<_>>().join(", ");
                return Err(
                    StoreRefusal::Unrecorded { identifier: identifier.into(), heads }.into()
                );
            }
        };
        if let Some(a) = anchor {
            for h in &mut heads {
                if h.as_ref().is_some_and(|h| !a.knows(&h.sha512)) {
                    *h = None;
                }
            }
        }
        let at = self.replicas.iter().position(|r| r.name() == taken).unwrap_or_default();
        let Some(head) = heads[at].clone() else {
            return Err(StoreRefusal::NoObject(identifier.into()).into());
        };
        let recorded = anchor.map_or(0, Anchor::latest);
        Ok(Chosen { heads, at, head, provenance, recorded })
    }

    /// Every object on every replica (`store list`): id, head, inventory digest and bytes.
    /// OCFL replicas only.
    pub fn list_objects(&self) -> Result<Vec<ObjectOnReplica>, StoreError> {
        self.ocfl_roots("store list")?;
        let anchors = self.anchors(None)?;
        let mut out = Vec::new();
        for r in &self.replicas {
            for (dir, listing) in survey(r.as_ref())?.objects {
                out.push(summary(r.as_ref(), &dir, &listing, &anchors));
            }
        }
        out.sort_by(|a, b| (&a.object, &a.replica).cmp(&(&b.object, &b.replica)));
        Ok(out)
    }

    /// Checks every object of every replica (or `only` one) on OCFL terms (with `deep`,
    /// every content file's SHA-512), then compares the replicas. Writes nothing. OCFL
    /// replicas only.
    pub fn check_objects(
        &self,
        only: Option<&str>,
        deep: bool,
    ) -> Result<OcflCheckReport, StoreError> {
        self.ocfl_roots("store check")?;
        if let Some(name) = only {
            self.replica(name)?;
        }
        let anchors = self.anchors(None)?;
        let mut seen = Vec::new();
        let mut findings = Vec::new();
        for r in self.replicas.iter().filter(|r| only.is_none_or(|o| o == r.name())) {
            match survey(r.as_ref()) {
                Ok(s) => {
                    let mut out = Surveyed { seen: &mut seen, findings: &mut findings };
                    check_survey(r.as_ref(), s, deep, &anchors, &mut out);
                }
                Err(e) => findings.push(OcflFinding {
                    replica: r.name().into(),
                    object: String::new(),
                    key: String::new(),
                    kind: FindingKind::Unreadable,
                    detail: e.to_string(),
                }),
            }
        }
        let names: Vec<&str> = self
            .replicas
            .iter()
            .map(|r| r.name())
            .filter(|n| only.is_none_or(|o| o == *n))
            .collect();
        for s in &mut seen {
            s.provenance = s.inventory_sha512.as_deref().map(|h| anchors.provenance(&s.object, h));
        }
        let compared = compare_replicas(&names, self.replicas.len(), &seen, &anchors);
        findings.extend(compared.findings);
        super::remove::as_remains(&mut findings, &seen, &names, &self.removals()?, None);
        let objects =
            seen.iter().map(|s| &s.object).collect::<std::collections::BTreeSet<_>>().len();
        let checked = Checked { replicas: &names, seen: &seen, findings: &findings, whole: true };
        let missing_dependencies = self.ocfl_missing_dependencies(&checked)?;
        Ok(OcflCheckReport {
            deep,
            objects: objects as u64 + compared.gone,
            clean: findings.is_empty() && missing_dependencies.is_empty(),
            seen,
            findings,
            missing_dependencies,
        })
    }
}

/// Each replica's head of an object (`None`: absent, not valid, or not recorded) and the one
/// taken as its reference.
pub(crate) struct Chosen {
    pub heads: Vec<Option<Head>>,
    /// The replica whose head is the reference.
    pub at: usize,
    /// The reference head.
    pub head: Head,
    /// Whether webaip recorded it.
    pub provenance: Provenance,
    /// The latest head webaip committed on any replica (0: none recorded).
    pub recorded: u32,
}

impl Chosen {
    /// The refusal when webaip committed a later head than any replica holds (the replicas
    /// were rolled back, or lost the versions): the reference is then not the object's head.
    pub(crate) fn rolled_back(&self) -> Option<StoreRefusal> {
        (self.recorded > self.head.versions.head).then(|| StoreRefusal::RolledBack {
            identifier: self.head.inv.id.clone(),
            recorded: format!("v{}", self.recorded),
            held: self.head.inv.head.clone(),
        })
    }

    /// What a reader must know of the reference: nothing when webaip recorded it.
    pub(crate) fn caveat(&self) -> Option<String> {
        (self.provenance != Provenance::Recorded).then(|| UNANCHORED.into())
    }
}

/// Said of every result that rests on a head webaip has no record of.
pub(crate) const UNANCHORED: &str = "the state database records nothing of this object: its \
    latest head was taken by consistency only, not as one webaip committed";

fn log_of(replica: &str, h: &Head, provenance: Provenance) -> ObjectLog {
    let mut versions = Vec::new();
    for n in 1..=h.versions.head {
        let name = h.versions.name(n);
        let Some(v) = h.inv.versions.get(&name) else { continue };
        let prefix = format!("{name}/");
        let added = h.inv.content().filter(|(p, _)| p.starts_with(&prefix)).count();
        versions.push(VersionEntry {
            version: name,
            created: v.created.clone(),
            message: v.message.clone(),
            user: v.user.as_ref().map(|u| u.name.clone()),
            address: v.user.as_ref().and_then(|u| u.address.clone()),
            files: v.state.values().map(|p| p.len() as u64).sum(),
            added: added as u64,
        });
    }
    ObjectLog {
        id: h.inv.id.clone(),
        replica: replica.into(),
        head: h.inv.head.clone(),
        provenance,
        recorded_head: None,
        versions,
    }
}

/// What one replica holds of one object, from its root inventory (not checked further).
fn summary(
    r: &dyn Replica,
    dir: &str,
    listing: &[ListedObject],
    anchors: &Anchors,
) -> ObjectOnReplica {
    let loaded = load(r, dir).ok().flatten();
    let parsed = loaded.as_ref().and_then(|l| l.parsed.as_ref().ok());
    let sound = loaded.as_ref().filter(|l| l.sidecar.is_ok() && l.parsed.is_ok());
    let inventory_sha512 = sound.map(|l| l.sha512.clone());
    ObjectOnReplica {
        replica: r.name().into(),
        object: dir.into(),
        id: parsed.map(|(i, _)| i.id.clone()),
        head: parsed.map(|(i, _)| i.head.clone()),
        provenance: inventory_sha512.as_deref().map(|h| anchors.provenance(dir, h)),
        inventory_sha512,
        bytes: listing.iter().map(|o| o.size).sum(),
    }
}

/// Where [`check_survey`] puts what it finds.
struct Surveyed<'a> {
    seen: &'a mut Vec<ObjectOnReplica>,
    findings: &'a mut Vec<OcflFinding>,
}

fn check_survey(r: &dyn Replica, s: Survey, deep: bool, anchors: &Anchors, out: &mut Surveyed) {
    out.findings.extend(root_findings(r, s.declared || !s.objects.is_empty()));
    for o in &s.stray {
        let (kind, detail) = super::check::stray_finding(o);
        let key = o.key.clone();
        out.findings.push(OcflFinding {
            replica: r.name().into(),
            object: String::new(),
            key,
            kind,
            detail,
        });
    }
    for (dir, listing) in &s.objects {
        let committed = anchors.of(dir).and_then(|a| a.committed_on(r.name()));
        let c = check_object(r, dir, listing, deep, committed);
        out.seen.push(c.seen);
        out.findings.extend(c.findings);
    }
}

/// The number of a copy's head (`v3`: 3; 0 when unknown).
pub(crate) fn head_number(s: &ObjectOnReplica) -> u32 {
    s.head.as_deref().and_then(|h| h.strip_prefix('v')?.parse().ok()).unwrap_or(0)
}

/// What comparing the replicas found, and how many recorded objects no replica holds.
pub(crate) struct Compared {
    pub findings: Vec<OcflFinding>,
    /// Objects webaip committed that no compared replica holds.
    pub gone: u64,
}

/// Each object on every replica, at one head inventory: the reference is the latest head
/// webaip recorded (see [`super::anchor`]); a valid head it did not record is reported as
/// such, and with no record of the object the latest head is the reference by consistency
/// only, which every finding it leads to says. What the state database says webaip
/// committed is compared too: a copy older than that is rolled back, an object no replica
/// holds is missing from each replica it was committed on, and a foreign object (see
/// [`Anchors::foreign`]) is reported on its holders, not as missing elsewhere. `names` are the
/// replicas compared, `configured` how many the store has: a majority is counted over all of
/// them (a replica not checked is no vote for a copy).
pub(crate) fn compare_replicas(
    names: &[&str],
    configured: usize,
    seen: &[ObjectOnReplica],
    anchors: &Anchors,
) -> Compared {
    let mut by_object: BTreeMap<&str, Vec<&ObjectOnReplica>> = BTreeMap::new();
    for s in seen {
        by_object.entry(&s.object).or_default().push(s);
    }
    let mut out = Vec::new();
    for (object, on) in &by_object {
        let anchor = anchors.of(object);
        if anchors.foreign(object) {
            unknown_object(object, on, &mut out);
            continue;
        }
        for name in names.iter().filter(|n| !on.iter().any(|s| s.replica == **n)) {
            out.push(object_finding(name, object, object, FindingKind::NoObject, NO_OBJECT.into()));
        }
        if let Some(a) = anchor {
            rolled_back(object, on, a, &mut out);
        }
        let replicas = Replicas { configured, checked: names.len() };
        compare_heads(object, on, anchor, replicas, &mut out);
    }
    let mut gone = 0;
    for (object, a) in anchors.iter().filter(|(d, _)| !by_object.contains_key(d)) {
        let mut on = a.committed().filter(|(r, _)| names.contains(r)).peekable();
        gone += u64::from(on.peek().is_some());
        for (replica, n) in on {
            let detail = format!(
                "webaip committed v{n} of {} here (the state database says so), and no replica \
                 holds the object",
                a.id
            );
            out.push(object_finding(replica, object, object, FindingKind::NoObject, detail));
        }
    }
    Compared { findings: out, gone }
}

/// An object the state database does not know, though it records others: reported on each
/// replica holding it, and on no other.
fn unknown_object(object: &str, on: &[&ObjectOnReplica], out: &mut Vec<OcflFinding>) {
    for s in on {
        let id = s.id.as_deref().unwrap_or(object);
        let detail = format!(
            "the state database records nothing of object {id} (it records other objects): not \
             one webaip put, never copied to another replica (`store repair --adopt ID` takes it \
             as webaip's)"
        );
        out.push(object_finding(&s.replica, object, object, FindingKind::UnknownObject, detail));
    }
}

/// Copies whose head is older than the one webaip committed on their replica.
fn rolled_back(object: &str, on: &[&ObjectOnReplica], a: &Anchor, out: &mut Vec<OcflFinding>) {
    for s in on {
        let (held, Some(committed)) = (head_number(s), a.committed_on(&s.replica)) else {
            continue;
        };
        if held > 0 && held < committed {
            let detail = format!(
                "head v{held} here, and webaip committed v{committed} here (the state database \
                 says so): versions it committed are missing"
            );
            let key = format!("{object}/{INVENTORY}");
            out.push(object_finding(&s.replica, object, &key, FindingKind::RolledBack, detail));
        }
    }
}

const NO_OBJECT: &str = "the object is on other replicas";

fn object_finding(
    replica: &str,
    object: &str,
    key: &str,
    kind: FindingKind,
    detail: String,
) -> OcflFinding {
    OcflFinding { replica: replica.into(), object: object.into(), key: key.into(), kind, detail }
}

/// The copies of one object whose head inventory and sidecar agree (a copy that is not
/// valid is reported by its own check, not here).
pub(crate) fn copy_heads<'a>(on: &[&'a ObjectOnReplica]) -> Vec<CopyHead<'a>> {
    on.iter()
        .filter_map(|s| {
            Some(CopyHead {
                replica: &s.replica,
                head: head_number(s),
                sha512: s.inventory_sha512.as_deref()?,
            })
        })
        .collect()
}

/// An object the state database records nothing of, whose latest head (`head`) the replicas
/// not checked could give a majority: whether one holds it is not judged, and nothing is said
/// against the copies (a one-replica check after the database was lost is no disagreement).
fn not_judged(
    object: &str,
    key: &str,
    copies: &[CopyHead],
    head: &str,
    unchecked: usize,
    out: &mut Vec<OcflFinding>,
) {
    for c in copies {
        let detail = format!(
            "the state database records nothing of this object, and {unchecked} replica(s) not \
             checked could hold its latest head, {head}: whether a majority holds it is not \
             judged (check every replica)"
        );
        out.push(object_finding(c.replica, object, key, FindingKind::NotJudged, detail));
    }
}

/// How many replicas the store has, and how many of them were checked.
#[derive(Debug, Clone, Copy)]
struct Replicas {
    configured: usize,
    checked: usize,
}

fn compare_heads(
    object: &str,
    on: &[&ObjectOnReplica],
    anchor: Option<&Anchor>,
    replicas: Replicas,
    out: &mut Vec<OcflFinding>,
) {
    let key = format!("{object}/{INVENTORY}");
    let copies = copy_heads(on);
    let named = |c: &CopyHead| format!("v{} on {}", c.head, c.replica);
    let unrecorded = |c: &CopyHead| anchor.is_some_and(|a| !a.knows(c.sha512));
    for c in copies.iter().filter(|c| unrecorded(c)) {
        let detail = format!(
            "head v{} here is not a version webaip committed (its inventory's SHA-512 is not in \
             the state database): never served, never copied",
            c.head
        );
        out.push(object_finding(c.replica, object, &key, FindingKind::NotRecorded, detail));
    }
    let reference = super::anchor::reference(anchor, &copies, replicas.configured);
    let unchecked = replicas.configured.saturating_sub(replicas.checked);
    let not_checked = match unchecked {
        0 => String::new(),
        n => format!(" ({n} not checked: no vote for it)"),
    };
    let Some(r) = reference.copy() else {
        if let Reference::NoMajority { copy, holders, .. } = reference
            && 2 * (holders + unchecked) > replicas.configured
        {
            not_judged(object, &key, &copies, &named(&copy), unchecked, out);
            return;
        }
        if let Reference::NoMajority { copy, holders, replicas } = reference {
            for c in &copies {
                let detail = format!(
                    "the state database records nothing of this object, and its latest head, \
                     {}, is held by {holders} of {replicas} replicas{not_checked}: nothing says \
                     which copy is right; never repaired automatically",
                    named(&copy)
                );
                out.push(object_finding(c.replica, object, &key, FindingKind::NoMajority, detail));
            }
        }
        if let Reference::Diverged(x, y) = reference {
            for c in copies.iter().filter(|c| !unrecorded(c)) {
                let detail = format!(
                    "diverged: {} and {} hold different inventories, and nothing records which \
                     webaip committed; never repaired automatically",
                    named(&x),
                    named(&y)
                );
                out.push(object_finding(c.replica, object, &key, FindingKind::Diverged, detail));
            }
        }
        return;
    };
    let how = match reference {
        Reference::Unrecorded { .. } => {
            "; the state database records nothing of this object, so the latest head is taken \
             by consistency only"
        }
        _ => "",
    };
    for c in copies.iter().filter(|c| c.sha512 != r.sha512 && !unrecorded(c)) {
        let detail = format!("head v{} here, {}{how}", c.head, named(&r));
        out.push(object_finding(c.replica, object, &key, FindingKind::Differs, detail));
    }
}

/// The address of the login running webaip when the configuration gives none: `mailto:` the
/// login at this host, as git makes an identity it was not given (OCFL wants an address for
/// every version's user; a version without one draws a warning from validators). `None`
/// without a login name or a host name.
fn login_address() -> Option<String> {
    let login = login_name()?;
    let uname = rustix::system::uname();
    mailto(&login, uname.nodename().to_string_lossy().trim())
}

/// `mailto:login@host`, only when both are plain (letters, digits and `.`, `-`, `_`, `+` in
/// the login; letters, digits, `.` and `-` in the host name): anything else would not make a
/// URI, and a version is better without an address than with one that is not.
fn mailto(login: &str, host: &str) -> Option<String> {
    let plain = |s: &str, extra: &[u8]| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || extra.contains(&b))
    };
    (plain(login, b".-_+") && plain(host, b".-")).then(|| format!("mailto:{login}@{host}"))
}

/// The running user's login: `$USER`, else the password database's name of the user id.
fn login_name() -> Option<String> {
    let from_env = std::env::var("USER").ok().filter(|u| !u.is_empty());
    from_env.or_else(|| {
        let user = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten()?;
        Some(user.name).filter(|n| !n.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::mailto;

    #[test]
    fn a_default_version_address_is_a_uri_or_none() {
        assert_eq!(mailto("ada", "vm-1.example").as_deref(), Some("mailto:ada@vm-1.example"));
        assert_eq!(mailto("a.b+c_d", "vm").as_deref(), Some("mailto:a.b+c_d@vm"));
        assert_eq!(mailto("Jane Doe <x>", "vm"), None);
        assert_eq!(mailto("ada", ""), None);
        assert_eq!(mailto("ada", "host/x"), None);
        assert_eq!(mailto("", "vm"), None);
    }
}
