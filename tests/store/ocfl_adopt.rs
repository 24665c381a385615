//! OCFL replicas: what `store repair --adopt` may take as webaip's, what a put may build on,
//! and which objects are foreign after the state database was lost. Every root is validated
//! by ocfl-py afterwards.

use std::fs;
use std::path::{Path, PathBuf};

use super::ocfl::{
    assert_ocfl_valid, copy_as_is, files_of, forge_version, inventory, kind_on, no_env, object_dir,
    object_dir_of, ocfl_config_of, other_package, put, replica_findings,
};
use super::{objid, same_objid_pair, store};

const THREE: [&str; 3] = ["disk-a", "disk-b", "disk-c"];

fn stderr(v: &serde_json::Value) -> String {
    v["stderr"].as_str().unwrap_or_default().to_string()
}

/// A store (`store.toml`, `state.sqlite`) of the OCFL replicas `names` in `t` holding `a`,
/// the first of a pair of packages with one OBJID.
struct Held {
    cfg: PathBuf,
    a: PathBuf,
    b: PathBuf,
}

fn holding_a(t: &Path, names: &[&str]) -> Held {
    let (a, b) = same_objid_pair(t);
    let cfg = ocfl_config_of(t, "store.toml", "state.sqlite", names);
    put(&cfg, &a);
    Held { cfg, a, b }
}

/// A package `x` put onto the replicas `names` by another store (`other.toml`, its own
/// database), and its OBJID.
struct Foreign {
    x: PathBuf,
    xid: String,
}

fn put_by_another_store(t: &Path, names: &[&str]) -> Foreign {
    let x = other_package(t, "x");
    let xid = objid(&x);
    let other = ocfl_config_of(t, "other.toml", "other.sqlite", names);
    put(&other, &x);
    Foreign { x, xid }
}

fn snapshot(t: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    THREE.iter().map(|n| files_of(&t.join(n))).collect()
}

/// webaip committed v2 on every replica, and every replica was restored to v1: adopting the
/// object is refused (it would forget v2), the database still records v2, and check, get and
/// log still say the versions are missing.
#[test]
fn ocfl_adopt_never_forgets_a_later_version_webaip_committed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let Held { cfg, a, b } = holding_a(t, &THREE);
    let id = objid(&a);
    copy_as_is(&object_dir(&t.join("disk-a")), &t.join("v1"));
    put(&cfg, &b);
    for n in THREE {
        let obj = object_dir(&t.join(n));
        fs::remove_dir_all(&obj).unwrap();
        copy_as_is(&t.join("v1"), &obj);
    }
    let held = snapshot(t);
    let (code, r) = store(&no_env(), &cfg, &["repair", "--adopt", &id]);
    assert_eq!(code, 2, "{r:#}");
    let said = stderr(&r);
    assert!(said.contains("not adopted") && said.contains("v2"), "{said}");
    assert_eq!(snapshot(t), held, "a refused adoption wrote");
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    for n in THREE {
        assert_eq!(replica_findings(&c, n), ["rolled-back"], "{c:#}");
    }
    let out = t.join("got");
    let (code, g) = store(&no_env(), &cfg, &["get", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "the older head was served after an adoption: {g:#}");
    let (code, log) = store(&no_env(), &cfg, &["log", &id]);
    assert_eq!((code, log["recorded_head"].as_str()), (0, Some("v2")), "{log:#}");
    for n in THREE {
        assert_ocfl_valid(&t.join(n), 1);
    }
}

/// A later head webaip did not commit, on one replica of three (the object recorded at v1):
/// adopt refuses and names the count; on two of three (descending from the recorded v1) it is
/// adopted, the report names the holders and what webaip had recorded, and the third replica
/// is brought forward.
#[test]
fn ocfl_adopt_over_a_recorded_object_needs_most_replicas_and_says_what_it_takes() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let Held { cfg, a, .. } = holding_a(t, &THREE);
    let id = objid(&a);
    forge_version(&object_dir(&t.join("disk-c")), "evil.txt", b"evil", "mallory");
    let held = snapshot(t);
    let (code, r) = store(&no_env(), &cfg, &["repair", "--adopt", &id]);
    assert_eq!(code, 2, "a head on one replica of three was adopted: {r:#}");
    assert!(stderr(&r).contains("1 of 3"), "{r:#}");
    assert_eq!(snapshot(t), held, "a refused adoption wrote");
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!((code, replica_findings(&c, "disk-c")), (1, vec!["not-recorded".to_string()]));

    let obj_b = object_dir(&t.join("disk-b"));
    fs::remove_dir_all(&obj_b).unwrap();
    copy_as_is(&object_dir(&t.join("disk-c")), &obj_b);
    let (code, r) = store(&no_env(), &cfg, &["repair", "--adopt", &id]);
    assert_eq!(code, 0, "{r:#}");
    let adopted = &r["adopted"][0];
    assert_eq!(adopted["head"], "v2", "{r:#}");
    assert_eq!(adopted["replicas"], serde_json::json!(["disk-b", "disk-c"]), "{r:#}");
    assert_eq!(
        (adopted["configured"].as_u64(), adopted["recorded_before"].as_str()),
        (Some(3), Some("v1"))
    );
    assert_eq!(inventory(&object_dir(&t.join("disk-a")))["head"], "v2");
    for n in THREE {
        assert_ocfl_valid(&t.join(n), 1);
    }
}

