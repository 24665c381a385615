//! Header parsing: the ARC header line (v1 and v2 fields, tolerant of spaces in URLs, bad
//! dates and lengths), the search for the next header line, the filedesc version block,
//! and URI validity.

use super::*;

/// First position at or after `from` that starts a line (follows `\n`) holding a record header.
pub(super) fn find_header(
    data: &Segment,
    from: u64,
    version: Option<ArcVersion>,
) -> io::Result<Option<u64>> {
    let len = data.len();
    if from >= len {
        return Ok(None);
    }
    let mut chunk = vec![0u8; 64 * 1024];
    // Start one byte early so a header right at `from` is seen after its preceding `\n`.
    let mut at = from.saturating_sub(1);
    if from == 0 {
        let line = read_line_at(data, 0, MAX_HEADER_LINE)?;
        if line.candidate().is_some_and(|t| parse_header_line(t, version, Mode::Scan).is_ok()) {
            return Ok(Some(0));
        }
    }
    while at < len {
        let n = data.read_at(at, &mut chunk)?;
        if n == 0 {
            break;
        }
        for (i, &b) in chunk[..n].iter().enumerate() {
            if b != b'\n' {
                continue;
            }
            let cand = at + i as u64 + 1;
            if cand < from || cand >= len {
                continue;
            }
            // Cheap filter before a full parse: a header starts with a URL scheme letter.
            let first = if i + 1 < n { chunk[i + 1] } else { data.byte_at(cand)?.unwrap_or(0) };
            if !first.is_ascii_alphabetic() {
                continue;
            }
            let line = read_line_at(data, cand, MAX_HEADER_LINE)?;
            if line.candidate().is_some_and(|t| parse_header_line(t, version, Mode::Scan).is_ok()) {
                return Ok(Some(cand));
            }
        }
        at += n as u64;
    }
    Ok(None)
}

/// The version the filedesc version block states (`1 0 ...` -> "1.0", `1 1 ...` -> "1.1",
/// `2 0 ...` -> "2"), as the file states it: `None` when its first line is not two numbers.
pub(super) fn read_version_label(data: &Segment, body_start: u64) -> Option<String> {
    let mut buf = [0u8; 64];
    let n = data.read_full_at(body_start, &mut buf).unwrap_or(0);
    let line = buf[..n].split(|&b| b == b'\n').next()?;
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let (major, minor) = (fields.next()?, fields.next()?);
    let number = |f: &[u8]| {
        let f = f.strip_suffix(b"\r").unwrap_or(f);
        (!f.is_empty() && f.len() <= 4 && f.iter().all(u8::is_ascii_digit))
            .then(|| String::from_utf8_lossy(f).into_owned())
    };
    let (major, minor) = (number(major)?, number(minor)?);
    Some(if major == "2" { major } else { format!("{major}.{minor}") })
}

pub(super) fn read_version(data: &Segment, body_start: u64) -> ArcVersion {
    let mut buf = [0u8; 16];
    let n = data.read_full_at(body_start, &mut buf).unwrap_or(0);
    if buf[..n].starts_with(b"2 ") { ArcVersion::V2 } else { ArcVersion::V1 }
}

pub(super) fn preview(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]);
    s.chars().map(|c| if c.is_control() { '.' } else { c }).collect()
}

pub(super) fn header_length_field(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    s.rsplit(' ').next().unwrap_or("").to_string()
}

type Note = (AnomalyKind, Severity, String);

/// How sure we must be that a line is a record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Where a record must start (after the previous one): any line with a URL and five
    /// fields is taken, oddities reported.
    Lenient,
    /// Where a declared length says the next record starts: the fields must look right, but a
    /// bad length is accepted (it will be reported when that record is read).
    Boundary,
    /// Hunting through unframed bytes: only unmistakable header lines.
    Scan,
}

