//! `webaip store migrate`: a store of the webaip layout (two file system replicas) moved in
//! place to OCFL storage roots. Every replica is then validated by ocfl-py (0 errors, 0
//! warnings) and read by rocfl, two implementations independent of webaip; every package
//! comes back byte for byte; the content is the old files' own inodes (linked, not copied).
//! A migrate killed after a commit goes on when run again; a damaged old file refuses its
//! package with every old file left as it was; hostile old layouts lead nowhere outside.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::ocfl::{assert_ocfl_valid, files_of, no_env};
use super::ocfl_rocfl::{listed, rocfl, text};
use super::{objid, store};
use crate::util::{Package, package, repo, stored_dir};

/// Two file system replicas of the webaip layout, `disk-a` and `disk-b`.
fn webaip_config(dir: &Path) -> PathBuf {
    let mut text = format!(
        "# a store to move\nstate = \"{}\"\n\n[user]\nname = \"webaip tests\"\naddress = \"mailto:tests@example.org\"\n",
        dir.join("state.sqlite").display()
    );
    for name in ["disk-a", "disk-b"] {
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
            dir.join(name).display()
        ));
    }
    let path = dir.join("store.toml");
    fs::write(&path, text).unwrap();
    path
}

/// The samples packaged (heritrix-job, nedlib, mirror), each under `dir/<name>`.
pub(super) fn samples(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|name| {
            let out = dir.join(format!("pkg-{name}"));
            let args = Package::new().quiet().args(&["--deterministic"]);
            package(args, &out, &[&repo().join("samples").join(name)]).succeeded();
            out
        })
        .collect()
}

fn put_all(cfg: &Path, pkgs: &[PathBuf]) {
    for p in pkgs {
        let (code, r) = store(&no_env(), cfg, &["put", p.to_str().unwrap()]);
        assert_eq!(code, 0, "{r:#}");
        assert_eq!(r["packages"][0]["accepted"], true, "{r:#}");
    }
}

fn migrate(cfg: &Path) -> (i32, serde_json::Value) {
    store(&no_env(), cfg, &["migrate"])
}

/// `store get` of each package into a new folder: every file byte for byte.
fn assert_gets_back(cfg: &Path, tmp: &Path, pkgs: &[PathBuf], tag: &str) {
    for p in pkgs {
        let id = objid(p);
        let to = tmp.join(format!("got-{tag}-{}", p.file_name().unwrap().to_string_lossy()));
        let (code, r) = store(&no_env(), cfg, &["get", &id, "--out", to.to_str().unwrap()]);
        assert_eq!(code, 0, "{r:#}");
        assert_eq!(files_of(&to), files_of(p), "{id}");
    }
}

/// Partition directories of the webaip layout left in a root.
fn partitions(root: &Path) -> Vec<String> {
    fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.len() == 2)
        .collect()
}

/// The object directory of `id` below a root (walked for, not derived from webaip's code).
fn object_of(root: &Path, id: &str) -> Option<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "inventory.json" && e.depth() == 5)
        .find(|e| {
            let inv: serde_json::Value =
                serde_json::from_slice(&fs::read(e.path()).unwrap()).unwrap();
            inv["id"] == id
        })
        .map(|e| e.path().parent().unwrap().to_path_buf())
}

fn size_of(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

fn inodes(dir: &Path) -> BTreeMap<String, u64> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            (rel, e.metadata().unwrap().ino())
        })
        .collect()
}

/// rocfl validates each root, lists each object's v1 with the package's own digests and
/// gives every file back byte for byte.
fn assert_rocfl_reads(root: &Path, pkgs: &[PathBuf]) {
    let report = text(&rocfl(root, &["validate"]));
    assert!(report.contains(&format!("Total objects:   {}", pkgs.len())), "{report}");
    assert!(report.contains("Invalid objects: 0"), "{report}");
    assert!(report.contains("Storage issues:  0"), "{report}");
    for p in pkgs {
        let id = objid(p);
        let expected = files_of(p);
        assert_eq!(listed(root, &id, "1"), expected, "{id}");
        for path in expected.keys() {
            let o = rocfl(root, &["cat", "--version", "1", &id, path]);
            assert_eq!(o.stdout, fs::read(p.join(path)).unwrap(), "{id} {path}");
        }
    }
}

