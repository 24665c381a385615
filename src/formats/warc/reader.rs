//! WARC reader (0.17, 1.0, 1.1; plain or gzip, one member per record or one for the whole
//! file), with the offset of every record.
//!
//! Records are pushed to a closure with a reader over their block, limited to
//! `Content-Length`: nothing is buffered beyond a header. After the closure returns, the rest of
//! the block and the closing CRLFs are consumed, and [`RecordEnd`] tells where the record ended.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use super::header::WarcHeader;
use crate::formats::counting::Counting;

/// Longest header line accepted; a longer one is an error at the record's offset (it is never
/// buffered whole).
pub const MAX_LINE: usize = 1 << 20;

/// Most bytes a record header may take, version line and blank lines before it included.
pub(crate) const MAX_HEADER_BYTES: u64 = 4 << 20;

/// Most fields a record header may have (real ones have about 10-20).
pub(crate) const MAX_FIELDS: usize = 4096;

/// A WARC that cannot be read further, with the offset of the record where it happened.
#[derive(Debug, thiserror::Error)]
#[error("{name}: record at offset {offset}: {fault}")]
pub struct WarcError {
    /// The file (or stream) name.
    pub name: String,
    /// Offset of the record (gzip member) where reading failed.
    pub offset: u64,
    /// What went wrong.
    #[source]
    pub fault: WarcFault,
}

impl WarcError {
    /// The I/O error behind it, if any.
    pub fn io(&self) -> Option<&io::Error> {
        use std::error::Error as _;
        self.fault.source().and_then(|s| s.downcast_ref())
    }
}

/// What stops a WARC from being read further. The variants that hold an I/O error say what was
/// being read; the cause is their source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WarcFault {
    /// The file cannot be opened.
    #[error("cannot open")]
    Open(#[source] io::Error),
    /// The input cannot be read (at its start, or between gzip members).
    #[error("cannot read")]
    Read(#[source] io::Error),
    /// An earlier error left the reader where it cannot go on.
    #[error("reader is unusable after an earlier error")]
    Poisoned,
    /// A line of the record header cannot be read.
    #[error("cannot read the record header")]
    ReadHeader(#[source] io::Error),
    /// The first line is not `WARC/...` (its first 40 characters).
    #[error("expected a WARC version line, found {}", shown(.0))]
    NotVersionLine(String),
    /// The input ends before the header's blank line.
    #[error("the input ends inside a record header")]
    HeaderTruncated,
    /// The header is over `MAX_HEADER_BYTES` or `MAX_FIELDS`.
    #[error("the record header is larger than {} bytes or {} fields", MAX_HEADER_BYTES, MAX_FIELDS)]
    HeaderTooLarge,
    /// A folded line comes before any field it could continue.
    #[error("a continuation line before any field")]
    ContinuationFirst,
    /// A header line that is no `name: value` (its first 40 characters).
    #[error("header line without a colon: {}", shown(.0))]
    NoColon(String),
    /// `Content-Length` is absent or not a number.
    #[error("the record has no valid Content-Length")]
    NoContentLength,
    /// The record callback was called for a second record (a reader bug, not the input's).
    #[error("record callback already used")]
    CallbackUsed,
    /// The block cannot be read (or the callback reading it failed).
    #[error("the block could not be read")]
    ReadBlock(#[source] io::Error),
    /// The input ends before `Content-Length` bytes of block.
    #[error("the input ends {missing} bytes before the end of the block")]
    BlockTruncated {
        /// Bytes of the block missing.
        missing: u64,
    },
    /// The CRLF CRLF after the block cannot be read.
    #[error("cannot read the record end")]
    ReadEnd(#[source] io::Error),
    /// A header line has no line end within `MAX_LINE` bytes.
    #[error("a header line without a line end within {} bytes", MAX_LINE)]
    LineTooLong,
    /// The gzip data after a record is damaged.
    #[error("gzip data is damaged after the record")]
    DamagedAfter(#[source] io::Error),
}

/// A record's header and where it starts.
#[derive(Debug, Clone)]
pub struct WarcRecordHead {
    /// The header fields.
    pub header: WarcHeader,
    /// Offset of the record: of its gzip member in a compressed file, else of its first byte.
    pub offset: u64,
    /// For gzip files whose member holds several records: the record's offset inside the
    /// decompressed member (0 for the first).
    pub offset_in_member: u64,
    /// Bytes from the record's offset to its block: the blank lines before its version line
    /// (tolerated), its header, and the blank line ending it.
    pub header_len: u64,
    /// Bytes of those blank lines before the version line (part of `header_len`).
    pub leading_len: u64,
}

/// Bytes no record frames, skipped to reach the next record (with resynchronisation on): what
/// follows a record whose `Content-Length` is short, or junk before the first record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// The file (or stream) name.
    pub name: String,
    /// Where the skipped bytes start: in the file, or for gzip the offset of their member.
    pub offset: u64,
    /// For gzip: where they start inside the decompressed member (0 for a plain file).
    pub offset_in_member: u64,
    /// How many bytes were skipped (decompressed bytes for gzip).
    pub len: u64,
    /// The first line that is no record's start (its first 40 characters, as shown).
    pub first_line: String,
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: offset {}", self.name, self.offset)?;
        if self.offset_in_member > 0 {
            write!(f, " (at {} in its gzip member)", self.offset_in_member)?;
        }
        write!(f, ": {}", self.what())
    }
}

impl Gap {
    /// What the bytes are, without where (for reports that say where themselves).
    pub fn what(&self) -> String {
        format!(
            "{} bytes no record frames (the record before may have a short Content-Length), \
             kept as they are; first line {}",
            self.len, self.first_line
        )
    }
}

/// How a record ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordEnd {
    /// Offset just past the record: past its gzip member when the member ended with it.
    pub end: u64,
    /// True when the record's gzip member ended right after it (one member per record).
    pub member_ended: bool,
    /// True when the block was followed by exactly the CRLF CRLF the standard requires.
    pub trailer_ok: bool,
    /// Blank lines skipped before the record's version line.
    pub leading_blank_lines: u64,
}

type Raw<R> = Counting<BufReader<R>>;

/// The compressed input under the reused gzip decoder; `Detached` only for an instant while the
/// decoder is reset.
enum Src<R> {
    Detached,
    Attached(Raw<R>),
}

impl<R: Read> Read for Src<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Src::Attached(r) => r.read(buf),
            Src::Detached => Ok(0),
        }
    }
}

