//! `webaip audit`: is a stored package intact, and if not, what is wrong and where.

use std::path::PathBuf;

use clap::Args;

use webaip::{
    AuditOptions, AuditReport, AuditVerdict as Verdict, Store, StoreConfig,
    audit_package_with_progress,
};

use super::{EXIT_DESCRIPTION, EXIT_ERROR, EXIT_FINDINGS, terminal_text};

/// The example of `audit --json` that `--help` ends with.
const JSON_EXAMPLE: &str = r#"JSON (--json), one object, a report per package:
  {"packages": [{"package": "pkg", "mets": "pkg/METS.xml", "verdict": "intact",
    "intact": true, "files_listed": 9, "files_checked": 9, "findings": [], ...}]}"#;

/// Arguments of `webaip audit`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct AuditArgs {
    /// Packages: each a directory holding METS.xml, or a METS document (its folder is the
    /// package).
    #[arg(required = true)]
    packages: Vec<PathBuf>,
    #[command(flatten, next_help_heading = "Validation")]
    check: super::validate::MetsCheckArgs,
    /// Read every record of every container, described or not: verify WARC block and payload
    /// digests and count the records against what the METS states.
    #[arg(long, help_heading = "Checks")]
    deep: bool,
    /// With --deep: rebuild the stream of every ARC the package was migrated from and check it
    /// against the SHA-512 stated at migration; each difference is a finding with its offset.
    #[arg(long, requires = "deep", help_heading = "Checks")]
    rebuild_arcs: bool,
    /// Follow every revisit record to its original, in the package itself and in these
    /// packages (repeatable): each original must exist and hold the payload digest the revisit
    /// states (the payload is read and hashed). With --rebuild-arcs, the payloads revisits of
    /// migrated ARC records leave out are taken from them.
    #[arg(long = "with", value_name = "PACKAGE", help_heading = "References")]
    with: Vec<PathBuf>,
    /// Follow revisits within the package only (as `--with` with no other package).
    #[arg(long, conflicts_with = "with", help_heading = "References")]
    references: bool,
    /// Follow every revisit into the packages its METS says it requires, fetched from the
    /// store this configuration describes (each checked against its recorded digests).
    #[arg(long, value_name = "CONFIG", help_heading = "References")]
    store: Option<PathBuf>,
    /// Print one JSON object holding every package's report (and no progress).
    #[arg(long, help_heading = "Reporting")]
    json: bool,
    /// Print only the verdict line of a package that is not INTACT (PARTIAL included: its
    /// exit status is 0): no progress, no detail, no notes; errors are still printed. With
    /// --json, only the JSON.
    #[arg(short, long, help_heading = "Reporting")]
    quiet: bool,
    /// Files checked at once (default: one per core).
    #[arg(short = 'j', long = "jobs", help_heading = "Performance")]
    jobs: Option<usize>,
}

/// Fetches the packages `dir` requires from the store into a temporary folder and follows
/// revisits into them (and the `--with` packages); one the store cannot give is said, and its
/// revisits are then named unresolved by the audit.
fn required_from_store(
    store: &Store,
    dir: &std::path::Path,
    with: &[PathBuf],
    opts: &mut AuditOptions,
    quiet: bool,
) -> anyhow::Result<tempfile::TempDir> {
    let tmp = tempfile::Builder::new().prefix(".webaip-audit-").tempdir()?;
    let mut all = with.to_vec();
    for (objid, got) in store.fetch_required(dir, tmp.path())? {
        match got {
            Ok(path) => all.push(path),
            Err(e) if !quiet => {
                eprintln!("webaip: note: required package {}: {e}", terminal_text(&objid))
            }
            Err(_) => {}
        }
    }
    opts.with = Some(all);
    Ok(tmp)
}

/// The exit status of one verdict: 0 no damage found (intact, or intact as far as could be
/// checked here), 1 damaged, 3 no damage found but the METS is an invalid or inconsistent
/// description.
fn status_of(verdict: Verdict) -> i32 {
    match verdict {
        Verdict::Intact | Verdict::Partial => 0,
        Verdict::Damaged => EXIT_FINDINGS,
        Verdict::Invalid | Verdict::Inconsistent => EXIT_DESCRIPTION,
    }
}

