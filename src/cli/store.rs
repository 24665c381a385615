//! `webaip store`: put packages to every replica, check, repair and fetch them.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

use webaip::audit::AuditOptions;
use webaip::batch::export;
use webaip::export::eark::PackageType;
use webaip::store::config::StoreConfig;
use webaip::store::{CopyOutcome, CopyStatus, Store, StoreError};

use super::{EXIT_ERROR, EXIT_FINDINGS};

/// Arguments of `webaip store`.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The replica configuration (TOML; see README "Replicated storage").
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

/// Runs the command; returns the exit status (0 done and clean, 1 findings or an incomplete
/// store, 2 refused or could not run).
pub fn run(args: StoreArgs) -> anyhow::Result<i32> {
    let config = StoreConfig::load(&args.config)?;
    let store = Store::open(&config)?;
    let quiet = args.quiet || args.json;
    match args.action {
        Action::Put { packages, check } => {
            let audit = AuditOptions {
                validate: check.options()?,
                eark: check.is_eark(),
                ..Default::default()
            };
            let mut code = 0;
            let mut reports = Vec::new();
            for p in &packages {
                let bar = super::progress::bytes_bar(0, quiet);
                let total: u64 = walkdir::WalkDir::new(p)
                    .into_iter()
                    .filter_map(|e| e.ok()?.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum();
                bar.set_length(total * config.replicas.len() as u64);
                let r = store.put(p, &audit, &|n| bar.inc(n));
                bar.finish_and_clear();
                match r {
                    Ok(r) => {
                        if !r.accepted {
                            code = code.max(EXIT_FINDINGS);
                        }
                        if !args.json {
                            let uploaded = r
                                .copies
                                .iter()
                                .filter(|c| c.status == CopyStatus::Uploaded)
                                .count();
                            let present =
                                r.copies.iter().filter(|c| c.status == CopyStatus::Present).count();
                            print_failures(&r.copies);
                            print_missing_dependencies(p, &r.requires_missing);
                            println!(
                                "{}: {} ({}): {} files, {} bytes; {uploaded} copies written, {present} already there{}",
                                p.display(),
                                r.package,
                                if r.accepted { "ACCEPTED" } else { "INCOMPLETE" },
                                r.files,
                                r.bytes,
                                if r.failed_replicas.is_empty() {
                                    String::new()
                                } else {
                                    format!("; failed on {}", r.failed_replicas.join(", "))
                                }
                            );
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
            if args.json {
                println!("{}", serde_json::to_string_pretty(&reports)?);
            }
            Ok(code)
        }
        Action::Check { replica, deep } => {
            let bar = super::progress::bytes_bar(0, quiet || !deep);
            let r = store.check(replica.as_deref(), deep, &|n| {
                bar.inc_length(n);
                bar.inc(n)
            })?;
            bar.finish_and_clear();
            if args.json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print_check(&r);
            }
            Ok(if r.clean { 0 } else { EXIT_FINDINGS })
        }
        Action::Repair { deep } => {
            let r = store.repair(deep, &|_| {})?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print_check(&r.check);
                for a in &r.actions {
                    println!(
                        "{}: {}: {} {}",
                        a.replica,
                        a.file,
                        a.status,
                        a.message.as_deref().unwrap_or_default()
                    );
                }
                let unrepairable =
                    r.actions.iter().filter(|a| a.status == CopyStatus::Unrepairable).count();
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
            Ok(if r.repaired { 0 } else { EXIT_FINDINGS })
        }
        Action::Get { package, file, to, export } => {
            run_get(&store, (&package, file.as_deref(), &to), &export, args.json)
        }
        remove @ Action::Remove { .. } => run_remove(&store, remove, args.json),
        Action::RebuildState => {
            let r = store.rebuild_state()?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                for why in &r.refused {
                    println!("refused: {why}");
                }
                println!(
                    "state rebuilt: {} package(s){}",
                    r.packages.len(),
                    if r.refused.is_empty() {
                        String::new()
                    } else {
                        format!("; {} package directory(ies) refused", r.refused.len())
                    }
                );
            }
            Ok(if r.refused.is_empty() { 0 } else { EXIT_FINDINGS })
        }
    }
}

/// `store get`: the copies fetched and verified, then the exports asked for (a JSON object
/// with `copies`, `wacz` and `eark` when there are exports, else the list of copies).
fn run_get(
    store: &Store,
    (package, file, to): (&str, Option<&str>, &std::path::Path),
    export: &GetExportArgs,
    json: bool,
) -> anyhow::Result<i32> {
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
        Some(path) => {
            let r = export::write_wacz(to, path).with_context(fetched)?;
            if !json {
                println!("{}: WACZ of {} ({} bytes)", path.display(), r.objid, r.bytes);
            }
            Some(r)
        }
        None => None,
    };
    let eark = match &export.export_eark {
        Some(path) => {
            let kind = match export.eark_type {
                EarkTypeArg::Sip => PackageType::Sip,
                EarkTypeArg::Aip => PackageType::Aip,
            };
            let s =
                export::write_eark(to, path, kind, export::Replace::No).with_context(fetched)?;
            if !json {
                println!("{}: E-ARK {} of {}", path.display(), kind.as_str(), s.objid);
            }
            Some(s)
        }
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

/// `store remove`: nothing without `--yes` or `--dry-run`; a refusal is exit 2, a removal
/// that stopped part-way exit 1.
fn run_remove(store: &Store, action: Action, json: bool) -> anyhow::Result<i32> {
    let Action::Remove { package, dry_run, yes } = action else { return Ok(EXIT_ERROR) };
    let package = package.as_str();
    if !dry_run && !yes {
        eprintln!(
            "webaip: store remove deletes {package} from every replica: add --yes to do it, or --dry-run to see what it deletes"
        );
        return Ok(EXIT_ERROR);
    }
    let r = match store.remove(package, dry_run) {
        Ok(r) => r,
        Err(e @ StoreError::Refused(_)) => {
            eprintln!("webaip: store remove refused: {e}");
            return Ok(EXIT_ERROR);
        }
        Err(e) => return Err(e.into()),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
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
    Ok(if r.removed || r.dry_run { 0 } else { EXIT_FINDINGS })
}

fn print_missing_dependencies(package: &std::path::Path, missing: &[String]) {
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
