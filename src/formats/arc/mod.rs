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
//! The reader (this module: its state, its records, their bodies) composes what each part
//! decides: `gzip_segments` (a compressed file read one member at a time, each spooled into a
//! segment), `framing` (where a record starts and its body ends), `header_line` (what a header
//! line says), `line` (one bounded line at a position) and `rebuild_account` (the bytes around
//! each framed record, kept so the ARC can be rebuilt).
//!
//! Inside the crate (the module is private, so this is not run as a doctest):
//!
//! ```ignore
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut arc = crate::formats::arc::ArcReader::open("IAH-20080430204825-00000-blackbook.arc.gz")?;
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

use super::arc_rebuild::{OrphanMembers, RebuildField};
use super::counting::Counting;
use super::dates::parse_arc_date;
use super::segment::{SPOOL_BUF, Segment, SegmentReader, spool_with};

mod framing;
mod gzip_segments;
mod header_line;
mod line;
mod rebuild_account;

use framing::BodyEnd;
use gzip_segments::{GZIP_MAGIC, InputDecoding, RawInput, ReadAtFull, SegmentState};
pub use header_line::header_line_mime;
use header_line::{Mode, parse_header_line, read_version, read_version_label};
use line::read_line_at;
use rebuild_account::{Framed, MemberSettings, Orphans, Problems, StreamDigest};

/// Longest header line we accept (webarchive-commons caps at 100 KiB; Heritrix writes 4 KiB).
/// A line with no line end within this many bytes is not a record header: its bytes are kept
/// as a remainder record (with a `Garbage` anomaly giving its offset), never buffered whole.
pub(crate) const MAX_HEADER_LINE: usize = 100 * 1024;

/// File-level anomalies of one kind listed one by one (with their offsets); beyond this they
/// are only counted ([`ArcReader::unlisted_file_anomalies`]), and the bytes they concern stay
/// accounted for in [`ArcReader::byte_account`], so a file of a million empty gzip members
/// costs no more memory than a file of a hundred.
pub const MAX_LISTED_FILE_ANOMALIES: usize = 100;

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
    #[cfg(any(test, feature = "test-hooks"))]
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
    input: InputDecoding,
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
    #[cfg(any(test, feature = "test-hooks"))]
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
            (InputDecoding::Gzip { dec, buf: vec![0u8; SPOOL_BUF] }, None)
        } else {
            let data = Segment::File { file: file.try_clone().map_err(err)?, len: file_len };
            (InputDecoding::Plain, Some(SegmentState::new(data, None)))
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
            InputDecoding::Plain => self.seg.as_ref().map_or(self.file_len, |s| s.pos),
            InputDecoding::Gzip { dec, .. } => dec.get_ref().pos(),
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
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn body_reader(&self, rec: &ArcRecord) -> SegmentReader<'_> {
        self.segment_of(rec).reader(rec.body_start, rec.body_end)
    }

    /// The body of `rec` as a slice, when it is held in memory.
    #[cfg(any(test, feature = "test-hooks"))]
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

    #[cfg(any(test, feature = "test-hooks"))]
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
                InputDecoding::Plain => {
                    self.done = true;
                    self.finish_file();
                    return Ok(None);
                }
                InputDecoding::Gzip { .. } => {
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
        let BodyEnd { end: body_end, truncated, padding_end } = self
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
        let framing = rebuild_account::frame(data, framed, &mut self.rebuild_problems, &at);
        let (mut field, tail_end) = framing.map_err(|e| self.io_err(start, e))?;
        field.damaged = damaged;
        (field.gz, field.z) = settings;
        let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, start)) };
        seg.claimed = tail_end;
        seg.framed += 1;
        Ok(field)
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
}

#[cfg(any(test, feature = "test-hooks"))]
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
