//! `webaip scan`: files, WARC files or whole packages through clamd, on their own.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;
use serde::Serialize;

use webaip::stages::scan::{Clamd, ClamdAddr, FileFinding, ScanResult, ScanTargets, scan_files};

use super::EXIT_FINDINGS;

/// Arguments of `webaip scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Files, WARC files (each record's block scanned on its own) or package directories (every
    /// WARC under content/, original/ and viral/).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// clamd: unix:PATH or tcp:HOST:PORT.
    #[arg(long, env = "WEBAIP_CLAMD")]
    clamd: Option<String>,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Debug, Serialize)]
struct PrintedFinding<'a> {
    file: &'a Path,
    /// Byte offset of the record (of its gzip member) in a WARC file.
    offset: Option<u64>,
    record: Option<&'a str>,
    verdict: &'static str,
    detail: String,
}

impl<'a> PrintedFinding<'a> {
    fn of(f: &'a FileFinding) -> PrintedFinding<'a> {
        let (verdict, detail) = match &f.verdict {
            ScanResult::Clean => ("CLEAN", String::new()),
            ScanResult::Infected(sig) => ("INFECTED", sig.clone()),
            ScanResult::NotScanned(why) => ("NOT SCANNED", why.to_string()),
        };
        PrintedFinding {
            file: &f.file,
            offset: f.offset,
            record: f.record.as_deref(),
            verdict,
            detail,
        }
    }
}

/// Runs the command: exit 0 when everything is clean, 1 when a virus was found or something
/// could not be scanned.
pub fn run(args: ScanArgs) -> anyhow::Result<i32> {
    let Some(addr) = &args.clamd else {
        bail!("no clamd: give --clamd unix:PATH or tcp:HOST:PORT (or WEBAIP_CLAMD)")
    };
    let addr: ClamdAddr = addr.parse().map_err(anyhow::Error::msg)?;
    let targets = ScanTargets::of(&args.paths);
    let bar = super::progress::bytes_bar(targets.total_bytes, args.quiet || args.json);
    let scan = scan_files(Clamd::new(addr.clone()), &targets, &mut |at| bar.set_position(at))?;
    bar.finish_and_clear();
    let findings: Vec<PrintedFinding> = scan.findings.iter().map(PrintedFinding::of).collect();
    if args.json {
        let json = serde_json::json!({"scanned": scan.scanned, "findings": findings});
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        for f in &findings {
            let rec = f.record.map(|r| format!(" record {r}")).unwrap_or_default();
            let at = f.offset.map(|o| format!(" at offset {o}")).unwrap_or_default();
            println!("{}{at}{rec}: {} {}", f.file.display(), f.verdict, f.detail);
        }
        println!(
            "{} item(s) scanned by clamd at {addr}: {} finding(s)",
            scan.scanned,
            findings.len()
        );
    }
    Ok(if findings.is_empty() { 0 } else { EXIT_FINDINGS })
}
