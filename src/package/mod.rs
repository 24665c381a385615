//! `webaip package`: a harvest becomes a complete submission package.
//!
//! Every source goes through the pipeline of ARCHITECTURE.md (`stages::run_pipeline`):
//! ARC and WARC files of a Heritrix job or a list (`archives`: ARC records migrated, WARC
//! records copied byte-exact), and the sources that yield captures ([`captures`]: PANDAS,
//! mirrors, NEDLIB, Kulturarw3). Virus checking says what it found in one place
//! (`quarantine`), the containers are written by one sink (`sink`), and every run gives one
//! report ([`PackageReport`]).
//!
//! The package is assembled in a hidden directory beside `--out` (`.NAME.XXXX.partial`,
//! `staging`) and renamed only when complete, so a failed or killed run leaves nothing that
//! looks like a package; an existing package is replaced only with `force`.

mod archives;
pub mod captures;
mod context;
pub(crate) mod copy;
mod deduplicated;
pub mod entities;
pub(crate) mod error;
pub mod pandas;
pub(crate) mod quarantine;
pub(crate) mod report;
mod sink;
pub(crate) mod staging;

pub use archives::build_package;
pub use deduplicated::saved_text as dedup_saved_text;
pub use error::{MigrationFailure, PackageError};
pub use quarantine::ScanSummary;
pub use report::{
    CaptureCounts, ContainerReport, CrawlLogComparison, DedupReport, IdentificationReport,
    InstanceReport, PackageReport, WarcFinding,
};

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use crate::formats::digest::Sha512;
use chrono::{DateTime, Utc};
use rayon::prelude::*;

use crate::formats::digest::hex;
use crate::layout;
use crate::metadata::CuratorMetadata;
use crate::mets::MetsBuilder;
use crate::model::*;
use crate::profile::Profile;
use context::{EventOutcome, PackageRun};

/// Examples listed per crawl-log discrepancy.
pub(crate) const MAX_EXAMPLES: usize = 100;

/// How virus checking is done.
#[derive(Debug, Clone)]
pub enum VirusCheck {
    /// Not done: recorded as one `not scanned` event on every container, and flagged.
    Disabled,
    /// Every payload streamed to this clamd.
    Clamd(crate::stages::scan::Clamd),
    /// Every payload streamed to this engine's clamd, on its threads: one engine shared by
    /// the packages of a batch (each with its own verdicts and counts).
    Shared(std::sync::Arc<crate::stages::scan::ScanEngine>),
}

impl VirusCheck {
    /// The same check over one engine, for many packages: a clamd made an engine once.
    pub fn shared(self) -> Result<VirusCheck, crate::stages::scan::ScanError> {
        Ok(match self {
            VirusCheck::Clamd(c) => VirusCheck::Shared(crate::stages::scan::ScanEngine::new(c)?),
            other => other,
        })
    }

    /// The engine of one package run (`None` without virus checking).
    pub(crate) fn engine(
        &self,
    ) -> Result<
        Option<std::sync::Arc<crate::stages::scan::ScanEngine>>,
        crate::stages::scan::ScanError,
    > {
        Ok(match self {
            VirusCheck::Disabled => None,
            VirusCheck::Clamd(c) => Some(crate::stages::scan::ScanEngine::new(c.clone())?),
            VirusCheck::Shared(e) => Some(e.for_package()),
        })
    }
}

/// Options of `webaip package`.
#[derive(Debug, Clone)]
pub struct PackageOptions {
    /// The package directory to create.
    pub out: PathBuf,
    /// The curator's metadata.
    pub metadata: CuratorMetadata,
    /// The profile.
    pub profile: Profile,
    /// Minimal or full METS.
    pub mode: SerializationMode,
    /// gzip level of migrated containers.
    pub level: u32,
    /// Replace an existing package.
    pub force: bool,
    /// Fixed clock and seeded identifiers.
    pub deterministic: bool,
    /// Virus checking.
    pub virus_check: VirusCheck,
    /// Schema directory for validating the METS written (skipped when `None`).
    pub schemas: Option<PathBuf>,
    /// A command that tries to clean an infected file: run as `CMD INFECTED CLEANED` (through
    /// `sh -c`); when it exits 0 within its time and the copy it wrote scans clean, the copy
    /// is packaged.
    pub cleaner: Option<crate::stages::scan::Cleaner>,
    /// The capture date of records whose own date is unusable and that nothing else in their
    /// file dates (`--capture-date`; see the migration's date fallbacks).
    pub capture_date: Option<chrono::DateTime<chrono::Utc>>,
    /// Describe every harvested seed URL as a webpage (`--describe-seeds`), titled from its
    /// HTML `<title>` and dated by its capture.
    pub describe_seeds: bool,
    /// PRONOM identification of payloads (`--identify`): what the package records of it.
    pub identify: crate::stages::identify::IdentifyMode,
    /// The access index made as the `content/` containers are written (`--index`): every
    /// record's line is added to it as the container writer writes the record.
    pub index: Option<crate::index::tap::SharedIndex>,
    /// Deduplication (`--dedup-against`, `--dedup-within`): responses of copied WARCs and
    /// migrated ARCs whose payload is stored already are written as revisits.
    pub dedup: Option<std::sync::Arc<crate::stages::dedup::Dedup>>,
    /// How the source is read: time zone, NEDLIB dates, a mirror's site URL and zip bound.
    pub reading: crate::sources::open::ReadOptions,
}

