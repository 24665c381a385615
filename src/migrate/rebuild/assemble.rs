//! One ARC put back together from its records, in ARC order: the stream (every byte, hashed),
//! and for a gzip ARC the file (each member compressed again with its header and settings,
//! raw regions and record-less members as found), with the checks made on the way.

use std::io::{self, Write};

use sha1::{Digest, Sha1};

use crate::formats::arc_rebuild::{
    OrphanMembers, RebuildSummary, decode_gap, decode_gap_runs, gap_len, locate_byte_change,
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
/// Without a rebuild record read ahead, nothing states the ARC's length: the bytes repeat
/// counts of fields (gaps, record-less members) may give in all. Such a rebuild is never
/// what it should be (nothing to check it against), so this only bounds the work.
const UNSTATED_EXPANSION: u64 = 64 << 20;
/// Bytes of a repeated gap given back at a time.
const REPEAT_CHUNK: usize = 64 << 10;

/// What the rebuild record states of the ARC, against which every count or length decoded
/// from a field is checked before it is expanded: a field edited to repeat a byte 10^18 times
/// is refused before anything of it is written.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Budget {
    /// Stream bytes stated (`None`: no rebuild record).
    stream: Option<u64>,
    /// File bytes stated (a gzip ARC's).
    file: Option<u64>,
    /// Gzip members stated (none in a plain ARC).
    members: Option<u64>,
    /// Bytes of record-less members put in the file so far.
    verbatim: u64,
    /// Bytes given back from repeat counts so far (bounded without a rebuild record).
    expanded: u64,
}

impl Budget {
    pub(super) fn of(summary: Option<&RebuildSummary>) -> Budget {
        match summary {
            Some(s) => Budget {
                stream: Some(s.stream_length),
                file: s.gzip.then_some(s.file_length),
                // A plain ARC has no gzip member: a record-less one is refused.
                members: Some(if s.gzip { s.members } else { 0 }),
                ..Budget::default()
            },
            None => Budget::default(),
        }
    }
}

/// Where the record being given back is, for the error that refuses one of its fields.
#[derive(Debug, Clone, Default)]
pub(super) struct Place {
    pub(super) container: String,
    pub(super) offset: u64,
}

/// A record's block as given back: its length and SHA-1.
struct BlockSeen {
    len: u64,
    sha1: [u8; 20],
}

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
    budget: Budget,
    /// The record (or rebuild record) being given back.
    pub(super) place: Place,
}

/// The default gzip header when the rebuild record gives none.
const PLAIN_GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

