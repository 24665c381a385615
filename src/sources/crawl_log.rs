//! Heritrix `crawl.log`: one line per URI attempted (INPUT_FORMATS.md §2.2).
//!
//! The log is read as bytes (real logs hold non-UTF-8), one line at a time. What is kept is
//! small per line: a 64-bit hash of each fetched URI with an index into the MIME types seen,
//! so a log of ten million lines costs about 120 MB at most, not the URLs themselves.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io;
use std::path::Path;

use chrono::{DateTime, Utc};

/// A 64-bit hash of a URI, for set membership.
pub(crate) fn uri_hash(uri: &str) -> u64 {
    let mut h = DefaultHasher::new();
    uri.hash(&mut h);
    h.finish()
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CrawlLogLine {
    /// When the line was logged.
    pub timestamp: Option<DateTime<Utc>>,
    /// Fetch status (HTTP code, 1 for DNS success, negative for failures).
    pub status: i64,
    /// The URI.
    pub uri: String,
    /// The MIME type (`no-type`, `-` when unknown).
    pub mime: String,
}

impl CrawlLogLine {
    /// True when the crawler wrote a record for this line (HTTP response or DNS success).
    pub(crate) fn fetched(&self) -> bool {
        self.status >= 100 || self.status == 1
    }
}

/// Parses one line. The URI may contain spaces in old 1.x logs, so fields are anchored at
/// both ends: timestamp, status, size first; then, from the right, annotations, source tag,
/// digest, fetch time, thread, MIME, via and hop path.
pub(crate) fn parse_line(line: &str) -> Option<CrawlLogLine> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 11 {
        return None;
    }
    let timestamp = crate::formats::dates::parse_rfc3339(fields[0]).ok();
    let status = fields[1].parse().ok()?;
    // From the right: annotations, source tag, digest, fetch, thread, mime, via, hop path.
    let right = 8;
    let uri_end = fields.len().checked_sub(right)?;
    if uri_end <= 3 {
        return None;
    }
    let uri = fields[3..uri_end].join(" ");
    let mime = fields[fields.len() - 6].to_string();
    Some(CrawlLogLine { timestamp, status, uri, mime })
}

/// What the crawl log says, kept compactly.
#[derive(Debug, Default)]
pub(crate) struct CrawlLog {
    /// Lines read.
    pub lines: u64,
    /// Lines that did not parse.
    pub unparsed: u64,
    /// Fetched URIs (hash -> index into `mimes`).
    fetched: HashMap<u64, u32>,
    mimes: Vec<String>,
    /// First and last timestamps.
    pub first: Option<DateTime<Utc>>,
    /// Last timestamp.
    pub last: Option<DateTime<Utc>>,
}

impl CrawlLog {
    /// Reads a crawl log.
    pub(crate) fn read(path: &Path) -> io::Result<CrawlLog> {
        let mut log = CrawlLog::default();
        let mut index: HashMap<String, u32> = HashMap::new();
        for_each_line(path, |line| {
            log.lines += 1;
            let Some(l) = parse_line(line) else {
                log.unparsed += 1;
                return;
            };
            if let Some(t) = l.timestamp {
                log.first = Some(log.first.map_or(t, |f| f.min(t)));
                log.last = Some(log.last.map_or(t, |f| f.max(t)));
            }
            if l.fetched() {
                let next = index.len() as u32;
                let mime = *index.entry(l.mime.clone()).or_insert_with(|| {
                    log.mimes.push(l.mime.clone());
                    next
                });
                log.fetched.insert(uri_hash(&l.uri), mime);
            }
        })?;
        Ok(log)
    }

    /// Number of distinct fetched URIs.
    pub(crate) fn fetched_count(&self) -> usize {
        self.fetched.len()
    }

    /// True when the log says `uri` was fetched.
    pub(crate) fn was_fetched(&self, uri: &str) -> bool {
        self.fetched.contains_key(&uri_hash(uri))
    }

    /// Fetched URIs of the log that are not in `records` (hashes): count and the first
    /// `max` examples (a second pass over the log).
    pub(crate) fn missing_from(
        &self,
        path: &Path,
        records: &HashSet<u64>,
        max: usize,
    ) -> io::Result<(u64, Vec<String>)> {
        let mut seen = HashSet::new();
        let mut count = 0;
        let mut examples = Vec::new();
        for_each_line(path, |line| {
            if let Some(l) = parse_line(line).filter(CrawlLogLine::fetched) {
                let h = uri_hash(&l.uri);
                if !records.contains(&h) && seen.insert(h) {
                    count += 1;
                    if examples.len() < max {
                        examples.push(l.uri);
                    }
                }
            }
        })?;
        Ok((count, examples))
    }
}

/// Reads the log line by line: only a regular file (no link, no FIFO), and a line longer than
/// [`super::MAX_LINE`] counts as one unparsed line instead of growing a buffer.
fn for_each_line(path: &Path, mut f: impl FnMut(&str)) -> io::Result<()> {
    let file = crate::layout::open_regular(path).map_err(io::Error::other)?;
    super::for_each_bounded_line(file, |line| f(String::from_utf8_lossy(line).trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_padded_lines_and_uris_with_spaces() {
        let l = parse_line("2006-05-03T10:15:03.870Z   200       4310 http://www.example.org/ - - text/html #012 20060503101503401+420 sha1:H6LV - -").unwrap();
        assert_eq!(
            (l.status, l.uri.as_str(), l.mime.as_str()),
            (200, "http://www.example.org/", "text/html")
        );
        assert!(l.fetched());
        let l = parse_line("2006-05-03T10:15:05.002Z   404        208 http://e.org/a b.gif E http://e.org/ text/html #004 20060503101504801+190 sha1:2QAB - 2t").unwrap();
        assert_eq!(l.uri, "http://e.org/a b.gif");
        let l = parse_line("2006-05-03T10:15:05.002Z   -61          - http://e.org/x LE http://e.org/ no-type #004 - - - -").unwrap();
        assert!(!l.fetched());
        assert!(parse_line("garbage").is_none());
    }
}
