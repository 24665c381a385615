//! `webaip get`: one record's payload (or the record) by URL and time, by record id, or by
//! container and offset, from packages through their indexes, or from the store.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;

use webaip::index::get::{self, At, Expected, Got, Part};
use webaip::index::set::IndexSet;

/// Arguments of `webaip get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The URL whose capture to get (through the index: its SURT key).
    #[arg(required_unless_present_any = ["id", "container"])]
    url: Option<String>,
    /// The capture closest to this time (1 to 14 digits, YYYYMMDDhhmmss, a shorter one read
    /// as pywb reads it: `2014` is the end of 2014); default the latest.
    #[arg(long, value_name = "TIMESTAMP", requires = "url")]
    at: Option<String>,
    /// The record with this WARC-Record-ID (`<urn:uuid:...>`), found in index lines that
    /// carry it (`"recordId"`).
    #[arg(long, value_name = "WARC-RECORD-ID", conflicts_with_all = ["url", "container"])]
    id: Option<String>,
    /// The record at `--offset` of this WARC file (no index needed).
    #[arg(long, value_name = "FILE", requires = "offset", conflicts_with_all = ["url", "index", "package", "store"])]
    container: Option<PathBuf>,
    /// The record's byte offset in `--container` (of its gzip member in a `.warc.gz`).
    #[arg(long, value_name = "N", requires = "container")]
    offset: Option<u64>,
    /// A sorted CDXJ index (`webaip index`, `package --index`, cdxj-indexer | sort) or a
    /// ZipNum index (`NAME.idx`, with its `.loc` and blocks beside it); several are used
    /// together.
    #[arg(long, value_name = "FILE")]
    index: Vec<PathBuf>,
    /// The package the index's container names resolve in (its folder; with `--store`, its
    /// identifier). One for every `--index`, in the same order, or one for all; default the
    /// folder of each index file.
    #[arg(long, value_name = "DIR|IDENTIFIER")]
    package: Vec<String>,
    /// Read the containers from the store this configuration describes (a ranged read of the
    /// record's bytes only); `--package` then names packages by identifier.
    #[arg(long, value_name = "CONFIG", requires = "package")]
    store: Option<PathBuf>,
    /// Write the whole record as stored (for a `.warc.gz`, its gzip member: a one-record
    /// WARC file) instead of its payload.
    #[arg(long)]
    record: bool,
    /// Write to this file (created; not replaced) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// No note on standard error (where a revisit's payload came from).
    #[arg(long, short)]
    quiet: bool,
}

/// Where the containers of one index file are.
enum Root {
    Dir(PathBuf),
    Stored(String),
}

/// Runs the command; returns the exit status.
pub fn run(args: GetArgs) -> anyhow::Result<i32> {
    let part = if args.record { Part::Record } else { Part::Payload };
    with_output(args.output.as_deref(), |out| get_to(&args, part, out))?;
    Ok(0)
}

/// Finds and reads the record into `out`.
fn get_to(args: &GetArgs, part: Part, out: &mut dyn Write) -> anyhow::Result<Got> {
    if let (Some(path), Some(offset)) = (&args.container, args.offset) {
        let file = get::open_user_container(path, offset)?;
        let name = path.display().to_string();
        let at = At { file, container: &name, offset, length: None };
        let got = get::read_record(at, &Expected::default(), part, out)?;
        // No index to find a revisit's original through: its own (empty) payload, as warcio
        // reads it at the offset, and a note of where the payload is.
        if part == Part::Payload && got.header.warc_type() == Some("revisit") && !args.quiet {
            eprintln!("webaip: note: {}", get::no_original(&got.header, &[]));
        }
        return Ok(got);
    }
    if args.index.is_empty() {
        bail!("give the index to look in with --index FILE (or a container with --container)");
    }
    let roots = roots(args)?;
    let set = IndexSet::open(&args.index)?;
    let (file, entry) = match (&args.url, &args.id) {
        (Some(url), _) => get::by_url(&set, url, args.at.as_deref())?,
        (None, Some(id)) => get::by_record_id(&set, id)?,
        (None, None) => bail!("give a URL, --id or --container"),
    };
    let got = read_line(args, &roots[file], &entry, part, out)?;
    if part == Part::Record || got.header.warc_type() != Some("revisit") {
        return Ok(got);
    }
    // A revisit has no payload of its own: its original's, found through the same indexes
    // and verified against the revisit's digest, is the capture's payload.
    let (file, original) = get::original_of(&set, &got.header)?;
    let from_original = read_line(args, &roots[file], &original, part, out)?;
    get::check_original(&from_original, &original)?;
    if !args.quiet {
        eprintln!(
            "webaip: note: this capture is a revisit; its payload is that of {} at {} ({}, offset {})",
            super::terminal_text(&original.url),
            original.timestamp,
            super::terminal_text(&original.filename),
            original.offset
        );
    }
    Ok(Got { header: got.header, ..from_original })
}

