//! The validator's cross-references, kept on disk: every ID and IDREF, PREMIS object, event,
//! link and described `<file>` of a document goes into a private, temporary SQLite database
//! (in `TMPDIR`, deleted when the check ends, its page cache bounded), and the checks that
//! need the whole document are joins run once it is read. Held in memory, these tables grew
//! with every page (about 1.8 KB a page of a mirror, 58 MB at 20,000 pages); on disk the
//! validator's memory stays the same whatever the document's size.
//!
//! Rows carry a sequence number in document order, so that "the first element with an ID keeps
//! it" and "the first object with an identifier describes it" mean what they meant in the
//! streaming pass. The rules themselves (which rule, what message) stay in the validator; this
//! module only stores facts and answers the questions the rules ask.

use rusqlite::{Connection, params};

use super::super::reader::Pos;

/// A scratch database could not be written or read (`TMPDIR` full or unwritable).
pub(super) type CrossrefError = rusqlite::Error;

/// The scratch database's page cache, KiB.
const CACHE_KIB: u32 = 8192;

const SCHEMA: &str = "
CREATE TABLE ids (id TEXT NOT NULL, seq INTEGER NOT NULL, element TEXT NOT NULL,
                  owner INTEGER NOT NULL, line INTEGER NOT NULL, offset INTEGER NOT NULL);
CREATE TABLE refs (seq INTEGER NOT NULL, attr TEXT NOT NULL, token TEXT NOT NULL,
                   element TEXT NOT NULL, rule TEXT NOT NULL, line INTEGER NOT NULL,
                   offset INTEGER NOT NULL);
CREATE TABLE top_files (seq INTEGER NOT NULL, id TEXT NOT NULL, line INTEGER NOT NULL,
                        offset INTEGER NOT NULL);
CREATE TABLE fptrs (id TEXT NOT NULL);
CREATE TABLE objects (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, algorithm TEXT NOT NULL,
                      digest TEXT NOT NULL, size TEXT, amd TEXT, md TEXT);
CREATE TABLE relations (object_seq INTEGER NOT NULL, type TEXT NOT NULL,
                        subtype TEXT NOT NULL, target TEXT NOT NULL);
CREATE TABLE events (seq INTEGER PRIMARY KEY, type TEXT NOT NULL, outcome TEXT NOT NULL,
                     detail TEXT NOT NULL, amd TEXT, line INTEGER NOT NULL,
                     offset INTEGER NOT NULL);
CREATE TABLE event_objects (event_seq INTEGER NOT NULL, object TEXT NOT NULL);
CREATE TABLE event_agents (event_seq INTEGER NOT NULL, agent TEXT NOT NULL);
CREATE TABLE agents (id TEXT NOT NULL);
CREATE TABLE files (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, grp TEXT NOT NULL,
                    depth INTEGER NOT NULL, line INTEGER NOT NULL, offset INTEGER NOT NULL,
                    checksum TEXT, checksumtype TEXT, size TEXT,
                    container_virus INTEGER NOT NULL);
CREATE TABLE file_tokens (file_seq INTEGER NOT NULL, pos INTEGER NOT NULL,
                          token TEXT NOT NULL);
";

