//! A record whose `Content-Length` is short leaves bytes no record frames: `index` and
//! `package` read on to the next record as warcio does (the records warcio reads are the
//! records indexed, line for line as cdxj-indexer writes them), name the bytes with their
//! offset, and `package` keeps every input byte.

use std::path::Path;
use std::process::Command;

use crate::util::{oracle, package_json, repo, webaip};

/// A WARC record: `eol` ends its header lines, `cut` bytes of its block lie past its
/// `Content-Length`.
fn record(n: u32, kind: &str, block: &str, eol: &str, cut: usize) -> String {
    let fields = [
        "WARC/1.0".to_string(),
        format!("WARC-Type: {kind}"),
        format!("WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{n:012}>"),
        "WARC-Date: 2014-01-03T03:03:21Z".to_string(),
        format!("WARC-Target-URI: http://example.com/{n}"),
        "Content-Type: application/http; msgtype=response".to_string(),
        format!("Content-Length: {}", block.len() - cut),
    ];
    format!("{}{eol}{eol}{block}\r\n\r\n", fields.join(eol))
}

fn http(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The parts of a WARC warcio reads whole: a good response, one whose `Content-Length` is
/// short by its last line, one whose header lines end in CR CR LF, a good one.
fn parts() -> Vec<String> {
    let page = "<p>hello</p>\r\n</html>\r\n";
    vec![
        record(1, "response", &http("<p>one</p>"), "\r\n", 0),
        record(2, "response", &http(page), "\r\n", "</html>\r\n".len()),
        record(3, "response", &http("<p>three</p>"), "\r\r\n", 0),
        record(4, "response", &http("<p>four</p>"), "\r\n", 0),
    ]
}

/// Where the bytes past record 2's block start: its end less the line its length misses and
/// the CRLF CRLF after it.
fn gap_offset(parts: &[String]) -> usize {
    parts[0].len() + parts[1].len() - "</html>\r\n\r\n\r\n".len()
}

fn lines(out: &std::process::Output, what: &str) -> Vec<String> {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    let mut v: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    v.sort();
    v
}

fn cdxj_indexer(path: &Path) -> Vec<String> {
    let out = Command::new(repo().join(".venv/bin/cdxj-indexer")).arg(path).output().unwrap();
    lines(&out, "cdxj-indexer")
}

#[test]
fn index_reads_the_records_warcio_reads_and_names_the_bytes_between() {
    let dir = tempfile::tempdir().unwrap();
    let parts = parts();
    let warc = dir.path().join("short.warc");
    std::fs::write(&warc, parts.concat()).unwrap();
    let read = oracle(&warc, false);
    assert_eq!(read.records.len(), 4, "warcio reads every record: {:?}", read.error);

    let o = webaip(&["index", "-q", warc.to_str().unwrap()]);
    let ours = lines(&o, "webaip index");
    assert_eq!(ours.len(), 4);
    assert_eq!(ours, cdxj_indexer(&warc), "line for line as cdxj-indexer");
    let err = String::from_utf8_lossy(&o.stderr);
    let named = format!("short.warc: offset {}: 13 bytes no record frames", gap_offset(&parts));
    assert!(err.contains(&named), "{err}");
    assert!(err.contains("first line \"</html>\""), "{err}");
}

/// More than one line of junk (where warcio stops), and junk at the end: the records around
/// it are indexed and packaged, the package's container is the input byte for byte, and the
/// report names each run of junk at its offset.
#[test]
fn package_keeps_every_byte_and_reports_the_bytes_no_record_frames() {
    let dir = tempfile::tempdir().unwrap();
    let mut parts = parts();
    let junk = "</html>\r\nstill the block\r\n";
    parts[1] = parts[1].replacen("</html>\r\n", junk, 1);
    parts.push("garbage at the end\n".into());
    let bytes = parts.concat();
    let warc = dir.path().join("junk.warc");
    std::fs::write(&warc, &bytes).unwrap();
    let at_end = bytes.len() - parts[4].len();
    let gap_at = parts[0].len() + parts[1].len() - (junk.len() + 4);

    let o = webaip(&["index", "-q", warc.to_str().unwrap()]);
    assert_eq!(lines(&o, "webaip index").len(), 4);

    let out = dir.path().join("pkg");
    let (code, r) = package_json(&warc, &out);
    assert_eq!(code, Some(1), "findings are reported: {r}");
    let c = &r["containers"][0];
    let kept = std::fs::read(out.join(c["path"].as_str().unwrap())).unwrap();
    assert_eq!(kept, bytes.as_bytes(), "every input byte is kept, in place");
    let gaps: Vec<(u64, String)> = c["warc_finding_examples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["message"].as_str().unwrap().contains("no record frames"))
        .map(|f| (f["offset"].as_u64().unwrap(), f["message"].as_str().unwrap().to_string()))
        .collect();
    let offsets: Vec<u64> = gaps.iter().map(|g| g.0).collect();
    assert_eq!(offsets, [gap_at as u64, at_end as u64], "{gaps:?}");
    let lens = [junk.len() + 4, parts[4].len()];
    for ((_, m), len) in gaps.iter().zip(lens) {
        assert!(m.starts_with(&format!("{len} bytes ")), "{m}");
    }
    let o = webaip(&["index", "-q", out.to_str().unwrap()]);
    assert_eq!(lines(&o, "index of the package").len(), 4, "every record is described");
}
