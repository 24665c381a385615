//! Issue 24: store configurations that lie about replication, a repair that cannot read, a put
//! racing a repair, and a get that fails midway.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::{config_with, heritrix_package, objid, store, tree, webaip};
use crate::util::webaip_command;

/// `webaip store --config CFG ARGS` (no JSON): the output, for the messages.
fn run(cfg: &Path, args: &[&str]) -> Output {
    let mut all = vec!["store", "--config", cfg.to_str().unwrap()];
    all.extend_from_slice(args);
    webaip(&HashMap::new(), &all)
}

/// Two file system replicas on one root, behind a link, one inside the other (also through a
/// `..` and before either exists): every command refuses the configuration, naming both
/// replicas; distinct roots side by side (one a prefix of the other's name) are fine.
#[test]
fn replicas_that_alias_or_nest_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let state = t.join("state.sqlite");
    let a = t.join("a");
    fs::create_dir_all(&a).unwrap();
    std::os::unix::fs::symlink(&a, t.join("link-to-a")).unwrap();
    let cases: Vec<(&str, PathBuf, &str)> = vec![
        ("same root", a.clone(), "same root"),
        ("through a link", t.join("link-to-a"), "same root"),
        ("through ..", t.join("a/x/../"), "same root"),
        ("nested", a.join("inner"), "nest"),
        ("nested through a link", t.join("link-to-a/deeper/still"), "nest"),
        ("nested, not made yet, through a link and ..", t.join("link-to-a/new/../new2"), "nest"),
    ];
    for (what, second, why) in cases {
        let cfg =
            config_with(&t.join("store.toml"), &state, &[("one", &a), ("two", &second)], None);
        let o = run(&cfg, &["check"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {o:?}");
        assert!(err.contains("replicas \"one\" and \"two\"") && err.contains(why), "{what}: {err}");
        assert!(!second.join("00").exists() && !state.exists(), "{what}: nothing made");
    }
    // Not yet made, one inside the other.
    let fresh = t.join("fresh");
    let cfg = config_with(
        &t.join("store.toml"),
        &state,
        &[("outer", &fresh), ("inner", &fresh.join("x"))],
        None,
    );
    let o = run(&cfg, &["check"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("\"outer\" and \"inner\" nest"), "{o:?}");
    // A link whose target is not made yet stands for its target (review of issue 24: it was
    // taken as a directory of its own, and every copy written twice to one place).
    let later = t.join("later");
    std::os::unix::fs::symlink(&later, t.join("dangling")).unwrap();
    let cfg = config_with(
        &t.join("store.toml"),
        &state,
        &[("real", &later), ("link", &t.join("dangling"))],
        None,
    );
    let o = run(&cfg, &["check"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("same root"), "{o:?}");
    assert!(!later.exists(), "nothing made");
    // Side by side ("a" and "ab"): accepted.
    let cfg = config_with(&t.join("store.toml"), &state, &[("a", &a), ("ab", &t.join("ab"))], None);
    let o = run(&cfg, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

/// `transfers` past the documented maximum is refused with a message naming it, before any
/// thread is made; 64 is accepted.
#[test]
fn transfers_beyond_the_maximum_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cfg =
        config_with(&t.join("store.toml"), &t.join("state.sqlite"), &[("d", &t.join("d"))], None);
    let body = fs::read_to_string(&cfg).unwrap();
    for (n, code) in [(1_000_000usize, 2), (65, 2), (64, 0)] {
        fs::write(&cfg, format!("transfers = {n}\n{body}")).unwrap();
        let o = run(&cfg, &["check"]);
        assert_eq!(o.status.code(), Some(code), "{n}: {o:?}");
        if code == 2 {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(&format!("transfers = {n}")) && err.contains("64"), "{err}");
        }
    }
}

/// A package directory that cannot be read on any replica (a link where it should be, never
/// followed): `check` reports it, and `repair` does not claim it re-established: exit 1, and
/// it says so.
#[test]
fn repair_of_a_package_unreadable_everywhere_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = heritrix_package(t, "pkg");
    let dir = crate::util::stored_dir(&objid(&pkg));
    let (d1, d2) = (t.join("d1"), t.join("d2"));
    let cfg = config_with(
        &t.join("store.toml"),
        &t.join("state.sqlite"),
        &[("d1", &d1), ("d2", &d2)],
        None,
    );
    let env = HashMap::new();
    assert_eq!(store(&env, &cfg, &["put", pkg.to_str().unwrap()]).0, 0);
    for d in [&d1, &d2] {
        let p = d.join(&dir);
        let moved = d.join("elsewhere");
        fs::rename(&p, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &p).unwrap();
    }
    let (code, c) = store(&env, &cfg, &["check"]);
    assert_eq!(code, 1, "{c}");
    for r in c["replicas"].as_array().unwrap() {
        assert_eq!(r["errors"].as_array().unwrap().len(), 1, "{c}");
    }
    let (code, rp) = store(&env, &cfg, &["repair"]);
    assert_eq!(code, 1, "{rp}");
    assert_eq!(rp["repaired"], false, "{rp}");
    assert_eq!(rp["unreadable"].as_array().unwrap().len(), 2, "{rp}");
    let o = run(&cfg, &["repair"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("NOT REPAIRED") && !out.contains("all re-established"), "{out}");
}

/// A put and a repair of the same package at once, both writing the copies a replica lost:
/// whichever publishes a copy first, the other finds it identical; the put is accepted, the
/// repair succeeds, and the store checks clean. Several rounds, the two started with a
/// different delay each time so the window is crossed at different points.
#[test]
fn a_put_racing_a_repair_accepts_the_identical_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = heritrix_package(t, "pkg");
    let dir = crate::util::stored_dir(&objid(&pkg));
    let (d1, d2) = (t.join("d1"), t.join("d2"));
    let cfg = config_with(
        &t.join("store.toml"),
        &t.join("state.sqlite"),
        &[("d1", &d1), ("d2", &d2)],
        None,
    );
    let env = HashMap::new();
    assert_eq!(store(&env, &cfg, &["put", pkg.to_str().unwrap()]).0, 0);
    let files = tree(&pkg);
    let spawn = |args: &[&str]| {
        webaip_command()
            .args(["store", "--config", cfg.to_str().unwrap(), "--json"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for round in 0..8u64 {
        for f in &files {
            fs::remove_file(d2.join(&dir).join(f)).unwrap();
        }
        let delay = std::time::Duration::from_millis(round * 25);
        let (first, second): (&[&str], &[&str]) = if round % 2 == 0 {
            (&["repair"], &["put", pkg.to_str().unwrap()])
        } else {
            (&["put", pkg.to_str().unwrap()], &["repair"])
        };
        let one = spawn(first);
        std::thread::sleep(delay);
        let two = spawn(second);
        let outs = [one.wait_with_output().unwrap(), two.wait_with_output().unwrap()];
        for o in &outs {
            assert_eq!(o.status.code(), Some(0), "round {round}: {o:?}");
        }
        let (code, c) = store(&env, &cfg, &["check", "--deep"]);
        assert_eq!(code, 0, "round {round}: {c}");
        for f in &files {
            assert_eq!(fs::read(d2.join(&dir).join(f)).unwrap(), fs::read(pkg.join(f)).unwrap());
        }
    }
}

/// A get that fails midway (one copy corrupt on the only replica, found when it is verified)
/// leaves nothing in `--out` (made by the get, it is gone; given, it is as it was), nor a
/// staging directory; a staging directory a killed get left is removed by the next get.
#[test]
fn a_failed_get_leaves_nothing_that_looks_like_a_package() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = heritrix_package(t, "pkg");
    let id = objid(&pkg);
    let dir = crate::util::stored_dir(&id);
    let disk = t.join("disk");
    let cfg = config_with(&t.join("store.toml"), &t.join("state.sqlite"), &[("d", &disk)], None);
    let env = HashMap::new();
    assert_eq!(store(&env, &cfg, &["put", pkg.to_str().unwrap()]).0, 0);
    // One content file corrupt, same size: only its SHA-512 tells.
    let warc = tree(&pkg).into_iter().find(|f| f.starts_with("content/")).unwrap();
    let stored = disk.join(&dir).join(&warc);
    let good = fs::read(&stored).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xff;
    fs::remove_file(&stored).unwrap();
    fs::write(&stored, &bad).unwrap();

    let to = t.join("to");
    let o = run(&cfg, &["get", &id, "--out", to.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no replica holds a copy that verifies"));
    assert!(!to.exists(), "{:?}", tree(&to));
    // Into a directory that exists and holds something of its own.
    fs::create_dir_all(&to).unwrap();
    fs::write(to.join("mine.txt"), b"mine").unwrap();
    let o = run(&cfg, &["get", &id, "--out", to.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let left: Vec<String> = fs::read_dir(&to)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["mine.txt"], "{:?}", tree(&to));

    // Repaired, with a killed get's staging directory in --out: the get succeeds, removes it.
    fs::remove_file(&stored).unwrap();
    fs::write(&stored, &good).unwrap();
    let dead = to.join(".webaip-get-Dead01");
    fs::create_dir_all(dead.join("content")).unwrap();
    fs::write(dead.join("METS.xml"), b"half").unwrap();
    let o = run(&cfg, &["get", &id, "--out", to.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(!dead.exists());
    let mut want = tree(&pkg);
    want.push("mine.txt".into());
    want.sort();
    assert_eq!(tree(&to), want);
    for f in tree(&pkg) {
        assert_eq!(fs::read(to.join(&f)).unwrap(), fs::read(pkg.join(&f)).unwrap(), "{f}");
    }
}
