//! `ingest --store` on OCFL replicas: the AIP of a stored submission is the next version of
//! the submission's object, adding only the files whose digests are new (its METS and
//! manifest), never the containers again; `store get` of the AIP's OBJID gives the AIP back
//! byte for byte and the submission stays version 1. ocfl-py validates every replica.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::ocfl::{assert_ocfl_valid, files_of, ocfl_config, put};
use super::{objid, store};
use crate::util::{Package, copy_tree, package, repo, webaip_command};

/// Every file below a storage root with its size.
fn sizes_of(root: &Path) -> BTreeMap<String, u64> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            (rel, e.metadata().unwrap().len())
        })
        .collect()
}

/// `webaip ingest --json --store CFG SSIP -o OUT`: the one package's report.
pub(super) fn ingest_to_store(cfg: &Path, ssip: &Path, out: &Path) -> serde_json::Value {
    let o = webaip_command()
        .args(["ingest", "--json", "--deterministic", "--store"])
        .args([cfg, ssip])
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    v["packages"][0].clone()
}

pub(super) fn submission(dir: &Path) -> std::path::PathBuf {
    let ssip = dir.join("ssip");
    package(
        Package::new().quiet().args(&["--deterministic"]),
        &ssip,
        &[&repo().join("samples/heritrix-job")],
    )
    .succeeded();
    ssip
}

/// A submission put to a two-replica OCFL store in `dir`, and its AIP made and stored by
/// `ingest --store` (kept as the submission object's next version).
struct StoredWithAip {
    ssip: std::path::PathBuf,
    cfg: std::path::PathBuf,
    /// `ingest --json`'s report of the AIP.
    ingested: serde_json::Value,
    /// The AIP ingest wrote.
    aip: std::path::PathBuf,
}

fn stored_with_aip(dir: &Path) -> StoredWithAip {
    let ssip = submission(dir);
    let cfg = ocfl_config(dir);
    put(&cfg, &ssip);
    let ingested = ingest_to_store(&cfg, &ssip, &dir.join("aips"));
    let aip = Path::new(ingested["aip"].as_str().unwrap()).to_path_buf();
    StoredWithAip { ssip, cfg, ingested, aip }
}