#[test]
fn migrate_moves_a_webaip_store_in_place_and_ocfl_py_and_rocfl_read_every_replica() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["heritrix-job", "nedlib", "mirror"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs);
    let first = stored_dir(&objid(&pkgs[0]));
    let old = inodes(&tmp.path().join("disk-a").join(&first));
    let bytes: u64 = pkgs.iter().map(|p| size_of(p)).sum();

    let (code, r) = migrate(&cfg);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["kind"], "migrate");
    assert_eq!(r["objects_migrated"], 3, "{r:#}");
    assert_eq!((r["remaining"].as_u64(), r["switched"].as_bool()), (Some(0), Some(true)));
    assert_eq!(r["refused"], serde_json::json!([]));
    // Linked, never copied: each replica's bytes once.
    assert_eq!(
        (r["bytes_linked"].as_u64(), r["bytes_copied"].as_u64()),
        (Some(2 * bytes), Some(0))
    );
    let config = fs::read_to_string(&cfg).unwrap();
    assert_eq!(config.matches("layout = \"ocfl\"").count(), 2, "{config}");
    assert!(config.starts_with("# a store to move\n"), "the rest of the file is kept: {config}");

    for d in ["disk-a", "disk-b"] {
        let root = tmp.path().join(d);
        assert_ocfl_valid(&root, 3);
        assert_eq!(partitions(&root), Vec::<String>::new(), "{d}: old layout left");
        assert_rocfl_reads(&root, &pkgs);
    }
    // The object's content is the old files' own inodes.
    let obj = object_of(&tmp.path().join("disk-a"), &objid(&pkgs[0])).unwrap();
    let now = inodes(&obj.join("v1/content"));
    assert_eq!(now, old.into_iter().filter(|(k, _)| now.contains_key(k)).collect());
    // One content file per distinct digest (OCFL keeps identical files once).
    let digests: std::collections::BTreeSet<String> = files_of(&pkgs[0]).into_values().collect();
    assert_eq!(now.len(), digests.len());

    assert_gets_back(&cfg, tmp.path(), &pkgs, "after");
    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
    // The store is an OCFL store now: the same package again is a no-op, and migrate again
    // has nothing to do.
    let (code, again) = store(&no_env(), &cfg, &["put", pkgs[1].to_str().unwrap()]);
    assert_eq!((code, &again["packages"][0]["version"]), (0, &serde_json::json!("v1")));
    let (code, r) = migrate(&cfg);
    assert_eq!((code, &r["objects_migrated"]), (0, &serde_json::json!(0)), "{r:#}");
}

#[test]
fn a_migrate_killed_after_a_commit_goes_on_and_reads_work_meanwhile() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["heritrix-job", "nedlib"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs);
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json", "migrate"])
        .env("WEBAIP_FAIL_AT", "migrate-after-commit")
        .output()
        .unwrap();
    assert!(o.status.code().is_none(), "the hook aborts: {o:?}");
    // One object committed on one replica, its old files all there; nothing switched.
    let committed: usize = ["disk-a", "disk-b"]
        .iter()
        .map(|d| {
            pkgs.iter().filter(|p| object_of(&tmp.path().join(d), &objid(p)).is_some()).count()
        })
        .sum();
    assert_eq!(committed, 1);
    assert!(!fs::read_to_string(&cfg).unwrap().contains("ocfl"));
    // Meanwhile: reads work, puts in the old layout are refused.
    assert_gets_back(&cfg, tmp.path(), &pkgs, "meanwhile");
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "put", pkgs[0].to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`store migrate` began"), "{err}");
    // A check sees only the packages not moved yet: never a clean check of the store.
    let (code, r) = store(&no_env(), &cfg, &["check"]);
    assert_eq!((code, r["run"]["verdict"].as_str()), (0, Some("partial")), "{r:#}");
    // A removal too: the moved package's dependencies are no longer in the old records.
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "remove", "--yes", &objid(&pkgs[1])])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`store migrate` began"), "{err}");

    // The configuration reached through a link, readable by its owner only: the rerun
    // rewrites the link's target and keeps its mode; the link stays a link.
    let target = tmp.path().join("real-store.toml");
    fs::rename(&cfg, &target).unwrap();
    std::os::unix::fs::symlink(&target, &cfg).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
    let (code, r) = migrate(&cfg);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!((r["objects_migrated"].as_u64(), r["switched"].as_bool()), (Some(2), Some(true)));
    assert!(fs::symlink_metadata(&cfg).unwrap().file_type().is_symlink());
    assert!(fs::read_to_string(&target).unwrap().contains("ocfl"));
    assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o600);
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 2);
    }
    // The object the killed run committed and the one made after it are the same bytes.
    let inv = |d: &str| {
        fs::read(object_of(&tmp.path().join(d), &objid(&pkgs[0])).unwrap().join("inventory.json"))
            .unwrap()
    };
    assert_eq!(inv("disk-a"), inv("disk-b"));
    assert_gets_back(&cfg, tmp.path(), &pkgs, "after");
    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
}

