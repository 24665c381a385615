//! `pages/pages.jsonl`: the pages a WACZ viewer offers. The webpages a curator described come
//! first, in the order the METS gives them, then every other HTML page (2xx) of the package
//! by URL and date, each with its `<title>` as a browser shows it.

use std::collections::HashSet;
use std::io::{self, Write};

use sha2::{Digest, Sha256};

use super::plan::Described;
use crate::formats::arc::header_line_mime;
use crate::formats::arc_to_warc::FIELD_ARC_HEADER;
use crate::formats::dates::parse_warc_date;
use crate::formats::http::{MAX_HTTP_HEADER_LEN, entity_mime, field_value, status_number};
use crate::formats::warc::WarcReader;
use crate::formats::warc::payload::{holds_http_message, payload_start_of};
use crate::formats::warc::reader::WarcRecordHead;
use crate::pages::list::{PageEntry, Place, entry_bytes, listing_order};
use crate::pages::sorted::SortedRuns;
use crate::pages::{TITLE_WINDOW, is_html, payload_title};

/// The pages of the containers, sorted as `webaip pages` lists them.
pub(crate) type Pages = SortedRuns<PageEntry>;

/// An empty list of pages.
pub(crate) fn new_pages() -> Pages {
    SortedRuns::new(listing_order, entry_bytes)
}

/// What the export takes of one inflated member ([`read_member`]).
pub(crate) struct MemberRead {
    pub page: Option<PageEntry>,
    pub revisit: bool,
}

/// Bytes of a record read for its WARC header at first (the whole member only when the
/// header is longer).
const FIRST_PART: usize = 64 * 1024;

/// The page `webaip pages` lists for the record an inflated gzip `member` holds alone (at
/// `offset` of the container named `file` in the package): a `response` or `resource` with a
/// target URI and a readable `WARC-Date`, whose payload is HTML (2xx for an HTTP response);
/// `None` for any other record. The same rules as the listing's reader (its capture's HTTP
/// header, type, payload and title), from bytes inflated once for the index.
/// Also whether the member may hold a revisit (whose original the WACZ must hold; a member
/// whose header cannot be read is counted as one, so that the references are looked for).
pub(crate) fn read_member(member: &[u8], offset: u64, file: &str) -> MemberRead {
    let head = record_head(&member[..member.len().min(FIRST_PART)]).or_else(|| record_head(member));
    let Some(head) = head else { return MemberRead { page: None, revisit: true } };
    let revisit = head.header.warc_type() == Some("revisit");
    let block = usize::try_from(head.header_len).ok().and_then(|n| member.get(n..));
    MemberRead { page: block.and_then(|b| page_of_block(&head, b, offset, file)), revisit }
}

/// Bytes of a streamed record's block its page is read from: its HTTP header and as much of
/// its payload as `webaip pages` reads for a title.
pub(crate) const BLOCK_START: usize = MAX_HTTP_HEADER_LEN + TITLE_WINDOW;

/// [`read_member`] for a record streamed (its member too large to inflate whole): from its
/// head and the first [`BLOCK_START`] bytes of its block.
pub(crate) fn read_streamed(
    head: &WarcRecordHead,
    block_start: &[u8],
    offset: u64,
    file: &str,
) -> MemberRead {
    let revisit = head.header.warc_type() == Some("revisit");
    MemberRead { page: page_of_block(head, block_start, offset, file), revisit }
}

