//! One ARC put back together from its records, in ARC order: the stream (every byte, hashed),
//! and for a gzip ARC the file (each member compressed again with its header and settings,
//! raw regions and record-less members as found), with the checks made on the way.

use std::io::{self, Write};

use sha1::{Digest, Sha1};

use crate::formats::arc_rebuild::{
    OrphanMembers, RebuildSummary, decode_gap, decode_gap_runs, locate_byte_change,
};
use crate::formats::gzip_rebuild::DeflateParams;

use super::gz_file::{GzFileWriter, Hashed};
use super::stream::ArcPiece;
use super::{ArcRebuild, Difference, Outcome, RebuildError};

/// Differences kept in a report; more are counted.
const MAX_DIFFERENCES: usize = 1000;
/// The longest line end kept (`eol`).
const MAX_EOL: u64 = 64;
/// The longest decompressed record-less member (blank lines only).
const MAX_ORPHAN_OUT: u64 = 16 << 20;

/// What the rebuild of one ARC knows as it goes.
pub(super) struct Assembler {
    pub(super) report: ArcRebuild,
    gzip: bool,
    stream: Hashed,
    /// The gzip file, when it is made (`None`: stream only, or a plain ARC).
    file: Option<GzFileWriter>,
    /// Defaults of the gzip file (from the rebuild record, read ahead).
    default_header: Vec<u8>,
    default_params: Option<DeflateParams>,
    /// Bytes of the current member (or of the plain file) given back so far.
    member_pos: u64,
    /// The member the last record was in.
    member: Option<u64>,
    framing: Framing,
}

/// The default gzip header when the rebuild record gives none.
const PLAIN_GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

impl Assembler {
    /// Starts an ARC. `output` gets the stream, or the file (`make_file`); `defaults` is the
    /// rebuild record read ahead (needed for the file of a gzip ARC).
    pub(super) fn new(
        report: ArcRebuild,
        output: Option<Box<dyn Write + Send>>,
        make_file: bool,
        defaults: Option<&RebuildSummary>,
    ) -> Result<Self, RebuildError> {
        let gzip = report.gzip;
        let file_made = gzip && make_file;
        let (stream_out, file_out) = if file_made { (None, output) } else { (output, None) };
        let default_params = defaults
            .and_then(|d| d.deflate.as_deref())
            .and_then(|d| d.parse::<DeflateParams>().ok());
        let default_header = defaults
            .and_then(|d| d.gzip_header.clone())
            .unwrap_or_else(|| PLAIN_GZIP_HEADER.to_vec());
        let file = match file_made {
            // As many threads compress as the caller's pool has (`--jobs`).
            true => Some(GzFileWriter::new(file_out, rayon::current_num_threads())?),
            false => None,
        };
        Ok(Assembler {
            report,
            gzip,
            stream: Hashed::new(stream_out),
            file,
            default_header,
            default_params,
            member_pos: 0,
            member: None,
            framing: Framing::default(),
        })
    }

    fn differ(&mut self, offset: u64, in_member: Option<u64>, what: String) {
        self.report.differences_total += 1;
        if self.report.differences.len() < MAX_DIFFERENCES {
            self.report.differences.push(Difference { offset, in_member, what });
        }
    }

