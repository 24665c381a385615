//! ZipNum, the sharded index pywb reads (`pywb.warcserver.index.zipnum`): `NAME.cdx.gz` holds
//! the sorted CDXJ lines in gzip members of a fixed number of lines; `NAME.idx` has one line
//! per member, `KEY TIMESTAMP<TAB>PART<TAB>OFFSET<TAB>LENGTH<TAB>N` (the member's first
//! line's key and timestamp, its place, its number from 1), which pywb searches by binary
//! search; `NAME.loc` maps the part name `NAME` to its file, `NAME<TAB>NAME.cdx.gz` (relative
//! to the `.loc`).

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use tempfile::NamedTempFile;

use super::sort::LineSorter;
use super::warc::IndexError;

/// The three files of a ZipNum index named by `output` (`NAME`, `NAME.idx` or `NAME.cdx.gz`):
/// (blocks, summary, locations, part name).
pub fn paths(output: &Path) -> (PathBuf, PathBuf, PathBuf, String) {
    let text = output.to_string_lossy();
    let base = text
        .strip_suffix(".idx")
        .or_else(|| text.strip_suffix(".cdx.gz"))
        .unwrap_or(&text)
        .to_string();
    let part = Path::new(&base).file_name().map_or(String::new(), |n| n.to_string_lossy().into());
    (
        PathBuf::from(format!("{base}.cdx.gz")),
        PathBuf::from(format!("{base}.idx")),
        PathBuf::from(format!("{base}.loc")),
        part,
    )
}

/// One block being gathered.
struct Blocks<W: Write> {
    data: BufWriter<NamedTempFile>,
    idx: W,
    part: String,
    offset: u64,
    number: u64,
    first: Vec<u8>,
    held: Vec<u8>,
    count: usize,
}

impl<W: Write> Blocks<W> {
    fn flush_block(&mut self) -> io::Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let mut gz =
            GzEncoder::new(Vec::with_capacity(self.held.len() / 4), Compression::default());
        gz.write_all(&self.held)?;
        let member = gz.finish()?;
        self.data.write_all(&member)?;
        self.number += 1;
        // The key and timestamp of the block's first line.
        let key_end = self
            .first
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b' ')
            .nth(1)
            .map_or(self.first.len(), |(i, _)| i);
        self.idx.write_all(&self.first[..key_end])?;
        writeln!(self.idx, "\t{}\t{}\t{}\t{}", self.part, self.offset, member.len(), self.number)?;
        self.offset += member.len() as u64;
        self.held.clear();
        self.count = 0;
        Ok(())
    }

    fn push(&mut self, line: &[u8], lines: usize) -> io::Result<()> {
        if self.count == 0 {
            self.first.clear();
            self.first.extend_from_slice(line);
        }
        self.held.extend_from_slice(line);
        self.held.push(b'\n');
        self.count += 1;
        if self.count >= lines {
            self.flush_block()?;
        }
        Ok(())
    }
}

/// Writes the ZipNum index of the sorted lines; `temp` makes a temporary file beside an
/// output. The `.idx` is renamed into place last.
pub(crate) fn write(
    sorters: Vec<LineSorter>,
    lines: usize,
    output: &Path,
    temp: &dyn Fn(&Path) -> Result<NamedTempFile, IndexError>,
) -> Result<Vec<PathBuf>, IndexError> {
    let (data_path, idx_path, loc_path, part) = paths(output);
    let io_err = |p: &Path| {
        let path = p.display().to_string();
        move |e| IndexError::Io { path: path.clone(), source: e }
    };
    let mut blocks = Blocks {
        data: BufWriter::with_capacity(1 << 20, temp(&data_path)?),
        idx: BufWriter::new(temp(&idx_path)?),
        part: part.clone(),
        offset: 0,
        number: 0,
        first: Vec::new(),
        held: Vec::new(),
        count: 0,
    };
    let lines = lines.max(1);
    LineSorter::merge_into(sorters, &mut |l| blocks.push(l, lines)).map_err(io_err(&data_path))?;
    blocks.flush_block().map_err(io_err(&data_path))?;
    let finish = |w: BufWriter<NamedTempFile>, p: &Path| -> Result<NamedTempFile, IndexError> {
        w.into_inner().map_err(|e| io_err(p)(e.into_error()))
    };
    let data = finish(blocks.data, &data_path)?;
    let idx = finish(blocks.idx, &idx_path)?;
    let mut loc = temp(&loc_path)?;
    let data_name = data_path.file_name().map_or(String::new(), |n| n.to_string_lossy().into());
    writeln!(loc, "{part}\t{data_name}").map_err(io_err(&loc_path))?;
    super::output::publish(data, &data_path)?;
    super::output::publish(loc, &loc_path)?;
    super::output::publish(idx, &idx_path)?;
    Ok(vec![idx_path, data_path, loc_path])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_files_are_named_from_the_output() {
        for out in ["d/all", "d/all.idx", "d/all.cdx.gz"] {
            let (data, idx, loc, part) = paths(Path::new(out));
            assert_eq!(data, Path::new("d/all.cdx.gz"));
            assert_eq!(idx, Path::new("d/all.idx"));
            assert_eq!(loc, Path::new("d/all.loc"));
            assert_eq!(part, "all");
        }
    }
}
