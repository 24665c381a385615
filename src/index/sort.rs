//! Lines sorted bytewise (as `LC_ALL=C sort`) in memory that does not grow with their number:
//! lines are held in one buffer up to a byte budget, sorted and spilled as a run by the one
//! external sort (`crate::external_sort`); the output merges the runs. Identical lines are written once (as
//! cdxj-indexer's `--sort` writes them: an index lists a record once).
//!
//! Index lines are plain byte lines, so they are kept as bytes (no parsing back, no
//! per-line allocation); `crate::pages::sorted` sorts typed items by a comparison of their
//! fields, which lines do not need.

use std::io;

use crate::external_sort::{ByteLines, Held, Runs};

/// Bytes of each run's read and write buffer.
const RUN_BUFFER: usize = 256 << 10;

/// Lines being sorted; see the module documentation.
#[derive(Debug)]
pub struct LineSorter {
    /// The held lines' bytes, one after the other (no line ends).
    bytes: Vec<u8>,
    /// Where each held line is in `bytes`.
    lines: Vec<LineAt>,
    /// Bytes held at most (lines and their places) before a run is spilled.
    budget: usize,
    /// Sorted runs of distinct lines.
    runs: Runs<ByteLines>,
    /// Lines pushed.
    pushed: u64,
}

/// Where a held line is in the sorter's buffer.
#[derive(Debug, Clone, Copy)]
struct LineAt {
    start: usize,
    len: usize,
}

impl LineSorter {
    /// An empty sorter holding at most about `budget` bytes in memory.
    pub fn new(budget: usize) -> LineSorter {
        let runs = Runs::new(ByteLines, |a: &Vec<u8>, b: &Vec<u8>| a.cmp(b), RUN_BUFFER);
        LineSorter { bytes: Vec::new(), lines: Vec::new(), budget, runs, pushed: 0 }
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
        self.lines.push(LineAt { start: self.bytes.len(), len: line.len() });
        self.bytes.extend_from_slice(line);
        self.pushed += 1;
        if self.bytes.len() + self.lines.len() * 16 >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn sort_held(&mut self) {
        let bytes = &self.bytes;
        self.lines.sort_unstable_by(|a, b| {
            bytes[a.start..a.start + a.len].cmp(&bytes[b.start..b.start + b.len])
        });
    }

    /// Writes the held lines as a run, each distinct line once.
    fn spill(&mut self) -> io::Result<()> {
        if self.lines.is_empty() {
            return Ok(());
        }
        self.sort_held();
        let (bytes, lines) = (&self.bytes, &self.lines);
        self.runs.spill_with(|_, out| {
            let mut last: Option<&[u8]> = None;
            for at in lines {
                let line = &bytes[at.start..at.start + at.len];
                if last != Some(line) {
                    out.write_all(line)?;
                    out.write_all(b"\n")?;
                }
                last = Some(line);
            }
            Ok(())
        })?;
        self.bytes.clear();
        self.lines.clear();
        Ok(())
    }

    /// Hands every line of `sorters`, merged in order, each distinct line once, to `out`.
    pub fn merge_into(
        sorters: Vec<LineSorter>,
        out: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut runs: Option<Runs<ByteLines>> = None;
        let mut held: Vec<Held<'_, Vec<u8>>> = Vec::new();
        for mut s in sorters {
            // What one sorter still holds stays in memory, as a sorted source of its own.
            s.sort_held();
            let LineSorter { bytes, lines, runs: spilled, .. } = s;
            if !lines.is_empty() {
                let line = move |at: LineAt| bytes[at.start..at.start + at.len].to_vec();
                held.push(Box::new(lines.into_iter().map(line)));
            }
            match &mut runs {
                None => runs = Some(spilled),
                Some(r) => r.absorb(spilled)?,
            }
        }
        let Some(runs) = runs else { return Ok(()) };
        let mut last: Option<Vec<u8>> = None;
        for line in runs.merged(held) {
            let line = line?;
            if last.as_deref() != Some(&line[..]) {
                out(&line)?;
            }
            last = Some(line);
        }
        Ok(())
    }
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
        assert!(a.runs() > 0 && a.runs() < crate::external_sort::MAX_RUNS, "runs: {}", a.runs());
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
