//! Digests computed while bytes stream past.
//!
//! WARC headers want SHA-1 in base32 (`sha1:...`, the form Heritrix, warcio and jwarc write);
//! METS and PREMIS want SHA-512 in lower-case hex (the profile's checksum algorithm). One
//! `BlockHasher` computes every digest a record needs in a single pass, splitting the block
//! into the part before the payload (HTTP headers) and the payload itself.

use sha1::Sha1;
use sha2::{Digest, Sha256};

/// SHA-512, webaip's fixity digest, by ring's assembly: about 1.4x the pure-Rust `sha2` on a
/// CPU without SHA-512 instructions (`bash bench/run-floor.sh` prints both). Every SHA-512 of
/// webaip is computed through this type.
#[derive(Clone)]
pub struct Sha512(ring::digest::Context);

impl Sha512 {
    /// A hasher with nothing fed yet.
    pub fn new() -> Self {
        Sha512(ring::digest::Context::new(&ring::digest::SHA512))
    }

    /// Feeds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of every byte fed.
    pub fn finalize(self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out.copy_from_slice(self.0.finish().as_ref());
        out
    }

    /// The SHA-512 of `bytes`.
    pub fn digest(bytes: impl AsRef<[u8]>) -> [u8; 64] {
        let mut h = Sha512::new();
        h.update(bytes.as_ref());
        h.finalize()
    }
}

impl Default for Sha512 {
    fn default() -> Self {
        Sha512::new()
    }
}

impl std::fmt::Debug for Sha512 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sha512")
    }
}

/// Formats a SHA-1 digest the way WARC headers carry it: `sha1:` + RFC 4648 base32.
pub(crate) fn sha1_base32(digest: &[u8]) -> String {
    format!("sha1:{}", data_encoding::BASE32.encode(digest))
}

/// Lower-case hexadecimal, as METS `CHECKSUM` and PREMIS `messageDigest` carry it.
pub fn hex(digest: &[u8]) -> String {
    data_encoding::HEXLOWER.encode(digest)
}

/// Size and SHA-512 (lower-case hex) of a file, read once in 1 MiB chunks.
pub(crate) fn sha512_file(path: &std::path::Path) -> std::io::Result<(u64, String)> {
    sha512_read(std::fs::File::open(path)?)
}

/// Size and SHA-512 (lower-case hex) of an open file, read from its start with positioned
/// reads: a reader sharing the descriptor keeps its own place.
pub(crate) fn sha512_at(file: &std::fs::File) -> std::io::Result<(u64, String)> {
    struct At<'a>(&'a std::fs::File, u64);
    impl std::io::Read for At<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = std::os::unix::fs::FileExt::read_at(self.0, buf, self.1)?;
            self.1 += n as u64;
            Ok(n)
        }
    }
    sha512_read(At(file, 0))
}

/// An input file's size and modification time, from its open handle (fstat): taken when a
/// run starts reading it and again at the end, to tell whether it changed in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileState {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileState {
    pub(crate) fn of(file: &std::fs::File) -> std::io::Result<FileState> {
        let m = file.metadata()?;
        Ok(FileState { len: m.len(), modified: m.modified().ok() })
    }
}

/// An input that changed (cut short, appended to, rewritten) while a run read it: the size and
/// digest stated for it would not be those of the bytes read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "changed while being read ({start} bytes when opened, {end} bytes at the end, {read} bytes \
     read); nothing was made from it"
)]
pub struct InputChanged {
    /// Its size when the run opened it.
    pub start: u64,
    /// Its size when the run had read it.
    pub end: u64,
    /// The bytes the run read (and digested).
    pub read: u64,
}

/// Fails when the file is not as it was at `start` (size or modification time), or when the
/// `read` bytes stated for it are not all of it.
pub(crate) fn unchanged(start: FileState, end: FileState, read: u64) -> Result<(), InputChanged> {
    if start == end && read == start.len {
        return Ok(());
    }
    Err(InputChanged { start: start.len, end: end.len, read })
}

