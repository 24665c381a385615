//! What webaip needs of a replica, and the filesystem replica.
//!
//! A replica stores objects under keys (`<partition>/<package>/<file>`). It never overwrites on
//! `create`; only `replace` does, and only repairs call it, for a copy proven bad.
//!
//! Before any file of a package is written to a replica, the package directory is *claimed*
//! for the package's manifest (its SHA-512): a second, different package under the same
//! identifier finds the claim and is refused before it writes anything; the same package again
//! finds its own claim and resumes.
//!
//! The file system replica reaches every path below its root through [`crate::layout`]: no
//! symbolic link is followed inside the root, and only regular files are read as copies.
//! Copies are written to a `.webaip-upload-*` temporary, synced, then published under their
//! name with `linkat` (which fails when the name exists) or, for a repair, `renameat`. A writer
//! holds an exclusive `flock` on its temporary while it lives, so a temporary whose lock can be
//! taken was left by a killed writer: [`Replica::clean_temporaries`] removes those.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FlockOperation};

use super::{CopyFailure, StoreError};
use crate::layout::{self, ConfineError};

/// Prefix of the temporaries a writer publishes from (and a killed one leaves behind).
pub(crate) const TEMPORARY_PREFIX: &str = ".webaip-upload-";
/// Name of the claim marker inside a package directory.
pub(crate) const CLAIM: &str = ".webaip-claim";
/// Longest claim read (a SHA-512 in hex and a nonce).
const CLAIM_LIMIT: u64 = 1024;

/// What a replica says about one stored object without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredObject {
    /// Size in bytes.
    pub size: u64,
    /// The SHA-512 recorded with the object (object stores keep it as metadata; a file system
    /// has nowhere to keep it).
    pub sha512: Option<String>,
}

/// One entry of a package directory's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedObject {
    /// Its key.
    pub key: String,
    /// Its size (of a regular file or an object).
    pub size: u64,
    /// Why it cannot be a copy (a symbolic link, a FIFO...), naming what it is.
    pub problem: Option<String>,
}

/// What an empty directory's entry in a listing says it is.
const EMPTY_DIR: &str = "is an empty directory, which OCFL does not allow";

impl ListedObject {
    /// Whether this entry is an empty directory (its key ends in `/`), listed by a file
    /// system replica that lists every file.
    pub(crate) fn is_empty_dir(&self) -> bool {
        self.key.ends_with('/') && self.problem.as_deref() == Some(EMPTY_DIR)
    }
}

/// One level of a replica's keys ([`Replica::list_level`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Level {
    /// The keys directly below the prefix.
    pub keys: Vec<String>,
    /// Its subfolders, each a key (without a trailing `/`).
    pub dirs: Vec<String>,
}

/// A file to store: a name below a root, opened without following links, regular files only.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    /// The directory the name is confined to (a package, a temporary directory).
    pub root: &'a Path,
    /// The name below it.
    pub name: &'a str,
}

impl Source<'_> {
    /// Opens the file for reading.
    pub(crate) fn open(&self) -> io::Result<File> {
        layout::open_in(self.root, self.name).map_err(io::Error::other)
    }
}

