//! Lossless ARC to WARC migration.
//!
//! [`migrate_file`] turns one ARC file into one WARC 1.1 file (one gzip member per record, a
//! `warcinfo` record first) and proves the result: the container is read back from disk and
//! every payload compared with the ARC's (`verify`). The output is written under a temporary
//! name in the output directory and renamed only when complete and conserved. A package
//! migrates through its own container sinks instead (`RecordSinks`, `migrate_into`), which
//! describe each record to the METS the moment it is written.
//!
//! Data flow inside one file: a reader thread frames ARC records ([`ArcReader`]) and maps them
//! to WARC fields (`formats::arc_to_warc`); with identification, a thread of its own
//! identifies each batch on its way (`ahead`) while the writer works on the batch before. The
//! calling thread takes them in batches through the pipeline every source goes through
//! (`stages::run_pipeline`: the scan stage, when there is a scanner, sees each batch before
//! anything of it is written and routes an infected record to the quarantine), then hashes
//! and compresses each batch in parallel (rayon, each record its own gzip member) and appends
//! it in order. Records too large for memory are streamed once, hashed while their chunks
//! compress in parallel (one gzip member still). Memory is bounded by the batch size,
//! whatever the size or number of records.

mod ahead;
pub mod rebuild;
mod rebuild_record;
pub mod report;
mod revisit;
pub(crate) mod verify;

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Instant;

use rayon::prelude::*;

use crate::formats::arc::{
    Anomaly, AnomalyKind, ArcError, ArcReader, ArcVersion, ByteAccount, Location, RecordKind,
    Severity,
};
/// What a migrated record came from, and where its date came from (fields of
/// [`MigratedRecord`]).
pub use crate::formats::arc_to_warc::{DateSource, InputKind};
use crate::formats::arc_to_warc::{
    MappedRecord, MappingContext, NoDate, RecordBlock, fallback_dates,
};
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::warc::stored::record_head;
use crate::formats::warc::writer::EncodedRecord;
use crate::formats::warc::{WarcWriter, WrittenRecord, encode_record};
use crate::ids::Ids;
use crate::index::digests::{Algorithm, DigestKey};
use crate::stages::dedup::DedupStage;
use crate::stages::scan::{ScanEngine, ScanResult, ScanStage, batching};
use crate::stages::{BatchSink, Item, Route, ScanFinding, Stage, StagedItem};
use rebuild_record::{rebuild_report, rebuild_summary, write_rebuild_record};
use report::FileReport;
use verify::{ExpectationLog, Expected, verify_container};

/// Records with blocks up to this size are read into memory and compressed whole (libdeflate),
/// in parallel with the other records of their batch; a larger block is streamed and
/// compressed in chunks (`formats::gzip_member`). Not the scan's `batching::HELD_PAYLOAD`,
/// though the blocks in memory are also the payloads the scan holds: this bound decides how a
/// record is compressed, so the container's bytes depend on it, and it must not move with the
/// scan's memory bounds.
pub(crate) const WHOLE_BLOCK_MAX: u64 = 2 << 20;
/// A batch of records in memory is closed at this many block bytes (or at the scan's
/// `batching::BATCH_ITEMS` records). The scan stage sees these batches, but they are not cut at
/// the scan's `batching::BATCH_BYTES`: a migration holds three batches at once (one filled by
/// the reader thread, one in the channel or, with identification, identified on its way (`ahead`:
/// its channels hold none), one compressed; with a scanner one more in flight,
/// each payload held beside its block), a copied WARC one or two, so a migration's batch is
/// a quarter of the bytes, to keep `migrate`, and `package` with the PRONOM signatures beside
/// the batches, within their memory target (docs/benchmarks.md). A hundred records of a
/// crawl's usual size still make a batch, enough to keep both cores compressing.
const MIGRATION_BATCH_BYTES: u64 = 4 << 20;
/// Batches in flight between the reader thread and the writer: one being compressed, one
/// being filled, so neither side waits for the other (with identification, the batch it
/// identifies instead: `ahead`).
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
    /// Scan every payload with this engine before its record is written (verdicts come with
    /// the records, `MigratedRecord::scan`).
    pub scanner: Option<Arc<ScanEngine>>,
    /// Where records whose payload is infected go instead of the output: without it they are
    /// written to the output like any other (the verdict says what they are).
    pub quarantine: Option<Quarantine>,
    /// The capture date to use, as a last resort, for records with no usable date when
    /// neither an earlier record, the ARC header record nor the file name gives one
    /// (`--capture-date`). Without it such a file fails with `MigrateError::NoDate`.
    pub capture_date: Option<chrono::DateTime<chrono::Utc>>,
    /// Identify every payload with PRONOM's signatures before its record is written (results
    /// come with the records, `MigratedRecord::identification`; counted in
    /// [`FileReport::identified`]).
    pub identify: Option<crate::stages::identify::Identifier>,
    /// Keep what rebuilding the ARC byte for byte needs (`docs/arc-rebuild.md`): on by
    /// default; off only to measure what it costs.
    pub rebuild_data: bool,
    /// Deduplication in a package (`--dedup-against`, `--dedup-within`): an HTTP response
    /// whose payload is stored already is written as a revisit.
    pub dedup: Option<MigrationDedup>,
}

/// Deduplication of a migration into a package's container.
#[derive(Debug, Clone)]
pub struct MigrationDedup {
    /// What is looked up.
    pub dedup: Arc<crate::stages::dedup::Dedup>,
    /// The container's path in the package (what `--dedup-within` revisits name).
    pub container: String,
}

impl Default for MigrateOptions {
    fn default() -> Self {
        MigrateOptions {
            level: DEFAULT_LEVEL,
            force: false,
            scanner: None,
            quarantine: None,
            capture_date: None,
            identify: None,
            rebuild_data: true,
            dedup: None,
        }
    }
}

/// Where infected records go (packaging, P5.5): a viral container of their own, opened when
/// the first one comes, and a cleaner whose clean copies go to the output in their place.
#[derive(Debug, Clone)]
pub struct Quarantine {
    /// The viral container's path (it must not exist).
    pub path: PathBuf,
    /// The command that makes a clean copy: run as `CMD INFECTED CLEANED`, within its time.
    pub cleaner: Option<crate::stages::scan::Cleaner>,
}

/// Where a record was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The output container.
    Output,
    /// The quarantine's viral container.
    Quarantine,
}

