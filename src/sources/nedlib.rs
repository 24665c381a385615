//! NEDLIB harvests (INPUT_FORMATS.md §5): daily `YYYY-M-D` folders, running-number
//! sub-folders, files named by an MD5 with a `.meta` companion holding the server's status line
//! and header fields followed by the harvester's `Arc-*` fields, and opaque side-cars
//! (`accessX.data`).
//!
//! Each `<md5>.meta` + `<md5>` pair becomes a `response` [`Capture`]: the URL is `Arc-Url` as
//! stored (`:80` kept), the HTTP header bytes are the `.meta` lines as stored minus the `Arc-*`
//! lines (line ends kept; an empty line is appended, in the file's style, when the stored
//! header has none, and that is reported), the payload is the data file as a segment, and the
//! `Arc-*` lines go verbatim, with the two source paths, into the concurrent `metadata` record.
//! Every oddity of §5.4 is tolerated and reported as a [`Quirk`] naming the `.meta` and its
//! line, through the one bounded log (`QuirkLog`: 10,000 kept, the rest counted; while a
//! `.meta` is parsed, 100 of a kind), so that a 1 MiB `.meta` of 524,000 odd lines holds no
//! 524,000 entries; files that are no pair become [`SideFile`]s, so no byte of the harvest is
//! lost. Nothing below the root is followed: links, FIFOs, devices, paths over `PATH_MAX`,
//! unreadable folders and `.meta` files over [`MAX_META`] are refused one by one, listed
//! ([`CaptureSource::refusals`]: the run exits 1) and never stop the harvest. An `Arc-Url`
//! with no scheme (`null`, a path) is refused too (WARC needs an absolute URI); one whose
//! scheme is not lower case is written in lower case (`HTTP://` -> `http://`), so that every
//! reader's payload rule finds the header where the writer put it.

use std::collections::{HashSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};

use super::capture::{CaptureError, CaptureSource, FileQuirks, QuirkLog, SideFile};
use super::{name_text, refusal};
use crate::capture::{Capture, CaptureKind, DateSource, Payload, Provenance, Quirk};
use crate::formats::dates::warc_date_stateable;
use crate::formats::nedlib_meta::{Meta, parse_meta};
use crate::formats::warc::header::target_uri;
use crate::formats::warc::payload::is_http_uri;
use crate::layout::{self, ConfineError};

/// Largest `.meta` read: a status line and a few header fields are some hundred bytes; a larger
/// file is refused (listed, the run exits 1) and kept as a side file with its data file.
pub const MAX_META: u64 = 1 << 20;

/// Most directory entries looked at per folder by [`is_nedlib`] (a running-number folder holds
/// about 2000 files).
const DETECT_ENTRIES: usize = 10_000;

/// Which date a capture gets (`WARC-Date`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NedlibDate {
    /// The server's `Date` header, when it parses and lies within a day of the folder's date;
    /// otherwise the folder date (reported). The default.
    #[default]
    ServerDate,
    /// The day folder's date at 12:00 UTC; the server's `Date` when the path holds no day
    /// folder (reported).
    FolderDate,
}

/// How a NEDLIB harvest is read.
///
/// The default date source is [`NedlibDate::ServerDate`]. Neither candidate is the harvester's
/// own fetch time (NEDLIB stored none): the folder date gives the day of the harvest but no
/// time (12:00 UTC is a guess that can be twelve hours off and orders nothing within a day),
/// while the server's `Date` is the responding server's clock at the moment it answered, to
/// the second, and is right whenever that clock was (INPUT_FORMATS.md §5.4.3). A wrong clock
/// is caught by checking the server date against the folder day: one more than a day away
/// from it is not used and the folder date is taken instead, with a `date-fallback` quirk. So
/// the default keeps the precision where it is plausible and the harvest's own day where it
/// is not, and it gives the same `WARC-Date` as warchaeology's conversion (Date first, then
/// the folder at 12:00 UTC) for every capture whose server clock was sane. Either way the
/// capture's [`DateSource`] says which one was used, and `inferred` is true for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NedlibOptions {
    /// The date source.
    pub date_source: NedlibDate,
}

/// A day folder's date, from its name (`2003-7-16`, zero padding optional).
fn day_of(name: &str) -> Option<NaiveDate> {
    let mut parts = name.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str, lo: usize, hi: usize| {
        (lo..=hi).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    if parts.next().is_some() || !digits(y, 4, 4) || !digits(m, 1, 2) || !digits(d, 1, 2) {
        return None;
    }
    NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
}

/// `<32 hex digits>.meta`.
fn is_md5_meta(name: &[u8]) -> bool {
    name.strip_suffix(b".meta").is_some_and(is_md5)
}

fn is_md5(name: &[u8]) -> bool {
    name.len() == 32 && name.iter().all(u8::is_ascii_hexdigit)
}

/// The real sub-directories of `dir` (links not followed), at most [`DETECT_ENTRIES`] looked at.
fn subdirs(dir: &Path) -> Vec<(OsString, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.take(DETECT_ENTRIES)
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| (e.file_name(), e.path()))
        .collect()
}

