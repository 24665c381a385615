//! The official schemas ship inside webaip: a user with no schema folder, no flag and no
//! network gets XML Schema validation, against byte-for-byte the copies the tests' oracle
//! (xmllint on ../shared/xsd) uses; the folder they are written to for libxml2 is removed.

use std::fs;
use std::path::Path;

use crate::mets_package::oracle_validate_with;
use crate::util::{Package, json, sample, schemas, webaip_command};

const ARCHIVEMATICA: &str = "examples/reference/archivematica-aip-premis3.xml";

/// `webaip validate --json DOC` run from `cwd` (no ../shared there) with `tmp` as TMPDIR.
fn validate_from(cwd: &Path, tmp: &Path, doc: &Path) -> (i32, serde_json::Value) {
    let o = webaip_command()
        .current_dir(cwd)
        .env("TMPDIR", tmp)
        .args(["validate", "--json", doc.to_str().unwrap()])
        .output()
        .unwrap();
    (o.status.code().unwrap(), crate::util::only_report(&json(&o)))
}

fn schema_folders(tmp: &Path) -> Vec<String> {
    let names = fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name());
    names
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.starts_with("webaip-xsd-"))
        .collect()
}

#[test]
fn an_element_the_schema_forbids_is_invalid_without_any_flag() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    fs::create_dir(&tmp).unwrap();
    // A folder a killed run left (unlocked): removed by the next validation.
    fs::create_dir(tmp.join("webaip-xsd-dead01")).unwrap();
    let good = dir.path().join("good.xml");
    fs::copy(schemas().join(ARCHIVEMATICA), &good).unwrap();
    let (code, r) = validate_from(dir.path(), &tmp, &good);
    assert_eq!(
        (code, &r["xsd"]["status"], &r["xsd"]["built_in"]),
        (0, &"validated".into(), &true.into()),
        "{r:#}"
    );

    let text = fs::read_to_string(&good).unwrap();
    let hdr = text.find("<mets:metsHdr").unwrap();
    let bad = dir.path().join("bad.xml");
    fs::write(&bad, format!("{}<mets:notInMets/>{}", &text[..hdr], &text[hdr..])).unwrap();
    let (ok, _) = oracle_validate_with(&bad, "mets-bundle.xsd");
    assert!(!ok, "the oracle rejects it too");
    let (code, r) = validate_from(dir.path(), &tmp, &bad);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["valid"], false);
    let xsd: Vec<&serde_json::Value> =
        r["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "XSD").collect();
    assert!(xsd.iter().any(|f| f["message"].as_str().unwrap().contains("notInMets")), "{r:#}");
    assert!(schema_folders(&tmp).is_empty(), "{:?}", schema_folders(&tmp));
}

#[test]
fn package_validates_against_the_schemas_without_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pkg");
    let o = Package::new().deterministic().run(&out, &sample("nedlib"));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("and XML schemas"), "{text}");
    assert!(!text.contains("not checked"), "{text}");
}
