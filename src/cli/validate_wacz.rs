//! `webaip validate FILE.wacz`: the deep check of a WACZ.

use std::path::Path;

use webaip::export::wacz::check::{WaczCheckError, check_wacz};

/// Checks one WACZ; returns the exit status (0 valid, 1 findings, 2 unreadable).
pub fn run(wacz: &Path, json: bool) -> anyhow::Result<i32> {
    let shown = wacz.display().to_string();
    let report = match check_wacz(wacz) {
        Ok(r) => r,
        Err(e @ (WaczCheckError::Io { .. } | WaczCheckError::NotZip { .. })) => {
            if json {
                let out =
                    serde_json::json!({"wacz": shown, "valid": false, "unreadable": e.to_string()});
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                eprintln!("{e}");
                println!("{shown}: UNREADABLE");
            }
            return Ok(2);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for f in &report.findings {
            println!("{shown}:{f}");
        }
        println!(
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
    }
    Ok(if report.valid { 0 } else { 1 })
}
