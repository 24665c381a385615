//! `store check` as a run kept in the state database: each object's last check, `--oldest`,
//! `--sample` (its probability checked against Python's `math.comb`), a run killed mid-way
//! (a test hook aborts the process after a committed batch) and resumed, a budget and a time
//! window that stop a run and `--resume` that finishes it; OCFL roots validated by ocfl-py
//! after every check. The webaip-layout stores are made by bench/gen_store.py, with the state
//! database of the schema before runs were kept (so every test also migrates one).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::store;
use crate::util::{Package, package, repo, webaip_command};

fn no_env() -> std::collections::HashMap<String, String> {
    Default::default()
}

/// A simulated store of `n` packages of two 512-byte files; returns its configuration.
fn simulated(dir: &Path, n: u32) -> PathBuf {
    let o = Command::new("python3")
        .arg(repo().join("bench/gen_store.py"))
        .arg(dir)
        .args(["--objects", &n.to_string()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join("store.toml")
}

/// `webaip store --config C --json check ARGS` with the test hooks `fail_at` set.
fn check_with_hooks(cfg: &Path, args: &[&str], fail_at: &str) -> (i32, serde_json::Value) {
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "--json", "check"])
        .args(args)
        .env("WEBAIP_FAIL_AT", fail_at)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code().unwrap_or(-1), v)
}

fn db(cfg: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(cfg.parent().unwrap().join("state.sqlite")).unwrap()
}

