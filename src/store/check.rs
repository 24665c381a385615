//! `store check`: every recorded package's copies on the replicas checked, compared with what
//! the state database expects (listed, of the right size, and with `deep` of the right
//! SHA-512); what is learned of each copy is recorded in the state.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use serde::{Deserialize, Serialize};

use super::fixity::{Batch, CheckSchedule, CheckedRun, Pace, Plan, Verdict, fold_parts};
use super::replica::{ListedObject, Replica};
use super::state::{CopyRow, FileRecord, ObjectOutcome, PlannedObject, Seen, Universe};
use super::{CheckReport, MissingDependency, ReplicaCheck, Store, StoreError, hash_copy};

/// A package the state records: its identifier, its directory in the replicas, its files.
pub(super) struct ExpectedPackage {
    pub(super) identifier: String,
    pub(super) dir: String,
    pub(super) files: Vec<FileRecord>,
}

/// What a check learned of one copy, as the state database records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CheckedCopy {
    pub(super) identifier: String,
    pub(super) path: String,
    pub(super) replica: String,
    /// Whether the replica lists it.
    pub(super) filelist: Seen,
    /// Its checksum status (`None`: not hashed, so what is recorded stands).
    pub(super) checksum: Option<Seen>,
    /// Why, when something is wrong.
    pub(super) why: Option<String>,
}

impl CheckedCopy {
    fn new(p: &ExpectedPackage, f: &FileRecord, replica: &str, filelist: Seen) -> Self {
        CheckedCopy {
            identifier: p.identifier.clone(),
            path: f.path.clone(),
            replica: replica.into(),
            filelist,
            checksum: None,
            why: None,
        }
    }

    /// Listed at its size, not hashed.
    fn listed(p: &ExpectedPackage, f: &FileRecord, replica: &str) -> Self {
        Self::new(p, f, replica, Seen::Ok)
    }

    /// Not in the replica's listing.
    fn missing(p: &ExpectedPackage, f: &FileRecord, replica: &str) -> Self {
        CheckedCopy { checksum: Some(Seen::Unknown), ..Self::new(p, f, replica, Seen::Missing) }
    }

    /// There, and not the package's bytes.
    fn corrupt(p: &ExpectedPackage, f: &FileRecord, replica: &str, why: String) -> Self {
        CheckedCopy {
            checksum: Some(Seen::Corrupt),
            why: Some(why),
            ..Self::new(p, f, replica, Seen::Ok)
        }
    }

    /// Hashed, and its SHA-512 is the package's.
    fn verified(p: &ExpectedPackage, f: &FileRecord, replica: &str) -> Self {
        CheckedCopy { checksum: Some(Seen::Ok), ..Self::new(p, f, replica, Seen::Ok) }
    }

    /// Whether the store cannot count on this copy.
    pub(super) fn is_bad(&self) -> bool {
        self.filelist != Seen::Ok || self.checksum == Some(Seen::Corrupt)
    }

    fn row(&self) -> CopyRow<'_> {
        CopyRow {
            identifier: &self.identifier,
            path: &self.path,
            replica: &self.replica,
            upload: None,
            filelist: self.filelist,
            checksum: self.checksum,
            message: self.why.as_deref(),
        }
    }
}

/// A package on a replica: which of `store check`'s replicas, which of its expected packages.
#[derive(Debug, Clone, Copy)]
struct PackageAt {
    replica: usize,
    package: usize,
}

/// One file of a package on a replica, to hash.
#[derive(Debug, Clone, Copy)]
struct CopyAt {
    at: PackageAt,
    file: usize,
}

/// A package on a replica that some copy of could not be read, or is missing or corrupt.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(super) struct Unreadable {
    pub(super) identifier: String,
    pub(super) replica: String,
}

/// What one check covers: the replicas looked at and the packages expected on each.
struct CheckScope<'a> {
    replicas: Vec<&'a dyn Replica>,
    expected: Vec<ExpectedPackage>,
    deep: bool,
}

impl CheckScope<'_> {
    fn key(&self, c: CopyAt) -> String {
        let p = &self.expected[c.at.package];
        format!("{}/{}", p.dir, p.files[c.file].path)
    }
}

/// A replica's listing of one package directory, and the leftover temporaries removed there.
struct DirListing {
    listed: Vec<ListedObject>,
    temporaries_removed: Vec<String>,
}

