//! `webaip report`: every number of the report equals a recount by other tools (the METS read
//! with lxml, the captures indexed by cdxj-indexer: `recount.py`), the page shows them, opens
//! offline in headless Chromium without an error or a request (`open_page.py`), and hostile
//! text or input is shown or refused, never run.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod collection;
mod stored;
mod validate_bound;

use crate::util::{Package, oracle_python, package, repo, report_of, sample, webaip};

mod findings;

/// The samples reported on, with the options they are packaged with: a Heritrix job with
/// described pages (migrated ARCs, their anomaly logs), a wget mirror and a NEDLIB harvest
/// (the sources' quirk logs).
fn samples() -> Vec<(&'static str, Vec<String>)> {
    let metadata = sample("heritrix-job.metadata.toml").display().to_string();
    vec![
        ("heritrix-job", vec!["--metadata".into(), metadata]),
        ("mirror", vec![]),
        ("nedlib", vec![]),
    ]
}

fn packaged(dir: &Path, name: &str, extra: &[String]) -> PathBuf {
    let pkg = dir.join(name.replace('/', "-"));
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    package(Package::new().deterministic().args(&extra), &pkg, &[&sample(name)]).succeeded();
    pkg
}

/// `webaip report PKG -o PAGE --json EXTRA...`.
fn report(pkg: &Path, page: &Path, extra: &[&str]) -> Output {
    let mut argv = vec!["report", pkg.to_str().unwrap(), "-o", page.to_str().unwrap(), "--json"];
    argv.extend_from_slice(extra);
    webaip(&argv)
}

fn recount(pkg: &Path) -> Value {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/report/recount.py"))
        .arg(pkg)
        .output()
        .expect("recount.py runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("its JSON")
}

/// `{key: count}` of a list of `{key, count}` objects.
fn counts(list: &Value) -> serde_json::Map<String, Value> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| (c["key"].as_str().unwrap().to_string(), c["count"].clone()))
        .collect()
}

/// The report's ranked tally equals the recount's full one: the top entries, the rest summed,
/// the distinct count.
fn assert_ranked(name: &str, what: &str, ranked: &Value, full: &Value) {
    let full = full.as_object().unwrap();
    let top = counts(&ranked["top"]);
    for (k, n) in &top {
        assert_eq!(full.get(k), Some(n), "{name}: {what} {k}");
    }
    let rest: u64 =
        full.iter().filter(|(k, _)| !top.contains_key(*k)).map(|(_, n)| n.as_u64().unwrap()).sum();
    assert_eq!(ranked["others"].as_u64(), Some(rest), "{name}: {what} others");
    assert_eq!(ranked["distinct"].as_u64(), Some(full.len() as u64), "{name}: {what} distinct");
}

