//! Lossless ARC to WARC migration.
//!
//! [`migrate_file`] turns one ARC file into one WARC 1.1 file (one gzip member per record, a
//! `warcinfo` record first) and proves the result: the container is read back from disk and
//! every payload compared with the ARC's (`verify`). The output is written under a temporary
//! name in the output directory and renamed only when complete and conserved.
//!
//! Data flow inside one file: a reader thread frames ARC records ([`ArcReader`]) and maps them
//! to WARC fields (`mapping`); the calling thread gathers small records into batches that are
//! hashed and compressed in parallel (rayon, each record its own gzip member), then appends them
//! in order. Records too large for memory are hashed and compressed in two streaming passes.
//! Memory is bounded by the batch size, whatever the size or number of records.

pub(crate) mod mapping;
pub mod report;
pub(crate) mod verify;

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Instant;

use rayon::prelude::*;

use crate::formats::arc::{
    Anomaly, AnomalyKind, ArcError, ArcReader, ArcVersion, ByteAccount, Location, RecordKind,
    Severity, SharedRange,
};
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::warc::writer::RecordSpec;
use crate::formats::warc::{WarcWriter, WrittenRecord, encode_record};
use crate::ids::Ids;
use mapping::{DateSource, FallbackDates, InputKind, Mapped, MappingContext, NoDate};
use report::FileReport;
use verify::{ExpectationLog, Expected, verify_container};

/// Records with blocks up to this size are hashed and compressed in memory, in parallel.
pub const INLINE_LIMIT: u64 = 2 << 20;
/// A batch is compressed once it holds this many block bytes ...
const BATCH_BYTES: u64 = 8 << 20;
/// ... or this many records.
const BATCH_RECORDS: usize = 512;
/// Batches in flight between the reader thread and the writer: one being compressed, one
/// being filled, so neither side waits for the other.
const CHANNEL_BATCHES: usize = 1;

/// The default zlib level: the usual speed/size balance.
pub const DEFAULT_LEVEL: u32 = 6;

/// Options of a migration.
#[derive(Debug, Clone)]
pub struct MigrateOptions {
    /// zlib compression level, 0-9.
    pub level: u32,
    /// Replace an existing output file.
    pub force: bool,
    /// Scan every payload with this clamd while the batch is compressed (verdicts come with
    /// the records, [`MigratedRecord::scan`]).
    pub scanner: Option<crate::stages::scan::Clamd>,
    /// The capture date to use, as a last resort, for records with no usable date when
    /// neither an earlier record, the ARC header record nor the file name gives one
    /// (`--capture-date`). Without it such a file fails with [`MigrateError::NoDate`].
    pub capture_date: Option<chrono::DateTime<chrono::Utc>>,
}

impl Default for MigrateOptions {
    fn default() -> Self {
        MigrateOptions { level: DEFAULT_LEVEL, force: false, scanner: None, capture_date: None }
    }
}

/// One record as written, for callers that describe records (METS, indexes).
#[derive(Debug, Clone)]
pub struct MigratedRecord {
    /// Where it came from in the ARC (`None` for the warcinfo record).
    pub source: Option<Location>,
    /// The input classification (`None` for the warcinfo record).
    pub input_kind: Option<InputKind>,
    /// `WARC-Type`.
    pub warc_type: String,
    /// `WARC-Target-URI`.
    pub target_uri: Option<String>,
    /// `Content-Type` of the record.
    pub content_type: Option<String>,
    /// MIME type of the payload (harvested type for HTTP responses).
    pub payload_mime: String,
    /// `WARC-Date`.
    pub date: String,
    /// Where `WARC-Date` came from (`None` for the warcinfo record, dated when it is written).
    /// An inferred date is no capture date of this record's own: date ranges skip it.
    pub date_source: Option<DateSource>,
    /// Where it landed, its identifier and digests.
    pub written: WrittenRecord,
    /// The virus scan verdict of its payload, when a scanner was given.
    pub scan: Option<crate::stages::scan::ScanResult>,
}

