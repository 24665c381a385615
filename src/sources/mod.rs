//! Input shapes: what a harvest looks like on disk, and what it holds.
//!
//! [`detect`] recognises a Heritrix 1.x job directory (`order.xml`, `arcs/`, `logs/`), a
//! Heritrix 3.x job (`crawler-beans.cxml`, timestamped launch folders with `warcs/` or `arcs/`,
//! `logs/`, `reports/`), or a plain list of ARC/WARC files, and says what it found and what it
//! expected but did not find. Every file of a job directory is accounted for: archives become
//! containers, everything else travels in the `Logfile` group (P1.5, P4.2).
//!
//! Only regular files are taken. The paths named on the command line are the operator's and
//! may be links; below them nothing is followed: every walked entry is checked with `lstat`
//! (`crate::layout::regular_metadata`), and links, FIFOs, sockets, devices, names that do not
//! fit in `PATH_MAX` and unreadable directories are refused one by one, each with a line in
//! [`Source::refused`] naming it, never read. Side files (`seeds.txt`, `crawl.log`) are read
//! with bounds ([`MAX_SEEDS`], [`MAX_LINE`]).

pub mod arc_captures;
pub mod capture;
pub(crate) mod crawl_log;
pub mod kulturarw3;
pub mod mirror;
pub mod mirror_files;
pub mod nedlib;
pub mod open;
pub mod pandas;
pub mod recognise;
pub mod unzip;
pub mod warc_captures;

use std::collections::HashSet;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::layout::{self, ConfineError};

/// Largest `seeds.txt` read (a list of seed URLs, not a crawl).
pub const MAX_SEEDS: u64 = 16 << 20;
/// Longest line kept from a line-oriented side file (`crawl.log`, `url.map`, `new.txt`); a
/// longer line is skipped (counted as unparsed), so one line without an end costs no more.
pub const MAX_LINE: usize = 1 << 20;

/// The shape of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// A Heritrix 1.x job directory.
    Heritrix1,
    /// A Heritrix 3.x job directory.
    Heritrix3,
    /// ARC/WARC files given one by one.
    FileList,
    /// A folder of WARC files with no crawler configuration (no `order.xml`, no
    /// `crawler-beans.cxml`, no ARC file that would make it a Heritrix 1.x job).
    ArchiveFolder,
}

impl Shape {
    /// Its name in reports (as serialized).
    pub fn name(self) -> &'static str {
        match self {
            Shape::Heritrix1 => "heritrix1",
            Shape::Heritrix3 => "heritrix3",
            Shape::FileList => "file-list",
            Shape::ArchiveFolder => "archive-folder",
        }
    }
}

/// The kind of an archive file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArchiveKind {
    /// ARC (migrated to WARC).
    Arc,
    /// WARC (checked and copied byte-exact).
    Warc,
}

/// An ARC or WARC file of the source.
#[derive(Debug, Clone, Serialize)]
pub struct Archive {
    /// Where it is.
    pub path: PathBuf,
    /// ARC or WARC.
    pub kind: ArchiveKind,
}

/// A non-archive file of the source (log, report, configuration), with its path relative to
/// the source root (kept in the package under `logs/`).
#[derive(Debug, Clone, Serialize)]
pub struct AuxFile {
    /// Where it is.
    pub path: PathBuf,
    /// Path inside the package's `logs/` directory.
    pub relative: String,
}

/// What a source holds.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    /// Its shape.
    pub shape: Shape,
    /// The job directory, if there is one.
    pub root: Option<PathBuf>,
    /// ARC and WARC files, in name order.
    pub archives: Vec<Archive>,
    /// Logs, reports and configuration, in path order.
    pub aux: Vec<AuxFile>,
    /// The crawl log, if found.
    pub crawl_log: Option<PathBuf>,
    /// Seed URLs (from `seeds.txt`).
    pub seeds: Vec<String>,
    /// What was found, for the report.
    pub found: Vec<String>,
    /// What a source of this shape usually has but this one does not.
    pub missing: Vec<String>,
    /// Entries not taken, and why (links, FIFOs, devices, over-long or clashing names).
    pub refused: Vec<(String, String)>,
}

