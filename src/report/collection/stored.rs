//! The rows of a store's packages: every package the state database records or a replica
//! holds (OCFL: every object, and every package kept as a version of another's object), with
//! a copy entry for every configured replica (one that holds no copy counts it missing) and
//! each replica's last `store check`, each METS fetched and verified through the store itself
//! (OCFL: from the version that is the package).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::CollectionError;
use super::row::{Check, KeptAt, PackageRow, RowOrigin};
use crate::store::config::{ReplicaLayout, StoreConfig};
use crate::store::ocfl::kept::Holdings;
use crate::store::state::{
    KeptPackage, ObjectCheckRecord, OcflPlace, PackageState, ReplicaCopies, StateReader,
};
use crate::store::{ObjectOnReplica, Provenance, Store, StoreError, StoreRefusal};

/// A package of the store to read: what the state database (or the replicas' listing) says
/// of its copies, the configured replicas that record none, and each configured replica's
/// last `store check` of it (of its object, on OCFL replicas).
pub(crate) struct Stored {
    pub package: PackageState,
    pub without_copy: Vec<String>,
    pub checks: Vec<ObjectCheckRecord>,
    /// On OCFL replicas: which package of its object the row is.
    ocfl: Option<OcflRole>,
}

impl Stored {
    /// Whether the row's copies are its own (not those of the object it is kept in, counted
    /// with that object's row).
    pub(crate) fn own_copies(&self) -> bool {
        !matches!(self.ocfl, Some(OcflRole::Kept { .. }))
    }

    /// Whether a replica's last check found problems (or could not read the copy).
    pub(crate) fn check_problems(&self) -> bool {
        self.checks.iter().any(|c| c.outcome != "clean")
    }
}

/// Which package of an OCFL object a row is.
enum OcflRole {
    /// The object's own package (its latest version put as itself): the latest head webaip
    /// recorded, and what the versions hold by their messages (`None`: its reference head
    /// could not be read; the fetch says why).
    Object { head: Option<u32>, held: Option<Holdings> },
    /// A package kept in another package's object, where the state database records it
    /// (`recorded`) or only the version's message says.
    Kept { place: OcflPlace, recorded: bool },
}

/// A store being read: its replicas (to fetch each METS from, from several threads) and a
/// scratch folder.
pub(crate) struct StoreRead {
    store: Store,
    scratch: tempfile::TempDir,
    ocfl: bool,
    /// The configured replicas' names, in order.
    names: Vec<String>,
}

impl StoreRead {
    /// Opens the store of the configuration at `config_path`, and its state database
    /// read-only (a missing one is an error, not one made empty; its connection stays on
    /// this thread).
    pub(crate) fn open(config_path: &Path) -> Result<(StoreRead, StateReader), CollectionError> {
        let config = StoreConfig::load(config_path)?;
        let reader = StateReader::open(&config.state)?;
        let scratch =
            tempfile::Builder::new().prefix("webaip-report-").tempdir().map_err(|source| {
                let what = "a scratch folder for the METS fetched".into();
                CollectionError::Write { what, source }
            })?;
        let ocfl = config.replicas.iter().any(|r| r.layout() == ReplicaLayout::Ocfl);
        let names = config.replicas.iter().map(|r| r.name.clone()).collect();
        Ok((StoreRead { store: Store::open(&config)?, scratch, ocfl, names }, reader))
    }

