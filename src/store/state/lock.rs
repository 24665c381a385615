//! The store's locks beside the state database: `<state>.check-lock` (one check or repair
//! run at a time) and `<state>.migrate-lock` (`store migrate` holds it exclusive; a put,
//! remove or repair of the webaip layout holds it shared, so neither starts while the other
//! runs). Each is a `flock`, taken without waiting, that goes with its process: a killed run
//! leaves nothing to clean up. A link, FIFO or anything but a regular file at the lock's
//! path is refused (opened with `O_NOFOLLOW`, then checked).

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;

use crate::store::{StoreError, StoreRefusal};

/// Which lock beside the state database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateLock {
    /// `<state>.check-lock`: a check (or repair) run.
    Check,
    /// `<state>.migrate-lock`: `store migrate` (exclusive) against the webaip layout's
    /// writers (shared).
    Migrate,
}

impl StateLock {
    /// The suffix appended to the state database's file name.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            StateLock::Check => ".check-lock",
            StateLock::Migrate => ".migrate-lock",
        }
    }

    /// The lock's path beside the state database `db`.
    pub(crate) fn path(self, db: &Path) -> PathBuf {
        let mut name = db.as_os_str().to_owned();
        name.push(self.suffix());
        PathBuf::from(name)
    }
}

/// How a lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hold {
    /// With other shared holders (writers of the webaip layout).
    Shared,
    /// Alone.
    Exclusive,
}

/// The processes that hold a lock, as the kernel lists them (`/proc/locks`); empty where
/// that cannot be told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holders(pub Vec<u32>);

impl fmt::Display for Holders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [] => Ok(()),
            [one] => write!(f, ", held by process {one}"),
            many => {
                let pids: Vec<String> = many.iter().map(u32::to_string).collect();
                write!(f, ", held by processes {}", pids.join(", "))
            }
        }
    }
}

/// A lock taken: held until dropped.
#[derive(Debug)]
pub(crate) struct Held {
    _file: File,
}

/// Takes `lock` beside the state database `db` as `hold` says, without waiting. Refused
/// (naming the lock file and its holders where known) when another process holds it in a
/// way that excludes this one.
pub(crate) fn take(db: &Path, lock: StateLock, hold: Hold) -> Result<Held, StoreError> {
    let path = lock.path(db);
    let file = open(&path)?;
    match flock(&file, hold) {
        Ok(()) => Ok(Held { _file: file }),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(refusal(&file, path, lock, hold).into()),
        Err(e) => Err(StoreError::StateLock { path, source: e.into() }),
    }
}

fn flock(file: &File, hold: Hold) -> rustix::io::Result<()> {
    let op = match hold {
        Hold::Shared => FlockOperation::NonBlockingLockShared,
        Hold::Exclusive => FlockOperation::NonBlockingLockExclusive,
    };
    rustix::fs::flock(file, op)
}

/// Opens (making it if absent) the lock file: never through a link, and only a regular file.
fn open(path: &Path) -> Result<File, StoreError> {
    let failed = |source| StoreError::StateLock { path: path.to_path_buf(), source };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(failed)?;
    // A FIFO opened non-blocking for writing without a reader fails above (ENXIO); one with
    // a reader, or a device, is refused here.
    if !file.metadata().map_err(failed)?.is_file() {
        return Err(failed(std::io::Error::other("not a regular file")));
    }
    Ok(file)
}

/// Why the lock is not ours: who holds it, and in which way.
fn refusal(file: &File, lock: PathBuf, which: StateLock, hold: Hold) -> StoreRefusal {
    let holders = holders(file);
    match (which, hold) {
        (StateLock::Check, _) => StoreRefusal::CheckRunning { lock, holders },
        (StateLock::Migrate, Hold::Shared) => StoreRefusal::MigrateRunning { lock, holders },
        // Shared holders alone let a shared lock through: then no migrate holds it.
        (StateLock::Migrate, Hold::Exclusive) => match flock(file, Hold::Shared) {
            Ok(()) => {
                let _ = rustix::fs::flock(file, FlockOperation::Unlock);
                StoreRefusal::WritersRunning { lock, holders }
            }
            Err(_) => StoreRefusal::MigrateRunning { lock, holders },
        },
    }
}

/// The other processes holding a `flock` on `file`, from `/proc/locks` (Linux): lines such
/// as `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`, the device as major:minor in hex.
fn holders(file: &File) -> Holders {
    let Ok(meta) = file.metadata() else { return Holders::default() };
    let dev = meta.dev();
    let id = format!("{:02x}:{:02x}:{}", libc::major(dev), libc::minor(dev), meta.ino());
    let mut text = String::new();
    let read = File::open("/proc/locks").and_then(|f| f.take(1 << 20).read_to_string(&mut text));
    if read.is_err() {
        return Holders::default();
    }
    let me = std::process::id();
    let mut pids: Vec<u32> = text
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // A waiter's line has `->` before the kind; only holders are named.
            let at = fields.iter().position(|f| *f == "FLOCK")?;
            let (pid, lock) = (fields.get(at + 3)?, fields.get(at + 4)?);
            (fields.get(1) != Some(&"->") && *lock == id).then(|| pid.parse().ok()).flatten()
        })
        .filter(|pid| *pid != me)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    Holders(pids)
}
