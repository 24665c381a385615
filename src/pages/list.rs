//! `webaip pages`: the HTML pages of a harvest, with their titles, sizes and capture dates, so a
//! curator can choose what to describe in `[[page]]` tables.
//!
//! A package is read through its METS: the WARC containers of the content group, by names
//! confined to the package. A source is read as packaging reads it: ARC records mapped as the
//! migration maps them (URL, date, payload offset and type), WARC records as they are copied,
//! mirror and PANDAS files with the URL and capture time the source module reconstructs. So the
//! URL and date listed are those of the WARC record packaging writes, which is what a
//! `[[page]]`'s `url` and `captured` are matched against.
//!
//! Records are streamed: nothing of a payload is held beyond [`TITLE_WINDOW`] bytes.

use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::sorted::SortedRuns;

use super::{TITLE_WINDOW, is_html, payload_title};
use crate::capture::Quirk;
use crate::formats::arc::ArcError;
use crate::formats::http;
use crate::layout::{self, ConfineError, NameError};
use crate::profile::Profile;
use crate::sources::capture::{CaptureSource, NOT_A_CAPTURE};
use crate::sources::mirror::MirrorError;
use crate::sources::open::{self, CaptureHarvest, Instances, OpenError, Opened, ReadOptions};
use crate::sources::pandas::{self, Instance};
use crate::sources::unzip;
use crate::sources::warc_captures::WarcCaptures;
use crate::sources::{ACCEPTED_SHAPES, Archive, ArchiveKind, SourceError, archive_kind, path_text};

/// The name of a package's METS document.
pub(crate) const METS_NAME: &str = layout::METS;

/// How to list.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// List HTML captures whatever their HTTP status (by default only 2xx).
    pub all_statuses: bool,
    /// How a source is read, as `package` reads it (`--timezone`, `--url-prefix`,
    /// `--max-zip-expansion`, `--nedlib-date`).
    pub reading: ReadOptions,
    /// The capture date for what records none (as `package --capture-date`).
    pub capture_date: Option<DateTime<Utc>>,
}

/// Where a capture is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The container (its name in the package), the ARC/WARC file, or the mirror file (its
    /// path in the mirror).
    pub file: String,
    /// Offset of the record (of its gzip member in a compressed file); none for a mirror file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Offset of the record inside its gzip member, when the member holds several records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_in_member: Option<u64>,
}

/// One captured HTML page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageEntry {
    /// The URL as harvested: the `WARC-Target-URI` of its record.
    pub url: String,
    /// When it was captured: the record's `WARC-Date` (RFC 3339).
    pub captured: String,
    /// Payload size in bytes (the HTTP entity as received, for an HTTP response).
    pub size: u64,
    /// The HTTP status, for an HTTP response.
    pub status: Option<u16>,
    /// The media type of the payload.
    pub mime: String,
    /// The page's `<title>` as a browser shows it; none when it has none within the first
    /// `TITLE_WINDOW` bytes.
    pub title: Option<String>,
    /// Where the capture is.
    pub place: Place,
}

/// What was counted on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PageCounts {
    /// Pages listed.
    pub pages: u64,
    /// Distinct URLs among them.
    pub urls: u64,
    /// URL captures read (`response` and `resource` records, mirror files), HTML or not.
    pub captures: u64,
    /// HTML captures left out for their HTTP status (not 2xx), without `all_statuses`.
    pub other_status: u64,
    /// Oddities the sources reported ([`PageListing::quirks`]).
    pub quirks: u64,
    /// Files of a capture source refused (links, FIFOs, paths over `PATH_MAX`, files over a
    /// bound: each a quirk too): the listing is then one with findings (exit 1), as `package`.
    pub refused: u64,
}

/// What was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HarvestKind {
    /// A package (its METS and content containers).
    Package,
    /// A Heritrix job directory or ARC/WARC files.
    Archives,
    /// PANDAS instances.
    Pandas,
    /// A wget or HTTrack mirror (directory or `.zip`).
    Mirror,
    /// A harvest read as captures (NEDLIB, Kulturarw3).
    Captures,
}

