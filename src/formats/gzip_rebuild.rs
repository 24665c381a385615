//! Gzip members rebuilt byte for byte: the header kept as found, the deflate stream made again
//! by madler zlib with the parameters that reproduce it.
//!
//! An `.arc.gz` is a series of gzip members, usually one per record. Migration keeps the
//! decompressed bytes; giving back the original file means compressing each member again to the
//! same bytes. The deflate format does not fix those bytes: they depend on the compressor and
//! its settings. The ARC writers met in practice (Heritrix through Java's `Deflater`, Python's
//! `gzip` and `zlib`) all use madler zlib, whose output for given settings is what this module
//! reproduces. zlib-rs, the backend flate2 uses elsewhere in webaip, writes other (valid) bytes
//! at the same level, so madler zlib is linked here (libz-sys, built from its bundled source).
//!
//! - [`GzipHeader`] reads a member's header and keeps its bytes verbatim (flags, MTIME, XFL,
//!   OS, extra field, name, comment and header CRC as found), so they are written back as they
//!   were, whatever zlib would have put there.
//! - [`DeflateParams`] is zlib's level, memory level and strategy, with a short text form.
//! - [`probe`] finds the parameters that reproduce a member's deflate stream, if any.
//! - [`MemberWriter`] writes a member from its header bytes, parameters and decompressed bytes,
//!   streaming, in memory independent of the member's size.
//!
//! # Text form of the parameters
//!
//! `zlib:LEVEL[:mem=MEM][:strategy=NAME]`, e.g. `zlib:6`, `zlib:9:mem=9`, `zlib:1:strategy=rle`:
//! LEVEL 0-9, MEM (zlib's `memLevel`) 1-9 and written only when not 8 (zlib's default), NAME one
//! of `filtered`, `huffman`, `rle`, `fixed` and written only when not the default strategy. The
//! window is always 32 KiB (`windowBits` 15), what every writer seen uses. [`DeflateParams`]'s
//! `Display` writes this form (the shortest); `FromStr` reads it.
//!
//! # What is reproduced
//!
//! Every member of every `.arc.gz` of the test corpus (Heritrix and Python writers) comes out
//! identical, all at `zlib:6` but one at `zlib:9`. Not reproducible, so that [`probe`] answers
//! `None` and the caller must keep the compressed bytes or give back the decompressed stream
//! only: members written by another deflater (zlib-rs, libdeflate, 7-Zip, zopfli, pigz's
//! independent blocks), with a flush inside the member, or with a smaller window.
//!
//! Level 0 (stored blocks) is the one level whose bytes depend on how the writer fed zlib (its
//! block sizes follow the buffers), so both [`probe`] and [`MemberWriter`] feed zlib in the same
//! fixed pieces, whatever the caller's writes: what `probe` finds, `MemberWriter` writes. Those
//! pieces give 65,535-byte blocks; Python's `zlib` cuts them where its output buffers end, so
//! its level 0 members are not reproduced.

use std::fmt;
use std::io::{self, Write};
use std::os::raw::{c_int, c_uint, c_void};
use std::str::FromStr;

use flate2::Crc;
use libz_sys as zlib;

/// The longest header accepted, extra field, name and comment included (a member's header is a
/// few dozen bytes in practice; FEXTRA alone may claim 64 KiB).
pub(crate) const MAX_HEADER: usize = 64 << 10;

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
/// Flag bits RFC 1952 reserves: a reader must refuse a member that sets them.
const FRESERVED: u8 = 0xe0;

/// Input bytes handed to zlib per call, at offsets fixed from the member's start: the same in
/// [`probe`] and [`MemberWriter`], so level 0's block boundaries are the same in both.
const PIECE: usize = 64 << 10;

/// Output room per zlib call: more than a stored block (65,535 bytes and its header), so a level
/// 0 block is never cut short by the room left.
const OUT_ROOM: usize = 128 << 10;

/// A gzip member's header (RFC 1952), its bytes kept as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GzipHeader {
    bytes: Vec<u8>,
}

/// Why bytes are not a gzip member's header; offsets count from the member's first byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum GzipHeaderError {
    #[error("not a gzip member: it starts {found:02x?}, not 1f 8b")]
    NotGzip { found: Vec<u8> },
    #[error("gzip member compressed with method {0} at offset 2, not 8 (deflate)")]
    NotDeflate(u8),
    #[error("gzip header flags {0:#04x} at offset 3 set bits RFC 1952 reserves")]
    ReservedFlags(u8),
    #[error("gzip header ends past the {available} bytes given (at least {needed} needed)")]
    Truncated { available: usize, needed: usize },
    #[error(
        "gzip header longer than {MAX_HEADER} bytes (its extra field, name or comment runs on)"
    )]
    TooLong,
}

impl GzipHeader {
    /// Reads the header at the start of `buf`; gives it and its length (where the deflate stream
    /// starts). `buf` may hold the whole rest of the file: at most [`MAX_HEADER`] bytes of it
    /// are looked at. Never panics, whatever the bytes.
    pub(crate) fn parse(buf: &[u8]) -> Result<(GzipHeader, usize), GzipHeaderError> {
        let seen = &buf[..buf.len().min(MAX_HEADER)];
        if !seen.iter().zip([0x1f, 0x8b]).all(|(&found, magic)| found == magic) {
            return Err(GzipHeaderError::NotGzip { found: seen[..seen.len().min(2)].to_vec() });
        }
        let need = |end: usize| -> Result<(), GzipHeaderError> {
            if end > MAX_HEADER {
                Err(GzipHeaderError::TooLong)
            } else if end > seen.len() {
                Err(GzipHeaderError::Truncated { available: buf.len(), needed: end })
            } else {
                Ok(())
            }
        };
        need(10)?;
        if seen[2] != 8 {
            return Err(GzipHeaderError::NotDeflate(seen[2]));
        }
        let flags = seen[3];
        if flags & FRESERVED != 0 {
            return Err(GzipHeaderError::ReservedFlags(flags));
        }
        let mut end = 10;
        if flags & FEXTRA != 0 {
            need(end + 2)?;
            let extra_len = u16::from_le_bytes([seen[end], seen[end + 1]]) as usize;
            end += 2 + extra_len;
            need(end)?;
        }
        for field in [FNAME, FCOMMENT] {
            if flags & field != 0 {
                match memchr::memchr(0, &seen[end..]) {
                    Some(zero) => end += zero + 1,
                    None if seen.len() == MAX_HEADER => return Err(GzipHeaderError::TooLong),
                    None => need(seen.len() + 1)?,
                }
            }
        }
        if flags & FHCRC != 0 {
            end += 2;
            need(end)?;
        }
        Ok((GzipHeader { bytes: seen[..end].to_vec() }, end))
    }

