//! What a path is, told from its shape and its first bytes: a package (a folder holding
//! `METS.xml`, or a METS document), a harvest `webaip package` reads, or a file of a kind its
//! magic bytes name (WARC, ARC, WACZ, ZIP, gzip, PDF, HTML). The commands that take a package
//! (audit, ingest, export) ask [`package_at`] first, so a PDF or a WARC is refused with what it
//! is and which command takes it, before anything is walked or written.
//!
//! Looking is bounded: at most [`HEAD`] bytes of a file, one level of a folder and at most
//! [`MAX_ENTRIES`] of its entries.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{ArchiveKind, archive_kind, kulturarw3, mirror, nedlib, pandas, path_text};
use crate::layout::{self, METS};

/// Bytes of a file read to tell its kind.
pub const HEAD: u64 = 64 << 10;
/// Entries of a folder looked at (for a harvest's archives, or a package inside it).
pub const MAX_ENTRIES: usize = 1000;

/// What a path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recognised {
    /// A folder holding `METS.xml`.
    PackageFolder,
    /// An XML document: a package's METS (another tool's may have any name).
    MetsDocument,
    /// Nothing is at the path.
    Missing,
    /// The path cannot be read (the cause in words).
    Unreadable(String),
    /// Something other than a file or a folder ("a FIFO", "a device"...).
    Special(&'static str),
    /// A harvest `webaip package` reads.
    Harvest(HarvestShape),
    /// A folder that is neither a package nor a harvest; a package folder found inside it.
    Folder {
        /// The first package folder (holding `METS.xml`) among its entries, if any.
        package_inside: Option<PathBuf>,
    },
    /// A file of a kind told by its first bytes.
    File(FileKind),
}

/// The harvests `webaip package` reads, as `super::detect` tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarvestShape {
    /// A Heritrix 1.x or 3.x job folder.
    HeritrixJob,
    /// A folder holding ARC or WARC files.
    ArchiveFolder,
    /// A PANDAS instance or title folder.
    Pandas,
    /// A wget or HTTrack mirror folder.
    Mirror,
    /// A NEDLIB harvest.
    Nedlib,
    /// A Kulturarw3 archive.
    Kulturarw3,
}

/// The kinds of file told apart by their first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A WARC file (compressed or not).
    Warc,
    /// An ARC file (compressed or not).
    Arc,
    /// A WACZ file.
    Wacz,
    /// Another ZIP file (a mirror's `.zip`, an E-ARK package...).
    Zip,
    /// A gzip file that holds no ARC or WARC.
    Gzip,
    /// A PDF document.
    Pdf,
    /// An HTML page.
    Html,
    /// None of these.
    Other,
}

impl Recognised {
    /// True for what a command that takes a package takes.
    pub fn is_package(&self) -> bool {
        matches!(self, Recognised::PackageFolder | Recognised::MetsDocument)
    }

    /// What it is, as the complement of "X is ...".
    pub fn described(&self) -> String {
        match self {
            Recognised::PackageFolder => "a package folder".into(),
            Recognised::MetsDocument => "a METS document".into(),
            Recognised::Missing => "nothing (it does not exist)".into(),
            Recognised::Unreadable(why) => format!("unreadable ({why})"),
            Recognised::Special(kind) => (*kind).into(),
            Recognised::Harvest(h) => h.described().into(),
            Recognised::Folder { .. } => format!("a folder without {METS}"),
            Recognised::File(f) => f.described().into(),
        }
    }

    /// Which command takes it instead, or what to give, for `path`.
    fn hint(&self, path: &Path) -> String {
        let shown = path_text(path);
        match self {
            Recognised::Harvest(_) | Recognised::File(FileKind::Warc | FileKind::Arc) => {
                format!("webaip package {shown} makes one")
            }
            Recognised::File(FileKind::Wacz) => format!("webaip validate {shown} checks a WACZ"),
            Recognised::File(FileKind::Zip) => {
                format!("webaip package {shown} makes one of a mirror's .zip")
            }
            Recognised::Folder { package_inside: Some(p) } => {
                format!("did you mean {} (a package)?", path_text(p))
            }
            Recognised::MetsDocument => "give the folder it is the METS.xml of".into(),
            _ => "to check a package give its folder".into(),
        }
    }
}

impl HarvestShape {
    /// What it is, with its article.
    pub fn described(self) -> &'static str {
        match self {
            HarvestShape::HeritrixJob => "a Heritrix job",
            HarvestShape::ArchiveFolder => "a folder of ARC/WARC files",
            HarvestShape::Pandas => "a PANDAS harvest",
            HarvestShape::Mirror => "a wget or HTTrack mirror",
            HarvestShape::Nedlib => "a NEDLIB harvest",
            HarvestShape::Kulturarw3 => "a Kulturarw3 archive",
        }
    }
}

