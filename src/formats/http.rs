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
/// line: WARC `request` records and foreign writers' responses are located this way. A blank
/// first line ends the section at once (warcio then reads no fields).
pub(crate) fn message_head(block: &[u8]) -> HttpHead {
    let limit = block.len().min(MAX_HTTP_HEADER_LEN);
    let mut line_start = 0;
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

/// A field line of a header section and the continuation lines (starting with a space or a
/// tab) that follow it.
struct FieldLine<'a> {
    line: &'a [u8],
    continued: Vec<&'a [u8]>,
}

/// The field lines of a header section, after its status or request line, as warcio groups
/// them (a continuation right after the status line belongs to no field).
fn field_lines(head: &[u8]) -> Vec<FieldLine<'_>> {
    let mut out: Vec<FieldLine<'_>> = Vec::new();
    for line in head.split(|&b| b == b'\n').skip(1) {
        let continues = line.first().is_some_and(|b| matches!(b, b' ' | b'\t'));
        match (continues, out.last_mut()) {
            (true, Some(field)) => field.continued.push(line),
            (true, None) => {}
            (false, _) => out.push(FieldLine { line, continued: Vec::new() }),
        }
    }
    out
}

/// The value part of a field line named `name` (any case; blanks and tabs before the colon
/// allowed, as warcio strips them).
fn value_if_named<'a>(line: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let colon = memchr(b':', line)?;
    let written = &line[..colon];
    let end = written.iter().rposition(|b| !matches!(b, b' ' | b'\t')).map_or(0, |i| i + 1);
    written[..end].eq_ignore_ascii_case(name).then(|| &line[colon + 1..])
}

/// The raw value of the first field called `name` (any case) in a complete header section
/// `head` (the status or request line and continuation lines are skipped), blanks after the
/// colon and the line end included.
pub(crate) fn field<'a>(head: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    field_lines(head).into_iter().find_map(|f| value_if_named(f.line, name))
}

/// The value of the first field called `name` as warcio hands it on: each line decoded (UTF-8,
/// else ISO-8859-1), blanks after the colon stripped, continuation lines appended, trailing
/// white space of each line stripped.
pub(crate) fn field_value(head: &[u8], name: &[u8]) -> Option<String> {
    field_lines(head).into_iter().find_map(|f| {
        let value = value_if_named(f.line, name)?;
        let mut v = py_rstrip(&decode_line(value)).trim_start_matches(is_py_space).to_string();
        f.continued.iter().for_each(|c| v.push_str(py_rstrip(&decode_line(c))));
        Some(v)
    })
}

/// The status code of a response's status line as warcio reads it: the line, trailing white
/// space stripped, cut at its first space; what follows, stripped, up to its next space (empty
/// when the line has no space).
pub(crate) fn status_code(head: &[u8]) -> String {
    let line = decode_line(head.split(|&b| b == b'\n').next().unwrap_or_default());
    match py_rstrip(&line).split_once(' ') {
        Some((_, rest)) => {
            rest.trim_matches(is_py_space).split(' ').next().unwrap_or_default().into()
        }
        None => String::new(),
    }
}

/// The status code of a response's status line (read as [`status_code`] reads it) as a
/// number, when it is three digits.
pub(crate) fn status_number(head: &[u8]) -> Option<u16> {
    let code = status_code(head);
    let digits = code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| code.parse().ok()).flatten()
}

/// The value of field `name` (read as [`field_value`] reads it) in the last of the header
/// sections written one after another in `sections` that has one: of a WARC header and the
/// HTTP header after it, the HTTP one, nearer the payload, applies to it.
pub(crate) fn field_value_nearest_payload(sections: &[u8], name: &[u8]) -> Option<String> {
    let (mut rest, mut found) = (sections, None);
    while !rest.is_empty() {
        let end = match message_head(rest) {
            HttpHead::Complete(n) => n,
            HttpHead::Incomplete | HttpHead::NotHttp => rest.len(),
        };
        found = field_value(&rest[..end], name).or(found);
        rest = &rest[end..];
    }
    found
}

/// The first token of a request line (its method), as warcio reads it: up to the first space.
pub(crate) fn request_method(head: &[u8]) -> String {
    let line = decode_line(head.split(|&b| b == b'\n').next().unwrap_or_default());
    py_rstrip(&line).split(' ').next().unwrap_or_default().to_string()
}

/// A header line as Python has it: UTF-8, else ISO-8859-1.
fn decode_line(line: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(line) {
        Ok(s) => s.into(),
        Err(_) => line.iter().map(|&b| b as char).collect::<String>().into(),
    }
}

