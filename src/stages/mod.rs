//! Stages that look at or change captures on their way into a package (ARCHITECTURE.md).
//!
//! A `Stage` sees items in batches, in order, before anything of them is written: it may
//! route one (to the content or the viral container), put a new payload in place of the
//! harvested one (which then goes to the original container) and note what it found, which the
//! pipeline turns into PREMIS events. The pipeline (`package::captures`) runs its stages on
//! every batch: `identify::IdentifyStage` identifies each payload (first, so that the scan,
//! last, overlaps writing; a migration runs it on a thread of its own, ahead of the writer),
//! `scan::ScanStage` is the virus check, `rewrite::RewriteStage` the link
//! rewriting of mirrors. An item is a capture (a record to be written from it), a record of a
//! copied WARC kept as stored (`StoredRecord`), an ARC record mapped to its WARC record
//! (`MappedRecord`, compressed when written), or bytes of a copied WARC that are no record
//! of their own; a stage looks at what it can use (the scan at every payload, the rewrite at
//! captures only). `run_pipeline` is the one loop: `package` runs it for every capture
//! source and every copied WARC, the migration (in a package or `webaip migrate`) for every
//! ARC.

pub mod dedup;
pub mod identify;
pub(crate) mod original_faults;
pub mod rewrite;
pub mod scan;
pub mod undedup;

use std::io::{self, Read};

use crate::capture::{Capture, Payload};
use crate::formats::arc_to_warc::MappedRecord;
use crate::formats::segment::Segment;
use crate::formats::warc::stored::payload_reader;
use crate::model::RecordFile;

/// Where a capture goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Route {
    /// The content container.
    #[default]
    Content,
    /// The viral container: kept as harvested, never served.
    Viral,
}

/// What the virus scan found about one item, for its PREMIS event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScanFinding {
    /// A virus, by the signature's name.
    Infected(String),
    /// The payload could not be checked, and why.
    NotScanned(scan::Unscanned),
}

/// A record of a copied WARC, kept as it was stored: its bytes are appended to a container as
/// they are, never re-encoded.
#[derive(Debug)]
pub(crate) struct StoredRecord {
    /// Its bytes as stored: its gzip member, or the record itself in an uncompressed file.
    /// `None` for a record that shares its gzip member with others: it cannot be moved on its
    /// own, and its bytes follow as [`Item::Between`].
    pub bytes: Option<Segment>,
    /// Its METS description, its member's range still the one it has in the input.
    pub file: RecordFile,
    /// `WARC-Type`.
    pub warc_type: String,
    /// `WARC-Target-URI`.
    pub target_uri: Option<String>,
    /// `WARC-Date`, as stated.
    pub date: String,
    /// True when the record says its date is inferred (`X-Webaip-Date-Source`).
    pub date_inferred: bool,
    /// The payload's SHA-1, as read (what deduplication looks up), when it has a payload.
    pub payload_sha1: Option<[u8; 20]>,
    /// The length of its WARC header (blank line included) in the decompressed record.
    pub header_len: u64,
    /// `WARC-Truncated`: why its payload is stored shorter than it was sent, when it is.
    pub truncated: Option<String>,
}

impl StoredRecord {
    /// Its payload, read from its stored bytes: `None` when it has none of its own to read
    /// (it shares its gzip member with others).
    pub(crate) fn payload(&self) -> io::Result<Option<Box<dyn Read + Send + '_>>> {
        let (Some(bytes), Some(c)) = (&self.bytes, &self.file.content) else { return Ok(None) };
        let stored = bytes.reader(0, bytes.len());
        let (begin, len) = (c.range.begin, c.range.len);
        Ok(Some(Box::new(payload_reader(stored, self.file.compressed, begin, len)?)))
    }
}

/// What goes through the stages.
// Captures are most items of most runs: boxing each would cost an allocation per capture to
// save a few hundred bytes in a batch of at most a few hundred items.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Item {
    /// A capture: its record is written from it.
    Capture(Capture),
    /// A record of a copied WARC, kept as stored.
    Stored(Box<StoredRecord>),
    /// An ARC record mapped to its WARC record, compressed when written.
    Mapped(Box<MappedRecord>),
    /// Bytes of a copied WARC that are no record of their own (between records, in a gzip
    /// member several records share, after the last one): kept in the content container, in
    /// order.
    Between(Segment),
}

