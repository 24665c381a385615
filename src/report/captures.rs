//! The captures of a package as its access index lists them: counted by day, host, HTTP
//! status, declared MIME type and record size, in bounded memory whatever the index holds.
//!
//! The lines come from a CDXJ index given to the report, or from the package's containers
//! read as `webaip index` reads them (the same entries, so the same numbers). Only the
//! index's own fields are used: no payload is read.
//!
//! A capture is what the crawler fetched: a `response`, `revisit` or `resource` record whose
//! URL is `http`, `https`, `ftp` or `dns` (a Heritrix DNS lookup). The other lines are counted
//! apart, by URL scheme (an ARC's `filedesc://` header, `urn:` records) or, for those URLs, by
//! record type (a crawler's `metadata` records, which name the URL they describe):
//! their dates are when files were written, not when the site was captured. Read from the
//! containers, each record's type is known ([`CaptureRule::RecordType`]); an index states none,
//! so from one the rule is inferred ([`CaptureRule::Inferred`]).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::index::cdxj::IndexEntry;

/// Most distinct keys (hosts, MIME types, days) counted one by one; beyond, lines with new
/// keys are counted together and the distinct count is a lower bound.
pub(crate) const MAX_KEYS: usize = 100_000;
/// Most keys listed (the most frequent) in the report; the rest are summed as "others".
pub(crate) const TOP: usize = 25;

/// Upper bounds of the size classes, in bytes (the last class is open).
const SIZE_BOUNDS: [u64; 6] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
const SIZE_LABELS: [&str; 7] =
    ["< 1 kB", "1-10 kB", "10-100 kB", "100 kB-1 MB", "1-10 MB", "10-100 MB", ">= 100 MB"];

/// A count of lines by key, bounded.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyTally {
    counts: HashMap<String, u64>,
    /// Lines whose key was new after [`MAX_KEYS`] were counted.
    overflow: u64,
}

impl KeyTally {
    fn add(&mut self, key: &str) {
        if let Some(n) = self.counts.get_mut(key) {
            *n += 1;
        } else if self.counts.len() < MAX_KEYS {
            self.counts.insert(key.to_string(), 1);
        } else {
            self.overflow += 1;
        }
    }

    /// The most frequent keys (ties by key), the rest summed.
    fn ranked(&self) -> Ranked {
        let mut all: Vec<(&String, &u64)> = self.counts.iter().collect();
        all.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let top = all.iter().take(TOP).map(|(k, n)| Count { key: (*k).clone(), count: **n });
        let others: u64 = all.iter().skip(TOP).map(|(_, n)| **n).sum::<u64>() + self.overflow;
        Ranked {
            top: top.collect(),
            others,
            distinct: self.counts.len() as u64,
            distinct_exact: self.overflow == 0,
        }
    }
}

/// One key and its count.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Count {
    /// The host, type, status or day.
    pub key: String,
    /// Lines with it.
    pub count: u64,
}

/// The most frequent keys of a tally.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Ranked {
    /// At most 25, most frequent first.
    pub top: Vec<Count>,
    /// Lines of every other key.
    pub others: u64,
    /// Distinct keys seen.
    pub distinct: u64,
    /// False when more keys were seen than are counted apart: `distinct` is a lower bound.
    pub distinct_exact: bool,
}

/// One class of record sizes.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SizeClass {
    /// "1-10 kB".
    pub label: &'static str,
    /// Records in it.
    pub count: u64,
    /// Their bytes in the containers.
    pub bytes: u64,
}

/// How captures were told from the other lines.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CaptureRule {
    /// By each record's `WARC-Type`, read with it from the containers: exact.
    RecordType,
    /// From an index, which states no record type: by URL scheme, and a line without an HTTP
    /// status whose MIME type is that of a crawler's metadata (`text/anvl`,
    /// `application/warc-fields`) taken for a metadata record. Inferred: a metadata record of
    /// another type is counted as a capture.
    Inferred,
}

/// MIME types of crawlers' metadata records (Heritrix writes `text/anvl`).
const METADATA_MIMES: [&str; 2] = ["text/anvl", "application/warc-fields"];

/// Where the lines were read from.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CaptureSource {
    /// CDXJ index files given to the report.
    Index {
        /// The files.
        files: Vec<String>,
    },
    /// The package's containers, read record by record (`webaip index`'s reading).
    Containers,
}

