//! Packaging a stream of captures ([`crate::sources::capture`]): the pipeline of
//! ARCHITECTURE.md, used by the sources that yield captures (PANDAS/HTTrack instances, wget and
//! HTTrack mirrors, NEDLIB, Kulturarw3).
//!
//! Captures pass the stages in batches before anything of them is written. The scan stage
//! computes each payload's SHA-512 first, and a payload identical to one already scanned in
//! this run takes that verdict without going to clamd again (the report counts them). For a
//! source whose files link by local paths, the rewrite stage then gives a page or stylesheet
//! whose links change a new payload. A clean capture is written to the content container (its
//! new payload, if it has one, with a transformation event, and the harvested one to the
//! original container); an infected one goes straight to the viral container, and a cleaner's
//! copy of it, rescanned, to content. Every container is opened on its first record, so no
//! container is rewritten after it is written. The container writer returns every record's
//! ranges, which go to the METS as they are; a capture's concurrent metadata follows it. The
//! source's quirks travel in the package as `logs/webaip/<shape>.quirks.json`; its side files
//! go byte-exact to `logs/`.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::context::{EventOutcome, PackageRun, Scanner, Scanning};
use super::sink::{ClosedContainer, ContainerSink, Warcinfo};
use super::staging::Staging;
use super::{
    CaptureCounts, ContainerReport, MAX_EXAMPLES, PackageError, PackageOptions, PackageReport,
    ScanSummary, io_err, new_mets,
};
use crate::capture::{Capture, CaptureKind, Payload, Quirk};
use crate::formats::digest::hex;
use crate::formats::warc::header::warc_fields_line;
use crate::formats::warc::writer::{RecordSpec, WrittenRecord};
use crate::ids::Ids;
use crate::index::digests::{Algorithm, DigestKey};
use crate::layout;
use crate::model::*;
use crate::sources::capture::CaptureSource;
use crate::stages::dedup::{DedupStage, DedupTally, Holder, Revisit};
use crate::stages::identify::IdentifyStage;
use crate::stages::rewrite::RewriteStage;
use crate::stages::scan::batching;
use crate::stages::scan::{ScanEngine, ScanResult, ScanStage};
use crate::stages::{Item, Route, ScanFinding, Stage, StagedItem};

/// The WARC field naming a mirror file's path, which also names its PREMIS object.
pub(crate) const MIRROR_PATH: &str = "X-Webaip-Mirror-Path";

/// The payload's type as the METS states it: the entity's `Content-Type`, else unknown.
fn payload_mime(c: &Capture) -> String {
    c.payload_mime()
}

/// Which container of the package.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Content,
    Original,
    Viral,
}

/// The package's containers, each opened on its first record.
struct Containers<'a> {
    content: Option<ContainerSink>,
    original: Option<ContainerSink>,
    viral: Option<ContainerSink>,
    pkg: &'a Path,
    /// The run (its options give the gzip level and the index made while writing).
    run: PackageRun<'a>,
    shape: &'static str,
    stem: Option<String>,
    description: String,
}

impl Containers<'_> {
    /// The container `slot`, opened when it is not yet (`date`: the capture that opens it,
    /// which names a content container of a source that gives no stem).
    fn get(
        &mut self,
        slot: Slot,
        mets: &mut crate::mets::MetsBuilder,
        date: DateTime<Utc>,
    ) -> Result<&mut ContainerSink, PackageError> {
        let shape = self.shape;
        let stem = self.stem.clone();
        let (place, group, rel, description) = match slot {
            Slot::Content => (
                &mut self.content,
                GroupUse::DigitalManifestation,
                layout::container_name(
                    layout::CONTENT_DIR,
                    &stem.unwrap_or_else(|| format!("{shape}-{}", date.format("%Y%m%d%H%M%S"))),
                    0,
                ),
                self.description.clone(),
            ),
            Slot::Original => (
                &mut self.original,
                GroupUse::Original,
                layout::container_name(
                    layout::ORIGINAL_DIR,
                    &format!("{}-original", stem.as_deref().unwrap_or(shape)),
                    0,
                ),
                format!("{shape} captures whose links were rewritten in content/, as harvested"),
            ),
            Slot::Viral => (
                &mut self.viral,
                GroupUse::ViralFiles,
                layout::container_name(
                    layout::VIRAL_DIR,
                    &format!("{}-viral", stem.as_deref().unwrap_or(shape)),
                    0,
                ),
                format!("{shape} captures in which clamd found a virus, kept as harvested"),
            ),
        };
        match place {
            Some(sink) => Ok(sink),
            None => {
                let cw = mets.begin_container(group).map_err(io_err(self.pkg))?;
                let info = Warcinfo {
                    id: self.run.ids.warc_record_id(),
                    now: self.run.now,
                    description: description.as_str(),
                };
                let mut sink = ContainerSink::create(self.pkg, rel, cw, self.run.opts.level)?;
                super::tap_index(self.run.opts.index.as_ref(), &mut sink);
                sink.start(self.pkg, info)?;
                Ok(place.insert(sink))
            }
        }
    }
}

/// A closed container waiting for its METS `<file>`, with its container-level events.
struct Finished {
    closed: ClosedContainer,
    events: Vec<Event>,
}

/// The closed containers of a run, once every capture is written.
struct Closed {
    manifest: Vec<ManifestLine>,
    finished: Vec<Finished>,
    /// The records they hold.
    records: u64,
}

/// A line of the package's manifest: a file's path in the package and its SHA-512.
type ManifestLine = (String, String);

/// What the captures read so far amount to.
#[derive(Default)]
struct Counts {
    captures: u64,
    payload_bytes: u64,
    /// The first and last capture dates that are the harvester's own (not inferred).
    first: Option<DateTime<Utc>>,
    last: Option<DateTime<Utc>>,
}

/// A capture this run wrote whole, which `--dedup-within` revisits of its payload name.
#[derive(Clone)]
struct OwnOriginal {
    record_id: String,
    url: String,
    date: String,
    /// Its gzip member.
    member: ByteRange,
    /// Where its payload starts in the decompressed record.
    payload_begin: u64,
}

/// Where staged captures go: the containers and the METS they are described to, with what
/// the scan found so far.
struct Writing<'a> {
    pkg: &'a Path,
    run: PackageRun<'a>,
    mets: crate::mets::MetsBuilder,
    containers: Containers<'a>,
    /// The scanner, the identifier, and whether links are rewritten.
    scanning: Scanning,
    scan: ScanSummary,
    /// Payloads not scanned, each with its own event, by container (for the container's
    /// event).
    unscanned: BTreeMap<String, u64>,
    /// What deduplication wrote.
    dedup: DedupTally,
    /// With `--dedup-within`: the first capture written whole with each payload.
    written: HashMap<DigestKey, OwnOriginal>,
}

