//! WARC 1.1 writer: one gzip member per record, exact byte ranges for every record.
//!
//! Hand-written because the `warc` crate keeps headers in a hash map (random order, so output
//! is not reproducible), buffers whole bodies and reports no offsets; preservation needs all
//! three (see `RUST_STACK.md` §1).
//!
//! The writer owns digests and offsets: given a [`RecordSpec`] and a block, it hashes the block
//! (SHA-1 for the WARC header, SHA-512 of the payload for METS), writes the header in a fixed
//! order, compresses header + block + CRLF CRLF into one gzip member, and returns a
//! [`WrittenRecord`] saying where the member and the payload are and what they hash to.
//!
//! Records can be written in two steps so that the costly part runs in parallel:
//! `encode_record` hashes and compresses an in-memory block (pure, any thread), and
//! `WarcWriter::write_encoded` appends the result in order. [`WarcWriter::write_record`] does
//! both at once. Blocks too large for memory go through [`WarcWriter::write_streamed`], which
//! reads them once, hashing them while their chunks compress in parallel
//! (`formats::gzip_member`), and never holds them.

use std::io::{self, Read, Write};

use sha2::{Digest, Sha256};

use super::header::{WARC_VERSION, WarcHeader};
use crate::formats::digest::{BlockDigests, BlockHasher, sha1_base32};
use crate::formats::gzip_member::deflate_body;

/// The four bytes that close every WARC record.
pub(crate) const RECORD_END: &[u8] = b"\r\n\r\n";

/// The fields of a record to write, before its block is known; [`RecordSpec::header`] adds
/// the digests and length and puts every field in webaip's fixed order.
#[derive(Debug, Clone, Default)]
pub struct RecordSpec {
    /// `WARC-Type`.
    pub warc_type: String,
    /// `WARC-Record-ID` (`<urn:uuid:...>`).
    pub record_id: String,
    /// `WARC-Date`, already formatted.
    pub date: String,
    /// `WARC-Target-URI`.
    pub target_uri: Option<String>,
    /// `WARC-IP-Address`.
    pub ip_address: Option<String>,
    /// `WARC-Warcinfo-ID`.
    pub warcinfo_id: Option<String>,
    /// `WARC-Concurrent-To`.
    pub concurrent_to: Option<String>,
    /// `WARC-Filename` (warcinfo records).
    pub filename: Option<String>,
    /// `WARC-Truncated` reason.
    pub truncated: Option<String>,
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// Whether to write `WARC-Payload-Digest`.
    pub payload_digest: bool,
    /// Extension fields, written after the standard ones.
    pub extra: Vec<(String, String)>,
}

impl RecordSpec {
    /// The full header for a block with the given digests.
    pub fn header(&self, digests: &BlockDigests) -> WarcHeader {
        let mut h = WarcHeader::new(WARC_VERSION);
        h.push("WARC-Type", &self.warc_type);
        h.push("WARC-Record-ID", &self.record_id);
        h.push("WARC-Date", &self.date);
        let optional = [
            ("WARC-Target-URI", &self.target_uri),
            ("WARC-IP-Address", &self.ip_address),
            ("WARC-Warcinfo-ID", &self.warcinfo_id),
            ("WARC-Concurrent-To", &self.concurrent_to),
            ("WARC-Filename", &self.filename),
            ("WARC-Truncated", &self.truncated),
            ("Content-Type", &self.content_type),
        ];
        for (name, value) in optional {
            if let Some(v) = value {
                h.push(name, v);
            }
        }
        h.push("WARC-Block-Digest", sha1_base32(&digests.block_sha1));
        if self.payload_digest {
            h.push("WARC-Payload-Digest", sha1_base32(&digests.payload_sha1));
        }
        for (name, value) in &self.extra {
            h.push(name, value);
        }
        h.push("Content-Length", digests.block_len.to_string());
        h
    }
}

