//! Temporary files and directories a run keeps beside its output or in `TMPDIR`, and how a
//! later run tells a dead run's from a live one's.
//!
//! The run that makes one holds an exclusive `flock` on it for as long as it lives; the kernel
//! drops the lock when the process ends, however it ends (SIGKILL included). A later run that
//! meets one of the same name pattern and can take its lock knows its maker is gone, and
//! removes it; one still locked is left alone. Names are matched exactly (`PREFIX`, the
//! random part tempfile draws, `SUFFIX`), links are never followed, and only files or
//! directories of that exact shape, owned by the user running, are touched (in a shared
//! `TMPDIR` another user's are not ours to judge). Used for migrate's partial outputs, the METS
//! builder's spill directories, unpacked mirror zips, `store get`'s staging directories, WACZ
//! exports, `get -o` outputs, unmigrated ARCs and `undedup`'s restored containers.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{FlockOperation, Mode, OFlags};

/// Length of the random part of the names made here (tempfile's default).
const RAND_LEN: usize = 6;
/// Tries at making a locked temporary before giving up (see [`locked_file_in`]).
const TRIES: usize = 3;

/// A name pattern: `PREFIX` + six alphanumerics + `SUFFIX`.
#[derive(Debug, Clone, Copy)]
pub struct TempName<'a> {
    /// What names start with.
    pub prefix: &'a str,
    /// What names end with.
    pub suffix: &'a str,
    /// Directories (else regular files): only entries of that type are ever removed.
    pub dirs: bool,
}

impl TempName<'_> {
    /// True when `name` is exactly of this pattern.
    pub fn matches(&self, name: &str) -> bool {
        name.strip_prefix(self.prefix).and_then(|rest| rest.strip_suffix(self.suffix)).is_some_and(
            |mid| mid.len() == RAND_LEN && mid.bytes().all(|b| b.is_ascii_alphanumeric()),
        )
    }
}

/// A new temporary file in `dir` named by `name`, locked for as long as it (or a clone of its
/// descriptor) is open; private (mode 0600).
pub fn locked_file_in(dir: &Path, name: TempName) -> io::Result<tempfile::NamedTempFile> {
    locked_file_with(dir, name, None)
}

/// [`locked_file_in`] for a file that becomes an output as it is: made with mode 0666 less the
/// umask, as any file the user makes (tempfile's own are private).
pub fn locked_output_in(dir: &Path, name: TempName) -> io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    locked_file_with(dir, name, Some(std::fs::Permissions::from_mode(0o666)))
}

fn locked_file_with(
    dir: &Path,
    name: TempName,
    mode: Option<std::fs::Permissions>,
) -> io::Result<tempfile::NamedTempFile> {
    for _ in 0..TRIES {
        let mut builder = tempfile::Builder::new();
        if let Some(m) = &mode {
            builder.permissions(m.clone());
        }
        let tmp = builder
            .prefix(name.prefix)
            .suffix(name.suffix)
            .rand_bytes(RAND_LEN)
            .tempfile_in(dir)?;
        if lock_still_named(tmp.as_file(), tmp.path())? {
            return Ok(tmp);
        }
    }
    Err(io::Error::new(io::ErrorKind::WouldBlock, "another run removed each temporary made"))
}

/// A new temporary directory in `dir` named by `name`, with the lock held on it (the `File`:
/// keep it as long as the directory lives).
pub(crate) fn locked_dir_in(dir: &Path, name: TempName) -> io::Result<(tempfile::TempDir, File)> {
    for _ in 0..TRIES {
        let tmp = tempfile::Builder::new()
            .prefix(name.prefix)
            .suffix(name.suffix)
            .rand_bytes(RAND_LEN)
            .tempdir_in(dir)?;
        // Removed between its making and this open by another run's clean-up: make another.
        let Ok(fd) = rustix::fs::open(tmp.path(), dir_flags(), Mode::empty()) else { continue };
        let lock = File::from(fd);
        if lock_still_named(&lock, tmp.path())? {
            return Ok((tmp, lock));
        }
    }
    Err(io::Error::new(io::ErrorKind::WouldBlock, "another run removed each temporary made"))
}

/// Takes the lock on `file`, then checks `path` still names it: a clean-up by another run may
/// have taken the lock first, in the instant after creation, and removed it.
fn lock_still_named(file: &File, path: &Path) -> io::Result<bool> {
    if try_lock(file).is_err() {
        return Ok(false);
    }
    let (held, now) = (file.metadata()?, std::fs::symlink_metadata(path));
    Ok(now.is_ok_and(|now| (held.dev(), held.ino()) == (now.dev(), now.ino())))
}

/// What [`remove_dead`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cleanup {
    /// Names removed (their makers are gone).
    pub removed: Vec<String>,
    /// Names left (locked: their makers are alive), or that could not be removed.
    pub left: Vec<String>,
}

