//! A NEDLIB `.meta` file (INPUT_FORMATS.md §5): the server's status line and fields, the
//! harvester's `Arc-*` lines and whatever else the file holds, taken apart byte for byte (every
//! byte ends up in the HTTP header or in the side lines), with the oddities of each line noted
//! (line ends, merged lines, fields without a name, dates no reader knows, a missing empty line
//! at the header's end). The NEDLIB source (`sources::nedlib`) makes captures of it.

use chrono::{DateTime, Utc};

use crate::formats::dates::{describe_date_quirk, parse_server_date};

/// An oddity of a line: its number (1-based), its kind, in words.
pub(crate) type Noted = (Option<u64>, &'static str, String);

/// Where the oddities go (the source's bounded per-file log).
pub(crate) trait QuirkSink {
    /// Notes one.
    fn push(&mut self, q: Noted);
}

impl QuirkSink for Vec<Noted> {
    fn push(&mut self, q: Noted) {
        Vec::push(self, q);
    }
}

/// A line end style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// CR LF.
    Crlf,
    /// LF alone.
    Lf,
}

impl Eol {
    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            Eol::Crlf => b"\r\n",
            Eol::Lf => b"\n",
        }
    }
}

/// A `.meta` taken apart (every byte is in `header` or `side_lines`).
#[derive(Debug)]
pub(crate) struct Meta {
    /// The status line and server fields as stored, ending with an empty line (appended when
    /// missing); `None` when the first line is no status line.
    pub(crate) header: Option<Vec<u8>>,
    /// `Arc-*` lines and anything after the header's end, verbatim.
    pub(crate) side_lines: Vec<u8>,
    /// The line end style of the file (its first line's).
    pub(crate) eol: Eol,
    pub(crate) arc_url: Option<(Vec<u8>, u64)>,
    /// `Arc-Length`: its value when it is a number, and its line.
    pub(crate) arc_length: Option<(Option<u64>, u64)>,
    pub(crate) content_length: Option<(Option<u64>, u64)>,
    pub(crate) content_type: Option<String>,
    /// `Date`: its text, line and parsed value.
    pub(crate) date: Option<(String, u64, Option<DateTime<Utc>>)>,
}

/// The field name of a header line (`Name:`), if it has one.
fn field_name(line: &[u8]) -> Option<&[u8]> {
    let colon = line.iter().position(|&b| b == b':')?;
    let name = &line[..colon];
    (!name.is_empty() && name.iter().all(|&b| b.is_ascii_graphic())).then_some(name)
}

/// A field value without the surrounding blanks and line end.
fn field_value(line: &[u8], name: &[u8]) -> Vec<u8> {
    let v = &line[name.len() + 1..];
    let v = v.strip_suffix(b"\n").unwrap_or(v);
    let v = v.strip_suffix(b"\r").unwrap_or(v);
    v.trim_ascii().to_vec()
}

/// Text of a value: UTF-8, or ISO-8859-1 (the Norwegian `lø` of 2003 servers) when it is not.
fn value_text(v: &[u8]) -> (String, bool) {
    match std::str::from_utf8(v) {
        Ok(s) => (s.to_string(), false),
        Err(_) => (v.iter().map(|&b| b as char).collect(), true),
    }
}