/// Size and SHA-512 (lower-case hex) of everything `f` yields, read in 1 MiB chunks.
pub(crate) fn sha512_read(f: impl std::io::Read) -> std::io::Result<(u64, String)> {
    sha512_of(f).map(|(len, d)| (len, hex(&d)))
}

/// Size and SHA-512 of everything `f` yields, read in 1 MiB chunks.
pub(crate) fn sha512_of(f: impl std::io::Read) -> std::io::Result<(u64, [u8; 64])> {
    let mut r = Sha512Reader::new(f);
    let len = std::io::copy(&mut r, &mut std::io::sink())?;
    Ok((len, r.finish()))
}

/// The length and SHA-1 of everything `f` gives.
pub(crate) fn sha1_of(mut f: impl std::io::Read) -> std::io::Result<(u64, [u8; 20])> {
    // sha1 0.11 hashes through `update` only (no `io::Write`).
    let mut sha = Sha1::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok((len, sha.finalize().into()));
        }
        sha.update(&buf[..n]);
        len += n as u64;
    }
}

/// A reader that hashes (SHA-512) what passes through it, for a digest of bytes read anyway.
pub(crate) struct Sha512Reader<R> {
    inner: R,
    sha: Sha512,
}

impl<R: std::io::Read> Sha512Reader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Sha512Reader { inner, sha: Sha512::new() }
    }

    /// The SHA-512 of the bytes read so far.
    pub(crate) fn finish(self) -> [u8; 64] {
        self.sha.finalize()
    }
}

/// A writer that hashes (SHA-512) and counts what passes through it.
pub(crate) struct Sha512Writer<W> {
    inner: W,
    sha: Sha512,
    len: u64,
}

impl<W: std::io::Write> Sha512Writer<W> {
    pub(crate) fn new(inner: W) -> Self {
        Sha512Writer { inner, sha: Sha512::new(), len: 0 }
    }

    /// The writer, and the size and SHA-512 of the bytes written through it.
    pub(crate) fn finish(self) -> (W, u64, [u8; 64]) {
        (self.inner, self.len, self.sha.finalize())
    }
}

impl<W: std::io::Write> std::io::Write for Sha512Writer<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<R: std::io::Read> std::io::Read for Sha512Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }
}

/// SHA-512 of a byte slice, as lower-case hex.
pub fn sha512_hex(bytes: &[u8]) -> String {
    hex(&Sha512::digest(bytes))
}

/// Digests of one WARC block and the payload inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDigests {
    /// Bytes in the whole block.
    pub block_len: u64,
    /// SHA-1 of the whole block (for `WARC-Block-Digest`).
    pub block_sha1: [u8; 20],
    /// Where the payload starts inside the block (0 unless there are HTTP headers).
    pub payload_offset: u64,
    /// Bytes in the payload.
    pub payload_len: u64,
    /// SHA-1 of the payload (for `WARC-Payload-Digest`).
    pub payload_sha1: [u8; 20],
    /// SHA-512 of the payload (for METS, PREMIS and the conservation check).
    pub payload_sha512: [u8; 64],
}

/// Hashes a block in one pass, feeding each byte to the digests it belongs to.
///
/// The payload starts `payload_offset` bytes into the block; bytes before it (HTTP headers) go
/// only to the block digest.
pub(crate) struct BlockHasher {
    seen: u64,
    with_payload_sha1: bool,
    payload_offset: u64,
    block_sha1: Sha1,
    payload_sha1: Sha1,
    payload_sha512: Sha512,
}

/// Pieces at least this long are hashed on two threads (below it the hand-off costs more than
/// it saves).
const PARALLEL_HASH_MIN: usize = 128 << 10;

