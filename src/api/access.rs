//! Access to what packages hold: [`index_warcs_into`] writes the sorted index of WARC files
//! or packages, [`get_record`] reads one record's payload (or the record) through such
//! indexes, from package folders or from the store.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::IndexOptions;
use crate::index::build::{self, IndexFormat};
use crate::index::cdxj::IndexEntry;
use crate::index::get::{self, At, Expected, Got, Part};
use crate::index::set::IndexSet;
use crate::index::warc::{EntryOptions, IndexError};
use crate::store::config::StoreConfig;
use crate::store::{Store, StoreError};

pub use crate::index::build::ZIPNUM_LINES;
pub use crate::index::get::{GetError, Part as RecordPart};

/// Where [`index_warcs_into`] writes the index.
pub enum IndexTarget<'a> {
    /// A file (for ZipNum the name of its three files), written atomically.
    File(&'a Path),
    /// A stream, as the lines are merged (not ZipNum).
    Stream(&'a mut dyn Write),
}

/// What [`index_warcs_into`] indexed, and where the index went.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// `cdxj`, `cdx` or `zipnum`.
    pub format: &'static str,
    /// The WARC files read: those given, and the `content/` containers of the packages.
    pub containers: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The files written (one, or ZipNum's three); none when written to a stream.
    pub files: Vec<PathBuf>,
}

/// The bytes of the WARC files `inputs` name (the `content/` containers of a package
/// folder): what [`index_warcs_into`] reads, for a progress bar.
pub fn index_input_bytes(inputs: &[PathBuf]) -> Result<u64, IndexError> {
    let containers = build::resolve_inputs(inputs)?;
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    Ok(containers.iter().map(|c| size(&c.path)).sum())
}

/// Indexes WARC files and package folders (their `content/` containers, named
/// `content/NAME`) into `target`, sorted: CDXJ as pywb reads it, the classic 11-field CDX,
/// or ZipNum (to a file only). `progress` hears of the bytes read, from several threads.
///
/// A file target is written under a temporary name and renamed once complete (ZipNum's
/// summary last), so a failed run leaves nothing that looks like an index. An
/// [`IndexError`] names the file (and the record's offset) that could not be indexed: an ARC
/// file, a gzip member holding two records, two inputs of one name, a folder that is no
/// package.
pub fn index_warcs_into(
    inputs: &[PathBuf],
    target: IndexTarget<'_>,
    options: &IndexOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<IndexReport, IndexError> {
    if let IndexTarget::File(path) = &target {
        for input in inputs {
            crate::layout::refuse_output_in_input(input, path)?;
        }
    }
    let containers = build::resolve_inputs(inputs)?;
    let entries = EntryOptions { record_ids: options.record_ids, ..EntryOptions::default() };
    let (format, jobs) = (options.format, options.jobs.max(1));
    if let (IndexTarget::Stream(_), IndexFormat::ZipNum { .. }) = (&target, format) {
        return Err(IndexError::ZipNumNeedsName);
    }
    let sorters =
        build::sort_inputs(&containers, format, entries, jobs, build::SORT_BUDGET, progress)?;
    let files = match target {
        IndexTarget::File(path) => build::write_index(sorters, format, path)?,
        IndexTarget::Stream(out) => {
            let io_err = |source| IndexError::Io { path: "standard output".into(), source };
            build::write_index_to(sorters, format, out).map_err(io_err)?;
            out.flush().map_err(io_err)?;
            Vec::new()
        }
    };
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    Ok(IndexReport {
        format: match format {
            IndexFormat::Cdxj => "cdxj",
            IndexFormat::Cdx => "cdx",
            IndexFormat::ZipNum { .. } => "zipnum",
        },
        containers: containers.len(),
        bytes: containers.iter().map(|c| size(&c.path)).sum(),
        files,
    })
}

/// The record [`get_record`] is asked for.
#[derive(Debug, Clone)]
pub enum RecordWanted {
    /// The capture of a URL (through the index: its SURT key) closest to a time (1 to 14
    /// digits, read as pywb reads them: `2014` is the end of 2014); the latest without one.
    Url {
        /// The URL.
        url: String,
        /// The time, `YYYYMMDDhhmmss` or a prefix of it.
        at: Option<String>,
    },
    /// The record with this `WARC-Record-ID`, through index lines that carry it (`recordId`).
    RecordId(String),
    /// The record at this offset of this WARC file (no index needed).
    Container {
        /// The WARC file.
        path: PathBuf,
        /// The record's offset (of its gzip member in a `.warc.gz`).
        offset: u64,
    },
}

/// Where [`get_record`] looks.
#[derive(Debug, Clone, Default)]
pub struct GetOptions {
    /// Sorted CDXJ indexes, or ZipNum summaries (`NAME.idx`), used together.
    pub indexes: Vec<PathBuf>,
    /// The package each index's container names resolve in: one for every index (in their
    /// order), or one for all; none: the folder of each index file. With `store`, package
    /// identifiers.
    pub packages: Vec<String>,
    /// The store configuration to read containers from (a ranged read of the record only).
    pub store: Option<PathBuf>,
    /// What is written: the payload (the default) or the whole record as stored.
    pub part: RecordPart,
}

/// The record a revisit's payload was taken from.
#[derive(Debug, Clone, Serialize)]
pub struct RevisitOriginal {
    /// Its URL.
    pub url: String,
    /// Its date, 14 digits.
    pub timestamp: String,
    /// Its container, as the index names it.
    pub container: String,
    /// Its offset there.
    pub offset: u64,
}

/// What [`get_record`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct GotRecord {
    /// The record's `WARC-Type`.
    pub warc_type: Option<String>,
    /// Its `WARC-Record-ID`.
    pub record_id: Option<String>,
    /// Its `WARC-Target-URI`.
    pub url: Option<String>,
    /// Its `WARC-Date`.
    pub date: Option<String>,
    /// `payload` or `record`.
    pub part: &'static str,
    /// Bytes written.
    pub written: u64,
    /// True when the payload digest was verified.
    pub digest_verified: bool,
    /// For a revisit: the original whose payload was written.
    pub revisit_of: Option<RevisitOriginal>,
    /// For a revisit got by container and offset (no index to find its original through):
    /// its own empty payload was written, and this says where the payload is.
    pub unresolved_revisit: Option<String>,
}

impl GotRecord {
    fn new(got: &Got, part: Part) -> GotRecord {
        let field = |name: &str| got.header.get(name).map(str::to_owned);
        GotRecord {
            warc_type: field("WARC-Type"),
            record_id: field("WARC-Record-ID"),
            url: field("WARC-Target-URI"),
            date: field("WARC-Date"),
            part: match part {
                Part::Payload => "payload",
                Part::Record => "record",
            },
            written: got.written,
            digest_verified: got.digest_verified,
            revisit_of: None,
            unresolved_revisit: None,
        }
    }
}

/// Why [`get_record`] wrote nothing (or nothing that is kept).
#[derive(Debug, thiserror::Error)]
pub enum GetRecordError {
    /// The output file would be inside a package or index the record is read from.
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
    /// The record cannot be found, read, or is not what its index line says.
    #[error(transparent)]
    Get(#[from] GetError),
    /// No index was given for a URL or record id.
    #[error("give the index to look in with --index FILE (or a container with --container)")]
    NoIndex,
    /// The packages given do not pair with the indexes.
    #[error("give one --package for every --index (in the same order), or one for all")]
    PackagesPerIndex,
    /// The store cannot be opened, or the record's bytes cannot be read from it.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A temporary file for the record's bytes cannot be made or read.
    #[error("a temporary file for the record: {}", crate::layout::describe_io(.0))]
    Scratch(#[source] io::Error),
    /// The output file exists.
    #[error("{}: exists, not replaced", .0.display())]
    Exists(PathBuf),
    /// The output file cannot be written.
    #[error("cannot write {}: {}", .path.display(), crate::layout::describe_io(.source))]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// Where the containers of one index file are.
enum Root {
    Dir(PathBuf),
    Stored {
        /// The store's configuration.
        config: PathBuf,
        /// The package's identifier there.
        identifier: String,
    },
}

/// The indexes of `options`, opened, and where each one's containers are.
fn open_indexes(options: &GetOptions) -> Result<(IndexSet, Vec<Root>), GetRecordError> {
    if options.indexes.is_empty() {
        return Err(GetRecordError::NoIndex);
    }
    let roots = roots(options)?;
    let set = IndexSet::open(&options.indexes).map_err(GetError::from)?;
    Ok((set, roots))
}

/// Finds the record `wanted` names and writes its payload (or, with
/// [`RecordPart::Record`], the record as stored) to `out`, after checking that the record at
/// the index line's offset is the one the line names. A revisit's payload is its
/// original's, found through the same indexes and verified against the revisit's digest.
///
/// The payload streams to `out` as it is verified: on an error some bytes may have been
/// written ([`get_record_into`] writes a file only when all is well). Returns what was
/// written; a [`GetRecordError`] says why not (no capture, a container outside its package,
/// a digest that differs, a revisit whose original is in no index given).
pub fn get_record(
    wanted: &RecordWanted,
    options: &GetOptions,
    out: &mut dyn Write,
) -> Result<GotRecord, GetRecordError> {
    let part = options.part;
    let (set, roots, (file, entry)) = match wanted {
        RecordWanted::Container { path, offset } => return get_at_offset(path, *offset, part, out),
        RecordWanted::Url { url, at } => {
            let (set, roots) = open_indexes(options)?;
            let found = get::by_url(&set, url, at.as_deref())?;
            (set, roots, found)
        }
        RecordWanted::RecordId(id) => {
            let (set, roots) = open_indexes(options)?;
            let found = get::by_record_id(&set, id)?;
            (set, roots, found)
        }
    };
    let got = read_line(&roots[file], &entry, part, out)?;
    if part == Part::Record || got.header.warc_type() != Some("revisit") {
        return Ok(GotRecord::new(&got, part));
    }
    // A revisit has no payload of its own: its original's is the capture's payload.
    let (file, original) = get::original_of(&set, &got.header)?;
    let from_original = read_line(&roots[file], &original, part, out)?;
    get::check_original(&from_original, &original)?;
    let mut made = GotRecord::new(&Got { header: got.header, ..from_original }, part);
    made.revisit_of = Some(RevisitOriginal {
        url: original.url,
        timestamp: original.timestamp,
        container: original.filename,
        offset: original.offset,
    });
    Ok(made)
}

/// As [`get_record`], into the new file `path`: written under a temporary name beside it
/// and renamed only when the record passed its checks. An existing `path` is not replaced.
pub fn get_record_into(
    wanted: &RecordWanted,
    options: &GetOptions,
    path: &Path,
) -> Result<GotRecord, GetRecordError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(GetRecordError::Exists(path.to_path_buf()));
    }
    let read = options.indexes.iter().cloned().chain(options.packages.iter().map(PathBuf::from));
    for input in read {
        crate::layout::refuse_output_in_input(&input, path)?;
    }
    let write_err = |source| GetRecordError::Write { path: path.to_path_buf(), source };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = crate::index::output::get_temporary(dir)
        .map_err(|source| GetRecordError::Write { path: dir.to_path_buf(), source })?;
    let mut out = BufWriter::with_capacity(256 * 1024, tmp.as_file());
    let got = get_record(wanted, options, &mut out)?;
    out.flush().map_err(write_err)?;
    drop(out);
    tmp.persist_noclobber(path).map_err(|e| write_err(e.error))?;
    Ok(got)
}

/// The record at `offset` of the WARC file `path`. No index to find a revisit's original
/// through: its own (empty) payload, as warcio reads it at the offset, and a note of where
/// the payload is.
fn get_at_offset(
    path: &Path,
    offset: u64,
    part: Part,
    out: &mut dyn Write,
) -> Result<GotRecord, GetRecordError> {
    let file = get::open_user_container(path, offset)?;
    let name = path.display().to_string();
    let at = At { file, container: &name, offset, length: None };
    let got = get::read_record(at, &Expected::default(), part, out)?;
    let mut made = GotRecord::new(&got, part);
    if part == Part::Payload && got.header.warc_type() == Some("revisit") {
        made.unresolved_revisit = Some(get::no_original(&got.header, &[]).to_string());
    }
    Ok(made)
}

/// Reads the record an index line names, from the package (or stored package) `root`.
fn read_line(
    root: &Root,
    entry: &IndexEntry,
    part: Part,
    out: &mut dyn Write,
) -> Result<Got, GetRecordError> {
    let want = Expected::of(entry);
    let (name, offset, length) = (entry.filename.as_str(), entry.offset, Some(entry.length));
    let file = match root {
        Root::Stored { config, identifier } => {
            stored_range(config, identifier, name, offset, entry.length)?
        }
        Root::Dir(dir) => get::open_in_package(dir, name, offset)?,
    };
    let at = At { file, container: name, offset, length };
    Ok(get::read_record(at, &want, part, out)?)
}

/// The root of every index file: its package, the only package, or its own folder.
fn roots(options: &GetOptions) -> Result<Vec<Root>, GetRecordError> {
    let (indexes, packages) = (&options.indexes, &options.packages);
    if packages.len() > 1 && packages.len() != indexes.len() {
        return Err(GetRecordError::PackagesPerIndex);
    }
    let root = |p: &String| match &options.store {
        Some(config) => Root::Stored { config: config.clone(), identifier: p.clone() },
        None => Root::Dir(PathBuf::from(p)),
    };
    Ok((0..indexes.len())
        .map(|i| match packages.len() {
            0 => {
                let parent = indexes[i].parent().filter(|p| !p.as_os_str().is_empty());
                Root::Dir(parent.unwrap_or(Path::new(".")).to_path_buf())
            }
            1 => root(&packages[0]),
            _ => root(&packages[i]),
        })
        .collect())
}

/// The record's bytes fetched from the store into an anonymous temporary file, positioned
/// at its start.
fn stored_range(
    config: &Path,
    identifier: &str,
    name: &str,
    offset: u64,
    length: u64,
) -> Result<File, GetRecordError> {
    use std::io::Seek;
    let store = Store::open(&StoreConfig::load(config)?)?;
    let mut file = tempfile::tempfile().map_err(GetRecordError::Scratch)?;
    store.read_range(identifier, name, offset, length, &mut file).map_err(|e| {
        GetError::Container { container: name.into(), offset, reason: e.to_string() }
    })?;
    file.rewind().map_err(GetRecordError::Scratch)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(indexes: &[&str], packages: &[&str], store: Option<&str>) -> GetOptions {
        GetOptions {
            indexes: indexes.iter().map(PathBuf::from).collect(),
            packages: packages.iter().map(|p| p.to_string()).collect(),
            store: store.map(PathBuf::from),
            part: RecordPart::default(),
        }
    }

    fn shown(roots: &[Root]) -> Vec<String> {
        let one = |r: &Root| match r {
            Root::Dir(d) => format!("dir {}", d.display()),
            Root::Stored { config, identifier } => format!("{identifier} in {}", config.display()),
        };
        roots.iter().map(one).collect()
    }

    /// Each index's containers are below its own package, the one package given for all, or
    /// (none given) the index's folder; packages that do not pair with indexes are refused.
    #[test]
    fn every_index_has_its_root() {
        let none = roots(&options(&["a/x.cdxj", "y.cdxj"], &[], None)).unwrap();
        assert_eq!(shown(&none), ["dir a", "dir ."]);
        let one = roots(&options(&["a/x.cdxj", "y.cdxj"], &["p"], None)).unwrap();
        assert_eq!(shown(&one), ["dir p", "dir p"]);
        let each = roots(&options(&["x.cdxj", "y.cdxj"], &["p", "q"], Some("s.toml"))).unwrap();
        assert_eq!(shown(&each), ["p in s.toml", "q in s.toml"]);
        let three = options(&["x.cdxj", "y.cdxj"], &["p", "q", "r"], None);
        assert!(matches!(roots(&three), Err(GetRecordError::PackagesPerIndex)));
        assert!(matches!(
            get_record(
                &RecordWanted::RecordId("<urn:x>".into()),
                &options(&[], &[], None),
                &mut Vec::new()
            ),
            Err(GetRecordError::NoIndex)
        ));
    }
}