impl Item {
    /// The payload's length (0 when there is none).
    pub(crate) fn payload_len(&self) -> u64 {
        match self {
            Item::Capture(c) => c.payload.len(),
            Item::Stored(r) => r.file.content.as_ref().map_or(0, |c| c.range.len),
            Item::Mapped(m) => m.payload_len(),
            Item::Between(_) => 0,
        }
    }

    /// A reader of the payload, `None` when it cannot be read on its own.
    pub(crate) fn open_payload(&self) -> io::Result<Option<Box<dyn Read + Send + '_>>> {
        match self {
            Item::Capture(c) => c.payload.open().map(Some),
            Item::Stored(r) => r.payload(),
            Item::Mapped(m) => m.payload_reader().map(Some),
            Item::Between(_) => Ok(None),
        }
    }

    /// Where it came from, in errors: the source file, or the stored record's id.
    pub(crate) fn origin(&self) -> String {
        match self {
            Item::Capture(c) => c.provenance.file.clone(),
            Item::Stored(r) => r.file.record_id.clone(),
            Item::Mapped(m) => format!("the ARC record at offset {}", m.location.offset),
            Item::Between(_) => String::new(),
        }
    }
}

/// An item between its source and its container.
#[derive(Debug)]
pub(crate) struct StagedItem {
    /// The item as the source gave it.
    pub item: Item,
    /// Its payload, when it is small enough to hold (read once: hashed, scanned and written
    /// from here); larger ones are streamed from the source for each pass.
    pub held: Option<Vec<u8>>,
    /// The payload's SHA-512.
    pub digest: Option<[u8; 64]>,
    /// Where it goes.
    pub route: Route,
    /// What the stages found.
    pub findings: Vec<ScanFinding>,
    /// The payload a stage put in place of the harvested one, which is kept too.
    pub replacement: Option<Replacement>,
    /// What PRONOM identification found in the harvested payload (`identify::IdentifyStage`).
    pub identification: Option<crate::model::Identification>,
    /// The stored payload it is a revisit of (`dedup::DedupStage`): written as a `revisit`
    /// record without the payload.
    pub revisit: Option<Box<dedup::Revisit>>,
}

impl StagedItem {
    /// An item as it enters the stages: routed to content, nothing found, nothing replaced.
    pub(crate) fn new(item: Item, held: Option<Vec<u8>>, digest: Option<[u8; 64]>) -> StagedItem {
        StagedItem {
            item,
            held,
            digest,
            route: Route::Content,
            findings: Vec::new(),
            replacement: None,
            identification: None,
            revisit: None,
        }
    }
}

/// A payload put in place of the harvested one (links rewritten). The content container gets
/// it with a transformation event; the harvested payload goes, as harvested, to the original
/// container, and the two are related.
#[derive(Debug)]
pub(crate) struct Replacement {
    /// The new payload: bytes, or a temporary file's segment.
    pub payload: Payload,
    /// What was done, for the transformation event (`HTML/CSS link rewriting; ...`).
    pub detail: String,
    /// The temporary file holding the payload, removed when the replacement is dropped: held
    /// for that drop, never read.
    #[allow(dead_code)]
    pub temp: Option<tempfile::TempPath>,
}

