//! The examples of `examples/`, which use only the crate-root facade, run as a user runs them
//! on committed samples; what they print and write is checked by the CLI's own verdicts and by
//! independent readers (warcio, py-wacz, eark-validator).
//!
//! `cargo test` builds the examples before running the tests; run alone, this module needs
//! `cargo build --profile ci --examples` first.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{
    Package, copy_tree, corpus, eark_validator, repo, sample, wacz_validate, webaip,
};

/// The example `name` built beside this test binary (`target/PROFILE/examples/NAME`).
pub(crate) fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile = exe.parent().and_then(Path::parent).expect("target/PROFILE/deps/");
    let built = profile.join("examples").join(name);
    assert!(
        built.is_file(),
        "{}: not built (`cargo test` builds the examples; alone: cargo build --examples)",
        built.display()
    );
    built
}

/// Runs an example with `args`, without the environment's schema folder or clamd.
fn run(name: &str, args: &[&Path]) -> Output {
    Command::new(example(name))
        .args(args)
        .env_remove("WEBAIP_SCHEMAS")
        .env_remove("WEBAIP_CLAMD")
        .output()
        .expect("example runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn said(o: &Output) -> String {
    format!("{}{}", stdout(o), String::from_utf8_lossy(&o.stderr))
}

/// A package of the Heritrix job sample made by the CLI (the examples that read a package
/// get one they did not make themselves).
fn job_package(dir: &Path) -> PathBuf {
    let out = dir.join("job");
    let o = Package::new().deterministic().run(&out, &sample("heritrix-job"));
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    out
}

/// `webaip validate` on a package's METS: VALID, exit 0.
fn assert_valid(package: &Path) {
    let v = webaip(&["validate", package.join("METS.xml").to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(0), "{}", said(&v));
    assert!(stdout(&v).contains("VALID"), "{}", said(&v));
}

/// The package example packages a Heritrix job and a PANDAS title (one package per
/// instance) into packages `validate` calls VALID; the same run twice gives the same METS.
#[test]
fn package_example_makes_valid_packages() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("job");
    let o = run("package", &[&sample("heritrix-job"), &out]);
    assert!(o.status.success(), "{}", said(&o));
    let text = stdout(&o);
    assert!(text.starts_with("package urn:") && text.contains("  container content/"), "{text}");
    assert_valid(&out);
    let again = tmp.path().join("again");
    assert!(run("package", &[&sample("heritrix-job"), &again]).status.success());
    let mets = |p: &Path| std::fs::read(p.join("METS.xml")).unwrap();
    assert_eq!(mets(&out), mets(&again), "deterministic options give the same METS");

    // A title of two instances (the sample's one, twice under two instance times).
    let source = tmp.path().join("src/40123");
    for instance in ["20040517-1412", "20040601-0930"] {
        copy_tree(&sample("pandas/40123/20040517-1412"), &source.join(instance));
    }
    let title = tmp.path().join("title");
    let o = run("package", &[&source, &title]);
    assert!(o.status.success(), "{}", said(&o));
    let made: Vec<PathBuf> = stdout(&o)
        .lines()
        .filter_map(|l| l.strip_prefix("package ")?.split_once(' ').map(|(_, p)| p.into()))
        .collect();
    assert_eq!(made.len(), 2, "one package per instance: {}", stdout(&o));
    for p in &made {
        assert_eq!(p.parent(), Some(title.as_path()), "{}", p.display());
        assert_valid(p);
    }
    // A source of no shape is an error naming it, and nothing is made.
    let nothing = tmp.path().join("empty");
    std::fs::create_dir(&nothing).unwrap();
    let o = run("package", &[&nothing, &tmp.path().join("none")]);
    assert!(!o.status.success() && said(&o).contains("empty"), "{}", said(&o));
    assert!(!tmp.path().join("none").exists());
}

/// The migrate example converts a corpus ARC into a WARC that warcio checks clean, and
/// says every payload was conserved; an input that is no ARC fails and leaves no output.
#[test]
fn migrate_example_conserves_and_warcio_agrees() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = corpus().join("arc/cc-crawl-002_2009_09_17_12_1253241189984_12-4827319.arc.gz");
    let warc = tmp.path().join("out.warc.gz");
    let o = run("migrate", &[&arc, &warc]);
    assert!(o.status.success(), "{}", said(&o));
    assert!(stdout(&o).contains("conserved true"), "{}", said(&o));
    let records: u64 = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("records ")?.parse().ok())
        .expect("records line");
    assert!(records > 1, "{}", stdout(&o));
    let check = Command::new(repo().join(".venv/bin/warcio"))
        .args(["check", "-v"])
        .arg(&warc)
        .output()
        .expect("warcio runs (scripts/setup-test-env.sh)");
    assert!(check.status.success(), "warcio check: {}", said(&check));

    let not_arc = tmp.path().join("notes.arc");
    std::fs::write(&not_arc, b"this is no ARC file\n").unwrap();
    let bad = tmp.path().join("bad.warc.gz");
    let o = run("migrate", &[&not_arc, &bad]);
    assert!(!o.status.success(), "{}", said(&o));
    assert!(said(&o).contains("notes.arc"), "{}", said(&o));
    assert!(!bad.exists(), "a failed migration leaves no output");
}

