//! Virus checking of the Heritrix path (P5.5), before anything is written.
//!
//! Migrated ARC records are scanned inside the migration (the engine sees each batch before it
//! is written) and infected ones are written to the container's viral twin instead
//! (`crate::migrate::Quarantine`). Copied WARC records are routed here: the input passes once
//! through a [`ByteQueue`] as the WARC reader parses it; the records of a batch are scanned by
//! the engine (identical payloads once), and only then are their gzip members appended,
//! byte-exact, to the content container or to the viral one (opened on first use), both
//! [`ContainerSink`]s. No container is rewritten after it is written; the container writer
//! counts every offset.
//!
//! Every record is described to its container's METS section the moment it is written
//! ([`VerdictEvents`]): an infected or unscanned payload with its own PREMIS event, a cleaner's
//! copy with the event and the relationship to the original written just before it. Once the
//! containers are closed, [`add_container_virus_checks`] gives every container its virus-check
//! event and counts what was found.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::sink::ContainerSink;
use super::{ContainerResult, PackageError, PackageOptions, io_err};
use crate::formats::warc::writer::RecordSpec;
use crate::ids::Ids;
use crate::mets::{ContainerWriter, MetsBuilder};
use crate::model::*;
use crate::stages::scan::{
    Digest, PendingVerdicts, ScanBatch, ScanEngine, ScanResult, Unscanned, Verdicts,
};

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

const QUEUE_IN_MEMORY: usize = 8 << 20;

impl ByteQueue {
    pub(crate) fn new() -> Self {
        ByteQueue { base: 0, mem: Vec::new(), start: 0, file: None, end: 0 }
    }

    /// Bytes held.
    pub(crate) fn held(&self) -> u64 {
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
const BATCH_BYTES: u64 = 8 << 20;
const BATCH_RECORDS: usize = 512;
const BATCH_QUEUE: u64 = 16 << 20;

/// What the scan found in one container and its viral twin, counted into the package's
/// [`ScanSummary`] once every container is done, in container order.
#[derive(Debug, Default)]
pub(crate) struct ContainerScan {
    /// Records written to the viral twin: (record id, signature).
    pub infected: Vec<(String, String)>,
    /// Payloads not scanned: (record id, reason).
    pub unscanned: Vec<(String, String)>,
    /// Cleaned copies written to content.
    pub cleaned: u64,
    /// Of the payloads not scanned, those that have no event of their own (their record shares
    /// a gzip member with others and is not described one by one).
    pub unscanned_without_event: u64,
}

/// Describes the records of one container to its METS section, or its viral twin's, the
/// moment each is written, with the virus-check events its verdict calls for.
pub(crate) struct VerdictEvents<'a> {
    /// This container's own identifiers (derived from its name): a deterministic run gives the
    /// same ones whatever order the containers are written in.
    ids: Ids,
    opts: &'a PackageOptions,
    now: DateTime<Utc>,
    /// clamd's version, named in every event.
    version: &'a str,
    rel: String,
    viral_rel: String,
    pub found: ContainerScan,
    /// The record quarantined last, (record id, signature): a cleaned copy is written right
    /// after its original.
    last_infected: Option<(String, String)>,
}

impl<'a> VerdictEvents<'a> {
    pub(crate) fn new(
        ids: Ids,
        opts: &'a PackageOptions,
        now: DateTime<Utc>,
        version: &'a str,
        (rel, viral_rel): (String, String),
    ) -> Self {
        VerdictEvents {
            ids,
            opts,
            now,
            version,
            rel,
            viral_rel,
            found: ContainerScan::default(),
            last_infected: None,
        }
    }

    /// The identifiers of this container's records and events.
    pub(crate) fn ids(&self) -> &Ids {
        &self.ids
    }

    fn event(
        &self,
        outcome: String,
        outcome_detail: Option<String>,
        objects: Vec<String>,
    ) -> Event {
        event(&self.ids, self.opts, self.now, self.version, outcome, outcome_detail, objects)
    }

