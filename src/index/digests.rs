//! The payloads already stored, by digest: what deduplication looks a capture's payload up in.
//!
//! A [`DigestTable`] is a file of its own: entries sorted by digest, each with the payload's
//! length (when known) and where the payload is stored ([`StoredPayload`]: URL, date, record
//! id, container, offset), then a sparse index holding every [`STEP`]th key and its entry's
//! offset. Opening a table reads the sparse index only (about 1/`STEP` of the keys: 6 MB for
//! 10 million digests); a look-up finds its block in it by binary search and reads that one
//! block (at most `STEP` entries) with one positioned read. Nothing grows with the table but
//! the sparse index.
//!
//! [`TableBuilder`] makes a table from CDXJ index lines ([`TableBuilder::add_cdxj`]) or from the
//! containers of an earlier package ([`TableBuilder::add_package`]) by external sort: entries
//! are collected up to a memory budget, sorted and written as a run, and the runs are merged
//! into the table (`crate::external_sort`). Where one digest is stored more than once, one
//! that names its package and record id (a package's record, which an ARC record's revisit
//! can be made of) is kept before one that does not (an index line), then the earliest
//! capture, then the first by what the entry states (so the order of the sources does not
//! decide): revisits refer to the first time the payload was stored in a package. Revisit
//! records and digests webaip cannot decode are not entries (they hold no payload, or cannot
//! be compared).
//!
//! A digest is its algorithm and its bytes: `sha1:` with base32 (as WARC headers write it) or
//! hex, `sha256:` likewise; a digest without a label of 32 base32 characters is SHA-1 (the
//! classic CDX). Two digests match only when algorithm and bytes are equal, and a look-up
//! that knows the payload's length matches only an entry of the same length or of unknown
//! length (an index line does not state it; a package's entries do).

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cdxj::IndexEntry;

/// Every this many entries, the sparse index holds the key and offset of one.
pub const STEP: u64 = 64;

/// The table's first bytes.
const MAGIC: &[u8; 16] = b"WEBAIP-DIGESTS2\n";
/// The first bytes of a table an earlier webaip made: it may keep an index line where a
/// package's record of the same digest is stored too, so that no ARC record becomes a
/// revisit against it (nothing says so). It is refused, naming what to do.
const EARLIER_MAGIC: &[u8; 16] = b"WEBAIP-DIGESTS1\n";
/// Its last bytes (after the footer's numbers).
const END_MAGIC: &[u8; 8] = b"WDTEND01";
/// Footer: sparse index offset, sparse entries, entries, step (4 x u64), then [`END_MAGIC`].
const FOOTER_LEN: u64 = 4 * 8 + 8;
/// Bytes of a key: the algorithm, then the digest, zero-padded.
pub const KEY_LEN: usize = 33;
/// A payload length no source stated.
const UNKNOWN_LEN: u64 = u64::MAX;

/// A digest's algorithm, as a key's first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Algorithm {
    /// SHA-1 (20 bytes).
    Sha1 = 1,
    /// SHA-256 (32 bytes).
    Sha256 = 2,
}

/// A digest as the table compares it: algorithm and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DigestKey(pub [u8; KEY_LEN]);

impl DigestKey {
    /// The key of `bytes` under `algorithm`.
    pub fn new(algorithm: Algorithm, bytes: &[u8]) -> Option<DigestKey> {
        let want = match algorithm {
            Algorithm::Sha1 => 20,
            Algorithm::Sha256 => 32,
        };
        if bytes.len() != want {
            return None;
        }
        let mut k = [0u8; KEY_LEN];
        k[0] = algorithm as u8;
        k[1..1 + want].copy_from_slice(bytes);
        Some(DigestKey(k))
    }

    /// Parses a digest as WARC headers and indexes state it (`sha1:BASE32`, `sha1:hex`,
    /// `sha256:...`, or 32 base32 characters without a label, SHA-1); `None` for any other
    /// algorithm or a value that does not decode to the algorithm's length.
    pub fn parse(stated: &str) -> Option<DigestKey> {
        let stated = stated.trim();
        let (algorithm, value) = match stated.split_once(':') {
            Some((label, value)) => match label.to_ascii_lowercase().as_str() {
                "sha1" | "sha-1" => (Algorithm::Sha1, value),
                "sha256" | "sha-256" => (Algorithm::Sha256, value),
                _ => return None,
            },
            None if stated.len() == 32 => (Algorithm::Sha1, stated),
            None => return None,
        };
        let upper = value.trim().to_ascii_uppercase();
        let bytes = data_encoding::BASE32
            .decode(upper.as_bytes())
            .or_else(|_| data_encoding::HEXUPPER.decode(upper.as_bytes()))
            .ok()?;
        DigestKey::new(algorithm, &bytes)
    }