/// A source that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The path does not exist or cannot be read.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An input that is neither a regular file nor a directory (a FIFO, a device, ...).
    #[error("{}: is {kind}, not a regular file or a directory", path.display())]
    NotFileOrDirectory {
        /// The input.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// A directory given with other inputs.
    #[error("give one job directory, or ARC/WARC files, not both")]
    DirectoryAndFiles,
    /// A file given among ARC/WARC files whose name says it is neither.
    #[error("{}: not an ARC or WARC file (by its name); {ACCEPTED_SHAPES}", path.display())]
    NotAnArchive {
        /// The file.
        path: PathBuf,
    },
    /// A directory of no shape `package` knows, and a harvest one level above or below it.
    #[error("{}: no input shape recognised; {}{ACCEPTED_SHAPES}", path.display(), near_text(near))]
    NoShape {
        /// The directory.
        path: PathBuf,
        /// The harvest one level above or below it, if one is.
        near: Option<recognise::Near>,
    },
    /// A Heritrix job without a single ARC or WARC file: nothing to package.
    #[error("{}: the job holds no ARC or WARC file", path.display())]
    NoArchives {
        /// The job directory.
        path: PathBuf,
    },
}

impl SourceError {
    /// What is wrong, for a message that names `given` and the accepted shapes itself: the
    /// path this error is about only when it is another one.
    pub fn reason(&self, given: &Path) -> String {
        let of = |path: &Path, what: String| match path == given {
            true => what,
            false => format!("{}: {what}", path.display()),
        };
        match self {
            SourceError::Io { path, source } => of(path, layout::describe_io(source)),
            SourceError::NotFileOrDirectory { path, kind } => {
                of(path, format!("is {kind}, not a regular file or a directory"))
            }
            SourceError::DirectoryAndFiles => self.to_string(),
            SourceError::NotAnArchive { path } => {
                of(path, "not an ARC or WARC file (by its name)".into())
            }
            SourceError::NoShape { path, near } => {
                let near = near_text(near);
                of(path, format!("no input shape recognised{}", near.trim_end_matches("; ")))
            }
            SourceError::NoArchives { path } => {
                of(path, "the job holds no ARC or WARC file".into())
            }
        }
    }
}

/// "did you mean ...; " for a harvest near, else nothing.
fn near_text(near: &Option<recognise::Near>) -> String {
    near.as_ref().map(|n| format!("{n}; ")).unwrap_or_default()
}

/// Every input shape `package` accepts, for the error that names none of them found.
pub(crate) const ACCEPTED_SHAPES: &str = "accepted: a Heritrix 1.x job directory (order.xml, arcs/), \
a Heritrix 3.x job directory (crawler-beans.cxml, launch folders with warcs/ or arcs/), \
ARC/WARC files (.arc, .arc.gz, .warc, .warc.gz) or a folder of them, \
a PANDAS instance (YYYYMMDD-HHMM holding <host>/ or hts-cache/) or a PANDAS title directory of instances, \
a wget or HTTrack mirror directory (<host>/ directories; a wget log, hts-cache/, hts-log.txt) or a .zip of one, \
a NEDLIB harvest (YYYY-M-D day folders of numbered folders of <md5> + <md5>.meta files) or one of its day folders, \
a Kulturarw3 archive (archive/<hh>/<host>/<snapshot>/<md5url>.<epoch> MIME files)";

/// The shape [`detect`] found: one enum for every source webaip reads.
#[derive(Debug, Clone)]
pub enum Input {
    /// PANDAS instance directories (one, or those of a title directory).
    Pandas {
        /// The instances, in name order.
        instances: Vec<PathBuf>,
        /// True when given a title directory (one package per instance).
        title: bool,
    },
    /// A wget or HTTrack mirror directory.
    Mirror(PathBuf, mirror::MirrorKind),
    /// A `.zip` of a wget or HTTrack mirror (see [`unzip::unpack_zip`]).
    MirrorZip(PathBuf),
    /// A harvest whose source module yields captures ([`capture::CaptureSource`]).
    Captures(PathBuf, CaptureShape),
    /// A Heritrix job or ARC/WARC files, with what was found and what was missing.
    Archives(Box<Source>),
}

/// What an input looks like before it is read (`Input` without the job's contents).
enum Guess {
    Pandas { instances: Vec<PathBuf>, title: bool },
    Mirror(PathBuf, mirror::MirrorKind),
    MirrorZip(PathBuf),
    Captures(PathBuf, CaptureShape),
    Archives,
}

