//! Streaming, tolerant reader for ARC v1 and v2 files.
//!
//! The main type is [`ArcReader`]. [`ArcReader::next_record`] yields one [`ArcRecord`] at a
//! time with its byte offset; the record's body is read with [`ArcReader::body_reader`] (or
//! [`ArcReader::body_slice`]) until the next call, much as a `tar::Entry` borrows its archive.
//! Memory does not grow with record size: plain files are read in place and gzip members larger
//! than `segment::MEMORY_SPOOL_LIMIT` (8 MiB) are spilled to a temporary
//! file.
//!
//! Real ARC files are messy (see `INPUT_FORMATS.md` §2.6). Nothing here fails on bad framing:
//! every oddity becomes an [`Anomaly`] with its offset, and bytes that belong to no record are
//! returned as a [`RecordKind::Remainder`] record so that the caller can keep them. Only I/O
//! errors are errors.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut arc = webaip::formats::arc::ArcReader::open("IAH-20080430204825-00000-blackbook.arc.gz")?;
//! while let Some(rec) = arc.next_record()? {
//!     println!("{} {:?} {} bytes", rec.location, rec.kind, rec.body_len());
//! }
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::arc_framing::{self, Framed, MemberSettings, Orphans, Problems, StreamDigest};
use super::arc_rebuild::{OrphanMembers, RebuildField};
use super::counting::Counting;
use super::dates::parse_arc_date;
use super::segment::{SPOOL_BUF, Segment, SegmentReader, spool_with};

/// Longest header line we accept (webarchive-commons caps at 100 KiB; Heritrix writes 4 KiB).
/// A line with no line end within this many bytes is not a record header: its bytes are kept
/// as a remainder record (with a `Garbage` anomaly giving its offset), never buffered whole.
pub(crate) const MAX_HEADER_LINE: usize = 100 * 1024;

/// File-level anomalies of one kind listed one by one (with their offsets); beyond this they
/// are only counted ([`ArcReader::unlisted_file_anomalies`]), and the bytes they concern stay
/// accounted for in [`ArcReader::byte_account`], so a file of a million empty gzip members
/// costs no more memory than a file of a hundred.
pub const MAX_LISTED_FILE_ANOMALIES: usize = 100;

const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// An I/O failure while reading an ARC file, with the file and offset where it happened.
#[derive(Debug, thiserror::Error)]
#[error("{path}: at offset {offset}: {why}", why = crate::layout::describe_io(source))]
pub struct ArcError {
    /// The ARC file.
    pub path: PathBuf,
    /// Offset in the (compressed) file.
    pub offset: u64,
    /// The underlying error.
    #[source]
    pub source: io::Error,
}

/// What an ARC record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordKind {
    /// The `filedesc://` version block that opens an ARC file.
    Filedesc,
    /// A capture: a URL record with its network document.
    Capture,
    /// Bytes that belong to no record (garbage, an unparseable header, undecodable gzip data).
    Remainder,
}

/// Where a record starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Location {
    /// For gzip input: offset of the gzip member in the compressed file.
    pub member: Option<u64>,
    /// Offset of the record: in the file for plain input, in the decompressed member for gzip,
    /// or in the compressed file for a raw remainder.
    pub offset: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.member {
            Some(m) if self.offset == 0 => write!(f, "offset {m}"),
            Some(m) => write!(f, "gzip member at offset {m}, byte {} inside it", self.offset),
            None => write!(f, "offset {}", self.offset),
        }
    }
}

/// How serious an anomaly is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A formatting deviation that changes nothing (extra blank line, spaces in a URL).
    Info,
    /// Framing or metadata had to be repaired (record end re-found, date missing).
    Warning,
    /// Data may be incomplete (truncated record, damaged gzip data).
    Error,
}

/// The kinds of oddity the reader tolerates and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum AnomalyKind {
    /// Blank lines where none were expected (before a record, or more than one separator).
    ExtraBlankLines,
    /// No blank separator line after a record.
    MissingSeparator,
    /// The file has no `filedesc://` record first.
    NoFiledesc,
    /// A `filedesc://` record that is not the first record.
    FiledescNotFirst,
    /// The URL contains spaces (header line split from the right).
    SpaceInUrl,
    /// The URL is not a valid URI; it is kept as found.
    InvalidUri,
    /// The MIME type was split by a space (`text/html; charset=...`) and rejoined.
    MimeWithSpace,
    /// The header line has no MIME type.
    MissingMime,
    /// The header line's field count does not match the file's ARC version.
    FieldCount,
    /// The archive date could not be parsed.
    BadDate,
    /// The declared length could not be parsed.
    BadLength,
    /// The declared length disagrees with where the record really ends; the end was re-found.
    LengthMismatch,
    /// The record ends before its declared length (end of file or of the gzip member).
    Truncated,
    /// Bytes that belong to no record; kept as a remainder record.
    Garbage,
    /// A gzip member could not be decompressed completely.
    GzipError,
    /// A gzip member that decompresses to nothing.
    EmptyGzipMember,
    /// Several records in one gzip member (a whole-file gzip instead of one member per record).
    MultipleRecordsPerMember,
    /// The record's body has no (complete) HTTP header although its URL is HTTP.
    NoHttpHeader,
    /// The ARC header line holds characters that cannot appear in a WARC header; escaped.
    ControlCharacters,
    /// Only whitespace (spaces, tabs, CR, LF) lies between a record's declared end and the next
    /// record header (or the data's end): the body is the declared length and the padding is a
    /// separator, counted in [`ByteAccount::padding_bytes`].
    WhitespacePadding,
    /// The header line's content type is not a MIME type (`html`, `-`) or differs from the
    /// HTTP header's; the payload is typed by the HTTP header, the ARC's value kept here.
    ArcTypeNotEntityType,
    /// What the package keeps cannot give back this ARC byte for byte (a gap too irregular or
    /// a record-less member too large to keep): see the migration report's `rebuild`.
    NotRebuildable,
}

/// One tolerated oddity, with where it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Anomaly {
    /// Where it was found.
    pub location: Location,
    /// What it is.
    pub kind: AnomalyKind,
    /// How serious it is.
    pub severity: Severity,
    /// A sentence for humans, with the numbers involved.
    pub detail: String,
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}: {}", self.location, self.kind, self.detail)
    }
}

/// ARC format version, from the filedesc version block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ArcVersion {
    /// 5-field URL records.
    V1,
    /// 10-field URL records.
    V2,
}

/// The extra fields of an ARC v2 URL record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct V2Fields {
    /// HTTP result code as the crawler saw it.
    pub result_code: String,
    /// The crawler's checksum of the document (`-` when absent).
    pub checksum: String,
    /// Redirect location (`-` when absent).
    pub location: String,
    /// The offset the writer thought the record had.
    pub offset: String,
    /// The file name the writer thought it wrote.
    pub filename: String,
}

/// The parsed header line of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArcHeader {
    /// The header line exactly as found (without its line end).
    pub raw_line: Vec<u8>,
    /// The URL exactly as found (may contain spaces).
    pub url: Vec<u8>,
    /// The IP address field.
    pub ip: String,
    /// The archive-date field as found.
    pub date_raw: String,
    /// The archive date, when it parses (ARC dates are UTC).
    pub date: Option<DateTime<Utc>>,
    /// The content-type field (`no-type`, `-` and empty occur).
    pub mime: String,
    /// The archive-length field, when it parses as a non-negative number.
    pub declared_length: Option<u64>,
    /// Extra fields of a v2 record.
    pub v2: Option<V2Fields>,
}

impl ArcHeader {
    /// The URL as text (lossy for bytes that are not UTF-8).
    pub fn url_str(&self) -> String {
        String::from_utf8_lossy(&self.url).into_owned()
    }
}

/// One record, as found: what it is, where it is, and the anomalies met on the way.
#[derive(Debug, Clone)]
pub struct ArcRecord {
    /// Filedesc, capture or remainder.
    pub kind: RecordKind,
    /// The parsed header line (`None` for a remainder).
    pub header: Option<ArcHeader>,
    /// Where the record (its header line) starts.
    pub location: Location,
    /// Length of the header line including its line end (0 for a remainder).
    pub header_len: u64,
    /// Start of the body in the current segment.
    pub body_start: u64,
    /// End (exclusive) of the body in the current segment.
    pub body_end: u64,
    /// Anomalies found while framing this record.
    pub anomalies: Vec<Anomaly>,
    /// True when the record ends before its declared length.
    pub truncated: bool,
    /// What the record's bytes in the stream hold besides its block (`docs/arc-rebuild.md`).
    pub(crate) rebuild: RebuildField,
    raw: bool,
}

impl ArcRecord {
    /// Number of body bytes.
    pub fn body_len(&self) -> u64 {
        self.body_end - self.body_start
    }
}

enum Input {
    Plain,
    /// One decoder and one copy buffer for every member: allocating them per member (and
    /// keeping a record per empty member) made 300,000 empty members cost 2 GB.
    Gzip {
        dec: Box<flate2::bufread::GzDecoder<RawInput>>,
        buf: Vec<u8>,
    },
}

