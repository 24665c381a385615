//! Gives back the original ARC files of a package (or of migrated WARC files), each checked
//! against what its migration recorded before it is written.
//!
//!     cargo run --example unmigrate -- OUT_DIR PACKAGE|WARC...

use std::path::PathBuf;

use webaip::{UnmigrateOptions, unmigrate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let (Some(out), inputs) = (args.next(), args.collect::<Vec<_>>()) else {
        return Err("usage: unmigrate OUT_DIR PACKAGE|WARC...".into());
    };
    let done = unmigrate(&inputs, &out, &UnmigrateOptions::default(), &|_| {})?;
    for arc in &done.arcs {
        println!("{} {}", if arc.as_expected() { "OK" } else { "DIFFERS" }, arc.name);
    }
    // An ARC that is not what it should be is reported, and leaves no file.
    if !done.as_expected() {
        std::process::exit(1);
    }
    Ok(())
}
