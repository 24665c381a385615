//! `webaip get`: one record, named by URL and time, by record id, or by container and offset,
//! read from its container without reading any other record.
//!
//! A record is named three ways (the identifier scheme):
//! - by URL and time: the URL's SURT key plus a 14-digit timestamp (`com,example)/
//!   20170306040348`), the crawl repository's normalised-URL key; a shorter timestamp
//!   names the capture closest to it, as pywb reads one;
//! - by its `WARC-Record-ID`, where the index carries it (`"recordId"`);
//! - by container and offset: the container's name in its package and the byte offset of the
//!   record (of its gzip member).
//!
//! The first two go through the index to the third. The record at the offset is parsed with
//! the project's WARC reader and checked against the index line before a byte is written:
//! its target URI and date must agree with the line (and its record id, when asked by id),
//! and its payload digest, when the line states one, is verified while it streams. A line
//! naming a missing container or a wrong offset is an error naming both, never another record.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::cdxj::IndexEntry;
use super::lookup::LookupError;
use super::set::IndexSet;
use crate::formats::digest::LabelledDigest;
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::warc::payload::{PayloadStart, payload_start_of};
use crate::formats::warc::{WarcFault, WarcHeader, WarcReader};

/// Why a record cannot be got.
#[derive(Debug, thiserror::Error)]
pub enum GetError {
    /// The index cannot be searched.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// `--at` is not a timestamp.
    #[error("{0:?} is not a timestamp (1 to 14 digits, YYYYMMDDhhmmss)")]
    BadTimestamp(String),
    /// No line of the index has the URL's key.
    #[error("no capture of {url} (key {key}) in the index")]
    NoCapture {
        /// The URL asked for.
        url: String,
        /// Its SURT key.
        key: String,
    },
    /// No line carries the record id asked for.
    #[error("no record {id} in the index")]
    NoRecordId {
        /// The id asked for.
        id: String,
    },
    /// Several records carry the record id asked for.
    #[error(
        "{} records carry the id {id}: {}; get the one meant with --container and --offset",
        .places.len(),
        .places.join("; ")
    )]
    SeveralRecords {
        /// The id asked for.
        id: String,
        /// Where they are: container and offset.
        places: Vec<String>,
    },
    /// No line of the index carries a record id at all.
    #[error(
        "the index carries no record ids (`recordId`): write it with `webaip index --record-ids`, or get the record by URL or by container and offset"
    )]
    NoRecordIds,
    /// The container cannot be opened (absent, outside its package, a link...).
    #[error("container {container}, offset {offset}: {reason}")]
    Container {
        /// The container's name.
        container: String,
        /// The record's offset.
        offset: u64,
        /// Why it cannot be opened.
        reason: String,
    },
    /// No WARC record can be read at the offset.
    #[error("container {container}, offset {offset}: no WARC record there: {fault}")]
    NotARecord {
        /// The container's name.
        container: String,
        /// The offset.
        offset: u64,
        /// What the reader found.
        #[source]
        fault: WarcFault,
    },
    /// The record at the offset is not the one the index line names.
    #[error(
        "container {container}, offset {offset}: the record there is not the one the index names: {mismatch}"
    )]
    NotTheRecord {
        /// The container's name.
        container: String,
        /// The offset.
        offset: u64,
        /// What differs.
        mismatch: String,
    },
    /// The payload's digest is not the line's.
    #[error(
        "container {container}, offset {offset}: the payload's digest is {found}, the index says {expected}"
    )]
    Digest {
        /// The container's name.
        container: String,
        /// The offset.
        offset: u64,
        /// The digest found.
        found: String,
        /// The digest of the line.
        expected: String,
    },
    /// The record's HTTP header section does not end: its payload cannot be located.
    #[error(
        "container {container}, offset {offset}: the HTTP header section does not end within {} bytes: no payload can be located (use --record)",
        MAX_HTTP_HEADER_LEN
    )]
    Unlocated {
        /// The container's name.
        container: String,
        /// The offset.
        offset: u64,
    },
    /// A revisit's original (its payload) is in none of the indexes given.
    #[error(
        "the capture is a revisit (no payload of its own); its original, {uri} at {date}{holder}, is in none of the indexes given{lines}: add its package's index with --index"
    )]
    NoOriginal {
        /// `WARC-Refers-To-Target-URI`.
        uri: String,
        /// `WARC-Refers-To-Date`.
        date: String,
        /// Where the revisit says it is (container, package), as a phrase.
        holder: String,
        /// Why lines of its URI at its date were not it, as a phrase (empty when none).
        lines: String,
    },
    /// The output cannot be written.
    #[error("cannot write the output: {}", crate::layout::describe_io(.0))]
    Output(#[source] io::Error),
}