/// What the joins need indexed, built once the document is read (one sort each, rather than
/// an index kept up to date through every insert).
const INDEXES: &str = "
CREATE TABLE first_ids (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner INTEGER NOT NULL,
                        offset INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO first_ids SELECT id, MIN(seq), owner, offset FROM ids GROUP BY id;
CREATE INDEX fptrs_id ON fptrs (id);
CREATE INDEX objects_id ON objects (id, seq);
CREATE INDEX relations_object ON relations (object_seq);
CREATE INDEX events_amd ON events (amd, type);
CREATE INDEX event_objects_object ON event_objects (object);
CREATE INDEX agents_id ON agents (id);
CREATE INDEX file_tokens_file ON file_tokens (file_seq, pos);
CREATE TABLE amd_first (key TEXT PRIMARY KEY, object_seq INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO amd_first SELECT key, MIN(seq) FROM
  (SELECT amd AS key, seq FROM objects WHERE amd IS NOT NULL
   UNION ALL SELECT md, seq FROM objects WHERE md IS NOT NULL) GROUP BY key;
CREATE TABLE file_of (object TEXT PRIMARY KEY, grp TEXT NOT NULL, depth INTEGER NOT NULL,
                      file_id TEXT NOT NULL, line INTEGER NOT NULL, offset INTEGER NOT NULL)
  WITHOUT ROWID;
INSERT OR IGNORE INTO file_of
  SELECT o.id, f.grp, f.depth, f.id, f.line, f.offset
  FROM file_tokens t JOIN files f ON f.seq = t.file_seq
  JOIN amd_first a ON a.key = t.token JOIN objects o ON o.seq = a.object_seq
  ORDER BY t.file_seq, t.pos;
CREATE TABLE first_objects (id TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO first_objects SELECT id, MIN(seq) FROM objects GROUP BY id;
";

/// A document position as stored.
fn pos(line: i64, offset: i64) -> Pos {
    Pos { line: line as u64, offset: offset as u64 }
}

/// An IDREF token, as the rule that checks it needs it.
pub(super) struct Reference {
    pub attr: String,
    pub token: String,
    pub element: String,
    pub rule: String,
    pub at: Pos,
    /// The owner code of the element holding the ID, `None` when no element has it.
    pub owner: Option<u8>,
}

/// A `<file>` whose ADMID names a section describing a PREMIS object, with that object.
pub(super) struct Described {
    pub token: String,
    pub at: Pos,
    pub checksum: Option<String>,
    pub checksumtype: Option<String>,
    pub size: Option<String>,
    pub digest: String,
    pub algorithm: String,
    pub object_size: Option<String>,
}

/// A described object's relationship, with where its target is.
pub(super) struct Related {
    /// The `<file>` the object describes.
    pub file_id: String,
    pub depth: i64,
    pub at: Pos,
    pub subtype: String,
    pub target: String,
    /// Some object has the target's identifier.
    pub target_described: bool,
    /// An event of the transformation type links the object.
    pub transformation_event: bool,
    /// The group and ID of the `<file>` the target describes.
    pub target_file: Option<(String, String)>,
}

/// A described object, the first with its identifier, and the file it describes.
pub(super) struct DescribedObject {
    pub file_id: String,
    pub depth: i64,
    pub at: Pos,
    /// The target of its first relationship of the migration kind.
    pub migrated_from: Option<String>,
    /// An event of the migration type links it.
    pub migration_event: bool,
}

/// The scratch database; see the module documentation.
/// A `<file>` with ADMID tokens, as stored.
pub(super) struct DescribedFile<'a> {
    pub id: &'a str,
    pub group: &'a str,
    pub depth: usize,
    pub at: Pos,
    pub checksum: Option<&'a str>,
    pub checksumtype: Option<&'a str>,
    pub size: Option<&'a str>,
    /// A container that must have a virus-check event.
    pub container_virus: bool,
    pub admid: &'a str,
}

/// A PREMIS object (`seq` taken when it opened), held by sections `amd` and `md`.
pub(super) struct PremisObjectEntry<'a> {
    pub seq: i64,
    pub id: &'a str,
    pub algorithm: &'a str,
    pub digest: &'a str,
    pub size: Option<&'a str>,
    pub amd: Option<&'a str>,
    pub md: Option<&'a str>,
}

/// A PREMIS event (`seq` taken when it opened), inside amdSec `amd`.
pub(super) struct StoredEvent<'a> {
    pub seq: i64,
    pub event_type: &'a str,
    pub outcome: &'a str,
    pub detail: &'a str,
    pub amd: Option<&'a str>,
    pub at: Pos,
}

/// The profile's words for a migration.
pub(super) struct MigrationTerms<'a> {
    pub relationship_type: &'a str,
    /// The relationship subtype.
    pub subtype: &'a str,
    /// The event type.
    pub event: &'a str,
}

/// The profile's words for a derivation and a transformation event.
pub(super) struct RelationTerms<'a> {
    pub relationship_type: &'a str,
    pub transformation_event: &'a str,
}

/// Which events say a virus was found and not cleaned, and the group such files belong in.
pub(super) struct ForcedQuery<'a> {
    pub event: &'a str,
    pub outcome: &'a str,
    pub viral_group: &'a str,
}

/// A file a forced virus-check event links, outside the viral group.
pub(super) struct ForcedFile {
    pub file_id: String,
    pub group: String,
    pub at: Pos,
    /// The event's outcome detail.
    pub detail: String,
}

pub(super) struct Crossrefs {
    db: Connection,
    seq: i64,
    /// The first failure to store a fact; the others are not tried.
    failed: Option<CrossrefError>,
}

impl Crossrefs {
    /// A new scratch database, empty.
    pub(super) fn open() -> Result<Crossrefs, CrossrefError> {
        let db = crate::temporaries::scratch_database(CACHE_KIB, SCHEMA)?;
        Ok(Crossrefs { db, seq: 0, failed: None })
    }

    /// The next number in document order.
    pub(super) fn next_seq(&mut self) -> i64 {
        self.seq += 1;
        self.seq
    }

