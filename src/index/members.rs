//! The fast way through a WARC of one gzip member per record: each member inflated whole by
//! libdeflate (faster than a streaming inflater, and told where the member ends), and a large
//! file split between threads by speculation.
//!
//! Only members that are plainly right take the fast way: one record alone in its member
//! (line ends after it tolerated), that libdeflate inflates into at most [`MAX_MEMBER`] bytes.
//! Anything else (damage, a member holding several records, a huge one, a file that is not
//! gzip) goes to the streaming reader of [`super::warc`] at that member's offset, which
//! indexes it or names the fault exactly as it would reading the file from its start. It reads
//! through the walk's window, from the bytes already read: no byte is read from the file twice.
//! The walk reads the file itself, or takes its bytes in order from another reader of it (a
//! [`Feed`]: the WACZ export's copy), so that the file is read once for both.
//!
//! Splitting one file: a second thread starts at a guessed member boundary past the middle (a
//! gzip header whose member inflates to a line starting `WARC/`); its lines are kept only if
//! the first thread, walking from the start, lands exactly on that offset. A guess inside a
//! payload (a gzip file stored in a record) is never landed on, and its lines are dropped: the
//! first thread goes on alone. The lines are the same in every case.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use super::cdxj::IndexEntry;
use super::feed::Feed;
use super::method::{Pairer, Seen};
use super::record::{Cut, RecordIndexError, Start, is_cut, seen_of};
use super::warc::{
    BlockStart, EntryOptions, IndexError, StreamAt, add_record_fields, streamed, streamed_file,
};
use crate::formats::warc::WarcReader;

/// Most bytes a member may inflate to on the fast way (a larger one is streamed).
pub const MAX_MEMBER: usize = 64 << 20;
/// Compressed bytes kept ahead of the member being inflated, when the file has them.
const AHEAD: usize = 1 << 20;
/// Bytes read at once: the unread rest moved to the window's start is small beside them.
const READ: u64 = 8 << 20;
/// The gzip header flag of a header CRC.
const FHCRC: u8 = 0x02;
/// Bytes a streamed member's reader is kept behind by the window: the streaming reader's
/// buffer (256 KiB) may hold them unread, and the walk after the member starts among them.
const KEEP: u64 = AHEAD as u64;
/// Smallest file worth splitting between threads.
pub const MIN_SPLIT: u64 = 16 << 20;
/// How far past a split point a member boundary is looked for.
const GUESS_RANGE: usize = 8 << 20;

/// Hands the index entry of every indexed record of the WARC at `path` to `emit`, naming the
/// file `filename` in them.
pub fn index_warc(
    path: &Path,
    filename: &str,
    opts: EntryOptions,
    emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
) -> Result<(), IndexError> {
    if is_gzip_file(path) {
        return index_from(path, filename, opts, 0, Pairer::default(), emit);
    }
    // Not gzip (or unreadable): the streaming reader reads it, or names why not.
    let mut pairer = Pairer::default();
    streamed_file(path, filename, opts, &mut pairer, emit)?;
    pairer.finish(emit).map_err(|e| IndexError::Io { path: path.display().to_string(), source: e })
}

/// True when the file at `path` starts as gzip data does.
pub(crate) fn is_gzip_file(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    let file = crate::layout::open_user_file(path).map_err(io::Error::other);
    let read = file.and_then(|f| f.take(2).read_exact(&mut magic));
    read.is_ok() && magic == [0x1f, 0x8b]
}

/// Indexes a gzip WARC from `from` (a member's offset) to its end: the members the fast way
/// takes ([`super::members`]), the streaming reader for each it does not. `pairer` holds the
/// record before `from`, if any is still unpaired.
pub(crate) fn index_from(
    path: &Path,
    filename: &str,
    opts: EntryOptions,
    mut from: u64,
    pairer: Pairer,
    emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
) -> Result<(), IndexError> {
    let mut walker = Walker::open(path, filename, opts)?;
    walker.pairer = pairer;
    loop {
        let (at, stop) = walker.walk(from, u64::MAX, emit)?;
        if stop != Stop::Slow {
            return walker.finish(emit);
        }
        match walker.stream_member(at, emit, None)? {
            Some(next) if next > at => from = next,
            Some(_) | None => return walker.finish(emit),
        }
    }
}

