//! What becomes of a package once built: `--ingest` makes it an AIP, `--store` puts it into
//! the replicated store (`webaip store put`: audited, every copy written and verified).
//!
//! The order of one item is: package (in the work folder), ingest, record done (with the
//! METS SHA-512 of what is delivered), move into `OUT` (when there is one), put, record
//! stored. Without `OUT` the work folder holds the only local copy: it is removed once the
//! journal records the put accepted, never before. A put that fails (a replica unreachable,
//! a copy that does not verify, a refusal) fails the item with kind `store`; the package
//! stays where it is with its record, and `--retry-failed` puts that same package again
//! rather than rebuilding it. A run killed after `done` and before `stored` leaves a row done
//! and not stored: the next run finishes the put (a put of the same bytes is a no-op where a
//! copy verifies). A package whose METS is no longer the one recorded is built again; one
//! whose put failed, retried by a run without a store, is recorded done as it is.
//!
//! With `--export-wacz` and `--export-eark` ([`export`](super::export)), the package is
//! exported after the put (the preservation copy first, then the access copies), each export
//! recorded in the journal by where it was written; without `OUT` the local copy is removed
//! only once every export is recorded too. An export that fails fails the item with kind
//! `export` and keeps the package and its record, so that `--retry-failed` exports it again
//! without rebuilding it. A package done and delivered whose export a later run asks for (or
//! whose recorded export is not there any more) is exported by that run, not rebuilt.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::audit::AuditOptions;
use crate::ingest::{IngestError, IngestOptions, ingest};
use crate::mets::ValidateOptions;
use crate::store::config::StoreConfig;
use crate::store::{PutOptions, Store, StoreError};

use super::export::ExportOptions;
use super::journal::{Entry, ExportKind, ItemState, Journal, JournalError};

/// The error kind of an item whose put failed.
pub const STORE_KIND: &str = "store";
/// The error kind of an item whose export failed.
pub const EXPORT_KIND: &str = "export";
/// The error kind of an item whose ingest failed.
pub const INGEST_KIND: &str = "ingest";
/// The folder below the work folder where AIPs are made (item names are never hidden).
const INGEST_DIR: &str = ".ingest";

/// Where packages go besides (or instead of) the output folder.
#[derive(Debug, Clone, Default)]
pub struct DeliverOptions {
    /// Make each package an AIP (`webaip ingest`) before it is moved or stored.
    pub ingest: bool,
    /// Put each package into the store of this replica configuration.
    pub store: Option<PathBuf>,
    /// Move each package into the output folder; false (only with a store): the store holds
    /// it, and the local copy is removed once the put (and every export) is recorded.
    pub keep: bool,
    /// Export each package as a WACZ and/or an E-ARK package.
    pub exports: ExportOptions,
}

/// The delivery steps of a run: the store opened once, the options of ingest and put.
pub struct Delivery {
    store: Option<Store>,
    keep: bool,
    ingest: Option<IngestOptions>,
    audit: PutOptions,
    exports: ExportOptions,
}

/// Why a put was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum PutFailure {
    /// The store refused the package or could not be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Some copies were not written or did not verify.
    #[error("not accepted: failed on {}{}", replicas.join(", "), first.as_deref().map(|m| format!(" (first: {m})")).unwrap_or_default())]
    Incomplete {
        /// The replicas that did not verify every file.
        replicas: Vec<String>,
        /// The first failed copy's message.
        first: Option<String>,
    },
    /// The package is not where the journal says it was put.
    #[error("{}: the package recorded done is not there", path.display())]
    Gone {
        /// Where it should be.
        path: PathBuf,
    },
}

