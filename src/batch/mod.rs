//! `webaip batch`: many packages from one manifest on one machine, resumable.
//!
//! The manifest ([`manifest`]) lists the items; the journal ([`journal`]) records each one's
//! state. A run registers the items of its share ([`shard`]) as pending, skips those done
//! (and those failed, unless retried), and packages the rest, up to `jobs` at a time, each
//! through the library function `webaip package` uses for its shape ([`item`]).
//!
//! A package is built below the hidden work folder `OUT/.batch-work/` and moved to `OUT/NAME`
//! only after the journal records it done (with its METS SHA-512), so a directory in `OUT`
//! that looks like a package always is one the journal knows. A run killed at any point
//! leaves at most `running` rows; the next run redoes them from scratch, after removing what
//! they left in the work folder, and moves into place any package recorded done whose move
//! the kill interrupted. One item's failure (an unreadable or unrecognised source, a damaged
//! archive, a repeated or malformed line, a package of that name already there) is recorded with its
//! reason and the batch goes on.
//!
//! A run locks its journal ([`lock`]), keeps free space on the output's file system and a
//! memory budget ([`resources`]), and scans every item's payloads through one engine.
//!
//! With `--ingest` and `--store` ([`deliver`]), each package is made an AIP before it is
//! recorded done, and put into the replicated store after; without an output folder to keep
//! packages in, the store holds the only copy once the journal records it stored. With
//! `--export-wacz` and `--export-eark` ([`export`]), each is also exported, after the put.

pub mod deliver;
pub mod events;
pub mod export;
pub mod item;
pub mod journal;
pub mod lines;
pub mod lock;
pub mod manifest;
pub mod resources;
pub mod shard;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use deliver::{DeliverError, DeliverOptions, Delivery};
pub use events::{Event, Progress};
use item::{package_source, with_item_options};
use journal::{DoneRecord, Entry, ItemState, Journal, JournalError};
use lock::{JournalLock, LockError, lock_journal};
use manifest::{Item, ManifestError, read_manifest};
use resources::{Resources, SpaceError, SpaceGuard, source_bytes};
use shard::Shard;

use crate::package::PackageOptions;

/// The hidden folder below the output folder where packages are built.
pub const WORK_DIR: &str = ".batch-work";

/// How a batch runs.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// The folder the packages go to.
    pub out: PathBuf,
    /// The journal file.
    pub journal: PathBuf,
    /// Items packaged at once (and threads each uses).
    pub jobs: usize,
    /// Retry the items the journal records failed.
    pub retry_failed: bool,
    /// This run's share of the manifest (all of it when none).
    pub shard: Option<Shard>,
    /// The options of every package (`out` and the curator metadata are the item's own),
    /// which an item's options column may change.
    pub package: PackageOptions,
    /// Free space to keep and the memory budget.
    pub resources: Resources,
    /// Ingest, the store, and whether packages are kept in `out` (else `out` holds only the
    /// work folder and, by default, the journal).
    pub deliver: DeliverOptions,
}

