//! The batch journal: one SQLite row per item, keyed by the item's key, in one of four states.
//!
//! `pending` (registered, not started), `running` (started; a row still `running` when no
//! run is alive belongs to a run that died, and is redone from scratch), `done` (package id,
//! size, SHA-512 of its METS, time; with `stored`, the time a put to the replicated store was
//! accepted; with `wacz` and `eark`, the file or folder an export of the package was written
//! to) and `failed` (error kind and message; a package whose put or export failed keeps its
//! record, so that a retry can deliver it again). The journal is in WAL mode.
//!
//! Commits are amortised where a lost change only makes the next run redo an item: a pending
//! item's start and any item's failure are grouped, up to [`COMMIT_EVERY`] changes or
//! [`COMMIT_AFTER`] (a run also calls [`Journal::commit_if_due`] while it waits), so that a
//! manifest of many small items is not one disk sync per change. A change a run acts on
//! afterwards (done, stored, exported, the start of an item that was done or failed) is
//! committed, with every change before it, before the call returns. A killed run thus leaves
//! every row as some change it made, and loses at most changes that leave an item to redo.
//!
//! The schema's version is SQLite's `user_version`: 0, the first (no `stored` column), and 1
//! (no `wacz` and `eark` columns) are brought to [`SCHEMA_VERSION`] when a journal is opened.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};
use serde::Serialize;

/// The journal a run keeps in `folder` when none is named: `batch-journal.sqlite`, or with a
/// shard `batch-journal-K-of-N.sqlite`, so that shards sharing a folder keep apart.
pub fn default_path(folder: &Path, shard: Option<super::shard::Shard>) -> PathBuf {
    folder.join(match shard {
        Some(s) => format!("batch-journal-{}-of-{}.sqlite", s.index, s.count),
        None => "batch-journal.sqlite".into(),
    })
}

/// The state of an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemState {
    /// Registered, not started.
    Pending,
    /// Started and not finished (or its run died).
    Running,
    /// Packaged.
    Done,
    /// Failed, with its reason.
    Failed,
}

impl ItemState {
    /// Its name in the journal and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ItemState::Pending => "pending",
            ItemState::Running => "running",
            ItemState::Done => "done",
            ItemState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Option<ItemState> {
        [ItemState::Pending, ItemState::Running, ItemState::Done, ItemState::Failed]
            .into_iter()
            .find(|st| st.name() == s)
    }
}

/// One item's row.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The item's key.
    pub key: String,
    /// Its manifest line, when it has one.
    pub line: Option<u64>,
    /// Its source, as resolved.
    pub source: String,
    /// Its package directory's name below the output folder.
    pub package: String,
    /// Its state.
    pub state: ItemState,
    /// The package's OBJID (done).
    pub package_id: Option<String>,
    /// The package's bytes (done).
    pub size: Option<u64>,
    /// SHA-512 of the package's METS.xml (done).
    pub mets_sha512: Option<String>,
    /// Whether the package report had findings to look at (done).
    pub findings: bool,
    /// Why it failed: a kind (failed).
    pub error_kind: Option<String>,
    /// Why it failed: the message (failed).
    pub error: Option<String>,
    /// Times the item was started.
    pub attempts: u64,
    /// When the row last changed (RFC 3339, UTC).
    pub updated: String,
    /// When a put of the package to the replicated store was accepted (RFC 3339, UTC).
    pub stored: Option<String>,
    /// The WACZ export of the package written (`--export-wacz`), as a path.
    pub wacz: Option<String>,
    /// The E-ARK export of the package written (`--export-eark`), as a path.
    pub eark: Option<String>,
}

/// An export of a package the journal records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportKind {
    /// A WACZ access copy.
    Wacz,
    /// An E-ARK information package.
    Eark,
}

impl ExportKind {
    /// Its name in the journal (the column) and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ExportKind::Wacz => "wacz",
            ExportKind::Eark => "eark",
        }
    }

    /// What the entry records of this export.
    pub fn of(self, e: &Entry) -> Option<&str> {
        match self {
            ExportKind::Wacz => e.wacz.as_deref(),
            ExportKind::Eark => e.eark.as_deref(),
        }
    }
}

