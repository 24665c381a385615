//! `store rebuild-state` on OCFL replicas: after the state database is lost, every object most
//! replicas hold at one head is recorded as the puts recorded it (its head on each replica
//! holding it, an AIP kept in its submission's object, what each package requires), so get,
//! log, list and check say what they said before; an object held by too few replicas, or one
//! that arrived after the records began, is refused and named, never recorded; a record is
//! never overridden. The state database is read with SQLite directly, not through webaip.

use std::collections::BTreeSet;
use std::path::Path;

use super::dependencies::deduplicated_pair;
use super::ocfl::{assert_ocfl_valid, files_of, no_env, ocfl_config_of, other_package, put};
use super::ocfl_ingest::ingest_to_store;
use super::ocfl_root::forget_state;
use super::{objid, same_objid_pair, store};
use crate::util::{Package, package, repo};

type Rows = BTreeSet<Vec<String>>;

/// Every row of `table` (its columns `cols`) in the state database `db`.
fn rows(db: &Path, table: &str, cols: &str) -> Rows {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c.prepare(&format!("SELECT {cols} FROM {table}")).unwrap();
    let n = st.column_count();
    let got = st
        .query_map([], |r| (0..n).map(|i| r.get::<_, String>(i)).collect::<Result<Vec<_>, _>>())
        .unwrap();
    got.map(Result::unwrap).collect()
}

/// What the puts recorded that rebuild-state must find again (the time of each row aside).
fn records(db: &Path) -> [Rows; 4] {
    [
        rows(db, "ocfl_head", "identifier, replica, head, inventory_sha512"),
        rows(db, "ocfl_package", "package, object, version"),
        rows(db, "ocfl_dependency", "package, requires"),
        rows(db, "ocfl_inventory", "identifier, head, inventory_sha512"),
    ]
}

fn strings(v: &serde_json::Value) -> BTreeSet<String> {
    let a = v.as_array().unwrap_or_else(|| panic!("not a list: {v:#}"));
    a.iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

/// The check's JSON with what may differ between two runs left out (nothing should).
fn verdict(c: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "findings": c["findings"],
        "missing": c["missing_dependencies"],
        "clean": c["clean"],
        "objects": c["objects"],
    })
}

