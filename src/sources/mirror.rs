//! Website mirrors of their own: a wget (`wget -r -x`) or HTTrack mirror directory that is not a
//! PANDAS instance. The mirror is read as an HTTrack tree (`pandas::read_tree`) and
//! then told what the mirror itself records: for wget, the log's `--DATE--  URL` and `Saving to:`
//! lines give each file's URL and capture time; for HTTrack, `hts-log.txt` gives the start time
//! and the seed. Where the mirror records nothing, the operator's `--url-prefix` and
//! `--capture-date` are used, and said to be; file modification times never are (wget sets them
//! from `Last-Modified`).
//!
//! Files whose name does not give a type (wget saves `/about` as `about`, `/?p=1` as
//! `index.html?p=1`) are typed by their first bytes with the WHATWG MIME Sniffing Standard
//! ("rules for identifying an unknown MIME type", Servo's implementation), recorded as sniffed.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;

use super::mirror_files::{MirrorFiles, Said, ScratchError};
use super::pandas::{Instance, UrlSource, Zone, read_tree};
use crate::formats::warc::header::{escape_controls, uri_text};
use crate::layout;

/// Bytes of the root page read to find its `<title>`.
const TITLE_WINDOW: u64 = 64 * 1024;
/// Largest log read.
const MAX_LOG: u64 = 1 << 30;
/// Longest URL taken from a wget log's request line (servers refuse request lines over 8 KiB).
const MAX_LOG_URL: usize = 8 << 10;

/// Which program made the mirror.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MirrorKind {
    /// GNU wget.
    Wget,
    /// HTTrack.
    Httrack,
}

/// What the operator says about a mirror that does not say it itself.
#[derive(Debug, Clone)]
pub struct MirrorOptions {
    /// The site URL the mirror's top host directory stands for (`--url-prefix`).
    pub url_prefix: Option<String>,
    /// When the mirror was made (`--capture-date`).
    pub capture_date: Option<DateTime<Utc>>,
    /// Time zone of the times in the mirror's logs.
    pub zone: Zone,
    /// The mirror's name, when not its directory's (a `.zip`'s file name).
    pub name: Option<String>,
}

/// A mirror, read.
#[derive(Debug, Clone, Serialize)]
pub struct Mirror {
    /// wget or HTTrack.
    pub kind: MirrorKind,
    /// The files, as the PANDAS packaging takes them.
    #[serde(skip)]
    pub instance: Instance,
    /// The site URL (the crawl's first URL).
    pub site_url: Option<String>,
    /// Where it came from.
    pub site_url_source: String,
    /// When the crawl started (UTC).
    pub capture_date: String,
    /// Where that came from.
    pub capture_date_source: String,
    /// Files per capture-time source.
    pub capture_sources: std::collections::BTreeMap<String, u64>,
    /// The root page (the site URL's file) and its `<title>`.
    pub root_page: Option<String>,
    /// Its title.
    pub root_title: Option<String>,
    /// Files typed by their content.
    pub sniffed: u64,
    /// Notes for the report.
    pub notes: Vec<String>,
}

