//! What a batch takes of the machine: one run at a time on a journal (a lock the kernel drops
//! with the process), a pause while the output's file system is short of space, the items in
//! flight that the memory budget allows, and the bytes and time the report gives.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use crate::util::{sample, webaip_command};

/// A manifest of two small samples in `dir`.
fn two_samples(dir: &Path) -> std::path::PathBuf {
    let csv = dir.join("m.csv");
    let text = format!("{}\n{}\n", sample("nedlib").display(), sample("kulturarw3").display());
    std::fs::write(&csv, text).unwrap();
    csv
}

/// `batch run --deterministic --no-virus-check --json EXTRA --out OUT CSV`, with `-j 2`
/// unless `extra` says otherwise.
fn batch_command(csv: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = webaip_command();
    c.args(["batch", "run", "--deterministic", "--no-virus-check", "--json"]);
    if !extra.contains(&"-j") {
        c.args(["-j", "2"]);
    }
    c.args(extra).args(["--out", out.to_str().unwrap(), csv.to_str().unwrap()]);
    c
}

/// `batch run CSV --out OUT --json ... EXTRA` started in the background, its free-space
/// polls every 100 ms; its stderr lines come through the receiver.
fn spawn_batch(csv: &Path, out: &Path, extra: &[&str]) -> (Child, Receiver<String>) {
    let mut c = batch_command(csv, out, extra);
    c.env("WEBAIP_BATCH_SPACE_POLL_MS", "100").stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// The first stderr line containing `text`, within 60 s.
fn wait_for_line(rx: &Receiver<String>, text: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(text) => return line,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no line with {text:?} on stderr within 60 s");
}

/// `batch run` to its end; (exit code, stdout, stderr).
fn run_batch(csv: &Path, out: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let o = batch_command(csv, out, extra).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

fn kill(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A run paused for space holds its journal: a second run of it, whole or one shard, is
/// refused naming the journal and the first run's pid; shards of one journal run side by
/// side but not twice; once the holder is killed (SIGKILL: no chance to clean up), a run
/// takes the journal and packages everything.
#[test]
fn a_journal_in_use_refuses_a_second_run_until_its_holder_dies() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = two_samples(tmp.path());
    let out = tmp.path().join("out");
    let journal = out.join("batch-journal.sqlite");
    let (holder, rx) = spawn_batch(&csv, &out, &["--min-free", "1000P"]);
    wait_for_line(&rx, "paused");
    let (code, _, err) = run_batch(&csv, &out, &[]);
    assert_eq!(code, Some(2), "{err}");
    let pid = format!("pid {}", holder.id());
    assert!(err.contains(&journal.display().to_string()) && err.contains(&pid), "{err}");
    assert!(err.contains("in use by another run"), "{err}");
    let j = journal.to_str().unwrap();
    let (code, _, err) = run_batch(&csv, &out, &["--journal", j, "--shard", "1/2"]);
    assert_eq!(code, Some(2), "a shard beside a whole run: {err}");
    assert!(err.contains(&pid), "{err}");
    kill(holder);

    let (code, stdout, err) = run_batch(&csv, &out, &[]);
    assert_eq!(code, Some(0), "after the holder was killed: {stdout}{err}");
    let o: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(o["packaged"], 2, "{o}");
    let sources: u64 = ["nedlib", "kulturarw3"].iter().map(|s| tree_bytes(&sample(s))).sum();
    assert_eq!(o["bytes"].as_u64(), Some(sources), "{o}");
    assert!(o["elapsed_seconds"].as_f64().is_some_and(|s| s > 0.0), "{o}");

    // Shards of one journal: side by side, each once. The first is the shard of an item, so
    // that it pauses holding its lock.
    let shared = tmp.path().join("shared");
    let sj = tmp.path().join("shards.sqlite");
    let sj = sj.to_str().unwrap();
    let key = sample("nedlib").display().to_string();
    // An item's shard is the first 8 bytes of its key's SHA-256, big-endian, modulo N.
    let hash = <sha2::Sha256 as sha2::Digest>::digest(key.as_bytes());
    let first_eight = u64::from_be_bytes(hash[..8].try_into().unwrap());
    let (mine, other) = match first_eight % 2 == 0 {
        true => ("0/2", "1/2"),
        false => ("1/2", "0/2"),
    };
    let paused = ["--journal", sj, "--shard", mine, "--min-free", "1000P"];
    let (first, rx) = spawn_batch(&csv, &shared, &paused);
    wait_for_line(&rx, "paused");
    let (code, _, err) = run_batch(&csv, &shared, &["--journal", sj, "--shard", other]);
    assert!(matches!(code, Some(0 | 1)), "the other shard runs: {err}");
    let (code, _, err) = run_batch(&csv, &shared, &["--journal", sj, "--shard", mine]);
    assert_eq!(code, Some(2), "the same shard twice: {err}");
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    let (code, _, err) = run_batch(&csv, &shared, &["--journal", sj]);
    assert_eq!(code, Some(2), "a whole run beside a shard: {err}");
    kill(first);
}

/// The bytes of the files below `dir`.
fn tree_bytes(dir: &Path) -> u64 {
    walkdir(dir).iter().map(|p| std::fs::symlink_metadata(p).unwrap().len()).sum()
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            files.extend(walkdir(&e.path()));
        } else if t.is_file() {
            files.push(e.path());
        }
    }
    files
}

