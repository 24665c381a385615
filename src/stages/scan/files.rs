//! Files, WARC files and whole packages scanned on their own (`webaip scan`): a WARC file's
//! record blocks each on its own, small ones in batches ([`super::batching`]), a large one
//! streamed; any other file whole.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::batching::{self, HELD_PAYLOAD};
use super::{Clamd, Digest, ScanBatch, ScanEngine, ScanError, ScanResult};
use crate::formats::warc::{WarcError, WarcReader};

/// What to scan: the files given, a directory standing for every WARC file under it.
#[derive(Debug, Clone)]
pub struct ScanTargets {
    /// The files, in the order they are scanned.
    pub files: Vec<PathBuf>,
    /// Their total size in bytes (for a progress bar).
    pub total_bytes: u64,
}

impl ScanTargets {
    /// The files of `paths`: a directory (a package) gives every `.warc`/`.warc.gz` under it,
    /// sorted by path.
    pub fn of(paths: &[PathBuf]) -> ScanTargets {
        let files: Vec<PathBuf> = paths
            .iter()
            .flat_map(|p| if p.is_dir() { warcs_of(p) } else { vec![p.clone()] })
            .collect();
        let total_bytes = files.iter().filter_map(|t| t.metadata().ok()).map(|m| m.len()).sum();
        ScanTargets { files, total_bytes }
    }
}

/// Something clamd found, or could not scan.
#[derive(Debug, Clone)]
pub struct FileFinding {
    /// The file.
    pub file: PathBuf,
    /// Byte offset of the record (of its gzip member) in a WARC file.
    pub offset: Option<u64>,
    /// The record's `WARC-Record-ID`, in a WARC file.
    pub record: Option<String>,
    /// The verdict: [`ScanResult::Infected`] or [`ScanResult::NotScanned`].
    pub verdict: ScanResult,
}

/// What a scan of files found.
#[derive(Debug, Clone, Default)]
pub struct FilesScan {
    /// Items scanned: WARC records and other files.
    pub scanned: u64,
    /// Findings, file by file, in file order within each.
    pub findings: Vec<FileFinding>,
}

