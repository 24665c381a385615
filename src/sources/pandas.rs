//! PANDAS instances: HTTrack directory mirrors of one website at one time
//! (INPUT_FORMATS.md §1).
//!
//! An instance directory `<PI>/<YYYYMMDD-HHMM>/` holds `<host>/<path>` files (the mirror),
//! and optionally `hts-cache/` (`new.zip`, `new.txt`, `new.lst`, `doit.log`), `hts-log.txt`,
//! `url.map` and `.panaccess-mime.types` files. [`read_instance`] lists the mirror files and
//! recovers each file's original URL, MIME type and capture time, recording where each came
//! from, in order of trust: the HTTrack cache (`new.zip` entries and their `X-Save` paths),
//! `url.map`, `new.txt`, the `Mirrored from` comment HTTrack writes into pages, and last the
//! `<host>/<path>` layout.
//!
//! Everything here is input. Only regular files are read: the fixed names (`url.map`,
//! `hts-cache/new.zip`, `hts-cache/new.txt`, `hts-log.txt`, `.panaccess-mime.types`) and every
//! walked file are checked with `lstat` / opened with `O_NOFOLLOW | O_NONBLOCK` and refused
//! (listed in [`Instance::refused`] with the reason) when they are links, FIFOs, devices or
//! directories, or when their path does not fit in `PATH_MAX`. Side files are read with bounds
//! ([`MAX_SIDE_TEXT`], [`MAX_PANACCESS`], [`MAX_CACHE_INDEX`], [`super::MAX_LINE`]). Names
//! recovered from the cache (`X-Save`) and from `url.map` only ever select among the files the
//! walk found, after `crate::layout::confined_name`; they never open anything themselves.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

use super::capture::{CaptureError, CaptureSource, QuirkLog, Refused, SeedFiles, SideFile};
use super::mirror_files::{Found, Said};
pub use super::mirror_files::{LinkMap, MirrorFile, MirrorFiles, ScratchError, UrlSource};
use super::{NotTaken, name_text, refusal, take_regular};
use crate::capture::{Capture, CaptureKind, DateSource, Payload, Provenance, Quirk};
use crate::formats::mime;
use crate::formats::warc::header::{escape_controls, warc_fields_line};
use crate::layout;

/// Largest `url.map` or `hts-cache/new.txt` read (a line a file: some millions of files).
pub const MAX_SIDE_TEXT: u64 = 1 << 30;
/// Largest `.panaccess-mime.types` read (a few Apache directives per file of a directory).
pub const MAX_PANACCESS: u64 = 1 << 20;
/// Most bytes of entry names and header blocks kept from `hts-cache/new.zip`; the rest of a
/// larger index is not read (the bodies, however large, are skipped, never held).
pub const MAX_CACHE_INDEX: u64 = 256 << 20;
/// Bytes of a page read to find HTTrack's `Mirrored from` comment.
const COMMENT_WINDOW: u64 = 64 * 1024;

/// A file of the instance that is not part of the mirror (cache, logs, HTTrack artefacts).
#[derive(Debug, Clone)]
pub struct InstanceAux {
    /// Where it is.
    pub path: PathBuf,
    /// Relative path in the instance.
    pub relative: String,
}

/// A PANDAS instance.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The instance directory.
    pub root: PathBuf,
    /// The PANDAS title number (the parent directory's name), when it is one.
    pub pi: Option<String>,
    /// The instance directory name (`YYYYMMDD-HHMM`).
    pub name: String,
    /// What it is, in words (the warcinfo description).
    pub label: String,
    /// Stem of the package's container names.
    pub stem: String,
    /// The instance time, in UTC.
    pub time: DateTime<Utc>,
    /// Mirror files, in walk order (on disk).
    pub files: MirrorFiles,
    /// The site's URL and where it came from, when a reader established it (a wget log,
    /// `--url-prefix`); else [`Instance::seed`] finds it.
    pub site: Option<(String, String)>,
    /// Other files.
    pub aux: Vec<InstanceAux>,
    /// Files refused, and why (symlinks, special files).
    pub refused: Refused,
    /// Files per URL source.
    pub url_sources: HashMap<String, u64>,
    /// What was found.
    pub found: Vec<String>,
    /// What such an instance usually holds but this one lacks.
    pub missing: Vec<String>,
}

/// True when `dir` looks like a PANDAS instance (`YYYYMMDD` or `YYYYMMDD-HHMM`, holding a
/// host directory or an HTTrack cache).
pub(crate) fn is_instance(dir: &Path) -> bool {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // lstat only: a link named hts-cache or a host directory does not make an instance.
    let is = |n: &str, want_dir: bool| {
        std::fs::symlink_metadata(dir.join(n))
            .map(|m| if want_dir { m.is_dir() } else { m.is_file() })
            .unwrap_or(false)
    };
    parse_instance_name(&name).is_some()
        && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        && (is("hts-cache", true) || is("hts-log.txt", false) || has_host_dir(dir))
}

