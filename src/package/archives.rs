//! Packages of ARC and WARC files (a Heritrix job, a folder, a list).
//!
//! The pipeline of ARCHITECTURE.md: the [`crate::sources::Source`] says what the harvest
//! holds; ARC files are migrated ([`crate::migrate`]) and WARC files checked and copied
//! byte-exact into `content/`, in parallel; logs and configuration are copied into `logs/`; the
//! METS is streamed ([`crate::mets::MetsBuilder`]); `manifest-sha512.txt` lists every file.
//!
//! Accepting means agreeing: a WARC copied into the package is read once, record by record,
//! through the very check `audit --deep` makes (`formats::warc::check::check_block`:
//! WARC-Block-Digest, WARC-Payload-Digest) and the reader's CRLF CRLF check. A record that
//! fails is not silently copied: the file is still kept byte-exact (preservation keeps what it
//! received, and rewriting a digest would destroy the evidence), but every such record is
//! named in the report (text and JSON, `warc_findings`), the container gets a PREMIS
//! `validation` event with outcome `failure` listing them, and the run exits with status 1,
//! as for other findings. The later audit then reports what the package already declared.

use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, Utc};
use rayon::prelude::*;

use super::{
    ContainerReport, CrawlLogComparison, MAX_EXAMPLES, MigrationFailure, NO_SCAN_NOTE,
    PackageError, PackageOptions, PackageReport, ScanSummary, add_generated_log, add_log,
    commit_package, copy, entities_to_describe, hash_file, input_seed, io_err,
    migration_report_path, new_mets, no_scan_event, quarantine, sink, url_capture,
    written_record_file,
};
use crate::ids::Ids;
use crate::layout;
use crate::mets::MetsBuilder;
use crate::mets::writer::ContainerWriter;
use crate::migrate::{MigrateOptions, MigratedRecord, MigrationRun, output_name};
use crate::model::*;
use crate::sources::crawl_log::{CrawlLog, uri_hash};
use crate::sources::{ArchiveKind, Source, file_text, path_text};
use crate::stages::dedup::DedupStage;
use crate::stages::identify::{Identifier, IdentifyMode, IdentifyStage, Tally as Identified};
use crate::stages::scan::{ScanEngine, ScanStage};
use crate::stages::{Item, Stage, StagedItem};

use super::context::PackageRun;
use super::staging::Staging;

/// PREMIS event type of the check a copied WARC gets (LoC preservation vocabulary).
const VALIDATION_EVENT: &str = "validation";
/// Its URI.
const VALIDATION_EVENT_URI: &str = "http://id.loc.gov/vocabulary/preservation/eventType/val";

pub(super) struct ContainerResult {
    pub(super) index: usize,
    /// The container's METS section, its records described as they were written.
    pub(super) writer: ContainerWriter,
    pub(super) file: PackageFile,
    pub(super) report: ContainerReport,
    pub(super) uris: HashSet<u64>,
    pub(super) without_log: Unlogged,
    pub(super) dates: CaptureSpan,
    /// The ARC described beside the container, with the migration event.
    pub(super) arc: Option<DescribedArc>,
    /// The viral twin its infected records went to, closed, its records described.
    pub(super) viral: Option<sink::ClosedContainer>,
    /// What the scan found in it and its twin.
    pub(super) scan: quarantine::ContainerScan,
    /// What identification found in its payloads.
    pub(super) identified: Identified,
    /// What deduplication wrote in it.
    pub(super) dedup: crate::stages::dedup::DedupTally,
}

/// Records with no line in the crawl log: how many, and the first of their URIs.
#[derive(Default)]
pub(super) struct Unlogged {
    pub(super) count: u64,
    pub(super) examples: Vec<String>,
}

impl Unlogged {
    /// Counts `other` in, its examples while under [`MAX_EXAMPLES`].
    fn add(&mut self, other: Unlogged) {
        self.count += other.count;
        let room = MAX_EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
    }
}

/// The first and last capture dates that widen a package's span.
#[derive(Default, Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct CaptureSpan {
    pub(super) first: Option<DateTime<Utc>>,
    pub(super) last: Option<DateTime<Utc>>,
}

impl CaptureSpan {
    /// This span, each end missing from it taken from `fallback`.
    fn or(self, fallback: CaptureSpan) -> CaptureSpan {
        CaptureSpan { first: self.first.or(fallback.first), last: self.last.or(fallback.last) }
    }

    /// The span covering this one and `other`.
    fn widen(self, other: CaptureSpan) -> CaptureSpan {
        CaptureSpan {
            first: min_opt(self.first, other.first),
            last: max_opt(self.last, other.last),
        }
    }
}

/// An ARC migrated into a container, described beside it (it is not in the package), and the
/// migration event from it.
pub(super) struct DescribedArc {
    pub(super) object: PremisObject,
    pub(super) event: Event,
}

/// A container's METS section and, with a scanner, its viral twin's (taken when the twin
/// gets its first record).
struct Sections {
    content: ContainerWriter,
    viral: Option<ContainerWriter>,
}