/// The page of the record `head` begins, whose block is `block` (or starts so).
fn page_of_block(
    head: &WarcRecordHead,
    block: &[u8],
    offset: u64,
    file: &str,
) -> Option<PageEntry> {
    let h = &head.header;
    let kind = h.warc_type();
    if !matches!(kind, Some("response" | "resource")) || h.target_uri().is_none_or(str::is_empty) {
        return None;
    }
    let date = parse_warc_date(h.get("WARC-Date").unwrap_or(""))?;
    let declared = h.content_length().unwrap_or(0);
    let block = &block[..block.len().min(usize::try_from(declared).unwrap_or(usize::MAX))];
    let prefix = &block[..block.len().min(MAX_HTTP_HEADER_LEN)];
    let start = match holds_http_message(kind, h.target_uri()) {
        true => payload_start_of(h, prefix).offset() as usize,
        false => 0,
    };
    let http_header = &prefix[..start.min(prefix.len())];
    let content_type = match start > 0 {
        true => entity_mime(http_header)
            .or_else(|| h.get(FIELD_ARC_HEADER).and_then(|l| header_line_mime(l.as_bytes()))),
        false => h.get("Content-Type").map(str::to_string),
    };
    let status = status_number(http_header);
    let mime = content_type
        .as_deref()
        .map(|t| t.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .unwrap_or_else(|| "application/octet-stream".into());
    if !is_html(&mime) || !status.is_none_or(|s| (200..300).contains(&s)) {
        return None;
    }
    let payload = block.get(start..).unwrap_or_default();
    let ct = field_value(http_header, b"content-type").or(content_type);
    Some(PageEntry {
        url: h.target_uri().unwrap_or_default().to_string(),
        captured: date.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        size: declared.saturating_sub(start as u64),
        status,
        mime,
        title: payload_title(http_header, payload, ct.as_deref()),
        place: Place { file: file.to_string(), offset: Some(offset), offset_in_member: None },
    })
}

/// The head of the record at the start of `bytes` (its block may be cut short).
fn record_head(bytes: &[u8]) -> Option<WarcRecordHead> {
    let mut reader = WarcReader::with_capacity(bytes, String::new(), 8 * 1024).ok()?;
    let mut got = None;
    // The block is not read: past the header a cut block is an error, and the head is kept.
    let _ = reader.next_record(|head, _| {
        got = Some(head.clone());
        Ok(())
    });
    got
}

/// The first line: the format and the list's id, as WACZ 1.1.1 gives it.
const HEADER: &str = r#"{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}"#;

/// How many pages were written.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct PageTally {
    /// Pages listed.
    pub pages: u64,
    /// Of them, webpages the METS describes.
    pub described: u64,
    /// Webpages the METS describes whose record is no 2xx HTML page of the listing.
    pub described_not_listed: u64,
}

/// Writes `listing` to `out`, the `described` ones first.
pub(crate) fn write_pages(
    listing: &Pages,
    described: &[Described],
    out: &mut dyn Write,
) -> io::Result<PageTally> {
    let at = |e: &PageEntry| (e.place.file.clone(), e.place.offset.unwrap_or(u64::MAX));
    let mut first: Vec<Option<PageEntry>> = vec![None; described.len()];
    let mut wanted: std::collections::HashMap<(String, u64), Vec<usize>> = Default::default();
    for (i, d) in described.iter().enumerate() {
        wanted.entry((d.container.clone(), d.offset)).or_default().push(i);
    }
    for e in listing.iter() {
        let e = e?;
        for &i in wanted.get(&at(&e)).into_iter().flatten() {
            first[i] = Some(e.clone());
        }
    }
    writeln!(out, "{HEADER}")?;
    let mut tally = PageTally::default();
    let mut done = HashSet::new();
    for (d, e) in described.iter().zip(first) {
        let Some(e) = e else {
            tally.described_not_listed += 1;
            continue;
        };
        if done.insert(at(&e)) {
            page_line(&e, Some(&d.label), out)?;
            tally.described += 1;
            tally.pages += 1;
        }
    }
    for e in listing.iter() {
        let e = e?;
        if !done.contains(&at(&e)) {
            page_line(&e, None, out)?;
            tally.pages += 1;
        }
    }
    Ok(tally)
}

