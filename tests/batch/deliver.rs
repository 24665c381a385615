//! `webaip batch run --store` and `--ingest`: packages put into a replicated store of file
//! system replicas (a put that fails, then succeeds on `--retry-failed` without rebuilding;
//! a batch packaged before and stored by a later run), and packages made AIPs.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::sha512_hex;

use super::{golden_mets, outcome, rows};
use crate::util::{sample, webaip};

/// `batch run --deterministic --no-virus-check --json -j 2 ARGS MANIFEST`.
fn run(manifest: &Path, args: &[&str]) -> Output {
    let mut all = vec!["batch", "run", "--deterministic", "--no-virus-check", "--json", "-j", "2"];
    all.extend_from_slice(args);
    all.push(manifest.to_str().unwrap());
    webaip(&all)
}

/// A store configuration of file system replicas `a` and `b` below `dir`.
fn fs_config(dir: &Path) -> PathBuf {
    let mut text = format!("state = \"{}\"\n", dir.join("state.sqlite").display());
    for name in ["a", "b"] {
        let root = dir.join(name);
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nroot = \"{}\"\n",
            root.display()
        ));
    }
    let path = dir.join("store.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `webaip store --config CONFIG --json ARGS`, exiting with `code`.
fn store(config: &Path, args: &[&str], code: i32) -> serde_json::Value {
    let mut all = vec!["store", "--config", config.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    outcome(&webaip(&all), code)
}

/// (package id, attempts, stored) of an item of a journal.
fn record(journal: &Path, key: &str) -> (String, i64, Option<String>) {
    let db = rusqlite::Connection::open(journal).unwrap();
    db.query_row(
        "SELECT coalesce(package_id, ''), attempts, stored FROM items WHERE key = ?1",
        [key],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

/// The manifest of the NEDLIB and Kulturarw3 samples (small, quick), in `dir`.
fn two_samples(dir: &Path) -> (PathBuf, [(String, &'static str); 2]) {
    let items = [
        (sample("nedlib").display().to_string(), "nedlib"),
        (sample("kulturarw3").display().to_string(), "kulturarw3"),
    ];
    let csv = dir.join("m.csv");
    std::fs::write(&csv, format!("{}\n{}\n", items[0].0, items[1].0)).unwrap();
    (csv, items)
}

/// Entries of a folder, by name.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Without --out, a put that cannot reach a replica fails its item (kind `store`) and keeps
/// the package in the work folder; `--retry-failed` puts that same package (not rebuilt: one
/// attempt), the journal records it stored, the local copy is removed, and the store checks
/// clean and gives back the golden package.
#[test]
fn store_without_out_retries_a_failed_put_and_keeps_no_local_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (csv, items) = two_samples(dir);
    let config = fs_config(dir);
    // Replica b's root is a file: nothing can be written there.
    std::fs::write(dir.join("b"), "not a folder").unwrap();
    let work = dir.join("work");
    let store_args = ["--work", work.to_str().unwrap(), "--store", config.to_str().unwrap()];
    let first = outcome(&run(&csv, &store_args), 1);
    assert_eq!((first["failed"].as_u64(), first["stored"].as_u64()), (Some(2), Some(0)), "{first}");
    let journal = work.join("batch-journal.sqlite");
    let db = rusqlite::Connection::open(&journal).unwrap();
    for (key, state, sha, error) in rows(&journal) {
        let kind: String = db
            .query_row("SELECT error_kind FROM items WHERE key = ?1", [&key], |r| r.get(0))
            .unwrap();
        assert_eq!((state.as_str(), kind.as_str()), ("failed", "store"), "{key}: {error}");
        // The webaip layout's put reports the replica it failed on; an OCFL put (the default)
        // fails naming the replica and the file.
        let on_b = error.contains("not accepted: failed on b") || error.contains("replica b: ");
        assert!(on_b, "{key}: {error}");
        // The package record is kept for the retry.
        assert_eq!(sha.len(), 128, "{key}");
    }
    assert_eq!(names(&work.join(".batch-work")), ["kulturarw3", "nedlib"]);
    let status = outcome(&webaip(&["batch", "status", "--json", journal.to_str().unwrap()]), 1);
    assert_eq!(
        (status["total"]["failed"].as_u64(), status["total"]["stored"].as_u64()),
        (Some(2), Some(0))
    );
    // Not retried without --retry-failed.
    let again = outcome(&run(&csv, &store_args), 1);
    assert_eq!(again["skipped_failed"].as_u64(), Some(2), "{again}");

    std::fs::remove_file(dir.join("b")).unwrap();
    std::fs::create_dir(dir.join("b")).unwrap();
    let mut retry = store_args.to_vec();
    retry.push("--retry-failed");
    let retried = outcome(&run(&csv, &retry), 0);
    assert_eq!(
        (retried["failed"].as_u64(), retried["stored"].as_u64()),
        (Some(0), Some(2)),
        "{retried}"
    );
    for (key, golden) in &items {
        let row = rows(&journal).into_iter().find(|r| r.0 == *key).unwrap();
        assert_eq!((row.1.as_str(), row.2.as_str()), ("done", golden_mets(golden).as_str()));
        let (id, attempts, stored) = record(&journal, key);
        assert_eq!(attempts, 1, "{key}: rebuilt instead of put again");
        assert!(stored.is_some(), "{key}");
        // The store gives back the golden package.
        let got = dir.join("got").join(golden);
        store(&config, &["get", &id, "--out", got.to_str().unwrap()], 0);
        let mets = std::fs::read(got.join("METS.xml")).unwrap();
        assert_eq!(sha512_hex(&mets), golden_mets(golden), "{key}");
    }
    // The store holds the only copy: nothing is left in the work folder, nothing moved out.
    assert!(names(&work.join(".batch-work")).is_empty());
    let moved: Vec<String> =
        names(&work).into_iter().filter(|n| !n.starts_with("batch-journal")).collect();
    assert_eq!(moved, [".batch-work"]);
    let check = store(&config, &["check", "--deep"], 0);
    // Packages in the webaip layout, objects in OCFL storage roots (the default).
    let held = check.get("packages").or(check.get("objects")).and_then(|n| n.as_u64());
    assert_eq!((check["clean"].as_bool(), held), (Some(true), Some(2)), "{check}");
    let text = webaip(&["batch", "status", journal.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("total: 2 item(s): 2 done (0 with findings, 2 stored)"), "{text}");
}

/// A batch packaged into --out without a store (as a run killed between `done` and the put
/// leaves it, one package not yet moved out of the work folder) is stored by a run with
/// --store: the packages are put as they are, not rebuilt, and kept in --out.
#[test]
fn a_batch_packaged_before_is_stored_by_a_later_run_without_rebuilding() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (csv, items) = two_samples(dir);
    let out = dir.join("out");
    let first = outcome(&run(&csv, &["--out", out.to_str().unwrap()]), 0);
    assert_eq!((first["packaged"].as_u64(), first["stored"].as_u64()), (Some(2), Some(0)));
    std::fs::rename(out.join("nedlib"), out.join(".batch-work/nedlib")).unwrap();
    let config = fs_config(dir);
    let args = ["--out", out.to_str().unwrap(), "--store", config.to_str().unwrap()];
    let second = outcome(&run(&csv, &args), 0);
    assert_eq!(
        (second["stored"].as_u64(), second["moved_into_place"].as_u64()),
        (Some(2), Some(1)),
        "{second}"
    );
    let journal = out.join("batch-journal.sqlite");
    for (key, golden) in &items {
        let (_, attempts, stored) = record(&journal, key);
        assert_eq!((attempts, stored.is_some()), (1, true), "{key}");
        let mets = std::fs::read(out.join(golden).join("METS.xml")).unwrap();
        assert_eq!(sha512_hex(&mets), golden_mets(golden), "{key}");
    }
    let check = store(&config, &["check", "--deep"], 0);
    // Packages in the webaip layout, objects in OCFL storage roots (the default).
    let held = check.get("packages").or(check.get("objects")).and_then(|n| n.as_u64());
    assert_eq!((check["clean"].as_bool(), held), (Some(true), Some(2)), "{check}");
    // Done and stored: a third run has nothing to do.
    let third = outcome(&run(&csv, &args), 0);
    assert_eq!((third["packaged"].as_u64(), third["skipped_done"].as_u64()), (Some(0), Some(2)));
}

/// With --ingest each package is made an AIP before it goes to --out and --store: the AIP is
/// what the journal records, what `audit --deep` finds intact in --out, and what the store
/// holds.
#[test]
fn ingest_makes_each_package_an_aip_before_it_is_kept_and_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (csv, items) = two_samples(dir);
    let out = dir.join("out");
    let config = fs_config(dir);
    let args = ["--out", out.to_str().unwrap(), "--store", config.to_str().unwrap(), "--ingest"];
    let o = outcome(&run(&csv, &args), 0);
    assert_eq!((o["packaged"].as_u64(), o["stored"].as_u64()), (Some(2), Some(2)), "{o}");
    let journal = out.join("batch-journal.sqlite");
    for (key, golden) in &items {
        let aip = out.join(golden);
        let mets = std::fs::read(aip.join("METS.xml")).unwrap();
        let text = String::from_utf8_lossy(&mets);
        assert!(text.contains("TYPE=\"AIP\""), "{key}: not an AIP");
        let row = rows(&journal).into_iter().find(|r| r.0 == *key).unwrap();
        assert_eq!(row.2, sha512_hex(&mets), "{key}: the journal records another METS");
        assert_ne!(row.2, golden_mets(golden), "{key}: the submission, not its AIP");
        let (id, _, _) = record(&journal, key);
        assert!(text.contains(&format!("OBJID=\"{id}\"")), "{key}: OBJID {id}");
        let audit = webaip(&["audit", "--deep", aip.to_str().unwrap()]);
        let said = String::from_utf8_lossy(&audit.stdout);
        assert!(audit.status.success() && said.contains(": INTACT:"), "{key}: {said}");
        let got = dir.join("got").join(golden);
        store(&config, &["get", &id, "--out", got.to_str().unwrap()], 0);
        assert_eq!(std::fs::read(got.join("METS.xml")).unwrap(), mets, "{key}");
    }
    let check = store(&config, &["check", "--deep"], 0);
    assert_eq!(check["clean"].as_bool(), Some(true), "{check}");
    // Nothing but the (empty) folder AIPs are made in is left in the work folder.
    assert_eq!(names(&out.join(".batch-work")), [".ingest"]);
    assert!(names(&out.join(".batch-work/.ingest")).is_empty());
}

/// With --out, a package whose put failed is kept in --out; retried by a run without a
/// store, it is recorded done as it is (neither rebuilt nor refused as `exists`).
#[test]
fn a_failed_put_retried_without_a_store_keeps_the_package_as_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (csv, items) = two_samples(dir);
    let config = fs_config(dir);
    std::fs::write(dir.join("b"), "not a folder").unwrap();
    let out = dir.join("out");
    let first = outcome(
        &run(&csv, &["--out", out.to_str().unwrap(), "--store", config.to_str().unwrap()]),
        1,
    );
    assert_eq!(first["failed"].as_u64(), Some(2), "{first}");
    let retried = outcome(&run(&csv, &["--out", out.to_str().unwrap(), "--retry-failed"]), 0);
    assert_eq!(
        (retried["packaged"].as_u64(), retried["failed"].as_u64()),
        (Some(2), Some(0)),
        "{retried}"
    );
    let journal = out.join("batch-journal.sqlite");
    for (key, golden) in &items {
        let (_, attempts, stored) = record(&journal, key);
        assert_eq!((attempts, stored), (1, None), "{key}");
        let mets = std::fs::read(out.join(golden).join("METS.xml")).unwrap();
        assert_eq!(sha512_hex(&mets), golden_mets(golden), "{key}");
    }
}