/// A day folder: a running-number sub-folder holding an `<md5>.meta`.
fn is_day_folder(dir: &Path) -> bool {
    subdirs(dir).into_iter().any(|(name, path)| {
        !name.is_empty()
            && name.as_bytes().iter().all(u8::is_ascii_digit)
            && std::fs::read_dir(&path).is_ok_and(|rd| {
                rd.take(DETECT_ENTRIES).flatten().any(|e| {
                    is_md5_meta(e.file_name().as_bytes())
                        && e.file_type().is_ok_and(|t| t.is_file())
                })
            })
    })
}

/// True when `dir` is a NEDLIB harvest: a folder of daily `YYYY-M-D` folders (no zero padding
/// required), or one such day folder, whose running-number sub-folders hold MD5-named files
/// with `.meta` companions.
pub fn is_nedlib(dir: &Path) -> bool {
    let named_day = |p: &Path| p.file_name().and_then(|n| n.to_str()).and_then(day_of).is_some();
    if named_day(dir) && is_day_folder(dir) {
        return true;
    }
    subdirs(dir)
        .into_iter()
        .any(|(name, path)| name.to_str().and_then(day_of).is_some() && is_day_folder(&path))
}

/// A day folder met on the way: its name and date.
#[derive(Debug, Clone)]
struct Folder {
    name: String,
    date: NaiveDate,
}

/// A `.meta` and its data file, to be read when its turn comes: the folder is shared by all
/// its pairs and only the stem is kept (a folder of 100,000 files holds no 200,000 paths).
/// What one folder holds, as [`NedlibHarvest::walk_folder`] lists it.
#[derive(Default)]
struct FolderListing {
    /// Names of its regular files.
    files: Vec<OsString>,
    /// Its sub-folders: name and path.
    dirs: Vec<(OsString, PathBuf)>,
    /// Names refused (links, FIFOs, devices).
    refused: HashSet<OsString>,
}

/// The quirk kind and detail of a file that is no part of a pair, kept as a side file.
fn side_file_kind(name: &[u8]) -> (&'static str, &'static str) {
    if is_md5(name) {
        let why = "an MD5-named data file without a .meta companion: no URL, so no capture";
        ("data-without-meta", why)
    } else if name.starts_with(b"access") && name.ends_with(b".data") {
        ("side-car", "a NEDLIB accessX.data file (contents undocumented, kept opaque)")
    } else {
        ("unexpected-file", "a file that is neither a .meta nor a data file of a pair")
    }
}

/// A pair's data file as read: its path, its name under the root and its length, when it
/// could be opened.
struct DataFile {
    path: Option<PathBuf>,
    rel: Option<String>,
    len: Option<u64>,
}

impl DataFile {
    /// The capture's payload: the file, or nothing.
    fn payload(&self) -> Payload {
        match (&self.path, self.len) {
            (Some(path), Some(len)) => Payload::File { path: path.clone(), len },
            _ => Payload::Bytes(Vec::new()),
        }
    }
}

/// The capture's `metadata` record: the `.meta`'s lines that are no HTTP header, then where
/// the pair's files are, in the `.meta`'s line ends.
fn metadata_block(meta: &Meta, rel_meta: &str, data_rel: Option<&str>) -> Vec<u8> {
    let eol: &[u8] = meta.eol.bytes();
    let mut block = meta.side_lines.clone();
    block.extend_from_slice(format!("nedlib-meta-path: {rel_meta}").as_bytes());
    block.extend_from_slice(eol);
    if let Some(d) = data_rel {
        block.extend_from_slice(format!("nedlib-data-path: {d}").as_bytes());
        block.extend_from_slice(eol);
    }
    block
}

struct Pair {
    dir: Arc<Path>,
    /// The data file's name (the `.meta`'s without `.meta`).
    stem: Box<[u8]>,
    /// The data file is there.
    data: bool,
    /// The data file is there but was refused (a link, a FIFO).
    data_refused: bool,
    folder: Option<Arc<Folder>>,
}

impl Pair {
    fn meta(&self) -> PathBuf {
        self.dir.join(OsStr::from_bytes(&[&self.stem[..], b".meta"].concat()))
    }

    fn data(&self) -> Option<PathBuf> {
        self.data.then(|| self.dir.join(OsStr::from_bytes(&self.stem)))
    }
}