/// Why the AIP of an item could not be made.
#[derive(Debug, thiserror::Error)]
pub enum IngestFailure {
    /// Ingest refused or failed.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// The AIP could not be moved where the submission was.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// A delivery step that could not record what it did.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    /// The journal cannot be written.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

impl Delivery {
    /// Opens the store of `opts` (when there is one); `validate` and `deterministic` are the
    /// batch's, for ingest's audit and the store's.
    pub fn open(
        opts: &DeliverOptions,
        validate: ValidateOptions,
        deterministic: bool,
    ) -> Result<Delivery, StoreError> {
        let store = match &opts.store {
            Some(config) => Some(Store::open(&StoreConfig::load(config)?)?),
            None => None,
        };
        let ingest = opts.ingest.then(|| IngestOptions {
            out: PathBuf::new(),
            validate: validate.clone(),
            deterministic,
            mode: None,
        });
        Ok(Delivery {
            // Without a store, the output folder is the only place a package can go.
            keep: opts.keep || store.is_none(),
            store,
            ingest,
            // Packages the batch made or ingested are audited before they are put, as a put
            // of `ingest --store` is: the batch vouches for its output record by record.
            audit: PutOptions {
                check: AuditOptions { validate, deep: false, ..Default::default() },
                audit: true,
            },
            exports: opts.exports.clone(),
        })
    }

    /// Whether packages are moved into the output folder.
    pub fn keep(&self) -> bool {
        self.keep
    }

    /// Whether an item's package is made and recorded, and its delivery unfinished: done and
    /// not stored (with a store) or not exported as asked, or failed in its put or an export
    /// (retried with `--retry-failed`; without a store and exports, the package kept is all
    /// there is to deliver).
    pub fn unfinished(&self, e: &Entry) -> bool {
        e.mets_sha512.is_some()
            && match e.state {
                ItemState::Done => {
                    (self.store.is_some() && e.stored.is_none()) || !self.exports_due(e).is_empty()
                }
                ItemState::Failed => {
                    matches!(e.error_kind.as_deref(), Some(STORE_KIND) | Some(EXPORT_KIND))
                }
                _ => false,
            }
    }

    /// The exports asked for that the journal does not record for this package where they
    /// go now, or that are not there any more: (kind, where it goes).
    fn exports_due(&self, e: &Entry) -> Vec<(ExportKind, PathBuf)> {
        if e.package.is_empty() {
            return Vec::new();
        }
        let recorded = |kind: ExportKind, target: &Path| {
            kind.of(e) == Some(crate::sources::path_text(target).as_str())
                && std::fs::symlink_metadata(target).is_ok()
        };
        let targets = self.exports.targets(&e.package).into_iter();
        targets.filter(|(kind, target)| !recorded(*kind, target)).collect()
    }

    /// Where an item's package is once recorded done: in the output folder (`out`) when kept,
    /// else in the work folder (`work`).
    pub fn location(&self, out: &Path, work: &Path, package: &str) -> PathBuf {
        if self.keep { out.join(package) } else { work.join(package) }
    }

    /// The package of an unfinished entry, when it is still the one recorded (its METS's
    /// SHA-512 as the journal has it).
    pub fn recorded_package(&self, e: &Entry, at: &Path) -> bool {
        let mets = at.join(crate::layout::METS);
        match crate::package::hash_file(&mets) {
            Ok((_, sha)) => e.mets_sha512.as_deref() == Some(sha.as_str()),
            Err(_) => false,
        }
    }

