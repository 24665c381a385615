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

mod check;
pub mod config;
pub(crate) mod deps;
pub(crate) mod error;
pub(crate) mod fixity;
mod get;
pub(crate) mod ocfl;
mod put;
pub(crate) mod rebuild;
mod repair;
pub(crate) mod replica;
#[cfg(feature = "s3")]
pub(crate) mod s3;
pub(crate) mod schedule;
pub(crate) mod state;
mod verify;

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::formats::digest::Sha512;
use rayon::prelude::*;
use serde::Serialize;

use crate::formats::digest::hex;
use crate::layout::{MANIFEST, METS};
use crate::mets::listing::{Nested, read_listing, read_root};
use crate::mets::reader::MetsReader;
use config::{ReplicaConfig, ReplicaKind, StoreConfig, package_dir};
pub use error::{
    ClaimConflict, ConfigProblem, CopyFailure, IdentifierProblem, KeyProblem, ManifestError,
    ManifestFault, MetsProblem, Overlap, PackageProblem, Rejections, StoreError, StoreRefusal,
};
pub use fixity::{
    CheckRun, CheckSchedule, CheckedRun, Detection, SampleOdds, SampleSize, SampleSizeError,
    Selection, Verdict as CheckVerdict, detection_probability,
};
pub use ocfl::{
    Adopted, FindingKind, InventoryFault, MigrateRefused, MigrateReport, MigratedPackage,
    ObjectLog, ObjectOnReplica, ObjectRepair, OcflCheckReport, OcflFinding, OcflRepairReport,
    Provenance, VersionEntry,
};
use replica::{FsReplica, HashingFile, Replica, Source};
pub use state::SeenSummary;
use state::{FileRecord, StateDb};
pub use verify::{PutOptions, PutVerification};

/// The store: its replicas and state.
pub struct Store {
    replicas: Vec<Box<dyn Replica>>,
    state: Mutex<StateDb>,
    pool: rayon::ThreadPool,
    /// When every replica is an OCFL storage root: each one's root and work directory, in
    /// the replicas' order.
    ocfl: Option<Vec<ocfl::root::OcflRoot>>,
    /// Who OCFL versions name as their user.
    user: config::VersionUser,
    /// The state database's path (its check lock is beside it).
    state_path: PathBuf,
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
    /// OCFL replicas: the object's head after the put (`None` in the other layout).
    pub version: Option<String>,
    /// OCFL replicas: the id of the object that keeps the package: its own OBJID, or the
    /// OBJID of the submission an AIP was made from (`None` in the other layout).
    pub object: Option<String>,
    /// What was verified of the package before it was stored.
    pub verified: PutVerification,
}

