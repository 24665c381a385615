//! `webaip package`: a harvest in, a complete submission package out.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use webaip::{
    CaptureCounts, Clamd, ClamdAddr, Cleaner, ContainerReport, CrawlLogComparison, CuratorMetadata,
    DEFAULT_LEVEL, DEFAULT_PROFILE, DEFAULT_ZIP_EXPANSION, Dedup, DedupSources, EntitiesReport,
    EntityOrigin, FileReport, IdentifyMode, InstanceReport, Mirror, MirrorKind, NedlibDate,
    PackageOptions, PackageProgress, PackageReport, Packaged, Packager, PageKind, Profile,
    QUIRKS_KEPT, ReadOptions, SerializationMode, TitleSource, VirusCheck, Zone, dedup_saved_text,
    parse_capture_date,
};

use super::{progress, terminal_text};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum NedlibDateArg {
    Server,
    Folder,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum IdentifyArg {
    None,
    Described,
    All,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    Minimal,
    Full,
}

/// `package --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated; "kind" is the source's shape: heritrix1, heritrix3,
file-list, archive-folder, pandas, mirror, nedlib, kulturarw3; "mirror" is null but for a
mirror; "packages" holds one report, or one per instance of a PANDAS title):
  {"kind": "heritrix3", "mirror": null,
   "packages": [{"package": "out/job", "objid": "...", "shape": "heritrix3",
                 "containers": [{"input": "a.warc.gz", "path": "content/a.warc.gz", ...}],
                 "files": 9, "bytes": 123456, "virus_check": "...", ...}]}"#;

