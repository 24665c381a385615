//! The report as one HTML page that opens offline: inline style and SVG, a few lines of inline
//! script to sort tables, a Content-Security-Policy that forbids every request. Headings,
//! tables with captions, a text alternative (the table) beside every chart; readable printed
//! and on a narrow screen. Every text from the package is escaped; URLs are shown, not linked.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::captures::{Captures, Count, Ranked};
use super::svg::{self, Bar};
use super::text::{bytes, escape, number};
use super::{ReportFacts, agent_name};

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");
/// No request of any kind: styles and scripts only inline, images only `data:`.
const POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// A 14-digit timestamp as `YYYY-MM-DD hh:mm:ss`.
fn timestamp(ts: &str) -> String {
    if ts.len() != 14 {
        return ts.to_string();
    }
    format!("{}-{}-{} {}:{}:{}", &ts[..4], &ts[4..6], &ts[6..8], &ts[8..10], &ts[10..12], &ts[12..])
}

/// One part of the page, in order.
type Section = fn(&ReportFacts, &mut String);

/// Writes the page a section at a time: only one section is held, never the whole page.
pub fn write_html(r: &ReportFacts, out: &mut dyn Write) -> io::Result<()> {
    let sections: [Section; 11] = [
        head,
        summary,
        identity,
        |r, s| captures(&r.captures, s),
        formats,
        described_pages,
        virus_check,
        events,
        deduplication,
        quirks,
        files,
    ];
    let mut page = String::with_capacity(64 * 1024);
    for section in sections {
        section(r, &mut page);
        out.write_all(page.as_bytes())?;
        page.clear();
    }
    // Counting from the containers reads each record as `webaip index` does: a payload
    // whose record states no digest is read to compute it.
    let read = match r.captures.source {
        super::captures::CaptureSource::Index { .. } => "its access index; no payload was read",
        super::captures::CaptureSource::Containers => {
            "its containers' records, read as webaip index reads them (a payload whose record states no digest is read for it)"
        }
    };
    let _ = writeln!(
        page,
        "</main><footer><p>Made by webaip {} from the package's METS, its own logs and {read}.</p></footer><script>{SCRIPT}</script></body></html>",
        escape(&crate::api::short_version()),
    );
    out.write_all(page.as_bytes())
}

fn head(r: &ReportFacts, s: &mut String) {
    let title = if r.identity.title.is_empty() { &r.package } else { &r.identity.title };
    let _ = write!(
        s,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta http-equiv="Content-Security-Policy" content="{POLICY}"><title>{t} — webaip report</title><style>{STYLE}</style></head><body><header><h1>{t}</h1><p class="sub">{kind} · {objid}</p></header><main>"#,
        t = escape(title),
        kind = escape(&package_kind(&r.identity.package_type)),
        objid = escape(&r.identity.objid),
    );
}

fn package_kind(t: &str) -> String {
    match t {
        "sSIP" | "SIP" => format!("{t}: a submission package"),
        "AIP" => "AIP: an archival package".into(),
        "" => "package type not stated".into(),
        other => format!("package type {other}"),
    }
}

/// A verdict card: its state (`ok`, `warn`, `bad`, `none`) colours it; the words say it.
fn card(s: &mut String, name: &str, state: &str, verdict: &str, detail: &str) {
    let _ = write!(
        s,
        r#"<div class="card {state}"><h3>{}</h3><p class="verdict">{}</p><p>{}</p></div>"#,
        escape(name),
        escape(verdict),
        escape(detail)
    );
}

