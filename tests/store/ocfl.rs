//! `webaip store` with replicas that are OCFL 1.1 storage roots (`layout = "ocfl"`): put,
//! versions, get of each version, log and list, check (which writes nothing) and repair of
//! damage, killed puts, hostile inventories. Every replica is validated by ocfl-py, an
//! independent implementation, with 0 errors and 0 warnings.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{same_objid_pair, sha512_hex, store};
use crate::util::{Package, package, repo};

/// Two file system OCFL replicas, `disk-a` and `disk-b`, under `dir`.
pub(super) fn ocfl_config(dir: &Path) -> PathBuf {
    ocfl_config_of(dir, "store.toml", "state.sqlite", &["disk-a", "disk-b"])
}

/// File system OCFL replicas named `names` (each root `dir/<name>`), with state database
/// `dir/<state>`, written to `dir/<file>`.
pub(super) fn ocfl_config_of(dir: &Path, file: &str, state: &str, names: &[&str]) -> PathBuf {
    let mut text = format!(
        "state = \"{}\"\n\n[user]\nname = \"webaip tests\"\naddress = \"mailto:tests@example.org\"\n",
        dir.join(state).display()
    );
    for name in names {
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{}\"\n",
            dir.join(name).display()
        ));
    }
    let path = dir.join(file);
    fs::write(&path, text).unwrap();
    path
}

pub(super) fn no_env() -> std::collections::HashMap<String, String> {
    Default::default()
}

/// ocfl-py's verdict on a storage root: valid, every object valid and where the layout puts
/// it, no error and no warning.
pub(super) fn assert_ocfl_valid(root: &Path, objects: u64) {
    let v = ocfl_py_verdict(root);
    assert_eq!(v["valid"], true, "{}: {v:#}", root.display());
    assert_eq!(v["messages"], serde_json::json!([]), "{}: {v:#}", root.display());
    assert_eq!(v["misplaced"], serde_json::json!([]), "{v:#}");
    assert_eq!(v["objects"], objects, "{v:#}");
}

/// ocfl-py's verdict on a storage root (tests/store/ocfl_validate.py).
pub(super) fn ocfl_py_verdict(root: &Path) -> serde_json::Value {
    let o = Command::new(repo().join(".venv/bin/python"))
        .arg(repo().join("tests/store/ocfl_validate.py"))
        .arg(root)
        .output()
        .expect("the ocfl-py oracle runs (scripts/setup-test-env.sh installs it)");
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)))
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

/// The object directories below a storage root.
pub(super) fn object_dirs(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "0=ocfl_object_1.1")
        .map(|e| e.path().parent().unwrap().to_path_buf())
        .collect()
}

