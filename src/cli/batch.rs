//! `webaip batch run` and `webaip batch status`: many packages from one manifest, resumable.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use webaip::{
    BATCH_DEFAULT_MIN_FREE, BATCH_ITEM_MEMORY, BatchCounts, BatchDelivery, BatchEarkExport,
    BatchEntry, BatchEvent, BatchExports, BatchItemState, BatchOptions, BatchOutcome,
    BatchResources, BatchShard, BatchStatus, CollectionError, CollectionInput, CollectionOutput,
    DEFAULT_LEVEL, DEFAULT_PROFILE, EarkForm, EarkType, IdentifyMode, PackageOptions, Profile,
    SerializationMode, Zone, batch_default_memory, batch_journal_path, parse_size,
    refuse_collection_output, report_collection,
};

use super::{EXIT_FINDINGS, progress, terminal_text};

/// Arguments of `webaip batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    #[command(subcommand)]
    command: BatchCommand,
}

#[derive(Debug, Subcommand)]
enum BatchCommand {
    /// Package every item of a manifest (CSV, or a folder of harvests) into --out and/or the
    /// replicated store (--store); a second run resumes where the first stopped.
    Run(Box<RunArgs>),
    /// Summarise one or several journals (an item in several is counted once).
    Status(StatusArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModeArg {
    Minimal,
    Full,
}

/// The OAIS type of the E-ARK packages exported.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum EarkTypeArg {
    Sip,
    Aip,
}

/// The form of each E-ARK package exported.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum EarkFormArg {
    /// DIR/NAME.zip.
    Zip,
    /// The folder DIR/NAME.
    Folder,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum IdentifyArg {
    None,
    Described,
    All,
}

/// Arguments of `webaip batch run`.
#[derive(Debug, Args)]
#[command(after_long_help = RUN_JSON)]
#[command(group = clap::ArgGroup::new("folder").required(true).args(["out", "work"]))]
struct RunArgs {
    /// A CSV manifest (source[,metadata[,options]] per line, paths relative to its folder),
    /// or a folder whose subdirectories and ARC/WARC/.zip files are the items.
    manifest: PathBuf,
    /// The folder the packages go to (one directory per item); with --store they are kept
    /// there as well.
    #[arg(long, short, help_heading = "Output")]
    out: Option<PathBuf>,
    /// Without --out: the folder packages are built in (below WORK/.batch-work) before
    /// --store puts them; each is removed once its put is recorded accepted.
    #[arg(long, requires = "store", conflicts_with = "out", help_heading = "Output")]
    work: Option<PathBuf>,
    /// Put each package into the replicated store of this configuration (as `webaip store
    /// put`: audited, every copy written and verified); the journal records it stored.
    #[arg(long, help_heading = "Output")]
    store: Option<PathBuf>,
    /// Make each package an AIP (as `webaip ingest`) before it goes to --out or --store.
    #[arg(long, help_heading = "Output")]
    ingest: bool,
    /// Export each package as a WACZ (as `webaip export wacz`) to DIR/NAME.wacz, after the
    /// put; the journal records it, and a rerun does not export it again.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    export_wacz: Option<PathBuf>,
    /// Export each package as an E-ARK 2.2 package (as `webaip export eark`) to DIR/NAME.zip
    /// (or the folder DIR/NAME with --eark-form folder), after the put.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    export_eark: Option<PathBuf>,
    /// The OAIS type of the E-ARK packages exported.
    #[arg(
        long,
        value_enum,
        default_value = "sip",
        requires = "export_eark",
        help_heading = "Output"
    )]
    eark_type: EarkTypeArg,
    /// Each E-ARK package as one ZIP or as a folder.
    #[arg(
        long,
        value_enum,
        default_value = "zip",
        requires = "export_eark",
        help_heading = "Output"
    )]
    eark_form: EarkFormArg,
    /// The journal (SQLite); default: OUT (or WORK)/batch-journal.sqlite (with a shard,
    /// batch-journal-K-of-N.sqlite).
    #[arg(long, help_heading = "Journal")]
    journal: Option<PathBuf>,
    /// Retry the items the journal records failed.
    #[arg(long, help_heading = "Journal")]
    retry_failed: bool,
    /// This run's share of the manifest, K/N (0 <= K < N); default: from
    /// SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with --shard-count.
    #[arg(long, value_parser = BatchShard::parse, help_heading = "Journal")]
    shard: Option<BatchShard>,
    /// The number of shards when it is taken from the environment.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), help_heading = "Journal")]
    shard_count: Option<u64>,
    /// Package without virus checking (recorded as "not scanned" on every container).
    #[arg(long, help_heading = "Virus check")]
    no_virus_check: bool,
    /// clamd to scan every payload with: unix:PATH or tcp:HOST:PORT.
    #[arg(long, env = "WEBAIP_CLAMD", help_heading = "Virus check")]
    clamd: Option<String>,
    /// Seconds to wait for clamd before giving up on it.
    #[arg(long, default_value_t = 300, help_heading = "Virus check")]
    clamd_timeout: u64,
    /// Fixed clock and seeded identifiers: a rerun gives byte-identical packages.
    #[arg(long, help_heading = "Packaging")]
    deterministic: bool,
    /// Package profile (bl-webarchive, or a .toml file).
    #[arg(long, default_value = DEFAULT_PROFILE, help_heading = "Packaging")]
    profile: String,
    /// METS serialization of every package (an item's options may say otherwise).
    #[arg(long, value_enum, help_heading = "Packaging")]
    mode: Option<ModeArg>,
    /// Compression level of the WARC gzip members, 0-9 on zlib's scale (records over 2 MiB: zlib-rs at the level compressing alike, 5 for 6).
    #[arg(long, default_value_t = DEFAULT_LEVEL, value_parser = clap::value_parser!(u32).range(0..=9), help_heading = "Packaging")]
    level: u32,
    /// Directory whose schema bundle replaces the official schemas built into webaip (the METS
    /// is validated against the built-in ones without it).
    #[arg(long, env = "WEBAIP_SCHEMAS", help_heading = "Packaging")]
    schemas: Option<PathBuf>,
    /// Time zone of PANDAS instance names and HTTrack log times (an item's options may say
    /// otherwise).
    #[arg(long, default_value = "UTC", help_heading = "Packaging")]
    timezone: String,
    /// PRONOM identification of payloads.
    #[arg(long, value_enum, default_value = "described", help_heading = "Identification")]
    identify: IdentifyArg,
    /// Items packaged at once; default: cores.
    #[arg(short = 'j', long = "jobs", help_heading = "Performance")]
    jobs: Option<usize>,
    /// Free space to keep on the output's file system (e.g. 10G): below it no new item
    /// starts until space is back (running ones finish); default 1G, 0 never pauses.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Performance")]
    min_free: Option<u64>,
    /// Memory budget of the items in flight (e.g. 4G): at most SIZE / 64 MiB items at once;
    /// default a quarter of the machine's memory (or of its cgroup's limit).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Performance")]
    memory: Option<u64>,
    /// At the end, write the collection report of the run's journal to this page (as
    /// `webaip report JOURNAL -o FILE`), also when items failed; a page that cannot be written
    /// is warned of and named in the JSON, and does not change the exit status.
    #[arg(long, value_name = "FILE", help_heading = "Reporting")]
    report: Option<PathBuf>,
    /// Print the outcome as one JSON object.
    #[arg(long, help_heading = "Reporting")]
    json: bool,
    /// Print nothing but errors and, when the run is not complete (the exit status 1), one
    /// line saying so.
    #[arg(long, short, help_heading = "Reporting")]
    quiet: bool,
}