/// Arguments of `webaip package`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct PackageArgs {
    /// A Heritrix job directory (1.x or 3.x), ARC/WARC files, a PANDAS instance or title
    /// directory, a wget or HTTrack mirror directory (or .zip), a NEDLIB harvest or a
    /// Kulturarw3 archive.
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// Time zone of PANDAS instance directory names and HTTrack log times (UTC, +10:00, or an
    /// IANA name such as Australia/Sydney).
    #[arg(long, default_value = "UTC", help_heading = "Input")]
    timezone: String,
    /// Mirrors without a log: the site URL the mirror's host directory stands for.
    #[arg(long, help_heading = "Input")]
    url_prefix: Option<String>,
    /// A mirror's .zip may unpack to this many times its size (at least 64 MiB); a zip that
    /// unpacks to more is refused as a zip bomb.
    #[arg(long, value_name = "RATIO", default_value_t = DEFAULT_ZIP_EXPANSION, help_heading = "Input")]
    max_zip_expansion: u64,
    /// When the harvest was made, for what records nothing else: mirrors whose logs record no
    /// time, ARC files with no usable date anywhere (2024-01-02, 2024-01-02T10:11:12Z, or 14
    /// digits; UTC unless a zone is given).
    #[arg(long, value_name = "DATE", value_parser = parse_capture_date, help_heading = "Input")]
    capture_date: Option<chrono::DateTime<chrono::Utc>>,
    /// NEDLIB harvests: the date each record gets (server: the server's Date header when it is
    /// sane, else the day folder's date; folder: the day folder's date at 12:00 UTC).
    #[arg(long, value_enum, default_value = "server", help_heading = "Input")]
    nedlib_date: NedlibDateArg,
    /// The package directory to create.
    #[arg(long, short, help_heading = "Output")]
    out: PathBuf,
    /// METS serialization: minimal (records only where there is a reason) or full (every one).
    #[arg(long, value_enum, help_heading = "Output")]
    mode: Option<Mode>,
    /// Also write the package's access index (CDXJ, sorted) to this file, made while the
    /// records are written; beside the package, not in it. Not with several PANDAS instances.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    index: Option<PathBuf>,
    /// Compression level of the WARC gzip members, 0-9 on zlib's scale (records over 2 MiB: zlib-rs at the level compressing alike, 5 for 6).
    #[arg(long, default_value_t = DEFAULT_LEVEL, value_parser = clap::value_parser!(u32).range(0..=9), help_heading = "Output")]
    level: u32,
    /// Replace an existing package.
    #[arg(long, help_heading = "Output")]
    force: bool,
    /// Fixed clock and seeded identifiers: two runs give byte-identical packages.
    #[arg(long, help_heading = "Output")]
    deterministic: bool,
    /// Curator metadata (TOML; see samples/heritrix-job.metadata.toml).
    #[arg(long, help_heading = "Metadata")]
    metadata: Option<PathBuf>,
    /// Package profile (bl-webarchive, or a .toml file).
    #[arg(long, default_value = DEFAULT_PROFILE, help_heading = "Metadata")]
    profile: String,
    /// Directory whose schema bundle replaces the official schemas built into webaip (the METS
    /// is validated against the built-in ones without it).
    #[arg(long, env = "WEBAIP_SCHEMAS", help_heading = "Metadata")]
    schemas: Option<PathBuf>,
    /// Describe every harvested seed URL as a webpage (a WEBPAGE div with its own MODS),
    /// titled from the page's HTML <title> and dated by its capture; `[[page]]` tables of the
    /// metadata file describe others (see `webaip pages` to choose them).
    #[arg(long, help_heading = "Metadata")]
    describe_seeds: bool,
    /// clamd to scan every payload with: unix:PATH or tcp:HOST:PORT (scripts/clamd-local.sh
    /// starts one and prints its address).
    #[arg(long, env = "WEBAIP_CLAMD", help_heading = "Virus check")]
    clamd: Option<String>,
    /// A command that tries to clean an infected file, run as `CMD INFECTED CLEANED`; a copy
    /// that then scans clean is packaged with the outcome "viral, cleaned".
    #[arg(long, help_heading = "Virus check")]
    cleaner: Option<String>,
    /// Seconds the cleaner may run on one file; past them it is stopped (with what it
    /// started) and the infected record stays quarantined without a cleaned copy.
    #[arg(long, default_value_t = 300, value_name = "SECONDS", help_heading = "Virus check")]
    cleaner_timeout: u64,
    /// Seconds to wait for clamd before giving up on it.
    #[arg(long, default_value_t = 300, help_heading = "Virus check")]
    clamd_timeout: u64,
    /// Package without virus checking (recorded as "not scanned" on every container).
    #[arg(long, help_heading = "Virus check")]
    no_virus_check: bool,
    /// PRONOM identification of every payload (DROID binary signatures, in process): none;
    /// described (PUIDs on the bytestreams described for another reason, and every payload
    /// whose bytes contradict its declared type described with both); all (every payload
    /// described with its PUIDs).
    #[arg(long, value_enum, default_value = "described", help_heading = "Identification")]
    identify: IdentifyArg,
    /// Deduplicate against payloads stored already: a digest table (`webaip dedup-table`), a
    /// CDXJ index, or an earlier package's folder (repeatable). A response (a copied WARC's, or
    /// a NEDLIB, Kulturarw3 or other capture with an HTTP header) whose payload (SHA-1 and
    /// length) is stored is written as a `revisit` record without it.
    #[arg(long, value_name = "TABLE|INDEX|PACKAGE", help_heading = "Deduplication")]
    dedup_against: Vec<PathBuf>,
    /// Deduplicate within the run too: a response whose payload an earlier record of the same
    /// container holds becomes a revisit of it.
    #[arg(long, help_heading = "Deduplication")]
    dedup_within: bool,
    /// Worker threads; default: cores.
    #[arg(short = 'j', long = "jobs", help_heading = "Performance")]
    jobs: Option<usize>,
    /// Print the report as one JSON object on standard output (no progress, no text).
    #[arg(long, help_heading = "Reporting")]
    json: bool,
    /// Print nothing on success (a package made with findings is named on standard error).
    #[arg(long, short, help_heading = "Reporting")]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: PackageArgs) -> anyhow::Result<i32> {
    let opts = package_options(&args)?;
    if opts.identify != IdentifyMode::None {
        super::compile_signatures();
    }
    let pool = super::worker_pool(args.jobs)?;
    let bar = Bar { quiet: args.quiet || args.json, bar: Default::default() };
    let mut packager = Packager::of_sources(args.sources.clone()).options(opts).progress(bar);
    if let Some(index) = &args.index {
        packager = packager.index(index);
    }
    let run = pool.install(|| packager.run_all())?;
    if args.json {
        println!("{}", run_json(&run)?);
    } else if args.quiet {
        for r in run.packages.iter().filter(|r| r.has_findings()) {
            eprintln!(
                "webaip: {}: made, with findings (run without --quiet, or with --json, to see them)",
                r.package.display()
            );
        }
    } else {
        if let Some(m) = &run.mirror {
            print_mirror(m);
        }
        run.packages.iter().for_each(print_report);
    }
    // Packages were made; one with findings makes it a run with findings.
    Ok(if run.has_findings() { super::EXIT_FINDINGS } else { 0 })
}

