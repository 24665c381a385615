//! WARC 1.1 writer: one gzip member per record, exact byte ranges for every record.
//!
//! Hand-written because the `warc` crate keeps headers in a hash map (random order, so output
//! is not reproducible), buffers whole bodies and reports no offsets; preservation needs all
//! three (see `RUST_STACK.md` §1).
//!
//! Records are written in two steps so that the costly part can run in parallel:
//! [`encode_record`] compresses a header and an in-memory block into a finished gzip member
//! (pure, any thread), and [`WarcWriter::write_encoded`] appends it in order and returns where
//! it landed. Blocks too large for memory go through [`WarcWriter::write_streamed`].

use std::io::{self, Read, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use sha1::{Digest, Sha1};

use super::header::{WARC_VERSION, WarcHeader};
use crate::formats::digest::{BlockDigests, sha1_base32};

/// The four bytes that close every WARC record.
pub const RECORD_END: &[u8] = b"\r\n\r\n";

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

/// Where a record landed in the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenRecord {
    /// Offset of the record's gzip member in the container file (METS `BEGIN`).
    pub member_offset: u64,
    /// Length of the gzip member (METS `END` = offset + length - 1).
    pub member_len: u64,
    /// Length of the WARC header, blank line included, in the decompressed record.
    pub header_len: u64,
    /// Length of the record block.
    pub block_len: u64,
    /// Offset of the payload inside the decompressed record (header plus HTTP headers).
    pub payload_offset: u64,
    /// Length of the payload.
    pub payload_len: u64,
}

/// A record compressed into a finished gzip member, ready to append.
#[derive(Debug)]
pub struct EncodedRecord {
    member: Vec<u8>,
    header_len: u64,
    block_len: u64,
    payload_offset_in_block: u64,
}

impl EncodedRecord {
    /// The compressed size.
    pub fn member_len(&self) -> usize {
        self.member.len()
    }
}

/// Compresses one record (header, block, closing CRLFs) into its own gzip member.
///
/// `payload_offset_in_block` is where the payload starts inside the block (after HTTP
/// headers), recorded so the writer can report the payload's range.
pub fn encode_record(
    header: &WarcHeader,
    block: &[u8],
    payload_offset_in_block: u64,
    level: u32,
) -> io::Result<EncodedRecord> {
    let head = header.to_bytes();
    check_length(header, block.len() as u64)?;
    // libdeflate compresses a whole buffer about twice as fast as zlib at the same level and
    // ratio (see the README's benchmark). It has no streaming interface, so the record is
    // assembled in one buffer; records too large for that go through `write_streamed`.
    let mut record = Vec::with_capacity(head.len() + block.len() + RECORD_END.len());
    record.extend_from_slice(&head);
    record.extend_from_slice(block);
    record.extend_from_slice(RECORD_END);
    let lvl = libdeflater::CompressionLvl::new(level.min(12) as i32)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{e:?}")))?;
    let mut compressor = libdeflater::Compressor::new(lvl);
    let mut member = vec![0u8; compressor.gzip_compress_bound(record.len())];
    let n = compressor
        .gzip_compress(&record, &mut member)
        .map_err(|e| io::Error::other(format!("gzip compression failed: {e:?}")))?;
    member.truncate(n);
    Ok(EncodedRecord {
        member,
        header_len: head.len() as u64,
        block_len: block.len() as u64,
        payload_offset_in_block: payload_offset_in_block.min(block.len() as u64),
    })
}

fn check_length(header: &WarcHeader, block_len: u64) -> io::Result<()> {
    match header.content_length() {
        Some(l) if l == block_len => Ok(()),
        other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("Content-Length {other:?} does not match the block length {block_len}"),
        )),
    }
}

/// Appends records to a WARC container, keeping count of every byte written.
pub struct WarcWriter<W: Write> {
    out: W,
    pos: u64,
    level: u32,
}

impl<W: Write> WarcWriter<W> {
    /// A writer appending to `out`, which is assumed to be empty (offsets start at 0).
    /// `level` is the zlib compression level (0-9).
    pub fn new(out: W, level: u32) -> Self {
        WarcWriter { out, pos: 0, level: level.min(9) }
    }

