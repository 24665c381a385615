//! E-ARK CSIP/SIP/AIP 2.2 information packages made from a package (`webaip export eark`), and
//! the check of the CSIP 2.2 rules (`webaip validate --profile eark-csip`, [`check`]).
//!
//! The package's containers become the representation `representations/warc/data` (its
//! transformed originals, if any, `representations/original/data`); its MODS and DC records go
//! to `metadata/descriptive`, its PREMIS to `metadata/preservation`, the package METS itself to
//! `metadata/other`, its logs and manifest to `documentation`, and the schemas the METS
//! documents use to `schemas`. Quarantined (viral) containers are never exported: they are
//! counted in the [`ExportSummary`]. Files are streamed and hashed (SHA-256) as they are
//! copied, and checked in the same read against the size and digest the package METS states
//! of them (as the audit judges them): a damaged package is refused
//! ([`EarkError::Changed`]) and nothing is exported. The METS documents are written last, from
//! what was measured. The output is
//! written under a temporary name beside it and renamed once complete (`sink`).
//!
//! The package's root folder is named by its `OBJID` (CSIP1; an OBJID that is no folder name
//! on some system is refused): the one folder of the ZIP, or `DIR/OBJID` for a folder output
//! `DIR` ([`export_in`]; [`export`] makes the root folder
//! where it is told, for callers that name it themselves). Every `MIMETYPE` is an IANA media type
//! ([`media_types`]): a container's `application/warc` is listed as `application/gzip`.

pub mod check;
pub mod media_types;
mod metadata;
mod mets;
mod sink;

use std::io::BufReader;
use std::path::{Path, PathBuf};

use mets::{Entry, Head, RepRef, RootContent, Submitter};
use sink::Sink;

use crate::formats::digest::DigestsReader;
use crate::layout::{self, ConfineError};
use crate::mets::listing::{Damage, ListedFile, Listing, Nested, read_listing};
use crate::mets::reader::{MetsError, MetsReader};
use crate::mets::sections::{PackageSections, SectionsError, read_package_sections_from};

pub use mets::NS_CSIP;

/// `PROFILE` of a SIP's METS documents: the value E-ARK SIP 2.2 sets (SIP2).
pub const PROFILE_SIP: &str = "https://earksip.dilcis.eu/profile/E-ARK-SIP-v2-2-0.xml";
/// `PROFILE` of a SIP by E-ARK SIP 2.1 (the value eark-validator 1.1.3 expects), accepted.
pub const PROFILE_SIP_2_1: &str = "https://earksip.dilcis.eu/profile/E-ARK-SIP.xml";
/// `PROFILE` of an AIP's root METS.
pub const PROFILE_AIP: &str = "https://earkaip.dilcis.eu/profile/E-ARK-AIP.xml";

/// The schemas every exported package carries (`schemas/NAME`).
const SCHEMAS: &[(&str, &[u8])] = &[
    ("mets.xsd", include_bytes!("../../../data/eark/schemas/mets.xsd")),
    ("xlink.xsd", include_bytes!("../../../data/eark/schemas/xlink.xsd")),
    (
        "DILCISExtensionMETS.xsd",
        include_bytes!("../../../data/eark/schemas/DILCISExtensionMETS.xsd"),
    ),
    (
        "DILCISExtensionSIPMETS.xsd",
        include_bytes!("../../../data/eark/schemas/DILCISExtensionSIPMETS.xsd"),
    ),
];

/// The OAIS type of the package made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageType {
    /// A submission information package.
    Sip,
    /// An archival information package.
    Aip,
}

