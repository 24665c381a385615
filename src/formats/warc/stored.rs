//! Stored WARC records, read as stored: the one home of decoding a record kept as it was
//! written (plain, or gzip: `record_reader`, `record_head`, `payload_reader`).
//!
//! Payloads inside stored WARC records are read in place ([`RecordPayload`]): a record's
//! offset, its place in its gzip member, and the decompressor the last read from that member
//! was left in (`MemberSlot`), so payloads read in file order from a WARC compressed as one
//! gzip stream cost one pass, not one pass each.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};

use flate2::read::MultiGzDecoder;

use crate::formats::segment::FileRange;

/// The bytes of a stored record: as stored, or decompressed (every gzip member in turn; the
/// decoder boxed, as the copies this replaced boxed their readers).
pub(crate) enum RecordBytes<R: Read> {
    Plain(R),
    Gzip(Box<MultiGzDecoder<R>>),
}

impl<R: Read> Read for RecordBytes<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            RecordBytes::Plain(r) => r.read(buf),
            RecordBytes::Gzip(r) => r.read(buf),
        }
    }
}

/// A reader of the record stored in `stored`, decompressed when `gzip`.
pub(crate) fn record_reader<R: Read>(stored: R, gzip: bool) -> RecordBytes<R> {
    match gzip {
        true => RecordBytes::Gzip(Box::new(MultiGzDecoder::new(stored))),
        false => RecordBytes::Plain(stored),
    }
}

/// The first `len` bytes of the record stored in `stored` (fewer when it is shorter).
pub(crate) fn record_head(stored: impl Read, gzip: bool, len: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    record_reader(stored, gzip).take(len).read_to_end(&mut out)?;
    Ok(out)
}

/// A reader of the `len` bytes at `begin` of the record stored in `stored` (its payload, by
/// the range a package states, or a migrated ARC record's by the offset its mapping found);
/// an error when the record ends before `begin`.
pub(crate) fn payload_reader<R: Read>(
    stored: R,
    gzip: bool,
    begin: u64,
    len: u64,
) -> io::Result<io::Take<RecordBytes<R>>> {
    let mut record = record_reader(stored, gzip);
    let skipped = io::copy(&mut (&mut record).take(begin), &mut io::sink())?;
    if skipped < begin {
        let why = format!("the record ends at {skipped}, before its payload's offset {begin}");
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, why));
    }
    Ok(record.take(len))
}

/// A payload inside a stored WARC record: `len` bytes, `skip` bytes into the record at `at`
/// (when `gzip`, `in_member` bytes into the decompressed gzip member starting at `at`). The
/// file is the one its source opened (confined, no link): read with positioned reads, never
/// opened again by name.
#[derive(Debug, Clone)]
pub struct RecordPayload {
    pub(crate) file: Arc<File>,
    pub(crate) name: String,
    pub(crate) at: u64,
    pub(crate) gzip: bool,
    pub(crate) in_member: u64,
    pub(crate) skip: u64,
    pub(crate) len: u64,
    /// The decompressor the last payload read from this file's gzip members was left in.
    pub(crate) cursor: MemberSlot,
}

impl PartialEq for RecordPayload {
    /// The same bytes of the same open file.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.file, &other.file)
            && (self.at, self.gzip, self.in_member, self.skip, self.len)
                == (other.at, other.gzip, other.in_member, other.skip, other.len)
    }
}

impl Eq for RecordPayload {}

impl RecordPayload {
    /// The payload's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when it holds no byte.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A reader over the payload, past the blank lines the WARC reader tolerates before a
    /// record. Fails when no WARC record starts there any more or it ends before the payload.
    pub fn reader(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        let gone = |kind, what: &str| {
            let at = self.at;
            io::Error::new(kind, format!("{}: the record at offset {at} {what}", self.name))
        };
        let mut record: Box<dyn BufRead + Send + '_> = if self.gzip {
            // Past the records before it in its gzip member.
            match self.cursor.reader_at(&self.file, self.at, self.in_member)? {
                Some(member) => Box::new(member),
                None => return Err(gone(io::ErrorKind::UnexpectedEof, "is not there any more")),
            }
        } else {
            let end = self.file.metadata()?.len();
            let raw = FileRange::new(&*self.file, self.at, end.saturating_sub(self.at));
            Box::new(BufReader::with_capacity(64 * 1024, raw))
        };
        loop {
            let b = record.fill_buf()?;
            let blank = b.iter().take_while(|&&c| c == b'\r' || c == b'\n').count();
            let done = blank < b.len() || b.is_empty();
            record.consume(blank);
            if done {
                break;
            }
        }
        let mut version = [0u8; 5];
        record
            .read_exact(&mut version)
            .map_err(|_| gone(io::ErrorKind::UnexpectedEof, "is not there any more"))?;
        if &version != b"WARC/" {
            return Err(gone(io::ErrorKind::InvalidData, "is not there any more"));
        }
        let rest = self.skip.saturating_sub(version.len() as u64);
        let skipped = io::copy(&mut (&mut record).take(rest), &mut io::sink())?;
        if skipped < rest {
            return Err(gone(io::ErrorKind::UnexpectedEof, "ends before its payload"));
        }
        Ok(Box::new(record.take(self.len)))
    }
}
/// The decompressor a payload read from a gzip member was left in, kept for the next read from
/// the same member. A WARC compressed as one gzip stream is one member: without it, each
/// payload read decompresses the file again from its start, and reading every payload is
/// quadratic in the file's size. With it, payloads read in file order (as `pages` and the
/// pipeline read them) continue where the last one stopped: one pass. A read that finds it
/// taken (another thread) or past its place starts a decompressor of its own.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemberSlot(Arc<Mutex<Option<MemberCursor>>>);

