//! Undoing deduplication: the containers of a package with every revisit written by
//! [`super::dedup`] made a full `response` record again, its payload taken from the original
//! record in one of the packages it refers to (found by its `WARC-Refers-To` record id) and
//! verified against the revisit's `WARC-Payload-Digest` (SHA-1) before it is written: copied
//! to an unlinked temporary file a chunk at a time while it is hashed ([`Originals`], shared
//! with the rebuild of deduplicated ARCs), so no payload is held in memory whatever its size.
//!
//! Every other byte of a container is copied as it is; a restored record keeps the revisit's
//! fields but those deduplication added, its HTTP header, and gets the payload back (its
//! `Content-Length` and `WARC-Block-Digest` the full block's). `webaip undedup` packages the
//! restored containers as `package` packages WARC files.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use sha1::{Digest, Sha1};

use crate::formats::digest::sha1_base32;
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::segment::FileRange;
use crate::formats::warc::payload;
use crate::formats::warc::{WarcError, WarcReader};
use crate::index::digests::{Algorithm, DigestKey};
use crate::layout::{self, ConfineError};
use crate::stages::original_faults::{MissingOriginal, OtherPayload};

/// Why a package could not be restored.
#[derive(Debug, thiserror::Error)]
pub enum UndedupError {
    /// A file could not be read or written.
    #[error("{}: {}", path.display(), layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A container of a package is not a regular file reached without links, or is absent.
    #[error(transparent)]
    Refused(#[from] ConfineError),
    /// The output is inside a package read (or a package inside the output).
    #[error(transparent)]
    Nested(#[from] layout::NestingError),
    /// The scratch database of record ids failed.
    #[error("the temporary table of record ids: {0}")]
    Scratch(#[from] rusqlite::Error),
    /// A container could not be read as WARC.
    #[error(transparent)]
    Warc(#[from] WarcError),
    /// A revisit names no record id, or one no package given holds.
    #[error(transparent)]
    Missing(Box<MissingOriginal>),
    /// Every record the revisit refers to holds another payload than it states.
    #[error(transparent)]
    Digest(Box<OtherPayload>),
    /// A container of a package searched could not be read to its end, and no record read
    /// held the payload: it may be in the unread part.
    #[error(
        "{}: not read to its end ({why}): the original looked for may be in its unread part",
        container.display()
    )]
    Unread {
        /// The container.
        container: PathBuf,
        /// Why.
        why: String,
        /// The reading was stopped by this machine (too many open files, no space for the
        /// table of record ids) or the medium (an input/output error), not by the container's
        /// bytes ([`UndedupError::is_not_read`]).
        not_read: bool,
    },
}

impl UndedupError {
    /// Whether the bytes were not given, which says nothing of the packages read: this
    /// machine stopped the run (a full disk, too many open files, memory exhausted) or the
    /// medium reported an input/output error (`layout::not_read_cause`).
    pub fn is_not_read(&self) -> bool {
        match self {
            UndedupError::Unread { not_read, .. } => *not_read,
            UndedupError::Scratch(e) => scratch_full(e),
            other => layout::not_read_cause(other).is_some(),
        }
    }
}

/// Whether the scratch table failed for want of room (SQLite's own codes say so, not an
/// `io::Error`).
fn scratch_full(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{CannotOpen, DiskFull, OutOfMemory};
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, DiskFull | OutOfMemory | CannotOpen))
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> UndedupError + '_ {
    move |source| UndedupError::Io { path: path.to_path_buf(), source }
}

/// A container of a package: the package, and its name there (`content/NAME`).
#[derive(Debug, Clone)]
struct Container {
    pkg: PathBuf,
    rel: String,
}

impl Container {
    /// Opens it without following links (only a regular file).
    fn open(&self) -> Result<File, ConfineError> {
        layout::open_in(&self.pkg, &self.rel)
    }

    fn path(&self) -> PathBuf {
        self.pkg.join(&self.rel)
    }
}

/// Where `webaip undedup` keeps the restored containers until they are packaged: a folder
/// beside the new package, locked while the run lives, so the next run removes the one a
/// killed run left (`temporaries`), and removed when this is dropped.
pub struct RestoreScratch {
    dir: tempfile::TempDir,
    _lock: File,
}

/// The name pattern of [`RestoreScratch`] folders.
const RESTORE_SCRATCH: crate::temporaries::TempName =
    crate::temporaries::TempName { prefix: ".webaip-undedup-", suffix: "", dirs: true };

impl RestoreScratch {
    /// A new scratch folder in the folder that will hold `out`, after removing those that
    /// killed runs left there.
    pub fn beside(out: &Path) -> Result<RestoreScratch, UndedupError> {
        let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(".".as_ref());
        crate::temporaries::remove_dead(parent, RESTORE_SCRATCH);
        let (dir, lock) =
            crate::temporaries::locked_dir_in(parent, RESTORE_SCRATCH).map_err(io_at(parent))?;
        Ok(RestoreScratch { dir, _lock: lock })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Where a record is: its container (by index), and its bytes' range there.
#[derive(Debug, Clone, Copy)]
struct Place {
    container: usize,
    begin: u64,
    end: u64,
}

/// The WARC containers of a package (`layout::package_containers`: links, FIFOs and devices
/// refused), sorted.
fn containers(pkg: &Path) -> Result<Vec<Container>, UndedupError> {
    let names = layout::package_containers(pkg)?;
    Ok(names.into_iter().map(|rel| Container { pkg: pkg.to_path_buf(), rel }).collect())
}

/// Page cache of the table of record ids: the table itself is on disk, so a `--with` package
/// of millions of records costs no more memory than a small one.
const ORIGINALS_CACHE_KIB: u32 = 8 << 10;
/// Bytes of a stored payload read or copied at a time.
const PAYLOAD_CHUNK: usize = 256 << 10;

/// Containers kept open at once for the payloads read from them, at most: a run over
/// thousands of containers stays far below the process's limit of open files.
const OPEN_CONTAINERS: usize = 64;

/// Containers kept open at once: [`OPEN_CONTAINERS`], or a quarter of the process's limit of
/// open files when that is lower (the run opens other files too: the containers rebuilt, the
/// scratch table, the temporary copies).
fn open_cap() -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit only writes the struct it is given, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return OPEN_CONTAINERS;
    }
    let soft = usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX);
    OPEN_CONTAINERS.min(soft / 4).max(1)
}