/// The options of `webaip package` without flags: the default profile and its serialization,
/// the default zlib level, PRONOM identification of described payloads, and no virus check
/// (recorded as `not scanned` on every container, and flagged: set [`VirusCheck::Clamd`] to
/// scan). `out` is empty: say where with `Packager::out` or [`PackageOptions::out`].
impl Default for PackageOptions {
    fn default() -> Self {
        let profile = Profile::default_profile();
        PackageOptions {
            out: PathBuf::new(),
            metadata: CuratorMetadata::default(),
            mode: profile.serialization,
            profile,
            level: crate::migrate::DEFAULT_LEVEL,
            force: false,
            deterministic: false,
            virus_check: VirusCheck::Disabled,
            schemas: None,
            cleaner: None,
            capture_date: None,
            describe_seeds: false,
            identify: crate::stages::identify::IdentifyMode::Described,
            index: None,
            dedup: None,
            reading: Default::default(),
        }
    }
}

/// Builder-style setters, one per option: `PackageOptions::default().deterministic(true)`.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        impl PackageOptions {
            $($(#[$doc])* pub fn $name(mut self, $name: $ty) -> Self {
                self.$name = $name;
                self
            })*
        }
    };
}

setters! {
    /// The package directory to create.
    out: PathBuf;
    /// The curator's metadata.
    metadata: CuratorMetadata;
    /// Minimal or full METS (after [`PackageOptions::profile`], which sets its own).
    mode: SerializationMode;
    /// zlib level of migrated containers (0-9).
    level: u32;
    /// Replace an existing package.
    force: bool;
    /// Fixed clock and seeded identifiers: two runs give byte-identical packages.
    deterministic: bool;
    /// Virus checking.
    virus_check: VirusCheck;
    /// Schema directory replacing the built-in schemas.
    schemas: Option<PathBuf>;
    /// A command that tries to clean an infected file.
    cleaner: Option<crate::stages::scan::Cleaner>;
    /// The capture date of what nothing else dates.
    capture_date: Option<chrono::DateTime<chrono::Utc>>;
    /// Describe every harvested seed URL as a webpage.
    describe_seeds: bool;
    /// PRONOM identification of payloads.
    identify: crate::stages::identify::IdentifyMode;
    /// Deduplication against stored payloads, or within the run.
    dedup: Option<std::sync::Arc<crate::stages::dedup::Dedup>>;
    /// How the source is read.
    reading: crate::sources::open::ReadOptions;
}

impl PackageOptions {
    /// The profile, and its serialization mode (a later [`PackageOptions::mode`] overrides it).
    pub fn profile(mut self, profile: Profile) -> Self {
        self.mode = profile.serialization;
        self.profile = profile;
        self
    }
}

/// Shows the records written to a `content/` container to the package's index, if one is made.
pub(crate) fn tap_index(
    opts_index: Option<&crate::index::tap::SharedIndex>,
    sink: &mut sink::ContainerSink,
) {
    if let Some(index) = opts_index
        && sink.rel.starts_with("content/")
    {
        let tap = crate::index::tap::IndexTap::new(std::sync::Arc::clone(index), sink.rel.clone());
        sink.writer.set_tap(Box::new(tap));
    }
}

