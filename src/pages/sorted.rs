//! Items sorted in memory that does not grow with their number (a page listing's entries): items
//! are gathered up to `RUN_ENTRIES` (or `RUN_BYTES` by their caller's weight), sorted, and
//! written as a run to an anonymous temporary file (JSON lines); reading merges the runs. A
//! harvest of a million pages is listed in the memory of a few runs' heads, where holding every
//! entry to sort took about 900 bytes a page.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::formats::segment::FileRange;

/// Entries held before they are sorted and spilled as a run.
const RUN_ENTRIES: usize = 10_000;
/// Bytes of text held before they are spilled (titles and URLs may be long).
const RUN_BYTES: usize = 8 << 20;
/// Runs kept open at most: past this they are merged into one (each holds a file open; the
/// limit on open files is often 1,024).
const MAX_RUNS: usize = 64;

/// Sorted items; see the module documentation.
#[derive(Debug)]
pub struct SortedRuns<T> {
    /// Items not yet in a run (sorted once [`SortedRuns::finish`] is called).
    held: Vec<T>,
    held_bytes: usize,
    /// Sorted runs: the file and its length.
    runs: Vec<(File, u64)>,
    len: u64,
    order: fn(&T, &T) -> Ordering,
    /// About how many bytes an item holds.
    weight: fn(&T) -> usize,
}

impl<T: Serialize + DeserializeOwned + Clone> SortedRuns<T> {
    /// Empty, to be sorted by `order`; `weight` says about how many bytes an item holds.
    pub(crate) fn new(order: fn(&T, &T) -> Ordering, weight: fn(&T) -> usize) -> Self {
        SortedRuns { held: Vec::new(), held_bytes: 0, runs: Vec::new(), len: 0, order, weight }
    }

    /// Adds an entry; spills a run when enough are held.
    pub(crate) fn push(&mut self, e: T) -> io::Result<()> {
        self.held_bytes += (self.weight)(&e);
        self.held.push(e);
        self.len += 1;
        if self.held.len() >= RUN_ENTRIES || self.held_bytes >= RUN_BYTES {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        self.held.sort_by(self.order);
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
        if self.runs.len() >= MAX_RUNS {
            self.merge_runs()?;
        }
        Ok(())
    }

    /// Merges every run into one (nothing is held when called).
    fn merge_runs(&mut self) -> io::Result<()> {
        let mut out = io::BufWriter::new(tempfile::tempfile()?);
        for item in self.iter() {
            serde_json::to_writer(&mut out, &item?)?;
            out.write_all(b"\n")?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        let len = file.metadata()?.len();
        self.runs = vec![(file, len)];
        Ok(())
    }

    /// Sorts what is held: the entries are complete.
    pub(crate) fn finish(&mut self) {
        self.held.sort_by(self.order);
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
    pub fn iter(&self) -> Merged<'_, T> {
        let mut sources: Vec<Source<'_, T>> = self
            .runs
            .iter()
            .map(|(f, len)| Source::Run(BufReader::new(FileRange::new(f, 0, *len))))
            .collect();
        sources.push(Source::Held(self.held.iter()));
        let mut merge =
            Merged { sources, heap: BinaryHeap::new(), failed: None, order: self.order };
        for i in 0..merge.sources.len() {
            merge.refill(i);
        }
        merge
    }
}

impl<T: Serialize + DeserializeOwned + Clone> Serialize for SortedRuns<T> {
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

enum Source<'a, T> {
    Run(BufReader<FileRange<&'a File>>),
    Held(std::slice::Iter<'a, T>),
}

/// The head of one source, ordered so that the heap's top is the least item.
struct Head<T>(T, usize, fn(&T, &T) -> Ordering);

impl<T> PartialEq for Head<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T> Eq for Head<T> {}
impl<T> PartialOrd for Head<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Head<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap. Equal items keep their sources' order.
        (self.2)(&other.0, &self.0).then(other.1.cmp(&self.1))
    }
}

/// The merged items of a [`SortedRuns`].
pub struct Merged<'a, T> {
    sources: Vec<Source<'a, T>>,
    heap: BinaryHeap<Head<T>>,
    failed: Option<io::Error>,
    order: fn(&T, &T) -> Ordering,
}

impl<T: DeserializeOwned + Clone> Merged<'_, T> {
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
            Some(Ok(e)) => self.heap.push(Head(e, i, self.order)),
            Some(Err(e)) => self.failed = Some(e),
            None => {}
        }
    }
}

impl<T: DeserializeOwned + Clone> Iterator for Merged<'_, T> {
    type Item = io::Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.failed.take() {
            self.heap.clear();
            return Some(Err(e));
        }
        let Head(e, i, _) = self.heap.pop()?;
        self.refill(i);
        Some(Ok(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Item = (String, u64);

    fn by_key(a: &Item, b: &Item) -> Ordering {
        a.0.cmp(&b.0)
    }

    #[test]
    fn runs_merge_into_the_order_of_one_stable_sort() {
        let mut all = Vec::new();
        let mut sorted = SortedRuns::new(by_key, |i: &Item| i.0.len());
        // Enough for three runs and some held; keys out of order, many repeated.
        for n in 0..(RUN_ENTRIES as u64 * 3 + 17) {
            let item = (format!("k{}", (n * 7919) % 4001), n);
            all.push(item.clone());
            sorted.push(item).unwrap();
        }
        sorted.finish();
        all.sort_by(by_key);
        assert_eq!(sorted.runs.len(), 3);
        check(&sorted, &all);
        // Past MAX_RUNS runs, they are merged into one: still the same order.
        for n in 0..(RUN_ENTRIES * MAX_RUNS) as u64 {
            let item = (format!("k{}", (n * 104729) % 9973), n + 1_000_000);
            all.push(item.clone());
            sorted.push(item).unwrap();
        }
        sorted.finish();
        all.sort_by(by_key);
        assert!(sorted.runs.len() < MAX_RUNS, "{} runs open", sorted.runs.len());
        check(&sorted, &all);
    }

    fn check(sorted: &SortedRuns<Item>, all: &[Item]) {
        let merged: Vec<Item> = sorted.iter().map(Result::unwrap).collect();
        assert!(merged == *all, "merged order differs from one stable sort");
        // Read again: the same.
        assert_eq!(sorted.iter().count(), all.len());
        let json = serde_json::to_value(sorted).unwrap();
        assert_eq!(json.as_array().unwrap().len(), all.len());
    }
}