/// A container of a source, read (once) when it is first searched.
struct Searched {
    container: Container,
    /// The package's OBJID (`None`: its METS names none, or a WARC file given alone).
    objid: Option<String>,
    /// The package folder (or the WARC file given alone), resolved: a revisit in it refers
    /// to it first when it names no other package.
    home: PathBuf,
    /// Its records are in the table.
    read: bool,
    /// Open while it is among the [`OPEN_CONTAINERS`] used last.
    file: Option<File>,
    /// Why it could not be read to its end, when it could not: a record missing from the
    /// table may be in its unread part.
    fault: Option<ReadFault>,
}

/// Why a container was not read to its end.
#[derive(Clone)]
struct ReadFault {
    why: String,
    /// The bytes were not given ([`UndedupError::is_not_read`]).
    not_read: bool,
}

/// The records of the `sources`' containers by `WARC-Record-ID`, in a scratch database on disk.
/// A container is read (its records' ids and places put in the table) only when a payload is
/// looked for that no place known so far gives, those the revisit names first (its package's,
/// or its own package's when it names none, and the container `WARC-Refers-To-Container`
/// names): in a run, each container is opened and read at most once, and those no revisit
/// needs not at all. Every place of a record id is kept, and each is tried until one holds the
/// payload stated, so the order the sources are given in never changes the payload given.
pub(crate) struct Originals {
    searched: Vec<Searched>,
    /// The containers holding an open file, the one used longest ago first.
    open: std::collections::VecDeque<usize>,
    db: rusqlite::Connection,
    /// Where stored payloads are copied to (`None`: the system's temporary folder).
    scratch: Option<PathBuf>,
    /// Containers kept open at once ([`open_cap`]).
    open_cap: usize,
    /// The places (container, offset) found to hold a payload no revisit looked for so far
    /// was, with what they hold: each is copied and hashed once in a run, not again for
    /// every revisit of that id (a package repeating one record id stays linear).
    known_other: HashMap<(usize, u64), KnownOther>,
}

/// What a place holds that a revisit did not look for: its payload's SHA-1 key and length.
struct KnownOther {
    key: Option<DigestKey>,
    holder: OtherHolder,
}

/// What a revisit states of the payload it leaves out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatedPayload<'a> {
    /// `WARC-Refers-To`: the record holding it.
    pub(crate) refers: &'a str,
    /// `WARC-Payload-Digest`.
    pub(crate) digest: &'a str,
    /// Its length, when the revisit states it.
    pub(crate) len: Option<u64>,
    /// `X-Webaip-Refers-To-Package`: the OBJID of the package holding it.
    pub(crate) package: Option<&'a str>,
    /// `WARC-Refers-To-Container`: the container holding it (`file://NAME`).
    pub(crate) container: Option<&'a str>,
    /// The container holding the revisit: its own package is searched first when it names
    /// no other.
    pub(crate) from: Option<&'a Path>,
}

/// Why [`Originals::verified_payload`] gives no payload.
#[derive(Debug)]
pub(crate) enum PayloadFault {
    /// No source holds the record.
    Missing,
    /// Every record of that id found holds another payload (by container path).
    Differs(Vec<OtherHolder>),
    /// Reading or copying failed.
    Failed(UndedupError),
}

/// A record of the id a revisit refers to that holds another payload than it states.
#[derive(Debug, Clone)]
pub(crate) struct OtherHolder {
    /// The container holding the record.
    pub(crate) holder: PathBuf,
    /// The package holding that container.
    pub(crate) package: PathBuf,
    /// The SHA-1 of its payload (`sha1:BASE32`).
    pub(crate) found: String,
    /// Its length.
    pub(crate) found_len: u64,
}

impl<E: Into<UndedupError>> From<E> for PayloadFault {
    fn from(e: E) -> Self {
        PayloadFault::Failed(e.into())
    }
}

/// A stored payload, checked, in an unlinked temporary file (nothing left if the run is
/// killed), given back in chunks.
pub(crate) struct VerifiedPayload {
    file: File,
    /// Its length.
    pub(crate) len: u64,
    /// The folder of the temporary file, for messages.
    scratch: PathBuf,
}

impl VerifiedPayload {
    /// Its next chunk; `None` at its end.
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, UndedupError> {
        let mut chunk = Vec::with_capacity(PAYLOAD_CHUNK);
        let n = io::Read::by_ref(&mut self.file)
            .take(PAYLOAD_CHUNK as u64)
            .read_to_end(&mut chunk)
            .map_err(io_at(&self.scratch))?;
        Ok((n > 0).then_some(chunk))
    }

    /// Back to its first byte.
    fn rewind(&mut self) -> Result<(), UndedupError> {
        self.file.seek(SeekFrom::Start(0)).map(drop).map_err(io_at(&self.scratch))
    }
}

impl Originals {
    /// The records of `sources` (package folders, or WARC files given alone); stored payloads
    /// are copied under `scratch` (`None`: the system's temporary folder).
    pub(crate) fn new(
        sources: &[PathBuf],
        scratch: Option<PathBuf>,
    ) -> Result<Originals, UndedupError> {
        let db = crate::temporaries::scratch_database(
            ORIGINALS_CACHE_KIB,
            "CREATE TABLE originals (id TEXT NOT NULL, container INTEGER NOT NULL, \
             begin INTEGER NOT NULL, end INTEGER NOT NULL, PRIMARY KEY (id, container, begin)) \
             WITHOUT ROWID;",
        )?;
        let mut searched = Vec::new();
        for source in sources {
            searched.extend(source_containers(source));
        }
        let (open, known_other) = Default::default();
        Ok(Originals { searched, open, db, scratch, open_cap: open_cap(), known_other })
    }

