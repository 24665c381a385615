//! Virus scanning with a ClamAV daemon (clamd): the one home of scanning. This module is the
//! clamd client; `engine` the one batching engine every path scans through (`package` of
//! every source, `migrate`, `scan`), with verdicts reused for identical payloads; and
//! `clean_copy` runs a curator's cleaner on an infected payload.
//!
//! Payloads held in memory (nearly all of a web crawl) go over persistent `IDSESSION`
//! connections, kept in a small pool shared by every clone of a [`Clamd`]: a connection per
//! payload costs clamd an accept and a thread hand-off each, which on a crawl of many small
//! records adds up. Over a Unix socket they are handed over as a file descriptor (`FILDES`
//! with an in-memory file) rather than copied through the socket: clamd then scans them in
//! place instead of spooling each to a temporary file first (about 6 % of clamd's CPU on the
//! benchmark crawl, measured with its cache cold). Streamed (large) payloads get an
//! `INSTREAM` connection of their own.
//!
//! Limits differ by transport: `INSTREAM` refuses a stream over clamd's `StreamMaxLength`;
//! `FILDES` is bound by `MaxFileSize` only, and over it clamd says clean unless
//! `AlertExceedsMax` is on (then it reports `Heuristics.Limits.Exceeded.*`, which becomes
//! "not scanned" here). `scripts/clamd-local.sh` turns it on.
//!
//! A small client of our own rather than clamav-client: that crate cannot stream from a reader
//! (a 2 GB record would have to be buffered or written to a file first) and has no connect or
//! read timeouts, so a hung clamd would block a packaging run for ever (RUST_STACK.md §2).
//!
//! Outcomes are explicit: [`ScanResult::Clean`], [`ScanResult::Infected`] with the signature,
//! or [`ScanResult::NotScanned`] with the reason (over clamd's limits, a limits heuristic, an
//! error for that stream). A daemon that cannot be reached or stops answering is a
//! [`ScanError`], which ends a packaging run.

use std::io::{self, IoSlice, Read, Seek, Write};
use std::mem::MaybeUninit;
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) mod batching;
pub(crate) mod engine;
pub(crate) mod error;
mod files;
mod stage;
pub(crate) use engine::PendingVerdicts;
pub use engine::{Digest, ScanBatch, ScanEngine};
pub use error::{ClamdFailure, ScanError};

pub use files::{FileFinding, FilesScan, ScanFilesError, ScanTargets, scan_files};
pub(crate) use stage::ScanStage;

/// Payloads larger than this are never sent: clamd caps `MaxFileSize` at 2147483645 bytes and
/// reports anything larger as clean unless told otherwise.
pub(crate) const CLAMD_MAX_SCANNABLE: u64 = 2_147_483_645;

/// Where clamd listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClamdAddr {
    /// A Unix socket.
    Unix(PathBuf),
    /// A TCP address (`host:port`).
    Tcp(String),
}

/// A clamd address that is neither `unix:PATH` nor `tcp:HOST:PORT` (the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("clamd address {0:?}: expected unix:PATH or tcp:HOST:PORT")]
pub struct BadClamdAddr(pub String);

impl FromStr for ClamdAddr {
    type Err = BadClamdAddr;
    fn from_str(s: &str) -> Result<Self, BadClamdAddr> {
        if let Some(p) = s.strip_prefix("unix:") {
            Ok(ClamdAddr::Unix(PathBuf::from(p)))
        } else if let Some(a) = s.strip_prefix("tcp:") {
            Ok(ClamdAddr::Tcp(a.to_string()))
        } else {
            Err(BadClamdAddr(s.into()))
        }
    }
}

impl std::fmt::Display for ClamdAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClamdAddr::Unix(p) => write!(f, "unix:{}", p.display()),
            ClamdAddr::Tcp(a) => write!(f, "tcp:{a}"),
        }
    }
}

/// How many payloads to have clamd scan at once at most: one per core, at least two, so that
/// clamd can scan on every core when it is the slower side (it usually is: on the benchmark
/// crawl its engine needs about 1.5 times the CPU of all of packaging). The migration path
/// starts narrower and widens only while the writer waits for verdicts.
pub(crate) fn scan_sessions() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 16))
}

