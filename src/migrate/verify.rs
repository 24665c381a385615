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

use rayon::prelude::*;

use super::report::Conservation;
use crate::formats::digest::{BlockDigests, BlockHasher, hex, sha1_base32};
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::segment::FileRange;
use crate::formats::warc::payload;
use crate::formats::warc::{WarcError, WarcHeader, WarcReader, WrittenRecord};

const ENTRY_LEN: usize = 20 + 20 + 64 + 8 + 8 + 8 + 1;

/// Mismatches listed one by one; more are only counted.
const MAX_LISTED_MISMATCHES: usize = 100;

/// What one written record must look like when read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expected {
    /// SHA-1 of the block as read from the source.
    pub block_sha1: [u8; 20],
    /// SHA-1 of the payload as read from the source.
    pub payload_sha1: [u8; 20],
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
    /// The expectation for a record as the writer reported it.
    pub(crate) fn new(written: &WrittenRecord, from_source: bool) -> Self {
        let d = &written.digests;
        Expected {
            block_sha1: d.block_sha1,
            payload_sha1: d.payload_sha1,
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
        b[20..40].copy_from_slice(&self.payload_sha1);
        b[40..104].copy_from_slice(&self.payload_sha512);
        b[104..112].copy_from_slice(&self.payload_len.to_le_bytes());
        b[112..120].copy_from_slice(&self.member_offset.to_le_bytes());
        b[120..128].copy_from_slice(&self.member_len.to_le_bytes());
        b[128] = self.from_source as u8;
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
        let mut payload_sha1 = [0u8; 20];
        payload_sha1.copy_from_slice(&b[20..40]);
        let mut payload_sha512 = [0u8; 64];
        payload_sha512.copy_from_slice(&b[40..104]);
        Expected {
            block_sha1,
            payload_sha1,
            payload_sha512,
            payload_len: u(104..112),
            member_offset: u(112..120),
            member_len: u(120..128),
            from_source: b[128] != 0,
        }
    }
}

/// Expectations spilled to a temporary file as they are produced.
pub(crate) struct ExpectationLog {
    out: BufWriter<File>,
    count: u64,
    payload_bytes: u64,
}

impl ExpectationLog {
    /// An empty log in a new temporary file.
    pub(crate) fn new() -> io::Result<Self> {
        Ok(ExpectationLog {
            out: BufWriter::new(tempfile::tempfile()?),
            count: 0,
            payload_bytes: 0,
        })
    }

    /// Appends one expectation.
    pub(crate) fn push(&mut self, e: &Expected) -> io::Result<()> {
        self.count += 1;
        if e.from_source {
            self.payload_bytes += e.payload_len;
        }
        self.out.write_all(&e.encode())
    }

    /// Payload bytes of the source records logged so far.
    pub(crate) fn source_payload_bytes(&self) -> u64 {
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
pub(crate) struct Verified {
    /// The comparison.
    pub conservation: Conservation,
    /// Size of the container file.
    pub size: u64,
    /// SHA-512 of the container file (hex).
    pub sha512: String,
}

/// One way a record read back from the container differs from what was read from the ARC.
#[derive(Debug, thiserror::Error)]
enum Mismatch {
    /// The member's range does not start as a WARC (nor a gzip member holding one).
    #[error("{0}")]
    NotWarc(WarcError),
    /// The member's range holds no record at all.
    #[error("the member range holds no record")]
    NoRecord,
    /// The record cannot be parsed back.
    #[error("cannot be read back: {0}")]
    Unreadable(WarcError),
    /// The record ends before or after its gzip member does, or is not gzipped.
    #[error("the record does not fill its gzip member exactly ({read} of {member_len} bytes)")]
    MemberNotFilled {
        /// Where the record ended, from the member's start.
        read: u64,
        /// The member's length as the writer reported it.
        member_len: u64,
    },
    /// The block is not followed by the two CRLFs that end a record.
    #[error("the block is not closed by CRLF CRLF")]
    NoTrailer,
    /// A second record follows in the same member.
    #[error("more than one record in the member")]
    SecondRecord,
    /// The block's bytes, or its stated digest, differ from the source's.
    #[error("block bytes differ from the source (WARC-Block-Digest {stated})")]
    Block {
        /// The WARC-Block-Digest field as written (empty when absent).
        stated: String,
    },
    /// The WARC-Payload-Digest field is not the SHA-1 of the source's payload.
    #[error("WARC-Payload-Digest {stated} does not match the payload")]
    PayloadDigest {
        /// The field as written.
        stated: String,
    },
    /// The payload read back differs in length or SHA-512 from the source's.
    #[error(
        "payload read back has {} bytes, SHA-512 {}; the source had {} bytes, SHA-512 {}",
        read_len,
        hex(read_sha512),
        source_len,
        hex(source_sha512)
    )]
    Payload {
        /// Length read back.
        read_len: u64,
        /// SHA-512 read back.
        read_sha512: [u8; 64],
        /// Length in the source.
        source_len: u64,
        /// SHA-512 in the source.
        source_sha512: [u8; 64],
    },
}

