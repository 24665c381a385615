//! `store migrate`: the replicas of a store (folders and buckets) moved, in place, from the
//! webaip layout (a directory per package) to OCFL 1.1 storage roots, each package an object
//! at `v1` (the webaip layout is write-once: it never holds two versions of one OBJID).
//!
//! Per package, on every replica: each old file is hard-linked into a stage in the replica's
//! work directory (copied, synced, where the file system refuses the link), hashed once
//! (SHA-512, read from the staged file, the very inode committed) and compared with the state
//! database's record and with the package manifest; the inventory is written and the object
//! committed by rename, by the put's own commit ([`super::ops::commit_version`], which checks
//! the staged object first); the committed object is checked on OCFL terms; only then are
//! the package's old files deleted and the webaip layout's records of it dropped. A package
//! damaged on any replica is refused whole: nothing of it is moved and nothing deleted, and
//! `store repair` (which works on what is not migrated yet) can mend it first.
//!
//! In a bucket, where nothing is linked or renamed, each old key is copied by the server into
//! the object's `v1/content/` (through this machine where the server refuses), the copy read
//! back whole and hashed against its record, the copied manifest compared with the records;
//! the object is committed by the bucket put's commit ([`BucketRoot::commit`], the root
//! inventory last) and checked, and only then are the old keys deleted. The inventory is
//! recorded before the first copy, so what a killed run left ([`BucketRoot::settle`] judges
//! it, as after a killed put) is cleared by the next.
//!
//! Resumable: the state database keeps every package not yet moved, and the inventory of an
//! object is recorded before it is committed anywhere; a rerun takes a committed object it
//! recorded as done (checked deeply, since this run did not hash it), builds the missing
//! replicas' objects with the same inventory, and removes what a killed run left of the old
//! files. A half-made object only ever exists in a stage, which the next run removes. A
//! committed object that fails its deep check is moved aside into the work directory (never
//! deleted) and made again from the old files, only once they hash to their records (in a
//! bucket they are read back and hashed before the object is moved); one that could not be
//! read is not judged, and the package waits for the next run.
//!
//! Meanwhile the configuration keeps `layout = "webaip"`: `store get` reads a package from its
//! old files or, once moved, from its object; `check` and `repair` cover the packages not
//! moved yet; a put is refused. A migrate holds the migration lock exclusive, and a put,
//! remove or repair of the webaip layout holds it shared: neither starts while the other runs. Once no package is left, the configuration is switched to
//! `layout = "ocfl"` (rewritten whole, then renamed over the old file).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use super::bucket::{BucketRoot, Settled, await_unlisted, removal_order};
use super::check::{FindingKind, Head, check_object, read_head, root_file};
use super::fs::{FsRoot, Stage};
use super::inventory::{Inventory, LogicalFile, Versions, next_version};
use super::layout::{OBJECT_DECLARATION, ROOT_DECLARATION, RootFile, object_path, root_files};
use super::ops::{NewVersion, commit_version, sha512_of};
use super::put::Target;
use super::root::OcflRoot;
use crate::layout::{self as confined, MANIFEST};
use crate::store::config::StoreConfig;
use crate::store::replica::{FsReplica, HashingFile, Replica, Source};
use crate::store::schedule;
use crate::store::state::FileRecord;
use crate::store::state::lock::{self, Held, Hold, StateLock};
use crate::store::{
    ConfigProblem, CopyFailure, PackageFile, Store, StoreError, StoreRefusal, checked_package_dir,
};

/// The result of `store migrate`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MigrateReport {
    /// The replicas, in the configuration's order.
    pub replicas: Vec<String>,
    /// The packages moved by this run.
    pub migrated: Vec<MigratedPackage>,
    /// How many packages this run moved.
    pub objects_migrated: u64,
    /// Bytes that became object content by a hard link (every replica counted).
    pub bytes_linked: u64,
    /// Bytes copied through this machine, every replica counted: on a file system where a
    /// link was refused, on a bucket where its server-side copy was.
    pub bytes_copied: u64,
    /// Bytes a bucket copied from the old keys to the object's without their leaving the
    /// server (each then read back and hashed here), every bucket replica counted.
    pub bytes_server_copied: u64,
    /// The packages not moved, and why: their old files are all still there.
    pub refused: Vec<MigrateRefused>,
    /// Packages still in the webaip layout after this run.
    pub remaining: u64,
    /// Package directories of the webaip layout the state database does not record.
    pub unrecorded_dirs: Vec<String>,
    /// Entries left in a storage root (`replica: path`) in no object, no package directory
    /// and none of the root's declaration files (a README, a link in a partition): an OCFL
    /// storage root holds nothing else, so they stop the switch.
    pub leftovers: Vec<String>,
    /// True when the configuration now says `layout = "ocfl"` (switched by this run, or
    /// before).
    pub switched: bool,
}

/// One package moved.
#[derive(Debug, Clone, Serialize)]
pub struct MigratedPackage {
    /// The package identifier (METS OBJID), the object's id.
    pub package: String,
    /// The object's directory in every storage root.
    pub object: String,
    /// Files of the package.
    pub files: u64,
    /// Bytes linked on every replica.
    pub bytes_linked: u64,
    /// Bytes copied through this machine on every replica.
    pub bytes_copied: u64,
    /// Bytes copied inside the buckets (server-side), every bucket counted.
    pub bytes_server_copied: u64,
    /// Objects a killed run committed that failed their deep check, moved out of the root
    /// into the replica's work directory (the object then made again from the old files,
    /// which hashed to their records): what was wrong, and where each is kept.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<String>,
}

/// A package `store migrate` did not move.
#[derive(Debug, Clone, Serialize)]
pub struct MigrateRefused {
    /// The package identifier.
    pub package: String,
    /// Why (naming the replica and the file).
    pub reason: String,
}