/// The cleaner could not be run.
#[derive(Debug, thiserror::Error)]
#[error("running the cleaner on {path}: {}", crate::layout::describe_io(source))]
pub struct CleanError {
    /// The infected payload's temporary file.
    pub path: PathBuf,
    /// The cause.
    #[source]
    pub source: io::Error,
}

/// A curator's cleaner: a command run as `CMD INFECTED CLEANED`, and how long it may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleaner {
    /// The command (a shell command line).
    pub command: String,
    /// How long it may run before it is stopped (`--cleaner-timeout`).
    pub timeout: Duration,
}

impl std::fmt::Display for Cleaner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.command)
    }
}

/// Why an infected payload got no cleaned copy: its record stays quarantined as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotCleaned {
    /// The cleaner ran past `--cleaner-timeout` and was stopped, with its process group.
    #[error("the cleaner did not finish within {} s (--cleaner-timeout) and was stopped", .0.as_secs())]
    TimedOut(Duration),
    /// The cleaner exited with a failure.
    #[error("the cleaner failed ({0})")]
    Failed(String),
    /// The cleaner exited 0 but wrote no copy.
    #[error("the cleaner wrote no copy")]
    NoCopy,
    /// clamd still finds a virus in the copy.
    #[error("the cleaned copy is still infected ({0})")]
    StillInfected(String),
    /// clamd could not scan the copy.
    #[error("the cleaned copy could not be scanned ({0})")]
    CopyNotScanned(String),
}

/// Runs `cleaner` on the payload in `infected`; gives the cleaned bytes when the cleaner
/// succeeded and clamd finds the copy clean, else why there is none. A cleaner that runs past
/// its timeout is killed, with every process of its group. The original stays quarantined
/// either way (`viral, failed but forced` unless a copy is made).
pub(crate) fn clean_copy(
    cleaner: &Cleaner,
    infected: &std::path::Path,
    engine: &ScanEngine,
) -> Result<Result<Vec<u8>, NotCleaned>, CleanOrScanError> {
    let err = |source| CleanError { path: infected.to_path_buf(), source };
    let dir = tempfile::tempdir().map_err(err)?;
    let out = dir.path().join("cleaned");
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{} \"$0\" \"$1\"", cleaner.command))
        .arg(infected)
        .arg(&out)
        // A group of its own, so that a timeout stops whatever it started too.
        .process_group(0)
        .spawn()
        .map_err(err)?;
    let Some(status) = wait_within(&mut child, cleaner.timeout).map_err(err)? else {
        return Ok(Err(NotCleaned::TimedOut(cleaner.timeout)));
    };
    if !status.success() {
        return Ok(Err(NotCleaned::Failed(status.to_string())));
    }
    if !out.is_file() {
        return Ok(Err(NotCleaned::NoCopy));
    }
    let bytes = std::fs::read(&out).map_err(err)?;
    // No verdict is reused for the copy: it is new bytes, and must be seen by clamd.
    Ok(match engine.scan_one(None, &bytes[..], bytes.len() as u64)? {
        ScanResult::Clean => Ok(bytes),
        ScanResult::Infected(sig) => Err(NotCleaned::StillInfected(sig)),
        ScanResult::NotScanned(why) => Err(NotCleaned::CopyNotScanned(why.to_string())),
    })
}