/// Why a stage could not do its work (the run stops).
#[derive(Debug, thiserror::Error)]
pub(crate) enum StageError {
    /// clamd failed.
    #[error(transparent)]
    Scan(#[from] scan::ScanError),
    /// clamd failed on one payload streamed to it alone.
    #[error("{origin}: virus scan: {source}")]
    ScanOf {
        /// Where the payload came from ([`Item::origin`]).
        origin: String,
        /// What clamd did.
        #[source]
        source: scan::ScanError,
    },
    /// A payload could not be read, or a stage's temporary file written.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The file the payload is read from.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A digest table could not be searched (deduplication).
    #[error("{origin}: deduplication: {source}")]
    Dedup {
        /// Where the payload came from ([`Item::origin`]).
        origin: String,
        /// Why the table failed (it names the table).
        #[source]
        source: crate::index::digests::DigestTableError,
    },
    /// The link map of a mirror could not be read while rewriting a page's links.
    #[error("{file}: links not rewritten: {source}")]
    LinkMap {
        /// The page.
        file: String,
        /// The cause.
        #[source]
        source: crate::sources::mirror_files::ScratchError,
    },
}

/// One stage of the pipeline.
pub(crate) trait Stage {
    /// Looks at a batch, in order; may route items and note findings. A stage whose work goes
    /// on in the background (clamd scanning) may leave it running here and complete it in
    /// [`Stage::finish`].
    fn run(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError>;

    /// Completes what `run` left running, for the oldest batch it has not finished. Every
    /// stage but the last is finished before the next one runs; the last finishes while the
    /// sink prepares the batch ([`BatchSink::prepare`]), so scanning overlaps compression.
    fn finish(&mut self, _batch: &mut [StagedItem]) -> Result<(), StageError> {
        Ok(())
    }

    /// True when `run` leaves its work running in the background, so that a second batch may
    /// be started before the first is finished.
    fn background(&self) -> bool {
        false
    }
}

/// Where each batch goes once its stages are done.
pub(crate) trait BatchSink<E> {
    /// Work on a batch that depends on nothing a stage decides (compressing records, which go
    /// to one container or another as they are), done while the last stage finishes. Kept
    /// for the batch's `write`, in order.
    fn prepare(&mut self, _batch: &[StagedItem]) -> Result<(), E> {
        Ok(())
    }

    /// Writes the batch's items, in order, where their stages routed them.
    fn write(&mut self, batch: &mut Vec<StagedItem>) -> Result<(), E>;

    /// True when the sink holds two batches at once: the next one is read, started through a
    /// background stage and prepared before the one before it is written. Memory then holds
    /// two batches; scanning never waits for writing.
    fn overlaps(&self) -> bool {
        false
    }
}

/// A sink that writes items one by one and prepares nothing.
pub(crate) struct EachItem<F> {
    /// Writes one item.
    pub write: F,
    /// Whether two batches may be in flight ([`BatchSink::overlaps`]).
    pub overlap: bool,
}

impl<E, F: FnMut(StagedItem) -> Result<(), E>> BatchSink<E> for EachItem<F> {
    fn write(&mut self, batch: &mut Vec<StagedItem>) -> Result<(), E> {
        batch.drain(..).try_for_each(&mut self.write)
    }

    fn overlaps(&self) -> bool {
        self.overlap
    }
}

/// The pipeline: items in batches from `fill` (true once the source is exhausted), each batch
/// through every stage in order, then to `sink`. Every source and every stage goes through
/// here: captures, copied WARC records and migrated ARC records alike.
pub(crate) fn run_pipeline<E: From<StageError>>(
    fill: &mut dyn FnMut(&mut Vec<StagedItem>) -> Result<bool, E>,
    stages: &mut [&mut dyn Stage],
    sink: &mut dyn BatchSink<E>,
) -> Result<(), E> {
    let overlap = sink.overlaps() && stages.last().is_some_and(|s| s.background());
    // With overlap, the batch started last, waiting to be finished and written.
    let mut waiting: Option<Vec<StagedItem>> = None;
    loop {
        let mut batch: Vec<StagedItem> = Vec::new();
        let exhausted = fill(&mut batch)?;
        let n = stages.len();
        for (i, stage) in stages.iter_mut().enumerate() {
            stage.run(&mut batch)?;
            if i + 1 < n {
                stage.finish(&mut batch)?;
            }
        }
        sink.prepare(&batch)?;
        let ready = match overlap {
            true => waiting.replace(batch),
            false => Some(batch),
        };
        let last = exhausted.then(|| waiting.take()).flatten();
        for mut b in ready.into_iter().chain(last) {
            if let Some(stage) = stages.last_mut() {
                stage.finish(&mut b)?;
            }
            sink.write(&mut b)?;
        }
        if exhausted {
            return Ok(());
        }
    }
}
