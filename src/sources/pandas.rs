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

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use serde::Serialize;

/// Where a file's original URL came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UrlSource {
    /// `hts-cache/new.zip` (entry name, matched by `X-Save`).
    Cache,
    /// `url.map`.
    UrlMap,
    /// `hts-cache/new.txt`.
    NewTxt,
    /// The `<!-- Mirrored from ... -->` comment in the page.
    Comment,
    /// The `<host>/<path>` layout: a guess.
    Layout,
}

/// One file of the mirror.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its save path relative to the instance (`/`-separated; bytes that are not UTF-8 are
    /// percent-encoded).
    pub save_path: String,
    /// The recovered original URL.
    pub url: String,
    /// Where the URL came from.
    pub url_source: UrlSource,
    /// MIME type (cache, `.panaccess-mime.types`, `new.txt`, extension, in that order).
    pub mime: String,
    /// When it was captured.
    pub capture: DateTime<Utc>,
    /// True when the capture time came from the cache (`new.txt`); else the instance time.
    pub capture_from_cache: bool,
    /// The cached pseudo-HTTP header block (`new.zip` extra field), if any.
    pub cache_headers: Option<String>,
    /// Size in bytes.
    pub size: u64,
}

/// A file of the instance that is not part of the mirror (cache, logs, HTTrack artefacts).
#[derive(Debug, Clone, Serialize)]
pub struct InstanceAux {
    /// Where it is.
    pub path: PathBuf,
    /// Relative path in the instance.
    pub relative: String,
}

/// A PANDAS instance.
#[derive(Debug, Clone, Serialize)]
pub struct Instance {
    /// The instance directory.
    pub root: PathBuf,
    /// The PANDAS title number (the parent directory's name), when it is one.
    pub pi: Option<String>,
    /// The instance directory name (`YYYYMMDD-HHMM`).
    pub name: String,
    /// The instance time, in UTC.
    pub time: DateTime<Utc>,
    /// Mirror files, by save path.
    pub files: Vec<MirrorFile>,
    /// Other files.
    pub aux: Vec<InstanceAux>,
    /// Files refused, and why (symlinks, special files).
    pub refused: Vec<(String, String)>,
    /// Files per URL source.
    pub url_sources: HashMap<String, u64>,
    /// What was found.
    pub found: Vec<String>,
    /// What such an instance usually holds but this one lacks.
    pub missing: Vec<String>,
}

/// True when `dir` looks like a PANDAS instance (`YYYYMMDD` or `YYYYMMDD-HHMM`, holding a
/// host directory or an HTTrack cache).
pub fn is_instance(dir: &Path) -> bool {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    parse_instance_name(&name).is_some()
        && (dir.join("hts-cache").is_dir()
            || dir.join("hts-log.txt").is_file()
            || has_host_dir(dir))
}

fn has_host_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .any(|e| e.path().is_dir() && looks_like_host(&e.file_name().to_string_lossy()))
        })
        .unwrap_or(false)
}

fn looks_like_host(name: &str) -> bool {
    name != "hts-cache" && (name.contains('.') || name.contains('_')) && !name.starts_with('.')
}

