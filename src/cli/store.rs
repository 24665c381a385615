//! `webaip store`: put packages to every replica, check, repair and fetch them.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};

use webaip::audit::AuditOptions;
use webaip::batch::export;
use webaip::export::eark::PackageType;
use webaip::store::config::StoreConfig;
use webaip::store::{
    CopyOutcome, CopyStatus, PutReport, RemoveReport, RepairReport, Store, StoreError,
};

use super::{EXIT_ERROR, EXIT_FINDINGS};

/// Arguments of `webaip store`.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The replica configuration (TOML; see docs/reference.md, `webaip store`).
    #[arg(long, env = "WEBAIP_STORE_CONFIG")]
    config: PathBuf,
    /// Print the report as JSON.
    #[arg(long, global = true)]
    json: bool,
    /// No progress bar.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Audit packages, then write every file to every replica and verify every copy.
    Put {
        /// Package directories.
        #[arg(required = true)]
        packages: Vec<PathBuf>,
        #[command(flatten)]
        check: super::validate::MetsCheckArgs,
    },
    /// Which copies are missing, extra or of the wrong size (with --deep: wrong SHA-512).
    Check {
        /// Only this replica.
        #[arg(long)]
        replica: Option<String>,
        /// Recompute the SHA-512 of every copy.
        #[arg(long)]
        deep: bool,
    },
    /// Re-establish missing and corrupt copies from copies that verify.
    Repair {
        /// Recompute every copy's SHA-512 first (else sizes, lists, and earlier findings).
        #[arg(long)]
        deep: bool,
    },
    /// Fetch a package (or one of its files) and verify it.
    Get {
        /// The package identifier (METS OBJID).
        package: String,
        /// One file of the package (package-relative path).
        file: Option<String>,
        /// Where to put it.
        #[arg(long)]
        to: PathBuf,
        #[command(flatten)]
        export: GetExportArgs,
    },
    /// Recreate the state database from what the replicas hold.
    RebuildState,
    /// Delete a package from every replica (refused while other stored packages require it).
    Remove {
        /// The package identifier (METS OBJID).
        package: String,
        /// List what would be deleted; delete nothing.
        #[arg(long, conflicts_with = "yes")]
        dry_run: bool,
        /// Delete (without it, and without --dry-run, nothing is done).
        #[arg(long)]
        yes: bool,
    },
}

/// What `store get` exports of the package it fetched and verified.
#[derive(Debug, Args)]
struct GetExportArgs {
    /// Export the fetched package as a WACZ to FILE (as `webaip export wacz`).
    #[arg(long, value_name = "FILE", conflicts_with = "file")]
    export_wacz: Option<PathBuf>,
    /// Export the fetched package as an E-ARK 2.2 package to PATH, a new folder or a `.zip`
    /// (as `webaip export eark`).
    #[arg(long, value_name = "PATH", conflicts_with = "file")]
    export_eark: Option<PathBuf>,
    /// The OAIS type of the E-ARK package.
    #[arg(long, value_enum, default_value = "sip", requires = "export_eark")]
    eark_type: EarkTypeArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum EarkTypeArg {
    Sip,
    Aip,
}

/// How a report is shown: as JSON, and whether a progress bar is drawn.
#[derive(Debug, Clone, Copy)]
struct Shown {
    json: bool,
    quiet: bool,
}

impl Shown {
    /// Prints `report` as pretty JSON when asked to, else hands it to `text`.
    fn report<T: serde::Serialize>(self, report: &T, text: impl FnOnce(&T)) -> anyhow::Result<()> {
        if self.json {
            println!("{}", serde_json::to_string_pretty(report)?);
        } else {
            text(report);
        }
        Ok(())
    }
}

/// Runs the command; returns the exit status (0 done and clean, 1 findings or an incomplete
/// store, 2 refused or could not run).
pub fn run(args: StoreArgs) -> anyhow::Result<i32> {
    let config = StoreConfig::load(&args.config)?;
    let store = Store::open(&config)?;
    let shown = Shown { json: args.json, quiet: args.quiet || args.json };
    match args.action {
        Action::Put { packages, check } => {
            let audit = AuditOptions {
                validate: check.options()?,
                eark: check.is_eark(),
                ..Default::default()
            };
            run_put(&store, &config, &packages, &audit, shown)
        }
        Action::Check { replica, deep } => run_check(&store, replica.as_deref(), deep, shown),
        Action::Repair { deep } => run_repair(&store, deep, shown),
        Action::Get { package, file, to, export } => {
            let request = GetRequest { package: &package, file: file.as_deref(), to: &to };
            run_get(&store, request, &export, shown.json)
        }
        Action::Remove { package, dry_run, yes } => {
            run_remove(&store, &package, RemoveConsent { dry_run, yes }, shown.json)
        }
        Action::RebuildState => run_rebuild_state(&store, shown),
    }
}

/// `store put` of each package in turn: exit 2 when one was refused or could not be put, 1
/// when one is incomplete.
fn run_put(
    store: &Store,
    config: &StoreConfig,
    packages: &[PathBuf],
    audit: &AuditOptions,
    shown: Shown,
) -> anyhow::Result<i32> {
    let mut code = 0;
    let mut reports = Vec::new();
    for p in packages {
        let bar = super::progress::bytes_bar(0, shown.quiet);
        bar.set_length(webaip::layout::bytes_below(p) * config.replicas.len() as u64);
        let r = store.put(p, audit, &|n| bar.inc(n));
        bar.finish_and_clear();
        match r {
            Ok(r) => {
                if !r.accepted {
                    code = code.max(EXIT_FINDINGS);
                }
                if !shown.json {
                    print_put(p, &r);
                }
                reports.push(serde_json::to_value(&r)?);
            }
            Err(e @ StoreError::Refused(_)) => {
                eprintln!("webaip: store put refused: {e}");
                code = EXIT_ERROR;
            }
            Err(e) => {
                eprintln!("webaip: store put: {}: {e}", p.display());
                code = EXIT_ERROR;
            }
        }
    }
    if shown.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    }
    Ok(code)
}