    /// The digest's value in lower-case hex.
    pub fn hex_value(&self) -> String {
        let len = if self.0[0] == 2 { 32 } else { 20 };
        crate::formats::digest::hex(&self.0[1..=len])
    }

    /// The digest as a WARC header states it (`sha1:BASE32`).
    pub fn to_warc(&self) -> String {
        match self.0[0] {
            2 => format!("sha256:{}", data_encoding::BASE32.encode(&self.0[1..33])),
            _ => format!("sha1:{}", data_encoding::BASE32.encode(&self.0[1..21])),
        }
    }
}

/// Where a stored payload is: what a revisit record refers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StoredPayload {
    /// The original record's `WARC-Target-URI`.
    pub url: String,
    /// Its `WARC-Date` (`YYYY-MM-DDThh:mm:ssZ`, or as the record states it).
    pub date: String,
    /// Its `WARC-Record-ID`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_id: Option<String>,
    /// The container holding it: its path inside the package, or the index's `filename`.
    pub container: String,
    /// The record's offset in the container.
    pub offset: u64,
    /// The record's length in the container (its gzip member, when compressed).
    pub length: u64,
    /// The package holding the container, by its OBJID, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// The payload's offset in the decompressed record, when known (a package's full listing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_offset: Option<u64>,
}

impl StoredPayload {
    /// It names its package and record id: a revisit can name it whole (what an ARC record's
    /// revisit needs to come back).
    pub fn names_its_record(&self) -> bool {
        self.package.is_some() && self.record_id.is_some()
    }
}

/// The 14 digits of a stored payload's date (ordering only).
fn when_of(stored: &StoredPayload) -> String {
    stored.date.chars().filter(char::is_ascii_digit).take(14).collect()
}

/// A match: the stored payload, and its length when the source stated it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where it is.
    pub stored: StoredPayload,
    /// Its length, when known.
    pub payload_len: Option<u64>,
}

/// Why a table could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum DigestTableError {
    /// The table would be a source, or inside a source package.
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
    /// A file could not be read or written.
    #[error("{path}: {why}", why = crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The file is not a digest table, or is cut short.
    #[error("{0}: not a webaip digest table (or cut short)")]
    NotATable(PathBuf),
    /// The table was made by an earlier webaip.
    #[error(
        "{0}: a digest table made by an earlier webaip (it may leave ARC records whole that \
         could be revisits): make it again with webaip dedup-table"
    )]
    Earlier(PathBuf),
    /// A line of an index is not a CDXJ line.
    #[error("{path}, line {line}: {source}")]
    Line {
        /// The index.
        path: PathBuf,
        /// The line (1-based).
        line: u64,
        /// What is wrong with it.
        #[source]
        source: super::cdxj::CdxjLineError,
    },
    /// A package's container could not be read.
    #[error(transparent)]
    Warc(#[from] crate::formats::warc::WarcError),
    /// A file named by a package is not a regular file reached without links, or is absent.
    #[error(transparent)]
    Refused(#[from] crate::layout::ConfineError),
    /// A folder is no package (no METS with an OBJID).
    #[error("{0}: not a package (no METS.xml with an OBJID)")]
    NotAPackage(PathBuf),
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> DigestTableError + '_ {
    move |source| DigestTableError::Io { path: path.to_path_buf(), source }
}

/// True when `path` is a digest table (by its first bytes; one an earlier webaip made too).
pub fn is_table(path: &Path) -> bool {
    table_magic(path).is_some_and(|head| &head == MAGIC || &head == EARLIER_MAGIC)
}

/// The first bytes of the file at `path`, as a table's magic is read.
fn table_magic(path: &Path) -> Option<[u8; 16]> {
    let mut head = [0u8; 16];
    let mut f = crate::layout::open_user_file(path).ok()?;
    f.read_exact(&mut head).ok().map(|()| head)
}

/// One entry: its key, and the rest as stored (length, date for ordering, serialized place).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: DigestKey,
    /// The stored payload names its package and record id (ordering only: such an entry
    /// wins over one that does not).
    named: bool,
    /// 14-digit date (ordering only: the earliest wins).
    when: String,
    /// Order added (ties).
    seq: u64,
    payload_len: u64,
    stored: Vec<u8>,
}

impl Entry {
    fn order(&self, other: &Self) -> Ordering {
        (self.key, !self.named, &self.when, &self.stored, self.seq).cmp(&(
            other.key,
            !other.named,
            &other.when,
            &other.stored,
            other.seq,
        ))
    }

