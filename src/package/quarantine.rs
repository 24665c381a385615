//! Virus checking of the Heritrix path (P5.5), before anything is written.
//!
//! Migrated ARC records are scanned inside the migration (the engine sees each batch before it
//! is written) and infected ones are written to the container's viral twin instead
//! (`crate::migrate::Quarantine`). Copied WARC records are routed here: the input passes once
//! through a [`ByteQueue`] as the WARC reader parses it; the records of a batch are scanned by
//! the engine (identical payloads once), and only then are their gzip members appended,
//! byte-exact, to the content container or to the viral one (opened on first use). No
//! container is rewritten after it is written; the container writer counts every offset.
//!
//! Once the containers are closed, [`describe`] gives the METS every record where it went: an
//! infected or unscanned payload with its own PREMIS event, a cleaner's copy with the event and
//! the relationship to the original it replaces, and every container its virus-check event.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{ContainerResult, PackageError, PackageOptions, io_err};
use crate::formats::warc::WarcWriter;
use crate::formats::warc::writer::RecordSpec;
use crate::ids::Ids;
use crate::mets::MetsBuilder;
use crate::model::*;
use crate::package::spill::RecordSpill;
use crate::stages::scan::{Digest, PendingVerdicts, ScanBatch, ScanEngine, ScanResult};

/// Asks clamd for its version and records the scanner as a PREMIS agent (written once per
/// package); the version goes into every virus-check event.
pub(crate) fn register_scanner(
    clamd: &crate::stages::scan::Clamd,
    mets: &mut MetsBuilder,
) -> Result<String, PackageError> {
    let version = clamd.version()?;
    mets.header_mut().agents.push(Agent {
        id_type: "local".into(),
        id: "clamd".into(),
        name: "ClamAV (clamd)".into(),
        agent_type: "software".into(),
        version: Some(version.clone()),
        note: Some(format!("VERSION reply of clamd at {}", clamd.addr())),
    });
    Ok(version)
}

/// What scanning found, over the whole package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScanSummary {
    /// Payloads sent to clamd.
    pub scanned: u64,
    /// Payloads found infected (moved to viral/).
    pub infected: u64,
    /// Payloads that could not be scanned.
    pub not_scanned: u64,
    /// Infected payloads of which a cleaner made a clean copy (kept in content/).
    pub cleaned: u64,
    /// Findings: (container, record id, signature).
    pub findings: Vec<(String, String, String)>,
    /// Not scanned: (container, record id, reason).
    pub unscanned: Vec<(String, String, String)>,
    /// Payloads not sent to clamd because an identical one (same SHA-512) of this run was:
    /// its verdict was reused.
    pub reused: u64,
}

/// A viral container written beside a content container, with its records.
pub(crate) struct ViralPart {
    pub rel: String,
    pub spill: RecordSpill,
    /// Records in it, its warcinfo included.
    pub records: u64,
    pub size: u64,
    pub sha512: String,
}

/// Bytes of the input between the WARC reader and the containers: everything the reader has
/// read and no container has taken yet. In memory up to [`QUEUE_IN_MEMORY`], then in a
/// temporary file (a single record can be larger than memory).
pub(crate) struct ByteQueue {
    /// Input offset of the first byte held.
    base: u64,
    mem: Vec<u8>,
    /// Where in `mem` the held bytes start.
    start: usize,
    /// Spilled: the file, and the input offset of its first byte.
    file: Option<(File, u64)>,
    /// Input offset just past the last byte held.
    end: u64,
}

const QUEUE_IN_MEMORY: usize = 64 << 20;

impl ByteQueue {
    pub fn new() -> Self {
        ByteQueue { base: 0, mem: Vec::new(), start: 0, file: None, end: 0 }
    }

    /// Bytes held.
    pub fn held(&self) -> u64 {
        self.end - self.base
    }

    fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some((f, _)) => f.write_all(bytes)?,
            None if self.mem.len() - self.start + bytes.len() > QUEUE_IN_MEMORY => {
                let mut f = tempfile::tempfile()?;
                f.write_all(&self.mem[self.start..])?;
                f.write_all(bytes)?;
                self.file = Some((f, self.base));
                self.mem = Vec::new();
                self.start = 0;
            }
            None => self.mem.extend_from_slice(bytes),
        }
        self.end += bytes.len() as u64;
        Ok(())
    }

    /// A reader of input bytes `begin..end` (held), leaving them held.
    fn range(&self, begin: u64, end: u64) -> io::Result<Box<dyn Read + '_>> {
        if begin < self.base || end > self.end || begin > end {
            return Err(io::Error::other(format!(
                "bytes {begin}..{end} are not held ({}..{})",
                self.base, self.end
            )));
        }
        Ok(match &self.file {
            Some((f, at)) => {
                Box::new(crate::formats::segment::FileRange::new(f, begin - at, end - begin))
            }
            None => {
                let from = self.start + (begin - self.base) as usize;
                Box::new(&self.mem[from..from + (end - begin) as usize])
            }
        })
    }

    /// Lets go of the bytes up to `to` (they have been taken).
    fn release(&mut self, to: u64) -> io::Result<()> {
        let to = to.min(self.end).max(self.base);
        match &mut self.file {
            None => {
                self.start += (to - self.base) as usize;
                // Compacted once the taken part outweighs what is held.
                if self.start > self.mem.len() / 2 {
                    self.mem.drain(..self.start);
                    self.start = 0;
                }
            }
            Some((f, at)) => {
                // Back to memory once what is held fits easily.
                if self.end - to <= (QUEUE_IN_MEMORY / 4) as u64 {
                    let mut rest = vec![0u8; (self.end - to) as usize];
                    f.read_exact_at(&mut rest, to - *at)?;
                    self.mem = rest;
                    self.start = 0;
                    self.file = None;
                }
            }
        }
        self.base = to;
        Ok(())
    }
}

/// The queue as the copying reader's destination.
pub(crate) struct QueueWriter(pub Rc<RefCell<ByteQueue>>);

impl Write for QueueWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().push(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A record of a copied WARC on its way to a container.
pub(crate) struct Routed {
    /// Its bytes in the input.
    pub begin: u64,
    pub end: u64,
    /// Its description, `member` still at its input offset.
    pub file: RecordFile,
    /// The payload when it is small enough to hold (and not empty).
    pub payload: Option<Vec<u8>>,
    /// The payload's SHA-512.
    pub digest: Digest,
    /// False for a record that shares its gzip member with others: it is scanned, but its
    /// bytes cannot be moved on their own and stay in the content container.
    pub movable: bool,
}

struct RoutedBatch(Vec<Routed>);

impl ScanBatch for RoutedBatch {
    fn items(&self) -> usize {
        self.0.len()
    }
    fn payload(&self, i: usize) -> Option<(&[u8], Option<&Digest>)> {
        let r = self.0.get(i)?;
        r.payload.as_deref().filter(|p| !p.is_empty()).map(|p| (p, Some(&r.digest)))
    }
}

/// Payloads up to this size are held in memory for the scan; larger ones are streamed to
/// clamd from the queue.
pub(crate) const HELD_PAYLOAD: u64 = 4 << 20;
/// A batch is scanned once its payloads hold this many bytes, it has this many records, or
/// the queue holds [`BATCH_QUEUE`] bytes.
const BATCH_BYTES: u64 = 16 << 20;
const BATCH_RECORDS: usize = 512;
const BATCH_QUEUE: u64 = 32 << 20;

/// Copies a WARC's records into the content container or its viral twin, each once its
/// verdict is known.
pub(crate) struct CopyRouter<'a> {
    queue: Rc<RefCell<ByteQueue>>,
    /// Whether the input is gzip: the viral twin is written the same way.
    gzip: bool,
    engine: &'a Arc<ScanEngine>,
    content: WarcWriter<BufWriter<File>>,
    root: &'a Path,
    rel: &'a str,
    opts: &'a PackageOptions,
    ids: &'a Ids,
    now: DateTime<Utc>,
    viral: Option<(WarcWriter<BufWriter<File>>, RecordSpill)>,
    /// Input offset up to which bytes went to a container.
    taken: u64,
    batch: Vec<Routed>,
    batch_bytes: u64,
    pending: Option<(Arc<RoutedBatch>, PendingVerdicts)>,
    /// Cleaned copies written to content: their record id -> the infected record's.
    pub cleaned: HashMap<String, String>,
    /// Verdicts other than clean of records that cannot be moved.
    pinned: Vec<(String, u64, ScanResult)>,
}