/// One record as written, for callers that describe records (METS, indexes).
#[derive(Debug, Clone)]
pub struct MigratedRecord {
    /// Where it came from in the ARC (`None` for the warcinfo record).
    #[cfg_attr(
        not(feature = "test-hooks"),
        allow(dead_code, reason = "read by the test harnesses")
    )]
    pub source: Option<Location>,
    /// The input classification (`None` for the warcinfo record).
    #[cfg_attr(
        not(feature = "test-hooks"),
        allow(dead_code, reason = "read by the test harnesses")
    )]
    pub input_kind: Option<InputKind>,
    /// `WARC-Type`.
    pub warc_type: String,
    /// `WARC-Target-URI`.
    pub target_uri: Option<String>,
    /// `Content-Type` of the record.
    #[cfg_attr(
        not(feature = "test-hooks"),
        allow(dead_code, reason = "read by the test harnesses")
    )]
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
    pub scan: Option<ScanResult>,
    /// The container it went to.
    pub container: Written,
    /// For a cleaner's copy: the record id of the infected record it was made from.
    pub cleaned_from: Option<String>,
    /// What PRONOM identification found in its payload, when it was identified.
    pub identification: Option<crate::model::Identification>,
    /// A revisit written by deduplication: where its payload is stored (its METS entry).
    pub(crate) refers: Option<Box<crate::model::ReferencedPayload>>,
}

impl MigratedRecord {
    /// A record webaip writes of its own (the warcinfo, the rebuild data), not one of the ARC's:
    /// no source, no scan or identification, in the output container.
    pub(crate) fn made_here(
        spec: crate::formats::warc::writer::RecordSpec,
        payload_mime: String,
        written: WrittenRecord,
    ) -> Self {
        MigratedRecord {
            source: None,
            input_kind: None,
            warc_type: spec.warc_type,
            target_uri: spec.target_uri,
            content_type: spec.content_type,
            payload_mime,
            date: spec.date,
            date_source: None,
            written,
            scan: None,
            container: Written::Output,
            cleaned_from: None,
            identification: None,
            refers: None,
        }
    }
}

/// Why a file could not be migrated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// The ARC could not be read.
    #[error(transparent)]
    Arc(#[from] ArcError),
    /// The output could not be written.
    #[error("{path}: {}", crate::layout::describe_io(source))]
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
        reason: NotArcReason,
    },
    /// The ARC changed while it was read (the report's input names it).
    #[error(transparent)]
    Changed(#[from] crate::formats::digest::InputChanged),
    /// The output would be the input itself.
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
    /// The virus scanner failed (unreachable, died, hung).
    #[error("virus scan: {0}")]
    Scan(#[from] crate::stages::scan::ScanError),
    /// The virus scanner failed on one record streamed to it alone (`origin` says which: its
    /// offset in the ARC).
    #[error("{origin}: virus scan: {source}")]
    ScanOf {
        /// The record.
        origin: String,
        /// What clamd did.
        #[source]
        source: crate::stages::scan::ScanError,
    },
    /// A payload could not be identified (read) ahead of its record's writing.
    #[error(
        "{path}: at offset {offset}: format identification: {}",
        crate::layout::describe_io(source)
    )]
    Identify {
        /// The ARC file.
        path: PathBuf,
        /// The record's offset in it (its gzip member's, for gzip input).
        offset: u64,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The cleaner could not be run on an infected payload.
    #[error(transparent)]
    Clean(#[from] crate::stages::scan::CleanError),
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

/// Why an input is taken not to be an ARC file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotArcReason {
    /// It starts with `WARC/` (gzipped or not).
    #[error("this is a WARC file, not an ARC file; it needs no migration")]
    Warc,
    /// Nothing in it reads as an ARC record header.
    #[error("no ARC record header found; is this an ARC file?")]
    NoRecordHeader,
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
    let migrated = match crate::layout::refuse_nesting(input, output) {
        Ok(()) => migrate_to_file(input, output, opts, ids, progress, sink, &mut report),
        Err(e) => Err(e.into()),
    };
    if let Err(e) = migrated {
        report.error = Some(e.to_string());
        report.output = None;
    }
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// Where a migration writes its records, and who is told of each as it is written.
///
/// `webaip migrate` writes bare WARC files ([`FileSinks`]: the output under a temporary name,
/// renamed once conserved); a package writes through its container sinks, which describe
/// each record to their METS section the moment it is written. The `WarcWriter`s inside are
/// the only code that computes offsets.
pub(crate) trait RecordSinks {
    /// The migrated container's writer.
    fn content(&mut self) -> &mut WarcWriter<BufWriter<File>>;
    /// The viral container's writer, created on first use; `true` when it was just created
    /// (empty: the migration writes its warcinfo record).
    fn viral(&mut self) -> io::Result<(&mut WarcWriter<BufWriter<File>>, bool)>;
    /// Told of each record once it is written where [`MigratedRecord::container`] says.
    fn written(&mut self, record: &MigratedRecord) -> io::Result<()>;
    /// Flushes and syncs the containers, for the conservation check to read them back.
    fn sync(&mut self) -> io::Result<()>;
    /// The migrated container's path (in errors, and for the conservation check).
    fn content_path(&self) -> PathBuf;
    /// The viral container's path, once it was created.
    fn viral_path(&self) -> Option<PathBuf>;
}

/// The sinks of `webaip migrate`: the output under a temporary name, the viral container at
/// its path, and the caller's callback.
struct FileSinks<'a> {
    tmp_path: PathBuf,
    content: WarcWriter<BufWriter<File>>,
    viral_path: Option<PathBuf>,
    viral: Option<WarcWriter<BufWriter<File>>>,
    level: u32,
    callback: &'a mut dyn FnMut(&MigratedRecord),
}

impl RecordSinks for FileSinks<'_> {
    fn content(&mut self) -> &mut WarcWriter<BufWriter<File>> {
        &mut self.content
    }

    fn viral(&mut self) -> io::Result<(&mut WarcWriter<BufWriter<File>>, bool)> {
        let created = self.viral.is_none();
        if created {
            let path = self.viral_path.as_ref().ok_or_else(|| io::Error::other("no quarantine"))?;
            let file = File::create_new(path)?;
            self.viral = Some(WarcWriter::new(BufWriter::with_capacity(1 << 20, file), self.level));
        }
        let w = self.viral.as_mut().ok_or_else(|| io::Error::other("viral container"))?;
        Ok((w, created))
    }

    fn written(&mut self, record: &MigratedRecord) -> io::Result<()> {
        (self.callback)(record);
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.content.sync()?;
        self.viral.as_mut().map_or(Ok(()), WarcWriter::sync)
    }

    fn content_path(&self) -> PathBuf {
        self.tmp_path.clone()
    }

    fn viral_path(&self) -> Option<PathBuf> {
        self.viral.as_ref().and(self.viral_path.clone())
    }
}

