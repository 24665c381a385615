//! The state database's record of checks: each object's last check on each replica, and the
//! check runs (what a run set out to check, what it has checked so far), so that a check
//! killed or stopped goes on where it stopped. Tables added to a database of an earlier
//! schema when it is opened (the copies' last checks taken over as not deep), and the date
//! of each object's last deep check kept apart from its last check of any kind, so that a
//! size-only check never hides how long ago the bytes were hashed.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{StateDb, db};
use crate::store::StoreError;

/// The tables of this module (created when absent).
const RUNS_SCHEMA: &str = "
-- each object's last check on each replica (object: a package identifier, or an OCFL
-- object's directory in the storage root)
CREATE TABLE object_check (
    object TEXT NOT NULL,
    replica TEXT NOT NULL,
    checked_at TEXT NOT NULL,
    -- clean | problems | unreadable
    outcome TEXT NOT NULL,
    deep INTEGER NOT NULL,
    run_id INTEGER,
    -- the last deep check (every byte hashed), NULL if none: a later size-only check
    -- does not move it
    deep_checked_at TEXT,
    PRIMARY KEY (object, replica)
);
CREATE INDEX object_check_at ON object_check (checked_at);
-- a check run: finished_at is set only when every object it planned was checked
CREATE TABLE check_run (
    id INTEGER PRIMARY KEY,
    layout TEXT NOT NULL,
    started_at TEXT NOT NULL,
    sessions INTEGER NOT NULL DEFAULT 1,
    replica TEXT,
    deep INTEGER NOT NULL,
    selection TEXT NOT NULL,
    -- running (or killed) | stopped | finished | abandoned
    state TEXT NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0,
    notes TEXT,
    finished_at TEXT,
    summary TEXT
);
-- the objects a run looks at (seq set: planned, in order; done once checked)
CREATE TABLE check_plan (
    run_id INTEGER NOT NULL,
    object TEXT NOT NULL,
    seq INTEGER,
    done INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, object)
);
CREATE INDEX check_plan_seq ON check_plan (run_id, seq);
-- what each committed batch of a run found (JSON), to report the whole run when it ends
CREATE TABLE check_part (
    run_id INTEGER NOT NULL,
    part INTEGER NOT NULL,
    found TEXT NOT NULL,
    PRIMARY KEY (run_id, part)
);
";

/// An earlier schema's record of each copy's last look, per package and replica: the latest
/// look at any of its copies counts (not deep: nothing says it was hashed).
const SEED: &str = "
INSERT OR IGNORE INTO object_check (object, replica, checked_at, outcome, deep, run_id)
SELECT package.identifier, replica.name,
       strftime('%Y-%m-%dT%H:%M:%fZ', min(c.checked_at)),
       CASE WHEN sum(c.filelist_status <> 'ok' OR c.checksum_status = 'corrupt') > 0
            THEN 'problems' ELSE 'clean' END,
       0, NULL
FROM replicafileinfo c
JOIN file ON file.id = c.file_id
JOIN package ON package.id = file.package_id
JOIN replica ON replica.id = c.replica_id
GROUP BY package.id, replica.id
HAVING count(c.checked_at) = count(*)";

/// A database whose `object_check` predates `deep_checked_at`: the column added, and a row
/// whose last check was deep gives that check's date (the earlier deep checks' dates were
/// overwritten by later shallow ones: those objects count as never deep-checked).
const DEEP_COLUMN: &str = "
ALTER TABLE object_check ADD COLUMN deep_checked_at TEXT;
UPDATE object_check SET deep_checked_at = checked_at WHERE deep = 1;";

/// Now, as every row of this module writes it (sorts as it reads).
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// Adds this module's tables to a database that lacks them, taking over what the copies'
/// rows say of their last check, and the last deep check's column to one that lacks it.
/// Once: later opens find them.
pub(super) fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    if current(conn)? {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE;")?;
    // Another process may have migrated while this one waited for the lock.
    let r = upgrade(conn);
    match r {
        Ok(()) => conn.execute_batch("COMMIT;"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK;");
            Err(e)
        }
    }
}

