//! What a package's METS states that the ARCs rebuilt from it are checked against: each
//! content and viral container's SHA-512 (checked before anything is rebuilt from it, as
//! `export wacz` checks the containers it copies), and the SHA-512 of each ARC the containers
//! were migrated from (its PREMIS object), which the file rebuilt must have.

use std::collections::HashMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::RebuildError;
use crate::layout;
use crate::mets::listing::{Nested, read_listing};
use crate::mets::reader::MetsReader;

/// A package's containers, checked, and the digests its METS states of its ARCs.
#[derive(Debug, Clone, Default)]
pub struct PackageStatements {
    /// The content containers, then the viral ones, each as the METS lists it and with the
    /// SHA-512 it states.
    pub containers: Vec<PathBuf>,
    /// The SHA-512 of each file migrated from (an ARC's identifier is its name as migrated)
    /// a PREMIS object describes: the objects of the package's own files are left out.
    pub objects: HashMap<String, String>,
}

/// Reads the METS of the package at `root`; checks each content and viral container it lists
/// against the SHA-512 it states (`progress` hears of bytes hashed). A container that differs,
/// or of which no SHA-512 is stated, is an error: nothing is rebuilt from the package.
pub fn package_statements(
    root: &Path,
    progress: &dyn Fn(u64),
) -> Result<PackageStatements, RebuildError> {
    let mets = root.join(layout::METS);
    let file = layout::open_regular(&mets).map_err(|e| package_error(&mets, e.to_string()))?;
    // Strict: a METS with a DOCTYPE, an entity reference or a NUL is not read further.
    let reader = MetsReader::strict(BufReader::with_capacity(64 * 1024, file));
    let listing =
        read_listing(reader, Nested::Skip).map_err(|e| package_error(&mets, e.to_string()))?;
    let mut found: Vec<(String, Option<String>)> = Vec::new();
    for f in listing.files.iter().filter(|f| f.is_container()) {
        let Some(href) = f.href.as_deref() else { continue };
        let rel = layout::confined_name(href)
            .map_err(|e| package_error(&mets, format!("file name {href:?}: {e}")))?;
        let ours = [layout::CONTENT_DIR, layout::VIRAL_DIR]
            .iter()
            .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')));
        if ours && !found.iter().any(|(r, _)| *r == rel) {
            found.push((rel, f.stated_sha512()));
        }
    }
    described_every_container(root, &mets, &found)?;
    // Content first (the containers naming the ARCs), then viral; by name within each.
    found.sort_by_key(|(rel, _)| (rel.starts_with(layout::VIRAL_DIR), rel.clone()));
    let mut containers = Vec::new();
    for (rel, stated) in found {
        containers.push(check_container(root, &rel, stated.as_deref(), progress)?);
    }
    // The package's own files (its containers, logs) are not what it was migrated from.
    let own = |id: &str| listing.files.iter().any(|f| f.href.as_deref() == Some(id));
    let objects = listing
        .objects
        .iter()
        .filter(|o| !own(&o.id))
        .filter_map(|o| Some((o.id.clone(), o.sha512()?.to_string())))
        .collect();
    Ok(PackageStatements { containers, objects })
}

/// Hashes the container `rel` of the package (refused when it is no regular file inside it)
/// and compares it with the SHA-512 the METS states.
fn check_container(
    root: &Path,
    rel: &str,
    stated: Option<&str>,
    progress: &dyn Fn(u64),
) -> Result<PathBuf, RebuildError> {
    let path = root.join(rel);
    let Some(stated) = stated else {
        return Err(RebuildError::Unstated { container: path });
    };
    let file = layout::open_in(root, rel)
        .map_err(|e| RebuildError::Open { path: path.clone(), source: std::io::Error::other(e) })?;
    let (len, found) = crate::formats::digest::sha512_at(&file)
        .map_err(|source| RebuildError::Open { path: path.clone(), source })?;
    progress(len);
    if found != stated {
        return Err(RebuildError::Changed { container: path, stated: stated.into(), found });
    }
    Ok(path)
}

/// A package whose METS describes no container, or not one that `content/` holds (or its
/// manifest lists), is not what the METS says: nothing is rebuilt from it.
fn described_every_container(
    root: &Path,
    mets: &Path,
    found: &[(String, Option<String>)],
) -> Result<(), RebuildError> {
    if found.is_empty() {
        return Err(package_error(
            mets,
            "describes no WARC container in content/ or viral/".into(),
        ));
    }
    let on_disk =
        layout::package_containers(root).map_err(|e| package_error(mets, e.to_string()))?;
    match on_disk.iter().find(|rel| !found.iter().any(|(f, _)| f == *rel)) {
        Some(rel) => Err(package_error(mets, format!("does not describe the container {rel}"))),
        None => Ok(()),
    }
}

fn package_error(mets: &Path, what: String) -> RebuildError {
    RebuildError::Package { mets: mets.to_path_buf(), what }
}
