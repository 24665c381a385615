//! External sort, the one home of it: items are held up to a budget by their owner, sorted
//! and spilled as a run to an anonymous temporary file ([`Runs`]); reading merges the runs
//! (and what is still held) k ways ([`Merged`]). Past [`MAX_RUNS`] runs, they are merged into
//! one, so that a sort holds a bounded number of files open and of read buffers in memory
//! whatever its size.
//!
//! What differs between sorts stays with them: how an item is written in a run
//! ([`RunFormat`]), its order, how memory is counted and what is held (index lines in one
//! buffer, digest entries, page-listing entries), and whether equal items are kept.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

use crate::formats::segment::FileRange;

/// Runs kept at most: past this they are merged into one (each holds a file open, and a read
/// buffer while merged; the limit on open files is often 1,024).
pub(crate) const MAX_RUNS: usize = 64;

/// How items are written in a run and read back.
pub(crate) trait RunFormat {
    /// The items sorted.
    type Item;
    /// Writes one item.
    fn write(&self, item: &Self::Item, w: &mut dyn Write) -> io::Result<()>;
    /// Reads the next item; `None` at the end of the run.
    fn read(&self, r: &mut dyn BufRead) -> io::Result<Option<Self::Item>>;
}

/// One spilled run: its file and length (read through a range, so that it can be read again).
#[derive(Debug)]
struct RunFile {
    file: File,
    len: u64,
}

/// Sorted runs spilled to anonymous temporary files.
#[derive(Debug)]
pub(crate) struct Runs<F: RunFormat> {
    format: F,
    order: fn(&F::Item, &F::Item) -> Ordering,
    /// Bytes of each run's read and write buffer.
    buffer: usize,
    files: Vec<RunFile>,
}

impl<F: RunFormat> Runs<F> {
    /// No runs yet, of items in `order`, read and written through buffers of `buffer` bytes.
    pub(crate) fn new(format: F, order: fn(&F::Item, &F::Item) -> Ordering, buffer: usize) -> Self {
        Runs { format, order, buffer, files: Vec::new() }
    }

    /// Runs spilled and kept.
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    /// Writes a run of items already in order (`write` writes them); past [`MAX_RUNS`] runs,
    /// merges them into one.
    pub(crate) fn spill_with(
        &mut self,
        write: impl FnOnce(&F, &mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut out = BufWriter::with_capacity(self.buffer, tempfile::tempfile()?);
        write(&self.format, &mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        let len = file.metadata()?.len();
        self.files.push(RunFile { file, len });
        if self.files.len() >= MAX_RUNS {
            self.merge_into_one()?;
        }
        Ok(())
    }

    /// Writes `sorted` (items in order) as a run.
    pub(crate) fn spill<'a>(
        &mut self,
        sorted: impl IntoIterator<Item = &'a F::Item>,
    ) -> io::Result<()>
    where
        F::Item: 'a,
    {
        self.spill_with(|format, w| sorted.into_iter().try_for_each(|item| format.write(item, w)))
    }

    /// Takes the runs of `other` (of the same format and order) after its own.
    pub(crate) fn absorb(&mut self, other: Runs<F>) -> io::Result<()> {
        self.files.extend(other.files);
        if self.files.len() >= MAX_RUNS {
            self.merge_into_one()?;
        }
        Ok(())
    }

    /// Merges every run into one.
    fn merge_into_one(&mut self) -> io::Result<()> {
        let mut out = BufWriter::with_capacity(self.buffer, tempfile::tempfile()?);
        for item in self.merged(Vec::new()) {
            self.format.write(&item?, &mut out)?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        let len = file.metadata()?.len();
        self.files = vec![RunFile { file, len }];
        Ok(())
    }

    /// The runs' items merged in order with `held` (sources of items in order, still in
    /// memory, after the runs). Equal items come in their sources' order: runs first, in the
    /// order spilled. May be called any number of times.
    pub(crate) fn merged<'a>(&'a self, held: Vec<Held<'a, F::Item>>) -> Merged<'a, F> {
        let runs = self.files.iter().map(|r| {
            let range = FileRange::new(&r.file, 0, r.len);
            Source::Run(BufReader::with_capacity(self.buffer, range))
        });
        let sources = runs.chain(held.into_iter().map(Source::Held)).collect();
        Merged {
            format: &self.format,
            order: self.order,
            sources,
            heap: BinaryHeap::new(),
            started: false,
            failed: None,
        }
    }
}

/// Items held in memory, in order: a source of a merge beside the runs.
pub(crate) type Held<'a, T> = Box<dyn Iterator<Item = T> + 'a>;

/// Where a merge reads items from.
enum Source<'a, T> {
    Run(BufReader<FileRange<&'a File>>),
    Held(Held<'a, T>),
}

/// The head of one source, ordered so that the heap's top is the least item, then the
/// earliest source.
struct Head<T> {
    item: T,
    source: usize,
    order: fn(&T, &T) -> Ordering,
}

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
        // Reversed: BinaryHeap is a max-heap.
        (self.order)(&other.item, &self.item).then(other.source.cmp(&self.source))
    }
}

/// The items of several sorted sources, merged in order.
pub(crate) struct Merged<'a, F: RunFormat> {
    format: &'a F,
    order: fn(&F::Item, &F::Item) -> Ordering,
    sources: Vec<Source<'a, F::Item>>,
    heap: BinaryHeap<Head<F::Item>>,
    /// Sources not read yet (the heap is filled on the first call).
    started: bool,
    /// An error met while reading ahead, told after the item before it.
    failed: Option<io::Error>,
}

