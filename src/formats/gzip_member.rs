//! One gzip member compressed in parallel chunks, as pigz does.
//!
//! A record too large for memory is one gzip member (the WARC profile wants one member per
//! record), which zlib compresses on one core: a crawl whose bytes are mostly one large record
//! was held back by it. Here the record's block is read once and cut into chunks of [`CHUNK`]
//! bytes, each deflated on its own by the current rayon pool, primed with the 32 KiB of input
//! before it as its dictionary (so the ratio stays that of one stream), and ended with a sync
//! flush (an empty stored block that ends on a byte boundary). The same reading hashes the
//! block (the caller's `observe`) while the chunks compress, and the compressed chunks wait in
//! an anonymous temporary file; once the digests are known, the record's header is deflated
//! as a chunk of its own, and the member is written: gzip header, the header's chunk, the
//! block's chunks, a last chunk with the record's closing bytes that ends the stream, and the
//! CRC-32 and length trailer. Every gzip reader reads it as one member.
//!
//! Chunk boundaries do not depend on the number of threads, so the bytes written are the same
//! at any `-j`. Memory is bounded: at most [`MAX_WINDOW`] chunks (and their compressed forms)
//! are held at once, whatever the size of the block.
//!
//! flate2's raw `Compress` is used rather than libdeflate (which the in-memory records use):
//! libdeflate can only end a stream, not flush one part of it, so its chunks cannot be joined.
//!
//! Large records are mostly media (images, video, PDF streams) that are compressed already:
//! deflate spends most of its time on such bytes and saves nothing. Each chunk is judged in
//! pieces of [`PIECE`] bytes; a piece whose bytes are spread as evenly as noise's and which a
//! fast deflate shrinks by less than 1 % is stored as it is, and the runs of other pieces are
//! deflated as above, each primed with the 32 KiB before it. The judgement depends on the bytes
//! only (integer arithmetic), so the member is the same at any number of threads and on any
//! machine.

use std::fs::File;
use std::io::{self, Read, Seek, Write};

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// Bytes of input per chunk: large enough that a chunk's priming and flush cost nothing
/// measurable (the ratio stays within 0.5 % of one stream), small enough that the window
/// stays a few MiB.
pub(crate) const CHUNK: usize = 512 << 10;

/// Chunks read and compressed at once, at most (four per thread of the pool, up to this:
/// the more chunks a window holds, the less the threads wait for its slowest one).
pub(crate) const MAX_WINDOW: usize = 16;

/// deflate's window: the input a chunk's dictionary holds.
const DICTIONARY: usize = 32 << 10;

/// Bytes of a chunk judged at a time: stored or deflated.
const PIECE: usize = 32 << 10;

/// What a member holds and how long it came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemberWritten {
    /// Bytes of input (before compression): head, body and tail.
    pub input_len: u64,
    /// Bytes written (the whole member: header, deflate stream, trailer).
    pub member_len: u64,
}

/// A body deflated into sync-flushed chunks, waiting to be written inside a member.
pub(crate) struct DeflatedBody {
    spool: File,
    compressed_len: u64,
    crc: Crc,
    /// The body's last 32 KiB, the dictionary of the member's tail.
    last_window: Vec<u8>,
    body_len: u64,
    level: u32,
}

/// Reads `body` once, to its end, and deflates it at webaip's `level` (0-9, see
/// [`zlib_rs_level`]) in parallel chunks on the current rayon pool; every chunk read is shown to `observe`, in order, while the chunks
/// compress.
pub(crate) fn deflate_body(
    mut body: impl Read,
    level: u32,
    mut observe: impl FnMut(&[u8]) + Send,
) -> io::Result<DeflatedBody> {
    let level = level.min(9);
    let mut spool = tempfile::tempfile()?;
    let mut crc = Crc::new();
    let (mut compressed_len, mut body_len) = (0u64, 0u64);
    let window = (4 * rayon::current_num_threads()).clamp(2, MAX_WINDOW);
    // The input of the last chunk compressed: its tail primes the next chunk.
    let mut previous: Vec<u8> = Vec::new();
    loop {
        let mut chunks = Vec::with_capacity(window);
        while chunks.len() < window {
            let chunk = read_chunk(&mut body)?;
            if chunk.is_empty() {
                break;
            }
            chunks.push(chunk);
        }
        if chunks.is_empty() {
            break;
        }
        let (_, compressed) = rayon::join(
            || {
                for c in &chunks {
                    observe(c);
                    crc.update(c);
                    body_len += c.len() as u64;
                }
            },
            || compress_window(&previous, &chunks, level),
        );
        for c in compressed {
            let c = c?;
            spool.write_all(&c)?;
            compressed_len += c.len() as u64;
        }
        previous = chunks.pop().unwrap_or_default();
    }
    let last_window = previous[previous.len().saturating_sub(DICTIONARY)..].to_vec();
    Ok(DeflatedBody { spool, compressed_len, crc, last_window, body_len, level })
}

