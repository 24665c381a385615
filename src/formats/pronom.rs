//! PRONOM format identifiers (PUIDs) of the container formats webaip reads and writes.
//!
//! The identifiers and versions are those of the DROID signature file (v109, as shipped with
//! `opf-fido`); a test checks this table against that file. A format version is what the bytes
//! of the file say (the WARC version line, the ARC version block), never assumed.

/// A format as PRONOM names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PronomFormat {
    /// PRONOM's format name.
    pub name: &'static str,
    /// The version, as the file states it.
    pub version: String,
    /// The PUID, when PRONOM has one for this version.
    pub puid: Option<&'static str>,
}

/// WARC, by the version of its version line (`WARC/1.1` -> `"1.1"`). PRONOM has an entry for
/// 1.0 (`fmt/1355`) and 1.1 (`fmt/1281`); earlier drafts (0.17, 0.18) match only its
/// version-less WARC entry (`fmt/289`, signature `WARC/`).
pub(crate) fn warc(version: &str) -> PronomFormat {
    let puid = match version {
        "1.1" => "fmt/1281",
        "1.0" => "fmt/1355",
        _ => "fmt/289",
    };
    PronomFormat { name: "WARC", version: version.to_string(), puid: Some(puid) }
}

/// ARC, by its version block (`1 0` -> `"1.0"`, `1 1` -> `"1.1"`, `2 0` -> `"2"`). PRONOM
/// names ARC "Internet Archive": 1.0 is `x-fmt/219`, 1.1 `fmt/410`; it has no entry for
/// version 2 (the 10-field Alexa/IA ARC), which is then described without a PUID.
pub(crate) fn arc(version: &str) -> PronomFormat {
    let puid = match version {
        "1.0" | "1" => Some("x-fmt/219"),
        "1.1" => Some("fmt/410"),
        _ => None,
    };
    PronomFormat { name: "Internet Archive", version: version.to_string(), puid }
}

/// Every PUID of this table with the version it stands for, for checking against a DROID
/// signature file.
#[cfg(test)]
pub(crate) fn known() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("fmt/1281", "WARC", "1.1"),
        ("fmt/1355", "WARC", "1.0"),
        ("fmt/289", "WARC", ""),
        ("x-fmt/219", "Internet Archive", "1.0"),
        ("fmt/410", "Internet Archive", "1.1"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_map_to_their_own_puid() {
        assert_eq!(warc("1.1").puid, Some("fmt/1281"));
        assert_eq!(warc("1.0").puid, Some("fmt/1355"));
        assert_eq!(warc("0.17").puid, Some("fmt/289"));
        assert_eq!(warc("0.17").version, "0.17");
        assert_eq!(arc("1.0").puid, Some("x-fmt/219"));
        assert_eq!(arc("1.1").puid, Some("fmt/410"));
        assert_eq!(arc("2").puid, None);
        for (puid, name, version) in known() {
            let f = if name == "WARC" {
                warc(if version.is_empty() { "0.18" } else { version })
            } else {
                arc(version)
            };
            assert_eq!((f.puid, f.name), (Some(puid), name));
        }
    }
}

/// The table against the DROID signature file that opf-fido ships: every PUID names the
/// format and version webaip says it does.
#[cfg(test)]
mod droid_tests {
    use std::process::Command;

    use crate::test_support::{oracle_python, repo};

    #[test]
    fn every_puid_names_the_format_and_version_droid_gives_it() {
        let known = super::known();
        let puids: Vec<&str> = known.iter().map(|k| k.0).collect();
        let o = Command::new(oracle_python())
            .arg(repo().join("tests/oracle/droid.py"))
            .args(&puids)
            .output()
            .expect("python runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for (puid, name, version) in known {
            let f = &d["formats"][puid];
            assert_eq!(f["name"], name, "{puid} in {}", d["signature_file"]);
            assert_eq!(f["version"], version, "{puid} in {}", d["signature_file"]);
        }
    }
}
