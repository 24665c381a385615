//! Access on WARCs other tools wrote, built here record by record: an `https` revisit of an
//! `http` capture is resolved as pywb resolves it (by key and digest), a ZipNum index named
//! by its bare file name finds its blocks, several records of one id are not taken one
//! silently, inputs that would share a name in the index are refused, bytes that are no text
//! are not printed, and an ARC given to `index` is sent to `migrate`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use sha2::Digest;

use super::sha1_label;
use crate::util::{corpus, webaip_command};

/// One WARC/1.0 record: `fields`, its `Content-Length`, `block`, the CRLF CRLF after it.
fn record(fields: &[(&str, &str)], block: &[u8]) -> Vec<u8> {
    let mut out = b"WARC/1.0\r\n".to_vec();
    for (name, value) in fields {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", block.len()).as_bytes());
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn run(dir: &Path, args: &[&str]) -> Output {
    webaip_command().current_dir(dir).args(args).output().expect("webaip runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const PAGE: &[u8] = b"<html><title>one page</title>the same bytes twice</html>";

/// An `http` response and, a day later, an `https` revisit of it (same SURT key, same payload
/// digest), whose `WARC-Refers-To-Target-URI` is its own `https` URL, as a crawler deduplicating
/// by key writes it.
fn scheme_revisit_warc() -> Vec<u8> {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n";
    let head_of_response = format!("{head}Content-Length: {}\r\n\r\n", PAGE.len());
    let response = [head_of_response.as_bytes(), PAGE];
    let digest = sha1_label(PAGE);
    let mut warc = record(
        &[
            ("WARC-Type", "response"),
            ("WARC-Record-ID", "<urn:uuid:00000000-0000-4000-8000-000000000001>"),
            ("WARC-Date", "2014-05-01T10:00:00Z"),
            ("WARC-Target-URI", "http://example.test/page"),
            ("WARC-Payload-Digest", &digest),
            ("Content-Type", "application/http; msgtype=response"),
        ],
        &response.concat(),
    );
    warc.extend(record(
        &[
            ("WARC-Type", "revisit"),
            ("WARC-Record-ID", "<urn:uuid:00000000-0000-4000-8000-000000000002>"),
            ("WARC-Date", "2014-05-02T10:00:00Z"),
            ("WARC-Target-URI", "https://example.test/page"),
            ("WARC-Payload-Digest", &digest),
            ("WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"),
            ("WARC-Refers-To-Target-URI", "https://example.test/page"),
            ("WARC-Refers-To-Date", "2014-05-01T10:00:00Z"),
            ("Content-Type", "application/http; msgtype=response"),
        ],
        format!("{head}\r\n").as_bytes(),
    ));
    warc
}

/// The `https` revisit of an `http` capture gets the capture's payload through webaip's
/// index, and pywb replays it through that index with the same bytes.
#[test]
fn an_https_revisit_of_an_http_capture_gets_its_payload() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("crawl.warc"), scheme_revisit_warc()).unwrap();
    std::fs::create_dir(d.join("idx")).unwrap();
    let o = run(d, &["index", "crawl.warc", "-o", "idx/all.cdxj"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o =
        run(d, &["get", "--index", "idx/all.cdxj", "--package", ".", "https://example.test/page"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, PAGE);
    assert!(stderr(&o).contains("http://example.test/page at 20140501100000"), "{}", stderr(&o));
    let captures = [("20140502100000".to_string(), "https://example.test/page".to_string())];
    let replayed = crate::dedup::replay::replay(&d.join("idx/all.cdxj"), &[d], &captures);
    let answer = &replayed["https://example.test/page"];
    assert_eq!(answer["status"], 200, "{answer}");
    assert_eq!(answer["sha256"], crate::util::hex(&sha2::Sha256::digest(PAGE)));
}

/// `get --index NAME.idx` run in the index's folder finds `NAME.cdx.gz` beside it.
#[test]
fn a_zipnum_index_named_bare_finds_its_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("crawl.warc"), scheme_revisit_warc()).unwrap();
    let o = run(d, &["index", "--format", "zipnum", "crawl.warc", "-o", "z"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(d, &["get", "--index", "z.idx", "http://example.test/page"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, PAGE);
}

/// Two records of one `WARC-Record-ID`: `get --id` names both and gets neither.
#[test]
fn several_records_of_one_id_are_refused_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let id = "<urn:uuid:00000000-0000-4000-8000-00000000000a>";
    let resource = |uri: &str, body: &[u8]| {
        let fields = [
            ("WARC-Type", "resource"),
            ("WARC-Record-ID", id),
            ("WARC-Date", "2014-05-01T10:00:00Z"),
            ("WARC-Target-URI", uri),
            ("Content-Type", "text/plain"),
        ];
        record(&fields, body)
    };
    let first = resource("http://example.test/a", b"first");
    let warc = [first.clone(), resource("http://example.test/b", b"second")].concat();
    std::fs::write(d.join("ids.warc"), warc).unwrap();
    let o = run(d, &["index", "--record-ids", "ids.warc", "-o", "ids.cdxj"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(d, &["get", "--index", "ids.cdxj", "--id", id]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let said = stderr(&o);
    assert!(said.contains(&format!("2 records carry the id {id}")), "{said}");
    assert!(
        said.contains("ids.warc offset 0")
            && said.contains(&format!("ids.warc offset {}", first.len())),
        "{said}"
    );
}

/// Two `x.warc.gz` of different folders are refused by `index` (their lines could not say
/// which holds a record); a line whose offset falls inside a gzip member is an error that
/// names what is there, without printing the compressed bytes.
#[test]
fn one_name_for_two_inputs_is_refused_and_binary_bytes_are_not_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (folder, name) in [("a", "warcio-example.warc.gz"), ("b", "pywb-dupes.warc.gz")] {
        std::fs::create_dir(d.join(folder)).unwrap();
        std::fs::copy(corpus().join("warc").join(name), d.join(folder).join("x.warc.gz")).unwrap();
    }
    let o = run(d, &["index", "a/x.warc.gz", "b/x.warc.gz", "-o", "both.cdxj"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains("a/x.warc.gz and b/x.warc.gz would both be named \"x.warc.gz\""),
        "{said}"
    );
    assert!(!d.join("both.cdxj").exists());
    // The index of a/x.warc.gz read against b's bytes: offset 2621 is inside a gzip member.
    let o = run(d, &["index", "a/x.warc.gz", "-o", "a.cdxj"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::copy(d.join("b/x.warc.gz"), d.join("x.warc.gz")).unwrap();
    let o = run(d, &["get", "--index", "a.cdxj", "http://example.com/", "--at", "2017"]);
    let said = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("no WARC record there: expected a WARC version line, found binary data"),
        "{said}"
    );
    assert!(said.chars().all(|c| !c.is_control() || c == '\n'), "{said:?}");
    assert!(!said.contains('\u{fffd}'), "{said:?}");
}

/// An ARC file, plain or gzip, given to `index` is refused with the command that makes a
/// WARC of it, and no index is written.
#[test]
fn index_of_an_arc_says_to_migrate_first() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let body = "1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n";
    let arc = format!(
        "filedesc://t.arc 0.0.0.0 20090917120000 text/plain {}\n{body}\n\
         http://example.test/ 192.0.2.1 20090917120001 text/plain 5\nhello\n",
        body.len()
    );
    std::fs::write(d.join("t.arc"), &arc).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(arc.as_bytes()).unwrap();
    std::fs::write(d.join("t.arc.gz"), gz.finish().unwrap()).unwrap();
    for name in ["t.arc", "t.arc.gz"] {
        let o = run(d, &["index", name, "-o", "t.cdxj"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let said = stderr(&o);
        assert!(said.contains(&format!("{name}: an ARC file")), "{said}");
        assert!(said.contains(&format!("webaip migrate {name} -o DIR")), "{said}");
        assert!(!d.join("t.cdxj").exists());
    }
    // What migrate makes of it is indexed.
    let o = run(d, &["migrate", "-q", "t.arc", "-o", "w"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut warcs = std::fs::read_dir(d.join("w")).unwrap().map(|e| e.unwrap().path());
    let warc = warcs.find(|p| p.to_string_lossy().ends_with(".warc.gz")).unwrap();
    let o = Command::new(crate::util::WEBAIP).arg("index").arg(&warc).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("http://example.test/"));
}