/// A mirror that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// The mirror records no capture date and none was given.
    #[error(
        "{0}: the mirror records no capture date (no wget log with `--YYYY-MM-DD HH:MM:SS--  URL` \
         lines, no HTTrack hts-log.txt); give --capture-date (2024-01-02, 2024-01-02T10:11:12Z); \
         file modification times are not capture dates"
    )]
    NoCaptureDate(PathBuf),
    /// `--url-prefix` is not an absolute http(s) URL.
    #[error("--url-prefix {0:?}: not an absolute http or https URL")]
    BadPrefix(String),
    /// The tree could not be read.
    #[error(transparent)]
    Tree(#[from] super::pandas::PandasError),
    /// The mirror's file list could not be kept.
    #[error(transparent)]
    Scratch(#[from] ScratchError),
    /// The `.zip` cannot be unpacked, or is refused whole (boxed: it is large, and rare).
    #[error(transparent)]
    Unzip(Box<crate::formats::unzip::UnzipError>),
    /// The unpacked `.zip` holds no mirror.
    #[error("{0}: the zip holds no wget or HTTrack mirror (<host>/ directories); {shapes}", shapes = super::ACCEPTED_SHAPES)]
    NotAMirror(String),
}

impl From<crate::formats::unzip::UnzipError> for MirrorError {
    fn from(e: crate::formats::unzip::UnzipError) -> Self {
        MirrorError::Unzip(Box::new(e))
    }
}

/// Whether `dir` is a wget or HTTrack mirror: `<host>/` directories (or HTTrack's `hts-cache/`,
/// `hts-log.txt`) and no Heritrix job file. A PANDAS instance is recognised before this.
pub(crate) fn mirror_kind(dir: &Path) -> Option<MirrorKind> {
    let is = |n: &str, want_dir: bool| {
        std::fs::symlink_metadata(dir.join(n))
            .map(|m| if want_dir { m.is_dir() } else { m.is_file() })
            .unwrap_or(false)
    };
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        || is("order.xml", false)
        || is("crawler-beans.cxml", false)
    {
        return None;
    }
    if is("hts-cache", true) || is("hts-log.txt", false) {
        return Some(MirrorKind::Httrack);
    }
    let host_dir = std::fs::read_dir(dir).ok()?.flatten().any(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        e.file_type().is_ok_and(|t| t.is_dir())
            && n.contains('.')
            && !n.starts_with('.')
            && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b))
    });
    host_dir.then_some(MirrorKind::Wget)
}

/// Reads a mirror directory.
pub fn read_mirror(
    root: &Path,
    kind: MirrorKind,
    opts: &MirrorOptions,
) -> Result<Mirror, MirrorError> {
    let prefix = url_prefix(opts)?;
    let mut notes = Vec::new();
    let mut crawl = Crawl::read(root, kind, opts)?;
    let name = opts.name.clone().unwrap_or_else(|| super::file_text(root));
    let label = match kind {
        MirrorKind::Wget => "wget",
        MirrorKind::Httrack => "HTTrack",
    };
    let found = format!("{label} mirror {name}");
    let (local, zone) = crawl.tree_clock(opts);
    let mut inst =
        read_tree(root, name.clone(), None, local, zone, found).map_err(MirrorError::Tree)?;
    crawl.read_wget_entries(&inst.files, opts.zone)?;
    inst.refused.extend(std::mem::take(&mut crawl.refused));
    let log_label = crawl.label();
    if crawl.from_log && opts.capture_date.is_some() {
        notes.push(format!("--capture-date not used: the {log_label} records the times"));
    }
    let capture_date_source = match crawl.from_log {
        true => format!("{log_label} (its first entry)"),
        false => "--capture-date".to_string(),
    };
    if kind == MirrorKind::Wget {
        note_wget_log(&mut inst, &crawl.log)?;
    }
    // Two are enough to tell whether there is only one.
    let host_dirs = inst.files.host_dirs(2)?;
    let prefix = Prefix::of(&inst, prefix.as_ref(), &host_dirs)?;
    let (capture_sources, sniffed) = name_and_date_files(&mut inst, &crawl, &log_label, &prefix)?;
    inst.url_sources = super::pandas::url_source_counts(&inst.files)?;
    name_instance(&mut inst, &crawl, &name, host_dirs.first().cloned().unwrap_or_default());
    let site_from_log = crawl.log.first.as_ref().map(|(_, u)| (u.clone(), log_label));
    let site = SiteRoot::of(&mut inst, site_from_log, prefix.url)?;
    Ok(Mirror {
        kind,
        instance: inst,
        site_url: site.url,
        site_url_source: site.source,
        capture_date: crawl.start.to_rfc3339(),
        capture_date_source,
        capture_sources,
        root_page: site.page,
        root_title: site.title,
        sniffed,
        notes,
    })
}

/// `--url-prefix`, when given: an `http` or `https` URL with a host.
fn url_prefix(opts: &MirrorOptions) -> Result<Option<url::Url>, MirrorError> {
    let Some(p) = &opts.url_prefix else { return Ok(None) };
    let u = url::Url::parse(p).map_err(|_| MirrorError::BadPrefix(p.clone()))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(MirrorError::BadPrefix(p.clone()));
    }
    Ok(Some(u))
}

/// What the crawler's logs say of the crawl: its kind, the logs, when it started and whether
/// a log said so (else `--capture-date`), and the logs refused.
struct Crawl {
    kind: MirrorKind,
    log: LogIndex,
    wget_logs: Vec<(String, File)>,
    start: DateTime<Utc>,
    from_log: bool,
    refused: Vec<(String, String)>,
}

