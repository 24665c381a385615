//! The line reader: one line of a segment at a position, bounded in length.

use super::*;

/// A line read at a position.
pub(super) struct Line {
    /// The line without `\n` and without a trailing `\r`.
    pub(super) text: Vec<u8>,
    /// Bytes consumed including the line end.
    pub(super) consumed: u64,
    /// False when no line end came within the limit: `text` is only the start of a longer
    /// run of bytes, which cannot be a record header.
    pub(super) complete: bool,
}

impl Line {
    /// The text, when it can be a header line: it ended within the limit, or it is the last
    /// line of the data.
    pub(super) fn candidate(&self) -> Option<&[u8]> {
        self.complete.then_some(&self.text[..])
    }
}

/// Reads the line at `pos` (to its LF, a CR before it dropped), at most `max` bytes of it.
pub(super) fn read_line_at(data: &Segment, pos: u64, max: usize) -> io::Result<Line> {
    let mut text = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut at = pos;
    loop {
        let n = data.read_at(at, &mut chunk)?;
        if n == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &chunk[..n]) {
            text.extend_from_slice(&chunk[..i]);
            let consumed = at + i as u64 + 1 - pos;
            if text.last() == Some(&b'\r') {
                text.pop();
            }
            return Ok(Line { text, consumed, complete: true });
        }
        text.extend_from_slice(&chunk[..n]);
        at += n as u64;
        if text.len() > max {
            // Bounded: what follows is not read, and the line is no header.
            let consumed = text.len() as u64;
            return Ok(Line { text, consumed, complete: false });
        }
    }
    // The data ends without a line end: a last line, complete as far as it goes.
    let consumed = text.len() as u64;
    Ok(Line { text, consumed, complete: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_at_lf_without_their_cr_and_are_bounded() {
        let data = Segment::Mem(b"ab\r\ncd\nlast".to_vec());
        let first = read_line_at(&data, 0, 100).unwrap();
        assert_eq!((first.text.as_slice(), first.consumed), (&b"ab"[..], 4));
        assert_eq!(read_line_at(&data, 4, 100).unwrap().candidate(), Some(&b"cd"[..]));
        let last = read_line_at(&data, 7, 100).unwrap();
        assert_eq!((last.candidate(), last.consumed), (Some(&b"last"[..]), 4));
        // No LF within the bound: the start of a longer run, never a header.
        let long = Segment::Mem([vec![b'x'; 10_000], b"\n".to_vec()].concat());
        let cut = read_line_at(&long, 0, 5000).unwrap();
        assert_eq!(cut.candidate(), None);
        assert!(cut.text.len() > 5000 && cut.text.len() < 10_000, "{}", cut.text.len());
    }
}
