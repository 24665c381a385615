//! `pages/pages.jsonl`: the pages a WACZ viewer offers. The webpages a curator described come
//! first, in the order the METS gives them, then every other HTML page (2xx) of the package
//! by URL and date, each with its `<title>` as a browser shows it.

use std::collections::HashSet;
use std::io::{self, Write};

use sha2::{Digest, Sha256};

use super::plan::Described;
use crate::pages::list::{PageEntry, PageListing};

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

/// Writes the pages of `listing` to `out`, the `described` ones first.
pub(crate) fn write_pages(
    listing: &PageListing,
    described: &[Described],
    out: &mut dyn Write,
) -> io::Result<PageTally> {
    let at = |e: &PageEntry| (e.place.file.clone(), e.place.offset.unwrap_or(u64::MAX));
    let mut first: Vec<Option<PageEntry>> = vec![None; described.len()];
    let mut wanted: std::collections::HashMap<(String, u64), Vec<usize>> = Default::default();
    for (i, d) in described.iter().enumerate() {
        wanted.entry((d.container.clone(), d.offset)).or_default().push(i);
    }
    for e in listing.entries.iter() {
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
    for e in listing.entries.iter() {
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
