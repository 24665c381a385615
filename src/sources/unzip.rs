//! A mirror's `.zip`, unpacked into a temporary directory with bounds a zip bomb cannot pass.
//!
//! The central directory is walked one entry at a time (never held whole), twice: first to
//! check the archive (at most [`MAX_ZIP_ENTRIES`] entries; no two entries' local header and
//! data may share a byte, which is how a small zip makes many entries of one compressed
//! stream; the sizes the entries declare must fit the budget), then to unpack. What is
//! written is counted as it is written, whatever the headers declare, and unpacking stops
//! at the budget: [`DEFAULT_ZIP_EXPANSION`] times the zip's size, at least
//! [`ZIP_BUDGET_FLOOR`] (`--max-zip-expansion` raises the ratio).
//!
//! A zip refused whole ends the run with exit 2 (an error naming the zip and the entry at
//! fault; nothing is packaged or listed, nothing of it kept). An entry refused alone (a link,
//! a name leaving the mirror, a second entry of a name, a file where a directory is needed,
//! a damaged or unsupported entry) is listed with the reason and the rest is packaged (exit
//! 1), as any refused file of a mirror. `webaip pages` writes only the first bytes of each
//! mirror file ([`unpack_zip_heads`]).
//!
//! The temporary directory (`.webaip-mirror-XXXXXX`) is locked with `flock` for as long as it
//! is used; a later run removes those whose lock it can take: they belong to runs that died.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::mirror::{Mirror, MirrorError, MirrorKind, MirrorOptions, mirror_kind, read_mirror};
use crate::formats::warc::header::escape_controls;
use crate::layout::{self, ConfineError};
use crate::temporaries::{self, TempName};

/// Most entries a mirror's `.zip` may hold (its check keeps 24 bytes an entry).
pub const MAX_ZIP_ENTRIES: usize = 1_000_000;
/// How many times its own size a `.zip` may unpack to, unless the operator says more.
pub const DEFAULT_ZIP_EXPANSION: u64 = 100;
/// What any `.zip` may unpack to, however small: small zips of text compress well.
pub const ZIP_BUDGET_FLOOR: u64 = 64 << 20;
/// The temporary directories zips are unpacked into (`.webaip-mirror-XXXXXX`).
const UNPACKED: TempName = TempName { prefix: ".webaip-mirror-", suffix: "", dirs: true };

/// The bytes a zip of `zip_len` bytes may unpack to with `expansion` (a ratio).
pub fn zip_budget(zip_len: u64, expansion: u64) -> u64 {
    zip_len.saturating_mul(expansion).max(ZIP_BUDGET_FLOOR)
}

/// A mirror's `.zip`, unpacked into a temporary directory (removed when dropped).
#[derive(Debug)]
pub struct Unpacked {
    /// The temporary directory.
    pub dir: tempfile::TempDir,
    /// The lock that tells later runs the directory is in use (released on drop).
    _lock: File,
    /// The mirror inside it (the top directory, or its only subdirectory).
    pub root: PathBuf,
    /// Its kind.
    pub kind: MirrorKind,
    /// Entries not unpacked, and why (links, names leaving the mirror, duplicates, a file
    /// where a directory is needed, damaged or unsupported entries).
    pub refused: Vec<(String, String)>,
    /// Earlier runs' temporary directories found beside it, and what was done about them.
    pub leftovers: Vec<String>,
    /// Bytes written.
    pub written: u64,
}

impl Unpacked {
    /// Reads the mirror unpacked from `zip`: what was refused in unpacking is refused in the
    /// mirror's account too, and the earlier runs' leftovers and the zip are noted.
    pub fn read_mirror(&self, zip: &Path, opts: &MirrorOptions) -> Result<Mirror, MirrorError> {
        let mut m = read_mirror(&self.root, self.kind, opts)?;
        m.instance.refused.extend(self.refused.iter().cloned());
        m.notes.extend(self.leftovers.iter().cloned());
        m.instance.found.insert(0, format!("unpacked from {}", super::path_text(zip)));
        Ok(m)
    }
}

