//! The E-ARK CSIP 2.2 rules (and SIP 2.2's for a SIP), each reported by its identifier: the
//! package structure (CSIPSTR), the root METS and each representation METS, and the files the
//! METS documents list (present, of the size and checksum they state: `check::fixity`).
//!
//! Each METS document streams once through the METS reader, the rules applied as it passes
//! (`check::rules`): memory grows with the number of files it lists, not with its size. A ZIP is
//! unpacked to a temporary folder first, within the caps of every ZIP webaip opens
//! (`check::unzip`).
//!
//! A finding under a MUST rule makes the package invalid; one under a SHOULD or MAY rule
//! ([`ADVISORY`]) is a warning, reported apart.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::layout;
use crate::mets::reader::Element;

pub(crate) mod fixity;
mod rules;
mod unzip;

pub use fixity::NotChecked;

use crate::formats::unzip::UnzipError;

/// One rule broken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CsipFinding {
    /// The file (inside the package) it is about.
    pub path: String,
    /// The line in that file (1 when it is about the whole file or the structure).
    pub line: u64,
    /// The rule's identifier (`CSIP71`, `CSIPSTR4`, `SIP2`).
    pub rule: String,
    /// What is wrong.
    pub message: String,
    /// Whether it is about the bytes (a listed file missing, unreadable, or not of its stated
    /// size or checksum; a representation METS missing), not about the description.
    pub about_bytes: bool,
}

impl CsipFinding {
    /// A finding about the description in `path` at `line`.
    fn at(path: &str, line: u64, rule: &str, message: impl Into<String>) -> Self {
        let (path, rule, message) = (path.to_string(), rule.into(), message.into());
        CsipFinding { path, line, rule, message, about_bytes: false }
    }
}

/// The rules webaip checks whose level in CSIP 2.2 is SHOULD or MAY: what breaks them is a
/// warning, not a reason to call the package invalid.
pub const ADVISORY: &[&str] = &["CSIPSTR12", "CSIP3", "CSIP4", "CSIP20", "CSIP34", "CSIP47"];

/// The verdict on one package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    /// MUST rules broken: the package is invalid when there is any.
    pub findings: Vec<CsipFinding>,
    /// SHOULD and MAY rules not followed (`ADVISORY`).
    pub warnings: Vec<CsipFinding>,
    /// Files whose size and checksum were verified.
    pub files_verified: u64,
    /// Files whose checksum is by an algorithm webaip does not compute (their size is
    /// checked): neither verified nor a finding.
    pub files_not_checked: Vec<NotChecked>,
}

/// Why a package could not be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Reading failed.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The ZIP is not unpacked: unreadable, a zip bomb, or no room for it.
    #[error(transparent)]
    Unzip(#[from] UnzipError),
}

/// The rules a listed file's SIZE, CHECKSUM and CHECKSUMTYPE fall under (CSIP69/71/72 for a
/// `file`; an `mdRef`'s by its section).
struct ListedRules {
    size: String,
    checksum: String,
    checksum_type: String,
}

/// A file a METS lists, to verify.
struct Listed {
    href: Option<String>,
    size: Option<String>,
    checksum: Option<String>,
    checksum_type: Option<String>,
    line: u64,
    rules: ListedRules,
}

impl Listed {
    fn of(el: &Element, line: u64, rules: ListedRules) -> Listed {
        let attr =
            |local: &str| el.attr(local).filter(|v| !v.trim().is_empty()).map(str::to_string);
        Listed {
            href: el.href().map(str::to_string),
            size: attr("SIZE"),
            checksum: attr("CHECKSUM"),
            checksum_type: attr("CHECKSUMTYPE"),
            line,
            rules,
        }
    }
}

/// Findings about one document.
struct Doc<'a> {
    name: String,
    out: &'a mut Vec<CsipFinding>,
}

impl Doc<'_> {
    fn find(&mut self, line: u64, rule: &str, message: impl Into<String>) {
        self.out.push(CsipFinding::at(&self.name, line, rule, message));
    }

    /// A finding about a listed file's bytes (missing, unreadable, changed).
    fn find_damage(&mut self, line: u64, rule: &str, message: impl Into<String>) {
        let finding =
            CsipFinding { about_bytes: true, ..CsipFinding::at(&self.name, line, rule, message) };
        self.out.push(finding);
    }
}

/// Checks one METS document (`rel` below `root`); returns the representation METS it points at.
fn check_mets(
    root: &Path,
    rel: &str,
    is_root: bool,
    report: &mut CheckReport,
) -> Vec<(String, u64)> {
    let path = root.join(rel);
    let mut rules = rules::Rules::new(rel, is_root, &mut report.findings);
    let read = rules::apply(&path, &mut rules);
    let (files, reps) = (std::mem::take(&mut rules.files), std::mem::take(&mut rules.reps));
    if let Err((line, msg)) = read {
        let message = format!("not a readable METS document: {msg}");
        report.findings.push(CsipFinding::at(rel, line, "CSIP1", message));
        return Vec::new();
    }
    let mut d = Doc { name: rel.to_string(), out: &mut report.findings };
    let dir = path.parent().unwrap_or(root).to_path_buf();
    let mut tally = fixity::Tally::default();
    fixity::verify_files(&mut d, &dir, root, &files, &mut tally);
    report.files_verified += tally.verified;
    report.files_not_checked.append(&mut tally.not_checked);
    reps
}