impl<'a> CopyRouter<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        engine: &'a Arc<ScanEngine>,
        queue: Rc<RefCell<ByteQueue>>,
        out: File,
        (root, rel): (&'a Path, &'a str),
        opts: &'a PackageOptions,
        ids: &'a Ids,
        now: DateTime<Utc>,
        gzip: bool,
    ) -> Self {
        CopyRouter {
            queue,
            gzip,
            engine,
            content: WarcWriter::new(BufWriter::with_capacity(1 << 20, out), opts.level),
            root,
            rel,
            opts,
            ids,
            now,
            viral: None,
            taken: 0,
            batch: Vec::new(),
            batch_bytes: 0,
            pending: None,
            cleaned: HashMap::new(),
            pinned: Vec::new(),
        }
    }

    /// Takes a record read; scans and routes a batch once it is full.
    pub fn push(&mut self, r: Routed, spill: &mut RecordSpill) -> Result<(), PackageError> {
        self.batch_bytes += r.payload.as_ref().map_or(0, |p| p.len() as u64);
        // Routing a batch lets the queue go only up to its last movable record: records that
        // share a gzip member keep their bytes queued (in a temporary file past 64 MiB) until
        // the member's end can be taken, so they do not count toward a batch by queue size.
        let movable = r.movable;
        self.batch.push(r);
        let held = if movable { self.queue.borrow().held() } else { 0 };
        if self.batch_bytes >= BATCH_BYTES
            || self.batch.len() >= BATCH_RECORDS
            || held >= BATCH_QUEUE
        {
            self.start_batch(spill)?;
        }
        Ok(())
    }

    /// Starts scanning the batch being gathered, and routes the one before it.
    fn start_batch(&mut self, spill: &mut RecordSpill) -> Result<(), PackageError> {
        let batch = Arc::new(RoutedBatch(std::mem::take(&mut self.batch)));
        self.batch_bytes = 0;
        let pending = self.engine.start(Arc::clone(&batch));
        let before = self.pending.replace((batch, pending));
        if let Some(b) = before {
            self.route(b, spill)?;
        }
        Ok(())
    }

    fn route(
        &mut self,
        (batch, pending): (Arc<RoutedBatch>, PendingVerdicts),
        spill: &mut RecordSpill,
    ) -> Result<(), PackageError> {
        let verdicts = self.engine.wait(pending)?;
        let batch = Arc::into_inner(batch)
            .ok_or(PackageError::Internal("the scanning thread kept a batch"))?;
        let path = self.root.join(self.rel);
        for (r, verdict) in batch.0.into_iter().zip(verdicts) {
            if !r.movable {
                // Its bytes go with the rest of its member, as gap bytes of the content
                // container; only its verdict is kept. A payload too large to hold cannot be
                // read from a shared member here: said so, not guessed.
                let big =
                    r.payload.is_none() && r.file.content.as_ref().is_some_and(|c| c.range.len > 0);
                let verdict = match verdict {
                    Some(v) => Some(v),
                    None if big => Some(ScanResult::NotScanned(format!(
                        "over {HELD_PAYLOAD} bytes in a gzip member shared with other records"
                    ))),
                    None => None,
                };
                if let Some(v) = verdict.filter(|v| *v != ScanResult::Clean) {
                    self.pinned.push((r.file.record_id.clone(), r.begin, v));
                }
                continue;
            }
            self.take_gap(r.begin)?;
            let content = r.file.content.clone();
            let verdict = match (verdict, &content) {
                (Some(v), _) => Some(v),
                (None, Some(c)) if c.range.len > 0 => Some(self.scan_held(&r, c)?),
                (None, _) => None,
            };
            let queue = Rc::clone(&self.queue);
            let q = queue.borrow();
            let member = q.range(r.begin, r.end).map_err(io_err(&path))?;
            let len = r.end - r.begin;
            if let Some(ScanResult::Infected(_)) = &verdict {
                let (vw, vspill) = self.viral()?;
                let at = vw.append_member(member, len).map_err(io_err(&path))?;
                let moved = RecordFile { member: ByteRange { begin: at, len }, ..r.file.clone() };
                vspill.push(&moved, verdict.as_ref()).map_err(io_err(&path))?;
                drop(q);
                self.clean(&r, spill)?;
            } else {
                let at = self.content.append_member(member, len).map_err(io_err(&path))?;
                let moved = RecordFile { member: ByteRange { begin: at, len }, ..r.file };
                spill.push(&moved, verdict.as_ref()).map_err(io_err(&path))?;
                drop(q);
            }
            self.taken = r.end;
            self.queue.borrow_mut().release(r.end).map_err(io_err(&path))?;
        }
        Ok(())
    }

    /// Input bytes before `to` that belong to no routed record (a record that shares its
    /// gzip member with others, anything between records) stay in the content container.
    fn take_gap(&mut self, to: u64) -> Result<(), PackageError> {
        if to <= self.taken {
            return Ok(());
        }
        let path = self.root.join(self.rel);
        let q = self.queue.borrow();
        let mut gap = q.range(self.taken, to).map_err(io_err(&path))?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = gap.read(&mut buf).map_err(io_err(&path))?;
            if n == 0 {
                break;
            }
            self.content.append_bytes(&buf[..n]).map_err(io_err(&path))?;
        }
        drop(gap);
        drop(q);
        self.taken = to;
        self.queue.borrow_mut().release(to).map_err(io_err(&path))
    }

    /// A record's payload, read from the queue: `(header_len + payload offset)` bytes into
    /// the decompressed record.
    fn payload_reader<'q>(
        q: &'q ByteQueue,
        r: &Routed,
        c: &ContentFile,
    ) -> io::Result<Box<dyn Read + 'q>> {
        let member = q.range(r.begin, r.end)?;
        let mut record: Box<dyn Read> = if r.file.compressed {
            Box::new(flate2::read::MultiGzDecoder::new(member))
        } else {
            member
        };
        io::copy(&mut record.by_ref().take(c.range.begin), &mut io::sink())?;
        Ok(Box::new(record.take(c.range.len)))
    }

    /// A payload too large to hold, streamed to clamd from the queue.
    fn scan_held(&self, r: &Routed, c: &ContentFile) -> Result<ScanResult, PackageError> {
        let q = self.queue.borrow();
        let payload = Self::payload_reader(&q, r, c).map_err(io_err(self.root))?;
        Ok(self.engine.scan_one(Some(&r.digest), payload, c.range.len)?)
    }

    /// The viral twin, opened (with its warcinfo record) on first use.
    fn viral(&mut self) -> Result<&mut (WarcWriter<BufWriter<File>>, RecordSpill), PackageError> {
        if self.viral.is_none() {
            let rel = self.viral_rel();
            let path = self.root.join(&rel);
            crate::layout::create_dirs_in(self.root, crate::layout::VIRAL_DIR)?;
            let f = crate::layout::create_in(self.root, &rel)?;
            let mut w = WarcWriter::new(BufWriter::with_capacity(1 << 20, f), self.opts.level);
            let (spec, body) = crate::formats::warc::writer::warcinfo(
                &self.ids.warc_record_id(),
                self.now,
                rel.rsplit('/').next().unwrap_or_default(),
                &format!(
                    "records of {} whose payload clamd found infected; each is the original gzip member, byte-exact",
                    self.rel
                ),
                &[],
            );
            if self.gzip {
                w.write_record(&spec, &body, 0).map_err(io_err(&path))?;
            } else {
                let record = crate::formats::warc::writer::uncompressed_record(&spec, &body);
                w.append_member(&record[..], record.len() as u64).map_err(io_err(&path))?;
            }
            self.viral = Some((w, RecordSpill::new().map_err(io_err(&path))?));
        }
        self.viral.as_mut().ok_or(PackageError::Internal("viral container"))
    }

    /// The viral twin's name: compressed as the input is.
    fn viral_rel(&self) -> String {
        let v = crate::layout::viral_twin(self.rel);
        match (self.gzip, v.strip_suffix(".gz")) {
            (false, Some(plain)) => plain.to_string(),
            (true, None) => format!("{v}.gz"),
            _ => v,
        }
    }

    /// With a cleaner: a clean copy of an infected payload goes to content, as a `resource`
    /// record at the same URI.
    fn clean(&mut self, r: &Routed, spill: &mut RecordSpill) -> Result<(), PackageError> {
        let (Some(cmd), Some(c)) = (&self.opts.cleaner, &r.file.content) else { return Ok(()) };
        let mut tmp = tempfile::NamedTempFile::new().map_err(io_err(self.root))?;
        {
            let q = self.queue.borrow();
            let mut payload = Self::payload_reader(&q, r, c).map_err(io_err(self.root))?;
            io::copy(&mut payload, tmp.as_file_mut()).map_err(io_err(self.root))?;
        }
        let copy = crate::stages::scan::clean_copy(cmd, tmp.path(), self.engine)?;
        let Some(bytes) = copy else { return Ok(()) };
        let capture = r.file.capture.clone();
        let spec = RecordSpec {
            warc_type: "resource".into(),
            record_id: self.ids.warc_record_id(),
            date: capture.as_ref().map(|c| c.date.clone()).unwrap_or_default(),
            target_uri: capture.as_ref().map(|c| c.uri.clone()),
            content_type: Some(c.mime.clone()),
            payload_digest: true,
            extra: vec![(
                "X-Webaip-Cleaned-From".into(),
                format!("<urn:uuid:{}>", r.file.record_id.trim_start_matches("urn:uuid:")),
            )],
            ..RecordSpec::default()
        };
        let path = self.root.join(self.rel);
        let w = self.content.write_record(&spec, &bytes, 0).map_err(io_err(&path))?;
        let rf = super::written_record_file(
            &w,
            c.mime.clone(),
            None,
            super::url_capture(
                "resource",
                spec.target_uri.as_deref(),
                &spec.date,
                capture.as_ref().is_some_and(|c| c.date_inferred),
            ),
        );
        self.cleaned.insert(rf.record_id.clone(), r.file.record_id.clone());
        spill.push(&rf, Some(&ScanResult::Clean)).map_err(io_err(&path))
    }

    /// Routes what is left once the reader is done, then the rest of the input (which has
    /// already passed into the queue).
    pub fn finish(mut self, spill: &mut RecordSpill) -> Result<RoutedContainers, PackageError> {
        self.start_batch(spill)?;
        if let Some(b) = self.pending.take() {
            self.route(b, spill)?;
        }
        let end = self.queue.borrow().end;
        self.take_gap(end)?;
        let rel = self.viral_rel();
        let viral = self.viral.take().map(|(writer, spill)| ViralOpen { rel, writer, spill });
        Ok(RoutedContainers {
            content: self.content,
            viral,
            cleaned: self.cleaned,
            pinned: self.pinned,
        })
    }
}

