//! `webaip scan`: files, WARC files or whole packages through clamd, on their own.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;
use serde::Serialize;

use webaip::{ClamdAddr, FileFinding, ScanResult, scan_paths};

use super::EXIT_FINDINGS;

/// `scan --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated):
  {"scanned": 240, "findings": [{"file": "p/content/a.warc.gz", "offset": 10240,
    "record": "<urn:uuid:...>", "verdict": "INFECTED", "detail": "Eicar-Signature"}]}"#;

/// Arguments of `webaip scan`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct ScanArgs {
    /// Files, WARC files (each record's block scanned on its own) or package directories (every
    /// WARC under content/, original/ and viral/).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// clamd: unix:PATH or tcp:HOST:PORT.
    #[arg(long, env = "WEBAIP_CLAMD")]
    clamd: Option<String>,
    /// Print the findings as one JSON object on standard output (no progress, no text).
    #[arg(long)]
    json: bool,
    /// Print nothing when all is clean (findings are still listed, on standard error).
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
    let bar = super::progress::bytes_bar(0, args.quiet || args.json);
    let scan = scan_paths(&args.paths, &addr, &mut |at| {
        bar.set_length(at.total);
        bar.set_position(at.done)
    });
    bar.finish_and_clear();
    let scan = scan?;
    let findings: Vec<PrintedFinding> = scan.findings.iter().map(PrintedFinding::of).collect();
    if args.json {
        let json = serde_json::json!({"scanned": scan.scanned, "findings": findings});
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else if args.quiet {
        findings.iter().for_each(|f| eprintln!("{}", finding_line(f)));
    } else {
        findings.iter().for_each(|f| println!("{}", finding_line(f)));
        println!(
            "{} item(s) scanned by clamd at {addr}: {} finding(s)",
            scan.scanned,
            findings.len()
        );
    }
    Ok(if findings.is_empty() { 0 } else { EXIT_FINDINGS })
}

/// One finding as a line: the file, the record's offset and id in a WARC, the verdict.
fn finding_line(f: &PrintedFinding) -> String {
    let rec = f.record.map(|r| format!(" record {r}")).unwrap_or_default();
    let at = f.offset.map(|o| format!(" at offset {o}")).unwrap_or_default();
    format!("{}{at}{rec}: {} {}", f.file.display(), f.verdict, f.detail)
}
