//! `webaip report` of a collection: several packaged samples, one with a damaged METS, a
//! batch journal with a failed item, a store with two replicas. Every number equals a recount
//! by other tools (`recount.py --collection`: lxml over each METS, sqlite3 over the journal
//! and the state database, the inventories of an OCFL store read as JSON); the page opens
//! offline in headless Chromium; `batch run --report` writes it (its page checked before the
//! run); hostile rows are named, never followed; a package named twice counts once; every
//! configured replica is counted; sums past 2^64 - 1 are capped and said, never wrapped.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{grouped, open_page, packaged, samples};
use crate::util::{copy_tree, oracle_python, repo, report_of, sample, webaip};

/// A collection: three packaged samples, a copy of one whose METS is cut short, a batch run
/// (one sample, one broken ARC) with its journal, and a store of two file system replicas
/// holding the first sample.
struct Collection {
    packages: Vec<PathBuf>,
    damaged: PathBuf,
    batch_out: PathBuf,
    journal: PathBuf,
    config: PathBuf,
    state: PathBuf,
}

fn collection(dir: &Path) -> Collection {
    let packages: Vec<PathBuf> =
        samples().iter().map(|(name, extra)| packaged(dir, name, extra)).collect();
    let damaged = dir.join("damaged");
    copy_tree(&packages[1], &damaged);
    let mets = std::fs::read(damaged.join("METS.xml")).unwrap();
    std::fs::write(damaged.join("METS.xml"), &mets[..mets.len() / 2]).unwrap();
    let batch_out = dir.join("batch");
    std::fs::write(dir.join("broken.arc"), b"filedesc://x 0.0.0.0 2004\ntruncated\x00\xff")
        .unwrap();
    let manifest = dir.join("manifest.csv");
    std::fs::write(&manifest, format!("{}/\nbroken.arc\n", sample("nedlib").display())).unwrap();
    let page = dir.join("batch.html");
    let run = webaip(&[
        "batch",
        "run",
        "--deterministic",
        "--no-virus-check",
        "--json",
        "-j",
        "2",
        "--report",
        page.to_str().unwrap(),
        "--out",
        batch_out.to_str().unwrap(),
        manifest.to_str().unwrap(),
    ]);
    let outcome = report_of(&run, 1);
    assert_eq!(outcome["report"]["written"], true, "{:#}", outcome["report"]);
    assert_eq!(outcome["report"]["packages"], 1, "{:#}", outcome["report"]);
    let html = std::fs::read_to_string(&page).expect("batch run --report wrote the page");
    assert!(html.contains("Batch items that failed") && html.contains("broken.arc"));
    let (config, state) = (dir.join("store.toml"), dir.join("state.sqlite"));
    let mut text = format!("state = \"{}\"\n", state.display());
    for name in ["disk1", "disk2"] {
        let root = dir.join(name);
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
            root.display()
        ));
    }
    std::fs::write(&config, text).unwrap();
    let put = webaip(&[
        "store",
        "--config",
        config.to_str().unwrap(),
        "--json",
        "put",
        packages[0].to_str().unwrap(),
    ]);
    assert!(put.status.success(), "{}", String::from_utf8_lossy(&put.stderr));
    let journal = batch_out.join("batch-journal.sqlite");
    Collection { packages, damaged, batch_out, journal, config, state }
}

/// The packages the collection's batch made (folders holding a METS).
fn done_packages(c: &Collection) -> impl Iterator<Item = PathBuf> {
    let found = std::fs::read_dir(&c.batch_out).unwrap().filter_map(|e| e.ok()).map(|e| e.path());
    found.filter(|p| p.join("METS.xml").is_file())
}

/// The one package the collection's batch made.
fn done_package(c: &Collection) -> PathBuf {
    done_packages(c).next().expect("the batch made one package")
}

