//! `store repair`: a check, then every missing or corrupt copy re-established from a replica
//! whose copy verifies; a copy that verifies is never touched.

use std::collections::BTreeSet;

use rayon::prelude::*;

use super::config::package_dir;
use super::replica::{Replica, Source};
use super::state::{CopyRow, FileRecord, Seen, Upload};
use super::{
    CopyOutcome, CopyStatus, PackageFile, Rejections, RepairReport, Store, StoreError,
    StoreRefusal, checked_package_dir, fetch_verified, hash_copy, not_recorded, verify_copy,
};
use crate::layout::MANIFEST;

/// One copy: which replica, which package, which file of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct CopyOf {
    replica: String,
    identifier: String,
    path: String,
}

/// What repairing one copy did, and from where (or why nothing needed doing).
struct Repaired {
    status: CopyStatus,
    message: String,
}

impl Store {
    /// Checks (with `deep`, every checksum; else the file lists and sizes, plus a fresh hash of
    /// every copy an earlier check found corrupt), then re-establishes every missing or corrupt
    /// copy from a replica whose copy verifies.
    pub fn repair(
        &self,
        deep: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<RepairReport, StoreError> {
        self.webaip_layout("this repair (OCFL replicas: Store::repair_objects)")?;
        // Packages not moved yet are repaired during a migration, never while one runs: a
        // copy made back after migrate removed the old files would be left in no package.
        let _writing = self.writing_webaip(false)?;
        // Copies an earlier deep check found corrupt stay suspects until proven otherwise.
        let suspects: BTreeSet<CopyOf> = self
            .recorded_bad_copies()?
            .into_iter()
            .filter(|(_, sum)| *sum == Seen::Corrupt)
            .map(|(c, _)| c)
            .collect();
        let check = self.check(None, deep, progress)?;
        // What this check found missing or corrupt, as it recorded it in the state.
        let mut bad: Vec<CopyOf> =
            self.recorded_bad_copies()?.into_iter().map(|(c, _)| c).collect();
        for copy in suspects {
            if !bad.contains(&copy) && !self.verifies(&copy)? {
                bad.push(copy);
            }
        }
        let actions: Vec<CopyOutcome> =
            self.pool.install(|| bad.par_iter().map(|c| self.repair_outcome(c)).collect());
        self.record_repairs(&actions)?;
        // A package the check could not read is not repaired, whatever was done elsewhere.
        let unreadable: Vec<String> = check
            .replicas
            .iter()
            .flat_map(|r| r.errors.iter().map(move |e| format!("{}: {e}", r.replica)))
            .collect();
        let repaired =
            unreadable.is_empty() && actions.iter().all(|a| a.status != CopyStatus::Unrepairable);
        Ok(RepairReport { check, actions, unreadable, repaired })
    }

    /// The copies the state records as missing or corrupt, replica by replica, each with its
    /// checksum status.
    fn recorded_bad_copies(&self) -> Result<Vec<(CopyOf, Seen)>, StoreError> {
        let mut out = Vec::new();
        for r in &self.replicas {
            for (identifier, path, sum) in self.state().bad_copies(r.name())? {
                out.push((CopyOf { replica: r.name().into(), identifier, path }, sum));
            }
        }
        Ok(out)
    }

    /// Whether a copy reads back with the recorded SHA-512 now.
    fn verifies(&self, c: &CopyOf) -> Result<bool, StoreError> {
        let expected = self.expected_sha(&c.identifier, &c.path)?;
        let key = format!("{}/{}", package_dir(&c.identifier), c.path);
        let copy = hash_copy(self.replica(&c.replica)?, &key);
        Ok(matches!(copy, Ok(ref sha) if *sha == expected))
    }

    fn repair_outcome(&self, c: &CopyOf) -> CopyOutcome {
        let (status, message) = match self.repair_copy(c) {
            Ok(r) => (r.status, Some(r.message)),
            Err(e) => (CopyStatus::Unrepairable, Some(e.to_string())),
        };
        CopyOutcome {
            package: c.identifier.clone(),
            replica: c.replica.clone(),
            file: c.path.clone(),
            status,
            message,
        }
    }

    /// Records every copy re-established (or found good) as uploaded and verified.
    fn record_repairs(&self, actions: &[CopyOutcome]) -> Result<(), StoreError> {
        let rows: Vec<CopyRow> = actions
            .iter()
            .filter(|a| a.status != CopyStatus::Unrepairable)
            .map(|a| CopyRow {
                identifier: &a.package,
                path: &a.file,
                replica: &a.replica,
                upload: Some(Upload::Uploaded),
                filelist: Seen::Ok,
                checksum: Some(Seen::Ok),
                message: a.message.as_deref(),
            })
            .collect();
        self.state().record_copies(&rows)
    }

    pub(super) fn expected_sha(&self, identifier: &str, path: &str) -> Result<String, StoreError> {
        self.state()
            .package_files(identifier)?
            .and_then(|fs| fs.into_iter().find(|f| f.path == path))
            .map(|f| f.sha512)
            .ok_or_else(|| not_recorded(identifier, path))
    }

    /// Re-establishes one copy from the first other replica whose copy verifies.
    fn repair_copy(&self, c: &CopyOf) -> Result<Repaired, StoreError> {
        let files = self.state().package_files(&c.identifier)?.unwrap_or_default();
        let f = files
            .iter()
            .find(|f| f.path == c.path)
            .ok_or_else(|| not_recorded(&c.identifier, &c.path))?;
        let pdir = checked_package_dir(&c.identifier)?;
        let key = format!("{pdir}/{}", c.path);
        let to = self.replica(&c.replica)?;
        keep_claim(to, &pdir, &files)?;
        let tmp = tempfile::tempdir().map_err(StoreError::Scratch)?;
        let local = Source { root: tmp.path(), name: "copy" };
        let mut rejected = Vec::new();
        for source in self.replicas.iter().filter(|r| r.name() != c.replica) {
            let _ = std::fs::remove_file(tmp.path().join("copy"));
            match fetch_verified(source.as_ref(), &key, local, &f.sha512) {
                Ok(()) => {
                    let from = format!("from replica {}", source.name());
                    return place_copy(to, &key, local, f, from);
                }
                Err(e) => rejected.push((source.name().to_string(), e)),
            }
        }
        Err(StoreRefusal::NoGoodCopy { rejected: Rejections(rejected) }.into())
    }
}

/// The package's claim is kept (or re-made) on the replica repaired: a repair never writes
/// into a directory another package claimed.
fn keep_claim(to: &dyn Replica, pdir: &str, files: &[FileRecord]) -> Result<(), StoreError> {
    let Some(m) = files.iter().find(|f| f.path == MANIFEST) else { return Ok(()) };
    let (holder, _) = to.claim(pdir, &m.sha512)?;
    if holder != m.sha512 {
        let (replica, dir) = (to.name().into(), pdir.into());
        return Err(StoreRefusal::ClaimedByOther { replica, dir, holder }.into());
    }
    Ok(())
}

/// Writes the verified copy at `local` to `key` of `to` where it is missing or proven bad, and
/// verifies it there; a copy that verifies (found again, or written meanwhile by another
/// writer) is left as it is.
fn place_copy(
    to: &dyn Replica,
    key: &str,
    local: Source,
    f: &FileRecord,
    from: String,
) -> Result<Repaired, StoreError> {
    let left =
        |message: &str| Ok(Repaired { status: CopyStatus::Verified, message: message.into() });
    let (status, write) = match to.stat(key) {
        Ok(None) => match to.create(key, local, f.size, &f.sha512) {
            // A put of the package published it meanwhile: left as it is if it is the
            // package's copy (verified below), else not overwritten.
            Err(StoreError::Exists { .. }) => {
                verify_copy(to, key, &PackageFile::from(f))?;
                return left("written meanwhile by another writer; verifies");
            }
            write => (CopyStatus::Restored, write),
        },
        // Only a copy proven bad is replaced: check it once more right here.
        Ok(Some(_)) => match hash_copy(to, key) {
            Ok(sha) if sha == f.sha512 => {
                return left("the copy verifies now; left untouched");
            }
            _ => (CopyStatus::Replaced, to.replace(key, local, f.size, &f.sha512)),
        },
        // A link or a FIFO where the copy should be: the entry itself is replaced (never
        // followed); a directory there makes this fail.
        Err(_) => (CopyStatus::Replaced, to.replace(key, local, f.size, &f.sha512)),
    };
    write?;
    verify_copy(to, key, &PackageFile::from(f))?;
    Ok(Repaired { status, message: from })
}