/// libdeflate's decompressor.
struct Inflater(NonNull<libdeflate_sys::libdeflate_decompressor>);

// SAFETY: the decompressor is plain memory used by one thread at a time (`&mut self`).
unsafe impl Send for Inflater {}

/// Why a member was not inflated.
#[derive(Debug, PartialEq, Eq)]
enum Inflate {
    /// Not a whole gzip member in the input given (damaged, or cut short).
    BadData,
    /// It inflates to more than the output given.
    NoSpace,
}

impl Inflater {
    fn new() -> Option<Inflater> {
        // SAFETY: no arguments; a null result (no memory) is checked.
        NonNull::new(unsafe { libdeflate_sys::libdeflate_alloc_decompressor() }).map(Inflater)
    }

    /// Inflates the gzip member at the start of `input` into `out`: (bytes of the member,
    /// bytes inflated).
    fn member(&mut self, input: &[u8], out: &mut [u8]) -> Result<(usize, usize), Inflate> {
        let (mut used, mut made) = (0usize, 0usize);
        // SAFETY: the pointers and lengths are those of live slices, `out` writable; libdeflate
        // reads at most `input.len()` bytes, writes at most `out.len()` and sets both counts.
        let r = unsafe {
            libdeflate_sys::libdeflate_gzip_decompress_ex(
                self.0.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                out.len(),
                &mut used,
                &mut made,
            )
        };
        match r {
            libdeflate_sys::libdeflate_result_LIBDEFLATE_SUCCESS => Ok((used, made)),
            libdeflate_sys::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => {
                Err(Inflate::NoSpace)
            }
            _ => Err(Inflate::BadData),
        }
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: allocated by `libdeflate_alloc_decompressor`, freed once.
        unsafe { libdeflate_sys::libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

/// Where a window's bytes come from.
enum Source {
    /// The file, read by the window.
    File(File),
    /// Another reader of the file, handing its bytes on.
    Feed(Feed),
}

/// Bytes a window takes from a [`Feed`] at once: less than from a file, the copy handing them
/// on being at most a few MiB ahead.
const FEED_READ: u64 = 1 << 20;

/// A window of the file's compressed bytes, read ahead of the member being inflated.
struct Window {
    source: Source,
    path: PathBuf,
    len: u64,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    lo: u64,
    /// Bytes read from the source at once.
    read: u64,
}

impl Window {
    fn open(path: &Path) -> io::Result<Window> {
        // Only a regular file: a FIFO put in place of a container is refused, never waited on.
        let file = crate::layout::open_user_file(path).map_err(io::Error::other)?;
        let len = file.metadata()?.len();
        let source = Source::File(file);
        Ok(Window { source, path: path.to_path_buf(), len, buf: Vec::new(), lo: 0, read: READ })
    }

    /// Reads at most `more` bytes from the source onto the end of the window.
    fn read_more(&mut self, more: u64) -> io::Result<()> {
        match &mut self.source {
            Source::File(file) => {
                let n = file.take(more).read_to_end(&mut self.buf)?;
                tally::note(&self.path, n as u64);
            }
            Source::Feed(feed) => drop(feed.read_onto(&mut self.buf, more)?),
        }
        Ok(())
    }

    /// Moves the source to offset `at`.
    fn seek(&mut self, at: u64) -> io::Result<()> {
        match &mut self.source {
            Source::File(file) => file.seek(SeekFrom::Start(at)).map(drop),
            Source::Feed(feed) => feed.seek(at),
        }
    }

    /// The file's bytes from `at` on (none at its end), for a reader going through the file
    /// in order: the window drops what lies [`KEEP`] bytes or more behind it as it reads on.
    fn stream_from(&mut self, at: u64) -> io::Result<&[u8]> {
        let hi = self.lo + self.buf.len() as u64;
        if at < self.lo || at > hi {
            self.buf.clear();
            self.lo = at;
            self.seek(at)?;
        } else if at == hi {
            let keep = at.saturating_sub(KEEP).max(self.lo);
            self.buf.drain(..(keep - self.lo) as usize);
            self.lo = keep;
        }
        if at == self.lo + self.buf.len() as u64 {
            self.read_more(self.read)?;
        }
        let start = (at - self.lo) as usize;
        Ok(&self.buf[start.min(self.buf.len())..])
    }

    /// The file's bytes from `at`: at least `want` of them, or all up to the end.
    fn from(&mut self, at: u64, want: usize) -> io::Result<&[u8]> {
        let hi = self.lo + self.buf.len() as u64;
        let need = (at + want as u64).min(self.len);
        if at < self.lo || at > hi {
            self.buf.clear();
            self.lo = at;
            self.seek(at)?;
        } else if hi < need {
            self.buf.drain(..(at - self.lo) as usize);
            self.lo = at;
        }
        let hi = self.lo + self.buf.len() as u64;
        if hi < need {
            self.read_more((need - hi).max(self.read))?;
        }
        let start = (at - self.lo) as usize;
        Ok(&self.buf[start.min(self.buf.len())..])
    }
}

/// The file's bytes from an offset on, read through a [`Window`]: a member the fast way does
/// not take is streamed from the bytes already read for it, and the walk after it finds what
/// the streaming reader read ahead still there: each byte is read from the file once.
struct WindowReader<'a> {
    window: &'a mut Window,
    at: u64,
}

impl Read for WindowReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let bytes = self.window.stream_from(self.at)?;
        let n = bytes.len().min(out.len());
        out[..n].copy_from_slice(&bytes[..n]);
        self.at += n as u64;
        Ok(n)
    }
}

