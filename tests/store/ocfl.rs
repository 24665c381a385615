//! `webaip store` with replicas that are OCFL 1.1 storage roots (`layout = "ocfl"`): put,
//! versions, get of each version, log and list, check (which writes nothing) and repair of
//! damage, killed puts, hostile inventories. Every replica is validated by ocfl-py, an
//! independent implementation, with 0 errors and 0 warnings.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{same_objid_pair, sha512_hex, store};
use crate::util::repo;

/// Two file system OCFL replicas, `disk-a` and `disk-b`, under `dir`.
pub(super) fn ocfl_config(dir: &Path) -> PathBuf {
    let mut text = format!(
        "state = \"{}\"\n\n[user]\nname = \"webaip tests\"\naddress = \"mailto:tests@example.org\"\n",
        dir.join("state.sqlite").display()
    );
    for name in ["disk-a", "disk-b"] {
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{}\"\n",
            dir.join(name).display()
        ));
    }
    let path = dir.join("store.toml");
    fs::write(&path, text).unwrap();
    path
}

fn no_env() -> std::collections::HashMap<String, String> {
    Default::default()
}

/// ocfl-py's verdict on a storage root: valid, every object valid and where the layout puts
/// it, no error and no warning.
fn assert_ocfl_valid(root: &Path, objects: u64) {
    let o = Command::new(repo().join(".venv/bin/python"))
        .arg(repo().join("tests/store/ocfl_validate.py"))
        .arg(root)
        .output()
        .expect("the ocfl-py oracle runs (scripts/setup-test-env.sh installs it)");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(v["valid"], true, "{}: {v:#}", root.display());
    assert_eq!(v["messages"], serde_json::json!([]), "{}: {v:#}", root.display());
    assert_eq!(v["misplaced"], serde_json::json!([]), "{v:#}");
    assert_eq!(v["objects"], objects, "{v:#}");
}

/// Every file below `dir`: relative path to SHA-512 (links read as links).
pub(super) fn files_of(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).follow_links(false).min_depth(1) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        if e.file_type().is_file() {
            out.insert(rel, sha512_hex(&fs::read(e.path()).unwrap()));
        } else if e.file_type().is_symlink() {
            out.insert(rel, format!("link to {}", fs::read_link(e.path()).unwrap().display()));
        }
    }
    out
}

/// The one object directory below a storage root.
fn object_dir(root: &Path) -> PathBuf {
    let found: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "0=ocfl_object_1.1")
        .map(|e| e.path().parent().unwrap().to_path_buf())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

fn inventory(obj: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(obj.join("inventory.json")).unwrap()).unwrap()
}

/// Writes an inventory and a sidecar that matches it.
fn write_inventory(dir: &Path, bytes: &[u8]) {
    fs::write(dir.join("inventory.json"), bytes).unwrap();
    fs::write(
        dir.join("inventory.json.sha512"),
        format!("{}  inventory.json\n", sha512_hex(bytes)),
    )
    .unwrap();
}