/// Waits for `child` at most `timeout`; past it, kills its process group and reaps it
/// (`None`).
fn wait_within(
    child: &mut std::process::Child,
    timeout: Duration,
) -> io::Result<Option<std::process::ExitStatus>> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            break;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
    }
    // The group is the child's own (`process_group(0)`), and the child is not reaped yet, so
    // the id names no other group. It may have ended just now: reaped below either way.
    // SAFETY: killpg takes no pointers.
    unsafe { libc::killpg(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait()?;
    Ok(None)
}

/// Why a clean copy could not be made: the cleaner could not be run, or clamd failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CleanOrScanError {
    /// The cleaner could not be run.
    #[error(transparent)]
    Clean(#[from] CleanError),
    /// clamd failed.
    #[error(transparent)]
    Scan(#[from] ScanError),
}

/// The outcome of scanning one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanResult {
    /// Nothing found.
    Clean,
    /// A signature matched.
    Infected(String),
    /// The payload could not be scanned, and why.
    NotScanned(Unscanned),
}

/// Why a payload was not scanned. The text is what the PREMIS event and the reports say.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unscanned {
    /// Larger than clamd can take at all (`CLAMD_MAX_SCANNABLE`).
    #[error("payload of {len} bytes exceeds the {} bytes clamd can scan", CLAMD_MAX_SCANNABLE)]
    TooLarge {
        /// The payload's length.
        len: u64,
    },
    /// clamd stopped at one of its limits (`AlertExceedsMax` reports it as a signature).
    #[error("clamd limit reached ({signature})")]
    LimitReached {
        /// The `Heuristics.Limits.Exceeded.*` name.
        signature: String,
    },
    /// clamd answered this stream with an error (a size limit, FILDES refused, ...).
    #[error("clamd: {reply}")]
    Refused {
        /// clamd's reply, without its `stream:` prefix.
        reply: String,
    },
    /// Not held in memory, and its bytes share a gzip member with other records: not read
    /// again to be scanned.
    #[error("over {held} bytes in a gzip member shared with other records")]
    SharedMember {
        /// The most payload bytes held in memory.
        held: u64,
    },
}

/// A clamd client. Clones share the pool of idle sessions.
#[derive(Clone)]
pub struct Clamd {
    addr: ClamdAddr,
    connect_timeout: Duration,
    read_timeout: Duration,
    chunk: usize,
    idle: Arc<Mutex<Vec<Session>>>,
    /// Cleared for good once clamd could not take a descriptor (a clamd built without fd
    /// passing, or confined by AppArmor/SELinux): INSTREAM from then on.
    fildes: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Clamd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clamd").field("addr", &self.addr).finish_non_exhaustive()
    }
}

/// A connection to clamd.
enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Unix(s) => s.read(buf),
            Conn::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    /// `send` with `MSG_NOSIGNAL`: the binary restores SIGPIPE's default so that a closed
    /// stdout ends it quietly, and a plain write to a connection clamd has closed (a refused
    /// stream, an idle session timed out, a daemon gone) would kill the process instead of
    /// returning an error.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let flags = rustix::net::SendFlags::NOSIGNAL;
        let sent = match self {
            Conn::Unix(s) => rustix::net::send(&*s, buf, flags),
            Conn::Tcp(s) => rustix::net::send(&*s, buf, flags),
        };
        Ok(sent?)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One `IDSESSION` connection: commands go one at a time, each reply carries the number of
/// its command.
struct Session {
    conn: Conn,
    /// The number of the last command sent.
    last_id: u64,
    /// The frame being sent, kept to spare an allocation per payload.
    frame: Vec<u8>,
    /// The in-memory file handed to clamd with FILDES, kept so that its pages are reused.
    memfd: Option<std::fs::File>,
}

/// A kept memfd larger than this is let go after use, so that one large payload does not
/// hold its memory for the rest of the run.
const MEMFD_KEEP: u64 = 1 << 20;

/// Idle sessions kept for reuse; more than the threads that scan at once is never needed.
const IDLE_SESSIONS: usize = 32;

impl Clamd {
    /// A client for `addr` with the default timeouts (connect 10 s, each read 300 s).
    pub fn new(addr: ClamdAddr) -> Self {
        Clamd {
            addr,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
            chunk: 1 << 20,
            idle: Arc::new(Mutex::new(Vec::new())),
            fildes: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        }
    }

    /// Sets the read timeout (how long a silent clamd is waited for).
    pub fn with_read_timeout(mut self, t: Duration) -> Self {
        self.read_timeout = t;
        self
    }

    /// The address.
    pub(crate) fn addr(&self) -> &ClamdAddr {
        &self.addr
    }

    fn err(&self, failure: ClamdFailure) -> ScanError {
        ScanError { addr: self.addr.clone(), failure }
    }