/// Reads a file at its own offset (`pread`), so two readers of one file never move each
/// other's position.
struct At<'a> {
    file: &'a File,
    pos: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for At<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let base = match to {
            SeekFrom::Start(n) => {
                self.pos = n;
                return Ok(n);
            }
            SeekFrom::End(d) => (self.file.metadata()?.len(), d),
            SeekFrom::Current(d) => (self.pos, d),
        };
        self.pos = base
            .0
            .checked_add_signed(base.1)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek out of range"))?;
        Ok(self.pos)
    }
}

fn zip_error(zip: &Path, what: &str, why: impl std::fmt::Display) -> MirrorError {
    MirrorError::Zip { path: format!("{}{what}", super::path_text(zip)), why: why.to_string() }
}

/// Unpacks a mirror's `.zip` into a new temporary directory below `work`, within the budget
/// of `expansion` times the zip's size (see the module documentation). Every entry name is
/// confined (`layout::confined_name`); links, duplicate names, a file where a directory is
/// needed (`a` and `a/x`) and damaged entries are refused one by one (listed). A zip that
/// overlaps entries, holds too many, or unpacks past its budget is refused whole, and nothing
/// of it is left.
pub fn unpack_zip(zip: &Path, work: &Path, expansion: u64) -> Result<Unpacked, MirrorError> {
    unpack(zip, work, expansion, None)
}

/// As [`unpack_zip`], for reading only the start of each mirror file (`webaip pages`): of an
/// entry other than a side file (logs, HTTrack's cache and `url.map`) only the first `head`
/// bytes are written; the rest is decompressed, counted against the budget and left as a hole
/// (the file has its true size). Listing a zip of large files so uses the disk of its heads.
pub fn unpack_zip_heads(
    zip: &Path,
    work: &Path,
    expansion: u64,
    head: u64,
) -> Result<Unpacked, MirrorError> {
    unpack(zip, work, expansion, Some(head))
}

fn unpack(
    zip: &Path,
    work: &Path,
    expansion: u64,
    head: Option<u64>,
) -> Result<Unpacked, MirrorError> {
    let file = layout::open_regular(zip).map_err(|e| zip_error(zip, "", e))?;
    let len = file.metadata().map_err(|e| zip_error(zip, "", e))?.len();
    let budget = zip_budget(len, expansion);
    check_zip(zip, &file, len, budget, expansion)?;
    let leftovers = temporaries::remove_dead(work, UNPACKED).notes(work);
    let (dir, lock) = temporaries::locked_dir_in(work, UNPACKED).map_err(|e| {
        zip_error(zip, "", format!("no temporary directory in {}: {e}", work.display()))
    })?;
    let limits = Limits { budget, expansion, head };
    let (refused, written) = unpack_entries(zip, &file, dir.path(), &limits)?;
    // A zip of the mirror's folder holds that folder: the mirror is its only subdirectory.
    let mut root = dir.path().to_path_buf();
    if mirror_kind(&root).is_none() {
        let entries: Vec<_> =
            std::fs::read_dir(&root).map(|rd| rd.flatten().take(2).collect()).unwrap_or_default();
        if let [only] = &entries[..]
            && only.file_type().is_ok_and(|t| t.is_dir())
        {
            root = only.path();
        }
    }
    let kind = mirror_kind(&root).ok_or_else(|| MirrorError::NotAMirror(super::path_text(zip)))?;
    Ok(Unpacked { dir, _lock: lock, root, kind, refused, leftovers, written })
}

fn iterable<'a>(
    zip: &Path,
    file: &'a File,
) -> Result<zip::unstable::read::ZipIterable<BufReader<At<'a>>>, MirrorError> {
    let r = BufReader::with_capacity(1 << 16, At { file, pos: 0 });
    zip::unstable::read::ZipIterable::try_new(r, zip::read::Config::default())
        .map_err(|e| zip_error(zip, "", format!("not a zip archive ({e})")))
}