/// The captures counted.
#[derive(Debug, Clone, Serialize)]
pub struct Captures {
    /// Where the lines came from.
    pub source: CaptureSource,
    /// Index lines of this package's containers.
    pub lines: u64,
    /// Of them, captures (`response`, `revisit`, `resource` records of `http`, `https`, `ftp`,
    /// `dns` URLs); every count below is of captures.
    pub captures: u64,
    /// How captures were told from the other lines.
    pub rule: CaptureRule,
    /// The other lines, by URL scheme (`filedesc`, `urn`) or, for a capture's URL, record
    /// type (`metadata`).
    pub other_records: Ranked,
    /// Of them, with an HTTP status (responses and revisits of HTTP captures).
    pub with_status: u64,
    /// Of them, revisits (`warc/revisit`).
    pub revisits: u64,
    /// Earliest capture date (14 digits).
    pub first: Option<String>,
    /// Latest capture date (14 digits).
    pub last: Option<String>,
    /// Lines per capture day (`YYYY-MM-DD`), in date order.
    pub by_day: Vec<Count>,
    /// Lines whose date is no 14-digit timestamp.
    pub undated: u64,
    /// Dated lines of days past the 100,000th distinct one: a hostile index is bounded, not
    /// charted.
    pub days_not_charted: u64,
    /// By host (the URL's host name, lower case; `dns:` lines by the name looked up).
    pub hosts: Ranked,
    /// By HTTP status (lines with one).
    pub statuses: Vec<Count>,
    /// By declared MIME type (`(none)` when the record states none).
    pub mime_types: Ranked,
    /// By record size in the container.
    pub sizes: Vec<SizeClass>,
    /// Sum of the records' lengths in the containers.
    pub bytes: u64,
    /// Largest record.
    pub largest: u64,
    /// Lines naming a file that is not one of this package's containers (not counted).
    pub other_files: u64,
    /// Containers of the package that no line names (the index is not of this package, or
    /// not of all of it): the counts are partial when any.
    pub containers_without_lines: Vec<String>,
    /// Lines that name a record beyond the end of its container (an index of other bytes):
    /// the counts do not describe this package when any.
    pub beyond_end: u64,
    /// Containers whose lines' lengths add up to more than the container (lines counted
    /// twice: an index given twice, or indexes that overlap): the counts are partial.
    pub overlapping: Vec<String>,
    /// Containers that could not be read (to their end), each with why (naming the file and
    /// the offset): the counts hold what was read before, and are partial.
    pub not_read: Vec<String>,
}

/// Counts lines as they come.
#[derive(Debug)]
pub(crate) struct CaptureTally {
    source: CaptureSource,
    /// The package's containers and their sizes; lines of other files are not counted.
    containers: BTreeMap<String, ContainerSeen>,
    lines: u64,
    captures: u64,
    other_records: KeyTally,
    with_status: u64,
    revisits: u64,
    first: Option<String>,
    last: Option<String>,
    days: KeyTally,
    undated: u64,
    hosts: KeyTally,
    statuses: BTreeMap<String, u64>,
    mimes: KeyTally,
    sizes: [SizeClass; 7],
    bytes: u64,
    largest: u64,
    other_files: u64,
    beyond_end: u64,
    not_read: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct ContainerSeen {
    size: u64,
    lines: u64,
    /// Sum of the lines' lengths: more than the container's size when lines repeat.
    bytes: u64,
}

impl CaptureTally {
    /// A tally of the lines of `containers` (name as the index names it, size in bytes).
    pub(crate) fn new(source: CaptureSource, containers: &[(String, u64)]) -> CaptureTally {
        let sizes =
            std::array::from_fn(|i| SizeClass { label: SIZE_LABELS[i], count: 0, bytes: 0 });
        CaptureTally {
            source,
            containers: containers
                .iter()
                .map(|(n, size)| (n.clone(), ContainerSeen { size: *size, lines: 0, bytes: 0 }))
                .collect(),
            lines: 0,
            captures: 0,
            other_records: KeyTally::default(),
            with_status: 0,
            revisits: 0,
            first: None,
            last: None,
            days: KeyTally::default(),
            undated: 0,
            hosts: KeyTally::default(),
            statuses: BTreeMap::new(),
            mimes: KeyTally::default(),
            sizes,
            bytes: 0,
            largest: 0,
            other_files: 0,
            beyond_end: 0,
            not_read: Vec::new(),
        }
    }

    /// Notes a container that could not be read (to its end), and why.
    pub(crate) fn not_read(&mut self, why: String) {
        self.not_read.push(why);
    }