    /// A record written to the content container: as it is, or with an event of its own when
    /// its payload was not scanned.
    pub(crate) fn content(
        &mut self,
        cw: &mut ContainerWriter,
        rec: &RecordFile,
        verdict: Option<&ScanResult>,
    ) -> io::Result<()> {
        let Some(ScanResult::NotScanned(why)) = verdict else { return cw.add_record(rec) };
        self.found.unscanned.push((rec.record_id.clone(), why.to_string()));
        let oid = format!("{}#{}", self.rel, rec.record_id);
        let outcome = self.opts.profile.virus_outcomes.not_scanned.clone();
        let e = self.event(outcome, Some(why.to_string()), vec![oid.clone()]);
        cw.add_record(&described(rec, oid, vec![e]))
    }

    /// A payload not scanned of a record that is not described on its own (it shares its gzip
    /// member with others and stays in content): counted and named in the container's event.
    pub(crate) fn unscanned_in_shared_member(&mut self, record_id: String, why: String) {
        self.found.unscanned.push((record_id, why));
        self.found.unscanned_without_event += 1;
    }

    /// A record written to the viral twin (`vcw` its section), its payload infected with `sig`.
    pub(crate) fn infected(
        &mut self,
        vcw: &mut ContainerWriter,
        rec: &RecordFile,
        sig: &str,
    ) -> io::Result<()> {
        let oid = format!("{}#{}", self.viral_rel, rec.record_id);
        let forced = self.opts.profile.virus_outcomes.forced.clone();
        let e = self.event(forced, Some(sig.to_string()), vec![oid.clone()]);
        self.found.infected.push((rec.record_id.clone(), sig.to_string()));
        self.last_infected = Some((rec.record_id.clone(), sig.to_string()));
        vcw.add_record(&described(rec, oid, vec![e]))
    }

    /// A cleaner's copy written to content right after `original`, the infected record it
    /// replaces: the cleaned event, and the relationship to the original in the viral twin.
    pub(crate) fn cleaned(
        &mut self,
        cw: &mut ContainerWriter,
        rec: &RecordFile,
        original: &str,
    ) -> io::Result<()> {
        let sig = match &self.last_infected {
            Some((id, sig)) if id == original => sig.clone(),
            _ => String::new(),
        };
        let viral_oid = format!("{}#{original}", self.viral_rel);
        let cid = format!("{}#{}", self.rel, rec.record_id);
        let e = self.event(
            self.opts.profile.virus_outcomes.cleaned.clone(),
            Some(format!(
                "{sig} removed by the cleaner; the cleaned copy was rescanned: no virus detected"
            )),
            vec![viral_oid.clone(), cid.clone()],
        );
        let mut d = described(rec, cid, vec![e.clone()]);
        if let Some(db) = d.described.as_mut() {
            db.object.relationships.push(Relationship {
                relationship_type: self.opts.profile.relationships.relationship_type.clone(),
                subtype: self.opts.profile.relationships.cleaned.clone(),
                related_object: ("local".into(), viral_oid),
                related_event: Some(e.id.clone()),
            });
        }
        self.found.cleaned += 1;
        cw.add_record(&d)
    }
}

/// The viral twin's name of a copied WARC: compressed as the input is.
pub(crate) fn copy_viral_rel(rel: &str, gzip: bool) -> String {
    let v = crate::layout::viral_twin(rel);
    match (gzip, v.strip_suffix(".gz")) {
        (false, Some(plain)) => plain.to_string(),
        (true, None) => format!("{v}.gz"),
        _ => v,
    }
}

/// Copies a WARC's records into the content container or its viral twin, each once its
/// verdict is known, and describes each to the METS as it is appended.
pub(crate) struct CopyRouter<'a> {
    queue: Rc<RefCell<ByteQueue>>,
    /// Whether the input is gzip: the viral twin is written the same way.
    gzip: bool,
    /// The scanner; without one every record goes to content as soon as it is read.
    engine: Option<&'a Arc<ScanEngine>>,
    content: ContainerSink,
    root: &'a Path,
    opts: &'a PackageOptions,
    now: DateTime<Utc>,
    events: VerdictEvents<'a>,
    viral: Option<ContainerSink>,
    /// The viral twin's METS section, until the twin is opened.
    viral_mets: Option<ContainerWriter>,
    /// Input offset up to which bytes went to a container.
    taken: u64,
    batch: Vec<Routed>,
    batch_bytes: u64,
    pending: Option<(Arc<RoutedBatch>, PendingVerdicts)>,
    /// The first record found infected among those that share a gzip member and cannot be
    /// moved: (record id, offset of its member, signature).
    stuck: Option<(String, u64, String)>,
}