/// Recognises the shape of `inputs` (one path, or a list of ARC/WARC files): a PANDAS
/// instance or title, a website mirror or its .zip, a harvest read as captures (NEDLIB,
/// Kulturarw3), else a Heritrix job or archive files, which are read for what they hold
/// (archives, logs, seeds, crawl log) and what a job of their shape lacks. An input of no
/// shape is an error listing every accepted one.
pub fn detect(inputs: &[PathBuf]) -> Result<Input, SourceError> {
    let guessed = guess(inputs);
    // The folder of a harvest (of a job, of a mirror) is not walked as one job of them all.
    if let ([dir], Guess::Archives) = (inputs, &guessed)
        && let Some(near) = recognise::harvest_inside(dir)
    {
        return Err(SourceError::NoShape { path: dir.clone(), near: Some(near) });
    }
    Ok(match guessed {
        Guess::Pandas { instances, title } => Input::Pandas { instances, title },
        Guess::Mirror(dir, kind) => Input::Mirror(dir, kind),
        Guess::MirrorZip(zip) => Input::MirrorZip(zip),
        Guess::Captures(dir, shape) => Input::Captures(dir, shape),
        Guess::Archives => Input::Archives(Box::new(read_archives(inputs).map_err(near)?)),
    })
}

/// A folder of no shape, with the harvest one level above or below it that the user may have
/// meant.
fn near(e: SourceError) -> SourceError {
    match e {
        SourceError::NoShape { path, near: None } => {
            let near = recognise::harvest_near(&path);
            SourceError::NoShape { path, near }
        }
        e => e,
    }
}

/// Opens the capture source of a shape [`detect`] found (`nedlib` is what a NEDLIB harvest
/// is read with).
pub fn open_captures(
    dir: &Path,
    shape: CaptureShape,
    nedlib: nedlib::NedlibOptions,
) -> Result<Box<dyn capture::CaptureSource>, capture::CaptureError> {
    Ok(match shape {
        CaptureShape::Nedlib => Box::new(nedlib::NedlibHarvest::open(dir, nedlib)?),
        CaptureShape::Kulturarw3 => Box::new(kulturarw3::Kulturarw3Archive::open(dir)?),
    })
}

/// The shapes read by a capture source ([`capture`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureShape {
    /// A NEDLIB harvester folder ([`nedlib`]).
    Nedlib,
    /// A Kulturarw3 archive ([`kulturarw3`]).
    Kulturarw3,
}

/// The shape of the input, before it is read: PANDAS instance or title, website mirror, a
/// capture source's harvest, or else a job or archive files.
fn guess(inputs: &[PathBuf]) -> Guess {
    let [dir] = inputs else { return Guess::Archives };
    // The operator's own path may be a link (resolved once, here); nothing below it is
    // followed: a linked instance inside a title directory is not taken.
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
    if dir.is_file() && dir.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip")) {
        return Guess::MirrorZip(dir);
    }
    if pandas::is_instance(&dir) {
        return Guess::Pandas { instances: vec![dir], title: false };
    }
    if nedlib::is_nedlib(&dir) {
        return Guess::Captures(dir, CaptureShape::Nedlib);
    }
    if kulturarw3::is_kulturarw3(&dir) {
        return Guess::Captures(dir, CaptureShape::Kulturarw3);
    }
    if !dir.is_dir() {
        return Guess::Archives;
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| pandas::is_instance(p)).collect())
        .unwrap_or_default();
    if !v.is_empty() {
        v.sort();
        return Guess::Pandas { instances: v, title: true };
    }
    // A folder holding ARC/WARC files at its top is an archive folder, not a mirror.
    let archives_on_top = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().any(|e| archive_kind(&e.path()).is_some()))
        .unwrap_or(false);
    match mirror::mirror_kind(&dir) {
        Some(k) if !archives_on_top => Guess::Mirror(dir, k),
        _ => Guess::Archives,
    }
}

/// The archive kind of a file, by name.
pub(crate) fn archive_kind(path: &Path) -> Option<ArchiveKind> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let name = name.trim_end_matches(".open").trim_end_matches(".invalid");
    if name.ends_with(".warc") || name.ends_with(".warc.gz") {
        Some(ArchiveKind::Warc)
    } else if name.ends_with(".arc") || name.ends_with(".arc.gz") {
        Some(ArchiveKind::Arc)
    } else {
        None
    }
}