impl FileKind {
    /// What it is, with its article.
    pub fn described(self) -> &'static str {
        match self {
            FileKind::Warc => "a WARC file",
            FileKind::Arc => "an ARC file",
            FileKind::Wacz => "a WACZ file",
            FileKind::Zip => "a ZIP file",
            FileKind::Gzip => "a gzip file",
            FileKind::Pdf => "a PDF document",
            FileKind::Html => "an HTML page",
            FileKind::Other => "a file that is not METS",
        }
    }
}

/// A path given where a package is expected that is none.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} is {}, not a package (a folder with a {METS}{}); {}",
    path_text(.path), .what.described(),
    if *.mets_file_too { ", or its METS.xml" } else { "" },
    .what.hint(.path))]
pub struct NotAPackage {
    /// The path given.
    pub path: PathBuf,
    /// What it is.
    pub what: Recognised,
    /// True when the command also takes a METS document (audit).
    pub mets_file_too: bool,
}

/// What a package-taking command may be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A package folder only (ingest, export).
    Folder,
    /// A package folder or its METS document (audit).
    FolderOrMets,
}

/// Refuses `path` unless it is a package as `takes` says, naming what it is instead.
pub fn package_at(path: &Path, takes: Takes) -> Result<(), NotAPackage> {
    let what = what_is(path);
    let taken = match takes {
        Takes::Folder => what == Recognised::PackageFolder,
        Takes::FolderOrMets => what.is_package(),
    };
    match taken {
        true => Ok(()),
        false => {
            let mets_file_too = takes == Takes::FolderOrMets;
            Err(NotAPackage { path: path.to_path_buf(), what, mets_file_too })
        }
    }
}

/// What `path` is (the operator's own path may be a link: it is followed, once).
pub fn what_is(path: &Path) -> Recognised {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Recognised::Missing,
        Err(e) => return Recognised::Unreadable(layout::describe_io(&e)),
    };
    if meta.is_dir() {
        folder_kind(path)
    } else if meta.is_file() {
        file_kind(path)
    } else {
        Recognised::Special(layout::kind_of(&meta))
    }
}

/// A folder: a package by its `METS.xml` (whatever it is: the audit judges it), else a
/// harvest by the shapes `sources::detect` knows, else a folder (with a package inside it).
fn folder_kind(dir: &Path) -> Recognised {
    if std::fs::symlink_metadata(dir.join(METS)).is_ok() {
        return Recognised::PackageFolder;
    }
    if let Some(h) = harvest_kind(dir) {
        return Recognised::Harvest(h);
    }
    let package_inside = entries(dir)
        .into_iter()
        .find(|p| p.is_dir() && std::fs::symlink_metadata(p.join(METS)).is_ok_and(|m| m.is_file()));
    Recognised::Folder { package_inside }
}

/// The entries of `dir`, sorted, at most [`MAX_ENTRIES`] of them.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.flatten().take(MAX_ENTRIES).map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// The harvest `dir` is, by the signs `sources::detect` goes by, looking one level down at
/// most: a PANDAS instance or title, NEDLIB, Kulturarw3, a Heritrix job by its configuration
/// or its `arcs/`/`warcs/` folders, ARC/WARC files on top, a mirror.
pub(crate) fn harvest_kind(dir: &Path) -> Option<HarvestShape> {
    if pandas::is_instance(dir) {
        return Some(HarvestShape::Pandas);
    }
    if nedlib::is_nedlib(dir) {
        return Some(HarvestShape::Nedlib);
    }
    if kulturarw3::is_kulturarw3(dir) {
        return Some(HarvestShape::Kulturarw3);
    }
    let top = entries(dir);
    let named = |p: &Path, n: &str| p.file_name().is_some_and(|f| f == n);
    if top.iter().any(|p| pandas::is_instance(p)) {
        return Some(HarvestShape::Pandas);
    }
    let config = |p: &&PathBuf| named(p, "order.xml") || named(p, "crawler-beans.cxml");
    let archive_dirs = |p: &&PathBuf| (named(p, "arcs") || named(p, "warcs")) && p.is_dir();
    if top.iter().any(|p| config(&p) || archive_dirs(&p)) {
        return Some(HarvestShape::HeritrixJob);
    }
    if top.iter().any(|p| archive_kind(p).is_some() && p.is_file()) {
        return Some(HarvestShape::ArchiveFolder);
    }
    mirror::mirror_kind(dir).map(|_| HarvestShape::Mirror)
}

