//! OCFL storage roots in a bucket (the local Garage cluster) beside one on a file system: put,
//! a changed package as v2, `ingest --store` (the AIP as the next version), get of each
//! version byte for byte, `check --deep`, damage in the bucket and on the disk repaired from
//! the other replica, interrupted puts (before the root inventory, and between the root
//! inventory and its sidecar) that leave the old version for every reader. Every bucket root
//! is downloaded and validated by ocfl-py (0 errors, 0 warnings) and read by rocfl.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use super::ocfl::{assert_ocfl_valid, files_of, findings};
use super::ocfl_rocfl::{listed, rocfl, text};
use super::{garage, objid, same_objid_pair, store};
use crate::util::webaip_command;

/// The test's bucket prefix, reached as a plain S3 client (not through webaip).
pub(super) struct Bucket {
    s3: object_store::aws::AmazonS3,
    rt: tokio::runtime::Runtime,
    prefix: String,
}

impl Bucket {
    pub(super) fn new(g: &HashMap<String, String>, prefix: &str) -> Self {
        let s3 = super::garage_client(g);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Bucket { s3, rt, prefix: prefix.into() }
    }

    /// The key as it is (an OCFL root's keys are not encoded: `urn%3auuid...` is stored so).
    fn path(&self, key: &str) -> ObjectPath {
        ObjectPath::parse(format!("{}{key}", self.prefix)).unwrap()
    }

    /// Every key below the prefix (without it) and its size.
    pub(super) fn list(&self) -> BTreeMap<String, u64> {
        use futures::StreamExt;
        let root = ObjectPath::from(self.prefix.trim_end_matches('/'));
        self.rt.block_on(async {
            let mut out = BTreeMap::new();
            let mut s = self.s3.list(Some(&root));
            while let Some(m) = s.next().await {
                let m = m.unwrap();
                let key = m.location.as_ref()[self.prefix.len()..].to_string();
                out.insert(key, m.size);
            }
            out
        })
    }

    pub(super) fn get(&self, key: &str) -> Vec<u8> {
        self.rt.block_on(async {
            self.s3.get(&self.path(key)).await.unwrap().bytes().await.unwrap().to_vec()
        })
    }

    pub(super) fn put(&self, key: &str, bytes: &[u8]) {
        self.rt.block_on(self.s3.put(&self.path(key), bytes.to_vec().into())).unwrap();
    }