    /// The header's bytes, as found.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// FLG: which optional fields the header has.
    #[cfg(test)]
    pub(crate) fn flags(&self) -> u8 {
        self.bytes[3]
    }

    /// MTIME: the modification time the writer stated (seconds since 1970, 0 for none).
    #[cfg(test)]
    pub(crate) fn mtime(&self) -> u32 {
        u32::from_le_bytes([self.bytes[4], self.bytes[5], self.bytes[6], self.bytes[7]])
    }

    /// XFL: 2 or 4 when the writer said it compressed hardest or fastest (zlib writes them from
    /// the level), often 0. Only a hint: the level is what [`probe`] finds.
    pub(crate) fn extra_flags(&self) -> u8 {
        self.bytes[8]
    }

    /// OS: the writer's operating system as RFC 1952 numbers them (0 FAT, 3 Unix, 255 unknown).
    pub(crate) fn os(&self) -> u8 {
        self.bytes[9]
    }
}

/// madler zlib's settings for a raw deflate stream with a 32 KiB window; the module's doc gives
/// their text form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct DeflateParams {
    level: u8,
    mem_level: u8,
    strategy: u8,
}

/// zlib's strategies by number (`Z_DEFAULT_STRATEGY` is 0), as named in the text form.
const STRATEGIES: [&str; 5] = ["default", "filtered", "huffman", "rle", "fixed"];

/// Why deflate parameters, as numbers or text, are not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DeflateParamsError {
    #[error("deflate parameters {0:?} do not start with \"zlib:\"")]
    NotZlib(String),
    #[error("deflate level {0:?} is not 0-9")]
    Level(String),
    #[error("zlib memory level {0:?} is not 1-9")]
    MemLevel(String),
    #[error("deflate strategy {0:?} is none of filtered, huffman, rle, fixed")]
    Strategy(String),
    #[error("deflate parameter field {0:?} is unknown or repeated")]
    Field(String),
}

/// At most 40 characters of a text being refused, for its error (the text comes from a file).
fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

impl DeflateParams {
    /// zlib's default memory level, `memLevel` 8.
    pub(crate) const DEFAULT_MEM_LEVEL: u8 = 8;

    /// Level 0-9, memory level 1-9, strategy 0-4 (zlib's numbers).
    pub(crate) fn new(level: u8, mem_level: u8, strategy: u8) -> Result<Self, DeflateParamsError> {
        if level > 9 {
            return Err(DeflateParamsError::Level(level.to_string()));
        }
        if !(1..=9).contains(&mem_level) {
            return Err(DeflateParamsError::MemLevel(mem_level.to_string()));
        }
        if usize::from(strategy) >= STRATEGIES.len() {
            return Err(DeflateParamsError::Strategy(strategy.to_string()));
        }
        Ok(DeflateParams { level, mem_level, strategy })
    }

    /// zlib's level with its default memory level and strategy, as most writers use it.
    fn with_level(level: u8, mem_level: u8) -> Self {
        DeflateParams { level, mem_level, strategy: 0 }
    }

    #[cfg(test)]
    pub(crate) fn level(self) -> u8 {
        self.level
    }

    #[cfg(test)]
    pub(crate) fn mem_level(self) -> u8 {
        self.mem_level
    }

    /// zlib's strategy number (0 default, 1 filtered, 2 Huffman only, 3 RLE, 4 fixed).
    #[cfg(test)]
    pub(crate) fn strategy(self) -> u8 {
        self.strategy
    }
}

impl fmt::Display for DeflateParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "zlib:{}", self.level)?;
        if self.mem_level != Self::DEFAULT_MEM_LEVEL {
            write!(f, ":mem={}", self.mem_level)?;
        }
        if self.strategy != 0 {
            write!(f, ":strategy={}", STRATEGIES[usize::from(self.strategy)])?;
        }
        Ok(())
    }
}

impl FromStr for DeflateParams {
    type Err = DeflateParamsError;

    /// Reads the text form; `mem=8` may be written out, fields come at most once each.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut fields = text.split(':');
        if fields.next() != Some("zlib") {
            return Err(DeflateParamsError::NotZlib(clip(text)));
        }
        let level = fields.next().unwrap_or("");
        let level = one_digit(level).ok_or_else(|| DeflateParamsError::Level(clip(level)))?;
        let (mut mem_level, mut strategy) = (None, None);
        for field in fields {
            let (key, value) = field.split_once('=').unwrap_or((field, ""));
            match key {
                "mem" if mem_level.is_none() => {
                    let m = one_digit(value)
                        .ok_or_else(|| DeflateParamsError::MemLevel(clip(value)))?;
                    mem_level = Some(m);
                }
                "strategy" if strategy.is_none() => {
                    let s = STRATEGIES[1..]
                        .iter()
                        .position(|&name| name == value)
                        .ok_or_else(|| DeflateParamsError::Strategy(clip(value)))?;
                    strategy = Some(s as u8 + 1);
                }
                _ => return Err(DeflateParamsError::Field(clip(field))),
            }
        }
        DeflateParams::new(
            level,
            mem_level.unwrap_or(Self::DEFAULT_MEM_LEVEL),
            strategy.unwrap_or(0),
        )
    }
}

/// The value of one decimal digit written alone.
fn one_digit(text: &str) -> Option<u8> {
    match text.as_bytes() {
        [d @ b'0'..=b'9'] => Some(d - b'0'),
        _ => None,
    }
}