/// Why a batch could not run (an item's failure is recorded, not this).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The manifest cannot be read.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The journal cannot be used.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The output folder cannot be made or read.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The worker threads cannot be started.
    #[error("cannot start worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    /// Another run holds the journal, or its lock cannot be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The output's free space cannot be read.
    #[error(transparent)]
    Space(#[from] SpaceError),
    /// The scan engine cannot be started.
    #[error(transparent)]
    Scan(#[from] crate::stages::scan::ScanError),
    /// The store's configuration or state cannot be used.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A delivery step could not be recorded.
    #[error(transparent)]
    Deliver(#[from] DeliverError),
    /// The output folder is inside an item's source, or an item's source inside it.
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
}

/// What a run did, and where its share stands.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BatchOutcome {
    /// Items of the manifest.
    pub manifest_items: usize,
    /// Items of this run's share.
    pub items: usize,
    /// Packaged by this run (or, packaged before, stored or exported by it).
    pub packaged: usize,
    /// Failed in this run.
    pub failed: usize,
    /// Skipped: done before.
    pub skipped_done: usize,
    /// Skipped: failed before (no `--retry-failed`).
    pub skipped_failed: usize,
    /// Packages recorded done whose move into place an earlier run did not finish, moved now.
    pub moved_into_place: usize,
    /// Entries of a scanned folder that are no item.
    pub ignored: Vec<String>,
    /// Items of the share whose package the journal records stored (`--store`).
    pub stored: usize,
    /// Items of the share whose WACZ export the journal records (`--export-wacz`).
    pub exported_wacz: usize,
    /// Items of the share whose E-ARK export the journal records (`--export-eark`).
    pub exported_eark: usize,
    /// Every item of the share, as the journal has it after the run.
    pub entries: Vec<Entry>,
    /// Bytes of the sources of the items this run packaged or failed.
    pub bytes: u64,
    /// Seconds the run took.
    pub elapsed_seconds: f64,
    /// Items packaged at once: `jobs`, or fewer when the memory budget holds fewer.
    pub in_flight: usize,
    /// The memory budget (`--memory`), bytes.
    pub memory: u64,
    /// Free space kept on the output's file system (`--min-free`), bytes.
    pub min_free: u64,
    /// Packages scanned through the run's one scan engine (`None` without virus checking).
    pub scan_engine_packages: Option<u64>,
}

impl BatchOutcome {
    /// Items of the share that are failed (now or before).
    pub fn failures(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.state == ItemState::Failed)
    }

    /// Whether every item of the share is done (and stored, when the run puts packages into
    /// a store).
    pub fn complete(&self, opts: &BatchOptions) -> bool {
        let stored = |e: &Entry| opts.deliver.store.is_none() || e.stored.is_some();
        self.entries.iter().all(|e| e.state == ItemState::Done && stored(e))
    }
}

/// Runs the batch of `manifest` with `opts`; `progress` hears of each item finished.
pub fn run(
    manifest: &Path,
    opts: &BatchOptions,
    progress: Progress<'_>,
) -> Result<BatchOutcome, BatchError> {
    let started = Instant::now();
    let m = read_manifest(manifest)?;
    let manifest_items = m.items.len();
    let mut share = m.items;
    share.retain(|i| opts.shard.is_none_or(|s| s.contains(&i.key)));
    // Before the work folder is made: a package of an item would land inside an item.
    for item in &share {
        crate::layout::refuse_output_in_input(&item.source, &opts.out)?;
    }
    let work = opts.out.join(WORK_DIR);
    std::fs::create_dir_all(&work)
        .map_err(|source| BatchError::Io { path: work.clone(), source })?;
    // Held until the run returns; the kernel lets go if the process dies.
    let _lock: JournalLock = lock_journal(&opts.journal, opts.shard)?;
    let schemas = opts.package.schemas.clone();
    let validate = crate::mets::ValidateOptions { schemas, profile: None };
    let delivery = Delivery::open(&opts.deliver, validate, opts.package.deterministic)?;
    let journal = open_journal(&opts.journal, &share)?;
    let mut outcome = BatchOutcome {
        manifest_items,
        items: share.len(),
        ignored: m.ignored,
        in_flight: opts.resources.in_flight(opts.jobs),
        memory: opts.resources.memory,
        min_free: opts.resources.min_free,
        ..BatchOutcome::default()
    };
    let todo = triage(&share, opts, &delivery, &journal, &mut outcome)?;
    let journal = Mutex::new(journal);
    // One scan engine for every item: clamd's sessions and the threads waiting on it are the
    // run's, not each item's.
    let mut opts = opts.clone();
    opts.package.virus_check = opts.package.virus_check.shared()?;
    let todo: Vec<Todo> =
        todo.into_iter().map(|item| Todo { item, bytes: source_bytes(&item.source) }).collect();
    let bytes = todo.iter().map(|t| t.bytes).sum();
    progress(Event::Planned { items: todo.len(), bytes, in_flight: outcome.in_flight });
    let done = run_items(&todo, &opts, outcome.in_flight, &delivery, &journal, progress)?;
    (outcome.packaged, outcome.failed, outcome.bytes) = (done.packaged, done.failed, done.bytes);
    if let crate::package::VirusCheck::Shared(engine) = &opts.package.virus_check {
        outcome.scan_engine_packages = Some(engine.packages());
    }
    let journal = journal.into_inner().unwrap_or_else(|p| p.into_inner());
    journal.commit()?;
    tally_share(share, &journal, &mut outcome)?;
    outcome.elapsed_seconds = started.elapsed().as_secs_f64();
    Ok(outcome)
}