    /// Run format: key, named (one byte), seq, when (len u8 + bytes), payload_len, stored
    /// (len u32 + bytes).
    fn write_run(&self, w: &mut (impl Write + ?Sized)) -> io::Result<()> {
        w.write_all(&self.key.0)?;
        w.write_all(&[u8::from(self.named)])?;
        w.write_all(&self.seq.to_le_bytes())?;
        w.write_all(&[self.when.len().min(255) as u8])?;
        w.write_all(&self.when.as_bytes()[..self.when.len().min(255)])?;
        w.write_all(&self.payload_len.to_le_bytes())?;
        w.write_all(&(self.stored.len() as u32).to_le_bytes())?;
        w.write_all(&self.stored)
    }

    fn read_run(r: &mut (impl Read + ?Sized)) -> io::Result<Option<Entry>> {
        let mut key = [0u8; KEY_LEN];
        match r.read_exact(&mut key) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            r => r?,
        }
        let mut named = [0u8; 1];
        r.read_exact(&mut named)?;
        let seq = read_u64(r)?;
        let mut n = [0u8; 1];
        r.read_exact(&mut n)?;
        let mut when = vec![0u8; n[0] as usize];
        r.read_exact(&mut when)?;
        let payload_len = read_u64(r)?;
        let mut len = [0u8; 4];
        r.read_exact(&mut len)?;
        let mut stored = vec![0u8; u32::from_le_bytes(len) as usize];
        r.read_exact(&mut stored)?;
        let when = String::from_utf8_lossy(&when).into_owned();
        let named = named[0] != 0;
        Ok(Some(Entry { key: DigestKey(key), named, when, seq, payload_len, stored }))
    }

    /// Table format: key, payload_len, stored (len u32 + bytes).
    fn write_table(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&self.key.0)?;
        w.write_all(&self.payload_len.to_le_bytes())?;
        w.write_all(&(self.stored.len() as u32).to_le_bytes())?;
        w.write_all(&self.stored)
    }

    fn table_len(&self) -> u64 {
        (KEY_LEN + 8 + 4 + self.stored.len()) as u64
    }
}

/// Entries as a run holds them ([`Entry::write_run`]).
#[derive(Debug)]
struct EntryRun;

impl crate::external_sort::RunFormat for EntryRun {
    type Item = Entry;

    fn write(&self, e: &Entry, w: &mut dyn Write) -> io::Result<()> {
        e.write_run(w)
    }

    fn read(&self, r: &mut dyn BufRead) -> io::Result<Option<Entry>> {
        Entry::read_run(r)
    }
}

/// Bytes of each run's read and write buffer.
const RUN_BUFFER: usize = 256 << 10;

/// What the runs are named in errors (anonymous temporary files).
const RUN_NAME: &str = "(a temporary run of the digest sort)";

fn read_u64(r: &mut (impl Read + ?Sized)) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Bytes the allocator adds to each heap block (header and rounding), for the budget.
const ALLOC_OVERHEAD: usize = 24;

/// Makes a table by external sort (module comment).
pub struct TableBuilder {
    runs: crate::external_sort::Runs<EntryRun>,
    pending: Vec<Entry>,
    pending_bytes: usize,
    budget: usize,
    seq: u64,
    /// Lines and records skipped: revisits, digests of other algorithms or none.
    pub skipped: u64,
}

impl TableBuilder {
    /// A builder holding at most about `budget` bytes of entries before it writes a run.
    pub fn new(budget: usize) -> Result<TableBuilder, DigestTableError> {
        Ok(TableBuilder {
            runs: crate::external_sort::Runs::new(EntryRun, Entry::order, RUN_BUFFER),
            pending: Vec::new(),
            pending_bytes: 0,
            budget,
            seq: 0,
            skipped: 0,
        })
    }

    /// Adds one stored payload.
    pub fn add(
        &mut self,
        key: DigestKey,
        payload_len: Option<u64>,
        stored: &StoredPayload,
    ) -> Result<(), DigestTableError> {
        let when = when_of(stored);
        let named = stored.names_its_record();
        let mut stored = serde_json::to_vec(stored).unwrap_or_default();
        // serde_json grows its buffer by doubling: hold only the bytes.
        stored.shrink_to_fit();
        // What the entry costs: twice its struct (the vector's growth leaves up to half of its
        // slots empty) and its two heap blocks with the allocator's overhead.
        self.pending_bytes +=
            2 * std::mem::size_of::<Entry>() + stored.len() + when.len() + 2 * ALLOC_OVERHEAD;
        self.pending.push(Entry {
            key,
            named,
            when,
            seq: self.seq,
            payload_len: payload_len.unwrap_or(UNKNOWN_LEN),
            stored,
        });
        self.seq += 1;
        if self.pending_bytes >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<(), DigestTableError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.pending.sort_unstable_by(Entry::order);
        self.runs.spill(&self.pending).map_err(io_at(Path::new(RUN_NAME)))?;
        self.pending.clear();
        self.pending_bytes = 0;
        Ok(())
    }

