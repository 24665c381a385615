//! Packages say what is so (issue 14): a record range is a gzip member only where the METS
//! states a GZIP transform (tests/audit checks that on every corpus WARC with
//! tests/oracle/check_package.py), and a copied HTTP response's payload is typed as its entity,
//! as warcio reads the HTTP header, not as `application/http`.

use std::collections::HashMap;
use std::process::Command;

use crate::util::{Package, corpus, oracle_python, repo, webaip};

/// BEGIN of each record `<file>` -> MIMETYPE of its payload `<file>`.
fn payload_types(mets: &str) -> HashMap<u64, String> {
    let attr = |el: &str, name: &str| {
        let key = format!(" {name}=\"");
        el.find(&key).map(|i| {
            let v = &el[i + key.len()..];
            v[..v.find('"').unwrap()].to_string()
        })
    };
    let mut out = HashMap::new();
    let mut record_begin = None;
    for el in mets.split("<mets:file ").skip(1) {
        let el = format!(" {}", &el[..el.find('>').unwrap()]);
        let el = el.as_str();
        let id = attr(el, "ID").unwrap();
        if id.contains("-R") && !id.ends_with("-P") {
            record_begin = attr(el, "BEGIN").and_then(|b| b.parse::<u64>().ok());
        } else if id.ends_with("-P")
            && let Some(b) = record_begin
        {
            out.insert(b, attr(el, "MIMETYPE").unwrap());
        }
    }
    out
}

#[test]
fn copied_responses_are_typed_as_their_entity() {
    let tmp = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for name in ["pywb-example-wget-1-14.warc.gz", "nas-NAS-20100909163324-00000-mette.kb.dk.warc"]
    {
        let input = corpus().join("warc").join(name);
        let pkg = tmp.path().join(name);
        let o = Package::new().quiet().mode("full").run(&pkg, &input);
        assert!(pkg.join("METS.xml").is_file(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let o = Command::new(oracle_python())
            .arg(repo().join("tests/oracle/entity_types.py"))
            .arg(&input)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let expected: HashMap<String, Option<String>> = serde_json::from_slice(&o.stdout).unwrap();
        let container = std::fs::read_dir(pkg.join("content")).unwrap().next().unwrap().unwrap();
        let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
        // The copy is byte-exact, so offsets in the input are offsets in the container.
        assert_eq!(std::fs::read(container.path()).unwrap(), std::fs::read(&input).unwrap());
        let ours = payload_types(&mets);
        assert!(!expected.is_empty(), "{name}: no HTTP responses");
        for (offset, mime) in &expected {
            let Some(got) = ours.get(&offset.parse::<u64>().unwrap()) else { continue };
            let want = mime.clone().unwrap_or_else(|| "application/octet-stream".into());
            assert_eq!(got, &want, "{name} record at {offset}");
            assert!(!got.starts_with("application/http"), "{name} at {offset}: {got}");
            compared += 1;
        }
    }
    assert!(compared >= 10, "only {compared} payloads compared");
}

/// A truncated record in an ARC: the text report says so, with kinds, counts and offsets; the
/// migration report is a file of the package (Logfile group, its own PREMIS object) at the path
/// the migration event cites; and no message claims what did not happen (issue 14, item 6).
#[test]
fn the_text_report_shows_migration_anomalies_and_the_report_travels_in_the_package() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("TRUNC-20240101000000-00000.arc");
    let body = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>cut short";
    let mut bytes = b"filedesc://TRUNC-20240101000000-00000.arc 0.0.0.0 20240101000000 text/plain 76\n1 0 test\nURL IP-address Archive-date Content-type Archive-length\n\n".to_vec();
    let first = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>ok</html>";
    bytes.extend_from_slice(
        format!("http://e.org/ 192.0.2.1 20240101000001 text/html {}\n", first.len()).as_bytes(),
    );
    bytes.extend_from_slice(first);
    bytes.extend_from_slice(b"\n");
    let truncated_at = bytes.len();
    // Declares 500 bytes; the file ends after far fewer.
    bytes.extend_from_slice(b"http://e.org/cut 192.0.2.1 20240101000002 text/html 500\n");
    bytes.extend_from_slice(body);
    std::fs::write(&arc, &bytes).unwrap();
    let pkg = tmp.path().join("pkg");
    let o = Package::new().run(&pkg, &arc);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(pkg.join("METS.xml").is_file(), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("TRUNCATED: 1 record(s)"), "{text}");
    assert!(text.contains("anomalies: "), "{text}");
    assert!(text.contains(&format!("offset {truncated_at}")), "no offset {truncated_at}: {text}");
    // No target URL anywhere: the report does not claim a title was made from one.
    assert!(!text.contains("made from the target URL"), "{text}");
    assert!(text.contains("no target URL"), "{text}");

    let rel = "logs/webaip/TRUNC-20240101000000-00000.warc.gz.migration.json";
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pkg.join(rel)).unwrap()).unwrap();
    assert!(
        report["anomaly_counts"].as_object().unwrap().keys().any(|k| k == "truncated"),
        "{report}"
    );
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    assert!(mets.contains(&format!("xlink:href=\"{rel}\"")), "not in the fileSec");
    assert!(
        mets.contains(&format!(
            "<premis:objectIdentifierValue>{rel}</premis:objectIdentifierValue>"
        ))
    );
    assert!(
        mets.contains(&format!("see the migration report, {rel}")),
        "the event does not cite it"
    );
    let manifest = std::fs::read_to_string(pkg.join("manifest-sha512.txt")).unwrap();
    assert!(manifest.contains(rel));
    let a = webaip(&["audit", pkg.to_str().unwrap()]);
    assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stdout));
}

