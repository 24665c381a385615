//! What this build of webaip is: its version, the commit it was built from, and the data it
//! ships (the PRONOM signature file, the package profiles). `webaip --version` prints
//! [`long_version`]; an archive can record it beside the packages a build made.

use sha2::Digest;

use crate::formats::droid;
use crate::profile::{BUILTIN, Profile};

/// The commit webaip was built from: a short hash, with `-dirty` when tracked files differed
/// from it, or `unknown` when it was built outside a git work tree (from a crates tarball).
pub const BUILD_COMMIT: &str = env!("WEBAIP_COMMIT");

/// Hex digits of a profile file's SHA-256 that name it.
const PROFILE_DIGEST_PREFIX: usize = 12;

/// The version and commit on one line: `0.1.0 (b95884f)`.
pub fn short_version() -> String {
    format!("{} ({BUILD_COMMIT})", env!("CARGO_PKG_VERSION"))
}

/// The version, the commit, and the versions of the data built in, one per line, with no
/// newline at the end (nor the program name, which `--version` puts first):
///
/// ```text
/// 0.1.0
/// commit: b95884f
/// PRONOM: DROID signature file V122 (created 2026-01-19T10:53:18), container signature file 2026-01-19 (signatureVersion 40)
/// profiles (they declare no version; each is named by its file's SHA-256):
///   bl-webarchive: profiles/bl-webarchive.toml sha256:a89676d8e3a3, urn:webaip:profile:bl-webarchive:1.0
///   bl-legacy: profiles/bl-legacy.toml sha256:dc549730f645, urn:webaip:profile:bl-legacy
/// ```
pub fn long_version() -> String {
    let mut lines = vec![
        env!("CARGO_PKG_VERSION").to_owned(),
        format!("commit: {BUILD_COMMIT}"),
        pronom_line(),
        "profiles (they declare no version; each is named by its file's SHA-256):".to_owned(),
    ];
    lines.extend(BUILTIN.iter().map(|(name, toml)| profile_line(name, toml)));
    lines.join("\n")
}

/// Which DROID signature files are built in: the binary one and the container one (formats
/// told apart by what a ZIP or OLE2 file holds).
fn pronom_line() -> String {
    let container = match droid::container::shipped_version() {
        Ok(c) => format!("container signature file {} (signatureVersion {})", c.date, c.version),
        Err(e) => format!("the built-in container signature file is unreadable: {e}"),
    };
    match droid::shipped_version() {
        Ok(v) => format!(
            "PRONOM: DROID signature file V{} (created {}), {container}",
            v.version, v.date_created
        ),
        Err(e) => format!("PRONOM: the built-in signature file is unreadable: {e}"),
    }
}

/// `  NAME: profiles/NAME.toml sha256:PREFIX, URI`: a profile has no version field, so its
/// file's digest names the rules it holds; its URI (the METS `PROFILE`) may carry one.
fn profile_line(name: &str, toml: &str) -> String {
    let digest = sha2::Sha256::digest(toml.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let prefix = &hex[..PROFILE_DIGEST_PREFIX];
    let uri = match Profile::load(name) {
        Ok(profile) => profile.uri,
        Err(e) => format!("does not load: {e}"),
    };
    format!("  {name}: profiles/{name}.toml sha256:{prefix}, {uri}")
}
