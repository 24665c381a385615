//! A WARC copied into a package: read once as stored, checked as `audit --deep` checks it,
//! through the stages of the one pipeline, and appended byte-exact.
//!
//! [`StoredWarc`] reads the file once: every byte the WARC reader takes passes through a
//! [`ByteQueue`] and a SHA-512 on its way. Each record becomes an [`Item::Stored`] carrying its
//! own bytes (its gzip member, or the record in an uncompressed file), its METS description and
//! its payload when small enough to scan; what lies between records, or in a gzip member
//! several records share, becomes [`Item::Between`]. The pipeline runs its stages on them
//! (`package::captures::run_pipeline`), and [`CopyWriter`] appends each item where the stages
//! routed it: the content container, or its viral twin (opened on first use), each record
//! described to its container's METS section with the range the container writer gave it.
//! Without a scanner nothing moves: the copy is the input, byte for byte.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::formats::digest::Sha512;
use chrono::{DateTime, Utc};

use super::context::PackageRun;
use super::quarantine::{ContainerScan, VerdictEvents, copy_viral_rel};
use super::sink::{ContainerSink, Warcinfo};
use super::{MAX_EXAMPLES, PackageError, PackageOptions, WarcFinding, io_err};
use crate::formats::digest::{BlockDigests, BlockHasher, hex};
use crate::formats::http::{MAX_HTTP_HEADER_LEN, entity_mime};
use crate::formats::segment::{ByteQueue, Segment};
use crate::formats::warc::WarcReader;
use crate::formats::warc::payload;
use crate::formats::warc::reader::{RecordEnd, WarcRecordHead};
use crate::index::digests::{Algorithm, DigestKey};
use crate::mets::ContainerWriter;
use crate::model::*;
use crate::stages::scan::batching::{self, HELD_PAYLOAD};
use crate::stages::scan::{ScanEngine, ScanResult};
use crate::stages::{Item, Route, ScanFinding, StagedItem, StoredRecord};

/// What checking a copied WARC as `audit --deep` does found.
#[derive(Debug, Default)]
pub(super) struct WarcFindings {
    pub count: u64,
    pub examples: Vec<WarcFinding>,
}

impl WarcFindings {
    /// Notes what the check of one record found (its errors, a missing CRLF CRLF after it).
    fn note(
        &mut self,
        head: &WarcRecordHead,
        check: &crate::formats::warc::check::BlockCheck,
        trailer_ok: bool,
    ) {
        let id = head.header.record_id().unwrap_or("(no WARC-Record-ID)");
        let errors = check
            .problems
            .iter()
            .filter(|p| p.severity == crate::formats::warc::check::BlockSeverity::Error)
            .map(|p| p.message.clone());
        let trailer =
            (!trailer_ok).then(|| "the record's block is not followed by CRLF CRLF".into());
        for why in errors.chain(trailer) {
            self.count += 1;
            if self.examples.len() < MAX_EXAMPLES {
                self.examples.push(WarcFinding {
                    offset: head.offset,
                    record_id: id.to_string(),
                    message: why,
                });
            }
        }
    }
}

impl WarcFindings {
    /// Notes bytes no record frames, kept between the records as they are.
    fn note_gap(&mut self, gap: &crate::formats::warc::reader::Gap) {
        self.count += 1;
        if self.examples.len() < MAX_EXAMPLES {
            let message = match gap.offset_in_member {
                0 => gap.what(),
                n => format!("at {n} in the gzip member: {}", gap.what()),
            };
            let record_id = "(bytes between records)".into();
            self.examples.push(WarcFinding { offset: gap.offset, record_id, message });
        }
    }
}

/// What a copied WARC held, once read to its end.
#[derive(Debug, Default)]
pub(super) struct StoredSummary {
    /// Records read.
    pub records: u64,
    /// The WARC versions they state (at most 8 kept).
    pub versions: BTreeSet<String>,
    /// What the check found.
    pub findings: WarcFindings,
    /// Bytes read: the file's size.
    pub bytes_read: u64,
    /// Their SHA-512.
    pub sha512: String,
}

/// The input as the WARC reader reads it: every byte is hashed and queued as it passes.
struct Tapped {
    from: Rc<RefCell<BufReader<File>>>,
    queue: Rc<RefCell<ByteQueue>>,
    hashed: Rc<RefCell<(Sha512, u64)>>,
}