/// The result of `store check` for one replica.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
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
    /// OCFL replicas: the packages kept in the object (AIPs kept as versions of their
    /// submission's object), removed with it (left out of the JSON when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
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
        let resolved;
        let config = if config.replicas.iter().any(|r| r.layout.is_none()) {
            let mut c = config.clone();
            c.resolve_layouts()?;
            resolved = c;
            &resolved
        } else {
            config
        };
        let replicas = config.replicas.iter().map(open_replica).collect::<Result<Vec<_>, _>>()?;
        let state = StateDb::open(&config.state)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.transfers)
            .thread_name(|i| format!("webaip-transfer-{i}"))
            .build()
            .map_err(StoreError::Transfers)?;
        let ocfl = ocfl_roots(config);
        let (user, state_path) = (config.user.clone(), config.state.clone());
        Ok(Store { replicas, state: Mutex::new(state), pool, ocfl, user, state_path })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, StateDb> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn replica(&self, name: &str) -> Result<&dyn Replica, StoreError> {
        self.replicas
            .iter()
            .find(|r| r.name() == name)
            .map(|r| r.as_ref())
            .ok_or_else(|| StoreError::NoSuchReplica(name.into()))
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
        if self.ocfl.is_some() {
            return self.ocfl_get(identifier, file, None, to);
        }
        let Some(files) = self.state().package_files(identifier)? else {
            // Moved to an OCFL object by `store migrate` (still under way): read from there.
            if self.anchors(Some(identifier))?.of(&ocfl::layout::object_path(identifier)).is_some()
            {
                return self.ocfl_get(identifier, file, None, to);
            }
            return Err(StoreRefusal::NotInState(identifier.into()).into());
        };
        let wanted: Vec<&FileRecord> =
            files.iter().filter(|f| file.is_none_or(|w| w == f.path)).collect();
        if wanted.is_empty() {
            return Err(StoreRefusal::NoSuchFile {
                identifier: identifier.into(),
                file: file.map(str::to_string),
            }
            .into());
        }
        let dir = checked_package_dir(identifier)?;
        let names = wanted
            .iter()
            .map(|f| confined_in(identifier, &f.path, to))
            .collect::<Result<Vec<_>, _>>()?;
        let made_to = destination_free(to, &names)?;
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
            StoreRefusal::Package { dir: dir.into(), problem }.into()
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
    /// On OCFL replicas the file is the package's logical path in the version holding it.
    pub fn read_range(
        &self,
        identifier: &str,
        name: &str,
        offset: u64,
        len: u64,
        to: &mut std::fs::File,
    ) -> Result<(), StoreError> {
        // Where the package is: its object on OCFL replicas, its directory in the webaip layout.
        let dir = match self.ocfl {
            Some(_) => ocfl::layout::object_path(identifier),
            None => checked_package_dir(identifier)?,
        };
        let name = crate::layout::confined_name(name).map_err(|reason| {
            StoreRefusal::UnsafeRecordedName {
                identifier: identifier.into(),
                file: name.into(),
                reason,
                to: dir.clone().into(),
            }
        })?;
        let (range, file) = (Range { offset, len }, RangedFile { identifier, name: &name });
        if self.ocfl.is_some() {
            let keys = self.ocfl_range_keys(identifier, &name)?;
            return read_range_from(keys, range, file, to);
        }
        let key = format!("{dir}/{name}");
        let keys = self.replicas.iter().map(|r| (r.as_ref(), key.clone())).collect();
        read_range_from(keys, range, file, to)
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
        Err(StoreRefusal::NoGoodCopyToFetch {
            file: f.path.clone(),
            rejected: Rejections(rejected),
            to: staging.parent().unwrap_or(staging).into(),
        }
        .into())
    }

    /// Removes a package from every replica and then from the state: refused while another
    /// stored package requires it. On OCFL replicas the package's object goes whole, with
    /// every package kept in it (a kept AIP alone is refused). In the webaip layout the
    /// manifest goes first (a replica stopped part-way then holds no package `rebuild-state`
    /// would take for complete), the claim last. A replica
    /// that fails is reported with what it did delete; the state keeps the package until
    /// every replica is done, so `check` shows what is left and a second `remove` finishes.
    /// With `dry_run`, nothing is deleted: the report lists what would be.
    pub fn remove(&self, identifier: &str, dry_run: bool) -> Result<RemoveReport, StoreError> {
        if let Some(roots) = self.ocfl.as_deref() {
            return self.ocfl_remove(roots, identifier, dry_run);
        }
        // A moved package's dependencies are no longer in the webaip layout's records, so
        // nothing here could tell that a package still to move is required.
        let _writing = self.writing_webaip(true)?;
        let files = self
            .state()
            .package_files(identifier)?
            .ok_or_else(|| StoreRefusal::NotInState(identifier.into()))?;
        let dependents = self.state().dependents(identifier)?;
        if !dependents.is_empty() {
            return Err(StoreRefusal::Required { identifier: identifier.into(), dependents }.into());
        }
        let dir = checked_package_dir(identifier)?;
        let complete = files.iter().any(|f| f.path == MANIFEST);
        let mut reports = Vec::new();
        for r in &self.replicas {
            let mut rep = ReplicaRemoval { replica: r.name().into(), ..Default::default() };
            let outcome = if dry_run {
                package_keys(r.as_ref(), &dir).map(|keys| rep.deleted = keys)
            } else {
                remove_package_keys(r.as_ref(), &dir, complete, &mut rep.deleted)
            };
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
            kept: Vec::new(),
        })
    }

    /// The migration lock, shared, for a run that writes the webaip layout (put, remove,
    /// repair), held until dropped: `store migrate` does not start while it is held, and
    /// none of them starts while a migrate runs. With `unmigrated`, a store whose migration
    /// began (finished or not) is refused too, looked at under the lock, so no migrate can
    /// begin between the look and the run.
    pub(crate) fn writing_webaip(&self, unmigrated: bool) -> Result<state::lock::Held, StoreError> {
        use state::lock::{Hold, StateLock};
        let held = state::lock::take(&self.state_path, StateLock::Migrate, Hold::Shared)?;
        if unmigrated && self.state().migration_begun()? {
            return Err(StoreRefusal::Migrating.into());
        }
        Ok(held)
    }

    /// True when every replica is an OCFL storage root (`layout = "ocfl"`).
    pub fn is_ocfl(&self) -> bool {
        self.ocfl.is_some()
    }

    /// Refuses `command` on a store of OCFL replicas.
    fn webaip_layout(&self, command: &'static str) -> Result<(), StoreError> {
        match self.ocfl {
            Some(_) => Err(StoreRefusal::NotForOcfl { command }.into()),
            None => Ok(()),
        }
    }

    /// When the package was accepted (`None`: never, or not since its last failed put).
    pub fn accepted_at(&self, identifier: &str) -> Result<Option<String>, StoreError> {
        self.state().accepted_at(identifier)
    }
}