/// The one object directory below a storage root.
pub(super) fn object_dir(root: &Path) -> PathBuf {
    let found = object_dirs(root);
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

pub(super) fn inventory(obj: &Path) -> serde_json::Value {
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

pub(super) fn findings(r: &serde_json::Value) -> Vec<(String, String)> {
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

/// Every file below `dir` with its modification time: what a run must leave untouched.
fn touched_of(dir: &Path) -> BTreeMap<String, (String, std::time::SystemTime)> {
    let times = |rel: &String| fs::metadata(dir.join(rel)).unwrap().modified().unwrap();
    files_of(dir).into_iter().map(|(rel, sha)| (rel.clone(), (sha, times(&rel)))).collect()
}

/// A put that failed between two replicas' commits, run again, completes: the replicas
/// behind get the version the others committed (the same inventory bytes, the new files
/// from the package), the others are not touched, and ocfl-py finds every replica valid. A
/// new object (v1 on one replica of three) and a new version (v2 on one of two) alike; a put
/// of another package meanwhile is still refused.
#[test]
fn ocfl_a_put_failed_between_two_replicas_commits_completes_when_run_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let names = ["disk-a", "disk-b", "disk-c"];
    let cfg = ocfl_config_of(tmp.path(), "store.toml", "state.sqlite", &names);
    let put_of = |pkg: &Path, env: Option<&str>| {
        let mut c = crate::util::webaip_command();
        c.args(["store", "--config", cfg.to_str().unwrap(), "--json", "put"]).arg(pkg);
        if let Some(point) = env {
            c.env("WEBAIP_FAIL_AT", point);
        }
        c.output().unwrap()
    };
    let root = |d: &str| tmp.path().join(d);
    let head_of = |d: &str| {
        let found = object_dirs(&root(d));
        found.first().map(|obj| inventory(obj)["head"].as_str().unwrap().to_string())
    };
    let heads = || names.map(head_of).to_vec();
    let inventories = |v: &str| {
        names.map(|d| {
            let obj = object_dir(&root(d));
            (
                fs::read(obj.join("inventory.json")).unwrap(),
                fs::read(obj.join(v).join("inventory.json")).unwrap(),
            )
        })
    };
    for (pkg, failed, done) in [(&a, "v1", "v1"), (&b, "v2", "v2")] {
        let o = put_of(pkg, Some("ocfl-after-commit"));
        assert!(!o.status.success(), "{o:?}");
        let after = heads();
        assert_eq!(after[0].as_deref(), Some(failed), "{after:?}");
        assert_ne!(after[1].as_deref(), Some(failed), "{after:?}");
        let ahead = touched_of(&root("disk-a"));
        if pkg == &b {
            // Another package is no way to join the replicas: refused, nothing written.
            let o = put_of(&a, None);
            assert_eq!(o.status.code(), Some(2), "{o:?}");
        }
        let o = put_of(pkg, None);
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(o.status.success(), "{r:#} {}", String::from_utf8_lossy(&o.stderr));
        let report = &r["packages"][0];
        assert_eq!(report["accepted"], true, "{r:#}");
        assert_eq!(report["version"], done, "{r:#}");
        // The described package's METS locates its pages' records (byte ranges): audited.
        let verified = if pkg == &b { "audited" } else { "fixity" };
        assert_eq!(report["verified"], verified, "{r:#}");
        assert_eq!(heads(), vec![Some(done.to_string()); 3]);
        assert_eq!(touched_of(&root("disk-a")), ahead, "the replica ahead is left alone");
        let [x, y, z] = inventories(done);
        assert!(x == y && y == z, "one version, the same inventory bytes on every replica");
        assert_eq!(x.0, x.1, "the version's inventory is the root's");
        for d in names {
            assert_ocfl_valid(&root(d), 1);
            assert_eq!(files_of(&object_dir(&root(d))), files_of(&object_dir(&root("disk-a"))));
        }
        let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
        assert_eq!(code, 0, "{c:#}");
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

/// One layout per store, and a file system root's work directory outside it.
#[test]
fn ocfl_mixed_layouts_and_buckets_are_refused_by_the_configuration() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("store.toml");
    fs::write(
        &cfg,
        format!(
            "[[replica]]\nname = \"a\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{0}/a\"\n\n\
             [[replica]]\nname = \"b\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{0}/b\"\n",
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
pub(super) fn forge_version(obj: &Path, path: &str, bytes: &[u8], user: &str) {
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

pub(super) fn replica_findings(r: &serde_json::Value, replica: &str) -> Vec<String> {
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

    // The database lost: no anchor. The latest head is held by one replica of two, which is
    // no majority: check blames neither copy, and repair, get and log all refuse to take it.
    fs::remove_file(tmp.path().join("state.sqlite")).unwrap();
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    for d in ["disk-a", "disk-b"] {
        assert_eq!(replica_findings(&c, d), ["no-majority"], "{c:#}");
    }
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 1, "{r:#}");
    assert!(r["actions"][0]["message"].as_str().unwrap().contains("1 of 2"), "{r:#}");
    assert_eq!(files_of(&disk_a), honest, "repair took the forgery without a record");
    let out = tmp.path().join("got-unanchored");
    let (code, g) = store(&no_env(), &cfg, &["get", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "a head one replica of two holds was served: {g:#}");
    assert!(g["stderr"].as_str().unwrap().contains("1 of 2"), "{g:#}");
    assert!(!out.exists());
    let (code, _) = store(&no_env(), &cfg, &["log", &id]);
    assert_eq!(code, 2);
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }
}

/// The state database lost, a forged version on two replicas of three (the honest v1 on the
/// third): by consistency the forgery is the reference, and get says so; repair brings the
/// third forward, but records nothing, so the forgery is never called webaip's.
#[test]
fn ocfl_a_repair_by_consistency_only_records_nothing_as_webaips() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, _) = same_objid_pair(t);
    let names = ["disk-a", "disk-b", "disk-c"];
    let cfg = ocfl_config_of(t, "store.toml", "state.sqlite", &names);
    put(&cfg, &a);
    let id = super::objid(&a);
    forge_version(&object_dir(&t.join("disk-b")), "METS.xml", b"<evil/>", "evil");
    let obj_c = object_dir(&t.join("disk-c"));
    fs::remove_dir_all(&obj_c).unwrap();
    copy_as_is(&object_dir(&t.join("disk-b")), &obj_c);
    fs::remove_file(t.join("state.sqlite")).unwrap();
    let out = t.join("got");
    let (code, g) = store(&no_env(), &cfg, &["get", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{g:#}");
    assert!(g["copies"][0]["message"].as_str().unwrap().contains("consistency only"), "{g:#}");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(inventory(&object_dir(&t.join("disk-a")))["head"], "v2");
    let (code, log) = store(&no_env(), &cfg, &["log", &id]);
    assert_eq!(code, 0, "{log:#}");
    assert_eq!(log["provenance"], "no-record", "a consistency-only repair was recorded: {log:#}");
    let (code, l) = store(&no_env(), &cfg, &["list"]);
    assert_eq!(code, 0);
    assert!(l["objects"].as_array().unwrap().iter().all(|o| o["provenance"] == "no-record"));
    for n in names {
        assert_ocfl_valid(&t.join(n), 1);
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

/// The object directory of `id` below a storage root (found by its inventory's id).
pub(super) fn object_dir_of(root: &Path, id: &str) -> PathBuf {
    let found: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "0=ocfl_object_1.1")
        .map(|e| e.path().parent().unwrap().to_path_buf())
        .filter(|d| inventory(d)["id"] == id)
        .collect();
    assert_eq!(found.len(), 1, "{id}: {found:?}");
    found[0].clone()
}

/// A package of the Heritrix sample with an OBJID of its own (a random one, not the
/// deterministic pair's).
pub(super) fn other_package(tmp: &Path, name: &str) -> PathBuf {
    let p = tmp.join(name);
    package(Package::new().quiet(), &p, &[&repo().join("samples/heritrix-job")]).succeeded();
    p
}

/// `cp -a from to`: a tree copied as it is (a restore from an old backup or snapshot).
pub(super) fn copy_as_is(from: &Path, to: &Path) {
    let o = Command::new("cp").arg("-a").arg(from).arg(to).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Findings of one kind, as (replica, object directory's last segment).
pub(super) fn kind_on(r: &serde_json::Value, kind: &str) -> Vec<(String, String)> {
    r["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{r:#}"))
        .iter()
        .filter(|f| f["kind"] == kind)
        .map(|f| {
            let object = f["object"].as_str().unwrap();
            (f["replica"].as_str().unwrap().into(), object.rsplit('/').next().unwrap().into())
        })
        .collect()
}

/// An object webaip never put (written by another store with its own database, then given a
/// forged version), on one of three replicas: check reports it there as unknown (not the two
/// others as missing it), repair copies it nowhere and records nothing, get refuses it (one
/// replica of three is no majority); `repair --adopt ID` takes it on the user's word, and only
/// then fills the others.
#[test]
fn ocfl_an_object_webaip_never_put_on_one_replica_is_never_copied_nor_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, _) = same_objid_pair(t);
    let names = ["disk-a", "disk-b", "disk-c"];
    let cfg = ocfl_config_of(t, "store.toml", "state.sqlite", &names);
    put(&cfg, &a);
    let x = other_package(t, "x");
    let xid = super::objid(&x);
    let other = ocfl_config_of(t, "other.toml", "other.sqlite", &["disk-c"]);
    put(&other, &x);
    forge_version(&object_dir_of(&t.join("disk-c"), &xid), "METS.xml", b"<evil/>", "evil");
    let before: Vec<_> = names.iter().map(|n| files_of(&t.join(n))).collect();
    let leaf = object_dir_of(&t.join("disk-c"), &xid);
    let leaf = leaf.file_name().unwrap().to_string_lossy().into_owned();

    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "{c:#}");
    assert_eq!(kind_on(&c, "unknown-object"), [("disk-c".to_string(), leaf.clone())], "{c:#}");
    assert!(kind_on(&c, "no-object").is_empty(), "the honest replicas are blamed: {c:#}");
    let (code, r) = store(&no_env(), &cfg, &["repair", "--deep"]);
    assert_eq!(code, 1, "{r:#}");
    let after: Vec<_> = names.iter().map(|n| files_of(&t.join(n))).collect();
    assert_eq!(after, before, "repair copied (or changed) an object webaip never put");
    // Nothing was recorded: the next check says the same.
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!((code, kind_on(&c, "unknown-object").len()), (1, 1), "{c:#}");
    let out = t.join("got-x");
    let (code, g) = store(&no_env(), &cfg, &["get", &xid, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "a head on one replica of three was served: {g:#}");
    assert!(!out.exists());

    // Taken explicitly: recorded, copied to the others, checked clean.
    let (code, r) = store(&no_env(), &cfg, &["repair", "--adopt", &xid]);
    assert_eq!(code, 0, "{r:#}");
    let (code, log) = store(&no_env(), &cfg, &["log", &xid]);
    assert_eq!(code, 0, "{log:#}");
    assert_eq!((log["head"].as_str(), log["provenance"].as_str()), (Some("v2"), Some("recorded")));
    for n in names {
        assert_ocfl_valid(&t.join(n), 2);
        let obj = object_dir_of(&t.join(n), &xid);
        assert_eq!(files_of(&obj), files_of(&object_dir_of(&t.join("disk-c"), &xid)), "{n}");
    }
}

/// Every replica rolled back to an older version webaip committed (an old backup restored, or
/// a hostile rollback): check finds it on each (never clean), log names the version webaip
/// committed last, get without --version and put refuse, repair says no replica holds it and
/// changes nothing; once one replica holds it again, repair brings the other forward.
#[test]
fn ocfl_every_replica_rolled_back_to_an_older_recorded_version_is_found_never_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, b) = same_objid_pair(t);
    let cfg = ocfl_config(t);
    put(&cfg, &a);
    let id = super::objid(&a);
    let (disk_a, disk_b) = (t.join("disk-a"), t.join("disk-b"));
    copy_as_is(&object_dir(&disk_a), &t.join("v1"));
    put(&cfg, &b);
    copy_as_is(&object_dir(&disk_a), &t.join("v2"));
    for d in [&disk_a, &disk_b] {
        let obj = object_dir(d);
        fs::remove_dir_all(&obj).unwrap();
        copy_as_is(&t.join("v1"), &obj);
        assert_ocfl_valid(d, 1);
    }
    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "{c:#}");
    for d in ["disk-a", "disk-b"] {
        assert!(replica_findings(&c, d).contains(&"rolled-back".to_string()), "{d}: {c:#}");
    }
    let (code, log) = store(&no_env(), &cfg, &["log", &id]);
    assert_eq!(code, 0, "{log:#}");
    assert_eq!((log["head"].as_str(), log["recorded_head"].as_str()), (Some("v1"), Some("v2")));
    let out = t.join("got");
    let (code, g) = store(&no_env(), &cfg, &["get", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{g:#}");
    assert!(g["stderr"].as_str().unwrap_or_default().contains("v2"), "{g:#}");
    let (code, g) =
        store(&no_env(), &cfg, &["get", &id, "--version", "1", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{g:#}");
    assert_eq!(files_of(&out), files_of(&a));
    let (code, p) = store(&no_env(), &cfg, &["put", a.to_str().unwrap()]);
    assert_eq!(code, 2, "a put built on a rolled-back object: {p:#}");
    let held = (files_of(&disk_a), files_of(&disk_b));
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 1, "{r:#}");
    assert!(r["actions"].as_array().unwrap().iter().all(|a| a["repaired"] == false), "{r:#}");
    let said = r["actions"][0]["message"].as_str().unwrap();
    assert!(said.contains("v2"), "{said}");
    assert_eq!((files_of(&disk_a), files_of(&disk_b)), held, "repair wrote");

    // disk-a's v2 restored: repair brings disk-b forward from it.
    let obj_a = object_dir(&disk_a);
    fs::remove_dir_all(&obj_a).unwrap();
    copy_as_is(&t.join("v2"), &obj_a);
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(inventory(&object_dir(&disk_b))["head"], "v2");
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }
}

/// An object webaip committed, deleted from every replica: check lists it from the state
/// database as missing on each replica it was committed to (exit 1, counted among the
/// objects), and repair says nothing holds it.
#[test]
fn ocfl_an_object_gone_from_every_replica_is_missing_not_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, _) = same_objid_pair(t);
    let cfg = ocfl_config(t);
    put(&cfg, &a);
    let y = other_package(t, "y");
    put(&cfg, &y);
    let id = super::objid(&a);
    let (disk_a, disk_b) = (t.join("disk-a"), t.join("disk-b"));
    let leaf = object_dir_of(&disk_a, &id).file_name().unwrap().to_string_lossy().into_owned();
    for d in [&disk_a, &disk_b] {
        // The object and the layout's directories it leaves empty (OCFL allows no empty
        // directory in a root).
        let mut dir = object_dir_of(d, &id);
        fs::remove_dir_all(&dir).unwrap();
        while dir.pop() && dir != *d && fs::remove_dir(&dir).is_ok() {}
    }
    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "{c:#}");
    assert_eq!(c["objects"], 2, "{c:#}");
    let gone = kind_on(&c, "no-object");
    assert_eq!(gone, [("disk-a".to_string(), leaf.clone()), ("disk-b".to_string(), leaf)]);
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 1, "{r:#}");
    assert!(r["actions"].as_array().unwrap().iter().all(|a| a["repaired"] == false), "{r:#}");
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }
}

/// A replica whose recorded v2 has a root sidecar that no longer matches (or a root inventory
/// that no longer parses), the other replica at v1: repair never rebuilds it at v1, so the
/// committed v2 stays where it is.
#[test]
fn ocfl_repair_never_rolls_a_replica_back_below_its_recorded_head() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, b) = same_objid_pair(t);
    let cfg = ocfl_config(t);
    put(&cfg, &a);
    let (disk_a, disk_b) = (t.join("disk-a"), t.join("disk-b"));
    copy_as_is(&disk_b, &t.join("disk-b.v1"));
    put(&cfg, &b);
    fs::remove_dir_all(&disk_b).unwrap();
    fs::rename(t.join("disk-b.v1"), &disk_b).unwrap();
    let obj_a = object_dir(&disk_a);
    copy_as_is(&obj_a, &t.join("v2-a"));
    type Damage = Box<dyn Fn(&Path)>;
    let damages: Vec<(&str, Damage)> = vec![
        (
            "sidecar",
            Box::new(|o: &Path| {
                let p = o.join("inventory.json.sha512");
                let mut bytes = fs::read(&p).unwrap();
                bytes[0] = if bytes[0] == b'0' { b'1' } else { b'0' };
                fs::write(p, bytes).unwrap();
            }),
        ),
        ("inventory", Box::new(|o: &Path| fs::write(o.join("inventory.json"), b"{").unwrap())),
    ];
    for (what, damage) in damages {
        fs::remove_dir_all(&obj_a).unwrap();
        copy_as_is(&t.join("v2-a"), &obj_a);
        damage(&obj_a);
        let damaged = files_of(&disk_a);
        let (code, r) = store(&no_env(), &cfg, &["repair"]);
        assert_eq!(code, 1, "{what}: {r:#}");
        assert_eq!(files_of(&disk_a), damaged, "{what}: the recorded v2 was rolled back");
        assert!(obj_a.join("v2/inventory.json").is_file(), "{what}");
        assert_ocfl_valid(&disk_b, 1);
    }
}

/// A `quarantine` in the work directory that is a link elsewhere is refused: stray files stay
/// where they are, and nothing reaches the link's target. A new disk's mount point (holding
/// `lost+found`, which OCFL does not allow in a storage root) is refused with the advice to
/// use a directory below it.
#[test]
fn ocfl_the_quarantine_follows_no_link_and_a_mount_point_is_no_root() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, _) = same_objid_pair(t);
    let cfg = ocfl_config(t);
    put(&cfg, &a);
    let obj_b = object_dir(&t.join("disk-b"));
    fs::write(obj_b.join("stray.txt"), b"stray").unwrap();
    let outside = t.join("outside");
    fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, t.join("disk-b.webaip-work/quarantine")).unwrap();
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 1, "{r:#}");
    assert!(files_of(&outside).is_empty(), "a file left through the link");
    assert_eq!(fs::read(obj_b.join("stray.txt")).unwrap(), b"stray");
    fs::remove_file(obj_b.join("stray.txt")).unwrap();
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&t.join(d), 1);
    }

    let cfg = ocfl_config_of(t, "store.toml", "state.sqlite", &["disk-a", "disk-b", "disk-c"]);
    fs::create_dir_all(t.join("disk-c/lost+found")).unwrap();
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 1, "{r:#}");
    let said = r["actions"][0]["message"].as_str().unwrap();
    assert!(said.contains("below the mount point"), "{said}");
    assert_eq!(files_of(&t.join("disk-c")).len(), 0);
}

