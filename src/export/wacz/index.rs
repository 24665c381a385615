//! The WACZ's index, from the sorted CDXJ lines of its containers: one `indexes/index.cdxj`,
//! or the compressed form WACZ 1.1.1 names `cdxj-gzip-1.0` (what Browsertrix and py-wacz
//! write, and the only one pywb's `wb-manager add` imports): `indexes/index.cdx.gz`, the lines
//! in gzip members of [`BLOCK_LINES`] lines, and `indexes/index.idx`, a `!meta` line then one
//! line per member (its first line's key and timestamp, and its offset, length and SHA-256),
//! which a viewer searches to fetch only the members it needs.

use std::io::{self, BufWriter, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use sha2::{Digest, Sha256};
use tempfile::NamedTempFile;

use super::WaczError;
use crate::formats::digest::hex;
use crate::index::sort::LineSorter;

/// Lines per gzip member of `index.cdx.gz` (as pywb's and py-wacz's tools write them).
pub const BLOCK_LINES: usize = 3000;

/// Which form of index a WACZ gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaczIndex {
    /// `indexes/index.cdx.gz` and `indexes/index.idx` (`cdxj-gzip-1.0`).
    #[default]
    Compressed,
    /// One `indexes/index.cdxj`.
    Cdxj,
}

/// The index's members, each in a temporary file: (path in the WACZ, file).
pub(crate) struct IndexMembers {
    pub members: Vec<(String, NamedTempFile)>,
    pub lines: u64,
}

/// Writes the merged lines of `sorters` as `kind`, into files `temp` makes.
pub(crate) fn write_index(
    sorters: Vec<LineSorter>,
    kind: WaczIndex,
    temp: &dyn Fn() -> Result<NamedTempFile, WaczError>,
) -> Result<IndexMembers, WaczError> {
    let data = temp()?;
    let io_err = |f: &NamedTempFile| {
        let path = f.path().to_path_buf();
        move |source| WaczError::Io { path: path.clone(), source }
    };
    let mut lines = 0u64;
    if kind == WaczIndex::Cdxj {
        let mut out = BufWriter::with_capacity(1 << 20, data.as_file());
        LineSorter::merge_into(sorters, &mut |l| {
            lines += 1;
            out.write_all(l)?;
            out.write_all(b"\n")
        })
        .and_then(|_| out.flush())
        .map_err(io_err(&data))?;
        drop(out);
        return Ok(IndexMembers { members: vec![("indexes/index.cdxj".into(), data)], lines });
    }
    let idx = temp()?;
    let mut blocks = Blocks {
        data: BufWriter::with_capacity(1 << 20, data.as_file()),
        idx: BufWriter::new(idx.as_file()),
        held: Vec::new(),
        count: 0,
        offset: 0,
    };
    let meta = r#"!meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}"#;
    writeln!(blocks.idx, "{meta}").map_err(io_err(&idx))?;
    LineSorter::merge_into(sorters, &mut |l| {
        lines += 1;
        blocks.push(l)
    })
    .and_then(|_| blocks.flush_block())
    .and_then(|_| blocks.data.flush())
    .map_err(io_err(&data))?;
    blocks.idx.flush().map_err(io_err(&idx))?;
    drop(blocks);
    let members = vec![("indexes/index.cdx.gz".into(), data), ("indexes/index.idx".into(), idx)];
    Ok(IndexMembers { members, lines })
}

/// The compressed index being written.
struct Blocks<'a> {
    data: BufWriter<&'a std::fs::File>,
    idx: BufWriter<&'a std::fs::File>,
    /// The lines of the member being made.
    held: Vec<u8>,
    count: usize,
    /// Where the next member starts in `index.cdx.gz`.
    offset: u64,
}

impl Blocks<'_> {
    fn push(&mut self, line: &[u8]) -> io::Result<()> {
        self.held.extend_from_slice(line);
        self.held.push(b'\n');
        self.count += 1;
        if self.count == BLOCK_LINES {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(&self.held)?;
        let member = gz.finish()?;
        // The member's first line's key and timestamp: the text before its JSON block.
        let first = self.held.split(|&b| b == b'\n').next().unwrap_or_default();
        let prefix = first.split(|&b| b == b'{').next().unwrap_or_default();
        let prefix = String::from_utf8_lossy(prefix);
        let entry = serde_json::json!({
            "offset": self.offset,
            "length": member.len(),
            "digest": format!("sha256:{}", hex(&Sha256::digest(&member))),
        });
        writeln!(self.idx, "{} {entry}", prefix.trim())?;
        self.data.write_all(&member)?;
        self.offset += member.len() as u64;
        self.held.clear();
        self.count = 0;
        Ok(())
    }
}
