//! Virus scanning with a ClamAV daemon (clamd), streaming every payload with INSTREAM.
//!
//! A small client of our own rather than clamav-client: that crate cannot stream from a reader
//! (a 2 GB record would have to be buffered or written to a file first) and has no connect or
//! read timeouts, so a hung clamd would block a packaging run for ever (RUST_STACK.md §2).
//!
//! Outcomes are explicit: [`ScanResult::Clean`], [`ScanResult::Infected`] with the signature,
//! or [`ScanResult::NotScanned`] with the reason (over clamd's limits, a limits heuristic, an
//! error for that stream). A daemon that cannot be reached or stops answering is a
//! [`ScanError`], which ends a packaging run.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// Payloads larger than this are never sent: clamd caps `MaxFileSize` at 2147483645 bytes and
/// reports anything larger as clean unless told otherwise.
pub const CLAMD_MAX_SCANNABLE: u64 = 2_147_483_645;

/// Where clamd listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClamdAddr {
    /// A Unix socket.
    Unix(PathBuf),
    /// A TCP address (`host:port`).
    Tcp(String),
}

impl FromStr for ClamdAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            Ok(ClamdAddr::Unix(PathBuf::from(p)))
        } else if let Some(a) = s.strip_prefix("tcp:") {
            Ok(ClamdAddr::Tcp(a.to_string()))
        } else {
            Err(format!("clamd address {s:?}: expected unix:PATH or tcp:HOST:PORT"))
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

/// The outcome of scanning one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanResult {
    /// Nothing found.
    Clean,
    /// A signature matched.
    Infected(String),
    /// The payload could not be scanned, and why.
    NotScanned(String),
}

/// clamd cannot be used (unreachable, died, hung).
#[derive(Debug, thiserror::Error)]
#[error("clamd at {addr}: {message}")]
pub struct ScanError {
    /// The daemon's address.
    pub addr: String,
    /// What happened.
    pub message: String,
}

/// A clamd client.
#[derive(Debug, Clone)]
pub struct Clamd {
    addr: ClamdAddr,
    connect_timeout: Duration,
    read_timeout: Duration,
    chunk: usize,
}

trait Conn: Read + Write {}
impl<T: Read + Write> Conn for T {}

impl Clamd {
    /// A client for `addr` with the default timeouts (connect 10 s, each read 300 s).
    pub fn new(addr: ClamdAddr) -> Self {
        Clamd {
            addr,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
            chunk: 1 << 20,
        }
    }

    /// Sets the read timeout (how long a silent clamd is waited for).
    pub fn with_read_timeout(mut self, t: Duration) -> Self {
        self.read_timeout = t;
        self
    }

    /// The address.
    pub fn addr(&self) -> &ClamdAddr {
        &self.addr
    }

    fn err(&self, message: impl Into<String>) -> ScanError {
        ScanError { addr: self.addr.to_string(), message: message.into() }
    }

    fn connect(&self) -> Result<Box<dyn Conn>, ScanError> {
        match &self.addr {
            ClamdAddr::Unix(p) => {
                let s =
                    UnixStream::connect(p).map_err(|e| self.err(format!("cannot connect: {e}")))?;
                s.set_read_timeout(Some(self.read_timeout)).map_err(|e| self.err(e.to_string()))?;
                s.set_write_timeout(Some(self.read_timeout))
                    .map_err(|e| self.err(e.to_string()))?;
                Ok(Box::new(s))
            }
            ClamdAddr::Tcp(a) => {
                let addr = a
                    .to_socket_addrs()
                    .map_err(|e| self.err(format!("bad address: {e}")))?
                    .next()
                    .ok_or_else(|| self.err("address resolves to nothing"))?;
                let s = TcpStream::connect_timeout(&addr, self.connect_timeout)
                    .map_err(|e| self.err(format!("cannot connect: {e}")))?;
                s.set_read_timeout(Some(self.read_timeout)).map_err(|e| self.err(e.to_string()))?;
                s.set_write_timeout(Some(self.read_timeout))
                    .map_err(|e| self.err(e.to_string()))?;
                Ok(Box::new(s))
            }
        }
    }

    fn command(&self, cmd: &str) -> Result<String, ScanError> {
        let mut c = self.connect()?;
        c.write_all(format!("z{cmd}\0").as_bytes()).map_err(|e| self.err(format!("{cmd}: {e}")))?;
        read_reply(&mut c).map_err(|e| self.err(format!("{cmd}: no reply: {e}")))
    }

