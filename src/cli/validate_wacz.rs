//! `webaip validate FILE.wacz`: the deep check of a WACZ.

use std::path::Path;

/// Checks one WACZ; returns the exit status (0 valid, 1 findings, 2 unreadable).
pub fn run(wacz: &Path, _json: bool) -> anyhow::Result<i32> {
    anyhow::bail!("validate {}: the WACZ check is not written yet", wacz.display())
}