/// The journal at `path`, with every item of `share` registered (rows under a former key
/// adopted first).
fn open_journal(path: &Path, share: &[Item]) -> Result<Journal, BatchError> {
    let mut journal = Journal::open(path)?;
    journal.adopt(share.iter().filter_map(|i| Some((i.former_key.as_deref()?, i.key.as_str()))))?;
    let rows = share
        .iter()
        .map(|i| (i.key.as_str(), i.line, crate::sources::path_text(&i.source), i.name.as_str()));
    journal.register(rows)?;
    Ok(journal)
}

/// The items of `share` this run works on, by what the journal records of each: done ones
/// are skipped (moved into place when an earlier run did not), and failed ones unless
/// retried; the skips are counted in `outcome`.
fn triage<'a>(
    share: &'a [Item],
    opts: &BatchOptions,
    delivery: &Delivery,
    journal: &Journal,
    outcome: &mut BatchOutcome,
) -> Result<Vec<&'a Item>, BatchError> {
    let work = opts.out.join(WORK_DIR);
    let mut todo = Vec::new();
    for item in share {
        let entry = journal.entry(&item.key)?;
        match entry {
            // Where the journal says it put the package: a name derived from a manifest of
            // other items may have been another.
            Some(e) if e.state == ItemState::Done => {
                if delivery.keep() && move_into_place(&opts.out, &e.package)? {
                    outcome.moved_into_place += 1;
                }
                match delivery.unfinished(&e) {
                    true => todo.push(item),
                    false => outcome.skipped_done += 1,
                }
                delivery.tidy(&e, &work);
            }
            // A failure of the environment (a full disk) says nothing of the item: retried.
            Some(e)
                if e.state == ItemState::Failed
                    && !opts.retry_failed
                    && !failed_by_environment(Some(&e)) =>
            {
                outcome.skipped_failed += 1
            }
            _ => todo.push(item),
        }
    }
    Ok(todo)
}

/// Counts the items of the share the journal records stored and exported, and puts every
/// one's row in `outcome`. Each item is let go as its row is read: the share is not held
/// twice over.
fn tally_share(
    share: Vec<Item>,
    journal: &Journal,
    outcome: &mut BatchOutcome,
) -> Result<(), BatchError> {
    for item in share {
        if let Some(e) = journal.entry(&item.key)? {
            let done = e.state == ItemState::Done;
            outcome.stored += usize::from(done && e.stored.is_some());
            outcome.exported_wacz += usize::from(done && e.wacz.is_some());
            outcome.exported_eark += usize::from(done && e.eark.is_some());
            outcome.entries.push(e);
        }
    }
    Ok(())
}

/// Whether a row records a failure of the environment, not of its item.
fn failed_by_environment(entry: Option<&Entry>) -> bool {
    entry.and_then(|e| e.error_kind.as_deref()) == Some(item::ENVIRONMENT_KIND)
}

/// A package recorded done but still in the work folder (its run died between the journal
/// and the move) moved to `OUT/NAME`; true when it was.
fn move_into_place(out: &Path, name: &str) -> Result<bool, BatchError> {
    let built = out.join(WORK_DIR).join(name);
    let target = out.join(name);
    if std::fs::symlink_metadata(&target).is_ok() || std::fs::symlink_metadata(&built).is_err() {
        return Ok(false);
    }
    std::fs::rename(&built, &target).map_err(|source| BatchError::Io { path: built, source })?;
    Ok(true)
}

