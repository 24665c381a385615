//! The WARC reader on WARC files written by other tools (0.17, 1.0, 1.1; plain and gzip):
//! the same records at the same offsets as warcio finds.

use sha2::{Digest, Sha512};

use super::WarcReader;
use crate::formats::digest::hex;
use crate::formats::http::{HttpHead, response_head};
use crate::test_support::{corpus, warcio};

#[test]
fn corpus_warcs_read_like_warcio_reads_them() {
    let mut names: Vec<_> =
        std::fs::read_dir(corpus().join("warc")).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    assert!(names.len() >= 12);
    for path in names {
        let o = warcio(&path);
        if o.error.as_deref().is_some_and(|e| e.contains("non-chunked gzip")) {
            whole_file_gzip_is_read_record_by_record(&path);
            continue;
        }
        let mut r = WarcReader::open(&path).unwrap();
        let mut i = 0;
        loop {
            let got = r.next_record(|head, block| {
                let mut v = Vec::new();
                block.read_to_end(&mut v)?;
                let is_http = matches!(head.header.warc_type(), Some("response" | "revisit"))
                    && head
                        .header
                        .target_uri()
                        .is_some_and(|u| u.starts_with("http:") || u.starts_with("https:"));
                let is_request = head.header.warc_type() == Some("request")
                    && head.header.target_uri().is_some_and(|u| u.starts_with("http"));
                let start = match (is_http, response_head(&v)) {
                    (true, HttpHead::Complete(n)) => n,
                    // Requests: the headers end at the first empty line.
                    _ if is_request => {
                        v.windows(4).position(|w| w == b"\r\n\r\n").map_or(v.len(), |p| p + 4)
                    }
                    _ => 0,
                };
                Ok((v.len(), hex(&Sha512::digest(&v[start..]))))
            });
            let Some((head, end, (block_len, payload_sha))) =
                got.unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            else {
                break;
            };
            let theirs = &o.records[i];
            let at = format!("{} record {i}", path.display());
            assert_eq!(head.offset, theirs.offset, "{at}: offset");
            // warcio keeps the tab of a folded `WARC-Type:\n\twarcinfo`; the value is `warcinfo`.
            assert_eq!(head.header.warc_type(), Some(theirs.rec_type.trim()), "{at}: type");
            assert_eq!(head.header.content_length(), Some(block_len as u64), "{at}: block length");
            if r.is_gzip() {
                assert!(end.member_ended, "{at}: one member per record");
                assert_eq!((end.end - head.offset) as i64, theirs.length, "{at}: member length");
            }
            // warcio parses HTTP headers of responses (and non-empty revisits); compare payloads
            // where both locate them the same way.
            if theirs.rec_type != "revisit" {
                assert_eq!(payload_sha, theirs.payload_sha512, "{at}: payload");
            }
            i += 1;
        }
        assert_eq!(i, o.records.len(), "{}: record count", path.display());
        assert_eq!(o.error, None, "{}", path.display());
    }
}

/// warcio refuses a WARC compressed as one gzip member; we read it, and say where each record
/// sits inside the member.
fn whole_file_gzip_is_read_record_by_record(path: &std::path::Path) {
    let mut r = WarcReader::open(path).unwrap();
    let mut inside = Vec::new();
    while let Some((head, end, ())) = r.next_record(|_, _| Ok(())).unwrap() {
        assert_eq!(head.offset, 0, "all records are in the member at offset 0");
        inside.push((head.offset_in_member, end.member_ended));
    }
    assert!(inside.len() > 1, "{}: {inside:?}", path.display());
    assert!(inside.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(inside.last().unwrap().1, "the member ends with the last record");
}
