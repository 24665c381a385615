//! `webaip pages`: the HTML pages of a package or a source, for a curator choosing what to
//! describe in `[[page]]` tables.

use std::io::Write;
use std::path::PathBuf;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use clap::Args;

use webaip::{
    DEFAULT_ZIP_EXPANSION, PageEntry, PageListOptions, PageListing, PagesProgress, ReadOptions,
    Zone, list_pages, parse_capture_date,
};

use super::{progress, terminal_text};

/// `pages --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated; "kind" is package, archives, pandas, mirror or captures):
  {"path": "samples/heritrix-job", "kind": "archives",
   "entries": [{"url": "http://example.org/", "captured": "2024-01-02T10:11:12Z",
                "size": 5120, "status": 200, "title": "Example", ...}],
   "counts": {"pages": 12, "urls": 10, "captures": 40, ...}, "quirks": []}"#;

/// Arguments of `webaip pages`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct PagesArgs {
    /// A package (a directory holding METS.xml, or its METS.xml) or a source: a Heritrix job
    /// directory, ARC/WARC files' folder or file, a PANDAS instance or title directory, a wget
    /// or HTTrack mirror directory or its .zip.
    path: PathBuf,
    /// Also list HTML captures whose HTTP status is not 2xx (redirects, errors).
    #[arg(long)]
    all_statuses: bool,
    /// Print the listing as one JSON object on standard output (no progress).
    #[arg(long)]
    json: bool,
    /// Sources: time zone of PANDAS instance names and HTTrack log times (as `package`).
    #[arg(long, default_value = "UTC")]
    timezone: String,
    /// Sources: a mirror's site URL when it records none (as `package`).
    #[arg(long)]
    url_prefix: Option<String>,
    /// Sources: the capture date of what records none (as `package`).
    #[arg(long, value_name = "DATE", value_parser = parse_capture_date)]
    capture_date: Option<chrono::DateTime<chrono::Utc>>,
    /// Sources: a mirror's .zip may unpack to this many times its size, at least 64 MiB (as
    /// `package`).
    #[arg(long, value_name = "RATIO", default_value_t = DEFAULT_ZIP_EXPANSION)]
    max_zip_expansion: u64,
    /// Print the listing only: no progress and no counts below it (files refused by the
    /// source are still counted, on standard error).
    #[arg(long, short)]
    quiet: bool,
}

/// Longest title shown in the text listing (the JSON has it whole).
const TITLE_COLUMN: usize = 60;

/// Runs the command; returns the exit status.
pub fn run(args: PagesArgs) -> anyhow::Result<i32> {
    let reading = ReadOptions {
        zone: Zone::parse(&args.timezone)?,
        url_prefix: args.url_prefix.clone(),
        max_zip_expansion: args.max_zip_expansion,
        ..Default::default()
    };
    let opts = PageListOptions {
        all_statuses: args.all_statuses,
        reading,
        capture_date: args.capture_date,
    };
    let bar = progress::bytes_bar(0, args.quiet || args.json);
    let listing = list_pages(&args.path, &opts, &|p| match p {
        PagesProgress::Planned(n) => bar.inc_length(n),
        PagesProgress::Read(n) => bar.inc(n),
    });
    bar.finish_and_clear();
    let listing = listing?;
    if args.json {
        // Streamed: the JSON of 50,000 pages is no 15 MB string held beside the listing.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &listing)?;
        out.write_all(b"\n")?;
        out.flush()?;
    } else {
        print_text(&listing, args.all_statuses)?;
        if args.quiet && listing.counts.refused > 0 {
            eprintln!("{}", counts_text(&listing));
        } else if !args.quiet {
            print_counts(&listing);
        }
    }
    // Files refused by the source (each among the quirks): listed, but a run with findings.
    Ok(if listing.counts.refused > 0 { super::EXIT_FINDINGS } else { 0 })
}

