//! What a batch run tells its caller as it goes: the plan, each item finished, and pauses for
//! disk space.

use std::path::Path;

use super::journal::ItemState;
use super::manifest::Item;

/// One thing that happened in a batch run.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The work of this run, once the journal has said what is left.
    Planned {
        /// Items to package now.
        items: usize,
        /// Their sources' bytes.
        bytes: u64,
        /// Items packaged at once.
        in_flight: usize,
    },
    /// An item finished, done or failed.
    Finished {
        /// The item.
        item: &'a Item,
        /// Done or failed.
        state: ItemState,
        /// Its source's bytes.
        bytes: u64,
    },
    /// The output's file system has less free space than required: no new item starts.
    Paused {
        /// The output folder.
        dir: &'a Path,
        /// Bytes free.
        free: u64,
        /// Bytes required (`--min-free`).
        required: u64,
    },
    /// Free space is back: items start again.
    Resumed {
        /// Bytes free.
        free: u64,
    },
}

/// Hears of a run's events (from several worker threads).
pub type Progress<'a> = &'a (dyn Fn(Event<'_>) + Sync);
