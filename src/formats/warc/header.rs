//! WARC record headers: an ordered list of named fields.

use std::fmt::Write as _;

/// The WARC version webaip writes.
pub(crate) const WARC_VERSION: &str = "WARC/1.1";

/// `WARC-Profile` of a revisit whose payload is identical to the original's (WARC 1.1).
pub const IDENTICAL_PAYLOAD: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// The field of a revisit naming the package (OBJID) that holds its original: written by
/// deduplication, read by `get` and `undedup` to say where the original is.
pub const FIELD_REFERS_TO_PACKAGE: &str = "X-Webaip-Refers-To-Package";

/// A WARC record header: the version line and the named fields, in the order they appear.
///
/// Order matters for preservation (byte-identical output for identical input), so fields are
/// kept as a list, not a map. Look-ups are case-insensitive, as the standard requires.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcHeader {
    /// The version line without its line end, e.g. `WARC/1.1`.
    pub version: String,
    fields: Vec<(String, String)>,
}

impl WarcHeader {
    /// An empty header for the given version line.
    pub fn new(version: impl Into<String>) -> Self {
        WarcHeader { version: version.into(), fields: Vec::new() }
    }

    /// Appends a field. Line breaks and other control characters in the value are
    /// percent-encoded, since they cannot appear in a WARC header line.
    pub fn push(&mut self, name: &str, value: impl AsRef<str>) {
        self.fields.push((name.to_string(), escape_controls(value.as_ref())));
    }

    /// Appends a field as read from a file (no escaping).
    pub(crate) fn push_raw(&mut self, name: String, value: String) {
        self.fields.push((name, value));
    }

    /// Appends text to the value of the last field (a continuation line).
    pub(crate) fn continue_last(&mut self, more: &str) -> bool {
        match self.fields.last_mut() {
            Some((_, v)) => {
                // Folded header lines (LWS) mean a single space; a value that starts on the
                // continuation line gets none.
                if !v.is_empty() {
                    v.push(' ');
                }
                v.push_str(more);
                true
            }
            None => false,
        }
    }

    /// The first value of a field, looked up case-insensitively.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// All fields in order.
    pub fn fields(&self) -> &[(String, String)] {
        &self.fields
    }

    /// The `WARC-Type` field.
    pub fn warc_type(&self) -> Option<&str> {
        self.get("WARC-Type")
    }

    /// The `WARC-Record-ID` field.
    pub fn record_id(&self) -> Option<&str> {
        self.get("WARC-Record-ID")
    }

    /// The `Content-Length` field as a number.
    pub fn content_length(&self) -> Option<u64> {
        self.get("Content-Length").and_then(|v| v.trim().parse().ok())
    }

    /// The `WARC-Target-URI` field.
    ///
    /// Quirk: the WARC 1.0 grammar wrapped this value in angle brackets, but its examples and
    /// WARC 1.1 do not. Some writers (older Wget) still add them, so we strip them.
    pub fn target_uri(&self) -> Option<&str> {
        self.get("WARC-Target-URI")
            .map(|v| v.strip_prefix('<').and_then(|v| v.strip_suffix('>')).unwrap_or(v))
    }

    /// The header serialized: version line, fields, blank line, all CRLF-terminated.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut s = String::with_capacity(64 + self.fields.len() * 48);
        s.push_str(&self.version);
        s.push_str("\r\n");
        for (n, v) in &self.fields {
            let _ = write!(s, "{n}: {v}\r\n");
        }
        s.push_str("\r\n");
        s.into_bytes()
    }
}