/// `webaip migrate`: the output written under a temporary name in its directory, renamed only
/// when complete and conserved.
fn migrate_to_file(
    input: &Path,
    output: &Path,
    opts: &MigrateOptions,
    ids: &Ids,
    progress: &(dyn Fn(u64) + Sync),
    callback: &mut dyn FnMut(&MigratedRecord),
    report: &mut FileReport,
) -> Result<(), MigrateError> {
    let out_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| MigrateError::Output { path: path.clone(), source }
    };
    if output.exists() && !opts.force {
        return Err(MigrateError::Exists { path: output.to_path_buf() });
    }
    // Refused before anything is created.
    let arc = open_arc(input)?;
    let dir = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let out_name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Locked while this run writes it: what a killed run of the same output left is removed.
    let prefix = format!(".{out_name}.");
    let partial = crate::temporaries::TempName { prefix: &prefix, suffix: ".partial", dirs: false };
    crate::temporaries::remove_dead(dir, partial);
    let tmp = crate::temporaries::locked_file_in(dir, partial).map_err(out_err(dir))?;
    let tmp_path = tmp.path().to_path_buf();
    let file = tmp.as_file().try_clone().map_err(out_err(&tmp_path))?;
    let mut sinks = FileSinks {
        tmp_path: tmp_path.clone(),
        content: WarcWriter::new(BufWriter::with_capacity(1 << 20, file), opts.level),
        viral_path: opts.quarantine.as_ref().map(|q| q.path.clone()),
        viral: None,
        level: opts.level,
        callback,
    };
    migrate_into(arc, input, &out_name, MigrationRun { opts, ids, progress }, &mut sinks, report)?;
    drop(sinks);
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

/// Opens `input` as an ARC file, refusing what is not one (a WARC, a gzip of something else).
pub(crate) fn open_arc(input: &Path) -> Result<ArcReader, MigrateError> {
    let arc = ArcReader::open(input)?;
    refuse_non_arc(input, &arc)?;
    Ok(arc)
}

/// One migration as its parts read it: its options, its identifiers and where progress (bytes
/// read) is told.
#[derive(Clone, Copy)]
pub(crate) struct MigrationRun<'a> {
    pub(crate) opts: &'a MigrateOptions,
    pub(crate) ids: &'a Ids,
    pub(crate) progress: &'a (dyn Fn(u64) + Sync),
}

/// The ARC file migrated, as read before its records: its name, size and SHA-512 (hex).
pub(super) struct ArcFile {
    pub(super) name: String,
    pub(super) size: u64,
    pub(super) sha512: String,
}

/// The container's warcinfo record, which every record written after it names.
pub(super) struct WarcinfoWritten {
    pub(super) id: String,
    pub(super) date: String,
}

/// Migrates `arc` (opened from `input` by [`open_arc`]) into `sinks` (the container named
/// `out_name` in its warcinfo record), then reads what was written back and proves every
/// payload conserved ([`FileReport::conservation`]); the caller keeps the containers only when
/// it is.
pub(crate) fn migrate_into(
    arc: ArcReader,
    input: &Path,
    out_name: &str,
    run: MigrationRun<'_>,
    sinks: &mut dyn RecordSinks,
    report: &mut FileReport,
) -> Result<(), MigrateError> {
    let gzip = arc.is_gzip();
    report.compressed = gzip;
    let watched = WatchedArc::open(&arc, input)?;
    let name = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let content_path = sinks.content_path();
    let out_err = |source| MigrateError::Output { path: content_path.clone(), source };
    let mut log = ExpectationLog::new().map_err(out_err)?;
    let Some(fallback) = fallback_dates(input, run.opts.capture_date)? else {
        return Err(not_arc(input));
    };
    // Drawn before the reader thread draws the records' identifiers.
    let warcinfo_id = run.ids.warc_record_id();
    let mut arc = arc;
    arc.set_stream_digest(run.opts.rebuild_data);
    let mut ctx = MappingContext::new(name.clone(), warcinfo_id.clone(), fallback);
    ctx.rebuild_data = run.opts.rebuild_data;
    // The warcinfo record states the ARC's digest: the ARC is hashed while the reader thread
    // starts on its records, not before.
    let mut head = None;
    let mut first = |sinks: &mut dyn RecordSinks, log: &mut ExpectationLog| {
        let (size, sha512) = watched.digest()?;
        let file = ArcFile { name: name.clone(), size, sha512 };
        let warcinfo = Warcinfo { id: &warcinfo_id, out_name, gzip, ids: run.ids };
        let written = warcinfo.write(&file, sinks, log).map_err(out_err)?;
        head = Some((file, written));
        Ok(())
    };
    let (end, viral_log) = run_migration(arc, ctx, run, sinks, &mut first, &mut log, report);
    let Some((file, warcinfo)) = head else {
        return Err(end.err().unwrap_or_else(|| out_error(io::Error::other("no warcinfo record"))));
    };
    report.input_size = file.size;
    report.input_sha512 = file.sha512.clone();
    *report.records_out.entry("warcinfo".into()).or_default() += 1;
    let mut end = end?;
    watched.unchanged(file.size)?;
    if end.records_with_header == 0 {
        return Err(not_arc(input));
    }
    if run.opts.rebuild_data {
        let rebuild = Rebuild { file: &file, warcinfo: &warcinfo, ids: run.ids };
        rebuild.add(&mut end, sinks, &mut log, report).map_err(out_err)?;
    }
    let bytes_balanced = note_end(end, report);
    sinks.sync().map_err(out_err)?;
    verify_written(sinks, log, viral_log, report)?;
    if !bytes_balanced {
        note_unbalanced(report);
    }
    Ok(())
}

/// The ARC being migrated, watched through the reader's own handle from the start of the run
/// to its end: the size and digest stated are those of the bytes migrated.
struct WatchedArc {
    handle: std::fs::File,
    opened: crate::formats::digest::FileState,
    path: PathBuf,
}

impl WatchedArc {
    fn open(arc: &ArcReader, input: &Path) -> Result<WatchedArc, ArcError> {
        let path = input.to_path_buf();
        let arc_err = |source| ArcError { path: path.clone(), offset: 0, source };
        let handle = arc.file().try_clone().map_err(arc_err)?;
        let opened = crate::formats::digest::FileState::of(&handle).map_err(arc_err)?;
        Ok(WatchedArc { handle, opened, path })
    }

    fn error(&self, source: io::Error) -> ArcError {
        ArcError { path: self.path.clone(), offset: 0, source }
    }