pub(super) fn put(cfg: &Path, pkg: &Path) -> serde_json::Value {
    let (code, r) = store(&no_env(), cfg, &["put", pkg.to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    r["packages"][0].clone()
}

fn findings(r: &serde_json::Value) -> Vec<(String, String)> {
    r["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{r:#}"))
        .iter()
        .map(|f| (f["replica"].as_str().unwrap().into(), f["kind"].as_str().unwrap().into()))
        .collect()
}

/// Version 1, the same package again (nothing written), a changed package as version 2 that
/// adds only the files with new digests, each version fetched back byte for byte, the log
/// and the list; ocfl-py validates every replica after each step.
#[test]
fn ocfl_replicas_keep_versions_that_ocfl_py_validates_and_get_gives_each_back() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    let r = put(&cfg, &a);
    assert_eq!((r["accepted"].as_bool(), r["version"].as_str()), (Some(true), Some("v1")), "{r:#}");
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
    // Nothing but OCFL in a root: the work directory is beside it.
    assert!(tmp.path().join("disk-a.webaip-work").is_dir());
    let before = files_of(&tmp.path().join("disk-a"));
    let again = put(&cfg, &a);
    assert_eq!(again["version"], "v1");
    assert!(again["copies"].as_array().unwrap().iter().all(|c| c["status"] == "present"));
    assert_eq!(files_of(&tmp.path().join("disk-a")), before, "the same package again wrote");

    let r2 = put(&cfg, &b);
    assert_eq!(r2["version"], "v2", "{r2:#}");
    let obj = object_dir(&tmp.path().join("disk-a"));
    let inv = inventory(&obj);
    let (in_a, in_b) = (files_of(&a), files_of(&b));
    let old: BTreeSet<&String> = in_a.values().collect();
    let added: BTreeMap<String, String> = inv["manifest"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(d, ps)| {
            ps.as_array().unwrap().iter().map(move |p| (p.as_str().unwrap().to_string(), d.clone()))
        })
        .filter(|(p, _)| p.starts_with("v2/"))
        .collect();
    let expected: BTreeSet<String> = in_b
        .iter()
        .filter(|(_, d)| !old.contains(d))
        .map(|(p, _)| format!("v2/content/{p}"))
        .collect();
    assert!(!expected.is_empty() && expected.len() < in_b.len(), "{expected:?}");
    assert_eq!(added.keys().cloned().collect::<BTreeSet<_>>(), expected);
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }

    let id = super::objid(&a);
    for (version, pkg) in [("1", &a), ("2", &b)] {
        let out = tmp.path().join(format!("got-v{version}"));
        let (code, g) = store(
            &no_env(),
            &cfg,
            &["get", &id, "--version", version, "--out", out.to_str().unwrap()],
        );
        assert_eq!(code, 0, "{g:#}");
        assert_eq!(files_of(&out), files_of(pkg), "version {version}");
    }
    let (code, g) = store(
        &no_env(),
        &cfg,
        &["get", &id, "--version", "3", "--out", tmp.path().join("v3").to_str().unwrap()],
    );
    assert_eq!(code, 2, "{g:#}");

    let (code, log) = store(&no_env(), &cfg, &["log", &id]);
    assert_eq!(code, 0, "{log:#}");
    let versions = log["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[1]["user"], "webaip tests");
    assert_eq!(versions[1]["added"], expected.len());
    let (code, list) = store(&no_env(), &cfg, &["list"]);
    assert_eq!(code, 0);
    let objects = list["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 2, "{list:#}");
    assert!(objects.iter().all(|o| o["head"] == "v2" && o["id"] == id.as_str()));
    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!((code, c["clean"].as_bool()), (0, Some(true)), "{c:#}");
}

/// Damage on one replica: a content file, the root inventory, a sidecar, a whole version
/// folder. `check` finds each and changes no byte; `repair` rebuilds the object from the
/// other replica; ocfl-py validates both again.
#[test]
fn ocfl_damage_is_found_by_a_check_that_writes_nothing_and_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    put(&cfg, &b);
    let disk_b = tmp.path().join("disk-b");
    let obj = object_dir(&disk_b);
    let inv = inventory(&obj);
    let warc = inv["manifest"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|p| p.as_array().unwrap())
        .map(|p| p.as_str().unwrap().to_string())
        .find(|p| p.ends_with(".warc.gz"))
        .unwrap();
    type Damage = Box<dyn Fn(&Path)>;
    let damages: Vec<(&str, &str, Damage)> = vec![
        (
            "content file",
            "corrupt",
            Box::new(move |o: &Path| {
                let p = o.join(&warc);
                let mut bytes = fs::read(&p).unwrap();
                bytes[100] ^= 0xff;
                fs::write(p, bytes).unwrap();
            }),
        ),
        (
            "inventory",
            "invalid",
            Box::new(|o: &Path| {
                let mut bytes = fs::read(o.join("inventory.json")).unwrap();
                bytes.extend_from_slice(b" ");
                fs::write(o.join("inventory.json"), bytes).unwrap();
            }),
        ),
        (
            "sidecar",
            "invalid",
            Box::new(|o: &Path| {
                fs::write(
                    o.join("v1/inventory.json.sha512"),
                    format!("{}  inventory.json\n", "0".repeat(128)),
                )
                .unwrap();
            }),
        ),
        (
            "version folder",
            "missing",
            Box::new(|o: &Path| fs::remove_dir_all(o.join("v1")).unwrap()),
        ),
    ];
    for (what, kind, damage) in damages {
        damage(&obj);
        let before = files_of(&disk_b);
        let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
        assert_eq!(code, 1, "{what}: {c:#}");
        let found = findings(&c);
        assert!(found.contains(&("disk-b".into(), kind.into())), "{what}: {found:?}");
        assert!(found.iter().all(|(r, _)| r == "disk-b"), "{what}: {found:?}");
        assert_eq!(files_of(&disk_b), before, "{what}: the check wrote to the replica");
        let (code, r) = store(&no_env(), &cfg, &["repair", "--deep"]);
        assert_eq!(code, 0, "{what}: {r:#}");
        assert_eq!(r["actions"][0]["source"], "disk-a", "{r:#}");
        for d in ["disk-a", "disk-b"] {
            assert_ocfl_valid(&tmp.path().join(d), 1);
        }
        assert_eq!(files_of(&disk_b), files_of(&tmp.path().join("disk-a")), "{what}");
    }
}

/// A put killed before its commit leaves every replica at the old version; one killed
/// between two replicas' commits leaves one at the new, one at the old (each whole): check
/// reports the difference, repair brings the other forward, ocfl-py passes throughout.
#[test]
fn ocfl_a_killed_put_leaves_the_old_or_the_new_version_and_repair_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let run = |point: &str| {
        crate::util::webaip_command()
            .args([
                "store",
                "--config",
                cfg.to_str().unwrap(),
                "--json",
                "put",
                b.to_str().unwrap(),
            ])
            .env("WEBAIP_FAIL_AT", point)
            .output()
            .unwrap()
    };
    let heads = || -> Vec<String> {
        ["disk-a", "disk-b"]
            .iter()
            .map(|d| {
                inventory(&object_dir(&tmp.path().join(d)))["head"].as_str().unwrap().to_string()
            })
            .collect()
    };
    let o = run("ocfl-before-commit");
    assert!(!o.status.success());
    assert_eq!(heads(), ["v1", "v1"]);
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 0, "a put that never committed left nothing to find: {c:#}");

    let o = run("ocfl-after-commit");
    assert!(!o.status.success());
    assert_eq!(heads(), ["v2", "v1"]);
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1);
    assert!(findings(&c).contains(&("disk-b".into(), "differs".into())), "{c:#}");
    // A put now would build on diverged replicas: refused, nothing written.
    let (code, r) = store(&no_env(), &cfg, &["put", a.to_str().unwrap()]);
    assert_eq!(code, 2, "{r:#}");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(heads(), ["v2", "v2"]);
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
    // No stage directory is left in either work directory once a run has passed.
    let (code, _) = store(&no_env(), &cfg, &["put", b.to_str().unwrap()]);
    assert_eq!(code, 0);
    for d in ["disk-a.webaip-work", "disk-b.webaip-work"] {
        let left: Vec<String> = fs::read_dir(tmp.path().join(d))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".ocfl-stage-"))
            .collect();
        assert!(left.is_empty(), "{d}: {left:?}");
    }
}