fn recount(c: &Collection) -> Value {
    let mut cmd = Command::new(oracle_python());
    cmd.arg(repo().join("tests/report/recount.py")).arg("--collection");
    cmd.arg("--journal").arg(&c.journal).arg("--state").arg(&c.state);
    cmd.args(&c.packages);
    cmd.args(done_packages(c));
    let o = cmd.output().expect("recount.py runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("its JSON")
}

/// The row facts of each read row equal lxml's, the totals their sums, the journal's counts
/// and failures sqlite3's, the store's copies and oldest check sqlite3's; the page shows them.
#[test]
fn every_number_of_a_collection_equals_an_independent_recount() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let page = dir.path().join("collection.html");
    let mut argv: Vec<&str> = vec!["report", "--json", "--validate", "-o", page.to_str().unwrap()];
    argv.extend(c.packages.iter().map(|p| p.to_str().unwrap()));
    argv.extend([c.damaged.to_str().unwrap(), c.journal.to_str().unwrap()]);
    argv.extend(["--store", c.config.to_str().unwrap()]);
    let r = report_of(&webaip(&argv), 1);
    let rc = recount(&c);
    let html = std::fs::read_to_string(&page).unwrap();
    let rows = r["packages"].as_array().unwrap();
    // 3 folders, the damaged one, the journal's done item, the store's package.
    assert_eq!(rows.len(), 6, "{r:#}");
    // A row's package is its folder as given; the store's row is the first sample's.
    let first = c.packages[0].to_str().unwrap();
    let facts = |row: &Value| {
        let at = if row["origin"] == "store" { first } else { row["package"].as_str().unwrap() };
        rc["packages"].get(at).cloned().unwrap_or_else(|| panic!("no recount of {row:#}"))
    };
    let (mut records, mut bytes) = (0, 0);
    for row in rows.iter().filter(|r| r["not_read"].is_null()) {
        let want = facts(row);
        if !want["title"].as_str().unwrap().is_empty() {
            assert_eq!(row["title"], want["title"], "{}", row["package"]);
        }
        for key in ["objid", "records", "bytes", "files", "captured_first", "captured_last"] {
            assert_eq!(row[key], want[key], "{}: {key}", row["package"]);
        }
        assert_eq!(row["mets_valid"], true, "{row:#}");
        records += row["records"].as_u64().unwrap();
        bytes += row["bytes"].as_u64().unwrap();
        let cells = format!(
            r#"data-v="{}">{}</td>"#,
            row["records"],
            grouped(row["records"].as_u64().unwrap())
        );
        assert!(html.contains(&cells), "the page lacks {cells}");
        assert!(html.contains(&format!(r#"data-v="{}">"#, row["bytes"])));
    }
    let t = &r["totals"];
    assert_eq!(
        (t["packages"].as_u64(), t["read"].as_u64(), t["not_read"].as_u64()),
        (Some(6), Some(5), Some(1))
    );
    assert_eq!((t["records"].as_u64(), t["bytes"].as_u64()), (Some(records), Some(bytes)));
    let year_records: u64 =
        t["by_year"].as_array().unwrap().iter().map(|y| y["records"].as_u64().unwrap()).sum();
    assert_eq!(year_records, records, "every record is in a year");
    let damaged = rows.iter().find(|r| !r["not_read"].is_null()).unwrap();
    assert!(damaged["not_read"].as_str().unwrap().contains("METS.xml"), "{damaged:#}");
    assert!(html.contains("Not read: "));
    assert!(html.contains(">6 packages<"), "the packages card");
    assert_batch(&r["batch"], &rc["journals"][c.journal.to_str().unwrap()], &html);
    assert_store(&r["store"], &rc["state"], rows);
}

fn assert_batch(b: &Value, j: &Value, html: &str) {
    let counts = &b["counts"];
    assert_eq!(counts["items"], j["items"]);
    for state in ["done", "failed", "pending", "running"] {
        assert_eq!(
            counts[state].as_u64().unwrap(),
            j["counts"][state].as_u64().unwrap_or(0),
            "{state}"
        );
    }
    let ours: Vec<Value> = b["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| serde_json::json!([f["key"], f["kind"], f["reason"]]))
        .collect();
    assert_eq!(Value::Array(ours), j["failures"]);
    for f in j["failures"].as_array().unwrap() {
        let key = f[0].as_str().unwrap();
        assert!(html.contains(&format!("<tr><td>{key}<br>")), "the page lists the failed {key}");
    }
}

fn assert_store(s: &Value, st: &Value, rows: &[Value]) {
    assert_eq!(s["packages"], st["packages"]);
    assert_eq!(s["accepted"], st["accepted"]);
    for (name, want) in st["replicas"].as_object().unwrap() {
        for key in ["files", "ok", "missing", "corrupt"] {
            assert_eq!(s["replicas"][name][key], want[key], "{name}: {key}");
        }
    }
    assert_eq!(s["replicas"].as_object().unwrap().len(), 2, "two replicas");
    let oldest = &s["oldest_checks"][0];
    assert_eq!(st["oldest"][oldest["identifier"].as_str().unwrap()], oldest["checked"]);
    let stored = rows.iter().find(|r| r["origin"] == "store").unwrap();
    assert!(stored["not_read"].is_null(), "{stored:#}");
    assert_eq!(stored["replicas"].as_array().unwrap().len(), 2);
    assert!(!stored["accepted_at"].is_null());
}

/// The collection page opens offline in headless Chromium at 1280 and 400 pixels without an
/// error or a request, every table captioned, every chart titled, the packages table sorts.
#[test]
fn the_collection_page_opens_offline_in_a_browser_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let page = dir.path().join("collection.html");
    let mut argv: Vec<&str> = vec!["report", "-q", "-o", page.to_str().unwrap()];
    argv.extend(c.packages.iter().map(|p| p.to_str().unwrap()));
    argv.extend([c.damaged.to_str().unwrap(), c.journal.to_str().unwrap()]);
    argv.extend(["--store", c.config.to_str().unwrap()]);
    let o = webaip(&argv);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let artefacts = repo().join("target/test-artefacts");
    std::fs::create_dir_all(&artefacts).unwrap();
    let seen = open_page(&page, &artefacts.join("report-collection"));
    assert_eq!(seen["errors"], Value::Array(vec![]), "{seen:#}");
    assert_eq!(seen["requests"], Value::Array(vec![]), "{seen:#}");
    for width in ["1280", "400"] {
        let v = &seen["views"][width];
        let w: u64 = width.parse().unwrap();
        assert!(v["scrollWidth"].as_u64().unwrap() <= w, "at {width}: {v:#}");
        assert_eq!(v["h1"], 1);
        assert_eq!(v["tables"], v["captions"], "a table without a caption");
        assert_eq!(v["charts"], v["chartsTitled"], "a chart without a title");
        assert!(v["charts"].as_u64().unwrap() >= 3, "{v:#}");
        assert_eq!(v["sorted"], true, "{v:#}");
    }
}

/// A page `batch run --report` cannot write is warned of and named in the JSON; the run's
/// exit status stays the run's own.
#[test]
fn a_batch_report_that_cannot_be_written_is_warned_of_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("manifest.csv");
    std::fs::write(&manifest, format!("{}/\n", sample("nedlib").display())).unwrap();
    let page = dir.path().join("no/such/folder/page.html");
    let out = dir.path().join("out");
    let run = webaip(&[
        "batch",
        "run",
        "--deterministic",
        "--no-virus-check",
        "--json",
        "--report",
        page.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        manifest.to_str().unwrap(),
    ]);
    let outcome = report_of(&run, 0);
    assert_eq!(outcome["report"]["written"], false, "{:#}", outcome["report"]);
    assert!(outcome["report"]["error"].as_str().unwrap().contains("page.html"));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("warning") && err.contains("was not written"), "{err}");
}

/// A journal whose rows name a package outside its folder, a package folder whose METS is a
/// link or a FIFO, a title that is markup: each is a row or failure naming why, the run ends,
/// nothing outside the folder is read, and the page runs no script but its own.
#[test]
fn hostile_rows_are_named_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let outside = packaged(dir.path(), samples[0].0, &samples[0].1);
    let folder = dir.path().join("coll");
    std::fs::create_dir(&folder).unwrap();
    let good = folder.join("good");
    copy_tree(&outside, &good);
    let mets = std::fs::read_to_string(good.join("METS.xml")).unwrap();
    let hostile = "&lt;script&gt;document.title='owned'&lt;/script&gt;</mods:title>";
    let changed = mets.replace("Example Heritage Society website</mods:title>", hostile);
    assert_ne!(changed, mets, "the sample's title is where the test expects it");
    std::fs::write(good.join("METS.xml"), changed).unwrap();
    let linked = folder.join("linked");
    std::fs::create_dir_all(linked.join("content")).unwrap();
    std::os::unix::fs::symlink(outside.join("METS.xml"), linked.join("METS.xml")).unwrap();
    let fifo = folder.join("fifo");
    std::fs::create_dir_all(fifo.join("content")).unwrap();
    assert!(Command::new("mkfifo").arg(fifo.join("METS.xml")).status().unwrap().success());
    std::os::unix::fs::symlink(&outside, folder.join("dirlink")).unwrap();
    let journal = folder.join("journal.sqlite");
    let db = rusqlite::Connection::open(&journal).unwrap();
    db.execute_batch("CREATE TABLE items (key TEXT PRIMARY KEY NOT NULL, line INTEGER, source TEXT NOT NULL, package TEXT NOT NULL, state TEXT NOT NULL, package_id TEXT, size INTEGER, mets_sha512 TEXT, findings INTEGER NOT NULL DEFAULT 0, error_kind TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0, updated TEXT NOT NULL, stored TEXT, wacz TEXT, eark TEXT); PRAGMA user_version = 2;").unwrap();
    for (key, package) in [
        ("a", "good"),
        ("b", "../outside"),
        ("c", "linked"),
        ("d", "fifo"),
        ("e", "dirlink"),
        ("f", "gone"),
        ("g", ""),
    ] {
        db.execute("INSERT INTO items (key, source, package, state, updated) VALUES (?1, 'src', ?2, 'done', 'then')", [key, package]).unwrap();
    }
    drop(db);
    let page = dir.path().join("h.html");
    let r = report_of(
        &webaip(&["report", "--json", "-o", page.to_str().unwrap(), journal.to_str().unwrap()]),
        1,
    );
    let rows = r["packages"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["package"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name}: {r:#}"))
    };
    assert!(row("good")["not_read"].is_null());
    assert!(row("good")["title"].as_str().unwrap().starts_with("<script>"));
    for name in ["linked", "fifo", "dirlink", "gone"] {
        assert!(row(name)["not_read"].is_string(), "{name}: {:#}", row(name));
    }
    // The row outside the folder and the one naming no package (the folder itself) are
    // refused as rows, not read as packages.
    let bad: Vec<(Option<&str>, Option<&str>)> = r["batch"]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["key"].as_str(), f["kind"].as_str()))
        .collect();
    assert_eq!(bad, [(Some("b"), Some("unreadable row")), (Some("g"), Some("unreadable row"))]);
    assert_eq!(r["batch"]["bad_rows"], 2, "{r:#}");
    assert_eq!(rows.len(), 5, "no package row for either");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<script").count(), 1, "only the page's own script");
    assert!(html.contains("&lt;script&gt;document.title="));
}