impl BlockHasher {
    /// A hasher for a block whose payload starts `payload_offset` bytes in.
    pub(crate) fn new(payload_offset: u64) -> Self {
        BlockHasher {
            seen: 0,
            with_payload_sha1: true,
            payload_offset,
            block_sha1: Sha1::new(),
            payload_sha1: Sha1::new(),
            payload_sha512: Sha512::new(),
        }
    }

    /// A hasher that skips the payload's SHA-1 (left as zeros in the result): for reading back
    /// records whose block SHA-1 already proves the bytes.
    pub(crate) fn without_payload_sha1(payload_offset: u64) -> Self {
        BlockHasher { with_payload_sha1: false, ..BlockHasher::new(payload_offset) }
    }

    /// Feeds the next bytes of the block.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        let start = self.seen;
        self.seen += bytes.len() as u64;
        let payload = match self.seen > self.payload_offset {
            true => &bytes[self.payload_offset.saturating_sub(start) as usize..],
            false => &[][..],
        };
        let (block_sha1, payload_sha1, payload_sha512) =
            (&mut self.block_sha1, &mut self.payload_sha1, &mut self.payload_sha512);
        let with_payload_sha1 = self.with_payload_sha1;
        let mut sha1s = move || {
            block_sha1.update(bytes);
            if with_payload_sha1 {
                payload_sha1.update(payload);
            }
        };
        // SHA-512 takes as long as the two SHA-1s: on a large piece (a streamed record's
        // chunk, a read-back buffer) they run side by side, so hashing one large record is
        // not held to one core.
        match bytes.len() >= PARALLEL_HASH_MIN {
            true => {
                rayon::join(sha1s, || payload_sha512.update(payload));
            }
            false => {
                sha1s();
                payload_sha512.update(payload);
            }
        }
    }

    /// Ends the block and returns its digests.
    pub(crate) fn finish(self) -> BlockDigests {
        let payload_offset = self.payload_offset.min(self.seen);
        BlockDigests {
            block_len: self.seen,
            block_sha1: self.block_sha1.finalize().into(),
            payload_offset,
            payload_len: self.seen - payload_offset,
            payload_sha1: if self.with_payload_sha1 {
                self.payload_sha1.finalize().into()
            } else {
                [0; 20]
            },
            payload_sha512: self.payload_sha512.finalize(),
        }
    }

    /// Digests of a block held in memory.
    pub(crate) fn digest(block: &[u8], payload_offset: u64) -> BlockDigests {
        let mut h = BlockHasher::new(payload_offset);
        h.update(block);
        h.finish()
    }
}

/// A labelled digest as WARC headers carry it (`WARC-Block-Digest: sha1:...`), and a hasher to
/// check it against bytes streamed past.
///
/// Writers disagree on the encoding: Heritrix, warcio and jwarc write base32 for SHA-1, some
/// tools write hex (and base32 with or without padding, in either case). The expected value is
/// decoded whichever way yields the algorithm's digest length.
pub(crate) struct LabelledDigest {
    label: String,
    expected: Vec<u8>,
    hasher: AnyHasher,
}

/// A running digest by one algorithm.
enum AnyHasher {
    Adler32(adler2::Adler32),
    Crc32(crc32fast::Hasher),
    Md5(md5::Md5),
    Sha1(Sha1),
    Sha256(Sha256),
    Sha384(sha2::Sha384),
    Sha512(Sha512),
    Tiger(tiger::Tiger),
    Whirlpool(whirlpool::Whirlpool),
}