/// Splits a `.meta` into the HTTP header, the `Arc-*` lines and the rest, and notes its quirks
/// (line numbers 1-based).
pub(crate) fn parse_meta(bytes: &[u8], quirks: &mut impl QuirkSink) -> Meta {
    // Lines are walked, never collected: a 1 MiB file may hold 500,000 of them.
    let lines = || bytes.split_inclusive(|&b| b == b'\n');
    let eol = lines().next().and_then(eol_of).unwrap_or(Eol::Lf);
    let mut m = Meta {
        header: None,
        side_lines: Vec::new(),
        eol,
        arc_url: None,
        arc_length: None,
        content_length: None,
        content_type: None,
        date: None,
    };
    let status = lines().next().is_some_and(|l| l.starts_with(b"HTTP/"));
    if !status {
        quirks.push((Some(1), "no-status-line", "the first line is no HTTP status line: the capture is a resource, every line goes to its metadata record".into()));
    }
    note_line_ends(bytes, quirks);
    let mut walk = HeaderWalk {
        header: Vec::new(),
        ended: false,
        last_arc: false,
        last_eol: eol,
        last_line: 1,
    };
    for (i, line) in lines().enumerate() {
        let n = i as u64 + 1;
        if eol_of(line).is_none() {
            quirks.push((Some(n), "no-final-line-end", "the last line has no line end".into()));
        }
        let name = field_name(line);
        let is_arc = name.is_some_and(|nm| nm.len() > 4 && nm[..4].eq_ignore_ascii_case(b"arc-"));
        let folded = (line.starts_with(b" ") || line.starts_with(b"\t")) && i > 0;
        let l = MetaLine { text: line, name, n, folded };
        if is_arc || (folded && walk.last_arc) {
            arc_line(&mut m, &l, is_arc, quirks);
            walk.last_arc = true;
            continue;
        }
        walk.last_arc = false;
        if walk.ended || !status {
            side_line(&mut m, &l, walk.ended, status, quirks);
            continue;
        }
        walk.header_line(&mut m, &l, quirks);
    }
    if status {
        m.header = Some(walk.finish(quirks));
    }
    m
}

/// One line of a `.meta`: its bytes (line end included), its field name, its number
/// (1-based), and whether it is folded into the line before.
struct MetaLine<'a> {
    text: &'a [u8],
    name: Option<&'a [u8]>,
    n: u64,
    folded: bool,
}

/// The line end a line has (none: the last line, unended).
fn eol_of(l: &[u8]) -> Option<Eol> {
    if l.ends_with(b"\r\n") {
        Some(Eol::Crlf)
    } else if l.ends_with(b"\n") {
        Some(Eol::Lf)
    } else {
        None
    }
}

/// Line ends: LF is what NEDLIB files are expected to hold (§5.4.5), reported once a file;
/// both kinds in one file are reported too.
fn note_line_ends(bytes: &[u8], quirks: &mut impl QuirkSink) {
    let lines = || bytes.split_inclusive(|&b| b == b'\n');
    let first_lf = lines().position(|l| eol_of(l) == Some(Eol::Lf));
    let first_crlf = lines().position(|l| eol_of(l) == Some(Eol::Crlf));
    let Some(i) = first_lf else { return };
    quirks.push((
        Some(i as u64 + 1),
        "lf-line-ends",
        "lines end with LF alone (kept as stored)".into(),
    ));
    if let Some(j) = first_crlf {
        quirks.push((
            Some(j.max(i) as u64 + 1),
            "mixed-line-ends",
            "both CRLF and LF line ends (kept as stored)".into(),
        ));
    }
}

/// An `Arc-*` line (or a line folded into one) goes to the side lines; `Arc-URL` and
/// `Arc-Length` (the first of each) are noted.
fn arc_line(m: &mut Meta, l: &MetaLine, is_arc: bool, quirks: &mut impl QuirkSink) {
    m.side_lines.extend_from_slice(l.text);
    if eol_of(l.text).is_none() {
        m.side_lines.extend_from_slice(m.eol.bytes());
    }
    let Some(nm) = l.name.filter(|_| is_arc) else { return };
    let (v, n) = (field_value(l.text, nm), l.n);
    if nm.eq_ignore_ascii_case(b"arc-url") && m.arc_url.is_none() && !v.is_empty() {
        m.arc_url = Some((v, n));
    } else if nm.eq_ignore_ascii_case(b"arc-length") && m.arc_length.is_none() {
        let len = std::str::from_utf8(&v).ok().and_then(|s| s.parse().ok());
        if len.is_none() {
            quirks.push((Some(n), "bad-arc-length", "Arc-Length is not a number".into()));
        }
        m.arc_length = Some((len, n));
    }
}

