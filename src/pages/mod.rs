//! Webpages and associated objects (P1.3, P2.1): the entities below the website that a curator
//! describes, the captures they are matched to, and what helps a curator choose them.
//!
//! - `html_title` reads a page's `<title>` as a browser shows it (decoded in the page's
//!   charset, character references resolved, white space collapsed); `payload_title` undoes
//!   the payload's gzip or deflate `Content-Encoding` first;
//! - `read_capture_head` reads the start of a capture's payload back from a container, by the
//!   byte ranges the METS states.

pub mod list;
pub mod sorted;

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::formats::content_coding::Coding;
use crate::formats::segment::FileRange;
pub(crate) use crate::formats::url::url_key;
use crate::formats::warc::stored::record_reader;
use chrono::{DateTime, Utc};

use crate::formats::html::html_encoding;
use crate::model::{EntityOrigin, PageKind, RecordFile, TitleSource};

/// How much of a payload is read to find its title: titles sit in the head, and a page whose
/// `<title>` starts later than this is reported as having none.
pub const TITLE_WINDOW: usize = 1 << 20;

/// Titles longer than this are cut (a broken page can hold megabytes of "title").
const MAX_TITLE_CHARS: usize = 1024;

/// True for the MIME types whose payloads are HTML pages.
pub(crate) fn is_html(mime: &str) -> bool {
    let m = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    m == "text/html" || m == "application/xhtml+xml"
}

/// The text of the first `<title>` element of an HTML page, as a browser's `document.title`
/// gives it: decoded in the page's encoding (the HTTP `charset`, else a `<meta charset>`, else
/// UTF-8 or windows-1252: [`html_encoding`]), character references resolved, ASCII white space
/// stripped and collapsed. `None` when the page has no title, or an empty one, within `head`.
pub(crate) fn html_title(head: &[u8], content_type: Option<&str>) -> Option<String> {
    let encoding = html_encoding(head, content_type);
    let raw = std::cell::RefCell::new(None::<String>);
    let done = std::cell::Cell::new(false);
    {
        use lol_html::{HtmlRewriter, MemorySettings, Settings, element, text};
        let enc = lol_html::AsciiCompatibleEncoding::new(encoding)
            .unwrap_or_else(lol_html::AsciiCompatibleEncoding::utf_8);
        let memory = MemorySettings::new().with_max_allowed_memory_usage(16 << 20);
        let settings = Settings::new()
            .with_encoding(enc)
            .with_strict(false)
            .with_memory_settings(memory)
            .append_element_content_handler(element!("title", |_| {
                if !done.get() && raw.borrow().is_none() {
                    *raw.borrow_mut() = Some(String::new());
                }
                Ok(())
            }))
            .append_element_content_handler(text!("title", |t| {
                if !done.get()
                    && let Some(s) = raw.borrow_mut().as_mut()
                    && s.len() < 4 * MAX_TITLE_CHARS
                {
                    s.push_str(t.as_str());
                }
                if t.last_in_text_node() && raw.borrow().is_some() {
                    done.set(true);
                }
                Ok(())
            }));
        let mut rw = HtmlRewriter::new(settings, |_: &[u8]| {});
        // A page lol_html cannot parse has no title we could vouch for.
        if rw.write(head).is_err() {
            return None;
        }
        let _ = rw.end();
    }
    let raw = raw.into_inner()?;
    // Title text is RCDATA: character references are resolved, tags are not.
    let text = htmlize::unescape(raw.as_str());
    let collapsed: String = text
        .split([' ', '\t', '\n', '\r', '\x0c'])
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let title: String = collapsed.chars().take(MAX_TITLE_CHARS).collect();
    (!title.is_empty()).then_some(title)
}

/// The title of an HTML page whose payload starts with `payload`: the payload decoded first
/// when `http_header` names a `Content-Encoding` webaip undoes (`gzip`, `x-gzip`, `deflate`),
/// at most [`TITLE_WINDOW`] decoded bytes (a payload cut short gives what it decodes to).
pub(crate) fn payload_title(
    http_header: &[u8],
    payload: &[u8],
    content_type: Option<&str>,
) -> Option<String> {
    // A coding webaip does not undo (br, zstd...): its bytes are no HTML to read.
    let decoder = Coding::of_header(http_header).decoder(payload)?;
    let mut decoded = Vec::new();
    // On an error, the bytes decoded before it are kept in `decoded`.
    let _ = decoder.take(TITLE_WINDOW as u64).read_to_end(&mut decoded);
    html_title(&decoded, content_type)
}

/// What [`read_capture_head`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CaptureHead {
    /// The `Content-Type` that applies to the payload: the HTTP header's for an HTTP response,
    /// else the WARC record's.
    pub content_type: Option<String>,
    /// The first bytes of the payload (at most the limit asked for).
    pub payload: Vec<u8>,
}