    /// Counts one line.
    pub(crate) fn add(&mut self, e: &IndexEntry) {
        let Some(seen) = self.containers.get_mut(&e.filename) else {
            self.other_files += 1;
            return;
        };
        seen.lines += 1;
        seen.bytes = seen.bytes.saturating_add(e.length);
        if e.offset.saturating_add(e.length) > seen.size {
            self.beyond_end += 1;
        }
        self.lines += 1;
        match line_kind(e) {
            LineKind::Capture => self.captures += 1,
            LineKind::Other(scheme) => return self.other_records.add(&scheme),
        }
        self.count_date(&e.timestamp);
        self.hosts.add(&host_of(&e.url));
        let mime = e.mime.as_deref().unwrap_or("(none)");
        self.revisits += u64::from(mime == "warc/revisit");
        self.mimes.add(mime);
        if let Some(status) = &e.status {
            self.with_status += 1;
            // Statuses are three digits; anything else is counted under one key, bounded.
            let key = if status.len() == 3 && status.bytes().all(|b| b.is_ascii_digit()) {
                status.as_str()
            } else {
                "(other)"
            };
            *self.statuses.entry(key.to_string()).or_default() += 1;
        }
        self.count_size(e.length);
    }

    fn count_date(&mut self, ts: &str) {
        if ts.len() != 14 || !ts.bytes().all(|b| b.is_ascii_digit()) {
            self.undated += 1;
            return;
        }
        if self.first.as_deref().is_none_or(|f| ts < f) {
            self.first = Some(ts.to_string());
        }
        if self.last.as_deref().is_none_or(|l| ts > l) {
            self.last = Some(ts.to_string());
        }
        self.days.add(&format!("{}-{}-{}", &ts[..4], &ts[4..6], &ts[6..8]));
    }

    fn count_size(&mut self, length: u64) {
        let class = SIZE_BOUNDS.iter().position(|b| length < *b).unwrap_or(SIZE_BOUNDS.len());
        // Saturating: lengths that add up past 2^64 are lines beyond their containers or
        // counted twice, which make the counts partial already.
        self.sizes[class].count += 1;
        self.sizes[class].bytes = self.sizes[class].bytes.saturating_add(length);
        self.bytes = self.bytes.saturating_add(length);
        self.largest = self.largest.max(length);
    }

    /// The counts.
    pub(crate) fn finish(self) -> Captures {
        let mut by_day: Vec<Count> =
            self.days.counts.iter().map(|(k, n)| Count { key: k.clone(), count: *n }).collect();
        by_day.sort_by(|a, b| a.key.cmp(&b.key));
        let without: Vec<String> =
            self.containers.iter().filter(|(_, s)| s.lines == 0).map(|(n, _)| n.clone()).collect();
        let overlapping: Vec<String> = self
            .containers
            .iter()
            .filter(|(_, s)| s.bytes > s.size)
            .map(|(n, _)| n.clone())
            .collect();
        let rule = match &self.source {
            CaptureSource::Containers => CaptureRule::RecordType,
            CaptureSource::Index { .. } => CaptureRule::Inferred,
        };
        Captures {
            source: self.source,
            lines: self.lines,
            captures: self.captures,
            rule,
            other_records: self.other_records.ranked(),
            with_status: self.with_status,
            revisits: self.revisits,
            first: self.first,
            last: self.last,
            by_day,
            undated: self.undated,
            days_not_charted: self.days.overflow,
            hosts: self.hosts.ranked(),
            statuses: self.statuses.into_iter().map(|(key, count)| Count { key, count }).collect(),
            mime_types: self.mimes.ranked(),
            sizes: self.sizes.to_vec(),
            bytes: self.bytes,
            largest: self.largest,
            other_files: self.other_files,
            containers_without_lines: without,
            beyond_end: self.beyond_end,
            overlapping,
            not_read: self.not_read,
        }
    }
}

impl Captures {
    /// True when the counts may not describe the whole package: a container without lines
    /// or not read to its end, lines beyond a container's end or counted twice.
    pub fn partial(&self) -> bool {
        !self.containers_without_lines.is_empty()
            || self.beyond_end > 0
            || !self.overlapping.is_empty()
            || !self.not_read.is_empty()
    }
}

/// What an index line is, by its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// A capture: an `http`, `https`, `ftp` or `dns` URL.
    Capture,
    /// Another record, by its URL's scheme (lower case; `(none)` without one).
    Other(String),
}

