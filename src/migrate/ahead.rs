//! Identification ahead of the writer: a thread of its own between the ARC reader thread and
//! the writer, which identifies each batch while the writer compresses and writes the batch
//! before it.
//!
//! In the writer's pipeline identification would run on every batch before it is compressed,
//! on the critical path of a run whose second core is otherwise half idle (docs/benchmarks.md).
//! Here it takes the reader's messages in order, identifies the records of each and passes
//! them on, staged and in the same order, with their results attached; anything else (the
//! reader's end, its failure) goes on as it came. The results travel with their records, so no
//! later step has to match them up. Each channel holds no batch of its own (a rendezvous):
//! this thread's batch takes the place of the one the reader's channel held, so a migration
//! still holds three batches at once.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender};

use super::{MigrateError, Msg, staged};
use crate::formats::arc_to_warc::MappedRecord;
use crate::stages::identify::{Identifier, IdentifyStage};
use crate::stages::{Item, StageError, StagedItem};

/// Starts identification ahead of the writer in `scope`: the receiver the writer takes the
/// reader's messages from (`from_reader`), each batch identified.
pub(super) fn identify_ahead<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    identifier: Identifier,
    arc: &Path,
    from_reader: Receiver<Msg>,
) -> Receiver<Msg> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(0);
    let ahead = Ahead { stage: IdentifyStage::new(identifier), arc: arc.to_path_buf() };
    scope.spawn(move || ahead.run(&from_reader, &tx));
    rx
}

/// The thread's state: the stage that identifies and counts, and the ARC in errors.
struct Ahead {
    stage: IdentifyStage,
    arc: PathBuf,
}

impl Ahead {
    /// Passes on every message of the reader, batches identified, until the reader's last
    /// one, or until the writer is gone (it stopped: nothing more is wanted). A failure of
    /// identification is passed on in the place of its batch, and ends the thread: the
    /// reader, finding no receiver, ends too.
    fn run(mut self, from_reader: &Receiver<Msg>, to_writer: &SyncSender<Msg>) {
        while let Ok(msg) = from_reader.recv() {
            let last = matches!(msg, Msg::Done(_) | Msg::Failed(_));
            let msg = match msg {
                Msg::Batch(records) => self.identified(records),
                Msg::Large(record) => self.identified(vec![*record]),
                Msg::Done(mut end) => {
                    end.identified = std::mem::take(&mut self.stage.tally);
                    Msg::Done(end)
                }
                other => other,
            };
            let failed = matches!(msg, Msg::Failed(_));
            if to_writer.send(msg).is_err() || last || failed {
                return;
            }
        }
    }

    /// A batch of the reader's records staged and identified, on this thread alone (the
    /// worker pool's cores are compressing meanwhile): the batch, or why identification
    /// failed. No payload is held for the scan here, but only once the writer takes the
    /// batch: this one holds its records' blocks alone, as the reader's channel did.
    fn identified(&mut self, records: Vec<MappedRecord>) -> Msg {
        let mut batch: Vec<StagedItem> = records.into_iter().map(|r| staged(r, false)).collect();
        match hooked(self.stage.run_here(&mut batch), &batch) {
            Ok(()) => Msg::Staged(batch),
            Err(e) => Msg::Failed(self.failure(e, &batch)),
        }
    }

    /// What the writer is told when identification fails: the ARC, the record's offset in it
    /// (its gzip member's), what went wrong.
    fn failure(&self, e: StageError, batch: &[StagedItem]) -> MigrateError {
        let (offset, source) = match e {
            StageError::Io { path, source } => (offset_of(batch, &path), source),
            other => (None, std::io::Error::other(other.to_string())),
        };
        MigrateError::Identify { path: self.arc.clone(), offset: offset.unwrap_or(0), source }
    }
}

/// The offset in the ARC of the record of `batch` whose origin (`Item::origin`) is `origin`.
fn offset_of(batch: &[StagedItem], origin: &str) -> Option<u64> {
    batch.iter().find(|s| s.item.origin() == origin).and_then(|s| match &s.item {
        Item::Mapped(m) => Some(m.location.member.unwrap_or(m.location.offset)),
        _ => None,
    })
}

/// The test hook `identify` (`WEBAIP_FAIL_AT`, builds with the `test-hooks` feature): the
/// identification of every batch after the first fails, as a payload that cannot be read
/// would make it fail, so that tests see a failure mid-run stop it cleanly.
fn hooked(identified: Result<(), StageError>, batch: &[StagedItem]) -> Result<(), StageError> {
    static BATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if !crate::hooks::fail_at("identify") {
        return identified;
    }
    let seen = BATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let last = batch.last().map(|s| s.item.origin()).filter(|_| seen > 0);
    match last {
        Some(path) => {
            let source = std::io::Error::other("identification failed (test hook)");
            Err(StageError::Io { path, source })
        }
        None => identified,
    }
}