impl AnyHasher {
    fn new(a: FixityAlgorithm) -> AnyHasher {
        match a {
            FixityAlgorithm::Adler32 => AnyHasher::Adler32(adler2::Adler32::new()),
            FixityAlgorithm::Crc32 => AnyHasher::Crc32(crc32fast::Hasher::new()),
            FixityAlgorithm::Md5 => AnyHasher::Md5(md5::Md5::new()),
            FixityAlgorithm::Sha1 => AnyHasher::Sha1(Sha1::new()),
            FixityAlgorithm::Sha256 => AnyHasher::Sha256(Sha256::new()),
            FixityAlgorithm::Sha384 => AnyHasher::Sha384(sha2::Sha384::new()),
            FixityAlgorithm::Sha512 => AnyHasher::Sha512(Sha512::new()),
            FixityAlgorithm::Tiger => AnyHasher::Tiger(tiger::Tiger::new()),
            FixityAlgorithm::Whirlpool => AnyHasher::Whirlpool(whirlpool::Whirlpool::new()),
        }
    }

    fn update(&mut self, b: &[u8]) {
        match self {
            AnyHasher::Adler32(h) => h.write_slice(b),
            AnyHasher::Crc32(h) => h.update(b),
            AnyHasher::Md5(h) => h.update(b),
            AnyHasher::Sha1(h) => h.update(b),
            AnyHasher::Sha256(h) => h.update(b),
            AnyHasher::Sha384(h) => h.update(b),
            AnyHasher::Sha512(h) => h.update(b),
            AnyHasher::Tiger(h) => h.update(b),
            AnyHasher::Whirlpool(h) => h.update(b),
        }
    }

    fn finish(self) -> Vec<u8> {
        match self {
            // The 32-bit sums big-endian, as their hex is written.
            AnyHasher::Adler32(h) => h.checksum().to_be_bytes().to_vec(),
            AnyHasher::Crc32(h) => h.finalize().to_be_bytes().to_vec(),
            AnyHasher::Md5(h) => h.finalize().to_vec(),
            AnyHasher::Sha1(h) => h.finalize().to_vec(),
            AnyHasher::Sha256(h) => h.finalize().to_vec(),
            AnyHasher::Sha384(h) => h.finalize().to_vec(),
            AnyHasher::Sha512(h) => h.finalize().to_vec(),
            AnyHasher::Tiger(h) => h.finalize().to_vec(),
            AnyHasher::Whirlpool(h) => h.finalize().to_vec(),
        }
    }
}

/// Why a labelled digest cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DigestLabelError {
    /// An algorithm this build does not compute (`md5`, ...).
    Unsupported(String),
    /// The value is not hex or base32 of the algorithm's length.
    Unreadable(String),
}

impl LabelledDigest {
    /// Parses `algorithm:value`.
    pub(crate) fn parse(field: &str) -> Result<Self, DigestLabelError> {
        let (alg, value) = field
            .trim()
            .split_once(':')
            .ok_or_else(|| DigestLabelError::Unreadable(field.to_string()))?;
        let label = alg.trim().to_ascii_lowercase();
        if label.is_empty() {
            return Err(DigestLabelError::Unreadable(field.to_string()));
        }
        let (hasher, len) = match label.replace('-', "").as_str() {
            "sha1" => (AnyHasher::new(FixityAlgorithm::Sha1), 20),
            "sha256" => (AnyHasher::new(FixityAlgorithm::Sha256), 32),
            "sha512" => (AnyHasher::new(FixityAlgorithm::Sha512), 64),
            _ => return Err(DigestLabelError::Unsupported(label)),
        };
        let value = value.trim();
        let hex = data_encoding::HEXLOWER_PERMISSIVE.decode(value.as_bytes()).ok();
        let base32 = || {
            let v = value.to_ascii_uppercase();
            data_encoding::BASE32_NOPAD.decode(v.trim_end_matches('=').as_bytes()).ok()
        };
        let expected = hex
            .filter(|d| d.len() == len)
            .or_else(|| base32().filter(|d| d.len() == len))
            .ok_or_else(|| DigestLabelError::Unreadable(field.to_string()))?;
        Ok(LabelledDigest { label, expected, hasher })
    }

