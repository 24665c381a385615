//! What the binary says about itself, generated from its clap definitions: `--version` (the
//! commit, the PRONOM signature file and the profiles built in), the shell completion scripts,
//! the manual pages, and the command reference committed as docs/reference.md.

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
    // The versions of the files built in, as their root elements and names say
    // (data/pronom/README.md).
    let pronom = "PRONOM: DROID signature file V122 (created 2026-01-19T10:53:18), container \
                  signature file 2026-01-19 (signatureVersion 40)";
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

/// The commands `webaip --help` lists.
const COMMANDS: &[&str] = &[
    "migrate",
    "package",
    "scan",
    "validate",
    "audit",
    "ingest",
    "store",
    "pages",
    "dedup-table",
    "undedup",
    "unmigrate",
    "batch",
    "index",
    "get",
    "export",
    "completions",
    "man",
];

#[test]
fn the_bash_completion_script_parses_and_names_every_command() {
    let script = stdout_of(&webaip(&["completions", "bash"]));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("webaip.bash");
    std::fs::write(&path, &script).unwrap();
    let o = Command::new("bash").arg("-n").arg(&path).output().expect("bash runs");
    assert!(o.status.success(), "bash -n: {}", String::from_utf8_lossy(&o.stderr));
    // The words offered after `webaip `: the first `opts="..."` line that offers any, the top
    // command's.
    let top = script
        .lines()
        .find(|l| l.trim_start().starts_with("opts=\"-"))
        .unwrap_or_else(|| panic!("no opts line: {script}"));
    let offered: Vec<&str> =
        top.trim().trim_start_matches("opts=\"").trim_end_matches('"').split(' ').collect();
    for name in COMMANDS {
        assert!(offered.contains(name), "{name} is not offered: {top}");
    }
    assert!(!offered.contains(&"reference"), "the hidden command is offered");
    assert!(script.contains("complete -F _webaip"), "the function is not registered");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let text = stdout_of(&webaip(&["completions", shell]));
        assert!(text.contains("dedup-table"), "{shell} names no subcommand");
    }
    let refused = webaip(&["completions", "tcsh"]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn the_manual_pages_are_one_per_command_and_render() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man/man1");
    stdout_of(&webaip(&["man", "-o", dir.to_str().unwrap()]));
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for want in ["webaip.1", "webaip-package.1", "webaip-store-put.1", "webaip-export-wacz.1"] {
        assert!(pages.iter().any(|p| p == want), "no {want} in {pages:?}");
    }
    // Neither clap's `help` nor the hidden `reference`, and no temporary left behind.
    assert!(pages.iter().all(|p| p.ends_with(".1") && !p.contains("help")), "{pages:?}");
    assert!(!pages.iter().any(|p| p.contains("reference")), "{pages:?}");
    let page = std::fs::read_to_string(dir.join("webaip-package.1")).unwrap();
    for request in [".TH webaip-package 1", ".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS"] {
        assert!(page.contains(request), "no {request} in the package page");
    }
    let stdout = stdout_of(&webaip(&["man"]));
    assert_eq!(stdout, std::fs::read_to_string(dir.join("webaip.1")).unwrap());
    if Command::new("groff").arg("-v").output().is_ok_and(|o| o.status.success()) {
        let o = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww"])
            .arg(dir.join("webaip-package.1"))
            .output()
            .unwrap();
        let text = stdout_of(&o);
        assert!(o.stderr.is_empty(), "groff warns: {}", String::from_utf8_lossy(&o.stderr));
        assert!(text.contains("--out"), "{text}");
    }
}

#[test]
fn man_into_a_file_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-folder");
    std::fs::write(&file, b"x").unwrap();
    let o = webaip(&["man", "-o", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(file.to_str().unwrap()), "{err}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "something was left");
}

#[test]
fn the_committed_reference_is_what_the_binary_generates() {
    let generated = stdout_of(&webaip(&["reference"]));
    let committed = std::fs::read_to_string(repo().join("docs/reference.md")).unwrap();
    if generated == committed {
        return;
    }
    let first = generated.lines().zip(committed.lines()).position(|(g, c)| g != c);
    let line = first.unwrap_or(generated.lines().count().min(committed.lines().count()));
    panic!(
        "docs/reference.md is not what `webaip reference` prints (first difference at line \
         {}): run scripts/gen-reference.sh and commit the result",
        line + 1
    );
}
