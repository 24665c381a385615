//! One run at a time on a journal's items: an OS file lock (`flock`) on a file beside the
//! journal, which the kernel releases when the process ends however it ends (a run killed
//! with SIGKILL leaves no stale lock).
//!
//! A run of the whole manifest locks `JOURNAL.lock` exclusively; a shard's run locks it
//! shared and `JOURNAL.K-of-N.lock` exclusively, so shards of one journal run side by side
//! while two runs of the same shard, or a whole run beside any, are refused. The holder
//! writes its pid and host into the file it locks exclusively, for the refusal to name.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

use super::shard::Shard;

/// The journal is in use, or its lock cannot be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another run holds it.
    #[error(
        "journal {} is in use by another run ({holder}; lock file {}): wait for it to end, \
         or give this run another --journal or --shard",
        journal.display(), lock.display()
    )]
    Held {
        /// The journal.
        journal: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// Who holds it, as the holder wrote.
        holder: String,
    },
    /// The lock file cannot be made or locked.
    #[error("lock file {}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// A journal locked for this process until dropped (or until it ends).
#[derive(Debug)]
pub struct JournalLock {
    _files: Vec<File>,
}

/// The lock file of a journal's run of `shard` (of the whole manifest when `None`).
pub fn lock_path(journal: &Path, shard: Option<Shard>) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    if let Some(s) = shard {
        name.push(format!(".{}-of-{}", s.index, s.count));
    }
    name.push(".lock");
    PathBuf::from(name)
}

/// Locks `journal` for a run of `shard`, or says who holds it.
pub fn lock_journal(journal: &Path, shard: Option<Shard>) -> Result<JournalLock, LockError> {
    let whole = lock_path(journal, None);
    let Some(s) = shard else {
        let file = take(journal, &whole, FlockOperation::NonBlockingLockExclusive)?;
        return Ok(JournalLock { _files: vec![file] });
    };
    let shared = take(journal, &whole, FlockOperation::NonBlockingLockShared)?;
    let own =
        take(journal, &lock_path(journal, Some(s)), FlockOperation::NonBlockingLockExclusive)?;
    Ok(JournalLock { _files: vec![shared, own] })
}

/// Opens (making it) and locks `path`; an exclusive holder writes who it is.
fn take(journal: &Path, path: &Path, op: FlockOperation) -> Result<File, LockError> {
    let io = |source| LockError::Io { path: path.to_path_buf(), source };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    match flock(&file, op) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            return Err(LockError::Held {
                journal: journal.to_path_buf(),
                lock: path.to_path_buf(),
                holder: holder_of(&mut file),
            });
        }
        Err(e) => return Err(io(e.into())),
    }
    // A shard's run clears what a whole run that ended wrote, so a refusal names no one gone.
    file.set_len(0).map_err(io)?;
    if op == FlockOperation::NonBlockingLockExclusive {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map_or_else(|_| "an unknown host".to_string(), |h| h.trim().to_string());
        file.write_all(format!("pid {} on {host}\n", std::process::id()).as_bytes()).map_err(io)?;
    }
    Ok(file)
}

/// What the holder of a lock file wrote of itself.
fn holder_of(file: &mut File) -> String {
    let mut text = String::new();
    let read = file.rewind().and_then(|()| Read::by_ref(file).take(200).read_to_string(&mut text));
    match text.trim() {
        _ if read.is_err() => "its holder unknown".to_string(),
        "" => "runs of its shards".to_string(),
        t => t.to_string(),
    }
}
