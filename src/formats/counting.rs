//! A reader that counts the bytes consumed through it, so that the ARC and WARC readers know
//! exactly where a gzip member or a record ends in the file.

use std::io::{self, BufRead, Read};

/// Counts the bytes read or consumed from `inner`; `pos` is the offset of the next byte.
pub(crate) struct Counting<R> {
    pub(crate) inner: R,
    pub(crate) pos: u64,
}

impl<R> Counting<R> {
    /// Counts from offset 0.
    pub(crate) fn new(inner: R) -> Self {
        Counting { inner, pos: 0 }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
        self.inner.consume(amt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_consumes_are_both_counted() {
        let mut c = Counting::new(io::BufReader::with_capacity(4, &b"abc\ndefgh"[..]));
        let mut line = Vec::new();
        c.read_until(b'\n', &mut line).unwrap();
        assert_eq!((line.as_slice(), c.pos), (&b"abc\n"[..], 4));
        let mut buf = [0u8; 3];
        assert_eq!(c.read(&mut buf).unwrap(), 3);
        assert_eq!((&buf, c.pos), (b"def", 7));
        let n = c.fill_buf().unwrap().len();
        c.consume(n);
        assert_eq!(c.pos, 7 + n as u64);
    }
}
