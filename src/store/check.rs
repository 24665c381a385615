//! `store check`: every recorded package's copies on the replicas checked, compared with what
//! the state database expects (listed, of the right size, and with `deep` of the right
//! SHA-512); what is learned of each copy is recorded in the state.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::replica::{ListedObject, Replica};
use super::state::{CopyRow, FileRecord, Seen};
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

/// A package on a replica that some copy of could not be read: nothing there is known.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
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

impl Store {
    /// Checks every recorded package on every replica (or `only` one): which copies are
    /// missing or extra, of the wrong size, and with `deep` of the wrong SHA-512.
    pub fn check(
        &self,
        only: Option<&str>,
        deep: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<CheckReport, StoreError> {
        self.webaip_layout("this check (OCFL replicas: Store::check_objects)")?;
        let scope = self.check_scope(only, deep)?;
        let mut tally = CheckTally::new(&scope.replicas);
        for (at, listing) in self.list_packages(&scope) {
            tally.listed(&scope, at, listing);
        }
        for (c, got) in self.hash_copies(&scope, &tally.to_hash, progress) {
            tally.hashed(&scope, c, got);
        }
        let names: Vec<&str> = scope.replicas.iter().map(|r| r.name()).collect();
        let missing_dependencies =
            self.missing_dependencies(&names, &tally.copies, tally.unreadable)?;
        let rows: Vec<CopyRow> = tally.copies.iter().map(CheckedCopy::row).collect();
        self.state().record_copies(&rows)?;
        let clean = missing_dependencies.is_empty()
            && tally.reports.iter().all(|r| {
                r.missing.is_empty()
                    && r.corrupt.is_empty()
                    && r.extra.is_empty()
                    && r.errors.is_empty()
            });
        let packages = scope.expected.len() as u64;
        Ok(CheckReport { deep, packages, replicas: tally.reports, missing_dependencies, clean })
    }

    /// The replicas a check looks at (every one, or `only` the one named) and what the state
    /// expects of them.
    fn check_scope(&self, only: Option<&str>, deep: bool) -> Result<CheckScope<'_>, StoreError> {
        if let Some(name) = only {
            self.replica(name)?;
        }
        let mut expected = Vec::new();
        // Bound first: a lock held through the loop would be taken again inside it.
        let packages = self.state().packages()?;
        for (identifier, dir) in packages {
            let files = self.state().package_files(&identifier)?.unwrap_or_default();
            expected.push(ExpectedPackage { identifier, dir, files });
        }
        let replicas = self
            .replicas
            .iter()
            .map(|r| r.as_ref())
            .filter(|r| only.is_none_or(|n| n == r.name()))
            .collect();
        Ok(CheckScope { replicas, expected, deep })
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

    /// Reads every copy of `to_hash` through SHA-512, telling `progress` of the bytes.
    fn hash_copies(
        &self,
        scope: &CheckScope,
        to_hash: &[CopyAt],
        progress: &(dyn Fn(u64) + Sync),
    ) -> Vec<(CopyAt, Result<String, StoreError>)> {
        self.pool.install(|| {
            to_hash
                .par_iter()
                .map(|&c| {
                    let got = hash_copy(scope.replicas[c.at.replica], &scope.key(c));
                    progress(scope.expected[c.at.package].files[c.file].size);
                    (c, got)
                })
                .collect()
        })
    }

    /// The recorded dependencies the store does not hold whole: the package required is not
    /// recorded, or every replica checked misses, holds corrupt, or cannot read some copy of it.
    fn missing_dependencies(
        &self,
        replicas: &[&str],
        copies: &[CheckedCopy],
        mut bad: BTreeSet<Unreadable>,
    ) -> Result<Vec<MissingDependency>, StoreError> {
        for c in copies.iter().filter(|c| c.is_bad()) {
            bad.insert(Unreadable { identifier: c.identifier.clone(), replica: c.replica.clone() });
        }
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