impl Crawl {
    /// Reads the logs for the crawl's start (wget: the first request; HTTrack: `hts-log.txt`).
    fn read(root: &Path, kind: MirrorKind, opts: &MirrorOptions) -> Result<Crawl, MirrorError> {
        let mut refused = Vec::new();
        let mut wget_logs = Vec::new();
        let log = match kind {
            MirrorKind::Wget => {
                wget_logs = open_wget_logs(root, &mut refused);
                let mut idx = LogIndex::default();
                if let Some((t, url, n)) = first_request(&wget_logs, opts.zone) {
                    idx.first = Some((t, url));
                    idx.used.push(n);
                }
                idx
            }
            MirrorKind::Httrack => read_hts_log(root, opts.zone, &mut refused),
        };
        let (start, from_log) = match (log.first.as_ref(), opts.capture_date) {
            (Some((t, _)), _) => (*t, true),
            (None, Some(t)) => (t, false),
            (None, None) => return Err(MirrorError::NoCaptureDate(root.to_path_buf())),
        };
        Ok(Crawl { kind, log, wget_logs, start, from_log, refused })
    }

    /// The clock the tree is read in: HTTrack's `new.txt` holds local times of day, read in
    /// the log's zone; wget's tree in UTC.
    fn tree_clock(&self, opts: &MirrorOptions) -> (NaiveDateTime, Zone) {
        match self.kind {
            MirrorKind::Httrack => {
                let local = self.log.first_local.unwrap_or_else(|| to_local(opts.zone, self.start));
                (local, opts.zone)
            }
            MirrorKind::Wget => (self.start.naive_utc(), Zone::Utc),
        }
    }

    /// Reads the wget logs' entries of the walked files (after the walk: only theirs are
    /// kept), noting which logs named any.
    fn read_wget_entries(&mut self, walked: &MirrorFiles, zone: Zone) -> Result<(), MirrorError> {
        if self.kind != MirrorKind::Wget {
            return Ok(());
        }
        let used = read_wget_logs(&self.wget_logs, zone, walked, &mut self.refused)?;
        self.log.used.extend(used);
        self.log.used.sort();
        self.log.used.dedup();
        Ok(())
    }

    /// The logs, in words (`wget log a.log, b.log`, `hts-log.txt`).
    fn label(&self) -> String {
        match self.kind {
            MirrorKind::Wget => format!("wget log {}", self.log.used.join(", ")),
            MirrorKind::Httrack => "hts-log.txt".to_string(),
        }
    }
}

/// What the instance found and misses of a wget mirror's log (HTTrack's cache files are not
/// expected of wget).
fn note_wget_log(inst: &mut super::pandas::Instance, log: &LogIndex) -> Result<(), ScratchError> {
    inst.missing.retain(|m| !m.starts_with("hts-cache") && m != "url.map");
    let (_, _, named) = inst.files.staged_counts()?;
    if log.first.is_none() && named == 0 {
        inst.missing.push("a wget log (wget -o FILE): URLs and capture times".into());
    } else if !log.used.is_empty() {
        let logs = log.used.join(", ");
        inst.found.push(format!("wget log {logs}: {named} file(s) of the mirror named"));
    }
    Ok(())
}

/// `--url-prefix` and the host directory it stands for: the one named as its host, else the
/// only one.
struct Prefix<'a> {
    url: Option<&'a url::Url>,
    dir: Option<String>,
}

impl<'a> Prefix<'a> {
    fn of(
        inst: &super::pandas::Instance,
        url: Option<&'a url::Url>,
        host_dirs: &[String],
    ) -> Result<Prefix<'a>, ScratchError> {
        let dir = match url.map(|u| u.host_str().unwrap_or("")) {
            Some(host) if inst.files.has_host_dir(host)? => Some(host.to_string()),
            Some(_) if host_dirs.len() == 1 => host_dirs.first().cloned(),
            _ => None,
        };
        Ok(Prefix { url, dir })
    }
}

