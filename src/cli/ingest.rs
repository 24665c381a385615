//! `webaip ingest`: submission packages become archival packages.

use std::path::PathBuf;

use clap::Args;

use webaip::{
    IngestOptions, IngestOutcome, IngestReport, SerializationMode, Store, StoreConfig,
    ingest_package_with_progress,
};

use super::{EXIT_ERROR, terminal_text};

/// The example of `ingest --json` that `--help` ends with.
const JSON_EXAMPLE: &str = r#"JSON (--json), one object, a report per submission:
  {"packages": [{"submission": "ssip", "aip": "aips/ssip", "objid": "...",
    "outcome": "created", "linked": 8, "copied": 0, "added_bytes": 41230, ...}]}"#;

/// Arguments of `webaip ingest`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct IngestArgs {
    /// Submission packages (sSIP directories).
    #[arg(required = true)]
    ssips: Vec<PathBuf>,
    /// Directory the AIPs are made in, each under its submission's folder name.
    #[arg(short, long, help_heading = "Output")]
    out: PathBuf,
    /// List the records anew: `full` lists every record of every container, `minimal` only
    /// those described or pointed at (default: the submission's listing, as it is).
    #[arg(long, value_enum, help_heading = "Output")]
    mode: Option<ModeArg>,
    /// Put each AIP to the replicas of this store configuration once it is made.
    #[arg(long, help_heading = "Output")]
    store: Option<PathBuf>,
    #[command(flatten, next_help_heading = "Validation")]
    check: super::validate::MetsCheckArgs,
    /// New identifiers derived from the submission's and a fixed clock: the same submission
    /// gives the same AIP, byte for byte (for tests and reproducible migrations).
    #[arg(long, help_heading = "Output")]
    deterministic: bool,
    /// Print one JSON object holding every submission's report (and no progress).
    #[arg(long, help_heading = "Reporting")]
    json: bool,
    /// Print nothing on success: no progress, no report; errors are still printed, and a put
    /// to the store not accepted is said in one line. With --json, only the JSON.
    #[arg(short, long, help_heading = "Reporting")]
    quiet: bool,
    /// Files read at once by the audit (default: one per core).
    #[arg(short = 'j', long = "jobs", help_heading = "Performance")]
    jobs: Option<usize>,
}

/// How the AIP lists records.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ModeArg {
    /// Only records described or pointed at.
    Minimal,
    /// Every record.
    Full,
}

/// Runs the command; returns the exit status: 0 every AIP made or already there, 2 a
/// submission refused or not ingested.
pub fn run(args: IngestArgs) -> anyhow::Result<i32> {
    if args.check.is_eark() {
        anyhow::bail!(
            "ingest takes webaip submissions; --profile eark-csip is for validate and audit"
        );
    }
    let opts = IngestOptions {
        out: args.out.clone(),
        validate: args.check.options()?,
        deterministic: args.deterministic,
        mode: args.mode.map(|m| match m {
            ModeArg::Minimal => SerializationMode::Minimal,
            ModeArg::Full => SerializationMode::Full,
        }),
    };
    let store = match &args.store {
        Some(c) => Some(Store::open(&StoreConfig::load(c)?)?),
        None => None,
    };
    super::compile_signatures();
    let pool = super::worker_pool(args.jobs)?;
    let mut code = 0;
    let mut reports = Vec::new();
    for ssip in &args.ssips {
        let result = super::progress::with_audit_bar(args.quiet || args.json, |tell| {
            pool.install(|| ingest_package_with_progress(ssip, &opts, store.as_ref(), tell))
        });
        match result {
            Ok(r) => {
                let incomplete = r.stored.as_ref().is_some_and(|s| !s.accepted);
                if !args.json && !args.quiet {
                    print_report(&r);
                } else if !args.json && incomplete {
                    // Quiet drops detail, never a verdict that is not clean.
                    let (aip, ssip) = (r.aip.display(), r.submission.display());
                    println!("{ssip} -> {aip}: stored INCOMPLETE (the put was not accepted)");
                }
                if incomplete {
                    code = code.max(super::EXIT_FINDINGS);
                }
                reports.push(r);
            }
            Err(e) => {
                // Each error names the submission or file it is about.
                eprintln!("webaip: ingest: {e}");
                code = EXIT_ERROR;
            }
        }
    }
    if args.json {
        let all = serde_json::json!({ "packages": reports });
        println!("{}", serde_json::to_string_pretty(&all)?);
    }
    Ok(code)
}

fn print_report(r: &IngestReport) {
    let aip = r.aip.display();
    let ssip = r.submission.display();
    if r.outcome == IngestOutcome::Exists {
        println!("{ssip}: exists: {aip} is its AIP ({}); nothing written", r.objid);
        return;
    }
    let i = &r.identification;
    let share = if r.submission_bytes > 0 {
        format!(" ({:.3} %)", 100.0 * r.added_bytes as f64 / r.submission_bytes as f64)
    } else {
        String::new()
    };
    println!(
        "{ssip} -> {aip}: AIP {} from sSIP {}; {} files hard-linked, {} copied and verified; {} bytes added{share}",
        r.objid,
        r.submission_objid.as_deref().unwrap_or("(no OBJID)"),
        r.linked,
        r.copied,
        r.added_bytes,
    );
    println!(
        "{aip}: deep audit: {} records read, {} WARC digests verified; PRONOM: {} described bytestreams identified, {} matched nothing, {} several formats, {} contradict their declared type, {} do not confirm it",
        r.records_read,
        r.warc_digests_checked,
        i.payloads,
        i.unidentified,
        i.several,
        i.contradicted,
        i.not_confirmed
    );
    for n in &r.not_carried_over {
        println!("{aip}: not carried over: {}", terminal_text(n));
    }
    if let Some(s) = &r.stored {
        // The warning `store put` gives: one wording wherever a package is stored.
        super::store::print_missing_dependencies(&r.aip, &s.requires_missing);
        println!(
            "{aip}: stored as {} ({}) on {} copies{}{}",
            s.package,
            if s.accepted { "ACCEPTED" } else { "INCOMPLETE" },
            s.copies.len(),
            if s.failed_replicas.is_empty() {
                String::new()
            } else {
                format!("; failed on {}", s.failed_replicas.join(", "))
            },
            super::store::kept_in(s),
        );
    }
}
