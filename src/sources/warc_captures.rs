//! WARC files as captures: each `response` or `resource` record with a target URI, as its
//! record states it (the URL, `WARC-Date` and where it came from, the server's address, the
//! HTTP header bytes as stored, the payload's type), its payload read from the record's own
//! bytes only when asked for.
//!
//! The records keep their bytes: a capture describes a record, it does not re-encode it.
//! `package` copies a WARC member by member ([`crate::package::build_package`], read once,
//! byte-exact) rather than re-writing it from captures: reading a capture's payload again
//! would be a second read of the file (README, design section). Used by `webaip pages` for
//! package containers and source WARC files alike.
//!
//! Where a payload starts is the one rule of `formats::warc::payload`. A block of up to 1 MiB
//! is in memory once its head is read: its payload is kept. A larger one is read again from
//! its record when asked for, never copied: for a record sharing its gzip member with records
//! before it (a file compressed as one stream) that means decompressing the member from its
//! start again, a cost paid only for the payloads read.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, NaiveDate, Utc};

use super::capture::{
    Capture, CaptureError, CaptureKind, CaptureSource, DateSource, Payload, Provenance, Quirk,
    QuirkLog, SideFile,
};
use crate::formats::http::{MAX_HTTP_HEADER_LEN, entity_mime};
use crate::formats::segment::FileRange;
use crate::formats::warc::WarcReader;
use crate::formats::warc::payload;
use crate::formats::warc::reader::WarcRecordHead;
use crate::migrate::mapping::{FIELD_ARC_HEADER, FIELD_DATE_SOURCE};

/// The captures of one WARC file (plain or gzip), in order.
pub struct WarcCaptures {
    name: String,
    file: Arc<File>,
    reader: WarcReader<File>,
    quirks: QuirkLog,
    /// Shared by the payloads it yields: see [`MemberSlot`].
    cursor: MemberSlot,
}

/// What the record callback keeps of a capture record.
struct Seen {
    http_header: Option<Vec<u8>>,
    /// Bytes of the block before the payload.
    payload_offset: u64,
    /// The payload, when its whole block was read with the head.
    kept: Option<Vec<u8>>,
}

impl WarcCaptures {
    /// Opens `path` (named `name` in quirks and provenance); a link, FIFO or device is refused.
    pub fn open(path: &Path, name: String) -> Result<WarcCaptures, CaptureError> {
        let io = |source| CaptureError::Io { path: path.to_path_buf(), source };
        let file = crate::layout::open_regular(path).map_err(|e| io(io::Error::other(e)))?;
        WarcCaptures::from_file(file, path, name)
    }

    /// Reads `file`, already opened (a package's container, confined to the package), as
    /// `path` (named `name` in quirks and provenance).
    pub fn from_file(file: File, path: &Path, name: String) -> Result<WarcCaptures, CaptureError> {
        let io = |source| CaptureError::Io { path: path.to_path_buf(), source };
        let own = file.try_clone().map_err(io)?;
        let reader = WarcReader::new(own, name.as_str()).map_err(CaptureError::Warc)?;
        Ok(WarcCaptures {
            file: Arc::new(file),
            name,
            reader,
            quirks: QuirkLog::default(),
            cursor: MemberSlot::default(),
        })
    }

    fn quirk(&mut self, offset: u64, kind: &str, detail: String) {
        self.quirks.at_offset(&self.name, offset, kind, detail);
    }

