//! Look-ups in a ZipNum index (`zipnum` writes one): its summary (`NAME.idx`) is a sorted
//! file searched in place ([`SortedIndex`]); only the blocks that can hold the key are read
//! from the part files its `.loc` names, and decompressed one at a time.

use std::io::{self, BufRead, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::lookup::{IndexLine, KeyLines, LookupError, SortedIndex, key_of};
use super::zipnum::paths;

/// Largest block read (compressed, and its lines decompressed): a block holds a few thousand
/// lines; a summary line naming more is refused rather than read.
const MAX_BLOCK: u64 = 64 << 20;

/// A ZipNum index opened for look-ups: its summary (`.idx`) searched in place as a sorted
/// file, and its parts (`.loc`) resolved beside it; a look-up decompresses only the blocks
/// that can hold the key.
pub struct ZipNumIndex {
    summary: SortedIndex,
    /// The `.loc`'s folder: the part files are below it.
    folder: PathBuf,
    /// Part name and its file's name below the folder.
    parts: Vec<(String, String)>,
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
        let folder = loc.parent().map_or(PathBuf::from("."), Path::to_path_buf);
        let mut parts = Vec::new();
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
            parts.push((name.to_string(), rel.to_string()));
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
        Ok(BlockLines { index: self, summary, key: key.as_bytes().to_vec(), block: Vec::new() })
    }

    /// Every line, block after block.
    pub fn all_lines(&self) -> Result<BlockLines<'_>, LookupError> {
        let summary = self.summary.lines_from(0)?;
        Ok(BlockLines { index: self, summary, key: Vec::new(), block: Vec::new() })
    }

    /// The lines of the block a summary line (its byte offset `line.at`) names.
    fn block(&self, line: &IndexLine) -> Result<Vec<IndexLine>, LookupError> {
        let bad = |why: String| LookupError::ZipNum {
            path: self.path().to_path_buf(),
            place: format!("the line at byte {}", line.at),
            why,
        };
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
        let Some((_, rel)) = self.parts.iter().find(|(n, _)| n == part) else {
            return Err(bad(format!("part {part:?} is not in the .loc file")));
        };
        let path = self.folder.join(rel);
        let data = crate::layout::open_in(&self.folder, rel)
            .map_err(|e| LookupError::Io { path: path.clone(), source: io::Error::other(e) })?;
        let mut member = vec![0u8; length as usize];
        data.read_exact_at(&mut member, offset).map_err(|e| {
            bad(format!("{}: {length} bytes at offset {offset}: {e}", path.display()))
        })?;
        let mut lines = Vec::new();
        // A block may be several gzip members (one per line, as some writers make them).
        flate2::read::MultiGzDecoder::new(&member[..])
            .take(MAX_BLOCK + 1)
            .read_to_end(&mut lines)
            .map_err(|e| bad(format!("{}: the block at offset {offset}: {e}", path.display())))?;
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
}
