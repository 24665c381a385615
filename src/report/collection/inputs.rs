//! The collection's packages, from the folders given, the journals' rows and the state
//! database's packages, read a chunk at a time: up to [`CHUNK`] packages are read in
//! parallel, then their rows handed on in order before the next chunk is taken.

use std::path::Path;

use rayon::prelude::*;

use super::row::{BatchState, PackageRow, RowOrigin};
use super::seen::{Identity, Seen};
use super::stored::{StoreRead, Stored};
use super::tally::{FailedItem, OwnCopies};
use super::{CHUNK, CollectionError, CollectionInput, CollectionSummary};
use crate::batch::journal::{BadRow, Entry, ItemState, Journal};

/// What is done with each row made, in order.
pub(crate) type Emit<'a> =
    dyn FnMut(PackageRow, &mut CollectionSummary) -> Result<(), CollectionError> + 'a;

/// A package to read.
enum Job {
    /// A folder (or METS) on disk, with what a journal records of it.
    Folder { shown: String, path: std::path::PathBuf, origin: RowOrigin, batch: Option<BatchState> },
    /// A package of the store: its METS is fetched from a replica first.
    Stored(Box<Stored>),
    /// A row already made (a package that cannot be read).
    Ready(Box<PackageRow>),
}

/// The packages waiting to be read, and where their rows go.
struct Chunk<'e, 'a> {
    jobs: Vec<Job>,
    emit: &'e mut Emit<'a>,
    /// Validate each METS.
    validate: bool,
    /// The packages and journals taken already.
    seen: Seen,
}

impl Chunk<'_, '_> {
    /// Queues a job; reads the chunk once it is full.
    fn push(
        &mut self,
        job: Job,
        store: Option<&StoreRead>,
        summary: &mut CollectionSummary,
    ) -> Result<(), CollectionError> {
        self.jobs.push(job);
        if self.jobs.len() >= CHUNK { self.flush(store, summary) } else { Ok(()) }
    }

    /// Reads the packages queued (in parallel) and hands their rows on in order.
    fn flush(
        &mut self,
        store: Option<&StoreRead>,
        summary: &mut CollectionSummary,
    ) -> Result<(), CollectionError> {
        let jobs = std::mem::take(&mut self.jobs);
        let validate = self.validate;
        let rows: Vec<PackageRow> =
            jobs.into_par_iter().map(|job| read(job, store, validate)).collect();
        for row in rows {
            summary.totals.add(&row);
            if let Some(st) = &mut summary.store {
                st.mets_rejected += row.mets_rejected.len() as u64;
            }
            (self.emit)(row, summary)?;
        }
        Ok(())
    }
}

/// Reads every input, handing each row to `emit` as it is made.
pub(crate) fn read_all(
    inputs: &[CollectionInput],
    validate: bool,
    summary: &mut CollectionSummary,
    emit: &mut Emit<'_>,
) -> Result<(), CollectionError> {
    let mut chunk = Chunk { jobs: Vec::new(), emit, validate, seen: Seen::default() };
    let journals = inputs.iter().filter(|i| matches!(i, CollectionInput::Journal { .. })).count();
    if journals > 1 {
        // An item may be in several: counted once, as `batch status` counts it.
        summary.batch.get_or_insert_with(Default::default).merge_items();
    }
    for input in inputs {
        match input {
            CollectionInput::Package(path) => {
                let shown = crate::sources::path_text(path);
                let again = &mut summary.named_again;
                if !chunk.seen.first(Identity::of_package(path), &shown, false, again) {
                    continue;
                }
                let job = Job::Folder {
                    shown,
                    path: path.clone(),
                    origin: RowOrigin::Folder,
                    batch: None,
                };
                chunk.push(job, None, summary)?;
            }
            CollectionInput::Journal { path, packages } => {
                let shown = format!("journal {}", crate::sources::path_text(path));
                let again = &mut summary.named_again;
                if chunk.seen.first(Identity::of_path(path), &shown, true, again) {
                    journal(path, packages, &mut chunk, summary)?;
                }
            }
            CollectionInput::Store(config) => {
                chunk.flush(None, summary)?;
                store(config, &mut chunk, summary)?;
            }
        }
    }
    chunk.flush(None, summary)?;
    summary.totals.finish();
    if let Some(b) = &mut summary.batch {
        b.finish();
    }
    if let Some(s) = &mut summary.store {
        s.finish();
    }
    Ok(())
}

fn read(job: Job, store: Option<&StoreRead>, validate: bool) -> PackageRow {
    match job {
        Job::Ready(row) => *row,
        Job::Folder { shown, path, origin, batch } => {
            let mut row = PackageRow::of_package(shown, &path, origin, validate);
            row.batch = batch;
            row
        }
        Job::Stored(p) => match store {
            Some(s) => s.row(*p, validate),
            None => {
                PackageRow::not_read(p.package.identifier, RowOrigin::Store, "no store open".into())
            }
        },
    }
}

