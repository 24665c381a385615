//! Committing an object on a file system storage root.
//!
//! Nothing is built inside the root: a put or repair assembles the whole new object tree in
//! a locked stage directory of the replica's work directory (same file system, outside the
//! root): hard links of the files kept from the current object, copies of the new ones
//! (hashed as they are written), the inventories last; everything is synced. A new object is
//! then renamed into place (refused when one appeared meanwhile), an existing one exchanged
//! with the new tree in one step (`renameat2(RENAME_EXCHANGE)`), so a reader sees the old
//! object or the new one, never a mix. Where the file system cannot exchange, a new version is
//! refused rather than committed in two steps. The old tree, now in the stage directory, is
//! removed with it; a killed run leaves only its stage directory, which the next run removes
//! once its lock is free.
//!
//! Each object has a lock file in the work directory, held (`flock`) by the put or repair
//! that changes the object, so two never build on the same head at once. A check takes no
//! lock and writes nothing.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::{CWD, FlockOperation, RenameFlags, renameat_with};
use sha2::{Digest, Sha256};

use super::layout::{MAX_ROOT_FILE, ROOT_DECLARATION, RootFile, judge_root_file, root_files};
use crate::layout::{self as confined, ConfineError};
use crate::store::replica::{HashingFile, Source};
use crate::store::{CopyFailure, StoreError};
use crate::temporaries::{self, TempName};

/// Where `store remove` moves an object out of the root to delete it (in the work
/// directory).
const REMOVING: &str = "removing";

/// A stage directory in the work directory.
const STAGE: TempName = TempName { prefix: ".ocfl-stage-", suffix: "", dirs: true };

/// A file system replica's storage root and its work directory.
#[derive(Debug, Clone)]
pub(crate) struct FsRoot {
    /// The replica's name.
    pub name: String,
    /// The storage root.
    pub root: PathBuf,
    /// Where objects are staged (same file system, outside the root).
    pub work: PathBuf,
}

impl FsRoot {
    /// The work directory used when the configuration names none: beside the root.
    pub(crate) fn default_work(root: &Path) -> PathBuf {
        let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        root.with_file_name(format!("{name}.webaip-work"))
    }

    fn err(&self, key: &str, e: impl Into<CopyFailure>) -> StoreError {
        StoreError::Replica {
            replica: self.name.clone(),
            key: key.into(),
            source: Box::new(e.into()),
        }
    }

    /// Makes the storage root (its declaration last) when it is absent or an empty directory,
    /// or finishes one a killed run left half made (holding only root files webaip writes,
    /// each with its bytes or the start of them); a directory with anything else in it and
    /// no declaration is refused. One maker at a time: two first puts never see each
    /// other's half-made root.
    pub(crate) fn ensure_root(&self) -> Result<(), StoreError> {
        // The stage directories of killed runs go first (a live run's stays locked).
        if self.work.is_dir() {
            temporaries::remove_dead(&self.work, STAGE);
        }
        if self.declared()? {
            return Ok(());
        }
        std::fs::create_dir_all(&self.root).map_err(|e| self.err("", e))?;
        // The root's own lock: no object has the empty id.
        let _making = self.lock("")?;
        if self.declared()? {
            return Ok(());
        }
        let files = root_files();
        let Some(there) = self.half_made(&files)? else {
            return Err(StoreError::NotOcflRoot {
                replica: self.name.clone(),
                root: self.root.clone(),
            });
        };
        for (name, bytes) in &files {
            crate::hooks::write_point();
            let written = match there.get(name) {
                None => confined::create_in(&self.root, name).map_err(|e| self.err(name, e))?,
                Some(&n) if n == bytes.len() => continue,
                // The start of our own bytes: a write cut short, finished here.
                Some(_) => open_append(&self.root.join(name)).map_err(|e| self.err(name, e))?,
            };
            let from = there.get(name).copied().unwrap_or(0);
            write_synced(written, &bytes[from..]).map_err(|e| self.err(name, e))?;
        }
        crate::hooks::write_point();
        sync_dir(&self.root).map_err(|e| self.err("", e))
    }