/// Packages the captures of `source` (rooted at `root`, whose regular files seed the
/// identifiers of a `--deterministic` run unless the source names its own).
pub fn build_capture_package(
    source: &mut dyn CaptureSource,
    root: &Path,
    opts: &PackageOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PackageReport, PackageError> {
    let started = Instant::now();
    let shape = source.shape_name();
    let staging = Staging::new(&opts.out, opts.force)?;
    let pkg = staging.root.clone();
    let ids = run_ids(source, root, opts)?;
    let now = ids.now();
    let objid = format!("urn:uuid:{}", ids.uuid());
    let mut mets = new_mets(&objid, now, opts, &pkg)?;
    let seeds = source.seeds();
    mets.describe_entities(super::entities_to_describe(opts, &seeds)?);
    let scanner = match opts.virus_check.engine()? {
        Some(engine) => {
            let version = super::quarantine::register_scanner(engine.clamd(), &mut mets)?;
            Some(Scanner { engine, version })
        }
        None => None,
    };
    let identifier = super::register_identifier(opts, &mut mets)?;
    let mut stages = CaptureStages::new(identifier, scanner.as_ref(), &*source, &pkg, opts);
    let package_run = PackageRun { ids: &ids, opts, now };
    let scanning = Scanning { scanner, identifier, rewriting: stages.rewrite.is_some() };
    let mut run = Writing::new(&pkg, package_run, &*source, mets, scanning);
    let counts = stages.write(source, &mut run, progress)?;
    // The link map (every mirror file's path and URL) is dropped with the stage here: it is not
    // kept while the logs, the METS and its check are written.
    let rewrite = stages.rewrite.take().map(|s| s.summary().clone());
    if counts.captures == 0 {
        return Err(PackageError::NoCaptures {
            root: root.to_path_buf(),
            shape: shape.to_string(),
        });
    }
    let source_name = source.source_name().unwrap_or_else(|| crate::sources::file_text(root));
    let mut closed = run.finish(stages.identified(), &source_name)?;
    let side = closed.add_source_files(source, counts.captures, progress)?;
    let metadata_notes = capture_header(&mut closed.mets, opts, source, &seeds, &counts);
    let CapturesClosed { mets, mut manifest, mut containers, .. } = closed;
    let committed = super::commit_package(staging, mets, &mut containers, &mut manifest, opts)?;
    let (refused, refusals) = source.refusals();
    Ok(PackageReport {
        package: committed.package,
        objid,
        shape: shape.to_string(),
        found: Vec::new(),
        missing: Vec::new(),
        refused: refused.to_vec(),
        refusals,
        containers,
        captures: Some(CaptureCounts {
            captures: counts.captures,
            records: closed.records,
            payload_bytes: counts.payload_bytes,
            quirk_counts: side.quirk_counts,
            quirks: source.quirks().iter().take(MAX_EXAMPLES).cloned().collect(),
            quirks_dropped: side.quirks_dropped,
        }),
        instance: None,
        rewrite,
        crawl_log: None,
        logs: side.logs,
        metadata_notes,
        entities: committed.entities,
        virus_check: closed.virus_note,
        identification: closed.identification,
        scan: closed.scan,
        scan_seconds: closed.scan_seconds,
        mets_xsd_checked: committed.written.xsd_checked,
        files: committed.written.files,
        bytes: committed.written.bytes,
        leftovers: committed.leftovers,
        dedup: closed.dedup,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The stages every capture passes before it is written: identification of the payload as
/// harvested, the virus check (an infected capture is never rewritten), then link rewriting
/// where the source needs it, and deduplication last (only a capture written as harvested to
/// content becomes a revisit).
struct CaptureStages<'a> {
    identify: Option<IdentifyStage>,
    scan: Option<ScanStage>,
    rewrite: Option<RewriteStage>,
    dedup: Option<DedupStage<'a>>,
    /// The package being built (where a payload that cannot be hashed is reported).
    pkg: &'a Path,
}

impl<'a> CaptureStages<'a> {
    /// The stages a run of `source` has: identification with an identifier, the virus check
    /// with a scanner, rewriting where `source` gives a link map, deduplication when asked.
    fn new(
        identifier: Option<crate::stages::identify::Identifier>,
        scanner: Option<&Scanner>,
        source: &dyn CaptureSource,
        pkg: &'a Path,
        opts: &'a PackageOptions,
    ) -> Self {
        CaptureStages {
            identify: identifier.map(IdentifyStage::new),
            scan: scanner.map(|s| ScanStage::new(Arc::clone(&s.engine))),
            rewrite: source.link_map().map(|map| RewriteStage::new(map, pkg)),
            dedup: opts.dedup.as_deref().map(|d| DedupStage::new(d, String::new())),
            pkg,
        }
    }

    /// Writes every capture of `source` through the stages to `run`: what they amount to.
    fn write(
        &mut self,
        source: &mut dyn CaptureSource,
        run: &mut Writing<'_>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Counts, PackageError> {
        let mut counts = Counts::default();
        let digests = Digests { wanted: self.scan.is_some(), pkg: self.pkg };
        let stages: [Option<&mut dyn Stage>; 4] = [
            self.identify.as_mut().map(|s| s as &mut dyn Stage),
            self.scan.as_mut().map(|s| s as &mut dyn Stage),
            self.rewrite.as_mut().map(|s| s as &mut dyn Stage),
            self.dedup.as_mut().map(|s| s as &mut dyn Stage),
        ];
        crate::stages::run_pipeline(
            &mut |batch| gather(source, batch, &mut counts, digests, progress),
            &mut stages.into_iter().flatten().collect::<Vec<_>>(),
            // One batch at a time: a mirror's rewritten pages and held payloads stay within one
            // batch's bounds.
            &mut crate::stages::EachItem { write: |staged| run.write(staged), overlap: false },
        )?;
        Ok(counts)
    }

    /// What identification found, and by what identifier (none without identification).
    fn identified(
        &self,
    ) -> Option<(crate::stages::identify::Identifier, &crate::stages::identify::Tally)> {
        self.identify.as_ref().map(|s| (s.identifier(), &s.tally))
    }
}

/// A run's containers once closed, their METS sections finished: the METS still open for the
/// package's side files and header, and what the report says of them.
struct CapturesClosed<'a> {
    mets: crate::mets::MetsBuilder,
    pkg: &'a Path,
    run: PackageRun<'a>,
    manifest: Vec<ManifestLine>,
    containers: Vec<ContainerReport>,
    /// The records they hold.
    records: u64,
    virus_note: String,
    scan_seconds: f64,
    scan: ScanSummary,
    identification: Option<super::IdentificationReport>,
    dedup: Option<super::DedupReport>,
}

/// The source's files packaged beside the containers, as the report counts them.
struct SourceFiles {
    /// Side files copied to `logs/`.
    logs: u64,
    /// Every quirk met, by kind.
    quirk_counts: BTreeMap<String, u64>,
    /// Quirks only counted, not listed.
    quirks_dropped: u64,
}

impl<'a> Writing<'a> {
    /// Closes the containers once every capture is written: their virus checks, the package's
    /// identification event on them (`identified`, with an identifier), and their METS
    /// sections finished, each naming `source_name` as what it was written from.
    fn finish(
        mut self,
        identified: Option<(crate::stages::identify::Identifier, &crate::stages::identify::Tally)>,
        source_name: &str,
    ) -> Result<CapturesClosed<'a>, PackageError> {
        let Closed { manifest, mut finished, records } = self.close_containers()?;
        let (virus_note, scan_seconds) = self.virus_checks(&mut finished);
        let Writing { mut mets, scan, dedup: tally, pkg, run, .. } = self;
        let rels = finished.iter().map(|f| f.closed.rel.clone()).collect();
        let identification = super::identification_event(identified, run, rels, &mut mets);
        let mut dedup = run.opts.dedup.as_ref().map(|_| super::DedupReport::default());
        let origin = CaptureOrigin { name: source_name, pkg };
        let deduplicated = Deduplicated { tally: &tally, report: &mut dedup };
        let containers = finish_containers(&mut mets, finished, run, origin, deduplicated)?;
        Ok(CapturesClosed {
            mets,
            pkg,
            run,
            manifest,
            containers,
            records,
            virus_note,
            scan_seconds,
            scan,
            identification,
            dedup,
        })
    }
}

impl CapturesClosed<'_> {
    /// The source's own files copied byte-exact into `logs/`, and its quirks log (what it
    /// found odd in its `captures`); their manifest lines added.
    fn add_source_files(
        &mut self,
        source: &dyn CaptureSource,
        captures: u64,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SourceFiles, PackageError> {
        let (pkg, now) = (self.pkg, self.run.now);
        let side = source.side_files();
        for s in &side {
            let (rel, sha, _) =
                super::add_log(&mut self.mets, pkg, &s.path, &s.relative, now, progress)?;
            self.manifest.push((rel, sha));
        }
        let (quirk_counts, quirks_dropped, log) =
            quirks_log(source, &mut self.mets, pkg, captures, now)?;
        self.manifest.push(log);
        Ok(SourceFiles { logs: side.len() as u64, quirk_counts, quirks_dropped })
    }
}

/// Fills in the METS header of a capture source's package (see [`super::write_header`]):
/// the notes on what the metadata lacked or took from the source.
fn capture_header(
    mets: &mut crate::mets::MetsBuilder,
    opts: &PackageOptions,
    source: &dyn CaptureSource,
    seeds: &[String],
    counts: &Counts,
) -> Vec<String> {
    let seeds_from = source.seeds_from();
    let seeds = super::SeedsFrom { seeds, file: &seeds_from };
    let mut notes = super::write_header(mets, opts, seeds, counts.first, counts.last);
    if counts.first.is_none() {
        note_inferred_dates(&mut notes);
    }
    notes
}

/// Says why no capture dates are stated when every record has a date, none of them the
/// harvester's own: not "none found", but every one inferred.
fn note_inferred_dates(notes: &mut [String]) {
    for n in notes.iter_mut().filter(|n| n.starts_with("no capture dates")) {
        *n = "every record's date is inferred (each says from what, in X-Webaip-Date-Source): \
              the website's MODS states no capture dates"
            .to_string();
    }
}

/// Where a run's captures came from (the source's name) and where its package is built.
#[derive(Clone, Copy)]
struct CaptureOrigin<'a> {
    name: &'a str,
    pkg: &'a Path,
}

