//! `webaip store migrate` of bucket replicas (the local Garage cluster): a store of a bucket
//! and a folder in the webaip layout, and a store of a bucket alone, moved in place to OCFL
//! storage roots. The migration is killed after the copies, after a version inventory, after
//! a root inventory and after a delete, and each rerun goes on; a damaged old key refuses its
//! package only (nothing of it moved or deleted); a store whose server-side copies are refused
//! copies through the machine; a damaged object a killed run committed, moved out to the
//! quarantine, is killed among its deletes and the next run finishes; a server-side copy
//! gone wrong refuses its package, naming the copy, with nothing moved or deleted, and the
//! rerun finishes. At the end every root is validated by ocfl-py
//! (the bucket's downloaded) and read by rocfl, `store check --deep` is clean, every package
//! comes back byte for byte and no old key is left.
//!
//! Key names: package files whose names object_store percent-encodes in the webaip layout
//! (`#`, `%`, `~`, brackets, non-ASCII...) are checked clean, removed to the last key and
//! moved; a package whose object keys would be longer than the bucket takes (Garage's LMDB
//! limit, 479 bytes) is refused by migrate and by an OCFL put, with nothing written.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use super::ocfl::{assert_ocfl_valid, files_of};
use super::ocfl_bucket::Bucket;
use super::ocfl_migrate::samples;
use super::ocfl_rocfl::{listed, rocfl, text};
use super::{garage, objid, store};
use crate::util::{Package, package, repo, stored_dir, webaip_command};

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

/// `store migrate` with the test hooks `fail_at` set; its exit status (`None`: aborted) and
/// its report (`null` when it wrote none).
fn migrate_with_hook(
    g: &HashMap<String, String>,
    cfg: &Path,
    fail_at: &str,
) -> (Option<i32>, serde_json::Value) {
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json", "migrate"])
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .env("WEBAIP_FAIL_AT", fail_at)
        .output()
        .unwrap();
    (o.status.code(), serde_json::from_slice(&o.stdout).unwrap_or_default())
}

/// `store migrate` with the test hooks `fail_at` set; its exit status (`None`: aborted).
fn migrate_failing_at(g: &HashMap<String, String>, cfg: &Path, fail_at: &str) -> Option<i32> {
    migrate_with_hook(g, cfg, fail_at).0
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
    a_server_copy_gone_wrong(&g, tmp.path());
}

/// A bucket-only store in the webaip layout holding the nedlib sample, under a new prefix.
struct NedlibStore {
    bucket: Bucket,
    /// The store's folder (configuration, state database, work directory).
    dir: PathBuf,
    cfg: PathBuf,
    pkg: PathBuf,
    /// The package's keys in the bucket, as the put left them.
    keys: Vec<String>,
}

