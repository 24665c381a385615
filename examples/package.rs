//! Packages a harvest (any shape webaip reads) into a new package folder, then prints what it
//! made: one line per package, then one per container.
//!
//!     cargo run --example package -- SOURCE OUT
//!
//! Without a clamd the package records that nothing was scanned; `--deterministic` runs give
//! byte-identical packages.

use webaip::{PackageOptions, Packager};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [source, out] = &args[..] else {
        return Err("usage: package SOURCE OUT".into());
    };
    // Options have defaults: the built-in profile, identification of described payloads.
    let options = PackageOptions::default().deterministic(true);
    // `run_all` makes one package per instance of a PANDAS title; `run` makes exactly one.
    let run = Packager::new(source).out(out).options(options).run_all()?;
    for package in &run.packages {
        println!("package {} {}", package.objid, package.package.display());
        for container in &package.containers {
            println!("  container {} ({} records)", container.path, container.records);
        }
    }
    Ok(())
}