/// What deduplication wrote in the content container, and the report it is counted into.
struct Deduplicated<'a> {
    tally: &'a DedupTally,
    report: &'a mut Option<super::DedupReport>,
}

/// Finishes the METS section of each closed container, and says what each holds; the content
/// container states what deduplication did in it (`dedup`).
fn finish_containers(
    mets: &mut crate::mets::MetsBuilder,
    finished: Vec<Finished>,
    run: PackageRun<'_>,
    origin: CaptureOrigin<'_>,
    dedup: Deduplicated<'_>,
) -> Result<Vec<ContainerReport>, PackageError> {
    let mut containers = Vec::new();
    for Finished { closed, events } in finished {
        let ClosedContainer { mets: cw, rel, size, sha512: sha, sha256, records: n } = closed;
        containers.push(ContainerReport {
            input: origin.name.to_string(),
            path: rel.clone(),
            action: "written".into(),
            records: n,
            listed: cw.listed(),
            migration: None,
            warc_findings: 0,
            warc_finding_examples: Vec::new(),
            bytes_read: None,
        });
        let name = origin.name.to_string();
        let content = rel.starts_with(layout::CONTENT_DIR);
        let written = super::WrittenFile { size, sha512: sha };
        let mut file = super::written_container_file(rel, written, n, events, name, run.now);
        if content {
            file.object.sha256 = sha256;
            super::deduplicated::deduplicated(&mut file, dedup.tally, run, dedup.report);
        }
        mets.finish_container(cw, file).map_err(io_err(origin.pkg))?;
    }
    Ok(containers)
}

/// The identifiers of a run: seeded from the source's files for `--deterministic` (the
/// files the source names, else every regular file under `root`), random otherwise.
fn run_ids(
    source: &dyn CaptureSource,
    root: &Path,
    opts: &PackageOptions,
) -> Result<Ids, PackageError> {
    if !opts.deterministic {
        return Ok(Ids::random());
    }
    let shape = source.shape_name();
    let (kind, files) = match source.id_seed() {
        Some(seed) => seed,
        None => (format!("webaip-{shape}"), regular_files(root)),
    };
    let mut seed = super::InputSeed::new(&kind)?;
    for f in files {
        let (name, path) = f?;
        seed.add(name, path)?;
    }
    Ok(Ids::seeded(seed.finish()?))
}