    /// The ARC's size and SHA-512 (hex), read through its handle.
    fn digest(&self) -> Result<(u64, String), ArcError> {
        crate::formats::digest::sha512_at(&self.handle).map_err(|e| self.error(e))
    }

    /// Fails when the ARC changed since the run opened it, or `read` bytes are not all of it.
    fn unchanged(&self, read: u64) -> Result<(), MigrateError> {
        let now = crate::formats::digest::FileState::of(&self.handle).map_err(|e| self.error(e))?;
        Ok(crate::formats::digest::unchanged(self.opened, now, read)?)
    }
}

/// The reader lost track of some input bytes: never call that conserved.
fn note_unbalanced(report: &mut FileReport) {
    report.conservation.conserved = false;
    let mismatch = format!("input bytes not accounted for: {:?}", report.input_bytes);
    report.conservation.mismatches.push(mismatch);
}

/// The container's warcinfo record, saying which ARC it migrates.
struct Warcinfo<'a> {
    /// Its record id.
    id: &'a str,
    /// The container's file name.
    out_name: &'a str,
    /// Whether the ARC is gzip-compressed.
    gzip: bool,
    ids: &'a Ids,
}

impl Warcinfo<'_> {
    /// Writes the record, told to the sinks and the conservation check like any other.
    fn write(
        &self,
        file: &ArcFile,
        sinks: &mut dyn RecordSinks,
        log: &mut ExpectationLog,
    ) -> io::Result<WarcinfoWritten> {
        let Warcinfo { id, out_name, gzip, ids } = *self;
        let format = if gzip { "ARC, gzip-compressed" } else { "ARC, uncompressed" };
        let (spec, body) = crate::formats::warc::writer::warcinfo(
            id,
            ids.now(),
            out_name,
            "ARC to WARC migration; one WARC record per ARC record, payload bytes unchanged",
            &[
                ("source-file", file.name.clone()),
                ("source-format", format.into()),
                ("source-size", file.size.to_string()),
                ("source-sha512", file.sha512.clone()),
            ],
        );
        let written = sinks.content().write_record(&spec, &body, 0)?;
        log.push(&Expected::new(&written, false))?;
        let date = spec.date.clone();
        sinks.written(&MigratedRecord::made_here(
            spec,
            "application/warc-fields".into(),
            written,
        ))?;
        Ok(WarcinfoWritten { id: id.to_string(), date })
    }
}

/// The rebuild record of one migrated ARC (`docs/arc-rebuild.md`): what it is written from.
struct Rebuild<'a> {
    file: &'a ArcFile,
    warcinfo: &'a WarcinfoWritten,
    ids: &'a Ids,
}

impl Rebuild<'_> {
    /// Writes the rebuild record after the ARC's last one and says in the report whether the
    /// ARC can be rebuilt (an anomaly when it cannot).
    fn add(
        &self,
        end: &mut End,
        sinks: &mut dyn RecordSinks,
        log: &mut ExpectationLog,
        report: &mut FileReport,
    ) -> io::Result<()> {
        let summary = rebuild_summary(self.file, end);
        let written = write_rebuild_record(&summary, self.warcinfo, self.ids, sinks, log)?;
        *report.records_out.entry("metadata".into()).or_default() += 1;
        let mut rebuild = rebuild_report(&summary, end.rebuild_field_bytes + written);
        // Revisits of another package's records: the ARC comes back only with it.
        rebuild.requires_packages = (report.dedup.packages.keys())
            .filter_map(|h| match h {
                crate::stages::dedup::Holder::Package(objid) => Some(objid.clone()),
                _ => None,
            })
            .collect();
        report.rebuild = Some(rebuild);
        if !summary.rebuildable() {
            report.add_anomaly(Anomaly {
                location: Location { member: None, offset: 0 },
                kind: AnomalyKind::NotRebuildable,
                severity: Severity::Warning,
                detail: format!("the ARC cannot be rebuilt: {}", summary.reasons.join("; ")),
            });
        }
        Ok(())
    }
}

/// What the reader knew at the end, into the report: the ARC's version, its file anomalies
/// and where every input byte went. Whether those bytes balance.
fn note_end(end: End, report: &mut FileReport) -> bool {
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
    bytes_balanced
}

/// Reads the containers written back and compares every payload with what was expected
/// (`log`, and `viral_log` for the quarantine): the report's conservation, quarantine and
/// output size and digest.
fn verify_written(
    sinks: &dyn RecordSinks,
    log: ExpectationLog,
    viral_log: Option<ExpectationLog>,
    report: &mut FileReport,
) -> Result<(), MigrateError> {
    let out_err = |path: PathBuf| move |source| MigrateError::Output { path, source };
    let content_path = sinks.content_path();
    let verified = verify_container(&content_path, log).map_err(out_err(content_path.clone()))?;
    report.conservation = verified.conservation;
    // Infected records are conserved too, in the viral container: checked the same way, and
    // counted with the others.
    if let (Some(path), Some(vlog)) = (sinks.viral_path(), viral_log) {
        let v = verify_container(&path, vlog).map_err(out_err(path.clone()))?;
        let c = &mut report.conservation;
        c.records_compared += v.conservation.records_compared;
        c.payload_bytes_in += v.conservation.payload_bytes_in;
        c.payload_bytes_out += v.conservation.payload_bytes_out;
        c.mismatches.extend(v.conservation.mismatches.into_iter().map(|m| format!("viral: {m}")));
        c.conserved &= v.conservation.conserved;
        report.quarantine = Some(report::QuarantineReport {
            path,
            records: report.quarantined,
            size: v.size,
            sha512: v.sha512,
        });
    }
    report.output_size = verified.size;
    report.output_sha512 = Some(verified.sha512);
    Ok(())
}

/// The pipeline every source goes through: the scan stage sees each batch before anything of
/// it is written, and routes an infected record to the quarantine; it is last, so that it
/// overlaps the sink's compression. Deduplication before the scan, as for a copied WARC: the
/// writer keeps whole a record the scan sends to the quarantine. Identification is no stage of
/// the writer's here: it runs ahead, on a thread of its own (`ahead`), and its results come
/// with the records.
struct MigrationStages<'a> {
    dedup: Option<DedupStage<'a>>,
    scan: Option<ScanStage>,
}

impl<'a> MigrationStages<'a> {
    /// The stages `opts` asks for.
    fn of(opts: &'a MigrateOptions) -> Self {
        MigrationStages {
            dedup: opts.dedup.as_ref().map(|d| DedupStage::new(&d.dedup, d.container.clone())),
            scan: opts.scanner.as_ref().map(|e| ScanStage::new(Arc::clone(e))),
        }
    }

