//! `webaip dedup-table`: the digest table of stored payloads (`index::digests`) that
//! `package --dedup-against` looks captures up in, made once from CDXJ indexes and earlier
//! packages so that each package run opens it instead of sorting its sources again.

use std::path::PathBuf;

use clap::Args;

use webaip::index::digests::TableBuilder;

/// Arguments of `webaip dedup-table`.
#[derive(Debug, Args)]
pub struct DedupTableArgs {
    /// CDXJ index files and package folders.
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// The table to write.
    #[arg(long, short)]
    out: PathBuf,
    /// Memory for sorting, in MiB (runs beyond it go to temporary files).
    #[arg(long, default_value_t = 256)]
    memory: usize,
}

/// Runs the command; returns the exit status.
pub fn run(args: DedupTableArgs) -> anyhow::Result<i32> {
    let mut b = TableBuilder::new(args.memory.max(1) << 20)?;
    for s in &args.sources {
        if s.is_dir() {
            b.add_package(s)?;
        } else {
            b.add_cdxj(s)?;
        }
    }
    let skipped = b.skipped;
    let n = b.finish(&args.out)?;
    println!(
        "{}: {n} stored payload(s) by digest ({skipped} line(s) or record(s) skipped: revisits, digests of other algorithms, none)",
        args.out.display()
    );
    Ok(0)
}
