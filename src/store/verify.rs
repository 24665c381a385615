//! What `store put` verifies of a package before it stores anything, in both layouts.
//!
//! A put is bit-level storage: it verifies what a storage system verifies. Every file's
//! SHA-512 against the package manifest (hashed in the copy's own read when the layout can
//! stage there, the files in parallel), every file in the folder on the manifest, every file
//! the METS lists on it, and the METS itself valid (schemas, profile) and consistent. The
//! record-level audit (containers' records, payload digests) runs only when asked
//! (`store put --audit`, and the puts of `ingest --store`, which audit their own output).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Write};
use std::path::Path;

use serde::Serialize;

use super::{LocalListed, LocalListing, PackageFile, PackageProblem, StoreError, StoreRefusal};
use crate::audit::{AuditOptions, Tee, Verdict, judge_mets_alone};
use crate::formats::digest::{FixityAlgorithm, Sha512, hex};
use crate::layout::{MANIFEST, METS};

/// How `store put` verifies a package before it stores anything.
#[derive(Debug, Clone, Default)]
pub struct PutOptions {
    /// How the METS is validated (schemas, profile, E-ARK), and the audit's options with
    /// `audit`.
    pub check: AuditOptions,
    /// Also audit the package record by record (`store put --audit`: every container's
    /// records, their payload digests), as `webaip audit` does; a package it does not admit
    /// is refused.
    pub audit: bool,
}

/// What a put verified of the package it stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PutVerification {
    /// Every file's SHA-512 against the manifest, the METS valid and consistent; the
    /// containers' records not audited.
    Fixity,
    /// Also the full audit (`--audit`, or a METS stating digests by another algorithm or of
    /// byte ranges): every container's records, their payload digests.
    Audited,
}

impl PutVerification {
    /// What it verified, in words.
    pub fn describe(self) -> &'static str {
        match self {
            PutVerification::Fixity => "fixity and METS verified; records not audited",
            PutVerification::Audited => "audited (fixity, METS and records)",
        }
    }
}

/// Bytes read from a package file at a time: large reads keep the disk streaming and the
/// hash and copy loops tight.
const READ_BUF: usize = 4 << 20;

/// Refuses a package whose METS is not valid or not consistent (the audit's verdict on the
/// METS alone), or whose folder holds a file the manifest does not list, or whose METS lists
/// a local file the manifest does not. `files` are the manifest's files (manifest included).
pub(super) fn refuse_bad_description(
    dir: &Path,
    files: &[PackageFile],
    listed: &[LocalListed],
    check: &AuditOptions,
) -> Result<(), StoreError> {
    let judged = judge_mets_alone(dir, check)
        .map_err(|source| StoreRefusal::Unauditable { dir: dir.into(), source })?;
    if judged.verdict != Verdict::Intact {
        return Err(StoreRefusal::Damaged {
            dir: dir.into(),
            verdict: judged.verdict.to_string(),
            errors: judged.errors,
            inconsistencies: judged.inconsistencies,
            unchecked: 0,
        }
        .into());
    }
    let on_manifest: BTreeSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    let refuse = |name: String| -> StoreError {
        StoreRefusal::Package { dir: dir.into(), problem: PackageProblem::NotInManifest { name } }
            .into()
    };
    if !on_manifest.contains(METS) {
        return Err(refuse(METS.into()));
    }
    for l in listed {
        if !on_manifest.contains(l.name.as_str()) {
            return Err(refuse(l.name.clone()));
        }
    }
    refuse_mets_disagreeing(dir, files, listed)?;
    for e in walkdir::WalkDir::new(dir).follow_links(false).min_depth(1) {
        let e = e.map_err(|e| StoreRefusal::Package { dir: dir.into(), problem: e.into() })?;
        if e.file_type().is_dir() {
            continue;
        }
        let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
        let rel = rel.to_string_lossy().replace('\\', "/");
        if !on_manifest.contains(rel.as_str()) {
            return Err(refuse(rel));
        }
    }
    Ok(())
}