/// `text` cut to at most `columns` terminal columns, an ellipsis marking a cut.
fn fit(text: &str, columns: usize) -> String {
    if text.width() <= columns {
        return text.to_string();
    }
    let mut cut = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > columns - 1 {
            break;
        }
        used += w;
        cut.push(c);
    }
    cut.push('…');
    cut
}

/// One line a page, columns aligned: `DATE  SIZE  [STATUS  ]TITLE  URL`, then the counts.
fn print_text(l: &PageListing, statuses: bool) -> std::io::Result<()> {
    let title = |t: &Option<String>| match t {
        Some(t) => fit(&terminal_text(t), TITLE_COLUMN),
        None => "(no title)".to_string(),
    };
    let row = |e: &PageEntry| {
        [
            e.captured.clone(),
            e.size.to_string(),
            e.status.map_or_else(|| "-".into(), |s| s.to_string()),
            title(&e.title),
            terminal_text(&e.url),
        ]
    };
    // Widths in terminal columns (a CJK character takes two, a combining mark none), in a first
    // pass: the rows are made again to be printed, never all held (50,000 pages are 15 MB; the
    // entries themselves are merged from sorted runs each time).
    let mut w = [0usize; 4];
    for e in l.entries.iter() {
        let r = row(&e?);
        for (i, wi) in w.iter_mut().enumerate() {
            *wi = (*wi).max(r[i].width());
        }
    }
    let [w_date, w_size, w_status, w_title] = w;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for e in l.entries.iter() {
        let [date, size, status, title, url] = row(&e?);
        let pad = w_title - title.width();
        if statuses {
            writeln!(
                out,
                "{date:<w_date$}  {size:>w_size$}  {status:>w_status$}  {title}{:pad$}  {url}",
                ""
            )?;
        } else {
            writeln!(out, "{date:<w_date$}  {size:>w_size$}  {title}{:pad$}  {url}", "")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The counts below the listing, and the containers kept elsewhere.
fn print_counts(l: &PageListing) {
    println!("{}", counts_text(l));
    // Containers the METS keeps elsewhere are said here, not only counted: nothing of them
    // is in the listing.
    for q in l.quirks.iter().filter(|q| q.kind == "container-outside-package") {
        println!("  not listed: {}: {}", super::terminal_text(&q.file), q.detail);
    }
}

/// The counts line: pages, URLs, captures read, and what was left out or refused.
fn counts_text(l: &PageListing) -> String {
    let c = &l.counts;
    let left_out = if c.other_status > 0 {
        format!(
            "; {} HTML capture(s) with another HTTP status left out (--all-statuses lists them)",
            c.other_status
        )
    } else {
        String::new()
    };
    let quirks = match (c.quirks, c.refused) {
        (0, _) => String::new(),
        (q, 0) => format!("; {q} quirk(s) in the source (--json lists them)"),
        (q, r) => {
            format!("; {q} quirk(s) in the source, {r} of them file(s) REFUSED (--json lists them)")
        }
    };
    format!(
        "{} page(s) at {} URL(s), of {} capture(s) read{left_out}{quirks}",
        c.pages, c.urls, c.captures
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cut_and_padded_by_terminal_columns() {
        assert_eq!(fit("short", 10), "short");
        // Ten CJK characters take twenty columns: nine fit beside the ellipsis in 19.
        let wide = "日本語のページの題名だ";
        let cut = fit(wide, 19);
        assert_eq!(cut, "日本語のページの題…");
        assert!(cut.width() <= 19, "{}", cut.width());
        // A combining accent takes no column of its own.
        assert_eq!(fit("Cafe\u{301} du coin", 14), "Cafe\u{301} du coin");
        assert_eq!("Cafe\u{301}".width(), 4);
    }

    #[test]
    fn titles_cannot_steer_the_terminal() {
        // A right-to-left override would reverse the rest of the line (the URL beside it).
        let t = terminal_text("gpj.\u{202E}exe\u{1b}[2J\r\u{85}\u{2067}ok");
        assert_eq!(t, "gpj.<U+202E>exe%1B[2J%0D<U+0085><U+2067>ok");
        assert_eq!(terminal_text("Ça va"), "Ça va");
    }
}