/// A link and a FIFO inside an object: check reports each, and repair, which rebuilds the
/// object without them (never following nor copying them), names each in its report, the link
/// with its target.
#[test]
fn ocfl_links_and_fifos_inside_an_object_are_named_by_the_repair_that_drops_them() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, _) = same_objid_pair(t);
    let cfg = ocfl_config(t);
    put(&cfg, &a);
    let obj_b = object_dir(&t.join("disk-b"));
    let target = t.join("target.txt");
    fs::write(&target, b"outside").unwrap();
    std::os::unix::fs::symlink(&target, obj_b.join("v1/lnk")).unwrap();
    let o = Command::new("mkfifo").arg(obj_b.join("fifo")).output().unwrap();
    assert!(o.status.success());
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    assert_eq!(replica_findings(&c, "disk-b"), ["not-regular", "not-regular"], "{c:#}");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    let said = r["actions"][0]["message"].as_str().unwrap();
    assert!(said.contains(&format!("v1/lnk (a link to {})", target.display())), "{said}");
    assert!(said.contains("fifo ("), "{said}");
    assert_eq!(fs::read(&target).unwrap(), b"outside");
    assert_eq!(files_of(&t.join("disk-b")), files_of(&t.join("disk-a")));
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&t.join(d), 1);
    }
}