fn print_put(package: &Path, r: &PutReport) {
    let count = |status| r.copies.iter().filter(|c| c.status == status).count();
    let (uploaded, present) = (count(CopyStatus::Uploaded), count(CopyStatus::Present));
    print_failures(&r.copies);
    print_missing_dependencies(package, &r.requires_missing);
    let failed_on = if r.failed_replicas.is_empty() {
        String::new()
    } else {
        format!("; failed on {}", r.failed_replicas.join(", "))
    };
    println!(
        "{}: {} ({}): {} files, {} bytes; {uploaded} copies written, {present} already there{failed_on}",
        package.display(),
        r.package,
        if r.accepted { "ACCEPTED" } else { "INCOMPLETE" },
        r.files,
        r.bytes,
    );
}

fn run_check(
    store: &Store,
    replica: Option<&str>,
    deep: bool,
    shown: Shown,
) -> anyhow::Result<i32> {
    let bar = super::progress::bytes_bar(0, shown.quiet || !deep);
    let r = store.check(replica, deep, &|n| {
        bar.inc_length(n);
        bar.inc(n)
    })?;
    bar.finish_and_clear();
    shown.report(&r, print_check)?;
    Ok(if r.clean { 0 } else { EXIT_FINDINGS })
}

fn run_repair(store: &Store, deep: bool, shown: Shown) -> anyhow::Result<i32> {
    let r = store.repair(deep, &|_| {})?;
    shown.report(&r, print_repair)?;
    Ok(if r.repaired { 0 } else { EXIT_FINDINGS })
}

fn print_repair(r: &RepairReport) {
    print_check(&r.check);
    for a in &r.actions {
        let message = a.message.as_deref().unwrap_or_default();
        println!("{}: {}: {} {message}", a.replica, a.file, a.status);
    }
    let unrepairable = r.actions.iter().filter(|a| a.status == CopyStatus::Unrepairable).count();
    let mut verdict = Vec::new();
    if unrepairable > 0 {
        verdict.push(format!("{unrepairable} COULD NOT BE REPAIRED"));
    }
    if !r.unreadable.is_empty() {
        verdict.push(format!(
            "NOT REPAIRED: {} package(s) or copies could not be read (the errors above)",
            r.unreadable.len()
        ));
    }
    if verdict.is_empty() {
        verdict.push("all re-established".into());
    }
    let verdict = verdict.join("; ");
    println!("repair: {} copies acted on; {verdict}", r.actions.len());
}

fn run_rebuild_state(store: &Store, shown: Shown) -> anyhow::Result<i32> {
    let r = store.rebuild_state()?;
    shown.report(&r, |r| {
        for why in &r.refused {
            println!("refused: {why}");
        }
        let refused = if r.refused.is_empty() {
            String::new()
        } else {
            format!("; {} package directory(ies) refused", r.refused.len())
        };
        println!("state rebuilt: {} package(s){refused}", r.packages.len());
    })?;
    Ok(if r.refused.is_empty() { 0 } else { EXIT_FINDINGS })
}

/// What `store get` fetches, and where to.
#[derive(Debug, Clone, Copy)]
struct GetRequest<'a> {
    /// The package identifier (METS OBJID).
    package: &'a str,
    /// One file of it, or all.
    file: Option<&'a str>,
    to: &'a Path,
}

