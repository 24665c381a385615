//! Which packages and journals a collection has taken already. A package named more than
//! once (a journal given twice, two journals or two rows naming one folder, a journal and a
//! folder of it) is read and counted once; the names passed over are kept (the first
//! [`MAX_NAMED_AGAIN`]) for the page to say so.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Names passed over listed at most (all are counted).
pub(crate) const MAX_NAMED_AGAIN: usize = 1000;

/// What makes two names one folder or file: its device and inode, else (a name that does
/// not exist) its path below its folder's canonical path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Identity {
    /// Device and inode.
    Inode(u64, u64),
    /// A path that could not be looked at.
    Path(PathBuf),
}

impl Identity {
    /// The identity of what `m` describes.
    pub(crate) fn of_metadata(m: &std::fs::Metadata) -> Identity {
        Identity::Inode(m.dev(), m.ino())
    }

    /// The identity of the file or folder at `path` (links followed: the command line may
    /// name a package through one), else of its path.
    pub(crate) fn of_path(path: &Path) -> Identity {
        match std::fs::metadata(path) {
            Ok(m) => Identity::of_metadata(&m),
            Err(_) => Identity::Path(canonical_parent(path)),
        }
    }

    /// The identity of the package at `path`: its folder's, whether `path` is the folder or
    /// its METS.
    pub(crate) fn of_package(path: &Path) -> Identity {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Identity::of_metadata(&m),
            Ok(_) => Identity::of_path(crate::report::page_folder(path)),
            Err(_) => Identity::Path(canonical_parent(path)),
        }
    }
}

/// `path` with its folder made canonical (the name itself need not exist).
fn canonical_parent(path: &Path) -> PathBuf {
    let folder = std::fs::canonicalize(crate::report::page_folder(path));
    match (folder, path.file_name()) {
        (Ok(f), Some(name)) => f.join(name),
        _ => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    }
}

/// The names a collection passed over because what they name was taken already.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NamedAgain {
    /// Packages named again (each read and counted once).
    pub packages: u64,
    /// Journals given again (each read once).
    pub journals: u64,
    /// The names passed over, the first 1,000.
    pub names: Vec<String>,
}

/// What was taken, and what was passed over.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    taken: HashSet<Identity>,
}

impl Seen {
    /// True the first time `id` is offered; else notes `shown` as named again.
    pub(crate) fn first(
        &mut self,
        id: Identity,
        shown: &str,
        journal: bool,
        again: &mut NamedAgain,
    ) -> bool {
        if self.taken.insert(id) {
            return true;
        }
        *(if journal { &mut again.journals } else { &mut again.packages }) += 1;
        if again.names.len() < MAX_NAMED_AGAIN {
            again.names.push(shown.to_string());
        }
        false
    }
}