/// A file written into the package beside the containers, as the manifest lists it.
struct ExtraFile {
    rel: String,
    sha512: String,
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
    // One engine for the run: identical payloads of all containers are scanned once.
    let engine = opts.virus_check.engine()?;
    // Every record is described as it is written, its events naming clamd's version.
    let version = match &engine {
        Some(e) => Some(quarantine::register_scanner(e.clamd(), &mut mets)?),
        None => None,
    };
    let ctx = ContainerCtx {
        root: &root,
        identifier: super::register_identifier(opts, &mut mets)?,
        scanner: engine.as_ref(),
        version: version.as_deref(),
        rel: String::new(),
        run: PackageRun { ids: &ids, opts, now },
        log: crawl_log.as_ref(),
        progress,
    };
    let results = write_containers(source, &container_names(source), &mut mets, &ctx)?;
    let mut closed = close_containers(results, &mut mets, &ctx)?;
    let side = SideFiles { source, root: &root, now, progress };
    let logs = side.add(&closed.done.containers, &mut mets, &mut closed.manifest)?;
    // Records date the package; the crawl log only what no record dates.
    let log_span = crawl_log.as_ref().map(|l| CaptureSpan { first: l.first, last: l.last });
    let capture = closed.done.capture.or(log_span.unwrap_or_default());
    let seeds = super::SeedsFrom { seeds: &source.seeds, file: "seeds.txt" };
    let metadata_notes = super::write_header(&mut mets, opts, seeds, capture.first, capture.last);
    let ContainersClosed { done, mut manifest, virus, identification } = closed;
    let ContainersDone { mut containers, all_uris, without_log, dedup, .. } = done;
    let committed = commit_package(staging, mets, &mut containers, &mut manifest, opts)?;
    let crawl_log = crawl_log.map(|log| compare_crawl_log(&log, source, &all_uris, without_log));
    name_outputs_in_place(&mut containers, &committed.package);
    Ok(PackageReport {
        package: committed.package,
        objid,
        shape: source.shape.name().to_string(),
        found: source.found.clone(),
        missing: source.missing.clone(),
        refused: source.refused.clone(),
        refusals: source.refused.len() as u64,
        containers,
        captures: None,
        instance: None,
        rewrite: None,
        crawl_log,
        logs,
        metadata_notes,
        entities: committed.entities,
        virus_check: virus.note,
        identification,
        scan: virus.summary,
        scan_seconds: virus.seconds,
        mets_xsd_checked: committed.written.xsd_checked,
        files: committed.written.files,
        bytes: committed.written.bytes,
        leftovers: committed.leftovers,
        dedup,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The containers of a package once closed: what they amount to, the manifest lines of them
/// and their viral twins, their virus checks and their identification event.
struct ContainersClosed {
    done: ContainersDone,
    manifest: Vec<(String, String)>,
    virus: VirusCheckOutcome,
    identification: Option<super::IdentificationReport>,
}

/// What the virus check of a package's containers gives its report.
struct VirusCheckOutcome {
    /// How viruses were checked, in a sentence.
    note: String,
    /// Seconds spent waiting for clamd.
    seconds: f64,
    summary: ScanSummary,
}

/// Closes the containers written, in order: their virus checks (and viral twins), the
/// package's identification event on them, then their METS sections finished.
fn close_containers(
    mut results: Vec<ContainerResult>,
    mets: &mut MetsBuilder,
    ctx: &ContainerCtx<'_>,
) -> Result<ContainersClosed, PackageError> {
    // Viral containers made while scanning.
    let mut extra_files: Vec<ExtraFile> = Vec::new();
    let mut summary = ScanSummary::default();
    let (note, seconds) =
        container_virus_checks(&mut results, mets, ctx, &mut summary, &mut extra_files)?;
    // One format identification event for the package, on its containers.
    let identification = identification(&results, ctx.identifier, ctx.run, mets);
    let mut manifest: Vec<(String, String)> =
        extra_files.into_iter().map(|f| (f.rel, f.sha512)).collect();
    let done = finish_containers(results, ctx.run, ctx.root, mets, &mut manifest)?;
    let virus = VirusCheckOutcome { note, seconds, summary };
    Ok(ContainersClosed { done, manifest, virus, identification })
}

/// What the containers of a package amount to once their METS sections are finished.
struct ContainersDone {
    containers: Vec<ContainerReport>,
    capture: CaptureSpan,
    all_uris: HashSet<u64>,
    without_log: Unlogged,
    dedup: Option<super::DedupReport>,
}

/// Finishes every container's METS section, in container order (with its record count, what
/// deduplication did in it and the ARC it was migrated from), its manifest line added.
fn finish_containers(
    results: Vec<ContainerResult>,
    run: PackageRun<'_>,
    root: &Path,
    mets: &mut MetsBuilder,
    manifest: &mut Vec<(String, String)>,
) -> Result<ContainersDone, PackageError> {
    let mut done = ContainersDone {
        containers: Vec::new(),
        capture: CaptureSpan::default(),
        all_uris: HashSet::new(),
        without_log: Unlogged::default(),
        dedup: run.opts.dedup.as_ref().map(|_| super::DedupReport::default()),
    };
    for r in results {
        done.capture = done.capture.widen(r.dates);
        done.all_uris.extend(r.uris);
        done.without_log.add(r.without_log);
        let mut file = r.file;
        file.object
            .significant_properties
            .push((SIGNIFICANT_WARC_RECORDS.into(), r.report.records.to_string()));
        super::deduplicated::deduplicated(&mut file, &r.dedup, run, &mut done.dedup);
        if let Some(arc) = r.arc {
            file.described_sources.push(arc.object);
            file.events.insert(0, arc.event);
        }
        manifest.push((file.path.clone(), file.sha512.clone()));
        done.containers.push(r.report);
        mets.finish_container(r.writer, file).map_err(io_err(root))?;
    }
    Ok(done)
}

/// The files of a harvest packaged beside its containers, into the package at `root`.
struct SideFiles<'a> {
    source: &'a Source,
    root: &'a Path,
    now: DateTime<Utc>,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl SideFiles<'_> {
    /// Copies the logs and configuration byte-exact, and adds each migration's report where
    /// its migration event points; their manifest lines. The number of logs copied.
    fn add(
        &self,
        containers: &[ContainerReport],
        mets: &mut MetsBuilder,
        manifest: &mut Vec<(String, String)>,
    ) -> Result<u64, PackageError> {
        let (source, root, now) = (self.source, self.root, self.now);
        for aux in &source.aux {
            let (rel, sha, _) = add_log(mets, root, &aux.path, &aux.relative, now, self.progress)?;
            manifest.push((rel, sha));
        }
        for (c, archive) in containers.iter().zip(&source.archives) {
            if let Some(m) = &c.migration {
                let rel = migration_report_path(&c.path);
                let json =
                    packaged_migration_report(m, &rel, c, source.root.as_deref(), &archive.path)?;
                let (rel, sha, _) = add_generated_log(mets, root, &rel, &json, now)?;
                manifest.push((rel, sha));
            }
        }
        Ok(source.aux.len() as u64)
    }
}

/// The package's identification event over what every container's payloads gave
/// ([`super::identification_event`]), and what the report says of it.
fn identification(
    results: &[ContainerResult],
    identifier: Option<Identifier>,
    run: PackageRun<'_>,
    mets: &mut MetsBuilder,
) -> Option<super::IdentificationReport> {
    let mut tally = Identified::default();
    for r in results {
        tally.merge(&r.identified);
    }
    let containers = results.iter().map(|r| r.file.object.id.clone()).collect();
    super::identification_event(identifier.map(|i| (i, &tally)), run, containers, mets)
}

/// The virus check of every container, its records described already: with no scanner, the
/// package's "not scanned" event on every container; with one, each container's checks (and
/// its viral twin's, `extra_files`). The report's note and the seconds spent waiting for clamd.
fn container_virus_checks(
    results: &mut [ContainerResult],
    mets: &mut MetsBuilder,
    ctx: &ContainerCtx<'_>,
    summary: &mut ScanSummary,
    extra_files: &mut Vec<ExtraFile>,
) -> Result<(String, f64), PackageError> {
    let Some(engine) = ctx.scanner else {
        let objects = results.iter().map(|r| r.file.object.id.clone()).collect();
        let event = no_scan_event(ctx.run, objects);
        for r in results.iter_mut() {
            r.file.object.events.push(event.id.clone());
        }
        mets.add_package_event(event);
        return Ok((NO_SCAN_NOTE.to_string(), 0.0));
    };
    let version = ctx.version.unwrap_or_default();
    let mut checks = VirusChecks { version, run: ctx.run, root: ctx.root, summary, extra_files };
    for r in results.iter_mut() {
        checks.add(r, mets)?;
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
                ArchiveKind::Arc => {
                    ctx.migrate(i, &archive.path, Sections { content: writer, viral })
                }
                ArchiveKind::Warc => {
                    ctx.copy_warc(i, &archive.path, Sections { content: writer, viral })
                }
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

/// The migration reports name their outputs where they were built, in the hidden directory;
/// once the package is in place (`pkg`), they name them there.
fn name_outputs_in_place(containers: &mut [ContainerReport], pkg: &Path) {
    for c in containers {
        if let Some(m) = c.migration.as_mut() {
            m.output = Some(pkg.join(&c.path));
            if let Some(q) = m.quarantine.as_mut() {
                q.path = pkg.join(layout::viral_twin(&c.path));
            }
        }
    }
}

/// What the crawl log says against the records written: fetched URLs without a record, and
/// records without a log line (`without_log`: their count and examples).
fn compare_crawl_log(
    log: &CrawlLog,
    source: &Source,
    all_uris: &HashSet<u64>,
    without_log: Unlogged,
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
        records_without_log_line: without_log.count,
        records_without_log_line_examples: without_log.examples,
    }
}

struct ContainerCtx<'a> {
    root: &'a Path,
    /// PRONOM identification, unless `--identify none`.
    identifier: Option<Identifier>,
    scanner: Option<&'a Arc<ScanEngine>>,
    /// clamd's version, when there is a scanner.
    version: Option<&'a str>,
    rel: String,
    run: PackageRun<'a>,
    log: Option<&'a CrawlLog>,
    progress: &'a (dyn Fn(u64) + Sync),
}

/// Per-container bookkeeping while records go by.
struct Tally<'a> {
    log: Option<&'a CrawlLog>,
    uris: HashSet<u64>,
    without_log: Unlogged,
    dates: CaptureSpan,
}

impl<'a> Tally<'a> {
    /// Nothing counted yet; records checked against `log`, if the harvest has one.
    fn new(log: Option<&'a CrawlLog>) -> Self {
        Tally {
            log,
            uris: HashSet::new(),
            without_log: Unlogged::default(),
            dates: CaptureSpan::default(),
        }
    }

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
            self.dates = self.dates.widen(CaptureSpan { first: Some(d), last: Some(d) });
        }
        let Some(uri) = uri.filter(|_| captured && matches!(warc_type, "response" | "resource"))
        else {
            return;
        };
        self.uris.insert(uri_hash(uri));
        if let Some(log) = self.log
            && !log.was_fetched(uri)
        {
            self.without_log.add(Unlogged { count: 1, examples: vec![uri.to_string()] });
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
            created: self.run.now,
            object: PremisObject {
                id_type: "local".into(),
                id: self.rel.clone(),
                size,
                sha512,
                sha256: None,
                format,
                identification: None,
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
            id: self.run.ids.uuid().to_string(),
            event_type: VALIDATION_EVENT.into(),
            event_type_uri: Some(VALIDATION_EVENT_URI.into()),
            date_time: self.run.now,
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
        let ids = self.run.ids.derive(&format!("{}\nvirus check", self.rel));
        let rels = quarantine::ContainerRels { content: self.rel.clone(), viral: viral_rel };
        quarantine::VerdictEvents::new(ids, self.run, self.version.unwrap_or(""), rels)
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
        sections: Sections,
    ) -> Result<ContainerResult, PackageError> {
        let name = file_text(input);
        let file_ids = self.run.ids.derive(&name);
        let viral_rel = layout::viral_twin(&self.rel);
        let mopts = self.migrate_options(&viral_rel)?;
        let mut sinks = self.migration_sinks(sections, viral_rel)?;
        let mut report = self.run_migration(input, &mopts, &file_ids, &mut sinks)?;
        let MigrationSinks { content, viral, events, tally, viral_rel, .. } = sinks;
        // The migration wrote every byte of the container through the sink's writer.
        let sha256 = content.sha256();
        let writer = content.mets;
        let sha = report.output_sha512.clone().unwrap_or_default();
        let mut file = self.container_file(report.output_size, sha, &name, Format::written_warc());
        file.object.sha256 = sha256;
        let arc = self.migration_described(&name, &report, &file, &file_ids);
        self.relate_to_arc(&mut file, &name, &arc.event);
        let viral = match &report.quarantine {
            Some(q) => Some(sink::ClosedContainer {
                mets: viral.map(|v| v.mets).ok_or(PackageError::Internal("viral METS section"))?,
                rel: viral_rel,
                size: q.size,
                sha512: q.sha512.clone(),
                sha256: None,
                records: q.records + 1,
            }),
            None => None,
        };
        let identified = std::mem::take(&mut report.identified);
        let dedup = std::mem::take(&mut report.dedup);
        let mut scan = events.map(|e| e.found).unwrap_or_default();
        scan.not_cleaned.extend(report.not_cleaned.iter().cloned());
        let container = self.migrated_report(input, report, writer.listed());
        Ok(ContainerResult {
            index,
            writer,
            file,
            report: container,
            uris: tally.uris,
            without_log: tally.without_log,
            dates: tally.dates,
            arc: Some(arc),
            viral,
            scan,
            identified,
            dedup,
        })
    }

    /// The migration's options in a package: this run's level, scanner and identification,
    /// and with a scanner the viral twin (`viral_rel`) infected records go to instead of the
    /// container: payloads are scanned inside the migration, before their record is written
    /// (P5.5).
    fn migrate_options(&self, viral_rel: &str) -> Result<MigrateOptions, PackageError> {
        let quarantine = match self.scanner {
            Some(_) => {
                layout::create_dirs_in(self.root, layout::VIRAL_DIR)?;
                Some(crate::migrate::Quarantine {
                    path: self.root.join(viral_rel),
                    cleaner: self.run.opts.cleaner.clone(),
                })
            }
            None => None,
        };
        Ok(MigrateOptions {
            level: self.run.opts.level,
            force: false,
            scanner: self.scanner.cloned(),
            quarantine,
            capture_date: self.run.opts.capture_date,
            identify: self.identifier,
            rebuild_data: true,
            dedup: self
                .run
                .opts
                .dedup
                .clone()
                .map(|dedup| crate::migrate::MigrationDedup { dedup, container: self.rel.clone() }),
        })
    }

    /// The sinks the migration writes through: this container's (created now, shown to the
    /// package's index) and its viral twin's, created on first use.
    fn migration_sinks(
        &self,
        sections: Sections,
        viral_rel: String,
    ) -> Result<MigrationSinks<'_>, PackageError> {
        let level = self.run.opts.level;
        let mut content =
            sink::ContainerSink::create(self.root, self.rel.clone(), sections.content, level)?;
        super::tap_index(self.run.opts.index.as_ref(), &mut content);
        Ok(MigrationSinks {
            root: self.root,
            content,
            viral: None,
            viral_mets: sections.viral,
            events: self.scanner.map(|_| self.verdict_events(viral_rel.clone())),
            viral_rel,
            level,
            identify: self.run.opts.identify,
            tally: Tally::new(self.log),
        })
    }