/// Parses an ARC URL-record (or filedesc) header line.
///
/// Quirk: the ARC spec separates fields by single spaces, but URLs with spaces, MIME types
/// with a `; charset=` part, missing MIME types and runs of spaces all occur in real files
/// (`INPUT_FORMATS.md` §2.6). We split from the right, where the fields are reliable, and take
/// everything left of the IP field as the URL, exactly as found.
///
/// In `strict` mode (used when hunting for the next record inside unframed bytes) only lines
/// that look unmistakably like a header are accepted: a plausible date and IP and a numeric
/// length.
pub(super) fn parse_header_line(
    line: &[u8],
    version: Option<ArcVersion>,
    mode: Mode,
) -> Result<(ArcHeader, Vec<Note>), ()> {
    let strict = mode == Mode::Scan;
    if line.is_empty() || !starts_with_scheme(line) {
        return Err(());
    }
    let toks = tokens(line);
    let n = toks.len();
    let t = |k: usize| toks[n - k].1;
    let mut notes: Vec<Note> = Vec::new();
    let Some(FieldLayout { ip_k, mime, v2 }) = field_layout(&toks, version, mode, &mut notes)
    else {
        return Err(());
    };
    let ip_start = toks[n - ip_k].0;
    let mut url = line[..ip_start].to_vec();
    while url.last() == Some(&b' ') {
        url.pop();
    }
    if url.is_empty() || !starts_with_scheme(&url) {
        return Err(());
    }
    let length_tok = t(1);
    let declared_length = std::str::from_utf8(length_tok).ok().and_then(|s| s.parse::<u64>().ok());
    if declared_length.is_none() && strict && !is_length(length_tok) {
        return Err(());
    }
    let date_tok = t(ip_k - 1);
    let date_raw = String::from_utf8_lossy(date_tok).into_owned();
    let date = parse_arc_date(&date_raw);
    if date.is_none() {
        if strict && date_tok != b"-" {
            return Err(());
        }
        notes.push((
            AnomalyKind::BadDate,
            Severity::Warning,
            format!("archive-date {date_raw:?} does not parse"),
        ));
    }
    note_header_oddities(line, &url, version, v2.is_some(), &mut notes);
    let header = ArcHeader {
        raw_line: line.to_vec(),
        url,
        ip: String::from_utf8_lossy(t(ip_k)).into_owned(),
        date_raw,
        date,
        mime: String::from_utf8_lossy(&mime).into_owned(),
        declared_length,
        v2,
    };
    Ok((header, notes))
}

/// The MIME type a header line states (lower case, without parameters), the line read as the
/// reader reads a record's header line; `None` when it is no header line or states no type
/// (`-`, a value without `/`). A migrated record keeps its ARC line (`X-Webaip-ARC-Header`):
/// this is how its type is read back.
pub fn header_line_mime(line: &[u8]) -> Option<String> {
    let (h, _) = parse_header_line(line, None, Mode::Lenient).ok()?;
    let mime = h.mime.split(';').next()?.trim().to_ascii_lowercase();
    mime.contains('/').then_some(mime)
}

/// The space-separated tokens of a header line with their start offsets; runs of spaces
/// collapse.
pub(super) fn tokens(line: &[u8]) -> Vec<(usize, &[u8])> {
    let mut toks: Vec<(usize, &[u8])> = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if line[i] == b' ' {
            i += 1;
            continue;
        }
        let start = i;
        while i < line.len() && line[i] != b' ' {
            i += 1;
        }
        toks.push((start, &line[start..i]));
    }
    toks
}

/// An archive-date token as far as its shape goes: `-` or 8 to 18 digits.
pub(super) fn looks_like_date(b: &[u8]) -> bool {
    b == b"-" || ((8..=18).contains(&b.len()) && b.iter().all(u8::is_ascii_digit))
}

/// An IP-address token as far as its shape goes: `-`, dotted digits, or IPv6 hex and colons.
pub(super) fn looks_like_ip(b: &[u8]) -> bool {
    b == b"-"
        || b.iter().all(|c| c.is_ascii_digit() || *c == b'.')
        || (b.contains(&b':')
            && b.iter().all(|c| c.is_ascii_hexdigit() || *c == b':' || *c == b'.'))
}

