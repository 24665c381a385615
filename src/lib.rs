//! webaip turns harvested websites into preservation packages, and checks them.
//!
//! Legacy web-archive material (Heritrix jobs with ARC and WARC files, PANDAS/HTTrack and wget
//! mirrors, NEDLIB harvests, Kulturarw3 archives) becomes WARC 1.1 containers described by a
//! METS/PREMIS record, with every byte accounted for.
//!
//! # Using it
//!
//! One call for each thing webaip does, at the crate root, each with options that have a
//! `Default` (the `examples/` folder runs each of them):
//!
//! | to | call | options |
//! |---|---|---|
//! | package any harvest | [`Packager`] | [`PackageOptions`] |
//! | migrate one ARC file to WARC | [`migrate_arc`] | [`MigrateOptions`] |
//! | audit a package byte by byte | [`audit_package`] | [`AuditOptions`] |
//! | make the archival package (AIP) | [`ingest_package`] | [`IngestOptions`] |
//! | index WARCs or packages (CDXJ, CDX, ZipNum) | [`index_warcs`], [`index_warcs_into`] | [`IndexOptions`] |
//! | get one record through indexes | [`get_record`], [`get_record_into`] | [`GetOptions`] |
//! | package a manifest's items, resumably | [`run_batch`], [`batch_status`] | [`BatchOptions`] |
//! | give back the original ARC files | [`unmigrate`] | [`UnmigrateOptions`] |
//! | deduplicate across packages, and undo it | [`make_dedup_table`], [`restore_revisits`] | [`DedupTableOptions`] |
//! | export as WACZ, or as E-ARK | [`export_wacz`], [`export_eark`], [`export_eark_in`] | [`WaczOptions`], [`EarkType`] |
//! | store on every replica | [`store_package`]; on an open [`Store`]: [`store_put`], [`store_check`], [`store_repair`], [`store_get`], [`store_rebuild_state`], [`store_remove`] | [`StoreConfig`], [`AuditOptions`], [`StoreCheckOptions`], [`StoreGet`] |
//!
//! [`audit_package_with_progress`], [`ingest_package_with_progress`] and
//! [`export_wacz_with_progress`] are the same calls with a progress callback.
//!
//! The input's shape (a Heritrix job, ARC/WARC files, a PANDAS instance or title, a wget or
//! HTTrack mirror or its `.zip`, a NEDLIB harvest, a Kulturarw3 archive) is recognised; the
//! package is built in a temporary folder and renamed into place only when complete.
//!
//! ```no_run
//! use webaip::{AuditOptions, PackageOptions, Packager, audit_package};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let options = PackageOptions::default().deterministic(true);
//! let report = Packager::new("samples/heritrix-job").out("out/job").options(options).run()?;
//! println!("made {} ({} containers)", report.objid, report.containers.len());
//!
//! let audit = audit_package(&report.package, &AuditOptions::default())?;
//! assert!(audit.intact);
//! # Ok(())
//! # }
//! ```
//!
//! Without a clamd (`PackageOptions::virus_check`), a package records on every container that
//! it was not scanned, and says so in its report.
//!
//! # The house
//!
//! ```text
//!  source ──► captures ──► stages ──► container sink ──► package model ──► METS writer
//!  sources/    Capture      scan,      formats::warc     model/            mets/writer.rs
//!                           rewrite    (ranges, digests)  (plain data)     (streamed, validated)
//!  audit/, store/, pages/, validate ◄── METS reader (mets/reader.rs) ◄── a package on disk
//! ```
//!
//! - [`sources`] recognise input shapes ([`sources::detect`]) and read
//!   them: [`sources::capture`] is the [`capture::Capture`] PANDAS instances and
//!   mirrors ([`sources::pandas::InstanceCaptures`], read by [`sources::pandas`] and
//!   [`sources::mirror`]), NEDLIB harvests ([`sources::nedlib`]), Kulturarw3 archives
//!   ([`sources::kulturarw3`]), ARC files ([`sources::arc_captures`], as the migration maps
//!   them) and WARC files ([`sources::warc_captures`], records as stored) yield; `package`
//!   copies a Heritrix job's WARC files through the same pipeline, each record an item that
//!   carries its stored bytes (`package::copy`), and migrates its ARC files through it too,
//!   each record mapped by the migration's reader thread (`migrate::migrate_into`).
//! - [`formats`] reads and writes the byte formats: [`formats::arc::ArcReader`] frames ARC v1/v2
//!   records out of damaged files and reports every oddity with its offset;
//!   [`formats::warc::WarcWriter`] writes WARC 1.1 with one gzip member per record and returns
//!   each record's byte ranges; [`formats::warc::WarcReader`] reads WARCs back;
//!   `formats::warc::payload` is the one rule for where a payload starts.
//! - [`stages`]: what captures and copied WARC records pass before they are written
//!   (`stages::Stage`): virus scanning with clamd ([`stages::scan`], one engine for every
//!   path) and byte-faithful link rewriting (`stages::rewrite::RewriteStage`). A stage plugs
//!   in by implementing `Stage`: it gets each batch of `stages::StagedItem`s (a capture, a
//!   stored record, or bytes between records), in order, before anything of them is written,
//!   and may route them, note `Finding`s or put a `Replacement` payload in (work that runs in
//!   the background, as clamd's, is left running by `run` and completed by `finish`, while
//!   the sink prepares the batch: `stages::BatchSink`); it is put in the
//!   list the pipeline runs (`stages::run_pipeline`, called by `build_capture_package` for
//!   every capture source, by `package` for every copied WARC and by the migration for every
//!   ARC), and what it decides is written by the one writer of each kind of item, so no
//!   source changes.
//! - [`migrate`] converts one ARC into one WARC ([`migrate::migrate_file`]) and proves, by
//!   reading the result back from disk, that every payload byte was conserved.
//! - [`package`] builds a package atomically: [`package::build_package`] (Heritrix jobs, ARC and
//!   WARC files), [`package::captures::build_capture_package`] (every capture source: stages
//!   before writing, one sink per container; [`package::pandas::build_pandas_package`] is it
//!   for a PANDAS instance or mirror); every run says what it made in one
//!   [`package::PackageReport`].
//! - [`model`] is the package as plain data; [`mets`] writes it as METS (MODS, DC, rights,
//!   PREMIS; streamed, spilled per container) and validates METS documents against the
//!   schemas and the profile ([`profile`]); [`metadata`] reads the curator's TOML, [`pages`]
//!   the webpages and associated objects a curator describes.
//! - [`audit`] checks a stored package against its own METS, byte by byte; [`store`] keeps
//!   packages on replicated storage (file systems, S3) and checks and repairs them.
//! - [`layout`] is the one place that names package files and decides what a name from the
//!   input may open; [`ids`] makes identifiers and tells the time, seeded for deterministic
//!   runs.
//!
//! Library code never prints; the `webaip` binary is a thin CLI over it.
//!
#![deny(missing_docs)]

mod api;
pub use api::*;

pub(crate) mod audit;
pub(crate) mod batch;
pub(crate) mod capture;
pub(crate) mod export;
pub(crate) mod external_sort;
pub(crate) mod formats;
pub(crate) mod ids;
pub(crate) mod index;
pub(crate) mod ingest;
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod internals;
pub(crate) mod layout;
pub(crate) mod metadata;
pub(crate) mod mets;
pub(crate) mod migrate;
pub(crate) mod model;
pub(crate) mod package;
pub(crate) mod pages;
pub(crate) mod profile;
pub(crate) mod sources;
pub(crate) mod stages;
pub(crate) mod store;
pub(crate) mod temporaries;
#[cfg(test)]
mod test_support;
