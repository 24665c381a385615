//! Where an E-ARK package is written: a folder, or a ZIP of stored entries under one root
//! folder. Each file is streamed in through a SHA-256 hasher, so memory does not depend on its
//! size and its checksum is known when it is written.
//!
//! Everything is written under a temporary name beside the output (`.NAME.XXXXXX.partial`,
//! locked while the export lives) and renamed to the output's name once complete: a failed or
//! killed export leaves nothing under that name, and the next export to it removes what a
//! killed one left.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::ZipWriter;
use zip::result::ZipError;
use zip::write::SimpleFileOptions;

use super::EarkError;
use crate::formats::severable::{Cut, Severable};
use crate::layout::{self, ConfineError};
use crate::temporaries::{self, TempName};

/// Size and SHA-256 (upper-case hex, as E-ARK examples give it) of a file written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    pub size: u64,
    pub sha256: String,
}

/// The output being written: under a temporary name until [`Sink::finish`].
pub(crate) struct Sink {
    /// The output's name.
    out: PathBuf,
    /// What names are written below: the root folder and a slash, or nothing.
    below: String,
    staged: Staged,
    /// The folder made to hold the root folder, removed again if the export fails and leaves
    /// it empty.
    made_dir: Option<PathBuf>,
}

/// The temporary the output is written to.
enum Staged {
    /// A folder (the package root), with the lock on it.
    Dir { tmp: PathBuf, _lock: File, done: bool },
    /// A ZIP whose entries are below `root/`.
    Zip { zip: Option<Box<ZipWriter<Severable>>>, tmp: Option<tempfile::NamedTempFile>, cut: Cut },
}

/// Whether the output `out` is a ZIP (named `.zip`) rather than a folder.
pub(crate) fn is_zip(out: &Path) -> bool {
    out.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"))
}

/// Temporaries beside `out`: `.NAME.XXXXXX.partial`.
fn staging_name(prefix: &str, dirs: bool) -> TempName<'_> {
    TempName { prefix, suffix: ".partial", dirs }
}

/// The error of writing `path`: a full disk and the like said in words.
fn write_err(path: &Path, source: io::Error) -> EarkError {
    EarkError::Write { path: path.to_path_buf(), source }
}

/// A zip crate error: its I/O errors are the output's.
fn zip_err(path: &Path, e: ZipError) -> EarkError {
    match e {
        ZipError::Io(source) => write_err(path, source),
        source => EarkError::Zip { path: path.to_path_buf(), source },
    }
}