/// Reads a Heritrix job directory, or a list of ARC/WARC files.
fn read_archives(inputs: &[PathBuf]) -> Result<Source, SourceError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SourceError::Io { path: path.clone(), source }
    };
    // The operator's own paths may be links (resolved once, here); a FIFO or device given by
    // name is refused before anything opens it.
    let mut resolved = Vec::with_capacity(inputs.len());
    for p in inputs {
        let meta = std::fs::metadata(p).map_err(io(p))?;
        if !meta.is_file() && !meta.is_dir() {
            let kind = layout::kind_of(&meta);
            return Err(SourceError::NotFileOrDirectory { path: p.clone(), kind });
        }
        let real =
            if meta.is_file() { std::fs::canonicalize(p).map_err(io(p))? } else { p.clone() };
        resolved.push(real);
    }
    let inputs = &resolved[..];
    match inputs {
        [dir] if dir.is_dir() => job_dir(dir),
        _ if inputs.iter().any(|p| p.is_dir()) => Err(SourceError::DirectoryAndFiles),
        _ => {
            let mut archives = Vec::new();
            for p in inputs {
                let kind =
                    archive_kind(p).ok_or_else(|| SourceError::NotAnArchive { path: p.clone() })?;
                archives.push(Archive { path: p.clone(), kind });
            }
            let found = vec![format!("{} archive file(s) given one by one", archives.len())];
            Ok(Source {
                shape: Shape::FileList,
                root: None,
                archives,
                aux: Vec::new(),
                crawl_log: None,
                seeds: Vec::new(),
                found,
                missing: vec![
                    "crawl.log and crawler configuration (not part of a file list)".into(),
                ],
                refused: Vec::new(),
            })
        }
    }
}

/// Reads a job directory (Heritrix 1.x, 3.x, or a folder of archives): every file taken or
/// refused, its shape, its seeds, and what a job of that shape has and this one lacks.
fn job_dir(root: &Path) -> Result<Source, SourceError> {
    let JobFiles { archives, aux, crawl_log, seeds_file, mut refused } = walk_job(root);
    let shape = job_shape(root, &archives, &aux)?;
    let seeds = match &seeds_file {
        Some(p) => read_seeds(root, p, &mut refused),
        None => Vec::new(),
    };
    let Inventory { found, missing } = inventory(root, shape, &archives, &aux);
    Ok(Source {
        shape,
        root: Some(root.to_path_buf()),
        archives,
        aux,
        crawl_log,
        seeds,
        found,
        missing,
        refused,
    })
}

/// What the walk of a job directory took and refused.
#[derive(Default)]
struct JobFiles {
    archives: Vec<Archive>,
    aux: Vec<AuxFile>,
    crawl_log: Option<PathBuf>,
    seeds_file: Option<PathBuf>,
    refused: Vec<(String, String)>,
}

/// Walks `root` without following links: archives, side files (the first `crawl.log` and
/// `seeds.txt` remembered), and every entry refused with its reason.
fn walk_job(root: &Path) -> JobFiles {
    let mut files = JobFiles::default();
    let mut names = HashSet::new();
    let walk = walkdir::WalkDir::new(root).sort_by_file_name().follow_links(false);
    for entry in walk {
        // An unreadable directory (or one whose path is longer than PATH_MAX) costs itself,
        // not the job.
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let at = e.path().map(|p| name_text(root, p)).unwrap_or_default();
                files.refused.push((at, format!("not read: {e}")));
                continue;
            }
        };
        if entry.file_type().is_dir() {
            continue;
        }
        let path = entry.path().to_path_buf();
        let relative = name_text(root, &path);
        if let Err(why) = take_regular(&path, &relative, &mut names) {
            files.refused.push((relative, why.to_string()));
            continue;
        }
        match archive_kind(&path) {
            Some(kind) => files.archives.push(Archive { path, kind }),
            None => files.take_side_file(root, path, relative),
        }
    }
    files
}

