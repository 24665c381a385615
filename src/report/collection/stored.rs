//! The rows of a store's packages: every package (or OCFL object) the state database records
//! or a replica holds, with a copy entry for every configured replica (one that holds no copy
//! counts it missing), each METS fetched and verified through the store itself.

use std::collections::BTreeMap;
use std::path::Path;

use super::CollectionError;
use super::row::{Check, PackageRow, RowOrigin};
use crate::store::config::{ReplicaLayout, StoreConfig};
use crate::store::state::{PackageState, ReplicaCopies, StateReader};
use crate::store::{ObjectOnReplica, Provenance, Store, StoreError, StoreRefusal};

/// A package of the store to read: what the state database (or the replicas' listing) says
/// of its copies, and the configured replicas that record none.
pub(crate) struct Stored {
    pub package: PackageState,
    pub without_copy: Vec<String>,
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
        let ocfl = config.replicas.iter().any(|r| r.layout == ReplicaLayout::Ocfl);
        let names = config.replicas.iter().map(|r| r.name.clone()).collect();
        Ok((StoreRead { store: Store::open(&config)?, scratch, ocfl, names }, reader))
    }

    /// The replicas' layout: `webaip` or `ocfl`.
    pub(crate) fn layout(&self) -> &'static str {
        if self.ocfl { "ocfl" } else { "webaip" }
    }

    /// Hands every package of the store (OCFL: every object), with a copy entry for every
    /// configured replica, to `each`.
    pub(crate) fn each(
        &self,
        reader: &StateReader,
        each: &mut dyn FnMut(Stored),
    ) -> Result<(), StoreError> {
        let mut with_every = |p: PackageState| each(every_replica(p, &self.names));
        if self.ocfl {
            ocfl_objects(&self.store, &self.names)?.into_iter().for_each(&mut with_every);
            Ok(())
        } else {
            reader.each_package(&mut with_every)
        }
    }

    /// The row of a stored package: its METS fetched (verified against its recorded digest)
    /// into the scratch folder, read, and removed.
    pub(crate) fn row(&self, s: Stored, validate: bool) -> PackageRow {
        let p = s.package;
        let to = self.scratch.path().join(crate::store::config::safe_name(&p.identifier));
        let got = self.store.get(&p.identifier, Some(crate::layout::METS), &to);
        let mut rejected = Vec::new();
        let mut row = match got {
            Ok(_) => PackageRow::of_package(p.identifier.clone(), &to, RowOrigin::Store, validate),
            Err(e) => {
                rejected = rejections(&e);
                let why = format!("its METS could not be fetched: {e}");
                PackageRow::not_read(p.identifier.clone(), RowOrigin::Store, why)
            }
        };
        let _ = std::fs::remove_dir_all(&to);
        row.last_check = Some(Check {
            by: "store",
            date: super::tally::oldest_check(&p),
            outcome: outcome(&p.replicas, &rejected, self.ocfl).into(),
        });
        row.accepted_at = p.accepted_at;
        row.replicas = p.replicas;
        row.without_copy = s.without_copy;
        row.mets_rejected = rejected;
        row
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
/// state database records; "no copy found bad" only when every configured replica's copies
/// were all found sound at a check.
fn outcome(copies: &[ReplicaCopies], rejected: &[String], ocfl: bool) -> &'static str {
    let checked = |c: &ReplicaCopies| c.ok == c.files && c.oldest_check.is_some();
    if !rejected.is_empty() {
        "copies found bad by this report (their METS failed verification)"
    } else if copies.iter().any(|c| c.missing + c.corrupt > 0) {
        "copies missing or corrupt"
    } else if ocfl {
        "every replica at the recorded head (no check recorded)"
    } else if !copies.iter().all(checked) {
        "not every copy checked"
    } else {
        "no copy found bad"
    }
}

/// `p` with a copy entry for every configured replica, in their order: one the state
/// database records no copy on counts its files (as many as another replica records, at
/// least one) missing, never checked.
fn every_replica(mut p: PackageState, names: &[String]) -> Stored {
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
    Stored { package: p, without_copy }
}

/// The objects of an OCFL store, through its own listing (each replica's objects and their
/// head inventories) and the state database's records (an object recorded and held by no
/// replica is one too): one package state an object, one copy a replica. A copy is `ok` at
/// the latest head webaip recorded, `missing` where the replica holds no object, `corrupt`
/// otherwise (another head, an inventory that does not read, one webaip did not record:
/// `store check` says which).
fn ocfl_objects(store: &Store, names: &[String]) -> Result<Vec<PackageState>, StoreError> {
    let mut by_id: BTreeMap<String, Vec<ObjectOnReplica>> = BTreeMap::new();
    for o in store.list_objects()? {
        let id = o.id.clone().unwrap_or_else(|| o.object.clone());
        by_id.entry(id).or_default().push(o);
    }
    for (_, anchor) in store.anchors(None)?.iter() {
        by_id.entry(anchor.id.clone()).or_default();
    }
    let state = |(identifier, held): (String, Vec<ObjectOnReplica>)| {
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
        let accepted_at = head.map(|n| format!("v{n} recorded"));
        PackageState { identifier, accepted_at, replicas }
    };
    Ok(by_id.into_iter().map(state).collect())
}