/// The page never replaces what a collection reads: a file of a package the journal names, the
/// journal and its SQLite companions, the store's state database or a replica's files; and a
/// journal is only read (its bytes and schema version stay as they were, also when older).
#[test]
fn the_page_never_replaces_what_the_collection_reads_and_a_journal_is_only_read() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let done = done_package(&c);
    let journal = c.journal.to_str().unwrap();
    let config = c.config.to_str().unwrap();
    let mut wal = c.journal.clone().into_os_string();
    wal.push("-wal");
    let replica_mets = std::fs::read_dir(dir.path().join("disk1"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("the store holds a package");
    for (out, input) in [
        (done.join("METS.xml"), ["--json", journal]),
        (done.join("content/page.html"), ["--json", journal]),
        (c.journal.clone(), ["--json", journal]),
        (PathBuf::from(&wal), ["--json", journal]),
        (c.state.clone(), ["--store", config]),
        (replica_mets.join("page.html"), ["--store", config]),
    ] {
        let before = std::fs::read(&out).ok();
        let o = webaip(&["report", "-o", out.to_str().unwrap(), input[0], input[1]]);
        assert_eq!(o.status.code(), Some(2), "-o {}: {o:?}", out.display());
        let said = String::from_utf8_lossy(&o.stderr);
        // The WAL, absent while no connection is open, is refused by its name.
        assert!(
            said.contains("inside the input") || said.contains("beside the database"),
            "{said}"
        );
        assert_eq!(std::fs::read(&out).ok(), before, "{} changed", out.display());
    }
    // A journal of the first schema (no stored, wacz, eark columns) is read as it is.
    let old = dir.path().join("old");
    std::fs::create_dir(&old).unwrap();
    copy_tree(&done, &old.join("pkg"));
    let old_journal = old.join("journal.sqlite");
    let db = rusqlite::Connection::open(&old_journal).unwrap();
    db.execute_batch("CREATE TABLE items (key TEXT PRIMARY KEY NOT NULL, line INTEGER, source TEXT NOT NULL, package TEXT NOT NULL, state TEXT NOT NULL, package_id TEXT, size INTEGER, mets_sha512 TEXT, findings INTEGER NOT NULL DEFAULT 0, error_kind TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0, updated TEXT NOT NULL); INSERT INTO items (key, source, package, state, updated) VALUES ('k', 'src', 'pkg', 'done', 'then');").unwrap();
    drop(db);
    let bytes = std::fs::read(&old_journal).unwrap();
    let page = old.join("page.html");
    let r = report_of(
        &webaip(&["report", "--json", "-o", page.to_str().unwrap(), old_journal.to_str().unwrap()]),
        0,
    );
    assert_eq!(r["totals"]["read"], 1, "{r:#}");
    assert!(page.is_file());
    assert_eq!(std::fs::read(&old_journal).unwrap(), bytes, "the journal was written");
    let names: Vec<_> = std::fs::read_dir(&old).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 3, "nothing made beside the journal: {names:?}");
}