/// `YYYYMMDD-HHMM` (or legacy `YYYYMMDD`) as a local date-time.
pub fn parse_instance_name(name: &str) -> Option<NaiveDateTime> {
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
    pub fn parse(s: &str) -> Result<Zone, String> {
        if s.eq_ignore_ascii_case("utc") || s == "Z" {
            return Ok(Zone::Utc);
        }
        if let Ok(off) = s.parse::<chrono::FixedOffset>() {
            return Ok(Zone::Fixed(off));
        }
        s.parse::<chrono_tz::Tz>().map(Zone::Named).map_err(|_| format!("unknown time zone {s:?}"))
    }

    /// A local date-time in this zone, in UTC (the earlier time when ambiguous).
    pub fn to_utc(&self, t: NaiveDateTime) -> DateTime<Utc> {
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

struct CacheEntry {
    url: String,
    headers: String,
    content_type: Option<String>,
}

/// Reads an instance directory.
pub fn read_instance(root: &Path, zone: Zone) -> Result<Instance, String> {
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let local = parse_instance_name(&name)
        .ok_or_else(|| format!("{}: not an instance directory (YYYYMMDD-HHMM)", root.display()))?;
    let time = zone.to_utc(local);
    let pi = root
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()));
    let mut found = vec![format!(
        "PANDAS instance {name}{}",
        pi.as_ref().map(|p| format!(" of title {p}")).unwrap_or_default()
    )];
    let mut missing = Vec::new();
    let cache = root.join("hts-cache/new.zip");
    let cache_entries = if cache.is_file() {
        found.push("hts-cache/new.zip".into());
        read_cache_zip(&cache).map_err(|e| format!("{}: {e}", cache.display()))?
    } else {
        missing.push("hts-cache/new.zip (URLs and headers from the HTTrack cache)".into());
        HashMap::new()
    };
    let url_map = read_url_map(&root.join("url.map"), pi.as_deref(), &name);
    if url_map.is_empty() {
        missing.push("url.map".into());
    } else {
        found.push("url.map".into());
    }
    let new_txt = read_new_txt(&root.join("hts-cache/new.txt"));
    if new_txt.is_empty() {
        missing.push("hts-cache/new.txt (capture times)".into());
    } else {
        found.push("hts-cache/new.txt".into());
    }
    for f in ["hts-log.txt", "hts-cache/doit.log", "hts-cache/new.lst"] {
        if root.join(f).is_file() {
            found.push(f.into());
        }
    }

    let mut files = Vec::new();
    let mut aux = Vec::new();
    let mut refused = Vec::new();
    let mut panaccess: HashMap<String, String> = HashMap::new();
    let walk = walkdir::WalkDir::new(root).sort_by_file_name().follow_links(false);
    let mut entries = Vec::new();
    for e in walk {
        let e = e.map_err(|e| e.to_string())?;
        entries.push(e);
    }
    // .panaccess-mime.types first: they override MIME types of their directory.
    for e in &entries {
        if e.file_type().is_file() && e.file_name() == ".panaccess-mime.types" {
            let dir = relative_of(root, e.path().parent().unwrap_or(root));
            if let Ok(text) = std::fs::read_to_string(e.path()) {
                let mut current: Option<String> = None;
                for line in text.lines() {
                    let l = line.trim();
                    if let Some(rest) =
                        l.strip_prefix("<Files \"").and_then(|r| r.strip_suffix("\">"))
                    {
                        current = Some(rest.to_string());
                    } else if let (Some(f), Some(mime)) = (&current, l.strip_prefix("ForceType ")) {
                        let key = if dir.is_empty() { f.clone() } else { format!("{dir}/{f}") };
                        panaccess.insert(key, mime.trim().to_string());
                    }
                }
            }
        }
    }
    for e in entries {
        let rel = relative_of(root, e.path());
        if rel.is_empty() {
            continue;
        }
        let ft = e.file_type();
        if ft.is_symlink() {
            refused.push((
                rel,
                "symbolic link: not followed (it may point outside the instance)".into(),
            ));
            continue;
        }
        if !ft.is_file() {
            if !ft.is_dir() {
                refused.push((rel, "not a regular file".into()));
            }
            continue;
        }
        let first = rel.split('/').next().unwrap_or("");
        let in_host_dir = rel.contains('/') && looks_like_host(first) && first != "hts-cache";
        let is_meta = rel.ends_with(".panaccess-mime.types");
        if !in_host_dir || is_meta {
            aux.push(InstanceAux { path: e.path().to_path_buf(), relative: rel });
            continue;
        }
        let size = e.metadata().map(|m| m.len()).unwrap_or(0);
        let cached = cache_entries.get(&rel);
        let (url, url_source) = if let Some(c) = cached {
            (c.url.clone(), UrlSource::Cache)
        } else if let Some(u) = url_map.get(&rel) {
            (u.clone(), UrlSource::UrlMap)
        } else if let Some(t) = new_txt.get(&rel) {
            (t.url.clone(), UrlSource::NewTxt)
        } else if let Some(u) = mirrored_from(e.path()) {
            (u, UrlSource::Comment)
        } else {
            (layout_url(&raw_relative(root, e.path())), UrlSource::Layout)
        };
        let ext_mime = mime_by_extension(&rel);
        let mime = cached
            .and_then(|c| c.content_type.clone())
            .or_else(|| panaccess.get(&rel).cloned())
            .or_else(|| new_txt.get(&rel).map(|t| t.mime.clone()).filter(|m| m.contains('/')))
            .unwrap_or_else(|| ext_mime.to_string());
        let (capture, capture_from_cache) = match new_txt.get(&rel).and_then(|t| t.time) {
            Some(tod) => {
                // new.txt holds the time of day only: the instance date, or the next day when
                // the crawl ran past midnight.
                let mut at = local.date().and_time(tod);
                if tod < local.time() {
                    at += chrono::Duration::days(1);
                }
                (zone.to_utc(at), true)
            }
            None => (time, false),
        };
        files.push(MirrorFile {
            path: e.path().to_path_buf(),
            save_path: rel,
            url,
            url_source,
            mime,
            capture,
            capture_from_cache,
            cache_headers: cached.map(|c| c.headers.clone()),
            size,
        });
    }
    let mut url_sources: HashMap<String, u64> = HashMap::new();
    for f in &files {
        let key = serde_json::to_value(f.url_source)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *url_sources.entry(key).or_default() += 1;
    }
    if files.is_empty() {
        return Err(format!("{}: no mirrored file (no <host>/ directory)", root.display()));
    }
    Ok(Instance {
        root: root.to_path_buf(),
        pi,
        name,
        time,
        files,
        aux,
        refused,
        url_sources,
        found,
        missing,
    })
}

fn raw_relative(root: &Path, path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.strip_prefix(root).unwrap_or(path).as_os_str().as_bytes().to_vec()
}