    /// Feeds bytes.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
    }

    /// `Ok(())` when the bytes fed match; else the digest found.
    pub(crate) fn verify(self) -> Result<(), DigestMismatch> {
        let found = self.hasher.finish();
        if found == self.expected {
            return Ok(());
        }
        Err(DigestMismatch {
            found: if found.len() == 20 {
                format!("{}:{}", self.label, data_encoding::BASE32.encode(&found))
            } else {
                format!("{}:{}", self.label, hex(&found))
            },
        })
    }
}

/// Bytes whose digest is not the one stated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the bytes' digest is {found}")]
pub(crate) struct DigestMismatch {
    /// The digest found, in the label's usual form (base32 for SHA-1, hex otherwise).
    pub found: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_unchanged_only_when_read_whole_and_as_it_was_when_opened() {
        let at = std::time::SystemTime::UNIX_EPOCH;
        let state = |len, secs| FileState {
            len,
            modified: Some(at + std::time::Duration::from_secs(secs)),
        };
        assert_eq!(unchanged(state(10, 1), state(10, 1), 10), Ok(()));
        let cut = unchanged(state(10, 1), state(4, 2), 10).unwrap_err();
        assert_eq!(cut, InputChanged { start: 10, end: 4, read: 10 });
        assert!(cut.to_string().starts_with("changed while being read (10 bytes when opened, 4"));
        // Cut short before it was read, then never changed again: fewer bytes read than stated.
        assert!(unchanged(state(10, 1), state(10, 1), 4).is_err());
        // Rewritten to the same size: its modification time tells.
        assert!(unchanged(state(10, 1), state(10, 2), 10).is_err());
    }

    /// The SHA-512 examples of FIPS 180-2 (NIST's published vectors).
    #[test]
    fn sha512_gives_the_nist_vectors_in_any_pieces() {
        let vectors: [(&[u8], &str); 3] = [
            (
                b"",
                "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce\
                 47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
            ),
            (
                b"abc",
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
                 2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            ),
            (
                b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq\
                  klmnopqrlmnopqrsmnopqrstnopqrstu",
                "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018\
                 501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
            ),
        ];
        for (message, want) in vectors {
            assert_eq!(hex(&Sha512::digest(message)), want);
            for cut in 0..message.len() {
                let mut h = Sha512::new();
                h.update(&message[..cut]);
                h.update(&message[cut..]);
                assert_eq!(hex(&h.finalize()), want, "cut at {cut}");
            }
        }
        // One million times 'a', fed in uneven pieces.
        let mut h = Sha512::new();
        let a = vec![b'a'; 7919];
        let mut left = 1_000_000usize;
        while left > 0 {
            let n = left.min(a.len());
            h.update(&a[..n]);
            left -= n;
        }
        assert_eq!(
            hex(&h.finalize()),
            "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb\
             de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"
        );
    }

