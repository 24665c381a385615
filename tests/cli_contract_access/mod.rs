//! The command-line contract of `index`, `get`, `dedup-table`, `undedup`, `unmigrate`,
//! `batch run` and `batch status`, on the committed sample ARC and what webaip makes of it:
//! `--json` prints one JSON object, `-q` prints nothing on success (but the product going to
//! standard output), and `--output`, the old spelling of `-o/--out`, still works with a
//! deprecation line.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{sample, webaip_command};

/// The plain sample ARC (2 KB, three captures).
const ARC: &str = "heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc";
/// A capture of it.
const URL: &str = "http://www.example.org/verein.html";

fn run(dir: &Path, args: &[&str]) -> Output {
    webaip_command().current_dir(dir).args(args).output().expect("webaip runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The one JSON object a successful run printed on standard output.
fn one_object(o: &Output) -> serde_json::Map<String, serde_json::Value> {
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    match serde_json::from_slice(&o.stdout) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => panic!("not one JSON object: {}", text(&o.stdout)),
    }
}

/// A successful run that printed nothing at all.
fn silent(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty(), "stdout: {}", text(&o.stdout));
    assert!(o.stderr.is_empty(), "stderr: {}", text(&o.stderr));
}

/// A successful run under an old spelling: the deprecation line names it.
fn deprecated(o: &Output, old: &str) {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = format!("`{old}` is deprecated and will be removed; use `--out`");
    assert!(text(&o.stderr).contains(&said), "{}", text(&o.stderr));
}

