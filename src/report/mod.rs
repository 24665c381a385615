//! `webaip report`: what a package holds and what was found of it, as one self-contained HTML
//! page and its JSON twin.
//!
//! The facts come from what the package states and what its access index lists, never from
//! the payloads: the METS ([`mets`]: who and what the package is, its PREMIS events and
//! agents, the described webpages, its files), the index lines of its containers
//! ([`captures`]: a CDXJ given with `--index`, else the containers' records read as
//! `webaip index` reads them), the package's own logs of the source's quirks ([`quirks`]),
//! the METS validation, and an audit when asked. [`html`] draws the page from the facts alone,
//! so every number on it is in the JSON too.

pub mod captures;
pub mod collection;
pub mod html;
pub mod mets;
pub mod quirks;
mod svg;
mod text;
mod timeline;

use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::index::cdxj::IndexEntry;
use crate::mets::reader::{MetsError, MetsReader};
use crate::stages::identify::Tally;
use captures::{CaptureSource, CaptureTally, Captures};
use mets::{AgentFact, EventFact, HeaderAgent, MetsFacts};
use quirks::Quirks;

/// Longest index line read (a CDXJ line of a long URL is a few KiB).
const MAX_INDEX_LINE: u64 = 1 << 20;
/// Errors of the validation or audit listed on the page (all are counted).
const FIRST_FINDINGS: usize = 10;