impl Read for Tapped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.from.borrow_mut().read(buf)?;
        self.queue.borrow_mut().push(&buf[..n])?;
        let mut h = self.hashed.borrow_mut();
        h.0.update(&buf[..n]);
        h.1 += n as u64;
        Ok(n)
    }
}

/// A WARC file read once, record by record, as stored (see the module comment).
pub(super) struct StoredWarc {
    input: PathBuf,
    reader: Option<WarcReader<Tapped>>,
    from: Rc<RefCell<BufReader<File>>>,
    queue: Rc<RefCell<ByteQueue>>,
    hashed: Rc<RefCell<(Sha512, u64)>>,
    /// Input offset up to which bytes were given out in items.
    taken: u64,
    gzip: bool,
    /// Payloads small enough are held for the scan.
    hold: bool,
    /// Items read but not yet given.
    ready: VecDeque<StagedItem>,
    summary: StoredSummary,
    /// The file as it was when opened, to tell at the end whether it changed while read.
    opened: crate::formats::digest::FileState,
}

impl StoredWarc {
    /// Opens `input` (a regular file, never through a link); `hold`: keep payloads for a scan.
    pub(super) fn open(input: &Path, hold: bool) -> Result<StoredWarc, PackageError> {
        let file = super::open_input(input)?;
        let opened = crate::formats::digest::FileState::of(&file).map_err(io_err(input))?;
        let from = Rc::new(RefCell::new(BufReader::with_capacity(1 << 20, file)));
        let queue = Rc::new(RefCell::new(ByteQueue::new()));
        let hashed = Rc::new(RefCell::new((Sha512::new(), 0u64)));
        let tap =
            Tapped { from: Rc::clone(&from), queue: Rc::clone(&queue), hashed: Rc::clone(&hashed) };
        // Bytes no record frames (after a short Content-Length) are read past, kept between
        // the records as they are, and reported with their offset.
        let reader = WarcReader::new(tap, crate::sources::file_text(input))
            .map_err(|source| PackageError::Warc { path: input.to_path_buf(), source })?
            .resynchronise(true);
        Ok(StoredWarc {
            input: input.to_path_buf(),
            gzip: reader.is_gzip(),
            reader: Some(reader),
            from,
            queue,
            hashed,
            taken: 0,
            hold,
            ready: VecDeque::new(),
            summary: StoredSummary::default(),
            opened,
        })
    }

    /// True when the input is gzip-compressed.
    pub(super) fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// The queued input bytes up to `to`, taken out.
    fn take(&mut self, to: u64) -> Result<Segment, PackageError> {
        let seg = self.queue.borrow_mut().take(to).map_err(io_err(&self.input))?;
        self.taken = to;
        Ok(seg)
    }

    /// The next item, or `None` once the whole input was given out.
    pub(super) fn next_item(&mut self) -> Result<Option<StagedItem>, PackageError> {
        loop {
            if let Some(s) = self.ready.pop_front() {
                return Ok(Some(s));
            }
            let Some(reader) = self.reader.as_mut() else { return Ok(None) };
            let hold = self.hold;
            let next = reader.next_record(|head, block| read_stored_block(head, block, hold));
            if let Some(gap) = reader.take_gap() {
                self.summary.findings.note_gap(&gap);
            }
            let (head, end, (d, check, (entity, held))) = match next {
                Ok(Some(x)) => x,
                Ok(None) => {
                    self.drain()?;
                    continue;
                }
                Err(source) => {
                    return Err(PackageError::Warc { path: self.input.clone(), source });
                }
            };
            self.record(head, end, d, check, (entity, held))?;
        }
    }

    /// One record read: its item (and the bytes before it, when it can be moved alone).
    fn record(
        &mut self,
        head: WarcRecordHead,
        end: RecordEnd,
        d: BlockDigests,
        check: crate::formats::warc::check::BlockCheck,
        (entity, held): (Option<String>, Option<Vec<u8>>),
    ) -> Result<(), PackageError> {
        self.summary.records += 1;
        let h = &head.header;
        if self.summary.versions.len() < 8 {
            self.summary.versions.insert(h.version.trim_start_matches("WARC/").to_string());
        }
        self.summary.findings.note(&head, &check, end.trailer_ok);
        // A record can be moved on its own only with one gzip member per record, or in an
        // uncompressed file.
        let movable = !self.gzip || (end.member_ended && head.offset_in_member == 0);
        let bytes = match movable {
            true => {
                if head.offset > self.taken {
                    let between = self.take(head.offset)?;
                    self.ready.push_back(StagedItem::new(Item::Between(between), None, None));
                }
                Some(self.take(end.end)?)
            }
            false => None,
        };
        let digest = (d.payload_len > 0).then_some(d.payload_sha512);
        let record = StoredRecord {
            bytes,
            file: stored_record_file(&head, &end, &d, entity, self.gzip),
            warc_type: h.warc_type().unwrap_or("").to_string(),
            target_uri: h.target_uri().map(str::to_string),
            date: h.get("WARC-Date").unwrap_or("").to_string(),
            date_inferred: h.get(crate::formats::arc_to_warc::FIELD_DATE_SOURCE).is_some(),
            payload_sha1: (d.payload_len > 0).then_some(d.payload_sha1),
            header_len: head.header_len,
            truncated: h.get("WARC-Truncated").map(str::to_string),
        };
        self.ready.push_back(StagedItem::new(Item::Stored(Box::new(record)), held, digest));
        Ok(())
    }