/// A gzip member's decompressor, `pos` bytes into the decompressed member starting at `at`.
struct MemberCursor {
    at: u64,
    pos: u64,
    member: BufReader<flate2::bufread::GzDecoder<BufReader<FileRange<Arc<File>>>>>,
}

impl std::fmt::Debug for MemberCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemberCursor {{ at: {}, pos: {} }}", self.at, self.pos)
    }
}

impl MemberSlot {
    /// A reader of the member at `at` of `file`, `skip` bytes into it (decompressed); `None`
    /// when the member ends before. Reuses the kept decompressor when it is not past `skip`.
    fn reader_at(&self, file: &Arc<File>, at: u64, skip: u64) -> io::Result<Option<MemberReader>> {
        let kept = self.0.lock().ok().and_then(|mut kept| kept.take());
        let cursor = match kept.filter(|c| c.at == at && c.pos <= skip) {
            Some(c) => c,
            None => {
                let end = file.metadata()?.len();
                let raw = FileRange::new(Arc::clone(file), at, end.saturating_sub(at));
                let raw = BufReader::with_capacity(64 * 1024, raw);
                let member = BufReader::new(flate2::bufread::GzDecoder::new(raw));
                MemberCursor { at, pos: 0, member }
            }
        };
        let mut reader = MemberReader { cursor: Some(cursor), slot: self.clone(), failed: false };
        let want = skip - reader.pos();
        let skipped = io::copy(&mut (&mut reader).take(want), &mut io::sink())?;
        Ok((skipped == want).then_some(reader))
    }
}

/// Reads a gzip member through a [`MemberCursor`], counting what it consumes, and gives the
/// cursor back to its slot when dropped (unless a read failed: its state is then unknown).
struct MemberReader {
    cursor: Option<MemberCursor>,
    slot: MemberSlot,
    failed: bool,
}

impl MemberReader {
    fn pos(&self) -> u64 {
        self.cursor.as_ref().map_or(0, |c| c.pos)
    }

    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        self.failed |= r.is_err();
        r
    }
}

impl Read for MemberReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(c) = self.cursor.as_mut() else { return Ok(0) };
        let r = c.member.read(buf);
        if let Ok(n) = r {
            c.pos += n as u64;
        }
        self.note(r)
    }
}

impl BufRead for MemberReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let Some(c) = self.cursor.as_mut() else { return Ok(&[]) };
        match c.member.fill_buf() {
            Ok(b) => Ok(b),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn consume(&mut self, n: usize) {
        if let Some(c) = self.cursor.as_mut() {
            c.member.consume(n);
            c.pos += n as u64;
        }
    }
}

impl Drop for MemberReader {
    fn drop(&mut self) {
        if let (Some(c), false) = (self.cursor.take(), self.failed)
            && let Ok(mut kept) = self.slot.0.lock()
        {
            *kept = Some(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gz(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn plain_and_gzip_records_give_the_same_head_and_payload() {
        let record = b"WARC/1.1\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n";
        // A record split over two members reads as one.
        let split = [gz(&record[..10]), gz(&record[10..])].concat();
        for (stored, gzip) in [(&record[..], false), (&split[..], true)] {
            assert_eq!(record_head(stored, gzip, 8).unwrap(), b"WARC/1.1");
            assert_eq!(record_head(stored, gzip, 1000).unwrap(), record);
            let mut payload = Vec::new();
            payload_reader(stored, gzip, 31, 5).unwrap().read_to_end(&mut payload).unwrap();
            assert_eq!(payload, b"hello", "gzip {gzip}");
        }
    }

    #[test]
    fn a_record_ending_before_its_payload_is_an_error() {
        let record = b"WARC/1.1\r\n";
        let Err(e) = payload_reader(&record[..], false, 40, 5) else { panic!("read past the end") };
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("ends at 10"), "{e}");
        let Err(e) = payload_reader(&gz(record)[..], true, 40, 5) else { panic!("gzip") };
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
