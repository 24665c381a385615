//! Committing an object on a storage root in a bucket, where nothing can be renamed.
//!
//! A new version is written in place, in an order that keeps it invisible until its last
//! step: the content files it adds (each hashed as it is sent, published only when its
//! SHA-512 is the manifest's), then `vN/inventory.json` and its sidecar, then, once every
//! content file the new inventory names is listed there, the root `inventory.json` and
//! last its sidecar. A reader goes by the root inventory, which names the old head until the
//! root inventory is replaced. What a kill leaves:
//!
//! - before the root inventory: files under `vN/` (and, for a first version, the object's
//!   declaration) that no root inventory names. Every reader still sees the old version (or
//!   no object); `store check` reports them as an uncommitted version; the next put of the
//!   object, or `store repair`, removes exactly those files (only under `v(head+1)/`, or for
//!   an object with no root inventory, only its declaration and `v1/`, and only when the
//!   state database recorded the object, which a put does before its first write, never
//!   committed it on that replica, and recorded the `v1` inventory there, if any). Files of
//!   an object without root inventory that the database does not show to be such a put's
//!   (an object whose root inventory was lost, beside a new database; one webaip did not
//!   write) are never removed: a put of the object is refused, and `store repair` keeps
//!   them, or commits a whole `v1/` (its root inventory written from `v1`'s, unrecorded) of
//!   an object older than the database's records;
//! - between the root inventory and its sidecar: the root inventory is `vN/inventory.json`
//!   byte for byte, whose own sidecar is good, and the root sidecar still names the old head.
//!   Readers refuse the copy (the sidecar does not verify); `store check` reports the stale
//!   sidecar; the next put or `store repair` writes the root sidecar from `vN`'s, when
//!   webaip recorded that inventory (it records each one before committing it).
//!
//! A version already there is never overwritten: its inventory is written only when absent
//! (a conditional PUT as well, where the store honours one; Garage 2.5 does not, so the
//! absence is looked up first). The object's lock is a file in a local work directory, so
//! puts through one state database never build on the same head at once.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::anchor::Anchor;
use super::check::{Head, Headless, headless, load, root_file};
use super::fs::object_lock;
use super::inventory::{INVENTORY, SIDECAR, sidecar_text};
use super::layout::{OBJECT_DECLARATION, ROOT_DECLARATION, RootFile, root_files};
use crate::store::replica::{Replica, Source};
use crate::store::{CopyFailure, StoreError};

/// A bucket replica's storage root, and the local work directory holding its locks and
/// quarantine.
#[derive(Debug, Clone)]
pub(crate) struct BucketRoot {
    /// The replica's name.
    pub name: String,
    /// Where the bucket is (endpoint, bucket, prefix): what the locks are named by.
    pub place: String,
    /// A local directory for the object locks and quarantined files.
    pub work: PathBuf,
}

/// What clearing an interrupted put's leftovers did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// Nothing was left.
    Nothing,
    /// Files of a version never committed, removed.
    Removed(Vec<String>),
    /// Files of a first version without a root inventory (this many) that nothing shows to
    /// be webaip's own interrupted put: kept as they are.
    Kept(usize),
    /// The root inventory and its sidecar written from a whole first version's, of an
    /// object the state database records nothing of: the copy is at `head`, unrecorded.
    Completed {
        /// The head (v1).
        head: String,
        /// Its inventory's SHA-512.
        sha512: String,
    },
    /// The root sidecar written from the head version's (the put was killed between the
    /// root inventory and its sidecar): the copy is at `head`.
    Sidecar {
        /// The head the root inventory names.
        head: String,
        /// Its SHA-512.
        sha512: String,
    },
}

impl BucketRoot {
    fn err(&self, key: &str, e: impl Into<CopyFailure>) -> StoreError {
        StoreError::Replica {
            replica: self.name.clone(),
            key: key.into(),
            source: Box::new(e.into()),
        }
    }

