//! The deduplicated crawl in use: packaged with `--index` beside each package, the second
//! crawl deduplicated against the first replays in pywb (from webaip's two index files and the
//! two packages' containers) with the same status and body, capture for capture, as the crawl
//! packaged whole, from CDXJ files and from ZipNum indexes alike; `audit --with` the first package resolves every revisit, and names every
//! one once the first package's container is gone.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{Package, oracle_python, package, repo, webaip};

/// pywb's answer for each capture (tests/replay/pywb_replay.py), by URL.
pub(crate) fn replay(
    index: &Path,
    archives: &[&Path],
    captures: &[(String, String)],
) -> std::collections::BTreeMap<String, serde_json::Value> {
    replay_lines(index, archives, &serde_json::json!(captures))
        .into_iter()
        .map(|v| (v["url"].as_str().unwrap().to_string(), v))
        .collect()
}

/// pywb's answer for each capture, in order: `captures` is a JSON list of
/// `[TIMESTAMP, URL]`, or `[TIMESTAMP, URL, METHOD, BODY, CONTENT-TYPE]` to send a body.
pub(crate) fn replay_lines(
    index: &Path,
    archives: &[&Path],
    captures: &serde_json::Value,
) -> Vec<serde_json::Value> {
    let req = serde_json::json!({
        "index": index, "archive_paths": archives, "captures": captures,
    });
    let mut child = Command::new(oracle_python())
        .arg(repo().join("tests/replay/pywb_replay.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    child.stdin.take().unwrap().write_all(req.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .collect()
}

#[test]
fn a_deduplicated_crawl_replays_and_audits_with_the_earlier_package() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let generated = super::crawls(d);
    let (c1, c2) = (d.join("crawl1/crawl1.warc.gz"), d.join("crawl2/crawl2.warc.gz"));
    let (p1, p2, plain) = (d.join("p1"), d.join("p2"), d.join("plain"));
    let (dedup_indexes, plain_indexes) = (d.join("indexes"), d.join("plain-index"));
    std::fs::create_dir(&dedup_indexes).unwrap();
    std::fs::create_dir(&plain_indexes).unwrap();
    let indexed =
        |index: &Path| Package::deterministic_json().args(&["--index", index.to_str().unwrap()]);
    package(indexed(&dedup_indexes.join("p1.cdxj")), &p1, &[&c1]).report();
    let against = ["--dedup-against", p1.to_str().unwrap()];
    let r2 = package(indexed(&dedup_indexes.join("p2.cdxj")).args(&against), &p2, &[&c2]).report();
    package(indexed(&plain_indexes.join("plain.cdxj")), &plain, &[&c2]).report();
    let revisits = r2["dedup"]["revisits"].as_u64().unwrap();
    assert_eq!(revisits, generated["unchanged"].as_array().unwrap().len() as u64);

    // Every capture of the second crawl, as its index names it.
    let lines = std::fs::read_to_string(dedup_indexes.join("p2.cdxj")).unwrap();
    let captures: Vec<(String, String)> =
        lines.lines().map(crate::util::CdxjLine::parse).map(|e| (e.timestamp, e.url)).collect();
    let revisit_lines = lines.lines().filter(|l| l.contains("\"warc/revisit\"")).count();
    assert_eq!(revisit_lines as u64, revisits, "each revisit is in the index");
    let dedup = replay(&dedup_indexes, &[&p1, &p2], &captures);
    let whole = replay(&plain_indexes, &[&plain], &captures);
    assert_eq!(dedup.len(), captures.len());
    for (url, got) in &dedup {
        let want = &whole[url];
        assert_eq!(got["status"], 200, "{url}: {got}");
        assert_eq!((&got["status"], &got["sha256"]), (&want["status"], &want["sha256"]), "{url}");
    }

    // The same from ZipNum indexes, one per package in one folder (blocks of 7 lines: several
    // blocks each), as pywb's collection index: the whole app serves every capture the same.
    let zipnum = d.join("zipnum");
    std::fs::create_dir(&zipnum).unwrap();
    for (name, p) in [("p1", &p1), ("p2", &p2)] {
        let out = zipnum.join(name);
        let o = webaip(&[
            "index",
            "-q",
            "--format",
            "zipnum",
            "--zipnum-lines",
            "7",
            "-o",
            out.to_str().unwrap(),
            p.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let blocks = std::fs::read_to_string(zipnum.join("p2.idx")).unwrap().lines().count();
    assert!(blocks > 3, "several blocks: {blocks}");
    let from_zipnum = replay(&zipnum, &[&p1, &p2], &captures);
    assert_eq!(from_zipnum, dedup, "ZipNum serves what CDXJ serves");

    // `get` of a revisit gives its original's payload, found through the first package's
    // index: the bytes of the crawl packaged whole; without that index, an error naming it.
    let (i1, i2) = (dedup_indexes.join("p1.cdxj"), dedup_indexes.join("p2.cdxj"));
    let plain_index = plain_indexes.join("plain.cdxj");
    let mut followed = 0;
    for line in lines.lines().filter(|l| l.contains("\"warc/revisit\"")) {
        let e = crate::util::CdxjLine::parse(line);
        let get = |indexes: &[(&Path, &Path)]| {
            let mut argv = vec!["get", "-q", &e.url, "--at", &e.timestamp];
            for (i, p) in indexes {
                argv.extend(["--index", i.to_str().unwrap(), "--package", p.to_str().unwrap()]);
            }
            webaip(&argv)
        };
        let (got, want) = (get(&[(&i2, &p2), (&i1, &p1)]), get(&[(&plain_index, &plain)]));
        assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
        assert_eq!(want.status.code(), Some(0), "{}", String::from_utf8_lossy(&want.stderr));
        assert!(!want.stdout.is_empty());
        assert_eq!(got.stdout, want.stdout, "{}: the original's payload", e.url);
        let alone = get(&[(&i2, &p2)]);
        let why = String::from_utf8_lossy(&alone.stderr);
        assert_eq!(alone.status.code(), Some(2), "{why}");
        assert!(alone.stdout.is_empty() && why.contains("is in none of the indexes"), "{why}");
        followed += 1;
    }
    assert_eq!(followed, revisits);

    // The references resolve against the first package, and break without its container.
    let audit = |args: &[&str]| {
        let mut argv = vec!["audit", "--json"];
        argv.extend_from_slice(args);
        let o = webaip(&argv);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code().unwrap(), v["packages"][0]["references"].clone())
    };
    let (code, refs) = audit(&["--with", p1.to_str().unwrap(), p2.to_str().unwrap()]);
    assert_eq!((code, &refs["resolved"]), (0, &serde_json::json!(revisits)), "{refs:#}");
    // The fault is the first package's (its container is gone), not the second's: named in
    // each unresolved reference, and no damage of the package audited.
    std::fs::remove_file(p1.join("content/crawl1.warc.gz")).unwrap();
    let (code, refs) = audit(&["--with", p1.to_str().unwrap(), p2.to_str().unwrap()]);
    assert_eq!(code, 0, "{refs:#}");
    let unresolved = refs["unresolved"].as_array().unwrap();
    assert_eq!(unresolved.len() as u64, revisits, "every broken reference is named");
    assert!(unresolved.iter().all(|u| u["file"] == "content/crawl2.warc.gz"
        && u["offset"].is_u64()
        && u["fault_in"].as_str().is_some_and(|f| f.contains("crawl1.warc.gz"))));
}
