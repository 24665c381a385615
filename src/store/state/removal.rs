//! The state database's record of `store remove` on OCFL replicas: an object whose removal
//! began, recorded before anything of it is deleted and dropped with every other row of the
//! object once each replica is done. While it is there, `check` reports what is left of the
//! object as the remains of an unfinished removal (not as damage to repair from another
//! replica), `repair` leaves them, a put of the id is refused, and `remove` run again
//! finishes; a kill at any point leaves the store in one of those states.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{StateDb, db};
use crate::store::StoreError;

/// The rows one object owns, to forget when its removal is done.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObjectRows<'a> {
    /// The object id.
    pub id: &'a str,
    /// Its directory in the storage roots (the key of its checks and of `ocfl_predating`).
    pub dir: &'a str,
    /// The packages kept in it (AIPs in their submission's object).
    pub kept: &'a [String],
}

impl StateDb {
    /// Records that the removal of object `id` began (once; a second start keeps the first
    /// date).
    pub(crate) fn begin_ocfl_removal(&mut self, id: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO ocfl_removal (identifier, started_at)
                 VALUES (?1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                [id],
            )
            .map(|_| ())
            .map_err(db)
    }

    /// When the removal of object `id` began, if one began and did not finish.
    pub(crate) fn ocfl_removal(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT started_at FROM ocfl_removal WHERE identifier = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(db)
    }

    /// Every object whose removal began and did not finish, by id.
    pub(crate) fn ocfl_removals(&self) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT identifier FROM ocfl_removal ORDER BY identifier")
            .map_err(db)?;
        let rows = st.query_map([], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// The packages kept in object `id` (`ocfl_package`), by OBJID.
    pub(crate) fn kept_in(&self, id: &str) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT package FROM ocfl_package WHERE object = ?1 ORDER BY package")
            .map_err(db)?;
        let rows = st.query_map([id], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// The recorded OCFL packages requiring any of `packages`, other than those packages.
    pub(crate) fn ocfl_dependents(&self, packages: &[String]) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT package FROM ocfl_dependency WHERE requires = ?1")
            .map_err(db)?;
        let mut out = std::collections::BTreeSet::new();
        for p in packages {
            let rows = st.query_map([p], |r| r.get::<_, String>(0)).map_err(db)?;
            for d in rows {
                let d = d.map_err(db)?;
                if !packages.contains(&d) {
                    out.insert(d);
                }
            }
        }
        Ok(out.into_iter().collect())
    }

    /// Forgets object `rows.id` once every replica is rid of it, in one transaction: its
    /// heads and inventories, the packages kept in it and what they and it require, its
    /// last checks, its mark as older than the records, and its removal's own record.
    pub(crate) fn forget_ocfl_object(&mut self, rows: ObjectRows) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        let ObjectRows { id, dir, kept } = rows;
        for sql in [
            "DELETE FROM ocfl_head WHERE identifier = ?1",
            "DELETE FROM ocfl_inventory WHERE identifier = ?1",
            "DELETE FROM ocfl_dependency WHERE package = ?1",
            "DELETE FROM ocfl_package WHERE object = ?1",
            "DELETE FROM ocfl_removal WHERE identifier = ?1",
        ] {
            tx.execute(sql, [id]).map_err(db)?;
        }
        for p in kept {
            tx.execute("DELETE FROM ocfl_dependency WHERE package = ?1", [p]).map_err(db)?;
            tx.execute("DELETE FROM ocfl_package WHERE package = ?1", [p]).map_err(db)?;
        }
        tx.execute("DELETE FROM object_check WHERE object = ?1", params![dir]).map_err(db)?;
        tx.execute("DELETE FROM ocfl_predating WHERE object = ?1", params![dir]).map_err(db)?;
        tx.commit().map_err(db)
    }
}
