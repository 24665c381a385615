//! Makes the archival package (AIP) of a submission package: audits it, then writes the AIP
//! in a folder of OUT named as the submission's.
//!
//!     cargo run --example ingest -- SUBMISSION OUT

use std::path::{Path, PathBuf};

use webaip::{IngestOptions, ingest_package};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [submission, out] = &args[..] else {
        return Err("usage: ingest SUBMISSION OUT".into());
    };
    let options = IngestOptions { out: PathBuf::from(out), ..Default::default() };
    let report = ingest_package(Path::new(submission), &options)?;
    println!("aip {} {}", report.objid, report.aip.display());
    Ok(())
}
