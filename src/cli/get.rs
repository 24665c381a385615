//! `webaip get`: one record's payload (or the record) by URL and time, by record id, or by
//! container and offset, from packages through their indexes, or from the store.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use webaip::{GetOptions, GotRecord, RecordPart, RecordWanted};

use super::terminal_text;

/// Arguments of `webaip get`.
#[derive(Debug, Args)]
#[command(after_long_help = "JSON output (--json, needs -o):
  {\"warc_type\": \"response\", \"record_id\": \"<urn:uuid:...>\", \"url\": \"http://e.org/\",
   \"date\": \"2024-01-02T03:04:05Z\", \"part\": \"payload\", \"written\": 1270,
   \"digest_verified\": true, \"revisit_of\": null, \"unresolved_revisit\": null}")]
pub struct GetArgs {
    /// The URL whose capture to get (through the index: its SURT key).
    #[arg(required_unless_present_any = ["id", "container"])]
    url: Option<String>,
    /// The capture closest to this time (1 to 14 digits, YYYYMMDDhhmmss, a shorter one read
    /// as pywb reads it: `2014` is the end of 2014); default the latest.
    #[arg(long, value_name = "TIMESTAMP", requires = "url", help_heading = "Record")]
    at: Option<String>,
    /// The record with this WARC-Record-ID (`<urn:uuid:...>`), found in index lines that
    /// carry it (`"recordId"`).
    #[arg(long, value_name = "WARC-RECORD-ID", conflicts_with_all = ["url", "container"], help_heading = "Record")]
    id: Option<String>,
    /// The record at `--offset` of this WARC file (no index needed).
    #[arg(long, value_name = "FILE", requires = "offset", conflicts_with_all = ["url", "index", "package", "store"], help_heading = "Record")]
    container: Option<PathBuf>,
    /// The record's byte offset in `--container` (of its gzip member in a `.warc.gz`).
    #[arg(long, value_name = "N", requires = "container", help_heading = "Record")]
    offset: Option<u64>,
    /// A sorted CDXJ index (`webaip index`, `package --index`, cdxj-indexer | sort) or a
    /// ZipNum index (`NAME.idx`, with its `.loc` and blocks beside it); several are used
    /// together.
    #[arg(long, value_name = "FILE", help_heading = "Input")]
    index: Vec<PathBuf>,
    /// The package the index's container names resolve in (its folder; with `--store`, its
    /// identifier). One for every `--index`, in the same order, or one for all; default the
    /// folder of each index file.
    #[arg(long, value_name = "DIR|IDENTIFIER", help_heading = "Input")]
    package: Vec<String>,
    /// Read the containers from the store this configuration describes (a ranged read of the
    /// record's bytes only); `--package` then names packages by identifier.
    #[arg(long, value_name = "CONFIG", requires = "package", help_heading = "Input")]
    store: Option<PathBuf>,
    /// Write the whole record as stored (for a `.warc.gz`, its gzip member: a one-record
    /// WARC file) instead of its payload.
    #[arg(long, help_heading = "Output")]
    record: bool,
    /// Write to this file (created; not replaced) instead of standard output.
    #[arg(long, short, value_name = "FILE", help_heading = "Output")]
    out: Option<PathBuf>,
    /// Print what was got as one JSON object (the bytes themselves go to -o).
    #[arg(long, requires = "out", help_heading = "Reporting")]
    json: bool,
    /// Print nothing but the bytes (when they go to standard output) and errors: no note of
    /// where a revisit's payload came from.
    #[arg(long, short, help_heading = "Reporting")]
    quiet: bool,
}

/// Runs the command; returns the exit status.
pub fn run(args: GetArgs) -> anyhow::Result<i32> {
    let wanted = wanted(&args)?;
    let options = GetOptions {
        indexes: args.index.clone(),
        packages: args.package.clone(),
        store: args.store.clone(),
        part: if args.record { RecordPart::Record } else { RecordPart::Payload },
    };
    let got = match &args.out {
        Some(path) => webaip::get_record_into(&wanted, &options, path)?,
        None => {
            let mut out = BufWriter::with_capacity(256 * 1024, std::io::stdout().lock());
            let got = webaip::get_record(&wanted, &options, &mut out)?;
            out.flush().context("cannot write to standard output")?;
            got
        }
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&got)?);
    } else if !args.quiet {
        note_revisit(&got);
    }
    Ok(0)
}

/// The record asked for (clap requires a URL, --id or --container).
fn wanted(args: &GetArgs) -> anyhow::Result<RecordWanted> {
    Ok(match (&args.container, args.offset, &args.url, &args.id) {
        (Some(path), Some(offset), _, _) => RecordWanted::Container { path: path.clone(), offset },
        (_, _, Some(url), _) => RecordWanted::Url { url: url.clone(), at: args.at.clone() },
        (_, _, None, Some(id)) => RecordWanted::RecordId(id.clone()),
        _ => anyhow::bail!("give a URL, --id or --container"),
    })
}

/// Says on standard error where a revisit's payload came from, or that it was not found.
fn note_revisit(got: &GotRecord) {
    if let Some(why) = &got.unresolved_revisit {
        eprintln!("webaip: note: {why}");
    }
    if let Some(original) = &got.revisit_of {
        eprintln!(
            "webaip: note: this capture is a revisit; its payload is that of {} at {} ({}, offset {})",
            terminal_text(&original.url),
            original.timestamp,
            terminal_text(&original.container),
            original.offset
        );
    }
}