/// The compressed file under the reused gzip decoder; `Detached` only for an instant while the
/// decoder is reset.
enum RawInput {
    Detached,
    Attached(Counting<BufReader<File>>),
}

impl RawInput {
    fn pos(&self) -> u64 {
        match self {
            RawInput::Attached(c) => c.pos,
            RawInput::Detached => 0,
        }
    }
}

impl Read for RawInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            RawInput::Attached(c) => c.read(buf),
            RawInput::Detached => Ok(0),
        }
    }
}

impl BufRead for RawInput {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            RawInput::Attached(c) => c.fill_buf(),
            RawInput::Detached => Ok(&[]),
        }
    }
    fn consume(&mut self, amt: usize) {
        if let RawInput::Attached(c) = self {
            c.consume(amt)
        }
    }
}

/// Where the bytes of the input went: every byte of the file is in exactly one of the
/// categories, so a report can show that none was lost, however many records or members.
///
/// For a plain file, `record_bytes + separator_bytes == input`. For a gzip file,
/// `member_bytes + raw_bytes == input` (compressed bytes), and the decompressed bytes
/// satisfy `record_bytes + separator_bytes == decompressed_bytes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ByteAccount {
    /// Size of the input file.
    pub input: u64,
    /// gzip: members decompressed completely (empty ones included).
    pub members: u64,
    /// gzip: their compressed bytes.
    pub member_bytes: u64,
    /// gzip: members that decompress to nothing (included in `members`).
    pub empty_members: u64,
    /// gzip: their compressed bytes (included in `member_bytes`).
    pub empty_member_bytes: u64,
    /// gzip: bytes that are not gzip data or belong to a damaged member, kept as found in raw
    /// remainder records.
    pub raw_bytes: u64,
    /// gzip: bytes decompressed (from damaged members too, up to the damage).
    pub decompressed_bytes: u64,
    /// Bytes inside records: header lines, bodies and (non-raw) remainder records; for gzip
    /// input, decompressed bytes.
    pub record_bytes: u64,
    /// Blank-line bytes between records (decompressed for gzip input), whitespace padding
    /// included.
    pub separator_bytes: u64,
    /// Whitespace padding after records' declared lengths (included in `separator_bytes`).
    pub padding_bytes: u64,
}

impl ByteAccount {
    /// True when every byte of the input is accounted for (see the type's invariants).
    pub fn balanced(&self, gzip: bool) -> bool {
        if gzip {
            self.member_bytes + self.raw_bytes == self.input
                && self.record_bytes + self.separator_bytes == self.decompressed_bytes
        } else {
            self.record_bytes + self.separator_bytes == self.input
        }
    }
}

struct SegmentState {
    data: Arc<Segment>,
    pos: u64,
    /// Offset of the gzip member this segment came from (None for plain files).
    member: Option<u64>,
    /// Blank lines expected before the next record (1 after a record, 0 after a filedesc).
    expected_separators: u64,
    records: u64,
    /// A raw (compressed-file) remainder to emit after this segment.
    pending_raw: Option<(u64, u64, String)>,
    /// Bytes given to records so far (their lead, bytes and tail).
    claimed: u64,
    /// Records (and remainders) framed in this segment.
    framed: u64,
    /// The member is damaged: its raw bytes are kept, and its records are skipped by a rebuild.
    damaged: bool,
    /// Where the member ends in the compressed file.
    member_end: u64,
    /// The member's gzip header and deflate settings where not the file's (its first
    /// record's field says them).
    settings: (Option<Vec<u8>>, Option<String>),
}

/// What the reader knows for the rebuild record once the file is read.
#[derive(Debug, Default)]
pub(crate) struct RebuildEnd {
    /// Record-less members after the last record.
    pub post: Vec<OrphanMembers>,
    /// Why the ARC cannot be rebuilt (empty: it can).
    pub reasons: Vec<String>,
    /// The stream's length and SHA-512 (gzip input).
    pub stream: Option<(u64, String)>,
    /// The default member header and deflate settings (gzip input).
    pub defaults: (Option<Vec<u8>>, Option<String>),
    /// Members whose deflate settings were not recovered (gzip input).
    pub unrecovered: crate::formats::arc_rebuild::Unrecovered,
}

/// Reads records out of one ARC file.
pub struct ArcReader {
    path: PathBuf,
    file: File,
    file_len: u64,
    input: Input,
    seg: Option<SegmentState>,
    raw_segment: Option<Arc<Segment>>,
    version: Option<ArcVersion>,
    version_label: Option<String>,
    seen_header: bool,
    file_anomalies: Vec<Anomaly>,
    /// Listed file anomalies per kind, and those counted but not listed.
    listed: BTreeMap<AnomalyKind, usize>,
    unlisted: BTreeMap<AnomalyKind, (Severity, u64)>,
    account: ByteAccount,
    gzip: bool,
    done: bool,
    /// Why the ARC could not be rebuilt from what its records keep.
    rebuild_problems: Problems,
    /// Record-less gzip members since the last record.
    orphans: Orphans,
    /// The stream's digest (gzip input: a plain file is its own stream).
    stream: Option<StreamDigest>,
    /// The gzip members' headers and deflate settings.
    member_settings: MemberSettings,
}

/// The segment being framed is gone: a broken invariant of the reader, reported as an error at
/// `offset` rather than a panic (input never reaches it, but a bug must not abort a harvest).
fn lost_segment(path: &Path, offset: u64) -> ArcError {
    let source = io::Error::other("internal: no segment is being read");
    ArcError { path: path.to_path_buf(), offset, source }
}

