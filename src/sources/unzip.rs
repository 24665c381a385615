//! A mirror's `.zip`, unpacked by the one unpacker of every ZIP (`formats::unzip`) into a
//! temporary directory: its budget is [`DEFAULT_ZIP_EXPANSION`] times the zip's size, at least
//! `formats::unzip::ZIP_BUDGET_FLOOR` (`--max-zip-expansion` raises the ratio).
//!
//! A zip refused whole ends the run with exit 2 (an error naming the zip and the entry at
//! fault; nothing is packaged or listed, nothing of it kept). An entry refused alone (a link,
//! a name leaving the mirror, a second entry of a name, a file where a directory is needed,
//! a damaged or unsupported entry) is listed with the reason and the rest is packaged (exit
//! 1), as any refused file of a mirror. `webaip pages` writes only the first bytes of each
//! mirror file ([`unpack_zip_heads`]).
//!
//! The temporary directory (`.webaip-mirror-XXXXXX`) is locked with `flock` for as long as it
//! is used; a later run removes those whose lock it can take: they belong to runs that died.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::mirror::{Mirror, MirrorError, MirrorKind, MirrorOptions, mirror_kind, read_mirror};
pub use crate::formats::unzip::DEFAULT_ZIP_EXPANSION;
use crate::formats::unzip::{self, Limits};
use crate::temporaries::TempName;

/// The temporary directories zips are unpacked into (`.webaip-mirror-XXXXXX`).
const UNPACKED: TempName = TempName { prefix: ".webaip-mirror-", suffix: "", dirs: true };

/// A mirror's `.zip`, unpacked into a temporary directory (removed when dropped).
#[derive(Debug)]
pub struct Unpacked {
    /// The temporary directory.
    pub dir: tempfile::TempDir,
    /// The lock that tells later runs the directory is in use (released on drop).
    _lock: File,
    /// The mirror inside it (the top directory, or its only subdirectory).
    pub root: PathBuf,
    /// Its kind.
    pub kind: MirrorKind,
    /// Entries not unpacked, and why (links, names leaving the mirror, duplicates, a file
    /// where a directory is needed, damaged or unsupported entries).
    pub refused: Vec<(String, String)>,
    /// Earlier runs' temporary directories found beside it, and what was done about them.
    pub leftovers: Vec<String>,
    /// Bytes written.
    #[cfg_attr(
        not(feature = "test-hooks"),
        allow(dead_code, reason = "read by the test harnesses")
    )]
    pub written: u64,
}

impl Unpacked {
    /// Reads the mirror unpacked from `zip`: what was refused in unpacking is refused in the
    /// mirror's account too, and the earlier runs' leftovers and the zip are noted.
    pub fn read_mirror(&self, zip: &Path, opts: &MirrorOptions) -> Result<Mirror, MirrorError> {
        let mut m = self.read_refusing(zip, opts)?;
        m.notes.extend(self.leftovers.iter().cloned());
        m.instance.found.insert(0, format!("unpacked from {}", super::path_text(zip)));
        Ok(m)
    }

    /// Reads the mirror unpacked from `zip`, its errors named in the zip, with what unpacking
    /// refused among its refusals (and nothing else noted: what listing needs).
    pub fn read_refusing(&self, zip: &Path, opts: &MirrorOptions) -> Result<Mirror, MirrorError> {
        let mut m = read_mirror(&self.root, self.kind, opts).map_err(|e| self.in_zip(zip, e))?;
        m.instance.refused.extend(self.refused.iter().cloned());
        Ok(m)
    }
}

impl Unpacked {
    /// `path`, inside the unpacked directory, as the user knows it: `ZIP (entry NAME)`, or the
    /// zip itself for the directory; any other path as it is.
    pub fn zip_path(&self, zip: &Path, path: &Path) -> PathBuf {
        match path.strip_prefix(self.dir.path()) {
            Ok(rel) if rel.as_os_str().is_empty() => zip.to_path_buf(),
            Ok(rel) => {
                let entry = super::path_text(rel);
                PathBuf::from(format!("{} (entry {entry})", super::path_text(zip)))
            }
            Err(_) => path.to_path_buf(),
        }
    }

