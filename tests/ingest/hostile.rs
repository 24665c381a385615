//! Submissions that are valid and intact but written otherwise than webaip writes them: the
//! AIP's edits must still land where they belong; and an `--out` that would change the
//! submission itself.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::Digest;

use super::{audit_deep, ingest, report, submission};
use crate::golden::SAMPLES;

/// The pandas sample's submission, packaged without identification (it has described
/// bytestreams for ingest to identify).
fn pandas(dir: &Path) -> PathBuf {
    let (name, args) = SAMPLES.iter().find(|(n, _)| *n == "pandas").unwrap();
    submission(name, &[args, &["--identify", "none"][..]].concat(), dir)
}

/// A copy of `ssip` as `name` whose METS is `edit` of the original, its manifest line fixed.
fn variant(ssip: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let dst = ssip.with_file_name(name);
    crate::util::copy_tree(ssip, &dst);
    let mets = edit(&fs::read_to_string(ssip.join("METS.xml")).unwrap());
    fs::write(dst.join("METS.xml"), &mets).unwrap();
    let sha: String =
        sha2::Sha512::digest(mets.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let manifest = fs::read_to_string(dst.join("manifest-sha512.txt")).unwrap();
    let fixed: String = manifest
        .lines()
        .map(|l| match l.ends_with("  METS.xml") {
            true => format!("{sha}  METS.xml\n"),
            false => format!("{l}\n"),
        })
        .collect();
    fs::write(dst.join("manifest-sha512.txt"), fixed).unwrap();
    let a = audit_deep(&dst);
    assert_eq!(a["verdict"], "intact", "{name}: the variant itself must be intact: {a}");
    dst
}

/// Every element and attribute value of `ns_prefix` renamed to `to` (its binding too).
fn rebind(mets: &str, from: &str, to: &str) -> String {
    mets.replace(&format!("<{from}:"), &format!("<{to}:"))
        .replace(&format!("</{from}:"), &format!("</{to}:"))
        .replace(&format!("xmlns:{from}="), &format!("xmlns:{to}="))
        .replace(&format!("\"{from}:"), &format!("\"{to}:"))
}

#[test]
fn premis_bound_to_another_prefix_gets_its_formats_identified_in_a_valid_aip() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = variant(&pandas(tmp.path()), "p3", |m| rebind(m, "premis", "p3"));
    let aips = tmp.path().join("aips");
    let r = report(&ingest(&ssip, &aips, &[]));
    assert!(r["identification"]["payloads"].as_u64().unwrap() > 0, "{r}");
    let a = audit_deep(&aips.join("p3"));
    assert_eq!(a["verdict"], "intact", "{a}");
    let after = fs::read_to_string(aips.join("p3/METS.xml")).unwrap();
    let before = fs::read_to_string(ssip.join("METS.xml")).unwrap();
    let keys = |t: &str| t.matches("formatRegistryKey>fmt/").count();
    assert!(keys(&after) > keys(&before), "the PRONOM results are written");
}

#[test]
fn mets_bound_to_another_prefix_is_listed_anew_in_a_valid_aip() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = variant(&pandas(tmp.path()), "m", |m| rebind(m, "mets", "m"));
    for mode in ["full", "minimal"] {
        let aips = tmp.path().join(format!("aips-{mode}"));
        let r = report(&ingest(&ssip, &aips, &["--mode", mode]));
        assert_eq!(r["outcome"], "created", "{mode}: {r}");
        let a = audit_deep(&aips.join("m"));
        assert_eq!(a["verdict"], "intact", "{mode}: {a}");
    }
}

#[test]
fn an_out_inside_the_submission_is_refused_and_the_submission_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = pandas(tmp.path());
    for out in [ssip.join("aips"), ssip.join("content/x/y"), ssip.clone()] {
        let o = ingest(&ssip, &out, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", out.display());
        assert!(err.contains(&ssip.display().to_string()) && err.contains("inside"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!ssip.join("aips").exists() && !ssip.join("content/x").exists());
        let a = audit_deep(&ssip);
        assert_eq!(a["verdict"], "intact", "{}: {a}", out.display());
    }
}

#[test]
fn two_ingests_of_one_submission_at_once_leave_one_aip_the_one_reported_created() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = pandas(tmp.path());
    for round in 0..3 {
        let aips = tmp.path().join(format!("aips-{round}"));
        let run = || {
            crate::util::webaip_command()
                .args(["ingest", "--json", "--quiet", "--schemas"])
                .arg(crate::util::schemas())
                .arg(&ssip)
                .arg("--out")
                .arg(&aips)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (run(), run());
        let reports = [a, b].map(|c| report(&c.wait_with_output().unwrap()));
        let mut outcomes: Vec<&str> =
            reports.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
        outcomes.sort();
        assert!(matches!(outcomes[..], ["created", "exists"]), "{round}: {outcomes:?}");
        let created = reports.iter().find(|r| r["outcome"] == "created").unwrap();
        let on_disk = fs::read_to_string(aips.join("pandas/METS.xml")).unwrap();
        assert!(
            on_disk.contains(&format!("OBJID=\"{}\"", created["objid"].as_str().unwrap())),
            "{round}: the AIP in place is the one reported created"
        );
        assert!(reports.iter().all(|r| r["objid"] == created["objid"]), "{round}: {reports:?}");
        let names = crate::util::files_in(&aips);
        assert_eq!(names, ["pandas"], "{round}: nothing else left: {names:?}");
    }
}