fn has_host_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten().any(|e| {
                e.file_type().is_ok_and(|t| t.is_dir())
                    && looks_like_host(&e.file_name().to_string_lossy())
            })
        })
        .unwrap_or(false)
}

fn looks_like_host(name: &str) -> bool {
    name != "hts-cache" && (name.contains('.') || name.contains('_')) && !name.starts_with('.')
}

/// `YYYYMMDD-HHMM` (or legacy `YYYYMMDD`) as a local date-time.
pub(crate) fn parse_instance_name(name: &str) -> Option<NaiveDateTime> {
    let (d, t) = match name.split_once('-') {
        Some((d, t)) => (d, t),
        None => (name, "0000"),
    };
    if d.len() != 8 || t.len() != 4 || !d.bytes().chain(t.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let date = NaiveDate::parse_from_str(d, "%Y%m%d").ok()?;
    let time = NaiveTime::parse_from_str(t, "%H%M").ok()?;
    Some(date.and_time(time))
}

/// A time zone given as `UTC`, a fixed offset (`+10:00`) or an IANA name (`Australia/Sydney`).
#[derive(Debug, Clone, Copy)]
pub enum Zone {
    /// UTC.
    Utc,
    /// A fixed offset.
    Fixed(chrono::FixedOffset),
    /// An IANA zone.
    Named(chrono_tz::Tz),
}

impl Zone {
    /// Parses a zone name.
    pub fn parse(s: &str) -> Result<Zone, UnknownZone> {
        if s.eq_ignore_ascii_case("utc") || s == "Z" {
            return Ok(Zone::Utc);
        }
        if let Ok(off) = s.parse::<chrono::FixedOffset>() {
            return Ok(Zone::Fixed(off));
        }
        s.parse::<chrono_tz::Tz>().map(Zone::Named).map_err(|_| UnknownZone(s.to_string()))
    }

    /// A local date-time in this zone, in UTC (the earlier time when ambiguous).
    pub(crate) fn to_utc(self, t: NaiveDateTime) -> DateTime<Utc> {
        match self {
            Zone::Utc => t.and_utc(),
            Zone::Fixed(o) => {
                o.from_local_datetime(&t).earliest().map_or(t.and_utc(), |d| d.with_timezone(&Utc))
            }
            Zone::Named(z) => {
                z.from_local_datetime(&t).earliest().map_or(t.and_utc(), |d| d.with_timezone(&Utc))
            }
        }
    }
}

/// A time zone name that is none of UTC, an offset or an IANA name.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown time zone {0:?} (UTC, an offset like +10:00, or an IANA name like Australia/Sydney)"
)]
pub struct UnknownZone(pub String);

/// Why an instance or mirror tree cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PandasError {
    /// The directory's name is no instance time.
    #[error("{}: not an instance directory (YYYYMMDD-HHMM)", .0.display())]
    NotInstance(PathBuf),
    /// The HTTrack cache is there but cannot be read.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Cache {
        /// `hts-cache/new.zip`.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// No `<host>/` directory holds a mirrored file.
    #[error("{}: no mirrored file (no <host>/ directory)", .0.display())]
    NoMirror(PathBuf),
    /// The file list could not be kept.
    #[error(transparent)]
    Scratch(#[from] ScratchError),
}

/// Reads an instance directory.
pub fn read_instance(root: &Path, zone: Zone) -> Result<Instance, PandasError> {
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let local =
        parse_instance_name(&name).ok_or_else(|| PandasError::NotInstance(root.to_path_buf()))?;
    let pi = root
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()));
    let of_title = pi.as_ref().map(|p| format!(" of title {p}")).unwrap_or_default();
    let found = format!("PANDAS instance {name}{of_title}");
    let mut inst = read_tree(root, name.clone(), pi.clone(), local, zone, found)?;
    inst.label = format!("PANDAS (HTTrack) instance {name}{of_title}");
    inst.stem = match &pi {
        Some(pi) => format!("pandas-{pi}-{name}"),
        None => format!("pandas-{name}"),
    };
    Ok(inst)
}