/// The webpages and associated objects a package describes: the curator's `[[page]]` tables,
/// then, with `--describe-seeds`, every seed URL the curator did not describe.
pub(crate) fn entities_to_describe(
    opts: &PackageOptions,
    seeds: &[String],
) -> Result<Vec<PageEntity>, PackageError> {
    let mut out = opts.metadata.page_entities().map_err(|e| crate::metadata::MetadataError {
        path: "the metadata file".into(),
        problem: e.into(),
    })?;
    if opts.describe_seeds {
        for seed in seeds {
            let key = crate::pages::url_key(seed);
            if out.iter().any(|e| crate::pages::url_key(&e.url) == key) {
                continue;
            }
            out.push(PageEntity::webpage(seed.clone(), EntityOrigin::Seed));
        }
    }
    Ok(out)
}

/// PRONOM identification for a run, unless `--identify none`: the identifier, its agent
/// registered in the METS header.
pub(crate) fn register_identifier(
    opts: &PackageOptions,
    mets: &mut MetsBuilder,
) -> Result<Option<crate::stages::identify::Identifier>, PackageError> {
    if opts.identify == crate::stages::identify::IdentifyMode::None {
        return Ok(None);
    }
    let identifier = crate::stages::identify::Identifier::shipped()?;
    mets.header_mut().agents.push(identifier.agent());
    Ok(Some(identifier))
}

/// The package's one `format identification` event (with an identifier), linked to its
/// containers: every identified payload is in one of them, and the list stays as short as the
/// package's containers however many payloads there are (each described payload's PREMIS
/// object names the method in its format notes). What the report says of it.
pub(crate) fn identification_event(
    identified: Option<(crate::stages::identify::Identifier, &crate::stages::identify::Tally)>,
    run: PackageRun<'_>,
    containers: Vec<String>,
    mets: &mut MetsBuilder,
) -> Option<IdentificationReport> {
    let (identifier, tally) = identified?;
    let objects = containers.into_iter().map(|c| ("local".into(), c, "source".into())).collect();
    mets.add_package_event(identifier.event(run.ids, run.now, tally, objects));
    Some(IdentificationReport {
        method: identifier.method(),
        summary: tally.summary(),
        tally: tally.clone(),
    })
}

/// Starts the METS of a new sSIP; the descriptive header is filled in by [`finish_header`] once
/// the whole source has been read.
pub(crate) fn new_mets(
    objid: &str,
    now: chrono::DateTime<chrono::Utc>,
    opts: &PackageOptions,
    root: &Path,
) -> Result<MetsBuilder, PackageError> {
    let header = PackageHeader {
        objid: objid.to_string(),
        package_type: PackageType::Ssip,
        label: String::new(),
        created: now,
        organisation: Organisation::default(),
        description: Description::default(),
        rights: Rights { access: Access::Restricted, statement: String::new() },
        agents: vec![],
    };
    MetsBuilder::new(header, opts.profile.clone(), opts.mode).map_err(io_err(root))
}

/// Sets the resolved description, rights and organisation, and puts the organisation and
/// webaip first among the agents; agents added while packaging (the scanner) stay after them.
pub(crate) fn finish_header(
    mets: &mut MetsBuilder,
    description: Description,
    rights: Rights,
    organisation: Organisation,
) {
    let h = mets.header_mut();
    h.label = description.title.clone();
    h.description = description;
    h.rights = rights;
    let mut agents = vec![
        Agent {
            id_type: "repository code".into(),
            id: organisation.code.clone(),
            name: organisation.name.clone(),
            agent_type: "organization".into(),
            version: None,
            note: None,
        },
        Agent {
            id_type: "local".into(),
            id: "webaip".into(),
            name: "webaip".into(),
            agent_type: "software".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
            note: None,
        },
    ];
    agents.append(&mut h.agents);
    h.agents = agents;
    h.organisation = organisation;
}

/// What a package is once it is in place: where it is, the webpages its METS describes, and
/// how its METS and manifest were written and checked.
pub(crate) struct CommittedPackage {
    pub(crate) package: PathBuf,
    pub(crate) entities: crate::pages::EntitiesReport,
    pub(crate) written: staging::MetsWritten,
    /// Leftovers of earlier runs found beside it.
    pub(crate) leftovers: Vec<String>,
}

/// The last steps of every package, whatever its source: the webpages described (each
/// container's count of records listed for them added to its report), the METS and manifest
/// written and checked, and the package moved into place.
pub(crate) fn commit_package(
    staging: staging::Staging,
    mut mets: MetsBuilder,
    containers: &mut [ContainerReport],
    manifest: &mut Vec<(String, String)>,
    opts: &PackageOptions,
) -> Result<CommittedPackage, PackageError> {
    let entities = entities::resolve_entities(&mut mets, &staging.root)?;
    for c in containers.iter_mut() {
        c.listed += entities.records_listed.get(&c.path).copied().unwrap_or(0);
    }
    let written = staging.write_mets(mets, manifest, opts)?;
    let leftovers = staging.leftovers.clone();
    let package = staging.commit()?;
    Ok(CommittedPackage { package, entities, written, leftovers })
}

