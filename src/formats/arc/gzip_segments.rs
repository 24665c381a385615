//! Gzip segments: an ARC compressed per record (or as one stream) is read one gzip member at
//! a time, each spooled into a [`Segment`] (memory, or a temporary file past
//! `segment::MEMORY_SPOOL_LIMIT`) that framing then reads. Bytes that are no gzip data, and
//! the raw bytes of a damaged member, are kept as found in raw remainder records; members
//! that decompress to nothing are kept for the rebuild.

use super::*;

pub(super) const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// How the ARC file's bytes reach the framing: read in place, or gzip member by member.
pub(super) enum InputDecoding {
    Plain,
    /// One decoder and one copy buffer for every member: allocating them per member (and
    /// keeping a record per empty member) made 300,000 empty members cost 2 GB.
    Gzip {
        dec: Box<flate2::bufread::GzDecoder<RawInput>>,
        buf: Vec<u8>,
    },
}

/// The compressed file under the reused gzip decoder; `Detached` only for an instant while the
/// decoder is reset.
pub(super) enum RawInput {
    Detached,
    Attached(Counting<BufReader<File>>),
}

impl RawInput {
    pub(super) fn pos(&self) -> u64 {
        match self {
            RawInput::Attached(c) => c.pos,
            RawInput::Detached => 0,
        }
    }
}

impl Read for RawInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            RawInput::Attached(c) => c.read(buf),
            RawInput::Detached => Ok(0),
        }
    }
}

impl BufRead for RawInput {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            RawInput::Attached(c) => c.fill_buf(),
            RawInput::Detached => Ok(&[]),
        }
    }
    fn consume(&mut self, amt: usize) {
        if let RawInput::Attached(c) = self {
            c.consume(amt)
        }
    }
}

/// A gzip member decompressed into a segment, and the error that stopped it early.
struct Spooled {
    state: SegmentState,
    error: Option<io::Error>,
}

pub(super) struct SegmentState {
    pub(super) data: Arc<Segment>,
    pub(super) pos: u64,
    /// Offset of the gzip member this segment came from (None for plain files).
    pub(super) member: Option<u64>,
    /// Blank lines expected before the next record (1 after a record, 0 after a filedesc).
    pub(super) expected_separators: u64,
    pub(super) records: u64,
    /// A raw (compressed-file) remainder to emit after this segment.
    pub(super) pending_raw: Option<(u64, u64, String)>,
    /// Bytes given to records so far (their lead, bytes and tail).
    pub(super) claimed: u64,
    /// Records (and remainders) framed in this segment.
    pub(super) framed: u64,
    /// The member is damaged: its raw bytes are kept, and its records are skipped by a rebuild.
    pub(super) damaged: bool,
    /// Where the member ends in the compressed file.
    pub(super) member_end: u64,
    /// The member's gzip header and deflate settings where not the file's (its first
    /// record's field says them).
    pub(super) settings: (Option<Vec<u8>>, Option<String>),
}

impl SegmentState {
    pub(super) fn new(data: Segment, member: Option<u64>) -> Self {
        SegmentState {
            data: Arc::new(data),
            pos: 0,
            member,
            expected_separators: 0,
            records: 0,
            pending_raw: None,
            claimed: 0,
            framed: 0,
            damaged: false,
            member_end: 0,
            settings: (None, None),
        }
    }
}

