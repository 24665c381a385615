//! `webaip validate --profile eark-csip PACKAGE`: the CSIP 2.2 rules, each by its identifier.

use std::fmt::Write as _;
use std::path::Path;

use webaip::{CsipFinding, EARK_CSIP_PROFILE, EarkValidation, validate_eark};

use super::checked::Checked;

/// Checks one E-ARK package (folder or `.zip`; its root `METS.xml` stands for its folder);
/// None (the error said on stderr) when it cannot be read. SHOULD and MAY rules not followed
/// are warnings: they do not make the package invalid. `chatty`: say on stderr which package
/// a given `METS.xml` stands for.
pub(super) fn check(given: &Path, chatty: bool) -> anyhow::Result<Option<Checked>> {
    let checked = match validate_eark(given) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{}: error: {e}", given.display());
            return Ok(None);
        }
    };
    if let Some(a) = checked.given_mets.as_ref().filter(|_| chatty) {
        let which = match a.of_representation {
            true => "a representation METS.xml",
            false => "the root METS.xml of a package",
        };
        eprintln!(
            "{}: {which}: checking the package folder {}",
            given.display(),
            checked.package.display()
        );
    }
    let report = &checked.report;
    let json = serde_json::json!({
        "package": checked.package.display().to_string(),
        "profile": EARK_CSIP_PROFILE,
        "valid": checked.valid(),
        "files_verified": report.files_verified,
        "files_not_checked": report.files_not_checked,
        "findings": report.findings,
        "warnings": report.warnings,
    });
    let text = report_text(&checked);
    let verdict = text.lines().last().unwrap_or_default().to_owned();
    let valid = checked.valid();
    Ok(Some(Checked { valid, plain: valid, json, text, verdict }))
}

fn finding_text(out: &mut String, package: &Path, f: &CsipFinding, level: &str) {
    let path = package.join(&f.path);
    let _ = writeln!(out, "{}:{}: {level} [{}] {}", path.display(), f.line, f.rule, f.message);
}

fn report_text(checked: &EarkValidation) -> String {
    let (package, report) = (checked.package.as_path(), &checked.report);
    let mut out = String::new();
    for f in &report.findings {
        finding_text(&mut out, package, f, "error");
    }
    for f in &report.warnings {
        finding_text(&mut out, package, f, "warning");
    }
    for n in &report.files_not_checked {
        let mets = package.join(&n.mets);
        let _ = writeln!(
            out,
            "{}:{}: note: {}: checksum not checked (webaip does not compute {})",
            mets.display(),
            n.line,
            n.path,
            n.checksum_type
        );
    }
    let not_checked = match report.files_not_checked.len() {
        0 => String::new(),
        n => format!(", {n} file(s) whose checksum was not checked"),
    };
    let warnings = match report.warnings.len() {
        0 => String::new(),
        n => format!(", {n} warning(s) under SHOULD/MAY rules"),
    };
    let _ = writeln!(
        out,
        "{}: {} (E-ARK CSIP 2.2: {} finding(s){warnings}, {} file(s) verified{not_checked})",
        package.display(),
        if checked.valid() { "valid" } else { "INVALID" },
        report.findings.len(),
        report.files_verified
    );
    out
}