/// One page: a stable id (from its URL and date), URL, date and title (the page's own, else
/// the curator's label).
fn page_line(e: &PageEntry, label: Option<&str>, out: &mut dyn Write) -> io::Result<()> {
    let id = Sha256::digest(format!("{} {}", e.url, e.captured).as_bytes());
    let mut page = serde_json::json!({
        "id": crate::formats::digest::hex(&id[..16]),
        // A harvested URL may hold spaces (ARC headers kept them); the index and the viewers
        // give them as %20.
        "url": e.url.replace(' ', "%20"),
        "ts": e.captured,
    });
    let title = e.title.as_deref().or(label).filter(|t| !t.is_empty());
    if let Some(t) = title {
        page["title"] = t.into();
    }
    serde_json::to_writer(&mut *out, &page)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::warc::writer::{RecordSpec, WarcWriter};
    use crate::index::members::{Stop, Walker};
    use crate::index::warc::EntryOptions;

    fn record(w: &mut WarcWriter<Vec<u8>>, n: usize, kind: &str, head: &str, body: &[u8]) {
        let spec = RecordSpec {
            warc_type: kind.into(),
            record_id: format!("<urn:uuid:{n}>"),
            date: format!("2024-01-02T03:04:{:02}Z", n % 60),
            target_uri: Some(format!("http://e.org/{n}")),
            content_type: Some(
                if head.is_empty() { "text/html" } else { "application/http" }.into(),
            ),
            payload_digest: true,
            ..RecordSpec::default()
        };
        w.write_record(&spec, &[head.as_bytes(), body].concat(), head.len() as u64).unwrap();
    }

    /// The pages read from the members the index's walker inflates are those `webaip pages`
    /// lists of the same WARC with its own reader: HTML 2xx responses and HTML resources, with
    /// their titles (charset from the HTTP header, a page longer than a MiB), nothing else.
    #[test]
    fn pages_from_inflated_members_are_those_the_listing_gives() {
        let mut w = WarcWriter::new(Vec::new(), 6);
        let html = |charset: &str| {
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset={charset}\r\n\r\n")
        };
        record(&mut w, 1, "response", &html("utf-8"), b"<title>Caf\xc3\xa9 &amp; co</title>");
        record(&mut w, 2, "response", &html("windows-1252"), b"<title>Caf\xe9</title>");
        let big = [&b"<title>Big</title>"[..], &vec![b'x'; 3 << 20]].concat();
        record(&mut w, 3, "response", &html("utf-8"), &big);
        let missing = "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n";
        record(&mut w, 4, "response", missing, b"<title>Gone</title>");
        let css = "HTTP/1.1 200 OK\r\nContent-Type: text/css\r\n\r\n";
        record(&mut w, 5, "response", css, b"p {}");
        record(&mut w, 6, "resource", "", b"<title>A resource</title>");
        record(&mut w, 7, "request", "", b"GET / HTTP/1.1\r\n\r\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.warc.gz");
        std::fs::write(&path, w.finish().unwrap()).unwrap();
        let listing = crate::pages::list::list_pages(&path, &Default::default()).unwrap();
        let want: Vec<PageEntry> = listing.entries.iter().map(Result::unwrap).collect();
        let name = want[0].place.file.clone();
        let mut got = new_pages();
        let mut walker = Walker::open(&path, "t.warc.gz", EntryOptions::default()).unwrap();
        let mut seen = |at, member: &[u8]| match read_member(member, at, &name).page {
            Some(p) => got.push(p),
            None => Ok(()),
        };
        let (_, stop) = walker.walk_seeing(0, u64::MAX, &mut |_| Ok(()), &mut seen).unwrap();
        assert_eq!(stop, Stop::End);
        got.finish();
        let got: Vec<PageEntry> = got.iter().map(Result::unwrap).collect();
        assert_eq!(got, want);
        let titles: Vec<_> = got.iter().map(|p| p.title.as_deref().unwrap_or("-")).collect();
        assert_eq!(titles, ["Café & co", "Café", "Big", "A resource"]);
    }
}
