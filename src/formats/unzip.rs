//! One unpacker for every ZIP webaip opens (a zipped mirror, an E-ARK package), into a
//! temporary directory, with bounds a zip bomb cannot pass.
//!
//! The central directory is walked one entry at a time (never held whole), twice: first to
//! check the archive (at most [`Limits::max_entries`] entries, none more than [`Limits::max_depth`]
//! folders deep; no two entries' local header and data may share a byte, which is how a small
//! zip makes many entries of one compressed stream; the sizes the entries declare must fit the
//! budget and the free space), then to unpack. What is written is counted as it is written,
//! whatever the headers declare, and so is each new directory ([`DIRECTORY_COST`] bytes) and
//! file ([`FILE_COST`]); unpacking stops at the budget: the caller's ratio times the zip's
//! size, at least [`ZIP_BUDGET_FLOOR`].
//!
//! A zip refused whole is an [`UnzipError`] naming the zip and the entry at fault, and nothing
//! of it is kept. An entry refused alone (a link, a name leaving the folder, a second entry of
//! a name, a file where a directory is needed, a damaged or unsupported entry) is listed with
//! the reason and the rest unpacked; the caller decides what a refusal means.
//!
//! The temporary directory (named by the caller's [`TempName`]) is locked with `flock` for as
//! long as it is used; each unpack first removes those of the same name whose lock it can
//! take: they belong to runs that died.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use sha2::Digest;

use crate::formats::warc::header::escape_controls;
use crate::layout::{self, ConfineError};
use crate::temporaries::{self, TempName};

/// Most entries a `.zip` may hold (its check keeps 24 bytes an entry).
pub const MAX_ZIP_ENTRIES: usize = 1_000_000;
/// Most folders an entry's name may go down (a chain of 1,000 cost one entry's name).
pub const MAX_ZIP_DEPTH: usize = 128;
/// How many times its own size a `.zip` may unpack to, unless the operator says more.
pub const DEFAULT_ZIP_EXPANSION: u64 = 100;
/// What any `.zip` may unpack to, however small: small zips of text compress well.
pub const ZIP_BUDGET_FLOOR: u64 = 64 << 20;
/// What a new directory or file costs of the budget besides its bytes: its inode and block.
/// A zip of empty directories nested 1,900 deep wrote 700 MB of directories on no byte.
pub const DIRECTORY_COST: u64 = 4096;
/// See [`DIRECTORY_COST`].
pub const FILE_COST: u64 = 512;

/// The bytes a zip of `zip_len` bytes may unpack to with `expansion` (a ratio).
pub fn zip_budget(zip_len: u64, expansion: u64) -> u64 {
    zip_len.saturating_mul(expansion).max(ZIP_BUDGET_FLOOR)
}