impl<R: Read> BufRead for Src<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Src::Attached(r) => r.fill_buf(),
            Src::Detached => Ok(&[]),
        }
    }
    fn consume(&mut self, amt: usize) {
        if let Src::Attached(r) = self {
            r.consume(amt)
        }
    }
}

impl<R> Src<R> {
    fn pos(&self) -> u64 {
        match self {
            Src::Attached(r) => r.pos,
            Src::Detached => 0,
        }
    }
}

/// The decompressed bytes of the current member, buffered. One decoder and one buffer serve
/// every member of the file: allocating them per member made files of many empty members cost
/// memory in proportion to the number of members.
struct Inflated<R: Read> {
    dec: flate2::bufread::GzDecoder<Src<R>>,
    buf: Box<[u8]>,
    at: usize,
    filled: usize,
}

impl<R: Read> Inflated<R> {
    fn new(raw: Raw<R>) -> Self {
        // `GzDecoder::new` reads a header at once: the input is given through `reset`, which
        // leaves the header to the first read of the member.
        let mut dec = flate2::bufread::GzDecoder::new(Src::Detached);
        dec.reset(Src::Attached(raw));
        Inflated { dec, buf: vec![0u8; 256 * 1024].into_boxed_slice(), at: 0, filled: 0 }
    }

    /// Starts the next member at the input's position, with the same allocations.
    fn restart(&mut self) {
        let src = self.dec.reset(Src::Detached);
        self.dec.reset(src);
        self.at = 0;
        self.filled = 0;
    }

    fn raw_pos(&self) -> u64 {
        self.dec.get_ref().pos()
    }
}

impl<R: Read> Read for Inflated<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let avail = self.fill_buf()?;
            let n = avail.len().min(out.len());
            out[..n].copy_from_slice(&avail[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Inflated<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at >= self.filled {
            self.filled = self.dec.read(&mut self.buf)?;
            self.at = 0;
        }
        Ok(&self.buf[self.at..self.filled])
    }
    fn consume(&mut self, amt: usize) {
        self.at = (self.at + amt).min(self.filled);
    }
}

/// A gzip input: the decompressed stream (counted from the start of the member) and the
/// offset of the member being read, if one is.
struct Gz<R: Read> {
    member: Counting<Inflated<R>>,
    current: Option<u64>,
}

enum State<R: Read> {
    Plain(Raw<R>),
    Gzip(Box<Gz<R>>),
    Poisoned,
}

