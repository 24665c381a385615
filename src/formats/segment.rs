//! Random-access byte ranges that a record parser can look ahead in.
//!
//! Re-finding a record's end when its declared length is wrong means looking past the end and
//! coming back. A [`Segment`] gives positioned reads over either a plain input file (no copy)
//! or the decompressed bytes of one gzip member, kept in memory when small and spilled to an
//! anonymous temporary file when large, so memory never grows with the size of a record.

use std::borrow::Borrow;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;

/// Decompressed members up to this size stay in memory; larger ones go to a temporary file.
pub(crate) const MEMORY_SPOOL_LIMIT: usize = 8 << 20;

/// A run of bytes with positioned reads.
#[derive(Debug)]
pub(crate) enum Segment {
    /// Bytes held in memory.
    Mem(Vec<u8>),
    /// Bytes in a file: the input itself, or a spill file.
    File {
        /// The open file.
        file: File,
        /// Number of bytes (the file may be longer; reads stop here).
        len: u64,
    },
}

impl Segment {
    /// Number of bytes in the segment.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Segment::Mem(v) => v.len() as u64,
            Segment::File { len, .. } => *len,
        }
    }

    /// True when the segment holds no bytes.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of `start..end` when the segment is in memory.
    pub(crate) fn slice(&self, start: u64, end: u64) -> Option<&[u8]> {
        match self {
            Segment::Mem(v) => v.get(start as usize..end as usize),
            Segment::File { .. } => None,
        }
    }

    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read (0 at the end).
    pub(crate) fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let len = self.len();
        if pos >= len {
            return Ok(0);
        }
        let want = buf.len().min((len - pos) as usize);
        match self {
            Segment::Mem(v) => {
                let p = pos as usize;
                buf[..want].copy_from_slice(&v[p..p + want]);
                Ok(want)
            }
            Segment::File { file, .. } => loop {
                match file.read_at(&mut buf[..want], pos) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => return other,
                }
            },
        }
    }

    /// Reads exactly `buf.len()` bytes at `pos`, or fewer at the end of the segment.
    pub(crate) fn read_full_at(&self, mut pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            let n = self.read_at(pos, &mut buf[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
            pos += n as u64;
        }
        Ok(filled)
    }

    /// The byte at `pos`, or `None` past the end.
    pub(crate) fn byte_at(&self, pos: u64) -> io::Result<Option<u8>> {
        if let Segment::Mem(v) = self {
            return Ok(v.get(pos as usize).copied());
        }
        let mut b = [0u8; 1];
        Ok(match self.read_at(pos, &mut b)? {
            0 => None,
            _ => Some(b[0]),
        })
    }

    /// A reader over `start..end`.
    pub(crate) fn reader(&self, start: u64, end: u64) -> SegmentReader<'_> {
        SegmentReader { segment: self, pos: start, end: end.min(self.len()) }
    }
}

/// Reads a range of a [`Segment`].
pub struct SegmentReader<'a> {
    segment: &'a Segment,
    pos: u64,
    end: u64,
}

impl Read for SegmentReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.end {
            return Ok(0);
        }
        let want = buf.len().min((self.end - self.pos) as usize);
        let n = self.segment.read_at(self.pos, &mut buf[..want])?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Reads `pos..end` of a file with positioned reads: no shared cursor, so several threads can
/// read ranges of one open file at once. The file is borrowed (`&File`) or shared
/// (`Arc<File>`, for a reader that outlives its caller's borrow).
pub(crate) struct FileRange<F: Borrow<File>> {
    file: F,
    pos: u64,
    end: u64,
}

impl<F: Borrow<File>> FileRange<F> {
    /// The `len` bytes at `pos`.
    pub(crate) fn new(file: F, pos: u64, len: u64) -> Self {
        FileRange { file, pos, end: pos.saturating_add(len) }
    }
}