/// Whether payloads are hashed as they are gathered (with a scanner: a verdict is reused
/// under the SHA-512), and the package a payload that cannot be read for it is reported at.
#[derive(Clone, Copy)]
struct Digests<'a> {
    wanted: bool,
    pkg: &'a Path,
}

/// Reads the next batch of captures into `batch` (bounded as every scanned batch is,
/// [`batching`]), counting them into `counts`. A small payload is read
/// once, here: hashed, scanned and written from memory. With a scanner (`digests`), every
/// payload's SHA-512. True once the source is exhausted.
fn gather(
    source: &mut dyn CaptureSource,
    batch: &mut Vec<StagedItem>,
    counts: &mut Counts,
    digests: Digests<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<bool, PackageError> {
    let mut held_bytes = 0u64;
    while !batching::batch_full(batch.len(), held_bytes) {
        let Some(next) = source.next() else { return Ok(true) };
        let c = next?;
        counts.captures += 1;
        if !c.date_source.inferred {
            counts.first = Some(counts.first.map_or(c.date, |x| x.min(c.date)));
            counts.last = Some(counts.last.map_or(c.date, |x| x.max(c.date)));
        }
        let len = c.payload.len();
        let io = |source| PackageError::Io { path: c.provenance.file.clone().into(), source };
        let held = if len <= batching::HELD_CAPTURE {
            let mut b = Vec::with_capacity(len as usize);
            c.payload.open().and_then(|mut r| r.read_to_end(&mut b)).map_err(io)?;
            if b.len() as u64 != len {
                return Err(PackageError::PayloadChanged {
                    file: c.provenance.file.clone(),
                    read: b.len() as u64,
                    expected: len,
                });
            }
            held_bytes += len;
            Some(b)
        } else {
            None
        };
        counts.payload_bytes += len;
        progress(len);
        let digest = match &held {
            _ if !digests.wanted || len == 0 => None,
            Some(b) => Some(crate::formats::digest::Sha512::digest(b)),
            None => {
                let payload = c.payload.open().map_err(io_err(digests.pkg))?;
                Some(crate::formats::digest::sha512_of(payload).map_err(io_err(digests.pkg))?.1)
            }
        };
        batch.push(StagedItem::new(Item::Capture(c), held, digest));
    }
    Ok(false)
}

impl<'a> Writing<'a> {
    /// Where the captures of `source` go, in the package at `pkg`: nothing written yet.
    fn new(
        pkg: &'a Path,
        run: PackageRun<'a>,
        source: &dyn CaptureSource,
        mets: crate::mets::MetsBuilder,
        scanning: Scanning,
    ) -> Self {
        let containers = Containers {
            content: None,
            original: None,
            viral: None,
            pkg,
            run,
            shape: source.shape_name(),
            stem: source.container_stem(),
            description: source.description(),
        };
        Writing {
            pkg,
            run,
            mets,
            containers,
            scanning,
            scan: ScanSummary::default(),
            unscanned: BTreeMap::new(),
            dedup: DedupTally::default(),
            written: HashMap::new(),
        }
    }
}

impl Writing<'_> {
    /// A virus-check event of clamd's on `objects`.
    fn scan_event(&self, outcome: EventOutcome, objects: Vec<String>) -> Event {
        let version = self.scanning.scanner.as_ref().map_or("", |s| s.version.as_str());
        let scope = super::quarantine::SCOPE_CAPTURES;
        super::quarantine::clamd_event(self.run, version, scope, outcome, objects)
    }

    /// Writes one capture where its stages routed it: its record with the events its verdict
    /// and its replacement call for, then its metadata record and, for an infected one, a
    /// cleaner's copy.
    fn write(&mut self, staged: StagedItem) -> Result<(), PackageError> {
        let StagedItem {
            item, held, route, findings, replacement, identification, revisit, ..
        } = staged;
        let Item::Capture(c) = item else {
            return Err(PackageError::Internal("a stored record among captures"));
        };
        if let Some(revisit) = revisit
            && let Some(written) = self.write_revisit(&c, held.as_deref(), &revisit)?
        {
            return self.write_metadata(&c, &written, Slot::Content, false);
        }
        let verdict = findings.into_iter().next().map(|f| match f {
            ScanFinding::Infected(sig) => ScanResult::Infected(sig),
            ScanFinding::NotScanned(why) => ScanResult::NotScanned(why),
        });
        let infected = route == Route::Viral;
        let slot = if infected { Slot::Viral } else { Slot::Content };
        let (pkg, ids) = (self.pkg, self.run.ids);
        let sink = self.containers.get(slot, &mut self.mets, c.date)?;
        let replaced = replacement.is_some();
        let written = match replacement.as_ref().map(|r| &r.payload) {
            Some(Payload::Bytes(b)) => write_capture(sink, pkg, ids, &c, &c.payload, Some(b))?,
            Some(p) => write_capture(sink, pkg, ids, &c, p, None)?,
            None => write_capture(sink, pkg, ids, &c, &c.payload, held.as_deref())?,
        };
        let rel = sink.rel.clone();
        if slot == Slot::Content && !replaced {
            self.note_written(&c, &written);
        }
        let oid = object_id(&rel, &c, &written);
        let own_event = self.own_event(verdict.as_ref(), &rel, &c);
        match replacement {
            None => {
                let described = own_event.map(|(outcome, detail)| {
                    let outcome = EventOutcome { outcome, detail: Some(detail) };
                    let e = self.scan_event(outcome, vec![oid.clone()]);
                    if !infected {
                        *self.unscanned.entry(rel.clone()).or_default() += 1;
                    }
                    described_bytestream(oid.clone(), &written, &c, vec![e], vec![])
                });
                let rf = capture_record(&written, &c, described, None);
                let rf = self.identified(rf, &oid, identification);
                let sink = self.containers.get(slot, &mut self.mets, c.date)?;
                sink.mets.add_record(&rf).map_err(io_err(pkg))?;
            }
            Some(r) => {
                let new = (&written, oid.as_str(), slot);
                let ids = (identification, self.identify_payload(&c, &r.payload)?);
                self.write_harvested(&c, held.as_deref(), (&r.detail, ids), new, own_event)?;
            }
        }
        self.write_metadata(&c, &written, slot, replaced)?;
        if let (true, Some(ScanResult::Infected(sig))) = (infected, &verdict) {
            self.write_cleaned(&c, held.as_deref(), (&written, &oid), sig)?;
        }
        Ok(())
    }

    /// Writes the revisit of a capture whose payload is stored already (`stages::dedup`): its
    /// WARC fields and HTTP header, without the payload, described with where the payload
    /// is. `None` (nothing written) where the revisit would not state the payload a reader
    /// finds in the capture's record (the payload does not start right after the stored
    /// header), or where the original of this run is not known: the capture is then written
    /// whole.
    fn write_revisit(
        &mut self,
        c: &Capture,
        held: Option<&[u8]>,
        revisit: &Revisit,
    ) -> Result<Option<WrittenRecord>, PackageError> {
        let header = c.http_header.as_deref().unwrap_or_default();
        let own = match revisit.own {
            true => match self.written.get(&revisit.digest) {
                Some(o) => Some(o.clone()),
                None => return Ok(None),
            },
            false => None,
        };
        let (pkg, ids) = (self.pkg, self.run.ids);
        let sink = self.containers.get(Slot::Content, &mut self.mets, c.date)?;
        let path = pkg.join(&sink.rel);
        let offset = payload_offset(c, header, &c.payload, held).map_err(io_err(&path))?;
        if offset != header.len() as u64 {
            return Ok(None);
        }
        let mut revisit = revisit.clone();
        if let Some(o) = &own {
            let r = &mut revisit.refers;
            (r.url, r.date, r.container) = (o.url.clone(), o.date.clone(), sink.rel.clone());
            r.record_id = Some(o.record_id.clone());
        }
        let mut spec = capture_spec(c, sink, ids);
        spec.warc_type = "revisit".into();
        spec.payload_digest = false;
        spec.extra.extend(crate::stages::dedup::revisit_fields(&revisit));
        let written = sink.writer.write_record(&spec, header, offset).map_err(io_err(&path))?;
        let len = held.map_or(c.payload.len(), |b| b.len() as u64);
        let t = &mut self.dedup;
        t.revisits += 1;
        t.payload_bytes += len;
        *t.packages.entry(Holder::of(&revisit)).or_default() += 1;
        let own = own.map(|o| (o.member, o.payload_begin));
        let refers = revisit.referenced(own, len, &payload_mime(c));
        let rf = RecordFile {
            content: None,
            refers: Some(Box::new(refers)),
            ..capture_record(&written, c, None, None)
        };
        sink.mets.add_record(&rf).map_err(io_err(pkg))?;
        Ok(Some(written))
    }

    /// Keeps where a capture written whole to the content container went, for
    /// `--dedup-within` revisits of it to state (one entry per distinct payload, as the dedup
    /// stage keeps): the first written with a payload, keyed by the SHA-1 of the payload a
    /// reader finds in it, is the one every later revisit of that payload names.
    fn note_written(&mut self, c: &Capture, w: &WrittenRecord) {
        let within = self.run.opts.dedup.as_ref().is_some_and(|d| d.within);
        let http = c.http_header.as_ref().is_some_and(|h| !h.is_empty());
        let whole = c.truncated.is_none() && w.digests.payload_len > 0;
        if !within || c.kind != CaptureKind::Response || !http || !whole {
            return;
        }
        let Some(key) = DigestKey::new(Algorithm::Sha1, &w.digests.payload_sha1) else { return };
        self.written.entry(key).or_insert_with(|| OwnOriginal {
            record_id: w.record_id.clone(),
            url: c.uri.clone(),
            date: c.date.to_rfc3339_opts(SecondsFormat::Secs, true),
            member: ByteRange { begin: w.member_offset, len: w.member_len },
            payload_begin: w.payload_offset,
        });
    }

    /// A payload infected or not scanned is described on its own, with its event: the
    /// event's outcome and detail, counted into the scan summary.
    fn own_event(
        &mut self,
        verdict: Option<&ScanResult>,
        rel: &str,
        c: &Capture,
    ) -> Option<(String, String)> {
        self.scanning.scanner.as_ref()?;
        let verdict = verdict?;
        let (outcome, detail) = super::quarantine::verdict_outcome(self.run.opts, verdict)?;
        let place = (rel.to_string(), c.provenance.file.clone(), detail.clone());
        match verdict {
            ScanResult::Infected(_) => {
                self.scan.infected += 1;
                self.scan.findings.push(place);
            }
            _ => {
                self.scan.not_scanned += 1;
                self.scan.unscanned.push(place);
            }
        }
        Some((outcome, detail))
    }

    /// For a capture a stage gave a new payload (`new`: its record, object id and container):
    /// the harvested payload, as harvested, to the original container, and both described,
    /// related by the transformation event (`detail`: what was done). A payload not scanned
    /// (`own_event`) is said of both.
    fn write_harvested(
        &mut self,
        c: &Capture,
        held: Option<&[u8]>,
        (detail, (harvested_id, new_id)): (&str, (Option<Identification>, Option<Identification>)),
        (written, oid, slot): (&WrittenRecord, &str, Slot),
        own_event: Option<(String, String)>,
    ) -> Result<(), PackageError> {
        let (pkg, ids, opts) = (self.pkg, self.run.ids, self.run.opts);
        let rel = self.containers.get(slot, &mut self.mets, c.date)?.rel.clone();
        let orig = self.containers.get(Slot::Original, &mut self.mets, c.date)?;
        let ow = write_capture(orig, pkg, ids, c, &c.payload, held)?;
        let orig_oid = object_id(&orig.rel, c, &ow);
        let orig_rel = orig.rel.clone();
        let tr = &opts.profile.events.transformation;
        let event = Event {
            id: ids.uuid().to_string(),
            event_type: tr.term.clone(),
            event_type_uri: Some(tr.uri.clone()).filter(|u| !u.is_empty()),
            date_time: self.run.now,
            detail: Some(format!(
                "{}: {}; program=\"webaip\"; version=\"{}\"",
                tr.detail_word.clone().unwrap_or_else(|| "transformation".into()),
                detail,
                env!("CARGO_PKG_VERSION")
            )),
            outcome: "success".into(),
            outcome_detail: None,
            agents: vec![("local".into(), "webaip".into(), "executing program".into())],
            objects: vec![
                ("local".into(), orig_oid.clone(), "source".into()),
                ("local".into(), oid.to_string(), "outcome".into()),
            ],
        };
        let mut events = vec![event.clone()];
        // Not scanned: said of both, the harvested payload and its rewritten copy.
        if let Some((outcome, detail)) = own_event {
            let objects = vec![orig_oid.clone(), oid.to_string()];
            let outcome = EventOutcome { outcome, detail: Some(detail) };
            events.push(self.scan_event(outcome, objects));
            *self.unscanned.entry(rel).or_default() += 1;
            *self.unscanned.entry(orig_rel).or_default() += 1;
        }
        let event_ids: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
        let relationship = Relationship {
            relationship_type: opts.profile.relationships.relationship_type.clone(),
            subtype: opts.profile.relationships.transformation.clone(),
            related_object: ("local".into(), orig_oid.clone()),
            related_event: Some(event.id.clone()),
        };
        let new_obj = described_bytestream(oid.into(), written, c, events, vec![relationship]);
        let mut orig_obj = described_bytestream(orig_oid, &ow, c, vec![], vec![]);
        orig_obj.object.events = event_ids;
        let orig_rf = capture_record(&ow, c, Some(orig_obj), None);
        let orig_rf = self.identified(orig_rf, "", harvested_id);
        let orig = self.containers.get(Slot::Original, &mut self.mets, c.date)?;
        orig.mets.add_record(&orig_rf).map_err(io_err(pkg))?;
        let page = payload_mime(c)
            .starts_with("text/html")
            .then(|| PageRole { kind: PageKind::Webpage, label: c.uri.clone() });
        let rf = self.identified(capture_record(written, c, Some(new_obj), page), "", new_id);
        let sink = self.containers.get(slot, &mut self.mets, c.date)?;
        sink.mets.add_record(&rf).map_err(io_err(pkg))
    }

    /// A capture's concurrent metadata record, right after it (`written`) in container
    /// `slot`; where links are rewritten, it says whether this capture's were (`replaced`).
    fn write_metadata(
        &mut self,
        c: &Capture,
        written: &WrittenRecord,
        slot: Slot,
        replaced: bool,
    ) -> Result<(), PackageError> {
        let Some(block) = &c.metadata else { return Ok(()) };
        let (pkg, ids) = (self.pkg, self.run.ids);
        let sink = self.containers.get(slot, &mut self.mets, c.date)?;
        let mut block = block.clone();
        if self.scanning.rewriting {
            let transformed = if replaced { "yes (original in the Original group)" } else { "no" };
            block.extend_from_slice(warc_fields_line("transformed", transformed).as_bytes());
        }
        let spec = RecordSpec {
            warc_type: "metadata".into(),
            record_id: ids.warc_record_id(),
            date: c.date.to_rfc3339_opts(SecondsFormat::Secs, true),
            target_uri: Some(c.uri.clone()),
            warcinfo_id: Some(sink.warcinfo.clone()),
            concurrent_to: Some(written.record_id.clone()),
            content_type: Some("application/warc-fields".into()),
            ..RecordSpec::default()
        };
        let w = sink.write(pkg, &spec, &block)?;
        let mime = "application/warc-fields".to_string();
        sink.mets.add_record(&super::written_record_file(&w, mime, None, None)).map_err(io_err(pkg))
    }

    /// With a cleaner, the clean copy it makes of an infected payload (`sig`), rescanned, goes
    /// to content/ (P5.5), related to its original in viral/ (`written` as `oid`).
    fn write_cleaned(
        &mut self,
        c: &Capture,
        held: Option<&[u8]>,
        (written, oid): (&WrittenRecord, &str),
        sig: &str,
    ) -> Result<(), PackageError> {
        let (Some(cmd), Some(scanner)) = (&self.run.opts.cleaner, &self.scanning.scanner) else {
            return Ok(());
        };
        let cleaned = match clean_capture(cmd, c, held, &scanner.engine, self.pkg)? {
            Ok(bytes) => bytes,
            Err(why) => {
                let viral = oid.split('#').next().unwrap_or_default().to_string();
                self.scan.not_cleaned.push((viral, c.provenance.file.clone(), why.to_string()));
                return Ok(());
            }
        };
        // Said in the record too, as for Heritrix records: the WARC alone tells a cleaned copy
        // from a harvested resource.
        let mut warc_fields = c.warc_fields.clone();
        let cleaned_from = crate::formats::warc::writer::FIELD_CLEANED_FROM;
        warc_fields.push((cleaned_from.into(), written.record_id.clone()));
        let copy = Capture {
            kind: CaptureKind::Resource,
            http_header: None,
            content_type: Some(payload_mime(c)),
            truncated: None,
            metadata: None,
            payload: Payload::Bytes(Vec::new()),
            warc_fields,
            ..c.clone()
        };
        let (pkg, ids) = (self.pkg, self.run.ids);
        let sink = self.containers.get(Slot::Content, &mut self.mets, c.date)?;
        let cw = write_capture(sink, pkg, ids, &copy, &copy.payload, Some(&cleaned))?;
        let cid = object_id(&sink.rel, c, &cw);
        let outcome = EventOutcome {
            outcome: self.run.opts.profile.virus_outcomes.cleaned.clone(),
            detail: Some(super::quarantine::cleaned_detail(sig, &cmd.command)),
        };
        let ce = self.scan_event(outcome, vec![oid.to_string(), cid.clone()]);
        let relationship =
            super::quarantine::cleaned_relationship(self.run.opts, oid.to_string(), ce.id.clone());
        let described = described_bytestream(cid, &cw, &copy, vec![ce], vec![relationship]);
        self.scan.cleaned += 1;
        let id = self.scanning.identifier.map(|i| i.identify_bytes(&payload_mime(c), &cleaned));
        let rf = self.identified(capture_record(&cw, &copy, Some(described), None), "", id);
        let sink = self.containers.get(Slot::Content, &mut self.mets, c.date)?;
        sink.mets.add_record(&rf).map_err(io_err(pkg))
    }

    /// A capture's record with what identification found of its payload (described as `oid`
    /// when the mode or a contradiction calls for it and nothing else describes it).
    fn identified(&self, rf: RecordFile, oid: &str, id: Option<Identification>) -> RecordFile {
        let oid = |_: &RecordFile| oid.to_string();
        crate::stages::identify::record_identified(rf, oid, id, self.run.opts.identify)
    }

    /// What identification finds in a payload a stage put in place of the harvested one.
    fn identify_payload(
        &self,
        c: &Capture,
        payload: &Payload,
    ) -> Result<Option<Identification>, PackageError> {
        let Some(i) = self.scanning.identifier else { return Ok(None) };
        let declared = payload_mime(c);
        Ok(Some(match payload {
            Payload::Bytes(b) => i.identify_bytes(&declared, b),
            p => i
                .identify_reader(&declared, p.open().map_err(io_err(self.pkg))?)
                .map_err(io_err(self.pkg))?,
        }))
    }

    /// Closes the containers (content, original, viral): their manifest lines, what their
    /// `<file>`s need, and the records they hold.
    fn close_containers(&mut self) -> Result<Closed, PackageError> {
        let mut closed = Closed { manifest: Vec::new(), finished: Vec::new(), records: 0 };
        let Containers { content, original, viral, .. } = &mut self.containers;
        for sink in [content.take(), original.take(), viral.take()].into_iter().flatten() {
            let c = sink.close(self.pkg)?;
            closed.records += c.records;
            closed.manifest.push((c.rel.clone(), c.sha512.clone()));
            closed.finished.push(Finished { closed: c, events: Vec::new() });
        }
        Ok(closed)
    }

    /// Every container's virus-check event (or, without a scanner, the package's event saying
    /// nothing was scanned): the report's note on the virus check, and the seconds spent
    /// waiting for clamd.
    fn virus_checks(&mut self, finished: &mut [Finished]) -> (String, f64) {
        let Some(Scanner { engine, version }) = &self.scanning.scanner else {
            let objects = finished.iter().map(|f| f.closed.rel.clone()).collect();
            let event = super::no_scan_event(self.run, objects);
            self.mets.add_package_event(event);
            return (super::NO_SCAN_NOTE.to_string(), 0.0);
        };
        let counts = engine.counts();
        let scan = &mut self.scan;
        (scan.scanned, scan.reused) = (counts.scanned, counts.reused);
        let opts = self.run.opts;
        for Finished { closed, events } in finished.iter_mut() {
            let rel = &closed.rel;
            let outcome = if rel.starts_with(layout::VIRAL_DIR) {
                let sigs = self.scan.findings.iter().map(|(_, _, s)| s.as_str());
                super::quarantine::viral_check(opts, sigs)
            } else {
                let infected = match rel.starts_with(layout::CONTENT_DIR) {
                    true => self.scan.infected,
                    false => 0,
                };
                let n = self.unscanned.get(rel.as_str()).copied().unwrap_or(0);
                super::quarantine::content_check(opts, infected, n, 0)
            };
            events.push(self.scan_event(outcome, vec![rel.clone()]));
        }
        let note = self.scan.note(version);
        (note, counts.waited_seconds)
    }
}

