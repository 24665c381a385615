//! Copying a WARC whose records are larger than memory should hold (issue 24, item 10): the
//! bytes between the WARC reader and the containers are queued in memory only up to a few MiB,
//! then in a temporary file, so two 50 MB records take no more memory than two small ones.

use super::child::launch_webaip;
use crate::util::Package;
use std::io::Write;

/// Every command's bound (issue 24): peak RSS under 64 MB whatever the input's shape.
const PEAK_RSS_LIMIT: u64 = 64 << 20;
const RECORD_BYTES: usize = 50 << 20;

#[test]
fn a_warc_of_50_mb_records_is_copied_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("big.warc");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&warc).unwrap());
        let http = b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n";
        let block_len = http.len() + RECORD_BYTES;
        let chunk: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        for i in 0..2 {
            write!(
                f,
                "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{i}>\r\n\
                 WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://e.org/{i}\r\n\
                 Content-Type: application/http;msgtype=response\r\n\
                 Content-Length: {block_len}\r\n\r\n"
            )
            .unwrap();
            f.write_all(http).unwrap();
            for _ in 0..RECORD_BYTES >> 20 {
                f.write_all(&chunk).unwrap();
            }
            f.write_all(b"\r\n\r\n").unwrap();
        }
        f.flush().unwrap();
    }
    let out = dir.path().join("p");
    let run = launch_webaip(&Package::new().quiet().argv(&out, &[&warc]), dir.path());
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    eprintln!("copy of 2 x 50 MB records: peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB", run.peak_rss >> 20);
    let audit = crate::util::webaip(&["audit", "--deep", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&audit.stdout);
    assert!(text.contains("INTACT"), "{text}");
}
