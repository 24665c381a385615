//! Exports a package for access and for exchange: as a WACZ (replayable by
//! ReplayWeb.page) and as an E-ARK 2.2 archival package (AIP, a `.zip`).
//!
//!     cargo run --example export -- PACKAGE OUT.wacz OUT-eark.zip

use std::path::Path;

use webaip::{EarkType, WaczOptions, export_eark, export_wacz};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [package, wacz, eark] = &args[..] else {
        return Err("usage: export PACKAGE OUT.wacz OUT-eark.zip".into());
    };
    let package = Path::new(package);
    // Each container is checked against the SHA-512 its METS states while it is copied.
    let w = export_wacz(package, Path::new(wacz), &WaczOptions::default())?;
    println!("wacz {}", w.wacz.display());
    let e = export_eark(package, Path::new(eark), EarkType::Aip)?;
    println!("eark {} ({} data files)", e.written.display(), e.data_files);
    Ok(())
}