/// What a finished package is recorded with.
#[derive(Debug, Clone)]
pub struct DoneRecord {
    /// The package's OBJID.
    pub package_id: String,
    /// Its bytes.
    pub size: u64,
    /// SHA-512 of its METS.xml.
    pub mets_sha512: String,
    /// Whether its report had findings.
    pub findings: bool,
}

/// The journal cannot be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[error("journal {}: {source}", path.display())]
pub struct JournalError {
    /// The journal file.
    pub path: PathBuf,
    /// What SQLite said.
    #[source]
    pub source: rusqlite::Error,
}

/// A journal row that cannot be taken: its key and why.
#[derive(Debug, Clone, Serialize)]
pub struct BadRow {
    /// The row's key.
    pub key: String,
    /// Why it cannot be taken.
    pub reason: String,
}

/// Changes grouped into one transaction at most.
pub const COMMIT_EVERY: u32 = 1000;

/// How long a transaction of grouped changes stays open at most (other runs of the same
/// journal, shards, wait for its write lock meanwhile).
pub const COMMIT_AFTER: Duration = Duration::from_millis(500);

/// The transaction of grouped changes, while one is open.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// When it began.
    since: Instant,
    /// Changes made in it.
    changes: u32,
}

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    db: Connection,
    path: PathBuf,
    open: Cell<Option<Open>>,
    /// The columns a row is read with: [`COLUMNS`], or for a journal of an earlier schema
    /// opened only to read, `NULL` in place of each column it lacks.
    columns: String,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS items (
    key TEXT PRIMARY KEY NOT NULL,
    line INTEGER,
    source TEXT NOT NULL,
    package TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
    package_id TEXT,
    size INTEGER,
    mets_sha512 TEXT,
    findings INTEGER NOT NULL DEFAULT 0,
    error_kind TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    updated TEXT NOT NULL,
    stored TEXT,
    wacz TEXT,
    eark TEXT
);";

/// The schema this code writes (SQLite's `user_version`); 0 has no `stored` column, 1 no
/// `wacz` and `eark` columns.
pub const SCHEMA_VERSION: i64 = 2;

/// The columns later schemas added, in order: a journal lacking one gets it when migrated.
const ADDED_COLUMNS: &[&str] = &["stored", "wacz", "eark"];

const COLUMNS: &str = "key, line, source, package, state, package_id, size, mets_sha512, \
                       findings, error_kind, error, attempts, updated, stored, wacz, eark";

