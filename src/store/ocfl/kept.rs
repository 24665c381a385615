//! Which package each version of an object holds, by the message webaip wrote when it
//! committed the version: `store put (...)` for the object's own package, `store put of <ID>,
//! made from this object's package (...)` for another package kept there (an AIP in its
//! submission's object). Callers read the messages from an object's reference head (the one
//! webaip recorded, or a majority's), never from a copy that is not trusted; so the state
//! database's record of where an AIP is can be found again without it ([`super::ops`] scans
//! for it).

use std::collections::HashMap;

use super::inventory::{Inventory, LogicalFile, Versions};
use crate::layout::{MANIFEST, METS};
use crate::store::{PackageFile, Store, StoreError};

/// How a version holding another package's files begins its message.
const KEPT_PREFIX: &str = "store put of ";
/// What follows that package's OBJID.
const KEPT_SUFFIX: &str = ", made from this object's package";

/// The message of a version holding package `package` in object `object`; `digest` is the
/// package manifest's SHA-512.
pub(crate) fn message(package: &str, object: &str, digest: &str) -> String {
    if package == object {
        format!("store put (manifest SHA-512 {digest})")
    } else {
        format!("{KEPT_PREFIX}{package}{KEPT_SUFFIX} (manifest SHA-512 {digest})")
    }
}

/// Whose package a version holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder<'a> {
    /// The object's own (its id is the package's OBJID), or a version webaip's messages do not
    /// name (written by other means).
    Own,
    /// Another package, kept in this object (its OBJID).
    Kept(&'a str),
}

/// Whose package version `n` of `inv` holds, by its message.
pub(crate) fn holder<'a>(inv: &'a Inventory, versions: &Versions, n: u32) -> Holder<'a> {
    let message = inv.versions.get(&versions.name(n)).and_then(|v| v.message.as_deref());
    let kept = message
        .and_then(|m| m.strip_prefix(KEPT_PREFIX))
        .and_then(|m| m.split_once(KEPT_SUFFIX))
        .map(|(id, _)| id)
        .filter(|id| !id.is_empty());
    kept.map_or(Holder::Own, Holder::Kept)
}

/// The versions holding `who`'s package, latest first.
pub(crate) fn versions_of<'a>(
    inv: &'a Inventory,
    versions: &'a Versions,
    who: Holder<'a>,
) -> impl Iterator<Item = u32> + 'a {
    (1..=versions.head).rev().filter(move |n| holder(inv, versions, *n) == who)
}

/// The SHA-512 of the METS in version `n` (lower case), if it has one.
pub(crate) fn mets_digest(inv: &Inventory, versions: &Versions, n: u32) -> Option<String> {
    inv.files_of(versions, n).into_iter().find(|f| f.path == METS).map(|f| f.sha512)
}

/// Whether `files` (a package's: path and SHA-512) are exactly version `n`'s.
pub(crate) fn same_files(
    inv: &Inventory,
    versions: &Versions,
    n: u32,
    files: &[LogicalFile],
) -> bool {
    let held = inv.files_of(versions, n);
    let mut ours: Vec<(&str, String)> =
        files.iter().map(|f| (f.path.as_str(), f.sha512.to_ascii_lowercase())).collect();
    ours.sort();
    ours.len() == held.len()
        && ours.iter().zip(&held).all(|((p, d), h)| *p == h.path && *d == h.sha512)
}

/// Whether version `n` has files besides its METS and manifest, and `files` has each of them
/// at its path with its digest.
pub(super) fn shares(inv: &Inventory, versions: &Versions, n: u32, files: &[PackageFile]) -> bool {
    let ours: HashMap<&str, &str> =
        files.iter().map(|f| (f.rel.as_str(), f.sha512.as_str())).collect();
    let held = inv.files_of(versions, n);
    let mut kept = held.iter().filter(|f| f.path != METS && f.path != MANIFEST).peekable();
    kept.peek().is_some()
        && kept
            .all(|f| ours.get(f.path.as_str()).is_some_and(|d| d.eq_ignore_ascii_case(&f.sha512)))
}

/// What an object's versions hold, by their messages (read from its reference head).
#[derive(Debug, Clone, Default)]
pub(crate) struct Holdings {
    /// The latest version holding the object's own package.
    pub own: Option<u32>,
    /// The object's head.
    pub head: u32,
    /// Each other package kept in the object (its OBJID), at the latest version holding it,
    /// latest first.
    pub kept: Vec<(String, u32)>,
}

impl Holdings {
    /// The package version `n` holds when it is another's.
    pub(crate) fn kept_at(&self, n: u32) -> Option<&str> {
        self.kept.iter().find(|(_, v)| *v == n).map(|(id, _)| id.as_str())
    }
}

impl Store {
    /// Which package each version of object `object` holds, read from its reference head
    /// (the rule `store get` finds a package by when the state database does not say).
    pub(crate) fn holdings(&self, object: &str) -> Result<Holdings, StoreError> {
        let chosen = self.reference_head(object)?;
        let (inv, versions) = (&chosen.head.inv, &chosen.head.versions);
        let mut kept: Vec<(String, u32)> = Vec::new();
        for n in (1..=versions.head).rev() {
            if let Holder::Kept(id) = holder(inv, versions, n)
                && !kept.iter().any(|(k, _)| k == id)
            {
                kept.push((id.to_string(), n));
            }
        }
        let own = versions_of(inv, versions, Holder::Own).next();
        Ok(Holdings { own, head: versions.head, kept })
    }

    /// The version of object `submission` an AIP claiming it was made from, if the claim
    /// holds: a version holding the object's own package whose METS has the SHA-512 the AIP
    /// records (`mets_sha512`), and whose every file but its METS and manifest the AIP has
    /// (`files`), read from the object's reference head. An OBJID alone names any package;
    /// the digest names the submission the AIP was made from.
    pub(super) fn made_from(
        &self,
        submission: &str,
        mets_sha512: &str,
        files: &[PackageFile],
    ) -> Option<u32> {
        let chosen = self.reference_head(submission).ok()?;
        let (inv, versions) = (&chosen.head.inv, &chosen.head.versions);
        let mut own = versions_of(inv, versions, Holder::Own);
        own.find(|n| {
            mets_digest(inv, versions, *n).is_some_and(|d| d.eq_ignore_ascii_case(mets_sha512))
                && shares(inv, versions, *n, files)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_names_the_package_it_keeps_and_only_webaips_wording_counts() {
        let kept = message("urn:aip", "urn:sip", "ab");
        assert_eq!(
            kept,
            "store put of urn:aip, made from this object's package (manifest SHA-512 ab)"
        );
        fn strip(m: &str) -> Option<&str> {
            m.strip_prefix(KEPT_PREFIX).and_then(|m| m.split_once(KEPT_SUFFIX)).map(|(id, _)| id)
        }
        assert_eq!(strip(&kept), Some("urn:aip"));
        assert_eq!(strip(&message("urn:sip", "urn:sip", "ab")), None);
        assert_eq!(strip("store put of urn:x"), None);
    }
}