/// Reads an HTTrack mirror tree (a PANDAS instance, or an HTTrack mirror of its own) whose
/// crawl started at `local` (local time in `zone`): the files' URLs, types and capture times.
pub(crate) fn read_tree(
    root: &Path,
    name: String,
    pi: Option<String>,
    local: NaiveDateTime,
    zone: Zone,
    found: String,
) -> Result<Instance, PandasError> {
    let time = zone.to_utc(local);
    let mut found = vec![found];
    let mut missing = Vec::new();
    let mut refused = Refused::default();
    let mut files = MirrorFiles::open()?;
    let aux = walk_tree(root, &mut files, &mut refused)?;
    if files.is_empty() {
        return Err(PandasError::NoMirror(root.to_path_buf()));
    }
    // The side files are read after the walk and keep only lines about walked files: what is
    // kept follows the mirror, not the side files (55 MB of new.txt and url.map about files
    // that are not there took 107 MB when held in memory).
    let cache_name = "hts-cache/new.zip";
    let cache = root.join(cache_name);
    match layout::open_regular(&cache) {
        Ok(file) => {
            let read = read_cache_zip(file, &files)
                .map_err(|source| PandasError::Cache { path: cache.clone(), source })?;
            if read? {
                found.push(cache_name.into());
            } else {
                refused.push(
                    cache_name.into(),
                    "not an HTTrack cache (no zip entry at its start): not read".into(),
                );
            }
        }
        Err(e) => {
            // The walk (before) refuses a link or special file too: listed once.
            if !e.is_not_found() {
                refused.push_once(cache_name, refusal(&e));
            }
            missing.push("hts-cache/new.zip (URLs and headers from the HTTrack cache)".into());
        }
    }
    read_url_map(root, pi.as_deref(), &name, &files, &mut refused)?;
    read_new_txt(root, &files, &mut refused)?;
    let (url_map, new_txt, _) = files.staged_counts()?;
    if url_map == 0 {
        missing.push("url.map".into());
    } else {
        found.push("url.map".into());
    }
    if new_txt == 0 {
        missing.push("hts-cache/new.txt (capture times)".into());
    } else {
        found.push("hts-cache/new.txt".into());
    }
    for f in ["hts-log.txt", "hts-cache/doit.log", "hts-cache/new.lst"] {
        if layout::regular_metadata(&root.join(f)).is_ok() {
            found.push(f.into());
        }
    }
    files.resolve(|f| resolve_file(root, f, local, zone))?;
    let url_sources = url_source_counts(&files)?;
    files.release_memory();
    Ok(Instance {
        root: root.to_path_buf(),
        pi,
        label: name.clone(),
        stem: name.clone(),
        name,
        time,
        files,
        site: None,
        aux,
        refused,
        url_sources,
        found,
        missing,
    })
}

/// Files per URL source, by the source's name in reports.
pub(crate) fn url_source_counts(files: &MirrorFiles) -> Result<HashMap<String, u64>, ScratchError> {
    Ok(files.url_source_counts()?.into_iter().map(|(s, n)| (s.key().to_string(), n)).collect())
}

/// A walked file's URL, type and capture time, from what the side files said of it, in order
/// of trust; else from the page itself or the layout. `local` and `zone`: the crawl's start.
fn resolve_file(root: &Path, f: Found, local: NaiveDateTime, zone: Zone) -> MirrorFile {
    use std::os::unix::ffi::OsStrExt;
    let path = match &f.raw_relative {
        Some(raw) => root.join(std::ffi::OsStr::from_bytes(raw)),
        None => root.join(&f.save_path),
    };
    let (url, url_source) = if let Some((url, _, _)) = &f.cache {
        (url.clone(), UrlSource::Cache)
    } else if let Some(u) = &f.url_map {
        (u.clone(), UrlSource::UrlMap)
    } else if let Some((u, _, _)) = &f.new_txt {
        (u.clone(), UrlSource::NewTxt)
    } else if let Some(u) = mirrored_from(&path) {
        (u, UrlSource::Comment)
    } else {
        let raw = f.raw_relative.as_deref().unwrap_or(f.save_path.as_bytes());
        (layout_url(raw), UrlSource::Layout)
    };
    let stated = f
        .cache
        .as_ref()
        .and_then(|(_, _, ct)| ct.as_deref().map(|m| (m, "hts-cache/new.zip")))
        .or_else(|| f.panaccess.as_deref().map(|m| (m, ".panaccess-mime.types")))
        .or_else(|| {
            let m = f.new_txt.as_ref().map(|(_, m, _)| m.as_str()).filter(|m| m.contains('/'));
            m.map(|m| (m, "hts-cache/new.txt"))
        });
    let (mime, mime_source) = match stated {
        Some((m, source)) => (m.to_string(), source),
        None => type_of_file(&path, &f.save_path),
    };
    let time_of_day = f.new_txt.as_ref().and_then(|(_, _, t)| t.as_deref());
    let (capture, capture_from_cache) =
        match time_of_day.and_then(|t| NaiveTime::parse_from_str(t, "%H:%M:%S").ok()) {
            Some(tod) => {
                // new.txt holds the time of day only: the instance date, or the next day when
                // the crawl ran past midnight.
                let mut at = local.date().and_time(tod);
                if tod < local.time() {
                    at += chrono::Duration::days(1);
                }
                (zone.to_utc(at), true)
            }
            None => (zone.to_utc(local), false),
        };
    MirrorFile {
        save_path: f.save_path,
        raw_relative: f.raw_relative,
        url,
        url_source,
        mime,
        mime_source: mime_source.to_string(),
        capture,
        capture_from_cache,
        capture_source: None,
        cache_headers: f.cache.map(|(_, headers, _)| headers),
        size: f.size,
    }
}

