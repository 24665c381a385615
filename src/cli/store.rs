//! `webaip store`: put packages to every replica, check, repair and fetch them.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use webaip::{
    AuditOptions, EarkType, ObjectLog, ObjectOnReplica, OcflCheckReport, OcflProvenance,
    OcflRepairReport, PutOptions, PutReport, Store, StoreCheckOptions, StoreCheckReport,
    StoreCheckRun, StoreCheckSchedule, StoreCheckSelection, StoreCheckVerdict, StoreConfig,
    StoreCopyOutcome, StoreCopyStatus, StoreError, StoreGet, StoreGetReport, StoreMigrateReport,
    StoreRemoveReport, StoreRepairReport, StoreSampleOdds, StoreSampleSize, bytes_to_put,
    escape_controls, parse_size, store_check, store_check_objects, store_get, store_list,
    store_log, store_migrate, store_put, store_rebuild_state, store_remove, store_repair,
    store_repair_objects,
};

use super::{EXIT_ERROR, EXIT_FINDINGS, Kinded};

/// Arguments of `webaip store`.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The replica configuration (TOML; see docs/reference.md, `webaip store`).
    #[arg(long, env = "WEBAIP_STORE_CONFIG")]
    config: PathBuf,
    /// Print the report as one JSON object, with a `kind` naming the subcommand (and no
    /// progress).
    #[arg(long, global = true, help_heading = "Reporting")]
    json: bool,
    /// Print nothing on success: no progress, no report, no warnings; errors are still
    /// printed. With --json, only the JSON.
    #[arg(short, long, global = true, help_heading = "Reporting")]
    quiet: bool,
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Verify packages (every file's SHA-512 against the manifest, the METS valid; with
    /// --audit the full audit), then write every file to every replica and verify every copy.
    #[command(after_long_help = PUT_JSON)]
    Put {
        /// Package directories.
        #[arg(required = true)]
        packages: Vec<PathBuf>,
        /// Also audit each package record by record (every container's records and their
        /// payload digests, as `webaip audit` does) before it is stored; without it the
        /// containers' records are not audited.
        #[arg(long)]
        audit: bool,
        #[command(flatten, next_help_heading = "Validation")]
        check: super::validate::MetsCheckArgs,
    },
    /// Which copies are missing, extra or of the wrong size (with --deep: wrong SHA-512).
    #[command(after_long_help = CHECK_JSON)]
    Check {
        /// Only this replica.
        #[arg(long, conflicts_with = "resume")]
        replica: Option<String>,
        /// Recompute the SHA-512 of every copy.
        #[arg(long, conflicts_with = "resume")]
        deep: bool,
        #[command(flatten)]
        schedule: ScheduleArgs,
    },
    /// Re-establish missing and corrupt copies from copies that verify.
    #[command(after_long_help = REPAIR_JSON)]
    Repair {
        /// Recompute every copy's SHA-512 first (else sizes, lists, and earlier findings).
        #[arg(long)]
        deep: bool,
        /// OCFL replicas: take object ID, which the state database does not record (or not at
        /// its latest head), as webaip's: its latest head is recorded as committed and copied
        /// to the replicas that lack it. For an object it records, only a later head than the
        /// committed one, descending from it and held by most replicas. Repeatable.
        #[arg(long, value_name = "ID")]
        adopt: Vec<String>,
    },
    /// Fetch a package (or one of its files) and verify it.
    #[command(after_long_help = GET_JSON)]
    Get {
        /// The package identifier (METS OBJID).
        package: String,
        /// One file of the package (package-relative path).
        file: Option<String>,
        /// The folder to fetch it into (no file there is replaced).
        #[arg(short, long)]
        out: PathBuf,
        /// OCFL replicas: the version to fetch (1, 2, ...; default: the latest).
        #[arg(long, value_name = "N")]
        version: Option<u32>,
        #[command(flatten)]
        export: GetExportArgs,
    },
    /// OCFL replicas: an object's versions (dates, messages, users, files).
    #[command(after_long_help = LOG_JSON)]
    Log {
        /// The package identifier (METS OBJID).
        package: String,
    },
    /// OCFL replicas: every object on every replica (id, head, bytes).
    #[command(after_long_help = LIST_JSON)]
    List,
    /// Recreate the state database from what the replicas hold.
    #[command(after_long_help = REBUILD_JSON)]
    RebuildState,
    /// Move every replica (folders and buckets) from the webaip layout to an OCFL storage
    /// root, in place: each package becomes an object at v1 (its files hard-linked in a
    /// folder, copied by the server in a bucket; hashed and checked), its old files deleted
    /// only once the object checks clean. Resumable. When no package is left, the
    /// configuration is switched to layout = "ocfl".
    #[command(after_long_help = MIGRATE_JSON)]
    Migrate,
    /// Delete a package from every replica (refused while other stored packages require it).
    /// On OCFL replicas its object goes whole, every version of it and every package kept in
    /// it; a package kept in another package's object is refused (remove that object).
    #[command(after_long_help = REMOVE_JSON)]
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

/// Which objects `store check` looks at, and how it is spread over time.
#[derive(Debug, Args)]
struct ScheduleArgs {
    /// Check only the N objects checked longest ago on the replicas checked (never checked
    /// first); with --deep, the N hashed longest ago (never deep-checked first).
    #[arg(long, value_name = "N", conflicts_with_all = ["sample", "resume"], help_heading = "Schedule")]
    oldest: Option<u64>,
    /// Check a random sample: N objects, or a share (0.05 or 5%). The report gives the chance
    /// it finds damage; its verdict is never clean.
    #[arg(long, value_name = "N|SHARE", value_parser = StoreSampleSize::parse, conflicts_with = "resume", help_heading = "Schedule")]
    sample: Option<StoreSampleSize>,
    /// Go on with the last check run that did not finish (killed, or stopped by --for,
    /// --until); its objects and options are the run's own. The report covers the whole run.
    #[arg(long, help_heading = "Schedule")]
    resume: bool,
    /// Read at most SIZE per hour (a size as --memory takes: 500G, 2T): a deep check spread
    /// over days.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Schedule")]
    budget: Option<u64>,
    /// Stop cleanly after DURATION (8h, 30m, 2days); --resume goes on.
    #[arg(long = "for", value_name = "DURATION", value_parser = humantime::parse_duration, conflicts_with = "until", help_heading = "Schedule")]
    for_: Option<std::time::Duration>,
    /// Stop cleanly at TIME (RFC 3339, e.g. 2026-12-01T06:00:00Z); --resume goes on.
    #[arg(long, value_name = "TIME", value_parser = parse_time, help_heading = "Schedule")]
    until: Option<chrono::DateTime<chrono::Utc>>,
}

impl ScheduleArgs {
    fn schedule(&self) -> StoreCheckSchedule {
        let selection = match (self.oldest, self.sample) {
            (Some(n), _) => StoreCheckSelection::Oldest(n),
            (None, Some(s)) => StoreCheckSelection::Sample(s),
            (None, None) => StoreCheckSelection::All,
        };
        let until = self.until.or_else(|| {
            self.for_
                .and_then(|d| chrono::Duration::from_std(d).ok())
                .map(|d| chrono::Utc::now() + d)
        });
        StoreCheckSchedule { selection, resume: self.resume, budget: self.budget, until }
    }
}

fn parse_time(text: &str) -> Result<chrono::DateTime<chrono::Utc>, chrono::ParseError> {
    chrono::DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&chrono::Utc))
}