    /// The containers not read yet, those `stated` names first ([`Self::rank`]), then the
    /// others in the sources' order.
    fn search_order(&self, stated: &StatedPayload, from: Option<&Path>) -> Vec<usize> {
        let mut order: Vec<usize> =
            (0..self.searched.len()).filter(|&n| !self.searched[n].read).collect();
        order.sort_by_key(|&n| self.rank(stated, from, n));
        order
    }

    /// How early the container `n` is searched for the payload `stated` leaves out: first
    /// those of the package it names (of the package holding the revisit, `from`, when it
    /// names none), the container `WARC-Refers-To-Container` names before the others; then
    /// a container of that name elsewhere; then the rest.
    fn rank(&self, stated: &StatedPayload, from: Option<&Path>, n: usize) -> u8 {
        let s = &self.searched[n];
        let ours = match stated.package {
            Some(objid) => s.objid.as_deref() == Some(objid),
            None => from.is_some_and(|f| f.starts_with(&s.home)),
        };
        let named = stated.container.map(|c| c.strip_prefix("file://").unwrap_or(c));
        let name = Path::new(&s.container.rel).file_name().and_then(|n| n.to_str());
        match (ours, named.is_some() && name == named) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        }
    }

    /// Every place of the record `id` in the containers read so far.
    fn places(&self, id: &str) -> Result<Vec<Place>, UndedupError> {
        let mut query =
            self.db.prepare_cached("SELECT container, begin, end FROM originals WHERE id = ?")?;
        let rows = query.query_map([id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (n, begin, end) = row?;
            if let Ok(container) = usize::try_from(n) {
                out.push(Place { container, begin: begin as u64, end: end as u64 });
            }
        }
        Ok(out)
    }

    /// The container `n`, open: kept open for the payloads read from it, among the
    /// [`open_cap`] used last (the one used longest ago is closed).
    fn opened(&mut self, n: usize) -> Result<&File, UndedupError> {
        self.open.retain(|&m| m != n);
        self.open.push_back(n);
        if self.open.len() > self.open_cap
            && let Some(oldest) = self.open.pop_front()
        {
            self.searched[oldest].file = None;
        }
        let s = &mut self.searched[n];
        let file = match s.file.take() {
            Some(file) => file,
            None => s.container.open()?,
        };
        Ok(s.file.insert(file))
    }

    /// Puts the id and place of each record of the container `n` in the table. A container
    /// that cannot be read to its end keeps the records read before the fault, and the fault
    /// (the other sources are still searched).
    fn read_container(&mut self, n: usize) {
        if let Err(e) = self.read_records(n) {
            let (not_read, why) = (e.is_not_read(), layout::with_not_read_cause(&e));
            self.searched[n].fault = Some(ReadFault { why, not_read });
        }
        self.searched[n].read = true;
    }

    fn read_records(&mut self, n: usize) -> Result<(), UndedupError> {
        let file = self
            .opened(n)?
            .try_clone()
            .map_err(|e| io_at(&self.searched[n].container.path())(e))?;
        let name = self.searched[n].container.path().display().to_string();
        let mut insert = self.db.prepare_cached(
            "INSERT OR IGNORE INTO originals (id, container, begin, end) VALUES (?, ?, ?, ?)",
        )?;
        let mut r = WarcReader::new(FileRange::new(&file, 0, u64::MAX), name)?;
        while let Some((head, end, ())) =
            r.next_record(|_, b| io::copy(b, &mut io::sink()).map(drop))?
        {
            // A revisit holds no payload: it is no original, whatever refers to it (the rule
            // the audit's references follow too).
            if head.header.warc_type() == Some("revisit") {
                continue;
            }
            if let Some(id) = head.header.record_id() {
                // Offsets in a file fit an i64 (SQLite's integers).
                insert.execute(rusqlite::params![
                    id,
                    n as i64,
                    head.offset as i64,
                    end.end as i64
                ])?;
            }
        }
        Ok(())
    }

    /// The payload `stated` leaves out, copied from a record it refers to into a temporary
    /// file while its SHA-1 and length are checked against what `stated` says: nothing of a
    /// payload that is not the one stated is given, and no more than a chunk of it is in
    /// memory. The places known are tried first, then the containers not read yet, in
    /// [`Self::rank`] order, until one holds the payload stated: it is `Differs` only when
    /// every record of that id holds another (all named).
    pub(crate) fn verified_payload(
        &mut self,
        stated: &StatedPayload,
    ) -> Result<VerifiedPayload, PayloadFault> {
        let from = stated.from.map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.into()));
        let from = from.as_deref();
        let mut tried = Tried::default();
        let mut known = self.places(stated.refers)?;
        known.sort_by_key(|p| (self.rank(stated, from, p.container), p.container, p.begin));
        for place in known {
            if let Some(payload) = self.try_place(place, stated, &mut tried)? {
                return Ok(payload);
            }
        }
        for n in self.search_order(stated, from) {
            self.read_container(n);
            let here = self.places(stated.refers)?.into_iter().filter(|p| p.container == n);
            for place in here.collect::<Vec<_>>() {
                if let Some(payload) = self.try_place(place, stated, &mut tried)? {
                    return Ok(payload);
                }
            }
        }
        Err(self.none_verified(tried, stated, from))
    }

    /// Why no place gave the payload: the first fault of a place or of a container not read
    /// to its end that may hold the original ([`Self::may_hold`]; one of the package the
    /// revisit names first), else the other payloads found (sorted, so that the sources' order
    /// does not change the message), else none holds the record. Such a fault wins over other
    /// payloads: what was not read may hold the payload, so the revisit is not checked, and no
    /// package is said to hold another payload.
    fn none_verified(
        &self,
        mut tried: Tried,
        stated: &StatedPayload,
        from: Option<&Path>,
    ) -> PayloadFault {
        if let Some(e) = tried.failed {
            return PayloadFault::Failed(e);
        }
        let unread = (0..self.searched.len())
            .filter(|&n| self.searched[n].fault.is_some() && self.may_hold(n, stated, &tried))
            .min_by_key(|&n| self.rank(stated, from, n))
            .and_then(|n| Some((&self.searched[n], self.searched[n].fault.clone()?)));
        if let Some((s, ReadFault { why, not_read })) = unread {
            let container = s.container.path();
            return PayloadFault::Failed(UndedupError::Unread { container, why, not_read });
        }
        if !tried.differs.is_empty() {
            tried.differs.sort_by(|a, b| a.holder.cmp(&b.holder));
            return PayloadFault::Differs(tried.differs);
        }
        PayloadFault::Missing
    }

    /// Whether the container `n`, not read to its end, may hold the original `stated` looks
    /// for when other payloads were found under its record id. A revisit that names its
    /// package (`X-Webaip-Refers-To-Package`) names where the record was written: only that
    /// package's containers may hold it, and another package cut short hides nothing (were
    /// it counted, one unreadable `--with` package would turn every real difference into
    /// "not checked"). A revisit that names none, or one no other payload was found for, may
    /// find its original in any container.
    fn may_hold(&self, n: usize, stated: &StatedPayload, tried: &Tried) -> bool {
        match stated.package {
            Some(objid) if !tried.differs.is_empty() => {
                self.searched[n].objid.as_deref() == Some(objid)
            }
            _ => true,
        }
    }

    /// The payload at `place` when it is the one `stated` says; otherwise what it holds, or
    /// the fault reading it, is kept in `tried` and `None` given.
    fn try_place(
        &mut self,
        place: Place,
        stated: &StatedPayload,
        tried: &mut Tried,
    ) -> Result<Option<VerifiedPayload>, PayloadFault> {
        let at = (place.container, place.begin);
        if let Some(known) = self.known_other.get(&at)
            && (known.key.is_none()
                || known.key != DigestKey::parse(stated.digest)
                || stated.len.is_some_and(|n| n != known.holder.found_len))
        {
            tried.differs.push(known.holder.clone());
            return Ok(None);
        }
        match self.payload_at(place, stated) {
            Ok(Taken::Payload(p)) => Ok(Some(p)),
            Ok(Taken::Other(other, key)) => {
                self.known_other.insert(at, KnownOther { key, holder: other.clone() });
                tried.differs.push(other);
                Ok(None)
            }
            Ok(Taken::NoRecord) => Ok(None),
            Err(e) => {
                tried.failed.get_or_insert(e);
                Ok(None)
            }
        }
    }

    /// The payload of the record at `place`, copied and checked against `stated`.
    fn payload_at(&mut self, place: Place, stated: &StatedPayload) -> Result<Taken, UndedupError> {
        let Some(s) = self.searched.get(place.container) else { return Ok(Taken::NoRecord) };
        let (holder, package) = (s.container.path(), s.container.pkg.clone());
        let scratch = self.scratch.clone().unwrap_or_else(std::env::temp_dir);
        let file = self.opened(place.container)?;
        let mut copy = tempfile::tempfile_in(&scratch).map_err(io_at(&scratch))?;
        let range = FileRange::new(file, place.begin, place.end - place.begin);
        let mut r = WarcReader::new(range, holder.display().to_string())?;
        let copied =
            r.next_record(|head, block| copy_payload(&head.header, block, &mut copy, stated.len));
        let copied = match copied? {
            Some((_, _, c)) => c.map_err(io_at(&scratch))?,
            None => return Ok(Taken::NoRecord),
        };
        let found_key = DigestKey::new(Algorithm::Sha1, &copied.sha1);
        let same_len = stated.len.is_none_or(|n| n == copied.len);
        if found_key.is_none() || found_key != DigestKey::parse(stated.digest) || !same_len {
            let found = sha1_base32(&copied.sha1);
            let other = OtherHolder { holder, package, found, found_len: copied.len };
            return Ok(Taken::Other(other, found_key));
        }
        let mut payload = VerifiedPayload { file: copy, len: copied.len, scratch };
        payload.rewind()?;
        Ok(Taken::Payload(payload))
    }
}