/// Reads the records of one WARC file in order.
pub struct WarcReader<R: Read> {
    name: String,
    state: State<R>,
    gzip: bool,
    /// Skip bytes no record frames to the next `WARC/` line rather than fail on them.
    resync: bool,
    /// Bytes skipped by the last call to `next_record`.
    gap: Option<Gap>,
    /// A record was read: junk before the first one means the input is no WARC at all.
    read_any: bool,
}

impl WarcReader<File> {
    /// Opens a WARC file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, WarcError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| WarcError {
            name: name.clone(),
            offset: 0,
            fault: WarcFault::Open(e),
        })?;
        WarcReader::new(file, name)
    }
}

impl<R: Read> WarcReader<R> {
    /// Reads WARC records from `input`; `name` is used in error messages.
    pub fn new(input: R, name: impl Into<String>) -> Result<Self, WarcError> {
        WarcReader::with_capacity(input, name, 256 * 1024)
    }

    /// [`WarcReader::new`] buffering `capacity` bytes of the input (a small buffer for a short
    /// input read many times over: a reader per record).
    pub fn with_capacity(
        input: R,
        name: impl Into<String>,
        capacity: usize,
    ) -> Result<Self, WarcError> {
        let name = name.into();
        let mut raw = Counting::new(BufReader::with_capacity(capacity, input));
        let head = raw.fill_buf().map_err(|e| WarcError {
            name: name.clone(),
            offset: 0,
            fault: WarcFault::Read(e),
        })?;
        let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        let state = if gzip {
            let member = Counting::new(Inflated::new(raw));
            State::Gzip(Box::new(Gz { member, current: None }))
        } else {
            State::Plain(raw)
        };
        Ok(WarcReader { name, state, gzip, resync: false, gap: None, read_any: false })
    }

    /// Reads on past bytes no record frames (as warcio does): where a record should start
    /// but no `WARC/` version line is, the bytes up to the next line that starts with
    /// `WARC/` and a digit are skipped, and [`WarcReader::take_gap`] names them. Before the
    /// first record, and without it (the default), such bytes are an error.
    pub fn resynchronise(mut self, on: bool) -> Self {
        self.resync = on;
        self
    }

    /// The bytes the last call to `next_record` skipped to reach its record (or the end of
    /// the input), if any.
    pub fn take_gap(&mut self) -> Option<Gap> {
        self.gap.take()
    }

    /// True when the input is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Offset reached in the input (compressed bytes for gzip).
    pub fn position(&self) -> u64 {
        match &self.state {
            State::Plain(r) => r.pos,
            State::Gzip(g) => g.member.inner.raw_pos(),
            State::Poisoned => 0,
        }
    }