fn summary(r: &ReportFacts, s: &mut String) {
    s.push_str(r#"<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">At a glance</h2><div class="cards">"#);
    let v = &r.verdicts;
    let (state, verdict) = if v.mets.valid { ("ok", "VALID") } else { ("bad", "INVALID") };
    let detail = format!(
        "{} error(s), {} warning(s) against {}",
        number(v.mets.errors),
        number(v.mets.warnings),
        if v.mets.profile.is_empty() { "the schemas" } else { &v.mets.profile }
    );
    card(s, "METS description", state, verdict, &detail);
    match &v.audit {
        Some(a) => {
            let state = match a.verdict {
                crate::audit::Verdict::Intact => "ok",
                crate::audit::Verdict::Damaged => "bad",
                _ => "warn",
            };
            let detail = format!(
                "{} of {} files read; {} finding(s), {} not checked",
                number(a.files_checked),
                number(a.files_listed),
                number(a.findings),
                number(a.unchecked)
            );
            card(s, "Audit", state, &a.text, &detail);
        }
        None => card(
            s,
            "Audit",
            "none",
            "not run",
            "webaip report --audit checks every file's size and digest",
        ),
    }
    // An event's outcome is trusted (may show as `ok`) only from a valid METS of a package
    // that the audit, when run, found INTACT.
    let intact = v.audit.as_ref().is_none_or(|a| a.verdict == crate::audit::Verdict::Intact);
    let trusted = v.mets.valid && intact;
    outcome_card(s, ("Virus check", "the last"), v.virus_check.as_ref(), None, trusted);
    let identified = r.identification.stated.as_ref().map(|t| {
        format!(
            "{} payloads; {} contradict their declared type, {} do not confirm it",
            number(t.payloads),
            number(t.contradicted),
            number(t.not_confirmed)
        )
    });
    let name = ("Format identification", "shown the one stating the most payloads");
    outcome_card(s, name, v.identification.as_ref(), identified, trusted);
    let c = &r.captures;
    let detail = match (&c.first, &c.last) {
        (Some(f), Some(l)) => format!("{} to {}", timestamp(f), timestamp(l)),
        _ => "no dated capture".into(),
    };
    let state = if c.partial() { "warn" } else { "none" };
    card(s, "Captures", state, &format!("{} captures", number(c.captures)), &detail);
    s.push_str("</div></section>");
}

/// An event's card: the worst outcome of all the type's events colours it, one event's word
/// names it. What it says is the METS's statement, not a check this report made: it says so,
/// with the date and agent, and it is never `ok` when the METS is invalid or the audit did not
/// find the package INTACT (`trusted` false).
fn outcome_card(
    s: &mut String,
    (name, shown): (&str, &str),
    o: Option<&super::EventOutcome>,
    short: Option<String>,
    trusted: bool,
) {
    use super::OutcomeState;
    let Some(o) = o else {
        return card(s, name, "warn", "no event", "the METS records no such event");
    };
    let state = match o.worst() {
        OutcomeState::Bad => "bad",
        OutcomeState::Good if trusted => "ok",
        _ => "warn",
    };
    let verdict = match o.outcomes.len() {
        0 | 1 => o.outcome.clone(),
        _ => o
            .outcomes
            .iter()
            .map(|(k, n)| format!("{k}: {}", number(*n)))
            .collect::<Vec<_>>()
            .join("; "),
    };
    let note = short
        .unwrap_or_else(|| crate::layout::clip(o.notes.first().map_or("", String::as_str), 160));
    let events =
        if o.events > 1 { format!("{} events, {shown} ", number(o.events)) } else { String::new() };
    let by = match o.agents.is_empty() {
        true => "no agent named".to_string(),
        false => format!("by {}", o.agents.join(", ")),
    };
    let doubt = if trusted { "" } else { "; the METS is invalid or the package not INTACT" };
    let verdict = format!("{verdict} (stated by the METS)");
    let detail = format!("{events}{}, {by}: {note}{doubt}", o.date);
    card(s, name, state, &verdict, &detail);
}

/// A two-column table of `(name, value)` rows, values already HTML.
fn facts_table(s: &mut String, caption: &str, rows: &[(&str, String)]) {
    let _ = write!(
        s,
        r#"<div class="wrap"><table class="facts"><caption>{}</caption><tbody>"#,
        escape(caption)
    );
    for (name, value) in rows {
        let _ = write!(s, r#"<tr><th scope="row">{}</th><td>{value}</td></tr>"#, escape(name));
    }
    s.push_str("</tbody></table></div>");
}

fn identity(r: &ReportFacts, s: &mut String) {
    let i = &r.identity;
    s.push_str(
        r#"<section id="package" aria-labelledby="package-h"><h2 id="package-h">What it is</h2>"#,
    );
    let made_by = i
        .made_by
        .iter()
        .map(|a| format!("{} ({}, {})", escape(&a.name), escape(&a.role), escape(&a.kind)))
        .collect::<Vec<_>>()
        .join("<br>");
    let software = r
        .agents
        .iter()
        .filter(|a| a.kind.eq_ignore_ascii_case("software"))
        .map(|a| format!("{} {}", escape(&a.name), escape(&a.version)))
        .collect::<Vec<_>>()
        .join("<br>");
    let captured = i.captured.iter().map(|(p, d)| match p.is_empty() {
        true => escape(d),
        false => format!("{}: {}", escape(p), escape(d)),
    });
    let rows = [
        ("Title", escape(&i.title)),
        ("Identifier (OBJID)", escape(&i.objid)),
        ("Package", escape(&package_kind(&i.package_type))),
        ("Profile", escape(&i.profile)),
        ("Website", escape(&i.url)),
        ("Source", escape(&i.source)),
        ("Source shape (by the package's logs)", escape(&i.source_shape)),
        ("Captured (as described)", captured.collect::<Vec<_>>().join("<br>")),
        ("METS made", escape(&i.created)),
        ("METS changed", escape(&i.modified)),
        ("Made by", made_by),
        ("Software", software),
        ("Folder", escape(&r.package)),
    ];
    let rows: Vec<_> = rows.into_iter().filter(|(_, v)| !v.is_empty()).collect();
    facts_table(s, "The package as its METS states it", &rows);
    s.push_str("</section>");
}

/// A table of counts: key, count, share of `total`; sortable.
fn count_table(s: &mut String, caption: &str, key: &str, rows: &[Count], others: u64, total: u64) {
    let _ = write!(
        s,
        r#"<div class="wrap"><table class="sortable"><caption>{}</caption><thead><tr><th scope="col">{}</th><th scope="col" class="n">Count</th><th scope="col" class="n">Share</th></tr></thead><tbody>"#,
        escape(caption),
        escape(key)
    );
    let share = |n: u64| {
        if total == 0 {
            "-".to_string()
        } else {
            format!("{:.1} %", n as f64 * 100.0 / total as f64)
        }
    };
    for c in rows {
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td class="n" data-v="{}">{}</td><td class="n">{}</td></tr>"#,
            escape(&c.key),
            c.count,
            number(c.count),
            share(c.count)
        );
    }
    if others > 0 {
        let _ = write!(
            s,
            r#"<tr><td><em>all others</em></td><td class="n" data-v="{others}">{}</td><td class="n">{}</td></tr>"#,
            number(others),
            share(others)
        );
    }
    s.push_str("</tbody></table></div>");
}

fn ranked_section(s: &mut String, id: &str, title: &str, key: &str, r: &Ranked, total: u64) {
    let bars: Vec<Bar> =
        r.top.iter().take(12).map(|c| Bar { label: &c.key, value: c.count }).collect();
    let distinct = if r.distinct_exact {
        number(r.distinct)
    } else {
        format!("at least {}", number(r.distinct))
    };
    let _ = write!(s, "<h3>{}</h3><p>{distinct} distinct.</p>", escape(title));
    if !bars.is_empty() {
        let desc =
            format!("{} captures; the most frequent: {}", number(total), describe_bars(&bars));
        s.push_str(&svg::bars(id, title, &desc, &bars));
    }
    count_table(s, title, key, &r.top, r.others, total);
}

fn describe_bars(bars: &[Bar]) -> String {
    bars.iter()
        .take(5)
        .map(|b| format!("{} {}", b.label, number(b.value)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn captures(c: &Captures, s: &mut String) {
    s.push_str(
        r#"<section id="captures" aria-labelledby="captures-h"><h2 id="captures-h">Captures</h2>"#,
    );
    let from = match &c.source {
        super::captures::CaptureSource::Containers => {
            "the package's containers, record by record (as webaip index reads them)".to_string()
        }
        super::captures::CaptureSource::Index { files } => {
            format!("the index {}", files.join(", "))
        }
    };
    let _ = write!(
        s,
        "<p>Counted from {}: {} index lines, of which {} captures ({}); of the captures {} with an HTTP status, {} revisits, {} in the containers. Sizes are the records' lengths in the containers (compressed).</p>",
        escape(&from),
        number(c.lines),
        number(c.captures),
        match c.rule {
            super::captures::CaptureRule::RecordType =>
                "response, revisit and resource records of http, https, ftp and dns URLs, by each record's type",
            super::captures::CaptureRule::Inferred =>
                "inferred: an index states no record type, so lines of http, https, ftp and dns URLs, less those without HTTP status of a crawler's metadata type (text/anvl, application/warc-fields); a metadata or request record of another type would be counted as a capture",
        },
        number(c.with_status),
        number(c.revisits),
        bytes(c.bytes)
    );
    partial_warning(c, s);
    let o = &c.other_records;
    if !o.top.is_empty() {
        let total = o.top.iter().map(|o| o.count).sum::<u64>() + o.others;
        let caption = "Index lines that are no capture, by record type or URL scheme";
        count_table(s, caption, "Record type or scheme", &o.top, o.others, total);
    }
    timeline(c, s);
    ranked_section(s, "hosts", "Hosts", "Host", &c.hosts, c.captures);
    statuses(c, s);
    ranked_section(s, "mimes", "Declared MIME types", "MIME type", &c.mime_types, c.captures);
    sizes(c, s);
    s.push_str("</section>");
}

fn partial_warning(c: &Captures, s: &mut String) {
    let mut why = Vec::new();
    if !c.containers_without_lines.is_empty() {
        why.push(format!("no line names {}", c.containers_without_lines.join(", ")));
    }
    if c.beyond_end > 0 {
        why.push(format!(
            "{} line(s) name records beyond their container's end (an index of other bytes?)",
            number(c.beyond_end)
        ));
    }
    if !c.overlapping.is_empty() {
        why.push(format!(
            "the lines of {} add up to more than the container (lines given twice?)",
            c.overlapping.join(", ")
        ));
    }
    if c.other_files > 0 {
        why.push(format!("{} line(s) of other files were left out", number(c.other_files)));
    }
    for unread in &c.not_read {
        why.push(format!("not read to its end, the lines before counted: {unread}"));
    }
    if !why.is_empty() {
        let _ = write!(
            s,
            r#"<p class="warn" role="note"><strong>Partial:</strong> {}.</p>"#,
            escape(&why.join("; "))
        );
    }
}

fn timeline(c: &Captures, s: &mut String) {
    s.push_str("<h3>Timeline</h3>");
    let periods = super::timeline::periods(&c.by_day);
    if periods.bins.is_empty() {
        s.push_str("<p>No dated capture.</p>");
        return;
    }
    let bars: Vec<Bar> =
        periods.bins.iter().map(|b| Bar { label: &b.key, value: b.count }).collect();
    let desc = format!(
        "Captures per {} from {} to {}; busiest: {}",
        periods.unit,
        periods.bins[0].key,
        periods.bins[periods.bins.len() - 1].key,
        describe_bars(&{
            let mut top: Vec<Bar> =
                periods.bins.iter().map(|b| Bar { label: &b.key, value: b.count }).collect();
            top.sort_by_key(|b| std::cmp::Reverse(b.value));
            top.truncate(3);
            top
        })
    );
    s.push_str(&svg::columns("timeline", &format!("Captures per {}", periods.unit), &desc, &bars));
    if c.undated > 0 {
        let _ = write!(
            s,
            "<p>{} line(s) without a 14-digit date are not in the timeline.</p>",
            number(c.undated)
        );
    }
    if c.days_not_charted > 0 {
        let _ = write!(
            s,
            "<p>{} line(s) of days past the {}th are not in the timeline.</p>",
            number(c.days_not_charted),
            number(super::captures::MAX_KEYS as u64)
        );
    }
    let caption = format!("Captures per {}", periods.unit);
    let charted = c.captures.saturating_sub(c.undated + c.days_not_charted);
    count_table(s, &caption, periods.unit, &periods.bins, 0, charted);
}

fn statuses(c: &Captures, s: &mut String) {
    s.push_str("<h3>HTTP statuses</h3>");
    if c.statuses.is_empty() {
        s.push_str("<p>No line states an HTTP status.</p>");
        return;
    }
    let bars: Vec<Bar> = c.statuses.iter().map(|c| Bar { label: &c.key, value: c.count }).collect();
    let desc = format!("{} lines with a status: {}", number(c.with_status), describe_bars(&bars));
    s.push_str(&svg::bars("statuses", "HTTP statuses", &desc, &bars));
    count_table(s, "HTTP statuses", "Status", &c.statuses, 0, c.with_status);
}

fn sizes(c: &Captures, s: &mut String) {
    s.push_str("<h3>Record sizes</h3>");
    let bars: Vec<Bar> = c.sizes.iter().map(|z| Bar { label: z.label, value: z.count }).collect();
    let desc =
        format!("{} captures by size class; largest {}", number(c.captures), bytes(c.largest));
    s.push_str(&svg::bars("sizes", "Record sizes in the containers", &desc, &bars));
    s.push_str(r#"<div class="wrap"><table><caption>Record sizes in the containers</caption><thead><tr><th scope="col">Size</th><th scope="col" class="n">Records</th><th scope="col" class="n">Bytes</th></tr></thead><tbody>"#);
    for z in &c.sizes {
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td class="n">{}</td><td class="n">{}</td></tr>"#,
            z.label,
            number(z.count),
            number(z.bytes)
        );
    }
    let _ = write!(
        s,
        "</tbody></table></div><p>Largest record: {} ({} bytes).</p>",
        bytes(c.largest),
        number(c.largest)
    );
}

fn formats(r: &ReportFacts, s: &mut String) {
    s.push_str(
        r#"<section id="formats" aria-labelledby="formats-h"><h2 id="formats-h">Formats</h2>"#,
    );
    let id = &r.identification;
    match (&id.stated, &r.verdicts.identification) {
        (Some(t), _) => {
            let _ = write!(
                s,
                "<p>The identification event states: {} payloads identified; {} matched no signature and are not text; {} are text named by their content; {} matched several formats; <strong>{} contradict</strong> the MIME type the harvest declared and {} do not confirm it; {} empty payloads were counted, not identified. The METS states only the ten most frequent formats; <code>webaip identify</code> lists every payload.</p>",
                number(t.payloads),
                number(t.unidentified),
                number(t.text),
                number(t.several),
                number(t.contradicted),
                number(t.not_confirmed),
                number(t.empty)
            );
            let rows: Vec<Count> =
                t.by_puid.iter().map(|(k, n)| Count { key: k.clone(), count: *n }).collect();
            let mut rows = rows;
            rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
            let bars: Vec<Bar> =
                rows.iter().map(|c| Bar { label: &c.key, value: c.count }).collect();
            if !bars.is_empty() {
                let desc = format!("The most frequent formats: {}", describe_bars(&bars));
                s.push_str(&svg::bars("puids", "Payloads by PRONOM format", &desc, &bars));
                count_table(
                    s,
                    "Payloads by PRONOM format (the ten most frequent)",
                    "PUID",
                    &rows,
                    0,
                    t.payloads,
                );
            }
        }
        (None, Some(o)) => {
            let _ = write!(
                s,
                "<p>The identification event's outcome is {}; its note is not one this webaip reads: <q>{}</q></p>",
                escape(&o.outcome),
                escape(&o.notes.join(" "))
            );
        }
        (None, None) => s.push_str("<p>The METS records no format identification.</p>"),
    }
    identification_events(&id.events, s);
    s.push_str("<p>The declared MIME types of the captures are under Captures; identification by PUID per capture is not stated in a package.</p>");
    count_table(
        s,
        "The package's files by format (their PREMIS objects)",
        "Format",
        &id.file_formats,
        0,
        id.file_formats.iter().map(|c| c.count).sum(),
    );
    s.push_str("</section>");
}

/// Every identification event with its scope, when there are several (an AIP: its
/// packaging's over every payload, its ingest's over the described bytestreams).
fn identification_events(events: &[super::IdentificationEvent], s: &mut String) {
    if events.len() < 2 {
        return;
    }
    let _ = write!(
        s,
        r#"<p>The METS records {} identification events; the counts above are of the one that states the most payloads (the package-wide one: an ingest identifies only the described bytestreams).</p><div class="wrap"><table><caption>Format identification events</caption><thead><tr><th scope="col">Date</th><th scope="col">Outcome</th><th scope="col" class="n">Payloads stated</th><th scope="col" class="n">Objects linked</th><th scope="col">Shown above</th></tr></thead><tbody>"#,
        number(events.len() as u64)
    );
    for e in events {
        let payloads = e.payloads.map_or_else(|| "(not stated)".to_string(), number);
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td>{}</td><td class="n">{payloads}</td><td class="n">{}</td><td>{}</td></tr>"#,
            escape(&e.date),
            escape(&e.outcome),
            number(e.objects),
            if e.shown { "yes" } else { "" }
        );
    }
    s.push_str("</tbody></table></div>");
}

fn described_pages(r: &ReportFacts, s: &mut String) {
    s.push_str(
        r#"<section id="pages" aria-labelledby="pages-h"><h2 id="pages-h">Described webpages</h2>"#,
    );
    if r.pages.is_empty() {
        s.push_str("<p>The METS describes no webpage of its own.</p></section>");
        return;
    }
    s.push_str(r#"<div class="wrap"><table class="sortable"><caption>Webpages and associated objects the METS describes</caption><thead><tr><th scope="col">Title</th><th scope="col">Kind</th><th scope="col">Captured</th><th scope="col">URL</th><th scope="col">MIME type</th></tr></thead><tbody>"#);
    for p in &r.pages {
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="url">{}</td><td>{}</td></tr>"#,
            escape(&p.title),
            escape(&p.kind.to_lowercase()),
            escape(&p.captured.join(", ")),
            escape(&p.url),
            escape(&p.mime)
        );
    }
    s.push_str("</tbody></table></div></section>");
}

fn virus_check(r: &ReportFacts, s: &mut String) {
    s.push_str(
        r#"<section id="virus" aria-labelledby="virus-h"><h2 id="virus-h">Virus check</h2>"#,
    );
    let checks: Vec<_> = r.events.iter().filter(|e| e.event_type == "virus check").collect();
    if checks.is_empty() {
        s.push_str("<p>The METS records no virus check.</p>");
    }
    for e in checks {
        let _ = write!(
            s,
            "<p><strong>{}</strong> ({}): {}</p>",
            escape(&e.outcome),
            escape(&e.date),
            escape(&e.detail)
        );
        if !e.notes.is_empty() {
            s.push_str("<ul>");
            for n in &e.notes {
                let _ = write!(s, "<li>{}</li>", escape(n));
            }
            s.push_str("</ul>");
        }
    }
    s.push_str("</section>");
}

fn events(r: &ReportFacts, s: &mut String) {
    s.push_str(r#"<section id="events" aria-labelledby="events-h"><h2 id="events-h">Preservation events</h2>"#);
    let _ = write!(
        s,
        r#"<div class="wrap"><table class="sortable"><caption>The PREMIS events, by date ({})</caption><thead><tr><th scope="col">Date</th><th scope="col">Event</th><th scope="col">Outcome</th><th scope="col">Agents</th><th scope="col" class="n">Objects</th></tr></thead><tbody>"#,
        number(r.events.len() as u64)
    );
    for e in &r.events {
        let agents = e
            .agents
            .iter()
            .map(|a| format!("{} ({})", escape(agent_name(&r.agents, &a.id)), escape(&a.role)))
            .collect::<Vec<_>>()
            .join("<br>");
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td>{}</td><td>{}</td><td>{agents}</td><td class="n" data-v="{}">{}</td></tr>"#,
            escape(&e.date),
            escape(&e.event_type),
            escape(&e.outcome),
            e.objects,
            number(e.objects)
        );
    }
    s.push_str("</tbody></table></div>");
    not_listed(r, "events", s);
    s.push_str("</section>");
}

fn not_listed(r: &ReportFacts, list: &str, s: &mut String) {
    if let Some(n) = r.not_listed.get(list) {
        let _ = write!(s, "<p>{} more {list} are in the METS and not listed here.</p>", number(*n));
    }
}

fn deduplication(r: &ReportFacts, s: &mut String) {
    s.push_str(
        r#"<section id="dedup" aria-labelledby="dedup-h"><h2 id="dedup-h">Deduplication</h2>"#,
    );
    let d = &r.deduplication;
    let _ = write!(s, "<p>{} revisit records in the index.</p>", number(r.captures.revisits));
    if d.requires.is_empty() {
        s.push_str("<p>The package requires no other package.</p>");
    } else if d.requires_not_listed > 0 {
        let _ = write!(
            s,
            "<p>{} more required packages are named in the METS and not listed here.</p>",
            number(d.requires_not_listed)
        );
        s.push_str("<ul>");
        for p in &d.requires {
            let _ = write!(s, "<li>{}</li>", escape(p));
        }
        s.push_str("</ul>");
    } else {
        s.push_str("<p>The package requires these packages (payloads of its revisits are stored there):</p><ul>");
        for p in &d.requires {
            let _ = write!(s, "<li>{}</li>", escape(p));
        }
        s.push_str("</ul>");
    }
    for n in &d.notes {
        let _ = write!(s, "<p>{}</p>", escape(n));
    }
    s.push_str("</section>");
}

fn quirks(r: &ReportFacts, s: &mut String) {
    s.push_str(r#"<section id="quirks" aria-labelledby="quirks-h"><h2 id="quirks-h">Quirks of the source</h2>"#);
    let q = &r.quirks;
    if q.kinds.is_empty() {
        let _ = write!(
            s,
            "<p>None recorded in the package's logs ({} read).</p>",
            number(q.logs.len() as u64)
        );
    } else {
        s.push_str(r#"<div class="wrap"><table class="sortable"><caption>Quirks and anomalies by kind, with examples</caption><thead><tr><th scope="col">Kind</th><th scope="col" class="n">Count</th><th scope="col">Examples</th></tr></thead><tbody>"#);
        for k in &q.kinds {
            let examples = k
                .examples
                .iter()
                .map(|e| format!("{}: {}", escape(&e.place), escape(&e.detail)))
                .collect::<Vec<_>>()
                .join("<br>");
            let _ = write!(
                s,
                r#"<tr><td>{}</td><td class="n" data-v="{}">{}</td><td>{examples}</td></tr>"#,
                escape(&k.kind),
                k.count,
                number(k.count)
            );
        }
        s.push_str("</tbody></table></div>");
    }
    for u in &q.unread {
        let _ = write!(s, r#"<p class="warn">Not read: {}</p>"#, escape(u));
    }
    s.push_str("</section>");
}

fn files(r: &ReportFacts, s: &mut String) {
    s.push_str(r#"<section id="files" aria-labelledby="files-h"><h2 id="files-h">Files</h2>"#);
    s.push_str(r#"<div class="wrap"><table><caption>The files the METS lists, by folder</caption><thead><tr><th scope="col">Folder</th><th scope="col" class="n">Files</th><th scope="col" class="n">Bytes</th></tr></thead><tbody>"#);
    for (folder, c) in &r.folders {
        let missing = if c.without_size > 0 {
            format!(" ({} without a size)", number(c.without_size))
        } else {
            String::new()
        };
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td class="n">{}</td><td class="n">{}{missing}</td></tr>"#,
            escape(folder),
            number(c.files),
            number(c.bytes)
        );
    }
    let _ = write!(
        s,
        "</tbody></table></div><p>The containers' PREMIS objects state {} WARC records; the package was migrated from {} file(s).</p></section>",
        number(r.stated_records),
        number(r.migrated_from)
    );
}