    /// The object's lock, held until the returned file is dropped (blocking until free).
    pub(crate) fn lock(&self, id: &str) -> Result<std::fs::File, StoreError> {
        self.lock_object(&super::layout::object_path(id))
    }

    /// The lock of the object at `obj` (named by its directory: what an interrupted first
    /// put left may have no inventory to take the id from).
    pub(crate) fn lock_object(&self, obj: &str) -> Result<std::fs::File, StoreError> {
        object_lock(&self.work, self.place.as_bytes(), obj).map_err(|e| self.err("", e))
    }

    /// Makes the storage root (its declaration last) when the bucket (prefix) is empty, or
    /// finishes one a killed run left half made (holding only root files webaip writes, each
    /// with its bytes or the start of them: an empty or cut-short declaration is no
    /// declaration); one holding anything else and no whole declaration is refused. One maker
    /// at a time through this work directory.
    pub(crate) fn ensure_root(&self, r: &dyn Replica) -> Result<(), StoreError> {
        if root_file(r, ROOT_DECLARATION.0)? == RootFile::Sound {
            return Ok(());
        }
        // The root's own lock: no object has the empty id.
        let _making = self.lock("")?;
        if root_file(r, ROOT_DECLARATION.0)? == RootFile::Sound {
            return Ok(());
        }
        let files = root_files();
        let refused = || {
            let root = PathBuf::from(&self.place);
            StoreError::NotOcflRoot { replica: self.name.clone(), root }
        };
        let mut sound = BTreeSet::new();
        for o in r.list("")? {
            if !files.iter().any(|(n, _)| *n == o.key) {
                return Err(refused());
            }
            match root_file(r, &o.key)? {
                RootFile::Sound => {
                    sound.insert(o.key);
                }
                RootFile::CutShort | RootFile::Absent => {}
                RootFile::Foreign(_) => return Err(refused()),
            }
        }
        for (name, bytes) in files.iter().filter(|(n, _)| !sound.contains(n)) {
            crate::hooks::write_point();
            r.write_bytes(name, bytes, false)?;
        }
        Ok(())
    }

    /// Before a new version's files are written: the root is one, the version is not there
    /// yet, and a new object gets its declaration first (so that what a kill leaves is
    /// found as this object's).
    pub(crate) fn begin(
        &self,
        r: &dyn Replica,
        obj: &str,
        prev: Option<&Head>,
    ) -> Result<(), StoreError> {
        self.ensure_root(r)?;
        let next = prev.map_or(1, |h| h.versions.head + 1);
        let name = prev.map_or_else(|| "v1".to_string(), |h| h.versions.name(next));
        let key = format!("{obj}/{name}/{INVENTORY}");
        if r.stat(&key)?.is_some() {
            return Err(StoreError::Exists { replica: self.name.clone(), key });
        }
        if prev.is_none() {
            crate::hooks::write_point();
            let key = format!("{obj}/{}", OBJECT_DECLARATION.0);
            r.write_bytes(&key, OBJECT_DECLARATION.1.as_bytes(), false)?;
        }
        Ok(())
    }

    /// Writes content file `content` (object-relative) from `source`, verified as it is sent.
    pub(crate) fn upload(
        &self,
        r: &dyn Replica,
        obj: &str,
        content: &str,
        source: Source,
        file: (u64, &str),
    ) -> Result<(), StoreError> {
        crate::hooks::write_point();
        let key = format!("{obj}/{content}");
        if crate::hooks::fail_at("bucket-upload") {
            return Err(self.err(&key, std::io::Error::other("refused on purpose (test hook)")));
        }
        r.write_verified(&key, source, file.0, file.1)
    }