/// Whether the METS states something of a file that only the full audit can hold against its
/// bytes: a digest by another algorithm than the manifest's SHA-512 (or by one not named), or a
/// byte range of a file, or nested files (the records of a full listing, with their payload
/// digests). Such a package is audited whole by a put.
pub(super) fn needs_audit(listed: &LocalListing) -> bool {
    listed.nested > 0
        || listed.files.iter().any(|l| {
            let f = &l.listed;
            let other_digest = match f.stated_fixity() {
                None => false,
                Some(Ok(stated)) => stated.algorithm != FixityAlgorithm::Sha512,
                Some(Err(_)) => true,
            };
            other_digest || f.begin.is_some() || f.end.is_some()
        })
}

/// Refuses a package whose METS states another SIZE or SHA-512 of a file than its manifest
/// line (whose SHA-512 the bytes are checked against, and whose size the file has): a put that
/// does not audit the records must not store a package that contradicts its own METS.
fn refuse_mets_disagreeing(
    dir: &Path,
    files: &[PackageFile],
    listed: &[LocalListed],
) -> Result<(), StoreError> {
    let by_name: BTreeMap<&str, &PackageFile> = files.iter().map(|f| (f.rel.as_str(), f)).collect();
    let disagree = |name: &str, what: String| -> StoreError {
        let problem = PackageProblem::MetsDisagrees { name: name.into(), what };
        StoreRefusal::Package { dir: dir.into(), problem }.into()
    };
    for l in listed {
        let Some(file) = by_name.get(l.name.as_str()) else { continue };
        if let Some(size) = l.listed.size
            && size != file.size
        {
            return Err(disagree(&l.name, format!("SIZE={size} ({} bytes found)", file.size)));
        }
        if let Some(stated) = l.listed.stated_sha512()
            && !stated.eq_ignore_ascii_case(&file.sha512)
        {
            return Err(disagree(&l.name, format!("SHA-512 {stated}")));
        }
    }
    Ok(())
}

/// Reads every file of `files` once, in parallel, and refuses the package unless each has
/// its manifest SHA-512. With `tee`, each file's bytes are written to it in the same read
/// (what it asks for), then its digest told; a file `tee` checks later is not read here. The
/// manifest itself was hashed as it was read.
pub(super) fn verify_fixity(
    dir: &Path,
    files: &[PackageFile],
    tee: Option<&dyn Tee>,
) -> Result<(), StoreError> {
    let later = |f: &PackageFile| tee.is_some_and(|t| t.checks_later(&f.rel));
    let mut order: Vec<&PackageFile> =
        files.iter().filter(|f| f.rel != MANIFEST && !later(f)).collect();
    // The largest first, so that no core is left with a large file at the end.
    order.sort_by_key(|f| std::cmp::Reverse(f.size));
    let refuse =
        |problem| -> StoreError { StoreRefusal::Package { dir: dir.into(), problem }.into() };
    let found = super::schedule::in_order(&order, |f| check_one(dir, f, tee));
    found.into_iter().collect::<Result<(), _>>().map_err(refuse)
}

/// One file's SHA-512 against its manifest line, in one read that also feeds `tee`.
pub(in crate::store) fn check_one(
    dir: &Path,
    f: &PackageFile,
    tee: Option<&dyn Tee>,
) -> Result<(), PackageProblem> {
    let read_error = |source: io::Error| PackageProblem::Read { path: dir.join(&f.rel), source };
    let mut file = crate::layout::open_in(dir, &f.rel)?;
    let mut out = tee.and_then(|t| t.open(&f.rel));
    let mut hasher = Sha512::new();
    // No larger than the file: a zeroed buffer of READ_BUF for each of many small files
    // costs more than hashing them.
    let mut buf = vec![0u8; (f.size as usize).saturating_add(1).clamp(64 << 10, READ_BUF)];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(e)),
        };
        hasher.update(&buf[..n]);
        if let Some(o) = out.as_mut() {
            // The tee's writer keeps its own failures (a replica's stage) and goes on.
            o.write_all(&buf[..n]).map_err(read_error)?;
        }
    }
    let opened = out.is_some();
    drop(out);
    let found = hex(&hasher.finalize());
    if let (Some(t), true) = (tee, opened) {
        t.read(&f.rel, &found);
    }
    if !found.eq_ignore_ascii_case(&f.sha512) {
        let (name, expected) = (f.rel.clone(), f.sha512.clone());
        return Err(PackageProblem::Fixity { name, expected, found });
    }
    Ok(())
}