    fn next_capture(&mut self) -> Result<Option<Capture>, CaptureError> {
        loop {
            let gzip = self.reader.is_gzip();
            let next = self.reader.next_record(see);
            let (head, _end, seen) = match next {
                Ok(Some(x)) => x,
                Ok(None) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let h = &head.header;
            let Some(seen) = seen else { continue };
            let raw_date = h.get("WARC-Date").unwrap_or("");
            let Some(date) = parse_warc_date(raw_date) else {
                // Quoted in part: a header value may be up to a MiB long.
                let shown: String = raw_date.chars().take(80).collect();
                let cut = if shown.len() < raw_date.len() { " (cut)" } else { "" };
                let within = match (gzip, head.offset_in_member) {
                    (true, n) if n > 0 => format!(" (at offset {n} of its gzip member)"),
                    _ => String::new(),
                };
                let detail =
                    format!("WARC-Date {shown:?}{cut} is no W3C date-time{within}: no capture");
                self.quirk(head.offset, "unreadable-warc-date", detail);
                continue;
            };
            let date_source = match h.get(FIELD_DATE_SOURCE) {
                Some(s) => DateSource { label: s.to_string(), inferred: true },
                None => DateSource { label: "WARC-Date".into(), inferred: false },
            };
            let declared = h.content_length().unwrap_or(0);
            let len = declared.saturating_sub(seen.payload_offset);
            let payload = match seen.kept {
                Some(bytes) => Payload::Bytes(bytes),
                None => Payload::InRecord(RecordPayload {
                    file: Arc::clone(&self.file),
                    name: self.name.clone(),
                    at: head.offset,
                    gzip,
                    in_member: if gzip { head.offset_in_member } else { 0 },
                    skip: head.header_len + seen.payload_offset,
                    len,
                    cursor: self.cursor.clone(),
                }),
            };
            let (kind, content_type) = match &seen.http_header {
                Some(head_bytes) => (
                    CaptureKind::Response,
                    entity_mime(head_bytes)
                        .or_else(|| h.get(FIELD_ARC_HEADER).and_then(arc_line_mime)),
                ),
                None => (CaptureKind::Resource, h.get("Content-Type").map(str::to_string)),
            };
            let in_member = gzip && head.offset_in_member > 0;
            return Ok(Some(Capture {
                uri: h.target_uri().unwrap_or_default().to_string(),
                date,
                date_source,
                ip: h.get("WARC-IP-Address").map(str::to_string),
                kind,
                http_header: seen.http_header,
                content_type,
                payload,
                truncated: h.get("WARC-Truncated").map(str::to_string),
                provenance: Provenance {
                    file: self.name.clone(),
                    offset: Some(head.offset),
                    offset_in_member: in_member.then_some(head.offset_in_member),
                },
                warc_fields: Vec::new(),
                metadata: None,
            }));
        }
    }
}

/// Reads what a capture needs from a record's block: `None` when the record is no capture.
fn see(head: &WarcRecordHead, block: &mut dyn Read) -> io::Result<Option<Seen>> {
    let h = &head.header;
    let kind = h.warc_type();
    if !matches!(kind, Some("response" | "resource")) || h.target_uri().is_none_or(str::is_empty) {
        return Ok(None);
    }
    // The one rule for where a payload starts (formats::warc::payload), as package uses it.
    // The head of every block is read (HTTP headers are at most this long): a block no longer
    // is then in memory whole, and its payload is kept rather than read again.
    let mut prefix = Vec::new();
    block.take(MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut prefix)?;
    let offset = match payload::holds_http_message(kind, h.target_uri()) {
        true => payload::payload_start_of(h, &prefix).offset() as usize,
        false => 0,
    };
    let whole = h.content_length() == Some(prefix.len() as u64);
    // The header leaves the buffer; what stays is the payload, kept without another copy.
    let header: Vec<u8> = prefix.drain(..offset).collect();
    let http_header = (offset > 0).then_some(header);
    let kept = whole.then_some(prefix);
    Ok(Some(Seen { http_header, payload_offset: offset as u64, kept }))
}

/// A payload inside a stored WARC record: `len` bytes, `skip` bytes into the record at `at`
/// (when `gzip`, `in_member` bytes into the decompressed gzip member starting at `at`). The
/// file is the one its source opened (confined, no link): read with positioned reads, never
/// opened again by name.
#[derive(Debug, Clone)]
pub struct RecordPayload {
    file: Arc<File>,
    name: String,
    at: u64,
    gzip: bool,
    in_member: u64,
    skip: u64,
    len: u64,
    /// The decompressor the last payload read from this file's gzip members was left in.
    cursor: MemberSlot,
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

/// A `WARC-Date` (W3C date-time, as WARC 1.1 allows it: to the second or finer, or less
/// precise), in UTC.
pub(crate) fn parse_warc_date(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.to_utc());
    }
    // Less precise forms: `YYYY-MM-DDThh:mmZ`, `YYYY-MM-DD`, `YYYY-MM`, `YYYY`.
    if let Ok(d) = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%MZ") {
        return Some(d.and_utc());
    }
    let day = match s.len() {
        10 => NaiveDate::parse_from_str(s, "%Y-%m-%d").ok(),
        7 => NaiveDate::parse_from_str(&format!("{s}-01"), "%Y-%m-%d").ok(),
        4 if s.bytes().all(|b| b.is_ascii_digit()) => {
            NaiveDate::parse_from_str(&format!("{s}-01-01"), "%Y-%m-%d").ok()
        }
        _ => None,
    };
    day.and_then(|d| d.and_hms_opt(0, 0, 0)).map(|d| d.and_utc())
}