/// Reads the record an index line names, from the package (or stored package) `root`.
fn read_line(
    args: &GetArgs,
    root: &Root,
    entry: &webaip::index::cdxj::IndexEntry,
    part: Part,
    out: &mut dyn Write,
) -> anyhow::Result<Got> {
    let want = Expected::of(entry);
    let (name, offset, length) = (entry.filename.as_str(), entry.offset, Some(entry.length));
    let file = match root {
        Root::Dir(dir) => get::open_in_package(dir, name, offset)?,
        Root::Stored(identifier) => {
            let config = args.store.as_deref().context("--store is needed with an identifier")?;
            stored_range(config, identifier, name, offset, entry.length)?
        }
    };
    let at = At { file, container: name, offset, length };
    Ok(get::read_record(at, &want, part, out)?)
}

/// The root of every index file: its `--package`, the only `--package`, or its own folder.
fn roots(args: &GetArgs) -> anyhow::Result<Vec<Root>> {
    let n = args.index.len();
    if args.package.len() > 1 && args.package.len() != n {
        bail!("give one --package for every --index (in the same order), or one for all");
    }
    let root = |p: &String| match args.store {
        Some(_) => Root::Stored(p.clone()),
        None => Root::Dir(PathBuf::from(p)),
    };
    Ok((0..n)
        .map(|i| match args.package.len() {
            0 => {
                let parent = args.index[i].parent().filter(|p| !p.as_os_str().is_empty());
                Root::Dir(parent.unwrap_or(Path::new(".")).to_path_buf())
            }
            1 => root(&args.package[0]),
            _ => root(&args.package[i]),
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
) -> anyhow::Result<File> {
    use std::io::Seek;
    let config = webaip::store::config::StoreConfig::load(config)?;
    let store = webaip::store::Store::open(&config)?;
    let mut file = tempfile::tempfile().context("cannot make a temporary file")?;
    store.read_range(identifier, name, offset, length, &mut file).map_err(|e| {
        get::GetError::Container { container: name.into(), offset, reason: e.to_string() }
    })?;
    file.rewind()?;
    Ok(file)
}

/// Runs `f` with standard output, or with a temporary beside `path` that becomes `path` only
/// when `f` succeeds (a record that fails its checks leaves no file).
fn with_output<T>(
    path: Option<&Path>,
    f: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let Some(path) = path else {
        let mut out = BufWriter::with_capacity(256 * 1024, std::io::stdout().lock());
        let v = f(&mut out)?;
        out.flush().context("cannot write to standard output")?;
        return Ok(v);
    };
    if std::fs::symlink_metadata(path).is_ok() {
        bail!("{}: exists, not replaced", path.display());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = webaip::index::output::get_temporary(dir)
        .with_context(|| format!("{}: cannot write there", dir.display()))?;
    let mut out = BufWriter::with_capacity(256 * 1024, tmp.as_file());
    let v = f(&mut out)?;
    out.flush().with_context(|| format!("cannot write {}", path.display()))?;
    drop(out);
    tmp.persist_noclobber(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(v)
}