/// Where a record landed in the container, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenRecord {
    /// `WARC-Record-ID` of the record.
    pub record_id: String,
    /// Offset of the record's gzip member in the container file (METS `BEGIN`).
    pub member_offset: u64,
    /// Length of the gzip member (METS `END` = offset + length - 1).
    pub member_len: u64,
    /// Length of the WARC header, blank line included, in the decompressed record.
    pub header_len: u64,
    /// Offset of the payload inside the decompressed record (header plus HTTP headers).
    pub payload_offset: u64,
    /// Digests and lengths of the block and payload (payload SHA-512 and size among them).
    pub digests: BlockDigests,
}

impl WrittenRecord {
    /// Length of the record block.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn block_len(&self) -> u64 {
        self.digests.block_len
    }

    /// Length of the payload.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn payload_len(&self) -> u64 {
        self.digests.payload_len
    }
}

/// A record hashed and compressed into a finished gzip member, ready to append.
#[derive(Debug)]
pub(crate) struct EncodedRecord {
    member: Vec<u8>,
    /// The record's first bytes, uncompressed (see [`MemberTap::start`]).
    start: Vec<u8>,
    record_id: String,
    header_len: u64,
    digests: BlockDigests,
}

/// The WARC field a cleaner's copy of an infected payload carries, naming the record of the
/// original (in a viral container): the WARC alone tells a cleaned copy from a harvested
/// resource.
pub(crate) const FIELD_CLEANED_FROM: &str = "X-Webaip-Cleaned-From";

/// The record of a cleaner's copy of an infected payload (the one rule for every path): a
/// `resource` at the original's URI and date, typed as its payload was, with
/// [`FIELD_CLEANED_FROM`] naming the original's record id (with or without its angle
/// brackets) and the payload digest.
pub(crate) fn cleaned_copy_spec(
    record_id: String,
    original: &str,
    (target_uri, date): (Option<String>, String),
    mime: String,
) -> RecordSpec {
    RecordSpec {
        warc_type: "resource".into(),
        record_id,
        date,
        target_uri,
        content_type: Some(mime),
        payload_digest: true,
        extra: vec![(
            FIELD_CLEANED_FROM.into(),
            format!("<{}>", original.trim_matches(['<', '>'])),
        )],
        ..RecordSpec::default()
    }
}

