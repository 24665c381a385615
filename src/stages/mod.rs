//! Stages that look at or change captures on their way into a package (ARCHITECTURE.md).
//!
//! A [`Stage`] sees captures in batches, in order, before anything of them is written: it may
//! route a capture (to the content or the viral container) and note what it found, which the
//! pipeline turns into PREMIS events. The capture pipeline (`package::captures`) runs its
//! stages on every batch; [`scan::ScanStage`] is the virus check. The Heritrix path scans
//! through the same engine ([`scan::ScanEngine`]) inside its own batching (the migration's
//! compression batches, the copy's queue), and PANDAS link rewriting ([`rewrite`]) is called
//! by the PANDAS packager: neither goes through this trait yet (README, design section).

pub mod rewrite;
pub mod scan;

use crate::sources::capture::Capture;

/// Where a capture goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Route {
    /// The content container.
    #[default]
    Content,
    /// The viral container: kept as harvested, never served.
    Viral,
}

/// What a stage found about one capture, for its PREMIS event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A virus, by the signature's name.
    Infected(String),
    /// The payload could not be checked, and why.
    NotScanned(String),
}

/// A capture between its source and its container.
#[derive(Debug)]
pub struct Staged {
    /// The capture as the source gave it.
    pub capture: Capture,
    /// Its payload, when it is small enough to hold (read once: hashed, scanned and written
    /// from here); larger ones are streamed from the source for each pass.
    pub held: Option<Vec<u8>>,
    /// The payload's SHA-512.
    pub digest: Option<[u8; 64]>,
    /// Where it goes.
    pub route: Route,
    /// What the stages found.
    pub findings: Vec<Finding>,
}

/// Why a stage could not do its work (the run stops).
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// clamd failed.
    #[error(transparent)]
    Scan(#[from] scan::ScanError),
    /// A payload could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file the payload is read from.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// One stage of the capture pipeline.
pub trait Stage {
    /// Looks at a batch of captures, in order; may route them and note findings.
    fn run(&mut self, batch: &mut [Staged]) -> Result<(), StageError>;
}
