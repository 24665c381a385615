//! The bytes identification looks at: the start of a payload and its end, read from a stream
//! (keeping only the last bytes as it goes) or from a seekable source (reading the tail
//! directly). A payload no longer than both windows together is held whole.
//!
//! When the start of a stream leaves some signature pending (it could still match, given bytes
//! beyond the windows: see `Signatures::needs_whole_payload`), the whole stream is also
//! spooled: in memory up to [`SPOOL_IN_MEMORY`], beyond that to an anonymous temporary file
//! (already unlinked: a killed run leaves nothing), up to [`WHOLE_SEARCH_LIMIT`]. The spooled
//! file is searched through [`Paged`], one page of [`PAGE`] bytes at a time, not mapped: a
//! mapping's touched pages count as the process's resident memory, so a search through a 2 GB
//! mapping would show 2 GB resident; paged reads keep it at one page.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

use super::matcher::{Hay, memchr_any};
use super::syntax::Lit;

/// Bytes of a spooled payload kept in memory before it moves to a temporary file.
pub(crate) const SPOOL_IN_MEMORY: usize = 16 << 20;

/// The longest payload spooled for a whole-payload search (a bound on temporary disk use);
/// past it, pending signatures are left unresolved and said to be.
pub(crate) const WHOLE_SEARCH_LIMIT: u64 = 8 << 30;

/// Bytes of a spooled file read at a time by a whole-payload search.
pub(crate) const PAGE: usize = 1 << 20;

/// The start and end of a payload.
#[derive(Debug, Default)]
pub(crate) struct Windows {
    /// The first bytes (the whole payload when `whole`).
    pub(crate) head: Vec<u8>,
    /// The last bytes (empty when `whole`: use `head`).
    pub(crate) tail: Vec<u8>,
    /// Whether `head` is the whole payload.
    pub(crate) whole: bool,
    /// The whole payload, when a pending signature asked for it.
    pub(crate) spooled: Spooled,
}

/// Whether the whole of a payload longer than its windows was kept.
#[derive(Debug, Default)]
pub(crate) enum Spooled {
    /// No signature needed it.
    #[default]
    NotNeeded,
    /// Kept: the whole payload.
    Whole(Whole),
    /// Asked for but not kept.
    Stopped(SpoolStop),
}

/// Why a payload asked for whole was not kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SpoolStop {
    /// Longer than [`WHOLE_SEARCH_LIMIT`].
    #[error("the payload is longer than the {} GiB searched whole", WHOLE_SEARCH_LIMIT >> 30)]
    OverLimit,
    /// The temporary file could not be written.
    #[error("the payload could not be spooled to a temporary file: {}", crate::layout::describe_io(.0))]
    Io(io::Error),
}

/// A whole payload: in memory, or in an anonymous temporary file.
#[derive(Debug)]
pub(crate) enum Whole {
    Memory(Vec<u8>),
    File { file: File, len: u64 },
}

/// A whole payload being written.
enum Spool {
    Memory(Vec<u8>),
    File { out: BufWriter<File>, len: u64 },
}

impl Spool {
    fn new(head: &[u8]) -> Spool {
        Spool::Memory(head.to_vec())
    }

