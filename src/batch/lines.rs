//! The records of a CSV manifest, read with a bounded buffer: a record (a line, or lines a
//! quoted field joins) longer than [`MAX_LINE`] is skipped as it is read and reported as too
//! long, so that one huge line costs no more memory than a line at the cap.

use std::io::{self, BufRead};

/// The longest manifest record taken, in bytes of its fields (three paths of `PATH_MAX` and
/// options hold in far less): a longer one is a bad line of its own.
pub const MAX_LINE: usize = 64 << 10;

/// One record of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A record of fields, each trimmed of ASCII whitespace.
    Fields {
        /// The line it starts on (1-based).
        line: u64,
        /// Its fields.
        fields: Vec<Vec<u8>>,
    },
    /// A record longer than [`MAX_LINE`], skipped.
    TooLong {
        /// The line it starts on (1-based).
        line: u64,
    },
}

/// Reads CSV records (comments start with `#`, any number of fields) from `input`.
pub struct Records<R> {
    core: csv_core::Reader,
    input: R,
    output: Vec<u8>,
    ends: Vec<usize>,
}

impl<R: BufRead> Records<R> {
    /// Records of `input`.
    pub fn new(input: R) -> Records<R> {
        // Comments are skipped here, not by csv_core, so that a record's line is its own.
        let core = csv_core::ReaderBuilder::new().build();
        // A record of n bytes has at most n + 1 fields.
        Records { core, input, output: vec![0; MAX_LINE], ends: vec![0; MAX_LINE + 1] }
    }

    /// Skips a byte-order mark (at the start), blank lines and comment lines, however long.
    fn skip_to_record(&mut self) -> io::Result<()> {
        let mut line = self.core.line();
        if line == 1 && self.input.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
            self.input.consume(3);
        }
        loop {
            match self.input.fill_buf()?.first() {
                // A CR is half of a CRLF line end (lines are counted by their LF).
                Some(b'\r') => {
                    self.input.consume(1);
                    continue;
                }
                Some(b'\n') => self.input.consume(1),
                Some(b'#') => {
                    self.input.skip_until(b'\n')?;
                }
                _ => break,
            }
            line += 1;
        }
        self.core.set_line(line);
        Ok(())
    }

    /// The next record, or `None` at the end of the input.
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        use csv_core::ReadRecordResult as R;
        self.skip_to_record()?;
        let line = self.core.line();
        let (mut outlen, mut endlen, mut too_long) = (0, 0, false);
        loop {
            let input = self.input.fill_buf()?;
            let (res, nin, nout, nend) =
                self.core.read_record(input, &mut self.output[outlen..], &mut self.ends[endlen..]);
            self.input.consume(nin);
            (outlen, endlen) = (outlen + nout, endlen + nend);
            match res {
                R::InputEmpty => {}
                // Over the cap: what is read of it is dropped, and the rest as it comes.
                R::OutputFull | R::OutputEndsFull => (outlen, endlen, too_long) = (0, 0, true),
                R::Record if too_long => return Ok(Some(Record::TooLong { line })),
                R::Record => return Ok(Some(Record::Fields { line, fields: self.fields(endlen) })),
                R::End => return Ok(None),
            }
        }
    }

    fn fields(&self, count: usize) -> Vec<Vec<u8>> {
        let mut start = 0;
        let mut fields = Vec::with_capacity(count);
        for &end in &self.ends[..count] {
            fields.push(self.output[start..end].trim_ascii().to_vec());
            start = end;
        }
        fields
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &[u8]) -> Vec<Record> {
        let mut r = Records::new(text);
        std::iter::from_fn(|| r.next_record().unwrap()).collect()
    }

    fn fields(line: u64, f: &[&str]) -> Record {
        Record::Fields { line, fields: f.iter().map(|s| s.as_bytes().to_vec()).collect() }
    }

    #[test]
    fn records_are_trimmed_with_their_lines_and_comments_skipped() {
        let got = all(b"source, metadata\n# note\n\"a,b\" ,x\r\n\r\n c \n# end");
        assert_eq!(
            got,
            [fields(1, &["source", "metadata"]), fields(3, &["a,b", "x"]), fields(5, &["c"])]
        );
    }

    #[test]
    fn a_record_over_the_cap_is_skipped_alone() {
        let mut text = b"a\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 1));
        text.extend(b"\n");
        text.extend(std::iter::repeat_n(b',', MAX_LINE + 1));
        text.extend(b"\n\"");
        text.extend(std::iter::repeat_n(b'\n', MAX_LINE + 1));
        text.extend(b"\"\nb\n");
        let got = all(&text);
        assert_eq!(
            got,
            [
                fields(1, &["a"]),
                Record::TooLong { line: 2 },
                Record::TooLong { line: 3 },
                Record::TooLong { line: 4 },
                fields(MAX_LINE as u64 + 6, &["b"]),
            ]
        );
    }
}
