//! Deduplicated ARC collections keep the way back: two generated crawls of one site as ARC
//! files (`gen_crawls.py --as arc`, 70 % of the second's payload bytes unchanged, some under
//! new URLs), the second packaged against the first. Its unchanged payloads become revisits
//! (read by warcio), its container shrinks by them, its METS validates, and every ARC of both
//! comes back byte for byte with `unmigrate --with`; without it, unmigrate names the package
//! it needs and writes nothing. A `--with` package holding another payload, or none, stops
//! the rebuild naming it; the container made whole again by `undedup` gives the ARC back alone.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{crawls_with, in_order, records, size, text};
use crate::util::{Package, json, oracle_python, package, webaip};

/// The two ARC crawls (70 % unchanged), each packaged: the first alone, the second against
/// it; and what the generator says.
struct Packaged {
    dir: tempfile::TempDir,
    generated: serde_json::Value,
    arcs: [PathBuf; 2],
    p1: PathBuf,
    p2: PathBuf,
    r1: serde_json::Value,
    r2: serde_json::Value,
}

fn arc_in(dir: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

fn packaged() -> Packaged {
    let dir = tempfile::tempdir().unwrap();
    let generated = crawls_with(dir.path(), &["--as", "arc", "--unchanged", "0.70"]);
    let arcs = [arc_in(&dir.path().join("crawl1")), arc_in(&dir.path().join("crawl2"))];
    let (p1, p2) = (dir.path().join("p1"), dir.path().join("p2"));
    let r1 = package(Package::deterministic_json(), &p1, &[&arcs[0]]).report();
    let against = Package::deterministic_json().args(&["--dedup-against", p1.to_str().unwrap()]);
    let r2 = package(against, &p2, &[&arcs[1]]).report();
    Packaged { dir, generated, arcs, p1, p2, r1, r2 }
}

/// The record id the first revisit of the container at `warc` refers to (its original's).
fn first_revisits_original(warc: &Path) -> String {
    let revisit = in_order(warc).into_iter().find(|r| r["type"] == "revisit").expect("a revisit");
    text(&revisit["WARC-Refers-To"]).to_string()
}

/// The findings of an audit report that are errors.
fn error_findings(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    let findings = report["findings"].as_array().unwrap().iter();
    findings.filter(|f| f["severity"] == "error").collect()
}

fn container(pkg: &Path) -> PathBuf {
    arc_in(&pkg.join("content"))
}

/// `webaip unmigrate` of `pkg` into `out` with these `--with` packages.
fn unmigrate(pkg: &Path, out: &Path, with: &[&Path]) -> std::process::Output {
    let mut args = vec!["unmigrate", "-q", "-o", out.to_str().unwrap(), pkg.to_str().unwrap()];
    for w in with {
        args.extend(["--with", w.to_str().unwrap()]);
    }
    webaip(&args)
}

fn files(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(d) => d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_deduplicated_arc_crawl_comes_back_byte_for_byte() {
    let k = packaged();
    let unchanged = k.generated["unchanged"].as_array().unwrap();
    let unchanged_bytes = k.generated["unchanged_bytes"].as_u64().unwrap();
    let ratio = unchanged_bytes as f64 / k.generated["payload_bytes"].as_u64().unwrap() as f64;
    assert!((0.69..0.71).contains(&ratio), "70 % unchanged: {ratio}");
    assert!(!k.generated["moved"].as_array().unwrap().is_empty(), "some move to new URLs");

    let d = &k.r2["dedup"];
    assert_eq!(d["revisits"], unchanged.len() as u64, "{d}");
    assert_eq!(d["payload_bytes"], unchanged_bytes);
    assert_eq!(d["depends_on"], serde_json::json!([k.r1["objid"]]));
    // Against the second crawl packaged without deduplication.
    let plain = k.dir.path().join("plain");
    package(Package::deterministic_json(), &plain, &[&k.arcs[1]]).report();
    let (whole, small) = (size(&container(&plain)), size(&container(&k.p2)));
    let saved = whole as f64 - small as f64;
    assert!(
        saved >= 0.95 * unchanged_bytes as f64,
        "{whole} - {small} < 95 % of {unchanged_bytes}"
    );

    // warcio reads every revisit: the original's record, digest and package, no payload.
    let first = records(&container(&k.p1));
    let second = records(&container(&k.p2));
    for u in unchanged {
        let (old, new) = (text(&u["old"]), text(&u["new"]));
        let (r, o) = (&second[new], &first[old]);
        assert_eq!(text(&r["type"]), "revisit", "{new}");
        assert_eq!(r["WARC-Refers-To"], o["WARC-Record-ID"], "{new}");
        assert_eq!(text(&r["WARC-Refers-To-Target-URI"]), old);
        assert_eq!(r["X-Webaip-Refers-To-Package"], k.r1["objid"]);
        assert_eq!(r["WARC-Payload-Digest"], o["payload_sha1"], "the original's payload");
        assert_eq!(r["payload_len"], 0);
    }
    let revisits = in_order(&container(&k.p2)).iter().filter(|r| r["type"] == "revisit").count();
    assert_eq!(revisits, unchanged.len());
    let (ok, why) = crate::mets_package::oracle_validate(&k.p2.join("METS.xml"));
    assert!(ok, "{why}");

    // The migration event and record name the package the ARC needs, claiming no rebuild
    // from the container alone.
    let objid = k.r1["objid"].as_str().unwrap();
    let mets = std::fs::read_to_string(k.p2.join("METS.xml")).unwrap();
    assert!(!mets.contains("rebuildable from the container"), "claims the container suffices");
    let with =
        format!("rebuildable byte for byte with package(s) {objid} (webaip unmigrate --with)");
    assert!(mets.contains(&with), "the migration event names {objid}");
    let logs = k.p2.join("logs/webaip");
    let log = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".migration.json"))
        .expect("the migration record");
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(log).unwrap()).unwrap();
    assert_eq!(log["rebuild"]["requires_packages"], serde_json::json!([objid]), "{log:#}");

    // Without the first package: refused, naming it, nothing written.
    let out = k.dir.path().join("out");
    let o = unmigrate(&k.p2, &out, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr.contains(objid) && stderr.contains("--with"), "{stderr}");
    assert_eq!(files(&out), Vec::<String>::new(), "nothing written");

    // With it, both crawls come back byte for byte.
    assert!(unmigrate(&k.p1, &out, &[]).status.success());
    let o = unmigrate(&k.p2, &out, &[&k.p1]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for arc in &k.arcs {
        let back = std::fs::read(out.join(arc.file_name().unwrap())).unwrap();
        assert!(back == std::fs::read(arc).unwrap(), "{} differs", arc.display());
    }

    // The audit rebuilds and checks them: intact with the first package, not without it.
    let (p1, p2) = (k.p1.to_str().unwrap(), k.p2.to_str().unwrap());
    let o = webaip(&["audit", "--json", "--deep", "--rebuild-arcs", "--with", p1, p2]);
    let r = &json(&o)["packages"][0];
    assert_eq!(r["verdict"], "intact", "{r:#}");
    assert_eq!(
        (&r["arc_rebuilds"]["rebuilt"], &r["arc_rebuilds"]["as_stated"]),
        (&1.into(), &1.into())
    );
    let o = webaip(&["audit", "--json", "--deep", "--rebuild-arcs", p2]);
    let r = &json(&o)["packages"][0];
    assert_ne!(r["verdict"], "intact", "{r:#}");
    let said = r["unchecked"]
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["kind"] == "arc_payload_elsewhere" && text(&u["reason"]).contains(objid));
    assert!(said, "{r:#}");
}

