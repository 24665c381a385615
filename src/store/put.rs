//! `store put`: a package read and audited, its identifier claimed on every replica, then
//! every file written to every replica and every copy verified.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rayon::prelude::*;

use super::replica::{Replica, Source};
use super::state::{CopyRow, FileRecord, Seen, Upload};
use super::verify::{self, PutOptions, PutVerification};
use super::{
    ClaimConflict, CopyOutcome, CopyStatus, LocalListing, PackageFile, PutReport, ReadPackage,
    Store, StoreError, StoreRefusal, checked_package_dir, hash_copy, read_package, verify_copy,
};
use crate::audit::{AuditOptions, audit_package};
use crate::layout::MANIFEST;

/// The package a put writes: where it is read from, and where it goes in every replica.
struct Putting<'a> {
    /// The package directory.
    dir: &'a Path,
    /// Its identifier (METS OBJID).
    identifier: &'a str,
    /// Its directory inside every replica.
    pdir: &'a str,
    /// The manifest's SHA-512, which its claim holds.
    digest: &'a str,
    files: &'a [PackageFile],
}

/// Replicas that could not be claimed (unreachable), and why: their copies fail.
type Unclaimed = BTreeMap<String, String>;

impl Store {
    /// Reads the package in `dir` (every name confined, regular files only, every manifest line
    /// a file the METS lists), verifies it as `opts` asks (`verify_package`: a damaged or
    /// invalid one is refused), claims its identifier on every replica, then writes every file
    /// to every replica and verifies every copy. `progress` hears of bytes transferred.
    pub fn put(
        &self,
        dir: &Path,
        opts: &PutOptions,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<PutReport, StoreError> {
        // The store's own checks come first: nothing below reads through a link or a FIFO, or
        // follows a manifest line out of the package.
        if let Some(roots) = &self.ocfl {
            return self.ocfl_put(roots, dir, opts, progress);
        }
        // Held to the end: a migrate that began meanwhile would move the store from under
        // this put and leave its package where no command finds it.
        let _writing = self.writing_webaip(true)?;
        let ReadPackage { identifier, files, digest, requires, listing } = read_package(dir)?;
        let verified = verify_package(dir, &files, &listing, opts, None)?;
        crate::hooks::pause_at("put-audited");
        let pdir = checked_package_dir(&identifier)?;
        let records: Vec<FileRecord> = files.iter().map(PackageFile::record).collect();
        if let Some(known) = self.state().package_files(&identifier)?
            && known != records
        {
            return Err(StoreRefusal::AlreadyStored(identifier).into());
        }
        let putting =
            Putting { dir, identifier: &identifier, pdir: &pdir, digest: &digest, files: &files };
        // Claim the identifier on every replica before any file is written.
        let unclaimed = self.claim_all(&putting)?;
        let requires_missing = self.record_put(&putting, &records, &requires)?;
        let mut copies = self.put_copies(&putting, &unclaimed, progress);
        self.confirm_claims(&putting, &unclaimed, &mut copies);
        let failed = self.record_outcomes(&identifier, &copies)?;
        Ok(PutReport {
            accepted: failed.is_empty(),
            files: files.len() as u64,
            bytes: files.iter().map(|f| f.size).sum(),
            package: identifier,
            dir: pdir,
            copies,
            failed_replicas: failed.into_iter().collect(),
            requires: requires.into_iter().collect(),
            requires_missing,
            version: None,
            object: None,
            verified,
        })
    }

    /// Records the package and what it requires (rebuild-state reads it from the METS again);
    /// returns the packages it requires that the store does not hold. A dependency not stored
    /// is put anyway, and said: packages may arrive in any order.
    fn record_put(
        &self,
        p: &Putting,
        records: &[FileRecord],
        requires: &BTreeSet<String>,
    ) -> Result<Vec<String>, StoreError> {
        let mut st = self.state();
        st.record_package(p.identifier, p.pdir, records)?;
        st.record_dependencies(p.identifier, requires)?;
        let mut missing = Vec::new();
        for r in requires {
            if st.package_files(r)?.is_none() {
                missing.push(r.clone());
            }
        }
        Ok(missing)
    }

    /// Every file to every replica, in the transfer pool; a replica not claimed fails each.
    fn put_copies(
        &self,
        p: &Putting,
        unclaimed: &Unclaimed,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Vec<CopyOutcome> {
        let jobs: Vec<(&dyn Replica, &PackageFile)> = self
            .replicas
            .iter()
            .flat_map(|r| p.files.iter().map(move |f| (r.as_ref(), f)))
            .collect();
        self.pool.install(|| {
            jobs.par_iter()
                .map(|&(r, f)| {
                    let outcome = put_outcome(p, r, f, unclaimed.get(r.name()));
                    progress(f.size);
                    outcome
                })
                .collect()
        })
    }

    /// The claim must still be this package's at the end (an S3 claim is a look-then-write):
    /// every copy on a replica where it is not fails.
    fn confirm_claims(&self, p: &Putting, unclaimed: &Unclaimed, copies: &mut [CopyOutcome]) {
        for r in self.replicas.iter().filter(|r| !unclaimed.contains_key(r.name())) {
            let holder = r.claim_holder(p.pdir);
            if matches!(&holder, Ok(Some(h)) if h == p.digest) {
                continue;
            }
            let why = match holder {
                Ok(h) => format!(
                    "the identifier's claim on this replica is no longer this package's ({})",
                    h.unwrap_or_else(|| "none".into())
                ),
                Err(e) => format!("the identifier's claim cannot be read back: {e}"),
            };
            for c in copies.iter_mut().filter(|c| c.replica == r.name()) {
                c.status = CopyStatus::Failed;
                c.message = Some(why.clone());
            }
        }
    }

    /// Records each copy's outcome and whether the package is accepted; returns the replicas
    /// where some copy failed.
    fn record_outcomes(
        &self,
        identifier: &str,
        copies: &[CopyOutcome],
    ) -> Result<BTreeSet<String>, StoreError> {
        let failed: BTreeSet<String> = copies
            .iter()
            .filter(|c| c.status == CopyStatus::Failed)
            .map(|c| c.replica.clone())
            .collect();
        let rows: Vec<CopyRow> = copies
            .iter()
            .map(|c| {
                let ok = c.status != CopyStatus::Failed;
                CopyRow {
                    identifier,
                    path: &c.file,
                    replica: &c.replica,
                    upload: Some(if ok { Upload::Uploaded } else { Upload::Failed }),
                    filelist: if ok { Seen::Ok } else { Seen::Unknown },
                    checksum: Some(if ok { Seen::Ok } else { Seen::Unknown }),
                    message: c.message.as_deref(),
                }
            })
            .collect();
        let mut st = self.state();
        st.record_copies(&rows)?;
        st.set_accepted(identifier, failed.is_empty())?;
        Ok(failed)
    }

    /// Claims the package's directory for its manifest digest on every replica, in the one
    /// order every process uses. Another package's claim (or, on a replica written before
    /// claims existed, another manifest) refuses the put, and the claims this call made are
    /// withdrawn: nothing was written. A replica that cannot be reached is returned with why,
    /// so its copies fail and a later put completes them.
    fn claim_all(&self, p: &Putting) -> Result<Unclaimed, StoreError> {
        let mut order: Vec<&dyn Replica> = self.replicas.iter().map(|r| r.as_ref()).collect();
        order.sort_by_key(|r| r.claim_order());
        let mut created: Vec<&dyn Replica> = Vec::new();
        let mut unreachable = BTreeMap::new();
        for r in order {
            match claim_one(p, r) {
                Ok(Claimed { made, conflict: None }) => created.extend(made.then_some(r)),
                Ok(Claimed { made, conflict: Some(conflict) }) => {
                    created.extend(made.then_some(r));
                    for c in created {
                        let _ = c.unclaim(p.pdir);
                    }
                    return Err(StoreRefusal::Taken {
                        identifier: p.identifier.into(),
                        replica: r.name().to_string(),
                        conflict,
                        digest: p.digest.into(),
                    }
                    .into());
                }
                Err(e) => {
                    unreachable.insert(r.name().to_string(), format!("cannot claim: {e}"));
                }
            }
        }
        Ok(unreachable)
    }
}

/// What claiming one replica did: whether this call made the claim, and what stands in the
/// way when the identifier is another package's.
struct Claimed {
    made: bool,
    conflict: Option<ClaimConflict>,
}

/// Claims the package's directory on one replica, after removing the leftovers of a killed
/// put there. A replica written before claims existed holds no claim; there, another manifest
/// in the directory is a conflict.
fn claim_one(p: &Putting, r: &dyn Replica) -> Result<Claimed, StoreError> {
    r.clean_temporaries(p.pdir)?;
    let manifest = p.files.iter().find(|f| f.rel == MANIFEST);
    if r.claim_holder(p.pdir)?.is_none()
        && let Some(m) = manifest
        && holds_copy(r, &format!("{}/{MANIFEST}", p.pdir), m)? == Some(false)
    {
        return Ok(Claimed { made: false, conflict: Some(ClaimConflict::OtherManifest) });
    }
    let (holder, made) = r.claim(p.pdir, p.digest)?;
    let conflict = (holder != p.digest).then_some(ClaimConflict::ClaimedBy(holder));
    Ok(Claimed { made, conflict })
}

/// One file's copy on one replica, as the report says it.
fn put_outcome(
    p: &Putting,
    r: &dyn Replica,
    f: &PackageFile,
    unclaimed: Option<&String>,
) -> CopyOutcome {
    let key = format!("{}/{}", p.pdir, f.rel);
    let source = Source { root: p.dir, name: &f.rel };
    let (status, message) = match unclaimed {
        Some(why) => (CopyStatus::Failed, Some(why.clone())),
        None => match put_copy(r, &key, source, f) {
            Ok(s) => (s, None),
            Err(e) => (CopyStatus::Failed, Some(e.to_string())),
        },
    };
    CopyOutcome {
        package: p.identifier.into(),
        replica: r.name().into(),
        file: f.rel.clone(),
        status,
        message,
    }
}

/// Verifies the package in `dir` (its manifest's `files`) as `opts` asks, and refuses it
/// when that fails: with `opts.audit` the full audit ([`refuse_damaged`]), else the METS and
/// the folder against the manifest, and every file's SHA-512, the two at once. With `tee`,
/// each file read whole is written to it in the same read.
pub(super) fn verify_package(
    dir: &Path,
    files: &[PackageFile],
    listed: &LocalListing,
    opts: &PutOptions,
    tee: Option<&dyn crate::audit::Tee>,
) -> Result<PutVerification, StoreError> {
    if opts.audit || verify::needs_audit(listed) {
        refuse_damaged(dir, &opts.check, tee)?;
        return Ok(PutVerification::Audited);
    }
    // The METS is judged on a thread of its own from the start, so that every thread of the
    // pool reads files (judged in the pool, it held one thread while the other began the
    // largest file alone).
    let (described, fixity) = super::beside(
        || verify::refuse_bad_description(dir, files, &listed.files, &opts.check),
        || verify::verify_fixity(dir, files, tee),
    );
    described?;
    fixity?;
    Ok(PutVerification::Fixity)
}

/// A damaged package (the audit's errors, the METS validation's errors) is refused. With
/// `tee`, each file the audit reads whole is written to it in the same read.
fn refuse_damaged(
    dir: &Path,
    audit: &AuditOptions,
    tee: Option<&dyn crate::audit::Tee>,
) -> Result<(), StoreError> {
    let report = match tee {
        None => audit_package(dir, audit, &|_| {}),
        Some(tee) => crate::audit::audit_package_teed(dir, audit, tee),
    }
    .map_err(|source| StoreRefusal::Unauditable { dir: dir.into(), source })?;
    // The rule ingest lets a submission in by: a package whose ARCs need the packages it was
    // deduplicated against is checked whole, and the store records what it requires (and says
    // which it does not hold).
    if report.admissible() {
        return Ok(());
    }
    let errors = report.byte_errors() + report.mets_errors();
    Err(StoreRefusal::Damaged {
        dir: dir.into(),
        verdict: report.verdict.to_string(),
        errors,
        inconsistencies: report.inconsistencies.len(),
        unchecked: report.unchecked.len(),
    }
    .into())
}

/// Puts one copy: a no-op when the same content is there, a refusal when other content is,
/// else an upload that is then verified. Returns `uploaded` or `present`.
fn put_copy(
    r: &dyn Replica,
    key: &str,
    source: Source,
    f: &PackageFile,
) -> Result<CopyStatus, StoreError> {
    let other = || -> StoreError {
        StoreRefusal::OtherContent { replica: r.name().into(), key: key.into() }.into()
    };
    match holds_copy(r, key, f)? {
        Some(true) => return Ok(CopyStatus::Present),
        Some(false) => return Err(other()),
        None => {}
    }
    match r.create(key, source, f.size, &f.sha512) {
        Ok(()) => {}
        // Another writer (a repair, a put of the same package) published it meanwhile: an
        // identical copy is as good as ours.
        Err(StoreError::Exists { .. }) => {
            return match holds_copy(r, key, f)? {
                Some(true) => Ok(CopyStatus::Present),
                _ => Err(other()),
            };
        }
        Err(e) => return Err(e),
    }
    verify_copy(r, key, f)?;
    Ok(CopyStatus::Uploaded)
}

/// Whether `key` holds `f`'s bytes (`None`: nothing there): the recorded size and SHA-512 of
/// an object, a file's read back.
fn holds_copy(r: &dyn Replica, key: &str, f: &PackageFile) -> Result<Option<bool>, StoreError> {
    let Some(existing) = r.stat(key)? else { return Ok(None) };
    Ok(Some(
        existing.size == f.size
            && match &existing.sha512 {
                Some(s) => *s == f.sha512,
                None => hash_copy(r, key)? == f.sha512,
            },
    ))
}
