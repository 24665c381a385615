//! [`identify_paths`]: PRONOM identification on its own (`webaip identify`), of files, folders,
//! the payloads of WARC/ARC records, the WARCs inside WACZ files and the containers of
//! packages, reported as siegfried reports its matches.
//!
//! Each item is handed to the caller's sink as soon as it is identified, in a stable order
//! (paths as given, folders walked sorted, records in file order), so a run over a large
//! harvest holds only a batch of plain files' results at a time. The records are read by the
//! capture readers `pages` and `package` use (`sources::warc_captures`, `arc_captures`); a
//! WACZ's WARC members are copied to an anonymous temporary file first (disk, not memory).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use chrono::{DateTime, SecondsFormat, Utc};
use rayon::prelude::*;
use serde::Serialize;

use crate::capture::Capture;
use crate::formats::content_coding::Coding;
use crate::formats::droid::Signatures;
use crate::layout::{self, ConfineError};
use crate::model::{Identification, IdentificationBasis, Verdict};
use crate::sources::arc_captures::ArcCaptures;
use crate::sources::capture::{CaptureError, CaptureSource};
use crate::sources::recognise::{FileKind, Recognised, what_is};
use crate::sources::warc_captures::WarcCaptures;
use crate::sources::{ArchiveKind, archive_kind, path_text};
use crate::stages::identify::{Identifier, IdentifyError};

/// Plain files identified together (in parallel) before their results are handed on.
const FILE_BATCH: usize = 256;

/// siegfried's namespace of PRONOM results.
const NAMESPACE: &str = "pronom";

/// siegfried's identifier of an item no signature names.
const UNKNOWN: &str = "UNKNOWN";

/// siegfried's words for an empty item.
const EMPTY_SOURCE: &str = "empty source";

/// How to identify.
#[derive(Debug, Clone)]
pub struct IdentifyOptions {
    /// Plain files identified at once (records of one WARC or ARC file are read in order).
    pub jobs: usize,
}

impl Default for IdentifyOptions {
    fn default() -> Self {
        IdentifyOptions { jobs: 1 }
    }
}

/// The tool and signature files a run identifies with.
#[derive(Debug, Clone, Serialize)]
pub struct IdentifyVersions {
    /// `webaip 0.1.0`.
    pub tool: String,
    /// The tool and signature files, as the PREMIS agent names them.
    pub signatures: String,
}

/// What became of an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemStatus {
    /// Its bytes were identified (the matches say what they are, `UNKNOWN` when nothing).
    Identified,
    /// It holds no byte.
    Empty,
    /// A link, FIFO, device or socket: never followed or opened.
    Refused,
    /// It could not be read (`errors` says why, naming the file and offset).
    Failed,
}

/// One format an item matches, with siegfried's fields (`sf -json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FormatMatch {
    /// `pronom`.
    pub ns: String,
    /// The PUID (`fmt/11`), or `UNKNOWN`.
    pub id: String,
    /// PRONOM's name of the format.
    pub format: String,
    /// The format's version (empty when it has none).
    pub version: String,
    /// The MIME types PRONOM lists for it.
    pub mime: String,
    /// PRONOM's classification (not in the signature file: empty).
    pub class: String,
    /// What the match rests on: `byte match`, `text match ASCII`.
    pub basis: String,
    /// `no match`, `empty source`, or why the bytes contradict the declared type.
    pub warning: String,
}

