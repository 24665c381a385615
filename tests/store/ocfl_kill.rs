//! SIGKILL at 20 points of `store put`, `ingest --store` and `store repair` on OCFL file
//! system replicas. A run is first made whole, counting its store write points (every write,
//! sync and rename of a stage or a commit, `WEBAIP_COUNT_WRITES`); then, on a fresh copy of
//! the store each time, the run is killed at the Nth point (`WEBAIP_KILL_AT_WRITE`), N drawn
//! from a seeded generator in each twentieth of the run, so every point is reproducible.
//! After each kill every object on every replica is byte for byte at its old or its new
//! version (inventories aside, whose `created` is the run's time), ocfl-py finds every
//! replica valid with no warning, and the same command run again completes with every
//! replica at the new version, valid (a put killed between two replicas' commits, run again,
//! gives the replicas behind the version the others committed, with no repair first).

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ocfl::{files_of, ocfl_config_of, put};
use super::same_objid_pair;
use crate::util::{Package, Rng, package, repo, webaip_command};

/// Kill points per command.
const POINTS: u64 = 20;

/// The signal a kill point sends.
const SIGKILL: i32 = 9;

/// One point in each twentieth of a run of `total` write points (every point when fewer).
fn kill_points(total: u64, seed: u64) -> Vec<u64> {
    if total <= POINTS {
        return (1..=total).collect();
    }
    let mut rng = Rng::new(seed);
    (0..POINTS)
        .map(|i| {
            let (from, to) = (i * total / POINTS, (i + 1) * total / POINTS);
            from + 1 + rng.next() % (to - from)
        })
        .collect()
}

/// A store to kill a command in: its directory (replica roots, work directories, state
/// database, configuration), replicated afresh for each kill.
struct Scenario<'a> {
    base: &'a Path,
    replicas: &'a [&'a str],
    /// The command's arguments, given the copy's configuration.
    args: &'a dyn Fn(&Path) -> Vec<String>,
}

/// What a replica holds: each object's head and files (inventories left out: their
/// `created` differs between two runs of one command; ocfl-py checks them).
type Held = BTreeMap<String, String>;

fn held(root: &Path) -> Held {
    let mut out: Held = files_of(root)
        .into_iter()
        .filter(|(rel, _)| {
            !rel.ends_with("inventory.json") && !rel.ends_with("inventory.json.sha512")
        })
        .collect();
    for e in walkdir::WalkDir::new(root).into_iter().filter_map(Result::ok) {
        if e.file_name() == "0=ocfl_object_1.1" {
            let obj = e.path().parent().unwrap();
            let inv = fs::read(obj.join("inventory.json")).unwrap();
            let v: serde_json::Value = serde_json::from_slice(&inv).unwrap();
            let rel = obj.strip_prefix(root).unwrap().display().to_string();
            out.insert(format!("{rel} (head)"), v["head"].as_str().unwrap_or("").into());
        }
    }
    out
}