    /// The underlying input, positioned somewhere after the last record read (buffered bytes
    /// are dropped). `None` after an error left the reader unusable.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn into_inner(self) -> Option<R> {
        match self.state {
            State::Plain(r) => Some(r.inner.into_inner()),
            State::Gzip(g) => match g.member.inner.dec.into_inner() {
                Src::Attached(r) => Some(r.inner.into_inner()),
                Src::Detached => None,
            },
            State::Poisoned => None,
        }
    }

    fn gap_of(&self, s: &Skipped, (offset, offset_in_member): (u64, u64)) -> Gap {
        Gap {
            name: self.name.clone(),
            offset,
            offset_in_member,
            len: s.len,
            first_line: shown(&s.first_line),
        }
    }

    fn err(&self, offset: u64, fault: WarcFault) -> WarcError {
        WarcError { name: self.name.clone(), offset, fault }
    }

    /// Reads the next record, handing its header and block to `f`.
    ///
    /// Returns `None` at the end of the input. The head given to `f` already carries the
    /// record's offsets. The block reader given to `f` yields exactly
    /// `Content-Length` bytes (fewer only if the input is truncated, which is then an error).
    pub fn next_record<T>(
        &mut self,
        f: impl FnOnce(&WarcRecordHead, &mut dyn Read) -> io::Result<T>,
    ) -> Result<Option<(WarcRecordHead, RecordEnd, T)>, WarcError> {
        let mut f = Some(f);
        self.gap = None;
        let resync = self.resync && self.read_any;
        loop {
            if !self.enter_member()? {
                return Ok(None);
            }
            let (offset, offset_in_member) = match &self.state {
                State::Plain(r) => (r.pos, 0),
                State::Gzip(g) => (g.current.unwrap_or(0), g.member.pos),
                _ => return Err(self.err(0, WarcFault::Poisoned)),
            };
            let mut skipped = None;
            let gzip = self.gzip;
            let start = Start { gzip, offset, offset_in_member, resync, skipped: &mut skipped };
            let result = match &mut self.state {
                State::Plain(r) => read_one(r, &mut f, start),
                State::Gzip(g) => read_one(&mut g.member, &mut f, start),
                _ => unreachable!("matched above"),
            };
            let (offset, offset_in_member) = match skipped {
                Some(s) => {
                    self.gap = Some(self.gap_of(&s, (offset, offset_in_member)));
                    moved(gzip, (offset, offset_in_member), s.len)
                }
                None => (offset, offset_in_member),
            };
            let OneRecord { header, header_len, leading_len, value, trailer_ok, blank } =
                match result {
                    Ok(Some(x)) => x,
                    Ok(None) => match &mut self.state {
                        // A member with nothing (more) in it: go on with the next member.
                        State::Gzip(g) => {
                            g.current = None;
                            continue;
                        }
                        _ => return Ok(None),
                    },
                    Err(fault) => {
                        self.state = State::Poisoned;
                        return Err(self.err(offset, fault));
                    }
                };
            let head = WarcRecordHead { header, offset, offset_in_member, header_len, leading_len };
            let (end, member_ended) = self.record_end(offset)?;
            let end = RecordEnd { end, member_ended, trailer_ok, leading_blank_lines: blank };
            self.read_any = true;
            return Ok(Some((head, end, value)));
        }
    }

    /// Enters the next gzip member when between members; false at the end of the input.
    fn enter_member(&mut self) -> Result<bool, WarcError> {
        let State::Gzip(g) = &mut self.state else { return Ok(true) };
        if g.current.is_some() {
            return Ok(true);
        }
        let start = g.member.inner.raw_pos();
        let at_end = match g.member.inner.dec.get_mut().fill_buf() {
            Ok(b) => b.is_empty(),
            Err(e) => return Err(self.err(start, WarcFault::Read(e))),
        };
        if at_end {
            return Ok(false);
        }
        g.member.inner.restart();
        g.member.pos = 0;
        g.current = Some(start);
        Ok(true)
    }

    /// Where the record just read (at `offset`) ends, and whether its gzip member ended with
    /// it (then the next record starts a member).
    fn record_end(&mut self, offset: u64) -> Result<(u64, bool), WarcError> {
        match &mut self.state {
            State::Plain(r) => Ok((r.pos, false)),
            State::Gzip(g) => match padding_then_end(&mut g.member) {
                Ok(true) => {
                    g.current = None;
                    Ok((g.member.inner.raw_pos(), true))
                }
                Ok(false) => Ok((offset, false)),
                Err(e) => {
                    self.state = State::Poisoned;
                    Err(self.err(offset, WarcFault::DamagedAfter(e)))
                }
            },
            State::Poisoned => Err(self.err(offset, WarcFault::Poisoned)),
        }
    }
}

/// True when the gzip member ends after the record just read, once line ends past its
/// trailer are skipped: a record followed in its member by nothing but CR and LF bytes is
/// still alone in it (and can be moved on its own). Line ends followed by anything else are
/// left for the next record (its leading blank lines).
fn padding_then_end(member: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let buf = member.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        let n = buf.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
        if n < buf.len() {
            return Ok(false);
        }
        member.consume(n);
    }
}

/// One record read by `read_one`: its header, what `f` made of its block, and how it ended.
struct OneRecord<T> {
    header: WarcHeader,
    /// Bytes from the record's start to its block, leading blank lines included.
    header_len: u64,
    /// The leading blank lines' bytes.
    leading_len: u64,
    value: T,
    /// The block was followed by exactly CRLF CRLF.
    trailer_ok: bool,
    /// Blank lines before the version line.
    blank: u64,
}

/// The blank lines before a record's version line: how many, and their bytes.
#[derive(Default)]
struct Leading {
    blank: u64,
    bytes: u64,
}

/// Where `read_one` starts: the record's (offset, offset in member) for the head given to the
/// callback, and with `resync` the bytes it skipped to reach a version line.
struct Start<'a> {
    gzip: bool,
    offset: u64,
    offset_in_member: u64,
    resync: bool,
    skipped: &'a mut Option<Skipped>,
}

/// Bytes skipped before a version line: their count and the first line (previewed).
struct Skipped {
    len: u64,
    first_line: String,
}

impl Start<'_> {
    /// Where the record starts once `skip` bytes were skipped: further into its gzip member,
    /// or further into the file.
    fn moved(&self, skip: u64) -> (u64, u64) {
        moved(self.gzip, (self.offset, self.offset_in_member), skip)
    }
}