    fn len(&self) -> u64 {
        match self {
            Spool::Memory(v) => v.len() as u64,
            Spool::File { len, .. } => *len,
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), SpoolStop> {
        let len = self.len() + bytes.len() as u64;
        if len > WHOLE_SEARCH_LIMIT {
            return Err(SpoolStop::OverLimit);
        }
        if let Spool::Memory(v) = self {
            if v.len() + bytes.len() <= SPOOL_IN_MEMORY {
                v.extend_from_slice(bytes);
                return Ok(());
            }
            let mut out = BufWriter::with_capacity(1 << 16, tempfile::tempfile()?);
            out.write_all(v)?;
            *self = Spool::File { out, len: v.len() as u64 };
        }
        if let Spool::File { out, len: l } = self {
            out.write_all(bytes)?;
            *l += bytes.len() as u64;
        }
        Ok(())
    }

    fn finish(self) -> Result<Whole, SpoolStop> {
        match self {
            Spool::Memory(v) => Ok(Whole::Memory(v)),
            Spool::File { out, len } => {
                let file = out.into_inner().map_err(|e| e.into_error())?;
                Ok(Whole::File { file, len })
            }
        }
    }
}

impl From<io::Error> for SpoolStop {
    fn from(e: io::Error) -> Self {
        SpoolStop::Io(e)
    }
}

/// Reads until `buf` holds `want` bytes or the source ends.
fn fill<R: Read>(r: &mut R, buf: &mut Vec<u8>, want: usize) -> io::Result<()> {
    let start = buf.len();
    r.take((want - start.min(want)) as u64).read_to_end(buf)?;
    Ok(())
}

/// Reads a whole stream, keeping its first `bof` bytes and its last `eof` bytes, and all of it
/// when `wants_whole` says its first `bof` bytes need the rest.
pub(crate) fn from_stream<R: Read>(
    mut r: R,
    bof: usize,
    eof: usize,
    wants_whole: impl FnOnce(&[u8]) -> bool,
) -> io::Result<Windows> {
    let mut head = Vec::with_capacity(bof.min(1 << 16));
    fill(&mut r, &mut head, bof)?;
    if head.len() < bof {
        return Ok(Windows { head, whole: true, ..Windows::default() });
    }
    let mut spool = wants_whole(&head).then(|| Ok(Spool::new(&head)));
    // The rest goes through a buffer of at most twice the tail window, cut back to the last
    // `eof` bytes whenever it fills: each byte is copied at most twice.
    let mut tail: Vec<u8> = Vec::new();
    let mut dropped = false;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some(Ok(s)) = &mut spool
            && let Err(stop) = s.write(&chunk[..n])
        {
            spool = Some(Err(stop));
        }
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > 2 * eof {
            tail.drain(..tail.len() - eof);
            dropped = true;
        }
    }
    if !dropped && tail.len() <= eof {
        head.extend_from_slice(&tail);
        return Ok(Windows { head, whole: true, ..Windows::default() });
    }
    if tail.len() > eof {
        tail.drain(..tail.len() - eof);
    }
    let spooled = match spool.map(|s| s.and_then(Spool::finish)) {
        None => Spooled::NotNeeded,
        Some(Ok(w)) => Spooled::Whole(w),
        Some(Err(stop)) => Spooled::Stopped(stop),
    };
    Ok(Windows { head, tail, whole: false, spooled })
}

/// Reads the first `bof` and the last `eof` bytes of a seekable source, from where it is now
/// to its end.
pub(crate) fn from_seekable<R: Read + Seek>(
    mut r: R,
    bof: usize,
    eof: usize,
) -> io::Result<Windows> {
    let start = r.stream_position()?;
    let end = r.seek(SeekFrom::End(0))?;
    let len = end.saturating_sub(start);
    r.seek(SeekFrom::Start(start))?;
    if len <= (bof + eof) as u64 {
        let mut head = Vec::with_capacity(len as usize);
        fill(&mut r, &mut head, len as usize)?;
        return Ok(Windows { head, whole: true, ..Windows::default() });
    }
    let mut head = Vec::with_capacity(bof);
    fill(&mut r, &mut head, bof)?;
    r.seek(SeekFrom::Start(end - eof as u64))?;
    let mut tail = Vec::with_capacity(eof);
    fill(&mut r, &mut tail, eof)?;
    Ok(Windows { head, tail, whole: false, spooled: Spooled::NotNeeded })
}

/// A spooled file read forwards one page at a time (a [`Hay`] for the matcher). A read error
/// reads as the end of the bytes and is remembered: the search is then left unresolved.
pub(crate) struct Paged<'f> {
    file: &'f File,
    len: usize,
    page: RefCell<Page>,
    failed: RefCell<Option<io::Error>>,
}

/// The bytes of `file` from `start` on, `bytes.len()` of them.
struct Page {
    start: usize,
    bytes: Vec<u8>,
}

