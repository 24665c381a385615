//! Auditing a stored package (`webaip audit`): the METS is validated as `webaip validate` does
//! (schemas, profile rules, PREMIS coherence), then every file it lists is checked against the
//! bytes on disk: existence, SIZE and SHA-512; every record range must be exactly one gzip member
//! holding one WARC record; every bytestream range inside a record must have its stated SIZE and
//! SHA-512. `manifest-sha512.txt` must agree, and files nothing lists are reported.
//!
//! A package webaip did not write (one that names no profile, or another's) is checked under
//! the profile the validation chose for it, as advice: what that profile would ask for and the
//! package lacks (a manifest, files inside the folder) is *not checkable here*, not damage.
//! Damage is bytes that differ from what the METS says, content missing, or a METS that cannot
//! be read to its end; a METS that breaks the rules it is judged by is an invalid description,
//! and two statements of the METS that differ from each other (a file's `SIZE`/`CHECKSUM` and
//! its PREMIS object's) an inconsistency: verdicts of their own. An E-ARK package is judged by
//! the E-ARK rules ([`csip`]).
//!
//! `--deep` reads every record of every container, described or not, verifies the WARC block and
//! payload digests, and compares the number of records with the count the container's PREMIS
//! object states.
//!
//! Everything streams, and work is spread over the threads of the current rayon pool: the
//! whole-file SHA-512 of a container is one task, and its records are split into spans that are
//! read in parallel, so one large container uses every core.

pub mod csip;
pub(crate) mod records;
pub mod references;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::formats::digest::{FileDigests, digests_read, sha512_read};
use crate::layout;
use crate::mets::listing::{FixitySource, ListedFile, Nested, read_listing};
use crate::mets::validate::{Severity, ValidateError, ValidationReport};
use crate::mets::{ValidateOptions, validate_mets};
use crate::sources::recognise::{self, Takes};
use records::{Problem, ReadStop, Walk};

use crate::layout::{MANIFEST, METS};
/// The message of a listed file that is absent.
const MISSING: &str = "listed in the METS but not in the package";

/// Smallest span of a container read as one task: below this, the cost of opening and seeking
/// outweighs the parallelism.
const MIN_SPAN: u64 = 4 << 20;

/// What to audit and how.
#[derive(Debug, Clone, Default)]
pub struct AuditOptions {
    /// How to validate the METS (schemas, profile).
    pub validate: ValidateOptions,
    /// Judge the package by the E-ARK CSIP rules even when its METS does not claim them
    /// (`--profile eark-csip`); a METS that claims an E-ARK profile is judged by them anyway.
    pub eark: bool,
    /// Read every record of every container and verify its WARC digests.
    pub deep: bool,
    /// Follow every revisit to its original (`references`), in the package itself and in
    /// these packages; `None`: revisits are not followed.
    pub with: Option<Vec<PathBuf>>,
    /// `with` holds what a store gave of the packages the METS requires (`--store`): one
    /// missing is the store's lack, not the operator's omission.
    pub from_store: bool,
    /// With `deep`: rebuild every ARC the package was migrated from (its stream only, hashed)
    /// and check it against the digests stated at migration
    /// (`crate::migrate::rebuild`); each difference is a finding.
    pub rebuild_arcs: bool,
}

/// Progress of an audit, in bytes of package files.
#[derive(Debug, Clone, Copy)]
pub enum AuditProgress {
    /// Bytes the audit will read (announced before reading them).
    Planned(u64),
    /// Bytes read.
    Done(u64),
}

/// One thing wrong with the package's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditFinding {
    /// How serious.
    pub severity: Severity,
    /// The check: a docs/profile.md rule number or a check name (`fixity`, `range`, `manifest`,
    /// `warc`, `warc-digest`, `records`, ...).
    pub rule: String,
    /// The package-relative file concerned.
    pub file: String,
    /// Byte offset in that file, when the finding is about a place in it.
    pub offset: Option<u64>,
    /// The METS `<file>` ID concerned, when there is one.
    pub mets_id: Option<String>,
    /// The line of that `<file>` in the METS.
    pub mets_line: Option<u64>,
    /// What was expected and what was found.
    pub message: String,
}

/// What an audit concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Everything was checked, and nothing is wrong.
    Intact,
    /// Nothing that could be checked is wrong, but some of the package could not be checked
    /// here (files kept elsewhere, no manifest where the profile needs none).
    Partial,
    /// No byte found damaged, but the METS contradicts itself: a file's `SIZE` or `CHECKSUM`
    /// differs from its PREMIS object's.
    Inconsistent,
    /// No byte found damaged, but the METS breaks the rules it is judged by (its schema, the
    /// profile it claims, the E-ARK rules of an E-ARK package).
    Invalid,
    /// Bytes that differ from what the METS says, content missing, or a METS that cannot be
    /// read to its end.
    Damaged,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Intact => "INTACT",
            Verdict::Partial => "NO DAMAGE FOUND IN WHAT COULD BE CHECKED",
            Verdict::Inconsistent => {
                "INCONSISTENT DESCRIPTION (no damage found in what could be checked)"
            }
            Verdict::Invalid => "INVALID DESCRIPTION (no damage found in what could be checked)",
            Verdict::Damaged => "DAMAGED",
        })
    }
}

/// Something the audit could not check here, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unchecked {
    /// The file (as the METS or the layout names it).
    pub file: String,
    /// The METS `<file>` ID, when there is one.
    pub mets_id: Option<String>,
    /// What kind of thing could not be checked.
    pub kind: UncheckedKind,
    /// Why it was not checked.
    pub reason: String,
}

/// What kind of thing an audit could not check here: every kind a [`Verdict::Partial`] can
/// come from, so that a caller (ingest) decides by kind, not by the words of the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UncheckedKind {
    /// A file the METS names by URL: kept outside the package.
    KeptElsewhere,
    /// The package has no manifest, and the profile it is checked under does not require one.
    NoManifest,
    /// An ARC not rebuilt (`--rebuild-arcs`): a revisit's payload is in a package not given.
    ArcPayloadElsewhere,
    /// An ARC not rebuilt (`--rebuild-arcs`): the original a revisit refers to holds another
    /// payload (the finding names the package holding it).
    ArcOriginalDiffers,
    /// The ARCs the package was migrated from come back only with payloads in other packages
    /// (its METS states it requires them) that were not given: their rebuild is not checked
    /// (the reason names the packages).
    ArcNeedsPackages,
    /// Something not checked because this machine stopped the reading (too many open files,
    /// no space left for a temporary copy), or the medium holding the file reported an I/O
    /// error (`layout::is_not_read`): it says nothing of the package's bytes; run again (after
    /// an I/O error, check the medium first).
    NotRead,
    /// The packages the revisits of a container name (what its METS must say the package
    /// requires) could not be read past a record: the plain audit, which reads them in the
    /// same pass as the container's fixity when the package shows deduplication, does not know
    /// what the package requires. Not admissible: the store would not know what to keep.
    RequirementsNotRead,
    /// A revisit's original (`--with`) is in another package that holds other bytes there,
    /// or may be in the unread part of another package's container, or in a package the METS
    /// or the revisit names that was not given or does not hold it: the fault, if any, is
    /// that package's (the warning names it).
    OriginalElsewhere,
}

/// The result of auditing one package.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// The package directory.
    pub package: PathBuf,
    /// The METS document audited.
    pub mets: PathBuf,
    /// The conclusion.
    pub verdict: Verdict,
    /// True when every record was read (`--deep`).
    pub deep: bool,
    /// The METS validation (schemas, profile, PREMIS coherence).
    pub validation: ValidationReport,
    /// Findings about the bytes, in file order.
    pub findings: Vec<AuditFinding>,
    /// Where the METS contradicts itself (the validation's P5.1 errors, also among its
    /// findings): not damage, a finding of its own kind.
    pub inconsistencies: Vec<AuditFinding>,
    /// What could not be checked here.
    pub unchecked: Vec<Unchecked>,
    /// Files listed at the top of the fileSec.
    pub files_listed: u64,
    /// Files listed at the top of the fileSec that were found and read.
    pub files_checked: u64,
    /// Record ranges of the METS checked.
    pub records_checked: u64,
    /// Bytestream ranges checked.
    pub bytestreams_checked: u64,
    /// Records read in all (`--deep`: described or not).
    pub records_read: u64,
    /// WARC block and payload digests verified (`--deep`).
    pub warc_digests_checked: u64,
    /// True when everything was checked and neither the validation nor the byte checks found
    /// an error (verdict `intact`).
    pub intact: bool,
    /// Who the package says it is, and its package-level PREMIS (None when those sections
    /// cannot be read; the validation says why).
    pub identity: Option<PackageIdentity>,
    /// The E-ARK rules' findings, when the package is judged by them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eark: Option<csip::CsipCheck>,
    /// Where the revisits lead (`--with`); each one that leads nowhere is also a finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references: Option<references::ReferenceReport>,
    /// The ARCs rebuilt (`--deep --rebuild-arcs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arc_rebuilds: Option<ArcRebuilds>,
}

impl AuditReport {
    /// Errors of the METS validation, where the METS contradicts itself not counted (those
    /// are [`AuditReport::inconsistencies`]).
    pub fn mets_errors(&self) -> usize {
        let errors = self.validation.findings.iter();
        errors.filter(|f| f.severity == Severity::Error && !f.is_inconsistency()).count()
    }

    /// Errors about the package's bytes.
    pub fn byte_errors(&self) -> usize {
        self.findings.iter().filter(|f| f.severity == Severity::Error).count()
    }

    /// Errors by the E-ARK rules, when the package was judged by them.
    pub fn eark_errors(&self) -> Option<usize> {
        let eark = self.eark.as_ref()?;
        Some(eark.findings.iter().filter(|f| f.severity == Severity::Error).count())
    }

    /// Whether the package is let in (by `ingest` and `store put` alike: one rule). An intact
    /// one is. So is one in which nothing that could be checked is wrong (`Partial`) when all
    /// the audit could not check is files the METS names by URL (kept elsewhere), a manifest
    /// its profile does not ask for (its files are checked against the METS), or ARCs whose
    /// rebuild needs the packages it was deduplicated against (its own bytes are checked
    /// whole; its METS states what it requires). Damage and an inconsistent or invalid
    /// description are not.
    pub fn admissible(&self) -> bool {
        use UncheckedKind::{ArcNeedsPackages, KeptElsewhere, NoManifest};
        match self.verdict {
            Verdict::Intact => true,
            Verdict::Partial => (self.unchecked.iter())
                .all(|u| matches!(u.kind, KeptElsewhere | NoManifest | ArcNeedsPackages)),
            Verdict::Inconsistent | Verdict::Invalid | Verdict::Damaged => false,
        }
    }
}

/// What rebuilding the package's ARCs found (`--rebuild-arcs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ArcRebuilds {
    /// ARCs whose stream was rebuilt and checked.
    pub rebuilt: u64,
    /// Of them, those that came out as the migration stated, with no difference.
    pub as_stated: u64,
    /// Gzip ARCs whose file would not come back identical (their stream does), and why.
    pub gzip_not_identical: Vec<NotIdenticalGzip>,
}