/// One item identified: a file, or the payload of a record.
#[derive(Debug, Clone, Serialize)]
pub struct IdentifiedItem {
    /// The path; a record's payload as siegfried names it, `FILE#YYYYMMDDhhmmss/URI` (a
    /// WACZ's as `FILE.wacz#archive/NAME.warc.gz#YYYYMMDDhhmmss/URI`).
    pub filename: String,
    /// Bytes (of the payload, for a record).
    pub filesize: u64,
    /// When it was last modified (a record: captured), RFC 3339; empty when not known.
    pub modified: String,
    /// Why it was not identified, as siegfried's `errors` (`empty source` when empty).
    pub errors: String,
    /// What became of it.
    pub status: ItemStatus,
    /// The formats matched, as siegfried lists them (one `UNKNOWN` when none).
    pub matches: Vec<FormatMatch>,
    /// A record's offset (of its gzip member) in its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// A record's target URI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The type the harvest declared for a record's payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
    /// The bytes against the declared type: `consistent`, `not confirmed: why` or
    /// `contradicted: why`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// A run's items, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IdentifySummary {
    /// Items handed on (files and record payloads, refused and failed ones included).
    pub items: u64,
    /// Items that matched no format.
    pub unknown: u64,
    /// Items no signature matched whose content is text, named by it (HTML, XML, SVG, JSON,
    /// CSS, JavaScript or plain text).
    pub text: u64,
    /// Items several formats survived for.
    pub several: u64,
    /// Items with no byte.
    pub empty: u64,
    /// Record payloads whose bytes contradict their declared type.
    pub contradicted: u64,
    /// Links, FIFOs, devices and sockets met, never opened.
    pub refused: u64,
    /// Items that could not be read.
    pub failed: u64,
    /// Items by PUID (each match counted).
    pub by_puid: BTreeMap<String, u64>,
}

