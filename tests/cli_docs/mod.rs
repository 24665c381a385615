//! What the binary says about itself: `--version` (the commit, the PRONOM signature file and
//! the profiles built in).

use std::path::Path;
use std::process::{Command, Output};

use sha2::Digest;

use crate::util::{repo, webaip};

/// Standard output of a run that must succeed, with both outputs when it does not.
fn stdout_of(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

/// `git rev-parse --short HEAD` of the repository, when it is a git work tree.
fn head_commit() -> Option<String> {
    let o = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(repo())
        .output()
        .ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

#[test]
fn version_names_the_commit_the_signature_file_and_the_profiles() {
    let long = stdout_of(&webaip(&["--version"]));
    assert_eq!(long, format!("webaip {}\n", webaip::long_version()), "the facade gives the text");
    let version = env!("CARGO_PKG_VERSION");
    assert!(long.starts_with(&format!("webaip {version}\ncommit: ")), "{long}");
    if let Some(head) = head_commit() {
        assert!(long.contains(&format!("commit: {head}")), "not built from {head}: {long}");
    }
    // The version of the file built in, as its root element says (data/pronom/README.md).
    let pronom = "PRONOM: DROID signature file V122 (created 2026-01-19T10:53:18)";
    assert!(long.contains(pronom), "{long}");
    for name in ["bl-webarchive", "bl-legacy"] {
        let toml = std::fs::read(repo().join(format!("profiles/{name}.toml"))).unwrap();
        let hex: String = sha2::Sha256::digest(&toml).iter().map(|b| format!("{b:02x}")).collect();
        let line = format!("  {name}: profiles/{name}.toml sha256:{}, ", &hex[..12]);
        assert!(long.contains(&line), "no `{line}` in {long}");
    }
    assert!(long.contains("urn:webaip:profile:bl-webarchive:1.0"), "{long}");

    let short = stdout_of(&webaip(&["-V"]));
    assert_eq!(short, format!("webaip {version} ({})\n", webaip::BUILD_COMMIT));
    let sub = stdout_of(&webaip(&["package", "-V"]));
    assert_eq!(sub.lines().count(), 1, "{sub}");
}

/// Compiles build.rs on its own and runs it as cargo would, in `manifest_dir`; its output.
fn run_build_script(bin: &Path, manifest_dir: &Path) -> String {
    let o = Command::new(bin).env("CARGO_MANIFEST_DIR", manifest_dir).output().unwrap();
    stdout_of(&o)
}

#[test]
fn the_build_script_says_unknown_outside_a_git_work_tree_and_does_not_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("build-script");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let o = Command::new(rustc)
        .args(["--edition", "2024", "-o"])
        .arg(&bin)
        .arg(repo().join("build.rs"))
        .output()
        .expect("rustc runs");
    stdout_of(&o);
    // An unpacked crates tarball: no .git anywhere above it.
    let unpacked = tmp.path().join("webaip-0.1.0");
    std::fs::create_dir(&unpacked).unwrap();
    let said = run_build_script(&bin, &unpacked);
    assert!(said.contains("cargo:rustc-env=WEBAIP_COMMIT=unknown\n"), "{said}");
    // A folder inside a work tree is not the tree it sits in.
    let said = run_build_script(&bin, &repo().join("src"));
    assert!(said.contains("cargo:rustc-env=WEBAIP_COMMIT=unknown\n"), "{said}");
    if let Some(head) = head_commit() {
        let said = run_build_script(&bin, &repo());
        assert!(said.contains(&format!("cargo:rustc-env=WEBAIP_COMMIT={head}")), "{said}");
    }
}