/// Bytes the walks' windows read from each file, counted with the `test-hooks` feature (and in
/// unit tests): a test sees that a walk reads nothing twice.
pub(crate) mod tally {
    use std::path::Path;

    #[cfg(any(test, feature = "test-hooks"))]
    static READ: std::sync::Mutex<std::collections::BTreeMap<std::path::PathBuf, u64>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());

    /// Counts `n` bytes of `path` read.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn note(path: &Path, n: u64) {
        let mut read = READ.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *read.entry(path.to_path_buf()).or_default() += n;
    }

    /// Without the `test-hooks` feature nothing is counted.
    #[cfg(not(any(test, feature = "test-hooks")))]
    pub(crate) fn note(_: &Path, _: u64) {}

    /// The bytes of `path` read so far.
    #[cfg(any(test, feature = "test-hooks"))]
    #[cfg_attr(not(test), allow(dead_code, reason = "read by the tests"))]
    pub(crate) fn read(path: &Path) -> u64 {
        let read = READ.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        read.get(path).copied().unwrap_or(0)
    }
}

/// Where a walk over members stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// At the end of the file.
    End,
    /// At the first member boundary at or past the limit given.
    Limit,
    /// At a member the fast way does not take (see the module's text).
    Slow,
}

/// A file's gzip members inflated whole by libdeflate, one at a time: the compressed bytes
/// read ahead in a window, each member inflated into a buffer that grows up to a limit. The
/// index walks members with it, and `audit --deep` reads records with it.
pub(crate) struct MemberInflater {
    inflater: Inflater,
    out: Vec<u8>,
    window: Window,
    /// Most bytes a member may inflate to.
    max: usize,
}

impl MemberInflater {
    /// An inflater over the regular file at `path`, for members inflating to at most `max`
    /// bytes.
    pub(crate) fn open(path: &Path, max: usize) -> io::Result<MemberInflater> {
        MemberInflater::over(Window::open(path)?, max)
    }

    /// An inflater over `window`.
    fn over(window: Window, max: usize) -> io::Result<MemberInflater> {
        let inflater =
            Inflater::new().ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        Ok(MemberInflater { inflater, out: vec![0u8; (1 << 20).min(max)], window, max })
    }

    /// The file's length.
    pub(crate) fn file_len(&self) -> u64 {
        self.window.len
    }

