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
    /// A revisit names no record id, or one no `--with` package holds.
    #[error("{container}: the revisit {record} refers to {refers}, which no --with package holds")]
    Missing {
        /// The container of the revisit.
        container: String,
        /// The revisit's record id.
        record: String,
        /// What it refers to.
        refers: String,
    },
    /// The original's payload is not what the revisit states.
    #[error("{container}: the revisit {record}: the original's payload is {found}, not {stated}")]
    Digest {
        /// The container of the revisit.
        container: String,
        /// The revisit's record id.
        record: String,
        /// `WARC-Payload-Digest` of the revisit.
        stated: String,
        /// The SHA-1 of the original's payload.
        found: String,
    },
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

/// Containers kept open at once for the payloads read from them: a run over thousands of
/// containers stays far below the process's limit of open files.
const OPEN_CONTAINERS: usize = 64;

/// A container of a source, read (once) when it is first searched.
struct Searched {
    container: Container,
    /// The package's OBJID (`None`: its METS names none).
    objid: Option<String>,
    /// Its records are in the table.
    read: bool,
    /// Open while it is among the [`OPEN_CONTAINERS`] used last.
    file: Option<File>,
}

/// The records of the `sources`' containers by `WARC-Record-ID`, in a scratch database on disk.
/// A container is read (its records' ids and places put in the table) only when a payload is
/// looked for that no container read so far holds, those the revisit names first (its
/// package's, and the container `WARC-Refers-To-Container` names): in a run, each container is
/// opened and read at most once, and those no revisit needs not at all.
pub(crate) struct Originals {
    searched: Vec<Searched>,
    /// The containers holding an open file, the one used longest ago first.
    open: std::collections::VecDeque<usize>,
    db: rusqlite::Connection,
    /// Where stored payloads are copied to (`None`: the system's temporary folder).
    scratch: Option<PathBuf>,
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
}

/// Why [`Originals::verified_payload`] gives no payload.
#[derive(Debug)]
pub(crate) enum PayloadFault {
    /// No source holds the record.
    Missing,
    /// The record holds another payload: in `holder` (a container), with this digest and
    /// length.
    Differs {
        /// The container holding the record.
        holder: PathBuf,
        /// The package holding that container.
        package: PathBuf,
        /// The SHA-1 of its payload (`sha1:BASE32`).
        found: String,
        /// Its length.
        found_len: u64,
    },
    /// Reading or copying failed.
    Failed(UndedupError),
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
    /// The records of the packages `sources`; stored payloads are copied under `scratch`
    /// (`None`: the system's temporary folder).
    pub(crate) fn new(
        sources: &[PathBuf],
        scratch: Option<PathBuf>,
    ) -> Result<Originals, UndedupError> {
        let db = crate::temporaries::scratch_database(
            ORIGINALS_CACHE_KIB,
            "CREATE TABLE originals (id TEXT PRIMARY KEY, container INTEGER NOT NULL, \
             begin INTEGER NOT NULL, end INTEGER NOT NULL) WITHOUT ROWID;",
        )?;
        let mut searched = Vec::new();
        for pkg in sources {
            let objid = crate::index::digests::package_objid(pkg).ok();
            for container in containers(pkg)? {
                searched.push(Searched {
                    container,
                    objid: objid.clone(),
                    read: false,
                    file: None,
                });
            }
        }
        Ok(Originals { searched, open: Default::default(), db, scratch })
    }

    /// Where the record `stated.refers` is, if a source holds it: looked up, then looked
    /// for in the containers not read yet, those `stated` names first.
    fn find(&mut self, stated: &StatedPayload) -> Result<Option<Place>, UndedupError> {
        if let Some(place) = self.look_up(stated.refers)? {
            return Ok(Some(place));
        }
        for n in self.search_order(stated) {
            self.read_container(n)?;
            if let Some(place) = self.look_up(stated.refers)? {
                return Ok(Some(place));
            }
        }
        Ok(None)
    }

    /// The containers not read yet: those of the package `stated` names (the container it
    /// names first), then the others, in the sources' order.
    fn search_order(&self, stated: &StatedPayload) -> Vec<usize> {
        let named = stated.container.map(|c| c.strip_prefix("file://").unwrap_or(c));
        let rank = |s: &Searched| {
            let ours = stated.package.is_some() && s.objid.as_deref() == stated.package;
            let name = Path::new(&s.container.rel).file_name().and_then(|n| n.to_str());
            match (ours, named.is_some() && name == named) {
                (true, true) => 0,
                (true, false) => 1,
                _ => 2,
            }
        };
        let mut order: Vec<usize> =
            (0..self.searched.len()).filter(|&n| !self.searched[n].read).collect();
        order.sort_by_key(|&n| rank(&self.searched[n]));
        order
    }