/// Brings a journal of an earlier schema to [`SCHEMA_VERSION`], under the write lock, so that
/// two processes opening it at once migrate it once.
fn migrate(db: &Connection) -> rusqlite::Result<()> {
    let version: i64 = db.pragma_query_value(None, "user_version", |r| r.get(0))?;
    // A later webaip's journal may mean more by its rows than this one reads: using it would
    // record items done or stored by rules it does not know.
    if version > SCHEMA_VERSION {
        return Err(later_schema(version));
    }
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    db.execute_batch("BEGIN IMMEDIATE")?;
    let migrated = (|| {
        for column in ADDED_COLUMNS {
            let has: bool = db.query_row(
                "SELECT count(*) FROM pragma_table_info('items') WHERE name = ?1",
                [column],
                |r| r.get::<_, i64>(0).map(|n| n > 0),
            )?;
            if !has {
                db.execute_batch(&format!("ALTER TABLE items ADD COLUMN {column} TEXT"))?;
            }
        }
        db.pragma_update(None, "user_version", SCHEMA_VERSION)
    })();
    match migrated {
        Ok(()) => db.execute_batch("COMMIT"),
        Err(e) => {
            let _ = db.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// A journal of a later webaip: its rows may mean more than this one reads.
fn later_schema(version: i64) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
        Some(format!(
            "schema version {version}, written by a later webaip (this one reads up to \
             {SCHEMA_VERSION}): run that webaip, or give another --journal"
        )),
    )
}

/// [`COLUMNS`] with `NULL` in place of each later column the journal's table lacks.
fn read_columns(db: &Connection) -> rusqlite::Result<String> {
    let mut columns = COLUMNS.to_string();
    for column in ADDED_COLUMNS {
        let has: bool = db.query_row(
            "SELECT count(*) FROM pragma_table_info('items') WHERE name = ?1",
            [column],
            |r| r.get::<_, i64>(0).map(|n| n > 0),
        )?;
        if !has {
            columns = columns.replace(&format!(", {column}"), &format!(", NULL AS {column}"));
        }
    }
    Ok(columns)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// How long a journal's reader or writer waits for another process's transaction (workers of
/// other shards, `batch status`, `report`).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A connection to the journal at `path`, opened with `flags`, that waits for other processes'
/// transactions: every way of opening a journal starts here.
fn connect(path: &Path, flags: OpenFlags) -> Result<Connection, JournalError> {
    let err = |source| JournalError { path: path.to_path_buf(), source };
    let db = Connection::open_with_flags(path, flags).map_err(err)?;
    db.busy_timeout(BUSY_TIMEOUT).map_err(err)?;
    Ok(db)
}

impl Journal {
    /// Opens (creating when missing) a journal to run a batch with.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let err = |source| JournalError { path: path.to_path_buf(), source };
        let db = connect(path, OpenFlags::default())?;
        db.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
        db.execute_batch(SCHEMA).map_err(err)?;
        migrate(&db).map_err(err)?;
        Ok(Journal { db, path: path.to_path_buf(), open: Cell::new(None), columns: COLUMNS.into() })
    }

    /// Opens an existing journal to read (`batch status`); a missing file is an error.
    pub fn open_existing(path: &Path) -> Result<Journal, JournalError> {
        let err = |source| JournalError { path: path.to_path_buf(), source };
        let db = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        migrate(&db).map_err(err)?;
        Ok(Journal { db, path: path.to_path_buf(), open: Cell::new(None), columns: COLUMNS.into() })
    }

    /// Opens an existing journal only to read it (`report`): nothing in it or beside it is
    /// written, an earlier schema is read as it is (its missing columns as empty), a later
    /// one is refused.
    pub fn open_to_read(path: &Path) -> Result<Journal, JournalError> {
        let err = |source| JournalError { path: path.to_path_buf(), source };
        let db = connect(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let version: i64 =
            db.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(err)?;
        if version > SCHEMA_VERSION {
            return Err(err(later_schema(version)));
        }
        let columns = read_columns(&db).map_err(err)?;
        Ok(Journal { db, path: path.to_path_buf(), open: Cell::new(None), columns })
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> JournalError + '_ {
        |source| JournalError { path: self.path.clone(), source }
    }

    /// Makes a change that may wait for a later commit (see the module documentation).
    fn grouped(&self, sql: &str, params: impl rusqlite::Params) -> Result<(), JournalError> {
        let mut open = match self.open.get() {
            Some(open) => open,
            // IMMEDIATE: the write lock now, waiting on another run's under the busy timeout.
            None => {
                self.db.execute_batch("BEGIN IMMEDIATE").map_err(self.err())?;
                Open { since: Instant::now(), changes: 0 }
            }
        };
        open.changes += 1;
        self.open.set(Some(open));
        self.execute(sql, params)?;
        self.commit_if_due()
    }

    /// Makes a change committed, with every grouped change before it, when this returns.
    fn committed(&self, sql: &str, params: impl rusqlite::Params) -> Result<(), JournalError> {
        self.execute(sql, params)?;
        self.commit()
    }

    /// Runs a change through the statement cache: parsing SQL is most of a change's cost.
    fn execute(&self, sql: &str, params: impl rusqlite::Params) -> Result<(), JournalError> {
        let mut stmt = self.db.prepare_cached(sql).map_err(self.err())?;
        stmt.execute(params).map(drop).map_err(self.err())
    }

    /// Commits the grouped changes.
    pub fn commit(&self) -> Result<(), JournalError> {
        if self.open.take().is_some() {
            self.db.execute_batch("COMMIT").map_err(self.err())?;
        }
        Ok(())
    }

    /// Commits the grouped changes when there are [`COMMIT_EVERY`] of them, or the first is
    /// [`COMMIT_AFTER`] old.
    pub fn commit_if_due(&self) -> Result<(), JournalError> {
        match self.open.get() {
            Some(o) if o.changes >= COMMIT_EVERY || o.since.elapsed() >= COMMIT_AFTER => {
                self.commit()
            }
            _ => Ok(()),
        }
    }

    /// Registers items not yet in the journal as pending (one transaction); rows already
    /// there keep their state.
    pub fn register<'a>(
        &mut self,
        items: impl IntoIterator<Item = (&'a str, Option<u64>, String, &'a str)>,
    ) -> Result<(), JournalError> {
        self.commit()?;
        let path = self.path.clone();
        let err = |source| JournalError { path: path.clone(), source };
        let tx = self.db.transaction().map_err(err)?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT OR IGNORE INTO items (key, line, source, package, state, updated) \
                     VALUES (?1, ?2, ?3, ?4, 'pending', ?5)",
                )
                .map_err(err)?;
            let at = now();
            for (key, line, source, package) in items {
                insert.execute(params![key, line.map(signed), source, package, at]).map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    /// Gives the row of each `(former, key)` pair's former key the new key, when the journal
    /// has no row under the new one (one transaction): a journal written when keys were the
    /// sources as written resumes rather than packaging its items again.
    pub fn adopt<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), JournalError> {
        self.commit()?;
        let path = self.path.clone();
        let err = |source| JournalError { path: path.clone(), source };
        let tx = self.db.transaction().map_err(err)?;
        {
            let mut rename = tx
                .prepare(
                    "UPDATE items SET key = ?2 WHERE key = ?1 \
                     AND NOT EXISTS (SELECT 1 FROM items WHERE key = ?2)",
                )
                .map_err(err)?;
            for (former, key) in pairs {
                rename.execute(params![former, key]).map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    /// The row of an item.
    pub fn entry(&self, key: &str) -> Result<Option<Entry>, JournalError> {
        let sql = format!("SELECT {COLUMNS} FROM items WHERE key = ?1");
        let mut stmt = self.db.prepare_cached(&sql).map_err(self.err())?;
        stmt.query_row([key], entry_of).optional().map_err(self.err())
    }

    /// Every row, by key.
    pub fn entries(&self) -> Result<Vec<Entry>, JournalError> {
        let sql = format!("SELECT {COLUMNS} FROM items ORDER BY key");
        let mut stmt = self.db.prepare(&sql).map_err(self.err())?;
        let rows = stmt.query_map([], entry_of).map_err(self.err())?;
        rows.collect::<Result<_, _>>().map_err(self.err())
    }

    /// Hands every row, by key, to `each` as it is read (a journal of millions costs one
    /// row): a row that cannot be taken (an unknown state, a package that is not one folder
    /// name) comes as its key and why, so a report can name it and go on.
    pub fn each_row(
        &self,
        each: &mut dyn FnMut(Result<Entry, BadRow>),
    ) -> Result<(), JournalError> {
        let sql = format!("SELECT {} FROM items ORDER BY key", self.columns);
        let mut stmt = self.db.prepare(&sql).map_err(self.err())?;
        let mut rows = stmt.query([]).map_err(self.err())?;
        while let Some(row) = rows.next().map_err(self.err())? {
            each(entry_of(row).map_err(|e| BadRow {
                key: row.get::<_, String>(0).unwrap_or_else(|_| "(no key)".into()),
                reason: e.to_string(),
            }));
        }
        Ok(())
    }

    /// Marks an item running (one more attempt) towards the package directory `package`,
    /// clearing what an earlier attempt recorded. A pending item's start is grouped (lost, it
    /// leaves the item pending, which the next run redoes); a start that clears a package
    /// record or a failure is committed, so that no later run acts on what it cleared.
    pub fn start(&self, key: &str, package: &str) -> Result<(), JournalError> {
        let sql = "UPDATE items SET state = 'running', attempts = attempts + 1, package_id = NULL, \
                   size = NULL, mets_sha512 = NULL, findings = 0, error_kind = NULL, error = NULL, \
                   stored = NULL, wacz = NULL, eark = NULL, package = ?3, updated = ?2 \
                   WHERE key = ?1";
        let state = self.entry(key)?.map(|e| e.state);
        match state {
            Some(ItemState::Pending | ItemState::Running) => {
                self.grouped(sql, params![key, now(), package])
            }
            _ => self.committed(sql, params![key, now(), package]),
        }
    }

    /// Marks an item done with its package's record.
    pub fn done(&self, key: &str, r: &DoneRecord) -> Result<(), JournalError> {
        self.committed(
            "UPDATE items SET state = 'done', package_id = ?2, size = ?3, mets_sha512 = ?4, \
             findings = ?5, error_kind = NULL, error = NULL, updated = ?6 WHERE key = ?1",
            params![key, r.package_id, signed(r.size), r.mets_sha512, r.findings, now()],
        )
    }

    /// Marks an item's package stored (done, the put accepted); an item without a package
    /// record is left as it is.
    pub fn stored(&self, key: &str) -> Result<(), JournalError> {
        self.committed(
            "UPDATE items SET state = 'done', stored = ?2, error_kind = NULL, error = NULL, \
             updated = ?2 WHERE key = ?1 AND mets_sha512 IS NOT NULL",
            params![key, now()],
        )
    }

    /// Records the export `kind` of an item's package written to `path` (its state unchanged);
    /// an item without a package record is left as it is.
    pub fn exported(&self, key: &str, kind: ExportKind, path: &str) -> Result<(), JournalError> {
        // The column is one of two fixed names, never text from outside.
        let sql = format!(
            "UPDATE items SET {} = ?2, updated = ?3 WHERE key = ?1 AND mets_sha512 IS NOT NULL",
            kind.name()
        );
        self.committed(&sql, params![key, path, now()])
    }

    /// Marks an item done again with the package record it has (its put failed, and a run
    /// without a store keeps the package as it is); an item without one is left as it is.
    pub fn done_as_recorded(&self, key: &str) -> Result<(), JournalError> {
        self.committed(
            "UPDATE items SET state = 'done', error_kind = NULL, error = NULL, updated = ?2 \
             WHERE key = ?1 AND mets_sha512 IS NOT NULL",
            params![key, now()],
        )
    }

    /// Marks an item failed, with its reason (grouped: lost, it leaves the item to redo).
    pub fn failed(&self, key: &str, kind: &str, message: &str) -> Result<(), JournalError> {
        self.grouped(
            "UPDATE items SET state = 'failed', error_kind = ?2, error = ?3, updated = ?4 \
             WHERE key = ?1",
            params![key, kind, message, now()],
        )
    }
}

impl Drop for Journal {
    /// What a run recorded is kept when it stops on an error (a kill keeps less: see the
    /// module documentation).
    fn drop(&mut self) {
        let _ = self.commit();
    }
}

/// SQLite integers are signed; sizes and lines never reach 2^63.
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn entry_of(row: &Row<'_>) -> rusqlite::Result<Entry> {
    let state: String = row.get(4)?;
    let state = ItemState::parse(&state).ok_or_else(|| {
        let e = format!("unknown state {state:?}");
        rusqlite::Error::FromSqlConversionFailure(4, rusqlite::types::Type::Text, e.into())
    })?;
    // The package is a folder name (empty: none, as for an item refused) that runs join to the
    // output and work folders, and remove or move: a row naming anything else (an edited or
    // foreign journal) must not reach them.
    let package: String = row.get(3)?;
    // A done item without one (empty) would name the output folder itself.
    let none_allowed = package.is_empty() && state != ItemState::Done;
    if !none_allowed && !one_folder_name(&package) {
        let e = format!("package {package:?} is not one folder name");
        return Err(rusqlite::Error::FromSqlConversionFailure(
            3,
            rusqlite::types::Type::Text,
            e.into(),
        ));
    }
    Ok(Entry {
        key: row.get(0)?,
        line: row.get::<_, Option<i64>>(1)?.map(unsigned),
        source: row.get(2)?,
        package,
        state,
        package_id: row.get(5)?,
        size: row.get::<_, Option<i64>>(6)?.map(unsigned),
        mets_sha512: row.get(7)?,
        findings: row.get(8)?,
        error_kind: row.get(9)?,
        error: row.get(10)?,
        attempts: unsigned(row.get(11)?),
        updated: row.get(12)?,
        stored: row.get(13)?,
        wacz: row.get(14)?,
        eark: row.get(15)?,
    })
}

/// Whether `name` is one path component below a folder: not empty, `.`, `..`, absolute or
/// holding a separator.
fn one_folder_name(name: &str) -> bool {
    let mut parts = std::path::Path::new(name).components();
    matches!((parts.next(), parts.next()), (Some(std::path::Component::Normal(n)), None) if n.to_str() == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_is_read_back_by_another_connection() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("j.sqlite");
        let mut j = Journal::open(&path).unwrap();
        j.register([("a", Some(2), "src/a".to_string(), "a"), ("b", None, "b".into(), "b")])
            .unwrap();
        j.start("a", "a").unwrap();
        let other = Journal::open_existing(&path).unwrap();
        // A pending item's start is grouped: other connections see it once committed.
        assert_eq!(other.entry("a").unwrap().unwrap().state, ItemState::Pending);
        j.commit().unwrap();
        assert_eq!(other.entry("a").unwrap().unwrap().state, ItemState::Running);
        let record = DoneRecord {
            package_id: "urn:x".into(),
            size: 7,
            mets_sha512: "ab".into(),
            findings: true,
        };
        j.done("a", &record).unwrap();
        j.failed("b", "unrecognised", "no shape").unwrap();
        // Registering again keeps the states.
        j.register([("a", Some(2), "src/a".to_string(), "a")]).unwrap();
        let rows = other.entries().unwrap();
        assert_eq!((rows[0].state, rows[0].size, rows[0].attempts), (ItemState::Done, Some(7), 1));
        assert_eq!(rows[1].error_kind.as_deref(), Some("unrecognised"));
        assert!(Journal::open_existing(&tmp.path().join("none.sqlite")).is_err());
    }

    #[test]
    fn a_row_whose_package_is_not_one_folder_name_is_refused() {
        // Runs remove and move `WORK/PACKAGE`: a journal naming `..` or `/` must not get there.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("j.sqlite");
        let mut j = Journal::open(&path).unwrap();
        j.register([("a", Some(1), "a".to_string(), "a")]).unwrap();
        assert_eq!(j.entry("a").unwrap().unwrap().package, "a");
        for hostile in ["..", "../victim", "/", "/etc", "a/b", ".", "a/", ""] {
            let db = Connection::open(&path).unwrap();
            db.execute("UPDATE items SET package = ?1, state = 'done', stored = 'then'", [hostile])
                .unwrap();
            let err = j.entry("a").expect_err(hostile).to_string();
            assert!(err.contains("j.sqlite") && err.contains("not one folder name"), "{err}");
            assert!(j.entries().is_err(), "{hostile:?}");
        }
    }

    #[test]
    fn a_journal_of_a_later_schema_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("later.sqlite");
        Journal::open(&path).unwrap();
        let later = SCHEMA_VERSION + 1;
        Connection::open(&path).unwrap().pragma_update(None, "user_version", later).unwrap();
        for err in [Journal::open(&path).unwrap_err(), Journal::open_existing(&path).unwrap_err()] {
            let err = err.to_string();
            let said = format!("schema version {later}");
            assert!(err.contains("later.sqlite") && err.contains(&said), "{err}");
        }
    }

    #[test]
    fn a_journal_of_the_first_schema_is_migrated_and_keeps_its_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("old.sqlite");
        {
            let db = Connection::open(&path).unwrap();
            let first = SCHEMA.replace(",\n    stored TEXT,\n    wacz TEXT,\n    eark TEXT", "");
            assert!(!first.contains("stored") && !first.contains("wacz"));
            db.execute_batch(&first).unwrap();
            db.execute(
                "INSERT INTO items (key, source, package, state, mets_sha512, updated) \
                 VALUES ('a', 'a', 'a', 'done', 'ab', 'then')",
                [],
            )
            .unwrap();
        }
        // Read by `batch status` first: migrated there too.
        let j = Journal::open_existing(&path).unwrap();
        let a = j.entry("a").unwrap().unwrap();
        assert_eq!((a.state, a.stored), (ItemState::Done, None));
        j.stored("a").unwrap();
        assert!(j.entry("a").unwrap().unwrap().stored.is_some());
        let version: i64 = j.db.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        // Opened again to run: nothing to migrate, the row as it was.
        drop(j);
        let j = Journal::open(&path).unwrap();
        assert!(j.entry("a").unwrap().unwrap().stored.is_some());
        // A row with no package record is never recorded stored.
        j.db.execute(
            "INSERT INTO items (key, source, package, state, updated) \
                       VALUES ('b', 'b', 'b', 'failed', 'then')",
            [],
        )
        .unwrap();
        j.stored("b").unwrap();
        let b = j.entry("b").unwrap().unwrap();
        assert_eq!((b.state, b.stored), (ItemState::Failed, None));
    }
}
