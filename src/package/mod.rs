//! `webaip package`: a harvest becomes a complete submission package.
//!
//! The pipeline of ARCHITECTURE.md: the [`crate::sources::Source`] says what the harvest
//! holds; ARC files are migrated ([`crate::migrate`]) and WARC files checked and copied
//! byte-exact into `content/`, in parallel; logs and configuration are copied into `logs/`; the
//! METS is streamed ([`crate::mets::MetsBuilder`]); `manifest-sha512.txt` lists every file.
//!
//! The package is assembled in a hidden directory beside `--out` (`.NAME.XXXX.partial`) and
//! renamed only when complete, so a failed or killed run leaves nothing that looks like a
//! package; an existing package is replaced only with `force`.
//!
//! Accepting means agreeing: a WARC copied into the package is read once, record by record,
//! through the very check `audit --deep` makes (`audit::records::check_block`:
//! WARC-Block-Digest, WARC-Payload-Digest) and the reader's CRLF CRLF check. A record that
//! fails is not silently copied: the file is still kept byte-exact (preservation keeps what it
//! received, and rewriting a digest would destroy the evidence), but every such record is
//! named in the report (text and JSON, `warc_findings`), the container gets a PREMIS
//! `validation` event with outcome `failure` listing them, and the run exits with status 1,
//! as for other findings. The later audit then reports what the package already declared.

pub mod captures;
mod copy;
pub mod entities;
pub mod pandas;
mod quarantine;
mod sink;

pub use quarantine::ScanSummary;

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha512};

use crate::formats::digest::hex;
use crate::ids::Ids;
use crate::layout;
use crate::metadata::CuratorMetadata;
use crate::mets::writer::ContainerWriter;
use crate::mets::{MetsBuilder, ValidateOptions, validate_mets};
use crate::migrate::report::FileReport;
use crate::migrate::{MigrateOptions, MigratedRecord, output_name};
use crate::model::*;
use crate::profile::Profile;
use crate::sources::crawl_log::{CrawlLog, uri_hash};
use crate::sources::{ArchiveKind, Source, file_text, path_text};
use crate::stages::scan::{ScanEngine, ScanStage};
use crate::stages::{Item, Stage, Staged};

/// Examples listed per crawl-log discrepancy.
pub(crate) const MAX_EXAMPLES: usize = 100;

/// How virus checking is done.
#[derive(Debug, Clone)]
pub enum VirusCheck {
    /// Not done: recorded as one `not scanned` event on every container, and flagged.
    Disabled,
    /// Every payload streamed to this clamd.
    Clamd(crate::stages::scan::Clamd),
}

/// Options of `webaip package`.
#[derive(Debug, Clone)]
pub struct PackageOptions {
    /// The package directory to create.
    pub out: PathBuf,
    /// The curator's metadata.
    pub metadata: CuratorMetadata,
    /// The profile.
    pub profile: Profile,
    /// Minimal or full METS.
    pub mode: SerializationMode,
    /// gzip level of migrated containers.
    pub level: u32,
    /// Replace an existing package.
    pub force: bool,
    /// Fixed clock and seeded identifiers.
    pub deterministic: bool,
    /// Virus checking.
    pub virus_check: VirusCheck,
    /// Schema directory for validating the METS written (skipped when `None`).
    pub schemas: Option<PathBuf>,
    /// A command that tries to clean an infected file: run as `CMD INFECTED CLEANED` (through
    /// `sh -c`); when it exits 0 and the copy it wrote scans clean, the copy is packaged.
    pub cleaner: Option<String>,
    /// The capture date of records whose own date is unusable and that nothing else in their
    /// file dates (`--capture-date`; see the migration's date fallbacks).
    pub capture_date: Option<chrono::DateTime<chrono::Utc>>,
    /// Describe every harvested seed URL as a webpage (`--describe-seeds`), titled from its
    /// HTML `<title>` and dated by its capture.
    pub describe_seeds: bool,
}

/// Why an ARC could not be migrated into a package.
#[derive(Debug, thiserror::Error)]
pub enum MigrationFailure {
    /// The migration stopped with an error.
    #[error(transparent)]
    Failed(crate::migrate::MigrateError),
    /// It ran to its end, but the payload was not conserved (the migration report says where).
    #[error("payload not conserved")]
    NotConserved,
}

/// Why a package could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackageError {
    /// The package exists and `force` was not given.
    #[error("{0}: already exists (use --force to replace it)")]
    Exists(PathBuf),
    /// A file could not be read or written.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A name from the source or the package cannot be used: a link, FIFO or device where a
    /// file is expected, a path leaving its root, one too long.
    #[error(transparent)]
    Confined(#[from] crate::layout::ConfineError),
    /// Described webpages or associated objects could not be placed on captures.
    #[error(transparent)]
    Entities(#[from] crate::pages::EntitiesError),
    /// The curator's metadata cannot be used.
    #[error(transparent)]
    Metadata(#[from] crate::metadata::MetadataError),
    /// An infected record shares its gzip member with other records: it cannot be moved to
    /// `viral/` byte-exact on its own, and the profile allows no infected bytestream in
    /// content.
    #[error(
        "{input}: record {record_id} (in the gzip member at offset {offset}) is infected ({signature}), \
         and the member holds other records too, so it cannot be quarantined on its own; \
         recompress the WARC with one gzip member per record (e.g. `warcio recompress`) and package it again"
    )]
    InfectedInSharedMember {
        /// The WARC.
        input: PathBuf,
        /// The infected record.
        record_id: String,
        /// The offset of its gzip member.
        offset: u64,
        /// What clamd found.
        signature: String,
    },
    /// clamd failed: unreachable, gone, or silent past the timeout.
    #[error(transparent)]
    Scan(#[from] crate::stages::scan::ScanError),
    /// A capture source could not be read.
    #[error(transparent)]
    Capture(#[from] crate::sources::capture::CaptureError),
    /// The seed of a `--deterministic` run could not be sorted.
    #[error(
        "the seed of a --deterministic run (a temporary database in TMPDIR or SQLITE_TMPDIR): \
         {0}"
    )]
    Seed(#[source] rusqlite::Error),
    /// A mirror's link map could not be read while a page's links were rewritten.
    #[error("{file}: links not rewritten: {source}")]
    LinkMap {
        /// The page.
        file: String,
        /// The cause.
        #[source]
        source: crate::sources::mirror_files::ScratchError,
    },
    /// A capture source yielded nothing.
    #[error("{}: no capture found in this {shape} harvest", root.display())]
    NoCaptures {
        /// The source.
        root: PathBuf,
        /// Its shape.
        shape: String,
    },
    /// A payload changed while the run read it.
    #[error("{file}: payload changed while packaging ({read} bytes read, {expected} expected)")]
    PayloadChanged {
        /// The source file.
        file: String,
        /// Bytes read.
        read: u64,
        /// Bytes the source measured.
        expected: u64,
    },
    /// A WARC to be copied cannot be read.
    #[error("{}: not a readable WARC: {source}", path.display())]
    Warc {
        /// The file.
        path: PathBuf,
        /// What the reader met.
        #[source]
        source: crate::formats::warc::WarcError,
    },
    /// An ARC could not be migrated.
    #[error("{}: migration failed: {failure}", input.display())]
    Migration {
        /// The ARC.
        input: PathBuf,
        /// Why.
        #[source]
        failure: MigrationFailure,
    },
    /// A report for the package could not be written as JSON.
    #[error("{path}: {source}")]
    Json {
        /// The report's path in the package.
        path: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The METS written could not be validated at all.
    #[error("the METS written cannot be validated: {0}")]
    MetsUnchecked(#[from] crate::mets::validate::ValidateError),
    /// The METS written is invalid: no package is made.
    #[error(
        "the METS written is invalid ({errors} errors; first: line {line:?} [{rule}] {message}); no package was made"
    )]
    MetsInvalid {
        /// How many errors.
        errors: usize,
        /// The first one's line.
        line: Option<u64>,
        /// Its rule.
        rule: String,
        /// What it says.
        message: String,
    },
    /// Another run holds every directory name this run could build in.
    #[error("{}: cannot lock a directory to build the package in", .0.display())]
    Locked(PathBuf),
    /// Worker threads could not be started.
    #[error("cannot start scanning threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    /// A broken invariant of webaip itself (a bug, never the input's fault).
    #[error("internal error: {0}")]
    Internal(&'static str),
}

/// The webpages and associated objects a package describes: the curator's `[[page]]` tables,
/// then, with `--describe-seeds`, every seed URL the curator did not describe.
pub(crate) fn entities_to_describe(
    opts: &PackageOptions,
    seeds: &[String],
) -> Result<Vec<PageEntity>, PackageError> {
    let mut out = opts.metadata.page_entities().map_err(|e| crate::metadata::MetadataError {
        path: "the metadata file".into(),
        problem: e.into(),
    })?;
    if opts.describe_seeds {
        for seed in seeds {
            let key = crate::pages::url_key(seed);
            if out.iter().any(|e| crate::pages::url_key(&e.url) == key) {
                continue;
            }
            out.push(PageEntity::webpage(seed.clone(), EntityOrigin::Seed));
        }
    }
    Ok(out)
}

/// Starts the METS of a new sSIP; the descriptive header is filled in by [`finish_header`] once
/// the whole source has been read.
pub(crate) fn new_mets(
    objid: &str,
    now: chrono::DateTime<chrono::Utc>,
    opts: &PackageOptions,
    root: &Path,
) -> Result<MetsBuilder, PackageError> {
    let header = PackageHeader {
        objid: objid.to_string(),
        package_type: PackageType::Ssip,
        label: String::new(),
        created: now,
        organisation: Organisation::default(),
        description: Description::default(),
        rights: Rights { access: Access::Restricted, statement: String::new() },
        agents: vec![],
    };
    MetsBuilder::new(header, opts.profile.clone(), opts.mode).map_err(io_err(root))
}

/// Sets the resolved description, rights and organisation, and puts the organisation and
/// webaip first among the agents; agents added while packaging (the scanner) stay after them.
pub(crate) fn finish_header(
    mets: &mut MetsBuilder,
    description: Description,
    rights: Rights,
    organisation: Organisation,
) {
    let h = mets.header_mut();
    h.label = description.title.clone();
    h.description = description;
    h.rights = rights;
    let mut agents = vec![
        Agent {
            id_type: "repository code".into(),
            id: organisation.code.clone(),
            name: organisation.name.clone(),
            agent_type: "organization".into(),
            version: None,
            note: None,
        },
        Agent {
            id_type: "local".into(),
            id: "webaip".into(),
            name: "webaip".into(),
            agent_type: "software".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
            note: None,
        },
    ];
    agents.append(&mut h.agents);
    h.agents = agents;
    h.organisation = organisation;
}

pub(crate) fn io_err(path: &Path) -> impl Fn(io::Error) -> PackageError + '_ {
    move |source| PackageError::Io { path: path.to_path_buf(), source }
}

/// One container of the package.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerReport {
    /// The ARC or WARC it came from (control characters and bytes that are not UTF-8 escaped).
    pub input: String,
    /// Its path in the package.
    pub path: String,
    /// Migrated (ARC) or copied (WARC).
    pub action: String,
    /// Records in the container.
    pub records: u64,
    /// Records listed in the METS.
    pub listed: u64,
    /// The migration report (ARC inputs).
    pub migration: Option<FileReport>,
    /// Records of a copied WARC that `audit --deep` would reject: a WARC-Block-Digest or
    /// WARC-Payload-Digest that does not match the bytes, or a block not followed by CRLF CRLF.
    pub warc_findings: u64,
    /// The first of them, with the record and its offset.
    pub warc_finding_examples: Vec<WarcFinding>,
    /// Bytes read from the input (a copied WARC is read once: its size).
    pub bytes_read: Option<u64>,
}

