//! The collection's page and JSON. Rows are written as they are made: the page's table rows
//! to a temporary file (the first [`PAGE_ROWS`]), the JSON's to its writer; the page is then
//! put together from the summary and that file, so neither is ever held whole.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};

use super::row::{PackageRow, Verdict};
use super::tally::{BatchFacts, StoreFacts};
use super::{CollectionError, CollectionSummary, PAGE_ROWS};
use crate::report::captures::Count;
use crate::report::svg::{self, Bar};
use crate::report::text::{bytes, escape, number};

const STYLE: &str = include_str!("../report.css");
const SCRIPT: &str = include_str!("../report.js");
/// No request of any kind: styles and scripts only inline, images only `data:`.
const POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";
/// Formats a row shows (the JSON has them all).
const ROW_FORMATS: usize = 3;

/// Where rows go as they are made.
pub(crate) struct RowSink<'a> {
    page: Option<BufWriter<File>>,
    listed: u64,
    json: Option<&'a mut dyn Write>,
    json_rows: u64,
}

fn write_err(what: &str) -> impl Fn(io::Error) -> CollectionError + '_ {
    move |source| CollectionError::Write { what: what.to_string(), source }
}

impl<'a> RowSink<'a> {
    /// A sink writing the page's rows to `page` and the JSON to `json`.
    pub(crate) fn new(
        page: Option<File>,
        mut json: Option<&'a mut dyn Write>,
    ) -> Result<Self, CollectionError> {
        if let Some(j) = json.as_deref_mut() {
            j.write_all(b"{\"packages\": [").map_err(write_err("the JSON"))?;
        }
        Ok(RowSink { page: page.map(BufWriter::new), listed: 0, json, json_rows: 0 })
    }

    /// Writes a row.
    pub(crate) fn add(
        &mut self,
        row: PackageRow,
        _: &mut CollectionSummary,
    ) -> Result<(), CollectionError> {
        if let Some(p) = &mut self.page
            && self.listed < PAGE_ROWS
        {
            self.listed += 1;
            p.write_all(table_row(&row).as_bytes()).map_err(write_err("the page's rows"))?;
        }
        if let Some(j) = self.json.as_deref_mut() {
            let sep: &[u8] = if self.json_rows == 0 { b"\n" } else { b",\n" };
            j.write_all(sep).map_err(write_err("the JSON"))?;
            serde_json::to_writer(&mut *j, &row).map_err(|e| write_err("the JSON")(e.into()))?;
            self.json_rows += 1;
        }
        Ok(())
    }

    /// Ends the JSON with the summary; gives the page's rows back, from their start.
    pub(crate) fn finish(self, s: &CollectionSummary) -> Result<Option<File>, CollectionError> {
        if let Some(j) = self.json {
            let summary = serde_json::to_string(s).map_err(|e| write_err("the JSON")(e.into()))?;
            // The summary's fields follow the rows in the one object.
            let rest = summary.strip_prefix('{').unwrap_or("}");
            let sep = if rest == "}" { "" } else { "," };
            write!(j, "\n]{sep}{rest}\n")
                .and_then(|()| j.flush())
                .map_err(write_err("the JSON"))?;
        }
        let Some(page) = self.page else { return Ok(None) };
        let mut file =
            page.into_inner().map_err(|e| write_err("the page's rows")(e.into_error()))?;
        file.rewind().map_err(write_err("the page's rows"))?;
        Ok(Some(file))
    }
}

/// Writes the page: the summary, the table (its rows copied from `rows`), the charts, the
/// failed items and the oldest checks.
pub(crate) fn write_page(
    s: &CollectionSummary,
    rows: &mut File,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut page = String::with_capacity(64 * 1024);
    head(s, &mut page);
    cards(s, &mut page);
    table_head(&mut page);
    out.write_all(page.as_bytes())?;
    io::copy(rows, out)?;
    page.clear();
    table_end(s, &mut page);
    charts(s, &mut page);
    if let Some(b) = &s.batch {
        failures(b, &mut page);
    }
    if let Some(st) = &s.store {
        store(st, &mut page);
    }
    let _ = write!(
        page,
        "</main><footer><p>Made by webaip {} from each package's METS{}; no container was read: a row says what the package states of itself, not what its containers hold.</p></footer><script>{SCRIPT}</script></body></html>",
        escape(&crate::api::short_version()),
        match (&s.batch, &s.store) {
            (Some(_), Some(_)) => ", the batch journals and the store's state database",
            (Some(_), None) => " and the batch journals",
            (None, Some(_)) => " and the store's state database",
            (None, None) => "",
        }
    );
    out.write_all(page.as_bytes())
}