    /// The bytes the last member inflated to, with what [`MemberInflater::inflate_at`] said.
    pub(crate) fn inflated(&self, made: usize) -> &[u8] {
        &self.out[..made]
    }

    /// Inflates the member at `at`: its compressed and inflated lengths; `None` when it is not
    /// a whole gzip member, or inflates to more than the limit.
    pub(crate) fn inflate_at(&mut self, at: u64) -> io::Result<Option<(usize, usize)>> {
        let mut want = AHEAD;
        loop {
            let file_len = self.window.len;
            let input = self.window.from(at, want)?;
            let whole_rest = at + input.len() as u64 >= file_len;
            // libdeflate skips a header CRC unchecked: the streaming reader checks it.
            if input.get(3).is_some_and(|flags| flags & FHCRC != 0) {
                return Ok(None);
            }
            match self.inflater.member(input, &mut self.out) {
                Ok(r) => return Ok(Some(r)),
                // Straight to the limit, in fresh zeroed memory: the kernel maps its pages
                // as they are written, so a buffer of the limit costs only what a member
                // fills, and a large member is inflated twice at most (growing by steps
                // inflated a 50 MB one four times, and zero-filled every step).
                Err(Inflate::NoSpace) if self.out.len() < self.max => {
                    self.out = vec![0u8; self.max];
                }
                // No gzip header: no larger window makes one.
                Err(Inflate::BadData)
                    if input.starts_with(&[0x1f, 0x8b]) && !whole_rest && want < self.max =>
                {
                    want *= 4
                }
                Err(_) => return Ok(None),
            }
        }
    }
}

/// The walk's state: the file's members, inflated one by one.
pub struct Walker {
    members: MemberInflater,
    name: String,
    filename: String,
    opts: EntryOptions,
    /// The last record walked, while it may still pair with the next.
    pub pairer: Pairer,
}

impl Walker {
    /// A walker over the file at `path`, naming it `filename` in the entries.
    pub fn open(path: &Path, filename: &str, opts: EntryOptions) -> Result<Walker, IndexError> {
        Walker::open_inflating(path, filename, opts, MAX_MEMBER)
    }

    /// [`Walker::open`], taking the fast way only for members that inflate to at most `max`
    /// bytes (tests lower it to stream small members as large ones are).
    pub(crate) fn open_inflating(
        path: &Path,
        filename: &str,
        opts: EntryOptions,
        max: usize,
    ) -> Result<Walker, IndexError> {
        let name = path.display().to_string();
        let io_err = |e| IndexError::Io { path: name.clone(), source: e };
        let members = MemberInflater::open(path, max).map_err(io_err)?;
        Ok(Walker::over(members, path, filename, opts))
    }

    /// A walker over the `len` bytes of the file at `path` that `feed` hands on (it reads
    /// nothing from the file itself), taking the fast way for members inflating to at most
    /// `max` bytes.
    pub fn over_feed(
        feed: Feed,
        (path, len): (&Path, u64),
        filename: &str,
        opts: EntryOptions,
        max: usize,
    ) -> Result<Walker, IndexError> {
        let path_buf = path.to_path_buf();
        let window = Window {
            source: Source::Feed(feed),
            path: path_buf,
            len,
            buf: Vec::new(),
            lo: 0,
            read: FEED_READ,
        };
        let io_err = |e| IndexError::Io { path: path.display().to_string(), source: e };
        let members = MemberInflater::over(window, max).map_err(io_err)?;
        Ok(Walker::over(members, path, filename, opts))
    }

    fn over(members: MemberInflater, path: &Path, filename: &str, opts: EntryOptions) -> Walker {
        Walker {
            members,
            name: path.display().to_string(),
            filename: filename.to_string(),
            opts,
            pairer: Pairer::default(),
        }
    }

    /// Hands on the entry of the last record walked: no record follows it.
    pub fn finish(
        &mut self,
        emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
    ) -> Result<(), IndexError> {
        let path = self.name.clone();
        self.pairer.finish(emit).map_err(|source| IndexError::Io { path, source })
    }

