//! Replicated bit preservation (`webaip store`): packages are put to every replica of a
//! configuration (file system roots, S3-compatible buckets), checked, repaired and fetched.
//!
//! The rules, after NetarchiveSuite's bit archive:
//! - a store is *accepted* only when every replica holds every file of the package and each
//!   copy verifies against the package's SHA-512 (read back, or HEAD of the size and recorded
//!   SHA-512 after a server-verified upload);
//! - write-once: an existing copy with other content is never overwritten; the same content
//!   again is a no-op;
//! - a missing or corrupt copy is re-established only from a copy that verifies, and a copy
//!   that verifies is never touched.
//!
//! The package identifier is the METS `OBJID`; [`config::package_dir`] says where a package
//! lives inside a replica. The state database (`state`) records what was seen and is
//! rebuilt from the replicas on demand.

pub mod config;
pub(crate) mod deps;
mod error;
mod get;
pub(crate) mod replica;
#[cfg(feature = "s3")]
pub(crate) mod s3;
pub(crate) mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha512};

use crate::audit::{AuditOptions, audit_package};
use crate::formats::digest::hex;
use crate::layout::{MANIFEST, METS};
use crate::mets::listing::{Nested, read_listing, read_root};
use crate::mets::reader::MetsReader;
use config::{ReplicaConfig, ReplicaKind, StoreConfig, package_dir, unsafe_name};
pub use error::{
    ClaimConflict, ConfigProblem, CopyFailure, IdentifierProblem, ManifestError, ManifestFault,
    MetsProblem, Overlap, PackageProblem, Refusal, Rejections, StoreError,
};
use replica::{FsReplica, HashingFile, ListedObject, Replica, Source};
use state::{CopyRow, FileRecord, Seen, State, Upload};

/// The store: its replicas and state.
pub struct Store {
    replicas: Vec<Box<dyn Replica>>,
    state: Mutex<State>,
    pool: rayon::ThreadPool,
}

/// What happened to one copy.
#[derive(Debug, Clone, Serialize)]
pub struct CopyOutcome {
    /// The package identifier.
    pub package: String,
    /// The replica.
    pub replica: String,
    /// The package-relative file.
    pub file: String,
    /// What happened.
    pub status: CopyStatus,
    /// Details (what failed, where a repair came from).
    pub message: Option<String>,
}

/// What happened to one copy (written in reports in lower case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyStatus {
    /// Written and verified.
    Uploaded,
    /// The same content was already there (verified).
    Present,
    /// Not written.
    Failed,
    /// Not in the replica.
    Missing,
    /// In the replica, with other bytes.
    Corrupt,
    /// In the replica, not in the package.
    Extra,
    /// Read back and found right.
    Verified,
    /// Written again where it was missing.
    Restored,
    /// Written again over a corrupt copy.
    Replaced,
    /// No replica holds a copy that verifies.
    Unrepairable,
}

impl std::fmt::Display for CopyStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            CopyStatus::Uploaded => "uploaded",
            CopyStatus::Present => "present",
            CopyStatus::Failed => "failed",
            CopyStatus::Missing => "missing",
            CopyStatus::Corrupt => "corrupt",
            CopyStatus::Extra => "extra",
            CopyStatus::Verified => "verified",
            CopyStatus::Restored => "restored",
            CopyStatus::Replaced => "replaced",
            CopyStatus::Unrepairable => "unrepairable",
        };
        f.write_str(s)
    }
}

/// The result of `store put`.
#[derive(Debug, Clone, Serialize)]
pub struct PutReport {
    /// The package identifier (METS OBJID).
    pub package: String,
    /// Its directory inside every replica.
    pub dir: String,
    /// True only when every copy on every replica verified.
    pub accepted: bool,
    /// Files of the package.
    pub files: u64,
    /// Bytes of the package.
    pub bytes: u64,
    /// Every copy's outcome.
    pub copies: Vec<CopyOutcome>,
    /// Replicas that did not verify every file.
    pub failed_replicas: Vec<String>,
    /// The packages (OBJIDs) its METS says it requires.
    pub requires: Vec<String>,
    /// Those the store did not hold when it was put (a warning: it is stored all the same).
    pub requires_missing: Vec<String>,
}

/// The result of `store check` for one replica.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplicaCheck {
    /// The replica.
    pub replica: String,
    /// Copies expected.
    pub expected: u64,
    /// Copies whose SHA-512 was recomputed (`--deep`) and matched.
    pub verified: u64,
    /// Copies absent.
    pub missing: Vec<String>,
    /// Copies of the wrong size or (deep) the wrong SHA-512.
    pub corrupt: Vec<String>,
    /// Objects in a package directory that no package file accounts for.
    pub extra: Vec<String>,
    /// Copies that could not be read (replica unreachable...).
    pub errors: Vec<String>,
    /// Temporaries of interrupted writes (a killed put or repair) found and removed: reported
    /// once, not a problem of the store.
    pub temporaries_removed: Vec<String>,
}

/// The result of `store check`.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// True when checksums were recomputed.
    pub deep: bool,
    /// Packages checked.
    pub packages: u64,
    /// Per replica.
    pub replicas: Vec<ReplicaCheck>,
    /// Dependencies of stored packages that the store does not hold whole.
    pub missing_dependencies: Vec<MissingDependency>,
    /// True when nothing is missing, corrupt, extra or unreadable, and every dependency is
    /// stored.
    pub clean: bool,
}

/// A stored package's dependency that the store does not hold whole.
#[derive(Debug, Clone, Serialize)]
pub struct MissingDependency {
    /// The stored package that requires it.
    pub package: String,
    /// The OBJID it requires.
    pub requires: String,
    /// Why it counts as missing.
    pub why: String,
}

/// The result of `store remove`.
#[derive(Debug, Clone, Serialize)]
pub struct RemoveReport {
    /// The package identifier.
    pub package: String,
    /// Its directory inside every replica.
    pub dir: String,
    /// True when nothing was deleted (what would be is listed).
    pub dry_run: bool,
    /// Per replica, what was (or would be) deleted and what failed.
    pub replicas: Vec<ReplicaRemoval>,
    /// True only when every replica deleted every object and the state forgot the package.
    pub removed: bool,
}

/// What `store remove` did on one replica.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplicaRemoval {
    /// The replica.
    pub replica: String,
    /// Keys deleted (with a dry run: keys that would be).
    pub deleted: Vec<String>,
    /// Why the replica stopped part-way (what is not in `deleted` is still there).
    pub error: Option<String>,
}

/// The result of `store repair`.
#[derive(Debug, Clone, Serialize)]
pub struct RepairReport {
    /// The check that found what to repair.
    pub check: CheckReport,
    /// What was done to each bad copy.
    pub actions: Vec<CopyOutcome>,
    /// What the check could not read (`replica: what: why`): nothing there can be repaired, and
    /// nothing there is known to be intact.
    pub unreadable: Vec<String>,
    /// True when every bad copy was re-established and the check could read everything.
    pub repaired: bool,
}

/// A replica's listing of one package directory, and the leftover temporaries removed there.
type Listing = Result<(Vec<ListedObject>, Vec<String>), StoreError>;
/// A copy read through SHA-512: (length, hex digest).
type Hashed = Result<(u64, String), StoreError>;

/// What a check learned of one copy: (identifier, path, replica, file-list status, checksum
/// status, why).
type CheckedCopy = (String, String, String, Seen, Option<Seen>, Option<String>);