/// Every key in package directory `dir` of `r`, in the order `remove` deletes them: the
/// manifest first, then by key.
fn package_keys(r: &dyn Replica, dir: &str) -> Result<Vec<String>, StoreError> {
    let mut keys: Vec<String> = r.list(dir)?.into_iter().map(|o| o.key).collect();
    let manifest = format!("{dir}/{MANIFEST}");
    keys.sort_by_key(|k| (*k != manifest, k.clone()));
    Ok(keys)
}

/// Deletes everything in package directory `dir` of `r` (all of it is the package's: it
/// holds the claim), the manifest first, each key added to `deleted` once gone; with
/// `complete` (the package has a manifest), the claim and empty folders last. The listing is
/// asked again afterwards: a delete that did not reach its object (a key that does not
/// address what the listing showed) must not pass for one done, and the package is then
/// kept in the state database.
fn remove_package_keys(
    r: &dyn Replica,
    dir: &str,
    complete: bool,
    deleted: &mut Vec<String>,
) -> Result<(), StoreError> {
    for k in package_keys(r, dir)? {
        r.delete(&k)?;
        deleted.push(k);
    }
    ocfl::bucket::await_unlisted(r, dir, deleted)?;
    let left: Vec<String> = r.list(dir)?.into_iter().map(|o| o.key).collect();
    if !left.is_empty() {
        deleted.retain(|k| !left.contains(k));
        return Err(StoreError::StillListed { replica: r.name().into(), keys: left });
    }
    if complete {
        r.unclaim(dir)?;
        r.remove_empty_dirs(dir)?;
    }
    Ok(())
}

/// The name a recorded file of package `identifier` gets below `to`, refused when it would
/// leave `to`.
fn confined_in(identifier: &str, path: &str, to: &Path) -> Result<String, StoreError> {
    crate::layout::confined_name(path).map_err(|reason| {
        let (identifier, file, to) = (identifier.into(), path.into(), to.into());
        StoreRefusal::UnsafeRecordedName { identifier, file, reason, to }.into()
    })
}

/// Bytes `offset..offset + len` of a file.
#[derive(Debug, Clone, Copy)]
struct Range {
    offset: u64,
    len: u64,
}