/// The objects run `id` recorded as their last check.
fn checked_by(cfg: &Path, id: i64) -> BTreeSet<String> {
    let db = db(cfg);
    let mut st = db.prepare("SELECT object FROM object_check WHERE run_id = ?1").unwrap();
    st.query_map([id], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

fn run_state(cfg: &Path, id: i64) -> (String, Option<String>) {
    db(cfg)
        .query_row("SELECT state, finished_at FROM check_run WHERE id = ?1", [id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
}

fn pkgs(ns: &[u32]) -> BTreeSet<String> {
    ns.iter().map(|n| format!("pkg-{n:07}")).collect()
}

/// Python's exact hypergeometric chance that `n` of `population` hold one of `damaged`.
fn python_detection(population: u64, damaged: u64, n: u64) -> f64 {
    let code = format!(
        "from math import comb; print(1 - comb({}, {n}) / comb({population}, {n}))",
        population - damaged
    );
    let o = Command::new("python3").args(["-c", &code]).output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

#[test]
fn oldest_picks_the_objects_seen_longest_ago_after_two_runs_and_the_old_database_is_migrated() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 6);
    // The earlier schema's copies' checks are taken over (gen_store.py dates them 2026-01-01).
    let (code, r) = store(&no_env(), &cfg, &["check", "--oldest", "2"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["run"]["seen"]["oldest_check"], "2026-01-01T00:00:00.000Z", "{r:#}");
    assert_eq!(r["run"]["seen"]["never_checked"], 0);
    assert_eq!(r["run"]["verdict"], "partial");
    assert_eq!(r["clean"], false, "a part of the store is never a clean check of it");
    let first = r["run"]["id"].as_i64().unwrap();
    assert_eq!(checked_by(&cfg, first), pkgs(&[0, 1]));
    // A deep run goes by the last deep check: none was ever deep, so by name.
    let (_, r) = store(&no_env(), &cfg, &["check", "--oldest", "2", "--deep"]);
    let second = r["run"]["id"].as_i64().unwrap();
    assert_eq!(checked_by(&cfg, second), pkgs(&[0, 1]));
    assert_eq!(r["run"]["bytes_read"], 2 * 2 * 512);
    // The four left from 2026 first.
    let (_, r) = store(&no_env(), &cfg, &["check", "--oldest", "4"]);
    let third = r["run"]["id"].as_i64().unwrap();
    assert_eq!(checked_by(&cfg, third), pkgs(&[2, 3, 4, 5]));
    // Each object's last check: its date, outcome, replica and whether it was deep.
    let row: (String, String, bool) = db(&cfg)
        .query_row(
            "SELECT replica, outcome, deep FROM object_check WHERE object = 'pkg-0000001'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(row, ("disk".into(), "clean".into(), true));
    assert!(r["run"]["seen"]["oldest_check"].as_str().unwrap() > "2026-11-01");
}

#[test]
fn a_sample_says_it_is_one_and_its_odds_are_the_hypergeometric_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 50);
    let (code, r) = store(&no_env(), &cfg, &["check", "--sample", "10"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["clean"], false, "a sample is never a clean check of the whole store");
    assert_eq!(r["run"]["verdict"], "sampled");
    assert_eq!((r["run"]["planned"].as_u64(), r["packages"].as_u64()), (Some(10), Some(10)));
    let odds = &r["run"]["sample"];
    assert_eq!((odds["population"].as_u64(), odds["sample"].as_u64()), (Some(50), Some(10)));
    let detection = odds["detection"].as_array().unwrap();
    assert_eq!(detection.len(), 2, "0.1 % and 1 % of 50 are one object, given once: {r:#}");
    for d in detection {
        let damaged = d["damaged"].as_u64().unwrap();
        let share = d["share"].as_f64().unwrap();
        assert_eq!(damaged, ((share * 50.0).ceil() as u64).max(1));
        let expected = python_detection(50, damaged, 10);
        let got = d["probability"].as_f64().unwrap();
        assert!((got - expected).abs() < 1e-9, "{share}: {got} vs {expected}");
    }
    assert_eq!(checked_by(&cfg, r["run"]["id"].as_i64().unwrap()).len(), 10);
    // A share: 10 % of 50 is 5; damage in the sample makes the verdict problems.
    let victim = tmp.path().join("disk").join(package_dir_of("pkg-0000007")).join("f1.bin");
    fs::write(&victim, vec![b'x'; 512]).unwrap();
    let (code, r) = store(&no_env(), &cfg, &["check", "--sample", "100%", "--deep"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["run"]["verdict"], "problems-found");
    assert_eq!(r["replicas"][0]["corrupt"].as_array().unwrap().len(), 1, "{r:#}");
    let (_, r) = store(&no_env(), &cfg, &["check", "--sample", "10%"]);
    assert_eq!(r["run"]["planned"], 5, "{r:#}");
}

/// The package directory gen_store.py (and `package_dir`) gives an identifier.
/// `check --deep --oldest 1`: the one object it deep-checked.
fn deep_oldest_one(cfg: &Path) -> BTreeSet<String> {
    let (code, r) = store(&no_env(), cfg, &["check", "--deep", "--oldest", "1"]);
    assert_eq!((code, r["run"]["verdict"].as_str()), (0, Some("partial")), "{r:#}");
    checked_by(cfg, r["run"]["id"].as_i64().unwrap())
}

/// Rewrites `object_check` as the schema before the last deep check was kept apart.
fn to_schema_without_deep_date(cfg: &Path) {
    db(cfg)
        .execute_batch(
            "CREATE TABLE oc_old (object TEXT NOT NULL, replica TEXT NOT NULL,
                 checked_at TEXT NOT NULL, outcome TEXT NOT NULL, deep INTEGER NOT NULL,
                 run_id INTEGER, PRIMARY KEY (object, replica));
             INSERT INTO oc_old SELECT object, replica, checked_at, outcome, deep, run_id
                 FROM object_check;
             DROP TABLE object_check;
             ALTER TABLE oc_old RENAME TO object_check;
             CREATE INDEX object_check_at ON object_check (checked_at);",
        )
        .unwrap();
}

/// A size-only check between deep ones does not hide how long ago the bytes were hashed:
/// `--deep --oldest` goes by the last deep check (never deep-checked first), so a rotation
/// reaches every object; `seen` gives the last check and the last deep check apart; a
/// database of the schema before is migrated, a last check that was deep giving its date.
#[test]
fn deep_oldest_rotates_through_every_object_whatever_shallow_checks_come_between() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 3);
    assert_eq!(deep_oldest_one(&cfg), pkgs(&[0]));
    let (_, r) = store(&no_env(), &cfg, &["check"]);
    let seen = &r["run"]["seen"];
    assert_eq!(
        (seen["never_checked"].as_u64(), seen["never_deep_checked"].as_u64()),
        (Some(0), Some(2)),
        "{r:#}"
    );
    let deep = seen["oldest_deep_check"].as_str().unwrap();
    assert_eq!(seen["newest_deep_check"].as_str(), Some(deep));
    assert!(deep < seen["oldest_check"].as_str().unwrap(), "the size-only check is later: {r:#}");
    assert_eq!(deep_oldest_one(&cfg), pkgs(&[1]), "never deep-checked first");
    store(&no_env(), &cfg, &["check"]);
    assert_eq!(deep_oldest_one(&cfg), pkgs(&[2]));
    store(&no_env(), &cfg, &["check"]);
    assert_eq!(deep_oldest_one(&cfg), pkgs(&[0]), "then the one hashed longest ago");
    // Text: both dates said.
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap(), "check"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("0 never deep-checked (bytes hashed), oldest last deep check 20"),
        "{out}"
    );
    // The schema before: pkg 0's last check was deep (its date kept), 1 and 2 size-only.
    let rotation: Vec<_> = (0..3).map(|_| deep_oldest_one(&cfg)).collect();
    assert_eq!(rotation, [pkgs(&[1]), pkgs(&[2]), pkgs(&[0])]);
    let (_, r) = store(&no_env(), &cfg, &["check", "--oldest", "2"]);
    assert_eq!(checked_by(&cfg, r["run"]["id"].as_i64().unwrap()), pkgs(&[1, 2]));
    to_schema_without_deep_date(&cfg);
    assert_eq!(deep_oldest_one(&cfg), pkgs(&[1]), "the overwritten deep dates count as none");
    let kept: (String, Option<String>) = db(&cfg)
        .query_row(
            "SELECT checked_at, deep_checked_at FROM object_check WHERE object = 'pkg-0000000'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(Some(kept.0), kept.1, "a last check that was deep gives its date");
}

/// A deep check dates only the copies it found whole: a damaged (or missing) copy keeps no
/// deep date, so `seen` does not count it as hashed and `--deep --oldest` takes it first.
#[test]
fn a_copy_a_deep_check_found_damaged_is_not_dated_as_deep_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 3);
    let victim = tmp.path().join("disk").join(package_dir_of("pkg-0000001")).join("f0.bin");
    fs::write(&victim, vec![b'z'; 512]).unwrap();
    let (code, r) = store(&no_env(), &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["run"]["seen"]["never_deep_checked"], 1, "{r:#}");
    let dated: BTreeSet<String> = db(&cfg)
        .prepare("SELECT object FROM object_check WHERE deep_checked_at IS NOT NULL")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(dated, pkgs(&[0, 2]));
    let (_, r) = store(&no_env(), &cfg, &["check", "--deep", "--oldest", "1"]);
    assert_eq!(checked_by(&cfg, r["run"]["id"].as_i64().unwrap()), pkgs(&[1]), "{r:#}");
}

