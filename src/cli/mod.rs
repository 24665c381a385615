//! Command-line parsing and dispatch. Each subcommand lives in its own file; the library does
//! the work, this layer turns arguments into options and reports into text, JSON and exit codes.

mod audit;
mod batch;
mod checked;
mod completions;
mod contract;
mod dedup_table;
mod export;
mod export_eark;
mod export_wacz;
mod get;
mod identify;
mod index;
mod ingest;
mod man;
mod migrate;
mod package;
mod pages;
mod progress;
mod reference;
mod report;
mod scan;
mod store;
mod undedup;
mod unmigrate;
mod validate;
mod validate_eark;
mod validate_wacz;

use clap::{Parser, Subcommand};

/// Exit status when the work ran but found a problem (a byte not conserved, a file failed).
pub const EXIT_FINDINGS: i32 = 1;
/// Exit status when the command could not run at all (bad arguments, unreadable report path).
pub const EXIT_ERROR: i32 = 2;
/// Exit status of `audit` when no damage was found but a METS is an invalid or inconsistent
/// description (damage, 1, and errors, 2, outrank it).
pub const EXIT_DESCRIPTION: i32 = 3;

/// What every command shares, at the end of `webaip --help` and of the command reference.
const EXIT_STATUS_HELP: &str = "\
Exit status: 0 done and clean, 1 done with findings, 2 could not run; `audit` adds 3 (an
invalid or inconsistent description without damage). Every output is written under a
temporary name and renamed once complete: a failed or killed run leaves nothing that looks
complete. `webaip COMMAND --help` tells each command's options.";