/// Why a report cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The path is no package.
    #[error(transparent)]
    NotAPackage(#[from] crate::sources::recognise::NotAPackage),
    /// The METS, a container or the package folder cannot be opened as a regular file.
    #[error(transparent)]
    Confine(#[from] crate::layout::ConfineError),
    /// The METS is not well-formed to its end.
    #[error("{}: {source}", path.display())]
    Mets {
        /// The METS.
        path: PathBuf,
        /// Where and why.
        #[source]
        source: MetsError,
    },
    /// An index file given cannot be read.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    IndexIo {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// A line of an index file given is no CDXJ line.
    #[error("{}, line {line}: {reason}", path.display())]
    IndexLine {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: u64,
        /// Why.
        reason: String,
    },
    /// The METS validation could not run (schemas not loaded).
    #[error(transparent)]
    Validate(#[from] crate::mets::validate::ValidateError),
    /// The audit could not run.
    #[error(transparent)]
    Audit(#[from] crate::audit::AuditError),
    /// The page would overwrite what the report reads.
    #[error(transparent)]
    OutputInInput(#[from] crate::layout::NestingError),
    /// The page could not be written.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Output {
        /// The page's path.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Temporaries of a page being written: `.webaip-report-XXXXXX.html` beside it.
pub(crate) const PAGE_TEMP: crate::temporaries::TempName =
    crate::temporaries::TempName { prefix: ".webaip-report-", suffix: ".html", dirs: false };

/// Refuses a page path that would overwrite what the report reads (the package, a file in
/// it, an index given) or that is something other than a regular file (a device, a FIFO, a
/// link: the rename would replace it).
pub fn refuse_report_output(
    package: &Path,
    options: &ReportOptions,
    out: &Path,
) -> Result<(), ReportError> {
    for input in std::iter::once(package).chain(options.index.iter().map(PathBuf::as_path)) {
        crate::layout::refuse_output_in_input(input, out)?;
    }
    refuse_non_regular(out)
}

/// Refuses an existing `out` that is not a regular file.
pub(crate) fn refuse_non_regular(out: &Path) -> Result<(), ReportError> {
    match std::fs::symlink_metadata(out) {
        Ok(m) if !m.file_type().is_file() => {
            let kind = crate::layout::kind_of(&m);
            Err(crate::layout::ConfineError::NotRegular { path: out.into(), kind }.into())
        }
        _ => Ok(()),
    }
}

/// Writes the report's page to `path`: under a temporary name beside it, synced, then
/// renamed (a failed or killed run leaves no page that looks complete).
pub fn write_html_file(report: &ReportFacts, path: &Path) -> Result<(), ReportError> {
    write_page(path, &mut |out| html::write_html(report, out))
}

/// Writes a page to `path` by `write`: under a temporary name beside it, synced, then renamed.
pub(crate) fn write_page(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
) -> Result<(), ReportError> {
    let err = |source| ReportError::Output { path: path.to_path_buf(), source };
    let dir = page_folder(path);
    refuse_non_regular(path)?;
    crate::temporaries::remove_dead(dir, PAGE_TEMP);
    let tmp = crate::temporaries::locked_output_in(dir, PAGE_TEMP).map_err(err)?;
    let mut out = io::BufWriter::new(tmp.as_file());
    write(&mut out).map_err(err)?;
    io::Write::flush(&mut out).map_err(err)?;
    drop(out);
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

/// The folder a page is written in (its temporaries beside it).
pub(crate) fn page_folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// What a report reads besides the METS.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// CDXJ index files to count the captures from (lines of other files are left out);
    /// none: the package's containers are read.
    pub index: Vec<PathBuf>,
    /// Audit the package (a plain audit: the manifest, every file's size and digest) and
    /// show its verdict.
    pub audit: bool,
}

/// What a report tells as it reads.
#[derive(Debug, Clone, Copy)]
pub enum ReportProgress {
    /// About this many more bytes will be read.
    Planned(u64),
    /// This many more bytes were read.
    Read(u64),
}

/// Who and what the package is.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Identity {
    /// The website's title (its description's), else the METS `LABEL`.
    pub title: String,
    /// `OBJID`.
    pub objid: String,
    /// `TYPE`: sSIP (submission) or AIP (archival), as the METS says.
    pub package_type: String,
    /// `PROFILE`.
    pub profile: String,
    /// When the METS was made and last changed.
    pub created: String,
    /// Last change of the METS, when stated.
    pub modified: String,
    /// The METS header's agents (the organisation and the software that made it).
    pub made_by: Vec<HeaderAgent>,
    /// Where the harvest came from (`dc:source`).
    pub source: String,
    /// The source's shape as the package's logs show it: the shape a quirk log names, else
    /// "ARC files" when the containers were migrated from ARCs, else empty (not stated).
    pub source_shape: String,
    /// The website's URL.
    pub url: String,
    /// The capture dates the description states (`start`, `end`, or one).
    pub captured: Vec<(String, String)>,
}

/// A described webpage or associated object.
#[derive(Debug, Clone, Serialize)]
pub struct PageFact {
    /// WEBPAGE or ASSOCIATEDOBJECT.
    pub kind: String,
    /// Its title (else the structure map's label).
    pub title: String,
    /// Its URL.
    pub url: String,
    /// Its capture date(s).
    pub captured: Vec<String>,
    /// Its declared MIME type.
    pub mime: String,
}

/// A PREMIS event's outcome, for a verdict.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EventOutcome {
    /// The event's date.
    pub date: String,
    /// `eventOutcome`.
    pub outcome: String,
    /// `eventOutcomeDetailNote`s.
    pub notes: Vec<String>,
    /// How many events of that type the METS records (the last is shown).
    pub events: u64,
    /// Every event of the type by outcome.
    pub outcomes: BTreeMap<String, u64>,
    /// The last event's agents, by name (else identifier) and role.
    pub agents: Vec<String>,
}

/// How an event's outcome reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum OutcomeState {
    /// Clean or successful.
    Good,
    /// Neither (not scanned, unknown words).
    Unclear,
    /// A virus found, or a failure.
    Bad,
}

/// How the outcome `outcome` reads.
pub(crate) fn outcome_state(outcome: &str) -> OutcomeState {
    let o = outcome.to_ascii_lowercase();
    if o.contains("viral") || o.contains("infected") || o.starts_with("fail") {
        OutcomeState::Bad
    } else if matches!(o.as_str(), "success" | "pass" | "clean" | "no virus detected") {
        OutcomeState::Good
    } else {
        OutcomeState::Unclear
    }
}

impl EventOutcome {
    /// The worst outcome of every event of the type.
    pub(crate) fn worst(&self) -> OutcomeState {
        self.outcomes.keys().map(|k| outcome_state(k)).max().unwrap_or(OutcomeState::Unclear)
    }

    /// True when an event of the type states a failure or a virus left in (`fail...`,
    /// `infected`, `viral, failed but forced`); a virus found and cleaned (moved to the
    /// package's quarantine) is no failure.
    pub fn any_failed(&self) -> bool {
        self.outcomes.keys().any(|k| {
            let k = k.to_ascii_lowercase();
            k.contains("fail") || k.contains("infected")
        })
    }
}

/// The METS validation's result.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MetsVerdict {
    /// No error found.
    pub valid: bool,
    /// The profile it was judged by.
    pub profile: String,
    /// Errors found.
    pub errors: u64,
    /// Warnings found.
    pub warnings: u64,
    /// The first errors, as `line N: rule: message`.
    pub first_errors: Vec<String>,
}

/// An audit's result.
#[derive(Debug, Clone, Serialize)]
pub struct AuditOutcome {
    /// The verdict.
    pub verdict: crate::audit::Verdict,
    /// It in words.
    pub text: String,
    /// Files listed and checked.
    pub files_listed: u64,
    /// Files found and read.
    pub files_checked: u64,
    /// Findings about the bytes.
    pub findings: u64,
    /// What could not be checked.
    pub unchecked: u64,
    /// The first findings, as `file: message`.
    pub first_findings: Vec<String>,
}

/// The verdicts shown at the top.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verdicts {
    /// The METS validation (the audit's, when an audit ran).
    pub mets: MetsVerdict,
    /// The audit, when asked for.
    pub audit: Option<AuditOutcome>,
    /// The last virus check event; `None` when the METS records none.
    pub virus_check: Option<EventOutcome>,
    /// The last format identification event; `None` when the METS records none.
    pub identification: Option<EventOutcome>,
}