#[test]
fn a_damaged_old_file_refuses_its_package_and_nothing_of_it_is_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["heritrix-job", "nedlib"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs);
    let dir = tmp.path().join("disk-b").join(stored_dir(&objid(&pkgs[0])));
    let warc = fs::read_dir(dir.join("content")).unwrap().next().unwrap().unwrap().path();
    let mut bytes = fs::read(&warc).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55; // same size, other bytes
    fs::write(&warc, &bytes).unwrap();
    let before: Vec<_> = ["disk-a", "disk-b"]
        .iter()
        .map(|d| files_of(&tmp.path().join(d).join(stored_dir(&objid(&pkgs[0])))))
        .collect();

    let (code, r) = migrate(&cfg);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!((r["objects_migrated"].as_u64(), r["remaining"].as_u64()), (Some(1), Some(1)));
    assert_eq!(r["switched"], false);
    let refused = &r["refused"][0];
    assert_eq!(refused["package"], objid(&pkgs[0]).as_str());
    let reason = refused["reason"].as_str().unwrap();
    assert!(reason.contains("disk-b") && reason.contains("damaged"), "{reason}");
    // The refused package's folders are recorded: not "a folder the database does not record".
    assert_eq!(r["unrecorded_dirs"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["leftovers"], serde_json::json!([]), "{r:#}");
    for (d, was) in ["disk-a", "disk-b"].iter().zip(&before) {
        let root = tmp.path().join(d);
        assert_eq!(&files_of(&root.join(stored_dir(&objid(&pkgs[0])))), was, "{d}");
        assert!(object_of(&root, &objid(&pkgs[0])).is_none(), "{d}: no object for it");
        assert!(object_of(&root, &objid(&pkgs[1])).is_some());
    }
    assert!(!fs::read_to_string(&cfg).unwrap().contains("ocfl"));
    // The store still serves it (from the copy that verifies), and repair mends the damage in
    // the old layout; then the migration completes.
    assert_gets_back(&cfg, tmp.path(), &pkgs, "meanwhile");
    let (code, rp) = store(&no_env(), &cfg, &["repair", "--deep"]);
    assert_eq!(code, 0, "{rp:#}");
    assert_switched(&cfg, tmp.path(), &pkgs, migrate(&cfg));
}

