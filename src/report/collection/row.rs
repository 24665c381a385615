//! One package's row: what its METS states (read in one bounded pass, as the package report
//! reads it, and validated), with what the journal or the state database records of it.

use std::path::Path;

use serde::Serialize;

use crate::report::ReportError;
use crate::report::captures::Count;
use crate::report::mets::MetsFacts;
use crate::stages::identify::Tally;
use crate::store::state::ReplicaCopies;

/// Where a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowOrigin {
    /// A package folder given.
    Folder,
    /// A batch journal's done item.
    Journal,
    /// A store's state database.
    Store,
}

/// The last event of a kind the METS records, and how its outcomes read.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The last event's outcome.
    pub outcome: String,
    /// Its date, as written.
    pub date: String,
    /// Events of the kind.
    pub events: u64,
    /// The worst outcome of all of them: `ok`, `warn` or `bad`.
    pub state: &'static str,
}

/// The last check of a package and when: the store's oldest copy check, else the last fixity
/// check the METS records.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What checked: `store` or `METS fixity check`.
    pub by: &'static str,
    /// When (RFC 3339 or as the METS writes it); `None`: a copy was never checked.
    pub date: Option<String>,
    /// Whether the last `store check` of every configured replica hashed every file (`false`:
    /// one looked at sizes only); `None`: not every replica's copy was checked by a `store
    /// check` run (or the check is the METS's).
    pub deep: Option<bool>,
    /// How it ended, in words.
    pub outcome: String,
}

/// Where an OCFL store keeps a package: its object, and the version that is the package (its
/// METS read from it).
#[derive(Debug, Clone, Serialize)]
pub struct KeptAt {
    /// The object (its id).
    pub object: String,
    /// The version (`v2`).
    pub version: String,
    /// The package the object's head is, when it is another one (an AIP kept in its
    /// submission's object).
    pub head_package: Option<String>,
    /// Whether the state database records where the package is (`false`: only the message
    /// of the version holding it says so; the record was lost, or a put killed before it).
    pub place_recorded: bool,
}

/// What a journal records of a done item.
#[derive(Debug, Clone, Serialize)]
pub struct BatchState {
    /// The item's key.
    pub key: String,
    /// When a put to the store was accepted.
    pub stored: Option<String>,
    /// Times it was started.
    pub attempts: u64,
}

/// One package of the collection.
#[derive(Debug, Clone, Serialize)]
pub struct PackageRow {
    /// The package: its folder, or its identifier in the store.
    pub package: String,
    /// Where the row came from.
    pub origin: RowOrigin,
    /// Why its METS was not read; `None` when it was.
    pub not_read: Option<String>,
    /// The website's title (else the METS `LABEL`).
    pub title: String,
    /// `OBJID`.
    pub objid: String,
    /// `TYPE` (sSIP, AIP).
    pub package_type: String,
    /// The earliest capture date the description states.
    pub captured_first: String,
    /// The latest.
    pub captured_last: String,
    /// WARC records the containers' PREMIS objects state.
    pub records: u64,
    /// Bytes of the files the METS lists (their `SIZE`s).
    pub bytes: u64,
    /// Files the METS lists.
    pub files: u64,
    /// Sums that passed 2^64 - 1 (hostile `SIZE`s or record counts) and are held there: of
    /// `bytes`, `records`; the row's figures are then "at least".
    pub sums_capped: Vec<&'static str>,
    /// Formats, most frequent first: the payloads' PUIDs the identification event states,
    /// else the package files' formats (their PREMIS objects).
    pub formats: Vec<Count>,
    /// `payloads` or `files`: what `formats` counts.
    pub formats_of: &'static str,
    /// The METS validation's verdict; `None` when not validated (without `validate`, a row
    /// read says only that its METS was read to its end).
    pub mets_valid: Option<bool>,
    /// Errors the validation found.
    pub mets_errors: u64,
    /// The last virus check event.
    pub virus_check: Option<Verdict>,
    /// The package-wide format identification event (the one over the most payloads, as the
    /// package report shows it), with every identification event counted.
    pub identification: Option<Verdict>,
    /// The last check.
    pub last_check: Option<Check>,
    /// What the journal records (journal rows).
    pub batch: Option<BatchState>,
    /// Copies per configured replica (store rows); for an OCFL store one copy is the object
    /// on a replica.
    pub replicas: Vec<ReplicaCopies>,
    /// Configured replicas the state database records no copy on (store rows): their copies
    /// are counted missing.
    pub without_copy: Vec<String>,
    /// Replicas whose copy of the METS this report fetched and found bad (failed
    /// verification or absent), and why (store rows).
    pub mets_rejected: Vec<String>,
    /// When the put was accepted (store rows).
    pub accepted_at: Option<String>,
    /// Where an OCFL store keeps the package (store rows of OCFL replicas).
    pub ocfl: Option<KeptAt>,
}

