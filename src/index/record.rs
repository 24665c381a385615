//! The index line of one WARC record, derived as cdxj-indexer (warcio's indexer) derives it,
//! so that webaip's lines equal its lines:
//!
//! - indexed: `response`, `revisit`, `resource` and `metadata` records, except a `resource` or
//!   `metadata` whose `Content-Type` is exactly `application/warc-fields`;
//! - `url`: `WARC-Target-URI`, angle brackets around it dropped, spaces written `%20`;
//! - timestamp: the digits of `WARC-Date` (`2013-12-26T10:11:12Z` → `20131226101112`);
//! - `mime`: `warc/revisit` for a revisit; the HTTP `Content-Type` of a response (none when the
//!   record holds no HTTP message); the record's `Content-Type` otherwise; cut at the first `;`
//!   or blank;
//! - `status`: the HTTP status code of a response or revisit holding an HTTP message (the
//!   status line's second token, not checked);
//! - `digest`: `WARC-Payload-Digest`; when a `response`, `resource` or `metadata` record has
//!   none, the SHA-1 of its payload is computed (the only case that reads the payload).
//!
//! The HTTP message is read as warcio reads it: only records whose URI starts with `http:` or
//! `https:` (as written) and whose block is not empty hold one; its header section and where
//! the payload starts follow the one rule of `crate::formats::warc::payload`, its fields are
//! read by [`crate::formats::http`].

use std::io::{self, Read};

use sha1::{Digest, Sha1};

use super::cdxj::IndexEntry;
use super::method::{MethodQuery, RequestHead, Seen, method_query};
use crate::formats::http::{self, HttpHead, field_value, message_head, status_code};
use crate::formats::warc::WarcHeader;
use crate::formats::warc::payload::{PayloadStart, payload_start, warcio_reads_http};

/// Bytes of a block read at first: enough for nearly every HTTP header section (more are read
/// only when its end is not among them, so that a record is read no further than it must).
const FIRST_READ: usize = 4 * 1024;
/// Most bytes of HTTP header section looked at (as the rest of webaip:
/// [`crate::formats::http::MAX_HTTP_HEADER_LEN`]).
const MAX_HEAD: usize = crate::formats::http::MAX_HTTP_HEADER_LEN;