/// Deflates a window of chunks in parallel, each primed with the input before it.
fn compress_window(previous: &[u8], chunks: &[Vec<u8>], level: u32) -> Vec<io::Result<Vec<u8>>> {
    use rayon::prelude::*;
    (0..chunks.len())
        .into_par_iter()
        .map(|i| {
            let before = if i == 0 { previous } else { &chunks[i - 1][..] };
            let dictionary = &before[before.len().saturating_sub(DICTIONARY)..];
            deflate_chunk(dictionary, &chunks[i], false, level)
        })
        .collect()
}

impl DeflatedBody {
    /// Writes one gzip member holding `head`, the body and `tail`, in that order, to `out`.
    pub(crate) fn write_member(
        mut self,
        head: &[u8],
        tail: &[u8],
        out: &mut impl Write,
    ) -> io::Result<MemberWritten> {
        let header = gzip_header(self.level);
        let head_chunk = deflate_chunk(&[], head, false, self.level)?;
        let tail_chunk = deflate_chunk(&self.last_window, tail, true, self.level)?;
        out.write_all(&header)?;
        out.write_all(&head_chunk)?;
        self.spool.rewind()?;
        let copied = io::copy(&mut (&mut self.spool).take(self.compressed_len), out)?;
        if copied != self.compressed_len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the temporary file of compressed chunks came back short",
            ));
        }
        out.write_all(&tail_chunk)?;
        let mut crc = Crc::new();
        crc.update(head);
        crc.combine(&self.crc);
        crc.update(tail);
        let mut trailer = [0u8; 8];
        trailer[..4].copy_from_slice(&crc.sum().to_le_bytes());
        trailer[4..].copy_from_slice(&crc.amount().to_le_bytes());
        out.write_all(&trailer)?;
        let member_len = (header.len() + head_chunk.len() + tail_chunk.len() + trailer.len())
            as u64
            + self.compressed_len;
        let input_len = head.len() as u64 + self.body_len + tail.len() as u64;
        Ok(MemberWritten { input_len, member_len })
    }
}

/// The ten bytes every member starts with, as flate2's and libdeflate's encoders write them:
/// no name, no time (0: unknown), the level's hint, operating system "unknown".
fn gzip_header(level: u32) -> [u8; 10] {
    let hint = match level {
        9.. => 2,
        0 | 1 => 4,
        _ => 0,
    };
    [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, hint, 0xff]
}

/// Reads up to [`CHUNK`] bytes (fewer only at the end of the input).
fn read_chunk(input: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut chunk = Vec::with_capacity(CHUNK);
    input.take(CHUNK as u64).read_to_end(&mut chunk)?;
    Ok(chunk)
}

/// Deflates one chunk (raw deflate, no zlib header) primed with `dictionary`: ended with a
/// sync flush, or, when `last`, with the stream's end. Pieces of a body's chunk that cannot
/// be compressed (see [`incompressible`]) are stored instead.
fn deflate_chunk(dictionary: &[u8], data: &[u8], last: bool, level: u32) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 64 + 64);
    if last || level == 0 {
        deflate_run(dictionary, data, last, level, &mut out)?;
        return Ok(out);
    }
    for run in runs(data) {
        let bytes = &data[run.start..run.end];
        if run.stored {
            store(bytes, &mut out);
        } else {
            deflate_run(
                &window_before(dictionary, data, run.start),
                bytes,
                false,
                level,
                &mut out,
            )?;
        }
    }
    Ok(out)
}

