//! Deduplication (`package --dedup-against`): two generated crawls of one site
//! (`gen_crawls.py`, the second with 73 % of its payload bytes unchanged, some under new
//! URLs), packaged in turn. The second, deduplicated against the first, is smaller by the
//! unchanged payloads; warcio reads each revisit with the headers that point at the
//! original in the first package; the METS validates and names the first package; a digest
//! under another algorithm is no match.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use crate::util::{Package, oracle_python, package, repo};

mod arc;
mod arc_bounds;
mod captures;
mod hostile;
pub(crate) mod replay;

/// The two crawls, and what the generator says of the second.
pub(crate) fn crawls(dir: &Path) -> serde_json::Value {
    crawls_with(dir, &[])
}

/// [`crawls`] with the generator's further arguments.
pub(crate) fn crawls_with(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/dedup/gen_crawls.py"))
        .arg(dir)
        .args(args)
        .output()
        .expect("the generator runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the generator's JSON")
}

/// Every response and revisit of `warc` as warcio reads it, by URI.
fn records(warc: &Path) -> HashMap<String, serde_json::Value> {
    in_order(warc).into_iter().map(|r| (text(&r["uri"]).to_string(), r)).collect()
}

/// Every response and revisit of `warc` as warcio reads it, in order.
fn in_order(warc: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/dedup/revisits.py"))
        .arg(warc)
        .output()
        .expect("warcio runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .collect()
}

/// What `references.py` (lxml, zlib, warcio) finds following the METS of `pkg`.
fn follow(pkg: &Path, earlier: &[&Path]) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/dedup/references.py"))
        .arg(pkg)
        .args(earlier)
        .output()
        .expect("the reader runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("its JSON")
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).expect("the container").len()
}

fn text(v: &serde_json::Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The second crawl against the first: one revisit per unchanged payload (moved ones too),
/// each pointing at its original; the changed ones stored whole; the container smaller by
/// about the unchanged payload bytes; the METS valid, naming the first package.
#[test]
fn a_second_crawl_stores_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let generated = crawls(dir.path());
    let (c1, c2) =
        (dir.path().join("crawl1/crawl1.warc.gz"), dir.path().join("crawl2/crawl2.warc.gz"));
    let (p1, p2, plain) = (dir.path().join("p1"), dir.path().join("p2"), dir.path().join("plain"));
    let r1 = package(Package::deterministic_json(), &p1, &[&c1]).report();
    let r2 = package(
        Package::deterministic_json().args(&["--dedup-against", p1.to_str().unwrap()]),
        &p2,
        &[&c2],
    )
    .report();
    package(Package::deterministic_json(), &plain, &[&c2]).report();
    let unchanged = generated["unchanged"].as_array().unwrap();
    let unchanged_bytes = generated["unchanged_bytes"].as_u64().unwrap();
    let ratio = unchanged_bytes as f64 / generated["payload_bytes"].as_u64().unwrap() as f64;
    assert!((0.72..0.74).contains(&ratio), "the generator keeps 73 %: {ratio}");
    assert!(!generated["moved"].as_array().unwrap().is_empty(), "some move to new URLs");

    let d = &r2["dedup"];
    assert_eq!(d["revisits"], unchanged.len() as u64);
    assert_eq!(d["payload_bytes"], unchanged_bytes);
    assert_eq!(d["depends_on"], serde_json::json!([r1["objid"]]));
    let (small, whole) =
        (size(&p2.join("content/crawl2.warc.gz")), size(&plain.join("content/crawl2.warc.gz")));
    assert_eq!(whole - small, d["bytes_saved"].as_u64().unwrap(), "the report says what shrank");
    // Random payloads do not compress: the container shrinks by the payloads less the
    // revisit fields (a few hundred bytes each).
    assert!(whole - small > unchanged_bytes - 400 * unchanged.len() as u64, "{whole} - {small}");

    let first = records(&c1);
    let second = records(&p2.join("content/crawl2.warc.gz"));
    let plain_records = records(&plain.join("content/crawl2.warc.gz"));
    assert_eq!(second.len(), plain_records.len(), "no capture lost");
    let mut revisits = 0;
    for u in unchanged {
        let (old, new) = (text(&u["old"]), text(&u["new"]));
        let r = &second[new];
        let o = &first[old];
        assert_eq!(text(&r["type"]), "revisit", "{new}");
        revisits += 1;
        assert_eq!(
            text(&r["WARC-Profile"]),
            "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
        );
        assert_eq!(text(&r["WARC-Refers-To-Target-URI"]), old);
        assert_eq!(text(&r["WARC-Refers-To-Date"]), "2024-01-10T10:00:00Z");
        assert_eq!(r["WARC-Refers-To"], o["WARC-Record-ID"]);
        assert_eq!(text(&r["WARC-Refers-To-Container"]), "file://crawl1.warc.gz");
        assert_eq!(r["X-Webaip-Refers-To-Package"], r1["objid"]);
        assert_eq!(r["WARC-Payload-Digest"], o["payload_sha1"], "the original's payload");
        // The new capture's own record: its id, date and HTTP header kept, no payload.
        let whole = &plain_records[new];
        assert_eq!(r["WARC-Record-ID"], whole["WARC-Record-ID"]);
        assert_eq!(text(&r["WARC-Date"]), "2024-02-10T10:00:00Z");
        assert_eq!((&r["status"], &r["http_len"]), (&whole["status"], &whole["http_len"]));
        assert_eq!(
            r["Content-Length"].as_str().map(str::to_string),
            Some(r["http_len"].to_string())
        );
        assert_eq!(r["payload_len"], 0);
    }
    assert_eq!(revisits, unchanged.len());
    for (uri, r) in &second {
        if text(&r["type"]) == "response" {
            assert_eq!(r["payload_sha1"], plain_records[uri]["payload_sha1"], "{uri} whole");
        }
    }
    let mets = p2.join("METS.xml");
    let (ok, why) = crate::mets_package::oracle_validate(&mets);
    assert!(ok, "{why}");
    let text = std::fs::read_to_string(&mets).unwrap();
    let objid = r1["objid"].as_str().unwrap();
    assert!(text.contains(&format!(
        "<premis:relatedObjectIdentifierType>OBJID</premis:relatedObjectIdentifierType>\n                <premis:relatedObjectIdentifierValue>{objid}</premis:relatedObjectIdentifierValue>"
    )));
    assert!(text.contains("<premis:eventType>deduplication</premis:eventType>"));
}

