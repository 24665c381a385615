//! From sSIP to AIP (P8): `webaip ingest`.
//!
//! A submission is audited deeply first (every file's SHA-512, every record's WARC digests,
//! its METS against the schemas and its profile); a damaged or inconsistent one is refused and
//! nothing is written. Its described bytestreams are then identified (PRONOM, `stages::
//! identify`), and the AIP is assembled out of sight (`package::staging`): the containers and
//! logs hard-linked where the file system allows, else copied and verified; the METS edited
//! (`aip_mets`): `TYPE="AIP"`, a new OBJID, the submission's OBJID kept as an `altRecordID`
//! and as a PREMIS relationship, four events (ingestion, fixity check, format identification,
//! validation) with their agents, and each described bytestream's PRONOM result; every other
//! byte of the submission's METS is kept. The AIP's METS is validated before the AIP is moved
//! into place. Ingesting a submission whose AIP is already in `--out` says so and writes
//! nothing.
//!
//! A submission another tool wrote usually has no manifest: its files are then those its METS
//! fileSec names inside it (`files`), and those it names by URL stay where they are, the AIP's
//! METS referring to them as the submission did and the report listing them
//! (`AuditReport::admissible`, the rule `store put` follows too, says which audit verdicts let
//! such a submission in).

pub(crate) mod aip_mets;
pub mod carried;
mod files;
mod identify;
mod relist;

use std::collections::HashSet;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::audit::{AuditError, AuditOptions, AuditProgress, Verdict, audit_package};
use crate::ids::Ids;
use crate::layout;
use crate::mets::ValidateOptions;
use crate::mets::reader::MetsError;
use crate::mets::validate::ValidateError;
use crate::mets::xml::XmlOut;
use crate::model::{Agent, Event};
use crate::package::PackageError;
use crate::package::staging::Staging;
use crate::stages::identify::{Identifier, IdentifyError, Tally};
use aip_mets::{Edit, Sites, Wanted};

/// A LoC event type: its term and URI.
struct EventType {
    term: &'static str,
    uri: &'static str,
}

/// LoC event types of the events an AIP gets (P8.1).
const INGESTION: EventType =
    EventType { term: "ingestion", uri: "http://id.loc.gov/vocabulary/preservation/eventType/ing" };
const FIXITY: EventType = EventType {
    term: "fixity check",
    uri: "http://id.loc.gov/vocabulary/preservation/eventType/fix",
};
const VALIDATION: EventType = EventType {
    term: "validation",
    uri: "http://id.loc.gov/vocabulary/preservation/eventType/val",
};
/// The identifier of webaip as the agent of ingestion, fixity check and validation.
const AGENT_ID: &str = "webaip-ingest";
/// The XML Schema instance namespace (`xsi:type` of PREMIS objects).
const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";
/// The PREMIS identifier type of a package's OBJID.
const OBJID_TYPE: &str = "METS OBJID";

/// What to ingest with.
#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    /// The directory the AIP is made in (as `<out>/<the submission's folder name>`).
    pub out: PathBuf,
    /// Schemas and profile for the submission's audit and the AIP's check.
    pub validate: ValidateOptions,
    /// Identifiers derived from the submission's OBJID and a fixed clock: the same
    /// submission gives the same AIP, byte for byte.
    pub deterministic: bool,
    /// List the records anew: every record (`Full`), or only those described or pointed at
    /// (`Minimal`); `None` keeps the submission's listing.
    pub mode: Option<crate::model::SerializationMode>,
}

/// What ingest did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The AIP was made.
    Created,
    /// The AIP of this submission was already there: nothing was written.
    Exists,
}

/// What one submission became.
#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    /// The submission's directory.
    pub submission: PathBuf,
    /// Its OBJID.
    pub submission_objid: Option<String>,
    /// The AIP's directory.
    pub aip: PathBuf,
    /// The AIP's OBJID.
    pub objid: String,
    /// Made, or already there.
    pub outcome: Outcome,
    /// Files of the AIP hard-linked to the submission's.
    pub linked: u64,
    /// Files copied (another file system) and verified.
    pub copied: u64,
    /// Bytes of the submission's files (its METS and manifest included).
    pub submission_bytes: u64,
    /// Bytes the AIP adds: its METS and manifest (the other files are the submission's).
    pub added_bytes: u64,
    /// Records the deep audit read.
    pub records_read: u64,
    /// WARC digests the deep audit verified.
    pub warc_digests_checked: u64,
    /// What PRONOM identification found in the described bytestreams.
    pub identification: IdentificationCounts,
    /// Records the AIP's fileSec lists, when `--mode` listed them anew.
    pub records_listed: Option<u64>,
    /// The submission's package-level sections found in the AIP's METS, field by field (read
    /// typed in both), when they could be read.
    pub carried_over: Option<carried::CarriedOver>,
    /// What the AIP could not carry over from the submission, and why.
    pub not_carried_over: Vec<String>,
    /// Files carried into the AIP whose SHA-512 neither a manifest nor their `<file>`'s
    /// CHECKSUM states (a submission without a manifest): their bytes are taken as they are,
    /// and the AIP's manifest records them from then on. A digest of another algorithm in their
    /// PREMIS object (Archivematica's SHA-256) is not checked against the bytes.
    pub not_verified: Vec<String>,
    /// When the AIP was made.
    pub created: DateTime<Utc>,
    /// What putting the AIP to the replicas did (`--store`).
    pub stored: Option<crate::store::PutReport>,
}

