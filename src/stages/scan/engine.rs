//! The one scanning engine: every path that scans (`package` of every source, `migrate`,
//! `scan`) hands its payloads to a [`ScanEngine`].
//!
//! - Batches: the payloads of a batch go to clamd in parallel over pooled sessions, on threads
//!   of the engine's own (a scan blocks on the daemon, not on a core), while the caller goes on
//!   reading, compressing or writing the batch before. How many scans run at once starts at one
//!   and grows only while the caller has to wait for verdicts (`ScanWidth`): every scan in
//!   flight costs clamd a hand-off between its threads.
//! - Verdicts reused: a payload whose SHA-512 equals one scanned earlier in the run (or earlier
//!   in the same batch) takes that verdict instead of going to clamd again. Only clean and
//!   infected verdicts are kept: a payload clamd could not scan is tried again. Set
//!   [`NO_VERDICT_REUSE_ENV`] to scan every payload (the benchmark's baseline).
//! - Counts: payloads sent, verdicts reused, and the time callers spent waiting for verdicts.
//!
//! A failure of clamd itself (unreachable, gone, silent) is a [`ScanError`]: the first one
//! stops the other scans of its batch, so a hung clamd costs one timeout, not one per payload.

use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use super::{Clamd, ClamdFailure, ScanError, ScanResult, scan_sessions};

/// Set (to anything) to scan every payload, identical or not: the benchmark's baseline
/// (bench/run-scan-reuse.sh), never needed otherwise.
pub(crate) const NO_VERDICT_REUSE_ENV: &str = "WEBAIP_NO_VERDICT_REUSE";

/// A SHA-512 digest: the key under which a verdict is reused.
pub type Digest = [u8; 64];

/// Verdicts (and payload looks) kept at most: memory stays bounded whatever the crawl (about
/// 30 MB); past it, later payloads are scanned as if new.
const MAX_KNOWN: usize = 250_000;

/// What a payload looks like, cheaply: its length and a hash of its first and last 64 bytes.
/// Equal looks do not mean equal payloads; they only say when a SHA-512 is worth computing.
type Look = (u64, u64);

fn look_of(bytes: &[u8]) -> Look {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes[..bytes.len().min(64)].hash(&mut h);
    bytes[bytes.len().saturating_sub(64)..].hash(&mut h);
    (bytes.len() as u64, h.finish())
}

/// A batch of payloads, in the caller's order.
pub trait ScanBatch: Send + Sync + 'static {
    /// How many items the batch holds.
    fn items(&self) -> usize;
    /// Item `i`'s payload in memory and its SHA-512 when known; `None` when there is nothing
    /// to scan (an empty payload, or one the caller scans on its own with
    /// [`ScanEngine::scan_one`]).
    fn payload(&self, i: usize) -> Option<(&[u8], Option<&Digest>)>;
}

impl ScanBatch for Vec<(Option<Digest>, Vec<u8>)> {
    fn items(&self) -> usize {
        self.len()
    }
    fn payload(&self, i: usize) -> Option<(&[u8], Option<&Digest>)> {
        self.get(i).filter(|(_, b)| !b.is_empty()).map(|(d, b)| (&b[..], d.as_ref()))
    }
}

/// Verdicts of a batch, in its order (`None`: nothing was scanned for that item).
pub type Verdicts = Vec<Option<ScanResult>>;

/// clamd failed on a batch: the error, and which payload of the batch it failed on (`None`
/// when the batch as a whole could not be scanned), so the caller can name the record.
#[derive(Debug)]
pub(crate) struct BatchError {
    /// The payload being scanned when clamd failed.
    pub item: Option<usize>,
    /// What clamd did.
    pub error: ScanError,
}

impl From<ScanError> for BatchError {
    fn from(error: ScanError) -> Self {
        BatchError { item: None, error }
    }
}

/// What the engine did, over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct EngineCounts {
    /// Payloads sent to clamd.
    pub scanned: u64,
    /// Payloads that took the verdict of an identical one.
    pub reused: u64,
    /// Seconds callers spent waiting for verdicts.
    pub waited_seconds: f64,
}

/// clamd, the threads that wait on it, and the verdicts given so far.
pub struct ScanEngine {
    clamd: Clamd,
    /// The threads that wait on clamd: shared by the engines of one batch run
    /// ([`ScanEngine::for_package`]), so items in parallel do not multiply them.
    pool: Arc<rayon::ThreadPool>,
    /// Packages scanned through this engine's threads and clamd sessions.
    packages: Arc<AtomicU64>,
    width: ScanWidth,
    known: Option<Mutex<HashMap<Digest, ScanResult>>>,
    /// What the payloads scanned without a digest looked like ([`look_of`]).
    looks: Mutex<std::collections::HashSet<Look>>,
    scanned: AtomicU64,
    reused: AtomicU64,
    waited_nanos: AtomicU64,
}

