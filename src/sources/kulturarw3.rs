//! Kulturarw3 archives (INPUT_FORMATS.md §4): the Swedish National Library's storage of one
//! MIME multipart file per fetched URL, `archive/<hh>/<host>/<snapshot>/<md5url>.<epoch>`.
//!
//! Each file is an `ArchiveInfo` header block (the harvester's fields), then parts delimited by
//! `--<boundary>` lines: `Header` (the HTTP response header as received, status line to the
//! empty line) and `Content` (the body as raw bytes, omitted for an empty body), then
//! `\n--<boundary>--\n`. Heritrix's `Kw3WriterProcessor` writes this variant; the older v0.01
//! files name the same things `HTTP-part`, `header-info`, `content`, `HTTP-IP-addr`.
//!
//! A file becomes one [`Capture`]: a `response` whose header bytes are the Header part and
//! whose payload is a [`Payload::Segment`] of the file (the Content part, never read into
//! memory), dated by the file name's epoch (the fetch's begin), with a concurrent `metadata`
//! block holding the ArchiveInfo lines verbatim and where the file was. A Header part that is
//! not HTTP makes a `resource` typed by the Content part.
//!
//! Where the bytes go (nothing is lost): the Header part is the capture's header, the Content
//! part its payload, the ArchiveInfo lines and the part header lines are copied verbatim into
//! the metadata block (with the offsets of header and payload), the delimiter lines follow from
//! the boundary. The line break before a delimiter is the delimiter's (RFC 2046), LF or CRLF,
//! so a payload is the body without it whichever line ends the file uses (`content_end`;
//! where a CR could be either, `HTTP-Content-MD5` decides and the choice is a quirk). Bytes that belong to no part (a preamble, an epilogue after the closing
//! delimiter, an unknown part, a Header part that is not HTTP) are reported as a quirk with
//! offset and length and carried base64'd in the metadata block (`kw3-unparted`) when they
//! total at most [`MAX_INLINE_UNPARTED`]; beyond that the whole file is also kept byte-exact as
//! a side file. A file that cannot be read as Kulturarw3 at all (no header block within
//! [`MAX_HEADER_BLOCK`], no boundary, no URL, parts beyond [`MAX_PREFIX`]) is refused as a
//! capture, reported with its offset, and kept whole as a side file. A file without a closing
//! delimiter (a write that was cut off) is read to its end and reported.
//!
//! The walk is lazy and sorted by name, and follows no link: links, FIFOs, devices, paths over
//! `PATH_MAX` and files that cannot be read are refused and reported by name, as is a file
//! whose `HTTP-URL` is no absolute URI (empty, `null`, a path): each is listed
//! ([`CaptureSource::refusals`]: the run exits 1) and costs itself only. Quirks go through the
//! one bounded log (`QuirkLog`), at most 100 of a kind while one file is parsed, and at most
//! [`MAX_FIELDS`] fields of a header block are read. A date a WARC cannot state (an epoch past
//! 9999) is not used: the file is dated by `HTTP-Archive-Time` (inferred) or refused.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use md5::Md5;
use sha1::{Digest, Sha1};

use super::capture::{CaptureError, CaptureSource, FileQuirks, QuirkLog, SideFile};
use crate::capture::{Capture, CaptureKind, DateSource, Payload, Provenance, Quirk};
use crate::formats::dates::warc_date_stateable;
use crate::formats::http::{self, MAX_HTTP_HEADER_LEN};
use crate::formats::multipart::{Delim, boundary_param, find_delimiter};
use crate::formats::warc::header::{target_uri, uri_text, warc_fields_line};
use crate::formats::warc::payload::is_http_uri;
use crate::layout;

/// Longest top-level header block read (the ArchiveInfo fields up to the first empty line); a
/// file with no empty line within it is refused.
pub const MAX_HEADER_BLOCK: usize = 1 << 20;
/// Longest stretch read into memory from the start of a file: the header block and every part
/// before the Content part (the HTTP header) must fit in it.
pub const MAX_PREFIX: usize = 2 << 20;
/// Most bytes outside any part carried base64'd in the metadata block; beyond it the whole
/// file is kept as a side file.
pub const MAX_INLINE_UNPARTED: u64 = 64 << 10;
/// Heritrix's `maxFileSizeBytes` default: bodies beyond it were cut there.
pub(crate) const HERITRIX_MAX_BODY: u64 = 100_000_000;
/// Chunk size when scanning a body backwards for its closing delimiter or hashing it.
const CHUNK: usize = 64 << 10;
/// Most fields of a header block (or a part's header) parsed (as a WARC header's 4096):
/// lines beyond are kept verbatim in the metadata but not looked up, so that a 1 MiB block of
/// 300,000 `a:` lines holds no 300,000 fields.
pub const MAX_FIELDS: usize = 4096;

/// The date label of a capture dated by its file name.
pub const DATE_FROM_NAME: &str = "file name epoch (fetch begin)";
/// The date label of a capture dated by `HTTP-Archive-Time`.
pub const DATE_FROM_ARCHIVE_TIME: &str =
    "HTTP-Archive-Time (when the file was written, after the fetch)";

/// True when `dir` is a Kulturarw3 archive: it holds an `archive/` directory that is one, or
/// holds `<hh>/<host>/<snapshot>/<md5url>.<epoch>` files itself (`hh` two lowercase hex
/// digits, the file name 32 lowercase hex digits, a dot and digits). Links are not followed.
pub fn is_kulturarw3(dir: &Path) -> bool {
    let archive = dir.join("archive");
    let base = if std::fs::symlink_metadata(&archive).is_ok_and(|m| m.is_dir()) {
        archive
    } else {
        dir.to_path_buf()
    };
    walkdir::WalkDir::new(&base)
        .follow_links(false)
        .min_depth(1)
        .max_depth(4)
        .into_iter()
        .filter_entry(|e| match e.depth() {
            1 => e.file_type().is_dir() && is_hh(e.file_name().as_bytes()),
            2 | 3 => e.file_type().is_dir(),
            _ => true,
        })
        .filter_map(Result::ok)
        .any(|e| {
            e.depth() == 4
                && e.file_type().is_file()
                && split_name(e.file_name().as_bytes()).is_some_and(|(_, epoch)| epoch.is_some())
        })
}

fn is_hh(name: &[u8]) -> bool {
    name.len() == 2 && name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `<32 lowercase hex>` or `<32 lowercase hex>.<digits>`: the MD5 and the epoch digits.
fn split_name(name: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let md5 = name.get(..32)?;
    if !md5.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    match &name[32..] {
        [] => Some((md5, None)),
        [b'.', digits @ ..] if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) => {
            Some((md5, Some(digits)))
        }
        _ => None,
    }
}

fn md5_hex(bytes: &[u8]) -> String {
    crate::formats::digest::hex(&Md5::digest(bytes))
}

/// Bytes as text, one char per byte (ISO-8859-1: lossless for header text).
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

/// A Kulturarw3 archive read as captures, one per file, in name order.
pub struct Kulturarw3Archive {
    root: PathBuf,
    /// True when `root` holds `archive/` (the walk's paths then start with it).
    under_archive: bool,
    walk: walkdir::IntoIter,
    check_digests: bool,
    quirks: QuirkLog,
    side: Vec<SideFile>,
    taken: HashSet<String>,
}

impl std::fmt::Debug for Kulturarw3Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kulturarw3Archive").field("root", &self.root).finish_non_exhaustive()
    }
}

