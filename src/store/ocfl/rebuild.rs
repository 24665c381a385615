//! `store rebuild-state` on OCFL replicas: the state database's records of objects found
//! again from what the replicas hold, one object at a time.
//!
//! The judge is the one every command uses when the database records nothing of an object
//! (see [`super::anchor`]): the latest head, taken only when more than half of the configured
//! replicas hold that very inventory (a replica without the object, or whose copy does not
//! read, votes against). Such an object is recorded as `store repair --adopt` records one:
//! its head inventory as one webaip built, committed on each replica holding it, and each
//! earlier head's inventory (a version directory's copy, when it agrees with the head's
//! history), so a copy restored to an older version is judged behind, as before. An object
//! held by no majority, at two heads of one number, or foreign (the database records other
//! objects and this one arrived after its records began) is refused and named, never
//! recorded; an object the database records already is left as it is (a record is never
//! overridden, whatever the replicas hold now).
//!
//! For each object recorded, the packages its versions keep (an AIP in its submission's
//! object, named by the version messages: see [`super::kept`]) are recorded where a put
//! records them, and what each package requires is read again from the METS of every version
//! holding it (spooled to a temporary file and read as a stream), as each put of those
//! versions recorded it.

use std::collections::BTreeSet;
use std::io::{self, Seek, Write};

use super::anchor::{CopyHead, Reference, reference};
use super::check::{Head, load};
use super::kept::{self, Holder};
use super::layout::object_path;
use super::ops::survey;
use super::repair::Adopted;
use crate::formats::digest::{Sha512, hex};
use crate::mets::reader::MetsReader;
use crate::store::rebuild::RebuildStateReport;
use crate::store::replica::Replica;
use crate::store::{Store, StoreError, deps};

/// What the replicas hold of one object directory: each readable head, and why a copy did
/// not read.
struct Copies {
    /// Replica name and the head its root inventory (agreeing with its sidecar) gives.
    heads: Vec<(String, Head)>,
    /// Copies that did not read, each `replica: why`.
    unreadable: Vec<String>,
}

/// Why the METS of a version could not give what its package requires.
#[derive(Debug, thiserror::Error)]
enum MetsUnread {
    /// The inventory names no content file for the METS's digest.
    #[error("the inventory names no content for its SHA-512")]
    NoContent,
    /// Read, but not the bytes the inventory states.
    #[error("{replica}: its SHA-512 is {found}, not the inventory's")]
    Digest { replica: String, found: String },
    /// Not read from a replica.
    #[error("{replica}: {source}")]
    Read {
        replica: String,
        #[source]
        source: Box<StoreError>,
    },
    /// Not a METS whose dependencies read.
    #[error("{replica}: {source}")]
    Mets {
        replica: String,
        #[source]
        source: crate::mets::reader::MetsError,
    },
}

impl Store {
    /// Records every object more than half of the replicas hold at one head inventory, with
    /// the packages its versions keep and what they require; see the module doc. OCFL
    /// replicas only.
    pub(crate) fn rebuild_objects(&self) -> Result<RebuildStateReport, StoreError> {
        self.ocfl_roots("store rebuild-state")?;
        // Before the first record: the objects held now predate the records and are judged
        // by majority, here and by every later command.
        self.note_predating()?;
        let mut report = RebuildStateReport::default();
        let mut dirs = BTreeSet::new();
        for r in &self.replicas {
            match survey(r.as_ref()) {
                Ok(s) => dirs.extend(s.objects.into_keys()),
                Err(e) => report.refused.push(format!(
                    "replica {}: not listed ({e}); it counts against every object's majority",
                    r.name()
                )),
            }
        }
        for dir in dirs {
            self.rebuild_object(&dir, &mut report)?;
        }
        Ok(report)
    }