/// Percent-encodes control characters (and `%`-free otherwise) so a value fits on one line.
pub fn escape_controls(v: &str) -> String {
    if !v.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len() + 8);
    for c in v.chars() {
        if (c as u32) < 0x20 || c as u32 == 0x7f {
            let _ = write!(out, "%{:02X}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// One `name: value` line of an `application/warc-fields` block (warcinfo, metadata records),
/// CRLF-terminated, with the value's control characters percent-encoded as in a header: a
/// value taken from input (a file name, a cached header) can never end the line and so never
/// add a field of its own.
pub(crate) fn warc_fields_line(name: &str, value: &str) -> String {
    format!("{name}: {}\r\n", escape_controls(value))
}

/// Makes a URI-ish byte string into header text: valid UTF-8 and control characters kept as
/// text where possible, other bytes percent-encoded (the standard's way to carry them in a URI).
pub(crate) fn uri_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if (c as u32) < 0x20 || c as u32 == 0x7f {
                let _ = write!(out, "%{:02X}", c as u32);
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Why a harvested URL cannot be a record's `WARC-Target-URI`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetUriError {
    /// Nothing (or only blanks) was stored.
    #[error("the URL is empty")]
    Empty,
    /// No `scheme:` starts it (a path, `null`, a host name alone).
    #[error("{0:?} is no absolute URI (no scheme)")]
    NoScheme(String),
}

/// The `WARC-Target-URI` of a harvested URL (already made text by [`uri_text`]): WARC 1.1
/// requires an absolute URI on `response`, `resource`, `request` and `revisit` records, so a
/// URL without a scheme (empty, `null`, a path) is refused. The scheme is written in lower
/// case (RFC 3986 3.1: schemes are case-insensitive, lower case is their canonical form), so
/// that every reader's payload rule (`crate::formats::warc::payload`; warcio compares
/// `http:` as written) finds an `HTTP://` capture's HTTP header where the writer put it; the
/// bool says the scheme was changed. The rest is kept as harvested.
pub(crate) fn target_uri(text: &str) -> Result<(String, bool), TargetUriError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(TargetUriError::Empty);
    }
    // RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
    let scheme_len = t
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
        .filter(|&n| n > 0 && t.as_bytes()[n] == b':' && t.as_bytes()[0].is_ascii_alphabetic());
    let Some(n) = scheme_len else {
        return Err(TargetUriError::NoScheme(t.chars().take(200).collect()));
    };
    let scheme = &t[..n];
    let lower = scheme.to_ascii_lowercase();
    let changed = lower != scheme || t.len() != text.len();
    Ok((format!("{lower}{}", &t[n..]), changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_uris_need_a_scheme_which_is_written_in_lower_case() {
        assert_eq!(target_uri("http://h/A"), Ok(("http://h/A".into(), false)));
        assert_eq!(target_uri("HTTP://h/A"), Ok(("http://h/A".into(), true)));
        assert_eq!(target_uri("ftp://h/x"), Ok(("ftp://h/x".into(), false)));
        assert_eq!(target_uri("Https://h/"), Ok(("https://h/".into(), true)));
        assert_eq!(target_uri(""), Err(TargetUriError::Empty));
        assert_eq!(target_uri("  "), Err(TargetUriError::Empty));
        for bad in ["null", "/index.html", "www.e.se/x", "1http://h/", ":x", "a b:c"] {
            assert!(matches!(target_uri(bad), Err(TargetUriError::NoScheme(_))), "{bad}");
        }
    }

    #[test]
    fn serializes_in_order_with_crlf() {
        let mut h = WarcHeader::new(WARC_VERSION);
        h.push("WARC-Type", "resource");
        h.push("Content-Length", "0");
        assert_eq!(h.to_bytes(), b"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(h.content_length(), Some(0));
        assert_eq!(h.get("warc-type"), Some("resource"));
    }

    #[test]
    fn control_characters_and_bad_utf8_are_escaped() {
        let mut h = WarcHeader::new(WARC_VERSION);
        h.push("X", "a\r\nb");
        assert_eq!(h.get("X"), Some("a%0D%0Ab"));
        assert_eq!(uri_text(b"http://e.com/\xe9\t"), "http://e.com/%E9%09");
        assert_eq!(uri_text("http://e.com/é".as_bytes()), "http://e.com/é");
        assert_eq!(
            warc_fields_line("mirror-path", "a\r\nWARC-Type: evil\u{1b}"),
            "mirror-path: a%0D%0AWARC-Type: evil%1B\r\n"
        );
    }
}