/// Counts of identification results.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IdentificationCounts {
    /// Described bytestreams identified.
    pub payloads: u64,
    /// Those no signature matched.
    pub unidentified: u64,
    /// Those several formats matched (every one is recorded).
    pub several: u64,
    /// Those whose bytes contradict the type the harvest declared.
    pub contradicted: u64,
    /// Those whose bytes do not confirm the type the harvest declared (nor rule it out).
    pub not_confirmed: u64,
    /// Bytestreams whose object already carried a PRONOM key: kept as the submission has it.
    pub already_identified: u64,
    /// Bytestreams by PUID (each match counted).
    pub by_puid: std::collections::BTreeMap<String, u64>,
}

/// Why a submission was not ingested.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The submission could not be audited.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The audit found it damaged or contradicting itself.
    #[error("{}: refused: the audit finds it {verdict}: {first}{}", path.display(), if *more > 0 { format!(" (and {more} more)") } else { String::new() })]
    Refused {
        /// The submission.
        path: PathBuf,
        /// The audit's verdict.
        verdict: Verdict,
        /// The first findings (at most three), in words.
        first: String,
        /// How many more there are.
        more: usize,
    },
    /// The path is no package directory with a METS.
    #[error("{}: not a submission package: no {} ({why})", path.display(), layout::METS)]
    NotASubmission {
        /// The path given.
        path: PathBuf,
        /// What was found.
        why: String,
    },
    /// The submission is already an AIP.
    #[error("{}: refused: it is already an AIP (TYPE=\"AIP\")", path.display())]
    AlreadyAip {
        /// The submission.
        path: PathBuf,
    },
    /// Not a package at all (a PDF, a WARC, a harvest): what it is instead.
    #[error(transparent)]
    NotAPackage(#[from] crate::sources::recognise::NotAPackage),
    /// `--out` lies inside the submission (the AIP would change what it is made of), or the
    /// submission inside `--out`.
    #[error(transparent)]
    Nested(#[from] layout::NestingError),
    /// Something else is where the AIP would go.
    #[error("{}: exists and is not the AIP of {}", path.display(), submission.display())]
    OtherExists {
        /// Where the AIP would go.
        path: PathBuf,
        /// The submission.
        submission: PathBuf,
    },
    /// The submission's METS could not be read for editing.
    #[error("{}: {source}", path.display())]
    Mets {
        /// The METS document.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: MetsError,
    },
    /// A payload could not be read for identification.
    #[error("{}: at byte {offset}: {}", path.display(), layout::describe_io(source))]
    Payload {
        /// The container.
        path: PathBuf,
        /// Where its record starts.
        offset: u64,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file of the submission changed after the audit read it.
    #[error("{}: changed while it was ingested ({what}): not taken into the AIP", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
        /// What differs.
        what: String,
    },
    /// A section of the submission is not in the AIP's METS (a fault of webaip's edits:
    /// nothing is moved into place).
    #[error("{}: the AIP's METS lacks {what}", path.display())]
    NotCarriedOver {
        /// The AIP's METS, in the staging directory.
        path: PathBuf,
        /// What it lacks.
        what: String,
    },
    /// A temporary file (in TMPDIR) could not be made or written: a fault of this machine,
    /// never of the submission.
    #[error(
        "temporary file {} (TMPDIR): {}: the submission is not at fault",
        path.display(),
        layout::describe_io(source)
    )]
    Temporary {
        /// The temporary file (or folder, when none could be made).
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be read or written.
    #[error("{}: {}", path.display(), layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A manifest line names a file outside the package, or a file is not a regular file.
    #[error(transparent)]
    Confine(#[from] layout::ConfineError),
    /// A `<file>` of a submission without a manifest names something the AIP cannot take: a
    /// name that leaves the submission, a link, a FIFO or another non-regular file.
    #[error("{}: refused: <file> {id:?} does not name a regular file inside the submission: {source}", mets.display())]
    Location {
        /// The submission's METS.
        mets: PathBuf,
        /// The `<file>` ID.
        id: String,
        /// What the name or the file is.
        #[source]
        source: layout::ConfineError,
    },
    /// The AIP's METS fails its own check (a fault of webaip: nothing is moved into place).
    #[error("{}: the AIP's METS is not valid: {errors} error(s), the first{}: [{rule}] {message}", path.display(), line.map(|l| format!(" at line {l}")).unwrap_or_default())]
    AipInvalid {
        /// The AIP's METS, in the staging directory.
        path: PathBuf,
        /// How many errors.
        errors: usize,
        /// The first error's line.
        line: Option<u64>,
        /// Its rule.
        rule: String,
        /// Its message.
        message: String,
    },
    /// Building out of sight failed (the staging directory, the final rename).
    #[error(transparent)]
    Staging(#[from] PackageError),
    /// The AIP could not be put to the replicas (it stays in `--out`).
    #[error("the AIP was made, but not stored: {0}")]
    Store(#[from] crate::store::StoreError),
    /// Identification cannot run.
    #[error(transparent)]
    Identify(#[from] IdentifyError),
    /// The AIP's METS could not be validated.
    #[error(transparent)]
    Validate(#[from] ValidateError),
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> IngestError + '_ {
    move |source| IngestError::Io { path: path.to_path_buf(), source }
}

/// Makes the AIP of the submission in `ssip` (its directory) in `opts.out`; `progress` hears
/// of the bytes the audit plans and reads.
pub fn ingest(
    ssip: &Path,
    opts: &IngestOptions,
    store: Option<&crate::store::Store>,
    progress: &(dyn Fn(AuditProgress) + Sync),
) -> Result<IngestReport, IngestError> {
    let mut report = make_aip(ssip, opts, progress)?;
    if let Some(store) = store {
        // The AIP just made is audited as before it could be put: ingest vouches for its own
        // output record by record, not only for its bytes.
        let check =
            AuditOptions { validate: opts.validate.clone(), deep: false, ..Default::default() };
        let put = crate::store::PutOptions { check, audit: true };
        report.stored = Some(store.put(&report.aip, &put, &|_| {})?);
    }
    Ok(report)
}

/// How the AIP names its submission: by its OBJID, else its METS's SHA-512.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SubmissionRef {
    /// The `altRecordID` TYPE and PREMIS identifier type ([`aip_mets::SSIP_OBJID`] or
    /// [`aip_mets::SSIP_METS_SHA512`]).
    kind: &'static str,
    /// The OBJID, or the digest.
    value: String,
    /// The SHA-512 of the submission's METS, recorded beside its OBJID too: a store takes an
    /// AIP as a version of the submission's object only when it names the stored submission
    /// by this digest (an OBJID alone can name any package).
    mets_sha512: String,
}

impl SubmissionRef {
    /// As the METS writers take an identifier: (type, value).
    fn pair(&self) -> (&'static str, &str) {
        (self.kind, &self.value)
    }

    /// Every `altRecordID` the AIP's metsHdr gains: the reference, and the METS's digest when
    /// the reference is the OBJID.
    fn alt_record_ids(&self) -> Vec<(&'static str, &str)> {
        let mut out = vec![self.pair()];
        if self.kind == aip_mets::SSIP_OBJID {
            out.push((aip_mets::SSIP_METS_SHA512, &self.mets_sha512));
        }
        out
    }
}

/// A submission about to be ingested: its METS, what a first scan of it found, where its AIP
/// goes and how the AIP names it.
struct Submission<'a> {
    dir: &'a Path,
    mets: PathBuf,
    sites: Sites,
    target: PathBuf,
    reference: SubmissionRef,
}

impl Submission<'_> {
    /// The staging directory of the AIP; `None` when the AIP is there already.
    fn staging(&self) -> Result<Option<Staging>, IngestError> {
        match Staging::new(&self.target, false) {
            Ok(s) => Ok(Some(s)),
            Err(PackageError::Exists(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// What another run of the same submission made at the target while this one worked.
    fn made_meanwhile(&self) -> Result<IngestReport, IngestError> {
        made_meanwhile(&self.target, self.dir, &self.reference)
    }
}

/// The submission in `ssip`, refused when it is no submission, already an AIP, or would hold
/// its own AIP.
fn submission<'a>(ssip: &'a Path, opts: &IngestOptions) -> Result<Submission<'a>, IngestError> {
    crate::sources::recognise::package_at(ssip, crate::sources::recognise::Takes::Folder)?;
    let mets = ssip.join(layout::METS);
    if let Err(e) = layout::metadata_in(ssip, layout::METS) {
        return Err(IngestError::NotASubmission { path: ssip.to_path_buf(), why: e.to_string() });
    }
    layout::refuse_output_in_input(ssip, &opts.out)?;
    let none = HashSet::new();
    let sites =
        aip_mets::scan(&mets, &Wanted { sections: &none, package_amd: None, records: false })
            .map_err(|source| IngestError::Mets { path: mets.clone(), source })?;
    if sites.package_type.as_deref() == Some("AIP") {
        return Err(IngestError::AlreadyAip { path: ssip.to_path_buf() });
    }
    let name = ssip
        .canonicalize()
        .map_err(io_err(ssip))?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "aip".into());
    let target = opts.out.join(&name);
    let reference = submission_ref(ssip, &sites)?;
    Ok(Submission { dir: ssip, mets, sites, target, reference })
}

/// The AIP, made or found.
fn make_aip(
    ssip: &Path,
    opts: &IngestOptions,
    progress: &(dyn Fn(AuditProgress) + Sync),
) -> Result<IngestReport, IngestError> {
    let sub = submission(ssip, opts)?;
    if let Some(existing) = existing_aip(&sub.target, ssip, &sub.reference)? {
        return Ok(existing);
    }
    let admitted = admit(ssip, opts, progress)?;
    let identifier = Identifier::shipped()?;
    let found = identify::described(ssip, &sub.mets, identifier)?;
    let sites = edit_sites(&sub, &found, opts)?;
    let ids = match opts.deterministic {
        true => Ids::seeded(format!("ingest/{}", sub.reference.value)),
        false => Ids::random(),
    };
    let now = ids.now();
    let objid = format!("urn:uuid:{}", ids.uuid());
    // Another run may have put its AIP there since this one looked (see the commit below).
    let Some(staging) = sub.staging()? else { return sub.made_meanwhile() };
    let placed = files::place(ssip, &staging.root, &admitted.before)?;
    let relisted = match opts.mode {
        Some(mode) => Some(relist::relist(ssip, &sub.mets, &sites, mode)?),
        None => None,
    };
    let ctx = Aip {
        ids: &ids,
        now,
        objid: &objid,
        sites: &sites,
        ssip_ref: &sub.reference,
        identifier,
        found: &found,
        relisted: relisted.as_ref().map(|r| r.1),
    };
    let relisted_edits = relisted.into_iter().flat_map(|(e, _)| e).collect();
    let written =
        write_metadata(&ctx, &sub, &admitted, &placed, relisted_edits, &staging.root, opts)?;
    let records_listed = ctx.relisted.map(|r| r.listed);
    files::verify_unchanged(ssip, &admitted.before)?;
    if crate::hooks::fail_at("before-commit") {
        // A test of what a kill leaves: a hidden partial directory, nothing that looks done.
        std::process::abort();
    }
    // Another run may have made it meanwhile (the same submission ingested twice at once):
    // its AIP stands, and this run made none.
    let Some(aip) = committed(staging)? else { return sub.made_meanwhile() };
    Ok(IngestReport {
        submission: ssip.to_path_buf(),
        submission_objid: sites.objid.clone(),
        aip,
        objid,
        outcome: Outcome::Created,
        linked: placed.linked,
        copied: placed.copied,
        submission_bytes: placed.bytes + admitted.before.mets_and_manifest_bytes,
        added_bytes: written.added,
        records_read: admitted.audit.records_read,
        warc_digests_checked: admitted.audit.warc_digests_checked,
        identification: written.identification,
        records_listed,
        carried_over: written.carried_over,
        not_carried_over: written.not_carried_over,
        not_verified: admitted.before.unverified.clone(),
        created: now,
        stored: None,
    })
}

/// What writing the AIP's METS and manifest made, for the report.
struct Written {
    identification: IdentificationCounts,
    /// Bytes of the AIP's METS and manifest.
    added: u64,
    carried_over: Option<carried::CarriedOver>,
    not_carried_over: Vec<String>,
}

/// Writes the AIP's METS (the submission's with the edits of `ctx` and `relisted`) and its
/// manifest into the staging `root`, checks the METS, and compares what it carried over.
fn write_metadata(
    ctx: &Aip,
    sub: &Submission,
    admitted: &Admitted,
    placed: &files::Placed,
    relisted: Vec<Edit>,
    root: &Path,
    opts: &IngestOptions,
) -> Result<Written, IngestError> {
    let mut not_carried_over = ctx.found.not_identified.clone();
    not_carried_over.extend(left_out(&admitted.audit));
    let (mut edits, identification) = ctx.edits(&admitted.audit, placed, &mut not_carried_over)?;
    edits.extend(relisted);
    let aip_mets = root.join(layout::METS);
    write_aip_mets(&sub.mets, &aip_mets, &mut edits)?;
    let added = files::write_manifest(root, &admitted.before)?;
    check_aip(&aip_mets, opts)?;
    let carried_over = carried_over(&sub.mets, &aip_mets, &mut not_carried_over)?;
    Ok(Written { identification, added, carried_over, not_carried_over })
}

/// The AIP moved into place from `staging`; `None` when one is there already.
fn committed(staging: Staging) -> Result<Option<PathBuf>, IngestError> {
    match staging.commit() {
        Ok(aip) => Ok(Some(aip)),
        Err(PackageError::Exists(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A submission the deep audit lets in, with its files as they were before it.
struct Admitted {
    before: files::Snapshot,
    audit: crate::audit::AuditReport,
}

/// Audits the submission deeply; refuses it unless the audit lets it in. Every file is noted
/// as it was before the audit: the AIP takes these bytes or none.
fn admit(
    ssip: &Path,
    opts: &IngestOptions,
    progress: &(dyn Fn(AuditProgress) + Sync),
) -> Result<Admitted, IngestError> {
    let before = files::snapshot(ssip)?;
    let audit_opts =
        AuditOptions { validate: opts.validate.clone(), deep: true, ..Default::default() };
    let audit = audit_package(ssip, &audit_opts, progress)?;
    if !audit.admissible() {
        return Err(refusal(ssip, &audit));
    }
    Ok(Admitted { before, audit })
}

/// The places in the submission's METS that the AIP's edits need: those of a first scan,
/// with the sections of the identified bytestreams, the package-level amdSec and (when
/// `--mode` lists them anew) the records.
fn edit_sites(
    sub: &Submission,
    found: &identify::Found,
    opts: &IngestOptions,
) -> Result<Sites, IngestError> {
    let package_amd = sub.sites.physical_top.as_ref().and_then(|d| {
        let admid = d.attrs.iter().find(|(k, _)| k == "ADMID")?;
        admid.1.split_whitespace().next().map(str::to_string)
    });
    let sections = found.sections();
    let wanted = Wanted {
        sections: &sections,
        package_amd: package_amd.as_deref(),
        records: opts.mode.is_some(),
    };
    aip_mets::scan(&sub.mets, &wanted)
        .map_err(|source| IngestError::Mets { path: sub.mets.clone(), source })
}

/// Writes the AIP's METS at `aip_mets`: the submission's `mets` with `edits`, synced.
fn write_aip_mets(mets: &Path, aip_mets: &Path, edits: &mut [Edit]) -> Result<(), IngestError> {
    let out = std::fs::File::create(aip_mets).map_err(io_err(aip_mets))?;
    let mut w = BufWriter::new(out);
    aip_mets::apply(mets, edits, &mut w).map_err(io_err(aip_mets))?;
    std::io::Write::flush(&mut w).map_err(io_err(aip_mets))?;
    w.get_ref().sync_all().map_err(io_err(aip_mets))
}

/// The submission's package-level sections compared with the AIP's; what could not be
/// compared goes to `not_carried_over`.
fn carried_over(
    mets: &Path,
    aip_mets: &Path,
    not_carried_over: &mut Vec<String>,
) -> Result<Option<carried::CarriedOver>, IngestError> {
    Ok(match carried::check(mets, aip_mets)? {
        Ok(c) => {
            not_carried_over.extend(
                c.not_modelled.iter().map(|n| {
                    format!("not read typed, so kept byte for byte but not compared: {n}")
                }),
            );
            Some(c)
        }
        Err(e) => {
            not_carried_over
                .push(format!("the submission's sections could not be read typed: {e}"));
            None
        }
    })
}

/// What of the submission the AIP leaves out, in words: files kept elsewhere (named by URL),
/// and files in its folder that its METS does not list (the audit's warnings and notes under a
/// profile the submission does not claim; under one it claims they refuse it).
fn left_out(audit: &crate::audit::AuditReport) -> Vec<String> {
    let mut out: Vec<String> = kept_elsewhere(audit)
        .map(|u| {
            let id = u.mets_id.as_deref().unwrap_or("without ID");
            format!("kept elsewhere: <file> {id} at {}: not copied; the AIP's METS refers to it as the submission does", u.file)
        })
        .collect();
    out.extend(audit.findings.iter().filter(|f| f.rule == "unlisted" && !f.file.is_empty()).map(
        |f| format!("in the submission's folder, not listed in its METS: {}: not copied", f.file),
    ));
    out
}

/// The files the METS names by URL, as the audit found them.
fn kept_elsewhere(
    audit: &crate::audit::AuditReport,
) -> impl Iterator<Item = &crate::audit::Unchecked> {
    audit.unchecked.iter().filter(|u| u.kind == crate::audit::UncheckedKind::KeptElsewhere)
}

/// The refusal of a submission the audit does not find intact, naming its first findings:
/// those that locate damage at a byte first, then the others.
fn refusal(ssip: &Path, audit: &crate::audit::AuditReport) -> IngestError {
    use crate::mets::validate::Severity;
    let errors = audit.findings.iter().filter(|f| f.severity == Severity::Error);
    let (placed, unplaced): (Vec<_>, Vec<_>) = errors.partition(|f| f.offset.is_some());
    let mut all: Vec<String> = placed
        .into_iter()
        .chain(unplaced)
        .map(|f| {
            let at = f.offset.map(|o| format!(" at byte {o}")).unwrap_or_default();
            format!("{}{at}: [{}] {}", f.file, f.rule, f.message)
        })
        .collect();
    all.extend(
        audit
            .validation
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| format!("METS.xml line {}: [{}] {}", f.line.unwrap_or(0), f.rule, f.message)),
    );
    all.extend(audit.unchecked.iter().map(|u| format!("{}: not checkable: {}", u.file, u.reason)));
    let shown = all.len().min(3);
    IngestError::Refused {
        path: ssip.to_path_buf(),
        verdict: audit.verdict,
        first: match shown {
            0 => "no finding named".into(),
            _ => all[..shown].join("; "),
        },
        more: all.len() - shown,
    }
}

/// How the AIP names its submission: by its OBJID, else (another tool's submission, such as a
/// BL SIP, has none) by its METS's SHA-512, so that a second ingest of it finds its AIP. The
/// METS's SHA-512 is kept either way (see [`SubmissionRef::mets_sha512`]).
fn submission_ref(ssip: &Path, sites: &Sites) -> Result<SubmissionRef, IngestError> {
    let mets = layout::open_in(ssip, layout::METS)?;
    let (_, sha) =
        crate::formats::digest::sha512_read(mets).map_err(io_err(&ssip.join(layout::METS)))?;
    if let Some(o) = sites.objid.as_deref().filter(|o| !o.trim().is_empty()) {
        let value = o.to_string();
        return Ok(SubmissionRef { kind: aip_mets::SSIP_OBJID, value, mets_sha512: sha });
    }
    Ok(SubmissionRef { kind: aip_mets::SSIP_METS_SHA512, value: sha.clone(), mets_sha512: sha })
}

/// What another run of the same submission made at `target` while this one worked: its AIP
/// stands, this run made none.
fn made_meanwhile(
    target: &Path,
    ssip: &Path,
    ssip_ref: &SubmissionRef,
) -> Result<IngestReport, IngestError> {
    existing_aip(target, ssip, ssip_ref)?.ok_or_else(|| IngestError::OtherExists {
        path: target.to_path_buf(),
        submission: ssip.into(),
    })
}

/// The report of an AIP of this submission already at `target`, or `None` when nothing is
/// there; anything else there is an error.
fn existing_aip(
    target: &Path,
    ssip: &Path,
    ssip_ref: &SubmissionRef,
) -> Result<Option<IngestReport>, IngestError> {
    if std::fs::symlink_metadata(target).is_err() {
        return Ok(None);
    }
    let other = || IngestError::OtherExists { path: target.into(), submission: ssip.into() };
    let mets = target.join(layout::METS);
    let none = HashSet::new();
    let wanted = Wanted { sections: &none, package_amd: None, records: false };
    let Ok(sites) = aip_mets::scan(&mets, &wanted) else { return Err(other()) };
    let names_it =
        sites.ssip_ref.as_ref().is_some_and(|(k, v)| k == ssip_ref.kind && *v == ssip_ref.value);
    if sites.package_type.as_deref() != Some("AIP") || !names_it {
        return Err(other());
    }
    Ok(Some(IngestReport {
        submission: ssip.to_path_buf(),
        submission_objid: (ssip_ref.kind == aip_mets::SSIP_OBJID).then(|| ssip_ref.value.clone()),
        aip: target.to_path_buf(),
        objid: sites.objid.unwrap_or_default(),
        outcome: Outcome::Exists,
        linked: 0,
        copied: 0,
        submission_bytes: 0,
        added_bytes: 0,
        records_read: 0,
        warc_digests_checked: 0,
        identification: IdentificationCounts::default(),
        records_listed: None,
        carried_over: None,
        not_carried_over: vec![],
        not_verified: vec![],
        created: sites.last_modified.unwrap_or_default(),
        stored: None,
    }))
}

/// The AIP's METS passes the same checks a package's does before it is moved into place.
fn check_aip(path: &Path, opts: &IngestOptions) -> Result<(), IngestError> {
    use crate::mets::validate::Severity;
    let report = crate::mets::validate_mets(path, &opts.validate)?;
    let errors: Vec<_> = report.findings.iter().filter(|f| f.severity == Severity::Error).collect();
    match errors.first() {
        None => Ok(()),
        Some(first) => Err(IngestError::AipInvalid {
            path: path.to_path_buf(),
            errors: errors.len(),
            line: first.line,
            rule: first.rule.clone(),
            message: first.message.clone(),
        }),
    }
}

/// What the AIP's edits are made from.
struct Aip<'a> {
    ids: &'a Ids,
    now: DateTime<Utc>,
    objid: &'a str,
    sites: &'a Sites,
    /// How the AIP names its submission.
    ssip_ref: &'a SubmissionRef,
    identifier: Identifier,
    found: &'a identify::Found,
    /// What `--mode` made of the record listing.
    relisted: Option<relist::Relisted>,
}

impl Aip<'_> {
    /// Every edit of the submission's METS, and the identification counts.
    fn edits(
        &self,
        audit: &crate::audit::AuditReport,
        placed: &files::Placed,
        not_carried_over: &mut Vec<String>,
    ) -> Result<(Vec<Edit>, IdentificationCounts), IngestError> {
        let io = |e| IngestError::Io { path: PathBuf::from(layout::METS), source: e };
        let Some(root) = &self.sites.root else {
            return Err(IngestError::Mets {
                path: layout::METS.into(),
                source: MetsError::Xml {
                    pos: Default::default(),
                    source: quick_xml::Error::Io(std::sync::Arc::new(std::io::Error::other(
                        "no root element",
                    ))),
                },
            });
        };
        let mut edits = vec![Edit::new(
            root.start,
            root.end,
            aip_mets::retag(root, &[("OBJID", self.objid), ("TYPE", "AIP")]),
        )];
        edits.extend(self.hdr_edits(root).map_err(io)?);
        let tally = self.identification_edits(&mut edits).map_err(io)?;
        if self.sites.premis2 {
            not_carried_over.push(
                "PRONOM results of bytestreams described in PREMIS 2: PREMIS 3 format elements are not written into PREMIS 2 objects; the counts are in the format identification event".into(),
            );
        }
        let counts = IdentificationCounts {
            payloads: tally.payloads,
            unidentified: tally.unidentified,
            several: tally.several,
            contradicted: tally.contradicted,
            not_confirmed: tally.not_confirmed,
            already_identified: self.already_identified(),
            by_puid: tally.by_puid.clone(),
        };
        let (tech, digiprov) = self.md_sections(audit, placed, &tally).map_err(io)?;
        edits.extend(self.amd_edits(root, &tech, &digiprov));
        Ok((edits, counts))
    }

    /// The metsHdr: its LASTMODDATE set, and the AIP's agent and `altRecordID` added (a
    /// metsHdr made when the submission has none).
    fn hdr_edits(&self, root: &aip_mets::Tag) -> std::io::Result<Vec<Edit>> {
        let s = self.sites;
        let software = format!("webaip {}", env!("CARGO_PKG_VERSION"));
        let bind_mets = !aip_mets::binds(root, "mets", crate::mets::reader::NS_METS);
        let inserted = aip_mets::hdr_insert(&software, &self.ssip_ref.alt_record_ids(), bind_mets)?;
        let lastmod = self.now.to_rfc3339_opts(SecondsFormat::Secs, true);
        Ok(match (&s.hdr, s.after_agents) {
            (Some(hdr), Some(at)) if !hdr.empty => {
                let bytes = [b"\n    ".as_slice(), &aip_mets::on_own_lines(&inserted, "")].concat();
                let bytes = bytes.trim_ascii_end().to_vec();
                vec![
                    Edit::new(
                        hdr.start,
                        hdr.end,
                        aip_mets::retag(hdr, &[("LASTMODDATE", &lastmod)]),
                    ),
                    Edit::new(at, at, bytes),
                ]
            }
            (Some(hdr), _) => {
                let mut t = aip_mets::retag(
                    &aip_mets::Tag { empty: false, ..hdr.clone() },
                    &[("LASTMODDATE", &lastmod)],
                );
                t.extend_from_slice(&inserted);
                t.extend_from_slice(format!("</{}>", hdr.qname).as_bytes());
                vec![Edit::new(hdr.start, hdr.end, t)]
            }
            (None, _) => {
                let mut t = format!(
                    "<mets:metsHdr xmlns:mets=\"{}\" CREATEDATE=\"{lastmod}\">",
                    crate::mets::reader::NS_METS
                )
                .into_bytes();
                t.extend_from_slice(&inserted);
                t.extend_from_slice(b"</mets:metsHdr>");
                vec![Edit::new(root.end, root.end, t)]
            }
        })
    }

    /// The sections whose object already states a PRONOM identification: kept as they are.
    fn identified_sections(&self) -> HashSet<&str> {
        let formats = &self.sites.formats;
        formats.iter().filter(|f| f.has_pronom).map(|f| f.section.as_str()).collect()
    }

    /// Identified bytestreams whose object already carried a PRONOM key.
    fn already_identified(&self) -> u64 {
        let identified = self.identified_sections();
        let by_section = self.found.by_section.keys();
        by_section.filter(|section| identified.contains(section.as_str())).count() as u64
    }

    /// One PRONOM result per described bytestream, whatever number of `format` elements its
    /// object has; an object that already states an identification keeps it. Returns the
    /// tally of every bytestream identified.
    fn identification_edits(&self, edits: &mut Vec<Edit>) -> std::io::Result<Tally> {
        let mut tally = Tally::default();
        self.found.by_section.values().for_each(|id| tally.add(id));
        let identified = self.identified_sections();
        let mut edited: HashSet<&str> = HashSet::new();
        for site in &self.sites.formats {
            let Some(id) = self.found.by_section.get(&site.section) else { continue };
            if identified.contains(site.section.as_str()) || !edited.insert(&site.section) {
                continue;
            }
            edits.push(aip_mets::format_edit(site, id)?);
        }
        Ok(tally)
    }

    /// The AIP's sections (`tech`, `digiprov`) placed: into the package-level amdSec, where
    /// METS tools that read a package by its folders find package metadata (metsrw reads the
    /// first amdSec a div names, only), the objects first, the events and agents last, as METS
    /// orders an amdSec's sections; else in an amdSec of their own. The top div names them.
    fn amd_edits(&self, root: &aip_mets::Tag, tech: &[u8], digiprov: &[u8]) -> Vec<Edit> {
        let s = self.sites;
        let mut edits = Vec::new();
        let trimmed = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        let bound = [
            ("mets", crate::mets::reader::NS_METS),
            ("premis", crate::mets::reader::NS_PREMIS3),
            ("xsi", XSI),
        ]
        .iter()
        .all(|(p, ns)| aip_mets::binds(root, p, ns));
        let merged = match s.package_amd {
            Some((inner, end)) if bound && end > inner => {
                let head = format!("\n    {}", trimmed(tech));
                edits.push(Edit::new(inner, inner, head.into_bytes()));
                let tail = format!("  {}\n  ", trimmed(digiprov));
                edits.push(Edit::new(end, end, tail.into_bytes()));
                true
            }
            _ => false,
        };
        if let Some(div) = &s.physical_top {
            edits.push(self.top_div_edit(div, merged));
        }
        if !merged {
            let at = s.before_filesec.unwrap_or(root.end);
            let amd = self.amd_sec(root, tech, digiprov);
            edits.push(Edit::new(at, at, aip_mets::on_own_lines(&amd, "  ")));
        }
        edits
    }

    /// The physical map's top div: labelled with the AIP's identifier where it was labelled
    /// with the submission's; naming the AIP's own amdSec when it has one.
    fn top_div_edit(&self, div: &aip_mets::Tag, merged: bool) -> Edit {
        let attr = |name: &str| div.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim());
        let admid = match attr("ADMID") {
            Some(a) if !a.is_empty() && !merged => format!("{a} AMD-AIP"),
            Some(a) if merged => a.to_string(),
            _ => "AMD-AIP".to_string(),
        };
        let mut set = vec![("ADMID", admid.as_str())];
        if attr("LABEL").is_some() && attr("LABEL") == self.sites.objid.as_deref() {
            set.push(("LABEL", self.objid));
        }
        Edit::new(div.start, div.end, aip_mets::retag(div, &set))
    }

    /// The AIP's own amdSec, for a document without a package-level one to add to. The
    /// namespaces its elements use that the root does not bind are declared on it.
    fn amd_sec(&self, root: &aip_mets::Tag, tech: &[u8], digiprov: &[u8]) -> Vec<u8> {
        let mut open = String::from("<mets:amdSec");
        for (p, ns) in [
            ("mets", crate::mets::reader::NS_METS),
            ("premis", crate::mets::reader::NS_PREMIS3),
            ("xsi", XSI),
        ] {
            if !aip_mets::binds(root, p, ns) {
                open.push_str(&format!(" xmlns:{p}=\"{ns}\""));
            }
        }
        open.push_str(" ID=\"AMD-AIP\">\n");
        [open.as_bytes(), tech, digiprov, b"  </mets:amdSec>\n"].concat()
    }

    /// The AIP's sections: its representation object (related to the submission) and the
    /// submission's (techMDs); its events and the agents the submission does not already
    /// define (digiprovMDs).
    fn md_sections(
        &self,
        audit: &crate::audit::AuditReport,
        placed: &files::Placed,
        tally: &Tally,
    ) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
        let events = self.events(audit, placed, tally);
        let mut agents = vec![webaip_agent(), self.identifier.agent()];
        agents.retain(|a| !self.sites.agent_ids.contains(&a.id));
        let mut x = XmlOut::new(Vec::new(), 2);
        let related = Some(self.ssip_ref.pair());
        let event_ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
        crate::mets::premis::write_representation_md(
            &mut x,
            "TECH-AIP",
            (OBJID_TYPE, self.objid),
            related,
            &event_ids,
        )?;
        if let Some(ssip) = related {
            // The submission, as the events and the relationship name it (P5.3: an event links
            // described objects only).
            crate::mets::premis::write_representation_md(&mut x, "TECH-SSIP", ssip, None, &[])?;
        }
        let tech = std::mem::take(x.inner_mut());
        for (i, e) in events.iter().enumerate() {
            crate::mets::premis::write_event_md(&mut x, &format!("DP-AIP-E{}", i + 1), e)?;
        }
        for (i, a) in agents.iter().enumerate() {
            crate::mets::premis::write_agent_md(&mut x, &format!("AGENT-AIP-{}", i + 1), a)?;
        }
        Ok((tech, x.into_inner()))
    }

    /// The AIP's events, in order. An event over nothing says what was not done, so none is
    /// recorded: no fixity check when no file was read (all kept elsewhere), nor a format
    /// identification then when no payload was identified. (A package read whole whose
    /// records hold no payload was identified: its event says 0.)
    fn events(
        &self,
        audit: &crate::audit::AuditReport,
        placed: &files::Placed,
        tally: &Tally,
    ) -> Vec<Event> {
        let parts = self.event_parts();
        let mut events = vec![self.ingestion_event(&parts, audit, placed)];
        if audit.files_checked > 0 {
            events.push(self.fixity_event(&parts, audit));
        }
        if tally.payloads > 0 || audit.files_checked > 0 {
            events.push(self.identifier.event(self.ids, self.now, tally, parts.objects.clone()));
        }
        events.push(self.validation_event(&parts, audit));
        events
    }

    /// What the events of an ingest share.
    fn event_parts(&self) -> EventParts {
        let aip = (OBJID_TYPE.to_string(), self.objid.to_string(), "outcome".to_string());
        let (kind, value) = self.ssip_ref.pair();
        let ssip = (kind.to_string(), value.to_string(), "source".to_string());
        EventParts {
            program: format!("program=\"webaip\"; version=\"{}\"", env!("CARGO_PKG_VERSION")),
            objects: vec![ssip, aip],
            agents: vec![(
                "local".to_string(),
                AGENT_ID.to_string(),
                "executing program".to_string(),
            )],
        }
    }

    /// A successful event of webaip's over the submission and the AIP.
    fn event(
        &self,
        parts: &EventParts,
        kind: EventType,
        detail: String,
        outcome_detail: String,
    ) -> Event {
        Event {
            id: self.ids.uuid().to_string(),
            event_type: kind.term.into(),
            event_type_uri: Some(kind.uri.into()),
            date_time: self.now,
            detail: Some(detail),
            outcome: "success".into(),
            outcome_detail: Some(outcome_detail),
            agents: parts.agents.clone(),
            objects: parts.objects.clone(),
        }
    }

    /// The files kept: how many linked, copied, kept elsewhere; the records listed anew.
    fn ingestion_event(
        &self,
        parts: &EventParts,
        audit: &crate::audit::AuditReport,
        placed: &files::Placed,
    ) -> Event {
        let elsewhere = match kept_elsewhere(audit).count() {
            0 => String::new(),
            n => format!(
                "; {n} file(s) named by URL kept elsewhere, not copied: the METS refers to them as the submission did"
            ),
        };
        let relisted = match self.relisted {
            Some(r) => format!(
                "; records listed anew: {} listed, {} of them as the submission listed them",
                r.listed, r.kept
            ),
            None => String::new(),
        };
        self.event(
            parts,
            INGESTION,
            format!(
                "{}; the submission's containers and logs are kept byte for byte, hard-linked where the file system allows, else copied and verified; its METS is kept with the AIP's edits",
                parts.program
            ),
            format!(
                "{} file(s): {} hard-linked, {} copied and verified{elsewhere}{relisted}",
                placed.linked + placed.copied,
                placed.linked,
                placed.copied,
            ),
        )
    }

    /// The digests the deep audit verified.
    fn fixity_event(&self, parts: &EventParts, audit: &crate::audit::AuditReport) -> Event {
        self.event(
            parts,
            FIXITY,
            format!(
                "{}; SHA-512 of every file against the METS and the manifest; WARC-Block-Digest and WARC-Payload-Digest of every record (audit --deep)",
                parts.program
            ),
            format!(
                "{} file(s), {} record(s) read, {} WARC digest(s) and {} bytestream range(s) verified",
                audit.files_checked,
                audit.records_read,
                audit.warc_digests_checked,
                audit.bytestreams_checked
            ),
        )
    }

    /// The submission's METS found valid.
    fn validation_event(&self, parts: &EventParts, audit: &crate::audit::AuditReport) -> Event {
        let v = &audit.validation;
        let xsd = match &v.xsd {
            crate::mets::validate::XsdStatus::Validated { .. } => "validated".to_string(),
            crate::mets::validate::XsdStatus::Skipped { reason } => {
                format!("not validated ({reason})")
            }
        };
        let warnings = v
            .findings
            .iter()
            .filter(|f| f.severity == crate::mets::validate::Severity::Warning)
            .count();
        self.event(
            parts,
            VALIDATION,
            format!(
                "{}; the submission's METS against the METS, PREMIS, MODS, DC and XLink schemas and the rules of profile {}",
                parts.program, v.profile
            ),
            format!("valid; XML schemas: {xsd}; {warnings} warning(s)"),
        )
    }
}

/// What the events of an ingest share: the program's description, the objects (the
/// submission, the AIP) and the agent.
struct EventParts {
    program: String,
    objects: Vec<(String, String, String)>,
    agents: Vec<(String, String, String)>,
}

/// webaip as the agent of ingestion, fixity check and validation.
fn webaip_agent() -> Agent {
    Agent {
        id_type: "local".into(),
        id: AGENT_ID.into(),
        name: "webaip".into(),
        agent_type: "software".into(),
        version: Some(env!("CARGO_PKG_VERSION").into()),
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_aip_is_reported_with_its_line_as_a_number() {
        let e = IngestError::AipInvalid {
            path: "x/METS.xml".into(),
            errors: 1,
            line: Some(212),
            rule: "XML".into(),
            message: "ill-formed".into(),
        };
        assert_eq!(
            e.to_string(),
            "x/METS.xml: the AIP's METS is not valid: 1 error(s), the first at line 212: [XML] ill-formed"
        );
        let e = IngestError::AipInvalid {
            path: "x/METS.xml".into(),
            errors: 1,
            line: None,
            rule: "XML".into(),
            message: "ill-formed".into(),
        };
        assert!(e.to_string().contains("1 error(s), the first: [XML]"), "{e}");
    }
}