/// Empty directories, which OCFL allows nowhere in a storage root: one in no object (what a
/// removal killed before its n-tuple directories went leaves; ocfl-py: E073) and one in an
/// object's content (E024). Check finds each as `empty-directory` where ocfl-py finds the
/// root invalid; repair, with no other replica to copy from, removes them and the
/// directories they leave empty, and nothing else; then ocfl-py finds the root valid and the
/// check is clean. A `lost+found` at the root (a root at a mount point) is found, and left.
#[test]
fn ocfl_empty_directories_are_found_as_ocfl_py_finds_them_and_repair_removes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (a, _) = same_objid_pair(t);
    let cfg = single_replica_config(t, &ocfl_config(t), "disk-a");
    put(&cfg, &a);
    let root = t.join("disk-a");
    let obj = object_dir(&root);
    let files = files_of(&root);
    fs::create_dir_all(root.join("fff/eee/ddd")).unwrap();
    fs::create_dir_all(obj.join("v1/content/gone/deeper")).unwrap();
    let v = ocfl_py_verdict(&root);
    let said = v["messages"].to_string();
    assert!(v["valid"] == false && said.contains("E073") && said.contains("E024"), "{v:#}");
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    let found: Vec<(&str, &str)> = (c["findings"].as_array().unwrap().iter())
        .map(|f| (f["kind"].as_str().unwrap(), f["key"].as_str().unwrap()))
        .collect();
    let in_obj = obj.strip_prefix(&root).unwrap().join("v1/content/gone/deeper");
    let in_obj = format!("{}/", in_obj.display());
    let want = [("empty-directory", "fff/eee/ddd/"), ("empty-directory", in_obj.as_str())];
    assert_eq!(found, want, "{c:#}");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!(code, 0, "{r:#}");
    let said: Vec<&str> =
        r["actions"].as_array().unwrap().iter().map(|a| a["message"].as_str().unwrap()).collect();
    let expected = [
        "removed the empty directories fff/eee/ddd, fff/eee, fff",
        "removed the empty directories v1/content/gone/deeper, v1/content/gone",
    ];
    assert_eq!(said, expected, "{r:#}");
    assert_ocfl_valid(&root, 1);
    assert_eq!(files_of(&root), files, "only empty directories were removed");
    assert!(obj.join("v1/content").is_dir());
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 0, "{c:#}");
    // A root at a mount point: its lost+found is found as ocfl-py finds it, and left.
    fs::create_dir(root.join("lost+found")).unwrap();
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!((code, &r["actions"][0]["repaired"]), (1, &false.into()), "{r:#}");
    let said = r["actions"][0]["message"].as_str().unwrap();
    assert!(said.contains("left lost+found") && said.contains("below the mount point"), "{r:#}");
    assert!(root.join("lost+found").is_dir());
}