    /// Commits version `version` of `obj` whose content files are written: its inventory
    /// and sidecar (never over one there), every content file of `content` listed, then the
    /// root inventory and last its sidecar. See the module's notes for what a kill leaves.
    pub(crate) fn commit(
        &self,
        r: &dyn Replica,
        obj: &str,
        version: &str,
        bytes: &[u8],
        content: &[&str],
    ) -> Result<String, StoreError> {
        let sha = {
            let mut h = crate::formats::digest::Sha512::new();
            h.update(bytes);
            crate::formats::digest::hex(&h.finalize())
        };
        let sidecar = sidecar_text(&sha);
        for (name, body) in [(INVENTORY, bytes), (SIDECAR, sidecar.as_bytes())] {
            crate::hooks::write_point();
            r.write_bytes(&format!("{obj}/{version}/{name}"), body, true)?;
        }
        let listed: BTreeSet<String> = r.list(obj)?.into_iter().map(|o| o.key).collect();
        if let Some(missing) = content.iter().find(|c| !listed.contains(&format!("{obj}/{c}"))) {
            return Err(StoreError::Precommit {
                replica: self.name.clone(),
                key: format!("{obj}/{missing}"),
                detail: "a content file the new inventory names is not in the bucket".into(),
            });
        }
        if crate::hooks::fail_at("ocfl-before-commit") {
            std::process::abort(); // a test of what a kill leaves
        }
        crate::hooks::write_point();
        r.write_bytes(&format!("{obj}/{INVENTORY}"), bytes, false)?;
        if crate::hooks::fail_at("ocfl-between-inventory-and-sidecar") {
            std::process::abort();
        }
        crate::hooks::write_point();
        r.write_bytes(&format!("{obj}/{SIDECAR}"), sidecar.as_bytes(), false)?;
        Ok(sha)
    }

    /// Clears what an interrupted put left in `obj` (see the module's notes), and only that,
    /// by what the state database records of the object (`anchor`): a copy without a root
    /// inventory is judged by [`headless`], as `check` judges it. With `complete`, a whole
    /// first version of an object the database records nothing of is committed (see
    /// [`BucketRoot::complete_first`]); without, it is left.
    pub(crate) fn settle(
        &self,
        r: &dyn Replica,
        obj: &str,
        anchor: Option<&Anchor>,
        complete: bool,
    ) -> Result<Settled, StoreError> {
        let listing = r.list(obj)?;
        if listing.is_empty() {
            return Ok(Settled::Nothing);
        }
        let known = |sha: &str| anchor.is_some_and(|a| a.knows(sha));
        let Some(root) = load(r, obj)? else {
            return self.settle_headless(r, obj, listing, anchor, complete);
        };
        let Ok((inv, versions)) = root.parsed else { return Ok(Settled::Nothing) };
        if root.sidecar.is_err() {
            let own = load(r, &format!("{obj}/{}", inv.head))?;
            let good = own.is_some_and(|l| l.sidecar.is_ok() && l.sha512 == root.sha512);
            if !good || !known(&root.sha512) {
                return Ok(Settled::Nothing);
            }
            crate::hooks::write_point();
            let key = format!("{obj}/{SIDECAR}");
            r.write_bytes(&key, sidecar_text(&root.sha512).as_bytes(), false)?;
            return Ok(Settled::Sidecar { head: inv.head, sha512: root.sha512 });
        }
        let next = format!("{obj}/{}/", versions.name(versions.head + 1));
        let orphans: Vec<String> =
            listing.into_iter().map(|o| o.key).filter(|k| k.starts_with(&next)).collect();
        if orphans.is_empty() {
            return Ok(Settled::Nothing);
        }
        self.remove(r, obj, orphans)
    }