/// The type of a file nothing states one for: by its name and its first bytes.
fn type_of_file(path: &Path, rel: &str) -> (String, &'static str) {
    let mut head = Vec::new();
    let read = layout::open_regular(path)
        .ok()
        .and_then(|f| f.take(mime::SNIFF_LEN).read_to_end(&mut head).ok());
    mime::type_by_name_and_content(rel, read.map(|_| head.as_slice()))
}

/// Walks a mirror tree in name order: its mirror files (regular files in `<host>/`
/// directories), its other files, and the MIME types `.panaccess-mime.types` files force.
/// What cannot be read, and what is not a regular file, is refused one by one.
fn walk_tree(
    root: &Path,
    files: &mut MirrorFiles,
    refused: &mut Refused,
) -> Result<Vec<InstanceAux>, ScratchError> {
    let mut aux = Vec::new();
    let mut taken = HashSet::new();
    let walk = walkdir::WalkDir::new(root).sort_by_file_name().follow_links(false);
    for e in walk {
        // A directory that cannot be read (or whose path is over PATH_MAX) costs itself only.
        let e = match e {
            Ok(e) => e,
            Err(e) => {
                let at = e.path().map(|p| name_text(root, p)).unwrap_or_default();
                refused.push(at, format!("not read: {e}"));
                continue;
            }
        };
        let rel = name_text(root, e.path());
        if rel.is_empty() || e.file_type().is_dir() {
            continue;
        }
        // lstat again (walkdir's type may come from readdir): links, FIFOs, devices and
        // paths over PATH_MAX are refused here, one by one.
        let meta = match take_regular(e.path(), &rel, &mut taken) {
            Ok(m) => m,
            Err(why) => {
                // Each walked name comes once: no need to look for it among the refused.
                refused.push(rel, why.to_string());
                continue;
            }
        };
        if e.file_name() == ".panaccess-mime.types" {
            read_panaccess(root, e.path(), files)?;
        }
        let first = rel.split('/').next().unwrap_or("");
        let in_host_dir = rel.contains('/') && looks_like_host(first) && first != "hts-cache";
        let is_meta = rel.ends_with(".panaccess-mime.types");
        if !in_host_dir || is_meta {
            aux.push(InstanceAux { path: e.path().to_path_buf(), relative: rel });
            continue;
        }
        let raw = raw_relative(root, e.path());
        let raw = (raw != rel.as_bytes()).then_some(raw);
        if !files.add_walked(&rel, raw.as_deref(), meta.len())? {
            refused.push(rel, NotTaken::Clash.to_string());
        }
    }
    Ok(aux)
}

/// A `.panaccess-mime.types` file's `<Files "NAME">` / `ForceType TYPE` pairs, keyed by the
/// save path of the file of its directory they name.
fn read_panaccess(root: &Path, path: &Path, out: &MirrorFiles) -> Result<(), ScratchError> {
    let dir = name_text(root, path.parent().unwrap_or(root));
    let Ok(bytes) = layout::read_bounded(path, MAX_PANACCESS) else { return Ok(()) };
    let text = String::from_utf8_lossy(&bytes);
    let mut current: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("<Files \"").and_then(|r| r.strip_suffix("\">")) {
            current = Some(rest.to_string());
        } else if let (Some(f), Some(mime)) = (&current, l.strip_prefix("ForceType ")) {
            let key = if dir.is_empty() { f.clone() } else { format!("{dir}/{f}") };
            out.stage(&key, Said::Panaccess { mime: &escape_controls(mime.trim()) })?;
        }
    }
    Ok(())
}

fn raw_relative(root: &Path, path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.strip_prefix(root).unwrap_or(path).as_os_str().as_bytes().to_vec()
}

/// `http://<save path>`, with `index.html` standing for the directory (a guess). Works on the
/// raw bytes of the path: HTTrack saved the URL path %-decoded, so spaces, `%`, control
/// characters and bytes outside ASCII are %-encoded again.
fn layout_url(rel: &[u8]) -> String {
    let path = rel.strip_suffix(b"index.html").unwrap_or(rel);
    let split = path.iter().position(|&b| b == b'/').unwrap_or(path.len());
    let (host, rest) = (&path[..split], path.get(split + 1..).unwrap_or(&[]));
    let host = String::from_utf8_lossy(host).replacen('_', ":", 1);
    let mut url = format!("http://{host}/");
    for &b in rest {
        if b <= 0x20 || b >= 0x7f || b == b'%' || b == b'"' || b == b'<' || b == b'>' {
            url.push_str(&format!("%{b:02X}"));
        } else {
            url.push(b as char);
        }
    }
    url
}

/// The URL in an HTTrack `<!-- Mirrored from HOST/PATH by HTTrack Website Copier/... -->`
/// comment near the start of a page.
fn mirrored_from(path: &Path) -> Option<String> {
    let lower = path.to_string_lossy().to_ascii_lowercase();
    if !(lower.ends_with(".html") || lower.ends_with(".htm")) {
        return None;
    }
    let mut buf = Vec::new();
    layout::open_regular(path).ok()?.take(COMMENT_WINDOW).read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let start = text.find("<!-- Mirrored from ")? + "<!-- Mirrored from ".len();
    let rest = &text[start..];
    let end = rest.find(" by HTTrack Website Copier")?;
    let url = rest[..end].trim();
    if url.is_empty() || url.contains(char::is_whitespace) {
        return None;
    }
    Some(if url.contains("://") { url.to_string() } else { format!("http://{url}") })
}