/// The end of `batch run --help`: an example of its JSON.
const RUN_JSON: &str = "JSON output (--json):
  {\"manifest_items\": 120, \"items\": 120, \"packaged\": 118, \"failed\": 2, \"skipped_done\": 0,
   \"skipped_failed\": 0, \"stored\": 0, \"entries\": [{\"key\": \"...\", \"state\": \"done\", ...}],
   \"bytes\": 7340032, \"elapsed_seconds\": 41.2, \"in_flight\": 2, ...,
   \"report\": {\"page\": \"out/report.html\", \"written\": true, \"error\": null, \"packages\": 118, ...}}
  (\"report\" with --report only)";

/// Arguments of `webaip batch status`.
#[derive(Debug, Args)]
#[command(after_long_help = "JSON output (--json):
  {\"journals\": [{\"journal\": \"out/batch-journal.sqlite\", \"items\": 120, \"done\": 118, ...}],
   \"total\": {\"items\": 120, \"pending\": 0, \"running\": 0, \"done\": 118, \"failed\": 2, ...},
   \"failures\": [{\"key\": \"...\", \"state\": \"failed\", \"error\": \"...\", ...}]}")]
struct StatusArgs {
    /// Journals to summarise.
    #[arg(required = true)]
    journals: Vec<PathBuf>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Print nothing but errors and, when an item is not done (the exit status 1), the total
    /// line.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: BatchArgs) -> anyhow::Result<i32> {
    match args.command {
        BatchCommand::Run(a) => run_batch(*a),
        BatchCommand::Status(a) => run_status(a),
    }
}

/// The options of the run: every package's, the items' defaults, the share and the journal.
fn batch_options(args: &RunArgs) -> anyhow::Result<BatchOptions> {
    // The folder of the work folder (and of the default journal); clap requires one.
    let folder = args.out.clone().or_else(|| args.work.clone()).unwrap_or_default();
    let package = package_options(args, &folder)?;
    let shard = match args.shard {
        Some(s) => Some(s),
        None => BatchShard::from_env(|k| std::env::var(k).ok(), args.shard_count)?,
    };
    Ok(BatchOptions {
        journal: args.journal.clone().unwrap_or_else(|| batch_journal_path(&folder, shard)),
        jobs: super::jobs_or_cores(args.jobs),
        retry_failed: args.retry_failed,
        shard,
        package,
        resources: BatchResources {
            min_free: args.min_free.unwrap_or(BATCH_DEFAULT_MIN_FREE),
            memory: args.memory.unwrap_or_else(batch_default_memory),
        },
        deliver: deliver_options(args),
        out: folder,
    })
}

/// The options of every package (built in `folder`'s work folder).
fn package_options(args: &RunArgs, folder: &std::path::Path) -> anyhow::Result<PackageOptions> {
    let virus_check = super::package::virus_check_with(
        args.no_virus_check,
        args.clamd.as_deref(),
        args.clamd_timeout,
    )?;
    let profile = Profile::load(&args.profile)?;
    let mut package = PackageOptions::default()
        .out(folder.to_path_buf())
        .profile(profile)
        .level(args.level)
        .deterministic(args.deterministic)
        .virus_check(virus_check)
        .schemas(args.schemas.clone())
        .identify(match args.identify {
            IdentifyArg::None => IdentifyMode::None,
            IdentifyArg::Described => IdentifyMode::Described,
            IdentifyArg::All => IdentifyMode::All,
        });
    package.reading.zone = Zone::parse(&args.timezone)?;
    if let Some(m) = args.mode {
        package.mode = match m {
            ModeArg::Minimal => SerializationMode::Minimal,
            ModeArg::Full => SerializationMode::Full,
        };
    }
    Ok(package)
}

/// Ingest, the store, and the exports of each package.
fn deliver_options(args: &RunArgs) -> BatchDelivery {
    let eark = args.export_eark.clone().map(|dir| BatchEarkExport {
        dir,
        kind: match args.eark_type {
            EarkTypeArg::Sip => EarkType::Sip,
            EarkTypeArg::Aip => EarkType::Aip,
        },
        form: match args.eark_form {
            EarkFormArg::Zip => EarkForm::Zip,
            EarkFormArg::Folder => EarkForm::Folder,
        },
    });
    BatchDelivery {
        ingest: args.ingest,
        store: args.store.clone(),
        keep: args.out.is_some(),
        exports: BatchExports { wacz: args.export_wacz.clone(), eark },
    }
}

fn run_batch(args: RunArgs) -> anyhow::Result<i32> {
    let opts = batch_options(&args)?;
    if let Some(page) = &args.report {
        // Refused before the run, not after hours of it (checked again when written).
        refuse_collection_output(&report_refusals(&opts), page)?;
    }
    let bar = progress::batch_bar(args.quiet || args.json);
    let quiet = args.quiet;
    let tell = |event: BatchEvent<'_>| tell(&bar, quiet, event);
    let outcome = webaip::run_batch(&args.manifest, &opts, &tell);
    bar.finish_and_clear();
    let outcome = outcome?;
    let report = args.report.as_ref().map(|page| run_report(page, &opts, args.quiet));
    if args.json {
        // Written as it is made: the outcome of a large manifest is large already.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &RunJson { outcome: &outcome, report })?;
        writeln!(out)?;
        out.flush()?;
    } else if !args.quiet {
        print_outcome(&outcome, &opts);
    } else if !outcome.complete(&opts) {
        // Quiet drops detail, never a verdict that is not clean.
        println!(
            "batch: not complete: {} packaged, {} failed ({} failed before)",
            outcome.packaged, outcome.failed, outcome.skipped_failed
        );
    }
    Ok(if outcome.complete(&opts) { 0 } else { EXIT_FINDINGS })
}

/// `batch run --json`: the outcome, and the report written with `--report`.
#[derive(serde::Serialize)]
struct RunJson<'a> {
    #[serde(flatten)]
    outcome: &'a BatchOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    report: Option<ReportWritten>,
}

