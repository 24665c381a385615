//! The state database's record of `store migrate`: when the move of the store's packages
//! from the webaip layout to OCFL storage roots began and when it ended. Its table is made by
//! the first migration (a store never migrated has none, and a put looks no further).

use rusqlite::{OptionalExtension, params};

use super::{StateDb, db};
use crate::store::StoreError;

const MIGRATION_SCHEMA: &str = "
-- store migrate: the one move of this store from the webaip layout to OCFL storage roots
CREATE TABLE IF NOT EXISTS ocfl_migration (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    started_at TEXT NOT NULL,
    finished_at TEXT
);
";

impl StateDb {
    /// Records that a migration began (the first time only).
    pub(crate) fn begin_migration(&mut self) -> Result<(), StoreError> {
        self.conn.execute_batch(MIGRATION_SCHEMA).map_err(db)?;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO ocfl_migration (id, started_at)
                 VALUES (1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                params![],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// Records that the migration ended: every package is an OCFL object.
    pub(crate) fn end_migration(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE ocfl_migration SET finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
                 WHERE id = 1 AND finished_at IS NULL",
                params![],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// Whether a migration began (finished or not).
    pub(crate) fn migration_begun(&self) -> Result<bool, StoreError> {
        if !super::has_table(&self.conn, "ocfl_migration")? {
            return Ok(false);
        }
        let started: Option<String> = self
            .conn
            .query_row("SELECT started_at FROM ocfl_migration WHERE id = 1", [], |r| r.get(0))
            .optional()
            .map_err(db)?;
        Ok(started.is_some())
    }

    /// Every package the webaip layout still records, by identifier.
    pub(crate) fn package_identifiers(&self) -> Result<Vec<String>, StoreError> {
        let mut st =
            self.conn.prepare("SELECT identifier FROM package ORDER BY identifier").map_err(db)?;
        let rows = st.query_map([], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }
}