    fn connect(&self) -> Result<Conn, ScanError> {
        match &self.addr {
            ClamdAddr::Unix(p) => {
                let s = UnixStream::connect(p).map_err(|e| self.err(ClamdFailure::Connect(e)))?;
                s.set_read_timeout(Some(self.read_timeout))
                    .map_err(|e| self.err(ClamdFailure::Timeouts(e)))?;
                s.set_write_timeout(Some(self.read_timeout))
                    .map_err(|e| self.err(ClamdFailure::Timeouts(e)))?;
                Ok(Conn::Unix(s))
            }
            ClamdAddr::Tcp(a) => {
                let addr = a
                    .to_socket_addrs()
                    .map_err(|e| self.err(ClamdFailure::BadAddress(e)))?
                    .next()
                    .ok_or_else(|| self.err(ClamdFailure::Unresolved))?;
                let s = TcpStream::connect_timeout(&addr, self.connect_timeout)
                    .map_err(|e| self.err(ClamdFailure::Connect(e)))?;
                s.set_read_timeout(Some(self.read_timeout))
                    .map_err(|e| self.err(ClamdFailure::Timeouts(e)))?;
                s.set_write_timeout(Some(self.read_timeout))
                    .map_err(|e| self.err(ClamdFailure::Timeouts(e)))?;
                Ok(Conn::Tcp(s))
            }
        }
    }

    fn command(&self, command: &'static str) -> Result<String, ScanError> {
        let mut c = self.connect()?;
        // A clamd that hangs before a scan (PING, VERSION) is said to be silent as it is mid-scan.
        c.write_all(format!("z{command}\0").as_bytes())
            .map_err(|e| self.failed(e, |source| ClamdFailure::Send { command, source }))?;
        read_reply(&mut c)
            .map_err(|e| self.failed(e, |source| ClamdFailure::NoReply { command, source }))
    }

    /// PING; Ok when clamd answers PONG.
    pub fn ping(&self) -> Result<(), ScanError> {
        match self.command("PING")?.as_str() {
            "PONG" => Ok(()),
            other => Err(self.err(ClamdFailure::NotPong(other.into()))),
        }
    }

    /// The VERSION reply verbatim (engine, and signature version and date when clamd has an
    /// official database).
    pub(crate) fn version(&self) -> Result<String, ScanError> {
        self.command("VERSION")
    }

