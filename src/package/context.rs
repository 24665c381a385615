//! What travels together through a package run, named: the run every event and description
//! is made with, the scanning of a capture source, an event's outcome.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::PackageOptions;
use crate::ids::Ids;
use crate::stages::identify::Identifier;
use crate::stages::scan::ScanEngine;

/// One package run as its events and descriptions read it: its identifiers, its options and
/// its clock (where the package is assembled travels beside it, where files are written).
#[derive(Clone, Copy)]
pub(crate) struct PackageRun<'a> {
    pub(crate) ids: &'a Ids,
    pub(crate) opts: &'a PackageOptions,
    pub(crate) now: DateTime<Utc>,
}

/// A PREMIS event's outcome and its detail note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventOutcome {
    pub(crate) outcome: String,
    pub(crate) detail: Option<String>,
}

/// The scanner of a run: its engine, and clamd's version, named in every event.
pub(crate) struct Scanner {
    pub(crate) engine: Arc<ScanEngine>,
    pub(crate) version: String,
}

/// What a capture source's captures pass through before they are written.
pub(crate) struct Scanning {
    /// The virus check, with a scanner.
    pub(crate) scanner: Option<Scanner>,
    /// PRONOM identification, unless `--identify none`.
    pub(crate) identifier: Option<Identifier>,
    /// Links are rewritten: every metadata record says whether its capture's were.
    pub(crate) rewriting: bool,
}