impl std::fmt::Debug for ScanEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanEngine").field("clamd", &self.clamd).finish_non_exhaustive()
    }
}

/// The verdicts of a batch being scanned.
#[must_use = "the verdicts must be waited for"]
pub(crate) struct PendingVerdicts {
    rx: Receiver<Result<Verdicts, BatchError>>,
}

impl ScanEngine {
    /// An engine over `clamd` with `scan_sessions` threads; verdicts are reused unless
    /// `NO_VERDICT_REUSE_ENV` is set.
    pub fn new(clamd: Clamd) -> Result<Arc<ScanEngine>, ScanError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(scan_sessions())
            .thread_name(|i| format!("webaip-scan-{i}"))
            .build()
            .map_err(|e| ScanError {
                addr: clamd.addr().clone(),
                failure: ClamdFailure::Threads(e),
            })?;
        let reuse = std::env::var_os(NO_VERDICT_REUSE_ENV).is_none();
        let packages = Arc::new(AtomicU64::new(0));
        Ok(Arc::new(ScanEngine::over(clamd, Arc::new(pool), packages, reuse)))
    }

    /// An engine on `pool`'s threads with verdicts and counts of its own.
    fn over(
        clamd: Clamd,
        pool: Arc<rayon::ThreadPool>,
        packages: Arc<AtomicU64>,
        reuse: bool,
    ) -> ScanEngine {
        ScanEngine {
            clamd,
            pool,
            packages,
            width: ScanWidth::default(),
            known: reuse.then(|| Mutex::new(HashMap::new())),
            looks: Mutex::new(std::collections::HashSet::new()),
            scanned: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            waited_nanos: AtomicU64::new(0),
        }
    }

    /// An engine for one package of a batch: this one's clamd sessions and threads, its own
    /// verdicts and counts (a package's report and METS say what was scanned for it, the same
    /// whichever items ran before or beside it).
    pub fn for_package(&self) -> Arc<ScanEngine> {
        self.packages.fetch_add(1, Relaxed);
        let (pool, packages) = (Arc::clone(&self.pool), Arc::clone(&self.packages));
        Arc::new(ScanEngine::over(self.clamd.clone(), pool, packages, self.known.is_some()))
    }

    /// Packages scanned through this engine's threads so far (by [`ScanEngine::for_package`]).
    pub fn packages(&self) -> u64 {
        self.packages.load(Relaxed)
    }

    /// The clamd it scans with.
    pub fn clamd(&self) -> &Clamd {
        &self.clamd
    }

    /// What the engine did so far.
    pub(crate) fn counts(&self) -> EngineCounts {
        EngineCounts {
            scanned: self.scanned.load(Relaxed),
            reused: self.reused.load(Relaxed),
            waited_seconds: self.waited_nanos.load(Relaxed) as f64 / 1e9,
        }
    }

    fn known_verdict(&self, digest: &Digest) -> Option<ScanResult> {
        let known = self.known.as_ref()?;
        let v = known.lock().unwrap_or_else(|p| p.into_inner()).get(digest).cloned();
        if v.is_some() {
            self.reused.fetch_add(1, Relaxed);
        }
        v
    }

    /// Keeps a verdict for payloads identical to the one it was given for. Callers that learn a
    /// payload's digest only after its scan (the migration hashes while it compresses) give
    /// it here, so that later identical payloads are recognised.
    pub(crate) fn remember(&self, digest: &Digest, v: &ScanResult) {
        if let Some(known) = &self.known
            && !matches!(v, ScanResult::NotScanned(_))
        {
            let mut known = known.lock().unwrap_or_else(|p| p.into_inner());
            if known.len() < MAX_KNOWN {
                known.insert(*digest, v.clone());
            }
        }
    }

    /// Starts scanning a batch; its verdicts are taken with [`ScanEngine::wait`]. The task lets
    /// go of the batch before it sends them, so the caller can take the batch back
    /// (`Arc::into_inner`) once it has them.
    pub(crate) fn start<B: ScanBatch>(self: &Arc<Self>, batch: Arc<B>) -> PendingVerdicts {
        let (tx, rx) = sync_channel(1);
        let engine = Arc::clone(self);
        self.pool.spawn(move || {
            let verdicts = engine.scan_batch(&*batch);
            drop(batch);
            let _ = tx.send(verdicts);
        });
        PendingVerdicts { rx }
    }

    /// Scans a batch and waits for every verdict; gives the batch back.
    pub fn scan_now<B: ScanBatch>(self: &Arc<Self>, batch: B) -> Result<(Verdicts, B), ScanError> {
        let batch = Arc::new(batch);
        let pending = self.start(Arc::clone(&batch));
        let verdicts = self.wait(pending).map_err(|e| e.error)?;
        Ok((verdicts, self.take_back(batch)?))
    }

    /// A batch given to [`ScanEngine::start`], back once its verdicts came (the task lets go of
    /// it before it sends them).
    pub(crate) fn take_back<B>(&self, batch: Arc<B>) -> Result<B, ScanError> {
        Arc::into_inner(batch).ok_or_else(|| ScanError {
            addr: self.clamd.addr().clone(),
            failure: ClamdFailure::BatchKept,
        })
    }

    fn scan_batch(&self, batch: &dyn ScanBatch) -> Result<Verdicts, BatchError> {
        let n = batch.items();
        let mut out: Verdicts = vec![None; n];
        // Digests the caller did not give are computed only for a payload that looks like one
        // seen before (same length and the same first and last bytes): hashing every payload
        // before it may go to clamd would hold up the scan.
        let mut computed: HashMap<usize, Digest> = HashMap::new();
        if self.known.is_some() {
            let mut looks = self.looks.lock().unwrap_or_else(|p| p.into_inner());
            // The first payload of the batch with each look, hashed once a second one comes.
            let mut in_batch: HashMap<Look, usize> = HashMap::new();
            for i in 0..n {
                let Some((bytes, None)) = batch.payload(i) else { continue };
                let look = look_of(bytes);
                let earlier = in_batch.get(&look).copied();
                if let Some(j) = earlier
                    && !computed.contains_key(&j)
                    && let Some((first, _)) = batch.payload(j)
                {
                    computed.insert(j, crate::formats::digest::Sha512::digest(first));
                }
                if earlier.is_some() || looks.contains(&look) {
                    computed.insert(i, crate::formats::digest::Sha512::digest(bytes));
                } else {
                    in_batch.insert(look, i);
                    if looks.len() < MAX_KNOWN {
                        looks.insert(look);
                    }
                }
            }
        }
        // Which item's scan each item takes: itself, or the first identical one of the batch.
        let mut first_of: HashMap<&Digest, usize> = HashMap::new();
        let mut same_as: Vec<(usize, usize)> = Vec::new();
        let mut to_scan: Vec<usize> = Vec::new();
        for (i, slot) in out.iter_mut().enumerate() {
            let Some((_, digest)) = batch.payload(i) else { continue };
            let digest = digest.or_else(|| computed.get(&i));
            let Some(d) = digest.filter(|_| self.known.is_some()) else {
                to_scan.push(i);
                continue;
            };
            if let Some(v) = self.known_verdict(d) {
                *slot = Some(v);
            } else if let Some(&j) = first_of.get(d) {
                same_as.push((i, j));
            } else {
                first_of.insert(d, i);
                to_scan.push(i);
            }
        }
        // Pieces of at least len/width payloads: at most `width` scans at once.
        let piece = to_scan.len().div_ceil(self.width.get()).max(1);
        let clamd = &self.clamd;
        let verdicts: Vec<ScanResult> = self.pool.install(|| {
            to_scan
                .par_iter()
                .with_min_len(piece)
                .map(|&i| match batch.payload(i) {
                    Some((bytes, _)) => {
                        clamd.scan_bytes(bytes).map_err(|error| BatchError { item: Some(i), error })
                    }
                    None => Ok(ScanResult::Clean),
                })
                .collect::<Result<_, _>>()
        })?;
        self.scanned.fetch_add(to_scan.len() as u64, Relaxed);
        for (&i, v) in to_scan.iter().zip(verdicts) {
            if let Some((_, d)) = batch.payload(i)
                && let Some(d) = d.or_else(|| computed.get(&i))
            {
                self.remember(d, &v);
            }
            out[i] = Some(v);
        }
        for (i, j) in same_as {
            let v = out[j].clone();
            match &v {
                // Not scanned: the identical payload is tried on its own.
                Some(ScanResult::NotScanned(_)) | None => {
                    if let Some((bytes, _)) = batch.payload(i) {
                        let v = clamd.scan_bytes(bytes);
                        out[i] = Some(v.map_err(|error| BatchError { item: Some(i), error })?);
                        self.scanned.fetch_add(1, Relaxed);
                    }
                }
                Some(_) => {
                    self.reused.fetch_add(1, Relaxed);
                    out[i] = v;
                }
            }
        }
        Ok(out)
    }

    /// Waits for a batch's verdicts. Whether they were ready in time widens or narrows the
    /// scans of later batches.
    pub(crate) fn wait(&self, pending: PendingVerdicts) -> Result<Verdicts, BatchError> {
        let stopped = || {
            BatchError::from(ScanError {
                addr: self.clamd.addr().clone(),
                failure: ClamdFailure::NoVerdicts,
            })
        };
        let max = self.pool.current_num_threads();
        match pending.rx.try_recv() {
            Ok(v) => {
                self.width.record(true, max);
                v
            }
            Err(_) => {
                self.width.record(false, max);
                let t = Instant::now();
                let v = pending.rx.recv().map_err(|_| stopped());
                self.waited_nanos.fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
                v?
            }
        }
    }

    /// Scans one payload now, streamed from `payload` (`len` bytes): a large one, or one of a
    /// source that yields payloads one at a time. An identical payload scanned before gives
    /// its verdict instead when `digest` is known.
    pub fn scan_one(
        &self,
        digest: Option<&Digest>,
        payload: impl Read,
        len: u64,
    ) -> Result<ScanResult, ScanError> {
        self.one(digest, || self.clamd.scan(payload, len))
    }

    /// A verdict given before for `digest`, else `scan`'s, counted, timed and kept.
    fn one(
        &self,
        digest: Option<&Digest>,
        scan: impl FnOnce() -> Result<ScanResult, ScanError>,
    ) -> Result<ScanResult, ScanError> {
        if let Some(v) = digest.and_then(|d| self.known_verdict(d)) {
            return Ok(v);
        }
        let t = Instant::now();
        let v = scan();
        self.waited_nanos.fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        let v = v?;
        self.scanned.fetch_add(1, Relaxed);
        if let Some(d) = digest {
            self.remember(d, &v);
        }
        Ok(v)
    }

    /// [`ScanEngine::scan_one`] of a payload in memory (over a pooled session).
    #[cfg(test)]
    pub(crate) fn scan_bytes(
        &self,
        digest: Option<&Digest>,
        payload: &[u8],
    ) -> Result<ScanResult, ScanError> {
        self.one(digest, || self.clamd.scan_bytes(payload))
    }
}