/// What the places of a record id tried so far gave instead of the payload.
#[derive(Default)]
struct Tried {
    differs: Vec<OtherHolder>,
    failed: Option<UndedupError>,
}

/// What one place of a record gave.
enum Taken {
    Payload(VerifiedPayload),
    /// Another payload, and its SHA-1 key.
    Other(OtherHolder, Option<DigestKey>),
    NoRecord,
}

/// The containers of one source (a package folder, or a WARC file given alone), none read
/// yet. A package whose containers cannot be listed (a link on the way, a folder not readable)
/// is one entry holding that fault, read: the other sources are still searched, and the fault
/// is named only when no source gives the payload.
fn source_containers(source: &Path) -> Vec<Searched> {
    let home = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
    let searched = |container, objid: Option<String>, fault: Option<ReadFault>| Searched {
        container,
        objid,
        home: home.clone(),
        read: fault.is_some(),
        file: None,
        fault,
    };
    if !source.is_dir() {
        return vec![searched(loose_container(source), None, None)];
    }
    let objid = crate::index::digests::package_objid(source).ok();
    match containers(source) {
        Ok(list) => list.into_iter().map(|c| searched(c, objid.clone(), None)).collect(),
        Err(e) => {
            let whole = Container { pkg: source.to_path_buf(), rel: String::new() };
            let (not_read, why) = (e.is_not_read(), layout::with_not_read_cause(&e));
            vec![searched(whole, objid, Some(ReadFault { why, not_read }))]
        }
    }
}

/// A WARC file given alone (`unmigrate FILE.warc.gz`) as a source: its folder and name.
fn loose_container(file: &Path) -> Container {
    let pkg = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let rel = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Container { pkg: pkg.to_path_buf(), rel }
}

/// The length and SHA-1 of a payload copied.
struct Copied {
    len: u64,
    sha1: [u8; 20],
}

