//! HTTP header sections as warcio reads them, on a WARC the test writes: where the section
//! ends (a blank status line, a line of Unicode or ASCII-separator white space) and which
//! lines are fields (continuation lines are not) decide `mime` and `status` as cdxj-indexer
//! decides them.

use super::{assert_same, cdxj_indexer, webaip_index};

fn record(n: u32, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut v = format!(
        "WARC/1.0\r\nWARC-Type: response\r\n\
         WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{n:012}>\r\n\
         WARC-Date: 2020-01-02T03:04:05Z\r\nWARC-Target-URI: {uri}\r\n\
         WARC-Payload-Digest: sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA{n}\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    v.extend_from_slice(block);
    v.extend_from_slice(b"\r\n\r\n");
    v
}

#[test]
fn header_sections_end_and_fold_as_warcio_reads_them() {
    let blocks: [&[u8]; 5] = [
        // A line of 0x1C (white space to Python) ends the section: no Content-Type.
        b"HTTP/1.1 200 OK\r\n\x1c\r\nContent-Type: text/html\r\n\r\nbody",
        // So does a line of U+00A0 in UTF-8.
        b"HTTP/1.1 201 Created\r\nX: y\r\n\xc2\xa0\r\nContent-Type: text/html\r\n\r\nbody",
        // A blank status line ends it at once, and gives no status.
        b"\r\nContent-Type: text/html\r\n\r\nbody",
        // A continuation line is no field.
        b"HTTP/1.1 203 OK\r\nX-A: b\r\n Content-Type: image/png\r\nContent-Type: text/plain\r\n\r\nhi",
        // Blanks and tabs before the colon belong to no name.
        b"HTTP/1.1 204 OK\r\nContent-Type\t : text/css ; charset=x\r\n\r\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("heads.warc");
    let mut bytes = Vec::new();
    for (n, block) in blocks.iter().enumerate() {
        bytes.extend(record(n as u32, &format!("http://example.com/{n}"), block));
    }
    std::fs::write(&warc, bytes).unwrap();
    let ours = webaip_index(&[&warc], &[]);
    assert_eq!(ours.len(), blocks.len(), "{ours:#?}");
    assert_same(&ours, &cdxj_indexer(&[&warc], &[]), "odd HTTP header sections");
}