/// What a check found so far.
struct CheckTally {
    reports: Vec<ReplicaCheck>,
    copies: Vec<CheckedCopy>,
    unreadable: BTreeSet<Unreadable>,
    /// Copies present at the right size, to hash with `deep`.
    to_hash: Vec<CopyAt>,
}

impl CheckTally {
    fn new(replicas: &[&dyn Replica]) -> Self {
        let reports = replicas
            .iter()
            .map(|r| ReplicaCheck { replica: r.name().into(), ..ReplicaCheck::default() })
            .collect();
        CheckTally { reports, copies: Vec::new(), unreadable: BTreeSet::new(), to_hash: Vec::new() }
    }

    /// Takes in one package directory's listing on one replica.
    fn listed(&mut self, scope: &CheckScope, at: PackageAt, got: Result<DirListing, StoreError>) {
        let p = &scope.expected[at.package];
        let replica = scope.replicas[at.replica].name();
        let rep = &mut self.reports[at.replica];
        let listing = match got {
            Ok(l) => l,
            Err(e) => {
                let identifier = p.identifier.clone();
                self.unreadable.insert(Unreadable { identifier, replica: replica.into() });
                rep.errors.push(format!("{}: {e}", p.dir));
                return;
            }
        };
        let gone = listing.temporaries_removed.into_iter();
        rep.temporaries_removed.extend(gone.map(|k| format!("{k} (leftover temporary; removed)")));
        let found = compare_listing(p, replica, listing.listed, scope.deep, rep, &mut self.copies);
        self.to_hash.extend(found.into_iter().map(|file| CopyAt { at, file }));
    }

    /// Takes in what hashing one copy gave.
    fn hashed(&mut self, scope: &CheckScope, c: CopyAt, got: Result<String, StoreError>) {
        let p = &scope.expected[c.at.package];
        let f = &p.files[c.file];
        let replica = scope.replicas[c.at.replica].name();
        let rep = &mut self.reports[c.at.replica];
        match got {
            Ok(sha) if sha == f.sha512 => {
                rep.verified += 1;
                self.copies.push(CheckedCopy::verified(p, f, replica));
            }
            Ok(sha) => {
                let why = format!("SHA-512 {sha}; expected {}", f.sha512);
                rep.corrupt.push(format!("{} ({why})", scope.key(c)));
                self.copies.push(CheckedCopy::corrupt(p, f, replica, why));
            }
            Err(e) => {
                let identifier = p.identifier.clone();
                self.unreadable.insert(Unreadable { identifier, replica: replica.into() });
                rep.errors.push(format!("{}: {e}", scope.key(c)));
            }
        }
    }
}

impl CheckTally {
    /// The packages on a replica that hold a missing or corrupt copy, or could not be read.
    fn bad(&self) -> BTreeSet<Unreadable> {
        let mut bad = self.unreadable.clone();
        for c in self.copies.iter().filter(|c| c.is_bad()) {
            bad.insert(Unreadable { identifier: c.identifier.clone(), replica: c.replica.clone() });
        }
        bad
    }

    /// Each package's outcome on each replica: unreadable, problems (a bad copy, or an extra
    /// object in its directory), or clean.
    fn outcomes(&self, scope: &CheckScope) -> Vec<ObjectOutcome> {
        let bad = self.bad();
        let mut out = Vec::new();
        for (r, rep) in scope.replicas.iter().zip(&self.reports) {
            for p in &scope.expected {
                let at = Unreadable { identifier: p.identifier.clone(), replica: r.name().into() };
                let prefix = format!("{}/", p.dir);
                let outcome = if self.unreadable.contains(&at) {
                    "unreadable"
                } else if bad.contains(&at) || rep.extra.iter().any(|k| k.starts_with(&prefix)) {
                    "problems"
                } else {
                    "clean"
                };
                let (object, replica) = (at.identifier, at.replica);
                out.push(ObjectOutcome { object, replica, outcome });
            }
        }
        out
    }
}

/// What the batches of a run found, as each batch records it and as they add up.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Found {
    packages: u64,
    replicas: Vec<ReplicaCheck>,
    bad: BTreeSet<Unreadable>,
}

impl Found {
    fn new(replicas: &[&dyn Replica]) -> Self {
        let replicas = replicas
            .iter()
            .map(|r| ReplicaCheck { replica: r.name().into(), ..ReplicaCheck::default() })
            .collect();
        Found { replicas, ..Found::default() }
    }