/// A length token: digits, or a negative number ("-1", written by some tools for "unknown"),
/// which still marks a header line.
pub(super) fn is_length(b: &[u8]) -> bool {
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// Which fields a header line's tokens are, counted from the right.
pub(super) struct FieldLayout {
    /// The IP field's index from the right (the URL is everything left of it).
    pub(super) ip_k: usize,
    pub(super) mime: Vec<u8>,
    pub(super) v2: Option<V2Fields>,
}

/// Decides which layout the tokens `toks` follow, tried in turn: v2 (ten fields, unless a v1
/// file's line reads as v1 too), v1 (five), v1 with a MIME type split at `; charset=`, v1
/// without a MIME type, and (not in [`Mode::Scan`]) any five fields read as v1. `None`
/// when none fits.
pub(super) fn field_layout(
    toks: &[(usize, &[u8])],
    version: Option<ArcVersion>,
    mode: Mode,
    notes: &mut Vec<Note>,
) -> Option<FieldLayout> {
    let n = toks.len();
    let t = |k: usize| toks[n - k].1;
    // A v1 layout with the date `k` from the right: the IP left of it, a URL left of that.
    let v1_at = |k: usize| n >= k + 2 && looks_like_date(t(k)) && looks_like_ip(t(k + 1));
    let try_v2 = n >= 10 && looks_like_date(t(8)) && looks_like_ip(t(9));
    if try_v2
        && (version != Some(ArcVersion::V1) || !(looks_like_date(t(3)) && looks_like_ip(t(4))))
    {
        let s = |k: usize| String::from_utf8_lossy(t(k)).into_owned();
        let v2 = V2Fields {
            result_code: s(6),
            checksum: s(5),
            location: s(4),
            offset: s(3),
            filename: s(2),
        };
        return Some(FieldLayout { ip_k: 9, mime: t(7).to_vec(), v2: Some(v2) });
    }
    if v1_at(3) {
        return Some(FieldLayout { ip_k: 4, mime: t(2).to_vec(), v2: None });
    }
    if v1_at(4) && t(2).len() > 8 && t(2)[..8].eq_ignore_ascii_case(b"charset=") {
        let mut mime = t(3).to_vec();
        mime.push(b' ');
        mime.extend_from_slice(t(2));
        notes.push((
            AnomalyKind::MimeWithSpace,
            Severity::Info,
            "MIME type contains a space; rejoined".into(),
        ));
        return Some(FieldLayout { ip_k: 5, mime, v2: None });
    }
    if v1_at(2) {
        notes.push((
            AnomalyKind::MissingMime,
            Severity::Info,
            "header line has no MIME type field".into(),
        ));
        return Some(FieldLayout { ip_k: 3, mime: Vec::new(), v2: None });
    }
    let fallback_ok = match mode {
        Mode::Lenient => true,
        Mode::Boundary => n >= 5 && looks_like_ip(t(4)) && is_length(t(1)),
        Mode::Scan => false,
    };
    if fallback_ok && n >= 5 {
        notes.push((
            AnomalyKind::FieldCount,
            Severity::Warning,
            "header fields are not in the expected form; read as URL IP date type length".into(),
        ));
        return Some(FieldLayout { ip_k: 4, mime: t(2).to_vec(), v2: None });
    }
    None
}

/// Notes what is odd in a header line that parsed: a v1 record in a v2 file (`is_v2` is
/// the line's own layout), spaces in the URL, a URL that is no valid URI, control characters.
pub(super) fn note_header_oddities(
    line: &[u8],
    url: &[u8],
    version: Option<ArcVersion>,
    is_v2: bool,
    notes: &mut Vec<Note>,
) {
    if version == Some(ArcVersion::V2) && !is_v2 && !url.starts_with(b"filedesc://") {
        notes.push((
            AnomalyKind::FieldCount,
            Severity::Info,
            "a v1 (5-field) record in a v2 file".into(),
        ));
    }
    if url.contains(&b' ') {
        notes.push((
            AnomalyKind::SpaceInUrl,
            Severity::Info,
            "URL contains spaces; kept as found".into(),
        ));
    }
    if !is_valid_uri(url) {
        notes.push((
            AnomalyKind::InvalidUri,
            Severity::Info,
            format!("URL {:?} is not a valid URI; kept as found", preview(url)),
        ));
    }
    if line.iter().any(|&b| b < 0x20 && b != b'\t' || b == 0x7f) {
        notes.push((
            AnomalyKind::ControlCharacters,
            Severity::Info,
            "header line holds control characters; they are percent-encoded in WARC headers".into(),
        ));
    }
}

pub(super) fn starts_with_scheme(b: &[u8]) -> bool {
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    for &c in &b[1..b.len().min(32)] {
        if c == b':' {
            return true;
        }
        if !(c.is_ascii_alphanumeric() || c == b'+' || c == b'-' || c == b'.') {
            return false;
        }
    }
    false
}

/// A light RFC 3986 check: a scheme, then only characters a URI may hold, `%` escapes well
/// formed, and at most one `#`.
pub(crate) fn is_valid_uri(url: &[u8]) -> bool {
    if !starts_with_scheme(url) {
        return false;
    }
    let allowed = |c: u8| c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&c);
    let mut i = 0;
    let mut hashes = 0;
    while i < url.len() {
        let c = url[i];
        if !allowed(c) {
            return false;
        }
        if c == b'#' {
            hashes += 1;
        }
        let hex_at = |k: usize| url.get(k).is_some_and(u8::is_ascii_hexdigit);
        if c == b'%' && !(hex_at(i + 1) && hex_at(i + 2)) {
            return false;
        }
        i += 1;
    }
    if hashes > 1 {
        return false;
    }
    // `[` and `]` may only delimit an IPv6 host.
    let s = String::from_utf8_lossy(url);
    if let Some(rest) = s.split_once("://").map(|(_, r)| r) {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let path_etc = &rest[authority.len()..];
        if path_etc.contains(['[', ']']) {
            return false;
        }
        if authority.contains(['[', ']'])
            && !(authority.starts_with('[') && authority.contains(']'))
        {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_header_types() {
        let v1 = "http://www.example.org/old-page 192.0.2.10 20240315103006 text/html 98";
        assert_eq!(header_line_mime(v1.as_bytes()).as_deref(), Some("text/html"));
        // A URL with spaces (and digits) before the date, a v2 line, a type with parameters.
        let spaced = "http://e.org/a 20240315103006 b.html 192.0.2.10 20240315103006 Text/HTML; charset=x 98";
        assert_eq!(header_line_mime(spaced.as_bytes()).as_deref(), Some("text/html"));
        let v2 = "http://e.org/ 1.2.3.4 20240315103006 application/xhtml+xml 200 - - 0 f.arc 9";
        assert_eq!(header_line_mime(v2.as_bytes()).as_deref(), Some("application/xhtml+xml"));
        assert_eq!(header_line_mime("http://e.org/ 1.2.3.4 20240315103006 - 9".as_bytes()), None);
        assert_eq!(header_line_mime("base64:aGVsbG8=".as_bytes()), None);
    }

    fn parse(line: &str) -> ArcHeader {
        parse_header_line(line.as_bytes(), None, Mode::Lenient).expect("parses").0
    }

    #[test]
    fn v1_line() {
        let h = parse("http://www.example.org/ 192.0.2.10 20060503101503 text/html 147");
        assert_eq!(h.url, b"http://www.example.org/");
        assert_eq!(h.ip, "192.0.2.10");
        assert_eq!(h.mime, "text/html");
        assert_eq!(h.declared_length, Some(147));
        assert_eq!(h.date.unwrap().to_rfc3339(), "2006-05-03T10:15:03+00:00");
    }

    #[test]
    fn url_with_spaces_is_split_from_the_right() {
        let h = parse("http://e.com/a b  c 93.184.216.119 20140216050221 text/html 1591");
        assert_eq!(h.url, b"http://e.com/a b  c");
        assert_eq!(h.declared_length, Some(1591));
    }

    #[test]
    fn v2_line() {
        let h =
            parse("http://example.com/p.html 0.0.0.0 20250101000000 text/html 200 - - 0 t.arc 120");
        assert_eq!(h.url, b"http://example.com/p.html");
        assert_eq!(h.v2.as_ref().unwrap().result_code, "200");
        assert_eq!(h.declared_length, Some(120));
    }

    #[test]
    fn mime_with_charset_and_missing_mime() {
        let h = parse("http://e.com/ 1.2.3.4 20140216050221 text/html; charset=utf-8 10");
        assert_eq!(h.mime, "text/html; charset=utf-8");
        let h = parse("http://e.com/ 1.2.3.4 20140216050221 10");
        assert_eq!(h.mime, "");
        assert_eq!(h.declared_length, Some(10));
    }

    #[test]
    fn bad_length_and_date_are_tolerated_but_not_in_strict_mode() {
        let line = b"http://example.com/ 93.184.216.119 201404010000000000 text/html abc";
        let (h, notes) = parse_header_line(line, None, Mode::Lenient).unwrap();
        assert_eq!(h.declared_length, None);
        assert!(notes.is_empty());
        let (h, notes) =
            parse_header_line(b"dns:e.com 1.2.3.4 - text/dns 5", None, Mode::Lenient).unwrap();
        assert_eq!(h.date, None);
        assert!(notes.iter().any(|n| n.0 == AnomalyKind::BadDate));
        assert!(parse_header_line(line, None, Mode::Scan).is_err());
    }

    #[test]
    fn cdx_lines_are_not_headers() {
        let cdx = b"dns:netarkivet.dk 130.225.24.33 20060329081336 text/dns 56 2-2-x.arc 1437 4a52619830a601ca3c9fc1a1ef29deea";
        assert!(parse_header_line(cdx, None, Mode::Scan).is_err());
    }

    #[test]
    fn uri_validity() {
        assert!(is_valid_uri(b"http://example.com/a?b=c#d"));
        assert!(is_valid_uri(b"dns:example.com"));
        assert!(!is_valid_uri(b"http://example.com/a b"));
        assert!(!is_valid_uri(b"http://www.insuranceforpets.net]www"));
        assert!(!is_valid_uri(b"http://e.com/%zz"));
        assert!(is_valid_uri(b"http://[::1]/"));
    }
}
