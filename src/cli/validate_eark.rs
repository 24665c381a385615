//! `webaip validate --profile eark-csip PACKAGE`: the CSIP 2.2 rules, each by its identifier.

use std::path::Path;

/// Checks one E-ARK package (folder or `.zip`); returns the exit status (0 valid, 1 findings,
/// 2 unreadable).
pub fn run(package: &Path, _json: bool) -> anyhow::Result<i32> {
    anyhow::bail!("validate {}: the E-ARK check is not written yet", package.display())
}
