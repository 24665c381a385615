//! Staging a put's new version on every replica in the audit's own read of the package.
//!
//! The audit that decides whether a package may be stored reads each file it lists whole and
//! computes its SHA-512; the files the new version adds are written, in that same read, to
//! the stage of every replica ([`crate::audit::Tee`]), so each is read once and hashed once,
//! however many replicas there are. Only after the audit has passed, and every added file's
//! SHA-512 (of the very bytes staged) is its manifest's, is anything recorded or committed;
//! files the audit does not read whole (the METS, the manifest) are copied and hashed as
//! before. A replica whose stage cannot be written fails alone; the others go on. A bucket
//! root has no stage: once the audit passed, the version's files are written to it in place,
//! each hashed as it is sent (see [`super::bucket`]). Where every replica is a bucket, the
//! fixity check does not read the files the version adds beforehand: their uploads hash them,
//! and a file whose bytes are not its manifest's refuses the package (what the uploads wrote
//! is no version, and is cleared as a killed put's leftovers are).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::mpsc::{SendError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::bucket::BucketRoot;
use super::check::Head;
use super::fs::{FsRoot, Stage};
use super::inventory::{INVENTORY, SIDECAR};
use super::layout::OBJECT_DECLARATION;
use super::root::OcflRoot;
use crate::store::replica::{Replica, Source};
use crate::store::{CopyFailure, PackageFile, PackageProblem, StoreError, StoreRefusal};

/// Where one replica's new version is being written.
pub(super) enum Target<'a> {
    /// A file system root's stage (the audit's read writes into it).
    Fs(&'a FsRoot, Stage),
    /// A bucket root: the version's files are written in place once the audit passed.
    Bucket(&'a BucketRoot, &'a dyn Replica),
}

/// The new version staged on each replica (in the configuration's order).
pub(super) struct Staging<'a> {
    /// Syncs the files written to the stages off the reading threads (first: dropped, so
    /// joined, before the stages are removed).
    syncer: Syncer,
    /// Each replica's target, or why it has none.
    stages: Vec<Result<Target<'a>, StoreError>>,
    /// The object's directory.
    obj: &'a str,
    /// The object's current head (`None`: a new object).
    prev: Option<&'a Head>,
    /// The package files whose content the version adds: package-relative path to the
    /// object-relative content path and the file as the manifest gives it.
    added: BTreeMap<&'a str, (&'a str, &'a PackageFile)>,
    /// The first failure on each replica once its stage was made.
    failed: Mutex<Vec<Option<StoreError>>>,
    /// Files the audit began to write to the stages.
    opened: Mutex<BTreeSet<String>>,
    /// The SHA-512 of each file the audit read whole into the stages.
    digests: Mutex<BTreeMap<String, String>>,
    /// The first package file an upload found not to be its manifest's bytes.
    damaged: Mutex<Option<PackageProblem>>,
    /// The added files an upload read to the end and hashed (its manifest's bytes or not).
    hashed: Mutex<BTreeSet<String>>,
    progress: &'a (dyn Fn(u64) + Sync),
}

