//! The state database: per package, file and replica, the upload status, the last checksum
//! status and when it was checked (NetarchiveSuite's `replicafileinfo`, with the indexes its
//! queries need). It is auxiliary: the replicas are the truth, and `store rebuild-state`
//! recreates it from them.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// How long a write waits for another process's transaction on a shared state database.
/// (Writes take the lock at their start, IMMEDIATE, so the wait applies: a deferred
/// transaction that must upgrade its lock fails at once instead.)
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

use super::StoreError;

pub(crate) mod lock;
mod migration;
mod removal;
mod runs;
pub(crate) use removal::ObjectRows;
pub use runs::SeenSummary;
pub(crate) use runs::{NewRun, ObjectOutcome, Pick, PlannedObject, RunCounts, RunRecord, Universe};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS package (
    id INTEGER PRIMARY KEY,
    identifier TEXT NOT NULL UNIQUE,
    dir TEXT NOT NULL,
    -- set only when every file verified on every replica
    accepted_at TEXT
);
CREATE TABLE IF NOT EXISTS file (
    id INTEGER PRIMARY KEY,
    package_id INTEGER NOT NULL REFERENCES package(id),
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha512 TEXT NOT NULL,
    UNIQUE (package_id, path)
);
CREATE TABLE IF NOT EXISTS replica (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS replicafileinfo (
    file_id INTEGER NOT NULL REFERENCES file(id),
    replica_id INTEGER NOT NULL REFERENCES replica(id),
    -- uploaded | failed | unknown
    upload_status TEXT NOT NULL,
    -- ok | missing | corrupt | unknown
    filelist_status TEXT NOT NULL,
    checksum_status TEXT NOT NULL,
    checked_at TEXT,
    message TEXT,
    PRIMARY KEY (file_id, replica_id)
);
CREATE INDEX IF NOT EXISTS fileandreplica ON replicafileinfo (file_id, replica_id);
CREATE INDEX IF NOT EXISTS replicaandfileliststatus ON replicafileinfo (replica_id, filelist_status);
CREATE INDEX IF NOT EXISTS replicaandchecksumstatus ON replicafileinfo (replica_id, checksum_status);
CREATE INDEX IF NOT EXISTS fileindex ON file (path);
-- what a package's METS says it requires (PREMIS dependency/requires, by OBJID)
CREATE TABLE IF NOT EXISTS dependency (
    package_id INTEGER NOT NULL REFERENCES package(id),
    requires TEXT NOT NULL,
    PRIMARY KEY (package_id, requires)
);
CREATE INDEX IF NOT EXISTS requiredindex ON dependency (requires);
-- OCFL replicas: each object's head on each replica, recorded only once it is committed there
CREATE TABLE IF NOT EXISTS ocfl_head (
    identifier TEXT NOT NULL,
    replica TEXT NOT NULL,
    head TEXT NOT NULL,
    inventory_sha512 TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (identifier, replica)
);
-- OCFL replicas: every head inventory webaip built for an object, recorded before it is
-- committed anywhere (so a commit a kill cut short of its ocfl_head row is still known)
CREATE TABLE IF NOT EXISTS ocfl_inventory (
    identifier TEXT NOT NULL,
    inventory_sha512 TEXT NOT NULL,
    head TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (identifier, inventory_sha512)
);
-- OCFL replicas: a package kept as a version of another package's object (an AIP made from a
-- stored submission, whose unchanged containers it shares): the object and the version
CREATE TABLE IF NOT EXISTS ocfl_package (
    package TEXT PRIMARY KEY,
    object TEXT NOT NULL,
    version TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
-- OCFL replicas: the objects the replicas held when this database first recorded one (a new
-- store, or a database lost and started again): older than its records, they are judged by
-- the replicas' majority, never as objects planted since
-- OCFL replicas: what a package's METS says it requires (PREMIS dependency/requires, by OBJID),
-- keyed by the package's OBJID (an OCFL package has no row in `package`)
CREATE TABLE IF NOT EXISTS ocfl_dependency (
    package TEXT NOT NULL,
    requires TEXT NOT NULL,
    PRIMARY KEY (package, requires)
);
-- OCFL replicas: objects whose every kept package up to version `head` is in ocfl_package (put
-- from their first version by this database, or found again by rebuild-state): a search for a
-- package the records do not place need not read their inventories
CREATE TABLE IF NOT EXISTS ocfl_kept_recorded (
    identifier TEXT PRIMARY KEY,
    object TEXT NOT NULL,
    head TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ocfl_predating (
    object TEXT PRIMARY KEY,
    recorded_at TEXT NOT NULL
);
-- OCFL replicas: an object whose `store remove` began and has not finished on every replica
-- (its other rows are forgotten only then; see state/removal.rs)
CREATE TABLE IF NOT EXISTS ocfl_removal (
    identifier TEXT PRIMARY KEY,
    started_at TEXT NOT NULL
);
";

/// Where a package kept inside another package's OCFL object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OcflPlace {
    /// The object id (the submission's OBJID).
    pub object: String,
    /// The version that holds the package (`v2`).
    pub version: String,
}

/// One head inventory of an OCFL object that webaip built or committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OcflRecord {
    /// The object id.
    pub identifier: String,
    /// The inventory's SHA-512 (lower-case hex).
    pub inventory_sha512: String,
    /// Its head version (`v2`).
    pub head: String,
    /// The replica it was committed on (`None`: a head inventory webaip built, committed or
    /// not).
    pub replica: Option<String>,
}