    /// Deletes `key`, and waits until a listing no longer shows it: Garage filters deleted
    /// keys out on each node before merging a listing, so for a moment after a delete a
    /// replica that has not yet received it can still list the key (the listing's read
    /// repair ends that). A test that damages a bucket and checks it at once needs the
    /// damage seen.
    pub(super) fn delete(&self, key: &str) {
        self.rt.block_on(self.s3.delete(&self.path(key))).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.list().contains_key(key) {
            assert!(
                std::time::Instant::now() < deadline,
                "{key} still listed 30 s after its delete"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The storage root, downloaded to `dir` (for ocfl-py and rocfl, which read folders).
    pub(super) fn download(&self, dir: &Path) -> PathBuf {
        let _ = fs::remove_dir_all(dir);
        for key in self.list().keys() {
            let to = dir.join(key);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::write(&to, self.get(key)).unwrap();
        }
        dir.to_path_buf()
    }
}

/// An OCFL bucket replica `garage` (first: `get` reads it first) and a file system one `disk`.
pub(super) fn config(dir: &Path, g: &HashMap<String, String>, prefix: &str) -> PathBuf {
    let endpoints: Vec<String> = g["S3_ENDPOINTS"].split(',').map(|e| format!("\"{e}\"")).collect();
    let text = format!(
        "state = \"{state}\"\n\n[user]\nname = \"webaip tests\"\naddress = \"mailto:tests@example.org\"\n\n\
         [[replica]]\nname = \"garage\"\ntype = \"s3\"\nlayout = \"ocfl\"\nendpoints = [{eps}]\n\
         bucket = \"{bucket}\"\nregion = \"garage\"\nprefix = \"{prefix}\"\n\n\
         [[replica]]\nname = \"disk\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{disk}\"\n",
        state = dir.join("state.sqlite").display(),
        eps = endpoints.join(", "),
        bucket = g["S3_BUCKET"],
        disk = dir.join("disk").display(),
    );
    let path = dir.join("store.toml");
    fs::write(&path, text).unwrap();
    path
}

/// `store put` with the credentials and `hooks` (test-hooks variables) set.
fn put_with(
    g: &HashMap<String, String>,
    cfg: &Path,
    pkg: &Path,
    hooks: &[(&str, &str)],
) -> (i32, serde_json::Value) {
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json", "put"])
        .arg(pkg)
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .envs(hooks.iter().copied())
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(
        |_| serde_json::json!({ "stderr": String::from_utf8_lossy(&o.stderr).to_string() }),
    );
    (o.status.code().unwrap_or(-1), v)
}

/// A plain (not `--json`) `store put` with `hooks` set: its exit status and what it said on
/// standard error (where a refusal is explained).
fn put_refusal(
    g: &HashMap<String, String>,
    cfg: &Path,
    pkg: &Path,
    hooks: &[(&str, &str)],
) -> (Option<i32>, String) {
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "put"])
        .arg(pkg)
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .envs(hooks.iter().copied())
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn check_deep(g: &HashMap<String, String>, cfg: &Path) -> serde_json::Value {
    store(g, cfg, &["check", "--deep"]).1
}

/// Gets version `v` of `id` (or its latest) and compares it with `pkg` byte for byte.
fn get_equals(g: &HashMap<String, String>, cfg: &Path, id: &str, v: Option<&str>, pkg: &Path) {
    let out = cfg.with_file_name(format!(
        "got-{}-{}",
        v.unwrap_or("head"),
        pkg.display().to_string().len()
    ));
    let _ = fs::remove_dir_all(&out);
    let mut args = vec!["get", id, "--out", out.to_str().unwrap()];
    if let Some(v) = v {
        args.extend(["--version", v]);
    }
    let (code, r) = store(g, cfg, &args);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(files_of(&out), files_of(pkg), "{r:#}");
}

/// The bucket root downloaded and validated by ocfl-py and rocfl; rocfl's listing of the
/// head version is `pkg`'s files with their digests.
fn validate(b: &Bucket, tmp: &Path, id: &str, head: &str, pkg: &Path) {
    let root = b.download(&tmp.join("mirror"));
    assert_ocfl_valid(&root, 1);
    let report = text(&rocfl(&root, &["validate"]));
    assert!(report.contains("Invalid objects: 0"), "{report}");
    assert!(report.contains("Storage issues:  0"), "{report}");
    assert!(!report.to_lowercase().contains("warn"), "{report}");
    assert_eq!(listed(&root, id, head.trim_start_matches('v')), files_of(pkg));
}

#[cfg(feature = "s3")]
#[test]
fn ocfl_bucket_roots_keep_versions_survive_damage_and_interrupted_puts() {
    let _cluster = crate::util::garage_in_use();
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("ocfl-{}/", nanos.as_nanos());
    let b = Bucket::new(&g, &prefix);
    let cfg = config(tmp.path(), &g, &prefix);
    let (a, changed) = same_objid_pair(tmp.path());
    let id = objid(&a);

    // v1 on both replicas; the bucket root validates.
    let (code, r) = put_with(&g, &cfg, &a, &[]);
    assert_eq!((code, &r["packages"][0]["version"]), (0, &serde_json::json!("v1")), "{r:#}");
    validate(&b, tmp.path(), &id, "v1", &a);

    // The AIP of the submission is its next version, storing no container again: the only
    // content it adds is its METS and manifest (the sample is 40 kB, so its containers are
    // not the 99 % they are in a crawl; what is added is named instead).
    let before = b.list();
    let o = webaip_command()
        .args(["ingest", "--json", "--deterministic", "--store"])
        .args([&cfg, &a])
        .arg("-o")
        .arg(tmp.path().join("aips"))
        .envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    let aip = PathBuf::from(v["packages"][0]["aip"].as_str().unwrap());
    assert_eq!(v["packages"][0]["stored"]["version"], "v2", "{v:#}");
    let added: Vec<String> = b
        .list()
        .into_keys()
        .filter(|k| !before.contains_key(k))
        .filter_map(|k| k.split_once("/v2/content/").map(|(_, rel)| rel.to_string()))
        .collect();
    assert_eq!(added, ["METS.xml", "manifest-sha512.txt"], "{v:#}");
    get_equals(&g, &cfg, &objid(&aip), None, &aip);

    // A changed package is v3; every version comes back byte for byte, from the bucket.
    let (code, r) = put_with(&g, &cfg, &changed, &[]);
    assert_eq!((code, &r["packages"][0]["version"]), (0, &serde_json::json!("v3")), "{r:#}");
    get_equals(&g, &cfg, &id, Some("1"), &a);
    get_equals(&g, &cfg, &id, None, &changed);
    let c = check_deep(&g, &cfg);
    assert_eq!(c["clean"], true, "{c:#}");
    validate(&b, tmp.path(), &id, "v3", &changed);
    let (_, log) = store(&g, &cfg, &["log", &id]);
    assert_eq!(log["head"], "v3", "{log:#}");

    // Damage in the bucket: a content file, the root inventory, its sidecar, a whole
    // version's files. check finds each on the bucket only; repair rebuilds from the disk.
    let keys = b.list();
    let obj = keys.keys().find(|k| k.ends_with("/0=ocfl_object_1.1")).unwrap();
    let obj = obj.trim_end_matches("/0=ocfl_object_1.1").to_string();
    let content =
        keys.keys().find(|k| k.contains("/v1/content/") && !k.ends_with("METS.xml")).unwrap();
    b.put(content, b"not the container");
    b.put(&format!("{obj}/inventory.json"), b"{}");
    b.put(&format!("{obj}/inventory.json.sha512"), b"0  inventory.json\n");
    for k in keys.keys().filter(|k| k.starts_with(&format!("{obj}/v2/"))) {
        b.delete(k);
    }
    let c = check_deep(&g, &cfg);
    assert_eq!(c["clean"], false);
    assert!(findings(&c).iter().all(|(r, _)| r == "garage"), "{c:#}");
    let (code, rep) = store(&g, &cfg, &["repair", "--deep"]);
    assert_eq!((code, &rep["repaired"]), (0, &serde_json::json!(true)), "{rep:#}");
    assert_eq!(b.list(), keys, "the bucket holds exactly the object again");
    validate(&b, tmp.path(), &id, "v3", &changed);

    // Damage on the disk is repaired from the bucket.
    let disk_obj = super::ocfl::object_dir(&tmp.path().join("disk"));
    fs::remove_file(disk_obj.join("v1/content/METS.xml")).unwrap();
    let (code, rep) = store(&g, &cfg, &["repair"]);
    assert_eq!((code, &rep["repaired"]), (0, &serde_json::json!(true)), "{rep:#}");
    assert_ocfl_valid(&tmp.path().join("disk"), 1);

    interrupted_puts(&g, &cfg, &b, &obj, &a, tmp.path());
}

/// A put killed before the bucket's root inventory leaves orphan `v4/` files there that no
/// reader sees (the object is v3 everywhere); the rerun clears them and completes. One killed
/// between the root inventory and its sidecar is reported as a stale sidecar; repair
/// completes the bucket's copy and brings the disk forward.
fn interrupted_puts(
    g: &HashMap<String, String>,
    cfg: &Path,
    b: &Bucket,
    obj: &str,
    a: &Path,
    tmp: &Path,
) {
    let id = objid(a);
    let third = tmp.join("third");
    let meta = tmp.join("third.toml");
    fs::write(&meta, "title = \"A third version\"\n").unwrap();
    crate::util::package(
        crate::util::Package::new().quiet().args(&[
            "--deterministic",
            "--metadata",
            meta.to_str().unwrap(),
        ]),
        &third,
        &[&crate::util::repo().join("samples/heritrix-job")],
    )
    .succeeded();
    let before = b.list();
    let (code, _) = put_with(g, cfg, &third, &[("WEBAIP_FAIL_AT", "ocfl-before-commit")]);
    assert_ne!(code, 0);
    let orphans: Vec<String> = b.list().into_keys().filter(|k| !before.contains_key(k)).collect();
    assert!(!orphans.is_empty() && orphans.iter().all(|k| k.starts_with(&format!("{obj}/v4/"))));
    let (_, log) = store(g, cfg, &["log", &id]);
    assert_eq!(log["head"], "v3", "{log:#}");
    let c = check_deep(g, cfg);
    let kinds = findings(&c);
    assert!(!kinds.is_empty(), "{c:#}");
    assert!(kinds.iter().all(|f| f == &("garage".into(), "uncommitted-version".into())), "{c:#}");
    let (code, r) = put_with(g, cfg, &third, &[]);
    assert_eq!((code, &r["packages"][0]["version"]), (0, &serde_json::json!("v4")), "{r:#}");
    assert_eq!(check_deep(g, cfg)["clean"], true);
    validate(b, tmp, &id, "v4", &third);

    // Killed between the root inventory and its sidecar (v5: the first package again).
    let (code, _) =
        put_with(g, cfg, a, &[("WEBAIP_FAIL_AT", "ocfl-between-inventory-and-sidecar")]);
    assert_ne!(code, 0);
    let root = b.get(&format!("{obj}/inventory.json"));
    assert_eq!(root, b.get(&format!("{obj}/v5/inventory.json")));
    let c = check_deep(g, cfg);
    assert!(findings(&c).contains(&("garage".into(), "sidecar-stale".into())), "{c:#}");
    let (code, rep) = store(g, cfg, &["repair"]);
    assert_eq!((code, &rep["repaired"]), (0, &serde_json::json!(true)), "{rep:#}");
    get_equals(g, cfg, &id, None, a);
    validate(b, tmp, &id, "v5", a);
    assert_ocfl_valid(&tmp.join("disk"), 1);
}

/// A store of buckets only: the files a version adds are not read before they are sent (each
/// upload hashes what it sends). A package one of whose containers is not its manifest's
/// bytes is refused as damaged, naming the file and both digests, and the bucket keeps
/// nothing of it; the intact package is then stored and validates.
#[cfg(feature = "s3")]
#[test]
fn ocfl_bucket_only_store_refuses_a_damaged_package_found_by_the_upload_and_keeps_nothing() {
    let _cluster = crate::util::garage_in_use();
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("ocfl-only-{}/", nanos.as_nanos());
    let b = Bucket::new(&g, &prefix);
    let endpoints: Vec<String> = g["S3_ENDPOINTS"].split(',').map(|e| format!("\"{e}\"")).collect();
    let cfg = tmp.path().join("store.toml");
    let text = format!(
        "state = \"{}\"\n\n[[replica]]\nname = \"garage\"\ntype = \"s3\"\nendpoints = [{}]\n\
         bucket = \"{}\"\nregion = \"garage\"\nprefix = \"{prefix}\"\n",
        tmp.path().join("state.sqlite").display(),
        endpoints.join(", "),
        g["S3_BUCKET"],
    );
    fs::write(&cfg, text).unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let damaged = tmp.path().join("damaged");
    crate::util::copy_tree(&a, &damaged);
    let container = fs::read_dir(damaged.join("content"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .unwrap();
    let mut bytes = fs::read(&container).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    fs::write(&container, &bytes).unwrap();

    // Whether the uploads run (they find the damage) or every one fails (the files are then
    // hashed here): the damaged package is refused, and nothing of it is kept.
    let name = container.file_name().unwrap().to_string_lossy().to_string();
    for hooks in [&[][..], &[("WEBAIP_FAIL_AT", "bucket-upload")][..]] {
        let (code, said) = put_refusal(&g, &cfg, &damaged, hooks);
        assert_eq!(code, Some(2), "{hooks:?}: {said}");
        assert!(said.contains(&name) && said.contains("its SHA-512 is"), "{said}");
        let objects: Vec<String> = b.list().into_keys().filter(|k| k.contains("urn%3a")).collect();
        assert_eq!(objects, Vec::<String>::new(), "nothing of the refused package is kept");
    }
    // A METS the schema refuses (its manifest line agreeing): the audit, which runs while
    // the uploads send the files, refuses the package, and what was sent is cleared.
    let invalid = tmp.path().join("invalid");
    crate::util::copy_tree(&a, &invalid);
    let mets = fs::read_to_string(invalid.join("METS.xml")).unwrap();
    let bad = mets.replacen("</mets:metsHdr>", "<mets:forbidden/></mets:metsHdr>", 1);
    assert_ne!(bad, mets);
    let manifest = fs::read_to_string(invalid.join("manifest-sha512.txt")).unwrap();
    let line = |text: &str| format!("{}  METS.xml", super::sha512_hex(text.as_bytes()));
    let agreeing = manifest.replace(&line(&mets), &line(&bad));
    assert_ne!(agreeing, manifest, "the manifest names the METS");
    fs::write(invalid.join("manifest-sha512.txt"), agreeing).unwrap();
    fs::write(invalid.join("METS.xml"), bad).unwrap();
    let (code, said) = put_refusal(&g, &cfg, &invalid, &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("INVALID DESCRIPTION"), "refused for its METS: {said}");
    let objects: Vec<String> = b.list().into_keys().filter(|k| k.contains("urn%3a")).collect();
    assert_eq!(objects, Vec::<String>::new(), "nothing of the refused package is kept");
    // The intact package whose uploads all fail: not stored, and what the put says it
    // verified (every file's SHA-512) was verified, here.
    let (code, r) = put_with(&g, &cfg, &a, &[("WEBAIP_FAIL_AT", "bucket-upload")]);
    assert_ne!(code, 0, "{r:#}");
    assert_ne!(code, 2, "an intact package is not refused as damaged: {r:#}");

    let (code, r) = put_with(&g, &cfg, &a, &[]);
    assert_eq!((code, &r["packages"][0]["version"]), (0, &serde_json::json!("v1")), "{r:#}");
    let root = b.download(&tmp.path().join("mirror"));
    assert_ocfl_valid(&root, 1);
    assert_eq!(store(&g, &cfg, &["check", "--deep"]).1["clean"], true);
    files_without_root_inventory_are_kept(&g, &cfg, &b, &a, tmp.path());
}

/// The only copy of an object loses its root inventory, its sidecar and `v1`'s sidecar, and
/// the state database is lost: nothing shows the files to be what a killed put of webaip's
/// left, so `store repair` keeps every one (and says so), and a put of the package is
/// refused rather than written over them.
fn files_without_root_inventory_are_kept(
    g: &HashMap<String, String>,
    cfg: &Path,
    b: &Bucket,
    a: &Path,
    tmp: &Path,
) {
    let obj = b.list().into_keys().find(|k| k.ends_with("/0=ocfl_object_1.1")).unwrap();
    let obj = obj.trim_end_matches("/0=ocfl_object_1.1").to_string();
    for name in ["inventory.json.sha512", "inventory.json", "v1/inventory.json.sha512"] {
        b.delete(&format!("{obj}/{name}"));
    }
    let left = b.list();
    super::ocfl_root::forget_state(&tmp.join("state.sqlite"));
    let (code, rep) = store(g, cfg, &["repair"]);
    assert_eq!(code, 1, "{rep:#}");
    assert!(rep["actions"].to_string().contains("kept the"), "{rep:#}");
    assert_eq!(b.list(), left, "repair deleted files of the object");
    let (code, said) = put_refusal(g, cfg, a, &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("without a root inventory"), "{said}");
    assert_eq!(b.list(), left, "the put wrote over the object's files");
}

/// The bucket root's own files and an object's lost root inventory, in a bucket beside a
/// disk: see [`lost_root_inventories`], [`root_files_in_a_bucket`] and
/// [`a_half_made_bucket_root`]. Each bucket root said to be mended is downloaded and
/// validated by ocfl-py and read by rocfl.
#[cfg(feature = "s3")]
#[test]
fn ocfl_bucket_roots_lost_root_inventories_and_root_files() {
    let _cluster = crate::util::garage_in_use();
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let prefix = format!("ocfl-root-{}/", nanos.as_nanos());
    let b = Bucket::new(&g, &prefix);
    let cfg = config(tmp.path(), &g, &prefix);
    let (a, _) = same_objid_pair(tmp.path());
    let (code, r) = put_with(&g, &cfg, &a, &[]);
    assert_eq!(code, 0, "{r:#}");
    lost_root_inventories(&g, &cfg, &b, &a, tmp.path());
    root_files_in_a_bucket(&g, &cfg, &b, &a, tmp.path());
    let half = tmp.path().join("half");
    fs::create_dir_all(&half).unwrap();
    let other = Bucket::new(&g, &format!("ocfl-half-{}/", nanos.as_nanos()));
    let cfg = config(&half, &g, &other.prefix);
    a_half_made_bucket_root(&g, &cfg, &other, &a, &half);
}

/// The bucket's copy of `a` (at v1) loses its root inventory and sidecar. While the state
/// database records v1 committed there, check calls it damage (`missing`, naming v1), never
/// an uncommitted version, and repair restores it from the disk. With a new state database
/// (which records nothing), the complete v1 left is kept, never deleted: repair commits it
/// (its root inventory from v1's), and the object reads back byte for byte.
fn lost_root_inventories(
    g: &HashMap<String, String>,
    cfg: &Path,
    b: &Bucket,
    a: &Path,
    tmp: &Path,
) {
    let id = objid(a);
    let keys = b.list();
    let obj = keys.keys().find(|k| k.ends_with("/0=ocfl_object_1.1")).unwrap();
    let obj = obj.trim_end_matches("/0=ocfl_object_1.1").to_string();
    let root_inventory = format!("{obj}/inventory.json");
    let lose = || {
        b.delete(&root_inventory);
        b.delete(&format!("{obj}/inventory.json.sha512"));
    };
    lose();
    let c = check_deep(g, cfg);
    let all = c["findings"].as_array().unwrap();
    assert!(all.iter().all(|f| f["kind"] != "uncommitted-version"), "{c:#}");
    let lost: Vec<_> = all.iter().filter(|f| f["key"] == root_inventory.as_str()).collect();
    assert_eq!(lost.len(), 1, "{c:#}");
    assert_eq!((&lost[0]["replica"], &lost[0]["kind"]), (&"garage".into(), &"missing".into()));
    assert!(lost[0]["detail"].as_str().unwrap().contains("committed v1"), "{c:#}");
    let (code, rep) = store(g, cfg, &["repair"]);
    assert_eq!((code, &rep["repaired"]), (0, &serde_json::json!(true)), "{rep:#}");
    assert_eq!(b.list(), keys, "the bucket holds exactly the object again");
    validate(b, tmp, &id, "v1", a);

    lose();
    super::ocfl_root::forget_state(&tmp.join("state.sqlite"));
    let (code, rep) = store(g, cfg, &["repair"]);
    assert_eq!((code, &rep["repaired"]), (0, &serde_json::json!(true)), "{rep:#}");
    let said = rep["actions"].to_string();
    assert!(said.contains("from v1's") && said.contains("not recorded"), "{rep:#}");
    assert_eq!(b.list(), keys, "nothing deleted, the root inventory written again");
    validate(b, tmp, &id, "v1", a);
    get_equals(g, cfg, &id, None, a);
}

const CONFIG: &str = "extensions/0003-hash-and-id-n-tuple-storage-layout/config.json";

/// An empty declaration and a missing layout description are findings on the bucket root
/// that repair mends with webaip's bytes; a foreign extension configuration is a finding
/// that repair leaves as it is.
fn root_files_in_a_bucket(
    g: &HashMap<String, String>,
    cfg: &Path,
    b: &Bucket,
    a: &Path,
    tmp: &Path,
) {
    let keys = b.list();
    let ours = |k: &str| b.get(k);
    let (declaration, layout, config) =
        (ours("0=ocfl_1.1"), ours("ocfl_layout.json"), ours(CONFIG));
    assert_eq!(declaration, b"ocfl_1.1\n");
    b.put("0=ocfl_1.1", b"");
    b.delete("ocfl_layout.json");
    let foreign = b"{\"extensionName\": \"0004-hashed-n-tuple-storage-layout\"}";
    b.put(CONFIG, foreign);
    let c = check_deep(g, cfg);
    let mut root: Vec<(String, String)> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["object"] == "")
        .map(|f| (f["key"].as_str().unwrap().into(), f["kind"].as_str().unwrap().into()))
        .collect();
    root.sort();
    let expected =
        [("0=ocfl_1.1", "invalid"), (CONFIG, "invalid"), ("ocfl_layout.json", "missing")];
    let expected: Vec<(String, String)> =
        expected.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert_eq!(root, expected, "{c:#}");
    let (code, rep) = store(g, cfg, &["repair"]);
    assert_eq!(code, 1, "the foreign configuration is left: {rep:#}");
    assert_eq!((ours("0=ocfl_1.1"), ours("ocfl_layout.json")), (declaration, layout));
    assert_eq!(ours(CONFIG), foreign, "a foreign configuration overwritten");
    b.put(CONFIG, &config);
    assert_eq!(b.list(), keys);
    assert_eq!(check_deep(g, cfg)["clean"], true);
    validate(b, tmp, &objid(a), "v1", a);
}

/// A bucket prefix holding only an empty declaration (a root whose making was cut short) is
/// no storage root yet and no foreign one: the first put finishes it.
fn a_half_made_bucket_root(
    g: &HashMap<String, String>,
    cfg: &Path,
    b: &Bucket,
    a: &Path,
    tmp: &Path,
) {
    b.put("0=ocfl_1.1", b"");
    let (code, r) = put_with(g, cfg, a, &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(b.get("0=ocfl_1.1"), b"ocfl_1.1\n");
    validate(b, tmp, &objid(a), "v1", a);
}