    /// Adds the lines of a CDXJ index (`filename` as the index names the container).
    pub fn add_cdxj(&mut self, path: &Path) -> Result<(), DigestTableError> {
        let file = crate::layout::open_user_file(path)?;
        let mut lines = BufReader::with_capacity(1 << 20, file);
        let mut line = String::new();
        let mut number = 0;
        loop {
            line.clear();
            if lines.read_line(&mut line).map_err(io_at(path))? == 0 {
                return Ok(());
            }
            number += 1;
            let text = line.trim_end_matches(['\n', '\r']);
            if text.is_empty() || text.starts_with(' ') || text.starts_with('!') {
                continue;
            }
            let e = IndexEntry::parse_cdxj(text).map_err(|source| DigestTableError::Line {
                path: path.to_path_buf(),
                line: number,
                source,
            })?;
            let key = e.digest.as_deref().and_then(DigestKey::parse);
            let (Some(key), false) = (key, e.mime.as_deref() == Some("warc/revisit")) else {
                self.skipped += 1;
                continue;
            };
            let stored = StoredPayload {
                url: e.url.clone(),
                date: warc_date_of(&e.timestamp),
                record_id: e.extra_text("recordId"),
                container: e.filename.clone(),
                offset: e.offset,
                length: e.length,
                package: None,
                payload_offset: None,
            };
            self.add(key, None, &stored)?;
        }
    }

    /// Adds every response and resource record with a payload of an earlier package's
    /// containers (`content/`), as each record states its `WARC-Payload-Digest`, verified
    /// against the payload's bytes (a record whose stated digest is wrong is no entry).
    pub fn add_package(&mut self, pkg: &Path) -> Result<String, DigestTableError> {
        let objid = package_objid(pkg)?;
        for rel in crate::layout::package_containers(pkg)? {
            self.add_container(pkg, &rel, &objid)?;
        }
        Ok(objid)
    }

    fn add_container(
        &mut self,
        pkg: &Path,
        rel: &str,
        objid: &str,
    ) -> Result<(), DigestTableError> {
        use crate::formats::warc::WarcReader;
        let file = crate::layout::open_in(pkg, rel)?;
        let mut reader = WarcReader::new(file, pkg.join(rel).display().to_string())?;
        while let Some((head, end, found)) =
            reader.next_record(|head, block| payload_sha1(&head.header, block))?
        {
            let h = &head.header;
            let Some((offset_in_block, len, sha1)) = found else {
                continue;
            };
            let stated = h.get("WARC-Payload-Digest").and_then(DigestKey::parse);
            let actual = DigestKey::new(Algorithm::Sha1, &sha1);
            if stated.is_none() || stated != actual {
                self.skipped += 1;
                continue;
            }
            let Some(key) = stated else { continue };
            let stored = StoredPayload {
                url: h.target_uri().unwrap_or("").to_string(),
                date: h.get("WARC-Date").unwrap_or("").to_string(),
                record_id: h.record_id().map(str::to_string),
                container: rel.to_string(),
                offset: head.offset,
                length: end.end - head.offset,
                package: Some(objid.to_string()),
                payload_offset: Some(head.header_len + offset_in_block),
            };
            self.add(key, Some(len), &stored)?;
        }
        Ok(())
    }

    /// Sorts what was added and writes the table to `out`; returns the number of entries.
    pub fn finish(mut self, out: &Path) -> Result<u64, DigestTableError> {
        self.spill()?;
        // Written beside `out` under a temporary name and renamed when whole: a killed run
        // leaves no table that looks complete, and an earlier table stays until then.
        let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let tmp = tempfile::Builder::new()
            .prefix(".webaip-digests-")
            .tempfile_in(dir)
            .map_err(io_at(dir))?;
        let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
        w.write_all(MAGIC).map_err(io_at(out))?;
        let mut at = MAGIC.len() as u64;
        let mut sparse: Vec<(DigestKey, u64)> = Vec::new();
        let mut count = 0u64;
        let mut last: Option<DigestKey> = None;
        for e in self.runs.merged(Vec::new()) {
            let e = e.map_err(io_at(Path::new(RUN_NAME)))?;
            // The first of a digest is the earliest (the run order); the others are dropped.
            if last == Some(e.key) {
                continue;
            }
            last = Some(e.key);
            if count.is_multiple_of(STEP) {
                sparse.push((e.key, at));
            }
            e.write_table(&mut w).map_err(io_at(out))?;
            at += e.table_len();
            count += 1;
        }
        let sparse_at = at;
        for (k, off) in &sparse {
            w.write_all(&k.0).map_err(io_at(out))?;
            w.write_all(&off.to_le_bytes()).map_err(io_at(out))?;
        }
        for n in [sparse_at, sparse.len() as u64, count, STEP] {
            w.write_all(&n.to_le_bytes()).map_err(io_at(out))?;
        }
        w.write_all(END_MAGIC).map_err(io_at(out))?;
        w.into_inner().map_err(|e| io_at(out)(e.into_error()))?.sync_all().map_err(io_at(out))?;
        tmp.persist(out).map_err(|e| io_at(out)(e.error))?;
        Ok(count)
    }
}