/// A put that does not audit the records still holds the METS to the manifest: a container
/// changed with its manifest line made to match, while the METS states its old SIZE and
/// SHA-512, is refused with the file named and nothing stored; the untouched package is
/// accepted, verified by fixity alone.
#[test]
fn ocfl_a_put_refuses_a_package_whose_mets_states_other_bytes_than_its_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    let changed = tmp.path().join("changed");
    copy_as_is(&a, &changed);
    let name = "content/IAH-20240315103000-00000-crawler.example.warc.gz";
    let mut bytes = fs::read(changed.join(name)).unwrap();
    let old = sha512_hex(&bytes);
    bytes.extend_from_slice(b"\x1f\x8b");
    fs::write(changed.join(name), &bytes).unwrap();
    let manifest = changed.join("manifest-sha512.txt");
    let text = fs::read_to_string(&manifest).unwrap();
    assert!(text.contains(&old), "{text}");
    fs::write(&manifest, text.replace(&old, &sha512_hex(&bytes))).unwrap();
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "put"])
        .arg(&changed)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(err.contains(name) && err.contains("the METS states SIZE="), "{err}");
    assert!(object_dirs(&tmp.path().join("disk-a")).is_empty(), "nothing stored");
    let r = put(&cfg, &a);
    assert_eq!(r["verified"], "fixity", "{r:#}");
}