/// A gzip ARC whose `.arc.gz` cannot be made again byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotIdenticalGzip {
    /// The ARC's name.
    pub name: String,
    /// The container holding it.
    pub container: String,
    /// Why, and what `unmigrate` gives instead.
    pub why: String,
}

/// The package's identity and package-level PREMIS, as read typed from its METS
/// (`crate::mets::sections`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageIdentity {
    /// The root's `OBJID`.
    pub objid: Option<String>,
    /// The root's `TYPE`.
    pub mets_type: Option<String>,
    /// The root's `PROFILE`.
    pub profile: Option<String>,
    /// PREMIS agents of the package-level sections.
    pub premis_agents: u64,
    /// PREMIS events of the package-level sections.
    pub premis_events: u64,
}

/// The identity of the package at `mets`, and a finding for each package-level event that
/// links an agent the package-level sections do not hold.
fn identity(mets: &Path, mets_name: &str) -> (Option<PackageIdentity>, Vec<AuditFinding>) {
    let Ok(s) = crate::mets::sections::read_package_sections(mets) else {
        return (None, Vec::new());
    };
    let (agents, events) = (s.premis_agents(), s.premis_events());
    let known: BTreeSet<&str> = agents
        .iter()
        .flat_map(|a| &a.value.identifiers)
        .filter_map(|i| i.value.as_deref())
        .collect();
    let mut findings = Vec::new();
    for e in &events {
        let event_id = e.value.identifier.as_ref().and_then(|i| i.value.as_deref()).unwrap_or("");
        for link in &e.value.linking_agents {
            let Some(agent) = link.value.as_deref() else { continue };
            if !known.contains(agent) {
                findings.push(AuditFinding {
                    severity: Severity::Warning,
                    rule: "premis-agents".into(),
                    file: mets_name.to_string(),
                    offset: None,
                    mets_id: None,
                    mets_line: None,
                    message: format!(
                        "event {event_id} links agent {agent}, which the package-level sections do not hold"
                    ),
                });
            }
        }
    }
    let identity = PackageIdentity {
        objid: s.objid.clone(),
        mets_type: s.mets_type.clone(),
        profile: s.profile.clone(),
        premis_agents: agents.len() as u64,
        premis_events: events.len() as u64,
    };
    (Some(identity), findings)
}

/// A package that could not be audited at all.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The METS cannot be read or validated.
    #[error(transparent)]
    Validate(#[from] ValidateError),
    /// The path is neither a package directory nor a METS document: what it is instead.
    #[error(transparent)]
    NotAPackage(#[from] crate::sources::recognise::NotAPackage),
    /// The METS is not a regular file of its own (a link, a FIFO), or cannot be reached.
    #[error(transparent)]
    MetsFile(#[from] layout::ConfineError),
    /// The METS cannot be opened.
    #[error("{}: {}", path.display(), layout::describe_io(source))]
    MetsUnreadable {
        /// The METS document.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The E-ARK check could not read the package.
    #[error(transparent)]
    Eark(#[from] crate::export::eark::check::CheckError),
    /// The METS is not well-formed enough to list its files (the line and byte offset where
    /// reading stopped are in the cause).
    #[error("{}: {source}", path.display())]
    Mets {
        /// The METS document.
        path: PathBuf,
        /// The cause.
        #[source]
        source: crate::mets::reader::MetsError,
    },
}

/// A listed file that is in the package, with what its record tasks need.
struct Present<'a> {
    listed: &'a ListedFile,
    href: &'a str,
    path: PathBuf,
    size: u64,
    /// Described records by BEGIN.
    described: HashMap<u64, &'a ListedFile>,
    /// The BEGINs inside the file, where deep walks may start or resume.
    begins: BTreeSet<u64>,
    /// Where deep walks start; every walk stops at the first of these it lands on.
    span_starts: BTreeSet<u64>,
    /// The revisits' headers are read in the pass that hashes it (a container of a package
    /// that shows deduplication, audited plainly).
    revisits: bool,
}

/// A unit of parallel work, on the file at `file` of the present files.
enum Task {
    /// SHA-512 of the whole file.
    Whole { file: usize },
    /// Described records (by their index among the file's children), each on its own.
    Described { file: usize, records: Vec<usize> },
    /// A deep walk of the file from `start` to the first span start at or after `end`.
    Walk { file: usize, start: u64, end: u64 },
}

/// What a task found.
enum Outcome {
    Whole(io::Result<WholeRead>),
    Described { check: records::DescribedCheck, records: u64 },
    Walk(Walk),
}

/// Where a package is: its directory and its METS document.
#[derive(Clone)]
struct PackageAt {
    dir: PathBuf,
    mets: PathBuf,
}

impl PackageAt {
    /// The METS's file name, as findings and the manifest name it.
    fn mets_name(&self) -> String {
        self.mets.file_name().map_or(METS.into(), |n| n.to_string_lossy().into_owned())
    }
}

/// Where the package and its METS are, for a path that names either the package directory
/// or the METS document inside it (which then need not be called `METS.xml`).
fn package_paths(path: &Path) -> Result<PackageAt, AuditError> {
    // A PDF, a WARC or a harvest is refused for what it is, before its folder is walked.
    recognise::package_at(path, Takes::FolderOrMets)?;
    let (dir, mets) = if path.is_dir() {
        (path.to_path_buf(), path.join(METS))
    } else {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        (dir, path.to_path_buf())
    };
    // A package is self-contained: its METS is a regular file of its own, not a link to one.
    layout::regular_metadata(&mets)?;
    Ok(PackageAt { dir, mets })
}

/// The METS's files with their records and bytestreams. What the METS reader refuses (a
/// DOCTYPE, an entity) is passed over here: the validation the audit starts with reports it,
/// and the audit goes on with what the document lists.
fn list_files(mets: &Path) -> Result<Vec<ListedFile>, AuditError> {
    let file = std::fs::File::open(mets)
        .map_err(|source| AuditError::MetsUnreadable { path: mets.to_path_buf(), source })?;
    let reader =
        crate::mets::reader::MetsReader::lenient(io::BufReader::with_capacity(256 * 1024, file));
    let listing = read_listing(reader, Nested::Keep);
    Ok(listing.map_err(|source| AuditError::Mets { path: mets.to_path_buf(), source })?.files)
}

/// The names of the listed files in the package, as the layout normalises them: names that
/// leave the package are not among them, nor URLs (files kept elsewhere, which no manifest of
/// the package's files can list).
fn listed_names(files: &[ListedFile]) -> BTreeSet<String> {
    files
        .iter()
        .filter_map(|f| f.href.as_deref())
        .filter(|h| layout::uri_scheme(h).is_none())
        .filter_map(|h| layout::confined_name(h).ok())
        .collect()
}

/// What the METS's own checks found, before any file it lists is read: where the package
/// is, the validation, the E-ARK check, and the findings so far.
struct Judged {
    at: PackageAt,
    validation: ValidationReport,
    eark: Option<csip::CsipCheck>,
    deep: bool,
    findings: Vec<AuditFinding>,
}

/// Validates the METS of the package `at`, and checks it by the E-ARK rules when it claims
/// them or `opts` asks for them.
fn judge_mets(at: PackageAt, opts: &AuditOptions) -> Result<Judged, AuditError> {
    let mut validation = validate_mets(&at.mets, &opts.validate)?;
    let mut findings = Vec::new();
    let eark = match opts.eark || csip::claims_csip(&at.mets) {
        true => Some(csip::check(&at.dir, &mut validation, &mut findings)?),
        false => None,
    };
    Ok(Judged { at, validation, eark, deep: opts.deep, findings })
}

/// The profile the package's files are held to, and whether the package claims it: a profile
/// the package does not claim is advice, and what it asks for is not damage.
struct FileRules {
    profile: crate::profile::Profile,
    required: bool,
}

impl FileRules {
    fn of(opts: &AuditOptions, validation: &ValidationReport) -> FileRules {
        let profile = opts
            .validate
            .profile
            .clone()
            .or_else(|| crate::profile::Profile::load(&validation.profile).ok())
            .unwrap_or_else(crate::profile::Profile::default_profile);
        FileRules { profile, required: validation.profile_required }
    }

    /// Under a profile whose package is its folder (a manifest of every file), a second METS
    /// is one more unlisted file; else a folder of METS documents is a folder of packages.
    fn folder_is_package(&self) -> bool {
        self.profile.rules.manifest && self.required
    }

    /// Why a package without a manifest is not damaged by lacking one; `None` when it is.
    fn manifest_not_needed(&self) -> Option<String> {
        let name = &self.profile.name;
        match (self.profile.rules.manifest, self.required) {
            (true, true) => None,
            (true, false) => Some(format!(
                "the package has no manifest, and it does not claim profile {name}, whose packages carry one"
            )),
            (false, _) => Some(format!(
                "the package has no manifest, and profile {name} does not ask for one"
            )),
        }
    }
}

/// The names a package's files are checked against: its directory, its METS's name, and the
/// files the METS lists inside it.
struct PackageNames<'a> {
    dir: &'a Path,
    mets: &'a str,
    listed: &'a BTreeSet<String>,
}

/// Audits the package at `path` (its directory, or its METS document); `progress` hears of the
/// bytes planned and read.
pub fn audit_package(
    path: &Path,
    opts: &AuditOptions,
    progress: &(dyn Fn(AuditProgress) + Sync),
) -> Result<AuditReport, AuditError> {
    audit_with(path, opts, &Hooks { progress, tee: None })
}

/// Where the bytes of a package's files go as an audit reads each whole (a store put stages
/// its copy in the audit's own read): one read and one SHA-512 per file, not two.
pub(crate) trait Tee: Sync {
    /// A writer for the bytes of package file `href` (`None`: not wanted). It sees every byte
    /// the audit hashes, in order, and is dropped before [`Tee::read`] is told the digest.
    fn open(&self, href: &str) -> Option<Box<dyn io::Write + Send + '_>>;
    /// Package file `href` was read whole through its writer; its bytes' SHA-512 (hex).
    fn read(&self, href: &str, sha512: &str);
    /// Whether the tee's owner reads package file `href` whole later and checks its SHA-512
    /// against the manifest then (a bucket upload hashes what it sends), so that a check of
    /// the package's fixity need not read it first. The audit reads every file regardless.
    fn checks_later(&self, _href: &str) -> bool {
        false
    }
}

/// [`audit_package`], each file read whole also written to `tee`.
pub(crate) fn audit_package_teed(
    path: &Path,
    opts: &AuditOptions,
    tee: &dyn Tee,
) -> Result<AuditReport, AuditError> {
    audit_with(path, opts, &Hooks { progress: &|_| {}, tee: Some(tee) })
}

/// The verdict on a package's METS alone, its files not read: well-formed, valid by its
/// schemas and profile (and the E-ARK rules when it claims them or `opts` asks), consistent.
/// A store put checks this beside its own fixity check of every file.
pub(crate) struct MetsJudgement {
    /// `Intact` when nothing is wrong with the METS (its files are not judged).
    pub verdict: Verdict,
    /// Validation (and E-ARK) errors.
    pub errors: usize,
    /// Where the METS contradicts itself.
    pub inconsistencies: usize,
}

/// Judges the METS of the package at `path` as an audit does, without reading its files.
pub(crate) fn judge_mets_alone(
    path: &Path,
    opts: &AuditOptions,
) -> Result<MetsJudgement, AuditError> {
    let judged = judge_mets(package_paths(path)?, opts)?;
    let name = judged.at.mets_name();
    let found = (judged.findings.as_slice(), Vec::new());
    let (verdict, inconsistencies) =
        conclude(&judged.validation, &name, found, &[], judged.eark.as_ref());
    let validation = judged.validation.findings.iter();
    let invalid = validation.filter(|f| f.severity == Severity::Error && !f.is_inconsistency());
    let errors =
        invalid.count() + judged.findings.iter().filter(|f| f.severity == Severity::Error).count();
    Ok(MetsJudgement { verdict, errors, inconsistencies: inconsistencies.len() })
}

/// What an audit tells of its reading as it goes.
struct Hooks<'a> {
    progress: &'a (dyn Fn(AuditProgress) + Sync),
    tee: Option<&'a dyn Tee>,
}

fn audit_with(path: &Path, opts: &AuditOptions, hooks: &Hooks) -> Result<AuditReport, AuditError> {
    let at = package_paths(path)?;
    // The METS is validated while the files it lists are read: neither waits for the other,
    // and no core is left idle while the schemas are checked.
    let (judged, reading) =
        rayon::join(|| judge_mets(at.clone(), opts), || read_package(&at, opts.deep, hooks));
    let mut judged = judged?;
    let rules = FileRules::of(opts, &judged.validation);
    let Reading { files, mut read, findings: found, mut unchecked } = match reading {
        Ok(reading) => reading,
        Err(AuditError::Mets { source, .. }) => return Ok(unreadable_mets(judged, &source)),
        Err(e) => return Err(e),
    };
    let dir = judged.at.dir.as_path();
    let findings = &mut judged.findings;
    findings.extend(found);
    collapse_missing_groups(&files, findings);
    let mets_name = judged.at.mets_name();
    let listed = listed_names(&files);
    let names = PackageNames { dir, mets: &mets_name, listed: &listed };
    let manifest_absent = layout::metadata_in(dir, MANIFEST).is_err_and(|e| e.is_not_found());
    match rules.manifest_not_needed().filter(|_| manifest_absent) {
        Some(reason) => {
            let kind = UncheckedKind::NoManifest;
            unchecked.push(Unchecked { file: MANIFEST.into(), mets_id: None, kind, reason });
        }
        None => {
            let mut out = Sink { findings: &mut *findings, unchecked: &mut unchecked };
            check_manifest(&names, &mut read.hashes, &mut out);
        }
    }
    check_unlisted(&names, &rules, findings);
    let (identity, unlinked) = identity(&judged.at.mets, &mets_name);
    findings.extend(unlinked);
    let undeclared = undeclared_requirements(dir, &judged.at.mets, &mets_name, &read.referred);
    let arc_rebuilds = check_arc_rebuilds(dir, opts, findings, &mut unchecked);
    if arc_rebuilds.is_none() {
        unchecked.extend(arcs_need_packages(&judged.at.mets, &mets_name, opts.with.as_deref()));
    }
    let references = match &opts.with {
        Some(with) => {
            let followed = Followed {
                from_store: opts.from_store,
                findings: &mut *findings,
                unchecked: &mut unchecked,
            };
            Some(follow_references(dir, with, followed)?)
        }
        None => None,
    };
    findings.sort_by(|a, b| a.file.cmp(&b.file).then(a.offset.cmp(&b.offset)));
    place_in_mets(&files, findings);
    let files_listed = files.len() as u64;
    let found = Found { files_listed, read, unchecked, identity, undeclared };
    Ok(report(judged, &mets_name, found, references, arc_rebuilds))
}

/// The files the METS lists, and what reading them found.
struct Reading {
    files: Vec<ListedFile>,
    read: ReadTally,
    findings: Vec<AuditFinding>,
    unchecked: Vec<Unchecked>,
}

/// Lists the files of the package's METS and reads them ([`check_files`]).
fn read_package(at: &PackageAt, deep: bool, hooks: &Hooks) -> Result<Reading, AuditError> {
    let files = list_files(&at.mets)?;
    let (mut findings, mut unchecked) = (Vec::new(), Vec::new());
    // A deep audit reads every revisit anyway; a plain one reads the revisits' headers in the
    // same pass as the containers' fixity, when the package shows deduplication.
    let revisits = !deep && shows_deduplication(&at.dir, &at.mets);
    let mut out = Sink { findings: &mut findings, unchecked: &mut unchecked };
    let read = check_files(&at.dir, &files, (deep, revisits), hooks, &mut out);
    Ok(Reading { files, read, findings, unchecked })
}

/// Where the reading of a package's files reports: its findings, and what it could not check.
struct Sink<'a> {
    findings: &'a mut Vec<AuditFinding>,
    unchecked: &'a mut Vec<Unchecked>,
}