/// A submission, its AIP kept as the submission object's v2 (`ingest --store`), and a crawl
/// deduplicated against another that is not stored. The database lost, rebuild-state records
/// the three packages' places and dependencies exactly as the puts did; check (and `--deep`)
/// lists the missing dependency again and nothing else; get and log work as before; a second
/// run leaves every record as it is. ocfl-py validates both roots.
#[test]
fn ocfl_rebuild_state_records_every_object_its_kept_aip_and_what_packages_require() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (p1, p2) = deduplicated_pair(t);
    let (id1, id2) = (objid(&p1), objid(&p2));
    let ssip = t.join("ssip");
    let sample = repo().join("samples/heritrix-job");
    package(Package::new().quiet().args(&["--deterministic"]), &ssip, &[&sample]).succeeded();
    let sid = objid(&ssip);
    let cfg = ocfl_config_of(t, "store.toml", "state.sqlite", &["disk-a", "disk-b"]);
    put(&cfg, &ssip);
    let ingested = ingest_to_store(&cfg, &ssip, &t.join("aips"));
    let aip = std::path::PathBuf::from(ingested["aip"].as_str().unwrap());
    let aid = objid(&aip);
    assert_eq!(ingested["stored"]["version"], "v2", "{ingested:#}");
    put(&cfg, &p2);
    let db = t.join("state.sqlite");
    let before = records(&db);
    assert!(before[1].contains(&vec![aid.clone(), sid.clone(), "v2".into()]), "{before:?}");
    assert!(before[2].contains(&vec![id2.clone(), id1.clone()]), "{before:?}");
    let (code, checked) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "the dependency is not stored: {checked:#}");
    let (_, logged) = store(&no_env(), &cfg, &["log", &sid]);

    forget_state(&db);
    let (code, r) = store(&no_env(), &cfg, &["rebuild-state"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(strings(&r["packages"]), BTreeSet::from([sid.clone(), id2.clone()]), "{r:#}");
    assert_eq!(r["refused"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["left_as_recorded"], serde_json::json!([]), "{r:#}");
    assert_eq!(records(&db), before, "the records as the puts made them");
    // Every version read: the check's search for the required package relies on the records.
    let marked = rows(&db, "ocfl_kept_recorded", "identifier, head");
    let all = [vec![sid.clone(), "v2".into()], vec![id2.clone(), "v1".into()]];
    assert_eq!(marked, Rows::from(all), "{marked:?}");

    for deep in [&["check"][..], &["check", "--deep"]] {
        let (code, c) = store(&no_env(), &cfg, deep);
        assert_eq!((code, verdict(&c)), (1, verdict(&checked)), "{c:#}");
    }
    let missing = &checked["missing_dependencies"];
    assert_eq!(missing[0]["package"], id2.as_str(), "{checked:#}");
    assert_eq!(missing[0]["requires"], id1.as_str(), "{checked:#}");
    assert_eq!(missing[0]["why"], "not in the store", "{checked:#}");
    let (code, log) = store(&no_env(), &cfg, &["log", &sid]);
    assert_eq!((code, &log), (0, &logged), "recorded again, so `recorded`: {log:#}");
    for (n, (id, pkg)) in [(&aid, &aip), (&sid, &ssip), (&id2, &p2)].into_iter().enumerate() {
        let out = t.join(format!("got-{n}"));
        let (code, g) = store(&no_env(), &cfg, &["get", id, "--out", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{g:#}");
        assert_eq!(files_of(&out), files_of(pkg), "{id}");
    }

    // Run again: nothing is recorded over what is.
    let (code, again) = store(&no_env(), &cfg, &["rebuild-state"]);
    assert_eq!(code, 0, "{again:#}");
    assert_eq!(again["packages"], serde_json::json!([]), "{again:#}");
    assert_eq!(strings(&again["left_as_recorded"]), BTreeSet::from([sid, id2]), "{again:#}");
    assert_eq!(records(&db), before);

    // The required package stored: nothing is missing.
    put(&cfg, &p1);
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!((code, &c["missing_dependencies"]), (0, &serde_json::json!([])), "{c:#}");
    for n in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&t.join(n), 3);
    }
}

/// A copy restored to an older version, found so by rebuild-state (two replicas of three at
/// v2, one at v1): the earlier head is recorded from v1's own inventory, so the old copy is
/// webaip's, behind, and repair brings it to v2 (not an unknown version left alone).
#[test]
fn ocfl_rebuild_state_knows_an_older_copy_as_behind_and_repair_brings_it_forward() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let names = ["disk-a", "disk-b", "disk-c"];
    let cfg = ocfl_config_of(t, "store.toml", "state.sqlite", &names);
    let (a, b) = same_objid_pair(t);
    let id = objid(&a);
    put(&cfg, &a);
    let old = t.join("disk-b-at-v1");
    let copied =
        std::process::Command::new("cp").arg("-a").arg(t.join("disk-b")).arg(&old).status();
    assert!(copied.unwrap().success());
    put(&cfg, &b);
    let db = t.join("state.sqlite");
    let before = records(&db);
    assert_eq!(before[3].len(), 2, "v1 and v2 recorded by the puts: {:?}", before[3]);

    forget_state(&db);
    std::fs::remove_dir_all(t.join("disk-b")).unwrap();
    std::fs::rename(&old, t.join("disk-b")).unwrap();
    let (code, r) = store(&no_env(), &cfg, &["rebuild-state"]);
    assert_eq!((code, &r["packages"]), (0, &serde_json::json!([id])), "{r:#}");
    assert_eq!(records(&db)[3], before[3], "both heads' inventories, as the puts recorded them");
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    let kinds: BTreeSet<&str> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["replica"], "disk-b", "{c:#}");
            f["kind"].as_str().unwrap()
        })
        .collect();
    assert!(!kinds.contains("not-recorded"), "{c:#}");
    let (code, rep) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{rep:#}");
    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    for n in names {
        assert_ocfl_valid(&t.join(n), 1);
    }
}

