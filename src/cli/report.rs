//! `webaip report`: one HTML page a person can look at (and its JSON twin) for a package, or
//! for a collection of them (several packages, batch journals, a store).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use webaip::{
    CollectionInput, CollectionOptions, CollectionOutput, CollectionSummary, ReportFacts,
    ReportOptions, ReportProgress, refuse_collection_output, refuse_report_output,
    report_collection, report_package, write_report_html,
};

use super::{progress, terminal_text};

/// `report --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated; every number the page shows):
  {"package": "pkg", "identity": {"title": "...", "objid": "urn:uuid:...", "package_type": "sSIP", ...},
   "verdicts": {"mets": {"valid": true, ...}, "audit": null, "virus_check": {...}, ...},
   "captures": {"source": {"kind": "containers"}, "lines": 40, "by_day": [...], "hosts": {...},
                "statuses": [...], "mime_types": {...}, "sizes": [...], ...},
   "pages": [...], "identification": {...}, "events": [...], "agents": [...],
   "folders": {...}, "deduplication": {...}, "quirks": {...}, "not_listed": {}}

Of a collection (several packages, a journal, or --store; one row a package, as it is read):
  {"packages": [{"package": "out/a", "origin": "folder", "not_read": null, "title": "...",
                 "objid": "...", "captured_first": "...", "records": 12, "bytes": 40960,
                 "formats": [...], "mets_valid": true, "virus_check": {...}, "last_check": {...},
                 "batch": null, "replicas": [...], ...}, ...],
   "inputs": [...], "totals": {"packages": 3, "read": 3, "not_read": 0, "records": ...,
   "by_year": [...], "sizes": [...], "formats": [...]}, "batch": {"counts": {...},
   "failures": [...], ...}, "store": {"replicas": {...}, "oldest_checks": [...], ...},
   "rows_listed": 3, "rows_not_listed": 0}"#;

/// Arguments of `webaip report`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct ReportArgs {
    /// A package: a directory holding METS.xml, or its METS.xml. Several packages, or batch
    /// journals (their SQLite files: the packages of their done items, in the journal's
    /// folder), make one collection page; one package alone makes its own report.
    #[arg(value_name = "PACKAGE|JOURNAL", required_unless_present = "store")]
    inputs: Vec<PathBuf>,
    /// A collection page of the packages the store of this configuration records (its state
    /// database: copies per replica, last checks; each METS fetched and verified).
    #[arg(long, value_name = "CONFIG")]
    store: Option<PathBuf>,
    /// Write the page here (one self-contained HTML file; written under a temporary name and
    /// renamed once complete).
    #[arg(short, long, value_name = "FILE", required_unless_present = "json")]
    out: Option<PathBuf>,
    /// Count the captures from this CDXJ index (as `webaip index` or `package --index` write
    /// it; repeatable; one package only) instead of reading the containers' records: much
    /// faster. Lines of other files are left out.
    #[arg(long, value_name = "CDXJ")]
    index: Vec<PathBuf>,
    /// Also audit the package (every file's size and digest against the manifest and the
    /// METS) and show the verdict (one package only).
    #[arg(long)]
    audit: bool,
    /// In a collection, validate each package's METS (schemas and profile, as `webaip
    /// validate`; about 20 ms a package, one at a time); without it a row says only that the
    /// METS was read to its end. One package's report always validates.
    #[arg(long)]
    validate: bool,
    /// Print the report's facts as one JSON object on standard output (no progress).
    #[arg(long)]
    json: bool,
    /// Print nothing but errors and, when there are findings (the exit status 1), one line
    /// saying so.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let inputs: Vec<CollectionInput> =
        args.inputs.iter().map(|p| CollectionInput::of_argument(p)).collect();
    match (&args.store, inputs.as_slice()) {
        (None, [CollectionInput::Package(p)]) => run_package(&args, p),
        _ => run_collection(&args, inputs),
    }
}

fn run_package(args: &ReportArgs, package: &std::path::Path) -> anyhow::Result<i32> {
    let options = ReportOptions { index: args.index.clone(), audit: args.audit };
    if let Some(out) = &args.out {
        refuse_report_output(package, &options, out)?;
    }
    let bar = progress::bytes_bar(0, args.quiet || args.json);
    let report = report_package(package, &options, &|p| match p {
        ReportProgress::Planned(n) => bar.inc_length(n),
        ReportProgress::Read(n) => bar.inc(n),
    });
    bar.finish_and_clear();
    let report = report?;
    if let Some(out) = &args.out {
        write_report_html(&report, out)?;
    }
    if args.json {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &report)?;
        out.write_all(b"\n")?;
        out.flush()?;
    } else if !args.quiet {
        print_summary(&report, args.out.as_ref());
    } else if has_findings(&report) {
        // Quiet drops detail, never a verdict that is not clean.
        println!("{}: {}", terminal_text(&report.package), findings_text(&report));
    }
    Ok(if has_findings(&report) { super::EXIT_FINDINGS } else { 0 })
}