impl<F: Borrow<File>> Read for FileRange<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min((self.end - self.pos) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.borrow().read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Size of the copy buffer [`spool_with`] wants.
pub(crate) const SPOOL_BUF: usize = 64 * 1024;

/// Copies `reader` into a segment: memory first, a temporary file past [`MEMORY_SPOOL_LIMIT`].
/// On a read error the bytes read so far are kept and returned with the error, so a damaged
/// gzip member still yields what could be decompressed. Takes the caller's copy buffer (any non-zero size), so that a reader of many
/// gzip members allocates it once instead of once per member.
pub(crate) fn spool_with(mut reader: impl Read, buf: &mut [u8]) -> (Segment, Option<io::Error>) {
    let mut mem: Vec<u8> = Vec::new();
    let mut file: Option<(File, u64)> = None;
    loop {
        let n = match reader.read(buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return (finish_spool(mem, file), Some(e)),
        };
        if let Some((f, len)) = file.as_mut() {
            if let Err(e) = f.write_all(&buf[..n]) {
                return (finish_spool(mem, file), Some(e));
            }
            *len += n as u64;
        } else if mem.len() + n > MEMORY_SPOOL_LIMIT {
            let spilled = tempfile::tempfile().and_then(|mut f| {
                f.write_all(&mem)?;
                f.write_all(&buf[..n])?;
                Ok(f)
            });
            match spilled {
                Ok(f) => {
                    let len = (mem.len() + n) as u64;
                    mem = Vec::new();
                    file = Some((f, len));
                }
                Err(e) => return (finish_spool(mem, file), Some(e)),
            }
        } else {
            mem.extend_from_slice(&buf[..n]);
        }
    }
    (finish_spool(mem, file), None)
}

fn finish_spool(mem: Vec<u8>, file: Option<(File, u64)>) -> Segment {
    match file {
        Some((file, len)) => Segment::File { file, len },
        None => Segment::Mem(mem),
    }
}

/// Bytes of an input between its reader and whoever takes them: everything the reader has read
/// and nothing has taken yet (a copied WARC's records are cut from it as they end). In memory up to [`QUEUE_IN_MEMORY`], then in a
/// temporary file (a single record can be larger than memory).
pub(crate) struct ByteQueue {
    /// Input offset of the first byte held.
    base: u64,
    mem: Vec<u8>,
    /// Where in `mem` the held bytes start.
    start: usize,
    /// Spilled: the file, and the input offset of its first byte.
    file: Option<(File, u64)>,
    /// Input offset just past the last byte held.
    end: u64,
}

/// Bytes a [`ByteQueue`] holds in memory before it spills to a temporary file.
const QUEUE_IN_MEMORY: usize = 8 << 20;

impl ByteQueue {
    pub(crate) fn new() -> Self {
        ByteQueue { base: 0, mem: Vec::new(), start: 0, file: None, end: 0 }
    }

    /// Input offset just past the last byte queued.
    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    /// Takes the queued bytes up to input offset `to` out, as a segment of their own: from
    /// memory, a copy; spilled, the spill file itself (never a second copy on disk), the
    /// bytes queued past `to` (what the reader read ahead) going on in a new queue.
    pub(crate) fn take(&mut self, to: u64) -> io::Result<Segment> {
        if to < self.base || to > self.end {
            return Err(io::Error::other(format!(
                "bytes up to {to} are not held ({}..{})",
                self.base, self.end
            )));
        }
        let Some((file, at)) = self.file.take() else {
            let n = (to - self.base) as usize;
            let taken = self.mem[self.start..self.start + n].to_vec();
            self.release(to)?;
            return Ok(Segment::Mem(taken));
        };
        // The spill file holds the input from `at`; only `take` lets bytes go, so `at` is
        // where the queue starts.
        if at != self.base {
            self.file = Some((file, at));
            return Err(io::Error::other("a spilled queue that does not start at its file"));
        }
        let rest = ByteQueue { base: to, mem: Vec::new(), start: 0, file: None, end: to };
        let mut rest = std::mem::replace(self, rest);
        rest.file = Some((file.try_clone()?, at));
        let mut past = rest.range(to, rest.end)?;
        let mut buf = vec![0u8; SPOOL_BUF];
        loop {
            let n = past.read(&mut buf)?;
            if n == 0 {
                break;
            }
            self.push(&buf[..n])?;
        }
        Ok(Segment::File { file, len: to - at })
    }

    /// Queues bytes just read.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some((f, _)) => f.write_all(bytes)?,
            None if self.mem.len() - self.start + bytes.len() > QUEUE_IN_MEMORY => {
                let mut f = tempfile::tempfile()?;
                f.write_all(&self.mem[self.start..])?;
                f.write_all(bytes)?;
                self.file = Some((f, self.base));
                self.mem = Vec::new();
                self.start = 0;
            }
            None => self.mem.extend_from_slice(bytes),
        }
        self.end += bytes.len() as u64;
        Ok(())
    }

    /// A reader of input bytes `begin..end` (held), leaving them held.
    fn range(&self, begin: u64, end: u64) -> io::Result<Box<dyn Read + '_>> {
        if begin < self.base || end > self.end || begin > end {
            return Err(io::Error::other(format!(
                "bytes {begin}..{end} are not held ({}..{})",
                self.base, self.end
            )));
        }
        Ok(match &self.file {
            Some((f, at)) => {
                Box::new(crate::formats::segment::FileRange::new(f, begin - at, end - begin))
            }
            None => {
                let from = self.start + (begin - self.base) as usize;
                Box::new(&self.mem[from..from + (end - begin) as usize])
            }
        })
    }

    /// Lets go of the bytes up to `to` (they have been taken).
    fn release(&mut self, to: u64) -> io::Result<()> {
        let to = to.min(self.end).max(self.base);
        match &mut self.file {
            None => {
                self.start += (to - self.base) as usize;
                // Compacted once the taken part outweighs what is held.
                if self.start > self.mem.len() / 2 {
                    self.mem.drain(..self.start);
                    self.start = 0;
                }
            }
            Some((f, at)) => {
                // Back to memory once what is held fits easily.
                if self.end - to <= (QUEUE_IN_MEMORY / 4) as u64 {
                    let mut rest = vec![0u8; (self.end - to) as usize];
                    f.read_exact_at(&mut rest, to - *at)?;
                    self.mem = rest;
                    self.start = 0;
                    self.file = None;
                }
            }
        }
        self.base = to;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_gives_back_what_it_was_given_in_memory_and_spilled() {
        let mut q = ByteQueue::new();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        q.push(&data[..100_000]).unwrap();
        let mut got = Vec::new();
        q.range(10, 20).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, &data[10..20]);
        q.release(50_000).unwrap();
        assert!(q.range(10, 20).is_err(), "released bytes are gone");
        q.push(&data[100_000..]).unwrap();
        got.clear();
        q.range(50_000, 200_000).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, &data[50_000..]);
        assert!(q.range(150_000, 200_001).is_err(), "not yet read");
        // Forced into a file, then back.
        let big = vec![7u8; QUEUE_IN_MEMORY + 10];
        q.push(&big).unwrap();
        assert!(q.file.is_some());
        got.clear();
        q.range(199_990, 200_010).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(&got[..10], &data[199_990..]);
        assert_eq!(&got[10..], &[7u8; 10]);
        q.release(200_000 + QUEUE_IN_MEMORY as u64).unwrap();
        assert!(q.file.is_none(), "back in memory");
        got.clear();
        q.range(q.base, q.end).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, vec![7u8; 10]);
        // Taken out as a segment of its own, the bytes leave the queue.
        let end = q.end();
        let seg = q.take(end - 4).unwrap();
        assert_eq!(seg.len(), 6);
        assert!(q.range(end - 5, end).is_err(), "taken bytes are gone");
        got.clear();
        q.range(end - 4, end).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, vec![7u8; 4]);
        // A spilled queue gives what it spilled, whole.
        let mut q = ByteQueue::new();
        q.push(&data).unwrap();
        q.push(&big).unwrap();
        let seg = q.take(q.end()).unwrap();
        assert_eq!(seg.len(), (data.len() + big.len()) as u64);
        let mut all = Vec::new();
        seg.reader(0, seg.len()).read_to_end(&mut all).unwrap();
        assert_eq!(&all[..data.len()], &data[..]);
        assert!(all[data.len()..].iter().all(|&b| b == 7));
    }

    #[test]
    fn large_input_spills_to_a_file_and_reads_back() {
        let data: Vec<u8> = (0..MEMORY_SPOOL_LIMIT + 1000).map(|i| (i % 251) as u8).collect();
        let (seg, err) = spool_with(&data[..], &mut vec![0u8; SPOOL_BUF]);
        assert!(err.is_none());
        assert!(matches!(seg, Segment::File { .. }));
        assert_eq!(seg.len(), data.len() as u64);
        let mut back = Vec::new();
        seg.reader(10, seg.len()).read_to_end(&mut back).unwrap();
        assert_eq!(&back[..], &data[10..]);
        assert_eq!(seg.byte_at(seg.len()).unwrap(), None);
    }

    #[test]
    fn small_input_stays_in_memory() {
        let (seg, _) = spool_with(&b"abc"[..], &mut vec![0u8; SPOOL_BUF]);
        assert_eq!(seg.slice(1, 3), Some(&b"bc"[..]));
    }
}