/// An object one replica of two holds (put there by another store) is no majority: after the
/// database is lost it is refused and named, never recorded, and check still reports it. An
/// object planted on both replicas after the rebuilt records began is foreign: refused too
/// (`repair --adopt` is the way to take it), and the objects recorded are left as they are.
#[test]
fn ocfl_rebuild_state_refuses_a_minority_object_and_one_planted_after_the_records() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cfg = ocfl_config_of(t, "store.toml", "state.sqlite", &["disk-a", "disk-b"]);
    let a = other_package(t, "a");
    put(&cfg, &a);
    let x = other_package(t, "x");
    put(&ocfl_config_of(t, "other.toml", "other.sqlite", &["disk-a"]), &x);
    let (aid, xid) = (objid(&a), objid(&x));
    let db = t.join("state.sqlite");
    let heads = |id: &str| {
        let all = rows(&db, "ocfl_head", "identifier, replica");
        all.into_iter().filter(|r| r[0] == id).map(|r| r[1].clone()).collect::<Vec<_>>()
    };

    forget_state(&db);
    let (code, r) = store(&no_env(), &cfg, &["rebuild-state"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["packages"], serde_json::json!([aid]), "{r:#}");
    let refused: Vec<String> = strings(&r["refused"]).into_iter().collect();
    assert_eq!(refused.len(), 1, "{r:#}");
    assert!(refused[0].contains(&xid) && refused[0].contains("held by 1 of 2"), "{r:#}");
    assert_eq!(heads(&aid), ["disk-a", "disk-b"]);
    assert!(heads(&xid).is_empty(), "never recorded");
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    let on_x = |c: &serde_json::Value| {
        let f = c["findings"].as_array().unwrap();
        f.iter().filter(|f| f["detail"].as_str().unwrap_or_default().contains("1 of 2")).count()
    };
    assert!(on_x(&c) > 0, "the minority object is still reported: {c:#}");

    // Planted on both replicas after the records began: foreign, whatever the majority.
    let z = other_package(t, "z");
    put(&ocfl_config_of(t, "other2.toml", "other2.sqlite", &["disk-a", "disk-b"]), &z);
    let zid = objid(&z);
    let (code, r) = store(&no_env(), &cfg, &["rebuild-state"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["packages"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["left_as_recorded"], serde_json::json!([aid]), "{r:#}");
    let refused = strings(&r["refused"]);
    assert!(refused.iter().any(|w| w.contains(&zid) && w.contains("--adopt")), "{r:#}");
    assert!(refused.iter().any(|w| w.contains(&xid)), "{r:#}");
    assert!(heads(&zid).is_empty(), "never recorded");
    assert_ocfl_valid(&t.join("disk-a"), 3);
}

/// A bucket replica and a file system one: a submission and its AIP (v2) recorded again
/// after the database is lost, the AIP's place with them; check --deep is clean and get gives
/// the AIP back byte for byte.
#[cfg(feature = "s3")]
#[test]
fn ocfl_rebuild_state_on_a_bucket_root_records_the_object_and_its_aip() {
    let _cluster = crate::util::garage_in_use();
    let g = super::garage();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let cfg = super::ocfl_bucket::config(t, &g, &format!("rebuild-{}/", nanos.as_nanos()));
    let ssip = t.join("ssip");
    let sample = repo().join("samples/heritrix-job");
    package(Package::new().quiet().args(&["--deterministic"]), &ssip, &[&sample]).succeeded();
    let (code, r) = store(&g, &cfg, &["put", ssip.to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    let o = crate::util::webaip_command()
        .args(["ingest", "--json", "--deterministic", "--store"])
        .args([&cfg, &ssip])
        .arg("-o")
        .arg(t.join("aips"))
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    let aip = std::path::PathBuf::from(v["packages"][0]["aip"].as_str().unwrap());
    let db = t.join("state.sqlite");
    let before = records(&db);

    forget_state(&db);
    let (code, r) = store(&g, &cfg, &["rebuild-state"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["packages"], serde_json::json!([objid(&ssip)]), "{r:#}");
    assert_eq!(records(&db), before, "the records as the puts made them");
    let (code, c) = store(&g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    let out = t.join("got");
    let (code, got) = store(&g, &cfg, &["get", &objid(&aip), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{got:#}");
    assert_eq!(files_of(&out), files_of(&aip));
}
