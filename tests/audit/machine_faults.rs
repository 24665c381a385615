//! The medium or the machine failing the reads of a container (an input/output error of a bad
//! sector, memory exhausted) while it is audited, plain or `--deep`: the bytes not given are
//! not checked (`partial`, `not_read` naming the file, where reading failed and why), never
//! DAMAGED; the same container with a byte flipped there still is.

use super::*;
use crate::util::{FailingReads, corpus, json};

/// Audits `pkg` (`--json`, the corpus's schemas, `extra`) with reads of files whose path
/// contains `path` failing from byte `at` with `errno`; the exit status and the report.
fn audit_failing(
    failing: &FailingReads,
    (path, at, errno): (&str, u64, i32),
    pkg: &Path,
    extra: &[&str],
) -> (Option<i32>, serde_json::Value) {
    let schemas = schemas().display().to_string();
    let mut args = vec!["audit", "--json", "--schemas", &schemas];
    args.extend_from_slice(extra);
    args.push(pkg.to_str().unwrap());
    let o = failing.webaip(path, at, errno, &args);
    (o.status.code(), json(&o)["packages"][0].clone())
}

/// The `not_read` entries of a report, as (file, reason).
fn not_read(r: &serde_json::Value) -> Vec<(String, String)> {
    let unchecked = r["unchecked"].as_array().unwrap().iter();
    let of = |u: &serde_json::Value, k: &str| u[k].as_str().unwrap_or_default().to_string();
    unchecked
        .filter(|u| u["kind"] == "not_read")
        .map(|u| (of(u, "file"), of(u, "reason")))
        .collect()
}

#[test]
fn reads_the_medium_or_the_machine_fail_are_not_checked_never_damage() {
    let Some(failing) = FailingReads::build() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    build(&corpus().join("warc/jwat-IAH-20080430204825-00000-blackbook.warc.gz"), &pkg);
    let mets = fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let c1 = href(&mets, "FILE-C00001");
    let size = fs::metadata(pkg.join(&c1)).unwrap().len();
    let name = Path::new(&c1).file_name().unwrap().to_str().unwrap().to_string();
    let at = size / 2;
    let faults = [
        (libc::EIO, "input/output error"),
        (libc::ENOMEM, "out of memory"),
        (libc::EACCES, "permission denied"),
    ];
    for (errno, words) in faults {
        for extra in [&[][..], &["--deep"], &["--deep", "-j", "1"]] {
            let (code, r) = audit_failing(&failing, (&name, at, errno), &pkg, extra);
            let case = format!("{words} {extra:?}");
            assert_eq!((code, &r["verdict"]), (Some(0), &"partial".into()), "{case}: {r:#}");
            assert_eq!(findings(&r), Vec::<String>::new(), "{case}");
            let unread = not_read(&r);
            assert!(!unread.is_empty(), "{case}: {r:#}");
            for (file, reason) in &unread {
                assert_eq!(file, &c1, "{case}");
                assert!(reason.contains(words), "{case}: {reason}");
            }
            if extra.is_empty() {
                continue;
            }
            // The deep walk says which bytes it could not read: from a record before the
            // failing byte to the end of the file.
            let last = format!("..={}: reading failed at byte ", size - 1);
            let walked = unread.iter().find(|(_, reason)| reason.contains(&last));
            let (_, reason) = walked.unwrap_or_else(|| panic!("{case}: {unread:?}"));
            let first: u64 =
                reason.split("bytes ").nth(1).unwrap().split("..").next().unwrap().parse().unwrap();
            assert!(first <= at && first > 0, "{case}: {reason}");
        }
    }
    // The bytes themselves wrong at that place: damage, found by the deep audit.
    let damaged = tmp.path().join("damaged");
    copy_tree(&pkg, &damaged);
    flip(&damaged.join(&c1), at);
    let (code, r) = audit_with(&damaged, &["--deep"]);
    assert_eq!((code, &r["verdict"]), (1, &"damaged".into()), "{r:#}");
    assert!(not_read(&r).is_empty(), "{r:#}");
}

/// A described page's record that cannot be read for the machine: the METS is not called
/// invalid (its URL is not known, said as a notice), and the audit is partial, not INVALID.
#[test]
fn a_described_record_the_machine_cannot_read_is_no_fault_of_the_mets() {
    let Some(failing) = FailingReads::build() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    let meta = crate::util::sample("heritrix-job.metadata.toml");
    crate::util::package(
        crate::util::Package::new().quiet().args(&["--metadata", meta.to_str().unwrap()]),
        &pkg,
        &[&crate::util::repo().join("samples/heritrix-job")],
    )
    .succeeded();
    let (code, r) = audit_with(&pkg, &["--deep"]);
    assert_eq!((code, &r["verdict"]), (0, &"intact".into()), "{r:#}");
    for extra in [&[][..], &["--deep"]] {
        let (code, r) = audit_failing(&failing, (".warc.gz", 4000, libc::EIO), &pkg, extra);
        assert_eq!((code, &r["verdict"]), (Some(0), &"partial".into()), "{extra:?}: {r:#}");
        assert_eq!(findings(&r), Vec::<String>::new(), "{extra:?}");
        assert!(!not_read(&r).is_empty(), "{extra:?}: {r:#}");
    }
}

/// `audit -q` drops progress and detail, never a verdict that is not INTACT: a package whose
/// container cannot be read at all gets its PARTIAL verdict line (exit 0, as documented);
/// an intact package gets nothing.
#[test]
fn quiet_still_prints_a_verdict_that_is_not_intact() {
    let Some(failing) = FailingReads::build() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    build(&corpus().join("warc/jwat-IAH-20080430204825-00000-blackbook.warc.gz"), &pkg);
    let schemas = schemas().display().to_string();
    let args = ["audit", "--deep", "-q", "--schemas", &schemas, pkg.to_str().unwrap()];
    let quiet = failing.webaip("blackbook", 0, libc::EIO, &args);
    let out = String::from_utf8_lossy(&quiet.stdout);
    assert_eq!(quiet.status.code(), Some(0), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "one verdict line: {out}");
    assert!(lines[0].contains("NO DAMAGE FOUND IN WHAT COULD BE CHECKED"), "{out}");
    assert!(lines[0].contains("not checkable here"), "{out}");
    // The same verdict as the JSON's.
    let (_, r) = audit_failing(&failing, ("blackbook", 0, libc::EIO), &pkg, &["--deep"]);
    assert_eq!(r["verdict"], "partial", "{r:#}");
    let intact = crate::util::webaip(&args);
    assert_eq!(intact.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&intact.stdout), "", "nothing when INTACT");
}