    /// Judges and records the object at `dir` (see the module doc).
    fn rebuild_object(&self, dir: &str, report: &mut RebuildStateReport) -> Result<(), StoreError> {
        let copies = self.copies_of_object(dir);
        let Some((_, first)) = copies.heads.first() else {
            let why = copies.unreadable.join("; ");
            report.refused.push(format!("{dir}: no replica holds a head that reads ({why})"));
            return Ok(());
        };
        let id = first.inv.id.clone();
        let anchors = self.anchors(Some(&id))?;
        if anchors.of(dir).is_some() {
            report.left_as_recorded.push(id);
            return Ok(());
        }
        if anchors.foreign(dir) {
            report.refused.push(format!(
                "{id}: the state database records other objects and not this one, which arrived \
                 after its records began (planted, or put by another store): not recorded \
                 (`store repair --adopt {id}` takes it as webaip's)"
            ));
            return Ok(());
        }
        let heads: Vec<CopyHead> = copies
            .heads
            .iter()
            .map(|(r, h)| CopyHead { replica: r, head: h.versions.head, sha512: &h.sha512 })
            .collect();
        let named = |c: &CopyHead| format!("v{} on {}", c.head, c.replica);
        let configured = self.replicas.len();
        let taken = match reference(None, &heads, configured) {
            Reference::Unrecorded { copy, .. } => copy,
            Reference::NoMajority { copy, holders, replicas } => {
                report.refused.push(format!(
                    "{id}: its latest head, {}, is held by {holders} of {replicas} replicas: \
                     not recorded without a majority",
                    named(&copy)
                ));
                return Ok(());
            }
            Reference::Diverged(a, b) => {
                report.refused.push(format!(
                    "{id}: {} and {} are different versions of one number: not recorded",
                    named(&a),
                    named(&b)
                ));
                return Ok(());
            }
            // Neither without a record and with a head read.
            Reference::Recorded(_) | Reference::None => return Ok(()),
        };
        let holders: Vec<&(String, Head)> =
            copies.heads.iter().filter(|(_, h)| h.sha512 == taken.sha512).collect();
        let head = &holders[0].1;
        self.record_adopted(&Adopted {
            id: id.clone(),
            head: head.inv.head.clone(),
            inventory_sha512: head.sha512.clone(),
            replicas: holders.iter().map(|(r, _)| r.clone()).collect(),
            configured,
            recorded_before: None,
            unreadable: copies.unreadable,
        })?;
        let sources: Vec<&dyn Replica> =
            holders.iter().filter_map(|(r, _)| self.replica(r).ok()).collect();
        self.record_earlier_heads(dir, head, &sources, report)?;
        self.rebuild_holdings(dir, head, &sources, report)?;
        // Every version read: what they keep is recorded from nothing.
        self.note_kept_recorded(&id, None, &head.inv.head)?;
        report.packages.push(id);
        Ok(())
    }

    /// Records the inventory of each earlier head of the object, as the puts that built them
    /// did: a version directory's inventory is the root inventory as it was while that
    /// version was the head, so a copy restored to an older version after the database was
    /// lost is known as one webaip committed, and judged behind (brought forward by repair)
    /// rather than foreign. One is recorded only when it agrees with the head on every version
    /// up to its own; else it is named in the report.
    fn record_earlier_heads(
        &self,
        dir: &str,
        head: &Head,
        sources: &[&dyn Replica],
        report: &mut RebuildStateReport,
    ) -> Result<(), StoreError> {
        let id = &head.inv.id;
        for n in 1..head.versions.head {
            let name = head.versions.name(n);
            match earlier_head(dir, head, n, sources) {
                Ok(sha512) => self.state().record_ocfl_inventory(id, &name, &sha512)?,
                Err(why) => report.refused.push(format!(
                    "{id}: the inventory of {name} is not recorded as an earlier head: {why}"
                )),
            }
        }
        Ok(())
    }

    /// Each replica's head of the object at `dir`: its root inventory, valid, agreeing with
    /// its sidecar and naming an id whose object is at `dir`.
    fn copies_of_object(&self, dir: &str) -> Copies {
        let mut copies = Copies { heads: Vec::new(), unreadable: Vec::new() };
        for r in &self.replicas {
            let name = r.name().to_string();
            let loaded = match load(r.as_ref(), dir) {
                Ok(Some(l)) => l,
                Ok(None) => continue,
                Err(e) => {
                    copies.unreadable.push(format!("{name}: {e}"));
                    continue;
                }
            };
            match (loaded.sidecar, loaded.parsed) {
                (Ok(()), Ok((inv, versions))) if object_path(&inv.id) == dir => {
                    copies.heads.push((name, Head { inv, versions, sha512: loaded.sha512 }));
                }
                (Ok(()), Ok((inv, _))) => copies.unreadable.push(format!(
                    "{name}: its inventory names {:?}, whose object is not here",
                    inv.id
                )),
                (Err(e), _) | (_, Err(e)) => copies.unreadable.push(format!("{name}: {e}")),
            }
        }
        copies
    }

    /// Records where each package kept in the object is (its latest version), and what every
    /// package its versions hold requires, from each version's METS (read once per METS).
    fn rebuild_holdings(
        &self,
        dir: &str,
        head: &Head,
        sources: &[&dyn Replica],
        report: &mut RebuildStateReport,
    ) -> Result<(), StoreError> {
        let (inv, versions) = (&head.inv, &head.versions);
        let mut placed = BTreeSet::new();
        let mut read = BTreeSet::new();
        for n in (1..=versions.head).rev() {
            let package = match kept::holder(inv, versions, n) {
                Holder::Own => inv.id.as_str(),
                Holder::Kept(p) => p,
            };
            if package != inv.id && placed.insert(package.to_string()) {
                self.record_place(package, &inv.id, Some(&versions.name(n)))?;
            }
            let Some(digest) = kept::mets_digest(inv, versions, n) else { continue };
            if !read.insert((package.to_string(), digest.clone())) {
                continue;
            }
            match mets_requires(dir, head, &digest, sources) {
                Ok(requires) => self.state().record_ocfl_dependencies(package, &requires)?,
                Err(why) => report.refused.push(format!(
                    "{}: what {package} requires not read from the METS of {}: {why}",
                    inv.id,
                    versions.name(n)
                )),
            }
        }
        Ok(())
    }
}

