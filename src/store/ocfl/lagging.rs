//! A put killed between two replicas' commits, run again: the replicas it left at the
//! version before get the version the others committed, with the same inventory bytes, its
//! new files read from the package (verified as any put's). The others are left alone, and no
//! version is made that differs between replicas.

use super::check::{Head, read_head};
use super::inventory::{INVENTORY, LogicalFile};
use super::ops::{NewVersion, Rerun, commit_version, earlier_version, sha512_of};
use super::put::{Plan, Staging};
use super::root::OcflRoot;
use crate::store::put::verify_package;
use crate::store::replica::Replica;
use crate::store::{CopyStatus, PackageFile, PutReport, PutVerification, Store, StoreError};

/// The replicas a killed put left behind, and the version they are to get.
struct Behind {
    /// The head the replicas ahead hold, which webaip recorded.
    head: Head,
    /// The head the replicas behind hold (`None`: no object yet, the head is v1).
    prev: Option<Head>,
    /// The replicas behind (their index in the configuration).
    replicas: Vec<usize>,
}

/// What completing the replicas behind did.
struct Completed {
    /// The version every replica now holds (or failed to get).
    pub head: Head,
    pub verified: PutVerification,
    /// Each replica behind (its index) and its commit: the new inventory's SHA-512, or why not.
    pub commits: Vec<(usize, Result<String, StoreError>)>,
}

impl Store {
    /// A put run again after a kill between two replicas' commits: when [`Store::lagging_commits`]
    /// applies, the replicas behind get the version, `report` says so, and `true`.
    pub(super) fn complete_lagging(
        &self,
        run: &Rerun,
        report: &mut PutReport,
    ) -> Result<bool, StoreError> {
        let Some(done) = self.lagging_commits(run)? else { return Ok(false) };
        self.completed(report, run.obj, run.files, done)?;
        Ok(true)
    }

    /// The report of a put that completed the replicas a killed put left behind
    /// ([`Store::lagging_commits`]): the others already held the package's copies.
    fn completed(
        &self,
        report: &mut PutReport,
        obj: &str,
        files: &[PackageFile],
        done: Completed,
    ) -> Result<(), StoreError> {
        let new = NewVersion { obj, inv: &done.head.inv, versions: done.head.versions, files };
        let present = |_: &PackageFile| CopyStatus::Present;
        for (i, r) in self.replicas.iter().enumerate() {
            if !done.commits.iter().any(|(at, _)| *at == i) {
                let copies = self.copies_of(&report.package, files, &present, Some(r.name()));
                report.copies.extend(copies);
            }
        }
        for (i, got) in done.commits {
            self.put_outcome(report, self.replicas[i].name(), &new, got)?;
        }
        report.verified = done.verified;
        report.version = Some(done.head.inv.head.clone());
        let package = report.package.clone();
        self.record_place(&package, &done.head.inv.id, report.version.as_deref())
    }

    /// When some replicas hold a head webaip recorded whose version holds exactly this package,
    /// and the others the version before it (the same inventory bytes as theirs) or, for v1,
    /// no object: commits that head on the others, its new files from the package. `None`
    /// when the replicas are not so (the put then goes on, or is refused, as any other).
    fn lagging_commits(&self, run: &Rerun) -> Result<Option<Completed>, StoreError> {
        let Some(behind) = self.behind(run)? else { return Ok(None) };
        let roots: Vec<OcflRoot> = behind.replicas.iter().map(|&i| run.roots[i].clone()).collect();
        let replicas: Vec<&dyn Replica> =
            behind.replicas.iter().map(|&i| self.replicas[i].as_ref()).collect();
        let new = NewVersion {
            obj: run.obj,
            inv: &behind.head.inv,
            versions: behind.head.versions,
            files: run.files,
        };
        let added = new.added().into_values().collect();
        let prev = behind.prev.as_ref();
        let plan = Plan { roots: &roots, replicas: replicas.clone(), obj: run.obj, prev, added };
        let staging = Staging::new(plan, run.progress);
        let verified = verify_package(run.dir, run.files, run.listing, run.opts, Some(&staging))?;
        let staged = self.pool.install(|| staging.complete(run.dir));
        self.refused_after_upload(run.roots, run.id, staged)?;
        for (root, r) in roots.iter().zip(&replicas) {
            root.ensure_root(*r)?;
        }
        let mut commits = Vec::new();
        for (i, stage) in behind.replicas.iter().zip(staging.into_stages()) {
            let got = stage.and_then(|s| commit_version(s, behind.prev.is_some(), &new));
            commits.push((*i, got));
        }
        Ok(Some(Completed { head: behind.head, verified, commits }))
    }

    /// The replicas a killed put of this package left behind, when that is what they are.
    fn behind(&self, run: &Rerun) -> Result<Option<Behind>, StoreError> {
        let mut heads = Vec::new();
        for r in &self.replicas {
            heads.push(read_head(r.as_ref(), run.id)?);
        }
        let Some(ahead) = heads.iter().flatten().max_by_key(|h| h.versions.head) else {
            return Ok(None);
        };
        let n = ahead.versions.head;
        let at_head = |h: &Option<Head>| h.as_ref().is_some_and(|h| h.versions.head == n);
        let replicas: Vec<usize> = (0..heads.len()).filter(|&i| !at_head(&heads[i])).collect();
        let Some(&first) = replicas.first() else { return Ok(None) };
        // Every replica ahead holds the one head, webaip recorded it, and its bytes are the
        // ones this build writes: a lagging replica gets exactly the others' inventory.
        let leaders = heads.iter().flatten().filter(|h| h.versions.head == n);
        let anchors = self.anchors(Some(run.id))?;
        if leaders.clone().any(|h| h.sha512 != ahead.sha512)
            || anchors.foreign(run.obj)
            || !anchors.of(run.obj).is_some_and(|a| a.knows(&ahead.sha512))
            || sha512_of(&ahead.inv.to_bytes()) != ahead.sha512
        {
            return Ok(None);
        }
        let logical: Vec<LogicalFile> = run
            .files
            .iter()
            .map(|f| LogicalFile { path: f.rel.clone(), sha512: f.sha512.clone() })
            .collect();
        if earlier_version(ahead, run.package, &logical) != Some(n) {
            return Ok(None);
        }
        let prev_sha = match n {
            1 => None,
            _ => {
                let leader = heads.iter().position(at_head).unwrap_or_default();
                let key = format!("{}/{}/{INVENTORY}", run.obj, ahead.versions.name(n - 1));
                Some(crate::store::hash_copy(self.replicas[leader].as_ref(), &key)?)
            }
        };
        let behind_ok = |i: &usize| heads[*i].as_ref().map(|h| &h.sha512) == prev_sha.as_ref();
        if !replicas.iter().all(behind_ok) {
            return Ok(None);
        }
        let (head, prev) = (ahead.clone(), heads[first].clone());
        Ok(Some(Behind { head, prev, replicas }))
    }
}