/// A disagreement between the container and the expectation log, as the report lists it.
#[derive(Debug, thiserror::Error)]
enum Discrepancy {
    /// A record's member does not start where the previous one ended.
    #[error("record {index} at offset {offset}: expected at offset {expected} (gap or overlap)")]
    Misplaced {
        /// The record's number in the container.
        index: u64,
        /// Where the writer says its member starts.
        offset: u64,
        /// Where the previous member ended.
        expected: u64,
    },
    /// A record read back differs from the source.
    #[error("record {index} at offset {offset}: {mismatch}")]
    Record {
        /// The record's number in the container.
        index: u64,
        /// Where its member starts.
        offset: u64,
        /// How it differs.
        mismatch: Mismatch,
    },
    /// Bytes follow the last member (or the members run past the end).
    #[error("the records end at {end} but the file has {size} bytes")]
    Tail {
        /// Where the last member ends.
        end: u64,
        /// The file's size.
        size: u64,
    },
    /// The payload bytes read back do not add up to those read from the ARC.
    #[error("payload bytes in {bytes_in} != out {bytes_out}")]
    Totals {
        /// Payload bytes read from the ARC.
        bytes_in: u64,
        /// Payload bytes read back.
        bytes_out: u64,
    },
}

/// Expectations checked in parallel at a time (bounded, so memory stays flat).
const VERIFY_CHUNK: usize = 256;

/// Reads `container` back and compares every record with the logged expectations.
///
/// Each record's gzip member is read from disk at the range the writer reported and parsed
/// as a WARC of its own, so the check also proves that every member stands alone. The members
/// must tile the file exactly. Records are checked in parallel; the file's SHA-512 is computed
/// alongside.
pub(crate) fn verify_container(container: &Path, log: ExpectationLog) -> io::Result<Verified> {
    let payload_bytes_in = log.source_payload_bytes();
    let (mut expected, count) = log.into_reader()?;
    let file = File::open(container)?;
    let size = file.metadata()?.len();
    let name = container.display().to_string();
    let (sha512, checked) = rayon::join(
        || crate::formats::digest::sha512_file(container).map(|(_, h)| h),
        || -> io::Result<Conservation> {
            let mut c = Conservation { payload_bytes_in, ..Conservation::default() };
            let mut mismatches = 0u64;
            let mut note = |c: &mut Conservation, d: Discrepancy| {
                mismatches += 1;
                if c.mismatches.len() < MAX_LISTED_MISMATCHES {
                    c.mismatches.push(d.to_string());
                }
            };
            let mut next_offset = 0u64;
            let mut index = 0u64;
            while index < count {
                let n = (count - index).min(VERIFY_CHUNK as u64) as usize;
                let mut chunk = Vec::with_capacity(n);
                for _ in 0..n {
                    let mut entry = [0u8; ENTRY_LEN];
                    expected.read_exact(&mut entry)?;
                    chunk.push(Expected::decode(&entry));
                }
                let results: Vec<Result<u64, Vec<Mismatch>>> =
                    chunk.par_iter().map(|exp| verify_record(&file, &name, exp)).collect();
                for (i, (exp, r)) in chunk.iter().zip(results).enumerate() {
                    let (index, offset) = (index + i as u64, exp.member_offset);
                    if offset != next_offset {
                        note(
                            &mut c,
                            Discrepancy::Misplaced { index, offset, expected: next_offset },
                        );
                    }
                    next_offset = exp.member_offset + exp.member_len;
                    match r {
                        Ok(payload_len) => {
                            c.records_compared += 1;
                            if exp.from_source {
                                c.payload_bytes_out += payload_len;
                            }
                        }
                        Err(problems) => {
                            for mismatch in problems {
                                note(&mut c, Discrepancy::Record { index, offset, mismatch });
                            }
                        }
                    }
                }
                index += n as u64;
            }
            if next_offset != size {
                note(&mut c, Discrepancy::Tail { end: next_offset, size });
            }
            if c.payload_bytes_in != c.payload_bytes_out {
                let (bytes_in, bytes_out) = (c.payload_bytes_in, c.payload_bytes_out);
                note(&mut c, Discrepancy::Totals { bytes_in, bytes_out });
            }
            if mismatches > c.mismatches.len() as u64 {
                let more = mismatches - c.mismatches.len() as u64;
                c.mismatches.push(format!("... and {more} more mismatches"));
            }
            c.conserved = mismatches == 0;
            Ok(c)
        },
    );
    Ok(Verified { conservation: checked?, size, sha512: sha512? })
}