/// Why a `.zip` is not unpacked.
#[derive(Debug, thiserror::Error)]
pub enum UnzipError {
    /// The `.zip` cannot be read, or written out.
    #[error("{path}: {why}")]
    Zip {
        /// The zip file (and entry, when one is at fault).
        path: String,
        /// Why.
        why: String,
    },
    /// Two entries of a `.zip` share bytes (a small zip making many entries of one stream).
    #[error(
        "{zip}: entry {entry:?} overlaps entry {other:?} (at offset {offset}): entries sharing \
         their data are how a small zip unpacks to a huge one; the zip is refused, nothing is \
         unpacked"
    )]
    Overlap {
        /// The zip file.
        zip: String,
        /// The later entry.
        entry: String,
        /// The entry it overlaps.
        other: String,
        /// Where the later entry's local header starts.
        offset: u64,
    },
    /// An entry's name goes down more folders than any may.
    #[error(
        "{zip}: entry {entry:?} is {depth} folders deep, more than the {max} folders deep an \
         entry may be; the zip is refused, nothing is unpacked"
    )]
    Depth {
        /// The zip file.
        zip: String,
        /// The entry (its start, when long).
        entry: String,
        /// Its depth.
        depth: usize,
        /// The most folders an entry may go down (`Limits::max_depth`).
        max: usize,
    },
    /// A `.zip` unpacks to more than its budget.
    #[error(
        "{zip}{}: {what}, more than the zip's budget of {budget} bytes ({expansion} times its \
         size, at least {floor}); the zip is refused and nothing of it is kept{raise}",
        entry.as_ref().map(|e| format!(": entry {e:?}")).unwrap_or_default(),
        floor = ZIP_BUDGET_FLOOR,
        raise = option.map(|o| format!("; {o} raises the ratio")).unwrap_or_default()
    )]
    Budget {
        /// The zip file.
        zip: String,
        /// The entry being unpacked when the budget ran out (none: the declared sizes).
        entry: Option<String>,
        /// What passed the budget.
        what: String,
        /// The budget in bytes.
        budget: u64,
        /// The ratio it was computed with.
        expansion: u64,
        /// The option that raises the ratio, where there is one.
        option: Option<&'static str>,
    },
    /// The entries declare more bytes than the disk has free.
    #[error(
        "{zip}: its entries declare {declared} bytes, more than the {free} bytes free in {dir}; \
         the zip is refused, nothing is unpacked"
    )]
    Space {
        /// The zip file.
        zip: String,
        /// The sum of the declared sizes.
        declared: u64,
        /// Bytes free.
        free: u64,
        /// Where it would be unpacked.
        dir: String,
    },
}

/// What an unpack may write: the caps a zip bomb meets. Every zip webaip opens is unpacked
/// with these ([`Limits::of`] gives the defaults; callers change only what they must).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most entries the zip may hold ([`MAX_ZIP_ENTRIES`]): the check keeps 24 bytes an entry.
    pub max_entries: usize,
    /// Most folders an entry's name may go down ([`MAX_ZIP_DEPTH`]).
    pub max_depth: usize,
    /// Bytes decompressed (and directories and files counted), all entries together, per
    /// byte of the zip ([`zip_budget`]).
    pub expansion: u64,
    /// The option that raises the ratio (for the message).
    pub option: Option<&'static str>,
    /// Bytes written of each file for which `keep_whole` is false, when not all: the rest is
    /// decompressed, counted and left as a hole.
    pub head: Option<u64>,
    /// Files always written whole (by name) when `head` is set.
    pub keep_whole: fn(&str) -> bool,
}

impl Limits {
    /// The budget at `expansion` (raised by `option`), every file written whole.
    pub fn of(expansion: u64, option: Option<&'static str>) -> Limits {
        Limits {
            max_entries: MAX_ZIP_ENTRIES,
            max_depth: MAX_ZIP_DEPTH,
            expansion,
            option,
            head: None,
            keep_whole: |_| true,
        }
    }
}

/// The limits of one zip, its budget in bytes worked out from its size.
struct Budget<'a> {
    bytes: u64,
    limits: &'a Limits,
}

