//! The file of a gzip ARC given back: its members compressed again on every core, written in
//! order by a thread of its own.
//!
//! madler zlib at the original's settings is what reproduces an `.arc.gz` byte for byte, and it
//! compresses at some 30 MB/s on one core: three quarters of the rebuild's time. The members
//! are independent, so the reading thread gathers them into batches of about
//! [`BATCH_INPUT_PER_THREAD`] decompressed bytes per thread, and the writing thread compresses
//! each batch's members at once on a pool of its own (one thread per core, or the `--jobs` of
//! the caller's pool) while the next batch is read. A member longer than [`MEMBER_IN_BATCH`] is compressed as it is read, streaming, by
//! the reading thread (a batch would hold all of it). Batches wait one at a time: memory is a
//! few batches (see [`MEMBER_IN_BATCH`]), whatever the sizes or number of the records.
//!
//! The writing thread also keeps what only the file knows: where each thing starts in it (to
//! check against the original's offsets) and which members came out as long as the original's.

use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::formats::digest::Sha512;
use rayon::prelude::*;

use super::Difference;
use crate::formats::gzip_rebuild::{DeflateParams, MemberWriter, member_bytes};

/// Decompressed bytes gathered per compressing thread before a batch is handed to the writing
/// thread (at least 1 MiB a batch): enough members to keep every thread busy, a per-record
/// `.arc.gz` holding tens of records per MiB. Smaller batches were no faster and larger ones
/// only took more memory.
const BATCH_INPUT_PER_THREAD: usize = 512 << 10;
/// A member longer than this is compressed as it is read rather than in a batch. A batch can
/// thus hold up to this much more than its limit, and three are alive at once (one gathered,
/// one queued, one compressed with its output): some 100 MB at most with 3 threads.
const MEMBER_IN_BATCH: usize = 8 << 20;

/// Bytes counted and hashed on their way to an optional writer.
pub(super) struct Hashed {
    out: Option<Box<dyn Write + Send>>,
    sha: Sha512,
    pub(super) len: u64,
}

impl Hashed {
    pub(super) fn new(out: Option<Box<dyn Write + Send>>) -> Self {
        Hashed { out, sha: Sha512::new(), len: 0 }
    }

    /// The writer, the bytes written and their SHA-512 (hex).
    pub(super) fn done(self) -> (Option<Box<dyn Write + Send>>, u64, String) {
        (self.out, self.len, crate::formats::digest::hex(&self.sha.finalize()))
    }
}

impl Write for Hashed {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(o) = &mut self.out {
            o.write_all(buf)?;
        }
        self.sha.update(buf);
        self.len += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().map_or(Ok(()), |o| o.flush())
    }
}

