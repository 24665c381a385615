//! `webaip scan`: files, WARC files or whole packages through clamd, on their own.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use serde::Serialize;

use webaip::formats::warc::WarcReader;
use webaip::stages::scan::{Clamd, ClamdAddr, ScanResult};

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
}

#[derive(Debug, Serialize)]
struct Finding {
    file: PathBuf,
    record: Option<String>,
    verdict: String,
    detail: String,
}

fn warcs_of(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".warc.gz") || n.ends_with(".warc")
        })
        .collect();
    v.sort();
    v
}

/// Runs the command: exit 0 when everything is clean, 1 when a virus was found or something
/// could not be scanned.
pub fn run(args: ScanArgs) -> anyhow::Result<i32> {
    let Some(addr) = &args.clamd else {
        bail!("no clamd: give --clamd unix:PATH or tcp:HOST:PORT (or WEBAIP_CLAMD)")
    };
    let addr: ClamdAddr = addr.parse().map_err(anyhow::Error::msg)?;
    let clamd = Clamd::new(addr.clone());
    clamd.ping().with_context(|| format!("clamd at {addr} does not answer"))?;
    let mut results = Vec::new();
    let mut scanned = 0u64;
    for p in &args.paths {
        let targets = if p.is_dir() { warcs_of(p) } else { vec![p.clone()] };
        for t in targets {
            let name = t.to_string_lossy().to_string();
            if name.ends_with(".warc.gz") || name.ends_with(".warc") {
                let mut reader = WarcReader::open(&t)?;
                loop {
                    let next = reader.next_record(|head, block| {
                        let len = head.header.content_length().unwrap_or(0);
                        let id = head.header.record_id().unwrap_or("").to_string();
                        let verdict = clamd.scan(block, len).map_err(std::io::Error::other)?;
                        Ok((id, verdict))
                    });
                    match next.with_context(|| format!("{}", t.display()))? {
                        None => break,
                        Some((_, _, (id, verdict))) => {
                            scanned += 1;
                            push(&mut results, &t, Some(id), verdict);
                        }
                    }
                }
            } else {
                let f = std::fs::File::open(&t).with_context(|| format!("{}", t.display()))?;
                let len = f.metadata()?.len();
                scanned += 1;
                push(&mut results, &t, None, clamd.scan(f, len)?);
            }
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"scanned": scanned, "findings": results})
            )?
        );
    } else {
        for f in &results {
            let rec = f.record.as_deref().map(|r| format!(" record {r}")).unwrap_or_default();
            println!("{}{rec}: {} {}", f.file.display(), f.verdict, f.detail);
        }
        println!("{scanned} item(s) scanned by clamd at {addr}: {} finding(s)", results.len());
    }
    Ok(if results.is_empty() { 0 } else { EXIT_FINDINGS })
}

fn push(results: &mut Vec<Finding>, file: &Path, record: Option<String>, verdict: ScanResult) {
    let (v, d) = match verdict {
        ScanResult::Clean => return,
        ScanResult::Infected(sig) => ("INFECTED", sig),
        ScanResult::NotScanned(why) => ("NOT SCANNED", why),
    };
    results.push(Finding { file: file.to_path_buf(), record, verdict: v.into(), detail: d });
}