/// The examples of `store ... --json` that each subcommand's `--help` ends with.
const PUT_JSON: &str = r#"JSON (--json), one object, a report per package:
  {"kind": "put", "packages": [{"package": "OBJID", "dir": "...", "accepted": true,
    "files": 9, "bytes": 81234, "copies": [...], "failed_replicas": [],
    "verified": "fixity", ...}]}
  "verified": "fixity" (every file's SHA-512 against the manifest, the METS valid; the
  containers' records not audited) or "audited" (--audit: the full audit as well)."#;
const CHECK_JSON: &str = r#"JSON (--json), one object (OCFL replicas: "objects", "seen", "findings"):
  {"kind": "check", "deep": false, "packages": 2, "clean": true,
   "replicas": [{"replica": "disk", "expected": 18, "missing": [], ...}], ...,
   "run": {"id": 7, "sessions": 1, "selection": "all", "objects": 2, "planned": 2,
           "checked": 2, "bytes_read": 0, "finished": true, "stopped": null,
           "verdict": "clean", "sample": null,
           "seen": {"objects": 2, "never_checked": 0, "oldest_check": "...",
                    "never_deep_checked": 2, "oldest_deep_check": null, ...}}}"#;
const REPAIR_JSON: &str = r#"JSON (--json), one object:
  {"kind": "repair", "repaired": true, "check": {"clean": false, ...},
   "actions": [{"replica": "disk", "file": "...", "status": "repaired", ...}], "unreadable": []}"#;
const GET_JSON: &str = r#"JSON (--json), one object:
  {"kind": "get", "copies": [{"replica": "disk", "file": "METS.xml", "status": "present", ...}],
   "wacz": null, "eark": null}"#;
const LOG_JSON: &str = r#"JSON (--json), one object:
  {"kind": "log", "id": "OBJID", "replica": "disk", "head": "v2", "provenance": "recorded",
   "versions": [{"version": "v1", "created": "...", "message": "...", "user": "...",
                 "address": null, "files": 9, "added": 9}, ...]}"#;
const LIST_JSON: &str = r#"JSON (--json), one object:
  {"kind": "list", "objects": [{"replica": "disk", "object": "abc/def/012/OBJID", "id": "OBJID",
   "head": "v1", "inventory_sha512": "...", "provenance": "recorded", "bytes": 81234}, ...]}"#;
const REBUILD_JSON: &str = r#"JSON (--json), one object:
  {"kind": "rebuild-state", "packages": ["OBJID", ...], "refused": [],
   "left_as_recorded": []}
OCFL replicas: an object is recorded when more than half of the configured replicas hold one
head inventory of it; one held by fewer, at two heads of one number, or arrived after the
database's records began is refused; one the database records already is left as it is.
Exit status: 0 nothing refused, 1 something refused (named in refused)."#;
const MIGRATE_JSON: &str = r#"JSON (--json), one object:
  {"kind": "migrate", "replicas": ["disk-a", "disk-b"], "objects_migrated": 2,
   "bytes_linked": 162468, "bytes_copied": 0, "bytes_server_copied": 0, "remaining": 0,
   "switched": true,
   "migrated": [{"package": "OBJID", "object": "abc/def/012/OBJID", "files": 9, ...}],
   "refused": [{"package": "OBJID", "reason": "..."}], "unrecorded_dirs": [],
   "leftovers": []}
Exit status: 0 every package moved and the configuration switched, 1 packages left (refused,
or not moved) or other entries left in a root, 2 refused (another migrate running, a replica
that cannot be reached)."#;
const REMOVE_JSON: &str = r#"JSON (--json), one object:
  {"kind": "remove", "package": "OBJID", "dir": "...", "dry_run": true, "removed": false,
   "replicas": [{"replica": "disk", "deleted": [...], "error": null}]}
On OCFL replicas "kept" lists the packages kept in the object, removed with it (absent when
none). Exit status: 0 removed (or a dry run), 1 a replica stopped part-way (run it again),
2 refused."#;

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

/// How a report is shown: as JSON, as text, or not at all.
#[derive(Debug, Clone, Copy)]
struct Shown {
    json: bool,
    quiet: bool,
}

impl Shown {
    /// Prints `report` as one JSON object of `kind` when asked to, else hands it to `text`
    /// unless quiet.
    fn report<T: serde::Serialize>(
        self,
        kind: &'static str,
        report: &T,
        text: impl FnOnce(&T),
    ) -> anyhow::Result<()> {
        if self.json {
            println!("{}", serde_json::to_string_pretty(&Kinded { kind, report })?);
        } else if !self.quiet {
            text(report);
        }
        Ok(())
    }

    /// True when nothing but errors and the JSON is to be printed: no progress bar.
    fn silent(self) -> bool {
        self.json || self.quiet
    }
}

/// Runs the command; returns the exit status (0 done and clean, 1 findings or an incomplete
/// store, 2 refused or could not run).
pub fn run(args: StoreArgs) -> anyhow::Result<i32> {
    let config = StoreConfig::load(&args.config)?;
    let store = Store::open(&config)?;
    let shown = Shown { json: args.json, quiet: args.quiet };
    match args.action {
        Action::Put { packages, audit, check } => {
            let check = AuditOptions {
                validate: check.options()?,
                eark: check.is_eark(),
                ..Default::default()
            };
            run_put(&store, &config, &packages, &PutOptions { check, audit }, shown)
        }
        Action::Check { replica, deep, schedule } => {
            let options = StoreCheckOptions { replica, deep, schedule: schedule.schedule() };
            if store.is_ocfl() {
                run_check_objects(&store, &options, shown)
            } else {
                run_check(&store, &options, shown)
            }
        }
        Action::Repair { deep, adopt } if store.is_ocfl() => {
            run_repair_objects(&store, deep, &adopt, shown)
        }
        Action::Repair { adopt, .. } if !adopt.is_empty() => {
            let refusal =
                webaip::types::StoreRefusal::NeedsOcfl { command: "store repair --adopt" };
            Err(StoreError::from(refusal).into())
        }
        Action::Repair { deep, .. } => run_repair(&store, deep, shown),
        Action::Log { package } => {
            let r = store_log(&store, &package)?;
            shown.report("log", &r, print_log)?;
            Ok(0)
        }
        Action::List => {
            let objects = store_list(&store)?;
            shown.report("list", &Listed { objects }, |l| print_list(&l.objects))?;
            Ok(0)
        }
        Action::Get { package, file, out, version, export } => {
            let request = StoreGet {
                file,
                version,
                export_wacz: export.export_wacz,
                export_eark: export.export_eark,
                eark_type: match export.eark_type {
                    EarkTypeArg::Sip => EarkType::Sip,
                    EarkTypeArg::Aip => EarkType::Aip,
                },
                ..StoreGet::new(package, out)
            };
            run_get(&store, &request, shown)
        }
        Action::Remove { package, dry_run, yes } => {
            run_remove(&store, &package, RemoveConsent { dry_run, yes }, shown)
        }
        Action::RebuildState => run_rebuild_state(&store, shown),
        Action::Migrate => run_migrate(&store, &config, &args.config, shown),
    }
}

/// The reports of `store put`, as one JSON object.
#[derive(serde::Serialize)]
struct Puts {
    packages: Vec<PutReport>,
}

/// `store put` of each package in turn: exit 2 when one was refused or could not be put, 1
/// when one is incomplete.
fn run_put(
    store: &Store,
    config: &StoreConfig,
    packages: &[PathBuf],
    opts: &PutOptions,
    shown: Shown,
) -> anyhow::Result<i32> {
    let mut code = 0;
    let mut reports = Vec::new();
    for p in packages {
        let bar = super::progress::bytes_bar(0, shown.silent());
        bar.set_length(bytes_to_put(config, p));
        let r = store_put(store, p, opts, &|n| bar.inc(n));
        bar.finish_and_clear();
        match r {
            Ok(r) => {
                if !r.accepted {
                    code = code.max(EXIT_FINDINGS);
                }
                if !shown.silent() {
                    print_put(p, &r);
                }
                reports.push(r);
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
    shown.report("put", &Puts { packages: reports }, |_| {})?;
    Ok(code)
}

fn print_put(package: &Path, r: &PutReport) {
    let count = |status| r.copies.iter().filter(|c| c.status == status).count();
    let (uploaded, present) = (count(StoreCopyStatus::Uploaded), count(StoreCopyStatus::Present));
    print_failures(&r.copies);
    print_missing_dependencies(package, &r.requires_missing);
    let failed_on = if r.failed_replicas.is_empty() {
        String::new()
    } else {
        format!("; failed on {}", r.failed_replicas.join(", "))
    };
    println!(
        "{}: {} ({}): {} files, {} bytes; {uploaded} copies written, {present} already there{failed_on}{}; {}",
        package.display(),
        r.package,
        if r.accepted { "ACCEPTED" } else { "INCOMPLETE" },
        r.files,
        r.bytes,
        kept_in(r),
        r.verified.describe(),
    );
}

/// Where a package put into another package's OCFL object is (one wording wherever a package
/// is stored): empty for a package in its own object or the other layout.
pub(super) fn kept_in(r: &PutReport) -> String {
    match (&r.object, &r.version) {
        (Some(object), Some(version)) if *object != r.package => {
            format!("; kept as {version} of object {object}")
        }
        _ => String::new(),
    }
}

fn run_check(store: &Store, options: &StoreCheckOptions, shown: Shown) -> anyhow::Result<i32> {
    let bar = super::progress::bytes_bar(0, shown.silent() || !options.deep);
    let r = store_check(store, options, &|n| {
        bar.inc_length(n);
        bar.inc(n)
    })?;
    bar.finish_and_clear();
    shown.report("check", &r, |r| {
        print_check(&r.report, false);
        print_run(&r.run);
    })?;
    quiet_verdict(&r.run, shown);
    Ok(run_status(&r.run))
}

/// Exit 1 when the run found something; a sample, a part or a stopped run that found
/// nothing is 0 (their verdict says what they covered).
fn run_status(run: &StoreCheckRun) -> i32 {
    if run.verdict == StoreCheckVerdict::ProblemsFound { EXIT_FINDINGS } else { 0 }
}

/// What a check run covered, what a sample can say, how recently the store was seen.
fn print_run(run: &StoreCheckRun) {
    let sessions = if run.sessions > 1 {
        format!(", resumed: {} sessions, this report covers them all", run.sessions)
    } else {
        String::new()
    };
    println!(
        "run {} ({}{sessions}): {} of {} planned object(s) checked, {} in the store, {} bytes read",
        run.id, run.selection, run.checked, run.planned, run.objects, run.bytes_read
    );
    if let Some(why) = &run.stopped {
        let left = run.planned.saturating_sub(run.checked);
        println!(
            "run {}: STOPPED ({why}); {left} object(s) left: `store check --resume` goes on",
            run.id
        );
    }
    if let Some(odds) = &run.sample {
        print_odds(odds);
    }
    let seen = &run.seen;
    let oldest = seen.oldest_check.as_deref().unwrap_or("-");
    let oldest_deep = seen.oldest_deep_check.as_deref().unwrap_or("-");
    println!(
        "seen: {} object(s), {} never checked, oldest last check {oldest}; \
         {} never deep-checked (bytes hashed), oldest last deep check {oldest_deep}",
        seen.objects, seen.never_checked, seen.never_deep_checked
    );
    println!("{}", verdict_line(run));
}

/// What a sample can say: the chance it holds some damage of a few real shares, and what it
/// cannot find without --deep.
fn print_odds(odds: &StoreSampleOdds) {
    for d in &odds.detection {
        println!(
            "sample: if {} of {} objects ({}%) were damaged, a sample of {} holds at least one with probability {:.4}",
            d.damaged,
            odds.population,
            percent(d.damaged_share),
            odds.sample,
            d.probability
        );
    }
    if !odds.bytes_hashed {
        println!(
            "sample: without --deep the sampled copies are listed and their sizes compared: it \
             finds missing or resized copies only; corruption of the bytes is not looked for"
        );
    }
}

/// A share as a percentage, to at most three decimals (`2`, `0.125`).
fn percent(share: f64) -> String {
    let p = format!("{:.3}", share * 100.0);
    p.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `run N: VERDICT ...`, the line a run's report ends with (and all `-q` prints of a run
/// that is not clean).
fn verdict_line(run: &StoreCheckRun) -> String {
    let verdict = match run.verdict {
        StoreCheckVerdict::Clean => "CLEAN",
        StoreCheckVerdict::ProblemsFound => "PROBLEMS FOUND",
        StoreCheckVerdict::Sampled => {
            "SAMPLED: nothing found in the sample (not a check of the whole store)"
        }
        StoreCheckVerdict::Partial => {
            "PARTIAL: nothing found in the objects checked (not the whole store)"
        }
        StoreCheckVerdict::Stopped => "STOPPED: nothing found so far (not finished)",
    };
    format!("run {}: {verdict}", run.id)
}

/// With `-q` (and no --json), the verdict line of a run that is not clean: quiet drops
/// detail, never a verdict that is not clean.
fn quiet_verdict(run: &StoreCheckRun, shown: Shown) {
    if shown.quiet && !shown.json && run.verdict != StoreCheckVerdict::Clean {
        println!("{}", verdict_line(run));
    }
}

/// `store list` as one JSON object.
#[derive(serde::Serialize)]
struct Listed {
    objects: Vec<ObjectOnReplica>,
}

// Inventories are input from a replica: what they say is printed with its control characters
// escaped, so a crafted message cannot drive the terminal.
fn print_log(r: &ObjectLog) {
    for v in &r.versions {
        let user = escape_controls(v.user.as_deref().unwrap_or("-"));
        let message = escape_controls(v.message.as_deref().unwrap_or_default());
        println!(
            "{} {} {user}: {} files, {} added: {message}",
            escape_controls(&v.version),
            escape_controls(&v.created),
            v.files,
            v.added
        );
    }
    let mut trust = match r.provenance {
        OcflProvenance::Recorded => "committed by webaip".to_string(),
        _ => "NOT RECORDED by webaip: trusted by consistency only".to_string(),
    };
    if let Some(later) = &r.recorded_head {
        trust = format!("{trust}; ROLLED BACK: webaip committed {later}, which no replica holds");
    }
    println!(
        "{}: head {} (read from {}; {trust})",
        escape_controls(&r.id),
        escape_controls(&r.head),
        r.replica
    );
}

fn print_list(objects: &[ObjectOnReplica]) {
    for o in objects {
        let id = escape_controls(o.id.as_deref().unwrap_or("(inventory unreadable)"));
        let head = escape_controls(o.head.as_deref().unwrap_or("-"));
        let trust = match o.provenance {
            Some(OcflProvenance::NotRecorded) => " NOT RECORDED by webaip",
            Some(OcflProvenance::NoRecord) => " (no record)",
            _ => "",
        };
        println!("{}: {id} {head}{trust} {} bytes ({})", o.replica, o.bytes, o.object);
    }
    println!("{} object cop(ies)", objects.len());
}

fn run_check_objects(
    store: &Store,
    options: &StoreCheckOptions,
    shown: Shown,
) -> anyhow::Result<i32> {
    let r = store_check_objects(store, options)?;
    shown.report("check", &r, |r| {
        print_check_objects(&r.report, false);
        print_run(&r.run);
    })?;
    quiet_verdict(&r.run, shown);
    Ok(run_status(&r.run))
}

/// The findings, then (`verdict`) the check's verdict line; a run prints its own verdict.
fn print_check_objects(r: &OcflCheckReport, verdict: bool) {
    for f in &r.findings {
        let kind = serde_json::to_value(f.kind).ok();
        let kind = kind.as_ref().and_then(|k| k.as_str()).unwrap_or("?");
        // Keys and details can carry names and text from a replica's inventory.
        let (key, detail) = (escape_controls(&f.key), escape_controls(&f.detail));
        println!("{}: {kind}: {key}: {detail}", f.replica);
    }
    print_missing_required(&r.missing_dependencies);
    if !verdict {
        println!("check{}: {} object(s)", if r.deep { " --deep" } else { "" }, r.objects);
        return;
    }
    println!(
        "check{}: {} object(s): {}",
        if r.deep { " --deep" } else { "" },
        r.objects,
        if r.clean { "CLEAN" } else { "PROBLEMS FOUND" }
    );
}

fn run_repair_objects(
    store: &Store,
    deep: bool,
    adopt: &[String],
    shown: Shown,
) -> anyhow::Result<i32> {
    let r = store_repair_objects(store, deep, adopt)?;
    shown.report("repair", &r, |r: &OcflRepairReport| {
        for a in &r.adopted {
            let on = a.replicas.join(", ");
            let (of, id) = (a.configured, escape_controls(&a.id));
            let before = match &a.recorded_before {
                Some(v) => format!("; webaip had recorded {v}"),
                None => "; the state database recorded nothing of it".into(),
            };
            println!(
                "{id}: {} ADOPTED as webaip's (held by {on}, of {of} replicas{before})",
                a.head
            );
            for u in &a.unreadable {
                println!("{id}: not read, not adopted from: {}", escape_controls(u));
            }
        }
        print_check_objects(&r.check, true);
        for a in &r.actions {
            let done = match (a.repaired, a.source.as_deref()) {
                (true, Some(from)) => format!("REBUILT from {from}"),
                (true, None) => "REBUILT".to_string(),
                (false, _) => "NOT REPAIRED".to_string(),
            };
            // The message can carry names and link targets read from a replica.
            let (object, message) = (escape_controls(&a.object), escape_controls(&a.message));
            // An action on no object is on the storage root's own files.
            let object = if object.is_empty() { "storage root".into() } else { object };
            println!("{}: {object}: {done}: {message}", a.replica);
        }
        print_check_objects(&r.after, true);
    })?;
    Ok(if r.repaired { 0 } else { EXIT_FINDINGS })
}

fn run_repair(store: &Store, deep: bool, shown: Shown) -> anyhow::Result<i32> {
    let r = store_repair(store, deep)?;
    shown.report("repair", &r, print_repair)?;
    Ok(if r.repaired { 0 } else { EXIT_FINDINGS })
}

fn print_repair(r: &StoreRepairReport) {
    print_check(&r.check, true);
    for a in &r.actions {
        let message = a.message.as_deref().unwrap_or_default();
        println!("{}: {}: {} {message}", a.replica, a.file, a.status);
    }
    let unrepairable =
        r.actions.iter().filter(|a| a.status == StoreCopyStatus::Unrepairable).count();
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
    let r = store_rebuild_state(store)?;
    shown.report("rebuild-state", &r, |r| {
        for why in &r.refused {
            println!("refused: {why}");
        }
        for id in &r.left_as_recorded {
            println!("left as recorded: {id} (the state database records it already)");
        }
        let refused = if r.refused.is_empty() {
            String::new()
        } else {
            format!("; {} package directory(ies) or object(s) refused", r.refused.len())
        };
        let left = match r.left_as_recorded.len() {
            0 => String::new(),
            n => format!("; {n} object(s) recorded already, left as they were"),
        };
        println!("state rebuilt: {} package(s){refused}{left}", r.packages.len());
    })?;
    Ok(if r.refused.is_empty() { 0 } else { EXIT_FINDINGS })
}

/// `store get`: the copies fetched and verified, then the exports asked for.
fn run_get(store: &Store, request: &StoreGet, shown: Shown) -> anyhow::Result<i32> {
    let r = store_get(store, request)?;
    shown.report("get", &r, |r| print_get(request, r))?;
    Ok(0)
}

fn print_get(request: &StoreGet, r: &StoreGetReport) {
    for c in &r.copies {
        let note = c.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        println!("{}: verified, from {}{note}", c.file, c.replica);
    }
    if let (Some(w), Some(path)) = (&r.wacz, &request.export_wacz) {
        println!("{}: WACZ of {} ({} bytes)", path.display(), w.objid, w.bytes);
    }
    if let (Some(e), Some(path)) = (&r.eark, &request.export_eark) {
        println!("{}: E-ARK {} of {}", path.display(), request.eark_type.as_str(), e.objid);
    }
}

/// What `store remove` was told: list only, or delete.
#[derive(Debug, Clone, Copy)]
struct RemoveConsent {
    dry_run: bool,
    yes: bool,
}

/// `store migrate`: exit 0 when every package moved and the configuration is switched, 1
/// when packages are left.
fn run_migrate(
    store: &Store,
    config: &StoreConfig,
    path: &Path,
    shown: Shown,
) -> anyhow::Result<i32> {
    let bar = super::progress::bytes_bar(0, shown.silent());
    bar.set_message("moving packages to OCFL");
    let r = store_migrate(store, config, path, &|n| bar.inc(n));
    bar.finish_and_clear();
    let r = r?;
    shown.report("migrate", &r, print_migrate)?;
    Ok(if r.switched { 0 } else { EXIT_FINDINGS })
}

fn print_migrate(r: &StoreMigrateReport) {
    for m in &r.migrated {
        println!("moved {} to {}", escape_controls(&m.package), escape_controls(&m.object));
        for a in &m.set_aside {
            println!("  set aside: {}", escape_controls(a));
        }
    }
    for f in &r.refused {
        println!("NOT MOVED {}: {}", escape_controls(&f.package), escape_controls(&f.reason));
    }
    for d in &r.unrecorded_dirs {
        println!(
            "left: {} (a package directory the state database does not record: `store rebuild-state`, then migrate again)",
            escape_controls(d)
        );
    }
    for d in &r.leftovers {
        println!(
            "left: {} (in no package and no object: an OCFL storage root holds nothing else; move it out of the root, then migrate again)",
            escape_controls(d)
        );
    }
    println!(
        "{} package(s) moved ({} bytes linked, {} copied), {} refused, {} left in the webaip layout",
        r.objects_migrated,
        r.bytes_linked,
        r.bytes_copied,
        r.refused.len(),
        r.remaining
    );
    if r.switched {
        println!("every replica is an OCFL storage root: the configuration says layout = \"ocfl\"");
    } else {
        println!(
            "NOT DONE: the store stays in the webaip layout until every package is moved and nothing else is left in a root (run `store migrate` again)"
        );
    }
}

/// `store remove`: nothing without `--yes` or `--dry-run`; a refusal is exit 2, a removal
/// that stopped part-way exit 1.
fn run_remove(
    store: &Store,
    package: &str,
    consent: RemoveConsent,
    shown: Shown,
) -> anyhow::Result<i32> {
    if !consent.dry_run && !consent.yes {
        eprintln!(
            "webaip: store remove deletes {package} from every replica: add --yes to do it, or --dry-run to see what it deletes"
        );
        return Ok(EXIT_ERROR);
    }
    let r = match store_remove(store, package, consent.dry_run) {
        Ok(r) => r,
        Err(e @ StoreError::Refused(_)) => {
            eprintln!("webaip: store remove refused: {e}");
            return Ok(EXIT_ERROR);
        }
        Err(e) => return Err(e.into()),
    };
    shown.report("remove", &r, print_removal)?;
    Ok(if r.removed || r.dry_run { 0 } else { EXIT_FINDINGS })
}

fn print_removal(r: &StoreRemoveReport) {
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
    for k in &r.kept {
        let how = if r.dry_run { "would be removed" } else { "removed" };
        println!("{}: {k}, kept in its object, {how} with it", r.package);
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

/// A warning for each package `package` requires that the store does not hold (`store put`,
/// `ingest --store`).
pub(super) fn print_missing_dependencies(package: &Path, missing: &[String]) {
    for m in missing {
        println!(
            "{}: WARNING: requires {m}, which the store does not hold (put it too)",
            package.display()
        );
    }
}

/// `store check`'s line for each dependency the store does not hold whole.
fn print_missing_required(missing: &[webaip::types::MissingDependency]) {
    for d in missing {
        // OBJIDs are the packages' own text.
        let (package, requires) = (escape_controls(&d.package), escape_controls(&d.requires));
        println!("dependency missing: {package} requires {requires}: {}", escape_controls(&d.why));
    }
}

fn print_failures(copies: &[StoreCopyOutcome]) {
    for c in copies.iter().filter(|c| c.status == StoreCopyStatus::Failed) {
        println!("{}: {}: FAILED {}", c.replica, c.file, c.message.as_deref().unwrap_or_default());
    }
}

/// The copies found wrong per replica, then (`verdict`) the check's verdict line; a run
/// prints its own verdict.
fn print_check(r: &StoreCheckReport, verdict: bool) {
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
    print_missing_required(&r.missing_dependencies);
    if !verdict {
        println!("check{}: {} package(s)", if r.deep { " --deep" } else { "" }, r.packages);
        return;
    }
    println!(
        "check{}: {} package(s): {}",
        if r.deep { " --deep" } else { "" },
        r.packages,
        if r.clean { "CLEAN" } else { "PROBLEMS FOUND" }
    );
}
