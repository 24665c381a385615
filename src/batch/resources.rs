//! What a batch may take of the machine: free space on the output's file system
//! (`--min-free`: below it no new item starts until space is back) and memory (`--memory`:
//! items packaged at once are limited to what the budget holds at [`ITEM_MEMORY`] each).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::events::{Event, Progress};

/// Free space below which no new item starts, unless `--min-free` says otherwise: room for a
/// few packages of a typical harvest, and for the journal.
pub const DEFAULT_MIN_FREE: u64 = 1 << 30;

/// Memory one item in flight is counted at. A package run holds a batch of payloads being
/// filled and one being scanned and written (16 MiB each: `package::captures` and
/// `package::copy`, the migration's 4 MiB batches with one more in its channel), their
/// compressed copies, and the METS builder's and stages' state; larger records are spilled
/// and streamed, never held. Measured: 20 to 50 MB a package run (README, Memory).
pub const ITEM_MEMORY: u64 = 64 << 20;

/// The memory budget when `--memory` is not given: a quarter of the machine's memory (or of
/// the cgroup's limit, when lower).
pub const DEFAULT_MEMORY_SHARE: u64 = 4;

/// Milliseconds between checks of free space while a run is paused (default 30 s); tests set
/// it shorter.
pub const POLL_ENV: &str = "WEBAIP_BATCH_SPACE_POLL_MS";

const DEFAULT_POLL: Duration = Duration::from_secs(30);

/// What a run may take of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    /// Free bytes the output's file system must keep for a new item to start.
    pub min_free: u64,
    /// The memory budget of the run's items in flight.
    pub memory: u64,
}

impl Default for Resources {
    fn default() -> Self {
        Resources { min_free: DEFAULT_MIN_FREE, memory: default_memory() }
    }
}

impl Resources {
    /// Items packaged at once: `jobs`, fewer when the memory budget holds fewer, at least one.
    pub fn in_flight(&self, jobs: usize) -> usize {
        let fits = usize::try_from(self.memory / ITEM_MEMORY).unwrap_or(usize::MAX);
        fits.clamp(1, jobs.max(1))
    }
}

/// A size that is not one.
#[derive(Debug, thiserror::Error)]
pub enum SizeError {
    /// Not a number with a unit.
    #[error("{0:?}: not a size (a number and an optional unit: K, M, G, T; 10G is 10 GiB)")]
    Invalid(String),
    /// More than 64 bits hold.
    #[error("{0:?}: too large")]
    TooLarge(String),
}

/// A size: bytes, or a number (fractions allowed) with a binary unit `K`, `M`, `G`, `T` or
/// `P` (`B`, `iB` after it allowed, any case): `10G`, `256MiB`, `1.5g`, `4096`.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let invalid = || SizeError::Invalid(text.to_string());
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit.strip_suffix("ib").or_else(|| unit.strip_suffix('b')).unwrap_or(&unit);
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        _ => return Err(invalid()),
    };
    if number.is_empty() || number.starts_with('.') || number.matches('.').count() > 1 {
        return Err(invalid());
    }
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let bytes = (value * (1u64 << shift) as f64).round();
    if bytes >= u64::MAX as f64 {
        return Err(SizeError::TooLarge(text.to_string()));
    }
    Ok(bytes as u64)
}

/// A quarter of the memory this process may use: the machine's (`MemTotal`), or its
/// cgroup's limit when lower; 1 GiB when neither can be read.
pub fn default_memory() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| mem_total(&m));
    let limit = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|l| l.trim().parse::<u64>().ok());
    let memory = match (total, limit) {
        (Some(t), Some(l)) => t.min(l),
        (t, l) => t.or(l).unwrap_or(4 << 30),
    };
    memory / DEFAULT_MEMORY_SHARE
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The free space of a folder's file system could not be read.
#[derive(Debug, thiserror::Error)]
#[error("free space of {}: {}", path.display(), crate::layout::describe_io(source))]
pub struct SpaceError {
    /// The folder.
    pub path: PathBuf,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}

/// Bytes an unprivileged writer may still use on `dir`'s file system.
pub fn free_space(dir: &Path) -> Result<u64, SpaceError> {
    let s = rustix::fs::statvfs(dir)
        .map_err(|e| SpaceError { path: dir.to_path_buf(), source: e.into() })?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Holds new items back while the output's file system is short of space.
pub struct SpaceGuard<'a> {
    dir: &'a Path,
    min_free: u64,
    poll: Duration,
    /// Whether the run is paused; held by the worker that checks, so one checks at a time
    /// and the pause is told once.
    paused: Mutex<bool>,
}

impl<'a> SpaceGuard<'a> {
    /// A guard keeping `min_free` bytes free on `dir`'s file system, polling as
    /// [`POLL_ENV`] says while paused.
    pub fn new(dir: &'a Path, min_free: u64) -> Self {
        let poll = std::env::var(POLL_ENV)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(DEFAULT_POLL, Duration::from_millis);
        SpaceGuard { dir, min_free, poll, paused: Mutex::new(false) }
    }

    /// Returns once there is room for a new item (or `stop` is set), telling `progress`
    /// when the run pauses and when it resumes.
    pub fn wait(&self, stop: &AtomicBool, progress: Progress<'_>) -> Result<(), SpaceError> {
        if self.min_free == 0 {
            return Ok(());
        }
        let mut paused = self.paused.lock().unwrap_or_else(|p| p.into_inner());
        while !stop.load(Ordering::SeqCst) {
            let free = free_space(self.dir)?;
            if free >= self.min_free {
                if *paused {
                    *paused = false;
                    progress(Event::Resumed { free });
                }
                break;
            }
            if !*paused {
                *paused = true;
                progress(Event::Paused { dir: self.dir, free, required: self.min_free });
            }
            std::thread::sleep(self.poll);
        }
        Ok(())
    }
}

/// The bytes of a source: a file's length, or the sum of a folder's files (links not
/// followed); what cannot be read counts nothing.
pub fn source_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    let mut total = 0u64;
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => dirs.push(entry.path()),
                Ok(m) if m.is_file() => total = total.saturating_add(m.len()),
                _ => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_binary_units() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("10G").unwrap(), 10 << 30);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("2 kb").unwrap(), 2048);
        for bad in ["", "G", "1.2.3G", "10X", "-1G", ".5G"] {
            assert!(matches!(parse_size(bad), Err(SizeError::Invalid(_))), "{bad:?}");
        }
        assert!(matches!(parse_size("20000P"), Err(SizeError::TooLarge(_))));
    }

    #[test]
    fn the_budget_limits_items_in_flight() {
        let r = |memory| Resources { min_free: 0, memory };
        assert_eq!(r(256 << 20).in_flight(8), 4);
        assert_eq!(r(256 << 20).in_flight(2), 2);
        assert_eq!(r(1).in_flight(8), 1, "at least one item");
        assert_eq!(r(u64::MAX).in_flight(0), 1);
        assert_eq!(mem_total("MemFree: 1 kB\nMemTotal:  2048 kB\n"), Some(2 << 20));
        assert!(default_memory() > 0);
    }
}
