//! Look-ups in a ZipNum index (`zipnum` writes one): its summary (`NAME.idx`) is a sorted
//! file searched in place ([`SortedIndex`]); only the blocks that can hold the key are read
//! from the part files its `.loc` names, and decompressed one at a time.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

use super::lookup::{IndexLine, KeyLines, LookupError, MAX_INDEX_LINE, SortedIndex, key_of};
use super::zipnum::paths;
use crate::formats::segment::FileRange;

/// Largest block read (compressed, and its lines decompressed): a block holds a few thousand
/// lines; a summary line naming more is refused rather than read. Blocks are inflated as
/// their lines are taken, so this bounds time, not memory.
const MAX_BLOCK: u64 = 64 << 20;

/// A ZipNum index opened for look-ups: its summary (`.idx`) searched in place as a sorted
/// file, and its parts (`.loc`) resolved beside it; a look-up decompresses only the blocks
/// that can hold the key.
pub struct ZipNumIndex {
    summary: SortedIndex,
    /// The `.loc`'s folder: the part files are below it.
    folder: PathBuf,
    /// Part name and its file's name below the folder.
    /// Part name -> its file, relative to `folder` (`.` and empty components dropped, so two
    /// spellings of one file are one).
    parts: HashMap<String, String>,
}

impl ZipNumIndex {
    /// Opens `NAME.idx` and reads `NAME.loc` (one line per part: name, tab, file). A part's
    /// file must be a relative path inside the `.loc`'s folder, reached without links (an
    /// absolute path, as some tools write, is refused: the index's folder is its root).
    pub fn open(idx: &Path) -> Result<ZipNumIndex, LookupError> {
        let summary = SortedIndex::open(idx)?;
        let (_, _, loc, _) = paths(idx);
        let file = crate::layout::open_user_file(&loc)
            .map_err(|e| LookupError::Io { path: loc.clone(), source: io::Error::other(e) })?;
        // A bare `NAME.idx` has the empty path as its parent: its parts are in `.`.
        let folder = loc
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or(PathBuf::from("."), Path::to_path_buf);
        let mut parts = HashMap::new();
        for (n, line) in io::BufReader::new(file).take(1 << 20).lines().enumerate() {
            let line = line.map_err(|source| LookupError::Io { path: loc.clone(), source })?;
            let Some((name, rel)) = line.trim_end_matches('\r').split_once('\t') else {
                continue;
            };
            let rel = rel.trim();
            let inside = Path::new(rel).components().all(|c| {
                matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir)
            });
            if !inside || Path::new(rel).file_name().is_none() {
                return Err(LookupError::ZipNum {
                    path: loc.clone(),
                    place: format!("line {}", n + 1),
                    why: format!("part {name:?}: {rel:?} is not a file inside the index's folder"),
                });
            }
            let rel = normal_rel(rel);
            if parts.insert(name.to_string(), rel).is_some() {
                return Err(LookupError::ZipNum {
                    path: loc.clone(),
                    place: format!("line {}", n + 1),
                    why: format!("part {name:?} is named twice"),
                });
            }
        }
        Ok(ZipNumIndex { summary, folder, parts })
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
        Ok(BlockLines {
            index: self,
            summary,
            key: key.as_bytes().to_vec(),
            block: None,
            last: HashMap::new(),
        })
    }

    /// Every line, block after block.
    pub fn all_lines(&self) -> Result<BlockLines<'_>, LookupError> {
        let summary = self.summary.lines_from(0)?;
        Ok(BlockLines { index: self, summary, key: Vec::new(), block: None, last: HashMap::new() })
    }

    /// Where the block a summary line (its byte offset `line.at`) names lies.
    fn place(&self, line: &IndexLine) -> Result<BlockPlace, LookupError> {
        let bad = |why: String| self.bad(line.at, why);
        let text = String::from_utf8_lossy(&line.text);
        let fields: Vec<&str> = text.split('\t').collect();
        let [_, part, offset, length, ..] = fields[..] else {
            return Err(bad("not a summary line (KEY TIMESTAMP, part, offset, length)".into()));
        };
        let (Ok(offset), Ok(length)) = (offset.parse::<u64>(), length.parse::<u64>()) else {
            return Err(bad(format!("offset {offset:?} or length {length:?} is not a number")));
        };
        if length > MAX_BLOCK {
            return Err(bad(format!("a block of {length} bytes (at most {MAX_BLOCK} are read)")));
        }
        Ok(BlockPlace { part: part.to_string(), offset, length })
    }

    /// The block at `place` (named by the summary line at byte `at`), opened to be inflated
    /// as it is read.
    fn open_block(&self, place: &BlockPlace, at: u64) -> Result<OpenBlock, LookupError> {
        let Some(rel) = self.parts.get(&place.part) else {
            return Err(self.bad(at, format!("part {:?} is not in the .loc file", place.part)));
        };
        let path = self.folder.join(rel);
        let data = crate::layout::open_in(&self.folder, rel)
            .map_err(|e| LookupError::Io { path: path.clone(), source: io::Error::other(e) })?;
        let (offset, length) = (place.offset, place.length);
        let have =
            data.metadata().map_err(|source| LookupError::Io { path: path.clone(), source })?;
        if offset.checked_add(length).is_none_or(|end| end > have.len()) {
            let why =
                format!("{}: {length} bytes at offset {offset}: past its end", path.display());
            return Err(self.bad(at, why));
        }
        let raw = io::BufReader::with_capacity(1 << 16, FileRange::new(data, offset, length));
        // A block may be several gzip members (one per line, as some writers make them).
        let inflated = flate2::bufread::MultiGzDecoder::new(raw).take(MAX_BLOCK + 1);
        Ok(OpenBlock { lines: io::BufReader::with_capacity(1 << 16, inflated), path, offset, at })
    }

    fn bad(&self, at: u64, why: String) -> LookupError {
        LookupError::ZipNum {
            path: self.path().to_path_buf(),
            place: format!("the line at byte {at}"),
            why,
        }
    }
}