fn moved(gzip: bool, (offset, in_member): (u64, u64), skip: u64) -> (u64, u64) {
    match gzip {
        true => (offset, in_member + skip),
        false => (offset + skip, in_member),
    }
}

/// A line that can start a record when reading on past junk: `WARC/` and a version digit.
fn plausible_version_line(line: &[u8]) -> bool {
    line.starts_with(b"WARC/") && line.get(5).is_some_and(u8::is_ascii_digit)
}

/// Reads one record; `at` is where it starts, for the head given to `f`.
fn read_one<T, F>(
    r: &mut impl BufRead,
    f: &mut Option<F>,
    mut at: Start<'_>,
) -> Result<Option<OneRecord<T>>, WarcFault>
where
    F: FnOnce(&WarcRecordHead, &mut dyn Read) -> io::Result<T>,
{
    let mut line = Vec::new();
    let Some(leading) = find_version_line(r, &mut line, &mut at)? else { return Ok(None) };
    let skip = at.skipped.as_ref().map_or(0, |s| s.len);
    let at = at.moved(skip);
    too_long(&line)?;
    let version = String::from_utf8_lossy(trim_eol(&line)).into_owned();
    if !version.starts_with("WARC/") {
        return Err(WarcFault::NotVersionLine(preview(&version)));
    }
    let mut header = WarcHeader::new(version);
    let fields_len = read_fields(r, &mut header, line.len() as u64)?;
    let Some(len) = header.content_length() else {
        return Err(WarcFault::NoContentLength);
    };
    let header_len = leading.bytes + fields_len;
    let head = WarcRecordHead {
        header,
        offset: at.0,
        offset_in_member: at.1,
        header_len,
        leading_len: leading.bytes,
    };
    let mut block = r.take(len);
    let f = f.take().ok_or(WarcFault::CallbackUsed)?;
    let value = f(&head, &mut block).map_err(WarcFault::ReadBlock)?;
    io::copy(&mut block, &mut io::sink()).map_err(WarcFault::ReadBlock)?;
    if block.limit() > 0 {
        return Err(WarcFault::BlockTruncated { missing: block.limit() });
    }
    let trailer_ok = read_trailer(r)?;
    let (header, leading_len, blank) = (head.header, head.leading_len, leading.blank);
    Ok(Some(OneRecord { header, header_len, leading_len, value, trailer_ok, blank }))
}

/// Reads up to the record's version line (left in `line`), past blank lines (tolerated,
/// counted) and, with `at.resync`, past junk (its bytes noted in `at.skipped`). `None` at the
/// end of the input.
///
/// The blank lines' bytes are the record's (its offset is where they start): the header's
/// length counts them, so that every range measured from the record's start lands where it
/// says. Blank lines between junk and the record are the junk's.
fn find_version_line(
    r: &mut impl BufRead,
    line: &mut Vec<u8>,
    at: &mut Start<'_>,
) -> Result<Option<Leading>, WarcFault> {
    let mut leading = Leading::default();
    // Reading on past junk: a line starts where the last read ended in LF.
    let mut at_line_start = true;
    loop {
        line.clear();
        let n = read_line(r, line).map_err(WarcFault::ReadHeader)? as u64;
        if n == 0 {
            if let Some(s) = at.skipped.as_mut() {
                s.len += leading.bytes;
            }
            return Ok(None);
        }
        let line_start = std::mem::replace(&mut at_line_start, line.last() == Some(&b'\n'));
        if line_start && trim_eol(line).is_empty() {
            leading.blank += 1;
            leading.bytes += n;
            continue;
        }
        if !at.resync || (line_start && plausible_version_line(line)) {
            if let Some(s) = at.skipped.as_mut() {
                s.len += leading.bytes;
                leading = Leading::default();
            }
            return Ok(Some(leading));
        }
        // Junk where a record should start: skipped to the next plausible version line, the
        // blank lines before it counted with it.
        let s = at.skipped.get_or_insert_with(|| Skipped {
            len: 0,
            first_line: preview(&String::from_utf8_lossy(trim_eol(line))),
        });
        s.len += leading.bytes + n;
        leading = Leading::default();
    }
}

