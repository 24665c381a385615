//! `webaip scan`: files, WARC files or whole packages through clamd, on their own.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use serde::Serialize;

use webaip::formats::warc::WarcReader;
use webaip::stages::scan::{Clamd, ClamdAddr, Digest, ScanBatch, ScanEngine, ScanResult};

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
struct Finding {
    file: PathBuf,
    /// Byte offset of the record (of its gzip member) in a WARC file.
    offset: Option<u64>,
    record: Option<String>,
    verdict: String,
    detail: String,
}

/// Record blocks up to this size are read into memory and scanned in parallel, over pooled
/// clamd sessions; larger ones are streamed to clamd on their own.
const IN_MEMORY: u64 = 4 << 20;
/// A batch of in-memory blocks is scanned once it holds this many bytes or records.
const BATCH_BYTES: usize = 16 << 20;
const BATCH_RECORDS: usize = 512;

/// A record read from a WARC file: its block in memory, or already scanned (streamed).
enum Block {
    InMemory(Vec<u8>),
    Scanned(ScanResult),
}

/// Blocks waiting to be scanned: (offset, record id, bytes).
struct Batch(Vec<(u64, String, Vec<u8>)>);

impl ScanBatch for Batch {
    fn items(&self) -> usize {
        self.0.len()
    }
    // No digest: the blocks are not hashed here, so nothing is reused.
    fn payload(&self, i: usize) -> Option<(&[u8], Option<&Digest>)> {
        self.0.get(i).map(|(_, _, b)| (&b[..], None))
    }
}

/// Scans a batch with the engine and records its findings, in its order.
fn scan_batch(
    engine: &std::sync::Arc<ScanEngine>,
    file: &Path,
    batch: &mut Vec<(u64, String, Vec<u8>)>,
    results: &mut Vec<Finding>,
) -> anyhow::Result<()> {
    let ids: Vec<(u64, String)> = batch.iter().map(|(o, id, _)| (*o, id.clone())).collect();
    let (verdicts, _) = engine.scan_now(Batch(std::mem::take(batch)))?;
    for ((offset, id), verdict) in ids.into_iter().zip(verdicts) {
        if let Some(v) = verdict {
            push(results, file, Some(offset), Some(id), v);
        }
    }
    Ok(())
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
    let engine = ScanEngine::new(clamd)?;
    let targets: Vec<PathBuf> = args
        .paths
        .iter()
        .flat_map(|p| if p.is_dir() { warcs_of(p) } else { vec![p.clone()] })
        .collect();
    let total = targets.iter().filter_map(|t| t.metadata().ok()).map(|m| m.len()).sum();
    let bar = super::progress::bytes_bar(total, args.quiet || args.json);
    let mut done = 0u64;
    let mut results = Vec::new();
    let mut scanned = 0u64;
    for t in targets {
        let name = t.to_string_lossy().to_string();
        if name.ends_with(".warc.gz") || name.ends_with(".warc") {
            let first = results.len();
            let mut reader = WarcReader::open(&t)?;
            let mut batch = Vec::new();
            let mut batch_bytes = 0;
            loop {
                let next = reader.next_record(|head, block| {
                    let len = head.header.content_length().unwrap_or(0);
                    let id = head.header.record_id().unwrap_or("").to_string();
                    if len <= IN_MEMORY {
                        let mut bytes = Vec::with_capacity(len as usize);
                        block.read_to_end(&mut bytes)?;
                        return Ok((id, Block::InMemory(bytes)));
                    }
                    let verdict =
                        engine.scan_one(None, block, len).map_err(std::io::Error::other)?;
                    Ok((id, Block::Scanned(verdict)))
                });
                match next.with_context(|| format!("{}", t.display()))? {
                    None => break,
                    Some((head, end, (id, block))) => {
                        scanned += 1;
                        bar.set_position(done + end.end);
                        match block {
                            Block::Scanned(v) => {
                                push(&mut results, &t, Some(head.offset), Some(id), v)
                            }
                            Block::InMemory(bytes) => {
                                batch_bytes += bytes.len();
                                batch.push((head.offset, id, bytes));
                            }
                        }
                    }
                }
                if batch_bytes >= BATCH_BYTES || batch.len() >= BATCH_RECORDS {
                    scan_batch(&engine, &t, &mut batch, &mut results)?;
                    batch_bytes = 0;
                }
            }
            scan_batch(&engine, &t, &mut batch, &mut results)?;
            // Streamed records were scanned before the batch around them: back to file order.
            results[first..].sort_by_key(|f| f.offset);
        } else {
            let f = std::fs::File::open(&t).with_context(|| format!("{}", t.display()))?;
            let len = f.metadata()?.len();
            scanned += 1;
            push(&mut results, &t, None, None, engine.scan_one(None, f, len)?);
        }
        done += t.metadata().map(|m| m.len()).unwrap_or(0);
        bar.set_position(done);
    }
    bar.finish_and_clear();
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
            let at = f.offset.map(|o| format!(" at offset {o}")).unwrap_or_default();
            println!("{}{at}{rec}: {} {}", f.file.display(), f.verdict, f.detail);
        }
        println!("{scanned} item(s) scanned by clamd at {addr}: {} finding(s)", results.len());
    }
    Ok(if results.is_empty() { 0 } else { EXIT_FINDINGS })
}

fn push(
    results: &mut Vec<Finding>,
    file: &Path,
    offset: Option<u64>,
    record: Option<String>,
    verdict: ScanResult,
) {
    let (v, d) = match verdict {
        ScanResult::Clean => return,
        ScanResult::Infected(sig) => ("INFECTED", sig),
        ScanResult::NotScanned(why) => ("NOT SCANNED", why.to_string()),
    };
    results.push(Finding {
        file: file.to_path_buf(),
        offset,
        record,
        verdict: v.into(),
        detail: d,
    });
}
