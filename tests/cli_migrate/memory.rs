//! Hostile compression and framing cannot exhaust memory (issue 13, item 3): `webaip migrate`
//! on hundreds of thousands of empty gzip members, on many tiny records and on a 200 MB line
//! with no line end stays under 64 MB of peak RSS, and its report still accounts for every
//! input byte.
//!
//! Peak RSS is that of the CLI alone (`wait4` on it, from a small launcher process: see
//! `fuzz::child`); `getrusage(RUSAGE_CHILDREN)` here would give the largest of every child the
//! parallel tests have waited for, and even the CLI's own `ru_maxrss` starts from the RSS of
//! the process that forked it.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::fuzz::child::launch;

/// The bound of the issue: flat, whatever the number of members or records.
const PEAK_RSS_LIMIT: u64 = 64 << 20;

pub(crate) const FILEDESC: &[u8] = b"filedesc://x.arc 0.0.0.0 20080101000000 text/plain 66\n\
1 0 test\nURL IP-address Archive-date Content-type Archive-length\n\n";

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Migrates `input` with the CLI; returns the JSON report of the file and the peak RSS.
fn migrate_measured(input: &Path, dir: &Path) -> (serde_json::Value, u64) {
    let report = dir.join("report.json");
    let argv: Vec<String> = [
        crate::util::WEBAIP,
        "migrate",
        "--quiet",
        "-j",
        "2",
        "--out",
        &dir.join("out").display().to_string(),
        "--report",
        &report.display().to_string(),
        &input.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = launch(&argv, &[], None, Duration::from_secs(600), &dir.join("stderr"));
    assert!(
        run.status.success(),
        "{}: migrate failed: {:?} {}",
        input.display(),
        run.status,
        run.stderr
    );
    let rss = run.peak_rss;
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).expect("report written")).unwrap();
    (json["files"][0].clone(), rss)
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn three_hundred_thousand_empty_gzip_members_take_flat_memory_and_every_byte_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.arc.gz");
    let head = gz(FILEDESC);
    let empty = gz(b"");
    let members = 300_000u64;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(&head).unwrap();
        for _ in 0..members {
            f.write_all(&empty).unwrap();
        }
        f.flush().unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let (f, rss) = migrate_measured(&path, dir.path());
    assert!(rss < PEAK_RSS_LIMIT, "peak RSS {} MB for {members} empty members", rss >> 20);
    assert_eq!(f["conservation"]["conserved"], true, "{f}");
    let b = &f["input_bytes"];
    assert_eq!(n(&b["input"]), size);
    assert_eq!(n(&b["members"]), members + 1);
    assert_eq!(n(&b["empty_members"]), members);
    assert_eq!(n(&b["empty_member_bytes"]), members * empty.len() as u64);
    assert_eq!(n(&b["member_bytes"]) + n(&b["raw_bytes"]), size, "{b}");
    assert_eq!(n(&b["decompressed_bytes"]), FILEDESC.len() as u64);
    assert_eq!(n(&b["record_bytes"]) + n(&b["separator_bytes"]), FILEDESC.len() as u64);
    // Every empty member is counted; the first ones are listed with their offsets.
    assert_eq!(n(&f["anomaly_counts"]["empty-gzip-member"]), members);
    let listed: Vec<u64> = f["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "empty-gzip-member")
        .map(|a| n(&a["location"]["member"]))
        .collect();
    // At most 100 of a kind per file are listed (docs/security.md).
    assert_eq!(listed.len(), 100);
    assert_eq!(listed[0], head.len() as u64);
    assert_eq!(listed[1], (head.len() + empty.len()) as u64);
    assert_eq!(n(&f["anomalies_not_listed"]), members - listed.len() as u64);
}

#[test]
fn many_tiny_records_take_flat_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.arc.gz");
    let records = 40_000u64;
    let mut plain_len = FILEDESC.len() as u64;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(&gz(FILEDESC)).unwrap();
        // One member per record, as ARC writers do, and a whole-file member of the rest.
        let mut tail = Vec::new();
        for i in 0..records {
            let rec = format!("http://e.org/{i} 192.0.2.1 20080101000000 text/plain 1\nx\n");
            plain_len += rec.len() as u64;
            if i < records / 2 {
                f.write_all(&gz(rec.as_bytes())).unwrap();
            } else {
                tail.extend_from_slice(rec.as_bytes());
            }
        }
        f.write_all(&gz(&tail)).unwrap();
        f.flush().unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let (f, rss) = migrate_measured(&path, dir.path());
    assert!(rss < PEAK_RSS_LIMIT, "peak RSS {} MB for {records} tiny records", rss >> 20);
    assert_eq!(f["conservation"]["conserved"], true, "{f}");
    let captures: u64 = f["records_in"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "filedesc")
        .map(|(_, v)| n(v))
        .sum();
    assert_eq!(captures, records, "{f}");
    let b = &f["input_bytes"];
    assert_eq!(n(&b["member_bytes"]), size);
    assert_eq!(n(&b["decompressed_bytes"]), plain_len);
    assert_eq!(n(&b["record_bytes"]) + n(&b["separator_bytes"]), plain_len);
    assert_eq!(n(&f["conservation"]["payload_bytes_in"]), FILEDESC.len() as u64 + records);
}

#[test]
fn a_200_mb_header_line_without_line_end_is_kept_as_a_remainder_in_flat_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.arc");
    let good = b"http://e.org/ 192.0.2.1 20080101000000 text/plain 5\nhello\n";
    let long_at = (FILEDESC.len() + good.len()) as u64;
    let line_len = 200u64 << 20;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(FILEDESC).unwrap();
        f.write_all(good).unwrap();
        // Looks like the start of a header line, then 200 MB of fields and no line end.
        f.write_all(b"http://e.org/long ").unwrap();
        let chunk = b"192.0.2.1 ".repeat(1 << 16);
        let mut written = 18u64;
        while written < line_len {
            let k = chunk.len().min((line_len - written) as usize);
            f.write_all(&chunk[..k]).unwrap();
            written += k as u64;
        }
        f.flush().unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(size, long_at + line_len);
    let (f, rss) = migrate_measured(&path, dir.path());
    assert!(rss < PEAK_RSS_LIMIT, "peak RSS {} MB for a 200 MB header line", rss >> 20);
    assert_eq!(f["conservation"]["conserved"], true, "{f}");
    assert_eq!(f["records_in"]["remainder"], 1, "{f}");
    let garbage: Vec<&serde_json::Value> =
        f["anomalies"].as_array().unwrap().iter().filter(|a| a["kind"] == "garbage").collect();
    assert_eq!(garbage.len(), 1, "{f}");
    assert_eq!(n(&garbage[0]["location"]["offset"]), long_at);
    let detail = garbage[0]["detail"].as_str().unwrap();
    assert!(detail.contains(&format!("{line_len} bytes")), "{detail}");
    assert!(detail.contains("no line end within"), "{detail}");
    let b = &f["input_bytes"];
    assert_eq!(n(&b["record_bytes"]) + n(&b["separator_bytes"]), size, "{b}");
    // The remainder's bytes are a payload of the WARC: the 200 MB are conserved, not dropped.
    assert!(n(&f["conservation"]["payload_bytes_out"]) >= line_len);
}