    /// Bytes of the stream that are in the current member (or the plain file).
    fn emit(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)?;
        if let (Some(f), Some(_)) = (&mut self.file, self.member) {
            f.member_bytes(bytes)?;
        }
        self.member_pos += bytes.len() as u64;
        Ok(())
    }

    /// Bytes not part of the record's block (`part` of its framing): given back, and in the
    /// record's CRC.
    fn emit_framing(&mut self, bytes: &[u8], part: &'static str) -> io::Result<()> {
        let at = if self.gzip { self.member_pos } else { self.stream.len };
        self.framing.add(bytes, at, part);
        self.emit(bytes)
    }

    fn emit_gap(
        &mut self,
        text: Option<&str>,
        default: &[u8],
        part: &'static str,
    ) -> Result<(), RebuildError> {
        let Some(text) = text else { return Ok(self.emit_framing(default, part)?) };
        let mut err = Ok(());
        decode_gap_runs(text, |unit, n| {
            for _ in 0..n {
                if err.is_ok() {
                    err = self.emit_framing(unit, part);
                }
            }
        })
        .map_err(|e| RebuildError::Stored(format!("a gap: {e}")))?;
        Ok(err?)
    }

    /// Something starts at original offset `next` (`None`: not known): the member being
    /// given back, if any, ends there. `what` names it, to check that it starts in the file
    /// rebuilt where it did in the original.
    fn end_member(&mut self, next: Option<u64>, what: Option<&'static str>) -> io::Result<()> {
        self.member = None;
        // Where the file rebuilt should be the original's byte for byte, each thing in it
        // starts where it did (a header or settings not recovered, or a difference already
        // found, shift everything after them: no use saying so at every member).
        let reproducible = self.default_params.is_some()
            && self.report.members_unrecovered == 0
            && self.report.differences_total == 0;
        match &mut self.file {
            Some(f) => f.mark(next, what.filter(|_| reproducible)),
            None => Ok(()),
        }
    }

    /// Record-less members: verbatim in the file, decompressed in the stream.
    fn orphans(&mut self, items: &[OrphanMembers]) -> Result<(), RebuildError> {
        for o in items {
            self.end_member(Some(o.offset), Some("a record-less member"))?;
            let mut inflated = Vec::new();
            let mut d = flate2::read::GzDecoder::new(&o.bytes[..]);
            let ok =
                io::Read::read_to_end(&mut io::Read::take(&mut d, MAX_ORPHAN_OUT), &mut inflated);
            if ok.is_err() {
                self.differ(o.offset, None, "a record-less member does not inflate".into());
            }
            for _ in 0..o.count {
                self.stream.write_all(&inflated)?;
                if let Some(f) = &mut self.file {
                    f.verbatim(o.bytes.clone())?;
                }
                self.report.members += 1;
                self.report.members_reproduced += 1;
            }
        }
        Ok(())
    }

    /// Ends what comes before `p`: the member open, then `p`'s record-less members; `what`
    /// starts next, at `p`'s offset.
    fn before_piece(&mut self, p: &ArcPiece, what: &'static str) -> Result<(), RebuildError> {
        let at = p.offset.first;
        self.end_member(Some(p.field.pre.first().map_or(at, |o| o.offset)), None)?;
        self.orphans(&p.field.pre)?;
        Ok(self.end_member(Some(at), Some(what))?)
    }

    /// Starts the record's member in the file when it is a new one.
    fn enter_member(&mut self, p: &ArcPiece) -> Result<(), RebuildError> {
        if !self.gzip || self.member == Some(p.offset.first) {
            return Ok(());
        }
        self.before_piece(p, "a member")?;
        self.member = Some(p.offset.first);
        self.member_pos = 0;
        self.report.members += 1;
        if self.file.is_some() {
            let header = p.field.gz.clone().unwrap_or_else(|| self.default_header.clone());
            let params = match p.field.z.as_deref() {
                Some(z) => z.parse::<DeflateParams>().ok(),
                None => self.default_params,
            };
            let params = match params {
                Some(p) => p,
                None => {
                    self.report.members_unrecovered += 1;
                    "zlib:6".parse().map_err(|_| RebuildError::Internal("zlib:6"))?
                }
            };
            if let Some(f) = &mut self.file {
                f.open(p.offset.first, header, params)?;
            }
        }
        Ok(())
    }

    /// Gives back one record: its framing and its block, read from `block` chunk by chunk.
    pub(super) fn piece(
        &mut self,
        p: &ArcPiece,
        mut next_chunk: impl FnMut() -> Result<Option<Vec<u8>>, RebuildError>,
    ) -> Result<(), RebuildError> {
        let at = p.offset.first;
        let in_member = (self.gzip && !p.field.raw).then_some(p.offset.in_member);
        if p.field.raw {
            self.before_piece(p, "a raw region")?;
        } else {
            self.enter_member(p)?;
            if !self.gzip && !p.field.pre.is_empty() {
                self.differ(at, None, "record-less members in a plain ARC".into());
            }
        }
        self.framing = Framing::default();
        if !p.field.raw {
            self.emit_gap(p.field.lead.as_deref(), b"", "lead")?;
            let expected = if self.gzip { p.offset.in_member } else { at };
            let found = if self.gzip { self.member_pos } else { self.stream.len };
            if found != expected {
                self.differ(at, in_member, format!("the record starts at {found}"));
            }
            if let Some(line) = &p.header_line {
                self.emit_framing(line, "header line")?;
                let eol = match p.field.eol.as_deref() {
                    Some(e) => decode_gap(e, MAX_EOL)
                        .map_err(|e| RebuildError::Stored(format!("eol: {e}")))?,
                    None => b"\n".to_vec(),
                };
                self.emit_framing(&eol, "header line's end")?;
            }
        }
        let mut sha1 = Sha1::new();
        let mut block_len = 0u64;
        while let Some(chunk) = next_chunk()? {
            sha1.update(&chunk);
            block_len += chunk.len() as u64;
            if p.field.raw {
                self.stream.write_all(&chunk)?;
                if let Some(f) = &mut self.file {
                    f.verbatim(chunk)?;
                }
            } else {
                self.emit(&chunk)?;
            }
        }
        if !p.field.raw {
            self.emit_gap(p.field.tail.as_deref(), b"\n", "tail")?;
        }
        self.report.records += 1;
        if block_len != p.block_len {
            self.differ(at, in_member, format!("block of {block_len} bytes, not {}", p.block_len));
        }
        if let Some(stated) = &p.block_digest
            && stated.to_ascii_lowercase().starts_with("sha1:")
        {
            let found = crate::formats::digest::sha1_base32(&sha1.finalize());
            if !found.eq_ignore_ascii_case(stated) {
                self.differ(at, in_member, format!("WARC-Block-Digest {stated}, found {found}"));
            }
        }
        self.check_framing(p, block_len, in_member);
        Ok(())
    }

    /// Compares the framing given back with the record's CRC-32; names the byte that differs
    /// when a change of one byte explains it.
    fn check_framing(&mut self, p: &ArcPiece, block_len: u64, in_member: Option<u64>) {
        let framing = std::mem::take(&mut self.framing);
        let crc = framing.crc.sum();
        if crc == p.field.crc {
            return;
        }
        let record =
            format!("record {} at offset {} of {}", p.warcinfo_id, p.container_offset, p.container);
        let at = p.offset.first;
        match framing.locate(p.field.crc) {
            Some((pos, part, here, was)) => {
                let (offset, in_member) = if self.gzip { (at, Some(pos)) } else { (pos, None) };
                let what = format!(
                    "a byte of the {part} is {} here, {} in the original (the one change of \
                     one byte that gives the stated CRC-32 {:08x}; {record})",
                    show_byte(here),
                    show_byte(was),
                    p.field.crc
                );
                self.differ(offset, in_member, what);
            }
            None => {
                let part = framing_suspect(p, block_len);
                let what = format!(
                    "{part} differ from the original (CRC-32 {crc:08x}, stated {:08x}; {record})",
                    p.field.crc
                );
                self.differ(at, in_member, what);
            }
        }
    }

    /// The ARC's last records are given: the rebuild record's record-less members, then the
    /// digests compared with the rebuild record's.
    pub(super) fn finish(
        mut self,
        summary: Option<&RebuildSummary>,
    ) -> Result<(ArcRebuild, Option<Box<dyn Write + Send>>), RebuildError> {
        if let Some(s) = summary {
            let end = s.post.first().map_or(s.file_length, |o| o.offset);
            self.end_member(Some(end), None)?;
            self.orphans(&s.post)?;
        } else {
            self.end_member(None, None)?;
        }
        let (stream_out, len, sha) = self.stream.done();
        let file = match self.file.take() {
            Some(f) => {
                let w = f.finish()?;
                self.report.members_reproduced += w.members_reproduced;
                if let Some(d) = w.misplaced {
                    self.report.differences_total += 1;
                    self.report.differences.insert(0, d);
                    self.report.differences.truncate(MAX_DIFFERENCES);
                }
                Some((w.out, w.len, w.sha512))
            }
            None => None,
        };
        let mut r = self.report;
        let expect = |bytes, sha512: &str, want_len, want_sha: &str| Outcome {
            bytes,
            sha512: sha512.to_string(),
            expected_bytes: want_len,
            expected_sha512: want_sha.to_string(),
            equal: bytes == want_len && sha512 == want_sha,
        };
        let out = match summary {
            Some(s) => {
                r.stream = Some(expect(len, &sha, s.stream_length, &s.stream_sha512));
                r.rebuildable = s.rebuildable();
                r.reasons = s.reasons.clone();
                r.deflate = s.deflate.clone();
                r.members_expected = s.gzip.then_some(s.members);
                match file {
                    Some((o, flen, fsha)) => {
                        r.file = Some(expect(flen, &fsha, s.file_length, &s.file_sha512));
                        o
                    }
                    None if !r.gzip => {
                        r.file = Some(expect(len, &sha, s.file_length, &s.file_sha512));
                        stream_out
                    }
                    None => stream_out,
                }
            }
            None => {
                r.differences_total += 1;
                r.differences.push(Difference {
                    offset: 0,
                    in_member: None,
                    what: "no rebuild record: the stream cannot be checked".into(),
                });
                let o = Outcome {
                    bytes: len,
                    sha512: sha.clone(),
                    expected_bytes: 0,
                    expected_sha512: String::new(),
                    equal: false,
                };
                r.stream = Some(o);
                file.and_then(|f| f.0).or(stream_out)
            }
        };
        if let Some(s) = &r.stream
            && !s.equal
            && summary.is_some()
        {
            r.differences_total += 1;
            if r.differences.len() < MAX_DIFFERENCES {
                r.differences.push(Difference {
                    offset: 0,
                    in_member: None,
                    what: format!(
                        "the stream rebuilt ({} bytes, SHA-512 {}) is not the original's ({} \
                         bytes, SHA-512 {})",
                        s.bytes, s.sha512, s.expected_bytes, s.expected_sha512
                    ),
                });
            }
        }
        Ok((r, out))
    }
}