/// What a put stages: where, on what, and which files the version adds.
pub(super) struct Plan<'a> {
    pub roots: &'a [OcflRoot],
    /// The replicas, in the roots' order.
    pub replicas: Vec<&'a dyn Replica>,
    pub obj: &'a str,
    pub prev: Option<&'a Head>,
    /// Content path (object-relative) and package file, of each file the version adds.
    pub added: Vec<(&'a str, &'a PackageFile)>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<'a> Staging<'a> {
    /// A stage on each replica holding the object's current files (hard-linked) or, for a
    /// new object, its declaration.
    pub(super) fn new(plan: Plan<'a>, progress: &'a (dyn Fn(u64) + Sync)) -> Self {
        let stages: Vec<Result<Target, StoreError>> = plan
            .roots
            .iter()
            .zip(&plan.replicas)
            .map(|(root, r)| begin(root, *r, plan.obj, plan.prev))
            .collect();
        let added = plan.added.into_iter().map(|(c, f)| (f.rel.as_str(), (c, f))).collect();
        Staging {
            syncer: Syncer::new(),
            failed: Mutex::new(stages.iter().map(|_| None).collect()),
            stages,
            obj: plan.obj,
            prev: plan.prev,
            added,
            opened: Mutex::new(BTreeSet::new()),
            digests: Mutex::new(BTreeMap::new()),
            damaged: Mutex::new(None),
            hashed: Mutex::new(BTreeSet::new()),
            progress,
        }
    }

    /// Whether every replica is a bucket (no file system stage takes the audit's read).
    pub(super) fn uploads_only(&self) -> bool {
        self.stages.iter().all(|s| matches!(s, Ok(Target::Bucket(..))))
    }

    fn fail(&self, i: usize, e: StoreError) {
        let mut failed = locked(&self.failed);
        if failed[i].is_none() {
            failed[i] = Some(e);
        }
    }

    /// The targets still written to (their replica's index).
    fn live_targets(&self) -> Vec<(usize, &Target<'a>)> {
        let failed = locked(&self.failed);
        self.stages
            .iter()
            .enumerate()
            .filter(|(i, _)| failed[*i].is_none())
            .filter_map(|(i, s)| Some((i, s.as_ref().ok()?)))
            .collect()
    }

    /// The file system stages still written to (their replica's index).
    fn live(&self) -> Vec<(usize, &Stage)> {
        let live = self.live_targets().into_iter();
        live.filter_map(|(i, t)| match t {
            Target::Fs(_, s) => Some((i, s)),
            Target::Bucket(..) => None,
        })
        .collect()
    }

    /// The bucket roots still written to (their replica's index).
    fn live_buckets(&self) -> Vec<(usize, &'a BucketRoot, &'a dyn Replica)> {
        let live = self.live_targets().into_iter();
        live.filter_map(|(i, t)| match t {
            Target::Bucket(b, r) => Some((i, *b, *r)),
            Target::Fs(..) => None,
        })
        .collect()
    }

    /// After the audit passed: every added file the audit read must have its manifest's
    /// SHA-512 (else no replica commits: the package is not the one its manifest describes);
    /// the others are copied from the package into each stage, hashed as they are written.
    pub(super) fn complete(&self, dir: &Path) -> Result<(), StoreError> {
        let digests = std::mem::take(&mut *locked(&self.digests));
        for (rel, (content, f)) in &self.added {
            match digests.get(*rel) {
                Some(found) if found.eq_ignore_ascii_case(&f.sha512) => {}
                Some(found) => {
                    let digest =
                        CopyFailure::Digest { found: found.clone(), expected: f.sha512.clone() };
                    for (i, target) in self.live_targets() {
                        let replica = match target {
                            Target::Fs(root, _) => root.name.clone(),
                            Target::Bucket(b, _) => b.name.clone(),
                        };
                        let source = Box::new(io::Error::other(digest.to_string()).into());
                        let key = content.to_string();
                        self.fail(i, StoreError::Replica { replica, key, source });
                    }
                }
                None => self.copy(dir, content, f),
            }
        }
        self.upload(dir);
        self.hash_unsent(dir);
        match locked(&self.damaged).take() {
            Some(problem) => Err(StoreRefusal::Package { dir: dir.into(), problem }.into()),
            None => Ok(()),
        }
    }

    /// Writes every added file to each live bucket root, verified as it is sent (in the
    /// caller's thread pool: the transfers run in parallel). A bucket whose write fails is
    /// dropped from the put, the others go on.
    fn upload(&self, dir: &Path) {
        // Nothing is written to a bucket before the audit passed (a refused package leaves
        // no trace there): the root and the version's absence are checked now.
        for (i, b, r) in self.live_buckets() {
            if let Err(e) = b.begin(r, self.obj, self.prev) {
                self.fail(i, e);
            }
        }
        let buckets = self.live_buckets();
        let mut jobs: Vec<_> = buckets
            .iter()
            .flat_map(|b| self.added.values().map(move |(content, f)| (b, *content, *f)))
            .collect();
        // The largest first, each free transfer taking the next: a parallel iterator would
        // leave one transfer sending the large files one after the other at the end.
        jobs.sort_by_key(|(_, _, f)| std::cmp::Reverse(f.size));
        crate::store::schedule::in_order(&jobs, |((i, b, r), content, f)| {
            if locked(&self.failed)[*i].is_some() {
                return;
            }
            let source = Source { root: dir, name: &f.rel };
            match b.upload(*r, self.obj, content, source, (f.size, &f.sha512)) {
                Ok(()) => {
                    locked(&self.hashed).insert(f.rel.clone());
                }
                Err(e) => {
                    if let Some(problem) = source_damage(&e, &f.rel) {
                        locked(&self.hashed).insert(f.rel.clone());
                        locked(&self.damaged).get_or_insert(problem);
                    }
                    self.fail(*i, e);
                }
            }
        });
    }

    /// Where the fixity read left the added files to the uploads (every replica a bucket),
    /// hashes here each one no upload read to the end (every bucket failed before it, or
    /// while sending it): what the put reports as verified is then so, and a damaged file is
    /// the package's refusal, whatever the buckets did.
    fn hash_unsent(&self, dir: &Path) {
        if !self.uploads_only() {
            return;
        }
        let hashed = std::mem::take(&mut *locked(&self.hashed));
        let mut unsent: Vec<&PackageFile> =
            self.added.values().map(|(_, f)| *f).filter(|f| !hashed.contains(&f.rel)).collect();
        unsent.sort_by_key(|f| std::cmp::Reverse(f.size));
        crate::store::schedule::in_order(&unsent, |f| {
            if let Err(problem) = crate::store::verify::check_one(dir, f, None) {
                locked(&self.damaged).get_or_insert(problem);
            }
        });
    }

    /// Copies package file `f` into each live stage at `content`, verified against its
    /// manifest SHA-512.
    fn copy(&self, dir: &Path, content: &str, f: &PackageFile) {
        for (i, stage) in self.live() {
            let source = Source { root: dir, name: &f.rel };
            let done = stage
                .remove(content)
                .and_then(|()| stage.copy_verified(content, source, &f.sha512));
            if let Err(e) = done {
                self.fail(i, e);
            }
        }
        (self.progress)(f.size);
    }

    /// Each replica's target, or why it failed.
    /// Every file the reading wrote is synced first (a failed sync fails its replica).
    pub(super) fn into_stages(self) -> Vec<Result<Target<'a>, StoreError>> {
        for f in self.syncer.finish() {
            if let Ok(Target::Fs(_, stage)) = &self.stages[f.replica] {
                self.fail(f.replica, stage.error(&f.content, f.error));
            }
        }
        let failed = self.failed.into_inner().unwrap_or_else(|p| p.into_inner());
        self.stages
            .into_iter()
            .zip(failed)
            .map(|(stage, failure)| match failure {
                Some(e) => Err(e),
                None => stage,
            })
            .collect()
    }
}