/// Writes `range` of the first of `keys` (a replica and the file's key on it) that has all of
/// it to `to` (truncated before each try); every replica that did not is named in the refusal,
/// unless every replica gave the same shorter length: then the range runs past the end of
/// `file` as every copy holds it, and the refusal says so instead of blaming the copies.
fn read_range_from(
    keys: Vec<(&dyn Replica, String)>,
    range: Range,
    file: RangedFile,
    to: &mut std::fs::File,
) -> Result<(), StoreError> {
    use std::io::{Seek, Write};
    let Range { offset, len } = range;
    let mut rejected = Vec::new();
    let mut short = std::collections::BTreeSet::new();
    for (r, key) in keys {
        let reset = to.set_len(0).and_then(|()| to.rewind());
        reset.map_err(|source| StoreError::Destination { path: PathBuf::new(), source })?;
        let got = r.read_range(&key, offset..offset.saturating_add(len), &mut |b| to.write_all(b));
        match got {
            Ok(n) if n == len => return Ok(()),
            Ok(n) => {
                short.insert(n);
                rejected.push((
                    r.name().to_string(),
                    StoreError::Replica {
                        replica: r.name().into(),
                        key,
                        source: Box::new(CopyFailure::Size { expected: len, found: n }),
                    },
                ));
            }
            Err(e) => rejected.push((r.name().to_string(), e)),
        }
    }
    let every_copy_alike = short.len() == 1 && !rejected.iter().any(|(_, e)| !is_short(e));
    if let (Some(&available), true) = (short.first(), every_copy_alike) {
        let RangedFile { identifier, name } = file;
        let (identifier, file) = (identifier.to_string(), name.to_string());
        return Err(StoreRefusal::RangePastEnd { identifier, file, offset, len, available }.into());
    }
    Err(StoreRefusal::NoGoodCopy { rejected: Rejections(rejected) }.into())
}

/// Whether a ranged read's rejection is a copy that gave fewer bytes than asked for.
fn is_short(e: &StoreError) -> bool {
    matches!(e, StoreError::Replica { source, .. } if matches!(**source, CopyFailure::Size { .. }))
}

/// The file a ranged read is of, for its refusal.
#[derive(Debug, Clone, Copy)]
struct RangedFile<'a> {
    identifier: &'a str,
    name: &'a str,
}

/// Makes `to` (whether it was made here is returned) and refuses when any of `names` is
/// already there: `get` never replaces a file.
fn destination_free(to: &Path, names: &[String]) -> Result<bool, StoreError> {
    let made_to = std::fs::symlink_metadata(to).is_err();
    std::fs::create_dir_all(to)
        .map_err(|source| StoreError::Destination { path: to.into(), source })?;
    let there: Vec<String> =
        names.iter().filter(|n| std::fs::symlink_metadata(to.join(n)).is_ok()).cloned().collect();
    if !there.is_empty() {
        return Err(StoreRefusal::AlreadyThere { to: to.into(), names: there }.into());
    }
    Ok(made_to)
}

/// Every replica's OCFL root, when every replica is one (the configuration allows nothing
/// else with `layout = "ocfl"`).
fn ocfl_roots(config: &StoreConfig) -> Option<Vec<ocfl::root::OcflRoot>> {
    config
        .replicas
        .iter()
        .map(|r| (r.layout() == config::ReplicaLayout::Ocfl).then(|| ocfl_root(config, r)))
        .collect()
}

/// The OCFL storage root replica `r` is (or, for `store migrate`, becomes). A bucket's locks
/// and quarantine are kept in a local work directory beside the state database.
pub(crate) fn ocfl_root(config: &StoreConfig, r: &ReplicaConfig) -> ocfl::root::OcflRoot {
    use ocfl::root::OcflRoot;
    match &r.kind {
        ReplicaKind::Fs { root, work } => OcflRoot::Fs(ocfl::fs::FsRoot {
            name: r.name.clone(),
            root: root.clone(),
            work: work.clone().unwrap_or_else(|| ocfl::fs::FsRoot::default_work(root)),
        }),
        ReplicaKind::S3 { endpoints, bucket, prefix, .. } => {
            let endpoint = endpoints.first().map(String::as_str).unwrap_or_default();
            OcflRoot::Bucket(ocfl::bucket::BucketRoot {
                name: r.name.clone(),
                place: format!("{endpoint} {bucket}/{prefix}"),
                work: ocfl::fs::FsRoot::default_work(&config.state),
            })
        }
    }
}