/// The page shows `count` in the row of `key` (a count cell carries its exact value).
fn assert_row(name: &str, page: &str, key: &str, count: &Value) {
    let cell = format!(r#"<td>{key}</td><td class="n" data-v="{count}">"#);
    assert!(page.contains(&cell), "{name}: the page lacks {cell}");
}

fn assert_mets_facts(name: &str, r: &Value, m: &Value) {
    let id = &r["identity"];
    assert_eq!(id["objid"], m["objid"], "{name}");
    assert_eq!(id["package_type"], m["package_type"], "{name}");
    if !m["title"].as_str().unwrap().is_empty() {
        assert_eq!(id["title"], m["title"], "{name}");
    }
    let events = r["events"].as_array().unwrap();
    assert_eq!(events.len() as u64, m["events"].as_u64().unwrap(), "{name}: events");
    for (kind, n) in m["events_by_type"].as_object().unwrap() {
        let ours = events.iter().filter(|e| e["event_type"] == *kind).count() as u64;
        assert_eq!(Some(ours), n.as_u64(), "{name}: {kind} events");
    }
    assert_eq!(
        r["agents"].as_array().unwrap().len() as u64,
        m["agents"].as_u64().unwrap(),
        "{name}"
    );
    assert_eq!(r["pages"].as_array().unwrap().len() as u64, m["pages"].as_u64().unwrap(), "{name}");
    assert_eq!(r["deduplication"]["requires"], m["requires"], "{name}");
    for (folder, c) in m["folders"].as_object().unwrap() {
        assert_eq!(r["folders"][folder]["files"], c["files"], "{name}: {folder}");
        assert_eq!(r["folders"][folder]["bytes"], c["bytes"], "{name}: {folder}");
    }
    assert_eq!(
        r["folders"].as_object().unwrap().len(),
        m["folders"].as_object().unwrap().len(),
        "{name}"
    );
}

fn assert_captures(name: &str, c: &Value, rc: &Value, page: &str) {
    for key in ["lines", "captures", "revisits", "with_status", "bytes", "first", "last"] {
        assert_eq!(c[key], rc[key], "{name}: captures {key}");
    }
    assert_eq!(Value::Object(counts(&c["by_day"])), rc["by_day"], "{name}: by day");
    assert_ranked(name, "other records", &c["other_records"], &rc["other_records"]);
    assert_eq!(Value::Object(counts(&c["statuses"])), rc["statuses"], "{name}: statuses");
    assert_ranked(name, "hosts", &c["hosts"], &rc["hosts"]);
    assert_ranked(name, "MIME types", &c["mime_types"], &rc["mime_types"]);
    let sizes: Vec<Value> =
        c["sizes"].as_array().unwrap().iter().map(|s| s["count"].clone()).collect();
    assert_eq!(Value::Array(sizes), rc["sizes"], "{name}: sizes");
    for (status, n) in rc["statuses"].as_object().unwrap() {
        assert_row(name, page, status, n);
    }
    for h in c["hosts"]["top"].as_array().unwrap() {
        assert_row(name, page, h["key"].as_str().unwrap(), &h["count"]);
    }
    assert!(
        page.contains(&format!("{} captures", grouped(c["captures"].as_u64().unwrap()))),
        "{name}"
    );
}

/// Thousands separated by commas, as the page writes counts.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Every number of the report of each sample equals the recount by lxml and cdxj-indexer,
/// and the page shows the counts of statuses and hosts in their rows.
#[test]
fn every_number_equals_an_independent_recount() {
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in samples() {
        let pkg = packaged(dir.path(), name, &extra);
        let page = dir.path().join(format!("{name}.html"));
        let r = report_of(&report(&pkg, &page, &[]), 0);
        let rc = recount(&pkg);
        assert_mets_facts(name, &r, &rc["mets"]);
        let html = std::fs::read_to_string(&page).unwrap();
        assert_captures(name, &r["captures"], &rc["captures"], &html);
        assert!(rc["captures"]["captures"].as_u64().unwrap() > 0, "{name}: nothing recounted");
    }
}

/// A Heritrix WARC (request, response and metadata records, the metadata naming the http URL
/// they describe): the captures are its responses (http and dns), as warcio's record types
/// say; the metadata records are counted apart, and the page says how captures were told.
#[test]
fn heritrix_metadata_records_are_no_captures() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("blackbook");
    let warc = crate::util::corpus().join("warc/jwat-IAH-20080430204825-00000-blackbook.warc.gz");
    package(Package::new().deterministic(), &pkg, &[&warc]).succeeded();
    let page = dir.path().join("blackbook.html");
    let r = report_of(&report(&pkg, &page, &[]), 0);
    let rc = recount(&pkg);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_captures("blackbook", &r["captures"], &rc["captures"], &html);
    let c = &r["captures"];
    assert_eq!(c["rule"], "record_type", "{c:#}");
    let other = counts(&c["other_records"]["top"]);
    assert!(other.get("metadata").and_then(Value::as_u64).is_some_and(|n| n > 0), "{c:#}");
    assert!(html.contains("by each record&#39;s type") || html.contains("by each record's type"));
}