/// The payload of a response or resource record: its offset in the block, length and SHA-1;
/// `None` for other records, revisits, and empty payloads.
#[allow(clippy::type_complexity)]
fn payload_sha1(
    h: &crate::formats::warc::WarcHeader,
    block: &mut dyn Read,
) -> io::Result<Option<(u64, u64, [u8; 20])>> {
    use crate::formats::warc::payload;
    if !matches!(h.warc_type(), Some("response" | "resource")) {
        return Ok(None);
    }
    let mut prefix = Vec::new();
    let mut offset = 0;
    if payload::holds_http_message(h.warc_type(), h.target_uri()) {
        block.take(crate::formats::http::MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut prefix)?;
        offset = payload::payload_start_of(h, &prefix).offset();
    }
    let mut hasher = crate::formats::digest::BlockHasher::new(offset);
    hasher.update(&prefix);
    let mut buf = vec![0u8; 256 << 10];
    loop {
        let n = block.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let d = hasher.finish();
    Ok((d.payload_len > 0).then_some((d.payload_offset, d.payload_len, d.payload_sha1)))
}

/// A 14-digit index timestamp as a WARC date (`20240315103000` -> `2024-03-15T10:30:00Z`);
/// anything else as it is.
pub fn warc_date_of(ts: &str) -> String {
    if ts.len() < 14 || !ts.bytes().take(14).all(|b| b.is_ascii_digit()) {
        return ts.to_string();
    }
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &ts[0..4],
        &ts[4..6],
        &ts[6..8],
        &ts[8..10],
        &ts[10..12],
        &ts[12..14]
    )
}

/// The OBJID of the package at `pkg`, from the head of its METS.
pub fn package_objid(pkg: &Path) -> Result<String, DigestTableError> {
    // A link or FIFO as the METS is refused, as the package's containers are.
    let mets = crate::layout::open_in(pkg, crate::layout::METS).map_err(|e| match e {
        e if e.is_not_found() => DigestTableError::NotAPackage(pkg.to_path_buf()),
        e => e.into(),
    })?;
    let path = pkg.join(crate::layout::METS);
    // The root is within the first 64 KiB of any METS webaip reads.
    let root = crate::mets::sections::read_root_identity(&path, mets.take(64 << 10));
    root.ok().and_then(|r| r.objid).ok_or_else(|| DigestTableError::NotAPackage(pkg.to_path_buf()))
}

/// A table opened for look-ups: its sparse index in memory, its entries on disk.
pub struct DigestTable {
    file: File,
    path: PathBuf,
    sparse: Vec<(DigestKey, u64)>,
    sparse_at: u64,
    entries: u64,
}