/// What is written of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Part {
    /// The payload: the bytes after the HTTP header section, as stored (the project's rule,
    /// `formats::warc::payload`); the whole block for a record holding no HTTP message.
    #[default]
    Payload,
    /// The record as stored: its bytes in the container (for a `.warc.gz` its gzip member,
    /// itself a valid one-record `.warc.gz`).
    Record,
}

/// What the record at an offset must be, from its index line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expected {
    /// Its `WARC-Target-URI`.
    pub url: Option<String>,
    /// Its date as 14 digits.
    pub timestamp: Option<String>,
    /// Its payload digest (`sha1:BASE32`), verified unless the record is a revisit.
    pub digest: Option<String>,
    /// Its `WARC-Record-ID`.
    pub record_id: Option<String>,
}

impl Expected {
    /// What an index line says of its record.
    pub fn of(entry: &IndexEntry) -> Expected {
        Expected {
            url: Some(entry.url.clone()),
            timestamp: Some(entry.timestamp.clone()),
            digest: entry.digest.clone(),
            record_id: entry.extra_text("recordId"),
        }
    }
}

/// The record that was got.
#[derive(Debug, Clone)]
pub struct Got {
    /// Its header.
    pub header: WarcHeader,
    /// Bytes written.
    pub written: u64,
    /// True when the payload digest was verified.
    pub digest_verified: bool,
}

/// A timestamp of 1 to 14 digits as seconds since 1970, read as pywb reads `closest` (warcio's
/// `timestamp_to_sec`): a missing part is the end of its period (`2014` is 2014-12-31
/// 23:59:59), each part is clamped to its range.
pub fn timestamp_seconds(ts: &str) -> Result<i64, GetError> {
    if ts.len() > 14 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return Err(GetError::BadTimestamp(ts.into()));
    }
    let padded = if ts.len() < 6 { format!("{ts}{}", &"299912"[ts.len()..]) } else { ts.into() };
    let part = |from: usize, to: usize, min: u32, max: u32| {
        padded.get(from..to).and_then(|s| s.parse::<u32>().ok()).map_or(max, |v| v.clamp(min, max))
    };
    let year = part(0, 4, 1900, 2999) as i32;
    let month = part(4, 6, 1, 12);
    let last_day = (28..=31)
        .rev()
        .find(|&d| chrono::NaiveDate::from_ymd_opt(year, month, d).is_some())
        .unwrap_or(28);
    let day = part(6, 8, 1, last_day);
    let (h, mi, s) = (part(8, 10, 0, 23), part(10, 12, 0, 59), part(12, 14, 0, 59));
    let t = chrono::NaiveDate::from_ymd_opt(year, month, day)
        .and_then(|d| d.and_hms_opt(h, mi, s))
        .ok_or_else(|| GetError::BadTimestamp(ts.into()))?;
    Ok(t.and_utc().timestamp())
}

