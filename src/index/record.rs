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
//! `https:` (as written) and whose block is not empty hold one, its status line is its first
//! line, its header section ends at the first line that is blank once trailing white space is
//! stripped.

use std::io::{self, Read};

use sha1::{Digest, Sha1};

use super::cdxj::IndexEntry;
use super::method::{MethodQuery, RequestHead, Seen, method_query};
use crate::formats::warc::WarcHeader;

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
    let warc_type = header.warc_type().unwrap_or_default();
    let block_len = header.content_length().unwrap_or(0);
    let http_parsed = matches!(warc_type, "response" | "revisit" | "request")
        && block_len > 0
        && (url.starts_with("http:") || url.starts_with("https:"));
    let mut head = Vec::new();
    let http = if http_parsed {
        read_head(block, &mut head).map_err(RecordIndexError::Read)?;
        Some(HttpHead::parse(&head))
    } else {
        None
    };
    let mime = if warc_type == "revisit" {
        Some("warc/revisit".to_string())
    } else if warc_type == "response" {
        http.as_ref().and_then(|h| h.content_type.as_deref()).map(mime_of)
    } else {
        header.get("Content-Type").map(mime_of)
    };
    let status = match &http {
        Some(h) if matches!(warc_type, "response" | "revisit") => Some(h.status.clone()),
        _ => None,
    };
    let stated = header.get("WARC-Payload-Digest").filter(|d| !d.is_empty());
    let digest = match stated {
        Some(d) => Some(d.to_string()),
        None if warc_type == "revisit" => header.get("WARC-Payload-Digest").map(str::to_string),
        None => {
            let skip = http.as_ref().map_or(0, |h| h.len);
            Some(payload_sha1(&head, skip, block).map_err(RecordIndexError::Read)?)
        }
    };
    Ok(Some(IndexEntry {
        key: super::surt::surt(&url),
        timestamp,
        url,
        mime,
        status,
        digest,
        ..IndexEntry::default()
    }))
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
/// one: an `http:` or `https:` URI, a block not empty) that is a POST or PUT.
fn request_method(header: &WarcHeader, block: &mut dyn Read) -> io::Result<Option<MethodQuery>> {
    let url = header.get("WARC-Target-URI").map(target_url).unwrap_or_default();
    if header.content_length().unwrap_or(0) == 0
        || !(url.starts_with("http:") || url.starts_with("https:"))
    {
        return Ok(None);
    }
    let mut head = Vec::new();
    read_head(block, &mut head)?;
    let http = HttpHead::parse(&head);
    let request = RequestHead {
        method: http.first,
        content_type: http.content_type,
        content_length: http.content_length,
    };
    let mut body = (&head[http.len..]).chain(block);
    method_query(&request, &mut body)
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
/// [`MAX_HEAD`] bytes, or the block ends).
fn read_head(block: &mut dyn Read, head: &mut Vec<u8>) -> io::Result<()> {
    let mut want = FIRST_READ;
    loop {
        let before = head.len();
        block.take((want - before) as u64).read_to_end(head)?;
        let ended = head.len() < want;
        if ended || header_end(head).is_some() || want >= MAX_HEAD {
            return Ok(());
        }
        want = (want * 4).min(MAX_HEAD);
    }
}

/// Offset just past the blank line ending the header section that starts with the status
/// line, as warcio finds it (a line blank once trailing white space is stripped).
fn header_end(head: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < head.len() {
        let end = memchr::memchr(b'\n', &head[at..]).map(|i| at + i + 1);
        let line = &head[at..end.unwrap_or(head.len())];
        // A blank status line ends the section too (warcio then reads no headers).
        if decode(line).trim_end().is_empty() {
            return Some(end.unwrap_or(head.len()));
        }
        at = end?;
    }
    None
}

/// A header line as Python has it: UTF-8, else ISO-8859-1.
fn decode(line: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(line) {
        Ok(s) => s.into(),
        Err(_) => line.iter().map(|&b| b as char).collect::<String>().into(),
    }
}

/// What the index takes from an HTTP message's header section.
#[derive(Default)]
struct HttpHead {
    /// The status code as warcio reads it (empty when the status line has none).
    status: String,
    /// The status line's first token (a request's method).
    first: String,
    /// The first `Content-Type` field's value, continuation lines appended.
    content_type: Option<String>,
    /// The first `Content-Length` field's value.
    content_length: Option<String>,
    /// Bytes of the section, its blank line included (where the payload starts).
    len: usize,
}

impl HttpHead {
    /// Parses a header section as warcio's `StatusAndHeadersParser` (not verifying).
    fn parse(head: &[u8]) -> HttpHead {
        let mut lines = head.split_inclusive(|&b| b == b'\n');
        let mut len = 0;
        let mut next_line = |len: &mut usize| {
            lines.next().map(|l| {
                *len += l.len();
                decode(l).trim_end().to_string()
            })
        };
        let statusline = next_line(&mut len).unwrap_or_default();
        if statusline.is_empty() {
            return HttpHead { len, ..HttpHead::default() };
        }
        let first = statusline.split(' ').next().unwrap_or_default().to_string();
        let status = match statusline.split_once(' ') {
            Some((_, rest)) => rest.trim().split(' ').next().unwrap_or_default().to_string(),
            None => String::new(),
        };
        let (mut content_type, mut content_length) = (None, None);
        let mut line = next_line(&mut len);
        while let Some(l) = line.filter(|l| !l.is_empty()) {
            let mut value = l.split_once(':').map(|(name, v)| (name, v.trim_start().to_string()));
            let mut next = next_line(&mut len);
            while let Some(cont) = next.as_deref().filter(|n| n.starts_with([' ', '\t'])) {
                if let Some((_, v)) = &mut value {
                    v.push_str(cont);
                }
                next = next_line(&mut len);
            }
            if let Some((name, v)) = value {
                let name = name.trim_end_matches([' ', '\t']);
                if name.eq_ignore_ascii_case("content-type") {
                    content_type.get_or_insert(v);
                } else if name.eq_ignore_ascii_case("content-length") {
                    content_length.get_or_insert(v);
                }
            }
            line = next;
        }
        HttpHead { status, first, content_type, content_length, len: len.min(head.len()) }
    }
}

/// `sha1:BASE32` of the payload: `head` past `skip`, then the rest of `block`.
fn payload_sha1(head: &[u8], skip: usize, block: &mut dyn Read) -> io::Result<String> {
    let mut sha = Sha1::new();
    sha.update(&head[skip.min(head.len())..]);
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
