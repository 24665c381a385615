//! PRONOM identification as a stage of `package` (issue 27): the PUIDs a package records,
//! read back by an independent reader (tests/oracle/identified_package.py: the METS through
//! ElementTree, each payload cut out of its container at the METS ranges) and compared with
//! siegfried's on the same bytes; what `--identify` records and leaves out; the verdict on the
//! declared type, web text types and empty payloads.

mod ahead;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::util::{
    Package, corpus, corpus_archives, gen_arc, oracle_python, package, repo, webaip,
};

#[derive(Debug, Deserialize)]
struct Oracle {
    siegfried: String,
    payloads: Vec<Payload>,
}

#[derive(Debug, Deserialize)]
struct Payload {
    id: String,
    uri: Option<String>,
    declared: String,
    puids: Vec<String>,
    unidentified: bool,
    text: Option<String>,
    contradiction: Option<String>,
    not_confirmed: Option<String>,
    basis: Vec<String>,
    sha512_ok: bool,
    decoding: Option<String>,
    siegfried: Vec<Match>,
}

#[derive(Debug, Deserialize)]
struct Match {
    id: String,
    basis: String,
}

/// The 2007 Heritrix ARC whose redacted payloads keep their harvested type: one declared
/// `image/jpeg` holds a line of text.
fn redacted_arc() -> PathBuf {
    corpus().join("arc/nas-3-3-20070119143010-00000-sb-test-har-001.statsbiblioteket.dk.arc")
}

fn oracle(pkg: &Path) -> Oracle {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/identified_package.py"))
        .arg(dir.path())
        .arg(pkg)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "identified_package.py failed (pygfried: scripts/setup-test-env.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the oracle prints JSON")
}