    /// The reader is done: the rest of the input (after the last record) is read through the
    /// same tap, and everything not yet given out becomes the last item.
    fn drain(&mut self) -> Result<(), PackageError> {
        self.reader = None;
        let mut rest = Tapped {
            from: Rc::clone(&self.from),
            queue: Rc::clone(&self.queue),
            hashed: Rc::clone(&self.hashed),
        };
        io::copy(&mut rest, &mut io::sink()).map_err(io_err(&self.input))?;
        let end = self.queue.borrow().end();
        if end > self.taken {
            let rest = self.take(end)?;
            self.ready.push_back(StagedItem::new(Item::Between(rest), None, None));
        }
        Ok(())
    }

    /// What the file held, once every item was taken; an error when the file changed while
    /// it was read (its size and digest would not be those of the bytes copied).
    pub(super) fn finish(mut self) -> Result<StoredSummary, PackageError> {
        let (sha, len) = std::mem::take(&mut *self.hashed.borrow_mut());
        let now = crate::formats::digest::FileState::of(self.from.borrow().get_ref());
        let now = now.map_err(io_err(&self.input))?;
        crate::formats::digest::unchanged(self.opened, now, len)
            .map_err(|change| PackageError::Changed { path: self.input.clone(), change })?;
        self.summary.bytes_read = len;
        self.summary.sha512 = hex(&sha.finalize());
        Ok(self.summary)
    }
}

/// Reads the next batch of `source`'s items into `batch` (bounded as every scanned batch is,
/// [`batching`]): true once the source is exhausted.
pub(super) fn gather_stored(
    source: &mut StoredWarc,
    batch: &mut Vec<StagedItem>,
) -> Result<bool, PackageError> {
    let mut held = 0u64;
    while !batching::batch_full(batch.len(), held) {
        let Some(s) = source.next_item()? else { return Ok(true) };
        // Spilled bytes count too: each is an open temporary file until it is written.
        held += match &s.item {
            Item::Stored(r) => r.bytes.as_ref().map_or(0, Segment::len),
            Item::Between(b) => b.len(),
            Item::Capture(_) | Item::Mapped(_) => 0,
        };
        held += s.held.as_ref().map_or(0, |h| h.len() as u64);
        batch.push(s);
    }
    Ok(false)
}

/// Feeds what is read through it to the METS digests of the block, and, when `held` is
/// given, keeps a copy of the block for the scan.
struct Tee<'a, R: ?Sized> {
    inner: &'a mut R,
    hasher: &'a mut BlockHasher,
    held: Option<Vec<u8>>,
}

