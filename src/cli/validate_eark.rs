//! `webaip validate --profile eark-csip PACKAGE`: the CSIP 2.2 rules, each by its identifier.

use std::path::Path;

use webaip::export::eark::check::{CheckReport, CsipFinding, check_package, package_around};

/// Checks one E-ARK package (folder or `.zip`; its root `METS.xml` stands for its folder);
/// returns the exit status (0 valid, 1 a MUST rule broken, 2 unreadable). SHOULD and MAY rules
/// not followed are warnings: they do not make the package invalid.
pub fn run(given: &Path, json: bool) -> anyhow::Result<i32> {
    let around = package_around(given);
    let package = around.as_ref().map_or(given, |a| a.folder.as_path());
    if let Some(a) = around.as_ref().filter(|_| !json) {
        let which = match a.of_representation {
            true => "a representation METS.xml",
            false => "the root METS.xml of a package",
        };
        eprintln!(
            "{}: {which}: checking the package folder {}",
            given.display(),
            package.display()
        );
    }
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
            "warnings": report.warnings,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(status);
    }
    print_text(package, &report, status);
    Ok(status)
}

fn print_finding(package: &Path, f: &CsipFinding, level: &str) {
    let path = package.join(&f.path);
    println!("{}:{}: {level} [{}] {}", path.display(), f.line, f.rule, f.message);
}

fn print_text(package: &Path, report: &CheckReport, status: i32) {
    for f in &report.findings {
        print_finding(package, f, "error");
    }
    for f in &report.warnings {
        print_finding(package, f, "warning");
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
    let warnings = match report.warnings.len() {
        0 => String::new(),
        n => format!(", {n} warning(s) under SHOULD/MAY rules"),
    };
    println!(
        "{}: {} (E-ARK CSIP 2.2: {} finding(s){warnings}, {} file(s) verified{not_checked})",
        package.display(),
        if status == 0 { "valid" } else { "INVALID" },
        report.findings.len(),
        report.files_verified
    );
}