/// Why one package is not moved (the others go on).
#[derive(Debug, thiserror::Error)]
pub(crate) enum MigrateFault {
    /// What the store could not do (a file missing or unreadable, a commit refused...).
    #[error(transparent)]
    Store(Box<StoreError>),
    /// A file's bytes are not the ones recorded.
    #[error(
        "replica {replica}: {file}: SHA-512 {found}, the state database records {recorded}: damaged; nothing of the package is moved or deleted (`store repair` mends it, then migrate again)"
    )]
    Damaged {
        /// The replica.
        replica: String,
        /// The package file.
        file: String,
        /// What its bytes hash to.
        found: String,
        /// What the state database records.
        recorded: String,
    },
    /// The package manifest disagrees with the state database.
    #[error(
        "replica {replica}: the package manifest and the state database disagree on {file}: nothing of the package is moved"
    )]
    ManifestDisagrees {
        /// The replica.
        replica: String,
        /// The file.
        file: String,
    },
    /// Something in the package's directory that no record accounts for.
    #[error(
        "replica {replica}: {key} is in the package's directory but in no record of the package ({why}): nothing of the package is moved or deleted; take it away, then migrate again"
    )]
    Unrecorded {
        /// The replica.
        replica: String,
        /// Its key.
        key: String,
        /// What it is.
        why: String,
    },
    /// A bucket cannot hold a file of the package under the key its object gives it (longer
    /// than the store's keys, a character OCFL keys in a bucket cannot hold): looked at before
    /// anything of the package is written, so it is refused, not failed half-way each run.
    #[error(
        "replica {replica}: {file} cannot move into the OCFL object: {problem} (key {key}); nothing of the package is moved or deleted, and it stays in the webaip layout"
    )]
    KeyUnfit {
        /// The replica.
        replica: String,
        /// The package file.
        file: String,
        /// The key it would have.
        key: String,
        /// Why the key does not fit.
        problem: crate::store::KeyProblem,
    },
    /// A recorded name that is no name inside a package.
    #[error("the state database records file {0:?}, which is no name inside a package")]
    UnsafeName(String),
    /// An object webaip did not build for this package is where its object goes.
    #[error(
        "replica {replica}: object {object} is already there, and it is not the one migrate built for this package: nothing is moved"
    )]
    ObjectInTheWay {
        /// The replica.
        replica: String,
        /// The object's directory.
        object: String,
    },
    /// A server-side copy came back with other bytes than the old key's, which are the
    /// recorded ones: the store's copy went wrong, not the package.
    #[error(
        "replica {replica}: {key}, the bucket's server-side copy of {file}, has SHA-512 {found}, though the old key holds the recorded bytes ({recorded}): the copy went wrong, not the package; nothing of it is moved or deleted (migrate again)"
    )]
    CopyDiffers {
        /// The replica.
        replica: String,
        /// The package file.
        file: String,
        /// The copy's key.
        key: String,
        /// What the copy hashes to.
        found: String,
        /// What the state database records (and the old key holds).
        recorded: String,
    },
    /// A file to copy through this machine is larger than the work directory's free space.
    #[error(
        "replica {replica}: {file} ({size} bytes) must be copied through this machine (the bucket refused a server-side copy), but {work} has {free} bytes free: nothing of the package is moved; free space there, then migrate again"
    )]
    NoRoom {
        /// The replica.
        replica: String,
        /// The package file.
        file: String,
        /// Its size.
        size: u64,
        /// The work directory.
        work: String,
        /// Its free bytes.
        free: u64,
    },
    /// Not copied: another file of the package failed first (that failure is the reason).
    #[error("not copied: another file of the package failed first")]
    Stopped,
    /// A failure after a damaged object was moved aside: where it is kept.
    #[error("{fault}; before that: {kept}")]
    AfterSetAside {
        /// The failure.
        fault: Box<MigrateFault>,
        /// What was moved aside, and where it is kept.
        kept: String,
    },
    /// The committed object could not be read whole: not judged, nothing moved aside.
    #[error(
        "replica {replica}: the object committed for it could not be read ({key}: {detail}): nothing is moved aside or deleted; migrate again once the replica reads"
    )]
    Unreadable {
        /// The replica.
        replica: String,
        /// What did not read.
        key: String,
        /// Why.
        detail: String,
    },
    /// The committed object does not check clean.
    #[error(
        "replica {replica}: the object committed for it does not check clean ({key}: {detail}): the old files are kept"
    )]
    NotClean {
        /// The replica.
        replica: String,
        /// What is wrong, where.
        key: String,
        /// What is wrong.
        detail: String,
    },
}

impl From<StoreError> for MigrateFault {
    fn from(e: StoreError) -> Self {
        MigrateFault::Store(Box::new(e))
    }
}

impl From<crate::store::IdentifierProblem> for MigrateFault {
    fn from(e: crate::store::IdentifierProblem) -> Self {
        StoreError::from(e).into()
    }
}

/// A file placed in a stage: its size, its SHA-512, whether it was linked (not copied).
struct Placed {
    size: u64,
    sha512: String,
    linked: bool,
}

/// What one package's move is about: its records, directory and object.
struct Moving<'a> {
    id: &'a str,
    files: &'a [FileRecord],
    pdir: String,
    obj: String,
}

/// Bytes linked and copied, and damaged objects moved aside.
#[derive(Default)]
struct Tally {
    linked: u64,
    copied: u64,
    server_copied: u64,
    set_aside: Vec<String>,
}

/// One replica's object, ready to commit once every replica's is.
enum Ready<'a> {
    /// Committed by a killed run, and checked deeply: kept as it is.
    Kept,
    /// Staged on a file system, or copied into a bucket: to commit.
    Commit(Target<'a>),
}

fn replica_err(replica: &str, key: &str, e: impl Into<CopyFailure>) -> StoreError {
    StoreError::Replica { replica: replica.into(), key: key.into(), source: Box::new(e.into()) }
}

