//! WARC files read as captures against warcio, and payloads read again from their records.

/// WARC files as captures (`sources::warc_captures`): every `response` and `resource` record
/// with a target URI of every corpus WARC, and of one whose records share a single gzip stream,
/// is a capture in warcio's order with warcio's URL and payload bytes (SHA-512), read after the
/// whole file was iterated (payloads are read again from their records, or were kept when their
/// gzip member is shared). A file warcio cannot read to its end fails here too, with its name
/// and an offset, after the same captures.
#[test]
fn warc_captures_are_the_records_warcio_reads() {
    use crate::test_support::corpus;

    let dir = tempfile::tempdir().unwrap();
    let mut warcs: Vec<_> =
        std::fs::read_dir(corpus().join("warc")).unwrap().map(|e| e.unwrap().path()).collect();
    warcs.sort();
    warcs.extend(generated_warcs(dir.path()));
    let mut held = Held::default();
    for warc in warcs {
        let name = warc.file_name().unwrap().to_string_lossy().into_owned();
        let o = warcio_of(&warc, &name, dir.path());
        let expected: Vec<_> = o
            .records
            .iter()
            .filter(|r| {
                matches!(r.rec_type.as_str(), "response" | "resource")
                    && r.uri.as_deref().is_some_and(|u| !u.is_empty())
            })
            .collect();
        let read = read_captures(&warc, &name);
        match (&o.error, &read.failed) {
            (None, None) => {}
            (Some(_), Some(e)) => {
                assert!(e.contains(&name) && e.contains("offset"), "{name}: {e}")
            }
            (theirs, ours) => panic!("{name}: warcio {theirs:?}, webaip {ours:?}"),
        }
        if read.failed.is_none() {
            assert_eq!(read.captures.len(), expected.len(), "{name}: captures vs warcio's records");
        }
        for (c, theirs) in read.captures.iter().zip(&expected) {
            held.compare(c, theirs, &name);
        }
    }
    assert!(held.checked > 100, "only {} captures checked", held.checked);
    assert!(
        held.in_shared_member > 5,
        "only {} captures in a shared gzip member",
        held.in_shared_member
    );
    // The two big blocks of each generated file are read again (and any a corpus file has);
    // of the one-stream file, from the start of the stream.
    let (again, in_member) = (held.again, held.again_in_member);
    assert!(again >= 4 && in_member == 2, "{again} read again, {in_member} in member");
    assert!(held.in_memory > 100, "{} in memory", held.in_memory);
}

/// WARC files written into `dir`: blocks over 1 MiB (not kept in memory by their head) between
/// small ones, written plain, one gzip member per record, and as one gzip stream (every record
/// after the first shares its member); and a corpus file as one stream.
fn generated_warcs(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let big = |n: usize, seed: u8| -> Vec<u8> {
        (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 9) as u8).collect()
    };
    let mut response = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n".to_vec();
    response.extend(big(1_300_000, 7));
    let records = [
        warc_record("resource", "small", b"small"),
        warc_record("resource", "big", &big(1_500_000, 3)),
        warc_record("response", "big-response", &response),
        warc_record("resource", "after", b"after"),
    ];
    let jwat =
        std::fs::read(crate::test_support::corpus().join("warc/jwat-valid-warcfile-utf8.warc"));
    let generated = [
        ("big.warc", records.concat()),
        ("big-members.warc.gz", records.iter().flat_map(|r| gzip(r)).collect()),
        ("big-one-stream.warc.gz", gzip(&records.concat())),
        ("jwat-one-stream.warc.gz", gzip(&jwat.unwrap())),
    ];
    let mut paths = Vec::new();
    for (name, bytes) in generated {
        std::fs::write(dir.join(name), bytes).unwrap();
        paths.push(dir.join(name));
    }
    paths
}

