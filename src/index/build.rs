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
use super::members::{MIN_SPLIT, Stop, Walker, index_from, index_warc, is_gzip_file};
use super::method::Pairer;
use super::sort::LineSorter;
use super::warc::{EntryOptions, IndexError};

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
            if !arg.join("METS.xml").is_file() || !arg.join("content").is_dir() {
                return Err(IndexError::NotInput(shown));
            }
            // A link, FIFO or device of a container's name, or a listed container that is
            // absent, fails the run: an index that silently lacks a container looks complete.
            let names = crate::layout::package_containers(arg)?;
            inputs
                .extend(names.into_iter().map(|n| IndexInput { path: arg.join(&n), filename: n }));
        } else if arg.is_file() {
            if is_arc(arg) {
                return Err(IndexError::Arc(shown));
            }
            let name = arg.file_name().map(|n| n.to_string_lossy().into_owned());
            inputs.push(IndexInput { path: arg.clone(), filename: name.unwrap_or(shown) });
        } else {
            return Err(IndexError::NotInput(shown));
        }
    }
    refuse_same_names(&inputs)?;
    Ok(inputs)
}

/// True when `path` starts as an ARC file does (`filedesc://`, plain or in gzip). A file that
/// cannot be read is left to the reader, which says why.
fn is_arc(path: &Path) -> bool {
    use std::io::{Read, Seek};
    let Ok(mut file) = crate::layout::open_user_file(path) else { return false };
    let mut head = Vec::with_capacity(16);
    let _ = (&mut file).take(11).read_to_end(&mut head);
    if head.starts_with(&[0x1f, 0x8b]) && file.rewind().is_ok() {
        head.clear();
        let _ = flate2::read::GzDecoder::new(file).take(11).read_to_end(&mut head);
    }
    head.starts_with(b"filedesc://")
}

/// Refuses inputs that the index would give one `filename` (two `x.warc.gz` of different
/// folders): its lines could not say which holds their record.
fn refuse_same_names(inputs: &[IndexInput]) -> Result<(), IndexError> {
    let mut seen = std::collections::HashMap::new();
    for input in inputs {
        if let Some(first) = seen.insert(&input.filename, &input.path) {
            return Err(IndexError::SameName {
                name: input.filename.clone(),
                first: first.display().to_string(),
                second: input.path.display().to_string(),
            });
        }
    }
    Ok(())
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

/// Index lines of one format, sorted: entries in, lines out through a [`LineSorter`].
struct FormattedLines {
    sorter: LineSorter,
    format: IndexFormat,
    /// The line being made (kept to reuse its allocation).
    line: String,
}

impl FormattedLines {
    fn new(budget: usize, format: IndexFormat) -> Self {
        FormattedLines { sorter: LineSorter::new(budget), format, line: String::new() }
    }

    /// Adds the line of `e`.
    fn push(&mut self, e: IndexEntry) -> io::Result<()> {
        self.line.clear();
        format_line(&e, self.format, &mut self.line);
        self.sorter.push(self.line.as_bytes())
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
    let file_len = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
    if let [input] = inputs
        && jobs > 1
        && is_gzip_file(&input.path)
        && file_len(&input.path) >= MIN_SPLIT
    {
        let sorters = sort_split(input, format, opts, jobs, budget)?;
        progress(file_len(&input.path));
        return Ok(sorters);
    }
    let jobs = jobs.clamp(1, inputs.len().max(1));
    let queue = InputQueue { inputs, next: AtomicUsize::new(0), failed: Mutex::new(None) };
    let sorters: Vec<LineSorter> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                s.spawn(|| {
                    let mut lines = FormattedLines::new(budget / jobs, format);
                    while let Some((i, input)) = queue.take() {
                        match index_warc(&input.path, &input.filename, opts, &mut |e| lines.push(e))
                        {
                            Ok(_) => progress(file_len(&input.path)),
                            Err(e) => {
                                queue.fail(i, e);
                                break;
                            }
                        }
                    }
                    lines.sorter
                })
            })
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    if let Some((_, e)) = queue.failed.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(sorters)
}

/// The inputs the threads of [`sort_inputs`] take one by one, and the first failure.
struct InputQueue<'a> {
    inputs: &'a [IndexInput],
    next: AtomicUsize,
    /// The failure of the first input in argument order that failed, and its place.
    failed: Mutex<Option<(usize, IndexError)>>,
}

impl<'a> InputQueue<'a> {
    /// The next input to index, none once one failed.
    fn take(&self) -> Option<(usize, &'a IndexInput)> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let input = self.inputs.get(i)?;
        match self.failed.lock().map_or(true, |f| f.is_some()) {
            true => None,
            false => Some((i, input)),
        }
    }

