//! Items sorted in memory that does not grow with their number (a page listing's entries): items
//! are gathered up to `RUN_ENTRIES` (or `RUN_BYTES` by their caller's weight), sorted, and
//! written as a run (JSON lines) by the one external sort, `crate::external_sort`; reading
//! merges the runs. A
//! harvest of a million pages is listed in the memory of a few runs' heads, where holding every
//! entry to sort took about 900 bytes a page.

use std::cmp::Ordering;
use std::io;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::external_sort::{self, Held, JsonLines, Runs};

/// Entries held before they are sorted and spilled as a run.
const RUN_ENTRIES: usize = 10_000;
/// Bytes of text held before they are spilled (titles and URLs may be long).
const RUN_BYTES: usize = 8 << 20;
/// Bytes of each run's read and write buffer.
const RUN_BUFFER: usize = 8 << 10;

/// Sorted items; see the module documentation.
#[derive(Debug)]
pub struct SortedRuns<T: Serialize + DeserializeOwned> {
    /// Items not yet in a run (sorted once [`SortedRuns::finish`] is called).
    held: Vec<T>,
    held_bytes: usize,
    runs: Runs<JsonLines<T>>,
    len: u64,
    order: fn(&T, &T) -> Ordering,
    /// About how many bytes an item holds.
    weight: fn(&T) -> usize,
}

impl<T: Serialize + DeserializeOwned + Clone> SortedRuns<T> {
    /// Empty, to be sorted by `order`; `weight` says about how many bytes an item holds.
    pub(crate) fn new(order: fn(&T, &T) -> Ordering, weight: fn(&T) -> usize) -> Self {
        let runs = Runs::new(JsonLines::default(), order, RUN_BUFFER);
        SortedRuns { held: Vec::new(), held_bytes: 0, runs, len: 0, order, weight }
    }

    /// Adds an entry; spills a run when enough are held.
    pub(crate) fn push(&mut self, e: T) -> io::Result<()> {
        self.held_bytes += (self.weight)(&e);
        self.held.push(e);
        self.len += 1;
        if self.held.len() >= RUN_ENTRIES || self.held_bytes >= RUN_BYTES {
            self.held.sort_by(self.order);
            self.runs.spill(&self.held)?;
            self.held = Vec::new();
            self.held_bytes = 0;
        }
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
    pub fn iter(&self) -> MergedItems<'_, T> {
        let held: Held<'_, T> = Box::new(self.held.iter().cloned());
        MergedItems(self.runs.merged(vec![held]))
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

/// The merged items of a [`SortedRuns`].
pub struct MergedItems<'a, T: Serialize + DeserializeOwned>(
    external_sort::Merged<'a, JsonLines<T>>,
);

impl<T: Serialize + DeserializeOwned> Iterator for MergedItems<'_, T> {
    type Item = io::Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
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
        for n in 0..(RUN_ENTRIES * external_sort::MAX_RUNS) as u64 {
            let item = (format!("k{}", (n * 104729) % 9973), n + 1_000_000);
            all.push(item.clone());
            sorted.push(item).unwrap();
        }
        sorted.finish();
        all.sort_by(by_key);
        assert!(sorted.runs.len() < external_sort::MAX_RUNS, "{} runs open", sorted.runs.len());
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