fn package_dir_of(identifier: &str) -> String {
    use sha2::Digest;
    format!("{:02x}/{identifier}", sha2::Sha256::digest(identifier.as_bytes())[0])
}

#[test]
fn a_killed_check_leaves_no_finished_run_and_resume_reports_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 8);
    // Damage found before the kill must be in the resumed run's report.
    let victim = tmp.path().join("disk").join(package_dir_of("pkg-0000000")).join("f0.bin");
    fs::write(&victim, vec![b'y'; 512]).unwrap();
    let (code, r) = check_with_hooks(&cfg, &["--deep"], "check-batch-of-one,check-after-batch");
    assert_ne!(code, 0, "the hook aborts the process: {r:#}");
    assert_eq!(r, serde_json::Value::Null, "a killed run prints no report");
    let (state, finished_at) = run_state(&cfg, 1);
    assert_eq!((state.as_str(), finished_at), ("running", None), "nothing looks finished");
    assert_eq!(checked_by(&cfg, 1), pkgs(&[0]), "the committed batch is kept");
    // Killed again mid-way through the resumed run: one more batch kept.
    let (code, _) = check_with_hooks(&cfg, &["--resume"], "check-batch-of-one,check-after-batch");
    assert_ne!(code, 0);
    assert_eq!(checked_by(&cfg, 1), pkgs(&[0, 1]));
    let (code, r) = store(&no_env(), &cfg, &["check", "--resume"]);
    assert_eq!(code, 1, "the damage found in the first session: {r:#}");
    assert_eq!(r["run"]["id"], 1);
    assert_eq!(r["run"]["sessions"], 3);
    assert_eq!(r["run"]["finished"], true);
    assert_eq!(r["deep"], true, "the run's own options");
    assert_eq!(r["packages"], 8, "the report covers the whole run: {r:#}");
    assert_eq!(r["replicas"][0]["expected"], 16);
    assert_eq!(r["replicas"][0]["verified"], 15);
    let corrupt = r["replicas"][0]["corrupt"].as_array().unwrap();
    assert_eq!(corrupt.len(), 1, "{r:#}");
    assert!(corrupt[0].as_str().unwrap().contains("pkg-0000000/f0.bin"));
    assert_eq!(checked_by(&cfg, 1), pkgs(&[0, 1, 2, 3, 4, 5, 6, 7]));
    assert_eq!(run_state(&cfg, 1).0, "finished");
    let (code, r) = store(&no_env(), &cfg, &["check", "--resume"]);
    assert_eq!(code, 2, "nothing left to resume: {r:#}");
}