/// An item this run packages, with its source's bytes.
#[derive(Clone, Copy)]
struct Todo<'a> {
    item: &'a Item,
    bytes: u64,
}

/// What the workers of a run did.
#[derive(Debug, Default, PartialEq, Eq)]
struct Finished {
    packaged: usize,
    failed: usize,
    /// Bytes of the sources of the items packaged or failed.
    bytes: u64,
}

/// What the workers of a run share: the items and a cursor over them, the run's context, and
/// their counts and first error.
struct Workers<'a> {
    todo: &'a [Todo<'a>],
    opts: &'a BatchOptions,
    delivery: &'a Delivery,
    journal: &'a Mutex<Journal>,
    pool: rayon::ThreadPool,
    space: SpaceGuard<'a>,
    progress: Progress<'a>,
    next: AtomicUsize,
    stop: AtomicBool,
    packaged: AtomicUsize,
    failed: AtomicUsize,
    bytes: AtomicU64,
    first_error: Mutex<Option<BatchError>>,
}

impl Workers<'_> {
    /// One worker: takes the next item until none is left or the run stops.
    fn work(&self) {
        while !self.stop.load(Ordering::SeqCst) {
            let Some(&todo) = self.todo.get(self.next.fetch_add(1, Ordering::SeqCst)) else {
                break;
            };
            match self.run_when_space(todo.item) {
                Ok(None) => break,
                Ok(Some(state)) => self.finished(todo, state),
                Err(e) => self.fail(e),
            }
        }
    }

    /// Runs the item once the output has its free space; `None` when the run stopped first.
    fn run_when_space(&self, item: &Item) -> Result<Option<ItemState>, BatchError> {
        self.space.wait(&self.stop, self.progress)?;
        if self.stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let run = ItemRun { item, opts: self.opts, delivery: self.delivery, journal: self.journal };
        run.run(&self.pool).map(Some)
    }

    fn finished(&self, todo: Todo, state: ItemState) {
        let count = if state == ItemState::Done { &self.packaged } else { &self.failed };
        count.fetch_add(1, Ordering::SeqCst);
        self.bytes.fetch_add(todo.bytes, Ordering::SeqCst);
        (self.progress)(Event::Finished { item: todo.item, state, bytes: todo.bytes });
    }

    /// Stops every worker after its item, keeping the first error.
    fn fail(&self, e: BatchError) {
        self.stop.store(true, Ordering::SeqCst);
        self.first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    }

    /// Commits grouped journal changes in time even while every worker is busy, until every
    /// worker has dropped its end of `idle`.
    fn commit_in_time(&self, idle: std::sync::mpsc::Receiver<()>) {
        let tick = journal::COMMIT_AFTER / 4;
        while idle.recv_timeout(tick) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = j.commit_if_due() {
                self.fail(e.into());
            }
        }
    }

    fn finish(self) -> Result<Finished, BatchError> {
        match self.first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(Finished {
                packaged: self.packaged.into_inner(),
                failed: self.failed.into_inner(),
                bytes: self.bytes.into_inner(),
            }),
        }
    }
}

/// Packages `todo` on `in_flight` workers sharing `opts.jobs` threads, each item started only
/// when the output has its free space. The first journal error stops every worker after its
/// item.
fn run_items(
    todo: &[Todo],
    opts: &BatchOptions,
    in_flight: usize,
    delivery: &Delivery,
    journal: &Mutex<Journal>,
    progress: Progress<'_>,
) -> Result<Finished, BatchError> {
    let workers = Workers {
        todo,
        opts,
        delivery,
        journal,
        pool: rayon::ThreadPoolBuilder::new().num_threads(opts.jobs.max(1)).build()?,
        space: SpaceGuard::new(&opts.out, opts.resources.min_free),
        progress,
        next: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        packaged: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
        bytes: AtomicU64::new(0),
        first_error: Mutex::new(None),
    };
    let (working, idle) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        for _ in 0..in_flight.max(1).min(todo.len()) {
            let (working, workers) = (working.clone(), &workers);
            // Taken by value: the ticker below ends when every worker has dropped its sender.
            scope.spawn(move || {
                let _working = working;
                workers.work();
            });
        }
        drop(working);
        scope.spawn(|| workers.commit_in_time(idle));
    });
    workers.finish()
}