/// A file of a package as the database records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileRecord {
    /// Package-relative path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-512, lower-case hex.
    pub sha512: String,
}

/// What the last look at a copy found (its presence in a listing, or its checksum), as the
/// state database records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Present, or its checksum matched.
    Ok,
    /// Not in the replica's listing.
    Missing,
    /// Its checksum (or size) differs.
    Corrupt,
    /// Not looked at, or could not be.
    Unknown,
}

impl Seen {
    /// The database's word for it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Seen::Ok => "ok",
            Seen::Missing => "missing",
            Seen::Corrupt => "corrupt",
            Seen::Unknown => "unknown",
        }
    }

    /// Reads the database's word (anything else is unknown).
    pub(crate) fn parse(s: &str) -> Seen {
        match s {
            "ok" => Seen::Ok,
            "missing" => Seen::Missing,
            "corrupt" => Seen::Corrupt,
            _ => Seen::Unknown,
        }
    }
}

/// How a copy's upload ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upload {
    /// Written (or found already there) and verified.
    Uploaded,
    /// Not written.
    Failed,
}

impl Upload {
    /// The database's word for it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Upload::Uploaded => "uploaded",
            Upload::Failed => "failed",
        }
    }
}

/// What is known of one copy, for [`StateDb::record_copies`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct CopyRow<'a> {
    /// The package identifier.
    pub identifier: &'a str,
    /// The package-relative file.
    pub path: &'a str,
    /// The replica.
    pub replica: &'a str,
    /// How its upload ended, or `None` to keep what is recorded.
    pub upload: Option<Upload>,
    /// Whether the replica's listing holds it (`Ok`, `Missing`, `Unknown`).
    pub filelist: Seen,
    /// Its checksum (`Ok`, `Corrupt`, `Unknown`), or `None` to keep what is recorded (a check
    /// that did not hash the copy learns nothing about its checksum).
    pub checksum: Option<Seen>,
    /// Why, when something is wrong.
    pub message: Option<&'a str>,
}

/// The state database.
pub(crate) struct StateDb {
    conn: Connection,
}

fn db(e: rusqlite::Error) -> StoreError {
    StoreError::State(e)
}

