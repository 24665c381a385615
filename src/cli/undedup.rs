//! `webaip undedup PACKAGE --with PACKAGE... -o OUT [-- PACKAGE OPTIONS]`: the package's
//! containers with their revisits restored (`webaip::restore_revisits`), packaged as
//! `package` packages WARC files (with the options after `--`; default `--no-virus-check`).

use std::path::PathBuf;

use clap::{Args, Parser};

use super::package::PackageArgs;

/// Arguments of `webaip undedup`.
#[derive(Debug, Args)]
#[command(after_long_help = "JSON output (--json): the report of `webaip package --json` for
the new package, e.g.
  {\"objid\": \"...\", \"package\": \"out/full\", \"containers\": [...], ...}")]
pub struct UndedupArgs {
    /// The deduplicated package.
    package: PathBuf,
    /// The packages its revisits refer to.
    #[arg(long, required = true)]
    with: Vec<PathBuf>,
    /// The package to make.
    #[arg(long, short)]
    out: PathBuf,
    /// Print the new package's report as one JSON object (as `package --json`).
    #[arg(long)]
    json: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
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
    let restored = webaip::restore_revisits(&args.package, &args.with, &args.out)?;
    if !args.quiet {
        eprintln!(
            "{} revisit record(s) restored from {} package(s)",
            restored.restored,
            args.with.len()
        );
    }
    let mut argv: Vec<String> = vec!["package".into()];
    match args.package_options.is_empty() {
        true => argv.push("--no-virus-check".into()),
        false => argv.extend(args.package_options.iter().cloned()),
    }
    // This command's reporting is the package's: its JSON object, or nothing.
    let given = |flag: &str| args.package_options.iter().any(|o| o == flag);
    if args.json && !given("--json") {
        argv.push("--json".into());
    }
    if args.quiet && !given("--quiet") && !given("-q") {
        argv.push("--quiet".into());
    }
    argv.push("--out".into());
    argv.push(args.out.display().to_string());
    argv.extend(restored.containers.iter().map(|c| c.display().to_string()));
    let packaging = Packaging::try_parse_from(argv)?;
    super::package::run(packaging.args)
}