    fn add(&mut self, part: Found) {
        self.packages += part.packages;
        self.bad.extend(part.bad);
        for (sum, r) in self.replicas.iter_mut().zip(part.replicas) {
            sum.expected += r.expected;
            sum.verified += r.verified;
            sum.missing.extend(r.missing);
            sum.corrupt.extend(r.corrupt);
            sum.extra.extend(r.extra);
            sum.errors.extend(r.errors);
            sum.temporaries_removed.extend(r.temporaries_removed);
        }
    }
}

impl Store {
    /// Checks every recorded package on every replica (or `only` one): which copies are
    /// missing or extra, of the wrong size, and with `deep` of the wrong SHA-512. A run of its
    /// own, kept like any other (see [`Store::check_run`]).
    pub fn check(
        &self,
        only: Option<&str>,
        deep: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<CheckReport, StoreError> {
        Ok(self.check_run(only, deep, &CheckSchedule::default(), progress)?.report)
    }

    /// A check run as `schedule` says (the objects it selects, a resumed run, a budget and a
    /// time window): batch by batch, each recorded in the state database with every
    /// package's last check; the report covers every session of the run.
    pub fn check_run(
        &self,
        only: Option<&str>,
        deep: bool,
        schedule: &CheckSchedule,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<CheckedRun<CheckReport>, StoreError> {
        self.webaip_layout("this check (OCFL replicas: Store::check_objects)")?;
        let plan = Plan { layout: "webaip", only, deep, notes: None };
        let session = self.open_session(&plan, schedule, &mut || Ok(Universe::Packages))?;
        let deep = session.run.deep;
        let replicas = self.replicas_in(&session.scope);
        self.sweep(&session, &mut |batch| {
            self.check_batch(&replicas, batch, deep, &session.pace, progress)
        })?;
        let mut found = Found::new(&replicas);
        fold_parts(self, &session, &mut |part: Found| found.add(part))?;
        let missing_dependencies = self.missing_dependencies(&session.scope, found.bad)?;
        let problems = !missing_dependencies.is_empty()
            || found.replicas.iter().any(|r| {
                !(r.missing.is_empty()
                    && r.corrupt.is_empty()
                    && r.extra.is_empty()
                    && r.errors.is_empty())
            });
        // Packages a begun `store migrate` moved are OCFL objects this check does not see:
        // the run judged only what is left, so it is never a clean check of the store.
        let judged = !self.state().migration_begun()?;
        let run = self.end_session(&session, problems, judged)?;
        let report = CheckReport {
            deep,
            packages: found.packages,
            replicas: found.replicas,
            missing_dependencies,
            clean: run.verdict == Verdict::Clean,
        };
        Ok(CheckedRun { report, run })
    }

    /// Checks one batch of packages on `replicas`; `None` when the pace stopped it part-way.
    fn check_batch(
        &self,
        replicas: &[&dyn Replica],
        batch: &[PlannedObject],
        deep: bool,
        pace: &Pace,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Option<Batch>, StoreError> {
        let mut expected = Vec::new();
        for p in batch {
            // A package forgotten since the run was planned is no longer expected anywhere.
            let Some(files) = self.state().package_files(&p.object)? else { continue };
            let dir = super::config::package_dir(&p.object);
            expected.push(ExpectedPackage { identifier: p.object.clone(), dir, files });
        }
        let scope = CheckScope { replicas: replicas.to_vec(), expected, deep };
        let mut tally = CheckTally::new(&scope.replicas);
        for (at, listing) in self.list_packages(&scope) {
            tally.listed(&scope, at, listing);
        }
        let mut bytes = 0;
        for (c, got) in self.hash_copies(&scope, &tally.to_hash, pace, progress) {
            let Some(got) = got else { return Ok(None) };
            bytes += scope.expected[c.at.package].files[c.file].size;
            tally.hashed(&scope, c, got);
        }
        let rows: Vec<CopyRow> = tally.copies.iter().map(CheckedCopy::row).collect();
        self.state().record_copies(&rows)?;
        let outcomes = tally.outcomes(&scope);
        let found = Found {
            packages: scope.expected.len() as u64,
            bad: tally.bad(),
            replicas: tally.reports,
        };
        let found = serde_json::to_string(&found).unwrap_or_default();
        Ok(Some(Batch { outcomes, found, bytes }))
    }

    /// Lists every package directory on every replica of `scope`, one task each, removing the
    /// temporaries of interrupted writes found there first.
    fn list_packages(
        &self,
        scope: &CheckScope,
    ) -> Vec<(PackageAt, Result<DirListing, StoreError>)> {
        let all: Vec<PackageAt> = (0..scope.replicas.len())
            .flat_map(|replica| {
                (0..scope.expected.len()).map(move |package| PackageAt { replica, package })
            })
            .collect();
        self.pool.install(|| {
            all.into_par_iter()
                .map(|at| {
                    let r = scope.replicas[at.replica];
                    let dir = &scope.expected[at.package].dir;
                    let got = r.clean_temporaries(dir).and_then(|temporaries_removed| {
                        Ok(DirListing { listed: r.list(dir)?, temporaries_removed })
                    });
                    (at, got)
                })
                .collect()
        })
    }

    /// Reads every copy of `to_hash` through SHA-512 as the pace allows (`None`: not read,
    /// the run is stopping), telling `progress` of the bytes.
    fn hash_copies(
        &self,
        scope: &CheckScope,
        to_hash: &[CopyAt],
        pace: &Pace,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Vec<(CopyAt, Option<Result<String, StoreError>>)> {
        self.pool.install(|| {
            to_hash
                .par_iter()
                .map(|&c| {
                    let size = scope.expected[c.at.package].files[c.file].size;
                    if !pace.admit(size) {
                        return (c, None);
                    }
                    let got = hash_copy(scope.replicas[c.at.replica], &scope.key(c));
                    progress(size);
                    (c, Some(got))
                })
                .collect()
        })
    }

    /// The recorded dependencies the store does not hold whole: the package required is not
    /// recorded, or every replica checked misses, holds corrupt, or cannot read some copy of it.
    fn missing_dependencies(
        &self,
        replicas: &[String],
        bad: BTreeSet<Unreadable>,
    ) -> Result<Vec<MissingDependency>, StoreError> {
        let st = self.state();
        let mut out = Vec::new();
        for (package, requires) in st.dependencies()? {
            let held_nowhere = || {
                replicas.iter().all(|r| {
                    let at = Unreadable { identifier: requires.clone(), replica: r.to_string() };
                    bad.contains(&at)
                })
            };
            let why = if st.package_files(&requires)?.is_none() {
                "not in the store"
            } else if held_nowhere() {
                "no replica holds it whole (see the copies found missing, corrupt or unreadable)"
            } else {
                continue;
            };
            out.push(MissingDependency { package, requires, why: why.into() });
        }
        Ok(out)
    }
}

/// What a replica's listing says of an expected file.
#[derive(Debug, PartialEq, Eq)]
enum Listed {
    /// Listed at the expected size.
    Present,
    /// Not listed.
    Missing,
    /// Listed at another size.
    WrongSize(u64),
    /// An entry that cannot be a copy (a link, a FIFO...), and why.
    Odd(String),
}

/// A replica's listing of a package directory, split into what can be copies (key and size)
/// and entries that cannot (key and why).
struct Split {
    sizes: BTreeMap<String, u64>,
    odd: BTreeMap<String, String>,
}

impl Split {
    fn new(listed: Vec<ListedObject>) -> Self {
        let mut split = Split { sizes: BTreeMap::new(), odd: BTreeMap::new() };
        for o in listed {
            match o.problem {
                Some(why) => {
                    split.odd.insert(o.key, why);
                }
                None => {
                    split.sizes.insert(o.key, o.size);
                }
            }
        }
        split
    }

    fn find(&self, key: &str, size: u64) -> Listed {
        if let Some(why) = self.odd.get(key) {
            return Listed::Odd(why.clone());
        }
        match self.sizes.get(key) {
            None => Listed::Missing,
            Some(&s) if s != size => Listed::WrongSize(s),
            Some(_) => Listed::Present,
        }
    }

    /// What no package file accounts for: copies first, then odd entries with why.
    fn extra(&self, known: &BTreeSet<String>) -> impl Iterator<Item = String> {
        let copies = self.sizes.keys().filter(|k| !known.contains(*k)).cloned();
        let odd = self.odd.iter().filter(|(k, _)| !known.contains(*k));
        copies.chain(odd.map(|(k, why)| format!("{k} ({why})")))
    }
}

/// One package's copies on one replica against what the state expects: missing, wrong size,
/// odd entries and extra keys go to `rep`, each copy's status to `copies`. Returns the files
/// (indexes into `p.files`) to hash, with `deep`.
fn compare_listing(
    p: &ExpectedPackage,
    replica: &str,
    listed: Vec<ListedObject>,
    deep: bool,
    rep: &mut ReplicaCheck,
    copies: &mut Vec<CheckedCopy>,
) -> Vec<usize> {
    let split = Split::new(listed);
    let mut to_hash = Vec::new();
    let mut known = BTreeSet::new();
    for (k, f) in p.files.iter().enumerate() {
        rep.expected += 1;
        let key = format!("{}/{}", p.dir, f.path);
        let why = match split.find(&key, f.size) {
            Listed::Present => {
                if deep {
                    to_hash.push(k);
                } else {
                    copies.push(CheckedCopy::listed(p, f, replica));
                }
                None
            }
            Listed::Missing => {
                rep.missing.push(key.clone());
                copies.push(CheckedCopy::missing(p, f, replica));
                None
            }
            Listed::WrongSize(size) => Some(format!("{size} bytes; expected {}", f.size)),
            Listed::Odd(why) => Some(why),
        };
        if let Some(why) = why {
            rep.corrupt.push(format!("{key} ({why})"));
            copies.push(CheckedCopy::corrupt(p, f, replica, why));
        }
        known.insert(key);
    }
    rep.extra.extend(split.extra(&known));
    to_hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, size: u64) -> FileRecord {
        FileRecord { path: path.into(), size, sha512: "00".repeat(64) }
    }

    fn entry(key: &str, size: u64, problem: Option<&str>) -> ListedObject {
        ListedObject { key: key.into(), size, problem: problem.map(str::to_string) }
    }

    /// A listing with one copy of each kind: right, wrong size, absent, a link where a copy
    /// should be, and two entries no file accounts for.
    fn compare(deep: bool) -> (ReplicaCheck, Vec<CheckedCopy>, Vec<usize>) {
        let p = ExpectedPackage {
            identifier: "pkg".into(),
            dir: "p/pkg".into(),
            files: vec![file("a", 3), file("b", 5), file("c", 2), file("d", 4)],
        };
        let listed = vec![
            entry("p/pkg/f", 0, Some("a FIFO")),
            entry("p/pkg/a", 3, None),
            entry("p/pkg/b", 6, None),
            entry("p/pkg/d", 4, Some("a symbolic link")),
            entry("p/pkg/e", 1, None),
        ];
        let mut rep = ReplicaCheck::default();
        let mut copies = Vec::new();
        let to_hash = compare_listing(&p, "disk", listed, deep, &mut rep, &mut copies);
        (rep, copies, to_hash)
    }

    #[test]
    fn a_listing_sorts_each_copy_by_what_it_shows() {
        let (rep, copies, to_hash) = compare(false);
        assert_eq!(rep.expected, 4);
        assert_eq!(rep.missing, ["p/pkg/c"]);
        assert_eq!(rep.corrupt, ["p/pkg/b (6 bytes; expected 5)", "p/pkg/d (a symbolic link)"]);
        assert_eq!(rep.extra, ["p/pkg/e", "p/pkg/f (a FIFO)"]);
        assert!(to_hash.is_empty());
        let seen: Vec<(&str, Seen, Option<Seen>)> =
            copies.iter().map(|c| (c.path.as_str(), c.filelist, c.checksum)).collect();
        assert_eq!(
            seen,
            [
                ("a", Seen::Ok, None),
                ("b", Seen::Ok, Some(Seen::Corrupt)),
                ("c", Seen::Missing, Some(Seen::Unknown)),
                ("d", Seen::Ok, Some(Seen::Corrupt)),
            ]
        );
        let bad: Vec<&str> =
            copies.iter().filter(|c| c.is_bad()).map(|c| c.path.as_str()).collect();
        assert_eq!(bad, ["b", "c", "d"]);
    }

    #[test]
    fn a_deep_check_hashes_the_copies_listed_at_their_size_only() {
        let (rep, copies, to_hash) = compare(true);
        assert_eq!(to_hash, [0]);
        assert!(copies.iter().all(|c| c.path != "a"), "a is judged by its hash, not its listing");
        assert_eq!(rep.corrupt.len(), 2);
    }
}
