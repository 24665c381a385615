//! Test hooks: points where a run fails on purpose, named in the environment variable
//! `WEBAIP_FAIL_AT` (comma-separated), so that tests can show a failure there is handled and
//! the next run recovers. Read only in a build with the `test-hooks` feature: a shipped binary
//! never fails on purpose.
//!
//! The points: `between-renames` aborts the process (as a kill would) after an old package
//! has been moved aside and before it is removed (or, in the two-step fallback, before the
//! new one is moved in), and `no-exchange` behaves as if the file system had no
//! `RENAME_EXCHANGE` (`package::staging`, and an OCFL folder root's commit of a new version); `before-commit` aborts once everything is written,
//! before the rename (`ingest`); `identify` makes the identification of every batch of a
//! migration after the first fail, as an unreadable payload would (`migrate::ahead`);
//! `check-after-batch` aborts a `store check` run once its first batch is committed, and
//! `check-batch-of-one` makes its batches one object each (`store::fixity`);
//! `migrate-after-commit` aborts `store migrate` once it has committed its first object on one
//! replica, `migrate-after-copies` once a package's keys are copied into a bucket and
//! verified (before any commit), and `migrate-after-delete` once it has deleted the first old
//! key of a package from a bucket, and `migrate-no-server-copy` makes it take every bucket's
//! server-side copy for refused, so each key is copied through the machine, and
//! `migrate-spoil-copy` overwrites the server-side copy of a package's `METS.xml` with other
//! bytes, as a faulty server would (`store::ocfl::migrate`); `ocfl-before-commit` aborts an
//! OCFL commit once the version's files are written (on a bucket root: before its root inventory), and
//! `ocfl-between-inventory-and-sidecar` between a bucket root's root inventory and its
//! sidecar, `bucket-upload` fails every upload of a version's content files to a bucket
//! root, as an unwritable bucket would, and `bucket-mid-quarantine` aborts a move of files
//! out of a bucket into the local quarantine once its first three deletes are done (for a
//! damaged object `store migrate` sets aside: the root sidecar, the root inventory and a
//! first content file) (`store::ocfl::bucket`).
//!
//! `WEBAIP_PAUSE_AT=POINT:FILE` holds a run at a pause point: it makes FILE, then waits until
//! FILE is gone (at most two minutes), so a test can start another process meanwhile. The
//! points: `put-audited` (a webaip-layout `store put`, its package audited, nothing written)
//! and `migrate-locked` (`store migrate`, its lock taken, nothing moved).
//!
//! `WEBAIP_FAIL_OPEN=FRAGMENT` makes every opening of a file whose path contains FRAGMENT
//! fail as on a machine out of file descriptors (`EMFILE`), at the one place files are
//! opened (`layout`): a real descriptor limit cannot pick which file it stops.
//!
//! Beside the named points, `WEBAIP_KILL_AT_WRITE=N` kills the process (SIGKILL) at the Nth
//! write, sync or rename of an OCFL store run (`write_point`), and `WEBAIP_COUNT_WRITES`
//! names a file that counts them.

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

/// The environment variable naming a path fragment whose files cannot be opened.
#[cfg(feature = "test-hooks")]
const FAIL_OPEN_ENV: &str = "WEBAIP_FAIL_OPEN";

/// True when opening `path` is to fail as on a machine out of file descriptors.
#[cfg(feature = "test-hooks")]
pub(crate) fn open_fails(path: &std::path::Path) -> bool {
    let fragment = std::env::var_os(FAIL_OPEN_ENV).unwrap_or_default();
    let fragment = fragment.as_encoded_bytes();
    !fragment.is_empty()
        && path.as_os_str().as_encoded_bytes().windows(fragment.len()).any(|w| w == fragment)
}

/// Without the `test-hooks` feature every opening is tried.
#[cfg(not(feature = "test-hooks"))]
pub(crate) fn open_fails(_path: &std::path::Path) -> bool {
    false
}

/// The environment variable naming the store write point (1-based) at which the process
/// sends itself SIGKILL (`store::ocfl`'s stage and commit writes, syncs and renames).
#[cfg(feature = "test-hooks")]
const KILL_AT_ENV: &str = "WEBAIP_KILL_AT_WRITE";

/// The environment variable naming a file that gets one byte per store write point reached,
/// so that a test learns how many a run has before drawing the points to kill it at.
#[cfg(feature = "test-hooks")]
const COUNT_ENV: &str = "WEBAIP_COUNT_WRITES";

/// A write, sync or rename of the OCFL store is about to happen: counted, and the process
/// killed (SIGKILL, nothing flushed or cleaned up) when it is the one `WEBAIP_KILL_AT_WRITE`
/// names. Lets a test kill a run at any of its write points, reproducibly.
#[cfg(feature = "test-hooks")]
pub(crate) fn write_point() {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, OnceLock};
    static REACHED: AtomicU64 = AtomicU64::new(0);
    static KILL_AT: OnceLock<Option<u64>> = OnceLock::new();
    static COUNT: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    let n = REACHED.fetch_add(1, Ordering::SeqCst) + 1;
    let count = COUNT.get_or_init(|| {
        let path = std::env::var_os(COUNT_ENV)?;
        let f = std::fs::OpenOptions::new().create(true).append(true).open(path).ok()?;
        Some(Mutex::new(f))
    });
    if let Some(f) = count {
        let _ = f.lock().unwrap_or_else(|p| p.into_inner()).write_all(b".");
    }
    let kill_at = KILL_AT.get_or_init(|| std::env::var(KILL_AT_ENV).ok()?.trim().parse().ok());
    if *kill_at == Some(n) {
        // SAFETY: kill(2) on our own pid with a valid signal number has no memory effects.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// Without the `test-hooks` feature no write point is counted.
#[cfg(not(feature = "test-hooks"))]
#[inline]
pub(crate) fn write_point() {}

/// The environment variable naming a pause point and its file (`POINT:FILE`).
#[cfg(feature = "test-hooks")]
const PAUSE_AT_ENV: &str = "WEBAIP_PAUSE_AT";

/// Holds the run at `point` when `WEBAIP_PAUSE_AT` names it: its file is made, then waited
/// for to go (at most two minutes, so a failed test never leaves a run hanging).
#[cfg(feature = "test-hooks")]
pub(crate) fn pause_at(point: &str) {
    let Ok(v) = std::env::var(PAUSE_AT_ENV) else { return };
    let Some((p, file)) = v.split_once(':') else { return };
    if p != point || std::fs::write(file, b"paused").is_err() {
        return;
    }
    let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::path::Path::new(file).exists() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Without the `test-hooks` feature no run pauses.
#[cfg(not(feature = "test-hooks"))]
#[inline]
pub(crate) fn pause_at(_point: &str) {}