impl<F: RunFormat> Merged<'_, F> {
    /// Puts the next item of source `i` in the heap.
    fn refill(&mut self, i: usize) -> io::Result<()> {
        let next = match &mut self.sources[i] {
            Source::Held(it) => it.next(),
            Source::Run(r) => self.format.read(r)?,
        };
        if let Some(item) = next {
            self.heap.push(Head { item, source: i, order: self.order });
        }
        Ok(())
    }

    fn next_item(&mut self) -> io::Result<Option<F::Item>> {
        if !self.started {
            self.started = true;
            for i in 0..self.sources.len() {
                self.refill(i)?;
            }
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let Some(Head { item, source, .. }) = self.heap.pop() else { return Ok(None) };
        self.failed = self.refill(source).err();
        Ok(Some(item))
    }
}

impl<F: RunFormat> Iterator for Merged<'_, F> {
    type Item = io::Result<F::Item>;

    /// The next item; after an error, nothing more.
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_item() {
            Ok(item) => item.map(Ok),
            Err(e) => {
                self.heap.clear();
                self.sources.clear();
                Some(Err(e))
            }
        }
    }
}

/// Items as lines of JSON (what a page listing's entries are written as).
pub(crate) struct JsonLines<T>(std::marker::PhantomData<fn() -> T>);

impl<T> Default for JsonLines<T> {
    fn default() -> Self {
        JsonLines(std::marker::PhantomData)
    }
}

impl<T> std::fmt::Debug for JsonLines<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsonLines")
    }
}

impl<T: serde::Serialize + serde::de::DeserializeOwned> RunFormat for JsonLines<T> {
    type Item = T;

    fn write(&self, item: &T, w: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer(&mut *w, item)?;
        w.write_all(b"\n")
    }

    fn read(&self, r: &mut dyn BufRead) -> io::Result<Option<T>> {
        let mut line = String::new();
        match r.read_line(&mut line)? {
            0 => Ok(None),
            _ => serde_json::from_str(&line).map(Some).map_err(io::Error::from),
        }
    }
}

/// Byte lines, `\n`-terminated in a run (index lines: they hold no `\n`).
#[derive(Debug, Default)]
pub(crate) struct ByteLines;

impl RunFormat for ByteLines {
    type Item = Vec<u8>;

    fn write(&self, item: &Vec<u8>, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(item)?;
        w.write_all(b"\n")
    }

    fn read(&self, r: &mut dyn BufRead) -> io::Result<Option<Vec<u8>>> {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        Ok(Some(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Item = (String, u64);

    fn by_key(a: &Item, b: &Item) -> Ordering {
        a.0.cmp(&b.0)
    }

    /// Runs (past MAX_RUNS, merged into one) and held items merge into the order of one
    /// stable sort, read as often as asked.
    #[test]
    fn runs_and_held_items_merge_as_one_stable_sort() {
        let mut runs = Runs::new(JsonLines::<Item>::default(), by_key, 8 << 10);
        let mut all = Vec::new();
        for r in 0..MAX_RUNS as u64 + 3 {
            let mut run: Vec<Item> =
                (0..50).map(|n| (format!("k{}", (r * 50 + n) * 7919 % 101), r * 50 + n)).collect();
            all.extend(run.iter().cloned());
            run.sort_by(by_key);
            runs.spill(&run).unwrap();
        }
        assert!(runs.len() < MAX_RUNS, "{} runs kept", runs.len());
        let mut held: Vec<Item> = (0..30).map(|n| (format!("k{}", n % 7), 1_000_000 + n)).collect();
        all.extend(held.iter().cloned());
        held.sort_by(by_key);
        all.sort_by(by_key);
        for _ in 0..2 {
            let source: Held<'_, Item> = Box::new(held.iter().cloned());
            let got: Vec<Item> = runs.merged(vec![source]).map(Result::unwrap).collect();
            assert!(got == all, "merged order differs from one stable sort");
        }
    }

    /// A run cut short reads as an error, after which the merge gives nothing more.
    #[test]
    fn a_damaged_run_is_an_error_not_an_end() {
        let mut runs = Runs::new(JsonLines::<Item>::default(), by_key, 8 << 10);
        runs.spill_with(|_, w| w.write_all(b"[\"a\",1]\n[\"b\",")).unwrap();
        let mut merged = runs.merged(Vec::new());
        assert_eq!(merged.next().unwrap().unwrap(), ("a".to_string(), 1));
        assert!(merged.next().unwrap().is_err());
        assert!(merged.next().is_none());
    }
}