impl Kulturarw3Archive {
    /// Opens the archive at `root` (the directory holding `archive/`, or `archive/` itself):
    /// nothing is read until the captures are asked for.
    pub fn open(root: &Path) -> Result<Self, CaptureError> {
        let meta = std::fs::metadata(root)
            .map_err(|e| CaptureError::Io { path: root.to_path_buf(), source: e })?;
        if !meta.is_dir() {
            return Err(CaptureError::NotADirectory {
                path: root.to_path_buf(),
                layout: "a Kulturarw3 archive is a directory tree",
            });
        }
        let under_archive =
            std::fs::symlink_metadata(root.join("archive")).is_ok_and(|m| m.is_dir());
        let walk = walkdir::WalkDir::new(root)
            .follow_links(false)
            .sort_by_file_name()
            .min_depth(1)
            .into_iter();
        Ok(Self {
            root: root.to_path_buf(),
            under_archive,
            walk,
            check_digests: true,
            quirks: QuirkLog::default(),
            side: Vec::new(),
            taken: HashSet::new(),
        })
    }

    /// Whether `HTTP-Content-MD5` is checked against the stored body (a second read of every
    /// payload; on by default).
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn check_digests(mut self, on: bool) -> Self {
        self.check_digests = on;
        self
    }

    fn quirk(&mut self, file: &str, offset: Option<u64>, kind: &str, detail: String) {
        self.quirks.note(file, None, offset, kind, detail);
    }

    /// One walked entry: a capture, nothing (a directory, a side file, a refusal), or an
    /// error that stops the file from being read at all.
    fn visit(
        &mut self,
        entry: walkdir::Result<walkdir::DirEntry>,
    ) -> Result<Option<Capture>, CaptureError> {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                self.refuse_unreadable(&e);
                return Ok(None);
            }
        };
        let path = entry.path().to_path_buf();
        let rel = super::name_text(&self.root, &path);
        let comps: Vec<&[u8]> = path
            .strip_prefix(&self.root)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().as_bytes())
            .collect();
        // The components below the archive directory, or None outside it.
        let kw3: Option<&[&[u8]]> = if self.under_archive {
            (comps.first() == Some(&&b"archive"[..])).then(|| &comps[1..])
        } else {
            Some(&comps[..])
        };
        let ft = entry.file_type();
        if ft.is_dir() {
            if let Some(k) = kw3 {
                self.check_directory(&rel, k);
            }
            return Ok(None);
        }
        let Some(size) = self.take_file(&path, &rel, ft.is_file()) else { return Ok(None) };
        match kw3 {
            Some(&[hh, host, snapshot, name]) if split_name(name).is_some() => {
                let kw3_path = [hh, host, snapshot, name].join(&b'/');
                let kw3_path = Path::new(std::ffi::OsStr::from_bytes(&kw3_path));
                let place = Place {
                    path: &path,
                    rel: &rel,
                    kw3_path: super::name_text(Path::new(""), kw3_path),
                    snapshot: latin1(snapshot),
                    name,
                    size,
                };
                self.read_capture(place)
            }
            Some(_) => {
                let why = "not a <hh>/<host>/<snapshot>/<md5url>.<epoch> file: kept as a side file";
                self.quirk(&rel, None, "unexpected-file", why.into());
                self.side.push(SideFile { path, relative: rel });
                Ok(None)
            }
            // Beside archive/: the harvest's own files (logs, lists), kept as they are.
            None => {
                self.side.push(SideFile { path, relative: rel });
                Ok(None)
            }
        }
    }

    /// Refuses an entry the walk could not read, saying why.
    fn refuse_unreadable(&mut self, e: &walkdir::Error) {
        let rel = e.path().map(|p| super::name_text(&self.root, p)).unwrap_or_default();
        let why = match e.io_error().and_then(io::Error::raw_os_error) {
            Some(libc::ENAMETOOLONG) => "its path is longer than PATH_MAX: not read".into(),
            _ => format!("not read: {}", e.io_error().map_or(e.to_string(), |x| x.to_string())),
        };
        self.quirks.refuse(&rel, None, "unreadable-entry", why);
    }

    /// The size of a file the walk met, once it is known to be a regular file reached without
    /// links and not met before; `None` (and a refusal) otherwise.
    fn take_file(&mut self, path: &Path, rel: &str, is_file: bool) -> Option<u64> {
        if !is_file {
            let why = match layout::regular_metadata(path) {
                Err(e) => super::refusal(&e),
                Ok(_) => "changed while walked: not read".into(),
            };
            self.quirks.refuse(rel, None, "refused-entry", why);
            return None;
        }
        match super::take_regular(path, rel, &mut self.taken) {
            Ok(meta) => Some(meta.len()),
            Err(why) => {
                self.quirks.refuse(rel, None, "refused-entry", why.to_string());
                None
            }
        }
    }

    /// Reports what a directory's name says: a `current` snapshot (still being written), a
    /// `host:port` name, an `hh` that is not MD5(host)'s first two hex digits.
    fn check_directory(&mut self, rel: &str, k: &[&[u8]]) {
        match k {
            [hh] if !is_hh(hh) => self.quirk(
                rel,
                None,
                "unexpected-directory",
                "not two lowercase hex digits: files below it are kept as side files".into(),
            ),
            [hh, host] => {
                if let Some(colon) = host.iter().rposition(|&b| b == b':') {
                    self.quirk(
                        rel,
                        None,
                        "host-port-directory",
                        format!(
                            "host directory names port {} (Heritrix appends a port other than 80)",
                            latin1(&host[colon + 1..])
                        ),
                    );
                }
                let want = md5_hex(host);
                if is_hh(hh) && !want.as_bytes().starts_with(hh) {
                    self.quirk(
                        rel,
                        None,
                        "hh-mismatch",
                        format!(
                            "MD5 of the host name starts {}, the directory is {}",
                            &want[..2],
                            latin1(hh)
                        ),
                    );
                }
            }
            [_, _, snapshot] => {
                if *snapshot == b"current" {
                    self.quirk(
                        rel,
                        None,
                        "current-snapshot",
                        "snapshot directory `current`: Heritrix was still writing it (the \
                         snapshot number was never assigned)"
                            .into(),
                    );
                } else if !snapshot.iter().all(u8::is_ascii_digit) {
                    self.quirk(
                        rel,
                        None,
                        "unexpected-snapshot-name",
                        "snapshot directory is neither a number nor `current`".into(),
                    );
                }
            }
            _ => {}
        }
    }

    /// Refuses `place` as a capture: reported with the offset, kept whole as a side file.
    fn refuse(&mut self, place: &Place<'_>, offset: u64, detail: String) -> Option<Capture> {
        self.quirks.refuse(
            place.rel,
            Some(offset),
            "refused-file",
            format!("{detail}: not read as a capture, kept byte-exact as a side file"),
        );
        self.side
            .push(SideFile { path: place.path.to_path_buf(), relative: place.rel.to_string() });
        None
    }

    /// Reads one file as a capture; a file that cannot be read (an I/O error on the way) is
    /// refused, listed, and costs itself only.
    fn read_capture(&mut self, mut place: Place<'_>) -> Result<Option<Capture>, CaptureError> {
        let mut f = match layout::open_regular(place.path) {
            Ok(f) => f,
            Err(e) => {
                self.quirks.refuse(place.rel, None, "refused-entry", super::refusal(&e));
                return Ok(None);
            }
        };
        let mut head = Vec::new();
        let read = f.metadata().and_then(|m| {
            (&mut f).take(MAX_PREFIX as u64).read_to_end(&mut head)?;
            Ok(m.len())
        });
        // The size as opened (the walk's may be older).
        place.size = match read {
            Ok(size) => size,
            Err(e) => {
                self.quirks.refuse(place.rel, None, "refused-entry", format!("not read: {e}"));
                return Ok(None);
            }
        };
        let complete = head.len() as u64 == place.size;
        let parsed = match parse(&head, complete) {
            Ok(p) => p,
            Err(Refusal { offset, detail }) => return Ok(self.refuse(&place, offset, detail)),
        };
        match self.build(&place, &mut f, &head, parsed) {
            Ok(c) => Ok(c),
            Err(e) => {
                self.quirks.refuse(place.rel, None, "refused-entry", format!("not read: {e}"));
                Ok(None)
            }
        }
    }

    /// Turns a parsed file into its capture, finding the Content part's end and checking
    /// what the ArchiveInfo states.
    fn build(
        &mut self,
        place: &Place<'_>,
        f: &mut File,
        head: &[u8],
        p: Parsed,
    ) -> io::Result<Option<Capture>> {
        let rel = place.rel;
        let mut r = Reading { f, head, quirks: p.quirks.clone(), unparted: p.unparted.clone(), p };
        let (uri, at_url) = match r.target_uri() {
            Ok(t) => t,
            Err(Refusal { offset, detail }) => return Ok(self.refuse(place, offset, detail)),
        };
        let stated_len =
            r.p.field(&["HTTP-Content-Length"]).map(|v| latin1(v).trim().parse::<u64>());
        let stated = stated_len.as_ref().and_then(|l| l.as_ref().ok().copied());
        let mut body = r.content_extent(place.size, stated)?;
        let http_header = r.http_header();
        let kind =
            if http_header.is_some() { CaptureKind::Response } else { CaptureKind::Resource };
        if let Some(h) = &http_header {
            r.check_header_statements(h);
        }
        let body_digest = if self.check_digests { r.settle_cr_by_digest(&mut body)? } else { None };
        let truncated = r.truncation(stated_len.as_ref(), &body);
        r.check_content_digest(body.content, truncated.is_some(), body_digest, self.check_digests)?;
        let Some((date, date_source)) = r.capture_date(place.name) else {
            return Ok(self.refuse(
                place,
                0,
                "neither the file name nor HTTP-Archive-Time gives a date".into(),
            ));
        };
        r.check_url_md5(place.name);
        let ip =
            r.p.field(&["HTTP-IP-Address", "HTTP-IP-addr"])
                .map(|v| latin1(v).trim().to_string())
                .filter(|v| !v.is_empty() && v != "null");
        let content_type =
            r.p.content_type
                .clone()
                .or_else(|| http_header.as_deref().and_then(http_content_type))
                .filter(|t| !t.is_empty() && t != "null");
        let whole_file = r.report_unparted();
        let meta = r.metadata(place, http_header.as_deref(), body.content, whole_file)?;
        if whole_file {
            self.side.push(SideFile { path: place.path.to_path_buf(), relative: rel.to_string() });
        }
        if http_header.is_some() && !is_http_uri(&uri) {
            r.quirks.push((Some(at_url), "not-http-url", "an HTTP header stored for a URL that is not http(s): the record's payload is its whole block (header included), as every reader takes it".into()));
        }
        self.quirks.take_file(rel, r.quirks, false);
        let payload = match body.content {
            Some((s, e)) => {
                Payload::Segment { path: place.path.to_path_buf(), offset: s, len: e - s }
            }
            None => Payload::Bytes(Vec::new()),
        };
        Ok(Some(Capture {
            uri,
            date,
            date_source,
            ip,
            kind,
            http_header,
            content_type,
            payload,
            truncated,
            provenance: Provenance { file: rel.to_string(), offset: None, offset_in_member: None },
            warc_fields: Vec::new(),
            metadata: Some(meta),
        }))
    }
}