/// Reads the start of a record's payload from its container, by the ranges the METS states:
/// the record's member (decompressed when `compressed`), then `limit` bytes from the payload's
/// offset inside the record.
pub(crate) fn read_capture_head(
    container: &Path,
    r: &RecordFile,
    limit: usize,
) -> io::Result<CaptureHead> {
    let file = File::open(container)?;
    let range = FileRange::new(&file, r.member.begin, r.member.len);
    let mut record = record_reader(range, r.compressed);
    let (begin, len) = match &r.content {
        Some(c) => (c.range.begin, c.range.len),
        None => return Ok(CaptureHead { content_type: None, payload: Vec::new() }),
    };
    // The headers before the payload are small (the readers bound them); read them whole.
    let mut headers = Vec::new();
    (&mut record).take(begin.min(8 << 20)).read_to_end(&mut headers)?;
    if (headers.len() as u64) < begin {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the record ends before its payload's stated offset",
        ));
    }
    let mut payload = Vec::new();
    record.take(len.min(limit as u64)).read_to_end(&mut payload)?;
    let content_type = crate::formats::http::field_value_nearest_payload(&headers, b"content-type");
    Ok(CaptureHead { content_type, payload })
}

/// One described entity as the package holds it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DescribedEntity {
    /// Webpage or associated object.
    pub kind: PageKind,
    /// Who asked for it.
    pub origin: EntityOrigin,
    /// The capture's `WARC-Target-URI`.
    pub url: String,
    /// The capture's `WARC-Date`.
    pub captured: String,
    /// True when that date is inferred, not the capture's own.
    pub captured_inferred: bool,
    /// How many captures of the URL the package holds.
    pub captures: usize,
    /// Its title, if it has one.
    pub title: Option<String>,
    /// Where the title came from.
    pub title_source: TitleSource,
    /// The container holding the capture.
    pub container: String,
    /// The `<file>` its div points at.
    pub file_id: String,
}

/// What describing the entities did, for the package report.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EntitiesReport {
    /// The entities described, in the order asked for.
    pub described: Vec<DescribedEntity>,
    /// Seeds (`--describe-seeds`) with no capture in the package: nothing to describe.
    pub seeds_not_harvested: Vec<String>,
    /// Entities whose only capture is quarantined (their div points into `viral/`).
    pub viral: Vec<String>,
    /// Records listed in the METS only because an entity points at them, by container.
    pub records_listed: std::collections::BTreeMap<String, u64>,
}

/// Chooses the capture an entity points at among `dates` (W3C date-times, in package order):
/// the one closest to `captured`, else the only one, else (`latest_if_several`) the latest.
/// Ties go to the later capture. `None` when there is none, or several and nothing chooses.
pub(crate) fn choose_capture(
    dates: &[&str],
    captured: Option<DateTime<Utc>>,
    latest_if_several: bool,
) -> Option<usize> {
    let parse = |d: &str| crate::formats::dates::parse_rfc3339(d).ok();
    let latest = || (0..dates.len()).max_by_key(|&i| (parse(dates[i]), i));
    match (captured, dates.len()) {
        (_, 0) => None,
        (Some(t), _) => (0..dates.len()).min_by_key(|&i| {
            let distance = parse(dates[i]).map_or(i64::MAX, |d| (d - t).num_seconds().abs());
            (distance, std::cmp::Reverse((parse(dates[i]), i)))
        }),
        (None, 1) => Some(0),
        (None, _) if latest_if_several => latest(),
        (None, _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_as_a_browser_shows_them() {
        let t = |b: &[u8], ct: Option<&str>| html_title(b, ct);
        assert_eq!(
            t(b"<html><head><title>  Spring\n  fair &amp; market </title>", None).as_deref(),
            Some("Spring fair & market")
        );
        // windows-1252 by <meta charset>, and by the HTTP header.
        assert_eq!(
            t(b"<meta charset=\"windows-1252\"><title>\xdcber uns</title>", None).as_deref(),
            Some("\u{dc}ber uns")
        );
        assert_eq!(
            t(
                b"<title>F\xf6rderverein &uuml; &#x263A;</title>",
                Some("text/html; charset=iso-8859-1")
            )
            .as_deref(),
            Some("F\u{f6}rderverein \u{fc} \u{263a}")
        );
        // Not inside comments or scripts; tags inside a title are text.
        assert_eq!(
            t(b"<!-- <title>no</title> --><script>'<title>no</title>'</script><title>a<b>c</title>", None)
                .as_deref(),
            Some("a<b>c")
        );
        assert_eq!(t(b"<title> \n </title>", None), None);
        assert_eq!(t(b"<html><body>no title</body></html>", None), None);
        // The first title only.
        assert_eq!(t(b"<title>one</title><title>two</title>", None).as_deref(), Some("one"));
    }

    #[test]
    fn choosing_a_capture() {
        let d = ["2024-03-15T10:30:03Z", "2024-03-16T10:30:03Z", "2024-03-14T10:30:03Z"];
        let at = |s: &str| Some(crate::metadata::parse_capture_date(s).unwrap());
        assert_eq!(choose_capture(&d, at("2024-03-16"), false), Some(1));
        assert_eq!(choose_capture(&d, at("2024-03-15T09:00:00Z"), false), Some(0));
        assert_eq!(choose_capture(&d, at("2000-01-01"), false), Some(2));
        assert_eq!(choose_capture(&d, None, false), None);
        assert_eq!(choose_capture(&d, None, true), Some(1));
        assert_eq!(choose_capture(&d[..1], None, false), Some(0));
        assert_eq!(choose_capture(&[], None, true), None);
        // Equally close: the later capture.
        let e = ["2024-03-15T10:00:00Z", "2024-03-15T12:00:00Z"];
        assert_eq!(choose_capture(&e, at("2024-03-15T11:00:00Z"), false), Some(1));
    }
}