/// `store get`: the copies fetched and verified, then the exports asked for (a JSON object
/// with `copies`, `wacz` and `eark` when there are exports, else the list of copies).
fn run_get(
    store: &Store,
    request: GetRequest<'_>,
    export: &GetExportArgs,
    json: bool,
) -> anyhow::Result<i32> {
    let GetRequest { package, file, to } = request;
    if let Some(path) = &export.export_eark {
        export::eark_target_free(path)?;
    }
    let copies = store.get(package, file, to)?;
    if !json {
        for c in &copies {
            let note = c.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
            println!("{}: verified, from {}{note}", c.file, c.replica);
        }
    }
    let fetched = || format!("{package} fetched and verified into {}", to.display());
    let wacz = match &export.export_wacz {
        Some(path) => Some(get_wacz(to, path, json).with_context(fetched)?),
        None => None,
    };
    let eark = match &export.export_eark {
        Some(path) => Some(get_eark(to, path, export.eark_type, json).with_context(fetched)?),
        None => None,
    };
    if json {
        let report = match (&wacz, &eark) {
            (None, None) => serde_json::to_value(&copies)?,
            _ => serde_json::json!({ "copies": copies, "wacz": wacz, "eark": eark }),
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(0)
}

/// The WACZ export of a package `store get` fetched into `pkg`.
fn get_wacz(
    pkg: &Path,
    path: &Path,
    json: bool,
) -> anyhow::Result<webaip::export::wacz::WaczReport> {
    let r = export::write_wacz(pkg, path)?;
    if !json {
        println!("{}: WACZ of {} ({} bytes)", path.display(), r.objid, r.bytes);
    }
    Ok(r)
}

/// The E-ARK export of a package `store get` fetched into `pkg`.
fn get_eark(
    pkg: &Path,
    path: &Path,
    kind: EarkTypeArg,
    json: bool,
) -> anyhow::Result<webaip::export::eark::ExportSummary> {
    let kind = match kind {
        EarkTypeArg::Sip => PackageType::Sip,
        EarkTypeArg::Aip => PackageType::Aip,
    };
    let s = export::write_eark(pkg, path, kind, export::Replace::No)?;
    if !json {
        println!("{}: E-ARK {} of {}", path.display(), kind.as_str(), s.objid);
    }
    Ok(s)
}

/// What `store remove` was told: list only, or delete.
#[derive(Debug, Clone, Copy)]
struct RemoveConsent {
    dry_run: bool,
    yes: bool,
}

/// `store remove`: nothing without `--yes` or `--dry-run`; a refusal is exit 2, a removal
/// that stopped part-way exit 1.
fn run_remove(
    store: &Store,
    package: &str,
    consent: RemoveConsent,
    json: bool,
) -> anyhow::Result<i32> {
    if !consent.dry_run && !consent.yes {
        eprintln!(
            "webaip: store remove deletes {package} from every replica: add --yes to do it, or --dry-run to see what it deletes"
        );
        return Ok(EXIT_ERROR);
    }
    let r = match store.remove(package, consent.dry_run) {
        Ok(r) => r,
        Err(e @ StoreError::Refused(_)) => {
            eprintln!("webaip: store remove refused: {e}");
            return Ok(EXIT_ERROR);
        }
        Err(e) => return Err(e.into()),
    };
    let shown = Shown { json, quiet: true };
    shown.report(&r, print_removal)?;
    Ok(if r.removed || r.dry_run { 0 } else { EXIT_FINDINGS })
}

fn print_removal(r: &RemoveReport) {
    let verb = if r.dry_run { "would delete" } else { "deleted" };
    for rep in &r.replicas {
        for k in &rep.deleted {
            println!("{}: {verb} {k}", rep.replica);
        }
        match &rep.error {
            Some(e) => {
                println!("{}: FAILED after {} object(s): {e}", rep.replica, rep.deleted.len())
            }
            None => println!("{}: {} object(s) {verb}", rep.replica, rep.deleted.len()),
        }
    }
    let verdict = if r.dry_run {
        "DRY RUN: nothing deleted"
    } else if r.removed {
        "REMOVED from every replica"
    } else {
        "NOT REMOVED: some replicas still hold parts of it (run remove again)"
    };
    println!("{}: {verdict}", r.package);
}

fn print_missing_dependencies(package: &Path, missing: &[String]) {
    for m in missing {
        println!(
            "{}: WARNING: requires {m}, which the store does not hold (put it too)",
            package.display()
        );
    }
}

fn print_failures(copies: &[CopyOutcome]) {
    for c in copies.iter().filter(|c| c.status == CopyStatus::Failed) {
        println!("{}: {}: FAILED {}", c.replica, c.file, c.message.as_deref().unwrap_or_default());
    }
}

fn print_check(r: &webaip::store::CheckReport) {
    for rep in &r.replicas {
        for k in &rep.temporaries_removed {
            println!("{}: {k}", rep.replica);
        }
        for (what, list) in [
            ("missing", &rep.missing),
            ("corrupt", &rep.corrupt),
            ("extra", &rep.extra),
            ("error", &rep.errors),
        ] {
            for k in list {
                println!("{}: {what}: {k}", rep.replica);
            }
        }
        println!(
            "{}: {} copies expected, {} missing, {} corrupt, {} extra, {} unreadable{}",
            rep.replica,
            rep.expected,
            rep.missing.len(),
            rep.corrupt.len(),
            rep.extra.len(),
            rep.errors.len(),
            if r.deep { format!(", {} verified by SHA-512", rep.verified) } else { String::new() }
        );
    }
    for d in &r.missing_dependencies {
        println!("dependency missing: {} requires {}: {}", d.package, d.requires, d.why);
    }
    println!(
        "check{}: {} package(s): {}",
        if r.deep { " --deep" } else { "" },
        r.packages,
        if r.clean { "CLEAN" } else { "PROBLEMS FOUND" }
    );
}
