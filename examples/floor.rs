//! Rates of the primitives webaip's long jobs are made of, per core, computed by the crate's
//! own code (`webaip::internals::floor`): the floor benchmark (bench/run-floor.sh) derives each
//! job's floor from them. One thread; the machine's other cores should be idle.
//!
//!   cargo run --profile ci --features test-hooks --example floor -- [MIB]
//!   cargo run --profile ci --features test-hooks --example floor -- --file GZ...
//!
//! Prints a table, then one line `FLOOR_JSON {...}` (MB/s per primitive) for the script. Rows
//! marked "not used" are the alternatives measured beside webaip's choice. With `--file`, the
//! codecs are timed on each gzip file's own bytes instead (a job's real input or output): one
//! `FILE_JSON {...}` line each, with its compressed and inflated bytes, the seconds webaip's
//! inflater takes to read it and libdeflate's level 6 to compress its stream again (in 1 MiB
//! pieces).

use std::hint::black_box;
use std::time::Instant;

use webaip::internals::floor;

/// A rate measured: what, on which bytes, MB/s of input.
struct Rate {
    key: &'static str,
    what: &'static str,
    data: &'static str,
    mb_s: f64,
}

/// MB/s of `f` over `len` bytes of input: the best of three runs after a warm-up.
fn rate(len: usize, mut f: impl FnMut()) -> f64 {
    f();
    let best = (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min);
    len as f64 / best / 1e6
}

/// Bytes no compressor shrinks (xorshift), as images and video are.
fn incompressible(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Markup with the repetition and variety of crawled pages (compresses about 4 to 6 times).
fn html_like(len: usize) -> Vec<u8> {
    let words = ["archive", "news", "sport", "weather", "culture", "page", "index", "more"];
    let mut out = Vec::with_capacity(len + 256);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = words[(x % 8) as usize];
        let line = format!(
            "<div class=\"{w}-{}\"><a href=\"/{w}/{}.html\">{w} {} of {}</a></div>\n",
            x % 97,
            (x >> 8) % 100_003,
            (x >> 24) % 1000,
            (x >> 40) % 7919
        );
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(len);
    out
}

fn hashes(random: &[u8], rates: &mut Vec<Rate>) {
    use sha2::Digest;
    let n = random.len();
    let mut push = |key, what, mb_s| rates.push(Rate { key, what, data: "any", mb_s });
    push(
        "sha512",
        "SHA-512 (ring)",
        rate(n, || {
            let _ = black_box(floor::Sha512::digest(random));
        }),
    );
    push(
        "sha512_sha2",
        "SHA-512 (sha2; not used)",
        rate(n, || {
            let _ = black_box(sha2::Sha512::digest(random));
        }),
    );
    push(
        "sha1",
        "SHA-1 (sha1)",
        rate(n, || {
            let _ = black_box(floor::sha1(random));
        }),
    );
    push(
        "sha256",
        "SHA-256 (sha2)",
        rate(n, || {
            let _ = black_box(floor::sha256(random));
        }),
    );
    push(
        "crc32",
        "CRC-32 (crc32fast)",
        rate(n, || {
            let _ = black_box(floor::crc32(random));
        }),
    );
}

fn codecs(data: &[u8], kind: &'static str, rates: &mut Vec<Rate>) {
    let n = data.len();
    let level = 6;
    let mut push = |key, what, mb_s| rates.push(Rate { key, what, data: kind, mb_s });
    let member = floor::gzip_member(data, level).expect("deflate");
    push(
        "deflate",
        "deflate 6, record in memory (libdeflate)",
        rate(n, || {
            let _ = black_box(floor::gzip_member(data, level).expect("deflate"));
        }),
    );
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    push(
        "deflate_streamed",
        "deflate 6, large record (zlib-rs chunks)",
        rate(n, || {
            one.install(|| black_box(floor::gzip_member_streamed(data, level).expect("deflate")));
        }),
    );
    push(
        "inflate",
        "inflate (flate2 zlib-rs, the readers')",
        rate(n, || {
            let _ = black_box(floor::inflate(&member).expect("inflate"));
        }),
    );
    let mut d = libdeflater::Decompressor::new();
    let mut out = vec![0u8; n];
    push(
        "inflate_libdeflate",
        "inflate (libdeflate; not used)",
        rate(n, || {
            let _ = black_box(d.gzip_decompress(&member, &mut out).expect("inflate"));
        }),
    );
    let ratio = n as f64 / member.len() as f64;
    rates.push(Rate { key: "ratio", what: "deflate 6 ratio (x)", data: kind, mb_s: ratio });
}

/// Times inflating `path` (every member) and deflating its stream again, on one core.
fn file_costs(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let compressed = std::fs::metadata(path)?.len();
    let open = || -> std::io::Result<_> {
        let f = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
        Ok(flate2::bufread::MultiGzDecoder::new(f))
    };
    let (mut reader, mut piece) = (open()?, vec![0u8; 256 << 10]);
    let (t, mut inflated) = (Instant::now(), 0u64);
    loop {
        match reader.read(&mut piece)? {
            0 => break,
            n => inflated += n as u64,
        }
    }
    let inflate_s = t.elapsed().as_secs_f64();
    let (mut reader, mut piece, mut deflate_s) = (open()?, vec![0u8; 1 << 20], 0.0);
    loop {
        let mut n = 0;
        while n < piece.len() {
            match reader.read(&mut piece[n..])? {
                0 => break,
                k => n += k,
            }
        }
        if n == 0 {
            break;
        }
        let t = Instant::now();
        let _ = black_box(floor::gzip_member(&piece[..n], 6)?);
        deflate_s += t.elapsed().as_secs_f64();
    }
    Ok(format!(
        "FILE_JSON {{\"path\": \"{path}\", \"compressed\": {compressed}, \"inflated\": {inflated}, \
         \"inflate_s\": {inflate_s:.4}, \"deflate_s\": {deflate_s:.4}}}"
    ))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--file") {
        for path in &args[1..] {
            match file_costs(path) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    eprintln!("{path}: {e}");
                    std::process::exit(1);
                }
            }
        }
        return;
    }
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(32);
    let n = mib << 20;
    let random = incompressible(n);
    let html = html_like(n);
    let mut rates = Vec::new();
    hashes(&random, &mut rates);
    codecs(&html, "html", &mut rates);
    codecs(&random, "incompressible", &mut rates);
    println!("{:<44} {:<15} {:>10}", "primitive (one core)", "data", "MB/s");
    for r in &rates {
        println!("{:<44} {:<15} {:>10.1}", r.what, r.data, r.mb_s);
    }
    let json: Vec<String> =
        rates.iter().map(|r| format!("\"{}/{}\": {:.1}", r.key, r.data, r.mb_s)).collect();
    println!("FLOOR_JSON {{{}}}", json.join(", "));
}