impl<R: Read + ?Sized> Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        if let Some(h) = &mut self.held {
            h.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

/// Reads a stored record's block once: its METS digests (payload range and SHA-512), the
/// check `audit --deep` makes (the same function, so what is accepted here passes there), the
/// HTTP entity's type, and with a scanner (`hold`) the payload when it is small enough to be
/// held for it.
#[allow(clippy::type_complexity)]
fn read_stored_block(
    head: &WarcRecordHead,
    block: &mut dyn Read,
    hold: bool,
) -> io::Result<(
    BlockDigests,
    crate::formats::warc::check::BlockCheck,
    (Option<String>, Option<Vec<u8>>),
)> {
    let h = &head.header;
    // The one rule for where a payload starts (formats::warc::payload).
    let mut prefix = Vec::new();
    let mut offset = 0;
    if payload::holds_http_message(h.warc_type(), h.target_uri()) {
        block.take(MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut prefix)?;
        offset = payload::payload_start_of(h, &prefix).offset();
    }
    let entity = (offset > 0).then(|| entity_mime(&prefix[..offset as usize])).flatten();
    let mut hasher = BlockHasher::new(offset);
    hasher.update(&prefix);
    let held = (hold && h.content_length().is_some_and(|l| l <= HELD_PAYLOAD + offset))
        .then(|| prefix.clone());
    let mut tee = Tee { inner: block, hasher: &mut hasher, held };
    let mut replay = io::Cursor::new(&prefix[..]).chain(&mut tee);
    let check = crate::formats::warc::check::check_block(head, &mut replay, &[], true)?;
    let held = tee.held.take().map(|mut b| b.split_off((offset as usize).min(b.len())));
    Ok((hasher.finish(), check, (entity, held)))
}

/// A stored record as its METS `<file>` describes it: its member's range, its payload's
/// range, digest and type, and the capture it holds.
fn stored_record_file(
    head: &WarcRecordHead,
    end: &RecordEnd,
    d: &BlockDigests,
    entity: Option<String>,
    gzip: bool,
) -> RecordFile {
    let h = &head.header;
    // The payload of an HTTP response is the entity: its type is the HTTP header's (as for
    // migrated records), not the record's application/http.
    let mime = match entity {
        Some(m) => m,
        None if d.payload_offset > 0 => "application/octet-stream".to_string(),
        None => h.get("Content-Type").unwrap_or("application/octet-stream").to_string(),
    };
    RecordFile {
        refers: None,
        record_id: h.record_id().unwrap_or("").trim_matches(['<', '>']).to_string(),
        member: ByteRange { begin: head.offset, len: end.end - head.offset },
        compressed: gzip,
        content: Some(ContentFile {
            range: ByteRange { begin: head.header_len + d.payload_offset, len: d.payload_len },
            sha512: hex(&d.payload_sha512),
            mime,
            identification: None,
        }),
        described: None,
        page: None,
        capture: super::url_capture(
            h.warc_type().unwrap_or(""),
            h.target_uri(),
            h.get("WARC-Date").unwrap_or(""),
            h.get(crate::formats::arc_to_warc::FIELD_DATE_SOURCE).is_some(),
        ),
    }
}

/// Every record of the WARC container at `path`, in order, with its `WARC-Type`, as its METS
/// `<file>` describes it
/// (member range, payload range, SHA-512 and type): a record listing made after the fact
/// (`ingest --mode full`), by the rules a copied WARC is described by.
pub(crate) fn describe_records(
    path: &Path,
    each: &mut dyn FnMut(&str, RecordFile),
) -> Result<(), crate::formats::warc::WarcError> {
    use crate::formats::warc::{WarcError, reader::WarcFault};
    let name = path.display().to_string();
    let file = crate::layout::open_regular(path).map_err(|e| WarcError {
        name: name.clone(),
        offset: 0,
        fault: WarcFault::Open(io::Error::other(e)),
    })?;
    let mut reader = WarcReader::new(BufReader::with_capacity(1 << 20, file), name)?;
    let gzip = reader.is_gzip();
    while let Some((head, end, (d, _, (entity, _)))) =
        reader.next_record(|head, block| read_stored_block(head, block, false))?
    {
        let warc_type = head.header.warc_type().unwrap_or("").to_string();
        each(&warc_type, stored_record_file(&head, &end, &d, entity, gzip));
    }
    Ok(())
}

/// A copied WARC's format: the version its records state (a copied WARC keeps its version),
/// or the versions it mixes, with no PRONOM identifier then.
pub(super) fn stated_warc_format(versions: &BTreeSet<String>) -> Format {
    match versions.len() {
        1 => crate::formats::pronom::warc(versions.iter().next().map_or("", |v| v.as_str())).into(),
        _ => {
            let all: Vec<&str> = versions.iter().map(|v| v.as_str()).collect();
            let mut f: Format = crate::formats::pronom::warc(&all.join(", ")).into();
            f.pronom = if all.is_empty() { None } else { f.pronom };
            f
        }
    }
}

/// Where a copied WARC's items went.
pub(super) struct Copied {
    /// The content container, open, its records described.
    pub content: ContainerSink,
    /// The viral twin, when a record went there.
    pub viral: Option<ContainerSink>,
    /// What the scan found.
    pub scan: ContainerScan,
    /// The first record found infected among those that share a gzip member (it stayed in
    /// content): (record id, offset of its member, signature).
    pub stuck: Option<(String, u64, String)>,
    /// What deduplication wrote.
    pub dedup: crate::stages::dedup::DedupTally,
}

/// Where a copied WARC's records go: its content container, the viral twin's METS section
/// (the twin is opened on first use), and whether the input is gzip (the twin is written the
/// same way).
pub(super) struct CopySinks {
    pub(super) content: ContainerSink,
    pub(super) viral_mets: Option<ContainerWriter>,
    pub(super) gzip: bool,
}

/// Writes the items of a copied WARC where the stages routed them: the content container, or
/// its viral twin (opened on first use), each record described as it is appended.
pub(super) struct CopyWriter<'a> {
    root: &'a Path,
    opts: &'a PackageOptions,
    now: DateTime<Utc>,
    /// Whether the input is gzip: the viral twin is written the same way.
    gzip: bool,
    /// The scanner, for a cleaner's copy to be rescanned.
    engine: Option<&'a std::sync::Arc<ScanEngine>>,
    content: ContainerSink,
    viral: Option<ContainerSink>,
    /// The viral twin's METS section, until the twin is opened.
    viral_mets: Option<ContainerWriter>,
    events: VerdictEvents<'a>,
    /// The first record found infected among those that share a gzip member and cannot be
    /// moved: (record id, offset of its member, signature).
    stuck: Option<(String, u64, String)>,
    /// What deduplication wrote.
    dedup: crate::stages::dedup::DedupTally,
    /// With `--dedup-within`: where the first record of each payload went (its member and
    /// the payload's offset in it), for the METS entries of its revisits. It holds what the
    /// dedup stage's own map holds: one entry per distinct payload.
    written: HashMap<DigestKey, (ByteRange, u64)>,
}