/// Why a record that should be indexed cannot be.
#[derive(Debug, thiserror::Error)]
pub enum RecordIndexError {
    /// `WARC-Date` is absent or not an ISO 8601 date warcio reads.
    #[error("WARC-Date {0:?} is not a date")]
    Date(String),
    /// The block cannot be read.
    #[error("its block cannot be read")]
    Read(#[source] io::Error),
}

/// True when a record of this header is indexed (cdxj-indexer's default record types).
pub fn is_indexed(header: &WarcHeader) -> bool {
    match header.warc_type() {
        Some("response" | "revisit") => true,
        Some("resource" | "metadata") => {
            header.get("Content-Type") != Some("application/warc-fields")
        }
        _ => false,
    }
}

/// The index entry of a record (key, timestamp, url, mime, status, digest; the caller sets
/// length, offset and filename), reading as much of `block` as it needs: the HTTP header
/// section, or the whole payload when a digest must be computed. `None` for a record that is
/// not indexed, or that names no target URI (cdxj-indexer fails on one).
pub fn entry_of(
    header: &WarcHeader,
    block: &mut dyn Read,
) -> Result<Option<IndexEntry>, RecordIndexError> {
    if !is_indexed(header) {
        return Ok(None);
    }
    let Some(url) = header.get("WARC-Target-URI").map(target_url) else {
        return Ok(None);
    };
    let date = header.get("WARC-Date").unwrap_or_default();
    let timestamp = timestamp14(date).ok_or_else(|| RecordIndexError::Date(date.to_string()))?;
    let http = HttpSection::read_if_held(header, block).map_err(RecordIndexError::Read)?;
    let warc_type = header.warc_type().unwrap_or_default();
    let status = match &http {
        // An empty status (a blank status line) is no status: cdxj-indexer writes none.
        Some(h) if matches!(warc_type, "response" | "revisit") => {
            Some(status_code(h.fields())).filter(|s| !s.is_empty())
        }
        _ => None,
    };
    Ok(Some(IndexEntry {
        key: super::surt::surt(&url),
        timestamp,
        url,
        mime: mime_for(header, http.as_ref()),
        status,
        digest: digest_for(header, http.as_ref(), block).map_err(RecordIndexError::Read)?,
        ..IndexEntry::default()
    }))
}

/// The index's `mime`: `warc/revisit` for a revisit, the HTTP `Content-Type` of a response,
/// the record's `Content-Type` otherwise.
fn mime_for(header: &WarcHeader, http: Option<&HttpSection>) -> Option<String> {
    match header.warc_type().unwrap_or_default() {
        "revisit" => Some("warc/revisit".to_string()),
        "response" => {
            http.and_then(|h| field_value(h.fields(), b"content-type")).map(|v| mime_of(&v))
        }
        _ => header.get("Content-Type").map(mime_of),
    }
}

/// The index's `digest`: `WARC-Payload-Digest`, else (but for a revisit) the SHA-1 of the
/// payload, the rest of `block` read for it.
fn digest_for(
    header: &WarcHeader,
    http: Option<&HttpSection>,
    block: &mut dyn Read,
) -> io::Result<Option<String>> {
    let stated = header.get("WARC-Payload-Digest");
    if let Some(d) = stated.filter(|d| !d.is_empty()) {
        return Ok(Some(d.to_string()));
    }
    if header.warc_type() == Some("revisit") {
        return Ok(stated.map(str::to_string));
    }
    let read = http.map_or(&[][..], HttpSection::payload_read);
    payload_sha1(read, block).map(Some)
}

/// What a record gives the index and the pairing of requests with responses
/// ([`super::method`]): its entry as [`entry_of`] gives it, and for a request its method and
/// body as a query.
pub fn seen_of(header: &WarcHeader, block: &mut dyn Read) -> Result<Seen, RecordIndexError> {
    let warc_type = header.warc_type().unwrap_or_default().to_string();
    let method = match warc_type.as_str() {
        "request" => request_method(header, block).map_err(RecordIndexError::Read)?,
        _ => None,
    };
    Ok(Seen {
        entry: entry_of(header, block)?,
        id: header.record_id().map(str::to_string),
        concurrent_to: header.get("WARC-Concurrent-To").map(str::to_string),
        uri: header.get("WARC-Target-URI").map(str::to_string),
        warc_type,
        method,
    })
}

/// A request's method and body as a query, when it holds an HTTP request (as warcio reads
/// one) that is a POST or PUT.
fn request_method(header: &WarcHeader, block: &mut dyn Read) -> io::Result<Option<MethodQuery>> {
    let Some(http) = HttpSection::read_if_held(header, block)? else {
        return Ok(None);
    };
    let fields = http.fields();
    let request = RequestHead {
        method: http::request_method(fields),
        content_type: field_value(fields, b"content-type"),
        content_length: field_value(fields, b"content-length"),
    };
    let mut body = http.payload_read().chain(block);
    method_query(&request, &mut body)
}

/// The start of a record's HTTP message: the bytes read of its block, and where its payload
/// starts among them by the one rule of [`crate::formats::warc::payload`].
struct HttpSection {
    /// The header section and whatever of the payload was read with it.
    read: Vec<u8>,
    /// Where the payload starts.
    start: PayloadStart,
}

impl HttpSection {
    /// The HTTP message's start when the record holds one as warcio reads it (an `http:` or
    /// `https:` URI as written, a block not empty); `None` otherwise, nothing read.
    fn read_if_held(header: &WarcHeader, block: &mut dyn Read) -> io::Result<Option<HttpSection>> {
        let len = header.content_length().unwrap_or(0);
        if !warcio_reads_http(header.warc_type(), header.target_uri(), len) {
            return Ok(None);
        }
        let mut read = Vec::new();
        let ended = read_head(block, &mut read)?;
        let whole = ended || len == read.len() as u64;
        let start = payload_start(header.warc_type(), header.target_uri(), &read, whole);
        Ok(Some(HttpSection { read, start }))
    }

    /// The header section: every byte read when its end was not found.
    fn fields(&self) -> &[u8] {
        match self.start {
            PayloadStart::AfterHttpHeader(n) => &self.read[..(n as usize).min(self.read.len())],
            _ => &self.read,
        }
    }

