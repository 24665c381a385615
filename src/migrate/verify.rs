//! The conservation check: the WARC just written is read back from disk and every record is
//! compared with what was read from the ARC.
//!
//! While migrating, the digests of each record's ARC bytes go to an [`ExpectationLog`] (a
//! temporary file of fixed-size entries, so memory does not grow with the number of records).
//! [`verify_container`] then decompresses the container with the WARC reader, recomputes every
//! digest from the bytes on disk and compares them entry by entry.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use sha2::{Digest, Sha512};

use super::report::Conservation;
use crate::formats::digest::{BlockDigests, BlockHasher, hex, sha1_base32};
use crate::formats::http::{HttpHead, MAX_HTTP_HEADER_LEN, response_head};
use crate::formats::warc::{WarcReader, WrittenRecord};

const ENTRY_LEN: usize = 20 + 64 + 8 + 8 + 8 + 1;

/// Mismatches listed one by one; more are only counted.
const MAX_LISTED_MISMATCHES: usize = 100;

/// What one written record must look like when read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// SHA-1 of the block as read from the source.
    pub block_sha1: [u8; 20],
    /// SHA-512 of the payload as read from the source.
    pub payload_sha512: [u8; 64],
    /// Payload length.
    pub payload_len: u64,
    /// Where the writer says the gzip member is.
    pub member_offset: u64,
    /// Its length.
    pub member_len: u64,
    /// True for records that carry ARC bytes (not the warcinfo record webaip made).
    pub from_source: bool,
}

impl Expected {
    /// The expectation for a record with these digests, written at `written`.
    pub fn new(d: &BlockDigests, written: &WrittenRecord, from_source: bool) -> Self {
        Expected {
            block_sha1: d.block_sha1,
            payload_sha512: d.payload_sha512,
            payload_len: d.payload_len,
            member_offset: written.member_offset,
            member_len: written.member_len,
            from_source,
        }
    }

    fn encode(&self) -> [u8; ENTRY_LEN] {
        let mut b = [0u8; ENTRY_LEN];
        b[..20].copy_from_slice(&self.block_sha1);
        b[20..84].copy_from_slice(&self.payload_sha512);
        b[84..92].copy_from_slice(&self.payload_len.to_le_bytes());
        b[92..100].copy_from_slice(&self.member_offset.to_le_bytes());
        b[100..108].copy_from_slice(&self.member_len.to_le_bytes());
        b[108] = self.from_source as u8;
        b
    }

    fn decode(b: &[u8; ENTRY_LEN]) -> Self {
        let u = |r: std::ops::Range<usize>| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[r]);
            u64::from_le_bytes(x)
        };
        let mut block_sha1 = [0u8; 20];
        block_sha1.copy_from_slice(&b[..20]);
        let mut payload_sha512 = [0u8; 64];
        payload_sha512.copy_from_slice(&b[20..84]);
        Expected {
            block_sha1,
            payload_sha512,
            payload_len: u(84..92),
            member_offset: u(92..100),
            member_len: u(100..108),
            from_source: b[108] != 0,
        }
    }
}

/// Expectations spilled to a temporary file as they are produced.
pub struct ExpectationLog {
    out: BufWriter<File>,
    count: u64,
    payload_bytes: u64,
}

impl ExpectationLog {
    /// An empty log in a new temporary file.
    pub fn new() -> io::Result<Self> {
        Ok(ExpectationLog {
            out: BufWriter::new(tempfile::tempfile()?),
            count: 0,
            payload_bytes: 0,
        })
    }

    /// Appends one expectation.
    pub fn push(&mut self, e: &Expected) -> io::Result<()> {
        self.count += 1;
        if e.from_source {
            self.payload_bytes += e.payload_len;
        }
        self.out.write_all(&e.encode())
    }

    /// Payload bytes of the source records logged so far.
    pub fn source_payload_bytes(&self) -> u64 {
        self.payload_bytes
    }

    fn into_reader(self) -> io::Result<(BufReader<File>, u64)> {
        let mut f = self.out.into_inner().map_err(|e| e.into_error())?;
        f.seek(SeekFrom::Start(0))?;
        Ok((BufReader::new(f), self.count))
    }
}

/// The result of reading a container back.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The comparison.
    pub conservation: Conservation,
    /// Size of the container file.
    pub size: u64,
    /// SHA-512 of the container file (hex).
    pub sha512: String,
}