/// Where a block lies: its part, offset and length (compressed).
#[derive(Debug, Clone, PartialEq, Eq)]
struct BlockPlace {
    part: String,
    offset: u64,
    length: u64,
}

/// A block being read: inflated as its lines are taken, so memory holds one line, not the
/// block.
struct OpenBlock {
    lines: io::BufReader<io::Take<flate2::bufread::MultiGzDecoder<io::BufReader<FileRange<File>>>>>,
    path: PathBuf,
    /// The block's offset in its part (each of its lines is placed there).
    offset: u64,
    /// The summary line's byte offset.
    at: u64,
}

impl OpenBlock {
    /// The block's next non-empty line, or `None` at its end.
    fn next_line(&mut self, index: &ZipNumIndex) -> Result<Option<IndexLine>, LookupError> {
        let mut text = Vec::new();
        loop {
            text.clear();
            let n = (&mut self.lines)
                .take(MAX_INDEX_LINE as u64 + 1)
                .read_until(b'\n', &mut text)
                .map_err(|e| {
                    let why = format!(
                        "{}: the block at offset {}: {e}",
                        self.path.display(),
                        self.offset
                    );
                    index.bad(self.at, why)
                })?;
            if n == 0 {
                if self.lines.get_ref().limit() == 0 {
                    return Err(
                        index.bad(self.at, format!("the block inflates past {MAX_BLOCK} bytes"))
                    );
                }
                return Ok(None);
            }
            if text.last() == Some(&b'\n') {
                text.pop();
            } else if text.len() > MAX_INDEX_LINE {
                let why = format!("a line of the block longer than {MAX_INDEX_LINE} bytes");
                return Err(index.bad(self.at, why));
            }
            if !text.is_empty() {
                // A line of a block is placed by its block's offset (the part file's byte).
                return Ok(Some(IndexLine { at: self.offset, text }));
            }
        }
    }
}

/// The lines of one key (or every line, for an empty key) of a ZipNum index, block by block.
pub struct BlockLines<'a> {
    index: &'a ZipNumIndex,
    summary: KeyLines,
    key: Vec<u8>,
    /// The block being read.
    block: Option<OpenBlock>,
    /// The last block opened in each part: a summary line naming it again is skipped (its
    /// lines were given), one naming a block inside it refused.
    last: HashMap<String, BlockPlace>,
}

