//! Reading OCFL objects from a replica, and what `store check` finds in them. Nothing here
//! writes: a check reports, only `put` and `repair` change a replica.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::InventoryFault;
use super::anchor::Provenance;
use super::inventory::{self, INVENTORY, Inventory, MAX_INVENTORY, MAX_SIDECAR, SIDECAR, Versions};
use super::layout::{
    MAX_ROOT_FILE, OBJECT_DECLARATION, OBJECT_DEPTH, ROOT_DECLARATION, RootFile, judge_root_file,
    object_path,
};
use crate::formats::digest::{Sha512, hex};
use crate::store::StoreError;
use crate::store::replica::{ListedObject, Replica};

/// An inventory as read from a replica: the one reader every command goes through.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The inventory bytes' SHA-512.
    pub sha512: String,
    /// The inventory, parsed and validated, or why not.
    pub parsed: Result<(Inventory, Versions), InventoryFault>,
    /// Whether its sidecar names its SHA-512.
    pub sidecar: Result<(), InventoryFault>,
}

/// A valid inventory whose sidecar verifies.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub inv: Inventory,
    pub versions: Versions,
    pub sha512: String,
}

/// The bytes at `key` (at most `limit`; a larger object is refused unread), `None` when absent.
fn read_small(r: &dyn Replica, key: &str, limit: u64) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(stat) = r.stat(key)? else { return Ok(None) };
    if stat.size > limit {
        return Err(StoreError::Inventory {
            replica: r.name().into(),
            key: key.into(),
            fault: InventoryFault::TooLarge { limit },
        });
    }
    let mut bytes = Vec::new();
    r.read(key, &mut |c| {
        if (bytes.len() + c.len()) as u64 > limit {
            return Err(std::io::Error::other("grew past the most an inventory is read"));
        }
        bytes.extend_from_slice(c);
        Ok(())
    })?;
    Ok(Some(bytes))
}

/// How root file `name` (one of [`super::layout::root_files`]) stands on `r`.
pub(crate) fn root_file(r: &dyn Replica, name: &str) -> Result<RootFile, StoreError> {
    match r.stat(name)? {
        None => Ok(RootFile::Absent),
        Some(s) if s.size > MAX_ROOT_FILE => Ok(judge_root_file(name, Some(&[]), true)),
        Some(_) => {
            let held = read_small(r, name, MAX_ROOT_FILE)?;
            Ok(judge_root_file(name, held.as_deref(), false))
        }
    }
}

