//! Keeping packages: audit them, make archival packages of submissions, keep them on
//! replicas and export them for other systems. Each call is what one `webaip` command does
//! (`audit`, `ingest`, `store put|check|repair|get|rebuild-state|remove|migrate`, `export wacz|eark`),
//! with a progress callback where the command draws a bar; the calls in the crate root's table
//! ([`crate::audit_package`], [`crate::ingest_package`], ...) are the same without one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::audit::{AuditError, AuditOptions, AuditReport};
use crate::batch::export::{ExportError, Replace, eark_target_free, write_eark, write_wacz};
use crate::export::eark::{EarkError, ExportSummary, PackageType};
use crate::export::wacz::{WaczError, WaczOptions, WaczReport};
use crate::ingest::{IngestError, IngestOptions, IngestReport};
use crate::store::config::StoreConfig;
use crate::store::{
    CheckReport, CopyOutcome, PutOptions, PutReport, RemoveReport, RepairReport, Store, StoreError,
};

pub use crate::audit::{AuditProgress, Verdict as AuditVerdict};
pub use crate::export::wacz::{WACZ_VERSION, WaczIndex};
pub use crate::ingest::Outcome as IngestOutcome;
pub use crate::store::rebuild::RebuildStateReport;
pub use crate::store::{
    Adopted as OcflAdopted, FindingKind as OcflFindingKind, InventoryFault, ObjectLog,
    ObjectOnReplica, ObjectRepair, OcflCheckReport, OcflFinding, OcflRepairReport,
    Provenance as OcflProvenance, VersionEntry,
};
pub use crate::store::{
    CheckReport as StoreCheckReport, CopyOutcome as StoreCopyOutcome,
    CopyStatus as StoreCopyStatus, RemoveReport as StoreRemoveReport,
    RepairReport as StoreRepairReport,
};
pub use crate::store::{
    CheckRun as StoreCheckRun, CheckSchedule as StoreCheckSchedule,
    CheckVerdict as StoreCheckVerdict, CheckedRun as StoreCheckedRun,
    Detection as StoreCheckDetection, SampleOdds as StoreSampleOdds, SampleSize as StoreSampleSize,
    SampleSizeError as StoreSampleSizeError, SeenSummary as StoreSeenSummary,
    Selection as StoreCheckSelection, detection_probability as store_detection_probability,
};
pub use crate::store::{
    MigrateRefused as StoreMigrateRefused, MigrateReport as StoreMigrateReport,
    MigratedPackage as StoreMigratedPackage,
};

/// Audits the package at `package` as [`crate::audit_package`] does; `progress` hears of the
/// bytes the audit plans to read ([`AuditProgress::Planned`], before reading them) and has read
/// ([`AuditProgress::Done`]). It is called from the worker threads.
///
/// Errors: [`AuditError`] when the package cannot be audited at all (no METS, unreadable);
/// damage is not an error but the report's [`AuditReport::verdict`].
pub fn audit_package_with_progress(
    package: &Path,
    options: &AuditOptions,
    progress: &(dyn Fn(AuditProgress) + Sync),
) -> Result<AuditReport, AuditError> {
    crate::audit::audit_package(package, options, progress)
}

/// Makes the archival package (AIP) of the submission at `submission` in `options.out` (a
/// deep audit first; an AIP already made of it is reported [`IngestOutcome::Exists`] and left
/// as it is), then, with a `store`, puts the AIP to every replica
/// ([`IngestReport::stored`] says whether all accepted it). `progress` hears of the audit's
/// bytes, as in [`audit_package_with_progress`].
///
/// Errors: [`IngestError`] naming the submission or file when the submission is refused
/// (damaged, not a package) or the AIP cannot be made.
pub fn ingest_package_with_progress(
    submission: &Path,
    options: &IngestOptions,
    store: Option<&Store>,
    progress: &(dyn Fn(AuditProgress) + Sync),
) -> Result<IngestReport, IngestError> {
    crate::ingest::ingest(submission, options, store, progress)
}