impl BlockLines<'_> {
    /// The current block's next line that can be given; `None` when the block is done.
    fn next_in_block(&mut self) -> Option<Result<IndexLine, LookupError>> {
        let block = self.block.as_mut()?;
        loop {
            let line = match block.next_line(self.index) {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.block = None;
                    return None;
                }
                Err(e) => {
                    self.block = None;
                    return Some(Err(e));
                }
            };
            let key = key_of(&line.text);
            match self.key.is_empty() || key == self.key.as_slice() {
                true => return Some(Ok(line)),
                // Past the key: nothing after it can match.
                false if key > self.key.as_slice() => {
                    self.block = None;
                    self.summary.stop();
                    return None;
                }
                false => {}
            }
        }
    }
}

impl Iterator for BlockLines<'_> {
    type Item = Result<IndexLine, LookupError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(line) = self.next_in_block() {
                return Some(line);
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
            let place = match self.index.place(&summary) {
                Ok(p) => p,
                Err(e) => return Some(Err(e)),
            };
            // Keyed by the part's file: parts of other names for one file share its blocks.
            let file = self.index.parts.get(&place.part).cloned().unwrap_or_default();
            match self.last.get(&file) {
                // Its lines were given: a block is inflated once however many lines name it.
                Some(last) if (last.offset, last.length) == (place.offset, place.length) => {
                    continue;
                }
                Some(last) if place.offset < last.offset.saturating_add(last.length) => {
                    let why = format!(
                        "the block at offset {} of part {:?} starts inside one read before it \
                         (at offset {}): the summary is not in block order",
                        place.offset, place.part, last.offset
                    );
                    return Some(Err(self.index.bad(summary.at, why)));
                }
                _ => {}
            }
            match self.index.open_block(&place, summary.at) {
                Ok(block) => self.block = Some(block),
                Err(e) => return Some(Err(e)),
            }
            self.last.insert(file, place);
        }
    }
}

/// `rel` (a path of normal components and `.`) with its `.` and empty components dropped.
fn normal_rel(rel: &str) -> String {
    let names: Vec<_> =
        Path::new(rel).components().map(|c| c.as_os_str().to_string_lossy()).collect();
    names.into_iter().filter(|n| n != ".").collect::<Vec<_>>().join("/")
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
        // A part reached through a link (a folder or the file itself) is refused too.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.cdx.gz"), b"").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.cdx.gz"), dir.path().join("l.cdx.gz"))
            .unwrap();
        for loc in ["all\tsub/x.cdx.gz\n", "all\tl.cdx.gz\n"] {
            std::fs::write(dir.path().join("all.loc"), loc).unwrap();
            std::fs::write(&idx, "com,a)/ 2024\tall\t0\t10\t1\n").unwrap();
            let z = ZipNumIndex::open(&idx).unwrap();
            let e = z.lines_of("com,a)/").unwrap().next().unwrap().expect_err("a link");
            assert!(e.to_string().contains("link"), "{loc:?}: {e}");
            std::fs::write(&idx, "com,a)/ 2024\tall\t0\t99999999999\t1\n").unwrap();
        }
        std::fs::write(dir.path().join("all.loc"), "all\t./all.cdx.gz\n").unwrap();
        std::fs::write(dir.path().join("all.cdx.gz"), b"").unwrap();
        let z = ZipNumIndex::open(&idx).unwrap();
        let e = z.lines_of("com,a)/").unwrap().next().unwrap().expect_err("too long");
        assert!(e.to_string().contains("a block of 99999999999 bytes"), "{e}");
    }

    /// Parts of several names (or spellings) for one file share its blocks: summary lines
    /// naming one block through each give its lines once, and a part named twice is refused.
    #[test]
    fn a_block_reached_through_aliased_parts_is_read_once() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"com,a)/ 2024 {\"url\": \"http://a.com/\"}\n").unwrap();
        let block = gz.finish().unwrap();
        std::fs::write(dir.path().join("x.cdx.gz"), &block).unwrap();
        let loc = "p1\tx.cdx.gz\np2\t./x.cdx.gz\np3\t.//x.cdx.gz\n";
        std::fs::write(dir.path().join("all.loc"), loc).unwrap();
        let idx = dir.path().join("all.idx");
        let len = block.len();
        let summary: String =
            (1..=3).map(|p| format!("com,a)/ 2024\tp{p}\t0\t{len}\t1\n")).collect();
        std::fs::write(&idx, summary).unwrap();
        let z = ZipNumIndex::open(&idx).unwrap();
        let lines: Vec<_> = z.lines_of("com,a)/").unwrap().collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].is_ok(), "{lines:?}");
        std::fs::write(dir.path().join("all.loc"), "p1\tx.cdx.gz\np1\ty.cdx.gz\n").unwrap();
        let Err(e) = ZipNumIndex::open(&idx) else { panic!("a part named twice is refused") };
        assert!(e.to_string().contains("named twice"), "{e}");
    }
}