/// One file being turned into a capture: what its first bytes told, the open file for what
/// lies beyond them, and what the reading finds on the way (quirks, bytes in no part).
struct Reading<'a> {
    f: &'a mut File,
    head: &'a [u8],
    p: Parsed,
    quirks: FileQuirks,
    unparted: Vec<(u64, u64, &'static str)>,
}

/// Where the Content part is, as its closing delimiter places it.
struct ContentExtent {
    /// The body: start and end offsets, `None` without a Content part.
    content: Option<(u64, u64)>,
    /// The other possible body end when a CR before the closing delimiter could be either's.
    other_end: Option<u64>,
    /// No closing delimiter: the last part runs to the end of the file.
    missing_close: bool,
}

impl Reading<'_> {
    /// The capture's URI from `HTTP-URL` and where the field is; WARC needs an absolute URI,
    /// so an empty, `null` or relative one refuses the file.
    fn target_uri(&mut self) -> Result<(String, u64), Refusal> {
        let Some(url) = self.p.field(&["HTTP-URL"]) else {
            return Err(Refusal {
                offset: 0,
                detail: "no HTTP-URL field in the header block".into(),
            });
        };
        let at_url = self.p.at(&["HTTP-URL"]).unwrap_or(0);
        let text = uri_text(url);
        match target_uri(&text) {
            Ok((uri, changed)) => {
                if changed {
                    self.quirks.push((Some(at_url), "url-scheme-case", format!("HTTP-URL {text:?}: the scheme is written in lower case ({uri}), as every reader compares it; the field is kept as stored in the metadata record")));
                }
                Ok((uri, at_url))
            }
            Err(e) => Err(Refusal {
                offset: at_url,
                detail: format!("HTTP-URL: {e}: WARC needs an absolute URI, so no capture"),
            }),
        }
    }

    /// Where the Content part ends: at its closing delimiter where `HTTP-Content-Length`
    /// (`stated`) says, or else the last one in the file (a body may hold the boundary text
    /// itself); a missing closing delimiter and bytes after it are reported.
    fn content_extent(&mut self, size: u64, stated: Option<u64>) -> io::Result<ContentExtent> {
        let p = &self.p;
        let mut missing_close = p.missing_close;
        let mut closing_end = p.closing_end;
        let mut other_end = None;
        let content = match p.content_start {
            None => None,
            Some(start) => {
                let place = ContentPlace { start, size, stated, delim_crlf: p.content_delim_crlf };
                match content_end(self.f, self.head, &p.boundary, &place)? {
                    Some(c) => {
                        closing_end = Some(c.closing_end);
                        other_end = c.other;
                        Some((start, c.body_end))
                    }
                    None => {
                        missing_close = true;
                        Some((start, size))
                    }
                }
            }
        };
        if missing_close {
            self.quirks.push((
                Some(size),
                "missing-closing-delimiter",
                format!(
                    "the file ends after {size} bytes without `--{}--`: the last part is read \
                     to the end (a write cut off?)",
                    latin1(&self.p.boundary)
                ),
            ));
        }
        if let Some(end) = closing_end
            && end < size
        {
            self.unparted.push((end, size - end, "after the closing delimiter"));
        }
        Ok(ContentExtent { content, other_end, missing_close })
    }

    /// The Header part as an HTTP header up to its empty line, or `None` when it is none (no
    /// Header part, not `HTTP/`, no empty line, longer than any reader looks): the file is
    /// then a resource.
    fn http_header(&mut self) -> Option<Vec<u8>> {
        let Some((hs, he)) = self.p.header else {
            self.quirks.push((
                self.p.content_start,
                "missing-header-part",
                "no Header part: written as a resource typed by the Content part".into(),
            ));
            return None;
        };
        let bytes = &self.head[hs as usize..he as usize];
        // A header longer than any reader looks for its end in (the payload rule's
        // bound) would be read as a whole block by audit and as split by warcio.
        let end = bytes.starts_with(b"HTTP/").then(|| blank_line_end(bytes, 0)).flatten();
        if let Some(n) = end.filter(|&n| n <= MAX_HTTP_HEADER_LEN) {
            let rest = &bytes[n..];
            // The single LF before a delimiter belongs to the delimiter.
            if !(rest.is_empty() || rest == b"\n" || rest == b"\r\n") {
                self.unparted.push((
                    hs + n as u64,
                    rest.len() as u64,
                    "after the HTTP header's empty line, in the Header part",
                ));
            }
            return Some(bytes[..n].to_vec());
        }
        self.quirks.push((
            Some(hs),
            "not-http-header",
            if end.is_some() {
                format!(
                    "the HTTP header is longer than {MAX_HTTP_HEADER_LEN} bytes \
                     (no reader locates its end): written as a resource"
                )
            } else if bytes.starts_with(b"HTTP/") {
                "the Header part has no empty line ending it: written as a \
                 resource"
                    .into()
            } else {
                "the Header part does not start with `HTTP/`: written as a \
                 resource typed by the Content part"
                    .into()
            },
        ));
        if !bytes.is_empty() {
            self.unparted.push((hs, bytes.len() as u64, "the Header part, not HTTP"));
        }
        None
    }

    /// Checks the HTTP header `h` against what the ArchiveInfo states of it: its length, its
    /// MD5, its status code.
    fn check_header_statements(&mut self, h: &[u8]) {
        let p = &self.p;
        if let Some(v) = p.field(&["HTTP-Header-Length"]) {
            let v = latin1(v);
            if v.trim().parse::<u64>().ok() != Some(h.len() as u64) {
                self.quirks.push((
                    p.at(&["HTTP-Header-Length"]),
                    "header-length-mismatch",
                    format!(
                        "HTTP-Header-Length says {}, the Header part holds {} bytes",
                        v.trim(),
                        h.len()
                    ),
                ));
            }
        }
        if let Some(v) = p.field(&["HTTP-Header-MD5"]) {
            let want = latin1(v).trim().to_ascii_lowercase();
            let got = md5_hex(h);
            if want != "null" && want != got {
                let why = if h.is_ascii() {
                    ""
                } else {
                    " (the header is not ASCII: Heritrix hashed it re-encoded in the JVM's \
                     charset)"
                };
                self.quirks.push((
                    p.at(&["HTTP-Header-MD5"]),
                    "header-md5-mismatch",
                    format!("HTTP-Header-MD5 is {want}, the Header part's MD5 is {got}{why}"),
                ));
            }
        }
        if let (Some(v), Some(code)) = (p.field(&["HTTP-Status-Code"]), status_code(h))
            && latin1(v).trim() != code
        {
            self.quirks.push((
                p.at(&["HTTP-Status-Code"]),
                "status-code-mismatch",
                format!("HTTP-Status-Code is {}, the status line says {code}", latin1(v).trim()),
            ));
        }
    }

    /// Whose a CR before the closing delimiter is that the line ends could not place, the
    /// body's or the delimiter's: the stored digest says, and `body` is moved to match.
    /// Returns the digest of the body as placed, when one was computed.
    fn settle_cr_by_digest(&mut self, body: &mut ContentExtent) -> io::Result<Option<String>> {
        let (Some((s, e)), Some(o)) = (body.content, body.other_end) else { return Ok(None) };
        let Some((want, sha1)) = stated_digest(&self.p) else { return Ok(None) };
        let lo = e.min(o);
        let (short, long) = digest_range(self.f, s, lo - s, sha1, true)?;
        let long = long.unwrap_or_default();
        let (mine, other) = if e == lo { (short, long) } else { (long, short) };
        if mine != want && other == want {
            self.quirks.push((
                Some(lo),
                "line-break-by-digest",
                format!(
                    "the CR at offset {lo} before the closing delimiter's LF is taken as {}: \
                     HTTP-Content-MD5 matches the body only so",
                    if o > e { "the body's last byte" } else { "the delimiter's (CRLF)" }
                ),
            ));
            body.content = Some((s, o));
            Ok(Some(other))
        } else {
            Ok(Some(mine))
        }
    }

    /// The record's `WARC-Truncated` value: a body stored shorter than `HTTP-Content-Length`
    /// states was cut (by length, or unspecified without a closing delimiter); a longer one or
    /// a length that is no number is reported.
    fn truncation(
        &mut self,
        stated_len: Option<&Result<u64, std::num::ParseIntError>>,
        body: &ContentExtent,
    ) -> Option<String> {
        let content = body.content;
        let stored = content.map_or(0, |(s, e)| e - s);
        let mut truncated = None;
        match stated_len {
            Some(Ok(l)) if stored < *l => {
                truncated =
                    Some(if body.missing_close { "unspecified" } else { "length" }.to_string());
                let (kind, what) = if content.is_none() {
                    ("missing-content-part", "no Content part although".to_string())
                } else {
                    ("truncated", format!("{stored} bytes stored, but"))
                };
                let cap = if *l > HERITRIX_MAX_BODY && stored == HERITRIX_MAX_BODY {
                    " (Heritrix's 100 MB cap)"
                } else {
                    ""
                };
                self.quirks.push((
                    content.map(|c| c.0),
                    kind,
                    format!(
                        "{what} HTTP-Content-Length is {l}{cap}: WARC-Truncated: {}",
                        truncated.as_deref().unwrap_or_default()
                    ),
                ));
            }
            Some(Ok(l)) if stored > *l => self.quirks.push((
                content.map(|c| c.0),
                "content-length-mismatch",
                format!("{stored} bytes stored, more than HTTP-Content-Length {l}"),
            )),
            Some(Err(_)) => self.quirks.push((
                self.p.at(&["HTTP-Content-Length"]),
                "bad-content-length",
                format!(
                    "HTTP-Content-Length {:?} is not a number",
                    latin1(self.p.field(&["HTTP-Content-Length"]).unwrap_or_default())
                ),
            )),
            _ => {}
        }
        truncated
    }

    /// Checks the stored body against `HTTP-Content-MD5` (MD5 or SHA-1 by its length; not for
    /// a truncated body, whose digest is of the whole one): `body_digest` when the CR
    /// settlement computed it already, else read again with `check`.
    fn check_content_digest(
        &mut self,
        content: Option<(u64, u64)>,
        truncated: bool,
        body_digest: Option<String>,
        check: bool,
    ) -> io::Result<()> {
        let Some(v) = self.p.field(&["HTTP-Content-MD5"]) else { return Ok(()) };
        let at = self.p.at(&["HTTP-Content-MD5"]);
        let want = latin1(v).trim().to_ascii_lowercase();
        let algo = match want.len() {
            _ if want == "null" => None,
            32 if want.bytes().all(|b| b.is_ascii_hexdigit()) => Some("MD5"),
            40 if want.bytes().all(|b| b.is_ascii_hexdigit()) => Some("SHA-1"),
            _ => {
                self.quirks.push((
                    at,
                    "unknown-content-digest",
                    format!(
                        "HTTP-Content-MD5 {want:?} is neither 32 nor 40 hex digits nor \
                         `null`: not checked"
                    ),
                ));
                None
            }
        };
        if want == "null" {
            self.quirks.push((
                at,
                "no-content-digest",
                "HTTP-Content-MD5 is `null`: the crawler computed no digest".into(),
            ));
            return Ok(());
        }
        let Some(algo) = algo else { return Ok(()) };
        if truncated || !check {
            // A truncated body's digest is of the whole body; the stored one is shorter.
            return Ok(());
        }
        let (s, e) = content.unwrap_or((0, 0));
        let got = match body_digest {
            Some(d) => d,
            None => digest_range(self.f, s, e - s, algo == "SHA-1", false)?.0,
        };
        if got != want {
            self.quirks.push((
                at,
                "content-digest-mismatch",
                format!(
                    "HTTP-Content-MD5 ({algo}) is {want}, the stored body's ({} \
                     bytes at offset {s}) is {got}",
                    e - s
                ),
            ));
        }
        Ok(())
    }

    /// The capture's date: the file name's epoch (`name`), else the time of writing
    /// (inferred); either only when WARC (W3C-DTF, four-digit years) and the METS can state
    /// it. `None` when neither can.
    fn capture_date(&mut self, name: &[u8]) -> Option<(DateTime<Utc>, DateSource)> {
        let at_archive_time = self.p.at(&["HTTP-Archive-Time"]);
        let archive_time = stateable(
            &mut self.quirks,
            "HTTP-Archive-Time",
            at_archive_time,
            self.p
                .field(&["HTTP-Archive-Time"])
                .and_then(|v| latin1(v).trim().parse::<i64>().ok())
                .and_then(|s| DateTime::<Utc>::from_timestamp(s, 0)),
        );
        let epoch = split_name(name).and_then(|(_, e)| e);
        let from_name = stateable(
            &mut self.quirks,
            "the file name's epoch",
            None,
            epoch
                .and_then(|d| std::str::from_utf8(d).ok()?.parse::<i64>().ok())
                .and_then(|s| DateTime::<Utc>::from_timestamp(s, 0)),
        );
        match (from_name, archive_time) {
            (Some(d), at) => {
                if let Some(at) = at
                    && at < d
                {
                    self.quirks.push((
                        at_archive_time,
                        "archive-time-before-fetch",
                        format!(
                            "HTTP-Archive-Time {} is earlier than the file name's fetch time {}",
                            at.timestamp(),
                            d.timestamp()
                        ),
                    ));
                }
                Some((d, DateSource { label: DATE_FROM_NAME.into(), inferred: false }))
            }
            (None, Some(at)) => {
                self.quirks.push((
                    at_archive_time,
                    "no-epoch-in-name",
                    format!(
                        "{}: dated by HTTP-Archive-Time instead",
                        if epoch.is_some() {
                            "the file name's epoch is out of range"
                        } else {
                            "the file name has no epoch"
                        }
                    ),
                ));
                Some((at, DateSource { label: DATE_FROM_ARCHIVE_TIME.into(), inferred: true }))
            }
            (None, None) => None,
        }
    }

    /// Reports a file name whose MD5 is not that of `HTTP-URL`.
    fn check_url_md5(&mut self, name: &[u8]) {
        let (Some((md5, _)), Some(url)) = (split_name(name), self.p.field(&["HTTP-URL"])) else {
            return;
        };
        let want = md5_hex(url);
        if md5 != want.as_bytes() {
            self.quirks.push((
                self.p.at(&["HTTP-URL"]),
                "url-md5-mismatch",
                format!(
                    "the file name's MD5 is not MD5(HTTP-URL) = {want} (the crawler hashed \
                     its own normalisation of the URL)"
                ),
            ));
        }
    }

    /// Reports the bytes that belong to no part; true when they are too many to carry in the
    /// metadata record, so that the whole file is kept as a side file.
    fn report_unparted(&mut self) -> bool {
        let total: u64 = self.unparted.iter().map(|u| u.1).sum();
        let whole_file = total > MAX_INLINE_UNPARTED;
        for (off, len, what) in &self.unparted {
            self.quirks.push((
                Some(*off),
                "bytes-outside-parts",
                format!(
                    "{len} bytes {what}: kept in the metadata record{}",
                    if whole_file { " and in the original file kept as a side file" } else { "" }
                ),
            ));
        }
        whole_file
    }

    /// The metadata record's block: the ArchiveInfo lines, where the file was, the part
    /// headers, where header and payload are, and the bytes in no part (base64'd, or only
    /// their ranges and the side file's name when `whole_file`).
    fn metadata(
        &mut self,
        place: &Place<'_>,
        http_header: Option<&[u8]>,
        content: Option<(u64, u64)>,
        whole_file: bool,
    ) -> io::Result<Vec<u8>> {
        let p = &self.p;
        let mut meta = p.archive_info_lines(self.head);
        meta.extend(warc_fields_line("kw3-path", &place.kw3_path).into_bytes());
        meta.extend(warc_fields_line("kw3-snapshot", &place.snapshot).into_bytes());
        for &(label, s, e) in &p.part_lines {
            for line in lines(&self.head[s..e]) {
                meta.extend(field_bytes(Some(label), line));
            }
        }
        if let Some(h) = http_header {
            let (hs, _) = p.header.unwrap_or_default();
            meta.extend(
                warc_fields_line("kw3-header-range", &format!("{hs} {}", h.len())).into_bytes(),
            );
        }
        if let Some((s, e)) = content {
            meta.extend(
                warc_fields_line("kw3-content-range", &format!("{s} {}", e - s)).into_bytes(),
            );
        }
        if whole_file {
            for (off, len, _) in &self.unparted {
                meta.extend(warc_fields_line("kw3-unparted", &format!("{off} {len}")).into_bytes());
            }
            meta.extend(warc_fields_line("kw3-original-file", place.rel).into_bytes());
        } else {
            for (off, len, _) in &self.unparted {
                let bytes = read_at(self.f, self.head, *off, *len as usize)?;
                let b64 = data_encoding::BASE64.encode(&bytes);
                meta.extend(
                    warc_fields_line("kw3-unparted", &format!("{off} {len} {b64}")).into_bytes(),
                );
            }
        }
        Ok(meta)
    }
}