/// The pages of a harvest.
#[derive(Debug, Serialize)]
pub struct PageListing {
    /// The path listed.
    pub path: String,
    /// What it is.
    pub kind: HarvestKind,
    /// The pages, by URL then capture date (merged from sorted runs as they are read).
    pub entries: SortedRuns<PageEntry>,
    /// Counts.
    pub counts: PageCounts,
    /// The oddities the sources reported (the first 100; [`PageCounts::quirks`] counts them
    /// all), with file and offset or line: a record with an unreadable date, an ARC anomaly, a
    /// refused mirror file. What is no capture by design (an ARC's version block) is not one.
    pub quirks: Vec<Quirk>,
}

/// Why a harvest cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// A capture source could not be read.
    #[error(transparent)]
    Capture(#[from] crate::sources::capture::CaptureError),
    /// Neither a package nor a source.
    #[error(
        "{}: neither a package (a directory holding {METS_NAME}, or a METS file) nor a source: {}; accepted: a package, or {shapes}",
        path.display(),
        cause.reason(path),
        shapes = ACCEPTED_SHAPES.trim_start_matches("accepted: ")
    )]
    NotAHarvest {
        /// The path given.
        path: PathBuf,
        /// Why it is not a source (said in the message, so not its source: the CLI would say
        /// it twice).
        cause: NotASource,
    },
    /// The METS cannot be read (not well-formed, or something no METS holds).
    #[error("{}: {source}", path.display())]
    Mets {
        /// The METS document.
        path: PathBuf,
        /// Where and why the reader stopped.
        #[source]
        source: crate::mets::reader::MetsError,
    },
    /// The document reads, but its root is no `<mets>` element.
    #[error("{}: not a METS document (no <mets> element)", path.display())]
    NotMets {
        /// The document.
        path: PathBuf,
    },
    /// A container name in the METS leaves the package.
    #[error("{}: container {name:?}: {source}", mets.display())]
    Name {
        /// The METS document.
        mets: PathBuf,
        /// The name as written.
        name: String,
        /// Why it is refused.
        #[source]
        source: NameError,
    },
    /// A container cannot be opened (missing, a link, not a regular file). Its message holds
    /// the cause already, so it is not chained again.
    #[error("{0}")]
    Open(ConfineError),
    /// An ARC file cannot be read further (the message holds the cause, not chained again).
    #[error("{0}")]
    Arc(ArcError),
    /// A mirror or its `.zip` cannot be read.
    #[error(transparent)]
    Mirror(#[from] MirrorError),
    /// A PANDAS instance cannot be read.
    #[error(transparent)]
    Pandas(#[from] crate::sources::pandas::PandasError),
    /// A file cannot be read.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// Why a path given to `pages` is not a source.
#[derive(Debug, thiserror::Error)]
pub enum NotASource {
    /// Not a shape `package` takes.
    #[error(transparent)]
    Source(SourceError),
    /// A `.zip` holding no mirror.
    #[error(transparent)]
    Mirror(MirrorError),
}

impl NotASource {
    /// What is wrong, for the message that names `given` and the accepted shapes itself.
    fn reason(&self, given: &Path) -> String {
        match self {
            NotASource::Source(e) => e.reason(given),
            NotASource::Mirror(MirrorError::NotAMirror(_)) => {
                "the zip holds no wget or HTTrack mirror (<host>/ directories)".into()
            }
            NotASource::Mirror(e) => e.to_string(),
        }
    }
}

impl From<ConfineError> for ListError {
    fn from(e: ConfineError) -> Self {
        ListError::Open(e)
    }
}

impl From<ArcError> for ListError {
    fn from(e: ArcError) -> Self {
        ListError::Arc(e)
    }
}

/// A harvest resolved to what will be read, before reading it (so a caller can show progress
/// over [`Harvest::bytes`]).
#[derive(Debug)]
pub struct Harvest {
    path: PathBuf,
    what: What,
    // A mirror's `.zip`, unpacked; removed when the harvest is dropped.
    _unpacked: Option<unzip::Unpacked>,
}

#[derive(Debug)]
enum What {
    Package {
        root: PathBuf,
        containers: Vec<(String, u64)>,
        remote: Remote,
    },
    Archives(Vec<(Archive, u64)>),
    Mirror(Box<Instance>),
    /// A PANDAS title's instances (or one instance), each read when it is listed: read all
    /// first, each held its file list open (memory and a file handle an instance).
    Pandas(Instances),
    Captures(CaptureHarvest),
}

/// Lists the HTML pages of a package or a source.
pub fn list_pages(path: &Path, opts: &ListOptions) -> Result<PageListing, ListError> {
    resolve(path, opts)?.list(opts, &|_| {})
}

/// Recognises `path`: a package (a directory holding `METS.xml`, or a METS file), else any
/// source [`crate::sources::detect`] accepts, opened as packaging opens it.
pub fn resolve(path: &Path, opts: &ListOptions) -> Result<Harvest, ListError> {
    if let Some(mets) = package_mets(path) {
        return Ok(Harvest { path: path.to_path_buf(), what: package(&mets)?, _unpacked: None });
    }
    // Only what listing reads of each file is written: its first TITLE_WINDOW bytes.
    let work = std::env::temp_dir();
    let unzip = open::Unzip { dir: &work, heads: Some(TITLE_WINDOW as u64) };
    let opened = open::open(&[path.to_path_buf()], &opts.reading, opts.capture_date, unzip)
        .map_err(|e| not_a_harvest(path, e))?;
    let (what, unpacked) = match opened {
        Opened::Pandas(instances) => (What::Pandas(instances), None),
        Opened::Mirror(m) => (What::Mirror(Box::new(m.mirror.instance)), m.unpacked),
        Opened::Captures(harvest) => (What::Captures(harvest), None),
        Opened::Archives(source) => (What::Archives(sized(source.archives)?), None),
    };
    Ok(Harvest { path: path.to_path_buf(), what, _unpacked: unpacked })
}

/// The METS of a package at `path`: a directory's `METS.xml`, or a `.xml` file given.
fn package_mets(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        Some(path.join(METS_NAME)).filter(|m| std::fs::symlink_metadata(m).is_ok())
    } else {
        let xml = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml"));
        xml.then(|| path.to_path_buf())
    }
}

/// A package, by the content containers its METS lists (each confined to it, with its size).
fn package(mets: &Path) -> Result<What, ListError> {
    let root = mets.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut containers = Vec::new();
    let (local, remote) = content_containers(mets)?;
    for name in local {
        let size = layout::metadata_in(root, &name)?.len();
        containers.push((name, size));
    }
    Ok(What::Package { root: root.to_path_buf(), containers, remote })
}

/// Archives with their sizes (each a regular file).
fn sized(archives: Vec<Archive>) -> Result<Vec<(Archive, u64)>, ListError> {
    let mut out = Vec::with_capacity(archives.len());
    for a in archives {
        let size = layout::regular_metadata(&a.path)?.len();
        out.push((a, size));
    }
    Ok(out)
}

/// An opening error as listing says it: a path of no shape (or a zip of no mirror) is neither
/// a package nor a source; a mirror that cannot be read is a mirror's error.
fn not_a_harvest(path: &Path, e: OpenError) -> ListError {
    let not_source = |cause| ListError::NotAHarvest { path: path.to_path_buf(), cause };
    match e {
        OpenError::Source(e) => not_source(NotASource::Source(e)),
        OpenError::Unzip(e @ MirrorError::NotAMirror(_)) => not_source(NotASource::Mirror(e)),
        OpenError::Unzip(e) | OpenError::Mirror(e) => ListError::Mirror(e),
        OpenError::UnzipDir { path, source } => ListError::Io { path, source },
    }
}

/// Lists the captures of a mirror read into an instance.
fn list_instance(
    inst: &Instance,
    out: &mut Collector,
    progress: &dyn Fn(u64),
) -> Result<(), ListError> {
    let mut captures =
        pandas::InstanceCaptures::new(inst).map_err(crate::sources::capture::CaptureError::from)?;
    list_captures(&mut captures, out, progress)
}

impl Harvest {
    /// What the harvest is.
    pub fn kind(&self) -> HarvestKind {
        match &self.what {
            What::Package { .. } => HarvestKind::Package,
            What::Archives(_) => HarvestKind::Archives,
            What::Mirror(_) => HarvestKind::Mirror,
            What::Pandas(_) => HarvestKind::Pandas,
            What::Captures(..) => HarvestKind::Captures,
        }
    }

    /// Bytes that will be read through (containers, archives, mirror files).
    pub fn bytes(&self) -> u64 {
        match &self.what {
            What::Package { containers, .. } => containers.iter().map(|c| c.1).sum(),
            What::Archives(a) => a.iter().map(|a| a.1).sum(),
            // Only the progress bar's length: a list that cannot be read fails the listing.
            What::Mirror(instance) => instance.files.total_size().unwrap_or(0),
            // Not known before the walk; the bar counts up.
            What::Captures(..) | What::Pandas(_) => 0,
        }
    }

    /// Reads the harvest; `progress` is told the bytes of each file once it is read.
    pub fn list(
        &self,
        opts: &ListOptions,
        progress: &dyn Fn(u64),
    ) -> Result<PageListing, ListError> {
        let mut out = Collector {
            opts,
            entries: SortedRuns::new(listing_order, entry_bytes),
            counts: PageCounts::default(),
            quirks: Vec::new(),
        };
        match &self.what {
            What::Package { root, containers, remote } => {
                list_package(root, containers, remote, &mut out, progress)?
            }
            What::Archives(archives) => list_archives(archives, &mut out, progress)?,
            What::Mirror(instance) => list_instance(instance, &mut out, progress)?,
            What::Pandas(instances) => {
                for dir in &instances.dirs {
                    let inst = instances.read(dir).map_err(ListError::Pandas)?;
                    list_instance(&inst, &mut out, progress)?;
                }
            }
            What::Captures(harvest) => list_captures(&mut *harvest.open()?, &mut out, progress)?,
        }
        self.listing(out)
    }

    /// The listing of what `out` collected: entries merged, pages and URLs counted.
    fn listing(&self, out: Collector) -> Result<PageListing, ListError> {
        let mut entries = out.entries;
        entries.finish();
        let mut counts = out.counts;
        counts.pages = entries.len();
        let spill = |source| ListError::Io { path: std::env::temp_dir(), source };
        counts.urls = distinct_urls(&entries).map_err(spill)?;
        Ok(PageListing {
            path: path_text(&self.path),
            kind: self.kind(),
            entries,
            counts,
            quirks: out.quirks,
        })
    }
}

/// Lists a package's content containers; those kept outside it (by URL) are quirks.
fn list_package(
    root: &Path,
    containers: &[(String, u64)],
    remote: &Remote,
    out: &mut Collector,
    progress: &dyn Fn(u64),
) -> Result<(), ListError> {
    out.counts.quirks += remote.count;
    for href in &remote.listed {
        if out.quirks.len() < MAX_QUIRKS_LISTED {
            out.quirks.push(Quirk {
                detail: "its FLocat is a URL: the container is kept outside the package, not \
                         listed here"
                    .into(),
                file: href.clone(),
                kind: "container-outside-package".into(),
                line: None,
                offset: None,
            });
        }
    }
    for (name, size) in containers {
        let file = layout::open_in(root, name)?;
        let mut captures = WarcCaptures::from_file(file, &root.join(name), name.clone())?;
        list_captures(&mut captures, out, &|_| {})?;
        progress(*size);
    }
    Ok(())
}

/// Lists ARC files as the migration maps their records, WARC files as they are copied.
fn list_archives(
    archives: &[(Archive, u64)],
    out: &mut Collector,
    progress: &dyn Fn(u64),
) -> Result<(), ListError> {
    for (a, size) in archives {
        let name = path_text(&a.path);
        match a.kind {
            ArchiveKind::Warc => {
                list_captures(&mut WarcCaptures::open(&a.path, name)?, out, &|_| {})?
            }
            ArchiveKind::Arc => {
                let date = out.opts.capture_date;
                let mut captures =
                    crate::sources::arc_captures::ArcCaptures::open(&a.path, name, date)?;
                list_captures(&mut captures, out, &|_| {})?;
            }
        }
        progress(*size);
    }
    Ok(())
}

/// Content containers a METS locates by URL: kept outside the package, not listed.
#[derive(Debug, Default)]
struct Remote {
    /// The first [`MAX_QUIRKS_LISTED`] URLs.
    listed: Vec<String>,
    /// All of them.
    count: u64,
}

/// The names of the WARC containers in the METS's content group (as the profile the METS
/// names calls it), confined to the package; then the FLocats of that group that are URLs
/// (files kept elsewhere: [`layout::uri_scheme`]).
fn content_containers(mets: &Path) -> Result<(Vec<String>, Remote), ListError> {
    use crate::mets::listing::{Nested, read_listing};
    use crate::mets::reader::MetsReader;
    let file = layout::open_regular(mets)?;
    // Strict: a METS with a DOCTYPE, an entity reference or a NUL is not read further.
    let reader = MetsReader::strict(BufReader::with_capacity(64 * 1024, file));
    let listing = read_listing(reader, Nested::Skip)
        .map_err(|source| ListError::Mets { path: mets.to_path_buf(), source })?;
    let Some(root) = listing.root.filter(|r| r.is_mets) else {
        return Err(ListError::NotMets { path: mets.to_path_buf() });
    };
    let profile = root.profile.as_deref().and_then(Profile::by_uri);
    let content = profile.unwrap_or_else(Profile::default_profile).file_groups.content;
    let mut names = Vec::new();
    let mut remote = Remote::default();
    for f in listing.files.iter().filter(|f| f.groups.contains(&content)) {
        let Some(href) = f.href.as_deref() else { continue };
        if layout::uri_scheme(href).is_some() {
            remote.count += 1;
            if remote.listed.len() < MAX_QUIRKS_LISTED {
                remote.listed.push(href.to_string());
            }
            continue;
        }
        let name = layout::confined_name(href).map_err(|source| ListError::Name {
            mets: mets.to_path_buf(),
            name: href.to_string(),
            source,
        })?;
        let warc = f.mime.as_deref() == Some("application/warc")
            || archive_kind(Path::new(&name)) == Some(ArchiveKind::Warc);
        if warc && !names.contains(&name) {
            names.push(name);
        }
    }
    Ok((names, remote))
}

/// Quirks listed one by one; more are only counted.
const MAX_QUIRKS_LISTED: usize = 100;

/// Entries, counts and quirks as they are found.
struct Collector<'a> {
    opts: &'a ListOptions,
    entries: SortedRuns<PageEntry>,
    counts: PageCounts,
    quirks: Vec<Quirk>,
}