/// The collection page of several packages, journals or a store.
fn run_collection(args: &ReportArgs, mut inputs: Vec<CollectionInput>) -> anyhow::Result<i32> {
    if !args.index.is_empty() || args.audit {
        anyhow::bail!(
            "--index and --audit are for one package's report, not a collection's (report each \
             package on its own for them)"
        );
    }
    if let Some(config) = &args.store {
        inputs.push(CollectionInput::Store(config.clone()));
    }
    if let Some(out) = &args.out {
        refuse_collection_output(&inputs, out)?;
    }
    let stdout = std::io::stdout();
    let mut json_out = std::io::BufWriter::new(stdout.lock());
    let json: Option<&mut dyn Write> = if args.json { Some(&mut json_out) } else { None };
    let output = CollectionOutput { page: args.out.as_deref(), json };
    let options = CollectionOptions { validate: args.validate };
    let summary = report_collection(&inputs, options, output, &|_| {})?;
    json_out.flush()?;
    drop(json_out);
    if !args.json && !args.quiet {
        print_collection(&summary, args.out.as_ref());
    } else if !args.json && summary.has_findings() {
        // Quiet drops detail, never a verdict that is not clean.
        let t = &summary.totals;
        println!(
            "{} packages: {} read, {} not read: findings: {}",
            t.packages,
            t.read,
            t.not_read,
            collection_findings(&summary)
        );
    }
    Ok(if summary.has_findings() { super::EXIT_FINDINGS } else { 0 })
}

/// What [`CollectionSummary::has_findings`] found, in a few words.
fn collection_findings(s: &CollectionSummary) -> String {
    let t = &s.totals;
    let mut said = Vec::new();
    let mut say = |n: u64, what: &str| {
        if n > 0 {
            said.push(format!("{n} {what}"));
        }
    };
    say(t.not_read, "not read");
    say(t.mets_invalid, "METS invalid");
    if let Some(b) = &s.batch {
        let c = &b.counts;
        say((c.failed + c.pending + c.running) as u64, "batch items not done");
        say(b.bad_rows, "journal rows unreadable");
    }
    if let Some(st) = &s.store {
        say(st.copies_missing, "copies missing");
        say(st.copies_corrupt, "copies corrupt");
        say(st.mets_rejected, "METS copies found bad by this report");
        say(st.checks_found_problems, "objects a check found problems in");
    }
    if !t.sums_capped.is_empty() {
        said.push("totals not summed (capped)".into());
    }
    said.join(", ")
}

fn print_collection(s: &CollectionSummary, out: Option<&PathBuf>) {
    let t = &s.totals;
    println!("{} packages: {} read, {} not read", t.packages, t.read, t.not_read);
    println!(
        "  METS: {} valid, {} invalid, {} not validated",
        t.mets_valid, t.mets_invalid, t.mets_not_validated
    );
    let at_least = |what: &str| if t.sums_capped.contains(what) { "at least " } else { "" };
    println!(
        "  {}{} WARC records, {}{} bytes (as the METS state)",
        at_least("records"),
        t.records,
        at_least("bytes"),
        t.bytes
    );
    if t.packages_capped > 0 {
        println!(
            "  {} package(s) state sizes or record counts beyond what can be summed (2^64 - 1)",
            t.packages_capped
        );
    }
    let again = &s.named_again;
    if again.packages + again.journals > 0 {
        println!(
            "  named more than once, counted once: {} package(s), {} journal(s)",
            again.packages, again.journals
        );
    }
    if let Some(b) = &s.batch {
        let c = &b.counts;
        println!(
            "  batch: {} done, {} failed, {} pending, {} running",
            c.done, c.failed, c.pending, c.running
        );
    }
    if let Some(st) = &s.store {
        println!(
            "  store: {} of {} packages accepted; {} copies missing, {} corrupt; {} METS copies \
             found bad by this report; {} objects a check found problems in",
            st.accepted,
            st.packages,
            st.copies_missing,
            st.copies_corrupt,
            st.mets_rejected,
            st.checks_found_problems
        );
    }
    if let Some(out) = out {
        println!("  page: {}", out.display());
    }
}

/// A METS that is invalid, an audit that is not INTACT, counts that are partial, a virus
/// check the METS states failed or found a virus.
fn has_findings(r: &ReportFacts) -> bool {
    let audit_clean =
        r.verdicts.audit.as_ref().is_none_or(|a| a.verdict == webaip::AuditVerdict::Intact);
    let virus = r.verdicts.virus_check.as_ref().is_some_and(|o| o.any_failed());
    !r.verdicts.mets.valid || !audit_clean || r.captures.partial() || virus
}

/// What [`has_findings`] found, in a few words.
fn findings_text(r: &ReportFacts) -> String {
    let mut said = Vec::new();
    if !r.verdicts.mets.valid {
        said.push("METS INVALID".to_string());
    }
    if let Some(a) = r.verdicts.audit.as_ref().filter(|a| a.verdict != webaip::AuditVerdict::Intact)
    {
        said.push(format!("audit: {}", a.text));
    }
    if r.captures.partial() {
        said.push("captures counted in part".into());
    }
    if r.verdicts.virus_check.as_ref().is_some_and(|o| o.any_failed()) {
        said.push("a virus check failed or found a virus".into());
    }
    said.join("; ")
}

fn print_summary(r: &ReportFacts, out: Option<&PathBuf>) {
    let v = &r.verdicts;
    println!("{}", terminal_text(&r.identity.title));
    println!("  METS: {}", if v.mets.valid { "VALID" } else { "INVALID" });
    if let Some(a) = &v.audit {
        println!("  audit: {}", a.text);
    }
    let c = &r.captures;
    let partial = if c.partial() { " (partial: see the page)" } else { "" };
    println!(
        "  captures: {} ({} index lines), {} revisits{partial}",
        c.captures, c.lines, c.revisits
    );
    if let Some(out) = out {
        println!("  page: {}", out.display());
    }
}