impl ArcReader {
    /// Opens an ARC file (`.arc`, per-record or whole-file gzip `.arc.gz`).
    pub fn open(path: impl AsRef<Path>) -> Result<ArcReader, ArcError> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|source| ArcError {
            path: path.clone(),
            offset: 0,
            source,
        })?;
        ArcReader::from_file(file, path)
    }

    /// Reads ARC records from any byte stream (a pipe, a network body); `name` is used in
    /// messages.
    ///
    /// Re-finding a record whose declared length is wrong means looking ahead and coming back,
    /// so the stream is first copied to an anonymous temporary file (disk, not memory, grows
    /// with the input). Files should be given to [`open`](Self::open), which reads them in
    /// place.
    pub fn from_reader(
        mut reader: impl Read,
        name: impl Into<PathBuf>,
    ) -> Result<ArcReader, ArcError> {
        let path = name.into();
        let err = |source| ArcError { path: path.clone(), offset: 0, source };
        let mut file = tempfile::tempfile().map_err(err)?;
        io::copy(&mut reader, &mut file).map_err(err)?;
        file.seek(SeekFrom::Start(0)).map_err(err)?;
        ArcReader::from_file(file, path)
    }

    fn from_file(file: File, path: PathBuf) -> Result<ArcReader, ArcError> {
        let err = |source| ArcError { path: path.clone(), offset: 0, source };
        let file_len = file.metadata().map_err(err)?.len();
        let mut magic = [0u8; 3];
        let n = file.read_at_full(0, &mut magic).map_err(err)?;
        let gzip = n >= 2 && magic[..2] == GZIP_MAGIC[..2];
        let (input, seg) = if gzip {
            let raw = BufReader::with_capacity(256 * 1024, file.try_clone().map_err(err)?);
            let raw = RawInput::Attached(Counting::new(raw));
            // `GzDecoder::new` reads a header at once: give it the file only through `reset`,
            // which leaves the header to the first read of each member.
            let mut dec = Box::new(flate2::bufread::GzDecoder::new(RawInput::Detached));
            dec.reset(raw);
            (Input::Gzip { dec, buf: vec![0u8; SPOOL_BUF] }, None)
        } else {
            let data = Segment::File { file: file.try_clone().map_err(err)?, len: file_len };
            (Input::Plain, Some(SegmentState::new(data, None)))
        };
        Ok(ArcReader {
            path,
            file,
            file_len,
            input,
            seg,
            raw_segment: None,
            version: None,
            version_label: None,
            seen_header: false,
            file_anomalies: Vec::new(),
            listed: BTreeMap::new(),
            unlisted: BTreeMap::new(),
            account: ByteAccount { input: file_len, ..ByteAccount::default() },
            gzip,
            done: false,
            rebuild_problems: Problems::default(),
            orphans: Orphans::default(),
            stream: gzip.then(StreamDigest::default),
            member_settings: MemberSettings::default(),
        })
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// The file being read (for an fstat or positioned reads: its place is the reader's).
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// Size of the file in bytes.
    pub(crate) fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The ARC version declared by the filedesc record, once it has been read.
    pub fn version(&self) -> Option<ArcVersion> {
        self.version
    }

    /// The version as the filedesc version block states it ("1.0", "1.1", "2"), once read.
    pub(crate) fn version_label(&self) -> Option<&str> {
        self.version_label.as_deref()
    }

    /// How far into the (compressed) file the reader has got, for progress reporting.
    pub(crate) fn bytes_consumed(&self) -> u64 {
        match &self.input {
            Input::Plain => self.seg.as_ref().map_or(self.file_len, |s| s.pos),
            Input::Gzip { dec, .. } => dec.get_ref().pos(),
        }
    }

    /// Anomalies that concern the file as a whole (no filedesc, gzip damage, ...), collected
    /// so far: at most [`MAX_LISTED_FILE_ANOMALIES`] of each kind. Complete once
    /// [`next_record`](Self::next_record) has returned `None`.
    pub fn file_anomalies(&self) -> &[Anomaly] {
        &self.file_anomalies
    }

    /// File anomalies counted but not listed in [`file_anomalies`](Self::file_anomalies),
    /// by kind, with their severity.
    pub fn unlisted_file_anomalies(&self) -> &BTreeMap<AnomalyKind, (Severity, u64)> {
        &self.unlisted
    }

    /// Where the bytes read so far went. Complete (and [balanced](ByteAccount::balanced))
    /// once [`next_record`](Self::next_record) has returned `None`.
    pub fn byte_account(&self) -> &ByteAccount {
        &self.account
    }

    fn file_anomaly(&mut self, a: Anomaly) {
        let listed = self.listed.entry(a.kind).or_default();
        if *listed < MAX_LISTED_FILE_ANOMALIES {
            *listed += 1;
            self.file_anomalies.push(a);
        } else {
            self.unlisted.entry(a.kind).or_insert((a.severity, 0)).1 += 1;
        }
    }

    /// The body of `rec` (the last record returned) as a reader.
    pub fn body_reader(&self, rec: &ArcRecord) -> SegmentReader<'_> {
        self.segment_of(rec).reader(rec.body_start, rec.body_end)
    }

    /// The body of `rec` as a slice, when it is held in memory.
    pub fn body_slice(&self, rec: &ArcRecord) -> Option<&[u8]> {
        self.segment_of(rec).slice(rec.body_start, rec.body_end)
    }

    /// The body of `rec` as a handle that outlives the reader's position: it keeps the bytes
    /// (file, memory or spill file) alive, so another thread can read them later.
    pub(crate) fn shared_body(&self, rec: &ArcRecord) -> SharedRange {
        SharedRange { segment: self.segment_arc(rec), start: rec.body_start, end: rec.body_end }
    }

    /// Like [`shared_body`](Self::shared_body), header line included.
    pub(crate) fn shared_record(&self, rec: &ArcRecord) -> SharedRange {
        let start = rec.body_start - rec.header_len;
        SharedRange { segment: self.segment_arc(rec), start, end: rec.body_end }
    }

    fn segment_arc(&self, rec: &ArcRecord) -> Arc<Segment> {
        if rec.raw
            && let Some(seg) = &self.raw_segment
        {
            return seg.clone();
        }
        match &self.seg {
            Some(s) => s.data.clone(),
            None => Arc::new(Segment::Mem(Vec::new())),
        }
    }

    fn segment_of(&self, rec: &ArcRecord) -> &Segment {
        if rec.raw
            && let Some(seg) = &self.raw_segment
        {
            return seg;
        }
        match &self.seg {
            Some(s) => &s.data,
            None => &EMPTY_SEGMENT,
        }
    }

    /// The next record, or `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<ArcRecord>, ArcError> {
        self.raw_segment = None;
        loop {
            if self.done {
                return Ok(None);
            }
            if self.seg.is_some() {
                if let Some(rec) = self.next_in_segment()? {
                    return Ok(Some(self.with_orphans(rec)));
                }
                self.segment_ended()?;
                let seg = self.seg.as_mut().map(|s| s.pending_raw.take());
                if let Some(Some((start, end, why))) = seg {
                    let rec = self.raw_remainder(start, end, why)?;
                    return Ok(Some(self.with_orphans(rec)));
                }
            }
            match &self.input {
                Input::Plain => {
                    self.done = true;
                    self.finish_file();
                    return Ok(None);
                }
                Input::Gzip { .. } => {
                    if let Some(rec) = self.load_next_member()? {
                        return Ok(Some(self.with_orphans(rec)));
                    }
                }
            }
        }
    }

    fn finish_file(&mut self) {
        if !self.seen_header {
            self.file_anomaly(Anomaly {
                location: Location { member: None, offset: 0 },
                kind: AnomalyKind::NoFiledesc,
                severity: Severity::Error,
                detail: "no ARC record header found anywhere in the file".into(),
            });
        }
    }

    /// Decompresses the next gzip member into the current segment. Returns a raw remainder
    /// record when the compressed file holds bytes that are not a gzip member.
    fn load_next_member(&mut self) -> Result<Option<ArcRecord>, ArcError> {
        let Input::Gzip { dec, .. } = &mut self.input else { return Ok(None) };
        let start = dec.get_ref().pos();
        self.seg = None;
        if start >= self.file_len {
            self.done = true;
            self.finish_file();
            return Ok(None);
        }
        let mut magic = [0u8; 3];
        let n = self.file.read_at_full(start, &mut magic).map_err(|source| ArcError {
            path: self.path.clone(),
            offset: start,
            source,
        })?;
        if n < 3 || magic != GZIP_MAGIC {
            let next = self.find_gzip_magic(start + 1)?;
            self.seek_raw(next)?;
            let why = format!("{} bytes at offset {start} are not gzip data", next - start);
            return self.raw_remainder(start, next, why).map(Some);
        }
        let Input::Gzip { dec, buf } = &mut self.input else { return Ok(None) };
        // A fresh decoder state over the same allocations (flate2 resets zlib in place).
        let raw = dec.reset(RawInput::Detached);
        dec.reset(raw);
        let (data, error) = spool_with(&mut **dec, buf);
        let end = dec.get_ref().pos();
        self.account.decompressed_bytes += data.len();
        let mut state = SegmentState::new(data, Some(start));
        state.member_end = end;
        if let Some(e) = error {
            state.damaged = true;
            if e.kind() != io::ErrorKind::InvalidInput
                && e.kind() != io::ErrorKind::InvalidData
                && e.kind() != io::ErrorKind::UnexpectedEof
            {
                return Err(ArcError { path: self.path.clone(), offset: start, source: e });
            }
            let resume = self.find_gzip_magic(start + 1)?;
            self.seek_raw(resume)?;
            let why = format!(
                "gzip member at offset {start} is damaged ({e}); {} bytes decompressed before the \
                 damage are read as records, and the {} raw bytes of the member are kept as found",
                state.data.len(),
                resume - start
            );
            self.file_anomaly(Anomaly {
                location: Location { member: Some(start), offset: 0 },
                kind: AnomalyKind::GzipError,
                severity: Severity::Error,
                detail: why.clone(),
            });
            state.pending_raw = Some((start, resume, why));
        } else if state.data.is_empty() {
            // Record-less: kept as found for the rebuild, before the next record.
            self.orphan_member(start, end)?;
            self.account.members += 1;
            self.account.member_bytes += end - start;
            self.account.empty_members += 1;
            self.account.empty_member_bytes += end - start;
            self.file_anomaly(Anomaly {
                location: Location { member: Some(start), offset: 0 },
                kind: AnomalyKind::EmptyGzipMember,
                severity: Severity::Info,
                detail: format!("gzip member of {} bytes decompresses to nothing", end - start),
            });
        } else {
            self.account.members += 1;
            self.account.member_bytes += end - start;
            if let Some(d) = self.stream.as_mut() {
                d.segment(&state.data, 0, state.data.len());
                let settings = self.member_settings.member(
                    &self.file,
                    (start, end),
                    &state.data,
                    &mut self.rebuild_problems,
                );
                state.settings = settings.map_err(|e| self.io_err(start, e))?;
            }
        }
        self.seg = Some(state);
        Ok(None)
    }

    fn seek_raw(&mut self, to: u64) -> Result<(), ArcError> {
        if let Input::Gzip { dec, .. } = &mut self.input
            && let RawInput::Attached(raw) = dec.get_mut()
        {
            raw.inner.seek(SeekFrom::Start(to)).map_err(|source| ArcError {
                path: self.path.clone(),
                offset: to,
                source,
            })?;
            raw.pos = to;
        }
        Ok(())
    }

    /// First offset at or after `from` where a gzip member header starts (or the file end).
    fn find_gzip_magic(&self, from: u64) -> Result<u64, ArcError> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut pos = from;
        while pos < self.file_len {
            let n = self.file.read_at_full(pos, &mut buf).map_err(|source| ArcError {
                path: self.path.clone(),
                offset: pos,
                source,
            })?;
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            if let Some(i) = chunk.windows(3).position(|w| w == GZIP_MAGIC) {
                return Ok(pos + i as u64);
            }
            if n < 3 {
                break;
            }
            pos += (n - 2) as u64;
        }
        Ok(self.file_len)
    }

    fn raw_remainder(&mut self, start: u64, end: u64, why: String) -> Result<ArcRecord, ArcError> {
        let file = self.file.try_clone().map_err(|source| ArcError {
            path: self.path.clone(),
            offset: start,
            source,
        })?;
        let seg = Arc::new(Segment::File { file, len: end });
        if let Some(d) = self.stream.as_mut() {
            d.segment(&seg, start, end);
        }
        self.raw_segment = Some(seg);
        self.account.raw_bytes += end - start;
        let location = Location { member: None, offset: start };
        Ok(ArcRecord {
            kind: RecordKind::Remainder,
            header: None,
            location,
            header_len: 0,
            body_start: start,
            body_end: end,
            anomalies: vec![Anomaly {
                location,
                kind: AnomalyKind::Garbage,
                severity: Severity::Error,
                detail: why,
            }],
            truncated: false,
            rebuild: RebuildField { raw: true, ..RebuildField::default() },
            raw: true,
        })
    }

    fn io_err(&self, pos: u64, source: io::Error) -> ArcError {
        let (member, offset) = match &self.seg {
            Some(SegmentState { member: Some(m), .. }) => (Some(*m), pos),
            _ => (None, pos),
        };
        ArcError { path: self.path.clone(), offset: member.unwrap_or(offset), source }
    }

    /// Frames the next record of the current segment.
    fn next_in_segment(&mut self) -> Result<Option<ArcRecord>, ArcError> {
        let Some(seg) = self.seg.as_ref() else { return Ok(None) };
        let data = Arc::clone(&seg.data);
        let member = seg.member;
        let earlier_records = seg.records;
        let loc = |offset| Location { member, offset };
        let mut anomalies = Vec::new();
        let Some(pos) = self.separators(&mut anomalies)? else { return Ok(None) };

        let line = read_line_at(&data, pos, MAX_HEADER_LINE).map_err(|e| self.io_err(pos, e))?;
        let parsed = match line.candidate() {
            Some(text) => parse_header_line(text, self.version, Mode::Lenient),
            None => Err(()),
        };
        let Ok((header, mut header_notes)) = parsed else {
            return self.remainder(&data, loc(pos), &line, anomalies).map(Some);
        };
        for (kind, severity, detail) in header_notes.drain(..) {
            anomalies.push(Anomaly { location: loc(pos), kind, severity, detail });
        }

        let is_filedesc = header.url.starts_with(b"filedesc://");
        let kind = if is_filedesc { RecordKind::Filedesc } else { RecordKind::Capture };
        self.judge_placement(is_filedesc, loc(pos), earlier_records, &mut anomalies);

        let body_start = pos + line.consumed;
        let (body_end, truncated, padding_end) = self
            .find_body_end(body_start, &header, is_filedesc, &mut anomalies, pos)
            .map_err(|e| self.io_err(pos, e))?;

        if is_filedesc && self.version.is_none() {
            self.version = Some(read_version(&data, body_start));
            self.version_label = read_version_label(&data, body_start);
        }
        // A filedesc's block holds its header line; a capture's does not.
        let eol_len = line.consumed - line.text.len() as u64;
        let header_line = (!is_filedesc).then_some((&line.text[..], eol_len));
        let separator_from = padding_end.unwrap_or(body_end);
        let rebuild = self.frame_record(&data, pos, header_line, body_end, separator_from)?;
        self.advance_past(pos, body_end, padding_end, is_filedesc)?;
        Ok(Some(ArcRecord {
            kind,
            header: Some(header),
            location: loc(pos),
            header_len: line.consumed,
            body_start,
            body_end,
            anomalies,
            truncated,
            rebuild,
            raw: false,
        }))
    }

    /// Describes the record framed at `start` for the rebuild, and gives it the bytes up to
    /// the end of the blank lines after it.
    fn frame_record(
        &mut self,
        data: &Segment,
        start: u64,
        header_line: Option<(&[u8], u64)>,
        block_end: u64,
        separator_from: u64,
    ) -> Result<RebuildField, ArcError> {
        let Some(seg) = self.seg.as_ref() else { return Err(lost_segment(&self.path, start)) };
        let (claimed, member, damaged) = (seg.claimed, seg.member, seg.damaged);
        let settings = if seg.framed == 0 { seg.settings.clone() } else { (None, None) };
        let at = |off: u64| match member {
            Some(m) => format!("offset {off} of the gzip member at {m}"),
            None => format!("offset {off}"),
        };
        let framed = Framed { claimed, start, header_line, block_end, separator_from };
        let framing = arc_framing::frame(data, framed, &mut self.rebuild_problems, &at);
        let (mut field, tail_end) = framing.map_err(|e| self.io_err(start, e))?;
        field.damaged = damaged;
        (field.gz, field.z) = settings;
        let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, start)) };
        seg.claimed = tail_end;
        seg.framed += 1;
        Ok(field)
    }

    /// The current segment has no more records: bytes no record was given are kept as a
    /// record-less member, or (never expected) reported as what stops a rebuild.
    fn segment_ended(&mut self) -> Result<(), ArcError> {
        let Some(seg) = self.seg.as_mut() else { return Ok(()) };
        let len = seg.data.len();
        if seg.damaged || seg.claimed >= len {
            return Ok(());
        }
        let (member, framed, claimed, member_end) =
            (seg.member, seg.framed, seg.claimed, seg.member_end);
        // Given now, so a second call finds nothing left.
        seg.claimed = len;
        match member {
            Some(m) if framed == 0 => self.orphan_member(m, member_end),
            _ => {
                let inside = member.map(|m| format!(" of the gzip member at {m}"));
                self.rebuild_problems.add(format!(
                    "bytes {claimed}..{len}{} belong to no record",
                    inside.unwrap_or_default()
                ));
                Ok(())
            }
        }
    }

    /// Keeps the bytes of the record-less gzip member `start..end`, for the next record.
    fn orphan_member(&mut self, start: u64, end: u64) -> Result<(), ArcError> {
        let len = end.saturating_sub(start);
        if len > crate::formats::arc_rebuild::MAX_ORPHAN_MEMBER as u64 {
            self.rebuild_problems
                .add(format!("record-less gzip member at offset {start} ({len} bytes) not kept"));
            return Ok(());
        }
        let mut bytes = vec![0u8; len as usize];
        let n = self.file.read_at_full(start, &mut bytes).map_err(|source| ArcError {
            path: self.path.clone(),
            offset: start,
            source,
        })?;
        bytes.truncate(n);
        self.orphans.push(start, bytes, &mut self.rebuild_problems);
        Ok(())
    }

    /// Whether to digest the stream of a gzip file (on by default: the rebuild record states
    /// it).
    pub(crate) fn set_stream_digest(&mut self, on: bool) {
        if !on {
            self.stream = None;
        }
    }

    /// Gives `rec` the record-less members met before it.
    fn with_orphans(&mut self, mut rec: ArcRecord) -> ArcRecord {
        rec.rebuild.pre = self.orphans.take();
        rec
    }

    /// Once the file is read: the record-less members after the last record, why the ARC
    /// cannot be rebuilt (empty: it can), and for gzip input the stream's length and SHA-512.
    pub(crate) fn rebuild_end(&mut self) -> RebuildEnd {
        let stream = self.stream.take().and_then(|d| match d.finish() {
            Ok(x) => Some(x),
            Err(e) => {
                self.rebuild_problems.add(format!("the stream's digest failed: {e}"));
                None
            }
        });
        RebuildEnd {
            post: self.orphans.take(),
            reasons: self.rebuild_problems.reasons(),
            stream,
            defaults: self.member_settings.defaults(),
            unrecovered: self.member_settings.unrecovered(),
        }
    }

    /// Reads the blank lines before the next record and judges their count against the one
    /// expected (one after a record, none after a filedesc or padding). At the segment's end
    /// reports how it ended there and returns `None`; else where the next record starts.
    fn separators(&mut self, anomalies: &mut Vec<Anomaly>) -> Result<Option<u64>, ArcError> {
        let Some(seg) = self.seg.as_ref() else { return Ok(None) };
        let data = &seg.data;
        let len = data.len();
        let member = seg.member;
        let loc = |offset| Location { member, offset };
        let mut pos = seg.pos;
        let blank_start = pos;
        let mut newlines = 0u64;
        while pos < len {
            match data.byte_at(pos).map_err(|e| self.io_err(pos, e))? {
                Some(b'\n') => {
                    newlines += 1;
                    pos += 1;
                }
                Some(b'\r') if data.byte_at(pos + 1).ok().flatten() == Some(b'\n') => pos += 1,
                _ => break,
            }
        }
        let expected = seg.expected_separators;
        self.account.separator_bytes += pos - blank_start;
        if pos >= len {
            let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, pos)) };
            seg.pos = len;
            if newlines > expected {
                self.file_anomaly(Anomaly {
                    location: loc(blank_start),
                    kind: AnomalyKind::ExtraBlankLines,
                    severity: Severity::Info,
                    detail: format!("{newlines} blank lines at the end where {expected} expected"),
                });
            } else if newlines < expected && seg.records > 0 {
                self.file_anomaly(Anomaly {
                    location: loc(blank_start),
                    kind: AnomalyKind::MissingSeparator,
                    severity: Severity::Info,
                    detail: "no blank line after the last record".into(),
                });
            }
            return Ok(None);
        }
        if newlines > expected {
            anomalies.push(Anomaly {
                location: loc(blank_start),
                kind: AnomalyKind::ExtraBlankLines,
                severity: Severity::Info,
                detail: format!(
                    "{newlines} blank lines before the record where {expected} expected"
                ),
            });
        } else if newlines < expected {
            anomalies.push(Anomaly {
                location: loc(pos),
                kind: AnomalyKind::MissingSeparator,
                severity: Severity::Info,
                detail: "no blank line between the previous record and this one".into(),
            });
        }
        Ok(Some(pos))
    }

    /// What starts at `at` is not a record header (`line` is its first line): everything up
    /// to the next header, or the segment's end, is kept as a remainder record.
    fn remainder(
        &mut self,
        data: &Segment,
        at: Location,
        line: &Line,
        mut anomalies: Vec<Anomaly>,
    ) -> Result<ArcRecord, ArcError> {
        let pos = at.offset;
        let next = find_header(data, pos + 1, self.version).map_err(|e| self.io_err(pos, e))?;
        let end = next.unwrap_or(data.len());
        let why = if line.complete {
            String::new()
        } else {
            format!("; no line end within {MAX_HEADER_LINE} bytes, so no header line")
        };
        anomalies.push(Anomaly {
            location: at,
            kind: AnomalyKind::Garbage,
            severity: Severity::Error,
            detail: format!(
                "{} bytes that are not an ARC record (starting {:?}) kept as a remainder{why}",
                end - pos,
                preview(&line.text)
            ),
        });
        self.account.record_bytes += end - pos;
        let rebuild = self.frame_record(data, pos, None, end, end)?;
        let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, pos)) };
        seg.pos = end;
        seg.expected_separators = 0;
        Ok(ArcRecord {
            kind: RecordKind::Remainder,
            header: None,
            location: at,
            header_len: 0,
            body_start: pos,
            body_end: end,
            anomalies,
            truncated: false,
            rebuild,
            raw: false,
        })
    }

    /// Judges where a record header at `at` stands in the file: a filedesc comes first and
    /// only there, and a gzip member holds one record (`earlier_records` came before it in
    /// this one).
    fn judge_placement(
        &mut self,
        is_filedesc: bool,
        at: Location,
        earlier_records: u64,
        anomalies: &mut Vec<Anomaly>,
    ) {
        if !self.seen_header && !is_filedesc {
            self.file_anomaly(Anomaly {
                location: at,
                kind: AnomalyKind::NoFiledesc,
                severity: Severity::Warning,
                detail: "the file does not start with a filedesc:// version block".into(),
            });
        } else if self.seen_header && is_filedesc {
            anomalies.push(Anomaly {
                location: at,
                kind: AnomalyKind::FiledescNotFirst,
                severity: Severity::Warning,
                detail: "a filedesc:// record in the middle of the file".into(),
            });
        }
        if earlier_records > 0 && at.member.is_some() {
            anomalies.push(Anomaly {
                location: at,
                kind: AnomalyKind::MultipleRecordsPerMember,
                severity: Severity::Info,
                detail: "more than one record in this gzip member".into(),
            });
        }
        self.seen_header = true;
    }

    /// Moves past a record framed from `pos` to `body_end`: the bytes are accounted for, and
    /// the next record is looked for after them, or after the whitespace padding that ends
    /// at `padding_end` (which stands for the separator).
    fn advance_past(
        &mut self,
        pos: u64,
        body_end: u64,
        padding_end: Option<u64>,
        is_filedesc: bool,
    ) -> Result<(), ArcError> {
        self.account.record_bytes += body_end - pos;
        let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, pos)) };
        seg.pos = body_end;
        seg.expected_separators = if is_filedesc { 0 } else { 1 };
        seg.records += 1;
        if let Some(p) = padding_end {
            // The padding stands for the separator: skipped here, so the next record's
            // blank-line count does not see it.
            seg.pos = p;
            seg.expected_separators = 0;
            self.account.separator_bytes += p - body_end;
            self.account.padding_bytes += p - body_end;
        }
        Ok(())
    }

    /// Decides where a record's body ends: at its declared length when what follows is a
    /// record boundary or whitespace padding up to one, else at the next record header (the
    /// length was wrong), else at the end of the data (truncated). Returns the end, whether the
    /// record is truncated, and where whitespace padding after the end stops.
    fn find_body_end(
        &self,
        body_start: u64,
        header: &ArcHeader,
        is_filedesc: bool,
        anomalies: &mut Vec<Anomaly>,
        record_pos: u64,
    ) -> io::Result<(u64, bool, Option<u64>)> {
        let (end, truncated) =
            self.find_body_end_inner(body_start, header, is_filedesc, anomalies, record_pos)?;
        Ok(match end {
            BodyEnd::At(e) => (e, truncated, None),
            BodyEnd::Padded(e, p) => (e, truncated, Some(p)),
        })
    }

    fn find_body_end_inner(
        &self,
        body_start: u64,
        header: &ArcHeader,
        is_filedesc: bool,
        anomalies: &mut Vec<Anomaly>,
        record_pos: u64,
    ) -> io::Result<(BodyEnd, bool)> {
        let Some(seg) = self.seg.as_ref() else {
            return Err(lost_segment(&self.path, record_pos).source);
        };
        let data = &seg.data;
        let len = data.len();
        let loc = Location { member: seg.member, offset: record_pos };
        // A body that runs to the next header (or the data's end) gives it one line end, the
        // separator: CR LF is one line end where the block is text (the filedesc) or the line
        // ends were converted (the header line ends with CR LF), never split to leave a lone
        // CR. After a binary body in an LF file a CR may be the body's last byte, and stays.
        let crlf = is_filedesc || ends_with_crlf(data, body_start)?;
        let before_separator = |stop: u64| separator_start(data, body_start, stop, crlf);
        // The end when no header follows: the data's end, less one separator line end.
        let end_of_data = || before_separator(len);
        let declared = header.declared_length;
        if let Some(l) = declared {
            let e = body_start.saturating_add(l);
            if e <= len && self.is_boundary(data, e)? {
                return Ok((BodyEnd::At(e), false));
            }
        }
        let next = find_header(data, body_start, self.version)?;
        let Some(l) = declared else {
            let end = before_separator(next.unwrap_or(len))?;
            anomalies.push(Anomaly {
                location: loc,
                kind: AnomalyKind::BadLength,
                severity: Severity::Warning,
                detail: format!(
                    "length {:?} does not parse; the record ends where the next one starts ({} bytes)",
                    header_length_field(&header.raw_line),
                    end - body_start
                ),
            });
            return Ok((BodyEnd::At(end), false));
        };
        let e = body_start.saturating_add(l);
        if e < len && !matches!(next, Some(n) if n <= e) {
            let stop = next.unwrap_or(len);
            if let Some(pad) = whitespace_padding(data, e, stop)? {
                anomalies.push(Anomaly {
                    location: Location { member: seg.member, offset: e },
                    kind: AnomalyKind::WhitespacePadding,
                    severity: Severity::Info,
                    detail: format!(
                        "{} bytes of whitespace padding ({}) after the declared length {l}, at \
                         offset {e}{}: kept as a separator, not in the payload",
                        stop - e,
                        pad,
                        if seg.member.is_some() { " of the gzip member" } else { "" }
                    ),
                });
                return Ok((BodyEnd::Padded(e, stop), false));
            }
        }
        let mismatch = |actual: u64| Anomaly {
            location: loc,
            kind: AnomalyKind::LengthMismatch,
            severity: Severity::Warning,
            detail: format!("declared length {l}, but the record ends after {actual} bytes"),
        };
        match next {
            Some(n) if n <= e => {
                let end = before_separator(n)?;
                anomalies.push(mismatch(end - body_start));
                Ok((BodyEnd::At(end), false))
            }
            _ if e > len && http_body_complete(data, body_start, end_of_data()?)? => {
                // Quirk: the ARC length overruns the file, but the HTTP Content-Length says
                // the body is whole: the length was wrong (line ends converted after writing,
                // a URL edited by hand), not the record cut short.
                let end = end_of_data()?;
                anomalies.push(mismatch(end - body_start));
                Ok((BodyEnd::At(end), false))
            }
            _ if e > len => {
                anomalies.push(Anomaly {
                    location: loc,
                    kind: AnomalyKind::Truncated,
                    severity: Severity::Error,
                    detail: format!(
                        "declared length {l}, but only {} bytes remain{}",
                        len - body_start,
                        if seg.member.is_some() { " in the gzip member" } else { " in the file" }
                    ),
                });
                Ok((BodyEnd::At(len), true))
            }
            _ if data.byte_at(e)? == Some(b'\n') && !is_filedesc => {
                // The record is complete as declared; what follows its separator is garbage
                // and becomes a remainder record of its own.
                Ok((BodyEnd::At(e), false))
            }
            Some(n) => {
                let end = before_separator(n)?;
                anomalies.push(mismatch(end - body_start));
                Ok((BodyEnd::At(end), false))
            }
            None => {
                let end = end_of_data()?;
                anomalies.push(mismatch(end - body_start));
                Ok((BodyEnd::At(end), false))
            }
        }
    }

    /// True when position `e` is a plausible record end: the data ends there, or blank lines
    /// and then a record header (or the end) follow.
    fn is_boundary(&self, data: &Segment, e: u64) -> io::Result<bool> {
        let len = data.len();
        let mut pos = e;
        let mut lines = 0;
        while pos < len && lines < 16 {
            match data.byte_at(pos)? {
                Some(b'\n') => {
                    pos += 1;
                    lines += 1;
                }
                Some(b'\r') if data.byte_at(pos + 1)? == Some(b'\n') => pos += 1,
                _ => break,
            }
        }
        if pos >= len {
            return Ok(true);
        }
        let line = read_line_at(data, pos, MAX_HEADER_LINE)?;
        Ok(line
            .candidate()
            .is_some_and(|t| parse_header_line(t, self.version, Mode::Boundary).is_ok()))
    }
}

