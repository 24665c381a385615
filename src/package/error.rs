//! Why a package could not be made.

use std::io;
use std::path::PathBuf;

/// Why an ARC could not be migrated into a package.
#[derive(Debug, thiserror::Error)]
pub enum MigrationFailure {
    /// The migration stopped with an error.
    #[error(transparent)]
    Failed(crate::migrate::MigrateError),
    /// It ran to its end, but the payload was not conserved (the migration report says where).
    #[error("payload not conserved")]
    NotConserved,
}

/// Why a package could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackageError {
    /// The package exists and `force` was not given.
    #[error("{0}: already exists (use --force to replace it)")]
    Exists(PathBuf),
    /// A file could not be read or written.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A name from the source or the package cannot be used: a link, FIFO or device where a
    /// file is expected, a path leaving its root, one too long.
    #[error(transparent)]
    Confined(#[from] crate::layout::ConfineError),
    /// Described webpages or associated objects could not be placed on captures.
    #[error(transparent)]
    Entities(#[from] crate::model::EntitiesError),
    /// The curator's metadata cannot be used.
    #[error(transparent)]
    Metadata(#[from] crate::metadata::MetadataError),
    /// An infected record shares its gzip member with other records: it cannot be moved to
    /// `viral/` byte-exact on its own, and the profile allows no infected bytestream in
    /// content.
    #[error(
        "{input}: record {record_id} (in the gzip member at offset {offset}) is infected ({signature}), \
         and the member holds other records too, so it cannot be quarantined on its own; \
         recompress the WARC with one gzip member per record (e.g. `warcio recompress`) and package it again"
    )]
    InfectedInSharedMember {
        /// The WARC.
        input: PathBuf,
        /// The infected record.
        record_id: String,
        /// The offset of its gzip member.
        offset: u64,
        /// What clamd found.
        signature: String,
    },
    /// clamd failed: unreachable, gone, or silent past the timeout.
    #[error(transparent)]
    Scan(#[from] crate::stages::scan::ScanError),
    /// PRONOM identification cannot run (its built-in signature file does not load).
    #[error(transparent)]
    Identify(#[from] crate::stages::identify::IdentifyError),
    /// clamd failed on one payload streamed to it alone.
    #[error("{origin}: virus scan: {source}")]
    ScanOf {
        /// Where the payload came from: its file, or the record's id.
        origin: String,
        /// What clamd did.
        #[source]
        source: crate::stages::scan::ScanError,
    },
    /// clamd failed while a WARC was being copied.
    #[error(
        "{}: {}virus scan: {source}",
        input.display(),
        record.as_ref().map(|r| format!("record {r}: ")).unwrap_or_default()
    )]
    WarcScan {
        /// The WARC.
        input: PathBuf,
        /// The record whose payload was being scanned, when it was streamed alone.
        record: Option<String>,
        /// What clamd did.
        #[source]
        source: crate::stages::scan::ScanError,
    },
    /// A capture source could not be read.
    #[error(transparent)]
    Capture(#[from] crate::sources::capture::CaptureError),
    /// The seed of a `--deterministic` run could not be sorted.
    #[error(
        "the seed of a --deterministic run (a temporary database in TMPDIR or SQLITE_TMPDIR): \
         {0}"
    )]
    Seed(#[source] rusqlite::Error),
    /// A digest table could not be searched while deduplicating (`--dedup-against`).
    #[error("{origin}: deduplication: {source}")]
    Dedup {
        /// The record or file whose payload was looked up.
        origin: String,
        /// Why (it names the table).
        #[source]
        source: crate::index::digests::DigestTableError,
    },
    /// A mirror's link map could not be read while a page's links were rewritten.
    #[error("{file}: links not rewritten: {source}")]
    LinkMap {
        /// The page.
        file: String,
        /// The cause.
        #[source]
        source: crate::sources::mirror_files::ScratchError,
    },
    /// A capture source yielded nothing.
    #[error("{}: no capture found in this {shape} harvest", root.display())]
    NoCaptures {
        /// The source.
        root: PathBuf,
        /// Its shape.
        shape: String,
    },
    /// A payload changed while the run read it.
    #[error("{file}: payload changed while packaging ({read} bytes read, {expected} expected)")]
    PayloadChanged {
        /// The source file.
        file: String,
        /// Bytes read.
        read: u64,
        /// Bytes the source measured.
        expected: u64,
    },
    /// An input changed while it was read.
    #[error("{}: {change}", path.display())]
    Changed {
        /// The input.
        path: PathBuf,
        /// How.
        change: crate::formats::digest::InputChanged,
    },
    /// A WARC to be copied cannot be read.
    #[error("{}: not a readable WARC: {source}", path.display())]
    Warc {
        /// The file.
        path: PathBuf,
        /// What the reader met.
        #[source]
        source: crate::formats::warc::WarcError,
    },
    /// An ARC could not be migrated.
    #[error("{}: migration failed: {failure}", input.display())]
    Migration {
        /// The ARC.
        input: PathBuf,
        /// Why.
        #[source]
        failure: MigrationFailure,
    },
    /// A report for the package could not be written as JSON.
    #[error("{path}: {source}")]
    Json {
        /// The report's path in the package.
        path: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The METS written could not be validated at all.
    #[error("the METS written cannot be validated: {0}")]
    MetsUnchecked(#[from] crate::mets::validate::ValidateError),
    /// The METS written is invalid: no package is made.
    #[error(
        "the METS written is invalid ({errors} errors; first: line {line:?} [{rule}] {message}); no package was made"
    )]
    MetsInvalid {
        /// How many errors.
        errors: usize,
        /// The first one's line.
        line: Option<u64>,
        /// Its rule.
        rule: String,
        /// What it says.
        message: String,
    },
    /// Another run holds every directory name this run could build in.
    #[error("{}: cannot lock a directory to build the package in", .0.display())]
    Locked(PathBuf),
    /// A broken invariant of webaip itself (a bug, never the input's fault).
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl From<crate::stages::StageError> for PackageError {
    fn from(e: crate::stages::StageError) -> Self {
        match e {
            crate::stages::StageError::Scan(e) => PackageError::Scan(e),
            crate::stages::StageError::ScanOf { origin, source } => {
                PackageError::ScanOf { origin, source }
            }
            crate::stages::StageError::Io { path, source } => {
                PackageError::Io { path: path.into(), source }
            }
            crate::stages::StageError::Dedup { origin, source } => {
                PackageError::Dedup { origin, source }
            }
            crate::stages::StageError::LinkMap { file, source } => {
                PackageError::LinkMap { file, source }
            }
        }
    }
}

impl From<crate::stages::scan::CleanOrScanError> for PackageError {
    fn from(e: crate::stages::scan::CleanOrScanError) -> Self {
        match e {
            crate::stages::scan::CleanOrScanError::Scan(e) => PackageError::Scan(e),
            crate::stages::scan::CleanOrScanError::Clean(e) => {
                PackageError::Io { path: e.path, source: e.source }
            }
        }
    }
}