    /// Streams `payload` (of `len` bytes) to clamd and returns the verdict.
    pub fn scan(&self, mut payload: impl Read, len: u64) -> Result<ScanResult, ScanError> {
        if len > CLAMD_MAX_SCANNABLE {
            return Ok(ScanResult::NotScanned(Unscanned::TooLarge { len }));
        }
        let mut c = self.connect()?;
        c.write_all(b"zINSTREAM\0")
            .map_err(|source| self.err(ClamdFailure::Send { command: "INSTREAM", source }))?;
        let mut buf = vec![0u8; self.chunk];
        let mut refused = false;
        loop {
            let n = match payload.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.err(ClamdFailure::ReadPayload(e))),
            };
            let mut frame = Vec::with_capacity(4 + n);
            frame.extend_from_slice(&(n as u32).to_be_bytes());
            frame.extend_from_slice(&buf[..n]);
            if let Err(e) = self.send_all(&mut c, &frame) {
                // clamd closes the stream when it refuses it (size limit): read why below.
                self.unless_silent(&e)?;
                refused = true;
                break;
            }
        }
        if !refused && let Err(e) = self.send_all(&mut c, &0u32.to_be_bytes()) {
            self.unless_silent(&e)?;
            refused = true;
        }
        let reply = match read_reply(&mut c) {
            Ok(r) => r,
            Err(e) if refused => return Err(self.failed(e, ClamdFailure::Refused)),
            Err(e) => return Err(self.failed(e, ClamdFailure::NoVerdict)),
        };
        Ok(parse_verdict(&reply))
    }

    /// Scans a payload held in memory over a pooled `IDSESSION` connection. A session that
    /// fails (clamd closes idle ones after its `IdleTimeout`) is dropped and the payload sent
    /// once more on a new one; only a failure on a new connection is an error.
    pub fn scan_bytes(&self, payload: &[u8]) -> Result<ScanResult, ScanError> {
        if payload.len() as u64 > CLAMD_MAX_SCANNABLE {
            return self.scan(payload, payload.len() as u64);
        }
        let reused = self.idle.lock().ok().and_then(|mut v| v.pop());
        if let Some(mut session) = reused {
            match self.session_scan(&mut session, payload) {
                Ok(verdict) => {
                    self.keep(session, &verdict);
                    return Ok(verdict);
                }
                // A clamd that hangs would only make a new session wait as long again.
                Err(e) if e.timed_out() => return Err(e),
                Err(_) => {}
            }
        }
        let fildes = self.uses_fildes();
        let mut session = self.open_session()?;
        let verdict = match self.session_scan(&mut session, payload) {
            // A new session that fails on FILDES alone: clamd cannot take descriptors. Say so
            // once, and send this payload and every later one with INSTREAM.
            Err(e) if fildes && !e.timed_out() => return self.without_fildes(&e, payload),
            Ok(ScanResult::NotScanned(Unscanned::Refused { reply }))
                if fildes && reply.contains("FILDES") =>
            {
                return self
                    .without_fildes(&self.err(ClamdFailure::DescriptorRefused(reply)), payload);
            }
            other => other?,
        };
        self.keep(session, &verdict);
        Ok(verdict)
    }

    fn uses_fildes(&self) -> bool {
        matches!(self.addr, ClamdAddr::Unix(_))
            && self.fildes.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn without_fildes(&self, why: &ScanError, payload: &[u8]) -> Result<ScanResult, ScanError> {
        if self.fildes.swap(false, std::sync::atomic::Ordering::Relaxed) {
            log::warn!("{why}; sending payloads with INSTREAM instead of FILDES");
        }
        let mut session = self.open_session()?;
        let verdict = self.session_scan(&mut session, payload)?;
        self.keep(session, &verdict);
        Ok(verdict)
    }

    fn open_session(&self) -> Result<Session, ScanError> {
        let mut conn = self.connect()?;
        conn.write_all(b"zIDSESSION\0")
            .map_err(|source| self.err(ClamdFailure::Send { command: "IDSESSION", source }))?;
        Ok(Session { conn, last_id: 0, frame: Vec::new(), memfd: None })
    }

    /// Puts a session back in the pool, unless the verdict was an error reply: clamd may end
    /// the session after one (a stream over `StreamMaxLength` is cut off).
    fn keep(&self, session: Session, verdict: &ScanResult) {
        if matches!(verdict, ScanResult::NotScanned(_)) {
            return;
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < IDLE_SESSIONS
        {
            idle.push(session);
        }
    }

    fn session_scan(&self, s: &mut Session, payload: &[u8]) -> Result<ScanResult, ScanError> {
        // A memfd the kernel will not make (older than 3.17, or a sandbox) means INSTREAM.
        let memfd = match (&s.conn, s.memfd.take()) {
            (Conn::Unix(_), _) if !self.uses_fildes() => None,
            (Conn::Unix(_), Some(f)) => Some(f),
            (Conn::Unix(_), None) => {
                rustix::fs::memfd_create("webaip-scan", rustix::fs::MemfdFlags::CLOEXEC)
                    .ok()
                    .map(std::fs::File::from)
            }
            (Conn::Tcp(_), _) => None,
        };
        let sent = match memfd {
            // Nothing of a failed FILDES reached clamd as a command to answer.
            Some(file) => {
                send_fildes(&mut s.conn, &file, payload).map_err(|e| {
                    self.failed(e, |source| ClamdFailure::Send { command: "FILDES", source })
                })?;
                if payload.len() as u64 <= MEMFD_KEEP {
                    s.memfd = Some(file);
                }
                Ok(())
            }
            // A write that fails part-way is clamd refusing the stream: its reply says why.
            // One that timed out is a clamd that stopped reading: waiting for a reply would
            // only wait as long again.
            None => match self.send_instream(s, payload) {
                Err(e) => self.unless_silent(&e).map(|()| Err(e))?,
                sent => sent,
            },
        };
        s.last_id += 1;
        let reply = match read_reply(&mut s.conn) {
            Ok(r) => r,
            Err(e) => {
                return Err(match sent {
                    Err(sending) => self
                        .failed(e, |source| ClamdFailure::NoVerdictAfterSend { sending, source }),
                    Ok(()) => self.failed(e, ClamdFailure::NoVerdict),
                });
            }
        };
        // "<id>: stream: OK"; the number must be that of the command just sent.
        let (id, rest) = reply.split_once(": ").unwrap_or(("", &reply));
        if id.parse::<u64>().ok() != Some(s.last_id) {
            // clamd's own ReadTimeout also runs while a session waits for a verdict; when it
            // ends first, clamd says so without a number and drops the scan.
            return Err(self.err(if reply.contains("TIMED OUT") {
                ClamdFailure::SessionTimedOut { reply }
            } else {
                ClamdFailure::OutOfStep { reply }
            }));
        }
        Ok(parse_verdict(rest))
    }

    /// A session's I/O failure: one that waited out the timeout is said as such, whatever it
    /// was doing.
    fn failed(&self, e: io::Error, failure: impl FnOnce(io::Error) -> ClamdFailure) -> ScanError {
        let timed_out = matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut);
        self.err(if timed_out {
            ClamdFailure::Silent { waited: self.read_timeout }
        } else {
            failure(e)
        })
    }

    /// A send that timed out: clamd stopped reading (hung, or busy past the timeout), which is
    /// it falling silent, not refusing the stream; any other send error is left to the reply
    /// that follows to explain.
    fn unless_silent(&self, e: &io::Error) -> Result<(), ScanError> {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                Err(self.err(ClamdFailure::Silent { waited: self.read_timeout }))
            }
            _ => Ok(()),
        }
    }

    /// `write_all`, except that a send cut short after waiting out the whole timeout (the
    /// kernel then returns what it took so far) is `TimedOut`: clamd stopped reading, and
    /// carrying on would wait as long again for every piece still to send.
    fn send_all(&self, conn: &mut Conn, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let started = std::time::Instant::now();
            match conn.write(buf) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) if n < buf.len() && started.elapsed() >= self.read_timeout => {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Sends `payload` as one `INSTREAM` command, in frames of at most the chunk size.
    fn send_instream(&self, s: &mut Session, payload: &[u8]) -> io::Result<()> {
        // One write per payload up to the chunk size: clamd reads commands in its main thread,
        // and every separate write can cost it a wake-up.
        s.frame.clear();
        s.frame.extend_from_slice(b"zINSTREAM\0");
        for part in payload.chunks(self.chunk) {
            s.frame.extend_from_slice(&(part.len() as u32).to_be_bytes());
            s.frame.extend_from_slice(part);
            if s.frame.len() >= self.chunk {
                self.send_all(&mut s.conn, &s.frame)?;
                s.frame.clear();
            }
        }
        s.frame.extend_from_slice(&0u32.to_be_bytes());
        let sent = self.send_all(&mut s.conn, &s.frame);
        s.frame.clear();
        if s.frame.capacity() > 2 * self.chunk {
            s.frame.shrink_to(self.chunk);
        }
        sent
    }
}