impl Scenario<'_> {
    /// `base` copied to `to`, with a configuration naming the copy's roots.
    fn copy(&self, to: &Path) -> PathBuf {
        let ok = Command::new("cp").arg("-a").arg(self.base).arg(to).status().unwrap().success();
        assert!(ok, "cp -a {}", self.base.display());
        ocfl_config_of(to, "store.toml", "state.sqlite", self.replicas)
    }

    fn run(&self, cfg: &Path, env: &[(&str, String)]) -> std::process::Output {
        let mut c = webaip_command();
        c.args((self.args)(cfg));
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn held(&self, dir: &Path) -> Vec<Held> {
        self.replicas.iter().map(|r| held(&dir.join(r))).collect()
    }

    fn roots(&self, dir: &Path) -> Vec<PathBuf> {
        self.replicas.iter().map(|r| dir.join(r)).collect()
    }

    /// Kills the command at 20 points, checks what each kill left and the run after it;
    /// returns every root to validate.
    fn kill_everywhere(&self, scratch: &Path, seed: u64) -> Vec<PathBuf> {
        let old = self.held(self.base);
        fs::create_dir_all(scratch).unwrap();
        let whole = scratch.join("whole");
        let cfg = self.copy(&whole);
        let count = scratch.join("count");
        let o = self.run(&cfg, &[("WEBAIP_COUNT_WRITES", count.display().to_string())]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        let new = self.held(&whole);
        assert_ne!(old, new, "the command changes the store");
        let total = fs::metadata(&count).unwrap().len();
        assert!(total >= POINTS, "{total} write points");
        let mut roots = self.roots(&whole);
        for n in kill_points(total, seed) {
            let dir = scratch.join(format!("kill-{n}"));
            let cfg = self.copy(&dir);
            let o = self.run(&cfg, &[("WEBAIP_KILL_AT_WRITE", n.to_string())]);
            assert_eq!(o.status.signal(), Some(SIGKILL), "point {n} of {total}: {o:?}");
            for (i, now) in self.held(&dir).iter().enumerate() {
                let r = self.replicas[i];
                assert!(
                    *now == old[i] || *now == new[i],
                    "killed at point {n} of {total}, {r} is neither at its old nor its new \
                     version:\nnow {now:#?}\nold {:#?}\nnew {:#?}",
                    old[i],
                    new[i]
                );
            }
            roots.extend(self.roots(&dir).into_iter().map(|r| {
                let kept = dir.join(format!("{}-killed", r.file_name().unwrap().to_string_lossy()));
                let ok = Command::new("cp").arg("-a").arg(&r).arg(&kept).status().unwrap();
                assert!(ok.success());
                kept
            }));
            // Replicas left apart (one at the new version, one at the old) are no reason to
            // refuse the run again: it completes the ones behind, without a repair first.
            let o = self.run(&cfg, &[]);
            assert!(
                o.status.success(),
                "the run after a kill at point {n} of {total}: {}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(self.held(&dir), new, "the run after a kill at point {n} of {total}");
            roots.extend(self.roots(&dir));
        }
        roots
    }
}

/// ocfl-py's verdict on every root at once (one interpreter): valid, no error, no warning.
fn assert_all_ocfl_valid(roots: &[PathBuf]) {
    let o = Command::new(repo().join(".venv/bin/python"))
        .arg(repo().join("tests/store/ocfl_validate.py"))
        .args(roots)
        .output()
        .expect("the ocfl-py oracle runs (scripts/setup-test-env.sh installs it)");
    let all: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(all.len(), roots.len());
    for v in all {
        // A replica the killed run had not made yet has no root at all: nothing to validate.
        let absent = v["objects"] == 0 && !Path::new(v["root"].as_str().unwrap()).exists();
        if absent {
            continue;
        }
        assert_eq!(v["valid"], true, "{v:#}");
        assert_eq!(v["messages"], serde_json::json!([]), "{v:#}");
        assert_eq!(v["misplaced"], serde_json::json!([]), "{v:#}");
    }
}

fn store_args(cfg: &Path, rest: &[&str]) -> Vec<String> {
    let mut a = vec!["store".into(), "--config".into(), cfg.display().to_string(), "--json".into()];
    a.extend(rest.iter().map(|s| s.to_string()));
    a
}

#[test]
fn ocfl_a_put_killed_at_any_write_leaves_old_or_new_and_runs_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let base = tmp.path().join("base");
    fs::create_dir_all(&base).unwrap();
    let names = ["disk-a", "disk-b"];
    put(&ocfl_config_of(&base, "store.toml", "state.sqlite", &names), &a);
    let b_arg = b.display().to_string();
    let args = |cfg: &Path| store_args(cfg, &["put", b_arg.as_str()]);
    let s = Scenario { base: &base, replicas: &names, args: &args };
    let roots = s.kill_everywhere(&tmp.path().join("put"), 67);
    assert_all_ocfl_valid(&roots);
}

#[test]
fn ocfl_an_ingest_to_the_store_killed_at_any_write_leaves_old_or_new_and_runs_again() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = tmp.path().join("ssip");
    package(
        Package::new().quiet().args(&["--deterministic"]),
        &ssip,
        &[&repo().join("samples/heritrix-job")],
    )
    .succeeded();
    let base = tmp.path().join("base");
    fs::create_dir_all(&base).unwrap();
    let names = ["disk-a", "disk-b", "disk-c"];
    put(&ocfl_config_of(&base, "store.toml", "state.sqlite", &names), &ssip);
    let ssip_arg = ssip.display().to_string();
    let args = |cfg: &Path| {
        let out = cfg.parent().unwrap().join("aip").display().to_string();
        let store = cfg.display().to_string();
        ["ingest", "--json", "--deterministic", "--store", store.as_str()]
            .iter()
            .map(|s| s.to_string())
            .chain([ssip_arg.clone(), "-o".into(), out])
            .collect()
    };
    let s = Scenario { base: &base, replicas: &names, args: &args };
    let roots = s.kill_everywhere(&tmp.path().join("ingest"), 68);
    assert_all_ocfl_valid(&roots);
}