/// The source's quirks log, `logs/webaip/<shape>.quirks.json`, written to the package and
/// listed in the METS: every quirk met by kind (those only counted included), how many were
/// only counted, and its manifest line.
fn quirks_log(
    source: &dyn CaptureSource,
    mets: &mut crate::mets::MetsBuilder,
    pkg: &Path,
    captures: u64,
    now: DateTime<Utc>,
) -> Result<(BTreeMap<String, u64>, u64, ManifestLine), PackageError> {
    let shape = source.shape_name();
    let quirks = source.quirks();
    // Every quirk met by kind, those only counted included, where the source counts them.
    let quirk_counts: BTreeMap<String, u64> = match source.quirk_counts() {
        Some(c) => c.clone(),
        None => {
            let mut c = BTreeMap::new();
            for q in quirks {
                *c.entry(q.kind.clone()).or_default() += 1;
            }
            c
        }
    };
    let quirks_rel = layout::in_dir(layout::WEBAIP_LOGS_DIR, &format!("{shape}.quirks.json"));
    // Serialised from the source's own list (no copy of it, no JSON tree of it). The list is
    // bounded (QUIRKS_KEPT); what was only counted is said in `dropped`.
    #[derive(Serialize)]
    struct QuirksLog<'a> {
        captures: u64,
        counts: &'a BTreeMap<String, u64>,
        #[serde(skip_serializing_if = "is_zero")]
        dropped: u64,
        quirks: &'a [Quirk],
        shape: &'a str,
    }
    fn is_zero(n: &u64) -> bool {
        *n == 0
    }
    let quirks_dropped = source.quirks_dropped();
    let log = QuirksLog { captures, counts: &quirk_counts, dropped: quirks_dropped, quirks, shape };
    let json = serde_json::to_vec_pretty(&log)
        .map_err(|source| PackageError::Json { path: quirks_rel.clone(), source })?;
    let (rel, sha, _) = super::add_generated_log(mets, pkg, &quirks_rel, &json, now)?;
    Ok((quirk_counts, quirks_dropped, (rel, sha)))
}

