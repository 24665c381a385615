//! The AIP's files: the submission's, hard-linked where the file system allows, else copied
//! and verified against the manifest; and the AIP's manifest.
//!
//! What the AIP takes is what the submission's manifest lists (the audit has checked the
//! manifest against the METS and every file's SHA-512). A submission without a manifest (one
//! another tool wrote) gives the files its METS fileSec names by relative `href`, each a
//! regular file inside it, with the METS's CHECKSUM (which the audit verifies); those named by
//! URL are kept where they are. Each file is looked at without
//! following links before the audit ([`snapshot`]) and again after the AIP is assembled: a file
//! replaced or written to meanwhile (another inode, size or modification time) fails the
//! ingest, so the AIP never holds bytes other than those the audit verified.

use std::collections::HashSet;
use std::fs::{File, Metadata};
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::formats::digest::Sha512;

use super::{IngestError, io_err};
use crate::formats::digest::{FixityAlgorithm, sha512_read};
use crate::layout::{self, MANIFEST, METS, ManifestReader};
use crate::mets::listing::{Nested, read_listing};
use crate::mets::reader::MetsReader;

/// One file of the submission as it was before the audit.
#[derive(Debug, Clone)]
pub(super) struct Before {
    /// Its name in the package (confined).
    pub name: String,
    /// Its SHA-512 as the manifest (else the METS's CHECKSUM) states it, or as read here when
    /// neither states one.
    pub sha512: String,
    ident: Identity,
}

/// The submission's files, as the manifest lists them.
#[derive(Debug, Default)]
pub(super) struct Snapshot {
    pub files: Vec<Before>,
    /// Bytes of the submission's METS and manifest.
    pub mets_and_manifest_bytes: u64,
    /// The submission's METS as it was before the audit: the AIP's METS is the audited one
    /// edited, so it must not change until the AIP is in place either.
    mets: Option<Identity>,
    /// Files taken whose SHA-512 no manifest or `<file>` CHECKSUM states: read here, checked
    /// against nothing.
    pub unverified: Vec<String>,
}

/// What identifies a file's content for this check: device, inode, size, modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
}

fn ident(m: &Metadata) -> Identity {
    Identity {
        dev: m.dev(),
        ino: m.ino(),
        size: m.len(),
        mtime: m.mtime(),
        mtime_nsec: m.mtime_nsec(),
    }
}

/// The submission's files as its manifest lists them. A manifest the audit will refuse
/// (malformed lines, names outside the package) gives what it can: the audit says why.
pub(super) fn snapshot(ssip: &Path) -> Result<Snapshot, IngestError> {
    let mut snap = Snapshot::default();
    for name in [METS, MANIFEST] {
        snap.mets_and_manifest_bytes += layout::metadata_in(ssip, name).map_or(0, |m| m.len());
    }
    snap.mets = layout::metadata_in(ssip, METS).ok().map(|m| ident(&m));
    let manifest = match layout::open_in(ssip, MANIFEST) {
        Ok(m) => m,
        Err(e) if e.is_not_found() => {
            from_mets(ssip, &mut snap)?;
            return Ok(snap);
        }
        Err(_) => return Ok(snap),
    };
    let path = ssip.join(MANIFEST);
    for line in ManifestReader::new(BufReader::new(manifest)) {
        let Ok(line) = line.map_err(io_err(&path))? else { continue };
        let Ok(name) = line.confined else { continue };
        if name == METS {
            continue;
        }
        let Ok(m) = layout::metadata_in(ssip, &name) else { continue };
        snap.files.push(Before { name, sha512: line.sha512, ident: ident(&m) });
    }
    Ok(snap)
}

