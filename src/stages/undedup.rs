//! Undoing deduplication: the containers of a package with every revisit written by
//! [`super::dedup`] made a full `response` record again, its payload taken from the original
//! record in one of the packages it refers to (found by its `WARC-Refers-To` record id) and
//! verified against the revisit's `WARC-Payload-Digest` (SHA-1) before it is written.
//!
//! Every other byte of a container is copied as it is; a restored record keeps the revisit's
//! fields but those deduplication added, its HTTP header, and gets the payload back (its
//! `Content-Length` and `WARC-Block-Digest` the full block's). `webaip undedup` packages the
//! restored containers as `package` packages WARC files.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::formats::digest::{BlockHasher, sha1_base32};
use crate::formats::warc::payload;
use crate::formats::warc::{WarcError, WarcReader};
use crate::index::digests::{Algorithm, DigestKey};

/// Why a package could not be restored.
#[derive(Debug, thiserror::Error)]
pub enum UndedupError {
    /// A file could not be read or written.
    #[error("{path}: {why}", why = crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
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

/// Where a record is: its container, and its bytes' range there.
type Place = (PathBuf, u64, u64);

/// The WARC containers (`content/*.warc.gz`, `content/*.warc`) of a package, sorted.
fn containers(pkg: &Path) -> Result<Vec<PathBuf>, UndedupError> {
    let dir = pkg.join(crate::layout::CONTENT_DIR);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(io_at(&dir))?
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|p| p.to_str().is_some_and(|n| n.ends_with(".warc.gz") || n.ends_with(".warc")))
        .collect();
    v.sort();
    Ok(v)
}

/// Every record of the `with` packages' containers by its `WARC-Record-ID`.
fn originals(with: &[PathBuf]) -> Result<HashMap<String, Place>, UndedupError> {
    let mut map = HashMap::new();
    for pkg in with {
        for c in containers(pkg)? {
            let mut r = WarcReader::open(&c)?;
            while let Some((head, end, ())) =
                r.next_record(|_, b| io::copy(b, &mut io::sink()).map(drop))?
            {
                if let Some(id) = head.header.record_id() {
                    map.entry(id.to_string()).or_insert((c.clone(), head.offset, end.end));
                }
            }
        }
    }
    Ok(map)
}

/// The payload of the record at `place` (its block after the HTTP header).
fn payload_at(place: &Place) -> Result<Vec<u8>, UndedupError> {
    let (path, begin, end) = place;
    let file = File::open(path).map_err(io_at(path))?;
    let mut bytes = vec![0u8; (end - begin) as usize];
    file.read_exact_at(&mut bytes, *begin).map_err(io_at(path))?;
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
    std::fs::create_dir_all(out).map_err(io_at(out))?;
    // Revisits within the package (`--dedup-within`) refer to its own records.
    let mut sources = with.to_vec();
    sources.push(pkg.to_path_buf());
    let originals = originals(&sources)?;
    let mut written = Vec::new();
    let mut restored = 0;
    for c in containers(pkg)? {
        let name = c.file_name().map(PathBuf::from).unwrap_or_default();
        let dest = out.join(&name);
        restored += restore_container(&c, &dest, &originals)?;
        written.push(dest);
    }
    Ok((written, restored))
}

fn restore_container(
    c: &Path,
    dest: &Path,
    originals: &HashMap<String, Place>,
) -> Result<u64, UndedupError> {
    let input = File::open(c).map_err(io_at(c))?;
    let mut w = io::BufWriter::new(File::create(dest).map_err(io_at(dest))?);
    let mut r = WarcReader::open(c)?;
    let gzip = r.is_gzip();
    let (mut copied, mut restored) = (0u64, 0u64);
    let container = c.display().to_string();
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
        let place = originals.get(&refers).ok_or_else(|| UndedupError::Missing {
            container: container.clone(),
            record: record.clone(),
            refers: refers.clone(),
        })?;
        let payload = payload_at(place)?;
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
        copy_range(&input, c, &mut w, copied, head.offset)?;
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
    let size = input.metadata().map_err(io_at(c))?.len();
    copy_range(&input, c, &mut w, copied, size)?;
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
            || n == super::dedup::FIELD_REFERS_TO_PACKAGE.to_ascii_lowercase();
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