/// webaip: turns harvested websites into preservation packages, and checks them.
#[derive(Debug, Parser)]
#[command(name = "webaip", version = short_version(), long_version = long_version(), about)]
#[command(propagate_version = true, after_long_help = EXIT_STATUS_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert ARC files to WARC 1.1 without changing a payload byte, and prove it.
    ///
    /// Each ARC (`.arc`, `.arc.gz`, versions 1 and 2) becomes one WARC 1.1 file in `--out`,
    /// written under a temporary name and renamed only once the WARC, read back from disk,
    /// holds every payload byte of the ARC (the conservation check).
    Migrate(migrate::MigrateArgs),
    /// Make a submission package from a Heritrix job or ARC/WARC files.
    ///
    /// One harvest in, one submission package (sSIP) out: a Heritrix 1.x or 3.x job, ARC/WARC
    /// files, a PANDAS instance, a wget or HTTrack mirror, a NEDLIB harvest or a Kulturarw3
    /// archive. The report says which shape was found and what such a source usually holds that
    /// this one lacks. The package is built in a hidden folder beside `--out` and renamed into
    /// place once its METS is valid.
    Package(package::PackageArgs),
    /// Scan files, WARC files or packages with clamd.
    ///
    /// Lists what is infected or could not be scanned, by file, record offset and record ID
    /// (each WARC record's block is scanned on its own); exit status 1 when anything is.
    Scan(scan::ScanArgs),
    /// Check a METS document against the official schemas and the package profile.
    ///
    /// Every finding is printed with its line, element, rule (a docs/profile.md rule number,
    /// `XSD` or `XML`) and what was expected. The schemas are built in. Also checks WACZ files,
    /// and E-ARK packages with `--profile eark-csip`.
    Validate(validate::ValidateArgs),
    /// Check a stored package: every listed file, checksum and byte range, and its METS.
    ///
    /// The verdict (INTACT or DAMAGED) is what the bytes say: every file the METS lists
    /// exists with its size and SHA-512, every byte range frames what it says, and the METS is
    /// valid; `--deep` also reads every record and checks its digests.
    Audit(audit::AuditArgs),
    /// Turn submission packages (sSIP) into archival packages (AIP): audit, identify, record.
    ///
    /// A submission that `audit --deep` does not find INTACT is refused and nothing is
    /// written; its described payloads are identified by PRONOM signature and the archival
    /// package records what was found.
    Ingest(ingest::IngestArgs),
    /// Keep packages on several replicas: put, check, repair, get.
    ///
    /// The configuration names the replicas: folders, and buckets of S3-compatible stores.
    /// `put` audits a package, then writes and verifies every copy; `check` and `repair` find
    /// and mend a damaged or missing copy from a good one.
    Store(store::StoreArgs),
    /// List the HTML pages of a package or a source: titles, sizes, capture dates.
    ///
    /// What a curator looks at to choose the pages to describe in the metadata file's
    /// `[[page]]` tables: one line per capture, sorted by URL then date.
    Pages(pages::PagesArgs),
    /// Make one self-contained HTML page (and its JSON twin) showing what a package holds and
    /// what was found of it, or what a collection of packages holds.
    ///
    /// Who and what the package is, its verdicts (METS validation, virus check,
    /// identification, an audit with `--audit`), its captures by day, host, status, MIME type
    /// and size, the described webpages, the PREMIS events, deduplication and the source's
    /// quirks. Read from the METS, the package's logs and its access index (`--index`, else
    /// the containers' records); no payload is read. The page opens offline: no request of any
    /// kind. Exit status 1 when the METS is invalid, the audit is not INTACT or the counts are
    /// partial.
    ///
    /// Several packages, batch journals or `--store`: one collection page, a row a package from
    /// its METS (and the journal or the store's state database), never from its containers;
    /// totals and charts, failed batch items, the oldest checks. Exit status 1 when a package is
    /// not read or invalid, an item failed or a copy is missing or corrupt.
    Report(report::ReportArgs),
    /// Make the digest table of stored payloads that `package --dedup-against` looks up, from
    /// CDXJ indexes and earlier packages.
    DedupTable(dedup_table::DedupTableArgs),
    /// Make a package whose revisit records are full records again, their payloads taken
    /// from the packages they refer to.
    Undedup(undedup::UndedupArgs),
    /// Give back the original ARC files from a package or from migrated WARC files.
    Unmigrate(unmigrate::UnmigrateArgs),
    /// Package every item of a manifest, resumably (`batch run`), and summarise journals
    /// (`batch status`).
    Batch(batch::BatchArgs),
    /// Identify formats by PRONOM signature: files, folders, WARC/ARC records, WACZ files,
    /// packages.
    ///
    /// Each item is named as siegfried names it (a record's payload `FILE#DATE/URI`), with its
    /// PUIDs, format, basis and, for a record, the verdict on its declared type; `--csv` writes
    /// siegfried's `sf -csv` columns. Exit status 1 when an item was refused or unreadable.
    Identify(identify::IdentifyArgs),
    /// Write the sorted access index (CDXJ, CDX or ZipNum) of WARC files or packages.
    Index(index::IndexArgs),
    /// Get one record's payload (or the record) by URL and time, by record id, or by container
    /// and offset, through a package's index or from the store.
    Get(get::GetArgs),
    /// Export a package as a WACZ access copy or an E-ARK 2.2 information package.
    Export(export::ExportArgs),
    /// Print the completion script of a shell (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print the manual page, or write one page per command into a folder (`-o`).
    Man(man::ManArgs),
    /// Print the command reference (docs/reference.md) as Markdown.
    #[command(hide = true)]
    Reference(reference::ReferenceArgs),
}

/// `-V`: the version and commit on one line (clap keeps a `&'static str`, made once).
fn short_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(webaip::short_version)
}

/// `--version`: the version, commit, signature file and profiles (`webaip::long_version`).
fn long_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(webaip::long_version)
}

/// Text from input made safe to print on a terminal: C0 controls and DEL as `%XX` (as in WARC
/// headers), C1 controls and the Unicode bidirectional controls as `<U+XXXX>`. A title holding
/// U+202E (right-to-left override) would otherwise print the rest of its line reversed, and a
/// C1 CSI (U+009B) starts an escape sequence on some terminals.
pub(crate) fn terminal_text(text: &str) -> String {
    let steers = |c: char| {
        matches!(c, '\u{80}'..='\u{9f}' | '\u{61c}' | '\u{200e}' | '\u{200f}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    let text = webaip::escape_controls(text);
    if !text.chars().any(steers) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match steers(c) {
            true => out.push_str(&format!("<U+{:04X}>", c as u32)),
            false => out.push(c),
        }
    }
    out
}

/// A report as `--json` prints it where a command's shapes differ by subcommand: its fields
/// after a `kind` naming the shape.
#[derive(serde::Serialize)]
pub(crate) struct Kinded<'a, T: serde::Serialize> {
    pub kind: &'static str,
    #[serde(flatten)]
    pub report: &'a T,
}