/// One item's run, with what it is recorded in.
struct ItemRun<'a> {
    item: &'a Item,
    opts: &'a BatchOptions,
    delivery: &'a Delivery,
    journal: &'a Mutex<Journal>,
}

impl ItemRun<'_> {
    fn record(&self, f: &dyn Fn(&Journal) -> Result<(), JournalError>) -> Result<(), BatchError> {
        let j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        Ok(f(&j)?)
    }

    /// Records the item failed, of `kind`, for `message`.
    fn fail(&self, kind: &str, message: &str) -> Result<ItemState, BatchError> {
        self.record(&|j| j.failed(&self.item.key, kind, message))?;
        Ok(ItemState::Failed)
    }

    /// Runs the item from scratch (or, its package recorded and its put unfinished, from the
    /// put) and records its outcome; returns its state (done or failed).
    fn run(&self, pool: &rayon::ThreadPool) -> Result<ItemState, BatchError> {
        let (item, opts, delivery) = (self.item, self.opts, self.delivery);
        if let Some(refusal) = &item.refused {
            return self.fail(refusal.kind(), &refusal.to_string());
        }
        let work = opts.out.join(WORK_DIR);
        let recorded = self.journal.lock().unwrap_or_else(|p| p.into_inner()).entry(&item.key)?;
        if let Some(e) = recorded.filter(|e| delivery.unfinished(e)) {
            let at = delivery.location(&opts.out, &work, &e.package);
            if delivery.recorded_package(&e, &at) {
                return Ok(delivery.finish(&item.key, &at, self.journal)?);
            }
        }
        if let Some(why) = self.clear_earlier_attempt(&work)? {
            return self.fail("exists", &why);
        }
        self.record(&|j| j.start(&item.key, &item.name))?;
        let done = match self.package(&work, pool)? {
            Ok(done) => done,
            Err(failure) => return self.fail(&failure.kind, &failure.message),
        };
        self.record(&|j| j.done(&item.key, &done))?;
        if delivery.keep() {
            move_into_place(&opts.out, &item.name)?;
        }
        let at = delivery.location(&opts.out, &work, &item.name);
        Ok(delivery.finish(&item.key, &at, self.journal)?)
    }

    /// Removes what an earlier attempt left in the work folder (a package built but not
    /// recorded done is redone); `Some(why)` when a package this journal does not record done
    /// is where this one would go.
    fn clear_earlier_attempt(&self, work: &Path) -> Result<Option<String>, BatchError> {
        let built = work.join(&self.item.name);
        let target = self.opts.out.join(&self.item.name);
        if std::fs::symlink_metadata(&built).is_ok() {
            std::fs::remove_dir_all(&built)
                .map_err(|source| BatchError::Io { path: built.clone(), source })?;
        }
        if self.delivery.keep() && std::fs::symlink_metadata(&target).is_ok() {
            let target = crate::sources::path_text(&target);
            return Ok(Some(format!("{target}: exists, and this journal does not record it done")));
        }
        Ok(None)
    }

    /// Packages the item in the work folder (and makes it an AIP with `--ingest`); what the
    /// journal records of it done, or why it failed.
    fn package(
        &self,
        work: &Path,
        pool: &rayon::ThreadPool,
    ) -> Result<Result<DoneRecord, ItemFailure>, BatchError> {
        let item = self.item;
        let mut popts = match with_item_options(&self.opts.package, &item.options) {
            Ok(o) => o,
            Err(e) => return Ok(Err(ItemFailure::new("options", &e))),
        };
        let built = work.join(&item.name);
        popts.out = built.clone();
        popts.force = false;
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| package_source(&item.source, item.metadata.as_deref(), &popts, work))
        }));
        let report = match made {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Ok(Err(ItemFailure::new(e.kind(), &e))),
            Err(_) => {
                let why = "the packaging of this item panicked (a bug in webaip)";
                return Ok(Err(ItemFailure::new("panic", &why)));
            }
        };
        let (package_id, size) = match self.delivery.ingest(&built, work, pool) {
            Ok(aip) => aip.unwrap_or((report.objid.clone(), report.bytes)),
            Err(e) => {
                return Ok(Err(ItemFailure::new(item::failure_kind(deliver::INGEST_KIND, &e), &e)));
            }
        };
        let mets = built.join(crate::layout::METS);
        let (_, mets_sha512) = match crate::package::hash_file(&mets) {
            Ok(h) => h,
            Err(e) => return Ok(Err(ItemFailure::new(item::failure_kind("unreadable", &e), &e))),
        };
        Ok(Ok(DoneRecord { package_id, size, mets_sha512, findings: report.has_findings() }))
    }
}

