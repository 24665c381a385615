//! `report --store` of an OCFL store that `store check` checked, one of whose objects holds
//! an AIP kept as a later version of its submission's object: the checks are read (the oldest
//! across the configured replicas, and whether deep, as sqlite3 reads `object_check`), every
//! package is a row (the AIP's METS read from its version, each row's figures equal to lxml's
//! over the METS the inventories name), and a check that found problems is a finding, also
//! with `-q`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::collection::recount_with;
use super::{packaged, samples};
use crate::util::{report_of, webaip};

/// An OCFL store configuration of replicas `a` and `b` in `dir`.
pub(super) fn ocfl_store(dir: &Path) -> PathBuf {
    let config = dir.join("store.toml");
    let mut text = format!(
        "state = \"{}\"\n\n[user]\nname = \"webaip tests\"\naddress = \"mailto:tests@example.org\"\n",
        dir.join("state.sqlite").display()
    );
    for name in ["a", "b"] {
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nlayout = \"ocfl\"\nroot = \"{}\"\n",
            dir.join(name).display()
        ));
    }
    std::fs::write(&config, text).unwrap();
    config
}

/// The first sample put to an OCFL store, and its AIP made and stored by `ingest --store`
/// (its submission object's v2): the configuration, the sSIP's and the AIP's OBJIDs.
fn store_with_an_aip(dir: &Path) -> (PathBuf, String, String) {
    let samples = samples();
    let ssip = packaged(dir, samples[0].0, &samples[0].1);
    let config = ocfl_store(dir);
    let cfg = config.to_str().unwrap();
    let put = webaip(&["store", "--config", cfg, "--json", "put", ssip.to_str().unwrap()]);
    assert!(put.status.success(), "{}", String::from_utf8_lossy(&put.stderr));
    let aips = dir.join("aips");
    let argv = ["ingest", "--json", "--deterministic", "--store", cfg, ssip.to_str().unwrap()];
    let o = webaip(&[&argv[..], &["-o", aips.to_str().unwrap()]].concat());
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    let stored = &v["packages"][0]["stored"];
    let (aip, object) = (stored["package"].as_str(), stored["object"].as_str());
    assert_eq!(stored["version"], "v2", "{v:#}");
    (config, object.unwrap().to_string(), aip.unwrap().to_string())
}

/// `store check ARGS`: its exit status.
fn check(config: &Path, args: &[&str]) -> Option<i32> {
    let argv = [&["store", "--config", config.to_str().unwrap(), "check"][..], args].concat();
    webaip(&argv).status.code()
}

/// The recount of the store: its state database (sqlite3) and replica `a` (inventories as JSON).
fn recount(dir: &Path) -> (Value, Value) {
    let root = dir.join("a");
    let rc = recount_with(&[
        "--state".as_ref(),
        dir.join("state.sqlite").as_os_str(),
        "--ocfl".as_ref(),
        root.as_os_str(),
    ]);
    (rc["state"].clone(), rc["ocfl"][root.to_str().unwrap()].clone())
}

/// The oldest of an object's last checks on `a` and `b`, and whether both were deep.
fn oldest_check(state: &Value, dir: &str) -> (String, bool) {
    let checks = state["checks"][dir].as_object().unwrap_or_else(|| panic!("{state:#}"));
    assert_eq!(checks.len(), 2, "{checks:#?}");
    let oldest = checks.values().map(|c| c["at"].as_str().unwrap()).min().unwrap();
    (oldest.to_string(), checks.values().all(|c| c["deep"] == true))
}