    /// An error reading the unpacked mirror, naming the zip and its entry rather than the
    /// hidden temporary directory the user never made.
    pub fn in_zip(&self, zip: &Path, e: MirrorError) -> MirrorError {
        use super::pandas::PandasError as P;
        let name = |p: PathBuf| self.zip_path(zip, &p);
        match e {
            MirrorError::NoCaptureDate(p) => MirrorError::NoCaptureDate(name(p)),
            MirrorError::Tree(P::NoMirror(p)) => MirrorError::Tree(P::NoMirror(name(p))),
            MirrorError::Tree(P::NotInstance(p)) => MirrorError::Tree(P::NotInstance(name(p))),
            MirrorError::Tree(P::Cache { path, source }) => {
                MirrorError::Tree(P::Cache { path: name(path), source })
            }
            other => other,
        }
    }
}

/// Unpacks a mirror's `.zip` into a new temporary directory below `work`, within the budget
/// of `expansion` times the zip's size (see the module documentation). Every entry name is
/// confined (`layout::confined_name`); links, duplicate names, a file where a directory is
/// needed (`a` and `a/x`) and damaged entries are refused one by one (listed). A zip that
/// overlaps entries, holds too many or too deep, or unpacks past its budget is refused whole,
/// and nothing of it is left.
pub fn unpack_zip(zip: &Path, work: &Path, expansion: u64) -> Result<Unpacked, MirrorError> {
    unpack(zip, work, expansion, None)
}

/// As [`unpack_zip`], for reading only the start of each mirror file (`webaip pages`): of an
/// entry other than a side file (logs, HTTrack's cache and `url.map`) only the first `head`
/// bytes are written; the rest is decompressed, counted against the budget and left as a hole
/// (the file has its true size). Listing a zip of large files so uses the disk of its heads.
pub fn unpack_zip_heads(
    zip: &Path,
    work: &Path,
    expansion: u64,
    head: u64,
) -> Result<Unpacked, MirrorError> {
    unpack(zip, work, expansion, Some(head))
}

fn unpack(
    zip: &Path,
    work: &Path,
    expansion: u64,
    head: Option<u64>,
) -> Result<Unpacked, MirrorError> {
    let limits = Limits {
        head,
        keep_whole: is_side_file,
        ..Limits::of(expansion, Some("--max-zip-expansion"))
    };
    let u = unzip::unpack(zip, work, UNPACKED, &limits)?;
    // A zip of the mirror's folder holds that folder: the mirror is its only subdirectory.
    let mut root = u.dir.path().to_path_buf();
    if mirror_kind(&root).is_none() {
        let entries: Vec<_> =
            std::fs::read_dir(&root).map(|rd| rd.flatten().take(2).collect()).unwrap_or_default();
        if let [only] = &entries[..]
            && only.file_type().is_ok_and(|t| t.is_dir())
        {
            root = only.path();
        }
    }
    let kind = mirror_kind(&root).ok_or_else(|| MirrorError::NotAMirror(super::path_text(zip)))?;
    let (refused, leftovers, written) = (u.refused, u.leftovers, u.written);
    Ok(Unpacked { dir: u.dir, _lock: u.lock, root, kind, refused, leftovers, written })
}

/// Whether `name` is a mirror's side file by its last segment: a wget log, HTTrack's log,
/// cache files or `url.map`, a `.panaccess-mime.types`. These are read whole.
fn is_side_file(name: &str) -> bool {
    let last = name.rsplit('/').next().unwrap_or(name);
    matches!(
        last,
        "hts-log.txt" | "new.txt" | "new.zip" | "new.lst" | "url.map" | ".panaccess-mime.types"
    ) || last == "wget-log"
        || last.starts_with("wget-log.")
        || last.ends_with(".log")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_files() {
        for side in ["site/wget-log", "wget-log.1", "a.log", "hts-cache/new.txt", "url.map"] {
            assert!(is_side_file(side), "{side}");
        }
        for page in ["www.e.org/index.html", "www.e.org/new.txt.html", "www.e.org/logo"] {
            assert!(!is_side_file(page), "{page}");
        }
    }
}