/// Reads the header's fields up to the blank line that ends them, bounded in size and count.
/// `header_len` is the version line's length; returns the header's length with its fields.
fn read_fields(
    r: &mut impl BufRead,
    header: &mut WarcHeader,
    mut header_len: u64,
) -> Result<u64, WarcFault> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = read_line(r, &mut line).map_err(WarcFault::ReadHeader)?;
        if n == 0 {
            return Err(WarcFault::HeaderTruncated);
        }
        header_len += n as u64;
        too_long(&line)?;
        if header_len > MAX_HEADER_BYTES || header.fields().len() >= MAX_FIELDS {
            return Err(WarcFault::HeaderTooLarge);
        }
        let text = trim_eol(&line);
        if text.is_empty() {
            return Ok(header_len);
        }
        push_field(header, &decode_header_text(text))?;
    }
}

/// Adds one header line: a field, or the continuation of the last one.
fn push_field(header: &mut WarcHeader, text: &str) -> Result<(), WarcFault> {
    if text.starts_with([' ', '\t']) {
        return match header.continue_last(text.trim()) {
            true => Ok(()),
            false => Err(WarcFault::ContinuationFirst),
        };
    }
    match text.split_once(':') {
        Some((name, value)) => {
            header.push_raw(name.trim().to_string(), value.trim().to_string());
            Ok(())
        }
        None => Err(WarcFault::NoColon(preview(text))),
    }
}

/// Reads the closing CRLF CRLF: LFs and missing bytes are tolerated (false), and anything
/// else is left for the next record.
fn read_trailer(r: &mut impl BufRead) -> Result<bool, WarcFault> {
    let mut trailer = Vec::with_capacity(4);
    while trailer.len() < 4 {
        let buf = r.fill_buf().map_err(WarcFault::ReadEnd)?;
        match buf.first() {
            Some(&b) if b == b'\r' || b == b'\n' => {
                trailer.push(b);
                r.consume(1);
            }
            _ => break,
        }
    }
    Ok(trailer == b"\r\n\r\n")
}

fn read_line(r: &mut impl BufRead, out: &mut Vec<u8>) -> io::Result<usize> {
    let n = r.take(MAX_LINE as u64).read_until(b'\n', out)?;
    Ok(n)
}

/// A line cut at [`MAX_LINE`] without its line end is refused, not read on in pieces.
fn too_long(line: &[u8]) -> Result<(), WarcFault> {
    if line.len() >= MAX_LINE && line.last() != Some(&b'\n') {
        return Err(WarcFault::LineTooLong);
    }
    Ok(())
}

/// A header line without its line end: LF, CR LF, or CR CR LF (written by tools that turned
/// LF into CR LF twice; warcio reads such lines too).
fn trim_eol(line: &[u8]) -> &[u8] {
    let mut line = line.strip_suffix(b"\n").unwrap_or(line);
    while let Some(rest) = line.strip_suffix(b"\r") {
        line = rest;
    }
    line
}

/// Header text is UTF-8 by the standard; older writers used ISO-8859-1, which never fails.
fn decode_header_text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(_) => b.iter().map(|&c| c as char).collect(),
    }
}

fn preview(s: &str) -> String {
    s.chars().take(40).collect()
}