/// The `warcinfo` record webaip writes first in every container it makes (the one builder for
/// all of them): the software, the format and the specification it follows, what the
/// container holds, then `fields` in order. Every value is escaped: names of source files are
/// input and must not add a field.
pub(crate) fn warcinfo(
    record_id: &str,
    date: chrono::DateTime<chrono::Utc>,
    filename: &str,
    description: &str,
    fields: &[(&str, String)],
) -> (RecordSpec, Vec<u8>) {
    use super::header::warc_fields_line;
    let mut body = [
        warc_fields_line("software", &format!("webaip/{}", env!("CARGO_PKG_VERSION"))),
        warc_fields_line("format", "WARC File Format 1.1"),
        warc_fields_line(
            "conformsTo",
            "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        ),
        warc_fields_line("description", description),
    ]
    .concat();
    for (name, value) in fields {
        body.push_str(&warc_fields_line(name, value));
    }
    let spec = RecordSpec {
        warc_type: "warcinfo".into(),
        record_id: record_id.to_string(),
        date: date.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        filename: Some(filename.to_string()),
        content_type: Some("application/warc-fields".into()),
        ..RecordSpec::default()
    };
    (spec, body.into_bytes())
}

/// A record as uncompressed bytes (header, block, CRLF CRLF): for containers of uncompressed
/// records.
pub(crate) fn uncompressed_record(spec: &RecordSpec, block: &[u8]) -> Vec<u8> {
    let digests = BlockHasher::digest(block, 0);
    let mut out = spec.header(&digests).to_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(RECORD_END);
    out
}

/// Hashes one record's block and compresses the record (header, block, closing CRLFs) into its
/// own gzip member. The payload starts `payload_offset_in_block` bytes into the block (after
/// HTTP headers; 0 when the whole block is the payload).
pub(crate) fn encode_record(
    spec: &RecordSpec,
    block: &[u8],
    payload_offset_in_block: u64,
    level: u32,
) -> io::Result<EncodedRecord> {
    let digests = BlockHasher::digest(block, payload_offset_in_block);
    let head = spec.header(&digests).to_bytes();
    // libdeflate compresses a whole buffer about twice as fast as zlib at the same level and
    // ratio (see the README's benchmark). It has no streaming interface, so the record is
    // assembled in one buffer; records too large for that go through `write_streamed`.
    let mut record = Vec::with_capacity(head.len() + block.len() + RECORD_END.len());
    record.extend_from_slice(&head);
    record.extend_from_slice(block);
    record.extend_from_slice(RECORD_END);
    let member = gzip_member(&record, level)?;
    let start = record[..record.len().min(head.len() + START_OF_BLOCK)].to_vec();
    Ok(EncodedRecord {
        member,
        start,
        record_id: spec.record_id.clone(),
        header_len: head.len() as u64,
        digests,
    })
}

/// `bytes` compressed by libdeflate at `level` into one gzip member (the whole buffer at once).
pub(crate) fn gzip_member(bytes: &[u8], level: u32) -> io::Result<Vec<u8>> {
    let lvl = libdeflater::CompressionLvl::new(level.min(12) as i32)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{e:?}")))?;
    let mut compressor = libdeflater::Compressor::new(lvl);
    let mut member = vec![0u8; compressor.gzip_compress_bound(bytes.len())];
    let n = compressor
        .gzip_compress(bytes, &mut member)
        .map_err(|e| io::Error::other(format!("gzip compression failed: {e:?}")))?;
    member.truncate(n);
    // The bound is about the input's size; a batch's members wait to be written, so the slack
    // (three quarters of it for a page) is given back now.
    member.shrink_to_fit();
    Ok(member)
}

/// Bytes of a record's block shown uncompressed to a [`MemberTap`] with its header: the HTTP
/// header section of nearly every response fits in them.
pub const START_OF_BLOCK: usize = 16 * 1024;

/// Appends records to a WARC container, keeping count of every byte written.
pub struct WarcWriter<W: Write> {
    out: W,
    pos: u64,
    level: u32,
    records: u64,
    /// Told of every record written, with its bytes as stored (see [`MemberTap`]).
    tap: Option<Box<dyn MemberTap>>,
    /// The SHA-256 of every byte written, when asked for ([`WarcWriter::hash_sha256`]).
    sha256: Option<Sha256>,
}

/// An observer of the records a [`WarcWriter`] writes: each record's bytes as they go to the
/// container (its gzip member, or the record itself in an uncompressed container), then where
/// it went. The writer is the one place offsets are computed, so an observer here sees every
/// record of every path (captures, copies, migrations) at its true place, without reading the
/// container again (`crate::index::tap` makes the package's index so).
pub trait MemberTap: Send {
    /// The record about to be written, uncompressed, as the writer has it before compressing
    /// it: its header and the first [`START_OF_BLOCK`] bytes of its block (`whole` when that
    /// is the entire record, closing CRLFs included). Called before [`MemberTap::bytes`] for
    /// the records the writer makes, not for members copied as they are: an observer reads
    /// the record's fields here instead of inflating the member.
    fn start(&mut self, _plain: &[u8], _whole: bool) {}
    /// Bytes of the record being written, in order.
    fn bytes(&mut self, bytes: &[u8]);
    /// The record is complete: it is `len` bytes at `offset`.
    fn end(&mut self, offset: u64, len: u64);
}

/// Writes to `out`, shows the bytes to `tap` and hashes them into `sha256`.
struct Tee<'a, W: Write> {
    out: &'a mut W,
    tap: Option<&'a mut Box<dyn MemberTap>>,
    sha256: Option<&'a mut Sha256>,
}

