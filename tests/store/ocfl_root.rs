//! What `store check` says of a file system storage root whose own files, or an object's root
//! inventory, are gone or wrong, judged by the bytes and by the state database's record of
//! what webaip committed; what `store repair` mends (only what webaip itself would write) and
//! what it leaves. ocfl-py validates every root that is said to be mended.

use std::fs;
use std::path::Path;

use super::ocfl::{assert_ocfl_valid, files_of, findings, no_env, object_dir, ocfl_config, put};
use super::{same_objid_pair, store};

/// The findings of `c` on `replica`: (key, kind, detail).
fn on(c: &serde_json::Value, replica: &str) -> Vec<(String, String, String)> {
    let all = c["findings"].as_array().unwrap_or_else(|| panic!("{c:#}"));
    all.iter()
        .filter(|f| f["replica"] == replica)
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("key"), s("kind"), s("detail"))
        })
        .collect()
}

/// An object whose root inventory and sidecar are gone on one replica, the rest of its first
/// version intact: with the state database recording that webaip committed v1 there, it is
/// damage (`missing`, naming v1), never "a first version never committed", and repair
/// restores it from the other replica; with a new database, which records no commit, it may
/// be a first put interrupted, and is said to be only as that or a loss.
#[test]
fn ocfl_a_lost_root_inventory_of_a_committed_object_is_damage_and_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let (disk_a, disk_b) = (tmp.path().join("disk-a"), tmp.path().join("disk-b"));
    let obj = object_dir(&disk_b);
    let lose = || {
        fs::remove_file(obj.join("inventory.json")).unwrap();
        fs::remove_file(obj.join("inventory.json.sha512")).unwrap();
    };
    lose();
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    assert!(findings(&c).iter().all(|(_, k)| k != "uncommitted-version"), "{c:#}");
    let lost: Vec<_> =
        on(&c, "disk-b").into_iter().filter(|(k, _, _)| k.ends_with("/inventory.json")).collect();
    assert_eq!(lost.len(), 1, "{c:#}");
    assert_eq!(lost[0].1, "missing", "{c:#}");
    assert!(lost[0].2.contains("committed v1") && !lost[0].2.contains("never"), "{c:#}");
    assert!(on(&c, "disk-a").is_empty(), "{c:#}");
    let (code, r) = store(&no_env(), &cfg, &["repair"]);
    assert_eq!((code, &r["repaired"]), (0, &serde_json::json!(true)), "{r:#}");
    assert_eq!(files_of(&disk_b), files_of(&disk_a));
    for d in [&disk_a, &disk_b] {
        assert_ocfl_valid(d, 1);
    }

    // A new state database records no commit: only then is "never committed" said, and
    // together with the loss it may be.
    lose();
    forget_state(&tmp.path().join("state.sqlite"));
    let (code, c) = store(&no_env(), &cfg, &["check"]);
    assert_eq!(code, 1, "{c:#}");
    let lost: Vec<_> =
        on(&c, "disk-b").into_iter().filter(|(k, _, _)| k.ends_with("/inventory.json")).collect();
    assert_eq!(lost.len(), 1, "{c:#}");
    assert_eq!(lost[0].1, "uncommitted-version", "{c:#}");
    assert!(lost[0].2.contains("records no commit") && lost[0].2.contains("lost"), "{c:#}");
}

/// Deletes the state database at `state` (and its journal files): a new one is made by the
/// next command, recording nothing.
pub(super) fn forget_state(state: &Path) {
    fs::remove_file(state).unwrap();
    for end in ["-wal", "-shm", "-journal"] {
        let _ = fs::remove_file(format!("{}{end}", state.display()));
    }
}

/// One way a root file can be wrong, and whether repair may mend it.
struct Spoilt {
    file: &'static str,
    /// The bytes written there (`None`: the file removed).
    bytes: Option<&'static [u8]>,
    kind: &'static str,
    /// Repair writes webaip's bytes (absent, empty, cut short); else it leaves them.
    mended: bool,
}

const CONFIG: &str = "extensions/0003-hash-and-id-n-tuple-storage-layout/config.json";

