//! What giving a deduplicated ARC back costs: a stored payload of tens of MiB passes through
//! in chunks (peak RSS of `unmigrate --with`, `audit --rebuild-arcs --with` and `undedup`), and
//! each `--with` container is opened a bounded number of times in a run, however many
//! containers and revisits the package has (seen by strace).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::crawls_with;
use crate::fuzz::child::launch_webaip;
use crate::util::{Package, gen_arc, package, webaip, webaip_under};

/// Peak RSS allowed to a run that gives back a payload of [`RECORD`] bytes (the bound
/// for any record size).
const PEAK_RSS_LIMIT: u64 = 64 << 20;
/// The payload of the one record of each ARC: over the bound alone, so a run holding it once
/// whole exceeds it.
const RECORD: &str = "40M";

fn only_file(dir: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// Two ARCs of one record of [`RECORD`] bytes with the same payload, the second packaged
/// against the first: `unmigrate --with`, `audit --deep --rebuild-arcs --with` and `undedup
/// --with` take the payload from the first package in chunks (peak RSS under 64 MB), and the
/// ARC comes back byte for byte.
#[test]
fn a_large_stored_payload_passes_in_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let arcs = [d.join("a-20240315103000.arc.gz"), d.join("b-20240315103000.arc.gz")];
    for arc in &arcs {
        gen_arc("single", arc, &["--record-size", RECORD]);
    }
    let (p1, p2) = (d.join("p1"), d.join("p2"));
    package(Package::deterministic_json(), &p1, &[&arcs[0]]).report();
    let against = Package::deterministic_json().args(&["--dedup-against", p1.to_str().unwrap()]);
    let r2 = package(against, &p2, &[&arcs[1]]).report();
    assert_eq!(r2["dedup"]["revisits"], 1, "{}", r2["dedup"]);
    let (s1, s2) = (p1.to_str().unwrap(), p2.to_str().unwrap());

    let out = d.join("out");
    let run = launch_webaip(&["unmigrate", "-q", "-o", out.to_str().unwrap(), s2, "--with", s1], d);
    eprintln!("unmigrate --with: peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    let back = std::fs::read(out.join(arcs[1].file_name().unwrap())).unwrap();
    assert!(back == std::fs::read(&arcs[1]).unwrap(), "the ARC differs");
    drop(back);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "unmigrate: peak RSS {} MB", run.peak_rss >> 20);

    let run = launch_webaip(&["audit", "--json", "--deep", "--rebuild-arcs", "--with", s1, s2], d);
    eprintln!("audit --rebuild-arcs --with: peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "audit: peak RSS {} MB", run.peak_rss >> 20);

    let whole = d.join("whole");
    let w = whole.to_str().unwrap();
    let args = ["undedup", s2, "--with", s1, "--out", w, "--", "--no-virus-check", "--quiet"];
    let run = launch_webaip(&args, d);
    eprintln!("undedup --with: peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "undedup: peak RSS {} MB", run.peak_rss >> 20);
    // Whole again, its container gives the ARC back alone.
    let out = d.join("out-whole");
    let c = only_file(&whole.join("content"));
    let o = webaip(&["unmigrate", "-q", "-o", out.to_str().unwrap(), c.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = std::fs::read(out.join(arcs[1].file_name().unwrap())).unwrap();
    assert!(back == std::fs::read(&arcs[1]).unwrap(), "the ARC from the whole container differs");
}

/// Three ARCs packaged into one package against the first crawl's package, every one with
/// revisits of it: `unmigrate --with` opens the first package's container at most twice, and
/// each of the package's own containers a bounded number of times, not once per container or
/// per revisit.
#[test]
fn each_with_container_is_opened_a_bounded_number_of_times() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    crawls_with(d, &["--as", "arc", "--unchanged", "0.70"]);
    let first = only_file(&d.join("crawl1"));
    let second = only_file(&d.join("crawl2"));
    let copies: Vec<PathBuf> =
        (1..=3).map(|n| d.join(format!("x{n}-20240210100000.arc.gz"))).collect();
    for c in &copies {
        std::fs::copy(&second, c).unwrap();
    }
    let (p1, p2) = (d.join("p1"), d.join("p2"));
    package(Package::deterministic_json(), &p1, &[&first]).report();
    let against = Package::deterministic_json().args(&["--dedup-against", p1.to_str().unwrap()]);
    let sources: Vec<&Path> = copies.iter().map(PathBuf::as_path).collect();
    let r2 = package(against, &p2, &sources).report();
    assert!(r2["dedup"]["revisits"].as_u64().unwrap() >= 30, "{}", r2["dedup"]);

    let trace = d.join("trace");
    let out = d.join("out");
    let mut strace = Command::new("strace");
    strace.args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"]).arg(&trace);
    let o = webaip_under(strace)
        .args(["unmigrate", "-q", "-o", out.to_str().unwrap(), p2.to_str().unwrap()])
        .args(["--with", p1.to_str().unwrap()])
        .output()
        .expect("strace runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for c in &copies {
        let back = std::fs::read(out.join(c.file_name().unwrap())).unwrap();
        assert!(back == std::fs::read(c).unwrap(), "{} differs", c.display());
    }
    let log = std::fs::read_to_string(&trace).unwrap();
    // Opened by any path (relative to the package's folder, too): counted by file name.
    let opens = |container: &Path| {
        let name = container.file_name().unwrap().to_str().unwrap();
        log.lines().filter(|l| l.contains(&format!("{name}\"")) && !l.contains("= -1")).count()
    };
    let with = only_file(&p1.join("content"));
    eprintln!("the --with container: opened {} times", opens(&with));
    assert!(opens(&with) <= 2, "the --with container opened {} times", opens(&with));
    for c in std::fs::read_dir(p2.join("content")).unwrap() {
        let c = c.unwrap().path();
        eprintln!("{}: opened {} times", c.display(), opens(&c));
        assert!(opens(&c) <= 4, "{} opened {} times", c.display(), opens(&c));
    }
}
