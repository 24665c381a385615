//! webaip turns harvested websites into preservation packages, and checks them.
//!
//! Legacy web-archive material (Heritrix ARC files, WARC files, PANDAS mirrors) becomes WARC 1.1
//! containers described by a METS/PREMIS record, with every byte accounted for.
//!
//! # Brief overview
//!
//! - [`formats`] reads and writes the byte formats: [`formats::arc::ArcReader`] frames ARC v1/v2
//!   records out of damaged files and reports every oddity with its offset;
//!   [`formats::warc::WarcWriter`] writes WARC 1.1 with one gzip member per record and returns
//!   each record's byte ranges; [`formats::warc::WarcReader`] reads WARCs back.
//! - [`migrate`] joins them: [`migrate::migrate_file`] converts one ARC into one WARC and proves,
//!   by reading the result back from disk, that every payload byte was conserved.
//! - [`ids`] makes identifiers and tells the time, seeded for deterministic runs.
//!
//! Library code never prints; the `webaip` binary is a thin CLI over it.
//!
//! ```no_run
//! use std::path::Path;
//! use webaip::{ids::Ids, migrate};
//!
//! let report = migrate::migrate_file(
//!     Path::new("IAH-20080430204825-00000-blackbook.arc.gz"),
//!     Path::new("out/IAH-20080430204825-00000-blackbook.warc.gz"),
//!     &migrate::MigrateOptions::default(),
//!     &Ids::random(),
//!     &|_bytes| {},
//!     &mut |_record| {},
//! );
//! assert!(report.ok(), "{:?}", report.conservation.mismatches);
//! ```

#![deny(missing_docs)]

pub mod audit;
pub mod formats;
pub mod ids;
pub mod layout;
pub mod metadata;
pub mod mets;
pub mod migrate;
pub mod model;
pub mod package;
pub mod pages;
pub mod profile;
pub mod sources;
pub mod stages;
pub mod store;