/// A full listing's METS states each record's bytes (byte ranges, payload digests), which only
/// the audit can hold against the containers: its put is audited whole, and says so.
#[test]
fn ocfl_a_put_of_a_full_listing_is_audited_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("full");
    package(Package::new().quiet().mode("full"), &p, &[&repo().join("samples/heritrix-job")])
        .succeeded();
    let cfg = ocfl_config(tmp.path());
    let r = put(&cfg, &p);
    assert_eq!(r["verified"], "audited", "{r:#}");
}

/// A root declaration a crash left empty is no declaration: the next put finishes the root
/// (ocfl-py then finds it valid) instead of storing into a root no OCFL reader accepts.
#[test]
fn ocfl_an_empty_root_declaration_is_finished_by_the_next_put() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    for d in ["disk-a", "disk-b"] {
        fs::create_dir_all(tmp.path().join(d)).unwrap();
        fs::write(tmp.path().join(d).join("0=ocfl_1.1"), b"").unwrap();
    }
    put(&cfg, &a);
    for d in ["disk-a", "disk-b"] {
        assert_eq!(fs::read(tmp.path().join(d).join("0=ocfl_1.1")).unwrap(), b"ocfl_1.1\n");
        assert_ocfl_valid(&tmp.path().join(d), 1);
    }
}

