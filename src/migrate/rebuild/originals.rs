//! The payloads revisits made from ARC bytes leave out (`migrate::revisit`), taken from the
//! records they refer to in the packages given (`unmigrate --with`, `audit --rebuild-arcs
//! --with`, and the package itself for `--dedup-within`) by `undedup`'s one helper
//! ([`Originals::verified_payload`]): found by record id, checked against the revisit's length
//! and `WARC-Payload-Digest` while copied to a temporary file, then given back from there in
//! chunks.

use std::path::PathBuf;

use super::stream::ArcPiece;
use super::{MissingOriginal, OtherPayload, RebuildError};
use crate::stages::undedup::{
    Originals, PayloadFault, StatedPayload, UndedupError, VerifiedPayload,
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
    /// Payloads looked for in `sources` (package folders), copied to temporary files under
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
        let missing = || {
            RebuildError::NoOriginal(Box::new(MissingOriginal {
                container: p.container.clone(),
                offset: p.container_offset,
                record: r.record_id.clone(),
                refers: r
                    .refers_to
                    .clone()
                    .unwrap_or_else(|| "no record (no WARC-Refers-To)".into()),
                package: r.package.clone(),
            }))
        };
        let Some(refers) = &r.refers_to else { return Err(missing()) };
        let stated = StatedPayload {
            refers,
            digest: &r.digest,
            len: Some(r.len),
            package: r.package.as_deref(),
            container: r.container.as_deref(),
        };
        match table.verified_payload(&stated) {
            Ok(payload) => Ok(Some(payload)),
            Err(PayloadFault::Missing) => Err(missing()),
            Err(PayloadFault::Differs { holder, package, found, found_len }) => {
                Err(RebuildError::OriginalDiffers(Box::new(OtherPayload {
                    container: p.container.clone(),
                    offset: p.container_offset,
                    record: r.record_id.clone(),
                    refers: refers.clone(),
                    stated: format!("{} ({} bytes)", r.digest, r.len),
                    holder,
                    package,
                    found: format!("{found} ({found_len} bytes)"),
                })))
            }
            Err(PayloadFault::Failed(e)) => Err(boxed(e)),
        }
    }
}

/// A fault of the packages the payloads are taken from (or of the temporary copy).
pub(super) fn boxed(e: UndedupError) -> RebuildError {
    RebuildError::Originals(Box::new(e))
}