impl<'a> CopyWriter<'a> {
    /// A writer to `content` (created empty: the input's own records, warcinfo included, are
    /// appended), the viral twin's section kept for when it is needed.
    pub(super) fn new(
        root: &'a Path,
        run: PackageRun<'a>,
        sinks: CopySinks,
        events: VerdictEvents<'a>,
        engine: Option<&'a std::sync::Arc<ScanEngine>>,
    ) -> Self {
        CopyWriter {
            root,
            opts: run.opts,
            now: run.now,
            gzip: sinks.gzip,
            engine,
            content: sinks.content,
            viral: None,
            viral_mets: sinks.viral_mets,
            events,
            stuck: None,
            // Measured: the stored record's bytes are known.
            dedup: crate::stages::dedup::DedupTally { bytes_saved: Some(0), ..Default::default() },
            written: HashMap::new(),
        }
    }

    /// Appends one item where its stages routed it.
    pub(super) fn write(&mut self, staged: StagedItem) -> Result<(), PackageError> {
        let StagedItem { item, held, route, findings, identification, revisit, .. } = staged;
        let verdict = findings.into_iter().next().map(|f| match f {
            ScanFinding::Infected(sig) => ScanResult::Infected(sig),
            ScanFinding::NotScanned(why) => ScanResult::NotScanned(why),
        });
        let r = match item {
            Item::Between(bytes) => return self.append_between(&bytes),
            Item::Stored(r) => r,
            Item::Capture(_) | Item::Mapped(_) => {
                return Err(PackageError::Internal("a capture in a WARC copy"));
            }
        };
        let Some(bytes) = &r.bytes else {
            // Its bytes go with the rest of its member, as bytes between records in the content
            // container; only its verdict is kept.
            match verdict {
                Some(ScanResult::Infected(sig)) if self.stuck.is_none() => {
                    self.stuck = Some((r.file.record_id, r.file.member.begin, sig));
                }
                Some(ScanResult::NotScanned(why)) => {
                    self.events.unscanned_in_shared_member(r.file.record_id, why.to_string());
                }
                _ => {}
            }
            return Ok(());
        };
        let root = self.root;
        let len = bytes.len();
        if route == Route::Viral {
            let sig = match &verdict {
                Some(ScanResult::Infected(sig)) => sig.clone(),
                _ => return Err(PackageError::Internal("routed to viral/ without a finding")),
            };
            self.open_viral()?;
            let v = self.viral.as_mut().ok_or(PackageError::Internal("viral container"))?;
            let range = v.append_member(root, bytes.reader(0, len), len)?;
            let moved = RecordFile { member: range, ..r.file.clone() };
            let moved = self.identified(moved, identification);
            let v = self.viral.as_mut().ok_or(PackageError::Internal("viral container"))?;
            self.events.infected(&mut v.mets, &moved, &sig).map_err(io_err(root))?;
            return self.clean(&r, held.as_deref());
        }
        if let Some(revisit) = revisit
            && let Some(moved) = self.revisit(&r, &revisit)?
        {
            let moved = self.identified(moved, identification);
            let (mets, verdict) = (&mut self.content.mets, verdict.as_ref());
            return self.events.content(mets, &moved, verdict).map_err(io_err(root));
        }
        let range = self.content.append_member(root, bytes.reader(0, len), len)?;
        self.note_written(&r, range);
        // A warcinfo record is scanned as every record is, but described only when its verdict
        // needs an event (no container of the package describes its warcinfo records).
        let said = matches!(verdict, Some(ScanResult::NotScanned(_)));
        if r.warc_type == "warcinfo" && !said {
            return Ok(());
        }
        let moved = self.identified(RecordFile { member: range, ..r.file }, identification);
        self.events.content(&mut self.content.mets, &moved, verdict.as_ref()).map_err(io_err(root))
    }