    /// The file's length.
    pub fn file_len(&self) -> u64 {
        self.members.file_len()
    }

    /// Hands the entries of the members from `at` on to `emit`, until the file's end, the first
    /// member boundary at or past `limit`, or a member it does not take: where it stopped, and
    /// why.
    pub fn walk(
        &mut self,
        at: u64,
        limit: u64,
        emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
    ) -> Result<(u64, Stop), IndexError> {
        self.walk_seeing(at, limit, emit, &mut |_, _| Ok(()))
    }

    /// [`Walker::walk`], showing `seen` each member taken (its offset and inflated bytes, one
    /// record alone) after its entry: a caller that needs more of the records than their lines
    /// (the WACZ export's pages) reads them without inflating them again.
    pub fn walk_seeing(
        &mut self,
        mut at: u64,
        limit: u64,
        emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
        seen: &mut dyn FnMut(u64, &[u8]) -> io::Result<()>,
    ) -> Result<(u64, Stop), IndexError> {
        let name = self.name.clone();
        let io_err = |e| IndexError::Io { path: name.clone(), source: e };
        loop {
            if at >= self.members.file_len() {
                return Ok((at, Stop::End));
            }
            if at >= limit {
                return Ok((at, Stop::Limit));
            }
            let Some((used, made)) = self.members.inflate_at(at).map_err(io_err)? else {
                return Ok((at, Stop::Slow));
            };
            match one_record(self.members.inflated(made), self.opts) {
                Some(Some(mut seen)) => {
                    if let Some(entry) = &mut seen.entry {
                        (entry.offset, entry.length) = (at, used as u64);
                        entry.filename.clone_from(&self.filename);
                    }
                    self.pairer.push(seen, emit).map_err(io_err)?;
                }
                Some(None) => {}
                None => return Ok((at, Stop::Slow)),
            }
            seen(at, self.members.inflated(made)).map_err(io_err)?;
            at += used as u64;
        }
    }

    /// Streams the member at `at`, one the fast way does not take (a large one, damage), as
    /// `webaip index` reads it from the file's start: its entries to `emit`, through the
    /// walk's pairer, and each record's head and block start to `block_start`. The bytes come
    /// through the walk's window, so none is read from the file twice. Returns where the
    /// member ends (`None`: the file ended first).
    pub(crate) fn stream_member(
        &mut self,
        at: u64,
        emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
        block_start: Option<BlockStart<'_>>,
    ) -> Result<Option<u64>, IndexError> {
        let input = WindowReader { window: &mut self.members.window, at };
        let from = StreamAt {
            name: self.name.clone(),
            filename: &self.filename,
            opts: self.opts,
            base: at,
            resume: true,
        };
        streamed(input, &from, &mut self.pairer, emit, block_start)
    }

    /// Whether the record of the member at `at` pairs with the last record walked (a request
    /// with its response, [`super::method`]); true when that member is not read the fast way.
    pub fn pairs_across(&mut self, at: u64) -> io::Result<bool> {
        let Some((_, made)) = self.members.inflate_at(at)? else { return Ok(true) };
        Ok(match one_record(self.members.inflated(made), self.opts) {
            Some(Some(next)) => self.pairer.pairs_with(&next),
            Some(None) => false,
            None => true,
        })
    }

    /// The first offset at or past `from` (and before `from` + `GUESS_RANGE`) where a gzip
    /// member starts whose first bytes inflate to a WARC record's start: a guess at a member
    /// boundary (a walk landing on it exactly confirms it). Reads at most `GUESS_RANGE` bytes
    /// past `from` and one read ahead (8 MiB), whatever lies there: a candidate is judged by
    /// its first [`GUESS_INPUT`] bytes.
    pub fn guess_boundary(&mut self, from: u64) -> io::Result<Option<u64>> {
        self.guess_boundary_within(from, GUESS_RANGE as u64)
    }