/// The nedlib sample put to a new bucket-only store in `tmp/tag`.
fn stored_nedlib(g: &HashMap<String, String>, tmp: &Path, tag: &str) -> NedlibStore {
    let dir = tmp.join(tag);
    fs::create_dir_all(&dir).unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("migrate-{tag}-{}/", nanos.as_nanos());
    let bucket = Bucket::new(g, &prefix);
    let cfg = webaip_config(&dir, g, &prefix, false);
    let pkg = samples(&dir, &["nedlib"]).remove(0);
    let (code, r) = store(g, &cfg, &["put", pkg.to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    let keys = old_keys(&bucket);
    NedlibStore { bucket, dir, cfg, pkg, keys }
}

/// The server-side copy of the package's METS.xml comes back with other bytes (a faulty
/// server, made by a test hook) while the old key holds the recorded ones: the package is
/// refused naming the copy, no old key is deleted, nothing is committed, and the next run
/// copies again and moves it.
fn a_server_copy_gone_wrong(g: &HashMap<String, String>, tmp: &Path) {
    let NedlibStore { bucket: b, dir, cfg, pkg, keys } = stored_nedlib(g, tmp, "spoiled");
    let (code, r) = migrate_with_hook(g, &cfg, "migrate-spoil-copy");
    assert_eq!((code, r["objects_migrated"].as_u64()), (Some(1), Some(0)), "{r:#}");
    assert_eq!(r["refused"][0]["package"], objid(&pkg).as_str(), "{r:#}");
    let reason = r["refused"][0]["reason"].as_str().unwrap();
    // The copy is named by its key (cleared since: what was copied is no version).
    let copy = "/v1/content/METS.xml, the bucket's server-side copy of METS.xml";
    let named = reason.starts_with("replica garage: ") && reason.contains(copy);
    assert!(named, "{reason}");
    assert!(reason.contains("the copy went wrong, not the package"), "{reason}");
    assert_eq!((old_keys(&b), root_inventories(&b)), (keys, 0), "nothing deleted or committed");

    let (code, r) = store(g, &cfg, &["migrate"]);
    assert_eq!((code, r["switched"].as_bool()), (0, Some(true)), "{r:#}");
    assert_eq!(old_keys(&b), Vec::<String>::new());
    assert_valid_roots(&b, &dir, &[], std::slice::from_ref(&pkg));
    assert_gets_back(g, &cfg, &[pkg], "copy gone wrong");
}

/// A bucket-only store killed after its commit, the committed object then damaged: the rerun
/// moves it out of the bucket (every file downloaded to the quarantine first) and is killed
/// among the deletes, leaving an object without root inventory. The quarantine is whole
/// (the damaged bytes, the root inventory) and the next run clears the leftover as its own
/// and moves the package.
fn set_aside_killed_among_its_deletes(g: &HashMap<String, String>, tmp: &Path) {
    let NedlibStore { bucket: b, dir, cfg, pkg, keys } = stored_nedlib(g, tmp, "aside");
    let pkgs = [pkg];
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
    let NedlibStore { bucket: b, dir, cfg, pkg, .. } = stored_nedlib(g, tmp, "neither");
    let pkgs = [pkg];
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

/// The longest key Garage's default metadata engine (LMDB) takes, in bytes: a longer one is
/// refused by every node (HTTP 503, `MDB_BAD_VALSIZE`).
const GARAGE_MAX_KEY: usize = 479;

/// The Heritrix job sample with its log `from` renamed `to`, packaged into `dir/pkg-{tag}`.
fn renamed_log_package(dir: &Path, tag: &str, from: &str, to: &str) -> PathBuf {
    let job = dir.join(format!("job-{tag}"));
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(repo().join("samples/heritrix-job"))
        .arg(&job)
        .status()
        .unwrap();
    assert!(status.success());
    fs::rename(job.join("logs").join(from), job.join("logs").join(to)).unwrap();
    let out = dir.join(format!("pkg-{tag}"));
    let args = Package::new().quiet().args(&["--deterministic"]);
    package(args, &out, &[&job]).succeeded();
    assert!(out.join("logs").join(to).is_file(), "{}", out.display());
    out
}

/// `config` with `max_key_bytes = max` on its bucket replica (under `prefix`).
fn with_max_key(config: &Path, prefix: &str, max: usize) {
    let line = format!("prefix = \"{prefix}\"\n");
    let text = fs::read_to_string(config).unwrap();
    assert!(text.contains(&line));
    fs::write(config, text.replace(&line, &format!("{line}max_key_bytes = {max}\n"))).unwrap();
}

#[test]
fn bucket_key_names_percent_encoded_or_too_long() {
    let _cluster = crate::util::garage_in_use();
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    percent_encoded_names(&g, tmp.path());
    keys_longer_than_the_bucket_takes(&g, tmp.path());
}

/// Names object_store percent-encodes in the webaip layout's keys: `check --deep` finds every
/// copy (none missing, none extra), `remove` leaves no key of the package in the bucket, and
/// `migrate` moves the package (its listing compared with its records name for name).
fn percent_encoded_names(g: &HashMap<String, String>, tmp: &Path) {
    let dir = tmp.join("names");
    fs::create_dir_all(&dir).unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("migrate-names-{}/", nanos.as_nanos());
    let b = Bucket::new(g, &prefix);
    let cfg = webaip_config(&dir, g, &prefix, true);
    let kept = renamed_log_package(&dir, "kept", "crawl.log", "crawl #2 [x] ~é%41.log");
    let gone = renamed_log_package(&dir, "gone", "uri-errors.log", "uri errors {1} ^|`.log");
    for p in [&kept, &gone] {
        let (code, r) = store(g, &cfg, &["put", p.to_str().unwrap()]);
        assert_eq!((code, &r["packages"][0]["accepted"]), (0, &serde_json::json!(true)), "{r:#}");
    }
    let stored = "/logs/crawl %232 %5Bx%5D %7E%C3%A9%2541.log";
    assert!(old_keys(&b).iter().any(|k| k.ends_with(stored)), "{:#?}", old_keys(&b));
    let (code, c) = store(g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    // The state database rebuilt from the replicas: the listed names are the manifests'.
    for suffix in ["", "-wal", "-shm"] {
        let _ = fs::remove_file(dir.join(format!("state.sqlite{suffix}")));
    }
    let (code, r) = store(g, &cfg, &["rebuild-state"]);
    assert_eq!((code, r["packages"].as_array().map(Vec::len)), (0, Some(2)), "{r:#}");
    let (code, c) = store(g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "rebuilt: {c:#}");

    let gone_dir = stored_dir(&objid(&gone));
    assert!(old_keys(&b).iter().any(|k| k.starts_with(&gone_dir) && k.contains("%7B1%7D")));
    let (code, r) = store(g, &cfg, &["remove", "--yes", &objid(&gone)]);
    assert_eq!((code, &r["removed"]), (0, &serde_json::json!(true)), "{r:#}");
    let left: Vec<String> = b.list().into_keys().filter(|k| k.starts_with(&gone_dir)).collect();
    assert_eq!(left, Vec::<String>::new(), "every key of the removed package deleted: {r:#}");

    let (code, r) = store(g, &cfg, &["migrate"]);
    assert_eq!((code, r["switched"].as_bool()), (0, Some(true)), "{r:#}");
    assert_eq!(r["objects_migrated"], 1, "{r:#}");
    assert_eq!(old_keys(&b), Vec::<String>::new());
    assert!(b.list().keys().any(|k| k.ends_with("/v1/content/logs/crawl #2 [x] ~é%41.log")));
    assert_valid_roots(&b, &dir, &[dir.join("disk")], std::slice::from_ref(&kept));
    let (code, c) = store(g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    assert_gets_back(g, &cfg, &[kept], "names");
}

/// A bucket prefix as long as leaves the package's longest webaip-layout key exactly at
/// Garage's limit: the put is accepted, and the object's keys (`<tuples>/<id>/v1/content/`
/// instead of `<partition>/<directory>/`) would not fit. `migrate` refuses the package, again
/// on a rerun, naming the file, the key's length and the limit, with nothing copied; an OCFL
/// put to a bucket with the same prefix is refused the same way, with nothing written.
fn keys_longer_than_the_bucket_takes(g: &HashMap<String, String>, tmp: &Path) {
    let dir = tmp.join("long");
    fs::create_dir_all(&dir).unwrap();
    let pkgs = samples(&dir, &["nedlib"]);
    let id = objid(&pkgs[0]);
    let longest = files_of(&pkgs[0]).keys().map(|f| stored_dir(&id).len() + 1 + f.len()).max();
    let prefix = |tag: &str| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        let head = format!("long-{tag}-{}-", nanos.as_nanos());
        let pad = GARAGE_MAX_KEY - longest.unwrap() - head.len() - 1;
        format!("{head}{}/", "x".repeat(pad))
    };
    let webaip_prefix = prefix("webaip");
    let b = Bucket::new(g, &webaip_prefix);
    let cfg = webaip_config(&dir, g, &webaip_prefix, false);
    with_max_key(&cfg, &webaip_prefix, GARAGE_MAX_KEY);
    let (code, r) = store(g, &cfg, &["put", pkgs[0].to_str().unwrap()]);
    assert_eq!((code, &r["packages"][0]["accepted"]), (0, &serde_json::json!(true)), "{r:#}");
    let keys = old_keys(&b);
    let at_limit = keys.iter().map(|k| webaip_prefix.len() + k.len()).max();
    assert_eq!(at_limit, Some(GARAGE_MAX_KEY), "the longest old key is at the limit");
    for run in ["first", "again"] {
        let (code, r) = store(g, &cfg, &["migrate"]);
        assert_eq!((code, r["objects_migrated"].as_u64()), (1, Some(0)), "{run}: {r:#}");
        let reason = r["refused"][0]["reason"].as_str().unwrap();
        let named = files_of(&pkgs[0]).into_keys().any(|f| reason.contains(&format!(" {f} ")));
        assert!(named && reason.contains("garage"), "{run}: {reason}");
        assert!(reason.contains(&format!("at most {GARAGE_MAX_KEY} bytes")), "{run}: {reason}");
        assert_eq!(old_keys(&b), keys, "{run}: every old key kept");
        assert!(b.list().keys().all(|k| !k.contains("ocfl_object")), "{run}: no object begun");
    }
    ocfl_put_too_long(g, &dir, &prefix("ocfl"), &pkgs[0]);
}

/// An OCFL put to a bucket under `prefix` (where the package's object keys are longer than
/// Garage takes) is refused, naming the file and the limit, with nothing of the object
/// written.
fn ocfl_put_too_long(g: &HashMap<String, String>, tmp: &Path, prefix: &str, pkg: &Path) {
    let dir = tmp.join("ocfl-put");
    fs::create_dir_all(&dir).unwrap();
    let b = Bucket::new(g, prefix);
    let cfg = webaip_config(&dir, g, prefix, false);
    let text =
        fs::read_to_string(&cfg).unwrap().replace("layout = \"webaip\"", "layout = \"ocfl\"");
    fs::write(&cfg, text).unwrap();
    with_max_key(&cfg, prefix, GARAGE_MAX_KEY);
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "put"])
        .arg(pkg)
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{said}");
    assert!(said.contains(&format!("at most {GARAGE_MAX_KEY} bytes")), "{said}");
    assert!(said.contains("replica garage: ") && said.contains("not stored"), "{said}");
    assert!(b.list().keys().all(|k| !k.contains("ocfl_object")), "{:#?}", b.list());
}