    /// Records the failure of input `i` (the first input's error in argument order is
    /// reported).
    fn fail(&self, i: usize, e: IndexError) {
        if let Ok(mut f) = self.failed.lock()
            && f.as_ref().is_none_or(|(j, _)| i < *j)
        {
            *f = Some((i, e));
        }
    }
}

/// How one part of a split file was walked: where and why it stopped, whether a request and
/// response pair across the next part's start, and the record still unpaired.
struct PartWalk {
    at: u64,
    stop: Stop,
    across: bool,
    pairer: Pairer,
}

/// One gzip file indexed by `parts` threads (see [`super::members`]): part k starts at a guessed
/// member boundary; its lines are kept when part k-1, itself kept, stops exactly there. From
/// the first part not landed on exactly, one thread goes on alone to the end of the file.
fn sort_split(
    input: &IndexInput,
    format: IndexFormat,
    opts: EntryOptions,
    parts: usize,
    budget: usize,
) -> Result<Vec<LineSorter>, IndexError> {
    let starts = part_starts(input, opts, parts)?;
    let budget = budget / starts.len();
    let starts = &starts;
    let results: Vec<(FormattedLines, Result<PartWalk, IndexError>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..starts.len())
            .map(|k| {
                s.spawn(move || {
                    let mut lines = FormattedLines::new(budget, format);
                    let walked = walk_part(input, opts, starts, k, &mut lines);
                    (lines, walked)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let io_err = |e| IndexError::Io { path: input.path.display().to_string(), source: e };
    let mut kept = Vec::new();
    for (k, (mut lines, walked)) in results.into_iter().enumerate() {
        // Only kept parts get here: their errors are the file's.
        let PartWalk { at, stop, across, mut pairer } = walked?;
        let landed = stop == Stop::Limit && starts.get(k + 1) == Some(&at) && !across;
        if stop == Stop::End || landed {
            // The next part starts at a record that does not pair with this part's last.
            pairer.finish(&mut |e| lines.push(e)).map_err(io_err)?;
            kept.push(lines.sorter);
            if stop == Stop::End {
                return Ok(kept);
            }
            continue;
        }
        kept.push(lines.sorter);
        let mut rest = FormattedLines::new(budget, format);
        index_from(&input.path, &input.filename, opts, at, pairer, &mut |e| rest.push(e))?;
        kept.push(rest.sorter);
        return Ok(kept);
    }
    Ok(kept)
}

/// Where the parts of a split file start: 0, then a member boundary guessed near each k/parts
/// of the file (fewer parts when none is found).
fn part_starts(
    input: &IndexInput,
    opts: EntryOptions,
    parts: usize,
) -> Result<Vec<u64>, IndexError> {
    let io_err = |e| IndexError::Io { path: input.path.display().to_string(), source: e };
    let mut walker = Walker::open(&input.path, &input.filename, opts)?;
    let len = walker.file_len();
    let mut starts = vec![0u64];
    for k in 1..parts as u64 {
        let from = (len * k / parts as u64).max(starts.last().map_or(0, |s| s + 1));
        if let Some(b) = walker.guess_boundary(from).map_err(io_err)? {
            starts.push(b);
        }
    }
    Ok(starts)
}

/// Walks part `k` of a split file into `lines`, up to the next part's start.
fn walk_part(
    input: &IndexInput,
    opts: EntryOptions,
    starts: &[u64],
    k: usize,
    lines: &mut FormattedLines,
) -> Result<PartWalk, IndexError> {
    let io_err = |e| IndexError::Io { path: input.path.display().to_string(), source: e };
    let limit = starts.get(k + 1).copied().unwrap_or(u64::MAX);
    let mut w = Walker::open(&input.path, &input.filename, opts)?;
    let (at, stop) = w.walk(starts[k], limit, &mut |e| lines.push(e))?;
    // A request and response on both sides of the next part's start are paired by reading on
    // in order.
    let across = match starts.get(k + 1) {
        Some(&next) if (at, stop) == (next, Stop::Limit) => w.pairs_across(next).map_err(io_err)?,
        _ => false,
    };
    Ok(PartWalk { at, stop, across, pairer: std::mem::take(&mut w.pairer) })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::warc::writer::{RecordSpec, WarcWriter};

    fn response(w: &mut WarcWriter<Vec<u8>>, n: usize, body: &[u8]) {
        let spec = RecordSpec {
            warc_type: "response".into(),
            record_id: format!("<urn:uuid:{n}>"),
            date: "2024-01-02T03:04:05Z".into(),
            target_uri: Some(format!("http://e.org/{n}")),
            payload_digest: true,
            ..RecordSpec::default()
        };
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
        w.write_record(&spec, &[head.as_bytes(), body].concat(), head.len() as u64).unwrap();
    }

    /// A file of POST requests each followed by its response, split between threads at
    /// guessed boundaries that fall between a request and its response: the lines are those
    /// of one walk, every response keyed by its method.
    #[test]
    fn a_pair_across_a_split_is_paired() {
        let mut w = WarcWriter::new(Vec::new(), 6);
        for n in 0..300 {
            let uri = Some(format!("http://e.org/{n}"));
            let id = |k: usize| format!("<urn:uuid:{k}>");
            let body = format!("a={n}&pad={}", "p".repeat(n * 7 % 500));
            let req = format!(
                "POST /{n} HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let spec = RecordSpec {
                warc_type: "request".into(),
                record_id: id(2 * n),
                date: "2024-01-02T03:04:05Z".into(),
                target_uri: uri.clone(),
                ..RecordSpec::default()
            };
            w.write_record(&spec, req.as_bytes(), 0).unwrap();
            let spec = RecordSpec {
                warc_type: "response".into(),
                record_id: id(2 * n + 1),
                concurrent_to: Some(id(2 * n)),
                ..spec
            };
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
            let page = format!("{head}{}", format!("page {n}\n").repeat(n % 40 + 1));
            w.write_record(&spec, page.as_bytes(), head.len() as u64).unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("post.warc.gz");
        std::fs::write(&path, w.finish().unwrap()).unwrap();
        let input = IndexInput { path, filename: "post.warc.gz".into() };
        let opts = EntryOptions::default();
        let one = lines(
            sort_inputs(std::slice::from_ref(&input), IndexFormat::Cdxj, opts, 1, 1 << 20, &|_| ())
                .unwrap(),
        );
        assert_eq!(one.iter().filter(|l| l.contains("?__wb_method=post&a=")).count(), 300);
        for parts in [2, 3, 5, 8] {
            let split = lines(sort_split(&input, IndexFormat::Cdxj, opts, parts, 1 << 20).unwrap());
            assert_eq!(split, one, "{parts} parts");
        }
    }

    fn lines(sorters: Vec<LineSorter>) -> Vec<String> {
        let mut out = Vec::new();
        LineSorter::merge_into(sorters, &mut |l| {
            out.push(String::from_utf8_lossy(l).into_owned());
            Ok(())
        })
        .unwrap();
        out
    }

    /// One file split between threads gives the lines one thread gives, when the guessed
    /// boundary is a member's start and when it is not: here the middle of the file is a record
    /// stored uncompressed whose payload holds a gzip member of a fake `WARC/1.1` record, which
    /// the guess takes for a boundary and the walk from the start never lands on.
    #[test]
    fn a_split_file_gives_the_lines_of_one_walk() {
        let text = |n: usize| format!("line {n} of a page\n").repeat(20 + n % 50).into_bytes();
        let built = crate::formats::warc::test_fixtures::trapped_containers(&response, &text);
        let (fake, dir) = (built.fake, tempfile::tempdir().unwrap());
        for (name, bytes) in [("plain.warc.gz", built.plain), ("trap.warc.gz", built.trapped)] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let input = IndexInput { path: path.clone(), filename: name.into() };
            let opts = EntryOptions { record_ids: true, ..EntryOptions::default() };
            let one = lines(
                sort_inputs(
                    std::slice::from_ref(&input),
                    IndexFormat::Cdxj,
                    opts,
                    1,
                    1 << 20,
                    &|_| (),
                )
                .unwrap(),
            );
            assert_eq!(one.len(), if name == "plain.warc.gz" { 400 } else { 401 });
            let mut walker = Walker::open(&path, name, opts).unwrap();
            let guess = walker.guess_boundary(bytes.len() as u64 / 2).unwrap().unwrap();
            let fake_at = memchr::memmem::find(&bytes[bytes.len() / 2..], &fake);
            // The guess in the trapped file is the fake member inside the payload.
            assert_eq!(
                name == "trap.warc.gz",
                fake_at.map(|i| i + bytes.len() / 2) == Some(guess as usize)
            );
            for parts in [2, 3] {
                let split =
                    lines(sort_split(&input, IndexFormat::Cdxj, opts, parts, 1 << 20).unwrap());
                assert_eq!(split, one, "{name}, {parts} parts");
            }
        }
    }
}