    /// Whether the root holds its declaration, whole: a declaration a crash left empty or cut
    /// short (it is written last, when the root is made) is no declaration, and the root is
    /// finished as a half-made one; other bytes in it make the root refused.
    fn declared(&self) -> Result<bool, StoreError> {
        let name = ROOT_DECLARATION.0;
        match confined::metadata_in(&self.root, name) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => return Ok(false),
            Err(e) => return Err(self.err(name, e)),
        }
        match confined::read_bounded(&self.root.join(name), MAX_ROOT_FILE) {
            Ok(held) => Ok(judge_root_file(name, Some(&held), false) == RootFile::Sound),
            Err(ConfineError::TooLarge { .. }) => Ok(false),
            Err(e) => Err(self.err(name, e)),
        }
    }

    /// The root files `files` present in the root, each with its length, when the root holds
    /// nothing else (the folders leading to them aside) and each holds the start of its
    /// bytes (all of them, or fewer where a write was cut short); `None` when it holds
    /// anything else.
    fn half_made(
        &self,
        files: &[(String, Vec<u8>)],
    ) -> Result<Option<BTreeMap<String, usize>>, StoreError> {
        let mut there = BTreeMap::new();
        let walk = walkdir::WalkDir::new(&self.root).min_depth(1).max_depth(3).follow_links(false);
        for entry in walk {
            let entry = entry.map_err(|e| self.err("", io::Error::from(e)))?;
            let rel = entry.path().strip_prefix(&self.root).unwrap_or(entry.path());
            let rel = rel.to_string_lossy().into_owned();
            let kind = entry.file_type();
            if kind.is_dir() && files.iter().any(|(n, _)| n.starts_with(&format!("{rel}/"))) {
                continue;
            }
            let Some((_, bytes)) = files.iter().find(|(n, _)| *n == rel).filter(|_| kind.is_file())
            else {
                return Ok(None);
            };
            let held = match confined::read_bounded(entry.path(), bytes.len() as u64) {
                Ok(held) if bytes.starts_with(&held) => held,
                Ok(_) | Err(ConfineError::TooLarge { .. }) => return Ok(None),
                Err(e) => return Err(self.err(&rel, e)),
            };
            there.insert(rel, held.len());
        }
        Ok(Some(there))
    }

    /// The object's lock, held until the returned file is dropped (blocking until free).
    pub(crate) fn lock(&self, id: &str) -> Result<File, StoreError> {
        let place = self.root.as_os_str().as_encoded_bytes();
        object_lock(&self.work, place, id).map_err(|e| self.err("", e))
    }

    /// Hard-links each of `rels` (files of object `obj` no inventory accounts for) into a
    /// new quarantine directory of the work directory, outside the root, and returns it: a
    /// repair then leaves them out of the rebuilt object without losing them.
    pub(crate) fn quarantine(&self, obj: &str, rels: &[&str]) -> Result<PathBuf, StoreError> {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.fZ");
        let name = format!("quarantine/{stamp}-{}", std::process::id());
        std::fs::create_dir_all(&self.work).map_err(|e| self.err("", e))?;
        // A link in the work directory (`quarantine` pointing elsewhere) is refused, so the
        // files never leave through it.
        let dir = confined::create_dirs_in(&self.work, &name).map_err(|e| self.err("", e))?;
        for rel in rels {
            let key = format!("{obj}/{rel}");
            let from = confined::open_in(&self.root, &key).map_err(|e| self.err(&key, e))?;
            drop(from); // opened only to refuse links and non-files on the way
            let (parent, leaf) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
            let to = confined::create_dirs_in(&dir, parent).map_err(|e| self.err(&key, e))?;
            std::fs::hard_link(self.root.join(&key), to.join(leaf))
                .map_err(|e| self.err(&key, e))?;
        }
        Ok(dir)
    }

    /// Removes object `obj` (of `id`; the caller holds its lock) from the root: moved out in
    /// one rename into the work directory's `removing/` (same file system, so a kill leaves
    /// the whole object in the root or none of it), the n-tuple directories it leaves empty
    /// removed (never the root itself), then the tree deleted in `removing/`. A tree a killed removal moved out
    /// is found by its name and deleted first. `moved` is called once the object is out of
    /// the root.
    pub(crate) fn remove_object(
        &self,
        id: &str,
        obj: &str,
        moved: &mut dyn FnMut(),
    ) -> Result<(), StoreError> {
        std::fs::create_dir_all(&self.work).map_err(|e| self.err("", e))?;
        confined::create_dirs_in(&self.work, REMOVING).map_err(|e| self.err("", e))?;
        let holding = confined::open_dir_in(&self.work, REMOVING).map_err(|e| self.err("", e))?;
        let name = self.removal_name(id);
        self.delete_moved(&name)?;
        match confined::open_dir_in(&self.root, obj) {
            Ok(_) => {
                self.move_out(obj, &holding, &name)?;
                moved();
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(self.err(obj, e)),
        }
        // The root made whole first (no empty n-tuple directory, which validators refuse),
        // before the deletion, which takes long for a large object: a kill during it leaves
        // the root valid.
        self.remove_empty_parents(obj)?;
        self.delete_moved(&name)
    }

    /// The name object `id`'s tree has in `removing/` while it is deleted: by the root and
    /// the id, as its lock is (two replicas may share a work directory).
    fn removal_name(&self, id: &str) -> String {
        let mut key = Sha256::new();
        key.update(self.root.as_os_str().as_encoded_bytes());
        key.update([0]);
        key.update(id.as_bytes());
        crate::formats::digest::hex(&key.finalize())
    }

    /// Renames `obj` out of the root to `name` in `holding`, both reached without links.
    fn move_out(&self, obj: &str, holding: &File, name: &str) -> Result<(), StoreError> {
        let (parent, leaf) = obj.rsplit_once('/').unwrap_or(("", obj));
        let from = confined::open_dir_in(&self.root, parent).map_err(|e| self.err(obj, e))?;
        crate::hooks::write_point();
        match rustix::fs::renameat(&from, leaf, holding, name) {
            Ok(()) => {}
            Err(rustix::io::Errno::XDEV) => {
                return Err(StoreError::WorkElsewhere {
                    replica: self.name.clone(),
                    work: self.work.clone(),
                });
            }
            Err(e) => return Err(self.err(obj, io::Error::from(e))),
        }
        crate::hooks::write_point();
        from.sync_all().map_err(|e| self.err(obj, e))?;
        crate::hooks::write_point();
        holding.sync_all().map_err(|e| self.err("", e))
    }

    /// Deletes `name` from `removing/` when it is there (remove_dir_all follows no link).
    fn delete_moved(&self, name: &str) -> Result<(), StoreError> {
        let path = self.work.join(REMOVING).join(name);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(self.err("", e)),
        };
        crate::hooks::write_point();
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        gone.map_err(|e| self.err("", e))
    }

    /// Removes the directories leading to `obj` that are left empty, deepest first, up to the
    /// first that is not (another object's); the root stays. A put of another object that
    /// finds its parent gone fails cleanly and is run again.
    fn remove_empty_parents(&self, obj: &str) -> Result<(), StoreError> {
        match obj.rsplit_once('/') {
            Some((parent, _)) => self.remove_empty_from(parent).map(drop),
            None => Ok(()),
        }
    }

    /// Removes `dir` when it is empty, then each directory above it that this leaves empty,
    /// up to the first that is not; the root stays. Returns the directories removed (none
    /// when `dir` is gone or holds something: an empty directory is all this ever removes,
    /// so nothing is lost).
    pub(crate) fn remove_empty_from(&self, dir: &str) -> Result<Vec<String>, StoreError> {
        let mut removed = Vec::new();
        let mut next = Some(dir.trim_end_matches('/')).filter(|d| !d.is_empty());
        while let Some(dir) = next {
            let (up, leaf) = dir.rsplit_once('/').unwrap_or(("", dir));
            next = dir.rsplit_once('/').map(|(p, _)| p);
            let at = match confined::open_dir_in(&self.root, up) {
                Ok(f) => f,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(self.err(dir, e)),
            };
            crate::hooks::write_point();
            match rustix::fs::unlinkat(&at, leaf, rustix::fs::AtFlags::REMOVEDIR) {
                Ok(()) => removed.push(dir.to_string()),
                Err(rustix::io::Errno::NOENT) => {}
                Err(rustix::io::Errno::NOTEMPTY | rustix::io::Errno::EXIST) => return Ok(removed),
                Err(e) => return Err(self.err(dir, io::Error::from(e))),
            }
            at.sync_all().map_err(|e| self.err(dir, e))?;
        }
        Ok(removed)
    }

    /// A new stage directory for object `obj` (the ones killed runs left are removed first);
    /// the object's tree is built at its own path inside it.
    pub(crate) fn stage(&self, obj: &str) -> Result<Stage, StoreError> {
        std::fs::create_dir_all(&self.work).map_err(|e| self.err("", e))?;
        temporaries::remove_dead(&self.work, STAGE);
        let (dir, lock) =
            temporaries::locked_dir_in(&self.work, STAGE).map_err(|e| self.err("", e))?;
        let dir = dir.keep();
        let stage = Stage { root: self.clone(), dir, obj: obj.into(), _lock: lock };
        confined::create_dirs_in(&stage.dir, obj).map_err(|e| self.err(obj, e))?;
        Ok(stage)
    }
}