/// `d` when WARC (W3C-DTF, four-digit years) and the METS can state it; else reported as
/// `what`, at `at`, and `None`.
fn stateable(
    quirks: &mut FileQuirks,
    what: &str,
    at: Option<u64>,
    d: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    let d = d?;
    if warc_date_stateable(&d) {
        return Some(d);
    }
    quirks.push((
        at,
        "date-out-of-range",
        format!(
            "{what} {} is {}: outside the years 0001-9999 a WARC-Date or a METS date can \
             state, so not used",
            d.timestamp(),
            d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
    ));
    None
}

impl Iterator for Kulturarw3Archive {
    type Item = Result<Capture, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = self.walk.next()?;
            match self.visit(entry) {
                Ok(Some(c)) => return Some(Ok(c)),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl CaptureSource for Kulturarw3Archive {
    fn shape_name(&self) -> &'static str {
        "kulturarw3"
    }

    fn quirks(&self) -> &[Quirk] {
        self.quirks.kept()
    }

    fn quirks_dropped(&self) -> u64 {
        self.quirks.dropped()
    }

    fn quirk_counts(&self) -> Option<&std::collections::BTreeMap<String, u64>> {
        Some(self.quirks.counts())
    }

    fn refusals(&self) -> (&[(String, String)], u64) {
        self.quirks.refusals()
    }

    fn side_files(&self) -> Vec<SideFile> {
        self.side.clone()
    }
}

/// Where a file is.
struct Place<'a> {
    path: &'a Path,
    rel: &'a str,
    kw3_path: String,
    snapshot: String,
    name: &'a [u8],
    size: u64,
}

/// Why a file is not read as a capture, and where.
struct Refusal {
    offset: u64,
    detail: String,
}

/// Where things are in a file, as far as its first [`MAX_PREFIX`] bytes tell.
#[derive(Default)]
struct Parsed {
    /// End of the header block's field lines (after the last one's LF).
    lines_end: usize,
    /// The empty line ending the header block was CRLF.
    blank_crlf: bool,
    /// The header block's fields: name, value (folded lines joined), offset of the line.
    fields: Vec<(Vec<u8>, Vec<u8>, u64)>,
    boundary: Vec<u8>,
    /// The Header part's bytes (after its part header), to the next delimiter line.
    header: Option<(u64, u64)>,
    /// Where the Content part's body starts.
    content_start: Option<u64>,
    /// The delimiter line opening the Content part ends with CRLF (the file's delimiters are
    /// CRLF, so a CR before the closing one's LF is the delimiter's, not the body's).
    content_delim_crlf: bool,
    /// The Content part's `Content-Type`.
    content_type: Option<String>,
    /// The Header and Content parts' header blocks (label, range in the head), for the
    /// metadata: one entry a part, its lines taken when the metadata is written.
    part_lines: Vec<(&'static str, usize, usize)>,
    /// Bytes in no part: offset, length, what they are.
    unparted: Vec<(u64, u64, &'static str)>,
    quirks: FileQuirks,
    missing_close: bool,
    /// Where the closing delimiter line ends, when found among the first bytes.
    closing_end: Option<u64>,
}

impl Parsed {
    /// The first field named one of `names` (case-insensitive).
    fn field(&self, names: &[&str]) -> Option<&[u8]> {
        self.fields
            .iter()
            .find(|(n, _, _)| names.iter().any(|w| n.eq_ignore_ascii_case(w.as_bytes())))
            .map(|(_, v, _)| v.as_slice())
    }

    /// Where the first field named one of `names` is, for a quirk about it.
    fn at(&self, names: &[&str]) -> Option<u64> {
        self.fields
            .iter()
            .find(|(n, _, _)| names.iter().any(|w| n.eq_ignore_ascii_case(w.as_bytes())))
            .map(|(_, _, at)| *at)
    }

    /// The header block's lines for the metadata record: each verbatim, CRLF-ended as
    /// `application/warc-fields` wants (the original ends were LF), except a line holding a
    /// control character (a CR among them), which is carried base64'd so that it cannot end
    /// or add a field.
    fn archive_info_lines(&self, head: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for line in lines(&head[..self.lines_end]) {
            out.extend(field_bytes(None, line));
        }
        if self.blank_crlf {
            out.extend(warc_fields_line("kw3-blank-line", "CRLF").into_bytes());
        }
        out
    }
}

/// Lines of `block` (which ends with LF), without their LF.
fn lines(block: &[u8]) -> impl Iterator<Item = &[u8]> {
    block
        .strip_suffix(b"\n")
        .unwrap_or(block)
        .split(|&b| b == b'\n')
        .filter(move |_| !block.is_empty())
}

/// One line for the metadata block: `line` verbatim (after `label: ` when given), or
/// `<label>-base64:` with it encoded when it holds a control character.
fn field_bytes(label: Option<&str>, line: &[u8]) -> Vec<u8> {
    let clean = !line.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f);
    if clean {
        let mut out = Vec::with_capacity(line.len() + 24);
        if let Some(l) = label {
            out.extend(l.as_bytes());
            out.extend(b": ");
        }
        out.extend(line);
        out.extend(b"\r\n");
        out
    } else {
        let name = format!("{}-base64", label.unwrap_or("kw3-line"));
        warc_fields_line(&name, &data_encoding::BASE64.encode(line)).into_bytes()
    }
}

/// Header field names of the Kulturarw3 format v0.01, before Heritrix.
const V001_NAMES: [&str; 4] =
    ["HTTP-IP-addr", "HTTP-www-archiver", "HTTP-archiver-version", "HTTP-part"];

/// Parses `lines` (an LF-ended header block) into fields, folding continuation lines.
fn parse_fields(
    block: &[u8],
    base: usize,
    quirks: &mut FileQuirks,
    v001: &mut Vec<(String, u64)>,
) -> Vec<(Vec<u8>, Vec<u8>, u64)> {
    let mut fields: Vec<(Vec<u8>, Vec<u8>, u64)> = Vec::new();
    let mut at = base;
    for raw in lines(block) {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if fields.len() >= MAX_FIELDS {
            quirks.push((
                Some(at as u64),
                "too-many-fields",
                format!(
                    "more than {MAX_FIELDS} fields: the lines from here on are kept verbatim in \
                     the metadata but not read as fields"
                ),
            ));
            break;
        }
        match (line.first(), fields.last_mut()) {
            (Some(b' ' | b'\t'), Some((_, v, _))) => {
                v.push(b' ');
                v.extend(line.trim_ascii());
            }
            _ => match line.iter().position(|&b| b == b':') {
                Some(c) => {
                    let name = line[..c].trim_ascii().to_vec();
                    if let Some(n) = V001_NAMES.iter().find(|n| n.as_bytes() == name)
                        && !v001.iter().any(|x| x.0 == *n)
                    {
                        v001.push((n.to_string(), at as u64));
                    }
                    fields.push((name, line[c + 1..].trim_ascii().to_vec(), at as u64));
                }
                None => quirks.push((
                    Some(at as u64),
                    "malformed-header-line",
                    format!(
                        "a header line without `:` ({} bytes): kept verbatim in the metadata",
                        raw.len()
                    ),
                )),
            },
        }
        at += raw.len() + 1;
    }
    fields
}

/// Where the file's header lines end, and where its body starts (after the empty line).
fn header_block_end(head: &[u8]) -> Result<(usize, usize), Refusal> {
    let limit = head.len().min(MAX_HEADER_BLOCK);
    let Some(end) = blank_line_end(&head[..limit], 0) else {
        return Err(if head.len() > MAX_HEADER_BLOCK {
            Refusal {
                offset: MAX_HEADER_BLOCK as u64,
                detail: format!(
                    "no empty line ends the header block within its first {MAX_HEADER_BLOCK} bytes"
                ),
            }
        } else {
            Refusal {
                offset: head.len() as u64,
                detail: "no empty line ends the header block".into(),
            }
        });
    };
    let block = &head[..end];
    let lines_end = if block.ends_with(b"\n\r\n") {
        end - 2
    } else if block.ends_with(b"\n\n") {
        end - 1
    } else {
        0 // the file starts with its empty line
    };
    Ok((lines_end, end))
}

/// Finds where the parts are among the first bytes of a file (`complete` when `head` is the
/// whole file).
fn parse(head: &[u8], complete: bool) -> Result<Parsed, Refusal> {
    let (lines_end, body) = header_block_end(head)?;
    let mut p =
        Parsed { lines_end, blank_crlf: head[..body].ends_with(b"\r\n"), ..Parsed::default() };
    let mut v001 = Vec::new();
    p.fields = parse_fields(&head[..lines_end], 0, &mut p.quirks, &mut v001);
    let Some(boundary) = p.field(&["Content-Type"]).and_then(boundary_param) else {
        return Err(Refusal {
            offset: 0,
            detail: "no multipart boundary in the header block's Content-Type".into(),
        });
    };
    p.boundary = boundary.clone();
    let parts = Parts { head, complete, boundary };
    let first = parts.first_delimiter(body)?;
    if first.start > body {
        let preamble = (first.start - body) as u64;
        p.unparted.push((body as u64, preamble, "before the first part (a preamble)"));
    }
    let mut cur = first;
    while let Some(next) = parts.read_part(&mut p, &cur, &mut v001)? {
        cur = next;
    }
    note_v001_names(&mut p, &v001);
    Ok(p)
}

/// The multipart body of a file's first bytes, as [`parse`] walks it part by part.
struct Parts<'a> {
    head: &'a [u8],
    /// `head` is the whole file.
    complete: bool,
    boundary: Vec<u8>,
}

/// A part's header block: where it starts and ends in the head, where the part's body starts,
/// and its `HTTP-Part` name (lower case).
struct PartHeader {
    start: usize,
    end: usize,
    body: usize,
    name: Vec<u8>,
}

impl Parts<'_> {
    /// The delimiter opening the first part, at or after the header block's end `body`.
    fn first_delimiter(&self, body: usize) -> Result<Delim, Refusal> {
        let detail = match find_delimiter(self.head, body, &self.boundary, self.complete) {
            Some(d) => return Ok(d),
            None if !self.complete => {
                format!("no part delimiter within the first {MAX_PREFIX} bytes")
            }
            None => "no part delimiter `--<boundary>` after the header block".into(),
        };
        Err(Refusal { offset: body as u64, detail })
    }

    /// Reads the part that delimiter `cur` opens into `p`; the delimiter of the next part, or
    /// `None` when the walk ends (the closing delimiter, the Content part, the file's end).
    fn read_part(
        &self,
        p: &mut Parsed,
        cur: &Delim,
        v001: &mut Vec<(String, u64)>,
    ) -> Result<Option<Delim>, Refusal> {
        if cur.closing {
            p.closing_end = Some(cur.end as u64);
            return Ok(None);
        }
        let Some(part) = self.part_header(p, cur.end, v001)? else { return Ok(None) };
        if part.name == b"content" {
            p.part_lines.push(("kw3-content-part", part.start, part.end));
            p.content_start = Some(part.body as u64);
            p.content_delim_crlf = self.head[..cur.end].ends_with(b"\r\n");
            return Ok(None);
        }
        let next = find_delimiter(self.head, part.body, &self.boundary, self.complete);
        let end = match &next {
            Some(d) => d.start,
            None if !self.complete => {
                return Err(Refusal {
                    offset: part.body as u64,
                    detail: format!(
                        "a part other than Content does not end within the first {MAX_PREFIX} bytes"
                    ),
                });
            }
            None => {
                p.missing_close = true;
                self.head.len()
            }
        };
        note_other_part(p, &part, end);
        Ok(next)
    }

    /// The header block of the part starting at `ph`, its fields parsed (the Content part's
    /// `Content-Type` kept); `None` when the file ends within it.
    fn part_header(
        &self,
        p: &mut Parsed,
        ph: usize,
        v001: &mut Vec<(String, u64)>,
    ) -> Result<Option<PartHeader>, Refusal> {
        let head = self.head;
        let Some(body) = blank_line_end(head, ph) else {
            if !self.complete {
                return Err(Refusal {
                    offset: ph as u64,
                    detail: format!(
                        "a part's header lines do not end within the first {MAX_PREFIX} bytes"
                    ),
                });
            }
            p.missing_close = true;
            if head.len() > ph {
                let what = "a part header cut off by the end of the file";
                p.unparted.push((ph as u64, (head.len() - ph) as u64, what));
            }
            return Ok(None);
        };
        let block = &head[ph..body];
        let block =
            block.strip_suffix(b"\r\n").or_else(|| block.strip_suffix(b"\n")).unwrap_or(block);
        let fields = parse_fields(block, ph, &mut p.quirks, v001);
        let get = |n: &str| {
            fields.iter().find(|(k, _, _)| k.eq_ignore_ascii_case(n.as_bytes())).map(|(_, v, _)| v)
        };
        let name = get("HTTP-Part").map(|v| v.to_ascii_lowercase()).unwrap_or_default();
        if name == b"content" {
            p.content_type = get("Content-Type").map(|v| latin1(v));
        }
        Ok(Some(PartHeader { start: ph, end: ph + block.len(), body, name }))
    }
}