/// What is wrong with the files declaring the storage root of `r` (see
/// [`super::layout::root_files`]): each must be there and sound; a root with neither a
/// declaration nor objects (new, or emptied) has none to check.
pub(crate) fn root_findings(r: &dyn Replica, in_use: bool) -> Vec<OcflFinding> {
    if !in_use {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (name, _) in super::layout::root_files() {
        let (kind, detail) = match root_file(r, &name) {
            Ok(RootFile::Sound) => continue,
            Ok(RootFile::Absent) if name == ROOT_DECLARATION.0 => {
                (FindingKind::Missing, "the root's declaration".to_string())
            }
            Ok(RootFile::Absent) => (FindingKind::Missing, "a file of the root's layout".into()),
            Ok(RootFile::CutShort) => (
                FindingKind::Invalid,
                "empty, or the start of the bytes webaip writes there: a write cut short \
                 (`store repair` finishes it)"
                    .into(),
            ),
            Ok(RootFile::Foreign(what)) => {
                (FindingKind::Invalid, format!("{what}; not what webaip writes, never overwritten"))
            }
            Err(e) => (FindingKind::Unreadable, e.to_string()),
        };
        let (replica, object) = (r.name().into(), String::new());
        out.push(OcflFinding { replica, object, key: name, kind, detail });
    }
    out
}

/// Reads the inventory in `dir` (an object, or one of its version directories) and its
/// sidecar; `None` when there is no inventory.
pub(crate) fn load(r: &dyn Replica, dir: &str) -> Result<Option<Loaded>, StoreError> {
    let Some(bytes) = read_small(r, &format!("{dir}/{INVENTORY}"), MAX_INVENTORY)? else {
        return Ok(None);
    };
    let mut h = Sha512::new();
    h.update(&bytes);
    let sha512 = hex(&h.finalize());
    let sidecar = match read_small(r, &format!("{dir}/{SIDECAR}"), MAX_SIDECAR) {
        Ok(Some(s)) => inventory::sidecar_digest(&s).and_then(|d| {
            if d == sha512 {
                Ok(())
            } else {
                Err(InventoryFault::SidecarMismatch { found: sha512.clone(), expected: d })
            }
        }),
        Ok(None) => Err(InventoryFault::Sidecar),
        Err(StoreError::Inventory { fault, .. }) => Err(fault),
        Err(e) => return Err(e),
    };
    Ok(Some(Loaded { parsed: inventory::parse(&bytes), sha512, sidecar }))
}

/// The head inventory of object `id` on `r`, strictly: a fault in it or its sidecar is an
/// error. `None` when the object has no inventory there.
pub(crate) fn read_head(r: &dyn Replica, id: &str) -> Result<Option<Head>, StoreError> {
    let dir = object_path(id);
    let fault = |fault| StoreError::Inventory {
        replica: r.name().into(),
        key: format!("{dir}/{INVENTORY}"),
        fault,
    };
    let Some(loaded) = load(r, &dir)? else { return Ok(None) };
    loaded.sidecar.map_err(fault)?;
    let (inv, versions) = loaded.parsed.map_err(fault)?;
    if inv.id != id {
        return Err(fault(InventoryFault::OtherId { found: inv.id, expected: id.into() }));
    }
    Ok(Some(Head { inv, versions, sha512: loaded.sha512 }))
}

/// The object directories of a replica: those holding an object declaration, and those where
/// the layout puts objects that hold an inventory (an object that lost its declaration is
/// still an object, reported and repaired as one, not a heap of stray files).
pub(crate) fn object_dirs(listing: &[ListedObject]) -> BTreeSet<String> {
    listing.iter().filter_map(|o| object_dir_of(&o.key)).map(str::to_string).collect()
}

/// The object directory key `key` declares: the directory of an object's declaration, or of
/// an inventory at an object's depth (an object that lost its declaration).
pub(crate) fn object_dir_of(key: &str) -> Option<&str> {
    let declared = key.strip_suffix(OBJECT_DECLARATION.0).and_then(|d| d.strip_suffix('/'));
    let inventoried = || {
        let d = key.strip_suffix(INVENTORY)?.strip_suffix('/')?;
        (d.matches('/').count() + 1 == OBJECT_DEPTH).then_some(d)
    };
    declared.or_else(inventoried)
}

/// What a listed entry that cannot be a copy is found to be.
pub(crate) fn unlike_a_file(o: &ListedObject) -> FindingKind {
    match o.is_empty_dir() {
        true => FindingKind::EmptyDirectory,
        false => FindingKind::NotRegular,
    }
}

/// Whether an entry of a storage root in no object is the root's own: one of its files
/// (`root_files`), or an empty directory one of them belongs in (found as that file missing,
/// not twice).
pub(crate) fn of_the_root(o: &ListedObject, root_files: &[String]) -> bool {
    root_files.contains(&o.key)
        || (o.is_empty_dir() && root_files.iter().any(|f| f.starts_with(&o.key)))
}

/// An entry in no object found in a folder that neither declares itself a storage root nor
/// holds an object is left alone: an empty directory there (a new disk's `lost+found`) is
/// not the root's to report or remove; `put` and `repair` refuse such a folder anyway.
pub(crate) fn in_a_root(o: &ListedObject, root_in_use: bool) -> bool {
    root_in_use || !o.is_empty_dir()
}

/// What an entry of a storage root in no object is found to be (an empty directory, or a
/// file, link or FIFO no object accounts for), and the finding's detail.
pub(crate) fn stray_finding(o: &ListedObject) -> (FindingKind, String) {
    let kind = if o.is_empty_dir() { FindingKind::EmptyDirectory } else { FindingKind::Extra };
    match &o.problem {
        Some(problem) => (kind, format!("{problem}, in no object")),
        None => (kind, "in no object".into()),
    }
}

/// The object directory of `key` among `dirs`: the one that is a prefix of it.
pub(crate) fn owner<'a>(dirs: &'a BTreeSet<String>, key: &str) -> Option<&'a String> {
    key.match_indices('/').find_map(|(i, _)| dirs.get(&key[..i]))
}