/// Why a scan of files stopped.
#[derive(Debug, thiserror::Error)]
pub enum ScanFilesError {
    /// clamd does not answer its `PING`.
    #[error("clamd at {addr} does not answer")]
    NotAnswering {
        /// Where clamd was asked.
        addr: String,
        /// Why it did not answer.
        #[source]
        source: ScanError,
    },
    /// clamd failed while scanning.
    #[error(transparent)]
    Clamd(#[from] ScanError),
    /// A WARC file could not be read (its error names the file and offset).
    #[error(transparent)]
    Warc(#[from] WarcError),
    /// A file could not be read.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Scans `targets` with `clamd` (pinged first); `position` receives the bytes of the targets
/// done so far, as they are done.
pub fn scan_files(
    clamd: Clamd,
    targets: &ScanTargets,
    position: &mut dyn FnMut(u64),
) -> Result<FilesScan, ScanFilesError> {
    clamd.ping().map_err(|source| ScanFilesError::NotAnswering {
        addr: clamd.addr().to_string(),
        source,
    })?;
    let engine = ScanEngine::new(clamd)?;
    let mut scan = FilesScan::default();
    let mut done = 0u64;
    for t in &targets.files {
        let name = t.to_string_lossy();
        if name.ends_with(".warc.gz") || name.ends_with(".warc") {
            scan_warc(&engine, t, &mut scan, &mut |at| position(done + at))?;
        } else {
            scan_whole(&engine, t, &mut scan)?;
        }
        done += t.metadata().map(|m| m.len()).unwrap_or(0);
        position(done);
    }
    Ok(scan)
}

/// Scans a file that is not a WARC, whole.
fn scan_whole(
    engine: &ScanEngine,
    file: &Path,
    scan: &mut FilesScan,
) -> Result<(), ScanFilesError> {
    let io = |source| ScanFilesError::Io { path: file.to_path_buf(), source };
    let f = File::open(file).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    scan.scanned += 1;
    let verdict = engine.scan_one(None, f, len)?;
    scan.note(file, None, None, verdict);
    Ok(())
}

/// A record's block read from a WARC file: in memory, or already scanned (streamed).
enum Block {
    InMemory(Vec<u8>),
    Scanned(ScanResult),
}

/// A block waiting in a batch to be scanned, and the record it is from.
struct HeldBlock {
    offset: u64,
    record: String,
    bytes: Vec<u8>,
}

/// Blocks waiting to be scanned together.
struct Blocks(Vec<HeldBlock>);

impl ScanBatch for Blocks {
    fn items(&self) -> usize {
        self.0.len()
    }
    // No digest: the blocks are not hashed here, so nothing is reused.
    fn payload(&self, i: usize) -> Option<(&[u8], Option<&Digest>)> {
        self.0.get(i).map(|b| (&b.bytes[..], None))
    }
}

/// Scans each record block of a WARC file; `position` receives the offset read to.
fn scan_warc(
    engine: &Arc<ScanEngine>,
    file: &Path,
    scan: &mut FilesScan,
    position: &mut dyn FnMut(u64),
) -> Result<(), ScanFilesError> {
    let first = scan.findings.len();
    let mut reader = WarcReader::open(file)?;
    let mut batch = Vec::new();
    let mut batch_bytes = 0u64;
    while let Some((head, end, (record, block))) = reader.next_record(|head, block| {
        let len = head.header.content_length().unwrap_or(0);
        let id = head.header.record_id().unwrap_or("").to_string();
        if len <= HELD_PAYLOAD {
            let mut bytes = Vec::with_capacity(len as usize);
            block.read_to_end(&mut bytes)?;
            return Ok((id, Block::InMemory(bytes)));
        }
        let verdict = engine.scan_one(None, block, len).map_err(io::Error::other)?;
        Ok((id, Block::Scanned(verdict)))
    })? {
        scan.scanned += 1;
        position(end.end);
        match block {
            Block::Scanned(v) => scan.note(file, Some(head.offset), Some(record), v),
            Block::InMemory(bytes) => {
                batch_bytes += bytes.len() as u64;
                batch.push(HeldBlock { offset: head.offset, record, bytes });
            }
        }
        if batching::batch_full(batch.len(), batch_bytes) {
            scan_held(engine, file, std::mem::take(&mut batch), scan)?;
            batch_bytes = 0;
        }
    }
    scan_held(engine, file, batch, scan)?;
    // Streamed records were scanned before the batch around them: back to file order.
    scan.findings[first..].sort_by_key(|f| f.offset);
    Ok(())
}

/// Scans a batch of held blocks and notes its findings, in its order.
fn scan_held(
    engine: &Arc<ScanEngine>,
    file: &Path,
    batch: Vec<HeldBlock>,
    scan: &mut FilesScan,
) -> Result<(), ScanFilesError> {
    let (verdicts, Blocks(blocks)) = engine.scan_now(Blocks(batch))?;
    for (b, verdict) in blocks.into_iter().zip(verdicts) {
        if let Some(v) = verdict {
            scan.note(file, Some(b.offset), Some(b.record), v);
        }
    }
    Ok(())
}

impl FilesScan {
    /// Keeps a verdict that is a finding (not [`ScanResult::Clean`]).
    fn note(&mut self, file: &Path, offset: Option<u64>, record: Option<String>, v: ScanResult) {
        if v != ScanResult::Clean {
            self.findings.push(FileFinding {
                file: file.to_path_buf(),
                offset,
                record,
                verdict: v,
            });
        }
    }
}

/// Every WARC file under `dir`, sorted by path.
fn warcs_of(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".warc.gz") || n.ends_with(".warc")
        })
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A package directory stands for its WARC files, in path order; other files given are
    /// kept as they are, and files beside the WARCs in the directory are not scanned.
    #[test]
    fn a_directory_stands_for_its_warc_files_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        for (rel, bytes) in [
            ("viral/b.warc.gz", &b"12345"[..]),
            ("content/a.warc", b"123"),
            ("content/z.warc.gz", b"1"),
            ("metadata/mets.xml", b"<mets/>"),
        ] {
            let p = pkg.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let loose = dir.path().join("loose.bin");
        std::fs::write(&loose, b"0123456789").unwrap();
        let t = ScanTargets::of(&[pkg.clone(), loose.clone()]);
        let expected = vec![
            pkg.join("content/a.warc"),
            pkg.join("content/z.warc.gz"),
            pkg.join("viral/b.warc.gz"),
            loose,
        ];
        assert_eq!(t.files, expected);
        assert_eq!(t.total_bytes, 3 + 1 + 5 + 10);
    }

    /// Only findings are kept: a clean verdict is counted by the caller, not listed.
    #[test]
    fn clean_verdicts_are_not_findings() {
        let mut scan = FilesScan::default();
        let f = Path::new("x.warc");
        scan.note(f, Some(0), Some("a".into()), ScanResult::Clean);
        scan.note(f, Some(9), Some("b".into()), ScanResult::Infected("Eicar".into()));
        assert_eq!(scan.findings.len(), 1);
        assert_eq!(scan.findings[0].offset, Some(9));
        assert_eq!(scan.findings[0].verdict, ScanResult::Infected("Eicar".into()));
    }
}