impl PackageType {
    /// `SIP` or `AIP`, as `csip:OAISPACKAGETYPE` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            PackageType::Sip => "SIP",
            PackageType::Aip => "AIP",
        }
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum EarkError {
    /// Reading a file failed.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A name from the METS leaves the package, or is a link or not a regular file.
    #[error(transparent)]
    Confine(ConfineError),
    /// Not a package at all (a PDF, a WARC, a harvest): what it is instead.
    #[error(transparent)]
    NotAPackage(#[from] crate::sources::recognise::NotAPackage),
    /// The output is inside the package (or the package inside the output).
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
    /// The package METS cannot be read.
    #[error("{}: {source}", path.display())]
    Mets {
        /// The METS file.
        path: PathBuf,
        /// The error.
        source: MetsError,
    },
    /// The package METS's sections cannot be read.
    #[error(transparent)]
    Sections(#[from] SectionsError),
    /// A file of the METS has no location.
    #[error("{}: file {id} has no FLocat", mets.display())]
    NoLocation {
        /// The METS file.
        mets: PathBuf,
        /// The file's ID.
        id: String,
    },
    /// Writing the output failed (a full disk...).
    #[error("{} while writing {}", crate::layout::describe_io(source), path.display())]
    Write {
        /// The output (or the file in the output folder).
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The output exists (a folder: and is not empty; the package's root folder in `-o DIR`).
    #[error("{}: exists already: an export never writes over or into a package", .0.display())]
    OutExists(PathBuf),
    /// The package's OBJID cannot be a folder's name, which CSIP1 asks the root folder to have.
    #[error(
        "the package's OBJID {0:?} cannot name the E-ARK root folder (CSIP1 names the root \
         folder by the OBJID): it is empty, '.' or '..', longer than 255 bytes, starts with a \
         drive ('C:'), ends with a dot or space, or holds a control character or one of \
         \\ / * ? \" < > |"
    )]
    ObjidNotAFolderName(String),
    /// A file of the package is not what its METS states (its digest, or its size): the
    /// package is damaged, and nothing is exported.
    #[error(
        "{file}: {what} {found}, the METS states {stated}: the package is damaged (audit it); \
         nothing exported"
    )]
    Changed {
        /// The file's path in the package.
        file: String,
        /// What differs: the digest's algorithm (`SHA-512`) or `SIZE`.
        what: String,
        /// What the METS states (lower-case hex, or bytes).
        stated: String,
        /// What the file's bytes have.
        found: String,
    },
    /// Writing the ZIP failed.
    #[error("{}: {source}", path.display())]
    Zip {
        /// The ZIP file.
        path: PathBuf,
        /// The error.
        source: zip::result::ZipError,
    },
}

impl EarkError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        EarkError::Io { path: path.to_path_buf(), source }
    }
}

/// What an export wrote and left out.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ExportSummary {
    /// The package's identifier (root `OBJID`), which names its root folder.
    pub objid: String,
    /// What was written: the ZIP, or the package's root folder (`DIR/OBJID`).
    pub written: PathBuf,
    /// Files in the representations.
    pub data_files: u64,
    /// Their bytes.
    pub data_bytes: u64,
    /// Documentation files (logs, manifest).
    pub documentation_files: u64,
    /// Metadata files (MODS, DC, PREMIS, the package METS).
    pub metadata_files: u64,
    /// Quarantined (viral) files left out, by their path in the package.
    pub left_out_viral: Vec<String>,
}