    #[test]
    fn sha512_agrees_with_the_pure_rust_sha2_on_generated_bytes() {
        use sha2::Digest as _;
        let bytes: Vec<u8> =
            (0..300_007u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        for len in [0, 1, 111, 112, 127, 128, 129, 239, 240, 255, 256, 4096, bytes.len()] {
            let want: [u8; 64] = sha2::Sha512::digest(&bytes[..len]).into();
            assert_eq!(Sha512::digest(&bytes[..len]), want, "{len} bytes");
        }
    }

    #[test]
    fn sha1_base32_matches_known_value() {
        let d = Sha1::digest(b"hello world");
        assert_eq!(sha1_base32(&d), "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN");
    }

    #[test]
    fn labelled_digests_in_every_encoding_check_the_same_bytes() {
        let sha1 = Sha1::digest(b"hello world");
        let sha256 = Sha256::digest(b"hello world");
        let forms = [
            sha1_base32(&sha1),
            format!("SHA1:{}", hex(&sha1)),
            format!("sha1:{}", data_encoding::BASE32.encode(&sha1).to_lowercase()),
            format!("sha256:{}", hex(&sha256)),
            format!("sha-256:{}", data_encoding::BASE32.encode(&sha256)),
            format!("sha256:{}", data_encoding::BASE32_NOPAD.encode(&sha256)),
        ];
        for f in &forms {
            let mut d = LabelledDigest::parse(f).unwrap();
            d.update(b"hello ");
            d.update(b"world");
            assert_eq!(d.verify(), Ok(()), "{f}");
            let mut wrong = LabelledDigest::parse(f).unwrap();
            wrong.update(b"hello World");
            assert!(wrong.verify().is_err(), "{f}");
        }
        assert!(matches!(LabelledDigest::parse("md5:abc"), Err(DigestLabelError::Unsupported(_))));
        assert!(matches!(LabelledDigest::parse("sha1:XYZ"), Err(DigestLabelError::Unreadable(_))));
        assert!(matches!(LabelledDigest::parse("sha1"), Err(DigestLabelError::Unreadable(_))));
        assert!(matches!(LabelledDigest::parse(":ABC"), Err(DigestLabelError::Unreadable(_))));
    }

    #[test]
    fn split_feeding_gives_same_digests_as_one_slice() {
        let block = b"HTTP/1.1 200 OK\r\n\r\nhello payload";
        let whole = BlockHasher::digest(block, 19);
        for cut in 0..block.len() {
            let mut h = BlockHasher::new(19);
            h.update(&block[..cut]);
            h.update(&block[cut..]);
            assert_eq!(h.finish(), whole, "cut at {cut}");
        }
        assert_eq!(whole.payload_len, 13);
        assert_eq!(whole.payload_sha512, Sha512::digest(b"hello payload"));
    }

    #[test]
    fn large_pieces_hash_as_small_ones_on_any_thread() {
        // Pieces of PARALLEL_HASH_MIN and more hash on two threads: the same digests, from a
        // thread outside any pool, from a pool of one (no deadlock) and from inside a join.
        let block: Vec<u8> =
            (0..700_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        let offset = 300_001u64;
        let sha1: [u8; 20] = Sha1::digest(&block).into();
        let sha512: [u8; 64] = Sha512::digest(&block[offset as usize..]);
        let feed = |piece: usize| {
            let mut h = BlockHasher::new(offset);
            block.chunks(piece).for_each(|c| h.update(c));
            h.finish()
        };
        let small = feed(1000);
        assert_eq!((small.block_sha1, small.payload_sha512), (sha1, sha512));
        assert_eq!(feed(PARALLEL_HASH_MIN), small);
        assert_eq!(feed(block.len()), small);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| feed(512 << 10)), small, "{threads} thread(s)");
            let (a, b) = pool.install(|| rayon::join(|| feed(200_000), || feed(PARALLEL_HASH_MIN)));
            assert_eq!((a, b), (small.clone(), small.clone()), "{threads} thread(s), nested");
        }
    }
}

/// A fixity algorithm a METS `CHECKSUMTYPE` or a PREMIS `messageDigestAlgorithm` names, of
/// those other tools' packages use: MD5 (Rosetta, older SIPs), SHA-1, SHA-256 (Archivematica's
/// default), SHA-384 and SHA-512 (webaip's); and the METS vocabulary's 32-bit sums, Adler-32
/// and CRC32, and its Tiger and WHIRLPOOL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FixityAlgorithm {
    /// Adler-32.
    Adler32,
    /// CRC-32 (ISO 3309, as zip and gzip use it).
    Crc32,
    /// MD5.
    Md5,
    /// SHA-1.
    Sha1,
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
    /// Tiger (the original, with its 0x01 padding; 192 bits).
    Tiger,
    /// WHIRLPOOL (the ISO/IEC 10118-3 version; 512 bits).
    Whirlpool,
}