impl Assembler {
    /// Starts an ARC. `output` gets the stream, or the file (`make_file`); `defaults` is the
    /// rebuild record read ahead: the file's defaults, and what bounds the rebuild.
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
            budget: Budget::of(defaults),
            place: Place::default(),
        })
    }

    /// Refuses what a field would make when the rebuild record states less.
    fn refuse(&self, what: String) -> RebuildError {
        RebuildError::Record {
            container: self.place.container.clone(),
            offset: self.place.offset,
            what: format!("{what}: refused, nothing more of this ARC is written"),
        }
    }

    /// Checks that `n` more stream bytes (`what` would give them) stay within the stated
    /// stream length; `counted`: they come from a repeat count.
    fn allow_stream(&mut self, n: u64, counted: bool, what: &str) -> Result<(), RebuildError> {
        let made = self.stream.len;
        let fits = match self.budget.stream {
            Some(stated) => made.checked_add(n).is_some_and(|t| t <= stated),
            None => !counted || self.budget.expanded.saturating_add(n) <= UNSTATED_EXPANSION,
        };
        if !fits {
            let stated = match self.budget.stream {
                Some(s) => format!("the rebuild record states {s}"),
                None => format!("no rebuild record: at most {UNSTATED_EXPANSION} from counts"),
            };
            let had = format!("{made} bytes of the stream made");
            return Err(self.refuse(format!("{what} would give {n} more bytes ({had}, {stated})")));
        }
        if counted {
            self.budget.expanded = self.budget.expanded.saturating_add(n);
        }
        Ok(())
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
        let Some(text) = text else {
            self.allow_stream(default.len() as u64, false, part)?;
            return Ok(self.emit_framing(default, part)?);
        };
        let stored = |e| RebuildError::Stored(format!("a gap: {e}"));
        let len = gap_len(text).map_err(stored)?;
        self.allow_stream(len, true, &format!("the {part} {}", short(text)))?;
        let mut runs: Vec<(Vec<u8>, u64)> = Vec::new();
        decode_gap_runs(text, |unit, n| runs.push((unit.to_vec(), n))).map_err(stored)?;
        for (unit, n) in runs {
            self.emit_repeated(&unit, n, part)?;
        }
        Ok(())
    }

    /// `unit` `n` times, a chunk at a time; the first write error ends it.
    fn emit_repeated(&mut self, unit: &[u8], n: u64, part: &'static str) -> io::Result<()> {
        let per = (REPEAT_CHUNK / unit.len().max(1)).max(1) as u64;
        let chunk = unit.repeat(per.min(n) as usize);
        let mut left = n;
        while left > 0 {
            let k = left.min(per);
            self.emit_framing(&chunk[..k as usize * unit.len()], part)?;
            left -= k;
        }
        Ok(())
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

    /// Record-less members: verbatim in the file, decompressed in the stream; their count
    /// checked first against the members, stream and file bytes the rebuild record states.
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
            self.allow_orphans(o, inflated.len() as u64)?;
            // Empty members give the stream nothing: not counted out one by one.
            let writes = if inflated.is_empty() && self.file.is_none() { 0 } else { o.count };
            for _ in 0..writes {
                if !inflated.is_empty() {
                    self.stream.write_all(&inflated)?;
                }
                if let Some(f) = &mut self.file {
                    f.verbatim(o.bytes.clone())?;
                }
            }
            self.report.members += o.count;
            self.report.members_reproduced += o.count;
        }
        Ok(())
    }

    /// Checks `o`'s count (each member inflating to `inflated` bytes) before any is given.
    fn allow_orphans(&mut self, o: &OrphanMembers, inflated: u64) -> Result<(), RebuildError> {
        let what = format!("{} record-less members at offset {}", o.count, o.offset);
        if let Some(stated) = self.budget.members
            && o.count > stated.saturating_sub(self.report.members)
        {
            let had = self.report.members;
            let why = format!("{what}: the rebuild record states {stated} members, {had} made");
            return Err(self.refuse(why));
        }
        self.allow_stream(o.count.saturating_mul(inflated), true, &what)?;
        if self.file.is_none() {
            return Ok(());
        }
        let bytes = o.count.saturating_mul(o.bytes.len() as u64);
        let fits = match self.budget.file {
            Some(stated) => self.budget.verbatim.saturating_add(bytes) <= stated,
            None => self.budget.expanded.saturating_add(bytes) <= UNSTATED_EXPANSION,
        };
        if !fits {
            return Err(self.refuse(format!("{what} would put {bytes} bytes in the file")));
        }
        self.budget.verbatim += bytes;
        // Without a stated file length, members repeated by counts share the one allowance
        // with every other count, or each field would get a fresh one.
        if self.budget.file.is_none() {
            self.budget.expanded = self.budget.expanded.saturating_add(bytes);
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
        let params = match p.field.z.as_deref() {
            Some(z) => z.parse::<DeflateParams>().ok(),
            None => self.default_params,
        };
        // Counted whether or not the file is made: an audit says it would not be identical.
        if params.is_none() {
            self.report.members_unrecovered += 1;
        }
        if self.file.is_some() {
            let header = p.field.gz.clone().unwrap_or_else(|| self.default_header.clone());
            let params = match params {
                Some(p) => p,
                None => "zlib:6".parse().map_err(|_| RebuildError::Internal("zlib:6"))?,
            };
            if let Some(f) = &mut self.file {
                f.open(p.offset.first, header, params)?;
            }
        }
        Ok(())
    }

    /// Gives back one record: its framing and its block, read from `block` chunk by chunk.
    /// Nothing goes past the stream length the rebuild record states.
    pub(super) fn piece(
        &mut self,
        p: &ArcPiece,
        next_chunk: impl FnMut() -> Result<Option<Vec<u8>>, RebuildError>,
    ) -> Result<(), RebuildError> {
        self.piece_with_payload(p, next_chunk, None)
    }

    /// [`Self::piece`] of a revisit: its block (the HTTP header), then the stored payload it
    /// leaves out, read from `payload` chunk by chunk (checked against the revisit's digest by
    /// the caller).
    pub(super) fn piece_with_payload(
        &mut self,
        p: &ArcPiece,
        next_chunk: impl FnMut() -> Result<Option<Vec<u8>>, RebuildError>,
        payload: Option<&mut dyn FnMut() -> Result<Option<Vec<u8>>, RebuildError>>,
    ) -> Result<(), RebuildError> {
        let at = p.offset.first;
        self.place = Place { container: p.container.clone(), offset: p.container_offset };
        let in_member = (self.gzip && !p.field.raw).then_some(p.offset.in_member);
        self.framing = Framing::default();
        self.head_of(p, in_member)?;
        let block = self.block_of(p, next_chunk)?;
        if let Some(next) = payload {
            self.stored_payload(next)?;
        }
        if !p.field.raw {
            self.emit_gap(p.field.tail.as_deref(), b"\n", "tail")?;
        }
        self.report.records += 1;
        if block.len != p.block_len {
            self.differ(
                at,
                in_member,
                format!("block of {} bytes, not {}", block.len, p.block_len),
            );
        }
        if let Some(stated) = &p.block_digest
            && stated.to_ascii_lowercase().starts_with("sha1:")
        {
            let found = crate::formats::digest::sha1_base32(&block.sha1);
            if !found.eq_ignore_ascii_case(stated) {
                self.differ(at, in_member, format!("WARC-Block-Digest {stated}, found {found}"));
            }
        }
        self.check_framing(p, block.len, in_member);
        Ok(())
    }

    /// What comes before the record's block: the member it starts (or the raw region), its
    /// lead, and its header line with the line's end.
    fn head_of(&mut self, p: &ArcPiece, in_member: Option<u64>) -> Result<(), RebuildError> {
        let at = p.offset.first;
        if p.field.raw {
            return self.before_piece(p, "a raw region");
        }
        self.enter_member(p)?;
        if !self.gzip && !p.field.pre.is_empty() {
            self.differ(at, None, "record-less members in a plain ARC".into());
        }
        self.emit_gap(p.field.lead.as_deref(), b"", "lead")?;
        let expected = if self.gzip { p.offset.in_member } else { at };
        let found = if self.gzip { self.member_pos } else { self.stream.len };
        if found != expected {
            self.differ(at, in_member, format!("the record starts at {found}"));
        }
        if let Some(line) = &p.header_line {
            let eol = match p.field.eol.as_deref() {
                Some(e) => {
                    decode_gap(e, MAX_EOL).map_err(|e| RebuildError::Stored(format!("eol: {e}")))?
                }
                None => b"\n".to_vec(),
            };
            self.allow_stream((line.len() + eol.len()) as u64, false, "the header line")?;
            self.emit_framing(line, "header line")?;
            self.emit_framing(&eol, "header line's end")?;
        }
        Ok(())
    }

    /// The record's block, from `next_chunk`: given back (verbatim in the file for a raw
    /// region), its length and SHA-1 counted.
    fn block_of(
        &mut self,
        p: &ArcPiece,
        mut next_chunk: impl FnMut() -> Result<Option<Vec<u8>>, RebuildError>,
    ) -> Result<BlockSeen, RebuildError> {
        let mut sha1 = Sha1::new();
        let mut len = 0u64;
        while let Some(chunk) = next_chunk()? {
            self.allow_stream(chunk.len() as u64, false, "the record's block")?;
            sha1.update(&chunk);
            len += chunk.len() as u64;
            if p.field.raw {
                self.stream.write_all(&chunk)?;
                if let Some(f) = &mut self.file {
                    f.verbatim(chunk)?;
                }
            } else {
                self.emit(&chunk)?;
            }
        }
        Ok(BlockSeen { len, sha1: sha1.finalize().into() })
    }

    /// The payload a revisit leaves out, given back chunk by chunk after its block.
    fn stored_payload(
        &mut self,
        next: &mut dyn FnMut() -> Result<Option<Vec<u8>>, RebuildError>,
    ) -> Result<(), RebuildError> {
        while let Some(chunk) = next()? {
            self.allow_stream(chunk.len() as u64, false, "the stored payload")?;
            self.emit(&chunk)?;
        }
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
                r.unrecovered_offsets = s.unrecovered.offsets.clone();
                r.members_unrecovered = r.members_unrecovered.max(s.unrecovered.count);
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

/// A field's text for a message: its first 40 characters.
fn short(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use proptest::prelude::*;

    use super::super::stream::{ArcOffset, ArcPiece};
    use super::*;
    use crate::formats::arc_rebuild::RebuildField;

    /// The stream (and file) length the rebuild records here state.
    const STATED: u64 = 64 << 10;

    /// Counts the bytes it is given and keeps none.
    struct Counter(Arc<AtomicU64>);

    impl Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.fetch_add(buf.len() as u64, Ordering::Relaxed);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn summary(gzip: bool, post: Vec<OrphanMembers>) -> RebuildSummary {
        RebuildSummary {
            file_name: "a.arc".into(),
            file_length: STATED,
            file_sha512: "00".into(),
            stream_length: STATED,
            stream_sha512: "00".into(),
            gzip,
            members: 4,
            post,
            ..Default::default()
        }
    }

    fn piece(field: RebuildField) -> ArcPiece {
        ArcPiece {
            warcinfo_id: "<urn:x>".into(),
            offset: ArcOffset { first: 0, in_member: 0 },
            field,
            header_line: Some(b"http://e.org/ 192.0.2.1 20240101000000 text/plain 3".to_vec()),
            block_digest: None,
            revisit: None,
            block_len: 3,
            container: "c.warc.gz".into(),
            container_offset: 0,
        }
    }

    /// Rebuilds one record of field `text` (with a 3-byte block) and the rebuild record's
    /// `post`: whether it was refused, and the bytes written.
    fn rebuild(text: &str, post: Vec<OrphanMembers>, gzip: bool, file: bool) -> (bool, u64) {
        rebuild_against(text, Some(&summary(gzip, post)), gzip, file)
    }

    /// [`rebuild`] against rebuild record `s`, or none (a container without one).
    fn rebuild_against(
        text: &str,
        s: Option<&RebuildSummary>,
        gzip: bool,
        file: bool,
    ) -> (bool, u64) {
        let Ok(field) = text.parse::<RebuildField>() else { return (true, 0) };
        let written = Arc::new(AtomicU64::new(0));
        let report = ArcRebuild { name: "a.arc".into(), gzip, ..Default::default() };
        let out: Box<dyn Write + Send> = Box::new(Counter(written.clone()));
        let mut asm = Assembler::new(report, Some(out), file, s).unwrap();
        let mut chunks = vec![b"abc".to_vec()].into_iter();
        let done = asm.piece(&piece(field), || Ok(chunks.next()));
        let refused = match done {
            Ok(()) => asm.finish(s).is_err(),
            Err(_) => true,
        };
        (refused, written.load(Ordering::Relaxed))
    }

    /// Without a rebuild record, every count of every field shares one allowance: record-less
    /// empty members (which give the stream nothing) repeated in several items each within
    /// it, do not put more than it in the file.
    #[test]
    fn counts_without_a_rebuild_record_share_one_allowance() {
        let empty = blank_member(0);
        let per_item = UNSTATED_EXPANSION / 2 / empty.len() as u64;
        let item = OrphanMembers { offset: 0, bytes: empty, count: per_item }.to_string();
        let text = format!("crc=0 pre={}", [item.as_str(); 4].join(","));
        let (refused, written) = rebuild_against(&text, None, true, true);
        assert!(refused, "{text}");
        assert!(written <= UNSTATED_EXPANSION, "{written} bytes written");
    }

    /// An intact gzip member of `n` blank lines.
    fn blank_member(n: usize) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![b'\n'; n]).unwrap();
        e.finish().unwrap()
    }

    /// The counts of the attacks found are refused before anything of them is written.
    #[test]
    fn repeat_counts_over_the_stated_length_are_refused() {
        let hex = data_encoding::HEXLOWER.encode(&blank_member(3 << 20));
        let empty = blank_member(0);
        for (text, post) in [
            ("crc=0 lead=n999999999999".to_string(), vec![]),
            ("crc=0 tail=n18446744073709551615".into(), vec![]),
            ("crc=0 lead=N9223372036854775807".into(), vec![]),
            (format!("crc=0 pre=0:{hex}:10000000000"), vec![]),
            ("crc=0".into(), vec![OrphanMembers { offset: 9, bytes: empty, count: 99999999999 }]),
        ] {
            for (gzip, file) in [(false, false), (true, false), (true, true)] {
                // A plain ARC gives back no record-less member before a record.
                if !gzip && text.contains("pre=") {
                    continue;
                }
                let (refused, written) = rebuild(&text, post.clone(), gzip, file);
                assert!(refused, "{text} {post:?} gzip {gzip} file {file}");
                assert!(written <= STATED, "{written} bytes written for {text}");
            }
        }
        // What the rebuild record allows is given back.
        let (refused, written) = rebuild("crc=0 lead=n100", vec![], false, false);
        assert!(!refused);
        let line = piece(RebuildField::default()).header_line.unwrap().len() as u64;
        assert_eq!(written, 100 + line + 1 + 3 + 1);
    }

    fn gap() -> impl Strategy<Value = String> {
        let unit = prop_oneof![
            Just("n".to_string()),
            Just("N".to_string()),
            Just("r".to_string()),
            Just("s".to_string()),
            Just("%00".to_string()),
            Just("%G".to_string()),
        ];
        let count = prop_oneof![
            Just(String::new()),
            (2u64..100_000).prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            Just("99999999999999999999999".to_string()),
        ];
        proptest::collection::vec((unit, count), 0..6)
            .prop_map(|v| v.into_iter().map(|(u, c)| u + &c).collect::<String>())
    }

    fn orphans() -> impl Strategy<Value = Vec<OrphanMembers>> {
        let bytes = prop_oneof![
            (0usize..200_000).prop_map(blank_member),
            proptest::collection::vec(any::<u8>(), 18..60),
        ];
        let count = prop_oneof![1u64..5, any::<u64>()];
        proptest::collection::vec(
            (any::<u64>(), bytes, count).prop_map(|(offset, bytes, count)| OrphanMembers {
                offset,
                bytes,
                count,
            }),
            0..3,
        )
    }

    fn field() -> impl Strategy<Value = String> {
        let token = prop_oneof![
            gap().prop_map(|g| format!("lead={g}")),
            gap().prop_map(|g| format!("tail={g}")),
            gap().prop_map(|g| format!("eol={g}")),
            orphans().prop_map(|o| {
                let items: Vec<String> = o.iter().map(ToString::to_string).collect();
                format!("pre={}", items.join(","))
            }),
            Just("raw".to_string()),
            Just("z=?".to_string()),
            Just("gz=1f8b0800".to_string()),
            "[a-z=%0-9:,]{0,20}",
        ];
        proptest::collection::vec(token, 0..5).prop_map(|t| format!("crc=0 {}", t.join(" ")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Random and mutated rebuild fields and record-less members: parsed or refused, and
        /// never more given back than the rebuild record states (the file of a gzip ARC: its
        /// members compressed, plus the record-less members as found, each part bounded).
        #[test]
        fn no_field_gives_more_than_stated(
            text in field(),
            flip in any::<(usize, u8)>(),
            post in orphans(),
            kind in 0usize..3,
        ) {
            let (gzip, file) = [(false, false), (true, false), (true, true)][kind];
            let mut mutated = text.clone().into_bytes();
            let at = flip.0 % mutated.len();
            mutated[at] = flip.1 & 0x7f;
            for t in [text, String::from_utf8(mutated).unwrap()] {
                let (_, written) = rebuild(&t, post.clone(), gzip, file);
                prop_assert!(written <= 2 * STATED + 4096, "{} bytes for {}", written, t);
            }
        }

        /// Any rebuild record text parses or is refused without a panic.
        #[test]
        fn any_rebuild_record_text_parses_or_is_refused(
            lines in proptest::collection::vec("[a-z-]{0,14} [0-9a-f:n]{0,30}", 0..12),
        ) {
            let text = format!("webaip-arc-rebuild 1\n{}", lines.join("\n"));
            let _ = RebuildSummary::parse(&text);
        }
    }
}