#[test]
fn a_budget_and_a_window_stop_a_run_that_resume_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 20);
    let started = std::time::Instant::now();
    // 1 MiB an hour is 512 bytes (one copy) every 1.76 s: a few copies in 4 s.
    let (code, r) =
        check_with_hooks(&cfg, &["--deep", "--budget", "1M", "--for", "4s"], "check-batch-of-one");
    let took = started.elapsed().as_secs_f64();
    assert_eq!(code, 0, "stopped, nothing found: {r:#}");
    assert_eq!(r["run"]["verdict"], "stopped", "{r:#}");
    assert_eq!(r["clean"], false);
    assert!(r["run"]["stopped"].as_str().unwrap().contains("window"), "{r:#}");
    let (checked, bytes) =
        (r["run"]["checked"].as_u64().unwrap(), r["run"]["bytes_read"].as_u64().unwrap());
    assert!((1..20).contains(&checked), "{r:#}");
    assert_eq!(bytes, checked * 1024);
    // Within the budget: what was read is paid for by the time taken, but for the first read.
    assert!((bytes - 512) as f64 <= 1048576.0 / 3600.0 * took + 1.0, "{bytes} bytes in {took} s");
    assert!(took < 15.0, "the window closes the run: {took} s");
    assert_eq!(run_state(&cfg, 1), ("stopped".into(), None));
    let (code, r) = store(&no_env(), &cfg, &["check", "--resume"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["run"]["verdict"], "clean");
    assert_eq!(r["clean"], true);
    assert_eq!((r["run"]["sessions"].as_u64(), r["packages"].as_u64()), (Some(2), Some(20)));
    assert_eq!(r["replicas"][0]["verified"], 40);
    assert_eq!(r["run"]["bytes_read"], 20 * 1024);
}