/// A record of a copied WARC that does not agree with its own header.
#[derive(Debug, Clone, Serialize)]
pub struct WarcFinding {
    /// Offset of the record (of its gzip member) in the file.
    pub offset: u64,
    /// Its WARC-Record-ID.
    pub record_id: String,
    /// What is wrong, in the words `audit --deep` uses.
    pub message: String,
}

impl std::fmt::Display for WarcFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "record {} at offset {}: {}", self.record_id, self.offset, self.message)
    }
}

/// PREMIS event type of the check a copied WARC gets (LoC preservation vocabulary).
const VALIDATION_EVENT: &str = "validation";
/// Its URI.
const VALIDATION_EVENT_URI: &str = "http://id.loc.gov/vocabulary/preservation/eventType/val";

/// crawl.log against the records.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CrawlLogComparison {
    /// Lines in the log.
    pub lines: u64,
    /// Lines that did not parse.
    pub unparsed: u64,
    /// Distinct URIs the log says were fetched.
    pub fetched: u64,
    /// Fetched according to the log, but no record holds them.
    pub fetched_without_record: u64,
    /// Examples.
    pub fetched_without_record_examples: Vec<String>,
    /// Records whose URI the log does not list as fetched.
    pub records_without_log_line: u64,
    /// Examples.
    pub records_without_log_line_examples: Vec<String>,
}

/// What `package` did.
#[derive(Debug, Clone, Serialize)]
pub struct PackageReport {
    /// The package directory.
    pub package: PathBuf,
    /// Its identifier (METS OBJID).
    pub objid: String,
    /// Shape of the source.
    pub source_shape: crate::sources::Shape,
    /// What the source held.
    pub found: Vec<String>,
    /// What a source of its shape usually has but this one lacks.
    pub missing: Vec<String>,
    /// Entries of the source not packaged, and why (links, FIFOs, devices, over-long names).
    pub refused: Vec<(String, String)>,
    /// Containers.
    pub containers: Vec<ContainerReport>,
    /// Log and configuration files packaged.
    pub logs: u64,
    /// What the metadata lacked or what was taken from the source.
    pub metadata_notes: Vec<String>,
    /// crawl.log comparison, when there is a crawl.log.
    pub crawl_log: Option<CrawlLogComparison>,
    /// How viruses were checked.
    pub virus_check: String,
    /// Virus scanning results.
    pub scan: ScanSummary,
    /// Seconds spent waiting for clamd's verdicts.
    pub scan_seconds: f64,
    /// The METS's own validation: errors found (0 expected).
    pub mets_errors: u64,
    /// Whether the METS was checked against the XML schemas too.
    pub mets_xsd_checked: bool,
    /// Files in the package, bytes in the package.
    pub files: u64,
    /// Bytes.
    pub bytes: u64,
    /// Leftovers of earlier runs found beside the package, and what was done with them.
    pub leftovers: Vec<String>,
    /// The webpages and associated objects described.
    pub entities: crate::pages::EntitiesReport,
    /// Wall-clock seconds.
    pub seconds: f64,
}

struct ContainerResult {
    index: usize,
    /// The container's METS section, its records described as they were written.
    writer: ContainerWriter,
    file: PackageFile,
    report: ContainerReport,
    uris: HashSet<u64>,
    without_log: (u64, Vec<String>),
    dates: (Option<DateTime<Utc>>, Option<DateTime<Utc>>),
    /// The ARC described beside the container, with the migration event.
    arc: Option<(PremisObject, Event)>,
    /// The viral twin its infected records went to, closed, its records described.
    viral: Option<sink::ClosedContainer>,
    /// What the scan found in it and its twin.
    scan: quarantine::ContainerScan,
}