/// A line outside the HTTP header (after its end, or in a file with no status line) goes to
/// the side lines; without a status line its server fields are still noted.
fn side_line(m: &mut Meta, l: &MetaLine, ended: bool, status: bool, quirks: &mut impl QuirkSink) {
    if ended && !l.text.trim_ascii().is_empty() {
        quirks.push((
            Some(l.n),
            "after-header-end",
            "a line after the header's empty line: kept in the metadata record".into(),
        ));
    }
    m.side_lines.extend_from_slice(l.text);
    if !status && let Some(nm) = l.name {
        header_field(m, nm, l.text, l.n, quirks);
    }
}

/// The HTTP header being gathered, line by line.
struct HeaderWalk {
    header: Vec<u8>,
    /// Its empty line was met.
    ended: bool,
    /// The last line was an `Arc-*` line (a folded line continues it).
    last_arc: bool,
    /// The line end of its last line, and that line's number.
    last_eol: Eol,
    last_line: u64,
}

impl HeaderWalk {
    /// A line of the header: kept as stored, its field noted.
    fn header_line(&mut self, m: &mut Meta, l: &MetaLine, quirks: &mut impl QuirkSink) {
        let (line, n) = (l.text, l.n);
        self.header.extend_from_slice(line);
        self.last_line = n;
        if let Some(e) = eol_of(line) {
            self.last_eol = e;
        }
        if n > 1 && (line == b"\r\n" || line == b"\n") {
            self.ended = true;
            return;
        }
        if n == 1 || l.folded {
            return;
        }
        match l.name {
            Some(nm) => header_field(m, nm, line, n, quirks),
            None if !line.trim_ascii().is_empty() => quirks.push((
                Some(n),
                "malformed-header-line",
                "a header line without a field name: kept as stored".into(),
            )),
            None => {}
        }
    }

    /// The header, with an empty line appended (in its line-end style) when it had none.
    fn finish(mut self, quirks: &mut impl QuirkSink) -> Vec<u8> {
        if !self.ended {
            if !self.header.ends_with(b"\n") {
                self.header.extend_from_slice(self.last_eol.bytes());
            }
            self.header.extend_from_slice(self.last_eol.bytes());
            quirks.push((
                Some(self.last_line),
                "no-header-end",
                "no empty line after the header's last line: one is appended in the file's \
                 line-end style"
                    .into(),
            ));
        }
        self.header
    }
}

