//! [`run_batch`] and [`batch_status`]: many packages from one manifest, resumable, and what
//! their journals say.

use std::path::{Path, PathBuf};

pub use crate::batch::deliver::DeliverOptions as BatchDelivery;
pub use crate::batch::export::{
    EarkExport as BatchEarkExport, EarkForm, ExportOptions as BatchExports,
};
pub use crate::batch::journal::{
    Entry as BatchEntry, ItemState as BatchItemState, JournalError as BatchJournalError,
    default_path as batch_journal_path,
};
pub use crate::batch::manifest::Item as BatchItem;
pub use crate::batch::resources::{
    DEFAULT_MIN_FREE as BATCH_DEFAULT_MIN_FREE, ITEM_MEMORY as BATCH_ITEM_MEMORY,
    Resources as BatchResources, SizeError, default_memory as batch_default_memory, parse_size,
};
pub use crate::batch::shard::{Shard as BatchShard, ShardError};
pub use crate::batch::{
    BatchError, BatchOptions, BatchOutcome, Counts as BatchCounts, Event as BatchEvent,
    JournalCounts, Progress as BatchProgress, Status as BatchStatus,
};

impl BatchOptions {
    /// A run of the whole manifest into `out`, every package made with `package` (its `out`
    /// is each item's own): the journal `out/batch-journal.sqlite`, one item per core, the
    /// default free space and memory budget, packages kept in `out` and delivered nowhere
    /// else.
    pub fn new(out: PathBuf, package: crate::package::PackageOptions) -> BatchOptions {
        BatchOptions {
            journal: batch_journal_path(&out, None),
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            retry_failed: false,
            shard: None,
            package,
            resources: BatchResources::default(),
            deliver: BatchDelivery { keep: true, ..BatchDelivery::default() },
            out,
        }
    }
}

/// Packages every item of the manifest at `manifest` (a CSV of `source[,metadata[,options]]`
/// lines, or a folder whose subdirectories and ARC/WARC/`.zip` files are the items) as
/// `options` say, resuming where an earlier run with the same journal stopped: items the
/// journal records done are skipped, failed ones too unless `options.retry_failed`.
///
/// Each package is built below `OUT/.batch-work/` and moved to `OUT/NAME` only once the
/// journal records it done; with `options.deliver` it is also made an AIP, put into the
/// store and exported. `progress` hears of the plan, each item finished, and pauses for
/// disk space (from several threads).
///
/// Returns what the run did and where its share of the manifest stands
/// ([`BatchOutcome::complete`] says whether every item is done). One item's failure is
/// recorded in the journal and in the outcome, not returned; a [`BatchError`] says the run
/// itself could not go on (the manifest or journal unreadable, the journal locked by another
/// run, the output folder or the store unusable).
pub fn run_batch(
    manifest: &Path,
    options: &BatchOptions,
    progress: BatchProgress<'_>,
) -> Result<BatchOutcome, BatchError> {
    crate::batch::run(manifest, options, progress)
}

/// Summarises the journals at `journals` (of one run, or of the shards of one manifest):
/// each one's counts by state, and the total with every item counted once (done when one
/// journal has it done). Journals are only read; a [`BatchJournalError`] names one that is
/// absent or is no batch journal.
pub fn batch_status(journals: &[PathBuf]) -> Result<BatchStatus, BatchJournalError> {
    crate::batch::status(journals)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run made with `new` keeps its journal and its packages in `out` and delivers them
    /// nowhere else.
    #[test]
    fn new_options_keep_everything_in_out() {
        let o = BatchOptions::new("out".into(), crate::package::PackageOptions::default());
        assert_eq!(o.journal, Path::new("out/batch-journal.sqlite"));
        assert!(o.deliver.keep && o.deliver.store.is_none() && !o.deliver.ingest);
        assert!(o.jobs >= 1 && o.shard.is_none() && !o.retry_failed);
        assert_eq!(o.resources.min_free, BATCH_DEFAULT_MIN_FREE);
    }
}