/// Builds the package of `source`. `progress` receives bytes read, as they are read.
pub fn build_package(
    source: &Source,
    opts: &PackageOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PackageReport, PackageError> {
    let started = Instant::now();
    let staging = Staging::new(&opts.out, opts.force)?;
    let root = staging.root.clone();
    let ids = source_ids(source, opts)?;
    let now = ids.now();
    let objid = format!("urn:uuid:{}", ids.uuid());

    let crawl_log = match &source.crawl_log {
        Some(p) => Some(CrawlLog::read(p).map_err(io_err(p))?),
        None => None,
    };
    let mut mets = new_mets(&objid, now, opts, &root)?;
    mets.describe_entities(entities_to_describe(opts, &source.seeds)?);

    let names = container_names(source);

    // One engine for the run: identical payloads of all containers are scanned once.
    let engine = match &opts.virus_check {
        VirusCheck::Clamd(c) => Some(ScanEngine::new(c.clone())?),
        VirusCheck::Disabled => None,
    };
    // Every record is described as it is written, its events naming clamd's version.
    let version = match &opts.virus_check {
        VirusCheck::Clamd(clamd) => Some(quarantine::register_scanner(clamd, &mut mets)?),
        VirusCheck::Disabled => None,
    };
    let ctx = ContainerCtx {
        root: &root,
        scanner: engine.as_ref(),
        version: version.as_deref(),
        rel: String::new(),
        ids: &ids,
        opts,
        log: crawl_log.as_ref(),
        now,
        progress,
    };
    let results = write_containers(source, &names, &mut mets, &ctx)?;
    let mut results = results;

    // Viral containers made while scanning: (path, sha512, size).
    let mut extra_files: Vec<(String, String, u64)> = Vec::new();
    // The virus check of every container (its records are described already).
    let mut scan_summary = ScanSummary::default();
    let (virus_note, scan_seconds) =
        container_virus_checks(&mut results, &mut mets, &ctx, &mut scan_summary, &mut extra_files)?;

    let mut capture: (Option<DateTime<Utc>>, Option<DateTime<Utc>>) = (None, None);
    let mut all_uris = HashSet::new();
    let mut without_log = (0u64, Vec::new());
    let mut containers = Vec::new();
    let mut manifest: Vec<(String, String)> = Vec::new();
    let mut bytes = 0u64;
    for (path, sha, size) in extra_files {
        manifest.push((path, sha));
        bytes += size;
    }
    for r in results {
        capture.0 = min_opt(capture.0, r.dates.0);
        capture.1 = max_opt(capture.1, r.dates.1);
        all_uris.extend(r.uris);
        without_log.0 += r.without_log.0;
        for e in r.without_log.1 {
            if without_log.1.len() < MAX_EXAMPLES {
                without_log.1.push(e);
            }
        }
        let mut file = r.file;
        file.object
            .significant_properties
            .push((SIGNIFICANT_WARC_RECORDS.into(), r.report.records.to_string()));
        if let Some((arc, event)) = r.arc {
            file.described_sources.push(arc);
            file.events.insert(0, event);
        }
        manifest.push((file.path.clone(), file.sha512.clone()));
        bytes += file.size;
        containers.push(r.report);
        mets.finish_container(r.writer, file).map_err(io_err(&root))?;
    }
    if let Some(log) = &crawl_log {
        capture.0 = capture.0.or(log.first);
        capture.1 = capture.1.or(log.last);
    }

    // Logs and configuration, byte-exact.
    let mut logs = 0u64;
    for aux in &source.aux {
        let (rel, sha, size) = add_log(&mut mets, &root, &aux.path, &aux.relative, now, progress)?;
        manifest.push((rel, sha));
        bytes += size;
        logs += 1;
    }
    // Each migration's report travels in the package, where its migration event points.
    for (c, archive) in containers.iter().zip(&source.archives) {
        if let Some(m) = &c.migration {
            let rel = migration_report_path(&c.path);
            let json =
                packaged_migration_report(m, &rel, c, source.root.as_deref(), &archive.path)?;
            let (rel, sha, size) = add_generated_log(&mut mets, &root, &rel, &json, now)?;
            manifest.push((rel, sha));
            bytes += size;
            logs += 1;
        }
    }

    let (description, rights, organisation, metadata_notes) =
        opts.metadata.resolve((&source.seeds, "seeds.txt"), capture);
    finish_header(&mut mets, description, rights, organisation);
    let entities = entities::resolve_entities(&mut mets, &root)?;
    for c in &mut containers {
        c.listed += entities.records_listed.get(&c.path).copied().unwrap_or(0);
    }
    let (mets_errors, mets_xsd_checked, files, mets_bytes) =
        staging.write_mets(mets, &mut manifest, opts)?;
    bytes += mets_bytes;

    let crawl_log = crawl_log.map(|log| compare_crawl_log(&log, source, &all_uris, without_log));

    let leftovers = staging.leftovers.clone();
    let out = staging.commit()?;
    Ok(PackageReport {
        package: out,
        objid,
        source_shape: source.shape,
        found: source.found.clone(),
        missing: source.missing.clone(),
        refused: source.refused.clone(),
        containers,
        logs,
        metadata_notes,
        crawl_log,
        virus_check: virus_note,
        scan: scan_summary,
        scan_seconds,
        mets_errors,
        mets_xsd_checked,
        files,
        bytes,
        leftovers,
        entities,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Environment variable read by `Staging` only: a test hook that makes a run fail at a
/// named point, so tests can show that the next run recovers. Comma-separated:
/// `between-renames` aborts the process (as a kill would) after the old package has been
/// moved aside and before it is removed (or, in the two-step fallback, before the new one is
/// moved in); `no-exchange` behaves as if the file system had no `RENAME_EXCHANGE`.
pub(crate) const FAIL_AT_ENV: &str = "WEBAIP_FAIL_AT";

/// The virus check of every container, its records described already: with no scanner, the
/// package's "not scanned" event on every container; with one, each container's checks (and
/// its viral twin's, `extra_files`). The report's note and the seconds spent waiting for clamd.
fn container_virus_checks(
    results: &mut [ContainerResult],
    mets: &mut MetsBuilder,
    ctx: &ContainerCtx<'_>,
    summary: &mut ScanSummary,
    extra_files: &mut Vec<(String, String, u64)>,
) -> Result<(String, f64), PackageError> {
    let (opts, ids, now) = (ctx.opts, ctx.ids, ctx.now);
    let Some(engine) = ctx.scanner else {
        let objects = results.iter().map(|r| r.file.object.id.clone()).collect();
        let event = no_scan_event(ids, opts, now, objects);
        for r in results.iter_mut() {
            r.file.object.events.push(event.id.clone());
        }
        mets.add_package_event(event);
        return Ok((NO_SCAN_NOTE.to_string(), 0.0));
    };
    let version = ctx.version.unwrap_or_default();
    for r in results.iter_mut() {
        quarantine::add_container_virus_checks(
            version,
            r,
            mets,
            ctx.root,
            ids,
            opts,
            now,
            summary,
            extra_files,
        )?;
    }
    let counts = engine.counts();
    summary.scanned = counts.scanned;
    summary.reused = counts.reused;
    Ok((summary.note(version), counts.waited_seconds))
}

/// The identifiers of a Heritrix-path run: seeded from its archives and side files for
/// `--deterministic`, random otherwise.
fn source_ids(source: &Source, opts: &PackageOptions) -> Result<Ids, PackageError> {
    if !opts.deterministic {
        return Ok(Ids::random());
    }
    let root = source.root.as_deref();
    let name = |p: &Path| match root {
        Some(r) => crate::sources::name_text(r, p),
        None => file_text(p),
    };
    let files: Vec<(String, &Path)> = source
        .archives
        .iter()
        .map(|a| (name(&a.path), a.path.as_path()))
        .chain(
            source
                .aux
                .iter()
                .map(|a| (layout::in_dir(layout::LOGS_DIR, &a.relative), a.path.as_path())),
        )
        .collect();
    Ok(Ids::seeded(input_seed("webaip-package", &files)?))
}

/// Container names: migrated ARCs get .warc.gz names, WARCs keep theirs; clashes keep the
/// input's full name. Names are escaped (control characters, bytes that are not UTF-8): a file
/// name cannot put a line break into the package's own file names, the METS or a WARC field.
fn container_names(source: &Source) -> Vec<String> {
    let names: Vec<String> = source
        .archives
        .iter()
        .map(|a| match a.kind {
            ArchiveKind::Arc => output_name(Path::new(&file_text(&a.path))),
            ArchiveKind::Warc => file_text(&a.path),
        })
        .collect();
    names
        .iter()
        .zip(&source.archives)
        .map(|(n, a)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                format!("{}.warc.gz", file_text(&a.path))
            } else {
                n.clone()
            }
        })
        .collect()
}

/// Writes every archive's container, in parallel (`ctx`: the run's settings; its `rel` is set
/// per container), their METS sections begun here in container order; the results in that
/// order.
fn write_containers(
    source: &Source,
    names: &[String],
    mets: &mut MetsBuilder,
    ctx: &ContainerCtx<'_>,
) -> Result<Vec<ContainerResult>, PackageError> {
    let mut writers = Vec::new();
    for _ in &source.archives {
        writers.push(Mutex::new(Some(
            mets.begin_container(GroupUse::DigitalManifestation).map_err(io_err(ctx.root))?,
        )));
    }
    // With a scanner, each container's viral twin has its METS section ready, taken when its
    // first infected record is written: begun here, in container order, so the sections'
    // order and IDs do not depend on which container's thread finds one first. One never
    // used is dropped (its spill files with it) and leaves no trace in the METS.
    let mut viral_writers = Vec::new();
    if ctx.scanner.is_some() {
        for _ in &source.archives {
            viral_writers.push(Mutex::new(Some(
                mets.begin_container(GroupUse::ViralFiles).map_err(io_err(ctx.root))?,
            )));
        }
    }
    let results: Vec<Result<ContainerResult, PackageError>> = source
        .archives
        .par_iter()
        .enumerate()
        .map(|(i, archive)| {
            let writer = writers[i]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .ok_or(PackageError::Internal("container writer used twice"))?;
            let viral = viral_writers
                .get(i)
                .and_then(|w| w.lock().unwrap_or_else(|p| p.into_inner()).take());
            let rel = layout::in_dir(layout::CONTENT_DIR, &names[i]);
            let ctx = ContainerCtx { rel, ..*ctx };
            match archive.kind {
                ArchiveKind::Arc => ctx.migrate(i, &archive.path, (writer, viral)),
                ArchiveKind::Warc => ctx.copy_warc(i, &archive.path, (writer, viral)),
            }
        })
        .collect();
    let mut results: Vec<ContainerResult> = results.into_iter().collect::<Result<_, _>>()?;
    results.sort_by_key(|r| r.index);
    Ok(results)
}

/// A migration's report as the package keeps it: the container named by its package path (the
/// run wrote it under a temporary name), the ARC as named in the source (`arcs/NAME.arc.gz`,
/// not where the source sat on the machine that packaged it), the quarantine by its twin's
/// path, and without the run's duration: none of those is a fact about the bytes, and each
/// would make --deterministic runs, or one harvest packaged from two places, differ.
fn packaged_migration_report(
    m: &crate::migrate::report::FileReport,
    rel: &str,
    c: &ContainerReport,
    source_root: Option<&Path>,
    arc: &Path,
) -> Result<Vec<u8>, PackageError> {
    let json_err = |source| PackageError::Json { path: rel.to_string(), source };
    let mut v = serde_json::to_value(m).map_err(json_err)?;
    let input = match source_root {
        Some(root) => crate::sources::name_text(root, arc),
        None => file_text(arc),
    };
    if let Some(o) = v.as_object_mut() {
        o.insert("input".into(), serde_json::Value::String(input));
        o.insert("output".into(), serde_json::Value::String(c.path.clone()));
        if let Some(q) = o.get_mut("quarantine").and_then(|q| q.as_object_mut()) {
            let viral = layout::viral_twin(&c.path);
            q.insert("path".into(), serde_json::Value::String(viral));
        }
        o.remove("seconds");
    }
    serde_json::to_vec_pretty(&v).map_err(json_err)
}

/// What the crawl log says against the records written: fetched URLs without a record, and
/// records without a log line (`without_log`: their count and examples).
fn compare_crawl_log(
    log: &CrawlLog,
    source: &Source,
    all_uris: &HashSet<u64>,
    without_log: (u64, Vec<String>),
) -> CrawlLogComparison {
    let (missing, examples) = source
        .crawl_log
        .as_ref()
        .map(|p| log.missing_from(p, all_uris, MAX_EXAMPLES))
        .transpose()
        .ok()
        .flatten()
        .unwrap_or_default();
    CrawlLogComparison {
        lines: log.lines,
        unparsed: log.unparsed,
        fetched: log.fetched_count() as u64,
        fetched_without_record: missing,
        fetched_without_record_examples: examples,
        records_without_log_line: without_log.0,
        records_without_log_line_examples: without_log.1,
    }
}

fn fail_at(point: &str) -> bool {
    std::env::var(FAIL_AT_ENV).is_ok_and(|v| v.split(',').any(|p| p.trim() == point))
}

/// A package being assembled in a hidden directory beside its final place.
///
/// The directory (`.NAME.XXXXXX.partial`) is locked with `flock` for as long as the run
/// builds it. Each run first looks at what earlier runs of the same output name left beside
/// it: a partial directory whose lock it can take belongs to a run that died, and is removed;
/// one still locked belongs to a live run and is left alone (and reported). An old package
/// left aside by a two-step replacement that was killed half-way (`.NAME.XXXXXX.old`) is put
/// back when the package itself is missing, and removed otherwise.
pub(crate) struct Staging {
    tmp: Option<tempfile::TempDir>,
    /// The directory being filled.
    pub root: PathBuf,
    /// The lock held on it while it is built (released when the run ends).
    _lock: File,
    out: PathBuf,
    parent: PathBuf,
    name: String,
    /// What was found and done about earlier runs' leftovers, for the report.
    pub leftovers: Vec<String>,
}

/// Suffix of the directory a run builds its package in.
const PARTIAL: &str = ".partial";
/// Suffix of an old package moved aside by the two-step replacement.
const OLD: &str = ".old";
/// Length of the random part of those names.
const RAND_LEN: usize = 6;

impl Staging {
    /// A hidden `.NAME.XXXXXX.partial` directory beside `out`, locked, with `content/` and
    /// `logs/`, after earlier runs' leftovers are dealt with.
    pub(crate) fn new(out: &Path, force: bool) -> Result<Staging, PackageError> {
        let parent = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        std::fs::create_dir_all(&parent).map_err(io_err(&parent))?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "package".into());
        let leftovers = clean_leftovers(&parent, &name, out);
        if std::fs::symlink_metadata(out).is_ok() && !force {
            return Err(PackageError::Exists(out.to_path_buf()));
        }
        // Create, open, lock, and check the name still is what was locked: a concurrent
        // clean-up that took the lock first (in the instant before ours) removed it; try again.
        for _ in 0..3 {
            let tmp = tempfile::Builder::new()
                .prefix(&format!(".{name}."))
                .suffix(PARTIAL)
                .rand_bytes(RAND_LEN)
                .tempdir_in(&parent)
                .map_err(io_err(&parent))?;
            let root = tmp.path().to_path_buf();
            let Ok(lock) = layout::lock_dir(&root) else { continue };
            let (Ok(held), Ok(now)) = (lock.metadata(), std::fs::symlink_metadata(&root)) else {
                continue;
            };
            if (held.dev(), held.ino()) != (now.dev(), now.ino()) {
                continue;
            }
            for d in ["content", "logs"] {
                std::fs::create_dir_all(root.join(d)).map_err(io_err(&root))?;
            }
            return Ok(Staging {
                tmp: Some(tmp),
                root,
                _lock: lock,
                out: out.to_path_buf(),
                parent,
                name,
                leftovers,
            });
        }
        Err(PackageError::Locked(parent.to_path_buf()))
    }

    /// Writes METS.xml and manifest-sha512.txt, then validates the METS; an invalid METS
    /// fails the package. Returns (errors, XSD checked, files in the package, METS bytes).
    pub(crate) fn write_mets(
        &self,
        mets: MetsBuilder,
        manifest: &mut Vec<(String, String)>,
        opts: &PackageOptions,
    ) -> Result<(u64, bool, u64, u64), PackageError> {
        let root = &self.root;
        let mets_path = root.join(layout::METS);
        mets.finish(File::create(&mets_path).map_err(io_err(&mets_path))?)
            .map_err(io_err(&mets_path))?;
        let (mets_size, mets_sha) = hash_file(&mets_path)?;
        manifest.push((layout::METS.into(), mets_sha));
        manifest.sort();
        let manifest_path = root.join(layout::MANIFEST);
        let mut m = String::new();
        for (path, sha) in manifest.iter() {
            m.push_str(&layout::manifest_line(sha, path));
        }
        std::fs::write(&manifest_path, m).map_err(io_err(&manifest_path))?;
        // The METS checks itself before the package is declared complete.
        let check = validate_mets(
            &mets_path,
            &ValidateOptions { schemas: opts.schemas.clone(), profile: Some(opts.profile.clone()) },
        )?;
        let errors: Vec<_> = check
            .findings
            .iter()
            .filter(|f| f.severity == crate::mets::validate::Severity::Error)
            .collect();
        if let Some(first) = errors.first() {
            return Err(PackageError::MetsInvalid {
                errors: errors.len(),
                line: first.line,
                rule: first.rule.clone(),
                message: first.message.clone(),
            });
        }
        let xsd = matches!(check.xsd, crate::mets::validate::XsdStatus::Validated { .. });
        Ok((0, xsd, manifest.len() as u64 + 1, mets_size))
    }

    /// Moves the finished package into place. An existing package (with `force`) is swapped
    /// with the new one in one step (`renameat2(RENAME_EXCHANGE)`), so the name always holds a
    /// whole package, old or new; the old one, now under the partial name, is then removed.
    /// Where the file system has no exchange, the old package is first renamed aside to
    /// `.NAME.XXXXXX.old` and the new one renamed in: a kill between the two leaves the old
    /// package under that name, which the next run puts back (see [`Staging`]).
    pub(crate) fn commit(mut self) -> Result<PathBuf, PackageError> {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        // Temporary directories are created private; a package is not.
        crate::migrate::set_mode(&self.root, 0o755).map_err(io_err(&self.root))?;
        let kept = self.tmp.take().map(|t| t.keep()).unwrap_or_else(|| self.root.clone());
        let out = self.out.clone();
        let exists = std::fs::symlink_metadata(&out).is_ok();
        if !exists {
            // NOREPLACE: a package that appeared meanwhile is not replaced without --force.
            match renameat_with(CWD, &kept, CWD, &out, RenameFlags::NOREPLACE) {
                Ok(()) => return Ok(out),
                Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                    std::fs::rename(&kept, &out).map_err(io_err(&out))?;
                    return Ok(out);
                }
                Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => {
                    let _ = std::fs::remove_dir_all(&kept);
                    return Err(PackageError::Exists(out));
                }
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&kept);
                    return Err(io_err(&out)(e.into()));
                }
            }
        }
        let exchange = if fail_at("no-exchange") {
            Err(rustix::io::Errno::INVAL)
        } else {
            renameat_with(CWD, &kept, CWD, &out, RenameFlags::EXCHANGE)
        };
        match exchange {
            Ok(()) => {
                // `kept` now names the old package.
                if fail_at("between-renames") {
                    std::process::abort();
                }
                if let Err(e) = std::fs::remove_dir_all(&kept) {
                    self.leftovers.push(format!(
                        "the old package, moved to {}, could not be removed: {e}",
                        kept.display()
                    ));
                }
            }
            Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                let old = tempfile::Builder::new()
                    .prefix(&format!(".{}.", self.name))
                    .suffix(OLD)
                    .rand_bytes(RAND_LEN)
                    .tempdir_in(&self.parent)
                    .map_err(io_err(&self.parent))?
                    .keep();
                // Renaming a directory onto an empty one replaces it.
                std::fs::rename(&out, &old).map_err(io_err(&out))?;
                if fail_at("between-renames") {
                    std::process::abort();
                }
                if let Err(e) = std::fs::rename(&kept, &out) {
                    // Put the old package back before failing.
                    let _ = std::fs::rename(&old, &out);
                    return Err(io_err(&out)(e));
                }
                let _ = std::fs::remove_dir_all(&old);
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&kept);
                return Err(io_err(&out)(e.into()));
            }
        }
        Ok(out)
    }
}

