//! `webaip identify`: PRONOM identification of files, folders, WARC/ARC records, WACZ files
//! and packages, as text, one JSON object, or siegfried's CSV (`sf -csv`).

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use webaip::{IdentifiedItem, IdentifyOptions, IdentifySummary, IdentifyVersions, ItemStatus};

use super::{EXIT_FINDINGS, terminal_text};

/// `identify --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated):
  {"tool": "webaip 0.1.0", "signatures": "webaip 0.1.0, DROID signature file V122, container signature file 2026-01-19",
   "scandate": "2026-01-01T12:00:00Z", "items": [{"filename": "a.warc.gz#20240101120000/http://e.org/",
   "filesize": 512, "modified": "2024-01-01T12:00:00Z", "errors": "", "status": "identified",
   "matches": [{"ns": "pronom", "id": "fmt/11", "format": "Portable Network Graphics",
   "version": "1.0", "mime": "image/png", "class": "", "basis": "byte match", "warning": ""}],
   "offset": 1234, "uri": "http://e.org/", "declared": "image/png", "verdict": "consistent"}],
   "summary": {"items": 1, "unknown": 0, ...}}"#;

/// siegfried's `sf -csv` header for one identifier (PRONOM): tools that read sf's CSV read
/// this one.
const CSV_HEADER: [&str; 12] = [
    "filename",
    "filesize",
    "modified",
    "errors",
    "namespace",
    "id",
    "format",
    "version",
    "mime",
    "class",
    "basis",
    "warning",
];

/// Arguments of `webaip identify`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct IdentifyArgs {
    /// Files; folders (walked in name order; links, FIFOs and devices are refused, never
    /// followed or opened); WARC/ARC files (the file, then each response or resource record's
    /// payload, named FILE#DATE/URI as siegfried names them); WACZ files (the file, then its
    /// WARCs' payloads); package folders (their containers' payloads).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Print one JSON object (tool, signature files, items with siegfried's fields, summary).
    #[arg(long, conflicts_with = "csv", help_heading = "Output")]
    json: bool,
    /// Print CSV with exactly siegfried's `sf -csv` columns (one row per match).
    #[arg(long, help_heading = "Output")]
    csv: bool,
    /// Write the output here (atomically) instead of to standard output.
    #[arg(long, short, help_heading = "Output")]
    out: Option<PathBuf>,
    /// Print nothing but the product (--json, --csv or -o) and the items that failed (on
    /// standard error).
    #[arg(long, short, help_heading = "Reporting")]
    quiet: bool,
    /// Plain files identified at once (default: one per core).
    #[arg(long, short, help_heading = "Performance")]
    jobs: Option<usize>,
}

/// How the items are written.
enum Shape {
    Text,
    Json,
    Csv,
}

/// Runs the command: exit 0 when every item was identified, 1 when one was refused or
/// could not be read.
pub fn run(args: IdentifyArgs) -> anyhow::Result<i32> {
    for input in &args.paths {
        if let Some(out) = &args.out {
            webaip::refuse_output_in_input(input, out)?;
        }
    }
    super::compile_signatures();
    let versions = webaip::identify_versions()?;
    let shape = match (args.json, args.csv) {
        (true, _) => Shape::Json,
        (_, true) => Shape::Csv,
        _ => Shape::Text,
    };
    let target = Target::open(args.out.as_deref())?;
    let options = IdentifyOptions { jobs: super::jobs_or_cores(args.jobs) };
    // Quiet keeps the product: text lines written to -o are one.
    let lines = !(args.quiet && args.out.is_none());
    let mut writer = ItemWriter::start(shape, target.writer(), &versions, lines, args.quiet)?;
    let bar = items_spinner(args.quiet || args.json);
    let summary = webaip::identify_paths(&args.paths, &options, &mut |item| {
        bar.inc(1);
        bar.suspend(|| writer.item(item))
    });
    bar.finish_and_clear();
    let summary = summary?;
    writer.finish(&summary)?;
    drop(writer);
    target.commit()?;
    Ok(if summary.has_failures() { EXIT_FINDINGS } else { 0 })
}

/// Where the output goes: standard output, or a file written under a temporary name and
/// renamed once complete.
enum Target {
    Stdout,
    File { tmp: tempfile::NamedTempFile, path: PathBuf },
    Device(std::fs::File),
}

