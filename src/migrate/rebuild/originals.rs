//! The payloads revisits made from ARC bytes leave out (`migrate::revisit`), taken from the
//! records they refer to in the packages given (`unmigrate --with`, `audit --rebuild-arcs
//! --with`, and the package itself for `--dedup-within`), found by record id as `undedup`
//! finds them, and checked against the revisit's length and `WARC-Payload-Digest` before a
//! byte of them is given back.

use std::path::PathBuf;

use sha1::{Digest, Sha1};

use super::stream::{ArcPiece, RevisitOf};
use super::{MissingOriginal, OtherPayload, RebuildError};
use crate::index::digests::DigestKey;
use crate::stages::undedup::UndedupError;
use crate::stages::undedup::{Originals, payload_at};

/// The packages revisits' payloads are looked for in, their records indexed on first use.
pub(super) struct StoredPayloads {
    sources: Vec<PathBuf>,
    table: Option<Originals>,
}

impl StoredPayloads {
    /// Payloads looked for in `sources` (package folders).
    pub(super) fn new(sources: Vec<PathBuf>) -> StoredPayloads {
        StoredPayloads { sources, table: None }
    }

    /// The payload the revisit `p` leaves out, checked; `None` when `p` is no revisit.
    pub(super) fn payload_of(&mut self, p: &ArcPiece) -> Result<Option<Vec<u8>>, RebuildError> {
        let Some(r) = &p.revisit else { return Ok(None) };
        if self.table.is_none() {
            self.table = Some(Originals::read(&self.sources).map_err(boxed)?);
        }
        let table = self.table.as_ref().ok_or(RebuildError::Internal("the originals' table"))?;
        let missing = || {
            RebuildError::NoOriginal(Box::new(MissingOriginal {
                container: p.container.clone(),
                offset: p.container_offset,
                record: r.record_id.clone(),
                refers: r
                    .refers_to
                    .clone()
                    .unwrap_or_else(|| "no record (no WARC-Refers-To)".into()),
                package: r.package.clone().unwrap_or_else(|| "this one".into()),
            }))
        };
        let Some(id) = &r.refers_to else { return Err(missing()) };
        let Some(place) = table.find(id).map_err(boxed)? else { return Err(missing()) };
        let payload = payload_at(&place).map_err(boxed)?;
        check(p, r, &payload, || place.path())?;
        Ok(Some(payload))
    }
}

/// The payload found is the one the revisit states: its length and SHA-1.
fn check(
    p: &ArcPiece,
    r: &RevisitOf,
    payload: &[u8],
    holder: impl FnOnce() -> PathBuf,
) -> Result<(), RebuildError> {
    let found = DigestKey::new(crate::index::digests::Algorithm::Sha1, &Sha1::digest(payload));
    let stated = DigestKey::parse(&r.digest);
    if stated.is_some() && found == stated && payload.len() as u64 == r.len {
        return Ok(());
    }
    Err(RebuildError::OriginalDiffers(Box::new(OtherPayload {
        container: p.container.clone(),
        offset: p.container_offset,
        record: r.record_id.clone(),
        refers: r.refers_to.clone().unwrap_or_default(),
        stated: format!("{} ({} bytes)", r.digest, r.len),
        holder: holder(),
        found: format!(
            "{} ({} bytes)",
            found.map(|k| k.to_warc()).unwrap_or_default(),
            payload.len()
        ),
    })))
}

fn boxed(e: UndedupError) -> RebuildError {
    RebuildError::Originals(Box::new(e))
}