/// The random part of `.NAME.XXXXXX<suffix>` when `entry` is exactly that.
fn leftover_of<'a>(entry: &'a str, name: &str, suffix: &str) -> Option<&'a str> {
    let mid =
        entry.strip_prefix('.')?.strip_prefix(name)?.strip_prefix('.')?.strip_suffix(suffix)?;
    (mid.len() == RAND_LEN && mid.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(mid)
}

/// Deals with what killed runs of the same output name left beside it; returns what it did.
fn clean_leftovers(parent: &Path, name: &str, out: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else { return notes };
    let mut partials = Vec::new();
    let mut olds = Vec::new();
    for e in entries.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        // Only directories of ours: never a link, never a file.
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if leftover_of(&entry, name, PARTIAL).is_some() {
            partials.push(e.path());
        } else if leftover_of(&entry, name, OLD).is_some() {
            olds.push(e.path());
        }
    }
    olds.sort();
    for old in olds {
        let Ok(_lock) = layout::lock_dir(&old) else { continue };
        let missing = std::fs::symlink_metadata(out).is_err();
        // Earlier versions kept the old package one level down, in `package/`.
        let package = [old.clone(), old.join("package")]
            .into_iter()
            .find(|p| crate::layout::regular_metadata(&p.join(crate::layout::METS)).is_ok());
        if missing && let Some(package) = package {
            match std::fs::rename(&package, out) {
                Ok(()) => {
                    notes.push(format!(
                        "put back {} as {}: a replacement was killed half-way",
                        package.display(),
                        out.display()
                    ));
                    let _ = std::fs::remove_dir(&old);
                }
                Err(e) => notes.push(format!("could not put back {}: {e}", old.display())),
            }
        } else {
            match std::fs::remove_dir_all(&old) {
                Ok(()) => {
                    notes.push(format!("removed {} (an old package set aside)", old.display()))
                }
                Err(e) => notes.push(format!("could not remove {}: {e}", old.display())),
            }
        }
    }
    for partial in partials {
        match layout::lock_dir(&partial) {
            Ok(_lock) => match std::fs::remove_dir_all(&partial) {
                Ok(()) => {
                    notes.push(format!("removed {} (left by a run that died)", partial.display()))
                }
                Err(e) => notes.push(format!("could not remove {}: {e}", partial.display())),
            },
            Err(_) => notes.push(format!("left {}: another run is building it", partial.display())),
        }
    }
    notes
}