/// The structure rules (CSIPSTR) of a package folder.
fn structure_rules(root: &Path, report: &mut CheckReport) -> bool {
    let f = |rule: &str, path: &str, m: String| CsipFinding::at(path, 1, rule, m);
    if layout::metadata_in(root, "METS.xml").is_err() {
        report.findings.push(f("CSIPSTR4", "METS.xml", "the package root has no METS.xml".into()));
        return false;
    }
    let reps = root.join("representations");
    if let Ok(entries) = std::fs::read_dir(&reps) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir()
                && layout::metadata_in(root, &format!("representations/{name}/METS.xml")).is_err()
            {
                report.findings.push(f(
                    "CSIPSTR12",
                    &format!("representations/{name}"),
                    "the representation has no METS.xml".into(),
                ));
            }
        }
    }
    true
}

/// The package a `METS.xml` given for it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetsPackage {
    /// The package folder.
    pub folder: PathBuf,
    /// The METS is a representation's (`representations/NAME/METS.xml`), not the root's.
    pub of_representation: bool,
}

/// The package `path` stands for when it is a `METS.xml` (a regular file of that name): the
/// folder around it for a root METS; for a representation's (in `representations/NAME`, and
/// not stating `csip:OAISPACKAGETYPE` as only a root METS does), the folder two levels up.
/// None when `path` is no METS.xml.
pub fn package_around(path: &Path) -> Option<MetsPackage> {
    let is_mets = path.file_name().is_some_and(|n| n == "METS.xml");
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if !(is_mets && regular) {
        return None;
    }
    let dir = folder_or_here(path.parent());
    let reps = dir.parent().filter(|r| r.file_name().is_some_and(|n| n == "representations"));
    match reps {
        Some(reps) if !states_package_type(path) => {
            Some(MetsPackage { folder: folder_or_here(reps.parent()), of_representation: true })
        }
        _ => Some(MetsPackage { folder: dir, of_representation: false }),
    }
}

/// `p`, or `.` when it is empty or none.
fn folder_or_here(p: Option<&Path>) -> PathBuf {
    match p {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether the METS at `path` states `csip:OAISPACKAGETYPE` on its root, as only a package's
/// root METS does (read up to its root tag, within 1 MiB).
fn states_package_type(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut reader = quick_xml::Reader::from_reader(std::io::BufReader::new(file.take(1 << 20)));
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => {
                let local = |a: &quick_xml::events::attributes::Attribute<'_>| {
                    a.key.local_name().as_ref() == "OAISPACKAGETYPE"
                };
                return e.attributes().flatten().any(|a| local(&a));
            }
            Ok(quick_xml::events::Event::Eof) | Err(_) => return false,
            Ok(_) => buf.clear(),
        }
    }
}

/// Checks the package at `path`: a folder, or a `.zip` holding one root folder. Findings under
/// SHOULD and MAY rules are set apart as warnings.
pub fn check_package(path: &Path) -> Result<CheckReport, CheckError> {
    let mut report = check_rules(path)?;
    let all = std::mem::take(&mut report.findings);
    let (warnings, errors) = all.into_iter().partition(|f| ADVISORY.contains(&f.rule.as_str()));
    report.findings = errors;
    report.warnings = warnings;
    Ok(report)
}

/// Every rule over the package at `path`, each finding in `findings`.
fn check_rules(path: &Path) -> Result<CheckReport, CheckError> {
    let mut report = CheckReport::default();
    let unzipped;
    let root = if path.is_file() {
        let Some(u) = unzip::unpack(path, &mut report)? else {
            return Ok(report);
        };
        unzipped = u;
        unzipped.root.clone()
    } else if path.is_dir() {
        path.to_path_buf()
    } else {
        let shown = path.display().to_string();
        report.findings.push(CsipFinding::at(&shown, 1, "CSIPSTR1", "not a folder or an archive"));
        return Ok(report);
    };
    if !structure_rules(&root, &mut report) {
        return Ok(report);
    }
    let reps = check_mets(&root, "METS.xml", true, &mut report);
    let mut seen = HashSet::new();
    for (href, line) in reps {
        if !seen.insert(href.clone()) {
            continue;
        }
        if layout::metadata_in(&root, &href).is_err() {
            report.findings.push(CsipFinding {
                path: "METS.xml".into(),
                line,
                rule: "CSIP110".into(),
                message: format!("{href}: the representation METS is not there"),
                about_bytes: true,
            });
            continue;
        }
        check_mets(&root, &href, false, &mut report);
    }
    Ok(report)
}
