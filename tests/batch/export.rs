//! `webaip batch run --export-wacz DIR --export-eark DIR`: every sample package exported as a
//! WACZ that py-wacz's `wacz validate` and `webaip validate` accept and as an E-ARK AIP that
//! eark-validator (offline) accepts; a rerun exports nothing again; an export that cannot be
//! written fails its item (kind `export`) and keeps the package, and `--retry-failed` exports
//! it without rebuilding it.

use std::path::{Path, PathBuf};

use super::{batch, outcome, rows, sample_key, sample_lines};
use crate::util::{eark_validator, wacz_validate, webaip};

/// `webaip validate`'s verdict line on a WACZ.
fn our_wacz_check(wacz: &Path) -> (i32, String) {
    let o = webaip(&["validate", wacz.to_str().unwrap()]);
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Files of a folder, by name (hidden ones too).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// (attempts, wacz, eark) of an item of a journal.
fn exports_of(journal: &Path, key: &str) -> (i64, Option<String>, Option<String>) {
    let db = rusqlite::Connection::open(journal).unwrap();
    db.query_row("SELECT attempts, wacz, eark FROM items WHERE key = ?1", [key], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
    .unwrap()
}

/// The manifest of every committed sample, in `dir`.
fn samples_manifest(dir: &Path) -> PathBuf {
    let csv = dir.join("samples.csv");
    let lines: Vec<String> = sample_lines().into_iter().map(|(l, _)| l).collect();
    std::fs::write(&csv, format!("source,metadata,options\n{}\n", lines.join("\n"))).unwrap();
    csv
}

/// The package folders a batch made in `out`.
const PACKAGES: [&str; 5] = ["20040517-1412", "heritrix-job", "kulturarw3", "mirror", "nedlib"];

#[test]
fn every_sample_is_exported_once_as_a_wacz_and_an_eark_aip_that_others_accept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let csv = samples_manifest(dir);
    let (out, wacz, eark) = (dir.join("out"), dir.join("wacz"), dir.join("eark"));
    // What a run killed in an E-ARK export left: a hidden partial export, and no output.
    std::fs::create_dir_all(eark.join(".nedlib.zip.eark-partial/nedlib.zip")).unwrap();
    let args = [
        "--export-wacz",
        wacz.to_str().unwrap(),
        "--export-eark",
        eark.to_str().unwrap(),
        "--eark-type",
        "aip",
    ];
    let first = outcome(&batch(&csv, &out, &args), 0);
    assert_eq!((first["packaged"].as_u64(), first["failed"].as_u64()), (Some(5), Some(0)));
    assert_eq!(
        (first["exported_wacz"].as_u64(), first["exported_eark"].as_u64()),
        (Some(5), Some(5)),
        "{first}"
    );
    let waczs: Vec<String> = PACKAGES.iter().map(|p| format!("{p}.wacz")).collect();
    assert_eq!(names(&wacz), waczs);
    let zips: Vec<String> = PACKAGES.iter().map(|p| format!("{p}.zip")).collect();
    assert_eq!(names(&eark), zips, "the partial export left by a killed run is gone");
    for p in PACKAGES {
        let w = wacz.join(format!("{p}.wacz"));
        let (ok, said) = wacz_validate(&w);
        assert!(ok, "{p}: wacz validate: {said}");
        let (code, said) = our_wacz_check(&w);
        assert!(code == 0 && said.contains(": VALID ("), "{p}: {said}");
        // The WACZ carries the package's METS as it is in --out.
        let mets = std::fs::read(out.join(p).join("METS.xml")).unwrap();
        let file = std::fs::File::open(&w).unwrap();
        let mut zip = zip::ZipArchive::new(file).unwrap();
        let mut member = zip.by_name("metadata/METS.xml").unwrap();
        let mut inside = Vec::new();
        std::io::Read::read_to_end(&mut member, &mut inside).unwrap();
        assert_eq!(inside, mets, "{p}");
        let (structure, errors) = eark_validator(&eark.join(format!("{p}.zip")));
        assert_eq!((structure.as_str(), errors), ("WellFormed", vec![]), "{p}");
    }
    let journal = out.join("batch-journal.sqlite");
    for (line, _) in sample_lines() {
        let key = sample_key(&line);
        let (attempts, w, e) = exports_of(&journal, &key);
        assert_eq!(attempts, 1, "{key}");
        let (w, e) = (PathBuf::from(w.unwrap()), PathBuf::from(e.unwrap()));
        assert!(w.is_absolute() && w.is_file() && e.is_file(), "{key}: {w:?} {e:?}");
    }

    // A rerun exports nothing again: every export is the file it was.
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before: Vec<u64> = waczs.iter().map(|n| inode(&wacz.join(n))).collect();
    let zips_before: Vec<u64> = zips.iter().map(|n| inode(&eark.join(n))).collect();
    let second = outcome(&batch(&csv, &out, &args), 0);
    assert_eq!((second["packaged"].as_u64(), second["skipped_done"].as_u64()), (Some(0), Some(5)));
    assert_eq!(before, waczs.iter().map(|n| inode(&wacz.join(n))).collect::<Vec<_>>());
    assert_eq!(zips_before, zips.iter().map(|n| inode(&eark.join(n))).collect::<Vec<_>>());

    // An export removed since is made again by the next run, the package not rebuilt.
    std::fs::remove_file(wacz.join("nedlib.wacz")).unwrap();
    let third = outcome(&batch(&csv, &out, &args), 0);
    assert_eq!((third["packaged"].as_u64(), third["skipped_done"].as_u64()), (Some(1), Some(4)));
    assert!(wacz_validate(&wacz.join("nedlib.wacz")).0);
    let nedlib = sample_key(&sample_lines()[3].0);
    assert_eq!(exports_of(&journal, &nedlib).0, 1, "rebuilt instead of exported");
}

/// The WACZ folder is a file: each item fails with kind `export` and the reason, its package
/// kept in --out with its record; a rerun does not retry it, `--retry-failed` (the folder
/// mended) exports it without rebuilding it.
#[test]
fn an_export_that_cannot_be_written_fails_its_item_and_keeps_the_package() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let items = [super::sample("nedlib"), super::sample("kulturarw3")];
    let csv = dir.join("m.csv");
    std::fs::write(&csv, format!("{}\n{}\n", items[0].display(), items[1].display())).unwrap();
    let (out, wacz, eark) = (dir.join("out"), dir.join("wacz"), dir.join("eark"));
    std::fs::write(&wacz, "not a folder").unwrap();
    let args = [
        "--export-wacz",
        wacz.to_str().unwrap(),
        "--export-eark",
        eark.to_str().unwrap(),
        "--eark-form",
        "folder",
    ];
    let first = outcome(&batch(&csv, &out, &args), 1);
    assert_eq!((first["packaged"].as_u64(), first["failed"].as_u64()), (Some(0), Some(2)));
    let journal = out.join("batch-journal.sqlite");
    for (key, state, sha, error) in rows(&journal) {
        assert_eq!(state, "failed", "{key}");
        assert_eq!(sha.len(), 128, "{key}: the package record is kept: {sha}");
        assert!(error.contains("WACZ export") && error.contains("wacz"), "{key}: {error}");
    }
    for entry in first["entries"].as_array().unwrap() {
        assert_eq!(entry["error_kind"].as_str(), Some("export"), "{entry}");
        // The E-ARK export, which could be written, was, and is recorded.
        assert!(entry["eark"].as_str().is_some(), "{entry}");
        assert!(entry["wacz"].is_null(), "{entry}");
    }
    for p in ["nedlib", "kulturarw3"] {
        let audit = webaip(&["audit", "--deep", out.join(p).to_str().unwrap()]);
        assert!(audit.status.success(), "{p}: {}", String::from_utf8_lossy(&audit.stdout));
        // E-ARK folders, as --eark-form folder asks.
        assert!(eark.join(p).join("METS.xml").is_file(), "{p}");
    }
    let text = webaip(&["batch", "status", journal.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("FAILED") && text.contains(": export: WACZ export"), "{text}");

    let again = outcome(&batch(&csv, &out, &args), 1);
    assert_eq!(again["skipped_failed"].as_u64(), Some(2), "{again}");
    std::fs::remove_file(&wacz).unwrap();
    let mut retry = args.to_vec();
    retry.push("--retry-failed");
    let eark_mets = std::fs::read(eark.join("nedlib/METS.xml")).unwrap();
    let retried = outcome(&batch(&csv, &out, &retry), 0);
    assert_eq!(
        (retried["packaged"].as_u64(), retried["exported_wacz"].as_u64()),
        (Some(2), Some(2)),
        "{retried}"
    );
    for item in &items {
        let (attempts, w, e) = exports_of(&journal, &item.display().to_string());
        assert_eq!(attempts, 1, "{}: rebuilt instead of exported", item.display());
        assert!(wacz_validate(Path::new(&w.unwrap())).0);
        assert!(e.is_some());
    }
    // The E-ARK export recorded before is not made again.
    assert_eq!(std::fs::read(eark.join("nedlib/METS.xml")).unwrap(), eark_mets);
    assert_eq!(names(&eark), ["kulturarw3", "nedlib"]);
}