struct ContainerCtx<'a> {
    root: &'a Path,
    scanner: Option<&'a Arc<ScanEngine>>,
    /// clamd's version, when there is a scanner.
    version: Option<&'a str>,
    rel: String,
    ids: &'a Ids,
    opts: &'a PackageOptions,
    log: Option<&'a CrawlLog>,
    now: DateTime<Utc>,
    progress: &'a (dyn Fn(u64) + Sync),
}

/// Per-container bookkeeping while records go by.
struct Tally<'a> {
    log: Option<&'a CrawlLog>,
    uris: HashSet<u64>,
    without_log: (u64, Vec<String>),
    dates: (Option<DateTime<Utc>>, Option<DateTime<Utc>>),
}

impl Tally<'_> {
    /// `inferred`: the date is not the record's own (X-Webaip-Date-Source), so it does not
    /// widen the capture dates. Only captures widen them: not the ARC's `filedesc` (migrated
    /// to a `metadata` record, dated when the ARC file was opened, often after its last
    /// capture), a `warcinfo`, a `metadata` or webaip's own records.
    fn record(&mut self, uri: Option<&str>, warc_type: &str, date: &str, inferred: bool) {
        let captured = matches!(warc_type, "response" | "resource" | "revisit" | "request")
            && !uri
                .is_some_and(|u| u.starts_with("metadata://webaip/") || u.starts_with("filedesc:"));
        if captured
            && !inferred
            && let Ok(d) = crate::formats::dates::parse_rfc3339(date)
        {
            self.dates.0 = min_opt(self.dates.0, Some(d));
            self.dates.1 = max_opt(self.dates.1, Some(d));
        }
        let Some(uri) = uri.filter(|_| captured && matches!(warc_type, "response" | "resource"))
        else {
            return;
        };
        self.uris.insert(uri_hash(uri));
        if let Some(log) = self.log
            && !log.was_fetched(uri)
        {
            self.without_log.0 += 1;
            if self.without_log.1.len() < MAX_EXAMPLES {
                self.without_log.1.push(uri.to_string());
            }
        }
    }
}