/// A harvest near a folder that is none, for a "did you mean".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Near {
    /// Where it is.
    pub path: PathBuf,
    /// What it is.
    pub kind: HarvestShape,
}

impl std::fmt::Display for Near {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "did you mean {} ({})?", path_text(&self.path), self.kind.described())
    }
}

/// A harvest one level above `dir` (a job's `logs/`, a mirror's host folder), else one level
/// below it ([`harvest_inside`]).
pub fn harvest_near(dir: &Path) -> Option<Near> {
    let real = std::fs::canonicalize(dir).ok()?;
    let above = real.parent().and_then(|p| harvest_kind(p).map(|kind| (p.to_path_buf(), kind)));
    match above {
        Some((path, kind)) => Some(Near { path, kind }),
        None => harvest_inside(dir),
    }
}

/// A harvest one level below a folder that shows no sign of being one itself (the folder of a
/// Heritrix job, of a mirror): the first entry that is a harvest by a sign of its own (a
/// crawler configuration, a mirror's, PANDAS's, NEDLIB's or Kulturarw3's layout). A folder of
/// folders of ARC/WARC files is not looked into: it is one harvest.
pub fn harvest_inside(dir: &Path) -> Option<Near> {
    if harvest_kind(dir).is_some() {
        return None;
    }
    let configured =
        |p: &Path| ["order.xml", "crawler-beans.cxml"].iter().any(|c| p.join(c).is_file());
    entries(dir).into_iter().filter(|p| p.is_dir()).find_map(|path| {
        let kind = match harvest_kind(&path)? {
            HarvestShape::ArchiveFolder => return None,
            HarvestShape::HeritrixJob if !configured(&path) => return None,
            kind => kind,
        };
        Some(Near { path, kind })
    })
}

/// A file, by its first bytes (its name where they say gzip or nothing).
fn file_kind(path: &Path) -> Recognised {
    let head = match read_head(path) {
        Ok(h) => h,
        Err(e) => return Recognised::Unreadable(layout::describe_io(&e)),
    };
    let by_name = || match archive_kind(path) {
        Some(ArchiveKind::Warc) => Some(FileKind::Warc),
        Some(ArchiveKind::Arc) => Some(FileKind::Arc),
        None => None,
    };
    let kind = if head.starts_with(b"\x1f\x8b") {
        archive_in(&gunzip_head(&head)).or_else(by_name).unwrap_or(FileKind::Gzip)
    } else if let Some(k) = archive_in(&head) {
        k
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        zip_kind(path)
    } else if head.starts_with(b"%PDF-") {
        FileKind::Pdf
    } else if let Some(markup) = markup_kind(&head) {
        return markup;
    } else if wide_markup(&head) {
        // XML in UTF-16 or UTF-32, whatever its name: the audit judges it.
        return Recognised::MetsDocument;
    } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml")) {
        // Named as XML but not in UTF-8 (UTF-16, say): the audit judges it.
        return Recognised::MetsDocument;
    } else {
        by_name().unwrap_or(FileKind::Other)
    };
    Recognised::File(kind)
}

/// The first [`HEAD`] bytes of a file.
fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::new();
    std::fs::File::open(path)?.take(HEAD).read_to_end(&mut head)?;
    Ok(head)
}

/// The first bytes a gzip head unpacks to (as many as it holds).
fn gunzip_head(head: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = flate2::read::MultiGzDecoder::new(head).take(64).read_to_end(&mut out);
    out
}

/// WARC or ARC, by the first record's start.
fn archive_in(bytes: &[u8]) -> Option<FileKind> {
    if bytes.starts_with(b"WARC/") {
        Some(FileKind::Warc)
    } else if bytes.starts_with(b"filedesc://") {
        Some(FileKind::Arc)
    } else {
        None
    }
}

/// A WACZ (by its `datapackage.json`, or its name), else a ZIP.
fn zip_kind(path: &Path) -> FileKind {
    let wacz_name = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("wacz"));
    let datapackage = std::fs::File::open(path)
        .ok()
        .and_then(|f| zip::ZipArchive::new(f).ok())
        .is_some_and(|mut z| z.by_name("datapackage.json").is_ok());
    match wacz_name || datapackage {
        true => FileKind::Wacz,
        false => FileKind::Zip,
    }
}

/// Markup: an HTML page, else an XML document taken as a METS (the audit judges what it
/// holds, a METS cut short or another tool's included).
fn markup_kind(head: &[u8]) -> Option<Recognised> {
    let text = crate::formats::text::text_start(head);
    if text.first() != Some(&b'<') {
        return None;
    }
    let lower = String::from_utf8_lossy(text).to_ascii_lowercase();
    let html = lower.contains("<html") || lower.starts_with("<!doctype html");
    // A METS may embed XHTML; its root may carry a prefix (`<m:mets`): the namespace tells.
    let mets = lower.contains("<mets") || lower.contains("www.loc.gov/mets/");
    Some(match html && !mets {
        true => Recognised::File(FileKind::Html),
        false => Recognised::MetsDocument,
    })
}

