//! Records the commit the crate is built from, for `webaip --version`: `WEBAIP_COMMIT` is the
//! short hash of `HEAD`, with `-dirty` when tracked files differ from it, or `unknown` outside
//! a git checkout (a crates tarball, a copied folder). Never fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = commit_of(&root).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=WEBAIP_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // What makes the tree dirty or moves HEAD: the sources, and git's own HEAD, ref and index.
    for watched in ["src", "data", "profiles", "xsd", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={watched}");
    }
    let branch = git(&root, &["symbolic-ref", "-q", "HEAD"]);
    for git_path in ["HEAD", "index"].into_iter().chain(branch.as_deref()) {
        // A path that does not exist (a packed ref) would make cargo rerun this every build.
        if let Some(path) = git(&root, &["rev-parse", "--git-path", git_path])
            .map(|p| root.join(p))
            .filter(|p| p.exists())
        {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// `abc1234` or `abc1234-dirty`, when `root` is the top of a git work tree.
fn commit_of(root: &Path) -> Option<String> {
    // A tarball unpacked inside some other repository is not built from that repository.
    let top = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != root.canonicalize().ok()? {
        return None;
    }
    let hash = git(root, &["rev-parse", "--short", "HEAD"])?;
    // Without optional locks, `status` does not rewrite the index, which is watched above.
    let status = ["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"];
    let changes = git(root, &status)?;
    Some(match changes.is_empty() {
        true => hash,
        false => format!("{hash}-dirty"),
    })
}

/// The trimmed standard output of `git ARGS` run in `root`, if git ran and succeeded.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(root).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
}