/// A `.zip` unpacked into a temporary directory (removed when dropped).
#[derive(Debug)]
pub struct Unpacked {
    /// The temporary directory.
    pub dir: tempfile::TempDir,
    /// The lock that tells later runs the directory is in use (released on drop).
    pub lock: File,
    /// Entries not unpacked (name, why): links, names leaving the folder, duplicates, a file
    /// where a directory is needed, damaged or unsupported entries.
    pub refused: Vec<(String, String)>,
    /// Earlier runs' temporary directories found beside it, and what was done about them.
    pub leftovers: Vec<String>,
    /// Bytes written.
    pub written: u64,
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

/// How a zip is named in messages.
fn zip_text(zip: &Path) -> String {
    escape_controls(&zip.display().to_string())
}

fn zip_error(zip: &Path, what: &str, why: impl std::fmt::Display) -> UnzipError {
    UnzipError::Zip { path: format!("{}{what}", zip_text(zip)), why: why.to_string() }
}

/// Unpacks `zip` into a new temporary directory below `work` named by `temp` (after removing
/// those of killed runs), within `limits` (see the module documentation).
pub(crate) fn unpack(
    zip: &Path,
    work: &Path,
    temp: TempName,
    limits: &Limits,
) -> Result<Unpacked, UnzipError> {
    let file = layout::open_regular(zip).map_err(|e| zip_error(zip, "", e))?;
    let len = file.metadata().map_err(|e| zip_error(zip, "", layout::describe_io(&e)))?.len();
    let budget = Budget { bytes: zip_budget(len, limits.expansion), limits };
    let declared = check_zip(zip, &file, len, &budget)?;
    let leftovers = temporaries::remove_dead(work, temp).notes(work);
    if limits.head.is_none() {
        check_space(zip, work, declared)?;
    }
    let (dir, lock) = temporaries::locked_dir_in(work, temp).map_err(|e| {
        let why = layout::describe_io(&e);
        zip_error(zip, "", format!("no temporary directory in {}: {why}", work.display()))
    })?;
    let (refused, written) = unpack_entries(zip, &file, dir.path(), &budget)?;
    Ok(Unpacked { dir, lock, refused, leftovers, written })
}

/// Refuses a zip whose entries declare more than the space free in `work`.
fn check_space(zip: &Path, work: &Path, declared: u64) -> Result<(), UnzipError> {
    let st = rustix::fs::statvfs(work).map_err(|e| {
        let why = layout::describe_io(&io::Error::from(e));
        zip_error(zip, "", format!("{}: {why}", work.display()))
    })?;
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    if declared > free {
        let (zip, dir) = (zip_text(zip), work.display().to_string());
        return Err(UnzipError::Space { zip, declared, free, dir });
    }
    Ok(())
}

fn iterable<'a>(
    zip: &Path,
    file: &'a File,
) -> Result<zip::unstable::read::ZipIterable<BufReader<At<'a>>>, UnzipError> {
    let r = BufReader::with_capacity(1 << 16, At { file, pos: 0 });
    zip::unstable::read::ZipIterable::try_new(r, zip::read::Config::default())
        .map_err(|e| zip_error(zip, "", format!("not a zip archive ({e})")))
}

/// The name an entry is shown by: its name, control characters escaped, clipped (the raw name
/// serves only to confine).
fn shown_name(e: &zip::read::ZipFileEntry<'_>, i: usize) -> String {
    match e.name() {
        Ok(n) => layout::clip(&escape_controls(&n), layout::SHOWN_NAME),
        Err(_) => format!("entry {i}"),
    }
}

/// The folders a name goes down (its last segment too when it is a directory's).
fn depth(name: &str, is_dir: bool) -> usize {
    let segments = name.split('/').filter(|s| !s.is_empty() && *s != ".").count();
    if is_dir { segments } else { segments.saturating_sub(1) }
}

/// An entry's place in the zip: where its local header starts, where its data ends.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Span {
    start: u64,
    end: u64,
    index: u32,
}

/// The first pass: entry count, depth, overlapping entries, the sizes declared against the
/// budget; the sum of the declared sizes.
fn check_zip(zip: &Path, file: &File, len: u64, budget: &Budget) -> Result<u64, UnzipError> {
    let mut it = iterable(zip, file)?;
    let mut spans: Vec<Span> = Vec::new();
    let mut declared = 0u64;
    let files = it.files().map_err(|e| zip_error(zip, "", e))?;
    for (i, e) in files.enumerate() {
        let e = e.map_err(|e| zip_error(zip, &format!(": entry {i}"), e))?;
        let (max_entries, max) = (budget.limits.max_entries, budget.limits.max_depth);
        if i >= max_entries {
            return Err(zip_error(zip, "", format!("more than {max_entries} entries")));
        }
        let shown = shown_name(&e, i);
        let deep = e.name().map_or(0, |n| depth(&n, e.is_dir()));
        if deep > max {
            return Err(UnzipError::Depth { zip: zip_text(zip), entry: shown, depth: deep, max });
        }
        spans.push(span_of(zip, file, len, &e, &shown, i)?);
        declared = declared.saturating_add(e.size());
    }
    spans.sort_unstable();
    if let Some(w) = spans.windows(2).find(|w| w[1].start < w[0].end) {
        let names = entry_names(zip, file, &[w[0].index, w[1].index]);
        return Err(UnzipError::Overlap {
            zip: zip_text(zip),
            entry: names[1].clone(),
            other: names[0].clone(),
            offset: w[1].start,
        });
    }
    if declared > budget.bytes {
        return Err(budget_error(
            zip,
            None,
            format!("its entries declare {declared} bytes"),
            budget,
        ));
    }
    Ok(declared)
}