/// Reads `hts-cache/new.zip`: entry name (URL) and the local-header extra field (a
/// pseudo-HTTP header block with `X-Save`), staged for the walked file it saves to.
///
/// Hand-written because HTTrack keeps the headers in the *local* file headers' extra fields,
/// which the zip crate (and Python's zipfile) only expose from the central directory, where
/// they are empty. Entry bodies are not needed (the files themselves are in the mirror), so
/// they are skipped as the file streams by: the names and header blocks are kept, at most
/// [`MAX_CACHE_INDEX`] bytes of them, and only for the files the walk found (`walked`).
/// An `X-Save` name that would leave the instance (absolute, `..`) is dropped: it could only
/// ever select a file the walk found anyway. False when the file is no zip at all (neither
/// empty nor starting with an entry or an empty zip's end record).
fn read_cache_zip(file: File, walked: &MirrorFiles) -> io::Result<Result<bool, ScratchError>> {
    const SIG: [u8; 4] = [0x50, 0x4b, 0x03, 0x04];
    const EMPTY: [u8; 4] = [0x50, 0x4b, 0x05, 0x06];
    let mut r = BufReader::with_capacity(1 << 16, file);
    let mut kept = 0u64;
    let mut sig = [0u8; 4];
    let mut at = 0;
    while at < 4 {
        let n = r.read(&mut sig[at..])?;
        if n == 0 {
            break;
        }
        at += n;
    }
    // A cache cut short (HTTrack killed) ends anywhere: keep what was read. One that does not
    // start as a zip is something else.
    if at == 0 || (at == 4 && sig == EMPTY) {
        return Ok(Ok(true));
    }
    if sig[..at] != SIG[..at] {
        return Ok(Ok(false));
    }
    if at < 4 {
        return Ok(Ok(true));
    }
    loop {
        let mut h = [0u8; 26];
        if !read_full(&mut r, &mut h)? {
            break;
        }
        let u16_at = |p: usize| u16::from_le_bytes([h[p], h[p + 1]]) as usize;
        let flags = u16_at(2);
        let csize = u32::from_le_bytes([h[14], h[15], h[16], h[17]]) as u64;
        let (name_len, extra_len) = (u16_at(22), u16_at(24));
        kept += (name_len + extra_len) as u64;
        if kept > MAX_CACHE_INDEX {
            break;
        }
        let mut name = vec![0u8; name_len];
        let mut extra = vec![0u8; extra_len];
        if !read_full(&mut r, &mut name)? || !read_full(&mut r, &mut extra)? {
            break;
        }
        // The entry name is the URL: bytes that are not UTF-8 and control characters are
        // percent-encoded, as in any URL webaip writes.
        let url = crate::formats::warc::header::uri_text(&name);
        let headers = String::from_utf8_lossy(&extra).into_owned();
        let mut save = None;
        let mut content_type = None;
        for line in headers.split("\r\n") {
            if let Some((k, v)) = line.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "x-save" => save = Some(v.trim().to_string()),
                    "content-type" => content_type = Some(escape_controls(v.trim())),
                    _ => {}
                }
            }
        }
        if let Some(s) = save.and_then(|s| layout::confined_name(&s).ok()) {
            let url = if url.contains("://") { url } else { format!("http://{url}") };
            let said =
                Said::Cache { url: &url, headers: &headers, content_type: content_type.as_deref() };
            if let Err(e) = walked.stage(&s, said) {
                return Ok(Err(e));
            }
        }
        let found = if flags & 0x08 != 0 {
            // Sizes follow the data in a descriptor: find the next local header instead.
            seek_signature(&mut r, &SIG)?
        } else {
            r.seek_relative(csize as i64)?;
            read_full(&mut r, &mut sig)? && sig == SIG
        };
        if !found {
            break;
        }
    }
    Ok(Ok(true))
}

/// Fills `buf`; false when the input ends first.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    match r.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

/// Reads on until just past the next `sig` (whose bytes are all different); false at the end.
fn seek_signature(r: &mut impl BufRead, sig: &[u8; 4]) -> io::Result<bool> {
    let mut matched = 0;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok(false);
        }
        for (i, &b) in chunk.iter().enumerate() {
            matched = if b == sig[matched] { matched + 1 } else { usize::from(b == sig[0]) };
            if matched == sig.len() {
                r.consume(i + 1);
                return Ok(true);
            }
        }
        let n = chunk.len();
        r.consume(n);
    }
}

