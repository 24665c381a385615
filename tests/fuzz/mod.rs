//! Mutation fuzzing of the readers, run in CI for a bounded time, and memory bounds checked in
//! child processes.

mod child;
mod rewrite_memory;