/// The files of a submission without a manifest, as its METS fileSec names them. A name that
/// leaves the submission, or a link, FIFO or other non-regular file, is refused here, naming
/// its `<file>`; a file that is not there is left to the audit, which reports it missing, and a
/// METS the listing cannot read to the audit, which says why.
fn from_mets(ssip: &Path, snap: &mut Snapshot) -> Result<(), IngestError> {
    let Ok(file) = layout::open_in(ssip, METS) else { return Ok(()) };
    let reader = MetsReader::lenient(BufReader::with_capacity(256 * 1024, file));
    let Ok(listing) = read_listing(reader, Nested::Skip) else { return Ok(()) };
    let refused = |id: &str, source: layout::ConfineError| IngestError::Location {
        mets: ssip.join(METS),
        id: id.to_string(),
        source,
    };
    let mut seen = HashSet::new();
    for f in &listing.files {
        let Some(href) = f.href.as_deref() else { continue };
        if layout::uri_scheme(href).is_some() {
            continue; // kept elsewhere: the audit lists it as such, and the report names it
        }
        let name = layout::confined_name(href).map_err(|reason| {
            let root = ssip.to_path_buf();
            refused(&f.id, layout::ConfineError::Name { name: href.into(), reason, root })
        })?;
        if name == METS || name == MANIFEST || !seen.insert(name.clone()) {
            continue;
        }
        let m = match layout::metadata_in(ssip, &name) {
            Ok(m) => m,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(refused(&f.id, e)),
        };
        // The audit verifies the digest the METS states (its CHECKSUM by CHECKSUMTYPE, else its
        // PREMIS digest) against the bytes: a stated SHA-512 it lets pass is the file's, and a
        // file changed since is caught by its identity. Another algorithm's digest verifies
        // the bytes as well, but the manifest wants their SHA-512, read here.
        let stated = f.stated_fixity().and_then(Result::ok);
        if stated.is_none() {
            snap.unverified.push(name.clone());
        }
        let sha512 = match stated.filter(|s| s.algorithm == FixityAlgorithm::Sha512) {
            Some(s) => s.value.to_string(),
            None => {
                let input = layout::open_in(ssip, &name).map_err(|e| refused(&f.id, e))?;
                sha512_read(input).map_err(io_err(&ssip.join(&name)))?.1
            }
        };
        snap.files.push(Before { name, sha512, ident: ident(&m) });
    }
    Ok(())
}

/// What placing the files did.
#[derive(Debug, Default)]
pub(super) struct Placed {
    pub linked: u64,
    pub copied: u64,
    /// Bytes of the files placed.
    pub bytes: u64,
}

/// Puts every file of the snapshot into the AIP at `root`: a hard link, else a verified copy.
pub(super) fn place(ssip: &Path, root: &Path, snap: &Snapshot) -> Result<Placed, IngestError> {
    let mut placed = Placed::default();
    for f in &snap.files {
        if let Some((dir, _)) = f.name.rsplit_once('/') {
            layout::create_dirs_in(root, dir)?;
        }
        let (src, dst) = (ssip.join(&f.name), root.join(&f.name));
        match std::fs::hard_link(&src, &dst) {
            Ok(()) => {
                let m = layout::metadata_in(root, &f.name)?;
                if ident(&m) != f.ident {
                    return Err(changed(&src));
                }
                placed.linked += 1;
            }
            Err(e) if cannot_link(&e) => {
                copy_verified(ssip, root, f)?;
                placed.copied += 1;
            }
            Err(e) => return Err(io_err(&dst)(e)),
        }
        placed.bytes += f.ident.size;
    }
    Ok(placed)
}

/// Errors of `link(2)` that mean "not here" (another file system, or one without hard
/// links), not that something is wrong.
fn cannot_link(e: &io::Error) -> bool {
    use rustix::io::Errno;
    let errno = e.raw_os_error().map(Errno::from_raw_os_error);
    matches!(errno, Some(Errno::XDEV | Errno::PERM | Errno::NOTSUP | Errno::MLINK))
}

fn changed(path: &Path) -> IngestError {
    IngestError::Changed {
        path: path.to_path_buf(),
        what: "another file, size or modification time than when it was audited".into(),
    }
}