fn head(s: &CollectionSummary, p: &mut String) {
    let _ = write!(
        p,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta http-equiv="Content-Security-Policy" content="{POLICY}"><title>Collection of {n} packages — webaip report</title><style>{STYLE}</style></head><body><header><h1>A collection of {n} packages</h1><p class="sub">{inputs}</p></header><main>"#,
        n = number(s.totals.packages),
        inputs = escape(&inputs_text(&s.inputs)),
    );
}

/// The inputs as the header names them: the first few, and how many more.
fn inputs_text(inputs: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = inputs.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(" · ");
    if inputs.len() > SHOWN {
        let _ = write!(text, " and {} more", number((inputs.len() - SHOWN) as u64));
    }
    text
}

/// A summary card (as the package report's): its state colours it; the words say it.
fn card(p: &mut String, name: &str, state: &str, verdict: &str, detail: &str) {
    let _ = write!(
        p,
        r#"<div class="card {state}"><h3>{}</h3><p class="verdict">{}</p><p>{}</p></div>"#,
        escape(name),
        escape(verdict),
        escape(detail)
    );
}

fn tally_text(by: &std::collections::BTreeMap<String, u64>) -> String {
    by.iter().map(|(k, n)| format!("{k}: {}", number(*n))).collect::<Vec<_>>().join("; ")
}