/// One package's copies on one replica against what the state expects (`files` of package
/// `id` in `dir`): missing, wrong size, odd entries and extra keys go to `rep`, each copy's
/// status to `statuses`. Returns the files (indexes into `files`) to hash, with `deep`.
fn compare_listing(
    (id, dir, files): (&String, &String, &[FileRecord]),
    name: &str,
    listed: Vec<ListedObject>,
    deep: bool,
    rep: &mut ReplicaCheck,
    statuses: &mut Vec<CheckedCopy>,
) -> Vec<usize> {
    let name = name.to_string();
    let mut to_hash = Vec::new();
    // Entries that cannot be copies (links, FIFOs...) are findings naming the path.
    let mut odd: BTreeMap<String, String> = BTreeMap::new();
    let mut listing: BTreeMap<String, u64> = BTreeMap::new();
    for o in listed {
        match o.problem {
            Some(why) => {
                odd.insert(o.key, why);
            }
            None => {
                listing.insert(o.key, o.size);
            }
        }
    }
    let mut known = BTreeSet::new();
    for (k, f) in files.iter().enumerate() {
        rep.expected += 1;
        let key = format!("{dir}/{}", f.path);
        known.insert(key.clone());
        // A copy found corrupt: reported, and its checksum status recorded.
        let corrupt = |why: String| {
            (id.clone(), f.path.clone(), name.clone(), Seen::Ok, Some(Seen::Corrupt), Some(why))
        };
        if let Some(why) = odd.get(&key) {
            rep.corrupt.push(format!("{key} ({why})"));
            statuses.push(corrupt(why.clone()));
            continue;
        }
        match listing.get(&key) {
            None => {
                rep.missing.push(key);
                statuses.push((
                    id.clone(),
                    f.path.clone(),
                    name.clone(),
                    Seen::Missing,
                    Some(Seen::Unknown),
                    None,
                ));
            }
            Some(&size) if size != f.size => {
                let why = format!("{size} bytes; expected {}", f.size);
                rep.corrupt.push(format!("{key} ({why})"));
                statuses.push(corrupt(why));
            }
            Some(_) if deep => to_hash.push(k),
            Some(_) => {
                statuses.push((id.clone(), f.path.clone(), name.clone(), Seen::Ok, None, None));
            }
        }
    }
    for k in listing.keys().filter(|k| !known.contains(*k)) {
        rep.extra.push(k.clone());
    }
    for (k, why) in odd.iter().filter(|(k, _)| !known.contains(*k)) {
        rep.extra.push(format!("{k} ({why})"));
    }
    to_hash
}

/// One package file to store or check.
#[derive(Debug, Clone)]
struct PackageFile {
    rel: String,
    size: u64,
    sha512: String,
}

impl Store {
    /// Opens the replicas and state database of a configuration.
    pub fn open(config: &StoreConfig) -> Result<Self, StoreError> {
        let replicas =
            config.replicas.iter().map(open_replica).collect::<Result<Vec<_>, _>>()?;
        let state = State::open(&config.state)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.transfers)
            .thread_name(|i| format!("webaip-transfer-{i}"))
            .build()
            .map_err(StoreError::Transfers)?;
        Ok(Store { replicas, state: Mutex::new(state), pool })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn replica(&self, name: &str) -> Result<&dyn Replica, StoreError> {
        self.replicas
            .iter()
            .find(|r| r.name() == name)
            .map(|r| r.as_ref())
            .ok_or_else(|| StoreError::NoSuchReplica(name.into()))
    }