/// A part other than Content, ending at `end`: the first Header part is the HTTP header; any
/// other is kept in the metadata as bytes in no part, and noted.
fn note_other_part(p: &mut Parsed, part: &PartHeader, end: usize) {
    let is_header = part.name == b"header" || part.name == b"header-info";
    if is_header && p.header.is_none() {
        p.part_lines.push(("kw3-header-part", part.start, part.end));
        p.header = Some((part.body as u64, end as u64));
        return;
    }
    let (kind, what) = match is_header {
        true => ("duplicate-part", "a second Header part"),
        false => ("unknown-part", "a part that is neither Header nor Content"),
    };
    let detail = format!("{what} (HTTP-Part: {}): kept in the metadata", latin1(&part.name));
    p.quirks.push((Some(part.start as u64), kind, detail));
    p.unparted.push((part.start as u64, (end - part.start) as u64, what));
}

/// One quirk for the header names of the v0.01 format met (`v001`: name, offset).
fn note_v001_names(p: &mut Parsed, v001: &[(String, u64)]) {
    if v001.is_empty() {
        return;
    }
    let names: Vec<&str> = v001.iter().map(|(n, _)| n.as_str()).collect();
    p.quirks.push((
        v001.first().map(|(_, at)| *at),
        "v0.01-header-names",
        format!("header names of the Kulturarw3 format v0.01: {}", names.join(", ")),
    ));
}

