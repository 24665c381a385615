//! What a storage root must do, whichever kind it is: a file system folder, whose versions
//! are committed by building the new object tree beside the root and exchanging it in one
//! rename ([`super::fs`]), or a bucket (prefix), where nothing can be renamed and a version
//! becomes visible with its root inventory, written last ([`super::bucket`]). The inventory,
//! the layout and the checks are the same for both; only the writing differs.

use std::fs::File;

use super::bucket::BucketRoot;
use super::fs::FsRoot;
use crate::store::StoreError;
use crate::store::replica::Replica;

/// One replica's storage root.
#[derive(Debug, Clone)]
pub(crate) enum OcflRoot {
    /// A folder: versions committed by exchanging object trees.
    Fs(FsRoot),
    /// A bucket (prefix): versions committed by writing the root inventory last.
    Bucket(BucketRoot),
}

impl OcflRoot {
    /// The replica's name.
    pub(crate) fn name(&self) -> &str {
        match self {
            OcflRoot::Fs(f) => &f.name,
            OcflRoot::Bucket(b) => &b.name,
        }
    }

    /// The object's lock, held until the returned file is dropped (blocking until free).
    pub(crate) fn lock(&self, id: &str) -> Result<File, StoreError> {
        match self {
            OcflRoot::Fs(f) => f.lock(id),
            OcflRoot::Bucket(b) => b.lock(id),
        }
    }

    /// Makes the storage root when it is absent or empty (`r` is the replica it is).
    pub(crate) fn ensure_root(&self, r: &dyn Replica) -> Result<(), StoreError> {
        match self {
            OcflRoot::Fs(f) => f.ensure_root(),
            OcflRoot::Bucket(b) => b.ensure_root(r),
        }
    }
}
