//! The bytes identification looks at: the start of a payload and its end, read from a stream
//! (keeping only the last bytes as it goes) or from a seekable source (reading the tail
//! directly). A payload no longer than both windows together is held whole.

use std::io::{self, Read};
#[cfg(any(test, feature = "test-hooks"))]
use std::io::{Seek, SeekFrom};

/// The start and end of a payload.
#[derive(Debug, Default)]
pub(crate) struct Windows {
    /// The first bytes (the whole payload when `whole`).
    pub(crate) head: Vec<u8>,
    /// The last bytes (empty when `whole`: use `head`).
    pub(crate) tail: Vec<u8>,
    /// Whether `head` is the whole payload.
    pub(crate) whole: bool,
}

impl Windows {
    pub(crate) fn view(&self) -> View<'_> {
        View { head: &self.head, tail: &self.tail, whole: self.whole }
    }
}

/// [`Windows`] borrowed (or a whole payload already in memory).
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    pub(crate) head: &'a [u8],
    pub(crate) tail: &'a [u8],
    pub(crate) whole: bool,
}

impl<'a> View<'a> {
    /// The bytes to match end-anchored sequences against.
    pub(crate) fn end(&self) -> &'a [u8] {
        if self.whole { self.head } else { self.tail }
    }
}

/// Reads until `buf` holds `want` bytes or the source ends.
fn fill<R: Read>(r: &mut R, buf: &mut Vec<u8>, want: usize) -> io::Result<()> {
    let start = buf.len();
    r.take((want - start.min(want)) as u64).read_to_end(buf)?;
    Ok(())
}

/// Reads a whole stream, keeping its first `bof` bytes and its last `eof` bytes.
pub(crate) fn from_stream<R: Read>(mut r: R, bof: usize, eof: usize) -> io::Result<Windows> {
    let mut head = Vec::with_capacity(bof.min(1 << 16));
    fill(&mut r, &mut head, bof)?;
    if head.len() < bof {
        return Ok(Windows { head, tail: Vec::new(), whole: true });
    }
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
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > 2 * eof {
            tail.drain(..tail.len() - eof);
            dropped = true;
        }
    }
    if !dropped && tail.len() <= eof {
        head.extend_from_slice(&tail);
        return Ok(Windows { head, tail: Vec::new(), whole: true });
    }
    if tail.len() > eof {
        tail.drain(..tail.len() - eof);
    }
    Ok(Windows { head, tail, whole: false })
}

/// Reads the first `bof` and the last `eof` bytes of a seekable source, from where it is now
/// to its end.
#[cfg(any(test, feature = "test-hooks"))]
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
        return Ok(Windows { head, tail: Vec::new(), whole: true });
    }
    let mut head = Vec::with_capacity(bof);
    fill(&mut r, &mut head, bof)?;
    r.seek(SeekFrom::Start(end - eof as u64))?;
    let mut tail = Vec::with_capacity(eof);
    fill(&mut r, &mut tail, eof)?;
    Ok(Windows { head, tail, whole: false })
}
