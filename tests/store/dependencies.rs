//! Dependencies between stored packages: a crawl deduplicated against an earlier one requires
//! it (its METS says so). `store put` records that (and warns of a dependency not stored),
//! `store check` names a dependency the store does not hold whole, `store remove` refuses to
//! delete a package another requires, and `rebuild-state` recovers the dependencies from the
//! stored METS.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{config, garage, objid, store};
use crate::util::{Package, oracle_python, repo};

/// The two generated crawls packaged, the second deduplicated against the first (not
/// deterministic: every run's identifiers are new, the bucket is shared).
pub(crate) fn deduplicated_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/dedup/gen_crawls.py"))
        .arg(dir)
        .output()
        .expect("the generator runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (p1, p2) = (dir.join("p1"), dir.join("p2"));
    Package::new().quiet().succeeds(&p1, &dir.join("crawl1/crawl1.warc.gz"));
    Package::new()
        .quiet()
        .args(&["--dedup-against", p1.to_str().unwrap()])
        .succeeds(&p2, &dir.join("crawl2/crawl2.warc.gz"));
    (p1, p2)
}

fn missing(check: &serde_json::Value) -> Vec<(String, String, String)> {
    check["missing_dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap().to_string();
            (s("package"), s("requires"), s("why"))
        })
        .collect()
}

#[cfg_attr(not(feature = "s3"), ignore = "needs a webaip built with the s3 feature")]
#[test]
fn a_required_package_is_not_removed_and_a_missing_one_is_named() {
    let _cluster = crate::util::garage_in_use();
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (p1, p2) = deduplicated_pair(t);
    let (id1, id2) = (objid(&p1), objid(&p2));
    let cfg = config(t, Some(&g));

    // The second first: stored, with a warning that what it requires is not.
    let (code, r) = store(&g, &cfg, &["put", p2.to_str().unwrap()]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["packages"][0]["requires"], serde_json::json!([id1]), "{r}");
    assert_eq!(r["packages"][0]["requires_missing"], serde_json::json!([id1]), "{r}");
    let (code, c) = store(&g, &cfg, &["check"]);
    assert_eq!(code, 1, "{c}");
    assert_eq!(missing(&c), [(id2.clone(), id1.clone(), "not in the store".into())]);
    let (code, r) = store(&g, &cfg, &["put", p1.to_str().unwrap()]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["packages"][0]["requires"], serde_json::json!([]));
    let (code, c) = store(&g, &cfg, &["check"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c}");

    // The first is required by the second: refused, naming it; nothing deleted.
    let (code, r) = store(&g, &cfg, &["remove", &id1, "--yes"]);
    assert_eq!(code, 2, "{r}");
    let err = r["stderr"].as_str().unwrap();
    assert!(err.contains("refused") && err.contains(&id2), "{err}");
    // Without --yes or --dry-run nothing is done.
    let (code, _) = store(&g, &cfg, &["remove", &id2]);
    assert_eq!(code, 2);
    let (code, c) = store(&g, &cfg, &["check"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c}");

    // A dry run lists every object of the second on both replicas and deletes none.
    let (code, r) = store(&g, &cfg, &["remove", &id2, "--dry-run"]);
    assert_eq!(code, 0, "{r}");
    let dir = r["dir"].as_str().unwrap().to_string();
    let files = fs::read_to_string(p2.join("manifest-sha512.txt")).unwrap().lines().count() + 1;
    for rep in r["replicas"].as_array().unwrap() {
        assert_eq!(rep["deleted"].as_array().unwrap().len(), files, "{rep}");
        assert_eq!(rep["deleted"][0], format!("{dir}/manifest-sha512.txt"), "manifest first");
    }
    assert!(t.join("disk").join(&dir).join("METS.xml").is_file());

    // Removed for real: gone from both replicas, and the first is free to go too.
    let (code, r) = store(&g, &cfg, &["remove", &id2, "--yes"]);
    assert_eq!((code, &r["removed"]), (0, &serde_json::json!(true)), "{r}");
    assert!(!t.join("disk").join(&dir).exists(), "the package directory is gone");
    let (code, c) = store(&g, &cfg, &["check"]);
    assert_eq!((code, &c["packages"]), (0, &serde_json::json!(1)), "{c}");
    let (code, r) = store(&g, &cfg, &["remove", &id1, "--yes"]);
    assert_eq!((code, &r["removed"]), (0, &serde_json::json!(true)), "{r}");
    let (code, r) = store(&g, &cfg, &["get", &id1, "--out", t.join("got").to_str().unwrap()]);
    assert_ne!(code, 0, "{r}");
}

#[test]
fn copies_deleted_by_hand_make_the_dependency_missing_and_rebuild_recovers_it() {
    let env = HashMap::new();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (p1, p2) = deduplicated_pair(t);
    let (id1, id2) = (objid(&p1), objid(&p2));
    let cfg = config(t, None);
    let (code, r) = store(&env, &cfg, &["put", p1.to_str().unwrap()]);
    assert_eq!(code, 0, "{r}");
    let dir1 = r["packages"][0]["dir"].as_str().unwrap().to_string();
    let (code, r) = store(&env, &cfg, &["put", p2.to_str().unwrap()]);
    assert_eq!((code, &r["packages"][0]["requires_missing"]), (0, &serde_json::json!([])), "{r}");

    // `audit --store` follows every revisit of the second into the first, fetched from the
    // store; once the first's copies are gone, it names every revisit unresolved.
    let audit = || {
        let o = crate::util::webaip(&[
            "audit",
            "--json",
            "--store",
            cfg.to_str().unwrap(),
            p2.to_str().unwrap(),
        ]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (
            o.status.code(),
            v["packages"][0]["references"].clone(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, refs, _) = audit();
    let revisits = refs["revisits"].as_u64().unwrap();
    assert!(revisits > 40, "{refs}");
    assert_eq!((code, &refs["resolved"]), (Some(0), &serde_json::json!(revisits)), "{refs}");

    fs::remove_dir_all(t.join("disk").join(&dir1)).unwrap();
    // p2's own bytes are whole: what it refers to is missing from the store (unchecked, a
    // warning naming the package), which `store check` reports as a missing dependency.
    let (code, refs, why) = audit();
    assert_eq!(code, Some(0), "{refs}");
    assert_eq!(refs["unresolved"].as_array().unwrap().len() as u64, revisits, "{refs}");
    assert!(why.contains(&format!("required package {id1}")), "{why}");
    // The advice says what was given: a store, which lacks it.
    let problem = refs["unresolved"][0]["problem"].as_str().unwrap();
    assert!(problem.contains("the store given does not hold it"), "{problem}");
    assert!(!problem.contains("(or --store)"), "{problem}");
    let (code, c) = store(&env, &cfg, &["check"]);
    assert_eq!(code, 1, "{c}");
    let m = missing(&c);
    assert_eq!(m.len(), 1, "{c}");
    assert_eq!((&m[0].0, &m[0].1), (&id2, &id1));
    assert!(m[0].2.starts_with("no replica holds it whole"), "{m:?}");

    // The state rebuilt from the replicas: the dependency is read from the stored METS.
    fs::remove_file(t.join("state.sqlite")).unwrap();
    let (code, r) = store(&env, &cfg, &["rebuild-state"]);
    assert_eq!(code, 0, "{r}");
    let (code, c) = store(&env, &cfg, &["check"]);
    assert_eq!(code, 1, "{c}");
    assert_eq!(missing(&c), [(id2, id1, "not in the store".into())]);
}