/// Opens a fixed-name side file of the instance: a regular file of at most [`MAX_SIDE_TEXT`]
/// bytes, or `None` (absent, or refused with the reason in `refused`).
fn open_side_file(root: &Path, name: &str, refused: &mut Refused) -> Option<File> {
    let path = root.join(name);
    // The walk (before) refuses a link or special file too: listed once.
    let refuse = |refused: &mut Refused, why: String| {
        refused.push_once(name, why);
        None
    };
    let file = match layout::open_regular(&path) {
        Ok(f) => f,
        Err(e) if e.is_not_found() => return None,
        Err(e) => return refuse(refused, refusal(&e)),
    };
    match file.metadata() {
        Ok(m) if m.len() > MAX_SIDE_TEXT => {
            refuse(refused, format!("larger than {MAX_SIDE_TEXT} bytes: not read"))
        }
        Ok(_) => Some(file),
        Err(e) => refuse(refused, format!("not read: {e}")),
    }
}

/// `url.map`: `URL^^[PI/date/]save-path` lines, staged for the walked files they name.
fn read_url_map(
    root: &Path,
    pi: Option<&str>,
    instance: &str,
    walked: &MirrorFiles,
    refused: &mut Refused,
) -> Result<(), ScratchError> {
    let Some(file) = open_side_file(root, "url.map", refused) else { return Ok(()) };
    let mut failed = None;
    let read = super::for_each_bounded_line(file, |line| {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\r', '\n']);
        let Some((url, local)) = line.split_once("^^") else { return };
        let mut local = local.trim().to_string();
        for prefix in [pi.map(|p| format!("{p}/{instance}/")), Some(format!("{instance}/"))]
            .into_iter()
            .flatten()
        {
            if let Some(rest) = local.strip_prefix(&prefix) {
                local = rest.to_string();
            }
        }
        if let Ok(local) = layout::confined_name(&local)
            && failed.is_none()
            && let Err(e) = walked.stage(&local, Said::UrlMap { url: &escape_controls(url.trim()) })
        {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if let Err(e) = read {
        refused.push("url.map".into(), format!("not read to the end: {e}"));
    }
    Ok(())
}

/// `hts-cache/new.txt`: tab-separated; time of day, ..., MIME, Etag|Date, URL, local file;
/// staged for the walked files they name.
fn read_new_txt(
    root: &Path,
    walked: &MirrorFiles,
    refused: &mut Refused,
) -> Result<(), ScratchError> {
    let name = "hts-cache/new.txt";
    let Some(file) = open_side_file(root, name, refused) else { return Ok(()) };
    let mut first = true;
    let mut failed = None;
    let read = super::for_each_bounded_line(file, |line| {
        if std::mem::take(&mut first) {
            return; // the column titles
        }
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\r', '\n']);
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 9 || cols[8].is_empty() || failed.is_some() {
            return;
        }
        let (url, mime) = (escape_controls(cols[7]), escape_controls(cols[5]));
        let said = Said::NewTxt { url: &url, mime: &mime, time: cols[0] };
        if let Err(e) = walked.stage(cols[8], said) {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if let Err(e) = read {
        refused.push(name.into(), format!("not read to the end: {e}"));
    }
    Ok(())
}

/// The captures of an instance (or of any mirror read into one): each mirror file, in walk
/// order, a `resource` capture at its recovered URL (read only when written), with a
/// metadata block saying where its URL, time and type came from and the cached HTTP header.
/// The pipeline rewrites its links ([`CaptureSource::link_map`]). The instance's other files
/// are side files; refused files and URLs guessed from the layout are its quirks.
pub struct InstanceCaptures<'a> {
    inst: &'a Instance,
    /// The files read from the list and not yet given, and the last one's sequence number.
    ahead: std::collections::VecDeque<MirrorFile>,
    after: i64,
    quirks: Vec<Quirk>,
    /// Quirks past [`QuirkLog::LIMIT`], only counted.
    dropped: u64,
    /// The site's URL and where it came from ([`Instance::seed`]).
    seed: Option<(String, String)>,
}

/// Files read from the list at a time.
const FILES_AHEAD: usize = 256;

impl<'a> InstanceCaptures<'a> {
    /// The captures of `inst`.
    pub fn new(inst: &'a Instance) -> Result<Self, ScratchError> {
        let mut quirks: Vec<Quirk> = inst
            .refused
            .listed()
            .iter()
            .map(|(file, why)| Quirk {
                file: file.clone(),
                line: None,
                offset: None,
                kind: "refused".into(),
                detail: why.clone(),
            })
            .take(QuirkLog::LIMIT)
            .collect();
        // Kept up to the quirk log's limit and counted beyond: a mirror of a million files
        // none of which has a recorded URL would otherwise hold a million sentences.
        let (guessed, all_guessed) =
            inst.files.guessed(QuirkLog::LIMIT.saturating_sub(quirks.len()))?;
        let dropped = inst.refused.count().saturating_sub(quirks.len() as u64)
            + all_guessed.saturating_sub(guessed.len() as u64);
        quirks.extend(guessed.into_iter().map(|(file, url)| Quirk {
            file,
            line: None,
            offset: None,
            kind: "url-from-layout".into(),
            detail: format!("no record of its URL: {url} is a guess from the host/path layout"),
        }));
        let seed = inst.seed()?;
        Ok(InstanceCaptures { inst, ahead: Default::default(), after: 0, quirks, dropped, seed })
    }
}

/// Where a mirror file's URL came from, in words.
pub(crate) fn url_source_name(s: UrlSource) -> &'static str {
    match s {
        UrlSource::Cache => "hts-cache/new.zip",
        UrlSource::UrlMap => "url.map",
        UrlSource::NewTxt => "hts-cache/new.txt",
        UrlSource::Comment => "HTTrack 'Mirrored from' comment",
        UrlSource::Layout => "host/path layout (a guess)",
        UrlSource::WgetLog => "wget log",
        UrlSource::UrlPrefix => "--url-prefix and the host/path layout",
    }
}

impl MirrorFile {
    /// Where it is, below the instance's `root`.
    pub fn path(&self, root: &Path) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        match &self.raw_relative {
            Some(raw) => root.join(std::ffi::OsStr::from_bytes(raw)),
            None => root.join(&self.save_path),
        }
    }

    /// Where its capture time came from, and whether that is a stand-in for its own fetch
    /// time (the instance directory's time, a crawl's start, `--capture-date`).
    fn date_source(&self) -> DateSource {
        let label = self.capture_source.as_deref().map(str::to_string).unwrap_or_else(|| {
            if self.capture_from_cache { "hts-cache/new.txt" } else { "instance directory name" }
                .to_string()
        });
        let inferred = !self.capture_from_cache
            && self
                .capture_source
                .as_deref()
                .is_none_or(|s| s.contains("inferred") || s == "--capture-date");
        DateSource { label, inferred }
    }

    /// The capture it becomes.
    fn capture(&self, root: &Path) -> Capture {
        let date_source = self.date_source();
        // Every value from input goes through warc_fields_line: a name holding CR LF cannot
        // add a line to the block.
        let mut fields = [
            warc_fields_line("mirror-path", &self.save_path),
            warc_fields_line("url-source", url_source_name(self.url_source)),
            warc_fields_line("capture-time-source", &date_source.label),
            warc_fields_line("mime-source", &self.mime_source),
        ]
        .concat();
        if let Some(h) = &self.cache_headers {
            for line in h.split("\r\n").filter(|l| !l.is_empty()) {
                fields.push_str(&warc_fields_line("cache-header", line));
            }
        }
        Capture {
            uri: self.url.clone(),
            date: self.capture,
            date_source,
            ip: None,
            kind: CaptureKind::Resource,
            http_header: None,
            content_type: Some(self.mime.to_string()),
            payload: Payload::File { path: self.path(root), len: self.size },
            truncated: None,
            provenance: Provenance {
                file: self.save_path.clone(),
                offset: None,
                offset_in_member: None,
            },
            warc_fields: vec![("X-Webaip-Mirror-Path".into(), self.save_path.clone())],
            metadata: Some(fields.into_bytes()),
        }
    }
}

impl Drop for InstanceCaptures<'_> {
    fn drop(&mut self) {
        self.inst.files.release_memory();
    }
}

impl Iterator for InstanceCaptures<'_> {
    type Item = Result<Capture, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ahead.is_empty() {
            match self.inst.files.chunk(self.after, FILES_AHEAD) {
                Ok(files) => {
                    self.after = files.last().map_or(self.after, |&(seq, _)| seq);
                    self.ahead.extend(files.into_iter().map(|(_, f)| f));
                }
                Err(e) => return Some(Err(e.into())),
            }
        }
        let f = self.ahead.pop_front()?;
        Some(Ok(f.capture(&self.inst.root)))
    }
}

