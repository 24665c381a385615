//! Replicas as OCFL 1.1 storage roots (a replica's `layout = "ocfl"`): each package is an
//! OCFL object whose id is its METS OBJID, and each put of other content under that id is a
//! new version that adds only the files with new digests.
//!
//! One home for OCFL: the inventory ([`inventory`]: model, the one reader, validation, the
//! next version), where objects live ([`layout`]), what a storage root must do ([`root`]):
//! how a version is committed on a file system ([`fs`]) or in a bucket ([`bucket`]), and
//! what `check` finds in a replica's objects ([`check`]), and how an object is removed
//! ([`remove`]). The store's
//! replicas ([`super::replica`]) carry the bytes; the transfers and their verification are
//! the store's own; [`ops`] and [`repair`] are the commands.
//!
//! Why not the `rocfl` crate (1.7): it is a command-line tool first, whose library API is
//! half documented; its S3 backend is built on rusoto, which is unmaintained since 2022 and
//! would sit beside the `object_store` client the store already uses (with its several
//! endpoints per store and server-verified checksums); it reads each object through its own
//! staging and locking conventions, not through the store's confined, link-refusing file
//! access; and it has no way to commit a version by exchanging object trees. What webaip
//! needs of OCFL is small (an inventory, a layout, a commit), so it is written here, and
//! checked against ocfl-py by the tests.

mod access;
pub(crate) mod anchor;
pub(crate) mod bucket;
pub(crate) mod check;
pub(crate) mod fixity;
pub(crate) mod fs;
pub(crate) mod inventory;
pub(crate) mod kept;
mod lagging;
pub(crate) mod layout;
pub(crate) mod migrate;
pub(crate) mod ops;
pub(crate) mod put;
mod rebuild;
pub(crate) mod remove;
pub(crate) mod repair;
mod requires;
pub(crate) mod root;

pub use anchor::Provenance;
pub use check::{FindingKind, ObjectOnReplica, OcflFinding};
pub use migrate::{MigrateRefused, MigrateReport, MigratedPackage};
pub use ops::{ObjectLog, OcflCheckReport, VersionEntry};
pub use repair::{Adopted, ObjectRepair, OcflRepairReport};

/// Why an inventory (or its sidecar) is not one this store accepts.
#[derive(Debug, thiserror::Error)]
pub enum InventoryFault {
    /// Larger than an inventory is read.
    #[error("larger than {limit} bytes, the most an inventory is read")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Not JSON of an inventory's shape.
    #[error("not an OCFL inventory: {0}")]
    Json(#[source] serde_json::Error),
    /// The id is empty.
    #[error("its id is empty")]
    NoId,
    /// Another object's id.
    #[error("its id is {found:?}, not {expected:?}")]
    OtherId {
        /// The id in the inventory.
        found: String,
        /// The id the object's place stands for.
        expected: String,
    },
    /// Not OCFL 1.1's inventory type.
    #[error("type {0:?} is not OCFL 1.1's inventory type")]
    Type(String),
    /// Another digest algorithm.
    #[error("digestAlgorithm {0:?}: this store reads sha512 inventories only")]
    Algorithm(String),
    /// A content directory OCFL forbids.
    #[error("contentDirectory {0:?} is not one path segment")]
    ContentDirectory(String),
    /// A version name that is not `vN` (N from 1).
    #[error("version name {0:?} is not v1, v2, ...")]
    VersionName(String),
    /// Versions missing between 1 and the last.
    #[error("its versions are not v1 to vN without a gap")]
    NotContiguous,
    /// Version names of more than one padding style.
    #[error("its version names mix zero-padding styles")]
    Padding,
    /// `head` is not the last version.
    #[error("head {0:?} is not its last version")]
    Head(String),
    /// A digest that is not a SHA-512, or one given twice.
    #[error("digest {0:?} is not a SHA-512 in hex, or is given twice")]
    Digest(String),
    /// A path OCFL forbids (empty segment, `.`, `..`, leading or trailing `/`).
    #[error("path {0:?} is not a valid OCFL path")]
    Path(String),
    /// A path given twice, or another path's directory.
    #[error("path {0:?} is given twice or conflicts with another")]
    Conflict(String),
    /// A content path outside its version's content directory.
    #[error("content path {0:?} is not in a version's content directory")]
    ContentPath(String),
    /// A manifest digest no version uses.
    #[error("manifest digest {0} is in no version's state")]
    Unused(String),
    /// A version's date is not RFC 3339.
    #[error("version {version}: created {created:?} is not an RFC 3339 date")]
    Created {
        /// The version.
        version: String,
        /// What it says.
        created: String,
    },
    /// A user without a name.
    #[error("version {0}: its user has no name")]
    User(String),
    /// A state digest the manifest does not hold.
    #[error("version {version}: state digest {digest} is not in the manifest")]
    NotInManifest {
        /// The version.
        version: String,
        /// The digest.
        digest: String,
    },
    /// The sidecar is not `<sha512>  inventory.json`.
    #[error("its sidecar is not a SHA-512 and \"inventory.json\"")]
    Sidecar,
    /// The sidecar names another digest than the inventory's.
    #[error("its SHA-512 is {found}, its sidecar says {expected}")]
    SidecarMismatch {
        /// The inventory's SHA-512.
        found: String,
        /// The sidecar's.
        expected: String,
    },
}