/// The audit example finds a fresh package intact (exit 0), and the same package with one
/// byte of a container changed not intact, with a finding naming the container (exit 1).
#[test]
fn audit_example_tells_intact_from_tampered() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = job_package(tmp.path());
    let o = run("audit", &[&pkg]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    assert!(stdout(&o).contains("intact true"), "{}", said(&o));

    let container = std::fs::read_dir(pkg.join("content"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .expect("a content container");
    let mut bytes = std::fs::read(&container).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(&container, &bytes).unwrap();
    let o = run("audit", &[&pkg]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let name = container.file_name().unwrap().to_string_lossy().into_owned();
    assert!(stdout(&o).contains("intact false"), "{}", said(&o));
    assert!(stdout(&o).lines().any(|l| l.contains("finding") && l.contains(&name)), "{}", said(&o));
}

/// The ingest example makes an AIP of a submission that `validate` calls VALID.
#[test]
fn ingest_example_makes_a_valid_aip() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = job_package(tmp.path());
    let out = tmp.path().join("aips");
    let o = run("ingest", &[&pkg, &out]);
    assert!(o.status.success(), "{}", said(&o));
    let aip: PathBuf = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("aip ")?.split_once(' ').map(|(_, p)| p.into()))
        .expect("aip line");
    assert!(aip.starts_with(&out), "{}", aip.display());
    assert_valid(&aip);
}

/// The index example writes, byte for byte, the index `webaip index` writes of the same
/// package.
#[test]
fn index_example_writes_what_the_cli_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = job_package(tmp.path());
    let ours = tmp.path().join("example.cdxj");
    let o = run("index", &[&ours, &pkg]);
    assert!(o.status.success(), "{}", said(&o));
    let cli = tmp.path().join("cli.cdxj");
    let c = webaip(&["index", "-q", "-o", cli.to_str().unwrap(), pkg.to_str().unwrap()]);
    assert!(c.status.success(), "{}", said(&c));
    let (a, b) = (std::fs::read(&ours).unwrap(), std::fs::read(&cli).unwrap());
    assert!(a.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count() > 1);
    assert_eq!(a, b, "the example's index is the CLI's");
}

/// The export example writes a WACZ py-wacz validates and an E-ARK AIP (ZIP) in which
/// eark-validator finds no error.
#[test]
fn export_example_writes_a_valid_wacz_and_eark() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = job_package(tmp.path());
    let (wacz, eark) = (tmp.path().join("job.wacz"), tmp.path().join("job-eark.zip"));
    let o = run("export", &[&pkg, &wacz, &eark]);
    assert!(o.status.success(), "{}", said(&o));
    let (valid, why) = wacz_validate(&wacz);
    assert!(valid, "py-wacz: {why}");
    let (structure, errors) = eark_validator(&eark);
    assert_eq!((structure.as_str(), errors), ("WellFormed", vec![]), "eark-validator");
}

/// The store example puts a package on two file-system replicas, each holding every file
/// with the package's bytes, and finds the store clean.
#[test]
fn store_example_copies_every_file_to_both_replicas() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = job_package(tmp.path());
    let replicas = tmp.path().join("replicas");
    std::fs::create_dir(&replicas).unwrap();
    let o = run("store", &[&replicas, &pkg]);
    assert!(o.status.success(), "{}", said(&o));
    let text = stdout(&o);
    assert!(text.contains("accepted true") && text.contains("check clean true"), "{text}");
    let mets = std::fs::read(pkg.join("METS.xml")).unwrap();
    for replica in ["disk-a", "disk-b"] {
        let copies: Vec<PathBuf> = walkdir::WalkDir::new(replicas.join(replica))
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.ends_with("METS.xml"))
            .collect();
        assert_eq!(copies.len(), 1, "{replica}: {copies:?}");
        assert_eq!(std::fs::read(&copies[0]).unwrap(), mets, "{replica}: METS bytes");
    }
}
