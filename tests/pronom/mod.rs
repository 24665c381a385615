//! webaip's PRONOM table against the DROID signature file that opf-fido ships: every PUID
//! names the format and version webaip says it does.

use std::process::Command;

use crate::util::{oracle_python, repo};

/// Name and version of each PUID, as the DROID signature file gives them.
pub fn droid(puids: &[&str]) -> serde_json::Value {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/droid.py"))
        .args(puids)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn every_puid_names_the_format_and_version_droid_gives_it() {
    let known = webaip::formats::pronom::known();
    let puids: Vec<&str> = known.iter().map(|k| k.0).collect();
    let d = droid(&puids);
    for (puid, name, version) in known {
        let f = &d["formats"][puid];
        assert_eq!(f["name"], name, "{puid} in {}", d["signature_file"]);
        assert_eq!(f["version"], version, "{puid} in {}", d["signature_file"]);
    }
}
