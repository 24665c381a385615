//! `webaip export eark PACKAGE -o DIR|FILE.zip [--type sip|aip]`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::terminal_text;
use webaip::{EarkType, export_eark_in};

/// The example of `export eark --json` that `--help` ends with.
const JSON_EXAMPLE: &str = r#"JSON (--json), one object:
  {"kind": "eark", "objid": "...", "written": "out/OBJID", "data_files": 2,
   "data_bytes": 81234, "documentation_files": 3, "metadata_files": 4, "left_out_viral": []}"#;

/// Arguments of `webaip export eark`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
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
    /// Print the summary as one JSON object.
    #[arg(long, help_heading = "Reporting")]
    json: bool,
    /// Print nothing on success; errors are still printed. With --json, only the JSON.
    #[arg(short, long, help_heading = "Reporting")]
    quiet: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    Sip,
    Aip,
}

/// Runs the command; returns the exit status.
pub fn run(args: EarkArgs) -> anyhow::Result<i32> {
    let kind = match args.kind {
        Kind::Sip => EarkType::Sip,
        Kind::Aip => EarkType::Aip,
    };
    let s = export_eark_in(&args.package, &args.out, kind)?;
    if args.json {
        let kinded = super::Kinded { kind: "eark", report: &s };
        println!("{}", serde_json::to_string_pretty(&kinded)?);
        return Ok(0);
    }
    if args.quiet {
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
