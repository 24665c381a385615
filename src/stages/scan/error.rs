//! What can go wrong with clamd itself, as values a caller can match on: the daemon's address
//! and what failed, with the underlying I/O error as its source. A payload clamd could not scan
//! is not one of these: that is a verdict ([`super::ScanResult::NotScanned`]).

use std::io;
use std::time::Duration;

use super::ClamdAddr;

/// clamd cannot be used (unreachable, died, hung).
#[derive(Debug, thiserror::Error)]
#[error("clamd at {addr}: {failure}")]
pub struct ScanError {
    /// The daemon's address.
    pub addr: ClamdAddr,
    /// What happened.
    #[source]
    pub failure: ClamdFailure,
}

impl ScanError {
    /// Whether clamd was waited for in vain (our read timeout, or clamd's own `ReadTimeout`
    /// ending the session): a new connection would only wait as long again.
    pub fn timed_out(&self) -> bool {
        matches!(self.failure, ClamdFailure::Silent { .. } | ClamdFailure::SessionTimedOut { .. })
    }
}

/// What went wrong talking to clamd.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClamdFailure {
    /// The TCP address does not parse or cannot be resolved.
    #[error("bad address: {why}", why = crate::layout::describe_io(.0))]
    BadAddress(#[source] io::Error),
    /// The TCP address resolves to no socket address.
    #[error("address resolves to nothing")]
    Unresolved,
    /// The daemon is not listening (no socket, refused, unreachable).
    #[error("cannot connect: {why}", why = crate::layout::describe_io(.0))]
    Connect(#[source] io::Error),
    /// The connection's read or write timeout cannot be set.
    #[error("{why}", why = crate::layout::describe_io(.0))]
    Timeouts(#[source] io::Error),
    /// A command could not be sent.
    #[error("{command}: {why}", why = crate::layout::describe_io(source))]
    Send {
        /// The command (`PING`, `INSTREAM`, `IDSESSION`, `FILDES`...).
        command: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A command sent got no reply.
    #[error("{command}: no reply: {why}", why = crate::layout::describe_io(source))]
    NoReply {
        /// The command.
        command: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `PING` answered something other than `PONG`.
    #[error("PING answered {0:?}")]
    NotPong(String),
    /// The payload itself could not be read while streaming it to clamd.
    #[error("reading the payload to scan: {why}", why = crate::layout::describe_io(.0))]
    ReadPayload(#[source] io::Error),
    /// clamd closed the stream part-way (a size limit) and said nothing.
    #[error("stream refused and no reason given: {why}", why = crate::layout::describe_io(.0))]
    Refused(#[source] io::Error),
    /// The payload was sent and no verdict came.
    #[error("no verdict: {why}", why = crate::layout::describe_io(.0))]
    NoVerdict(#[source] io::Error),
    /// Sending the payload failed part-way, and no verdict came to say why.
    #[error("no verdict: {sending}; {why}", why = crate::layout::describe_io(source))]
    NoVerdictAfterSend {
        /// Why sending failed.
        sending: io::Error,
        /// Why reading the verdict failed.
        #[source]
        source: io::Error,
    },
    /// clamd said nothing within our read timeout (`--clamd-timeout`).
    #[error("no answer within {} s (--clamd-timeout)", waited.as_secs())]
    Silent {
        /// How long it was waited for.
        waited: Duration,
    },
    /// clamd's own `ReadTimeout` ended a session before its verdict (its reply quoted).
    #[error(
        "{reply:?}: clamd's ReadTimeout ended the session before a verdict \
         (set it at least as long as --clamd-timeout)"
    )]
    SessionTimedOut {
        /// clamd's reply.
        reply: String,
    },
    /// A session's reply does not carry the number of the command just sent.
    #[error("reply out of step with the session: {reply:?}")]
    OutOfStep {
        /// clamd's reply.
        reply: String,
    },
    /// clamd answered `FILDES` with an error (built without it, or confined): its reply.
    #[error("clamd: {0}")]
    DescriptorRefused(String),
    /// The engine's scanning threads cannot be started.
    #[error("cannot start the scanning threads: {0}")]
    Threads(#[source] rayon::ThreadPoolBuildError),
    /// A scanning thread still held a batch once its verdicts were in.
    #[error("the scanning thread kept a batch after its verdicts")]
    BatchKept,
    /// A scanning thread ended without sending its batch's verdicts.
    #[error("the scanning thread stopped without verdicts")]
    NoVerdicts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_before() {
        let addr = ClamdAddr::Unix("/run/clamd.sock".into());
        let silent = ScanError {
            addr: addr.clone(),
            failure: ClamdFailure::Silent { waited: Duration::from_secs(3) },
        };
        assert_eq!(
            silent.to_string(),
            "clamd at unix:/run/clamd.sock: no answer within 3 s (--clamd-timeout)"
        );
        assert!(silent.timed_out());
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        let connect = ScanError { addr, failure: ClamdFailure::Connect(refused) };
        assert!(connect.to_string().starts_with("clamd at unix:/run/clamd.sock: cannot connect: "));
        assert!(!connect.timed_out());
        // The I/O error stays reachable for a caller that prints the chain.
        let source = std::error::Error::source(&connect).and_then(|f| f.source());
        assert!(source.and_then(|s| s.downcast_ref::<io::Error>()).is_some());
    }
}