impl ContainerCtx<'_> {
    /// A format as a migration event names it: `ARC 1.1 (fmt/410)`.
    fn designation(f: &Format) -> String {
        let name = if f.name == "Internet Archive" { "ARC" } else { f.name.as_str() };
        let version = f.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
        let puid = f.pronom.as_deref().map(|p| format!(" ({p})")).unwrap_or_default();
        format!("{name}{version}{puid}")
    }

    /// A container of the package, in `format` (the WARC version it really holds).
    fn container_file(
        &self,
        size: u64,
        sha512: String,
        original: &str,
        format: Format,
    ) -> PackageFile {
        PackageFile {
            path: self.rel.clone(),
            mime: "application/warc".into(),
            size,
            sha512: sha512.clone(),
            created: self.now,
            object: PremisObject {
                id_type: "local".into(),
                id: self.rel.clone(),
                size,
                sha512,
                format,
                original_name: Some(original.to_string()),
                significant_properties: vec![],
                relationships: vec![],
                events: vec![],
            },
            events: vec![],
            described_sources: vec![],
        }
    }

    /// The PREMIS event that records, on a copied container, the records `audit --deep` will
    /// reject: the package keeps the file as received and says so.
    fn validation_event(&self, findings: &copy::WarcFindings) -> Event {
        let shown: Vec<String> = findings.examples.iter().take(10).map(|f| f.to_string()).collect();
        Event {
            id: self.ids.uuid().to_string(),
            event_type: VALIDATION_EVENT.into(),
            event_type_uri: Some(VALIDATION_EVENT_URI.into()),
            date_time: self.now,
            detail: Some(format!(
                "program=\"webaip\"; version=\"{}\"; WARC-Block-Digest, WARC-Payload-Digest and record ends checked as audit --deep checks them; the file is kept byte-exact as received",
                env!("CARGO_PKG_VERSION")
            )),
            outcome: "failure".into(),
            outcome_detail: Some(format!(
                "{} finding(s) in records that do not agree with their WARC headers: {}{}",
                findings.count,
                shown.join("; "),
                if findings.count as usize > shown.len() { "; ..." } else { "" }
            )),
            agents: vec![("local".into(), "webaip".into(), "executing program".into())],
            objects: vec![("local".into(), self.rel.clone(), "source".into())],
        }
    }

    /// With a scanner, what describes this container's records with their verdicts' events.
    /// Its identifiers are derived from the container's name (unique in the package): the
    /// containers are written in parallel, and a deterministic run must not depend on which
    /// thread draws an identifier first.
    /// Describes this container's records as they are written. Without a scanner there are no
    /// verdicts, so no events (the version is then never written).
    fn verdict_events(&self, viral_rel: String) -> quarantine::VerdictEvents<'_> {
        let ids = self.ids.derive(&format!("{}\nvirus check", self.rel));
        quarantine::VerdictEvents::new(
            ids,
            self.opts,
            self.now,
            self.version.unwrap_or(""),
            (self.rel.clone(), viral_rel),
        )
    }

    /// Migrates an ARC to a WARC container. The migration (`migrate::migrate_into`, as `webaip
    /// migrate` runs it: parallel compression, conservation checked on what was written) writes
    /// through this container's [`sink::ContainerSink`] and, when a scanner sends a record
    /// there, its viral twin's (created on first use); each record is described to its sink's
    /// METS section the moment it is written, with the ranges the sink's writer gave.
    fn migrate(
        &self,
        index: usize,
        input: &Path,
        (writer, viral_writer): (ContainerWriter, Option<ContainerWriter>),
    ) -> Result<ContainerResult, PackageError> {
        let name = file_text(input);
        let file_ids = self.ids.derive(&name);
        // Payloads are scanned inside the migration, before their record is written: an
        // infected record goes to the viral twin instead (P5.5).
        let viral_rel = layout::viral_twin(&self.rel);
        let quarantine = match self.scanner {
            Some(_) => {
                layout::create_dirs_in(self.root, layout::VIRAL_DIR)?;
                Some(crate::migrate::Quarantine {
                    path: self.root.join(&viral_rel),
                    cleaner: self.opts.cleaner.clone(),
                })
            }
            None => None,
        };
        let mopts = MigrateOptions {
            level: self.opts.level,
            force: false,
            scanner: self.scanner.cloned(),
            quarantine,
            capture_date: self.opts.capture_date,
        };
        let level = self.opts.level;
        let mut sinks = MigrationSinks {
            root: self.root,
            content: sink::ContainerSink::create(self.root, self.rel.clone(), writer, level)?,
            viral: None,
            viral_mets: viral_writer,
            viral_rel: viral_rel.clone(),
            level,
            events: self.scanner.map(|_| self.verdict_events(viral_rel.clone())),
            tally: Tally {
                log: self.log,
                uris: HashSet::new(),
                without_log: (0, Vec::new()),
                dates: (None, None),
            },
        };
        let started = std::time::Instant::now();
        let mut report =
            crate::migrate::report::FileReport { input: input.to_path_buf(), ..Default::default() };
        let out_name = self.rel.rsplit('/').next().unwrap_or_default();
        let migrated = crate::migrate::open_arc(input).and_then(|arc| {
            crate::migrate::migrate_into(
                arc,
                input,
                out_name,
                &mopts,
                &file_ids,
                self.progress,
                &mut sinks,
                &mut report,
            )
        });
        report.seconds = started.elapsed().as_secs_f64();
        let failed = match migrated {
            Ok(()) => {
                report.output = Some(self.root.join(&self.rel));
                None
            }
            Err(e) => {
                report.error = Some(e.to_string());
                Some(e)
            }
        };
        if !report.ok() {
            return Err(PackageError::Migration {
                input: input.to_path_buf(),
                failure: failed.map_or(MigrationFailure::NotConserved, MigrationFailure::Failed),
            });
        }
        let MigrationSinks { content, viral, events, tally, .. } = sinks;
        let writer = content.mets;
        let mut viral_writer = viral.map(|v| v.mets);
        let sha = report.output_sha512.clone().unwrap_or_default();
        let mut file = self.container_file(report.output_size, sha, &name, Format::written_warc());
        let (arc, event) = self.migration_described(&name, &report, &file, &file_ids);
        file.object.events.push(event.id.clone());
        file.object.relationships.push(Relationship {
            relationship_type: self.opts.profile.relationships.relationship_type.clone(),
            subtype: self.opts.profile.relationships.migration.clone(),
            related_object: ("local".into(), name.clone()),
            related_event: Some(event.id.clone()),
        });
        let viral = match &report.quarantine {
            Some(q) => Some(sink::ClosedContainer {
                mets: viral_writer.take().ok_or(PackageError::Internal("viral METS section"))?,
                rel: viral_rel.clone(),
                size: q.size,
                sha512: q.sha512.clone(),
                records: q.records + 1,
            }),
            None => None,
        };
        let records = report.records_out.values().sum();
        let container = ContainerReport {
            input: path_text(input),
            path: self.rel.clone(),
            action: "migrated".into(),
            records,
            listed: writer.listed(),
            migration: Some(report),
            warc_findings: 0,
            warc_finding_examples: Vec::new(),
            bytes_read: None,
        };
        Ok(ContainerResult {
            index,
            writer,
            file,
            report: container,
            uris: tally.uris,
            without_log: tally.without_log,
            dates: tally.dates,
            arc: Some((arc, event)),
            viral,
            scan: events.map(|e| e.found).unwrap_or_default(),
        })
    }

    /// The ARC a container was migrated from, described (it is not in the package) so the
    /// migration relationship resolves (P5.6), and the migration event from it to `file`.
    fn migration_described(
        &self,
        name: &str,
        report: &crate::migrate::report::FileReport,
        file: &PackageFile,
        file_ids: &Ids,
    ) -> (PremisObject, Event) {
        // The ARC is described (it is not in the package) so the relationship resolves (P5.6).
        let arc = PremisObject {
            id_type: "local".into(),
            id: name.to_string(),
            size: report.input_size,
            sha512: report.input_sha512.clone(),
            // The version its own version block states, with that version's PUID (PRONOM
            // has none for ARC 2); a file without one is described without a version.
            format: match &report.arc_format_version {
                Some(v) => crate::formats::pronom::arc(v).into(),
                None => Format { name: "Internet Archive".into(), version: None, pronom: None },
            },
            original_name: Some(name.to_string()),
            significant_properties: vec![],
            relationships: vec![],
            events: vec![],
        };
        let mig = &self.opts.profile.events.migration;
        let event = Event {
            id: file_ids.uuid().to_string(),
            event_type: mig.term.clone(),
            event_type_uri: Some(mig.uri.clone()),
            date_time: self.now,
            detail: Some(format!(
                "program=\"webaip\"; version=\"{}\"; from=\"{}\"; to=\"{}\"",
                env!("CARGO_PKG_VERSION"),
                Self::designation(&arc.format),
                Self::designation(&file.object.format)
            )),
            outcome: "success".into(),
            outcome_detail: Some(format!(
                "{} ARC records to {} WARC records; payload bytes in {} = out {}; {} anomalies (see the migration report, {})",
                report.records_in.values().sum::<u64>(),
                report.records_out.values().sum::<u64>(),
                report.conservation.payload_bytes_in,
                report.conservation.payload_bytes_out,
                report.anomaly_counts.values().sum::<u64>(),
                migration_report_path(&self.rel)
            )),
            agents: vec![("local".into(), "webaip".into(), "executing program".into())],
            objects: vec![
                ("local".into(), name.to_string(), "source".into()),
                ("local".into(), self.rel.clone(), "outcome".into()),
            ],
        };
        (arc, event)
    }

    /// Copies a WARC into a container, checked as `audit --deep` checks it, through the one
    /// pipeline (`copy`): read once, each record's stored bytes appended byte-exact where the
    /// stages routed them. Without a scanner the copy is the input byte for byte.
    fn copy_warc(
        &self,
        index: usize,
        input: &Path,
        (writer, viral_writer): (ContainerWriter, Option<ContainerWriter>),
    ) -> Result<ContainerResult, PackageError> {
        let dest = self.root.join(&self.rel);
        let level = self.opts.level;
        let content = sink::ContainerSink::create(self.root, self.rel.clone(), writer, level)?;
        let mut source = copy::StoredWarc::open(input, self.scanner.is_some())?;
        let gzip = source.is_gzip();
        let events = self.verdict_events(quarantine::copy_viral_rel(&self.rel, gzip));
        let mut out = copy::CopyWriter::new(
            (self.root, self.opts, self.now),
            (content, viral_writer),
            events,
            self.scanner,
            gzip,
        );
        let mut tally = Tally {
            log: self.log,
            uris: HashSet::new(),
            without_log: (0, Vec::new()),
            dates: (None, None),
        };
        let mut scan_stage = self.scanner.map(|e| ScanStage::new(Arc::clone(e)));
        let mut stages: Vec<&mut dyn Stage> = Vec::new();
        if let Some(s) = scan_stage.as_mut() {
            stages.push(s);
        }
        crate::stages::run_pipeline(
            &mut |batch| copy::gather_stored(&mut source, batch),
            &mut stages,
            // Two batches in flight: clamd scans the next while this one is written.
            &mut crate::stages::EachItem {
                write: |staged: Staged| {
                    if let Item::Stored(r) = &staged.item {
                        let uri = r.target_uri.as_deref();
                        tally.record(uri, &r.warc_type, &r.date, r.date_inferred);
                    }
                    out.write(staged)
                },
                overlap: true,
            },
        )?;
        let read = source.finish();
        let copy::Copied { content, viral, scan, stuck } = out.finish();
        if let Some((record_id, offset, signature)) = stuck {
            return Err(PackageError::InfectedInSharedMember {
                input: input.to_path_buf(),
                record_id,
                offset,
                signature,
            });
        }
        let moved = viral.is_some() || scan.cleaned > 0;
        let (writer, content_size) = content.close_unhashed(self.root)?;
        let (mut size, mut sha) = (read.bytes_read, read.sha512.clone());
        // Unless a record went elsewhere, the copy is the input, byte for byte.
        if moved || content_size != size {
            (size, sha) = hash_file(&dest)?;
        }
        let viral = viral.map(|v| v.close(self.root)).transpose()?;
        (self.progress)(read.bytes_read);
        let name = file_text(input);
        let format = copy::stated_warc_format(&read.versions);
        let mut file = self.container_file(size, sha, &name, format);
        let findings = read.findings;
        if findings.count > 0 {
            // Kept byte-exact as received; the disagreement travels with it (module comment).
            let event = self.validation_event(&findings);
            file.object.events.push(event.id.clone());
            file.events.push(event);
        }
        let container = ContainerReport {
            input: path_text(input),
            path: self.rel.clone(),
            action: if findings.count > 0 {
                "checked (WARC findings, kept as received) and copied".into()
            } else {
                "checked and copied".into()
            },
            // Cleaned copies were added to the records read; moved ones are taken off with
            // the viral twin's count (quarantine::add_container_virus_checks).
            records: read.records + scan.cleaned,
            listed: writer.listed(),
            migration: None,
            warc_findings: findings.count,
            warc_finding_examples: findings.examples,
            bytes_read: Some(read.bytes_read),
        };
        Ok(ContainerResult {
            index,
            writer,
            file,
            report: container,
            uris: tally.uris,
            without_log: tally.without_log,
            dates: tally.dates,
            arc: None,
            viral,
            scan,
        })
    }
}

