//! [`scan_paths`]: files, WARC files or packages through clamd, on their own.

use std::path::PathBuf;

use crate::stages::scan::{Clamd, ClamdAddr, ScanTargets, scan_files};

/// How far a scan of [`scan_paths`] is, in bytes of its files.
#[derive(Debug, Clone, Copy)]
pub struct ScanPosition {
    /// Bytes scanned so far.
    pub done: u64,
    /// Bytes of all the files to scan.
    pub total: u64,
}

/// Scans `paths` with the clamd at `clamd`: a WARC file (`.warc`, `.warc.gz`) record by
/// record (each block on its own), a package folder as every WARC under it, any other file
/// whole. clamd is pinged first. `progress` hears the bytes done as they are done.
///
/// Returns what was scanned and every finding (infected, or not scanned and why); clean items
/// are only counted. Fails when clamd does not answer or fails, or a file cannot be read
/// (the error names it, and the offset in a WARC).
pub fn scan_paths(
    paths: &[PathBuf],
    clamd: &ClamdAddr,
    progress: &mut dyn FnMut(ScanPosition),
) -> Result<FilesScan, ScanFilesError> {
    let targets = ScanTargets::of(paths);
    let total = targets.total_bytes;
    progress(ScanPosition { done: 0, total });
    scan_files(Clamd::new(clamd.clone()), &targets, &mut |done| {
        progress(ScanPosition { done, total })
    })
}

pub use crate::stages::scan::{BadClamdAddr, FileFinding, FilesScan, ScanFilesError, ScanResult};