#[test]
fn the_aip_of_a_stored_submission_is_its_next_version_and_stores_no_container_again() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission(tmp.path());
    let cfg = ocfl_config(tmp.path());
    assert_eq!(put(&cfg, &ssip)["version"], "v1");
    let roots = ["disk-a", "disk-b"].map(|d| tmp.path().join(d));
    let before: Vec<BTreeMap<String, u64>> = roots.iter().map(|r| sizes_of(r)).collect();

    let ingested = ingest_to_store(&cfg, &ssip, &tmp.path().join("aips"));
    let aip = Path::new(ingested["aip"].as_str().unwrap()).to_path_buf();
    let (aip_id, ssip_id) = (objid(&aip), objid(&ssip));
    assert_ne!(aip_id, ssip_id);
    let stored = &ingested["stored"];
    let kept = (stored["package"].as_str(), stored["object"].as_str(), stored["version"].as_str());
    assert_eq!(kept, (Some(&*aip_id), Some(&*ssip_id), Some("v2")), "{stored:#}");

    // What each replica gained: the new head inventory, v2's inventory, and v2's content
    // for exactly the AIP files whose digests the submission does not have.
    let (in_ssip, in_aip) = (files_of(&ssip), files_of(&aip));
    let old: BTreeSet<&String> = in_ssip.values().collect();
    let new_content: BTreeSet<String> =
        in_aip.iter().filter(|(_, d)| !old.contains(d)).map(|(p, _)| p.clone()).collect();
    assert_eq!(new_content, BTreeSet::from(["METS.xml".into(), "manifest-sha512.txt".into()]));
    let containers: u64 = in_aip
        .keys()
        .filter(|p| p.contains(".warc"))
        .map(|p| std::fs::metadata(aip.join(p)).unwrap().len())
        .sum();
    assert!(containers > 0);
    for (root, before) in roots.iter().zip(&before) {
        let after = sizes_of(root);
        let gained: BTreeMap<&String, &u64> =
            after.iter().filter(|(p, s)| before.get(*p) != Some(*s)).collect();
        let content: BTreeSet<String> = gained
            .keys()
            .filter_map(|p| p.split_once("/v2/content/").map(|(_, rel)| rel.to_string()))
            .collect();
        assert_eq!(content, new_content, "{gained:#?}");
        let versions = gained.keys().filter(|p| p.contains("/v2/") && !p.contains("/content/"));
        assert_eq!(versions.count(), 2, "v2's inventory and sidecar: {gained:#?}");
        let added: u64 = gained.values().copied().sum();
        let aip_bytes: u64 =
            in_aip.keys().map(|p| std::fs::metadata(aip.join(p)).unwrap().len()).sum();
        assert!(added < aip_bytes - containers + 64 * 1024, "{added} bytes added: {gained:#?}");
        assert_ocfl_valid(root, 1);
    }

    // The AIP comes back by its own OBJID; the submission is still version 1 of its object.
    let got = tmp.path().join("got-aip");
    let (code, g) =
        store(&Default::default(), &cfg, &["get", &aip_id, "--out", got.to_str().unwrap()]);
    assert_eq!(code, 0, "{g:#}");
    assert_eq!(files_of(&got), in_aip);
    let got = tmp.path().join("got-ssip");
    let (code, g) = store(
        &Default::default(),
        &cfg,
        &["get", &ssip_id, "--version", "1", "--out", got.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{g:#}");
    assert_eq!(files_of(&got), in_ssip);
    // The versions are the object's: one asked of the AIP is refused, saying where it is.
    let (code, g) = store(
        &Default::default(),
        &cfg,
        &["get", &aip_id, "--version", "1", "--out", tmp.path().join("x").to_str().unwrap()],
    );
    assert_ne!(code, 0, "{g:#}");
    assert!(g.to_string().contains(&format!("v2 of object {ssip_id}")), "{g:#}");
    let (code, log) = store(&Default::default(), &cfg, &["log", &aip_id]);
    assert_eq!(code, 0, "{log:#}");
    let messages: Vec<&str> =
        log["versions"].as_array().unwrap().iter().filter_map(|v| v["message"].as_str()).collect();
    assert_eq!(messages.len(), 2, "{log:#}");
    assert!(messages[1].contains(&aip_id), "{log:#}");

    // The same AIP again is no new version.
    let (code, again) = store(&Default::default(), &cfg, &["put", aip.to_str().unwrap()]);
    assert_eq!((code, again["packages"][0]["version"].as_str()), (0, Some("v2")), "{again:#}");
}

#[test]
fn the_aip_of_a_submission_the_store_does_not_hold_is_an_object_of_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission(tmp.path());
    let cfg = ocfl_config(tmp.path());
    let ingested = ingest_to_store(&cfg, &ssip, &tmp.path().join("aips"));
    let aip = Path::new(ingested["aip"].as_str().unwrap()).to_path_buf();
    assert_eq!(ingested["stored"]["version"], "v1", "{ingested:#}");
    let (code, list) = store(&Default::default(), &cfg, &["list"]);
    assert_eq!(code, 0, "{list:#}");
    let ids: BTreeSet<&str> =
        list["objects"].as_array().unwrap().iter().filter_map(|o| o["id"].as_str()).collect();
    assert_eq!(ids, BTreeSet::from([objid(&aip).as_str()]), "{list:#}");
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
}

/// An AIP whose METS names a stored package as its submission but does not have that
/// package's containers (a forged or mistaken `altRecordID`) is not put as that package's
/// next version: it becomes an object of its own, and the other object is left as it was.
#[test]
fn an_aip_naming_a_stored_package_whose_containers_it_lacks_gets_an_object_of_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &ssip);
    let root = tmp.path().join("disk-a");
    let before = files_of(&root);
    // Another packaging of the same harvest: other record ids, so other container bytes.
    let other = tmp.path().join("other");
    package(Package::new().quiet(), &other, &[&repo().join("samples/heritrix-job")]).succeeded();
    let o = webaip_command()
        .args(["ingest", "--quiet", "-o"])
        .args([&tmp.path().join("aips"), &other])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let aip = tmp.path().join("aips/other");
    let (named, forged) = (objid(&other), objid(&ssip));
    let mets = std::fs::read_to_string(aip.join("METS.xml")).unwrap();
    let tag = format!(r#"<mets:altRecordID TYPE="sSIP OBJID">{named}<"#);
    assert_eq!(mets.matches(&tag).count(), 1, "{mets}");
    let mets = mets.replace(&tag, &format!(r#"<mets:altRecordID TYPE="sSIP OBJID">{forged}<"#));
    std::fs::write(aip.join("METS.xml"), &mets).unwrap();
    let manifest = std::fs::read_to_string(aip.join("manifest-sha512.txt")).unwrap();
    let line = manifest.lines().find(|l| l.ends_with("  METS.xml")).unwrap();
    let digest = super::sha512_hex(mets.as_bytes());
    let manifest = manifest.replace(line, &format!("{digest}  METS.xml"));
    std::fs::write(aip.join("manifest-sha512.txt"), manifest).unwrap();

    let r = put(&cfg, &aip);
    let kept = (r["object"].as_str(), r["version"].as_str());
    assert_eq!(kept, (Some(objid(&aip).as_str()), Some("v1")), "{r:#}");
    let after = files_of(&root);
    let submission_files = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        let obj = before.keys().find(|k| k.ends_with("/0=ocfl_object_1.1")).unwrap();
        let dir = obj.trim_end_matches("0=ocfl_object_1.1").to_string();
        m.iter().filter(|(k, _)| k.starts_with(&dir)).map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    assert_eq!(submission_files(&after), submission_files(&before));
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 2);
    }
}