/// Packages `sources` with `--identify MODE` (deterministic, schemas checked): the report.
/// A corpus WARC with bad digests is kept with findings (exit 1); anything else must pass.
fn identified(out: &Path, sources: &[&Path], mode: &str) -> serde_json::Value {
    let opts = Package::new().deterministic().json().schemas().args(&["--identify", mode]);
    let run = package(opts, out, sources);
    let report = run.json();
    let findings = report["containers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["warc_findings"].as_u64().unwrap() > 0);
    assert_eq!(run.status(), Some(if findings { 1 } else { 0 }), "{report}");
    report
}

#[test]
fn every_corpus_payload_is_identified_as_siegfried_identifies_it() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    let sources = corpus_archives();
    let refs: Vec<&Path> = sources.iter().map(PathBuf::as_path).collect();
    let report = identified(&pkg, &refs, "all");
    let got = oracle(&pkg);

    // --identify all: every payload identified is described, at ranges that hold its bytes.
    let tally = &report["identification"];
    assert_eq!(got.payloads.len() as u64, tally["payloads"].as_u64().unwrap(), "{tally}");
    assert!(got.payloads.len() > 500, "{} payloads", got.payloads.len());
    assert!(got.payloads.iter().all(|p| p.sha512_ok), "a payload's bytes are not its digest");
    // One that matches nothing says so.
    for p in &got.payloads {
        assert_eq!(p.puids.is_empty(), p.unidentified, "{p:?}");
    }
    let unidentified = got.payloads.iter().filter(|p| p.unidentified).count() as u64;
    assert_eq!(unidentified, tally["unidentified"].as_u64().unwrap());

    // Where siegfried gives one PUID, webaip gives that one: by its byte signatures, or, for
    // text, by the same character classes (siegfried's "text match ASCII" is webaip's "first
    // bytes are ASCII text"), named plain text or the web text type the content supports.
    let (mut compared, mut agreed, mut by_text) = (0usize, 0usize, 0usize);
    let mut disagreements = Vec::new();
    for p in &got.payloads {
        let [m] = p.siegfried.as_slice() else { continue };
        // siegfried reads a content-encoded payload's coding (GZIP), webaip its content.
        if m.basis.contains("container") || p.decoding.is_some() {
            continue;
        }
        if m.id == "UNKNOWN" {
            // No PUID from siegfried: none from webaip either.
            assert!(p.unidentified && p.puids.is_empty(), "{p:?}");
            continue;
        }
        compared += 1;
        let text = m.basis.strip_prefix("text match ");
        by_text += usize::from(text.is_some());
        let same_puid = match text {
            Some(_) => p.puids.len() == 1 && WEB_TEXT.contains(&p.puids[0].as_str()),
            None => p.puids == [m.id.clone()],
        };
        if same_puid && p.text.as_deref() == text {
            agreed += 1;
        } else {
            disagreements.push(format!(
                "{}: siegfried {} ({}), METS {:?} (text {:?})",
                p.id, m.id, m.basis, p.puids, p.text
            ));
        }
    }
    eprintln!(
        "siegfried {}: {} payloads; {compared} given one PUID by siegfried ({by_text} of them \
         plain text by its characters), {agreed} the same in the METS",
        got.siegfried,
        got.payloads.len()
    );
    for d in &disagreements {
        eprintln!("  disagreement: {d}");
    }
    assert!(compared >= 400, "too few payloads compared ({compared})");
    assert!(agreed * 100 >= compared * 99, "{agreed} of {compared}:\n{}", disagreements.join("\n"));

    // Every match says its basis: a signature, or the text checks that ran.
    for p in got.payloads.iter().filter(|p| !p.puids.is_empty()) {
        let want = if p.text.is_some() { "text: " } else { "signature" };
        assert!(p.basis.iter().all(|b| b.starts_with(want)), "{p:?}");
    }

    // The redacted JPEG: both types; no signature matches, so not confirmed (not contradicted).
    let jpeg = got
        .payloads
        .iter()
        .find(|p| {
            p.uri.as_deref() == Some("http://www.familien-carlsen.dk/juleferie2005/DSCN3802.JPG")
        })
        .expect("the redacted JPEG is described");
    assert_eq!(jpeg.declared, "image/jpeg");
    assert_eq!(jpeg.puids, ["x-fmt/111"]);
    assert_eq!(jpeg.text.as_deref(), Some("ASCII"));
    assert_eq!(jpeg.contradiction, None);
    let c = jpeg.not_confirmed.as_deref().expect("not confirmed");
    assert!(c.starts_with("declared image/jpeg; none of the "), "{c}");

    // The package passes its checks, and metsrw reaches the event and its agent.
    let mets = pkg.join("METS.xml");
    let v = webaip(&["validate", mets.to_str().unwrap()]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // audit --deep: nothing amiss but the bad digests of the one corpus WARC that has them,
    // kept as received (the package declares them).
    let a = webaip(&["audit", "--deep", pkg.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(text.contains("0 METS findings, 0 inconsistencies"), "{text}");
    for line in text.lines().filter(|l| l.contains(": error ")) {
        assert!(line.contains("jwat-invalid-warcfile-digest-fields.warc"), "{line}");
    }
    let m = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_metsrw.py"))
        .arg(&mets)
        .output()
        .expect("python runs");
    assert!(m.status.success(), "metsrw: {}", String::from_utf8_lossy(&m.stderr));
    let seen: serde_json::Value = serde_json::from_slice(&m.stdout).unwrap();
    let events = seen["package_events"].as_array().unwrap();
    let n = events.iter().filter(|e| *e == "format identification").count();
    assert_eq!(n, 1, "{seen}");
}

#[test]
fn the_default_records_contradictions_and_none_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = redacted_arc();

    let described = tmp.path().join("described");
    let report = identified(&described, &[&arc], "described");
    let id = &report["identification"];
    assert!(id["method"].as_str().unwrap().contains("DROID signature file V"), "{id}");
    // The redacted payload declared image/jpeg matches no signature: not confirmed, which is
    // no reason to describe it.
    assert!(id["not_confirmed"].as_u64().unwrap() >= 1, "{id}");
    assert!(id["payloads"].as_u64().unwrap() > id["contradicted"].as_u64().unwrap());
    let got = oracle(&described);
    // Minimal METS: only what has a reason is described, and every contradiction is one.
    assert_eq!(
        got.payloads.iter().filter(|p| p.contradiction.is_some()).count() as u64,
        id["contradicted"].as_u64().unwrap()
    );
    assert!(got.payloads.iter().all(|p| p.contradiction.is_some()), "{:?}", got.payloads);
    let mets = std::fs::read_to_string(described.join("METS.xml")).unwrap();
    assert_eq!(
        mets.matches("/eventType/for\">format identification</premis:eventType>").count(),
        1
    );
    assert!(
        mets.contains("<premis:agentIdentifierValue>webaip-pronom</premis:agentIdentifierValue>")
    );
    let v = webaip(&["validate", described.join("METS.xml").to_str().unwrap()]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));

    let none = tmp.path().join("none");
    let report = identified(&none, &[&arc], "none");
    assert!(report["identification"].is_null(), "{report}");
    let mets = std::fs::read_to_string(none.join("METS.xml")).unwrap();
    assert!(!mets.contains("format identification"));
    assert!(!mets.contains("webaip-pronom"));
    assert!(!mets.contains("PRONOM signature"));
}

/// A 2004 crawl as a national library's ARC holds it (scripts/gen_arc.py redacted): 189 JPEG
/// URLs answered with a line of redaction text, declared `image/jpeg`, beside real JPEGs and
/// pages. No signature matches a redacted payload: its declared type is not confirmed (nothing
/// found is no proof), so the default describes none; `--identify all` describes each, as
/// plain text by the same character class siegfried gives, with why the type is not confirmed.
#[test]
fn a_2004_arc_with_189_redacted_jpegs_records_each_type_as_not_confirmed() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("IAH-20041012093000-00000-redacted.arc.gz");
    gen_arc("redacted", &arc, &[]);
    let pkg = tmp.path().join("pkg");
    let report = identified(&pkg, &[&arc], "described");
    let tally = &report["identification"];
    assert_eq!(tally["payloads"], 221, "{tally}");
    assert_eq!(tally["contradicted"], 0, "{tally}");
    assert_eq!(tally["not_confirmed"], 189, "{tally}");
    assert_eq!(tally["text"], 189, "{tally}");
    assert_eq!(tally["unidentified"], 0, "{tally}");
    assert!(oracle(&pkg).payloads.is_empty(), "nothing contradicted, nothing described");

    let all = tmp.path().join("all");
    identified(&all, &[&arc], "all");
    let got = oracle(&all);
    assert_eq!(got.payloads.len(), 221);
    let redacted: Vec<&Payload> =
        got.payloads.iter().filter(|p| p.not_confirmed.is_some()).collect();
    assert_eq!(redacted.len(), 189);
    assert!(got.payloads.iter().all(|p| p.contradiction.is_none()));
    let mut classes = std::collections::BTreeMap::new();
    for p in redacted {
        assert!(p.sha512_ok, "{p:?}");
        assert_eq!(p.declared, "image/jpeg", "{p:?}");
        assert_eq!(p.puids, ["x-fmt/111"], "{p:?}");
        let c = p.not_confirmed.as_deref().unwrap();
        assert!(c.starts_with("declared image/jpeg; none of the "), "{c}");
        // siegfried, on the bytes the METS ranges cut out, says the same class.
        let [m] = p.siegfried.as_slice() else { panic!("{p:?}") };
        assert_eq!(
            (m.id.as_str(), m.basis.strip_prefix("text match ")),
            ("x-fmt/111", p.text.as_deref())
        );
        *classes.entry(p.text.clone().unwrap()).or_insert(0) += 1;
    }
    // The generator's Danish notices are ISO-8859-1: a class of their own.
    assert_eq!(classes.len(), 2, "{classes:?}");
    let v = webaip(&["validate", all.join("METS.xml").to_str().unwrap()]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}

/// The PUIDs webaip names a text payload by its content (`formats::webtext`).
pub const WEB_TEXT: [&str; 10] = [
    "x-fmt/111",
    "fmt/96",
    "x-fmt/224",
    "x-fmt/423",
    "fmt/817",
    "fmt/101",
    "fmt/1776",
    "fmt/91",
    "fmt/92",
    "fmt/413",
];

/// One uncompressed WARC response record of `uri`, its payload `body` declared `mime`.
fn response(uri: &str, mime: &str, body: &[u8]) -> Vec<u8> {
    encoded_response(uri, mime, "", body)
}

/// [`response`] with a `Content-Encoding: coding` field unless `coding` is empty.
fn encoded_response(uri: &str, mime: &str, coding: &str, body: &[u8]) -> Vec<u8> {
    let field = match coding {
        "" => String::new(),
        c => format!("Content-Encoding: {c}\r\n"),
    };
    let http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {mime}\r\n{field}Content-Length: {}\r\n\r\n",
        body.len()
    );
    let block = [http.as_bytes(), body].concat();
    let head = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{}>\r\nWARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Target-URI: {uri}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        uuid::Uuid::new_v4(),
        block.len()
    );
    [head.as_bytes(), &block, b"\r\n\r\n"].concat()
}