impl FixityAlgorithm {
    /// The algorithm a name stands for, in the spellings METS (`SHA-256`), PREMIS and the LoC
    /// vocabulary (`SHA-256`, `sha256`), and tools (`SHA256`) use; `None` for one not known.
    pub fn from_name(name: &str) -> Option<FixityAlgorithm> {
        let n: String = name
            .trim()
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .collect::<String>()
            .to_lowercase();
        Some(match n.as_str() {
            "adler32" => FixityAlgorithm::Adler32,
            "crc32" => FixityAlgorithm::Crc32,
            "md5" => FixityAlgorithm::Md5,
            "sha1" => FixityAlgorithm::Sha1,
            "sha256" => FixityAlgorithm::Sha256,
            "sha384" => FixityAlgorithm::Sha384,
            "sha512" => FixityAlgorithm::Sha512,
            "tiger" => FixityAlgorithm::Tiger,
            "whirlpool" => FixityAlgorithm::Whirlpool,
            _ => return None,
        })
    }

    /// The algorithm whose digests, in hex, have `len` characters.
    pub fn from_hex_len(len: usize) -> Option<FixityAlgorithm> {
        Some(match len {
            32 => FixityAlgorithm::Md5,
            40 => FixityAlgorithm::Sha1,
            64 => FixityAlgorithm::Sha256,
            96 => FixityAlgorithm::Sha384,
            128 => FixityAlgorithm::Sha512,
            _ => return None,
        })
    }

    /// Every algorithm computed.
    pub const ALL: [FixityAlgorithm; 9] = [
        FixityAlgorithm::Adler32,
        FixityAlgorithm::Crc32,
        FixityAlgorithm::Md5,
        FixityAlgorithm::Sha1,
        FixityAlgorithm::Sha256,
        FixityAlgorithm::Sha384,
        FixityAlgorithm::Sha512,
        FixityAlgorithm::Tiger,
        FixityAlgorithm::Whirlpool,
    ];

    /// The METS `CHECKSUMTYPE` spelling.
    pub fn mets_name(self) -> &'static str {
        match self {
            FixityAlgorithm::Adler32 => "Adler-32",
            FixityAlgorithm::Crc32 => "CRC32",
            FixityAlgorithm::Md5 => "MD5",
            FixityAlgorithm::Sha1 => "SHA-1",
            FixityAlgorithm::Sha256 => "SHA-256",
            FixityAlgorithm::Sha384 => "SHA-384",
            FixityAlgorithm::Sha512 => "SHA-512",
            FixityAlgorithm::Tiger => "TIGER",
            FixityAlgorithm::Whirlpool => "WHIRLPOOL",
        }
    }
}

/// What one read of a file gives: its size, its SHA-512 and the other digests asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigests {
    /// Bytes read.
    pub size: u64,
    /// SHA-512, lower-case hex.
    pub sha512: String,
    /// The other algorithms asked for, lower-case hex.
    pub others: Vec<(FixityAlgorithm, String)>,
}

impl FileDigests {
    /// The digest by `a`, if it was computed.
    pub fn by(&self, a: FixityAlgorithm) -> Option<&str> {
        match a {
            FixityAlgorithm::Sha512 => Some(&self.sha512),
            _ => self.others.iter().find(|(o, _)| *o == a).map(|(_, d)| d.as_str()),
        }
    }
}

/// A reader that computes, as the bytes pass through it, their size, SHA-512 and the digests
/// by the algorithms asked for: the digests of bytes read anyway (copied), in the same read.
pub(crate) struct DigestsReader<R> {
    inner: R,
    sha: Sha512,
    others: Vec<(FixityAlgorithm, AnyHasher)>,
    size: u64,
}

impl<R: std::io::Read> DigestsReader<R> {
    /// Reads `inner`, computing SHA-512 and the digests by `also`.
    pub(crate) fn new(inner: R, also: &[FixityAlgorithm]) -> Self {
        let mut algos: Vec<FixityAlgorithm> = also.to_vec();
        algos.sort();
        algos.dedup();
        // SHA-512 is always computed: not a second time.
        algos.retain(|a| *a != FixityAlgorithm::Sha512);
        let others = algos.into_iter().map(|a| (a, AnyHasher::new(a))).collect();
        DigestsReader { inner, sha: Sha512::new(), others, size: 0 }
    }