/// The sample ARC migrated into `dir/w/`: the WARC's path.
fn migrated(dir: &Path) -> PathBuf {
    let o = run(dir, &["migrate", "-q", "-o", "w", sample(ARC).to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let warc = std::fs::read_dir(dir.join("w")).unwrap().next().unwrap().unwrap().path();
    assert!(warc.to_str().unwrap().ends_with(".warc.gz"), "{}", warc.display());
    warc
}

/// The sample ARC packaged (without a virus check) as `dir/NAME`.
fn packaged(dir: &Path, name: &str) -> PathBuf {
    let args = ["package", "--no-virus-check", "--deterministic", "-q", "--out", name];
    let o = run(dir, &[&args[..], &[sample(ARC).to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    dir.join(name)
}

#[test]
fn index_keeps_the_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let warc = migrated(tmp.path());
    let w = warc.parent().unwrap();
    let name = warc.file_name().unwrap().to_str().unwrap();

    let report = one_object(&run(w, &["index", "--json", "-o", "all.cdxj", name]));
    assert_eq!(report["format"], "cdxj");
    assert_eq!(report["containers"], 1);
    assert_eq!(report["files"], serde_json::json!(["all.cdxj"]));
    let index = std::fs::read_to_string(w.join("all.cdxj")).unwrap();
    assert!(index.contains(URL), "{index}");

    silent(&run(w, &["index", "-q", "-o", "quiet.cdxj", name]));
    assert_eq!(std::fs::read_to_string(w.join("quiet.cdxj")).unwrap(), index);
    // Without -o the index is the product on standard output, even with -q.
    let o = run(w, &["index", "-q", name]);
    assert_eq!(
        (o.status.code(), text(&o.stdout), text(&o.stderr)),
        (Some(0), index.clone(), "".into())
    );

    let o = run(w, &["index", "--output", "old.cdxj", name]);
    deprecated(&o, "--output");
    assert_eq!(std::fs::read_to_string(w.join("old.cdxj")).unwrap(), index);
    let o = run(w, &["index", "--output=eq.cdxj", name]);
    deprecated(&o, "--output");
    assert!(w.join("eq.cdxj").is_file());

    // The JSON report and an index on standard output would mix: refused, nothing printed.
    let o = run(w, &["index", "--json", name]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
}

#[test]
fn get_keeps_the_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let warc = migrated(tmp.path());
    let w = warc.parent().unwrap();
    let name = warc.file_name().unwrap().to_str().unwrap();
    assert_eq!(run(w, &["index", "-q", "-o", "all.cdxj", name]).status.code(), Some(0));

    let got = one_object(&run(w, &["get", "--json", "-o", "page", "--index", "all.cdxj", URL]));
    let page = std::fs::read(w.join("page")).unwrap();
    assert!(text(&page).contains("<html"), "{}", text(&page));
    assert_eq!(got["warc_type"], "response");
    assert_eq!(got["url"], URL);
    assert_eq!(got["part"], "payload");
    assert_eq!(got["written"], page.len());
    assert_eq!(got["digest_verified"], true);
    assert!(got["revisit_of"].is_null());

    // -q: the payload on standard output, and nothing else.
    let o = run(w, &["get", "-q", "--index", "all.cdxj", URL]);
    assert_eq!((o.status.code(), &o.stdout, text(&o.stderr)), (Some(0), &page, "".into()));
    silent(&run(w, &["get", "-q", "-o", "quiet", "--index", "all.cdxj", URL]));
    assert_eq!(std::fs::read(w.join("quiet")).unwrap(), page);

    let o = run(w, &["get", "--output", "old", "--index", "all.cdxj", URL]);
    deprecated(&o, "--output");
    assert_eq!(std::fs::read(w.join("old")).unwrap(), page);

    // An error: text on stderr, exit 2, nothing on stdout (no file either).
    let o = run(w, &["get", "--json", "-o", "none", "--index", "all.cdxj", "http://nowhere.test/"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("no capture of http://nowhere.test/"), "{}", text(&o.stderr));
    assert!(!w.join("none").exists());
}

#[test]
fn dedup_table_undedup_and_unmigrate_keep_the_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    packaged(d, "pkg");

    let table = one_object(&run(d, &["dedup-table", "--json", "-o", "t.digests", "pkg"]));
    assert_eq!(table["table"], "t.digests");
    assert_eq!(table["payloads"], 3, "{table:?}");
    assert!(d.join("t.digests").is_file());
    silent(&run(d, &["dedup-table", "-q", "-o", "q.digests", "pkg"]));
    assert_eq!(
        std::fs::read(d.join("q.digests")).unwrap(),
        std::fs::read(d.join("t.digests")).unwrap()
    );

    let back = one_object(&run(d, &["unmigrate", "--json", "-o", "back", "pkg"]));
    assert_eq!(back["arcs"].as_array().map(Vec::len), Some(1), "{back:?}");
    assert_eq!(back["arcs"][0]["name"], Path::new(ARC).file_name().unwrap().to_str().unwrap());
    assert_eq!(back["written"].as_array().map(Vec::len), Some(1), "{back:?}");
    let arc_name = Path::new(ARC).file_name().unwrap();
    assert_eq!(
        std::fs::read(d.join("back").join(arc_name)).unwrap(),
        std::fs::read(sample(ARC)).unwrap()
    );
    silent(&run(d, &["unmigrate", "-q", "-o", "back2", "pkg"]));
    assert!(d.join("back2").join(arc_name).is_file());

    // A package without revisits, restored against itself: packaged again.
    let again = one_object(&run(d, &["undedup", "--json", "pkg", "--with", "pkg", "-o", "again"]));
    assert!(again["packages"][0].get("objid").is_some(), "{again:?}");
    assert!(d.join("again/METS.xml").is_file());
    silent(&run(d, &["undedup", "-q", "pkg", "--with", "pkg", "-o", "quiet"]));
    assert!(d.join("quiet/METS.xml").is_file());
}

#[test]
fn batch_run_and_status_keep_the_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("items")).unwrap();
    let arc_name = Path::new(ARC).file_name().unwrap();
    std::fs::copy(sample(ARC), d.join("items").join(arc_name)).unwrap();
    let args =
        ["batch", "run", "--no-virus-check", "--deterministic", "-j", "1", "--min-free", "0"];

    let outcome = one_object(&run(d, &[&args[..], &["--json", "-o", "out", "items"]].concat()));
    assert_eq!(
        (&outcome["items"], &outcome["packaged"], &outcome["failed"]),
        (&1.into(), &1.into(), &0.into())
    );
    silent(&run(d, &[&args[..], &["-q", "-o", "quiet", "items"]].concat()));
    let quiet = one_object(&run(d, &["batch", "status", "--json", "quiet/batch-journal.sqlite"]));
    assert_eq!(quiet["total"]["done"], 1, "{quiet:?}");

    let journal = "out/batch-journal.sqlite";
    let status = one_object(&run(d, &["batch", "status", "--json", journal]));
    assert_eq!((&status["total"]["items"], &status["total"]["done"]), (&1.into(), &1.into()));
    assert_eq!(status["journals"].as_array().map(Vec::len), Some(1));
    silent(&run(d, &["batch", "status", "-q", journal]));
}

/// Runs the example `name` of `examples/` with `args` (built by `cargo build --examples`).
fn example(name: &str, args: &[&Path]) -> Output {
    let o = std::process::Command::new(crate::facade::example(name))
        .args(args)
        .env_remove("WEBAIP_CLAMD")
        .output()
        .expect("example runs");
    assert_eq!(o.status.code(), Some(0), "{name}: {}{}", text(&o.stdout), text(&o.stderr));
    o
}

/// The examples of the calls behind these commands (`get_record_into`, `unmigrate`,
/// `run_batch` and `batch_status`) do what the commands do: the payload `get` prints, the
/// ARC back byte for byte, the item packaged and its journal row done.
#[test]
fn the_examples_of_these_calls_do_what_the_commands_do() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let warc = migrated(d);
    let w = warc.parent().unwrap();
    let name = warc.file_name().unwrap().to_str().unwrap();
    assert_eq!(run(w, &["index", "-q", "-o", "all.cdxj", name]).status.code(), Some(0));
    let o = example("get", &[&w.join("all.cdxj"), Path::new(URL), &d.join("page")]);
    assert!(text(&o.stdout).contains("digest verified true"), "{}", text(&o.stdout));
    let cli = run(w, &["get", "-q", "--index", "all.cdxj", URL]);
    assert_eq!(std::fs::read(d.join("page")).unwrap(), cli.stdout);

    let pkg = packaged(d, "pkg");
    let o = example("unmigrate", &[&d.join("back"), &pkg]);
    let arc_name = Path::new(ARC).file_name().unwrap();
    assert_eq!(text(&o.stdout), format!("OK {}\n", arc_name.to_str().unwrap()));
    assert_eq!(
        std::fs::read(d.join("back").join(arc_name)).unwrap(),
        std::fs::read(sample(ARC)).unwrap()
    );

    std::fs::create_dir(d.join("items")).unwrap();
    std::fs::copy(sample(ARC), d.join("items").join(arc_name)).unwrap();
    let o = example("batch", &[&d.join("items"), &d.join("out")]);
    assert_eq!(text(&o.stdout), "packaged 1, failed 0\njournal: 1 done of 1\n");
}
