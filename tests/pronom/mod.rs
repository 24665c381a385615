//! Packages state, for each file, the PUID, name and version the DROID signature file that
//! opf-fido ships gives it (the PRONOM table itself is checked against that file beside it,
//! in `src/formats/pronom.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Package, oracle_python, repo, sample};

/// Name and version of each PUID, as the DROID signature file gives them.
pub fn droid(puids: &[&str]) -> serde_json::Value {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/droid.py"))
        .args(puids)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// (formatName, formatVersion, formatRegistryKey) of every PREMIS object of a METS that has a
/// PRONOM key.
fn designations(mets: &str) -> Vec<(String, String, String)> {
    let inner = |block: &str, tag: &str| {
        let open = format!("<premis:{tag}>");
        block.find(&open).map(|i| {
            let rest = &block[i + open.len()..];
            rest[..rest.find('<').unwrap()].to_string()
        })
    };
    mets.split("<premis:format>")
        .skip(1)
        .map(|b| &b[..b.find("</premis:format>").unwrap()])
        .filter_map(|b| {
            Some((
                inner(b, "formatName")?,
                inner(b, "formatVersion").unwrap_or_default(),
                inner(b, "formatRegistryKey")?,
            ))
        })
        .collect()
}

/// Every PRONOM key a package states names, in the DROID signature file, the format and
/// version the PREMIS object states: for containers webaip writes (WARC 1.1), for copied WARCs
/// of each version (1.0, and the 0.17 draft, which only PRONOM's version-less entry matches),
/// and for the ARC files containers were migrated from.
#[test]
fn packages_state_the_puid_and_version_of_what_their_files_are() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = crate::util::corpus();
    let mut found = Vec::new();
    for (name, inputs) in [
        ("heritrix", vec![sample("heritrix-job")]),
        (
            "warcs",
            vec![
                corpus.join("warc/gowarc-test.warc.gz"),
                corpus.join("warc/jwat-valid-warcfile-utf8.warc"),
            ],
        ),
        (
            "arcs",
            vec![
                corpus.join("arc/jwat-1-1-20110922131213-00000-svc-VirtualBox.arc"),
                corpus.join("arc/httrack-v2-roundtrip.arc"),
                corpus.join("arc/warcio-example.arc"),
            ],
        ),
    ] {
        let pkg = tmp.path().join(name);
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        let o = Package::new().quiet().run_all(&pkg, &inputs);
        assert!(pkg.join("METS.xml").is_file(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        found.extend(designations(&std::fs::read_to_string(pkg.join("METS.xml")).unwrap()));
    }
    found.sort();
    found.dedup();
    let puids: Vec<&str> = found.iter().map(|f| f.2.as_str()).collect();
    let d = droid(&puids);
    for (name, version, puid) in &found {
        let f = &d["formats"][puid.as_str()];
        assert!(f.is_object(), "{puid} is not in {}", d["signature_file"]);
        assert_eq!(f["name"], name.as_str(), "{puid}: {found:?}");
        // PRONOM's version-less WARC entry (fmt/289) stands for the drafts; otherwise the
        // versions must be equal.
        if f["version"] != "" {
            assert_eq!(f["version"], version.as_str(), "{puid}: {found:?}");
        }
    }
    for expected in [
        ("WARC", "1.1", "fmt/1281"),
        ("WARC", "1.0", "fmt/1355"),
        ("WARC", "0.17", "fmt/289"),
        ("Internet Archive", "1.0", "x-fmt/219"),
        ("Internet Archive", "1.1", "fmt/410"),
    ] {
        let e = (expected.0.to_string(), expected.1.to_string(), expected.2.to_string());
        assert!(found.contains(&e), "{expected:?} not among {found:?}");
    }
    // ARC 2 has no PRONOM entry: its object states version 2 and no key, and the migration
    // event names it so.
    let arcs = std::fs::read_to_string(tmp.path().join("arcs/METS.xml")).unwrap();
    assert!(arcs.contains("<premis:formatVersion>2</premis:formatVersion>"));
    assert!(arcs.contains("from=&quot;ARC 2&quot;"), "no ARC 2 migration detail");
    assert!(
        arcs.contains("from=&quot;ARC 1.1 (fmt/410)&quot;; to=&quot;WARC 1.1 (fmt/1281)&quot;")
    );
}