/// An ARC migration's containers in a package: the content container's sink, its viral twin's
/// (created when the first infected record comes), and what describes each record to them.
struct MigrationSinks<'a> {
    root: &'a Path,
    content: sink::ContainerSink,
    viral: Option<sink::ContainerSink>,
    /// The viral twin's METS section until the twin is created.
    viral_mets: Option<ContainerWriter>,
    viral_rel: String,
    level: u32,
    /// With a scanner: the PREMIS events each verdict calls for.
    events: Option<quarantine::VerdictEvents<'a>>,
    tally: Tally<'a>,
}

impl crate::migrate::RecordSinks for MigrationSinks<'_> {
    fn content(&mut self) -> &mut crate::formats::warc::WarcWriter<io::BufWriter<File>> {
        &mut self.content.writer
    }

    fn viral(
        &mut self,
    ) -> io::Result<(&mut crate::formats::warc::WarcWriter<io::BufWriter<File>>, bool)> {
        let created = self.viral.is_none();
        if created {
            let mets =
                self.viral_mets.take().ok_or_else(|| io::Error::other("viral METS section"))?;
            let sink =
                sink::ContainerSink::create(self.root, self.viral_rel.clone(), mets, self.level)
                    .map_err(io::Error::other)?;
            self.viral = Some(sink);
        }
        let v = self.viral.as_mut().ok_or_else(|| io::Error::other("viral container"))?;
        Ok((&mut v.writer, created))
    }

    fn written(&mut self, r: &MigratedRecord) -> io::Result<()> {
        use crate::migrate::Written;
        use crate::stages::scan::ScanResult;
        if r.warc_type == "warcinfo" {
            return Ok(());
        }
        let rf = record_file(r);
        let writer = &mut self.content.mets;
        match (r.container, self.events.as_mut()) {
            (Written::Output, events) => {
                let inferred = r.date_source.is_some_and(|s| s.is_inferred());
                self.tally.record(r.target_uri.as_deref(), &r.warc_type, &r.date, inferred);
                match (events, &r.cleaned_from) {
                    (None, _) => writer.add_record(&rf),
                    (Some(ev), Some(orig)) => ev.cleaned(writer, &rf, orig),
                    (Some(ev), None) => ev.content(writer, &rf, r.scan.as_ref()),
                }
            }
            (Written::Quarantine, Some(ev)) => match (self.viral.as_mut(), &r.scan) {
                (Some(v), Some(ScanResult::Infected(sig))) => ev.infected(&mut v.mets, &rf, sig),
                _ => Err(io::Error::other("a quarantined record with no infected verdict")),
            },
            (Written::Quarantine, None) => {
                Err(io::Error::other("a quarantined record with no scanner"))
            }
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        self.content.writer.sync()?;
        self.viral.as_mut().map_or(Ok(()), |v| v.writer.sync())
    }

    fn content_path(&self) -> PathBuf {
        self.root.join(&self.content.rel)
    }

    fn viral_path(&self) -> Option<PathBuf> {
        self.viral.as_ref().map(|v| self.root.join(&v.rel))
    }
}