pub(super) trait ReadAtFull {
    fn read_at_full(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize>;
}

impl ReadAtFull for File {
    fn read_at_full(&self, mut pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let mut filled = 0;
        while filled < buf.len() {
            match self.read_at(&mut buf[filled..], pos) {
                Ok(0) => break,
                Ok(n) => {
                    filled += n;
                    pos += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

impl ArcReader {
    /// Decompresses the next gzip member into the current segment. Returns a raw remainder
    /// record when the compressed file holds bytes that are not a gzip member.
    pub(super) fn load_next_member(&mut self) -> Result<Option<ArcRecord>, ArcError> {
        let InputDecoding::Gzip { dec, .. } = &mut self.input else { return Ok(None) };
        let start = dec.get_ref().pos();
        self.seg = None;
        if start >= self.file_len {
            self.done = true;
            self.finish_file();
            return Ok(None);
        }
        if !self.gzip_member_at(start)? {
            let next = self.find_gzip_magic(start + 1)?;
            self.seek_raw(next)?;
            let why = format!("{} bytes at offset {start} are not gzip data", next - start);
            return self.raw_remainder(start, next, why).map(Some);
        }
        let Some(Spooled { mut state, error }) = self.spool_member(start) else { return Ok(None) };
        match error {
            Some(e) => self.damaged_member(&mut state, start, e)?,
            None if state.data.is_empty() => self.empty_member(start, state.member_end)?,
            None => self.whole_member(&mut state, start)?,
        }
        self.seg = Some(state);
        Ok(None)
    }

    /// True when a gzip member header starts at `start`.
    fn gzip_member_at(&self, start: u64) -> Result<bool, ArcError> {
        let mut magic = [0u8; 3];
        let n = self.file.read_at_full(start, &mut magic).map_err(|source| ArcError {
            path: self.path.clone(),
            offset: start,
            source,
        })?;
        Ok(n == 3 && magic == GZIP_MAGIC)
    }

    /// Decompresses the member at `start` into a new segment, as far as it goes.
    fn spool_member(&mut self, start: u64) -> Option<Spooled> {
        let InputDecoding::Gzip { dec, buf } = &mut self.input else { return None };
        // A fresh decoder state over the same allocations (flate2 resets zlib in place).
        let raw = dec.reset(RawInput::Detached);
        dec.reset(raw);
        let (data, error) = spool_with(&mut **dec, buf);
        let end = dec.get_ref().pos();
        self.account.decompressed_bytes += data.len();
        let mut state = SegmentState::new(data, Some(start));
        state.member_end = end;
        Some(Spooled { state, error })
    }

    /// A member whose decompression failed: what came out before the damage is read as
    /// records, and the member's raw bytes (up to the next gzip header) are kept as found.
    /// An error that is not the data's (a read failure) ends the file.
    fn damaged_member(
        &mut self,
        state: &mut SegmentState,
        start: u64,
        e: io::Error,
    ) -> Result<(), ArcError> {
        state.damaged = true;
        if e.kind() != io::ErrorKind::InvalidInput
            && e.kind() != io::ErrorKind::InvalidData
            && e.kind() != io::ErrorKind::UnexpectedEof
        {
            return Err(ArcError { path: self.path.clone(), offset: start, source: e });
        }
        let resume = self.find_gzip_magic(start + 1)?;
        self.seek_raw(resume)?;
        let why = format!(
            "gzip member at offset {start} is damaged ({e}); {} bytes decompressed before the \
             damage are read as records, and the {} raw bytes of the member are kept as found",
            state.data.len(),
            resume - start
        );
        self.file_anomaly(Anomaly {
            location: Location { member: Some(start), offset: 0 },
            kind: AnomalyKind::GzipError,
            severity: Severity::Error,
            detail: why.clone(),
        });
        state.pending_raw = Some((start, resume, why));
        Ok(())
    }

    /// A member that decompresses to nothing: record-less, kept as found for the rebuild,
    /// before the next record.
    fn empty_member(&mut self, start: u64, end: u64) -> Result<(), ArcError> {
        self.orphan_member(start, end)?;
        self.account.members += 1;
        self.account.member_bytes += end - start;
        self.account.empty_members += 1;
        self.account.empty_member_bytes += end - start;
        self.file_anomaly(Anomaly {
            location: Location { member: Some(start), offset: 0 },
            kind: AnomalyKind::EmptyGzipMember,
            severity: Severity::Info,
            detail: format!("gzip member of {} bytes decompresses to nothing", end - start),
        });
        Ok(())
    }

    /// A member decompressed whole: counted, digested into the stream, and its header and
    /// deflate settings recovered for the rebuild.
    fn whole_member(&mut self, state: &mut SegmentState, start: u64) -> Result<(), ArcError> {
        let end = state.member_end;
        self.account.members += 1;
        self.account.member_bytes += end - start;
        if let Some(d) = self.stream.as_mut() {
            d.segment(&state.data, 0, state.data.len());
            let settings = self.member_settings.member(
                &self.file,
                (start, end),
                &state.data,
                &mut self.rebuild_problems,
            );
            state.settings = settings.map_err(|e| self.io_err(start, e))?;
        }
        Ok(())
    }

    pub(super) fn seek_raw(&mut self, to: u64) -> Result<(), ArcError> {
        if let InputDecoding::Gzip { dec, .. } = &mut self.input
            && let RawInput::Attached(raw) = dec.get_mut()
        {
            raw.inner.seek(SeekFrom::Start(to)).map_err(|source| ArcError {
                path: self.path.clone(),
                offset: to,
                source,
            })?;
            raw.pos = to;
        }
        Ok(())
    }

    /// First offset at or after `from` where a gzip member header starts (or the file end).
    pub(super) fn find_gzip_magic(&self, from: u64) -> Result<u64, ArcError> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut pos = from;
        while pos < self.file_len {
            let n = self.file.read_at_full(pos, &mut buf).map_err(|source| ArcError {
                path: self.path.clone(),
                offset: pos,
                source,
            })?;
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            if let Some(i) = chunk.windows(3).position(|w| w == GZIP_MAGIC) {
                return Ok(pos + i as u64);
            }
            if n < 3 {
                break;
            }
            pos += (n - 2) as u64;
        }
        Ok(self.file_len)
    }

    pub(super) fn raw_remainder(
        &mut self,
        start: u64,
        end: u64,
        why: String,
    ) -> Result<ArcRecord, ArcError> {
        let file = self.file.try_clone().map_err(|source| ArcError {
            path: self.path.clone(),
            offset: start,
            source,
        })?;
        let seg = Arc::new(Segment::File { file, len: end });
        if let Some(d) = self.stream.as_mut() {
            d.segment(&seg, start, end);
        }
        self.raw_segment = Some(seg);
        self.account.raw_bytes += end - start;
        let location = Location { member: None, offset: start };
        Ok(ArcRecord {
            kind: RecordKind::Remainder,
            header: None,
            location,
            header_len: 0,
            body_start: start,
            body_end: end,
            anomalies: vec![Anomaly {
                location,
                kind: AnomalyKind::Garbage,
                severity: Severity::Error,
                detail: why,
            }],
            truncated: false,
            rebuild: RebuildField { raw: true, ..RebuildField::default() },
            raw: true,
        })
    }

    /// The current segment has no more records: bytes no record was given are kept as a
    /// record-less member, or (never expected) reported as what stops a rebuild.
    pub(super) fn segment_ended(&mut self) -> Result<(), ArcError> {
        let Some(seg) = self.seg.as_mut() else { return Ok(()) };
        let len = seg.data.len();
        if seg.damaged || seg.claimed >= len {
            return Ok(());
        }
        let (member, framed, claimed, member_end) =
            (seg.member, seg.framed, seg.claimed, seg.member_end);
        // Given now, so a second call finds nothing left.
        seg.claimed = len;
        match member {
            Some(m) if framed == 0 => self.orphan_member(m, member_end),
            _ => {
                let inside = member.map(|m| format!(" of the gzip member at {m}"));
                self.rebuild_problems.add(format!(
                    "bytes {claimed}..{len}{} belong to no record",
                    inside.unwrap_or_default()
                ));
                Ok(())
            }
        }
    }

    /// Keeps the bytes of the record-less gzip member `start..end`, for the next record.
    pub(super) fn orphan_member(&mut self, start: u64, end: u64) -> Result<(), ArcError> {
        let len = end.saturating_sub(start);
        if len > crate::formats::arc_rebuild::MAX_ORPHAN_MEMBER as u64 {
            self.rebuild_problems
                .add(format!("record-less gzip member at offset {start} ({len} bytes) not kept"));
            return Ok(());
        }
        let mut bytes = vec![0u8; len as usize];
        let n = self.file.read_at_full(start, &mut bytes).map_err(|source| ArcError {
            path: self.path.clone(),
            offset: start,
            source,
        })?;
        bytes.truncate(n);
        self.orphans.push(start, bytes, &mut self.rebuild_problems);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn record(body: &str) -> Vec<u8> {
        let h = "http://e.org/ 1.2.3.4 20200101000000 text/plain";
        format!("{h} {}\n{body}\n", body.len()).into_bytes()
    }

    /// The kinds of the records read, the file anomalies' kinds, and the byte account.
    fn read(file: &[u8]) -> (Vec<(RecordKind, u64)>, Vec<AnomalyKind>, ByteAccount) {
        let mut r = ArcReader::from_reader(file, "t.arc.gz").unwrap();
        let mut kinds = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            kinds.push((rec.kind, rec.body_len()));
        }
        let file_kinds = r.file_anomalies().iter().map(|a| a.kind).collect();
        (kinds, file_kinds, r.byte_account().clone())
    }

    #[test]
    fn empty_members_and_bytes_that_are_no_gzip_are_kept_and_accounted() {
        let file = [gz(&record("hello")), gz(b""), b"junk".to_vec(), gz(&record("bye"))].concat();
        let (kinds, file_kinds, account) = read(&file);
        let want = [(RecordKind::Capture, 5), (RecordKind::Remainder, 4), (RecordKind::Capture, 3)];
        assert_eq!(kinds, want);
        assert!(file_kinds.contains(&AnomalyKind::EmptyGzipMember), "{file_kinds:?}");
        assert_eq!((account.members, account.empty_members, account.raw_bytes), (3, 1, 4));
        assert!(account.balanced(true), "{account:?}");
    }

    #[test]
    fn a_damaged_member_keeps_its_raw_bytes() {
        let second = gz(&record("bye"));
        let cut = &second[..second.len() - 6];
        let file = [gz(&record("hello")), cut.to_vec()].concat();
        let (kinds, file_kinds, account) = read(&file);
        assert_eq!(kinds.first(), Some(&(RecordKind::Capture, 5)));
        assert_eq!(kinds.last(), Some(&(RecordKind::Remainder, cut.len() as u64)), "{kinds:?}");
        assert!(file_kinds.contains(&AnomalyKind::GzipError), "{file_kinds:?}");
        assert_eq!(account.raw_bytes, cut.len() as u64);
        assert!(account.balanced(true), "{account:?}");
    }
}