/// Hostile inventories and objects: one larger than an inventory is read, one naming a
/// content path with `..`, a symbolic link in place of a content file. Each is refused or
/// reported with the file named; nothing outside is read or written.
#[test]
fn ocfl_hostile_inventories_and_links_are_refused_with_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let id = super::objid(&a);
    let obj_a = object_dir(&tmp.path().join("disk-a"));
    let obj_b = object_dir(&tmp.path().join("disk-b"));
    let good = fs::read(obj_a.join("inventory.json")).unwrap();

    // `..` in a content path, with a sidecar that matches: refused as OCFL forbids it.
    let mut inv: serde_json::Value = serde_json::from_slice(&good).unwrap();
    let manifest = inv["manifest"].as_object_mut().unwrap();
    let first = manifest.keys().next().unwrap().clone();
    manifest[&first] = serde_json::json!(["v1/content/../../../../../etc/passwd"]);
    write_inventory(&obj_a, &serde_json::to_vec(&inv).unwrap());
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1);
    let invalid =
        c["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "invalid").unwrap();
    assert!(invalid["detail"].as_str().unwrap().contains("not a valid OCFL path"), "{c:#}");
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "log", &id])
        .output()
        .unwrap();
    // The log reads the other replica, whose inventory is intact.
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Larger than an inventory is read: refused before it is read.
    let f = fs::File::create(obj_b.join("inventory.json")).unwrap();
    f.set_len(65 << 20).unwrap();
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "log", &id])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("larger than") && err.contains("inventory.json"), "{err}");

    // A link in place of a content file: reported, never followed.
    write_inventory(&obj_a, &good);
    let content = walkdir::WalkDir::new(obj_a.join("v1/content"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.file_type().is_file())
        .unwrap()
        .into_path();
    fs::remove_file(&content).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &content).unwrap();
    let (code, c) = store(&no_env(), &cfg, &["check", "--replica", "disk-a", "--deep"]);
    assert_eq!(code, 1);
    assert!(findings(&c).contains(&("disk-a".into(), "not-regular".into())), "{c:#}");
}

