//! Building a package out of sight: a hidden directory beside `--out`, renamed into place
//! only when complete, and what earlier killed runs left there.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{PackageError, PackageOptions, hash_file, io_err};
use crate::hooks::fail_at;
use crate::layout;
use crate::mets::{MetsBuilder, ValidateOptions, validate_mets};

/// What writing the METS and manifest found: the package's size, and whether the METS was
/// checked against the XML schemas (it passed the profile's checks, or this is an error).
pub(crate) struct MetsWritten {
    pub(crate) xsd_checked: bool,
    /// Files in the package, the manifest included.
    pub(crate) files: u64,
    /// Their bytes.
    pub(crate) bytes: u64,
}

/// A package being assembled in a hidden directory beside its final place.
///
/// The directory (`.NAME.XXXXXX.partial`) is locked with `flock` for as long as the run
/// builds it. Each run first looks at what earlier runs of the same output name left beside
/// it: a partial directory whose lock it can take belongs to a run that died, and is removed;
/// one still locked belongs to a live run and is left alone (and reported). An old package
/// left aside by a two-step replacement that was killed half-way (`.NAME.XXXXXX.old`) is put
/// back when the package itself is missing, and removed otherwise.
pub(crate) struct Staging {
    tmp: Option<tempfile::TempDir>,
    /// The directory being filled.
    pub root: PathBuf,
    /// The lock held on it while it is built (released when the run ends).
    _lock: File,
    /// An existing package may be replaced (`--force`).
    force: bool,
    out: PathBuf,
    parent: PathBuf,
    name: String,
    /// What was found and done about earlier runs' leftovers, for the report.
    pub leftovers: Vec<String>,
}

/// Suffix of the directory a run builds its package in.
const PARTIAL: &str = ".partial";
/// Suffix of an old package moved aside by the two-step replacement.
const OLD: &str = ".old";
/// Length of the random part of those names.
const RAND_LEN: usize = 6;

impl Staging {
    /// A hidden `.NAME.XXXXXX.partial` directory beside `out`, locked, with `content/` and
    /// `logs/`, after earlier runs' leftovers are dealt with.
    pub(crate) fn new(out: &Path, force: bool) -> Result<Staging, PackageError> {
        let parent = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        std::fs::create_dir_all(&parent).map_err(io_err(&parent))?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "package".into());
        let leftovers = clean_leftovers(&parent, &name, out);
        if std::fs::symlink_metadata(out).is_ok() && !force {
            return Err(PackageError::Exists(out.to_path_buf()));
        }
        // Create, open, lock, and check the name still is what was locked: a concurrent
        // clean-up that took the lock first (in the instant before ours) removed it; try again.
        for _ in 0..3 {
            let tmp = tempfile::Builder::new()
                .prefix(&format!(".{name}."))
                .suffix(PARTIAL)
                .rand_bytes(RAND_LEN)
                .tempdir_in(&parent)
                .map_err(io_err(&parent))?;
            let root = tmp.path().to_path_buf();
            let Ok(lock) = layout::lock_dir(&root) else { continue };
            let (Ok(held), Ok(now)) = (lock.metadata(), std::fs::symlink_metadata(&root)) else {
                continue;
            };
            if (held.dev(), held.ino()) != (now.dev(), now.ino()) {
                continue;
            }
            for d in ["content", "logs"] {
                std::fs::create_dir_all(root.join(d)).map_err(io_err(&root))?;
            }
            return Ok(Staging {
                tmp: Some(tmp),
                root,
                _lock: lock,
                force,
                out: out.to_path_buf(),
                parent,
                name,
                leftovers,
            });
        }
        Err(PackageError::Locked(parent.to_path_buf()))
    }

    /// Writes METS.xml and manifest-sha512.txt, then validates the METS; an invalid METS
    /// fails the package. Returns (errors, XSD checked, files in the package, METS bytes).
    pub(crate) fn write_mets(
        &self,
        mets: MetsBuilder,
        manifest: &mut Vec<(String, String)>,
        opts: &PackageOptions,
    ) -> Result<MetsWritten, PackageError> {
        let root = &self.root;
        let mets_path = root.join(layout::METS);
        mets.finish(File::create(&mets_path).map_err(io_err(&mets_path))?)
            .map_err(io_err(&mets_path))?;
        let (_, mets_sha) = hash_file(&mets_path)?;
        manifest.push((layout::METS.into(), mets_sha));
        manifest.sort();
        let manifest_path = root.join(layout::MANIFEST);
        let mut m = String::new();
        for (path, sha) in manifest.iter() {
            m.push_str(&layout::manifest_line(sha, path));
        }
        std::fs::write(&manifest_path, m).map_err(io_err(&manifest_path))?;
        // The METS checks itself before the package is declared complete.
        let check = validate_mets(
            &mets_path,
            &ValidateOptions { schemas: opts.schemas.clone(), profile: Some(opts.profile.clone()) },
        )?;
        let errors: Vec<_> = check
            .findings
            .iter()
            .filter(|f| f.severity == crate::mets::validate::Severity::Error)
            .collect();
        if let Some(first) = errors.first() {
            return Err(PackageError::MetsInvalid {
                errors: errors.len(),
                line: first.line,
                rule: first.rule.clone(),
                message: first.message.clone(),
            });
        }
        let xsd_checked = matches!(check.xsd, crate::mets::validate::XsdStatus::Validated { .. });
        // Every file the manifest lists, and the manifest itself.
        let mut bytes = std::fs::metadata(&manifest_path).map_err(io_err(&manifest_path))?.len();
        for (rel, _) in manifest.iter() {
            let path = root.join(rel);
            bytes += std::fs::symlink_metadata(&path).map_err(io_err(&path))?.len();
        }
        Ok(MetsWritten { xsd_checked, files: manifest.len() as u64 + 1, bytes })
    }

    /// Moves the finished package into place. An existing package (with `force`) is swapped
    /// with the new one in one step (`renameat2(RENAME_EXCHANGE)`), so the name always holds a
    /// whole package, old or new; the old one, now under the partial name, is then removed.
    /// Where the file system has no exchange, the old package is first renamed aside to
    /// `.NAME.XXXXXX.old` and the new one renamed in: a kill between the two leaves the old
    /// package under that name, which the next run puts back (see [`Staging`]).
    pub(crate) fn commit(mut self) -> Result<PathBuf, PackageError> {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        // Temporary directories are created private; a package is not.
        crate::migrate::set_mode(&self.root, 0o755).map_err(io_err(&self.root))?;
        let kept = self.tmp.take().map(|t| t.keep()).unwrap_or_else(|| self.root.clone());
        let out = self.out.clone();
        let exists = std::fs::symlink_metadata(&out).is_ok();
        // Without `force`, a package that appeared since `new` looked (another run's) is not
        // replaced either: the NOREPLACE rename refuses it.
        if !exists || !self.force {
            // NOREPLACE: a package that appeared meanwhile is not replaced without --force.
            match renameat_with(CWD, &kept, CWD, &out, RenameFlags::NOREPLACE) {
                Ok(()) => return Ok(out),
                Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                    std::fs::rename(&kept, &out).map_err(io_err(&out))?;
                    return Ok(out);
                }
                Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => {
                    let _ = std::fs::remove_dir_all(&kept);
                    return Err(PackageError::Exists(out));
                }
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&kept);
                    return Err(io_err(&out)(e.into()));
                }
            }
        }
        let exchange = if fail_at("no-exchange") {
            Err(rustix::io::Errno::INVAL)
        } else {
            renameat_with(CWD, &kept, CWD, &out, RenameFlags::EXCHANGE)
        };
        match exchange {
            Ok(()) => {
                // `kept` now names the old package.
                if fail_at("between-renames") {
                    std::process::abort();
                }
                if let Err(e) = std::fs::remove_dir_all(&kept) {
                    self.leftovers.push(format!(
                        "the old package, moved to {}, could not be removed: {e}",
                        kept.display()
                    ));
                }
            }
            Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                let old = tempfile::Builder::new()
                    .prefix(&format!(".{}.", self.name))
                    .suffix(OLD)
                    .rand_bytes(RAND_LEN)
                    .tempdir_in(&self.parent)
                    .map_err(io_err(&self.parent))?
                    .keep();
                // Renaming a directory onto an empty one replaces it.
                std::fs::rename(&out, &old).map_err(io_err(&out))?;
                if fail_at("between-renames") {
                    std::process::abort();
                }
                if let Err(e) = std::fs::rename(&kept, &out) {
                    // Put the old package back before failing.
                    let _ = std::fs::rename(&old, &out);
                    return Err(io_err(&out)(e));
                }
                let _ = std::fs::remove_dir_all(&old);
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&kept);
                return Err(io_err(&out)(e.into()));
            }
        }
        Ok(out)
    }
}