/// Rewrites `pkg`'s METS as `edit` says and its manifest's METS line to match.
fn edit_mets(pkg: &Path, edit: &dyn Fn(String) -> String) {
    let mets = edit(std::fs::read_to_string(pkg.join("METS.xml")).unwrap());
    std::fs::write(pkg.join("METS.xml"), &mets).unwrap();
    let manifest = std::fs::read_to_string(pkg.join("manifest-sha512.txt")).unwrap();
    let line = manifest.lines().find(|l| l.ends_with("  METS.xml")).unwrap();
    let digest = super::sha512_hex(mets.as_bytes());
    let manifest = manifest.replace(line, &format!("{digest}  METS.xml"));
    std::fs::write(pkg.join("manifest-sha512.txt"), manifest).unwrap();
}

/// `store get ID --out DIR` (exit 0), the files it gave.
fn got(cfg: &Path, id: &str, out: &Path) -> BTreeMap<String, String> {
    let (code, g) = store(&Default::default(), cfg, &["get", id, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{g:#}");
    files_of(out)
}

/// The versions `store log ID` lists.
fn versions(cfg: &Path, id: &str) -> usize {
    let (code, log) = store(&Default::default(), cfg, &["log", id]);
    assert_eq!(code, 0, "{log:#}");
    log["versions"].as_array().unwrap().len()
}

/// An AIP records the submission it was made from by its METS's SHA-512 as well as its
/// OBJID; a package naming the submission whose digest is not the stored submission's METS is
/// an object of its own. A relabelled copy of the stored AIP (another OBJID, the same claims)
/// may share the object's containers, but `store get SIP` gives the submission itself,
/// whatever came after it, and `store get AIP` the AIP.
#[test]
fn a_package_claiming_a_stored_submission_never_becomes_what_get_of_the_submission_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let StoredWithAip { ssip, cfg, aip, .. } = stored_with_aip(tmp.path());
    let (aip_id, ssip_id) = (objid(&aip), objid(&ssip));
    let mets = std::fs::read_to_string(aip.join("METS.xml")).unwrap();
    let ssip_sha = super::sha512_hex(&std::fs::read(ssip.join("METS.xml")).unwrap());
    let by_digest = format!(r#"<mets:altRecordID TYPE="sSIP METS SHA-512">{ssip_sha}<"#);
    assert_eq!(mets.matches(&by_digest).count(), 1, "ingest records the digest: {mets}");

    // A relabelled copy of the AIP: the review's impostor.
    let evil = tmp.path().join("evil");
    copy_tree(&aip, &evil);
    let evil_id = "urn:uuid:eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee";
    edit_mets(&evil, &|m| {
        m.replacen(&format!(r#"OBJID="{aip_id}""#), &format!(r#"OBJID="{evil_id}""#), 1).replacen(
            "LABEL=\"",
            "LABEL=\"EVIL relabelled ",
            1,
        )
    });
    put(&cfg, &evil);
    assert_eq!(got(&cfg, &ssip_id, &tmp.path().join("g-ssip")), files_of(&ssip));
    assert_eq!(got(&cfg, &aip_id, &tmp.path().join("g-aip")), files_of(&aip));
    assert_eq!(got(&cfg, evil_id, &tmp.path().join("g-evil")), files_of(&evil));

    // The digest of another submission (or none): an object of its own.
    let other = tmp.path().join("other");
    copy_tree(&aip, &other);
    let other_id = "urn:uuid:0ddba11a-0000-4000-8000-000000000000";
    edit_mets(&other, &|m| {
        m.replacen(&format!(r#"OBJID="{aip_id}""#), &format!(r#"OBJID="{other_id}""#), 1)
            .replace(&ssip_sha, &"ab".repeat(64))
    });
    let r = put(&cfg, &other);
    assert_eq!((r["object"].as_str(), r["version"].as_str()), (Some(other_id), Some("v1")));
    assert_eq!(got(&cfg, &ssip_id, &tmp.path().join("g-ssip2")), files_of(&ssip));
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 2);
    }
}

/// The submission put again after its AIP, and the same deterministic ingest again, add no
/// version: each is what a version of the object already holds for that package.
#[test]
fn putting_a_submission_or_its_aip_again_adds_no_version_whatever_came_between() {
    let tmp = tempfile::tempdir().unwrap();
    let StoredWithAip { ssip, cfg, ingested, .. } = stored_with_aip(tmp.path());
    let ssip_id = objid(&ssip);
    assert_eq!(versions(&cfg, &ssip_id), 2);
    let again = put(&cfg, &ssip);
    assert_eq!(again["version"], "v1", "the submission's own version: {again:#}");
    let written = again["copies"].as_array().unwrap().iter().filter(|c| c["status"] != "present");
    assert_eq!(written.count(), 0, "{again:#}");
    assert_eq!(versions(&cfg, &ssip_id), 2, "no version added");
    let rerun = ingest_to_store(&cfg, &ssip, &tmp.path().join("aips-again"));
    assert_eq!(rerun["objid"], ingested["objid"], "deterministic: {rerun:#}");
    assert_eq!(rerun["stored"]["version"], "v2", "{rerun:#}");
    assert_eq!(versions(&cfg, &ssip_id), 2, "no version added");
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
}

/// With the state database lost (or a put killed before it recorded where the AIP is),
/// `store get AIP` finds the AIP by the version message webaip wrote, in the object's
/// reference head.
#[test]
fn an_aip_kept_in_its_submissions_object_is_found_after_the_database_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let StoredWithAip { cfg, aip, .. } = stored_with_aip(tmp.path());
    let aip_id = objid(&aip);
    // A put killed between its commits and recording the AIP's place: the records say the
    // object's kept packages are recorded up to v1 only (the submission's put), so its v2 is
    // searched by its inventory.
    let db = rusqlite::Connection::open(tmp.path().join("state.sqlite")).unwrap();
    db.execute("DELETE FROM ocfl_package", []).unwrap();
    let marked = "SELECT head FROM ocfl_kept_recorded";
    assert_eq!(db.query_row(marked, [], |r| r.get::<_, String>(0)).unwrap(), "v2");
    db.execute("UPDATE ocfl_kept_recorded SET head = 'v1'", []).unwrap();
    drop(db);
    assert_eq!(got(&cfg, &aip_id, &tmp.path().join("g1")), files_of(&aip));
    for f in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm"] {
        let _ = std::fs::remove_file(tmp.path().join(f));
    }
    assert_eq!(got(&cfg, &aip_id, &tmp.path().join("g2")), files_of(&aip));
    let (code, g) = store(
        &Default::default(),
        &cfg,
        &["get", "urn:uuid:nothing-here", "--out", tmp.path().join("g3").to_str().unwrap()],
    );
    assert_eq!(code, 2, "{g:#}");
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
}
