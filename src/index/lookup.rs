//! Look-ups in sorted CDXJ files without reading them whole.
//!
//! A CDXJ index sorted bytewise (`LC_ALL=C sort`, as `webaip index` and cdxj-indexer with
//! `sort` write it) is searched by byte offset: a probe seeks into the file, skips to the next
//! line end and compares that line's key; about `log2(file size)` probes of a few KiB find the
//! first line of a key, and the lines of the key are then read forward. Memory holds one
//! line per file at a time, whatever the index's size.
//!
//! A ZipNum index ([`super::zipnum_lookup`]) is searched the same way in its summary (`.idx`).
//! Several index files are used together ([`super::set`]): adding a package adds its own
//! sorted file, and a look-up merges each file's matches in line order, as if the files were
//! one.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::cdxj::{CdxjLineError, IndexEntry};

/// Longest index line read (a line with a very long URL is a few KiB).
pub const MAX_INDEX_LINE: usize = 1 << 20;

/// Bytes read per probe.
const PROBE: usize = 8 * 1024;

/// Why an index cannot be searched.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// The index file cannot be opened or read.
    #[error("index {}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The index file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// A line is longer than `MAX_INDEX_LINE`.
    #[error("index {}: a line at byte {at} is longer than {} bytes", path.display(), MAX_INDEX_LINE)]
    LineTooLong {
        /// The index file.
        path: PathBuf,
        /// Where the line starts.
        at: u64,
    },
    /// A ZipNum index's summary or location file names what cannot be read.
    #[error("ZipNum index {}: {place}: {why}", path.display())]
    ZipNum {
        /// The `.idx` or `.loc` file.
        path: PathBuf,
        /// Where in it (`line N` of a `.loc`, `the line at byte N` of a summary).
        place: String,
        /// What is wrong.
        why: String,
    },
    /// A line that is not a CDXJ line.
    #[error("index {}: the line at byte {at} {source}", path.display())]
    Line {
        /// The index file.
        path: PathBuf,
        /// Where the line starts.
        at: u64,
        /// Why it is not one.
        #[source]
        source: CdxjLineError,
    },
}

/// One sorted CDXJ file, searched in place.
pub struct SortedIndex {
    path: PathBuf,
    file: File,
    len: u64,
}

/// The key of a line: its bytes up to the first space (the whole line when it has none).
pub(crate) fn key_of(line: &[u8]) -> &[u8] {
    line.split(|&b| b == b' ').next().unwrap_or(line)
}

impl SortedIndex {
    /// Opens an index file (a path the user gave: links are followed, only a regular file is
    /// read).
    pub fn open(path: &Path) -> Result<SortedIndex, LookupError> {
        let io_err = |source| LookupError::Io { path: path.into(), source };
        let file = crate::layout::open_user_file(path).map_err(|e| io_err(io::Error::other(e)))?;
        let len = file.metadata().map_err(io_err)?.len();
        Ok(SortedIndex { path: path.into(), file, len })
    }