#[test]
fn hostile_old_layouts_lead_nowhere_outside_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["heritrix-job", "nedlib", "mirror"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs);
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    // Package 0: its METS on disk-a replaced by a link to a file outside with the same bytes.
    let dir0 = tmp.path().join("disk-a").join(stored_dir(&objid(&pkgs[0])));
    fs::copy(dir0.join("METS.xml"), outside.join("METS.xml")).unwrap();
    fs::remove_file(dir0.join("METS.xml")).unwrap();
    std::os::unix::fs::symlink(outside.join("METS.xml"), dir0.join("METS.xml")).unwrap();
    // Package 1: the state database records a name that leaves the package.
    let db = rusqlite::Connection::open(tmp.path().join("state.sqlite")).unwrap();
    db.execute(
        "UPDATE file SET path = '../../../outside/stolen' WHERE path = 'METS.xml'
         AND package_id = (SELECT id FROM package WHERE identifier = ?1)",
        [objid(&pkgs[1])],
    )
    .unwrap();
    drop(db);
    // Package 2: a file in its directory the package does not have.
    let dir2 = tmp.path().join("disk-b").join(stored_dir(&objid(&pkgs[2])));
    fs::write(dir2.join("notes.txt"), b"someone's notes").unwrap();
    let outside_before = files_of(&outside);

    let (code, r) = migrate(&cfg);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!((r["objects_migrated"].as_u64(), r["remaining"].as_u64()), (Some(0), Some(3)));
    let reasons: Vec<&str> =
        r["refused"].as_array().unwrap().iter().map(|f| f["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons.len(), 3, "{r:#}");
    assert!(
        reasons.iter().any(|s| s.contains("symbolic link") || s.contains("link")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|s| s.contains("no name inside a package")), "{reasons:?}");
    assert!(reasons.iter().any(|s| s.contains("notes.txt")), "{reasons:?}");
    assert_eq!(r["unrecorded_dirs"], serde_json::json!([]), "every folder is recorded: {r:#}");
    assert_eq!(files_of(&outside), outside_before, "nothing outside was touched");
    assert_eq!(fs::symlink_metadata(outside.join("METS.xml")).unwrap().nlink(), 1);
    assert!(dir2.join("notes.txt").is_file());
    for d in ["disk-a", "disk-b"] {
        let root = tmp.path().join(d);
        assert!(pkgs.iter().all(|p| object_of(&root, &objid(p)).is_none()), "{d}");
        assert!(!partitions(&root).is_empty());
    }
    // No object anywhere outside the roots either: the work directories hold no stage.
    for d in ["disk-a.webaip-work", "disk-b.webaip-work"] {
        let stages = fs::read_dir(tmp.path().join(d))
            .map(|it| {
                it.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().starts_with(".ocfl-stage"))
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(stages, 0, "{d}");
    }
}

/// Leftovers of the old layout that are in no package (a README in a partition, a link
/// there, a file at the root) would make the root invalid OCFL (ocfl-py: E072) and be
/// "extra" to the first check: migrate moves every package but does not switch, naming each
/// leftover; once they are taken away, it switches (the partition the package left, empty
/// now, removed: E073) and ocfl-py finds both roots valid.
#[test]
fn leftovers_in_a_root_stop_the_switch_and_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["heritrix-job"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs);
    let partition = stored_dir(&objid(&pkgs[0])).split('/').next().unwrap().to_string();
    let (a, b) = (tmp.path().join("disk-a"), tmp.path().join("disk-b"));
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(a.join(&partition).join("README.txt"), b"note").unwrap();
    fs::create_dir(b.join("zz")).unwrap();
    std::os::unix::fs::symlink(&outside, b.join("zz").join("urn_3Aextra")).unwrap();
    fs::write(b.join("NOTES"), b"a note at the root").unwrap();
    fs::create_dir(a.join("abc")).unwrap(); // an empty folder: E073

    let (code, r) = migrate(&cfg);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!((r["objects_migrated"].as_u64(), r["remaining"].as_u64()), (Some(1), Some(0)));
    assert_eq!(r["switched"], false, "{r:#}");
    let named = BTreeSet::from([
        format!("disk-a: {partition}/README.txt"),
        "disk-a: abc/".to_string(),
        "disk-b: NOTES".to_string(),
        "disk-b: zz/urn_3Aextra".to_string(),
    ]);
    let listed: Vec<String> = serde_json::from_value(r["leftovers"].clone()).unwrap();
    assert_eq!(listed.iter().cloned().collect::<BTreeSet<_>>(), named, "{r:#}");
    assert_eq!(listed.len(), named.len(), "{r:#}");
    assert_eq!(r["unrecorded_dirs"], serde_json::json!([]), "{r:#}");
    assert!(!fs::read_to_string(&cfg).unwrap().contains("ocfl"), "not switched");
    // Why: an independent validator finds the root with a leftover invalid.
    let o = std::process::Command::new(repo().join(".venv/bin/python"))
        .arg(repo().join("tests/store/ocfl_validate.py"))
        .arg(&a)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], false, "{v:#}");
    assert!(fs::symlink_metadata(b.join("zz/urn_3Aextra")).unwrap().file_type().is_symlink());
    assert!(outside.read_dir().unwrap().next().is_none(), "the link's target untouched");

    // A configuration naming no layout keeps the webaip layout while the migration is
    // unfinished, though every package has moved: migrate goes on, and names what is left.
    let unnamed = fs::read_to_string(&cfg).unwrap().replace("layout = \"webaip\"\n", "");
    fs::write(&cfg, unnamed).unwrap();
    let (code, text) = store_text(&cfg, &["migrate"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("left: disk-a: {partition}/README.txt")), "{text}");
    assert!(!text.contains("rebuild-state"), "no folder is unrecorded: {text}");

    fs::remove_file(a.join(&partition).join("README.txt")).unwrap();
    fs::remove_dir_all(b.join("zz")).unwrap();
    fs::remove_file(b.join("NOTES")).unwrap();
    fs::remove_dir(a.join("abc")).unwrap();
    assert_switched(&cfg, tmp.path(), &pkgs, migrate(&cfg));
}