/// One layout per store, and OCFL on file systems only in this version.
#[test]
fn ocfl_mixed_layouts_and_buckets_are_refused_by_the_configuration() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("store.toml");
    fs::write(
        &cfg,
        format!(
            "[[replica]]\nname = \"a\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{0}/a\"\n\n\
             [[replica]]\nname = \"b\"\ntype = \"fs\"\nroot = \"{0}/b\"\n",
            tmp.path().display()
        ),
    )
    .unwrap();
    let (code, r) = store(&no_env(), &cfg, &["list"]);
    assert_eq!(code, 2);
    assert!(r["stderr"].as_str().unwrap().contains("same layout"), "{r:#}");
    fs::write(
        &cfg,
        format!(
            "[[replica]]\nname = \"a\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{0}/a\"\nwork = \"{0}/a/work\"\n",
            tmp.path().display()
        ),
    )
    .unwrap();
    let (code, r) = store(&no_env(), &cfg, &["list"]);
    assert_eq!(code, 2);
    assert!(r["stderr"].as_str().unwrap().contains("inside its storage root"), "{r:#}");
}

/// Two replicas sharing one work directory: a put locks the object on each in turn and ends
/// (the locks are the replica's as well as the object's), leaving both valid.
#[test]
fn ocfl_replicas_may_share_one_work_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    let work = tmp.path().join("shared-work");
    let text = fs::read_to_string(&cfg).unwrap().replace(
        "layout = \"ocfl\"\n",
        &format!("layout = \"ocfl\"\nwork = \"{}\"\n", work.display()),
    );
    fs::write(&cfg, text).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (cfg2, a2) = (cfg.clone(), a.clone());
    std::thread::spawn(move || tx.send(put(&cfg2, &a2)).unwrap());
    let r = rx.recv_timeout(std::time::Duration::from_secs(120)).expect("the put hung");
    assert_eq!((r["accepted"].as_bool(), r["version"].as_str()), (Some(true), Some("v1")), "{r:#}");
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
}

/// Adds a version to the object at `obj` by hand, as a tool other than webaip (or an attacker
/// with write access to one replica) would: logical file `path` gets `bytes`, every other file
/// stays; the new version's content, the version and root inventories and their sidecars are
/// all consistent, so the object is valid OCFL (ocfl-py says so).
fn forge_version(obj: &Path, path: &str, bytes: &[u8], user: &str) {
    let mut inv = inventory(obj);
    let head = inv["head"].as_str().unwrap().to_string();
    let n: u32 = head[1..].parse::<u32>().unwrap() + 1;
    let v = format!("v{n}");
    let digest = sha512_hex(bytes);
    let content = format!("{v}/content/{path}");
    fs::create_dir_all(obj.join(&content).parent().unwrap()).unwrap();
    fs::write(obj.join(&content), bytes).unwrap();
    let mut state = inv["versions"][&head]["state"].as_object().unwrap().clone();
    for paths in state.values_mut() {
        paths.as_array_mut().unwrap().retain(|p| p != path);
    }
    state.retain(|_, ps| !ps.as_array().unwrap().is_empty());
    state.insert(digest.clone(), serde_json::json!([path]));
    inv["manifest"].as_object_mut().unwrap().insert(digest, serde_json::json!([content]));
    inv["versions"].as_object_mut().unwrap().insert(
        v.clone(),
        serde_json::json!({"created": "2026-01-01T00:00:00Z", "message": "forged",
                           "user": {"name": user, "address": "mailto:m@example.org"},
                           "state": state}),
    );
    inv["head"] = serde_json::json!(v);
    let bytes = serde_json::to_vec_pretty(&inv).unwrap();
    fs::create_dir_all(obj.join(&v)).unwrap();
    write_inventory(&obj.join(&v), &bytes);
    write_inventory(obj, &bytes);
}