/// One `format identification` event, with its scope as the METS states it.
#[derive(Debug, Clone, Serialize)]
pub struct IdentificationEvent {
    /// `eventDateTime`.
    pub date: String,
    /// `eventOutcome`.
    pub outcome: String,
    /// The payloads its note states were identified; `None` when the note is not one webaip
    /// writes.
    pub payloads: Option<u64>,
    /// The objects it links to: an AIP's packaging event links the containers (every payload
    /// in them), its ingest's the submission and the AIP (the described bytestreams).
    pub objects: u64,
    /// The event the card and the counts are of (the one stating the most payloads).
    pub shown: bool,
}

/// Formats as the identification event states them.
#[derive(Debug, Clone, Serialize)]
pub struct Identification {
    /// The counts the shown event's note states (the one stating the most payloads); `None`
    /// when the note is not one webaip writes (then only the note is shown).
    pub stated: Option<Tally>,
    /// Every identification event (at most 64), in document order.
    pub events: Vec<IdentificationEvent>,
    /// The formats of the package's files' PREMIS objects (containers, logs), by PUID.
    pub file_formats: Vec<captures::Count>,
}

/// Deduplication as the package states it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Deduplication {
    /// The packages (OBJIDs) it requires: their payloads are not stored again here (at
    /// most 1,000 listed).
    pub requires: Vec<String>,
    /// Further `requires` relationships past those listed.
    pub requires_not_listed: u64,
    /// Each deduplication event's outcome notes.
    pub notes: Vec<String>,
}

/// A package's report: every fact the page shows.
#[derive(Debug, Clone, Serialize)]
pub struct ReportFacts {
    /// The package folder.
    pub package: String,
    /// Who and what it is.
    pub identity: Identity,
    /// The verdicts.
    pub verdicts: Verdicts,
    /// The captures; `None` never: an index or the containers are always read.
    pub captures: Captures,
    /// The described webpages and associated objects.
    pub pages: Vec<PageFact>,
    /// Formats.
    pub identification: Identification,
    /// The PREMIS events, by date.
    pub events: Vec<EventFact>,
    /// The PREMIS agents.
    pub agents: Vec<AgentFact>,
    /// The fileSec's files by folder.
    pub folders: BTreeMap<String, mets::FolderCount>,
    /// WARC records the containers' PREMIS objects state.
    pub stated_records: u64,
    /// Files the package was migrated from (ARCs): the PREMIS `derivation` / `migration`
    /// relationships.
    pub migrated_from: u64,
    /// Deduplication.
    pub deduplication: Deduplication,
    /// The source's quirks and anomalies.
    pub quirks: Quirks,
    /// Entries left out of the lists by their bounds, by list.
    pub not_listed: BTreeMap<&'static str, u64>,
}

