//! `webaip dedup-table`: the digest table of stored payloads that `package --dedup-against`
//! looks captures up in, made once from CDXJ indexes and earlier packages so that each
//! package run opens it instead of sorting its sources again.

use std::path::PathBuf;

use clap::Args;

use webaip::{DEFAULT_DEDUP_TABLE_MEMORY, DedupTableOptions};

/// Arguments of `webaip dedup-table`.
#[derive(Debug, Args)]
#[command(after_long_help = "JSON output (--json):
  {\"table\": \"digests.table\", \"payloads\": 1532, \"skipped\": 41}")]
pub struct DedupTableArgs {
    /// CDXJ index files and package folders.
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// The table to write.
    #[arg(long, short)]
    out: PathBuf,
    /// Memory for sorting, in MiB (runs beyond it go to temporary files).
    #[arg(long, default_value_t = DEFAULT_DEDUP_TABLE_MEMORY >> 20)]
    memory: usize,
    /// Print what the table holds as one JSON object.
    #[arg(long)]
    json: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: DedupTableArgs) -> anyhow::Result<i32> {
    let options = DedupTableOptions { memory: args.memory.max(1) << 20 };
    let report = webaip::make_dedup_table(&args.sources, &args.out, &options)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if !args.quiet {
        println!(
            "{}: {} stored payload(s) by digest ({} line(s) or record(s) skipped: revisits, \
             digests of other algorithms, none)",
            args.out.display(),
            report.payloads,
            report.skipped
        );
    }
    Ok(0)
}
