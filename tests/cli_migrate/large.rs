//! A record too large to hold in memory (its chunks of text and of noise compressed side by
//! side, the noise stored) is still one gzip member that warcio and gzip read whole, with the
//! payload the ARC had, and the same bytes whatever the number of threads.

use std::io::Read;
use std::process::Command;

use crate::util::{check_with_warcio, gen_arc, migrate, oracle, webaip};

/// The URI `gen_arc.py large` gives its large record.
const LARGE_URI: &str = "http://www.example.org/report.pdf";

#[test]
fn a_large_record_is_one_member_with_the_arcs_payload_at_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let arc = dir.path().join("IAH-20240315103000-00000-large.arc.gz");
    // 3 MiB: over the 2 MiB held in memory, six chunks, half text and half noise.
    gen_arc("large", &arc, &["--size", "200K", "--record-size", "3M"]);
    let name = webaip::internals::output_name(&arc);
    let written: Vec<Vec<u8>> = ["1", "2"]
        .iter()
        .map(|jobs| {
            let out = dir.path().join(format!("j{jobs}"));
            let o = webaip(&[
                "migrate",
                "-q",
                "--deterministic",
                "-j",
                jobs,
                "--out",
                out.to_str().unwrap(),
                arc.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            std::fs::read(out.join(&name)).unwrap()
        })
        .collect();
    assert!(written[0] == written[1], "-j 1 and -j 2 write different bytes");
    let warc = dir.path().join("j2").join(&name);
    let gzip = Command::new("gzip").arg("-t").arg(&warc).output().expect("gzip runs");
    assert!(gzip.status.success(), "gzip -t: {}", String::from_utf8_lossy(&gzip.stderr));

    // warcio reads the record's payload as it read it in the ARC ...
    let from_arc = oracle(&arc, true);
    let from_warc = oracle(&warc, false);
    let large = |o: &crate::util::Oracle| {
        let r = o.records.iter().find(|r| r.uri.as_deref() == Some(LARGE_URI));
        let r = r.expect("the large record");
        (r.payload_len, r.payload_sha512.clone(), r.offset, r.length)
    };
    let (arc_len, arc_sha512, ..) = large(&from_arc);
    let (len, sha512, offset, length) = large(&from_warc);
    assert_eq!(len, 3 << 20);
    assert_eq!((len, sha512), (arc_len, arc_sha512));
    // ... from one gzip member, which ends where the record does.
    let member = &written[1][offset as usize..(offset + length as u64) as usize];
    let mut decoder = flate2::read::GzDecoder::new(member);
    let mut record = Vec::new();
    decoder.read_to_end(&mut record).unwrap();
    assert!(decoder.into_inner().is_empty(), "bytes after the record's first member");
    assert!(record.starts_with(b"WARC/1.1\r\n") && record.ends_with(b"\r\n\r\n"));

    // Every record, each in its own member, at the offsets the migration reported.
    check_with_warcio(&migrate(&arc));
}