impl DigestTable {
    /// Opens the table at `path`, reading its sparse index.
    pub fn open(path: &Path) -> Result<DigestTable, DigestTableError> {
        let file = crate::layout::open_user_file(path)?;
        let size = file.metadata().map_err(io_at(path))?.len();
        let bad = || DigestTableError::NotATable(path.to_path_buf());
        if table_magic(path).is_some_and(|head| &head == EARLIER_MAGIC) {
            return Err(DigestTableError::Earlier(path.to_path_buf()));
        }
        if !is_table(path) || size < MAGIC.len() as u64 + FOOTER_LEN {
            return Err(bad());
        }
        let mut footer = [0u8; FOOTER_LEN as usize];
        file.read_exact_at(&mut footer, size - FOOTER_LEN).map_err(io_at(path))?;
        let n =
            |i: usize| u64::from_le_bytes(footer[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let (sparse_at, sparse_n, entries) = (n(0), n(1), n(2));
        // A hostile footer: every figure checked before it sizes a read.
        let sparse_len = sparse_n.checked_mul(KEY_LEN as u64 + 8).ok_or_else(bad)?;
        if &footer[32..] != END_MAGIC
            || sparse_at.checked_add(sparse_len) != Some(size - FOOTER_LEN)
        {
            return Err(bad());
        }
        let mut raw = vec![0u8; usize::try_from(sparse_len).map_err(|_| bad())?];
        file.read_exact_at(&mut raw, sparse_at).map_err(io_at(path))?;
        let sparse = raw
            .chunks_exact(KEY_LEN + 8)
            .map(|c| {
                let mut k = [0u8; KEY_LEN];
                k.copy_from_slice(&c[..KEY_LEN]);
                let off = u64::from_le_bytes(c[KEY_LEN..].try_into().unwrap_or([0; 8]));
                (DigestKey(k), off)
            })
            .collect::<Vec<_>>();
        // Blocks start in order and before the sparse index: a look-up's block read is sized
        // by two neighbouring offsets.
        let ordered = sparse.windows(2).all(|w| w[0].1 <= w[1].1);
        if !ordered || sparse.last().is_some_and(|(_, o)| *o > sparse_at) {
            return Err(bad());
        }
        Ok(DigestTable { file, path: path.to_path_buf(), sparse, sparse_at, entries })
    }

    /// Entries in the table.
    pub fn len(&self) -> u64 {
        self.entries
    }

    /// True when the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The stored payload of digest `key`, when there is one whose length is `payload_len`
    /// (or unknown): one block read.
    pub fn find(
        &self,
        key: &DigestKey,
        payload_len: u64,
    ) -> Result<Option<Found>, DigestTableError> {
        let block = match self.sparse.partition_point(|(k, _)| k <= key) {
            0 => return Ok(None),
            i => i - 1,
        };
        let start = self.sparse[block].1;
        let end = self.sparse.get(block + 1).map_or(self.sparse_at, |(_, o)| *o);
        let mut buf = vec![0u8; (end - start) as usize];
        self.file.read_exact_at(&mut buf, start).map_err(io_at(&self.path))?;
        let mut at = 0usize;
        let bad = || DigestTableError::NotATable(self.path.clone());
        while at + KEY_LEN + 12 <= buf.len() {
            let k = &buf[at..at + KEY_LEN];
            let len = u64::from_le_bytes(
                buf[at + KEY_LEN..at + KEY_LEN + 8].try_into().map_err(|_| bad())?,
            );
            let n = u32::from_le_bytes(
                buf[at + KEY_LEN + 8..at + KEY_LEN + 12].try_into().map_err(|_| bad())?,
            ) as usize;
            let body = at + KEY_LEN + 12;
            match k.cmp(&key.0[..]) {
                Ordering::Less => at = body + n,
                Ordering::Greater => return Ok(None),
                Ordering::Equal => {
                    if len != UNKNOWN_LEN && len != payload_len {
                        return Ok(None);
                    }
                    let stored = buf.get(body..body + n).ok_or_else(bad)?;
                    let stored: StoredPayload =
                        serde_json::from_slice(stored).map_err(|_| bad())?;
                    let payload_len = (len != UNKNOWN_LEN).then_some(len);
                    return Ok(Some(Found { stored, payload_len }));
                }
            }
        }
        Ok(None)
    }
}

/// Builds the table of `sources` (tables are opened as they are; CDXJ indexes and package
/// folders are sorted into a temporary table): what a package's `--dedup-against` looks up.
pub struct DedupSources {
    /// The tables, in the order given.
    pub tables: Vec<DigestTable>,
    /// The OBJIDs of the packages given as folders.
    pub packages: Vec<String>,
    /// Temporary tables, removed when dropped.
    _scratch: Vec<tempfile::TempPath>,
}

impl DedupSources {
    /// Opens or builds the tables of `sources`.
    pub fn open(sources: &[PathBuf]) -> Result<DedupSources, DigestTableError> {
        let mut out =
            DedupSources { tables: Vec::new(), packages: Vec::new(), _scratch: Vec::new() };
        for s in sources {
            if is_table(s) {
                out.tables.push(DigestTable::open(s)?);
                continue;
            }
            let mut b = TableBuilder::new(256 << 20)?;
            if s.is_dir() {
                out.packages.push(b.add_package(s)?);
            } else {
                b.add_cdxj(s)?;
            }
            let tmp = tempfile::NamedTempFile::new().map_err(io_at(s))?.into_temp_path();
            b.finish(&tmp)?;
            out.tables.push(DigestTable::open(&tmp)?);
            out._scratch.push(tmp);
        }
        Ok(out)
    }

    /// The match for `key` over every table ([`Self::find_where`] taking any).
    pub fn find(
        &self,
        key: &DigestKey,
        payload_len: u64,
    ) -> Result<Option<Found>, DigestTableError> {
        self.find_where(key, payload_len, |_| true)
    }

    /// The match for `key` that `accept` takes, over every table: of those, one that names
    /// its record first, then the earliest, then the first by what it states, as a table
    /// keeps one of a digest's entries (the table builder). The order of the sources does not
    /// change the match.
    pub fn find_where(
        &self,
        key: &DigestKey,
        payload_len: u64,
        accept: impl Fn(&Found) -> bool,
    ) -> Result<Option<Found>, DigestTableError> {
        let mut best: Option<(MatchRank, Found)> = None;
        for t in &self.tables {
            let Some(f) = t.find(key, payload_len)?.filter(|f| accept(f)) else { continue };
            let rank = MatchRank::of(&f.stored);
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, f));
            }
        }
        Ok(best.map(|(_, f)| f))
    }
}