    /// The bytes of the payload read with the header section (all of them when no payload
    /// could be located: the whole block stands for it).
    fn payload_read(&self) -> &[u8] {
        &self.read[(self.start.offset() as usize).min(self.read.len())..]
    }
}

/// The target URI as warcio hands it on: `<...>` unwrapped, spaces as `%20`.
fn target_url(uri: &str) -> String {
    let uri = match uri.strip_prefix('<').and_then(|u| u.strip_suffix('>')) {
        Some(inner) => inner,
        None => uri,
    };
    uri.replace(' ', "%20")
}

/// The media type part of a `Content-Type` value: up to the first `;` or white space.
fn mime_of(value: &str) -> String {
    value
        .split(|c: char| c == ';' || c.is_whitespace())
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// `WARC-Date` as 14 digits, read as warcio reads it: the runs of digits are year, month,
/// day, hours, minutes, seconds (and a fraction, ignored); 3 to 7 of them.
pub fn timestamp14(date: &str) -> Option<String> {
    let mut nums: Vec<&str> = date.split(|c: char| !c.is_ascii_digit()).collect();
    if nums.last() == Some(&"") {
        nums.pop();
    }
    if !(3..=7).contains(&nums.len()) {
        return None;
    }
    let mut v = [0u32; 6];
    for (slot, n) in v.iter_mut().zip(&nums) {
        *slot = n.parse().ok()?;
    }
    if nums.len() == 7 && nums[6].is_empty() {
        return None;
    }
    let [y, mo, d, h, mi, s] = v;
    let valid = (1..=9999).contains(&y)
        && chrono::NaiveDate::from_ymd_opt(y as i32, mo, d).is_some()
        && h < 24
        && mi < 60
        && s < 60;
    valid.then(|| format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}"))
}

/// Reads the start of `block` into `head`: at least until the HTTP header section ends (or
/// [`MAX_HEAD`] bytes, or the block ends). True when the block ended.
fn read_head(block: &mut dyn Read, head: &mut Vec<u8>) -> io::Result<bool> {
    let mut want = FIRST_READ;
    loop {
        let before = head.len();
        block.take((want - before) as u64).read_to_end(head)?;
        if head.len() < want {
            return Ok(true);
        }
        if matches!(message_head(head), HttpHead::Complete(_)) || want >= MAX_HEAD {
            return Ok(false);
        }
        want = (want * 4).min(MAX_HEAD);
    }
}

/// `sha1:BASE32` of the payload: the bytes of it already `read`, then the rest of `block`.
fn payload_sha1(read: &[u8], block: &mut dyn Read) -> io::Result<String> {
    let mut sha = Sha1::new();
    sha.update(read);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = block.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
    }
    Ok(crate::formats::digest::sha1_base32(&sha.finalize()))
}

/// A record's start, then [`Cut`] when the record goes on past it: a read needing more than
/// the start shows as such instead of looking like the record's end (`package --index` and
/// the member-by-member indexer read a record's fields from its first bytes).
pub(crate) struct Start<'a> {
    /// The bytes shown.
    pub bytes: &'a [u8],
    /// The record goes on past them.
    pub cut: bool,
}

/// The record goes on past the bytes shown.
#[derive(Debug, thiserror::Error)]
#[error("the record goes on past the bytes shown to the index")]
pub(crate) struct Cut;

impl std::io::Read for Start<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.bytes.is_empty() && self.cut {
            return Err(std::io::Error::other(Cut));
        }
        self.bytes.read(buf)
    }
}

/// Whether a read failed at the [`Cut`].
pub(crate) fn is_cut(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|e| e.is::<Cut>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(fields: &[(&str, &str)]) -> WarcHeader {
        let mut h = WarcHeader::new("WARC/1.1");
        for (k, v) in fields {
            h.push(k, v);
        }
        h
    }

    /// Dates read as warcio reads them; what it cannot read is refused.
    #[test]
    fn warc_dates_become_14_digits() {
        assert_eq!(timestamp14("2013-12-26T10:11:12Z").as_deref(), Some("20131226101112"));
        assert_eq!(timestamp14("2013-12-26T10:11:12.123456Z").as_deref(), Some("20131226101112"));
        assert_eq!(timestamp14("2013-12-26").as_deref(), Some("20131226000000"));
        assert_eq!(timestamp14("2013-02-30T10:11:12Z"), None);
        assert_eq!(timestamp14("2013-12-26T10:11:12+01:00"), None);
        assert_eq!(timestamp14(""), None);
    }

    /// A response's fields come from its HTTP header; a missing payload digest is computed
    /// over the payload only.
    #[test]
    fn a_response_gives_status_mime_and_computed_digest() {
        let block = b"HTTP/1.1 404 Not Found\r\nX: y\r\ncontent-TYPE :  text/html; charset=utf-8\r\n\r\nbody";
        let h = header(&[
            ("WARC-Type", "response"),
            ("WARC-Target-URI", "<http://e.com/a b>"),
            ("WARC-Date", "2020-01-02T03:04:05Z"),
            ("Content-Length", &block.len().to_string()),
        ]);
        let e = entry_of(&h, &mut &block[..]).unwrap().unwrap();
        assert_eq!(e.url, "http://e.com/a%20b");
        assert_eq!(e.timestamp, "20200102030405");
        assert_eq!(e.status.as_deref(), Some("404"));
        assert_eq!(e.mime.as_deref(), Some("text/html"));
        let sha = Sha1::digest(b"body");
        assert_eq!(e.digest, Some(crate::formats::digest::sha1_base32(&sha)));
    }

    /// warc-fields metadata, warcinfo and request records are not indexed; a revisit's mime
    /// is `warc/revisit` and its digest is never computed.
    #[test]
    fn which_records_are_indexed() {
        let meta =
            header(&[("WARC-Type", "metadata"), ("Content-Type", "application/warc-fields")]);
        assert!(!is_indexed(&meta));
        assert!(!is_indexed(&header(&[("WARC-Type", "warcinfo")])));
        assert!(!is_indexed(&header(&[("WARC-Type", "request")])));
        let revisit = header(&[
            ("WARC-Type", "revisit"),
            ("WARC-Target-URI", "http://e.com/"),
            ("WARC-Date", "2020-01-02T03:04:05Z"),
            ("Content-Length", "0"),
        ]);
        let e = entry_of(&revisit, &mut &b""[..]).unwrap().unwrap();
        assert_eq!((e.mime.as_deref(), e.status, e.digest), (Some("warc/revisit"), None, None));
    }
}