fn replica_findings(r: &serde_json::Value, replica: &str) -> Vec<String> {
    findings(r).into_iter().filter(|(n, _)| n == replica).map(|(_, k)| k).collect()
}

/// A version forged on ONE replica (valid OCFL, one version more, sidecars consistent) is not
/// taken for webaip's: check reports it as not recorded and nothing on the honest replica;
/// get and log give the version webaip committed; repair copies the forgery nowhere (and
/// destroys nothing); a put refuses. With the state database lost, the same store is compared
/// by consistency only, and every result says so; repair then takes no side (one copy of two).
#[test]
fn ocfl_a_version_forged_on_one_replica_is_never_served_blamed_on_the_other_or_copied() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let id = super::objid(&a);
    let (disk_a, disk_b) = (tmp.path().join("disk-a"), tmp.path().join("disk-b"));
    forge_version(&object_dir(&disk_b), "METS.xml", b"<evil/>", "mallory");
    assert_ocfl_valid(&disk_b, 1); // the forgery is valid OCFL: validity proves nothing
    let (honest, forged) = (files_of(&disk_a), files_of(&disk_b));

    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "{c:#}");
    assert_eq!(replica_findings(&c, "disk-b"), ["not-recorded"], "{c:#}");
    assert!(replica_findings(&c, "disk-a").is_empty(), "the honest copy is blamed: {c:#}");
    let out = tmp.path().join("got");
    let (code, g) = store(&no_env(), &cfg, &["get", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{g:#}");
    assert_eq!(files_of(&out), files_of(&a), "get served the forged version");
    assert!(g["copies"].as_array().unwrap().iter().all(|c| c["message"].is_null()), "{g:#}");
    let (code, log) = store(&no_env(), &cfg, &["log", &id]);
    assert_eq!(code, 0, "{log:#}");
    assert_eq!((log["head"].as_str(), log["provenance"].as_str()), (Some("v1"), Some("recorded")));

    let (code, r) = store(&no_env(), &cfg, &["repair", "--deep"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["actions"][0]["repaired"], false, "{r:#}");
    assert_eq!(files_of(&disk_a), honest, "repair copied the forgery");
    assert_eq!(files_of(&disk_b), forged, "repair destroyed what it cannot vouch for");
    let (code, p) = store(&no_env(), &cfg, &["put", b.to_str().unwrap()]);
    assert_eq!(code, 2, "{p:#}");

    // The database lost: no anchor. The latest head is the reference by consistency only,
    // and said to be; repair takes no side between one copy and another.
    fs::remove_file(tmp.path().join("state.sqlite")).unwrap();
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    let differs = c["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "differs");
    let detail = differs.unwrap_or_else(|| panic!("{c:#}"))["detail"].as_str().unwrap();
    assert!(detail.contains("consistency only"), "{detail}");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 1, "{r:#}");
    assert!(r["actions"][0]["message"].as_str().unwrap().contains("1 of 2"), "{r:#}");
    assert_eq!(files_of(&disk_a), honest, "repair took the forgery without a record");
    let out = tmp.path().join("got-unanchored");
    let (code, g) = store(&no_env(), &cfg, &["get", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{g:#}");
    let said = g["copies"][0]["message"].as_str().unwrap_or_default();
    assert!(said.contains("consistency only"), "{g:#}");
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }
}

/// A configuration naming only one of the two replicas (same state database).
fn single_replica_config(dir: &Path, cfg: &Path, name: &str) -> PathBuf {
    let text = fs::read_to_string(cfg).unwrap();
    let mut parts = text.split("\n[[replica]]\n");
    let mut out = parts.next().unwrap().to_string();
    for p in parts.filter(|p| p.contains(&format!("name = \"{name}\""))) {
        out.push_str("\n[[replica]]\n");
        out.push_str(p);
    }
    let path = dir.join(format!("only-{name}.toml"));
    fs::write(&path, out).unwrap();
    path
}

/// Two replicas at the same head number with different inventories, both committed by webaip
/// (puts through configurations naming one replica each): nothing says which is right, so
/// check reports them diverged, get refuses, and repair changes neither, whatever the
/// replicas are named; the same without a state database.
#[test]
fn ocfl_two_versions_of_one_number_are_diverged_and_never_repaired_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let id = super::objid(&a);
    put(&single_replica_config(tmp.path(), &cfg, "disk-b"), &b);
    std::thread::sleep(std::time::Duration::from_millis(1100)); // another `created`
    put(&single_replica_config(tmp.path(), &cfg, "disk-a"), &b);
    let (disk_a, disk_b) = (tmp.path().join("disk-a"), tmp.path().join("disk-b"));
    let before = (files_of(&disk_a), files_of(&disk_b));
    assert_ne!(inventory(&object_dir(&disk_a)), inventory(&object_dir(&disk_b)));
    for db in ["kept", "lost"] {
        if db == "lost" {
            fs::remove_file(tmp.path().join("state.sqlite")).unwrap();
        }
        let (code, c) = store(&no_env(), &cfg, &["check"]);
        assert_eq!(code, 1, "{db}: {c:#}");
        for d in ["disk-a", "disk-b"] {
            assert_eq!(replica_findings(&c, d), ["diverged"], "{db}: {c:#}");
        }
        let (code, r) = store(&no_env(), &cfg, &["repair", "--deep"]);
        assert_eq!(code, 1, "{db}: {r:#}");
        assert!(r["actions"].as_array().unwrap().iter().all(|a| a["repaired"] == false), "{r:#}");
        assert_eq!((files_of(&disk_a), files_of(&disk_b)), before, "{db}: repair chose a side");
        let out = tmp.path().join(format!("got-{db}"));
        let (code, g) = store(&no_env(), &cfg, &["get", &id, "--out", out.to_str().unwrap()]);
        assert_eq!(code, 2, "{db}: {g:#}");
        assert!(!out.exists());
    }
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }
}

/// An object that lost its `0=ocfl_object_1.1` on one replica is still that object: check
/// reports the declaration missing (not a heap of stray files), a put refuses before it
/// commits anywhere, and repair restores it from the other replica; then puts go on.
#[test]
fn ocfl_a_lost_object_declaration_is_reported_gates_put_and_is_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let (disk_a, disk_b) = (tmp.path().join("disk-a"), tmp.path().join("disk-b"));
    let obj_b = object_dir(&disk_b);
    fs::remove_file(obj_b.join("0=ocfl_object_1.1")).unwrap();
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    assert_eq!(replica_findings(&c, "disk-b"), ["missing"], "{c:#}");
    assert!(c["findings"][0]["key"].as_str().unwrap().ends_with("/0=ocfl_object_1.1"), "{c:#}");
    let on_a = files_of(&disk_a);
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "put", b.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("0=ocfl_object_1.1") && err.contains("store repair"), "{err}");
    assert_eq!(files_of(&disk_a), on_a, "a refused put committed on one replica");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(files_of(&disk_b), files_of(&disk_a));
    let r2 = put(&cfg, &b);
    assert_eq!((r2["accepted"].as_bool(), r2["version"].as_str()), (Some(true), Some("v2")));
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }
}

