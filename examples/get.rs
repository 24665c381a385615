//! Gets the payload of a URL's latest capture through a CDXJ index (its containers below
//! the index's folder), checked against the index line and its digest, into a new file.
//!
//!     cargo run --example get -- INDEX.cdxj URL OUT

use std::path::PathBuf;

use webaip::{GetOptions, RecordWanted, get_record_into};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [index, url, out] = &args[..] else {
        return Err("usage: get INDEX.cdxj URL OUT".into());
    };
    let wanted = RecordWanted::Url { url: url.clone(), at: None };
    // The payload by default; `part: RecordPart::Record` gets the record as stored.
    let options = GetOptions { indexes: vec![PathBuf::from(index)], ..GetOptions::default() };
    let got = get_record_into(&wanted, &options, out.as_ref())?;
    println!("{} bytes, digest verified {}", got.written, got.digest_verified);
    Ok(())
}