/// OCFL replicas: a sample, the oldest, a killed run resumed; ocfl-py validates each root
/// after every check.
#[test]
fn ocfl_runs_sample_oldest_and_resume_and_leave_valid_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = super::ocfl::ocfl_config(tmp.path());
    for i in 0..3 {
        let p = tmp.path().join(format!("p{i}"));
        package(Package::new().quiet(), &p, &[&repo().join("samples/heritrix-job")]).succeeded();
        super::ocfl::put(&cfg, &p);
    }
    let valid = || {
        for root in ["disk-a", "disk-b"] {
            super::ocfl::assert_ocfl_valid(&tmp.path().join(root), 3);
        }
    };
    let (code, r) = store(&no_env(), &cfg, &["check", "--sample", "2"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(
        (r["run"]["verdict"].as_str(), r["clean"].as_bool()),
        (Some("sampled"), Some(false))
    );
    assert_eq!(r["run"]["objects"], 3);
    let sampled = checked_by(&cfg, r["run"]["id"].as_i64().unwrap());
    assert_eq!(sampled.len(), 2);
    valid();
    let (_, r) = store(&no_env(), &cfg, &["check", "--oldest", "1"]);
    let oldest = checked_by(&cfg, r["run"]["id"].as_i64().unwrap());
    assert_eq!(oldest.len(), 1);
    assert!(oldest.is_disjoint(&sampled), "the one never checked: {oldest:?} {sampled:?}");
    assert_eq!(r["run"]["seen"]["never_checked"], 0);
    valid();
    let (code, _) = check_with_hooks(&cfg, &["--deep"], "check-batch-of-one,check-after-batch");
    assert_ne!(code, 0);
    let killed: i64 =
        db(&cfg).query_row("SELECT max(id) FROM check_run", [], |r| r.get(0)).unwrap();
    assert_eq!(run_state(&cfg, killed), ("running".into(), None));
    valid();
    let (code, r) = store(&no_env(), &cfg, &["check", "--resume"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!((r["run"]["id"].as_i64(), r["run"]["sessions"].as_u64()), (Some(killed), Some(2)));
    assert_eq!((r["run"]["verdict"].as_str(), r["clean"].as_bool()), (Some("clean"), Some(true)));
    assert_eq!((r["deep"].as_bool(), r["objects"].as_u64()), (Some(true), Some(3)));
    assert_eq!(r["seen"].as_array().unwrap().len(), 6, "3 objects on 2 replicas: {r:#}");
    valid();
    // A size-only check after the deep one leaves the deep dates as they were.
    let (_, r) = store(&no_env(), &cfg, &["check"]);
    let seen = &r["run"]["seen"];
    assert_eq!(seen["never_deep_checked"], 0, "{r:#}");
    assert!(seen["oldest_deep_check"].as_str().unwrap() < seen["oldest_check"].as_str().unwrap());
    valid();
}

/// While one check holds the store's check lock (taken here by another process, as a running
/// check does), a second check or `--resume` is refused and writes no run: two at once would
/// replace each other's plan, and one could end having checked nothing and call it clean.
#[test]
fn a_second_check_while_one_runs_is_refused_and_plans_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 20);
    let lock = tmp.path().join("state.sqlite.check-lock");
    let mut holder = Command::new("python3")
        .args(["-c", "import fcntl,sys; f=open(sys.argv[1],'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()"])
        .arg(&lock)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.as_mut().unwrap()),
        &mut said,
    )
    .unwrap();
    assert_eq!(said.trim(), "held");
    for args in [&["--deep"][..], &["--resume"][..]] {
        let o = webaip_command()
            .args(["store", "--config", cfg.to_str().unwrap(), "check"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("another store check"), "{err}");
    }
    let runs: i64 =
        db(&cfg).query_row("SELECT count(*) FROM check_run", [], |r| r.get(0)).unwrap_or(0);
    assert_eq!(runs, 0);
    drop(holder.stdin.take());
    holder.wait().unwrap();
    let (code, r) = store(&no_env(), &cfg, &["check"]);
    assert_eq!((code, r["run"]["verdict"].as_str()), (0, Some("clean")), "{r:#}");
}

