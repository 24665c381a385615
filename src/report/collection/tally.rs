//! What the page shows over the whole collection, kept bounded: totals, distributions (by
//! year, by size class, by format: at most [`MAX_KEYS`] keys told apart), the first failed
//! batch items ([`MAX_FAILURES`]) and the packages whose last check is oldest ([`OLDEST`]).

use std::collections::{BTreeMap, BinaryHeap};

use serde::Serialize;

use super::row::PackageRow;
use crate::batch::Counts;
use crate::batch::journal::ItemState;

/// The kind of a failure that is a journal row that could not be taken.
pub(crate) const UNREADABLE_ROW: &str = "unreadable row";
use crate::report::captures::Count;
use crate::report::mets::add_capped;

/// Most years and formats told apart (the rest under `(other)`).
pub(crate) const MAX_KEYS: usize = 256;
/// Failed items listed (all are counted).
pub(crate) const MAX_FAILURES: usize = 1000;
/// Packages listed by their oldest check.
pub(crate) const OLDEST: usize = 20;

/// Upper bounds of the bytes-per-package classes (the last class is unbounded).
const SIZE_BOUNDS: [(u64, &str); 6] = [
    (1_000_000, "under 1 MB"),
    (10_000_000, "1–10 MB"),
    (100_000_000, "10–100 MB"),
    (1_000_000_000, "100 MB–1 GB"),
    (10_000_000_000, "1–10 GB"),
    (100_000_000_000, "10–100 GB"),
];
const SIZE_LAST: &str = "100 GB and over";

/// Packages and records of one year.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct YearCount {
    /// The year a package's capture began (as described), or `(not stated)`.
    pub year: String,
    /// Packages.
    pub packages: u64,
    /// WARC records their METS state.
    pub records: u64,
}

/// Packages of one size class.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct SizeClassCount {
    /// The class.
    pub class: &'static str,
    /// Packages in it.
    pub packages: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// Totals over every row.
#[derive(Debug, Clone, Serialize)]
pub struct CollectionTotals {
    /// Rows (packages).
    pub packages: u64,
    /// Of them, whose METS was read.
    pub read: u64,
    /// Of them, not read.
    pub not_read: u64,
    /// WARC records the METS state.
    pub records: u64,
    /// Bytes of the files the METS list.
    pub bytes: u64,
    /// Files the METS list.
    pub files: u64,
    /// METS valid.
    pub mets_valid: u64,
    /// METS invalid.
    pub mets_invalid: u64,
    /// METS read to their end and not validated (without `validate`).
    pub mets_not_validated: u64,
    /// Packages by how their virus checks read (`ok`, `warn`, `bad`, `no event`).
    pub virus_check: BTreeMap<String, u64>,
    /// Packages by how their identifications read.
    pub identification: BTreeMap<String, u64>,
    /// The earliest capture date stated.
    pub captured_first: String,
    /// The latest.
    pub captured_last: String,
    /// By the year a package's capture began, in order.
    pub by_year: Vec<YearCount>,
    /// Packages by their bytes.
    pub sizes: Vec<SizeClassCount>,
    /// Formats over the collection: the sum of every package's `formats` (payloads where the
    /// METS states them, else files), most frequent first.
    pub formats: Vec<Count>,
    /// Totals that could not be summed (a package's sizes or record counts, or their sum,
    /// pass 2^64 - 1) and are held at it: `bytes`, `records`; they are then "at least".
    pub sums_capped: std::collections::BTreeSet<&'static str>,
    /// Packages whose own sums were capped (counted in `sums_capped`).
    pub packages_capped: u64,
    #[serde(skip)]
    years: BTreeMap<String, YearCount>,
    #[serde(skip)]
    format_map: BTreeMap<String, u64>,
}

impl Default for CollectionTotals {
    fn default() -> Self {
        let mut sizes: Vec<SizeClassCount> = SIZE_BOUNDS
            .iter()
            .map(|&(_, class)| SizeClassCount { class, ..Default::default() })
            .collect();
        sizes.push(SizeClassCount { class: SIZE_LAST, ..Default::default() });
        CollectionTotals {
            packages: 0,
            read: 0,
            not_read: 0,
            records: 0,
            bytes: 0,
            files: 0,
            mets_valid: 0,
            mets_invalid: 0,
            mets_not_validated: 0,
            virus_check: BTreeMap::new(),
            identification: BTreeMap::new(),
            captured_first: String::new(),
            captured_last: String::new(),
            by_year: Vec::new(),
            sizes,
            formats: Vec::new(),
            sums_capped: Default::default(),
            packages_capped: 0,
            years: BTreeMap::new(),
            format_map: BTreeMap::new(),
        }
    }
}

/// Adds `n` to `key`, or to `(other)` once `MAX_KEYS` keys are held.
fn add_bounded(map: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    let key = if map.contains_key(key) || map.len() < MAX_KEYS { key } else { "(other)" };
    let sum = map.entry(key.to_string()).or_default();
    *sum = sum.saturating_add(n);
}