/// Makes the report of the package at `path` (a folder holding `METS.xml`, or its METS).
pub fn report_package(
    path: &Path,
    options: &ReportOptions,
    progress: &dyn Fn(ReportProgress),
) -> Result<ReportFacts, ReportError> {
    let (dir, mets_path) = package_paths(path)?;
    let facts = read_facts(&mets_path)?;
    let containers = container_sizes(&dir)?;
    let captures = match options.index.is_empty() {
        true => captures_from_containers(&dir, containers, progress),
        false => captures_from_index(&options.index, containers, progress)?,
    };
    let verdicts = verdicts(&dir, &mets_path, &facts, options)?;
    let quirks = quirks::read_quirks(&dir, &facts.quirk_logs);
    Ok(assemble(dir.display().to_string(), facts, captures, verdicts, quirks))
}

/// The package folder and its METS.
pub(crate) fn package_paths(path: &Path) -> Result<(PathBuf, PathBuf), ReportError> {
    use crate::sources::recognise::{Takes, package_at};
    package_at(path, Takes::FolderOrMets)?;
    let (dir, mets) = if path.is_dir() {
        (path.to_path_buf(), path.join(crate::layout::METS))
    } else {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        (dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf), path.to_path_buf())
    };
    crate::layout::regular_metadata(&mets)?;
    Ok((dir, mets))
}

pub(crate) fn read_facts(mets: &Path) -> Result<MetsFacts, ReportError> {
    let file = crate::layout::open_regular(mets)?;
    let reader = MetsReader::lenient(io::BufReader::with_capacity(256 * 1024, file));
    mets::read_mets_facts(reader).map_err(|source| ReportError::Mets { path: mets.into(), source })
}

/// The package's containers (`content/NAME`) with their sizes, and why each that the
/// manifest lists cannot be had (absent): the report goes on without them, and says so.
struct Containers {
    sizes: Vec<(String, u64)>,
    absent: Vec<String>,
}