/// Levels in the order [`probe`] tries them: zlib's default first, then the maximum writers
/// choose, then the rest.
const PROBE_LEVELS: [u8; 10] = [6, 9, 1, 2, 3, 4, 5, 7, 8, 0];

/// The parameters with which madler zlib makes exactly `compressed_deflate` (a raw deflate
/// stream, without the gzip header and trailer) from `decompressed`, or `None`.
///
/// Tries `try_first` (say, the parameters of the member before), then each level in the order
/// 6, 9, 1-5, 7, 8, 0, each with memory level 8 then 9, default strategy. Each candidate's output
/// is compared as it comes, a piece of input at a time, and dropped at its first differing byte:
/// a wrong candidate usually costs its first 64 KiB of input, the right one a full compression.
/// The work is thus at most 21 compressions of `decompressed` (a member that matches nothing
/// and differs only near its end), which bounds what a caller should pass: a few MiB.
pub(crate) fn probe(
    compressed_deflate: &[u8],
    decompressed: &[u8],
    try_first: Option<DeflateParams>,
) -> Option<DeflateParams> {
    let mut room = vec![0u8; OUT_ROOM];
    let usual = PROBE_LEVELS
        .iter()
        .flat_map(|&level| [8, 9].map(|mem| DeflateParams::with_level(level, mem)))
        .filter(|&p| Some(p) != try_first);
    try_first
        .into_iter()
        .chain(usual)
        .find(|&p| reproduces(p, compressed_deflate, decompressed, &mut room))
}

/// Whether `params` compress `decompressed` to exactly `compressed`, stopping at the first byte
/// that differs.
fn reproduces(
    params: DeflateParams,
    compressed: &[u8],
    decompressed: &[u8],
    room: &mut [u8],
) -> bool {
    /// Why a comparison ended before the stream did.
    enum Stop {
        Differs,
        Zlib,
    }
    impl From<ZlibError> for Stop {
        fn from(_: ZlibError) -> Self {
            Stop::Zlib
        }
    }
    let Ok(mut deflate) = RawDeflate::new(params) else {
        return false;
    };
    let mut matched = 0usize;
    let mut compare = |out: &[u8]| -> Result<(), Stop> {
        let end = matched + out.len();
        if compressed.get(matched..end) != Some(out) {
            return Err(Stop::Differs);
        }
        matched = end;
        Ok(())
    };
    let fed: Result<(), Stop> = deflate.feed_all(decompressed, room, &mut compare);
    fed.is_ok() && matched == compressed.len()
}

/// One gzip member written from its header bytes, deflate parameters and decompressed bytes:
/// with a member's own header and the parameters [`probe`] found for it, the member as it was.
///
/// Streaming: the decompressed bytes come in any number of [`write_all`](Self::write_all)s of
/// any sizes (the bytes written do not depend on them), and memory stays a few hundred KiB
/// (zlib's state and two buffers) whatever the member's size. After an error the member is
/// incomplete and the writer should be dropped.
pub(crate) struct MemberWriter<W: Write> {
    out: W,
    deflate: RawDeflate,
    /// Input not yet handed to zlib: less than a [`PIECE`].
    pending: Vec<u8>,
    room: Vec<u8>,
    crc: Crc,
    written: u64,
}

impl<W: Write> MemberWriter<W> {
    /// Starts a member: writes `header_bytes` (which must be exactly one gzip header, as
    /// [`GzipHeader::bytes`] gives) to `out`.
    pub(crate) fn new(mut out: W, header_bytes: &[u8], params: DeflateParams) -> io::Result<Self> {
        let len = whole_header(header_bytes)?;
        let deflate = RawDeflate::new(params).map_err(io::Error::other)?;
        out.write_all(header_bytes)?;
        Ok(MemberWriter {
            out,
            deflate,
            pending: Vec::with_capacity(PIECE),
            room: vec![0u8; OUT_ROOM],
            crc: Crc::new(),
            written: len as u64,
        })
    }

    /// Compresses `data`, the next decompressed bytes of the member.
    pub(crate) fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        self.crc.update(data);
        while !data.is_empty() {
            if self.pending.is_empty() && data.len() >= PIECE {
                // A whole piece in the caller's bytes: no copy.
                let (piece, rest) = data.split_at(PIECE);
                self.deflate_piece(Some(piece), false)?;
                data = rest;
                continue;
            }
            let take = (PIECE - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() == PIECE {
                self.deflate_piece(None, false)?;
            }
        }
        Ok(())
    }

    /// The writer the member goes to (to take what it holds so far).
    pub(crate) fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Ends the deflate stream, writes the CRC-32 and length trailer; gives back the writer and
    /// the member's length in bytes (header, deflate stream and trailer).
    pub(crate) fn finish(mut self) -> io::Result<(W, u64)> {
        self.deflate_piece(None, true)?;
        self.out.write_all(&trailer(&self.crc))?;
        Ok((self.out, self.written + 8))
    }

    /// Hands zlib `piece`, or the pending bytes when `None` (then emptied), and writes out what
    /// it gives.
    fn deflate_piece(&mut self, piece: Option<&[u8]>, finish: bool) -> io::Result<()> {
        let MemberWriter { out, deflate, pending, room, written, .. } = self;
        let input = piece.unwrap_or(pending);
        let mut sink = |bytes: &[u8]| -> io::Result<()> {
            *written += bytes.len() as u64;
            out.write_all(bytes)
        };
        deflate.feed(input, finish, room, &mut sink)?;
        if piece.is_none() {
            pending.clear();
        }
        Ok(())
    }
}

/// A member's trailer: the CRC-32 and length of its decompressed bytes.
fn trailer(crc: &Crc) -> [u8; 8] {
    let mut t = [0u8; 8];
    t[..4].copy_from_slice(&crc.sum().to_le_bytes());
    // ISIZE: the length modulo 2^32, as RFC 1952 says.
    t[4..].copy_from_slice(&crc.amount().to_le_bytes());
    t
}

