//! Identifies files by DROID signature with webaip's matcher: one line per file, its path and
//! the PUIDs that survive priorities (comma-separated), or, when none matches, `x-fmt/111` and
//! the text class when the file's first bytes are text (as webaip records it), else nothing;
//! then on stderr how many files per second were identified (loading the signatures not
//! counted).
//!
//!     cargo bench --features test-hooks --bench identify -- [--repeat N] FILE...
//!     cargo bench --features test-hooks --bench identify -- --stdin < PAYLOAD
//!
//! (bench/run-identify.sh runs it beside siegfried; bench/identify_memory.sh gives it one
//! large payload as a stream, `--stdin`, to measure its peak memory.)

use std::io::Write;
use std::time::Instant;

use webaip::internals::{PLAIN_TEXT, Signatures};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` passes --bench; the files are the other arguments.
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let mut repeat = 1usize;
    if args.first().map(String::as_str) == Some("--repeat") && args.len() >= 2 {
        repeat = args[1].parse()?;
        args.drain(..2);
    }
    let loaded = Instant::now();
    let sigs = Signatures::shipped().map_err(|e| e.to_string())?;
    eprintln!(
        "signature file v{} ({} formats, {} signatures) compiled in {:.3} s",
        sigs.version(),
        sigs.formats().len(),
        sigs.signature_count(),
        loaded.elapsed().as_secs_f64()
    );
    let start = Instant::now();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.first().map(String::as_str) == Some("--stdin") {
        // A stream, read once: what a package does with a record's payload.
        let found = sigs.examine_reader(std::io::stdin().lock())?;
        let puids: Vec<&str> = found.formats.iter().map(|f| f.puid.as_str()).collect();
        writeln!(out, "-\t{}\t{}", puids.join(","), found.incomplete.unwrap_or_default())?;
        eprintln!("identified a stream in {:.3} s", start.elapsed().as_secs_f64());
        return Ok(());
    }
    for round in 0..repeat {
        for path in &args {
            let file = std::fs::File::open(path)?;
            let found = sigs.examine_seekable(file)?;
            if round == 0 {
                let puids: Vec<&str> = found.formats.iter().map(|f| f.puid.as_str()).collect();
                match found.text {
                    Some(class) => writeln!(out, "{path}\t{PLAIN_TEXT}\ttext {class}")?,
                    None => writeln!(out, "{path}\t{}", puids.join(","))?,
                }
            }
        }
    }
    out.flush()?;
    let secs = start.elapsed().as_secs_f64();
    let n = args.len() * repeat;
    eprintln!("identified {n} files in {secs:.3} s: {:.0} files/s", n as f64 / secs.max(1e-9));
    Ok(())
}
