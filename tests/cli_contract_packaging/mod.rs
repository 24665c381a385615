//! The command-line contract (docs/guide.md, "The command line") kept by `package`, `migrate`,
//! `scan`, `validate` and `pages`, on the committed samples: `--json` prints one JSON object
//! (with its `kind` where the shape differs by source), `-q` prints nothing on success, and
//! `--help` ends with an example of the JSON.

use std::path::Path;
use std::process::Output;

use crate::util::{Package, package, sample, sample_arg, webaip};

/// The one JSON object on standard output; fails unless stdout is exactly one object.
fn one_object(o: &Output) -> serde_json::Map<String, serde_json::Value> {
    let text = String::from_utf8_lossy(&o.stdout);
    let mut docs = serde_json::Deserializer::from_slice(&o.stdout).into_iter::<serde_json::Value>();
    let first = docs.next().unwrap_or_else(|| panic!("no JSON: {text}"));
    let first = first.unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert!(docs.next().is_none(), "more than one JSON document: {text}");
    match first {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other:#}"),
    }
}

/// A run that succeeded (exit 0) without a byte on stdout or stderr.
fn assert_silent(what: &str, o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty(), "{what}: stdout {}", String::from_utf8_lossy(&o.stdout));
    assert!(o.stderr.is_empty(), "{what}: stderr {}", String::from_utf8_lossy(&o.stderr));
}