/// Copies the payload of the record `h` (its block after the HTTP header) from `block` to
/// `to`, a chunk at a time, hashing it. A read error is the outer one; a write error (a full
/// disk) the inner one, the block still read to its end.
fn copy_payload(
    h: &crate::formats::warc::WarcHeader,
    block: &mut dyn Read,
    to: &mut File,
    limit: Option<u64>,
) -> io::Result<io::Result<Copied>> {
    let mut head = Vec::new();
    (&mut *block).take(MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut head)?;
    let at = (payload::payload_start_of(h, &head).offset() as usize).min(head.len());
    let (mut sha, mut len) = (Sha1::new(), 0u64);
    let mut w = io::BufWriter::with_capacity(PAYLOAD_CHUNK, to);
    let mut written = Ok(());
    let mut put = |bytes: &[u8]| {
        sha.update(bytes);
        len += bytes.len() as u64;
        // A payload longer than the revisit states is not the one stated: it is hashed and
        // counted for the message, but the temporary file never holds more than stated.
        if written.is_ok() && limit.is_none_or(|l| len <= l) {
            written = w.write_all(bytes);
        }
    };
    put(&head[at..]);
    let mut buf = vec![0u8; PAYLOAD_CHUNK];
    loop {
        let n = block.read(&mut buf)?;
        if n == 0 {
            break;
        }
        put(&buf[..n]);
    }
    let written = written.and_then(|()| w.flush());
    Ok(written.map(|()| Copied { len, sha1: sha.finalize().into() }))
}

/// Restores the containers of `pkg` into `out` (made; each under its own name); returns
/// their paths and the number of revisits restored.
pub fn restore(
    pkg: &Path,
    with: &[PathBuf],
    out: &Path,
) -> Result<(Vec<PathBuf>, u64), UndedupError> {
    for input in with.iter().map(PathBuf::as_path).chain([pkg]) {
        layout::refuse_nesting(input, out)?;
    }
    std::fs::create_dir_all(out).map_err(io_at(out))?;
    // Revisits within the package (`--dedup-within`) refer to its own records.
    let mut sources = with.to_vec();
    sources.push(pkg.to_path_buf());
    let mut originals = Originals::new(&sources, Some(out.to_path_buf()))?;
    let mut written = Vec::new();
    let mut restored = 0;
    for c in containers(pkg)? {
        let name = Path::new(&c.rel).file_name().map(PathBuf::from).unwrap_or_default();
        let dest = out.join(&name);
        restored += restore_container(&c, &dest, &mut originals)?;
        written.push(dest);
    }
    Ok((written, restored))
}

/// True for a revisit deduplication wrote (`identical-payload-digest`, a record referred to).
fn is_ours(h: &crate::formats::warc::WarcHeader) -> bool {
    h.get("WARC-Profile").is_some_and(|p| p.ends_with("identical-payload-digest"))
        && h.get("WARC-Refers-To").is_some()
}

fn restore_container(
    c: &Container,
    dest: &Path,
    originals: &mut Originals,
) -> Result<u64, UndedupError> {
    let input = c.open()?;
    let path = c.path();
    let mut w = io::BufWriter::new(File::create(dest).map_err(io_at(dest))?);
    let mut r = WarcReader::new(c.open()?, path.display().to_string())?;
    let gzip = r.is_gzip();
    let (mut copied, mut restored) = (0u64, 0u64);
    let container = path.display().to_string();
    while let Some((head, end, http)) = r.next_record(|head, b| {
        let mut v = Vec::new();
        if head.header.warc_type() == Some("revisit") {
            b.read_to_end(&mut v)?;
        } else {
            io::copy(b, &mut io::sink())?;
        }
        Ok(v)
    })? {
        let h = &head.header;
        if !is_ours(h) {
            continue;
        }
        let stated = StatedPayload {
            refers: h.get("WARC-Refers-To").unwrap_or(""),
            digest: h.get("WARC-Payload-Digest").unwrap_or(""),
            len: None,
            package: h.get(crate::formats::warc::header::FIELD_REFERS_TO_PACKAGE),
            container: h.get("WARC-Refers-To-Container"),
            from: Some(&path),
        };
        let record = h.record_id().unwrap_or("");
        let revisit = Revisit { container: &container, offset: head.offset, record };
        let mut payload = originals.verified_payload(&stated).map_err(|f| match f {
            PayloadFault::Missing => UndedupError::Missing(Box::new(revisit.missing(&stated))),
            PayloadFault::Differs(others) => {
                UndedupError::Digest(Box::new(revisit.other_payload(&stated, others)))
            }
            PayloadFault::Failed(e) => e,
        })?;
        copy_range(&input, &path, &mut w, copied, head.offset)?;
        write_response(&mut w, h, &http, &mut payload, gzip, dest)?;
        copied = end.end;
        restored += 1;
    }
    let size = input.metadata().map_err(io_at(&path))?.len();
    copy_range(&input, &path, &mut w, copied, size)?;
    w.into_inner().map_err(|e| io_at(dest)(e.into_error()))?.sync_all().map_err(io_at(dest))?;
    Ok(restored)
}

/// A revisit whose payload is looked for: where it is, for the messages.
pub(crate) struct Revisit<'a> {
    /// Its container.
    pub(crate) container: &'a str,
    /// Its offset there.
    pub(crate) offset: u64,
    /// Its `WARC-Record-ID`.
    pub(crate) record: &'a str,
}

