//! Webpages and associated objects (P1.3, P2.1): the entities below the website that a curator
//! describes, the captures they are matched to, and what helps a curator choose them.
//!
//! - [`html_title`] reads a page's `<title>` as a browser shows it (decoded in the page's
//!   charset, character references resolved, white space collapsed);
//! - [`url_key`] is the one rule by which a described URL matches a captured one;
//! - [`read_capture_head`] reads the start of a capture's payload back from a container, by the
//!   byte ranges the METS states.

pub mod list;

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::formats::segment::FileRange;
use crate::model::RecordFile;
use crate::stages::rewrite::html_encoding;

/// How much of a payload is read to find its title: titles sit in the head, and a page whose
/// `<title>` starts later than this is reported as having none.
pub const TITLE_WINDOW: usize = 1 << 20;

/// Titles longer than this are cut (a broken page can hold megabytes of "title").
const MAX_TITLE_CHARS: usize = 1024;

/// True for the MIME types whose payloads are HTML pages.
pub fn is_html(mime: &str) -> bool {
    let m = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    m == "text/html" || m == "application/xhtml+xml"
}

/// The text of the first `<title>` element of an HTML page, as a browser's `document.title`
/// gives it: decoded in the page's encoding (the HTTP `charset`, else a `<meta charset>`, else
/// UTF-8 or windows-1252: [`html_encoding`]), character references resolved, ASCII white space
/// stripped and collapsed. `None` when the page has no title, or an empty one, within `head`.
pub fn html_title(head: &[u8], content_type: Option<&str>) -> Option<String> {
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

/// The form in which a described URL is compared with captured ones: scheme and host in lower
/// case, an empty path as `/`, the fragment dropped; everything else (path, query, their
/// escapes) as written. URLs that do not parse are compared as written.
pub fn url_key(url: &str) -> String {
    let t = url.trim();
    match url::Url::parse(t) {
        Ok(mut u) if u.has_host() => {
            u.set_fragment(None);
            // `url` lower-cases scheme and host and writes an empty path as `/`; it also
            // percent-encodes what WHATWG says to, so a harvested `a b` and a described `a%20b`
            // meet.
            u.to_string()
        }
        _ => t.to_string(),
    }
}

/// What [`read_capture_head`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureHead {
    /// The `Content-Type` that applies to the payload: the HTTP header's for an HTTP response,
    /// else the WARC record's.
    pub content_type: Option<String>,
    /// The first bytes of the payload (at most the limit asked for).
    pub payload: Vec<u8>,
}

/// Reads the start of a record's payload from its container, by the ranges the METS states:
/// the record's member (decompressed when `compressed`), then `limit` bytes from the payload's
/// offset inside the record.
pub fn read_capture_head(
    container: &Path,
    r: &RecordFile,
    limit: usize,
) -> io::Result<CaptureHead> {
    let file = File::open(container)?;
    let range = FileRange::new(&file, r.member.begin, r.member.len);
    let mut record: Box<dyn Read> =
        if r.compressed { Box::new(flate2::read::GzDecoder::new(range)) } else { Box::new(range) };
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
    Ok(CaptureHead { content_type: last_content_type(&headers), payload })
}

/// The last `Content-Type` field among header blocks (a WARC header, then an HTTP header: the
/// HTTP one, nearer the payload, applies to it).
fn last_content_type(headers: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(headers);
    text.split('\n').rev().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case("content-type").then(|| value.trim().to_string())
    })
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
    fn url_keys() {
        assert_eq!(url_key("HTTP://WWW.Example.org"), "http://www.example.org/");
        assert_eq!(
            url_key("http://www.example.org/a b.html#x"),
            "http://www.example.org/a%20b.html"
        );
        assert_eq!(
            url_key("http://www.example.org/a%20b.html"),
            "http://www.example.org/a%20b.html"
        );
        assert_ne!(url_key("http://www.example.org/A"), url_key("http://www.example.org/a"));
        assert_eq!(url_key("dns:www.example.org"), "dns:www.example.org");
    }
}