/// The name an entry is shown by: its name, control characters escaped.
fn shown_name(e: &zip::read::ZipFileEntry<'_>, i: usize) -> String {
    match e.name() {
        Ok(n) => escape_controls(&n),
        Err(_) => format!("entry {i}"),
    }
}

/// The first pass: entry count, overlapping entries, the sizes declared against the budget.
fn check_zip(
    zip: &Path,
    file: &File,
    len: u64,
    budget: u64,
    expansion: u64,
) -> Result<(), MirrorError> {
    let mut it = iterable(zip, file)?;
    // (local header start, data end, entry index) of every entry.
    let mut ranges: Vec<(u64, u64, u32)> = Vec::new();
    let mut declared = 0u64;
    let files = it.files().map_err(|e| zip_error(zip, "", e))?;
    for (i, e) in files.enumerate() {
        let e = e.map_err(|e| zip_error(zip, &format!(": entry {i}"), e))?;
        if i >= MAX_ZIP_ENTRIES {
            return Err(zip_error(zip, "", format!("more than {MAX_ZIP_ENTRIES} entries")));
        }
        let at = |why: String| zip_error(zip, &format!(": entry {:?}", shown_name(&e, i)), why);
        let start = e.header_start();
        let mut head = [0u8; 30];
        file.read_exact_at(&mut head, start)
            .map_err(|err| at(format!("no local header at offset {start}: {err}")))?;
        let lens = u64::from(u16::from_le_bytes([head[26], head[27]]))
            + u64::from(u16::from_le_bytes([head[28], head[29]]));
        let end = (start + 30 + lens).checked_add(e.compressed_size()).filter(|&end| end <= len);
        let end =
            end.ok_or_else(|| at(format!("its data runs past the end of the zip ({len} bytes)")))?;
        ranges.push((start, end, i as u32));
        declared = declared.saturating_add(e.size());
    }
    ranges.sort_unstable();
    if let Some(w) = ranges.windows(2).find(|w| w[1].0 < w[0].1) {
        let names = entry_names(zip, file, &[w[0].2, w[1].2]);
        return Err(MirrorError::ZipOverlap {
            zip: super::path_text(zip),
            entry: names[1].clone(),
            other: names[0].clone(),
            offset: w[1].0,
        });
    }
    if declared > budget {
        return Err(MirrorError::ZipBudget {
            zip: super::path_text(zip),
            entry: None,
            what: format!("its entries declare {declared} bytes"),
            budget,
            expansion,
            floor: ZIP_BUDGET_FLOOR,
        });
    }
    Ok(())
}

/// The shown names of entries `which` (by central-directory index), for a message.
fn entry_names(zip: &Path, file: &File, which: &[u32]) -> Vec<String> {
    let mut names: Vec<String> = which.iter().map(|i| format!("entry {i}")).collect();
    if let Ok(mut it) = iterable(zip, file)
        && let Ok(files) = it.files()
    {
        for (i, e) in files.enumerate().take(*which.iter().max().unwrap_or(&0) as usize + 1) {
            if let (Ok(e), Some(k)) = (e, which.iter().position(|&w| w as usize == i)) {
                names[k] = shown_name(&e, i);
            }
        }
    }
    names
}