/// The longest framing whose changed byte is looked for (a lead or tail can be a long run of
/// blank lines; the search costs 255 steps a byte). A framing with several bytes changed
/// matches some one-byte change by chance with odds of 255 x its length / 2^32: at most 0.1 %
/// here, 0.002 % for a usual header line of 300 bytes.
const MAX_FRAMING_KEPT: usize = 16 << 10;

/// A record's framing bytes as given back: their CRC-32, and the bytes themselves (when not
/// longer than [`MAX_FRAMING_KEPT`]) with where each part went, to name a byte that differs.
#[derive(Default)]
struct Framing {
    crc: flate2::Crc,
    bytes: Vec<u8>,
    /// Where each part starts: index in `bytes`, offset given back (in the member for a gzip
    /// ARC), part's name.
    parts: Vec<(usize, u64, &'static str)>,
    too_long: bool,
}

impl Framing {
    fn add(&mut self, bytes: &[u8], at: u64, part: &'static str) {
        self.crc.update(bytes);
        if self.too_long || self.bytes.len() + bytes.len() > MAX_FRAMING_KEPT {
            self.too_long = true;
            return;
        }
        if self
            .parts
            .last()
            .is_none_or(|&(i, a, p)| p != part || a + (self.bytes.len() - i) as u64 != at)
        {
            self.parts.push((self.bytes.len(), at, part));
        }
        self.bytes.extend_from_slice(bytes);
    }