    /// Runs the migration of `input` through `sinks`: its report, or the error that failed it
    /// (a migration that did not conserve every payload byte fails too).
    fn run_migration(
        &self,
        input: &Path,
        mopts: &MigrateOptions,
        file_ids: &Ids,
        sinks: &mut MigrationSinks<'_>,
    ) -> Result<crate::migrate::report::FileReport, PackageError> {
        let started = std::time::Instant::now();
        let mut report =
            crate::migrate::report::FileReport { input: input.to_path_buf(), ..Default::default() };
        let out_name = self.rel.rsplit('/').next().unwrap_or_default();
        let migrated = crate::migrate::open_arc(input).and_then(|arc| {
            let run = MigrationRun { opts: mopts, ids: file_ids, progress: self.progress };
            crate::migrate::migrate_into(arc, input, out_name, run, sinks, &mut report)
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
        Ok(report)
    }

    /// The container's relationship to the ARC `name` it was migrated from, by the migration
    /// `event` (which it lists).
    fn relate_to_arc(&self, file: &mut PackageFile, name: &str, event: &Event) {
        file.object.events.push(event.id.clone());
        let relationships = &self.run.opts.profile.relationships;
        file.object.relationships.push(Relationship {
            relationship_type: relationships.relationship_type.clone(),
            subtype: relationships.migration.clone(),
            related_object: ("local".into(), name.to_string()),
            related_event: Some(event.id.clone()),
        });
    }

    /// What the package report says of a container migrated from `input`.
    fn migrated_report(
        &self,
        input: &Path,
        report: crate::migrate::report::FileReport,
        listed: u64,
    ) -> ContainerReport {
        ContainerReport {
            input: path_text(input),
            path: self.rel.clone(),
            action: "migrated".into(),
            records: report.records_out.values().sum(),
            listed,
            migration: Some(report),
            warc_findings: 0,
            warc_finding_examples: Vec::new(),
            bytes_read: None,
        }
    }

    /// The ARC a container was migrated from, described (it is not in the package) so the
    /// migration relationship resolves (P5.6), and the migration event from it to `file`.
    fn migration_described(
        &self,
        name: &str,
        report: &crate::migrate::report::FileReport,
        file: &PackageFile,
        file_ids: &Ids,
    ) -> DescribedArc {
        // The ARC is described (it is not in the package) so the relationship resolves (P5.6).
        let arc = PremisObject {
            id_type: "local".into(),
            id: name.to_string(),
            size: report.input_size,
            sha512: report.input_sha512.clone(),
            sha256: None,
            // The version its own version block states, with that version's PUID (PRONOM
            // has none for ARC 2); a file without one is described without a version.
            format: match &report.arc_format_version {
                Some(v) => crate::formats::pronom::arc(v).into(),
                None => Format { name: "Internet Archive".into(), version: None, pronom: None },
            },
            identification: None,
            original_name: Some(name.to_string()),
            significant_properties: vec![],
            relationships: vec![],
            events: vec![],
        };
        let mig = &self.run.opts.profile.events.migration;
        let event = Event {
            id: file_ids.uuid().to_string(),
            event_type: mig.term.clone(),
            event_type_uri: Some(mig.uri.clone()),
            date_time: self.run.now,
            detail: Some(format!(
                "program=\"webaip\"; version=\"{}\"; from=\"{}\"; to=\"{}\"",
                env!("CARGO_PKG_VERSION"),
                Self::designation(&arc.format),
                Self::designation(&file.object.format)
            )),
            outcome: "success".into(),
            outcome_detail: Some(
                format!(
                    "{} ARC records to {} WARC records; payload bytes in {} = out {}; {} anomalies (see the migration report, {})",
                    report.records_in.values().sum::<u64>(),
                    report.records_out.values().sum::<u64>(),
                    report.conservation.payload_bytes_in,
                    report.conservation.payload_bytes_out,
                    report.anomaly_counts.values().sum::<u64>(),
                    migration_report_path(&self.rel)
                ) + &rebuild_note(report),
            ),
            agents: vec![("local".into(), "webaip".into(), "executing program".into())],
            objects: vec![
                ("local".into(), name.to_string(), "source".into()),
                ("local".into(), self.rel.clone(), "outcome".into()),
            ],
        };
        DescribedArc { object: arc, event }
    }

    /// Copies a WARC into a container, checked as `audit --deep` checks it, through the one
    /// pipeline (`copy`): read once, each record's stored bytes appended byte-exact where the
    /// stages routed them. Without a scanner the copy is the input byte for byte.
    fn copy_warc(
        &self,
        index: usize,
        input: &Path,
        sections: Sections,
    ) -> Result<ContainerResult, PackageError> {
        let level = self.run.opts.level;
        let mut content =
            sink::ContainerSink::create(self.root, self.rel.clone(), sections.content, level)?;
        super::tap_index(self.run.opts.index.as_ref(), &mut content);
        let mut source = copy::StoredWarc::open(input, self.scanner.is_some())?;
        let gzip = source.is_gzip();
        let events = self.verdict_events(quarantine::copy_viral_rel(&self.rel, gzip));
        let sinks = copy::CopySinks { content, viral_mets: sections.viral, gzip };
        let mut out = copy::CopyWriter::new(self.root, self.run, sinks, events, self.scanner);
        let mut tally = Tally::new(self.log);
        let identified = self
            .copy_records(&mut source, &mut out, &mut tally)
            .map_err(|e| warc_scan_error(input, e))?;
        let read = source.finish()?;
        let copy::Copied { content, viral, scan, stuck, dedup } = out.finish();
        if let Some((record_id, offset, signature)) = stuck {
            return Err(PackageError::InfectedInSharedMember {
                input: input.to_path_buf(),
                record_id,
                offset,
                signature,
            });
        }
        let moved = viral.is_some() || scan.cleaned > 0;
        let closed = content.close_unhashed(self.root)?;
        let (writer, content_size) = (closed.mets, closed.size);
        let viral = viral.map(|v| v.close(self.root)).transpose()?;
        (self.progress)(read.bytes_read);
        let mut file = self.copied_file(input, &read, moved, content_size)?;
        file.object.sha256 = closed.sha256;
        if read.findings.count > 0 {
            // Kept byte-exact as received; the disagreement travels with it (module comment).
            let event = self.validation_event(&read.findings);
            file.object.events.push(event.id.clone());
            file.events.push(event);
        }
        let container = self.copied_report(input, read, scan.cleaned, writer.listed());
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
            identified,
            dedup,
        })
    }