/// Why an item could not be identified, or the run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum IdentifyPathsError {
    /// The built-in signature file does not load.
    #[error(transparent)]
    Signatures(#[from] IdentifyError),
    /// The worker threads could not start.
    #[error("cannot start worker threads: {0}")]
    Workers(#[from] rayon::ThreadPoolBuildError),
    /// The caller's sink failed (the output could not be written).
    #[error("writing the output: {}", layout::describe_io(.0))]
    Output(#[source] io::Error),
    /// A link, FIFO, device or socket, where a file is expected.
    #[error("{path}: is {kind}, not followed or opened")]
    Refused {
        /// The path, as shown.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// A path that cannot be read.
    #[error("{path}: {why}")]
    Unreadable {
        /// The path, as shown.
        path: String,
        /// Why, in words.
        why: String,
    },
    /// A file could not be opened or read.
    #[error(transparent)]
    Confined(#[from] ConfineError),
    /// A WARC or ARC file cannot be read further (the error names it and the offset).
    #[error(transparent)]
    Records(#[from] CaptureError),
    /// A record's payload could not be read.
    #[error("{file} at offset {offset}: payload: {}", layout::describe_io(source))]
    Payload {
        /// The WARC or ARC file, as shown.
        file: String,
        /// The record's offset.
        offset: u64,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A WACZ file, or one of its members, cannot be read.
    #[error("{file}: {what}")]
    Wacz {
        /// The WACZ file (and member), as shown.
        file: String,
        /// Why.
        what: String,
    },
}

/// The tool and signature files [`identify_paths`] identifies with.
pub fn identify_versions() -> Result<IdentifyVersions, IdentifyError> {
    let identifier = Identifier::shipped()?;
    let tool = format!("webaip {}", env!("CARGO_PKG_VERSION"));
    Ok(IdentifyVersions { tool, signatures: identifier.method() })
}

/// Identifies `paths` and hands each item to `sink` in order: a file; a folder, walked sorted
/// (links, FIFOs, devices and sockets refused, never followed or opened); a WARC or ARC file
/// (the file, then each `response`/`resource` record's payload); a WACZ (the file, then the
/// payloads of its `archive/` WARCs); a package folder (the payloads of its containers).
///
/// An item that cannot be read is handed on with its error and the run goes on; the run
/// fails only when the signatures do not load or `sink` fails.
pub fn identify_paths(
    paths: &[PathBuf],
    options: &IdentifyOptions,
    sink: &mut dyn FnMut(&IdentifiedItem) -> io::Result<()>,
) -> Result<IdentifySummary, IdentifyPathsError> {
    let identifier = Identifier::shipped()?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(options.jobs.max(1)).build()?;
    let mut run = Run { identifier, pool, sink, summary: IdentifySummary::default() };
    for path in paths {
        run.path(path)?;
    }
    Ok(run.summary)
}

/// What a file holds that is identified besides the file itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    Warc,
    Arc,
    Wacz,
}

/// A file to identify whole.
struct Unit {
    /// Where it is opened (a link given on the command line: its target).
    open: PathBuf,
    /// Its name in the report.
    name: String,
    /// Records to identify after it.
    inside: Option<Inside>,
}

/// A run under way.
struct Run<'s> {
    identifier: Identifier,
    pool: rayon::ThreadPool,
    sink: &'s mut dyn FnMut(&IdentifiedItem) -> io::Result<()>,
    summary: IdentifySummary,
}

impl Run<'_> {
    /// Counts `item` and hands it on.
    fn emit(&mut self, item: IdentifiedItem) -> Result<(), IdentifyPathsError> {
        self.summary.count(&item);
        (self.sink)(&item).map_err(IdentifyPathsError::Output)
    }

    /// One path given: what it is decides how it is read.
    fn path(&mut self, path: &Path) -> Result<(), IdentifyPathsError> {
        let name = path_text(path);
        match what_is(path) {
            Recognised::Missing => {
                let why = "it does not exist".to_string();
                self.emit(failed(&name, IdentifyPathsError::Unreadable { path: name.clone(), why }))
            }
            Recognised::Unreadable(why) => {
                self.emit(failed(&name, IdentifyPathsError::Unreadable { path: name.clone(), why }))
            }
            Recognised::Special(kind) => self.emit(refused(&name, kind)),
            Recognised::PackageFolder => self.package(path),
            Recognised::Harvest(_) | Recognised::Folder { .. } => self.folder(path),
            Recognised::File(kind) => {
                // The operator's own path may be a link: followed, once, as every command does.
                let open = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                let inside = inside_by_kind(kind).or_else(|| inside_by_name(path));
                self.files(vec![Unit { open, name, inside }])
            }
            Recognised::MetsDocument => {
                let open = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                self.files(vec![Unit { open, name, inside: None }])
            }
        }
    }

    /// A folder, walked sorted by name; what is neither a file nor a folder is refused.
    fn folder(&mut self, dir: &Path) -> Result<(), IdentifyPathsError> {
        let mut batch = Vec::new();
        for entry in walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    self.files(std::mem::take(&mut batch))?;
                    let path = e.path().unwrap_or(dir);
                    let name = path_text(path);
                    let why = e.io_error().map_or_else(|| e.to_string(), layout::describe_io);
                    let error = IdentifyPathsError::Unreadable { path: name.clone(), why };
                    self.emit(failed(&name, error))?;
                    continue;
                }
            };
            let kind = entry.file_type();
            if kind.is_dir() {
                continue;
            }
            if kind.is_file() {
                let path = entry.into_path();
                let inside = inside_by_name(&path);
                batch.push(Unit { name: path_text(&path), open: path, inside });
                if batch.len() >= FILE_BATCH {
                    self.files(std::mem::take(&mut batch))?;
                }
                continue;
            }
            self.files(std::mem::take(&mut batch))?;
            let what = std::fs::symlink_metadata(entry.path())
                .map_or("not a regular file", |m| layout::kind_of(&m));
            self.emit(refused(&path_text(entry.path()), what))?;
        }
        self.files(batch)
    }

    /// Files identified whole (in parallel), handed on in order, each followed by what it
    /// holds.
    fn files(&mut self, units: Vec<Unit>) -> Result<(), IdentifyPathsError> {
        let identifier = self.identifier;
        let items: Vec<IdentifiedItem> =
            self.pool.install(|| units.par_iter().map(|u| whole_file(&identifier, u)).collect());
        for (unit, item) in units.iter().zip(items) {
            let readable = item.status != ItemStatus::Failed;
            self.emit(item)?;
            match unit.inside {
                Some(inside) if readable => self.inside(unit, inside)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The records of a WARC or ARC file, or of a WACZ's WARCs.
    fn inside(&mut self, unit: &Unit, inside: Inside) -> Result<(), IdentifyPathsError> {
        let name = unit.name.clone();
        match inside {
            Inside::Warc => self.captures(&name, WarcCaptures::open(&unit.open, name.clone())),
            Inside::Arc => self.captures(&name, ArcCaptures::open(&unit.open, name.clone(), None)),
            Inside::Wacz => self.wacz(unit),
        }
    }

    /// Each capture's payload of a WARC or ARC reader; a reading error ends the file (it is
    /// handed on, naming the file and offset) and the run goes on with the next item.
    fn captures<S: CaptureSource>(
        &mut self,
        file: &str,
        source: Result<S, CaptureError>,
    ) -> Result<(), IdentifyPathsError> {
        let mut source = match source {
            Ok(s) => s,
            Err(e) => return self.emit(failed(file, e.into())),
        };
        for capture in &mut source {
            match capture {
                Ok(c) => {
                    let item = record_item(&self.identifier, file, &c);
                    self.emit(item)?;
                }
                Err(e) => return self.emit(failed(file, e.into())),
            }
        }
        Ok(())
    }

    /// The payloads of a WACZ's `archive/` WARC members, each copied to a temporary file.
    fn wacz(&mut self, unit: &Unit) -> Result<(), IdentifyPathsError> {
        let bad = |what: String| IdentifyPathsError::Wacz { file: unit.name.clone(), what };
        let opened = layout::open_regular(&unit.open)
            .map_err(IdentifyPathsError::from)
            .and_then(|f| zip::ZipArchive::new(f).map_err(|e| bad(e.to_string())));
        let mut zip = match opened {
            Ok(z) => z,
            Err(e) => return self.emit(failed(&unit.name, e)),
        };
        for index in 0..zip.len() {
            match spool_warc_member(&mut zip, index) {
                Ok(None) => {}
                Ok(Some((member, file))) => {
                    let name = format!("{}#{member}", unit.name);
                    let source = WarcCaptures::from_file(file, &unit.open, name.clone());
                    self.captures(&name, source)?;
                }
                Err(what) => {
                    let error = bad(format!("member {index}: {what}"));
                    self.emit(failed(&unit.name, error))?;
                }
            }
        }
        Ok(())
    }

    /// A package's containers' payloads; a folder holding a METS but no `content/` (another
    /// tool's package) is walked as a folder.
    fn package(&mut self, dir: &Path) -> Result<(), IdentifyPathsError> {
        let containers = layout::package_containers(dir).and_then(|mut names| {
            // Infected payloads are kept apart, in viral/: they are the package's too.
            names.extend(layout::viral_containers(dir)?);
            Ok(names)
        });
        let names = match containers {
            Ok(names) => names,
            Err(e) if e.is_not_found() => return self.folder(dir),
            // A package whose content/ breaks the layout (a link, a FIFO): that is said, and
            // what content/ holds is still identified, each entry refused or read on its own.
            Err(e) => {
                self.emit(failed(&path_text(dir), e.into()))?;
                return self.folder(&dir.join(layout::CONTENT_DIR));
            }
        };
        for name in names {
            let path = dir.join(&name);
            let shown = path_text(&path);
            match layout::open_in(dir, &name) {
                Ok(file) => {
                    self.captures(&shown, WarcCaptures::from_file(file, &path, shown.clone()))?
                }
                Err(e) => self.emit(failed(&shown, e.into()))?,
            }
        }
        Ok(())
    }
}

/// Records to read inside a file of this kind (told by its first bytes).
fn inside_by_kind(kind: FileKind) -> Option<Inside> {
    match kind {
        FileKind::Warc => Some(Inside::Warc),
        FileKind::Arc => Some(Inside::Arc),
        FileKind::Wacz => Some(Inside::Wacz),
        _ => None,
    }
}

/// Records to read inside a walked file, told by its name (a walk does not open a file twice).
fn inside_by_name(path: &Path) -> Option<Inside> {
    match archive_kind(path) {
        Some(ArchiveKind::Warc) => Some(Inside::Warc),
        Some(ArchiveKind::Arc) => Some(Inside::Arc),
        None => {
            let wacz = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("wacz"));
            wacz.then_some(Inside::Wacz)
        }
    }
}

/// Why a member of a WACZ cannot be read.
#[derive(Debug, thiserror::Error)]
enum WaczMemberError {
    /// The ZIP entry cannot be read.
    #[error("{0}")]
    Zip(#[from] zip::result::ZipError),
    /// Copying it out failed.
    #[error("{name}: {}", layout::describe_io(.source))]
    Io { name: String, source: io::Error },
    /// It holds other than its entry declares.
    #[error("{name}: {copied} bytes where its entry says {declared}")]
    Short { name: String, copied: u64, declared: u64 },
    /// It declares more than a WACZ of this size can honestly hold.
    #[error(
        "{name}: declares {declared} bytes from {compressed} compressed (over {MAX_EXPANSION} times)"
    )]
    TooLarge { name: String, declared: u64, compressed: u64 },
}

/// Most a WACZ member may expand (its declared size over its compressed size, beyond 1 MiB):
/// WARC records compress about 5 to 20 times; a bomb does not get to fill the disk.
const MAX_EXPANSION: u64 = 200;

/// Member `index` of a WACZ copied to an anonymous temporary file, when it is a WARC under
/// `archive/`; at most its declared size is copied, and a member holding other than that, or
/// declaring more than [`MAX_EXPANSION`] times its compressed size, is refused.
fn spool_warc_member(
    zip: &mut zip::ZipArchive<File>,
    index: usize,
) -> Result<Option<(String, File)>, WaczMemberError> {
    let mut member = zip.by_index(index)?;
    let name = member.name()?.to_string();
    if !member.is_file() || !name.starts_with("archive/") || !layout::is_warc_name(&name) {
        return Ok(None);
    }
    let (declared, compressed) = (member.size(), member.compressed_size());
    if declared > (1 << 20) && declared / compressed.max(1) > MAX_EXPANSION {
        return Err(WaczMemberError::TooLarge { name, declared, compressed });
    }
    let io_error = |source| WaczMemberError::Io { name: name.clone(), source };
    let mut file = tempfile::tempfile().map_err(io_error)?;
    let copied = io::copy(&mut (&mut member).take(declared.saturating_add(1)), &mut file)
        .and_then(|n| file.rewind().map(|_| n))
        .map_err(io_error)?;
    if copied != declared {
        return Err(WaczMemberError::Short { name, copied, declared });
    }
    Ok(Some((name, file)))
}

/// A file identified whole (only its first and last bytes are kept).
fn whole_file(identifier: &Identifier, unit: &Unit) -> IdentifiedItem {
    let opened = layout::open_regular(&unit.open).and_then(|f| {
        let meta = f.metadata().map_err(|source| confine_io(&unit.open, source))?;
        Ok((f, meta))
    });
    let (file, meta) = match opened {
        Ok(x) => x,
        Err(ConfineError::Link { .. }) => return refused(&unit.name, "a symbolic link"),
        Err(ConfineError::NotRegular { kind, .. }) => return refused(&unit.name, kind),
        Err(e) => return failed(&unit.name, e.into()),
    };
    let mut item = IdentifiedItem::named(unit.name.clone(), meta.len());
    item.modified = meta.modified().map(|t| rfc3339(t.into())).unwrap_or_default();
    if meta.len() == 0 {
        return item.empty();
    }
    match identifier.identify_file("", &file) {
        Ok(id) => item.identified(&id),
        Err(source) => failed(&unit.name, confine_io(&unit.open, source).into()),
    }
}

/// An I/O error reading the file at `path`.
fn confine_io(path: &Path, source: io::Error) -> ConfineError {
    ConfineError::Io { path: path.to_path_buf(), source }
}

/// A record's payload identified against the type the harvest declared for it.
fn record_item(identifier: &Identifier, file: &str, c: &Capture) -> IdentifiedItem {
    let name = format!("{file}#{}/{}", c.date.format("%Y%m%d%H%M%S"), c.uri);
    let declared = c.payload_mime();
    let mut item = IdentifiedItem::named(name, c.payload.len());
    item.modified = rfc3339(c.date);
    item.offset = c.provenance.offset;
    item.uri = Some(c.uri.clone());
    item.declared = Some(declared.clone());
    if c.payload.is_empty() {
        return item.empty();
    }
    let coding = c.http_header.as_deref().map_or(Coding::Identity, Coding::of_header);
    match c.payload.open().and_then(|r| identifier.identify_encoded(&declared, &coding, r)) {
        Ok(id) => match &c.truncated {
            Some(reason) => item.identified(&id.of_truncated_payload(reason)),
            None => item.identified(&id),
        },
        Err(source) => {
            let offset = c.provenance.offset.unwrap_or(0);
            let error = IdentifyPathsError::Payload { file: file.to_string(), offset, source };
            IdentifiedItem { status: ItemStatus::Failed, errors: error.to_string(), ..item }
        }
    }
}

/// An item that could not be read.
fn failed(name: &str, error: IdentifyPathsError) -> IdentifiedItem {
    let item = IdentifiedItem::named(name.to_string(), 0);
    IdentifiedItem { status: ItemStatus::Failed, errors: error.to_string(), ..item }
}

/// A link, FIFO, device or socket met where a file is expected.
fn refused(name: &str, kind: &'static str) -> IdentifiedItem {
    let error = IdentifyPathsError::Refused { path: name.to_string(), kind };
    let item = IdentifiedItem::named(name.to_string(), 0);
    IdentifiedItem { status: ItemStatus::Refused, errors: error.to_string(), ..item }
}

/// RFC 3339 in UTC, to the second (siegfried's `modified`).
fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl IdentifiedItem {
    /// An item not yet identified.
    fn named(filename: String, filesize: u64) -> IdentifiedItem {
        IdentifiedItem {
            filename,
            filesize,
            modified: String::new(),
            errors: String::new(),
            status: ItemStatus::Identified,
            matches: Vec::new(),
            offset: None,
            uri: None,
            declared: None,
            verdict: None,
        }
    }

    /// The item with no byte, as siegfried reports one.
    fn empty(self) -> IdentifiedItem {
        let matches = vec![unknown_match(EMPTY_SOURCE)];
        let errors = EMPTY_SOURCE.to_string();
        IdentifiedItem { status: ItemStatus::Empty, errors, matches, ..self }
    }

    /// The item with what identification found.
    fn identified(self, id: &Identification) -> IdentifiedItem {
        let verdict = self.declared.as_ref().map(|_| match &id.verdict {
            Verdict::Consistent => "consistent".to_string(),
            Verdict::NotConfirmed(why) => format!("not confirmed: {why}"),
            Verdict::Contradicted(why) => format!("contradicted: {why}"),
        });
        IdentifiedItem { matches: matches_of(id), verdict, ..self }
    }
}

/// What an identification says, as siegfried's matches: the one place an [`Identification`]
/// becomes output fields.
fn matches_of(id: &Identification) -> Vec<FormatMatch> {
    let warning = warning_of(id);
    if id.matches.is_empty() {
        let warning = match warning.is_empty() {
            true => "no match".to_string(),
            false => format!("no match; {warning}"),
        };
        return vec![unknown_match(&warning)];
    }
    let basis = siegfried_basis(id);
    let row = |f: &crate::model::Format| {
        let id = f.pronom.clone().unwrap_or_default();
        FormatMatch {
            ns: NAMESPACE.into(),
            mime: mime_of(&id),
            id,
            format: f.name.clone(),
            version: f.version.clone().unwrap_or_default(),
            class: String::new(),
            basis: basis.clone(),
            warning: warning.clone(),
        }
    };
    id.matches.iter().map(row).collect()
}

/// siegfried's `warning` column: a contradiction, what limits the result, how the content
/// was reached and which text checks named it; empty when there is nothing to say.
fn warning_of(id: &Identification) -> String {
    let contradiction = id.verdict.contradiction().map(|c| format!("contradicted: {c}"));
    let checks = match &id.basis {
        Some(IdentificationBasis::Text(checks)) => Some(checks.clone()),
        _ => None,
    };
    let caveat = id.caveat.as_ref().map(|c| format!("caveat: {c}"));
    let parts: Vec<String> =
        [contradiction, caveat, id.decoding.clone(), checks].into_iter().flatten().collect();
    parts.join("; ")
}

/// The basis in siegfried's words (`byte match`, `container match`, `text match ASCII`),
/// nothing else, so that tools comparing it with siegfried's read it alike.
fn siegfried_basis(id: &Identification) -> String {
    match (&id.basis, id.text) {
        (Some(IdentificationBasis::Container), _) => "container match".to_string(),
        (_, Some(kind)) => format!("text match {kind}"),
        (Some(IdentificationBasis::Text(_)), None) => "text match".to_string(),
        _ => "byte match".to_string(),
    }
}

/// The `UNKNOWN` match siegfried reports for what no signature names.
fn unknown_match(warning: &str) -> FormatMatch {
    FormatMatch {
        ns: NAMESPACE.into(),
        id: UNKNOWN.into(),
        format: String::new(),
        version: String::new(),
        mime: String::new(),
        class: String::new(),
        basis: String::new(),
        warning: warning.into(),
    }
}

/// The MIME types the signature file lists for `puid`, comma-separated.
fn mime_of(puid: &str) -> String {
    static MIMES: OnceLock<HashMap<String, String>> = OnceLock::new();
    let mimes = MIMES.get_or_init(|| {
        let formats = Signatures::shipped().map(|s| s.formats()).unwrap_or_default();
        formats.iter().map(|f| (f.puid.clone(), f.mime_types.join(", "))).collect()
    });
    mimes.get(puid).cloned().unwrap_or_default()
}

impl IdentifySummary {
    /// Counts one item.
    fn count(&mut self, item: &IdentifiedItem) {
        self.items += 1;
        match item.status {
            ItemStatus::Refused => self.refused += 1,
            ItemStatus::Failed => self.failed += 1,
            ItemStatus::Empty => self.empty += 1,
            ItemStatus::Identified => self.count_matches(item),
        }
    }

    fn count_matches(&mut self, item: &IdentifiedItem) {
        let known: Vec<&FormatMatch> = item.matches.iter().filter(|m| m.id != UNKNOWN).collect();
        self.unknown += u64::from(known.is_empty());
        self.several += u64::from(known.len() > 1);
        self.text += u64::from(known.iter().any(|m| m.basis.starts_with("text match")));
        let contradicted = item.verdict.as_deref().is_some_and(|v| v.starts_with("contradicted"));
        self.contradicted += u64::from(contradicted);
        for m in known {
            *self.by_puid.entry(m.id.clone()).or_default() += 1;
        }
    }

    /// True when an item was refused or could not be read.
    pub fn has_failures(&self) -> bool {
        self.refused + self.failed > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walked_files_are_expanded_by_their_names() {
        assert_eq!(inside_by_name(Path::new("a/b.warc.gz")), Some(Inside::Warc));
        assert_eq!(inside_by_name(Path::new("b.ARC.gz")), Some(Inside::Arc));
        assert_eq!(inside_by_name(Path::new("x.WACZ")), Some(Inside::Wacz));
        assert_eq!(inside_by_name(Path::new("x.zip")), None);
    }

    #[test]
    fn an_identification_becomes_siegfried_matches() {
        let identifier = Identifier::shipped().unwrap();
        let id = identifier.identify_bytes("image/png", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;");
        let item = IdentifiedItem::named("x".into(), 13);
        let item = IdentifiedItem { declared: Some("image/png".into()), ..item }.identified(&id);
        assert_eq!(item.matches[0].id, "fmt/4", "{item:?}");
        assert_eq!(item.matches[0].mime, "image/gif");
        assert_eq!(item.matches[0].basis, "byte match");
        assert!(
            item.matches[0].warning.starts_with("contradicted: declared image/png"),
            "{item:?}"
        );
        assert!(item.verdict.unwrap().starts_with("contradicted: "));
        let none = identifier.identify_bytes("", b"\x00\x01\x02");
        let item = IdentifiedItem::named("y".into(), 3).identified(&none);
        assert_eq!((item.matches[0].id.as_str(), item.verdict.as_deref()), (UNKNOWN, None));
        let mut summary = IdentifySummary::default();
        summary.count(&item);
        summary.count(&IdentifiedItem::named("z".into(), 0).empty());
        assert_eq!((summary.items, summary.unknown, summary.empty), (2, 1, 1));
    }
}