/// Quirks a source keeps one by one (the others are counted): the bound of the package's
/// quirks log.
pub const QUIRKS_KEPT: usize = crate::sources::capture::QuirkLog::LIMIT;

/// The PREMIS object id of a capture's payload in container `rel`: its path in a mirror,
/// else its record id.
fn object_id(rel: &str, c: &Capture, w: &WrittenRecord) -> String {
    match c.warc_fields.iter().any(|(k, _)| k == MIRROR_PATH) {
        true => format!("{rel}#{}", c.provenance.file),
        false => format!("{rel}#{}", w.record_id.trim_matches(['<', '>'])),
    }
}

/// The clean copy a cleaner makes of an infected payload, rescanned (`None`: it could not
/// make one, or the copy is still infected). The cleaner reads a temporary copy in the package
/// being built, never the harvest's own file (a cleaner that cleans in place would change
/// the source).
fn clean_capture(
    cmd: &crate::stages::scan::Cleaner,
    c: &Capture,
    held: Option<&[u8]>,
    engine: &ScanEngine,
    pkg: &Path,
) -> Result<Result<Vec<u8>, crate::stages::scan::NotCleaned>, PackageError> {
    let mut tmp =
        tempfile::Builder::new().prefix(".infected-").tempfile_in(pkg).map_err(io_err(pkg))?;
    match held {
        Some(b) => io::Write::write_all(&mut tmp, b),
        None => c.payload.open().and_then(|mut r| io::copy(&mut r, &mut tmp).map(drop)),
    }
    .map_err(io_err(pkg))?;
    Ok(crate::stages::scan::clean_copy(cmd, tmp.path(), engine)?)
}