/// The more serious of two statuses: could not audit (2), damaged (1), description (3), 0.
fn worse(a: i32, b: i32) -> i32 {
    let rank = |c| match c {
        EXIT_ERROR => 3,
        EXIT_FINDINGS => 2,
        EXIT_DESCRIPTION => 1,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// Runs the command; returns the exit status: the most serious of [`status_of`] over the
/// packages, 2 when one could not be audited.
pub fn run(args: AuditArgs) -> anyhow::Result<i32> {
    let follow = args.references || !args.with.is_empty() || args.store.is_some();
    let mut opts = AuditOptions {
        validate: args.check.options()?,
        eark: args.check.is_eark(),
        deep: args.deep,
        with: follow.then(|| args.with.clone()),
        from_store: args.store.is_some(),
        rebuild_arcs: args.rebuild_arcs,
    };
    let store = match &args.store {
        Some(c) => Some(Store::open(&StoreConfig::load(c)?)?),
        None => None,
    };
    let mut reports = Vec::new();
    let mut code = 0;
    let pool = super::worker_pool(args.jobs)?;
    for dir in &args.packages {
        // The packages it requires, fetched for this audit and removed after it.
        let _fetched = match &store {
            Some(s) => Some(required_from_store(s, dir, &args.with, &mut opts, args.quiet)?),
            None => None,
        };
        let quiet = args.quiet || args.json;
        let audited = super::progress::with_audit_bar(quiet, |tell| {
            pool.install(|| audit_package_with_progress(dir, &opts, tell))
        });
        match audited {
            Ok(r) => {
                code = worse(code, status_of(r.verdict));
                reports.push(r);
            }
            Err(e) => {
                // Each variant's message names the path it is about.
                eprintln!("webaip: {e}");
                code = worse(code, EXIT_ERROR);
            }
        }
    }
    if args.json {
        let all = serde_json::json!({ "packages": reports });
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(code);
    }
    for r in &reports {
        if !args.quiet {
            print_report(r);
        } else if r.verdict != Verdict::Intact {
            // Quiet drops detail, never a verdict that is not INTACT.
            println!("{}", summary_line(r));
        }
    }
    Ok(code)
}

/// Prints one package's report as text: its profile and identity, every finding, and a
/// summary line.
fn print_report(r: &AuditReport) {
    let name = r.package.display();
    let v = &r.validation;
    println!("{name}: profile {} ({}): {}", v.profile, v.profile_source.describe(), v.profile_note);
    if let Some(i) = &r.identity {
        let show = |o: &Option<String>| terminal_text(o.as_deref().unwrap_or("-")).to_string();
        println!(
            "{name}: OBJID {}, TYPE {}, PROFILE {}; {} PREMIS agents and {} events at package level",
            show(&i.objid),
            show(&i.mets_type),
            show(&i.profile),
            i.premis_agents,
            i.premis_events
        );
    }
    print_mets_findings(r);
    print_byte_findings(r);
    for u in &r.unchecked {
        let id = u.mets_id.as_ref().map(|i| format!(" ({i})")).unwrap_or_default();
        println!("{name}/{}: not checkable here{id}: {}", terminal_text(&u.file), u.reason);
    }
    println!("{}", summary_line(r));
}

/// The validation's findings, each at its line of the METS.
fn print_mets_findings(r: &AuditReport) {
    let mets = r.mets.display();
    for f in &r.validation.findings {
        let line = f.line.map(|l| l.to_string()).unwrap_or_else(|| "-".into());
        // Where the METS contradicts itself is a finding of its own kind, not damage.
        let kind = if f.is_inconsistency() {
            "inconsistent description".to_string()
        } else {
            f.severity.to_string()
        };
        println!("{mets}:{line}: {kind} [{}] {}", f.rule, terminal_text(&f.message));
    }
}

/// The findings about the package's files: the byte checks', the ARC rebuilds' and the
/// E-ARK rules'.
fn print_byte_findings(r: &AuditReport) {
    let name = r.package.display();
    for f in &r.findings {
        let at = f.offset.map(|o| format!(" @{o}")).unwrap_or_default();
        let id = match (&f.mets_id, f.mets_line) {
            (Some(i), Some(l)) => format!(" ({i}, METS.xml:{l})"),
            (Some(i), None) => format!(" ({i})"),
            _ => String::new(),
        };
        let (file, message) = (terminal_text(&f.file), terminal_text(&f.message));
        println!("{name}/{file}{at}: {} [{}]{id} {message}", f.severity, f.rule);
    }
    for g in r.arc_rebuilds.iter().flat_map(|a| &a.gzip_not_identical) {
        let (file, arc) = (terminal_text(&g.container), terminal_text(&g.name));
        println!("{name}/{file}: ARC {arc}: {}", g.why);
    }
    for f in r.eark.iter().flat_map(|e| &e.findings) {
        let line = f.mets_line.unwrap_or(1);
        let (file, message) = (terminal_text(&f.file), terminal_text(&f.message));
        println!("{name}/{file}:{line}: {} [{}] (E-ARK) {message}", f.severity, f.rule);
    }
}

/// The last line of a package's report: its verdict and what was checked.
fn summary_line(r: &AuditReport) -> String {
    format!(
        "{}: {}: {} of {} files, {} described records, {} bytestreams checked{}; {} METS findings, {} inconsistencies, {} byte findings",
        r.package.display(),
        r.verdict,
        r.files_checked,
        r.files_listed,
        r.records_checked,
        r.bytestreams_checked,
        optional_clauses(r),
        r.mets_errors(),
        r.inconsistencies.len(),
        r.byte_errors()
    )
}

/// The clauses of the summary line about what was checked only when asked for (deep reading,
/// ARC rebuilds, references, the E-ARK rules) or could not be checked.
fn optional_clauses(r: &AuditReport) -> String {
    let mut text = String::new();
    if r.deep {
        text += &format!(
            "; deep: {} records read, {} WARC digests verified",
            r.records_read, r.warc_digests_checked
        );
    }
    if let Some(a) = &r.arc_rebuilds {
        text += &format!(
            "; {} ARC(s) rebuilt, {} as the migration stated, {} whose gzip file would not \
             come back identical",
            a.rebuilt,
            a.as_stated,
            a.gzip_not_identical.len()
        );
    }
    if let Some(x) = &r.references {
        text += &format!(
            "; {} revisits: {} resolved, {} unresolved ({} of another profile, not followed)",
            x.revisits,
            x.resolved,
            x.unresolved.len(),
            x.other_profile
        );
    }
    if let (Some(e), Some(errors)) = (&r.eark, r.eark_errors()) {
        text += &format!("; E-ARK CSIP: {errors} findings, {} files verified", e.files_verified);
    }
    if !r.unchecked.is_empty() {
        text += &format!("; {} not checkable here", r.unchecked.len());
    }
    text
}
