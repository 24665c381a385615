//! What can go wrong in the store, as values a caller can match on: each error carries the
//! facts (the path, replica, key, identifier, the underlying error as its source) and says
//! them as one sentence.

use std::io;
use std::path::PathBuf;

use crate::audit::AuditError;
use crate::layout::{ConfineError, NameError};
use crate::mets::reader::MetsError;

/// What can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The configuration file cannot be read.
    #[error("store configuration: {}: {why}", path.display(), why = crate::layout::describe_io(source))]
    ConfigUnreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The configuration file is not a store configuration (TOML syntax, unknown fields).
    #[error("store configuration: {}: {source}", path.display())]
    ConfigSyntax {
        /// The configuration file.
        path: PathBuf,
        /// What the parser said.
        #[source]
        source: Box<toml::de::Error>,
    },
    /// The configuration reads, but a store cannot work from it.
    #[error("store configuration: {}: {problem}", path.display())]
    ConfigRefused {
        /// The configuration file.
        path: PathBuf,
        /// What is wrong with it.
        problem: ConfigProblem,
    },
    /// A command names a replica the configuration does not have.
    #[error("store configuration: no replica named {0:?}")]
    NoSuchReplica(String),
    /// An S3 replica's credential variable is not set.
    #[error("store configuration: replica {replica}: environment variable {variable} is not set")]
    MissingCredential {
        /// The replica.
        replica: String,
        /// The environment variable.
        variable: String,
        /// Why it could not be read (absent, not Unicode).
        #[source]
        source: std::env::VarError,
    },
    /// An S3 replica has no endpoint.
    #[error("store configuration: replica {0}: no endpoints")]
    NoEndpoints(String),
    /// An S3 replica's client cannot be built for an endpoint.
    #[cfg(feature = "s3")]
    #[error("store configuration: replica {replica} ({endpoint}): {source}")]
    Client {
        /// The replica.
        replica: String,
        /// The endpoint.
        endpoint: String,
        /// What the client said.
        #[source]
        source: Box<object_store::Error>,
    },
    /// The configuration names an S3 replica, and this build has no S3 client.
    #[error(
        "store configuration: replica {0} is an S3 bucket, and this webaip was built without S3 support (cargo feature `s3`)"
    )]
    NoS3Support(String),
    /// The threads of the transfer pool cannot be started.
    #[error("store configuration: cannot start the transfer threads: {0}")]
    Transfers(#[source] rayon::ThreadPoolBuildError),
    /// The S3 client's runtime cannot be started (the system refuses threads).
    #[cfg(feature = "s3")]
    #[error("store configuration: cannot start the S3 client runtime: {0}")]
    Runtime(#[source] std::sync::Arc<io::Error>),
    /// What the state database keeps of a check run's batches cannot be read back.
    #[error("state database: check run {run}: a batch's record is unreadable: {why}")]
    RunRecord {
        /// The run.
        run: i64,
        /// Why.
        why: String,
    },
    /// The state database cannot be used.
    #[error("state database: {0}")]
    State(#[from] rusqlite::Error),
    /// The state database's directory cannot be made.
    #[error("state database: {}: {why}", path.display(), why = crate::layout::describe_io(source))]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A lock beside the state database (the check lock, the migration lock) cannot be
    /// taken: it cannot be made or opened, or it is a link or not a regular file.
    #[error("cannot take the lock {}: {why}", path.display(), why = crate::layout::describe_io(source))]
    StateLock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `store migrate` moved every package but cannot switch the configuration file to
    /// `layout = "ocfl"`.
    #[error("store configuration: {}: every package is moved to OCFL, but the file cannot be switched to layout = \"ocfl\" ({why}): set it on every replica yourself", path.display())]
    ConfigSwitch {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A scratch directory (for a copy fetched during a repair) cannot be made.
    #[error("cannot make a scratch directory: {why}", why = crate::layout::describe_io(.0))]
    Scratch(#[source] io::Error),
    /// A replica failed an operation.
    #[error("replica {replica}: {key}: {source}")]
    Replica {
        /// The replica.
        replica: String,
        /// The object key.
        key: String,
        /// What went wrong.
        #[source]
        source: Box<CopyFailure>,
    },
    /// Write-once: the object exists.
    #[error("replica {replica}: {key} exists; not overwritten")]
    Exists {
        /// The replica.
        replica: String,
        /// The object key.
        key: String,
    },
    /// An OCFL inventory (or its sidecar) on a replica is not one the store accepts.
    #[error("replica {replica}: {key}: {fault}")]
    Inventory {
        /// The replica.
        replica: String,
        /// The inventory's key.
        key: String,
        /// What is wrong with it.
        fault: super::ocfl::InventoryFault,
    },
    /// A staged OCFL object did not check clean, so it was not committed.
    #[error(
        "replica {replica}: the staged object does not check clean ({key}: {detail}); not committed"
    )]
    Precommit {
        /// The replica.
        replica: String,
        /// What the check named.
        key: String,
        /// What it found.
        detail: String,
    },
    /// Keys a replica still lists after they were deleted (a delete that did not reach its
    /// object, or a listing slow to show it).
    #[error(
        "replica {replica}: still listed after their delete: {}; the package stays in the state database (`store remove` again finishes, or names them again)",
        keys.join(", ")
    )]
    StillListed {
        /// The replica.
        replica: String,
        /// The keys still listed.
        keys: Vec<String>,
    },
    /// An OCFL replica's root is a directory with other things in it, not a storage root.
    #[error("replica {replica}: {} holds files but no 0=ocfl_1.1: not an OCFL storage root, and not made one (a replica of the webaip layout needs layout = \"webaip\" in the configuration when its state database is new; a new disk's mount point holds lost+found, which OCFL does not allow in a root: give a directory below the mount point as the root)", root.display())]
    NotOcflRoot {
        /// The replica.
        replica: String,
        /// Its root.
        root: PathBuf,
    },
    /// The file system of an OCFL replica cannot exchange two directories in one step.
    #[error("replica {replica}: the file system of {} cannot exchange directories (renameat2 RENAME_EXCHANGE): a new version is not committed in two steps; nothing was changed", root.display())]
    NoExchange {
        /// The replica.
        replica: String,
        /// Its root.
        root: PathBuf,
    },
    /// An OCFL replica's work directory is on another file system than its root.
    #[error("replica {replica}: the work directory {} is not on the storage root's file system (objects are built there and hard-linked); name one that is with `work =`", work.display())]
    WorkElsewhere {
        /// The replica.
        replica: String,
        /// The work directory.
        work: PathBuf,
    },
    /// A local directory `store get` writes to cannot be used.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Destination {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A name below the directory `store get` writes to cannot be reached safely.
    #[error(transparent)]
    Confined(#[from] ConfineError),
    /// The package cannot be stored or fetched (damaged, unreadable, or another package under
    /// its name...).
    #[error(transparent)]
    Refused(Box<StoreRefusal>),
}

impl From<StoreRefusal> for StoreError {
    fn from(r: StoreRefusal) -> Self {
        StoreError::Refused(Box::new(r))
    }
}

/// Why a configuration that reads cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigProblem {
    /// No replica is configured.
    #[error("no [[replica]]")]
    NoReplica,
    /// Some replicas are OCFL storage roots and some are not.
    #[error(
        "some replicas have layout = \"ocfl\" and some not: give every replica the same layout"
    )]
    MixedLayouts,
    /// An OCFL replica's work directory inside its storage root.
    #[error("replica {0:?}: its work directory is inside its storage root; it must be outside")]
    WorkInsideRoot(String),
    /// Two replicas have one name.
    #[error("replica name {0:?} used twice")]
    NameTwice(String),
    /// More transfers than allowed.
    #[error("transfers = {0} is more than the {max} allowed", max = super::config::MAX_TRANSFERS)]
    TooManyTransfers(usize),
    /// Two replicas are one place, or one is inside the other.
    #[error(
        "replicas {first:?} and {second:?} {how}: each copy would be counted twice; give every replica a place of its own"
    )]
    Overlap {
        /// The first replica (in the file's order).
        first: String,
        /// The second.
        second: String,
        /// How they overlap.
        how: Overlap,
    },
}