/// One WARC/1.1 record of `kind` for `http://e.org/{uri}` holding `block`.
fn warc_record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:{uri}>\r\n\
         WARC-Date: 2024-03-15T10:30:06Z\r\nWARC-Target-URI: http://e.org/{uri}\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// What warcio reads of `warc`: it refuses a gzip stream holding several records, so such a
/// file is given to it decompressed (written into `dir`).
fn warcio_of(
    warc: &std::path::Path,
    name: &str,
    dir: &std::path::Path,
) -> crate::test_support::Warcio {
    use std::io::Read;
    let o = crate::test_support::warcio(warc);
    if !o.error.as_deref().is_some_and(|e| e.contains("non-chunked gzip")) {
        return o;
    }
    let mut plain = Vec::new();
    let file = std::fs::File::open(warc).unwrap();
    flate2::read::MultiGzDecoder::new(file).read_to_end(&mut plain).unwrap();
    let unzipped = dir.join(format!("{name}.warc"));
    std::fs::write(&unzipped, plain).unwrap();
    crate::test_support::warcio(&unzipped)
}

/// The captures read of a WARC, up to the error that stopped the reading.
struct Read {
    captures: Vec<crate::capture::Capture>,
    failed: Option<String>,
}

fn read_captures(warc: &std::path::Path, name: &str) -> Read {
    let mut source = super::WarcCaptures::open(warc, name.to_string()).unwrap();
    let mut read = Read { captures: Vec::new(), failed: None };
    for c in source.by_ref() {
        match c {
            Ok(c) => read.captures.push(c),
            Err(e) => {
                read.failed = Some(e.to_string());
                break;
            }
        }
    }
    read
}

/// Captures compared, and their payloads by how they are held: in memory (read whole with
/// their head), or read again from their record (from the start of a shared gzip member).
#[derive(Default)]
struct Held {
    checked: usize,
    in_shared_member: usize,
    in_memory: usize,
    again: usize,
    again_in_member: usize,
}

impl Held {
    /// Compares capture `c` of file `name` with warcio's record, and counts how it is held.
    fn compare(
        &mut self,
        c: &crate::capture::Capture,
        theirs: &crate::test_support::WarcioRecord,
        name: &str,
    ) {
        use crate::capture::{CaptureKind, Payload};
        use sha2::{Digest, Sha512};
        use std::io::Read;
        let at = format!("{name} at {:?}: {}", c.provenance.offset, c.uri);
        assert_eq!(Some(&c.uri), theirs.uri.as_ref(), "{at}: URL");
        assert_eq!(c.kind == CaptureKind::Response, theirs.http, "{at}: HTTP or not");
        let mut payload = Vec::new();
        c.payload.open().unwrap().read_to_end(&mut payload).unwrap();
        assert_eq!(payload.len() as u64, c.payload.len(), "{at}: stated length");
        assert_eq!(payload.len() as u64, theirs.payload_len, "{at}: payload length");
        let sha: String = Sha512::digest(&payload).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(sha, theirs.payload_sha512, "{at}: payload bytes");
        self.in_shared_member += usize::from(c.provenance.offset_in_member.is_some());
        match &c.payload {
            Payload::Bytes(_) => self.in_memory += 1,
            Payload::InRecord(_) if c.provenance.offset_in_member.is_some() => {
                self.again_in_member += 1
            }
            Payload::InRecord(_) => self.again += 1,
            other => panic!("{at}: {other:?}"),
        }
        self.checked += 1;
    }
}