/// What became of the page `--report` asked for.
#[derive(Debug, serde::Serialize)]
struct ReportWritten {
    /// The page.
    page: String,
    /// Whether it was written.
    written: bool,
    /// Why not.
    error: Option<String>,
    /// Rows (packages) on it, and of them not read.
    packages: u64,
    not_read: u64,
}

/// What `--report` reports: the run's journal and the packages of its done items.
fn report_input(opts: &BatchOptions) -> CollectionInput {
    CollectionInput::Journal { path: opts.journal.clone(), packages: opts.out.clone() }
}

/// What the page must not replace: what it reports and, with a store, the store the run put
/// to (its configuration, state database, replica roots and work folders), as `report
/// --store` refuses them.
fn report_refusals(opts: &BatchOptions) -> Vec<CollectionInput> {
    let store = opts.deliver.store.clone().map(CollectionInput::Store);
    std::iter::once(report_input(opts)).chain(store).collect()
}

/// Writes the collection report of the run's journal to `page`; a failure is warned of (even
/// with --quiet: the page asked for is missing) and returned, never an error of the run.
fn run_report(page: &std::path::Path, opts: &BatchOptions, quiet: bool) -> ReportWritten {
    let input = report_input(opts);
    let output = CollectionOutput { page: Some(page), json: None };
    let shown = page.display().to_string();
    // Refused again when written: a replica's root made by the run did not exist before it.
    let refused = refuse_collection_output(&report_refusals(opts), page);
    // The run validated every METS it made: the page reads them and does not again.
    let made = refused
        .map_err(CollectionError::from)
        .and_then(|()| report_collection(&[input], Default::default(), output, &|_| {}));
    match made {
        Ok(s) => {
            if !quiet {
                eprintln!("batch: report: {}", terminal_text(&shown));
            }
            let (packages, not_read) = (s.totals.packages, s.totals.not_read);
            ReportWritten { page: shown, written: true, error: None, packages, not_read }
        }
        Err(e) => {
            let error = e.to_string();
            eprintln!(
                "webaip: warning: batch: the report {} was not written: {}",
                terminal_text(&shown),
                terminal_text(&error)
            );
            ReportWritten {
                page: shown,
                written: false,
                error: Some(error),
                packages: 0,
                not_read: 0,
            }
        }
    }
}