impl CaptureSource for InstanceCaptures<'_> {
    fn shape_name(&self) -> &'static str {
        match self.inst.stem.split('-').next() {
            Some("wget") => "wget",
            Some("httrack") => "httrack",
            _ => "pandas",
        }
    }

    fn quirks(&self) -> &[Quirk] {
        &self.quirks
    }

    fn quirks_dropped(&self) -> u64 {
        self.dropped
    }

    fn refusals(&self) -> (&[(String, String)], u64) {
        (self.inst.refused.listed(), self.inst.refused.count())
    }

    fn side_files(&self) -> Vec<SideFile> {
        self.inst
            .aux
            .iter()
            .map(|a| SideFile { path: a.path.clone(), relative: a.relative.clone() })
            .collect()
    }

    fn seeds(&self) -> Vec<String> {
        self.seed.iter().map(|(url, _)| url.clone()).collect()
    }

    fn seeds_from(&self) -> String {
        self.seed.as_ref().map(|(_, from)| from.clone()).unwrap_or_else(|| "the mirror".into())
    }

    fn description(&self) -> String {
        format!("{}: mirror files at their original URLs, links made absolute", self.inst.label)
    }

    fn container_stem(&self) -> Option<String> {
        Some(self.inst.stem.clone())
    }

    fn source_name(&self) -> Option<String> {
        Some(self.inst.name.clone())
    }

    fn id_seed(&self) -> Option<(String, SeedFiles<'_>)> {
        let inst = self.inst;
        let mut after = 0i64;
        let mut ahead = std::collections::VecDeque::new();
        // The mirror files a chunk at a time from the list, then the instance's other files.
        let mirror = std::iter::from_fn(move || {
            if ahead.is_empty() {
                match inst.files.chunk(after, FILES_AHEAD) {
                    Ok(files) => {
                        after = files.last().map_or(after, |&(seq, _)| seq);
                        ahead.extend(files.into_iter().map(|(_, f)| f));
                    }
                    Err(e) => return Some(Err(CaptureError::from(e))),
                }
            }
            let f = ahead.pop_front()?;
            Some(Ok((f.save_path.clone(), f.path(&inst.root))))
        });
        let aux = inst
            .aux
            .iter()
            .map(|a| Ok((layout::in_dir(layout::LOGS_DIR, &a.relative), a.path.clone())));
        let kind = format!("webaip-pandas/{}/{}", inst.pi.as_deref().unwrap_or(""), inst.name);
        Some((kind, Box::new(mirror.chain(aux))))
    }

    fn link_map(&self) -> Option<LinkMap> {
        Some(self.inst.files.link_map())
    }
}