enum BodyEnd {
    At(u64),
    /// The body ends at the first value; whitespace padding runs to the second.
    Padded(u64, u64),
}

/// True when the line ending at `pos` (the bytes just before it) ends with CR LF.
fn ends_with_crlf(data: &Segment, pos: u64) -> io::Result<bool> {
    Ok(pos >= 2 && data.byte_at(pos - 2)? == Some(b'\r') && data.byte_at(pos - 1)? == Some(b'\n'))
}

/// Where the separator before `stop` starts, for a body from `body_start`: one line end (LF,
/// or CR LF when `crlf`) taken off, never reaching into the header line.
fn separator_start(data: &Segment, body_start: u64, stop: u64, crlf: bool) -> io::Result<u64> {
    if stop <= body_start || data.byte_at(stop - 1)? != Some(b'\n') {
        return Ok(stop.max(body_start));
    }
    if crlf && stop - 1 > body_start && data.byte_at(stop - 2)? == Some(b'\r') {
        return Ok(stop - 2);
    }
    Ok(stop - 1)
}

/// When `start..stop` holds only spaces, tabs, CR and LF, and is not just blank lines (which
/// the separator logic handles), a description of it (`"3 spaces, 1 CR, 1 LF"`).
fn whitespace_padding(data: &Segment, start: u64, stop: u64) -> io::Result<Option<String>> {
    let mut counts = [0u64; 4]; // spaces, tabs, CR, LF
    let mut lone_cr_or_blank = false;
    let mut prev_cr = false;
    let mut chunk = vec![0u8; 64 * 1024];
    let mut at = start;
    while at < stop {
        let want = ((stop - at) as usize).min(chunk.len());
        let n = data.read_full_at(at, &mut chunk[..want])?;
        if n == 0 {
            return Ok(None);
        }
        for &b in &chunk[..n] {
            match b {
                b' ' => counts[0] += 1,
                b'\t' => counts[1] += 1,
                b'\r' => counts[2] += 1,
                b'\n' => counts[3] += 1,
                _ => return Ok(None),
            }
            if (prev_cr && b != b'\n') || b == b' ' || b == b'\t' {
                lone_cr_or_blank = true;
            }
            prev_cr = b == b'\r';
        }
        at += n as u64;
    }
    if prev_cr {
        lone_cr_or_blank = true;
    }
    if !lone_cr_or_blank {
        return Ok(None);
    }
    let names = ["spaces", "tabs", "CR", "LF"];
    let parts: Vec<String> = counts
        .iter()
        .zip(names)
        .filter(|(c, _)| **c > 0)
        .map(|(c, name)| format!("{c} {name}"))
        .collect();
    Ok(Some(parts.join(", ")))
}