/// Why a file could not be migrated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// The ARC could not be read.
    #[error(transparent)]
    Arc(#[from] ArcError),
    /// The output could not be written.
    #[error("{path}: {source}")]
    Output {
        /// The output (or temporary) file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The input is not an ARC file.
    #[error("{path}: {reason}")]
    NotArc {
        /// The input.
        path: PathBuf,
        /// What it seems to be instead.
        reason: String,
    },
    /// The virus scanner failed (unreachable, died, hung).
    #[error("virus scan: {0}")]
    Scan(String),
    /// A record has no usable date, and neither any record of the file nor its name gives
    /// one.
    #[error(
        "{path}: {location}: no usable capture date (archive-date {date}), and no record of \
         the file has one, nor does its name (no 14-digit timestamp); give one with \
         --capture-date (RFC 3339 or 14 digits, UTC)"
    )]
    NoDate {
        /// The ARC file.
        path: PathBuf,
        /// The record.
        location: Location,
        /// Its archive-date field as found.
        date: String,
    },
    /// The output exists and `force` was not given.
    #[error("{path}: already exists (use --force to replace it)")]
    Exists {
        /// The existing output.
        path: PathBuf,
    },
}

/// The WARC file name for an ARC file: `X.arc`, `X.arc.gz`, `X.ARC`, `X.arc.open` all give
/// `X.warc.gz`.
pub fn output_name(input: &Path) -> String {
    let name = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut stem = name.as_str();
    for suffix in [".open", ".invalid", ".gz", ".arc"] {
        if stem.len() > suffix.len()
            && stem[stem.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
        {
            stem = &stem[..stem.len() - suffix.len()];
        }
    }
    format!("{stem}.warc.gz")
}

/// Output paths for `inputs` in `out_dir`. When two inputs would get the same name (`X.arc`
/// and `X.arc.gz`), each of them keeps its full file name instead (`X.arc.warc.gz`).
pub fn plan_outputs(inputs: &[PathBuf], out_dir: &Path) -> Vec<PathBuf> {
    let names: Vec<String> = inputs.iter().map(|p| output_name(p)).collect();
    names
        .iter()
        .zip(inputs)
        .map(|(n, input)| {
            let clash = names.iter().filter(|m| *m == n).count() > 1;
            if clash {
                let full =
                    input.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                out_dir.join(format!("{full}.warc.gz"))
            } else {
                out_dir.join(n)
            }
        })
        .collect()
}

/// Migrates one ARC file to `output`. Never panics on bad input: failures are in the report.
///
/// `progress` is called with the number of input bytes consumed since its last call; `sink`
/// sees every record written, in order (the warcinfo record first).
pub fn migrate_file(
    input: &Path,
    output: &Path,
    opts: &MigrateOptions,
    ids: &Ids,
    progress: &(dyn Fn(u64) + Sync),
    sink: &mut dyn FnMut(&MigratedRecord),
) -> FileReport {
    let started = Instant::now();
    let mut report = FileReport { input: input.to_path_buf(), ..FileReport::default() };
    if let Err(e) = run(input, output, opts, ids, progress, sink, &mut report) {
        report.error = Some(e.to_string());
        report.output = None;
    }
    report.seconds = started.elapsed().as_secs_f64();
    report
}

fn run(
    input: &Path,
    output: &Path,
    opts: &MigrateOptions,
    ids: &Ids,
    progress: &(dyn Fn(u64) + Sync),
    sink: &mut dyn FnMut(&MigratedRecord),
    report: &mut FileReport,
) -> Result<(), MigrateError> {
    let out_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| MigrateError::Output { path: path.clone(), source }
    };
    if output.exists() && !opts.force {
        return Err(MigrateError::Exists { path: output.to_path_buf() });
    }
    let arc = ArcReader::open(input)?;
    refuse_non_arc(input, &arc)?;
    report.compressed = arc.is_gzip();
    let (size, sha512) = crate::formats::digest::sha512_file(input).map_err(|source| ArcError {
        path: input.to_path_buf(),
        offset: 0,
        source,
    })?;
    report.input_size = size;
    report.input_sha512 = sha512.clone();

    let dir = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let out_name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{out_name}."))
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(out_err(dir))?;
    let tmp_path = tmp.path().to_path_buf();
    let file = tmp.as_file_mut();
    let mut writer = WarcWriter::new(BufWriter::with_capacity(1 << 20, file), opts.level);
    let mut log = ExpectationLog::new().map_err(out_err(&tmp_path))?;

    let arc_name = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let now = ids.now();
    let warcinfo_id = ids.warc_record_id();
    let info = warcinfo(&arc_name, &out_name, size, &sha512, arc.is_gzip(), &warcinfo_id, now);
    let written = writer.write_record(&info.0, &info.1, 0).map_err(out_err(&tmp_path))?;
    log.push(&Expected::new(&written, false)).map_err(out_err(&tmp_path))?;
    *report.records_out.entry("warcinfo".into()).or_default() += 1;
    sink(&MigratedRecord {
        source: None,
        input_kind: None,
        warc_type: "warcinfo".into(),
        target_uri: None,
        content_type: info.0.content_type.clone(),
        payload_mime: "application/warc-fields".into(),
        date: info.0.date.clone(),
        date_source: None,
        written,
        scan: None,
    });

    let Some(fallback) = fallback_dates(input, opts.capture_date)? else {
        return Err(not_arc(input));
    };
    let ctx = MappingContext::new(arc_name, warcinfo_id, fallback);
    let (tx, rx) = sync_channel::<Msg>(CHANNEL_BATCHES);
    let level = opts.level;
    let scanner = match &opts.scanner {
        Some(clamd) => Some(Scanner {
            clamd: clamd.clone(),
            pool: rayon::ThreadPoolBuilder::new()
                .num_threads(crate::stages::scan::scan_sessions())
                .build()
                .map_err(|e| MigrateError::Scan(format!("cannot start scanning threads: {e}")))?,
            width: ScanWidth::default(),
        }),
        None => None,
    };
    let outcome = std::thread::scope(|scope| {
        scope.spawn(move || read_records(arc, ctx, ids, tx, progress));
        let mut out = Output { writer: &mut writer, log: &mut log, level, report, sink };
        write_records(rx, &mut out, scanner.as_ref())
    });
    let end = outcome?;
    if end.records_with_header == 0 {
        return Err(not_arc(input));
    }
    report.arc_version = end.version.map(|v| match v {
        ArcVersion::V1 => 1,
        ArcVersion::V2 => 2,
    });
    report.arc_format_version = end.version_label.clone();
    for a in end.file_anomalies {
        report.add_anomaly(a);
    }
    for (kind, severity, n) in end.unlisted {
        report.count_unlisted(kind, severity, n);
    }
    let bytes_balanced = end.bytes.balanced(end.gzip);
    report.input_bytes = Some(end.bytes);
    let mut buffered = writer.finish().map_err(out_err(&tmp_path))?;
    buffered.flush().map_err(out_err(&tmp_path))?;
    drop(buffered);
    tmp.as_file().sync_all().map_err(out_err(&tmp_path))?;

    let verified = verify_container(&tmp_path, log).map_err(out_err(&tmp_path))?;
    report.conservation = verified.conservation;
    if !bytes_balanced {
        // The reader lost track of some input bytes: never call that conserved.
        report.conservation.conserved = false;
        report
            .conservation
            .mismatches
            .push(format!("input bytes not accounted for: {:?}", report.input_bytes));
    }
    report.output_size = verified.size;
    report.output_sha512 = Some(verified.sha512);
    if !report.conservation.conserved {
        // Not renamed: the temporary file is removed, and the report says why.
        return Ok(());
    }
    // Temporary files are created private (0600); a finished WARC is an ordinary file.
    set_mode(tmp.path(), 0o644).map_err(out_err(&tmp_path))?;
    let persisted = if opts.force { tmp.persist(output) } else { tmp.persist_noclobber(output) };
    persisted.map_err(|e| MigrateError::Output { path: output.to_path_buf(), source: e.error })?;
    report.output = Some(output.to_path_buf());
    Ok(())
}