/// `webaip store --config C ARGS` as text: exit status and standard output.
fn text(cfg: &Path, args: &[&str]) -> (i32, String) {
    let o = webaip_command()
        .args(["store", "--config", cfg.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned())
}

/// A sample's odds name the real share (D of N objects), once per number of damaged objects,
/// and a sample without `--deep` says it finds missing or resized copies only.
#[test]
fn a_samples_odds_give_the_real_share_and_say_what_a_size_only_sample_cannot_find() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 50);
    let (code, out) = text(&cfg, &["check", "--sample", "10"]);
    assert_eq!(code, 0, "{out}");
    let odds: Vec<&str> = out.lines().filter(|l| l.contains("were damaged")).collect();
    assert_eq!(odds.len(), 2, "0.1 % and 1 % of 50 are both one object: {out}");
    let p1 = python_detection(50, 1, 10);
    assert!(odds[0].contains(&format!("if 1 of 50 objects (2%) were damaged, a sample of 10 holds at least one with probability {p1:.4}")), "{out}");
    assert!(odds[1].contains("if 3 of 50 objects (6%) were damaged"), "{out}");
    assert!(out.contains("finds missing or resized copies only"), "{out}");
    let (_, out) = text(&cfg, &["check", "--sample", "10", "--deep"]);
    assert!(!out.contains("resized copies only"), "{out}");
    let (_, r) = store(&no_env(), &cfg, &["check", "--sample", "10"]);
    let odds = &r["run"]["sample"];
    assert_eq!(odds["bytes_hashed"], false, "{r:#}");
    let damaged: Vec<u64> = odds["detection"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["damaged"].as_u64().unwrap())
        .collect();
    assert_eq!(damaged, [1, 3]);
    assert_eq!(odds["detection"][1]["damaged_share"], 0.06);
}

/// `-q` drops detail, never a verdict that is not clean: a sample, a part, a stopped run and
/// problems each print their `run N: VERDICT` line; a clean run prints nothing.
#[test]
fn a_quiet_check_prints_every_verdict_that_is_not_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = simulated(tmp.path(), 4);
    let (code, out) = text(&cfg, &["-q", "check"]);
    assert_eq!((code, out.as_str()), (0, ""));
    for (args, verdict) in [
        (&["--sample", "1"][..], "SAMPLED"),
        (&["--oldest", "1"][..], "PARTIAL"),
        (&["--deep", "--budget", "1K", "--for", "1s"][..], "STOPPED"),
    ] {
        let (code, out) = text(&cfg, &[&["-q", "check"][..], args].concat());
        assert_eq!(code, 0, "{args:?}: {out}");
        assert_eq!(out.lines().count(), 1, "{args:?}: {out}");
        assert!(
            out.starts_with("run ") && out.contains(&format!(": {verdict}")),
            "{args:?}: {out}"
        );
    }
    let victim = tmp.path().join("disk").join(package_dir_of("pkg-0000001")).join("f1.bin");
    fs::write(&victim, vec![b'x'; 512]).unwrap();
    let (code, out) = text(&cfg, &["-q", "check", "--deep"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(": PROBLEMS FOUND"), "{out}");
}

/// With the state database lost, a check of one replica of two cannot count the votes for an
/// object: it is `not-judged` (verdict PARTIAL, exit 0), never `no-majority`; the check of
/// both replicas is clean.
#[test]
fn ocfl_a_one_replica_check_after_the_database_is_lost_judges_no_majority_it_could_not_count() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = super::ocfl::ocfl_config(tmp.path());
    let p = tmp.path().join("p");
    package(Package::new().quiet(), &p, &[&repo().join("samples/heritrix-job")]).succeeded();
    super::ocfl::put(&cfg, &p);
    for f in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm"] {
        let _ = fs::remove_file(tmp.path().join(f));
    }
    let (code, r) = store(&no_env(), &cfg, &["check", "--replica", "disk-a"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(
        (r["run"]["verdict"].as_str(), r["clean"].as_bool()),
        (Some("partial"), Some(false)),
        "{r:#}"
    );
    assert_eq!(super::ocfl::findings(&r), [("disk-a".to_string(), "not-judged".to_string())]);
    let (code, out) = text(&cfg, &["-q", "check", "--replica", "disk-b"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(": PARTIAL"), "{out}");
    let (code, r) = store(&no_env(), &cfg, &["check"]);
    assert_eq!((code, r["run"]["verdict"].as_str()), (0, Some("clean")), "{r:#}");
    for root in ["disk-a", "disk-b"] {
        super::ocfl::assert_ocfl_valid(&tmp.path().join(root), 1);
    }
}
