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
//! | store on every replica | [`store_package`]; on an open [`Store`]: [`store_put`], [`store_check`], [`store_repair`], [`store_get`], [`store_rebuild_state`], [`store_remove`], [`store_migrate`] | [`StoreConfig`], [`AuditOptions`], [`StoreCheckOptions`], [`StoreGet`] |
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
//! Inside, each concern has one module: the sources read each input shape as captures, the
//! stages (virus scan, link rewriting, identification) see every item before it is written,
//! the formats read and write ARC and WARC bytes, the model is the package as plain data, and
//! the METS writer describes it. Those modules are private: the calls above are the way in,
//! and [`types`] names the parts of what they return. The repository's `docs/design.md`
//! walks through the house for contributors.
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
pub(crate) mod hooks;
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
pub(crate) mod report;
pub(crate) mod sources;
pub(crate) mod stages;
pub(crate) mod store;
pub(crate) mod temporaries;
#[cfg(test)]
mod test_support;