/// What a check found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// A file the inventory lists is absent.
    Missing,
    /// A content file with other bytes than its digest (`--deep`).
    Corrupt,
    /// A file the object's inventories do not account for.
    Extra,
    /// An inventory or sidecar OCFL does not allow, or an object in the wrong place.
    Invalid,
    /// A link, FIFO or device where a file should be (never followed).
    NotRegular,
    /// A directory with nothing in it, which OCFL allows nowhere in a storage root (a
    /// removal or a copy cut short leaves one): `repair` removes it.
    EmptyDirectory,
    /// Files of a version past the head: a put that was interrupted, or is running.
    UncommittedVersion,
    /// The root inventory is the head version's, but its sidecar is an older one's: a put
    /// interrupted between the two.
    SidecarStale,
    /// The replica could not be read.
    Unreadable,
    /// This replica's head inventory differs from another replica's.
    Differs,
    /// The head inventory is valid but not one webaip recorded: a version it did not commit
    /// (never served, never copied to another replica).
    NotRecorded,
    /// This copy and another hold different inventories at the same head, and nothing
    /// (no record, or a record of both) says which is right: never repaired automatically.
    Diverged,
    /// The object is not on this replica, though other replicas hold it or webaip committed
    /// it here (the state database says so).
    NoObject,
    /// The state database records other objects but not this one: an object webaip never put
    /// (never served as webaip's, never copied to another replica unless adopted).
    UnknownObject,
    /// This copy's head is older than the one webaip committed on this replica: versions
    /// webaip committed are missing (an old backup restored, or a rollback).
    RolledBack,
    /// No record of the object, and its latest head is held by no more than half of the
    /// replicas: nothing says which copy is right.
    NoMajority,
    /// No record of the object, and the replicas not checked (`check --replica`) could make
    /// a majority for its head: not judged (no vote was counted; the run is PARTIAL). Not a
    /// problem found.
    NotJudged,
    /// A `store remove` of the object began and did not finish: what is left of it is its
    /// remains (never repaired); `store remove` run again finishes.
    Removing,
}

/// One finding.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OcflFinding {
    /// The replica.
    pub replica: String,
    /// The object's directory in the storage root.
    pub object: String,
    /// The key (path below the storage root) concerned.
    pub key: String,
    /// What is wrong.
    pub kind: FindingKind,
    /// Details.
    pub detail: String,
}

/// One object on one replica, as the check saw it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObjectOnReplica {
    /// The replica.
    pub replica: String,
    /// The object's directory in the storage root.
    pub object: String,
    /// The object id (from its inventory; `None` when that could not be read).
    pub id: Option<String>,
    /// The head version.
    pub head: Option<String>,
    /// The head inventory's SHA-512 (when it and its sidecar agree).
    pub inventory_sha512: Option<String>,
    /// Whether webaip recorded that head inventory (`None`: none was read).
    pub provenance: Option<Provenance>,
    /// Bytes of every file in the object's directory.
    pub bytes: u64,
}

/// What one object on one replica holds and what is wrong with it.
pub(crate) struct ObjectCheck {
    pub seen: ObjectOnReplica,
    pub findings: Vec<OcflFinding>,
}