/// The rows of a journal: each done item's package in `packages`; failed items and rows that
/// cannot be taken are listed with their reasons.
fn journal(
    path: &Path,
    packages: &Path,
    chunk: &mut Chunk<'_, '_>,
    summary: &mut CollectionSummary,
) -> Result<(), CollectionError> {
    let journal = Journal::open_to_read(path)?;
    let shown = crate::sources::path_text(path);
    let mut failed = None;
    journal.each_row(&mut |row| {
        if failed.is_some() {
            return;
        }
        let job = journal_row(row, &shown, packages, &mut chunk.seen, summary);
        if let Some(job) = job
            && let Err(e) = chunk.push(job, None, summary)
        {
            failed = Some(e);
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// Counts a journal row; a done item's package is a job.
fn journal_row(
    row: Result<Entry, BadRow>,
    journal: &str,
    packages: &Path,
    seen: &mut Seen,
    summary: &mut CollectionSummary,
) -> Option<Job> {
    let batch = summary.batch.get_or_insert_with(Default::default);
    let e = match row {
        Ok(e) => e,
        Err(bad) => {
            batch.bad_rows += 1;
            batch.failed(FailedItem {
                journal: journal.to_string(),
                key: bad.key,
                source: String::new(),
                kind: super::tally::UNREADABLE_ROW.into(),
                reason: bad.reason,
                updated: String::new(),
            });
            return None;
        }
    };
    batch.count(&e);
    match e.state {
        ItemState::Done => done_job(e, packages, batch, seen, &mut summary.named_again),
        ItemState::Failed => {
            batch.failed(FailedItem {
                journal: journal.to_string(),
                key: e.key,
                source: e.source,
                kind: e.error_kind.unwrap_or_default(),
                reason: e.error.unwrap_or_default(),
                updated: e.updated,
            });
            None
        }
        ItemState::Pending | ItemState::Running => None,
    }
}

/// A done item's package in `packages` (a folder, not a link), else a row saying where it is
/// not; `None` when the package was taken already.
fn done_job(
    e: Entry,
    packages: &Path,
    batch: &mut super::BatchFacts,
    seen: &mut Seen,
    again: &mut super::NamedAgain,
) -> Option<Job> {
    let path = packages.join(&e.package);
    let shown = crate::sources::path_text(&path);
    let state = BatchState { key: e.key.clone(), stored: e.stored.clone(), attempts: e.attempts };
    let found = std::fs::symlink_metadata(&path);
    let id = found.as_ref().map_or_else(|_| Identity::of_path(&path), Identity::of_metadata);
    if !seen.first(id, &shown, false, again) {
        return None;
    }
    let missing = match found {
        Ok(m) if m.is_dir() => None,
        Ok(m) => Some(format!("{} is {}, not a package folder", shown, crate::layout::kind_of(&m))),
        Err(err) => {
            batch.done_not_in_folder += 1;
            let stored = if e.stored.is_some() { " (the journal records it stored)" } else { "" };
            Some(format!(
                "the package is not in {}: {}{stored}",
                crate::sources::path_text(packages),
                crate::layout::describe_io(&err)
            ))
        }
    };
    Some(match missing {
        None => Job::Folder { shown, path, origin: RowOrigin::Journal, batch: Some(state) },
        Some(why) => {
            let mut row = PackageRow::not_read(shown, RowOrigin::Journal, why);
            row.objid = e.package_id.unwrap_or_default();
            row.batch = Some(state);
            Job::Ready(Box::new(row))
        }
    })
}

/// The rows of the packages a store records or holds.
fn store(
    config_path: &Path,
    chunk: &mut Chunk<'_, '_>,
    summary: &mut CollectionSummary,
) -> Result<(), CollectionError> {
    let (read, reader) = StoreRead::open(config_path)?;
    let facts = summary.store.get_or_insert_with(Default::default);
    facts.config = crate::sources::path_text(config_path);
    facts.layout = read.layout();
    let mut failed = None;
    read.each(&reader, &mut |s| {
        if failed.is_some() {
            return;
        }
        let own = s.own_copies().then(|| OwnCopies { check_problems: s.check_problems() });
        summary.store.get_or_insert_with(Default::default).add(&s.package, own);
        if let Err(e) = chunk.push(Job::Stored(Box::new(s)), Some(&read), summary) {
            failed = Some(e);
        }
    })?;
    failed.map_or(Ok(()), Err)?;
    chunk.flush(Some(&read), summary)
}