/// A previewed line as a message shows it: quoted text, or a phrase for binary bytes (such as
/// gzip data read at an offset that is not a record's start), which a terminal must not get.
fn shown(s: &str) -> String {
    let binary = s.chars().any(|c| (c.is_control() && c != '\t') || c == '\u{fffd}');
    match binary {
        true => "binary data (not a record's start)".to_string(),
        false => format!("{s:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::warc::header::WARC_VERSION;
    use crate::formats::warc::writer::{RecordSpec, WarcWriter};

    fn rec(body: &[u8]) -> (WarcHeader, Vec<u8>) {
        let mut h = WarcHeader::new(WARC_VERSION);
        h.push("WARC-Type", "resource");
        h.push("Content-Length", body.len().to_string());
        (h, body.to_vec())
    }

    #[test]
    fn reads_back_gzip_members_with_offsets() {
        let mut w = WarcWriter::new(Vec::new(), 6);
        let mut written = Vec::new();
        for (i, body) in [&b"one"[..], b"", b"three three"].into_iter().enumerate() {
            let spec = RecordSpec {
                warc_type: "resource".into(),
                record_id: format!("<urn:x:{i}>"),
                ..RecordSpec::default()
            };
            written.push(w.write_record(&spec, body, 0).unwrap());
        }
        let bytes = w.finish().unwrap();
        let mut r = WarcReader::new(&bytes[..], "t").unwrap();
        assert!(r.is_gzip());
        let mut i = 0;
        while let Some((head, end, (seen_offset, body))) = r
            .next_record(|h, b| {
                let mut v = Vec::new();
                b.read_to_end(&mut v)?;
                Ok((h.offset, v))
            })
            .unwrap()
        {
            assert_eq!(seen_offset, head.offset, "the callback sees the record's offset");
            assert_eq!(head.offset, written[i].member_offset);
            assert_eq!(end.end, written[i].member_offset + written[i].member_len);
            assert!(end.member_ended && end.trailer_ok);
            assert_eq!(body.len() as u64, written[i].block_len());
            i += 1;
        }
        assert_eq!(i, 3);
    }

    #[test]
    fn reads_plain_records_and_reports_truncation() {
        let mut bytes = Vec::new();
        for body in [&b"abc"[..], b"defg"] {
            let (h, b) = rec(body);
            bytes.extend(h.to_bytes());
            bytes.extend(&b);
            bytes.extend(b"\r\n\r\n");
        }
        let mut r = WarcReader::new(&bytes[..], "t").unwrap();
        let (h1, e1, _) = r.next_record(|_, _| Ok(())).unwrap().unwrap();
        assert_eq!(h1.offset, 0);
        let (h2, _, _) = r.next_record(|_, _| Ok(())).unwrap().unwrap();
        assert_eq!(h2.offset, e1.end);
        assert!(r.next_record(|_, _| Ok(())).unwrap().is_none());
        let cut = &bytes[..bytes.len() - 6];
        let mut r = WarcReader::new(cut, "t").unwrap();
        r.next_record(|_, _| Ok(())).unwrap();
        let err = r.next_record(|_, _| Ok(())).unwrap_err();
        assert_eq!(err.offset, h2.offset);
        assert!(matches!(err.fault, WarcFault::BlockTruncated { missing: 2 }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "t: record at offset {}: the input ends 2 bytes before the end of the block",
                h2.offset
            )
        );
        // Once failed, the reader says so rather than read on from the middle of a record.
        assert!(matches!(r.next_record(|_, _| Ok(())).unwrap_err().fault, WarcFault::Poisoned));
    }

    #[test]
    fn each_refusal_is_its_fault_and_an_io_cause_stays_reachable() {
        let fault = |bytes: &[u8]| {
            let mut r = WarcReader::new(bytes, "t").unwrap();
            r.next_record(|_, _| Ok(())).unwrap_err().fault
        };
        let not_warc = fault(b"HTTP/1.1 200 OK\r\n\r\n");
        assert!(matches!(&not_warc, WarcFault::NotVersionLine(l) if l == "HTTP/1.1 200 OK"));
        // Bytes that are no text (compressed data at a wrong offset) are named, not printed.
        let binary = fault(b"#4\x07~\xff\xfe\x00<\x8b\r\n\r\n").to_string();
        assert_eq!(
            binary,
            "expected a WARC version line, found binary data (not a record's start)"
        );
        assert!(matches!(fault(b"WARC/1.1\r\nWARC-Type: x\r\n"), WarcFault::HeaderTruncated));
        assert!(matches!(fault(b"WARC/1.1\r\n folded\r\n\r\n"), WarcFault::ContinuationFirst));
        assert!(matches!(fault(b"WARC/1.1\r\nnocolon\r\n\r\n"), WarcFault::NoColon(_)));
        assert!(matches!(fault(b"WARC/1.1\r\nWARC-Type: x\r\n\r\n"), WarcFault::NoContentLength));
        let failing = b"WARC/1.1\r\nContent-Length: 1\r\n\r\nx\r\n\r\n";
        let mut r = WarcReader::new(&failing[..], "t").unwrap();
        let err = r.next_record(|_, _| Err::<(), _>(io::Error::other("disk gone"))).unwrap_err();
        assert!(matches!(err.fault, WarcFault::ReadBlock(_)), "{err:?}");
        assert_eq!(err.io().map(|e| e.to_string()).as_deref(), Some("disk gone"));
        assert_eq!(err.to_string(), "t: record at offset 0: the block could not be read");
    }

    /// Blank lines before a record are counted in its header length (its ranges start where
    /// they do); line ends after a record at the end of its gzip member leave it alone in it,
    /// while a member that goes on holds the next record too.
    #[test]
    fn blank_lines_before_and_line_ends_after_a_record() {
        let (h, b) = rec(b"body");
        let record = [h.to_bytes(), b, b"\r\n\r\n".to_vec()].concat();
        let gz = |bytes: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            io::Write::write_all(&mut e, bytes).unwrap();
            e.finish().unwrap()
        };
        let plain = [&b"\r\n\n"[..], &record].concat();
        let mut r = WarcReader::new(&plain[..], "t").unwrap();
        let (head, end, _) = r.next_record(|_, _| Ok(())).unwrap().unwrap();
        assert_eq!((head.offset, head.header_len), (0, 3 + h.to_bytes().len() as u64));
        assert_eq!(end.leading_blank_lines, 2);
        let padded = gz(&[&record[..], b"\r\n\n\r\n"].concat());
        let shared = gz(&[&record[..], b"\r\n", &record[..]].concat());
        let bytes = [padded.clone(), shared].concat();
        let mut r = WarcReader::new(&bytes[..], "t").unwrap();
        let (_, end, _) = r.next_record(|_, _| Ok(())).unwrap().unwrap();
        assert!(end.member_ended, "padding after the record is its member's end");
        assert_eq!(end.end, padded.len() as u64);
        let (_, end, _) = r.next_record(|_, _| Ok(())).unwrap().unwrap();
        assert!(!end.member_ended, "a member that holds another record goes on");
        let (head, end, _) = r.next_record(|_, _| Ok(())).unwrap().unwrap();
        assert!(head.offset_in_member > 0 && end.member_ended);
        assert_eq!(end.end, bytes.len() as u64);
    }

    /// A record whose `Content-Length` is short leaves bytes no record frames: by default an
    /// error at their offset; with resynchronisation they are skipped to the next line that
    /// starts with `WARC/` and a digit (never one inside a line, even past `MAX_LINE`), named
    /// as a gap of exact offset and length, and the records after it read. Junk before the
    /// first record stays an error (the input is no WARC); junk at the end is a gap too. Header
    /// lines ending in CR CR LF are read as warcio reads them.
    #[test]
    fn bytes_after_a_short_content_length_are_skipped_to_the_next_record() {
        let (h, b) = rec(b"abc");
        let good = [h.to_bytes(), b, b"\r\n\r\n".to_vec()].concat();
        let long_line = [vec![b'x'; MAX_LINE + 10], b"WARC/1.0 inside a line".to_vec()].concat();
        let junk = [&b"tail of a block\r\n\r\n"[..], &long_line, b"\r\nmore\n\r\n"].concat();
        let crcrlf =
            "WARC/1.1\r\r\nWARC-Type: resource\r\r\nContent-Length: 3\r\r\n\r\r\nabc\r\n\r\n";
        let bytes = [&good[..], &junk, crcrlf.as_bytes(), b"trailing junk\n"].concat();
        let mut r = WarcReader::new(&bytes[..], "t").unwrap();
        r.next_record(|_, _| Ok(())).unwrap().unwrap();
        let err = r.next_record(|_, _| Ok(())).unwrap_err();
        assert_eq!(err.offset, good.len() as u64);
        assert!(matches!(err.fault, WarcFault::NotVersionLine(_)), "{err:?}");

        let mut r = WarcReader::new(&bytes[..], "t").unwrap().resynchronise(true);
        r.next_record(|_, _| Ok(())).unwrap().unwrap();
        assert_eq!(r.take_gap(), None);
        let (head, end, body) = r
            .next_record(|h, b| {
                let mut v = Vec::new();
                b.read_to_end(&mut v)?;
                Ok((h.offset, v))
            })
            .unwrap()
            .unwrap();
        let gap = r.take_gap().expect("the junk is named");
        assert_eq!((gap.offset, gap.len), (good.len() as u64, junk.len() as u64));
        assert_eq!(gap.first_line, "\"tail of a block\"");
        assert_eq!(head.offset, (good.len() + junk.len()) as u64);
        assert_eq!(body, (head.offset, b"abc".to_vec()), "the callback sees where it starts");
        assert_eq!(head.header.get("WARC-Type"), Some("resource"));
        assert_eq!(head.header.version, "WARC/1.1");
        assert_eq!(end.end, (good.len() + junk.len() + crcrlf.len()) as u64);
        assert!(r.next_record(|_, _| Ok(())).unwrap().is_none());
        let gap = r.take_gap().expect("junk at the end is named");
        assert_eq!((gap.offset, gap.len), (end.end, 14));
        assert_eq!(gap.to_string().split(": ").next(), Some("t"));

        let no_warc = [&b"<html>\n"[..], &good].concat();
        let mut r = WarcReader::new(&no_warc[..], "t").unwrap().resynchronise(true);
        let err = r.next_record(|_, _| Ok(())).unwrap_err();
        assert!(matches!(err.fault, WarcFault::NotVersionLine(_)), "{err:?}");
    }
}

#[cfg(test)]
mod corpus_tests;
