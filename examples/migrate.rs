//! Migrates one ARC file to WARC 1.1 and says whether every payload byte was conserved (the
//! WARC is read back from disk to prove it).
//!
//!     cargo run --example migrate -- INPUT.arc.gz OUTPUT.warc.gz

use std::path::Path;

use webaip::{MigrateOptions, migrate_arc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = &args[..] else {
        return Err("usage: migrate INPUT.arc OUTPUT.warc.gz".into());
    };
    let report = migrate_arc(Path::new(input), Path::new(output), &MigrateOptions::default());
    // A failure is in the report, never a panic: `error` says why, and no output is left.
    if let Some(e) = &report.error {
        eprintln!("{e}");
        std::process::exit(2);
    }
    println!("records {}", report.records_out.values().sum::<u64>());
    println!("conserved {}", report.ok());
    if !report.ok() {
        std::process::exit(1);
    }
    Ok(())
}