/// How two replicas' places overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Overlap {
    /// Two file system replicas with one root.
    #[error("have the same root")]
    SameRoot,
    /// The second file system root is inside the first.
    #[error("nest (the second's root is inside the first's)")]
    SecondInsideFirst,
    /// The first file system root is inside the second.
    #[error("nest (the first's root is inside the second's)")]
    FirstInsideSecond,
    /// Two bucket replicas with one bucket and key prefix.
    #[error("are the same bucket and prefix")]
    SameBucketAndPrefix,
    /// Two bucket replicas in one bucket, one key prefix starting with the other.
    #[error("nest (one key prefix starts with the other, in one bucket)")]
    NestedPrefixes,
}

/// Why an operation on one object of a replica failed.
#[derive(Debug, thiserror::Error)]
pub enum CopyFailure {
    /// The file system refused.
    #[error("{why}", why = crate::layout::describe_io(.0))]
    Io(#[from] io::Error),
    /// A name on the way cannot be reached safely (a link, not a directory...).
    #[error("{0}")]
    Confine(#[from] ConfineError),
    /// Every temporary name beside the object was taken.
    #[error("cannot create a temporary beside it")]
    NoTemporary,
    /// The object store has no such object.
    #[cfg(feature = "s3")]
    #[error("not found: {0}")]
    NotFound(#[source] object_store::Error),
    /// The object store failed once it was reached.
    #[cfg(feature = "s3")]
    #[error("{0}")]
    ObjectStore(#[from] object_store::Error),
    /// No endpoint answered: each endpoint and what it said.
    #[cfg(feature = "s3")]
    #[error("{}", endpoints_failed(.0))]
    Endpoints(Vec<(String, object_store::Error)>),
    /// A copy just written is not there.
    #[error("the copy is not there after writing it")]
    AbsentAfterWrite,
    /// A copy has another size than the package's file.
    #[error("the copy has {found} bytes; expected {expected}")]
    Size {
        /// Its size.
        found: u64,
        /// The package file's.
        expected: u64,
    },
    /// A copy has another SHA-512 than the package's file.
    #[error("the copy's SHA-512 is {found}; expected {expected}")]
    Digest {
        /// Its SHA-512 (hex).
        found: String,
        /// The package file's.
        expected: String,
    },
    /// A copy cannot be written where it is fetched to.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Local {
        /// The local file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

#[cfg(feature = "s3")]
fn endpoints_failed(failures: &[(String, object_store::Error)]) -> String {
    failures.iter().map(|(endpoint, e)| format!("{endpoint}: {e}")).collect::<Vec<_>>().join("; ")
}

/// Why the store refuses a package (or a file of one).
#[derive(Debug, thiserror::Error)]
pub enum StoreRefusal {
    /// The package directory is not one the store takes; nothing was written.
    #[error("{}: {problem}; not stored", dir.display())]
    Package {
        /// The package directory.
        dir: PathBuf,
        /// What is wrong with it.
        problem: PackageProblem,
    },
    /// The package cannot be audited.
    #[error("{}: cannot be audited: {source}", dir.display())]
    Unauditable {
        /// The package directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: AuditError,
    },
    /// The audit does not let the package in (`AuditReport::admissible`): damaged, its
    /// description invalid or inconsistent (a METS that does not say what its revisits
    /// require), or something not checked that only a check can settle.
    #[error(
        "{}: the audit says {verdict} ({errors} error(s), {inconsistencies} inconsistenc(ies), \
         {unchecked} thing(s) not checked; run `webaip audit`); not stored",
        dir.display()
    )]
    Damaged {
        /// The package directory.
        dir: PathBuf,
        /// The audit's verdict, in words.
        verdict: String,
        /// Findings and validation errors.
        errors: usize,
        /// Where the METS contradicts itself or the containers it describes.
        inconsistencies: usize,
        /// What the audit could not check.
        unchecked: usize,
    },
    /// The identifier has no directory in a replica.
    #[error(transparent)]
    Identifier(#[from] IdentifierProblem),
    /// The OCFL replicas do not hold the object at one head: a put would make them diverge.
    #[error(
        "object {identifier}: the replicas differ ({heads}); run `store repair` first; not stored"
    )]
    ReplicasDiffer {
        /// The object id.
        identifier: String,
        /// Each replica's head (or `none`).
        heads: String,
    },
    /// An OCFL object on a replica is damaged: a new version is not built on it.
    #[error(
        "object {identifier} on replica {replica}: {finding}; run `store repair` first; not stored"
    )]
    ObjectDamaged {
        /// The object id.
        identifier: String,
        /// The replica.
        replica: String,
        /// The first thing the check found.
        finding: String,
    },
    /// Replicas hold different inventories at the object's latest head, and nothing records
    /// which webaip committed.
    #[error(
        "object {identifier}: {a} and {b} are different versions of the same number, and the state database does not say which webaip committed; compare them with `store check` and move the wrong one away"
    )]
    Diverged {
        /// The object id.
        identifier: String,
        /// One copy's head and replica.
        a: String,
        /// The other's.
        b: String,
    },
    /// The state database records the object, and no replica holds a head it recorded.
    #[error(
        "object {identifier}: no replica holds a version webaip committed ({heads} are not in the state database); not trusted"
    )]
    Unrecorded {
        /// The object id.
        identifier: String,
        /// The heads the replicas hold.
        heads: String,
    },
    /// The replicas hold an object the state database does not know, while it records others
    /// and did not find this one on the replicas when its records began: planted, or written
    /// by another store.
    #[error(
        "object {identifier}: the replicas hold it, and the state database records nothing of it (it records other objects, and this one was not on the replicas when its records began): not one webaip put, so not built on nor served; `store repair --adopt {identifier}` takes it as webaip's"
    )]
    UnknownObject {
        /// The object id.
        identifier: String,
    },
    /// A bucket replica holds files of the object without a root inventory, which nothing
    /// shows to be what a put of webaip's left when killed.
    #[error(
        "object {identifier}: replica {replica} holds files of it without a root inventory, and the state database does not show them to be what a killed put of webaip's left (an object that lost its root inventory, or one webaip did not write): not written over; `store check` names them, `store repair` keeps them (move them away, or restore the root inventory and `store repair --adopt {identifier}`)"
    )]
    HeadlessObject {
        /// The object id.
        identifier: String,
        /// The replica holding the files.
        replica: String,
    },
    /// `store repair --adopt` refused: taking the copies as webaip's would lower, forget or
    /// replace what webaip recorded, or rest on too few replicas.
    #[error("object {identifier}: not adopted: {why}")]
    NotAdopted {
        /// The object id.
        identifier: String,
        /// Why.
        why: String,
    },
    /// No record of the object, and its latest head is held by too few replicas to be taken
    /// by consistency alone.
    #[error(
        "object {identifier}: the state database records nothing of it, and its latest head ({head}) is held by {holders} of {replicas} replicas: not taken as right by consistency alone (`store repair --adopt {identifier}` takes it as webaip's)"
    )]
    NoMajority {
        /// The object id.
        identifier: String,
        /// The latest head and its replica.
        head: String,
        /// Replicas holding it.
        holders: usize,
        /// Replicas in the store.
        replicas: usize,
    },
    /// webaip committed a later head than any replica holds: versions were rolled back or
    /// lost.
    #[error(
        "object {identifier}: webaip committed {recorded} (the state database says so), and no replica holds it (the latest held is {held}): versions were rolled back or lost; `store check` says where, `store get --version N` fetches an older version"
    )]
    RolledBack {
        /// The object id.
        identifier: String,
        /// The latest head webaip committed.
        recorded: String,
        /// The latest head a replica holds.
        held: String,
    },
    /// The next version's name would not fit the object's zero-padded version names.
    #[error(
        "object {identifier}: its version names are zero-padded to {width} characters, and {head} is the last that fits; not stored"
    )]
    VersionsFull {
        /// The object id.
        identifier: String,
        /// The width of its version names.
        width: usize,
        /// Its head.
        head: String,
    },
    /// The object has no such version.
    #[error("object {identifier} has no version {version}")]
    NoSuchVersion {
        /// The object id.
        identifier: String,
        /// The version asked for.
        version: u32,
    },
    /// A version was asked of a package kept as one version of another package's object.
    #[error(
        "{identifier} is kept as {version} of object {object}: get it without --version, or \
         get {object} --version N"
    )]
    KeptInObject {
        /// The package asked for.
        identifier: String,
        /// The object that holds it.
        object: String,
        /// The version that is the package.
        version: String,
    },
    /// `store remove` of a package kept as one version of another package's object: an OCFL
    /// version is write-once, so the package cannot leave its object alone.
    #[error(
        "{identifier} is kept as {version} of object {object}, and an OCFL version is \
         write-once: it cannot be removed alone; remove {object} instead (which removes every \
         version of it, and every package kept in it)"
    )]
    KeptNotRemovable {
        /// The package asked to be removed.
        identifier: String,
        /// The object that holds it.
        object: String,
        /// The version that is the package.
        version: String,
    },
    /// A put of an object whose `store remove` began and did not finish on every replica.
    #[error(
        "store remove of {identifier} began at {started} and did not finish: run `store remove \
         {identifier}` again to finish it, then put it again"
    )]
    RemovalUnfinished {
        /// The object id.
        identifier: String,
        /// When the removal began (RFC 3339).
        started: String,
    },
    /// Another check of the store is running (a run's plan is the store's one plan).
    #[error(
        "another store check (or repair) of this store is running ({}{holders}): wait for it, or stop it and use --resume",
        lock.display()
    )]
    CheckRunning {
        /// The lock it holds.
        lock: std::path::PathBuf,
        /// Who holds it, where known.
        holders: super::state::lock::Holders,
    },
    /// `store migrate` found a file of its own name where it declares a bucket's storage
    /// root, with other bytes than webaip writes.
    #[error(
        "replica {replica}: {file} is already in the bucket and is not webaip's ({why}): the storage root is not declared over it; nothing was migrated, and the store keeps working in the webaip layout as it is"
    )]
    MigrateForeignRootFile {
        /// The replica.
        replica: String,
        /// The root file's key.
        file: String,
        /// What its bytes are.
        why: String,
    },
    /// A replica cannot hold a file of the package under the key its name gives it (too
    /// long for the store, a character its keys cannot hold); nothing was written.
    #[error("replica {replica}: {file}: {problem}; not stored")]
    KeyUnfit {
        /// The replica.
        replica: String,
        /// The package file.
        file: String,
        /// Why its key does not fit.
        problem: KeyProblem,
    },
    /// A `store migrate` holds the store's migration lock: a second migrate, or a put, remove
    /// or repair of the webaip layout, does not start.
    #[error(
        "`store migrate` of this store is running (it holds {}{holders}): no second migrate, and no put, remove or repair in the webaip layout, starts meanwhile; run this when it ends",
        lock.display()
    )]
    MigrateRunning {
        /// The lock it holds.
        lock: std::path::PathBuf,
        /// Who holds it, where known.
        holders: super::state::lock::Holders,
    },
    /// A put, remove or repair of the webaip layout holds the migration lock (shared):
    /// `store migrate` does not start under it.
    #[error(
        "a put, remove or repair of this store is running (it holds {} shared{holders}): `store migrate` does not start meanwhile (a package put while the store moves would be left where no command finds it); nothing was migrated, run it when they end",
        lock.display()
    )]
    WritersRunning {
        /// The lock they hold.
        lock: std::path::PathBuf,
        /// Who holds it, where known.
        holders: super::state::lock::Holders,
    },
    /// A put or remove in the webaip layout on a store `store migrate` has begun to move to OCFL.
    #[error(
        "this store is being moved to OCFL storage roots (`store migrate` began, its state database says so): a put or a remove in the webaip layout is refused (a removal could take away a package a moved one requires); run `store migrate` until it completes, then put to the OCFL layout"
    )]
    Migrating,
    /// `store check --resume` with no check run left unfinished.
    #[error("no check run is unfinished (killed or stopped): nothing to resume")]
    NothingToResume,
    /// The command needs replicas of the other layout.
    #[error("{command} needs replicas with layout = \"ocfl\"")]
    NeedsOcfl {
        /// The command.
        command: &'static str,
    },
    /// The command is for replicas of the webaip layout, and this store's are OCFL roots.
    #[error(
        "{command} is for replicas of the webaip layout; this store's replicas are OCFL storage roots"
    )]
    NotForOcfl {
        /// The command.
        command: &'static str,
    },
    /// No replica holds the object.
    #[error("no replica holds object {0}")]
    NoObject(String),
    /// The state database holds another package under this identifier.
    #[error("another package with identifier {0} is already stored (its files differ); not stored")]
    AlreadyStored(String),
    /// A replica holds another package under this identifier.
    #[error(
        "identifier {identifier} is taken: replica {replica}: {conflict}; this package (manifest SHA-512 {digest}) is not stored"
    )]
    Taken {
        /// The identifier.
        identifier: String,
        /// The replica.
        replica: String,
        /// What is there.
        conflict: ClaimConflict,
        /// This package's manifest SHA-512.
        digest: String,
    },
    /// A replica holds other bytes under a key this package writes.
    #[error("replica {replica}: {key} exists with other content; not overwritten")]
    OtherContent {
        /// The replica.
        replica: String,
        /// The object key.
        key: String,
    },
    /// A repair target's package directory is another package's.
    #[error("replica {replica}: {dir} is claimed by another package (manifest SHA-512 {holder})")]
    ClaimedByOther {
        /// The replica.
        replica: String,
        /// The package directory.
        dir: String,
        /// The claim's manifest SHA-512.
        holder: String,
    },
    /// The state database records no such file of the package.
    #[error("{identifier}: {path} is not recorded")]
    NotRecorded {
        /// The package identifier.
        identifier: String,
        /// The package-relative file.
        path: String,
    },
    /// No replica holds a copy that verifies (a repair).
    #[error("no replica holds a copy that verifies ({rejected})")]
    NoGoodCopy {
        /// Each replica tried and why its copy was rejected.
        rejected: Rejections,
    },
    /// A ranged read asked for bytes past the file's end: every replica holds the same
    /// shorter file.
    #[error(
        "{identifier}: {file} has {available} bytes from offset {offset} on every replica, not the {len} asked for: the range runs past the file's end (`store check --deep` says whether the copies are whole)"
    )]
    RangePastEnd {
        /// The package identifier.
        identifier: String,
        /// The package-relative file.
        file: String,
        /// The range's first byte.
        offset: u64,
        /// The bytes asked for.
        len: u64,
        /// The bytes every replica gave from `offset`.
        available: u64,
    },
    /// No replica holds a copy that verifies (a get).
    #[error(
        "{file}: no replica holds a copy that verifies ({rejected}); nothing written to {}",
        to.display()
    )]
    NoGoodCopyToFetch {
        /// The package-relative file.
        file: String,
        /// Each replica tried and why its copy was rejected.
        rejected: Rejections,
        /// Where the get writes.
        to: PathBuf,
    },
    /// The package is not in the state database.
    #[error("{0} is not in the state database (try `webaip store rebuild-state`)")]
    NotInState(String),
    /// Other stored packages require the package (their revisits name its payloads): it is
    /// not removed.
    #[error(
        "{identifier} is required by {} stored package(s): {}; not removed (remove those first)",
        dependents.len(),
        dependents.join(", ")
    )]
    Required {
        /// The package asked to be removed.
        identifier: String,
        /// The stored packages whose METS names it as a dependency.
        dependents: Vec<String>,
    },
    /// The package has no such file.
    #[error("{identifier} has {}", match file {
        Some(f) => format!("no file {f:?}"),
        None => "no files".to_string(),
    })]
    NoSuchFile {
        /// The package identifier.
        identifier: String,
        /// The file asked for.
        file: Option<String>,
    },
    /// A file name the state database recorded leaves the directory fetched to.
    #[error(
        "{identifier}: the recorded file {file:?} {reason}: it does not stay inside {}; not fetched",
        to.display()
    )]
    UnsafeRecordedName {
        /// The package identifier.
        identifier: String,
        /// The recorded name.
        file: String,
        /// Why it is unsafe.
        reason: NameError,
        /// Where the get writes.
        to: PathBuf,
    },
    /// Files of the package are already where a get would write them.
    #[error(
        "{}: {} already there; `store get` never replaces a file (fetch into an empty directory)",
        to.display(),
        names.join(", ")
    )]
    AlreadyThere {
        /// Where the get writes.
        to: PathBuf,
        /// The names already there.
        names: Vec<String>,
    },
    /// A file appeared under its name while a get was publishing.
    #[error("{}: {name} appeared meanwhile; not replaced", to.display())]
    AppearedMeanwhile {
        /// Where the get writes.
        to: PathBuf,
        /// The name.
        name: String,
    },
}