/// Shows an event of the run: on the progress bar, and a pause and its end on stderr too
/// (unless `quiet`), whether or not it is a terminal.
fn tell(bar: &progress::BatchBar, quiet: bool, event: BatchEvent<'_>) {
    match event {
        BatchEvent::Planned { items, bytes, .. } => bar.plan(items, bytes),
        BatchEvent::Finished { item, state, bytes } => {
            bar.finished(state == BatchItemState::Done, bytes, &terminal_text(&item.key));
        }
        BatchEvent::Paused { dir, free, required } if !quiet => bar.say(&format!(
            "batch: paused: {} has {} free, --min-free wants {}; running items finish, new \
             ones start when space is back",
            terminal_text(&dir.display().to_string()),
            progress::size_text(free),
            progress::size_text(required)
        )),
        BatchEvent::Resumed { free } if !quiet => {
            bar.say(&format!("batch: resumed: {} free", progress::size_text(free)));
        }
        BatchEvent::Paused { .. } | BatchEvent::Resumed { .. } => {}
    }
}

fn print_outcome(o: &BatchOutcome, opts: &BatchOptions) {
    let share = match opts.shard {
        Some(s) => format!(" (shard {s} of {} in the manifest)", o.manifest_items),
        None => String::new(),
    };
    println!(
        "batch: {} item(s){share}: {} packaged, {} failed; skipped {} done before, {} failed before{}",
        o.items,
        o.packaged,
        o.failed,
        o.skipped_done,
        o.skipped_failed,
        if o.skipped_failed > 0 { " (--retry-failed retries them)" } else { "" }
    );
    let rate = o.bytes as f64 / o.elapsed_seconds.max(1e-3) / 1e6;
    println!(
        "  {} of sources in {:.1} s ({rate:.1} MB/s); {} item(s) at once (-j {}, --memory {} \
         at {} an item); pausing below {} free",
        progress::size_text(o.bytes),
        o.elapsed_seconds,
        o.in_flight,
        opts.jobs,
        progress::size_text(o.memory),
        progress::size_text(BATCH_ITEM_MEMORY),
        progress::size_text(o.min_free)
    );
    print_deliveries(o, opts);
    if o.moved_into_place > 0 {
        println!(
            "  moved into place: {} package(s) an earlier run had finished",
            o.moved_into_place
        );
    }
    for i in &o.ignored {
        println!("  ignored: {}", terminal_text(i));
    }
    print_failures(o.failures());
    println!("  journal: {}", opts.journal.display());
}