/// An object written by another store (its own database) onto the replicas after webaip's
/// records began: a plain put of a package with its id is refused and points to --adopt,
/// writing nothing; once adopted, the put builds on it.
#[test]
fn ocfl_a_put_over_an_object_webaip_does_not_know_is_refused_until_adopted() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let names = ["disk-a", "disk-b"];
    let Held { cfg, .. } = holding_a(t, &names);
    let Foreign { x, xid } = put_by_another_store(t, &names);
    forge_version(&object_dir_of(&t.join("disk-a"), &xid), "evil.txt", b"evil", "mallory");
    let forged = object_dir_of(&t.join("disk-a"), &xid);
    let obj_b = object_dir_of(&t.join("disk-b"), &xid);
    fs::remove_dir_all(&obj_b).unwrap();
    copy_as_is(&forged, &obj_b);
    let held: Vec<_> = names.iter().map(|n| files_of(&t.join(n))).collect();
    let args = ["store", "--config", cfg.to_str().unwrap(), "put", x.to_str().unwrap()];
    let o = super::webaip(&no_env(), &args);
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a put made an unknown object webaip's: {said}");
    assert!(said.contains("--adopt"), "{said}");
    assert_eq!(names.iter().map(|n| files_of(&t.join(n))).collect::<Vec<_>>(), held);
    let out = t.join("got");
    let (code, g) = store(&no_env(), &cfg, &["get", &xid, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "an unknown object was served: {g:#}");

    let (code, r) = store(&no_env(), &cfg, &["repair", "--adopt", &xid]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["adopted"][0]["recorded_before"], serde_json::Value::Null, "{r:#}");
    let (code, p) = store(&no_env(), &cfg, &["put", x.to_str().unwrap()]);
    assert_eq!(code, 0, "{p:#}");
    assert_eq!(p["packages"][0]["version"], "v3", "{p:#}");
    for n in names {
        assert_ocfl_valid(&t.join(n), 2);
    }
}

/// The state database lost and a version forged on one replica of three: a check of that
/// replica alone cannot count the votes of the other two, so the object is not judged
/// (PARTIAL, never clean); the check of every replica counts them: no-majority (as get says).
#[test]
fn ocfl_a_check_of_one_replica_counts_the_majority_over_every_configured_one() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let Held { cfg, .. } = holding_a(t, &THREE);
    forge_version(&object_dir(&t.join("disk-a")), "evil.txt", b"evil", "mallory");
    fs::remove_file(t.join("state.sqlite")).unwrap();
    let (code, c) = store(&no_env(), &cfg, &["check", "--replica", "disk-a"]);
    assert_eq!(code, 0, "{c:#}");
    assert_eq!(
        c["run"]["verdict"], "partial",
        "a copy only one replica holds was called clean: {c:#}"
    );
    assert_eq!(replica_findings(&c, "disk-a"), ["not-judged"], "{c:#}");
    let detail = c["findings"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("2 replica(s) not checked"), "{detail}");
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    assert!(replica_findings(&c, "disk-a").contains(&"no-majority".to_string()), "{c:#}");
    for n in THREE {
        assert_ocfl_valid(&t.join(n), 1);
    }
}

/// An object of another store on three replicas, one copy's root sidecar overwritten: adopt
/// takes it from the two that read (naming the third as not read), and the repair rebuilds
/// the third from them.
#[test]
fn ocfl_adopt_takes_the_readable_copies_when_one_copy_is_damaged() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let Held { cfg, .. } = holding_a(t, &THREE);
    let Foreign { xid, .. } = put_by_another_store(t, &THREE);
    let good = files_of(&object_dir_of(&t.join("disk-a"), &xid));
    fs::write(object_dir_of(&t.join("disk-c"), &xid).join("inventory.json.sha512"), "0000")
        .unwrap();
    let (code, r) = store(&no_env(), &cfg, &["repair", "--adopt", &xid]);
    assert_eq!(code, 0, "{r:#}");
    let adopted = &r["adopted"][0];
    assert_eq!(adopted["replicas"], serde_json::json!(["disk-a", "disk-b"]), "{r:#}");
    assert!(adopted["unreadable"][0].as_str().unwrap().starts_with("disk-c: "), "{r:#}");
    assert_eq!(files_of(&object_dir_of(&t.join("disk-c"), &xid)), good);
    for n in THREE {
        assert_ocfl_valid(&t.join(n), 2);
    }
}

/// The state database lost; the first put after it records another object. The objects the
/// replicas held before are still judged by the replicas' majority, not called foreign: check
/// is clean, and a damaged copy is rebuilt (by consistency, so not recorded as webaip's).
#[test]
fn ocfl_after_a_lost_database_older_objects_stay_judged_by_majority() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let Held { cfg, a, .. } = holding_a(t, &THREE);
    let id = objid(&a);
    fs::remove_file(t.join("state.sqlite")).unwrap();
    let y = other_package(t, "y");
    put(&cfg, &y);
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 0, "{c:#}");
    let obj_c = object_dir_of(&t.join("disk-c"), &id);
    fs::remove_file(obj_c.join("v1/content/METS.xml")).unwrap();
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    assert!(kind_on(&r["check"], "unknown-object").is_empty(), "{r:#}");
    assert!(obj_c.join("v1/content/METS.xml").is_file());
    let (code, log) = store(&no_env(), &cfg, &["log", &id]);
    assert_eq!((code, log["provenance"].as_str()), (0, Some("no-record")), "{log:#}");
    // An object planted after the records began is still foreign.
    let z = other_package(t, "z");
    let other = ocfl_config_of(t, "other.toml", "other.sqlite", &["disk-a"]);
    put(&other, &z);
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!((code, kind_on(&c, "unknown-object").len()), (1, 1), "{c:#}");
    for n in THREE {
        assert_ocfl_valid(&t.join(n), if n == "disk-a" { 3 } else { 2 });
    }
}