    /// Passes every record of `source` through the stages this run has (identification
    /// first; the scan stage, last, overlaps writing) to `out`, counting each into `tally`.
    /// What identification found.
    fn copy_records(
        &self,
        source: &mut copy::StoredWarc,
        out: &mut copy::CopyWriter<'_>,
        tally: &mut Tally<'_>,
    ) -> Result<Identified, PackageError> {
        let mut identify_stage = self.identifier.map(IdentifyStage::new);
        let mut scan_stage = self.scanner.map(|e| ScanStage::new(Arc::clone(e)));
        let mut dedup_stage =
            self.run.opts.dedup.as_deref().map(|d| DedupStage::new(d, self.rel.clone()));
        let stages: [Option<&mut dyn Stage>; 3] = [
            identify_stage.as_mut().map(|s| s as &mut dyn Stage),
            dedup_stage.as_mut().map(|s| s as &mut dyn Stage),
            scan_stage.as_mut().map(|s| s as &mut dyn Stage),
        ];
        crate::stages::run_pipeline(
            &mut |batch| copy::gather_stored(source, batch),
            &mut stages.into_iter().flatten().collect::<Vec<_>>(),
            // Two batches in flight: clamd scans the next while this one is written.
            &mut crate::stages::EachItem {
                write: |staged: StagedItem| {
                    if let Item::Stored(r) = &staged.item {
                        let uri = r.target_uri.as_deref();
                        tally.record(uri, &r.warc_type, &r.date, r.date_inferred);
                    }
                    out.write(staged)
                },
                overlap: true,
            },
        )?;
        Ok(identify_stage.map(|s| s.tally).unwrap_or_default())
    }

