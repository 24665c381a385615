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
    // The lock sits beside the journal's file, not beside a symbolic link to it: two runs
    // naming one journal by different links must find the same lock.
    let real = real_path(journal);
    let file = real.as_path();
    let whole = lock_path(file, None);
    let Some(s) = shard else {
        let file = take(journal, &whole, FlockOperation::NonBlockingLockExclusive)?;
        return Ok(JournalLock { _files: vec![file] });
    };
    let shared = take(journal, &whole, FlockOperation::NonBlockingLockShared)?;
    let own = take(journal, &lock_path(file, Some(s)), FlockOperation::NonBlockingLockExclusive)?;
    Ok(JournalLock { _files: vec![shared, own] })
}

/// Where `journal` is, its symbolic links followed, whether or not its file exists yet (a first
/// run locks before SQLite makes it); the path as given when its folder cannot be resolved.
fn real_path(journal: &Path) -> PathBuf {
    let mut path = journal.to_path_buf();
    // A link to a link is followed as the kernel would, up to its own limit.
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&path) else { break };
        path = path.parent().map_or_else(|| target.clone(), |dir| dir.join(&target));
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return path };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    std::fs::canonicalize(dir).map_or(path.clone(), |d| d.join(name))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_named_by_a_symbolic_link_is_locked_as_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = tmp.path().join("j.sqlite");
        let link = tmp.path().join("link.sqlite");
        std::os::unix::fs::symlink(&journal, &link).unwrap();
        // A first run locks before its journal exists.
        let first = lock_journal(&link, None).unwrap();
        assert!(matches!(lock_journal(&journal, None), Err(LockError::Held { .. })));
        drop(first);
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&journal, b"").unwrap();
        std::os::unix::fs::symlink(&journal, &link).unwrap();
        let held = lock_journal(&journal, None).unwrap();
        let err = lock_journal(&link, None).expect_err("a second run through a link");
        assert!(matches!(err, LockError::Held { .. }), "{err}");
        let shard = Shard { index: 1, count: 2 };
        assert!(matches!(lock_journal(&link, Some(shard)), Err(LockError::Held { .. })));
        drop(held);
        let _again = lock_journal(&link, Some(shard)).unwrap();
        assert!(lock_journal(&journal, None).is_err(), "a shard through the link holds it too");
    }
}
