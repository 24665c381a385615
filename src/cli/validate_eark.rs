//! `webaip validate --profile eark-csip PACKAGE`: the CSIP 2.2 rules, each by its identifier.

use std::path::Path;

use webaip::export::eark::check::check_package;

/// Checks one E-ARK package (folder or `.zip`); returns the exit status (0 valid, 1 findings,
/// 2 unreadable).
pub fn run(package: &Path, json: bool) -> anyhow::Result<i32> {
    let report = match check_package(package) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: error: {e}", package.display());
            return Ok(2);
        }
    };
    let status = if report.findings.is_empty() { 0 } else { 1 };
    if json {
        let v = serde_json::json!({
            "package": package.display().to_string(),
            "profile": "eark-csip",
            "valid": report.findings.is_empty(),
            "files_verified": report.files_verified,
            "files_not_checked": report.files_not_checked,
            "findings": report.findings,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(status);
    }
    for f in &report.findings {
        let path = package.join(&f.path);
        println!("{}:{}: error [{}] {}", path.display(), f.line, f.rule, f.message);
    }
    for n in &report.files_not_checked {
        let mets = package.join(&n.mets);
        println!(
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
    println!(
        "{}: {} (E-ARK CSIP 2.2: {} finding(s), {} file(s) verified{not_checked})",
        package.display(),
        if status == 0 { "valid" } else { "INVALID" },
        report.findings.len(),
        report.files_verified
    );
    Ok(status)
}
