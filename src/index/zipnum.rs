//! ZipNum, the sharded index pywb reads (`pywb.warcserver.index.zipnum`): `NAME.cdx.gz` holds
//! the sorted CDXJ lines in gzip members of a fixed number of lines; `NAME.idx` has one line
//! per member, `KEY TIMESTAMP<TAB>PART<TAB>OFFSET<TAB>LENGTH<TAB>N` (the member's first
//! line's key and timestamp, its place, its number from 1), which pywb searches by binary
//! search; `NAME.loc` maps the part name `NAME` to its file, `NAME<TAB>NAME.cdx.gz` (relative
//! to the `.loc`).

use std::io::{self, BufRead, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use tempfile::NamedTempFile;

use super::lookup::{IndexLine, KeyLines, LookupError, SortedIndex, key_of};
use super::sort::LineSorter;
use super::warc::IndexError;

/// The three files of a ZipNum index named by `output` (`NAME`, `NAME.idx` or `NAME.cdx.gz`):
/// (blocks, summary, locations, part name).
pub fn paths(output: &Path) -> (PathBuf, PathBuf, PathBuf, String) {
    let text = output.to_string_lossy();
    let base = text
        .strip_suffix(".idx")
        .or_else(|| text.strip_suffix(".cdx.gz"))
        .unwrap_or(&text)
        .to_string();
    let part = Path::new(&base).file_name().map_or(String::new(), |n| n.to_string_lossy().into());
    (
        PathBuf::from(format!("{base}.cdx.gz")),
        PathBuf::from(format!("{base}.idx")),
        PathBuf::from(format!("{base}.loc")),
        part,
    )
}

/// One block being gathered.
struct Blocks<W: Write> {
    data: BufWriter<NamedTempFile>,
    idx: W,
    part: String,
    offset: u64,
    number: u64,
    first: Vec<u8>,
    held: Vec<u8>,
    count: usize,
}

impl<W: Write> Blocks<W> {
    fn flush_block(&mut self) -> io::Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let mut gz =
            GzEncoder::new(Vec::with_capacity(self.held.len() / 4), Compression::default());
        gz.write_all(&self.held)?;
        let member = gz.finish()?;
        self.data.write_all(&member)?;
        self.number += 1;
        // The key and timestamp of the block's first line.
        let key_end = self
            .first
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b' ')
            .nth(1)
            .map_or(self.first.len(), |(i, _)| i);
        self.idx.write_all(&self.first[..key_end])?;
        writeln!(self.idx, "\t{}\t{}\t{}\t{}", self.part, self.offset, member.len(), self.number)?;
        self.offset += member.len() as u64;
        self.held.clear();
        self.count = 0;
        Ok(())
    }

    fn push(&mut self, line: &[u8], lines: usize) -> io::Result<()> {
        if self.count == 0 {
            self.first.clear();
            self.first.extend_from_slice(line);
        }
        self.held.extend_from_slice(line);
        self.held.push(b'\n');
        self.count += 1;
        if self.count >= lines {
            self.flush_block()?;
        }
        Ok(())
    }
}

/// Writes the ZipNum index of the sorted lines; `temp` makes a temporary file beside an
/// output. The `.idx` is renamed into place last.
pub(crate) fn write(
    sorters: Vec<LineSorter>,
    lines: usize,
    output: &Path,
    temp: &dyn Fn(&Path) -> Result<NamedTempFile, IndexError>,
) -> Result<Vec<PathBuf>, IndexError> {
    let (data_path, idx_path, loc_path, part) = paths(output);
    let io_err = |p: &Path| {
        let path = p.display().to_string();
        move |e| IndexError::Io { path: path.clone(), source: e }
    };
    let mut blocks = Blocks {
        data: BufWriter::with_capacity(1 << 20, temp(&data_path)?),
        idx: BufWriter::new(temp(&idx_path)?),
        part: part.clone(),
        offset: 0,
        number: 0,
        first: Vec::new(),
        held: Vec::new(),
        count: 0,
    };
    let lines = lines.max(1);
    LineSorter::merge_into(sorters, &mut |l| blocks.push(l, lines)).map_err(io_err(&data_path))?;
    blocks.flush_block().map_err(io_err(&data_path))?;
    let finish = |w: BufWriter<NamedTempFile>, p: &Path| -> Result<NamedTempFile, IndexError> {
        w.into_inner().map_err(|e| io_err(p)(e.into_error()))
    };
    let data = finish(blocks.data, &data_path)?;
    let idx = finish(blocks.idx, &idx_path)?;
    let mut loc = temp(&loc_path)?;
    let data_name = data_path.file_name().map_or(String::new(), |n| n.to_string_lossy().into());
    writeln!(loc, "{part}\t{data_name}").map_err(io_err(&loc_path))?;
    super::output::publish(data, &data_path)?;
    super::output::publish(loc, &loc_path)?;
    super::output::publish(idx, &idx_path)?;
    Ok(vec![idx_path, data_path, loc_path])
}

