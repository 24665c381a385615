//! Packages every item of a manifest (a CSV, or a folder of harvests) into OUT, resumably,
//! without a virus check, then says what the journal holds.
//!
//!     cargo run --example batch -- MANIFEST OUT

use std::path::PathBuf;

use webaip::{BatchOptions, PackageOptions, VirusCheck, batch_status, run_batch};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let [manifest, out] = &args[..] else {
        return Err("usage: batch MANIFEST OUT".into());
    };
    let package = PackageOptions::default().virus_check(VirusCheck::Disabled);
    let options = BatchOptions::new(out.clone(), package);
    // A second run with the same journal skips what the first did.
    let outcome = run_batch(manifest, &options, &|_| {})?;
    println!("packaged {}, failed {}", outcome.packaged, outcome.failed);
    let status = batch_status(std::slice::from_ref(&options.journal))?;
    println!("journal: {} done of {}", status.total.done, status.total.items);
    if !outcome.complete(&options) {
        std::process::exit(1);
    }
    Ok(())
}