    fn exec(&mut self, sql: &str, values: impl rusqlite::Params) {
        if self.failed.is_some() {
            return;
        }
        let done = self.db.prepare_cached(sql).and_then(|mut s| s.execute(values));
        if let Err(e) = done {
            self.failed = Some(e);
        }
    }

    /// The ID of an `element`; `owner` is its kind's code.
    pub(super) fn id(&mut self, id: &str, element: &str, owner: u8, at: Pos) {
        let seq = self.next_seq();
        self.exec(
            "INSERT INTO ids VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![id, seq, element, owner, at.line as i64, at.offset as i64],
        );
    }

    /// An IDREF token of attribute `attr` on `element`, checked under `rule`.
    pub(super) fn reference(
        &mut self,
        attr: &str,
        token: &str,
        element: &str,
        rule: &str,
        at: Pos,
    ) {
        let seq = self.next_seq();
        self.exec(
            "INSERT INTO refs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![seq, attr, token, element, rule, at.line as i64, at.offset as i64],
        );
    }

    /// A top-level `<file>`, to be listed by the physical map.
    pub(super) fn top_file(&mut self, id: &str, at: Pos) {
        let seq = self.next_seq();
        self.exec(
            "INSERT INTO top_files VALUES (?1, ?2, ?3, ?4)",
            params![seq, id, at.line as i64, at.offset as i64],
        );
    }

    /// A FILEID of the physical map.
    pub(super) fn physical_fptr(&mut self, id: &str) {
        self.exec("INSERT INTO fptrs VALUES (?1)", params![id]);
    }

    /// A PREMIS object.
    pub(super) fn object(&mut self, o: &PremisObjectEntry) {
        self.exec(
            "INSERT INTO objects VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![o.seq, o.id, o.algorithm, o.digest, o.size, o.amd, o.md],
        );
    }

    /// A relationship of the object numbered `object_seq`: [type, subtype, target].
    pub(super) fn relation(&mut self, object_seq: i64, r: [&str; 3]) {
        self.exec(
            "INSERT INTO relations VALUES (?1, ?2, ?3, ?4)",
            params![object_seq, r[0], r[1], r[2]],
        );
    }

    /// A PREMIS event.
    pub(super) fn event(&mut self, e: &StoredEvent) {
        let (line, offset) = (e.at.line as i64, e.at.offset as i64);
        self.exec(
            "INSERT INTO events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![e.seq, e.event_type, e.outcome, e.detail, e.amd, line, offset],
        );
    }

    /// An object the event numbered `event_seq` links.
    pub(super) fn event_object(&mut self, event_seq: i64, object: &str) {
        self.exec("INSERT INTO event_objects VALUES (?1, ?2)", params![event_seq, object]);
    }

    /// An agent the event numbered `event_seq` links.
    pub(super) fn event_agent(&mut self, event_seq: i64, agent: &str) {
        self.exec("INSERT INTO event_agents VALUES (?1, ?2)", params![event_seq, agent]);
    }

    /// A described PREMIS agent.
    pub(super) fn agent(&mut self, id: &str) {
        self.exec("INSERT INTO agents VALUES (?1)", params![id]);
    }

