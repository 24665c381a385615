//! `webaip validate FILE.wacz`: the deep check of a WACZ.

use std::fmt::Write as _;
use std::path::Path;

use webaip::validate_wacz;

use super::checked::Checked;

/// Checks one WACZ; None (the error said on stderr) when it cannot be read or is no ZIP.
pub(super) fn check(wacz: &Path) -> anyhow::Result<Option<Checked>> {
    let shown = wacz.display().to_string();
    let report = match validate_wacz(wacz) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("webaip: {e}");
            return Ok(None);
        }
    };
    let mut text = String::new();
    for f in &report.findings {
        let _ = writeln!(text, "{shown}:{f}");
    }
    let verdict = format!(
        "{shown}: {} ({} errors, {} warnings; {} members, {} WARCs, {} records, {} index lines, {} pages)",
        if report.valid { "VALID" } else { "INVALID" },
        report.errors,
        report.warnings,
        report.members,
        report.warcs,
        report.records,
        report.index_lines,
        report.pages
    );
    let _ = writeln!(text, "{verdict}");
    let json = serde_json::to_value(&report)?;
    Ok(Some(Checked { valid: report.valid, plain: report.valid, json, text, verdict }))
}