/// A NEDLIB harvest read as captures, in a sorted walk: day folders by date, running numbers
/// by number, files by name. Opening lists nothing; each folder is listed (names only) when
/// the walk reaches it.
pub struct NedlibHarvest {
    /// Names are relative to this (the parent of the root when the root is a day folder, so
    /// a name always starts with its day).
    base: PathBuf,
    opts: NedlibOptions,
    /// Folders still to list, the next one last.
    dirs: Vec<(PathBuf, Option<Arc<Folder>>)>,
    /// Pairs of the folder being read.
    pending: VecDeque<Pair>,
    quirks: QuirkLog,
    side: Vec<SideFile>,
    /// Relative names already taken (two names escaping to the same text are refused).
    taken: HashSet<String>,
}

/// Why a capture's server `Date` is not its date; said in the quirk and the date's source.
#[derive(Debug, thiserror::Error)]
enum UnusableServerDate {
    /// The `.meta` has no `Date` header.
    #[error("no Date header")]
    Absent,
    /// Its `Date` header is no date even read tolerantly.
    #[error("Date header not understood")]
    NotUnderstood,
    /// It is more than 36 hours from noon of the day folder it was harvested into.
    #[error(
        "server Date {} is more than a day away from the folder's day",
        .0.format("%Y-%m-%dT%H:%M:%SZ")
    )]
    FarFromFolder(DateTime<Utc>),
}