    /// Writes the revisit of a stored record whose payload is stored already
    /// (`stages::dedup`): its header and HTTP header, without the payload. `None` (and
    /// nothing written) when its head cannot be rewritten (not UTF-8, cut short): the record
    /// is then copied as it is.
    fn revisit(
        &mut self,
        r: &StoredRecord,
        revisit: &crate::stages::dedup::Revisit,
    ) -> Result<Option<RecordFile>, PackageError> {
        use crate::stages::dedup;
        let (Some(bytes), Some(c)) = (&r.bytes, &r.file.content) else { return Ok(None) };
        let path = self.root.join(&self.content.rel);
        let head = crate::formats::warc::stored::record_head(
            bytes.reader(0, bytes.len()),
            self.gzip,
            c.range.begin,
        )
        .map_err(io_err(&path))?;
        let Some(record) = dedup::revisit_record(&head, r.header_len as usize, revisit) else {
            return Ok(None);
        };
        let member = match self.gzip {
            true => dedup::gzip_member(&record, self.opts.level).map_err(io_err(&path))?,
            false => record,
        };
        let len = member.len() as u64;
        let range = self.content.append_member(self.root, &member[..], len)?;
        let t = &mut self.dedup;
        t.revisits += 1;
        *t.bytes_saved.get_or_insert(0) += bytes.len().saturating_sub(len);
        t.payload_bytes += c.range.len;
        *t.packages.entry(dedup::Holder::of(revisit)).or_default() += 1;
        let refers = self.referenced(revisit, c);
        Ok(Some(RecordFile {
            member: range,
            content: None,
            refers: Some(Box::new(refers)),
            capture: super::url_capture(
                "response",
                r.target_uri.as_deref(),
                &r.date,
                r.date_inferred,
            ),
            ..r.file.clone()
        }))
    }

    /// Keeps where a response went, for `--dedup-within` revisits of it to state.
    fn note_written(&mut self, r: &StoredRecord, member: ByteRange) {
        let within = self.opts.dedup.as_ref().is_some_and(|d| d.within);
        let (Some(sha1), Some(c)) = (&r.payload_sha1, &r.file.content) else { return };
        if !within || r.warc_type != "response" || c.range.len == 0 {
            return;
        }
        if let Some(key) = DigestKey::new(Algorithm::Sha1, sha1) {
            self.written.entry(key).or_insert((member, c.range.begin));
        }
    }

    /// Where a revisit's payload is stored, as its METS entry states it ([`Revisit::referenced`]);
    /// for one of this container's own (`--dedup-within`), where this writer put it.
    ///
    /// [`Revisit::referenced`]: crate::stages::dedup::Revisit::referenced
    fn referenced(
        &self,
        revisit: &crate::stages::dedup::Revisit,
        c: &crate::model::ContentFile,
    ) -> crate::model::ReferencedPayload {
        let own = revisit.own.then(|| self.written.get(&revisit.digest)).flatten().copied();
        revisit.referenced(own, c.range.len, &c.mime)
    }

    /// A record with what identification found of its payload (described, under its content
    /// object id, when the mode or a contradiction calls for it).
    fn identified(&self, rf: RecordFile, id: Option<crate::model::Identification>) -> RecordFile {
        let rel = &self.content.rel;
        let oid = |rf: &RecordFile| format!("{rel}#{}", rf.record_id);
        crate::stages::identify::record_identified(rf, oid, id, self.opts.identify)
    }