/// The length of `header_bytes` when they are exactly one gzip header.
fn whole_header(header_bytes: &[u8]) -> io::Result<usize> {
    let (_, len) = GzipHeader::parse(header_bytes)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if len != header_bytes.len() {
        let e = format!("{} bytes follow the gzip header given", header_bytes.len() - len);
        return Err(io::Error::new(io::ErrorKind::InvalidInput, e));
    }
    Ok(len)
}

thread_local! {
    /// The deflate state of this thread's last [`member_bytes`], reset for the next member.
    static KEPT_DEFLATE: std::cell::RefCell<Option<(DeflateParams, RawDeflate)>> =
        const { std::cell::RefCell::new(None) };
}

/// A whole member made in memory from its header bytes, parameters and decompressed bytes:
/// exactly the bytes a [`MemberWriter`] writes for them (zlib is fed the same pieces). zlib's
/// state is kept on the thread and reset between members of the same parameters (zlib's
/// `deflateReset`), which saves allocating and zeroing a quarter MiB per member: many small
/// members are what a per-record `.arc.gz` is.
pub(crate) fn member_bytes(
    header_bytes: &[u8],
    params: DeflateParams,
    decompressed: &[u8],
) -> io::Result<Vec<u8>> {
    whole_header(header_bytes)?;
    let kept = KEPT_DEFLATE.with(|k| k.borrow_mut().take());
    let reset =
        kept.filter(|(p, _)| *p == params).and_then(|(_, mut d)| d.reset().ok().map(|()| d));
    let mut deflate = match reset {
        Some(d) => d,
        None => RawDeflate::new(params).map_err(io::Error::other)?,
    };
    let mut out = Vec::with_capacity(header_bytes.len() + decompressed.len() / 2 + 64);
    out.extend_from_slice(header_bytes);
    let mut room = vec![0u8; OUT_ROOM];
    let mut sink = |bytes: &[u8]| -> Result<(), ZlibError> {
        out.extend_from_slice(bytes);
        Ok(())
    };
    deflate.feed_all(decompressed, &mut room, &mut sink).map_err(io::Error::other)?;
    let mut crc = Crc::new();
    crc.update(decompressed);
    out.extend_from_slice(&trailer(&crc));
    KEPT_DEFLATE.with(|k| *k.borrow_mut() = Some((params, deflate)));
    Ok(out)
}

