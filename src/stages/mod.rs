//! Stages that look at or change captures on their way into a package (ARCHITECTURE.md).
//!
//! A `Stage` sees captures in batches, in order, before anything of them is written: it may
//! route a capture (to the content or the viral container), put a new payload in place of the
//! harvested one (which then goes to the original container) and note what it found, which the
//! pipeline turns into PREMIS events. The capture pipeline (`package::captures`) runs its
//! stages on every batch: `scan::ScanStage` is the virus check, `rewrite::RewriteStage`
//! the link rewriting of mirrors. The Heritrix path scans through the same engine
//! ([`scan::ScanEngine`]) inside its own batching (the migration's compression batches, the
//! copy's queue): it does not go through this trait yet (README, design section).

pub mod rewrite;
pub mod scan;

use crate::sources::capture::{Capture, Payload};

/// Where a capture goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Route {
    /// The content container.
    #[default]
    Content,
    /// The viral container: kept as harvested, never served.
    Viral,
}

/// What a stage found about one capture, for its PREMIS event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    /// A virus, by the signature's name.
    Infected(String),
    /// The payload could not be checked, and why.
    NotScanned(scan::Unscanned),
}

/// A capture between its source and its container.
#[derive(Debug)]
pub(crate) struct Staged {
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
    /// The payload a stage put in place of the harvested one, which is kept too.
    pub replacement: Option<Replacement>,
}

impl Staged {
    /// A capture as it enters the stages: routed to content, nothing found, nothing replaced.
    pub(crate) fn new(capture: Capture, held: Option<Vec<u8>>, digest: Option<[u8; 64]>) -> Staged {
        Staged {
            capture,
            held,
            digest,
            route: Route::Content,
            findings: Vec::new(),
            replacement: None,
        }
    }
}

/// A payload put in place of the harvested one (links rewritten). The content container gets
/// it with a transformation event; the harvested payload goes, as harvested, to the original
/// container, and the two are related.
#[derive(Debug)]
pub(crate) struct Replacement {
    /// The new payload: bytes, or a temporary file's segment.
    pub payload: Payload,
    /// What was done, for the transformation event (`HTML/CSS link rewriting; ...`).
    pub detail: String,
    /// The temporary file holding the payload, removed when the replacement is dropped: held
    /// for that drop, never read.
    #[allow(dead_code)]
    pub temp: Option<tempfile::TempPath>,
}

/// Why a stage could not do its work (the run stops).
#[derive(Debug, thiserror::Error)]
pub(crate) enum StageError {
    /// clamd failed.
    #[error(transparent)]
    Scan(#[from] scan::ScanError),
    /// A payload could not be read, or a stage's temporary file written.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The file the payload is read from.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The link map of a mirror could not be read while rewriting a page's links.
    #[error("{file}: links not rewritten: {source}")]
    LinkMap {
        /// The page.
        file: String,
        /// The cause.
        #[source]
        source: crate::sources::mirror_files::ScratchError,
    },
}

/// One stage of the capture pipeline.
pub(crate) trait Stage {
    /// Looks at a batch of captures, in order; may route them and note findings.
    fn run(&mut self, batch: &mut [Staged]) -> Result<(), StageError>;
}
