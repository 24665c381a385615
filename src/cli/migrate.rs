//! `webaip migrate`: ARC files in, WARC files and a conservation report out.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use rayon::prelude::*;

use webaip::ids::Ids;
use webaip::migrate::report::MigrationReport;
use webaip::migrate::{DEFAULT_LEVEL, MigrateOptions, migrate_file, plan_outputs};

use super::{EXIT_FINDINGS, progress};

/// Arguments of `webaip migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// ARC files (.arc, .arc.gz; versions 1 and 2).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Directory for the WARC files (created if missing).
    #[arg(long, short, default_value = ".")]
    out: PathBuf,
    /// Worker threads (inputs in parallel, records compressed in parallel); default: cores.
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// zlib compression level of the WARC gzip members.
    #[arg(long, default_value_t = DEFAULT_LEVEL, value_parser = clap::value_parser!(u32).range(0..=9))]
    level: u32,
    /// Write the full report as JSON to this file ("-" for standard output).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Replace existing WARC files.
    #[arg(long)]
    force: bool,
    /// No progress bar and no text report (errors are still printed).
    #[arg(long, short)]
    quiet: bool,
    /// List every anomaly, including the harmless ones.
    #[arg(long, short)]
    verbose: bool,
    /// Fixed clock and seeded record identifiers: identical input gives identical output.
    #[arg(long)]
    deterministic: bool,
    /// Leave out what rebuilding the ARC byte for byte needs (the `X-Webaip-ARC-Rebuild`
    /// fields and the rebuild record); only to measure what keeping it costs.
    #[arg(long, hide = true)]
    no_rebuild_data: bool,
    /// Capture date for records with no usable date when no earlier record, ARC header
    /// record or file-name timestamp gives one (RFC 3339 or 14 digits, UTC). Such records
    /// say so in X-Webaip-Date-Source: capture-date.
    #[arg(long, value_name = "DATE", value_parser = webaip::metadata::parse_capture_date)]
    capture_date: Option<chrono::DateTime<chrono::Utc>>,
}

/// Runs the command; returns the exit status.
pub fn run(args: MigrateArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    for input in &args.inputs {
        if !input.is_file() {
            bail!("{}: not a readable file", input.display());
        }
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let outputs = plan_outputs(&args.inputs, &args.out);
    let pool = super::worker_pool(args.jobs)?;
    let total: u64 = args.inputs.iter().filter_map(|p| p.metadata().ok()).map(|m| m.len()).sum();
    let bar = progress::bytes_bar(total, args.quiet);
    let ids = if args.deterministic { Ids::seeded("webaip-migrate") } else { Ids::random() };
    let opts = MigrateOptions {
        level: args.level,
        force: args.force,
        scanner: None,
        quarantine: None,
        capture_date: args.capture_date,
        identify: None,
        rebuild_data: !args.no_rebuild_data,
    };
    let files = pool.install(|| {
        args.inputs
            .par_iter()
            .zip(outputs.par_iter())
            .map(|(input, output)| {
                let name =
                    input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let file_ids = ids.derive(&name);
                let advance = |n: u64| bar.inc(n);
                migrate_file(input, output, &opts, &file_ids, &advance, &mut |_| {})
            })
            .collect::<Vec<_>>()
    });
    bar.finish_and_clear();
    let report = MigrationReport::new(files, started.elapsed().as_secs_f64());
    publish_report(&args, &report)?;
    Ok(if report.ok() { 0 } else { EXIT_FINDINGS })
}

/// The report as JSON to `--report` (a file, or `-` for stdout), and as text on stdout
/// unless that holds the JSON or `--quiet`; then only the failures, on stderr.
fn publish_report(args: &MigrateArgs, report: &MigrationReport) -> anyhow::Result<()> {
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(report)?;
        if path.as_os_str() == "-" {
            println!("{json}");
        } else {
            write_whole(path, (json + "\n").as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    let to_stdout = args.report.as_ref().is_none_or(|p| p.as_os_str() != "-");
    if !args.quiet && to_stdout {
        print!("{}", report.render_text(args.verbose));
        return Ok(());
    }
    for f in report.files.iter().filter(|f| !f.ok()) {
        let input = format!("{}: ", f.input.display());
        let error = f.error.as_deref().unwrap_or("payload not conserved");
        // Most errors name the input already: the path is said once.
        let error = error.strip_prefix(&input).unwrap_or(error);
        eprintln!("webaip: {input}{error}");
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed into place once
/// written and synced: a failed or killed write leaves the old file or none, never a short one.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    // A device or FIFO the user names (/dev/stdout) is written to as it is, never replaced.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::OpenOptions::new().write(true).open(path)?.write_all(bytes);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let mut tmp =
        tempfile::Builder::new().prefix(".webaip-report-").suffix(".partial").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