/// Finds the listed files in the package and reads them (hashes, records, deep walks; with
/// `revisits`, the revisits' headers of each container in the pass that hashes it), with their
/// findings; returns what was read.
fn check_files(
    dir: &Path,
    files: &[ListedFile],
    (deep, revisits): (bool, bool),
    hooks: &Hooks,
    out: &mut Sink,
) -> ReadTally {
    let mut present: Vec<Present> =
        files.iter().filter_map(|f| locate(dir, f, out.findings, out.unchecked)).collect();
    for p in &mut present {
        p.revisits = revisits && p.listed.is_container();
    }
    let plan = plan(&mut present, deep);
    (hooks.progress)(AuditProgress::Planned(plan.bytes));
    read_listed(dir, &present, &plan.tasks, hooks, out)
}

/// What the audit of the listed files found, beside its findings.
struct Found {
    files_listed: u64,
    read: ReadTally,
    unchecked: Vec<Unchecked>,
    identity: Option<PackageIdentity>,
    /// Where the METS contradicts the containers it describes ([`undeclared_requirements`]).
    undeclared: Vec<AuditFinding>,
}

/// The report of a package whose files were checked, with its verdict.
fn report(
    judged: Judged,
    mets_name: &str,
    found: Found,
    references: Option<references::ReferenceReport>,
    arc_rebuilds: Option<ArcRebuilds>,
) -> AuditReport {
    let Judged { at, validation, eark, deep, findings } = judged;
    let (verdict, inconsistencies) = conclude(
        &validation,
        mets_name,
        (&findings, found.undeclared),
        &found.unchecked,
        eark.as_ref(),
    );
    let read = found.read;
    AuditReport {
        package: at.dir,
        mets: at.mets,
        verdict,
        deep,
        validation,
        findings,
        inconsistencies,
        unchecked: found.unchecked,
        files_listed: found.files_listed,
        files_checked: read.files,
        records_checked: read.records_checked,
        bytestreams_checked: read.bytestreams,
        records_read: read.records_read,
        warc_digests_checked: read.digests,
        intact: verdict == Verdict::Intact,
        identity: found.identity,
        eark,
        references,
        arc_rebuilds,
    }
}

/// What reading the listed files found beside its findings.
#[derive(Default)]
struct ReadTally {
    /// SHA-512 of each whole file read, by its name in the METS.
    hashes: BTreeMap<String, String>,
    /// Listed files found in the package and read.
    files: u64,
    records_checked: u64,
    bytestreams: u64,
    records_read: u64,
    digests: u64,
    /// The packages the revisits read (those the METS describes; every one with `--deep`;
    /// every one of a package that shows deduplication) say hold their originals, by OBJID.
    referred: BTreeSet<String>,
}

/// Runs one reading task over the files `present`.
fn run_task(dir: &Path, present: &[Present], task: &Task, hooks: &Hooks) -> (usize, Outcome) {
    let progress = hooks.progress;
    match task {
        Task::Whole { file } => {
            let p = &present[*file];
            let r = whole_file(dir, p, hooks.tee);
            progress(AuditProgress::Done(p.size));
            (*file, Outcome::Whole(r))
        }
        Task::Described { file, records } => {
            let p = &present[*file];
            let records: Vec<&ListedFile> =
                records.iter().map(|&k| &p.listed.children[k]).collect();
            let check = records::check_described(&p.path, p.size, &records);
            progress(AuditProgress::Done(records.iter().map(|r| range_len(r)).sum()));
            let records = records.len() as u64;
            (*file, Outcome::Described { check, records })
        }
        Task::Walk { file, start, end } => {
            let p = &present[*file];
            let (span, size) = ((*start, *end), p.size);
            let w = records::walk(&p.path, span, size, &p.span_starts, &p.begins, &p.described);
            progress(AuditProgress::Done(end - start));
            (*file, Outcome::Walk(w))
        }
    }
}

/// Runs the reading `tasks` over the files `present` on the worker pool, and gathers their
/// outcomes file by file into findings and a tally.
fn read_listed(
    dir: &Path,
    present: &[Present],
    tasks: &[Task],
    hooks: &Hooks,
    out: &mut Sink,
) -> ReadTally {
    let findings = &mut *out.findings;
    let outcomes: Vec<(usize, Outcome)> =
        tasks.par_iter().map(|t| run_task(dir, present, t, hooks)).collect();
    let mut walks: Vec<Vec<Walk>> = present.iter().map(|_| Vec::new()).collect();
    let mut read = ReadTally { files: present.len() as u64, ..ReadTally::default() };
    for (i, outcome) in outcomes {
        let p = &present[i];
        match outcome {
            Outcome::Whole(w) => {
                let mut sink = Sink { findings: &mut *findings, unchecked: &mut *out.unchecked };
                whole_read(p, w, &mut read, &mut sink);
            }
            Outcome::Described { check, records } => {
                read.records_checked += records - check.not_read.len() as u64;
                read.bytestreams += check.bytestreams;
                read.referred.extend(check.referred);
                findings.extend(check.problems.into_iter().map(|(at, pr)| place(p.href, at, pr)));
                // Said once per run of records: after a bad sector, every record past it fails.
                if let Some(n) = check.not_read.first() {
                    let more = check.not_read.len() - 1;
                    let why = format!(
                        "the described record {} at byte {} and {more} more after it: {}",
                        n.id, n.begin, n.cause
                    );
                    out.unchecked.push(not_read(p.href, "", &why));
                }
            }
            Outcome::Walk(w) => walks[i].push(w),
        }
    }
    let mut sink = Sink { findings, unchecked: &mut *out.unchecked };
    for (p, w) in present.iter().zip(walks).filter(|(_, w)| !w.is_empty()) {
        let t = merge_walks(p, w, &mut sink);
        read.records_checked += t.described;
        read.bytestreams += t.bytestreams;
        read.records_read += t.records;
        read.digests += t.digests;
        read.referred.extend(t.referred);
    }
    read
}