/// Why a replica's copy of a version's inventory was not taken as an earlier head.
#[derive(Debug, thiserror::Error)]
enum NotEarlierHead {
    /// The version directory holds no inventory.
    #[error("no inventory")]
    Absent,
    /// Not read.
    #[error("{0}")]
    Unread(#[from] StoreError),
    /// Not a valid inventory, or its sidecar names other bytes.
    #[error("{0}")]
    Invalid(#[from] super::InventoryFault),
    /// Another object's, or another version's.
    #[error("it is the inventory of {id} at {head}")]
    Other { id: String, head: String },
    /// Its version blocks are not the head's.
    #[error("its versions differ from the head's")]
    Versions,
    /// It names content the head's manifest does not hold there.
    #[error("its manifest names content the head's does not")]
    Manifest,
}

/// Each source replica's reason, when none gave version `n`'s inventory.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(|(r, why)| format!("{r}: {why}")).collect::<Vec<_>>().join("; "))]
struct NoEarlierHead(Vec<(String, NotEarlierHead)>);

/// The SHA-512 of version `n`'s inventory in the object at `dir`, from the first of
/// `sources` holding one that agrees with its sidecar and with `head` (see [`agrees`]).
fn earlier_head(
    dir: &str,
    head: &Head,
    n: u32,
    sources: &[&dyn Replica],
) -> Result<String, NoEarlierHead> {
    let name = head.versions.name(n);
    let mut why = Vec::new();
    for r in sources {
        let taken = (|| {
            let loaded = load(*r, &format!("{dir}/{name}"))?.ok_or(NotEarlierHead::Absent)?;
            let (inv, _) = loaded.sidecar.and(loaded.parsed)?;
            agrees(&inv, head, n)?;
            Ok::<_, NotEarlierHead>(loaded.sha512)
        })();
        match taken {
            Ok(sha512) => return Ok(sha512),
            Err(e) => why.push((r.name().to_string(), e)),
        }
    }
    Err(NoEarlierHead(why))
}

/// Whether `inv`, the inventory in version `n`'s directory, is the head's history up to it:
/// its id, `n` as its head, the head's first `n` version blocks, and content the head's
/// manifest holds at the same paths.
fn agrees(inv: &super::inventory::Inventory, head: &Head, n: u32) -> Result<(), NotEarlierHead> {
    if inv.id != head.inv.id || inv.head != head.versions.name(n) {
        return Err(NotEarlierHead::Other { id: inv.id.clone(), head: inv.head.clone() });
    }
    let same_versions = inv.versions.len() == n as usize
        && inv.versions.iter().all(|(v, block)| head.inv.versions.get(v) == Some(block));
    if !same_versions {
        return Err(NotEarlierHead::Versions);
    }
    let held = |d: &String, paths: &Vec<String>| {
        head.inv.manifest.get(d).is_some_and(|h| paths.iter().all(|p| h.contains(p)))
    };
    if !inv.manifest.iter().all(|(d, paths)| held(d, paths)) {
        return Err(NotEarlierHead::Manifest);
    }
    Ok(())
}

/// The OBJIDs the METS of SHA-512 `digest` in the object at `dir` requires, from the first of
/// `sources` that gives its bytes: spooled to an anonymous temporary file (hashed on the way,
/// and kept only when they are the inventory's), then read as a stream.
fn mets_requires(
    dir: &str,
    head: &Head,
    digest: &str,
    sources: &[&dyn Replica],
) -> Result<BTreeSet<String>, MetsUnread> {
    let path = head.inv.content_path(digest).ok_or(MetsUnread::NoContent)?;
    let key = format!("{dir}/{path}");
    let mut last = MetsUnread::NoContent;
    for r in sources {
        let replica = r.name().to_string();
        let read = |e: StoreError| MetsUnread::Read { replica: replica.clone(), source: e.into() };
        let mut file = tempfile::tempfile().map_err(|e| read(StoreError::Scratch(e)))?;
        let mut h = Sha512::new();
        let got = r.read(&key, &mut |c| {
            h.update(c);
            file.write_all(c)
        });
        if let Err(e) = got {
            last = read(e);
            continue;
        }
        let found = hex(&h.finalize());
        if !found.eq_ignore_ascii_case(digest) {
            last = MetsUnread::Digest { replica, found };
            continue;
        }
        file.rewind().map_err(|e| read(StoreError::Scratch(e)))?;
        let reader = MetsReader::strict(io::BufReader::new(file));
        match deps::mets_dependencies(reader) {
            Ok(d) => return Ok(d),
            Err(source) => last = MetsUnread::Mets { replica, source },
        }
    }
    Err(last)
}