/// A WARC record whose date is no W3C date-time is no capture: a quirk with its offset says so,
/// and the records around it are still yielded. A payload read again from its file (over 1
/// MiB) whose record is gone since fails with the file's name instead of giving other bytes.
#[test]
fn warc_captures_report_an_unreadable_date_and_a_record_gone() {
    use super::WarcCaptures;
    use crate::sources::capture::CaptureSource;
    use std::io::Read;

    let record = |date: &str, uri: &str, body: &str| {
        format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:{uri}>\r\n\
             WARC-Date: {date}\r\nWARC-Target-URI: http://e.org/{uri}\r\n\
             Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
    };
    let first = record("2024-03-15T10:30:06Z", "a", "first");
    let second = record("the 15th of March", "b", "second");
    // Over 1 MiB: not kept in memory, read again from the file when asked for.
    let third_body = "third ".repeat(200_000);
    let third = record("2024-03", "c", &third_body);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dates.warc");
    std::fs::write(&path, format!("{first}{second}{third}")).unwrap();
    let mut source = WarcCaptures::open(&path, "dates.warc".into()).unwrap();
    let captures: Vec<_> = source.by_ref().collect::<Result<_, _>>().unwrap();
    let uris: Vec<_> = captures.iter().map(|c| c.uri.as_str()).collect();
    assert_eq!(uris, ["http://e.org/a", "http://e.org/c"]);
    let q = source.quirks();
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!(q[0].kind, "unreadable-warc-date");
    assert_eq!(q[0].offset, Some(first.len() as u64));
    assert!(q[0].detail.contains("the 15th of March"), "{}", q[0].detail);
    let mut third_payload = String::new();
    captures[1].payload.open().unwrap().read_to_string(&mut third_payload).unwrap();
    assert_eq!(third_payload, third_body);
    // The file is rewritten in place: where the record was, there is none any more.
    std::fs::write(&path, "x".repeat(first.len() + second.len() + third.len())).unwrap();
    let err = captures[1].payload.open().map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("dates.warc") && err.contains("not there any more"), "{err}");
}

/// Payloads of a WARC compressed as one gzip stream (every record in one member) are read
/// through one decompressor left where the last read stopped (issue 24: reading each from the
/// stream's start was quadratic). Whatever the order of reads (forwards, partial, backwards,
/// two at once), each payload is the bytes that were written.
#[test]
fn one_stream_payloads_read_in_any_order_are_their_bytes() {
    use super::WarcCaptures;
    use std::io::{Read, Write};

    let blocks: Vec<Vec<u8>> = (0..6u32)
        .map(|k| (0..1_200_000u32 + k * 1000).map(|i| (i.wrapping_mul(k + 3) >> 3) as u8).collect())
        .collect();
    let mut plain = Vec::new();
    for (k, b) in blocks.iter().enumerate() {
        let head = format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:{k}>\r\n\
             WARC-Date: 2024-03-15T10:30:06Z\r\nWARC-Target-URI: http://e.org/{k}\r\n\
             Content-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
            b.len()
        );
        plain.extend_from_slice(head.as_bytes());
        plain.extend_from_slice(b);
        plain.extend_from_slice(b"\r\n\r\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.warc.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();

    let captures: Vec<_> =
        WarcCaptures::open(&path, "one.warc.gz".into()).unwrap().map(|c| c.unwrap()).collect();
    assert_eq!(captures.len(), blocks.len());
    let whole = |k: usize| {
        let mut v = Vec::new();
        captures[k].payload.open().unwrap().read_to_end(&mut v).unwrap();
        assert!(
            v == blocks[k],
            "payload {k}: {} bytes, not the {} written",
            v.len(),
            blocks[k].len()
        );
    };
    // Forwards, each only begun: the next read continues past what was left unread.
    for (k, c) in captures.iter().enumerate() {
        let mut head = [0u8; 100];
        c.payload.open().unwrap().read_exact(&mut head).unwrap();
        assert_eq!(head[..], blocks[k][..100], "head of payload {k}");
    }
    // Backwards: each read starts again before the one kept.
    for k in (0..blocks.len()).rev() {
        whole(k);
    }
    // Forwards, whole.
    (0..blocks.len()).for_each(whole);
    // Two open at once: the second gets a decompressor of its own.
    let mut a = captures[4].payload.open().unwrap();
    whole(2);
    let mut v = Vec::new();
    a.read_to_end(&mut v).unwrap();
    assert!(v == blocks[4], "payload 4 read beside another");
    whole(5);
}