/// The line of `url`'s capture closest to `at` (default: the latest) in the set, with the
/// number of its index file. Among captures as close, the first in index order, as pywb
/// picks them.
pub fn by_url(
    set: &IndexSet,
    url: &str,
    at: Option<&str>,
) -> Result<(usize, IndexEntry), GetError> {
    let key = super::surt::surt(url);
    let target = at.map(timestamp_seconds).transpose()?;
    let mut best: Option<(i64, usize, IndexEntry)> = None;
    for found in set.lines_of(&key)? {
        let found = found?;
        let entry = found.line.entry(set.files()[found.file].path())?;
        let seconds = timestamp_seconds(&entry.timestamp).unwrap_or(0);
        // Smaller is better: the distance to `at`, or the latest when none.
        let rank = target.map_or(-seconds, |t| (t - seconds).abs());
        let better = match &best {
            None => true,
            Some((r, _, _)) if at.is_none() => rank <= *r,
            Some((r, _, _)) => rank < *r,
        };
        if better {
            best = Some((rank, found.file, entry));
        }
    }
    best.map(|(_, file, entry)| (file, entry))
        .ok_or_else(|| GetError::NoCapture { url: url.into(), key })
}

/// The line carrying record id `id`: every line of every file is read (the index is sorted
/// by URL, not by id), one at a time. Several records of that id (a copied record, ids
/// reused by a careless writer) are refused, naming them: taking one would hide the others.
pub fn by_record_id(set: &IndexSet, id: &str) -> Result<(usize, IndexEntry), GetError> {
    let mut any_id = false;
    let needle = b"\"recordId\"";
    let mut found: Vec<(usize, IndexEntry)> = Vec::new();
    for (i, f) in set.files().iter().enumerate() {
        for line in f.all_lines()? {
            let line = line?;
            if memchr::memmem::find(&line.text, needle).is_none() {
                continue;
            }
            any_id = true;
            if memchr::memmem::find(&line.text, id.as_bytes()).is_none() {
                continue;
            }
            let entry = line.entry(f.path())?;
            let same = |(j, e): &(usize, IndexEntry)| {
                *j == i && e.filename == entry.filename && e.offset == entry.offset
            };
            if entry.extra_text("recordId").as_deref() == Some(id) && !found.iter().any(same) {
                found.push((i, entry));
            }
        }
    }
    match found.len() {
        0 if any_id => Err(GetError::NoRecordId { id: id.into() }),
        0 => Err(GetError::NoRecordIds),
        1 => Ok(found.remove(0)),
        _ => Err(GetError::SeveralRecords {
            id: id.into(),
            places: found
                .iter()
                .map(|(_, e)| format!("{} offset {}", e.filename, e.offset))
                .collect(),
        }),
    }
}

/// The line of the original a revisit (`header`) refers to, with the number of its index
/// file, found as pywb finds it: a line of the key of `WARC-Refers-To-Target-URI` (of the
/// revisit's own URI when it names none), not itself a revisit, with the revisit's payload
/// digest and, where both state one, the record id of `WARC-Refers-To`; the one at
/// `WARC-Refers-To-Date` (the revisit's date when it names none), else the closest to it. The
/// key, not the URL as written, is matched: an `https` revisit of an `http` capture is
/// resolved. Reading its record then verifies the payload against that digest.
pub fn original_of(set: &IndexSet, header: &WarcHeader) -> Result<(usize, IndexEntry), GetError> {
    let field = |name: &str| header.get(name).map(str::trim).filter(|v| !v.is_empty());
    // WARC 1.0 wrote the URI in angle brackets.
    let uri = field("WARC-Refers-To-Target-URI").or(header.target_uri()).unwrap_or("");
    let uri = uri.strip_prefix('<').and_then(|u| u.strip_suffix('>')).unwrap_or(uri);
    let ts = date_digits(field("WARC-Refers-To-Date").or(field("WARC-Date")).unwrap_or(""));
    let wanted_secs = timestamp_seconds(&ts).unwrap_or(0);
    let (id, digest) = (header.get("WARC-Refers-To"), header.get("WARC-Payload-Digest"));
    let key = |d: &str| super::digests::DigestKey::parse(d.trim());
    let wanted = digest.and_then(key);
    // Why the lines of the key at that time were not taken, for the error.
    let mut passed_over = Vec::new();
    let mut best: Option<(i64, usize, IndexEntry)> = None;
    for found in set.lines_of(&super::surt::surt(uri))? {
        let found = found?;
        let entry = found.line.entry(set.files()[found.file].path())?;
        let why = if entry.mime.as_deref() == Some("warc/revisit") {
            Some("is a revisit itself".to_string())
        } else if wanted.is_none() || entry.digest.as_deref().and_then(key) != wanted {
            Some(format!("has digest {}", entry.digest.as_deref().unwrap_or("(none)")))
        } else {
            match (id, entry.extra_text("recordId")) {
                (Some(a), Some(b)) if a.trim() != b => Some(format!("is record {b}")),
                _ => None,
            }
        };
        let distance = (timestamp_seconds(&entry.timestamp).unwrap_or(0) - wanted_secs).abs();
        match why {
            None if best.as_ref().is_none_or(|(d, _, _)| distance < *d) => {
                best = Some((distance, found.file, entry));
            }
            None => {}
            Some(w) if entry.timestamp == ts => {
                passed_over.push(format!("{} offset {}: {w}", entry.filename, entry.offset));
            }
            Some(_) => {}
        }
    }
    best.map(|(_, file, entry)| (file, entry)).ok_or_else(|| no_original(header, &passed_over))
}