    /// Makes the AIP of the submission package `built` (in the work folder `work`) and puts
    /// it in its place; returns the AIP's OBJID and bytes. Nothing without `--ingest`.
    pub fn ingest(
        &self,
        built: &Path,
        work: &Path,
        pool: &rayon::ThreadPool,
    ) -> Result<Option<(String, u64)>, IngestFailure> {
        let Some(base) = &self.ingest else { return Ok(None) };
        let name = built.file_name().unwrap_or_default();
        let stage = work.join(INGEST_DIR).join(name);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| IngestFailure::Io { path: path.clone(), source }
        };
        // What a killed run left of this item's ingest.
        if std::fs::symlink_metadata(&stage).is_ok() {
            std::fs::remove_dir_all(&stage).map_err(io(&stage))?;
        }
        std::fs::create_dir_all(&stage).map_err(io(&stage))?;
        let opts = IngestOptions { out: stage.clone(), ..base.clone() };
        let report = match pool.install(|| ingest(built, &opts, None, &|_| {})) {
            Ok(r) => r,
            Err(e) => {
                // The item fails: neither the submission nor a part of its AIP is kept in the
                // work folder (a retry builds both again).
                let _ = std::fs::remove_dir_all(&stage);
                let _ = std::fs::remove_dir_all(built);
                return Err(e.into());
            }
        };
        // The AIP's files are hard links to the submission's where the file system allows:
        // removing the submission leaves them whole.
        std::fs::remove_dir_all(built).map_err(io(built))?;
        std::fs::rename(&report.aip, built).map_err(io(&report.aip))?;
        std::fs::remove_dir(&stage).map_err(io(&stage))?;
        Ok(Some((report.objid, crate::layout::bytes_below(built))))
    }

    /// Delivers the package at `at` (recorded done, or failed in its delivery) that is not
    /// yet: puts it into the store and records it stored, exports it and records each
    /// export, records it done, then, when packages are not kept, removes it. A put not
    /// accepted fails the item (kind `store`), and so does an export that fails (kind
    /// `export`, after the others are tried); the package stays. Returns the item's state.
    pub fn finish(
        &self,
        key: &str,
        at: &Path,
        journal: &Mutex<Journal>,
    ) -> Result<ItemState, DeliverError> {
        let lock = || journal.lock().unwrap_or_else(|p| p.into_inner());
        let Some(entry) = lock().entry(key)? else { return Ok(ItemState::Failed) };
        if let Some(store) = self.store.as_ref().filter(|_| entry.stored.is_none()) {
            if let Err(e) = self.put(store, at) {
                lock().failed(key, STORE_KIND, &e.to_string())?;
                return Ok(ItemState::Failed);
            }
            lock().stored(key)?;
        }
        let (mut failures, mut failed_kind) = (Vec::new(), EXPORT_KIND);
        for (kind, target) in self.exports_due(&entry) {
            match self.exports.write(kind, at, &target) {
                Ok(_) => lock().exported(key, kind, &crate::sources::path_text(&target))?,
                Err(e) => {
                    failed_kind = super::item::failure_kind(failed_kind, &e);
                    failures.push(e.to_string());
                }
            }
        }
        if !failures.is_empty() {
            lock().failed(key, failed_kind, &failures.join("; "))?;
            return Ok(ItemState::Failed);
        }
        lock().done_as_recorded(key)?;
        if self.store.is_some() && !self.keep {
            // The store holds it now; a copy left by a failed removal is removed by the next
            // run (`tidy`).
            let _ = std::fs::remove_dir_all(at);
        }
        Ok(ItemState::Done)
    }

    fn put(&self, store: &Store, at: &Path) -> Result<(), PutFailure> {
        if std::fs::symlink_metadata(at).is_err() {
            return Err(PutFailure::Gone { path: at.to_path_buf() });
        }
        let report = store.put(at, &self.audit, &|_| {})?;
        if report.accepted {
            return Ok(());
        }
        let first =
            report.copies.iter().find(|c| c.status == crate::store::CopyStatus::Failed).map(|c| {
                format!("{} {}: {}", c.replica, c.file, c.message.as_deref().unwrap_or(""))
            });
        Err(PutFailure::Incomplete { replicas: report.failed_replicas, first })
    }

    /// Removes the local copy of a package recorded stored that a run did not get to remove
    /// (packages not kept).
    pub fn tidy(&self, e: &Entry, work: &Path) {
        if !self.keep && e.stored.is_some() && !e.package.is_empty() && !self.unfinished(e) {
            let left = work.join(&e.package);
            if std::fs::symlink_metadata(&left).is_ok() {
                let _ = std::fs::remove_dir_all(&left);
            }
        }
    }
}