impl Store {
    /// Moves every package of this store's replicas (folders and buckets) from the webaip
    /// layout to OCFL storage roots, in place (see the module's description), then switches
    /// the configuration at `config_path` to `layout = "ocfl"` once none is left. `progress`
    /// hears of the bytes placed.
    pub fn migrate_to_ocfl(
        &self,
        config: &StoreConfig,
        config_path: &Path,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<MigrateReport, StoreError> {
        let replicas = self.replicas.iter().map(|r| r.name().to_string()).collect();
        let mut report = MigrateReport { replicas, ..Default::default() };
        if self.is_ocfl() {
            report.switched = true;
            return Ok(report);
        }
        let roots = migration_roots(config, config_path)?;
        let _lock = self.migrate_lock()?;
        crate::hooks::pause_at("migrate-locked");
        self.state().begin_migration()?;
        for (root, r) in roots.iter().zip(&self.replicas) {
            declare_in_place(root, r.as_ref())?;
        }
        let ids = self.state().package_identifiers()?;
        for id in ids {
            match self.migrate_package(&roots, &id, progress) {
                Ok(m) => {
                    report.objects_migrated += 1;
                    report.bytes_linked += m.bytes_linked;
                    report.bytes_copied += m.bytes_copied;
                    report.bytes_server_copied += m.bytes_server_copied;
                    report.migrated.push(m);
                }
                Err(fault) => {
                    report.refused.push(MigrateRefused { package: id, reason: fault.to_string() })
                }
            }
        }
        self.finish_migration(config_path, &roots, &mut report)?;
        Ok(report)
    }

    /// Counts what is left (packages, folders the state database does not record, anything
    /// else in a root); when nothing is, switches the configuration and records the end.
    fn finish_migration(
        &self,
        config_path: &Path,
        roots: &[OcflRoot],
        report: &mut MigrateReport,
    ) -> Result<(), StoreError> {
        let ids = self.state().package_identifiers()?;
        report.remaining = ids.len() as u64;
        // A recorded package's folder is left because it is not moved yet, not unrecorded.
        let recorded: BTreeSet<String> =
            ids.iter().filter_map(|id| checked_package_dir(id).ok()).collect();
        for (r, root) in self.replicas.iter().zip(roots) {
            let dirs: BTreeSet<String> = r.packages()?.into_iter().collect();
            let named = |d: &String| format!("{}: {d}", r.name());
            report.unrecorded_dirs.extend(dirs.difference(&recorded).map(named));
            let left = match root {
                OcflRoot::Fs(f) => {
                    remove_empty_partitions(f);
                    leftovers(f, &dirs)?
                }
                OcflRoot::Bucket(_) => bucket_leftovers(r.as_ref())?,
            };
            report.leftovers.extend(left.iter().map(named));
        }
        let left = report.unrecorded_dirs.len() + report.leftovers.len();
        if report.remaining > 0 || left > 0 {
            return Ok(());
        }
        switch_config(config_path)?;
        self.state().end_migration()?;
        report.switched = true;
        Ok(())
    }

    /// The store's migration lock, exclusive, taken without waiting: a second migrate, or a
    /// put, remove or repair of the webaip layout (each holds it shared for its whole run),
    /// refuses this one; once it is held, they refuse to start.
    fn migrate_lock(&self) -> Result<Held, StoreError> {
        lock::take(&self.state_path, StateLock::Migrate, Hold::Exclusive)
    }

    /// Moves one package on every replica, or refuses it with everything of it left where it
    /// was (but for a damaged object a killed run committed, moved aside: the refusal names
    /// where).
    fn migrate_package(
        &self,
        roots: &[OcflRoot],
        id: &str,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<MigratedPackage, MigrateFault> {
        let files = self.recorded_files(id)?;
        let m = Moving { id, files: &files, pdir: checked_package_dir(id)?, obj: object_path(id) };
        // Every replica's object lock, as a put takes them, for the whole move.
        let _locks = roots.iter().map(|r| r.lock(id)).collect::<Result<Vec<_>, _>>()?;
        let mut tally = Tally::default();
        if let Err(fault) = self.move_package(roots, &m, &mut tally, progress) {
            // A damaged object moved aside before the failure stays where it was put: the
            // refusal says where.
            if tally.set_aside.is_empty() {
                return Err(fault);
            }
            let kept = tally.set_aside.join("; ");
            return Err(MigrateFault::AfterSetAside { fault: Box::new(fault), kept });
        }
        let made_again = |s: String| format!("{s}, and made again from the old files");
        Ok(MigratedPackage {
            package: id.into(),
            object: m.obj,
            files: files.len() as u64,
            bytes_linked: tally.linked,
            bytes_copied: tally.copied,
            bytes_server_copied: tally.server_copied,
            set_aside: tally.set_aside.into_iter().map(made_again).collect(),
        })
    }

    /// [`Store::migrate_package`] under the package's locks: its object made ready on every
    /// replica, committed and checked, then its old files deleted and its records dropped.
    fn move_package(
        &self,
        roots: &[OcflRoot],
        m: &Moving,
        tally: &mut Tally,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(), MigrateFault> {
        self.settle_buckets(roots, m)?;
        let held = self.held_objects(m)?;
        let (inv, versions) = match held.iter().flatten().next() {
            Some(h) => (h.inv.clone(), h.versions),
            None => self.first_inventory(m),
        };
        keys_fit(&self.replicas, roots, m, &inv)?;
        let sha = sha512_of(&inv.to_bytes());
        // Recorded before anything of the object is written anywhere (a bucket's copies go
        // in place): what a killed run leaves is then known as this migration's own.
        self.note_predating()?;
        self.state().record_ocfl_inventory(m.id, &inv.head, &sha)?;
        let ready = match self.ready_all(roots, m, &held, &inv, tally, progress) {
            Ok(ready) => ready,
            Err(fault) => {
                // What was copied into a bucket is no version: cleared (a rerun would too).
                let _ = self.settle_buckets(roots, m);
                return Err(fault);
            }
        };
        let records: Vec<PackageFile> = m.files.iter().map(PackageFile::from).collect();
        let new = NewVersion { obj: &m.obj, inv: &inv, versions, files: &records };
        self.commit_all(&new, ready, &sha)?;
        // Every object hashed by this run, or just now deep-checked under its lock.
        for (r, root) in self.replicas.iter().zip(roots) {
            checked_clean(root, r.as_ref(), &m.obj, false)?;
        }
        for (r, root) in self.replicas.iter().zip(roots) {
            remove_old(r.as_ref(), root, m, &self.pool)?;
        }
        self.state().forget_package(m.id)?;
        Ok(())
    }

    /// The package's files as the state database records them, each name one that stays
    /// inside the package.
    fn recorded_files(&self, id: &str) -> Result<Vec<FileRecord>, MigrateFault> {
        let files = self
            .state()
            .package_files(id)?
            .ok_or_else(|| StoreError::from(StoreRefusal::NotInState(id.into())))?;
        for f in &files {
            if confined::confined_name(&f.path).ok().as_deref() != Some(f.path.as_str())
                || f.path.starts_with('.')
            {
                return Err(MigrateFault::UnsafeName(f.path.clone()));
            }
        }
        Ok(files)
    }

    /// Clears what a killed (or refused) run left of the object in each bucket and did not
    /// commit there, as a put's leftovers are cleared (only what the state database shows to
    /// be this migration's own); files of the object nothing shows to be webaip's refuse the
    /// package.
    fn settle_buckets(&self, roots: &[OcflRoot], m: &Moving) -> Result<(), MigrateFault> {
        let anchors = self.anchors(Some(m.id))?;
        let anchor = anchors.of(&m.obj);
        for (r, root) in self.replicas.iter().zip(roots) {
            let OcflRoot::Bucket(b) = root else { continue };
            if let Settled::Kept(_) = b.settle(r.as_ref(), &m.obj, anchor, false)? {
                let (replica, object) = (r.name().into(), m.obj.clone());
                return Err(MigrateFault::ObjectInTheWay { replica, object });
            }
        }
        Ok(())
    }

    /// Each replica's object made ready to commit: an object a killed run committed is
    /// checked deeply (no run of this one hashed it) and kept; one that fails is made again
    /// from the old files once they hash to their records, the damaged one moved aside
    /// (never deleted). Elsewhere a stage (a folder) or the copies in place (a bucket).
    fn ready_all<'a>(
        &'a self,
        roots: &'a [OcflRoot],
        m: &Moving,
        held: &[Option<Head>],
        inv: &Inventory,
        tally: &mut Tally,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Ready<'a>>, MigrateFault> {
        let mut out = Vec::new();
        for (i, root) in roots.iter().enumerate() {
            let r = self.replicas[i].as_ref();
            let damaged = match held[i] {
                Some(_) => match checked_clean(root, r, &m.obj, true) {
                    Ok(()) => {
                        out.push(Ready::Kept);
                        continue;
                    }
                    Err(fault @ MigrateFault::Unreadable { .. }) => return Err(fault),
                    Err(fault) => Some(fault),
                },
                None => None,
            };
            self.nothing_unrecorded(i, m)?;
            out.push(Ready::Commit(match root {
                OcflRoot::Fs(f) => {
                    let stage = stage_package(f, m, inv, tally, progress)?;
                    if let Some(fault) = damaged {
                        // The old files hashed to their records just now (staged, above).
                        tally.set_aside.push(move_aside(f, &m.obj, &fault)?);
                    }
                    Target::Fs(f, stage)
                }
                OcflRoot::Bucket(b) => {
                    if let Some(fault) = damaged {
                        // The copies go where the object is: it is moved out first, and only
                        // once the old keys hash to their records (else the bucket would be
                        // left with neither).
                        old_keys_whole(r, m)?;
                        tally.set_aside.push(self.set_aside_in_bucket(b, r, m, &fault)?);
                    }
                    self.copy_package(b, r, m, inv, tally, progress)?;
                    Target::Bucket(b, r)
                }
            }));
        }
        if crate::hooks::fail_at("migrate-after-copies") && roots.iter().any(is_bucket) {
            std::process::abort(); // a test of what a kill leaves
        }
        Ok(out)
    }

    /// Copies the package's old keys into object `m.obj` of bucket `b` (its declaration
    /// first), each by the server where it can, then read back whole and hashed here against
    /// its record, the largest first, several at once; then the copied manifest must agree.
    fn copy_package(
        &self,
        b: &BucketRoot,
        r: &dyn Replica,
        m: &Moving,
        inv: &Inventory,
        tally: &mut Tally,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(), MigrateFault> {
        b.begin(r, &m.obj, None)?;
        let mut jobs = content_files(m, inv)?;
        jobs.sort_by_key(|(_, f)| std::cmp::Reverse(f.size));
        // Copies through this machine go one at a time: each takes its file's size on the
        // work directory's disk.
        let through_here = std::sync::Mutex::new(());
        let copy = |(content, f): &(&str, &FileRecord), stop: &AtomicBool| {
            let to = Copying { b, r, m, f, content, stop, through_here: &through_here };
            let copied = copy_verified(&to);
            if copied.is_ok() {
                progress(f.size);
            }
            copied
        };
        let done = self.pool.install(|| schedule::in_order_until_failure(&jobs, copy))?;
        for ((_, f), server) in jobs.iter().zip(done) {
            *(if server { &mut tally.server_copied } else { &mut tally.copied }) += f.size;
        }
        manifest_in_bucket_agrees(b, r, m, inv)
    }

    /// Each replica's object of the package: `None` where there is none yet, the head where
    /// a migrate committed it (its inventory is recorded); anything else refuses the package.
    fn held_objects(&self, m: &Moving) -> Result<Vec<Option<Head>>, MigrateFault> {
        let anchors = self.anchors(Some(m.id))?;
        let anchor = anchors.of(&m.obj);
        let mut out = Vec::new();
        let mut first: Option<String> = None;
        for r in &self.replicas {
            let head = read_head(r.as_ref(), m.id)?;
            if let Some(h) = &head {
                let ours = anchor.is_some_and(|a| a.knows(&h.sha512)) && h.versions.head == 1;
                let same = first.as_ref().is_none_or(|f| *f == h.sha512);
                // Rebuilt from its parse, the inventory must give the bytes committed: the
                // other replicas get the same.
                let again = sha512_of(&h.inv.to_bytes()) == h.sha512;
                if !(ours && same && again) {
                    let (replica, object) = (r.name().into(), m.obj.clone());
                    return Err(MigrateFault::ObjectInTheWay { replica, object });
                }
                first = Some(h.sha512.clone());
            }
            out.push(head);
        }
        Ok(out)
    }

    /// The package's version 1, as the state database records its files.
    fn first_inventory(&self, m: &Moving) -> (Inventory, Versions) {
        let logical: Vec<LogicalFile> = m
            .files
            .iter()
            .map(|f| LogicalFile { path: f.path.clone(), sha512: f.sha512.clone() })
            .collect();
        let digest = m.files.iter().find(|f| f.path == MANIFEST).map(|f| f.sha512.as_str());
        let put = self.state().accepted_at(m.id).ok().flatten();
        let message = format!(
            "store migrate: moved from the webaip layout (manifest SHA-512 {}; put {})",
            digest.unwrap_or("unknown"),
            put.as_deref().unwrap_or("at an unrecorded time")
        );
        let meta = self.version_meta(&message);
        // A first version always differs from no version at all.
        next_version(None, m.id, &logical, meta).unwrap_or_else(|| unreachable!())
    }

    /// Refuses the package when its directory on replica `i` holds anything no record of it
    /// accounts for (a link, a FIFO, a file the package does not have): it would be lost.
    fn nothing_unrecorded(&self, i: usize, m: &Moving) -> Result<(), MigrateFault> {
        let r = self.replicas[i].as_ref();
        r.clean_temporaries(&m.pdir)?;
        for o in r.list(&m.pdir)? {
            let rel = o.key.strip_prefix(&format!("{}/", m.pdir)).unwrap_or(&o.key);
            let why = match (&o.problem, m.files.iter().any(|f| f.path == rel)) {
                (Some(p), _) => p.clone(),
                (None, false) => "a file the package does not have".into(),
                (None, true) => continue,
            };
            return Err(MigrateFault::Unrecorded { replica: r.name().into(), key: o.key, why });
        }
        Ok(())
    }

    /// Commits each replica's object and records each commit (the inventory is recorded
    /// already).
    fn commit_all(
        &self,
        new: &NewVersion,
        ready: Vec<Ready>,
        sha: &str,
    ) -> Result<(), MigrateFault> {
        let id = new.inv.id.as_str();
        for (r, ready) in self.replicas.iter().zip(ready) {
            match ready {
                Ready::Commit(target) => {
                    let committed = commit_version(target, false, new)?;
                    self.state().record_ocfl_head(id, r.name(), &new.inv.head, &committed)?;
                    if crate::hooks::fail_at("migrate-after-commit") {
                        std::process::abort(); // a test of what a kill leaves
                    }
                }
                Ready::Kept => self.state().record_ocfl_head(id, r.name(), &new.inv.head, sha)?,
            }
        }
        Ok(())
    }
}

impl Store {
    /// Moves object `m.obj` of bucket `b` (committed by a killed run, failing its deep check
    /// as `fault` says) out of the bucket into a new quarantine folder of the work directory,
    /// so the object can be copied again; says what was wrong and where it is kept. Every
    /// file is downloaded first, then the record of the commit on this replica dropped, then
    /// the files deleted (the root inventory first, the declaration last): a run killed among
    /// the deletes leaves a first version without root inventory, whose inventory the state
    /// database records and no commit, which the next run clears as its own.
    fn set_aside_in_bucket(
        &self,
        b: &BucketRoot,
        r: &dyn Replica,
        m: &Moving,
        fault: &MigrateFault,
    ) -> Result<String, StoreError> {
        let keys = removal_order(&m.obj, r.list(&m.obj)?.into_iter().map(|o| o.key).collect());
        let prefix = format!("{}/", m.obj);
        let rels: Vec<&str> = keys.iter().map(|k| k.strip_prefix(&prefix).unwrap_or(k)).collect();
        let dir = b.fetch_to_quarantine(r, &m.obj, &rels)?;
        self.state().forget_ocfl_head(m.id, r.name())?;
        b.delete_quarantined(r, &m.obj, &keys)?;
        let what = match fault {
            MigrateFault::NotClean { key, detail, .. } => format!("{key}: {detail}"),
            other => other.to_string(),
        };
        Ok(format!(
            "replica {}: the object a killed run committed failed its deep check ({what}): moved to {} (the old keys hash to their records)",
            b.name,
            dir.join(&m.obj).display()
        ))
    }
}

fn is_bucket(root: &OcflRoot) -> bool {
    matches!(root, OcflRoot::Bucket(_))
}

/// Refuses the package where a bucket cannot hold one of its content files under the key the
/// object gives it (`<object>/v1/content/<name>` is longer than the old `<partition>/<package
/// directory>/<name>`, and keeps the name's characters as they are): else every run would
/// copy the files before it and fail at that one with the store's own error.
fn keys_fit(
    replicas: &[Box<dyn Replica>],
    roots: &[OcflRoot],
    m: &Moving,
    inv: &Inventory,
) -> Result<(), MigrateFault> {
    let files = content_files(m, inv)?;
    for (r, _) in replicas.iter().zip(roots).filter(|(_, root)| is_bucket(root)) {
        for (content, f) in &files {
            let key = format!("{}/{content}", m.obj);
            if let Some(problem) = r.key_problem(&key) {
                let (replica, file) = (r.name().to_string(), f.path.clone());
                return Err(MigrateFault::KeyUnfit { replica, file, key, problem });
            }
        }
    }
    Ok(())
}

/// Each replica's storage root (a folder's with its work directory, a bucket's with the
/// local work directory of its locks).
fn migration_roots(config: &StoreConfig, path: &Path) -> Result<Vec<OcflRoot>, StoreError> {
    let mut out = Vec::new();
    for r in &config.replicas {
        let root = crate::store::ocfl_root(config, r);
        if let OcflRoot::Fs(f) = &root {
            let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            if canonical(&f.work).starts_with(canonical(&f.root)) {
                let problem = ConfigProblem::WorkInsideRoot(r.name.clone());
                return Err(StoreError::ConfigRefused { path: path.into(), problem });
            }
        }
        out.push(root);
    }
    Ok(out)
}

/// Declares the replica's root an OCFL storage root (its declaration last), beside the old
/// layout's partitions, which the migration empties: their two-character names are never
/// the layout's three-digit tuples, nor a root file's name (in a folder or in a bucket).
fn declare_in_place(root: &OcflRoot, r: &dyn Replica) -> Result<(), StoreError> {
    match root {
        OcflRoot::Fs(f) => declare_folder(f),
        OcflRoot::Bucket(b) => declare_bucket(b, r),
    }
}

/// [`declare_in_place`] in a bucket: each root file written where it is absent or cut short
/// (a killed run's); one with other bytes refuses the migration. Not the put's
/// [`BucketRoot::ensure_root`], which makes a root only in an empty prefix.
fn declare_bucket(b: &BucketRoot, r: &dyn Replica) -> Result<(), StoreError> {
    // The root's own lock: no object has the empty id.
    let _making = b.lock("")?;
    for (name, bytes) in root_files() {
        match root_file(r, &name)? {
            RootFile::Sound => {}
            RootFile::Absent | RootFile::CutShort => {
                crate::hooks::write_point();
                r.write_bytes(&name, &bytes, false)?;
            }
            RootFile::Foreign(why) => {
                let replica = b.name.clone();
                return Err(
                    StoreRefusal::MigrateForeignRootFile { replica, file: name, why }.into()
                );
            }
        }
    }
    Ok(())
}

/// [`declare_in_place`] in a folder.
fn declare_folder(root: &FsRoot) -> Result<(), StoreError> {
    let err = |key: &str, e: io::Error| replica_err(&root.name, key, e);
    match confined::metadata_in(&root.root, ROOT_DECLARATION.0) {
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(replica_err(&root.name, ROOT_DECLARATION.0, e)),
    }
    std::fs::create_dir_all(&root.root).map_err(|e| err("", e))?;
    for (name, bytes) in root_files() {
        match confined::create_in(&root.root, &name) {
            Ok(mut f) => io::Write::write_all(&mut f, &bytes)
                .and_then(|()| f.sync_all())
                .map_err(|e| err(&name, e))?,
            Err(confined::ConfineError::Io { source, .. })
                if source.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(replica_err(&root.name, &name, e)),
        }
    }
    std::fs::File::open(&root.root).and_then(|d| d.sync_all()).map_err(|e| err("", e))
}

/// A stage on `root` holding the package's object at v1 (inventories aside): every content
/// file placed from the old layout and checked against its record, then the manifest.
fn stage_package(
    root: &FsRoot,
    m: &Moving,
    inv: &Inventory,
    tally: &mut Tally,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Stage, MigrateFault> {
    let stage = root.stage(&m.obj)?;
    stage.write(OBJECT_DECLARATION.0, OBJECT_DECLARATION.1.as_bytes())?;
    for (content, f) in content_files(m, inv)? {
        let placed = place(root, &stage, &format!("{}/{}", m.pdir, f.path), content)?;
        if placed.sha512 != f.sha512.to_ascii_lowercase() {
            return Err(MigrateFault::Damaged {
                replica: root.name.clone(),
                file: f.path.clone(),
                found: placed.sha512,
                recorded: f.sha512.clone(),
            });
        }
        *(if placed.linked { &mut tally.linked } else { &mut tally.copied }) += placed.size;
        progress(placed.size);
    }
    manifest_agrees(root, &stage, inv, m.files)?;
    Ok(stage)
}

/// Each content path of `inv` and the record of the package file it holds.
fn content_files<'a>(
    m: &Moving<'a>,
    inv: &'a Inventory,
) -> Result<Vec<(&'a str, &'a FileRecord)>, MigrateFault> {
    let by_path: BTreeMap<&str, &FileRecord> =
        m.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let prefix = format!("{}/{}/", inv.head, inv.content_dir());
    let mut out = Vec::new();
    for (content, _) in inv.content() {
        let logical = content.strip_prefix(&prefix).unwrap_or(content);
        let Some(f) = by_path.get(logical) else {
            return Err(MigrateFault::UnsafeName(logical.into()));
        };
        out.push((content, *f));
    }
    Ok(out)
}

/// The staged manifest (hashed already) must list every recorded file but itself, with the
/// recorded digest, and nothing else.
fn manifest_agrees(
    root: &FsRoot,
    stage: &Stage,
    inv: &Inventory,
    files: &[FileRecord],
) -> Result<(), MigrateFault> {
    let disagrees = |file: &str| MigrateFault::ManifestDisagrees {
        replica: root.name.clone(),
        file: file.into(),
    };
    let manifest = files.iter().find(|f| f.path == MANIFEST).ok_or_else(|| disagrees(MANIFEST))?;
    let content = inv.content_path(&manifest.sha512).ok_or_else(|| disagrees(MANIFEST))?;
    let tree = stage.tree();
    let file =
        confined::open_in(&tree, content).map_err(|e| replica_err(&root.name, content, e))?;
    let shown = format!("{}: {MANIFEST}", root.name);
    let lines = crate::store::manifest_names(BufReader::new(file), &shown).map_err(|e| {
        StoreError::from(StoreRefusal::Package { dir: tree.join(content), problem: e.into() })
    })?;
    listed_agrees(&root.name, lines, files)
}

/// The copied manifest in the bucket (hashed already) must list every recorded file but
/// itself, with the recorded digest, and nothing else. It is spooled to an anonymous
/// temporary file in the bucket's work directory and read from there as a stream, as a
/// folder's is: a package of a million files has a manifest of some 150 MB, not to be held
/// whole per package.
fn manifest_in_bucket_agrees(
    b: &BucketRoot,
    r: &dyn Replica,
    m: &Moving,
    inv: &Inventory,
) -> Result<(), MigrateFault> {
    let disagrees = |file: &str| MigrateFault::ManifestDisagrees {
        replica: r.name().into(),
        file: file.into(),
    };
    let manifest =
        m.files.iter().find(|f| f.path == MANIFEST).ok_or_else(|| disagrees(MANIFEST))?;
    let content = inv.content_path(&manifest.sha512).ok_or_else(|| disagrees(MANIFEST))?;
    let key = format!("{}/{content}", m.obj);
    let spooled = spool(b, r, &key)?;
    let shown = format!("{}: {MANIFEST}", r.name());
    let lines = crate::store::manifest_names(BufReader::new(spooled), &shown).map_err(|e| {
        StoreError::from(StoreRefusal::Package { dir: PathBuf::from(&key), problem: e.into() })
    })?;
    listed_agrees(r.name(), lines, m.files)
}

/// Object `key` of `r` written to an anonymous temporary file in `b`'s work directory (gone
/// once dropped), rewound for reading.
fn spool(b: &BucketRoot, r: &dyn Replica, key: &str) -> Result<std::fs::File, StoreError> {
    use std::io::{Seek, Write};
    let err = |e: io::Error| replica_err(&b.name, key, e);
    std::fs::create_dir_all(&b.work).map_err(err)?;
    let file = tempfile::tempfile_in(&b.work).map_err(err)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, file);
    r.read(key, &mut |c| out.write_all(c))?;
    let mut file = out.into_inner().map_err(|e| err(e.into_error()))?;
    file.rewind().map_err(err)?;
    Ok(file)
}

/// The lines of a package manifest (name, digest) must be the recorded files but the
/// manifest, with their recorded digests.
fn listed_agrees(
    replica: &str,
    lines: Vec<(String, String)>,
    files: &[FileRecord],
) -> Result<(), MigrateFault> {
    let disagrees =
        |file: &str| MigrateFault::ManifestDisagrees { replica: replica.into(), file: file.into() };
    let listed: BTreeMap<String, String> = lines.into_iter().collect();
    for f in files.iter().filter(|f| f.path != MANIFEST) {
        if !listed.get(&f.path).is_some_and(|d| d.eq_ignore_ascii_case(&f.sha512)) {
            return Err(disagrees(&f.path));
        }
    }
    if let Some(extra) = listed.keys().find(|k| !files.iter().any(|f| f.path == **k)) {
        return Err(disagrees(extra));
    }
    Ok(())
}

/// Places old file `key` of `root` at `content` in the stage's tree: a hard link, or where
/// the file system refuses one, a copy synced; then its SHA-512, read once from the staged
/// file (the inode the object keeps).
fn place(root: &FsRoot, stage: &Stage, key: &str, content: &str) -> Result<Placed, StoreError> {
    let err = |k: &str, e: CopyFailure| replica_err(&root.name, k, e);
    // Opened first to refuse links and anything but a regular file on the way.
    let source = confined::open_in(&root.root, key).map_err(|e| err(key, e.into()))?;
    let tree = stage.tree();
    if let Some((dir, _)) = content.rsplit_once('/') {
        confined::create_dirs_in(&tree, dir).map_err(|e| err(content, e.into()))?;
    }
    match std::fs::hard_link(root.root.join(key), tree.join(content)) {
        Ok(()) => {
            let staged = confined::open_in(&tree, content).map_err(|e| err(content, e.into()))?;
            let (size, sha512) = hash(staged).map_err(|e| err(content, e.into()))?;
            Ok(Placed { size, sha512, linked: true })
        }
        Err(e) if link_refused(&e) => {
            let out = confined::create_in(&tree, content).map_err(|e| err(content, e.into()))?;
            let (size, sha512) = copy(source, out).map_err(|e| err(content, e.into()))?;
            Ok(Placed { size, sha512, linked: false })
        }
        Err(e) => Err(err(key, e.into())),
    }
}

/// Whether a failed hard link is the file system's refusal (another file system, links not
/// supported or not allowed, too many links), after which a copy is made instead.
fn link_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EXDEV | libc::EPERM | libc::EMLINK | libc::ENOTSUP | libc::EACCES)
    )
}

