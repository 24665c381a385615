//! Archivematica's METS library (metsrw, an implementation we did not write) opens every kind
//! of package webaip makes, finds every file of the fileSec at its FLocat through the physical
//! structMap (P2.5), and reaches the package-level PREMIS events and agents.

use std::path::Path;
use std::process::Command;

use crate::util::{Package, oracle_python, package, repo, sample};

/// What metsrw finds in a METS document.
fn metsrw(mets: &Path) -> serde_json::Value {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_metsrw.py"))
        .arg(mets)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "metsrw cannot open {}: {}",
        mets.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Every top-level FLocat of the fileSec (nested record files have none).
fn flocats(mets: &str) -> Vec<String> {
    let mut v: Vec<String> = mets
        .split("xlink:href=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn metsrw_opens_every_package_and_finds_every_file_event_and_agent() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, source) in
        [("heritrix", sample("heritrix-job")), ("pandas", sample("pandas/40123/20040517-1412"))]
    {
        for mode in ["minimal", "full"] {
            let pkg = tmp.path().join(format!("{name}-{mode}"));
            package(Package::new().quiet().mode(mode), &pkg, &[&source]).succeeded();
            let mets_path = pkg.join("METS.xml");
            let mets = std::fs::read_to_string(&mets_path).unwrap();
            let seen = metsrw(&mets_path);
            let mut paths: Vec<String> = seen["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].as_str().unwrap().to_string())
                .collect();
            paths.sort();
            assert_eq!(paths, flocats(&mets), "{name} {mode}: metsrw's files against the fileSec");
            for f in seen["files"].as_array().unwrap() {
                assert!(f["use"].is_string(), "{name} {mode}: {f} has no file group");
            }
            let events: Vec<&str> = seen["package_events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap())
                .collect();
            assert!(events.contains(&"virus check"), "{name} {mode}: package events {events:?}");
            assert!(seen["package_agents"].as_u64().unwrap() >= 2, "{name} {mode}: {seen}");
        }
    }
}