/// Text that starts as markup in a UTF-16 or UTF-32 encoding: a byte-order mark, or `<` beside
/// a NUL.
fn wide_markup(head: &[u8]) -> bool {
    const MARKS: [&[u8]; 4] = [b"\xff\xfe", b"\xfe\xff", b"<\0", b"\0<"];
    MARKS.iter().any(|m| head.starts_with(m)) || head.starts_with(b"\0\0\0<")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefixed_or_wide_mets_is_a_mets_document() {
        let prefixed = b"<?xml version='1.0'?>\n<m:mets xmlns:m=\"http://www.loc.gov/METS/\">\
            <m:xmlData><html xmlns=\"http://www.w3.org/1999/xhtml\"/></m:xmlData></m:mets>";
        assert!(matches!(markup_kind(prefixed), Some(Recognised::MetsDocument)));
        let page = b"<!DOCTYPE html><html><body>x</body></html>";
        assert!(matches!(markup_kind(page), Some(Recognised::File(FileKind::Html))));
        let utf16: Vec<u8> = "\u{feff}<mets/>".encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert!(wide_markup(&utf16));
        let no_bom: Vec<u8> = "<mets/>".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert!(wide_markup(&no_bom));
        assert!(!wide_markup(b"%PDF-1.7"));
    }

    /// Each kind of file is told by its bytes whatever its name; the committed samples are
    /// harvests; a folder of packages names one; a package folder and a METS are packages.
    #[test]
    fn files_and_folders_are_told_apart() {
        let tmp = tempfile::tempdir().unwrap();
        let at = |name: &str, bytes: &[u8]| {
            let p = tmp.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            what_is(&p)
        };
        let gz = |b: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut e, b).unwrap();
            e.finish().unwrap()
        };
        let file = Recognised::File;
        assert_eq!(at("a.bin", b"WARC/1.1\r\n"), file(FileKind::Warc));
        assert_eq!(at("b.bin", &gz(b"WARC/1.0\r\n")), file(FileKind::Warc));
        assert_eq!(at("c.bin", &gz(b"filedesc://x.arc")), file(FileKind::Arc));
        assert_eq!(at("d.gz", &gz(b"hello")), file(FileKind::Gzip));
        assert_eq!(at("report.xml", b"%PDF-1.7\n"), file(FileKind::Pdf));
        assert_eq!(at("e", b"\n <!DOCTYPE html><html>"), file(FileKind::Html));
        assert_eq!(at("f", b"PK\x05\x06"), file(FileKind::Zip));
        assert_eq!(at("g.txt", b"plain"), file(FileKind::Other));
        assert_eq!(at("sip-1.xml", b"\xef\xbb\xbf<?xml?><mets:mets>"), Recognised::MetsDocument);
        assert_eq!(at("cut.xml", b"<?xml version=\"1.0\"?>\n"), Recognised::MetsDocument);
        assert_eq!(what_is(&tmp.path().join("none")), Recognised::Missing);
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let harvest = |p: &str| what_is(&samples.join(p));
        assert_eq!(harvest("heritrix-job"), Recognised::Harvest(HarvestShape::HeritrixJob));
        assert_eq!(harvest("mirror"), Recognised::Harvest(HarvestShape::Mirror));
        assert_eq!(harvest("pandas/40123"), Recognised::Harvest(HarvestShape::Pandas));
        assert_eq!(harvest("nedlib"), Recognised::Harvest(HarvestShape::Nedlib));
        assert_eq!(harvest("kulturarw3"), Recognised::Harvest(HarvestShape::Kulturarw3));
        let pkg = tmp.path().join("pkg");
        std::fs::create_dir(&pkg).unwrap();
        std::fs::write(pkg.join(METS), b"<mets/>").unwrap();
        assert_eq!(what_is(&pkg), Recognised::PackageFolder);
        let inside = Recognised::Folder { package_inside: Some(pkg.clone()) };
        assert_eq!(what_is(tmp.path()), inside);
        assert!(package_at(&pkg, Takes::Folder).is_ok());
        assert!(package_at(&pkg.join(METS), Takes::FolderOrMets).is_ok());
        let e = package_at(&pkg.join(METS), Takes::Folder).unwrap_err().to_string();
        assert!(e.contains("is a METS document, not a package"), "{e}");
    }
}