/// What reading the file `p` whole gave: its fixity checked, or why it could not be read
/// ([`unreadable`]); the packages its revisits name, or where their reading stopped.
fn whole_read(p: &Present, w: io::Result<WholeRead>, read: &mut ReadTally, out: &mut Sink) {
    let w = match w {
        Ok(w) => w,
        Err(e) => {
            // Found, but not read: not counted among the files checked.
            read.files = read.files.saturating_sub(1);
            return unreadable(p.href, &p.listed.id, &e, out);
        }
    };
    file_fixity(p, &w.digests, out.findings);
    read.hashes.insert(p.href.to_string(), w.digests.sha512);
    let Some(revisits) = w.revisits else { return };
    read.referred.extend(revisits.packages);
    if let Some(stop) = revisits.stopped {
        let reason = format!(
            "the packages its revisits take payloads from were read only up to the record at \
             offset {} ({}): what the METS must say this package requires is not checked",
            stop.offset, stop.why
        );
        let mets_id = (!p.listed.id.is_empty()).then(|| p.listed.id.clone());
        let (file, kind) = (p.href.to_string(), UncheckedKind::RequirementsNotRead);
        out.unchecked.push(Unchecked { file, mets_id, kind, reason });
    }
}

/// A file (`href`, METS ID `id`) that could not be read: when its bytes are left unknown
/// (`layout::not_read_cause`: this machine stopped the reading, or the medium reported an
/// I/O error) it is not checked (nor its manifest line: [`check_manifest`]); otherwise a
/// fixity finding.
fn unreadable(href: &str, id: &str, e: &(dyn std::error::Error + 'static), out: &mut Sink) {
    let Some(cause) = layout::not_read_cause(e) else {
        let what = format!("cannot be read: {e}");
        return out.findings.push(finding("fixity", href, None, id, what));
    };
    out.unchecked.push(not_read(href, id, &layout::describe_io(cause)));
}

/// What could not be checked of the file `href` (METS ID `id`, may be empty) because its
/// bytes could not be read for `why`, which says nothing of them ([`layout::is_not_read`]).
fn not_read(href: &str, id: &str, why: &dyn std::fmt::Display) -> Unchecked {
    Unchecked {
        file: href.to_string(),
        mets_id: (!id.is_empty()).then(|| id.to_string()),
        kind: UncheckedKind::NotRead,
        reason: format!(
            "cannot be read here ({why}): nothing is known of its bytes, which are not \
             checked (audit again; after an input/output error, check the medium first)"
        ),
    }
}

/// The report on a package whose METS cannot be read to its end (cut short, not well-formed):
/// damaged, its files unchecked, the place the reading stopped named.
fn unreadable_mets(judged: Judged, why: &crate::mets::reader::MetsError) -> AuditReport {
    let Judged { at, validation, eark, deep, mut findings } = judged;
    let name = at.mets_name();
    let pos = why.pos();
    let message = format!("{why}; the files it lists are not checked");
    let mut f = finding("XML", &name, Some(pos.offset), "", message);
    f.mets_line = Some(pos.line);
    findings.insert(0, f);
    AuditReport {
        package: at.dir,
        mets: at.mets,
        verdict: Verdict::Damaged,
        deep,
        validation,
        findings,
        inconsistencies: Vec::new(),
        unchecked: Vec::new(),
        files_listed: 0,
        files_checked: 0,
        records_checked: 0,
        bytestreams_checked: 0,
        records_read: 0,
        warc_digests_checked: 0,
        intact: false,
        identity: None,
        eark,
        references: None,
        arc_rebuilds: None,
    }
}

/// Rebuilds the stream of every ARC the package's containers were migrated from; each
/// difference from what the migration stated is a finding on the container (rule
/// `arc-rebuild`) naming the ARC and the offset in it. The payloads of revisits are taken from
/// the package and the `--with` packages. Each container is rebuilt on its own: one whose
/// revisit's payload is in no package given, or in one that holds another payload there, is
/// listed unchecked (with a finding naming that package), and the others are still checked.
fn check_arc_rebuilds(
    dir: &Path,
    opts: &AuditOptions,
    findings: &mut Vec<AuditFinding>,
    unchecked: &mut Vec<Unchecked>,
) -> Option<ArcRebuilds> {
    use crate::migrate::rebuild::{RebuildOptions, StoredPayloads, rebuild_each};
    if !(opts.deep && opts.rebuild_arcs) {
        return None;
    }
    let containers = package_containers(dir);
    let mut originals_in = opts.with.clone().unwrap_or_default();
    originals_in.push(dir.to_path_buf());
    let mut payloads = StoredPayloads::new(originals_in, None);
    let sink = &mut crate::migrate::rebuild::CheckOnly;
    let mut counts = ArcRebuilds::default();
    let rel = |p: &str| {
        Path::new(p).strip_prefix(dir).map_or(p.to_string(), |p| p.to_string_lossy().into_owned())
    };
    match rebuild_each(&containers, &RebuildOptions::default(), &mut payloads, sink) {
        Ok(each) => {
            for c in each {
                match c.outcome {
                    Ok(reports) => {
                        for r in reports {
                            let file = rel(&r.container);
                            tally_rebuild(&r, file, &mut counts, findings);
                        }
                    }
                    Err(e) => {
                        let file = rel(&c.container.to_string_lossy());
                        rebuild_fault(dir, file, e, findings, unchecked);
                    }
                }
            }
        }
        // The machine or the medium stopped the rebuild before any container's own outcome:
        // nothing is known of any container's ARCs.
        Err(e) if e.is_not_read() => {
            for c in &containers {
                let why = layout::with_not_read_cause(&e);
                arcs_not_read(rel(&c.to_string_lossy()), why, findings, unchecked);
            }
        }
        Err(e) => findings.push(finding("arc-rebuild", "", None, "", format!("{e}"))),
    }
    Some(counts)
}

/// What a container whose ARCs could not be rebuilt (`file`, in the package) gives: it is
/// unchecked when a revisit's payload is in no package given or differs there (a warning
/// naming that package: the reference itself is rule P6.4's), else a finding at the place the
/// error names.
fn rebuild_fault(
    dir: &Path,
    file: String,
    e: crate::migrate::rebuild::RebuildError,
    findings: &mut Vec<AuditFinding>,
    unchecked: &mut Vec<Unchecked>,
) {
    use crate::migrate::rebuild::RebuildError;
    if e.is_not_read() {
        return arcs_not_read(file, layout::with_not_read_cause(&e), findings, unchecked);
    }
    let reason = e.to_string();
    match &e {
        RebuildError::NoOriginal(_) => {
            let kind = UncheckedKind::ArcPayloadElsewhere;
            unchecked.push(Unchecked { file, mets_id: None, kind, reason });
        }
        RebuildError::OriginalDiffers(o) => {
            // The rule P6.4 follows too: one fault, one verdict in one report.
            let elsewhere = references::fault_elsewhere(dir, &o.package);
            let whose = match &elsewhere {
                None => "this package".to_string(),
                Some(p) => format!("the --with package {p}"),
            };
            let what = format!("its ARCs are not rebuilt; the fault is in {whose}: {reason}");
            let mut f = finding("arc-rebuild", &file, Some(o.offset), "", what);
            if elsewhere.is_some() {
                f.severity = Severity::Warning;
            }
            findings.push(f);
            let kind = UncheckedKind::ArcOriginalDiffers;
            unchecked.push(Unchecked { file, mets_id: None, kind, reason });
        }
        RebuildError::Record { offset, .. } => {
            findings.push(finding("arc-rebuild", &file, Some(*offset), "", reason));
        }
        // The payloads could not be taken (a --with package unreadable, no room for the
        // temporary copy): nothing is known of this container's ARCs, which is no damage of
        // its own. Damage in the package's own containers is the deep audit's to find.
        RebuildError::Originals(_) => {
            let what = format!("its ARCs are not rebuilt: {reason}");
            let mut f = finding("arc-rebuild", &file, None, "", what);
            f.severity = Severity::Warning;
            findings.push(f);
            let kind = UncheckedKind::ArcPayloadElsewhere;
            unchecked.push(Unchecked { file, mets_id: None, kind, reason });
        }
        _ => findings.push(finding("arc-rebuild", &file, None, "", reason)),
    }
}

/// The ARCs of the container `file` are not rebuilt because this machine or its medium
/// stopped the reading (too many open files, no room for a temporary copy, an input/output
/// error: `reason`): nothing is known of them, and nothing of the package is said.
fn arcs_not_read(
    file: String,
    reason: String,
    findings: &mut Vec<AuditFinding>,
    unchecked: &mut Vec<Unchecked>,
) {
    let what = format!("its ARCs are not rebuilt, not checked: {reason}");
    let mut f = finding("arc-rebuild", &file, None, "", what);
    f.severity = Severity::Warning;
    findings.push(f);
    let kind = UncheckedKind::NotRead;
    unchecked.push(Unchecked { file, mets_id: None, kind, reason });
}

/// The WARC containers of the package (content, then viral), each folder in name order.
fn package_containers(dir: &Path) -> Vec<PathBuf> {
    let mut containers = Vec::new();
    for sub in [layout::CONTENT_DIR, layout::VIRAL_DIR] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { continue };
        let mut v: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_str().is_some_and(|n| n.ends_with(".warc.gz") || n.ends_with(".warc")))
            .collect();
        v.sort();
        containers.extend(v);
    }
    containers
}

/// Counts one rebuilt ARC, and makes a finding on its container `file` of each difference
/// from what the migration stated (and a warning when it cannot be rebuilt).
fn tally_rebuild(
    r: &crate::migrate::rebuild::ArcRebuild,
    file: String,
    counts: &mut ArcRebuilds,
    findings: &mut Vec<AuditFinding>,
) {
    counts.rebuilt += 1;
    counts.as_stated += u64::from(r.as_expected());
    if let Some(why) = r.content_identical_gzip_not() {
        let (name, container) = (r.name.clone(), file.clone());
        counts.gzip_not_identical.push(NotIdenticalGzip { name, container, why });
    }
    for d in &r.differences {
        let at = match d.in_member {
            Some(n) => format!("{}+{n}", d.offset),
            None => d.offset.to_string(),
        };
        let what = format!("ARC {} offset {at}: {}", r.name, d.what);
        findings.push(finding("arc-rebuild", &file, None, "", what));
    }
    if !r.rebuildable {
        let what = format!("ARC {} not rebuildable: {}", r.name, r.reasons.join("; "));
        let mut f = finding("arc-rebuild", &file, None, "", what);
        f.severity = Severity::Warning;
        findings.push(f);
    }
}

/// The ARCs' rebuild unchecked when the package's METS states that the ARCs it was migrated
/// from require other packages (deduplicated against them) not all given (`--with`,
/// `--store`); `None` when it requires none, or all were given, or its METS cannot be read
/// (its validation says why).
fn arcs_need_packages(mets: &Path, mets_name: &str, with: Option<&[PathBuf]>) -> Option<Unchecked> {
    let given: Vec<String> = (with.unwrap_or_default().iter())
        .filter_map(|w| crate::index::digests::package_objid(w).ok())
        .collect();
    let missing = crate::store::deps::missing_arc_dependencies(mets, &given).ok()?;
    if missing.is_empty() {
        return None;
    }
    let reason = format!(
        "the ARCs this package was migrated from come back only with payloads stored in \
         package(s) {} (it was deduplicated against them), not given: their rebuild is not \
         checked (audit --deep --rebuild-arcs --with PACKAGE)",
        missing.join(", ")
    );
    let kind = UncheckedKind::ArcNeedsPackages;
    Some(Unchecked { file: mets_name.to_string(), mets_id: None, kind, reason })
}