fn cards(s: &CollectionSummary, p: &mut String) {
    let t = &s.totals;
    p.push_str(r#"<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">At a glance</h2><div class="cards">"#);
    let state = if t.not_read > 0 { "bad" } else { "ok" };
    let detail = format!("{} read; {} not read", number(t.read), number(t.not_read));
    card(p, "Packages", state, &format!("{} packages", number(t.packages)), &detail);
    let state = match (t.mets_invalid, t.mets_not_validated) {
        (0, 0) => "ok",
        (0, _) => "none",
        _ => "bad",
    };
    let detail = format!(
        "{} valid, {} invalid; {} read to their end and not validated (--validate)",
        number(t.mets_valid),
        number(t.mets_invalid),
        number(t.mets_not_validated)
    );
    card(p, "METS descriptions", state, &format!("{} invalid", number(t.mets_invalid)), &detail);
    let worst = |by: &std::collections::BTreeMap<String, u64>| {
        if by.contains_key("bad") {
            "bad"
        } else if by.keys().any(|k| k != "ok") {
            "warn"
        } else {
            "ok"
        }
    };
    card(
        p,
        "Virus checks",
        worst(&t.virus_check),
        &tally_text(&t.virus_check),
        "packages by their checks' worst outcome, as the METS state them",
    );
    card(
        p,
        "Format identification",
        worst(&t.identification),
        &tally_text(&t.identification),
        "packages by their identifications' outcomes",
    );
    let at_least = |what: &str| if t.sums_capped.contains(what) { "at least " } else { "" };
    let capped_note = match t.packages_capped {
        0 => String::new(),
        n => format!(
            "; not summed past 2^64 − 1: the sizes or record counts {} package(s) state are beyond it",
            number(n)
        ),
    };
    let detail = format!(
        "{} files the METS list; {}{} bytes{capped_note}",
        number(t.files),
        at_least("bytes"),
        number(t.bytes)
    );
    let state = if t.sums_capped.contains("bytes") { "bad" } else { "none" };
    card(p, "Bytes", state, &format!("{}{}", at_least("bytes"), bytes(t.bytes)), &detail);
    let detail = match (t.captured_first.is_empty(), t.captured_last.is_empty()) {
        (false, false) => format!("captured {} to {}", t.captured_first, t.captured_last),
        _ => "no capture date stated".into(),
    };
    let state = if t.sums_capped.contains("records") { "bad" } else { "none" };
    let verdict = format!("{}{} records", at_least("records"), number(t.records));
    card(p, "WARC records", state, &verdict, &detail);
    record_cards(s, p);
    p.push_str("</div></section>");
}

/// The cards of what the journals and the state database record.
fn record_cards(s: &CollectionSummary, p: &mut String) {
    if let Some(b) = &s.batch {
        let c = &b.counts;
        let state =
            if c.failed + c.pending + c.running > 0 || b.bad_rows > 0 { "bad" } else { "ok" };
        let detail = format!(
            "{} pending, {} running, {} stored",
            number(c.pending as u64),
            number(c.running as u64),
            number(c.stored as u64)
        );
        card(
            p,
            "Batch items",
            state,
            &format!("{} done, {} failed", number(c.done as u64), number(c.failed as u64)),
            &detail,
        );
    }
    if let Some(st) = &s.store {
        let bad =
            st.copies_missing + st.copies_corrupt + st.mets_rejected + st.checks_found_problems;
        let state = if bad > 0 { "bad" } else { "ok" };
        let detail = format!(
            "{} copies on the {} replicas configured: {} missing, {} corrupt; {} METS copies found bad by this report; {} packages with a copy never checked; {} objects whose last check found problems",
            number(st.copies),
            number(st.replicas.len() as u64),
            number(st.copies_missing),
            number(st.copies_corrupt),
            number(st.mets_rejected),
            number(st.never_checked),
            number(st.checks_found_problems)
        );
        card(
            p,
            "Store",
            state,
            &format!("{} of {} accepted", number(st.accepted), number(st.packages)),
            &detail,
        );
    }
}

fn table_head(p: &mut String) {
    p.push_str(r#"<section id="packages" aria-labelledby="packages-h"><h2 id="packages-h">Packages</h2><p>One row a package, from its METS (and what the journal or the store's state database records of it), not from its containers. Press a column's header to sort by it.</p><div class="wrap"><table class="sortable"><caption>The packages</caption><thead><tr><th scope="col">Package</th><th scope="col">Captured</th><th scope="col" class="n">Records</th><th scope="col" class="n">Bytes</th><th scope="col">Formats</th><th scope="col">METS</th><th scope="col">Virus check</th><th scope="col">Identification</th><th scope="col">Last check</th><th scope="col">Copies</th></tr></thead><tbody>"#);
}

fn table_end(s: &CollectionSummary, p: &mut String) {
    p.push_str("</tbody></table></div>");
    if s.rows_not_listed > 0 {
        let _ = write!(
            p,
            r#"<p class="warn" role="note">{} more packages are counted above and below and not listed here (the page lists the first {}; <code>--json</code> lists every one).</p>"#,
            number(s.rows_not_listed),
            number(PAGE_ROWS)
        );
    }
    named_again(&s.named_again, p);
    p.push_str("</section>");
}

/// The names passed over because what they name was taken already.
fn named_again(a: &super::NamedAgain, p: &mut String) {
    if a.packages + a.journals == 0 {
        return;
    }
    let _ = write!(
        p,
        r#"<p class="warn" role="note">Named more than once, read and counted once: {} package(s) and {} journal(s) named again (the same folder or file by another name or another row). Passed over: {}{}.</p>"#,
        number(a.packages),
        number(a.journals),
        a.names.iter().map(|n| escape(n)).collect::<Vec<_>>().join(", "),
        if (a.names.len() as u64) < a.packages + a.journals { " and more" } else { "" }
    );
}

/// One package's row of the table.
pub(crate) fn table_row(r: &PackageRow) -> String {
    let mut p = String::with_capacity(1024);
    let who = format!(
        "<strong>{}</strong><br>{}<br><small>{}</small>",
        escape(&r.title),
        escape(&r.objid),
        escape(&r.package)
    );
    if let Some(why) = &r.not_read {
        let _ = write!(
            p,
            r#"<tr><td>{who}</td><td colspan="9" class="bad">Not read: {}</td></tr>"#,
            escape(why)
        );
        return p;
    }
    let captured = match r.captured_first == r.captured_last {
        true => escape(&r.captured_first),
        false => format!("{} to {}", escape(&r.captured_first), escape(&r.captured_last)),
    };
    let formats = r
        .formats
        .iter()
        .take(ROW_FORMATS)
        .map(|c| format!("{} ({})", escape(&c.key), number(c.count)))
        .collect::<Vec<_>>()
        .join("<br>");
    let mets = match r.mets_valid {
        Some(true) => "VALID".to_string(),
        Some(false) => format!("INVALID ({} errors)", number(r.mets_errors)),
        None => "read, not validated".to_string(),
    };
    let _ = write!(
        p,
        r#"<tr><td>{who}</td><td>{captured}</td><td class="n" data-v="{rec}">{}</td><td class="n" data-v="{b}">{}</td><td>{formats}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
        capped_cell(r, "records", number(r.records)),
        capped_cell(r, "bytes", bytes(r.bytes)),
        escape(&mets),
        verdict_cell(r.virus_check.as_ref()),
        verdict_cell(r.identification.as_ref()),
        check_cell(r),
        copies_cell(r),
        rec = r.records,
        b = r.bytes,
    );
    p
}

/// A row's sum as shown: "at least" when it was capped.
fn capped_cell(r: &PackageRow, what: &str, shown: String) -> String {
    if r.sums_capped.contains(&what) { format!("at least {shown} (not summable)") } else { shown }
}

fn verdict_cell(v: Option<&Verdict>) -> String {
    match v {
        None => "no event".into(),
        Some(v) => format!("{} ({})", escape(&v.outcome), escape(&v.date)),
    }
}

fn check_cell(r: &PackageRow) -> String {
    match &r.last_check {
        None => "none recorded".into(),
        Some(c) => format!(
            "{}: {}{} ({})",
            escape(c.by),
            escape(c.date.as_deref().unwrap_or("never")),
            match c.deep {
                Some(true) => ", every file hashed",
                Some(false) => ", sizes only (not hashed)",
                None => "",
            },
            escape(&c.outcome)
        ),
    }
}

fn copies_cell(r: &PackageRow) -> String {
    let mut parts: Vec<String> = r
        .replicas
        .iter()
        .map(|c| {
            let none = if r.without_copy.contains(&c.replica) { " (no copy recorded)" } else { "" };
            format!(
                "{}: {} of {} ok, {} missing, {} corrupt{none}",
                escape(&c.replica),
                number(c.ok),
                number(c.files),
                number(c.missing),
                number(c.corrupt)
            )
        })
        .collect();
    for why in &r.mets_rejected {
        parts.push(format!("METS found bad by this report: {}", escape(why)));
    }
    if let Some(a) = &r.accepted_at {
        parts.push(format!("accepted {}", escape(a)));
    }
    if let Some(k) = &r.ocfl {
        parts.push(format!("{} of object {}", escape(&k.version), escape(&k.object)));
        if !k.place_recorded {
            parts.push("place not recorded (found by the version's message)".into());
        }
        if let Some(head) = &k.head_package {
            parts.push(format!("its head is the package {}", escape(head)));
        }
    }
    if let Some(stored) = r.batch.as_ref().and_then(|b| b.stored.as_ref()) {
        parts.push(format!("stored {} (journal)", escape(stored)));
    }
    parts.join("<br>")
}

/// A table of `(key, values...)` rows, the values counts; captioned.
fn counts_table(p: &mut String, caption: &str, heads: &[&str], rows: &[(String, Vec<u64>)]) {
    let _ = write!(
        p,
        r#"<div class="wrap"><table class="sortable"><caption>{}</caption><thead><tr>"#,
        escape(caption)
    );
    for (i, h) in heads.iter().enumerate() {
        let class = if i > 0 { r#" class="n""# } else { "" };
        let _ = write!(p, r#"<th scope="col"{class}>{}</th>"#, escape(h));
    }
    p.push_str("</tr></thead><tbody>");
    for (key, values) in rows {
        let _ = write!(p, "<tr><td>{}</td>", escape(key));
        for v in values {
            let _ = write!(p, r#"<td class="n" data-v="{v}">{}</td>"#, number(*v));
        }
        p.push_str("</tr>");
    }
    p.push_str("</tbody></table></div>");
}

fn charts(s: &CollectionSummary, p: &mut String) {
    let t = &s.totals;
    p.push_str(r#"<section id="charts" aria-labelledby="charts-h"><h2 id="charts-h">Over the whole collection</h2><h3>By year of capture</h3>"#);
    let bars: Vec<Bar> =
        t.by_year.iter().map(|y| Bar { label: &y.year, value: y.records }).collect();
    if !bars.is_empty() {
        let desc =
            format!("WARC records of {} packages by the year their capture began", number(t.read));
        p.push_str(&svg::columns("years", "WARC records per year of capture", &desc, &bars));
    }
    let rows: Vec<(String, Vec<u64>)> =
        t.by_year.iter().map(|y| (y.year.clone(), vec![y.packages, y.records])).collect();
    counts_table(
        p,
        "Packages and the WARC records their METS state, by the year their capture began (as described)",
        &["Year", "Packages", "Records"],
        &rows,
    );
    p.push_str("<h3>Bytes per package</h3>");
    let bars: Vec<Bar> =
        t.sizes.iter().map(|z| Bar { label: z.class, value: z.packages }).collect();
    let desc = format!("{} packages by the bytes of the files their METS list", number(t.read));
    p.push_str(&svg::bars("sizes", "Packages by size", &desc, &bars));
    let rows: Vec<(String, Vec<u64>)> =
        t.sizes.iter().map(|z| (z.class.to_string(), vec![z.packages, z.bytes])).collect();
    counts_table(
        p,
        "Packages by the bytes of the files their METS list",
        &["Size", "Packages", "Bytes"],
        &rows,
    );
    formats(&t.formats, p);
    p.push_str("</section>");
}

fn formats(all: &[Count], p: &mut String) {
    p.push_str("<h3>Formats</h3><p>Payloads by PRONOM format as each package's identification event states them (the ten most frequent a package has), else the package's files by format.</p>");
    if all.is_empty() {
        p.push_str("<p>No format stated.</p>");
        return;
    }
    let bars: Vec<Bar> =
        all.iter().take(12).map(|c| Bar { label: &c.key, value: c.count }).collect();
    p.push_str(&svg::bars(
        "formats",
        "Formats across the collection",
        "The most frequent formats across the collection",
        &bars,
    ));
    let rows: Vec<(String, Vec<u64>)> =
        all.iter().map(|c| (c.key.clone(), vec![c.count])).collect();
    counts_table(p, "Formats across the collection", &["Format", "Count"], &rows);
}

fn failures(b: &BatchFacts, p: &mut String) {
    p.push_str(r#"<section id="failures" aria-labelledby="failures-h"><h2 id="failures-h">Batch items that failed</h2>"#);
    if b.failures.is_empty() {
        p.push_str("<p>No item failed.</p></section>");
        return;
    }
    p.push_str(r#"<div class="wrap"><table class="sortable"><caption>Failed items, with the reasons the journal records</caption><thead><tr><th scope="col">Item</th><th scope="col">Kind</th><th scope="col">Reason</th><th scope="col">When</th><th scope="col">Journal</th></tr></thead><tbody>"#);
    for f in &b.failures {
        let _ = write!(
            p,
            "<tr><td>{}<br><small>{}</small></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&f.key),
            escape(&f.source),
            escape(&f.kind),
            escape(&f.reason),
            escape(&f.updated),
            escape(&f.journal)
        );
    }
    p.push_str("</tbody></table></div>");
    if b.failures_not_listed > 0 {
        let _ = write!(
            p,
            "<p>{} more failed items are in the journals and not listed here.</p>",
            number(b.failures_not_listed)
        );
    }
    p.push_str("</section>");
}

fn store(st: &StoreFacts, p: &mut String) {
    p.push_str(r#"<section id="store" aria-labelledby="store-h"><h2 id="store-h">The store</h2>"#);
    let rows: Vec<(String, Vec<u64>)> = st
        .replicas
        .values()
        .map(|c| (c.replica.clone(), vec![c.files, c.ok, c.missing, c.corrupt]))
        .collect();
    counts_table(
        p,
        &format!("Copies by replica, as the state database of {} last saw them", st.config),
        &["Replica", "Copies", "OK", "Missing", "Corrupt"],
        &rows,
    );
    p.push_str(r#"<h3>Oldest checks</h3><div class="wrap"><table><caption>The packages whose last check is oldest (a package's last check is its least recently checked copy's)</caption><thead><tr><th scope="col">Package</th><th scope="col">Last checked</th></tr></thead><tbody>"#);
    for o in &st.oldest_checks {
        let _ = write!(
            p,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(&o.identifier),
            escape(o.checked.as_deref().unwrap_or("never (a copy was not checked)"))
        );
    }
    p.push_str("</tbody></table></div></section>");
}