impl Target {
    fn open(out: Option<&Path>) -> anyhow::Result<Target> {
        let Some(path) = out else { return Ok(Target::Stdout) };
        // A device or FIFO the user names (/dev/stdout) is written to as it is, never replaced.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new().write(true).open(path);
            return Ok(Target::Device(file.with_context(|| path.display().to_string())?));
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".webaip-identify-")
            .suffix(".partial")
            .tempfile_in(dir)
            .with_context(|| path.display().to_string())?;
        Ok(Target::File { tmp, path: path.to_path_buf() })
    }

    fn writer(&self) -> Box<dyn Write + '_> {
        let sink: Box<dyn Write + '_> = match self {
            Target::Stdout => Box::new(io::stdout().lock()),
            Target::File { tmp, .. } => Box::new(tmp.as_file()),
            Target::Device(f) => Box::new(f),
        };
        Box::new(io::BufWriter::with_capacity(1 << 16, sink))
    }

    /// Renames a file written whole into place.
    fn commit(self) -> anyhow::Result<()> {
        if let Target::File { tmp, path } = self {
            tmp.as_file().sync_all().with_context(|| path.display().to_string())?;
            tmp.persist(&path).map_err(|e| e.error).with_context(|| path.display().to_string())?;
        }
        Ok(())
    }
}

/// A spinner counting items on a terminal (a long run says it is moving).
fn items_spinner(quiet: bool) -> indicatif::ProgressBar {
    if quiet || !io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    let style =
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {pos} items")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// The head of `--json`: what identified, and when.
#[derive(Serialize)]
struct JsonHead<'a> {
    tool: &'a str,
    signatures: &'a str,
    scandate: String,
}

/// Writes items as they come, in the shape asked for.
struct ItemWriter<'w> {
    shape: Shape,
    out: Box<dyn Write + 'w>,
    csv: Option<csv::Writer<Box<dyn Write + 'w>>>,
    /// Text lines are written (not when quiet on standard output).
    lines: bool,
    /// Items refused or unreadable are also said on standard error.
    quiet: bool,
    first: bool,
}

impl<'w> ItemWriter<'w> {
    fn start(
        shape: Shape,
        out: Box<dyn Write + 'w>,
        versions: &IdentifyVersions,
        lines: bool,
        quiet: bool,
    ) -> io::Result<ItemWriter<'w>> {
        let mut w = ItemWriter { shape, out, csv: None, lines, quiet, first: true };
        match w.shape {
            Shape::Json => {
                let scandate =
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                let head =
                    JsonHead { tool: &versions.tool, signatures: &versions.signatures, scandate };
                let head = serde_json::to_string(&head)?;
                // The head's fields, then the items array, left open.
                write!(w.out, "{},\"items\":[", head.trim_end_matches('}'))?;
            }
            Shape::Csv => {
                let out = std::mem::replace(&mut w.out, Box::new(io::sink()));
                // Go's encoding/csv, which sf uses, ends rows with a bare LF.
                let mut csv = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(out);
                csv.write_record(CSV_HEADER)?;
                w.csv = Some(csv);
            }
            Shape::Text => {}
        }
        Ok(w)
    }

    fn item(&mut self, item: &IdentifiedItem) -> io::Result<()> {
        match self.shape {
            Shape::Json => {
                if !std::mem::take(&mut self.first) {
                    self.out.write_all(b",")?;
                }
                serde_json::to_writer(&mut self.out, item)?;
            }
            Shape::Csv => {
                if let Some(csv) = self.csv.as_mut() {
                    for row in csv_rows(item) {
                        csv.write_record(&row)?;
                    }
                }
            }
            Shape::Text if !self.lines => {}
            Shape::Text => writeln!(self.out, "{}", item_line(item))?,
        }
        let said = match item.status {
            ItemStatus::Refused => "refused",
            ItemStatus::Failed => "failed",
            _ => return Ok(()),
        };
        if self.quiet {
            eprintln!("webaip: {said}: {}", terminal_text(&item.errors));
        }
        Ok(())
    }

    fn finish(&mut self, summary: &IdentifySummary) -> io::Result<()> {
        match self.shape {
            Shape::Json => {
                write!(self.out, "],\"summary\":")?;
                serde_json::to_writer(&mut self.out, summary)?;
                writeln!(self.out, "}}")?;
            }
            Shape::Csv => {
                if let Some(csv) = self.csv.as_mut() {
                    csv.flush()?;
                }
            }
            Shape::Text if !self.lines => {}
            Shape::Text => writeln!(self.out, "{}", summary_line(summary))?,
        }
        self.out.flush()
    }
}