/// A run of pieces of a chunk, all stored or all deflated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: usize,
    end: usize,
    stored: bool,
}

/// `data` cut into pieces of [`PIECE`] bytes, neighbours judged alike joined.
fn runs(data: &[u8]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (i, piece) in data.chunks(PIECE).enumerate() {
        let (start, stored) = (i * PIECE, incompressible(piece));
        match runs.last_mut() {
            Some(run) if run.stored == stored => run.end = start + piece.len(),
            _ => runs.push(Run { start, end: start + piece.len(), stored }),
        }
    }
    runs
}

/// Whether `piece` is better stored than deflated: its bytes spread as evenly as compressed
/// media's ([`evenly_spread`]) and a fast deflate of it (libdeflate, level 1) saving under 1 %.
/// Even bytes alone do not say it: a sawtooth or a repeated random block is as even as noise
/// and deflates to almost nothing. Both tests are integer arithmetic, so the judgement, and the
/// member, are the same on every machine. Short pieces (the end of a body) are always deflated.
fn incompressible(piece: &[u8]) -> bool {
    piece.len() >= PIECE / 8 && evenly_spread(piece) && !deflates_by_a_hundredth(piece)
}

/// Whether the byte values of `piece` are about as evenly used as random bytes': the sum of
/// the squared counts (n²/256 + n expected of noise) at most n²/256 + 4n.
fn evenly_spread(piece: &[u8]) -> bool {
    // Four tables, so that runs of one byte value do not wait on one counter.
    let mut counts = [[0u32; 256]; 4];
    let mut quads = piece.chunks_exact(4);
    for q in &mut quads {
        for (table, &b) in counts.iter_mut().zip(q) {
            table[b as usize] += 1;
        }
    }
    for &b in quads.remainder() {
        counts[0][b as usize] += 1;
    }
    let squares: u64 =
        (0..256).map(|v| u64::from(counts.iter().map(|t| t[v]).sum::<u32>())).map(|c| c * c).sum();
    let n = piece.len() as u64;
    256 * squares <= n * n + 1024 * n
}

/// Whether libdeflate's fastest level takes at least 1 % off `piece`.
fn deflates_by_a_hundredth(piece: &[u8]) -> bool {
    thread_local! {
        static FAST: std::cell::RefCell<libdeflater::Compressor> = std::cell::RefCell::new(
            libdeflater::Compressor::new(libdeflater::CompressionLvl::new(1).expect("level 1 exists")),
        );
    }
    let mut out = vec![0u8; piece.len() - piece.len() / 100];
    // The output buffer is 99 % of the input: the compression fits only if it saves 1 %.
    FAST.with(|c| c.borrow_mut().deflate_compress(piece, &mut out).is_ok())
}

/// The last [`DICTIONARY`] bytes of input before `data[at..]`: from `data`, completed by the
/// chunk's own `dictionary` when `at` is near its start.
fn window_before<'a>(
    dictionary: &'a [u8],
    data: &'a [u8],
    at: usize,
) -> std::borrow::Cow<'a, [u8]> {
    if at >= DICTIONARY {
        return data[at - DICTIONARY..at].into();
    }
    if at == 0 {
        return dictionary.into();
    }
    let from_dictionary = &dictionary[dictionary.len().saturating_sub(DICTIONARY - at)..];
    [from_dictionary, &data[..at]].concat().into()
}