/// Each replica whose copy was rejected, and why (said as `replica: why; ...`).
#[derive(Debug, Default)]
pub struct Rejections(pub Vec<(String, StoreError)>);

impl std::fmt::Display for Rejections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (replica, why)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{replica}: {why}")?;
        }
        Ok(())
    }
}

/// What a replica holds under an identifier that is not this package.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimConflict {
    /// A manifest with other content (a replica written before claims existed).
    #[error("another package's manifest is stored there")]
    OtherManifest,
    /// Another package's claim.
    #[error("claimed by another package (manifest SHA-512 {0})")]
    ClaimedBy(String),
}

/// Why a replica cannot hold an object under the key a name gives it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyProblem {
    /// The key is longer than the store takes.
    #[error(
        "its key in the bucket would be {length} bytes long, and the store takes keys of at most {limit} bytes"
    )]
    TooLong {
        /// The key's length in bytes (the replica's prefix included).
        length: usize,
        /// The store's limit.
        limit: usize,
    },
    /// The name holds a character the keys of an OCFL root in a bucket cannot hold: they are
    /// stored as they are (as other OCFL readers expect), and the S3 client refuses it.
    #[error(
        "it holds the control character U+{:04X}, which the keys of an OCFL storage root in a bucket cannot hold",
        u32::from(*.0)
    )]
    Control(char),
    /// Any other key the client refuses (an empty, `.` or `..` segment).
    #[error("the S3 client refuses its key: {0}")]
    Refused(String),
}

