//! `webaip undedup PACKAGE --with PACKAGE... -o OUT [-- PACKAGE OPTIONS]`: the package's
//! containers with their revisits restored (`stages::undedup`), packaged as `package`
//! packages WARC files (with the options after `--`; default `--no-virus-check`).

use std::path::PathBuf;

use clap::{Args, Parser};

use super::package::PackageArgs;

/// Arguments of `webaip undedup`.
#[derive(Debug, Args)]
pub struct UndedupArgs {
    /// The deduplicated package.
    package: PathBuf,
    /// The packages its revisits refer to.
    #[arg(long, required = true)]
    with: Vec<PathBuf>,
    /// The package to make.
    #[arg(long, short)]
    out: PathBuf,
    /// Options of `webaip package` for the new package (after `--`).
    #[arg(last = true)]
    package_options: Vec<String>,
}

#[derive(Parser)]
struct Packaging {
    #[command(flatten)]
    args: PackageArgs,
}

/// Runs the command; returns the exit status.
pub fn run(args: UndedupArgs) -> anyhow::Result<i32> {
    let scratch = webaip::stages::undedup::RestoreScratch::beside(&args.out)?;
    let (containers, restored) =
        webaip::stages::undedup::restore(&args.package, &args.with, scratch.path())?;
    eprintln!("{restored} revisit record(s) restored from {} package(s)", args.with.len());
    let mut argv: Vec<String> = vec!["package".into()];
    match args.package_options.is_empty() {
        true => argv.push("--no-virus-check".into()),
        false => argv.extend(args.package_options.iter().cloned()),
    }
    argv.push("--out".into());
    argv.push(args.out.display().to_string());
    argv.extend(containers.iter().map(|c| c.display().to_string()));
    let packaging = Packaging::try_parse_from(argv)?;
    super::package::run(packaging.args)
}