/// An index given (`webaip index` of the package) counts what reading the containers counts;
/// an index of another package is named partial, and the run says so by its exit status.
#[test]
fn an_index_counts_the_same_and_another_package_s_index_is_partial() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let pkg = packaged(dir.path(), samples[0].0, &samples[0].1);
    let other = packaged(dir.path(), samples[1].0, &samples[1].1);
    let page = dir.path().join("p.html");
    let read = report_of(&report(&pkg, &page, &[]), 0);
    let index = dir.path().join("p.cdxj");
    let o = webaip(&["index", "-q", "-o", index.to_str().unwrap(), pkg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let indexed = report_of(&report(&pkg, &page, &["--index", index.to_str().unwrap()]), 0);
    let (mut a, mut b) = (read["captures"].clone(), indexed["captures"].clone());
    assert_eq!(a["source"]["kind"], "containers");
    assert_eq!(b["source"]["kind"], "index");
    // Read from the containers, each record's type is known; an index states none.
    assert_eq!((&a["rule"], &b["rule"]), (&"record_type".into(), &"inferred".into()));
    for key in ["source", "rule"] {
        a[key] = Value::Null;
        b[key] = Value::Null;
    }
    assert_eq!(a, b);
    let other_index = dir.path().join("o.cdxj");
    let o = webaip(&["index", "-q", "-o", other_index.to_str().unwrap(), other.to_str().unwrap()]);
    assert!(o.status.success());
    // The same index given twice counts each line twice: the counts are partial.
    let twice = report_of(
        &report(
            &pkg,
            &page,
            &["--index", index.to_str().unwrap(), "--index", index.to_str().unwrap()],
        ),
        1,
    );
    assert!(
        !twice["captures"]["overlapping"].as_array().unwrap().is_empty(),
        "{:#}",
        twice["captures"]
    );
    let partial = report_of(&report(&pkg, &page, &["--index", other_index.to_str().unwrap()]), 1);
    let c = &partial["captures"];
    assert!(!c["containers_without_lines"].as_array().unwrap().is_empty(), "{c:#}");
    assert!(std::fs::read_to_string(&page).unwrap().contains("<strong>Partial:</strong>"));
}

/// The page of each sample opened from disk in headless Chromium at 1280 and 400 pixels:
/// no console error or warning, no request, no sideways scrolling, one h1, a caption on every
/// table, a title on every chart, and a sortable table sorts; screenshots are kept in
/// target/test-artefacts/.
#[test]
fn the_page_opens_offline_in_a_browser_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let artefacts = repo().join("target/test-artefacts");
    std::fs::create_dir_all(&artefacts).unwrap();
    for (name, extra) in samples() {
        let pkg = packaged(dir.path(), name, &extra);
        let page = dir.path().join(format!("{name}.html"));
        report_of(&report(&pkg, &page, &[]), 0);
        let seen = open_page(&page, &artefacts.join(format!("report-{name}")));
        assert_eq!(seen["errors"], Value::Array(vec![]), "{name}: {seen:#}");
        assert_eq!(seen["requests"], Value::Array(vec![]), "{name}: {seen:#}");
        for width in ["1280", "400"] {
            let v = &seen["views"][width];
            let w: u64 = width.parse().unwrap();
            assert!(v["scrollWidth"].as_u64().unwrap() <= w, "{name} at {width}: {v:#}");
            assert_eq!(v["h1"], 1, "{name}");
            assert_eq!(v["tables"], v["captions"], "{name}: a table without a caption");
            assert_eq!(v["charts"], v["chartsTitled"], "{name}: a chart without a title");
            assert!(v["charts"].as_u64().unwrap() >= 3, "{name}: {v:#}");
            assert_eq!(v["sorted"], true, "{name}: {v:#}");
            assert!(artefacts.join(format!("report-{name}-{width}.png")).is_file());
        }
    }
}

