//! Locating the HTTP header block at the start of a captured response.
//!
//! webaip never re-serializes HTTP headers: it only needs to know where they end, so that the
//! payload (the entity body, exactly as received, still chunked or compressed if it was) can be
//! located, hashed and described.

use memchr::memchr;

/// How far into a block we look for the end of the HTTP headers.
///
/// Real header sections are a few KiB; a block whose "headers" run past this is treated as
/// having no parseable HTTP header, and its whole block becomes the payload.
pub const MAX_HTTP_HEADER_LEN: usize = 1 << 20;

/// Where the HTTP header section of a response block ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpHead {
    /// A status line `HTTP/...` and headers closed by a blank line; the payload starts at this
    /// offset.
    Complete(usize),
    /// A status line was found but no blank line closes the headers (truncated capture).
    Incomplete,
    /// The block does not start with an HTTP status line (HTTP/0.9 body, DNS text, redacted
    /// payload, ...).
    NotHttp,
}

/// Finds the end of the HTTP response headers at the start of `block`.
///
/// `block` may be only the first part of the record (up to [`MAX_HTTP_HEADER_LEN`] bytes).
///
/// Quirk: RFC 9112 ends the header section with an empty CRLF line. Real captures also use bare
/// LF, and some servers send a "blank" line holding spaces. We follow the rule warcio applies
/// (a line that is empty once trailing white space is stripped ends the headers), so that the
/// payload we describe is the payload an independent reader finds.
pub fn response_head(block: &[u8]) -> HttpHead {
    if !is_status_line_start(block) {
        return HttpHead::NotHttp;
    }
    message_head(block)
}

/// Finds the end of the header section of any HTTP message (request or response) at the start
/// of `block`, by the same blank-line rule as [`response_head`], without asking for a status
/// line: WARC `request` records and foreign writers' responses are located this way.
pub(crate) fn message_head(block: &[u8]) -> HttpHead {
    let limit = block.len().min(MAX_HTTP_HEADER_LEN);
    let mut line_start = match memchr(b'\n', &block[..limit]) {
        Some(i) => i + 1,
        None => return HttpHead::Incomplete,
    };
    while line_start < limit {
        let Some(rel) = memchr(b'\n', &block[line_start..limit]) else {
            return HttpHead::Incomplete;
        };
        let line = &block[line_start..line_start + rel];
        let next = line_start + rel + 1;
        if is_blank_line(line) {
            return HttpHead::Complete(next);
        }
        line_start = next;
    }
    HttpHead::Incomplete
}

/// The raw value of the first field called `name` (any case) in a complete header section
/// `head` (the status or request line is skipped), blanks after the colon and the line end
/// included.
pub(crate) fn field<'a>(head: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let colon = memchr(b':', line)?;
        line[..colon].trim_ascii().eq_ignore_ascii_case(name).then(|| &line[colon + 1..])
    })
}

/// The status code of a response's status line (its second space-separated token), as
/// written.
pub(crate) fn status_code(head: &[u8]) -> Option<&[u8]> {
    let line = head.split(|&b| b == b'\n').next()?;
    let code = line.split(|&b| b == b' ').filter(|t| !t.is_empty()).nth(1)?;
    Some(code.trim_ascii())
}

/// The value of the `Content-Length` field in a complete header section `head`.
pub(crate) fn content_length(head: &[u8]) -> Option<u64> {
    std::str::from_utf8(field(head, b"content-length")?).ok()?.trim().parse().ok()
}

/// The media type of the entity (`Content-Type` without parameters, lower-case) in a complete
/// header section `head`, when it names one (`type/subtype`).
pub(crate) fn entity_mime(head: &[u8]) -> Option<String> {
    let value = std::str::from_utf8(field(head, b"content-type")?).ok()?;
    let mime = value.split(';').next()?.trim().to_ascii_lowercase();
    let (t, sub) = mime.split_once('/')?;
    let token = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    (token(t) && token(sub)).then_some(mime)
}