/// A METS whose files state sizes past 2^64 - 1 never makes a total wrap: the row's and the
/// collection's bytes are held at 2^64 - 1, said to be "at least", and the report has a
/// finding; the records, which do not pass it, equal lxml's recount.
#[test]
fn sizes_past_what_a_sum_holds_are_capped_and_said_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let pkg = packaged(dir.path(), samples[0].0, &samples[0].1);
    let mut hostile = Vec::new();
    let re = regex::Regex::new(r#"(<mets:file [^>]*SIZE=")\d+""#).unwrap();
    for name in ["h1", "h2"] {
        let to = dir.path().join(name);
        copy_tree(&pkg, &to);
        let mets = std::fs::read_to_string(to.join("METS.xml")).unwrap();
        let changed = re.replace_all(&mets, "${1}18446744073709551615\"");
        assert_ne!(changed, mets, "the sample's files state sizes");
        std::fs::write(to.join("METS.xml"), changed.as_bytes()).unwrap();
        hostile.push(to);
    }
    let page = dir.path().join("h.html");
    let (a, b) = (hostile[0].to_str().unwrap(), hostile[1].to_str().unwrap());
    let r = report_of(&webaip(&["report", "--json", "-o", page.to_str().unwrap(), a, b]), 1);
    let mut cmd = Command::new(oracle_python());
    cmd.arg(repo().join("tests/report/recount.py")).arg("--collection").args(&hostile);
    let o = cmd.output().expect("recount.py runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut records = 0;
    for row in r["packages"].as_array().unwrap() {
        let want = &rc["packages"][row["package"].as_str().unwrap()];
        assert!(want["bytes"].as_f64().unwrap() > u64::MAX as f64, "{want:#}");
        assert_eq!(row["bytes"].as_u64(), Some(u64::MAX), "{row:#}");
        assert_eq!(row["sums_capped"], serde_json::json!(["bytes"]), "{row:#}");
        assert_eq!(row["records"], want["records"]);
        records += want["records"].as_u64().unwrap();
    }
    let t = &r["totals"];
    assert_eq!(t["bytes"].as_u64(), Some(u64::MAX), "{t:#}");
    assert_eq!(t["records"].as_u64(), Some(records), "{t:#}");
    assert_eq!(t["sums_capped"], serde_json::json!(["bytes"]), "{t:#}");
    assert_eq!(t["packages_capped"], 2, "{t:#}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<p class=\"verdict\">at least "), "the Bytes card says at least");
    assert!(html.contains("not summable"), "a row says its bytes are not summable");
}