fn open_page(page: &Path, shots: &Path) -> Value {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/report/open_page.py"))
        .arg(page)
        .arg(shots)
        .output()
        .expect("open_page.py runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("its JSON")
}

/// A title that is markup and a control character in the METS are shown as text: the page
/// holds one script (its own) and the browser sees no error.
#[test]
fn hostile_text_in_the_mets_is_shown_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let pkg = packaged(dir.path(), samples[0].0, &samples[0].1);
    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    // U+009B is a terminal's control sequence introducer.
    let hostile = "&lt;/title&gt;&lt;script&gt;document.title='owned'&lt;/script&gt;\u{9b}&lt;img src=x onerror=alert(1)&gt;";
    let changed = text.replacen(
        "Example Heritage Society website</mods:title>",
        &format!("{hostile}</mods:title>"),
        1,
    );
    assert_ne!(changed, text, "the sample's title is where the test expects it");
    std::fs::write(&mets, changed).unwrap();
    let page = dir.path().join("h.html");
    let o = report(&pkg, &page, &[]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["identity"]["title"].as_str().unwrap().starts_with("</title><script>"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<script").count(), 1, "only the page's own script");
    assert!(!html.contains("<img"));
    assert!(html.contains("&lt;/title&gt;&lt;script&gt;"));
    assert!(html.contains("&lt;/script&gt;\\x9B&lt;img"), "a control character is shown escaped");
    let seen = open_page(&page, &dir.path().join("h"));
    assert_eq!(seen["errors"], Value::Array(vec![]), "{seen:#}");
    // The script in the title, had it run, would have made the document's title "owned".
    let title = seen["views"]["1280"]["title"].as_str().unwrap();
    assert!(title.starts_with("</title><script>document.title='owned'"), "{title}");
}

/// Bad input is refused naming the file (and line), and a refused run leaves no page: an
/// index line that is no CDXJ, an index that is a FIFO, a METS that is a symbolic link, a
/// WARC file instead of a package.
#[test]
fn bad_input_is_refused_by_name_and_leaves_no_page() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let pkg = packaged(dir.path(), samples[1].0, &samples[1].1);
    let page = dir.path().join("p.html");
    let bad = dir.path().join("bad.cdxj");
    std::fs::write(&bad, "!meta\ncom,x)/ 20240101000000 {\"url\": \"http://x/\"}\n").unwrap();
    let refused = |o: Output, want: &str| {
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err} lacks {want}");
        assert!(!page.exists(), "a refused run left a page");
    };
    refused(report(&pkg, &page, &["--index", bad.to_str().unwrap()]), "bad.cdxj, line 2: ");
    let fifo = dir.path().join("fifo.cdxj");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    refused(report(&pkg, &page, &["--index", fifo.to_str().unwrap()]), "fifo.cdxj");
    let linked = dir.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(pkg.join("METS.xml"), linked.join("METS.xml")).unwrap();
    std::fs::create_dir(linked.join("content")).unwrap();
    refused(report(&linked, &page, &[]), "METS.xml");
    let warc = std::fs::read_dir(pkg.join("content")).unwrap().next().unwrap().unwrap().path();
    refused(report(&warc, &page, &[]), "");
    // The page never replaces what the report reads, nor a FIFO or a link.
    let mets = std::fs::read(pkg.join("METS.xml")).unwrap();
    let o = report(&pkg, &pkg.join("METS.xml"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(pkg.join("METS.xml")).unwrap(), mets, "the METS was overwritten");
    let index = dir.path().join("i.cdxj");
    assert!(
        webaip(&["index", "-q", "-o", index.to_str().unwrap(), pkg.to_str().unwrap()])
            .status
            .success()
    );
    let before = std::fs::read(&index).unwrap();
    let o = report(&pkg, &index, &["--index", index.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&index).unwrap(), before, "the index was overwritten");
    let o = report(&pkg, &fifo, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(),
        "the FIFO was replaced"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".webaip-report-"))
        .collect();
    assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
}

/// Every event is counted, listed or not: a virus check after more events than the page
/// lists is still the card's, and an infected outcome among clean ones makes the card bad.
#[test]
fn verdict_cards_count_every_event_of_their_type() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let pkg = packaged(dir.path(), samples[0].0, &samples[0].1);
    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    let first = text.find("<premis:event ").expect("an event");
    let filler = "<premis:event><premis:eventType>x</premis:eventType></premis:event>".repeat(5001);
    let viral = "<premis:event><premis:eventType>virus check</premis:eventType><premis:eventOutcomeInformation><premis:eventOutcome>viral, cleaned</premis:eventOutcome></premis:eventOutcomeInformation></premis:event>";
    std::fs::write(&mets, format!("{}{filler}{viral}{}", &text[..first], &text[first..])).unwrap();
    let page = dir.path().join("e.html");
    let o = report(&pkg, &page, &[]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = &r["verdicts"]["virus_check"];
    assert_eq!(v["outcomes"]["viral, cleaned"], 1, "{v:#}");
    assert!(v["events"].as_u64().unwrap() >= 2, "{v:#}");
    assert_eq!(r["not_listed"]["events"].as_u64().map(|n| n > 0), Some(true));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(r#"<div class="card bad"><h3>Virus check</h3>"#),
        "the viral outcome colours the card"
    );
}