const SPOILT: [Spoilt; 9] = [
    Spoilt { file: "0=ocfl_1.1", bytes: Some(b""), kind: "invalid", mended: true },
    Spoilt { file: "0=ocfl_1.1", bytes: Some(b"ocfl_1"), kind: "invalid", mended: true },
    Spoilt { file: "0=ocfl_1.1", bytes: Some(b"ocfl_1.0\n"), kind: "invalid", mended: false },
    Spoilt { file: "0=ocfl_1.1", bytes: None, kind: "missing", mended: true },
    Spoilt { file: "ocfl_layout.json", bytes: None, kind: "missing", mended: true },
    Spoilt {
        file: "ocfl_layout.json",
        bytes: Some(b"{\"extension\": \"0004-hashed-n-tuple-storage-layout\"}\n"),
        kind: "invalid",
        mended: false,
    },
    Spoilt { file: CONFIG, bytes: None, kind: "missing", mended: true },
    Spoilt { file: CONFIG, bytes: Some(b"{\n  \""), kind: "invalid", mended: true },
    Spoilt {
        file: CONFIG,
        bytes: Some(b"{\"extensionName\": \"0003-hash"),
        kind: "invalid",
        mended: false,
    },
];

/// The storage root's own files on a file system replica that holds an object: check
/// reports each one missing, empty, cut short or foreign (a finding on the root: not clean);
/// repair writes webaip's bytes where they were absent or cut short (ocfl-py then finds the
/// root valid) and never overwrites other bytes, which it leaves and which check goes on
/// reporting.
#[test]
fn ocfl_check_verifies_the_root_files_and_repair_mends_only_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    put(&cfg, &a);
    let root = tmp.path().join("disk-b");
    let good = files_of(&root);
    for s in &SPOILT {
        spoil_and_repair(&cfg, &root, s);
        assert_eq!(files_of(&root), good, "{}", s.file);
        assert_ocfl_valid(&root, 1);
    }
    // The text report names the root as what was mended, and no replica it was mended from.
    fs::remove_file(root.join("0=ocfl_1.1")).unwrap();
    let o = crate::util::webaip(&["store", "--config", cfg.to_str().unwrap(), "repair"]);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{said}");
    let line = "disk-b: storage root: REBUILT: wrote the root's 0=ocfl_1.1, which was absent";
    assert!(said.contains(line), "{said}");
    assert_eq!(files_of(&root), good);
}

/// Spoils `s.file` of `root` (replica `disk-b`), checks, repairs; restores webaip's bytes
/// by hand where repair rightly left them.
fn spoil_and_repair(cfg: &Path, root: &Path, s: &Spoilt) {
    let path = root.join(s.file);
    let ours = fs::read(&path).unwrap();
    match s.bytes {
        Some(b) => fs::write(&path, b).unwrap(),
        None => fs::remove_file(&path).unwrap(),
    }
    let (code, c) = store(&no_env(), cfg, &["check"]);
    assert_eq!(code, 1, "{}: {c:#}", s.file);
    let found = on(&c, "disk-b");
    assert_eq!(found.len(), 1, "{}: {c:#}", s.file);
    assert_eq!((found[0].0.as_str(), found[0].1.as_str()), (s.file, s.kind), "{c:#}");
    assert!(on(&c, "disk-a").is_empty(), "{c:#}");
    let (code, r) = store(&no_env(), cfg, &["repair"]);
    if s.mended {
        assert_eq!((code, &r["repaired"]), (0, &serde_json::json!(true)), "{}: {r:#}", s.file);
        assert_eq!(fs::read(&path).unwrap(), ours, "{}", s.file);
        return;
    }
    assert_eq!(code, 1, "{}: {r:#}", s.file);
    assert_eq!(fs::read(&path).unwrap(), s.bytes.unwrap(), "{}: overwritten", s.file);
    let after = on(&r["after"], "disk-b");
    assert!(after.iter().any(|(k, kind, _)| k == s.file && kind == s.kind), "{r:#}");
    fs::write(&path, ours).unwrap();
}
