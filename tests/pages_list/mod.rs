//! `webaip pages` lists the HTML pages of a harvest: on the sample Heritrix job, on a package
//! made from it and on the sample PANDAS instance (and its package), the URLs, dates, sizes,
//! statuses and titles are those an independent reader finds (tests/oracle/list_pages.py:
//! warcio reading the package's WARCs, html.parser for the `<title>`).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::{Package, oracle_python, package, repo, sample, webaip};

/// `webaip pages --json`: the listing, which must parse.
fn pages(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["pages", "--json"];
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    let o = webaip(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("pages --json prints one JSON document")
}

/// What the oracle lists for a package.
fn oracle(pkg: &Path, extra: &[&str]) -> Vec<Value> {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/list_pages.py"))
        .arg(pkg)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["pages"].as_array().unwrap().clone()
}

/// The fields both listers give, in the listing's order. warcio rewrites spaces in a
/// WARC-Target-URI to %20 (it logs "Replacing spaces in invalid WARC-Target-URI"), so the URL
/// is compared in that form; that the listing gives it as written is checked on its own.
fn comparable(entries: &[Value]) -> Vec<Value> {
    entries
        .iter()
        .map(|e| {
            serde_json::json!({
                "url": e["url"].as_str().unwrap().replace(' ', "%20"),
                "captured": e["captured"],
                "size": e["size"],
                "status": e["status"],
                "title": e["title"],
            })
        })
        .collect()
}

fn urls(listing: &Value) -> Vec<String> {
    entries(listing).iter().map(|e| e["url"].as_str().unwrap().to_string()).collect()
}

fn entries(listing: &Value) -> Vec<Value> {
    listing["entries"].as_array().unwrap().clone()
}

#[test]
fn heritrix_job_and_its_package_list_the_pages_warcio_finds() {
    let tmp = tempfile::tempdir().unwrap();
    let job = sample("heritrix-job");
    let pkg = tmp.path().join("pkg");
    package(Package::new().quiet().deterministic(), &pkg, &[&job]).succeeded();

    for all in [false, true] {
        let extra: &[&str] = if all { &["--all-statuses"] } else { &[] };
        let want = oracle(&pkg, extra);
        assert!(want.len() >= 3, "the oracle finds the sample's pages: {want:?}");
        let from_package = pages(&pkg, extra);
        let from_job = pages(&job, extra);
        assert_eq!(from_package["kind"], "package");
        assert_eq!(from_job["kind"], "archives");
        // The package and the source it was made from list the same captures.
        assert_eq!(comparable(&entries(&from_package)), want, "package, all statuses: {all}");
        assert_eq!(comparable(&entries(&from_job)), want, "job, all statuses: {all}");
        // Each entry says where it is: a container of the package, an ARC of the job.
        for e in entries(&from_package) {
            let file = e["place"]["file"].as_str().unwrap();
            assert!(file.starts_with("content/") && pkg.join(file).is_file(), "{e}");
            assert!(e["place"]["offset"].is_u64(), "{e}");
        }
        for e in entries(&from_job) {
            assert!(e["place"]["file"].as_str().unwrap().contains("/arcs/IAH-"), "{e}");
        }
        let u = urls(&from_job);
        // As harvested: the WARC-Target-URI packaging writes, space and all.
        assert!(u.contains(&"http://www.example.org/events/spring fair.html".to_string()));
        for redirect_or_error in
            ["http://www.example.org/old-page", "http://www.example.org/missing.html"]
        {
            assert_eq!(u.contains(&redirect_or_error.to_string()), all, "{redirect_or_error}");
        }
        let counts = &from_job["counts"];
        assert_eq!(counts["pages"].as_u64(), Some(want.len() as u64));
        assert_eq!(counts["other_status"].as_u64(), Some(if all { 0 } else { 2 }));
    }
    let with = pages(&job, &["--all-statuses"]);
    let status_of = |url: &str| {
        entries(&with).into_iter().find(|e| e["url"] == url).map(|e| e["status"].clone())
    };
    assert_eq!(status_of("http://www.example.org/old-page"), Some(301.into()));
    assert_eq!(status_of("http://www.example.org/missing.html"), Some(404.into()));
    assert_eq!(
        status_of("http://www.example.org/").map(|_| entries(&with)[0]["title"].clone()),
        Some("Example Heritage Society".into())
    );

    // Text: one aligned line a page, then the counts.
    let o = webaip(&["pages", pkg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let n = entries(&pages(&pkg, &[])).len();
    assert_eq!(lines.len(), n + 1, "{text}");
    assert!(lines[0].starts_with("2024-03-15T10:30:03Z  538  Example Heritage Society"), "{text}");
    // Columns are counted in characters (the ISO-8859-1 page's title is not ASCII).
    let url_column: Vec<usize> =
        lines[..n].iter().map(|l| l[..l.find("http://").unwrap()].chars().count()).collect();
    assert!(url_column.iter().all(|&c| c == url_column[0]), "aligned: {text}");
    assert!(lines[n].starts_with(&format!("{n} page(s)")), "{text}");
}

#[test]
fn pandas_instance_lists_its_pages_as_harvested_with_decoded_titles() {
    let tmp = tempfile::tempdir().unwrap();
    let instance = sample("pandas/40123/20040517-1412");
    let pkg = tmp.path().join("pkg");
    package(Package::new().quiet().deterministic(), &pkg, &[&instance]).succeeded();

    // The source's files are the pages as harvested: the package's Original records where
    // links were rewritten, else its content records.
    let from_source = pages(&instance, &[]);
    assert_eq!(from_source["kind"], "pandas");
    assert_eq!(comparable(&entries(&from_source)), oracle(&pkg, &["--harvested"]));
    // The package lists what it serves (pages with rewritten links).
    let from_package = pages(&pkg, &[]);
    assert_eq!(comparable(&entries(&from_package)), oracle(&pkg, &[]));
    for e in entries(&from_source) {
        let file = e["place"]["file"].as_str().unwrap();
        let on_disk = std::fs::metadata(instance.join(file)).unwrap().len();
        assert_eq!(e["size"].as_u64(), Some(on_disk), "{e}");
    }
    // The windows-1252 page shows its title decoded.
    let about = entries(&from_source)
        .into_iter()
        .find(|e| e["url"] == "http://www.example.gov.au/about/")
        .expect("about/ listed");
    assert_eq!(about["title"], "\u{dc}ber uns");
    assert_eq!(about["place"]["file"], "www.example.gov.au/about/index.html");
}

#[test]
fn a_path_that_is_no_harvest_exits_2_naming_the_accepted_shapes() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "not a harvest").unwrap();
    for path in [tmp.path().to_path_buf(), tmp.path().join("notes.txt")] {
        let o = webaip(&["pages", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        for shape in ["METS.xml", "Heritrix 1.x job directory", "PANDAS instance", ".zip"] {
            assert!(err.contains(shape), "{shape} not named: {err}");
        }
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn a_container_name_leaving_the_package_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    package(Package::new().quiet().deterministic(), &pkg, &[&sample("heritrix-job")]).succeeded();
    std::fs::write(tmp.path().join("outside.warc.gz"), b"").unwrap();
    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    let hostile = text.replacen(
        "xlink:href=\"content/IAH-20240315103000-00000-crawler.example.warc.gz\"",
        "xlink:href=\"../outside.warc.gz\"",
        1,
    );
    assert_ne!(hostile, text);
    std::fs::write(&mets, hostile).unwrap();
    let o = webaip(&["pages", pkg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("../outside.warc.gz"), "{err}");
    assert!(o.stdout.is_empty());
}

/// What a source reports odd is said, not dropped: a WARC record whose `WARC-Date` is no date
/// is no page, and the listing counts and lists it with its file and offset (the text summary
/// says how many). Dates are given in UTC, as RFC 3339: a fraction of a second is kept (to
/// the millisecond or finer).
#[test]
fn a_warc_record_that_cannot_be_dated_is_a_quirk_of_the_listing() {
    let record = |date: &str, uri: &str| {
        let body =
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>{uri}</title>");
        format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{uri}>\r\n\
             WARC-Date: {date}\r\nWARC-Target-URI: http://e.org/{uri}\r\n\
             Content-Type: application/http;msgtype=response\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
    };
    let first = record("2024-03-15T10:30:06.25Z", "a");
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("odd.warc");
    std::fs::write(&warc, format!("{first}{}", record("someday", "b"))).unwrap();
    let l = pages(&warc, &[]);
    let entries = l["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{l}");
    assert_eq!(entries[0]["url"], "http://e.org/a");
    assert_eq!(entries[0]["captured"], "2024-03-15T10:30:06.250Z");
    assert_eq!(entries[0]["title"], "a");
    assert_eq!(l["counts"]["quirks"], 1, "{l}");
    let q = &l["quirks"][0];
    assert_eq!(q["kind"], "unreadable-warc-date");
    assert_eq!(q["offset"], first.len());
    assert!(q["file"].as_str().unwrap().ends_with("odd.warc"), "{q}");
    let text = webaip(&["pages", warc.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.trim_end().ends_with("1 quirk(s) in the source (--json lists them)"), "{text}");
}

/// A title cannot steer the terminal it is printed on (issue 24): a right-to-left override,
/// a C1 control and ESC are printed as escapes in the text listing, while `--json` keeps the
/// title as the page states it.
#[test]
fn titles_that_would_steer_the_terminal_are_escaped_in_text() {
    let title = "invoice\u{202E}fdp.exe\u{9b}2J\u{1b}[31m";
    let body = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>{title}</title>");
    let record = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:a>\r\n\
         WARC-Date: 2024-03-15T10:30:06Z\r\nWARC-Target-URI: http://e.org/\u{202E}a\r\n\
         Content-Type: application/http;msgtype=response\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
        body.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("rlo.warc");
    std::fs::write(&warc, record).unwrap();
    let out = webaip(&["pages", warc.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for raw in ['\u{202E}', '\u{9b}', '\u{1b}'] {
        assert!(!text.contains(raw), "{raw:?} printed raw: {text:?}");
    }
    assert!(text.contains("invoice<U+202E>fdp.exe<U+009B>2J%1B[31m"), "{text}");
    assert!(text.contains("http://e.org/<U+202E>a"), "{text}");
    assert_eq!(pages(&warc, &[])["entries"][0]["title"], title);
}