/// Refuses the package, before anything is written, where a replica cannot hold a file the
/// version adds under the key its object gives it (longer than a bucket's keys, a character
/// they cannot hold): the upload would fail there with the store's own error, every time.
pub(super) fn keys_fit(
    replicas: &[&dyn Replica],
    obj: &str,
    added: &[(&str, &PackageFile)],
) -> Result<(), StoreError> {
    for r in replicas {
        for (content, f) in added {
            if let Some(problem) = r.key_problem(&format!("{obj}/{content}")) {
                let (replica, file) = (r.name().to_string(), f.rel.clone());
                return Err(StoreRefusal::KeyUnfit { replica, file, problem }.into());
            }
        }
    }
    Ok(())
}

/// A replica's target: on a file system a stage with the object's current files, or its
/// declaration when it is new; on a bucket nothing yet (see [`Staging::upload`]).
fn begin<'a>(
    root: &'a OcflRoot,
    r: &'a dyn Replica,
    obj: &str,
    prev: Option<&Head>,
) -> Result<Target<'a>, StoreError> {
    let root = match root {
        OcflRoot::Fs(f) => f,
        OcflRoot::Bucket(b) => return Ok(Target::Bucket(b, r)),
    };
    let stage = root.stage(obj)?;
    match prev {
        Some(p) => {
            for rel in accounted_files(p) {
                stage.link(obj, &rel)?;
            }
        }
        None => stage.write(OBJECT_DECLARATION.0, OBJECT_DECLARATION.1.as_bytes())?,
    }
    Ok(Target::Fs(root, stage))
}