/// True when `start..end` holds an HTTP response whose body has exactly its Content-Length.
fn http_body_complete(data: &Segment, start: u64, end: u64) -> io::Result<bool> {
    let mut head = vec![0u8; (end - start).min(64 * 1024) as usize];
    let n = data.read_full_at(start, &mut head)?;
    head.truncate(n);
    Ok(match super::http::response_head(&head) {
        super::http::HttpHead::Complete(h) => {
            super::http::content_length(&head[..h]).is_some_and(|cl| h as u64 + cl == end - start)
        }
        _ => false,
    })
}

static EMPTY_SEGMENT: Segment = Segment::Mem(Vec::new());

/// A byte range of a segment that keeps the segment alive; `Send`, so a record's body can be
/// handed to another thread.
#[derive(Debug, Clone)]
pub struct SharedRange {
    segment: Arc<Segment>,
    start: u64,
    end: u64,
}

impl PartialEq for SharedRange {
    /// The same bytes of the same segment.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.segment, &other.segment)
            && (self.start, self.end) == (other.start, other.end)
    }
}

impl Eq for SharedRange {}

impl SharedRange {
    /// The range without its first `n` bytes (all of them when it has fewer).
    pub(crate) fn skip(&self, n: u64) -> SharedRange {
        let start = self.start.saturating_add(n).min(self.end);
        SharedRange { segment: Arc::clone(&self.segment), start, end: self.end }
    }