/// Writes one capture as a `response` (its header bytes as stored, then the payload) or a
/// `resource` record.
fn write_capture(
    sink: &mut ContainerSink,
    pkg: &Path,
    ids: &Ids,
    c: &Capture,
    payload: &Payload,
    in_memory: Option<&[u8]>,
) -> Result<WrittenRecord, PackageError> {
    let header: &[u8] = match c.kind {
        CaptureKind::Response => c.http_header.as_deref().unwrap_or_default(),
        CaptureKind::Resource => &[],
    };
    let spec = capture_spec(c, sink, ids);
    let path = pkg.join(&sink.rel);
    let offset = payload_offset(c, header, payload, in_memory).map_err(io_err(&path))?;
    match in_memory {
        // libdeflate compresses a whole block in memory, so the (small) block is put together
        // once; larger payloads stream from the source below.
        Some(b) => {
            let block = [header, b].concat();
            sink.writer.write_record(&spec, &block, offset).map_err(io_err(&path))
        }
        None => {
            let block = io::Cursor::new(header).chain(payload.open().map_err(io_err(&path))?);
            sink.writer.write_streamed(&spec, block, offset).map_err(io_err(&path))
        }
    }
}

/// The record of a capture: a `response` (its header bytes as stored, then the payload) or a
/// `resource`, with the fields its source gives.
fn capture_spec(c: &Capture, sink: &ContainerSink, ids: &Ids) -> RecordSpec {
    let mut extra = Vec::new();
    if c.date_source.inferred {
        extra.push((
            crate::formats::arc_to_warc::FIELD_DATE_SOURCE.to_string(),
            c.date_source.label.clone(),
        ));
    }
    extra.extend(c.warc_fields.iter().cloned());
    RecordSpec {
        warc_type: match c.kind {
            CaptureKind::Response => "response".into(),
            CaptureKind::Resource => "resource".into(),
        },
        record_id: ids.warc_record_id(),
        date: c.date.to_rfc3339_opts(SecondsFormat::Secs, true),
        target_uri: Some(c.uri.clone()),
        ip_address: c.ip.clone(),
        warcinfo_id: Some(sink.warcinfo.clone()),
        truncated: c.truncated.clone(),
        content_type: Some(match c.kind {
            CaptureKind::Response => "application/http; msgtype=response".into(),
            CaptureKind::Resource => payload_mime(c),
        }),
        payload_digest: true,
        extra,
        ..RecordSpec::default()
    }
}

