//! Lines sorted bytewise (as `LC_ALL=C sort`) in memory that does not grow with their number:
//! lines are held in one buffer up to a byte budget, sorted and spilled as a run to an
//! anonymous temporary file; the output merges the runs. Identical lines are written once (as
//! cdxj-indexer's `--sort` writes them: an index lists a record once).
//!
//! Index lines are plain byte lines, so they are kept as bytes (no parsing back, no
//! per-line allocation); `crate::pages::sorted` sorts typed items by a comparison of their
//! fields, which lines do not need.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, Write};

/// Runs kept at most: past this they are merged into one (each holds a file open).
const MAX_RUNS: usize = 64;

/// Lines being sorted; see the module documentation.
#[derive(Debug)]
pub struct LineSorter {
    /// The held lines' bytes, one after the other (no line ends).
    bytes: Vec<u8>,
    /// Where each held line is in `bytes`: (start, length).
    lines: Vec<(usize, usize)>,
    /// Bytes held at most (lines and their places) before a run is spilled.
    budget: usize,
    /// Sorted runs, `\n`-terminated lines, rewound.
    runs: Vec<File>,
    /// Lines pushed.
    pushed: u64,
}

impl LineSorter {
    /// An empty sorter holding at most about `budget` bytes in memory.
    pub fn new(budget: usize) -> LineSorter {
        LineSorter { bytes: Vec::new(), lines: Vec::new(), budget, runs: Vec::new(), pushed: 0 }
    }

    /// Lines pushed so far.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Runs spilled so far (for tests and measurement).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Adds a line (without its line end; it must hold no `\n`).
    pub fn push(&mut self, line: &[u8]) -> io::Result<()> {
        self.lines.push((self.bytes.len(), line.len()));
        self.bytes.extend_from_slice(line);
        self.pushed += 1;
        if self.bytes.len() + self.lines.len() * 16 >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn sort_held(&mut self) {
        let bytes = &self.bytes;
        self.lines.sort_unstable_by(|a, b| bytes[a.0..a.0 + a.1].cmp(&bytes[b.0..b.0 + b.1]));
    }

    fn spill(&mut self) -> io::Result<()> {
        if self.lines.is_empty() {
            return Ok(());
        }
        self.sort_held();
        let mut out = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        let mut last: Option<&[u8]> = None;
        for &(at, len) in &self.lines {
            let line = &self.bytes[at..at + len];
            if last != Some(line) {
                out.write_all(line)?;
                out.write_all(b"\n")?;
            }
            last = Some(line);
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        self.runs.push(file);
        self.bytes.clear();
        self.lines.clear();
        if self.runs.len() >= MAX_RUNS {
            self.spill_runs_into_one()?;
        }
        Ok(())
    }

    /// Hands every line of `sorters`, merged in order, each distinct line once, to `out`.
    pub fn merge_into(
        sorters: Vec<LineSorter>,
        out: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut runs = Vec::new();
        let mut held = Vec::new();
        for mut s in sorters {
            // What one sorter still holds stays in memory, as a sorted source of its own.
            s.sort_held();
            let LineSorter { bytes, lines, runs: r, .. } = s;
            runs.extend(r);
            if !lines.is_empty() {
                held.push((bytes, lines));
            }
        }
        if runs.len() + held.len() > MAX_RUNS {
            // Too many to keep open at once: the runs become one first.
            let mut one = LineSorter::new(usize::MAX);
            one.runs = runs;
            one.spill_runs_into_one()?;
            runs = one.runs;
        }
        merge(runs, held, out)
    }

    fn spill_runs_into_one(&mut self) -> io::Result<()> {
        let runs = std::mem::take(&mut self.runs);
        let mut out = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        merge(runs, Vec::new(), &mut |l| {
            out.write_all(l)?;
            out.write_all(b"\n")
        })?;
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        self.runs.push(file);
        Ok(())
    }
}

/// Lines held in memory, sorted: their bytes and places.
type Held = (Vec<u8>, Vec<(usize, usize)>);

/// A source of sorted lines: a run file, or lines held in memory.
enum Source {
    Run(BufReader<File>),
    Held { bytes: Vec<u8>, lines: std::vec::IntoIter<(usize, usize)> },
}

impl Source {
    /// The next line into `line` (cleared first); false at the end.
    fn next(&mut self, line: &mut Vec<u8>) -> io::Result<bool> {
        line.clear();
        match self {
            Source::Run(r) => {
                if r.read_until(b'\n', line)? == 0 {
                    return Ok(false);
                }
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                Ok(true)
            }
            Source::Held { bytes, lines } => match lines.next() {
                Some((at, len)) => {
                    line.extend_from_slice(&bytes[at..at + len]);
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }
}

/// Merges sorted sources into `out`, each distinct line once.
fn merge(
    runs: Vec<File>,
    held: Vec<Held>,
    out: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut sources: Vec<Source> = runs
        .into_iter()
        .map(|f| Source::Run(BufReader::with_capacity(256 * 1024, f)))
        .chain(
            held.into_iter().map(|(bytes, lines)| Source::Held { bytes, lines: lines.into_iter() }),
        )
        .collect();
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for (i, s) in sources.iter_mut().enumerate() {
        let mut line = Vec::new();
        if s.next(&mut line)? {
            heap.push(Reverse((line, i)));
        }
    }
    let mut last: Option<Vec<u8>> = None;
    while let Some(Reverse((line, i))) = heap.pop() {
        if last.as_deref() != Some(&line[..]) {
            out(&line)?;
        }
        let mut next = last.take().unwrap_or_default();
        if sources[i].next(&mut next)? {
            heap.push(Reverse((next, i)));
        }
        last = Some(line);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(sorters: Vec<LineSorter>) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        LineSorter::merge_into(sorters, &mut |l| {
            got.push(l.to_vec());
            Ok(())
        })
        .unwrap();
        got
    }

    /// Lines spilled in many runs (and over the limit of open runs) come out as one bytewise
    /// sort, each distinct line once.
    #[test]
    fn spilled_runs_merge_into_one_bytewise_sort() {
        let mut all: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| format!("k{} {}", (i * 7919) % 1009, i % 3).into_bytes())
            .collect();
        let mut a = LineSorter::new(2000);
        let mut b = LineSorter::new(1 << 20);
        for (n, l) in all.iter().enumerate() {
            if n % 2 == 0 { a.push(l).unwrap() } else { b.push(l).unwrap() }
        }
        assert!(a.runs() > 0 && a.runs() < MAX_RUNS, "runs: {}", a.runs());
        all.push(b"k1 \xff".to_vec());
        b.push(b"k1 \xff").unwrap();
        all.sort();
        all.dedup();
        assert_eq!(sorted(vec![a, b]), all);
    }

    /// Nothing pushed gives nothing.
    #[test]
    fn empty_sorters_give_nothing() {
        assert!(sorted(vec![LineSorter::new(10), LineSorter::new(10)]).is_empty());
    }
}