    /// PING; Ok when clamd answers PONG.
    pub fn ping(&self) -> Result<(), ScanError> {
        match self.command("PING")?.as_str() {
            "PONG" => Ok(()),
            other => Err(self.err(format!("PING answered {other:?}"))),
        }
    }

    /// The VERSION reply verbatim (engine, and signature version and date when clamd has an
    /// official database).
    pub fn version(&self) -> Result<String, ScanError> {
        self.command("VERSION")
    }

    /// Streams `payload` (of `len` bytes) to clamd and returns the verdict.
    pub fn scan(&self, mut payload: impl Read, len: u64) -> Result<ScanResult, ScanError> {
        if len > CLAMD_MAX_SCANNABLE {
            return Ok(ScanResult::NotScanned(format!(
                "payload of {len} bytes exceeds the {CLAMD_MAX_SCANNABLE} bytes clamd can scan"
            )));
        }
        let mut c = self.connect()?;
        c.write_all(b"zINSTREAM\0").map_err(|e| self.err(format!("INSTREAM: {e}")))?;
        let mut buf = vec![0u8; self.chunk];
        let mut refused = false;
        loop {
            let n = match payload.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.err(format!("reading the payload to scan: {e}"))),
            };
            let mut frame = Vec::with_capacity(4 + n);
            frame.extend_from_slice(&(n as u32).to_be_bytes());
            frame.extend_from_slice(&buf[..n]);
            if c.write_all(&frame).is_err() {
                // clamd closes the stream when it refuses it (size limit): read why below.
                refused = true;
                break;
            }
        }
        if !refused && c.write_all(&0u32.to_be_bytes()).is_err() {
            refused = true;
        }
        let reply = match read_reply(&mut c) {
            Ok(r) => r,
            Err(e) if refused => {
                return Err(self.err(format!("stream refused and no reason given: {e}")));
            }
            Err(e) => return Err(self.err(format!("no verdict: {e}"))),
        };
        Ok(parse_verdict(&reply))
    }
}

fn read_reply(c: &mut dyn Conn) -> io::Result<String> {
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

/// `stream: OK`, `stream: NAME FOUND`, `INSTREAM size limit exceeded. ERROR`, ...
pub fn parse_verdict(reply: &str) -> ScanResult {
    let body = reply.strip_prefix("stream:").map(str::trim).unwrap_or(reply);
    if body == "OK" {
        ScanResult::Clean
    } else if let Some(sig) = body.strip_suffix(" FOUND") {
        // With AlertExceedsMax, clamd reports limits as a heuristic "virus": not a virus,
        // the payload was simply not scanned in full.
        if sig.starts_with("Heuristics.Limits.Exceeded") {
            ScanResult::NotScanned(format!("clamd limit reached ({sig})"))
        } else {
            ScanResult::Infected(sig.to_string())
        }
    } else {
        ScanResult::NotScanned(format!("clamd: {body}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_and_addresses() {
        assert_eq!(parse_verdict("stream: OK"), ScanResult::Clean);
        assert_eq!(
            parse_verdict("stream: Eicar-Signature FOUND"),
            ScanResult::Infected("Eicar-Signature".into())
        );
        assert!(matches!(
            parse_verdict("stream: Heuristics.Limits.Exceeded.MaxFileSize FOUND"),
            ScanResult::NotScanned(_)
        ));
        assert!(
            matches!(parse_verdict("INSTREAM size limit exceeded. ERROR"), ScanResult::NotScanned(r) if r.contains("size limit"))
        );
        assert_eq!("unix:/tmp/s".parse::<ClamdAddr>().unwrap(), ClamdAddr::Unix("/tmp/s".into()));
        assert_eq!(
            "tcp:127.0.0.1:3311".parse::<ClamdAddr>().unwrap(),
            ClamdAddr::Tcp("127.0.0.1:3311".into())
        );
        assert!("127.0.0.1:3311".parse::<ClamdAddr>().is_err());
    }

    #[test]
    fn an_unreachable_daemon_is_an_error() {
        let c = Clamd::new(ClamdAddr::Unix("/nonexistent/clamd.sock".into()));
        assert!(c.ping().is_err());
    }
}