fn relative_of(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut parts = Vec::new();
    for c in rel.components() {
        let os = c.as_os_str();
        parts.push(match os.to_str() {
            Some(s) => s.to_string(),
            None => {
                use std::os::unix::ffi::OsStrExt;
                os.as_bytes()
                    .iter()
                    .map(|&b| {
                        if b.is_ascii() && b >= 0x20 && b != b'%' {
                            (b as char).to_string()
                        } else {
                            format!("%{b:02X}")
                        }
                    })
                    .collect()
            }
        });
    }
    parts.join("/")
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
    let mut buf = vec![0u8; 64 * 1024];
    let n = File::open(path).ok()?.read(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf[..n]);
    let start = text.find("<!-- Mirrored from ")? + "<!-- Mirrored from ".len();
    let rest = &text[start..];
    let end = rest.find(" by HTTrack Website Copier")?;
    let url = rest[..end].trim();
    if url.is_empty() || url.contains(char::is_whitespace) {
        return None;
    }
    Some(if url.contains("://") { url.to_string() } else { format!("http://{url}") })
}

/// MIME type by file extension (for files the cache does not describe).
pub fn mime_by_extension(path: &str) -> &'static str {
    let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" | "shtml" => "text/html",
        "css" => "text/css",
        "js" => "application/javascript",
        "png" => "image/png",
        "gif" => "image/gif",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "xml" => "text/xml",
        "json" => "application/json",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Reads `hts-cache/new.zip`: entry name (URL) and the local-header extra field (a
/// pseudo-HTTP header block with `X-Save`), keyed by the save path.
///
/// Hand-written because HTTrack keeps the headers in the *local* file headers' extra fields,
/// which the zip crate (and Python's zipfile) only expose from the central directory, where
/// they are empty. Entry bodies are not needed: the files themselves are in the mirror.
fn read_cache_zip(path: &Path) -> Result<HashMap<String, CacheEntry>, String> {
    let data = std::fs::read(path).map_err(|e| e.to_string())?;
    let mut out = HashMap::new();
    let mut i = 0usize;
    let u16_at =
        |d: &[u8], p: usize| d.get(p..p + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |d: &[u8], p: usize| {
        d.get(p..p + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    while i + 30 <= data.len() && data[i..i + 4] == [0x50, 0x4b, 0x03, 0x04] {
        let flags = u16_at(&data, i + 6).unwrap_or(0);
        let csize = u32_at(&data, i + 18).unwrap_or(0);
        let name_len = u16_at(&data, i + 26).unwrap_or(0);
        let extra_len = u16_at(&data, i + 28).unwrap_or(0);
        let name_start = i + 30;
        let extra_start = name_start + name_len;
        let data_start = extra_start + extra_len;
        if data_start > data.len() {
            break; // a cache cut short (HTTrack killed): keep what was read
        }
        let url = String::from_utf8_lossy(&data[name_start..extra_start]).into_owned();
        let headers = String::from_utf8_lossy(&data[extra_start..data_start]).into_owned();
        let mut save = None;
        let mut content_type = None;
        for line in headers.split("\r\n") {
            if let Some((k, v)) = line.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "x-save" => save = Some(v.trim().to_string()),
                    "content-type" => content_type = Some(v.trim().to_string()),
                    _ => {}
                }
            }
        }
        if let Some(s) = save {
            let url = if url.contains("://") { url } else { format!("http://{url}") };
            out.insert(s, CacheEntry { url, headers, content_type });
        }
        if flags & 0x08 != 0 {
            // Sizes follow the data in a descriptor: find the next local header instead.
            match data[data_start..].windows(4).position(|w| w == [0x50, 0x4b, 0x03, 0x04]) {
                Some(p) => i = data_start + p,
                None => break,
            }
        } else {
            i = data_start + csize;
        }
    }
    Ok(out)
}

/// `url.map`: `URL^^[PI/date/]save-path` lines.
fn read_url_map(path: &Path, pi: Option<&str>, instance: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read(path) else { return out };
    for line in String::from_utf8_lossy(&text).lines() {
        let Some((url, local)) = line.split_once("^^") else { continue };
        let mut local = local.trim().to_string();
        for prefix in [pi.map(|p| format!("{p}/{instance}/")), Some(format!("{instance}/"))]
            .into_iter()
            .flatten()
        {
            if let Some(rest) = local.strip_prefix(&prefix) {
                local = rest.to_string();
            }
        }
        out.insert(local, url.trim().to_string());
    }
    out
}

struct NewTxt {
    url: String,
    mime: String,
    time: Option<NaiveTime>,
}

/// `hts-cache/new.txt`: tab-separated; time of day, ..., MIME, Etag|Date, URL, local file.
fn read_new_txt(path: &Path) -> HashMap<String, NewTxt> {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read(path) else { return out };
    for line in String::from_utf8_lossy(&text).lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 9 || cols[8].is_empty() {
            continue;
        }
        out.insert(
            cols[8].to_string(),
            NewTxt {
                url: cols[7].to_string(),
                mime: cols[5].to_string(),
                time: NaiveTime::parse_from_str(cols[0], "%H:%M:%S").ok(),
            },
        );
    }
    out
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