impl NedlibHarvest {
    /// Opens a harvest root (or a single day folder): checks it is a directory, nothing more.
    pub fn open(root: &Path, opts: NedlibOptions) -> Result<NedlibHarvest, CaptureError> {
        // The root is the operator's path and may be a link; nothing below it is followed.
        let meta = std::fs::metadata(root)
            .map_err(|source| CaptureError::Io { path: root.to_path_buf(), source })?;
        if !meta.is_dir() {
            return Err(CaptureError::NotADirectory {
                path: root.to_path_buf(),
                layout: "a NEDLIB harvest is a folder of day folders",
            });
        }
        let day = root
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| day_of(n).map(|date| Arc::new(Folder { name: n.to_string(), date })));
        let base = match (&day, root.parent()) {
            (Some(_), Some(parent)) => parent.to_path_buf(),
            _ => root.to_path_buf(),
        };
        Ok(NedlibHarvest {
            base,
            opts,
            dirs: vec![(root.to_path_buf(), day)],
            pending: VecDeque::new(),
            quirks: QuirkLog::default(),
            side: Vec::new(),
            taken: HashSet::new(),
        })
    }

    fn rel(&self, path: &Path) -> String {
        name_text(&self.base, path)
    }

    fn quirk(&mut self, file: &str, line: Option<u64>, kind: &str, detail: String) {
        self.quirks.note(file, line, None, kind, detail);
    }

    /// Keeps a file byte-exact under `logs/`, with a quirk saying why.
    fn keep_side(&mut self, path: &Path, kind: &str, detail: &str) {
        let relative = self.rel(path);
        self.quirk(&relative, None, kind, format!("{detail}; kept as a side file under logs/"));
        self.side.push(SideFile { path: path.to_path_buf(), relative });
    }

    /// Refuses a `.meta` as a capture (listed; the run exits 1) and keeps it, and its data
    /// file when there is one, byte-exact under `logs/`.
    fn refuse_pair(&mut self, pair: &Pair, meta: &Path, kind: &str, why: &str) {
        if let Some(data) = pair.data() {
            self.keep_side(&data, "data-without-meta", "its .meta was refused");
        }
        let rel = self.rel(meta);
        self.quirks.refuse(&rel, None, kind, format!("{why}; kept as a side file under logs/"));
        self.side.push(SideFile { path: meta.to_path_buf(), relative: rel });
    }

    /// Lists one folder: sub-folders go on the stack (sorted), files become pairs or side
    /// files, anything else is refused.
    fn list(&mut self, dir: PathBuf, folder: Option<Arc<Folder>>) {
        let mut listing = self.walk_folder(&dir);
        listing.files.sort();
        let names: HashSet<&[u8]> = listing.files.iter().map(|n| n.as_bytes()).collect();
        let shared: Arc<Path> = Arc::from(dir.as_path());
        let mut pairs = Vec::new();
        let mut sides = Vec::new();
        for name in &listing.files {
            let n = name.as_bytes();
            if let Some(stem) = n.strip_suffix(b".meta") {
                pairs.push(Pair {
                    dir: Arc::clone(&shared),
                    stem: stem.into(),
                    data: names.contains(stem),
                    data_refused: listing.refused.contains(OsStr::from_bytes(stem)),
                    folder: folder.clone(),
                });
            } else if !names.contains([n, b".meta"].concat().as_slice()) {
                // A data file of a pair is read with its .meta; any other file is kept aside.
                let (kind, detail) = side_file_kind(n);
                sides.push((dir.join(name), kind, detail));
            }
        }
        for (path, kind, detail) in sides {
            self.keep_side(&path, kind, detail);
        }
        self.pending.extend(pairs);
        self.push_folders(listing.dirs, folder);
    }

    /// The names of a folder's regular files, its sub-folders, and the names refused (links,
    /// FIFOs: reported here and never opened).
    fn walk_folder(&mut self, dir: &Path) -> FolderListing {
        let walk = walkdir::WalkDir::new(dir).min_depth(1).max_depth(1).follow_links(false);
        let mut listing = FolderListing::default();
        for e in walk {
            let e = match e {
                Ok(e) => e,
                Err(err) => {
                    self.refuse_unreadable(dir, &err);
                    continue;
                }
            };
            if e.file_type().is_dir() {
                listing.dirs.push((e.file_name().to_os_string(), e.into_path()));
                continue;
            }
            let rel = self.rel(e.path());
            // lstat again: a link or FIFO is reported here and never opened.
            match super::take_regular(e.path(), &rel, &mut self.taken) {
                Ok(_) => listing.files.push(e.file_name().to_os_string()),
                Err(why) => {
                    self.quirks.refuse(&rel, None, "refused", why.to_string());
                    listing.refused.insert(e.file_name().to_os_string());
                }
            }
        }
        listing
    }

    /// An unreadable folder (or one whose path is over PATH_MAX) costs itself, not the
    /// harvest: refused, saying why.
    fn refuse_unreadable(&mut self, dir: &Path, err: &walkdir::Error) {
        let at = err.path().unwrap_or(dir).to_path_buf();
        let rel = self.rel(&at);
        let why = match err.io_error().and_then(std::io::Error::raw_os_error) {
            Some(libc::ENAMETOOLONG) => "its path is longer than PATH_MAX: not read".to_string(),
            _ => format!("not read: {}", err.io_error().map_or(err.to_string(), |e| e.to_string())),
        };
        self.quirks.refuse(&rel, None, "unreadable-directory", why);
    }

    /// Puts sub-folders on the stack: day folders in date order (2003-7-9 before 2003-7-16),
    /// running numbers in number order, anything else by name; the last pushed is listed
    /// first. A day folder dates what is below it; others keep `folder`'s date.
    fn push_folders(&mut self, mut dirs: Vec<(OsString, PathBuf)>, folder: Option<Arc<Folder>>) {
        let key = |name: &OsString| {
            let s = name.to_str();
            match (s.and_then(day_of), s.and_then(|s| s.parse::<u64>().ok())) {
                (Some(d), _) => (0, d.num_days_from_ce() as u64, name.clone()),
                (None, Some(n)) => (1, n, name.clone()),
                _ => (2, 0, name.clone()),
            }
        };
        dirs.sort_by_key(|(n, _)| key(n));
        for (name, path) in dirs.into_iter().rev() {
            let day = name
                .to_str()
                .and_then(|n| day_of(n).map(|date| Arc::new(Folder { name: n.into(), date })));
            self.dirs.push((path, day.or_else(|| folder.clone())));
        }
    }

    /// Reads one pair: a capture, or nothing (refused, or its files became side files).
    fn read_pair(&mut self, pair: Pair) -> Option<Capture> {
        let meta_path = pair.meta();
        let rel_meta = self.rel(&meta_path);
        let meta = self.read_meta(&pair, &meta_path, &rel_meta)?;
        let data_path = pair.data();
        let Some((url_bytes, url_line)) = &meta.arc_url else {
            self.keep_side(&meta_path, "no-arc-url", "no Arc-Url line: no URL, so no capture");
            if let Some(data) = &data_path {
                self.keep_side(data, "data-without-meta", "its .meta has no Arc-Url");
            }
            return None;
        };
        let uri = self.capture_uri(&pair, &meta_path, &rel_meta, (url_bytes, *url_line), &meta)?;
        let data = self.data_file(&pair, data_path, &rel_meta);
        let truncated = self.check_lengths(&rel_meta, &meta, data.len);
        let Some((date, date_source)) = self.date_of(&pair, &meta, &rel_meta) else {
            let why = "neither a usable server Date, nor a day folder, nor a modification time \
                       a WARC-Date can state: no date, so no capture";
            self.refuse_pair(&pair, &meta_path, "no-date", why);
            return None;
        };
        let block = metadata_block(&meta, &rel_meta, data.rel.as_deref());
        let (kind, http_header, content_type) = match meta.header {
            Some(h) => (CaptureKind::Response, Some(h), meta.content_type),
            None => (
                CaptureKind::Resource,
                None,
                Some(meta.content_type.unwrap_or_else(|| "application/octet-stream".into())),
            ),
        };
        Some(Capture {
            uri,
            date,
            date_source,
            ip: None,
            kind,
            http_header,
            content_type,
            payload: data.payload(),
            truncated,
            provenance: Provenance {
                file: data.rel.unwrap_or_else(|| rel_meta.clone()),
                offset: None,
                offset_in_member: None,
            },
            warc_fields: Vec::new(),
            metadata: Some(block),
        })
    }

    /// The pair's `.meta`, read (bounded) and parsed, its quirks taken; `None` (the pair
    /// refused) when it cannot be read or is too large to be one.
    fn read_meta(&mut self, pair: &Pair, meta_path: &Path, rel_meta: &str) -> Option<Meta> {
        let bytes = match layout::read_bounded(meta_path, MAX_META) {
            Ok(b) => b,
            Err(e) => {
                let (kind, why) = match &e {
                    ConfineError::TooLarge { .. } => (
                        "meta-too-large",
                        format!(
                            "larger than {MAX_META} bytes (a NEDLIB .meta is a few hundred): not parsed"
                        ),
                    ),
                    e => ("refused", refusal(e)),
                };
                self.refuse_pair(pair, meta_path, kind, &why);
                return None;
            }
        };
        let mut quirks = FileQuirks::default();
        let meta = parse_meta(&bytes, &mut quirks);
        self.quirks.take_file(rel_meta, quirks, true);
        Some(meta)
    }

    /// The pair's data file: its length now (its bytes are read when the record is written);
    /// when it is absent or refused, a capture with an empty payload, said so.
    fn data_file(&mut self, pair: &Pair, data_path: Option<PathBuf>, rel_meta: &str) -> DataFile {
        let note = |this: &mut Self, why: String| {
            this.quirk(rel_meta, None, "meta-without-data", why);
        };
        let Some(data) = data_path else {
            let why = match pair.data_refused {
                true => "its data file was refused (see there): a capture with an empty payload",
                false => "no data file beside it: a capture with an empty payload",
            };
            note(self, why.into());
            return DataFile { path: None, rel: None, len: None };
        };
        let opened = layout::open_regular(&data).and_then(|f| {
            f.metadata().map_err(|source| ConfineError::Io { path: data.clone(), source })
        });
        let rel = self.rel(&data);
        match opened {
            Ok(m) => DataFile { len: Some(m.len()), rel: Some(rel), path: Some(data) },
            Err(e) => {
                self.quirks.refuse(&rel, None, "refused", refusal(&e));
                let why =
                    format!("its data file {rel} was refused: a capture with an empty payload");
                note(self, why);
                DataFile { path: None, rel: None, len: None }
            }
        }
    }

    /// The capture's URI from the `.meta`'s Arc-Url (at `url_line`): absolute, its scheme in
    /// lower case; `None` (the pair refused) when WARC could not state it.
    fn capture_uri(
        &mut self,
        pair: &Pair,
        meta_path: &Path,
        rel_meta: &str,
        (url_bytes, url_line): (&[u8], u64),
        meta: &Meta,
    ) -> Option<String> {
        let (text, escaped) = uri_text(url_bytes);
        // WARC requires an absolute URI: an Arc-Url without a scheme is no capture.
        let uri = match target_uri(&text) {
            Ok((uri, changed)) => {
                if changed {
                    self.quirk(rel_meta, Some(url_line), "url-scheme-case", format!("Arc-Url {text:?}: the scheme is written in lower case ({uri}), as every reader compares it; the line is kept as stored in the metadata record"));
                }
                uri
            }
            Err(e) => {
                self.refuse_pair(
                    pair,
                    meta_path,
                    "unusable-url",
                    &format!("Arc-Url: {e}: WARC needs an absolute URI, so no capture"),
                );
                return None;
            }
        };
        if escaped {
            self.quirk(rel_meta, Some(url_line), "url-escaped", format!("Arc-Url holds control characters or bytes that are not UTF-8: written percent-encoded as {uri}"));
        }
        if meta.header.is_some() && !is_http_uri(&uri) {
            self.quirk(rel_meta, Some(url_line), "not-http-url", "an HTTP header stored for a URL that is not http(s): the record's payload is its whole block (header included), as every reader takes it".into());
        }
        Some(uri)
    }

    /// The stored length against the `.meta`'s Arc-Length and Content-Length, reported where
    /// they differ; `Some("length")` when the capture is shorter than served.
    fn check_lengths(
        &mut self,
        rel_meta: &str,
        meta: &Meta,
        data_len: Option<u64>,
    ) -> Option<String> {
        let mut truncated = None;
        match (meta.arc_length.and_then(|(n, l)| n.map(|n| (n, l))), data_len) {
            (Some((n, line)), Some(len)) if n != len => {
                let what = if len < n { "shorter" } else { "longer" };
                if len < n {
                    truncated = Some("length".to_string());
                }
                self.quirk(
                    rel_meta,
                    Some(line),
                    "arc-length-mismatch",
                    format!(
                        "Arc-Length {n}, the data file holds {len} bytes ({what}){}",
                        if len < n { ": marked truncated" } else { "" }
                    ),
                );
            }
            // No data: shorter than served unless the harvester said it was empty.
            (Some((0, _)), None) => {}
            (_, None) => truncated = Some("length".to_string()),
            _ => {}
        }
        if meta.arc_length.is_none() {
            self.quirk(
                rel_meta,
                None,
                "no-arc-length",
                "no Arc-Length line: the stored length is the data file's".into(),
            );
        }
        if let (Some((Some(n), line)), Some(len)) = (meta.content_length, data_len)
            && n != len
        {
            self.quirk(
                rel_meta,
                Some(line),
                "content-length-mismatch",
                format!(
                    "Content-Length {n}, the data file holds {len} bytes: header kept as stored"
                ),
            );
        }
        truncated
    }

    /// The capture's date per the option, falling back to the other source (reported), then to
    /// the `.meta`'s modification time; `None` when none of them is a date a WARC can state.
    fn date_of(
        &mut self,
        pair: &Pair,
        meta: &Meta,
        rel: &str,
    ) -> Option<(DateTime<Utc>, DateSource)> {
        let folder = pair.folder.as_ref().map(|f| {
            let noon = f.date.and_hms_opt(12, 0, 0).unwrap_or_default().and_utc();
            (noon, format!("folder date {} at 12:00 UTC", f.name))
        });
        // The server date, and why it is not usable when it is not.
        let server = match &meta.date {
            None => Err(UnusableServerDate::Absent),
            Some((_, _, None)) => Err(UnusableServerDate::NotUnderstood),
            Some((_, _, Some(t))) => match &folder {
                Some((noon, _)) if (*t - *noon).abs() > Duration::hours(36) => {
                    Err(UnusableServerDate::FarFromFolder(*t))
                }
                _ => Ok(*t),
            },
        };
        let date_line = meta.date.as_ref().map(|(_, l, _)| *l);
        let server_label = "server Date header".to_string();
        let chosen = match (self.opts.date_source, server, folder) {
            (NedlibDate::ServerDate, Ok(t), _) => Some((t, server_label)),
            (NedlibDate::ServerDate, Err(why), Some((t, label))) => {
                self.quirk(
                    rel,
                    date_line,
                    "date-fallback",
                    format!("{why}: the folder date is used"),
                );
                Some((t, format!("{label} ({why})")))
            }
            (NedlibDate::FolderDate, _, Some((t, label))) => Some((t, label)),
            (NedlibDate::FolderDate, Ok(t), None) => {
                self.quirk(
                    rel,
                    date_line,
                    "date-fallback",
                    "no day folder in the path: the server Date is used".into(),
                );
                Some((t, format!("{server_label} (no day folder in the path)")))
            }
            // Without a folder the server date is refused only when missing or not understood.
            (_, Err(_), None) => None,
        };
        let (date, label) = match chosen {
            Some(c) => c,
            None => {
                // A modification time is anything a hostile tree sets: only one a WARC-Date
                // can state is taken (chrono's own conversion panics out of its range).
                let modified = std::fs::symlink_metadata(pair.meta()).and_then(|m| m.modified());
                let mtime = stateable_time(modified.ok()?)?;
                self.quirk(rel, date_line, "date-fallback", "neither a usable server Date nor a day folder: the .meta's modification time is used".into());
                (mtime, "modification time of the .meta file".to_string())
            }
        };
        Some((date, DateSource { label, inferred: true }))
    }
}