fn container_sizes(dir: &Path) -> Result<Containers, ReportError> {
    let found = crate::layout::package_containers_found(dir)?;
    let mut absent: Vec<String> = found.absent.iter().map(ToString::to_string).collect();
    let mut sizes = Vec::new();
    for n in found.names {
        match crate::layout::metadata_in(dir, &n) {
            Ok(m) => sizes.push((n, m.len())),
            Err(e) if e.is_not_found() => absent.push(e.to_string()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Containers { sizes, absent })
}

/// The captures as reading the containers' records gives them. A container that cannot be
/// read to its end (damage, an unreadable medium) keeps the lines read before, and the
/// counts say they are partial, naming the file and offset: the report (and its audit) goes
/// on.
fn captures_from_containers(
    dir: &Path,
    containers: Containers,
    progress: &dyn Fn(ReportProgress),
) -> Captures {
    let sizes = &containers.sizes;
    progress(ReportProgress::Planned(sizes.iter().map(|(_, s)| s).sum()));
    let mut tally = CaptureTally::new(CaptureSource::Containers, sizes);
    for why in containers.absent {
        tally.not_read(why);
    }
    for (name, _) in sizes {
        let opts = crate::index::warc::EntryOptions { record_types: true, record_ids: false };
        let read = crate::index::members::index_warc(&dir.join(name), name, opts, &mut |e| {
            progress(ReportProgress::Read(e.length));
            tally.add(&e);
            Ok(())
        });
        if let Err(e) = read {
            tally.not_read(e.to_string());
        }
    }
    tally.finish()
}

fn captures_from_index(
    files: &[PathBuf],
    containers: Containers,
    progress: &dyn Fn(ReportProgress),
) -> Result<Captures, ReportError> {
    let shown = files.iter().map(|f| f.display().to_string()).collect();
    let mut tally = CaptureTally::new(CaptureSource::Index { files: shown }, &containers.sizes);
    for why in containers.absent {
        tally.not_read(why);
    }
    for path in files {
        let io_err = |source| ReportError::IndexIo { path: path.clone(), source };
        let file = crate::layout::open_user_file(path)?;
        progress(ReportProgress::Planned(file.metadata().map_err(io_err)?.len()));
        read_index_lines(path, io::BufReader::new(file), &mut |e, n| {
            progress(ReportProgress::Read(n));
            tally.add(&e);
        })?;
    }
    Ok(tally.finish())
}

/// Hands every line of a CDXJ index to `each` (with its length in bytes); header lines
/// (`!...`) and empty lines are passed over.
fn read_index_lines(
    path: &Path,
    mut input: impl BufRead,
    each: &mut dyn FnMut(IndexEntry, u64),
) -> Result<(), ReportError> {
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = io::Read::take(&mut input, MAX_INDEX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|source| ReportError::IndexIo { path: path.into(), source })?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let bad =
            |reason: String| ReportError::IndexLine { path: path.into(), line: number, reason };
        if n as u64 > MAX_INDEX_LINE {
            return Err(bad(format!("longer than {MAX_INDEX_LINE} bytes")));
        }
        let text = std::str::from_utf8(&line).map_err(|_| bad("not UTF-8".into()))?;
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() || text.starts_with('!') {
            continue;
        }
        let entry = IndexEntry::parse_cdxj(text).map_err(|e| bad(e.to_string()))?;
        each(entry, n as u64);
    }
}

/// The METS validation (or the audit, which validates too), the virus check and the
/// identification.
fn verdicts(
    dir: &Path,
    mets_path: &Path,
    facts: &MetsFacts,
    options: &ReportOptions,
) -> Result<Verdicts, ReportError> {
    let (mets, audit) = if options.audit {
        let opts = crate::audit::AuditOptions::default();
        let report = crate::audit::audit_package(dir, &opts, &|_| {})?;
        (mets_verdict(&report.validation), Some(audit_verdict(&report)))
    } else {
        let v = crate::mets::validate_mets(mets_path, &Default::default())?;
        (mets_verdict(&v), None)
    };
    Ok(Verdicts {
        mets,
        audit,
        virus_check: last_outcome(&facts.event_types, &facts.agents, "virus check"),
        identification: identification_outcome(facts),
    })
}

pub(crate) fn mets_verdict(v: &crate::mets::validate::ValidationReport) -> MetsVerdict {
    use crate::mets::validate::Severity;
    let errors: Vec<_> = v.findings.iter().filter(|f| f.severity == Severity::Error).collect();
    MetsVerdict {
        valid: v.valid,
        profile: v.profile.clone(),
        errors: errors.len() as u64,
        warnings: (v.findings.len() - errors.len()) as u64,
        first_errors: errors
            .iter()
            .take(FIRST_FINDINGS)
            .map(|f| match f.line {
                Some(l) => format!("line {l}: {}: {}", f.rule, f.message),
                None => format!("{}: {}", f.rule, f.message),
            })
            .collect(),
    }
}

fn audit_verdict(r: &crate::audit::AuditReport) -> AuditOutcome {
    AuditOutcome {
        verdict: r.verdict,
        text: r.verdict.to_string(),
        files_listed: r.files_listed,
        files_checked: r.files_checked,
        findings: r.findings.len() as u64,
        unchecked: r.unchecked.len() as u64,
        first_findings: r
            .findings
            .iter()
            .take(FIRST_FINDINGS)
            .map(|f| format!("{}: {}", f.file, f.message))
            .collect(),
    }
}

/// The last event of `kind` (the latest by document order), and how many there are.
pub(crate) fn last_outcome(
    types: &BTreeMap<String, mets::EventTypeTally>,
    agents: &[AgentFact],
    kind: &str,
) -> Option<EventOutcome> {
    let t = types.get(kind)?;
    Some(EventOutcome {
        date: t.last.date.clone(),
        outcome: t.last.outcome.clone(),
        notes: t.last.notes.clone(),
        events: t.count,
        outcomes: t.outcomes.clone(),
        agents: named_agents(&t.last, agents),
    })
}

/// The agents an event names, by name (else identifier) and role.
fn named_agents(e: &mets::EventFact, agents: &[AgentFact]) -> Vec<String> {
    let named = e.agents.iter().map(|a| match a.role.is_empty() {
        true => agent_name(agents, &a.id).to_string(),
        false => format!("{} ({})", agent_name(agents, &a.id), a.role),
    });
    named.collect()
}

/// The identification event the card and the counts are of: the one whose note states the
/// most payloads (the last among equals, and the last when no note is webaip's). On an AIP
/// that is the packaging's, over every payload, not the ingest's, over the described
/// bytestreams only.
fn shown_identification(events: &[mets::EventFact]) -> Option<usize> {
    let payloads = |e: &mets::EventFact| e.notes.iter().find_map(|n| Tally::from_summary(n));
    let stated = |e: &mets::EventFact| payloads(e).map_or(0, |t| t.payloads);
    (0..events.len()).max_by_key(|&i| (stated(&events[i]), i))
}

/// The identification card: the shown event's outcome, notes and agents, the counts of every
/// event of the type.
pub(crate) fn identification_outcome(facts: &MetsFacts) -> Option<EventOutcome> {
    let mut o = last_outcome(&facts.event_types, &facts.agents, "format identification")?;
    if let Some(i) = shown_identification(&facts.identifications) {
        let e = &facts.identifications[i];
        (o.date, o.outcome, o.notes) = (e.date.clone(), e.outcome.clone(), e.notes.clone());
        o.agents = named_agents(e, &facts.agents);
    }
    Some(o)
}

/// Every identification event with its scope, the shown one marked.
fn identification_events(facts: &MetsFacts) -> Vec<IdentificationEvent> {
    let shown = shown_identification(&facts.identifications);
    let events = facts.identifications.iter().enumerate();
    events
        .map(|(i, e)| IdentificationEvent {
            date: e.date.clone(),
            outcome: e.outcome.clone(),
            payloads: e.notes.iter().find_map(|n| Tally::from_summary(n)).map(|t| t.payloads),
            objects: e.objects,
            shown: shown == Some(i),
        })
        .collect()
}

/// The report from what was read.
fn assemble(
    package: String,
    mut facts: MetsFacts,
    captures: Captures,
    verdicts: Verdicts,
    quirks: Quirks,
) -> ReportFacts {
    let mut identity = identity(&facts);
    let pages = pages(&facts);
    let identification = Identification {
        stated: verdicts
            .identification
            .as_ref()
            .and_then(|o| o.notes.iter().find_map(|n| Tally::from_summary(n))),
        events: identification_events(&facts),
        file_formats: ranked_counts(&facts.object_totals.formats),
    };
    let deduplication = deduplication(&facts);
    let stated_records = facts.object_totals.warc_records;
    let migrated_from = facts.object_totals.migrations;
    identity.source_shape = match (&quirks.shape, migrated_from) {
        (Some(shape), _) => shape.clone(),
        (None, n) if n > 0 => "ARC files".into(),
        _ => String::new(),
    };
    // Events by date, stable: those of one date keep the document's order.
    facts.events.sort_by(|a, b| a.date.cmp(&b.date));
    ReportFacts {
        package,
        identity,
        verdicts,
        captures,
        pages,
        identification,
        events: facts.events,
        agents: facts.agents,
        folders: facts.folders,
        stated_records,
        migrated_from,
        deduplication,
        quirks,
        not_listed: facts.not_listed,
    }
}

/// The descriptions the first logical division of `kind` points to.
fn description_of<'a>(
    facts: &'a MetsFacts,
    div: &mets::LogicalDiv,
) -> Option<&'a mets::Description> {
    div.dmd.iter().filter_map(|id| facts.descriptions.get(id)).find(|d| !d.title.is_empty())
}