/// True when the database has this module's tables of the current schema.
fn current(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM pragma_table_info('object_check') WHERE name = 'deep_checked_at'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Brings the tables to the current schema, whatever of it is there (under the write lock).
fn upgrade(conn: &Connection) -> rusqlite::Result<()> {
    if current(conn)? {
        return Ok(());
    }
    let has_tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = 'object_check'",
        [],
        |r| r.get(0),
    )?;
    if has_tables == 0 {
        conn.execute_batch(RUNS_SCHEMA)?;
        return conn.execute_batch(SEED);
    }
    conn.execute_batch(DEEP_COLUMN)
}

/// What a new run sets out to check.
pub(crate) struct NewRun<'a> {
    /// `webaip` or `ocfl`.
    pub layout: &'a str,
    /// The one replica checked (`None`: every replica).
    pub replica: Option<&'a str>,
    /// The replicas checked, by name.
    pub scope: &'a [String],
    /// Whether every copy is hashed.
    pub deep: bool,
    /// Which objects, in the words of the database (`all`, `oldest:N`, `sample:N`).
    pub selection: &'a str,
    /// Findings of the listing itself (JSON), kept for the run's report.
    pub notes: Option<&'a str>,
}

/// Where a run's objects come from.
pub(crate) enum Universe<'a> {
    /// Every package the database records (the `webaip` layout).
    Packages,
    /// These objects (OCFL: the object directories found on the replicas and recorded).
    Objects(Box<dyn Iterator<Item = String> + 'a>),
}

/// How a run picks its objects from the universe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Pick {
    /// Every one, by name.
    All,
    /// The `n` checked longest ago on the replicas checked (never checked first); a deep run
    /// goes by the last deep check, so size-only checks never starve it.
    Oldest(u64),
    /// `n` at random.
    Random(u64),
    /// This share of them (0 < share <= 1, rounded up) at random.
    RandomShare(f64),
}

/// Marks the unfinished runs of `layout` abandoned, dropping their plans and findings.
fn abandon_unfinished(tx: &Connection, layout: &str) -> rusqlite::Result<()> {
    let old = "SELECT id FROM check_run WHERE layout = ?1 AND state IN ('running', 'stopped')";
    tx.execute(&format!("DELETE FROM check_plan WHERE run_id IN ({old})"), [layout])?;
    tx.execute(&format!("DELETE FROM check_part WHERE run_id IN ({old})"), [layout])?;
    tx.execute(&format!("UPDATE check_run SET state = 'abandoned' WHERE id IN ({old})"), [layout])?;
    Ok(())
}

/// Records every object of `universe` in run `id`'s plan (none picked yet).
fn plan_universe(tx: &Connection, id: i64, universe: Universe) -> rusqlite::Result<()> {
    match universe {
        Universe::Packages => {
            tx.execute(
                "INSERT INTO check_plan (run_id, object) SELECT ?1, identifier FROM package",
                [id],
            )?;
        }
        Universe::Objects(objects) => {
            let mut st =
                tx.prepare("INSERT OR IGNORE INTO check_plan (run_id, object) VALUES (?1, ?2)")?;
            for o in objects {
                st.execute(params![id, o])?;
            }
        }
    }
    Ok(())
}