/// A harvest's seed URLs, and the file they were read from (as the metadata notes name it).
#[derive(Clone, Copy)]
pub(crate) struct SeedsFrom<'a> {
    pub(crate) seeds: &'a [String],
    pub(crate) file: &'a str,
}

/// Fills in the METS header from the curator's metadata, the harvest's seeds and its capture
/// dates (`first`, `last`: none when no record dates the harvest); what the metadata lacked or
/// what was taken from the source.
pub(crate) fn write_header(
    mets: &mut MetsBuilder,
    opts: &PackageOptions,
    seeds: SeedsFrom<'_>,
    first: Option<DateTime<Utc>>,
    last: Option<DateTime<Utc>>,
) -> Vec<String> {
    let (description, rights, organisation, notes) =
        opts.metadata.resolve((seeds.seeds, seeds.file), (first, last));
    finish_header(mets, description, rights, organisation);
    notes
}

pub(crate) fn io_err(path: &Path) -> impl Fn(io::Error) -> PackageError + '_ {
    move |source| PackageError::Io { path: path.to_path_buf(), source }
}

/// Copies a log, report or configuration file byte-exact into `logs/` and lists it in the
/// `Logfile` group with its own PREMIS object. Returns its package path, SHA-512 and size.
pub(crate) fn add_log(
    mets: &mut MetsBuilder,
    root: &Path,
    source: &Path,
    relative: &str,
    now: DateTime<Utc>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(String, String, u64), PackageError> {
    let rel = layout::in_dir(layout::LOGS_DIR, relative);
    let (size, sha) = copy_hashing(source, root, &rel)?;
    progress(size);
    let mime = log_mime(relative);
    let object = PremisObject {
        id_type: "local".into(),
        id: rel.clone(),
        size,
        sha512: sha.clone(),
        sha256: None,
        format: Format { name: mime.into(), version: None, pronom: None },
        identification: None,
        original_name: Some(relative.to_string()),
        significant_properties: vec![],
        relationships: vec![],
        events: vec![],
    };
    mets.add_log(PackageFile {
        path: rel.clone(),
        mime: mime.into(),
        size,
        sha512: sha.clone(),
        created: now,
        object,
        events: vec![],
        described_sources: vec![],
    });
    Ok((rel, sha, size))
}

/// Where the migration report of the container at `container` (a package path) is kept.
pub(crate) fn migration_report_path(container: &str) -> String {
    let name = container.rsplit('/').next().unwrap_or(container);
    layout::in_dir(layout::WEBAIP_LOGS_DIR, &format!("{name}.migration.json"))
}

/// Writes a file webaip made (a migration report) into the package at `rel` and lists it in the
/// `Logfile` group with its own PREMIS object, as [`add_log`] does for copied logs.
pub(crate) fn add_generated_log(
    mets: &mut MetsBuilder,
    root: &Path,
    rel: &str,
    bytes: &[u8],
    now: DateTime<Utc>,
) -> Result<(String, String, u64), PackageError> {
    let mut f = crate::layout::create_in(root, rel)?;
    io::Write::write_all(&mut f, bytes).map_err(io_err(&root.join(rel)))?;
    let sha = crate::formats::digest::sha512_hex(bytes);
    let size = bytes.len() as u64;
    let mime = "application/json";
    mets.add_log(PackageFile {
        path: rel.to_string(),
        mime: mime.into(),
        size,
        sha512: sha.clone(),
        created: now,
        object: PremisObject {
            id_type: "local".into(),
            id: rel.to_string(),
            size,
            sha512: sha.clone(),
            sha256: None,
            format: Format { name: mime.into(), version: None, pronom: None },
            identification: None,
            original_name: None,
            significant_properties: vec![],
            relationships: vec![],
            events: vec![],
        },
        events: vec![],
        described_sources: vec![],
    });
    Ok((rel.to_string(), sha, size))
}

/// A PREMIS virus-check event of the profile's type, run by `agent` (`clamd`, or `webaip` when
/// no scanner ran), linking `objects` as its sources. Every virus-check event is built here.
pub(crate) fn virus_check_event(
    run: PackageRun<'_>,
    agent: &str,
    detail: String,
    outcome: EventOutcome,
    objects: Vec<String>,
) -> Event {
    let vc = &run.opts.profile.events.virus_check;
    Event {
        id: run.ids.uuid().to_string(),
        event_type: vc.term.clone(),
        event_type_uri: Some(vc.uri.clone()),
        date_time: run.now,
        detail: Some(detail),
        outcome: outcome.outcome,
        outcome_detail: outcome.detail,
        agents: vec![("local".into(), agent.into(), "executing program".into())],
        objects: objects
            .into_iter()
            .map(|o| ("local".to_string(), o, "source".to_string()))
            .collect(),
    }
}

/// The one event of a package made with `--no-virus-check`: every container `not scanned`.
pub(crate) fn no_scan_event(run: PackageRun<'_>, objects: Vec<String>) -> Event {
    let outcome = EventOutcome {
        outcome: run.opts.profile.virus_outcomes.not_scanned.clone(),
        detail: Some("no scanner was run on any bytestream of this package".into()),
    };
    let detail = "virus check not performed: packaged with --no-virus-check".into();
    virus_check_event(run, "webaip", detail, outcome, objects)
}

/// The note a report gives for a package made without scanning.
pub(crate) const NO_SCAN_NOTE: &str =
    "NOT DONE (--no-virus-check): every container records a 'not scanned' virus check";

/// Closes a WARC container webaip wrote (flushed and synced), and gives its size and SHA-512.
pub(crate) fn finish_written_container(
    writer: crate::formats::warc::WarcWriter<io::BufWriter<File>>,
    root: &Path,
    rel: &str,
) -> Result<(u64, String), PackageError> {
    let mut buf = writer.finish().map_err(io_err(root))?;
    io::Write::flush(&mut buf).map_err(io_err(root))?;
    let file = buf.into_inner().map_err(|e| io_err(root)(e.into_error()))?;
    file.sync_all().map_err(io_err(root))?;
    hash_file(&root.join(rel))
}

/// A file written into the package: its size and SHA-512 (hex).
pub(crate) struct WrittenFile {
    pub(crate) size: u64,
    pub(crate) sha512: String,
}

/// The description of a WARC container webaip wrote: the file, its PREMIS object (format,
/// record count) and the events recorded on it.
pub(crate) fn written_container_file(
    rel: String,
    WrittenFile { size, sha512 }: WrittenFile,
    records: u64,
    events: Vec<Event>,
    original_name: String,
    created: DateTime<Utc>,
) -> PackageFile {
    PackageFile {
        path: rel.clone(),
        mime: "application/warc".into(),
        size,
        sha512: sha512.clone(),
        created,
        object: PremisObject {
            id_type: "local".into(),
            id: rel,
            size,
            sha512,
            sha256: None,
            format: Format::written_warc(),
            identification: None,
            original_name: Some(original_name),
            significant_properties: vec![(SIGNIFICANT_WARC_RECORDS.into(), records.to_string())],
            relationships: vec![],
            events: events.iter().map(|e| e.id.clone()).collect(),
        },
        events,
        described_sources: vec![],
    }
}

/// The METS description of a record webaip wrote, with its payload's type.
pub(crate) fn written_record_file(
    w: &crate::formats::warc::WrittenRecord,
    mime: String,
    described: Option<DescribedBytestream>,
    capture: Option<UrlCapture>,
) -> RecordFile {
    RecordFile {
        refers: None,
        record_id: w.record_id.trim_matches(['<', '>']).to_string(),
        member: ByteRange { begin: w.member_offset, len: w.member_len },
        compressed: true,
        content: Some(ContentFile {
            range: ByteRange { begin: w.payload_offset, len: w.digests.payload_len },
            sha512: hex(&w.digests.payload_sha512),
            mime,
            identification: None,
        }),
        described,
        page: None,
        capture,
    }
}

/// The URL capture a record holds: `response` and `resource` records with a target URI.
pub(crate) fn url_capture(
    warc_type: &str,
    uri: Option<&str>,
    date: &str,
    date_inferred: bool,
) -> Option<UrlCapture> {
    match (warc_type, uri) {
        ("response" | "resource", Some(u)) if !u.is_empty() => {
            Some(UrlCapture { uri: u.to_string(), date: date.to_string(), date_inferred })
        }
        _ => None,
    }
}

pub(crate) fn log_mime(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".xml") || lower.ends_with(".cxml") {
        "text/xml"
    } else if lower.ends_with(".gz") {
        "application/gzip"
    } else if lower.ends_with(".zip") {
        "application/zip"
    } else {
        "text/plain"
    }
}