/// Reads `container` back and compares every record with the logged expectations.
pub fn verify_container(container: &Path, log: ExpectationLog) -> io::Result<Verified> {
    let payload_bytes_in = log.source_payload_bytes();
    let (mut expected, count) = log.into_reader()?;
    let file = File::open(container)?;
    let hashing = HashingReader { inner: file, sha: Sha512::new(), len: 0 };
    let name = container.display().to_string();
    let mut reader = WarcReader::new(hashing, name).map_err(io::Error::other)?;
    let mut c = Conservation { payload_bytes_in, ..Conservation::default() };
    let mut mismatch_count = 0u64;
    let mut note = |c: &mut Conservation, m: String| {
        mismatch_count += 1;
        if c.mismatches.len() < MAX_LISTED_MISMATCHES {
            c.mismatches.push(m);
        }
    };
    let mut index = 0u64;
    loop {
        let read = reader.next_record(|head, block| read_back_digests(&head.header, block));
        let (head, end, got) = match read {
            Ok(Some(x)) => x,
            Ok(None) => break,
            Err(e) => {
                note(&mut c, format!("the container cannot be read back: {e}"));
                break;
            }
        };
        let mut entry = [0u8; ENTRY_LEN];
        if index >= count || expected.read_exact(&mut entry).is_err() {
            note(&mut c, format!("record {index} at offset {} was not expected", head.offset));
            index += 1;
            continue;
        }
        let exp = Expected::decode(&entry);
        let at = format!("record {index} at offset {}", head.offset);
        if head.offset != exp.member_offset || end.end != exp.member_offset + exp.member_len {
            note(
                &mut c,
                format!(
                    "{at}: gzip member is {}..{} but the writer reported {}..{}",
                    head.offset,
                    end.end,
                    exp.member_offset,
                    exp.member_offset + exp.member_len
                ),
            );
        }
        if !end.member_ended || !end.trailer_ok {
            note(
                &mut c,
                format!("{at}: not exactly one record per gzip member, closed by CRLF CRLF"),
            );
        }
        let block_digest = head.header.get("WARC-Block-Digest").unwrap_or("");
        if block_digest != sha1_base32(&got.block_sha1) || got.block_sha1 != exp.block_sha1 {
            note(
                &mut c,
                format!(
                    "{at}: block bytes differ from the source (WARC-Block-Digest {block_digest})"
                ),
            );
        }
        if let Some(pd) = head.header.get("WARC-Payload-Digest") {
            if pd != sha1_base32(&got.payload_sha1) {
                note(&mut c, format!("{at}: WARC-Payload-Digest {pd} does not match the payload"));
            }
        }
        if got.payload_sha512 != exp.payload_sha512 || got.payload_len != exp.payload_len {
            note(
                &mut c,
                format!(
                    "{at}: payload read back has {} bytes, SHA-512 {}; the source had {} bytes, SHA-512 {}",
                    got.payload_len,
                    hex(&got.payload_sha512),
                    exp.payload_len,
                    hex(&exp.payload_sha512)
                ),
            );
        }
        if exp.from_source {
            c.payload_bytes_out += got.payload_len;
        }
        c.records_compared += 1;
        index += 1;
    }
    if index < count {
        note(&mut c, format!("{} records written but not found when reading back", count - index));
    }
    if c.payload_bytes_in != c.payload_bytes_out {
        let m = format!("payload bytes in {} != out {}", c.payload_bytes_in, c.payload_bytes_out);
        note(&mut c, m);
    }
    if mismatch_count > c.mismatches.len() as u64 {
        let more = mismatch_count - c.mismatches.len() as u64;
        c.mismatches.push(format!("... and {more} more mismatches"));
    }
    c.conserved = mismatch_count == 0;
    // Hash whatever follows the last record too, so the digest covers the whole file. The
    // hashing reader saw every byte the WARC reader pulled, buffered or not.
    let (size, sha512) = match reader.into_inner() {
        Some(mut rest) => {
            io::copy(&mut rest, &mut io::sink())?;
            (rest.len, hex(&rest.sha.finalize()))
        }
        None => {
            let mut again =
                HashingReader { inner: File::open(container)?, sha: Sha512::new(), len: 0 };
            io::copy(&mut again, &mut io::sink())?;
            (again.len, hex(&again.sha.finalize()))
        }
    };
    Ok(Verified { conservation: c, size, sha512 })
}

/// Digests of a block read back, with the payload located the way any WARC reader would:
/// after the HTTP headers of an HTTP `response`, else the whole block.
fn read_back_digests(
    header: &crate::formats::warc::WarcHeader,
    block: &mut dyn Read,
) -> io::Result<BlockDigests> {
    let is_http_response = header.warc_type() == Some("response")
        && header.target_uri().is_some_and(|u| u.starts_with("http:") || u.starts_with("https:"))
        && header.get("Content-Type").is_some_and(|t| t.starts_with("application/http"));
    let mut prefix = Vec::new();
    let mut payload_offset = 0;
    if is_http_response {
        block.take(MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut prefix)?;
        if let HttpHead::Complete(n) = response_head(&prefix) {
            payload_offset = n as u64;
        }
    }
    let mut h = BlockHasher::new(payload_offset);
    h.update(&prefix);
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = block.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finish())
}

struct HashingReader<R> {
    inner: R,
    sha: Sha512,
    len: u64,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
}