/// Where the first empty line at or after `from` ends: `from` itself may start one (an empty
/// header block), else an LF followed by LF or CRLF.
fn blank_line_end(buf: &[u8], from: usize) -> Option<usize> {
    let rest = buf.get(from..)?;
    if rest.starts_with(b"\n") {
        return Some(from + 1);
    }
    if rest.starts_with(b"\r\n") {
        return Some(from + 2);
    }
    let mut i = from;
    while let Some(p) = buf.get(i..).and_then(|r| r.iter().position(|&b| b == b'\n')) {
        let lf = i + p;
        match &buf[lf + 1..] {
            [b'\n', ..] => return Some(lf + 2),
            [b'\r', b'\n', ..] => return Some(lf + 3),
            _ => i = lf + 1,
        }
    }
    None
}

/// The last occurrence of `needle` in `hay`.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let last = hay.len().checked_sub(needle.len())?;
    (0..=last).rev().find(|&p| hay[p..].starts_with(needle))
}

/// Up to `len` bytes of the file at `offset` (from `head` when they are in it).
fn read_at(f: &mut File, head: &[u8], offset: u64, len: usize) -> io::Result<Vec<u8>> {
    if let Some(end) = offset.checked_add(len as u64)
        && end <= head.len() as u64
    {
        return Ok(head[offset as usize..end as usize].to_vec());
    }
    f.seek(SeekFrom::Start(offset))?;
    let mut out = Vec::with_capacity(len.min(CHUNK));
    f.take(len as u64).read_to_end(&mut out)?;
    Ok(out)
}