impl<'a> CopyRouter<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        engine: Option<&'a Arc<ScanEngine>>,
        queue: Rc<RefCell<ByteQueue>>,
        (content, viral_mets): (ContainerSink, Option<ContainerWriter>),
        root: &'a Path,
        opts: &'a PackageOptions,
        events: VerdictEvents<'a>,
        now: DateTime<Utc>,
        gzip: bool,
    ) -> Self {
        CopyRouter {
            queue,
            gzip,
            engine,
            content,
            root,
            opts,
            now,
            events,
            viral: None,
            viral_mets,
            taken: 0,
            batch: Vec::new(),
            batch_bytes: 0,
            pending: None,
            stuck: None,
        }
    }

    /// Takes a record read; scans and routes a batch once it is full.
    pub(crate) fn push(&mut self, r: Routed) -> Result<(), PackageError> {
        self.batch_bytes += r.payload.as_ref().map_or(0, |p| p.len() as u64);
        // Routing a batch lets the queue go only up to its last movable record: records that
        // share a gzip member keep their bytes queued (in a temporary file past 8 MiB) until
        // the member's end can be taken, so they do not count toward a batch by queue size.
        let movable = r.movable;
        self.batch.push(r);
        let held = if movable { self.queue.borrow().held() } else { 0 };
        // Without a scanner there is nothing to wait for: each movable record is appended as
        // soon as it is read, and the queue holds no more than the record being read.
        if self.engine.is_none() && movable {
            return self.start_batch();
        }
        if self.batch_bytes >= BATCH_BYTES
            || self.batch.len() >= BATCH_RECORDS
            || held >= BATCH_QUEUE
        {
            self.start_batch()?;
        }
        Ok(())
    }

    /// Starts scanning the batch being gathered, and routes the one before it.
    fn start_batch(&mut self) -> Result<(), PackageError> {
        let batch = Arc::new(RoutedBatch(std::mem::take(&mut self.batch)));
        self.batch_bytes = 0;
        let Some(engine) = self.engine else {
            let verdicts = vec![None; batch.0.len()];
            return self.route((batch, verdicts));
        };
        let pending = engine.start(Arc::clone(&batch));
        let before = self.pending.replace((batch, pending));
        if let Some((batch, pending)) = before {
            let verdicts = engine.wait(pending)?;
            self.route((batch, verdicts))?;
        }
        Ok(())
    }

    fn route(
        &mut self,
        (batch, verdicts): (Arc<RoutedBatch>, Verdicts),
    ) -> Result<(), PackageError> {
        let batch = Arc::into_inner(batch)
            .ok_or(PackageError::Internal("the scanning thread kept a batch"))?;
        let root = self.root;
        let path = root.join(&self.content.rel);
        for (r, verdict) in batch.0.into_iter().zip(verdicts) {
            if !r.movable {
                // Its bytes go with the rest of its member, as gap bytes of the content
                // container; only its verdict is kept. A payload too large to hold cannot be
                // read from a shared member here: said so, not guessed.
                let big =
                    r.payload.is_none() && r.file.content.as_ref().is_some_and(|c| c.range.len > 0);
                let verdict = match verdict {
                    Some(v) => Some(v),
                    None if big => {
                        Some(ScanResult::NotScanned(Unscanned::SharedMember { held: HELD_PAYLOAD }))
                    }
                    None => None,
                };
                match verdict {
                    Some(ScanResult::Infected(sig)) if self.stuck.is_none() => {
                        self.stuck = Some((r.file.record_id, r.begin, sig));
                    }
                    Some(ScanResult::NotScanned(why)) => {
                        let why = why.to_string();
                        self.events.unscanned_in_shared_member(r.file.record_id, why);
                    }
                    _ => {}
                }
                continue;
            }
            self.take_gap(r.begin)?;
            let content = r.file.content.clone();
            let verdict = match (verdict, &content) {
                (Some(v), _) => Some(v),
                (None, Some(c)) if c.range.len > 0 && self.engine.is_some() => {
                    Some(self.scan_held(&r, c)?)
                }
                (None, _) => None,
            };
            let queue = Rc::clone(&self.queue);
            let q = queue.borrow();
            let member = q.range(r.begin, r.end).map_err(io_err(&path))?;
            let len = r.end - r.begin;
            if let Some(ScanResult::Infected(sig)) = &verdict {
                self.open_viral()?;
                let v = self.viral.as_mut().ok_or(PackageError::Internal("viral container"))?;
                let range = v.append_member(root, member, len)?;
                let moved = RecordFile { member: range, ..r.file.clone() };
                self.events.infected(&mut v.mets, &moved, sig).map_err(io_err(root))?;
                drop(q);
                self.clean(&r)?;
            } else {
                let range = self.content.append_member(root, member, len)?;
                let moved = RecordFile { member: range, ..r.file };
                self.events
                    .content(&mut self.content.mets, &moved, verdict.as_ref())
                    .map_err(io_err(root))?;
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
        let path = self.root.join(&self.content.rel);
        let q = self.queue.borrow();
        let mut gap = q.range(self.taken, to).map_err(io_err(&path))?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = gap.read(&mut buf).map_err(io_err(&path))?;
            if n == 0 {
                break;
            }
            self.content.append_bytes(self.root, &buf[..n])?;
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
        let engine = self.engine.ok_or(PackageError::Internal("a scan without a scanner"))?;
        let q = self.queue.borrow();
        let payload = Self::payload_reader(&q, r, c).map_err(io_err(self.root))?;
        Ok(engine.scan_one(Some(&r.digest), payload, c.range.len)?)
    }

    /// Opens the viral twin (with its warcinfo record) on first use.
    fn open_viral(&mut self) -> Result<(), PackageError> {
        if self.viral.is_some() {
            return Ok(());
        }
        let mets = self.viral_mets.take().ok_or(PackageError::Internal("viral METS section"))?;
        let rel = copy_viral_rel(&self.content.rel, self.gzip);
        let name = rel.rsplit('/').next().unwrap_or_default().to_string();
        let description = format!(
            "records of {} whose payload clamd found infected; each is the original gzip member, byte-exact",
            self.content.rel
        );
        let id = self.events.ids().warc_record_id();
        let sink = if self.gzip {
            ContainerSink::open(
                self.root,
                rel,
                mets,
                self.opts.level,
                (id, self.now, &description),
            )?
        } else {
            // An uncompressed input gets an uncompressed twin: its warcinfo record too.
            let mut sink = ContainerSink::create(self.root, rel, mets, self.opts.level)?;
            let (spec, body) =
                crate::formats::warc::writer::warcinfo(&id, self.now, &name, &description, &[]);
            let record = crate::formats::warc::writer::uncompressed_record(&spec, &body);
            sink.append_member(self.root, &record[..], record.len() as u64)?;
            sink.warcinfo = id;
            sink
        };
        self.viral = Some(sink);
        Ok(())
    }

    /// With a cleaner: a clean copy of an infected payload goes to content, as a `resource`
    /// record at the same URI, right after its original went to the viral twin.
    fn clean(&mut self, r: &Routed) -> Result<(), PackageError> {
        let (Some(cmd), Some(c), Some(engine)) = (&self.opts.cleaner, &r.file.content, self.engine)
        else {
            return Ok(());
        };
        let mut tmp = tempfile::NamedTempFile::new().map_err(io_err(self.root))?;
        {
            let q = self.queue.borrow();
            let mut payload = Self::payload_reader(&q, r, c).map_err(io_err(self.root))?;
            io::copy(&mut payload, tmp.as_file_mut()).map_err(io_err(self.root))?;
        }
        let copy = crate::stages::scan::clean_copy(cmd, tmp.path(), engine)?;
        let Some(bytes) = copy else { return Ok(()) };
        let capture = r.file.capture.clone();
        let spec = RecordSpec {
            warc_type: "resource".into(),
            record_id: self.events.ids().warc_record_id(),
            date: capture.as_ref().map(|c| c.date.clone()).unwrap_or_default(),
            target_uri: capture.as_ref().map(|c| c.uri.clone()),
            content_type: Some(c.mime.clone()),
            payload_digest: true,
            extra: vec![(
                "X-Webaip-Cleaned-From".into(),
                // The original's own id, as its WARC-Record-ID states it (any URI).
                format!("<{}>", r.file.record_id),
            )],
            ..RecordSpec::default()
        };
        let capture = super::url_capture(
            "resource",
            spec.target_uri.as_deref(),
            &spec.date,
            capture.as_ref().is_some_and(|c| c.date_inferred),
        );
        let rf = if self.gzip {
            let w = self.content.write(self.root, &spec, &bytes)?;
            super::written_record_file(&w, c.mime.clone(), None, capture)
        } else {
            // An uncompressed copy stays uncompressed: no gzip member in the middle of it.
            let digests = crate::formats::digest::BlockHasher::digest(&bytes, 0);
            let header = spec.header(&digests).to_bytes();
            let end = crate::formats::warc::writer::RECORD_END;
            let len = (header.len() + bytes.len() + end.len()) as u64;
            let record = header.as_slice().chain(&bytes[..]).chain(end);
            let member = self.content.append_member(self.root, record, len)?;
            RecordFile {
                record_id: spec.record_id.trim_matches(['<', '>']).to_string(),
                member,
                compressed: false,
                content: Some(ContentFile {
                    range: ByteRange { begin: header.len() as u64, len: digests.payload_len },
                    sha512: crate::formats::digest::hex(&digests.payload_sha512),
                    mime: c.mime.clone(),
                }),
                described: None,
                page: None,
                capture,
            }
        };
        self.events
            .cleaned(&mut self.content.mets, &rf, &r.file.record_id)
            .map_err(io_err(self.root))
    }

    /// Routes what is left once the reader is done, then the rest of the input (which has
    /// already passed into the queue).
    pub(crate) fn finish(mut self) -> Result<RoutedContainers, PackageError> {
        self.start_batch()?;
        if let (Some(engine), Some((batch, pending))) = (self.engine, self.pending.take()) {
            let verdicts = engine.wait(pending)?;
            self.route((batch, verdicts))?;
        }
        let end = self.queue.borrow().end;
        self.take_gap(end)?;
        Ok(RoutedContainers {
            content: self.content,
            viral: self.viral,
            found: self.events.found,
            stuck: self.stuck,
        })
    }
}

/// Where a copied WARC's records went: the content container and the viral twin, both open
/// with their records described, and what the scan found.
pub(crate) struct RoutedContainers {
    pub content: ContainerSink,
    pub viral: Option<ContainerSink>,
    pub found: ContainerScan,
    /// The first record found infected among those that share a gzip member (it stayed in
    /// content): (record id, offset of its member, signature).
    pub stuck: Option<(String, u64, String)>,
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

/// Once a container and its viral twin are closed (their records described as they were
/// written): the twin's section finished with its virus-check event and listed in
/// `extra_files` (path, SHA-512, size), the content container's virus-check event, and what
/// the scan found counted into `summary`.
#[allow(clippy::too_many_arguments)]
pub(super) fn add_container_virus_checks(
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
    let found = std::mem::take(&mut r.scan);
    if let Some(v) = r.viral.take() {
        let objects = std::iter::once(v.rel.clone())
            .chain(found.infected.iter().map(|(id, _)| format!("{}#{id}", v.rel)))
            .collect();
        let sigs: Vec<&str> = found.infected.iter().map(|(_, s)| s.as_str()).collect();
        let cev = event(
            ids,
            opts,
            now,
            version,
            opts.profile.virus_outcomes.forced.clone(),
            Some(format!("found: {}", sigs.join(", "))),
            objects,
        );
        let name = rel.rsplit('/').next().unwrap_or_default().to_string();
        let vfile = super::written_container_file(
            v.rel.clone(),
            (v.size, v.sha512.clone()),
            v.records,
            vec![cev],
            name,
            now,
        );
        mets.finish_container(v.mets, vfile).map_err(io_err(root))?;
        extra_files.push((v.rel, v.sha512, v.size));
        r.report.records -= v.records.saturating_sub(1).min(r.report.records);
    }
    let (infected, unscanned) = (found.infected.len(), found.unscanned.len());
    let shared = found.unscanned_without_event as usize;
    summary.infected += infected as u64;
    summary.findings.extend(found.infected.into_iter().map(|(id, sig)| (rel.clone(), id, sig)));
    summary.not_scanned += unscanned as u64;
    summary.unscanned.extend(found.unscanned.into_iter().map(|(id, why)| (rel.clone(), id, why)));
    summary.cleaned += found.cleaned;

    // The container-level virus check.
    let mut detail = Vec::new();
    if infected > 0 {
        detail.push(format!("{infected} infected payload(s) written to viral/ instead"));
    }
    if unscanned > shared {
        let n = unscanned - shared;
        detail.push(format!("{n} payload(s) not scanned, each with its own event"));
    }
    if shared > 0 {
        detail.push(format!(
            "{shared} payload(s) not scanned in gzip members shared with other records (not described one by one; listed in the package report)"
        ));
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

    fn record(id: &str, payload: &str) -> RecordFile {
        RecordFile {
            record_id: id.into(),
            member: ByteRange { begin: 100, len: 50 },
            compressed: true,
            content: Some(ContentFile {
                range: ByteRange { begin: 20, len: payload.len() as u64 },
                sha512: "ab".repeat(64),
                mime: "text/html".into(),
            }),
            described: None,
            page: None,
            capture: None,
        }
    }

    /// Each record goes to the section it is given, with the event its verdict calls for,
    /// at once: clean as it is, not scanned with its own event, infected in the viral twin's
    /// section with the forced event, a cleaned copy with the cleaned event and the
    /// relationship to the original quarantined just before it.
    #[test]
    fn records_are_described_where_they_went_with_their_verdicts_events() {
        let opts = PackageOptions {
            out: std::path::PathBuf::new(),
            metadata: crate::metadata::CuratorMetadata::default(),
            profile: crate::profile::Profile::default_profile(),
            mode: SerializationMode::Minimal,
            level: 6,
            force: false,
            deterministic: true,
            virus_check: super::super::VirusCheck::Disabled,
            schemas: None,
            cleaner: None,
            capture_date: None,
            describe_seeds: false,
        };
        let ids = Ids::seeded("t");
        let now = ids.now();
        let dir = tempfile::tempdir().unwrap();
        let mut mets = super::super::new_mets("urn:uuid:x", now, &opts, dir.path()).unwrap();
        let mut cw = mets.begin_container(GroupUse::DigitalManifestation).unwrap();
        let mut vcw = mets.begin_container(GroupUse::ViralFiles).unwrap();
        let (rel, viral) = ("content/a.warc.gz", "viral/a.viral.warc.gz");
        let mut ev =
            VerdictEvents::new(ids.derive("a"), &opts, now, "9.9", (rel.into(), viral.into()));
        ev.content(&mut cw, &record("urn:uuid:clean", "ok"), Some(&ScanResult::Clean)).unwrap();
        let big = ScanResult::NotScanned(Unscanned::Refused { reply: "over the limit".into() });
        ev.content(&mut cw, &record("urn:uuid:big", "big"), Some(&big)).unwrap();
        ev.infected(&mut vcw, &record("urn:uuid:bad", "x5o"), "Test.Sig").unwrap();
        ev.cleaned(&mut cw, &record("urn:uuid:copy", "ok"), "urn:uuid:bad").unwrap();
        assert_eq!(ev.found.infected, [("urn:uuid:bad".to_string(), "Test.Sig".to_string())]);
        let why = "clamd: over the limit";
        assert_eq!(ev.found.unscanned, [("urn:uuid:big".into(), why.into())]);
        assert_eq!(ev.found.cleaned, 1);
        assert_eq!((cw.records(), cw.listed(), vcw.records(), vcw.listed()), (3, 2, 1, 1));
        for (w, r) in [(cw, rel), (vcw, viral)] {
            let file = super::super::written_container_file(
                r.into(),
                (1, "cd".repeat(64)),
                1,
                vec![],
                "a".into(),
                now,
            );
            mets.finish_container(w, file).unwrap();
        }
        let mut xml = Vec::new();
        mets.finish(&mut xml).unwrap();
        let xml = String::from_utf8(xml).unwrap();
        let o = &opts.profile.virus_outcomes;
        // Minimal mode lists only described records: the clean one is not.
        assert!(!xml.contains("OWNERID=\"urn:uuid:clean\""));
        let at = |s: &str| xml.find(s).unwrap_or_else(|| panic!("{s} missing:\n{xml}"));
        let group = |s: &str| xml[..at(s)].rfind("<mets:fileGrp USE=").map(|i| &xml[i..i + 40]);
        assert!(group("OWNERID=\"urn:uuid:big\"").unwrap().contains("DigitalManifestation"));
        assert!(group("OWNERID=\"urn:uuid:copy\"").unwrap().contains("DigitalManifestation"));
        assert!(group("OWNERID=\"urn:uuid:bad\"").unwrap().contains("ViralFiles"));
        // Each event is in the amdSec of its object (the record described).
        let after = |object: &str, text: &str| {
            let from = at(&format!("<premis:objectIdentifierValue>{object}<"));
            let end = from + xml[from..].find("</mets:amdSec>").unwrap();
            assert!(xml[from..end].contains(text), "{object}: no {text}:\n{}", &xml[from..end]);
        };
        after("content/a.warc.gz#urn:uuid:big", &format!(">{}<", o.not_scanned));
        after("content/a.warc.gz#urn:uuid:big", ">clamd: over the limit<");
        after("viral/a.viral.warc.gz#urn:uuid:bad", &format!(">{}<", o.forced));
        after("viral/a.viral.warc.gz#urn:uuid:bad", ">Test.Sig<");
        let copy = "content/a.warc.gz#urn:uuid:copy";
        after(copy, &format!(">{}<", o.cleaned));
        after(copy, "Test.Sig removed by the cleaner");
        after(copy, ">viral/a.viral.warc.gz#urn:uuid:bad<");
    }

    #[test]
    fn viral_names() {
        use crate::layout::viral_twin;
        assert_eq!(viral_twin("content/a.warc.gz"), "viral/a.viral.warc.gz");
        assert_eq!(viral_twin("content/b.warc"), "viral/b.viral.warc");
        // A copy's twin is compressed as its input is, whatever its name says.
        assert_eq!(copy_viral_rel("content/a.warc.gz", true), "viral/a.viral.warc.gz");
        assert_eq!(copy_viral_rel("content/a.warc.gz", false), "viral/a.viral.warc");
        assert_eq!(copy_viral_rel("content/b.warc", true), "viral/b.viral.warc.gz");
        assert_eq!(copy_viral_rel("content/b.warc", false), "viral/b.viral.warc");
    }
}
