//! `webaip store migrate` of bucket replicas (the local Garage cluster): a store of a bucket
//! and a folder in the webaip layout, and a store of a bucket alone, moved in place to OCFL
//! storage roots. The migration is killed after the copies, after a version inventory, after
//! a root inventory and after a delete, and each rerun goes on; a damaged old key refuses its
//! package only (nothing of it moved or deleted); a store whose server-side copies are refused
//! copies through the machine; a damaged object a killed run committed, moved out to the
//! quarantine, is killed among its deletes and the next run finishes. At the end every root is validated by
//! ocfl-py (the bucket's downloaded) and read by rocfl, `store check --deep` is clean, every
//! package comes back byte for byte and no old key is left.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use super::ocfl::{assert_ocfl_valid, files_of};
use super::ocfl_bucket::Bucket;
use super::ocfl_migrate::samples;
use super::ocfl_rocfl::{listed, rocfl, text};
use super::{garage, objid, store};
use crate::util::{stored_dir, webaip_command};

/// A store in the webaip layout: bucket replica `garage` (first) under `prefix`, and with
/// `disk`, a folder replica `disk`.
fn webaip_config(dir: &Path, g: &HashMap<String, String>, prefix: &str, disk: bool) -> PathBuf {
    let endpoints: Vec<String> = g["S3_ENDPOINTS"].split(',').map(|e| format!("\"{e}\"")).collect();
    let mut text = format!(
        "state = \"{state}\"\n\n[user]\nname = \"webaip tests\"\naddress = \"mailto:tests@example.org\"\n\n\
         [[replica]]\nname = \"garage\"\ntype = \"s3\"\nlayout = \"webaip\"\nendpoints = [{eps}]\n\
         bucket = \"{bucket}\"\nregion = \"garage\"\nprefix = \"{prefix}\"\n",
        state = dir.join("state.sqlite").display(),
        eps = endpoints.join(", "),
        bucket = g["S3_BUCKET"],
    );
    if disk {
        text.push_str(&format!(
            "\n[[replica]]\nname = \"disk\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
            dir.join("disk").display()
        ));
    }
    let path = dir.join("store.toml");
    fs::write(&path, text).unwrap();
    path
}

/// `store migrate` with the test hooks `fail_at` set; its exit status (`None`: aborted).
fn migrate_failing_at(g: &HashMap<String, String>, cfg: &Path, fail_at: &str) -> Option<i32> {
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json", "migrate"])
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .env("WEBAIP_FAIL_AT", fail_at)
        .output()
        .unwrap();
    o.status.code()
}

