//! `webaip unmigrate PACKAGE|WARC... --out DIR [--stream] [--with PACKAGE...]`: the original ARC files given back
//! from a package's containers or from WARC files written by `migrate` (`webaip::unmigrate`).

use std::path::PathBuf;

use clap::Args;

use webaip::{ArcRebuild, UnmigrateOptions};

use super::{EXIT_FINDINGS, terminal_text};

/// Arguments of `webaip unmigrate`.
#[derive(Debug, Args)]
#[command(after_long_help = "JSON output (--json):
  {\"out\": \"arcs\", \"arcs\": [{\"name\": \"IAH-2008.arc.gz\", \"gzip\": true, \"records\": 311,
   \"stream\": {\"bytes\": 5242880, \"sha512\": \"...\", \"equal\": true}, ...}],
   \"written\": [\"arcs/IAH-2008.arc.gz\"], \"removed_leftovers\": []}")]
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
    /// A package that a deduplicated package's revisits refer to (repeatable): the payloads
    /// they leave out are taken from it, each checked against the revisit's digest.
    #[arg(long = "with", value_name = "PACKAGE")]
    with: Vec<PathBuf>,
    /// Threads compressing a gzip ARC's members again; default: cores.
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Print nothing but errors and the name of each ARC that DIFFERS (the exit status 1).
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command; returns the exit status: 1 when an ARC is not what it should be.
pub fn run(args: UnmigrateArgs) -> anyhow::Result<i32> {
    let silent = args.quiet || args.json;
    let total = if silent { 0 } else { webaip::unmigrate_input_bytes(&args.inputs) };
    let bar = super::progress::bytes_bar(total, silent);
    let options =
        UnmigrateOptions { stream: args.stream, force: args.force, with: args.with.clone() };
    let pool = super::worker_pool(args.jobs)?;
    let done =
        pool.install(|| webaip::unmigrate(&args.inputs, &args.out, &options, &|n| bar.inc(n)));
    bar.finish_and_clear();
    let done = done?;
    let code = if done.as_expected() { 0 } else { EXIT_FINDINGS };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&done)?);
        return Ok(code);
    }
    if args.quiet {
        // Quiet drops detail, never a verdict that is not clean.
        for r in done.arcs.iter().filter(|r| !r.as_expected()) {
            println!("DIFFERS {}", terminal_text(&r.name));
        }
        return Ok(code);
    }
    for path in &done.removed_leftovers {
        eprintln!("webaip: removed {} (left by a run that died)", path.display());
    }
    for r in &done.arcs {
        print_report(r);
    }
    println!(
        "{} ARC(s) rebuilt, {} written to {}",
        done.arcs.len(),
        done.written.len(),
        args.out.display()
    );
    Ok(code)
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
    for note in &r.notes {
        println!("  {}", terminal_text(note));
    }
    for d in &r.differences {
        match d.in_member {
            Some(n) => println!("  at {}+{}: {}", d.offset, n, terminal_text(&d.what)),
            None => println!("  at {}: {}", d.offset, terminal_text(&d.what)),
        }
    }
}