/// The object's keys, sorted.
fn keys(map: &serde_json::Map<String, serde_json::Value>) -> Vec<&str> {
    let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

/// `package --json` is one object of the same keys for a single-package source (a Heritrix
/// job), a mirror and a PANDAS instance; `kind` names the source. `-q` prints nothing.
#[test]
fn package_json_has_one_shape_and_quiet_is_silent() {
    let t = tempfile::tempdir().unwrap();
    let sources = [("heritrix-job", "heritrix1"), ("mirror", "mirror"), ("pandas/40123", "pandas")];
    for (name, kind) in sources {
        let extra = ["--capture-date", "2024-01-02"];
        let out = t.path().join(name.replace('/', "-"));
        let run = package(Package::new().json().args(&extra), &out, &[&sample(name)]);
        assert!(run.status().is_some_and(|c| c <= 1), "{name}: {}", run.stderr());
        let v = one_object(&run.output);
        assert_eq!(keys(&v), ["kind", "mirror", "packages"], "{name}");
        assert_eq!(v["kind"], kind, "{name}");
        assert_eq!(v["mirror"].is_object(), kind == "mirror", "{name}");
        let packages = v["packages"].as_array().unwrap();
        assert_eq!(packages.len(), 1, "{name}");
        assert!(packages[0]["objid"].is_string(), "{name}");
    }
    let out = t.path().join("quiet");
    let o = Package::new().quiet().run(&out, &sample("heritrix-job"));
    assert_silent("package -q", &o);
    assert!(out.join("METS.xml").is_file());
}

/// `migrate --json` is one object (the report), `-q` prints nothing; `--report -` still
/// prints the same report.
#[test]
fn migrate_json_is_one_object_and_quiet_is_silent() {
    let t = tempfile::tempdir().unwrap();
    let arc = sample_arg("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    let dir = |d: &str| t.path().join(d).display().to_string();
    let o = webaip(&["migrate", "--json", "--deterministic", "-o", &dir("j"), &arc]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = one_object(&o);
    assert_eq!(v["files"].as_array().map(Vec::len), Some(1), "{v:?}");
    assert_eq!(v["summary"]["files_ok"], 1, "{v:?}");
    let o = webaip(&["migrate", "--report", "-", "--deterministic", "-o", &dir("r"), &arc]);
    let again = one_object(&o);
    assert_eq!(again["files"][0]["output_sha512"], v["files"][0]["output_sha512"], "{again:?}");
    let o = webaip(&["migrate", "-q", "-o", &dir("q"), &arc]);
    assert_silent("migrate -q", &o);
    assert!(t.path().join("q").read_dir().unwrap().count() == 1, "the WARC is written");
}

/// `validate --json` is one object (`kind`, `valid`, `reports`) whatever the inputs' number;
/// `-q` prints nothing for a valid document and names an invalid one on stderr only.
#[test]
fn validate_json_is_one_object_and_quiet_is_silent() {
    let t = tempfile::tempdir().unwrap();
    let pkg = t.path().join("pkg");
    Package::new().quiet().succeeds(&pkg, &sample("heritrix-job"));
    let mets = pkg.join("METS.xml").display().to_string();
    let o = webaip(&["validate", "--json", &mets, &mets]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = one_object(&o);
    assert_eq!(keys(&v), ["kind", "reports", "valid"]);
    assert_eq!((&v["kind"], &v["valid"]), (&"mets".into(), &true.into()));
    assert_eq!(v["reports"].as_array().map(Vec::len), Some(2));
    assert_silent("validate -q", &webaip(&["validate", "-q", &mets]));

    let bad = t.path().join("bad.xml");
    std::fs::write(&bad, "<?xml version=\"1.0\"?>\n<mets/>\n").unwrap();
    let o = webaip(&["validate", "-q", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("INVALID"));
    // An unreadable input is an error: stderr only, exit 2, nothing on stdout.
    let o = webaip(&["validate", "--json", t.path().join("none.xml").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("none.xml"));
}

/// `pages --json` is one object with its `kind`; `-q` prints the listing (the command's
/// product) and nothing else: no counts line, nothing on stderr.
#[test]
fn pages_json_is_one_object_and_quiet_prints_only_the_listing() {
    let job = sample_arg("heritrix-job");
    let v = one_object(&webaip(&["pages", "--json", &job]));
    assert_eq!(v["kind"], "archives");
    let entries = v["entries"].as_array().unwrap().len();
    assert!(entries > 0);
    let o = webaip(&["pages", "-q", &job]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.lines().count(), entries, "one line a page, no counts: {text}");
    assert!(!text.contains("page(s) at"), "{text}");
}

/// `scan --json` is one object; `-q` prints nothing when all is clean.
#[test]
fn scan_json_is_one_object_and_quiet_is_silent() {
    let d = crate::scan::daemon("main", 3321, "2000M");
    let arcs = sample_arg("heritrix-job/arcs");
    let arc = format!("{arcs}/IAH-20240315103000-00001-crawler.example.arc");
    let v = one_object(&webaip(&["scan", "--json", "--clamd", &d.addr, &arc]));
    assert_eq!(keys(&v), ["findings", "scanned"]);
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(0), "{v:?}");
    assert_silent("scan -q", &webaip(&["scan", "-q", "--clamd", &d.addr, &arc]));
}

/// Each command's long help ends with an example of its `--json` output, and `package`'s
/// options are grouped under headings.
#[test]
fn help_shows_the_json_and_the_headings() {
    for command in ["package", "migrate", "scan", "validate", "pages"] {
        let o = webaip(&[command, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout);
        let example = help.split("Output of --json").nth(1);
        let example = example.unwrap_or_else(|| panic!("{command}: no JSON example: {help}"));
        assert!(example.contains('{') && example.contains('}'), "{command}: {example}");
    }
    let o = webaip(&["package", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    for heading in ["Input:", "Output:", "Metadata:", "Virus check:", "Reporting:"] {
        assert!(help.contains(heading), "package --help has no {heading}: {help}");
    }
    assert!(Path::new(&sample_arg("heritrix-job")).is_dir());
}

/// The facade calls behind these commands, from Rust: what they return and how they fail.
#[test]
fn the_commands_facade_calls_report_and_fail_by_name() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let t = tempfile::tempdir().unwrap();
    let arc = sample("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    let read = AtomicU64::new(0);
    let options = webaip::MigrateArcsOptions { deterministic: true, ..Default::default() };
    let progress = |n: u64| {
        read.fetch_add(n, Ordering::Relaxed);
    };
    let arcs = std::slice::from_ref(&arc);
    let report = webaip::migrate_arcs(arcs, t.path(), &options, &progress).unwrap();
    assert!(report.ok() && report.files.len() == 1, "{report:?}");
    let size = std::fs::metadata(&arc).unwrap().len();
    assert!(read.into_inner() <= size, "progress counts input bytes");
    let missing = t.path().join("missing.arc");
    let refused = webaip::migrate_arcs(&[missing], t.path(), &options, &|_| {}).unwrap_err();
    assert!(matches!(refused, webaip::MigrateArcsError::NotAFile(_)), "{refused:?}");
    assert!(refused.to_string().contains("missing.arc"), "{refused}");

    let planned = AtomicU64::new(0);
    let job = sample("heritrix-job");
    let listing = webaip::list_pages(&job, &Default::default(), &|p| {
        if let webaip::PagesProgress::Planned(n) = p {
            planned.fetch_add(n, Ordering::Relaxed);
        }
    })
    .unwrap();
    assert!(listing.counts.pages > 0 && planned.into_inner() > 0, "{:?}", listing.counts);
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let none = webaip::list_pages(&empty, &Default::default(), &|_| {}).unwrap_err();
    assert!(none.to_string().contains(&empty.display().to_string()), "{none}");

    let mets = t.path().join("none.xml");
    let unreadable = webaip::validate_mets(&mets, &Default::default()).unwrap_err();
    assert!(matches!(unreadable, webaip::ValidateError::Unreadable { .. }), "{unreadable:?}");
}