/// The size and SHA-512 of what `file` holds.
fn hash(mut file: std::fs::File) -> io::Result<(u64, String)> {
    let mut h = crate::formats::digest::Sha512::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok((n, crate::formats::digest::hex(&h.finalize()))),
            Ok(k) => {
                h.update(&buf[..k]);
                n += k as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Copies `from` to `to`, hashing what is written; synced.
fn copy(mut from: std::fs::File, to: std::fs::File) -> io::Result<(u64, String)> {
    let mut out = HashingFile::new(to);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return out.finish(),
            Ok(k) => out.write(&buf[..k])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The committed object must check clean; `deep` (every content file hashed) where this run
/// did not hash what it holds (committed by a run that was killed).
fn checked_clean(
    root: &OcflRoot,
    r: &dyn Replica,
    obj: &str,
    deep: bool,
) -> Result<(), MigrateFault> {
    let folder;
    let view: &dyn Replica = match root {
        OcflRoot::Fs(f) => {
            folder = FsReplica::ocfl(&f.name, &f.root);
            &folder
        }
        OcflRoot::Bucket(_) => r,
    };
    let listing = view.list(obj)?;
    let checked = check_object(view, obj, &listing, deep, None);
    // A copy that did not read is no damage: nothing is moved aside for it, the run stops.
    let unread = checked.findings.iter().position(|f| f.kind == FindingKind::Unreadable);
    let mut findings = checked.findings;
    let first = unread.map(|i| findings.swap_remove(i)).or_else(|| findings.into_iter().next());
    match first {
        None => Ok(()),
        Some(f) if f.kind == FindingKind::Unreadable => Err(MigrateFault::Unreadable {
            replica: root.name().into(),
            key: f.key,
            detail: f.detail,
        }),
        Some(f) => Err(MigrateFault::NotClean {
            replica: root.name().into(),
            key: f.key,
            detail: f.detail,
        }),
    }
}

/// Refuses unless every old key of the package on bucket `r` hashes to its record (read
/// whole, nothing written): what a damaged object may be moved aside for.
fn old_keys_whole(r: &dyn Replica, m: &Moving) -> Result<(), MigrateFault> {
    for f in m.files {
        let found = crate::store::hash_copy(r, &format!("{}/{}", m.pdir, f.path))?;
        if !found.eq_ignore_ascii_case(&f.sha512) {
            let (replica, file, recorded) = (r.name().into(), f.path.clone(), f.sha512.clone());
            return Err(MigrateFault::Damaged { replica, file, found, recorded });
        }
    }
    Ok(())
}

/// Moves object `obj` (committed by a killed run, failing its deep check as `fault` says)
/// out of the root into a new folder of the work directory (same file system: one rename),
/// so the object can be committed again; says what was wrong and where it is kept.
fn move_aside(root: &FsRoot, obj: &str, fault: &MigrateFault) -> Result<String, StoreError> {
    let err = |key: &str, e: io::Error| replica_err(&root.name, key, e);
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.fZ");
    std::fs::create_dir_all(&root.work).map_err(|e| err("", e))?;
    let name = format!("set-aside/{stamp}-{}", std::process::id());
    let dir =
        confined::create_dirs_in(&root.work, &name).map_err(|e| replica_err(&root.name, "", e))?;
    let leaf = obj.rsplit('/').next().unwrap_or(obj);
    let to = dir.join(leaf);
    // Opened first to refuse a link on the way to the object.
    confined::open_dir_in(&root.root, obj).map_err(|e| replica_err(&root.name, obj, e))?;
    std::fs::rename(root.root.join(obj), &to).map_err(|e| err(obj, e))?;
    for d in [Some(dir.as_path()), root.root.join(obj).parent()].into_iter().flatten() {
        std::fs::File::open(d).and_then(|f| f.sync_all()).map_err(|e| err(obj, e))?;
    }
    let what = match fault {
        MigrateFault::NotClean { key, detail, .. } => format!("{key}: {detail}"),
        other => other.to_string(),
    };
    Ok(format!(
        "replica {}: the object a killed run committed failed its deep check ({what}): moved to {} (the old files hash to their records)",
        root.name,
        to.display()
    ))
}

/// Deletes the package's old files (the manifest first, as `store remove` does, so a replica
/// stopped part-way holds nothing that looks like a whole package) and its claim; in a
/// folder its directory too, and its partition when that is left empty. What a killed run
/// deleted already is no error.
fn remove_old(
    r: &dyn Replica,
    root: &OcflRoot,
    m: &Moving,
    pool: &rayon::ThreadPool,
) -> Result<(), StoreError> {
    match root {
        OcflRoot::Fs(f) => remove_old_files(r, f, m),
        OcflRoot::Bucket(_) => remove_old_keys(r, m, pool),
    }
}

/// [`remove_old`] in a bucket: the manifest, then every other recorded key, several at once
/// (each delete is a round trip; deleting one already gone is no error), the claim, then a
/// wait until a listing no longer shows them (a node the deletes have not reached yet can
/// list them for a moment), so the count of what is left that follows does not take them
/// for a package still there.
fn remove_old_keys(
    r: &dyn Replica,
    m: &Moving,
    pool: &rayon::ThreadPool,
) -> Result<(), StoreError> {
    let key = |rel: &str| format!("{}/{rel}", m.pdir);
    crate::hooks::write_point();
    r.delete(&key(MANIFEST))?;
    if crate::hooks::fail_at("migrate-after-delete") {
        std::process::abort(); // a test of what a kill leaves
    }
    let rest: Vec<String> =
        m.files.iter().filter(|f| f.path != MANIFEST).map(|f| key(&f.path)).collect();
    let deleted = pool.install(|| {
        crate::store::schedule::in_order(&rest, |k| {
            crate::hooks::write_point();
            r.delete(k)
        })
    });
    deleted.into_iter().collect::<Result<Vec<()>, _>>()?;
    crate::hooks::write_point();
    r.unclaim(&m.pdir)?;
    await_unlisted(r, &m.pdir, &rest)
}

/// [`remove_old`] in a folder.
fn remove_old_files(r: &dyn Replica, root: &FsRoot, m: &Moving) -> Result<(), StoreError> {
    match confined::open_dir_in(&root.root, &m.pdir) {
        Ok(_) => {}
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(replica_err(r.name(), &m.pdir, e)),
    }
    r.clean_temporaries(&m.pdir)?;
    let mut keys: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
    keys.sort_by_key(|k| (*k != MANIFEST, *k));
    for k in keys {
        r.delete(&format!("{}/{k}", m.pdir))?;
    }
    r.unclaim(&m.pdir)?;
    r.remove_empty_dirs(&m.pdir)?;
    if let Some((partition, _)) = m.pdir.split_once('/') {
        // Fails, as it should, while other packages are in it (or it is not a directory).
        let _ = std::fs::remove_dir(root.root.join(partition));
    }
    Ok(())
}

/// One old key of a package copied into its object in a bucket.
struct Copying<'a> {
    b: &'a BucketRoot,
    r: &'a dyn Replica,
    m: &'a Moving<'a>,
    f: &'a FileRecord,
    /// Where in the object (object-relative).
    content: &'a str,
    /// Raised once another file of the package failed: this one gives up.
    stop: &'a AtomicBool,
    /// Held while a file is copied through this machine.
    through_here: &'a std::sync::Mutex<()>,
}

impl Copying<'_> {
    fn from(&self) -> String {
        format!("{}/{}", self.m.pdir, self.f.path)
    }

    fn to(&self) -> String {
        format!("{}/{}", self.m.obj, self.content)
    }

    /// The old key judged damaged: it hashes to `found`.
    fn damaged(&self, found: String) -> MigrateFault {
        MigrateFault::Damaged {
            replica: self.r.name().into(),
            file: self.f.path.clone(),
            found,
            recorded: self.f.sha512.clone(),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// Copies old key `pdir/f` to `obj/content` in the bucket, by the server where it can (else
/// through this machine, verified both ways), then reads the copy back whole and hashes it:
/// it must be the record's bytes. Whether the server copied it.
fn copy_verified(c: &Copying) -> Result<bool, MigrateFault> {
    let (from, to) = (c.from(), c.to());
    // A refused server-side copy (a store without one, an error) is made here instead; an
    // old key that is not there fails that too, and is reported so.
    let refused = crate::hooks::fail_at("migrate-no-server-copy");
    let server = !refused && matches!(c.r.copy_within(&from, &to), Ok(true));
    if !server {
        copy_through_here(c)?;
    } else if c.f.path == "METS.xml" && crate::hooks::fail_at("migrate-spoil-copy") {
        c.r.write_bytes(&to, b"a server-side copy gone wrong", false)?;
    }
    if c.stopped() {
        return Err(MigrateFault::Stopped);
    }
    let found = crate::store::hash_copy(c.r, &to)?;
    if found.eq_ignore_ascii_case(&c.f.sha512) {
        return Ok(server);
    }
    // Which differs: a copy through here was the old key's bytes, checked on the way in.
    if server {
        let old = crate::store::hash_copy(c.r, &from)?;
        if !old.eq_ignore_ascii_case(&c.f.sha512) {
            return Err(c.damaged(old));
        }
    }
    Err(MigrateFault::CopyDiffers {
        replica: c.r.name().into(),
        file: c.f.path.clone(),
        key: to,
        found,
        recorded: c.f.sha512.clone(),
    })
}

/// The SHA-512 a transfer found where it refused a file for its digest.
fn digest_found(e: &StoreError) -> Option<String> {
    let StoreError::Replica { source, .. } = e else { return None };
    let CopyFailure::Digest { found, .. } = source.as_ref() else { return None };
    Some(found.clone())
}

/// Copies the old key to the object's through a scratch file in the bucket's work directory,
/// one file at a time, and only when the disk there has room for it: downloaded and hashed
/// (kept only when it is the record's bytes), then uploaded, hashed as it is sent.
fn copy_through_here(c: &Copying) -> Result<(), MigrateFault> {
    let _one_at_a_time = c.through_here.lock().unwrap_or_else(|p| p.into_inner());
    if c.stopped() {
        return Err(MigrateFault::Stopped);
    }
    let (b, from) = (c.b, c.from());
    let err = |e: io::Error| replica_err(&b.name, &from, e);
    std::fs::create_dir_all(&b.work).map_err(err)?;
    let free = crate::batch::resources::free_space(&b.work).map_err(|e| err(e.source))?;
    room_for(&b.name, &c.f.path, c.f.size, &b.work, free)?;
    let scratch = tempfile::tempdir_in(&b.work).map_err(err)?;
    let local = Source { root: scratch.path(), name: "file" };
    let sha = c.f.sha512.to_ascii_lowercase();
    crate::store::fetch_verified(c.r, &from, local, &sha).map_err(|e| match digest_found(&e) {
        Some(found) => c.damaged(found),
        None => e.into(),
    })?;
    if c.stopped() {
        return Err(MigrateFault::Stopped);
    }
    crate::hooks::write_point();
    c.r.write_verified(&c.to(), local, c.f.size, &sha)?;
    Ok(())
}

/// Whether a file of `size` bytes fits in `free` bytes of the work directory `work`: the
/// scratch copy is the file's bytes and nothing more, so an exact fit is room enough.
fn room_for(
    replica: &str,
    file: &str,
    size: u64,
    work: &Path,
    free: u64,
) -> Result<(), MigrateFault> {
    if free >= size {
        return Ok(());
    }
    let (replica, file, work) = (replica.to_string(), file.to_string(), work.display().to_string());
    Err(MigrateFault::NoRoom { replica, file, size, work, free })
}

/// What a bucket's storage root holds besides its declaration files, its objects and the
/// package folders (reported apart), listed one level at a time (never the whole bucket at
/// once): keys at its top, keys directly in a partition, anything in `extensions/` but the
/// layout's configuration, and any other top folder (`name/`). The three-digit tuple
/// folders are the layout's, holding objects, which `store check` reads.
fn bucket_leftovers(r: &dyn Replica) -> Result<Vec<String>, StoreError> {
    let declared: BTreeSet<String> = root_files().into_iter().map(|(name, _)| name).collect();
    let top = r.list_level("")?;
    let mut out: Vec<String> = top.keys.into_iter().filter(|k| !declared.contains(k)).collect();
    for dir in top.dirs {
        let tuple = dir.len() == 3 && dir.bytes().all(|c| c.is_ascii_hexdigit());
        if dir.len() == 2 {
            out.extend(r.list_level(&dir)?.keys);
        } else if dir == "extensions" {
            let keys = r.list(&dir)?.into_iter().map(|o| o.key);
            out.extend(keys.filter(|k| !declared.contains(k)));
        } else if !tuple {
            out.push(format!("{dir}/"));
        }
    }
    Ok(out)
}

/// Removes the webaip layout's empty partition folders in `root`: one a package moved out of
/// while something else was left in it (taken away since), which would make the root
/// invalid OCFL (E073: an empty folder). A folder with anything in it stays.
fn remove_empty_partitions(root: &FsRoot) {
    let Ok(entries) = std::fs::read_dir(&root.root) else { return };
    for e in entries.flatten() {
        // DirEntry::file_type does not follow links: a link is never removed here.
        if e.file_name().len() == 2 && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// What storage root `root` holds besides its declaration files, its objects and the
/// package folders `dirs` (reported apart): every file, link, FIFO... by its path, and every
/// empty folder (`path/`). Object folders (those with an object declaration) and `dirs` are
/// not walked into.
fn leftovers(root: &FsRoot, dirs: &BTreeSet<String>) -> Result<Vec<String>, StoreError> {
    let declared: BTreeSet<String> = root_files().into_iter().map(|(name, _)| name).collect();
    let key = |p: &Path| p.strip_prefix(&root.root).unwrap_or(p).to_string_lossy().into_owned();
    let walked = |e: &walkdir::DirEntry| {
        let object = || std::fs::symlink_metadata(e.path().join(OBJECT_DECLARATION.0)).is_ok();
        !(e.file_type().is_dir() && (dirs.contains(&key(e.path())) || object()))
    };
    let walk = walkdir::WalkDir::new(&root.root)
        .follow_links(false)
        .follow_root_links(false)
        .min_depth(1)
        .sort_by_file_name();
    let mut out = Vec::new();
    for e in walk.into_iter().filter_entry(walked) {
        let e = e.map_err(|e| {
            let at = e.path().map(key).unwrap_or_default();
            replica_err(&root.name, &at, io::Error::from(e))
        })?;
        let k = key(e.path());
        if e.file_type().is_dir() {
            let empty = std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_none());
            if empty {
                out.push(format!("{k}/"));
            }
        } else if !declared.contains(&k) {
            out.push(k);
        }
    }
    Ok(out)
}

/// Rewrites the configuration with `layout = "ocfl"` on every replica: written whole beside
/// it, synced, loaded back as a store configuration, then renamed over it.
fn switch_config(given: &Path) -> Result<(), StoreError> {
    // A configuration reached through a link is rewritten where it lives: renamed over, the
    // link would become a file of its own and its target would still say webaip.
    let path = &std::fs::canonicalize(given).map_err(|e| StoreError::ConfigSwitch {
        path: given.into(),
        why: confined::describe_io(&e),
    })?;
    let fail = |why: String| StoreError::ConfigSwitch { path: path.into(), why };
    let text = std::fs::read_to_string(path).map_err(|e| fail(confined::describe_io(&e)))?;
    let permissions = std::fs::metadata(path).map_err(|e| fail(confined::describe_io(&e)))?;
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| fail(e.to_string()))?;
    let replicas = doc
        .get_mut("replica")
        .and_then(|i| i.as_array_of_tables_mut())
        .ok_or_else(|| fail("its replicas are not [[replica]] tables".into()))?;
    for t in replicas.iter_mut() {
        t.insert("layout", toml_edit::value("ocfl"));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.webaip-migrate"));
    let _ = std::fs::remove_file(&temp); // a killed run's
    let written =
        std::fs::OpenOptions::new().write(true).create_new(true).open(&temp).and_then(|mut f| {
            // The rewritten file keeps who may read it (a configuration may name credentials).
            f.set_permissions(permissions.permissions())?;
            io::Write::write_all(&mut f, doc.to_string().as_bytes()).and_then(|()| f.sync_all())
        });
    written.map_err(|e| fail(confined::describe_io(&e)))?;
    let loaded = StoreConfig::load(&temp);
    if !loaded.as_ref().is_ok_and(|c| {
        c.replicas.iter().all(|r| r.layout() == crate::store::config::ReplicaLayout::Ocfl)
    }) {
        let _ = std::fs::remove_file(&temp);
        return Err(fail(
            loaded.err().map_or("not every replica says ocfl".into(), |e| e.to_string()),
        ));
    }
    std::fs::rename(&temp, path).map_err(|e| fail(confined::describe_io(&e)))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| fail(confined::describe_io(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_through_here_needs_the_whole_file_free() {
        let work = Path::new("/var/tmp/work");
        assert!(room_for("b", "x.warc.gz", 100, work, 100).is_ok());
        assert!(room_for("b", "x.warc.gz", 0, work, 0).is_ok());
        let fault = room_for("b", "x.warc.gz", 101, work, 100).unwrap_err();
        let MigrateFault::NoRoom { size, free, .. } = &fault else { panic!("{fault}") };
        assert_eq!((*size, *free), (101, 100));
        let said = fault.to_string();
        for part in ["replica b", "x.warc.gz (101 bytes)", "/var/tmp/work has 100 bytes free"] {
            assert!(said.contains(part), "{said}");
        }
    }
}