/// The error for a revisit whose original is not at hand, naming what the revisit says of it
/// and why the lines of its URI at its date (`passed_over`) were not it.
pub fn no_original(header: &WarcHeader, passed_over: &[String]) -> GetError {
    let field = |name: &str| header.get(name).unwrap_or("?").trim().to_string();
    let mut holder = String::new();
    if let Some(c) = header.get("WARC-Refers-To-Container") {
        holder.push_str(&format!(" in {}", c.trim()));
    }
    if let Some(p) = header.get(crate::formats::warc::header::FIELD_REFERS_TO_PACKAGE) {
        holder.push_str(&format!(" of package {}", p.trim()));
    }
    let (uri, date) = (field("WARC-Refers-To-Target-URI"), field("WARC-Refers-To-Date"));
    let lines = match passed_over.is_empty() {
        true => String::new(),
        false => format!(" (lines of it at that time: {})", passed_over.join("; ")),
    };
    GetError::NoOriginal { uri, date, holder, lines }
}

/// Checks that the record read as a revisit's original is one: not a revisit itself, its
/// payload verified against the revisit's digest.
pub fn check_original(got: &Got, entry: &IndexEntry) -> Result<(), GetError> {
    let why = match (got.header.warc_type(), got.digest_verified) {
        (Some("revisit"), _) => "it is a revisit itself",
        (_, false) => "its payload digest could not be verified",
        _ => return Ok(()),
    };
    Err(GetError::NotTheRecord {
        container: entry.filename.clone(),
        offset: entry.offset,
        mismatch: format!("as the original of a revisit: {why}"),
    })
}

/// The 14 digits of a `WARC-Date` as an index writes them (its digits, the fraction dropped).
fn date_digits(date: &str) -> String {
    match crate::formats::dates::parse_warc_date(date.trim()) {
        Some(d) => d.format("%Y%m%d%H%M%S").to_string(),
        None => date.chars().filter(char::is_ascii_digit).take(14).collect(),
    }
}

/// What differs between a record's header and what the line says of it.
fn mismatch(header: &WarcHeader, want: &Expected) -> Option<String> {
    // As warcio reads it, whose reading the index lines state: spaces (invalid there) as %20.
    let uri = header.target_uri().unwrap_or("").replace(' ', "%20");
    if let Some(url) = &want.url
        && uri != *url
    {
        return Some(format!("its target URI is {uri:?}, the index says {url:?}"));
    }
    let date = header.get("WARC-Date").unwrap_or("");
    if let Some(ts) = &want.timestamp
        && date_digits(date) != *ts
    {
        return Some(format!("its date is {date:?}, the index says {ts}"));
    }
    let id = header.record_id().unwrap_or("");
    if let Some(want_id) = &want.record_id
        && id != want_id
    {
        return Some(format!("its record id is {id:?}, the index says {want_id:?}"));
    }
    None
}

