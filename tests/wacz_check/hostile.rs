//! Hostile WACZ files against `webaip validate`, and a valid WACZ of more than a thousand
//! members (its central directory is longer than one read buffer).

use std::path::Path;
use std::process::Command;

use super::{check, heritrix_wacz, mutate, venv_bin};
use crate::util::oracle_python;

/// A valid WACZ of more than 1,200 members (py-wacz's and 1,200 notes listed in its manifest)
/// is read whole and VALID, as py-wacz and Python's zipfile read it.
#[test]
fn a_valid_wacz_of_more_than_a_thousand_members_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let wacz = heritrix_wacz(dir.path());
    let many = mutate(&wacz, &dir.path().join("many.wacz"), &["many", "1200"]);
    let members = python_reads(&wacz) + 1200;
    let (code, report) = check(&many);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["members"], members, "{report:#}");
    assert_eq!(report["valid"], true);
    let o = Command::new(venv_bin("wacz")).args(["validate", "-f"]).arg(&many).output().unwrap();
    assert!(o.status.success(), "py-wacz: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(python_reads(&many), members);
}

/// The number of members Python's zipfile reads (each one read whole).
fn python_reads(zip: &Path) -> u64 {
    let o = Command::new(oracle_python())
        .args([
            "-c",
            "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in z.namelist(): z.read(n)\nprint(len(z.namelist()))",
        ])
        .arg(zip)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}
