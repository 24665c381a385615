//! The entries of a page listing, sorted by URL then capture date, in memory that does not grow
//! with their number: entries are gathered up to [`RUN_ENTRIES`] (or [`RUN_BYTES`]), sorted,
//! and written as a run to an anonymous temporary file (JSON lines); reading merges the runs.
//! A harvest of a million pages is listed in the memory of a few runs' heads, where holding
//! every entry to sort took about 900 bytes a page.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};

use chrono::DateTime;
use serde::Serialize;

use super::list::PageEntry;
use crate::formats::segment::FileRange;

/// Entries held before they are sorted and spilled as a run.
const RUN_ENTRIES: usize = 10_000;
/// Bytes of text held before they are spilled (titles and URLs may be long).
const RUN_BYTES: usize = 8 << 20;

/// The order of a listing: URL, then capture time (as a time, then as written), then place.
pub(crate) fn order(a: &PageEntry, b: &PageEntry) -> Ordering {
    let date = |e: &PageEntry| DateTime::parse_from_rfc3339(&e.captured).ok();
    (a.url.as_str(), date(a), a.captured.as_str(), &a.place.file, a.place.offset).cmp(&(
        b.url.as_str(),
        date(b),
        b.captured.as_str(),
        &b.place.file,
        b.place.offset,
    ))
}

/// Sorted page entries; see the module documentation.
#[derive(Debug, Default)]
pub struct SortedEntries {
    /// Entries not yet in a run (sorted once [`SortedEntries::finish`] is called).
    held: Vec<PageEntry>,
    held_bytes: usize,
    /// Sorted runs: the file and its length.
    runs: Vec<(File, u64)>,
    len: u64,
}

fn text_bytes(e: &PageEntry) -> usize {
    let title = e.title.as_ref().map_or(0, String::len);
    e.url.len() + e.captured.len() + e.mime.len() + title + e.place.file.len() + 96
}

impl SortedEntries {
    /// Adds an entry; spills a run when enough are held.
    pub(crate) fn push(&mut self, e: PageEntry) -> io::Result<()> {
        self.held_bytes += text_bytes(&e);
        self.held.push(e);
        self.len += 1;
        if self.held.len() >= RUN_ENTRIES || self.held_bytes >= RUN_BYTES {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        self.held.sort_by(order);
        let mut out = io::BufWriter::new(tempfile::tempfile()?);
        for e in self.held.drain(..) {
            serde_json::to_writer(&mut out, &e)?;
            out.write_all(b"\n")?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        let len = file.metadata()?.len();
        self.runs.push((file, len));
        self.held = Vec::new();
        self.held_bytes = 0;
        Ok(())
    }

    /// Sorts what is held: the entries are complete.
    pub(crate) fn finish(&mut self) {
        self.held.sort_by(order);
    }

    /// How many entries there are.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in order (runs merged with those held); may be read any number of times.
    pub fn iter(&self) -> Entries<'_> {
        let mut sources: Vec<Source<'_>> = self
            .runs
            .iter()
            .map(|(f, len)| Source::Run(BufReader::new(FileRange::new(f, 0, *len))))
            .collect();
        sources.push(Source::Held(self.held.iter()));
        let mut merge = Entries { sources, heap: BinaryHeap::new(), failed: None };
        for i in 0..merge.sources.len() {
            merge.refill(i);
        }
        merge
    }

    /// How many distinct URLs the entries have (they come sorted by URL).
    pub(crate) fn distinct_urls(&self) -> io::Result<u64> {
        let mut last: Option<String> = None;
        let mut n = 0;
        for e in self.iter() {
            let e = e?;
            if last.as_deref() != Some(e.url.as_str()) {
                n += 1;
                last = Some(e.url);
            }
        }
        Ok(n)
    }
}

impl Serialize for SortedEntries {
    /// As a sequence, written as it is merged.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(usize::try_from(self.len).ok())?;
        for e in self.iter() {
            seq.serialize_element(&e.map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

enum Source<'a> {
    Run(BufReader<FileRange<&'a File>>),
    Held(std::slice::Iter<'a, PageEntry>),
}

/// The head of one source, ordered so that the heap's top is the least entry.
struct Head(PageEntry, usize);

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap. Equal entries keep their sources' order.
        order(&other.0, &self.0).then(other.1.cmp(&self.1))
    }
}

/// The merged entries of a [`SortedEntries`].
pub struct Entries<'a> {
    sources: Vec<Source<'a>>,
    heap: BinaryHeap<Head>,
    failed: Option<io::Error>,
}

impl Entries<'_> {
    fn refill(&mut self, i: usize) {
        let next = match &mut self.sources[i] {
            Source::Held(it) => it.next().cloned().map(Ok),
            Source::Run(r) => {
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) => None,
                    Ok(_) => Some(serde_json::from_str(&line).map_err(io::Error::from)),
                    Err(e) => Some(Err(e)),
                }
            }
        };
        match next {
            Some(Ok(e)) => self.heap.push(Head(e, i)),
            Some(Err(e)) => self.failed = Some(e),
            None => {}
        }
    }
}

impl Iterator for Entries<'_> {
    type Item = io::Result<PageEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.failed.take() {
            self.heap.clear();
            return Some(Err(e));
        }
        let Head(e, i) = self.heap.pop()?;
        self.refill(i);
        Some(Ok(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::list::Place;

    fn entry(url: &str, captured: &str, n: u64) -> PageEntry {
        PageEntry {
            url: url.into(),
            captured: captured.into(),
            size: n,
            status: Some(200),
            mime: "text/html".into(),
            title: Some(format!("t{n}")),
            place: Place { file: "f".into(), offset: Some(n), offset_in_member: None },
        }
    }

    #[test]
    fn runs_merge_into_the_order_of_one_sort() {
        let mut all = Vec::new();
        let mut sorted = SortedEntries::default();
        // Enough for three runs and some held; URLs and dates out of order, some repeated.
        for n in 0..(RUN_ENTRIES as u64 * 3 + 17) {
            let url = format!("http://e.org/{}", (n * 7919) % 4001);
            let captured = format!("2024-01-{:02}T00:00:00Z", 1 + (n * 31) % 28);
            let e = entry(&url, &captured, n);
            all.push(e.clone());
            sorted.push(e).unwrap();
        }
        sorted.finish();
        all.sort_by(order);
        assert_eq!(sorted.runs.len(), 3);
        let merged: Vec<PageEntry> = sorted.iter().map(Result::unwrap).collect();
        assert!(merged == all, "merged order differs from one sort");
        // Read again: the same.
        assert_eq!(sorted.iter().count(), all.len());
        let mut urls: Vec<&str> = all.iter().map(|e| e.url.as_str()).collect();
        urls.dedup();
        assert_eq!(sorted.distinct_urls().unwrap(), urls.len() as u64);
        let json = serde_json::to_value(&sorted).unwrap();
        assert_eq!(json.as_array().unwrap().len(), all.len());
    }
}
