//! Undoing deduplication: the containers of a package with every revisit written by
//! [`super::dedup`] made a full `response` record again, its payload taken from the original
//! record in one of the packages it refers to (found by its `WARC-Refers-To` record id) and
//! verified against the revisit's `WARC-Payload-Digest` (SHA-1) before it is written.
//!
//! Every other byte of a container is copied as it is; a restored record keeps the revisit's
//! fields but those deduplication added, its HTTP header, and gets the payload back (its
//! `Content-Length` and `WARC-Block-Digest` the full block's). `webaip undedup` packages the
//! restored containers as `package` packages WARC files.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::formats::digest::{BlockHasher, sha1_base32};
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

/// Where a record is: its container, and its bytes' range there.
pub(crate) struct Place<'a> {
    container: &'a Container,
    begin: u64,
    end: u64,
}

impl Place<'_> {
    /// The container holding it.
    pub(crate) fn path(&self) -> PathBuf {
        self.container.path()
    }
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

/// Every record of the `sources`' containers by its `WARC-Record-ID` (the first of an id
/// wins), in a scratch database on disk.
pub(crate) struct Originals {
    containers: Vec<Container>,
    db: rusqlite::Connection,
}

impl Originals {
    pub(crate) fn read(sources: &[PathBuf]) -> Result<Originals, UndedupError> {
        let db = crate::temporaries::scratch_database(
            ORIGINALS_CACHE_KIB,
            "CREATE TABLE originals (id TEXT PRIMARY KEY, container INTEGER NOT NULL, \
             begin INTEGER NOT NULL, end INTEGER NOT NULL) WITHOUT ROWID;",
        )?;
        let mut containers = Vec::new();
        for pkg in sources {
            containers.extend(self::containers(pkg)?);
        }
        {
            let mut insert = db.prepare(
                "INSERT OR IGNORE INTO originals (id, container, begin, end) VALUES (?, ?, ?, ?)",
            )?;
            for (n, c) in containers.iter().enumerate() {
                let mut r = WarcReader::new(c.open()?, c.path().display().to_string())?;
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
            }
        }
        Ok(Originals { containers, db })
    }

    /// Where the record `id` is, if a source holds it.
    pub(crate) fn find(&self, id: &str) -> Result<Option<Place<'_>>, UndedupError> {
        use rusqlite::OptionalExtension;
        let found = self
            .db
            .prepare_cached("SELECT container, begin, end FROM originals WHERE id = ?")?
            .query_row([id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
            })
            .optional()?;
        Ok(found.and_then(|(n, begin, end)| {
            let container = self.containers.get(usize::try_from(n).ok()?)?;
            Some(Place { container, begin: begin as u64, end: end as u64 })
        }))
    }
}

/// The payload of the record at `place` (its block after the HTTP header).
pub(crate) fn payload_at(place: &Place) -> Result<Vec<u8>, UndedupError> {
    let path = place.container.path();
    let file = place.container.open()?;
    let mut bytes = vec![0u8; (place.end - place.begin) as usize];
    file.read_exact_at(&mut bytes, place.begin).map_err(io_at(&path))?;
    let mut r = WarcReader::new(&bytes[..], path.display().to_string())?;
    let found = r.next_record(|head, block| {
        let mut all = Vec::new();
        block.read_to_end(&mut all)?;
        let at = payload::payload_start_of(&head.header, &all).offset() as usize;
        Ok(all.split_off(at.min(all.len())))
    })?;
    Ok(found.map(|(_, _, p)| p).unwrap_or_default())
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
    let originals = Originals::read(&sources)?;
    let mut written = Vec::new();
    let mut restored = 0;
    for c in containers(pkg)? {
        let name = Path::new(&c.rel).file_name().map(PathBuf::from).unwrap_or_default();
        let dest = out.join(&name);
        restored += restore_container(&c, &dest, &originals)?;
        written.push(dest);
    }
    Ok((written, restored))
}

fn restore_container(
    c: &Container,
    dest: &Path,
    originals: &Originals,
) -> Result<u64, UndedupError> {
    let input = c.open()?;
    let path = c.path();
    let mut w = io::BufWriter::new(File::create(dest).map_err(io_at(dest))?);
    let mut r = WarcReader::new(c.open()?, path.display().to_string())?;
    let gzip = r.is_gzip();
    let (mut copied, mut restored) = (0u64, 0u64);
    let container = path.display().to_string();
    while let Some((head, end, block)) = r.next_record(|head, b| {
        let mut v = Vec::new();
        if head.header.warc_type() == Some("revisit") {
            b.read_to_end(&mut v)?;
        } else {
            io::copy(b, &mut io::sink())?;
        }
        Ok(v)
    })? {
        let h = &head.header;
        let ours = h.get("WARC-Profile").is_some_and(|p| p.ends_with("identical-payload-digest"))
            && h.get("WARC-Refers-To").is_some();
        if !ours {
            continue;
        }
        let record = h.record_id().unwrap_or("").to_string();
        let refers = h.get("WARC-Refers-To").unwrap_or("").to_string();
        let place = originals.find(&refers)?.ok_or_else(|| UndedupError::Missing {
            container: container.clone(),
            record: record.clone(),
            refers: refers.clone(),
        })?;
        let payload = payload_at(&place)?;
        let stated = h.get("WARC-Payload-Digest").unwrap_or("").to_string();
        let d = BlockHasher::digest(&payload, 0);
        let found = DigestKey::new(Algorithm::Sha1, &d.payload_sha1);
        if found.is_none() || DigestKey::parse(&stated) != found {
            return Err(UndedupError::Digest {
                container,
                record,
                stated,
                found: sha1_base32(&d.payload_sha1),
            });
        }
        copy_range(&input, &path, &mut w, copied, head.offset)?;
        let mut full = block;
        full.extend_from_slice(&payload);
        let bytes = response_record(h, &full, block_len_http(&full, payload.len()));
        let member = match gzip {
            true => super::dedup::gzip_member(&bytes, 6).map_err(io_at(dest))?,
            false => bytes,
        };
        w.write_all(&member).map_err(io_at(dest))?;
        copied = end.end;
        restored += 1;
    }
    let size = input.metadata().map_err(io_at(&path))?.len();
    copy_range(&input, &path, &mut w, copied, size)?;
    w.into_inner().map_err(|e| io_at(dest)(e.into_error()))?.sync_all().map_err(io_at(dest))?;
    Ok(restored)
}

/// Where the payload starts in a full block of `payload_len` payload bytes.
fn block_len_http(full: &[u8], payload_len: usize) -> usize {
    full.len() - payload_len
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

/// The response record of a revisit, its block `full` (HTTP header, then payload from
/// `http_len`): the revisit's fields but those deduplication added or the block decides.
fn response_record(h: &crate::formats::warc::WarcHeader, full: &[u8], http_len: usize) -> Vec<u8> {
    let d = BlockHasher::digest(full, http_len as u64);
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
    out.push_str(&format!("WARC-Block-Digest: {}\r\n", sha1_base32(&d.block_sha1)));
    out.push_str(&format!("Content-Length: {}\r\n\r\n", full.len()));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(full);
    bytes.extend_from_slice(crate::formats::warc::writer::RECORD_END);
    bytes
}
