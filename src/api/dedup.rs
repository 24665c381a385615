//! Deduplication across packages: [`make_dedup_table`] makes the digest table that
//! `PackageOptions` dedup sources look captures up in, [`restore_revisits`] gives a
//! deduplicated package's containers back with full records in place of its revisits.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::index::digests::TableBuilder;
use crate::stages::undedup::RestoreScratch;

pub use crate::index::digests::DigestTableError;
pub use crate::stages::undedup::UndedupError;

/// Memory for sorting a digest table by default (runs beyond it go to temporary files).
pub const DEFAULT_DEDUP_TABLE_MEMORY: usize = 256 << 20;

/// How [`make_dedup_table`] works.
#[derive(Debug, Clone, Copy)]
pub struct DedupTableOptions {
    /// Bytes of memory for sorting (at least 1 MiB is used).
    pub memory: usize,
}

impl Default for DedupTableOptions {
    fn default() -> Self {
        DedupTableOptions { memory: DEFAULT_DEDUP_TABLE_MEMORY }
    }
}

/// What [`make_dedup_table`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct DedupTableReport {
    /// The table.
    pub table: PathBuf,
    /// Stored payloads in it, by digest.
    pub payloads: u64,
    /// Index lines and records skipped: revisits, digests of other algorithms, none.
    pub skipped: u64,
}

/// Makes the digest table of the payloads stored in `sources` (CDXJ index files, and
/// package folders whose `content/` records are read, each payload checked against the
/// digest its record states) at `out`, sorted by digest with an external sort bounded by
/// `options.memory`. A [`DigestTableError`] names the index line or file that could not be
/// read, or a folder that is no package.
pub fn make_dedup_table(
    sources: &[PathBuf],
    out: &Path,
    options: &DedupTableOptions,
) -> Result<DedupTableReport, DigestTableError> {
    for source in sources {
        crate::layout::refuse_output_in_input(source, out)?;
    }
    let mut table = TableBuilder::new(options.memory.max(1 << 20))?;
    for source in sources {
        match source.is_dir() {
            true => drop(table.add_package(source)?),
            false => table.add_cdxj(source)?,
        }
    }
    let skipped = table.skipped;
    let payloads = table.finish(out)?;
    Ok(DedupTableReport { table: out.to_path_buf(), payloads, skipped })
}

/// A deduplicated package's containers with their revisits restored ([`restore_revisits`]),
/// in a scratch folder that lives as long as this.
pub struct RestoredRevisits {
    scratch: RestoreScratch,
    /// The restored containers, ready to be packaged.
    pub containers: Vec<PathBuf>,
    /// Revisit records made full records again.
    pub restored: u64,
}

impl RestoredRevisits {
    /// The scratch folder holding the containers (removed when this is dropped).
    pub fn folder(&self) -> &Path {
        self.scratch.path()
    }
}

/// Copies the containers of the package at `package` into a scratch folder beside `out`
/// (where the new package is to go), each revisit record replaced by a full record whose
/// payload is taken from the package of `with` (or `package` itself) holding its original,
/// and checked against the revisit's payload digest. Package the containers (with
/// [`crate::Packager`]) before the result is dropped. An [`UndedupError`] names the revisit
/// whose original no package holds, or whose payload differs.
pub fn restore_revisits(
    package: &Path,
    with: &[PathBuf],
    out: &Path,
) -> Result<RestoredRevisits, UndedupError> {
    let scratch = RestoreScratch::beside(out)?;
    let (containers, restored) = crate::stages::undedup::restore(package, with, scratch.path())?;
    Ok(RestoredRevisits { scratch, containers, restored })
}