/// Where a file of the package goes.
enum Place {
    Rep(&'static str),
    Documentation,
    LeftOut,
}

fn place_of(group: &str) -> Place {
    match group {
        "DigitalManifestation" => Place::Rep("warc"),
        "Original" => Place::Rep("original"),
        "ViralFiles" => Place::LeftOut,
        _ => Place::Documentation,
    }
}

/// The part of `href` below its first folder (`content/a.warc.gz` -> `a.warc.gz`).
fn below_first(href: &str) -> &str {
    href.split_once('/').map_or(href, |(_, rest)| rest)
}

/// Copies one file of the package to `name` in the output; a file the package METS lists
/// (`listed`) is checked, in the same read, against the size and digest it states.
fn copy_in(
    pkg: &Path,
    href: &str,
    sink: &mut Sink,
    name: &str,
    listed: Option<&ListedFile>,
) -> Result<sink::Written, EarkError> {
    let file = layout::open_in(pkg, href).map_err(EarkError::Confine)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let also = listed.map(ListedFile::checked_algorithms).unwrap_or_default();
    let mut input = DigestsReader::new(BufReader::with_capacity(1 << 20, file), &also);
    let written = sink.add(name, &mut input, len)?;
    if let Some(d) = listed.and_then(|f| f.damage(&input.finish())) {
        let Damage { what, stated, found } = d;
        return Err(EarkError::Changed { file: href.to_string(), what, stated, found });
    }
    Ok(written)
}

/// Exports the package in folder `pkg` as an E-ARK package at `out`: a `.zip` (its root folder
/// named by the OBJID), or the package's root folder itself.
pub fn export(pkg: &Path, out: &Path, kind: PackageType) -> Result<ExportSummary, EarkError> {
    export_to(pkg, out, kind, false)
}

/// Exports the package in folder `pkg` as an E-ARK package in the folder `dir`, as its root
/// folder `dir/OBJID` (CSIP1); a `.zip` `dir` is the ZIP, as [`export`] makes it.
pub fn export_in(pkg: &Path, dir: &Path, kind: PackageType) -> Result<ExportSummary, EarkError> {
    export_to(pkg, dir, kind, true)
}

fn export_to(
    pkg: &Path,
    out: &Path,
    kind: PackageType,
    nest: bool,
) -> Result<ExportSummary, EarkError> {
    crate::sources::recognise::package_at(pkg, crate::sources::recognise::Takes::Folder)?;
    layout::refuse_output_in_input(pkg, out)?;
    let mets_path = pkg.join("METS.xml");
    let listing = list_files(pkg, &mets_path)?;
    let mets_file = layout::open_in(pkg, "METS.xml").map_err(EarkError::Confine)?;
    let sections = read_package_sections_from(&mets_path, mets_file)?;
    let objid = sections.objid.clone().unwrap_or_else(|| default_objid(out));
    let root = root_folder_name(&objid)?;
    let mut sink = Sink::create(out, &root, nest)?;
    let written = match nest && !sink::is_zip(out) {
        true => out.join(&root),
        false => out.to_path_buf(),
    };
    let mut summary = ExportSummary { objid, written, ..ExportSummary::default() };
    let copied = copy_files(pkg, &listing, &mut sink, &mut summary)?;
    let schemas = write_schemas(&mut sink)?;
    let (dmd, digiprov) = metadata::write_metadata(pkg, &sections, &mut sink)?;
    summary.metadata_files = (dmd.len() + digiprov.len()) as u64;

    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let created = sections.header.as_ref().and_then(|h| h.value.create_date.clone());
    let created = created.unwrap_or_else(|| now.clone());
    let base = Head {
        objid: &summary.objid,
        label: sections.label.as_deref(),
        kind,
        now: &now,
        created: &created,
        content_type: "WARC",
        submitter: submitter_of(&sections, kind),
    };
    let reps = write_rep_mets(&base, &copied.reps, out, &mut sink)?;
    let content = RootContent {
        dmd: &dmd,
        digiprov: &digiprov,
        documentation: &copied.documentation,
        schemas: &schemas,
        reps: &reps,
    };
    let doc = mets::root_mets(&base, &content).map_err(|e| EarkError::io(out, e))?;
    sink.add_bytes("METS.xml", &doc)?;
    sink.finish()?;
    Ok(summary)
}

/// The files the package METS (`mets_path`, in `pkg`) lists, read before anything is written.
fn list_files(pkg: &Path, mets_path: &Path) -> Result<Listing, EarkError> {
    let mets_file = layout::open_in(pkg, "METS.xml").map_err(EarkError::Confine)?;
    let reader = MetsReader::lenient(BufReader::with_capacity(256 * 1024, mets_file));
    read_listing(reader, Nested::Skip)
        .map_err(|source| EarkError::Mets { path: mets_path.to_path_buf(), source })
}

/// One representation's files, as they were written.
struct Rep {
    name: &'static str,
    files: Vec<Entry>,
}

/// The package's files as they were copied out: the representations, and the documentation.
#[derive(Default)]
struct Copied {
    reps: Vec<Rep>,
    documentation: Vec<Entry>,
}

/// Copies every file the package METS lists to its place (the manifest to `documentation`),
/// counting them in `summary`; quarantined files are left out.
fn copy_files(
    pkg: &Path,
    listing: &Listing,
    sink: &mut Sink,
    summary: &mut ExportSummary,
) -> Result<Copied, EarkError> {
    let mets_path = pkg.join("METS.xml");
    let mut copied = Copied::default();
    for f in &listing.files {
        let href = f
            .href
            .as_deref()
            .ok_or_else(|| EarkError::NoLocation { mets: mets_path.clone(), id: f.id.clone() })?;
        let mime = f.mime.as_deref().unwrap_or("application/octet-stream");
        let mime = media_types::registered_for(mime, href);
        match place_of(&f.group) {
            Place::LeftOut => summary.left_out_viral.push(href.to_string()),
            Place::Documentation => {
                let name = format!("documentation/{href}");
                let written = copy_in(pkg, href, sink, &name, Some(f))?;
                copied.documentation.push(Entry { href: name, mime, written });
            }
            Place::Rep(rep) => {
                let rel = format!("data/{}", below_first(href));
                let to = format!("representations/{rep}/{rel}");
                let written = copy_in(pkg, href, sink, &to, Some(f))?;
                summary.data_files += 1;
                summary.data_bytes += written.size;
                copied.add_to(rep, Entry { href: rel, mime, written });
            }
        }
    }
    let manifest = "manifest-sha512.txt";
    if layout::metadata_in(pkg, manifest).is_ok() {
        let name = format!("documentation/{manifest}");
        let written = copy_in(pkg, manifest, sink, &name, None)?;
        copied.documentation.push(Entry { href: name, mime: "text/plain".into(), written });
    }
    summary.documentation_files = copied.documentation.len() as u64;
    Ok(copied)
}

impl Copied {
    /// Adds a file to representation `rep`, made at its first file.
    fn add_to(&mut self, rep: &'static str, entry: Entry) {
        match self.reps.iter_mut().find(|r| r.name == rep) {
            Some(r) => r.files.push(entry),
            None => self.reps.push(Rep { name: rep, files: vec![entry] }),
        }
    }
}

/// Writes the schemas every package carries.
fn write_schemas(sink: &mut Sink) -> Result<Vec<Entry>, EarkError> {
    let mut schemas = Vec::new();
    for (name, bytes) in SCHEMAS {
        let href = format!("schemas/{name}");
        let written = sink.add_bytes(&href, bytes)?;
        schemas.push(Entry { href, mime: "application/xml".into(), written });
    }
    Ok(schemas)
}

/// Writes each representation's METS (its header as the root's, under its own name and
/// content type, with no submitter); returns what the root METS points at.
fn write_rep_mets(
    root: &Head<'_>,
    reps: &[Rep],
    out: &Path,
    sink: &mut Sink,
) -> Result<Vec<RepRef>, EarkError> {
    let mut refs = Vec::new();
    for rep in reps {
        let content_type = rep_content_type(rep.name);
        let head = Head { objid: rep.name, label: None, content_type, submitter: None, ..*root };
        let doc = mets::rep_mets(&head, &rep.files).map_err(|e| EarkError::io(out, e))?;
        let href = format!("representations/{}/METS.xml", rep.name);
        let written = sink.add_bytes(&href, &doc)?;
        let mets = Entry { href, mime: "application/xml".into(), written };
        refs.push(RepRef { name: rep.name.to_string(), mets, content_type });
    }
    Ok(refs)
}

/// The agent submitting a SIP (SIP15-18): the organisation or person the package's header
/// names as its creator; None for an AIP, or when the header names none.
fn submitter_of(sections: &PackageSections, kind: PackageType) -> Option<Submitter<'_>> {
    if kind != PackageType::Sip {
        return None;
    }
    let agents = &sections.header.as_ref()?.value.agents;
    agents.iter().find_map(|a| {
        let kind =
            a.agent_type.as_deref().filter(|t| ["ORGANIZATION", "INDIVIDUAL"].contains(t))?;
        let name = a.name.as_deref().filter(|n| !n.trim().is_empty())?;
        (a.role.as_deref() == Some("CREATOR")).then_some(Submitter { kind, name })
    })
}