/// Against an index of the first package (a CDXJ with record ids, or one without them), no
/// ARC record becomes a revisit: the index names no package, so its payload could not be found
/// again. The second ARC's records stay whole, and it comes back alone.
#[test]
fn an_index_match_leaves_an_arc_record_whole() {
    let k = packaged();
    let cdxj = k.dir.path().join("p1.cdxj");
    let o =
        webaip(&["index", "--record-ids", "-o", cdxj.to_str().unwrap(), k.p1.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = std::fs::read_to_string(&cdxj).unwrap();
    assert!(lines.contains("\"recordId\""), "the index names record ids");
    let bare = k.dir.path().join("bare.cdxj");
    let stripped: String = lines
        .lines()
        .map(|l| {
            let Some(at) = l.find(", \"recordId\": \"") else { return format!("{l}\n") };
            let end = at + l[at + 15..].find('"').unwrap() + 16;
            format!("{}{}\n", &l[..at], &l[end..])
        })
        .collect();
    assert!(!stripped.contains("recordId"));
    std::fs::write(&bare, stripped).unwrap();
    for index in [&cdxj, &bare] {
        let name = index.file_stem().unwrap().to_str().unwrap();
        let p2 = k.dir.path().join(format!("p2-{name}"));
        let against =
            Package::deterministic_json().args(&["--dedup-against", index.to_str().unwrap()]);
        let r2 = package(against, &p2, &[&k.arcs[1]]).report();
        assert_eq!(r2["dedup"]["revisits"].as_u64().unwrap_or(0), 0, "{name}: {}", r2["dedup"]);
        let revisits = in_order(&container(&p2)).iter().filter(|r| r["type"] == "revisit").count();
        assert_eq!(revisits, 0, "{name}");
        let out = k.dir.path().join(format!("out-{name}"));
        let o = unmigrate(&p2, &out, &[]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let back = std::fs::read(out.join(k.arcs[1].file_name().unwrap())).unwrap();
        assert!(back == std::fs::read(&k.arcs[1]).unwrap(), "{name}: the ARC differs");
    }

    // Beside the package, the index (whose entries cannot make ARC revisits) changes nothing,
    // whichever source comes first, or merged with it in one table: the same container as
    // against the package alone.
    let table = k.dir.path().join("t.digests");
    let (t, i, p1) = (table.to_str().unwrap(), cdxj.to_str().unwrap(), k.p1.to_str().unwrap());
    let o = webaip(&["dedup-table", "-q", "-o", t, i, p1]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let alone = std::fs::read(container(&k.p2)).unwrap();
    for (name, sources) in [("index-first", [i, p1]), ("package-first", [p1, i]), ("table", [t, t])]
    {
        let p2 = k.dir.path().join(format!("p2-{name}"));
        let against = ["--dedup-against", sources[0], "--dedup-against", sources[1]];
        let r2 = package(Package::deterministic_json().args(&against), &p2, &[&k.arcs[1]]).report();
        assert_eq!(r2["dedup"]["revisits"], k.r2["dedup"]["revisits"], "{name}: {}", r2["dedup"]);
        assert!(std::fs::read(container(&p2)).unwrap() == alone, "{name}: another container");
    }
}

/// Unmigrate needs only the packages the ARCs' own revisits name: a package whose ARC is
/// whole and whose copied WARC has revisits of another package gives its ARC back alone; and a
/// package given as an input holds originals as a `--with` one does.
#[test]
fn unmigrate_needs_only_the_packages_the_arcs_refer_to() {
    let k = packaged();
    // Two WARC crawls of other payloads (another seed): the second WARC, packaged with the
    // first ARC against the first WARC, has revisits; the ARC has none.
    let w = k.dir.path().join("w");
    crawls_with(&w, &["--seed", "7"]);
    let (w1, w2) = (arc_in(&w.join("crawl1")), arc_in(&w.join("crawl2")));
    let pw = k.dir.path().join("pw");
    package(Package::deterministic_json(), &pw, &[&w1]).report();
    let p3 = k.dir.path().join("p3");
    let against = Package::deterministic_json().args(&["--dedup-against", pw.to_str().unwrap()]);
    let r3 = package(against, &p3, &[&k.arcs[0], &w2]).report();
    assert!(r3["dedup"]["revisits"].as_u64().unwrap() > 0, "{}", r3["dedup"]);
    let out = k.dir.path().join("out3");
    let o = unmigrate(&p3, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = std::fs::read(out.join(k.arcs[0].file_name().unwrap())).unwrap();
    assert!(back == std::fs::read(&k.arcs[0]).unwrap(), "the ARC differs");

    // Both packages as inputs: the second's originals are in the first.
    let out = k.dir.path().join("both");
    let (p1, p2) = (k.p1.to_str().unwrap(), k.p2.to_str().unwrap());
    let o = webaip(&["unmigrate", "-q", "-o", out.to_str().unwrap(), p1, p2]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for arc in &k.arcs {
        let back = std::fs::read(out.join(arc.file_name().unwrap())).unwrap();
        assert!(back == std::fs::read(arc).unwrap(), "{} differs", arc.display());
    }
}

/// An ARC-deduplicated submission is admitted by ingest (its own bytes are whole; what its
/// ARCs need from other packages is stated, not damage), and its AIP keeps the way back: the
/// METS still names the package the ARC needs, and the ARC comes back with it.
#[test]
fn an_arc_deduplicated_submission_becomes_an_aip_that_keeps_the_way_back() {
    let k = packaged();
    let aips = k.dir.path().join("aips");
    let (p2, out) = (k.p2.to_str().unwrap(), aips.to_str().unwrap());
    let o = webaip(&["ingest", "--quiet", p2, "--out", out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let aip = aips.join(k.p2.file_name().unwrap());
    let objid = k.r1["objid"].as_str().unwrap();
    let mets = std::fs::read_to_string(aip.join("METS.xml")).unwrap();
    assert!(mets.contains(&format!("with package(s) {objid}")), "the AIP names {objid}");

    let back = k.dir.path().join("back");
    let o = unmigrate(&aip, &back, &[&k.p1]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let arc = std::fs::read(back.join(k.arcs[1].file_name().unwrap())).unwrap();
    assert!(arc == std::fs::read(&k.arcs[1]).unwrap(), "the second ARC differs");
}

/// Copies the package `from` to `to` with the record `id` of its content container changed:
/// `flip` a byte of its payload (its digest no longer the one stated), or `drop` it.
const MUTATE: &str = r#"
import os, shutil, sys, zlib
src, dst, rid, mode = sys.argv[1:5]
shutil.copytree(src, dst)
content = os.path.join(dst, "content")
name = os.path.join(content, os.listdir(content)[0])
data, out, pos, hit = open(name, "rb").read(), [], 0, False
while pos < len(data):
    d = zlib.decompressobj(31)
    rec = d.decompress(data[pos:])
    end = len(data) - len(d.unused_data)
    if ("WARC-Record-ID: " + rid).encode() in rec:
        hit = True
        if mode == "drop":
            pos = end
            continue
        i = len(rec) - 5  # the payload's last byte, before the record's end
        rec = rec[:i] + bytes([rec[i] ^ 1]) + rec[i + 1:]
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        out.append(c.compress(rec) + c.flush())
    else:
        out.append(data[pos:end])
    pos = end
assert hit, rid
open(name, "wb").write(b"".join(out))
"#;

/// A `--with` package whose original holds another payload stops the rebuild naming the
/// revisit and that package's container; one without the original names the record missing.
/// Neither leaves a file.
#[test]
fn a_with_package_without_the_stored_payload_stops_the_rebuild() {
    let k = packaged();
    let revisit = in_order(&container(&k.p2))
        .into_iter()
        .find(|r| r["type"] == "revisit")
        .expect("a revisit");
    let original = text(&revisit["WARC-Refers-To"]).to_string();
    for (mode, said) in [("flip", "holds sha1:"), ("drop", "which no package given holds")] {
        let bad = k.dir.path().join(format!("p1-{mode}"));
        let o = Command::new(oracle_python())
            .args(["-c", MUTATE])
            .args([k.p1.as_os_str(), bad.as_os_str()])
            .args([&original, mode])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = k.dir.path().join(format!("out-{mode}"));
        let o = unmigrate(&k.p2, &out, &[&bad]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{mode}");
        assert!(stderr.contains(said), "{mode}: {stderr}");
        assert!(stderr.contains(&original), "{mode}: names the original: {stderr}");
        if mode == "flip" {
            assert!(stderr.contains(text(&revisit["WARC-Record-ID"])), "{stderr}");
            assert!(stderr.contains(bad.to_str().unwrap()), "names the package: {stderr}");
        }
        assert_eq!(files(&out), Vec::<String>::new(), "{mode}: nothing left");
    }

    // The damaged copy given before or after the package itself: the payload comes from the
    // record that holds it, and the ARC back byte for byte, in either order.
    let flip = k.dir.path().join("p1-flip");
    for (n, with) in
        [[flip.as_path(), k.p1.as_path()], [k.p1.as_path(), flip.as_path()]].iter().enumerate()
    {
        let out = k.dir.path().join(format!("out-order{n}"));
        let o = unmigrate(&k.p2, &out, with);
        assert!(o.status.success(), "{with:?}: {}", String::from_utf8_lossy(&o.stderr));
        let back = std::fs::read(out.join(k.arcs[1].file_name().unwrap())).unwrap();
        assert!(back == std::fs::read(&k.arcs[1]).unwrap(), "{with:?}: the ARC differs");
        let (a, b) = (with[0].to_str().unwrap(), with[1].to_str().unwrap());
        let p2 = k.p2.to_str().unwrap();
        let o =
            webaip(&["audit", "--json", "--deep", "--rebuild-arcs", "--with", a, "--with", b, p2]);
        let r = &json(&o)["packages"][0];
        assert_eq!(r["verdict"], "intact", "{with:?}: {r:#}");
    }
    // Against the damaged copy alone, the audited package is not damaged: the fault is the
    // copy's (its container is not what its METS states), named in warnings, and what needs
    // it is unchecked.
    let (f, p2) = (flip.to_str().unwrap(), k.p2.to_str().unwrap());
    let o = webaip(&["audit", "--json", "--deep", "--rebuild-arcs", "--with", f, p2]);
    let r = &json(&o)["packages"][0];
    assert_eq!((o.status.code(), &r["verdict"]), (Some(0), &"partial".into()), "{r:#}");
    let p64: Vec<&serde_json::Value> =
        r["findings"].as_array().unwrap().iter().filter(|x| x["rule"] == "P6.4").collect();
    assert!(!p64.is_empty(), "{r:#}");
    assert!(p64.iter().all(|x| x["severity"] == "warning" && text(&x["message"]).contains(f)));
    let kinds: Vec<&str> =
        r["unchecked"].as_array().unwrap().iter().map(|u| text(&u["kind"])).collect();
    assert!(kinds.contains(&"original_elsewhere"), "{r:#}");

    // Without the package it needs, neither audit says INTACT: the ARCs' rebuild is not
    // checked, and the package it needs is named.
    let objid = text(&k.r1["objid"]).to_string();
    for deep in [&[][..], &["--deep"][..]] {
        let mut args = vec!["audit", "--json"];
        args.extend(deep);
        args.push(p2);
        let o = webaip(&args);
        let r = &json(&o)["packages"][0];
        assert_eq!((o.status.code(), &r["verdict"]), (Some(0), &"partial".into()), "{r:#}");
        let said = r["unchecked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["kind"] == "arc_needs_packages" && text(&u["reason"]).contains(&objid));
        assert!(said, "{deep:?}: {r:#}");
    }

    // Made whole again by `undedup`, its container gives the ARC back alone, and so does the
    // new package (whose METS states no SHA-512 of the ARC: it is checked against its
    // container's rebuild record, and the report says so).
    let whole = k.dir.path().join("whole");
    let (p1, p2, w) = (k.p1.to_str().unwrap(), k.p2.to_str().unwrap(), whole.to_str().unwrap());
    let o = webaip(&["undedup", "-q", p2, "--with", p1, "--out", w]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = k.dir.path().join("out-whole");
    let o = unmigrate(&container(&whole), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = std::fs::read(out.join(k.arcs[1].file_name().unwrap())).unwrap();
    assert!(back == std::fs::read(&k.arcs[1]).unwrap(), "the second ARC, from the whole package");
    let out = k.dir.path().join("out-whole-package");
    let o = webaip(&["unmigrate", "--json", "-o", out.to_str().unwrap(), w]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = std::fs::read(out.join(k.arcs[1].file_name().unwrap())).unwrap();
    assert!(back == std::fs::read(&k.arcs[1]).unwrap(), "the second ARC, from the new package");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("states no SHA-512 of the ARC"), "{report}");
}

/// An ARC whose second copy of a payload became a revisit within its own package
/// (`--dedup-within`): its container given alone to `unmigrate`, or its package given beside
/// an unrelated `--with` package, gives the ARC back byte for byte. (That the revisit's own
/// package is searched first is the unit test `a_revisit_naming_no_package_is_looked_for_at_home_first`'s
/// to show: here the other package holds no record of those ids.)
#[test]
fn a_within_package_revisit_comes_back_alone_or_beside_another_package() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys
sys.path.insert(0, sys.argv[1] + "/scripts")
from gen_arc import ArcWriter
body = b"the same payload, twice in one crawl\n" * 500
block = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body
name = sys.argv[2] + "/w-20200101000000.arc.gz"
with open(name, "wb") as f:
    w = ArcWriter(f, name.rsplit("/", 1)[1], "20200101000000", gzip_members=True)
    for n in range(3):
        w.record("http://w.example/%d" % n, "192.0.2.1", "2020010100000%d" % n, "text/plain", block)
"#;
    let made = Command::new(oracle_python())
        .args(["-c", script])
        .arg(crate::util::repo())
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let arc = dir.path().join("w-20200101000000.arc.gz");
    let within = dir.path().join("within");
    let r = package(Package::deterministic_json().args(&["--dedup-within"]), &within, &[&arc]);
    let r = r.report();
    assert_eq!(r["dedup"]["revisits"], 2, "{}", r["dedup"]);
    let other = dir.path().join("other");
    Package::new().quiet().deterministic().succeeds(&other, &arc);
    let out = dir.path().join("alone");
    let o = unmigrate(&container(&within), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(out.join(arc.file_name().unwrap())).unwrap() == std::fs::read(&arc).unwrap()
    );
    let out = dir.path().join("beside");
    let o = unmigrate(&within, &out, &[&other]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(out.join(arc.file_name().unwrap())).unwrap() == std::fs::read(&arc).unwrap()
    );
}

/// A package of two ARCs, only the first with revisits, audited with `--rebuild-arcs` against a
/// `--with` package whose original of one revisit holds another payload: the `arc-rebuild`
/// finding names the revisit's container (in the package) and offset, and the `--with` package
/// the other payload is in (a warning: the reference itself is rule P6.4's finding); the other
/// ARC is still rebuilt and checked, and the first container is listed unchecked.
#[test]
fn a_damaged_with_package_stops_only_the_arc_that_needs_it() {
    let k = packaged();
    let other = k.dir.path().join("other");
    crawls_with(&other, &["--as", "arc", "--seed", "7"]);
    // Named so that the ARC with revisits comes first in the package.
    let (a, z) = (
        k.dir.path().join("a-20240210100000.arc.gz"),
        k.dir.path().join("z-20240110100000.arc.gz"),
    );
    std::fs::copy(&k.arcs[1], &a).unwrap();
    std::fs::copy(arc_in(&other.join("crawl1")), &z).unwrap();
    let p3 = k.dir.path().join("p3");
    let against = Package::deterministic_json().args(&["--dedup-against", k.p1.to_str().unwrap()]);
    let r3 = package(against, &p3, &[&a, &z]).report();
    assert!(r3["dedup"]["revisits"].as_u64().unwrap() > 0, "{}", r3["dedup"]);
    let mut contents: Vec<PathBuf> =
        std::fs::read_dir(p3.join("content")).unwrap().map(|e| e.unwrap().path()).collect();
    contents.sort();
    assert_eq!(contents.len(), 2, "{contents:?}");
    let original = first_revisits_original(&contents[0]);
    let bad = k.dir.path().join("p1-flip");
    let o = Command::new(oracle_python())
        .args(["-c", MUTATE])
        .args([k.p1.as_os_str(), bad.as_os_str()])
        .args([&original, "flip"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let (b, p) = (bad.to_str().unwrap(), p3.to_str().unwrap());
    let o = webaip(&["audit", "--json", "--deep", "--rebuild-arcs", "--with", b, p]);
    let r = &json(&o)["packages"][0];
    let first = format!("content/{}", contents[0].file_name().unwrap().to_str().unwrap());
    let found: Vec<&serde_json::Value> =
        r["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "arc-rebuild").collect();
    assert_eq!(found.len(), 1, "{r:#}");
    let f = found[0];
    assert_eq!(text(&f["file"]), first, "{f:#}");
    assert!(f["offset"].as_u64().is_some(), "{f:#}");
    assert_eq!(f["severity"], "warning", "{f:#}");
    let message = text(&f["message"]);
    assert!(message.contains(b) && message.contains("--with"), "names the --with package: {f:#}");
    assert!(message.contains(&original), "{f:#}");
    assert!(!message.contains("this one"), "{f:#}");
    assert_eq!(r["arc_rebuilds"]["rebuilt"], 1, "the other ARC is checked: {r:#}");
    assert_eq!(r["arc_rebuilds"]["as_stated"], 1, "{r:#}");
    let listed = r["unchecked"].as_array().unwrap().iter().any(|u| u["file"] == first.as_str());
    assert!(listed, "the first container is unchecked: {r:#}");
    assert_ne!(r["verdict"], "intact", "{r:#}");
}

/// The SHAttered pair (two payloads of one SHA-1 and length, different bytes: the collision
/// blocks of Stevens et al.'s PDFs before a common tail), one in each of two ARC crawls: the
/// second is packaged against the first, and its payload is kept whole, not made a revisit of
/// the other's bytes. Its ARC then comes back from its own package alone, byte for byte.
#[test]
fn a_sha1_collision_is_never_made_a_revisit() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys
sys.path.insert(0, sys.argv[1] + "/scripts")
from gen_arc import ArcWriter
halves = [bytes.fromhex(h) for h in open(sys.argv[1] + "/tests/data/shattered-prefixes.hex").read().split()]
tail = b"the same tail after both halves\n" * 2000
for i, (when, half) in enumerate([("20200101000000", halves[0]), ("20210101000000", halves[1])]):
    body = half + tail
    block = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    name = "%s/s%d-%s.arc.gz" % (sys.argv[2], i, when)
    with open(name, "wb") as f:
        ArcWriter(f, name.rsplit("/", 1)[1], when, gzip_members=True).record(
            "http://s.example/doc.pdf", "192.0.2.1", when, "application/pdf", block)
"#;
    let made = Command::new(oracle_python())
        .args(["-c", script])
        .arg(crate::util::repo())
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let arcs = [0, 1].map(|i| {
        let when = ["20200101000000", "20210101000000"][i];
        dir.path().join(format!("s{i}-{when}.arc.gz"))
    });
    let (p1, p2) = (dir.path().join("p1"), dir.path().join("p2"));
    package(Package::deterministic_json(), &p1, &[&arcs[0]]).report();
    let against = Package::deterministic_json().args(&["--dedup-against", p1.to_str().unwrap()]);
    let r2 = package(against, &p2, &[&arcs[1]]).report();
    assert_eq!(r2["dedup"]["revisits"].as_u64().unwrap_or(0), 0, "{}", r2["dedup"]);
    let out = dir.path().join("back");
    let o = unmigrate(&p2, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = std::fs::read(out.join(arcs[1].file_name().unwrap())).unwrap();
    assert!(back == std::fs::read(&arcs[1]).unwrap(), "the ARC differs");
}

/// Recomputes, after the package `pkg`'s files were edited, the SHA-512 and size its METS
/// states of each file and its manifest (a copy made to hold other bytes under its own seal).
const RESEAL: &str = r#"
import hashlib, os, re, sys
pkg = sys.argv[1]
mets = open(os.path.join(pkg, "METS.xml")).read()
man = os.path.join(pkg, "manifest-sha512.txt")
new = []
for line in open(man).read().splitlines():
    old, name = line.split(None, 1)
    name = name.strip()
    if name == "METS.xml":
        continue
    p = os.path.join(pkg, name)
    h = hashlib.sha512(open(p, "rb").read()).hexdigest()
    if h != old:
        size = os.path.getsize(p)
        mets = re.sub(r'SIZE="\d+"([^>]*CHECKSUM="%s")' % old, r'SIZE="%d"\1' % size, mets)
        mets = mets.replace(old, h)
    new.append("%s  %s" % (h, name))
open(os.path.join(pkg, "METS.xml"), "w").write(mets)
new.append("%s  METS.xml" % hashlib.sha512(mets.encode()).hexdigest())
open(man, "w").write("\n".join(new) + "\n")
"#;

/// Runs the Python `script` with `args`; it must succeed.
fn python(script: &str, args: &[&std::ffi::OsStr]) {
    let o = Command::new(oracle_python()).args(["-c", script]).args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A package whose METS describes another ARC than the one its container's rebuild record
/// names (sealed again, so its bytes are as its METS states) is no package of that ARC:
/// `unmigrate` says it DIFFERS, never identical.
#[test]
fn an_arc_the_mets_does_not_describe_differs() {
    let k = packaged();
    let renamed = k.dir.path().join("p1-renamed");
    let name = k.arcs[0].file_name().unwrap().to_str().unwrap();
    let copy = "import shutil, sys\nshutil.copytree(sys.argv[1], sys.argv[2])\n\
                m = sys.argv[2] + '/METS.xml'\nt = open(m).read()\nassert sys.argv[3] in t\n\
                open(m, 'w').write(t.replace(sys.argv[3], 'other-' + sys.argv[3]))\n";
    python(copy, &[k.p1.as_os_str(), renamed.as_os_str(), name.as_ref()]);
    python(RESEAL, &[renamed.as_os_str()]);
    let out = k.dir.path().join("out");
    let o =
        webaip(&["unmigrate", "--json", "-o", out.to_str().unwrap(), renamed.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{report}{}", String::from_utf8_lossy(&o.stderr));
    assert!(report.contains(&format!("describes no ARC named \\\"{name}\\\"")), "{report}");
    assert!(!report.contains("states no SHA-512 of the ARC"), "{report}");
}

/// Copies of the first package that cannot be read to their end (a gzip member broken; a
/// container that is a link) or that hold other bytes under their own seal (a payload changed,
/// the METS sealed again): the intact second package audited against one of them is never
/// DAMAGED. The fault is the copy's, by one rule for rule P6.4 and the ARC rebuild: warnings
/// naming it, and what needs it unchecked.
#[test]
fn a_with_copy_unread_or_holding_other_bytes_never_damages_the_package() {
    let k = packaged();
    let original = first_revisits_original(&container(&k.p2));
    let (fake, rot, link) =
        (k.dir.path().join("p1-fake"), k.dir.path().join("p1-rot"), k.dir.path().join("p1-link"));
    python(MUTATE, &[k.p1.as_os_str(), fake.as_os_str(), original.as_ref(), "flip".as_ref()]);
    python(RESEAL, &[fake.as_os_str()]);
    let corrupt = "import os, shutil, sys\nshutil.copytree(sys.argv[1], sys.argv[2])\n\
                   c = sys.argv[2] + '/content/'\nc += os.listdir(c)[0]\n\
                   d = bytearray(open(c, 'rb').read())\ni = len(d) // 3\n\
                   d[i:i + 8] = bytes(b ^ 0xff for b in d[i:i + 8])\nopen(c, 'wb').write(d)\n\
                   shutil.copytree(sys.argv[1], sys.argv[3])\n\
                   c = sys.argv[3] + '/content/'\nc += os.listdir(c)[0]\nos.remove(c)\n\
                   os.symlink(os.path.abspath(sys.argv[1] + c[len(sys.argv[3]):]), c)\n";
    python(corrupt, &[k.p1.as_os_str(), rot.as_os_str(), link.as_os_str()]);
    let p2 = k.p2.to_str().unwrap();
    for copy in [&fake, &rot, &link] {
        let c = copy.to_str().unwrap();
        for rebuild in [&[][..], &["--rebuild-arcs"][..]] {
            let mut args = vec!["audit", "--json", "--deep"];
            args.extend(rebuild);
            args.extend(["--with", c, p2]);
            let o = webaip(&args);
            let r = &json(&o)["packages"][0];
            assert_eq!(
                error_findings(r),
                Vec::<&serde_json::Value>::new(),
                "{c} {rebuild:?}: {r:#}"
            );
            assert_eq!(
                (o.status.code(), &r["verdict"]),
                (Some(0), &"partial".into()),
                "{c} {rebuild:?}: {r:#}"
            );
            let named = (r["findings"].as_array().unwrap().iter())
                .any(|f| f["rule"] == "P6.4" && text(&f["message"]).contains(c));
            assert!(named, "{c} {rebuild:?}: names the copy: {r:#}");
        }
    }
}

/// An unmigrate (or an audit) given an intact package and a copy of it whose container is a
/// link, in either order: the copy is passed over, the ARC comes back byte for byte, and the
/// audit rebuilds and checks it.
#[test]
fn a_with_copy_that_cannot_be_listed_is_passed_over() {
    let k = packaged();
    let link = k.dir.path().join("p1-link");
    let linked = "import os, shutil, sys\nshutil.copytree(sys.argv[1], sys.argv[2])\n\
                  c = sys.argv[2] + '/content/'\nn = os.listdir(c)[0]\nos.remove(c + n)\n\
                  os.symlink(os.path.abspath(sys.argv[1] + '/content/' + n), c + n)\n";
    python(linked, &[k.p1.as_os_str(), link.as_os_str()]);
    for (n, with) in
        [[link.as_path(), k.p1.as_path()], [k.p1.as_path(), link.as_path()]].iter().enumerate()
    {
        let out = k.dir.path().join(format!("out{n}"));
        let o = unmigrate(&k.p2, &out, with);
        assert!(o.status.success(), "{with:?}: {}", String::from_utf8_lossy(&o.stderr));
        let back = std::fs::read(out.join(k.arcs[1].file_name().unwrap())).unwrap();
        assert!(back == std::fs::read(&k.arcs[1]).unwrap(), "{with:?}: the ARC differs");
        let (a, b, p2) =
            (with[0].to_str().unwrap(), with[1].to_str().unwrap(), k.p2.to_str().unwrap());
        let o =
            webaip(&["audit", "--json", "--deep", "--rebuild-arcs", "--with", a, "--with", b, p2]);
        let r = &json(&o)["packages"][0];
        assert_eq!(r["verdict"], "intact", "{with:?}: {r:#}");
        assert_eq!(r["arc_rebuilds"]["rebuilt"], 1, "{with:?}: {r:#}");
    }
}

/// Copies a package, its METS without its `dependency` relationships (to be sealed again).
const DROP_REQUIRES: &str = r#"
import re, shutil, sys
shutil.copytree(sys.argv[1], sys.argv[2])
m = sys.argv[2] + "/METS.xml"
t = open(m).read()
u = re.sub(r"<premis:relationship>\s*<premis:relationshipType>dependency</premis:relationshipType>.*?</premis:relationship>\s*", "", t, flags=re.S)
assert u != t
open(m, "w").write(u)
"#;

/// A package whose METS lost the `dependency` / `requires` relationship (sealed again), while
/// its revisits still name the package holding their originals: the deep audit, which reads
/// every revisit, finds the METS contradicting its containers, naming that package; never
/// INTACT.
#[test]
fn a_mets_that_does_not_require_what_its_revisits_name_is_inconsistent() {
    let k = packaged();
    let dropped = k.dir.path().join("p2-no-requires");
    python(DROP_REQUIRES, &[k.p2.as_os_str(), dropped.as_os_str()]);
    python(RESEAL, &[dropped.as_os_str()]);
    let objid = text(&k.r1["objid"]).to_string();
    let o = webaip(&["audit", "--json", "--deep", dropped.to_str().unwrap()]);
    let r = &json(&o)["packages"][0];
    assert_eq!((o.status.code(), &r["verdict"]), (Some(3), &"inconsistent".into()), "{r:#}");
    let said = (r["inconsistencies"].as_array().unwrap().iter())
        .any(|f| f["rule"] == "P6.4" && text(&f["message"]).contains(&objid));
    assert!(said, "{r:#}");
    // The package as made states what it requires: no such finding.
    let o = webaip(&["audit", "--json", "--deep", k.p2.to_str().unwrap()]);
    let r = &json(&o)["packages"][0];
    assert_eq!(r["inconsistencies"], serde_json::json!([]), "{r:#}");
}

/// A copy of `pkg` at `to` whose content container is cut to its first `keep` bytes (not
/// read to its end: every record after them unread).
fn cut_copy(pkg: &Path, to: &Path, keep: usize) {
    let cut = "import os, shutil, sys\nshutil.copytree(sys.argv[1], sys.argv[2])\n\
               c = sys.argv[2] + '/content/'\nc += os.listdir(c)[0]\n\
               d = open(c, 'rb').read()[:int(sys.argv[3])]\nopen(c, 'wb').write(d)\n";
    python(cut, &[pkg.as_os_str(), to.as_os_str(), keep.to_string().as_ref()]);
}

/// One `--with` copy holding another payload under the record a revisit refers to, another
/// whose container cannot be read to its end (the original may be in its unread part), in
/// either order: `unmigrate` says the original was not read, naming the container, never that
/// a package holds another payload; nothing is written. With the package itself beside them
/// the ARC comes back byte for byte.
#[test]
fn an_unread_with_package_wins_over_another_payload() {
    let k = packaged();
    let original = first_revisits_original(&container(&k.p2));
    let (flip, cut) = (k.dir.path().join("p1-flip"), k.dir.path().join("p1-cut"));
    python(MUTATE, &[k.p1.as_os_str(), flip.as_os_str(), original.as_ref(), "flip".as_ref()]);
    cut_copy(&k.p1, &cut, 200);
    for (n, with) in [[&flip, &cut], [&cut, &flip]].iter().enumerate() {
        let out = k.dir.path().join(format!("out{n}"));
        let o = unmigrate(&k.p2, &out, &[with[0].as_path(), with[1].as_path()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{with:?}: {stderr}");
        assert!(stderr.contains("not read to its end") && stderr.contains("p1-cut"), "{stderr}");
        assert!(!stderr.contains("holds sha1:") && !stderr.contains("damage in"), "{stderr}");
        assert_eq!(files(&out), Vec::<String>::new(), "{with:?}: nothing left");
    }
    let out = k.dir.path().join("out-whole");
    let o = unmigrate(&k.p2, &out, &[&flip, &cut, &k.p1]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = std::fs::read(out.join(k.arcs[1].file_name().unwrap())).unwrap();
    assert!(back == std::fs::read(&k.arcs[1]).unwrap(), "the ARC differs");
}

/// This machine, not the packages, stops the reading of the originals: no room for the
/// temporary copies of the payloads (a small disk as the temporary folder). The audit
/// rebuilding the ARCs never says DAMAGED: what was not read is not checked, with the reason;
/// `unmigrate` onto a full disk says so in words and leaves nothing.
#[test]
fn a_full_disk_leaves_the_originals_not_checked() {
    let k = packaged();
    let (p1, p2) = (k.p1.to_str().unwrap(), k.p2.to_str().unwrap());
    let small = k.dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let Some(_disk) = crate::util::SmallDisk::mount(&small, 4) else {
        eprintln!("no tmpfs (mount needs privileges here): full disk not tried");
        return;
    };
    let filler = small.join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 8 << 10]);
    let args = ["audit", "--json", "--deep", "--rebuild-arcs", "--with", p1, p2];
    let o = crate::util::webaip_command().args(args).env("TMPDIR", &small).output().unwrap();
    let r = &json(&o)["packages"][0];
    assert_eq!((o.status.code(), &r["verdict"]), (Some(0), &"partial".into()), "{r:#}");
    let not_read = (r["unchecked"].as_array().unwrap().iter())
        .find(|u| u["kind"] == "not_read")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert!(text(&not_read["reason"]).contains("no space left on device"), "{r:#}");

    let out = small.join("out");
    let o = unmigrate(&k.p2, &out, &[&k.p1]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no space left on device"), "{stderr}");
    assert!(!stderr.contains("holds sha1:") && !stderr.contains("os error"), "{stderr}");
    let left: Vec<String> = files(&out).into_iter().filter(|f| f.ends_with(".arc.gz")).collect();
    assert_eq!(left, Vec::<String>::new(), "{stderr}");
}

/// A package whose METS lost the `dependency` / `requires` relationship while its revisits
/// still name the package holding their originals: the plain audit (the records the METS
/// describes) finds the contradiction too, and `store put` refuses it, saying the verdict.
/// The package as made is stored with what it requires, and the store's warning that it does
/// not hold it is given alike by `store put` and `ingest --store`.
#[test]
fn a_store_keeps_what_an_arc_deduplicated_package_requires() {
    let k = packaged();
    let dropped = k.dir.path().join("p2-no-requires");
    python(DROP_REQUIRES, &[k.p2.as_os_str(), dropped.as_os_str()]);
    python(RESEAL, &[dropped.as_os_str()]);
    let objid = text(&k.r1["objid"]).to_string();
    let o = webaip(&["audit", "--json", dropped.to_str().unwrap()]);
    let r = &json(&o)["packages"][0];
    assert_eq!((o.status.code(), &r["verdict"]), (Some(3), &"inconsistent".into()), "{r:#}");
    let said = (r["inconsistencies"].as_array().unwrap().iter())
        .any(|f| f["rule"] == "P6.4" && text(&f["message"]).contains(&objid));
    assert!(said, "{r:#}");

    let t = k.dir.path();
    let stderr = put_refused(t, &dropped);
    let cfg = fs_store(t, "s1");
    let c = cfg.to_str().unwrap();
    assert!(stderr.contains("INCONSISTENT") && stderr.contains("not stored"), "{stderr}");
    assert!(!stderr.contains("damaged"), "{stderr}");

    let o = webaip(&["store", "--config", c, "--json", "put", k.p2.to_str().unwrap()]);
    let r = &json(&o)["packages"][0];
    assert_eq!(o.status.code(), Some(0), "{r:#}");
    assert_eq!(
        (&r["requires"], &r["requires_missing"]),
        (&serde_json::json!([objid]), &serde_json::json!([objid]))
    );
    let warning = format!("WARNING: requires {objid}, which the store does not hold");
    let cfg2 = fs_store(t, "s2");
    let o = webaip(&["store", "--config", cfg2.to_str().unwrap(), "put", k.p2.to_str().unwrap()]);
    let put_said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success() && put_said.contains(&warning), "{put_said}");
    let aips = t.join("aips");
    let cfg3 = fs_store(t, "s3");
    let o = webaip(&[
        "ingest",
        k.p2.to_str().unwrap(),
        "--out",
        aips.to_str().unwrap(),
        "--store",
        cfg3.to_str().unwrap(),
    ]);
    let ingest_said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{ingest_said}{}", String::from_utf8_lossy(&o.stderr));
    assert!(ingest_said.contains(&warning), "{ingest_said}");
}

/// `store check` of an OCFL store (a new store's layout) lists a required package the store
/// does not hold, and exits 1; once that package is put the check is clean. A put that
/// stored nothing (its replica refused the commit) records nothing the store must hold.
#[test]
fn an_ocfl_check_lists_a_required_package_not_stored() {
    let k = packaged();
    let objid = text(&k.r1["objid"]).to_string();
    let cfg = fs_store(k.dir.path(), "deps");
    let c = cfg.to_str().unwrap();
    // The package with what it requires dropped from its METS (sealed again) is v1; the
    // package itself as v2 fails to commit on the only replica (no rename exchange).
    let dropped = k.dir.path().join("p2-requires-nothing");
    python(DROP_REQUIRES, &[k.p2.as_os_str(), dropped.as_os_str()]);
    python(RESEAL, &[dropped.as_os_str()]);
    let o = webaip(&["store", "--config", c, "--json", "put", dropped.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let o = crate::util::webaip_command()
        .args(["store", "--config", c, "--json", "put", k.p2.to_str().unwrap()])
        .env("WEBAIP_FAIL_AT", "no-exchange")
        .output()
        .unwrap();
    let r = json(&o);
    assert_ne!(o.status.code(), Some(0), "{r:#}");
    assert_eq!(r["packages"][0]["accepted"], false, "{r:#}");
    let o = webaip(&["store", "--config", c, "--json", "check"]);
    let r = json(&o);
    assert_eq!(
        (o.status.code(), &r["missing_dependencies"]),
        (Some(0), &serde_json::json!([])),
        "{r:#}"
    );
    let o = webaip(&["store", "--config", c, "--json", "put", k.p2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(k.dir.path().join("deps/0=ocfl_1.1").exists(), "an OCFL storage root");
    let o = webaip(&["store", "--config", c, "--json", "check"]);
    let r = json(&o);
    let missing = r["missing_dependencies"].as_array().cloned().unwrap_or_default();
    assert_eq!(o.status.code(), Some(1), "{r:#}");
    assert!(missing.iter().any(|d| d["requires"] == objid.as_str()), "{r:#}");
    let o = webaip(&["store", "--config", c, "check"]);
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(said.contains(&format!("requires {objid}: not in the store")), "{said}");
    let o = webaip(&["store", "--config", c, "put", k.p1.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let o = webaip(&["store", "--config", c, "--json", "check"]);
    let r = json(&o);
    assert_eq!(o.status.code(), Some(0), "{r:#}");
    assert_eq!(r["missing_dependencies"], serde_json::json!([]), "{r:#}");
    // Runs of one object each (the oldest seen first): a run that checks the package and
    // not the one it requires says nothing of the latter, and finds no problem.
    for _ in 0..2 {
        let o = webaip(&["store", "--config", c, "--json", "check", "--oldest", "1"]);
        let r = json(&o);
        assert_eq!(o.status.code(), Some(0), "{r:#}");
        assert_eq!(r["missing_dependencies"], serde_json::json!([]), "{r:#}");
    }
}

/// The configuration of a store of one file system replica, its state and replica named
/// `name` in `dir`.
fn fs_store(dir: &Path, name: &str) -> PathBuf {
    let cfg = dir.join(format!("{name}.toml"));
    let text = format!(
        "state = \"{name}.sqlite\"\n\n[[replica]]\nname = \"disk\"\ntype = \"fs\"\nroot = \"{}\"\n",
        dir.join(name).display()
    );
    std::fs::write(&cfg, text).unwrap();
    cfg
}

/// A revisit names the package holding its original (`X-Webaip-Refers-To-Package`); a copy of
/// that package read to its end holds another payload under the record's id, and an unrelated
/// package (another crawl) beside it is cut short. The difference is what is said, naming the
/// copy, whatever the order: the unrelated package's unread part cannot hold a record of the
/// package the revisit names, so it hides nothing. (A cut copy of the named package still
/// wins: `an_unread_with_package_wins_over_another_payload`.)
#[test]
fn an_unrelated_package_cut_short_hides_no_difference() {
    let k = packaged();
    let original = first_revisits_original(&container(&k.p2));
    let flip = k.dir.path().join("p1-flip");
    python(MUTATE, &[k.p1.as_os_str(), flip.as_os_str(), original.as_ref(), "flip".as_ref()]);
    let other = k.dir.path().join("other");
    crawls_with(&other, &["--as", "arc", "--seed", "7"]);
    let q = k.dir.path().join("q");
    let rq = package(Package::deterministic_json(), &q, &[&arc_in(&other.join("crawl1"))]);
    assert_ne!(rq.report()["objid"], k.r1["objid"], "an unrelated package");
    let cut = k.dir.path().join("q-cut");
    cut_copy(&q, &cut, 200);
    let (f, c, p2) = (flip.to_str().unwrap(), cut.to_str().unwrap(), k.p2.to_str().unwrap());
    for (n, with) in [[&flip, &cut], [&cut, &flip]].iter().enumerate() {
        let out = k.dir.path().join(format!("out{n}"));
        let o = unmigrate(&k.p2, &out, &[with[0].as_path(), with[1].as_path()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{with:?}: {stderr}");
        assert!(stderr.contains("holds sha1:") && stderr.contains(f), "{with:?}: {stderr}");
        assert!(stderr.contains(&original), "{stderr}");
        assert!(!stderr.contains("not read to its end") && !stderr.contains(c), "{stderr}");
        assert_eq!(files(&out), Vec::<String>::new(), "{with:?}: nothing left");
    }
    // The audit rebuilding the ARCs names the damaged copy, not the cut package.
    let o = webaip(&["audit", "--json", "--deep", "--rebuild-arcs", "--with", c, "--with", f, p2]);
    let r = &json(&o)["packages"][0];
    let found: Vec<&serde_json::Value> =
        r["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "arc-rebuild").collect();
    assert_eq!(found.len(), 1, "{r:#}");
    let message = text(&found[0]["message"]);
    assert!(message.contains(f) && !message.contains(c), "{r:#}");
    let kinds: Vec<&str> =
        r["unchecked"].as_array().unwrap().iter().map(|u| text(&u["kind"])).collect();
    assert!(kinds.contains(&"arc_original_differs"), "{r:#}");
}

/// Copies the package `from` to `to` with `JUNK` bytes put before the first member of its
/// content container, the SHA-256 and PREMIS size its METS states of it updated (the SHA-512s
/// and SIZE are RESEAL's): a container whose fixity is what its METS states that no WARC reader reads.
const PREPEND: &str = r#"
import hashlib, os, shutil, sys
shutil.copytree(sys.argv[1], sys.argv[2])
c = sys.argv[2] + "/content/"
c += os.listdir(c)[0]
d = open(c, "rb").read()
m = sys.argv[2] + "/METS.xml"
t = open(m).read()
old = hashlib.sha256(d).hexdigest()
assert old in t
d = b"JUNK" + d
open(c, "wb").write(d)
t = t.replace(old, hashlib.sha256(d).hexdigest())
t = t.replace("<premis:size>%d</premis:size>" % (len(d) - 4), "<premis:size>%d</premis:size>" % len(d))
open(m, "w").write(t)
"#;

/// A package whose METS records its deduplication but not what it requires, and whose
/// container cannot be read as WARC (bytes put before its first member, the package sealed
/// again, so its fixity is what its METS states): the plain audit, which reads the revisits
/// for what the METS must require, could not, and says so (the container, the offset); it is
/// never INTACT, and `store put` refuses it. With its container readable, the same METS is
/// INCONSISTENT (`a_store_keeps_what_an_arc_deduplicated_package_requires`).
#[test]
fn requirements_that_cannot_be_read_are_not_checked() {
    let k = packaged();
    let dropped = k.dir.path().join("p2-no-requires");
    python(DROP_REQUIRES, &[k.p2.as_os_str(), dropped.as_os_str()]);
    let junk = k.dir.path().join("p2-junk");
    python(PREPEND, &[dropped.as_os_str(), junk.as_os_str()]);
    python(RESEAL, &[junk.as_os_str()]);
    let name = format!("content/{}", container(&junk).file_name().unwrap().to_str().unwrap());
    let o = webaip(&["audit", "--json", junk.to_str().unwrap()]);
    let r = &json(&o)["packages"][0];
    assert_eq!(r["findings"].as_array().unwrap().len(), 0, "fixity as stated: {r:#}");
    assert_eq!((o.status.code(), &r["verdict"]), (Some(0), &"partial".into()), "{r:#}");
    let u = (r["unchecked"].as_array().unwrap().iter())
        .find(|u| u["kind"] == "requirements_not_read")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(u["file"], name.as_str(), "{r:#}");
    assert!(text(&u["reason"]).contains("offset 0"), "{r:#}");

    let stderr = put_refused(k.dir.path(), &junk);
    assert!(stderr.contains("not stored"), "{stderr}");
}

/// `store put --audit` of `pkg` to the file system store `s1` in `dir`, which must refuse it
/// (exit 2); returns what it said.
fn put_refused(dir: &Path, pkg: &Path) -> String {
    let cfg = fs_store(dir, "s1");
    let (cfg, pkg) = (cfg.to_str().unwrap(), pkg.to_str().unwrap());
    let o = webaip(&["store", "--config", cfg, "put", "--audit", pkg]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    stderr
}

/// A package whose METS neither records its deduplication nor states what it requires (the
/// event's type changed, the relationship dropped, sealed again): its migration log still
/// names the package its ARCs need, so the plain audit reads the revisits, finds the package
/// they name, and says the METS contradicts them; `store put` refuses it.
#[test]
fn a_mets_hiding_its_deduplication_is_found_by_the_plain_audit() {
    let k = packaged();
    let dropped = k.dir.path().join("p2-no-requires");
    python(DROP_REQUIRES, &[k.p2.as_os_str(), dropped.as_os_str()]);
    let hidden = "import sys\nm = sys.argv[1] + '/METS.xml'\nt = open(m).read()\n\
                  e = '<premis:eventType>deduplication</premis:eventType>'\nassert e in t\n\
                  open(m, 'w').write(t.replace(e, e.replace('deduplication', 'migration')))\n";
    python(hidden, &[dropped.as_os_str()]);
    python(RESEAL, &[dropped.as_os_str()]);
    let mets = std::fs::read_to_string(dropped.join("METS.xml")).unwrap();
    assert!(!mets.contains(">deduplication<") && !mets.contains(">requires<"), "hidden");
    let objid = text(&k.r1["objid"]).to_string();
    let o = webaip(&["audit", "--json", dropped.to_str().unwrap()]);
    let r = &json(&o)["packages"][0];
    assert_eq!((o.status.code(), &r["verdict"]), (Some(3), &"inconsistent".into()), "{r:#}");
    let said = (r["inconsistencies"].as_array().unwrap().iter())
        .any(|f| f["rule"] == "P6.4" && text(&f["message"]).contains(&objid));
    assert!(said, "{r:#}");
    put_refused(k.dir.path(), &dropped);
}

/// The plain audit of an intact (deduplicated) package on a machine out of file descriptors:
/// whichever file cannot be opened ("too many open files") - a container, a log, the
/// manifest - is not checked (`not_read`), never DAMAGED, and no finding is an error; when it
/// is the METS, the run stops before any report and says why (exit 2).
#[test]
fn too_many_open_files_is_never_damage() {
    let k = packaged();
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&k.p2)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(&k.p2).unwrap().to_path_buf())
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    for file in &files {
        let within = format!("/p2/{}", file.display());
        let mut audit = crate::util::webaip_command();
        audit.args(["audit", "--json", k.p2.to_str().unwrap()]);
        let o = audit.env("WEBAIP_FAIL_OPEN", &within).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        if file == Path::new("METS.xml") {
            assert_eq!(o.status.code(), Some(2), "{within}: {stderr}");
            assert!(stderr.contains("METS.xml: too many open files"), "{within}: {stderr}");
            continue;
        }
        let r = &json(&o)["packages"][0];
        assert_eq!(
            (o.status.code(), &r["verdict"]),
            (Some(0), &"partial".into()),
            "{within}: {r:#}"
        );
        assert_eq!(error_findings(r), Vec::<&serde_json::Value>::new(), "{within}: {r:#}");
        let not_read: Vec<&serde_json::Value> =
            r["unchecked"].as_array().unwrap().iter().filter(|u| u["kind"] == "not_read").collect();
        let named = |u: &&&serde_json::Value| Path::new(text(&u["file"])) == file;
        assert_eq!(not_read.iter().filter(named).count(), 1, "{within}: {r:#}");
        assert!(
            not_read.iter().all(|u| text(&u["reason"]).contains("too many open files")),
            "{r:#}"
        );
        let (listed, checked) = (r["files_listed"].as_u64(), r["files_checked"].as_u64());
        let unread_listed = not_read.iter().filter(|u| u["mets_id"].is_string()).count();
        assert_eq!(checked, listed.map(|n| n - unread_listed as u64), "{within}: {r:#}");
    }
}

/// The same audit under a real descriptor limit (`ulimit -n`, whatever this process already
/// holds open): never DAMAGED whichever limit is met; a run stopped before any report says
/// why (exit 2).
#[test]
fn a_real_descriptor_limit_is_never_damage() {
    let k = packaged();
    let bin = crate::util::webaip_command().get_program().to_owned();
    for limit in 4..=12 {
        let o = Command::new("bash")
            .args(["-c", &format!("ulimit -n {limit} && exec \"$0\" \"$@\"")])
            .arg(&bin)
            .args(["audit", "--json", k.p2.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(1), "{limit}: damaged? {stderr}");
        let report = serde_json::from_slice::<serde_json::Value>(&o.stdout).ok();
        let Some(r) = report.as_ref().map(|d| &d["packages"][0]).filter(|r| !r.is_null()) else {
            assert_eq!(o.status.code(), Some(2), "{limit}: {stderr}");
            assert!(stderr.contains("too many open files"), "{limit}: {stderr}");
            continue;
        };
        assert_ne!(r["verdict"], "damaged", "{limit}: {r:#}");
        assert_eq!(error_findings(r), Vec::<&serde_json::Value>::new(), "{limit}: {r:#}");
    }
}

/// The medium or the machine failing reads (an input/output error, memory exhausted) of the
/// deduplicated package's container, or of the package holding its originals, while the deep
/// audit rebuilds the ARCs: what was not read is not checked (`not_read`, naming the cause),
/// never DAMAGED, and no finding is an error.
#[test]
fn reads_failed_by_the_medium_or_the_machine_leave_the_arcs_not_checked() {
    let Some(failing) = crate::util::FailingReads::build() else { return };
    let k = packaged();
    let (p1, p2) = (k.p1.to_str().unwrap(), k.p2.to_str().unwrap());
    let name = |pkg: &Path| container(pkg).file_name().unwrap().to_str().unwrap().to_string();
    let args = ["audit", "--json", "--deep", "--rebuild-arcs", "--with", p1, p2];
    for (whose, errno, words) in [
        (&k.p2, libc::EIO, "input/output error"),
        (&k.p2, libc::ENOMEM, "out of memory"),
        (&k.p1, libc::EIO, "input/output error"),
    ] {
        let file = name(whose);
        let size = std::fs::metadata(container(whose)).unwrap().len();
        for at in [0, size / 3] {
            let o = failing.webaip(&file, at, errno, &args);
            let r = &json(&o)["packages"][0];
            let case = format!("{file} from {at}: {words}");
            assert_eq!(
                (o.status.code(), &r["verdict"]),
                (Some(0), &"partial".into()),
                "{case}: {r:#}"
            );
            assert_eq!(error_findings(r), Vec::<&serde_json::Value>::new(), "{case}");
            let unread: Vec<&str> = (r["unchecked"].as_array().unwrap().iter())
                .filter(|u| u["kind"] == "not_read")
                .map(|u| text(&u["reason"]))
                .collect();
            assert!(!unread.is_empty(), "{case}: {r:#}");
            assert!(unread.iter().all(|reason| reason.contains(words)), "{case}: {unread:?}");
        }
    }
}