/// Sets Unix permission bits.
pub(crate) fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// A WARC (or anything that is plainly not ARC) is refused with a message saying what it is.
fn refuse_non_arc(input: &Path, arc: &ArcReader) -> Result<(), MigrateError> {
    let mut head = [0u8; 5];
    let n = if arc.is_gzip() {
        let f = File::open(input).map_err(|source| ArcError {
            path: input.to_path_buf(),
            offset: 0,
            source,
        })?;
        let mut dec = flate2::read::MultiGzDecoder::new(f);
        let mut got = 0;
        while got < head.len() {
            match dec.read(&mut head[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        got
    } else {
        File::open(input).and_then(|mut f| f.read(&mut head)).unwrap_or(0)
    };
    if n == 5 && &head == b"WARC/" {
        return Err(MigrateError::NotArc {
            path: input.to_path_buf(),
            reason: "this is a WARC file, not an ARC file; it needs no migration".into(),
        });
    }
    Ok(())
}

fn not_arc(input: &Path) -> MigrateError {
    MigrateError::NotArc {
        path: input.to_path_buf(),
        reason: "no ARC record header found; is this an ARC file?".into(),
    }
}

/// The dates a record without its own falls back to, in the migration's order (see
/// [`FallbackDates`]); `None` when the file holds no ARC record. Reads the file once.
pub(crate) fn fallback_dates(
    input: &Path,
    capture_date: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<Option<FallbackDates>, ArcError> {
    Ok(prescan_dates(input)?.map(|(arc_header, first_date)| FallbackDates {
        arc_header,
        next_record: first_date,
        file_name: file_name_date(input),
        capture_date,
    }))
}

/// Read ahead to the first record with a date of its own: the ARC header (`filedesc://`)
/// record's date, when the first record is one and its date parses, and that first date (for
/// records before it, such as a filedesc dated `-`). `None` when the file has no record at all.
/// Reads the whole file only when no record has a date.
#[allow(clippy::type_complexity)]
fn prescan_dates(
    input: &Path,
) -> Result<
    Option<(Option<chrono::DateTime<chrono::Utc>>, Option<chrono::DateTime<chrono::Utc>>)>,
    ArcError,
> {
    let mut arc = ArcReader::open(input)?;
    let mut seen = None;
    while let Some(rec) = arc.next_record()? {
        let Some(h) = rec.header else { continue };
        let header =
            *seen.get_or_insert(if rec.kind == RecordKind::Filedesc { h.date } else { None });
        if h.date.is_some() {
            return Ok(Some((header, h.date)));
        }
    }
    Ok(seen.map(|header| (header, None)))
}

/// The timestamp in a Heritrix-style ARC name, when there is one.
fn file_name_date(input: &Path) -> Option<chrono::DateTime<chrono::Utc>> {
    let name = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Quirk: ARC names are prefix-timestamp-serial-host, and prefixes and hosts hold dashes,
    // so look for a 14- or 17-digit run followed by a 5-digit serial (INPUT_FORMATS.md §2.4).
    let parts: Vec<&str> = name.split('-').collect();
    for w in parts.windows(2) {
        let (ts, serial) = (w[0], w[1]);
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (ts.len() == 14 || ts.len() == 17)
            && digits(ts)
            && serial.len() >= 5
            && digits(&serial[..5])
            && let Some(d) = crate::formats::arc::parse_arc_date(&ts[..14])
        {
            return Some(d);
        }
    }
    None
}

fn warcinfo(
    arc_name: &str,
    warc_name: &str,
    size: u64,
    sha512: &str,
    gzip: bool,
    id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> (RecordSpec, Vec<u8>) {
    let body = format!(
        "software: webaip/{version}\r\n\
         format: WARC File Format 1.1\r\n\
         conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
         description: ARC to WARC migration; one WARC record per ARC record, payload bytes unchanged\r\n\
         {source_file}\
         source-format: {format}\r\n\
         source-size: {size}\r\n\
         source-sha512: {sha512}\r\n",
        version = env!("CARGO_PKG_VERSION"),
        // A file name is input: escaped so that it cannot add a field.
        source_file = crate::formats::warc::header::warc_fields_line("source-file", arc_name),
        format = if gzip { "ARC, gzip-compressed" } else { "ARC, uncompressed" },
    );
    let spec = RecordSpec {
        warc_type: "warcinfo".into(),
        record_id: id.to_string(),
        date: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        filename: Some(warc_name.to_string()),
        content_type: Some("application/warc-fields".into()),
        ..RecordSpec::default()
    };
    (spec, body.into_bytes())
}

enum Block {
    Inline(Vec<u8>),
    Shared(SharedRange),
}

struct Job {
    mapped: Mapped,
    block: Block,
    location: Location,
    anomalies: Vec<Anomaly>,
}

enum Msg {
    /// Records small enough to compress in memory, in order.
    Batch(Vec<Job>),
    /// One record to stream.
    Large(Box<Job>),
    Done(Box<End>),
    Failed(MigrateError),
}

/// What the reader knows once the file is read.
struct End {
    /// Listed file anomalies (a bounded number of each kind) ...
    file_anomalies: Vec<Anomaly>,
    /// ... and those only counted.
    unlisted: Vec<(AnomalyKind, Severity, u64)>,
    /// Where every input byte went.
    bytes: ByteAccount,
    gzip: bool,
    version: Option<ArcVersion>,
    /// The version as the version block states it ("1.0", "1.1", "2").
    version_label: Option<String>,
    records_with_header: u64,
}

/// The reader thread: frames and maps records, sends them on in order.
fn read_records(
    mut arc: ArcReader,
    mut ctx: MappingContext,
    ids: &Ids,
    tx: SyncSender<Msg>,
    progress: &(dyn Fn(u64) + Sync),
) {
    let mut reported = 0u64;
    let mut with_header = 0u64;
    let mut batch: Vec<Job> = Vec::new();
    let mut batch_bytes = 0u64;
    loop {
        let rec = match arc.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Msg::Failed(e.into()));
                return;
            }
        };
        let consumed = arc.bytes_consumed();
        if consumed > reported {
            progress(consumed - reported);
            reported = consumed;
        }
        if rec.kind != RecordKind::Remainder {
            with_header += 1;
        }
        let whole = rec.kind == RecordKind::Filedesc;
        let range = if whole { arc.shared_record(&rec) } else { arc.shared_body(&rec) };
        let prepared = (|| -> io::Result<(Block, Vec<u8>)> {
            if range.len() <= INLINE_LIMIT {
                let bytes = range.to_vec()?;
                let head_end = bytes.len().min(MAX_HTTP_HEADER_LEN);
                let head = if whole { Vec::new() } else { bytes[..head_end].to_vec() };
                Ok((Block::Inline(bytes), head))
            } else {
                let head = if whole { Vec::new() } else { range.prefix(MAX_HTTP_HEADER_LEN)? };
                Ok((Block::Shared(range.clone()), head))
            }
        })();
        let (block, head) = match prepared {
            Ok(x) => x,
            Err(source) => {
                let offset = rec.location.member.unwrap_or(rec.location.offset);
                let _ = tx.send(Msg::Failed(
                    ArcError { path: arc.path().to_path_buf(), offset, source }.into(),
                ));
                return;
            }
        };
        let mapped = match ctx.map(&rec, &head, ids.warc_record_id()) {
            Ok(m) => m,
            Err(NoDate { location, date_raw }) => {
                let _ = tx.send(Msg::Failed(MigrateError::NoDate {
                    path: arc.path().to_path_buf(),
                    location,
                    date: date_raw.map_or_else(
                        || "none: bytes that are no record".into(),
                        |d| format!("{d:?}"),
                    ),
                }));
                return;
            }
        };
        let job = Job { mapped, block, location: rec.location, anomalies: rec.anomalies };
        let sent = match job.block {
            Block::Inline(ref b) => {
                batch_bytes += b.len() as u64;
                batch.push(job);
                if batch_bytes >= BATCH_BYTES || batch.len() >= BATCH_RECORDS {
                    batch_bytes = 0;
                    tx.send(Msg::Batch(std::mem::take(&mut batch)))
                } else {
                    Ok(())
                }
            }
            Block::Shared(_) => {
                batch_bytes = 0;
                let flushed = if batch.is_empty() {
                    Ok(())
                } else {
                    tx.send(Msg::Batch(std::mem::take(&mut batch)))
                };
                flushed.and_then(|_| tx.send(Msg::Large(Box::new(job))))
            }
        };
        if sent.is_err() {
            return;
        }
    }
    if !batch.is_empty() && tx.send(Msg::Batch(batch)).is_err() {
        return;
    }
    let consumed = arc.file_len();
    if consumed > reported {
        progress(consumed - reported);
    }
    let _ = tx.send(Msg::Done(Box::new(End {
        file_anomalies: arc.file_anomalies().to_vec(),
        unlisted: arc.unlisted_file_anomalies().iter().map(|(k, (s, n))| (*k, *s, *n)).collect(),
        bytes: arc.byte_account().clone(),
        gzip: arc.is_gzip(),
        version: arc.version(),
        version_label: arc.version_label().map(str::to_string),
        records_with_header: with_header,
    })));
}

/// clamd and the threads that wait on it: scans block on the daemon, so they get threads of
/// their own and run beside compression instead of taking its cores' threads.
struct Scanner {
    clamd: crate::stages::scan::Clamd,
    pool: rayon::ThreadPool,
    width: ScanWidth,
}

/// How many of a batch's payloads are scanned at once. It starts at one and grows while the
/// writer has to wait for verdicts (clamd is the slower side: a large signature database, many
/// cores), and shrinks again after verdicts have been ready in time for a few batches. Every
/// scan in flight costs clamd hand-offs between its threads, so no more are used than keep up.
#[derive(Default)]
struct ScanWidth {
    /// Scans in flight, minus one.
    extra: std::sync::atomic::AtomicUsize,
    /// Batches in a row whose verdicts were ready when the writer wanted them.
    in_time: std::sync::atomic::AtomicUsize,
}

/// Batches in a row with verdicts ready in time before the width shrinks by one.
const SHRINK_AFTER: usize = 4;

impl ScanWidth {
    fn get(&self) -> usize {
        1 + self.extra.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records whether a batch's verdicts were ready when the writer wanted them.
    fn record(&self, ready: bool, max: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        if !ready {
            self.in_time.store(0, Relaxed);
            if self.get() < max {
                self.extra.fetch_add(1, Relaxed);
            }
        } else if self.in_time.fetch_add(1, Relaxed) + 1 >= SHRINK_AFTER {
            self.in_time.store(0, Relaxed);
            let _ = self.extra.fetch_update(Relaxed, Relaxed, |e| e.checked_sub(1));
        }
    }
}

fn scan_payload(
    s: &Scanner,
    payload: impl Read,
    len: u64,
) -> Result<crate::stages::scan::ScanResult, MigrateError> {
    s.clamd.scan(payload, len).map_err(|e| MigrateError::Scan(e.to_string()))
}

/// The verdicts of one batch, in its order (`None`: empty payload, nothing to scan), or the
/// first failure: collecting into a `Result` stops the other scans of the batch, so a clamd
/// that hangs costs one timeout, not one per payload.
type Verdicts = Result<Vec<Option<crate::stages::scan::ScanResult>>, MigrateError>;

/// Starts scanning a batch's payloads on the scanner's threads; the verdicts arrive on the
/// returned channel. The task lets go of the batch before it sends them, so that the writer
/// can take the batch back once it has them.
fn start_scan(s: &Scanner, batch: Arc<Vec<Job>>) -> Receiver<Verdicts> {
    let (tx, rx) = sync_channel(1);
    let clamd = s.clamd.clone();
    // Pieces of at least len/width payloads: at most `width` scans at once.
    let piece = batch.len().div_ceil(s.width.get()).max(1);
    s.pool.spawn(move || {
        let verdicts: Verdicts = batch
            .par_iter()
            .with_min_len(piece)
            .map(|job| match &job.block {
                Block::Inline(bytes) => {
                    let payload = &bytes[(job.mapped.payload_offset as usize).min(bytes.len())..];
                    if payload.is_empty() {
                        return Ok(None);
                    }
                    clamd
                        .scan_bytes(payload)
                        .map(Some)
                        .map_err(|e| MigrateError::Scan(e.to_string()))
                }
                Block::Shared(_) => Ok(None),
            })
            .collect();
        drop(batch);
        let _ = tx.send(verdicts);
    });
    rx
}

/// A batch whose records are not written yet, and its scan if one is running.
type Pending<'s> = (Arc<Vec<Job>>, Option<(&'s Scanner, Receiver<Verdicts>)>);

/// The writer side of one container: where records go, in order.
struct Output<'a, W: Write> {
    writer: &'a mut WarcWriter<W>,
    /// What the conservation check will verify.
    log: &'a mut ExpectationLog,
    level: u32,
    report: &'a mut FileReport,
    /// The caller's sink, given every record written.
    sink: &'a mut dyn FnMut(&MigratedRecord),
}