/// A migrate's `(exit status, report)` says it switched the store to OCFL; then ocfl-py
/// finds both replicas under `tmp` valid, each holding an object per package of `pkgs`, and
/// every package reads back as it was put.
fn assert_switched(cfg: &Path, tmp: &Path, pkgs: &[PathBuf], (code, r): (i32, serde_json::Value)) {
    assert_eq!((code, &r["switched"]), (0, &serde_json::json!(true)), "{r:#}");
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.join(d), pkgs.len() as u64);
    }
    assert_gets_back(cfg, tmp, pkgs, "after");
}

/// `store --config CFG ARGS` as text: its exit status and standard output.
fn store_text(cfg: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = crate::util::webaip_command()
        .args(["store", "--config"])
        .arg(cfg)
        .args(args)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
}

/// A bucket that cannot be reached stops the migration before any package is moved: the
/// configuration and the packages' folders are left as they were (the moving of buckets is
/// tested against the Garage cluster in `ocfl_migrate_bucket`).
#[cfg(feature = "s3")]
#[test]
fn an_unreachable_bucket_stops_the_migration_before_anything_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["nedlib"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs);
    let mut text = fs::read_to_string(&cfg).unwrap();
    text.push_str("\n[[replica]]\nname = \"bucket\"\ntype = \"s3\"\nlayout = \"webaip\"\nendpoints = [\"http://127.0.0.1:9\"]\nbucket = \"b\"\n");
    fs::write(&cfg, &text).unwrap();
    let before = files_of(&tmp.path().join("disk-a"));
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "migrate"])
        .env("AWS_ACCESS_KEY_ID", "x")
        .env("AWS_SECRET_ACCESS_KEY", "y")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bucket") && err.contains("127.0.0.1:9"), "{err}");
    assert_eq!(fs::read_to_string(&cfg).unwrap(), text);
    let after = files_of(&tmp.path().join("disk-a"));
    let old: BTreeMap<_, _> = after.iter().filter(|(k, _)| before.contains_key(*k)).collect();
    assert_eq!(old.len(), before.len(), "every old file is still there");
    assert!(object_of(&tmp.path().join("disk-a"), &objid(&pkgs[0])).is_none());
}

