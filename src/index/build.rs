//! `webaip index`: the sorted index of WARC files or of packages, written as CDXJ, classic
//! 11-field CDX or ZipNum, atomically (a failed run leaves no file that looks complete).
//!
//! A package's index holds its `content/` containers only: `original/` holds harvested
//! files as they were before link rewriting (the same URLs as their rewritten captures, which
//! replay must find instead), `viral/` holds infected records, which replay must not serve.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::cdxj::IndexEntry;
use super::sort::LineSorter;
use super::warc::{EntryOptions, IndexError, index_warc};

/// The header line of an 11-field CDX (what `cdxj-indexer -11` writes).
pub const CDX11_HEADER: &str = " CDX N b a m s k r M S V g";
/// Lines per compressed block of a ZipNum index, as pywb's tools write them.
pub const ZIPNUM_LINES: usize = 3000;
/// Memory for sorting, shared by the parallel readers.
pub const SORT_BUDGET: usize = 64 << 20;

/// An index's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexFormat {
    /// CDXJ lines (pywb, cdxj-indexer).
    Cdxj,
    /// The classic 11-field CDX.
    Cdx,
    /// ZipNum: gzip blocks of CDXJ lines (`.cdx.gz`), their summary (`.idx`) and where the
    /// blocks are (`.loc`).
    ZipNum {
        /// Lines per block.
        lines: usize,
    },
}

/// One container to index: its path and the name the index gives it.
#[derive(Debug, Clone)]
pub struct IndexInput {
    /// Where it is.
    pub path: PathBuf,
    /// The index's `filename`: the file's name, or its path inside its package.
    pub filename: String,
}

/// The containers of the arguments: a WARC file as its file name; a package folder's
/// `content/` WARCs as `content/NAME`, in name order.
pub fn resolve_inputs(args: &[PathBuf]) -> Result<Vec<IndexInput>, IndexError> {
    let mut inputs = Vec::new();
    for arg in args {
        let shown = arg.display().to_string();
        if arg.is_dir() {
            let content = arg.join("content");
            if !arg.join("METS.xml").is_file() || !content.is_dir() {
                return Err(IndexError::NotInput(shown));
            }
            let io_err = |e| IndexError::Io { path: content.display().to_string(), source: e };
            let mut names = Vec::new();
            for e in fs::read_dir(&content).map_err(io_err)? {
                let e = e.map_err(io_err)?;
                let name = e.file_name().to_string_lossy().into_owned();
                if e.file_type().map_err(io_err)?.is_file()
                    && (name.ends_with(".warc") || name.ends_with(".warc.gz"))
                {
                    names.push(name);
                }
            }
            names.sort();
            inputs.extend(
                names.into_iter().map(|n| IndexInput {
                    path: content.join(&n),
                    filename: format!("content/{n}"),
                }),
            );
        } else if arg.is_file() {
            let name = arg.file_name().map(|n| n.to_string_lossy().into_owned());
            inputs.push(IndexInput { path: arg.clone(), filename: name.unwrap_or(shown) });
        } else {
            return Err(IndexError::NotInput(shown));
        }
    }
    Ok(inputs)
}

/// The line of `entry` in `format` (without its line end), appended to `out`.
pub fn format_line(entry: &IndexEntry, format: IndexFormat, out: &mut String) {
    match format {
        IndexFormat::Cdxj | IndexFormat::ZipNum { .. } => entry.write_cdxj(out),
        IndexFormat::Cdx => entry.write_cdx11(out),
    }
    if out.ends_with('\n') {
        out.pop();
    }
}

/// Indexes `inputs` with `jobs` files read at once, into sorted lines of `format`.
pub fn sort_inputs(
    inputs: &[IndexInput],
    format: IndexFormat,
    opts: EntryOptions,
    jobs: usize,
    budget: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<LineSorter>, IndexError> {
    let jobs = jobs.clamp(1, inputs.len().max(1));
    let next = AtomicUsize::new(0);
    let failed: Mutex<Option<(usize, IndexError)>> = Mutex::new(None);
    let sorters: Vec<LineSorter> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                s.spawn(|| {
                    let mut sorter = LineSorter::new(budget / jobs);
                    let mut line = String::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(input) = inputs.get(i) else { break };
                        if failed.lock().map_or(true, |f| f.is_some()) {
                            break;
                        }
                        let r = index_warc(&input.path, &input.filename, opts, &mut |e| {
                            line.clear();
                            format_line(&e, format, &mut line);
                            sorter.push(line.as_bytes())
                        });
                        match r {
                            Ok(_) => progress(fs::metadata(&input.path).map_or(0, |m| m.len())),
                            Err(e) => {
                                if let Ok(mut f) = failed.lock() {
                                    // The first input's error in argument order is reported.
                                    if f.as_ref().is_none_or(|(j, _)| i < *j) {
                                        *f = Some((i, e));
                                    }
                                }
                                break;
                            }
                        }
                    }
                    sorter
                })
            })
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    if let Some((_, e)) = failed.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(sorters)
}

/// Writes the sorted lines of `sorters` to `output` in `format`, atomically: into temporary
/// files beside it, renamed into place once complete (for ZipNum the `.idx`, which names the
/// rest, last). Returns the files written.
pub fn write_index(
    sorters: Vec<LineSorter>,
    format: IndexFormat,
    output: &Path,
) -> Result<Vec<PathBuf>, IndexError> {
    let io_err = |p: &Path| {
        let path = p.display().to_string();
        move |e| IndexError::Io { path: path.clone(), source: e }
    };
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temp = |p: &Path| tempfile::NamedTempFile::new_in(&dir).map_err(io_err(p));
    match format {
        IndexFormat::Cdxj | IndexFormat::Cdx => {
            let tmp = temp(output)?;
            let mut out = BufWriter::with_capacity(1 << 20, tmp);
            if format == IndexFormat::Cdx {
                writeln!(out, "{CDX11_HEADER}").map_err(io_err(output))?;
            }
            LineSorter::merge_into(sorters, &mut |l| {
                out.write_all(l)?;
                out.write_all(b"\n")
            })
            .map_err(io_err(output))?;
            let tmp = out.into_inner().map_err(|e| io_err(output)(e.into_error()))?;
            super::output::publish(tmp, output)?;
            Ok(vec![output.to_path_buf()])
        }
        IndexFormat::ZipNum { lines } => super::zipnum::write(sorters, lines, output, &temp),
    }
}

/// Indexes `args` (WARC files and package folders) into `output`; the files written.
pub fn index_paths(
    args: &[PathBuf],
    format: IndexFormat,
    opts: EntryOptions,
    jobs: usize,
    output: &Path,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<PathBuf>, IndexError> {
    let inputs = resolve_inputs(args)?;
    let sorters = sort_inputs(&inputs, format, opts, jobs, SORT_BUDGET, progress)?;
    write_index(sorters, format, output)
}

/// Writes sorted lines to a writer (stdout): the CDX header first for CDX.
pub fn write_index_to(
    sorters: Vec<LineSorter>,
    format: IndexFormat,
    out: &mut dyn Write,
) -> io::Result<()> {
    if format == IndexFormat::Cdx {
        writeln!(out, "{CDX11_HEADER}")?;
    }
    LineSorter::merge_into(sorters, &mut |l| {
        out.write_all(l)?;
        out.write_all(b"\n")
    })
}
