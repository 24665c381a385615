//! Mutation fuzzing of the readers, run in CI for a bounded time (`harness`), and memory bounds
//! checked in child processes.

pub(crate) mod child;
mod copy_memory;
mod harness;
mod mets_memory;
mod mirror_scale;
mod pages_memory;
mod rewrite_memory;
