//! Deduplication of capture sources: two generated crawls of one site as NEDLIB harvests and
//! as Kulturarw3 archives (`gen_crawls.py --as`), the second packaged against the first. Each
//! unchanged payload becomes a revisit (warcio reads it pointing at its original in the first
//! package), the changed ones stay whole, and the second package, audited and undone with the
//! first, gives back every payload of the crawl packaged without deduplication.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use super::{follow, in_order, records, size, text};
use crate::util::{Package, oracle_python, package, repo, webaip};

/// The two crawls written as `shape`, and what the generator says of the second.
fn crawls_as(dir: &Path, shape: &str) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/dedup/gen_crawls.py"))
        .args([dir.to_str().unwrap(), "--as", shape])
        .output()
        .expect("the generator runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the generator's JSON")
}

/// The one content container of a capture package.
fn container(pkg: &Path) -> std::path::PathBuf {
    let mut found: Vec<_> = std::fs::read_dir(pkg.join("content"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.pop().unwrap()
}

fn second_crawl_against_first(shape: &str) {
    let dir = tempfile::tempdir().unwrap();
    let generated = crawls_as(dir.path(), shape);
    let (c1, c2) = (dir.path().join("crawl1"), dir.path().join("crawl2"));
    let (p1, p2, plain) = (dir.path().join("p1"), dir.path().join("p2"), dir.path().join("plain"));
    let first =
        package(Package::deterministic_json().args(&["--mode", "full"]), &p1, &[&c1]).report();
    let r = package(
        Package::deterministic_json().args(&[
            "--mode",
            "full",
            "--dedup-against",
            p1.to_str().unwrap(),
        ]),
        &p2,
        &[&c2],
    )
    .report();
    package(Package::deterministic_json(), &plain, &[&c2]).report();

    let unchanged = generated["unchanged"].as_array().unwrap();
    let d = &r["dedup"];
    assert_eq!(d["revisits"], unchanged.len() as u64, "{shape}: {d}");
    assert_eq!(d["payload_bytes"], generated["unchanged_bytes"], "{shape}");
    assert_eq!(d["depends_on"], serde_json::json!([first["objid"]]), "{shape}");
    assert!(d["bytes_saved"].is_null(), "{shape}: captures are compressed as written: {d}");
    // Random payloads do not compress: the container is smaller by about the unchanged bytes.
    let shrunk = size(&container(&plain)) - size(&container(&p2));
    let want = generated["unchanged_bytes"].as_u64().unwrap();
    assert!(shrunk > want * 95 / 100 && shrunk <= want, "{shape}: {shrunk} of {want}");

    // warcio: each unchanged payload is a revisit of its original in the first package (by
    // its old URL, for a moved one); every other capture is the same response as packaged
    // whole, and record ids, dates and HTTP headers are the same either way.
    let originals = records(&container(&p1));
    let moved: HashMap<&str, &str> =
        unchanged.iter().map(|u| (text(&u["new"]), text(&u["old"]))).collect();
    let deduped = records(&container(&p2));
    let whole = records(&container(&plain));
    assert_eq!(deduped.len(), whole.len(), "{shape}");
    for (uri, w) in &whole {
        let got = &deduped[uri];
        for k in ["WARC-Record-ID", "WARC-Date", "http_len", "status"] {
            assert_eq!(got[k], w[k], "{shape} {uri} {k}");
        }
        match moved.get(uri.as_str()) {
            Some(old) => {
                let o = &originals[*old];
                assert_eq!(text(&got["type"]), "revisit", "{shape} {uri}");
                assert_eq!(got["WARC-Payload-Digest"], w["payload_sha1"], "{shape} {uri}");
                assert_eq!(got["WARC-Refers-To"], o["WARC-Record-ID"], "{shape} {uri}");
                assert_eq!(got["WARC-Refers-To-Target-URI"], o["uri"], "{shape} {uri}");
                assert_eq!(got["WARC-Refers-To-Date"], o["WARC-Date"], "{shape} {uri}");
                assert_eq!(got["X-Webaip-Refers-To-Package"], first["objid"], "{shape} {uri}");
                assert_eq!(got["payload_len"], 0, "{shape} {uri}: no payload");
            }
            None => {
                assert_eq!(text(&got["type"]), "response", "{shape} {uri}");
                assert_eq!(got["payload_sha1"], w["payload_sha1"], "{shape} {uri}");
            }
        }
    }

    // The METS states where each payload lives, and the package is valid.
    let found = follow(&p2, &[&p1]);
    assert_eq!(found["revisits"], unchanged.len() as u64, "{shape}");
    assert_eq!(found["problems"], serde_json::json!([]), "{shape}");
    let (ok, why) = crate::mets_package::oracle_validate(&p2.join("METS.xml"));
    assert!(ok, "{shape}: {why}");

    // audit --with the first package resolves every revisit; undedup gives back every payload.
    let o = webaip(&["audit", "--json", "--with", p1.to_str().unwrap(), p2.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let refs = &v["packages"][0]["references"];
    assert_eq!(o.status.code(), Some(0), "{shape}: {refs:#}");
    assert_eq!(refs["resolved"], unchanged.len() as u64, "{shape}");
    let back = dir.path().join("back");
    let o = webaip(&[
        "undedup",
        p2.to_str().unwrap(),
        "--with",
        p1.to_str().unwrap(),
        "--out",
        back.to_str().unwrap(),
        "--",
        "--no-virus-check",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let restored = records(&container(&back));
    for (uri, w) in &whole {
        let b = &restored[uri];
        assert_eq!(text(&b["type"]), "response", "{shape} {uri}");
        assert_eq!(
            (&b["payload_sha1"], &b["payload_len"]),
            (&w["payload_sha1"], &w["payload_len"])
        );
    }
}

#[test]
fn a_second_nedlib_harvest_stores_only_what_changed() {
    second_crawl_against_first("nedlib");
}

#[test]
fn a_second_kulturarw3_crawl_stores_only_what_changed() {
    second_crawl_against_first("kulturarw3");
}

/// Both NEDLIB crawls in one harvest (two day folders), with `--dedup-within`: each payload
/// of the second day already written on the first is a revisit of that record, in the same
/// container, and the METS says where it was written.
#[test]
fn within_one_harvest_a_payload_seen_before_is_a_revisit() {
    let dir = tempfile::tempdir().unwrap();
    let generated = crawls_as(dir.path(), "nedlib");
    let both = dir.path().join("both");
    crate::util::copy_tree(&dir.path().join("crawl1"), &both);
    crate::util::copy_tree(&dir.path().join("crawl2"), &both);
    let q = dir.path().join("q");
    let r = package(
        Package::deterministic_json().args(&["--mode", "full", "--dedup-within"]),
        &q,
        &[&both],
    )
    .report();
    let unchanged = generated["unchanged"].as_array().unwrap().len() as u64;
    assert_eq!(r["dedup"]["revisits"], unchanged, "{:#}", r["dedup"]);
    assert_eq!(r["dedup"]["depends_on"], serde_json::json!([]));
    let recs = in_order(&container(&q));
    let by_id: HashMap<&str, &serde_json::Value> =
        recs.iter().map(|r| (text(&r["WARC-Record-ID"]), r)).collect();
    let mut revisits = 0;
    for (i, r) in recs.iter().enumerate().filter(|(_, r)| r["type"] == "revisit") {
        let o = by_id[text(&r["WARC-Refers-To"])];
        let at = recs.iter().position(|x| std::ptr::eq(x, o)).unwrap();
        assert!(at < i, "the original comes first");
        assert_eq!(o["payload_sha1"], r["WARC-Payload-Digest"]);
        assert_eq!(r["WARC-Refers-To-Target-URI"], o["uri"]);
        assert!(r["X-Webaip-Refers-To-Package"].is_null(), "this package's own");
        revisits += 1;
    }
    assert_eq!(revisits, unchanged);
    let within = follow(&q, &[]);
    assert_eq!(
        (&within["revisits"], &within["problems"]),
        (&unchanged.into(), &serde_json::json!([]))
    );
    let (ok, why) = crate::mets_package::oracle_validate(&q.join("METS.xml"));
    assert!(ok, "{why}");
}