impl Revisit<'_> {
    /// No package given holds the record it refers to.
    pub(crate) fn missing(&self, stated: &StatedPayload) -> MissingOriginal {
        MissingOriginal {
            container: self.container.to_string(),
            offset: self.offset,
            record: self.record.to_string(),
            refers: match stated.refers {
                "" => "no record (no WARC-Refers-To)".into(),
                r => r.to_string(),
            },
            package: stated.package.map(str::to_string),
        }
    }

    /// Every record it refers to holds another payload (`others`, at least one).
    pub(crate) fn other_payload(
        &self,
        stated: &StatedPayload,
        mut others: Vec<OtherHolder>,
    ) -> OtherPayload {
        let first = match others.is_empty() {
            true => OtherHolder {
                holder: PathBuf::new(),
                package: PathBuf::new(),
                found: String::new(),
                found_len: 0,
            },
            false => others.remove(0),
        };
        let stated_text = match stated.len {
            Some(len) => format!("{} ({len} bytes)", stated.digest),
            None => stated.digest.to_string(),
        };
        OtherPayload {
            container: self.container.to_string(),
            offset: self.offset,
            record: self.record.to_string(),
            refers: stated.refers.to_string(),
            stated: stated_text,
            found: format!("{} ({} bytes)", first.found, first.found_len),
            holder: first.holder,
            package: first.package,
            others: others
                .iter()
                .map(|o| format!("{} ({} ({} bytes))", o.holder.display(), o.found, o.found_len))
                .collect(),
        }
    }
}

/// Copies the bytes `[from, to)` of `input` to `w`.
fn copy_range(
    input: &File,
    path: &Path,
    w: &mut impl Write,
    from: u64,
    to: u64,
) -> Result<(), UndedupError> {
    let mut at = from;
    let mut buf = vec![0u8; 1 << 20];
    while at < to {
        let n = ((to - at) as usize).min(buf.len());
        input.read_exact_at(&mut buf[..n], at).map_err(io_at(path))?;
        w.write_all(&buf[..n]).map_err(io_at(path))?;
        at += n as u64;
    }
    Ok(())
}

/// Writes the response record of the revisit `h` to `w` (a gzip member of its own when
/// `gzip`): its block the revisit's `http` header then `payload`, streamed.
fn write_response(
    w: &mut impl Write,
    h: &crate::formats::warc::WarcHeader,
    http: &[u8],
    payload: &mut VerifiedPayload,
    gzip: bool,
    dest: &Path,
) -> Result<(), UndedupError> {
    let mut block_sha1 = Sha1::new();
    block_sha1.update(http);
    while let Some(chunk) = payload.next_chunk()? {
        block_sha1.update(&chunk);
    }
    payload.rewind()?;
    let head = response_head(h, &block_sha1.finalize(), http.len() as u64 + payload.len);
    let mut record = |w: &mut dyn Write| -> Result<(), UndedupError> {
        w.write_all(head.as_bytes()).map_err(io_at(dest))?;
        w.write_all(http).map_err(io_at(dest))?;
        while let Some(chunk) = payload.next_chunk()? {
            w.write_all(&chunk).map_err(io_at(dest))?;
        }
        w.write_all(crate::formats::warc::writer::RECORD_END).map_err(io_at(dest))
    };
    if !gzip {
        return record(w);
    }
    let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::new(6));
    record(&mut gz)?;
    gz.finish().map(drop).map_err(io_at(dest))
}