/// The lock of object `id` of the root at `place` (its path, or a bucket's endpoint, name and
/// prefix), a file in `work/locks` held (`flock`) until the returned file is dropped; blocks
/// until free.
pub(super) fn object_lock(work: &Path, place: &[u8], id: &str) -> Result<File, CopyFailure> {
    std::fs::create_dir_all(work)?;
    // Made below the work directory refusing links: a lock never lands elsewhere.
    let dir = confined::create_dirs_in(work, "locks")?;
    // Named by the replica's root as well as the object: two replicas may share one work
    // directory, and one put locks the object on each in turn.
    let mut key = Sha256::new();
    key.update(place);
    key.update([0]);
    key.update(id.as_bytes());
    let name = crate::formats::digest::hex(&key.finalize());
    let path = dir.join(format!("{name}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags_nofollow()
        .open(&path)?;
    rustix::fs::flock(&file, FlockOperation::LockExclusive).map_err(io::Error::from)?;
    Ok(file)
}

/// Opening without following a link at the last component.
trait NoFollow {
    fn custom_flags_nofollow(&mut self) -> &mut Self;
}

impl NoFollow for std::fs::OpenOptions {
    fn custom_flags_nofollow(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NOFOLLOW)
    }
}

/// A locked stage directory holding a new object tree; removed (with what is in it, the old
/// tree after an exchange) when dropped.
pub(crate) struct Stage {
    root: FsRoot,
    dir: PathBuf,
    obj: String,
    _lock: File,
}

impl Drop for Stage {
    fn drop(&mut self) {
        // Removed before the lock goes; remove_dir_all follows no link.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Stage {
    /// The new object tree.
    pub(crate) fn tree(&self) -> PathBuf {
        self.dir.join(&self.obj)
    }

    /// The stage directory (the tree is at the object's path in it).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Hard-links `rel` of the object `obj` in the root into the tree (links and anything
    /// but a regular file are refused).
    pub(crate) fn link(&self, obj: &str, rel: &str) -> Result<(), StoreError> {
        let key = format!("{obj}/{rel}");
        let from = confined::open_in(&self.root.root, &key).map_err(|e| self.root.err(&key, e))?;
        drop(from); // opened only to refuse links and non-files on the way
        let tree = self.tree();
        crate::hooks::write_point();
        if let Some((dir, _)) = rel.rsplit_once('/') {
            confined::create_dirs_in(&tree, dir).map_err(|e| self.root.err(&key, e))?;
        }
        std::fs::hard_link(self.root.root.join(&key), tree.join(rel)).map_err(|e| {
            if e.raw_os_error() == Some(libc::EXDEV) {
                StoreError::WorkElsewhere {
                    replica: self.root.name.clone(),
                    work: self.root.work.clone(),
                }
            } else {
                self.root.err(&key, e)
            }
        })
    }

    /// Writes `bytes` to `rel` in the tree, synced.
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), StoreError> {
        crate::hooks::write_point();
        let f = confined::create_in(&self.tree(), rel).map_err(|e| self.root.err(rel, e))?;
        write_synced(f, bytes).map_err(|e| self.root.err(rel, e))
    }

    /// Creates `rel` in the tree for writing (refused when it is there).
    pub(crate) fn create(&self, rel: &str) -> Result<File, StoreError> {
        crate::hooks::write_point();
        confined::create_in(&self.tree(), rel).map_err(|e| self.root.err(rel, e))
    }

    /// Removes `rel` from the tree when it is there (what a write cut short left).
    pub(crate) fn remove(&self, rel: &str) -> Result<(), StoreError> {
        match confined::open_in(&self.tree(), rel) {
            Ok(_) => std::fs::remove_file(self.tree().join(rel)).map_err(|e| self.root.err(rel, e)),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(self.root.err(rel, e)),
        }
    }

    /// The error of a write of `rel` in the tree.
    pub(crate) fn error(&self, rel: &str, e: io::Error) -> StoreError {
        self.root.err(rel, e)
    }

    /// Copies `source` to `rel` in the tree, hashing the bytes as they are written: kept only
    /// when their SHA-512 is `sha512`.
    pub(crate) fn copy_verified(
        &self,
        rel: &str,
        source: Source,
        sha512: &str,
    ) -> Result<(), StoreError> {
        let f = confined::create_in(&self.tree(), rel).map_err(|e| self.root.err(rel, e))?;
        let mut input = source.open().map_err(|e| self.root.err(rel, e))?;
        let mut out = HashingFile::new(f);
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match io::Read::read(&mut input, &mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.root.err(rel, e)),
            };
            crate::hooks::write_point();
            out.write(&buf[..n]).map_err(|e| self.root.err(rel, e))?;
        }
        crate::hooks::write_point();
        let (_, found) = out.finish().map_err(|e| self.root.err(rel, e))?;
        if found != sha512 {
            return Err(self.root.err(rel, CopyFailure::Digest { found, expected: sha512.into() }));
        }
        Ok(())
    }

    /// Puts the tree in place of object `obj`: renamed there when `replacing` is false (and
    /// nothing is there), exchanged with the current object when true.
    pub(crate) fn commit(self, obj: &str, replacing: bool) -> Result<(), StoreError> {
        let tree = self.tree();
        crate::hooks::write_point();
        sync_tree(&tree).map_err(|e| self.root.err(obj, e))?;
        if crate::hooks::fail_at("ocfl-before-commit") {
            std::process::abort(); // a test of what a kill leaves
        }
        let (parent, _) = obj.rsplit_once('/').unwrap_or(("", obj));
        let parent_path =
            confined::create_dirs_in(&self.root.root, parent).map_err(|e| self.root.err(obj, e))?;
        let target = self.root.root.join(obj);
        let flags = if replacing { RenameFlags::EXCHANGE } else { RenameFlags::NOREPLACE };
        crate::hooks::write_point();
        let renamed = if replacing && crate::hooks::fail_at("no-exchange") {
            Err(rustix::io::Errno::INVAL) // a test of a file system without the exchange
        } else {
            renameat_with(CWD, &tree, CWD, &target, flags)
        };
        match renamed {
            Ok(()) => {}
            Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => {
                return Err(StoreError::Exists {
                    replica: self.root.name.clone(),
                    key: obj.into(),
                });
            }
            Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                return Err(StoreError::NoExchange {
                    replica: self.root.name.clone(),
                    root: self.root.root.clone(),
                });
            }
            Err(e) => return Err(self.root.err(obj, io::Error::from(e))),
        }
        crate::hooks::write_point();
        sync_dir(&parent_path).map_err(|e| self.root.err(obj, e))?;
        crate::hooks::write_point();
        if crate::hooks::fail_at("ocfl-after-commit") {
            std::process::abort();
        }
        Ok(())
    }
}

/// Opens a root file a killed write left short, to write the rest of it (never through a
/// link).
fn open_append(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new().append(true).custom_flags_nofollow().open(path)
}

fn write_synced(mut f: File, bytes: &[u8]) -> io::Result<()> {
    io::Write::write_all(&mut f, bytes)?;
    crate::hooks::write_point();
    f.sync_all()
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Syncs every directory of the tree (files were synced as they were written; linked ones
/// were synced when first committed).
fn sync_tree(tree: &Path) -> io::Result<()> {
    for e in walkdir::WalkDir::new(tree).follow_links(false).contents_first(true) {
        let e = e.map_err(io::Error::other)?;
        if e.file_type().is_dir() {
            crate::hooks::write_point();
            sync_dir(e.path())?;
        }
    }
    Ok(())
}