/// Appends `bytes` to `out` as non-final stored blocks. The stream before ends on a byte
/// boundary (a sync flush, or another stored block), as a stored block must start.
fn store(bytes: &[u8], out: &mut Vec<u8>) {
    for block in bytes.chunks(u16::MAX as usize) {
        let len = block.len() as u16;
        out.push(0); // BFINAL 0, BTYPE 00 (stored), padded to the byte
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
}

/// zlib-rs's level for chunks at webaip's `level` (libdeflate's, for the records held in
/// memory): 5 for 6, else the same. zlib-rs's 6 follows hash chains four times as long as
/// its 5 (128 against 32) and takes 1.1 to 3.7 times as long on crawled text for 0.2 to 14 %
/// less output; its 5 compresses within 0 to 8 % of libdeflate's 6, as fast (measured in
/// docs/benchmarks.md, "Large records").
pub(crate) fn zlib_rs_level(level: u32) -> u32 {
    match level {
        6 => 5,
        other => other.min(9),
    }
}

/// Deflates `data` primed with `dictionary` onto the end of `out`: ended with a sync flush, or,
/// when `last`, with the stream's end.
fn deflate_run(
    dictionary: &[u8],
    data: &[u8],
    last: bool,
    level: u32,
    out: &mut Vec<u8>,
) -> io::Result<()> {
    let mut z = Compress::new(Compression::new(zlib_rs_level(level)), false);
    if !dictionary.is_empty() {
        z.set_dictionary(dictionary).map_err(io::Error::other)?;
    }
    let flush = if last { FlushCompress::Finish } else { FlushCompress::Sync };
    out.reserve(data.len() + data.len() / 64 + 64);
    loop {
        let consumed = z.total_in() as usize;
        let status = z.compress_vec(&data[consumed..], out, flush).map_err(io::Error::other)?;
        let all_in = z.total_in() as usize == data.len();
        // A flush is complete when it left room in the output; the end, when zlib says so.
        let done = match (last, status) {
            (true, Status::StreamEnd) => true,
            (true, _) => false,
            (false, _) => all_in && out.len() < out.capacity(),
        };
        if done {
            return Ok(());
        }
        out.reserve(out.capacity().max(64 << 10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;

    /// Half text, half noise: chunks that compress and chunks that do not.
    fn sample(len: usize) -> Vec<u8> {
        let mut state = 0x2545_f491_u32;
        (0..len)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                match (i / 100_000) % 2 {
                    0 => b"the quick brown fox jumps over the lazy dog "[i % 44],
                    _ => state as u8,
                }
            })
            .collect()
    }

    /// The member of `data` cut as a record is: its first 3 bytes the head, the rest the body,
    /// and [`TAIL`] after them.
    fn member_in(pool_threads: usize, data: &[u8], level: u32) -> Vec<u8> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(pool_threads).build().unwrap();
        let (head, rest) = data.split_at(3.min(data.len()));
        let mut seen = Vec::new();
        let body = pool.install(|| deflate_body(rest, level, |c| seen.extend_from_slice(c)));
        let body = body.unwrap();
        assert_eq!(seen, rest, "observe sees the body, in order");
        assert_eq!(body.body_len, rest.len() as u64);
        let mut out = Vec::new();
        let written = body.write_member(head, TAIL, &mut out).unwrap();
        assert_eq!(written.input_len, (data.len() + TAIL.len()) as u64);
        assert_eq!(written.member_len, out.len() as u64);
        out
    }

    const TAIL: &[u8] = b"\r\n\r\n";

    fn with_tail(data: &[u8]) -> Vec<u8> {
        [data, TAIL].concat()
    }

    #[test]
    fn one_member_that_gzip_reads_back_whatever_the_length() {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5, 9 * CHUNK + 17] {
            let data = sample(len);
            let member = member_in(3, &data, 6);
            // GzDecoder reads one member and stops: all the input must be in that one.
            let mut decoder = GzDecoder::new(&member[..]);
            let mut back = Vec::new();
            decoder.read_to_end(&mut back).unwrap();
            assert_eq!(back, with_tail(&data), "length {len}");
            assert!(decoder.into_inner().is_empty(), "length {len}: bytes after the member");
            assert_eq!(&member[..2], b"\x1f\x8b");
        }
    }

    #[test]
    fn the_same_bytes_at_any_number_of_threads() {
        let data = sample(5 * CHUNK + 1234);
        let one = member_in(1, &data, 6);
        assert_eq!(one, member_in(2, &data, 6));
        assert_eq!(one, member_in(8, &data, 6));
    }

    /// Words drawn at random from a small vocabulary: text that compresses about 3:1.
    fn words(len: usize) -> Vec<u8> {
        const VOCABULARY: [&str; 16] = [
            "archive ",
            "harvest ",
            "record ",
            "the ",
            "of ",
            "<a href=\"",
            "/page/",
            "\">",
            "</a>\n",
            "national ",
            "library ",
            "web ",
            "crawl ",
            "and ",
            "2004 ",
            "preservation ",
        ];
        let mut state = 0x9e37_79b9_u32;
        let mut out = Vec::with_capacity(len + 16);
        while out.len() < len {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            out.extend_from_slice(VOCABULARY[(state % 16) as usize].as_bytes());
            out.extend_from_slice((state % 1000).to_string().as_bytes());
        }
        out.truncate(len);
        out
    }

    #[test]
    fn the_ratio_is_that_of_one_stream() {
        // Primed with the input before it, a chunk compresses as it would in one stream: the
        // member is within 0.5 % of zlib's single stream at the chunks' level.
        let text = words(6 * CHUNK);
        for level in [1, 6, 9] {
            let chunked = member_in(2, &text, level).len() as f64;
            let chunks_level = Compression::new(zlib_rs_level(level));
            let mut single = flate2::write::GzEncoder::new(Vec::new(), chunks_level);
            single.write_all(&text).unwrap();
            let single = single.finish().unwrap().len() as f64;
            assert!(chunked <= single * 1.005, "level {level}: {chunked} against {single}");
            assert!(single < text.len() as f64 / 2.0, "level {level}: the text compresses");
        }
        // A large record compresses about as a record held in memory does (libdeflate).
        let chunked = member_in(2, &text, 6).len() as f64;
        let in_memory = crate::formats::warc::writer::gzip_member(&text, 6).unwrap().len() as f64;
        assert!(chunked <= in_memory * 1.03, "{chunked} against libdeflate's {in_memory}");
    }

    /// Bytes of a stored block holding `bytes` (non-final), as RFC 1951 §3.2.4 lays it out.
    fn stored_block(bytes: &[u8]) -> Vec<u8> {
        let len = bytes.len() as u16;
        [&[0u8][..], &len.to_le_bytes(), &(!len).to_le_bytes(), bytes].concat()
    }

    #[test]
    fn media_is_stored_and_text_is_deflated() {
        // Noise (as compressed media is) costs deflate most of its time and saves nothing:
        // it goes out in stored blocks, byte for byte.
        let noise: Vec<u8> = sample(2 * 100_000)[100_000..].to_vec();
        let chunk = &noise[..2 * PIECE + 5000];
        let stored = deflate_chunk(&[], chunk, false, 6).unwrap();
        let expected: Vec<u8> = chunk.chunks(u16::MAX as usize).flat_map(stored_block).collect();
        assert_eq!(stored, expected);
        // Text beside it is still deflated, primed with the noise before it.
        let mixed = [&noise[..2 * PIECE], &words(2 * PIECE)].concat();
        let out = deflate_chunk(&[], &mixed, false, 6).unwrap();
        let noise_stored: Vec<u8> =
            noise[..2 * PIECE].chunks(u16::MAX as usize).flat_map(stored_block).collect();
        assert!(out.starts_with(&noise_stored));
        assert!(out.len() < noise_stored.len() + PIECE, "{} bytes", out.len());
        let mut back = Vec::new();
        let mut stream = out.clone();
        stream.extend_from_slice(&[3, 0]); // an empty final block (fixed Huffman)
        flate2::read::DeflateDecoder::new(&stream[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, mixed);
    }

    /// Bytes as evenly spread as noise that repeat within deflate's window (an 8-bit sawtooth,
    /// a random block repeated) are deflated, not stored: a member of 1 MiB of either comes out
    /// at a small fraction of it.
    #[test]
    fn even_bytes_that_repeat_are_deflated() {
        let sawtooth: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let block = &sample(100_000 + 16384)[100_000..];
        let repeated: Vec<u8> = block.iter().copied().cycle().take(1 << 20).collect();
        for data in [sawtooth, repeated] {
            assert!(evenly_spread(&data[..PIECE]), "as even as noise");
            let member = member_in(2, &data, 6);
            assert!(member.len() < data.len() / 20, "{} bytes", member.len());
            let mut back = Vec::new();
            GzDecoder::new(&member[..]).read_to_end(&mut back).unwrap();
            assert_eq!(back, with_tail(&data));
        }
    }

    #[test]
    fn level_zero_stores() {
        let data = sample(2 * CHUNK + 3);
        let member = member_in(2, &data, 0);
        let mut back = Vec::new();
        GzDecoder::new(&member[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, with_tail(&data));
        assert!(member.len() > data.len());
    }
}