    /// Those there are, in the pipeline's order.
    fn in_order(&mut self) -> Vec<&mut dyn Stage> {
        let mut stages: Vec<&mut dyn Stage> = Vec::new();
        if let Some(s) = self.dedup.as_mut() {
            stages.push(s);
        }
        if let Some(s) = self.scan.as_mut() {
            stages.push(s);
        }
        stages
    }
}

/// Writes a container's first record (its warcinfo) while the reader thread starts.
type FirstRecord<'a> =
    &'a mut dyn FnMut(&mut dyn RecordSinks, &mut ExpectationLog) -> Result<(), MigrateError>;

/// Runs the reader thread and the pipeline over one ARC, once `first` has written the
/// container's first record: what the reader knew at the end, and the quarantine's
/// expectation log when it was opened.
fn run_migration(
    arc: ArcReader,
    ctx: MappingContext,
    run: MigrationRun<'_>,
    sinks: &mut dyn RecordSinks,
    first: FirstRecord<'_>,
    log: &mut ExpectationLog,
    report: &mut FileReport,
) -> (Result<End, MigrateError>, Option<ExpectationLog>) {
    // With identification ahead of the writer, its thread holds the batch the channel would.
    let (tx, rx) =
        sync_channel::<Msg>(if run.opts.identify.is_some() { 0 } else { CHANNEL_BATCHES });
    // The records the writer adds (the quarantine's warcinfo, cleaned copies) draw their
    // identifiers from a sequence of their own: the reader thread draws from `ids` as it runs
    // ahead, and a deterministic run must not depend on how far ahead it is.
    let MigrationRun { opts, ids, progress } = run;
    let writer_ids = ids.derive("records the writer adds");
    let level = opts.level;
    let (arc_path, scanning) = (arc.path().to_path_buf(), opts.scanner.is_some());
    std::thread::scope(|scope| {
        scope.spawn(move || read_records(arc, ctx, ids, tx, progress));
        let rx = match opts.identify {
            Some(identifier) => ahead::identify_ahead(scope, identifier, &arc_path, rx),
            None => rx,
        };
        if let Err(e) = first(&mut *sinks, &mut *log) {
            // The reader, blocked on a full channel, finds no receiver and ends.
            drop(rx);
            return (Err(e), None);
        }
        let mut out = Output {
            sinks: &mut *sinks,
            log,
            level,
            report,
            scanner: opts.scanner.as_ref(),
            quarantine: opts.quarantine.as_ref().map(|q| Viral {
                to: q,
                ids: &writer_ids,
                log: None,
            }),
            last: None,
            encoded: Default::default(),
            within: opts.dedup.as_ref().is_some_and(|d| d.dedup.within),
            originals: Default::default(),
        };
        let mut stages = MigrationStages::of(opts);
        let mut end = None;
        let piped = crate::stages::run_pipeline(
            &mut |batch| receive(&rx, batch, scanning, &mut end),
            &mut stages.in_order(),
            &mut out,
        );
        if let Some(e) = end.as_mut() {
            out.report.identified = std::mem::take(&mut e.identified);
        }
        // Dropped before the scope joins the reader: a reader blocked on a full channel after
        // the pipeline stopped (clamd failed) then finds no receiver and ends.
        drop(rx);
        let end = piped.and_then(|()| {
            end.ok_or_else(|| out_error(io::Error::other("the ARC reader gave no end")))
        });
        (end, out.quarantine.and_then(|q| q.log))
    })
}

/// Sets Unix permission bits.
pub(crate) fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// A WARC (or anything that is plainly not ARC) is refused with a message saying what it is.
fn refuse_non_arc(input: &Path, arc: &ArcReader) -> Result<(), MigrateError> {
    let f = File::open(input).map_err(|source| ArcError {
        path: input.to_path_buf(),
        offset: 0,
        source,
    })?;
    // Damage past the first bytes is the ARC reader's to report, not this check's.
    let head = record_head(f, arc.is_gzip(), 5).unwrap_or_default();
    if head == b"WARC/" {
        return Err(MigrateError::NotArc { path: input.to_path_buf(), reason: NotArcReason::Warc });
    }
    Ok(())
}

fn not_arc(input: &Path) -> MigrateError {
    MigrateError::NotArc { path: input.to_path_buf(), reason: NotArcReason::NoRecordHeader }
}

enum Msg {
    /// Records small enough to compress in memory, in order.
    Batch(Vec<MappedRecord>),
    /// One record to stream.
    Large(Box<MappedRecord>),
    /// Records staged, in order, identified ahead of the writer (`ahead`).
    Staged(Vec<StagedItem>),
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
    /// Record-less members after the last record, why the ARC cannot be rebuilt, and the
    /// stream's length and SHA-512 (gzip input).
    rebuild: crate::formats::arc::RebuildEnd,
    /// Bytes of `X-Webaip-ARC-Rebuild` fields written.
    rebuild_field_bytes: u64,
    /// What identification ahead of the writer found, counted (empty when there was none).
    identified: crate::stages::identify::Tally,
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
    let mut batch = Batcher { tx: &tx, records: Vec::new(), bytes: 0 };
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
        let job = match map_record(&arc, &mut ctx, rec, ids) {
            Ok(job) => job,
            Err(e) => {
                let _ = tx.send(Msg::Failed(e));
                return;
            }
        };
        if batch.push(job).is_err() {
            return;
        }
    }
    if batch.flush().is_err() {
        return;
    }
    let consumed = arc.file_len();
    if consumed > reported {
        progress(consumed - reported);
    }
    let _ = tx.send(Msg::Done(Box::new(End::of(&mut arc, &ctx, with_header))));
}