/// A progress bar per package, on stderr when it is a terminal.
struct Bar {
    quiet: bool,
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
}

impl Bar {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<indicatif::ProgressBar>> {
        self.bar.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl PackageProgress for Bar {
    fn start(&self, bytes: u64) {
        *self.lock() = Some(progress::bytes_bar(bytes, self.quiet));
    }
    fn advance(&self, bytes: u64) {
        if let Some(b) = &*self.lock() {
            b.inc(bytes);
        }
    }
    fn finish(&self) {
        if let Some(b) = self.lock().take() {
            b.finish_and_clear();
        }
    }
}

/// The JSON report, one shape for every source: `kind` (the source's shape), `mirror` (what
/// was read of a mirror, else null) and `packages` (one report, or one per PANDAS instance).
fn run_json(run: &Packaged) -> serde_json::Result<String> {
    #[derive(serde::Serialize)]
    struct RunJson<'a> {
        kind: &'a str,
        mirror: Option<&'a Mirror>,
        packages: &'a [PackageReport],
    }
    let kind = match (&run.mirror, run.pandas, run.packages.first()) {
        (Some(_), _, _) => "mirror",
        (None, true, _) => "pandas",
        (None, false, Some(first)) => first.shape.as_str(),
        (None, false, None) => "none",
    };
    let json = RunJson { kind, mirror: run.mirror.as_deref(), packages: &run.packages };
    serde_json::to_string_pretty(&json)
}

/// What was read of a mirror: its site URL and crawl date, and where each came from.
fn print_mirror(m: &Mirror) {
    println!(
        "{} mirror: site URL {} (from {}); crawl started {} (from {})",
        match m.kind {
            MirrorKind::Wget => "wget",
            MirrorKind::Httrack => "HTTrack",
        },
        m.site_url.as_deref().unwrap_or("unknown"),
        m.site_url_source,
        m.capture_date,
        m.capture_date_source
    );
    for (src, n) in &m.capture_sources {
        println!("  capture time of {n} file(s) from {src}");
    }
    println!("  {} file(s) typed by their content (WHATWG MIME sniffing)", m.sniffed);
}

/// The virus check asked for: clamd, answering, or none when `--no-virus-check` says so.
fn virus_check(args: &PackageArgs) -> anyhow::Result<VirusCheck> {
    virus_check_with(args.no_virus_check, args.clamd.as_deref(), args.clamd_timeout)
}

/// The virus check of `--no-virus-check`, `--clamd` and `--clamd-timeout` (package, batch).
pub(super) fn virus_check_with(
    no_virus_check: bool,
    clamd: Option<&str>,
    clamd_timeout: u64,
) -> anyhow::Result<VirusCheck> {
    Ok(if no_virus_check {
        VirusCheck::Disabled
    } else {
        let Some(addr) = clamd else {
            bail!(
                "no clamd to scan with: give --clamd unix:PATH or tcp:HOST:PORT (or WEBAIP_CLAMD; \
                 scripts/clamd-local.sh starts one), or --no-virus-check to package without scanning"
            );
        };
        let addr: ClamdAddr = addr.parse().map_err(anyhow::Error::msg)?;
        let clamd = Clamd::new(addr.clone())
            .with_read_timeout(std::time::Duration::from_secs(clamd_timeout));
        clamd.ping().with_context(|| {
            format!("clamd at {addr} does not answer; start it (scripts/clamd-local.sh) or use --no-virus-check")
        })?;
        VirusCheck::Clamd(clamd)
    })
}

/// The options of every package this run makes: the flags, spelled as [`PackageOptions`].
fn package_options(args: &PackageArgs) -> anyhow::Result<PackageOptions> {
    let mut opts = PackageOptions::default()
        .out(args.out.clone())
        .virus_check(virus_check(args)?)
        .profile(Profile::load(&args.profile)?)
        .level(args.level)
        .force(args.force)
        .deterministic(args.deterministic)
        .schemas(args.schemas.clone())
        .cleaner(args.cleaner.clone().map(|command| Cleaner {
            command,
            timeout: std::time::Duration::from_secs(args.cleaner_timeout),
        }))
        .capture_date(args.capture_date)
        .describe_seeds(args.describe_seeds)
        .identify(match args.identify {
            IdentifyArg::None => IdentifyMode::None,
            IdentifyArg::Described => IdentifyMode::Described,
            IdentifyArg::All => IdentifyMode::All,
        })
        .dedup(dedup(args)?)
        .reading(reading(args)?);
    if let Some(p) = &args.metadata {
        opts.metadata = CuratorMetadata::load(p)?;
    }
    if let Some(mode) = args.mode {
        opts.mode = match mode {
            Mode::Full => SerializationMode::Full,
            Mode::Minimal => SerializationMode::Minimal,
        };
    }
    Ok(opts)
}

/// How the source is read: `--timezone`, `--nedlib-date`, `--url-prefix`,
/// `--max-zip-expansion`.
fn reading(args: &PackageArgs) -> anyhow::Result<ReadOptions> {
    Ok(ReadOptions {
        zone: Zone::parse(&args.timezone)?,
        nedlib_date: match args.nedlib_date {
            NedlibDateArg::Server => NedlibDate::ServerDate,
            NedlibDateArg::Folder => NedlibDate::FolderDate,
        },
        max_zip_expansion: args.max_zip_expansion,
        url_prefix: args.url_prefix.clone(),
    })
}

/// Deduplication of `--dedup-against` and `--dedup-within`, if either is given.
fn dedup(args: &PackageArgs) -> anyhow::Result<Option<std::sync::Arc<Dedup>>> {
    if !args.dedup_within && args.dedup_against.is_empty() {
        return Ok(None);
    }
    let against = DedupSources::open(&args.dedup_against)?;
    Ok(Some(std::sync::Arc::new(Dedup { against, within: args.dedup_within })))
}

/// The report of a package, whatever the source: each part the source has, in the order the
/// run met them.
fn print_report(r: &PackageReport) {
    println!("package {} ({})", r.package.display(), r.objid);
    // A mirror is packaged as an instance too; only PANDAS has an instance of its own.
    let pandas = r.instance.as_ref().filter(|_| r.shape == "pandas");
    if let Some(i) = pandas {
        println!(
            "  PANDAS instance {} (title {}), instance time {}",
            i.name,
            i.pi.as_deref().unwrap_or("?"),
            i.time
        );
    }
    print_inputs(r);
    if let Some(c) = &r.captures {
        println!(
            "  {} harvest: {} captures, {} WARC records, {} payload bytes",
            r.shape, c.captures, c.records, c.payload_bytes
        );
        print_quirks(&r.shape, c);
    }
    if let (Some(i), Some(c)) = (&r.instance, &r.captures) {
        print_instance(i, c.captures, pandas.is_some());
    }
    r.containers.iter().for_each(print_container);
    print_contents(r);
    print_entities(&r.entities);
    match &r.identification {
        Some(i) => println!("  identification ({}): {}", i.method, i.summary),
        None => println!("  identification: none (--identify none)"),
    }
    print_scan(r);
    let xsd = if r.mets_xsd_checked {
        "and XML schemas"
    } else {
        "XML schemas NOT checked (see webaip validate)"
    };
    println!(
        "  METS: valid under profile ({xsd}); {} files, {} bytes; {:.2} s",
        r.files, r.bytes, r.seconds
    );
}

/// What was found of the source, what it lacks, what was refused and what earlier runs left.
fn print_inputs(r: &PackageReport) {
    for f in &r.found {
        println!("  found: {f}");
    }
    for m in &r.missing {
        println!("  not found: {m}");
    }
    for (p, why) in &r.refused {
        println!("  REFUSED {}: {}", terminal_text(p), terminal_text(why));
    }
    if r.refusals > r.refused.len() as u64 {
        println!("  REFUSED {} more file(s), not listed", r.refusals - r.refused.len() as u64);
    }
    for l in &r.leftovers {
        println!("  earlier run: {l}");
    }
}

/// Beyond the containers: rewriting, side files, deduplication, the crawl log, the metadata.
fn print_contents(r: &PackageReport) {
    if let Some(w) = &r.rewrite {
        println!(
            "  rewritten: {} files ({} links to mirror files, {} to outside); originals kept in original/",
            w.transformed, w.links_to_mirror, w.links_to_outside
        );
        for (p, why) in &w.not_rewritten {
            println!("    not rewritten: {}: {}", terminal_text(p), terminal_text(why));
        }
    }
    println!("  logs, configuration and side files: {} file(s) in logs/", r.logs);
    if let Some(d) = &r.dedup {
        println!(
            "  deduplication: {} revisit record(s), {} payload byte(s) not stored again, {}; depends on {}",
            d.revisits,
            d.payload_bytes,
            dedup_saved_text(d.bytes_saved),
            if d.depends_on.is_empty() {
                "no other package".into()
            } else {
                d.depends_on.join(", ")
            }
        );
    }
    if let Some(c) = &r.crawl_log {
        print_crawl_log(c);
    }
    for n in &r.metadata_notes {
        println!("  metadata: {n}");
    }
}

/// The virus check: how it was done, then every infected, unscanned and uncleaned record.
fn print_scan(r: &PackageReport) {
    println!("  virus check: {}", r.virus_check);
    for (c, id, sig) in &r.scan.findings {
        println!("    VIRUS {sig} in {id}: moved to {c}");
    }
    for (c, id, why) in &r.scan.unscanned {
        println!("    NOT SCANNED {id} of {c}: {why}");
    }
    for (c, id, why) in &r.scan.not_cleaned {
        println!("    NOT CLEANED {id} (stays in {c}): {why}");
    }
}

/// One container: where it came from, its records, and what its input's check found.
fn print_container(c: &ContainerReport) {
    println!(
        "  {} -> {} ({}, {} records, {} listed in METS)",
        terminal_text(&c.input),
        c.path,
        c.action,
        c.records,
        c.listed
    );
    if let Some(m) = &c.migration {
        print_migration_anomalies(m);
    }
    if c.warc_findings > 0 {
        println!(
            "    WARC FINDINGS: {} finding(s) that audit --deep will report (kept as received, \
             recorded as a PREMIS validation event on the container):",
            c.warc_findings
        );
        for e in c.warc_finding_examples.iter().take(10) {
            println!("      {e}");
        }
    }
}

/// Where a PANDAS instance's (or mirror's) files got their URLs and capture times.
fn print_instance(i: &InstanceReport, files: u64, pandas: bool) {
    let sources: Vec<String> = i.url_sources.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("  original URL from: {}", sources.join(", "));
    for (path, url) in i.guessed_urls.iter().take(10) {
        println!("    guessed from the layout: {} -> {url}", terminal_text(path));
    }
    if pandas {
        println!(
            "  capture time from the cache for {} of {files} files (others: the instance time)",
            i.capture_from_cache
        );
    }
}

/// The quirks a capture source tolerated: counts by kind, then the first with their place.
fn print_quirks(shape: &str, c: &CaptureCounts) {
    if c.quirk_counts.is_empty() {
        return;
    }
    let counts: Vec<String> = c.quirk_counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let logged = if c.quirks_dropped > 0 {
        format!(
            "listed in logs/webaip/{shape}.quirks.json but {} of them, only counted (at most {} \
             are listed, and 100 of a kind a file)",
            c.quirks_dropped, QUIRKS_KEPT
        )
    } else {
        format!("all in logs/webaip/{shape}.quirks.json")
    };
    println!("  quirks tolerated: {} ({logged})", counts.join(", "));
    for q in c.quirks.iter().take(10) {
        let at = match (q.line, q.offset) {
            (Some(l), _) => format!(":{l}"),
            (None, Some(o)) => format!(" at offset {o}"),
            _ => String::new(),
        };
        println!("    {}{at}: {}: {}", terminal_text(&q.file), q.kind, terminal_text(&q.detail));
    }
}

/// crawl.log against the records: counts, then the first discrepancies each way.
fn print_crawl_log(c: &CrawlLogComparison) {
    println!(
        "  crawl.log: {} lines, {} fetched URIs; {} fetched without a record, {} records without a log line",
        c.lines, c.fetched, c.fetched_without_record, c.records_without_log_line
    );
    for e in c.fetched_without_record_examples.iter().take(5) {
        println!("    fetched, no record: {e}");
    }
    for e in c.records_without_log_line_examples.iter().take(5) {
        println!("    record, not in crawl.log: {e}");
    }
}

/// The webpages and associated objects described, one line each.
fn print_entities(r: &EntitiesReport) {
    for e in &r.described {
        let kind = match e.kind {
            PageKind::Webpage => "webpage",
            PageKind::AssociatedObject => "associated object",
        };
        let origin = match e.origin {
            EntityOrigin::Curator => "",
            EntityOrigin::Seed => " (seed)",
        };
        let title = match (&e.title, e.title_source) {
            (Some(t), TitleSource::Html) => format!("{t:?} (from its <title>)"),
            (Some(t), _) => format!("{t:?}"),
            (None, _) => "no title".into(),
        };
        let several =
            if e.captures > 1 { format!(", 1 of {} captures", e.captures) } else { String::new() };
        let inferred = if e.captured_inferred { " (date inferred)" } else { "" };
        println!(
            "  described {kind}{origin}: {} captured {}{inferred}{several}: {title}",
            e.url, e.captured
        );
    }
    for u in &r.seeds_not_harvested {
        println!("  seed not described: {u} has no capture in the harvest");
    }
    for u in &r.viral {
        println!("  described capture is quarantined (its div points into viral/): {u}");
    }
}

/// What a migration met, so the text report hides nothing the JSON report holds: counts by
/// kind, whether any record is truncated, and the first anomalies worth a warning with their
/// file offsets (the whole list is in the package, logs/webaip/*.migration.json).
fn print_migration_anomalies(m: &FileReport) {
    let total: u64 = m.anomaly_counts.values().sum();
    if total == 0 {
        println!("    anomalies: none");
        return;
    }
    let kinds: Vec<String> = m.anomaly_counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!("    anomalies: {total} ({})", kinds.join(", "));
    let truncated = m.anomaly_counts.iter().find(|(k, _)| k.eq_ignore_ascii_case("truncated"));
    match truncated {
        Some((_, n)) => println!("    TRUNCATED: {n} record(s) end before their declared length"),
        None => println!("    truncated records: none"),
    }
    for a in m.anomalies.iter().take(5) {
        println!("      {}: {a}", m.input.display());
    }
    if total > 5 {
        println!("      ... {} more: see the migration report in logs/webaip/", total - 5);
    }
}