/// Numbers the objects run `id` checks, in the order it checks them; the others stay
/// unnumbered. Sorted and cut by SQLite (a bounded sort for a LIMIT): no list of every
/// object is held here.
fn plan_pick(
    tx: &Connection,
    id: i64,
    scope: &str,
    pick: Pick,
    deep: bool,
) -> rusqlite::Result<()> {
    let pick = match pick {
        Pick::RandomShare(share) => {
            let n: i64 =
                tx.query_row("SELECT count(*) FROM check_plan WHERE run_id = ?1", [id], |r| {
                    r.get(0)
                })?;
            Pick::Random((share * n as f64).ceil().max(1.0) as u64)
        }
        p => p,
    };
    let limit = |n: u64| n.min(i64::MAX as u64) as i64;
    let (order, limit) = match pick {
        Pick::All => ("check_plan.object".to_string(), -1),
        Pick::Oldest(n) => {
            let age = if deep { age("deep_checked_at") } else { age("checked_at") };
            (format!("{age} IS NOT NULL, {age}, check_plan.object"), limit(n))
        }
        Pick::Random(_) | Pick::RandomShare(_) => ("random()".to_string(), limit(n_of(pick))),
    };
    tx.execute(
        &format!(
            "UPDATE check_plan SET seq = o.n
             FROM (SELECT object, row_number() OVER (ORDER BY {order}) AS n
                   FROM check_plan WHERE run_id = ?1 ORDER BY {order} LIMIT ?3) AS o
             WHERE check_plan.run_id = ?1 AND check_plan.object = o.object"
        ),
        params![id, scope, limit],
    )?;
    Ok(())
}

/// The count of a random pick (a share is turned into one before).
fn n_of(p: Pick) -> u64 {
    match p {
        Pick::Random(n) | Pick::Oldest(n) => n,
        Pick::All | Pick::RandomShare(_) => 0,
    }
}

/// A run as the database records it.
#[derive(Debug, Clone)]
pub(crate) struct RunRecord {
    pub id: i64,
    pub sessions: u32,
    pub replica: Option<String>,
    pub deep: bool,
    pub selection: String,
    pub notes: Option<String>,
    pub started_at: String,
}

/// One planned object, in its run's order.
#[derive(Debug, Clone)]
pub(crate) struct PlannedObject {
    pub seq: i64,
    pub object: String,
}

/// What one check of one object on one replica found.
#[derive(Debug, Clone)]
pub(crate) struct ObjectOutcome {
    pub object: String,
    pub replica: String,
    /// `clean`, `problems` or `unreadable`.
    pub outcome: &'static str,
}

/// How long ago the objects of a run's universe were last seen on the replicas checked: by a
/// check of any kind (at least every copy listed and its size compared), and by a deep check
/// (every byte hashed), kept apart so that a size-only check never reads as fixity verified.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeenSummary {
    /// Objects in the store (on the replicas checked).
    pub objects: u64,
    /// Of them, never checked on some replica checked.
    pub never_checked: u64,
    /// The oldest last check (of any kind) of an object checked on every replica (UTC, RFC
    /// 3339).
    pub oldest_check: Option<String>,
    /// The latest last check (of any kind).
    pub newest_check: Option<String>,
    /// Of the objects, never deep-checked on some replica checked (their bytes not hashed
    /// since this was recorded).
    #[serde(default)]
    pub never_deep_checked: u64,
    /// The oldest last deep check of an object deep-checked on every replica.
    #[serde(default)]
    pub oldest_deep_check: Option<String>,
    /// The latest last deep check.
    #[serde(default)]
    pub newest_deep_check: Option<String>,
}

/// How long ago each object was last checked (`column`: `checked_at`, any check, or
/// `deep_checked_at`): the oldest date among the replicas in scope (`?2`, a JSON array of
/// names), NULL when one of them has none.
fn age(column: &str) -> String {
    format!(
        "(SELECT CASE WHEN count(c.{column}) = (SELECT count(*) FROM json_each(?2))
                      THEN min(c.{column}) END
          FROM object_check c
          WHERE c.object = check_plan.object
            AND c.replica IN (SELECT value FROM json_each(?2)))"
    )
}