/// A `webaip store --config CFG --json ARGS` process held at pause point `point` (the test
/// hook makes `flag`, then waits for it to go): returned once it is there.
fn paused(cfg: &Path, args: &[&str], point: &str, flag: &Path) -> std::process::Child {
    let mut child = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json"])
        .args(args)
        .env("WEBAIP_PAUSE_AT", format!("{point}:{}", flag.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while !flag.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{args:?} ended ({status}) before its pause point {point}");
        }
        assert!(std::time::Instant::now() < until, "{args:?} never reached {point}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

/// Let a paused process go on; its exit status and JSON report.
fn resumed(child: std::process::Child, flag: &Path) -> (Option<i32>, serde_json::Value) {
    fs::remove_file(flag).unwrap();
    let o = child.wait_with_output().unwrap();
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| serde_json::json!({ "stderr": String::from_utf8_lossy(&o.stderr) }));
    (o.status.code(), v)
}

/// `webaip store --config CFG ARGS`: exit status and standard error.
fn refused(cfg: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A webaip-layout put and a migrate of one store never run at once: a migrate started while
/// a put is under way (audited, nothing written yet) is refused, naming the put's process,
/// and leaves the store as it was; the put then completes and migrate moves its package too,
/// which `store get` gives back. A put or remove started while a migrate runs is refused.
#[test]
fn a_put_and_a_migrate_of_one_store_never_run_at_once_and_the_put_is_found_after() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["heritrix-job", "nedlib"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs[..1]);
    let config_before = fs::read(&cfg).unwrap();
    let flag = tmp.path().join("paused");
    let put = paused(&cfg, &["put", pkgs[1].to_str().unwrap()], "put-audited", &flag);
    let (code, err) = refused(&cfg, &["migrate"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("a put, remove or repair of this store is running"), "{err}");
    assert!(err.contains(&format!("held by process {}", put.id())), "{err}");
    assert_eq!(fs::read(&cfg).unwrap(), config_before);
    for d in ["disk-a", "disk-b"] {
        assert!(!tmp.path().join(d).join("0=ocfl_1.1").exists(), "{d}: nothing declared");
    }
    let (code, r) = resumed(put, &flag);
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(r["packages"][0]["accepted"], true, "{r:#}");

    // The other way round: a put or a remove while migrate runs is refused before anything.
    let mig = paused(&cfg, &["migrate"], "migrate-locked", &flag);
    for args in [
        &["put", pkgs[1].to_str().unwrap()][..],
        &["remove", "--yes", &objid(&pkgs[1])][..],
        &["repair"][..],
    ] {
        let (code, err) = refused(&cfg, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("`store migrate` of this store is running"), "{args:?}: {err}");
        assert!(err.contains(&format!("held by process {}", mig.id())), "{err}");
    }
    let (code, r) = resumed(mig, &flag);
    assert_eq!(r["objects_migrated"], 2, "{r:#}");
    assert_switched(&cfg, tmp.path(), &pkgs, (code.unwrap_or(-1), r));
}

/// After a migrate killed once one replica committed a package's object (its content the old
/// files' own inodes), a byte flipped in a shared inode damages both; `store repair` mends the
/// old path with a new inode only. The next migrate finds the committed object failing its
/// deep check, moves it aside into the work directory (kept, with its damaged bytes) and
/// makes it again from the old files, which hash to their records; the migration completes.
#[test]
fn a_damaged_object_a_killed_migrate_committed_is_set_aside_and_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs = samples(tmp.path(), &["heritrix-job", "nedlib"]);
    let cfg = webaip_config(tmp.path());
    put_all(&cfg, &pkgs);
    let o = crate::util::webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json", "migrate"])
        .env("WEBAIP_FAIL_AT", "migrate-after-commit")
        .output()
        .unwrap();
    assert!(o.status.code().is_none(), "the hook aborts: {o:?}");
    let (disk, pkg, obj) = ["disk-a", "disk-b"]
        .iter()
        .flat_map(|d| pkgs.iter().map(move |p| (*d, p)))
        .find_map(|(d, p)| object_of(&tmp.path().join(d), &objid(p)).map(|o| (d, p, o)))
        .expect("one object committed");
    let id = objid(pkg);
    let old = tmp.path().join(disk).join(stored_dir(&id)).join("METS.xml");
    let linked = obj.join("v1/content/METS.xml");
    let ino = |p: &Path| fs::metadata(p).unwrap().ino();
    assert_eq!(ino(&old), ino(&linked), "one inode");
    let mut bytes = fs::read(&old).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::os::unix::fs::FileExt::write_at(
        &fs::OpenOptions::new().write(true).open(&old).unwrap(),
        &bytes[at..=at],
        at as u64,
    )
    .unwrap();
    let (code, rp) = store(&no_env(), &cfg, &["repair", "--deep"]);
    assert_eq!(code, 0, "{rp:#}");
    assert_ne!(ino(&old), ino(&linked), "repair gave the old path a new inode");
    assert_eq!(fs::read(&linked).unwrap(), bytes, "the object keeps the damaged one");

    let (code, r) = migrate(&cfg);
    assert_eq!((code, &r["switched"]), (0, &serde_json::json!(true)), "{r:#}");
    let moved = r["migrated"].as_array().unwrap().iter().find(|m| m["package"] == id.as_str());
    let aside = moved.and_then(|m| m["set_aside"][0].as_str()).unwrap_or_else(|| panic!("{r:#}"));
    assert!(aside.contains(disk) && aside.contains("made again"), "{aside}");
    // Kept in the work directory, damaged bytes and all.
    let kept: Vec<PathBuf> = walkdir::WalkDir::new(tmp.path().join(format!("{disk}.webaip-work")))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().ends_with("v1/content/METS.xml"))
        .map(|e| e.path().to_path_buf())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        aside.contains(
            &kept[0].parent().unwrap().parent().unwrap().parent().unwrap().display().to_string()
        ),
        "{aside}"
    );
    assert_eq!(fs::read(&kept[0]).unwrap(), bytes);
    for d in ["disk-a", "disk-b"] {
        assert_ocfl_valid(&tmp.path().join(d), 2);
    }
    assert_gets_back(&cfg, tmp.path(), &pkgs, "after");
    let (code, c) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c:#}");
}