/// White space as Python's `str.strip()` has it: Unicode white space and the ASCII separators
/// 0x1C-0x1F.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `s` without trailing white space, as Python's `str.rstrip()`.
fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_space)
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

/// A header line that ends the header section: nothing but white space once decoded as
/// warcio decodes it (Python's `str.rstrip()` strips Unicode white space and 0x1C-0x1F; a line
/// that is not UTF-8 is ISO-8859-1, where 0x85 and 0xA0 are white space).
fn is_blank_line(line: &[u8]) -> bool {
    py_rstrip(&decode_line(line)).is_empty()
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
        assert_eq!(status_code(h), "404");
        assert_eq!(status_code(b"HTTP/1.0 200\n\n"), "200");
        assert_eq!(status_code(b"HTTP/1.0\r\n\r\n"), "");
        assert_eq!(field(h, b"content-type").map(<[u8]>::trim_ascii), Some(&b"text/html"[..]));
        assert_eq!(field(h, b"http/1.1  404 not found"), None, "the status line is no field");
    }

    /// warcio's reading: a blank first line ends the section; a line of any white space
    /// Python strips (Unicode, 0x1C-0x1F) is blank; a continuation line is part of the field
    /// before it, never a field of its own.
    #[test]
    fn sections_and_fields_as_warcio_reads_them() {
        assert_eq!(message_head(b"\r\nA: b\r\n\r\nbody"), HttpHead::Complete(2));
        let nbsp = b"HTTP/1.1 200 OK\r\nA: b\r\n\xc2\xa0\r\nC: d\r\n\r\n";
        assert_eq!(message_head(nbsp), HttpHead::Complete(27));
        let sep = b"HTTP/1.1 200 OK\r\n\x1c\r\nC: d\r\n\r\n";
        assert_eq!(message_head(sep), HttpHead::Complete(20));
        let folded = b"HTTP/1.1 200 OK\r\nX: a\r\n Content-Type: image/png\r\n\tmore\r\n\
                       Content-type \t: text/plain;\r\n q=1\r\n\r\n";
        assert_eq!(field_value(folded, b"x").as_deref(), Some("a Content-Type: image/png\tmore"));
        assert_eq!(field_value(folded, b"content-type").as_deref(), Some("text/plain; q=1"));
        assert_eq!(entity_mime(folded).as_deref(), Some("text/plain"));
        assert_eq!(
            field_value(b"HTTP/1.1 200 OK\r\nC: \xe9t\xe9\r\n\r\n", b"c").as_deref(),
            Some("\u{e9}t\u{e9}")
        );
        assert_eq!(status_code(b" HTTP/1.1 200 OK\r\n"), "HTTP/1.1");
        assert_eq!(request_method(b"POST /a HTTP/1.1\r\n"), "POST");
    }

    #[test]
    fn status_numbers_are_three_digits() {
        assert_eq!(status_number(b"HTTP/1.1 404 Not Found\r\nA: b\r\n\r\n"), Some(404));
        assert_eq!(status_number(b"HTTP/1.0 200\n\n"), Some(200));
        assert_eq!(status_number(b"HTTP/1.1 -1 Broken\r\n\r\n"), None);
        assert_eq!(status_number(b"HTTP/1.1 +20 Odd\r\n\r\n"), None);
        assert_eq!(status_number(b"HTTP/1.1 2000 Odd\r\n\r\n"), None);
        assert_eq!(status_number(b""), None);
    }

    /// Of a WARC header and the HTTP header after it, the HTTP header's field applies; the
    /// WARC header's where the HTTP header has none.
    #[test]
    fn the_field_nearest_the_payload_applies() {
        let warc = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Type: application/http; msgtype=response\r\n\r\n";
        let http = b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\r\n";
        let both = [&warc[..], &http[..]].concat();
        let ct = |s: &[u8]| field_value_nearest_payload(s, b"content-type");
        assert_eq!(ct(&both).as_deref(), Some("text/html; charset=utf-8"));
        let bare = [&warc[..], b"HTTP/1.1 200 OK\r\nServer: x\r\n\r\n"].concat();
        assert_eq!(ct(&bare).as_deref(), Some("application/http; msgtype=response"));
        assert_eq!(ct(b"WARC/1.1\r\nWARC-Type: resource\r\n\r\n"), None);
        assert_eq!(ct(b""), None);
    }

    #[test]
    fn status_only_then_blank_line() {
        assert_eq!(response_head(b"HTTP/1.1 -1 Broken\r\n\r\n"), HttpHead::Complete(22));
    }
}