impl<W: Write> Write for Tee<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        if let Some(t) = &mut self.tap {
            t.bytes(&buf[..n]);
        }
        if let Some(h) = &mut self.sha256 {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> WarcWriter<W> {
    /// A writer appending to `out`, which is assumed to be empty (offsets start at 0).
    /// `level` is the compression level (0-9, zlib's scale).
    pub fn new(out: W, level: u32) -> Self {
        WarcWriter { out, pos: 0, level: level.min(9), records: 0, tap: None, sha256: None }
    }

    /// Shows every record written from now on to `tap`.
    pub fn set_tap(&mut self, tap: Box<dyn MemberTap>) {
        self.tap = Some(tap);
    }

    /// Hashes every byte written from now on with SHA-256: the container's digest, for a
    /// writer given an empty file, without reading it again ([`WarcWriter::sha256`]).
    pub(crate) fn hash_sha256(&mut self) {
        self.sha256 = Some(Sha256::new());
    }

    /// The SHA-256 of the bytes written since [`WarcWriter::hash_sha256`], if asked for.
    pub(crate) fn sha256(&self) -> Option<[u8; 32]> {
        self.sha256.as_ref().map(|h| h.clone().finalize().into())
    }

    fn tee(&mut self) -> Tee<'_, W> {
        Tee { out: &mut self.out, tap: self.tap.as_mut(), sha256: self.sha256.as_mut() }
    }

    /// Bytes written so far: the offset the next record will get.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Records written by this writer (not counting any the output held before).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Hashes, compresses and appends a record whose block is in memory.
    pub fn write_record(
        &mut self,
        spec: &RecordSpec,
        block: &[u8],
        payload_offset_in_block: u64,
    ) -> io::Result<WrittenRecord> {
        let enc = encode_record(spec, block, payload_offset_in_block, self.level)?;
        self.write_encoded(enc)
    }

    /// Appends a record made by [`encode_record`].
    pub(crate) fn write_encoded(&mut self, rec: EncodedRecord) -> io::Result<WrittenRecord> {
        if let Some(t) = &mut self.tap {
            let whole = rec.start.len() as u64
                == rec.header_len + rec.digests.block_len + RECORD_END.len() as u64;
            t.start(&rec.start, whole);
        }
        self.tee().write_all(&rec.member)?;
        let member_offset = self.pos;
        if let Some(t) = &mut self.tap {
            t.end(member_offset, rec.member.len() as u64);
        }
        self.pos += rec.member.len() as u64;
        self.records += 1;
        Ok(WrittenRecord {
            record_id: rec.record_id,
            member_offset,
            member_len: rec.member.len() as u64,
            header_len: rec.header_len,
            payload_offset: rec.header_len + rec.digests.payload_offset,
            digests: rec.digests,
        })
    }

    /// Appends a record whose block is too large for memory, reading it once: the block is
    /// hashed while it is compressed, in parallel chunks on the current rayon pool, into one
    /// gzip member (see `formats::gzip_member`).
    pub fn write_streamed(
        &mut self,
        spec: &RecordSpec,
        block: impl Read,
        payload_offset_in_block: u64,
    ) -> io::Result<WrittenRecord> {
        let mut hasher = BlockHasher::new(payload_offset_in_block);
        // The block's start, kept for the tap only.
        let mut first = Vec::new();
        let keep = if self.tap.is_some() { START_OF_BLOCK } else { 0 };
        let body = deflate_body(block, self.level, |chunk| {
            let n = keep.saturating_sub(first.len()).min(chunk.len());
            first.extend_from_slice(&chunk[..n]);
            hasher.update(chunk)
        })?;
        let digests = hasher.finish();
        let head = spec.header(&digests).to_bytes();
        if let Some(t) = &mut self.tap {
            let whole = first.len() as u64 == digests.block_len;
            let mut plain = [&head[..], &first].concat();
            if whole {
                plain.extend_from_slice(RECORD_END);
            }
            t.start(&plain, whole);
        }
        let member_offset = self.pos;
        let member = body.write_member(&head, RECORD_END, &mut self.tee())?;
        if let Some(t) = &mut self.tap {
            t.end(member_offset, member.member_len);
        }
        self.pos += member.member_len;
        self.records += 1;
        Ok(WrittenRecord {
            record_id: spec.record_id.clone(),
            member_offset,
            member_len: member.member_len,
            header_len: head.len() as u64,
            payload_offset: head.len() as u64 + digests.payload_offset,
            digests,
        })
    }

    /// Appends a gzip member (or an uncompressed record) written by another tool, byte-exact:
    /// `len` bytes from `member`. Returns the offset it starts at; the writer's position moves
    /// on by `len`, so copied and written records share one count of offsets.
    pub(crate) fn append_member(&mut self, member: impl Read, len: u64) -> io::Result<u64> {
        let at = self.pos;
        let copied = io::copy(&mut member.take(len), &mut self.tee())?;
        self.pos += copied;
        if copied != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("member of {len} bytes ended after {copied}"),
            ));
        }
        if let Some(t) = &mut self.tap {
            t.end(at, len);
        }
        self.records += 1;
        Ok(at)
    }

    /// Appends bytes that are no record of their own (what a copied file holds between or
    /// after its records), keeping the offsets right.
    pub(crate) fn append_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        if let Some(h) = &mut self.sha256 {
            h.update(bytes);
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

impl WarcWriter<io::BufWriter<std::fs::File>> {
    /// Flushes what is buffered and syncs the file to disk; the writer stays usable.
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;

    fn spec(id: &str) -> RecordSpec {
        RecordSpec {
            warc_type: "resource".into(),
            record_id: id.into(),
            date: "2024-01-01T00:00:00Z".into(),
            target_uri: Some("http://e.org/".into()),
            payload_digest: true,
            ..RecordSpec::default()
        }
    }

    #[test]
    fn member_ranges_decompress_to_exactly_one_record() {
        let mut w = WarcWriter::new(Vec::new(), 6);
        let a = w.write_record(&spec("<urn:a>"), b"hello", 0).unwrap();
        let block = b"0123456789".repeat(1000);
        let b = w.write_streamed(&spec("<urn:b>"), &block[..], 3).unwrap();
        let out = w.finish().unwrap();
        assert_eq!(a.member_offset, 0);
        assert_eq!(b.member_offset, a.member_len);
        assert_eq!(out.len() as u64, b.member_offset + b.member_len);
        assert_eq!(b.digests.payload_len, block.len() as u64 - 3);
        let mut rec = Vec::new();
        let range = &out[b.member_offset as usize..(b.member_offset + b.member_len) as usize];
        GzDecoder::new(range).read_to_end(&mut rec).unwrap();
        assert!(rec.starts_with(b"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:b>\r\n"));
        let payload = &rec[b.payload_offset as usize..][..b.payload_len() as usize];
        assert_eq!(payload, &block[3..]);
        assert!(rec.ends_with(RECORD_END));
        let sha: [u8; 64] = <sha2::Sha512 as sha2::Digest>::digest(&block[3..]).into();
        assert_eq!(b.digests.payload_sha512, sha);
    }

    /// Reads 3 MiB, then fails, as a disk or a network file system can.
    struct FailingMidway(u64);

    impl Read for FailingMidway {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0 >= 3 << 20 {
                return Err(io::Error::other("input/output error"));
            }
            let n = buf.len().min(64 << 10);
            buf[..n].fill(b'x');
            self.0 += n as u64;
            Ok(n)
        }
    }

    #[test]
    fn a_block_that_fails_to_read_writes_nothing() {
        // Not a short member that reads as complete: the record fails before a byte of it.
        let mut w = WarcWriter::new(Vec::new(), 6);
        w.write_record(&spec("<urn:a>"), b"hello", 0).unwrap();
        let before = w.position();
        let err = w.write_streamed(&spec("<urn:b>"), FailingMidway(0), 0).unwrap_err();
        assert!(err.to_string().contains("input/output error"), "{err}");
        assert_eq!((w.position(), w.records()), (before, 1));
        assert_eq!(w.finish().unwrap().len() as u64, before);
    }
}