/// A replica added to the store (a new directory, an emptied disk, or none at all yet) is
/// filled by repair: the root's declaration and layout files, then every object; a directory
/// holding something else is no storage root and gets no object.
#[test]
fn ocfl_repair_fills_a_new_or_emptied_replica_and_never_writes_into_a_non_root() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let disk_c = tmp.path().join("disk-c");
    let mut text = fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "\n[[replica]]\nname = \"disk-c\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{}\"\n",
        disk_c.display()
    ));
    fs::write(&cfg, text).unwrap();
    for how in ["absent", "emptied"] {
        if how == "emptied" {
            fs::remove_dir_all(&disk_c).unwrap();
            fs::create_dir(&disk_c).unwrap();
        }
        let (code, r) = store(&no_env(), &cfg, &["repair"]);
        assert_eq!(code, 0, "{how}: {r:#}");
        assert_ocfl_valid(&disk_c, 1);
        assert_eq!(files_of(&disk_c), files_of(&tmp.path().join("disk-a")), "{how}");
    }
    fs::remove_dir_all(&disk_c).unwrap();
    fs::create_dir(&disk_c).unwrap();
    fs::write(disk_c.join("notes.txt"), b"not a storage root").unwrap();
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["actions"][0]["repaired"], false, "{r:#}");
    assert_eq!(files_of(&disk_c).into_keys().collect::<Vec<_>>(), ["notes.txt"]);
}

