//! `webaip migrate`: ARC files in, WARC files and a conservation report out.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use webaip::{
    DEFAULT_LEVEL, MigrateArcsOptions, MigrateOptions, MigrationReport, migrate_arcs,
    parse_capture_date,
};

use super::{EXIT_FINDINGS, progress};

/// `migrate --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated):
  {"tool": "webaip", "version": "0.1.0",
   "files": [{"input": "a.arc.gz", "output": "out/a.warc.gz", "records_in": {...},
              "records_out": {...}, "anomaly_counts": {}, "error": null, ...}],
   "summary": {"files": 1, "files_ok": 1, "files_failed": 0, "bytes_in": 5120, ...}}"#;

/// Arguments of `webaip migrate`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct MigrateArgs {
    /// ARC files (.arc, .arc.gz; versions 1 and 2).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Capture date for records with no usable date when no earlier record, ARC header
    /// record or file-name timestamp gives one (RFC 3339 or 14 digits, UTC). Such records
    /// say so in X-Webaip-Date-Source: capture-date.
    #[arg(long, value_name = "DATE", value_parser = parse_capture_date, help_heading = "Input")]
    capture_date: Option<chrono::DateTime<chrono::Utc>>,
    /// Directory for the WARC files (created if missing).
    #[arg(long, short, default_value = ".", help_heading = "Output")]
    out: PathBuf,
    /// Compression level of the WARC gzip members, 0-9 on zlib's scale (records over 2 MiB: zlib-rs at the level compressing alike, 5 for 6).
    #[arg(long, default_value_t = DEFAULT_LEVEL, value_parser = clap::value_parser!(u32).range(0..=9), help_heading = "Output")]
    level: u32,
    /// Replace existing WARC files.
    #[arg(long, help_heading = "Output")]
    force: bool,
    /// Fixed clock and seeded record identifiers: identical input gives identical output.
    #[arg(long, help_heading = "Output")]
    deterministic: bool,
    /// Leave out what rebuilding the ARC byte for byte needs (the `X-Webaip-ARC-Rebuild`
    /// fields and the rebuild record); only to measure what keeping it costs.
    #[arg(long, hide = true)]
    no_rebuild_data: bool,
    /// Worker threads (inputs in parallel, records compressed in parallel); default: cores.
    #[arg(short = 'j', long = "jobs", help_heading = "Performance")]
    jobs: Option<usize>,
    /// Also write the full report as JSON to this file ("-" for standard output, as --json).
    #[arg(long, help_heading = "Reporting")]
    report: Option<PathBuf>,
    /// Print the report as one JSON object on standard output (no progress, no text).
    #[arg(long, help_heading = "Reporting")]
    json: bool,
    /// Print nothing on success (a file that fails is still named on standard error).
    #[arg(long, short, help_heading = "Reporting")]
    quiet: bool,
    /// List every anomaly, including the harmless ones.
    #[arg(long, short, help_heading = "Reporting")]
    verbose: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: MigrateArgs) -> anyhow::Result<i32> {
    // The report never replaces an ARC it describes, nor lands in an input folder.
    if let Some(report) = args.report.as_ref().filter(|p| p.as_os_str() != "-") {
        for input in &args.inputs {
            webaip::refuse_output_in_input(input, report)?;
        }
    }
    let pool = super::worker_pool(args.jobs)?;
    let total: u64 = args.inputs.iter().filter_map(|p| p.metadata().ok()).map(|m| m.len()).sum();
    let bar = progress::bytes_bar(total, args.quiet || args.json);
    let opts = MigrateArcsOptions {
        file: MigrateOptions {
            level: args.level,
            force: args.force,
            capture_date: args.capture_date,
            rebuild_data: !args.no_rebuild_data,
            ..MigrateOptions::default()
        },
        deterministic: args.deterministic,
    };
    let report = pool.install(|| migrate_arcs(&args.inputs, &args.out, &opts, &|n| bar.inc(n)));
    bar.finish_and_clear();
    let report = report?;
    publish_report(&args, &report)?;
    Ok(if report.ok() { 0 } else { EXIT_FINDINGS })
}

/// The report as JSON to `--report` (a file, or `-` for stdout) and to stdout with `--json`;
/// as text on stdout unless stdout holds the JSON or `--quiet`; then only the failures, on
/// stderr (not beside `--json`, whose object names them).
fn publish_report(args: &MigrateArgs, report: &MigrationReport) -> anyhow::Result<()> {
    let json_to_stdout = args.json || args.report.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let json = serde_json::to_string_pretty(report)?;
    if let Some(path) = args.report.as_ref().filter(|p| p.as_os_str() != "-") {
        write_whole(path, (json.clone() + "\n").as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if json_to_stdout {
        println!("{json}");
    } else if !args.quiet {
        print!("{}", report.render_text(args.verbose));
        return Ok(());
    }
    if args.json {
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