impl JobFiles {
    /// Takes a file that is no archive, remembering the crawl log and the seeds.
    fn take_side_file(&mut self, root: &Path, path: PathBuf, relative: String) {
        // The job's own logs/ folder becomes the package's logs/ (logs/crawl.log, not
        // logs/logs/crawl.log); files elsewhere keep their path below logs/.
        let relative = match relative.strip_prefix("logs/") {
            Some(rest) if std::fs::symlink_metadata(root.join(rest)).is_err() => rest.to_string(),
            _ => relative,
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name == "crawl.log" && self.crawl_log.is_none() {
            self.crawl_log = Some(path.clone());
        }
        if name == "seeds.txt" && self.seeds_file.is_none() {
            self.seeds_file = Some(path.clone());
        }
        self.aux.push(AuxFile { path, relative });
    }
}

/// True when a side file of this name is among `aux`, wherever it is in the job.
fn has_file(aux: &[AuxFile], name: &str) -> bool {
    aux.iter().any(|a| a.relative.rsplit('/').next() == Some(name))
}

/// The shape a job's files make: Heritrix 3.x by its beans, 1.x by its order or its ARCs, else
/// a folder of archives; a folder with no archive is none.
fn job_shape(root: &Path, archives: &[Archive], aux: &[AuxFile]) -> Result<Shape, SourceError> {
    let shape = if has_file(aux, "crawler-beans.cxml") {
        Shape::Heritrix3
    } else if has_file(aux, "order.xml") || archives.iter().any(|a| a.kind == ArchiveKind::Arc) {
        Shape::Heritrix1
    } else if !archives.is_empty() {
        Shape::ArchiveFolder
    } else {
        return Err(SourceError::NoShape { path: root.to_path_buf(), near: None });
    };
    if archives.is_empty() {
        return Err(SourceError::NoArchives { path: root.to_path_buf() });
    }
    Ok(shape)
}

/// The seed URLs of `seeds.txt` (bounded; comments and blank lines dropped); one that cannot
/// be read is refused, and the job has none.
fn read_seeds(root: &Path, path: &Path, refused: &mut Vec<(String, String)>) -> Vec<String> {
    match layout::read_bounded(path, MAX_SEEDS) {
        Ok(b) => String::from_utf8_lossy(&b)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect(),
        Err(e) => {
            refused.push((name_text(root, path), format!("seeds not read: {e}")));
            Vec::new()
        }
    }
}

/// What a job was found to hold, and what a job of its shape usually has but it lacks.
struct Inventory {
    found: Vec<String>,
    missing: Vec<String>,
}

/// The files a job of `shape` is expected to hold (by name, anywhere in it).
fn expected_files(shape: Shape) -> &'static [&'static str] {
    match shape {
        Shape::ArchiveFolder => &["crawl.log", "seeds.txt"],
        Shape::Heritrix3 => &[
            "crawler-beans.cxml",
            "crawl.log",
            "progress-statistics.log",
            "runtime-errors.log",
            "uri-errors.log",
            "seeds.txt",
        ],
        _ => &[
            "order.xml",
            "crawl.log",
            "progress-statistics.log",
            "local-errors.log",
            "runtime-errors.log",
            "uri-errors.log",
            "seeds.txt",
        ],
    }
}

/// The report's lines on a job: its shape and counts, each expected file found or missing,
/// and its crawler reports.
fn inventory(root: &Path, shape: Shape, archives: &[Archive], aux: &[AuxFile]) -> Inventory {
    let mut found = vec![format!(
        "{} {}: {} ARC, {} WARC, {} other file(s)",
        match shape {
            Shape::Heritrix3 => "Heritrix 3.x job directory",
            Shape::ArchiveFolder => "folder of archive files",
            _ => "Heritrix 1.x job directory",
        },
        root.display(),
        archives.iter().filter(|a| a.kind == ArchiveKind::Arc).count(),
        archives.iter().filter(|a| a.kind == ArchiveKind::Warc).count(),
        aux.len()
    )];
    let mut missing = Vec::new();
    for n in expected_files(shape) {
        match has_file(aux, n) {
            true => found.push((*n).to_string()),
            false => missing.push((*n).to_string()),
        }
    }
    let reports = aux.iter().filter(|a| a.relative.ends_with("-report.txt")).count();
    if reports > 0 {
        found.push(format!("{reports} report(s)"));
    }
    Inventory { found, missing }
}

/// Checks a walked entry before it is taken: a regular file (by `lstat`, so a link is never
/// followed), a name that fits in `PATH_MAX` and does not clash with one already taken once
/// escaped. The error says the reason, for the report.
pub(crate) fn take_regular(
    path: &Path,
    relative: &str,
    taken: &mut HashSet<String>,
) -> Result<std::fs::Metadata, NotTaken> {
    layout::confined_name(relative).map_err(NotTaken::Name)?;
    let meta = layout::regular_metadata(path).map_err(NotTaken::File)?;
    // Two names can only meet once escaped if the text holds a `%` (every escape makes one):
    // only those are remembered, so a harvest of 100,000 plain names keeps no 100,000 strings.
    if relative.contains('%') && !taken.insert(relative.to_string()) {
        return Err(NotTaken::Clash);
    }
    Ok(meta)
}