/// The random part of `.NAME.XXXXXX<suffix>` when `entry` is exactly that.
fn leftover_of<'a>(entry: &'a str, name: &str, suffix: &str) -> Option<&'a str> {
    let mid =
        entry.strip_prefix('.')?.strip_prefix(name)?.strip_prefix('.')?.strip_suffix(suffix)?;
    (mid.len() == RAND_LEN && mid.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(mid)
}

/// Deals with what killed runs of the same output name left beside it; returns what it did.
fn clean_leftovers(parent: &Path, name: &str, out: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else { return notes };
    let mut partials = Vec::new();
    let mut olds = Vec::new();
    for e in entries.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        // Only directories of ours: never a link, never a file.
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if leftover_of(&entry, name, PARTIAL).is_some() {
            partials.push(e.path());
        } else if leftover_of(&entry, name, OLD).is_some() {
            olds.push(e.path());
        }
    }
    olds.sort();
    for old in olds {
        let Ok(_lock) = layout::lock_dir(&old) else { continue };
        let missing = std::fs::symlink_metadata(out).is_err();
        // Earlier versions kept the old package one level down, in `package/`.
        let package = [old.clone(), old.join("package")]
            .into_iter()
            .find(|p| crate::layout::regular_metadata(&p.join(crate::layout::METS)).is_ok());
        if missing && let Some(package) = package {
            match std::fs::rename(&package, out) {
                Ok(()) => {
                    notes.push(format!(
                        "put back {} as {}: a replacement was killed half-way",
                        package.display(),
                        out.display()
                    ));
                    let _ = std::fs::remove_dir(&old);
                }
                Err(e) => notes.push(format!("could not put back {}: {e}", old.display())),
            }
        } else {
            match std::fs::remove_dir_all(&old) {
                Ok(()) => {
                    notes.push(format!("removed {} (an old package set aside)", old.display()))
                }
                Err(e) => notes.push(format!("could not remove {}: {e}", old.display())),
            }
        }
    }
    for partial in partials {
        match layout::lock_dir(&partial) {
            Ok(_lock) => match std::fs::remove_dir_all(&partial) {
                Ok(()) => {
                    notes.push(format!("removed {} (left by a run that died)", partial.display()))
                }
                Err(e) => notes.push(format!("could not remove {}: {e}", partial.display())),
            },
            Err(_) => notes.push(format!("left {}: another run is building it", partial.display())),
        }
    }
    notes
}