/// What the line `e` is. A line of a URL no crawler fetches is another record, by scheme
/// (an ARC's `filedesc://` header is one whatever type its migration gave it, so that an index
/// and the containers key it alike); of a fetched URL, a capture by its record's type when
/// known ([`CaptureRule::RecordType`]), else as [`CaptureRule::Inferred`] says.
pub(crate) fn line_kind(e: &IndexEntry) -> LineKind {
    let by_scheme = kind_by_scheme(&e.url);
    if by_scheme != LineKind::Capture {
        return by_scheme;
    }
    let metadata_mime = e.mime.as_deref().is_some_and(|m| METADATA_MIMES.contains(&m));
    match e.record_type.as_deref() {
        Some("response" | "revisit" | "resource") => LineKind::Capture,
        Some(other) => LineKind::Other(other.to_string()),
        None if e.status.is_none() && metadata_mime => LineKind::Other("metadata".into()),
        None => LineKind::Capture,
    }
}

/// A capture when `url` is `http`, `https`, `ftp` or `dns`; else another record, by scheme.
fn kind_by_scheme(url: &str) -> LineKind {
    let scheme = crate::layout::uri_scheme(url).map(str::to_ascii_lowercase);
    match scheme.as_deref() {
        Some("http" | "https" | "ftp" | "dns") => LineKind::Capture,
        Some(other) => LineKind::Other(other.to_string()),
        None => LineKind::Other("(none)".into()),
    }
}