/// Files no inventory accounts for inside an object (a stray editor backup, files named like
/// the webaip layout's claims and temporaries, which an OCFL listing must not hide): check
/// reports each (ocfl-py calls such an object invalid), a put refuses, and repair moves them
/// to the work directory's quarantine, byte for byte, so the next put goes on.
#[test]
fn ocfl_stray_files_in_an_object_are_reported_and_repair_moves_them_out_keeping_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let (disk_a, disk_b) = (tmp.path().join("disk-a"), tmp.path().join("disk-b"));
    let (obj_a, obj_b) = (object_dir(&disk_a), object_dir(&disk_b));
    fs::write(obj_a.join("v1/content/METS.xml~"), b"backup").unwrap();
    fs::write(obj_b.join(".webaip-claim"), b"claim").unwrap();
    fs::write(obj_b.join("v1/.webaip-upload-x"), b"upload").unwrap();
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    assert_eq!(replica_findings(&c, "disk-a"), ["extra"], "{c:#}");
    assert_eq!(replica_findings(&c, "disk-b"), ["extra", "extra"], "{c:#}");
    let (code, p) = store(&no_env(), &cfg, &["put", b.to_str().unwrap()]);
    assert_eq!(code, 2, "{p:#}");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }
    let kept = |work: &str| -> BTreeMap<String, String> {
        files_of(&tmp.path().join(work).join("quarantine"))
            .into_iter()
            .map(|(k, v)| (k.split_once('/').unwrap().1.to_string(), v))
            .collect()
    };
    let in_a = kept("disk-a.webaip-work");
    assert_eq!(in_a.len(), 1, "{in_a:?}");
    assert!(in_a.keys().all(|k| k.ends_with("v1/content/METS.xml~")), "{in_a:?}");
    assert_eq!(in_a.values().next().unwrap(), &sha512_hex(b"backup"));
    let in_b = kept("disk-b.webaip-work");
    let mut names: Vec<&str> = in_b.keys().map(|k| k.rsplit('/').next().unwrap()).collect();
    names.sort();
    assert_eq!(names, [".webaip-claim", ".webaip-upload-x"], "{in_b:?}");
    let r2 = put(&cfg, &b);
    assert_eq!((r2["accepted"].as_bool(), r2["version"].as_str()), (Some(true), Some("v2")));
}

/// An inventory under the byte cap naming millions of paths (the review's 2.6 million absent
/// content files, 62 MB) is refused at the path cap instead of filling memory and the report;
/// one naming many absent files under that cap is reported with a bounded list and a count.
#[test]
fn ocfl_an_inventory_of_millions_of_paths_costs_a_bounded_report() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let obj_b = object_dir(&tmp.path().join("disk-b"));
    let good = inventory(&obj_b);
    for (paths, refused) in [(2_600_000usize, true), (20_000, false)] {
        let mut inv = good.clone();
        let manifest = inv["manifest"].as_object_mut().unwrap();
        let first = manifest.keys().next().unwrap().clone();
        let list = manifest[&first].as_array_mut().unwrap();
        list.extend((0..paths).map(|i| serde_json::json!(format!("v1/content/z/{i:07}"))));
        let bytes = serde_json::to_vec(&inv).unwrap();
        assert!(bytes.len() < 64 << 20);
        write_inventory(&obj_b, &bytes);
        fs::write(obj_b.join("v1/inventory.json"), &bytes).unwrap();
        write_inventory(&obj_b.join("v1"), &bytes);
        let o = crate::util::webaip_command()
            .args(["store", "--config", cfg.to_str().unwrap(), "--json", "check"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(o.stdout.len() < 1 << 20, "{paths}: a report of {} bytes", o.stdout.len());
        let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let on_b: Vec<&serde_json::Value> =
            c["findings"].as_array().unwrap().iter().filter(|f| f["replica"] == "disk-b").collect();
        if refused {
            assert!(on_b.iter().any(|f| f["detail"].as_str().unwrap().contains("paths")), "{c:#}");
        } else {
            assert!(on_b.len() <= 1002, "{}", on_b.len());
            let last = on_b.iter().map(|f| f["detail"].as_str().unwrap()).collect::<Vec<_>>();
            assert!(last.iter().any(|d| d.contains("more findings")), "{last:?}");
        }
    }
}