/// A ZipNum index whose summary names one block many times, over the lines cdxj-indexer
/// writes for a corpus WARC.
#[cfg(test)]
mod block_tests {
    use std::io::Write;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::ZipNumIndex;
    use crate::test_support::{corpus, repo};

    /// The sorted CDXJ lines cdxj-indexer gives for the corpus's warcio example.
    fn example_lines(dir: &std::path::Path) -> Vec<String> {
        let name = "warcio-example.warc.gz";
        std::fs::copy(corpus().join("warc").join(name), dir.join(name)).unwrap();
        let o = Command::new(repo().join(".venv/bin/cdxj-indexer"))
            .current_dir(dir)
            .arg(name)
            .output()
            .expect("cdxj-indexer runs");
        assert!(o.status.success(), "cdxj-indexer: {}", String::from_utf8_lossy(&o.stderr));
        let mut lines: Vec<String> =
            String::from_utf8(o.stdout).expect("UTF-8").lines().map(str::to_string).collect();
        lines.sort();
        lines
    }

    fn filler(state: &mut u64, len: usize) -> String {
        (0..len)
            .map(|_| {
                *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                b"abcdefghijklmnopqrstuvwxyz234567"[(*state >> 59) as usize] as char
            })
            .collect()
    }

    /// 200 summary lines naming one block (of 20,000 lines) for the key looked up: the block
    /// is read once, so its lines come once each (not 200 times), in bounded time.
    #[test]
    fn a_block_named_by_many_summary_lines_is_read_once() {
        let tmp = tempfile::tempdir().unwrap();
        let lines = example_lines(tmp.path());
        let dir = tmp.path().join("zipnum");
        std::fs::create_dir_all(&dir).unwrap();
        let mut state = 7u64;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for i in 0..20_000 {
            let url = format!("http://aaaa.com/{i:06}/{}", filler(&mut state, 40));
            writeln!(gz, "com,aaaa)/{i:06} 20170101000000 {{\"url\": \"{url}\"}}").unwrap();
        }
        let wanted: Vec<&String> =
            lines.iter().filter(|l| l.starts_with("com,example)/ ")).collect();
        assert!(!wanted.is_empty(), "the example has lines for http://example.com/");
        for l in &wanted {
            writeln!(gz, "{l}").unwrap();
        }
        let block = gz.finish().unwrap();
        let first: Vec<&str> = wanted[0].splitn(3, ' ').take(2).collect();
        let line = format!("{}\tall\t0\t{}\t1\n", first.join(" "), block.len());
        std::fs::write(dir.join("all.cdx.gz"), &block).unwrap();
        std::fs::write(dir.join("all.loc"), "all\tall.cdx.gz\n").unwrap();
        std::fs::write(dir.join("all.idx"), line.repeat(200)).unwrap();
        let z = ZipNumIndex::open(&dir.join("all.idx")).unwrap();
        let started = Instant::now();
        let got: Vec<_> = z.lines_of("com,example)/").unwrap().map(|l| l.unwrap().text).collect();
        let took = started.elapsed();
        eprintln!(
            "{} KB block named 200 times: {} lines in {took:?}",
            block.len() >> 10,
            got.len()
        );
        assert_eq!(got.len(), wanted.len());
        assert!(took < Duration::from_secs(5), "{took:?}");
    }
}