/// Why a walked entry is not taken (said without the path: the report names it beside).
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotTaken {
    /// Its name does not stay inside the input.
    #[error("name {0}")]
    Name(layout::NameError),
    /// It is not a regular file, or cannot be reached.
    #[error("{}", refusal(.0))]
    File(ConfineError),
    /// Escaped, its name is another file's.
    #[error("its name, with control characters escaped, is that of another file")]
    Clash,
}

/// Why a file was refused, in words for the report (the path is reported beside it).
pub(crate) fn refusal(e: &ConfineError) -> String {
    match e {
        ConfineError::Link { .. } => {
            "symbolic link: not followed (it may point outside the input)".into()
        }
        ConfineError::NotRegular { kind, .. } => format!("{kind}, not a regular file: not read"),
        ConfineError::TooLarge { limit, .. } => format!("larger than {limit} bytes: not read"),
        ConfineError::Io { source, .. } if source.raw_os_error() == Some(libc::ENAMETOOLONG) => {
            "its path is longer than PATH_MAX: not read".into()
        }
        e => format!("not read: {}", e.reason()),
    }
}

/// A path below `root` as text for the package, the report, the METS and WARC fields: `/`
/// separated, each component kept as it is when it is UTF-8 without control characters, and
/// otherwise with its control characters (C0, DEL), bytes that are not UTF-8, and `%` itself
/// percent-encoded, so a name can never add a line (or a field) to what it is written into.
pub(crate) fn name_text(root: &Path, path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut parts = Vec::new();
    for c in rel.components() {
        let bytes = c.as_os_str().as_bytes();
        let clean =
            std::str::from_utf8(bytes).ok().filter(|s| !s.bytes().any(|b| b < 0x20 || b == 0x7f));
        parts.push(match clean {
            Some(s) => s.to_string(),
            None => bytes
                .iter()
                .map(|&b| {
                    if b.is_ascii() && b >= 0x20 && b != 0x7f && b != b'%' {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect(),
        });
    }
    parts.join("/")
}

/// The last component of `path` as text, escaped as `name_text` escapes.
pub fn file_text(path: &Path) -> String {
    path.file_name().map(|n| name_text(Path::new(""), Path::new(n))).unwrap_or_default()
}

/// A whole path as text for a report, escaped as `name_text` escapes.
pub fn path_text(path: &Path) -> String {
    match path.strip_prefix("/") {
        Ok(rest) => format!("/{}", name_text(Path::new(""), rest)),
        Err(_) => name_text(Path::new(""), path),
    }
}

/// Reads a side file line by line from a file already opened as regular, keeping at most
/// [`MAX_LINE`] bytes of a line: a longer line is passed on as empty (it parses as nothing).
pub(crate) fn for_each_bounded_line(
    file: std::fs::File,
    mut f: impl FnMut(&[u8]),
) -> io::Result<()> {
    let mut r = io::BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if !line.is_empty() || too_long {
                f(if too_long { &[] } else { &line });
            }
            return Ok(());
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if line.len() + take > MAX_LINE + 1 {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take);
        if done {
            f(if too_long { &[] } else { &line });
            line.clear();
            too_long = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recognise::HarvestShape;

    #[test]
    fn lines_are_bounded_and_names_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        let mut text = b"one\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        text.extend_from_slice(b"\ntwo\r\nthree");
        std::fs::write(&p, &text).unwrap();
        let mut lines = Vec::new();
        for_each_bounded_line(std::fs::File::open(&p).unwrap(), |l| lines.push(l.to_vec()))
            .unwrap();
        assert_eq!(lines, vec![b"one\n".to_vec(), vec![], b"two\r\n".to_vec(), b"three".to_vec()]);

        use std::os::unix::ffi::OsStrExt;
        let root = Path::new("/r");
        let name = |b: &[u8]| name_text(root, &root.join(std::ffi::OsStr::from_bytes(b)));
        assert_eq!(name(b"a/b c.html"), "a/b c.html");
        assert_eq!(name(b"100%/x"), "100%/x");
        assert_eq!(name(b"a/x\r\nWARC-Type: evil\x1b.html"), "a/x%0D%0AWARC-Type: evil%1B.html");
        assert_eq!(name(b"caf\xe9 100%/x\x7f"), "caf%E9 100%25/x%7F");
    }

    /// `detect` names the shape of every committed sample in one enum, a job with what it
    /// holds and lacks, and refuses what is none with the list of accepted shapes.
    #[test]
    fn detect_names_every_samples_shape() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let shape = |p: &str| detect(&[samples.join(p)]).unwrap();
        match shape("heritrix-job") {
            Input::Archives(s) => {
                assert_eq!(s.shape, Shape::Heritrix1);
                assert!(!s.archives.is_empty() && s.crawl_log.is_some());
                assert!(!s.found.is_empty(), "what was found is said");
            }
            other => panic!("heritrix-job: {other:?}"),
        }
        let title = shape("pandas/40123");
        assert!(matches!(title, Input::Pandas { title: true, .. }), "{title:?}");
        let instance = shape("pandas/40123/20040517-1412");
        assert!(matches!(instance, Input::Pandas { title: false, .. }), "{instance:?}");
        assert!(matches!(shape("mirror"), Input::Mirror(..)), "{:?}", shape("mirror"));
        assert!(matches!(shape("nedlib"), Input::Captures(_, CaptureShape::Nedlib)));
        assert!(matches!(shape("kulturarw3"), Input::Captures(_, CaptureShape::Kulturarw3)));
        let empty = tempfile::tempdir().unwrap();
        let e = detect(&[empty.path().to_path_buf()]).unwrap_err().to_string();
        assert!(e.contains("NEDLIB") && e.contains("PANDAS"), "{e}");
    }

    /// The folder of the samples, and a mirror's host folder, are no harvest: each names the
    /// harvest one level below or above it.
    #[test]
    fn a_folder_beside_a_harvest_names_it() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let near = |p: &Path| match detect(&[p.to_path_buf()]) {
            Err(SourceError::NoShape { near: Some(near), .. }) => near,
            other => panic!("{}: {other:?}", p.display()),
        };
        let job = near(&samples);
        assert_eq!((job.path, job.kind), (samples.join("heritrix-job"), HarvestShape::HeritrixJob));
        let mirror = near(&samples.join("mirror/www.example.net"));
        let real = std::fs::canonicalize(samples.join("mirror")).unwrap();
        assert_eq!((mirror.path, mirror.kind), (real, HarvestShape::Mirror));
        let e = detect(&[samples]).unwrap_err().to_string();
        assert!(e.contains("heritrix-job (a Heritrix job)?; accepted: "), "{e}");
    }

    /// A Heritrix 3.x job: its shape from the beans, a FIFO and a link refused (never opened),
    /// seeds without comments, what such a job lacks listed as missing, logs/ at the top.
    #[test]
    fn a_job_directory_is_walked_refusing_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("logs")).unwrap();
        std::fs::create_dir_all(root.join("20240101/warcs")).unwrap();
        std::fs::write(root.join("crawler-beans.cxml"), "<beans/>").unwrap();
        std::fs::write(root.join("20240101/warcs/a.warc.gz"), b"").unwrap();
        std::fs::write(root.join("logs/crawl.log"), b"").unwrap();
        std::fs::write(
            root.join("seeds.txt"),
            "# seeds\nhttp://a.example/\n\n http://b.example/ \n",
        )
        .unwrap();
        let fifo =
            std::ffi::CString::new(root.join("logs/pipe").into_os_string().into_encoded_bytes())
                .unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/etc/passwd", root.join("logs/passwd")).unwrap();
        let Input::Archives(s) = detect(&[root.to_path_buf()]).unwrap() else { panic!() };
        assert_eq!(s.shape, Shape::Heritrix3);
        assert_eq!(s.archives.len(), 1);
        assert_eq!(s.seeds, ["http://a.example/", "http://b.example/"]);
        assert_eq!(s.crawl_log.as_deref(), Some(root.join("logs/crawl.log").as_path()));
        let refused: Vec<&str> = s.refused.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(refused, ["logs/passwd", "logs/pipe"], "{:?}", s.refused);
        assert!(s.aux.iter().any(|a| a.relative == "crawl.log"), "logs/ becomes the package's");
        assert!(s.missing.contains(&"progress-statistics.log".to_string()), "{:?}", s.missing);
        assert!(s.found[0].starts_with("Heritrix 3.x job directory"), "{:?}", s.found);
        assert!(s.found.contains(&"crawler-beans.cxml".to_string()));
    }
}