/// Hands `payload` to clamd as a file descriptor: `file`, an in-memory file (memfd) that
/// is made to hold it, sent with `SCM_RIGHTS` after the `FILDES` command (clamd wants the
/// descriptor in a message of its own, with at least one byte of data). The memfd is the
/// session's, reused from one payload to the next: clamd has finished with it once it has
/// replied.
fn send_fildes(conn: &mut Conn, file: &std::fs::File, payload: &[u8]) -> io::Result<()> {
    let Conn::Unix(unix) = conn else {
        return Err(io::Error::other("FILDES needs a Unix socket"));
    };
    file.write_all_at(payload, 0)?;
    file.set_len(payload.len() as u64)?;
    // clamd shares the file offset and reads from where it stands.
    let mut at_start = file;
    at_start.seek(io::SeekFrom::Start(0))?;
    let flags = rustix::net::SendFlags::NOSIGNAL;
    let mut command: &[u8] = b"zFILDES\0";
    while !command.is_empty() {
        match rustix::net::send(&*unix, command, flags)? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => command = &command[n..],
        }
    }
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
    let fds = [file.as_fd()];
    if !control.push(rustix::net::SendAncillaryMessage::ScmRights(&fds)) {
        return Err(io::Error::other("no room for the descriptor in the control message"));
    }
    rustix::net::sendmsg(&*unix, &[IoSlice::new(b"\0")], &mut control, flags)?;
    Ok(())
}