/// The replica a configuration entry describes.
fn open_replica(r: &ReplicaConfig) -> Result<Box<dyn Replica>, StoreError> {
    match &r.kind {
        ReplicaKind::Fs { root, .. } if r.layout() == config::ReplicaLayout::Ocfl => {
            Ok(Box::new(FsReplica::ocfl(&r.name, root)))
        }
        ReplicaKind::Fs { root, .. } => Ok(Box::new(FsReplica::new(&r.name, root))),
        #[cfg(feature = "s3")]
        ReplicaKind::S3 {
            endpoints,
            bucket,
            region,
            access_key_env,
            secret_key_env,
            prefix,
            max_key_bytes,
        } => {
            let bucket = s3::Bucket {
                endpoints,
                bucket,
                region,
                access_key_env,
                secret_key_env,
                prefix,
                max_key_bytes: *max_key_bytes,
            };
            let replica = s3::S3Replica::new(&r.name, &bucket)?;
            if r.layout() == config::ReplicaLayout::Ocfl {
                return Ok(Box::new(replica.ocfl()));
            }
            Ok(Box::new(replica))
        }
        #[cfg(not(feature = "s3"))]
        ReplicaKind::S3 { .. } => Err(StoreError::NoS3Support(r.name.clone())),
    }
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
        None => hash_copy(r, key)?,
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

impl PackageFile {
    /// How the state database records it.
    fn record(&self) -> FileRecord {
        FileRecord { path: self.rel.clone(), size: self.size, sha512: self.sha512.clone() }
    }
}

/// Reads a copy through SHA-512: its hex digest.
pub(crate) fn hash_copy(r: &dyn Replica, key: &str) -> Result<String, StoreError> {
    let mut h = Sha512::new();
    r.read(key, &mut |c| {
        h.update(c);
        Ok(())
    })?;
    Ok(hex(&h.finalize()))
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
    StoreRefusal::NotRecorded { identifier: identifier.into(), path: path.into() }.into()
}

impl From<IdentifierProblem> for StoreError {
    fn from(p: IdentifierProblem) -> Self {
        StoreRefusal::Identifier(p).into()
    }
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

/// The METS's listing, in one read: the names it lists (every `FLocat`'s `xlink:href`, as
/// confined names; hrefs that leave the package are left out: no manifest line can then name
/// them), and its local files (files it names by URL aside), each with its package-relative
/// name: each must have a manifest line, and what the METS states of a file's bytes must be
/// what the manifest does. Strict: what the METS reader refuses refuses the package.
fn mets_listing(file: std::fs::File) -> Result<(BTreeSet<String>, LocalListing), MetsProblem> {
    let listing = read_listing(MetsReader::strict(io::BufReader::new(file)), Nested::Skip)?;
    let hrefs = listing.files.iter().filter_map(|f| f.href.as_deref());
    let hrefs = hrefs.chain(listing.other_hrefs.iter().map(String::as_str));
    let names = hrefs.filter_map(|h| crate::layout::confined_name(h).ok()).collect();
    let nested = listing.nested_skipped;
    let local = listing.files.into_iter().filter_map(|listed| {
        let href = listed.href.as_deref()?;
        if crate::layout::uri_scheme(href).is_some() {
            return None;
        }
        let name = crate::layout::confined_name(href).ok()?;
        Some(LocalListed { name, listed })
    });
    Ok((names, LocalListing { files: local.collect(), nested }))
}

/// `side` on a thread of its own while `here` runs on this one (both read a package: `side`
/// judges its METS or reads another pass of it). A panic in `side` is this thread's.
fn beside<S: Send, H>(side: impl FnOnce() -> S + Send, here: impl FnOnce() -> H) -> (S, H) {
    std::thread::scope(|s| {
        let side = s.spawn(side);
        let done = here();
        (side.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), done)
    })
}

/// The local files a package's METS lists, and how many nested `<file>`s (records,
/// bytestreams: their statements only the audit can hold against the bytes) it lists besides.
struct LocalListing {
    files: Vec<LocalListed>,
    nested: u64,
}

/// A local file the METS lists, and its package-relative name.
struct LocalListed {
    name: String,
    listed: crate::mets::listing::ListedFile,
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
    /// The local files its METS lists.
    listing: LocalListing,
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
        StoreRefusal::Package { dir: dir.into(), problem }.into()
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
    // Two passes over a METS of megabytes, at once (a put reads nothing else meanwhile).
    let (for_listing, for_deps) = (open(METS)?, open(METS)?);
    let (requires, listing) = beside(
        || deps::mets_dependencies(MetsReader::strict(io::BufReader::new(for_deps))),
        || mets_listing(for_listing),
    );
    let (listed, listing) = listing.map_err(mets)?;
    let requires = requires.map_err(|e| mets(e.into()))?;
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
    Ok(ReadPackage { identifier, files, digest, requires, listing })
}

#[cfg(test)]
mod tests {
    use super::config::unsafe_name;
    use super::*;

    /// A range past the end of a file every replica holds alike is the range's fault, told
    /// so; copies of different lengths are the copies' fault, each named.
    #[test]
    fn a_range_past_the_end_is_told_apart_from_short_copies() {
        let tmp = tempfile::tempdir().unwrap();
        let replica = |name: &str, bytes: &[u8]| {
            std::fs::create_dir_all(tmp.path().join(name).join("p")).unwrap();
            std::fs::write(tmp.path().join(name).join("p/f"), bytes).unwrap();
            replica::FsReplica::new(name, &tmp.path().join(name))
        };
        let (a, b, c) =
            (replica("a", b"0123456789"), replica("b", b"0123456789"), replica("c", b"01234567"));
        let file = RangedFile { identifier: "id", name: "f" };
        let range = Range { offset: 5, len: 10 };
        let mut to = tempfile::tempfile().unwrap();
        fn keys<'a>(rs: &[&'a replica::FsReplica]) -> Vec<(&'a dyn Replica, String)> {
            rs.iter().map(|r| (*r as &dyn Replica, "p/f".to_string())).collect()
        }
        let e = read_range_from(keys(&[&a, &b]), range, file, &mut to).unwrap_err().to_string();
        assert!(e.contains("has 5 bytes from offset 5 on every replica, not the 10"), "{e}");
        let e = read_range_from(keys(&[&a, &c]), range, file, &mut to).unwrap_err().to_string();
        assert!(e.contains("no replica holds a copy that verifies") && e.contains("c"), "{e}");
        read_range_from(keys(&[&c, &a]), Range { offset: 2, len: 7 }, file, &mut to).unwrap();
        assert_eq!(std::fs::metadata(tmp.path().join("a/p/f")).unwrap().len(), 10);
    }

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
        let names: Vec<String> = mets_listing(f).unwrap().0.into_iter().collect();
        assert_eq!(names, ["content/a.warc.gz"]);
        let hostile = format!("<?xml version=\"1.0\"?>\n<!DOCTYPE m [<!ENTITY x \"y\">]>\n{doc}");
        let (_d, f) = mets_file(&hostile);
        let err = read_identifier(f).unwrap_err();
        use crate::mets::reader::{MetsError, MetsRefusal as Refused};
        assert!(
            matches!(&err, MetsProblem::Read(MetsError::Refused { pos, refusal: Refused::Doctype })
                if (pos.line, pos.offset) == (2, 22)),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(err.starts_with("line 2 (byte 22): a document type declaration"), "{err}");
        let (_d, f) = mets_file(&doc.replace("</m:fileSec>", "</m:fileSec>\n<m:x>\0</m:x>"));
        let Err(err) = mets_listing(f) else { panic!("read") };
        assert!(
            matches!(&err, MetsProblem::Read(MetsError::Refused { pos, refusal: Refused::Nul })
                if pos.line == 6),
            "{err:?}"
        );
        assert!(err.to_string().contains("NUL"), "{err}");
        let (_d, f) = mets_file(&doc[..doc.len() - 10]);
        let Err(err) = mets_listing(f) else { panic!("read") };
        assert!(matches!(err, MetsProblem::Read(MetsError::Xml { .. })), "{err:?}");
        assert!(err.to_string().contains("not well-formed XML"));
        let (_d, f) = mets_file(&doc.replace(" OBJID=\"pkg-1\"", ""));
        assert!(matches!(read_identifier(f), Err(MetsProblem::NoIdentifier)));
    }
}