    fn look_up(&self, id: &str) -> Result<Option<Place>, UndedupError> {
        use rusqlite::OptionalExtension;
        let found = self
            .db
            .prepare_cached("SELECT container, begin, end FROM originals WHERE id = ?")?
            .query_row([id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
            })
            .optional()?;
        Ok(found.and_then(|(n, begin, end)| {
            Some(Place {
                container: usize::try_from(n).ok()?,
                begin: begin as u64,
                end: end as u64,
            })
        }))
    }

    /// The container `n`, open: kept open for the payloads read from it, among the
    /// [`OPEN_CONTAINERS`] used last (the one used longest ago is closed).
    fn opened(&mut self, n: usize) -> Result<&File, UndedupError> {
        self.open.retain(|&m| m != n);
        self.open.push_back(n);
        if self.open.len() > OPEN_CONTAINERS
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

    /// Puts the id and place of each record of the container `n` in the table (the first of
    /// an id wins).
    fn read_container(&mut self, n: usize) -> Result<(), UndedupError> {
        let file = self
            .opened(n)?
            .try_clone()
            .map_err(|e| io_at(&self.searched[n].container.path())(e))?;
        let s = &mut self.searched[n];
        let name = s.container.path().display().to_string();
        let mut insert = self.db.prepare_cached(
            "INSERT OR IGNORE INTO originals (id, container, begin, end) VALUES (?, ?, ?, ?)",
        )?;
        let mut r = WarcReader::new(FileRange::new(&file, 0, u64::MAX), name)?;
        while let Some((head, end, ())) =
            r.next_record(|_, b| io::copy(b, &mut io::sink()).map(drop))?
        {
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
        s.read = true;
        Ok(())
    }

    /// The payload `stated` leaves out, copied from the record it refers to into a temporary
    /// file while its SHA-1 and length are checked against what `stated` says: nothing of a
    /// payload that is not the one stated is given, and no more than a chunk of it is in
    /// memory.
    pub(crate) fn verified_payload(
        &mut self,
        stated: &StatedPayload,
    ) -> Result<VerifiedPayload, PayloadFault> {
        let Some(place) = self.find(stated)? else { return Err(PayloadFault::Missing) };
        let s = self.searched.get(place.container).ok_or(PayloadFault::Missing)?;
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
            None => return Err(PayloadFault::Missing),
        };
        let found = DigestKey::new(Algorithm::Sha1, &copied.sha1);
        let same_len = stated.len.is_none_or(|n| n == copied.len);
        if found.is_none() || found != DigestKey::parse(stated.digest) || !same_len {
            let found = sha1_base32(&copied.sha1);
            return Err(PayloadFault::Differs { holder, package, found, found_len: copied.len });
        }
        let mut payload = VerifiedPayload { file: copy, len: copied.len, scratch };
        payload.rewind()?;
        Ok(payload)
    }
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
        let record = h.record_id().unwrap_or("").to_string();
        let refers = h.get("WARC-Refers-To").unwrap_or("");
        let digest = h.get("WARC-Payload-Digest").unwrap_or("");
        let stated = StatedPayload {
            refers,
            digest,
            len: None,
            package: h.get(crate::formats::warc::header::FIELD_REFERS_TO_PACKAGE),
            container: h.get("WARC-Refers-To-Container"),
        };
        let mut payload = originals.verified_payload(&stated).map_err(|f| match f {
            PayloadFault::Missing => UndedupError::Missing {
                container: container.clone(),
                record: record.clone(),
                refers: refers.to_string(),
            },
            PayloadFault::Differs { found, .. } => UndedupError::Digest {
                container: container.clone(),
                record: record.clone(),
                stated: digest.to_string(),
                found,
            },
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
        std::fs::create_dir_all(dir.join("content")).unwrap();
        (0..n)
            .map(|i| {
                let payload = format!("payload {i}").into_bytes();
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
        };
        let mut originals = Originals::new(&[pkg], Some(tmp.path().to_path_buf())).unwrap();
        assert!(matches!(
            originals.verified_payload(&stated),
            Err(PayloadFault::Differs { found_len, .. }) if found_len == payload.len() as u64
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
            };
            let mut got =
                originals.verified_payload(&stated).unwrap_or_else(|e| panic!("{id}: {e:?}"));
            assert_eq!(got.next_chunk().unwrap().unwrap(), *payload);
        }
        let open = originals.searched.iter().filter(|s| s.file.is_some()).count();
        assert_eq!(open, OPEN_CONTAINERS, "containers left open");
        assert!(originals.searched.iter().all(|s| s.read), "each container read once");
    }
}