/// The content-type field of a migrated record's ARC header line (`URL IP DATE TYPE ...`),
/// which typed the payload when the HTTP header names none (as the migration does). The URL
/// may hold spaces: the date is the first 14-digit field after two others.
pub(crate) fn arc_line_mime(line: &str) -> Option<String> {
    let fields: Vec<&str> = line.split(' ').filter(|f| !f.is_empty()).collect();
    let i = (2..fields.len().saturating_sub(1))
        .find(|&i| fields[i].len() == 14 && fields[i].bytes().all(|b| b.is_ascii_digit()))?;
    let mime = fields[i + 1].split(';').next()?.trim().to_ascii_lowercase();
    mime.contains('/').then_some(mime)
}

super::capture::one_file_source!(WarcCaptures, "warc");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warc_dates_to_the_second_finer_and_less_precise() {
        let d =
            |s| parse_warc_date(s).map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
        assert_eq!(d("2024-03-15T10:30:06Z").as_deref(), Some("2024-03-15T10:30:06Z"));
        assert_eq!(
            d("2024-03-15T10:30:06.123456Z").as_deref(),
            Some("2024-03-15T10:30:06.123456Z")
        );
        assert_eq!(d("2024-03-15T10:30Z").as_deref(), Some("2024-03-15T10:30:00Z"));
        assert_eq!(d("2024-03-15").as_deref(), Some("2024-03-15T00:00:00Z"));
        assert_eq!(d("2024-03").as_deref(), Some("2024-03-01T00:00:00Z"));
        assert_eq!(d("2024").as_deref(), Some("2024-01-01T00:00:00Z"));
        for bad in ["", "yesterday", "2024-13-01", "20240315103006", "2024-03-15T25:00:00Z"] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn arc_header_types() {
        let v1 = "http://www.example.org/old-page 192.0.2.10 20240315103006 text/html 98";
        assert_eq!(arc_line_mime(v1).as_deref(), Some("text/html"));
        // A URL with spaces (and digits) before the date, a v2 line, a type with parameters.
        let spaced = "http://e.org/a 20240315103006 b.html 192.0.2.10 20240315103006 Text/HTML; charset=x 98";
        assert_eq!(arc_line_mime(spaced).as_deref(), Some("text/html"));
        let v2 = "http://e.org/ 1.2.3.4 20240315103006 application/xhtml+xml 200 - - 0 f.arc 9";
        assert_eq!(arc_line_mime(v2).as_deref(), Some("application/xhtml+xml"));
        assert_eq!(arc_line_mime("http://e.org/ 1.2.3.4 20240315103006 - 9"), None);
        assert_eq!(arc_line_mime("base64:aGVsbG8="), None);
    }
}