pub(crate) fn identity(facts: &MetsFacts) -> Identity {
    let website = facts.logical.iter().find(|d| d.kind.eq_ignore_ascii_case("website"));
    let descriptions: Vec<&mets::Description> = website
        .map(|w| w.dmd.iter().filter_map(|id| facts.descriptions.get(id)).collect())
        .unwrap_or_default();
    let first = |f: fn(&mets::Description) -> &String| {
        descriptions.iter().map(|d| f(d)).find(|v| !v.is_empty()).cloned().unwrap_or_default()
    };
    let title = first(|d| &d.title);
    Identity {
        title: if title.is_empty() { facts.label.clone() } else { title },
        objid: facts.objid.clone(),
        package_type: facts.package_type.clone(),
        profile: facts.profile.clone(),
        created: facts.created.clone(),
        modified: facts.modified.clone(),
        made_by: facts.header_agents.clone(),
        source: first(|d| &d.source),
        source_shape: String::new(),
        url: first(|d| &d.url),
        captured: descriptions
            .iter()
            .find(|d| !d.captured.is_empty())
            .map(|d| d.captured.clone())
            .unwrap_or_default(),
    }
}

fn pages(facts: &MetsFacts) -> Vec<PageFact> {
    let described =
        |k: &str| k.eq_ignore_ascii_case("webpage") || k.eq_ignore_ascii_case("associatedobject");
    facts
        .logical
        .iter()
        .filter(|d| described(&d.kind))
        .map(|div| {
            let d = description_of(facts, div);
            PageFact {
                kind: div.kind.clone(),
                title: d.map_or_else(|| div.label.clone(), |d| d.title.clone()),
                url: d.map(|d| d.url.clone()).unwrap_or_default(),
                captured: d
                    .map(|d| d.captured.iter().map(|(_, c)| c.clone()).collect())
                    .unwrap_or_default(),
                mime: d.map(|d| d.mime.clone()).unwrap_or_default(),
            }
        })
        .collect()
}