    /// The copied container as the package describes it, in the WARC version its records
    /// state. Unless a record went elsewhere (`moved`) or the copy's size differs, the copy is
    /// the input byte for byte, and the input's digest, taken as it was read, is the copy's.
    fn copied_file(
        &self,
        input: &Path,
        read: &copy::StoredSummary,
        moved: bool,
        content_size: u64,
    ) -> Result<PackageFile, PackageError> {
        let (size, sha) = if moved || content_size != read.bytes_read {
            hash_file(&self.root.join(&self.rel))?
        } else {
            (read.bytes_read, read.sha512.clone())
        };
        let format = copy::stated_warc_format(&read.versions);
        Ok(self.container_file(size, sha, &file_text(input), format))
    }

    /// What the package report says of a WARC copied from `input` (`cleaned`: records a
    /// cleaner's copy was added for).
    fn copied_report(
        &self,
        input: &Path,
        read: copy::StoredSummary,
        cleaned: u64,
        listed: u64,
    ) -> ContainerReport {
        ContainerReport {
            input: path_text(input),
            path: self.rel.clone(),
            action: copy_action(read.findings.count).into(),
            // Cleaned copies were added to the records read; moved ones are taken off with
            // the viral twin's count (add_container_virus_checks).
            records: read.records + cleaned,
            listed,
            migration: None,
            warc_findings: read.findings.count,
            warc_finding_examples: read.findings.examples,
            bytes_read: Some(read.bytes_read),
        }
    }
}