fn read_reply(c: &mut impl Read) -> io::Result<String> {
    let mut out = Vec::new();
    let mut b = [0u8; 256];
    loop {
        let n = c.read(&mut b)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&b[..n]);
        if out.contains(&0) {
            break;
        }
    }
    if out.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed without a reply",
        ));
    }
    let end = out.iter().position(|&x| x == 0 || x == b'\n').unwrap_or(out.len());
    Ok(String::from_utf8_lossy(&out[..end]).trim().to_string())
}

/// `stream: OK`, `fd[12]: NAME FOUND`, `INSTREAM size limit exceeded. ERROR`, ...
pub(crate) fn parse_verdict(reply: &str) -> ScanResult {
    let body = match reply.split_once(": ") {
        Some((what, rest)) if what == "stream" || what.starts_with("fd[") => rest.trim(),
        _ => reply,
    };
    if body == "OK" {
        ScanResult::Clean
    } else if let Some(sig) = body.strip_suffix(" FOUND") {
        // With AlertExceedsMax, clamd reports limits as a heuristic "virus": not a virus,
        // the payload was simply not scanned in full.
        if sig.starts_with("Heuristics.Limits.Exceeded") {
            ScanResult::NotScanned(Unscanned::LimitReached { signature: sig.into() })
        } else {
            ScanResult::Infected(sig.to_string())
        }
    } else {
        ScanResult::NotScanned(Unscanned::Refused { reply: body.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_and_addresses() {
        assert_eq!(parse_verdict("stream: OK"), ScanResult::Clean);
        assert_eq!(parse_verdict("fd[12]: OK"), ScanResult::Clean);
        assert_eq!(parse_verdict("fd[13]: X.Y FOUND"), ScanResult::Infected("X.Y".into()));
        assert_eq!(
            parse_verdict("stream: Eicar-Signature FOUND"),
            ScanResult::Infected("Eicar-Signature".into())
        );
        let limit =
            Unscanned::LimitReached { signature: "Heuristics.Limits.Exceeded.MaxFileSize".into() };
        assert_eq!(
            parse_verdict("stream: Heuristics.Limits.Exceeded.MaxFileSize FOUND"),
            ScanResult::NotScanned(limit.clone())
        );
        // What the PREMIS event says.
        assert_eq!(
            limit.to_string(),
            "clamd limit reached (Heuristics.Limits.Exceeded.MaxFileSize)"
        );
        assert_eq!(
            Unscanned::TooLarge { len: 3 << 30 }.to_string(),
            "payload of 3221225472 bytes exceeds the 2147483645 bytes clamd can scan"
        );
        assert!(
            matches!(parse_verdict("INSTREAM size limit exceeded. ERROR"), ScanResult::NotScanned(Unscanned::Refused { reply }) if reply == "INSTREAM size limit exceeded. ERROR")
        );
        assert_eq!("unix:/tmp/s".parse::<ClamdAddr>().unwrap(), ClamdAddr::Unix("/tmp/s".into()));
        assert_eq!(
            "tcp:127.0.0.1:3311".parse::<ClamdAddr>().unwrap(),
            ClamdAddr::Tcp("127.0.0.1:3311".into())
        );
        assert_eq!(
            "127.0.0.1:3311".parse::<ClamdAddr>(),
            Err(BadClamdAddr("127.0.0.1:3311".into()))
        );
    }

    #[test]
    fn an_unreachable_daemon_is_an_error() {
        let c = Clamd::new(ClamdAddr::Unix("/nonexistent/clamd.sock".into()));
        assert!(c.ping().is_err());
    }
}