impl CollectionTotals {
    /// Counts a row.
    pub(crate) fn add(&mut self, r: &PackageRow) {
        self.packages += 1;
        if r.not_read.is_some() {
            self.not_read += 1;
            return;
        }
        self.read += 1;
        self.packages_capped += u64::from(!r.sums_capped.is_empty());
        self.sums_capped.extend(r.sums_capped.iter().copied());
        self.capped("records", |t| &mut t.records, r.records);
        self.capped("bytes", |t| &mut t.bytes, r.bytes);
        self.files = self.files.saturating_add(r.files);
        self.mets_valid += u64::from(r.mets_valid == Some(true));
        self.mets_invalid += u64::from(r.mets_valid == Some(false));
        self.mets_not_validated += u64::from(r.mets_valid.is_none());
        let state = |v: &Option<super::Verdict>| v.as_ref().map_or("no event", |v| v.state);
        *self.virus_check.entry(state(&r.virus_check).into()).or_default() += 1;
        *self.identification.entry(state(&r.identification).into()).or_default() += 1;
        self.dates(r);
        let class = SIZE_BOUNDS.iter().position(|(b, _)| r.bytes < *b).unwrap_or(SIZE_BOUNDS.len());
        self.sizes[class].packages += 1;
        self.capped("bytes", |t| &mut t.sizes[class].bytes, r.bytes);
        for f in &r.formats {
            add_bounded(&mut self.format_map, &f.key, f.count);
        }
    }

    fn dates(&mut self, r: &PackageRow) {
        if !r.captured_first.is_empty()
            && (self.captured_first.is_empty() || r.captured_first < self.captured_first)
        {
            self.captured_first = r.captured_first.clone();
        }
        if r.captured_last > self.captured_last {
            self.captured_last = r.captured_last.clone();
        }
        let year = match r.captured_first.get(..4) {
            Some(y) if y.bytes().all(|b| b.is_ascii_digit()) => y,
            _ => "(not stated)",
        };
        let key = if self.years.contains_key(year) || self.years.len() < MAX_KEYS {
            year
        } else {
            "(other)"
        };
        let y = self
            .years
            .entry(key.to_string())
            .or_insert_with(|| YearCount { year: key.to_string(), ..Default::default() });
        y.packages += 1;
        if add_capped(&mut y.records, r.records) {
            self.sums_capped.insert("records");
        }
    }

    /// Adds `n` to the sum `at` picks, held at 2^64 - 1 (and `what` marked capped) past it.
    fn capped(&mut self, what: &'static str, at: impl Fn(&mut Self) -> &mut u64, n: u64) {
        if add_capped(at(self), n) {
            self.sums_capped.insert(what);
        }
    }

    /// Makes the lists from the maps, once every row is counted.
    pub(crate) fn finish(&mut self) {
        self.by_year = self.years.values().cloned().collect();
        self.formats = crate::report::ranked_counts(&self.format_map);
    }
}

/// A failed batch item.
#[derive(Debug, Clone, Serialize)]
pub struct FailedItem {
    /// The journal.
    pub journal: String,
    /// The item's key.
    pub key: String,
    /// Its source.
    pub source: String,
    /// The kind of error.
    pub kind: String,
    /// Why.
    pub reason: String,
    /// When the row last changed.
    pub updated: String,
}

/// What the journals record.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BatchFacts {
    /// The journals' items by state, each item once: an item in several journals counts as
    /// done when one has it done (stored when one has it stored), else as its most recently
    /// changed row says (as `batch status` counts).
    pub counts: Counts,
    /// Rows that could not be taken (named in `failures` with kind `unreadable row`).
    pub bad_rows: u64,
    /// Done items whose package folder is not in the journal's folder (put to a store
    /// and not kept, or moved away): listed as not read.
    pub done_not_in_folder: u64,
    /// The failed items (and rows that could not be taken), the first 1,000.
    pub failures: Vec<FailedItem>,
    /// Failed items past those listed.
    pub failures_not_listed: u64,
    /// With several journals, each item's row that says most of it, by key (its texts
    /// dropped); counted at the end.
    #[serde(skip)]
    items: Option<std::collections::HashMap<String, crate::batch::journal::Entry>>,
}

impl BatchFacts {
    /// Counts items by key from now on (several journals are read).
    pub(crate) fn merge_items(&mut self) {
        self.items.get_or_insert_with(Default::default);
    }

    /// Counts a row: at once, or, merging, once every journal is read.
    pub(crate) fn count(&mut self, e: &crate::batch::journal::Entry) {
        let Some(items) = &mut self.items else { return self.counts.add(e) };
        if items.get(&e.key).is_none_or(|old| crate::batch::supersedes(e, old)) {
            let slim = crate::batch::journal::Entry {
                source: String::new(),
                package: String::new(),
                error: None,
                error_kind: None,
                mets_sha512: None,
                ..e.clone()
            };
            items.insert(e.key.clone(), slim);
        }
    }

