//! `store remove` on OCFL replicas: an object goes whole, every version of it, with every
//! package kept in it (an AIP kept as a version of its submission's object cannot go alone:
//! an OCFL version is write-once, and the versions after it build on it).
//!
//! The order leaves nothing that looks committed if the run is killed at any write. The state
//! database first records that the removal began; then, under the object's lock on each
//! replica (a put of the id waits for it), a file system root loses the object in one rename
//! into its work directory and then the n-tuple directories left empty (a kill after that
//! leaves a valid root), and the tree is deleted in the work directory; a bucket loses the root
//! inventory's sidecar and the root inventory first (no reader then sees a committed object),
//! then the rest, the object declaration last.
//! Only once every replica is done does the database forget the object (its heads,
//! inventories, kept packages, dependencies, checks). Until then `check` reports what is left
//! as the remains of an unfinished removal (never as damage to repair from another replica),
//! `repair` leaves them, a put of the id is refused, and `remove` run again finishes.

use std::collections::{BTreeMap, BTreeSet};

use super::check::{FindingKind, ObjectOnReplica, OcflFinding};
use super::layout::object_path;
use super::root::OcflRoot;
use crate::store::replica::Replica;
use crate::store::state::ObjectRows;
use crate::store::{RemoveReport, ReplicaRemoval, Store, StoreError, StoreRefusal};

impl Store {
    /// Removes object `id` from every replica, then from the state database (see the
    /// module's notes); with `dry_run`, lists what would go and deletes nothing.
    pub(crate) fn ocfl_remove(
        &self,
        roots: &[OcflRoot],
        id: &str,
        dry_run: bool,
    ) -> Result<RemoveReport, StoreError> {
        // Every replica's object lock, in the configuration's order as a put takes them: the
        // refusals below are decided under them, so no put adds a version meanwhile.
        let _locks = roots.iter().map(|r| r.lock(id)).collect::<Result<Vec<_>, _>>()?;
        let kept = self.removable(id)?;
        let obj = object_path(id);
        if !dry_run {
            self.state().begin_ocfl_removal(id)?;
        }
        let mut replicas = Vec::new();
        for (root, r) in roots.iter().zip(&self.replicas) {
            let mut rep = ReplicaRemoval { replica: r.name().into(), ..Default::default() };
            if let Err(e) = remove_from(root, r.as_ref(), id, &obj, dry_run, &mut rep.deleted) {
                rep.error = Some(e.to_string());
            }
            replicas.push(rep);
        }
        let removed = !dry_run && replicas.iter().all(|r| r.error.is_none());
        if removed {
            self.state().forget_ocfl_object(ObjectRows { id, dir: &obj, kept: &kept })?;
        }
        Ok(RemoveReport { package: id.into(), dir: obj, dry_run, replicas, removed, kept })
    }

    /// The packages kept in object `id`, when it may be removed: refused for a package kept
    /// in another object, for an id the state database does not record (neither as an object
    /// nor as one whose removal began), and while another stored package requires the object's
    /// package or one kept in it.
    fn removable(&self, id: &str) -> Result<Vec<String>, StoreError> {
        if let Some(place) = self.state().ocfl_package(id)? {
            let (identifier, object, version) = (id.into(), place.object, place.version);
            return Err(StoreRefusal::KeptNotRemovable { identifier, object, version }.into());
        }
        let recorded = self.anchors(Some(id))?.of(&object_path(id)).is_some();
        if !recorded && self.state().ocfl_removal(id)?.is_none() {
            return Err(StoreRefusal::NotInState(id.into()).into());
        }
        let mut kept: BTreeSet<String> = self.state().kept_in(id)?.into_iter().collect();
        // Packages the versions' messages name as kept, which a database rebuilt or a put
        // killed before recording the place would not list (none when no head can be read,
        // as in an object half removed).
        if let Ok(h) = self.holdings(id) {
            kept.extend(h.kept.into_iter().map(|(p, _)| p));
        }
        let kept: Vec<String> = kept.into_iter().collect();
        let mut going = vec![id.to_string()];
        going.extend(kept.iter().cloned());
        let dependents = self.state().ocfl_dependents(&going)?;
        if !dependents.is_empty() {
            return Err(StoreRefusal::Required { identifier: id.into(), dependents }.into());
        }
        Ok(kept)
    }

    /// Refuses a put (or an adoption) of object `id` while its removal is unfinished: a new
    /// version on its remains would mix the two, and the removal run again would delete it.
    pub(crate) fn no_removal_begun(&self, id: &str) -> Result<(), StoreError> {
        match self.state().ocfl_removal(id)? {
            Some(started) => {
                Err(StoreRefusal::RemovalUnfinished { identifier: id.into(), started }.into())
            }
            None => Ok(()),
        }
    }

    /// The objects whose removal began and did not finish, by object directory (their ids as
    /// values).
    pub(crate) fn removals(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let ids = self.state().ocfl_removals()?;
        Ok(ids.into_iter().map(|id| (object_path(&id), id)).collect())
    }
}

/// Removes object `obj` (of `id`) from one replica, adding to `deleted` its keys there as
/// they go, in that order (a dry run: every key, nothing deleted). Once a file system
/// replica's rename is done, every key is out of the root, whatever happens to the tree in
/// the work directory after.
fn remove_from(
    root: &OcflRoot,
    r: &dyn Replica,
    id: &str,
    obj: &str,
    dry_run: bool,
    deleted: &mut Vec<String>,
) -> Result<(), StoreError> {
    let prefix = format!("{obj}/");
    let keys: Vec<String> =
        r.list(obj)?.into_iter().map(|o| o.key).filter(|k| k.starts_with(&prefix)).collect();
    let keys = super::bucket::removal_order(obj, keys);
    if dry_run {
        deleted.extend(keys);
        return Ok(());
    }
    match root {
        OcflRoot::Fs(f) => f.remove_object(id, obj, &mut || deleted.extend(keys.iter().cloned())),
        OcflRoot::Bucket(b) => b.remove_object(r, obj, &keys, deleted),
    }
}

/// What a check found of the objects whose removal did not finish (`removing`, by object
/// directory; only those in `dirs` when given): their findings are dropped, and each checked
/// replica (`names`) gets one finding saying what is left there, so the remains are reported
/// as such (never as damage to repair from another replica) until `remove` finishes.
pub(crate) fn as_remains(
    findings: &mut Vec<OcflFinding>,
    seen: &[ObjectOnReplica],
    names: &[&str],
    removing: &BTreeMap<String, String>,
    dirs: Option<&BTreeSet<&str>>,
) {
    let ours = |dir: &str| removing.contains_key(dir) && dirs.is_none_or(|d| d.contains(dir));
    findings.retain(|f| !ours(&f.object));
    for (dir, id) in removing.iter().filter(|(d, _)| ours(d)) {
        for name in names {
            let held = seen.iter().any(|s| s.object == *dir && s.replica == *name);
            let what = if held {
                "what is left of it here is its remains (never repaired)"
            } else {
                "nothing of it is left here, and the state database still records it"
            };
            let detail = format!(
                "a store remove of {id} did not finish: {what}; run `store remove {id}` again to \
                 finish"
            );
            findings.push(OcflFinding {
                replica: name.to_string(),
                object: dir.clone(),
                key: dir.clone(),
                kind: FindingKind::Removing,
                detail,
            });
        }
    }
}