/// Reads a framed record's block (in memory up to [`WHOLE_BLOCK_MAX`], else a range of the file
/// to stream) and maps it to its WARC record (`ids` draws its record id).
fn map_record(
    arc: &ArcReader,
    ctx: &mut MappingContext,
    rec: crate::formats::arc::ArcRecord,
    ids: &Ids,
) -> Result<MappedRecord, MigrateError> {
    let whole = rec.kind == RecordKind::Filedesc;
    let range = if whole { arc.shared_record(&rec) } else { arc.shared_body(&rec) };
    let prepared = (|| -> io::Result<(RecordBlock, Vec<u8>)> {
        if range.len() <= WHOLE_BLOCK_MAX {
            let bytes = range.to_vec()?;
            let head_end = bytes.len().min(MAX_HTTP_HEADER_LEN);
            let head = if whole { Vec::new() } else { bytes[..head_end].to_vec() };
            Ok((RecordBlock::Inline(bytes), head))
        } else {
            let head = if whole { Vec::new() } else { range.prefix(MAX_HTTP_HEADER_LEN)? };
            Ok((RecordBlock::Shared(range.clone()), head))
        }
    })();
    let (block, head) = prepared.map_err(|source| {
        let offset = rec.location.member.unwrap_or(rec.location.offset);
        ArcError { path: arc.path().to_path_buf(), offset, source }
    })?;
    let mapped =
        ctx.map(&rec, &head, ids.warc_record_id()).map_err(|NoDate { location, date_raw }| {
            MigrateError::NoDate {
                path: arc.path().to_path_buf(),
                location,
                date: date_raw
                    .map_or_else(|| "none: bytes that are no record".into(), |d| format!("{d:?}")),
            }
        })?;
    Ok(MappedRecord { mapped, block, location: rec.location, anomalies: rec.anomalies })
}

/// Records in memory gathered into the batches the pipeline's stages see (the scan among
/// them), up to [`MIGRATION_BATCH_BYTES`] or `batching::BATCH_ITEMS` records; a record to
/// stream goes on its own, after the batch before it. Each record is compressed on its own,
/// so where a batch ends never changes the bytes written.
struct Batcher<'a> {
    tx: &'a SyncSender<Msg>,
    records: Vec<MappedRecord>,
    bytes: u64,
}

impl Batcher<'_> {
    /// Sends on `job` in order; an error once the writer is gone.
    fn push(&mut self, job: MappedRecord) -> Result<(), std::sync::mpsc::SendError<Msg>> {
        match job.block {
            RecordBlock::Inline(ref b) => {
                self.bytes += b.len() as u64;
                self.records.push(job);
                let full = self.records.len() >= batching::BATCH_ITEMS;
                if full || self.bytes >= MIGRATION_BATCH_BYTES {
                    return self.flush();
                }
                Ok(())
            }
            RecordBlock::Shared(_) => {
                self.flush()?;
                self.tx.send(Msg::Large(Box::new(job)))
            }
        }
    }

    /// Sends the batch gathered so far, if any.
    fn flush(&mut self) -> Result<(), std::sync::mpsc::SendError<Msg>> {
        self.bytes = 0;
        if self.records.is_empty() {
            return Ok(());
        }
        self.tx.send(Msg::Batch(std::mem::take(&mut self.records)))
    }
}

impl End {
    /// What `arc` knows once read to its end (`with_header`: its records with a header).
    fn of(arc: &mut ArcReader, ctx: &MappingContext, with_header: u64) -> End {
        End {
            rebuild: arc.rebuild_end(),
            rebuild_field_bytes: ctx.rebuild_field_bytes,
            file_anomalies: arc.file_anomalies().to_vec(),
            unlisted: arc
                .unlisted_file_anomalies()
                .iter()
                .map(|(k, (s, n))| (*k, *s, *n))
                .collect(),
            bytes: arc.byte_account().clone(),
            gzip: arc.is_gzip(),
            version: arc.version(),
            version_label: arc.version_label().map(str::to_string),
            records_with_header: with_header,
            identified: Default::default(),
        }
    }
}

/// The quarantine of one migration: the viral container is created by the sinks when the first
/// infected record comes; its warcinfo record and what the conservation check will verify in
/// it are the migration's.
struct Viral<'a> {
    to: &'a Quarantine,
    ids: &'a Ids,
    log: Option<ExpectationLog>,
}

/// The writer side of one container: where records go, in order.
struct Output<'a> {
    /// The containers written, and who is told of each record.
    sinks: &'a mut dyn RecordSinks,
    /// What the conservation check will verify.
    log: &'a mut ExpectationLog,
    level: u32,
    report: &'a mut FileReport,
    scanner: Option<&'a Arc<ScanEngine>>,
    quarantine: Option<Viral<'a>>,
    /// The record quarantined last, for the cleaner's copy that follows it.
    last: Option<LastQuarantined>,
    /// The batches prepared and not yet written, compressed (records too large to hold, and
    /// revisits: `None`), oldest first.
    encoded: std::collections::VecDeque<Vec<Option<io::Result<EncodedRecord>>>>,
    /// `--dedup-within`: revisits of this container's own records are written.
    within: bool,
    /// With `within`: where the first response of each payload went (its member, and the
    /// payload's offset in it), for the METS entries of its revisits.
    originals: std::collections::HashMap<DigestKey, (crate::model::ByteRange, u64)>,
}

impl Output<'_> {
    /// The viral container's writer and its expectation log; on first use, its warcinfo
    /// record is written.
    fn viral(
        &mut self,
    ) -> Result<(&mut WarcWriter<BufWriter<File>>, &mut ExpectationLog), MigrateError> {
        let q =
            self.quarantine.as_mut().ok_or_else(|| out_error(io::Error::other("quarantine")))?;
        let path = &q.to.path;
        let err = |source| MigrateError::Output { path: path.clone(), source };
        let (writer, created) = self.sinks.viral().map_err(err)?;
        if created {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let (spec, body) = crate::formats::warc::writer::warcinfo(
                &q.ids.warc_record_id(),
                q.ids.now(),
                name.as_deref().unwrap_or_default(),
                "records of an ARC migration whose payload clamd found infected, written here \
                 instead of the migrated container",
                &[],
            );
            let mut log = ExpectationLog::new().map_err(err)?;
            let w = writer.write_record(&spec, &body, 0).map_err(err)?;
            log.push(&Expected::new(&w, false)).map_err(err)?;
            q.log = Some(log);
        }
        let log = q.log.as_mut().ok_or_else(|| out_error(io::Error::other("viral log")))?;
        Ok((writer, log))
    }
}

/// A record of the reader's as it enters the stages: with a scanner (`scanning`), its payload,
/// when in memory, held for the scan stage.
fn staged(r: MappedRecord, scanning: bool) -> StagedItem {
    held(StagedItem::new(Item::Mapped(Box::new(r)), None, None), scanning)
}

/// A staged record, its payload held for the scan stage when there is one (`scanning`) and it
/// is in memory.
fn held(mut s: StagedItem, scanning: bool) -> StagedItem {
    if let (true, Item::Mapped(m)) = (scanning, &s.item) {
        s.held = m.payload_bytes().map(<[u8]>::to_vec);
    }
    s
}

