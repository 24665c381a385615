//! `webaip unmigrate PACKAGE|WARC... --out DIR [--stream]`: the original ARC files given back
//! from a package's containers or from WARC files written by `migrate`
//! (`migrate::rebuild`), each written under a temporary name and renamed when it is what it
//! should be.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use webaip::migrate::rebuild::{
    ArcRebuild, ArcSink, ArcStart, RebuildOptions, package_statements, rebuild_arcs,
};
use webaip::temporaries::{self, TempName};

use super::{EXIT_FINDINGS, terminal_text};

/// Arguments of `webaip unmigrate`.
#[derive(Debug, Args)]
pub struct UnmigrateArgs {
    /// Packages (directories) or WARC files (content containers and their viral twins).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Directory for the ARC files (created if missing).
    #[arg(long, short)]
    out: PathBuf,
    /// Write each gzip ARC's uncompressed stream (NAME without `.gz`) instead of its file.
    #[arg(long)]
    stream: bool,
    /// Replace existing files.
    #[arg(long)]
    force: bool,
    /// Threads compressing a gzip ARC's members again; default: cores.
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar and no text report (errors are still printed).
    #[arg(long, short)]
    quiet: bool,
}

/// Bytes of the containers in a package's content/ and viral/ (or of the WARC file given):
/// for the progress bar only.
fn input_bytes(input: &Path) -> u64 {
    let size = |p: &Path| std::fs::symlink_metadata(p).map_or(0, |m| m.len());
    if !input.is_dir() {
        return size(input);
    }
    let mut total = 0;
    for dir in [webaip::layout::CONTENT_DIR, webaip::layout::VIRAL_DIR] {
        let Ok(entries) = std::fs::read_dir(input.join(dir)) else { continue };
        total += entries.flatten().map(|e| size(&e.path())).sum::<u64>();
    }
    total
}

/// Writes each ARC to `out` under a temporary name; renames it when it is as it should be.
struct DirSink {
    out: PathBuf,
    stream: bool,
    force: bool,
    pending: Option<(tempfile::TempPath, PathBuf)>,
    written: Vec<PathBuf>,
}

/// The temporaries an ARC is written to, locked while a run writes them: those of a killed
/// run are removed by the next one.
const PARTIAL: TempName = TempName { prefix: ".webaip-unmigrate-", suffix: "", dirs: false };

/// The ARC's name (taken from the package: input) as a file name in the output directory: one
/// plain component, no control character (a CR or LF would forge lines of listings), not a
/// hidden name (nor one of the run's temporaries, which a later run would remove).
fn safe_name(name: &str) -> io::Result<&str> {
    let why = if name.is_empty() || name == "." || name == ".." {
        Some("not a file name")
    } else if name.contains(['/', '\\']) {
        Some("it holds a path separator")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if name.starts_with('.') {
        Some("a hidden name")
    } else if name.len() > 255 {
        Some("longer than 255 bytes")
    } else {
        None
    };
    match why {
        Some(why) => Err(io::Error::other(format!(
            "refused ARC name {:?} as an output file name: {why}",
            terminal_text(name)
        ))),
        None => Ok(name),
    }
}

impl ArcSink for DirSink {
    fn begin(&mut self, arc: &ArcStart<'_>) -> io::Result<Option<Box<dyn Write + Send>>> {
        let name = safe_name(arc.name)?;
        let name = match (arc.gzip, self.stream) {
            (true, true) => name.strip_suffix(".gz").unwrap_or(name),
            _ => name,
        };
        let dest = self.out.join(safe_name(name)?);
        if !self.force && std::fs::symlink_metadata(&dest).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists (--force replaces it)", dest.display()),
            ));
        }
        let tmp = temporaries::locked_output_in(&self.out, PARTIAL)?;
        let (file, path): (File, tempfile::TempPath) = tmp.into_parts();
        self.pending = Some((path, dest));
        Ok(Some(Box::new(BufWriter::with_capacity(1 << 20, file))))
    }

    fn end(&mut self, report: &ArcRebuild, out: Option<Box<dyn Write + Send>>) -> io::Result<()> {
        let Some((tmp, dest)) = self.pending.take() else { return Ok(()) };
        if let Some(mut o) = out {
            o.flush()?;
        }
        // A rebuild that is not what it should be leaves no file that looks complete.
        if !report.as_expected() {
            return Ok(());
        }
        File::open(&tmp)?.sync_all()?;
        tmp.persist(&dest).map_err(|e| e.error)?;
        self.written.push(dest);
        Ok(())
    }
}