impl PackageRow {
    /// A row whose METS was not read, and why.
    pub(crate) fn not_read(package: String, origin: RowOrigin, why: String) -> PackageRow {
        PackageRow {
            package,
            origin,
            not_read: Some(crate::layout::clip(&why, 2000)),
            title: String::new(),
            objid: String::new(),
            package_type: String::new(),
            captured_first: String::new(),
            captured_last: String::new(),
            records: 0,
            bytes: 0,
            files: 0,
            sums_capped: Vec::new(),
            formats: Vec::new(),
            formats_of: "files",
            mets_valid: None,
            mets_errors: 0,
            virus_check: None,
            identification: None,
            last_check: None,
            batch: None,
            replicas: Vec::new(),
            without_copy: Vec::new(),
            mets_rejected: Vec::new(),
            accepted_at: None,
            ocfl: None,
        }
    }

    /// The row of the package at `path` (a folder or its METS), its METS validated when
    /// `validate`; one not read says why.
    pub(crate) fn of_package(
        shown: String,
        path: &Path,
        origin: RowOrigin,
        validate: bool,
    ) -> PackageRow {
        read_row(shown.clone(), path, origin, validate)
            .unwrap_or_else(|e| PackageRow::not_read(shown, origin, e.to_string()))
    }
}

fn read_row(
    shown: String,
    path: &Path,
    origin: RowOrigin,
    validate: bool,
) -> Result<PackageRow, ReportError> {
    let (_, mets) = crate::report::package_paths(path)?;
    let facts = crate::report::read_facts(&mets)?;
    let mut row = PackageRow::not_read(shown, origin, String::new());
    row.not_read = None;
    if validate {
        let validation = crate::mets::validate_mets(&mets, &Default::default())?;
        let verdict = crate::report::mets_verdict(&validation);
        row.mets_valid = Some(verdict.valid);
        row.mets_errors = verdict.errors;
    }
    describe(&mut row, &facts);
    Ok(row)
}

/// Fills the row with what the METS states.
fn describe(row: &mut PackageRow, facts: &MetsFacts) {
    let identity = crate::report::identity(facts);
    row.title = identity.title;
    row.objid = identity.objid;
    row.package_type = identity.package_type;
    let dates: Vec<&String> = identity.captured.iter().map(|(_, d)| d).collect();
    row.captured_first = dates.iter().min().map(|d| d.to_string()).unwrap_or_default();
    row.captured_last = dates.iter().max().map(|d| d.to_string()).unwrap_or_default();
    row.records = facts.object_totals.warc_records;
    let mut capped = facts.sums_capped.clone();
    for f in facts.folders.values() {
        row.files = row.files.saturating_add(f.files);
        if crate::report::mets::add_capped(&mut row.bytes, f.bytes) {
            capped.insert("bytes");
        }
    }
    row.sums_capped = capped.into_iter().collect();
    row.virus_check =
        crate::report::last_outcome(&facts.event_types, &facts.agents, "virus check").map(verdict);
    // The package-wide identification (an AIP's packaging's, over every payload), as the
    // package report shows it, not the last event (an ingest's, over described ones only).
    let identification = crate::report::identification_outcome(facts);
    let stated =
        identification.as_ref().and_then(|o| o.notes.iter().find_map(|n| Tally::from_summary(n)));
    row.identification = identification.map(verdict);
    (row.formats, row.formats_of) = match stated {
        Some(t) if !t.by_puid.is_empty() => (crate::report::ranked_counts(&t.by_puid), "payloads"),
        _ => (crate::report::ranked_counts(&facts.object_totals.formats), "files"),
    };
    row.last_check =
        crate::report::last_outcome(&facts.event_types, &facts.agents, "fixity check").map(|o| {
            Check { by: "METS fixity check", date: Some(o.date), deep: None, outcome: o.outcome }
        });
}

fn verdict(o: crate::report::EventOutcome) -> Verdict {
    let state = match o.worst() {
        crate::report::OutcomeState::Good => "ok",
        crate::report::OutcomeState::Unclear => "warn",
        crate::report::OutcomeState::Bad => "bad",
    };
    Verdict { outcome: o.outcome, date: o.date, events: o.events, state }
}
