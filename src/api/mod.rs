//! The library's front door: one call for each thing webaip does, each with options that have
//! a `Default`. Everything here is re-exported at the crate root.

mod access;
mod batch;
mod build_info;
mod dedup;
mod identify;
mod migrate;
mod packager;
mod packaging;
mod pages;
mod preservation;
mod report;
mod scan;
mod support;
pub mod types;
mod unmigrate;
mod validate;

// Globs: a type other calls also return (a profile, a mode) may be re-exported twice.
pub use access::*;
pub use batch::*;
pub use build_info::{BUILD_COMMIT, long_version, short_version};
pub use dedup::*;
pub use identify::*;
pub use migrate::*;
pub use packager::{PackageProgress, Packaged, Packager, PackagerError};
pub use packaging::*;
pub use pages::*;
pub use preservation::*;
pub use report::*;
pub use scan::*;
pub use support::{
    ConfineError, describe_io, escape_controls, prepare_identification, refuse_nesting,
    refuse_output_in_input,
};
pub use unmigrate::*;
pub use validate::*;

use std::path::{Path, PathBuf};

pub use crate::audit::{AuditError, AuditOptions, AuditReport};
pub use crate::export::eark::{EarkError, ExportSummary, PackageType as EarkType};
pub use crate::export::wacz::{WaczError, WaczOptions, WaczReport};
pub use crate::index::build::IndexFormat;
pub use crate::index::warc::IndexError;
pub use crate::ingest::{IngestError, IngestOptions, IngestReport};
pub use crate::migrate::MigrateOptions;
pub use crate::migrate::report::FileReport;
pub use crate::package::{PackageError, PackageOptions, PackageReport, VirusCheck};
pub use crate::store::config::{
    ReplicaConfig, ReplicaKind, ReplicaLayout, StoreConfig, VersionUser,
};
pub use crate::store::{PutOptions, PutReport, PutVerification, Store, StoreError};

/// Migrates one ARC file to a WARC 1.1 file at `output`, then reads the WARC back to prove
/// every payload byte was conserved. Never panics on bad input: a failure is in the report
/// ([`FileReport::ok`] is false, `error` says why), and no output is left. Record
/// identifiers are random (`migrate::migrate_file` takes seeded ones).
pub fn migrate_arc(input: &Path, output: &Path, options: &MigrateOptions) -> FileReport {
    let ids = crate::ids::Ids::random();
    crate::migrate::migrate_file(input, output, options, &ids, &|_| {}, &mut |_| {})
}

/// Audits the package at `package` (its folder, or its METS document) against its own METS:
/// every file present with the size and SHA-512 stated, the METS valid; with
/// `options.deep`, every record read and its digests checked.
pub fn audit_package(package: &Path, options: &AuditOptions) -> Result<AuditReport, AuditError> {
    crate::audit::audit_package(package, options, &|_| {})
}

/// Makes the archival package (AIP) of the submission at `submission` in `options.out`,
/// after auditing it.
pub fn ingest_package(
    submission: &Path,
    options: &IngestOptions,
) -> Result<IngestReport, IngestError> {
    crate::ingest::ingest(submission, options, None, &|_| {})
}

/// How to index.
#[derive(Debug, Clone, Copy)]
pub struct IndexOptions {
    /// CDXJ (the default), CDX or ZipNum.
    pub format: IndexFormat,
    /// Add each record's `WARC-Record-ID` as the field `recordId`.
    pub record_ids: bool,
    /// Files indexed at once.
    pub jobs: usize,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions { format: IndexFormat::Cdxj, record_ids: false, jobs: 1 }
    }
}

/// Indexes WARC files and package folders into `output` (sorted, written atomically); the
/// files written (one, or ZipNum's three).
pub fn index_warcs(
    inputs: &[PathBuf],
    output: &Path,
    options: &IndexOptions,
) -> Result<Vec<PathBuf>, IndexError> {
    let entries = crate::index::warc::EntryOptions {
        record_ids: options.record_ids,
        ..crate::index::warc::EntryOptions::default()
    };
    let jobs = options.jobs.max(1);
    crate::index::build::index_paths(inputs, options.format, entries, jobs, output, &|_| {})
}

/// Exports the package at `package` as the WACZ file `output` (its containers checked
/// against the METS while copied, by default).
pub fn export_wacz(
    package: &Path,
    output: &Path,
    options: &WaczOptions,
) -> Result<WaczReport, WaczError> {
    crate::export::wacz::export_wacz(package, output, options, &|_| {})
}

/// Exports the package at `package` as an E-ARK 2.2 package of type `kind` (SIP or AIP) at
/// `output`: a `.zip`, or else a new folder.
pub fn export_eark(
    package: &Path,
    output: &Path,
    kind: EarkType,
) -> Result<ExportSummary, EarkError> {
    crate::export::eark::export(package, output, kind)
}

/// Puts the package at `package` to every replica of `config` (after it is verified as
/// `opts` asks: every file's SHA-512 against its manifest and the METS, and with
/// [`PutOptions::audit`] the full audit) and verifies every copy; [`PutReport::accepted`] says
/// whether all did. [`Store::open`] gives the store itself, for checks, repairs and fetches.
pub fn store_package(
    config: &StoreConfig,
    package: &Path,
    opts: &PutOptions,
) -> Result<PutReport, StoreError> {
    Store::open(config)?.put(package, opts, &|_| {})
}