/// An ARC header line whose content type is no MIME type (`html`): the migrated payload is
/// typed by the HTTP header (`text/html`), and the ARC's value is kept in the report.
#[test]
fn a_non_mime_arc_type_gives_way_to_the_http_header() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("TYPE-20240101000000-00000.arc");
    let body = b"HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html>hi</html>";
    let mut bytes = b"filedesc://TYPE-20240101000000-00000.arc 0.0.0.0 20240101000000 text/plain 76\n1 0 test\nURL IP-address Archive-date Content-type Archive-length\n\n".to_vec();
    bytes.extend_from_slice(
        format!("http://e.org/ 192.0.2.1 20240101000001 html {}\n", body.len()).as_bytes(),
    );
    bytes.extend_from_slice(body);
    bytes.extend_from_slice(b"\n");
    std::fs::write(&arc, &bytes).unwrap();
    let pkg = tmp.path().join("pkg");
    let o = Package::new().json().mode("full").run(&pkg, &arc);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let types: Vec<String> = payload_types(&mets).into_values().collect();
    // The filedesc's metadata record (text/plain) and the page.
    assert!(types.contains(&"text/html".to_string()), "payload types {types:?}");
    assert!(!types.iter().any(|t| t == "application/octet-stream"), "payload types {types:?}");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("arc-type-not-entity-type"), "{report}");
    assert!(report.contains("ARC content type \\\"html\\\""), "{report}");
}

/// The website's MODS and DC sections (`DMD-MODS`, `DMD-DC`) of a METS document.
fn website_dmd(mets: &str) -> (&str, &str) {
    let section = |id: &str| {
        let at = mets.find(&format!("<mets:dmdSec ID=\"{id}\"")).unwrap_or_else(|| panic!("{id}"));
        &mets[at..at + mets[at..].find("</mets:dmdSec>").unwrap()]
    };
    (section("DMD-MODS"), section("DMD-DC"))
}

/// The values of `<tag ...>VALUE</tag>` in `xml`, in order.
fn values<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    xml.match_indices(&format!("<{tag}"))
        .filter_map(|(at, _)| {
            let open = at + xml[at..].find('>')? + 1;
            Some(&xml[open..open + xml[open..].find('<')?])
        })
        .collect()
}

