//! Audits a package against its own METS, reading every record (`deep`): prints the verdict,
//! then each finding; exits 1 when the package is not intact.
//!
//!     cargo run --example audit -- PACKAGE

use std::path::Path;

use webaip::{AuditOptions, audit_package};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(package) = std::env::args().nth(1) else {
        return Err("usage: audit PACKAGE".into());
    };
    let options = AuditOptions { deep: true, ..Default::default() };
    let report = audit_package(Path::new(&package), &options)?;
    println!("intact {}", report.intact);
    for finding in &report.findings {
        println!("  finding: {} {}: {}", finding.rule, finding.file, finding.message);
    }
    if !report.intact {
        std::process::exit(1);
    }
    Ok(())
}