/// Takes the next batch from the reader thread into `batch`: true once the file is read
/// (what the reader knows then is put in `end`). With a scanner (`scanning`), each payload in
/// memory is held for the scan stage.
fn receive(
    rx: &Receiver<Msg>,
    batch: &mut Vec<StagedItem>,
    scanning: bool,
    end: &mut Option<End>,
) -> Result<bool, MigrateError> {
    match rx.recv() {
        Ok(Msg::Batch(records)) => batch.extend(records.into_iter().map(|r| staged(r, scanning))),
        Ok(Msg::Large(record)) => batch.push(staged(*record, scanning)),
        Ok(Msg::Staged(items)) => batch.extend(items.into_iter().map(|s| held(s, scanning))),
        Ok(Msg::Done(e)) => {
            *end = Some(*e);
            return Ok(true);
        }
        Ok(Msg::Failed(e)) => return Err(e),
        Err(_) => {
            return Err(MigrateError::Output {
                path: PathBuf::from("(reader thread)"),
                source: io::Error::other("the ARC reader stopped unexpectedly"),
            });
        }
    }
    Ok(false)
}

fn out_error(source: io::Error) -> MigrateError {
    MigrateError::Output { path: PathBuf::from("(output container)"), source }
}

impl From<crate::stages::StageError> for MigrateError {
    fn from(e: crate::stages::StageError) -> Self {
        use crate::stages::StageError;
        match e {
            // The error names the file around this; a record streamed alone, by its offset.
            StageError::Scan(e) => MigrateError::Scan(e),
            StageError::ScanOf { origin, source } => MigrateError::ScanOf { origin, source },
            StageError::Io { path, source } => {
                MigrateError::Arc(ArcError { path: PathBuf::from(path), offset: 0, source })
            }
            StageError::LinkMap { file, source } => {
                MigrateError::Output { path: PathBuf::from(file), source: io::Error::other(source) }
            }
            // `migrate` runs no dedup stage; were one added, its table error stays whole.
            StageError::Dedup { origin, source } => MigrateError::Output {
                path: PathBuf::from(origin),
                source: io::Error::other(source),
            },
        }
    }
}

impl BatchSink<MigrateError> for Output<'_> {
    /// Hashes and compresses the records held in memory in parallel (each its own gzip
    /// member), while the scan stage finishes: a record is the same bytes whichever container
    /// it goes to.
    fn prepare(&mut self, batch: &[StagedItem]) -> Result<(), MigrateError> {
        let level = self.level;
        let encoded = batch
            .par_iter()
            .map(|s| match &s.item {
                // A revisit is written without its payload: nothing of it to compress here.
                Item::Mapped(_) if s.revisit.is_some() => None,
                Item::Mapped(m) => match &m.block {
                    RecordBlock::Inline(bytes) => {
                        Some(encode_record(&m.mapped.spec, bytes, m.mapped.payload_offset, level))
                    }
                    RecordBlock::Shared(_) => None,
                },
                _ => None,
            })
            .collect();
        self.encoded.push_back(encoded);
        Ok(())
    }

    fn overlaps(&self) -> bool {
        true
    }

    /// Writes a batch, in order: records compressed by `prepare` as they are, larger ones
    /// streamed. Each goes where the scan stage routed it: an infected record to
    /// the quarantine when there is one, followed by a cleaner's copy.
    fn write(&mut self, batch: &mut Vec<StagedItem>) -> Result<(), MigrateError> {
        let encoded = self.encoded.pop_front().unwrap_or_default();
        if encoded.len() != batch.len() {
            return Err(out_error(io::Error::other("a batch written without being prepared")));
        }
        for (s, encoded) in batch.drain(..).zip(encoded) {
            let StagedItem { item, route, findings, identification, revisit, .. } = s;
            let Item::Mapped(m) = item else {
                return Err(out_error(io::Error::other("an item that is no ARC record")));
            };
            let verdict = match findings.into_iter().next() {
                Some(ScanFinding::Infected(sig)) => Some(ScanResult::Infected(sig)),
                Some(ScanFinding::NotScanned(why)) => Some(ScanResult::NotScanned(why)),
                None if self.scanner.is_some() && m.payload_len() > 0 => Some(ScanResult::Clean),
                None => None,
            };
            let quarantined = route == Route::Viral && self.quarantine.is_some();
            match revisit.filter(|_| !quarantined) {
                Some(r) => self.write_revisit(*m, &r, (verdict, identification))?,
                None => self.write_record(*m, encoded, (verdict, identification), quarantined)?,
            }
        }
        Ok(())
    }
}