/// The seed of a `--deterministic` run: a line for each input file (its name, size and
/// SHA-512), the lines sorted, hashed after the run's kind. Files are hashed in parallel, a
/// chunk at a time, as they are given; the lines are sorted on disk (a scratch database), so a
/// harvest of a million files seeds in the memory of one chunk.
pub(crate) struct InputSeed {
    kind: String,
    chunk: Vec<(String, PathBuf)>,
    lines: rusqlite::Connection,
}

/// Files hashed at a time.
const SEED_CHUNK: usize = 256;

impl InputSeed {
    /// A seed of `kind`, no file yet.
    pub(crate) fn new(kind: &str) -> Result<InputSeed, PackageError> {
        let lines = crate::temporaries::scratch_database(2048, "CREATE TABLE lines (line TEXT);")
            .map_err(PackageError::Seed)?;
        Ok(InputSeed { kind: kind.to_string(), chunk: Vec::new(), lines })
    }

    /// Adds the file at `path`, named `name`.
    pub(crate) fn add(&mut self, name: String, path: PathBuf) -> Result<(), PackageError> {
        self.chunk.push((name, path));
        if self.chunk.len() >= SEED_CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), PackageError> {
        let lines: Vec<String> = self
            .chunk
            .par_iter()
            .map(|(name, path)| {
                let read = crate::formats::digest::sha512_read(open_input(path)?);
                let (len, sha) = read.map_err(io_err(path))?;
                Ok(format!("{name}\t{len}\t{sha}\n"))
            })
            .collect::<Result<_, PackageError>>()?;
        self.chunk.clear();
        let mut st = self
            .lines
            .prepare_cached("INSERT INTO lines VALUES (?1)")
            .map_err(PackageError::Seed)?;
        for l in &lines {
            st.execute([l]).map_err(PackageError::Seed)?;
        }
        Ok(())
    }