/// A WARC the test builds: an empty payload, CSS, JavaScript and JSON without a file name, a
/// GIF declared as a PNG and bytes no signature matches declared as a PNG. Packaged with
/// `--identify all`: the empty payload is counted (report and event), each text payload named
/// with its basis, the GIF contradicts its type, the other PNG is only not confirmed, and the
/// METS passes the schema oracle.
#[test]
fn web_text_an_empty_payload_and_each_verdict_in_a_built_warc() {
    let tmp = tempfile::tempdir().unwrap();
    let gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
    let records = [
        response("http://e.org/empty", "image/png", b""),
        response("http://e.org/s?v=1", "text/css", b"body { margin: 0 }\n"),
        response("http://e.org/j?v=1", "application/javascript", b"var a = 1;\n"),
        response("http://e.org/api", "application/json", b"{\"a\": [1, 2]}"),
        response("http://e.org/gif", "image/png", gif),
        response("http://e.org/png", "image/png", b"\x00\x01\x02\x03 no PNG"),
    ];
    let warc = tmp.path().join("built.warc");
    std::fs::write(&warc, records.concat()).unwrap();
    let pkg = tmp.path().join("pkg");
    let report = identified(&pkg, &[&warc], "all");
    let tally = &report["identification"];
    assert_eq!(tally["payloads"], 5, "{tally}");
    assert_eq!(tally["empty"], 1, "{tally}");
    assert_eq!(tally["contradicted"], 1, "{tally}");
    assert_eq!(tally["not_confirmed"], 1, "{tally}");
    assert_eq!(tally["text"], 3, "{tally}");
    let summary = tally["summary"].as_str().unwrap();
    assert!(summary.contains("1 empty payload(s) (0 bytes) counted, not identified"), "{summary}");

    let got = oracle(&pkg);
    let by_uri = |u: &str| {
        got.payloads.iter().find(|p| p.uri.as_deref() == Some(u)).unwrap_or_else(|| panic!("{u}"))
    };
    for (uri, puid, checks) in [
        ("http://e.org/s?v=1", "x-fmt/224", "CSS syntax seen in the first 4096 bytes"),
        ("http://e.org/j?v=1", "x-fmt/423", "JavaScript syntax seen in the first 4096 bytes"),
        ("http://e.org/api", "fmt/817", "parses whole as JSON (13 bytes)"),
    ] {
        let p = by_uri(uri);
        assert_eq!(p.puids, [puid], "{p:?}");
        let [basis] = p.basis.as_slice() else { panic!("{p:?}") };
        assert!(basis.starts_with(&format!("text: declared {} consistent", p.declared)), "{basis}");
        assert!(basis.contains(checks), "{basis}");
        assert_eq!((&p.contradiction, &p.not_confirmed), (&None, &None), "{p:?}");
    }
    let c = by_uri("http://e.org/gif").contradiction.clone().expect("contradicted");
    assert!(c.starts_with("declared image/png; the bytes match fmt/4"), "{c}");
    let png = by_uri("http://e.org/png");
    assert!(png.contradiction.is_none() && png.not_confirmed.is_some(), "{png:?}");

    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    assert!(text.contains("1 empty payload(s) (0 bytes) counted, not identified"));
    let (ok, why) = crate::mets_package::oracle_validate(&mets);
    assert!(ok, "validate-mets: {why}");
}