/// The OBJID of a package whose METS has none: the output's name.
fn default_objid(out: &Path) -> String {
    let stem = out.file_stem().and_then(|s| s.to_str()).filter(|s| !s.is_empty());
    stem.unwrap_or("package").to_string()
}

/// The OBJID as the root folder's name (CSIP1), when it is one on every system: not empty,
/// `.` or `..`, at most 255 bytes, no control or bidirectional-control character, none of
/// `\ / * ? " < > |`, no drive (`C:`) and no trailing dot or space (which Windows drops), so
/// no name leads out of the output, in a folder or in a ZIP unpacked anywhere. A `:` elsewhere
/// is kept: webaip's own OBJIDs are `urn:uuid:...`, and commons-ip requires the root folder to
/// be the OBJID itself.
fn root_folder_name(objid: &str) -> Result<String, EarkError> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\\' | '/' | '*' | '?' | '"' | '<' | '>' | '|')
            || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{feff}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    let drive = objid.as_bytes().get(1) == Some(&b':');
    let bad = matches!(objid, "" | "." | "..")
        || objid.len() > 255
        || drive
        || objid.ends_with(['.', ' '])
        || objid.contains(unsafe_char);
    match bad {
        true => Err(EarkError::ObjidNotAFolderName(objid.to_string())),
        false => Ok(objid.to_string()),
    }
}

/// `csip:OTHERCONTENTINFORMATIONTYPE` of a representation.
fn rep_content_type(rep: &str) -> &'static str {
    match rep {
        "warc" => "WARC",
        _ => "Harvested files",
    }
}