    /// The replicas' layout: `webaip` or `ocfl`.
    pub(crate) fn layout(&self) -> &'static str {
        if self.ocfl { "ocfl" } else { "webaip" }
    }

    /// Hands every package of the store (OCFL: every object, each followed by the packages
    /// kept in it), with a copy entry and its last check for every configured replica, to
    /// `each`.
    pub(crate) fn each(
        &self,
        reader: &StateReader,
        each: &mut dyn FnMut(Stored),
    ) -> Result<(), StoreError> {
        if self.ocfl {
            return self.each_object(reader, each);
        }
        let mut failed = None;
        reader.each_package(&mut |p| {
            match reader.object_checks(&p.identifier) {
                Ok(checks) => each(self.stored(p, checks, None)),
                Err(e) => failed = failed.take().or(Some(e)),
            };
        })?;
        failed.map_or(Ok(()), Err)
    }

    /// The objects of an OCFL store, each followed by the packages kept in it (and those kept
    /// in an object no replica holds, last). A package kept in an object is found where the
    /// state database records it, else by the message of the version holding it (the
    /// database lost the record, or a put was killed before writing it), as `store get`
    /// finds it.
    fn each_object(
        &self,
        reader: &StateReader,
        each: &mut dyn FnMut(Stored),
    ) -> Result<(), StoreError> {
        let mut recorded: BTreeMap<String, Vec<KeptPackage>> = BTreeMap::new();
        for k in reader.kept_packages()? {
            recorded.entry(k.place.object.clone()).or_default().push(k);
        }
        let objects = ocfl_objects(&self.store, &self.names)?;
        let known: BTreeSet<String> = recorded
            .values()
            .flatten()
            .map(|k| k.package.clone())
            .chain(objects.iter().map(|o| o.state.identifier.clone()))
            .collect();
        for object in objects {
            let checks = reader.object_checks(&object.dir)?;
            let id = object.state.identifier.clone();
            let held = self.store.holdings(&id).ok();
            let mut mine: Vec<(KeptPackage, bool)> =
                recorded.remove(&id).unwrap_or_default().into_iter().map(|k| (k, true)).collect();
            mine.extend(unrecorded_kept(&id, held.as_ref(), &known).map(|k| (k, false)));
            let mut p = object.state;
            if object.head.is_some() {
                p.accepted_at = reader.head_recorded_at(&id, &self.names)?;
            }
            let rows: Vec<Stored> =
                mine.iter().map(|(k, rec)| self.kept_row(k, *rec, &p, checks.clone())).collect();
            let role = OcflRole::Object { head: object.head, held };
            each(self.stored(p, checks, Some(role)));
            rows.into_iter().for_each(&mut *each);
        }
        for k in recorded.into_values().flatten() {
            let p = PackageState { identifier: k.package.clone(), ..Default::default() };
            let role = OcflRole::Kept { place: k.place, recorded: true };
            each(self.stored(p, Vec::new(), Some(role)));
        }
        Ok(())
    }

    /// The row of package `k`, kept in the object whose state is `object` (where the state
    /// database records it, or only the version's message says): the object's copies and
    /// checks.
    fn kept_row(
        &self,
        k: &KeptPackage,
        recorded: bool,
        object: &PackageState,
        checks: Vec<ObjectCheckRecord>,
    ) -> Stored {
        // Found only by its version's message, it has no record of being accepted (the row
        // says where it was found instead).
        let p = PackageState {
            identifier: k.package.clone(),
            accepted_at: k.recorded_at.clone(),
            replicas: object.replicas.clone(),
        };
        self.stored(p, checks, Some(OcflRole::Kept { place: k.place.clone(), recorded }))
    }

    /// `p` with a copy entry for every configured replica, and the checks of configured
    /// replicas only.
    fn stored(
        &self,
        p: PackageState,
        mut checks: Vec<ObjectCheckRecord>,
        ocfl: Option<OcflRole>,
    ) -> Stored {
        checks.retain(|c| self.names.contains(&c.replica));
        let (mut package, without_copy) = every_replica(p, &self.names);
        if ocfl.is_some() {
            // Every configured replica's last check, a replica found holding no copy too.
            with_checks(&mut package, &checks);
        }
        Stored { package, without_copy, checks, ocfl }
    }

    /// The row of a stored package: its METS fetched (verified against its recorded digest)
    /// into the scratch folder, read, and removed.
    pub(crate) fn row(&self, s: Stored, validate: bool) -> PackageRow {
        let to = self.scratch.path().join(crate::store::config::safe_name(&s.package.identifier));
        let (got, kept_at) = self.fetch_mets(&s, &to);
        let identifier = s.package.identifier.clone();
        let mut rejected = Vec::new();
        let mut row = match got {
            Ok(()) => PackageRow::of_package(identifier, &to, RowOrigin::Store, validate),
            Err(e) => {
                rejected = rejections(&e);
                let why = format!("its METS could not be fetched: {e}");
                PackageRow::not_read(identifier, RowOrigin::Store, why)
            }
        };
        let _ = std::fs::remove_dir_all(&to);
        row.last_check = Some(self.check_of(&s, &rejected));
        row.ocfl = kept_at;
        row.accepted_at = s.package.accepted_at;
        row.replicas = s.package.replicas;
        row.without_copy = s.without_copy;
        row.mets_rejected = rejected;
        row
    }

    /// Fetches the row's METS into `to`: the package's own (OCFL: from the version that is
    /// it), and where an OCFL store keeps it.
    fn fetch_mets(&self, s: &Stored, to: &Path) -> (Result<(), StoreError>, Option<KeptAt>) {
        let id = s.package.identifier.as_str();
        let mets = Some(crate::layout::METS);
        match &s.ocfl {
            None => (self.store.get(id, mets, to).map(drop), None),
            Some(OcflRole::Kept { place, recorded }) => {
                let at = KeptAt {
                    object: place.object.clone(),
                    version: place.version.clone(),
                    head_package: None,
                    place_recorded: *recorded,
                };
                let got = match (recorded, version_number(&place.version)) {
                    // The version the message names, read from its object.
                    (false, Some(n)) => self.store.get_version(&place.object, mets, Some(n), to),
                    // The store's get finds the version its record names.
                    _ => self.store.get(id, mets, to),
                };
                (got.map(drop), Some(at))
            }
            Some(OcflRole::Object { head, held }) => {
                let (n, at) = own_version(id, *head, held.as_ref());
                (self.store.get_version(id, mets, n, to).map(drop), Some(at))
            }
        }
    }

    /// The row's last check: the oldest of its copies' (webaip layout: of its files' looks;
    /// OCFL: of its object's checks on the configured replicas), whether every configured
    /// replica's last check was deep, and how its copies read.
    fn check_of(&self, s: &Stored, rejected: &[String]) -> Check {
        let every = self.names.iter().all(|n| s.checks.iter().any(|c| &c.replica == n));
        Check {
            by: "store",
            date: super::tally::oldest_check(&s.package),
            deep: deep_of(&s.checks, every),
            outcome: outcome(&s.package.replicas, rejected, s.check_problems()).into(),
        }
    }
}