    /// Number of bytes.
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }

    /// A reader over the range.
    pub(crate) fn reader(&self) -> SegmentReader<'_> {
        self.segment.reader(self.start, self.end)
    }

    /// The bytes, when the segment is in memory.
    pub(crate) fn slice(&self) -> Option<&[u8]> {
        self.segment.slice(self.start, self.end)
    }

    /// Reads up to `max` bytes from the start of the range.
    pub(crate) fn prefix(&self, max: usize) -> io::Result<Vec<u8>> {
        let want = (self.len() as usize).min(max);
        let mut buf = vec![0u8; want];
        let n = self.segment.read_full_at(self.start, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// Copies the whole range into memory.
    pub(crate) fn to_vec(&self) -> io::Result<Vec<u8>> {
        if let Some(s) = self.slice() {
            return Ok(s.to_vec());
        }
        let mut v = Vec::with_capacity(self.len() as usize);
        self.reader().read_to_end(&mut v)?;
        Ok(v)
    }
}

impl SegmentState {
    fn new(data: Segment, member: Option<u64>) -> Self {
        SegmentState {
            data: Arc::new(data),
            pos: 0,
            member,
            expected_separators: 0,
            records: 0,
            pending_raw: None,
            claimed: 0,
            framed: 0,
            damaged: false,
            member_end: 0,
            settings: (None, None),
        }
    }
}

trait ReadAtFull {
    fn read_at_full(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize>;
}

impl ReadAtFull for File {
    fn read_at_full(&self, mut pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let mut filled = 0;
        while filled < buf.len() {
            match self.read_at(&mut buf[filled..], pos) {
                Ok(0) => break,
                Ok(n) => {
                    filled += n;
                    pos += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

/// A line read at a position.
struct Line {
    /// The line without `\n` and without a trailing `\r`.
    text: Vec<u8>,
    /// Bytes consumed including the line end.
    consumed: u64,
    /// False when no line end came within the limit: `text` is only the start of a longer
    /// run of bytes, which cannot be a record header.
    complete: bool,
}

impl Line {
    /// The text, when it can be a header line: it ended within the limit, or it is the last
    /// line of the data.
    fn candidate(&self) -> Option<&[u8]> {
        self.complete.then_some(&self.text[..])
    }
}

fn read_line_at(data: &Segment, pos: u64, max: usize) -> io::Result<Line> {
    let mut text = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut at = pos;
    loop {
        let n = data.read_at(at, &mut chunk)?;
        if n == 0 {
            break;
        }
        if let Some(i) = chunk[..n].iter().position(|&b| b == b'\n') {
            text.extend_from_slice(&chunk[..i]);
            let consumed = at + i as u64 + 1 - pos;
            if text.last() == Some(&b'\r') {
                text.pop();
            }
            return Ok(Line { text, consumed, complete: true });
        }
        text.extend_from_slice(&chunk[..n]);
        at += n as u64;
        if text.len() > max {
            // Bounded: what follows is not read, and the line is no header.
            let consumed = text.len() as u64;
            return Ok(Line { text, consumed, complete: false });
        }
    }
    // The data ends without a line end: a last line, complete as far as it goes.
    let consumed = text.len() as u64;
    Ok(Line { text, consumed, complete: true })
}

/// First position at or after `from` that starts a line (follows `\n`) holding a record header.
fn find_header(data: &Segment, from: u64, version: Option<ArcVersion>) -> io::Result<Option<u64>> {
    let len = data.len();
    if from >= len {
        return Ok(None);
    }
    let mut chunk = vec![0u8; 64 * 1024];
    // Start one byte early so a header right at `from` is seen after its preceding `\n`.
    let mut at = from.saturating_sub(1);
    if from == 0 {
        let line = read_line_at(data, 0, MAX_HEADER_LINE)?;
        if line.candidate().is_some_and(|t| parse_header_line(t, version, Mode::Scan).is_ok()) {
            return Ok(Some(0));
        }
    }
    while at < len {
        let n = data.read_at(at, &mut chunk)?;
        if n == 0 {
            break;
        }
        for (i, &b) in chunk[..n].iter().enumerate() {
            if b != b'\n' {
                continue;
            }
            let cand = at + i as u64 + 1;
            if cand < from || cand >= len {
                continue;
            }
            // Cheap filter before a full parse: a header starts with a URL scheme letter.
            let first = if i + 1 < n { chunk[i + 1] } else { data.byte_at(cand)?.unwrap_or(0) };
            if !first.is_ascii_alphabetic() {
                continue;
            }
            let line = read_line_at(data, cand, MAX_HEADER_LINE)?;
            if line.candidate().is_some_and(|t| parse_header_line(t, version, Mode::Scan).is_ok()) {
                return Ok(Some(cand));
            }
        }
        at += n as u64;
    }
    Ok(None)
}

/// The version the filedesc version block states (`1 0 ...` -> "1.0", `1 1 ...` -> "1.1",
/// `2 0 ...` -> "2"), as the file states it: `None` when its first line is not two numbers.
fn read_version_label(data: &Segment, body_start: u64) -> Option<String> {
    let mut buf = [0u8; 64];
    let n = data.read_full_at(body_start, &mut buf).unwrap_or(0);
    let line = buf[..n].split(|&b| b == b'\n').next()?;
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let (major, minor) = (fields.next()?, fields.next()?);
    let number = |f: &[u8]| {
        let f = f.strip_suffix(b"\r").unwrap_or(f);
        (!f.is_empty() && f.len() <= 4 && f.iter().all(u8::is_ascii_digit))
            .then(|| String::from_utf8_lossy(f).into_owned())
    };
    let (major, minor) = (number(major)?, number(minor)?);
    Some(if major == "2" { major } else { format!("{major}.{minor}") })
}

fn read_version(data: &Segment, body_start: u64) -> ArcVersion {
    let mut buf = [0u8; 16];
    let n = data.read_full_at(body_start, &mut buf).unwrap_or(0);
    if buf[..n].starts_with(b"2 ") { ArcVersion::V2 } else { ArcVersion::V1 }
}

fn preview(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]);
    s.chars().map(|c| if c.is_control() { '.' } else { c }).collect()
}

fn header_length_field(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    s.rsplit(' ').next().unwrap_or("").to_string()
}

type Note = (AnomalyKind, Severity, String);

/// How sure we must be that a line is a record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Where a record must start (after the previous one): any line with a URL and five
    /// fields is taken, oddities reported.
    Lenient,
    /// Where a declared length says the next record starts: the fields must look right, but a
    /// bad length is accepted (it will be reported when that record is read).
    Boundary,
    /// Hunting through unframed bytes: only unmistakable header lines.
    Scan,
}

/// Parses an ARC URL-record (or filedesc) header line.
///
/// Quirk: the ARC spec separates fields by single spaces, but URLs with spaces, MIME types
/// with a `; charset=` part, missing MIME types and runs of spaces all occur in real files
/// (`INPUT_FORMATS.md` §2.6). We split from the right, where the fields are reliable, and take
/// everything left of the IP field as the URL, exactly as found.
///
/// In `strict` mode (used when hunting for the next record inside unframed bytes) only lines
/// that look unmistakably like a header are accepted: a plausible date and IP and a numeric
/// length.
fn parse_header_line(
    line: &[u8],
    version: Option<ArcVersion>,
    mode: Mode,
) -> Result<(ArcHeader, Vec<Note>), ()> {
    let strict = mode == Mode::Scan;
    if line.is_empty() || !starts_with_scheme(line) {
        return Err(());
    }
    let toks = tokens(line);
    let n = toks.len();
    let t = |k: usize| toks[n - k].1;
    let mut notes: Vec<Note> = Vec::new();
    let Some(FieldLayout { ip_k, mime, v2 }) = field_layout(&toks, version, mode, &mut notes)
    else {
        return Err(());
    };
    let ip_start = toks[n - ip_k].0;
    let mut url = line[..ip_start].to_vec();
    while url.last() == Some(&b' ') {
        url.pop();
    }
    if url.is_empty() || !starts_with_scheme(&url) {
        return Err(());
    }
    let length_tok = t(1);
    let declared_length = std::str::from_utf8(length_tok).ok().and_then(|s| s.parse::<u64>().ok());
    if declared_length.is_none() && strict && !is_length(length_tok) {
        return Err(());
    }
    let date_tok = t(ip_k - 1);
    let date_raw = String::from_utf8_lossy(date_tok).into_owned();
    let date = parse_arc_date(&date_raw);
    if date.is_none() {
        if strict && date_tok != b"-" {
            return Err(());
        }
        notes.push((
            AnomalyKind::BadDate,
            Severity::Warning,
            format!("archive-date {date_raw:?} does not parse"),
        ));
    }
    note_header_oddities(line, &url, version, v2.is_some(), &mut notes);
    let header = ArcHeader {
        raw_line: line.to_vec(),
        url,
        ip: String::from_utf8_lossy(t(ip_k)).into_owned(),
        date_raw,
        date,
        mime: String::from_utf8_lossy(&mime).into_owned(),
        declared_length,
        v2,
    };
    Ok((header, notes))
}

/// The MIME type a header line states (lower case, without parameters), the line read as the
/// reader reads a record's header line; `None` when it is no header line or states no type
/// (`-`, a value without `/`). A migrated record keeps its ARC line (`X-Webaip-ARC-Header`):
/// this is how its type is read back.
pub fn header_line_mime(line: &[u8]) -> Option<String> {
    let (h, _) = parse_header_line(line, None, Mode::Lenient).ok()?;
    let mime = h.mime.split(';').next()?.trim().to_ascii_lowercase();
    mime.contains('/').then_some(mime)
}

/// The space-separated tokens of a header line with their start offsets; runs of spaces
/// collapse.
fn tokens(line: &[u8]) -> Vec<(usize, &[u8])> {
    let mut toks: Vec<(usize, &[u8])> = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if line[i] == b' ' {
            i += 1;
            continue;
        }
        let start = i;
        while i < line.len() && line[i] != b' ' {
            i += 1;
        }
        toks.push((start, &line[start..i]));
    }
    toks
}

/// An archive-date token as far as its shape goes: `-` or 8 to 18 digits.
fn looks_like_date(b: &[u8]) -> bool {
    b == b"-" || ((8..=18).contains(&b.len()) && b.iter().all(u8::is_ascii_digit))
}

/// An IP-address token as far as its shape goes: `-`, dotted digits, or IPv6 hex and colons.
fn looks_like_ip(b: &[u8]) -> bool {
    b == b"-"
        || b.iter().all(|c| c.is_ascii_digit() || *c == b'.')
        || (b.contains(&b':')
            && b.iter().all(|c| c.is_ascii_hexdigit() || *c == b':' || *c == b'.'))
}

/// A length token: digits, or a negative number ("-1", written by some tools for "unknown"),
/// which still marks a header line.
fn is_length(b: &[u8]) -> bool {
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// Which fields a header line's tokens are, counted from the right.
struct FieldLayout {
    /// The IP field's index from the right (the URL is everything left of it).
    ip_k: usize,
    mime: Vec<u8>,
    v2: Option<V2Fields>,
}

/// Decides which layout the tokens `toks` follow, tried in turn: v2 (ten fields, unless a v1
/// file's line reads as v1 too), v1 (five), v1 with a MIME type split at `; charset=`, v1
/// without a MIME type, and (not in [`Mode::Scan`]) any five fields read as v1. `None`
/// when none fits.
fn field_layout(
    toks: &[(usize, &[u8])],
    version: Option<ArcVersion>,
    mode: Mode,
    notes: &mut Vec<Note>,
) -> Option<FieldLayout> {
    let n = toks.len();
    let t = |k: usize| toks[n - k].1;
    // A v1 layout with the date `k` from the right: the IP left of it, a URL left of that.
    let v1_at = |k: usize| n >= k + 2 && looks_like_date(t(k)) && looks_like_ip(t(k + 1));
    let try_v2 = n >= 10 && looks_like_date(t(8)) && looks_like_ip(t(9));
    if try_v2
        && (version != Some(ArcVersion::V1) || !(looks_like_date(t(3)) && looks_like_ip(t(4))))
    {
        let s = |k: usize| String::from_utf8_lossy(t(k)).into_owned();
        let v2 = V2Fields {
            result_code: s(6),
            checksum: s(5),
            location: s(4),
            offset: s(3),
            filename: s(2),
        };
        return Some(FieldLayout { ip_k: 9, mime: t(7).to_vec(), v2: Some(v2) });
    }
    if v1_at(3) {
        return Some(FieldLayout { ip_k: 4, mime: t(2).to_vec(), v2: None });
    }
    if v1_at(4) && t(2).len() > 8 && t(2)[..8].eq_ignore_ascii_case(b"charset=") {
        let mut mime = t(3).to_vec();
        mime.push(b' ');
        mime.extend_from_slice(t(2));
        notes.push((
            AnomalyKind::MimeWithSpace,
            Severity::Info,
            "MIME type contains a space; rejoined".into(),
        ));
        return Some(FieldLayout { ip_k: 5, mime, v2: None });
    }
    if v1_at(2) {
        notes.push((
            AnomalyKind::MissingMime,
            Severity::Info,
            "header line has no MIME type field".into(),
        ));
        return Some(FieldLayout { ip_k: 3, mime: Vec::new(), v2: None });
    }
    let fallback_ok = match mode {
        Mode::Lenient => true,
        Mode::Boundary => n >= 5 && looks_like_ip(t(4)) && is_length(t(1)),
        Mode::Scan => false,
    };
    if fallback_ok && n >= 5 {
        notes.push((
            AnomalyKind::FieldCount,
            Severity::Warning,
            "header fields are not in the expected form; read as URL IP date type length".into(),
        ));
        return Some(FieldLayout { ip_k: 4, mime: t(2).to_vec(), v2: None });
    }
    None
}

/// Notes what is odd in a header line that parsed: a v1 record in a v2 file (`is_v2` is
/// the line's own layout), spaces in the URL, a URL that is no valid URI, control characters.
fn note_header_oddities(
    line: &[u8],
    url: &[u8],
    version: Option<ArcVersion>,
    is_v2: bool,
    notes: &mut Vec<Note>,
) {
    if version == Some(ArcVersion::V2) && !is_v2 && !url.starts_with(b"filedesc://") {
        notes.push((
            AnomalyKind::FieldCount,
            Severity::Info,
            "a v1 (5-field) record in a v2 file".into(),
        ));
    }
    if url.contains(&b' ') {
        notes.push((
            AnomalyKind::SpaceInUrl,
            Severity::Info,
            "URL contains spaces; kept as found".into(),
        ));
    }
    if !is_valid_uri(url) {
        notes.push((
            AnomalyKind::InvalidUri,
            Severity::Info,
            format!("URL {:?} is not a valid URI; kept as found", preview(url)),
        ));
    }
    if line.iter().any(|&b| b < 0x20 && b != b'\t' || b == 0x7f) {
        notes.push((
            AnomalyKind::ControlCharacters,
            Severity::Info,
            "header line holds control characters; they are percent-encoded in WARC headers".into(),
        ));
    }
}

fn starts_with_scheme(b: &[u8]) -> bool {
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    for &c in &b[1..b.len().min(32)] {
        if c == b':' {
            return true;
        }
        if !(c.is_ascii_alphanumeric() || c == b'+' || c == b'-' || c == b'.') {
            return false;
        }
    }
    false
}

/// A light RFC 3986 check: a scheme, then only characters a URI may hold, `%` escapes well
/// formed, and at most one `#`.
pub(crate) fn is_valid_uri(url: &[u8]) -> bool {
    if !starts_with_scheme(url) {
        return false;
    }
    let allowed = |c: u8| c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&c);
    let mut i = 0;
    let mut hashes = 0;
    while i < url.len() {
        let c = url[i];
        if !allowed(c) {
            return false;
        }
        if c == b'#' {
            hashes += 1;
        }
        let hex_at = |k: usize| url.get(k).is_some_and(u8::is_ascii_hexdigit);
        if c == b'%' && !(hex_at(i + 1) && hex_at(i + 2)) {
            return false;
        }
        i += 1;
    }
    if hashes > 1 {
        return false;
    }
    // `[` and `]` may only delimit an IPv6 host.
    let s = String::from_utf8_lossy(url);
    if let Some(rest) = s.split_once("://").map(|(_, r)| r) {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let path_etc = &rest[authority.len()..];
        if path_etc.contains(['[', ']']) {
            return false;
        }
        if authority.contains(['[', ']'])
            && !(authority.starts_with('[') && authority.contains(']'))
        {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_header_types() {
        let v1 = "http://www.example.org/old-page 192.0.2.10 20240315103006 text/html 98";
        assert_eq!(header_line_mime(v1.as_bytes()).as_deref(), Some("text/html"));
        // A URL with spaces (and digits) before the date, a v2 line, a type with parameters.
        let spaced = "http://e.org/a 20240315103006 b.html 192.0.2.10 20240315103006 Text/HTML; charset=x 98";
        assert_eq!(header_line_mime(spaced.as_bytes()).as_deref(), Some("text/html"));
        let v2 = "http://e.org/ 1.2.3.4 20240315103006 application/xhtml+xml 200 - - 0 f.arc 9";
        assert_eq!(header_line_mime(v2.as_bytes()).as_deref(), Some("application/xhtml+xml"));
        assert_eq!(header_line_mime("http://e.org/ 1.2.3.4 20240315103006 - 9".as_bytes()), None);
        assert_eq!(header_line_mime("base64:aGVsbG8=".as_bytes()), None);
    }

    fn parse(line: &str) -> ArcHeader {
        parse_header_line(line.as_bytes(), None, Mode::Lenient).expect("parses").0
    }

    #[test]
    fn v1_line() {
        let h = parse("http://www.example.org/ 192.0.2.10 20060503101503 text/html 147");
        assert_eq!(h.url, b"http://www.example.org/");
        assert_eq!(h.ip, "192.0.2.10");
        assert_eq!(h.mime, "text/html");
        assert_eq!(h.declared_length, Some(147));
        assert_eq!(h.date.unwrap().to_rfc3339(), "2006-05-03T10:15:03+00:00");
    }

    #[test]
    fn url_with_spaces_is_split_from_the_right() {
        let h = parse("http://e.com/a b  c 93.184.216.119 20140216050221 text/html 1591");
        assert_eq!(h.url, b"http://e.com/a b  c");
        assert_eq!(h.declared_length, Some(1591));
    }

    #[test]
    fn v2_line() {
        let h =
            parse("http://example.com/p.html 0.0.0.0 20250101000000 text/html 200 - - 0 t.arc 120");
        assert_eq!(h.url, b"http://example.com/p.html");
        assert_eq!(h.v2.as_ref().unwrap().result_code, "200");
        assert_eq!(h.declared_length, Some(120));
    }

    #[test]
    fn mime_with_charset_and_missing_mime() {
        let h = parse("http://e.com/ 1.2.3.4 20140216050221 text/html; charset=utf-8 10");
        assert_eq!(h.mime, "text/html; charset=utf-8");
        let h = parse("http://e.com/ 1.2.3.4 20140216050221 10");
        assert_eq!(h.mime, "");
        assert_eq!(h.declared_length, Some(10));
    }

    #[test]
    fn bad_length_and_date_are_tolerated_but_not_in_strict_mode() {
        let line = b"http://example.com/ 93.184.216.119 201404010000000000 text/html abc";
        let (h, notes) = parse_header_line(line, None, Mode::Lenient).unwrap();
        assert_eq!(h.declared_length, None);
        assert!(notes.is_empty());
        let (h, notes) =
            parse_header_line(b"dns:e.com 1.2.3.4 - text/dns 5", None, Mode::Lenient).unwrap();
        assert_eq!(h.date, None);
        assert!(notes.iter().any(|n| n.0 == AnomalyKind::BadDate));
        assert!(parse_header_line(line, None, Mode::Scan).is_err());
    }

    #[test]
    fn cdx_lines_are_not_headers() {
        let cdx = b"dns:netarkivet.dk 130.225.24.33 20060329081336 text/dns 56 2-2-x.arc 1437 4a52619830a601ca3c9fc1a1ef29deea";
        assert!(parse_header_line(cdx, None, Mode::Scan).is_err());
    }

    #[test]
    fn any_reader_can_be_read() {
        let arc = b"http://e.org/ 1.2.3.4 20200101000000 text/plain 5\nhello\n";
        let mut r = ArcReader::from_reader(&arc[..], "stdin").unwrap();
        let rec = r.next_record().unwrap().unwrap();
        assert_eq!(r.body_slice(&rec), None, "file-backed");
        let mut body = Vec::new();
        r.body_reader(&rec).read_to_end(&mut body).unwrap();
        assert_eq!(body, b"hello");
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn uri_validity() {
        assert!(is_valid_uri(b"http://example.com/a?b=c#d"));
        assert!(is_valid_uri(b"dns:example.com"));
        assert!(!is_valid_uri(b"http://example.com/a b"));
        assert!(!is_valid_uri(b"http://www.insuranceforpets.net]www"));
        assert!(!is_valid_uri(b"http://e.com/%zz"));
        assert!(is_valid_uri(b"http://[::1]/"));
    }
}