    /// The index file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, source: io::Error) -> LookupError {
        LookupError::Io { path: self.path.clone(), source }
    }

    /// The first line starting at or after `at` (the start of the file, or just past a line
    /// end at `at - 1` or later): its start and bytes without the line end, or `None` past
    /// the last line.
    fn line_from(&self, at: u64) -> Result<Option<(u64, Vec<u8>)>, LookupError> {
        let mut pos = at.saturating_sub(1);
        let mut start = (at == 0).then_some(0u64);
        let mut line = Vec::new();
        let mut buf = vec![0u8; PROBE];
        while pos < self.len {
            let n = self.file.read_at(&mut buf, pos).map_err(|e| self.io(e))?;
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            let mut rest = chunk;
            if start.is_none() {
                match memchr::memchr(b'\n', chunk) {
                    Some(i) => {
                        start = Some(pos + i as u64 + 1);
                        rest = &chunk[i + 1..];
                    }
                    None => {
                        pos += n as u64;
                        continue;
                    }
                }
            }
            let s = start.unwrap_or(pos);
            if let Some(i) = memchr::memchr(b'\n', rest) {
                line.extend_from_slice(&rest[..i]);
                return Ok(Some((s, line)));
            }
            line.extend_from_slice(rest);
            if line.len() > MAX_INDEX_LINE {
                return Err(LookupError::LineTooLong { path: self.path.clone(), at: s });
            }
            pos += n as u64;
        }
        // A last line without its line end.
        Ok(start.filter(|&s| s < self.len).map(|s| (s, line)))
    }

    /// The offset of the first line whose key is not below `key` (the file's length when
    /// every key is below it): a binary search over byte offsets.
    pub(crate) fn first_at_or_after(&self, key: &[u8]) -> Result<u64, LookupError> {
        let (mut lo, mut hi) = (0u64, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let at_or_after = match self.line_from(mid)? {
                Some((_, line)) => key_of(&line) >= key,
                None => true,
            };
            if at_or_after {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(self.line_from(lo)?.map_or(self.len, |(s, _)| s))
    }

    /// The lines whose key is `key`, in file order, read forward from the first of them.
    pub fn lines_of(&self, key: &str) -> Result<KeyLines, LookupError> {
        let start = self.first_at_or_after(key.as_bytes())?;
        let mut file = self.file.try_clone().map_err(|e| self.io(e))?;
        file.seek(SeekFrom::Start(start)).map_err(|e| self.io(e))?;
        Ok(KeyLines {
            path: self.path.clone(),
            reader: BufReader::with_capacity(PROBE, file),
            key: key.as_bytes().to_vec(),
            at: start,
            done: false,
        })
    }

    /// Every line of the file, in order (for look-ups the sort order does not serve, such as
    /// by record id).
    pub fn all_lines(&self) -> Result<KeyLines, LookupError> {
        self.lines_from(0)
    }

    /// Every line from the one starting at `start` (a line's start) to the end, in order.
    pub(crate) fn lines_from(&self, start: u64) -> Result<KeyLines, LookupError> {
        let mut file = self.file.try_clone().map_err(|e| self.io(e))?;
        file.seek(SeekFrom::Start(start)).map_err(|e| self.io(e))?;
        Ok(KeyLines {
            path: self.path.clone(),
            reader: BufReader::with_capacity(64 * 1024, file),
            key: Vec::new(),
            at: start,
            done: false,
        })
    }

    /// The start of the line that ends just before `at` (a line's start), `None` when `at`
    /// is the first line's: the line end at `at - 1` is skipped, and the one before it (or
    /// the file's start) is searched for backwards, a probe at a time.
    pub(crate) fn line_start_before(&self, at: u64) -> Result<Option<u64>, LookupError> {
        if at == 0 {
            return Ok(None);
        }
        let mut end = at - 1;
        let mut buf = vec![0u8; PROBE];
        while end > 0 {
            let from = end.saturating_sub(PROBE as u64);
            let chunk = &mut buf[..(end - from) as usize];
            self.file.read_exact_at(chunk, from).map_err(|e| self.io(e))?;
            if let Some(i) = memchr::memrchr(b'\n', chunk) {
                return Ok(Some(from + i as u64 + 1));
            }
            if at - from > MAX_INDEX_LINE as u64 {
                return Err(LookupError::LineTooLong { path: self.path.clone(), at: from });
            }
            end = from;
        }
        Ok(Some(0))
    }
}

/// One line read from an index: where it starts and its text (without the line end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexLine {
    /// Its byte offset in the index file.
    pub at: u64,
    /// Its bytes.
    pub text: Vec<u8>,
}