    /// [`Walker::guess_boundary`] before `from` + `range`.
    pub fn guess_boundary_within(&mut self, from: u64, range: u64) -> io::Result<Option<u64>> {
        let mut at = from;
        let end = from.saturating_add(range).min(self.members.file_len());
        while at < end {
            let bytes = self.members.window.from(at, AHEAD)?;
            let Some(i) = memchr::memmem::find(bytes, &[0x1f, 0x8b, 0x08]) else {
                at += bytes.len().saturating_sub(2).max(1) as u64;
                continue;
            };
            at += i as u64;
            if at >= end {
                break;
            }
            let bytes = self.members.window.from(at, GUESS_INPUT)?;
            if starts_warc_record(&bytes[..bytes.len().min(GUESS_INPUT)]) {
                return Ok(Some(at));
            }
            at += 1;
        }
        Ok(None)
    }
}

/// Compressed bytes a guessed member start is inflated from: enough for the first bytes of
/// any member that starts a record (its gzip header and a deflate block's start), and a
/// bound on what a false gzip header in a payload costs (inflating the member whole, cut short
/// by the window, read ever further past it).
const GUESS_INPUT: usize = 64 * 1024;

/// Whether `bytes` start a gzip member whose first inflated bytes are a WARC record's start.
fn starts_warc_record(bytes: &[u8]) -> bool {
    let mut start = [0u8; 5];
    let mut gz = flate2::bufread::GzDecoder::new(bytes);
    gz.read_exact(&mut start).is_ok() && &start == b"WARC/"
}

/// Bytes of an inflated member the record's fields are first read from: its WARC and HTTP
/// headers nearly always fit (the rest of the block is not copied through the reader).
const FIRST_PART: usize = 8 * 1024;

/// What the one record an inflated member holds gives: `Some(None)` when the member holds
/// nothing but line ends, `None` when the member is not plainly one
/// record read without fault (the streaming reader then reads it, to index it or to name the
/// fault as it does).
fn one_record(member: &[u8], opts: EntryOptions) -> Option<Option<Seen>> {
    // Inflated gzip data would be taken for a gzip file again.
    if member.starts_with(&[0x1f, 0x8b]) {
        return None;
    }
    match read_record(member, FIRST_PART.min(member.len()), opts) {
        Err(Cut) => read_record(member, member.len(), opts).ok()?,
        Ok(read) => read,
    }
}

/// [`one_record`] from the first `part` bytes of `member`: `Err` when the fields need more.
fn read_record(
    member: &[u8],
    part: usize,
    opts: EntryOptions,
) -> Result<Option<Option<Seen>>, Cut> {
    let cut = part < member.len();
    // A buffer the size of the bytes shown: the reader's default (256 KiB, zeroed when first
    // filled) cost more than the rest of the record's fields.
    let start = Start { bytes: &member[..part], cut };
    let Ok(mut reader) = WarcReader::with_capacity(start, String::new(), part.clamp(64, 64 << 10))
    else {
        return Ok(None);
    };
    let mut got = None;
    // Past the fields, the reader meets the cut (or the block's end): the block is not read.
    let read = reader.next_record(|head, block| {
        got = Some((head.clone(), seen_of(&head.header, block)));
        Ok(())
    });
    let Some((head, entry)) = got else {
        return match read {
            Err(e) if e.io().is_some_and(is_cut) => Err(Cut),
            Err(_) => Ok(None),
            Ok(_) => Ok(Some(None)),
        };
    };
    let mut seen = match entry {
        Err(RecordIndexError::Read(e)) if is_cut(&e) => return Err(Cut),
        Err(_) => return Ok(None),
        Ok(seen) => seen,
    };
    // Alone in its member: the block is whole, and only line ends follow it.
    let block_end = head.header.content_length().and_then(|n| n.checked_add(head.header_len));
    let rest = block_end.and_then(|end| member.get(usize::try_from(end).ok()?..));
    if !rest.is_some_and(|r| r.iter().all(|&b| b == b'\r' || b == b'\n')) {
        return Ok(None);
    }
    if let Some(e) = &mut seen.entry {
        add_record_fields(e, &head.header, opts);
    }
    Ok(Some(Some(seen)))
}