/// The packages the revisits read (those the METS describes; every one with `--deep`) say
/// hold their originals (`X-Webaip-Refers-To-Package`) that the METS does not say the package
/// requires (PREMIS `dependency` / `requires`, what `unmigrate`, the audit and the store go
/// by): the METS contradicts the containers it describes, and nothing would keep those
/// packages while this one needs them, so the package is never INTACT. One finding on the
/// METS per OBJID; none when its METS cannot be read (its validation says why).
fn undeclared_requirements(
    dir: &Path,
    mets: &Path,
    mets_name: &str,
    referred: &BTreeSet<String>,
) -> Vec<AuditFinding> {
    if referred.is_empty() {
        return Vec::new();
    }
    let Ok(file) = layout::open_regular(mets) else { return Vec::new() };
    let reader = crate::mets::reader::MetsReader::strict(io::BufReader::new(file));
    let Ok(required) = crate::store::deps::mets_dependencies(reader) else { return Vec::new() };
    let own = crate::index::digests::package_objid(dir).ok();
    (referred.iter())
        .filter(|objid| !required.contains(*objid) && own.as_ref() != Some(*objid))
        .map(|objid| {
            let what = format!(
                "revisits in its containers take their payloads from package {objid} \
                 (X-Webaip-Refers-To-Package), which the METS does not say this package \
                 requires (PREMIS dependency / requires)"
            );
            finding("P6.4", mets_name, None, "", what)
        })
        .collect()
}

/// Whether the package shows that its containers hold revisits whose originals may be in
/// other packages, by what costs nothing to read: its METS records a PREMIS `deduplication`
/// event or a `requires` relationship, or a migration log (`logs/webaip/*.migration.json`,
/// beside the METS and written apart from it) names packages its ARCs require. Then the plain
/// audit reads the revisits' headers (inflating the containers) for what the METS must say
/// the package requires; a package showing none of these is not inflated, and only `--deep`
/// would find revisits its METS and logs both hide.
fn shows_deduplication(dir: &Path, mets: &Path) -> bool {
    let said = layout::open_regular(mets).is_ok_and(|file| {
        let reader = crate::mets::reader::MetsReader::strict(io::BufReader::new(file));
        crate::store::deps::mets_shows_deduplication(reader).unwrap_or(false)
    });
    said || crate::store::deps::logs_require_packages(dir)
}

/// Where following the references reports: the audit's findings and what it left unchecked.
struct Followed<'a> {
    from_store: bool,
    findings: &'a mut Vec<AuditFinding>,
    unchecked: &'a mut Vec<Unchecked>,
}

/// Follows the package's revisits ([`references::check_references`]): each one whose original
/// is missing here or holds other bytes here is damage (rule P6.4) at the revisit's place; one
/// whose fault is another package's ([`references::fault_elsewhere`], the rule the ARC
/// rebuild follows too) is a warning naming that package and leaves the revisit's container
/// unchecked; a container that could not be read to its end is a warning.
fn follow_references(
    dir: &Path,
    with: &[PathBuf],
    out: Followed<'_>,
) -> Result<references::ReferenceReport, AuditError> {
    let Followed { from_store, findings, unchecked } = out;
    let report = references::check_references(dir, with, from_store)?;
    for u in &report.unresolved {
        let what = format!(
            "revisit {} of {}: {}",
            u.record_id.as_deref().unwrap_or("(no record id)"),
            u.target_uri.as_deref().unwrap_or("(no target URI)"),
            u.problem
        );
        let mut f = finding("P6.4", &u.file, Some(u.offset), "", what);
        if let Some(elsewhere) = &u.fault_in {
            f.severity = Severity::Warning;
            let reason = format!(
                "a revisit's original is not checked: the fault is in {elsewhere}: {}",
                f.message
            );
            let kind = UncheckedKind::OriginalElsewhere;
            unchecked.push(Unchecked { file: u.file.clone(), mets_id: None, kind, reason });
        }
        findings.push(f);
    }
    for why in &report.unreadable {
        let mut f = finding("P6.4", "", None, "", format!("not searched to its end: {why}"));
        f.severity = Severity::Warning;
        findings.push(f);
    }
    Ok(report)
}

/// The verdict, and where the METS contradicts itself (as audit findings about the METS).
/// Damage is a byte that differs from what the METS says, content missing, or a METS that
/// cannot be read to its end; a METS that breaks the rules it is judged by is an invalid
/// description, and a `<file>` whose attributes and PREMIS object disagree an inconsistency:
/// neither says anything of the bytes.
fn conclude(
    validation: &ValidationReport,
    mets_name: &str,
    (findings, undeclared): (&[AuditFinding], Vec<AuditFinding>),
    unchecked: &[Unchecked],
    eark: Option<&csip::CsipCheck>,
) -> (Verdict, Vec<AuditFinding>) {
    let mut inconsistencies: Vec<AuditFinding> = validation
        .findings
        .iter()
        .filter(|f| f.is_inconsistency())
        .map(|f| AuditFinding {
            severity: f.severity,
            rule: f.rule.clone(),
            file: mets_name.to_string(),
            offset: None,
            mets_id: None,
            mets_line: f.line,
            message: f.message.clone(),
        })
        .collect();
    inconsistencies.extend(undeclared);
    let invalid =
        validation.findings.iter().any(|f| f.severity == Severity::Error && !f.is_inconsistency())
            || eark.is_some_and(|e| e.findings.iter().any(|f| f.severity == Severity::Error));
    let damaged = !validation.well_formed || findings.iter().any(|f| f.severity == Severity::Error);
    let verdict = if damaged {
        Verdict::Damaged
    } else if invalid {
        Verdict::Invalid
    } else if !inconsistencies.is_empty() {
        Verdict::Inconsistent
    } else if unchecked.is_empty() {
        Verdict::Intact
    } else {
        Verdict::Partial
    };
    (verdict, inconsistencies)
}

/// Bytes of a record range (0 when it has none).
fn range_len(r: &ListedFile) -> u64 {
    match (r.begin, r.end) {
        (Some(b), Some(e)) if e >= b => (e - b).saturating_add(1),
        _ => 0,
    }
}

/// The reading tasks of an audit, and the bytes they read.
struct Plan {
    tasks: Vec<Task>,
    bytes: u64,
}

/// Splits the work into tasks: every file is hashed whole; a container's described records are
/// checked in runs of about [`MIN_SPAN`] bytes, or with `deep` the container is walked in spans
/// that start where the METS says records begin.
fn plan(present: &mut [Present], deep: bool) -> Plan {
    let threads = rayon::current_num_threads() as u64;
    let mut plan = Plan { tasks: Vec::new(), bytes: 0 };
    for (file, p) in present.iter_mut().enumerate() {
        plan.tasks.push(Task::Whole { file });
        plan.bytes += p.size;
        if deep && p.listed.is_container() {
            plan_walks(file, p, threads, &mut plan);
        } else {
            plan_described(file, p, &mut plan);
        }
    }
    plan
}

/// Deep walks over the container `p`, in spans of at least [`MIN_SPAN`] bytes (about eight per
/// thread: the last span to end, while the other threads have nothing left, is short), each
/// starting where the METS says a record begins.
fn plan_walks(file: usize, p: &mut Present, threads: u64, plan: &mut Plan) {
    let span = MIN_SPAN.max(p.size / (threads * 8).max(1));
    let mut start = 0;
    p.span_starts.insert(0);
    for &b in p.begins.iter().filter(|&&b| b > 0) {
        if b - start >= span {
            plan.tasks.push(Task::Walk { file, start, end: b });
            p.span_starts.insert(b);
            start = b;
        }
    }
    plan.tasks.push(Task::Walk { file, start, end: p.size });
    plan.bytes += p.size;
}

/// The described records of `p`, in runs of about [`MIN_SPAN`] bytes.
fn plan_described(file: usize, p: &Present, plan: &mut Plan) {
    let mut records: Vec<usize> = Vec::new();
    let mut bytes = 0;
    for (k, r) in p.listed.children.iter().enumerate() {
        records.push(k);
        bytes += range_len(r);
        plan.bytes += range_len(r);
        if bytes >= MIN_SPAN {
            plan.tasks.push(Task::Described { file, records: std::mem::take(&mut records) });
            bytes = 0;
        }
    }
    if !records.is_empty() {
        plan.tasks.push(Task::Described { file, records });
    }
}

/// Finds a listed file in the package; reports it when it points outside or is missing.
fn locate<'a>(
    dir: &Path,
    f: &'a ListedFile,
    findings: &mut Vec<AuditFinding>,
    unchecked: &mut Vec<Unchecked>,
) -> Option<Present<'a>> {
    // Reference packages list files by other means; the validation reports the FLocat rule.
    let href = f.href.as_deref()?;
    if layout::uri_scheme(href).is_some() {
        unchecked.push(Unchecked {
            file: href.to_string(),
            mets_id: (!f.id.is_empty()).then(|| f.id.clone()),
            kind: UncheckedKind::KeptElsewhere,
            reason: "its FLocat is a URL: the file is kept outside the package, not checkable here"
                .into(),
        });
        return None;
    }
    if let Err(reason) = layout::confined_name(href) {
        let what = format!("its FLocat {reason}: it leaves the package; not opened");
        findings.push(finding("location", href, None, &f.id, what));
        return None;
    }
    // Reached without following a link; only a regular file is read.
    let path = dir.join(href);
    let size = match layout::metadata_in(dir, href) {
        Ok(m) => m.len(),
        Err(e) if e.is_not_found() => {
            findings.push(finding("fixity", href, None, &f.id, MISSING.to_string()));
            return None;
        }
        Err(e) => {
            unreadable(href, &f.id, &e, &mut Sink { findings, unchecked });
            return None;
        }
    };
    let described: HashMap<u64, &ListedFile> =
        f.children.iter().filter_map(|r| Some((r.begin?, r))).collect();
    let begins = described.keys().copied().filter(|&b| b < size).collect();
    let span_starts = BTreeSet::new();
    Some(Present { listed: f, href, path, size, described, begins, span_starts, revisits: false })
}

/// What reading a whole file once gives: its SHA-512 (the manifest's), the digest the METS
/// states of it when that is by another algorithm, and what its revisits name when they are
/// read ([`Present::revisits`]).
struct WholeRead {
    digests: FileDigests,
    revisits: Option<records::RevisitsRead>,
}