/// Against a CDXJ index of the first crawl, the same revisits; the same index with each
/// digest's label changed to another algorithm (the same base32 text) matches nothing.
#[test]
fn a_digest_under_another_algorithm_is_no_match() {
    let dir = tempfile::tempdir().unwrap();
    crawls(dir.path());
    let c2 = dir.path().join("crawl2/crawl2.warc.gz");
    let indexer = repo().join(".venv/bin/cdxj-indexer");
    let out = Command::new(&indexer)
        .arg("crawl1.warc.gz")
        .current_dir(dir.path().join("crawl1"))
        .output()
        .expect("cdxj-indexer runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let index = String::from_utf8(out.stdout).unwrap();
    let (sha1, other) = (dir.path().join("sha1.cdxj"), dir.path().join("other.cdxj"));
    std::fs::write(&sha1, &index).unwrap();
    std::fs::write(&other, index.replace("\"sha1:", "\"sha256:")).unwrap();
    let r = package(
        Package::deterministic_json().args(&["--dedup-against", sha1.to_str().unwrap()]),
        &dir.path().join("a"),
        &[&c2],
    )
    .report();
    assert_eq!(r["dedup"]["revisits"], 43, "the generator's 73 %: 43 pages");
    assert_eq!(r["dedup"]["depends_on"], serde_json::json!([]), "an index names no package");
    let mets = std::fs::read_to_string(dir.path().join("a/METS.xml")).unwrap();
    assert!(mets.contains("43 in containers an index names"), "the event says where they are");
    assert!(!mets.contains("earlier records of this package"), "not this package's own");
    let r = package(
        Package::deterministic_json().args(&["--dedup-against", other.to_str().unwrap()]),
        &dir.path().join("b"),
        &[&c2],
    )
    .report();
    assert_eq!(r["dedup"]["revisits"], 0);
    assert_eq!(r["dedup"]["bytes_saved"], 0);
}

/// Within one run: the same payloads twice in a WARC (the crawl's records repeated), each
/// second one becomes a revisit of the first (its record id, URI, this package's own
/// container).
#[test]
fn within_a_run_the_second_copy_is_a_revisit() {
    let dir = tempfile::tempdir().unwrap();
    crawls(dir.path());
    let c1 = dir.path().join("crawl1/crawl1.warc.gz");
    let r = package(
        Package::deterministic_json().args(&["--dedup-within"]),
        &dir.path().join("p"),
        &[&c1],
    )
    .report();
    assert_eq!(r["dedup"]["revisits"], 0, "crawl1 has no payload twice");
    let twice = dir.path().join("twice.warc.gz");
    let mut bytes = std::fs::read(&c1).unwrap();
    bytes.extend(std::fs::read(&c1).unwrap());
    std::fs::write(&twice, bytes).unwrap();
    let r = package(
        Package::deterministic_json().args(&["--dedup-within"]),
        &dir.path().join("q"),
        &[&twice],
    )
    .report();
    assert_eq!(r["dedup"]["revisits"], 60);
    let recs = in_order(&dir.path().join("q/content/twice.warc.gz"));
    let (firsts, seconds) = recs.split_at(60);
    for (a, b) in firsts.iter().zip(seconds) {
        assert_eq!((text(&a["type"]), text(&b["type"])), ("response", "revisit"));
        assert_eq!(b["WARC-Refers-To"], a["WARC-Record-ID"]);
        assert_eq!(b["WARC-Refers-To-Target-URI"], a["uri"]);
        assert_eq!(text(&b["WARC-Refers-To-Container"]), "file://twice.warc.gz");
        assert!(b["X-Webaip-Refers-To-Package"].is_null(), "this package's own");
        assert_eq!(b["WARC-Payload-Digest"], a["payload_sha1"]);
    }
}

/// `undedup` with the first package: every revisit of the second is a full response again,
/// each payload byte-equal to the crawl packaged without deduplication; without the first
/// package it names the reference it cannot resolve.
#[test]
fn undedup_gives_back_the_payloads() {
    let dir = tempfile::tempdir().unwrap();
    crawls(dir.path());
    let (c1, c2) =
        (dir.path().join("crawl1/crawl1.warc.gz"), dir.path().join("crawl2/crawl2.warc.gz"));
    let (p1, p2, plain) = (dir.path().join("p1"), dir.path().join("p2"), dir.path().join("plain"));
    package(Package::deterministic_json(), &p1, &[&c1]).report();
    package(
        Package::deterministic_json().args(&["--dedup-against", p1.to_str().unwrap()]),
        &p2,
        &[&c2],
    )
    .report();
    package(Package::deterministic_json(), &plain, &[&c2]).report();
    let back = dir.path().join("back");
    let o = crate::util::webaip(&[
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
    let restored = records(&back.join("content/crawl2.warc.gz"));
    let whole = records(&plain.join("content/crawl2.warc.gz"));
    assert_eq!(restored.len(), whole.len());
    for (uri, r) in &whole {
        let b = &restored[uri];
        assert_eq!(text(&b["type"]), "response", "{uri}");
        assert_eq!(
            (&b["payload_sha1"], &b["payload_len"], &b["WARC-Record-ID"]),
            (&r["payload_sha1"], &r["payload_len"], &r["WARC-Record-ID"]),
            "{uri}"
        );
    }
    // Against a package that does not hold the originals: refused, naming the reference.
    let o = crate::util::webaip(&[
        "undedup",
        p2.to_str().unwrap(),
        "--with",
        plain.to_str().unwrap(),
        "--out",
        dir.path().join("none").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("which no package given holds"), "{err}");
    assert!(err.contains(" at offset "), "the revisit's place: {err}");
}

/// What the METS of each revisit states, followed by lxml, zlib and warcio
/// (`references.py`): every payload a revisit needs, against the earlier package and within
/// one run, is at the container and byte ranges its PREMIS object states, with its SHA-1 and
/// size, in the package it says it is included in; the METS stays valid. Minimal mode lists
/// no revisit (no reason to describe one).
#[test]
fn full_mode_states_where_each_referenced_payload_lives() {
    let dir = tempfile::tempdir().unwrap();
    let generated = crawls(dir.path());
    let (c1, c2) =
        (dir.path().join("crawl1/crawl1.warc.gz"), dir.path().join("crawl2/crawl2.warc.gz"));
    let (p1, p2) = (dir.path().join("p1"), dir.path().join("p2"));
    package(Package::deterministic_json().args(&["--mode", "full"]), &p1, &[&c1]).report();
    package(
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
    let unchanged = generated["unchanged"].as_array().unwrap().len() as u64;
    let found = follow(&p2, &[&p1]);
    assert_eq!(found["revisits"], unchanged, "one object per revisit");
    assert_eq!(found["problems"], serde_json::json!([]));
    // Without the earlier package, the reader cannot follow one: the objects name it.
    let alone = follow(&p2, &[]);
    assert_eq!(alone["problems"].as_array().unwrap().len() as u64, unchanged);
    let (ok, why) = crate::mets_package::oracle_validate(&p2.join("METS.xml"));
    assert!(ok, "{why}");
    // Only a bitstream a revisit requires is kept out of the comparison with its <file>:
    // without that relationship, the object is compared, and found to differ.
    let text = std::fs::read_to_string(p2.join("METS.xml")).unwrap();
    let is = "<premis:relationshipSubType>is required by</premis:relationshipSubType>";
    let edited = dir.path().join("edited.xml");
    std::fs::write(&edited, text.replacen(is, &is.replace("is required by", "is part of"), 1))
        .unwrap();
    let o = crate::util::webaip(&["validate", edited.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("error [P5.1] <file> SIZE"));

    let twice = dir.path().join("twice.warc.gz");
    let mut bytes = std::fs::read(&c1).unwrap();
    bytes.extend(std::fs::read(&c1).unwrap());
    std::fs::write(&twice, bytes).unwrap();
    let q = dir.path().join("q");
    package(
        Package::deterministic_json().args(&["--mode", "full", "--dedup-within"]),
        &q,
        &[&twice],
    )
    .report();
    let within = follow(&q, &[]);
    assert_eq!(within["revisits"], 60);
    assert_eq!(within["problems"], serde_json::json!([]));
    let (ok, why) = crate::mets_package::oracle_validate(&q.join("METS.xml"));
    assert!(ok, "{why}");

    let m = dir.path().join("m");
    package(
        Package::deterministic_json().args(&["--dedup-against", p1.to_str().unwrap()]),
        &m,
        &[&c2],
    )
    .report();
    assert_eq!(follow(&m, &[&p1])["revisits"], 0);
}