impl Collector<'_> {
    /// Counts a capture; true when it is to be listed (HTML, and 2xx unless all statuses).
    fn wants(&mut self, mime: &str, status: Option<u16>) -> bool {
        self.counts.captures += 1;
        if !is_html(mime) {
            return false;
        }
        let ok = status.is_none_or(|s| (200..300).contains(&s));
        if !ok && !self.opts.all_statuses {
            self.counts.other_status += 1;
            return false;
        }
        true
    }
}

/// Lists the HTML pages among `captures`, with progress by payload bytes.
fn list_captures(
    source: &mut dyn CaptureSource,
    out: &mut Collector,
    progress: &dyn Fn(u64),
) -> Result<(), ListError> {
    for c in &mut *source {
        let c = c?;
        progress(c.payload.len());
        list_capture(&c, out)?;
    }
    out.counts.quirks += source.quirks_dropped();
    out.counts.refused += source.refusals().1;
    for q in source.quirks().iter().filter(|q| q.kind != NOT_A_CAPTURE) {
        out.counts.quirks += 1;
        if out.quirks.len() < MAX_QUIRKS_LISTED {
            out.quirks.push(q.clone());
        }
    }
    Ok(())
}

/// Lists one capture of a capture source (an ARC record, a mirror's file, a NEDLIB or
/// Kulturarw3 capture), if it is an HTML page, at the URL and date packaging gives its record.
fn list_capture(c: &crate::capture::Capture, out: &mut Collector) -> Result<(), ListError> {
    let head = c.http_header.as_deref().unwrap_or_default();
    let status = http::status_number(head);
    let mime = c
        .content_type
        .as_deref()
        .map(|t| t.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .unwrap_or_else(|| "application/octet-stream".into());
    if !out.wants(&mime, status) {
        return Ok(());
    }
    let mut payload = Vec::new();
    c.payload
        .open()
        .and_then(|r| r.take(TITLE_WINDOW as u64).read_to_end(&mut payload))
        .map_err(|e| ListError::Io { path: PathBuf::from(&c.provenance.file), source: e })?;
    // The HTTP header's own Content-Type first: it may name the page's charset.
    let ct = http::field_value(head, b"content-type").or_else(|| c.content_type.clone());
    let spill = |source| ListError::Io { path: std::env::temp_dir(), source };
    out.entries
        .push(PageEntry {
            url: c.uri.clone(),
            captured: c.date.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            size: c.payload.len(),
            status,
            mime,
            title: payload_title(head, &payload, ct.as_deref()),
            place: Place {
                file: c.provenance.file.clone(),
                offset: c.provenance.offset,
                offset_in_member: c.provenance.offset_in_member,
            },
        })
        .map_err(spill)?;
    Ok(())
}

/// The order of a listing: URL, then capture time (as a time, then as written), then place.
pub(crate) fn listing_order(a: &PageEntry, b: &PageEntry) -> std::cmp::Ordering {
    let date = |e: &PageEntry| crate::formats::dates::parse_rfc3339(&e.captured).ok();
    (a.url.as_str(), date(a), a.captured.as_str(), &a.place.file, a.place.offset).cmp(&(
        b.url.as_str(),
        date(b),
        b.captured.as_str(),
        &b.place.file,
        b.place.offset,
    ))
}

/// About how many bytes an entry holds (its text and its fixed part).
pub(crate) fn entry_bytes(e: &PageEntry) -> usize {
    let title = e.title.as_ref().map_or(0, String::len);
    e.url.len() + e.captured.len() + e.mime.len() + title + e.place.file.len() + 96
}

/// How many distinct URLs the entries have (they come sorted by URL).
fn distinct_urls(entries: &SortedRuns<PageEntry>) -> io::Result<u64> {
    let mut last: Option<String> = None;
    let mut n = 0;
    for e in entries.iter() {
        let e = e?;
        if last.as_deref() != Some(e.url.as_str()) {
            n += 1;
            last = Some(e.url);
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_are_those_of_the_content_group_and_stay_in_the_package() {
        let dir = tempfile::tempdir().unwrap();
        let mets = dir.path().join(METS_NAME);
        let doc = |href: &str| {
            format!(
                r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><mets:fileSec>
<mets:fileGrp USE="DigitalManifestation">
 <mets:file ID="C1" MIMETYPE="application/warc"><mets:FLocat xlink:href="{href}"/>
  <mets:file ID="R1"><mets:FLocat xlink:href="content/nested.warc.gz"/></mets:file></mets:file>
 <mets:file ID="C2" MIMETYPE="application/warc"><mets:FLocat xlink:href="./content/b.warc"/></mets:file>
</mets:fileGrp>
<mets:fileGrp USE="Original"><mets:file ID="O1"><mets:FLocat xlink:href="original/o.warc.gz"/></mets:file></mets:fileGrp>
<mets:fileGrp USE="Logfile"><mets:file ID="L1"><mets:FLocat xlink:href="logs/crawl.log"/></mets:file></mets:fileGrp>
</mets:fileSec></mets:mets>"#
            )
        };
        std::fs::write(&mets, doc("content/a.warc.gz")).unwrap();
        let (local, remote) = content_containers(&mets).unwrap();
        assert_eq!(local, vec!["content/a.warc.gz".to_string(), "content/b.warc".to_string()]);
        assert_eq!(remote.count, 0);
        // A URL is a container kept elsewhere, never a path below the METS's folder.
        let url = "http://dls.example:14000/webhdfs/v1/a.warc.gz?op=OPEN";
        std::fs::write(&mets, doc(url)).unwrap();
        let (local, remote) = content_containers(&mets).unwrap();
        assert_eq!(local, vec!["content/b.warc".to_string()]);
        assert_eq!((remote.listed, remote.count), (vec![url.to_string()], 1));
        for hostile in ["../a.warc.gz", "/etc/a.warc.gz", "content/../../a.warc.gz"] {
            std::fs::write(&mets, doc(hostile)).unwrap();
            match content_containers(&mets) {
                Err(ListError::Name { name, .. }) => assert_eq!(name, hostile),
                other => panic!("{hostile}: {other:?}"),
            }
        }
        std::fs::write(&mets, "<notmets/>").unwrap();
        assert!(matches!(content_containers(&mets), Err(ListError::NotMets { .. })));
        std::fs::write(&mets, "<!DOCTYPE mets><mets/>").unwrap();
        assert!(matches!(
            content_containers(&mets),
            Err(ListError::Mets { source: crate::mets::reader::MetsError::Refused { .. }, .. })
        ));
    }
}