/// Where a copied WARC's records went: the content container (open), the viral twin (open)
/// and the cleaned copies in content (their record id -> the infected record's).
pub(crate) struct RoutedContainers {
    pub content: WarcWriter<BufWriter<File>>,
    pub viral: Option<ViralOpen>,
    pub cleaned: HashMap<String, String>,
    /// Verdicts other than clean of records that share a gzip member and stay in content:
    /// (record id, offset of the member, verdict).
    pub pinned: Vec<(String, u64, ScanResult)>,
}

/// A viral container still open.
pub(crate) struct ViralOpen {
    pub rel: String,
    pub writer: WarcWriter<BufWriter<File>>,
    pub spill: RecordSpill,
}

impl ViralOpen {
    /// Closes it: flushed, synced, hashed.
    pub fn close(self, root: &Path) -> Result<ViralPart, PackageError> {
        let records = self.writer.records();
        let (size, sha512) = super::finish_written_container(self.writer, root, &self.rel)?;
        Ok(ViralPart { rel: self.rel, spill: self.spill, records, size, sha512 })
    }
}

/// A PREMIS virus-check event of clamd's.
fn event(
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    version: &str,
    outcome: String,
    outcome_detail: Option<String>,
    objects: Vec<String>,
) -> Event {
    let detail = format!(
        "program=\"ClamAV (clamd)\"; version=\"{version}\"; scope=\"each record payload, decompressed\""
    );
    super::virus_check_event(ids, opts, now, "clamd", detail, (outcome, outcome_detail), objects)
}