impl<'f> Paged<'f> {
    pub(crate) fn new(file: &'f File, len: u64) -> Paged<'f> {
        // A payload past the address space could not have been spooled (the limit is lower).
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let page = Page { start: 0, bytes: Vec::new() };
        Paged { file, len, page: RefCell::new(page), failed: RefCell::new(None) }
    }

    /// Whether a read failed.
    pub(crate) fn failed(&self) -> bool {
        self.failed.borrow().is_some()
    }

    /// Makes the page hold `pos..pos + want` (clipped to the file; `want` at most [`PAGE`]);
    /// false when it cannot.
    fn load(&self, pos: usize, want: usize) -> bool {
        let end = pos.saturating_add(want).min(self.len);
        let mut page = self.page.borrow_mut();
        if pos >= page.start && end <= page.start + page.bytes.len() {
            return true;
        }
        let n = PAGE.max(want).min(self.len - pos.min(self.len));
        page.bytes.resize(n, 0);
        page.start = pos;
        if let Err(e) = self.file.read_exact_at(&mut page.bytes, pos as u64) {
            page.bytes.clear();
            *self.failed.borrow_mut() = Some(e);
            return false;
        }
        true
    }

    /// Runs `f` on the bytes `pos..end` (at most [`PAGE`] of them), if they can be read.
    fn with<T>(&self, pos: usize, end: usize, f: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
        if !self.load(pos, end - pos) {
            return None;
        }
        let page = self.page.borrow();
        f(&page.bytes[pos - page.start..end - page.start])
    }
}

impl Hay for Paged<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn at(&self, i: usize) -> u8 {
        self.with(i, i + 1, |b| b.first().copied()).unwrap_or(0)
    }

    fn has(&self, pos: usize, bytes: &[u8]) -> bool {
        let end = pos.saturating_add(bytes.len());
        end <= self.len && self.with(pos, end, |b| Some(b == bytes)).unwrap_or(false)
    }

    fn find(&self, lit: &Lit, from: usize, last: usize) -> Option<usize> {
        let width = lit.bytes.len();
        let end = last.saturating_add(width).min(self.len);
        let mut at = from;
        // Pages overlap by the literal's length less one, so none is missed at a seam.
        while at + width <= end {
            let stop = (at + PAGE).min(end);
            if let Some(i) = self.with(at, stop, |b| lit.fwd().find(b)) {
                return Some(at + i);
            }
            if stop == end || self.failed() {
                return None;
            }
            at = stop + 1 - width.max(1);
        }
        None
    }

    fn find_any(&self, bytes: &[u8], from: usize, last: usize) -> Option<usize> {
        let end = last.saturating_add(1).min(self.len);
        let mut at = from;
        while at < end {
            let stop = (at + PAGE).min(end);
            if let Some(i) = self.with(at, stop, |b| memchr_any(bytes, b, false)) {
                return Some(at + i);
            }
            if self.failed() {
                return None;
            }
            at = stop;
        }
        None
    }
}

/// A spooled payload read as a stream of its own, with positioned reads: several may read
/// the one file at once (a ZIP's directory and its entries), each at its own position.
pub(crate) struct FileAt<'f> {
    file: &'f File,
    len: u64,
    pos: u64,
}

impl<'f> FileAt<'f> {
    pub(crate) fn new(file: &'f File, len: u64) -> FileAt<'f> {
        FileAt { file, len, pos: 0 }
    }
}

impl Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for FileAt<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.pos = seek_target(self.pos, self.len, to)?;
        Ok(self.pos)
    }
}

/// Where a seek `to` leads a reader at `pos` in `len` bytes of its own (past the end is
/// allowed, as for a file; before the start is an error).
pub(crate) fn seek_target(pos: u64, len: u64, to: SeekFrom) -> io::Result<u64> {
    let target = match to {
        SeekFrom::Start(n) => Some(n),
        SeekFrom::End(d) => len.checked_add_signed(d),
        SeekFrom::Current(d) => pos.checked_add_signed(d),
    };
    target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))
}