    /// Commits the whole first version of `obj`, which has no root inventory, and of which
    /// the state database records nothing (an object whose root inventory was lost beside a
    /// new database): when `v1/inventory.json` agrees with its sidecar, is this object's at
    /// v1, and every content file it names is there with its SHA-512, it is written as the
    /// root inventory (the declaration first when absent), its sidecar last, as a put's
    /// commit would have; anything short of that is left as it is. Nothing is deleted, and
    /// the copy is not recorded as webaip's: it is judged by consistency.
    fn complete_first(&self, r: &dyn Replica, obj: &str) -> Result<Settled, StoreError> {
        let v1 = format!("{obj}/v1");
        let Some(l) = load(r, &v1)? else { return Ok(Settled::Nothing) };
        let Ok((inv, versions)) = &l.parsed else { return Ok(Settled::Nothing) };
        if l.sidecar.is_err() || versions.head != 1 || super::layout::object_path(&inv.id) != obj {
            return Ok(Settled::Nothing);
        }
        for (path, digest) in inv.content() {
            let key = format!("{obj}/{path}");
            match crate::store::hash_copy(r, &key) {
                Ok(sha) if sha.eq_ignore_ascii_case(digest) => {}
                _ => return Ok(Settled::Nothing),
            }
        }
        let declaration = format!("{obj}/{}", OBJECT_DECLARATION.0);
        if r.stat(&declaration)?.is_none() {
            crate::hooks::write_point();
            r.write_bytes(&declaration, OBJECT_DECLARATION.1.as_bytes(), true)?;
        }
        let bytes = read_bounded(r, &format!("{v1}/{INVENTORY}"))?;
        crate::hooks::write_point();
        r.write_bytes(&format!("{obj}/{INVENTORY}"), &bytes, false)?;
        crate::hooks::write_point();
        r.write_bytes(&format!("{obj}/{SIDECAR}"), sidecar_text(&l.sha512).as_bytes(), false)?;
        Ok(Settled::Completed { head: inv.head.clone(), sha512: l.sha512 })
    }

    /// [`BucketRoot::settle`] of a copy without a root inventory. Its files are deleted only
    /// on positive evidence that they are what webaip's own first put of the object left when
    /// killed: the state database recorded the object (a put records the version's inventory
    /// before its first write), never committed it here, and the `v1` inventory there, if any,
    /// is one it recorded. Anything else (an object that lost its root inventory, beside a new
    /// database; files of an object webaip never wrote) is kept: a whole first version of an
    /// object the database records nothing of is committed with `complete`, else left.
    fn settle_headless(
        &self,
        r: &dyn Replica,
        obj: &str,
        listing: Vec<crate::store::replica::ListedObject>,
        anchor: Option<&Anchor>,
        complete: bool,
    ) -> Result<Settled, StoreError> {
        let committed = anchor.and_then(|a| a.committed_on(r.name()));
        if headless(obj, &listing, committed) != Headless::FirstPut {
            return Ok(Settled::Nothing);
        }
        let known = |sha: &str| anchor.is_some_and(|a| a.knows(sha));
        let v1 = load(r, &format!("{obj}/v1"))?;
        if v1.as_ref().is_some_and(|l| l.sidecar.is_ok() && !known(&l.sha512)) {
            return match (complete, anchor) {
                (true, None) => self.complete_first(r, obj),
                _ => Ok(Settled::Kept(listing.len())),
            };
        }
        let ours = anchor.is_some() && v1.as_ref().is_none_or(|l| known(&l.sha512));
        if !ours {
            return Ok(Settled::Kept(listing.len()));
        }
        self.remove(r, obj, listing.into_iter().map(|o| o.key).collect())
    }

    /// Deletes `keys`, the inventories and the declaration last (a kill part-way leaves what
    /// is found and cleared again).
    fn remove(
        &self,
        r: &dyn Replica,
        obj: &str,
        mut keys: Vec<String>,
    ) -> Result<Settled, StoreError> {
        let late = |k: &String| {
            u8::from(k.ends_with(INVENTORY) || k.ends_with(SIDECAR))
                + 2 * u8::from(k.ends_with(OBJECT_DECLARATION.0))
        };
        keys.sort_by_key(late);
        for k in &keys {
            crate::hooks::write_point();
            r.delete(k)?;
        }
        await_unlisted(r, obj, &keys)?;
        Ok(Settled::Removed(keys))
    }