impl Sink {
    /// A new output at `out` (a `.zip` file whose entries are below `root/`, or a folder: the
    /// package root, which must not exist or be empty; with `nest`, the folder holding the
    /// package root `root`, which must not exist), after removing the temporaries killed exports
    /// to it left.
    pub(crate) fn create(out: &Path, root: &str, nest: bool) -> Result<Sink, EarkError> {
        if nest && !is_zip(out) {
            return Sink::create_in(out, root);
        }
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| write_err(&parent, e))?;
        let prefix = format!(".{name}.");
        let is_zip = is_zip(out);
        let below = if is_zip { format!("{root}/") } else { String::new() };
        temporaries::remove_dead(&parent, staging_name(&prefix, !is_zip));
        if is_zip {
            if std::fs::symlink_metadata(out).is_ok() {
                return Err(EarkError::OutExists(out.to_path_buf()));
            }
            let tmp = temporaries::locked_output_in(&parent, staging_name(&prefix, false))
                .map_err(|e| write_err(out, e))?;
            let file = tmp.as_file().try_clone().map_err(|e| write_err(out, e))?;
            let (w, cut) = Severable::new(file);
            let zip = Some(Box::new(ZipWriter::new(w)));
            let staged = Staged::Zip { zip, tmp: Some(tmp), cut };
            return Ok(Sink { out: out.to_path_buf(), below, staged, made_dir: None });
        }
        if out.exists() && std::fs::read_dir(out).map_err(|e| write_err(out, e))?.next().is_some() {
            return Err(EarkError::OutExists(out.to_path_buf()));
        }
        let (dir, lock) = temporaries::locked_dir_in(&parent, staging_name(&prefix, true))
            .map_err(|e| write_err(out, e))?;
        let staged = Staged::Dir { tmp: dir.keep(), _lock: lock, done: false };
        Ok(Sink { out: out.to_path_buf(), below, staged, made_dir: None })
    }

    /// The package root `dir/root`, staged as `dir/.root.XXXXXX.partial`: several packages
    /// can be exported into one folder `dir`, never over one there already.
    fn create_in(dir: &Path, root: &str) -> Result<Sink, EarkError> {
        let made = std::fs::symlink_metadata(dir).is_err();
        std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
        let target = dir.join(root);
        let sink = match std::fs::symlink_metadata(&target) {
            Ok(_) => Err(EarkError::OutExists(target)),
            Err(_) => Sink::create(&target, root, false),
        };
        match sink {
            Ok(mut sink) => {
                sink.made_dir = made.then(|| dir.to_path_buf());
                Ok(sink)
            }
            Err(e) => {
                if made {
                    let _ = std::fs::remove_dir(dir);
                }
                Err(e)
            }
        }
    }

    /// Writes `name` (a `/`-separated path below the root) from `input`, `size_hint` bytes.
    pub(crate) fn add(
        &mut self,
        name: &str,
        input: &mut dyn Read,
        size_hint: u64,
    ) -> Result<Written, EarkError> {
        let below_root = format!("{}{name}", self.below);
        let shown = self.out.join(&below_root);
        match &mut self.staged {
            Staged::Dir { tmp, .. } => {
                let out = layout::create_in(tmp, &below_root).map_err(|e| match e {
                    ConfineError::Io { source, .. } => write_err(&shown, source),
                    e => EarkError::Confine(e),
                })?;
                let mut out = BufWriter::with_capacity(1 << 20, out);
                let w = hash_copy(input, &mut out).map_err(|e| e.at(name, &shown))?;
                out.flush().map_err(|e| write_err(&shown, e))?;
                Ok(w)
            }
            Staged::Zip { zip, .. } => {
                let zip = zip.as_mut().ok_or(EarkError::OutExists(self.out.clone()))?;
                let opts = SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Stored)
                    .large_file(size_hint >= u32::MAX as u64);
                zip.start_file(below_root, opts).map_err(|e| zip_err(&self.out, e))?;
                hash_copy(input, zip.as_mut()).map_err(|e| e.at(name, &self.out))
            }
        }
    }

    /// Writes `name` from bytes in memory (METS documents, metadata records).
    pub(crate) fn add_bytes(&mut self, name: &str, bytes: &[u8]) -> Result<Written, EarkError> {
        self.add(name, &mut io::Cursor::new(bytes), bytes.len() as u64)
    }

    /// Completes the output (the ZIP's central directory) and gives it its name.
    pub(crate) fn finish(mut self) -> Result<(), EarkError> {
        let out = self.out.clone();
        match &mut self.staged {
            Staged::Zip { zip, tmp, .. } => {
                let zip = zip.take().ok_or(EarkError::OutExists(out.clone()))?;
                let w = zip.finish().map_err(|e| zip_err(&out, e))?;
                let file = w.into_file().map_err(|e| write_err(&out, e))?;
                file.sync_all().map_err(|e| write_err(&out, e))?;
                let tmp = tmp.take().ok_or(EarkError::OutExists(out.clone()))?;
                tmp.persist_noclobber(&out).map_err(|e| match e.error.kind() {
                    io::ErrorKind::AlreadyExists => EarkError::OutExists(out.clone()),
                    _ => write_err(&out, e.error),
                })?;
            }
            Staged::Dir { tmp, done, .. } => {
                // Over an empty folder (rename replaces one), never a filled one.
                std::fs::rename(&*tmp, &out).map_err(|e| match e.kind() {
                    io::ErrorKind::DirectoryNotEmpty | io::ErrorKind::AlreadyExists => {
                        EarkError::OutExists(out.clone())
                    }
                    _ => write_err(&out, e),
                })?;
                *done = true;
            }
        }
        Ok(())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        match &mut self.staged {
            // Cut off first: the ZIP writer's own drop then finalises into nothing.
            Staged::Zip { cut, .. } => cut.now(),
            // Removed before the lock goes, so no cleaner sees it unlocked while it lives.
            Staged::Dir { tmp, done: false, .. } => {
                let _ = std::fs::remove_dir_all(&*tmp);
                if let Some(dir) = &self.made_dir {
                    let _ = std::fs::remove_dir(dir);
                }
            }
            Staged::Dir { .. } => {}
        }
    }
}

/// A copy that failed: reading the input or writing the output.
enum CopyError {
    Read(io::Error),
    Write(io::Error),
}

impl CopyError {
    /// The export's error, the file `name` being written to `out`.
    fn at(self, name: &str, out: &Path) -> EarkError {
        match self {
            CopyError::Read(source) => EarkError::Io { path: PathBuf::from(name), source },
            CopyError::Write(source) => write_err(out, source),
        }
    }
}

/// Copies `input` to `out` in 1 MiB chunks, hashing as it goes.
fn hash_copy(input: &mut dyn Read, out: &mut dyn Write) -> Result<Written, CopyError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Read(e)),
        };
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(CopyError::Write)?;
        size += n as u64;
    }
    Ok(Written { size, sha256: data_encoding::HEXUPPER.encode(&hasher.finalize()) })
}