/// What `list` gives once `settled` holds of it (deletes reached every node), or after five
/// seconds what it gives then.
fn listed_once_settled<T>(list: impl Fn() -> T, settled: impl Fn(&T) -> bool) -> T {
    for _ in 0..50 {
        let l = list();
        if settled(&l) {
            return l;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    list()
}

/// The bucket's keys of the webaip layout (below a two-character partition).
fn old_keys(b: &Bucket) -> Vec<String> {
    b.list().into_keys().filter(|k| k.split('/').next().unwrap().len() == 2).collect()
}

/// The bucket's keys ending with `/name` at depth `depth` (an object's directory is four
/// segments deep: three tuples and the id).
fn keys_named(b: &Bucket, name: &str, depth: usize) -> Vec<String> {
    let keys = b.list().into_keys();
    keys.filter(|k| k.ends_with(&format!("/{name}")) && k.split('/').count() == depth).collect()
}

/// Root inventories of objects in the bucket.
fn root_inventories(b: &Bucket) -> usize {
    keys_named(b, "inventory.json", 5).len()
}

fn assert_gets_back(g: &HashMap<String, String>, cfg: &Path, pkgs: &[PathBuf], tag: &str) {
    for p in pkgs {
        let id = objid(p);
        let to = cfg.with_file_name(format!("got-{tag}-{}", p.file_name().unwrap().display()));
        let (code, r) = store(g, cfg, &["get", &id, "--out", to.to_str().unwrap()]);
        assert_eq!(code, 0, "{tag} {id}: {r:#}");
        assert_eq!(files_of(&to), files_of(p), "{tag} {id}");
    }
}

/// The bucket root (downloaded) and `others` pass ocfl-py and rocfl, each holding `pkgs`,
/// whose v1 rocfl lists with their own digests and gives back byte for byte.
fn assert_valid_roots(b: &Bucket, tmp: &Path, others: &[PathBuf], pkgs: &[PathBuf]) {
    let mirror = b.download(&tmp.join("mirror"));
    for root in std::iter::once(&mirror).chain(others) {
        assert_ocfl_valid(root, pkgs.len() as u64);
        let report = text(&rocfl(root, &["validate"]));
        assert!(report.contains("Invalid objects: 0"), "{report}");
        assert!(report.contains("Storage issues:  0"), "{report}");
        for p in pkgs {
            let id = objid(p);
            assert_eq!(listed(root, &id, "1"), files_of(p), "{id}");
            let o = rocfl(root, &["cat", "--version", "1", &id, "METS.xml"]);
            assert_eq!(o.stdout, fs::read(p.join("METS.xml")).unwrap(), "{id}");
        }
    }
}

#[test]
fn bucket_replicas_move_to_ocfl_through_kills_and_a_damaged_old_key() {
    let _cluster = crate::util::garage_in_use();
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("migrate-{}/", nanos.as_nanos());
    let b = Bucket::new(&g, &prefix);
    let cfg = webaip_config(tmp.path(), &g, &prefix, true);
    let pkgs = samples(tmp.path(), &["heritrix-job", "nedlib", "mirror"]);
    for p in &pkgs {
        let (code, r) = store(&g, &cfg, &["put", p.to_str().unwrap()]);
        assert_eq!((code, &r["packages"][0]["accepted"]), (0, &serde_json::json!(true)), "{r:#}");
    }
    // An old key of the mirror package damaged in the bucket (same size, other bytes).
    let damaged_dir = format!("{}/content/", stored_dir(&objid(&pkgs[2])));
    let keys = old_keys(&b);
    let damaged = keys.iter().find(|k| k.contains(&damaged_dir)).unwrap().clone();
    let mut bytes = b.get(&damaged);
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    b.put(&damaged, &bytes);

    // Killed once a package's keys are copied and verified: no root inventory anywhere.
    assert_eq!(migrate_failing_at(&g, &cfg, "migrate-after-copies"), None);
    assert!(!keys_named(&b, "METS.xml", 7).is_empty(), "copies into v1/content");
    assert_eq!(root_inventories(&b), 0);
    assert_eq!(old_keys(&b), keys, "no old key deleted");
    // Killed after the bucket's v1 inventory, before its root inventory.
    assert_eq!(migrate_failing_at(&g, &cfg, "ocfl-before-commit"), None);
    assert_eq!(keys_named(&b, "inventory.json", 6).len(), 1, "a v1 inventory");
    assert_eq!(root_inventories(&b), 0);
    // Killed after one commit (the bucket's root inventory and sidecar).
    assert_eq!(migrate_failing_at(&g, &cfg, "migrate-after-commit"), None);
    assert_eq!(root_inventories(&b), 1);
    assert_eq!(old_keys(&b), keys, "no old key deleted");
    // Killed after the first old key of a package is deleted (its manifest).
    assert_eq!(migrate_failing_at(&g, &cfg, "migrate-after-delete"), None);
    // A node the delete has not reached yet may list the key for a moment.
    let left = listed_once_settled(|| old_keys(&b), |l| l.len() + 1 == keys.len());
    assert_eq!(left.len() + 1, keys.len(), "one old key deleted");
    assert!(keys.iter().any(|k| !left.contains(k) && k.ends_with("/manifest-sha512.txt")));
    // Meanwhile every package is served, and the configuration still says webaip.
    assert_gets_back(&g, &cfg, &pkgs, "meanwhile");
    assert!(!fs::read_to_string(&cfg).unwrap().contains("ocfl"));

    // The rerun moves the two sound packages; the damaged one is refused whole.
    let (code, r) = store(&g, &cfg, &["migrate"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!((r["objects_migrated"].as_u64(), r["remaining"].as_u64()), (Some(2), Some(1)));
    assert_eq!(r["switched"], false, "{r:#}");
    assert!(r["bytes_server_copied"].as_u64().unwrap() > 0, "{r:#}");
    assert_eq!(r["bytes_copied"], 0, "{r:#}");
    assert_eq!(r["refused"][0]["package"], objid(&pkgs[2]).as_str(), "{r:#}");
    let reason = r["refused"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("garage") && reason.contains("damaged"), "{reason}");
    assert_eq!(
        (&r["unrecorded_dirs"], &r["leftovers"]),
        (&serde_json::json!([]), &serde_json::json!([])),
        "{r:#}"
    );
    let mirror_keys: Vec<String> =
        keys.iter().filter(|k| k.starts_with(&stored_dir(&objid(&pkgs[2])))).cloned().collect();
    assert_eq!(old_keys(&b), mirror_keys, "the refused package's old keys, all of them");
    assert_eq!(keys_named(&b, "0=ocfl_object_1.1", 5).len(), 2, "no object of the refused one");

    // Repaired in the old layout from the disk, it moves too, and the store switches.
    let (code, rp) = store(&g, &cfg, &["repair", "--deep"]);
    assert_eq!(code, 0, "{rp:#}");
    let (code, r) = store(&g, &cfg, &["migrate"]);
    assert_eq!((code, r["switched"].as_bool()), (0, Some(true)), "{r:#}");
    assert!(fs::read_to_string(&cfg).unwrap().contains("layout = \"ocfl\""));
    assert_eq!(old_keys(&b), Vec::<String>::new(), "no old key left");
    assert_valid_roots(&b, tmp.path(), &[tmp.path().join("disk")], &pkgs);
    let (code, c) = store(&g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    assert_gets_back(&g, &cfg, &pkgs, "after");

    bucket_only_store(&g, tmp.path());
    damaged_object_beside_deleted_old_keys(&g, tmp.path());
    set_aside_killed_among_its_deletes(&g, tmp.path());
}

/// A bucket-only store killed after its commit, the committed object then damaged: the rerun
/// moves it out of the bucket (every file downloaded to the quarantine first) and is killed
/// among the deletes, leaving an object without root inventory. The quarantine is whole
/// (the damaged bytes, the root inventory) and the next run clears the leftover as its own
/// and moves the package.
fn set_aside_killed_among_its_deletes(g: &HashMap<String, String>, tmp: &Path) {
    let dir = tmp.join("aside");
    fs::create_dir_all(&dir).unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("migrate-aside-{}/", nanos.as_nanos());
    let b = Bucket::new(g, &prefix);
    let cfg = webaip_config(&dir, g, &prefix, false);
    let pkgs = samples(&dir, &["nedlib"]);
    let (code, r) = store(g, &cfg, &["put", pkgs[0].to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    let keys = old_keys(&b);
    assert_eq!(migrate_failing_at(g, &cfg, "migrate-after-commit"), None);
    assert_eq!((root_inventories(&b), old_keys(&b)), (1, keys.clone()));
    let content: Vec<String> =
        b.list().into_keys().filter(|k| k.contains("/v1/content/")).collect();
    let key = content.iter().find(|k| k.ends_with("/METS.xml")).unwrap().clone();
    let mut bytes = b.get(&key);
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    b.put(&key, &bytes);
    let in_object = |k: &String| k.split('/').next().unwrap().len() == 3;
    let object: Vec<String> = b.list().into_keys().filter(in_object).collect();

    assert_eq!(migrate_failing_at(g, &cfg, "bucket-mid-quarantine"), None);
    assert_eq!(root_inventories(&b), 0, "the root inventory is gone first");
    // A node the deletes have not reached yet may list a key for a moment.
    let listed = || b.list().into_keys().filter(in_object).count();
    let left = listed_once_settled(listed, |n| n + 3 == object.len());
    assert_eq!(left + 3, object.len(), "three files deleted");
    // The quarantine holds the whole object, under its final name.
    let quarantine = dir.join("state.sqlite.webaip-work/quarantine");
    let kept: Vec<PathBuf> =
        fs::read_dir(&quarantine).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(!kept[0].file_name().unwrap().to_str().unwrap().starts_with('.'), "{kept:?}");
    for k in &object {
        assert!(kept[0].join(k).is_file(), "{k} in the quarantine");
    }
    assert_eq!(fs::read(kept[0].join(&key)).unwrap(), bytes, "the damaged bytes kept");

    let (code, r) = store(g, &cfg, &["migrate"]);
    assert_eq!((code, r["switched"].as_bool()), (0, Some(true)), "{r:#}");
    assert_eq!(old_keys(&b), Vec::<String>::new());
    assert_valid_roots(&b, &dir, &[], &pkgs);
    let (code, c) = store(g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    assert_gets_back(g, &cfg, &pkgs, "set aside");
}

/// A bucket-only store killed after the first old key of a package was deleted, its
/// committed object then damaged: the rerun refuses the package and leaves the object where
/// it is (moving it aside would leave the bucket with neither the object nor the old keys).
/// Once the object is mended the rerun finishes.
fn damaged_object_beside_deleted_old_keys(g: &HashMap<String, String>, tmp: &Path) {
    let dir = tmp.join("neither");
    fs::create_dir_all(&dir).unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("migrate-neither-{}/", nanos.as_nanos());
    let b = Bucket::new(g, &prefix);
    let cfg = webaip_config(&dir, g, &prefix, false);
    let pkgs = samples(&dir, &["nedlib"]);
    let (code, r) = store(g, &cfg, &["put", pkgs[0].to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(migrate_failing_at(g, &cfg, "migrate-after-delete"), None);
    let content: Vec<String> =
        b.list().into_keys().filter(|k| k.contains("/v1/content/")).collect();
    let key = content.iter().find(|k| k.ends_with("/METS.xml")).unwrap().clone();
    let good = b.get(&key);
    let mut bytes = good.clone();
    bytes[good.len() / 2] ^= 0x55;
    b.put(&key, &bytes);
    let keys = b.list();
    let (code, r) = store(g, &cfg, &["migrate"]);
    assert_eq!((code, r["objects_migrated"].as_u64()), (1, Some(0)), "{r:#}");
    assert_eq!(r["refused"][0]["package"], objid(&pkgs[0]).as_str(), "{r:#}");
    assert_eq!(b.list(), keys, "nothing moved aside, copied or deleted: {r:#}");
    b.put(&key, &good);
    let (code, r) = store(g, &cfg, &["migrate"]);
    assert_eq!((code, r["switched"].as_bool()), (0, Some(true)), "{r:#}");
    assert_eq!(old_keys(&b), Vec::<String>::new());
    assert_valid_roots(&b, &dir, &[], &pkgs);
    assert_gets_back(g, &cfg, &pkgs, "mended");
}

/// A store of one bucket: a stray key at its top stops the switch and is named; once it is
/// taken away the store switches, and its root is valid.
fn bucket_only_store(g: &HashMap<String, String>, tmp: &Path) {
    let dir = tmp.join("alone");
    fs::create_dir_all(&dir).unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("migrate-alone-{}/", nanos.as_nanos());
    let b = Bucket::new(g, &prefix);
    let cfg = webaip_config(&dir, g, &prefix, false);
    let pkgs = samples(&dir, &["nedlib", "mirror"]);
    for p in &pkgs {
        let (code, r) = store(g, &cfg, &["put", p.to_str().unwrap()]);
        assert_eq!(code, 0, "{r:#}");
    }
    b.put("notes.txt", b"a stray key");
    // Every server-side copy taken for refused: the keys go through this machine instead.
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json", "migrate"])
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .env("WEBAIP_FAIL_AT", "migrate-no-server-copy")
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((o.status.code(), r["objects_migrated"].as_u64()), (Some(1), Some(2)), "{r:#}");
    assert_eq!(r["bytes_server_copied"], 0, "{r:#}");
    let bytes: u64 = pkgs
        .iter()
        .flat_map(|p| walkdir::WalkDir::new(p).into_iter().map(Result::unwrap))
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert_eq!(r["bytes_copied"].as_u64(), Some(bytes), "every byte of both packages: {r:#}");
    assert_eq!(r["leftovers"], serde_json::json!(["garage: notes.txt"]), "{r:#}");
    assert_eq!(r["switched"], false, "{r:#}");
    // Not switched yet: the moved packages are read from their objects in the bucket.
    assert!(!fs::read_to_string(&cfg).unwrap().contains("ocfl"));
    assert_gets_back(g, &cfg, &pkgs, "moved");
    b.delete("notes.txt");
    let (code, r) = store(g, &cfg, &["migrate"]);
    assert_eq!(r["objects_migrated"], 0, "{r:#}");
    assert_eq!((code, r["switched"].as_bool()), (0, Some(true)), "{r:#}");
    assert_eq!(old_keys(&b), Vec::<String>::new());
    let all: BTreeMap<String, u64> = b.list();
    assert!(all.keys().all(|k| k.split('/').next().unwrap().len() != 2), "{all:#?}");
    assert_valid_roots(&b, &dir, &[], &pkgs);
    let (code, c) = store(g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    assert_gets_back(g, &cfg, &pkgs, "alone");
}