/// A place that holds copies of packages.
pub(crate) trait Replica: Send + Sync {
    /// The replica's name in the configuration.
    fn name(&self) -> &str;
    /// Where the replica is, for the order in which claims are taken: every process takes
    /// them in the same order (file systems, whose claims are exact, first), so two puts
    /// racing for one identifier meet at the same replica first and one of them stops there.
    fn claim_order(&self) -> (u8, String);
    /// Size (and recorded SHA-512) of the object at `key`, or `None` when there is none.
    fn stat(&self, key: &str) -> Result<Option<StoredObject>, StoreError>;
    /// Stores `source` at `key`, which must not exist yet: an object that appears meanwhile is
    /// left as it is and this fails with [`StoreError::Exists`].
    fn create(&self, key: &str, source: Source, size: u64, sha512: &str) -> Result<(), StoreError>;
    /// Stores `source` at `key` whether or not an object is there (repairs only).
    fn replace(&self, key: &str, source: Source, size: u64, sha512: &str)
    -> Result<(), StoreError>;
    /// Streams the object at `key` to `sink`, chunk by chunk; returns its length.
    fn read(
        &self,
        key: &str,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError>;
    /// Streams `len` bytes of the object at `key` from `offset` to `sink` (a ranged read:
    /// nothing else of the object is fetched); returns the bytes given.
    fn read_range(
        &self,
        key: &str,
        range: std::ops::Range<u64>,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError>;
    /// Every key under `prefix` (a package directory), with its size; the claim marker and
    /// live temporaries are not listed.
    fn list(&self, prefix: &str) -> Result<Vec<ListedObject>, StoreError>;
    /// Hands every key under `prefix` to `each` as [`Replica::list`] would list it, in key
    /// order; a replica that can walk its keys streams them, so a whole storage root is
    /// surveyed in bounded memory. Stops at the first error `each` returns.
    fn each_listed(
        &self,
        prefix: &str,
        each: &mut dyn FnMut(ListedObject) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.list(prefix)?.into_iter().try_for_each(each)
    }
    /// The package directories the replica holds (`<partition>/<name>`).
    fn packages(&self) -> Result<Vec<String>, StoreError>;
    /// Removes the temporaries killed writers left under `prefix`; returns their keys.
    fn clean_temporaries(&self, _prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }
    /// Claims the package directory `dir` for the package whose manifest has SHA-512
    /// `digest`, unless it is claimed already. Returns the digest that holds the claim
    /// afterwards (`digest` when this package holds it) and whether this call created it.
    fn claim(&self, dir: &str, digest: &str) -> Result<(String, bool), StoreError>;
    /// The digest that holds the claim on `dir`, if any.
    fn claim_holder(&self, dir: &str) -> Result<Option<String>, StoreError>;
    /// Removes the claim on `dir` (only for a claim this process just created and will not
    /// use: nothing else of the package was written).
    fn unclaim(&self, dir: &str) -> Result<(), StoreError>;
    /// Deletes the object at `key` (`store remove`); an object already absent is no error.
    fn delete(&self, key: &str) -> Result<(), StoreError>;
    /// Writes `bytes` at `key` in place (an OCFL root without renames: inventories, sidecars,
    /// declarations); with `create`, an object already there is left and this fails with
    /// [`StoreError::Exists`].
    fn write_bytes(&self, key: &str, bytes: &[u8], create: bool) -> Result<(), StoreError>;
    /// Stores `source` at `key` whether or not an object is there, hashing the bytes as they
    /// are sent: published only when their SHA-512 is `sha512` (else nothing appears).
    fn write_verified(
        &self,
        key: &str,
        source: Source,
        size: u64,
        sha512: &str,
    ) -> Result<(), StoreError>;
    /// Copies the object at `from` to `to` (over one there) without its bytes leaving the
    /// store: an object store's server-side copy. `Ok(false)` where the replica has none (a
    /// file system's); an error where the store refused.
    fn copy_within(&self, _from: &str, _to: &str) -> Result<bool, StoreError> {
        Ok(false)
    }
    /// One level of the keys below `prefix` (a folder's key, or empty for the root): the keys
    /// directly in it and its subfolders, each a key (an object store's delimiter listing;
    /// a file system's replica answers nothing here: its folders are walked instead).
    fn list_level(&self, _prefix: &str) -> Result<Level, StoreError> {
        Ok(Level::default())
    }
    /// Removes the directories left empty under `dir` once its objects are deleted (a file
    /// system's; object stores have none).
    fn remove_empty_dirs(&self, _dir: &str) -> Result<(), StoreError> {
        Ok(())
    }
    /// Why this replica cannot hold an object at `key` (longer than its store takes keys, a
    /// character its keys cannot hold), looked at before anything is written; `None` when it
    /// can (a file system's limits are met as the file is made).
    fn key_problem(&self, _key: &str) -> Option<super::KeyProblem> {
        None
    }
    /// Whether an OCFL object appears here whole, by one rename of its staged tree (a file
    /// system), rather than key by key with its root inventory last (an object store).
    fn moves_whole_objects(&self) -> bool {
        false
    }
}

/// The digest a claim's bytes name: the first word, a SHA-512 in hex.
pub(crate) fn claim_digest(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let word = text.split_whitespace().next()?;
    (word.len() == 128 && word.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| word.to_ascii_lowercase())
}

/// A name no other writer uses (process, time and a counter).
pub(crate) fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{}-{nanos:x}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// A replica in a directory.
pub(crate) struct FsReplica {
    name: String,
    root: PathBuf,
    /// List every file, the webaip layout's claims and temporaries too (an OCFL root has
    /// none of its own, so any there is a file an object must not hold).
    list_all: bool,
}

/// A temporary being written beside its final name: removed when dropped (after a successful
/// `linkat` the copy lives on under its name), and locked while it lives.
struct Staged {
    dir: File,
    leaf: String,
    file: File,
}

impl Drop for Staged {
    fn drop(&mut self) {
        // Unlinked before the descriptor (and its lock) goes, so no cleaner sees it unlocked.
        let _ = rustix::fs::unlinkat(&self.dir, self.leaf.as_str(), AtFlags::empty());
    }
}

/// Splits a key into its directory (maybe empty) and last segment.
fn split(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}

impl FsReplica {
    /// Lists the empty directory `dir` (key `dir_key`) as an entry that cannot be a copy
    /// (see [`ListedObject::is_empty_dir`]), where every file is listed: OCFL allows no
    /// empty directory in a storage root or an object, and only a listing can see one.
    fn give_empty_dir(
        &self,
        each: &mut dyn FnMut(ListedObject) -> Result<(), StoreError>,
        dir: &Path,
        dir_key: String,
    ) -> Result<(), StoreError> {
        // A directory that gained entries since the walk passed it is not empty.
        if self.list_all && std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none()) {
            let problem = Some(EMPTY_DIR.to_string());
            return each(ListedObject { key: format!("{dir_key}/"), size: 0, problem });
        }
        Ok(())
    }

    /// Hands the bytes of `key` in `range` (to its end at most) to `sink`; how many there were.
    fn read_from(
        &self,
        key: &str,
        range: std::ops::Range<u64>,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError> {
        use std::io::{Seek, SeekFrom};
        let mut f = layout::open_in(&self.root, key).map_err(|e| self.err(key, e))?;
        if range.start > 0 {
            f.seek(SeekFrom::Start(range.start)).map_err(|e| self.err(key, e))?;
        }
        let mut f = f.take(range.end.saturating_sub(range.start));
        let mut buf = vec![0u8; 1 << 20];
        let mut n = 0u64;
        loop {
            let k = match f.read(&mut buf) {
                Ok(0) => return Ok(n),
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.err(key, e)),
            };
            sink(&buf[..k]).map_err(|e| self.err(key, e))?;
            n += k as u64;
        }
    }

    /// A replica rooted at `root` (created when first written to).
    pub(crate) fn new(name: &str, root: &Path) -> Self {
        FsReplica { name: name.into(), root: root.to_path_buf(), list_all: false }
    }

    /// An OCFL storage root: its listing hides nothing.
    pub(crate) fn ocfl(name: &str, root: &Path) -> Self {
        FsReplica { list_all: true, ..FsReplica::new(name, root) }
    }

    fn err(&self, key: &str, e: impl Into<CopyFailure>) -> StoreError {
        StoreError::Replica {
            replica: self.name.clone(),
            key: key.into(),
            source: Box::new(e.into()),
        }
    }

    /// Creates a locked temporary in the directory of `key` (created, without links) and
    /// fills it by `fill`, then syncs it.
    fn stage(
        &self,
        key: &str,
        fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<Staged, StoreError> {
        let (dir, _) = split(key);
        std::fs::create_dir_all(&self.root).map_err(|e| self.err(key, e))?;
        if !dir.is_empty() {
            layout::create_dirs_in(&self.root, dir).map_err(|e| self.err(key, e))?;
        }
        let dirfd = layout::open_dir_in(&self.root, dir).map_err(|e| self.err(key, e))?;
        for _ in 0..8 {
            let leaf = format!("{TEMPORARY_PREFIX}{}", unique_suffix());
            let rel = if dir.is_empty() { leaf.clone() } else { format!("{dir}/{leaf}") };
            let file = match layout::create_in(&self.root, &rel) {
                Ok(f) => f,
                Err(ConfineError::Io { source, .. })
                    if source.kind() == io::ErrorKind::AlreadyExists =>
                {
                    continue;
                }
                Err(e) => return Err(self.err(key, e)),
            };
            let dir = dirfd.try_clone().map_err(|e| self.err(key, e))?;
            let staged = Staged { dir, leaf, file };
            rustix::fs::flock(staged.file.as_fd(), FlockOperation::NonBlockingLockExclusive)
                .map_err(|e| self.err(key, io::Error::from(e)))?;
            // A cleaner could have taken the name between its creation and the lock.
            let st = rustix::fs::fstat(staged.file.as_fd())
                .map_err(|e| self.err(key, io::Error::from(e)))?;
            if st.st_nlink == 0 {
                continue;
            }
            let mut out = BufWriter::with_capacity(1 << 20, &staged.file);
            fill(&mut out).map_err(|e| self.err(key, e))?;
            out.flush().map_err(|e| self.err(key, e))?;
            drop(out);
            staged.file.sync_all().map_err(|e| self.err(key, e))?;
            return Ok(staged);
        }
        Err(self.err(key, CopyFailure::NoTemporary))
    }

    /// Publishes a staged temporary under `key`: with `create` by a hard link, which fails
    /// when the name exists (no window in which a copy is overwritten), else by a rename,
    /// which replaces the entry itself (a link there is replaced, never followed).
    fn publish(&self, staged: Staged, key: &str, create: bool) -> Result<(), StoreError> {
        let (_, leaf) = split(key);
        let (from, dir) = (staged.leaf.as_str(), &staged.dir);
        let done = if create {
            rustix::fs::linkat(dir, from, dir, leaf, AtFlags::empty())
        } else {
            rustix::fs::renameat(dir, from, dir, leaf)
        };
        match done {
            Ok(()) => {
                let _ = staged.dir.sync_all();
                Ok(())
            }
            Err(rustix::io::Errno::EXIST) if create => {
                Err(StoreError::Exists { replica: self.name.clone(), key: key.into() })
            }
            Err(e) => Err(self.err(key, io::Error::from(e))),
        }
    }

    fn stage_file(&self, key: &str, source: Source) -> Result<Staged, StoreError> {
        let mut input = source.open().map_err(|e| self.err(key, e))?;
        self.stage(key, &mut |out| io::copy(&mut input, out).map(|_| ()))
    }
}

impl Replica for FsReplica {
    fn name(&self) -> &str {
        &self.name
    }

    fn claim_order(&self) -> (u8, String) {
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        (0, root.to_string_lossy().into_owned())
    }

    fn stat(&self, key: &str) -> Result<Option<StoredObject>, StoreError> {
        match layout::metadata_in(&self.root, key) {
            Ok(m) => Ok(Some(StoredObject { size: m.len(), sha512: None })),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(self.err(key, e)),
        }
    }

    fn create(&self, key: &str, source: Source, _size: u64, _sha: &str) -> Result<(), StoreError> {
        let staged = self.stage_file(key, source)?;
        self.publish(staged, key, true)
    }

    fn replace(&self, key: &str, source: Source, _size: u64, _sha: &str) -> Result<(), StoreError> {
        let staged = self.stage_file(key, source)?;
        self.publish(staged, key, false)
    }

    fn write_bytes(&self, key: &str, bytes: &[u8], create: bool) -> Result<(), StoreError> {
        let staged = self.stage(key, &mut |out| out.write_all(bytes))?;
        self.publish(staged, key, create)
    }

    fn write_verified(
        &self,
        key: &str,
        source: Source,
        _size: u64,
        sha512: &str,
    ) -> Result<(), StoreError> {
        let mut input = source.open().map_err(|e| self.err(key, e))?;
        let mut h = crate::formats::digest::Sha512::new();
        let staged = self.stage(key, &mut |out| {
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = match input.read(&mut buf) {
                    Ok(0) => return Ok(()),
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                h.update(&buf[..n]);
                out.write_all(&buf[..n])?;
            }
        })?;
        let found = crate::formats::digest::hex(&h.finalize());
        if found != sha512 {
            return Err(self.err(key, CopyFailure::Digest { found, expected: sha512.into() }));
        }
        self.publish(staged, key, false)
    }

    fn read(
        &self,
        key: &str,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError> {
        self.read_from(key, 0..u64::MAX, sink)
    }

    fn read_range(
        &self,
        key: &str,
        range: std::ops::Range<u64>,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError> {
        self.read_from(key, range, sink)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ListedObject>, StoreError> {
        let mut out = Vec::new();
        self.each_listed(prefix, &mut |o| {
            out.push(o);
            Ok(())
        })?;
        Ok(out)
    }

    fn each_listed(
        &self,
        prefix: &str,
        each: &mut dyn FnMut(ListedObject) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        // The package directory is reached without links; below it nothing is followed. An
        // empty prefix lists the whole root (an OCFL storage root's check).
        match layout::open_dir_in(&self.root, prefix) {
            Ok(_) => {}
            Err(_) if prefix.is_empty() && std::fs::symlink_metadata(&self.root).is_err() => {
                return Ok(());
            }
            Err(_) if prefix.is_empty() => {}
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(self.err(prefix, e)),
        }
        let base = self.root.join(prefix);
        let walk = walkdir::WalkDir::new(&base)
            .follow_links(false)
            .follow_root_links(false)
            .min_depth(1)
            .sort_by_file_name();
        // A directory is empty when the walk's next entry is not inside it (depth first,
        // so its entries come straight after it).
        let mut last_dir: Option<(PathBuf, String)> = None;
        for e in walk {
            let e = e.map_err(|e| self.err(prefix, io::Error::from(e)))?;
            let rel = e.path().strip_prefix(&self.root).unwrap_or(e.path());
            let key = rel.to_string_lossy().replace('\\', "/");
            let t = e.file_type();
            if let Some((dir, dir_key)) = last_dir.take().filter(|(d, _)| !e.path().starts_with(d))
            {
                self.give_empty_dir(each, &dir, dir_key)?;
            }
            if t.is_dir() {
                last_dir = Some((e.path().to_path_buf(), key));
                continue;
            }
            let leaf = e.file_name().to_string_lossy();
            let ours = leaf == CLAIM || leaf.starts_with(TEMPORARY_PREFIX);
            if t.is_file() && ours && !self.list_all {
                continue; // the claim, and temporaries of running writers
            }
            let meta = e.metadata().map_err(|x| self.err(&key, io::Error::from(x)))?;
            let problem = (!t.is_file()).then(|| {
                format!("is {}, not a regular file (not followed)", layout::kind_of(&meta))
            });
            each(ListedObject { key, size: meta.len(), problem })?;
        }
        match last_dir {
            Some((dir, dir_key)) => self.give_empty_dir(each, &dir, dir_key),
            None => Ok(()),
        }
    }

    fn packages(&self) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        let Ok(parts) = std::fs::read_dir(&self.root) else { return Ok(out) };
        for part in parts.flatten() {
            let p = part.file_name().to_string_lossy().into_owned();
            // DirEntry::file_type does not follow links: a link is not a partition.
            if p.len() != 2 || !part.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            for pkg in std::fs::read_dir(part.path()).map_err(|e| self.err(&p, e))?.flatten() {
                if pkg.file_type().is_ok_and(|t| t.is_dir()) {
                    out.push(format!("{p}/{}", pkg.file_name().to_string_lossy()));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn clean_temporaries(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        match layout::open_dir_in(&self.root, prefix) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => return Ok(Vec::new()),
            Err(e) => return Err(self.err(prefix, e)),
        }
        let mut removed = Vec::new();
        let walk = walkdir::WalkDir::new(self.root.join(prefix))
            .follow_links(false)
            .follow_root_links(false)
            .min_depth(1)
            .sort_by_file_name();
        for e in walk.into_iter().filter_map(Result::ok) {
            if !e.file_type().is_file()
                || !e.file_name().to_string_lossy().starts_with(TEMPORARY_PREFIX)
            {
                continue;
            }
            let rel = e.path().strip_prefix(&self.root).unwrap_or(e.path());
            let key = rel.to_string_lossy().into_owned();
            let Ok(file) = layout::open_in(&self.root, &key) else { continue };
            // Locked: a writer is alive and will publish or remove it itself.
            if rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_err() {
                continue;
            }
            let (dir, leaf) = split(&key);
            let dirfd = layout::open_dir_in(&self.root, dir).map_err(|x| self.err(&key, x))?;
            match rustix::fs::unlinkat(&dirfd, leaf, AtFlags::empty()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => removed.push(key),
                Err(x) => return Err(self.err(&key, io::Error::from(x))),
            }
        }
        Ok(removed)
    }

    fn claim(&self, dir: &str, digest: &str) -> Result<(String, bool), StoreError> {
        let key = format!("{dir}/{CLAIM}");
        // Written whole to a temporary, then linked: a claim is never seen half-written, and
        // the link fails when another put claimed the directory first.
        let staged =
            self.stage(&key, &mut |out| out.write_all(format!("{digest}\n").as_bytes()))?;
        match rustix::fs::linkat(
            &staged.dir,
            staged.leaf.as_str(),
            &staged.dir,
            CLAIM,
            AtFlags::empty(),
        ) {
            Ok(()) => {
                let _ = staged.dir.sync_all();
                Ok((digest.to_string(), true))
            }
            Err(rustix::io::Errno::EXIST) => {
                drop(staged);
                let holder = self.claim_holder(dir)?.unwrap_or_default();
                Ok((holder, false))
            }
            Err(e) => Err(self.err(&key, io::Error::from(e))),
        }
    }

    fn claim_holder(&self, dir: &str) -> Result<Option<String>, StoreError> {
        let key = format!("{dir}/{CLAIM}");
        let file = match layout::open_in(&self.root, &key) {
            Ok(f) => f,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(self.err(&key, e)),
        };
        let mut bytes = Vec::new();
        file.take(CLAIM_LIMIT).read_to_end(&mut bytes).map_err(|e| self.err(&key, e))?;
        // An unreadable claim still claims: it is nobody's digest, so every put is refused.
        Ok(Some(claim_digest(&bytes).unwrap_or_else(|| "an unreadable claim".into())))
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        let (parent, leaf) = split(key);
        let dirfd = match layout::open_dir_in(&self.root, parent) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(self.err(key, e)),
        };
        match rustix::fs::unlinkat(&dirfd, leaf, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(self.err(key, io::Error::from(e))),
        }
    }

    fn moves_whole_objects(&self) -> bool {
        true
    }

    fn remove_empty_dirs(&self, dir: &str) -> Result<(), StoreError> {
        // Deepest first; links are never followed (walkdir reports them as links, and
        // remove_dir refuses anything but an empty directory).
        let top = self.root.join(dir);
        let walk = walkdir::WalkDir::new(&top).follow_links(false).contents_first(true);
        for e in walk {
            let e = match e {
                Ok(e) => e,
                Err(e) if e.io_error().is_some_and(|io| io.kind() == io::ErrorKind::NotFound) => {
                    return Ok(());
                }
                Err(e) => return Err(self.err(dir, io::Error::other(e))),
            };
            if e.file_type().is_dir() {
                std::fs::remove_dir(e.path()).map_err(|err| self.err(dir, err))?;
            }
        }
        Ok(())
    }

    fn unclaim(&self, dir: &str) -> Result<(), StoreError> {
        let dirfd = layout::open_dir_in(&self.root, dir).map_err(|e| self.err(dir, e))?;
        match rustix::fs::unlinkat(&dirfd, CLAIM, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(self.err(dir, io::Error::from(e))),
        }
    }
}

/// Writes a stream to a file while hashing it; used to fetch copies.
pub(crate) struct HashingFile {
    pub out: BufWriter<File>,
    pub hasher: crate::formats::digest::Sha512,
    pub len: u64,
}

impl HashingFile {
    /// Writes to `file` (created by the caller, below its root).
    pub(crate) fn new(file: File) -> Self {
        HashingFile {
            out: BufWriter::with_capacity(1 << 20, file),
            hasher: crate::formats::digest::Sha512::new(),
            len: 0,
        }
    }

    /// Takes the next chunk.
    pub(crate) fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        self.hasher.update(chunk);
        self.len += chunk.len() as u64;
        self.out.write_all(chunk)
    }

    /// Flushes and syncs; returns the length and SHA-512 (hex).
    pub(crate) fn finish(self) -> io::Result<(u64, String)> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok((self.len, crate::formats::digest::hex(&self.hasher.finalize())))
    }
}
