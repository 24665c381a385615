//! The virus check as a [`Stage`] of the capture pipeline.

use std::collections::VecDeque;
use std::sync::Arc;

use super::batching::HELD_PAYLOAD;
use super::{Digest, PendingVerdicts, ScanEngine, ScanResult};
use crate::stages::{Route, ScanFinding, Stage, StageError, StagedItem};

/// Held payloads of a batch go to the engine together (in parallel, identical ones once);
/// larger ones are streamed from their source one by one. An infected capture is routed to
/// the viral container; one that could not be scanned stays in content with a finding.
pub(crate) struct ScanStage {
    engine: Arc<ScanEngine>,
    /// The held payloads of the batches being scanned, and their verdicts to come, oldest
    /// first.
    running: VecDeque<(Arc<Held>, PendingVerdicts)>,
}

/// Payloads held for the scan, with their digests when known.
type Held = Vec<(Option<Digest>, Vec<u8>)>;

impl ScanStage {
    /// A stage scanning with `engine`.
    pub(crate) fn new(engine: Arc<ScanEngine>) -> Self {
        ScanStage { engine, running: VecDeque::new() }
    }
}

impl Stage for ScanStage {
    /// Sends the batch's held payloads to the engine's threads, which scan them while the
    /// pipeline goes on (the sink compresses the batch).
    fn run(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError> {
        let held: Held =
            batch.iter_mut().map(|s| (s.digest, s.held.take().unwrap_or_default())).collect();
        let held = Arc::new(held);
        let pending = self.engine.start(Arc::clone(&held));
        self.running.push_back((held, pending));
        Ok(())
    }

    fn background(&self) -> bool {
        true
    }

    /// Takes the verdicts (and the held payloads back), scans what was too large to hold, and
    /// routes and notes what was found.
    fn finish(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError> {
        let Some((held, pending)) = self.running.pop_front() else { return Ok(()) };
        // A failure on one payload names its item (an ARC record by its offset, a record by
        // its id, a capture by its file).
        let verdicts = self.engine.wait(pending).map_err(|e| match e.item {
            Some(i) => match batch.get(i).map(|s| s.item.origin()).filter(|o| !o.is_empty()) {
                Some(origin) => StageError::ScanOf { origin, source: e.error },
                None => StageError::Scan(e.error),
            },
            None => StageError::Scan(e.error),
        })?;
        let held = self.engine.take_back(held)?;
        for ((s, (_, bytes)), verdict) in batch.iter_mut().zip(held).zip(verdicts) {
            let len = s.item.payload_len();
            if len > 0 && bytes.is_empty() {
                s.held = None;
            } else {
                s.held = Some(bytes);
            }
            let verdict = match verdict {
                Some(v) => Some(v),
                // Too large to hold: streamed from the source, when it can be read on its own.
                None if len > 0 && s.held.is_none() => {
                    let io = |source| StageError::Io { path: s.item.origin(), source };
                    match s.item.open_payload().map_err(io)? {
                        Some(payload) => {
                            Some(self.engine.scan_one(s.digest.as_ref(), payload, len).map_err(
                                |source| StageError::ScanOf { origin: s.item.origin(), source },
                            )?)
                        }
                        None => Some(ScanResult::NotScanned(super::Unscanned::SharedMember {
                            held: HELD_PAYLOAD,
                        })),
                    }
                }
                None => None,
            };
            match verdict {
                Some(ScanResult::Infected(sig)) => {
                    s.route = Route::Viral;
                    s.findings.push(ScanFinding::Infected(sig));
                }
                Some(ScanResult::NotScanned(why)) => s.findings.push(ScanFinding::NotScanned(why)),
                Some(ScanResult::Clean) | None => {}
            }
        }
        Ok(())
    }
}