impl Output<'_> {
    /// Writes one record to the output, or to the quarantine; a cleaner, when there is one,
    /// gets a quarantined payload as a file of its own (it may be larger than memory).
    fn write_record(
        &mut self,
        m: MappedRecord,
        encoded: Option<io::Result<EncodedRecord>>,
        (verdict, identification): (Option<ScanResult>, Option<crate::model::Identification>),
        quarantined: bool,
    ) -> Result<(), MigrateError> {
        let level = self.level;
        let (writer, log) = match quarantined {
            true => self.viral()?,
            false => (self.sinks.content(), &mut *self.log),
        };
        let written = match (encoded, &m.block) {
            (Some(e), _) => writer.write_encoded(e.map_err(out_error)?),
            (None, RecordBlock::Shared(range)) => {
                writer.write_streamed(&m.mapped.spec, range.reader(), m.mapped.payload_offset)
            }
            // A revisit the scan sent to the quarantine: written whole after all.
            (None, RecordBlock::Inline(bytes)) => {
                encode_record(&m.mapped.spec, bytes, m.mapped.payload_offset, level)
                    .and_then(|e| writer.write_encoded(e))
            }
        }
        .map_err(out_error)?;
        log.push(&Expected::new(&written, true)).map_err(out_error)?;
        // Now that the payload is hashed, identical later payloads can take its verdict.
        if let (Some(v), Some(s)) = (&verdict, self.scanner) {
            s.remember(&written.digests.payload_sha512, v);
        }
        if !quarantined {
            let found = (verdict, identification);
            return self.finish_record(m, written, None, found, Written::Output);
        }
        let infected_payload = match self.has_cleaner() {
            true => {
                let mut tmp = tempfile::NamedTempFile::new().map_err(out_error)?;
                let mut payload = m.payload_reader().map_err(out_error)?;
                io::copy(&mut payload, tmp.as_file_mut()).map_err(out_error)?;
                drop(payload);
                Some(tmp)
            }
            false => None,
        };
        let found = (verdict, identification);
        self.finish_record(m, written, None, found, Written::Quarantine)?;
        match infected_payload {
            Some(tmp) => self.clean_file(tmp.path()),
            None => Ok(()),
        }
    }

    /// Writes a record whose payload is stored already as its revisit (`revisit`), to the
    /// output: the conservation check expects its block, and its payload digest the stored
    /// payload's.
    fn write_revisit(
        &mut self,
        m: MappedRecord,
        revisit: &crate::stages::dedup::Revisit,
        found: (Option<ScanResult>, Option<crate::model::Identification>),
    ) -> Result<(), MigrateError> {
        let spec = revisit::revisit_spec(&m, revisit).map_err(out_error)?;
        let block = revisit::http_header(&m).map_err(out_error)?;
        let written = self
            .sinks
            .content()
            .write_record(&spec, &block, block.len() as u64)
            .map_err(out_error)?;
        let mut expected = Expected::new(&written, true);
        expected.payload_sha1.copy_from_slice(&revisit.digest.0[1..21]);
        self.log.push(&expected).map_err(out_error)?;
        let len = m.payload_len();
        let t = &mut self.report.dedup;
        t.revisits += 1;
        t.payload_bytes += len;
        *t.packages.entry(crate::stages::dedup::Holder::of(revisit)).or_default() += 1;
        let own = revisit.own.then(|| self.originals.get(&revisit.digest)).flatten().copied();
        let refers = revisit.referenced(own, len, &m.mapped.payload_mime);
        self.finish_record(m, written, Some(Box::new(refers)), found, Written::Output)
    }

    /// With `--dedup-within`, keeps where the first response of each payload went, for the
    /// METS entries of its revisits.
    fn note_original(&mut self, r: &MigratedRecord) {
        let d = &r.written.digests;
        if !self.within || r.warc_type != "response" || d.payload_len == 0 {
            return;
        }
        if let Some(key) = DigestKey::new(Algorithm::Sha1, &d.payload_sha1) {
            let w = &r.written;
            let member = crate::model::ByteRange { begin: w.member_offset, len: w.member_len };
            self.originals.entry(key).or_insert((member, w.payload_offset));
        }
    }

    fn has_cleaner(&self) -> bool {
        self.quarantine.as_ref().is_some_and(|q| q.to.cleaner.is_some())
    }

    /// Runs the quarantine's cleaner on an infected payload just quarantined (in the file
    /// `infected`); a copy that scans clean is written to the output in its place, as a
    /// `resource` record.
    fn clean_file(&mut self, infected: &Path) -> Result<(), MigrateError> {
        let (Some(q), Some(engine)) = (&self.quarantine, self.scanner) else { return Ok(()) };
        let Some(cmd) = &q.to.cleaner else { return Ok(()) };
        let ids = q.ids;
        let copy = crate::stages::scan::clean_copy(cmd, infected, engine);
        let copy = copy.map_err(|e| match e {
            crate::stages::scan::CleanOrScanError::Clean(e) => MigrateError::Clean(e),
            crate::stages::scan::CleanOrScanError::Scan(e) => MigrateError::Scan(e),
        })?;
        let bytes = match copy {
            Ok(bytes) => bytes,
            Err(why) => {
                let record = self.last.as_ref().map_or("", |l| l.record_id.as_str());
                self.report.not_cleaned.push((record.to_string(), why.to_string()));
                return Ok(());
            }
        };
        // The record just quarantined is the last one the sink was given.
        let Some(orig) = self.last.take() else { return Ok(()) };
        let spec = crate::formats::warc::writer::cleaned_copy_spec(
            ids.warc_record_id(),
            &orig.record_id,
            (orig.target_uri.clone(), orig.date.clone()),
            orig.payload_mime.clone(),
        );
        let written = self.sinks.content().write_record(&spec, &bytes, 0).map_err(out_error)?;
        self.log.push(&Expected::new(&written, false)).map_err(out_error)?;
        *self.report.records_out.entry("resource".into()).or_default() += 1;
        self.sinks
            .written(&MigratedRecord {
                source: None,
                input_kind: None,
                warc_type: spec.warc_type,
                target_uri: spec.target_uri,
                content_type: spec.content_type,
                payload_mime: orig.payload_mime,
                date: spec.date,
                date_source: orig.date_source,
                written,
                scan: Some(ScanResult::Clean),
                container: Written::Output,
                cleaned_from: Some(orig.record_id),
                identification: None,
                refers: None,
            })
            .map_err(out_error)
    }

    fn finish_record(
        &mut self,
        job: MappedRecord,
        written: WrittenRecord,
        refers: Option<Box<crate::model::ReferencedPayload>>,
        (scan, identification): (Option<ScanResult>, Option<crate::model::Identification>),
        container: Written,
    ) -> Result<(), MigrateError> {
        let m = job.mapped;
        let report = &mut *self.report;
        *report.records_in.entry(m.input_kind.as_str().into()).or_default() += 1;
        *report.records_out.entry(m.spec.warc_type.clone()).or_default() += 1;
        if container == Written::Quarantine {
            report.quarantined += 1;
        }
        for a in job.anomalies.into_iter().chain(m.anomalies) {
            report.add_anomaly(a);
        }
        if m.date_source.is_inferred() {
            report.add_inferred_date(m.date_source, job.location, &m.spec.date);
        }
        let record = MigratedRecord {
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
            container,
            cleaned_from: None,
            identification,
            refers,
        };
        if container == Written::Output && record.refers.is_none() {
            self.note_original(&record);
        }
        self.sinks.written(&record).map_err(out_error)?;
        if container == Written::Quarantine {
            self.last = Some(LastQuarantined {
                record_id: record.written.record_id.trim_matches(['<', '>']).to_string(),
                date: record.date,
                target_uri: record.target_uri,
                payload_mime: record.payload_mime,
                date_source: record.date_source,
            });
        }
        Ok(())
    }
}

/// What a cleaned copy takes from the infected record it replaces.
struct LastQuarantined {
    record_id: String,
    date: String,
    target_uri: Option<String>,
    payload_mime: String,
    date_source: Option<DateSource>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warc_plain_or_gzipped_is_refused_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let warc = b"WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut gz, warc).unwrap();
        let gz = gz.finish().unwrap();
        for (name, bytes) in [("a.arc", &warc[..]), ("b.arc.gz", &gz[..])] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let Err(err) = open_arc(&path) else { panic!("{name} taken for an ARC") };
            assert!(
                matches!(&err, MigrateError::NotArc { path: p, reason: NotArcReason::Warc } if *p == path),
                "{err:?}"
            );
        }
        // An ARC's own first bytes are not taken for a WARC.
        let arc = dir.path().join("c.arc");
        std::fs::write(&arc, b"filedesc://c.arc 0.0.0.0 20240101000000 text/plain 0\n").unwrap();
        assert!(open_arc(&arc).is_ok());
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
}