impl Iterator for NedlibHarvest {
    type Item = Result<Capture, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(pair) = self.pending.pop_front() {
                match self.read_pair(pair) {
                    Some(c) => return Some(Ok(c)),
                    None => continue,
                }
            }
            let (dir, folder) = self.dirs.pop()?;
            self.list(dir, folder);
        }
    }
}

impl CaptureSource for NedlibHarvest {
    fn shape_name(&self) -> &'static str {
        "nedlib"
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

/// A file time as a date a WARC can state, or `None` (before 1970, past 9999: a hostile
/// tree sets any; chrono's own conversion panics out of its range).
fn stateable_time(t: std::time::SystemTime) -> Option<DateTime<Utc>> {
    let secs = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    DateTime::<Utc>::from_timestamp(secs.try_into().ok()?, 0).filter(warc_date_stateable)
}

/// A URL as text for `WARC-Target-URI`: as stored when it is UTF-8 without control characters;
/// otherwise control characters and bytes that are not UTF-8 are percent-encoded (how a browser
/// would have sent them). True when escaped.
fn uri_text(v: &[u8]) -> (String, bool) {
    let control = |c: u32| c < 0x20 || c == 0x7f;
    match std::str::from_utf8(v) {
        Ok(s) if !s.chars().any(|c| control(c as u32)) => (s.to_string(), false),
        Ok(s) => {
            (
                s.chars()
                    .map(|c| {
                        if control(c as u32) { format!("%{:02X}", c as u32) } else { c.to_string() }
                    })
                    .collect(),
                true,
            )
        }
        Err(_) => (
            v.iter()
                .map(|&b| {
                    if b.is_ascii() && !control(u32::from(b)) {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect(),
            true,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::dates::utc;

    /// A file that is no part of a pair is kept aside under the kind that says why.
    #[test]
    fn files_outside_pairs_are_told_apart() {
        let md5 = b"0123456789abcdef0123456789ABCDEF";
        assert_eq!(side_file_kind(md5).0, "data-without-meta");
        assert_eq!(side_file_kind(&md5[1..]).0, "unexpected-file", "31 hex digits");
        assert_eq!(side_file_kind(b"access3.data").0, "side-car");
        assert_eq!(side_file_kind(b"access3.dat").0, "unexpected-file");
        assert_eq!(side_file_kind(b"notes.txt").0, "unexpected-file");
    }

    /// These words go into the quirk and the METS's statement of where a date came from.
    #[test]
    fn why_a_server_date_is_not_used_reads_as_before() {
        let far = UnusableServerDate::FarFromFolder(utc(2003, 4, 4, 8, 36, 47));
        assert_eq!(
            far.to_string(),
            "server Date 2003-04-04T08:36:47Z is more than a day away from the folder's day"
        );
        assert_eq!(UnusableServerDate::Absent.to_string(), "no Date header");
        assert_eq!(UnusableServerDate::NotUnderstood.to_string(), "Date header not understood");
    }

    #[test]
    fn urls_are_kept_or_escaped() {
        assert_eq!(uri_text(b"http://www.nb.no:80/a b"), ("http://www.nb.no:80/a b".into(), false));
        assert_eq!(uri_text("http://h/bl\u{e5}".as_bytes()), ("http://h/bl\u{e5}".into(), false));
        assert_eq!(uri_text(b"http://h/bl\xe5%20"), ("http://h/bl%E5%20".into(), true));
        assert_eq!(uri_text(b"http://h/\rWARC-Type: x"), ("http://h/%0DWARC-Type: x".into(), true));
    }

    #[test]
    fn day_folders_are_recognised() {
        assert_eq!(day_of("2003-7-16"), NaiveDate::from_ymd_opt(2003, 7, 16));
        assert_eq!(day_of("2003-07-06"), NaiveDate::from_ymd_opt(2003, 7, 6));
        for bad in ["2003-13-1", "03-7-16", "2003-7", "2003-7-16-1", "2003-7-x", "0000"] {
            assert!(day_of(bad).is_none(), "{bad}");
        }
    }

    const MD5A: &str = "0123456789abcdef0123456789abcdef";
    const MD5B: &str = "fedcba9876543210fedcba9876543210";

    fn meta_for(url: &[u8], len: usize) -> Vec<u8> {
        let mut m = b"HTTP/1.0 200 OK\nDate: Wed, 16 Jul 2003 07:41:29 GMT\nContent-Type: text/plain\nArc-Url: ".to_vec();
        m.extend_from_slice(url);
        m.extend_from_slice(format!("\nArc-Length: {len}\n").as_bytes());
        m
    }

    fn all(root: &Path) -> (Vec<Capture>, Vec<String>, Vec<Quirk>, Vec<SideFile>) {
        let mut h = NedlibHarvest::open(root, NedlibOptions::default()).unwrap();
        let mut caps = Vec::new();
        let mut errs = Vec::new();
        for c in h.by_ref() {
            match c {
                Ok(c) => caps.push(c),
                Err(e) => errs.push(e.to_string()),
            }
        }
        (caps, errs, h.quirks().to_vec(), h.side_files())
    }

    fn h_refusals(root: &Path) -> (Vec<(String, String)>, u64) {
        let mut h = NedlibHarvest::open(root, NedlibOptions::default()).unwrap();
        h.by_ref().for_each(drop);
        let (list, n) = h.refusals();
        (list.to_vec(), n)
    }

    #[test]
    fn links_are_refused_not_followed_and_big_metas_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret.meta"), meta_for(b"http://secret/", 6)).unwrap();
        std::fs::write(outside.join("secret"), b"secret").unwrap();
        let run = tmp.path().join("h/2003-7-16/0000");
        std::fs::create_dir_all(&run).unwrap();
        // A linked .meta (its data is a plain file), a linked data file (its .meta plain).
        std::os::unix::fs::symlink(outside.join("secret.meta"), run.join(format!("{MD5A}.meta")))
            .unwrap();
        std::fs::write(run.join(MD5A), b"hello!").unwrap();
        std::fs::write(run.join(format!("{MD5B}.meta")), meta_for(b"http://h:80/b", 6)).unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), run.join(MD5B)).unwrap();
        // A linked folder.
        std::os::unix::fs::symlink(&outside, tmp.path().join("h/2003-7-16/0001")).unwrap();
        // A .meta over the bound, with its data.
        let big = "abababababababababababababababab";
        let mut m = meta_for(b"http://h:80/big", 1);
        m.resize(MAX_META as usize + 1, b'x');
        std::fs::write(run.join(format!("{big}.meta")), m).unwrap();
        std::fs::write(run.join(big), b"z").unwrap();

        let (caps, errs, quirks, sides) = all(&tmp.path().join("h"));
        assert!(caps.iter().all(|c| !c.uri.contains("secret")));
        assert_eq!(caps.len(), 1, "{caps:?}");
        assert_eq!(caps[0].uri, "http://h:80/b");
        assert!(caps[0].payload.is_empty());
        assert_eq!(caps[0].truncated.as_deref(), Some("length"));
        let has = |file: &str, kind: &str| quirks.iter().any(|q| q.file == file && q.kind == kind);
        assert!(has(&format!("2003-7-16/0000/{MD5A}.meta"), "refused"), "{quirks:#?}");
        assert!(has(&format!("2003-7-16/0000/{MD5B}"), "refused"));
        assert!(has(&format!("2003-7-16/0000/{MD5B}.meta"), "meta-without-data"));
        assert!(has("2003-7-16/0001", "refused"));
        assert!(has(&format!("2003-7-16/0000/{big}.meta"), "meta-too-large"));
        // Refused one by one, listed, never an error that stops the harvest.
        assert!(errs.is_empty(), "{errs:?}");
        let (refused, n) = h_refusals(&tmp.path().join("h"));
        assert_eq!(n, 4, "{refused:?}");
        assert!(
            refused
                .iter()
                .any(|(f, why)| f.ends_with(&format!("{big}.meta")) && why.contains("larger than"))
        );
        // Nothing lost: the unpaired data file and the refused .meta's files are kept.
        let rels: Vec<&str> = sides.iter().map(|s| s.relative.as_str()).collect();
        assert_eq!(
            rels,
            vec![
                format!("2003-7-16/0000/{MD5A}"),
                format!("2003-7-16/0000/{big}"),
                format!("2003-7-16/0000/{big}.meta"),
            ]
        );
    }

    /// A hostile tree's modification time is no date past 9999 (item 11 of issue 24): such a
    /// pair would be refused rather than dated `+10000-...`.
    #[test]
    fn a_modification_time_no_warc_date_can_state_is_not_used() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("h/misc/0000");
        std::fs::create_dir_all(&run).unwrap();
        let meta = run.join(format!("{MD5A}.meta"));
        std::fs::write(&meta, b"HTTP/1.0 200 OK\nArc-Url: http://h/\nArc-Length: 1\n").unwrap();
        std::fs::write(run.join(MD5A), b"z").unwrap();
        let set = |secs: u64| {
            let f = std::fs::File::options().write(true).open(&meta).unwrap();
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)).unwrap();
        };
        // File systems clamp what they store (ext4 at 2446), so the rule is checked as such.
        let at = |secs: u64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        assert!(stateable_time(at(253_402_300_800)).is_none());
        assert!(stateable_time(at(1 << 45)).is_none(), "no panic past chrono's range");
        assert!(stateable_time(at(253_402_300_799)).is_some());
        set(1_058_516_389);
        let (caps, _, _, _) = all(&tmp.path().join("h"));
        assert_eq!(caps.len(), 1);
        assert_eq!(caps[0].date.timestamp(), 1_058_516_389);
        assert_eq!(caps[0].date_source.label, "modification time of the .meta file");
    }