/// Why an identifier has no package directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentifierProblem {
    /// The identifier is empty.
    #[error("the package identifier is empty")]
    Empty,
    /// Its escaped form is longer than a file name may be.
    #[error("the package identifier is too long ({0} bytes escaped; at most {max})", max = super::MAX_DIR_NAME)]
    TooLong(usize),
    /// Its escaped form is not one safe segment.
    #[error("identifier {0:?} maps to no safe directory")]
    Unsafe(String),
}

/// Why a package directory is refused before anything is written.
#[derive(Debug, thiserror::Error)]
pub enum PackageProblem {
    /// The directory cannot be walked.
    #[error("{0}")]
    Walk(#[from] walkdir::Error),
    /// Something in it is not a directory or a regular file.
    #[error(
        "{} is {kind}: a package holds only regular files (links are not followed)",
        path.display()
    )]
    NotRegular {
        /// The entry.
        path: PathBuf,
        /// What it is ("a symbolic link", "a FIFO"...).
        kind: &'static str,
    },
    /// A file of it cannot be reached safely.
    #[error("{0}")]
    Confined(#[from] ConfineError),
    /// The METS cannot be read, or has no identifier.
    #[error("{}: {problem}", path.display())]
    Mets {
        /// The METS document.
        path: PathBuf,
        /// What is wrong.
        problem: MetsProblem,
    },
    /// The identifier has no package directory.
    #[error("{0}")]
    Identifier(#[from] IdentifierProblem),
    /// The manifest cannot be stored.
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    /// The manifest names a file the METS does not list.
    #[error("{manifest}: {name:?} is not a file the METS lists")]
    Unlisted {
        /// The manifest, as shown.
        manifest: String,
        /// The name.
        name: String,
    },
    /// A file in the package folder, or one its METS lists, has no line in the manifest: its
    /// fixity cannot be verified.
    #[error("{name:?} has no line in the manifest")]
    NotInManifest {
        /// The package-relative name.
        name: String,
    },
    /// A file's bytes are not those its manifest line states.
    #[error("{name}: its SHA-512 is {found}, the manifest states {expected}")]
    Fixity {
        /// The package-relative name.
        name: String,
        /// The manifest's SHA-512.
        expected: String,
        /// The SHA-512 of the bytes read.
        found: String,
    },
    /// The METS states other bytes of a file than its manifest line does (its SIZE or its
    /// SHA-512): the package's two descriptions disagree.
    #[error("{name}: the METS states {what}, not what its manifest line and bytes have")]
    MetsDisagrees {
        /// The package-relative name.
        name: String,
        /// What the METS states.
        what: String,
    },
    /// A file could not be read to its end.
    #[error("{}: cannot be read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Why the store cannot take the METS of a package.
#[derive(Debug, thiserror::Error)]
pub enum MetsProblem {
    /// The strict METS reader refused it (at a line and byte offset).
    #[error("{0}")]
    Read(#[from] MetsError),
    /// There is no root element.
    #[error("no root element")]
    NoRoot,
    /// The root element has no `OBJID` (or an empty one).
    #[error("the root element has no OBJID")]
    NoIdentifier,
}

/// Why a manifest cannot be stored (or recorded by `rebuild-state`).
#[derive(Debug, thiserror::Error)]
#[error("{manifest}: {fault}")]
pub struct ManifestError {
    /// The manifest, as shown.
    pub manifest: String,
    /// What is wrong.
    #[source]
    pub fault: ManifestFault,
}

/// What is wrong with a manifest, with the byte offset of the line where it concerns one.
#[derive(Debug, thiserror::Error)]
pub enum ManifestFault {
    /// It cannot be read.
    #[error("{why}", why = crate::layout::describe_io(.0))]
    Io(#[from] io::Error),
    /// A line is not `<sha512>  <path>`.
    #[error("the line at byte {offset} ({text:?}) {reason}")]
    Malformed {
        /// The line's byte offset.
        offset: u64,
        /// The start of the line.
        text: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A line names a file outside the package.
    #[error(
        "the line at byte {offset} names {name:?}, which {reason}: it does not stay inside the package"
    )]
    Leaves {
        /// The line's byte offset.
        offset: u64,
        /// The name.
        name: String,
        /// Why it leaves.
        reason: NameError,
    },
    /// A line names the manifest itself.
    #[error("the line at byte {offset} names the manifest itself")]
    NamesItself {
        /// The line's byte offset.
        offset: u64,
    },
    /// Two lines name one file.
    #[error("{name:?} is named twice (byte {offset})")]
    Twice {
        /// The name.
        name: String,
        /// The second line's byte offset.
        offset: u64,
    },
}
