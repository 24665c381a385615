//! Indexes WARC files or package folders into one sorted CDXJ file, as pywb reads it.
//!
//!     cargo run --example index -- OUT.cdxj INPUT...

use std::path::PathBuf;

use webaip::{IndexOptions, index_warcs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let (Some(output), inputs) = (args.next(), args.collect::<Vec<_>>()) else {
        return Err("usage: index OUT.cdxj INPUT...".into());
    };
    // CDXJ by default; `format` chooses CDX or ZipNum.
    let written = index_warcs(&inputs, &output, &IndexOptions::default())?;
    for file in written {
        println!("wrote {}", file.display());
    }
    Ok(())
}