/// The instance's time, container stem, label and name, from the crawl's start.
fn name_instance(inst: &mut super::pandas::Instance, crawl: &Crawl, name: &str, host: String) {
    let start = crawl.start;
    let stamp = start.format("%Y%m%d%H%M%S");
    let (tool, label) = match crawl.kind {
        MirrorKind::Wget => ("wget", "wget"),
        MirrorKind::Httrack => ("httrack", "HTTrack"),
    };
    inst.time = start;
    inst.stem = format!("{tool}-{host}-{stamp}");
    inst.label = format!("{label} mirror {name} (crawl started {})", start.to_rfc3339());
    inst.name = format!("{name} ({stamp})");
}

/// The site's URL, where it came from, and its root page with that page's `<title>`.
struct SiteRoot {
    url: Option<String>,
    source: String,
    page: Option<String>,
    title: Option<String>,
}

impl SiteRoot {
    /// The wget log's first URL (with the log's name), else `--url-prefix`, else the URL of the
    /// shallowest page (a guess, said to be); the root page is the HTML page at that URL.
    /// Recorded in the instance as its site ([`Instance::site`]), which its seeds follow.
    fn of(
        inst: &mut Instance,
        logged: Option<(String, String)>,
        prefix: Option<&url::Url>,
    ) -> Result<Self, ScratchError> {
        let (url, source) = match (logged, prefix, inst.root_page()?) {
            (Some((u, log)), _, _) => (Some(u), format!("{log} (the crawl's first URL)")),
            (None, Some(p), _) => (Some(p.to_string()), "--url-prefix".to_string()),
            (None, None, Some(f)) => (
                Some(f.url.clone()),
                format!(
                    "the mirror's root page {} (a guess: no log, no --url-prefix)",
                    f.save_path
                ),
            ),
            (None, None, None) => (None, "none: no log, no --url-prefix".to_string()),
        };
        inst.site = url.clone().map(|u| (u, source.clone()));
        let page = match &url {
            Some(u) => inst.files.at_url(u)?.filter(|f| f.mime.starts_with("text/html")),
            None => None,
        };
        let title = page.as_ref().and_then(|f| page_title(&f.path(&inst.root), &f.mime));
        Ok(SiteRoot { url, source, page: page.map(|f| f.save_path), title })
    }
}

/// Gives each file its URL and capture time: from the wget log where it names the file, else
/// from `--url-prefix` or the layout, at the crawl's start. Returns the files per capture-time
/// source and the files sniffed.
fn name_and_date_files(
    inst: &mut super::pandas::Instance,
    crawl: &Crawl,
    log_label: &str,
    prefix: &Prefix<'_>,
) -> Result<(std::collections::BTreeMap<String, u64>, u64), ScratchError> {
    let (kind, log, start) = (crawl.kind, &crawl.log, crawl.start);
    let (prefix, prefix_dir) = (prefix.url, prefix.dir.as_deref());
    let mut capture_sources: std::collections::BTreeMap<String, u64> = Default::default();
    let mut sniffed = 0u64;
    let inferred = if log.first.is_some() {
        format!("{log_label}: start of the crawl (inferred: the file is not in the log)")
    } else {
        "--capture-date".into()
    };
    inst.files.update_each(|f, logged| {
        // Only a wget log's requests are staged.
        if let Some((url, t)) = logged.filter(|_| kind == MirrorKind::Wget) {
            f.url = url;
            f.url_source = UrlSource::WgetLog;
            f.capture = t;
            f.capture_source = Some(log_label.to_string());
        } else {
            if kind == MirrorKind::Wget || f.url_source == UrlSource::Layout {
                let (dir, rest) = f.save_path.split_once('/').unwrap_or((&f.save_path, ""));
                let rest = wget_rest(rest);
                match (&prefix, &prefix_dir) {
                    (Some(p), Some(d)) if *d == dir => {
                        let base = p.as_str().trim_end_matches('/');
                        f.url = format!("{base}/{rest}");
                        f.url_source = UrlSource::UrlPrefix;
                    }
                    _ if kind == MirrorKind::Wget => {
                        f.url = format!("http://{dir}/{rest}");
                        f.url_source = UrlSource::Layout;
                    }
                    _ => {}
                }
            }
            if !f.capture_from_cache {
                f.capture = start;
                f.capture_source = Some(inferred.clone());
            }
        }
        let src = f.capture_source.as_deref().unwrap_or("hts-cache/new.txt");
        match capture_sources.get_mut(src) {
            Some(n) => *n += 1,
            None => {
                capture_sources.insert(src.to_string(), 1);
            }
        }
        if f.mime_source.starts_with("sniffed") {
            sniffed += 1;
        }
    })?;
    Ok((capture_sources, sniffed))
}