/// An HTML page gzip-encoded, whole and cut short mid-stream.
fn gzipped_page() -> (Vec<u8>, Vec<u8>) {
    use std::io::Write;
    let rows: String = (0..4000).map(|i| format!("<p>Row {i} of the page.</p>\n")).collect();
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>t</title></head><body>\n{rows}</body></html>\n"
    );
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(page.as_bytes()).unwrap();
    let whole = e.finish().unwrap();
    let cut = whole[..whole.len() / 2].to_vec();
    (whole, cut)
}

/// A WARC the test builds with HTML pages sent gzip-encoded (one cut short) and one sent
/// br-encoded (bytes webaip does not decode). Packaged with `--identify all` and through
/// `webaip identify --json`, both say the same: the gzip pages are HTML, identified after
/// undoing the coding (the cut one says where decoding stopped), consistent with text/html;
/// the br one is not confirmed, because of its coding, never contradicted.
#[test]
fn content_encoded_payloads_are_identified_by_their_decoded_content() {
    let tmp = tempfile::tempdir().unwrap();
    let (gzipped, cut) = gzipped_page();
    let records = [
        encoded_response("http://e.org/gz", "text/html; charset=utf-8", "gzip", &gzipped),
        encoded_response("http://e.org/cut", "text/html", "x-gzip", &cut),
        encoded_response("http://e.org/br", "text/html", "br", b"\x1b\x2f\x00\xf8 fake br"),
    ];
    let warc = tmp.path().join("encoded.warc");
    std::fs::write(&warc, records.concat()).unwrap();

    let pkg = tmp.path().join("pkg");
    let tally = identified(&pkg, &[&warc], "all")["identification"].clone();
    assert_eq!(
        (&tally["contradicted"], &tally["not_confirmed"]),
        (&0.into(), &1.into()),
        "{tally}"
    );
    let got = oracle(&pkg);
    let by_uri = |u: &str| {
        got.payloads.iter().find(|p| p.uri.as_deref() == Some(u)).unwrap_or_else(|| panic!("{u}"))
    };
    for uri in ["http://e.org/gz", "http://e.org/cut"] {
        let p = by_uri(uri);
        // HTML 5 by its DOCTYPE, by signature.
        assert_eq!(p.puids, ["fmt/471"], "{p:?}");
        assert_eq!((&p.contradiction, &p.not_confirmed), (&None, &None), "{p:?}");
        let d = p.decoding.as_deref().unwrap_or_default();
        assert!(
            d.starts_with("identified after undoing its ") && d.ends_with("Content-Encoding"),
            "{p:?}"
        );
    }
    let br = by_uri("http://e.org/br");
    assert!(br.puids.is_empty() && br.contradiction.is_none(), "{br:?}");
    let why = br.not_confirmed.as_deref().unwrap_or_default();
    assert!(why.contains("content-encoded with br, which webaip does not undo"), "{br:?}");
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    assert!(mets.contains("; the decoding failed after "), "the cut page says so");

    // `webaip identify` on the same WARC decides the same way.
    let o = webaip(&["identify", "--json", warc.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let items = v["items"].as_array().unwrap();
    let item = |u: &str| items.iter().find(|i| i["uri"] == u).unwrap_or_else(|| panic!("{u}: {v}"));
    for uri in ["http://e.org/gz", "http://e.org/cut"] {
        let i = item(uri);
        assert_eq!(i["matches"][0]["id"], "fmt/471", "{i}");
        assert_eq!(i["verdict"], "consistent", "{i}");
        // siegfried's words in basis; how the content was reached in warning.
        assert_eq!(i["matches"][0]["basis"], "byte match", "{i}");
        let warning = i["matches"][0]["warning"].as_str().unwrap();
        assert!(warning.contains("Content-Encoding"), "{i}");
    }
    assert!(
        item("http://e.org/cut")["matches"][0]["warning"]
            .as_str()
            .unwrap()
            .contains("decoding failed")
    );
    let br = item("http://e.org/br");
    assert_eq!(br["matches"][0]["id"], "UNKNOWN", "{br}");
    let verdict = br["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("not confirmed: ") && verdict.contains("content-encoded with br"),
        "{br}"
    );
}

/// The corpus's warcio example serves its page gzip-encoded: identified as the HTML it
/// decodes to, by `webaip identify`, not as a GZIP contradicting `text/html`.
#[test]
fn the_warcio_example_page_is_not_contradicted_by_its_gzip_coding() {
    let warc = corpus().join("warc/warcio-example.warc.gz");
    let o = webaip(&["identify", "--json", warc.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let items = v["items"].as_array().unwrap();
    let decoded: Vec<&serde_json::Value> = items
        .iter()
        .filter(|i| {
            i["matches"][0]["warning"].as_str().is_some_and(|b| b.contains("gzip Content-Encoding"))
        })
        .collect();
    assert!(!decoded.is_empty(), "{v}");
    for i in decoded {
        let format = i["matches"][0]["format"].as_str().unwrap();
        assert_eq!(format, "Hypertext Markup Language", "{i}");
        assert_eq!(i["verdict"], "consistent", "{i}");
    }
    assert!(
        items.iter().all(|i| !i["verdict"].as_str().unwrap_or("").starts_with("contradicted")),
        "{v}"
    );
}
