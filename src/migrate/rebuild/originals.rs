//! The payloads revisits made from ARC bytes leave out (`migrate::revisit`), taken from the
//! records they refer to in the packages given (`unmigrate --with`, `audit --rebuild-arcs
//! --with`, and the package itself for `--dedup-within`) by `undedup`'s one helper
//! ([`Originals::verified_payload`]): found by record id, checked against the revisit's length
//! and `WARC-Payload-Digest` while copied to a temporary file, then given back from there in
//! chunks.

use std::path::{Path, PathBuf};

use super::RebuildError;
use super::stream::ArcPiece;
use crate::stages::undedup::{
    Originals, PayloadFault, Revisit, StatedPayload, UndedupError, VerifiedPayload,
};

/// The packages revisits' payloads are looked for in, for a whole run (every container of
/// every package rebuilt): each of their containers is read at most once, when a payload is
/// first looked for in it.
pub struct StoredPayloads {
    sources: Vec<PathBuf>,
    scratch: Option<PathBuf>,
    table: Option<Originals>,
}

impl StoredPayloads {
    /// Payloads looked for in `sources` (package folders, or WARC files given alone), copied to temporary files under
    /// `scratch` (`None`: the system's temporary folder).
    pub fn new(sources: Vec<PathBuf>, scratch: Option<PathBuf>) -> StoredPayloads {
        StoredPayloads { sources, scratch, table: None }
    }

    /// The payload the revisit `p` leaves out, checked; `None` when `p` is no revisit.
    pub(super) fn payload_of(
        &mut self,
        p: &ArcPiece,
    ) -> Result<Option<VerifiedPayload>, RebuildError> {
        let Some(r) = &p.revisit else { return Ok(None) };
        if self.table.is_none() {
            let table = Originals::new(&self.sources, self.scratch.clone()).map_err(boxed)?;
            self.table = Some(table);
        }
        let table = self.table.as_mut().ok_or(RebuildError::Internal("the originals' table"))?;
        let revisit =
            Revisit { container: &p.container, offset: p.container_offset, record: &r.record_id };
        let stated = StatedPayload {
            refers: r.refers_to.as_deref().unwrap_or(""),
            digest: &r.digest,
            len: Some(r.len),
            package: r.package.as_deref(),
            container: r.container.as_deref(),
            from: Some(Path::new(&p.container)),
        };
        if r.refers_to.is_none() {
            return Err(RebuildError::NoOriginal(Box::new(revisit.missing(&stated))));
        }
        match table.verified_payload(&stated) {
            Ok(payload) => Ok(Some(payload)),
            Err(PayloadFault::Missing) => {
                Err(RebuildError::NoOriginal(Box::new(revisit.missing(&stated))))
            }
            Err(PayloadFault::Differs(others)) => {
                Err(RebuildError::OriginalDiffers(Box::new(revisit.other_payload(&stated, others))))
            }
            Err(PayloadFault::Failed(e)) => Err(boxed(e)),
        }
    }
}

/// A fault of the packages the payloads are taken from (or of the temporary copy).
pub(super) fn boxed(e: UndedupError) -> RebuildError {
    RebuildError::Originals(Box::new(e))
}