/// Runs the command; returns the exit status: 1 when an ARC is not what it should be.
pub fn run(args: UnmigrateArgs) -> anyhow::Result<i32> {
    std::fs::create_dir_all(&args.out).with_context(|| args.out.display().to_string())?;
    let cleaned = temporaries::remove_dead(&args.out, PARTIAL);
    if !args.quiet && !args.json {
        for note in cleaned.notes(&args.out) {
            eprintln!("webaip: {note}");
        }
    }
    let mut sink = DirSink {
        out: args.out.clone(),
        stream: args.stream,
        force: args.force,
        pending: None,
        written: Vec::new(),
    };
    let reports = rebuild_inputs(&args, &mut sink)?;
    let code = if reports.iter().all(ArcRebuild::as_expected) { 0 } else { EXIT_FINDINGS };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
        return Ok(code);
    }
    if args.quiet {
        return Ok(code);
    }
    for r in &reports {
        print_report(r);
    }
    println!(
        "{} ARC(s) rebuilt, {} written to {}",
        reports.len(),
        sink.written.len(),
        args.out.display()
    );
    Ok(code)
}

/// Rebuilds the ARCs of every input into `sink`: a package's containers checked against its
/// METS first, then the WARCs given alone.
fn rebuild_inputs(args: &UnmigrateArgs, sink: &mut DirSink) -> anyhow::Result<Vec<ArcRebuild>> {
    let (packages, warcs): (Vec<&PathBuf>, Vec<&PathBuf>) =
        args.inputs.iter().partition(|i| i.is_dir());
    // A package's containers are hashed (checked against its METS), then read.
    let total = args.inputs.iter().map(|i| input_bytes(i) * (1 + u64::from(i.is_dir()))).sum();
    let bar = super::progress::bytes_bar(total, args.quiet || args.json);
    let pool = super::worker_pool(args.jobs)?;
    let mut reports = Vec::new();
    let opts = RebuildOptions { make_file: !args.stream, package_objects: None };
    for p in packages {
        let stated = package_statements(p, &|n| bar.inc(n))?;
        let opts = RebuildOptions { package_objects: Some(stated.objects), ..opts.clone() };
        let done = pool.install(|| rebuild_arcs(&stated.containers, &opts, sink, &|n| bar.inc(n)));
        reports.extend(done?);
    }
    if !warcs.is_empty() {
        let all: Vec<PathBuf> = warcs.into_iter().cloned().collect();
        reports.extend(pool.install(|| rebuild_arcs(&all, &opts, sink, &|n| bar.inc(n)))?);
    }
    bar.finish_and_clear();
    Ok(reports)
}

fn print_report(r: &ArcRebuild) {
    // The gzip file made (not only its stream) is not the original's, and cannot be; said
    // only when the content is as expected, which the why-line says of it.
    let not_original = r
        .file
        .as_ref()
        .filter(|f| !f.equal && r.as_expected())
        .and_then(|_| r.content_identical_gzip_not());
    let verdict = match (r.as_expected(), not_original.is_some()) {
        (false, _) => "DIFFERS",
        (true, false) => "OK",
        (true, true) => "CONTENT OK, NOT THE ORIGINAL GZIP FILE",
    };
    println!("{} {}", verdict, terminal_text(&r.name));
    if let Some(s) = &r.stream {
        let same = if s.equal { "equal" } else { "DIFFERENT" };
        println!("  stream {} bytes, sha512 {}: {same}", s.bytes, s.sha512);
    }
    if let Some(f) = &r.file {
        let same = match (f.equal, r.file_reproducible()) {
            (true, _) => "identical",
            (false, false) if not_original.is_some() => "not identical (see below)",
            (false, false) => "not identical (some gzip members cannot be made again)",
            (false, true) => "DIFFERENT",
        };
        println!("  file {} bytes, sha512 {}: {same}", f.bytes, f.sha512);
    }
    if let Some(why) = not_original {
        println!("  {why}");
    }
    if r.gzip {
        println!(
            "  members {} (original: {}), {} of the original length",
            r.members,
            r.members_expected.map_or("?".into(), |n| n.to_string()),
            r.members_reproduced
        );
    }
    if !r.rebuildable {
        println!("  not rebuildable at migration: {}", r.reasons.join("; "));
    }
    for d in &r.differences {
        match d.in_member {
            Some(n) => println!("  at {}+{}: {}", d.offset, n, terminal_text(&d.what)),
            None => println!("  at {}: {}", d.offset, terminal_text(&d.what)),
        }
    }
}