    /// The size and digests of the bytes read so far.
    pub(crate) fn finish(self) -> FileDigests {
        FileDigests {
            size: self.size,
            sha512: hex(&self.sha.finalize()),
            others: self.others.into_iter().map(|(a, h)| (a, hex(&h.finish()))).collect(),
        }
    }
}

impl<R: std::io::Read> std::io::Read for DigestsReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        for (_, h) in &mut self.others {
            h.update(&buf[..n]);
        }
        self.size += n as u64;
        Ok(n)
    }
}

/// Size, SHA-512 and the digests by `also` of everything `f` yields, in one read.
pub(crate) fn digests_read(
    f: impl std::io::Read,
    also: &[FixityAlgorithm],
) -> std::io::Result<FileDigests> {
    use std::io::Read;
    let mut reader = DigestsReader::new(f, also);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(reader.finish())
}

#[cfg(test)]
mod fixity_tests {
    use super::*;

    #[test]
    fn names_in_every_spelling_map_to_one_algorithm() {
        for n in ["SHA-256", "sha256", "SHA256", " Sha_256 "] {
            assert_eq!(FixityAlgorithm::from_name(n), Some(FixityAlgorithm::Sha256), "{n}");
        }
        assert_eq!(FixityAlgorithm::from_name("MD5"), Some(FixityAlgorithm::Md5));
        assert_eq!(FixityAlgorithm::from_name("HAVAL"), None);
        assert_eq!(FixityAlgorithm::from_name("SHA-512").unwrap().mets_name(), "SHA-512");
    }

    #[test]
    fn one_read_gives_every_digest_asked_for() {
        let all = [FixityAlgorithm::Md5, FixityAlgorithm::Sha1, FixityAlgorithm::Sha256];
        let d = digests_read(&b"abc"[..], &all).unwrap();
        assert_eq!(d.size, 3);
        // The published test vectors of "abc".
        assert_eq!(d.by(FixityAlgorithm::Md5), Some("900150983cd24fb0d6963f7d28e17f72"));
        assert_eq!(d.by(FixityAlgorithm::Sha1), Some("a9993e364706816aba3e25717850c26c9cd0d89d"));
        assert_eq!(
            d.by(FixityAlgorithm::Sha256),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(d.sha512, sha512_hex(b"abc"));
        assert_eq!(d.by(FixityAlgorithm::Sha384), None);
        // zlib's and zip's sums of "abc", big-endian hex.
        let sums = [FixityAlgorithm::Adler32, FixityAlgorithm::Crc32];
        let d = digests_read(&b"abc"[..], &sums).unwrap();
        assert_eq!(d.by(FixityAlgorithm::Adler32), Some("024d0127"));
        assert_eq!(d.by(FixityAlgorithm::Crc32), Some("352441c2"));
        // The published test vectors of "abc" (Tiger's reference page; ISO/IEC 10118-3).
        let more = [FixityAlgorithm::Tiger, FixityAlgorithm::Whirlpool];
        let d = digests_read(&b"abc"[..], &more).unwrap();
        assert_eq!(
            d.by(FixityAlgorithm::Tiger),
            Some("2aab1484e8c158f2bfb8c5ff41b57a525129131c957b5f93")
        );
        assert_eq!(
            d.by(FixityAlgorithm::Whirlpool),
            Some(
                "4e2448a4c6f486bb16b6562c73b4020bf3043e3a731bce721ae1b303d97e6d4c\
                 7181eebdb6c57e277d0e34957114cbd6c797fc9d95d8b582d225292076d4eef5"
            )
        );
        for a in FixityAlgorithm::ALL {
            assert_eq!(FixityAlgorithm::from_name(a.mets_name()), Some(a));
        }
    }
}