/// The package's damage an upload's error shows: the SHA-512 of the bytes read from package
/// file `name` (an upload hashes what it reads) is not its manifest's.
fn source_damage(e: &StoreError, name: &str) -> Option<PackageProblem> {
    let StoreError::Replica { source, .. } = e else { return None };
    let CopyFailure::Digest { found, expected } = source.as_ref() else { return None };
    let (name, expected, found) = (name.to_string(), expected.clone(), found.clone());
    Some(PackageProblem::Fixity { name, expected, found })
}

impl crate::audit::Tee for Staging<'_> {
    fn checks_later(&self, href: &str) -> bool {
        // Only where no file system stage waits for the bytes of this read.
        self.uploads_only() && self.added.contains_key(href)
    }

    fn open(&self, href: &str) -> Option<Box<dyn Write + Send + '_>> {
        let (content, _) = self.added.get(href)?;
        // A file the METS lists twice is written once.
        if !locked(&self.opened).insert(href.to_string()) {
            return None;
        }
        let mut outs = Vec::new();
        for (i, stage) in self.live() {
            match stage.create(content) {
                Ok(f) => outs.push(Out {
                    replica: i,
                    file: io::BufWriter::with_capacity(1 << 20, f),
                    unkicked: 0,
                }),
                Err(e) => self.fail(i, e),
            }
        }
        Some(Box::new(FanOut { staging: self, content, outs }))
    }

    fn read(&self, href: &str, sha512: &str) {
        locked(&self.digests).insert(href.to_string(), sha512.to_ascii_lowercase());
        if let Some((_, f)) = self.added.get(href) {
            (self.progress)(f.size);
        }
    }
}

/// One replica's file of a [`FanOut`].
struct Out {
    replica: usize,
    file: io::BufWriter<File>,
    /// Bytes written since the file's writeback was last started.
    unkicked: u64,
}

/// How many bytes of a file are written before its writeback is started.
const KICK_EVERY: u64 = 8 << 20;

impl Out {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)?;
        self.unkicked += buf.len() as u64;
        if self.unkicked >= KICK_EVERY && self.file.buffer().is_empty() {
            self.unkicked = 0;
            start_writeback(self.file.get_ref());
        }
        Ok(())
    }
}