/// How a match ranks among those of several tables (the smallest wins).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct MatchRank {
    unnamed: bool,
    when: String,
    stored: Vec<u8>,
}

impl MatchRank {
    fn of(stored: &StoredPayload) -> MatchRank {
        MatchRank {
            unnamed: !stored.names_its_record(),
            when: when_of(stored),
            stored: serde_json::to_vec(stored).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_objid_is_read_in_any_prefix_and_unescaped() {
        let pkg = tempfile::tempdir().unwrap();
        let mets = pkg.path().join(crate::layout::METS);
        let doc = "<?xml version=\"1.0\"?>\n<mets xmlns=\"http://www.loc.gov/METS/\" OBJID=\"a&amp;b\"><metsHdr/></mets>";
        std::fs::write(&mets, doc).unwrap();
        assert_eq!(package_objid(pkg.path()).unwrap(), "a&b");
        let no_objid = "<mets:mets xmlns:mets=\"http://www.loc.gov/METS/\"></mets:mets>";
        std::fs::write(&mets, no_objid).unwrap();
        assert!(matches!(package_objid(pkg.path()), Err(DigestTableError::NotAPackage(_))));
    }

    fn stored(url: &str, date: &str) -> StoredPayload {
        StoredPayload {
            url: url.into(),
            date: date.into(),
            container: "content/a.warc.gz".into(),
            ..StoredPayload::default()
        }
    }

    fn key(n: u32) -> DigestKey {
        let mut b = [0u8; 20];
        b[..4].copy_from_slice(&n.to_be_bytes());
        b[4..8].copy_from_slice(&n.wrapping_mul(2654435761).to_le_bytes());
        DigestKey::new(Algorithm::Sha1, &b).unwrap()
    }

    /// Entries spread over several runs come back from the table, each at its place; absent
    /// keys are not found, before, between and after the stored ones.
    #[test]
    fn a_table_from_several_runs_finds_every_entry() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.digests");
        let mut b = TableBuilder::new(4096).unwrap();
        for n in (0..5000u32).map(|n| n * 2 + 1).rev() {
            b.add(
                key(n),
                Some(n as u64),
                &stored(&format!("http://a/{n}"), "2024-01-01T00:00:00Z"),
            )
            .unwrap();
        }
        assert!(b.runs.len() > 3, "the budget makes runs");
        assert_eq!(b.finish(&out).unwrap(), 5000);
        let t = DigestTable::open(&out).unwrap();
        assert_eq!(t.len(), 5000);
        for n in (0..5000u32).map(|n| n * 2 + 1) {
            let f = t.find(&key(n), n as u64).unwrap().unwrap();
            assert_eq!(f.stored.url, format!("http://a/{n}"));
            assert!(t.find(&key(n - 1), (n - 1) as u64).unwrap().is_none());
        }
        assert!(t.find(&key(99999), 99999).unwrap().is_none());
    }

    /// One digest stored twice: the earliest capture is the one referred to.
    #[test]
    fn the_earliest_of_a_digest_wins() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.digests");
        let mut b = TableBuilder::new(1).unwrap();
        b.add(key(7), None, &stored("http://late/", "2024-05-01T00:00:00Z")).unwrap();
        b.add(key(7), None, &stored("http://early/", "2023-05-01T00:00:00Z")).unwrap();
        b.add(key(7), None, &stored("http://late2/", "2024-05-01T00:00:00Z")).unwrap();
        assert_eq!(b.finish(&out).unwrap(), 1);
        let t = DigestTable::open(&out).unwrap();
        assert_eq!(t.find(&key(7), 3).unwrap().unwrap().stored.url, "http://early/");
    }

    /// A match is algorithm, bytes and (when known) length: the same base32 text under
    /// another algorithm, or another length, is no match.
    #[test]
    fn digests_match_by_algorithm_and_length() {
        let sha1 = DigestKey::parse("sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK").unwrap();
        assert_eq!(DigestKey::parse("G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK"), Some(sha1));
        assert_eq!(DigestKey::parse("SHA1:g7hrm7bgokskmsxzahmuqttv53qofsmk"), Some(sha1));
        assert_eq!(sha1.to_warc(), "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK");
        assert_eq!(DigestKey::parse("md5:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK"), None);
        assert_eq!(DigestKey::parse("sha256:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK"), None);
        let hex = DigestKey::parse("sha1:37cf167c2672a4a64af901d9484e75eee0e2c98a").unwrap();
        assert_eq!(hex, sha1);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.digests");
        let mut b = TableBuilder::new(1 << 20).unwrap();
        b.add(sha1, Some(100), &stored("http://a/", "2024")).unwrap();
        b.finish(&out).unwrap();
        let t = DigestTable::open(&out).unwrap();
        assert!(t.find(&sha1, 100).unwrap().is_some());
        assert!(t.find(&sha1, 101).unwrap().is_none());
    }

