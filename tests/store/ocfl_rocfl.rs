//! The OCFL storage roots `webaip store` writes, read by rocfl (a Rust OCFL implementation
//! independent of webaip's, installed by scripts/setup-rocfl.sh): rocfl validates each root
//! with its fixity check, lists every version's files with the digests of the package's own
//! files, gives back every file of every version byte for byte, and reads the version log
//! webaip wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::ocfl::{files_of, ocfl_config, put};
use super::{objid, same_objid_pair, sha512_hex};

/// rocfl: `WEBAIP_ROCFL`, else on PATH, else where `cargo install` puts it.
fn rocfl_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("WEBAIP_ROCFL") {
        return PathBuf::from(p);
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .chain([cargo_home.join("bin")])
        .map(|d| d.join("rocfl"))
        .find(|p| p.is_file())
        .expect("rocfl is installed (scripts/setup-rocfl.sh, run by scripts/setup-test-env.sh)")
}

pub(super) fn rocfl(root: &Path, args: &[&str]) -> Output {
    let o = Command::new(rocfl_bin())
        .arg("--no-styles")
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .expect("rocfl runs");
    assert!(o.status.success(), "rocfl {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

pub(super) fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("rocfl prints UTF-8")
}

/// `rocfl ls --digest --tsv` of one version: logical path to SHA-512.
pub(super) fn listed(root: &Path, id: &str, version: &str) -> BTreeMap<String, String> {
    text(&rocfl(root, &["ls", "--digest", "--tsv", "--version", version, id]))
        .lines()
        .map(|line| {
            // The path, padded with spaces to the widest, a tab, the digest.
            let (path, digest) = line.split_once('\t').unwrap_or_else(|| panic!("{line}"));
            let path = path.trim_end();
            let hex = digest.strip_prefix("sha512:").unwrap_or_else(|| panic!("{line}"));
            (path.to_string(), hex.to_string())
        })
        .collect()
}

#[test]
fn rocfl_validates_lists_and_reads_back_every_version_webaip_stores() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    let cfg = ocfl_config(tmp.path());
    assert_eq!(put(&cfg, &a)["version"], "v1");
    assert_eq!(put(&cfg, &b)["version"], "v2");
    let id = objid(&a);
    for replica in ["disk-a", "disk-b"] {
        let root = tmp.path().join(replica);
        let report = text(&rocfl(&root, &["validate"]));
        assert!(report.contains("Total objects:   1"), "{report}");
        assert!(report.contains("Invalid objects: 0"), "{report}");
        assert!(report.contains("Storage issues:  0"), "{report}");
        assert!(!report.to_lowercase().contains("warn"), "{report}");
        assert_eq!(text(&rocfl(&root, &["ls"])).trim(), id);
        for (version, pkg) in [("1", &a), ("2", &b)] {
            let expected = files_of(pkg);
            assert_eq!(listed(&root, &id, version), expected, "{replica} v{version}");
            for path in expected.keys() {
                let o = rocfl(&root, &["cat", "--version", version, &id, path]);
                assert_eq!(sha512_hex(&o.stdout), expected[path], "{replica} v{version} {path}");
            }
        }
        let log = text(&rocfl(&root, &["log", &id]));
        assert_eq!(log.matches("Author:  webaip tests <mailto:tests@example.org>").count(), 2);
        assert!(log.contains("Version 2") && log.contains("Version 1"), "{log}");
    }
}