    /// Deletes object `obj` (`store remove`; the caller holds its lock), its `keys` in
    /// [`removal_order`], each added to `deleted` once gone, then waits until a listing no
    /// longer shows them. A kill part-way leaves no root inventory, so nothing that reads as
    /// a committed object.
    pub(crate) fn remove_object(
        &self,
        r: &dyn Replica,
        obj: &str,
        keys: &[String],
        deleted: &mut Vec<String>,
    ) -> Result<(), StoreError> {
        for k in keys {
            crate::hooks::write_point();
            r.delete(k)?;
            deleted.push(k.clone());
        }
        await_unlisted(r, obj, keys)
    }

    /// Moves `rels` (files of object `obj` no inventory accounts for) to a new quarantine
    /// directory of the local work directory: every one downloaded there first
    /// ([`BucketRoot::fetch_to_quarantine`]), then each deleted from the bucket. Returns the
    /// directory.
    pub(crate) fn quarantine(
        &self,
        r: &dyn Replica,
        obj: &str,
        rels: &[&str],
    ) -> Result<PathBuf, StoreError> {
        let dir = self.fetch_to_quarantine(r, obj, rels)?;
        let keys: Vec<String> = rels.iter().map(|rel| format!("{obj}/{rel}")).collect();
        self.delete_quarantined(r, obj, &keys)?;
        Ok(dir)
    }

    /// Downloads `rels` (files of object `obj`) into a new quarantine directory of the local
    /// work directory, each synced; nothing in the bucket changes. The directory is made under
    /// a name marking it incomplete and renamed once every file is in it, so a killed run
    /// leaves nothing that looks like a whole quarantine. Returns the directory (which holds
    /// `obj/...`).
    pub(crate) fn fetch_to_quarantine(
        &self,
        r: &dyn Replica,
        obj: &str,
        rels: &[&str],
    ) -> Result<PathBuf, StoreError> {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.fZ");
        let name = format!("{stamp}-{}", std::process::id());
        std::fs::create_dir_all(&self.work).map_err(|e| self.err("", e))?;
        // Made confined: a `quarantine` that is a link is refused.
        let partial = format!("quarantine/.{name}.incomplete");
        let dir =
            crate::layout::create_dirs_in(&self.work, &partial).map_err(|e| self.err("", e))?;
        let quarantine = dir.parent().unwrap_or(&self.work).to_path_buf();
        for rel in rels {
            let key = format!("{obj}/{rel}");
            let (parent, _) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
            crate::layout::create_dirs_in(&dir, parent).map_err(|e| self.err(&key, e))?;
            let mut f = crate::layout::create_in(&dir, &key).map_err(|e| self.err(&key, e))?;
            r.read(&key, &mut |c| std::io::Write::write_all(&mut f, c))?;
            f.sync_all().map_err(|e| self.err(&key, e))?;
        }
        let done = quarantine.join(&name);
        std::fs::rename(&dir, &done).map_err(|e| self.err("", e))?;
        let parent = std::fs::File::open(&quarantine);
        parent.and_then(|d| d.sync_all()).map_err(|e| self.err("", e))?;
        Ok(done)
    }

    /// Deletes `keys` of object `obj` (each downloaded to the quarantine already), in the
    /// order given, then waits until a listing no longer shows them.
    pub(crate) fn delete_quarantined(
        &self,
        r: &dyn Replica,
        obj: &str,
        keys: &[String],
    ) -> Result<(), StoreError> {
        for (i, key) in keys.iter().enumerate() {
            crate::hooks::write_point();
            r.delete(key)?;
            if i == 2 && crate::hooks::fail_at("bucket-mid-quarantine") {
                std::process::abort(); // a test of what a kill leaves
            }
        }
        await_unlisted(r, obj, keys)
    }

