//! The WACZ's ZIP, written member by member: every member stored (the specification forbids
//! compressing them: readers reach records by offset through HTTP range requests), its
//! SHA-256 computed as it is written, for `datapackage.json`. Memory stays one buffer whatever
//! the members' sizes; a member over 4 GiB gets ZIP64 fields.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::formats::digest::Sha512;

use super::WaczError;
use crate::formats::digest::hex;
use crate::formats::severable::{Cut, Severable};

/// Bytes read and written at a time.
const CHUNK: usize = 1 << 20;

/// One member as `datapackage.json` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Resource {
    /// Its name (the file name, lower-case, as py-wacz names resources).
    pub name: String,
    /// Its path in the WACZ.
    pub path: String,
    /// `sha256:` and its SHA-256, hex.
    pub hash: String,
    /// Its size.
    pub bytes: u64,
}

/// A member written: what the datapackage lists, and its SHA-512 when asked for.
pub(crate) struct Written {
    pub resource: Resource,
    pub sha512: Option<String>,
}

/// The ZIP being written: cut off when dropped unfinished, so the zip crate's drop finalises
/// into nothing and prints nothing.
pub(crate) struct WaczZip {
    /// Taken by [`WaczZip::finish`].
    zip: Option<zip::ZipWriter<Severable>>,
    cut: Cut,
    /// The output (for errors).
    path: PathBuf,
    modified: zip::DateTime,
    buf: Vec<u8>,
}

impl WaczZip {
    /// A ZIP written to `file` (at `path`); every member dated `modified`.
    pub(crate) fn new(file: File, path: &Path, modified: chrono::DateTime<chrono::Utc>) -> Self {
        use chrono::{Datelike, Timelike};
        let m = modified;
        // ZIP dates start in 1980; an earlier clock gives the earliest.
        let modified = zip::DateTime::from_date_and_time(
            m.year().clamp(1980, 2107) as u16,
            m.month() as u8,
            m.day() as u8,
            m.hour() as u8,
            m.minute() as u8,
            m.second().min(59) as u8,
        )
        .unwrap_or_default();
        let (file, cut) = Severable::new(file);
        WaczZip {
            zip: Some(zip::ZipWriter::new(file)),
            cut,
            path: path.to_path_buf(),
            modified,
            buf: vec![0; CHUNK],
        }
    }

    /// Writes member `name` from `from` (`len` bytes expected), stored; `sha512`: also hash
    /// it with SHA-512 (to check it against what the package states). `progress` is told the
    /// bytes as they are written.
    pub(crate) fn add(
        &mut self,
        name: &str,
        from: &mut dyn Read,
        (len, sha512): (u64, bool),
        progress: &dyn Fn(u64),
    ) -> Result<Written, WaczError> {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .last_modified_time(self.modified)
            .large_file(len >= u32::MAX as u64);
        let zip = self.zip.as_mut().ok_or(WaczError::Internal("writing a finished WACZ"))?;
        zip.start_file(name, options).map_err(|e| zip_err(&self.path, e))?;
        let mut sha = Sha256::new();
        let mut long = sha512.then(Sha512::new);
        let mut bytes = 0u64;
        loop {
            let n = from
                .read(&mut self.buf)
                .map_err(|source| WaczError::Read { member: name.to_string(), source })?;
            if n == 0 {
                break;
            }
            let chunk = &self.buf[..n];
            sha.update(chunk);
            if let Some(l) = long.as_mut() {
                l.update(chunk);
            }
            zip.write_all(chunk)
                .map_err(|source| WaczError::Io { path: self.path.clone(), source })?;
            bytes += n as u64;
            progress(n as u64);
        }
        let base = name.rsplit('/').next().unwrap_or(name);
        let resource = Resource {
            name: resource_name(base),
            path: name.to_string(),
            hash: format!("sha256:{}", hex(&sha.finalize())),
            bytes,
        };
        Ok(Written { resource, sha512: long.map(|l| hex(&l.finalize())) })
    }

    /// Writes the central directory; the file, complete.
    pub(crate) fn finish(mut self) -> Result<File, WaczError> {
        let zip = self.zip.take().ok_or(WaczError::Internal("finishing a WACZ twice"))?;
        let file = zip.finish().map_err(|e| zip_err(&self.path, e))?;
        file.into_file().map_err(|source| WaczError::Io { path: self.path.clone(), source })
    }
}

impl Drop for WaczZip {
    fn drop(&mut self) {
        self.cut.now();
    }
}

/// A zip crate error: its I/O errors are the output's, said in words.
fn zip_err(path: &Path, e: zip::result::ZipError) -> WaczError {
    match e {
        zip::result::ZipError::Io(source) => WaczError::Io { path: path.to_path_buf(), source },
        source => WaczError::Zip { path: path.to_path_buf(), source },
    }
}

/// A datapackage resource name: lower-case letters, digits, `.`, `_` and `-` (the Frictionless
/// Data pattern), anything else as `-`.
fn resource_name(file: &str) -> String {
    file.chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .collect()
}