/// Where a Content part is: its body's start, the file's size, the length
/// `HTTP-Content-Length` states, and whether the delimiter line opening it ended with CRLF.
struct ContentPlace {
    start: u64,
    size: u64,
    stated: Option<u64>,
    delim_crlf: bool,
}

/// Where a Content part ends, found from its closing delimiter.
struct ContentEnd {
    /// The body's end: where the closing delimiter's line break starts.
    body_end: u64,
    /// Where the closing delimiter line ends.
    closing_end: u64,
    /// The other possible body end when a CR before the delimiter's LF could be either the
    /// body's last byte or the first of a CRLF (the stored digest may tell them apart).
    other: Option<u64>,
}

/// Finds the end of the Content part at `c.start`: where `c.stated` says when its closing
/// delimiter's line break is there, else before the last closing delimiter of the file;
/// `None` when there is none (a write cut off).
///
/// Quirk: RFC 2046 makes the line break before a delimiter part of the delimiter, so it is
/// not the body's. Heritrix writes that break as LF, other writers as CRLF, and a file may
/// mix LF and CRLF lines. A CR before the LF is taken as the delimiter's when the stated
/// length says so or, without a stated length landing there, when the file's delimiter lines
/// end with CRLF; in a file whose delimiter lines end with a bare LF it is the body's own
/// last byte (one binary body in 256 ends with 0x0D), and the other reading is returned for
/// the digest to settle.
fn content_end(
    f: &mut File,
    head: &[u8],
    boundary: &[u8],
    c: &ContentPlace,
) -> io::Result<Option<ContentEnd>> {
    let pat = [&b"\n--"[..], boundary, b"--"].concat();
    let plen = pat.len() as u64;
    let closing = |f: &mut File, lf: u64| -> io::Result<u64> {
        let tail = read_at(f, head, lf + plen, 2)?;
        let eol = match tail.as_slice() {
            [b'\n', ..] => 1,
            [b'\r', b'\n'] => 2,
            _ => 0,
        };
        Ok(lf + plen + eol)
    };
    // The stated length lands on the delimiter's line break, LF or CRLF.
    if let Some(e) = c.stated.and_then(|l| c.start.checked_add(l))
        && e.saturating_add(plen) <= c.size
    {
        let at = read_at(f, head, e, pat.len() + 1)?;
        let lf = if at.starts_with(&pat) {
            Some(e)
        } else if at.first() == Some(&b'\r') && at[1..] == pat[..] {
            Some(e + 1)
        } else {
            None
        };
        if let Some(lf) = lf {
            return Ok(Some(ContentEnd { body_end: e, closing_end: closing(f, lf)?, other: None }));
        }
    }
    let Some(lf) = last_occurrence(f, head, &pat, c.start.saturating_sub(1), c.size)? else {
        return Ok(None);
    };
    let closing_end = closing(f, lf)?;
    let cr = lf > c.start && read_at(f, head, lf - 1, 1)? == b"\r";
    Ok(Some(match (cr, c.delim_crlf) {
        (true, true) => ContentEnd { body_end: lf - 1, closing_end, other: Some(lf) },
        (true, false) => ContentEnd { body_end: lf, closing_end, other: Some(lf - 1) },
        (false, _) => ContentEnd { body_end: lf.max(c.start), closing_end, other: None },
    }))
}