    /// Reads the package in `dir` (every name confined, regular files only, every manifest line
    /// a file the METS lists), audits it (a damaged one is refused), claims its identifier on
    /// every replica, then writes every file to every replica and verifies every copy.
    /// `progress` hears of bytes transferred.
    pub fn put(
        &self,
        dir: &Path,
        audit: &AuditOptions,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<PutReport, StoreError> {
        // The store's own checks come first: nothing below reads through a link or a FIFO, or
        // follows a manifest line out of the package.
        let ReadPackage { identifier, files, digest, requires } = read_package(dir)?;
        let report = audit_package(dir, audit, &|_| {})
            .map_err(|source| Refusal::Unauditable { dir: dir.into(), source })?;
        if !report.intact {
            let errors = report.findings.len()
                + report
                    .validation
                    .findings
                    .iter()
                    .filter(|f| f.severity == crate::mets::validate::Severity::Error)
                    .count();
            return Err(Refusal::Damaged { dir: dir.into(), errors }.into());
        }
        let pdir = checked_package_dir(&identifier)?;
        let records: Vec<FileRecord> = files
            .iter()
            .map(|f| FileRecord { path: f.rel.clone(), size: f.size, sha512: f.sha512.clone() })
            .collect();
        if let Some(known) = self.state().package_files(&identifier)?
            && known != records
        {
            return Err(Refusal::AlreadyStored(identifier).into());
        }
        // Claim the identifier on every replica before any file is written.
        let claim_failed = self.claim_all(&identifier, &pdir, &digest, &files)?;
        // What it requires is recorded with it (rebuild-state reads it from the METS again);
        // a dependency not stored is put anyway, and said: packages may arrive in any order.
        let requires_missing = {
            let mut st = self.state();
            st.record_package(&identifier, &pdir, &records)?;
            st.record_dependencies(&identifier, &requires)?;
            let mut missing = Vec::new();
            for r in &requires {
                if st.package_files(r)?.is_none() {
                    missing.push(r.clone());
                }
            }
            missing
        };
        let jobs: Vec<(&dyn Replica, &PackageFile)> =
            self.replicas.iter().flat_map(|r| files.iter().map(move |f| (r.as_ref(), f))).collect();
        let copies: Vec<CopyOutcome> = self.pool.install(|| {
            jobs.par_iter()
                .map(|(r, f)| {
                    let key = format!("{pdir}/{}", f.rel);
                    let source = Source { root: dir, name: &f.rel };
                    let (status, message) = match claim_failed.get(r.name()) {
                        Some(why) => (CopyStatus::Failed, Some(why.clone())),
                        None => match put_copy(*r, &key, source, f) {
                            Ok(s) => (s, None),
                            Err(e) => (CopyStatus::Failed, Some(e.to_string())),
                        },
                    };
                    progress(f.size);
                    CopyOutcome {
                        package: identifier.clone(),
                        replica: r.name().into(),
                        file: f.rel.clone(),
                        status,
                        message,
                    }
                })
                .collect()
        });
        let mut copies = copies;
        // The claim must still be this package's at the end (an S3 claim is a look-then-write).
        for r in self.replicas.iter().filter(|r| !claim_failed.contains_key(r.name())) {
            let holder = r.claim_holder(&pdir);
            if !matches!(&holder, Ok(Some(h)) if *h == digest) {
                let why = match holder {
                    Ok(h) => format!(
                        "the identifier's claim on this replica is no longer this package's ({})",
                        h.unwrap_or_else(|| "none".into())
                    ),
                    Err(e) => format!("the identifier's claim cannot be read back: {e}"),
                };
                for c in copies.iter_mut().filter(|c| c.replica == r.name()) {
                    c.status = CopyStatus::Failed;
                    c.message = Some(why.clone());
                }
            }
        }
        let mut failed: BTreeSet<String> = BTreeSet::new();
        {
            let mut st = self.state();
            let rows: Vec<CopyRow> = copies
                .iter()
                .map(|c| {
                    let ok = c.status != CopyStatus::Failed;
                    if !ok {
                        failed.insert(c.replica.clone());
                    }
                    CopyRow {
                        identifier: &identifier,
                        path: &c.file,
                        replica: &c.replica,
                        upload: Some(if ok { Upload::Uploaded } else { Upload::Failed }),
                        filelist: if ok { Seen::Ok } else { Seen::Unknown },
                        checksum: Some(if ok { Seen::Ok } else { Seen::Unknown }),
                        message: c.message.as_deref(),
                    }
                })
                .collect();
            st.record_copies(&rows)?;
            st.set_accepted(&identifier, failed.is_empty())?;
        }
        Ok(PutReport {
            package: identifier,
            dir: pdir,
            accepted: failed.is_empty(),
            files: files.len() as u64,
            bytes: files.iter().map(|f| f.size).sum(),
            copies,
            failed_replicas: failed.into_iter().collect(),
            requires: requires.into_iter().collect(),
            requires_missing,
        })
    }

    /// Claims `pdir` for the manifest `digest` on every replica, in the one order every process
    /// uses. Another package's claim (or, on a replica written before claims existed, another
    /// manifest) refuses the put, and the claims this call made are withdrawn: nothing was
    /// written. A replica that cannot be reached is returned with why, so its copies fail and
    /// a later put completes them.
    fn claim_all(
        &self,
        identifier: &str,
        pdir: &str,
        digest: &str,
        files: &[PackageFile],
    ) -> Result<BTreeMap<String, String>, StoreError> {
        let mut order: Vec<&dyn Replica> = self.replicas.iter().map(|r| r.as_ref()).collect();
        order.sort_by_key(|r| r.claim_order());
        let manifest = files.iter().find(|f| f.rel == MANIFEST);
        let mut created: Vec<&dyn Replica> = Vec::new();
        let mut unreachable = BTreeMap::new();
        let mut refusal = None;
        for r in order {
            let outcome = (|| {
                // Leftovers of a killed put go before this put writes beside them.
                r.clean_temporaries(pdir)?;
                if r.claim_holder(pdir)?.is_none()
                    && let Some(m) = manifest
                    && let Some(existing) = r.stat(&format!("{pdir}/{MANIFEST}"))?
                {
                    let same = existing.size == m.size
                        && match &existing.sha512 {
                            Some(s) => *s == m.sha512,
                            None => hash_copy(r, &format!("{pdir}/{MANIFEST}"))?.1 == m.sha512,
                        };
                    if !same {
                        return Ok(Err(ClaimConflict::OtherManifest));
                    }
                }
                r.claim(pdir, digest).map(|(holder, made)| {
                    if made {
                        created.push(r);
                    }
                    if holder == digest { Ok(()) } else { Err(ClaimConflict::ClaimedBy(holder)) }
                })
            })();
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(conflict)) => {
                    refusal = Some((r.name().to_string(), conflict));
                    break;
                }
                Err(e) => {
                    unreachable.insert(r.name().to_string(), format!("cannot claim: {e}"));
                }
            }
        }
        if let Some((replica, conflict)) = refusal {
            for r in created {
                let _ = r.unclaim(pdir);
            }
            return Err(Refusal::Taken {
                identifier: identifier.into(),
                replica,
                conflict,
                digest: digest.into(),
            }
            .into());
        }
        Ok(unreachable)
    }

    /// Checks every recorded package on every replica (or `only` one): which copies are
    /// missing or extra, of the wrong size, and with `deep` of the wrong SHA-512.
    pub fn check(
        &self,
        only: Option<&str>,
        deep: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<CheckReport, StoreError> {
        if let Some(name) = only {
            self.replica(name)?;
        }
        let packages = self.state().packages()?;
        let mut expected: Vec<(String, String, Vec<FileRecord>)> = Vec::new();
        for (id, dir) in packages {
            let files = self.state().package_files(&id)?.unwrap_or_default();
            expected.push((id, dir, files));
        }
        let replicas: Vec<&dyn Replica> = self
            .replicas
            .iter()
            .map(|r| r.as_ref())
            .filter(|r| only.is_none_or(|n| n == r.name()))
            .collect();
        // Listing: one task per package and replica.
        let listings: Vec<(usize, usize, Listing)> = self.pool.install(|| {
            (0..replicas.len())
                .flat_map(|r| (0..expected.len()).map(move |p| (r, p)))
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|(r, p)| {
                    let dir = &expected[p].1;
                    let l = replicas[r]
                        .clean_temporaries(dir)
                        .and_then(|gone| Ok((replicas[r].list(dir)?, gone)));
                    (r, p, l)
                })
                .collect()
        });
        let mut reports: Vec<ReplicaCheck> = replicas
            .iter()
            .map(|r| ReplicaCheck { replica: r.name().into(), ..ReplicaCheck::default() })
            .collect();
        // Copies present with the right size, to hash with --deep.
        let mut to_hash: Vec<(usize, usize, usize)> = Vec::new();
        let mut statuses: Vec<CheckedCopy> = Vec::new();
        // (package, replica) pairs some copy of which could not be read.
        let mut unreadable: BTreeSet<(String, String)> = BTreeSet::new();
        for (r, p, listing) in listings {
            let (id, dir, files) = &expected[p];
            let rep = &mut reports[r];
            let name = replicas[r].name().to_string();
            let (listed, gone) = match listing {
                Ok(l) => l,
                Err(e) => {
                    unreadable.insert((id.clone(), name));
                    rep.errors.push(format!("{dir}: {e}"));
                    continue;
                }
            };
            rep.temporaries_removed
                .extend(gone.into_iter().map(|k| format!("{k} (leftover temporary; removed)")));
            let found = compare_listing((id, dir, files), &name, listed, deep, rep, &mut statuses);
            to_hash.extend(found.into_iter().map(|k| (r, p, k)));
        }
        let hashed: Vec<(usize, usize, usize, Hashed)> = self.pool.install(|| {
            to_hash
                .par_iter()
                .map(|&(r, p, k)| {
                    let f = &expected[p].2[k];
                    let key = format!("{}/{}", expected[p].1, f.path);
                    let got = hash_copy(replicas[r], &key);
                    progress(f.size);
                    (r, p, k, got)
                })
                .collect()
        });
        for (r, p, k, got) in hashed {
            let (id, dir, files) = &expected[p];
            let f = &files[k];
            let key = format!("{dir}/{}", f.path);
            let name = replicas[r].name().to_string();
            let rep = &mut reports[r];
            match got {
                Ok((_, sha)) if sha == f.sha512 => {
                    rep.verified += 1;
                    statuses.push((
                        id.clone(),
                        f.path.clone(),
                        name,
                        Seen::Ok,
                        Some(Seen::Ok),
                        None,
                    ));
                }
                Ok((_, sha)) => {
                    let why = format!("SHA-512 {sha}; expected {}", f.sha512);
                    rep.corrupt.push(format!("{key} ({why})"));
                    statuses.push((
                        id.clone(),
                        f.path.clone(),
                        name,
                        Seen::Ok,
                        Some(Seen::Corrupt),
                        Some(why),
                    ));
                }
                Err(e) => {
                    unreadable.insert((id.clone(), name));
                    rep.errors.push(format!("{key}: {e}"));
                }
            }
        }
        let names: Vec<&str> = replicas.iter().map(|r| r.name()).collect();
        let missing_dependencies = self.missing_dependencies(&names, &statuses, unreadable)?;
        {
            let mut st = self.state();
            let rows: Vec<CopyRow> = statuses
                .iter()
                .map(|(identifier, path, replica, filelist, checksum, why)| CopyRow {
                    identifier,
                    path,
                    replica,
                    upload: None,
                    filelist: *filelist,
                    checksum: *checksum,
                    message: why.as_deref(),
                })
                .collect();
            st.record_copies(&rows)?;
        }
        let clean = missing_dependencies.is_empty()
            && reports.iter().all(|r| {
                r.missing.is_empty()
                    && r.corrupt.is_empty()
                    && r.extra.is_empty()
                    && r.errors.is_empty()
            });
        let packages = expected.len() as u64;
        Ok(CheckReport { deep, packages, replicas: reports, missing_dependencies, clean })
    }

    /// Checks (with `deep`, every checksum; else the file lists and sizes, plus a fresh hash of
    /// every copy an earlier check found corrupt), then re-establishes every missing or corrupt
    /// copy from a replica whose copy verifies.
    pub fn repair(
        &self,
        deep: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<RepairReport, StoreError> {
        // Copies an earlier deep check found corrupt stay suspects until proven otherwise.
        let mut suspects: BTreeSet<(String, String, String)> = BTreeSet::new();
        for r in &self.replicas {
            for (id, path, sum) in self.state().bad_copies(r.name())? {
                if sum == Seen::Corrupt {
                    suspects.insert((r.name().to_string(), id, path));
                }
            }
        }
        let check = self.check(None, deep, progress)?;
        // What this check found missing or corrupt, as it recorded it in the state.
        let mut bad: Vec<(String, String, String)> = Vec::new(); // (replica, identifier, path)
        for r in &self.replicas {
            for (id, path, _) in self.state().bad_copies(r.name())? {
                bad.push((r.name().to_string(), id, path));
            }
        }
        for (replica, id, path) in suspects {
            if !bad.iter().any(|b| b.0 == replica && b.1 == id && b.2 == path) {
                let dir = package_dir(&id);
                let expected = self.expected_sha(&id, &path)?;
                let copy = hash_copy(self.replica(&replica)?, &format!("{dir}/{path}"));
                if !matches!(copy, Ok((_, ref sha)) if *sha == expected) {
                    bad.push((replica, id, path));
                }
            }
        }
        let actions: Vec<CopyOutcome> = self.pool.install(|| {
            bad.par_iter()
                .map(|(replica, id, path)| {
                    let (status, message) = match self.repair_copy(replica, id, path) {
                        Ok((s, m)) => (s, Some(m)),
                        Err(e) => (CopyStatus::Unrepairable, Some(e.to_string())),
                    };
                    CopyOutcome {
                        package: id.clone(),
                        replica: replica.clone(),
                        file: path.clone(),
                        status,
                        message,
                    }
                })
                .collect()
        });
        {
            let mut st = self.state();
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
            st.record_copies(&rows)?;
        }
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

    fn expected_sha(&self, identifier: &str, path: &str) -> Result<String, StoreError> {
        self.state()
            .package_files(identifier)?
            .and_then(|fs| fs.into_iter().find(|f| f.path == path))
            .map(|f| f.sha512)
            .ok_or_else(|| not_recorded(identifier, path))
    }

    /// Re-establishes one copy from the first other replica whose copy verifies.
    fn repair_copy(
        &self,
        target: &str,
        identifier: &str,
        path: &str,
    ) -> Result<(CopyStatus, String), StoreError> {
        let files = self.state().package_files(identifier)?.unwrap_or_default();
        let f =
            files.iter().find(|f| f.path == path).ok_or_else(|| not_recorded(identifier, path))?;
        let pdir = checked_package_dir(identifier)?;
        let key = format!("{pdir}/{path}");
        let to = self.replica(target)?;
        // The package's claim is kept (or re-made) on the replica repaired: a repair never
        // writes into a directory another package claimed.
        if let Some(m) = files.iter().find(|f| f.path == MANIFEST) {
            let (holder, _) = to.claim(&pdir, &m.sha512)?;
            if holder != m.sha512 {
                return Err(
                    Refusal::ClaimedByOther { replica: target.into(), dir: pdir, holder }.into()
                );
            }
        }
        let tmp = tempfile::tempdir().map_err(StoreError::Scratch)?;
        let local = Source { root: tmp.path(), name: "copy" };
        let mut rejected = Vec::new();
        for source in self.replicas.iter().filter(|r| r.name() != target) {
            let _ = std::fs::remove_file(tmp.path().join("copy"));
            match fetch_verified(source.as_ref(), &key, local, &f.sha512) {
                Ok(()) => {
                    let (status, write) = match to.stat(&key) {
                        Ok(None) => match to.create(&key, local, f.size, &f.sha512) {
                            // A put of the package published it meanwhile: left as it is if it
                            // is the package's copy (verified below), else not overwritten.
                            Err(StoreError::Exists { .. }) => {
                                verify_copy(to, &key, &PackageFile::from(f))?;
                                return Ok((
                                    CopyStatus::Verified,
                                    "written meanwhile by another writer; verifies".into(),
                                ));
                            }
                            write => (CopyStatus::Restored, write),
                        },
                        // Only a copy proven bad is replaced: check it once more right here.
                        Ok(Some(_)) => match hash_copy(to, &key) {
                            Ok((_, sha)) if sha == f.sha512 => {
                                return Ok((
                                    CopyStatus::Verified,
                                    "the copy verifies now; left untouched".into(),
                                ));
                            }
                            _ => (CopyStatus::Replaced, to.replace(&key, local, f.size, &f.sha512)),
                        },
                        // A link or a FIFO where the copy should be: the entry itself is
                        // replaced (never followed); a directory there makes this fail.
                        Err(_) => {
                            (CopyStatus::Replaced, to.replace(&key, local, f.size, &f.sha512))
                        }
                    };
                    write?;
                    verify_copy(to, &key, &PackageFile::from(f))?;
                    return Ok((status, format!("from replica {}", source.name())));
                }
                Err(e) => rejected.push((source.name().to_string(), e)),
            }
        }
        Err(Refusal::NoGoodCopy { rejected: Rejections(rejected) }.into())
    }

    /// Fetches a package (or one `file` of it) into `to`, verifying every file against the
    /// recorded SHA-512 and taking each from the first replica whose copy verifies. Every name
    /// stays inside `to` (created there without following links), and no file already there
    /// is replaced. Everything is fetched and verified in a hidden, locked `.webaip-get-*`
    /// directory inside `to` first, and appears under its names (by links that fail when a
    /// name exists; the METS and the manifest last) only once all of it verified: a get that
    /// fails leaves nothing in `to` that looks like a package, and one killed leaves only its
    /// hidden directory, which the next get into `to` removes.
    pub fn get(
        &self,
        identifier: &str,
        file: Option<&str>,
        to: &Path,
    ) -> Result<Vec<CopyOutcome>, StoreError> {
        let files = self
            .state()
            .package_files(identifier)?
            .ok_or_else(|| Refusal::NotInState(identifier.into()))?;
        let wanted: Vec<&FileRecord> =
            files.iter().filter(|f| file.is_none_or(|w| w == f.path)).collect();
        if wanted.is_empty() {
            return Err(Refusal::NoSuchFile {
                identifier: identifier.into(),
                file: file.map(str::to_string),
            }
            .into());
        }
        let dir = checked_package_dir(identifier)?;
        let mut names = Vec::new();
        for f in &wanted {
            let name = crate::layout::confined_name(&f.path).map_err(|reason| {
                Refusal::UnsafeRecordedName {
                    identifier: identifier.into(),
                    file: f.path.clone(),
                    reason,
                    to: to.into(),
                }
            })?;
            names.push(name);
        }
        let made_to = std::fs::symlink_metadata(to).is_err();
        std::fs::create_dir_all(to)
            .map_err(|source| StoreError::Destination { path: to.into(), source })?;
        let there: Vec<&String> =
            names.iter().filter(|n| std::fs::symlink_metadata(to.join(n)).is_ok()).collect();
        if !there.is_empty() {
            let names = there.into_iter().cloned().collect();
            return Err(Refusal::AlreadyThere { to: to.into(), names }.into());
        }
        let staging = get::Staging::new(to)?;
        let fetched: Vec<Result<CopyOutcome, StoreError>> = self.pool.install(|| {
            wanted
                .par_iter()
                .zip(names.par_iter())
                .map(|(f, name)| self.fetch_into(identifier, &dir, f, name, staging.path()))
                .collect()
        });
        let out = fetched
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .and_then(|outcomes| staging.publish(&names, to).map(|()| outcomes));
        drop(staging);
        if out.is_err() && made_to {
            let _ = std::fs::remove_dir(to); // only when empty: what we made, nothing else
        }
        out
    }

    /// Fetches from the store every package the package in `dir` requires (its METS's
    /// `dependency` / `requires` OBJIDs) into folders below `into`, each checked against its
    /// recorded digests as `get` does: (OBJID, its folder or why it could not be fetched).
    /// What `audit --store` follows revisits into.
    pub fn fetch_required(&self, dir: &Path, into: &Path) -> Result<Vec<Fetched>, StoreError> {
        let refuse = |problem: PackageProblem| -> StoreError {
            Refusal::Package { dir: dir.into(), problem }.into()
        };
        let file = crate::layout::open_in(dir, METS).map_err(|e| refuse(e.into()))?;
        let requires = deps::mets_dependencies(MetsReader::strict(io::BufReader::new(file)))
            .map_err(|e| {
                refuse(PackageProblem::Mets { path: dir.join(METS), problem: e.into() })
            })?;
        let mut out = Vec::new();
        for (n, objid) in requires.into_iter().enumerate() {
            // Numbered folders: an OBJID is no file name.
            let to = into.join(format!("required-{:04}", n + 1));
            let got = self.get(&objid, None, &to).map(|_| to);
            out.push((objid, got));
        }
        Ok(out)
    }

    /// Writes bytes `offset..offset + len` of file `name` of package `identifier` to `to`
    /// (truncated first), from the first replica that has them all: a ranged read, nothing
    /// else of the file is fetched. The file's own checksum cannot be verified on a part of
    /// it: the caller checks what the bytes are (`index::get` parses and verifies the record).
    pub fn read_range(
        &self,
        identifier: &str,
        name: &str,
        offset: u64,
        len: u64,
        to: &mut std::fs::File,
    ) -> Result<(), StoreError> {
        use std::io::{Seek, Write};
        let dir = checked_package_dir(identifier)?;
        let name =
            crate::layout::confined_name(name).map_err(|reason| Refusal::UnsafeRecordedName {
                identifier: identifier.into(),
                file: name.into(),
                reason,
                to: dir.clone().into(),
            })?;
        let key = format!("{dir}/{name}");
        let mut rejected = Vec::new();
        for r in &self.replicas {
            let reset = to.set_len(0).and_then(|()| to.rewind());
            reset.map_err(|source| StoreError::Destination {
                path: std::path::PathBuf::new(),
                source,
            })?;
            let got =
                r.read_range(&key, offset..offset.saturating_add(len), &mut |b| to.write_all(b));
            match got {
                Ok(n) if n == len => return Ok(()),
                Ok(n) => rejected.push((
                    r.name().to_string(),
                    StoreError::Replica {
                        replica: r.name().into(),
                        key: key.clone(),
                        source: Box::new(CopyFailure::Size { expected: len, found: n }),
                    },
                )),
                Err(e) => rejected.push((r.name().to_string(), e)),
            }
        }
        Err(Refusal::NoGoodCopy { rejected: Rejections(rejected) }.into())
    }

    /// Fetches one file of a package to `name` below `staging` from the first replica whose
    /// copy verifies.
    fn fetch_into(
        &self,
        identifier: &str,
        dir: &str,
        f: &FileRecord,
        name: &str,
        staging: &Path,
    ) -> Result<CopyOutcome, StoreError> {
        let key = format!("{dir}/{}", f.path);
        let mut rejected = Vec::new();
        for r in &self.replicas {
            match fetch_verified(r.as_ref(), &key, Source { root: staging, name }, &f.sha512) {
                Ok(()) => {
                    return Ok(CopyOutcome {
                        package: identifier.to_string(),
                        replica: r.name().into(),
                        file: f.path.clone(),
                        status: CopyStatus::Verified,
                        message: (!rejected.is_empty())
                            .then(|| format!("rejected: {}", Rejections(rejected))),
                    });
                }
                Err(e) => rejected.push((r.name().to_string(), e)),
            }
        }
        Err(Refusal::NoGoodCopyToFetch {
            file: f.path.clone(),
            rejected: Rejections(rejected),
            to: staging.parent().unwrap_or(staging).into(),
        }
        .into())
    }

    /// Recreates the state database's records from what the replicas hold: every package
    /// directory, its manifest (the copy most replicas agree on) and which copies are there.
    /// A package directory whose name is not one this layout makes, or whose manifest has a
    /// line that is malformed or leaves the package, is not recorded: it is listed as refused.
    pub fn rebuild_state(&self) -> Result<RebuildReport, StoreError> {
        let mut dirs: BTreeSet<String> = BTreeSet::new();
        for r in &self.replicas {
            dirs.extend(r.packages()?);
        }
        let mut report = RebuildReport::default();
        for dir in dirs {
            // Only a name that maps back to itself: the identifier's directory is then one
            // safe segment, whatever the identifier holds.
            let Some(identifier) = dir.split_once('/').and_then(|(_, n)| unsafe_name(n)) else {
                continue;
            };
            if checked_package_dir(&identifier).ok().as_deref() != Some(dir.as_str()) {
                continue; // not a package directory of this layout
            }
            // The manifest most replicas hold (byte-identical).
            let mut manifests: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
            for r in &self.replicas {
                let mut bytes = Vec::new();
                let got = r.read(&format!("{dir}/{MANIFEST}"), &mut |c| {
                    if bytes.len() + c.len() > MAX_MANIFEST {
                        return Err(io::Error::other(
                            "the manifest is larger than the store reads",
                        ));
                    }
                    bytes.extend_from_slice(c);
                    Ok(())
                });
                if got.is_ok() {
                    *manifests.entry(bytes).or_default() += 1;
                }
            }
            let Some((manifest, _)) = manifests.into_iter().max_by_key(|(_, n)| *n) else {
                continue;
            };
            let mut listings = Vec::new();
            for r in &self.replicas {
                let l: BTreeMap<String, u64> = r
                    .list(&dir)
                    .map(|v| {
                        v.into_iter()
                            .filter(|o| o.problem.is_none())
                            .map(|o| (o.key, o.size))
                            .collect()
                    })
                    .unwrap_or_default();
                listings.push((r.name().to_string(), l));
            }
            let mut records = vec![FileRecord {
                path: MANIFEST.into(),
                size: manifest.len() as u64,
                sha512: hex(&Sha512::digest(&manifest)),
            }];
            let lines = match manifest_names(io::Cursor::new(&manifest[..]), MANIFEST) {
                Ok(l) => l,
                Err(why) => {
                    report.refused.push(format!("{dir}: {why}"));
                    continue;
                }
            };
            for (rel, sum) in lines {
                let key = format!("{dir}/{rel}");
                // The size most replicas list.
                let mut sizes: BTreeMap<u64, usize> = BTreeMap::new();
                for (_, l) in &listings {
                    if let Some(&s) = l.get(&key) {
                        *sizes.entry(s).or_default() += 1;
                    }
                }
                let size = sizes.into_iter().max_by_key(|(_, n)| *n).map(|(s, _)| s).unwrap_or(0);
                records.push(FileRecord { path: rel, size, sha512: sum });
            }
            records.sort_by(|a, b| a.path.cmp(&b.path));
            let mut st = self.state();
            st.record_package(&identifier, &dir, &records)?;
            let mut complete = true;
            let mut rows = Vec::new();
            for f in &records {
                for (name, l) in &listings {
                    let present = l.get(&format!("{dir}/{}", f.path)) == Some(&f.size);
                    complete &= present;
                    rows.push(CopyRow {
                        identifier: &identifier,
                        path: &f.path,
                        replica: name,
                        upload: None,
                        filelist: if present { Seen::Ok } else { Seen::Missing },
                        checksum: Some(Seen::Unknown),
                        message: None,
                    });
                }
            }
            st.record_copies(&rows)?;
            drop(st);
            match self.stored_dependencies(&dir) {
                Ok(requires) => self.state().record_dependencies(&identifier, &requires)?,
                Err(why) => {
                    report.refused.push(format!("{dir}/{METS}: dependencies not read: {why}"))
                }
            }
            let mut st = self.state();
            // Accepted again only when every replica lists every file at its size.
            st.set_accepted(&identifier, complete)?;
            report.packages.push(identifier);
        }
        Ok(report)
    }

    /// The recorded dependencies the store does not hold whole: the package required is not
    /// recorded, or every replica checked misses, holds corrupt, or cannot read some copy of it.
    fn missing_dependencies(
        &self,
        replicas: &[&str],
        statuses: &[CheckedCopy],
        mut bad: BTreeSet<(String, String)>,
    ) -> Result<Vec<MissingDependency>, StoreError> {
        for (id, _, replica, filelist, checksum, _) in statuses {
            if *filelist != Seen::Ok || *checksum == Some(Seen::Corrupt) {
                bad.insert((id.clone(), replica.clone()));
            }
        }
        let st = self.state();
        let mut out = Vec::new();
        for (package, requires) in st.dependencies()? {
            let why = if st.package_files(&requires)?.is_none() {
                "not in the store"
            } else if replicas.iter().all(|r| bad.contains(&(requires.clone(), r.to_string()))) {
                "no replica holds it whole (see the copies found missing, corrupt or unreadable)"
            } else {
                continue;
            };
            out.push(MissingDependency { package, requires, why: why.into() });
        }
        Ok(out)
    }

    /// Removes a package from every replica and then from the state: refused while another
    /// stored package requires it. The manifest goes first (a replica stopped part-way then
    /// holds no package `rebuild-state` would take for complete), the claim last. A replica
    /// that fails is reported with what it did delete; the state keeps the package until
    /// every replica is done, so `check` shows what is left and a second `remove` finishes.
    /// With `dry_run`, nothing is deleted: the report lists what would be.
    pub fn remove(&self, identifier: &str, dry_run: bool) -> Result<RemoveReport, StoreError> {
        let files = self
            .state()
            .package_files(identifier)?
            .ok_or_else(|| Refusal::NotInState(identifier.into()))?;
        let dependents = self.state().dependents(identifier)?;
        if !dependents.is_empty() {
            return Err(Refusal::Required { identifier: identifier.into(), dependents }.into());
        }
        let dir = checked_package_dir(identifier)?;
        let mut reports = Vec::new();
        for r in &self.replicas {
            let mut rep = ReplicaRemoval { replica: r.name().into(), ..Default::default() };
            let outcome = (|| -> Result<(), StoreError> {
                // Everything in the package's directory is the package's (it holds the claim).
                let mut keys: Vec<String> = r.list(&dir)?.into_iter().map(|o| o.key).collect();
                let manifest = format!("{dir}/{MANIFEST}");
                keys.sort_by_key(|k| (*k != manifest, k.clone()));
                for k in keys {
                    if !dry_run {
                        r.delete(&k)?;
                    }
                    rep.deleted.push(k);
                }
                if !dry_run && files.iter().any(|f| f.path == MANIFEST) {
                    r.unclaim(&dir)?;
                    r.remove_empty_dirs(&dir)?;
                }
                Ok(())
            })();
            if let Err(e) = outcome {
                rep.error = Some(e.to_string());
            }
            reports.push(rep);
        }
        let complete = reports.iter().all(|r| r.error.is_none());
        if complete && !dry_run {
            self.state().forget_package(identifier)?;
        }
        Ok(RemoveReport {
            package: identifier.into(),
            dir,
            dry_run,
            replicas: reports,
            removed: complete && !dry_run,
        })
    }

    /// When the package was accepted (`None`: never, or not since its last failed put).
    pub fn accepted_at(&self, identifier: &str) -> Result<Option<String>, StoreError> {
        self.state().accepted_at(identifier)
    }
}

impl Store {
    /// The OBJIDs the stored METS of the package in `dir` requires, from the first replica
    /// that can give its METS: spooled to an anonymous temporary file, read as a stream.
    fn stored_dependencies(&self, dir: &str) -> Result<BTreeSet<String>, StoreError> {
        use std::io::{Seek, Write};
        let key = format!("{dir}/{METS}");
        let mut rejected = Vec::new();
        for r in &self.replicas {
            let mut file = tempfile::tempfile().map_err(StoreError::Scratch)?;
            let got = r.read(&key, &mut |b| file.write_all(b));
            if let Err(e) = got {
                rejected.push((r.name().to_string(), e));
                continue;
            }
            file.rewind().map_err(StoreError::Scratch)?;
            let reader = MetsReader::strict(io::BufReader::new(file));
            match deps::mets_dependencies(reader) {
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
        Err(Refusal::NoGoodCopy { rejected: Rejections(rejected) }.into())
    }
}

/// The replica a configuration entry describes.
fn open_replica(r: &ReplicaConfig) -> Result<Box<dyn Replica>, StoreError> {
    match &r.kind {
        ReplicaKind::Fs { root } => Ok(Box::new(FsReplica::new(&r.name, root))),
        #[cfg(feature = "s3")]
        ReplicaKind::S3 { endpoints, bucket, region, access_key_env, secret_key_env, prefix } => {
            let bucket =
                s3::Bucket { endpoints, bucket, region, access_key_env, secret_key_env, prefix };
            Ok(Box::new(s3::S3Replica::new(&r.name, &bucket)?))
        }
        #[cfg(not(feature = "s3"))]
        ReplicaKind::S3 { .. } => Err(StoreError::NoS3Support(r.name.clone())),
    }
}

/// Puts one copy: a no-op when the same content is there, a refusal when other content is,
/// else an upload that is then verified. Returns `uploaded` or `present`.
fn put_copy(
    r: &dyn Replica,
    key: &str,
    source: Source,
    f: &PackageFile,
) -> Result<CopyStatus, StoreError> {
    let other = || -> StoreError {
        Refusal::OtherContent { replica: r.name().into(), key: key.into() }.into()
    };
    match holds_copy(r, key, f)? {
        Some(true) => return Ok(CopyStatus::Present),
        Some(false) => return Err(other()),
        None => {}
    }
    match r.create(key, source, f.size, &f.sha512) {
        Ok(()) => {}
        // Another writer (a repair, a put of the same package) published it meanwhile: an
        // identical copy is as good as ours.
        Err(StoreError::Exists { .. }) => {
            return match holds_copy(r, key, f)? {
                Some(true) => Ok(CopyStatus::Present),
                _ => Err(other()),
            };
        }
        Err(e) => return Err(e),
    }
    verify_copy(r, key, f)?;
    Ok(CopyStatus::Uploaded)
}

/// Whether `key` holds `f`'s bytes (`None`: nothing there): the recorded size and SHA-512 of
/// an object, a file's read back.
fn holds_copy(r: &dyn Replica, key: &str, f: &PackageFile) -> Result<Option<bool>, StoreError> {
    let Some(existing) = r.stat(key)? else { return Ok(None) };
    Ok(Some(
        existing.size == f.size
            && match &existing.sha512 {
                Some(s) => *s == f.sha512,
                None => hash_copy(r, key)?.1 == f.sha512,
            },
    ))
}

/// Verifies a copy just written: an object store by HEAD (its upload was checksummed by the
/// server; the size and the SHA-512 recorded with it must be the package's), a file system by
/// reading it back.
fn verify_copy(r: &dyn Replica, key: &str, f: &PackageFile) -> Result<(), StoreError> {
    let fail = |source| StoreError::Replica {
        replica: r.name().into(),
        key: key.into(),
        source: Box::new(source),
    };
    let Some(s) = r.stat(key)? else {
        return Err(fail(CopyFailure::AbsentAfterWrite));
    };
    if s.size != f.size {
        return Err(fail(CopyFailure::Size { found: s.size, expected: f.size }));
    }
    let sha = match s.sha512 {
        Some(sha) => sha,
        None => hash_copy(r, key)?.1,
    };
    if sha != f.sha512 {
        return Err(fail(CopyFailure::Digest { found: sha, expected: f.sha512.clone() }));
    }
    Ok(())
}

impl From<&FileRecord> for PackageFile {
    fn from(f: &FileRecord) -> Self {
        PackageFile { rel: f.path.clone(), size: f.size, sha512: f.sha512.clone() }
    }
}

/// Reads a copy through SHA-512: (length, hex digest).
fn hash_copy(r: &dyn Replica, key: &str) -> Result<(u64, String), StoreError> {
    let mut h = Sha512::new();
    let n = r.read(key, &mut |c| {
        h.update(c);
        Ok(())
    })?;
    Ok((n, hex(&h.finalize())))
}

/// Fetches a copy to `local` (created below its root, never over an existing file) and keeps
/// it only if its SHA-512 is `sha512`.
fn fetch_verified(
    r: &dyn Replica,
    key: &str,
    local: Source,
    sha512: &str,
) -> Result<(), StoreError> {
    let fail = |source| StoreError::Replica {
        replica: r.name().into(),
        key: key.into(),
        source: Box::new(source),
    };
    let file = crate::layout::create_in(local.root, local.name)
        .map_err(|e| fail(CopyFailure::Confine(e)))?;
    let path = local.root.join(local.name);
    let mut out = HashingFile::new(file);
    let got = r.read(key, &mut |c| out.write(c)).and_then(|_| {
        out.finish().map_err(|source| fail(CopyFailure::Local { path: path.clone(), source }))
    });
    match got {
        Ok((_, sha)) if sha == sha512 => Ok(()),
        Ok((_, sha)) => {
            let _ = std::fs::remove_file(&path);
            Err(fail(CopyFailure::Digest { found: sha, expected: sha512.into() }))
        }
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            Err(e)
        }
    }
}

fn not_recorded(identifier: &str, path: &str) -> StoreError {
    Refusal::NotRecorded { identifier: identifier.into(), path: path.into() }.into()
}

impl From<IdentifierProblem> for StoreError {
    fn from(p: IdentifierProblem) -> Self {
        Refusal::Identifier(p).into()
    }
}

/// The result of `store rebuild-state`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RebuildReport {
    /// Packages recorded.
    pub packages: Vec<String>,
    /// Package directories not recorded, and why.
    pub refused: Vec<String>,
}

/// Longest manifest the store reads back from a replica.
const MAX_MANIFEST: usize = 256 << 20;
/// Longest package directory name (a file name: most file systems stop at 255 bytes).
const MAX_DIR_NAME: usize = 255;

/// The directory of a package, for an identifier that can have one: not empty, and short
/// enough that its escaped form is one file name.
pub(crate) fn checked_package_dir(identifier: &str) -> Result<String, IdentifierProblem> {
    if identifier.is_empty() {
        return Err(IdentifierProblem::Empty);
    }
    let dir = package_dir(identifier);
    let name = dir.split_once('/').map(|(_, n)| n).unwrap_or_default();
    if name.len() > MAX_DIR_NAME {
        return Err(IdentifierProblem::TooLong(name.len()));
    }
    // safe_name makes one segment that is neither "." nor ".."; checked here once more, by
    // the function that decides confinement.
    if crate::layout::confined_name(&dir).ok().as_deref() != Some(dir.as_str())
        || name.starts_with('.')
    {
        return Err(IdentifierProblem::Unsafe(identifier.into()));
    }
    Ok(dir)
}

/// The root element's `OBJID`, read through the strict METS reader (a DOCTYPE, an entity
/// reference or a NUL before it refuses the document).
fn read_identifier(file: std::fs::File) -> Result<String, MetsProblem> {
    let root = read_root(MetsReader::strict(io::BufReader::new(file)))?;
    root.ok_or(MetsProblem::NoRoot)?
        .objid
        .filter(|v| !v.trim().is_empty())
        .ok_or(MetsProblem::NoIdentifier)
}

/// The names the METS lists (every `FLocat`'s `xlink:href`), as confined names; hrefs that
/// leave the package are left out (no manifest line can then name them). Strict: what the
/// METS reader refuses refuses the package.
fn mets_names(file: std::fs::File) -> Result<BTreeSet<String>, MetsProblem> {
    let reader = MetsReader::strict(io::BufReader::new(file));
    let listing = read_listing(reader, Nested::Skip)?;
    let hrefs = listing.files.iter().filter_map(|f| f.href.as_deref());
    let hrefs = hrefs.chain(listing.other_hrefs.iter().map(String::as_str));
    Ok(hrefs.filter_map(|h| crate::layout::confined_name(h).ok()).collect())
}

/// Reads a manifest: (confined name, SHA-512) per line, or why it cannot be stored (a line
/// malformed or leaving the package, named with its byte offset; a name twice; the manifest
/// naming itself).
fn manifest_names<R: io::BufRead>(
    input: R,
    shown: &str,
) -> Result<Vec<(String, String)>, ManifestError> {
    let fault = |fault| ManifestError { manifest: shown.into(), fault };
    let mut out: Vec<(String, String)> = Vec::new();
    let mut seen = BTreeSet::new();
    for line in crate::layout::ManifestReader::new(input) {
        let line = line.map_err(|e| fault(ManifestFault::Io(e)))?;
        let line = line.map_err(|m| {
            fault(ManifestFault::Malformed { offset: m.offset, text: m.text, reason: m.reason })
        })?;
        let (offset, listed) = (line.offset, line.name);
        let name = line
            .confined
            .map_err(|reason| fault(ManifestFault::Leaves { offset, name: listed, reason }))?;
        if name == MANIFEST {
            return Err(fault(ManifestFault::NamesItself { offset }));
        }
        if !seen.insert(name.clone()) {
            return Err(fault(ManifestFault::Twice { name, offset }));
        }
        out.push((name, line.sha512));
    }
    Ok(out)
}

/// A required package fetched (`Store::fetch_required`): its OBJID, and its folder or why the
/// store could not give it.
pub type Fetched = (String, Result<PathBuf, StoreError>);

/// A package as `put` read it.
struct ReadPackage {
    identifier: String,
    files: Vec<PackageFile>,
    /// The manifest's SHA-512.
    digest: String,
    /// The OBJIDs the METS says it requires.
    requires: BTreeSet<String>,
}

/// A reader that hashes and counts what passes through it.
struct Hashing<'a, R> {
    inner: R,
    hasher: &'a mut Sha512,
    len: &'a mut u64,
}