#[test]
fn an_ocfl_store_report_reads_its_checks_and_lists_an_aip_kept_in_its_submissions_object() {
    let dir = tempfile::tempdir().unwrap();
    let (config, object, aip) = store_with_an_aip(dir.path());
    let cfg = config.to_str().unwrap();
    let r = report_of(&webaip(&["report", "--json", "--store", cfg]), 0);
    assert_eq!(r["store"]["never_checked"], 2, "not checked yet: {:#}", r["store"]);
    for (args, deep) in [(&["--deep"][..], true), (&[][..], false)] {
        assert_eq!(check(&config, args), Some(0));
        let (state, inventories) = recount(dir.path());
        let obj = &inventories[&object];
        let (oldest, both_deep) = oldest_check(&state, obj["dir"].as_str().unwrap());
        assert_eq!(both_deep, deep);
        let r = report_of(&webaip(&["report", "--json", "--store", cfg]), 0);
        let rows = r["packages"].as_array().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r["package"].as_str().unwrap()).collect();
        assert_eq!(names, [object.as_str(), aip.as_str()], "one row a package");
        // The object's row is its own package (v1), not the AIP its head is.
        let kept = &state["kept"][&aip];
        assert_eq!(kept["object"].as_str(), Some(object.as_str()), "{state:#}");
        let version = kept["version"].as_str().unwrap();
        assert_eq!(obj["head"].as_str(), Some(version));
        for (row, from) in [(&rows[0], "v1"), (&rows[1], version)] {
            assert!(row["not_read"].is_null(), "{row:#}");
            for key in ["objid", "records", "bytes", "files", "captured_first", "captured_last"] {
                assert_eq!(row[key], obj["versions"][from][key], "{}: {key}", row["package"]);
            }
            assert_eq!(row["ocfl"]["object"].as_str(), Some(object.as_str()), "{row:#}");
            assert_eq!(row["ocfl"]["version"].as_str(), Some(from), "{row:#}");
            assert_eq!(row["last_check"]["date"].as_str(), Some(oldest.as_str()), "{row:#}");
            assert_eq!(row["last_check"]["deep"], deep, "{row:#}");
            assert_eq!(row["last_check"]["outcome"], "no copy found bad", "{row:#}");
        }
        assert_eq!(rows[0]["objid"].as_str(), Some(object.as_str()));
        assert_eq!(rows[1]["objid"].as_str(), Some(aip.as_str()));
        assert_eq!(rows[0]["ocfl"]["head_package"].as_str(), Some(aip.as_str()), "{:#}", rows[0]);
        let s = &r["store"];
        assert_eq!((s["packages"].as_u64(), s["objects"].as_u64()), (Some(2), Some(1)), "{s:#}");
        assert_eq!(s["copies"], 2, "one object on each of two replicas: {s:#}");
        assert_eq!(s["never_checked"], 0, "{s:#}");
        assert_eq!(s["oldest_checks"][0]["checked"].as_str(), Some(oldest.as_str()), "{s:#}");
    }
}

/// A check that found a copy damaged (one byte of a container changed on `b`, its size kept)
/// is a finding of the report: exit 1, the row says so, and `-q` prints it.
#[test]
fn a_check_that_found_problems_is_a_finding_also_when_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let (config, object, _) = store_with_an_aip(dir.path());
    let cfg = config.to_str().unwrap();
    let warc = walkdir::WalkDir::new(dir.path().join("b"))
        .into_iter()
        .map(Result::unwrap)
        .map(|e| e.into_path())
        .find(|p| p.to_string_lossy().contains(".warc"))
        .expect("a container on b");
    let mut bytes = std::fs::read(&warc).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    std::fs::write(&warc, bytes).unwrap();
    assert_eq!(check(&config, &["--deep"]), Some(1), "the check finds it");
    let (state, inventories) = recount(dir.path());
    let on_b = &state["checks"][inventories[&object]["dir"].as_str().unwrap()]["b"];
    assert_eq!(on_b["outcome"], "problems", "{state:#}");
    let r = report_of(&webaip(&["report", "--json", "--store", cfg]), 1);
    for row in r["packages"].as_array().unwrap() {
        let outcome = row["last_check"]["outcome"].as_str().unwrap();
        assert!(outcome.contains("found problems"), "{row:#}");
    }
    assert_eq!(r["store"]["checks_found_problems"], 1, "{:#}", r["store"]);
    let page = dir.path().join("quiet.html");
    let q = webaip(&["report", "-q", "-o", page.to_str().unwrap(), "--store", cfg]);
    let out = String::from_utf8_lossy(&q.stdout);
    assert_eq!(q.status.code(), Some(1), "{out}");
    assert!(out.contains("a check found problems"), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(!out.contains("  "), "one line, no runs of spaces: {out}");
}

