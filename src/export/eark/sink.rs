//! Where an E-ARK package is written: a folder, or a ZIP of stored entries under one root
//! folder. Each file is streamed in through a SHA-256 hasher, so memory does not depend on its
//! size and its checksum is known when it is written.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use super::EarkError;
use crate::layout;

/// Size and SHA-256 (upper-case hex, as E-ARK examples give it) of a file written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    pub size: u64,
    pub sha256: String,
}

/// The output: a folder (the package root) or a ZIP whose entries are below `root/`.
pub(crate) enum Sink {
    Dir(PathBuf),
    Zip { zip: Box<ZipWriter<BufWriter<File>>>, root: String, path: PathBuf },
}

impl Sink {
    /// A new output at `out` (a `.zip` file or a folder, which must not exist or be empty).
    pub(crate) fn create(out: &Path) -> Result<Sink, EarkError> {
        let io_err = |e| EarkError::Io { path: out.to_path_buf(), source: e };
        if out.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip")) {
            let root = out.file_stem().and_then(|s| s.to_str()).unwrap_or("package").to_string();
            let file = File::options().write(true).create_new(true).open(out).map_err(io_err)?;
            let zip = Box::new(ZipWriter::new(BufWriter::new(file)));
            return Ok(Sink::Zip { zip, root, path: out.to_path_buf() });
        }
        if out.exists() && std::fs::read_dir(out).map_err(io_err)?.next().is_some() {
            return Err(EarkError::OutExists(out.to_path_buf()));
        }
        std::fs::create_dir_all(out).map_err(io_err)?;
        Ok(Sink::Dir(out.to_path_buf()))
    }

    /// The name of the package's root folder.
    pub(crate) fn root_name(&self) -> String {
        match self {
            Sink::Dir(p) => p.file_name().and_then(|s| s.to_str()).unwrap_or("package").into(),
            Sink::Zip { root, .. } => root.clone(),
        }
    }

    /// Writes `name` (a `/`-separated path below the root) from `input`, `size_hint` bytes.
    pub(crate) fn add(
        &mut self,
        name: &str,
        input: &mut dyn Read,
        size_hint: u64,
    ) -> Result<Written, EarkError> {
        match self {
            Sink::Dir(root) => {
                let out = layout::create_in(root, name).map_err(EarkError::Confine)?;
                let mut out = BufWriter::with_capacity(1 << 20, out);
                let w =
                    hash_copy(input, &mut out).map_err(|e| EarkError::io(&root.join(name), e))?;
                out.flush().map_err(|e| EarkError::io(&root.join(name), e))?;
                Ok(w)
            }
            Sink::Zip { zip, root, path } => {
                let opts = SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Stored)
                    .large_file(size_hint >= u32::MAX as u64);
                let entry = format!("{root}/{name}");
                zip.start_file(entry, opts)
                    .map_err(|e| EarkError::Zip { path: path.clone(), source: e })?;
                hash_copy(input, zip).map_err(|e| EarkError::io(path, e))
            }
        }
    }

    /// Writes `name` from bytes in memory (METS documents, metadata records).
    pub(crate) fn add_bytes(&mut self, name: &str, bytes: &[u8]) -> Result<Written, EarkError> {
        self.add(name, &mut io::Cursor::new(bytes), bytes.len() as u64)
    }

    /// Closes the output (the ZIP's central directory).
    pub(crate) fn finish(self) -> Result<(), EarkError> {
        if let Sink::Zip { zip, path, .. } = self {
            let mut out =
                zip.finish().map_err(|e| EarkError::Zip { path: path.clone(), source: e })?;
            out.flush().map_err(|e| EarkError::io(&path, e))?;
        }
        Ok(())
    }
}

/// Copies `input` to `out` in 1 MiB chunks, hashing as it goes.
fn hash_copy(input: &mut dyn Read, out: &mut dyn Write) -> io::Result<Written> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])?;
        size += n as u64;
    }
    Ok(Written { size, sha256: data_encoding::HEXUPPER.encode(&hasher.finalize()) })
}
