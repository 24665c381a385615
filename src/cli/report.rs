//! `webaip report`: one HTML page a person can look at (and its JSON twin) for a package.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use webaip::{
    ReportFacts, ReportOptions, ReportProgress, refuse_report_output, report_package,
    write_report_html,
};

use super::{progress, terminal_text};

/// `report --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated; every number the page shows):
  {"package": "pkg", "identity": {"title": "...", "objid": "urn:uuid:...", "package_type": "sSIP", ...},
   "verdicts": {"mets": {"valid": true, ...}, "audit": null, "virus_check": {...}, ...},
   "captures": {"source": {"kind": "containers"}, "lines": 40, "by_day": [...], "hosts": {...},
                "statuses": [...], "mime_types": {...}, "sizes": [...], ...},
   "pages": [...], "identification": {...}, "events": [...], "agents": [...],
   "folders": {...}, "deduplication": {...}, "quirks": {...}, "not_listed": {}}"#;

/// Arguments of `webaip report`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct ReportArgs {
    /// A package: a directory holding METS.xml, or its METS.xml.
    package: PathBuf,
    /// Write the page here (one self-contained HTML file; written under a temporary name and
    /// renamed once complete).
    #[arg(short, long, value_name = "FILE", required_unless_present = "json")]
    out: Option<PathBuf>,
    /// Count the captures from this CDXJ index (as `webaip index` or `package --index` write
    /// it; repeatable) instead of reading the containers' records: much faster. Lines of
    /// other files are left out.
    #[arg(long, value_name = "CDXJ")]
    index: Vec<PathBuf>,
    /// Also audit the package (every file's size and digest against the manifest and the
    /// METS) and show the verdict.
    #[arg(long)]
    audit: bool,
    /// Print the report's facts as one JSON object on standard output (no progress).
    #[arg(long)]
    json: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let options = ReportOptions { index: args.index.clone(), audit: args.audit };
    if let Some(out) = &args.out {
        refuse_report_output(&args.package, &options, out)?;
    }
    let bar = progress::bytes_bar(0, args.quiet || args.json);
    let report = report_package(&args.package, &options, &|p| match p {
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
    }
    Ok(if has_findings(&report) { super::EXIT_FINDINGS } else { 0 })
}

/// A METS that is invalid, an audit that is not INTACT, counts that are partial, a virus
/// check the METS states failed or found a virus.
fn has_findings(r: &ReportFacts) -> bool {
    let audit_clean =
        r.verdicts.audit.as_ref().is_none_or(|a| a.verdict == webaip::AuditVerdict::Intact);
    let virus = r.verdicts.virus_check.as_ref().is_some_and(|o| o.any_failed());
    !r.verdicts.mets.valid || !audit_clean || r.captures.partial() || virus
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