/// Largest block read (compressed, and its lines decompressed): a block holds a few thousand
/// lines; a summary line naming more is refused rather than read.
const MAX_BLOCK: u64 = 64 << 20;

/// A ZipNum index opened for look-ups: its summary (`.idx`) searched in place as a sorted
/// file, and its parts (`.loc`) resolved beside it; a look-up decompresses only the blocks
/// that can hold the key.
pub struct ZipNumIndex {
    summary: SortedIndex,
    /// Part name and its file (inside the `.loc`'s folder).
    parts: Vec<(String, PathBuf)>,
}

impl ZipNumIndex {
    /// Opens `NAME.idx` and reads `NAME.loc` (one line per part: name, tab, file). A part's
    /// file must be a plain name or a relative path inside the `.loc`'s folder.
    pub fn open(idx: &Path) -> Result<ZipNumIndex, LookupError> {
        let summary = SortedIndex::open(idx)?;
        let (_, _, loc, _) = paths(idx);
        let file = crate::layout::open_user_file(&loc)
            .map_err(|e| LookupError::Io { path: loc.clone(), source: io::Error::other(e) })?;
        let folder = loc.parent().map_or(PathBuf::from("."), Path::to_path_buf);
        let mut parts = Vec::new();
        for (n, line) in io::BufReader::new(file).take(1 << 20).lines().enumerate() {
            let line = line.map_err(|source| LookupError::Io { path: loc.clone(), source })?;
            let Some((name, rel)) = line.split_once('\t') else { continue };
            let bad = || LookupError::Line {
                path: loc.clone(),
                at: n as u64,
                source: super::cdxj::CdxjLineError::Json(format!(
                    "part {name:?}: {rel:?} is not a file inside the index's folder"
                )),
            };
            let rel = Path::new(rel.trim());
            let inside = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
            if !inside || rel.as_os_str().is_empty() {
                return Err(bad());
            }
            parts.push((name.to_string(), folder.join(rel)));
        }
        Ok(ZipNumIndex { summary, parts })
    }

    /// The summary file's path.
    pub fn path(&self) -> &Path {
        self.summary.path()
    }