impl Mirror {
    /// Fills the target URL and title the curator's metadata lacks from the mirror (the site
    /// URL, the root page's `<title>`), and says where each came from.
    pub fn describe(&self, md: &mut crate::metadata::CuratorMetadata) -> Vec<String> {
        let mut notes = self.notes.clone();
        if md.urls.is_empty() {
            match &self.site_url {
                Some(u) => {
                    md.urls = vec![u.clone()];
                    notes.push(format!("target URL {u} from {}", self.site_url_source));
                }
                None => {
                    notes.push("no target URL: no metadata urls, no log, no --url-prefix".into())
                }
            }
        } else {
            notes.push("target URLs from the curator's metadata".into());
        }
        if md.title.is_none() {
            if let (Some(t), Some(p)) = (&self.root_title, &self.root_page) {
                md.title = Some(t.clone());
                notes.push(format!("title from the <title> of the mirror's root page {p}"));
            }
        } else {
            notes.push("title from the curator's metadata".into());
        }
        notes
    }
}

/// A UTC time as local time in `zone`.
fn to_local(zone: Zone, t: DateTime<Utc>) -> NaiveDateTime {
    match zone {
        Zone::Utc => t.naive_utc(),
        Zone::Fixed(o) => t.with_timezone(&o).naive_local(),
        Zone::Named(z) => t.with_timezone(&z).naive_local(),
    }
}

/// The path below the host directory as a URL path: `index.html` stands for the directory, so
/// `index.html?p=1` is `?p=1` (how wget saves `/?p=1`).
fn wget_rest(rest: &str) -> String {
    let (dir, last) = rest.rsplit_once('/').map_or(("", rest), |(d, l)| (d, l));
    let last = match last.strip_prefix("index.html") {
        Some(q) if q.is_empty() || q.starts_with('?') => q,
        _ => last,
    };
    let joined = if dir.is_empty() { last.to_string() } else { format!("{dir}/{last}") };
    uri_text(joined.replace(' ', "%20").as_bytes())
}

/// The text of the first `<title>` of a page, whitespace collapsed, or `None`.
fn page_title(path: &Path, mime: &str) -> Option<String> {
    let mut head = Vec::new();
    layout::open_regular(path).ok()?.take(TITLE_WINDOW).read_to_end(&mut head).ok()?;
    let enc = crate::formats::html::html_encoding(&head, Some(mime));
    let (text, _, _) = enc.decode(&head);
    let lower = text.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let t = text[start..end]
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then(|| escape_controls(&t))
}

/// What a log says of the crawl: the first (time, URL). Each walked file's logged URL and
/// time is staged in the mirror's file list.
#[derive(Default)]
struct LogIndex {
    first: Option<(DateTime<Utc>, String)>,
    first_local: Option<NaiveDateTime>,
    /// The logs that gave the start or a file's URL.
    used: Vec<String>,
}

/// The wget logs of the top directory (`wget-log`, `wget-log.N`, `*.log`), in name order,
/// opened (links, special files and logs over [`MAX_LOG`] bytes refused).
fn open_wget_logs(root: &Path, refused: &mut Vec<(String, String)>) -> Vec<(String, File)> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n == "wget-log" || n.starts_with("wget-log.") || n.ends_with(".log"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut logs = Vec::new();
    for n in names {
        let file = match layout::open_regular(&root.join(&n)) {
            Ok(f) => f,
            Err(e) => {
                refused.push((n.clone(), super::refusal(&e)));
                continue;
            }
        };
        if file.metadata().map(|m| m.len() > MAX_LOG).unwrap_or(true) {
            refused.push((n.clone(), format!("larger than {MAX_LOG} bytes: not read as a log")));
            continue;
        }
        logs.push((n, file));
    }
    logs
}