/// Where the packages went beside `--out`: the store, the exports.
fn print_deliveries(o: &BatchOutcome, opts: &BatchOptions) {
    if let Some(config) = &opts.deliver.store {
        println!(
            "  stored: {} of {} item(s) in the store of {}",
            o.stored,
            o.items,
            terminal_text(&config.display().to_string())
        );
    }
    let exports = &opts.deliver.exports;
    let dirs = [
        ("WACZ", o.exported_wacz, exports.wacz.as_ref()),
        ("E-ARK", o.exported_eark, exports.eark.as_ref().map(|e| &e.dir)),
    ];
    for (what, n, dir) in dirs {
        if let Some(dir) = dir {
            let dir = terminal_text(&dir.display().to_string());
            println!("  exported: {n} of {} item(s) as {what} in {dir}", o.items);
        }
    }
}

fn print_failures<'a>(failures: impl Iterator<Item = &'a BatchEntry>) {
    for e in failures {
        println!(
            "  FAILED {}: {}: {}",
            terminal_text(&e.key),
            e.error_kind.as_deref().unwrap_or("?"),
            terminal_text(e.error.as_deref().unwrap_or(""))
        );
    }
}

fn counts_text(c: &BatchCounts) -> String {
    format!(
        "{} item(s): {} done ({} with findings, {} stored), {} failed, {} running, {} pending",
        c.items, c.done, c.done_with_findings, c.stored, c.failed, c.running, c.pending
    )
}

fn run_status(args: StatusArgs) -> anyhow::Result<i32> {
    let status: BatchStatus = webaip::batch_status(&args.journals)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&status)?);
    } else if !args.quiet {
        for j in &status.journals {
            println!("{}: {}", terminal_text(&j.journal), counts_text(&j.counts));
        }
        println!("total: {}", counts_text(&status.total));
        print_failures(status.failures.iter());
    } else if status.total.done < status.total.items {
        // Quiet drops detail, never a verdict that is not clean.
        println!("total: {}", counts_text(&status.total));
    }
    // Complete when every item is done.
    Ok(if status.total.done < status.total.items { EXIT_FINDINGS } else { 0 })
}