/// A whole file read once ([`WholeRead`]): the revisits' headers, when asked for, are read
/// from the bytes that are hashed, not by a second read; with a `tee` wanting the file, the
/// same bytes are written to it.
fn whole_file(dir: &Path, p: &Present, tee: Option<&dyn Tee>) -> io::Result<WholeRead> {
    let file = layout::open_in(dir, p.href).map_err(io::Error::other)?;
    let Some((tee, out)) = tee.and_then(|t| Some((t, t.open(p.href)?))) else {
        return digests_of(file, p);
    };
    let read = digests_of(TeeReader { inner: file, out }, p)?;
    tee.read(p.href, &read.digests.sha512);
    Ok(read)
}

/// The digests of `input` (and its revisits' packages, when asked for) in one read.
fn digests_of(input: impl io::Read, p: &Present) -> io::Result<WholeRead> {
    let also = p.listed.checked_algorithms();
    if !p.revisits {
        return Ok(WholeRead { digests: digests_read(input, &also)?, revisits: None });
    }
    let name = p.path.display().to_string();
    let (digests, revisits) = records::digests_and_revisits(input, &also, &name)?;
    Ok(WholeRead { digests, revisits: Some(revisits) })
}

/// A reader that writes every byte it reads to `out` as well.
struct TeeReader<R, W> {
    inner: R,
    out: W,
}

impl<R: io::Read, W: io::Write> io::Read for TeeReader<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// SIZE and the stated digest of a whole file against the METS: the CHECKSUM by its
/// CHECKSUMTYPE, else (another tool's METS) the PREMIS object's digest by its algorithm. Bytes
/// that differ from the `<file>` attributes but have what the file's PREMIS object states are
/// no damage: the METS contradicts itself (the validation's P5.1 says so), and the finding says
/// which statement the bytes have. A digest by an algorithm webaip does not compute is a
/// warning: those bytes are not checked.
fn file_fixity(p: &Present, d: &FileDigests, findings: &mut Vec<AuditFinding>) {
    let f = p.listed;
    let warning = |what: String| AuditFinding {
        severity: Severity::Warning,
        ..finding("fixity", p.href, None, &f.id, what)
    };
    let as_premis = |what: String, premis_agrees: bool| {
        if premis_agrees {
            warning(format!("{what}, as its PREMIS object states: the METS contradicts itself"))
        } else {
            finding("fixity", p.href, None, &f.id, what)
        }
    };
    let said_before = findings.len();
    if let Some(s) = f.size
        && s != d.size
    {
        let what = format!("SIZE={s}; found {} bytes", d.size);
        findings.push(as_premis(what, f.premis_size == Some(d.size)));
    }
    let premis_agrees = f.premis_fixity().is_some_and(|(a, v)| d.by(a) == Some(v));
    match f.stated_fixity() {
        None => {}
        Some(Err(name)) => findings.push(warning(format!(
            "its digest is by algorithm {name}, which webaip does not compute: not checked"
        ))),
        Some(Ok(stated)) => {
            let found = d.by(stated.algorithm).unwrap_or_default();
            if found != stated.value {
                let (a, v) = (stated.algorithm.mets_name(), stated.value);
                findings.push(match stated.source {
                    FixitySource::Checksum => {
                        as_premis(format!("CHECKSUM {v} ({a}); found {found}"), premis_agrees)
                    }
                    FixitySource::Premis => finding(
                        "fixity",
                        p.href,
                        None,
                        &f.id,
                        format!("PREMIS messageDigest {v} ({a}); found {found}"),
                    ),
                });
            }
        }
    }
    // A further PREMIS fixity (the SHA-256 webaip states of a content container), checked in
    // the same read, is said when the file's own digest and size said nothing.
    if findings.len() == said_before
        && let Some(more) = f.more_damage(d)
    {
        let what =
            format!("PREMIS messageDigest {} ({}); found {}", more.stated, more.what, more.found);
        findings.push(finding("fixity", p.href, None, &f.id, what));
    }
}

/// What the walks over one container checked.
#[derive(Debug, Default, PartialEq, Eq)]
struct WalkTally {
    /// Described records checked.
    described: u64,
    /// Bytestreams checked.
    bytestreams: u64,
    /// Records read.
    records: u64,
    /// WARC digests verified.
    digests: u64,
    /// The packages its revisits say hold their originals, by OBJID.
    referred: BTreeSet<String>,
}

/// The walks over one container put together: each record once, every span read, and the
/// first reason reading stopped at each place.
struct MergedWalks {
    seen: BTreeMap<(u64, u64), records::SeenRecord>,
    spans: Vec<(u64, u64)>,
    errors: BTreeMap<u64, ReadStop>,
}

impl MergedWalks {
    fn of(walks: Vec<Walk>) -> MergedWalks {
        let mut m =
            MergedWalks { seen: BTreeMap::new(), spans: Vec::new(), errors: BTreeMap::new() };
        for w in walks {
            m.seen.extend(w.records);
            m.spans.extend(w.covered);
            for (at, why) in w.errors {
                m.errors.entry(at).or_insert(why);
            }
        }
        m
    }
}

/// Puts the walks over one container together: records found once each, described records
/// matched to what was read, unread spans and the record count reported.
fn merge_walks(p: &Present, walks: Vec<Walk>, out: &mut Sink) -> WalkTally {
    let MergedWalks { seen, spans, errors } = MergedWalks::of(walks);
    let gaps = unread_gaps(spans, p.size);
    report_gaps(p, &gaps, &errors, out);
    let findings = &mut *out.findings;
    let mut tally = record_problems(p, &seen, findings);
    tally.described = check_described_ranges(p, &seen, &gaps, findings);
    tally.records = seen.len() as u64;
    tally.referred = seen.values().filter_map(|r| r.refers_to_package.clone()).collect();
    // The record count the container's PREMIS object states.
    if let Some(n) = p.listed.stated_records
        && n != tally.records
        && gaps.is_empty()
    {
        let what = format!(
            "its PREMIS object states {n} WARC records; the container holds {}",
            tally.records
        );
        findings.push(finding("records", p.href, None, &p.listed.id, what));
    }
    tally
}

/// The bytes of a file of `size` bytes that no span read. Each gap starts where reading
/// failed: a walk that failed where another read on (at a wrong BEGIN) lost nothing and
/// leaves no gap.
fn unread_gaps(mut spans: Vec<(u64, u64)>, size: u64) -> Vec<Range<u64>> {
    spans.sort();
    let mut gaps = Vec::new();
    let mut reached = 0;
    for (s, e) in spans {
        if s > reached {
            gaps.push(reached..s);
        }
        reached = reached.max(e);
    }
    if reached < size {
        gaps.push(reached..size);
    }
    gaps
}

/// A finding for each unread gap, with why reading stopped there; a gap this machine or the
/// medium left unread ([`UnreadRun`]) is not checked instead, never damage.
fn report_gaps(p: &Present, gaps: &[Range<u64>], errors: &BTreeMap<u64, ReadStop>, out: &mut Sink) {
    let mut run: Option<UnreadRun> = None;
    for g in gaps {
        let stop = errors.range(g.clone()).next();
        if let Some(cause) = stop.and_then(|(_, w)| layout::not_read_cause(w)) {
            match run.as_mut() {
                Some(r) if r.bytes.end == g.start => r.bytes.end = g.end,
                _ => {
                    out.unchecked.extend(run.take().map(|r| r.unchecked(p.href)));
                    let at = stop.map_or(g.start, |(&at, _)| at);
                    let cause = layout::describe_io(cause);
                    run = Some(UnreadRun { bytes: g.clone(), at, cause });
                }
            }
            continue;
        }
        out.unchecked.extend(run.take().map(|r| r.unchecked(p.href)));
        let why = stop.map(|(_, w)| w.to_string()).unwrap_or_else(|| "not read".into());
        let record = p.described.get(&g.start);
        out.findings.push(finding(
            if record.is_some() { "range" } else { "warc" },
            p.href,
            Some(g.start),
            record.map(|r| r.id.as_str()).unwrap_or_default(),
            format!(
                "no WARC record can be read at byte {}: {why}; bytes {}..={} are not checked",
                g.start,
                g.start,
                g.end - 1
            ),
        ));
    }
    out.unchecked.extend(run.map(|r| r.unchecked(p.href)));
}

/// Bytes of a container a deep walk could not read for a cause that says nothing of them
/// (`layout::not_read_cause`: an input/output error of the medium, memory or open files
/// exhausted). A walk resumes at each record the METS places after such a fault, so adjacent
/// gaps are one run, said once.
struct UnreadRun {
    bytes: Range<u64>,
    /// Where the reading failed first.
    at: u64,
    /// The cause, in words.
    cause: String,
}

impl UnreadRun {
    fn unchecked(self, href: &str) -> Unchecked {
        let UnreadRun { bytes, at, cause } = self;
        let (first, last) = (bytes.start, bytes.end - 1);
        let why = format!("bytes {first}..={last}: reading failed at byte {at}: {cause}");
        not_read(href, "", &why)
    }
}

/// The problems of every record read, and a warning when records share gzip members;
/// returns the bytestreams and digests checked.
fn record_problems(
    p: &Present,
    seen: &BTreeMap<(u64, u64), records::SeenRecord>,
    findings: &mut Vec<AuditFinding>,
) -> WalkTally {
    let mut tally = WalkTally::default();
    let mut shared_members = 0u64;
    for (&(at, _), r) in seen {
        tally.bytestreams += r.bytestreams;
        tally.digests += r.digests;
        shared_members += u64::from(!r.member_ended);
        findings.extend(r.problems.iter().map(|pr| place(p.href, at, pr.clone())));
    }
    if shared_members > 0 {
        let what = format!("{shared_members} record(s) share a gzip member with another record");
        let f = finding("P6.1", p.href, None, &p.listed.id, what);
        findings.push(AuditFinding { severity: Severity::Warning, ..f });
    }
    tally
}

/// Described records against what was read: each must start at its BEGIN and its gzip member
/// end at its END. Returns how many were checked.
fn check_described_ranges(
    p: &Present,
    seen: &BTreeMap<(u64, u64), records::SeenRecord>,
    gaps: &[Range<u64>],
    findings: &mut Vec<AuditFinding>,
) -> u64 {
    let mut checked = 0;
    for r in &p.listed.children {
        let Some(begin) = r.begin else { continue };
        checked += 1;
        // A BEGIN in an unread gap is reported with the unread bytes.
        if begin < p.size && gaps.iter().any(|g| g.contains(&begin)) {
            continue;
        }
        if let Some(message) = described_range_problem(begin, r.end, p.size, seen) {
            findings.push(finding("range", p.href, Some(begin), &r.id, message));
        }
    }
    checked
}

/// What is wrong with a described record at `begin` ending at `end`, given the records read.
fn described_range_problem(
    begin: u64,
    end: Option<u64>,
    size: u64,
    seen: &BTreeMap<(u64, u64), records::SeenRecord>,
) -> Option<String> {
    if begin >= size {
        return Some(format!("BEGIN={begin} is past the end of the file ({size} bytes)"));
    }
    let Some(s) = seen.get(&(begin, 0)) else {
        let near = seen.range(..(begin, 0)).next_back().map(|(&(o, _), _)| o);
        let hint =
            near.map(|o| format!(" (the record before it starts at {o})")).unwrap_or_default();
        return Some(format!("BEGIN={begin}: no WARC record starts there{hint}"));
    };
    if !s.member_ended {
        Some(format!("the gzip member at {begin} holds more than this one record"))
    } else if end != Some(s.end - 1) {
        let end = end.map(|e| e.to_string()).unwrap_or_else(|| "(none)".into());
        Some(format!("END={end}; the record's gzip member ends at {}", s.end - 1))
    } else {
        None
    }
}