/// Starts writing the file's dirty pages to the disk without waiting for them, so that the
/// disk works while the next bytes are hashed and the fsync at the file's end finds little
/// left to do (the fsync still decides durability; this only moves work earlier).
#[cfg(target_os = "linux")]
fn start_writeback(f: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range(2) on an open descriptor of ours, whole file, no waiting: it
    // touches no memory of the process. A failure only leaves the work to the fsync.
    unsafe {
        libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File) {}

/// Writes the bytes of one package file to its content path in every live stage; a replica
/// whose write fails is dropped from this file and from the put, the others go on. Each file
/// is handed to the [`Syncer`] when the writer is dropped.
struct FanOut<'s, 'a> {
    staging: &'s Staging<'a>,
    content: &'a str,
    outs: Vec<Out>,
}

impl FanOut<'_, '_> {
    fn failed(&self, replica: usize, e: io::Error) {
        let stage = self.staging.stages[replica].as_ref();
        if let Ok(Target::Fs(_, stage)) = stage {
            self.staging.fail(replica, stage.error(self.content, e));
        }
    }
}

impl Write for FanOut<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        crate::hooks::write_point();
        let mut kept = Vec::with_capacity(self.outs.len());
        for mut out in std::mem::take(&mut self.outs) {
            match out.write_all(buf) {
                Ok(()) => kept.push(out),
                Err(e) => self.failed(out.replica, e),
            }
        }
        self.outs = kept;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for FanOut<'_, '_> {
    fn drop(&mut self) {
        for out in std::mem::take(&mut self.outs) {
            crate::hooks::write_point();
            match out.file.into_inner() {
                Ok(file) => {
                    let content = self.content.to_string();
                    self.staging.syncer.sync(ToSync { replica: out.replica, content, file });
                }
                Err(e) => self.failed(out.replica, e.into_error()),
            }
        }
    }
}

/// Threads that sync the files written to the stages while the next ones are read and
/// hashed: the reading threads never wait for the disk, and the file system commits
/// several syncs at once. [`Syncer::finish`] waits for every one (before any commit).
struct Syncer {
    /// The queue (bounded: at most so many files held open awaiting their sync); `None`
    /// once finished.
    queue: Mutex<Option<SyncSender<ToSync>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    failures: Arc<Mutex<Vec<SyncFailure>>>,
}

/// Threads syncing files at once.
const SYNC_THREADS: usize = 4;

/// Files written and awaiting their sync, at most.
const SYNC_QUEUE: usize = 64;

/// A file written to a replica's stage, to be synced.
struct ToSync {
    replica: usize,
    content: String,
    file: File,
}

/// A file whose sync failed: its replica fails.
struct SyncFailure {
    replica: usize,
    content: String,
    error: io::Error,
}

impl Syncer {
    fn new() -> Self {
        let (queue, jobs) = sync_channel::<ToSync>(SYNC_QUEUE);
        let jobs = Arc::new(Mutex::new(jobs));
        let failures = Arc::new(Mutex::new(Vec::new()));
        // A thread that cannot be had is none: with none, each file is synced where it was
        // written (the queue has no receiver left).
        let threads = (0..SYNC_THREADS)
            .filter_map(|n| {
                let (jobs, failures) = (Arc::clone(&jobs), Arc::clone(&failures));
                let work = move || {
                    loop {
                        // The queue's lock is let go before the sync: the threads sync at once.
                        let job = locked(&jobs).recv();
                        let Ok(job) = job else { return };
                        sync_one(job, &failures);
                    }
                };
                std::thread::Builder::new().name(format!("put-sync-{n}")).spawn(work).ok()
            })
            .collect();
        Syncer { queue: Mutex::new(Some(queue)), threads: Mutex::new(threads), failures }
    }

    /// Syncs `job`'s file on a syncing thread (here when there is none).
    fn sync(&self, job: ToSync) {
        let queue = locked(&self.queue).clone();
        let job = match queue {
            Some(q) => match q.send(job) {
                Ok(()) => return,
                Err(SendError(job)) => job,
            },
            None => job,
        };
        sync_one(job, &self.failures);
    }

    /// Waits until every file given is synced; the syncs that failed.
    fn finish(&self) -> Vec<SyncFailure> {
        drop(locked(&self.queue).take());
        for t in std::mem::take(&mut *locked(&self.threads)) {
            if let Err(p) = t.join() {
                std::panic::resume_unwind(p);
            }
        }
        std::mem::take(&mut *locked(&self.failures))
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        // A put refused or failed: its files are synced for nothing, but no thread outlives it.
        drop(locked(&self.queue).take());
        for t in std::mem::take(&mut *locked(&self.threads)) {
            let _ = t.join();
        }
    }
}

fn sync_one(job: ToSync, failures: &Mutex<Vec<SyncFailure>>) {
    crate::hooks::write_point();
    if let Err(error) = job.file.sync_all() {
        let failure = SyncFailure { replica: job.replica, content: job.content, error };
        locked(failures).push(failure);
    }
}

/// Every file of an object its inventories account for besides the root inventory and its
/// sidecar: the declaration, every version's inventory and sidecar, every content file.
pub(crate) fn accounted_files(head: &Head) -> Vec<String> {
    let mut out = vec![OBJECT_DECLARATION.0.to_string()];
    for n in 1..=head.versions.head {
        let v = head.versions.name(n);
        out.push(format!("{v}/{INVENTORY}"));
        out.push(format!("{v}/{SIDECAR}"));
    }
    out.extend(head.inv.content().map(|(p, _)| p.to_string()));
    out
}