/// Where the payload starts in a capture's record block (`header` then `payload`): found by
/// the one rule every reader uses (`crate::formats::warc::payload`), not assumed to follow the
/// stored header, so that `audit --deep`, `pages` and warcio find the payload the METS and the
/// `WARC-Payload-Digest` describe (an `ftp:` capture's block is its payload; a header with a
/// blank-looking line ends there).
fn payload_offset(
    c: &Capture,
    header: &[u8],
    payload: &Payload,
    in_memory: Option<&[u8]>,
) -> io::Result<u64> {
    use crate::formats::http::MAX_HTTP_HEADER_LEN;
    use crate::formats::warc::payload::{PayloadStart, payload_start};
    if c.kind == CaptureKind::Resource {
        return Ok(0);
    }
    let uri = Some(c.uri.as_str());
    let len = in_memory.map_or(payload.len(), |b| b.len() as u64);
    match payload_start(Some("response"), uri, header, len == 0) {
        PayloadStart::Unlocated if header.len() < MAX_HTTP_HEADER_LEN => {
            // The stored header has no end of its own: the rule reads on into the payload.
            let want = (MAX_HTTP_HEADER_LEN - header.len()) as u64;
            let mut prefix = header.to_vec();
            match in_memory {
                Some(b) => prefix.extend_from_slice(&b[..b.len().min(want as usize)]),
                None => {
                    payload.open()?.take(want).read_to_end(&mut prefix)?;
                }
            }
            let whole = (prefix.len() - header.len()) as u64 == len;
            Ok(payload_start(Some("response"), uri, &prefix, whole).offset())
        }
        s => Ok(s.offset()),
    }
}

/// The METS description of a capture's record.
fn capture_record(
    w: &WrittenRecord,
    c: &Capture,
    described: Option<DescribedBytestream>,
    page: Option<PageRole>,
) -> RecordFile {
    let capture = UrlCapture {
        uri: c.uri.clone(),
        date: c.date.to_rfc3339_opts(SecondsFormat::Secs, true),
        date_inferred: c.date_source.inferred,
    };
    RecordFile { page, ..super::written_record_file(w, payload_mime(c), described, Some(capture)) }
}

/// The PREMIS description of a payload that has events or relationships of its own
/// (infected, not scanned, rewritten, cleaned).
fn described_bytestream(
    id: String,
    w: &WrittenRecord,
    c: &Capture,
    events: Vec<Event>,
    relationships: Vec<Relationship>,
) -> DescribedBytestream {
    DescribedBytestream {
        object: PremisObject {
            id_type: "local".into(),
            id,
            size: w.digests.payload_len,
            sha512: hex(&w.digests.payload_sha512),
            sha256: None,
            format: Format { name: payload_mime(c), version: None, pronom: None },
            identification: None,
            original_name: Some(c.uri.clone()),
            significant_properties: vec![],
            relationships,
            events: events.iter().map(|e| e.id.clone()).collect(),
        },
        events,
    }
}

/// Every regular file under `root`, (name, path), as the walk finds them (the seed sorts).
fn regular_files(root: &Path) -> crate::sources::capture::SeedFiles<'_> {
    let walk = walkdir::WalkDir::new(root).follow_links(false).into_iter().flatten();
    Box::new(
        walk.filter(|e| e.file_type().is_file())
            // What the source refuses unread (a path over PATH_MAX) cannot seed anything either.
            .filter(|e| layout::regular_metadata(e.path()).is_ok())
            .map(move |e| Ok((crate::sources::name_text(root, e.path()), e.into_path()))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A package whose every record's date is inferred says so, rather than that no capture
    /// dates were found; its other notes stay.
    #[test]
    fn inferred_dates_are_named_in_place_of_none_found() {
        let seeds = ["http://e.org/".to_string()];
        let metadata = crate::metadata::CuratorMetadata::default();
        let (_, _, _, mut notes) = metadata.resolve((&seeds, "seeds.txt"), (None, None));
        let before = notes.clone();
        note_inferred_dates(&mut notes);
        let changed: Vec<usize> = (0..notes.len()).filter(|&i| notes[i] != before[i]).collect();
        assert_eq!(changed.len(), 1, "{notes:?}");
        let n = &notes[changed[0]];
        assert!(n.starts_with("every record's date is inferred"), "{n}");
        assert!(before[changed[0]].starts_with("no capture dates"), "{before:?}");
    }
}