/// Calls `f` with each `Saving to:` path of a log and the request it answers (URL, time);
/// returns whether the log holds a request line at all.
fn for_each_saved(
    file: &File,
    zone: Zone,
    mut f: impl FnMut(&str, &(String, DateTime<Utc>)),
) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let mut file = file.try_clone()?;
    file.seek(SeekFrom::Start(0))?;
    let mut current: Option<(String, DateTime<Utc>)> = None;
    let mut any = false;
    super::for_each_bounded_line(file, |line| {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\r', '\n']);
        if let Some((t, url)) = wget_request_line(line, zone) {
            any = true;
            current = Some((url, t));
        } else if is_request_shaped(line) {
            // A request this reader cannot take (a time that does not parse, a URL over
            // MAX_LOG_URL): what it saves is not the previous request's file.
            current = None;
        } else if let Some(p) = saved_path(line)
            && let Some(cur) = &current
        {
            f(p, cur);
        }
    })?;
    Ok(any)
}

/// A line shaped like a request line (`--DATE--  URL`), whether or not it can be read.
fn is_request_shaped(line: &str) -> bool {
    line.strip_prefix("--").is_some_and(|rest| rest.contains("--  "))
}

/// The first request line of the first log that has one: the crawl's start and seed.
fn first_request(logs: &[(String, File)], zone: Zone) -> Option<(DateTime<Utc>, String, String)> {
    for (n, file) in logs {
        let mut first = None;
        let _ = read_first_request(file, zone, &mut first);
        if let Some((t, url)) = first {
            return Some((t, url, n.clone()));
        }
    }
    None
}

fn read_first_request(
    file: &File,
    zone: Zone,
    first: &mut Option<(DateTime<Utc>, String)>,
) -> std::io::Result<()> {
    use std::io::{BufRead, Seek, SeekFrom};
    let mut file = file.try_clone()?;
    file.seek(SeekFrom::Start(0))?;
    // Request lines are short: a longer line is read in part and cannot match.
    let mut r = std::io::BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut r).take(MAX_LOG_URL as u64 + 64).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') {
            // Skip the rest of a long line.
            r.skip_until(b'\n')?;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(found) = wget_request_line(text.trim_end_matches(['\r', '\n']), zone) {
            *first = Some(found);
            return Ok(());
        }
    }
}