/// Reads one record's member from disk and compares it with what was expected. Returns the
/// payload length read back, or every problem found.
fn verify_record(file: &File, name: &str, exp: &Expected) -> Result<u64, Vec<Mismatch>> {
    let range = FileRange::new(file, exp.member_offset, exp.member_len);
    let mut problems = Vec::new();
    let mut reader = WarcReader::new(range, name).map_err(|e| vec![Mismatch::NotWarc(e)])?;
    let (head, end, got) =
        match reader.next_record(|head, block| read_back_digests(&head.header, block)) {
            Ok(Some(x)) => x,
            Ok(None) => return Err(vec![Mismatch::NoRecord]),
            Err(e) => return Err(vec![Mismatch::Unreadable(e)]),
        };
    if !reader.is_gzip() || !end.member_ended || end.end != exp.member_len {
        problems.push(Mismatch::MemberNotFilled { read: end.end, member_len: exp.member_len });
    }
    if !end.trailer_ok {
        problems.push(Mismatch::NoTrailer);
    }
    if !matches!(reader.next_record(|_, _| Ok(())), Ok(None)) {
        problems.push(Mismatch::SecondRecord);
    }
    let block_digest = head.header.get("WARC-Block-Digest").unwrap_or("");
    if got.block_sha1 != exp.block_sha1 || block_digest != sha1_base32(&exp.block_sha1) {
        problems.push(Mismatch::Block { stated: block_digest.into() });
    }
    if let Some(pd) = head.header.get("WARC-Payload-Digest") {
        // The block is identical (checked above) and so is the payload range (checked below),
        // so the payload's SHA-1 is the one computed from the source.
        if pd != sha1_base32(&exp.payload_sha1) {
            problems.push(Mismatch::PayloadDigest { stated: pd.into() });
        }
    }
    if got.payload_sha512 != exp.payload_sha512 || got.payload_len != exp.payload_len {
        problems.push(Mismatch::Payload {
            read_len: got.payload_len,
            read_sha512: got.payload_sha512,
            source_len: exp.payload_len,
            source_sha512: exp.payload_sha512,
        });
    }
    if problems.is_empty() { Ok(got.payload_len) } else { Err(problems) }
}

/// Digests of a block read back, with the payload located the way any WARC reader would:
/// after the HTTP headers of an HTTP `response`, else the whole block. The payload's SHA-1 is
/// not recomputed (see [`verify_record`]).
fn read_back_digests(header: &WarcHeader, block: &mut dyn Read) -> io::Result<BlockDigests> {
    let (kind, uri) = (header.warc_type(), header.target_uri());
    let mut prefix = Vec::new();
    let mut payload_offset = 0;
    if payload::holds_http_message(kind, uri) {
        block.take(MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut prefix)?;
        payload_offset = payload::payload_start_of(header, &prefix).offset();
    }
    let mut h = BlockHasher::without_payload_sha1(payload_offset);
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

#[cfg(test)]
mod tests {
    use super::*;
    use sha1::{Digest as _, Sha1};
    use sha2::Sha512;

    /// A `resource` record holding `block`, with its true block digest.
    fn record(block: &[u8]) -> Vec<u8> {
        let digest = sha1_base32(&Sha1::digest(block));
        let mut r = format!(
            "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\n\
             WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://e.org/\r\n\
             WARC-Block-Digest: {digest}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// The record of `bytes` checked against the source that `edit` makes of the true one.
    fn check(bytes: &[u8], edit: impl FnOnce(&mut Expected)) -> Result<u64, Vec<Mismatch>> {
        let block = b"hello";
        let mut exp = Expected {
            block_sha1: Sha1::digest(block).into(),
            payload_sha1: Sha1::digest(block).into(),
            payload_sha512: Sha512::digest(block).into(),
            payload_len: block.len() as u64,
            member_offset: 0,
            member_len: bytes.len() as u64,
            from_source: true,
        };
        edit(&mut exp);
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        verify_record(&file, "t.warc.gz", &exp)
    }

    #[test]
    fn each_comparison_has_its_mismatch() {
        let member = gz(&record(b"hello"));
        assert_eq!(check(&member, |_| {}).unwrap(), 5);
        let payload = check(&member, |e| e.payload_sha512[0] ^= 1).unwrap_err();
        assert!(matches!(payload[..], [Mismatch::Payload { read_len: 5, source_len: 5, .. }]));
        assert!(payload[0].to_string().starts_with("payload read back has 5 bytes, SHA-512 "));
        let block = check(&member, |e| e.block_sha1[0] ^= 1).unwrap_err();
        assert!(matches!(&block[..], [Mismatch::Block { stated }] if stated.starts_with("sha1:")));
        // Not gzipped: the record cannot be its own member.
        let plain = record(b"hello");
        let unzipped = check(&plain, |_| {}).unwrap_err();
        assert!(matches!(unzipped[..], [Mismatch::MemberNotFilled { .. }]), "{unzipped:?}");
        // Two records in one member: the first does not end it, and the second is seen.
        let two = gz(&[record(b"hello"), record(b"hello")].concat());
        let second = check(&two, |_| {}).unwrap_err();
        assert!(
            matches!(second[..], [Mismatch::MemberNotFilled { .. }, Mismatch::SecondRecord]),
            "{second:?}"
        );
        let nothing = check(b"", |_| {}).unwrap_err();
        assert!(
            matches!(nothing[..], [Mismatch::NoRecord] | [Mismatch::NotWarc(_)]),
            "{nothing:?}"
        );
    }
}
