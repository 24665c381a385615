//! `webaip report` of a collection: many packages (folders given, the packages a batch
//! journal records, the packages a store's state database records) as one page, one row a
//! package, with totals and charts over the whole, the batch items that failed and the
//! packages whose last check is oldest.
//!
//! A row comes from the package's METS (and what the journal or the state database records of
//! it), never from its containers. Memory is bounded whatever the collection's size: packages
//! are read a chunk at a time ([`CHUNK`], in parallel), each row is written out as it is made
//! (the page's table to a temporary file, the JSON to its writer), and only bounded tallies,
//! the first failures and the oldest checks are kept ([`inputs`], [`tally`], [`page`]).

mod inputs;
mod page;
mod row;
mod seen;
mod stored;
mod tally;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use row::{BatchState, Check, KeptAt, PackageRow, RowOrigin, Verdict};
pub use seen::NamedAgain;
pub use tally::{
    BatchFacts, CollectionTotals, FailedItem, OldestCheck, SizeClassCount, StoreFacts, YearCount,
};

/// Packages read at once (in parallel); their rows are written in order before the next.
pub(crate) const CHUNK: usize = 64;
/// Rows the page lists at most (the JSON lists every row); the rest are counted.
pub const PAGE_ROWS: u64 = 5000;

/// Where a collection's packages are found.
#[derive(Debug, Clone)]
pub enum CollectionInput {
    /// A package: a folder holding `METS.xml`, or its METS.
    Package(PathBuf),
    /// A batch journal (SQLite) and the folder its packages are in (a row's package is a
    /// folder name below it).
    Journal {
        /// The journal.
        path: PathBuf,
        /// The folder of its packages.
        packages: PathBuf,
    },
    /// A store's configuration: the packages its state database records, each METS fetched
    /// (and verified) from a replica.
    Store(PathBuf),
}

impl CollectionInput {
    /// A command-line argument as an input: a file that starts as an SQLite database is a
    /// journal (its packages in its folder), anything else a package.
    pub fn of_argument(path: &Path) -> CollectionInput {
        if is_sqlite(path) {
            let folder = crate::report::page_folder(path).to_path_buf();
            CollectionInput::Journal { path: path.to_path_buf(), packages: folder }
        } else {
            CollectionInput::Package(path.to_path_buf())
        }
    }
}

/// Whether `path` is a regular file (not a link) that starts with SQLite's header.
fn is_sqlite(path: &Path) -> bool {
    let Ok(file) = crate::layout::open_regular(path) else { return false };
    let mut head = [0u8; 16];
    io::Read::read_exact(&mut &file, &mut head).is_ok() && &head == b"SQLite format 3\0"
}

/// Why a collection report cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum CollectionError {
    /// A journal cannot be opened or read.
    #[error(transparent)]
    Journal(#[from] crate::batch::journal::JournalError),
    /// The store's configuration or state database cannot be opened or read.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The page cannot be written, or would replace what the report reads.
    #[error(transparent)]
    Page(#[from] super::ReportError),
    /// The JSON or the page's rows cannot be written.
    #[error("{what}: {}", crate::layout::describe_io(source))]
    Write {
        /// What was being written.
        what: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// A collection report's facts besides its rows: what the page shows above and below the
/// table.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CollectionSummary {
    /// The inputs, as given.
    pub inputs: Vec<String>,
    /// Totals and distributions over every row.
    pub totals: CollectionTotals,
    /// What the journals record, when journals were given.
    pub batch: Option<BatchFacts>,
    /// What the state database records, with `--store`.
    pub store: Option<StoreFacts>,
    /// Rows the page lists.
    pub rows_listed: u64,
    /// Rows past [`PAGE_ROWS`], in the JSON and not on the page.
    pub rows_not_listed: u64,
    /// Packages and journals named more than once: read and counted once.
    pub named_again: NamedAgain,
}

impl CollectionSummary {
    /// Whether something wants a look: a package not read or whose METS is invalid, a total
    /// that could not be summed, a batch item failed or not finished, a copy missing or
    /// corrupt, a store check that found problems.
    pub fn has_findings(&self) -> bool {
        let t = &self.totals;
        let batch = self.batch.as_ref().is_some_and(|b| {
            b.counts.failed + b.counts.pending + b.counts.running > 0 || b.bad_rows > 0
        });
        let store = self.store.as_ref().is_some_and(|s| {
            s.copies_missing + s.copies_corrupt + s.mets_rejected + s.checks_found_problems > 0
        });
        t.not_read > 0 || t.mets_invalid > 0 || !t.sums_capped.is_empty() || batch || store
    }
}

/// How a collection is read.
#[derive(Debug, Clone, Copy, Default)]
pub struct CollectionOptions {
    /// Validate each package's METS (schemas and profile, as `webaip validate`): about 20 ms
    /// a package, one at a time; without it a row says only that the METS was read to its
    /// end (well-formed), and `mets_valid` is `None`.
    pub validate: bool,
}

/// Where the report goes: a page, a JSON writer, or both.
pub struct CollectionOutput<'a> {
    /// The page's path (written under a temporary name and renamed once complete).
    pub page: Option<&'a Path>,
    /// The JSON's writer: `{"packages": [row, ...], ...summary}`, rows as they are made.
    pub json: Option<&'a mut dyn Write>,
}

/// Refuses a page path that would replace an input (a package, a journal, the store's
/// configuration) or that is not a regular file.
pub fn refuse_collection_output(
    inputs: &[CollectionInput],
    out: &Path,
) -> Result<(), super::ReportError> {
    for input in inputs {
        for path in files_written_to_refuse(input) {
            crate::layout::refuse_output_in_input(&path, out)?;
        }
        if let CollectionInput::Journal { packages, .. } = input {
            refuse_output_in_a_package(packages, out)?;
        }
        if let Some(db) = database_of(input) {
            crate::layout::refuse_output_beside_database(&db, out)?;
        }
    }
    super::refuse_non_regular(out)
}

/// What the page must never replace for `input`: the input itself and, for a journal or a
/// store, the files beside it that SQLite keeps (`-wal`, `-shm`); for a store also its state
/// database and every file system replica's root and work folder. A store whose
/// configuration cannot be read here is refused later, by the report itself.
fn files_written_to_refuse(input: &CollectionInput) -> Vec<PathBuf> {
    let with_sqlite_files = |db: &Path| {
        let mut paths = vec![db.to_path_buf()];
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            paths.push(PathBuf::from(name));
        }
        paths
    };
    match input {
        CollectionInput::Package(p) => vec![p.clone()],
        CollectionInput::Journal { path, .. } => with_sqlite_files(path),
        CollectionInput::Store(config) => {
            let mut paths = vec![config.clone()];
            let Ok(c) = crate::store::config::StoreConfig::load(config) else { return paths };
            paths.extend(with_sqlite_files(&c.state));
            let base = config.parent().unwrap_or(Path::new("."));
            for r in &c.replicas {
                if let crate::store::config::ReplicaKind::Fs { root, work } = &r.kind {
                    let root = base.join(root);
                    let mut default_work = root.as_os_str().to_owned();
                    default_work.push(".webaip-work");
                    paths.push(work.as_ref().map_or(PathBuf::from(default_work), |w| base.join(w)));
                    paths.push(root);
                }
            }
            paths
        }
    }
}