/// A configuration that names no layout: a new store is OCFL; a store whose state database
/// holds packages of the webaip layout keeps that layout until `store migrate` moves it.
#[test]
fn ocfl_is_the_layout_of_a_new_store_and_an_older_store_keeps_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let unnamed = |dir: &Path, layout: &str| {
        let cfg = dir.join("store.toml");
        let text = format!(
            "state = \"state.sqlite\"\n\n[[replica]]\nname = \"disk\"\ntype = \"fs\"\n{layout}root = \"{}\"\n",
            dir.join("disk").display()
        );
        fs::write(&cfg, text).unwrap();
        cfg
    };
    // New: an OCFL storage root that ocfl-py validates.
    let new = tmp.path().join("new");
    fs::create_dir_all(&new).unwrap();
    assert_eq!(put(&unnamed(&new, ""), &a)["version"], "v1");
    assert_ocfl_valid(&new.join("disk"), 1);

    // Older: put in the webaip layout, then the layout line dropped.
    let old = tmp.path().join("old");
    fs::create_dir_all(&old).unwrap();
    let (code, r) =
        store(&no_env(), &unnamed(&old, "layout = \"webaip\"\n"), &["put", a.to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    let cfg = unnamed(&old, "");
    let (code, r) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(
        (code, &r["packages"]),
        (0, &serde_json::json!(1)),
        "the webaip layout's check: {r:#}"
    );
    assert!(!old.join("disk/0=ocfl_1.1").exists());
    // Its database lost: the replica's package folders say it is a webaip-layout store, whose
    // state rebuild-state makes again (nothing taken for an OCFL root), and migrate then moves.
    super::ocfl_root::forget_state(&old.join("state.sqlite"));
    let (code, r) = store(&no_env(), &cfg, &["rebuild-state"]);
    assert_eq!((code, &r["packages"]), (0, &serde_json::json!([super::objid(&a)])), "{r:#}");
    assert!(!old.join("disk/0=ocfl_1.1").exists());
    // Migrated, it is OCFL, and the configuration says so.
    let (code, r) = store(&no_env(), &cfg, &["migrate"]);
    assert_eq!((code, &r["switched"]), (0, &serde_json::json!(true)), "{r:#}");
    assert!(fs::read_to_string(&cfg).unwrap().contains("layout = \"ocfl\""));
    assert_eq!(put(&cfg, &b)["version"], "v2");
    assert_ocfl_valid(&old.join("disk"), 1);
}