/// The last offset `>= lo` where `pat` occurs in the file, read backwards in chunks (a body
/// of 100 MB is never held).
fn last_occurrence(
    f: &mut File,
    head: &[u8],
    pat: &[u8],
    lo: u64,
    size: u64,
) -> io::Result<Option<u64>> {
    let n = pat.len() as u64;
    if size < n || size - n < lo {
        return Ok(None);
    }
    let mut hi = size;
    loop {
        let start = hi.saturating_sub(CHUNK as u64).max(lo);
        let buf = read_at(f, head, start, (hi - start) as usize)?;
        if let Some(p) = rfind(&buf, pat) {
            return Ok(Some(start + p as u64));
        }
        if start == lo {
            return Ok(None);
        }
        // Overlap by all but one byte of the pattern, so a match across chunks is seen.
        hi = start + n - 1;
    }
}

/// The MD5 or SHA-1 (lower-case hex) of `len` bytes of the file at `offset` and, with
/// `one_more`, also of those bytes and the next one (both readings of a CR in one pass).
fn digest_range(
    f: &mut File,
    offset: u64,
    len: u64,
    sha1: bool,
    one_more: bool,
) -> io::Result<(String, Option<String>)> {
    #[derive(Clone)]
    enum Hasher {
        Md5(Md5),
        Sha1(Sha1),
    }
    impl Hasher {
        fn update(&mut self, b: &[u8]) {
            match self {
                Hasher::Md5(h) => h.update(b),
                Hasher::Sha1(h) => h.update(b),
            }
        }
        fn hex(self) -> String {
            match self {
                Hasher::Md5(h) => crate::formats::digest::hex(&h.finalize()),
                Hasher::Sha1(h) => crate::formats::digest::hex(&h.finalize()),
            }
        }
    }
    f.seek(SeekFrom::Start(offset))?;
    let mut h = if sha1 { Hasher::Sha1(Sha1::new()) } else { Hasher::Md5(Md5::new()) };
    let mut r = f.take(len);
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    let longer = if one_more {
        let mut next = Vec::with_capacity(1);
        r.into_inner().take(1).read_to_end(&mut next)?;
        let mut h2 = h.clone();
        h2.update(&next);
        Some(h2.hex())
    } else {
        None
    };
    Ok((h.hex(), longer))
}

/// The digest `HTTP-Content-MD5` states: lower-case hex and whether it is SHA-1 (40 digits)
/// rather than MD5 (32); `None` when it is absent, `null` or neither.
fn stated_digest(p: &Parsed) -> Option<(String, bool)> {
    let want = latin1(p.field(&["HTTP-Content-MD5"])?).trim().to_ascii_lowercase();
    let sha1 = match want.len() {
        32 => false,
        40 => true,
        _ => return None,
    };
    want.bytes().all(|b| b.is_ascii_hexdigit()).then_some((want, sha1))
}

/// The status code of an HTTP header's status line.
fn status_code(h: &[u8]) -> Option<String> {
    Some(http::status_code(h)).filter(|c| !c.is_empty())
}

/// The `Content-Type` an HTTP header states.
fn http_content_type(h: &[u8]) -> Option<String> {
    http::field(h, b"content-type").map(|v| latin1(v.trim_ascii()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_given_as_the_archive_or_the_harvest_is_not_a_directory() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let Err(err) = Kulturarw3Archive::open(file.path()) else { panic!("a file was opened") };
        assert!(matches!(&err, CaptureError::NotADirectory { path, .. } if path == file.path()));
        assert!(
            err.to_string()
                .ends_with(": not a directory: a Kulturarw3 archive is a directory tree")
        );
        let opts = crate::sources::nedlib::NedlibOptions::default();
        let Err(err) = crate::sources::nedlib::NedlibHarvest::open(file.path(), opts) else {
            panic!("a file was opened")
        };
        assert!(matches!(&err, CaptureError::NotADirectory { path, .. } if path == file.path()));
    }

    #[test]
    fn names() {
        assert!(
            split_name(b"4443a33a26034bd0d1fe8db1240a35e3.1136214245")
                .is_some_and(|(_, e)| e == Some(&b"1136214245"[..]))
        );
        assert!(split_name(b"4443a33a26034bd0d1fe8db1240a35e3").is_some_and(|(_, e)| e.is_none()));
        assert!(split_name(b"4443A33A26034BD0D1FE8DB1240A35E3.1").is_none());
        assert!(split_name(b"4443a33a26034bd0d1fe8db1240a35e3.").is_none());
        assert!(split_name(b"4443a33a26034bd0d1fe8db1240a35e3.12x").is_none());
    }

    #[test]
    fn blank_lines_end_header_blocks() {
        assert_eq!(blank_line_end(b"a: b\nc: d\n\nrest", 0), Some(11));
        assert_eq!(blank_line_end(b"a: b\r\n\r\nrest", 0), Some(8));
        assert_eq!(blank_line_end(b"\nrest", 0), Some(1));
        assert_eq!(blank_line_end(b"a: b\nc: d\n", 0), None);
    }

    #[test]
    fn the_last_occurrence_is_found_across_chunk_edges() {
        let dir = tempfile::tempdir().unwrap();
        let pat = b"\n--KulturArw3_x--";
        for size in [CHUNK * 3 + 7, CHUNK * 2] {
            // Every placement around the first chunk edge seen from the end.
            for shift in 0..pat.len() + 2 {
                let at = size - CHUNK - pat.len() + shift;
                let mut data = vec![b'.'; size];
                data[10..10 + pat.len()].copy_from_slice(pat);
                data[at..at + pat.len()].copy_from_slice(pat);
                let path = dir.path().join("f");
                std::fs::write(&path, &data).unwrap();
                let mut f = File::open(&path).unwrap();
                let got = last_occurrence(&mut f, &data[..0], pat, 5, size as u64).unwrap();
                assert_eq!(got, Some(at as u64), "size {size} shift {shift}");
                // Not below `lo`.
                let got = last_occurrence(&mut f, &[], pat, at as u64 + 1, size as u64).unwrap();
                assert_eq!(got, None);
            }
        }
    }
}

#[cfg(test)]
mod reader_tests;
