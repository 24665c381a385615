//! The WARC reader on hostile framing (issue 13, item 3): many empty gzip members, a header
//! line of 200 MB without a line end, a header of a million fields. Each is read in a child
//! process whose peak RSS must stay under 64 MB; the oversized headers are errors at the
//! record's offset, not buffers.

use std::io::Write;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use webaip::internals::WarcReader;

use crate::fuzz::child::{is_child, run_child};

const PEAK_RSS_LIMIT: u64 = 64 << 20;

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

const RECORD: &[u8] =
    b"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x:1>\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n";

/// In the child: reads the file named by the environment and prints what happened.
fn read_in_child() {
    let path = std::env::var("WEBAIP_WARC_INPUT").unwrap();
    let mut r = WarcReader::open(&path).unwrap();
    let mut records = 0;
    loop {
        match r.next_record(|_, b| std::io::copy(b, &mut std::io::sink())) {
            Ok(Some((head, _, n))) => {
                records += 1;
                eprintln!("record at {} with {n} bytes", head.offset);
            }
            Ok(None) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    eprintln!("records: {records}");
}

/// Writes a file with `write`, reads it in a child; returns the child's stderr.
fn measured(test: &str, write: impl FnOnce(&mut dyn Write)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.warc");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        write(&mut f);
        f.flush().unwrap();
    }
    let env = [("WEBAIP_WARC_INPUT", path.display().to_string())];
    let run = run_child(test, &env, None, Duration::from_secs(300), &dir.path().join("stderr"));
    eprintln!("{test}: peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.status.success(), "child failed ({:?}): {}", run.status, run.stderr);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB: {}", run.peak_rss >> 20, run.stderr);
    run.stderr
}

#[test]
fn three_hundred_thousand_empty_members_are_skipped_in_flat_memory() {
    const NAME: &str =
        "warc_reader::memory::three_hundred_thousand_empty_members_are_skipped_in_flat_memory";
    if is_child(NAME) {
        return read_in_child();
    }
    let empty = gz(b"");
    let members = 300_000usize;
    let out = measured(NAME, |f| {
        for _ in 0..members {
            f.write_all(&empty).unwrap();
        }
        f.write_all(&gz(RECORD)).unwrap();
    });
    assert!(out.contains(&format!("record at {} with 5 bytes", members * empty.len())), "{out}");
    assert!(out.contains("records: 1"), "{out}");
}

#[test]
fn a_200_mb_header_line_is_an_error_not_a_buffer() {
    const NAME: &str = "warc_reader::memory::a_200_mb_header_line_is_an_error_not_a_buffer";
    if is_child(NAME) {
        return read_in_child();
    }
    let out = measured(NAME, |f| {
        f.write_all(RECORD).unwrap();
        f.write_all(b"WARC/1.1\r\nWARC-Target-URI: http://e.org/").unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..200 {
            f.write_all(&chunk).unwrap();
        }
    });
    assert!(out.contains("record at 0 with 5 bytes"), "{out}");
    let at = RECORD.len();
    assert!(
        out.contains(&format!("record at offset {at}: a header line without a line end")),
        "{out}"
    );
}

#[test]
fn a_header_of_a_million_fields_is_an_error_not_a_buffer() {
    const NAME: &str = "warc_reader::memory::a_header_of_a_million_fields_is_an_error_not_a_buffer";
    if is_child(NAME) {
        return read_in_child();
    }
    let out = measured(NAME, |f| {
        f.write_all(b"WARC/1.1\r\n").unwrap();
        for i in 0..1_000_000 {
            write!(f, "X-{i}: v\r\n").unwrap();
        }
        f.write_all(b"Content-Length: 0\r\n\r\n\r\n\r\n").unwrap();
    });
    assert!(out.contains("record at offset 0: the record header is larger than"), "{out}");
}