/// Where a record is: its container (opened, positioned at the record) and what names it.
pub struct At<'a> {
    /// The container, positioned at the record's first byte.
    pub file: File,
    /// The container's name, for messages.
    pub container: &'a str,
    /// The record's offset in the container, for messages.
    pub offset: u64,
    /// The record's length, when an index line states it: no byte past it is read.
    pub length: Option<u64>,
}

/// A writer that hashes what passes, when a digest is to be verified.
struct Checked<'a> {
    out: &'a mut dyn Write,
    digest: Option<LabelledDigest>,
    written: u64,
}

impl Write for Checked<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write_all(buf)?;
        if let Some(d) = &mut self.digest {
            d.update(buf);
        }
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A writer that drops what it is given (the payload hashed, not written, for `--record`).
struct Nowhere;

impl Write for Nowhere {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How reading the one record went wrong inside the reader's callback.
enum Stop {
    Mismatch(String),
    Unlocated,
    Output(io::Error),
}

/// Reads the record at `at`, checks it is the one `want` names, and writes `part` of it to
/// `out`. For [`Part::Record`] the record is read and verified first, then its bytes are
/// copied; for [`Part::Payload`] the payload streams to `out` as it is verified: a digest that
/// does not match is an error after the bytes were written (a caller writing to a file
/// writes to a temporary and keeps it only on success).
pub fn read_record(
    at: At<'_>,
    want: &Expected,
    part: Part,
    out: &mut dyn Write,
) -> Result<Got, GetError> {
    let At { mut file, container, offset, length } = at;
    let ctx =
        |mismatch: String| GetError::NotTheRecord { container: container.into(), offset, mismatch };
    let start = file.stream_position().map_err(|e| ctx(crate::layout::describe_io(&e)))?;
    let limited = (&mut file).take(length.unwrap_or(u64::MAX));
    let not_a_record = |e: crate::formats::warc::WarcError| GetError::NotARecord {
        container: container.into(),
        offset,
        fault: e.fault,
    };
    let mut reader = WarcReader::new(limited, container).map_err(not_a_record)?;
    let mut stop = None;
    let mut nowhere = Nowhere;
    let sink: &mut dyn Write = if part == Part::Payload { &mut *out } else { &mut nowhere };
    let read = reader.next_record(|head, block| {
        stream_payload(&head.header, block, want, sink).map_err(|s| {
            let e = io::Error::other("stopped");
            stop = Some(s);
            e
        })
    });
    let (head, end, (written, digest)) = match (stop, read) {
        (Some(Stop::Mismatch(m)), _) => return Err(ctx(m)),
        (Some(Stop::Unlocated), _) => {
            return Err(GetError::Unlocated { container: container.into(), offset });
        }
        (Some(Stop::Output(e)), _) => return Err(GetError::Output(e)),
        (None, Err(e)) => return Err(not_a_record(e)),
        (None, Ok(None)) => return Err(ctx("the container ends there".into())),
        (None, Ok(Some(r))) => r,
    };
    if head.offset != 0 || head.offset_in_member != 0 {
        return Err(ctx("the record does not start at the offset".into()));
    }
    let verified = digest.is_some();
    if let Some(d) = digest
        && let Err(m) = d.verify()
    {
        return Err(GetError::Digest {
            container: container.into(),
            offset,
            found: m.found,
            expected: want.digest.clone().unwrap_or_default(),
        });
    }
    let record_len = length.unwrap_or(end.end);
    let written = match part {
        Part::Payload => written,
        Part::Record => {
            drop(reader);
            file.seek(SeekFrom::Start(start)).map_err(|e| ctx(crate::layout::describe_io(&e)))?;
            io::copy(&mut file.take(record_len), out).map_err(GetError::Output)?
        }
    };
    Ok(Got { header: head.header, written, digest_verified: verified })
}

/// Inside the reader's callback: checks the header against `want`, then writes the payload to
/// `out` through the digest of the line (not for a revisit, whose line states its original's
/// digest). Returns the bytes written and the digest to verify.
fn stream_payload(
    header: &WarcHeader,
    block: &mut dyn Read,
    want: &Expected,
    out: &mut dyn Write,
) -> Result<(u64, Option<LabelledDigest>), Stop> {
    if let Some(m) = mismatch(header, want) {
        return Err(Stop::Mismatch(m));
    }
    let block_len = header.content_length().unwrap_or(0);
    let prefix_len = block_len.min(MAX_HTTP_HEADER_LEN as u64);
    let mut prefix = Vec::with_capacity(prefix_len as usize);
    let read_err = |e: io::Error| Stop::Mismatch(format!("its block cannot be read: {e}"));
    block.take(prefix_len).read_to_end(&mut prefix).map_err(read_err)?;
    let skip = match payload_start_of(header, &prefix) {
        PayloadStart::Unlocated => return Err(Stop::Unlocated),
        s => s.offset() as usize,
    };
    let revisit = header.warc_type() == Some("revisit");
    let digest =
        want.digest.as_deref().filter(|_| !revisit).and_then(|d| LabelledDigest::parse(d).ok());
    let mut checked = Checked { out, digest, written: 0 };
    checked.write_all(prefix.get(skip..).unwrap_or_default()).map_err(Stop::Output)?;
    copy_block(block, &mut checked)?;
    Ok((checked.written, checked.digest))
}

/// Copies the rest of the block, telling a failed read from a failed write.
fn copy_block(block: &mut dyn Read, out: &mut Checked<'_>) -> Result<(), Stop> {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match block.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Stop::Mismatch(format!("its block cannot be read: {e}"))),
        };
        out.write_all(&buf[..n]).map_err(Stop::Output)?;
    }
}