/// The writer side: batches, compresses in parallel, appends in order, logs expectations.
///
/// With a scanner, a batch's payloads go to clamd as soon as it arrives, and the batch is
/// written when the next one arrives: scanning one batch overlaps compressing and writing
/// the one before, instead of every batch waiting for its own slowest scan.
fn write_records<W: Write>(
    rx: Receiver<Msg>,
    out: &mut Output<'_, W>,
    scanner: Option<&Scanner>,
) -> Result<End, MigrateError> {
    let mut pending: Option<Pending> = None;
    loop {
        let msg = match rx.recv() {
            Ok(m) => m,
            Err(_) => {
                return Err(MigrateError::Output {
                    path: PathBuf::from("(reader thread)"),
                    source: io::Error::other("the ARC reader stopped unexpectedly"),
                });
            }
        };
        match msg {
            Msg::Batch(batch) => {
                let batch = Arc::new(batch);
                let scanning = scanner.map(|s| (s, start_scan(s, Arc::clone(&batch))));
                out.flush_pending(&mut pending)?;
                pending = Some((batch, scanning));
                if scanner.is_none() {
                    out.flush_pending(&mut pending)?;
                }
            }
            Msg::Large(job) => {
                out.flush_pending(&mut pending)?;
                out.write_streamed(*job, scanner)?
            }
            Msg::Done(end) => {
                out.flush_pending(&mut pending)?;
                return Ok(*end);
            }
            Msg::Failed(e) => return Err(e),
        }
    }
}

