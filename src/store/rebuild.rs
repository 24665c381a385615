//! `store rebuild-state`: the state database recreated from what the replicas hold.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Seek, Write};

use crate::formats::digest::Sha512;
use serde::Serialize;

use super::config::unsafe_name;
use super::state::{CopyRow, FileRecord, Seen};
use super::{
    CopyFailure, MAX_MANIFEST, ManifestError, Rejections, Store, StoreError, StoreRefusal,
    checked_package_dir, deps, manifest_names,
};
use crate::formats::digest::hex;
use crate::layout::{MANIFEST, METS};
use crate::mets::reader::MetsReader;

/// The result of `store rebuild-state`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RebuildStateReport {
    /// Packages recorded.
    pub packages: Vec<String>,
    /// Package directories (OCFL objects) not recorded, and why.
    pub refused: Vec<String>,
    /// OCFL objects the state database recorded already: left as they were (rebuild-state
    /// never overrides a record).
    pub left_as_recorded: Vec<String>,
}

/// What one replica lists in a package directory: key and size of each object that can be a
/// copy.
struct ReplicaListing {
    replica: String,
    sizes: BTreeMap<String, u64>,
}

/// A package directory found in the replicas, and what they hold of it.
struct FoundPackage {
    identifier: String,
    dir: String,
    listings: Vec<ReplicaListing>,
}

impl FoundPackage {
    /// The size most replicas list for `key` (0 when none does).
    fn majority_size(&self, key: &str) -> u64 {
        let mut sizes: BTreeMap<u64, usize> = BTreeMap::new();
        for l in &self.listings {
            if let Some(&s) = l.sizes.get(key) {
                *sizes.entry(s).or_default() += 1;
            }
        }
        sizes.into_iter().max_by_key(|(_, n)| *n).map(|(s, _)| s).unwrap_or(0)
    }

    /// The files of the package by `manifest`: the manifest itself, then each line's file at
    /// the size most replicas list; why not, when a line is malformed or leaves the package.
    fn records(&self, manifest: &[u8]) -> Result<Vec<FileRecord>, ManifestError> {
        let lines = manifest_names(io::Cursor::new(manifest), MANIFEST)?;
        let mut records = vec![FileRecord {
            path: MANIFEST.into(),
            size: manifest.len() as u64,
            sha512: hex(&Sha512::digest(manifest)),
        }];
        for (rel, sum) in lines {
            let size = self.majority_size(&format!("{}/{rel}", self.dir));
            records.push(FileRecord { path: rel, size, sha512: sum });
        }
        records.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(records)
    }

    /// Each copy of `records` on each replica, as present (listed at its size) or missing;
    /// whether every one is present.
    fn copies<'a>(&'a self, records: &'a [FileRecord]) -> (Vec<CopyRow<'a>>, bool) {
        let mut complete = true;
        let mut rows = Vec::new();
        for f in records {
            let key = format!("{}/{}", self.dir, f.path);
            for l in &self.listings {
                let present = l.sizes.get(&key) == Some(&f.size);
                complete &= present;
                rows.push(CopyRow {
                    identifier: &self.identifier,
                    path: &f.path,
                    replica: &l.replica,
                    upload: None,
                    filelist: if present { Seen::Ok } else { Seen::Missing },
                    checksum: Some(Seen::Unknown),
                    message: None,
                });
            }
        }
        (rows, complete)
    }
}

/// The identifier whose package directory `dir` is, when it is one this layout makes: only a
/// name that maps back to itself, so the directory is one safe segment whatever the
/// identifier holds.
fn identifier_of(dir: &str) -> Option<String> {
    let identifier = dir.split_once('/').and_then(|(_, n)| unsafe_name(n))?;
    (checked_package_dir(&identifier).ok().as_deref() == Some(dir)).then_some(identifier)
}