/// True when `block` begins like an HTTP status line: `HTTP/` and a digit.
pub(crate) fn is_status_line_start(block: &[u8]) -> bool {
    block.len() > 5 && block[..5].eq_ignore_ascii_case(b"HTTP/") && block[5].is_ascii_digit()
}

/// A header line that ends the header section: nothing but white space.
///
/// Python's `str.rstrip()` (what warcio uses) also strips U+0085 and U+00A0, which appear as
/// single bytes 0x85/0xA0 when the line is not valid UTF-8 and is decoded as ISO-8859-1.
fn is_blank_line(line: &[u8]) -> bool {
    let ascii_space = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1f);
    if line.iter().all(|&b| ascii_space(b)) {
        return true;
    }
    std::str::from_utf8(line).is_err()
        && line.iter().all(|&b| ascii_space(b) || b == 0x85 || b == 0xa0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_mime_is_the_type_without_parameters() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; charset=utf-8\r\n\r\n";
        assert_eq!(entity_mime(head).as_deref(), Some("text/html"));
        assert_eq!(entity_mime(b"HTTP/1.1 200 OK\r\nContent-Type: html\r\n\r\n"), None);
        assert_eq!(entity_mime(b"HTTP/1.1 200 OK\r\n\r\n"), None);
    }

    #[test]
    fn crlf_headers_end_at_blank_line() {
        let b = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>";
        assert_eq!(response_head(b), HttpHead::Complete(b.len() - 6));
    }

    #[test]
    fn lf_only_headers_are_accepted() {
        let b = b"HTTP/1.0 200 OK\nServer: x\n\nbody";
        assert_eq!(response_head(b), HttpHead::Complete(27));
    }

    #[test]
    fn blank_line_with_spaces_ends_headers() {
        let b = b"HTTP/1.0 200 OK\r\nA: b\r\n  \r\nbody";
        assert_eq!(response_head(b), HttpHead::Complete(27));
    }

    #[test]
    fn truncated_headers_are_incomplete() {
        assert_eq!(response_head(b"HTTP/1.1 200 OK\r\nContent-Ty"), HttpHead::Incomplete);
        assert_eq!(response_head(b"HTTP/1.1 200 OK"), HttpHead::Incomplete);
    }

    #[test]
    fn bodies_without_status_line_are_not_http() {
        assert_eq!(response_head(b"<html>hello</html>"), HttpHead::NotHttp);
        assert_eq!(
            response_head(b"20080430204826\nexample.org. 3600 IN A 1.2.3.4\n"),
            HttpHead::NotHttp
        );
        assert_eq!(response_head(b""), HttpHead::NotHttp);
    }

    #[test]
    fn content_length_is_found_case_insensitively() {
        let b = b"HTTP/1.1 200 OK\r\ncontent-LENGTH:  42 \r\nX: y\r\n\r\n";
        assert_eq!(content_length(b), Some(42));
        assert_eq!(content_length(b"HTTP/1.1 200 OK\r\n\r\n"), None);
    }

    #[test]
    fn status_codes_and_fields_as_written() {
        let h = b"HTTP/1.1  404 Not Found\r\ncontent-TYPE:  text/html \r\n\r\n";
        assert_eq!(status_code(h), Some(&b"404"[..]));
        assert_eq!(status_code(b"HTTP/1.0 200\n\n"), Some(&b"200"[..]));
        assert_eq!(status_code(b"HTTP/1.0\r\n\r\n"), None);
        assert_eq!(field(h, b"content-type").map(<[u8]>::trim_ascii), Some(&b"text/html"[..]));
        assert_eq!(field(h, b"http/1.1  404 not found"), None, "the status line is no field");
    }

    #[test]
    fn status_only_then_blank_line() {
        assert_eq!(response_head(b"HTTP/1.1 -1 Broken\r\n\r\n"), HttpHead::Complete(22));
    }
}