/// One package counts once however often it is named: the same journal twice, the journal
/// and its package's folder, a second journal holding the same items, a row naming a folder
/// another row names. The totals equal lxml's recount of the one package, the batch counts
/// sqlite3's of the one journal (each item once, as `batch status` counts), and the page
/// says what was named again.
#[test]
fn a_package_named_more_than_once_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let rc = recount(&c);
    let done = done_package(&c);
    let want = &rc["packages"][done.to_str().unwrap()];
    let counts = &rc["journals"][c.journal.to_str().unwrap()]["counts"];
    // A second journal beside the first with the same items, and one more naming the same
    // package folder.
    let second = c.batch_out.join("second.sqlite");
    let db = rusqlite::Connection::open(&c.journal).unwrap();
    db.execute("VACUUM INTO ?1", [second.to_str().unwrap()]).unwrap();
    drop(db);
    let db = rusqlite::Connection::open(&second).unwrap();
    let name = done.file_name().unwrap().to_str().unwrap();
    db.execute("INSERT INTO items (key, source, package, state, updated) VALUES ('k-dup', 'src', ?1, 'done', 'then')", [name]).unwrap();
    drop(db);
    let page = dir.path().join("dup.html");
    let (j, j2, folder) =
        (c.journal.to_str().unwrap(), second.to_str().unwrap(), done.to_str().unwrap());
    let r = report_of(
        &webaip(&["report", "--json", "-o", page.to_str().unwrap(), j, j, folder, j2]),
        1,
    );
    let t = &r["totals"];
    assert_eq!((t["packages"].as_u64(), t["read"].as_u64()), (Some(1), Some(1)), "{t:#}");
    assert_eq!(t["records"], want["records"], "{t:#}");
    assert_eq!(t["bytes"], want["bytes"], "{t:#}");
    assert_eq!(r["packages"].as_array().unwrap().len(), 1);
    let b = &r["batch"]["counts"];
    assert_eq!(b["done"].as_u64(), Some(counts["done"].as_u64().unwrap() + 1), "k-dup: {b:#}");
    assert_eq!(b["failed"], counts["failed"], "{b:#}");
    assert_eq!(r["batch"]["failures"].as_array().unwrap().len(), 1, "listed once: {r:#}");
    let again = &r["named_again"];
    // The journal again, the folder (named by the journal first), the second journal's row
    // of the same item and its k-dup row.
    assert_eq!((again["journals"].as_u64(), again["packages"].as_u64()), (Some(1), Some(3)));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Named more than once, read and counted once"), "the page says so");
}

