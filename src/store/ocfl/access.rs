//! Record access (`get --store`) on OCFL replicas: where a stored package's file is, on each
//! replica, for a ranged read of one record.

use super::kept::{self, Holder};
use super::layout::object_path;
use crate::store::replica::Replica;
use crate::store::{Store, StoreError, StoreRefusal};

impl Store {
    /// The key of logical file `name` of package `identifier` on each replica whose head
    /// holds it, in the configuration's order: the version holding the package (its own
    /// object's latest version holding it, or the version of another object that keeps it, as
    /// `store get` finds it), its content path read from each replica's head inventory that
    /// webaip recorded (the reference head's file digest decides which content is meant).
    /// Content paths never leave the object: the inventory reader refuses `..`, empty and
    /// absolute segments.
    pub(crate) fn ocfl_range_keys(
        &self,
        identifier: &str,
        name: &str,
    ) -> Result<Vec<(&dyn Replica, String)>, StoreError> {
        let (object, version) = self.resolve(identifier, None)?;
        let chosen = self.reference_head(&object)?;
        if let Some(refusal) = chosen.rolled_back().filter(|_| version.is_none()) {
            return Err(refusal.into());
        }
        let best = &chosen.head;
        let own = || kept::versions_of(&best.inv, &best.versions, Holder::Own).next();
        let n = version.unwrap_or_else(|| own().unwrap_or(best.versions.head));
        let files = best.inv.files_of(&best.versions, n);
        let Some(file) = files.iter().find(|f| f.path == name) else {
            let (identifier, file) = (identifier.into(), Some(name.to_string()));
            return Err(StoreRefusal::NoSuchFile { identifier, file }.into());
        };
        let obj = object_path(&object);
        let mut keys = Vec::new();
        for (r, head) in self.replicas.iter().zip(&chosen.heads) {
            let Some(h) = head.as_ref().filter(|h| h.versions.head >= n) else { continue };
            if let Some(path) = h.inv.content_path(&file.sha512) {
                keys.push((r.as_ref(), format!("{obj}/{path}")));
            }
        }
        Ok(keys)
    }
}