impl Instance {
    /// The site's URL and where it came from: what a reader established (a wget log,
    /// `--url-prefix`), else `hts-log.txt`'s "launched on ... at URL", else the URL of the
    /// mirror's root page ([`Instance::root_page`]). Never a page because it sorts first: a
    /// sub-folder's `about/index.html` sorts before the host's own `index.html`.
    pub fn seed(&self) -> Result<Option<(String, String)>, ScratchError> {
        if let Some(site) = &self.site {
            return Ok(Some(site.clone()));
        }
        let log = self.root.join("hts-log.txt");
        let mut text = String::new();
        if let Ok(mut f) = layout::open_regular(&log) {
            let mut buf = vec![0u8; 4096];
            let n = f.read(&mut buf).unwrap_or(0);
            text = String::from_utf8_lossy(&buf[..n]).into_owned();
        }
        if let Some(line) = text.lines().find(|l| l.contains(" launched on "))
            && let Some(url) = line.rsplit(" at ").next()
        {
            let url = url.trim();
            if url.contains("://") {
                return Ok(Some((url.to_string(), "hts-log.txt (the crawl's start URL)".into())));
            }
        }
        Ok(self.root_page()?.map(|root| {
            let from = format!("the mirror's root page {} (a guess)", root.save_path);
            (root.url, from)
        }))
    }

    /// The mirror's root page: the shallowest page, a directory's `index.html` before other
    /// pages of its depth (so the host's own `index.html` when there is one); the shallowest
    /// file when no file is a page.
    pub fn root_page(&self) -> Result<Option<MirrorFile>, ScratchError> {
        fn key(f: &MirrorFile) -> (bool, usize, bool, usize, &str) {
            let is_page =
                f.mime.starts_with("text/html") || f.mime.starts_with("application/xhtml");
            let p = f.save_path.as_str();
            let index = p.rsplit('/').next().is_some_and(|n| n.starts_with("index."));
            (!is_page, p.matches('/').count(), !index, p.len(), p)
        }
        let mut best: Option<MirrorFile> = None;
        self.files.for_each(|f| {
            if best.as_ref().is_none_or(|b| key(f) < key(b)) {
                best = Some(f.clone());
            }
            std::ops::ControlFlow::Continue(())
        })?;
        Ok(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_names_and_zones() {
        assert!(parse_instance_name("20210223-0954").is_some());
        assert!(parse_instance_name("20020113").is_some());
        assert!(parse_instance_name("2021-02-23").is_none());
        let t = parse_instance_name("20210223-0954").unwrap();
        assert_eq!(Zone::parse("UTC").unwrap().to_utc(t).to_rfc3339(), "2021-02-23T09:54:00+00:00");
        assert_eq!(
            Zone::parse("Australia/Sydney").unwrap().to_utc(t).to_rfc3339(),
            "2021-02-22T22:54:00+00:00"
        );
        assert_eq!(
            Zone::parse("+10:00").unwrap().to_utc(t).to_rfc3339(),
            "2021-02-22T23:54:00+00:00"
        );
        assert!(Zone::parse("Mars/Olympus").is_err());
    }

    #[test]
    fn layout_urls() {
        assert_eq!(layout_url(b"www.e.org/index.html"), "http://www.e.org/");
        assert_eq!(layout_url(b"www.e.org/a b/c.html"), "http://www.e.org/a%20b/c.html");
        assert_eq!(layout_url(b"www.e.org_8080/x.html"), "http://www.e.org:8080/x.html");
        assert_eq!(layout_url(b"www.e.org/100%/caf\xe9.txt"), "http://www.e.org/100%25/caf%E9.txt");
    }
}

#[cfg(test)]
mod bounds_tests;