/// Where entry `i`'s local header and data lie, which must be inside the zip's `len` bytes.
fn span_of(
    zip: &Path,
    file: &File,
    len: u64,
    e: &zip::read::ZipFileEntry<'_>,
    shown: &str,
    i: usize,
) -> Result<Span, UnzipError> {
    let at = |why: String| zip_error(zip, &format!(": entry {shown:?}"), why);
    let start = e.header_start();
    let mut head = [0u8; 30];
    file.read_exact_at(&mut head, start).map_err(|err| {
        at(format!("no local header at offset {start}: {}", layout::describe_io(&err)))
    })?;
    let lens = u64::from(u16::from_le_bytes([head[26], head[27]]))
        + u64::from(u16::from_le_bytes([head[28], head[29]]));
    let end = (start + 30 + lens).checked_add(e.compressed_size()).filter(|&end| end <= len);
    let end =
        end.ok_or_else(|| at(format!("its data runs past the end of the zip ({len} bytes)")))?;
    Ok(Span { start, end, index: i as u32 })
}

fn budget_error(zip: &Path, entry: Option<String>, what: String, budget: &Budget) -> UnzipError {
    UnzipError::Budget {
        zip: zip_text(zip),
        entry,
        what,
        budget: budget.bytes,
        expansion: budget.limits.expansion,
        option: budget.limits.option,
    }
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

/// Why an entry is not unpacked when creating its file or directory (`name`, below `dir`)
/// fails, or `None` when the failure is the run's (a full disk), not the entry's.
fn entry_refusal(dir: &Path, name: &str, e: &ConfineError) -> Option<String> {
    let below = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
    match e {
        ConfineError::NotRegular { path, kind } => Some(format!(
            "{:?} is {kind} (another entry) where this entry needs a folder: not unpacked",
            below(path)
        )),
        ConfineError::Io { source, .. }
            if matches!(
                source.kind(),
                io::ErrorKind::AlreadyExists
                    | io::ErrorKind::NotADirectory
                    | io::ErrorKind::IsADirectory
            ) =>
        {
            Some(in_the_way(dir, name))
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

/// Why `name` could not be made: what another entry made first, on its path or at it.
fn in_the_way(dir: &Path, name: &str) -> String {
    let mut prefix = String::new();
    for segment in name.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(segment);
        let Ok(m) = std::fs::symlink_metadata(dir.join(&prefix)) else { break };
        if prefix.len() < name.len() && !m.is_dir() {
            return format!(
                "{prefix:?} is a file (another entry) where this entry needs a folder: not unpacked"
            );
        }
        if prefix.len() == name.len() && m.is_dir() {
            return format!(
                "another entry of that name is unpacked: {prefix:?} is a folder (of entries \
                 below it): not unpacked"
            );
        }
    }
    "another entry of that name is unpacked: not unpacked".into()
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

/// The second pass's state: where it writes, what it has written, what it refused.
struct Pass<'a> {
    zip: &'a Path,
    dir: &'a Path,
    budget: &'a Budget<'a>,
    written: u64,
    refused: Refusals,
    /// The SHA-256 of every confined name met (32 bytes each, whatever the names' lengths):
    /// a second entry of a name, a directory's too, is refused.
    seen: std::collections::HashSet<[u8; 32]>,
    buf: Vec<u8>,
}

/// The second pass: every entry written below `dir`, counted against the budget.
fn unpack_entries(
    zip: &Path,
    file: &File,
    dir: &Path,
    budget: &Budget,
) -> Result<(Vec<(String, String)>, u64), UnzipError> {
    let mut it = iterable(zip, file)?;
    let mut body = BufReader::with_capacity(1 << 16, At { file, pos: 0 });
    let mut pass = Pass {
        zip,
        dir,
        budget,
        written: 0,
        refused: Refusals::default(),
        seen: Default::default(),
        buf: vec![0; 1 << 16],
    };
    let files = it.files().map_err(|e| zip_error(zip, "", e))?;
    for (i, e) in files.enumerate() {
        let e = e.map_err(|e| zip_error(zip, &format!(": entry {i}"), e))?;
        let shown = shown_name(&e, i);
        if let Some(name) = pass.admit(&e, &shown)? {
            pass.write(e, &mut body, &name, shown)?;
        }
    }
    Ok((pass.refused.into_list(), pass.written))
}

impl Pass<'_> {
    /// The entry's confined name, its directories and file charged to the budget; `None`
    /// when it is refused (listed) or names nothing.
    fn admit(
        &mut self,
        e: &zip::read::ZipFileEntry<'_>,
        shown: &str,
    ) -> Result<Option<String>, UnzipError> {
        let refuse = |p: &mut Self, why: String| {
            p.refused.push((shown.to_string(), why));
            Ok(None)
        };
        let raw = match e.name() {
            Ok(n) => n.into_owned(),
            Err(err) => return refuse(self, format!("name not read: {err}")),
        };
        let name = match layout::confined_name(&raw) {
            Ok(n) if !n.is_empty() => n,
            Ok(_) => return Ok(None),
            Err(why) => return refuse(self, format!("name {why}: not unpacked")),
        };
        if e.is_symlink() {
            return refuse(self, "symbolic link: not unpacked".into());
        }
        if !self.seen.insert(sha2::Sha256::digest(name.as_bytes()).into()) {
            return refuse(self, "another entry of that name is unpacked: not unpacked".into());
        }
        self.written += new_directories(self.dir, &name, e.is_dir()) * DIRECTORY_COST
            + if e.is_dir() { 0 } else { FILE_COST };
        if self.written > self.budget.bytes {
            let what = format!(
                "its directories and files cost more than {} bytes (each new directory counts \
                 {DIRECTORY_COST}, each file {FILE_COST})",
                self.budget.bytes
            );
            return Err(budget_error(self.zip, Some(shown.to_string()), what, self.budget));
        }
        Ok(Some(name))
    }

    /// Makes the entry's directory, or writes its file (refused alone when it is in the way
    /// of another or damaged).
    fn write(
        &mut self,
        e: zip::read::ZipFileEntry<'_>,
        body: &mut BufReader<At<'_>>,
        name: &str,
        shown: String,
    ) -> Result<(), UnzipError> {
        let (zip, dir) = (self.zip, self.dir);
        let fail = |why: String| zip_error(zip, &format!(": entry {shown:?}"), why);
        let made = match e.is_dir() {
            true => layout::create_dirs_in(dir, name).map(|_| None),
            false => layout::create_in(dir, name).map(Some),
        };
        let out = match made {
            Ok(Some(out)) => out,
            Ok(None) => return Ok(()),
            Err(err) => {
                let why = entry_refusal(dir, name, &err).ok_or_else(|| fail(err.to_string()))?;
                self.refused.push((shown, why));
                return Ok(());
            }
        };
        let mut reader = match e.with_reader(body, zip::ZipReadOptions::new()) {
            Ok(r) => r,
            Err(err) => {
                let _ = std::fs::remove_file(dir.join(name));
                self.refused.push((shown, format!("not unpacked: {err}")));
                return Ok(());
            }
        };
        let damaged = self.copy(&mut reader, out, name, &shown)?;
        if let Some(err) = damaged {
            let _ = std::fs::remove_file(dir.join(name));
            self.refused.push((shown, format!("damaged, not unpacked: {err}")));
        }
        Ok(())
    }

    /// Copies an entry's bytes to `out`, counted against the budget (only the head kept when
    /// the limits say so); the read error of a damaged entry.
    fn copy(
        &mut self,
        reader: &mut dyn Read,
        out: File,
        name: &str,
        shown: &str,
    ) -> Result<Option<io::Error>, UnzipError> {
        let (zip, budget) = (self.zip, self.budget);
        let limits = budget.limits;
        let fail = |err: &io::Error| {
            let why = format!("{} while writing it", layout::describe_io(err));
            zip_error(zip, &format!(": entry {shown:?}"), why)
        };
        let keep = limits.head.filter(|_| !(limits.keep_whole)(name)).unwrap_or(u64::MAX);
        let mut this = 0u64;
        let mut w = io::BufWriter::with_capacity(1 << 16, out);
        let damaged = loop {
            let n = match reader.read(&mut self.buf) {
                Ok(0) => break None,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => break Some(err),
            };
            self.written += n as u64;
            if self.written > budget.bytes {
                let what = format!("it unpacks to more than {} bytes", budget.bytes);
                return Err(budget_error(zip, Some(shown.to_string()), what, budget));
            }
            let kept = keep.saturating_sub(this).min(n as u64) as usize;
            this += n as u64;
            w.write_all(&self.buf[..kept]).map_err(|err| fail(&err))?;
        };
        let out = w.into_inner().map_err(|err| fail(err.error()))?;
        if this > keep {
            // The rest as a hole: the file has its true size, on no disk.
            out.set_len(this).map_err(|err| fail(&err))?;
        }
        Ok(damaged)
    }
}

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
    fn budgets_and_depths() {
        assert_eq!(zip_budget(1000, 100), ZIP_BUDGET_FLOOR);
        assert_eq!(zip_budget(10 << 20, 100), 1000 << 20);
        assert_eq!(zip_budget(u64::MAX, 100), u64::MAX);
        assert_eq!(depth("a/b/c", false), 2);
        assert_eq!(depth("a/b/c/", true), 3);
        assert_eq!(depth("f", false), 0);
    }

    /// A zip of `names` (empty files; a name ending in `/` is a folder).
    fn zip_of(dir: &Path, names: &[&str]) -> std::path::PathBuf {
        let path = dir.join("t.zip");
        let mut w = zip::ZipWriter::new(File::create(&path).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        for n in names {
            match n.strip_suffix('/') {
                Some(d) => w.add_directory(d, opts).unwrap(),
                None => w.start_file(*n, opts).unwrap(),
            }
        }
        w.finish().unwrap();
        path
    }

    const TEMP: TempName = TempName { prefix: ".webaip-test-", suffix: "", dirs: true };

    #[test]
    fn the_entry_and_depth_caps_are_the_callers() {
        let dir = tempfile::tempdir().unwrap();
        let zip = zip_of(dir.path(), &["a", "b/c/d", "e"]);
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let unpack_with = |limits: Limits| unpack(&zip, &work, TEMP, &limits).map(|u| u.written);
        assert!(unpack_with(Limits::of(DEFAULT_ZIP_EXPANSION, None)).is_ok());
        let few = Limits { max_entries: 2, ..Limits::of(DEFAULT_ZIP_EXPANSION, None) };
        let err = unpack_with(few).unwrap_err().to_string();
        assert!(err.contains("more than 2 entries"), "{err}");
        let shallow = Limits { max_depth: 1, ..Limits::of(DEFAULT_ZIP_EXPANSION, None) };
        let err = unpack_with(shallow).unwrap_err();
        assert!(matches!(err, UnzipError::Depth { depth: 2, max: 1, .. }), "{err}");
        assert!(err.to_string().contains("more than the 1 folders deep"), "{err}");
    }
}