    /// Bytes that are no record of their own stay in the content container, in order.
    fn append_between(&mut self, bytes: &Segment) -> Result<(), PackageError> {
        let path = self.root.join(&self.content.rel);
        let mut from = bytes.reader(0, bytes.len());
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buf).map_err(io_err(&path))?;
            if n == 0 {
                return Ok(());
            }
            self.content.append_bytes(self.root, &buf[..n])?;
        }
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
            let info = Warcinfo { id, now: self.now, description: &description };
            ContainerSink::open(self.root, rel, mets, self.opts.level, info)?
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
    fn clean(&mut self, r: &StoredRecord, held: Option<&[u8]>) -> Result<(), PackageError> {
        let (Some(cmd), Some(c), Some(engine)) = (&self.opts.cleaner, &r.file.content, self.engine)
        else {
            return Ok(());
        };
        let mut tmp = tempfile::NamedTempFile::new().map_err(io_err(self.root))?;
        match held {
            Some(b) => io::Write::write_all(tmp.as_file_mut(), b),
            None => match r.payload() {
                Ok(Some(mut p)) => io::copy(&mut p, tmp.as_file_mut()).map(drop),
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            },
        }
        .map_err(io_err(self.root))?;
        let bytes = match crate::stages::scan::clean_copy(cmd, tmp.path(), engine)? {
            Ok(bytes) => bytes,
            Err(why) => {
                self.events.found.not_cleaned.push((r.file.record_id.clone(), why.to_string()));
                return Ok(());
            }
        };
        let capture = r.file.capture.clone();
        // The original's own id, as its WARC-Record-ID states it (any URI).
        let spec = crate::formats::warc::writer::cleaned_copy_spec(
            self.events.ids().warc_record_id(),
            &r.file.record_id,
            (
                capture.as_ref().map(|c| c.uri.clone()),
                capture.as_ref().map(|c| c.date.clone()).unwrap_or_default(),
            ),
            c.mime.clone(),
        );
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
            let digests = BlockHasher::digest(&bytes, 0);
            let header = spec.header(&digests).to_bytes();
            let end = crate::formats::warc::writer::RECORD_END;
            let len = (header.len() + bytes.len() + end.len()) as u64;
            let record = header.as_slice().chain(&bytes[..]).chain(end);
            let member = self.content.append_member(self.root, record, len)?;
            RecordFile {
                refers: None,
                record_id: spec.record_id.trim_matches(['<', '>']).to_string(),
                member,
                compressed: false,
                content: Some(ContentFile {
                    range: ByteRange { begin: header.len() as u64, len: digests.payload_len },
                    sha512: hex(&digests.payload_sha512),
                    mime: c.mime.clone(),
                    identification: None,
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

    /// The containers written, what the scan found, and the first infected record that could
    /// not be moved.
    pub(super) fn finish(self) -> Copied {
        Copied {
            content: self.content,
            viral: self.viral,
            scan: self.events.found,
            stuck: self.stuck,
            dedup: self.dedup,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::warc::stored::record_reader;

    /// Every byte of every corpus WARC comes out of the stored reader once, in order: the
    /// records it can move alone as their own bytes, everything else between them; and each
    /// record's stated range is where its bytes were.
    #[test]
    fn a_stored_warc_gives_every_input_byte_once_in_order() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/warc");
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(&corpus).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        // A file compressed as one stream: no record can be moved alone.
        let dir = tempfile::tempdir().unwrap();
        let plain = corpus.join("nas-NAS-20100909163324-00000-mette.kb.dk.warc");
        let one_stream = dir.path().join("one-stream.warc.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut gz, &std::fs::read(&plain).unwrap()).unwrap();
        std::fs::write(&one_stream, gz.finish().unwrap()).unwrap();
        files.push(one_stream);
        assert!(files.len() > 10, "{files:?}");
        let mut all_stored = 0;
        for path in files {
            let input = std::fs::read(&path).unwrap();
            for hold in [false, true] {
                let mut source = StoredWarc::open(&path, hold).unwrap();
                let (mut out, mut moved, mut stored) = (Vec::new(), 0, 0);
                while let Some(s) = source.next_item().unwrap() {
                    let bytes = match &s.item {
                        Item::Between(b) => Some(b),
                        Item::Stored(r) => {
                            stored += 1;
                            if let Some(b) = &r.bytes {
                                moved += 1;
                                assert_eq!(r.file.member.begin, out.len() as u64, "{path:?}");
                                assert_eq!(r.file.member.len, b.len(), "{path:?}");
                            }
                            r.bytes.as_ref()
                        }
                        Item::Capture(_) | Item::Mapped(_) => panic!("not a stored WARC item"),
                    };
                    if let Some(b) = bytes {
                        b.reader(0, b.len()).read_to_end(&mut out).unwrap();
                    }
                }
                let read = source.finish().unwrap();
                assert!(out == input, "{path:?}: the items are not the input");
                assert_eq!(read.bytes_read, input.len() as u64);
                let sha = hex(&<sha2::Sha512 as sha2::Digest>::digest(&input));
                assert_eq!(read.sha512, sha, "{path:?}");
                assert!(read.records >= stored, "{path:?}: {stored} of {}", read.records);
                all_stored += stored;
                // Files compressed as a single gzip stream of several records (ours, and one of the
                // corpus).
                let name = path.file_name().unwrap().to_string_lossy();
                let one_stream = ["one-stream", "gowarc-good-warc11"];
                if one_stream.iter().any(|n| name.starts_with(n)) {
                    assert_eq!(moved, 0, "{path:?}: a record of a one-stream file was moved alone");
                } else {
                    assert_eq!(moved, stored, "{path:?}");
                }
            }
        }
        assert!(all_stored > 1000, "{all_stored} records");
    }

    /// A WARC cut short after its first record was read: the copy's size and digest would be
    /// those of fewer bytes than the file held when opened, so finishing it is an error that
    /// names the file and both sizes. Cut deterministically between two reads of the source.
    #[test]
    fn a_warc_cut_short_while_copied_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.warc");
        let big = vec![b'x'; 4 << 20];
        let input = [record("http://e.org/a", b"first"), record("http://e.org/b", &big)].concat();
        std::fs::write(&path, &input).unwrap();
        let mut source = StoredWarc::open(&path, false).unwrap();
        assert!(source.next_item().unwrap().is_some());
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(2000).unwrap();
        while let Ok(Some(_)) = source.next_item() {}
        let Err(e) = source.finish() else { panic!("a WARC cut short was copied as whole") };
        let text = e.to_string();
        assert!(text.starts_with(&format!("{}: changed while being read (", path.display())));
        assert!(
            text.contains(&format!("{} bytes when opened, 2000 bytes at the end", input.len()))
        );
    }

    fn record(uri: &str, payload: &[u8]) -> Vec<u8> {
        let mut rec = format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x:{uri}>\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: {uri}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            payload.len()
        )
        .into_bytes();
        rec.extend_from_slice(payload);
        rec.extend_from_slice(b"\r\n\r\n");
        rec
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut e, bytes).unwrap();
        e.finish().unwrap()
    }

    /// Blank lines before a record are its bytes: its payload range, and the payload read for
    /// the scan, are counted from where they start. A record followed in its gzip member only
    /// by line ends is alone in it, and moved alone.
    #[test]
    fn blank_lines_around_a_record_shift_nothing() {
        let payloads: [&[u8]; 3] = [b"first payload", b"second, after blank lines", b"third"];
        let plain = [
            record("http://e.org/1", payloads[0]),
            [&b"\r\n\n\r\n"[..], &record("http://e.org/2", payloads[1])].concat(),
            record("http://e.org/3", payloads[2]),
        ];
        let gzip = [gz(&plain[0]), gz(&plain[1]), gz(&[&plain[2][..], b"\r\n\r\n\n"].concat())];
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [("p.warc", plain.concat()), ("g.warc.gz", gzip.concat())] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let mut source = StoredWarc::open(&path, true).unwrap();
            let mut seen = Vec::new();
            while let Some(s) = source.next_item().unwrap() {
                let Item::Stored(r) = s.item else { panic!("{name}: bytes between records") };
                let stored = r.bytes.as_ref().expect("every record is moved alone");
                let mut record = Vec::new();
                let raw = stored.reader(0, stored.len());
                let compressed = r.file.compressed;
                record_reader(raw, compressed).read_to_end(&mut record).unwrap();
                let c = r.file.content.as_ref().unwrap();
                let at = c.range.begin as usize..(c.range.begin + c.range.len) as usize;
                let mut read = Vec::new();
                r.payload().unwrap().unwrap().read_to_end(&mut read).unwrap();
                assert_eq!(read, &record[at.clone()], "{name}: the payload read for the scan");
                assert_eq!(s.held.as_deref(), Some(&record[at.clone()]), "{name}: held");
                seen.push(record[at].to_vec());
            }
            assert_eq!(seen, payloads.map(<[u8]>::to_vec), "{name}");
        }
    }
}