impl IndexLine {
    /// The line parsed.
    pub fn entry(&self, path: &Path) -> Result<IndexEntry, LookupError> {
        let line = |source| LookupError::Line { path: path.into(), at: self.at, source };
        let text = std::str::from_utf8(&self.text)
            .map_err(|_| line(CdxjLineError::Json("not UTF-8".into())))?;
        IndexEntry::parse_cdxj(text).map_err(line)
    }
}

/// The lines of one key of one index file (or every line, for an empty key), read forward.
pub struct KeyLines {
    path: PathBuf,
    reader: BufReader<File>,
    key: Vec<u8>,
    at: u64,
    done: bool,
}

impl KeyLines {
    /// Ends the iteration: no line is read after this.
    pub(crate) fn stop(&mut self) {
        self.done = true;
    }

    fn read_line(&mut self) -> Result<Option<IndexLine>, LookupError> {
        let mut text = Vec::new();
        let limit = (MAX_INDEX_LINE + 1) as u64;
        let n = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut text)
            .map_err(|source| LookupError::Io { path: self.path.clone(), source })?;
        if n == 0 {
            return Ok(None);
        }
        if text.last() == Some(&b'\n') {
            text.pop();
        } else if n as u64 == limit {
            return Err(LookupError::LineTooLong { path: self.path.clone(), at: self.at });
        }
        let line = IndexLine { at: self.at, text };
        self.at += n as u64;
        Ok(Some(line))
    }
}

impl Iterator for KeyLines {
    type Item = Result<IndexLine, LookupError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let line = match self.read_line() {
            Ok(Some(l)) => l,
            Ok(None) => {
                self.done = true;
                return None;
            }
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        if !self.key.is_empty() && key_of(&line.text) != self.key.as_slice() {
            self.done = true;
            return None;
        }
        Some(Ok(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn index(lines: &[String]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
        f
    }

    fn keys_of(lines: KeyLines) -> Vec<String> {
        lines.map(|l| String::from_utf8(l.unwrap().text).unwrap()).collect()
    }

    /// Every key of a file, first, last and absent ones included, finds exactly its lines,
    /// with lines longer than a probe among them.
    #[test]
    fn every_key_finds_its_lines() {
        let mut lines = Vec::new();
        for k in 0..300u32 {
            for t in 0..(k % 4) {
                let pad = if k % 17 == 0 { "x".repeat(PROBE * 2) } else { String::new() };
                lines.push(format!("k{k:04} 2020{t:02} {{{pad}}}"));
            }
        }
        lines.sort();
        let f = index(&lines);
        let idx = SortedIndex::open(f.path()).unwrap();
        for k in 0..300u32 {
            let key = format!("k{k:04}");
            let want: Vec<&String> =
                lines.iter().filter(|l| key_of(l.as_bytes()) == key.as_bytes()).collect();
            let got = keys_of(idx.lines_of(&key).unwrap());
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "{key}");
        }
        for absent in ["a", "k0000a", "k0299z", "z", "k"] {
            assert!(keys_of(idx.lines_of(absent).unwrap()).is_empty(), "{absent}");
        }
    }

    /// A key that is a prefix of another does not find the other's lines; a last line without
    /// its line end is read; an empty file finds nothing.
    #[test]
    fn prefixes_last_lines_and_empty_files() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        write!(f, "com,a)/ 1 {{}}\ncom,a)/b 1 {{}}\ncom,a)/b 2 {{}}").unwrap();
        let idx = SortedIndex::open(f.path()).unwrap();
        assert_eq!(keys_of(idx.lines_of("com,a)/").unwrap()), ["com,a)/ 1 {}"]);
        assert_eq!(keys_of(idx.lines_of("com,a)/b").unwrap()), ["com,a)/b 1 {}", "com,a)/b 2 {}"]);
        let empty = tempfile::NamedTempFile::new().unwrap();
        let idx = SortedIndex::open(empty.path()).unwrap();
        assert!(keys_of(idx.lines_of("x").unwrap()).is_empty());
    }
}