impl Cleanup {
    /// What was removed, as sentences naming each path below `dir`.
    pub fn notes(&self, dir: &Path) -> Vec<String> {
        let path = |n: &String| dir.join(n).display().to_string();
        self.removed
            .iter()
            .map(|n| format!("removed {} (left by a run that died)", path(n)))
            .collect()
    }
}

/// Removes the files and directories of `dir` named by `name` whose lock can be taken.
pub fn remove_dead(dir: &Path, name: TempName) -> Cleanup {
    let mut done = Cleanup::default();
    let Ok(entries) = std::fs::read_dir(dir) else { return done };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let entry_name = entry.file_name().to_string_lossy().into_owned();
        if !name.matches(&entry_name) {
            continue;
        }
        // The entry's own type (lstat): a link is never followed, nor removed.
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.uid() == me) {
            continue;
        }
        let flags = match (name.dirs, kind.is_dir(), kind.is_file()) {
            (true, true, _) => dir_flags(),
            (false, _, true) => {
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC
            }
            _ => continue,
        };
        let Ok(fd) = rustix::fs::open(&path, flags, Mode::empty()) else { continue };
        let lock = File::from(fd);
        let removed = try_lock(&lock).is_ok()
            && match kind.is_dir() {
                true => std::fs::remove_dir_all(&path).is_ok(),
                false => std::fs::remove_file(&path).is_ok(),
            };
        match removed {
            true => done.removed.push(entry_name),
            false => done.left.push(entry_name),
        }
    }
    done
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn try_lock(file: impl AsFd) -> io::Result<()> {
    rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive).map_err(io::Error::from)
}

/// A private scratch database: on disk in `TMPDIR` (`SQLITE_TMPDIR` first, when set; SQLite's
/// own temporary file, unlinked at
/// once, so nothing is left however the run ends), its page cache `cache_kib` KiB, no journal,
/// holding `schema` and inside a transaction that is never committed: it lives as long as the
/// connection. For the state that would otherwise grow with the input in memory (the METS
/// check's cross-references, a mirror's file list).
pub(crate) fn scratch_database(
    cache_kib: u32,
    schema: &str,
) -> rusqlite::Result<rusqlite::Connection> {
    // "": a private, temporary on-disk database, removed when the connection closes.
    let db = rusqlite::Connection::open("")?;
    db.execute_batch(&format!(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -{cache_kib};
         PRAGMA temp_store = FILE; PRAGMA locking_mode = EXCLUSIVE; {schema} BEGIN;"
    ))?;
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: TempName = TempName { prefix: ".out.warc.gz.", suffix: ".partial", dirs: false };
    const DIRS: TempName = TempName { dirs: true, ..NAME };

    #[test]
    fn names_match_exactly() {
        assert!(NAME.matches(".out.warc.gz.aB3xY9.partial"));
        for other in [
            ".out.warc.gz.aB3xY.partial",
            ".out.warc.gz.aB3xY99.partial",
            ".out.warc.gz.aB3-Y9.partial",
            ".other.warc.gz.aB3xY9.partial",
            ".out.warc.gz.aB3xY9.partial.x",
            "out.warc.gz",
        ] {
            assert!(!NAME.matches(other), "{other}");
        }
    }

    #[test]
    fn a_dead_temporary_is_removed_a_live_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let live = locked_file_in(dir.path(), NAME).unwrap();
        let (live_dir, _lock) = locked_dir_in(dir.path(), DIRS).unwrap();
        std::fs::write(dir.path().join(".out.warc.gz.dead01.partial"), b"x").unwrap();
        std::fs::create_dir(dir.path().join(".out.warc.gz.dead02.partial")).unwrap();
        std::fs::write(dir.path().join(".out.warc.gz.dead02.partial/f"), b"x").unwrap();
        // A link of the same shape is not followed, nor removed.
        let target = dir.path().join("kept");
        std::fs::write(&target, b"x").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(".out.warc.gz.link01.partial"))
            .unwrap();
        // Files by the files' pattern, directories by the directories'.
        let files = remove_dead(dir.path(), NAME);
        assert_eq!(files.removed, [".out.warc.gz.dead01.partial"]);
        assert_eq!(files.left, [live.path().file_name().unwrap().to_str().unwrap()]);
        let dirs = remove_dead(dir.path(), DIRS);
        assert_eq!(dirs.removed, [".out.warc.gz.dead02.partial"]);
        assert_eq!(dirs.left.len(), 1, "{dirs:?}");
        assert!(live.path().exists() && live_dir.path().exists() && target.exists());
        assert!(dir.path().join(".out.warc.gz.link01.partial").symlink_metadata().is_ok());
    }
}
