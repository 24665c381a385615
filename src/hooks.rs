//! Test hooks: points where a run fails on purpose, named in the environment variable
//! `WEBAIP_FAIL_AT` (comma-separated), so that tests can show a failure there is handled and
//! the next run recovers. Read only in a build with the `test-hooks` feature: a shipped binary
//! never fails on purpose.
//!
//! The points: `between-renames` aborts the process (as a kill would) after an old package
//! has been moved aside and before it is removed (or, in the two-step fallback, before the
//! new one is moved in), and `no-exchange` behaves as if the file system had no
//! `RENAME_EXCHANGE` (`package::staging`); `before-commit` aborts once everything is written,
//! before the rename (`ingest`); `identify` makes the identification of every batch of a
//! migration after the first fail, as an unreadable payload would (`migrate::ahead`);
//! `check-after-batch` aborts a `store check` run once its first batch is committed, and
//! `check-batch-of-one` makes its batches one object each (`store::fixity`);
//! `migrate-after-commit` aborts `store migrate` once it has committed its first object on one
//! replica (`store::ocfl::migrate`).

/// The environment variable naming the points.
#[cfg(feature = "test-hooks")]
const FAIL_AT_ENV: &str = "WEBAIP_FAIL_AT";

/// True when the run is to fail at `point`.
#[cfg(feature = "test-hooks")]
pub(crate) fn fail_at(point: &str) -> bool {
    std::env::var(FAIL_AT_ENV).is_ok_and(|v| v.split(',').any(|p| p.trim() == point))
}

/// Without the `test-hooks` feature no failure point exists.
#[cfg(not(feature = "test-hooks"))]
pub(crate) fn fail_at(_point: &str) -> bool {
    false
}