/// A tmpfs mounted for a test, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// With less free space than `--min-free` on the output's file system, a batch starts
/// nothing and says so once, naming the folder, what is free and what is wanted; when space
/// comes back it resumes and packages every item. On a real (tmpfs) file system filled with
/// a ballast file; skipped where mounting is not allowed.
#[test]
fn a_batch_short_of_space_pauses_until_space_is_back() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = tmp.path().join("fs");
    std::fs::create_dir(&fs).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64M", "tmpfs"])
        .arg(&fs)
        .stderr(Stdio::null())
        .status();
    if !mounted.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: cannot mount a tmpfs here (needs root and mount rights)");
        return;
    }
    let _guard = Tmpfs(fs.clone());
    let ballast = fs.join("ballast");
    std::fs::write(&ballast, vec![1u8; 40 << 20]).unwrap();
    let csv = two_samples(tmp.path());
    let out = fs.join("out");
    let (child, rx) = spawn_batch(&csv, &out, &["--min-free", "32M"]);
    let line = wait_for_line(&rx, "paused");
    assert!(line.contains(&out.display().to_string()), "{line}");
    assert!(line.contains("MiB free") && line.contains("--min-free wants 32.00 MiB"), "{line}");
    // Paused: nothing started, and the pause is told once.
    std::thread::sleep(Duration::from_millis(500));
    let db = rusqlite::Connection::open(out.join("batch-journal.sqlite")).unwrap();
    let started: i64 = db
        .query_row("SELECT count(*) FROM items WHERE state != 'pending'", [], |r| r.get(0))
        .unwrap();
    drop(db);
    assert_eq!(started, 0);
    let again: Vec<String> = rx.try_iter().filter(|l| l.contains("paused")).collect();
    assert!(again.is_empty(), "{again:?}");
    std::fs::remove_file(&ballast).unwrap();
    wait_for_line(&rx, "resumed");
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    let o: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((o["packaged"].as_u64(), o["failed"].as_u64()), (Some(2), Some(0)), "{o}");
    assert_eq!(o["min_free"].as_u64(), Some(32 << 20));
}

/// The memory budget limits items in flight to budget / 64 MiB, never below one or above
/// `-j`, and the report says how many ran at once.
#[test]
fn the_memory_budget_limits_items_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = two_samples(tmp.path());
    for (memory, jobs, want) in [("64M", "4", 1), ("256M", "2", 2), ("1K", "2", 1)] {
        let out = tmp.path().join(format!("out-{memory}"));
        let (code, stdout, err) = run_batch(&csv, &out, &["--memory", memory, "-j", jobs]);
        assert_eq!(code, Some(0), "{stdout}{err}");
        let o: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(o["in_flight"], want, "--memory {memory} -j {jobs}: {o}");
    }
    let (code, _, err) = run_batch(&csv, &tmp.path().join("bad"), &["--memory", "lots"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a size"), "{err}");
}

/// `batch -j 2 --memory 256M` over items with records larger than any batch held in memory
/// (streamed, never held) beside an ordinary harvest stays under its budget: peak RSS of the
/// whole process, measured by `/usr/bin/time`.
#[test]
fn a_batch_of_large_records_stays_under_its_memory_budget() {
    if !Path::new("/usr/bin/time").is_file() {
        eprintln!("SKIPPED: no /usr/bin/time to measure peak RSS with");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let items = tmp.path().join("items");
    std::fs::create_dir(&items).unwrap();
    for (name, kind, args) in [
        ("IAH-20240315103000-00001-single.arc.gz", "single", ["--record-size", "40M"]),
        ("IAH-20240315103000-00002-single.arc.gz", "single", ["--record-size", "24M"]),
        ("IAH-20240315103000-00003-bench.arc.gz", "bench", ["--size", "4M"]),
    ] {
        crate::util::gen_arc(kind, &items.join(name), &args);
    }
    let out = tmp.path().join("out");
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M", crate::util::WEBAIP, "batch", "run", "-j", "2", "--memory", "256M"])
        .args(["--no-virus-check", "--quiet", "--out", out.to_str().unwrap()])
        .arg(&items)
        .env_remove("WEBAIP_CLAMD")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let kib: u64 = err.lines().last().and_then(|l| l.trim().parse().ok()).expect("RSS");
    eprintln!("peak RSS: {kib} KiB");
    assert!(kib < 256 << 10, "peak RSS {kib} KiB, over the 256 MiB budget");
    for i in 1..=3 {
        let name = format!("IAH-20240315103000-0000{i}");
        let made = std::fs::read_dir(&out).unwrap().flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with(&name)
                && e.path().join("METS.xml").is_file()
        });
        assert!(made, "{name}: no package");
    }
}