    /// The lines of `key`: the blocks from the last one starting below the key (its lines
    /// may reach it) to the last one starting at it, decompressed one at a time.
    pub fn lines_of(&self, key: &str) -> Result<BlockLines<'_>, LookupError> {
        let from = self.summary.first_at_or_after(key.as_bytes())?;
        let start = self.summary.line_start_before(from)?.unwrap_or(from);
        let summary = self.summary.lines_from(start)?;
        Ok(BlockLines { index: self, summary, key: key.as_bytes().to_vec(), block: Vec::new() })
    }

    /// Every line, block after block.
    pub fn all_lines(&self) -> Result<BlockLines<'_>, LookupError> {
        let summary = self.summary.lines_from(0)?;
        Ok(BlockLines { index: self, summary, key: Vec::new(), block: Vec::new() })
    }

    /// The lines of the block a summary line names.
    fn block(&self, line: &IndexLine) -> Result<Vec<IndexLine>, LookupError> {
        let bad = |why: String| LookupError::Line {
            path: self.path().to_path_buf(),
            at: line.at,
            source: super::cdxj::CdxjLineError::Json(why),
        };
        let text = String::from_utf8_lossy(&line.text);
        let fields: Vec<&str> = text.split('\t').collect();
        let [_, part, offset, length, ..] = fields[..] else {
            return Err(bad(
                "not a ZipNum summary line (KEY TIMESTAMP, part, offset, length)".into()
            ));
        };
        let (Ok(offset), Ok(length)) = (offset.parse::<u64>(), length.parse::<u64>()) else {
            return Err(bad(format!("offset {offset:?} or length {length:?} is not a number")));
        };
        if length > MAX_BLOCK {
            return Err(bad(format!("a block of {length} bytes (at most {MAX_BLOCK} are read)")));
        }
        let Some((_, file)) = self.parts.iter().find(|(n, _)| n == part) else {
            return Err(bad(format!("part {part:?} is not in the .loc file")));
        };
        let data = crate::layout::open_user_file(file)
            .map_err(|e| LookupError::Io { path: file.clone(), source: io::Error::other(e) })?;
        let io_at = |source| LookupError::Io { path: file.clone(), source };
        let mut member = vec![0u8; length as usize];
        data.read_exact_at(&mut member, offset).map_err(io_at)?;
        let mut lines = Vec::new();
        flate2::read::GzDecoder::new(&member[..])
            .take(MAX_BLOCK + 1)
            .read_to_end(&mut lines)
            .map_err(io_at)?;
        if lines.len() as u64 > MAX_BLOCK {
            return Err(bad(format!("the block inflates past {MAX_BLOCK} bytes")));
        }
        // A line of a block is placed by its block's offset (the part file's byte).
        Ok(lines
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| IndexLine { at: offset, text: l.to_vec() })
            .collect())
    }
}

/// The lines of one key (or every line, for an empty key) of a ZipNum index, block by block.
pub struct BlockLines<'a> {
    index: &'a ZipNumIndex,
    summary: KeyLines,
    key: Vec<u8>,
    /// The rest of the current block, reversed (popped from the end).
    block: Vec<IndexLine>,
}

impl Iterator for BlockLines<'_> {
    type Item = Result<IndexLine, LookupError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            while let Some(line) = self.block.pop() {
                let key = key_of(&line.text);
                match self.key.is_empty() || key == self.key.as_slice() {
                    true => return Some(Ok(line)),
                    // Past the key: nothing after it can match.
                    false if key > self.key.as_slice() => {
                        self.block.clear();
                        self.summary.stop();
                        return None;
                    }
                    false => {}
                }
            }
            let summary = match self.summary.next()? {
                Ok(s) => s,
                Err(e) => return Some(Err(e)),
            };
            // A block starting past the key holds none of its lines.
            if !self.key.is_empty() && key_of(&summary.text) > self.key.as_slice() {
                self.summary.stop();
                return None;
            }
            match self.index.block(&summary) {
                Ok(mut lines) => {
                    lines.reverse();
                    self.block = lines;
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_locations_and_blocks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let idx = dir.path().join("all.idx");
        std::fs::write(&idx, "com,a)/ 2024\tall\t0\t99999999999\t1\n").unwrap();
        for loc in ["all\t../outside.cdx.gz\n", "all\t/etc/passwd\n", "all\t\n"] {
            std::fs::write(dir.path().join("all.loc"), loc).unwrap();
            let Err(e) = ZipNumIndex::open(&idx) else { panic!("{loc:?} is refused") };
            assert!(e.to_string().contains("inside the index's folder"), "{loc:?}: {e}");
        }
        std::fs::write(dir.path().join("all.loc"), "all\tall.cdx.gz\n").unwrap();
        std::fs::write(dir.path().join("all.cdx.gz"), b"").unwrap();
        let z = ZipNumIndex::open(&idx).unwrap();
        let e = z.lines_of("com,a)/").unwrap().next().unwrap().expect_err("too long");
        assert!(e.to_string().contains("a block of 99999999999 bytes"), "{e}");
    }

    #[test]
    fn the_three_files_are_named_from_the_output() {
        for out in ["d/all", "d/all.idx", "d/all.cdx.gz"] {
            let (data, idx, loc, part) = paths(Path::new(out));
            assert_eq!(data, Path::new("d/all.cdx.gz"));
            assert_eq!(idx, Path::new("d/all.idx"));
            assert_eq!(loc, Path::new("d/all.loc"));
            assert_eq!(part, "all");
        }
    }
}