#[test]
fn ocfl_a_repair_killed_at_any_write_leaves_old_or_new_and_runs_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let base = tmp.path().join("base");
    fs::create_dir_all(&base).unwrap();
    let names = ["disk-a", "disk-b", "disk-c"];
    let cfg = ocfl_config_of(&base, "store.toml", "state.sqlite", &names);
    put(&cfg, &a);
    // Version 2 committed on disk-a alone (the put aborted after its first commit): the
    // repair brings disk-b and disk-c up to it.
    let b_arg = b.display().to_string();
    let o = webaip_command()
        .args(store_args(&cfg, &["put", b_arg.as_str()]))
        .env("WEBAIP_FAIL_AT", "ocfl-after-commit")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let args = |cfg: &Path| store_args(cfg, &["repair"]);
    let s = Scenario { base: &base, replicas: &names, args: &args };
    let roots = s.kill_everywhere(&tmp.path().join("repair"), 69);
    assert_all_ocfl_valid(&roots);
}

/// Whether `root` holds something but not its declaration: a storage root half made.
fn half_made(root: &Path) -> bool {
    root.is_dir()
        && fs::read_dir(root).unwrap().next().is_some()
        && !root.join("0=ocfl_1.1").exists()
}

/// A first put to an empty store killed at each write point until both roots are made: where
/// a kill left a root half made (webaip's own root files, no declaration), the put run again
/// finishes the root and completes, and ocfl-py finds every replica valid. Two first puts at
/// once to a new store both complete (one makes each root, the other waits for it).
#[test]
fn ocfl_a_first_put_killed_while_making_the_roots_runs_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = same_objid_pair(tmp.path());
    let b = tmp.path().join("other");
    package(
        Package::new().quiet().args(&["--deterministic"]),
        &b,
        &[&repo().join("samples/nedlib")],
    )
    .succeeded();
    let names = ["disk-a", "disk-b"];
    let a_arg = a.display().to_string();
    let mut roots = Vec::new();
    let mut half = 0;
    for n in 1.. {
        let dir = tmp.path().join(format!("kill-{n}"));
        fs::create_dir_all(&dir).unwrap();
        let cfg = ocfl_config_of(&dir, "store.toml", "state.sqlite", &names);
        let o = webaip_command()
            .args(store_args(&cfg, &["put", a_arg.as_str()]))
            .env("WEBAIP_KILL_AT_WRITE", n.to_string())
            .output()
            .unwrap();
        assert_eq!(o.status.signal(), Some(SIGKILL), "point {n}: {o:?}");
        let made = names.iter().all(|r| dir.join(r).join("0=ocfl_1.1").exists());
        if !names.iter().any(|r| half_made(&dir.join(r))) {
            if made {
                break;
            }
            continue;
        }
        half += 1;
        let o = webaip_command().args(store_args(&cfg, &["put", a_arg.as_str()])).output().unwrap();
        assert!(o.status.success(), "the put after a kill at point {n}: {o:?}");
        roots.extend(names.iter().map(|r| dir.join(r)));
    }
    assert!(half >= 4, "{half} kills left a root half made");
    // Two first puts racing to make the roots.
    for round in 0..3 {
        let dir = tmp.path().join(format!("race-{round}"));
        fs::create_dir_all(&dir).unwrap();
        let cfg = ocfl_config_of(&dir, "store.toml", "state.sqlite", &names);
        let spawn = |p: &Path| {
            webaip_command()
                .args(store_args(&cfg, &["put", p.to_str().unwrap()]))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (first, second) = (spawn(&a), spawn(&b));
        for child in [first, second] {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "round {round}: {o:?}");
        }
        roots.extend(names.iter().map(|r| dir.join(r)));
    }
    assert_all_ocfl_valid(&roots);
}