/// Issue 25, item 4: the capture range of a package made from an ARC ends at its last capture,
/// not at the `filedesc` record's date (when the ARC file was opened: here a month after every
/// capture); likewise a WARC's `warcinfo` and `metadata` records are no captures. The MODS
/// dateCaptured start and end and the DC date state the captures only.
#[test]
fn r25_the_capture_range_holds_captures_only() {
    let tmp = tempfile::tempdir().unwrap();
    let page = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>hi</html>";
    // ARC: filedesc dated 2024-04-01, captures on 1 and 2 March, one record dated `-` (its
    // date is inferred from the one before, so it widens nothing either).
    let arc = tmp.path().join("LATE-20240401120000-00000.arc");
    let mut bytes = b"filedesc://LATE-20240401120000-00000.arc 0.0.0.0 20240401120000 text/plain 76\n1 0 test\nURL IP-address Archive-date Content-type Archive-length\n\n".to_vec();
    for (url, date) in [
        ("dns:e.org", "20240301100000"),
        ("http://e.org/", "20240301100001"),
        ("http://e.org/b", "20240302110000"),
        ("http://e.org/c", "-"),
    ] {
        let (mime, body): (&str, &[u8]) = if url.starts_with("dns:") {
            ("text/dns", b"e.org. 60 IN A 192.0.2.1")
        } else {
            ("text/html", page)
        };
        bytes.extend(format!("{url} 192.0.2.1 {date} {mime} {}\n", body.len()).as_bytes());
        bytes.extend(body);
        bytes.extend(b"\n");
    }
    std::fs::write(&arc, &bytes).unwrap();
    // WARC: a warcinfo and a metadata record dated after both responses.
    let warc = tmp.path().join("late.warc");
    let mut w = Vec::new();
    for (kind, uri, date, ctype, block) in [
        (
            "warcinfo",
            None,
            "2024-04-01T12:00:00Z",
            "application/warc-fields",
            &b"software: test\r\n"[..],
        ),
        (
            "response",
            Some("http://e.org/"),
            "2024-03-01T10:00:01Z",
            "application/http;msgtype=response",
            page,
        ),
        (
            "response",
            Some("http://e.org/b"),
            "2024-03-02T11:00:00Z",
            "application/http;msgtype=response",
            page,
        ),
        (
            "metadata",
            Some("http://e.org/b"),
            "2024-04-02T00:00:00Z",
            "application/warc-fields",
            b"via: x\r\n",
        ),
    ] {
        let n = w.len();
        w.extend(format!("WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{n:012}>\r\nWARC-Date: {date}\r\n").as_bytes());
        if let Some(u) = uri {
            w.extend(format!("WARC-Target-URI: {u}\r\n").as_bytes());
        }
        w.extend(
            format!("Content-Type: {ctype}\r\nContent-Length: {}\r\n\r\n", block.len()).as_bytes(),
        );
        w.extend(block);
        w.extend(b"\r\n\r\n");
    }
    std::fs::write(&warc, &w).unwrap();

    for (input, start, end) in [
        (&arc, "2024-03-01T10:00:00Z", "2024-03-02T11:00:00Z"),
        (&warc, "2024-03-01T10:00:01Z", "2024-03-02T11:00:00Z"),
    ] {
        let pkg = tmp.path().join(format!("pkg-{}", input.file_name().unwrap().to_str().unwrap()));
        let o = Package::new().quiet().run(&pkg, input);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
        let (mods, dc) = website_dmd(&mets);
        assert_eq!(values(mods, "mods:dateCaptured"), [start, end], "{input:?}: {mods}");
        assert!(mods.contains(&format!("point=\"end\">{end}<")), "{mods}");
        assert_eq!(values(dc, "dc:date"), ["2024-03-01"], "{input:?}: {dc}");
        for (section, text) in [("MODS", mods), ("DC", dc)] {
            assert!(
                !text.contains("2024-04"),
                "{input:?}: the {section} states a date no capture has: {text}"
            );
        }
        assert!(values(dc, "dc:coverage").iter().all(|c| !c.contains("2024-04")), "{dc}");
    }
}