/// The SQLite database a journal or store input keeps its records in (a store whose
/// configuration cannot be read here is refused later, by the report itself).
fn database_of(input: &CollectionInput) -> Option<PathBuf> {
    match input {
        CollectionInput::Package(_) => None,
        CollectionInput::Journal { path, .. } => Some(path.clone()),
        CollectionInput::Store(config) => {
            crate::store::config::StoreConfig::load(config).ok().map(|c| c.state)
        }
    }
}

/// Refuses `out` inside a folder below `packages` (a journal's packages are folders there):
/// the page may sit beside them, never in one.
fn refuse_output_in_a_package(packages: &Path, out: &Path) -> Result<(), super::ReportError> {
    let (Ok(real_packages), Ok(real_out)) = (
        std::fs::canonicalize(packages),
        std::path::absolute(out).map(|o| {
            let parent = o.parent().and_then(|p| std::fs::canonicalize(p).ok());
            parent.map(|p| p.join(o.file_name().unwrap_or_default()))
        }),
    ) else {
        return Ok(());
    };
    let Some(real_out) = real_out else { return Ok(()) };
    let in_a_package = real_out.starts_with(&real_packages)
        && real_out.parent().is_some_and(|p| p != real_packages);
    if in_a_package {
        let (out, input) = (out.to_path_buf(), packages.to_path_buf());
        return Err(crate::layout::NestingError::OutInsideInput { out, input }.into());
    }
    Ok(())
}

/// Makes the report of the collection `inputs` name, writing it to `output`; `progress` is
/// told each row made.
pub fn report_collection(
    inputs: &[CollectionInput],
    options: CollectionOptions,
    output: CollectionOutput<'_>,
    progress: &dyn Fn(&PackageRow),
) -> Result<CollectionSummary, CollectionError> {
    if let Some(out) = output.page {
        refuse_collection_output(inputs, out)?;
    }
    let rows_file =
        match output.page {
            Some(p) => Some(tempfile::tempfile_in(super::page_folder(p)).map_err(|source| {
                CollectionError::Write { what: p.display().to_string(), source }
            })?),
            None => None,
        };
    let mut sink = page::RowSink::new(rows_file, output.json)?;
    let mut summary =
        CollectionSummary { inputs: inputs.iter().map(input_text).collect(), ..Default::default() };
    inputs::read_all(inputs, options.validate, &mut summary, &mut |row, summary| {
        progress(&row);
        sink.add(row, summary)
    })?;
    summary.rows_listed = summary.totals.packages.min(PAGE_ROWS);
    summary.rows_not_listed = summary.totals.packages - summary.rows_listed;
    let rows = sink.finish(&summary)?;
    if let (Some(path), Some(mut rows)) = (output.page, rows) {
        super::write_page(path, &mut |out| page::write_page(&summary, &mut rows, out))?;
    }
    Ok(summary)
}

fn input_text(input: &CollectionInput) -> String {
    match input {
        CollectionInput::Package(p) => crate::sources::path_text(p),
        CollectionInput::Journal { path, .. } => {
            format!("journal {}", crate::sources::path_text(path))
        }
        CollectionInput::Store(p) => format!("store {}", crate::sources::path_text(p)),
    }
}