fn out_error(source: io::Error) -> MigrateError {
    MigrateError::Output { path: PathBuf::from("(output container)"), source }
}

impl<W: Write> Output<'_, W> {
    fn flush_pending(&mut self, pending: &mut Option<Pending<'_>>) -> Result<(), MigrateError> {
        match pending.take() {
            Some((batch, verdicts)) => self.flush_batch(batch, verdicts),
            None => Ok(()),
        }
    }

    /// Compresses a batch in parallel, waits for its verdicts if it is being scanned, and
    /// appends its records in order.
    fn flush_batch(
        &mut self,
        batch: Arc<Vec<Job>>,
        verdicts: Option<(&Scanner, Receiver<Verdicts>)>,
    ) -> Result<(), MigrateError> {
        let level = self.level;
        let encoded: Vec<io::Result<_>> = batch
            .par_iter()
            .map(|job| match &job.block {
                Block::Inline(bytes) => {
                    encode_record(&job.mapped.spec, bytes, job.mapped.payload_offset, level)
                }
                Block::Shared(_) => Err(io::Error::other("streamed record in an inline batch")),
            })
            .collect();
        let scan_stopped =
            || MigrateError::Scan("the scanning thread stopped without verdicts".into());
        let verdicts = match verdicts {
            Some((scanner, rx)) => {
                let max = scanner.pool.current_num_threads();
                Some(match rx.try_recv() {
                    Ok(v) => {
                        scanner.width.record(true, max);
                        v
                    }
                    Err(_) => {
                        scanner.width.record(false, max);
                        rx.recv().map_err(|_| scan_stopped())?
                    }
                }?)
            }
            None => None,
        };
        // The scan task has let go of the batch before sending its verdicts.
        let batch = Arc::into_inner(batch).ok_or_else(scan_stopped)?;
        let mut verdicts = verdicts.map(|v| v.into_iter());
        for (job, result) in batch.into_iter().zip(encoded) {
            let verdict = verdicts.as_mut().and_then(Iterator::next).flatten();
            let written =
                self.writer.write_encoded(result.map_err(out_error)?).map_err(out_error)?;
            self.finish_record(job, written, verdict)?;
        }
        Ok(())
    }

    fn write_streamed(&mut self, job: Job, scanner: Option<&Scanner>) -> Result<(), MigrateError> {
        let Block::Shared(range) = &job.block else {
            return Err(out_error(io::Error::other("inline record on the streaming path")));
        };
        let verdict = match scanner {
            Some(s) if range.len() > job.mapped.payload_offset => {
                let mut r = range.reader();
                io::copy(&mut (&mut r).take(job.mapped.payload_offset), &mut io::sink())
                    .map_err(out_error)?;
                Some(scan_payload(s, r, range.len() - job.mapped.payload_offset)?)
            }
            _ => None,
        };
        let written = self
            .writer
            .write_streamed(&job.mapped.spec, || Ok(range.reader()), job.mapped.payload_offset)
            .map_err(out_error)?;
        self.finish_record(job, written, verdict)
    }

    fn finish_record(
        &mut self,
        job: Job,
        written: WrittenRecord,
        scan: Option<crate::stages::scan::ScanResult>,
    ) -> Result<(), MigrateError> {
        self.log.push(&Expected::new(&written, true)).map_err(out_error)?;
        let m = job.mapped;
        let report = &mut *self.report;
        *report.records_in.entry(m.input_kind.as_str().into()).or_default() += 1;
        *report.records_out.entry(m.spec.warc_type.clone()).or_default() += 1;
        for a in job.anomalies.into_iter().chain(m.anomalies) {
            report.add_anomaly(a);
        }
        if m.date_source.is_inferred() {
            report.add_inferred_date(m.date_source, job.location, &m.spec.date);
        }
        (self.sink)(&MigratedRecord {
            source: Some(job.location),
            input_kind: Some(m.input_kind),
            warc_type: m.spec.warc_type,
            target_uri: m.spec.target_uri,
            content_type: m.spec.content_type,
            payload_mime: m.payload_mime,
            date: m.spec.date,
            date_source: Some(m.date_source),
            written,
            scan,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_width_grows_while_the_writer_waits_and_shrinks_when_verdicts_keep_up() {
        let w = ScanWidth::default();
        assert_eq!(w.get(), 1);
        for _ in 0..10 {
            w.record(false, 4);
        }
        assert_eq!(w.get(), 4, "never more than the scanning threads");
        for _ in 0..SHRINK_AFTER - 1 {
            w.record(true, 4);
        }
        assert_eq!(w.get(), 4, "one batch in time is not a trend");
        w.record(true, 4);
        assert_eq!(w.get(), 3);
        w.record(false, 4);
        for _ in 0..SHRINK_AFTER * 10 {
            w.record(true, 4);
        }
        assert_eq!(w.get(), 1, "back to one scan at a time");
    }

    #[test]
    fn output_names() {
        assert_eq!(output_name(Path::new("a/IAH-1-00000-x.arc.gz")), "IAH-1-00000-x.warc.gz");
        assert_eq!(output_name(Path::new("nas-Upload3.ARC")), "nas-Upload3.warc.gz");
        assert_eq!(output_name(Path::new("x.arc.open")), "x.warc.gz");
        let plan = plan_outputs(
            &[PathBuf::from("x.arc"), PathBuf::from("x.arc.gz"), PathBuf::from("y.arc")],
            Path::new("o"),
        );
        assert_eq!(
            plan,
            vec![
                PathBuf::from("o/x.arc.warc.gz"),
                PathBuf::from("o/x.arc.gz.warc.gz"),
                PathBuf::from("o/y.warc.gz")
            ]
        );
    }

    #[test]
    fn file_name_date_from_heritrix_name() {
        let d = file_name_date(Path::new("IAH-20080430204825-00000-blackbook.arc.gz")).unwrap();
        assert_eq!(d.to_rfc3339(), "2008-04-30T20:48:25+00:00");
        let name = "BNF-CRAWL-003-20071013163428-02639-crawling04.us.archive.org.arc.gz";
        let d = file_name_date(Path::new(name)).unwrap();
        assert_eq!(d.to_rfc3339(), "2007-10-13T16:34:28+00:00");
        assert_eq!(file_name_date(Path::new("x.arc")), None, "never the clock");
    }
}
