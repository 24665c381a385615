//! The command-line contract for the commands that keep packages (`audit`, `ingest`, every
//! `store` subcommand, `export wacz|eark`), on a package the test makes from the committed
//! NEDLIB sample: `--json` prints one JSON object (with the `kind` where a group's shapes
//! differ), `-q` prints nothing on success, old spellings still work with a deprecation line,
//! and each `--help` ends with an example of its JSON.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{Package, package, repo, webaip};

/// A package of the NEDLIB sample, made in `dir`.
fn nedlib_package(dir: &Path, name: &str) -> PathBuf {
    let pkg = dir.join(name);
    package(Package::new().quiet().deterministic(), &pkg, &[&repo().join("samples/nedlib")])
        .succeeded();
    pkg
}

fn said(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The one JSON object a successful run printed on stdout (nothing else, no progress on
/// stderr).
fn one_object(o: &Output) -> serde_json::Map<String, serde_json::Value> {
    assert_eq!(o.status.code(), Some(0), "{}", said(o));
    assert!(o.stderr.is_empty(), "{}", said(o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", said(o)));
    match v {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// A successful run that printed nothing at all.
fn silent(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", said(o));
    assert!(o.stdout.is_empty() && o.stderr.is_empty(), "printed: {}", said(o));
}

fn text(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn audit_and_ingest_print_one_object_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = nedlib_package(tmp.path(), "pkg");

    let report = one_object(&webaip(&["audit", "--json", text(&pkg)]));
    let packages = report["packages"].as_array().expect("packages");
    assert_eq!(packages.len(), 1, "{report:?}");
    assert_eq!(packages[0]["verdict"], "intact", "{report:?}");
    silent(&webaip(&["audit", "-q", text(&pkg)]));
    let both = one_object(&webaip(&["audit", "-q", "--json", "--deep", text(&pkg)]));
    assert_eq!(both["packages"][0]["deep"], true);

    let aips = tmp.path().join("aips");
    let ingested = one_object(&webaip(&["ingest", "--json", text(&pkg), "-o", text(&aips)]));
    assert_eq!(ingested["packages"][0]["outcome"], "created", "{ingested:?}");
    assert!(aips.join("pkg/METS.xml").is_file());
    silent(&webaip(&["ingest", "--quiet", text(&pkg), "--out", text(&tmp.path().join("b"))]));
    assert!(tmp.path().join("b/pkg/METS.xml").is_file());
}

/// A store of one file system replica in the webaip layout (whose own subcommands,
/// `rebuild-state` and `remove`, this contract covers too), its configuration in `dir`.
fn one_replica_store(dir: &Path) -> PathBuf {
    let config = dir.join("store.toml");
    let toml = format!(
        "state = \"{}\"\n\n[[replica]]\nname = \"disk\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
        dir.join("state.sqlite").display(),
        dir.join("disk").display()
    );
    std::fs::write(&config, toml).unwrap();
    config
}

fn objid(pkg: &Path) -> String {
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let v = &mets[mets.find("OBJID=\"").unwrap() + 7..];
    v[..v.find('"').unwrap()].to_string()
}

#[test]
fn every_store_subcommand_prints_one_kinded_object_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = nedlib_package(t, "pkg");
    let id = objid(&pkg);
    let config = one_replica_store(t);
    let store = |args: &[&str]| {
        let mut all = vec!["store", "--config", text(&config)];
        all.extend_from_slice(args);
        webaip(&all)
    };
    let kind_of = |args: &[&str]| one_object(&store(args))["kind"].clone();

    let put = one_object(&store(&["put", "--json", text(&pkg)]));
    assert_eq!((&put["kind"], &put["packages"][0]["accepted"]), (&"put".into(), &true.into()));
    silent(&store(&["-q", "put", text(&pkg)]));
    // `--json` and `-q` are the group's: before or after the subcommand.
    assert_eq!(kind_of(&["--json", "check", "--deep"]), "check");
    silent(&store(&["check", "-q"]));
    assert_eq!(kind_of(&["repair", "--json"]), "repair");
    silent(&store(&["repair", "--quiet"]));

    let got = one_object(&store(&["get", &id, "-o", text(&t.join("back")), "--json"]));
    assert_eq!(got["kind"], "get");
    assert!(!got["copies"].as_array().unwrap().is_empty(), "{got:?}");
    silent(&store(&["get", &id, "--out", text(&t.join("back2")), "-q"]));
    assert!(t.join("back2/METS.xml").is_file());

    assert_eq!(kind_of(&["rebuild-state", "--json"]), "rebuild-state");
    silent(&store(&["rebuild-state", "-q"]));
    let dry = one_object(&store(&["remove", &id, "--dry-run", "--json"]));
    assert_eq!((&dry["kind"], &dry["dry_run"]), (&"remove".into(), &true.into()));
    silent(&store(&["remove", &id, "--yes", "-q"]));
    assert!(
        !t.join("disk").read_dir().unwrap().flatten().any(|e| e.path().join("METS.xml").exists())
    );
}

#[test]
fn store_get_still_takes_to_with_a_deprecation_line() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = nedlib_package(t, "pkg");
    let config = one_replica_store(t);
    let cfg = text(&config);
    silent(&webaip(&["store", "--config", cfg, "put", "-q", text(&pkg)]));
    let back = t.join("back");
    let o = webaip(&["store", "--config", cfg, "get", &objid(&pkg), "--to", text(&back)]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("`--to` is deprecated") && stderr.contains("`--out`"), "{stderr}");
    assert_eq!(
        std::fs::read(back.join("METS.xml")).unwrap(),
        std::fs::read(pkg.join("METS.xml")).unwrap()
    );
}

#[test]
fn exports_print_one_kinded_object_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = nedlib_package(t, "pkg");

    let wacz = one_object(&webaip(&[
        "export",
        "wacz",
        text(&pkg),
        "-o",
        text(&t.join("a.wacz")),
        "--json",
    ]));
    assert_eq!((&wacz["kind"], &wacz["objid"]), (&"wacz".into(), &objid(&pkg).into()));
    silent(&webaip(&["export", "wacz", "-q", text(&pkg), "--out", text(&t.join("b.wacz"))]));
    assert!(t.join("b.wacz").is_file());

    let eark =
        one_object(&webaip(&["export", "eark", "--json", text(&pkg), "-o", text(&t.join("e"))]));
    assert_eq!((&eark["kind"], &eark["objid"]), (&"eark".into(), &objid(&pkg).into()));
    silent(&webaip(&["export", "eark", "-q", text(&pkg), "-o", text(&t.join("e.zip"))]));
    assert!(t.join("e.zip").is_file());
}

#[test]
fn each_help_ends_with_an_example_of_its_json() {
    let commands: [&[&str]; 10] = [
        &["audit"],
        &["ingest"],
        &["store", "put"],
        &["store", "check"],
        &["store", "repair"],
        &["store", "get"],
        &["store", "rebuild-state"],
        &["store", "remove"],
        &["export", "wacz"],
        &["export", "eark"],
    ];
    for command in commands {
        let o = webaip(&[command, &["--help"]].concat());
        assert_eq!(o.status.code(), Some(0), "{command:?}: {}", said(&o));
        let help = String::from_utf8_lossy(&o.stdout);
        let example = help.rsplit("JSON (--json), one object").next().unwrap();
        assert!(
            help.contains("JSON (--json), one object") && example.contains('{'),
            "{command:?}: {help}"
        );
        let kinded = command.len() > 1;
        assert_eq!(example.contains("\"kind\""), kinded, "{command:?}: {help}");
    }
}