/// `batch run --report FILE` refuses a FILE the page may not replace before the run starts
/// (a folder, a package's METS of an earlier run), not after it: nothing is packaged and the
/// journal is not touched.
#[test]
fn a_batch_report_page_that_would_replace_an_input_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let done = done_package(&c);
    for page in [c.batch_out.clone(), done.join("METS.xml")] {
        let mets_before = std::fs::read(done.join("METS.xml")).unwrap();
        let err = refused_before_the_run(dir.path(), &c, &page, &[]);
        assert!(err.contains("inside the input") || err.contains("not a regular file"), "{err}");
        assert_eq!(std::fs::read(done.join("METS.xml")).unwrap(), mets_before);
    }
}

/// `batch run --store X --report FILE` refuses a FILE inside a replica's root or over the
/// store's state database before the run, as `report --store` does: nothing is packaged, the
/// replica and the state database are as they were.
#[test]
fn a_batch_report_page_over_the_store_it_puts_to_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let disk = dir.path().join("disk1");
    let entries = |d: &Path| std::fs::read_dir(d).unwrap().count();
    let (disk_before, state_before) = (entries(&disk), std::fs::read(&c.state).unwrap());
    for page in [disk.join("report.html"), c.state.clone()] {
        let store = ["--store", c.config.to_str().unwrap()];
        let err = refused_before_the_run(dir.path(), &c, &page, &store);
        assert!(err.contains("inside the input"), "{err}");
        assert_eq!(entries(&disk), disk_before, "the replica as it was");
        assert_eq!(std::fs::read(&c.state).unwrap(), state_before, "the state database too");
    }
}

