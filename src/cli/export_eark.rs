//! `webaip export eark PACKAGE -o DIR|FILE.zip [--type sip|aip]`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::terminal_text;
use webaip::export::eark::{self, PackageType};

/// Arguments of `webaip export eark`.
#[derive(Debug, Args)]
pub struct EarkArgs {
    /// The package (its folder).
    package: PathBuf,
    /// Where to write the E-ARK package: a `.zip` (its one root folder named by the package's
    /// OBJID), or a folder in which the package's root folder `OBJID` is made (it must not exist
    /// there; other packages may).
    #[arg(short, long)]
    out: PathBuf,
    /// The OAIS type of the package made.
    #[arg(long = "type", value_enum, default_value_t = Kind::Sip)]
    kind: Kind,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    Sip,
    Aip,
}

/// Runs the command; returns the exit status.
pub fn run(args: EarkArgs) -> anyhow::Result<i32> {
    let kind = match args.kind {
        Kind::Sip => PackageType::Sip,
        Kind::Aip => PackageType::Aip,
    };
    let s = eark::export_in(&args.package, &args.out, kind)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(0);
    }
    println!(
        "{}: E-ARK {} {} ({} data files, {} bytes; {} documentation, {} metadata files)",
        terminal_text(&s.written.display().to_string()),
        kind.as_str(),
        terminal_text(&s.objid),
        s.data_files,
        s.data_bytes,
        s.documentation_files,
        s.metadata_files
    );
    for v in &s.left_out_viral {
        println!("left out (quarantined): {}", terminal_text(v));
    }
    Ok(0)
}