/// Copies a log, report or configuration file byte-exact into `logs/` and lists it in the
/// `Logfile` group with its own PREMIS object. Returns its package path, SHA-512 and size.
pub(crate) fn add_log(
    mets: &mut MetsBuilder,
    root: &Path,
    source: &Path,
    relative: &str,
    now: DateTime<Utc>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(String, String, u64), PackageError> {
    let rel = layout::in_dir(layout::LOGS_DIR, relative);
    let (size, sha) = copy_hashing(source, root, &rel)?;
    progress(size);
    let mime = log_mime(relative);
    let object = PremisObject {
        id_type: "local".into(),
        id: rel.clone(),
        size,
        sha512: sha.clone(),
        format: Format { name: mime.into(), version: None, pronom: None },
        original_name: Some(relative.to_string()),
        significant_properties: vec![],
        relationships: vec![],
        events: vec![],
    };
    mets.add_log(PackageFile {
        path: rel.clone(),
        mime: mime.into(),
        size,
        sha512: sha.clone(),
        created: now,
        object,
        events: vec![],
        described_sources: vec![],
    });
    Ok((rel, sha, size))
}

/// Where the migration report of the container at `container` (a package path) is kept.
pub(crate) fn migration_report_path(container: &str) -> String {
    let name = container.rsplit('/').next().unwrap_or(container);
    layout::in_dir(layout::WEBAIP_LOGS_DIR, &format!("{name}.migration.json"))
}

/// Writes a file webaip made (a migration report) into the package at `rel` and lists it in the
/// `Logfile` group with its own PREMIS object, as [`add_log`] does for copied logs.
pub(crate) fn add_generated_log(
    mets: &mut MetsBuilder,
    root: &Path,
    rel: &str,
    bytes: &[u8],
    now: DateTime<Utc>,
) -> Result<(String, String, u64), PackageError> {
    let mut f = crate::layout::create_in(root, rel)?;
    io::Write::write_all(&mut f, bytes).map_err(io_err(&root.join(rel)))?;
    let sha = crate::formats::digest::sha512_hex(bytes);
    let size = bytes.len() as u64;
    let mime = "application/json";
    mets.add_log(PackageFile {
        path: rel.to_string(),
        mime: mime.into(),
        size,
        sha512: sha.clone(),
        created: now,
        object: PremisObject {
            id_type: "local".into(),
            id: rel.to_string(),
            size,
            sha512: sha.clone(),
            format: Format { name: mime.into(), version: None, pronom: None },
            original_name: None,
            significant_properties: vec![],
            relationships: vec![],
            events: vec![],
        },
        events: vec![],
        described_sources: vec![],
    });
    Ok((rel.to_string(), sha, size))
}

/// A PREMIS virus-check event of the profile's type, run by `agent` (`clamd`, or `webaip` when
/// no scanner ran), linking `objects` as its sources. Every virus-check event is built here.
pub(crate) fn virus_check_event(
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    agent: &str,
    detail: String,
    (outcome, outcome_detail): (String, Option<String>),
    objects: Vec<String>,
) -> Event {
    let vc = &opts.profile.events.virus_check;
    Event {
        id: ids.uuid().to_string(),
        event_type: vc.term.clone(),
        event_type_uri: Some(vc.uri.clone()),
        date_time: now,
        detail: Some(detail),
        outcome,
        outcome_detail,
        agents: vec![("local".into(), agent.into(), "executing program".into())],
        objects: objects
            .into_iter()
            .map(|o| ("local".to_string(), o, "source".to_string()))
            .collect(),
    }
}

/// The one event of a package made with `--no-virus-check`: every container `not scanned`.
pub(crate) fn no_scan_event(
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    objects: Vec<String>,
) -> Event {
    virus_check_event(
        ids,
        opts,
        now,
        "webaip",
        "virus check not performed: packaged with --no-virus-check".into(),
        (
            opts.profile.virus_outcomes.not_scanned.clone(),
            Some("no scanner was run on any bytestream of this package".into()),
        ),
        objects,
    )
}

impl From<crate::stages::StageError> for PackageError {
    fn from(e: crate::stages::StageError) -> Self {
        match e {
            crate::stages::StageError::Scan(e) => PackageError::Scan(e),
            crate::stages::StageError::Io { path, source } => {
                PackageError::Io { path: path.into(), source }
            }
            crate::stages::StageError::LinkMap { file, source } => {
                PackageError::LinkMap { file, source }
            }
        }
    }
}

impl From<crate::stages::scan::CleanOrScanError> for PackageError {
    fn from(e: crate::stages::scan::CleanOrScanError) -> Self {
        match e {
            crate::stages::scan::CleanOrScanError::Scan(e) => PackageError::Scan(e),
            crate::stages::scan::CleanOrScanError::Clean(e) => {
                PackageError::Io { path: e.path, source: e.source }
            }
        }
    }
}

/// The note a report gives for a package made without scanning.
pub(crate) const NO_SCAN_NOTE: &str =
    "NOT DONE (--no-virus-check): every container records a 'not scanned' virus check";

/// Closes a WARC container webaip wrote (flushed and synced), and gives its size and SHA-512.
pub(crate) fn finish_written_container(
    writer: crate::formats::warc::WarcWriter<io::BufWriter<File>>,
    root: &Path,
    rel: &str,
) -> Result<(u64, String), PackageError> {
    let mut buf = writer.finish().map_err(io_err(root))?;
    io::Write::flush(&mut buf).map_err(io_err(root))?;
    let file = buf.into_inner().map_err(|e| io_err(root)(e.into_error()))?;
    file.sync_all().map_err(io_err(root))?;
    hash_file(&root.join(rel))
}

/// The description of a WARC container webaip wrote: the file, its PREMIS object (format,
/// record count) and the events recorded on it.
pub(crate) fn written_container_file(
    rel: String,
    (size, sha512): (u64, String),
    records: u64,
    events: Vec<Event>,
    original_name: String,
    created: DateTime<Utc>,
) -> PackageFile {
    PackageFile {
        path: rel.clone(),
        mime: "application/warc".into(),
        size,
        sha512: sha512.clone(),
        created,
        object: PremisObject {
            id_type: "local".into(),
            id: rel,
            size,
            sha512,
            format: Format::written_warc(),
            original_name: Some(original_name),
            significant_properties: vec![(SIGNIFICANT_WARC_RECORDS.into(), records.to_string())],
            relationships: vec![],
            events: events.iter().map(|e| e.id.clone()).collect(),
        },
        events,
        described_sources: vec![],
    }
}

/// The METS description of a record webaip wrote, with its payload's type.
pub(crate) fn written_record_file(
    w: &crate::formats::warc::WrittenRecord,
    mime: String,
    described: Option<DescribedBytestream>,
    capture: Option<UrlCapture>,
) -> RecordFile {
    RecordFile {
        record_id: w.record_id.trim_matches(['<', '>']).to_string(),
        member: ByteRange { begin: w.member_offset, len: w.member_len },
        compressed: true,
        content: Some(ContentFile {
            range: ByteRange { begin: w.payload_offset, len: w.digests.payload_len },
            sha512: hex(&w.digests.payload_sha512),
            mime,
        }),
        described,
        page: None,
        capture,
    }
}

/// The METS description of a migrated record.
fn record_file(r: &MigratedRecord) -> RecordFile {
    let capture = url_capture(
        &r.warc_type,
        r.target_uri.as_deref(),
        &r.date,
        r.date_source.is_some_and(|s| s.is_inferred()),
    );
    written_record_file(&r.written, r.payload_mime.clone(), None, capture)
}

/// The URL capture a record holds: `response` and `resource` records with a target URI.
pub(crate) fn url_capture(
    warc_type: &str,
    uri: Option<&str>,
    date: &str,
    date_inferred: bool,
) -> Option<UrlCapture> {
    match (warc_type, uri) {
        ("response" | "resource", Some(u)) if !u.is_empty() => {
            Some(UrlCapture { uri: u.to_string(), date: date.to_string(), date_inferred })
        }
        _ => None,
    }
}

pub(crate) fn log_mime(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".xml") || lower.ends_with(".cxml") {
        "text/xml"
    } else if lower.ends_with(".gz") {
        "application/gzip"
    } else if lower.ends_with(".zip") {
        "application/zip"
    } else {
        "text/plain"
    }
}

fn min_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

fn max_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// The seed of a `--deterministic` run: a line for each input file (its name, size and
/// SHA-512), the lines sorted, hashed after the run's kind. Files are hashed in parallel, a
/// chunk at a time, as they are given; the lines are sorted on disk (a scratch database), so a
/// harvest of a million files seeds in the memory of one chunk.
pub(crate) struct InputSeed {
    kind: String,
    chunk: Vec<(String, PathBuf)>,
    lines: rusqlite::Connection,
}

/// Files hashed at a time.
const SEED_CHUNK: usize = 256;

impl InputSeed {
    /// A seed of `kind`, no file yet.
    pub(crate) fn new(kind: &str) -> Result<InputSeed, PackageError> {
        let lines = crate::temporaries::scratch_database(2048, "CREATE TABLE lines (line TEXT);")
            .map_err(PackageError::Seed)?;
        Ok(InputSeed { kind: kind.to_string(), chunk: Vec::new(), lines })
    }

    /// Adds the file at `path`, named `name`.
    pub(crate) fn add(&mut self, name: String, path: PathBuf) -> Result<(), PackageError> {
        self.chunk.push((name, path));
        if self.chunk.len() >= SEED_CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), PackageError> {
        let lines: Vec<String> = self
            .chunk
            .par_iter()
            .map(|(name, path)| {
                let read = crate::formats::digest::sha512_read(open_input(path)?);
                let (len, sha) = read.map_err(io_err(path))?;
                Ok(format!("{name}\t{len}\t{sha}\n"))
            })
            .collect::<Result<_, PackageError>>()?;
        self.chunk.clear();
        let mut st = self
            .lines
            .prepare_cached("INSERT INTO lines VALUES (?1)")
            .map_err(PackageError::Seed)?;
        for l in &lines {
            st.execute([l]).map_err(PackageError::Seed)?;
        }
        Ok(())
    }

    /// The seed: `KIND/SHA-512` of the kind and the sorted lines (byte order, as SQLite's
    /// BINARY collation and Rust's `str` order both compare).
    pub(crate) fn finish(mut self) -> Result<String, PackageError> {
        self.flush()?;
        let mut all = Sha512::new();
        all.update(self.kind.as_bytes());
        all.update(b"\n");
        let mut st = self
            .lines
            .prepare("SELECT line FROM lines ORDER BY line")
            .map_err(PackageError::Seed)?;
        let mut rows = st.query([]).map_err(PackageError::Seed)?;
        while let Some(row) = rows.next().map_err(PackageError::Seed)? {
            let line: String = row.get(0).map_err(PackageError::Seed)?;
            all.update(line.as_bytes());
        }
        Ok(format!("{}/{}", self.kind, hex(&all.finalize())))
    }
}

/// The seed of `files` (name, path), as [`InputSeed`] makes it.
pub(crate) fn input_seed(kind: &str, files: &[(String, &Path)]) -> Result<String, PackageError> {
    let mut seed = InputSeed::new(kind)?;
    for (name, path) in files {
        seed.add(name.clone(), path.to_path_buf())?;
    }
    seed.finish()
}

/// Opens an input file: a regular file reached without following a link as its last
/// component (the walk checked with `lstat`; this closes the race with a swap since).
pub(crate) fn open_input(path: &Path) -> Result<File, PackageError> {
    Ok(crate::layout::open_regular(path)?)
}

/// Copies `from` (an input file) to `to` in one read, returning the size and SHA-512 of what
/// was copied.
pub(crate) fn copy_hashing(
    from: &Path,
    root: &Path,
    rel: &str,
) -> Result<(u64, String), PackageError> {
    let to = &root.join(rel);
    // The package's own name for it, created inside the package (never over a file, never
    // through a link).
    let mut w = crate::layout::create_in(root, rel)?;
    let mut r = BufReader::with_capacity(1 << 20, open_input(from)?);
    let mut sha = Sha512::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = r.read(&mut buf).map_err(io_err(from))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        w.write_all(&buf[..n]).map_err(io_err(to))?;
        len += n as u64;
    }
    w.sync_all().map_err(io_err(to))?;
    Ok((len, hex(&sha.finalize())))
}

/// Size and SHA-512 of a file.
pub(crate) fn hash_file(path: &Path) -> Result<(u64, String), PackageError> {
    crate::formats::digest::sha512_file(path).map_err(io_err(path))
}
