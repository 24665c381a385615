//! `webaip batch`: a manifest of the committed samples and of broken items packaged with one
//! command; failures recorded with their reasons, reruns that resume, shards that partition
//! the manifest, and runs killed with SIGKILL that resume to the same packages.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{repo, sample, webaip, webaip_command};

mod deliver;
mod export;
mod resources;
mod scale;
mod slurm;

/// `batch run MANIFEST --out OUT --deterministic --no-virus-check --json` plus `extra`.
fn batch(manifest: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["batch", "run", "--deterministic", "--no-virus-check", "--json", "-j", "2"];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap(), manifest.to_str().unwrap()]);
    webaip(&args)
}

/// The run's JSON outcome, the run having exited with `code`.
fn outcome(o: &Output, code: i32) -> serde_json::Value {
    crate::util::report_of(o, code)
}

/// (key, state, METS SHA-512 or error kind, error) of every row of a journal (none when a
/// run killed early made the file and not yet its table).
fn rows(journal: &Path) -> Vec<(String, String, String, String)> {
    let db = rusqlite::Connection::open(journal).unwrap();
    let tables: i64 = db
        .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'items'", [], |r| r.get(0))
        .unwrap();
    if tables == 0 {
        return Vec::new();
    }
    let mut stmt = db
        .prepare(
            "SELECT key, state, coalesce(mets_sha512, error_kind, ''), coalesce(error, '') \
             FROM items ORDER BY key",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The METS SHA-512 the golden digests hold for a sample package.
fn golden_mets(name: &str) -> String {
    let text = std::fs::read_to_string(repo().join("tests/golden").join(format!("{name}.sha512")))
        .unwrap();
    let line = text.lines().find(|l| l.ends_with("  METS.xml")).unwrap();
    line[..128].to_string()
}

/// The committed samples, as manifest lines (absolute paths), with the package arguments of
/// their golden packages, and the golden package each one must equal.
fn sample_lines() -> Vec<(String, &'static str)> {
    let s = |rel: &str| sample(rel).display().to_string();
    vec![
        (
            format!("{},{},describe-seeds", s("heritrix-job"), s("heritrix-job.metadata.toml")),
            "heritrix-minimal",
        ),
        (format!("{},,describe-seeds", s("pandas/40123/20040517-1412")), "pandas"),
        (format!("\"{}\",,--describe-seeds", s("mirror")), "mirror"),
        (s("nedlib"), "nedlib"),
        (s("kulturarw3"), "kulturarw3"),
    ]
}

/// [`sample_lines`] for a manifest in `dir`: the samples copied to `dir/samples` and named
/// relative to it, so that the items' keys, and the shard each falls in, are the same
/// wherever the repository is cloned (with absolute paths, one clone's keys all fell in one
/// shard of two).
fn sample_lines_beside(dir: &Path) -> Vec<(String, &'static str)> {
    let samples = crate::util::samples();
    crate::util::copy_tree(&samples, &dir.join("samples"));
    let abs = samples.display().to_string();
    sample_lines().into_iter().map(|(l, golden)| (l.replace(&abs, "samples"), golden)).collect()
}

/// The key (the source as written) of a manifest line of [`sample_lines`].
fn sample_key(line: &str) -> String {
    line.trim_start_matches('"').split([',', '"']).next().unwrap().to_string()
}

/// Every good item a package `audit --deep` finds intact, whose METS is the golden one; every
/// bad one failed with its reason; a rerun does nothing new; `--retry-failed` retries; a
/// second journal over the same folder finds the packages there, and status counts each item
/// once.
#[test]
fn a_manifest_of_samples_and_broken_items_packages_the_good_and_records_the_bad() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    std::fs::write(dir.join("broken.arc"), b"filedesc://x 0.0.0.0 2004\ntruncated garb\x00\xff")
        .unwrap();
    std::fs::create_dir(dir.join("empty")).unwrap();
    let arc = sample("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    std::fs::copy(&arc, dir.join("other.arc")).unwrap();
    // A directory of the name `other.arc` would be packaged to, made by someone else.
    std::fs::create_dir_all(out.join("other")).unwrap();
    let mut manifest = String::from("source,metadata,options\n");
    for (line, _) in sample_lines() {
        manifest.push_str(&line);
        manifest.push('\n');
    }
    manifest.push_str("broken.arc\n./empty/\n# a comment line\nother.arc\n");
    manifest.push_str(&format!("{}/\n", sample("nedlib").display()));
    let csv = dir.join("manifest.csv");
    std::fs::write(&csv, &manifest).unwrap();

    let first = outcome(&batch(&csv, &out, &[]), 1);
    assert_eq!((first["items"].as_u64(), first["packaged"].as_u64()), (Some(9), Some(5)));
    assert_eq!(first["failed"].as_u64(), Some(4));
    let journal = out.join("batch-journal.sqlite");
    let rows1 = rows(&journal);
    let state = |key: &str| rows1.iter().find(|r| r.0 == key).unwrap_or_else(|| panic!("{key}"));
    for (line, golden) in sample_lines() {
        let key = sample_key(&line);
        let (_, st, sha, _) = state(&key);
        assert_eq!((st.as_str(), sha.as_str()), ("done", golden_mets(golden).as_str()), "{key}");
    }
    let failed = |key: &str, kind: &str, why: &str| {
        let (_, st, k, e) = state(key);
        assert_eq!((st.as_str(), k.as_str()), ("failed", kind), "{key}: {e}");
        assert!(e.contains(why), "{key}: {e}");
    };
    failed("broken.arc", "damaged", "no ARC record header found");
    failed("empty", "unrecognised", "no input shape recognised");
    failed("other.arc", "exists", "exists, and this journal does not record it done");
    failed(
        &format!("{} (line 11)", sample("nedlib").display()),
        "duplicate",
        "duplicate of line 5",
    );
    // Every package is complete: audit --deep reads every record and digest.
    let packages = ["heritrix-job", "20040517-1412", "mirror", "nedlib", "kulturarw3"];
    for p in packages {
        let o = webaip(&["audit", "--deep", out.join(p).to_str().unwrap()]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success() && text.contains(": INTACT:"), "{p}: {text}");
    }
    let mut dirs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !n.starts_with("batch-journal"))
        .collect();
    dirs.sort();
    assert_eq!(dirs, ["20040517-1412", "heritrix-job", "kulturarw3", "mirror", "nedlib", "other"]);

    // A rerun does nothing new, and still says something failed.
    let second = outcome(&batch(&csv, &out, &[]), 1);
    assert_eq!((second["packaged"].as_u64(), second["failed"].as_u64()), (Some(0), Some(0)));
    assert_eq!(
        (second["skipped_done"].as_u64(), second["skipped_failed"].as_u64()),
        (Some(5), Some(4))
    );
    let unchanged: Vec<_> = rows(&journal).into_iter().map(|r| (r.0, r.1, r.2)).collect();
    assert_eq!(
        unchanged,
        rows1.iter().map(|r| (r.0.clone(), r.1.clone(), r.2.clone())).collect::<Vec<_>>()
    );
    // Mended, the broken ARC is packaged by --retry-failed; the others fail again. A package
    // recorded done but left in the work folder (its run killed before the move) is moved.
    std::fs::copy(&arc, dir.join("broken.arc")).unwrap();
    std::fs::remove_dir(out.join("other")).unwrap();
    std::fs::rename(out.join("nedlib"), out.join(".batch-work/nedlib")).unwrap();
    let third = outcome(&batch(&csv, &out, &["--retry-failed"]), 1);
    assert_eq!((third["packaged"].as_u64(), third["failed"].as_u64()), (Some(2), Some(2)));
    assert_eq!(third["moved_into_place"].as_u64(), Some(1));
    assert!(out.join("nedlib/METS.xml").is_file());
    assert!(out.join("broken/METS.xml").is_file() && out.join("other/METS.xml").is_file());

    // Another journal over the same folder: every package is there already ("exists").
    let journal2 = dir.join("second.sqlite");
    let o = batch(&csv, &out, &["--journal", journal2.to_str().unwrap()]);
    assert_eq!(outcome(&o, 1)["packaged"].as_u64(), Some(0));
    let exists = rows(&journal2).iter().filter(|r| r.2 == "exists").count();
    assert_eq!(exists, 7);
    let o = webaip(&[
        "batch",
        "status",
        "--json",
        journal.to_str().unwrap(),
        journal2.to_str().unwrap(),
    ]);
    let status = outcome(&o, 1);
    assert_eq!(status["journals"][0]["items"].as_u64(), Some(9));
    assert_eq!(status["journals"][1]["failed"].as_u64(), Some(9));
    // Each item once: done in the first journal wins over failed in the second.
    assert_eq!(status["total"]["items"].as_u64(), Some(9));
    assert_eq!(status["total"]["done"].as_u64(), Some(7));
    assert_eq!(status["total"]["failed"].as_u64(), Some(2));
    let text = webaip(&["batch", "status", journal.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("total: 9 item(s): 7 done"), "{text}");
}

/// A folder scanned as the manifest, run as three shards (one from Slurm's variables): each
/// item is in exactly one shard's journal.
#[test]
fn shards_of_a_scanned_folder_partition_it() {
    let tmp = tempfile::tempdir().unwrap();
    let harvests = tmp.path().join("harvests");
    for i in 0..24 {
        std::fs::create_dir_all(harvests.join(format!("empty-{i:02}"))).unwrap();
    }
    let arc = sample("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    for i in 0..4 {
        std::fs::copy(&arc, harvests.join(format!("crawl-{i}.arc"))).unwrap();
    }
    std::fs::write(harvests.join("notes.txt"), "not a harvest").unwrap();
    let out = tmp.path().join("out");
    let mut keys = Vec::new();
    for k in 0..3 {
        let o = if k == 1 {
            let mut c = webaip_command();
            c.env("SLURM_ARRAY_TASK_ID", "2").env("SLURM_ARRAY_TASK_MIN", "1");
            c.env("SLURM_ARRAY_TASK_COUNT", "3");
            c.args(["batch", "run", "--no-virus-check", "--json", "--out"]);
            c.args([out.to_str().unwrap(), harvests.to_str().unwrap()]).output().unwrap()
        } else {
            batch(&harvests, &out, &["--shard", &format!("{k}/3")])
        };
        let v = outcome(&o, 1);
        assert_eq!(v["manifest_items"].as_u64(), Some(28));
        assert_eq!(v["ignored"], serde_json::json!(["notes.txt"]));
        let journal = out.join(format!("batch-journal-{k}-of-3.sqlite"));
        let share: Vec<String> = rows(&journal).into_iter().map(|r| r.0).collect();
        assert_eq!(share.len() as u64, v["items"].as_u64().unwrap());
        assert!(!share.is_empty() && share.len() < 28, "shard {k}: {share:?}");
        keys.extend(share);
    }
    keys.sort();
    let mut want: Vec<String> = (0..24).map(|i| format!("empty-{i:02}")).collect();
    want.extend((0..4).map(|i| format!("crawl-{i}.arc")));
    want.sort();
    assert_eq!(keys, want);
    for i in 0..4 {
        assert!(out.join(format!("crawl-{i}/METS.xml")).is_file());
    }
}

/// A collection (manifest, harvests and output) moved to another folder resumes from its
/// journal: a manifest line naming its source by an absolute path inside the manifest's folder
/// is keyed relative to that folder, so the moved manifest (its paths rewritten) names the
/// same items, recorded done, and nothing is packaged again.
#[test]
fn a_collection_moved_elsewhere_resumes_from_its_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = sample("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    let write = |coll: &Path| {
        std::fs::create_dir_all(coll.join("harvests")).unwrap();
        let line = coll.join("harvests/crawl.arc");
        std::fs::write(coll.join("manifest.csv"), format!("{}\n", line.display())).unwrap();
        coll.join("manifest.csv")
    };
    let first = tmp.path().join("first");
    let csv = write(&first);
    std::fs::copy(&arc, first.join("harvests/crawl.arc")).unwrap();
    let o = outcome(&batch(&csv, &first.join("out"), &[]), 0);
    assert_eq!(o["packaged"].as_u64(), Some(1), "{o}");
    let keys = |coll: &Path| -> Vec<String> {
        rows(&coll.join("out/batch-journal.sqlite")).into_iter().map(|r| r.0).collect()
    };
    assert_eq!(keys(&first), ["harvests/crawl.arc"]);

    let moved = tmp.path().join("moved");
    crate::util::copy_tree(&first, &moved);
    std::fs::remove_dir_all(&first).unwrap();
    let csv = write(&moved);
    let o = outcome(&batch(&csv, &moved.join("out"), &[]), 0);
    assert_eq!((o["packaged"].as_u64(), o["skipped_done"].as_u64()), (Some(0), Some(1)), "{o}");
    assert_eq!(keys(&moved), ["harvests/crawl.arc"]);
}

/// A manifest named by its bare name from its own folder keys a line naming its source by an
/// absolute path inside that folder as it does when named `./m.csv`: relative to the folder.
#[test]
fn a_manifest_named_bare_keys_its_absolute_lines_relative_to_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let coll = tmp.path().canonicalize().unwrap();
    std::fs::create_dir(coll.join("harvests")).unwrap();
    let arc = sample("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    std::fs::copy(&arc, coll.join("harvests/crawl.arc")).unwrap();
    let line = coll.join("harvests/crawl.arc");
    std::fs::write(coll.join("m.csv"), format!("{}\n", line.display())).unwrap();
    let o = webaip_command()
        .current_dir(&coll)
        .args(["batch", "run", "--deterministic", "--no-virus-check", "--json"])
        .args(["--out", "out", "m.csv"])
        .output()
        .unwrap();
    assert_eq!(outcome(&o, 0)["packaged"].as_u64(), Some(1));
    let keys: Vec<String> =
        rows(&coll.join("out/batch-journal.sqlite")).into_iter().map(|r| r.0).collect();
    assert_eq!(keys, ["harvests/crawl.arc"]);
}

/// A journal written when an absolute line inside the manifest's folder was keyed as written
/// (earlier versions) resumes: its row is taken over under the relative key, and the item
/// recorded done is not packaged again.
#[test]
fn a_journal_keyed_by_absolute_lines_resumes_under_relative_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let coll = tmp.path();
    std::fs::create_dir(coll.join("harvests")).unwrap();
    let arc = sample("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    std::fs::copy(&arc, coll.join("harvests/crawl.arc")).unwrap();
    let line = coll.join("harvests/crawl.arc");
    let csv = coll.join("m.csv");
    std::fs::write(&csv, format!("{}\n", line.display())).unwrap();
    let out = coll.join("out");
    assert_eq!(outcome(&batch(&csv, &out, &[]), 0)["packaged"].as_u64(), Some(1));
    let journal = out.join("batch-journal.sqlite");
    // The row as the earlier version wrote it.
    let db = rusqlite::Connection::open(&journal).unwrap();
    let old = line.to_str().unwrap();
    db.execute("UPDATE items SET key = ?1", [old]).unwrap();
    drop(db);
    let o = outcome(&batch(&csv, &out, &[]), 0);
    assert_eq!((o["packaged"].as_u64(), o["skipped_done"].as_u64()), (Some(0), Some(1)), "{o}");
    let keys: Vec<String> = rows(&journal).into_iter().map(|r| r.0).collect();
    assert_eq!(keys, ["harvests/crawl.arc"]);
}

/// Directories of `out` that look like packages (visible, holding METS.xml).
fn complete_dirs(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("METS.xml").exists())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}