    /// A `<file>` with ADMID tokens.
    pub(super) fn file(&mut self, f: &DescribedFile) {
        let seq = self.next_seq();
        self.exec(
            "INSERT INTO files VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                seq,
                f.id,
                f.group,
                f.depth as i64,
                f.at.line as i64,
                f.at.offset as i64,
                f.checksum,
                f.checksumtype,
                f.size,
                f.container_virus
            ],
        );
        for (i, token) in f.admid.split_whitespace().enumerate() {
            self.exec("INSERT INTO file_tokens VALUES (?1, ?2, ?3)", params![seq, i as i64, token]);
        }
    }

    /// The document is read: what was stored is indexed for the joins. Fails with the first
    /// failure to store a fact.
    pub(super) fn index(&mut self) -> Result<(), CrossrefError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.db.execute_batch(INDEXES)
    }

    /// Every ID after the first element that has it: (ID, element, where, offset of the
    /// first).
    pub(super) fn duplicate_ids(
        &self,
        mut each: impl FnMut(String, String, Pos, u64),
    ) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT i.id, i.element, i.line, i.offset, f.offset FROM ids i
             JOIN first_ids f ON f.id = i.id WHERE i.seq > f.seq ORDER BY i.seq",
        )?;
        let mut rows = s.query([])?;
        while let Some(r) = rows.next()? {
            let first = r.get::<_, i64>(4)? as u64;
            each(r.get(0)?, r.get(1)?, pos(r.get(2)?, r.get(3)?), first);
        }
        Ok(())
    }

    /// Every IDREF token with the kind of the element holding its ID, in document order.
    pub(super) fn references(&self, mut each: impl FnMut(Reference)) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT r.attr, r.token, r.element, r.rule, r.line, r.offset, f.owner
             FROM refs r LEFT JOIN first_ids f ON f.id = r.token ORDER BY r.seq",
        )?;
        let mut rows = s.query([])?;
        while let Some(r) = rows.next()? {
            each(Reference {
                attr: r.get(0)?,
                token: r.get(1)?,
                element: r.get(2)?,
                rule: r.get(3)?,
                at: pos(r.get(4)?, r.get(5)?),
                owner: r.get(6)?,
            });
        }
        Ok(())
    }

    /// Top-level files the physical map does not list: (ID, where).
    pub(super) fn unlisted_files(
        &self,
        mut each: impl FnMut(String, Pos),
    ) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT t.id, t.line, t.offset FROM top_files t
             WHERE NOT EXISTS (SELECT 1 FROM fptrs p WHERE p.id = t.id) ORDER BY t.seq",
        )?;
        let mut rows = s.query([])?;
        while let Some(r) = rows.next()? {
            each(r.get(0)?, pos(r.get(1)?, r.get(2)?));
        }
        Ok(())
    }

    /// Every ADMID token of a `<file>` that names a section holding a PREMIS object, with the
    /// first object of that section (P5.1), in document order.
    pub(super) fn described(&self, mut each: impl FnMut(Described)) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT t.token, f.line, f.offset, f.checksum, f.checksumtype, f.size,
                    o.digest, o.algorithm, o.size
             FROM file_tokens t JOIN files f ON f.seq = t.file_seq
             JOIN amd_first a ON a.key = t.token JOIN objects o ON o.seq = a.object_seq
             ORDER BY t.file_seq, t.pos",
        )?;
        let mut rows = s.query([])?;
        while let Some(r) = rows.next()? {
            each(Described {
                token: r.get(0)?,
                at: pos(r.get(1)?, r.get(2)?),
                checksum: r.get(3)?,
                checksumtype: r.get(4)?,
                size: r.get(5)?,
                digest: r.get(6)?,
                algorithm: r.get(7)?,
                object_size: r.get(8)?,
            });
        }
        Ok(())
    }

    /// Containers that must have a virus-check event (`term`) and have none: none in an
    /// amdSec their ADMID names, none anywhere linking the object such a section describes.
    pub(super) fn containers_unchecked(
        &self,
        term: &str,
        mut each: impl FnMut(String, Pos),
    ) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT f.id, f.line, f.offset FROM files f WHERE f.container_virus
             AND NOT EXISTS (SELECT 1 FROM file_tokens t WHERE t.file_seq = f.seq AND (
               EXISTS (SELECT 1 FROM events e WHERE e.amd = t.token AND e.type = ?1)
               OR EXISTS (SELECT 1 FROM amd_first a JOIN objects o ON o.seq = a.object_seq
                          JOIN event_objects eo ON eo.object = o.id
                          JOIN events e ON e.seq = eo.event_seq
                          WHERE a.key = t.token AND e.type = ?1)))
             ORDER BY f.seq",
        )?;
        let mut rows = s.query(params![term])?;
        while let Some(r) = rows.next()? {
            each(r.get(0)?, pos(r.get(1)?, r.get(2)?));
        }
        Ok(())
    }

    /// Event links to entities no PREMIS entity describes, objects then agents: (what,
    /// event type, the entity's identifier, where the event is).
    pub(super) fn undescribed_event_links(
        &self,
        mut each: impl FnMut(&str, String, String, Pos),
    ) -> Result<(), CrossrefError> {
        for (what, links, column, described) in [
            ("object", "event_objects", "object", "objects"),
            ("agent", "event_agents", "agent", "agents"),
        ] {
            let mut s = self.db.prepare(&format!(
                "SELECT e.type, l.{column}, e.line, e.offset FROM {links} l
                 JOIN events e ON e.seq = l.event_seq
                 WHERE NOT EXISTS (SELECT 1 FROM {described} d WHERE d.id = l.{column})
                 ORDER BY l.rowid"
            ))?;
            let mut rows = s.query([])?;
            while let Some(r) = rows.next()? {
                each(what, r.get(0)?, r.get(1)?, pos(r.get(2)?, r.get(3)?));
            }
        }
        Ok(())
    }

    /// Each described object (the first with its identifier, describing a `<file>`), with its
    /// migration facts, in document order.
    pub(super) fn described_objects(
        &self,
        terms: &MigrationTerms,
        mut each: impl FnMut(DescribedObject),
    ) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT fo.file_id, fo.depth, fo.line, fo.offset,
               (SELECT r.target FROM relations r WHERE r.object_seq = o.seq AND r.type = ?1
                AND r.subtype = ?2 ORDER BY r.rowid LIMIT 1),
               EXISTS (SELECT 1 FROM event_objects eo JOIN events e ON e.seq = eo.event_seq
                       WHERE eo.object = o.id AND e.type = ?3)
             FROM first_objects fobj JOIN objects o ON o.seq = fobj.seq
             JOIN file_of fo ON fo.object = o.id ORDER BY o.seq",
        )?;
        let mut rows = s.query(params![terms.relationship_type, terms.subtype, terms.event])?;
        while let Some(r) = rows.next()? {
            each(DescribedObject {
                file_id: r.get(0)?,
                depth: r.get(1)?,
                at: pos(r.get(2)?, r.get(3)?),
                migrated_from: r.get(4)?,
                migration_event: r.get(5)?,
            });
        }
        Ok(())
    }

    /// The relationships of type `terms.relationship_type` of each described object (the first
    /// with its identifier, describing a `<file>`), with what their targets are and whether an
    /// event of type `terms.transformation_event` links the object, in document order.
    pub(super) fn relations(
        &self,
        terms: &RelationTerms,
        mut each: impl FnMut(Related),
    ) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT fo.file_id, fo.depth, fo.line, fo.offset, r.subtype, r.target,
               EXISTS (SELECT 1 FROM objects x WHERE x.id = r.target), tf.grp, tf.file_id,
               EXISTS (SELECT 1 FROM event_objects eo JOIN events e ON e.seq = eo.event_seq
                       WHERE eo.object = o.id AND e.type = ?2)
             FROM first_objects fobj JOIN objects o ON o.seq = fobj.seq
             JOIN file_of fo ON fo.object = o.id
             JOIN relations r ON r.object_seq = o.seq AND r.type = ?1
             LEFT JOIN file_of tf ON tf.object = r.target
             ORDER BY o.seq, r.rowid",
        )?;
        let mut rows = s.query(params![terms.relationship_type, terms.transformation_event])?;
        while let Some(r) = rows.next()? {
            let group: Option<String> = r.get(7)?;
            let id: Option<String> = r.get(8)?;
            each(Related {
                file_id: r.get(0)?,
                depth: r.get(1)?,
                at: pos(r.get(2)?, r.get(3)?),
                subtype: r.get(4)?,
                target: r.get(5)?,
                target_described: r.get(6)?,
                target_file: group.zip(id),
                transformation_event: r.get(9)?,
            });
        }
        Ok(())
    }

    /// Files outside the viral group that an event of the query's type and outcome links.
    pub(super) fn forced_outside(
        &self,
        q: &ForcedQuery,
        mut each: impl FnMut(ForcedFile),
    ) -> Result<(), CrossrefError> {
        let mut s = self.db.prepare(
            "SELECT fo.file_id, fo.grp, fo.line, fo.offset, e.detail FROM events e
             JOIN event_objects eo ON eo.event_seq = e.seq JOIN file_of fo ON fo.object = eo.object
             WHERE e.type = ?1 AND e.outcome = ?2 AND fo.grp != ?3 ORDER BY e.seq, eo.rowid",
        )?;
        let mut rows = s.query(params![q.event, q.outcome, q.viral_group])?;
        while let Some(r) = rows.next()? {
            each(ForcedFile {
                file_id: r.get(0)?,
                group: r.get(1)?,
                at: pos(r.get(2)?, r.get(3)?),
                detail: r.get(4)?,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_element_keeps_an_id_and_later_ones_are_duplicates() {
        let mut x = Crossrefs::open().unwrap();
        let at = |o| Pos { offset: o, line: 1 };
        x.id("A", "file", 1, at(10));
        x.reference("FILEID", "A", "fptr", "R", at(5));
        x.reference("FILEID", "B", "fptr", "R", at(6));
        x.id("A", "div", 3, at(20));
        x.index().unwrap();
        let mut dups = Vec::new();
        x.duplicate_ids(|id, element, p, first| dups.push((id, element, p.offset, first))).unwrap();
        assert_eq!(dups, vec![("A".to_string(), "div".to_string(), 20, 10)]);
        let mut refs = Vec::new();
        x.references(|r| refs.push((r.token, r.owner))).unwrap();
        assert_eq!(refs, vec![("A".to_string(), Some(1)), ("B".to_string(), None)]);
    }
}