    /// Rebuilds `obj` in place from `source`'s copy of `head`: every file the head accounts
    /// for that `keep` does not keep is fetched (a content file verified against its digest
    /// on the way in and on the way out), then the root inventory and last its sidecar.
    pub(crate) fn rebuild(
        &self,
        target: &dyn Replica,
        source: &dyn Replica,
        head: &Head,
        wanted: &[String],
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<(), StoreError> {
        let obj = super::layout::object_path(&head.inv.id);
        std::fs::create_dir_all(&self.work).map_err(|e| self.err("", e))?;
        let scratch = tempfile::tempdir_in(&self.work).map_err(|e| self.err("", e))?;
        // Content first, then the version inventories and the declaration: the root
        // inventory, written last, names nothing that is not there.
        let (content, small): (Vec<&String>, Vec<&String>) = wanted
            .iter()
            .filter(|k| !keep(k))
            .partition(|k| head.inv.content().any(|(p, _)| format!("{obj}/{p}") == **k));
        for key in content {
            let rel = key.strip_prefix(&format!("{obj}/")).unwrap_or(key);
            let digest = head.inv.content().find(|(p, _)| *p == rel).map(|(_, d)| d);
            let digest = digest.unwrap_or_default().to_ascii_lowercase();
            let local = Source { root: scratch.path(), name: "file" };
            let _ = std::fs::remove_file(scratch.path().join("file"));
            crate::store::fetch_verified(source, key, local, &digest)?;
            let size = std::fs::metadata(scratch.path().join("file")).map_or(0, |m| m.len());
            crate::hooks::write_point();
            target.write_verified(key, local, size, &digest)?;
        }
        for key in small {
            let bytes = read_bounded(source, key)?;
            crate::hooks::write_point();
            target.write_bytes(key, &bytes, false)?;
        }
        for name in [INVENTORY, SIDECAR] {
            let key = format!("{obj}/{name}");
            let bytes = read_bounded(source, &key)?;
            crate::hooks::write_point();
            target.write_bytes(&key, &bytes, false)?;
        }
        Ok(())
    }
}

/// The order `store remove` deletes object `obj`'s `keys` in: the root inventory's sidecar
/// and the root inventory first (no reader then takes what is left for a committed object),
/// the object declaration last (what is left is still found as this object's remains), the
/// rest between, by key.
pub(crate) fn removal_order(obj: &str, mut keys: Vec<String>) -> Vec<String> {
    let (sidecar, inventory) = (format!("{obj}/{SIDECAR}"), format!("{obj}/{INVENTORY}"));
    let declaration = format!("{obj}/{}", OBJECT_DECLARATION.0);
    let rank = |k: &String| match k {
        k if *k == sidecar => 0,
        k if *k == inventory => 1,
        k if *k == declaration => 3,
        _ => 2,
    };
    keys.sort_by(|a, b| (rank(a), a).cmp(&(rank(b), b)));
    keys
}

/// An object's small file (inventory, sidecar, declaration) read whole, at most as large as
/// an inventory is read.
fn read_bounded(r: &dyn Replica, key: &str) -> Result<Vec<u8>, StoreError> {
    let mut bytes = Vec::new();
    let limit = super::inventory::MAX_INVENTORY as usize;
    r.read(key, &mut |c| {
        if bytes.len() + c.len() > limit {
            return Err(std::io::Error::other("larger than an inventory is read"));
        }
        bytes.extend_from_slice(c);
        Ok(())
    })?;
    Ok(bytes)
}

/// Waits (a few seconds at most) until a listing of `obj` shows none of the `deleted` keys.
/// A bucket replicated over several nodes can list a key for a moment after its delete
/// (Garage filters deleted keys out on each node before merging a listing, so a node the
/// delete has not reached yet still lists it, until the listing's read repair): the check
/// that follows a repair's removals must not take those for files still there. A listing
/// that still shows them when the time is up is left to that check to report.
pub(crate) fn await_unlisted(
    r: &dyn Replica,
    obj: &str,
    deleted: &[String],
) -> Result<(), StoreError> {
    let deleted: BTreeSet<&str> = deleted.iter().map(String::as_str).collect();
    let mut pause = std::time::Duration::from_millis(20);
    for _ in 0..8 {
        let listed = r.list(obj)?;
        if !listed.iter().any(|o| deleted.contains(o.key.as_str())) {
            return Ok(());
        }
        std::thread::sleep(pause);
        pause *= 2;
    }
    Ok(())
}