impl Store {
    /// Recreates the state database's records from what the replicas hold: every package
    /// directory, its manifest (the copy most replicas agree on) and which copies are there.
    /// A package directory whose name is not one this layout makes, or whose manifest has a
    /// line that is malformed or leaves the package, is not recorded: it is listed as refused.
    /// On OCFL replicas, the objects most replicas hold at one head (see
    /// `ocfl::rebuild`).
    pub fn rebuild_state(&self) -> Result<RebuildStateReport, StoreError> {
        if self.is_ocfl() {
            return self.rebuild_objects();
        }
        let mut dirs: BTreeSet<String> = BTreeSet::new();
        for r in &self.replicas {
            dirs.extend(r.packages()?);
        }
        let mut report = RebuildStateReport::default();
        for dir in dirs {
            let Some(identifier) = identifier_of(&dir) else { continue };
            let Some(manifest) = self.majority_manifest(&dir) else { continue };
            let found = FoundPackage { listings: self.listings(&dir), identifier, dir };
            match found.records(&manifest) {
                Ok(records) => self.record_found(&found, &records, &mut report)?,
                Err(why) => report.refused.push(format!("{}: {why}", found.dir)),
            }
        }
        Ok(report)
    }

    /// The manifest most replicas hold byte for byte in `dir` (`None`: no replica gives one).
    fn majority_manifest(&self, dir: &str) -> Option<Vec<u8>> {
        let mut manifests: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        for r in &self.replicas {
            let mut bytes = Vec::new();
            let got = r.read(&format!("{dir}/{MANIFEST}"), &mut |c| {
                if bytes.len() + c.len() > MAX_MANIFEST {
                    return Err(io::Error::other("the manifest is larger than the store reads"));
                }
                bytes.extend_from_slice(c);
                Ok(())
            });
            if got.is_ok() {
                *manifests.entry(bytes).or_default() += 1;
            }
        }
        manifests.into_iter().max_by_key(|(_, n)| *n).map(|(m, _)| m)
    }

    /// What each replica lists in `dir` (an unreadable replica lists nothing).
    fn listings(&self, dir: &str) -> Vec<ReplicaListing> {
        let copies = |listed: Vec<super::replica::ListedObject>| {
            listed.into_iter().filter(|o| o.problem.is_none()).map(|o| (o.key, o.size)).collect()
        };
        self.replicas
            .iter()
            .map(|r| ReplicaListing {
                replica: r.name().into(),
                sizes: r.list(dir).map(copies).unwrap_or_default(),
            })
            .collect()
    }

    /// Records a package found in the replicas: its files, its copies, its dependencies, and
    /// whether it is accepted (every replica lists every file at its size).
    fn record_found(
        &self,
        found: &FoundPackage,
        records: &[FileRecord],
        report: &mut RebuildStateReport,
    ) -> Result<(), StoreError> {
        let (rows, complete) = found.copies(records);
        {
            let mut st = self.state();
            st.record_package(&found.identifier, &found.dir, records)?;
            st.record_copies(&rows)?;
        }
        match self.stored_dependencies(&found.dir) {
            Ok(requires) => self.state().record_dependencies(&found.identifier, &requires)?,
            Err(why) => {
                report.refused.push(format!("{}/{METS}: dependencies not read: {why}", found.dir))
            }
        }
        self.state().set_accepted(&found.identifier, complete)?;
        report.packages.push(found.identifier.clone());
        Ok(())
    }

    /// The OBJIDs the stored METS of the package in `dir` requires, from the first replica
    /// that can give its METS: spooled to an anonymous temporary file, read as a stream.
    fn stored_dependencies(&self, dir: &str) -> Result<BTreeSet<String>, StoreError> {
        let key = format!("{dir}/{METS}");
        let mut rejected = Vec::new();
        for r in &self.replicas {
            let mut file = tempfile::tempfile().map_err(StoreError::Scratch)?;
            if let Err(e) = r.read(&key, &mut |b| file.write_all(b)) {
                rejected.push((r.name().to_string(), e));
                continue;
            }
            file.rewind().map_err(StoreError::Scratch)?;
            match deps::mets_dependencies(MetsReader::strict(io::BufReader::new(file))) {
                Ok(d) => return Ok(d),
                Err(e) => rejected.push((
                    r.name().to_string(),
                    StoreError::Replica {
                        replica: r.name().into(),
                        key: key.clone(),
                        source: Box::new(CopyFailure::Io(io::Error::other(e))),
                    },
                )),
            }
        }
        Err(StoreRefusal::NoGoodCopy { rejected: Rejections(rejected) }.into())
    }
}
