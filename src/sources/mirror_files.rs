//! The files of a mirror, kept on disk: each walked file, what the side files say of it
//! (`hts-cache/new.zip`, `url.map`, `hts-cache/new.txt`, `.panaccess-mime.types`, a wget log),
//! and what was made of that (URL, type, capture time), in a private, temporary SQLite database
//! (in `TMPDIR`, deleted when the last handle goes, its page cache bounded). Held in memory,
//! the list and the side files' entries grew with every file (about 400 bytes of memory a page
//! of a mirror, 64 MB at 65,000 pages); on disk, reading and packaging a mirror take the same
//! memory whatever its size. The rewrite stage looks links up in the same table
//! ([`LinkMap`]).
//!
//! Rows carry the walk's sequence number, so captures come in walk order; a file's row is
//! read into a [`MirrorFile`] a chunk at a time.

use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

/// The mirror's file list could not be written or read: its temporary database failed
/// (`TMPDIR`, or `SQLITE_TMPDIR` when set, full or unwritable).
#[derive(Debug, thiserror::Error)]
#[error("the mirror's file list (a temporary database in TMPDIR or SQLITE_TMPDIR): {0}")]
pub struct ScratchError(#[from] rusqlite::Error);

/// The database's page cache, KiB.
const CACHE_KIB: u32 = 4096;
/// Rows read into memory at a time.
const CHUNK: usize = 512;

const SCHEMA: &str = "
CREATE TABLE files (seq INTEGER PRIMARY KEY, save_path TEXT NOT NULL UNIQUE, raw BLOB,
                    size INTEGER NOT NULL, url TEXT NOT NULL DEFAULT '',
                    url_source INTEGER NOT NULL DEFAULT 0, mime TEXT NOT NULL DEFAULT '',
                    mime_source TEXT NOT NULL DEFAULT '', capture_secs INTEGER NOT NULL DEFAULT 0,
                    capture_nanos INTEGER NOT NULL DEFAULT 0,
                    capture_from_cache INTEGER NOT NULL DEFAULT 0, capture_source TEXT,
                    cache_headers TEXT);
CREATE TABLE cache (save_path TEXT PRIMARY KEY, url TEXT NOT NULL, headers TEXT NOT NULL,
                    content_type TEXT) WITHOUT ROWID;
CREATE TABLE url_map (save_path TEXT PRIMARY KEY, url TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE new_txt (save_path TEXT PRIMARY KEY, url TEXT NOT NULL, mime TEXT NOT NULL,
                      time TEXT) WITHOUT ROWID;
CREATE TABLE panaccess (save_path TEXT PRIMARY KEY, mime TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE logged (save_path TEXT PRIMARY KEY, url TEXT NOT NULL, secs INTEGER NOT NULL,
                     nanos INTEGER NOT NULL) WITHOUT ROWID;
";

const FILE_COLUMNS: &str = "seq, save_path, raw, size, url, url_source, mime, mime_source, \
                            capture_secs, capture_nanos, capture_from_cache, capture_source, \
                            cache_headers";

/// Where a file's original URL came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UrlSource {
    /// The `X-Save` header of an `hts-cache/new.zip` entry.
    Cache,
    /// `url.map`.
    UrlMap,
    /// `hts-cache/new.txt`.
    NewTxt,
    /// The `<!-- Mirrored from ... -->` comment in the page.
    Comment,
    /// The `<host>/<path>` layout: a guess.
    Layout,
    /// The wget log (`--DATE--  URL` and `Saving to:` lines).
    WgetLog,
    /// `--url-prefix` given by the operator, with the path below the host directory.
    UrlPrefix,
}

impl UrlSource {
    const ALL: [UrlSource; 7] = [
        UrlSource::Cache,
        UrlSource::UrlMap,
        UrlSource::NewTxt,
        UrlSource::Comment,
        UrlSource::Layout,
        UrlSource::WgetLog,
        UrlSource::UrlPrefix,
    ];

    fn code(self) -> i64 {
        UrlSource::ALL.iter().position(|&s| s == self).unwrap_or(0) as i64
    }

    fn of_code(code: i64) -> UrlSource {
        usize::try_from(code)
            .ok()
            .and_then(|i| UrlSource::ALL.get(i).copied())
            .unwrap_or(UrlSource::Layout)
    }

    /// Its name in reports (`url-map`, `wget-log`, ...).
    pub fn key(self) -> &'static str {
        match self {
            UrlSource::Cache => "cache",
            UrlSource::UrlMap => "url-map",
            UrlSource::NewTxt => "new-txt",
            UrlSource::Comment => "comment",
            UrlSource::Layout => "layout",
            UrlSource::WgetLog => "wget-log",
            UrlSource::UrlPrefix => "url-prefix",
        }
    }
}

/// One file of the mirror, as read from (and written back to) the list.
#[derive(Debug, Clone)]
pub struct MirrorFile {
    /// Its save path relative to the instance (`/`-separated; bytes that are not UTF-8 are
    /// percent-encoded).
    pub save_path: String,
    /// Its path relative to the instance as the file system spells it, only when that is not
    /// `save_path` (bytes that are not UTF-8).
    pub(crate) raw_relative: Option<Vec<u8>>,
    /// The recovered original URL.
    pub url: String,
    /// Where the URL came from.
    pub url_source: UrlSource,
    /// MIME type (cache, `.panaccess-mime.types`, `new.txt`, extension, content, in that order).
    pub mime: String,
    /// Where the MIME type came from (`hts-cache/new.zip`, `extension`, `sniffed`, ...).
    pub mime_source: String,
    /// When it was captured.
    pub capture: DateTime<Utc>,
    /// True when the capture time came from the cache (`new.txt`); else the instance time.
    pub capture_from_cache: bool,
    /// Where the capture time came from, when not the cache or the instance directory name
    /// (a wget log, `--capture-date`).
    pub capture_source: Option<String>,
    /// The cached pseudo-HTTP header block (`new.zip` extra field), if any.
    pub cache_headers: Option<String>,
    /// Size in bytes.
    pub size: u64,
}

/// What a side file says of a walked file, staged until every side file is read.
pub(crate) enum Said<'a> {
    /// An `hts-cache/new.zip` entry: URL, header block, its `Content-Type`.
    Cache { url: &'a str, headers: &'a str, content_type: Option<&'a str> },
    /// A `url.map` line.
    UrlMap { url: &'a str },
    /// A `hts-cache/new.txt` line: URL, MIME type, time of day (`HH:MM:SS`).
    NewTxt { url: &'a str, mime: &'a str, time: &'a str },
    /// A `.panaccess-mime.types` `ForceType`.
    Panaccess { mime: &'a str },
    /// A wget log's request that saved the file (the first one counts).
    Logged { url: &'a str, at: DateTime<Utc> },
}

/// A walked file with all the side files said of it, for [`MirrorFiles::resolve`].
pub(crate) struct Found {
    /// The save path.
    pub save_path: String,
    /// The file system's spelling, when not the save path.
    pub raw_relative: Option<Vec<u8>>,
    /// Size in bytes.
    pub size: u64,
    /// `hts-cache/new.zip`: URL, header block, `Content-Type`.
    pub cache: Option<(String, String, Option<String>)>,
    /// `url.map`'s URL.
    pub url_map: Option<String>,
    /// `hts-cache/new.txt`: URL, MIME type, time of day.
    pub new_txt: Option<(String, String, Option<String>)>,
    /// `.panaccess-mime.types`' type.
    pub panaccess: Option<String>,
}

/// The files of one mirror, on disk. Clones share the list.
#[derive(Debug, Clone)]
pub struct MirrorFiles {
    db: Arc<Mutex<Connection>>,
    len: u64,
}

fn lock(db: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic elsewhere while holding it leaves the database as consistent as SQLite keeps it.
    db.lock().unwrap_or_else(|p| p.into_inner())
}

fn timestamp(t: DateTime<Utc>) -> (i64, i64) {
    (t.timestamp(), i64::from(t.timestamp_subsec_nanos()))
}

fn from_timestamp(secs: i64, nanos: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, u32::try_from(nanos).unwrap_or(0)).unwrap_or_default()
}

fn file_of(row: &Row<'_>) -> rusqlite::Result<(i64, MirrorFile)> {
    let size: i64 = row.get(3)?;
    let f = MirrorFile {
        save_path: row.get(1)?,
        raw_relative: row.get(2)?,
        size: u64::try_from(size).unwrap_or(0),
        url: row.get(4)?,
        url_source: UrlSource::of_code(row.get(5)?),
        mime: row.get(6)?,
        mime_source: row.get(7)?,
        capture: from_timestamp(row.get(8)?, row.get(9)?),
        capture_from_cache: row.get::<_, i64>(10)? != 0,
        capture_source: row.get(11)?,
        cache_headers: row.get(12)?,
    };
    Ok((row.get(0)?, f))
}

impl MirrorFiles {
    /// An empty list, in a new temporary database.
    pub(crate) fn open() -> Result<MirrorFiles, ScratchError> {
        let db = crate::temporaries::scratch_database(CACHE_KIB, SCHEMA)?;
        Ok(MirrorFiles { db: Arc::new(Mutex::new(db)), len: 0 })
    }

    /// How many files.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when no file was walked.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a walked file in walk order; false when its save path is already taken.
    pub(crate) fn add_walked(
        &mut self,
        save_path: &str,
        raw_relative: Option<&[u8]>,
        size: u64,
    ) -> Result<bool, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(
            "INSERT OR IGNORE INTO files (save_path, raw, size) VALUES (?1, ?2, ?3)",
        )?;
        let added = st.execute(params![save_path, raw_relative, size as i64])? == 1;
        drop(st);
        drop(db);
        self.len += u64::from(added);
        Ok(added)
    }

    /// True when the walk found `save_path`.
    pub(crate) fn is_walked(&self, save_path: &str) -> Result<bool, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached("SELECT 1 FROM files WHERE save_path = ?1")?;
        Ok(st.exists([save_path])?)
    }

    /// Records what a side file says of `save_path`: kept only for a walked file (so the side
    /// files' size does not count, only the mirror's), the last line of a side file winning,
    /// the first request of a wget log. A `.panaccess-mime.types` is read during the walk and
    /// kept for any name. True when kept.
    pub(crate) fn stage(&self, save_path: &str, said: Said<'_>) -> Result<bool, ScratchError> {
        const WALKED: &str = "WHERE EXISTS (SELECT 1 FROM files WHERE save_path = ?1)";
        let db = lock(&self.db);
        let n = match said {
            Said::Cache { url, headers, content_type } => db
                .prepare_cached(&format!(
                    "INSERT OR REPLACE INTO cache SELECT ?1, ?2, ?3, ?4 {WALKED}"
                ))?
                .execute(params![save_path, url, headers, content_type])?,
            Said::UrlMap { url } => db
                .prepare_cached(&format!("INSERT OR REPLACE INTO url_map SELECT ?1, ?2 {WALKED}"))?
                .execute(params![save_path, url])?,
            Said::NewTxt { url, mime, time } => db
                .prepare_cached(&format!(
                    "INSERT OR REPLACE INTO new_txt SELECT ?1, ?2, ?3, ?4 {WALKED}"
                ))?
                .execute(params![save_path, url, mime, time])?,
            Said::Panaccess { mime } => db
                .prepare_cached("INSERT OR REPLACE INTO panaccess VALUES (?1, ?2)")?
                .execute(params![save_path, mime])?,
            Said::Logged { url, at } => {
                let (secs, nanos) = timestamp(at);
                db.prepare_cached(&format!(
                    "INSERT OR IGNORE INTO logged SELECT ?1, ?2, ?3, ?4 {WALKED}"
                ))?
                .execute(params![save_path, url, secs, nanos])?
            }
        };
        Ok(n > 0)
    }

    /// How many walked files `url.map`, `new.txt` and the wget logs named.
    pub(crate) fn staged_counts(&self) -> Result<(u64, u64, u64), ScratchError> {
        let db = lock(&self.db);
        let count = |table: &str| -> Result<u64, ScratchError> {
            let n: i64 =
                db.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        Ok((count("url_map")?, count("new_txt")?, count("logged")?))
    }

    /// Makes each walked file's row from what was found of it (`make`), in walk order; then
    /// forgets what the side files said (but the wget log's requests, for
    /// [`MirrorFiles::update_each`]).
    pub(crate) fn resolve(
        &mut self,
        mut make: impl FnMut(Found) -> MirrorFile,
    ) -> Result<(), ScratchError> {
        let mut after = 0i64;
        loop {
            let found = self.found_after(after)?;
            let Some(&(last, _)) = found.last() else { break };
            let made: Vec<(i64, MirrorFile)> =
                found.into_iter().map(|(seq, f)| (seq, make(f))).collect();
            self.write_back(&made)?;
            after = last;
        }
        lock(&self.db).execute_batch(
            "DELETE FROM cache; DELETE FROM url_map; DELETE FROM new_txt; DELETE FROM panaccess;",
        )?;
        Ok(())
    }

    fn found_after(&self, after: i64) -> Result<Vec<(i64, Found)>, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(
            "SELECT f.seq, f.save_path, f.raw, f.size, c.url, c.headers, c.content_type,
                    m.url, n.url, n.mime, n.time, p.mime
             FROM files f LEFT JOIN cache c ON c.save_path = f.save_path
             LEFT JOIN url_map m ON m.save_path = f.save_path
             LEFT JOIN new_txt n ON n.save_path = f.save_path
             LEFT JOIN panaccess p ON p.save_path = f.save_path
             WHERE f.seq > ?1 ORDER BY f.seq LIMIT ?2",
        )?;
        let rows = st.query_map(params![after, CHUNK as i64], |r| {
            let size: i64 = r.get(3)?;
            let cache = match (r.get::<_, Option<String>>(4)?, r.get::<_, Option<String>>(5)?) {
                (Some(url), Some(headers)) => Some((url, headers, r.get(6)?)),
                _ => None,
            };
            let new_txt = match (r.get::<_, Option<String>>(8)?, r.get::<_, Option<String>>(9)?) {
                (Some(url), Some(mime)) => Some((url, mime, r.get(10)?)),
                _ => None,
            };
            let found = Found {
                save_path: r.get(1)?,
                raw_relative: r.get(2)?,
                size: u64::try_from(size).unwrap_or(0),
                cache,
                url_map: r.get(7)?,
                new_txt,
                panaccess: r.get(11)?,
            };
            Ok((r.get(0)?, found))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn write_back(&self, files: &[(i64, MirrorFile)]) -> Result<(), ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(
            "UPDATE files SET url = ?2, url_source = ?3, mime = ?4, mime_source = ?5,
                    capture_secs = ?6, capture_nanos = ?7, capture_from_cache = ?8,
                    capture_source = ?9, cache_headers = ?10 WHERE seq = ?1",
        )?;
        for (seq, f) in files {
            let (secs, nanos) = timestamp(f.capture);
            st.execute(params![
                seq,
                f.url,
                f.url_source.code(),
                f.mime,
                f.mime_source,
                secs,
                nanos,
                f.capture_from_cache,
                f.capture_source,
                f.cache_headers
            ])?;
        }
        Ok(())
    }

    /// Up to `n` files after the `after`-th (by sequence number), with their numbers.
    pub(crate) fn chunk(
        &self,
        after: i64,
        n: usize,
    ) -> Result<Vec<(i64, MirrorFile)>, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE seq > ?1 ORDER BY seq LIMIT ?2"
        ))?;
        let rows = st.query_map(params![after, n as i64], file_of)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Calls `f` with each file in walk order, until it breaks.
    pub fn for_each(
        &self,
        mut f: impl FnMut(&MirrorFile) -> ControlFlow<()>,
    ) -> Result<(), ScratchError> {
        let mut after = 0i64;
        loop {
            let files = self.chunk(after, CHUNK)?;
            let Some(&(last, _)) = files.last() else { return Ok(()) };
            for (_, file) in &files {
                if f(file).is_break() {
                    return Ok(());
                }
            }
            after = last;
        }
    }

    /// Lets `f` change each file in walk order, given the wget log's request for it (URL and
    /// time), if any.
    pub(crate) fn update_each(
        &mut self,
        mut f: impl FnMut(&mut MirrorFile, Option<(String, DateTime<Utc>)>),
    ) -> Result<(), ScratchError> {
        let mut after = 0i64;
        loop {
            let mut files = self.chunk(after, CHUNK)?;
            let Some(&(last, _)) = files.last() else { return Ok(()) };
            for (_, file) in &mut files {
                let logged = self.logged(&file.save_path)?;
                f(file, logged);
            }
            self.write_back(&files)?;
            after = last;
        }
    }

    fn logged(&self, save_path: &str) -> Result<Option<(String, DateTime<Utc>)>, ScratchError> {
        let db = lock(&self.db);
        let mut st =
            db.prepare_cached("SELECT url, secs, nanos FROM logged WHERE save_path = ?1")?;
        let row = st
            .query_row([save_path], |r| Ok((r.get(0)?, from_timestamp(r.get(1)?, r.get(2)?))))
            .optional()?;
        Ok(row)
    }

    /// The first file (in walk order) at `url`, else the first whose URL is `url` but for
    /// trailing slashes.
    pub fn at_url(&self, url: &str) -> Result<Option<MirrorFile>, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE url = ?1 OR rtrim(url, '/') = ?2
             ORDER BY url = ?1 DESC, seq LIMIT 1"
        ))?;
        let row = st.query_row(params![url, url.trim_end_matches('/')], file_of).optional()?;
        Ok(row.map(|(_, f)| f))
    }

    /// The sum of the files' sizes (at most `u64::MAX`: sparse files can claim any size).
    pub fn total_size(&self) -> Result<u64, ScratchError> {
        let db = lock(&self.db);
        // TOTAL, not SUM: SUM fails past i64::MAX, as two sparse files of 4 EiB reach.
        let n: f64 = db.query_row("SELECT TOTAL(size) FROM files", [], |r| r.get(0))?;
        // `as` saturates: a float past u64::MAX is u64::MAX.
        Ok(n as u64)
    }

    /// Files per URL source.
    pub fn url_source_counts(&self) -> Result<Vec<(UrlSource, u64)>, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(
            "SELECT url_source, COUNT(*) FROM files GROUP BY url_source ORDER BY url_source",
        )?;
        let rows = st.query_map([], |r| {
            Ok((UrlSource::of_code(r.get(0)?), u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0)))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The first `limit` files whose URL is a guess from the layout (save path, URL), in walk
    /// order, and how many there are in all.
    pub fn guessed(&self, limit: usize) -> Result<(Vec<(String, String)>, u64), ScratchError> {
        let db = lock(&self.db);
        let layout = UrlSource::Layout.code();
        let mut st = db.prepare_cached(
            "SELECT save_path, url FROM files WHERE url_source = ?1 ORDER BY seq LIMIT ?2",
        )?;
        let rows = st.query_map(params![layout, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let listed: Vec<(String, String)> = rows.collect::<Result<_, _>>()?;
        drop(st);
        let n: i64 =
            db.query_row("SELECT COUNT(*) FROM files WHERE url_source = ?1", [layout], |r| {
                r.get(0)
            })?;
        Ok((listed, u64::try_from(n).unwrap_or(0)))
    }

    /// Files whose capture time came from the cache.
    pub fn from_cache_count(&self) -> Result<u64, ScratchError> {
        let db = lock(&self.db);
        let n: i64 =
            db.query_row("SELECT COUNT(*) FROM files WHERE capture_from_cache != 0", [], |r| {
                r.get(0)
            })?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// The first `n` host directories (the save paths' first segments), in byte order.
    pub(crate) fn host_dirs(&self, n: usize) -> Result<Vec<String>, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(
            "SELECT DISTINCT CASE WHEN instr(save_path, '/') > 0
                    THEN substr(save_path, 1, instr(save_path, '/') - 1) ELSE save_path END AS d
             FROM files ORDER BY d LIMIT ?1",
        )?;
        let rows = st.query_map([n as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// True when some file is in host directory `dir`.
    pub(crate) fn has_host_dir(&self, dir: &str) -> Result<bool, ScratchError> {
        let db = lock(&self.db);
        let mut st = db.prepare_cached(
            "SELECT 1 FROM files WHERE save_path = ?1 OR substr(save_path, 1, length(?2)) = ?2",
        )?;
        Ok(st.exists(params![dir, format!("{dir}/")])?)
    }

    /// Gives back the page cache's memory (the list stays on disk): a title's instances are
    /// read all before they are listed, one after the other.
    pub fn release_memory(&self) {
        // Only memory is at stake: a failure leaves the cache as it was.
        let _ = lock(&self.db).execute_batch("PRAGMA shrink_memory;");
    }

    /// The link map over these files.
    pub fn link_map(&self) -> LinkMap {
        LinkMap { db: self.db.clone(), failure: Mutex::new(None) }
    }
}

/// The link map of a mirror: each file's save path and its original URL, which the rewrite
/// stage (`stages::rewrite`) uses to make links between mirror files absolute again. The
/// source that knows its files gives it (`super::capture::CaptureSource::link_map`); it is
/// the mirror's file list itself, looked up by save path.
#[derive(Debug)]
pub struct LinkMap {
    db: Arc<Mutex<Connection>>,
    /// The first look-up that failed: a link map that cannot answer makes the stage fail, not
    /// a link silently left as it was.
    failure: Mutex<Option<rusqlite::Error>>,
}

impl LinkMap {
    /// A link map of `(save path, URL)` pairs, in a list of its own (for tests and tools).
    pub fn of_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<LinkMap, ScratchError> {
        let mut files = MirrorFiles::open()?;
        for (path, url) in pairs {
            files.add_walked(path, None, 0)?;
            let db = lock(&files.db);
            db.prepare_cached("UPDATE files SET url = ?2 WHERE save_path = ?1")?
                .execute(params![path, url])?;
        }
        Ok(files.link_map())
    }

    /// The original URL of a save path (`None` too when the look-up fails: see
    /// [`LinkMap::failure`]).
    pub fn get(&self, save_path: &str) -> Option<String> {
        let db = lock(&self.db);
        let found = db
            .prepare_cached("SELECT url FROM files WHERE save_path = ?1")
            .and_then(|mut st| st.query_row([save_path], |r| r.get(0)).optional());
        match found {
            Ok(url) => url,
            Err(e) => {
                let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
                failure.get_or_insert(e);
                None
            }
        }
    }

    /// The first look-up that failed since the last call, if any.
    pub fn failure(&self) -> Option<ScratchError> {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).take().map(ScratchError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_lines_only_for_walked_files_and_the_last_wins() {
        let mut files = MirrorFiles::open().unwrap();
        assert!(files.add_walked("e.org/a.html", None, 3).unwrap());
        assert!(files.add_walked("e.org/b%FF.html", Some(b"e.org/b\xff.html"), 4).unwrap());
        assert!(!files.add_walked("e.org/a.html", None, 5).unwrap(), "a save path is one file");
        assert!(!files.stage("e.org/gone.html", Said::UrlMap { url: "http://x/" }).unwrap());
        files.stage("e.org/a.html", Said::UrlMap { url: "http://e.org/first" }).unwrap();
        files.stage("e.org/a.html", Said::UrlMap { url: "http://e.org/a" }).unwrap();
        let at = DateTime::from_timestamp(1_700_000_000, 5).unwrap();
        files.stage("e.org/a.html", Said::Logged { url: "http://log/1", at }).unwrap();
        files.stage("e.org/a.html", Said::Logged { url: "http://log/2", at }).unwrap();
        assert_eq!(files.staged_counts().unwrap(), (1, 0, 1));
        files
            .resolve(|f| MirrorFile {
                url: f.url_map.clone().unwrap_or_else(|| "http://guess/".into()),
                url_source: if f.url_map.is_some() { UrlSource::UrlMap } else { UrlSource::Layout },
                mime: "text/html".into(),
                mime_source: "extension".into(),
                capture: at,
                capture_from_cache: false,
                capture_source: None,
                cache_headers: None,
                save_path: f.save_path,
                raw_relative: f.raw_relative,
                size: f.size,
            })
            .unwrap();
        let mut seen = Vec::new();
        files
            .update_each(|f, logged| {
                seen.push((f.save_path.clone(), logged));
                f.capture_source = Some("log".into());
            })
            .unwrap();
        assert_eq!(
            seen,
            [
                ("e.org/a.html".into(), Some(("http://log/1".into(), at))),
                ("e.org/b%FF.html".into(), None)
            ]
        );
        let all = files.chunk(0, 10).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].1.url, "http://e.org/a");
        assert_eq!(all[0].1.capture, at, "nanoseconds kept");
        assert_eq!(all[1].1.raw_relative.as_deref(), Some(&b"e.org/b\xff.html"[..]));
        assert_eq!(all[1].1.capture_source.as_deref(), Some("log"));
        assert_eq!(files.total_size().unwrap(), 7);
        assert_eq!(files.host_dirs(5).unwrap(), ["e.org"]);
        assert!(files.has_host_dir("e.org").unwrap() && !files.has_host_dir("e.or").unwrap());
        assert_eq!(files.at_url("http://e.org/a/").unwrap().unwrap().save_path, "e.org/a.html");
        let map = files.link_map();
        assert_eq!(map.get("e.org/a.html").as_deref(), Some("http://e.org/a"));
        assert_eq!(map.get("e.org/none"), None);
        assert!(map.failure().is_none());
    }

    #[test]
    fn url_sources_round_trip() {
        for s in UrlSource::ALL {
            assert_eq!(UrlSource::of_code(s.code()), s);
            assert_eq!(serde_json::to_value(s).unwrap(), s.key());
        }
    }
}