    /// Index lines: revisits are no entries, the record id travels when the line has one,
    /// the timestamp becomes a WARC date.
    #[test]
    fn cdxj_lines_become_entries() {
        let dir = tempfile::tempdir().unwrap();
        let idx = dir.path().join("i.cdxj");
        std::fs::write(
            &idx,
            concat!(
                "com,example)/ 20240315103000 {\"url\": \"http://example.com/\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK\", \"length\": \"586\", \"offset\": \"2621\", \"filename\": \"content/a.warc.gz\", \"recordId\": \"<urn:uuid:1>\"}\n",
                "com,example)/b 20240316103000 {\"url\": \"http://example.com/b\", \"mime\": \"warc/revisit\", \"digest\": \"sha1:AAAAM7BGOKSKMSXZAHMUQTTV53QOFSMK\", \"length\": \"5\", \"offset\": \"1\", \"filename\": \"content/a.warc.gz\"}\n",
            ),
        )
        .unwrap();
        let sources = DedupSources::open(&[idx]).unwrap();
        let k = DigestKey::parse("sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK").unwrap();
        let f = sources.find(&k, 12345).unwrap().unwrap();
        assert_eq!(f.payload_len, None);
        assert_eq!(f.stored.date, "2024-03-15T10:30:00Z");
        assert_eq!(f.stored.record_id.as_deref(), Some("<urn:uuid:1>"));
        assert_eq!((f.stored.offset, f.stored.length), (2621, 586));
        let revisit = DigestKey::parse("sha1:AAAAM7BGOKSKMSXZAHMUQTTV53QOFSMK").unwrap();
        assert!(sources.find(&revisit, 1).unwrap().is_none());
    }

    /// A file that is not a table, or is cut short, is refused.
    #[test]
    fn a_cut_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.digests");
        let mut b = TableBuilder::new(1 << 20).unwrap();
        b.add(key(1), None, &stored("http://a/", "2024")).unwrap();
        b.finish(&out).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        std::fs::write(&out, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(DigestTable::open(&out), Err(DigestTableError::NotATable(_))));
    }

    /// A table an earlier webaip made (its first bytes) is refused, saying to make it again:
    /// it would leave ARC records whole without a word.
    #[test]
    fn a_table_of_an_earlier_webaip_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.digests");
        let mut b = TableBuilder::new(1 << 20).unwrap();
        b.add(key(1), None, &stored("http://a/", "2024")).unwrap();
        b.finish(&out).unwrap();
        let mut bytes = std::fs::read(&out).unwrap();
        bytes[..16].copy_from_slice(b"WEBAIP-DIGESTS1\n");
        std::fs::write(&out, &bytes).unwrap();
        assert!(is_table(&out), "still taken for a table, not a CDXJ index");
        let e = DigestTable::open(&out).err().expect("refused");
        assert!(matches!(e, DigestTableError::Earlier(_)), "{e}");
        assert!(e.to_string().contains("make it again"), "{e}");
    }

    /// A footer whose figures overflow, or a sparse index pointing past the blocks, is refused
    /// before it sizes a read (no panic, no huge allocation).
    #[test]
    fn a_hostile_footer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.digests");
        let mut b = TableBuilder::new(1 << 20).unwrap();
        b.add(key(1), None, &stored("http://a/", "2024")).unwrap();
        b.finish(&out).unwrap();
        let good = std::fs::read(&out).unwrap();
        let footer = good.len() - FOOTER_LEN as usize;
        let field = |bytes: &mut Vec<u8>, i: usize, v: u64| {
            bytes[footer + i * 8..footer + i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        };
        let mut overflow = good.clone();
        field(&mut overflow, 1, u64::MAX / 3);
        std::fs::write(&out, &overflow).unwrap();
        assert!(matches!(DigestTable::open(&out), Err(DigestTableError::NotATable(_))));
        let sparse_at = u64::from_le_bytes(good[footer..footer + 8].try_into().unwrap()) as usize;
        let mut past = good.clone();
        let at = sparse_at + KEY_LEN;
        past[at..at + 8].copy_from_slice(&(sparse_at as u64 + 100).to_le_bytes());
        std::fs::write(&out, &past).unwrap();
        assert!(matches!(DigestTable::open(&out), Err(DigestTableError::NotATable(_))));
        std::fs::write(&out, &good).unwrap();
        assert_eq!(DigestTable::open(&out).unwrap().len(), 1);
    }
}