    #[test]
    fn odd_urls_and_missing_urls_do_not_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let day = tmp.path().join("2003-7-16");
        let run = day.join("0000");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(
            run.join(format!("{MD5A}.meta")),
            meta_for(b"http://h:80/bl\xe5b\xff\x00", 3),
        )
        .unwrap();
        std::fs::write(run.join(MD5A), b"abc").unwrap();
        std::fs::write(run.join(format!("{MD5B}.meta")), b"HTTP/1.0 200 OK\n\xff\xfe\n").unwrap();
        std::fs::write(run.join(MD5B), b"abc").unwrap();
        assert!(is_nedlib(&day) && is_nedlib(tmp.path()) && !is_nedlib(&run));
        let (caps, errs, quirks, sides) = all(&day);
        assert!(errs.is_empty());
        assert_eq!(caps.len(), 1);
        assert_eq!(caps[0].uri, "http://h:80/bl%E5b%FF%00");
        assert_eq!(caps[0].provenance.file, format!("2003-7-16/0000/{MD5A}"));
        assert_eq!(caps[0].payload.len(), 3);
        assert!(quirks.iter().any(|q| q.kind == "url-escaped" && q.line == Some(4)));
        assert!(quirks.iter().any(|q| q.kind == "no-arc-url"));
        assert_eq!(sides.len(), 2);
    }
}

#[cfg(test)]
mod reader_tests;
