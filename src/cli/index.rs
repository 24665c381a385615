//! `webaip index`: the sorted access index of WARC files or packages (CDXJ, CDX, ZipNum).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use webaip::index::build::{self, IndexFormat, ZIPNUM_LINES};
use webaip::index::warc::EntryOptions;

use super::progress;

/// An index format on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    /// CDXJ, as pywb and cdxj-indexer write it.
    Cdxj,
    /// Classic 11-field CDX (` CDX N b a m s k r M S V g`).
    Cdx,
    /// ZipNum: `NAME.cdx.gz` blocks, `NAME.idx` summary, `NAME.loc` (needs `-o NAME`).
    Zipnum,
}

/// Arguments of `webaip index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// WARC files (one gzip member per record, or plain), or package folders (their
    /// `content/` containers, named `content/NAME` in the index).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The index's format.
    #[arg(long, value_enum, default_value = "cdxj")]
    format: FormatArg,
    /// Write the index here (atomically) instead of to standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Files read at once.
    #[arg(long, short, default_value_t = 1)]
    jobs: usize,
    /// Add each record's `WARC-Record-ID` as the field `recordId`.
    #[arg(long)]
    record_ids: bool,
    /// ZipNum: lines per compressed block.
    #[arg(long, default_value_t = ZIPNUM_LINES)]
    zipnum_lines: usize,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: IndexArgs) -> anyhow::Result<i32> {
    let format = match args.format {
        FormatArg::Cdxj => IndexFormat::Cdxj,
        FormatArg::Cdx => IndexFormat::Cdx,
        FormatArg::Zipnum => IndexFormat::ZipNum { lines: args.zipnum_lines },
    };
    let opts = EntryOptions { record_ids: args.record_ids };
    let inputs = build::resolve_inputs(&args.inputs)?;
    let total = inputs.iter().filter_map(|i| std::fs::metadata(&i.path).ok()).map(|m| m.len());
    let bar = progress::bytes_bar(total.sum(), args.quiet || args.output.is_none());
    let sorters =
        build::sort_inputs(&inputs, format, opts, args.jobs, build::SORT_BUDGET, &|n| bar.inc(n))?;
    bar.finish_and_clear();
    match (&args.output, format) {
        (Some(out), _) => {
            build::write_index(sorters, format, out)?;
        }
        (None, IndexFormat::ZipNum { .. }) => {
            anyhow::bail!("a ZipNum index is three files: name them with -o NAME");
        }
        (None, _) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
            build::write_index_to(sorters, format, &mut out)?;
            std::io::Write::flush(&mut out)?;
        }
    }
    Ok(0)
}