/// Reads the wget logs for the URL and time of each walked file (`walked`: the mirror's
/// files) they name, staged in the list (the first request for a file counts). Returns the
/// logs that named one.
fn read_wget_logs(
    logs: &[(String, File)],
    zone: Zone,
    walked: &MirrorFiles,
    refused: &mut Vec<(String, String)>,
) -> Result<Vec<String>, ScratchError> {
    let mut used = Vec::new();
    for (n, file) in logs {
        let mut named = false;
        let mut failed = None;
        let read = for_each_saved(file, zone, |p, (url, at)| {
            if failed.is_some() {
                return;
            }
            let staged = walked_key(p, url, walked).and_then(|key| match key {
                Some(key) => walked.stage(&key, Said::Logged { url, at: *at }),
                None => Ok(false),
            });
            match staged {
                Ok(s) => named |= s,
                Err(e) => failed = Some(e),
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        if let Err(e) = read {
            refused.push((n.clone(), format!("not read to the end: {e}")));
        }
        if named && !used.contains(n) {
            used.push(n.clone());
        }
    }
    Ok(used)
}

/// The walked save path a logged `Saving to:` path names: the path as logged, or (wget `-P`
/// put the mirror below a prefix) the path from the URL's host directory on. One look-up each,
/// so a log of deep paths costs its own length, not the square of it.
fn walked_key(
    logged: &str,
    url: &str,
    walked: &MirrorFiles,
) -> Result<Option<String>, ScratchError> {
    let logged = logged.trim_start_matches("./");
    if let Ok(p) = layout::confined_name(logged)
        && walked.is_walked(&p)?
    {
        return Ok(Some(p));
    }
    let Ok(u) = url::Url::parse(url) else { return Ok(None) };
    let Some(host) = u.host_str() else { return Ok(None) };
    let with_port = u.port().map(|p| format!("{host}:{p}"));
    let mut at = 0;
    for part in logged.split('/') {
        if part == host || with_port.as_deref() == Some(part) {
            let Ok(p) = layout::confined_name(&logged[at..]) else { return Ok(None) };
            return Ok(walked.is_walked(&p)?.then_some(p));
        }
        at += part.len() + 1;
    }
    Ok(None)
}

/// `--2024-01-02 10:11:12--  http://host/path`.
fn wget_request_line(line: &str, zone: Zone) -> Option<(DateTime<Utc>, String)> {
    let rest = line.strip_prefix("--")?;
    let (date, url) = rest.split_once("--  ")?;
    let t = NaiveDateTime::parse_from_str(date, "%Y-%m-%d %H:%M:%S").ok()?;
    let url = url.trim();
    if !url.contains("://") || url.contains(char::is_whitespace) || url.len() > MAX_LOG_URL {
        return None;
    }
    Some((zone.to_utc(t), uri_text(url.as_bytes())))
}

/// The file of `Saving to: ‘path’` (any of wget's quotes).
fn saved_path(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("Saving to: ")?;
    let p = rest.trim().trim_matches(['‘', '’', '\'', '`', '"', '“', '”']);
    (!p.is_empty()).then_some(p)
}

/// HTTrack's `hts-log.txt`: `HTTrack3.49-2 launched on Tue, 02 Jan 2024 10:11:12 at URL ...`.
fn read_hts_log(root: &Path, zone: Zone, refused: &mut Vec<(String, String)>) -> LogIndex {
    let mut idx = LogIndex::default();
    let mut text = String::new();
    match layout::open_regular(&root.join("hts-log.txt")) {
        Ok(f) => {
            let mut buf = Vec::new();
            let _ = f.take(8192).read_to_end(&mut buf);
            text = String::from_utf8_lossy(&buf).into_owned();
        }
        Err(e) if e.is_not_found() => {}
        Err(e) => refused.push(("hts-log.txt".into(), super::refusal(&e))),
    }
    if let Some(line) = text.lines().find(|l| l.contains(" launched on "))
        && let Some((_, rest)) = line.split_once(" launched on ")
        && let Some((date, at)) = rest.split_once(" at ")
        && let Ok(t) = NaiveDateTime::parse_from_str(date.trim(), "%a, %d %b %Y %H:%M:%S")
    {
        let url = at.split_whitespace().next().unwrap_or("");
        let url = if url.contains("://") { url.to_string() } else { format!("http://{url}") };
        idx.first = Some((zone.to_utc(t), uri_text(url.as_bytes())));
        idx.first_local = Some(t);
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::parse_capture_date;

    #[test]
    fn a_save_after_an_unreadable_request_is_not_the_previous_requests() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("wget-log");
        std::fs::write(
            &log,
            "--2024-01-02 10:11:12--  http://e.org/a\nSaving to: \u{2018}e.org/a\u{2019}\n\
             --2024-13-45 99:99:99--  http://e.org/bad\nSaving to: \u{2018}e.org/bad\u{2019}\n\
             --2024-01-02 10:11:14--  http://e.org/c\nSaving to: \u{2018}e.org/c\u{2019}\n",
        )
        .unwrap();
        let file = File::open(&log).unwrap();
        let mut saved = Vec::new();
        for_each_saved(&file, Zone::Utc, |p, (url, _)| saved.push((p.to_string(), url.clone())))
            .unwrap();
        assert_eq!(
            saved,
            [
                ("e.org/a".to_string(), "http://e.org/a".to_string()),
                ("e.org/c".to_string(), "http://e.org/c".to_string())
            ]
        );
    }

    #[test]
    fn wget_lines_and_rests() {
        let z = Zone::Utc;
        let (t, u) = wget_request_line("--2024-01-02 10:11:12--  http://e.org/?p=1", z).unwrap();
        assert_eq!(t.to_rfc3339(), "2024-01-02T10:11:12+00:00");
        assert_eq!(u, "http://e.org/?p=1");
        assert_eq!(saved_path("Saving to: ‘e.org/index.html?p=1’"), Some("e.org/index.html?p=1"));
        assert_eq!(saved_path("Saving to: 'e.org/a'"), Some("e.org/a"));
        assert_eq!(wget_rest("index.html?p=1"), "?p=1");
        assert_eq!(wget_rest("a/index.html"), "a/");
        assert_eq!(wget_rest("a/b c"), "a/b%20c");
        assert!(parse_capture_date("2024-01-02").is_ok());
        assert!(parse_capture_date("yesterday").is_err());
    }
}