/// Why an entry is not unpacked when creating its file or directory fails, or `None` when
/// the failure is the run's (a full disk), not the entry's.
fn entry_refusal(e: &ConfineError) -> Option<String> {
    match e {
        ConfineError::NotRegular { path, kind } => Some(format!(
            "{} is {kind} where a directory is needed (another entry): not unpacked",
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        )),
        ConfineError::Io { source, .. }
            if matches!(
                source.kind(),
                io::ErrorKind::AlreadyExists
                    | io::ErrorKind::NotADirectory
                    | io::ErrorKind::IsADirectory
            ) =>
        {
            Some("another entry of that name (file or directory) is unpacked: not unpacked".into())
        }
        ConfineError::Name { reason, .. } => Some(format!("name {reason}: not unpacked")),
        ConfineError::Link { .. } => Some("a link on the way: not unpacked".into()),
        ConfineError::Io { source, .. }
            if source.raw_os_error() == Some(libc::ENAMETOOLONG)
                || source.kind() == io::ErrorKind::InvalidFilename =>
        {
            Some("name too long for the file system: not unpacked".into())
        }
        _ => None,
    }
}

/// What the second pass may write.
struct Limits {
    /// Bytes decompressed, all entries together.
    budget: u64,
    /// The ratio the budget comes from (for the message).
    expansion: u64,
    /// Bytes written of each file that is not a side file, when not all.
    head: Option<u64>,
}

/// Whether `name` is a mirror's side file by its last segment: a wget log, HTTrack's log,
/// cache files or `url.map`, a `.panaccess-mime.types`. These are read whole.
fn is_side_file(name: &str) -> bool {
    let last = name.rsplit('/').next().unwrap_or(name);
    matches!(
        last,
        "hts-log.txt" | "new.txt" | "new.zip" | "new.lst" | "url.map" | ".panaccess-mime.types"
    ) || last == "wget-log"
        || last.starts_with("wget-log.")
        || last.ends_with(".log")
}

/// The second pass: every entry written below `dir`, counted against the budget.
fn unpack_entries(
    zip: &Path,
    file: &File,
    dir: &Path,
    limits: &Limits,
) -> Result<(Vec<(String, String)>, u64), MirrorError> {
    let Limits { budget, expansion, head } = *limits;
    let mut it = iterable(zip, file)?;
    let mut body = BufReader::with_capacity(1 << 16, At { file, pos: 0 });
    let mut refused = Refusals::default();
    let mut written = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    let files = it.files().map_err(|e| zip_error(zip, "", e))?;
    for (i, e) in files.enumerate() {
        let e = e.map_err(|e| zip_error(zip, &format!(": entry {i}"), e))?;
        let shown = shown_name(&e, i);
        let raw = match e.name() {
            Ok(n) => n.into_owned(),
            Err(err) => {
                refused.push((shown, format!("name not read: {err}")));
                continue;
            }
        };
        let name = match layout::confined_name(&raw) {
            Ok(n) if !n.is_empty() => n,
            Ok(_) => continue,
            Err(why) => {
                refused.push((shown, format!("name {why}: not unpacked")));
                continue;
            }
        };
        if e.is_symlink() {
            refused.push((shown, "symbolic link: not unpacked".into()));
            continue;
        }
        let fail = |why: String| zip_error(zip, &format!(": entry {shown:?}"), why);
        written += new_directories(dir, &name, e.is_dir()) * DIRECTORY_COST
            + if e.is_dir() { 0 } else { FILE_COST };
        if written > budget {
            return Err(MirrorError::ZipBudget {
                zip: super::path_text(zip),
                entry: Some(shown),
                what: format!(
                    "its directories and files cost more than {budget} bytes (each new directory counts {DIRECTORY_COST}, each file {FILE_COST})"
                ),
                budget,
                expansion,
                floor: ZIP_BUDGET_FLOOR,
            });
        }
        if e.is_dir() {
            if let Err(err) = layout::create_dirs_in(dir, &name) {
                let why = entry_refusal(&err).ok_or_else(|| fail(err.to_string()))?;
                refused.push((shown, why));
            }
            continue;
        }
        let out = match layout::create_in(dir, &name) {
            Ok(f) => f,
            Err(err) => {
                let why = entry_refusal(&err).ok_or_else(|| fail(err.to_string()))?;
                refused.push((shown, why));
                continue;
            }
        };
        let mut reader = match e.with_reader(&mut body, zip::ZipReadOptions::new()) {
            Ok(r) => r,
            Err(err) => {
                let _ = std::fs::remove_file(dir.join(&name));
                refused.push((shown, format!("not unpacked: {err}")));
                continue;
            }
        };
        let keep = head.filter(|_| !is_side_file(&name)).unwrap_or(u64::MAX);
        let mut this = 0u64;
        let mut w = io::BufWriter::with_capacity(1 << 16, out);
        let damaged = loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break None,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => break Some(err),
            };
            written += n as u64;
            if written > budget {
                return Err(MirrorError::ZipBudget {
                    zip: super::path_text(zip),
                    entry: Some(shown),
                    what: format!("it unpacks to more than {budget} bytes"),
                    budget,
                    expansion,
                    floor: ZIP_BUDGET_FLOOR,
                });
            }
            let kept = keep.saturating_sub(this).min(n as u64) as usize;
            this += n as u64;
            w.write_all(&buf[..kept]).map_err(|err| fail(layout::describe_io(&err)))?;
        };
        let out = w.into_inner().map_err(|err| fail(layout::describe_io(err.error())))?;
        if this > keep {
            // The rest as a hole: the file has its true size, on no disk.
            out.set_len(this).map_err(|err| fail(layout::describe_io(&err)))?;
        }
        drop(out);
        if let Some(err) = damaged {
            let _ = std::fs::remove_file(dir.join(&name));
            refused.push((shown, format!("damaged, not unpacked: {err}")));
        }
    }
    Ok((refused.into_list(), written))
}