    /// The seed: `KIND/SHA-512` of the kind and the sorted lines (byte order, as SQLite's
    /// BINARY collation and Rust's `str` order both compare).
    pub(crate) fn finish(mut self) -> Result<String, PackageError> {
        self.flush()?;
        let mut all = Sha512::new();
        all.update(self.kind.as_bytes());
        all.update(b"\n");
        let mut st = self
            .lines
            .prepare("SELECT line FROM lines ORDER BY line")
            .map_err(PackageError::Seed)?;
        let mut rows = st.query([]).map_err(PackageError::Seed)?;
        while let Some(row) = rows.next().map_err(PackageError::Seed)? {
            let line: String = row.get(0).map_err(PackageError::Seed)?;
            all.update(line.as_bytes());
        }
        Ok(format!("{}/{}", self.kind, hex(&all.finalize())))
    }
}

/// The seed of `files` (name, path), as [`InputSeed`] makes it.
pub(crate) fn input_seed(kind: &str, files: &[(String, &Path)]) -> Result<String, PackageError> {
    let mut seed = InputSeed::new(kind)?;
    for (name, path) in files {
        seed.add(name.clone(), path.to_path_buf())?;
    }
    seed.finish()
}

/// Opens an input file: a regular file reached without following a link as its last
/// component (the walk checked with `lstat`; this closes the race with a swap since).
pub(crate) fn open_input(path: &Path) -> Result<File, PackageError> {
    Ok(crate::layout::open_regular(path)?)
}

/// Copies `from` (an input file) to `to` in one read, returning the size and SHA-512 of what
/// was copied.
pub(crate) fn copy_hashing(
    from: &Path,
    root: &Path,
    rel: &str,
) -> Result<(u64, String), PackageError> {
    let to = &root.join(rel);
    // The package's own name for it, created inside the package (never over a file, never
    // through a link).
    let mut w = crate::layout::create_in(root, rel)?;
    let mut r = BufReader::with_capacity(1 << 20, open_input(from)?);
    let mut sha = Sha512::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = r.read(&mut buf).map_err(io_err(from))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        w.write_all(&buf[..n]).map_err(io_err(to))?;
        len += n as u64;
    }
    w.sync_all().map_err(io_err(to))?;
    Ok((len, hex(&sha.finalize())))
}

/// Size and SHA-512 of a file.
pub(crate) fn hash_file(path: &Path) -> Result<(u64, String), PackageError> {
    crate::formats::digest::sha512_file(path).map_err(io_err(path))
}