impl StateDb {
    /// Opens (creating when needed) the database at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|source| StoreError::StateDir { path: dir.into(), source })?;
        }
        let conn = Connection::open(path).map_err(db)?;
        // A database shared by several processes (two puts at once) is waited on, not failed.
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
        // Two processes opening a new database at once: switching to WAL, or creating the
        // tables from a snapshot the other has just changed, can fail with SQLITE_BUSY without
        // SQLite's busy handler being asked (a deferred read that must become a write). The
        // tables are created under the write lock (IMMEDIATE), and a busy start is retried.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            let r = conn
                .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
                .and_then(|_| conn.execute_batch(&format!("BEGIN IMMEDIATE; {SCHEMA} COMMIT;")));
            match r {
                Ok(()) => break,
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    let _ = conn.execute_batch("ROLLBACK;");
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(db(e)),
            }
        }
        runs::migrate(&conn).map_err(db)?;
        Ok(StateDb { conn })
    }

    /// The files recorded for a package, if it is recorded.
    pub(crate) fn package_files(
        &self,
        identifier: &str,
    ) -> Result<Option<Vec<FileRecord>>, StoreError> {
        let id: Option<i64> = self
            .conn
            .query_row("SELECT id FROM package WHERE identifier = ?1", [identifier], |r| r.get(0))
            .optional()
            .map_err(db)?;
        let Some(id) = id else { return Ok(None) };
        let mut st = self
            .conn
            .prepare("SELECT path, size, sha512 FROM file WHERE package_id = ?1 ORDER BY path")
            .map_err(db)?;
        let rows = st
            .query_map([id], |r| {
                Ok(FileRecord {
                    path: r.get(0)?,
                    size: r.get::<_, i64>(1)? as u64,
                    sha512: r.get(2)?,
                })
            })
            .map_err(db)?;
        Ok(Some(rows.collect::<Result<Vec<_>, _>>().map_err(db)?))
    }

    /// Records a package and its files (once; later calls with the same files change nothing).
    pub(crate) fn record_package(
        &mut self,
        identifier: &str,
        dir: &str,
        files: &[FileRecord],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        tx.execute(
            "INSERT OR IGNORE INTO package (identifier, dir) VALUES (?1, ?2)",
            params![identifier, dir],
        )
        .map_err(db)?;
        let id: i64 = tx
            .query_row("SELECT id FROM package WHERE identifier = ?1", [identifier], |r| r.get(0))
            .map_err(db)?;
        for f in files {
            tx.execute(
                "INSERT OR IGNORE INTO file (package_id, path, size, sha512) VALUES (?1, ?2, ?3, ?4)",
                params![id, f.path, f.size as i64, f.sha512],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Records that `replica` holds object `identifier` committed at `head` (whose inventory
    /// has SHA-512 `inventory_sha512`). Called only after the commit; a later head recorded
    /// there already is kept.
    pub(crate) fn record_ocfl_head(
        &mut self,
        identifier: &str,
        replica: &str,
        head: &str,
        inventory_sha512: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                // Never lowered: a later head webaip committed here stays the record (an
                // older one restored is a rollback to report, not a new truth).
                "INSERT INTO ocfl_head (identifier, replica, head, inventory_sha512, recorded_at)
                 VALUES (?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
                 ON CONFLICT (identifier, replica) DO UPDATE SET
                   head = excluded.head, inventory_sha512 = excluded.inventory_sha512,
                   recorded_at = excluded.recorded_at
                 WHERE CAST(substr(excluded.head, 2) AS INTEGER) >= CAST(substr(head, 2) AS INTEGER)",
                params![identifier, replica, head, inventory_sha512],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// Drops the record that webaip committed object `identifier` on `replica` (the one
    /// lowering of that record): `store migrate` moving a damaged object it committed out of
    /// a bucket, once every file of it is downloaded, so that a run killed among the deletes
    /// leaves an uncommitted first version the next run clears as its own.
    pub(crate) fn forget_ocfl_head(
        &mut self,
        identifier: &str,
        replica: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "DELETE FROM ocfl_head WHERE identifier = ?1 AND replica = ?2",
                params![identifier, replica],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// Records that webaip built head inventory `inventory_sha512` (version `head`) of object
    /// `identifier`; called before the inventory is committed on any replica.
    pub(crate) fn record_ocfl_inventory(
        &mut self,
        identifier: &str,
        head: &str,
        inventory_sha512: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO ocfl_inventory (identifier, inventory_sha512, head, recorded_at)
                 VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                params![identifier, inventory_sha512.to_ascii_lowercase(), head],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// Records that `package` is `place.version` of object `place.object`.
    pub(crate) fn record_ocfl_package(
        &mut self,
        package: &str,
        place: &OcflPlace,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO ocfl_package (package, object, version, recorded_at)
                 VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                params![package, place.object, place.version],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// Where `package` was kept, when it was put into another package's object.
    pub(crate) fn ocfl_package(&self, package: &str) -> Result<Option<OcflPlace>, StoreError> {
        self.conn
            .query_row(
                "SELECT object, version FROM ocfl_package WHERE package = ?1",
                [package],
                |r| Ok(OcflPlace { object: r.get(0)?, version: r.get(1)? }),
            )
            .optional()
            .map_err(db)
    }

    /// Records that every package kept in object `identifier` (at directory `object`) up to
    /// version `head` is in `ocfl_package`: from nothing when `prev` is `None` (a new object,
    /// or one whose versions were all read again), else only when it was so up to `prev`.
    pub(crate) fn record_kept_recorded(
        &mut self,
        identifier: &str,
        object: &str,
        prev: Option<&str>,
        head: &str,
    ) -> Result<(), StoreError> {
        let sql = match prev {
            None => {
                "INSERT OR REPLACE INTO ocfl_kept_recorded (identifier, object, head)
                 VALUES (?1, ?2, ?4)"
            }
            Some(_) => {
                "UPDATE ocfl_kept_recorded SET head = ?4
                 WHERE identifier = ?1 AND object = ?2 AND head = ?3"
            }
        };
        self.conn.execute(sql, params![identifier, object, prev, head]).map(|_| ()).map_err(db)
    }

    /// The object directories whose every kept package is recorded up to the latest head
    /// webaip built of them (a later head, of a put killed before it recorded its package's
    /// place, leaves the object out).
    pub(crate) fn kept_recorded_objects(
        &self,
    ) -> Result<std::collections::BTreeSet<String>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT k.object FROM ocfl_kept_recorded k
                 WHERE CAST(substr(k.head, 2) AS INTEGER) >= (
                   SELECT MAX(CAST(substr(head, 2) AS INTEGER)) FROM (
                     SELECT head FROM ocfl_inventory WHERE identifier = k.identifier
                     UNION ALL
                     SELECT head FROM ocfl_head WHERE identifier = k.identifier))",
            )
            .map_err(db)?;
        let rows = st.query_map([], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// Whether the database records any OCFL object at all.
    pub(crate) fn records_ocfl(&self) -> Result<bool, StoreError> {
        self.conn
            .query_row("SELECT EXISTS (SELECT 1 FROM ocfl_inventory)", [], |r| r.get(0))
            .map_err(db)
    }

    /// Records `objects` (object directories) as held by the replicas before this database
    /// recorded any OCFL object; does nothing once it records one (checked in the same
    /// transaction, so two first puts at once record one set).
    pub(crate) fn record_ocfl_predating(&mut self, objects: &[String]) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        let recorded: bool = tx
            .query_row("SELECT EXISTS (SELECT 1 FROM ocfl_inventory)", [], |r| r.get(0))
            .map_err(db)?;
        if !recorded {
            for o in objects {
                tx.execute(
                    "INSERT OR IGNORE INTO ocfl_predating (object, recorded_at)
                     VALUES (?1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    [o],
                )
                .map_err(db)?;
            }
        }
        tx.commit().map_err(db)
    }

    /// The objects (directories) recorded as older than the database's records (every one,
    /// or only `object`).
    pub(crate) fn each_ocfl_predating(
        &self,
        object: Option<&str>,
        each: &mut dyn FnMut(String),
    ) -> Result<(), StoreError> {
        // As in `each_ocfl_record`: one statement per case, so one object is an index look-up.
        let mut st = match object {
            Some(_) => {
                self.conn.prepare_cached("SELECT object FROM ocfl_predating WHERE object = ?1")
            }
            None => self.conn.prepare_cached("SELECT object FROM ocfl_predating"),
        }
        .map_err(db)?;
        let mut rows = match object {
            Some(o) => st.query([o]),
            None => st.query([]),
        }
        .map_err(db)?;
        while let Some(r) = rows.next().map_err(db)? {
            each(r.get(0).map_err(db)?);
        }
        Ok(())
    }

    /// What webaip recorded of OCFL objects (every object, or only `identifier`): the head
    /// inventories it built, and those it committed on a replica; each row handed to `each`
    /// as it is read (a store can hold many objects: no list of every row is built here).
    pub(crate) fn each_ocfl_record(
        &self,
        identifier: Option<&str>,
        each: &mut dyn FnMut(OcflRecord),
    ) -> Result<(), StoreError> {
        // One statement for each case: `?1 IS NULL OR identifier = ?1` would keep SQLite
        // from the primary key's index, a scan of every record for each object checked.
        let sql = match identifier {
            Some(_) => {
                "SELECT identifier, inventory_sha512, head, NULL FROM ocfl_inventory
                 WHERE identifier = ?1
                 UNION ALL
                 SELECT identifier, inventory_sha512, head, replica FROM ocfl_head
                 WHERE identifier = ?1"
            }
            None => {
                "SELECT identifier, inventory_sha512, head, NULL FROM ocfl_inventory
                 UNION ALL
                 SELECT identifier, inventory_sha512, head, replica FROM ocfl_head"
            }
        };
        let mut st = self.conn.prepare_cached(sql).map_err(db)?;
        let mut rows = match identifier {
            Some(id) => st.query([id]),
            None => st.query([]),
        }
        .map_err(db)?;
        while let Some(r) = rows.next().map_err(db)? {
            each(ocfl_record_of(r)?);
        }
        Ok(())
    }

    /// What webaip recorded of the objects whose ids start with `start` (an id a long object
    /// directory's name keeps only the start of), each row handed to `each` in id order.
    pub(crate) fn each_ocfl_record_from(
        &self,
        start: &str,
        each: &mut dyn FnMut(OcflRecord),
    ) -> Result<(), StoreError> {
        // Two ranges on the tables' primary keys, each read only while its ids start so.
        for sql in [
            "SELECT identifier, inventory_sha512, head, NULL FROM ocfl_inventory
             WHERE identifier >= ?1 ORDER BY identifier",
            "SELECT identifier, inventory_sha512, head, replica FROM ocfl_head
             WHERE identifier >= ?1 ORDER BY identifier",
        ] {
            let mut st = self.conn.prepare_cached(sql).map_err(db)?;
            let mut rows = st.query([start]).map_err(db)?;
            while let Some(r) = rows.next().map_err(db)? {
                let record = ocfl_record_of(r)?;
                if !record.identifier.starts_with(start) {
                    break;
                }
                each(record);
            }
        }
        Ok(())
    }

    /// Whether the database records any OCFL object, built or committed.
    pub(crate) fn records_any_ocfl_object(&self) -> Result<bool, StoreError> {
        let sql =
            "SELECT EXISTS (SELECT 1 FROM ocfl_inventory) OR EXISTS (SELECT 1 FROM ocfl_head)";
        self.conn.query_row(sql, [], |r| r.get(0)).map_err(db)
    }

    /// Records the OBJIDs a recorded package requires (added to what is recorded already).
    pub(crate) fn record_dependencies(
        &mut self,
        identifier: &str,
        requires: &std::collections::BTreeSet<String>,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        for r in requires {
            tx.execute(
                "INSERT OR IGNORE INTO dependency (package_id, requires)
                 SELECT id, ?2 FROM package WHERE identifier = ?1",
                params![identifier, r],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Records the OBJIDs an OCFL package requires (added to what is recorded already).
    pub(crate) fn record_ocfl_dependencies(
        &mut self,
        package: &str,
        requires: &std::collections::BTreeSet<String>,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        for r in requires {
            tx.execute(
                "INSERT OR IGNORE INTO ocfl_dependency (package, requires) VALUES (?1, ?2)",
                params![package, r],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Every recorded dependency of an OCFL package: (package, the OBJID it requires), in
    /// order.
    pub(crate) fn ocfl_dependencies(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT package, requires FROM ocfl_dependency ORDER BY package, requires")
            .map_err(db)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// Every recorded dependency: (package, the OBJID it requires), in order.
    pub(crate) fn dependencies(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT package.identifier, dependency.requires FROM dependency
                 JOIN package ON package.id = dependency.package_id
                 ORDER BY package.identifier, dependency.requires",
            )
            .map_err(db)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// The recorded packages that require `identifier`.
    pub(crate) fn dependents(&self, identifier: &str) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT package.identifier FROM dependency
                 JOIN package ON package.id = dependency.package_id
                 WHERE dependency.requires = ?1 AND package.identifier <> ?1
                 ORDER BY package.identifier",
            )
            .map_err(db)?;
        let rows = st.query_map([identifier], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// Forgets a package: its dependencies, copies, files and itself.
    pub(crate) fn forget_package(&mut self, identifier: &str) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        let id: Option<i64> = tx
            .query_row("SELECT id FROM package WHERE identifier = ?1", [identifier], |r| r.get(0))
            .optional()
            .map_err(db)?;
        if let Some(id) = id {
            tx.execute("DELETE FROM dependency WHERE package_id = ?1", [id]).map_err(db)?;
            tx.execute(
                "DELETE FROM replicafileinfo WHERE file_id IN (SELECT id FROM file WHERE package_id = ?1)",
                [id],
            )
            .map_err(db)?;
            tx.execute("DELETE FROM file WHERE package_id = ?1", [id]).map_err(db)?;
            tx.execute("DELETE FROM package WHERE id = ?1", [id]).map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Records what is known of many copies, in one transaction (one sync to disk).
    pub(crate) fn record_copies(&mut self, rows: &[CopyRow]) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        let now = chrono::Utc::now().to_rfc3339();
        for r in rows {
            tx.execute("INSERT OR IGNORE INTO replica (name) VALUES (?1)", [r.replica])
                .map_err(db)?;
            let rid: i64 = tx
                .query_row("SELECT id FROM replica WHERE name = ?1", [r.replica], |x| x.get(0))
                .map_err(db)?;
            let fid: i64 = tx
                .query_row(
                    "SELECT file.id FROM file JOIN package ON package.id = file.package_id
                     WHERE package.identifier = ?1 AND file.path = ?2",
                    params![r.identifier, r.path],
                    |x| x.get(0),
                )
                .map_err(db)?;
            tx.execute(
                "INSERT INTO replicafileinfo
                     (file_id, replica_id, upload_status, filelist_status, checksum_status, checked_at, message)
                 VALUES (?1, ?2, COALESCE(?3, 'unknown'), ?4, COALESCE(?5, 'unknown'), ?6, ?7)
                 ON CONFLICT (file_id, replica_id) DO UPDATE SET
                     upload_status = COALESCE(?3, upload_status),
                     filelist_status = ?4, checksum_status = COALESCE(?5, checksum_status),
                     checked_at = ?6, message = ?7",
                params![
                    fid,
                    rid,
                    r.upload.map(Upload::as_str),
                    r.filelist.as_str(),
                    r.checksum.map(Seen::as_str),
                    now,
                    r.message
                ],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Marks a package accepted (every copy verified) or not.
    pub(crate) fn set_accepted(
        &mut self,
        identifier: &str,
        accepted: bool,
    ) -> Result<(), StoreError> {
        let at = accepted.then(|| chrono::Utc::now().to_rfc3339());
        self.conn
            .execute(
                "UPDATE package SET accepted_at = ?2 WHERE identifier = ?1",
                params![identifier, at],
            )
            .map_err(db)?;
        Ok(())
    }

    /// When the package was accepted, if it was.
    pub(crate) fn accepted_at(&self, identifier: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT accepted_at FROM package WHERE identifier = ?1", [identifier], |r| {
                r.get::<_, Option<String>>(0)
            })
            .optional()
            .map(Option::flatten)
            .map_err(db)
    }

    /// Copies of `replica` whose last check found them missing or corrupt.
    pub(crate) fn bad_copies(
        &self,
        replica: &str,
    ) -> Result<Vec<(String, String, Seen)>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT package.identifier, file.path, replicafileinfo.checksum_status
                 FROM replicafileinfo
                 JOIN replica ON replica.id = replicafileinfo.replica_id
                 JOIN file ON file.id = replicafileinfo.file_id
                 JOIN package ON package.id = file.package_id
                 WHERE replica.name = ?1
                   AND (replicafileinfo.filelist_status = 'missing'
                        OR replicafileinfo.checksum_status = 'corrupt')
                 ORDER BY 1, 2",
            )
            .map_err(db)?;
        let rows = st
            .query_map([replica], |r| {
                Ok((r.get(0)?, r.get(1)?, Seen::parse(&r.get::<_, String>(2)?)))
            })
            .map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }
}

/// SQLite's "database is locked" and "database is busy", whatever the extended code.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// One replica's copies of a package, as the state database last saw them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReplicaCopies {
    /// The replica's name.
    pub replica: String,
    /// The package's files recorded on it.
    pub files: u64,
    /// Of them, uploaded.
    pub uploaded: u64,
    /// Of them, whose last look found them present (listing) and, when checksummed, intact.
    pub ok: u64,
    /// Of them, missing from the replica's listing.
    pub missing: u64,
    /// Of them, whose checksum or size differs.
    pub corrupt: u64,
    /// The oldest last check of its copies (RFC 3339); `None` when one was never checked.
    pub oldest_check: Option<String>,
}

/// A package the state database records, with its copies per replica.
#[derive(Debug, Clone, Default)]
pub struct PackageState {
    /// The OBJID.
    pub identifier: String,
    /// When every copy verified (the put accepted; RFC 3339); `None` when not. In an OCFL
    /// store: when the state database recorded the commit of the object's latest head (of a
    /// package kept in another's object: when it recorded where it is kept).
    pub accepted_at: Option<String>,
    /// Its copies by replica, by replica name.
    pub replicas: Vec<ReplicaCopies>,
}

/// A state database opened to read only (`report --store`): its packages one at a time, so
/// that a store of millions costs one package's rows.
pub(crate) struct StateReader {
    conn: Connection,
    /// Whether it has the tables of check runs and of packages kept in OCFL objects (a
    /// database no newer webaip opened to write lacks them: nothing recorded there).
    has_checks: bool,
    has_kept: bool,
    has_heads: bool,
}

/// One replica's last check of an object by `store check`, as `object_check` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectCheckRecord {
    /// The replica.
    pub replica: String,
    /// When (RFC 3339).
    pub checked_at: String,
    /// `clean`, `problems` or `unreadable`.
    pub outcome: String,
    /// Whether every file was hashed (else sizes only).
    pub deep: bool,
}

/// A package kept inside another package's OCFL object (`ocfl_package`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeptPackage {
    /// The package's OBJID.
    pub package: String,
    /// Its object and version.
    pub place: OcflPlace,
    /// When the database recorded that place (RFC 3339; `None` for a place found by its
    /// version's message, which the database does not record).
    pub recorded_at: Option<String>,
}

/// Whether the database has table `name` (one an older webaip never made is not there).
pub(super) fn has_table(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get(0),
        )
        .map_err(db)?;
    Ok(n > 0)
}

impl StateReader {
    /// Opens the database at `path` read-only (a missing one is an error, not made).
    pub(crate) fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(db)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
        let has = |table: &str| has_table(&conn, table);
        let (has_checks, has_kept) = (has("object_check")?, has("ocfl_package")?);
        let has_heads = has("ocfl_head")?;
        Ok(StateReader { conn, has_checks, has_kept, has_heads })
    }

    /// Each replica's last check of `object` (OCFL: its object directory), by replica.
    pub(crate) fn object_checks(&self, object: &str) -> Result<Vec<ObjectCheckRecord>, StoreError> {
        if !self.has_checks {
            return Ok(Vec::new());
        }
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT replica, checked_at, outcome, deep FROM object_check
                 WHERE object = ?1 ORDER BY replica",
            )
            .map_err(db)?;
        let rows = st
            .query_map([object], |r| {
                Ok(ObjectCheckRecord {
                    replica: r.get(0)?,
                    checked_at: r.get(1)?,
                    outcome: r.get(2)?,
                    deep: r.get(3)?,
                })
            })
            .map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// Every package kept inside another package's OCFL object, by object then version.
    pub(crate) fn kept_packages(&self) -> Result<Vec<KeptPackage>, StoreError> {
        if !self.has_kept {
            return Ok(Vec::new());
        }
        let mut st = self
            .conn
            .prepare(
                "SELECT package, object, version, recorded_at FROM ocfl_package
                 ORDER BY object, package",
            )
            .map_err(db)?;
        let rows = st
            .query_map([], |r| {
                let place = OcflPlace { object: r.get(1)?, version: r.get(2)? };
                Ok(KeptPackage { package: r.get(0)?, place, recorded_at: r.get(3)? })
            })
            .map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// Whether the database records packages put in the webaip layout that no finished
    /// migration moved to OCFL storage roots, or a migration begun and not finished (its last
    /// package moved, what it left in a root still to be dealt with).
    pub(crate) fn holds_unmigrated_packages(&self) -> Result<bool, StoreError> {
        let table = |name: &str| has_table(&self.conn, name);
        let migration: Option<Option<String>> = if table("ocfl_migration")? {
            self.conn
                .query_row("SELECT finished_at FROM ocfl_migration WHERE id = 1", [], |r| r.get(0))
                .optional()
                .map_err(db)?
        } else {
            None
        };
        match migration {
            Some(None) => return Ok(true),
            Some(Some(_)) => return Ok(false),
            None => {}
        }
        if !table("package")? {
            return Ok(false);
        }
        let any: i64 = self
            .conn
            .query_row("SELECT EXISTS (SELECT 1 FROM package)", [], |r| r.get(0))
            .map_err(db)?;
        Ok(any != 0)
    }

    /// When the database recorded the commit of object `identifier`'s latest head on the last
    /// of `replicas` (the put accepted: every copy committed); `None` when a replica has no
    /// recorded commit of that head (an incomplete put) or none is recorded at all.
    pub(crate) fn head_recorded_at(
        &self,
        identifier: &str,
        replicas: &[String],
    ) -> Result<Option<String>, StoreError> {
        if !self.has_heads {
            return Ok(None);
        }
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT replica, recorded_at FROM ocfl_head WHERE identifier = ?1
                 AND CAST(substr(head, 2) AS INTEGER) = (SELECT MAX(CAST(substr(head, 2) AS INTEGER))
                     FROM ocfl_head WHERE identifier = ?1)",
            )
            .map_err(db)?;
        let rows = st
            .query_map([identifier], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(db)?;
        let at: BTreeMap<String, String> = rows.collect::<Result<_, _>>().map_err(db)?;
        if at.is_empty() || replicas.iter().any(|r| !at.contains_key(r)) {
            return Ok(None);
        }
        Ok(at.into_values().max())
    }

    /// Hands every package, by identifier, to `each`.
    pub(crate) fn each_package(
        &self,
        each: &mut dyn FnMut(PackageState),
    ) -> Result<(), StoreError> {
        let mut packages = self
            .conn
            .prepare("SELECT id, identifier, accepted_at FROM package ORDER BY identifier")
            .map_err(db)?;
        let mut rows = packages.query([]).map_err(db)?;
        while let Some(row) = rows.next().map_err(db)? {
            let id: i64 = row.get(0).map_err(db)?;
            let state = PackageState {
                identifier: row.get(1).map_err(db)?,
                accepted_at: row.get(2).map_err(db)?,
                replicas: self.copies(id)?,
            };
            each(state);
        }
        Ok(())
    }

    /// The copies of package `id`, by replica.
    fn copies(&self, id: i64) -> Result<Vec<ReplicaCopies>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT replica.name, count(*),
                        sum(c.upload_status = 'uploaded'),
                        sum(c.filelist_status = 'ok' AND c.checksum_status IN ('ok', 'unknown')),
                        sum(c.filelist_status = 'missing' OR c.checksum_status = 'missing'),
                        sum(c.filelist_status = 'corrupt' OR c.checksum_status = 'corrupt'),
                        CASE WHEN count(c.checked_at) = count(*) THEN min(c.checked_at) END
                 FROM replicafileinfo c
                 JOIN file ON file.id = c.file_id
                 JOIN replica ON replica.id = c.replica_id
                 WHERE file.package_id = ?1
                 GROUP BY replica.id ORDER BY replica.name",
            )
            .map_err(db)?;
        let n = |v: Option<i64>| v.unwrap_or(0).max(0) as u64;
        let rows = st
            .query_map([id], |r| {
                Ok(ReplicaCopies {
                    replica: r.get(0)?,
                    files: n(r.get(1)?),
                    uploaded: n(r.get(2)?),
                    ok: n(r.get(3)?),
                    missing: n(r.get(4)?),
                    corrupt: n(r.get(5)?),
                    oldest_check: r.get(6)?,
                })
            })
            .map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }
}

/// An [`OcflRecord`] from a row of (identifier, inventory SHA-512, head, replica or NULL).
fn ocfl_record_of(r: &rusqlite::Row<'_>) -> Result<OcflRecord, StoreError> {
    Ok(OcflRecord {
        identifier: r.get(0).map_err(db)?,
        inventory_sha512: r.get::<_, String>(1).map_err(db)?.to_ascii_lowercase(),
        head: r.get(2).map_err(db)?,
        replica: r.get(3).map_err(db)?,
    })
}