/// Entries refused one by one: the first [`REFUSALS_KEPT`] listed, the rest counted (a zip of
/// 900,000 refused entries held them all: 466 MB).
#[derive(Default)]
struct Refusals {
    kept: Vec<(String, String)>,
    more: u64,
}

/// Refused entries listed one by one.
const REFUSALS_KEPT: usize = 1000;

impl Refusals {
    fn push(&mut self, r: (String, String)) {
        match self.kept.len() < REFUSALS_KEPT {
            true => self.kept.push(r),
            false => self.more += 1,
        }
    }

    /// The list, closed by a line counting what was not listed.
    fn into_list(mut self) -> Vec<(String, String)> {
        if self.more > 0 {
            let what = "refused as well (not listed one by one)".to_string();
            self.kept.push((format!("{} more entries", self.more), what));
        }
        self.kept
    }
}

/// What a new directory or file costs of the budget besides its bytes: its inode and block.
/// A zip of empty directories nested 1,900 deep wrote 700 MB of directories on no byte.
const DIRECTORY_COST: u64 = 4096;
const FILE_COST: u64 = 512;

/// How many directories of `name`'s path (below `dir`; its last segment too when `is_dir`) do
/// not exist yet: walked up from the deepest, stopping at the first that exists.
fn new_directories(dir: &Path, name: &str, is_dir: bool) -> u64 {
    let mut path = match is_dir {
        true => name,
        false => name.rsplit_once('/').map_or("", |(parent, _)| parent),
    };
    let mut n = 0;
    while !path.is_empty() && std::fs::symlink_metadata(dir.join(path)).is_err() {
        n += 1;
        path = path.rsplit_once('/').map_or("", |(parent, _)| parent);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_and_side_files() {
        assert_eq!(zip_budget(1000, 100), ZIP_BUDGET_FLOOR);
        assert_eq!(zip_budget(10 << 20, 100), 1000 << 20);
        assert_eq!(zip_budget(u64::MAX, 100), u64::MAX);
        for side in ["site/wget-log", "wget-log.1", "a.log", "hts-cache/new.txt", "url.map"] {
            assert!(is_side_file(side), "{side}");
        }
        for page in ["www.e.org/index.html", "www.e.org/new.txt.html", "www.e.org/logo"] {
            assert!(!is_side_file(page), "{page}");
        }
    }
}