    /// The offset, part, byte found and byte of the original, when one byte explains `stated`.
    fn locate(&self, stated: u32) -> Option<(u64, &'static str, u8, u8)> {
        if self.too_long {
            return None;
        }
        let (k, was) = locate_byte_change(&self.bytes, stated)?;
        let &(i, at, part) = self.parts.iter().rev().find(|(i, ..)| *i <= k)?;
        Some((at + (k - i) as u64, part, self.bytes[k], was))
    }
}

/// A byte as its hex value, and as a character when it prints as one.
fn show_byte(b: u8) -> String {
    match b {
        0x21..=0x7e => format!("{b:#04x} '{}'", b as char),
        _ => format!("{b:#04x}"),
    }
}

/// Which of a record's framing bytes most likely differ: a header line whose length field is
/// not the block's length is damaged; else the CRC cannot say which part.
fn framing_suspect(p: &ArcPiece, block_len: u64) -> &'static str {
    match &p.header_line {
        Some(line) => {
            let last = line.rsplit(|b| *b == b' ').next().unwrap_or_default();
            let stated = std::str::from_utf8(last).ok().and_then(|t| t.trim().parse::<u64>().ok());
            match stated {
                Some(n) if n != block_len => "the header line's bytes",
                _ => "the framing bytes (lead, header line, line end or tail)",
            }
        }
        None => "the framing bytes (lead or tail)",
    }
}