impl<W: Write> Write for MemberWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        MemberWriter::write_all(self, data)?;
        Ok(data.len())
    }

    /// Flushes `out` only: a zlib flush would put bytes in the stream the original did not have.
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A zlib call that failed (a bug or an allocation failure: valid parameters and buffers
/// cannot make zlib fail otherwise).
#[derive(Debug, thiserror::Error)]
#[error("zlib {call} failed with code {code}")]
struct ZlibError {
    call: &'static str,
    code: c_int,
}

impl From<ZlibError> for io::Error {
    fn from(e: ZlibError) -> Self {
        io::Error::other(e)
    }
}

/// madler zlib's raw deflate stream. Boxed: zlib's state points back at its `z_stream`, which
/// therefore must not move once `deflateInit2_` has run.
struct RawDeflate {
    stream: Box<zlib::z_stream>,
}

// SAFETY: the stream and zlib's state are owned by this value alone and hold no thread-bound
// data; the allocator behind them (malloc) may free from any thread.
unsafe impl Send for RawDeflate {}

impl RawDeflate {
    fn new(params: DeflateParams) -> Result<Self, ZlibError> {
        let mut stream = Box::new(zlib::z_stream {
            next_in: std::ptr::null_mut(),
            avail_in: 0,
            total_in: 0,
            next_out: std::ptr::null_mut(),
            avail_out: 0,
            total_out: 0,
            msg: std::ptr::null_mut(),
            state: std::ptr::null_mut(),
            zalloc: zlib_alloc,
            zfree: zlib_free,
            opaque: std::ptr::null_mut(),
            data_type: 0,
            adler: 0,
            reserved: 0,
        });
        // SAFETY: `stream` is fully initialised with working allocation functions and is boxed,
        // so the address zlib's state keeps stays valid until `deflateEnd` in `drop`; the
        // version and size passed are those of the zlib linked. On failure zlib frees what it
        // allocated and leaves `state` null, and the box is dropped without `deflateEnd`.
        let code = unsafe {
            zlib::deflateInit2_(
                &mut *stream,
                c_int::from(params.level),
                zlib::Z_DEFLATED,
                -15,
                c_int::from(params.mem_level),
                c_int::from(params.strategy),
                zlib::zlibVersion(),
                std::mem::size_of::<zlib::z_stream>() as c_int,
            )
        };
        if code != zlib::Z_OK {
            return Err(ZlibError { call: "deflateInit2", code });
        }
        Ok(RawDeflate { stream })
    }

    /// Compresses all of `input` (at most [`PIECE`] bytes), ending the stream if `finish`,
    /// handing each output to `sink` (`room` holds it; at least [`OUT_ROOM`] bytes).
    fn feed<E: From<ZlibError>>(
        &mut self,
        input: &[u8],
        finish: bool,
        room: &mut [u8],
        sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        debug_assert!(input.len() <= PIECE && room.len() >= OUT_ROOM);
        let flush = if finish { zlib::Z_FINISH } else { zlib::Z_NO_FLUSH };
        // zlib never writes through `next_in` (it is `z_const` in zlib.h).
        self.stream.next_in = input.as_ptr().cast_mut();
        self.stream.avail_in = input.len() as c_uint;
        loop {
            self.stream.next_out = room.as_mut_ptr();
            self.stream.avail_out = room.len() as c_uint;
            // SAFETY: the stream was initialised by `deflateInit2_` and has not moved (boxed);
            // `next_in`/`avail_in` describe `input` and `next_out`/`avail_out` describe `room`,
            // both borrowed for this whole call. zlib reads them only inside `deflate`; the
            // pointers left behind are replaced before the next call.
            let code = unsafe { zlib::deflate(&mut *self.stream, flush) };
            let produced = room.len() - self.stream.avail_out as usize;
            let stuck = code == zlib::Z_BUF_ERROR && produced == 0 && finish;
            if (code < 0 && code != zlib::Z_BUF_ERROR) || stuck {
                return Err(ZlibError { call: "deflate", code }.into());
            }
            if produced > 0 {
                sink(&room[..produced])?;
            }
            // Without a flush, zlib has taken all the input once it leaves room unfilled.
            let done = if finish { code == zlib::Z_STREAM_END } else { self.stream.avail_out != 0 };
            if done {
                return Ok(());
            }
        }
    }
}

impl RawDeflate {
    /// Compresses all of `input` to the stream's end, in the fixed pieces [`MemberWriter`]
    /// feeds (whole pieces, then the rest with the end): the same bytes as it writes.
    fn feed_all<E: From<ZlibError>>(
        &mut self,
        input: &[u8],
        room: &mut [u8],
        sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let (pieces, last) = input.split_at(input.len() / PIECE * PIECE);
        pieces
            .chunks(PIECE)
            .try_for_each(|piece| self.feed(piece, false, room, sink))
            .and_then(|()| self.feed(last, true, room, sink))
    }

    /// Makes the stream ready for a new member with the same parameters (what a new stream
    /// would write, without allocating one).
    fn reset(&mut self) -> Result<(), ZlibError> {
        // SAFETY: the stream was initialised by `deflateInit2_` and has not moved (boxed).
        let code = unsafe { zlib::deflateReset(&mut *self.stream) };
        if code != zlib::Z_OK {
            return Err(ZlibError { call: "deflateReset", code });
        }
        Ok(())
    }
}

impl Drop for RawDeflate {
    fn drop(&mut self) {
        // SAFETY: the stream was initialised by `deflateInit2_` (`new` returns no value
        // otherwise) and has not moved; this frees zlib's state, once.
        unsafe {
            zlib::deflateEnd(&mut *self.stream);
        }
    }
}

/// zlib's allocator: the C library's, as zlib's default is (the `z_stream` field is a Rust
/// function pointer, which cannot be left null to ask for the default).
unsafe extern "C" fn zlib_alloc(_opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void {
    // SAFETY: calloc checks `items * size` for overflow and returns null on failure, which zlib
    // reports as Z_MEM_ERROR.
    unsafe { libc::calloc(items as usize, size as usize) }
}

unsafe extern "C" fn zlib_free(_opaque: *mut c_void, address: *mut c_void) {
    // SAFETY: zlib frees only what `zlib_alloc` gave it, once.
    unsafe { libc::free(address) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use flate2::{Decompress, FlushDecompress, Status};
    use proptest::prelude::*;

    /// One gzip member of a file, split by an independent inflater (flate2).
    struct Member {
        start: usize,
        end: usize,
        header: GzipHeader,
        deflate: std::ops::Range<usize>,
        decompressed: Vec<u8>,
    }

    /// The members `file` is made of, each checked against its CRC-32 and length trailer.
    fn members(file: &[u8]) -> Vec<Member> {
        let mut found = Vec::new();
        let mut start = 0;
        while start < file.len() {
            let (header, header_len) = GzipHeader::parse(&file[start..]).unwrap();
            let deflate_start = start + header_len;
            let mut inflate = Decompress::new(false);
            let mut decompressed = Vec::new();
            loop {
                decompressed.reserve(64 << 10);
                let before = (inflate.total_in(), inflate.total_out());
                let input = &file[deflate_start + inflate.total_in() as usize..];
                let status =
                    inflate.decompress_vec(input, &mut decompressed, FlushDecompress::None);
                if status.unwrap() == Status::StreamEnd {
                    break;
                }
                let moved = before != (inflate.total_in(), inflate.total_out());
                assert!(moved, "the member at {start} is cut short");
            }
            let deflate_end = deflate_start + inflate.total_in() as usize;
            let trailer = &file[deflate_end..deflate_end + 8];
            let mut crc = Crc::new();
            crc.update(&decompressed);
            assert_eq!(trailer[..4], crc.sum().to_le_bytes(), "CRC of the member at {start}");
            assert_eq!(trailer[4..], (decompressed.len() as u32).to_le_bytes());
            found.push(Member {
                start,
                end: deflate_end + 8,
                header,
                deflate: deflate_start..deflate_end,
                decompressed,
            });
            start = deflate_end + 8;
        }
        found
    }

    /// `decompressed` written as a member, in writes of the sizes `splits` gives in turn.
    fn rebuild(
        header: &[u8],
        params: DeflateParams,
        decompressed: &[u8],
        splits: &[usize],
    ) -> Vec<u8> {
        let mut writer = MemberWriter::new(Vec::new(), header, params).unwrap();
        let mut rest = decompressed;
        for &size in splits.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (now, later) = rest.split_at(size.min(rest.len()));
            writer.write_all(now).unwrap();
            rest = later;
        }
        let (out, len) = writer.finish().unwrap();
        assert_eq!(len, out.len() as u64);
        out
    }

    fn corpus_arc_gz() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("../shared/corpus/arc"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .chain([root
                .join("samples/heritrix-job/arcs/IAH-20240315103000-00000-crawler.example.arc.gz")])
            .filter(|p| p.to_string_lossy().ends_with(".arc.gz"))
            .collect();
        files.sort();
        files
    }

    /// The bytes of a real crawl: the decompressed records of the corpus's largest ARC.
    fn crawl_bytes(len: usize) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus/arc/jwat-IAH-20080430204825-00000-blackbook.arc.gz");
        let stream = members(&std::fs::read(path).unwrap())
            .into_iter()
            .flat_map(|m| m.decompressed)
            .take(len)
            .collect::<Vec<u8>>();
        assert_eq!(stream.len(), len);
        stream
    }

    /// Every member of every `.arc.gz` of the corpus (Heritrix's Java and Python's zlib wrote
    /// them) is rebuilt identical from its header, probed parameters and decompressed bytes.
    #[test]
    fn every_corpus_arc_gz_member_is_rebuilt_byte_for_byte() {
        let files = corpus_arc_gz();
        assert!(files.len() >= 7, "{files:?}");
        let (mut all, mut write_time, mut write_bytes) = (0, Duration::ZERO, 0);
        for path in files {
            let file = std::fs::read(&path).unwrap();
            let members = members(&file);
            let mut by_params = std::collections::BTreeMap::new();
            let mut previous = None;
            for m in &members {
                let params = probe(&file[m.deflate.clone()], &m.decompressed, previous)
                    .unwrap_or_else(|| {
                        panic!("{}: member at {} not reproduced", path.display(), m.start)
                    });
                previous = Some(params);
                *by_params.entry(params.to_string()).or_insert(0) += 1;
                let began = Instant::now();
                let rebuilt =
                    rebuild(m.header.bytes(), params, &m.decompressed, &[8 << 10, 1, 100_000]);
                write_time += began.elapsed();
                write_bytes += m.decompressed.len();
                assert!(
                    rebuilt == file[m.start..m.end],
                    "{}: member at {} differs when rebuilt at {params}",
                    path.display(),
                    m.start
                );
            }
            assert_eq!(members.last().unwrap().end, file.len());
            eprintln!(
                "{}: {} of {} members rebuilt, {by_params:?}",
                path.display(),
                members.len(),
                members.len()
            );
            all += members.len();
        }
        // Seven files: 2 + 2 + 2 + 300 + 9 + 2 + 9 members.
        assert_eq!(all, 326);
        let mb_per_s = write_bytes as f64 / 1e6 / write_time.as_secs_f64();
        eprintln!("MemberWriter: {write_bytes} bytes in {write_time:?}, {mb_per_s:.1} MB/s");
    }

    /// The deflate stream python's zlib (madler zlib, an independent caller of it) makes of
    /// `data` in one call, for each level 0-9 and memory level 8 and 9.
    fn python_zlib_streams(data: &[u8]) -> Vec<((u8, u8), Vec<u8>)> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in"), data).unwrap();
        let script = "import sys, zlib\n\
            d = open(sys.argv[1] + '/in', 'rb').read()\n\
            for level in range(10):\n\
            \x20   for mem in (8, 9):\n\
            \x20       c = zlib.compressobj(level, zlib.DEFLATED, -15, mem)\n\
            \x20       open('%s/%d-%d' % (sys.argv[1], level, mem), 'wb').write(c.compress(d) + c.flush())\n";
        let run = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        (0..10u8)
            .flat_map(|level| [8u8, 9].map(|mem| (level, mem)))
            .map(|(level, mem)| {
                let stream = std::fs::read(dir.path().join(format!("{level}-{mem}"))).unwrap();
                ((level, mem), stream)
            })
            .collect()
    }

    /// A gzip header as Python's gzip module writes it (a name, an MTIME, XFL 0, OS 255).
    const PYTHON_HEADER: &[u8] = b"\x1f\x8b\x08\x08\x00\x09\x6e\x49\x00\xffrecord.arc\x00";

    /// python's zlib at every level and memory level, on 300 KB of crawl (several of the
    /// pieces zlib is fed in): each stream of levels 1-9 is found and rebuilt.
    #[test]
    fn python_zlib_streams_at_every_setting_are_found_and_rebuilt() {
        let data = crawl_bytes(300_000);
        let streams = python_zlib_streams(&data);
        let distinct: std::collections::HashSet<&Vec<u8>> =
            streams.iter().map(|(_, s)| s).collect();
        assert!(distinct.len() >= 10, "only {} distinct streams", distinct.len());
        for ((level, mem), stream) in &streams {
            if *level == 0 {
                // Python's level 0 cuts its stored blocks where its growing output buffers end
                // (65,531 then 32,773 bytes, then 65,535): not the one-call blocks made here.
                if *mem == 8 {
                    assert_eq!(probe(stream, &data, None), None);
                }
                continue;
            }
            let found = probe(stream, &data, None)
                .unwrap_or_else(|| panic!("python zlib level {level} mem {mem} not found"));
            // Settings may coincide on this input (level 6 and 7, say): the bytes must not.
            let rebuilt = rebuild(PYTHON_HEADER, found, &data, &[1000, 70_000, 3]);
            let body = &rebuilt[PYTHON_HEADER.len()..rebuilt.len() - 8];
            assert!(body == &stream[..], "level {level} mem {mem}: {found} rebuilds other bytes");
            if [(6, 8), (9, 8)].contains(&(*level, *mem)) {
                assert_eq!(found, DeflateParams::with_level(*level, *mem));
            }
        }
    }

    /// The bytes written do not depend on how the decompressed bytes are handed over, at any
    /// level and strategy (level 0's blocks follow zlib's buffers, which the writer fixes).
    #[test]
    fn the_member_written_does_not_depend_on_write_sizes() {
        let data = crawl_bytes(200_000);
        for level in 0..=9 {
            for strategy in 0..5 {
                let params = DeflateParams::new(level, 8, strategy).unwrap();
                let whole = rebuild(PYTHON_HEADER, params, &data, &[usize::MAX]);
                for splits in [&[1usize, 7, 4096][..], &[PIECE - 1], &[PIECE + 1, 13]] {
                    let split = rebuild(PYTHON_HEADER, params, &data, splits);
                    assert!(split == whole, "{params} in writes of {splits:?}");
                }
                let deflate = &whole[PYTHON_HEADER.len()..whole.len() - 8];
                assert!(probe(deflate, &data, Some(params)).is_some(), "{params}");
            }
        }
    }

    /// A member made whole in memory, with zlib's state reset from the member before, is the
    /// member the streaming writer writes: whatever came before on the thread (other
    /// parameters, longer or shorter members), at lengths around zlib's pieces.
    #[test]
    fn a_member_made_in_memory_is_the_member_streamed() {
        let data = crawl_bytes(3 * PIECE + 1);
        let lens = [0, 1, 5000, PIECE - 1, PIECE, PIECE + 1, 2 * PIECE, 3 * PIECE + 1, 70_000];
        let settings =
            [(6, 8, 0), (6, 8, 0), (9, 9, 0), (0, 8, 0), (6, 8, 0), (1, 8, 3), (6, 8, 0)];
        for (level, mem, strategy) in settings {
            let params = DeflateParams::new(level, mem, strategy).unwrap();
            for &len in lens.iter().chain(lens.iter().rev()) {
                let input = &data[data.len() - len..];
                let streamed = rebuild(PYTHON_HEADER, params, input, &[usize::MAX]);
                let made = member_bytes(PYTHON_HEADER, params, input).unwrap();
                assert!(made == streamed, "{params}, {len} bytes");
            }
        }
        let err = member_bytes(&PYTHON_HEADER[..5], DeflateParams::new(6, 8, 0).unwrap(), b"x");
        assert_eq!(err.unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    /// A member flate2 writes with zlib-rs (the backend webaip uses elsewhere) at zlib's
    /// default level is not madler zlib's at any setting tried: it is why madler zlib is linked.
    #[test]
    fn a_zlib_rs_member_is_not_reproduced_by_madler_zlib() {
        let data = crawl_bytes(300_000);
        let mut deflate =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        deflate.write_all(&data).unwrap();
        let zlib_rs = deflate.finish().unwrap();
        assert_eq!(probe(&zlib_rs, &data, None), None);
        // The same bytes from madler zlib at level 6 are found.
        let madler = rebuild(PYTHON_HEADER, DeflateParams::with_level(6, 8), &data, &[PIECE]);
        let madler = &madler[PYTHON_HEADER.len()..madler.len() - 8];
        assert_ne!(madler, &zlib_rs[..]);
        assert_eq!(probe(madler, &data, None), Some(DeflateParams::with_level(6, 8)));
    }

    /// A stream that matches nothing is refused, whether it differs at its start, its last
    /// byte, or is cut short or run on.
    #[test]
    fn a_stream_that_differs_anywhere_is_not_matched() {
        let data = crawl_bytes(100_000);
        let good = rebuild(PYTHON_HEADER, DeflateParams::with_level(9, 8), &data, &[PIECE]);
        let good = good[PYTHON_HEADER.len()..good.len() - 8].to_vec();
        assert_eq!(probe(&good, &data, None), Some(DeflateParams::with_level(9, 8)));
        for at in [0, good.len() / 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            assert_eq!(probe(&bad, &data, None), None, "byte {at} changed");
        }
        assert_eq!(probe(&good[..good.len() - 1], &data, None), None);
        assert_eq!(probe(&[&good[..], b"\0"].concat(), &data, None), None);
        assert_eq!(probe(&good, &data[1..], None), None);
    }

    #[test]
    fn parameters_have_a_short_text_form_that_reads_back() {
        assert_eq!(DeflateParams::with_level(6, 8).to_string(), "zlib:6");
        assert_eq!(DeflateParams::with_level(9, 9).to_string(), "zlib:9:mem=9");
        let rle = DeflateParams::new(1, 8, 3).unwrap();
        assert_eq!((rle.level(), rle.mem_level(), rle.strategy()), (1, 8, 3));
        assert_eq!(rle.to_string(), "zlib:1:strategy=rle");
        assert_eq!(
            DeflateParams::new(0, 1, 2).unwrap().to_string(),
            "zlib:0:mem=1:strategy=huffman"
        );
        for level in 0..=9 {
            for mem in 1..=9 {
                for strategy in 0..5 {
                    let params = DeflateParams::new(level, mem, strategy).unwrap();
                    assert_eq!(params.to_string().parse::<DeflateParams>(), Ok(params));
                }
            }
        }
        assert_eq!("zlib:9:mem=8".parse(), Ok(DeflateParams::with_level(9, 8)));
        assert_eq!("zlib:4:strategy=fixed:mem=2".parse(), DeflateParams::new(4, 2, 4));
    }

    #[test]
    fn parameters_out_of_range_or_misspelt_are_refused() {
        use DeflateParamsError as E;
        let refused = |text: &str| text.parse::<DeflateParams>().unwrap_err();
        assert_eq!(refused(""), E::NotZlib(String::new()));
        assert_eq!(refused("gzip:6"), E::NotZlib("gzip:6".into()));
        assert_eq!(refused("zlib"), E::Level(String::new()));
        assert_eq!(refused("zlib:10"), E::Level("10".into()));
        assert_eq!(refused("zlib:-1"), E::Level("-1".into()));
        assert_eq!(refused("zlib: 6"), E::Level(" 6".into()));
        assert_eq!(refused("zlib:6:mem=0"), E::MemLevel("0".into()));
        assert_eq!(refused("zlib:6:mem=10"), E::MemLevel("10".into()));
        assert_eq!(refused("zlib:6:mem"), E::MemLevel(String::new()));
        assert_eq!(refused("zlib:6:strategy=default"), E::Strategy("default".into()));
        assert_eq!(refused("zlib:6:strategy=RLE"), E::Strategy("RLE".into()));
        assert_eq!(refused("zlib:6:mem=8:mem=8"), E::Field("mem=8".into()));
        assert_eq!(refused("zlib:6:window=15"), E::Field("window=15".into()));
        assert_eq!(refused("zlib:6:"), E::Field(String::new()));
        assert_eq!(refused(&format!("zlib:{}", "9".repeat(1000))), E::Level("9".repeat(40)));
        assert_eq!(DeflateParams::new(10, 8, 0), Err(E::Level("10".into())));
        assert_eq!(DeflateParams::new(6, 0, 0), Err(E::MemLevel("0".into())));
        assert_eq!(DeflateParams::new(6, 8, 5), Err(E::Strategy("5".into())));
    }

    /// A header with every optional field, its CRC included, as bytes.
    fn full_header(extra: &[u8], name: &[u8], comment: &[u8]) -> Vec<u8> {
        let mut h = vec![0x1f, 0x8b, 8, FEXTRA | FNAME | FCOMMENT | FHCRC, 1, 2, 3, 4, 2, 3];
        h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        h.extend_from_slice(extra);
        for field in [name, comment] {
            h.extend_from_slice(field);
            h.push(0);
        }
        let crc = crc16(&h);
        h.extend_from_slice(&crc.to_le_bytes());
        h
    }

    /// FHCRC: the low 16 bits of the header's CRC-32.
    fn crc16(bytes: &[u8]) -> u16 {
        let mut crc = Crc::new();
        crc.update(bytes);
        crc.sum() as u16
    }

    #[test]
    fn a_header_is_kept_verbatim_with_its_fields() {
        let header = full_header(b"LX\x02\x00ab", b"name.arc", b"a comment");
        let mut member = header.clone();
        member.extend_from_slice(b"\x03\x00rest of the member");
        let (parsed, len) = GzipHeader::parse(&member).unwrap();
        assert_eq!(len, header.len());
        assert_eq!(parsed.bytes(), &header[..]);
        assert_eq!(parsed.flags(), 0x1e);
        assert_eq!(parsed.mtime(), 0x0403_0201);
        assert_eq!((parsed.extra_flags(), parsed.os()), (2, 3));
        // zlib-rs's reader (flate2) agrees on where the header ends.
        let mut gz = flate2::bufread::GzDecoder::new(&member[..]);
        let _ = io::Read::read(&mut gz, &mut [0u8; 16]);
        let read = gz.header().expect("flate2 reads the header");
        assert_eq!(
            (read.filename(), read.comment()),
            (Some(&b"name.arc"[..]), Some(&b"a comment"[..]))
        );
        assert_eq!(read.extra(), Some(&b"LX\x02\x00ab"[..]));
    }

    #[test]
    fn a_header_that_is_not_one_or_runs_on_is_refused() {
        use GzipHeaderError as E;
        assert_eq!(GzipHeader::parse(b"").unwrap_err(), E::Truncated { available: 0, needed: 10 });
        assert_eq!(
            GzipHeader::parse(b"\x1f").unwrap_err(),
            E::Truncated { available: 1, needed: 10 }
        );
        assert_eq!(
            GzipHeader::parse(b"PK\x03\x04").unwrap_err(),
            E::NotGzip { found: b"PK".to_vec() }
        );
        assert_eq!(
            GzipHeader::parse(b"\x1f\x9d").unwrap_err(),
            E::NotGzip { found: b"\x1f\x9d".to_vec() }
        );
        let plain = b"\x1f\x8b\x08\x00\0\0\0\0\0\x03";
        assert_eq!(GzipHeader::parse(plain).map(|(_, len)| len), Ok(10));
        let mut other = *plain;
        other[2] = 7;
        assert_eq!(GzipHeader::parse(&other).unwrap_err(), E::NotDeflate(7));
        other[2] = 8;
        other[3] = 0x20;
        assert_eq!(GzipHeader::parse(&other).unwrap_err(), E::ReservedFlags(0x20));
        // An extra field of 65,535 bytes would end the header past 64 KiB.
        let mut long_extra = full_header(&[b'x'; 65_535], b"", b"");
        assert_eq!(GzipHeader::parse(&long_extra).unwrap_err(), E::TooLong);
        long_extra.truncate(100);
        assert_eq!(GzipHeader::parse(&long_extra).unwrap_err(), E::TooLong);
        // A name with no end, in a megabyte given: refused after 64 KiB.
        let mut endless = b"\x1f\x8b\x08\x08\0\0\0\0\0\x03".to_vec();
        endless.resize(1 << 20, b'n');
        assert_eq!(GzipHeader::parse(&endless).unwrap_err(), E::TooLong);
        endless.truncate(1000);
        assert_eq!(
            GzipHeader::parse(&endless).unwrap_err(),
            E::Truncated { available: 1000, needed: 1001 }
        );
        // The longest header accepted, exactly 64 KiB: extra field and a name ending at the limit.
        let longest = full_header(&[b'x'; 65_000], &[b'n'; MAX_HEADER - 65_000 - 16], b"");
        assert_eq!(longest.len(), MAX_HEADER);
        assert_eq!(GzipHeader::parse(&longest).map(|(_, len)| len), Ok(MAX_HEADER));
    }

    #[test]
    fn the_writer_refuses_what_is_not_exactly_a_header() {
        let params = DeflateParams::with_level(6, 8);
        for bad in
            [&b""[..], b"\x1f\x8b\x08\x00\0\0\0\0\0", b"\x1f\x8b\x08\x00\0\0\0\0\0\x03\x03\x00"]
        {
            let refused = MemberWriter::new(Vec::new(), bad, params).err().expect("refused");
            assert_eq!(refused.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        // An empty member: the header, an empty final block and the trailer, as gzip writes.
        let empty = rebuild(PYTHON_HEADER, params, b"", &[1]);
        assert_eq!(&empty[PYTHON_HEADER.len()..], b"\x03\x00\0\0\0\0\0\0\0\0");
    }

    proptest! {
        #[test]
        fn any_bytes_parse_or_are_refused_without_panic(
            gzip_like in any::<bool>(),
            flags in any::<u8>(),
            tail in proptest::collection::vec(any::<u8>(), 0..400),
        ) {
            let mut bytes = if gzip_like { vec![0x1f, 0x8b, 8, flags & 0x1f] } else { Vec::new() };
            bytes.extend_from_slice(&tail);
            if let Ok((header, len)) = GzipHeader::parse(&bytes) {
                prop_assert!(len >= 10 && len <= bytes.len());
                prop_assert_eq!(header.bytes(), &bytes[..len]);
            }
        }

        #[test]
        fn a_header_parses_to_its_length_and_every_prefix_is_truncated(
            extra in proptest::collection::vec(any::<u8>(), 0..300),
            name in proptest::collection::vec(1u8..=255, 0..100),
            comment in proptest::collection::vec(1u8..=255, 0..100),
            after in proptest::collection::vec(any::<u8>(), 0..50),
        ) {
            let header = full_header(&extra, &name, &comment);
            let member = [&header[..], &after[..]].concat();
            let (parsed, len) = GzipHeader::parse(&member).unwrap();
            prop_assert_eq!((parsed.bytes(), len), (&header[..], header.len()));
            for cut in 0..header.len() {
                let truncated = matches!(
                    GzipHeader::parse(&header[..cut]),
                    Err(GzipHeaderError::Truncated { available, .. }) if available == cut
                );
                prop_assert!(truncated, "cut at {}", cut);
            }
        }
    }
}
