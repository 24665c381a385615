//! `webaip export wacz PACKAGE -o FILE.wacz`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use webaip::{WACZ_VERSION, WaczIndex, WaczOptions, export_wacz_with_progress};

use super::{progress, terminal_text};

/// The index's form on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum IndexArg {
    /// `indexes/index.cdx.gz` and `indexes/index.idx`.
    Compressed,
    /// `indexes/index.cdxj`.
    Cdxj,
}

/// The example of `export wacz --json` that `--help` ends with.
const JSON_EXAMPLE: &str = r#"JSON (--json), one object:
  {"kind": "wacz", "wacz": "pkg.wacz", "objid": "...", "bytes": 81234, "verified": 2,
   "index_lines": 57, "resources": [{"path": "archive/a.warc.gz", ...}], ...}"#;

/// Arguments of `webaip export wacz`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct WaczArgs {
    /// The package (its folder).
    package: PathBuf,
    /// The WACZ file to write (replaced atomically once complete).
    #[arg(short, long)]
    out: PathBuf,
    /// The index's form: compressed (`indexes/index.cdx.gz` + `index.idx`, `cdxj-gzip-1.0`, as
    /// Browsertrix and py-wacz write it, and the only one pywb's `wb-manager add` imports) or
    /// one `indexes/index.cdxj`.
    #[arg(long, value_enum, default_value = "compressed")]
    index: IndexArg,
    /// A package holding originals of the package's revisits (deduplicated against it): the
    /// containers holding them go into the WACZ too, so that the revisits replay. Repeat for
    /// several. A revisit whose original neither the package nor these hold is refused.
    #[arg(long, value_name = "PACKAGE")]
    with: Vec<PathBuf>,
    /// Do not check each container while copying it against the SHA-256 its METS states (in
    /// the read that hashes it for the datapackage), or the SHA-512 where it states no
    /// SHA-256.
    #[arg(long)]
    no_verify: bool,
    /// Print the report as one JSON object (and no progress).
    #[arg(long, help_heading = "Reporting")]
    json: bool,
    /// Print nothing on success: no progress, no report; errors are still printed. With
    /// --json, only the JSON.
    #[arg(long, short, help_heading = "Reporting")]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: WaczArgs) -> anyhow::Result<i32> {
    let index = match args.index {
        IndexArg::Compressed => WaczIndex::Compressed,
        IndexArg::Cdxj => WaczIndex::Cdxj,
    };
    let opts = WaczOptions { verify: !args.no_verify, index, with: args.with.clone() };
    let total = std::fs::read_dir(args.package.join("content"))
        .map(|d| d.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
        .unwrap_or(0);
    let bar = progress::bytes_bar(total, args.quiet || args.json);
    let r = export_wacz_with_progress(&args.package, &args.out, &opts, &|n| bar.inc(n));
    bar.finish_and_clear();
    let r = r?;
    if args.json {
        let kinded = super::Kinded { kind: "wacz", report: &r };
        println!("{}", serde_json::to_string_pretty(&kinded)?);
        return Ok(0);
    }
    if args.quiet {
        return Ok(0);
    }
    let wacz = terminal_text(&r.wacz.display().to_string());
    println!("{wacz}: WACZ {} of package {}", WACZ_VERSION, r.objid);
    for res in &r.resources {
        println!("  {} ({} bytes, {})", terminal_text(&res.path), res.bytes, res.hash);
    }
    println!(
        "  index: {} line(s); pages: {} ({} described in the METS{})",
        r.index_lines,
        r.pages.pages,
        r.pages.described,
        match r.pages.described_not_listed {
            0 => String::new(),
            n => format!(", {n} described page(s) not an HTML 2xx capture, not listed"),
        }
    );
    for o in &r.originals {
        println!("  originals of its revisits from: {}", terminal_text(o));
    }
    for l in &r.left_out {
        println!("  left out: {}: {}", terminal_text(&l.file), l.why);
    }
    let checked = match (r.verified, r.verified_sha256) {
        (0, _) => "containers not checked against the METS".to_string(),
        (n, 0) => format!("{n} container(s) checked against their METS SHA-512"),
        (n, k) if n == k => format!("{n} container(s) checked against their METS SHA-256"),
        (n, k) => format!(
            "{n} container(s) checked against their METS: {k} by SHA-256, {} by SHA-512",
            n - k
        ),
    };
    println!("{wacz}: {} bytes, {checked}; {:.2} s", r.bytes, r.seconds);
    Ok(0)
}