/// What the report says was done with a copied WARC in which the check found `findings`.
fn copy_action(findings: u64) -> &'static str {
    if findings > 0 {
        "checked (WARC findings, kept as received) and copied"
    } else {
        "checked and copied"
    }
}

/// An error of a WARC's copy, the clamd failures among them named by the WARC (clamd's own
/// error names the daemon only) and the record being scanned, when it was scanned alone.
fn warc_scan_error(input: &Path, e: PackageError) -> PackageError {
    match e {
        PackageError::Scan(source) => {
            PackageError::WarcScan { input: input.into(), record: None, source }
        }
        PackageError::ScanOf { origin, source } => {
            PackageError::WarcScan { input: input.into(), record: Some(origin), source }
        }
        e => e,
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
    /// What the package records of identification.
    identify: IdentifyMode,
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
        let rel = &self.content.rel;
        let oid = |rf: &RecordFile| format!("{rel}#{}", rf.record_id);
        let id = r.identification.clone();
        let rf = crate::stages::identify::record_identified(record_file(r), oid, id, self.identify);
        let writer = &mut self.content.mets;
        match (r.container, self.events.as_mut()) {
            (Written::Output, events) => {
                let inferred = r.date_source.is_some_and(|s| s.is_inferred());
                // A revisit is the capture of a response, as a copied WARC's revisit counts.
                let kind = if r.refers.is_some() { "response" } else { r.warc_type.as_str() };
                self.tally.record(r.target_uri.as_deref(), kind, &r.date, inferred);
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

/// The METS description of a migrated record; a revisit's has no payload of its own, and
/// states where it is stored.
fn record_file(r: &MigratedRecord) -> RecordFile {
    let kind = if r.refers.is_some() { "response" } else { r.warc_type.as_str() };
    let inferred = r.date_source.is_some_and(|s| s.is_inferred());
    let capture = url_capture(kind, r.target_uri.as_deref(), &r.date, inferred);
    let mut file = written_record_file(&r.written, r.payload_mime.clone(), None, capture);
    if let Some(refers) = &r.refers {
        file.content = None;
        file.refers = Some(refers.clone());
    }
    file
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

/// The virus checks of a package's containers, once each container and its viral twin are
/// closed (their records described as they were written): `extra_files` gets each twin's
/// manifest line and `summary` what the scan found.
struct VirusChecks<'a> {
    /// clamd's version.
    version: &'a str,
    run: PackageRun<'a>,
    root: &'a Path,
    summary: &'a mut ScanSummary,
    extra_files: &'a mut Vec<ExtraFile>,
}

impl VirusChecks<'_> {
    /// The twin's section finished with its virus-check event, the content container's
    /// virus-check event, and what the scan found counted.
    fn add(&mut self, r: &mut ContainerResult, mets: &mut MetsBuilder) -> Result<(), PackageError> {
        let rel = r.file.path.clone();
        let found = std::mem::take(&mut r.scan);
        // Where the infected records went (a record not cleaned is one of them).
        let viral = r.viral.as_ref().map_or_else(|| layout::viral_twin(&rel), |v| v.rel.clone());
        if let Some(v) = r.viral.take() {
            let records = v.records;
            self.finish_twin(v, &rel, &found.infected, mets)?;
            r.report.records -= records.saturating_sub(1).min(r.report.records);
        }
        let (infected, unscanned) = (found.infected.len(), found.unscanned.len());
        let shared = found.unscanned_without_event as usize;
        self.count(found, &rel, &viral);
        // The container-level virus check.
        let with_event = unscanned.saturating_sub(shared) as u64;
        let outcome =
            quarantine::content_check(self.run.opts, infected as u64, with_event, shared as u64);
        let e = quarantine::event(self.run, self.version, outcome, vec![rel.clone()]);
        r.file.object.events.push(e.id.clone());
        r.file.events.push(e);
        Ok(())
    }

    /// The viral twin `v` of container `rel`, holding `infected` (record id, signature),
    /// finished in the METS with its virus-check event and listed in `extra_files`.
    fn finish_twin(
        &mut self,
        v: sink::ClosedContainer,
        rel: &str,
        infected: &[(String, String)],
        mets: &mut MetsBuilder,
    ) -> Result<(), PackageError> {
        let objects = std::iter::once(v.rel.clone())
            .chain(infected.iter().map(|(id, _)| format!("{}#{id}", v.rel)))
            .collect();
        let opts = self.run.opts;
        let outcome = quarantine::viral_check(opts, infected.iter().map(|(_, s)| s.as_str()));
        let cev = quarantine::event(self.run, self.version, outcome, objects);
        let name = rel.rsplit('/').next().unwrap_or_default().to_string();
        let written = super::WrittenFile { size: v.size, sha512: v.sha512.clone() };
        let vfile = super::written_container_file(
            v.rel.clone(),
            written,
            v.records,
            vec![cev],
            name,
            self.run.now,
        );
        mets.finish_container(v.mets, vfile).map_err(io_err(self.root))?;
        self.extra_files.push(ExtraFile { rel: v.rel, sha512: v.sha512 });
        Ok(())
    }

    /// Counts what the scan found in container `rel` into the summary; an infected record is
    /// where it was moved to (`viral`), not the content container.
    fn count(&mut self, found: quarantine::ContainerScan, rel: &str, viral: &str) {
        let summary = &mut *self.summary;
        summary.infected += found.infected.len() as u64;
        let at_viral = |(id, why): (String, String)| (viral.to_string(), id, why);
        summary.findings.extend(found.infected.into_iter().map(at_viral));
        summary.not_scanned += found.unscanned.len() as u64;
        let at_rel = |(id, why): (String, String)| (rel.to_string(), id, why);
        summary.unscanned.extend(found.unscanned.into_iter().map(at_rel));
        summary.cleaned += found.cleaned;
        summary.not_cleaned.extend(found.not_cleaned.into_iter().map(at_viral));
    }
}

/// What the migration event says of the way back to the ARC (`docs/arc-rebuild.md`): the
/// SHA-512 of the ARC file (also the source object's) and of its stream, and whether it can
/// be rebuilt from the container.
fn rebuild_note(report: &crate::migrate::report::FileReport) -> String {
    let Some(r) = &report.rebuild else { return String::new() };
    let how = r.text();
    format!(
        "; ARC file SHA-512 {} ({} bytes); ARC stream SHA-512 {} ({} bytes); {how}",
        report.input_sha512, report.input_size, r.stream_sha512, r.stream_length
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally() -> Tally<'static> {
        Tally::new(None)
    }

    fn at(s: &str) -> Option<DateTime<Utc>> {
        Some(crate::formats::dates::parse_rfc3339(s).unwrap())
    }

    /// Only a capture's own date widens the span: not an inferred one, not a warcinfo, not the
    /// ARC's filedesc or webaip's own metadata.
    #[test]
    fn only_own_capture_dates_widen_the_span() {
        let mut t = tally();
        t.record(Some("http://e.org/"), "response", "2020-01-02T00:00:00Z", false);
        t.record(Some("http://e.org/a"), "request", "2020-03-04T00:00:00Z", false);
        t.record(Some("http://e.org/b"), "response", "2019-01-01T00:00:00Z", true);
        t.record(None, "warcinfo", "2018-01-01T00:00:00Z", false);
        t.record(Some("filedesc://x.arc"), "resource", "2017-01-01T00:00:00Z", false);
        t.record(Some("metadata://webaip/x"), "resource", "2016-01-01T00:00:00Z", false);
        t.record(Some("http://e.org/c"), "response", "not a date", false);
        let span =
            CaptureSpan { first: at("2020-01-02T00:00:00Z"), last: at("2020-03-04T00:00:00Z") };
        assert_eq!(t.dates, span);
        // Responses and resources are the URIs compared with the crawl log; requests are not.
        assert_eq!(t.uris.len(), 3);
        assert!(t.uris.contains(&uri_hash("http://e.org/")));
        assert!(!t.uris.contains(&uri_hash("http://e.org/a")));
    }

    #[test]
    fn a_span_widens_over_either_side_and_keeps_what_the_other_lacks() {
        let a = CaptureSpan { first: at("2020-01-01T00:00:00Z"), last: None };
        let b = CaptureSpan { first: at("2021-01-01T00:00:00Z"), last: at("2022-01-01T00:00:00Z") };
        let w = a.widen(b);
        assert_eq!(w, CaptureSpan { first: a.first, last: b.last });
        assert_eq!(CaptureSpan::default().widen(CaptureSpan::default()), CaptureSpan::default());
    }

    /// The crawl log dates a package only at an end no record dates.
    #[test]
    fn a_span_takes_from_its_fallback_only_the_ends_it_lacks() {
        let records = CaptureSpan { first: at("2020-01-01T00:00:00Z"), last: None };
        let log =
            CaptureSpan { first: at("2019-01-01T00:00:00Z"), last: at("2021-01-01T00:00:00Z") };
        assert_eq!(records.or(log), CaptureSpan { first: records.first, last: log.last });
        assert_eq!(CaptureSpan::default().or(log), log);
        assert_eq!(log.or(CaptureSpan::default()), log);
    }

    /// A copied WARC whose records disagree with their headers is said to be kept as received.
    #[test]
    fn a_copy_with_findings_says_it_was_kept_as_received() {
        assert_eq!(copy_action(0), "checked and copied");
        assert_eq!(copy_action(3), "checked (WARC findings, kept as received) and copied");
    }

    /// clamd's failures during a copy name the WARC (and the record scanned alone); other
    /// errors pass as they are.
    #[test]
    fn clamd_failures_of_a_copy_name_the_warc_and_record() {
        use crate::stages::scan::{ClamdFailure, ScanError};
        let clamd = || ScanError {
            addr: "unix:/run/clamd.sock".parse().unwrap(),
            failure: ClamdFailure::Unresolved,
        };
        let input = Path::new("/h/in.warc.gz");
        let e = warc_scan_error(input, PackageError::Scan(clamd()));
        assert!(matches!(&e, PackageError::WarcScan { record: None, .. }), "{e:?}");
        assert!(e.to_string().starts_with("/h/in.warc.gz: virus scan: clamd at"), "{e}");
        let one = PackageError::ScanOf { origin: "<urn:uuid:1>".into(), source: clamd() };
        let e = warc_scan_error(input, one);
        assert!(e.to_string().starts_with("/h/in.warc.gz: record <urn:uuid:1>: virus"), "{e}");
        let other = warc_scan_error(input, PackageError::Internal("x"));
        assert!(matches!(other, PackageError::Internal("x")), "{other:?}");
    }

    /// Records without a crawl-log line are all counted, their examples bounded.
    #[test]
    fn unlogged_records_are_counted_and_their_examples_bounded() {
        let mut all = Unlogged::default();
        for i in 0..3 {
            let examples = (0..MAX_EXAMPLES).map(|j| format!("http://e.org/{i}/{j}")).collect();
            all.add(Unlogged { count: MAX_EXAMPLES as u64 + 5, examples });
        }
        assert_eq!(all.count, 3 * (MAX_EXAMPLES as u64 + 5));
        assert_eq!(all.examples.len(), MAX_EXAMPLES);
        assert_eq!(all.examples[0], "http://e.org/0/0");
    }

    /// Container names: an ARC gets a .warc.gz name, a WARC keeps its own; two inputs that would
    /// get one name keep their full names.
    #[test]
    fn container_names_keep_clashing_inputs_apart() {
        let dir = tempfile::tempdir().unwrap();
        let mut source = Source {
            shape: crate::sources::Shape::FileList,
            root: None,
            archives: Vec::new(),
            aux: Vec::new(),
            crawl_log: None,
            seeds: Vec::new(),
            found: Vec::new(),
            missing: Vec::new(),
            refused: Vec::new(),
        };
        for (name, kind) in [
            ("a.arc.gz", ArchiveKind::Arc),
            ("b.warc.gz", ArchiveKind::Warc),
            ("c.arc.gz", ArchiveKind::Arc),
            ("c.warc.gz", ArchiveKind::Warc),
        ] {
            source.archives.push(crate::sources::Archive { path: dir.path().join(name), kind });
        }
        let names = container_names(&source);
        assert_eq!(names, ["a.warc.gz", "b.warc.gz", "c.arc.gz.warc.gz", "c.warc.gz.warc.gz"]);
    }
}
