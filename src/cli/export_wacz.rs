//! `webaip export wacz PACKAGE -o FILE.wacz`.

use std::path::PathBuf;

use clap::Args;

/// Arguments of `webaip export wacz`.
#[derive(Debug, Args)]
pub struct WaczArgs {
    /// The package (its folder).
    package: PathBuf,
    /// The WACZ file to write.
    #[arg(short, long)]
    out: PathBuf,
}

/// Runs the command; returns the exit status.
pub fn run(args: WaczArgs) -> anyhow::Result<i32> {
    anyhow::bail!("export wacz {}: not written yet", args.package.display())
}