/// What the writing thread is told, in file order.
enum Item {
    /// Something starts at original offset `at` (`None`: not known): the member before, if
    /// any, ends there. `check` names it when its offset in the file should be the original's.
    Mark { at: Option<u64>, check: Option<&'static str> },
    /// A member starts, at this original offset; its bytes follow.
    Open(u64),
    /// Bytes of the file: verbatim, or a member already compressed.
    Bytes(Vec<u8>),
    /// A whole member to compress.
    Compress { header: Vec<u8>, params: DeflateParams, input: Vec<u8> },
}

/// The file written, and what the writing thread found.
pub(super) struct FileWritten {
    pub(super) out: Option<Box<dyn Write + Send>>,
    pub(super) len: u64,
    pub(super) sha512: String,
    /// Members that came out as long as the original's.
    pub(super) members_reproduced: u64,
    /// The first thing that starts elsewhere than in the original.
    pub(super) misplaced: Option<Difference>,
}

/// The member being read.
enum Member {
    Closed,
    Gathering { header: Vec<u8>, params: DeflateParams, input: Vec<u8> },
    Streaming(MemberWriter<Vec<u8>>),
}

/// The reading side: gathers batches and hands them over.
pub(super) struct GzFileWriter {
    batch: Vec<Item>,
    batch_input: usize,
    batch_limit: usize,
    /// Members longer than this are streamed ([`MEMBER_IN_BATCH`]; smaller in tests).
    stream_over: usize,
    member: Member,
    tx: Option<SyncSender<Vec<Item>>>,
    thread: Option<JoinHandle<io::Result<FileWritten>>>,
}

impl GzFileWriter {
    /// Starts the writing thread, with `threads` threads to compress.
    pub(super) fn new(out: Option<Box<dyn Write + Send>>, threads: usize) -> io::Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("arc-deflate-{i}"))
            .build()
            .map_err(io::Error::other)?;
        // One batch waits while one is compressed and written and one is gathered.
        let (tx, rx) = sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("arc-file".into())
            .spawn(move || write_batches(&rx, Hashed::new(out), &pool))?;
        Ok(GzFileWriter {
            batch: Vec::new(),
            batch_input: 0,
            batch_limit: (BATCH_INPUT_PER_THREAD * threads).max(1 << 20),
            stream_over: MEMBER_IN_BATCH,
            member: Member::Closed,
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Something starts at original offset `at`: the member being read, if any, ends.
    pub(super) fn mark(&mut self, at: Option<u64>, check: Option<&'static str>) -> io::Result<()> {
        self.close_member()?;
        self.push(Item::Mark { at, check }, 0)
    }

    /// Bytes of the file as they are (outside any member).
    pub(super) fn verbatim(&mut self, bytes: Vec<u8>) -> io::Result<()> {
        self.close_member()?;
        let n = bytes.len();
        self.push(Item::Bytes(bytes), n)
    }

    /// A member starts at original offset `at`, with this header and these settings.
    pub(super) fn open(
        &mut self,
        at: u64,
        header: Vec<u8>,
        params: DeflateParams,
    ) -> io::Result<()> {
        self.close_member()?;
        self.push(Item::Open(at), 0)?;
        self.member = Member::Gathering { header, params, input: Vec::new() };
        Ok(())
    }

    /// The next decompressed bytes of the member opened.
    pub(super) fn member_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.member {
            Member::Closed => Err(io::Error::other("member bytes outside a member")),
            Member::Gathering { input, .. } if input.len() + bytes.len() <= self.stream_over => {
                input.extend_from_slice(bytes);
                Ok(())
            }
            Member::Gathering { header, params, input } => {
                let mut w = MemberWriter::new(Vec::new(), header, *params)?;
                w.write_all(input)?;
                w.write_all(bytes)?;
                self.member = Member::Streaming(w);
                self.drain_streamed()
            }
            Member::Streaming(w) => {
                w.write_all(bytes)?;
                self.drain_streamed()
            }
        }
    }

    /// Hands over what the streaming member has written so far.
    fn drain_streamed(&mut self) -> io::Result<()> {
        let Member::Streaming(w) = &mut self.member else { return Ok(()) };
        let out = std::mem::take(w.get_mut());
        if out.is_empty() {
            return Ok(());
        }
        let n = out.len();
        self.push(Item::Bytes(out), n)
    }

    fn close_member(&mut self) -> io::Result<()> {
        match std::mem::replace(&mut self.member, Member::Closed) {
            Member::Closed => Ok(()),
            Member::Gathering { header, params, input } => {
                let n = input.len();
                self.push(Item::Compress { header, params, input }, n)
            }
            Member::Streaming(w) => {
                let (rest, _) = w.finish()?;
                let n = rest.len();
                self.push(Item::Bytes(rest), n)
            }
        }
    }

    fn push(&mut self, item: Item, input: usize) -> io::Result<()> {
        self.batch.push(item);
        self.batch_input += input;
        if self.batch_input >= self.batch_limit { self.hand_over() } else { Ok(()) }
    }

    fn hand_over(&mut self) -> io::Result<()> {
        let batch = std::mem::take(&mut self.batch);
        self.batch_input = 0;
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(batch).is_ok());
        if sent {
            return Ok(());
        }
        // The writing thread has stopped: its error says why.
        match self.join() {
            Err(e) => Err(e),
            Ok(_) => Err(io::Error::other("the file's writing thread stopped")),
        }
    }