/// Notes a server field the mapping uses (Content-Length, Content-Type, Date).
fn header_field(m: &mut Meta, name: &[u8], line: &[u8], n: u64, quirks: &mut impl QuirkSink) {
    let v = field_value(line, name);
    if name.eq_ignore_ascii_case(b"content-length") && m.content_length.is_none() {
        let digits = v.iter().take_while(|b| b.is_ascii_digit()).count();
        let len = std::str::from_utf8(&v[..digits]).ok().and_then(|s| s.parse::<u64>().ok());
        if len.is_some() && digits < v.len() {
            let (rest, _) = value_text(&v[digits..]);
            let looks = if parse_server_date(&rest).is_some() { " (a date)" } else { "" };
            quirks.push((Some(n), "merged-header-line", format!("Content-Length {} followed by {rest:?}{looks}: another line merged into it; the digits are taken as the length, the bytes kept as stored", &value_text(&v[..digits]).0)));
        } else if len.is_none() {
            quirks.push((Some(n), "bad-content-length", "Content-Length is not a number".into()));
        }
        m.content_length = Some((len, n));
    } else if name.eq_ignore_ascii_case(b"content-type") && m.content_type.is_none() {
        if !v.is_empty() && v.iter().all(|&b| (0x20..0x7f).contains(&b)) {
            m.content_type = std::str::from_utf8(&v).ok().map(str::to_string);
        }
    } else if name.eq_ignore_ascii_case(b"date") && m.date.is_none() {
        let (text, latin1) = value_text(&v);
        if latin1 {
            quirks.push((
                Some(n),
                "non-utf8-value",
                "the Date value is not UTF-8: read as ISO-8859-1".into(),
            ));
        }
        let parsed = parse_server_date(&text);
        match &parsed {
            Some((_, kinds)) => {
                for k in kinds {
                    quirks.push((Some(n), k, format!("Date {text:?}: {}", describe_date_quirk(k))));
                }
            }
            None => quirks.push((
                Some(n),
                "unparsed-date",
                format!("Date {text:?} is no date this reader knows"),
            )),
        }
        m.date = Some((text, n, parsed.map(|(t, _)| t)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::dates::utc;

    fn split(meta: &[u8]) -> (Meta, Vec<Noted>) {
        let mut q = Vec::new();
        (parse_meta(meta, &mut q), q)
    }

    fn kinds(q: &[Noted]) -> Vec<(&'static str, Option<u64>)> {
        q.iter().map(|(l, k, _)| (*k, *l)).collect()
    }

    #[test]
    fn meta_splits_into_header_and_arc_lines_byte_exact() {
        let stored = b"HTTP/1.0 200 OK\r\nDate: Wed, 16 Jul 2003 07:41:29 GMT\r\nContent-Type: image/gif\r\nContent-Length: 1802\r\nArc-Url: http://www.example.no:80/logo.gif\r\nArc-Length: 1802\r\n";
        let (m, q) = split(stored);
        assert_eq!(
            m.header.unwrap(),
            b"HTTP/1.0 200 OK\r\nDate: Wed, 16 Jul 2003 07:41:29 GMT\r\nContent-Type: image/gif\r\nContent-Length: 1802\r\n\r\n"
        );
        assert_eq!(
            m.side_lines,
            b"Arc-Url: http://www.example.no:80/logo.gif\r\nArc-Length: 1802\r\n"
        );
        assert_eq!(m.arc_url.unwrap(), (b"http://www.example.no:80/logo.gif".to_vec(), 5));
        assert_eq!(m.arc_length, Some((Some(1802), 6)));
        assert_eq!(m.content_length, Some((Some(1802), 4)));
        assert_eq!(m.content_type.as_deref(), Some("image/gif"));
        assert_eq!(m.date.unwrap().2, Some(utc(2003, 7, 16, 7, 41, 29)));
        assert_eq!(kinds(&q), vec![("no-header-end", Some(4))]);

        // LF, a merged line, an Arc line in the middle, a header ended by its empty line, no
        // final line end after the last Arc line.
        let stored = b"HTTP/1.1 200 OK\nArc-Url: http://h:80/\nContent-Length: 12Fri, 04 Apr 2003 08:36:47 GMT\nweird line\n\nArc-Length: 12";
        let (m, q) = split(stored);
        assert_eq!(
            m.header.unwrap(),
            b"HTTP/1.1 200 OK\nContent-Length: 12Fri, 04 Apr 2003 08:36:47 GMT\nweird line\n\n"
        );
        assert_eq!(m.side_lines, b"Arc-Url: http://h:80/\nArc-Length: 12\n");
        assert_eq!(m.content_length, Some((Some(12), 3)));
        assert_eq!(
            kinds(&q),
            vec![
                ("lf-line-ends", Some(1)),
                ("merged-header-line", Some(3)),
                ("malformed-header-line", Some(4)),
                ("no-final-line-end", Some(6)),
            ]
        );
        assert!(q[1].2.contains("(a date)"), "{}", q[1].2);

        // No status line: a resource, everything in the metadata.
        let (m, q) = split(b"Content-Type: text/plain\nArc-Url: http://h/\n");
        assert!(m.header.is_none());
        assert_eq!(m.side_lines, b"Content-Type: text/plain\nArc-Url: http://h/\n");
        assert_eq!(m.content_type.as_deref(), Some("text/plain"));
        assert_eq!(kinds(&q)[0], ("no-status-line", Some(1)));
    }
}