/// Gives each finding about a METS `<file>` the line of that element (the METS reader counted
/// it while listing the files).
fn place_in_mets(files: &[ListedFile], findings: &mut [AuditFinding]) {
    fn walk<'a>(f: &'a ListedFile, out: &mut HashMap<&'a str, u64>) {
        out.entry(f.id.as_str()).or_insert(f.pos.line);
        for c in &f.children {
            walk(c, out);
        }
    }
    let mut lines = HashMap::new();
    for f in files {
        walk(f, &mut lines);
    }
    for f in findings.iter_mut() {
        if let Some(line) = f.mets_id.as_deref().and_then(|id| lines.get(id)) {
            f.mets_line = Some(*line);
        }
    }
}

/// A record problem, placed at its record's offset in its file.
fn place(file: &str, offset: u64, p: Problem) -> AuditFinding {
    AuditFinding {
        severity: p.severity,
        rule: p.rule.into(),
        file: file.into(),
        offset: Some(offset),
        mets_id: (!p.id.is_empty()).then_some(p.id),
        mets_line: None,
        message: p.message,
    }
}

fn finding(rule: &str, file: &str, offset: Option<u64>, id: &str, message: String) -> AuditFinding {
    AuditFinding {
        severity: Severity::Error,
        rule: rule.into(),
        file: file.into(),
        offset,
        mets_id: (!id.is_empty()).then(|| id.to_string()),
        mets_line: None,
        message,
    }
}

/// A METS that travelled without its files (a reference package, a METS-only copy) would give
/// one finding per file; a group none of whose files is present gets one finding instead.
fn collapse_missing_groups(files: &[ListedFile], findings: &mut Vec<AuditFinding>) {
    let mut groups: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for f in files {
        let g = groups.entry(f.group.as_str()).or_default();
        g.0 += 1;
        let missing = findings.iter().any(|x| {
            x.message == MISSING && x.mets_id.as_deref() == Some(f.id.as_str()) && !f.id.is_empty()
        });
        if missing {
            g.1 += 1;
        }
    }
    for (group, (total, missing)) in groups {
        if missing > 0 && missing == total {
            let in_group: BTreeSet<&str> =
                files.iter().filter(|f| f.group == group).map(|f| f.id.as_str()).collect();
            findings.retain(|x| {
                !(x.message == MISSING
                    && x.mets_id.as_deref().is_some_and(|i| in_group.contains(i)))
            });
            let first = files.iter().find(|f| f.group == group).and_then(|f| f.href.clone());
            findings.push(finding(
                "fixity",
                &first.unwrap_or_default(),
                None,
                "",
                format!(
                    "file group {group:?}: none of its {total} file(s) is in the package (this is the first)"
                ),
            ));
        }
    }
}

/// Compares `manifest-sha512.txt` with the files: every line's file exists with that digest,
/// and every listed file has a line. A line is only followed to a file the METS lists (or the
/// METS itself): a name that leaves the package, or that no `<file>` lists, is a finding and is
/// never opened. A file whose bytes this machine or the medium could not give (listed
/// unchecked as `not_read` already, or the manifest or the METS itself) is not checked, never
/// said to be damaged.
fn check_manifest(names: &PackageNames, hashes: &mut BTreeMap<String, String>, out: &mut Sink) {
    let at = |offset: Option<u64>, what: String| finding("manifest", MANIFEST, offset, "", what);
    let file = match layout::open_in(names.dir, MANIFEST) {
        Ok(f) => f,
        Err(e) => return unreadable(MANIFEST, "", &e, out),
    };
    let unread: BTreeSet<String> = (out.unchecked.iter())
        .filter(|u| u.kind == UncheckedKind::NotRead)
        .map(|u| u.file.clone())
        .collect();
    let mut seen = BTreeSet::new();
    for line in layout::ManifestReader::new(io::BufReader::new(file)) {
        match line {
            Ok(Ok(l)) => {
                let here = Some(l.offset);
                match manifest_line_problem(names, l, &mut seen, (hashes, &unread)) {
                    Ok(None) => {}
                    Ok(Some(what)) => out.findings.push(at(here, what)),
                    Err(e) => out.unchecked.push(not_read(names.mets, "", &e)),
                }
            }
            Ok(Err(bad)) => {
                let what = format!("line {:?} {}", bad.text, bad.reason);
                out.findings.push(at(Some(bad.offset), what));
            }
            Err(e) => {
                unreadable(MANIFEST, "", &e, out);
                break;
            }
        }
    }
    let findings = &mut *out.findings;
    for name in names.listed.iter().chain(std::iter::once(&names.mets.to_string())) {
        if !seen.contains(name) {
            findings.push(at(None, format!("{name} has no line in the manifest")));
        }
    }
}

/// What is wrong with one manifest line, if anything: its name must stay inside, be listed
/// (or be the METS) and have no earlier line, and its file must have the line's digest (then
/// recorded in `hashes`); the line of a file `not_read` is not checked. `Err` when the METS is
/// the file and its bytes could not be read here (`layout::not_read_cause`): not checked.
fn manifest_line_problem(
    names: &PackageNames,
    line: layout::ManifestLine,
    seen: &mut BTreeSet<String>,
    (hashes, not_read): (&mut BTreeMap<String, String>, &BTreeSet<String>),
) -> io::Result<Option<String>> {
    let name = match line.confined {
        Ok(name) => name,
        Err(reason) => {
            let named = line.name;
            return Ok(Some(format!(
                "names {named:?}, which {reason}: it leaves the package; not opened"
            )));
        }
    };
    if name != names.mets && !names.listed.contains(&name) {
        return Ok(Some(format!("names {name:?}, which no <file> of the METS lists; not opened")));
    }
    if !seen.insert(name.clone()) {
        return Ok(Some(format!("{name} has more than one line")));
    }
    let found = match hashes.get(&name) {
        Some(h) => Some(h.clone()),
        None => mets_sha512(names, &name)?,
    };
    Ok(match found {
        None if not_read.contains(&name) => None,
        None => {
            let absent = layout::metadata_in(names.dir, &name).is_err_and(|e| e.is_not_found());
            let what = if absent { "not in the package" } else { "cannot be read" };
            Some(format!("{name} is in the manifest but {what}"))
        }
        Some(h) if h != line.sha512 => {
            Some(format!("{name}: manifest says {}; the file's SHA-512 is {h}", line.sha512))
        }
        Some(h) => {
            hashes.insert(name, h);
            None
        }
    })
}

/// The SHA-512 of the METS when `name` is it: the METS is hashed here; a listed file whose
/// digest the reading did not record is missing or unreadable, which its own finding explains.
/// `Err` when the METS could not be read and that says nothing of its bytes
/// (`layout::not_read_cause`).
fn mets_sha512(names: &PackageNames, name: &str) -> io::Result<Option<String>> {
    if name != names.mets {
        return Ok(None);
    }
    let read = layout::open_in(names.dir, name).map_err(io::Error::other).and_then(sha512_read);
    match read {
        Ok((_, h)) => Ok(Some(h)),
        Err(e) if layout::not_read_cause(&e).is_some() => Err(e),
        Err(_) => Ok(None),
    }
}

/// Reports files in the package that neither the METS nor the package layout accounts for:
/// errors under a profile the package claims, warnings under one it does not (its folder need
/// not be a package of webaip's layout). Unless the folder is the package, another METS
/// document beside this one is a package of its own (a folder of SIP METS documents), noted
/// and not read further.
fn check_unlisted(names: &PackageNames, rules: &FileRules, findings: &mut Vec<AuditFinding>) {
    for entry in walkdir::WalkDir::new(names.dir).sort_by_file_name() {
        match entry {
            // The package folder itself: the operator may name it through a link.
            Ok(e) if e.depth() == 0 => {}
            Ok(e) => findings.extend(unlisted_entry(names, rules, &e)),
            Err(e) => {
                let what = format!("cannot list the package: {e}");
                findings.push(finding("unlisted", "", None, "", what));
            }
        }
    }
}

/// The finding about one entry of the package's folder, if it needs one: not a regular file,
/// another METS document, or a file nothing lists.
fn unlisted_entry(
    names: &PackageNames,
    rules: &FileRules,
    entry: &walkdir::DirEntry,
) -> Option<AuditFinding> {
    let kind = entry.file_type();
    if kind.is_dir() {
        return None;
    }
    let rel = entry.path().strip_prefix(names.dir).ok()?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    if !kind.is_file() {
        // walkdir does not follow links; a link, FIFO or device in a package makes it
        // depend on what lies outside it (or block a reader), listed or not.
        let what = match entry.path().symlink_metadata() {
            Ok(m) => layout::kind_of(&m),
            Err(_) => "not a regular file",
        };
        let what = format!("is {what}: a package holds regular files only; not followed");
        return Some(finding("self-contained", &rel, None, "", what));
    }
    if rel == names.mets || rel == MANIFEST || names.listed.contains(&rel) {
        return None;
    }
    if !rules.folder_is_package() && !rel.contains('/') && is_mets_document(names.dir, &rel) {
        let what = "another METS document beside this one: a package of its own, not part of this one; not checked";
        let f = finding("unlisted", &rel, None, "", what.into());
        return Some(AuditFinding { severity: Severity::Info, ..f });
    }
    let severity = if rules.required { Severity::Error } else { Severity::Warning };
    let what = "in the package, but no <file> of the METS lists it".into();
    Some(AuditFinding { severity, ..finding("unlisted", &rel, None, "", what) })
}

