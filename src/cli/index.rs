//! `webaip index`: the sorted access index of WARC files or packages (CDXJ, CDX, ZipNum).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use webaip::{IndexFormat, IndexOptions, IndexTarget, ZIPNUM_LINES};

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
#[command(after_long_help = "JSON output (--json, needs -o):
  {\"format\": \"cdxj\", \"containers\": 2, \"bytes\": 104857, \"files\": [\"all.cdxj\"]}")]
pub struct IndexArgs {
    /// WARC files (one gzip member per record, or plain), or package folders (their
    /// `content/` containers, named `content/NAME` in the index).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The index's format.
    #[arg(long, value_enum, default_value = "cdxj", help_heading = "Output")]
    format: FormatArg,
    /// Write the index here (atomically) instead of to standard output.
    #[arg(long, short, help_heading = "Output")]
    out: Option<PathBuf>,
    /// Files read at once.
    #[arg(long, short, default_value_t = 1, help_heading = "Performance")]
    jobs: usize,
    /// Add each record's `WARC-Record-ID` as the field `recordId`.
    #[arg(long, help_heading = "Output")]
    record_ids: bool,
    /// ZipNum: lines per compressed block.
    #[arg(long, default_value_t = ZIPNUM_LINES, help_heading = "Output")]
    zipnum_lines: usize,
    /// Print what was indexed as one JSON object (the index itself goes to -o).
    #[arg(long, requires = "out", help_heading = "Reporting")]
    json: bool,
    /// Print nothing but the index (when it goes to standard output) and errors.
    #[arg(long, short, help_heading = "Reporting")]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: IndexArgs) -> anyhow::Result<i32> {
    let format = match args.format {
        FormatArg::Cdxj => IndexFormat::Cdxj,
        FormatArg::Cdx => IndexFormat::Cdx,
        FormatArg::Zipnum => IndexFormat::ZipNum { lines: args.zipnum_lines },
    };
    let options = IndexOptions { format, record_ids: args.record_ids, jobs: args.jobs };
    let silent = args.quiet || args.json || args.out.is_none();
    let total = if silent { 0 } else { webaip::index_input_bytes(&args.inputs)? };
    let bar = progress::bytes_bar(total, silent);
    let report = match &args.out {
        Some(out) => {
            let target = IndexTarget::File(out);
            webaip::index_warcs_into(&args.inputs, target, &options, &|n| bar.inc(n))
        }
        None => {
            let mut stdout = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
            let target = IndexTarget::Stream(&mut stdout);
            webaip::index_warcs_into(&args.inputs, target, &options, &|n| bar.inc(n))
        }
    };
    bar.finish_and_clear();
    let report = report?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(0)
}