/// A page named as the state database's own files (SQLite's `-wal`, `-shm`, `-journal`,
/// webaip's locks) is refused by `report --store` and `batch run --store --report`, whether or
/// not that file exists now (SQLite makes and deletes them as connections come and go), also
/// when named through a link to the folder: a page renamed over one would be lost, or destroy
/// the records it holds.
#[test]
fn a_page_named_as_the_state_databases_files_is_refused_whether_they_exist_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let config = c.config.to_str().unwrap();
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(dir.path(), &alias).unwrap();
    let state_name = c.state.file_name().unwrap().to_string_lossy().into_owned();
    for suffix in ["-wal", "-shm", "-journal", ".migrate-lock", ".check-lock"] {
        for folder in [dir.path(), alias.as_path()] {
            let page = folder.join(format!("{state_name}{suffix}"));
            let before = std::fs::read(&page).ok();
            if suffix.starts_with('-') {
                assert!(before.is_none(), "{}: no connection is open", page.display());
            }
            let o = webaip(&["report", "-o", page.to_str().unwrap(), "--store", config]);
            let said = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "-o {}: {said}", page.display());
            assert!(said.contains("beside the database"), "{said}");
            assert_eq!(std::fs::read(&page).ok(), before, "{} changed", page.display());
            let err = refused_before_the_run(dir.path(), &c, &page, &["--store", config]);
            assert!(err.contains("beside the database"), "{err}");
            assert_eq!(std::fs::read(&page).ok(), before, "{} changed", page.display());
        }
    }
    // Another name in that folder is a page like any other.
    let page = dir.path().join("state-report.html");
    let o = webaip(&["report", "-o", page.to_str().unwrap(), "--store", config]);
    assert!(page.is_file(), "{o:?}");
}

/// `batch run --report PAGE EXTRA...` of the mirror sample into the collection's batch folder
/// is refused before the run: exit 2, no page, nothing packaged, the journal untouched. Its
/// standard error.
fn refused_before_the_run(dir: &Path, c: &Collection, page: &Path, extra: &[&str]) -> String {
    let manifest = dir.join("again.csv");
    std::fs::write(&manifest, format!("{}/\n", sample("mirror").display())).unwrap();
    let journal_before = std::fs::read(&c.journal).unwrap();
    let entries = |d: &Path| std::fs::read_dir(d).unwrap().count();
    let out_before = entries(&c.batch_out);
    let mut argv = vec!["batch", "run", "--deterministic", "--no-virus-check"];
    argv.extend_from_slice(extra);
    argv.extend(["--report", page.to_str().unwrap(), "--out", c.batch_out.to_str().unwrap()]);
    argv.push(manifest.to_str().unwrap());
    let run = webaip(&argv);
    let err = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(2), "{}: {err}", page.display());
    assert!(!err.contains("batch: report"), "{err}");
    assert_eq!(entries(&c.batch_out), out_before, "nothing packaged");
    assert_eq!(std::fs::read(&c.journal).unwrap(), journal_before, "the journal untouched");
    err
}

pub(super) fn recount_with(args: &[&std::ffi::OsStr]) -> Value {
    let mut cmd = Command::new(oracle_python());
    cmd.arg(repo().join("tests/report/recount.py")).arg("--collection").args(args);
    let o = cmd.output().expect("recount.py runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("its JSON")
}

/// The files below `root` named `name`.
fn files_named(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap()) {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                todo.push(e.path());
            } else if e.file_name() == name {
                found.push(e.path());
            }
        }
    }
    found
}

