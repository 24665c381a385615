//! Several index files used as one: sorted CDXJ files and ZipNum indexes, each searched in
//! place, their lines of a key merged in line order.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use super::lookup::{IndexLine, LookupError, SortedIndex};
use super::zipnum_lookup::ZipNumIndex;

/// An index file of a set: sorted CDXJ (or CDX) lines, or a ZipNum index (`NAME.idx`).
pub enum IndexFile {
    /// Sorted lines, searched in place.
    Sorted(SortedIndex),
    /// A ZipNum index: its summary searched, its blocks read.
    ZipNum(ZipNumIndex),
}

/// The lines an [`IndexFile`] yields.
pub type Lines<'a> = Box<dyn Iterator<Item = Result<IndexLine, LookupError>> + 'a>;

impl IndexFile {
    /// Opens `path`: a ZipNum index when it ends in `.idx`, else sorted lines.
    pub fn open(path: &Path) -> Result<IndexFile, LookupError> {
        match path.extension().is_some_and(|e| e == "idx") {
            true => Ok(IndexFile::ZipNum(ZipNumIndex::open(path)?)),
            false => Ok(IndexFile::Sorted(SortedIndex::open(path)?)),
        }
    }

    /// The file's path (a ZipNum index's `.idx`).
    pub fn path(&self) -> &Path {
        match self {
            IndexFile::Sorted(s) => s.path(),
            IndexFile::ZipNum(z) => z.path(),
        }
    }

    /// The lines whose key is `key`, in order.
    pub fn lines_of(&self, key: &str) -> Result<Lines<'_>, LookupError> {
        Ok(match self {
            IndexFile::Sorted(s) => Box::new(s.lines_of(key)?),
            IndexFile::ZipNum(z) => Box::new(z.lines_of(key)?),
        })
    }

    /// Every line, in order.
    pub fn all_lines(&self) -> Result<Lines<'_>, LookupError> {
        Ok(match self {
            IndexFile::Sorted(s) => Box::new(s.all_lines()?),
            IndexFile::ZipNum(z) => Box::new(z.all_lines()?),
        })
    }
}

/// Several sorted index files used as one.
pub struct IndexSet {
    files: Vec<IndexFile>,
}

/// A line found in an [`IndexSet`], with the number of the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Which file of the set (its position among the files given).
    pub file: usize,
    /// The line.
    pub line: IndexLine,
}

impl IndexSet {
    /// Opens every index file.
    pub fn open(paths: &[PathBuf]) -> Result<IndexSet, LookupError> {
        let files = paths.iter().map(|p| IndexFile::open(p)).collect::<Result<_, _>>()?;
        Ok(IndexSet { files })
    }

    /// The files of the set.
    pub fn files(&self) -> &[IndexFile] {
        &self.files
    }

    /// The lines of `key` in every file, merged in line order (a line of an earlier file
    /// first among equal lines).
    pub fn lines_of(&self, key: &str) -> Result<MergedKeyLines<'_>, LookupError> {
        let mut heads = Vec::with_capacity(self.files.len());
        for f in &self.files {
            let mut lines = f.lines_of(key)?;
            let head = lines.next().transpose()?;
            heads.push((lines, head));
        }
        Ok(MergedKeyLines { heads })
    }
}

/// The lines of one key from several files, in merged order.
pub struct MergedKeyLines<'a> {
    heads: Vec<(Lines<'a>, Option<IndexLine>)>,
}

impl Iterator for MergedKeyLines<'_> {
    type Item = Result<Found, LookupError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut best: Option<usize> = None;
        for (i, (_, head)) in self.heads.iter().enumerate() {
            let Some(line) = head else { continue };
            let lower = best.is_none_or(|b| {
                let other = self.heads[b].1.as_ref().map(|l| &l.text);
                other.is_none_or(|o| line.text.cmp(o) == Ordering::Less)
            });
            if lower {
                best = Some(i);
            }
        }
        let file = best?;
        let (lines, head) = &mut self.heads[file];
        let next = match lines.next().transpose() {
            Ok(n) => n,
            Err(e) => return Some(Err(e)),
        };
        let line = std::mem::replace(head, next)?;
        Some(Ok(Found { file, line }))
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

    /// Several files merge in line order; equal lines come first from the earlier file.
    #[test]
    fn several_files_merge_in_order() {
        let a = index(&["k 1 {a}".into(), "k 3 {a}".into(), "m 1 {a}".into()]);
        let b = index(&["j 1 {b}".into(), "k 2 {b}".into(), "k 3 {a}".into()]);
        let set = IndexSet::open(&[a.path().into(), b.path().into()]).unwrap();
        let got: Vec<(usize, String)> = set
            .lines_of("k")
            .unwrap()
            .map(|f| {
                let f = f.unwrap();
                (f.file, String::from_utf8(f.line.text).unwrap())
            })
            .collect();
        let want = [(0, "k 1 {a}"), (1, "k 2 {b}"), (0, "k 3 {a}"), (1, "k 3 {a}")];
        assert_eq!(got, want.map(|(i, s)| (i, s.to_string())));
    }
}