/// Parses the command line, runs the command, returns the exit status.
pub fn main() -> i32 {
    let rewritten =
        contract::rewrite_old_spellings(std::env::args_os().collect(), contract::RENAMED);
    for warning in &rewritten.warnings {
        eprintln!("{warning}");
    }
    let cli = match Cli::try_parse_from(rewritten.args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_ERROR } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Migrate(args) => migrate::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Package(args) => package::run(args),
        Command::Scan(args) => scan::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Ingest(args) => ingest::run(args),
        Command::Store(args) => store::run(args),
        Command::Pages(args) => pages::run(args),
        Command::Report(args) => report::run(args),
        Command::Batch(args) => batch::run(args),
        Command::Identify(args) => identify::run(args),
        Command::Index(args) => index::run(args),
        Command::Get(args) => get::run(args),
        Command::Export(args) => export::run(args),
        Command::DedupTable(args) => dedup_table::run(args),
        Command::Undedup(args) => undedup::run(args),
        Command::Unmigrate(args) => unmigrate::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Reference(args) => reference::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("webaip: error: {}", error_text(&e));
            EXIT_ERROR
        }
    }
}

/// An error with its causes, each said once: many of the library's errors already quote their
/// cause (`{path}: {source}`), which `{:#}` would print a second time.
fn error_text(e: &anyhow::Error) -> String {
    // The outermost error itself (anyhow's downcast would also find one below a context).
    let top = e.chain().next().and_then(|t| t.downcast_ref::<std::io::Error>());
    let mut text = match top {
        Some(io) => webaip::describe_io(io),
        None => e.to_string(),
    };
    for cause in e.chain().skip(1) {
        let raw = cause.to_string();
        // An I/O error in words, without "(os error N)" or a temporary file's "at path".
        let cause = match cause.downcast_ref::<std::io::Error>() {
            Some(io) => webaip::describe_io(io),
            None => raw.clone(),
        };
        if !text.contains(&cause) && !text.contains(&raw) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// Compiles the shipped signature file now, on the main thread (see
/// [`webaip::prepare_identification`] for why).
fn compile_signatures() {
    webaip::prepare_identification();
}

/// `--jobs`, or one per core when not given.
fn jobs_or_cores(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The worker pool for `--jobs`: that many threads, or one per core when not given.
fn worker_pool(jobs: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    use anyhow::Context;
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs_or_cores(jobs).max(1))
        .build()
        .context("cannot start worker threads")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct Quoting {
        path: String,
        #[source]
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("{0}: not readable")]
    struct Wrapping(String, #[source] Quoting);

    #[test]
    fn each_cause_is_said_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::AlreadyExists, "File exists");
        let quoting = anyhow::Error::new(Quoting { path: "/tmp/a".into(), source: io() });
        assert_eq!(error_text(&quoting), "/tmp/a: File exists");
        // A cause the message does not quote is added.
        let inner = Quoting { path: "/tmp/a".into(), source: io() };
        let wrapping = anyhow::Error::new(Wrapping("x.warc".into(), inner));
        assert_eq!(error_text(&wrapping), "x.warc: not readable: /tmp/a: File exists");
        let context = anyhow::Error::new(io()).context("writing the report");
        assert_eq!(error_text(&context), "writing the report: File exists");
        // A full disk is said in words, without the OS error number or a temporary path.
        let full = std::io::Error::from_raw_os_error(28);
        let full = anyhow::Error::new(full).context("writing /out/p");
        assert_eq!(error_text(&full), "writing /out/p: no space left on device");
        let source = std::io::Error::from_raw_os_error(28);
        let refused = webaip::ConfineError::Io { path: "/out/p".into(), source };
        assert_eq!(error_text(&anyhow::Error::new(refused)), "/out/p: no space left on device");
        // A refusal inside an I/O error does not name its path a second time.
        let fifo = webaip::ConfineError::NotRegular { path: "f.warc".into(), kind: "a FIFO" };
        let text = error_text(&anyhow::Error::new(std::io::Error::other(fifo)).context("f.warc"));
        assert_eq!(text, "f.warc: is a FIFO, not a regular file");
        // An I/O error with no context at all is said in words too.
        let exists = anyhow::Error::new(std::io::Error::from_raw_os_error(17));
        assert_eq!(error_text(&exists), "it already exists");
    }
}