/// Counts as a list, most frequent first.
pub(crate) fn ranked_counts(by: &BTreeMap<String, u64>) -> Vec<captures::Count> {
    let mut counts: Vec<captures::Count> =
        by.iter().map(|(key, count)| captures::Count { key: key.clone(), count: *count }).collect();
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
    counts
}

fn deduplication(facts: &MetsFacts) -> Deduplication {
    let notes = facts
        .events
        .iter()
        .filter(|e| e.event_type == "deduplication")
        .flat_map(|e| e.notes.iter().cloned())
        .collect();
    let t = &facts.object_totals;
    Deduplication {
        requires: t.requires.iter().cloned().collect(),
        requires_not_listed: t.requires_not_listed,
        notes,
    }
}

/// Names an agent identifier by the agent's name, when the METS has the agent.
pub(crate) fn agent_name<'a>(agents: &'a [AgentFact], id: &'a str) -> &'a str {
    agents.iter().find(|a| a.id == id && !a.name.is_empty()).map_or(id, |a| a.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lines_are_read_and_bad_ones_named_by_line() {
        let good = "!meta x\n\ncom,a)/ 20240101000000 {\"url\": \"http://a/\", \"length\": \"5\", \"offset\": \"0\", \"filename\": \"f\"}\n";
        let mut n = 0;
        read_index_lines(Path::new("i.cdxj"), good.as_bytes(), &mut |e, _| {
            assert_eq!(e.url, "http://a/");
            n += 1;
        })
        .unwrap();
        assert_eq!(n, 1);
        let bad = format!("{good}not a line\n");
        let err =
            read_index_lines(Path::new("i.cdxj"), bad.as_bytes(), &mut |_, _| {}).unwrap_err();
        assert!(err.to_string().starts_with("i.cdxj, line 4: "), "{err}");
    }
}