/// Checks object `dir` on `r`, whose files are `listing` (every key below the object):
/// inventories and sidecars of the root and every version, the head version's inventory
/// equal to the root's, every content file present (with `deep`, its SHA-512 recomputed),
/// nothing else there, nothing that is not a regular file. `committed` is the head the
/// state database says webaip committed on this replica (see [`headless`]).
pub(crate) fn check_object(
    r: &dyn Replica,
    dir: &str,
    listing: &[ListedObject],
    deep: bool,
    committed: Option<u32>,
) -> ObjectCheck {
    let headless = headless(dir, listing, committed);
    let mut c = Checking { r, dir, findings: Vec::new(), sound: false, more: 0, headless };
    let bytes = listing.iter().map(|o| o.size).sum();
    let mut seen = ObjectOnReplica {
        replica: r.name().into(),
        object: dir.into(),
        id: None,
        head: None,
        inventory_sha512: None,
        provenance: None,
        bytes,
    };
    let declaration = format!("{dir}/{}", OBJECT_DECLARATION.0);
    if !listing.iter().any(|o| o.key == declaration) {
        c.find(&declaration, FindingKind::Missing, "the object's declaration".into());
    }
    for o in listing.iter().filter(|o| o.problem.is_some()) {
        c.find(&o.key, unlike_a_file(o), o.problem.clone().unwrap_or_default());
    }
    if let Some(head) = c.root_inventory() {
        seen.id = Some(head.inv.id.clone());
        seen.head = Some(head.inv.head.clone());
        if c.sound {
            seen.inventory_sha512 = Some(head.sha512.clone());
        }
        let expected = c.versions(&head);
        c.content(&head, listing, deep);
        c.extras(&head, listing, &expected);
    }
    ObjectCheck { seen, findings: c.finish() }
}

struct Checking<'a> {
    r: &'a dyn Replica,
    dir: &'a str,
    findings: Vec<OcflFinding>,
    /// The root inventory is valid and its sidecar names it.
    sound: bool,
    /// Findings past [`MAX_FINDINGS`], counted only.
    more: u64,
    /// What the object is when it has no root inventory.
    headless: Headless,
}

/// The most findings listed for one object: a hostile inventory naming millions of absent
/// files costs a count, not a report of millions of lines (and the memory to build it).
pub(crate) const MAX_FINDINGS: usize = 1000;