/// A record whose payload has events of its own, described as a bytestream object.
fn described(r: &RecordFile, id: String, events: Vec<Event>) -> RecordFile {
    let c = r.content.clone();
    let object = PremisObject {
        id_type: "local".into(),
        id,
        size: c.as_ref().map_or(0, |c| c.range.len),
        sha512: c.as_ref().map(|c| c.sha512.clone()).unwrap_or_default(),
        format: Format {
            name: c.as_ref().map(|c| c.mime.clone()).unwrap_or_default(),
            version: None,
            pronom: None,
        },
        original_name: None,
        significant_properties: vec![],
        relationships: vec![],
        events: events.iter().map(|e| e.id.clone()).collect(),
    };
    RecordFile { described: Some(DescribedBytestream { object, events }), ..r.clone() }
}

/// What scanning found, counted into `summary`; the container's records described to the
/// METS where they went; the viral twin, when there is one, described and listed in
/// `extra_files` (path, SHA-512, size).
#[allow(clippy::too_many_arguments)]
pub(super) fn describe(
    version: &str,
    r: &mut ContainerResult,
    mets: &mut MetsBuilder,
    root: &Path,
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    summary: &mut super::ScanSummary,
    extra_files: &mut Vec<(String, String, u64)>,
) -> Result<(), PackageError> {
    let rel = r.file.path.clone();
    let viral_rel =
        r.viral.as_ref().map_or_else(|| crate::layout::viral_twin(&rel), |v| v.rel.clone());
    // The viral twin first: the cleaned copies point at its records.
    let mut infected: HashMap<String, String> = HashMap::new();
    if let Some(mut v) = r.viral.take() {
        let mut vcw = mets.begin_container(GroupUse::ViralFiles).map_err(io_err(root))?;
        let mut objects = vec![v.rel.clone()];
        let mut sigs = Vec::new();
        let forced = opts.profile.virus_outcomes.forced.clone();
        v.spill
            .for_each(|_, rec, verdict| {
                let sig = match verdict {
                    Some(ScanResult::Infected(s)) => s,
                    _ => String::new(),
                };
                let oid = format!("{}#{}", v.rel, rec.record_id);
                objects.push(oid.clone());
                summary.infected += 1;
                summary.findings.push((rel.clone(), rec.record_id.clone(), sig.clone()));
                infected.insert(rec.record_id.clone(), sig.clone());
                sigs.push(sig.clone());
                let e =
                    event(ids, opts, now, version, forced.clone(), Some(sig), vec![oid.clone()]);
                vcw.add_record(&described(&rec, oid, vec![e]))
            })
            .map_err(io_err(root))?;
        let cev = event(
            ids,
            opts,
            now,
            version,
            forced,
            Some(format!("found: {}", sigs.join(", "))),
            objects,
        );
        let name = rel.rsplit('/').next().unwrap_or_default().to_string();
        let mut vfile = super::written_container_file(
            v.rel.clone(),
            (v.size, v.sha512.clone()),
            v.records,
            vec![cev],
            name,
            now,
        );
        vfile.object.events = vfile.events.iter().map(|e| e.id.clone()).collect();
        mets.finish_container(vcw, vfile).map_err(io_err(root))?;
        extra_files.push((v.rel.clone(), v.sha512.clone(), v.size));
        r.report.records -= v.records.saturating_sub(1).min(r.report.records);
    }

    let not_scanned = opts.profile.virus_outcomes.not_scanned.clone();
    let mut unscanned = 0u64;
    let cleaned = std::mem::take(&mut r.cleaned);
    let writer = &mut r.writer;
    r.spill
        .for_each(|_, rec, verdict| {
            if let Some(orig) = cleaned.get(&rec.record_id) {
                let sig = infected.get(orig).cloned().unwrap_or_default();
                let viral_oid = format!("{viral_rel}#{orig}");
                let cid = format!("{rel}#{}", rec.record_id);
                let e = event(
                    ids,
                    opts,
                    now,
                    version,
                    opts.profile.virus_outcomes.cleaned.clone(),
                    Some(format!(
                        "{sig} removed by the cleaner; the cleaned copy was rescanned: no virus detected"
                    )),
                    vec![viral_oid.clone(), cid.clone()],
                );
                let mut d = described(&rec, cid, vec![e.clone()]);
                if let Some(db) = d.described.as_mut() {
                    db.object.relationships.push(Relationship {
                        relationship_type: opts.profile.relationships.relationship_type.clone(),
                        subtype: opts.profile.relationships.cleaned.clone(),
                        related_object: ("local".into(), viral_oid),
                        related_event: Some(e.id.clone()),
                    });
                }
                summary.cleaned += 1;
                return writer.add_record(&d);
            }
            match verdict {
                Some(ScanResult::NotScanned(why)) => {
                    summary.not_scanned += 1;
                    summary.unscanned.push((rel.clone(), rec.record_id.clone(), why.clone()));
                    unscanned += 1;
                    let oid = format!("{rel}#{}", rec.record_id);
                    let e = event(
                        ids,
                        opts,
                        now,
                        version,
                        not_scanned.clone(),
                        Some(why),
                        vec![oid.clone()],
                    );
                    writer.add_record(&described(&rec, oid, vec![e]))
                }
                _ => writer.add_record(&rec),
            }
        })
        .map_err(io_err(root))?;
    r.report.listed = r.writer.listed();

    // Records that share a gzip member with others cannot be moved alone; an infected one
    // ended the run (PackageError::InfectedInSharedMember), one not scanned is said here.
    for (id, _, verdict) in std::mem::take(&mut r.pinned) {
        if let ScanResult::NotScanned(why) = verdict {
            summary.not_scanned += 1;
            summary.unscanned.push((rel.clone(), id, why));
            unscanned += 1;
        }
    }

    // The container-level virus check.
    let mut detail = Vec::new();
    if !infected.is_empty() {
        detail.push(format!("{} infected payload(s) written to viral/ instead", infected.len()));
    }
    if unscanned > 0 {
        detail.push(format!("{unscanned} payload(s) not scanned, each with its own event"));
    }
    let e = event(
        ids,
        opts,
        now,
        version,
        opts.profile.virus_outcomes.clean.clone(),
        (!detail.is_empty()).then(|| detail.join("; ")),
        vec![rel.clone()],
    );
    r.file.object.events.push(e.id.clone());
    r.file.events.push(e);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_gives_back_what_it_was_given_in_memory_and_spilled() {
        let mut q = ByteQueue::new();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        q.push(&data[..100_000]).unwrap();
        let mut got = Vec::new();
        q.range(10, 20).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, &data[10..20]);
        q.release(50_000).unwrap();
        assert!(q.range(10, 20).is_err(), "released bytes are gone");
        q.push(&data[100_000..]).unwrap();
        got.clear();
        q.range(50_000, 200_000).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, &data[50_000..]);
        assert!(q.range(150_000, 200_001).is_err(), "not yet read");
        // Forced into a file, then back.
        let big = vec![7u8; QUEUE_IN_MEMORY + 10];
        q.push(&big).unwrap();
        assert!(q.file.is_some());
        got.clear();
        q.range(199_990, 200_010).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(&got[..10], &data[199_990..]);
        assert_eq!(&got[10..], &[7u8; 10]);
        q.release(200_000 + QUEUE_IN_MEMORY as u64).unwrap();
        assert!(q.file.is_none(), "back in memory");
        got.clear();
        q.range(q.base, q.end).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, vec![7u8; 10]);
    }

    #[test]
    fn viral_names() {
        use crate::layout::viral_twin;
        assert_eq!(viral_twin("content/a.warc.gz"), "viral/a.viral.warc.gz");
        assert_eq!(viral_twin("content/b.warc"), "viral/b.viral.warc");
    }
}
