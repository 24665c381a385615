//! Where `store get` fetches to before anything appears under its name.
//!
//! A [`Staging`] is a hidden directory inside `--to` (`.webaip-get-XXXXXX`, locked with `flock`
//! while its get lives). Every file is fetched and verified there; only when all of them
//! verified are they linked to their names in `--to` ([`Staging::publish`]), the METS and the
//! manifest last, and a link that fails undoes the ones made before it. A killed get leaves
//! only its hidden directory, unlocked, which the next get into the same `--to` removes.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::AtFlags;

use super::{StoreError, StoreRefusal};
use crate::layout::{self, MANIFEST, METS};
use crate::temporaries::{self, TempName};

/// A get's staging directory inside `--to` (`.webaip-get-XXXXXX`).
const STAGING: TempName = TempName { prefix: ".webaip-get-", suffix: "", dirs: true };

/// A locked staging directory, removed (with what is left in it) when dropped.
pub(crate) struct Staging {
    path: PathBuf,
    /// Holds the lock while the get lives.
    _lock: File,
}

fn unusable(path: &Path, source: io::Error) -> StoreError {
    StoreError::Destination { path: path.into(), source }
}

impl Staging {
    /// Removes the staging directories of killed gets in `to`, then makes this get's own.
    pub(crate) fn new(to: &Path) -> Result<Self, StoreError> {
        temporaries::remove_dead(to, STAGING);
        let (dir, lock) = temporaries::locked_dir_in(to, STAGING).map_err(|e| unusable(to, e))?;
        // Removed by Drop below, before the lock goes: not by TempDir's own drop.
        Ok(Staging { path: dir.keep(), _lock: lock })
    }

    /// The directory files are fetched to.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Links every fetched `name` to the same name in `to` (the METS and the manifest last),
    /// never over an existing entry; on a failure the links made and the directories created
    /// are removed again, so `to` is as it was.
    pub(crate) fn publish(&self, names: &[String], to: &Path) -> Result<(), StoreError> {
        let mut order: Vec<&String> = names.iter().collect();
        order.sort_by_key(|n| (n.as_str() == METS || n.as_str() == MANIFEST, n.as_str()));
        let mut made = Published::default();
        for name in order {
            if let Err(e) = self.publish_one(name, to, &mut made) {
                made.undo(to);
                return Err(e);
            }
        }
        Ok(())
    }

    fn publish_one(&self, name: &str, to: &Path, made: &mut Published) -> Result<(), StoreError> {
        let (sub, leaf) = name.rsplit_once('/').unwrap_or(("", name));
        if !sub.is_empty() {
            let mut prefix = String::new();
            for segment in sub.split('/') {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(segment);
                if std::fs::symlink_metadata(to.join(&prefix)).is_err() {
                    made.dirs.push(prefix.clone());
                }
            }
            layout::create_dirs_in(to, sub)?;
        }
        let from = layout::open_dir_in(&self.path, sub)?;
        let into = layout::open_dir_in(to, sub)?;
        rustix::fs::linkat(&from, leaf, &into, leaf, AtFlags::empty()).map_err(|e| match e {
            rustix::io::Errno::EXIST => {
                StoreRefusal::AppearedMeanwhile { to: to.into(), name: name.into() }.into()
            }
            e => unusable(&to.join(name), io::Error::from(e)),
        })?;
        made.files.push(name.to_string());
        let _ = into.sync_all();
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Removed before the lock goes, so no cleaner sees it unlocked while it lives.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// What a publish made in `to`, to undo it.
#[derive(Default)]
struct Published {
    files: Vec<String>,
    dirs: Vec<String>,
}

impl Published {
    fn undo(&self, to: &Path) {
        for f in &self.files {
            let (sub, leaf) = f.rsplit_once('/').unwrap_or(("", f));
            if let Ok(dir) = layout::open_dir_in(to, sub) {
                let _ = rustix::fs::unlinkat(&dir, leaf, AtFlags::empty());
            }
        }
        // Deepest first; only empty directories go.
        let mut dirs: Vec<&String> = self.dirs.iter().collect();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
        for d in dirs {
            let _ = std::fs::remove_dir(to.join(d));
        }
    }
}
