//! E-ARK CSIP/SIP/AIP 2.2 information packages made from a package (`webaip export eark`), and
//! the check of the CSIP 2.2 rules (`webaip validate --profile eark-csip`, [`check`]).
//!
//! The package's containers become the representation `representations/warc/data` (its
//! transformed originals, if any, `representations/original/data`); its MODS and DC records go
//! to `metadata/descriptive`, its PREMIS to `metadata/preservation`, the package METS itself to
//! `metadata/other`, its logs and manifest to `documentation`, and the schemas the METS
//! documents use to `schemas`. Quarantined (viral) containers are never exported: they are
//! counted in the [`ExportSummary`]. Files are streamed and hashed (SHA-256) as they are
//! copied; the METS documents are written last, from what was measured.

pub mod check;
mod metadata;
mod mets;
mod sink;

use std::io::BufReader;
use std::path::{Path, PathBuf};

use mets::{Entry, Head, RepRef, RootContent};
use sink::Sink;

use crate::layout::{self, ConfineError};
use crate::mets::listing::{Nested, read_listing};
use crate::mets::reader::{MetsError, MetsReader};
use crate::mets::sections::{SectionsError, read_package_sections};

pub use mets::{NS_CSIP, NS_SIP};

/// `PROFILE` of a CSIP document.
pub const PROFILE_CSIP: &str = "https://earkcsip.dilcis.eu/profile/E-ARK-CSIP.xml";
/// `PROFILE` of a SIP's root METS (the value eark-validator's SIP2 expects).
pub const PROFILE_SIP: &str = "https://earksip.dilcis.eu/profile/E-ARK-SIP.xml";
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
    /// Reading or writing a file failed.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A name from the METS leaves the package, or is a link or not a regular file.
    #[error(transparent)]
    Confine(ConfineError),
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
    /// The output folder exists and is not empty.
    #[error("{}: exists and is not empty", .0.display())]
    OutExists(PathBuf),
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
    /// The package's identifier (root `OBJID`).
    pub objid: String,
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

/// Copies one file of the package to `name` in the output.
fn copy_in(
    pkg: &Path,
    href: &str,
    sink: &mut Sink,
    name: &str,
) -> Result<sink::Written, EarkError> {
    let file = layout::open_in(pkg, href).map_err(EarkError::Confine)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut input = BufReader::with_capacity(1 << 20, file);
    sink.add(name, &mut input, len)
}

/// Exports the package in folder `pkg` as an E-ARK package at `out` (a folder or a `.zip`).
pub fn export(pkg: &Path, out: &Path, kind: PackageType) -> Result<ExportSummary, EarkError> {
    let mets_path = pkg.join("METS.xml");
    let mets_file = layout::open_in(pkg, "METS.xml").map_err(EarkError::Confine)?;
    let reader = MetsReader::lenient(BufReader::with_capacity(256 * 1024, mets_file));
    let listing = read_listing(reader, Nested::Skip)
        .map_err(|source| EarkError::Mets { path: mets_path.clone(), source })?;
    let sections = read_package_sections(&mets_path)?;
    let mut sink = Sink::create(out)?;
    let objid = sections.objid.clone().unwrap_or_else(|| sink.root_name());
    let mut summary = ExportSummary { objid: objid.clone(), ..ExportSummary::default() };

    let mut reps: Vec<(&'static str, Vec<Entry>)> = Vec::new();
    let mut documentation = Vec::new();
    for f in &listing.files {
        let href = f
            .href
            .as_deref()
            .ok_or_else(|| EarkError::NoLocation { mets: mets_path.clone(), id: f.id.clone() })?;
        let mime = f.mime.clone().unwrap_or_else(|| "application/octet-stream".into());
        match place_of(&f.group) {
            Place::LeftOut => summary.left_out_viral.push(href.to_string()),
            Place::Documentation => {
                let name = format!("documentation/{href}");
                let written = copy_in(pkg, href, &mut sink, &name)?;
                documentation.push(Entry { href: name, mime, written });
            }
            Place::Rep(rep) => {
                let rel = format!("data/{}", below_first(href));
                let written =
                    copy_in(pkg, href, &mut sink, &format!("representations/{rep}/{rel}"))?;
                summary.data_files += 1;
                summary.data_bytes += written.size;
                match reps.iter_mut().find(|(r, _)| *r == rep) {
                    Some((_, files)) => files.push(Entry { href: rel, mime, written }),
                    None => reps.push((rep, vec![Entry { href: rel, mime, written }])),
                }
            }
        }
    }
    let manifest = "manifest-sha512.txt";
    if layout::metadata_in(pkg, manifest).is_ok() {
        let name = format!("documentation/{manifest}");
        let written = copy_in(pkg, manifest, &mut sink, &name)?;
        documentation.push(Entry { href: name, mime: "text/plain".into(), written });
    }
    summary.documentation_files = documentation.len() as u64;

    let mut schemas = Vec::new();
    for (name, bytes) in SCHEMAS {
        let href = format!("schemas/{name}");
        let written = sink.add_bytes(&href, bytes)?;
        schemas.push(Entry { href, mime: "application/xml".into(), written });
    }
    let (dmd, digiprov) = metadata::write_metadata(pkg, &sections, &mut sink)?;
    summary.metadata_files = (dmd.len() + digiprov.len()) as u64;

    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let created = sections
        .header
        .as_ref()
        .and_then(|h| h.value.create_date.clone())
        .unwrap_or_else(|| now.clone());
    let mut rep_refs = Vec::new();
    for (rep, files) in &reps {
        let content_type = rep_content_type(rep);
        let head =
            Head { objid: rep, label: None, kind, now: &now, created: &created, content_type };
        let doc = mets::rep_mets(&head, files).map_err(|e| EarkError::io(out, e))?;
        let href = format!("representations/{rep}/METS.xml");
        let written = sink.add_bytes(&href, &doc)?;
        let mets = Entry { href, mime: "application/xml".into(), written };
        rep_refs.push(RepRef { name: rep.to_string(), mets, content_type });
    }
    let head = Head {
        objid: &objid,
        label: sections.label.as_deref(),
        kind,
        now: &now,
        created: &created,
        content_type: "WARC",
    };
    let content = RootContent {
        dmd: &dmd,
        digiprov: &digiprov,
        documentation: &documentation,
        schemas: &schemas,
        reps: &rep_refs,
    };
    let doc = mets::root_mets(&head, &content).map_err(|e| EarkError::io(out, e))?;
    sink.add_bytes("METS.xml", &doc)?;
    sink.finish()?;
    Ok(summary)
}

/// `csip:OTHERCONTENTINFORMATIONTYPE` of a representation.
fn rep_content_type(rep: &str) -> &'static str {
    match rep {
        "warc" => "WARC",
        _ => "Harvested files",
    }
}