impl StateDb {
    /// Starts a run: marks unfinished runs of the layout abandoned (their plans dropped), then
    /// records the run and its plan, in one transaction (a kill leaves no half-planned run).
    pub(crate) fn begin_run(
        &mut self,
        run: &NewRun,
        universe: Universe,
        pick: Pick,
    ) -> Result<i64, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        abandon_unfinished(&tx, run.layout).map_err(db)?;
        tx.execute(
            &format!(
                "INSERT INTO check_run (layout, started_at, replica, deep, selection, state, notes)
                 VALUES (?1, {NOW}, ?2, ?3, ?4, 'running', ?5)"
            ),
            params![run.layout, run.replica, run.deep, run.selection, run.notes],
        )
        .map_err(db)?;
        let id = tx.last_insert_rowid();
        plan_universe(&tx, id, universe).map_err(db)?;
        let scope = serde_json::to_string(run.scope).unwrap_or_else(|_| "[]".into());
        plan_pick(&tx, id, &scope, pick, run.deep).map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(id)
    }

    /// The latest run of `layout` that did not finish (killed, or stopped), if any.
    pub(crate) fn unfinished_run(&self, layout: &str) -> Result<Option<RunRecord>, StoreError> {
        self.conn
            .query_row(
                "SELECT id, sessions, replica, deep, selection, notes, started_at FROM check_run
                 WHERE layout = ?1 AND state IN ('running', 'stopped') ORDER BY id DESC LIMIT 1",
                [layout],
                |r| {
                    Ok(RunRecord {
                        id: r.get(0)?,
                        sessions: r.get(1)?,
                        replica: r.get(2)?,
                        deep: r.get(3)?,
                        selection: r.get(4)?,
                        notes: r.get(5)?,
                        started_at: r.get(6)?,
                    })
                },
            )
            .optional()
            .map_err(db)
    }

    /// Records a new session of run `id` (a resume).
    pub(crate) fn resume_run(&mut self, id: i64) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE check_run SET sessions = sessions + 1, state = 'running' WHERE id = ?1",
                [id],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// Up to `n` planned objects of run `id` not yet checked, after position `after`.
    pub(crate) fn next_batch(
        &self,
        id: i64,
        after: i64,
        n: usize,
    ) -> Result<Vec<PlannedObject>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT seq, object FROM check_plan
                 WHERE run_id = ?1 AND seq > ?2 AND done = 0 ORDER BY seq LIMIT ?3",
            )
            .map_err(db)?;
        let rows = st
            .query_map(params![id, after, n as i64], |r| {
                Ok(PlannedObject { seq: r.get(0)?, object: r.get(1)? })
            })
            .map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// Records one checked batch of run `id`, in one transaction: its objects done, each
    /// object's last check on each replica, what the batch found (`found`, JSON), the bytes
    /// read.
    pub(crate) fn record_batch(
        &mut self,
        id: i64,
        batch: &[PlannedObject],
        outcomes: &[ObjectOutcome],
        found: &str,
        bytes: u64,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        let deep: bool = tx
            .query_row("SELECT deep FROM check_run WHERE id = ?1", [id], |r| r.get(0))
            .map_err(db)?;
        {
            let mut done = tx
                .prepare("UPDATE check_plan SET done = 1 WHERE run_id = ?1 AND object = ?2")
                .map_err(db)?;
            for p in batch {
                done.execute(params![id, p.object]).map_err(db)?;
            }
            let mut seen = tx
                .prepare(&format!(
                    "INSERT INTO object_check
                         (object, replica, checked_at, outcome, deep, run_id, deep_checked_at)
                     VALUES (?1, ?2, {NOW}, ?3, ?4, ?5, CASE WHEN ?4 AND ?3 = 'clean' THEN {NOW} END)
                     ON CONFLICT (object, replica) DO UPDATE SET
                         checked_at = excluded.checked_at, outcome = excluded.outcome,
                         deep = excluded.deep, run_id = excluded.run_id,
                         deep_checked_at =
                             coalesce(excluded.deep_checked_at, object_check.deep_checked_at)"
                ))
                .map_err(db)?;
            // The deep date is that of the last deep check that found the copy whole: a
            // missing or unreadable copy was not hashed, and a damaged one must come first.
            for o in outcomes {
                seen.execute(params![o.object, o.replica, o.outcome, deep, id]).map_err(db)?;
            }
        }
        tx.execute(
            "INSERT INTO check_part (run_id, part, found)
             VALUES (?1, (SELECT coalesce(max(part), 0) + 1 FROM check_part WHERE run_id = ?1), ?2)",
            params![id, found],
        )
        .map_err(db)?;
        tx.execute(
            "UPDATE check_run SET bytes = bytes + ?2 WHERE id = ?1",
            params![id, bytes as i64],
        )
        .map_err(db)?;
        tx.commit().map_err(db)
    }

    /// Hands what each committed batch of run `id` found to `each`, in order.
    pub(crate) fn each_part(
        &self,
        id: i64,
        each: &mut dyn FnMut(&str) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT found FROM check_part WHERE run_id = ?1 ORDER BY part")
            .map_err(db)?;
        let mut rows = st.query([id]).map_err(db)?;
        while let Some(r) = rows.next().map_err(db)? {
            let found: String = r.get(0).map_err(db)?;
            each(&found)?;
        }
        Ok(())
    }

    /// Run `id`'s counts: objects in its universe, planned, checked; and bytes read.
    pub(crate) fn run_counts(&self, id: i64) -> Result<RunCounts, StoreError> {
        self.conn
            .query_row(
                "SELECT count(*), count(seq), coalesce(sum(done), 0),
                        (SELECT bytes FROM check_run WHERE id = ?1)
                 FROM check_plan WHERE run_id = ?1",
                [id],
                |r| {
                    let n = |i| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                    Ok(RunCounts { universe: n(0)?, planned: n(1)?, checked: n(2)?, bytes: n(3)? })
                },
            )
            .map_err(db)
    }

    /// How recently the objects of run `id`'s universe were seen on the replicas `scope`.
    pub(crate) fn seen_summary(
        &self,
        id: i64,
        scope: &[String],
    ) -> Result<SeenSummary, StoreError> {
        let scope = serde_json::to_string(scope).unwrap_or_else(|_| "[]".into());
        let (any, deep) = (age("checked_at"), age("deep_checked_at"));
        self.conn
            .query_row(
                &format!(
                    "SELECT count(*), sum(age IS NULL), min(age), max(age),
                            sum(deep IS NULL), min(deep), max(deep)
                     FROM (SELECT {any} AS age, {deep} AS deep
                           FROM check_plan WHERE run_id = ?1)"
                ),
                params![id, scope],
                |r| {
                    let count =
                        |i| r.get::<_, Option<i64>>(i).map(|n| n.unwrap_or(0).max(0) as u64);
                    Ok(SeenSummary {
                        objects: count(0)?,
                        never_checked: count(1)?,
                        oldest_check: r.get(2)?,
                        newest_check: r.get(3)?,
                        never_deep_checked: count(4)?,
                        oldest_deep_check: r.get(5)?,
                        newest_deep_check: r.get(6)?,
                    })
                },
            )
            .map_err(db)
    }

    /// Ends a session of run `id`: `finished` (its plan and parts dropped, `summary` kept) or
    /// `stopped` (resumable).
    pub(crate) fn end_run(
        &mut self,
        id: i64,
        finished: bool,
        summary: &str,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        if finished {
            tx.execute(
                &format!(
                    "UPDATE check_run SET state = 'finished', finished_at = {NOW}, summary = ?2
                     WHERE id = ?1"
                ),
                params![id, summary],
            )
            .map_err(db)?;
            tx.execute("DELETE FROM check_plan WHERE run_id = ?1", [id]).map_err(db)?;
            tx.execute("DELETE FROM check_part WHERE run_id = ?1", [id]).map_err(db)?;
        } else {
            tx.execute(
                "UPDATE check_run SET state = 'stopped', summary = ?2 WHERE id = ?1",
                params![id, summary],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)
    }
}

/// A run's counts.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RunCounts {
    /// Objects in its universe.
    pub universe: u64,
    /// Of them, planned.
    pub planned: u64,
    /// Of them, checked.
    pub checked: u64,
    /// Bytes read, every session.
    pub bytes: u64,
}