/// True when the top-level file `name` is a METS document: its root element is `mets:mets`.
/// Only names ending in `.xml` are opened, and only up to their first element.
fn is_mets_document(dir: &Path, name: &str) -> bool {
    use crate::mets::reader::{Event, MetsReader, NS_METS};
    if !name.to_ascii_lowercase().ends_with(".xml") {
        return false;
    }
    let Ok(file) = layout::open_in(dir, name) else { return false };
    // The prolog and root start tag of a METS fit in far less; a larger read is no METS root.
    let mut reader = MetsReader::lenient(io::BufReader::new(io::Read::take(file, 1 << 20)));
    loop {
        match reader.next() {
            Ok(Some(Event::Start(e, _) | Event::Empty(e, _))) => return e.is(NS_METS, "mets"),
            Ok(Some(_)) => continue,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use records::SeenRecord;

    fn sha512(bytes: &[u8]) -> String {
        sha512_read(bytes).unwrap().1
    }

    fn seen(end: u64, member_ended: bool) -> SeenRecord {
        let refers_to_package = None;
        SeenRecord {
            end,
            member_ended,
            problems: Vec::new(),
            bytestreams: 1,
            digests: 2,
            refers_to_package,
        }
    }

    fn described(id: &str, begin: u64, end: u64) -> ListedFile {
        ListedFile { id: id.into(), begin: Some(begin), end: Some(end), ..Default::default() }
    }

    #[test]
    fn unread_gaps_are_the_bytes_no_span_reached() {
        let spans = vec![(30, 40), (0, 10), (5, 20)];
        assert_eq!(unread_gaps(spans, 50), vec![20..30, 40..50]);
        assert_eq!(unread_gaps(vec![(0, 30), (10, 50)], 50), Vec::<Range<u64>>::new());
        assert_eq!(unread_gaps(Vec::new(), 7), vec![0..7]);
    }

    #[test]
    fn merged_walks_count_each_record_once_and_check_every_described_range() {
        let container = ListedFile {
            id: "F1".into(),
            stated_records: Some(3),
            children: vec![
                described("R0", 0, 99),    // as read
                described("R1", 100, 150), // its member ends at 199
                described("R2", 250, 260), // no record starts there
                described("R3", 320, 330), // in the unread gap
                described("R4", 900, 910), // past the end
            ],
            ..Default::default()
        };
        let by_begin: HashMap<u64, &ListedFile> =
            container.children.iter().map(|r| (r.begin.unwrap(), r)).collect();
        let p = Present {
            listed: &container,
            href: "content/a.warc.gz",
            path: PathBuf::from("unused"),
            size: 400,
            described: by_begin,
            begins: BTreeSet::new(),
            span_starts: BTreeSet::new(),
            revisits: false,
        };
        // Two walks that both read the first record: it is counted once.
        let mut first = Walk::default();
        first.records.insert((0, 0), seen(100, true));
        first.covered.push((0, 100));
        let mut second = Walk::default();
        second.records.insert((0, 0), seen(100, true));
        second.records.insert((100, 0), seen(200, true));
        second.records.insert((200, 0), seen(300, false));
        second.covered.push((0, 300));
        second.errors.push((300, ReadStop::Open(io::Error::other("bad header"))));
        let (mut findings, mut unchecked) = (Vec::new(), Vec::new());
        let out = &mut Sink { findings: &mut findings, unchecked: &mut unchecked };
        let tally = merge_walks(&p, vec![first, second], out);
        assert!(unchecked.is_empty());
        let want = WalkTally {
            described: 5,
            bytestreams: 3,
            records: 3,
            digests: 6,
            ..Default::default()
        };
        assert_eq!(tally, want);
        let said: Vec<(&str, Option<u64>, &str)> =
            findings.iter().map(|f| (f.rule.as_str(), f.offset, f.message.as_str())).collect();
        assert_eq!(
            said,
            vec![
                (
                    "warc",
                    Some(300),
                    "no WARC record can be read at byte 300: cannot read: bad header; bytes 300..=399 are not checked"
                ),
                ("P6.1", None, "1 record(s) share a gzip member with another record"),
                ("range", Some(100), "END=150; the record's gzip member ends at 199"),
                (
                    "range",
                    Some(250),
                    "BEGIN=250: no WARC record starts there (the record before it starts at 200)"
                ),
                ("range", Some(900), "BEGIN=900 is past the end of the file (400 bytes)"),
            ]
        );
        // The stated count is not compared while bytes went unread.
        assert!(findings.iter().all(|f| f.rule != "records"));
    }

    #[test]
    fn a_stated_record_count_is_compared_when_every_byte_was_read() {
        let container =
            ListedFile { id: "F1".into(), stated_records: Some(2), ..Default::default() };
        let p = Present {
            listed: &container,
            href: "a.warc",
            path: PathBuf::new(),
            size: 100,
            described: HashMap::new(),
            begins: BTreeSet::new(),
            span_starts: BTreeSet::new(),
            revisits: false,
        };
        let mut walk = Walk::default();
        walk.records.insert((0, 0), seen(100, true));
        walk.covered.push((0, 100));
        let (mut findings, mut unchecked) = (Vec::new(), Vec::new());
        merge_walks(
            &p,
            vec![walk],
            &mut Sink { findings: &mut findings, unchecked: &mut unchecked },
        );
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].rule, "records");
        assert_eq!(findings[0].mets_id.as_deref(), Some("F1"));
    }

    /// Walks stopped by the medium (EIO) or the machine (ENOMEM), resumed at each next record
    /// and stopped again: the bytes not read are one run, not checked (naming the file, where
    /// reading failed and why), never a finding; a walk stopped by the bytes themselves after
    /// it is still one.
    #[test]
    fn bytes_the_medium_or_the_machine_did_not_give_are_not_checked_not_damaged() {
        let container = ListedFile { id: "F1".into(), ..Default::default() };
        let p = Present {
            listed: &container,
            href: "content/a.warc.gz",
            path: PathBuf::new(),
            size: 1000,
            described: HashMap::new(),
            begins: BTreeSet::new(),
            span_starts: BTreeSet::new(),
            revisits: false,
        };
        let os = |errno: i32| ReadStop::Open(io::Error::from_raw_os_error(errno));
        let mut walk = Walk::default();
        walk.records.insert((0, 0), seen(100, true));
        walk.covered.extend([(0, 100), (200, 200), (300, 300), (500, 700)]);
        walk.errors.extend([(100, os(libc::EIO)), (200, os(libc::EIO)), (300, os(libc::ENOMEM))]);
        let damaged = ReadStop::Open(io::Error::new(io::ErrorKind::InvalidData, "bad gzip"));
        walk.errors.push((700, damaged));
        let (mut findings, mut unchecked) = (Vec::new(), Vec::new());
        merge_walks(
            &p,
            vec![walk],
            &mut Sink { findings: &mut findings, unchecked: &mut unchecked },
        );
        let reasons: Vec<(&str, UncheckedKind, &str)> =
            unchecked.iter().map(|u| (u.file.as_str(), u.kind, u.reason.as_str())).collect();
        assert_eq!(reasons.len(), 1, "{reasons:?}");
        assert_eq!(reasons[0].0, "content/a.warc.gz");
        assert_eq!(reasons[0].1, UncheckedKind::NotRead);
        let why = "bytes 100..=499: reading failed at byte 100: input/output error";
        assert!(reasons[0].2.contains(why), "{reasons:?}");
        let said: Vec<(&str, Option<u64>)> =
            findings.iter().map(|f| (f.rule.as_str(), f.offset)).collect();
        assert_eq!(said, vec![("warc", Some(700))], "{findings:?}");
    }

    /// A package folder holding `files`, and a manifest of `manifest`'s text.
    fn package(files: &[(&str, &[u8])], manifest: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        std::fs::write(dir.path().join(MANIFEST), manifest).unwrap();
        dir
    }

    #[test]
    fn the_manifest_is_checked_line_by_line_and_names_outside_are_never_opened() {
        let (warc, mets) = (b"WARC bytes".as_slice(), b"<mets/>".as_slice());
        let a = sha512(warc);
        let manifest = [
            format!("{a}  content/a.warc"),
            format!("{}  METS.xml", "0".repeat(128)),
            format!("{a}  ../outside.txt"),
            format!("{a}  other.txt"),
            format!("{a}  content/a.warc"),
            format!("{a}  content/gone.warc"),
            "nonsense".to_string(),
        ]
        .join("\n");
        let dir = package(
            &[("content/a.warc", warc), ("METS.xml", mets), ("other.txt", b"x")],
            &manifest,
        );
        let listed: BTreeSet<String> =
            ["content/a.warc", "content/gone.warc", "content/b.warc"].map(String::from).into();
        let names = PackageNames { dir: dir.path(), mets: METS, listed: &listed };
        let mut hashes = BTreeMap::from([("content/a.warc".to_string(), a.clone())]);
        let (mut findings, mut unchecked) = (Vec::new(), Vec::new());
        check_manifest(
            &names,
            &mut hashes,
            &mut Sink { findings: &mut findings, unchecked: &mut unchecked },
        );
        let said: Vec<String> = findings
            .iter()
            .map(|f| format!("{:?} {}", f.offset, f.message.replace(&a, "A")))
            .collect();
        let m = sha512(mets);
        let mets_line = 129 + "content/a.warc".len() as u64 + 2;
        let expected = [
            format!(
                "Some({mets_line}) METS.xml: manifest says {}; the file's SHA-512 is {m}",
                "0".repeat(128)
            ),
            "names \"../outside.txt\", which".to_string(),
            "names \"other.txt\", which no <file> of the METS lists; not opened".to_string(),
            "content/a.warc has more than one line".to_string(),
            "content/gone.warc is in the manifest but not in the package".to_string(),
            "line \"nonsense\"".to_string(),
            "None content/b.warc has no line in the manifest".to_string(),
        ];
        assert_eq!(said.len(), expected.len(), "{said:#?}");
        for (s, e) in said.iter().zip(&expected) {
            assert!(s.contains(e.as_str()), "{s:?} does not say {e:?}");
        }
        assert!(findings.iter().all(|f| f.rule == "manifest" && f.file == MANIFEST));
        // Only the line whose digest the file has is recorded.
        assert_eq!(hashes.len(), 1);
    }

    #[test]
    fn a_missing_manifest_is_damage_only_under_a_claimed_profile_that_asks_for_one() {
        let profile = crate::profile::Profile::default_profile();
        assert!(profile.rules.manifest);
        let claimed = FileRules { profile: profile.clone(), required: true };
        assert_eq!(claimed.manifest_not_needed(), None);
        assert!(claimed.folder_is_package());
        let advice = FileRules { profile, required: false };
        assert!(advice.manifest_not_needed().unwrap().contains("does not claim profile"));
        assert!(!advice.folder_is_package());
    }

    #[test]
    fn unlisted_files_links_and_other_mets_documents_are_reported_by_the_rules() {
        let other = br#"<?xml version="1.0"?><mets:mets xmlns:mets="http://www.loc.gov/METS/"/>"#;
        let dir = package(
            &[
                ("METS.xml", b"<m/>"),
                ("content/a.warc", b"a"),
                ("stray.bin", b"s"),
                ("sip2.xml", other),
            ],
            "",
        );
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let listed: BTreeSet<String> = ["content/a.warc".to_string()].into();
        let names = PackageNames { dir: dir.path(), mets: METS, listed: &listed };
        let profile = crate::profile::Profile::default_profile();
        let run = |required| {
            let mut findings = Vec::new();
            check_unlisted(
                &names,
                &FileRules { profile: profile.clone(), required },
                &mut findings,
            );
            findings.into_iter().map(|f| (f.file, f.rule, f.severity)).collect::<Vec<_>>()
        };
        let s = |x: &str| x.to_string();
        assert_eq!(
            run(false),
            vec![
                (s("link"), s("self-contained"), Severity::Error),
                (s("sip2.xml"), s("unlisted"), Severity::Info),
                (s("stray.bin"), s("unlisted"), Severity::Warning),
            ]
        );
        assert_eq!(
            run(true),
            vec![
                (s("link"), s("self-contained"), Severity::Error),
                (s("sip2.xml"), s("unlisted"), Severity::Error),
                (s("stray.bin"), s("unlisted"), Severity::Error),
            ]
        );
    }
}