/// Why an item failed, as the journal records it.
struct ItemFailure {
    kind: String,
    message: String,
}

impl ItemFailure {
    fn new(kind: &str, message: &dyn std::fmt::Display) -> ItemFailure {
        ItemFailure { kind: kind.to_string(), message: message.to_string() }
    }
}

/// Counts by state.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    /// Items.
    pub items: usize,
    /// Pending.
    pub pending: usize,
    /// Running (or their run died).
    pub running: usize,
    /// Done.
    pub done: usize,
    /// Done, with findings in their package report.
    pub done_with_findings: usize,
    /// Done, and put into the replicated store (`--store`).
    pub stored: usize,
    /// Failed.
    pub failed: usize,
}

impl Counts {
    /// Counts one row.
    pub(crate) fn add(&mut self, e: &Entry) {
        self.items += 1;
        match e.state {
            ItemState::Pending => self.pending += 1,
            ItemState::Running => self.running += 1,
            ItemState::Done => self.done += 1,
            ItemState::Failed => self.failed += 1,
        }
        self.done_with_findings += usize::from(e.state == ItemState::Done && e.findings);
        self.stored += usize::from(e.state == ItemState::Done && e.stored.is_some());
    }
}

/// One journal's counts.
#[derive(Debug, Clone, Serialize)]
pub struct JournalCounts {
    /// The journal file.
    pub journal: String,
    /// Its rows, by state.
    #[serde(flatten)]
    pub counts: Counts,
}

/// What one or several journals say.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// Each journal's counts.
    pub journals: Vec<JournalCounts>,
    /// Every item once: an item in several journals counts as done when one has it done (and
    /// stored when one has it stored), else as its most recently changed row says.
    pub total: Counts,
    /// The failed items (as the total counts them), by key.
    pub failures: Vec<Entry>,
}

/// Whether row `new` of an item says more of it than `old`, a row of the same key in another
/// journal: done over not done, stored over not stored, else the most recently changed.
pub(crate) fn supersedes(new: &Entry, old: &Entry) -> bool {
    match old.state {
        ItemState::Done => {
            old.stored.is_none() && new.state == ItemState::Done && new.stored.is_some()
        }
        _ => new.state == ItemState::Done || new.updated > old.updated,
    }
}

/// Summarises journals.
pub fn status(journals: &[PathBuf]) -> Result<Status, JournalError> {
    let mut per = Vec::new();
    let mut merged: BTreeMap<String, Entry> = BTreeMap::new();
    for path in journals {
        let entries = Journal::open_existing(path)?.entries()?;
        let mut counts = Counts::default();
        for e in entries {
            counts.add(&e);
            if merged.get(&e.key).is_none_or(|old| supersedes(&e, old)) {
                merged.insert(e.key.clone(), e);
            }
        }
        per.push(JournalCounts { journal: crate::sources::path_text(path), counts });
    }
    let mut total = Counts::default();
    merged.values().for_each(|e| total.add(e));
    let failures = merged.into_values().filter(|e| e.state == ItemState::Failed).collect();
    Ok(Status { journals: per, total, failures })
}