/// `report --store`: a configured replica that holds no copy is listed with every copy
/// missing (as many as sqlite3 counts the package's files), exit 1; a METS whose every copy
/// fails verification is said found bad by this report, never "no copy found bad".
#[test]
fn every_configured_replica_is_counted_and_copies_found_bad_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let c = collection(dir.path());
    let mut text = std::fs::read_to_string(&c.config).unwrap();
    text.push_str(&format!(
        "\n[[replica]]\nname = \"disk3\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
        dir.path().join("disk3").display()
    ));
    std::fs::write(&c.config, text).unwrap();
    let config = c.config.to_str().unwrap();
    let rc = recount_with(&["--state".as_ref(), c.state.as_os_str()]);
    let st = &rc["state"];
    let r = report_of(&webaip(&["report", "--json", "--store", config]), 1);
    let row = &r["packages"][0];
    let files = st["files"][row["objid"].as_str().unwrap()].as_u64().unwrap();
    assert!(files > 1, "{st:#}");
    let replicas = row["replicas"].as_array().unwrap();
    let names: Vec<&str> = replicas.iter().map(|c| c["replica"].as_str().unwrap()).collect();
    assert_eq!(names, ["disk1", "disk2", "disk3"], "{row:#}");
    assert_eq!(
        (replicas[2]["files"].as_u64(), replicas[2]["missing"].as_u64()),
        (Some(files), Some(files))
    );
    assert_eq!(row["without_copy"], serde_json::json!(["disk3"]), "{row:#}");
    let s = &r["store"];
    let recorded_missing: u64 =
        st["replicas"].as_object().unwrap().values().map(|v| v["missing"].as_u64().unwrap()).sum();
    assert_eq!(s["copies_missing"].as_u64(), Some(recorded_missing + files), "{s:#}");
    assert_ne!(row["last_check"]["outcome"], "no copy found bad", "{row:#}");
    // Every METS copy changed in place (same size): the fetch rejects each.
    let mut text = std::fs::read_to_string(&c.config).unwrap();
    text.truncate(text.find("\n[[replica]]\nname = \"disk3\"").unwrap());
    std::fs::write(&c.config, text).unwrap();
    for disk in ["disk1", "disk2"] {
        for mets in files_named(&dir.path().join(disk), "METS.xml") {
            let mut bytes = std::fs::read(&mets).unwrap();
            let at = bytes.len() / 2;
            bytes[at] ^= 0x20;
            std::fs::write(&mets, bytes).unwrap();
        }
    }
    let r = report_of(&webaip(&["report", "--json", "--store", config]), 1);
    let row = &r["packages"][0];
    assert!(row["not_read"].is_string(), "{row:#}");
    assert_eq!(row["mets_rejected"].as_array().unwrap().len(), 2, "{row:#}");
    assert_eq!(r["store"]["mets_rejected"], 2, "{:#}", r["store"]);
    assert!(row["last_check"]["outcome"].as_str().unwrap().contains("found bad by this report"));
}

/// `report --store` on an OCFL store reads its objects through the store: each object's row
/// equals lxml's recount of the METS its head holds (found by reading the inventories as
/// JSON); an object gone from one replica is a copy missing there, exit 1.
#[test]
fn an_ocfl_store_is_reported_object_by_object() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let pkg = packaged(dir.path(), samples[0].0, &samples[0].1);
    let config = super::stored::ocfl_store(dir.path());
    let cfg = config.to_str().unwrap();
    let put = webaip(&["store", "--config", cfg, "--json", "put", pkg.to_str().unwrap()]);
    assert!(put.status.success(), "{}", String::from_utf8_lossy(&put.stderr));
    let rc = recount_with(&["--ocfl".as_ref(), dir.path().join("a").as_os_str()]);
    let objects = rc["ocfl"][dir.path().join("a").to_str().unwrap()].as_object().unwrap();
    assert_eq!(objects.len(), 1, "{rc:#}");
    let (id, want) = objects.iter().next().unwrap();
    let page = dir.path().join("ocfl.html");
    let r =
        report_of(&webaip(&["report", "--json", "-o", page.to_str().unwrap(), "--store", cfg]), 0);
    assert_eq!(r["totals"]["packages"], 1, "{r:#}");
    let row = &r["packages"][0];
    assert!(row["not_read"].is_null(), "{row:#}");
    assert_eq!(row["package"].as_str(), Some(id.as_str()));
    for key in ["objid", "records", "bytes", "files", "captured_first", "captured_last"] {
        assert_eq!(row[key], want["row"][key], "{key}");
    }
    let ok: Vec<u64> =
        row["replicas"].as_array().unwrap().iter().map(|c| c["ok"].as_u64().unwrap()).collect();
    assert_eq!(ok, [1, 1], "{row:#}");
    assert_eq!(r["store"]["layout"], "ocfl");
    // The object gone from b: a copy missing there; the METS still comes from a.
    let object =
        files_named(&dir.path().join("b"), "0=ocfl_object_1.1")[0].parent().unwrap().to_path_buf();
    std::fs::remove_dir_all(&object).unwrap();
    let r = report_of(&webaip(&["report", "--json", "--store", cfg]), 1);
    let row = &r["packages"][0];
    assert!(row["not_read"].is_null(), "{row:#}");
    assert_eq!(row["replicas"][1]["missing"], 1, "{row:#}");
    assert_eq!(row["without_copy"], serde_json::json!(["b"]), "{row:#}");
    assert_eq!(r["store"]["copies_missing"], 1, "{:#}", r["store"]);
}
