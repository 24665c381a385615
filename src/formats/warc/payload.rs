//! Where a WARC record's payload starts: the one rule the writer, the migration's verification,
//! `package` (the ranges the METS states), `audit --deep` and `pages` share.
//!
//! The rule is warcio's (and pywb's), so that the payload webaip describes is the one an
//! independent reader finds: a `response`, `request` or `revisit` record whose
//! `WARC-Target-URI` starts with `http:` or `https:` holds an HTTP message (the scheme in any
//! case, as RFC 3986 compares it; warcio tests it as written, so webaip writes schemes in
//! lower case: `crate::formats::warc::header::target_uri`), and its payload starts after the
//! message's header section, at the first line that is empty once trailing white space is
//! stripped (`crate::formats::http::message_head`);
//! the status or request line is not checked. A header section that runs to the end of the
//! block without an empty line (pywb's `request` records end so: the record's CRLF CRLF
//! follows the last field) ends there, and the payload is empty, as warcio reads it. Every
//! other record's payload is its whole block. A header section that does not end within
//! [`MAX_HTTP_HEADER_LEN`] bytes locates no payload: the whole block is taken, and the caller
//! says so where it matters (a payload digest cannot then be checked).
//!
//! webaip's own writer writes a `response` only when this rule finds the end of the headers,
//! so for its records the rule and the writer agree by construction.

use crate::formats::http::{HttpHead, MAX_HTTP_HEADER_LEN, message_head};

/// Where the payload of a record starts in its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PayloadStart {
    /// The record holds no HTTP message: the payload is the whole block.
    WholeBlock,
    /// After an HTTP header section of this many bytes.
    AfterHttpHeader(u64),
    /// The record should hold an HTTP message but its header section does not end within
    /// the bytes given (or [`MAX_HTTP_HEADER_LEN`]): no payload can be located; the whole
    /// block stands in for it.
    Unlocated,
}

impl PayloadStart {
    /// The payload's offset in the block (0 when there is no HTTP header section to skip).
    pub(crate) fn offset(self) -> u64 {
        match self {
            PayloadStart::AfterHttpHeader(n) => n,
            _ => 0,
        }
    }
}

/// True when a record of this type and target URI holds an HTTP message (see the module).
pub(crate) fn holds_http_message(warc_type: Option<&str>, target_uri: Option<&str>) -> bool {
    matches!(warc_type, Some("response" | "request" | "revisit"))
        && target_uri.is_some_and(is_http_uri)
}

/// True when warcio reads an HTTP message in a record of this type, target URI (angle
/// brackets dropped) and block length: the rule of [`holds_http_message`] with the scheme as
/// written and a block not empty. The access index, whose lines must equal cdxj-indexer's on
/// any WARC, decides so; webaip's own records name their schemes in lower case, where the two
/// agree.
pub(crate) fn warcio_reads_http(
    warc_type: Option<&str>,
    target_uri: Option<&str>,
    len: u64,
) -> bool {
    let written = |uri: &str| uri.starts_with("http:") || uri.starts_with("https:");
    matches!(warc_type, Some("response" | "request" | "revisit"))
        && target_uri.is_some_and(written)
        && len > 0
}

/// True when `uri`'s scheme is `http` or `https`, in any case (RFC 3986 3.1).
pub(crate) fn is_http_uri(uri: &str) -> bool {
    let has = |p: &str| uri.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    has("http:") || has("https:")
}

/// Where the payload starts, given the record's type, target URI, the first bytes of its
/// block (at least [`MAX_HTTP_HEADER_LEN`] of them, or the whole block if shorter) and whether
/// those bytes are the whole block.
pub(crate) fn payload_start(
    warc_type: Option<&str>,
    target_uri: Option<&str>,
    block_prefix: &[u8],
    whole_block: bool,
) -> PayloadStart {
    if !holds_http_message(warc_type, target_uri) {
        return PayloadStart::WholeBlock;
    }
    let limit = block_prefix.len().min(MAX_HTTP_HEADER_LEN);
    match message_head(&block_prefix[..limit]) {
        HttpHead::Complete(n) => PayloadStart::AfterHttpHeader(n as u64),
        _ if whole_block && limit == block_prefix.len() => {
            PayloadStart::AfterHttpHeader(block_prefix.len() as u64)
        }
        _ => PayloadStart::Unlocated,
    }
}

/// [`payload_start`] for a record whose header is at hand: its `Content-Length` says whether
/// `block_prefix` is the whole block.
pub(crate) fn payload_start_of(header: &super::WarcHeader, block_prefix: &[u8]) -> PayloadStart {
    let whole = header
        .get("Content-Length")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n == block_prefix.len() as u64);
    payload_start(header.warc_type(), header.target_uri(), block_prefix, whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>";
        let at = |t, u| payload_start(Some(t), Some(u), block, true);
        assert_eq!(at("response", "http://a/"), PayloadStart::AfterHttpHeader(44));
        assert_eq!(at("revisit", "https://a/"), PayloadStart::AfterHttpHeader(44));
        assert_eq!(at("request", "http://a/"), PayloadStart::AfterHttpHeader(44));
        // Not HTTP by type or by scheme; the scheme in any case (RFC 3986).
        assert_eq!(at("resource", "http://a/"), PayloadStart::WholeBlock);
        assert_eq!(at("response", "dns:a"), PayloadStart::WholeBlock);
        assert_eq!(at("response", "ftp://a/"), PayloadStart::WholeBlock);
        assert_eq!(at("response", "HTTP://a/"), PayloadStart::AfterHttpHeader(44));
        assert_eq!(at("response", "hTtPs://a/"), PayloadStart::AfterHttpHeader(44));
        assert_eq!(at("response", "http"), PayloadStart::WholeBlock);
        assert_eq!(payload_start(Some("response"), None, block, true), PayloadStart::WholeBlock);
        // No status line: still a header section, as warcio reads it.
        let odd = b"Content-Type: text/plain\n\nbody";
        assert_eq!(
            payload_start(Some("response"), Some("http://a/"), odd, true),
            PayloadStart::AfterHttpHeader(26)
        );
        // Fields up to the end of the block (pywb's requests): the payload is empty.
        let cut = b"GET / HTTP/1.1\r\nHost: example.com\r\n";
        let s = payload_start(Some("request"), Some("http://a/"), cut, true);
        assert_eq!(s, PayloadStart::AfterHttpHeader(cut.len() as u64));
        // Only a part of the block at hand: nothing can be said.
        let s = payload_start(Some("request"), Some("http://a/"), cut, false);
        assert_eq!((s, s.offset()), (PayloadStart::Unlocated, 0));
    }
}
