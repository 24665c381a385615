//! What webaip needs of a replica, and the filesystem replica.
//!
//! A replica stores objects under keys (`<partition>/<package>/<file>`). It never overwrites on
//! `create`; only `replace` does, and only repairs call it, for a copy proven corrupt.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::StoreError;

/// What a replica says about one stored object without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// Size in bytes.
    pub size: u64,
    /// The SHA-512 recorded with the object (object stores keep it as metadata; a file system
    /// has nowhere to keep it).
    pub sha512: Option<String>,
}

/// A place that holds copies of packages.
pub trait Replica: Send + Sync {
    /// The replica's name in the configuration.
    fn name(&self) -> &str;
    /// Size (and recorded SHA-512) of the object at `key`, or `None` when there is none.
    fn stat(&self, key: &str) -> Result<Option<StoredObject>, StoreError>;
    /// Stores the file `source` at `key`, which must not exist yet: an object that appears
    /// meanwhile is left as it is and this fails with [`StoreError::Exists`].
    fn create(&self, key: &str, source: &Path, size: u64, sha512: &str) -> Result<(), StoreError>;
    /// Stores `source` at `key` whether or not an object is there (repairs only).
    fn replace(&self, key: &str, source: &Path, size: u64, sha512: &str) -> Result<(), StoreError>;
    /// Streams the object at `key` to `sink`, chunk by chunk; returns its length.
    fn read(
        &self,
        key: &str,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError>;
    /// Every key under `prefix` (a package directory), with its size.
    fn list(&self, prefix: &str) -> Result<Vec<(String, u64)>, StoreError>;
    /// The package directories the replica holds (`<partition>/<name>`).
    fn packages(&self) -> Result<Vec<String>, StoreError>;
}

/// A replica in a directory.
pub struct FsReplica {
    name: String,
    root: PathBuf,
}

impl FsReplica {
    /// A replica rooted at `root` (created when first written to).
    pub fn new(name: &str, root: &Path) -> Self {
        FsReplica { name: name.into(), root: root.to_path_buf() }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    fn err(&self, key: &str, e: io::Error) -> StoreError {
        StoreError::Replica { replica: self.name.clone(), key: key.into(), message: e.to_string() }
    }

    /// Copies `source` to a temporary name beside `key` and syncs it.
    fn stage(&self, key: &str, source: &Path) -> Result<tempfile::TempPath, StoreError> {
        let dest = self.path(key);
        let dir = dest.parent().unwrap_or(&self.root);
        fs::create_dir_all(dir).map_err(|e| self.err(key, e))?;
        let tmp = tempfile::Builder::new()
            .prefix(".webaip-upload-")
            .tempfile_in(dir)
            .map_err(|e| self.err(key, e))?;
        let (file, path) = tmp.into_parts();
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let mut input = File::open(source).map_err(|e| self.err(key, e))?;
        io::copy(&mut input, &mut out).map_err(|e| self.err(key, e))?;
        let file = out.into_inner().map_err(|e| self.err(key, e.into_error()))?;
        file.sync_all().map_err(|e| self.err(key, e))?;
        Ok(path)
    }

    fn sync_dir(&self, key: &str) {
        // The new name must survive a crash too; failure to sync a directory is not fatal.
        if let Some(dir) = self.path(key).parent()
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
    }
}

impl Replica for FsReplica {
    fn name(&self) -> &str {
        &self.name
    }

    fn stat(&self, key: &str) -> Result<Option<StoredObject>, StoreError> {
        match fs::metadata(self.path(key)) {
            Ok(m) if m.is_file() => Ok(Some(StoredObject { size: m.len(), sha512: None })),
            Ok(_) => Err(self.err(key, io::Error::other("not a regular file"))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.err(key, e)),
        }
    }

    fn create(&self, key: &str, source: &Path, _size: u64, _sha: &str) -> Result<(), StoreError> {
        let tmp = self.stage(key, source)?;
        // A hard link fails when the name exists: no window in which a copy is overwritten.
        match fs::hard_link(&tmp, self.path(key)) {
            Ok(()) => {
                self.sync_dir(key);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                Err(StoreError::Exists { replica: self.name.clone(), key: key.into() })
            }
            Err(e) => Err(self.err(key, e)),
        }
    }

    fn replace(&self, key: &str, source: &Path, _size: u64, _sha: &str) -> Result<(), StoreError> {
        let tmp = self.stage(key, source)?;
        tmp.persist(self.path(key)).map_err(|e| self.err(key, e.error))?;
        self.sync_dir(key);
        Ok(())
    }

    fn read(
        &self,
        key: &str,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError> {
        let mut f = File::open(self.path(key)).map_err(|e| self.err(key, e))?;
        let mut buf = vec![0u8; 1 << 20];
        let mut n = 0u64;
        loop {
            let k = match f.read(&mut buf) {
                Ok(0) => return Ok(n),
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.err(key, e)),
            };
            sink(&buf[..k]).map_err(|e| self.err(key, e))?;
            n += k as u64;
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let base = self.path(prefix);
        if !base.exists() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for e in walkdir::WalkDir::new(&base).sort_by_file_name() {
            let e = e.map_err(|e| self.err(prefix, e.into()))?;
            if !e.file_type().is_file() {
                continue;
            }
            // An upload interrupted by a crash leaves a `.webaip-upload-*` file: listed, so a
            // check reports it as extra rather than hiding it.
            let rel = e.path().strip_prefix(&self.root).unwrap_or(e.path());
            let size = e.metadata().map_err(|x| self.err(prefix, x.into()))?.len();
            out.push((rel.to_string_lossy().replace('\\', "/"), size));
        }
        Ok(out)
    }

    fn packages(&self) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        let Ok(parts) = fs::read_dir(&self.root) else { return Ok(out) };
        for part in parts.flatten() {
            let p = part.file_name().to_string_lossy().into_owned();
            if p.len() != 2 || !part.path().is_dir() {
                continue;
            }
            for pkg in fs::read_dir(part.path()).map_err(|e| self.err(&p, e))?.flatten() {
                if pkg.path().is_dir() {
                    out.push(format!("{p}/{}", pkg.file_name().to_string_lossy()));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

/// Writes a stream to a file while hashing it; used to fetch copies.
pub(crate) struct HashingFile {
    pub out: BufWriter<File>,
    pub hasher: sha2::Sha512,
    pub len: u64,
}

impl HashingFile {
    /// Creates `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        use sha2::Digest;
        Ok(HashingFile {
            out: BufWriter::with_capacity(1 << 20, File::create(path)?),
            hasher: sha2::Sha512::new(),
            len: 0,
        })
    }

    /// Takes the next chunk.
    pub fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        use sha2::Digest;
        self.hasher.update(chunk);
        self.len += chunk.len() as u64;
        self.out.write_all(chunk)
    }

    /// Flushes and syncs; returns the length and SHA-512 (hex).
    pub fn finish(self) -> io::Result<(u64, String)> {
        use sha2::Digest;
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok((self.len, crate::formats::digest::hex(&self.hasher.finalize())))
    }
}