impl<R: io::Read> io::Read for Hashing<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        *self.len += n as u64;
        Ok(n)
    }
}

/// Reads a package for `put`, refusing it before anything is written when: anything in it is
/// not a directory or a regular file (a link, a FIFO, a device), a manifest line is malformed,
/// leaves the package or names a file the METS does not list (besides `METS.xml`), or the
/// METS has no usable identifier. Returns the identifier, the files (manifest included) and
/// the manifest's SHA-512 and the OBJIDs the METS says the package requires.
fn read_package(dir: &Path) -> Result<ReadPackage, StoreError> {
    let refuse = |problem: PackageProblem| -> StoreError {
        Refusal::Package { dir: dir.into(), problem }.into()
    };
    for e in walkdir::WalkDir::new(dir).follow_links(false).follow_root_links(false).min_depth(1) {
        let e = e.map_err(|e| refuse(e.into()))?;
        let t = e.file_type();
        if !t.is_file() && !t.is_dir() {
            let kind =
                e.metadata().map(|m| crate::layout::kind_of(&m)).unwrap_or("not a regular file");
            return Err(refuse(PackageProblem::NotRegular { path: e.into_path(), kind }));
        }
    }
    let open = |name: &str| crate::layout::open_in(dir, name).map_err(|e| refuse(e.into()));
    let mets = |problem| refuse(PackageProblem::Mets { path: dir.join(METS), problem });
    let identifier = read_identifier(open(METS)?).map_err(mets)?;
    checked_package_dir(&identifier).map_err(|e| refuse(e.into()))?;
    let listed = mets_names(open(METS)?).map_err(mets)?;
    let requires = deps::mets_dependencies(MetsReader::strict(io::BufReader::new(open(METS)?)))
        .map_err(|e| mets(e.into()))?;
    let mut hasher = Sha512::new();
    let mut len = 0u64;
    let shown = dir.join(MANIFEST).display().to_string();
    let lines = {
        let input = Hashing { inner: open(MANIFEST)?, hasher: &mut hasher, len: &mut len };
        manifest_names(io::BufReader::new(input), &shown).map_err(|e| refuse(e.into()))?
    };
    let digest = hex(&hasher.finalize());
    let mut files = vec![PackageFile { rel: MANIFEST.into(), size: len, sha512: digest.clone() }];
    for (rel, sum) in lines {
        if rel != METS && !listed.contains(&rel) {
            return Err(refuse(PackageProblem::Unlisted { manifest: shown, name: rel }));
        }
        let size = crate::layout::metadata_in(dir, &rel).map_err(|e| refuse(e.into()))?.len();
        files.push(PackageFile { rel, size, sha512: sum });
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(ReadPackage { identifier, files, digest, requires })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_map_to_one_safe_segment_and_back() {
        for id in ["..", ".", "../../etc", "/etc/passwd", "a/../../b", "a\0b", "-", "_", "x\u{e9}"]
        {
            let dir = checked_package_dir(id).unwrap();
            let (_, name) = dir.split_once('/').unwrap();
            assert!(!name.is_empty() && !name.contains('/') && !name.starts_with('.'), "{name}");
            assert_eq!(crate::layout::confined_name(&dir).as_deref(), Ok(dir.as_str()));
            assert_eq!(unsafe_name(name).as_deref(), Some(id));
        }
        assert!(checked_package_dir("").is_err());
        assert!(checked_package_dir(&"x".repeat(300)).is_err());
        assert!(checked_package_dir(&"/".repeat(100)).is_err()); // 300 bytes escaped
        // rebuild-state accepts a directory only when it is the identifier's own: names that
        // decode to a hostile identifier but are not its escaped form are passed over.
        let accepted = |name: &str| {
            unsafe_name(name)
                .and_then(|id| checked_package_dir(&id).ok())
                .is_some_and(|d| d.split_once('/').map(|(_, n)| n) == Some(name))
        };
        assert!(!accepted("_2E_2E") && !accepted("") && !accepted("_2"));
        assert!(accepted("_2F") && accepted("_2E."));
        assert_ne!(package_dir("..").split_once('/').map(|(_, n)| n), Some(".."));
    }

    /// Each manifest fault is a variant carrying the byte offset of its line.
    #[test]
    fn manifest_faults_carry_the_line_offset() {
        let sum = "ab".repeat(64);
        let faults = |text: &str| {
            manifest_names(io::Cursor::new(text.as_bytes()), "m.txt").map(|_| ()).unwrap_err()
        };
        let first = format!("{sum}  content/a.warc.gz\n");
        let at = first.len() as u64;
        let err = faults(&format!("{first}{sum}  ../x\n"));
        assert_eq!(err.manifest, "m.txt");
        assert!(matches!(
            err.fault,
            ManifestFault::Leaves { offset, ref name, reason: crate::layout::NameError::ParentDir }
                if offset == at && name == "../x"
        ));
        let err = faults(&format!("{first}{first}"));
        assert!(matches!(err.fault, ManifestFault::Twice { offset, .. } if offset == at));
        let err = faults(&format!("{first}{sum}  {MANIFEST}\n"));
        assert!(matches!(err.fault, ManifestFault::NamesItself { offset } if offset == at));
        let err = faults(&format!("{first}no checksum here\n"));
        assert!(matches!(err.fault, ManifestFault::Malformed { offset, .. } if offset == at));
        assert!(err.to_string().starts_with(&format!("m.txt: the line at byte {at} ")), "{err}");
    }

    /// A METS file in a temporary directory.
    fn mets_file(text: &str) -> (tempfile::TempDir, std::fs::File) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(METS), text).unwrap();
        let f = std::fs::File::open(dir.path().join(METS)).unwrap();
        (dir, f)
    }

    #[test]
    fn the_mets_is_read_by_namespace_and_refused_when_it_holds_a_doctype() {
        let doc = r#"<m:mets xmlns:m="http://www.loc.gov/METS/" xmlns:l="http://www.w3.org/1999/xlink" OBJID="pkg-1">
<m:fileSec><m:fileGrp USE="Content"><m:file ID="F1"><m:FLocat l:href="content/a.warc.gz"/></m:file>
<m:file ID="F2"><m:FLocat l:href="../outside.warc.gz"/></m:file>
<m:file ID="F3"><m:FLocat href="content/no-xlink.warc.gz"/></m:file>
<other:FLocat xmlns:other="urn:x" l:href="content/not-mets.warc.gz"/></m:fileGrp></m:fileSec></m:mets>"#;
        let (_d, f) = mets_file(doc);
        assert_eq!(read_identifier(f).unwrap(), "pkg-1");
        let (_d, f) = mets_file(doc);
        let names: Vec<String> = mets_names(f).unwrap().into_iter().collect();
        assert_eq!(names, ["content/a.warc.gz"]);
        let hostile = format!("<?xml version=\"1.0\"?>\n<!DOCTYPE m [<!ENTITY x \"y\">]>\n{doc}");
        let (_d, f) = mets_file(&hostile);
        let err = read_identifier(f).unwrap_err();
        use crate::mets::reader::{MetsError, Refusal as Refused};
        assert!(
            matches!(&err, MetsProblem::Read(MetsError::Refused { pos, refusal: Refused::Doctype })
                if (pos.line, pos.offset) == (2, 22)),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(err.starts_with("line 2 (byte 22): a document type declaration"), "{err}");
        let (_d, f) = mets_file(&doc.replace("</m:fileSec>", "</m:fileSec>\n<m:x>\0</m:x>"));
        let err = mets_names(f).unwrap_err();
        assert!(
            matches!(&err, MetsProblem::Read(MetsError::Refused { pos, refusal: Refused::Nul })
                if pos.line == 6),
            "{err:?}"
        );
        assert!(err.to_string().contains("NUL"), "{err}");
        let (_d, f) = mets_file(&doc[..doc.len() - 10]);
        let err = mets_names(f).unwrap_err();
        assert!(matches!(err, MetsProblem::Read(MetsError::Xml { .. })), "{err:?}");
        assert!(err.to_string().contains("not well-formed XML"));
        let (_d, f) = mets_file(&doc.replace(" OBJID=\"pkg-1\"", ""));
        assert!(matches!(read_identifier(f), Err(MetsProblem::NoIdentifier)));
    }
}