/// The header of the response record of a revisit whose full block has this SHA-1 and
/// length: the revisit's fields but those deduplication added or the block decides.
fn response_head(h: &crate::formats::warc::WarcHeader, block_sha1: &[u8], len: u64) -> String {
    let mut out = String::from("WARC/1.1\r\n");
    for (name, value) in h.fields() {
        let n = name.to_ascii_lowercase();
        let added = n == "warc-profile"
            || n.starts_with("warc-refers-to")
            || n == crate::formats::warc::header::FIELD_REFERS_TO_PACKAGE.to_ascii_lowercase();
        if added || n == "content-length" || n == "warc-block-digest" {
            continue;
        }
        let value = if n == "warc-type" { "response" } else { value.as_str() };
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("WARC-Block-Digest: {}\r\n", sha1_base32(block_sha1)));
    out.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::digest::sha1_base32;
    use crate::formats::warc::writer::{RecordSpec, uncompressed_record};
    use sha1::Digest;

    /// A package of `n` containers, each one response record; their ids and payloads.
    fn package_of(dir: &Path, n: usize) -> Vec<(String, Vec<u8>)> {
        package_saying(dir, n, "payload")
    }

    /// [`package_of`], each payload `WORD i`.
    fn package_saying(dir: &Path, n: usize, word: &str) -> Vec<(String, Vec<u8>)> {
        std::fs::create_dir_all(dir.join("content")).unwrap();
        (0..n)
            .map(|i| {
                let payload = format!("{word} {i}").into_bytes();
                let block =
                    [b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n".as_slice(), &payload]
                        .concat();
                let id = format!("<urn:uuid:00000000-0000-4000-8000-{i:012}>");
                let spec = RecordSpec {
                    warc_type: "response".into(),
                    record_id: id.clone(),
                    date: "2026-11-29T20:00:00Z".into(),
                    target_uri: Some(format!("http://example.org/{i}")),
                    content_type: Some("application/http; msgtype=response".into()),
                    payload_digest: true,
                    ..RecordSpec::default()
                };
                let name = dir.join(format!("content/c{i:03}.warc"));
                std::fs::write(name, uncompressed_record(&spec, &block)).unwrap();
                (id, payload)
            })
            .collect()
    }

    /// A stored payload longer than the revisit states is never copied beyond the stated
    /// length (a hostile reference to a huge record cannot fill the temporary folder), and is
    /// reported with its true length.
    #[test]
    fn copies_no_more_than_the_stated_length() {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = tmp.path().join("pkg");
        let (id, payload) = package_of(&pkg, 1).remove(0);
        let container = pkg.join("content/c000.warc");
        let file = File::open(&container).unwrap();
        let mut to = tempfile::tempfile().unwrap();
        let range = FileRange::new(&file, 0, u64::MAX);
        let mut r = WarcReader::new(range, container.display().to_string()).unwrap();
        let copied =
            r.next_record(|head, block| copy_payload(&head.header, block, &mut to, Some(4)));
        let copied = copied.unwrap().unwrap().2.unwrap();
        assert_eq!(copied.len, payload.len() as u64, "the true length is counted");
        assert_eq!(to.metadata().unwrap().len(), 0, "nothing past the stated length is kept");
        let digest = sha1_base32(&sha1::Sha1::digest(&payload));
        let stated = StatedPayload {
            refers: &id,
            digest: &digest,
            len: Some(4),
            package: None,
            container: None,
            from: None,
        };
        let mut originals = Originals::new(&[pkg], Some(tmp.path().to_path_buf())).unwrap();
        assert!(matches!(
            originals.verified_payload(&stated),
            Err(PayloadFault::Differs(o)) if o[0].found_len == payload.len() as u64
        ));
    }

    #[test]
    fn keeps_a_bounded_number_of_containers_open() {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = tmp.path().join("pkg");
        let records = package_of(&pkg, OPEN_CONTAINERS + 6);
        let mut originals = Originals::new(&[pkg], Some(tmp.path().to_path_buf())).unwrap();
        for (id, payload) in &records {
            let digest = sha1_base32(&sha1::Sha1::digest(payload));
            let stated = StatedPayload {
                refers: id,
                digest: &digest,
                len: Some(payload.len() as u64),
                package: None,
                container: None,
                from: None,
            };
            let mut got =
                originals.verified_payload(&stated).unwrap_or_else(|e| panic!("{id}: {e:?}"));
            assert_eq!(got.next_chunk().unwrap().unwrap(), *payload);
        }
        let open = originals.searched.iter().filter(|s| s.file.is_some()).count();
        assert_eq!(open, originals.open_cap, "containers left open");
        assert!(originals.open_cap <= OPEN_CONTAINERS);
        assert!(originals.searched.iter().all(|s| s.read), "each container read once");
    }

    /// What a revisit states of the payload `(id, payload)`, in the container `from`.
    fn stated<'a>(
        id: &'a str,
        digest: &'a str,
        len: usize,
        from: Option<&'a Path>,
    ) -> StatedPayload<'a> {
        StatedPayload {
            refers: id,
            digest,
            len: Some(len as u64),
            package: None,
            container: None,
            from,
        }
    }

    /// A record id held by two sources, the first holding another payload under it (a copy
    /// of the package damaged, or a record id reused): the payload comes from the one that
    /// holds it, whichever source is given first, and only when none does is it `Differs`,
    /// naming each.
    #[test]
    fn every_record_of_an_id_is_tried_in_any_order_of_the_sources() {
        let tmp = tempfile::tempdir().unwrap();
        let (good, bad) = (tmp.path().join("good"), tmp.path().join("bad"));
        let records = package_of(&good, 2);
        package_saying(&bad, 2, "damaged");
        for sources in [[&bad, &good], [&good, &bad]] {
            let sources = sources.map(|p| p.to_path_buf());
            let mut originals = Originals::new(&sources, Some(tmp.path().to_path_buf())).unwrap();
            for (id, payload) in &records {
                let digest = sha1_base32(&sha1::Sha1::digest(payload));
                let got = originals.verified_payload(&stated(id, &digest, payload.len(), None));
                let mut got = got.unwrap_or_else(|e| panic!("{sources:?} {id}: {e:?}"));
                assert_eq!(got.next_chunk().unwrap().unwrap(), *payload, "{sources:?}");
            }
        }
        let sources = [bad.clone(), bad.join("content/c000.warc")];
        let mut originals = Originals::new(&sources, Some(tmp.path().to_path_buf())).unwrap();
        let (id, payload) = &records[0];
        let digest = sha1_base32(&sha1::Sha1::digest(payload));
        match originals.verified_payload(&stated(id, &digest, payload.len(), None)) {
            Err(PayloadFault::Differs(others)) => assert_eq!(others.len(), 2, "{others:?}"),
            other => panic!("{:?}", other.map(|p| p.len)),
        }
    }

    /// A revisit that names no package (`--dedup-within`) is looked for in the package (or the
    /// WARC file given alone) holding it first: the containers of another source given before
    /// it are not read.
    #[test]
    fn a_revisit_naming_no_package_is_looked_for_at_home_first() {
        let tmp = tempfile::tempdir().unwrap();
        let (other, home) = (tmp.path().join("other"), tmp.path().join("home"));
        package_saying(&other, 3, "unrelated");
        let records = package_of(&home, 2);
        let from = home.join("content/c001.warc");
        let (id, payload) = &records[0];
        let digest = sha1_base32(&sha1::Sha1::digest(payload));
        for home_source in [home.clone(), home.join("content/c000.warc")] {
            let sources = [other.clone(), home_source.clone()];
            let mut originals = Originals::new(&sources, Some(tmp.path().to_path_buf())).unwrap();
            let from = match home_source.is_dir() {
                true => from.clone(),
                false => home_source.clone(),
            };
            let got = originals.verified_payload(&stated(id, &digest, payload.len(), Some(&from)));
            let mut got = got.unwrap_or_else(|e| panic!("{home_source:?}: {e:?}"));
            assert_eq!(got.next_chunk().unwrap().unwrap(), *payload);
            let read: Vec<&str> = (originals.searched.iter().filter(|s| s.read))
                .map(|s| s.container.rel.as_str())
                .collect();
            assert_eq!(
                read,
                ["content/c000.warc"].map(|r| match home_source.is_dir() {
                    true => r,
                    false => "c000.warc",
                }),
                "{home_source:?}"
            );
        }
    }

    /// `n` containers in `dir`, each holding one record of the id `id` with another payload.
    fn same_id_records(dir: &Path, id: &str, n: usize) {
        std::fs::create_dir_all(dir.join("content")).unwrap();
        for i in 0..n {
            let block = format!("HTTP/1.1 200 OK\r\n\r\nanother payload {i}").into_bytes();
            let spec = RecordSpec {
                warc_type: "response".into(),
                record_id: id.into(),
                date: "2026-11-29T20:00:00Z".into(),
                target_uri: Some(format!("http://example.org/{i}")),
                content_type: Some("application/http; msgtype=response".into()),
                payload_digest: true,
                ..RecordSpec::default()
            };
            let name = dir.join(format!("content/s{i:03}.warc"));
            std::fs::write(name, uncompressed_record(&spec, &block)).unwrap();
        }
    }

    /// A source repeating one record id many times, each with another payload: each record
    /// is copied and hashed once in a run, not again for every revisit of that id (the
    /// second revisit is answered with the containers emptied), and the message names a few
    /// holders, then counts the rest.
    #[test]
    fn records_repeating_an_id_are_hashed_once_and_named_a_few() {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = tmp.path().join("pkg");
        let id = "<urn:uuid:00000000-0000-4000-8000-000000000001>";
        same_id_records(&pkg, id, 30);
        let digest = sha1_base32(&sha1::Sha1::digest(b"the payload looked for"));
        let sources = std::slice::from_ref(&pkg);
        let mut originals = Originals::new(sources, Some(tmp.path().to_path_buf())).unwrap();
        let first = originals.verified_payload(&stated(id, &digest, 22, None));
        assert!(matches!(&first, Err(PayloadFault::Differs(o)) if o.len() == 30));
        for e in std::fs::read_dir(pkg.join("content")).unwrap() {
            File::create(e.unwrap().path()).unwrap();
        }
        let others = match originals.verified_payload(&stated(id, &digest, 22, None)) {
            Err(PayloadFault::Differs(o)) => o,
            other => panic!("the places are hashed again: {:?}", other.map(|p| p.len)),
        };
        assert_eq!(others.len(), 30);
        let revisit = Revisit { container: "c.warc.gz", offset: 7, record: "<urn:uuid:r>" };
        let message = revisit.other_payload(&stated(id, &digest, 22, None), others).to_string();
        assert!(message.contains(", and 25 more"), "{message}");
        assert!(message.len() < 2000, "{} bytes: {message}", message.len());
    }

    /// A record of the id holding another payload in one source, and a container of another
    /// source that cannot be read to its end (the payload may be in its unread part), in
    /// either order: the revisit is not checked (the unread container named), never said to
    /// refer to another payload.
    #[test]
    fn an_unread_container_wins_over_another_payload() {
        let tmp = tempfile::tempdir().unwrap();
        let (good, bad, cut) =
            (tmp.path().join("good"), tmp.path().join("bad"), tmp.path().join("cut"));
        let records = package_of(&good, 1);
        package_saying(&bad, 1, "damaged");
        package_saying(&cut, 1, "unrelated");
        let container = cut.join("content/c000.warc");
        let bytes = std::fs::read(&container).unwrap();
        std::fs::write(&container, &bytes[..bytes.len() / 2]).unwrap();
        let (id, payload) = &records[0];
        let digest = sha1_base32(&sha1::Sha1::digest(payload));
        for sources in [[&bad, &cut], [&cut, &bad]] {
            let sources = sources.map(|p| p.to_path_buf());
            let mut originals = Originals::new(&sources, Some(tmp.path().to_path_buf())).unwrap();
            match originals.verified_payload(&stated(id, &digest, payload.len(), None)) {
                Err(PayloadFault::Failed(UndedupError::Unread { container: c, .. })) => {
                    assert_eq!(c, container, "{sources:?}")
                }
                other => panic!("{sources:?}: {:?}", other.map(|p| p.len)),
            }
        }
    }

    /// A revisit referring to another revisit (a hostile or broken package: deduplication
    /// never writes one): that record holds no payload, so the original is missing, not
    /// another payload (nor damage) in the package holding the revisit referred to.
    #[test]
    fn a_revisit_is_no_original() {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = tmp.path().join("pkg");
        std::fs::create_dir_all(pkg.join("content")).unwrap();
        let id = "<urn:uuid:00000000-0000-4000-8000-000000000009>";
        let spec = RecordSpec {
            warc_type: "revisit".into(),
            record_id: id.into(),
            date: "2026-11-29T20:00:00Z".into(),
            target_uri: Some("http://example.org/r".into()),
            content_type: Some("application/http; msgtype=response".into()),
            ..RecordSpec::default()
        };
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
        std::fs::write(pkg.join("content/r.warc"), uncompressed_record(&spec, block)).unwrap();
        let digest = sha1_base32(&sha1::Sha1::digest(b"a payload"));
        let sources = std::slice::from_ref(&pkg);
        let mut originals = Originals::new(sources, Some(tmp.path().to_path_buf())).unwrap();
        match originals.verified_payload(&stated(id, &digest, 9, None)) {
            Err(PayloadFault::Missing) => {}
            other => panic!("{:?}", other.map(|p| p.len)),
        }
    }

    /// A source whose containers cannot be listed (a container that is a link) is passed over
    /// when another source gives the payload, and named when none does.
    #[test]
    fn an_unlistable_source_does_not_stop_the_others() {
        let tmp = tempfile::tempdir().unwrap();
        let (good, linked) = (tmp.path().join("good"), tmp.path().join("linked"));
        let records = package_of(&good, 1);
        std::fs::create_dir_all(linked.join("content")).unwrap();
        std::os::unix::fs::symlink(
            good.join("content/c000.warc"),
            linked.join("content/c000.warc"),
        )
        .unwrap();
        let (id, payload) = &records[0];
        let digest = sha1_base32(&sha1::Sha1::digest(payload));
        for sources in [[&linked, &good], [&good, &linked]] {
            let sources = sources.map(|p| p.to_path_buf());
            let mut originals = Originals::new(&sources, Some(tmp.path().to_path_buf()))
                .unwrap_or_else(|e| panic!("{sources:?}: {e}"));
            let got = originals.verified_payload(&stated(id, &digest, payload.len(), None));
            let mut got = got.unwrap_or_else(|e| panic!("{sources:?}: {e:?}"));
            assert_eq!(got.next_chunk().unwrap().unwrap(), *payload, "{sources:?}");
        }
        let sources = std::slice::from_ref(&linked);
        let mut originals = Originals::new(sources, Some(tmp.path().to_path_buf())).unwrap();
        match originals.verified_payload(&stated(id, &digest, payload.len(), None)) {
            Err(PayloadFault::Failed(e)) => assert!(e.to_string().contains("linked"), "{e}"),
            other => panic!("{:?}", other.map(|p| p.len)),
        }
    }
}