    /// Bytes written so far: the offset the next record will get.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The compression level.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// Appends a record compressed by [`encode_record`].
    pub fn write_encoded(&mut self, rec: EncodedRecord) -> io::Result<WrittenRecord> {
        self.out.write_all(&rec.member)?;
        let member_offset = self.pos;
        self.pos += rec.member.len() as u64;
        Ok(WrittenRecord {
            member_offset,
            member_len: rec.member.len() as u64,
            header_len: rec.header_len,
            block_len: rec.block_len,
            payload_offset: rec.header_len + rec.payload_offset_in_block,
            payload_len: rec.block_len - rec.payload_offset_in_block,
        })
    }

    /// Appends a record whose block is streamed from `block`, never held in memory.
    ///
    /// The header must already carry the block's digests and length (computed in an earlier
    /// pass). The block is hashed again as it is written; if its length or SHA-1 differ from
    /// what the header promises (the source changed between passes), this fails.
    pub fn write_streamed(
        &mut self,
        header: &WarcHeader,
        mut block: impl Read,
        payload_offset_in_block: u64,
        block_sha1: &[u8; 20],
    ) -> io::Result<WrittenRecord> {
        let head = header.to_bytes();
        let expected = header.content_length().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "header has no Content-Length")
        })?;
        let member_offset = self.pos;
        let mut counter = CountingWriter { inner: &mut self.out, count: 0 };
        let mut enc = GzEncoder::new(&mut counter, Compression::new(self.level));
        enc.write_all(&head)?;
        let mut sha1 = Sha1::new();
        let mut buf = vec![0u8; 256 * 1024];
        let mut written = 0u64;
        loop {
            let n = match block.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            sha1.update(&buf[..n]);
            enc.write_all(&buf[..n])?;
            written += n as u64;
        }
        enc.write_all(RECORD_END)?;
        enc.finish()?;
        let member_len = counter.count;
        self.pos += member_len;
        let digest: [u8; 20] = sha1.finalize().into();
        if written != expected || &digest != block_sha1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "block changed while it was written: {written} bytes (expected {expected}), \
                     SHA-1 {}",
                    if &digest == block_sha1 { "as expected" } else { "differs" }
                ),
            ));
        }
        let payload_offset_in_block = payload_offset_in_block.min(written);
        Ok(WrittenRecord {
            member_offset,
            member_len,
            header_len: head.len() as u64,
            block_len: written,
            payload_offset: head.len() as u64 + payload_offset_in_block,
            payload_len: written - payload_offset_in_block,
        })
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

struct CountingWriter<W> {
    inner: W,
    count: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;

    fn header(len: usize) -> WarcHeader {
        let mut h = WarcHeader::new(WARC_VERSION);
        h.push("WARC-Type", "resource");
        h.push("Content-Length", len.to_string());
        h
    }

    #[test]
    fn member_ranges_decompress_to_exactly_one_record() {
        let mut w = WarcWriter::new(Vec::new(), 6);
        let a = w.write_encoded(encode_record(&header(5), b"hello", 0, 6).unwrap()).unwrap();
        let block = b"0123456789".repeat(1000);
        let sha: [u8; 20] = Sha1::digest(&block).into();
        let b = w.write_streamed(&header(block.len()), &block[..], 3, &sha).unwrap();
        let out = w.finish().unwrap();
        assert_eq!(a.member_offset, 0);
        assert_eq!(b.member_offset, a.member_len);
        assert_eq!(out.len() as u64, b.member_offset + b.member_len);
        let mut rec = Vec::new();
        let range = &out[b.member_offset as usize..(b.member_offset + b.member_len) as usize];
        GzDecoder::new(range).read_to_end(&mut rec).unwrap();
        assert!(rec.starts_with(b"WARC/1.1\r\n"));
        assert_eq!(&rec[b.payload_offset as usize..][..b.payload_len as usize], &block[3..]);
        assert!(rec.ends_with(RECORD_END));
    }

    #[test]
    fn a_changed_stream_is_refused() {
        let mut w = WarcWriter::new(Vec::new(), 1);
        let err = w.write_streamed(&header(5), &b"hellx"[..], 0, &Sha1::digest(b"hello").into());
        assert!(err.is_err());
        assert!(encode_record(&header(4), b"hello", 0, 1).is_err());
    }
}