impl Checking<'_> {
    fn find(&mut self, key: &str, kind: FindingKind, detail: String) {
        if self.findings.len() >= MAX_FINDINGS {
            self.more += 1;
            return;
        }
        let (replica, object) = (self.r.name().into(), self.dir.into());
        self.findings.push(OcflFinding { replica, object, key: key.into(), kind, detail });
    }

    /// The findings, the last saying how many more were not listed.
    fn finish(mut self) -> Vec<OcflFinding> {
        if self.more > 0 {
            let last = self.findings.last().map_or(FindingKind::Invalid, |f| f.kind);
            let detail = format!("and {} more findings in this object, not listed", self.more);
            let (replica, object) = (self.r.name().into(), self.dir.to_string());
            let key = object.clone();
            self.findings.push(OcflFinding { replica, object, key, kind: last, detail });
        }
        self.findings
    }

    /// The root inventory, when it can be read and is valid. A sidecar naming another digest
    /// is stale when the inventory is the head version's own (a put stopped between writing
    /// the two); the inventory is still read then.
    fn root_inventory(&mut self) -> Option<Head> {
        let key = format!("{}/{INVENTORY}", self.dir);
        let loaded = match load(self.r, self.dir) {
            Ok(Some(l)) => l,
            Ok(None) => {
                let (kind, detail) = match self.headless {
                    Headless::FirstPut => {
                        (FindingKind::UncommittedVersion, first_put_detail(self.r).to_string())
                    }
                    Headless::Lost(n) => (
                        FindingKind::Missing,
                        format!(
                            "the root inventory is gone: webaip committed v{n} of this object \
                             here (the state database says so), so it was lost or deleted, not \
                             a put interrupted"
                        ),
                    ),
                    Headless::Damaged => {
                        (FindingKind::Missing, "the object has no inventory".to_string())
                    }
                };
                self.find(&key, kind, detail);
                return None;
            }
            Err(e) => {
                self.find(&key, FindingKind::Unreadable, e.to_string());
                return None;
            }
        };
        let (inv, versions) = match loaded.parsed {
            Ok(p) => p,
            Err(f) => {
                self.find(&key, FindingKind::Invalid, f.to_string());
                return None;
            }
        };
        if object_path(&inv.id) != self.dir {
            let detail = format!("object {:?} belongs at {}", inv.id, object_path(&inv.id));
            self.find(self.dir, FindingKind::Invalid, detail);
        }
        let head = Head { inv, versions, sha512: loaded.sha512 };
        self.sound = loaded.sidecar.is_ok();
        if let Err(f) = loaded.sidecar {
            let own = self.version_inventory_sha(&head.inv.head);
            let kind = if own.as_deref() == Some(head.sha512.as_str()) {
                FindingKind::SidecarStale
            } else {
                FindingKind::Invalid
            };
            self.find(&format!("{}/{SIDECAR}", self.dir), kind, f.to_string());
        }
        Some(head)
    }

    fn version_inventory_sha(&self, version: &str) -> Option<String> {
        let loaded = load(self.r, &format!("{}/{version}", self.dir)).ok()??;
        loaded.sidecar.is_ok().then_some(loaded.sha512)
    }

    /// Every version's inventory and sidecar valid, the head's equal to the root's; returns
    /// every key the inventories account for besides content.
    fn versions(&mut self, head: &Head) -> BTreeSet<String> {
        let d = self.dir;
        let mut expected: BTreeSet<String> =
            [INVENTORY, SIDECAR, OBJECT_DECLARATION.0].iter().map(|n| format!("{d}/{n}")).collect();
        for n in 1..=head.versions.head {
            let v = head.versions.name(n);
            let key = format!("{d}/{v}/{INVENTORY}");
            expected.insert(key.clone());
            expected.insert(format!("{d}/{v}/{SIDECAR}"));
            match load(self.r, &format!("{d}/{v}")) {
                Ok(None) => self.find(&key, FindingKind::Missing, format!("{v} has no inventory")),
                Err(e) => self.find(&key, FindingKind::Unreadable, e.to_string()),
                Ok(Some(l)) => self.version(head, &v, &key, l),
            }
        }
        expected
    }

    fn version(&mut self, head: &Head, v: &str, key: &str, l: Loaded) {
        if let Err(f) = l.sidecar {
            self.find(&format!("{}/{v}/{SIDECAR}", self.dir), FindingKind::Invalid, f.to_string());
        }
        match l.parsed {
            Err(f) => self.find(key, FindingKind::Invalid, f.to_string()),
            Ok((inv, _)) if inv.head != v || inv.id != head.inv.id => {
                let detail = format!("the inventory of {v} is {}'s of {:?}", inv.head, inv.id);
                self.find(key, FindingKind::Invalid, detail);
            }
            Ok(_) if v == head.inv.head && l.sha512 != head.sha512 => {
                let detail = "the head version's inventory differs from the root's".into();
                self.find(key, FindingKind::Invalid, detail);
            }
            Ok(_) => {}
        }
    }

    /// Every content file there (and, `deep`, of its digest).
    fn content(&mut self, head: &Head, listing: &[ListedObject], deep: bool) {
        let present: BTreeMap<&str, &ListedObject> =
            listing.iter().map(|o| (o.key.as_str(), o)).collect();
        for (path, digest) in head.inv.content() {
            let key = format!("{}/{path}", self.dir);
            match present.get(key.as_str()) {
                None => self.find(&key, FindingKind::Missing, "listed in the manifest".into()),
                Some(o) if o.problem.is_some() => {}
                Some(_) if deep => match crate::store::hash_copy(self.r, &key) {
                    Ok(sha) if sha.eq_ignore_ascii_case(digest) => {}
                    Ok(sha) => self.find(
                        &key,
                        FindingKind::Corrupt,
                        format!("SHA-512 {sha}; the manifest says {digest}"),
                    ),
                    Err(e) => self.find(&key, FindingKind::Unreadable, e.to_string()),
                },
                Some(_) => {}
            }
        }
    }

    /// Files no inventory accounts for; those of a version past the head are an uncommitted
    /// version.
    fn extras(&mut self, head: &Head, listing: &[ListedObject], expected: &BTreeSet<String>) {
        // Borrowed from the inventory, not a second copy of every path.
        let content: BTreeSet<&str> = head.inv.content().map(|(p, _)| p).collect();
        let prefix = format!("{}/", self.dir);
        let next = format!("{}/{}/", self.dir, head.versions.name(head.versions.head + 1));
        for o in listing {
            let rel = o.key.strip_prefix(&prefix).unwrap_or_default();
            if expected.contains(&o.key) || content.contains(rel) || o.problem.is_some() {
                continue;
            }
            let (kind, detail) = if o.key.starts_with(&next) {
                (FindingKind::UncommittedVersion, "a version past the head".to_string())
            } else {
                (FindingKind::Extra, "no inventory accounts for it".to_string())
            };
            self.find(&o.key, kind, detail);
        }
    }
}