/// Copies a file the audit verified, hashing it on the way: a copy whose SHA-512 is not the
/// manifest's fails the ingest.
fn copy_verified(ssip: &Path, root: &Path, f: &Before) -> Result<(), IngestError> {
    let src = ssip.join(&f.name);
    let mut input = layout::open_in(ssip, &f.name)?;
    if ident(&input.metadata().map_err(io_err(&src))?) != f.ident {
        return Err(changed(&src));
    }
    let dst = root.join(&f.name);
    let mut out = layout::create_in(root, &f.name)?;
    let mut h = Sha512::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = input.read(&mut buf).map_err(io_err(&src))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(io_err(&dst))?;
    }
    out.sync_all().map_err(io_err(&dst))?;
    if crate::formats::digest::hex(&h.finalize()) != f.sha512 {
        return Err(changed(&src));
    }
    Ok(())
}

/// Writes the AIP's manifest: the submission's files with their SHA-512s, and the AIP's METS
/// with its own. Returns the bytes the AIP adds (its METS and manifest).
pub(super) fn write_manifest(root: &Path, snap: &Snapshot) -> Result<u64, IngestError> {
    let mets = root.join(METS);
    let (mets_len, mets_sha) = crate::formats::digest::sha512_file(&mets).map_err(io_err(&mets))?;
    let mut lines: Vec<(String, String)> =
        snap.files.iter().map(|f| (f.name.clone(), f.sha512.clone())).collect();
    lines.push((METS.to_string(), mets_sha));
    lines.sort();
    let path = root.join(MANIFEST);
    let mut text = String::new();
    for (name, sha) in &lines {
        text.push_str(&layout::manifest_line(sha, name));
    }
    let mut out = File::create(&path).map_err(io_err(&path))?;
    out.write_all(text.as_bytes()).map_err(io_err(&path))?;
    out.sync_all().map_err(io_err(&path))?;
    Ok(mets_len + text.len() as u64)
}

/// Fails when a submission file is no longer what the snapshot saw.
pub(super) fn verify_unchanged(ssip: &Path, snap: &Snapshot) -> Result<(), IngestError> {
    let mets = layout::metadata_in(ssip, METS).ok().map(|m| ident(&m));
    if mets != snap.mets {
        return Err(changed(&ssip.join(METS)));
    }
    for f in &snap.files {
        let m = layout::metadata_in(ssip, &f.name)?;
        if ident(&m) != f.ident {
            return Err(changed(&ssip.join(&f.name)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submission() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("content")).unwrap();
        std::fs::write(dir.path().join("content/a.warc"), b"WARC").unwrap();
        std::fs::write(dir.path().join(METS), b"<mets/>").unwrap();
        let manifest = layout::manifest_line(&"0".repeat(128), "content/a.warc");
        std::fs::write(dir.path().join(MANIFEST), manifest).unwrap();
        dir
    }

    #[test]
    fn a_mets_replaced_after_the_snapshot_fails_the_check() {
        let dir = submission();
        let snap = snapshot(dir.path()).unwrap();
        verify_unchanged(dir.path(), &snap).unwrap();
        // Replaced by another file of the same size (a rename over it, as an editor saves).
        std::fs::write(dir.path().join("new.xml"), b"<METS/>").unwrap();
        std::fs::rename(dir.path().join("new.xml"), dir.path().join(METS)).unwrap();
        let err = verify_unchanged(dir.path(), &snap).unwrap_err();
        assert!(matches!(err, IngestError::Changed { ref path, .. } if path.ends_with(METS)));
        assert!(err.to_string().contains("METS.xml: changed while it was ingested"), "{err}");
    }

    #[test]
    fn a_content_file_written_to_after_the_snapshot_fails_the_check() {
        let dir = submission();
        let snap = snapshot(dir.path()).unwrap();
        std::fs::write(dir.path().join("content/a.warc"), b"WARC/1.1").unwrap();
        let err = verify_unchanged(dir.path(), &snap).unwrap_err();
        assert!(err.to_string().contains("a.warc: changed while it was ingested"), "{err}");
    }
}