/// Puts the package at `package` to every replica of `store`: verified first as `opts`
/// asks (every file's SHA-512 against its manifest and the METS valid; with
/// [`PutOptions::audit`] the full audit; a damaged or invalid package is refused,
/// [`StoreError::Refused`]), then every file written and every copy verified. [`PutReport::accepted`] is true only when every replica holds a verified copy of
/// every file. `progress` hears of the bytes transferred (about [`bytes_to_put`] in all).
pub fn store_put(
    store: &Store,
    package: &Path,
    opts: &PutOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PutReport, StoreError> {
    store.put(package, opts, progress)
}

/// About how many bytes [`store_put`] of the package at `package` transfers: its files'
/// bytes once per replica of `config` (for a progress bar's length).
pub fn bytes_to_put(config: &StoreConfig, package: &Path) -> u64 {
    crate::layout::bytes_below(package) * config.replicas.len() as u64
}

/// What [`store_check`] looks at.
#[derive(Debug, Clone, Default)]
pub struct StoreCheckOptions {
    /// Only the replica of this name (default: every replica).
    pub replica: Option<String>,
    /// Recompute every copy's SHA-512 (default: file lists and sizes only).
    pub deep: bool,
    /// Which objects, resumed or not, spread over how long (default: every object, now).
    pub schedule: crate::store::CheckSchedule,
}

/// Checks every package the store recorded on every replica: which copies are missing,
/// extra, of the wrong size or (with `deep`) of the wrong SHA-512, and which stored package
/// requires one the store lacks; as a run kept in the state database (`options.schedule`:
/// which packages, resumed, within a budget and a window). [`StoreCheckReport::clean`] says
/// whether every package was checked and nothing found; [`StoreCheckRun::verdict`] says what
/// the run covered. `progress` hears of the bytes hashed (`deep` only).
pub fn store_check(
    store: &Store,
    options: &StoreCheckOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<StoreCheckedRun<CheckReport>, StoreError> {
    store.check_run(options.replica.as_deref(), options.deep, &options.schedule, progress)
}

/// Checks the store (every checksum with `deep`) and re-establishes every missing or corrupt
/// copy from a copy that verifies; a copy that verifies is never touched.
/// [`StoreRepairReport::repaired`] says whether every bad copy came back.
pub fn store_repair(store: &Store, deep: bool) -> Result<RepairReport, StoreError> {
    store.repair(deep, &|_| {})
}

/// Checks every object of a store of OCFL replicas (`layout = "ocfl"`) on OCFL terms:
/// inventories, sidecars, every version, every content file present (with
/// `options.deep`, of its SHA-512), nothing else there; then compares the replicas' heads.
/// Writes nothing to the replicas; the run and each object's last check are kept in the state
/// database, as [`store_check`] keeps them. [`OcflCheckReport::clean`] says whether every
/// object was checked and nothing found.
pub fn store_check_objects(
    store: &Store,
    options: &StoreCheckOptions,
) -> Result<StoreCheckedRun<OcflCheckReport>, StoreError> {
    store.check_objects_run(options.replica.as_deref(), options.deep, &options.schedule)
}

/// Checks a store of OCFL replicas, then rebuilds each damaged or missing object copy from a
/// replica whose copy checks clean (never a version webaip did not commit, never rolling a
/// replica back), then checks again. Each object of `adopt` (ids) is first taken as webaip's
/// on the caller's word (its latest head recorded as committed), so that it is copied too.
pub fn store_repair_objects(
    store: &Store,
    deep: bool,
    adopt: &[String],
) -> Result<OcflRepairReport, StoreError> {
    store.repair_objects(deep, adopt)
}

/// The versions of object `objid` in a store of OCFL replicas (`store log`).
pub fn store_log(store: &Store, objid: &str) -> Result<ObjectLog, StoreError> {
    store.log(objid)
}

/// Every object on every replica of a store of OCFL replicas (`store list`).
pub fn store_list(store: &Store) -> Result<Vec<ObjectOnReplica>, StoreError> {
    store.list_objects()
}

/// Recreates the store's state database from what the replicas hold; a package directory
/// that is not a complete, verified package is named in [`RebuildStateReport::refused`].
pub fn store_rebuild_state(store: &Store) -> Result<RebuildStateReport, StoreError> {
    store.rebuild_state()
}

/// Moves a store's file system replicas from the webaip layout to OCFL storage roots, in
/// place: each package becomes an object at v1 whose content is the old files, hard-linked
/// (copied where a link is refused), hashed once and checked against the state database and
/// the package manifest; the old files go only once the object is committed and checks clean.
/// Resumable; a damaged package is refused with its files left as they were. Once no package
/// is left, the configuration at `config_path` is switched to `layout = "ocfl"`
/// ([`StoreMigrateReport::switched`]). A bucket replica refuses the migration. `progress`
/// hears of the bytes placed.
pub fn store_migrate(
    store: &Store,
    config: &StoreConfig,
    config_path: &Path,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<StoreMigrateReport, StoreError> {
    store.migrate_to_ocfl(config, config_path, progress)
}

/// Deletes the package `objid` from every replica (with `dry_run`, lists what it would
/// delete); on OCFL replicas its whole object, with the packages kept in it
/// ([`StoreRemoveReport::kept`]), and a package kept in another's object is refused.
/// Refused ([`StoreError::Refused`]) while another stored package requires it;
/// [`StoreRemoveReport::removed`] is false when a replica stopped part-way.
pub fn store_remove(store: &Store, objid: &str, dry_run: bool) -> Result<RemoveReport, StoreError> {
    store.remove(objid, dry_run)
}

/// What [`store_get`] fetches, where to, and what it exports of it.
#[derive(Debug, Clone)]
pub struct StoreGet {
    /// The package identifier (METS OBJID).
    pub package: String,
    /// One file of it (a package-relative path), or `None` for all.
    pub file: Option<String>,
    /// OCFL replicas: the version to fetch (default: the head).
    pub version: Option<u32>,
    /// The folder the package's files are fetched into (no file there is replaced).
    pub out: PathBuf,
    /// Export the fetched package as this WACZ (as [`crate::export_wacz`] with the default
    /// options).
    pub export_wacz: Option<PathBuf>,
    /// Export the fetched package as an E-ARK package at this path (a new folder or `.zip`);
    /// refused before anything is fetched when something is there.
    pub export_eark: Option<PathBuf>,
    /// The OAIS type of that E-ARK package.
    pub eark_type: PackageType,
}

impl StoreGet {
    /// Fetches all of `package` into `out`, with no export.
    pub fn new(package: impl Into<String>, out: impl Into<PathBuf>) -> Self {
        StoreGet {
            package: package.into(),
            file: None,
            version: None,
            out: out.into(),
            export_wacz: None,
            export_eark: None,
            eark_type: PackageType::Sip,
        }
    }
}

/// What [`store_get`] fetched and exported.
#[derive(Debug, Serialize)]
pub struct StoreGetReport {
    /// Each file fetched: the replica it came from, verified against its recorded SHA-512.
    pub copies: Vec<CopyOutcome>,
    /// The WACZ export, when asked for.
    pub wacz: Option<WaczReport>,
    /// The E-ARK export, when asked for.
    pub eark: Option<ExportSummary>,
}

/// Why [`store_get`] failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreGetError {
    /// Nothing was fetched: the store refused or failed (nothing that looks like a package is
    /// left in the output folder).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The E-ARK output exists: refused before anything was fetched.
    #[error(transparent)]
    Target(ExportError),
    /// The package was fetched and verified, but its export failed.
    #[error("{package} fetched and verified into {}: {source}", .out.display())]
    Export {
        /// The package identifier.
        package: String,
        /// Where it was fetched to.
        out: PathBuf,
        /// Why the export failed.
        #[source]
        source: ExportError,
    },
}

/// Fetches a package (or one file of it) from the store into `request.out`, each file from
/// the first replica whose copy verifies against the recorded SHA-512, and appearing under
/// its name only once all of it verified; then writes the exports asked for.
pub fn store_get(store: &Store, request: &StoreGet) -> Result<StoreGetReport, StoreGetError> {
    if let Some(path) = &request.export_eark {
        eark_target_free(path).map_err(StoreGetError::Target)?;
    }
    let file = request.file.as_deref();
    let copies = match request.version {
        Some(v) => store.get_version(&request.package, file, Some(v), &request.out)?,
        None => store.get(&request.package, file, &request.out)?,
    };
    let fetched = |source| StoreGetError::Export {
        package: request.package.clone(),
        out: request.out.clone(),
        source,
    };
    let wacz = match &request.export_wacz {
        Some(path) => Some(write_wacz(&request.out, path).map_err(fetched)?),
        None => None,
    };
    let eark = match &request.export_eark {
        Some(path) => {
            Some(write_eark(&request.out, path, request.eark_type, Replace::No).map_err(fetched)?)
        }
        None => None,
    };
    Ok(StoreGetReport { copies, wacz, eark })
}

/// Exports the package at `package` as the WACZ `output`, as [`crate::export_wacz`] does;
/// `progress` hears of the container bytes as they are copied.
pub fn export_wacz_with_progress(
    package: &Path,
    output: &Path,
    options: &WaczOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<WaczReport, WaczError> {
    crate::export::wacz::export_wacz(package, output, options, progress)
}

/// Exports the package at `package` as an E-ARK 2.2 package of type `kind` in the folder
/// `dir`, as its root folder `dir/OBJID` (which must not exist; other packages there may); a
/// `dir` named `*.zip` is the ZIP itself. [`ExportSummary::written`] says what was made.
pub fn export_eark_in(
    package: &Path,
    dir: &Path,
    kind: PackageType,
) -> Result<ExportSummary, EarkError> {
    crate::export::eark::export_in(package, dir, kind)
}