/// The host of a URL as a report groups captures: the lower-cased host name of
/// `scheme://[user@]host[:port]/...`, the name of a `dns:` lookup, else `(no host)`.
pub(crate) fn host_of(url: &str) -> String {
    if let Some(name) = url.strip_prefix("dns:") {
        return name.trim().to_ascii_lowercase();
    }
    let Some((_, rest)) = url.split_once("://") else { return "(no host)".into() };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() { "(no host)".into() } else { host.to_ascii_lowercase() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        url: &str,
        ts: &str,
        mime: Option<&str>,
        status: Option<&str>,
        len: u64,
    ) -> IndexEntry {
        IndexEntry {
            url: url.into(),
            timestamp: ts.into(),
            mime: mime.map(str::to_string),
            status: status.map(str::to_string),
            length: len,
            offset: 0,
            filename: "content/a.warc.gz".into(),
            ..Default::default()
        }
    }

    #[test]
    fn hosts_are_named_as_url_parsers_name_them() {
        assert_eq!(host_of("http://User@WWW.Example.org:8080/a?b"), "www.example.org");
        assert_eq!(host_of("https://[::1]:443/"), "::1");
        assert_eq!(host_of("dns:Example.ORG"), "example.org");
        assert_eq!(host_of("filedesc://x.arc"), "x.arc");
        assert_eq!(kind_by_scheme("HTTPS://a/"), LineKind::Capture);
        assert_eq!(kind_by_scheme("dns:a"), LineKind::Capture);
        assert_eq!(kind_by_scheme("metadata://webaip/x"), LineKind::Other("metadata".into()));
        assert_eq!(kind_by_scheme("/relative"), LineKind::Other("(none)".into()));
        assert_eq!(host_of("urn:x"), "(no host)");
        assert_eq!(host_of("http:///path"), "(no host)");
    }

    /// Read from the containers, a line is a capture by its record's type (a Heritrix
    /// metadata record names the http URL it describes); from an index, a line without status
    /// of a crawler's metadata MIME type is taken for a metadata record.
    #[test]
    fn captures_are_told_by_record_type_or_inferred_from_an_index() {
        let typed = |t: &str, url: &str| IndexEntry {
            record_type: Some(t.into()),
            ..entry(url, "20240101000000", Some("text/anvl"), None, 1)
        };
        assert_eq!(line_kind(&typed("metadata", "http://a/")), LineKind::Other("metadata".into()));
        assert_eq!(line_kind(&typed("request", "http://a/")), LineKind::Other("request".into()));
        assert_eq!(line_kind(&typed("resource", "ftp://a/f")), LineKind::Capture);
        assert_eq!(line_kind(&typed("response", "dns:a")), LineKind::Capture);
        let filedesc = typed("response", "filedesc://x.arc");
        assert_eq!(line_kind(&filedesc), LineKind::Other("filedesc".into()));
        let anvl = entry("http://a/", "20240101000000", Some("text/anvl"), None, 1);
        assert_eq!(line_kind(&anvl), LineKind::Other("metadata".into()));
        let page = entry("http://a/", "20240101000000", Some("text/anvl"), Some("200"), 1);
        assert_eq!(line_kind(&page), LineKind::Capture);
        let html = entry("http://a/", "20240101000000", Some("text/html"), None, 1);
        assert_eq!(line_kind(&html), LineKind::Capture);
    }

    #[test]
    fn lines_are_counted_by_day_status_type_and_size() {
        let containers = [("content/a.warc.gz".to_string(), 10_000_000)];
        let mut t = CaptureTally::new(CaptureSource::Containers, &containers);
        t.add(&entry("http://a/", "20240101120000", Some("text/html"), Some("200"), 500));
        t.add(&entry("http://a/x", "20240102120000", Some("warc/revisit"), Some("200"), 5_000));
        t.add(&entry("http://b/", "2024", None, Some("4044"), 2_000_000));
        let mut other = entry("http://c/", "20240101000000", None, None, 1);
        other.filename = "content/other.warc.gz".into();
        t.add(&other);
        t.add(&entry("filedesc://x.arc", "20990101000000", Some("text/plain"), None, 7));
        let c = t.finish();
        assert_eq!(
            (c.lines, c.captures, c.with_status, c.revisits, c.other_files, c.undated),
            (4, 3, 3, 1, 1, 1)
        );
        assert_eq!(c.other_records.top, vec![Count { key: "filedesc".into(), count: 1 }]);
        assert_eq!(c.by_day.iter().map(|d| d.count).collect::<Vec<_>>(), vec![1, 1]);
        assert_eq!(
            c.statuses,
            vec![Count { key: "(other)".into(), count: 1 }, Count { key: "200".into(), count: 2 }]
        );
        assert_eq!(c.mime_types.top[0].count, 1);
        assert_eq!(c.sizes[0].count, 1);
        assert_eq!(c.sizes[1].count, 1);
        assert_eq!(c.sizes[4].bytes, 2_000_000);
        assert_eq!(
            (c.first.as_deref(), c.last.as_deref()),
            (Some("20240101120000"), Some("20240102120000"))
        );
        assert!(!c.partial());
    }

    #[test]
    fn an_index_of_other_bytes_makes_the_counts_partial() {
        let containers =
            [("content/a.warc.gz".to_string(), 100), ("content/b.warc.gz".to_string(), 5)];
        let mut t = CaptureTally::new(CaptureSource::Containers, &containers);
        t.add(&entry("http://a/", "20240101120000", None, None, 500));
        let c = t.finish();
        assert_eq!(c.beyond_end, 1);
        assert_eq!(c.containers_without_lines, vec!["content/b.warc.gz".to_string()]);
        assert!(c.partial());
        let mut t = CaptureTally::new(CaptureSource::Containers, &containers[..1]);
        for _ in 0..2 {
            t.add(&entry("http://a/", "20240101120000", None, None, 60));
        }
        assert_eq!(
            t.finish().overlapping,
            vec!["content/a.warc.gz".to_string()],
            "a line given twice"
        );
    }

    /// More schemes of other records than are listed keep their sum ("all others"); days
    /// past the bound are counted apart from undated lines; lengths that add up past 2^64
    /// stay at the largest sum (and the lines beyond their container make the counts partial).
    #[test]
    fn bounded_counts_add_up_and_never_wrap() {
        let containers = [("content/a.warc.gz".to_string(), 1000)];
        let mut t = CaptureTally::new(CaptureSource::Index { files: vec![] }, &containers);
        for i in 0..TOP + 5 {
            t.add(&entry(&format!("s{i}:x"), "20240101000000", None, None, 1));
        }
        for day in 0..MAX_KEYS as u64 + 3 {
            let ts = format!("{:08}120000", 10_000_000 + day);
            t.add(&entry("http://a/", &ts, None, None, 1));
        }
        t.add(&entry("http://a/", "2024", None, None, u64::MAX));
        t.add(&entry("http://a/", "2024", None, None, u64::MAX));
        let c = t.finish();
        let o = &c.other_records;
        assert_eq!(o.top.iter().map(|c| c.count).sum::<u64>() + o.others, TOP as u64 + 5);
        assert_eq!(o.others, 5);
        assert_eq!((c.undated, c.days_not_charted), (2, 3));
        assert_eq!(c.bytes, u64::MAX);
        assert_eq!(c.sizes[6].bytes, u64::MAX);
        assert!(c.partial());
    }

    #[test]
    fn keys_beyond_the_bound_are_counted_together() {
        let mut k = KeyTally::default();
        for i in 0..MAX_KEYS + 3 {
            k.add(&i.to_string());
        }
        k.add("0");
        let r = k.ranked();
        assert_eq!(r.distinct, MAX_KEYS as u64);
        assert!(!r.distinct_exact);
        assert_eq!(r.top[0], Count { key: "0".into(), count: 2 });
        assert_eq!(r.top.iter().map(|c| c.count).sum::<u64>() + r.others, MAX_KEYS as u64 + 4);
    }
}