    fn join(&mut self) -> io::Result<FileWritten> {
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the file's writing thread panicked")),
            None => Err(io::Error::other("the file's writing thread already ended")),
        }
    }

    /// Ends the file: the last member closed, everything written.
    pub(super) fn finish(mut self) -> io::Result<FileWritten> {
        self.close_member()?;
        if !self.batch.is_empty() {
            self.hand_over()?;
        }
        self.join()
    }
}

impl Drop for GzFileWriter {
    fn drop(&mut self) {
        // A rebuild given up: the thread sees the channel close and ends.
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Where the things of the file start, as the writing thread sees them.
#[derive(Default)]
struct Placement {
    /// The member being written: its original offset and ours.
    open: Option<(u64, u64)>,
    members_reproduced: u64,
    misplaced: Option<Difference>,
}

impl Placement {
    fn mark(&mut self, at: Option<u64>, check: Option<&'static str>, ours: u64) {
        if let (Some((original, start)), Some(at)) = (self.open.take(), at)
            && at.checked_sub(original) == Some(ours - start)
        {
            self.members_reproduced += 1;
        }
        if let (Some(what), Some(at)) = (check, at)
            && ours != at
            && self.misplaced.is_none()
        {
            let what = format!("{what} starts at {ours} in the file rebuilt");
            self.misplaced = Some(Difference { offset: at, in_member: None, what });
        }
    }
}

/// The writing thread: each batch's members compressed at once on `pool`, then everything
/// written in order.
fn write_batches(
    rx: &Receiver<Vec<Item>>,
    mut file: Hashed,
    pool: &rayon::ThreadPool,
) -> io::Result<FileWritten> {
    let mut place = Placement::default();
    for batch in rx {
        let batch: Vec<Item> = pool.install(|| {
            batch
                .into_par_iter()
                .map(|item| match item {
                    Item::Compress { header, params, input } => {
                        member_bytes(&header, params, &input).map(Item::Bytes)
                    }
                    other => Ok(other),
                })
                .collect::<io::Result<_>>()
        })?;
        for item in batch {
            match item {
                Item::Mark { at, check } => place.mark(at, check, file.len),
                Item::Open(at) => place.open = Some((at, file.len)),
                Item::Bytes(b) => file.write_all(&b)?,
                Item::Compress { .. } => return Err(io::Error::other("a member not compressed")),
            }
        }
    }
    let (out, len, sha512) = file.done();
    Ok(FileWritten {
        out,
        len,
        sha512,
        members_reproduced: place.members_reproduced,
        misplaced: place.misplaced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::gzip_rebuild::MemberWriter;
    use std::sync::{Arc, Mutex};

    const HEADER: &[u8] = &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    /// Members longer than this are streamed in the tests (the batches' limit is kept).
    const STREAM_OVER: usize = 300_000;

    /// A writer whose bytes can be read after it is given away; fails past `limit` bytes.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>, Option<usize>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let mut v = self.0.lock().unwrap();
            if self.1.is_some_and(|limit| v.len() + buf.len() > limit) {
                return Err(io::Error::other("disk full"));
            }
            v.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Bytes that compress somewhat, different at every length.
    fn text(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 7 == 0 {
                    b"<a href=\"/x\">"[(x % 13) as usize]
                } else {
                    b'a' + (x % 9) as u8
                }
            })
            .collect()
    }

    /// Members of many sizes (in a batch, over a batch, streamed), verbatim bytes between them,
    /// given in pieces of `write` bytes: the file is the members written one after the other,
    /// at any number of threads.
    #[test]
    fn the_file_is_its_members_in_order_at_any_number_of_threads() {
        let params: DeflateParams = "zlib:6".parse().unwrap();
        let sizes = [0, 10, 70_000, STREAM_OVER + 1, 5, 3 * STREAM_OVER, 200_000, 1];
        let members: Vec<Vec<u8>> =
            (0..24).map(|i| text(sizes[i % sizes.len()] + i, i as u64)).collect();
        let mut expected = Vec::new();
        let mut starts = Vec::new();
        for (i, m) in members.iter().enumerate() {
            if i % 5 == 3 {
                expected.extend_from_slice(b"raw bytes");
            }
            starts.push(expected.len() as u64);
            let mut w = MemberWriter::new(Vec::new(), HEADER, params).unwrap();
            w.write_all(m).unwrap();
            expected.extend(w.finish().unwrap().0);
        }
        for threads in [1, 3] {
            for write in [1000, 1 << 20] {
                let out = Shared::default();
                let mut f = GzFileWriter::new(Some(Box::new(out.clone())), threads).unwrap();
                f.stream_over = STREAM_OVER;
                for (i, m) in members.iter().enumerate() {
                    if i % 5 == 3 {
                        f.mark(Some(starts[i] - 9), Some("raw")).unwrap();
                        f.verbatim(b"raw bytes".to_vec()).unwrap();
                    }
                    f.mark(Some(starts[i]), Some("a member")).unwrap();
                    f.open(starts[i], HEADER.to_vec(), params).unwrap();
                    for piece in m.chunks(write) {
                        f.member_bytes(piece).unwrap();
                    }
                }
                f.mark(Some(expected.len() as u64), None).unwrap();
                let w = f.finish().unwrap();
                let got = out.0.lock().unwrap().clone();
                assert!(got == expected, "{threads} threads, writes of {write}");
                assert_eq!(w.len, expected.len() as u64);
                assert_eq!(w.members_reproduced, members.len() as u64);
                assert!(w.misplaced.is_none());
                assert_eq!(w.sha512, crate::formats::digest::hex(&Sha512::digest(&expected)));
            }
        }
    }

    /// A member that comes out shorter than the original's is not counted reproduced, and the
    /// first thing after it is named with both offsets; the later ones are not.
    #[test]
    fn a_member_of_another_length_is_named_once() {
        let params: DeflateParams = "zlib:6".parse().unwrap();
        let mut f = GzFileWriter::new(None, 2).unwrap();
        f.open(0, HEADER.to_vec(), params).unwrap();
        f.member_bytes(&text(5000, 1)).unwrap();
        f.mark(Some(100_000), Some("a member")).unwrap();
        f.open(100_000, HEADER.to_vec(), params).unwrap();
        f.member_bytes(b"x").unwrap();
        f.mark(Some(200_000), Some("a member")).unwrap();
        let w = f.finish().unwrap();
        assert_eq!(w.members_reproduced, 0);
        let d = w.misplaced.unwrap();
        assert_eq!(d.offset, 100_000);
        assert!(d.what.starts_with("a member starts at "), "{}", d.what);
    }

    /// A writer that fails (a full disk) stops the rebuild with its error, at whatever point.
    #[test]
    fn a_failing_writer_is_an_error_not_a_hang() {
        let params: DeflateParams = "zlib:6".parse().unwrap();
        for limit in [0, 5000, 2 << 20] {
            let out = Shared(Arc::default(), Some(limit));
            let mut f = GzFileWriter::new(Some(Box::new(out)), 2).unwrap();
            let mut failed = None;
            for i in 0..200u64 {
                let step = f
                    .mark(Some(i), None)
                    .and_then(|()| f.open(i, HEADER.to_vec(), params))
                    .and_then(|()| f.member_bytes(&text(60_000, i)));
                if let Err(e) = step {
                    failed = Some(e);
                    break;
                }
            }
            let e = match failed {
                Some(e) => e,
                None => f.finish().err().expect("the disk is full"),
            };
            assert!(e.to_string().contains("disk full"), "{limit}: {e}");
        }
    }
}