/// What an object copy is when it has no root inventory: the one judgement `check` reports
/// and a bucket's repair or next put acts on (see [`super::bucket`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Headless {
    /// Its declaration and `v1/` files only, and the state database records no commit of
    /// the object on this replica: what a first put killed before its root inventory leaves
    /// (or an object that lost its root inventory beside a database that never knew it).
    FirstPut,
    /// webaip committed `vN` of the object on this replica (the state database says so):
    /// its root inventory was lost, whatever files are left. Damage, repaired from a replica.
    Lost(u32),
    /// Other files and no record of a commit here: damage.
    Damaged,
}

/// What a copy with `v1/` files, no root inventory and no recorded commit is likely to be.
/// A bucket put writes the root inventory last, so a killed one leaves this; a folder put
/// moves the whole object into place, so there it was lost, deleted, or written by another
/// program.
fn first_put_detail(r: &dyn Replica) -> &'static str {
    if r.moves_whole_objects() {
        "no root inventory, and the state database records no commit of the object on this \
         replica: a put moves a whole object into a folder root, root inventory included, so \
         it was lost or deleted here, or another program wrote the object; no reader sees the \
         object here"
    } else {
        "no root inventory, and the state database records no commit of the object on this \
         replica: a first version never committed (a put interrupted before the root \
         inventory), or, when the database is new, one whose root inventory was lost; no \
         reader sees the object here"
    }
}

/// Judges object copy `obj` (whose files are `listing`) with no root inventory, by what the
/// state database says webaip `committed` on its replica (the head's number, `None`: none).
pub(crate) fn headless(obj: &str, listing: &[ListedObject], committed: Option<u32>) -> Headless {
    match committed {
        Some(n) => Headless::Lost(n),
        None if first_version_only(obj, listing) => Headless::FirstPut,
        None => Headless::Damaged,
    }
}

/// Whether `listing` (of object `obj`) holds nothing but the declaration and files under
/// `v1/` (what a first put killed before its root inventory leaves), and some of them.
fn first_version_only(obj: &str, listing: &[ListedObject]) -> bool {
    let declaration = format!("{obj}/{}", OBJECT_DECLARATION.0);
    let v1 = format!("{obj}/v1/");
    !listing.is_empty() && listing.iter().all(|o| o.key == declaration || o.key.starts_with(&v1))
}