/// Runs killed with SIGKILL at random moments, then resumed, give the packages of an
/// uninterrupted run, byte for byte; after each kill no directory looks complete that the
/// journal does not record done.
#[test]
fn runs_killed_at_random_resume_to_the_packages_of_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let big = dir.join("bench-a.arc");
    let o = std::process::Command::new("python3")
        .arg(repo().join("scripts/gen_arc.py"))
        .args(["bench", big.to_str().unwrap(), "--size", "40M"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::copy(&big, dir.join("bench-b.arc")).unwrap();
    // The small items first, so that kills land on their commits and moves as well.
    let manifest = format!(
        "{}\n{}\nbench-a.arc\nbench-b.arc\n",
        sample("nedlib").display(),
        sample("kulturarw3").display()
    );
    let csv = dir.join("m.csv");
    std::fs::write(&csv, manifest).unwrap();
    let reference = dir.join("reference");
    let whole = outcome(&batch(&csv, &reference, &[]), 0);
    assert_eq!(whole["packaged"].as_u64(), Some(4));
    let want = rows(&reference.join("batch-journal.sqlite"));

    let out = dir.join("killed");
    let journal = out.join("batch-journal.sqlite");
    let seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos()
            as u64;
    let mut delays = Vec::new();
    for trial in 0..6u64 {
        let delay = 150
            + (seed.wrapping_mul(6364136223846793005).wrapping_add(trial * 1442695040888963407)
                >> 33)
                % 2400;
        delays.push(delay);
        let mut c = webaip_command();
        c.args(["batch", "run", "--deterministic", "--no-virus-check", "-q", "-j", "2", "--out"]);
        c.args([out.to_str().unwrap(), csv.to_str().unwrap()]);
        let mut child = c.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        child.kill().unwrap();
        child.wait().unwrap();
        if !journal.exists() {
            continue;
        }
        let done: Vec<PathBuf> = rows(&journal)
            .into_iter()
            .filter(|r| r.1 == "done")
            .map(|r| PathBuf::from(r.0))
            .collect();
        for d in complete_dirs(&out) {
            let named = |p: &PathBuf| p.file_stem().is_some_and(|s| s.to_string_lossy() == d);
            assert!(done.iter().any(named), "after a kill at {delay} ms: {d} complete, not done");
        }
    }
    let resumed = outcome(&batch(&csv, &out, &[]), 0);
    let got = rows(&journal);
    let strip = |v: &[(String, String, String, String)]| {
        v.iter().map(|r| (r.0.clone(), r.1.clone(), r.2.clone())).collect::<Vec<_>>()
    };
    assert_eq!(strip(&got), strip(&want), "kills after {delays:?} ms; {resumed}");
    for name in ["bench-a", "bench-b", "nedlib", "kulturarw3"] {
        let a = std::fs::read(reference.join(name).join("METS.xml")).unwrap();
        let b = std::fs::read(out.join(name).join("METS.xml")).unwrap();
        assert!(a == b, "{name}: METS differs after kills at {delays:?} ms");
    }
    // Nothing is left in the work folder.
    let left: Vec<_> = std::fs::read_dir(out.join(".batch-work")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A manifest whose metadata column names `/dev/zero` or a FIFO: those items fail as
/// "metadata", naming the file and what it is; the other item is packaged. Before, the first
/// filled memory until the whole batch died and the second blocked it for ever. Run with an
/// address-space limit (an unbounded read aborts instead of filling the machine) and a deadline.
#[test]
fn metadata_that_is_a_device_or_a_fifo_fails_only_its_item() {
    use crate::fuzz::child::{Outcome, launch_webaip_limited};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fifo = dir.join("fifo.toml");
    rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from(0o600)).unwrap();
    let s = |rel: &str| sample(rel).display().to_string();
    let manifest = format!(
        "{},/dev/zero\n{},{}\n{}\n",
        s("heritrix-job"),
        s("nedlib"),
        fifo.display(),
        s("kulturarw3")
    );
    let csv = dir.join("manifest.csv");
    std::fs::write(&csv, manifest).unwrap();
    let out = dir.join("out");
    let args = ["batch", "run", "--deterministic", "--no-virus-check", "-j", "2", "--out"];
    let mut args: Vec<&str> = args.to_vec();
    args.extend([out.to_str().unwrap(), csv.to_str().unwrap()]);
    let deadline = std::time::Duration::from_secs(60);
    let run = launch_webaip_limited(&args, dir, Some(2 << 30), deadline);
    assert_ne!(run.status, Outcome::TimedOut, "the batch blocked: {}", run.stderr);
    assert_eq!(run.status, Outcome::Exited(1), "{}", run.stderr);
    let rows = rows(&out.join("batch-journal.sqlite"));
    let row = |key: String| rows.iter().find(|r| r.0 == key).cloned().unwrap();
    let (_, state, kind, error) = row(s("heritrix-job"));
    assert_eq!((state.as_str(), kind.as_str()), ("failed", "metadata"), "{error}");
    assert!(error.contains("/dev/zero: is a character device"), "{error}");
    let (_, state, kind, error) = row(s("nedlib"));
    assert_eq!((state.as_str(), kind.as_str()), ("failed", "metadata"), "{error}");
    assert!(error.contains(&format!("{}: is a FIFO", fifo.display())), "{error}");
    assert_eq!(row(s("kulturarw3")).1, "done");
    assert!(out.join("kulturarw3/METS.xml").is_file());
}