    /// Counts the merged items; lists each failed item once, and only those failed in the
    /// end (not done in another journal).
    pub(crate) fn finish(&mut self) {
        let Some(items) = self.items.take() else { return };
        self.counts = Counts::default();
        items.values().for_each(|e| self.counts.add(e));
        let mut listed = std::collections::HashSet::new();
        self.failures.retain(|f| {
            let failed = items.get(&f.key).is_none_or(|e| e.state == ItemState::Failed);
            f.kind == UNREADABLE_ROW || (failed && listed.insert(f.key.clone()))
        });
        self.failures_not_listed = (self.counts.failed as u64).saturating_sub(listed.len() as u64);
    }

    /// Keeps a failure while fewer than [`MAX_FAILURES`] are listed; counts the rest.
    pub(crate) fn failed(&mut self, item: FailedItem) {
        if self.failures.len() < MAX_FAILURES {
            self.failures.push(item);
        } else {
            self.failures_not_listed += 1;
        }
    }
}

/// What a package that holds its own copies (not kept in another's object) adds besides them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OwnCopies {
    /// Whether the last check of a configured replica found problems.
    pub check_problems: bool,
}

/// A package among those whose last check is oldest.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct OldestCheck {
    /// Its oldest copy check (RFC 3339); `None`: a copy never checked (oldest of all).
    pub checked: Option<String>,
    /// The OBJID.
    pub identifier: String,
}

/// What the store's state database records.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreFacts {
    /// The configuration.
    pub config: String,
    /// The replicas' layout: `webaip` or `ocfl`.
    pub layout: &'static str,
    /// Packages it records or a replica holds (OCFL: an object's own package, and each
    /// package kept as a version of another's object).
    pub packages: u64,
    /// Objects (OCFL; for the webaip layout, its packages).
    pub objects: u64,
    /// Of the packages, accepted (every copy verified when put; OCFL: a head webaip
    /// recorded).
    pub accepted: u64,
    /// Copies (a file on a replica; OCFL: an object on a replica, once for all the packages
    /// it keeps), one for every configured replica: a replica that records none counts them
    /// missing.
    pub copies: u64,
    /// Of them, missing at their last look.
    pub copies_missing: u64,
    /// Of them, corrupt at their last look.
    pub copies_corrupt: u64,
    /// Copies of a METS this report fetched and found bad (failed verification or absent).
    pub mets_rejected: u64,
    /// Packages with a copy never checked.
    pub never_checked: u64,
    /// Objects (webaip layout: packages) whose last `store check` on a configured replica
    /// found problems or could not read the copy.
    pub checks_found_problems: u64,
    /// Per replica: copies, and how they were last seen.
    pub replicas: BTreeMap<String, crate::store::state::ReplicaCopies>,
    /// The packages whose last check is oldest, oldest first (at most 20).
    pub oldest_checks: Vec<OldestCheck>,
    #[serde(skip)]
    heap: BinaryHeap<OldestCheck>,
}

impl StoreFacts {
    /// Counts a package of the state database; its copies and checks only when they are its
    /// own (`own`: not those of the object it is kept in, counted with that object).
    pub(crate) fn add(&mut self, p: &crate::store::state::PackageState, own: Option<OwnCopies>) {
        self.packages += 1;
        self.accepted += u64::from(p.accepted_at.is_some());
        if let Some(own) = own {
            self.objects += 1;
            self.checks_found_problems += u64::from(own.check_problems);
            self.copies_of(p);
        }
        let checked = oldest_check(p);
        self.never_checked += u64::from(checked.is_none());
        self.heap.push(OldestCheck { checked, identifier: p.identifier.clone() });
        if self.heap.len() > OLDEST {
            self.heap.pop();
        }
    }

    fn copies_of(&mut self, p: &crate::store::state::PackageState) {
        for c in &p.replicas {
            self.copies += c.files;
            self.copies_missing += c.missing;
            self.copies_corrupt += c.corrupt;
            let fresh = !self.replicas.contains_key(&c.replica);
            let r = self.replicas.entry(c.replica.clone()).or_default();
            r.replica = c.replica.clone();
            // The replica's oldest copy check: never (`None`) once one copy was never checked.
            r.oldest_check = if fresh {
                c.oldest_check.clone()
            } else {
                r.oldest_check.clone().min(c.oldest_check.clone())
            };
            (r.files, r.uploaded, r.ok) = (r.files + c.files, r.uploaded + c.uploaded, r.ok + c.ok);
            (r.missing, r.corrupt) = (r.missing + c.missing, r.corrupt + c.corrupt);
        }
    }

    /// Lists the oldest checks, once every package is counted.
    pub(crate) fn finish(&mut self) {
        self.oldest_checks = std::mem::take(&mut self.heap).into_sorted_vec();
    }
}

/// A package's oldest copy check: `None` (never) when a replica holds a copy never checked.
pub(crate) fn oldest_check(p: &crate::store::state::PackageState) -> Option<String> {
    p.replicas.iter().map(|c| c.oldest_check.clone()).min().flatten()
}