/// A store whose state database lost where the AIP is (the `ocfl_package` row a put killed
/// between its commit and its record never wrote): the AIP still has its row, found by the
/// message of the version holding it (as `store get` finds it) and marked "place not
/// recorded", and the submission's row is read from its own version, not the AIP's.
#[test]
fn an_aip_whose_place_the_database_lost_is_listed_from_its_versions_message() {
    let dir = tempfile::tempdir().unwrap();
    let (config, object, aip) = store_with_an_aip(dir.path());
    let cfg = config.to_str().unwrap();
    let db = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
    assert_eq!(db.execute("DELETE FROM ocfl_package", []).unwrap(), 1);
    let committed: String = db
        .query_row(
            "SELECT MAX(recorded_at) FROM ocfl_head WHERE identifier = ?1 AND head = 'v2'",
            [&object],
            |r| r.get(0),
        )
        .unwrap();
    drop(db);
    let (state, inventories) = recount(dir.path());
    assert!(state["kept"].as_object().is_none_or(|k| k.is_empty()), "{state:#}");
    let obj = &inventories[&object];
    let head = obj["head"].as_str().unwrap();
    assert_eq!(head, "v2", "{obj:#}");
    let page = dir.path().join("page.html");
    let o = webaip(&["report", "--json", "-o", page.to_str().unwrap(), "--store", cfg]);
    let r = report_of(&o, 0);
    let rows = r["packages"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["package"].as_str().unwrap()).collect();
    assert_eq!(names, [object.as_str(), aip.as_str()], "the AIP is not left out");
    for (row, from) in [(&rows[0], "v1"), (&rows[1], head)] {
        assert!(row["not_read"].is_null(), "{row:#}");
        for key in ["objid", "records", "bytes", "files", "captured_first", "captured_last"] {
            assert_eq!(row[key], obj["versions"][from][key], "{}: {key}", row["package"]);
        }
        assert_eq!(row["ocfl"]["version"].as_str(), Some(from), "{row:#}");
    }
    // Accepted when the database recorded the head's commit (a date, never a version); the
    // AIP found only by its version's message has no record of being accepted.
    assert_eq!(rows[0]["accepted_at"].as_str(), Some(committed.as_str()), "{:#}", rows[0]);
    assert!(chrono::DateTime::parse_from_rfc3339(&committed).is_ok(), "{committed}");
    assert!(rows[1]["accepted_at"].is_null(), "{:#}", rows[1]);
    assert_eq!(rows[0]["ocfl"]["place_recorded"], true, "{:#}", rows[0]);
    assert_eq!(rows[1]["ocfl"]["place_recorded"], false, "{:#}", rows[1]);
    assert_eq!(rows[0]["ocfl"]["head_package"].as_str(), Some(aip.as_str()), "{:#}", rows[0]);
    assert_eq!(r["store"]["packages"], 2, "{:#}", r["store"]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("place not recorded").count(), 1, "the AIP's row says so");
    // A head one replica has no commit of (a put that ended incomplete) is not accepted.
    let db = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
    let one = "DELETE FROM ocfl_head WHERE identifier = ?1 AND head = 'v2' AND replica =
               (SELECT MIN(replica) FROM ocfl_head WHERE identifier = ?1 AND head = 'v2')";
    assert_eq!(db.execute(one, [&object]).unwrap(), 1);
    drop(db);
    let o = webaip(&["report", "--json", "-o", page.to_str().unwrap(), "--store", cfg]);
    // (Both replicas do hold v2: the report finds no problem, it only does not call the put
    // accepted.)
    let r = report_of(&o, 0);
    assert!(r["packages"][0]["accepted_at"].is_null(), "{:#}", r["packages"][0]);
}

/// A replica moved away, then `store check --deep`: every object's check on it found no
/// copy. The report dates that replica's check (it was checked, and found missing), never
/// calls the copies "never checked", and does not say every file was hashed.
#[test]
fn a_copy_the_last_check_found_missing_is_dated_and_not_called_hashed() {
    let dir = tempfile::tempdir().unwrap();
    let (config, object, _) = store_with_an_aip(dir.path());
    let cfg = config.to_str().unwrap();
    std::fs::rename(dir.path().join("b"), dir.path().join("b.gone")).unwrap();
    assert_eq!(check(&config, &["--deep"]), Some(1), "the check finds b's copy missing");
    let (state, _) = recount(dir.path());
    let dirs = state["checks"].as_object().unwrap();
    assert_eq!(dirs.len(), 1, "{state:#}");
    let checks = dirs.values().next().unwrap();
    assert_eq!(checks["b"]["outcome"], "problems", "{state:#}");
    assert_eq!((&checks["a"]["deep"], &checks["b"]["deep"]), (&true.into(), &true.into()));
    let oldest = [&checks["a"]["at"], &checks["b"]["at"]].map(|a| a.as_str().unwrap());
    let oldest = oldest.iter().min().unwrap().to_string();
    let page = dir.path().join("page.html");
    let o = webaip(&["report", "--json", "-o", page.to_str().unwrap(), "--store", cfg]);
    let r = report_of(&o, 1);
    let rows = r["packages"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{r:#}");
    for row in rows {
        let last = &row["last_check"];
        assert_eq!(last["date"].as_str(), Some(oldest.as_str()), "{row:#}");
        assert!(last["deep"] != true, "b's bytes were never hashed: {row:#}");
        assert_eq!(last["outcome"], "copies missing or corrupt", "{row:#}");
    }
    assert_eq!(rows[0]["package"].as_str(), Some(object.as_str()));
    let s = &r["store"];
    assert_eq!(s["never_checked"], 0, "{s:#}");
    assert_eq!(s["replicas"]["b"]["oldest_check"], checks["b"]["at"], "{s:#}");
    assert_eq!(s["replicas"]["a"]["oldest_check"], checks["a"]["at"], "{s:#}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("every file hashed"), "no row says every file hashed");
    assert!(!html.contains("store: never"), "no row's check is called never");
    assert!(!html.contains("never (a copy was not checked)"), "nor among the oldest checks");
    assert!(html.contains("0 packages with a copy never checked"), "the summary agrees");
}
