//! `webaip export eark PACKAGE -o DIR|FILE.zip [--type sip|aip]`.

use std::path::PathBuf;

use clap::Args;

/// Arguments of `webaip export eark`.
#[derive(Debug, Args)]
pub struct EarkArgs {
    /// The package (its folder).
    package: PathBuf,
    /// The E-ARK package to write: a folder, or a `.zip`.
    #[arg(short, long)]
    out: PathBuf,
}

/// Runs the command; returns the exit status.
pub fn run(args: EarkArgs) -> anyhow::Result<i32> {
    anyhow::bail!("export eark {}: not written yet", args.package.display())
}
