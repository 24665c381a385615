//! Harvests read as captures (issue 16): the NEDLIB and Kulturarw3 samples are packaged like
//! every other source and checked by independent readers: the official schemas
//! (validate-mets), warcio (every record and digest, tests/oracle/check_captures.py: each
//! record's block is the stored header bytes and body, computed from the source files with
//! plain byte operations), Python's zlib and hashlib for every range the METS states
//! (check_package.py), and `audit --deep`.

use std::path::Path;
use std::process::Command;

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{Package, oracle_python, repo, sample, samples, webaip};

fn oracle(script: &str, args: &[&Path], extra: &[&str]) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle").join(script))
        .args(args)
        .args(extra)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{script}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "{script}: {v}");
    v
}

/// Packages a sample in both modes and runs every check; returns the minimal-mode report.
fn package_and_check(sample: &str, shape: &str) -> serde_json::Value {
    let src = samples().join(sample);
    let mut minimal = serde_json::Value::Null;
    for mode in ["full", "minimal"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pkg");
        let o = Package::new().deterministic().json().mode(mode).schemas().run(&out, &src);
        assert!(o.status.success(), "{shape}: {}", String::from_utf8_lossy(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["kind"], shape);
        let r = crate::util::only_package(&r);
        assert_eq!(r["shape"], shape);
        assert_eq!(r["mets_xsd_checked"], true);
        let (ok, text) = oracle_validate(&out.join("METS.xml"));
        assert!(ok, "{shape} {mode}: {text}");
        assert_webaip_valid(&out.join("METS.xml"));
        let checked = oracle("check_package.py", &[&out], &[]);
        let captures = oracle("check_captures.py", &[&out, &src], &[shape]);
        assert_eq!(captures["counts"]["checked"], r["captures"], "{captures}");
        // The report names every container, as the package holds it, with its records.
        let containers = r["containers"].as_array().unwrap();
        let mut in_containers = 0;
        for c in containers {
            let path = out.join(c["path"].as_str().unwrap());
            assert!(path.is_file(), "{shape}: {c}");
            assert_eq!(c["action"], "written", "{c}");
            in_containers += c["records"].as_u64().unwrap();
        }
        assert_eq!(in_containers, r["records"].as_u64().unwrap(), "{shape}: {r}");
        let written = std::fs::read_dir(out.join("content")).unwrap().count();
        assert!(written >= 1 && containers.len() >= written, "{shape}: {r}");
        if mode == "full" {
            // Every record but the warcinfo has its <file>, and warcio reads as many.
            let records = r["records"].as_u64().unwrap();
            assert_eq!(checked["counts"]["records"], records - 1, "{checked}");
            assert_eq!(captures["counts"]["records"], records, "{captures}");
        }
        let audit = webaip(&["audit", "--deep", "--json", out.to_str().unwrap()]);
        let a: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap();
        assert_eq!(audit.status.code(), Some(0), "{a}");
        assert_eq!(a["packages"][0]["verdict"], "intact", "{a}");
        // The quirks travel in the package, every one with its file and line or offset.
        let log = out.join(format!("logs/webaip/{shape}.quirks.json"));
        let q: serde_json::Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
        for quirk in q["quirks"].as_array().unwrap() {
            assert!(!quirk["file"].as_str().unwrap().is_empty(), "{quirk}");
        }
        let manifest = std::fs::read_to_string(out.join("manifest-sha512.txt")).unwrap();
        assert!(manifest.contains(&format!("logs/webaip/{shape}.quirks.json")));
        if mode == "minimal" {
            minimal = r;
        }
    }
    minimal
}

fn kinds(r: &serde_json::Value) -> Vec<String> {
    r["quirk_counts"].as_object().unwrap().keys().cloned().collect()
}

#[test]
fn a_nedlib_harvest_packages_with_every_quirk_reported() {
    let r = package_and_check("nedlib", "nedlib");
    assert_eq!(r["captures"], 7);
    let k = kinds(&r);
    for want in [
        "norwegian-date",
        "seconds-60",
        "broken-year",
        "merged-header-line",
        "lf-line-ends",
        "meta-without-data",
        "data-without-meta",
        "side-car",
    ] {
        assert!(k.iter().any(|x| x == want), "{want} not reported: {k:?}");
    }
    // Quirks of .meta files name their line.
    let q = r["quirks"].as_array().unwrap();
    let merged = q.iter().find(|x| x["kind"] == "merged-header-line").unwrap();
    assert!(merged["file"].as_str().unwrap().ends_with(".meta"), "{merged}");
    assert!(merged["line"].as_u64().is_some(), "{merged}");
    // The data file without .meta and the access file are side files under logs/.
    assert_eq!(r["logs"], 2);
}

#[test]
fn a_kulturarw3_archive_packages_with_every_quirk_reported() {
    let r = package_and_check("kulturarw3", "kulturarw3");
    assert_eq!(r["captures"], 10);
    let k = kinds(&r);
    for want in ["truncated", "v0.01-header-names", "current-snapshot", "host-port-directory"] {
        assert!(k.iter().any(|x| x == want), "{want} not reported: {k:?}");
    }
    let q = r["quirks"].as_array().unwrap();
    let t = q.iter().find(|x| x["kind"] == "truncated").unwrap();
    assert!(t["offset"].as_u64().is_some(), "{t}");
}

#[test]
fn the_nedlib_date_option_is_stated_on_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("nedlib");
    for (opt, label) in [("server", "server Date header"), ("folder", "folder date")] {
        let out = dir.path().join(opt);
        Package::new().quiet().args(&["--nedlib-date", opt]).succeeds(&out, &src);
        let script = "import glob,sys,json\nfrom warcio.archiveiterator import ArchiveIterator\nout=[]\nfor fn in glob.glob(sys.argv[1]+'/content/*.warc.gz'):\n    for r in ArchiveIterator(open(fn,'rb')):\n        if r.rec_type=='response': out.append(r.rec_headers.get_header('X-Webaip-Date-Source') or '')\nprint(json.dumps(out))";
        let o = Command::new(oracle_python())
            .args(["-c", script, out.to_str().unwrap()])
            .output()
            .unwrap();
        let sources: Vec<String> = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(sources.len(), 7);
        // Every record says where its date came from; with `folder` all are the folder's.
        assert!(sources.iter().all(|s| !s.is_empty()), "{sources:?}");
        if opt == "folder" {
            assert!(sources.iter().all(|s| s.starts_with(label)), "{sources:?}");
        } else {
            assert!(sources.iter().any(|s| s.starts_with(label)), "{sources:?}");
        }
    }
}