/// An item's rows as `sf -csv` writes them: one per match, the file's four columns repeated;
/// one with empty match columns when it has no match at all (it could not be read).
fn csv_rows(item: &IdentifiedItem) -> Vec<Vec<String>> {
    let file = [
        item.filename.clone(),
        item.filesize.to_string(),
        item.modified.clone(),
        item.errors.clone(),
    ];
    if item.matches.is_empty() {
        let mut row = file.to_vec();
        row.resize(CSV_HEADER.len(), String::new());
        return vec![row];
    }
    let row = |m: &webaip::FormatMatch| {
        let mut row = file.to_vec();
        row.extend(
            [&m.ns, &m.id, &m.format, &m.version, &m.mime, &m.class, &m.basis, &m.warning]
                .map(String::clone),
        );
        row
    };
    item.matches.iter().map(row).collect()
}

/// An item as a line: name, PUIDs with their formats and basis, the verdict on the declared
/// type; or why it was not identified.
fn item_line(item: &IdentifiedItem) -> String {
    let name = &item.filename;
    let what = match item.status {
        // The error names the item (and the offset in its file).
        ItemStatus::Refused => return terminal_text(&format!("REFUSED: {}", item.errors)),
        ItemStatus::Failed => return terminal_text(&format!("FAILED: {}", item.errors)),
        ItemStatus::Empty => "empty (0 bytes)".to_string(),
        ItemStatus::Identified => {
            let matches: Vec<String> = item.matches.iter().map(match_text).collect();
            matches.join("; ")
        }
    };
    let at = item.offset.map(|o| format!(" (offset {o})")).unwrap_or_default();
    let verdict = match (&item.declared, &item.verdict) {
        (Some(d), Some(v)) => format!("; declared {d}: {v}"),
        _ => String::new(),
    };
    terminal_text(&format!("{name}{at}: {what}{verdict}"))
}

/// One match as text: `fmt/11 Portable Network Graphics 1.0 (byte match)`.
fn match_text(m: &webaip::FormatMatch) -> String {
    let mut text = m.id.clone();
    for part in [&m.format, &m.version].into_iter().filter(|p| !p.is_empty()) {
        text.push(' ');
        text.push_str(part);
    }
    let why = if m.basis.is_empty() { &m.warning } else { &m.basis };
    if !why.is_empty() {
        text.push_str(&format!(" ({why})"));
    }
    text
}

/// The run in one line.
fn summary_line(s: &IdentifySummary) -> String {
    format!(
        "{} item(s): {} unknown, {} text named by its content, {} with several formats, \
         {} empty, {} contradicting their declared type, {} refused, {} failed",
        s.items, s.unknown, s.text, s.several, s.empty, s.contradicted, s.refused, s.failed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> IdentifiedItem {
        let mut item = IdentifiedItem {
            filename: "a,b.warc.gz#20240101120000/http://e.org/".into(),
            filesize: 3,
            modified: "2024-01-01T12:00:00Z".into(),
            errors: String::new(),
            status: ItemStatus::Identified,
            matches: Vec::new(),
            offset: Some(7),
            uri: Some("http://e.org/".into()),
            declared: Some("text/plain".into()),
            verdict: Some("consistent".into()),
        };
        let m = |id: &str| webaip::FormatMatch {
            ns: "pronom".into(),
            id: id.into(),
            format: "F".into(),
            version: String::new(),
            mime: "m/x".into(),
            class: String::new(),
            basis: "byte match".into(),
            warning: String::new(),
        };
        item.matches = vec![m("fmt/1"), m("fmt/2")];
        item
    }

    #[test]
    fn several_matches_are_several_rows_repeating_the_file() {
        let rows = csv_rows(&item());
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.len() == CSV_HEADER.len() && r[0] == rows[0][0]));
        assert_eq!((rows[0][5].as_str(), rows[1][5].as_str()), ("fmt/1", "fmt/2"));
        let failed = IdentifiedItem { matches: Vec::new(), ..item() };
        assert_eq!(csv_rows(&failed)[0][4..], vec![String::new(); 8][..]);
    }

    #[test]
    fn a_line_names_the_item_its_matches_and_verdict() {
        let line = item_line(&item());
        assert_eq!(
            line,
            "a,b.warc.gz#20240101120000/http://e.org/ (offset 7): fmt/1 F (byte match); \
             fmt/2 F (byte match); declared text/plain: consistent"
        );
    }
}