/// Opens container `name` (a name from an index line: hostile) below `root`, positioned at
/// `offset`: the name must stay inside the root (no absolute name, no `..`, no symbolic link
/// on the way), and the offset must fall inside the container.
pub fn open_in_package(root: &Path, name: &str, offset: u64) -> Result<File, GetError> {
    let fail = |reason: String| GetError::Container { container: name.into(), offset, reason };
    let mut file = crate::layout::open_in(root, name).map_err(|e| fail(e.reason()))?;
    seek_inside(&mut file, offset, fail)?;
    Ok(file)
}

/// Opens a container the user named (links followed, only a regular file), at `offset`.
pub fn open_user_container(path: &Path, offset: u64) -> Result<File, GetError> {
    let name = path.display().to_string();
    let fail = |reason: String| GetError::Container { container: name.clone(), offset, reason };
    let mut file = crate::layout::open_user_file(path).map_err(|e| fail(e.reason()))?;
    seek_inside(&mut file, offset, fail)?;
    Ok(file)
}

/// Seeks `file` to `offset`, which must fall inside it; `fail` names the container.
fn seek_inside(
    file: &mut File,
    offset: u64,
    fail: impl Fn(String) -> GetError,
) -> Result<(), GetError> {
    let len = file.metadata().map_err(|e| fail(crate::layout::describe_io(&e)))?.len();
    if offset >= len {
        return Err(fail(format!("the offset is past the container's end ({len} bytes)")));
    }
    file.seek(SeekFrom::Start(offset)).map_err(|e| fail(crate::layout::describe_io(&e)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Timestamps read as warcio's `timestamp_to_sec` reads them (its doctests' values).
    #[test]
    fn timestamps_as_pywb_reads_them() {
        assert_eq!(timestamp_seconds("20131226095010").unwrap(), 1388051410);
        assert_eq!(timestamp_seconds("2014").unwrap(), 1420070399);
        let at = |ts| chrono::DateTime::from_timestamp(timestamp_seconds(ts).unwrap(), 0).unwrap();
        assert_eq!(at("201410").to_string(), "2014-10-31 23:59:59 UTC");
        assert_eq!(at("20141226095").to_string(), "2014-12-26 09:59:59 UTC");
        assert_eq!(at("20131709005601").to_string(), "2013-12-09 00:56:01 UTC");
        assert_eq!(at("").to_string(), "2999-12-31 23:59:59 UTC");
        assert!(timestamp_seconds("2014-01").is_err());
        assert!(timestamp_seconds("201401011200001").is_err());
    }
}