/// The replicas whose copy a fetch rejected, and why (`replica: why`).
fn rejections(e: &StoreError) -> Vec<String> {
    match e {
        StoreError::Refused(r) => match r.as_ref() {
            StoreRefusal::NoGoodCopyToFetch { rejected, .. } => {
                rejected.0.iter().map(|(replica, why)| format!("{replica}: {why}")).collect()
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// How a package's copies read, in words: what this report found first, then what the
/// state database records (the copies' last looks, the last check runs); "no copy found bad"
/// only when every configured replica's copies were all found sound at a check.
fn outcome(copies: &[ReplicaCopies], rejected: &[String], check_problems: bool) -> &'static str {
    let checked = |c: &ReplicaCopies| c.ok == c.files && c.oldest_check.is_some();
    if !rejected.is_empty() {
        "copies found bad by this report (their METS failed verification)"
    } else if copies.iter().any(|c| c.missing + c.corrupt > 0) {
        "copies missing or corrupt"
    } else if check_problems {
        "the last store check found problems (store check says which)"
    } else if !copies.iter().all(checked) {
        "not every copy checked"
    } else {
        "no copy found bad"
    }
}

/// An OCFL object's copies with each configured replica's last check date (from
/// `object_check`), a replica whose check found no copy included.
fn with_checks(p: &mut PackageState, checks: &[ObjectCheckRecord]) {
    for c in &mut p.replicas {
        c.oldest_check =
            checks.iter().find(|k| k.replica == c.replica).map(|k| k.checked_at.clone());
    }
}

/// Whether every configured replica's last check hashed every file (`every`: each has a
/// record): `Some(false)` when one looked at sizes only; `None` when one is missing, or found
/// its copy missing, damaged or unreadable (a deep run did not hash what it did not find).
fn deep_of(checks: &[ObjectCheckRecord], every: bool) -> Option<bool> {
    if !every || checks.iter().any(|c| c.deep && c.outcome != "clean") {
        return None;
    }
    Some(checks.iter().all(|c| c.deep))
}

/// The number of version name `v`: `v2` (or `v002`) is 2.
fn version_number(v: &str) -> Option<u32> {
    v.strip_prefix('v').and_then(|n| n.parse().ok())
}

/// The version of object `id` that is its own package, and where the row says it is: the
/// latest version its messages say holds its own package (its head when none says another),
/// else its latest recorded head; the package its head holds when that is another.
fn own_version(id: &str, head: Option<u32>, held: Option<&Holdings>) -> (Option<u32>, KeptAt) {
    let at = |version: String| KeptAt {
        object: id.into(),
        version,
        head_package: None,
        place_recorded: true,
    };
    let Some(h) = held else {
        return (None, at(head.map_or_else(|| "head".into(), |n| format!("v{n}"))));
    };
    let n = h.own.unwrap_or(1);
    let mut kept = at(format!("v{n}"));
    kept.head_package = h.kept_at(h.head).filter(|_| h.head != n).map(str::to_string);
    (Some(n), kept)
}

/// The packages the messages of object `id`'s versions say it keeps that nothing else
/// places (`known`: those the state database places, and the objects of their own).
fn unrecorded_kept<'a>(
    id: &'a str,
    held: Option<&'a Holdings>,
    known: &'a BTreeSet<String>,
) -> impl Iterator<Item = KeptPackage> + 'a {
    held.into_iter().flat_map(|h| h.kept.iter()).filter(|(p, _)| !known.contains(p)).map(
        move |(p, n)| KeptPackage {
            package: p.clone(),
            place: OcflPlace { object: id.into(), version: format!("v{n}") },
            recorded_at: None,
        },
    )
}

/// `p` with a copy entry for every configured replica, in their order: one the state
/// database records no copy on counts its files (as many as another replica records, at
/// least one) missing, never checked.
fn every_replica(mut p: PackageState, names: &[String]) -> (PackageState, Vec<String>) {
    let files = p.replicas.iter().map(|c| c.files).max().unwrap_or(0).max(1);
    let mut without_copy = Vec::new();
    for name in names {
        if !p.replicas.iter().any(|c| &c.replica == name) {
            without_copy.push(name.clone());
            let absent = ReplicaCopies {
                replica: name.clone(),
                files,
                missing: files,
                ..Default::default()
            };
            p.replicas.push(absent);
        }
    }
    p.replicas.sort_by_key(|c| names.iter().position(|n| *n == c.replica).unwrap_or(usize::MAX));
    (p, without_copy)
}

/// An OCFL object as the replicas' listing and the state database show it.
struct ListedObject {
    /// Its copies, by replica.
    state: PackageState,
    /// Its directory in the storage roots (what `store check` records its checks by).
    dir: String,
    /// The latest head webaip recorded.
    head: Option<u32>,
}

/// The objects of an OCFL store, through its own listing (each replica's objects and their
/// head inventories) and the state database's records (an object recorded and held by no
/// replica is one too): one package state an object, one copy a replica. A copy is `ok` at
/// the latest head webaip recorded, `missing` where the replica holds no object, `corrupt`
/// otherwise (another head, an inventory that does not read, one webaip did not record:
/// `store check` says which).
fn ocfl_objects(store: &Store, names: &[String]) -> Result<Vec<ListedObject>, StoreError> {
    let mut by_id: BTreeMap<String, Vec<ObjectOnReplica>> = BTreeMap::new();
    for o in store.list_objects()? {
        let id = o.id.clone().unwrap_or_else(|| o.object.clone());
        by_id.entry(id).or_default().push(o);
    }
    for (_, anchor) in store.anchors(None)?.iter() {
        by_id.entry(anchor.id.clone()).or_default();
    }
    let listed = |(identifier, held): (String, Vec<ObjectOnReplica>)| {
        let recorded = |o: &&ObjectOnReplica| o.provenance == Some(Provenance::Recorded);
        let head = held.iter().filter(recorded).map(crate::store::ocfl::ops::head_number).max();
        let replicas = held
            .iter()
            .filter(|o| names.contains(&o.replica))
            .map(|o| {
                let ok = recorded(&o) && head == Some(crate::store::ocfl::ops::head_number(o));
                let (ok, corrupt) = (u64::from(ok), u64::from(!ok));
                ReplicaCopies {
                    replica: o.replica.clone(),
                    files: 1,
                    uploaded: 1,
                    ok,
                    corrupt,
                    ..Default::default()
                }
            })
            .collect();
        let dir = held.first().map_or_else(
            || crate::store::ocfl::layout::object_path(&identifier),
            |o| o.object.clone(),
        );
        // When it was accepted is the state database's to say (`each_object` asks it).
        let state = PackageState { identifier, accepted_at: None, replicas };
        ListedObject { state, dir, head }
    };
    Ok(by_id.into_iter().map(listed).collect())
}