/// How many of a batch's payloads are scanned at once. It starts at one and grows while the
/// caller has to wait for verdicts (clamd is the slower side: a large signature database, many
/// cores), and shrinks again after verdicts have been ready in time for a few batches.
#[derive(Default)]
struct ScanWidth {
    /// Scans in flight, minus one.
    extra: AtomicUsize,
    /// Batches in a row whose verdicts were ready when the caller wanted them.
    in_time: AtomicUsize,
}

/// Batches in a row with verdicts ready in time before the width shrinks by one.
const SHRINK_AFTER: usize = 4;

impl ScanWidth {
    fn get(&self) -> usize {
        1 + self.extra.load(Relaxed)
    }

    /// Records whether a batch's verdicts were ready when the caller wanted them.
    fn record(&self, ready: bool, max: usize) {
        if !ready {
            self.in_time.store(0, Relaxed);
            if self.get() < max {
                self.extra.fetch_add(1, Relaxed);
            }
        } else if self.in_time.fetch_add(1, Relaxed) + 1 >= SHRINK_AFTER {
            self.in_time.store(0, Relaxed);
            let _ = self.extra.fetch_update(Relaxed, Relaxed, |e| e.checked_sub(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_width_grows_while_the_caller_waits_and_shrinks_when_verdicts_keep_up() {
        let w = ScanWidth::default();
        assert_eq!(w.get(), 1);
        for _ in 0..10 {
            w.record(false, 4);
        }
        assert_eq!(w.get(), 4, "never more than the scanning threads");
        for _ in 0..SHRINK_AFTER - 1 {
            w.record(true, 4);
        }
        assert_eq!(w.get(), 4, "one batch in time is not enough to shrink");
        w.record(true, 4);
        assert_eq!(w.get(), 3);
        for _ in 0..4 * SHRINK_AFTER {
            w.record(true, 4);
        }
        assert_eq!(w.get(), 1, "back to one scan at a time");
    }

    /// A fake clamd on TCP (so payloads come as INSTREAM, in sessions or alone) that finds
    /// "BAD" payloads infected and counts the payloads it was given.
    #[test]
    fn identical_payloads_go_to_clamd_once() {
        use std::io::Write;
        use std::net::{TcpListener, TcpStream};
        fn read_cmd(c: &mut TcpStream) -> Option<String> {
            let mut cmd = Vec::new();
            let mut b = [0u8; 1];
            loop {
                if c.read(&mut b).ok()? == 0 {
                    return None;
                }
                if b[0] == 0 {
                    return Some(String::from_utf8_lossy(&cmd).to_string());
                }
                cmd.push(b[0]);
            }
        }
        fn read_chunks(c: &mut TcpStream) -> Option<Vec<u8>> {
            let mut body = Vec::new();
            loop {
                let mut len = [0u8; 4];
                c.read_exact(&mut len).ok()?;
                let n = u32::from_be_bytes(len) as usize;
                if n == 0 {
                    return Some(body);
                }
                let mut chunk = vec![0u8; n];
                c.read_exact(&mut chunk).ok()?;
                body.extend_from_slice(&chunk);
            }
        }
        let verdict = |b: &[u8]| if b.starts_with(b"BAD") { "Test.Sig FOUND" } else { "OK" };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(AtomicU64::new(0));
        let seen2 = Arc::clone(&seen);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut c) = conn else { break };
                let seen = Arc::clone(&seen2);
                std::thread::spawn(move || {
                    let Some(first) = read_cmd(&mut c) else { return };
                    if first == "zIDSESSION" {
                        let mut id = 0;
                        while let Some(cmd) = read_cmd(&mut c) {
                            assert_eq!(cmd, "zINSTREAM");
                            let Some(body) = read_chunks(&mut c) else { return };
                            id += 1;
                            seen.fetch_add(1, Relaxed);
                            let reply = format!("{id}: stream: {}\0", verdict(&body));
                            let _ = c.write_all(reply.as_bytes());
                        }
                    } else if let Some(body) = read_chunks(&mut c) {
                        seen.fetch_add(1, Relaxed);
                        let _ = c.write_all(format!("stream: {}\0", verdict(&body)).as_bytes());
                    }
                });
            }
        });

        let engine =
            ScanEngine::new(Clamd::new(super::super::ClamdAddr::Tcp(addr.to_string()))).unwrap();
        let digest = |b: &[u8]| -> Digest { crate::formats::digest::Sha512::digest(b) };
        let payloads: Vec<&[u8]> = vec![b"one", b"BAD two", b"one", b"", b"BAD two", b"three"];
        let batch: Vec<(Option<Digest>, Vec<u8>)> =
            payloads.iter().map(|p| (Some(digest(p)), p.to_vec())).collect();
        let (v, _) = engine.scan_now(batch).unwrap();
        let infected = |v: &Option<ScanResult>| matches!(v, Some(ScanResult::Infected(_)));
        assert_eq!(v.iter().filter(|v| infected(v)).count(), 2, "{v:?}");
        assert!(v[3].is_none(), "an empty payload is not scanned");
        assert_eq!(v[0], Some(ScanResult::Clean));
        let c = engine.counts();
        assert_eq!((c.scanned, c.reused), (3, 2), "{c:?}");
        assert_eq!(seen.load(Relaxed), 3, "clamd saw each distinct payload once");
        // A later payload identical to one of the batch: reused, clamd not asked.
        let again = engine.scan_bytes(Some(&digest(b"BAD two")), b"BAD two").unwrap();
        assert!(matches!(again, ScanResult::Infected(_)));
        assert_eq!(seen.load(Relaxed), 3);
        // Without a digest, nothing can be reused.
        engine.scan_bytes(None, b"one").unwrap();
        assert_eq!(seen.load(Relaxed), 4);
        assert_eq!(engine.counts().reused, 3);

        // Batches without digests (the migration's): a payload that looks like an earlier one
        // is hashed and takes the verdict the caller gave once it had the digest.
        let plain = |ps: &[&[u8]]| -> Vec<(Option<Digest>, Vec<u8>)> {
            ps.iter().map(|p| (None, p.to_vec())).collect()
        };
        let (v, _) = engine.scan_now(plain(&[b"BAD four", b"five"])).unwrap();
        assert!(matches!(v[0], Some(ScanResult::Infected(_))));
        assert_eq!(seen.load(Relaxed), 6);
        engine.remember(&digest(b"BAD four"), v[0].as_ref().unwrap());
        let (v, _) = engine.scan_now(plain(&[b"BAD four", b"BAD fouR", b"six"])).unwrap();
        assert!(matches!(v[0], Some(ScanResult::Infected(_))), "{v:?}");
        assert!(
            matches!(v[1], Some(ScanResult::Infected(_))),
            "another payload of the same length is scanned: {v:?}"
        );
        assert_eq!(seen.load(Relaxed), 8, "fouR and six went to clamd, four did not");
        assert_eq!(engine.counts().reused, 4);
    }
}
