//! One hand-made fixture per tolerated oddity (INPUT_FORMATS.md §2.6), each with its expected
//! outcome: what the reader frames, what it reports, and that the migrated WARC reads back in
//! warcio with every payload intact.

use std::io::{Read, Write};
use std::path::PathBuf;

use flate2::Compression;
use flate2::write::GzEncoder;
use webaip::internals::{AnomalyKind, ArcReader, RecordKind, WarcReader};

use crate::util::{check_with_warcio, migrate, report_of, webaip_command};

/// A Heritrix v1 filedesc: its length (77) counts the blank line that follows it.
const FILEDESC: &[u8] = b"filedesc://t.arc 0.0.0.0 20060503101500 text/plain 77\n\
1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n\n";

const PAGE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 26\r\n\r\n<html><p>Hello</p></html>\n";

/// A v1 record: header line with the given length field, then the body (no separator).
fn record_with_len(url: &str, mime: &str, len: &str, body: &[u8]) -> Vec<u8> {
    let mut v = format!("{url} 192.0.2.10 20060503101503 {mime} {len}\n").into_bytes();
    v.extend_from_slice(body);
    v
}

/// A well-formed v1 record followed by its blank separator line.
fn record(url: &str, mime: &str, body: &[u8]) -> Vec<u8> {
    let mut v = record_with_len(url, mime, &body.len().to_string(), body);
    v.push(b'\n');
    v
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn fixture(name: &str, bytes: &[u8]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    Fixture { _dir: dir, path }
}

/// What the reader framed: (kind, url, body) per record, every anomaly kind met.
struct Framed {
    records: Vec<(RecordKind, String, Vec<u8>)>,
    anomalies: Vec<AnomalyKind>,
}

fn frame(f: &Fixture) -> Framed {
    let mut r = ArcReader::open(&f.path).unwrap();
    let mut records = Vec::new();
    let mut anomalies = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        let mut body = Vec::new();
        r.body_reader(&rec).read_to_end(&mut body).unwrap();
        let url = rec.header.as_ref().map(|h| h.url_str()).unwrap_or_default();
        anomalies.extend(rec.anomalies.iter().map(|a| a.kind));
        records.push((rec.kind, url, body));
    }
    anomalies.extend(r.file_anomalies().iter().map(|a| a.kind));
    Framed { records, anomalies }
}

/// Frames, migrates and checks the WARC with warcio; returns the framing.
fn check(name: &str, bytes: &[u8]) -> Framed {
    let f = fixture(name, bytes);
    let framed = frame(&f);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    assert_eq!(
        m.records.len(),
        framed.records.len() + 2,
        "warcinfo, one WARC record per ARC record, the rebuild record"
    );
    check_rebuild(&f.path, &m.output);
    framed
}

/// The ARC's stream rebuilt from the WARC by an independent reader (warcio and zlib,
/// `rebuild_check.py`, following docs/arc-rebuild.md) equals the original's, with the same gzip
/// member boundaries, every record's CRC matching and the stated digests right.
/// Returns the checker's verdict (`file_identical`: the `.arc.gz` compressed again, by Python's
/// zlib, with the stated headers and settings, is the original file).
pub(crate) fn check_rebuild(arc: &std::path::Path, warc: &std::path::Path) -> serde_json::Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/arc_tolerance/rebuild_check.py");
    let o = std::process::Command::new(crate::util::oracle_python())
        .arg(script)
        .arg(arc)
        .arg(warc)
        .output()
        .unwrap();
    assert!(o.status.success(), "rebuild_check: {}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let name = arc.display();
    assert_eq!(v["equal"], true, "{name}: rebuilt stream differs: {v}");
    assert_ne!(v["bounds_equal"], false, "{name}: member boundaries differ: {v}");
    assert_eq!(v["crc_failures"], serde_json::json!([]), "{name}: {v}");
    assert_eq!(v["stated_stream_sha512_ok"], true, "{name}: {v}");
    assert_eq!(v["stated_file_sha512_ok"], true, "{name}: {v}");
    assert_eq!(v["rebuildable"], "yes", "{name}: {v}");
    v
}

fn concat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn clean_v1_file_has_no_anomalies() {
    let dns = b"20060503101501\nwww.example.org.\t3600\tIN\tA\t192.0.2.10\n";
    let bytes = concat(&[
        FILEDESC,
        &record("dns:www.example.org", "text/dns", dns),
        &record("http://www.example.org/", "text/html", PAGE),
    ]);
    let f = check("IAH-20060503101500-00000-t.arc", &bytes);
    assert!(f.anomalies.is_empty(), "{:?}", f.anomalies);
    assert_eq!(f.records.len(), 3);
    assert_eq!(f.records[0].0, RecordKind::Filedesc);
    assert_eq!(f.records[1].2, dns);
    assert_eq!(f.records[2].2, PAGE);
}

#[test]
fn url_with_spaces_is_kept_whole() {
    let bytes = concat(&[FILEDESC, &record("http://e.org/a b?c=d e", "text/html", PAGE)]);
    let f = check("space.arc", &bytes);
    assert_eq!(f.records[1].1, "http://e.org/a b?c=d e");
    assert!(f.anomalies.contains(&AnomalyKind::SpaceInUrl));
    assert!(f.anomalies.contains(&AnomalyKind::InvalidUri));
}

#[test]
fn crlf_header_lines_and_lf_only_http_headers() {
    let lf_page = b"HTTP/1.0 200 OK\nContent-Type: text/html\n\n<p>lf</p>";
    let mut rec = format!("http://e.org/ 192.0.2.1 20060503101503 text/html {}\r\n", lf_page.len())
        .into_bytes();
    rec.extend_from_slice(lf_page);
    rec.extend_from_slice(b"\n");
    let f = check("crlf.arc", &concat(&[FILEDESC, &rec]));
    assert_eq!(f.records[1].2, lf_page);
    assert!(f.anomalies.is_empty(), "{:?}", f.anomalies);
}

#[test]
fn declared_length_too_long_is_cut_at_the_next_record() {
    let bad = record_with_len("http://e.org/1", "text/html", &(PAGE.len() + 40).to_string(), PAGE);
    let bytes = concat(&[FILEDESC, &bad, b"\n", &record("http://e.org/2", "text/html", PAGE)]);
    let f = check("overrun.arc", &bytes);
    assert_eq!(f.records.len(), 3);
    assert_eq!(f.records[1].2, PAGE);
    assert_eq!(f.records[2].1, "http://e.org/2");
    assert!(f.anomalies.contains(&AnomalyKind::LengthMismatch));
}

#[test]
fn declared_length_too_short_runs_to_the_next_record() {
    let bad = record_with_len("http://e.org/1", "text/html", &(PAGE.len() - 7).to_string(), PAGE);
    let bytes = concat(&[FILEDESC, &bad, b"\n", &record("http://e.org/2", "text/html", PAGE)]);
    let f = check("short.arc", &bytes);
    assert_eq!(f.records.len(), 3);
    assert_eq!(f.records[1].2, PAGE);
    assert!(f.anomalies.contains(&AnomalyKind::LengthMismatch));
}

#[test]
fn filedesc_length_without_the_separator_is_accepted() {
    // The IA spec's own example counts 76 (no separator), Heritrix counts 77.
    let spec_view = b"filedesc://t.arc 0.0.0.0 20060503101500 text/plain 76\n\
1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n\n";
    let f =
        check("specview.arc", &concat(&[spec_view, &record("http://e.org/", "text/html", PAGE)]));
    assert_eq!(f.records.len(), 2);
    assert_eq!(f.records[1].2, PAGE);
    assert!(!f.anomalies.contains(&AnomalyKind::LengthMismatch));
}

#[test]
fn missing_separator_between_records() {
    let mut first = record("http://e.org/1", "text/html", PAGE);
    first.pop();
    let bytes = concat(&[FILEDESC, &first, &record("http://e.org/2", "text/html", PAGE)]);
    let f = check("nosep.arc", &bytes);
    assert_eq!(f.records.len(), 3);
    assert_eq!(f.records[1].2, PAGE);
    assert_eq!(f.records[2].2, PAGE);
    assert!(f.anomalies.contains(&AnomalyKind::MissingSeparator));
}

#[test]
fn extra_blank_lines_between_records() {
    let bytes = concat(&[
        FILEDESC,
        &record("http://e.org/1", "text/html", PAGE),
        b"\n\r\n\n",
        &record("http://e.org/2", "text/html", PAGE),
    ]);
    let f = check("blanks.arc", &bytes);
    assert_eq!(f.records.len(), 3);
    assert!(f.anomalies.contains(&AnomalyKind::ExtraBlankLines));
}

#[test]
fn garbage_between_records_becomes_a_remainder_record() {
    let garbage = b"\x00\x01 some bytes that are no record\nand another line\n";
    let bytes = concat(&[
        FILEDESC,
        &record("http://e.org/1", "text/html", PAGE),
        garbage,
        &record("http://e.org/2", "text/html", PAGE),
    ]);
    let f = check("garbage.arc", &bytes);
    assert_eq!(f.records.len(), 4);
    assert_eq!(f.records[2].0, RecordKind::Remainder);
    assert_eq!(f.records[2].2, garbage);
    assert_eq!(f.records[3].2, PAGE);
    assert!(f.anomalies.contains(&AnomalyKind::Garbage));
}

#[test]
fn leading_garbage_before_the_first_record_is_kept() {
    let bytes = concat(&[b"junk\n", FILEDESC, &record("http://e.org/", "text/html", PAGE)]);
    let f = check("lead.arc", &bytes);
    assert_eq!(f.records[0].0, RecordKind::Remainder);
    assert_eq!(f.records[0].2, b"junk\n");
    assert_eq!(f.records[1].0, RecordKind::Filedesc);
}

#[test]
fn truncated_last_record_keeps_what_is_there_and_says_so() {
    let full = record("http://e.org/", "text/html", PAGE);
    let cut = &full[..full.len() - 12];
    let f = fixture("trunc.arc", &concat(&[FILEDESC, cut]));
    let framed = frame(&f);
    assert!(framed.anomalies.contains(&AnomalyKind::Truncated));
    let body_start = cut.iter().position(|&b| b == b'\n').unwrap() + 1;
    assert_eq!(framed.records[1].2, &cut[body_start..]);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    let mut r = WarcReader::open(&m.output).unwrap();
    let mut truncated = Vec::new();
    while let Some((h, _, _)) = r.next_record(|_, _| Ok(())).unwrap() {
        truncated.push(h.header.get("WARC-Truncated").map(str::to_string));
    }
    assert_eq!(truncated, vec![None, None, Some("unspecified".to_string()), None]);
    check_rebuild(&f.path, &m.output);
}

#[test]
fn file_without_filedesc() {
    let f = check("nofd.arc", &record("http://e.org/", "text/html", PAGE));
    assert_eq!(f.records.len(), 1);
    assert!(f.anomalies.contains(&AnomalyKind::NoFiledesc));
}

#[test]
fn unparseable_date_and_length() {
    let mut bad_date = b"http://e.org/d 192.0.2.1 2006-05-03 text/html ".to_vec();
    bad_date.extend(format!("{}\n", PAGE.len()).as_bytes());
    bad_date.extend_from_slice(PAGE);
    bad_date.push(b'\n');
    let bad_len = concat(&[&record_with_len("http://e.org/l", "text/html", "abc", PAGE), b"\n"]);
    let bytes = concat(&[FILEDESC, &bad_len, &record("http://e.org/n", "text/html", PAGE)]);
    let f = check("badlen.arc", &bytes);
    assert_eq!(f.records[1].2, PAGE);
    assert_eq!(f.records[2].1, "http://e.org/n");
    assert!(f.anomalies.contains(&AnomalyKind::BadLength));
    // A date field that is not 14 digits: read leniently at a record boundary, WARC-Date falls
    // back to the previous record's date.
    let f = fixture("baddate.arc", &concat(&[FILEDESC, &bad_date]));
    let framed = frame(&f);
    assert_eq!(framed.records.len(), 2);
    assert!(
        framed.anomalies.contains(&AnomalyKind::FieldCount)
            || framed.anomalies.contains(&AnomalyKind::BadDate)
    );
    let m = migrate(&f.path);
    check_with_warcio(&m);
    assert_eq!(m.records[2].date, "2006-05-03T10:15:00Z");
}

#[test]
fn bodies_without_http_headers_and_http_0_9() {
    let redacted = b"This content has been removed";
    let http09 = b"<html><body>HTTP/0.9 had no headers</body></html>";
    let truncated_head = b"HTTP/1.1 200 OK\r\nContent-Type: text/ht";
    let bytes = concat(&[
        FILEDESC,
        &record("http://e.org/r", "text/html", redacted),
        &record("http://e.org/09", "text/html", http09),
        &record("http://e.org/t", "no-type", truncated_head),
    ]);
    let f = fixture("nohttp.arc", &bytes);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    let types: Vec<_> = m.records.iter().map(|r| r.warc_type.as_str()).collect();
    assert_eq!(types, ["warcinfo", "metadata", "resource", "resource", "resource", "metadata"]);
    assert_eq!(m.records[2].written.digests.payload_len, redacted.len() as u64);
    assert_eq!(m.records[3].written.digests.payload_len, http09.len() as u64);
    assert_eq!(m.records[4].written.digests.payload_len, truncated_head.len() as u64);
    assert_eq!(m.records[4].content_type.as_deref(), Some("application/octet-stream"));
    assert_eq!(m.report.anomaly_counts.get("no-http-header"), Some(&3));
}

#[test]
fn non_http_schemes_become_resource_records() {
    let bytes = concat(&[
        FILEDESC,
        &record("dns:e.org", "text/dns", b"20060503101501\ne.org.\t60\tIN\tA\t192.0.2.1\n"),
        &record("metadata://e.org/crawl/logs/crawl.log?x=1", "text/plain", b"a log line\n"),
        &record("ftp://e.org/file.txt", "text/plain", b"ftp body"),
    ]);
    let f = fixture("schemes.arc", &bytes);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    let got: Vec<_> = m.records[2..m.records.len() - 1]
        .iter()
        .map(|r| (r.warc_type.as_str(), r.content_type.as_deref().unwrap()))
        .collect();
    assert_eq!(
        got,
        [("resource", "text/dns"), ("resource", "text/plain"), ("resource", "text/plain")]
    );
    assert_eq!(
        m.records[3].target_uri.as_deref(),
        Some("metadata://e.org/crawl/logs/crawl.log?x=1")
    );
}

#[test]
fn version_2_with_xml_free_filedesc() {
    let body = b"2 0 test\nURL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length\n";
    let mut bytes = format!(
        "filedesc://t.arc 0.0.0.0 20250101000000 text/plain 200 - - 0 t.arc {}\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    bytes.extend(
        format!("http://e.org/p 0.0.0.0 20250101000000 text/html 200 - - 0 t.arc {}\n", PAGE.len())
            .as_bytes(),
    );
    bytes.extend_from_slice(PAGE);
    bytes.push(b'\n');
    let f = check("v2.arc", &bytes);
    assert_eq!(f.records[1].2, PAGE);
    let m = migrate(&fixture("v2b.arc", &bytes).path);
    assert_eq!(m.report.arc_version, Some(2));
}

#[test]
fn version_1_1_filedesc_with_xml_body() {
    let xml = b"1 1 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n<?xml version=\"1.0\"?>\r\n<arcmetadata><arc:software>Heritrix</arc:software></arcmetadata>\r\n\n";
    let mut bytes =
        format!("filedesc://t.arc 0.0.0.0 20060503101500 text/plain {}\n", xml.len()).into_bytes();
    bytes.extend_from_slice(xml);
    bytes.extend(record("http://e.org/", "text/html", PAGE));
    let f = check("v11.arc", &bytes);
    assert!(f.anomalies.is_empty(), "{:?}", f.anomalies);
    assert_eq!(f.records[0].2, xml);
}

fn gz_records() -> Vec<Vec<u8>> {
    vec![
        FILEDESC.to_vec(),
        record("http://e.org/1", "text/html", PAGE),
        record("http://e.org/2", "text/html", PAGE),
    ]
}

#[test]
fn gzip_one_member_per_record() {
    let bytes: Vec<u8> = gz_records().iter().flat_map(|r| gz(r)).collect();
    let f = check("pr.arc.gz", &bytes);
    assert_eq!(f.records.len(), 3);
    assert!(f.anomalies.is_empty(), "{:?}", f.anomalies);
}

#[test]
fn gzip_whole_file_in_one_member() {
    let bytes = gz(&gz_records().concat());
    let f = check("whole.arc.gz", &bytes);
    assert_eq!(f.records.len(), 3);
    assert_eq!(f.records[2].2, PAGE);
    assert!(f.anomalies.contains(&AnomalyKind::MultipleRecordsPerMember));
}

#[test]
fn damaged_gzip_member_is_kept_raw_and_the_rest_is_read() {
    let members: Vec<Vec<u8>> = gz_records().iter().map(|r| gz(r)).collect();
    let mut damaged = members[1].clone();
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x55;
    damaged[mid + 1] ^= 0x55;
    let bytes = concat(&[&members[0], &damaged, &members[2]]);
    let f = check("damaged.arc.gz", &bytes);
    assert!(f.anomalies.contains(&AnomalyKind::GzipError));
    let raw: Vec<_> = f.records.iter().filter(|r| r.0 == RecordKind::Remainder).collect();
    assert!(raw.iter().any(|r| r.2 == damaged), "the damaged member's raw bytes are kept");
    assert_eq!(f.records.last().unwrap().1, "http://e.org/2");
    assert_eq!(f.records.last().unwrap().2, PAGE);
}

#[test]
fn trailing_garbage_and_empty_members_in_a_gzip_file() {
    let members: Vec<Vec<u8>> = gz_records().iter().map(|r| gz(r)).collect();
    let bytes = concat(&[&members[0], &gz(b""), &members[1], &members[2], b"not gzip at all"]);
    let f = check("trail.arc.gz", &bytes);
    assert!(f.anomalies.contains(&AnomalyKind::EmptyGzipMember));
    assert_eq!(f.records.last().unwrap().2, b"not gzip at all");
    assert_eq!(f.records.iter().filter(|r| r.0 == RecordKind::Capture).count(), 2);
}

#[test]
fn a_warc_file_is_refused_with_a_clear_message() {
    let warc = crate::util::corpus().join("warc/warcio-example.warc.gz");
    let m = migrate(&warc);
    let err = m.report.error.unwrap();
    assert!(err.contains("WARC file, not an ARC"), "{err}");
    assert!(!m.output.exists());
}

#[test]
fn a_file_with_no_arc_record_is_refused_and_leaves_nothing() {
    let f = fixture("random.arc", b"\x89PNG\r\n\x1a\n not an archive\n");
    let m = migrate(&f.path);
    assert!(m.report.error.unwrap().contains("no ARC record header found"));
    assert_eq!(std::fs::read_dir(m.dir.path()).unwrap().count(), 0, "no file left behind");
}

/// The entity of `PAGE` (what warcio serves as the payload).
const PAGE_ENTITY: &[u8] = b"<html><p>Hello</p></html>\n";

/// A record whose declared length is exactly `PAGE`, followed by `padding` and another record;
/// checks framing, the padding anomaly and its offset, the byte account, and warcio's payloads.
fn check_padding(name: &str, padding: &[u8], gzip_members: bool) {
    use sha2::Digest;
    let first = record_with_len("http://e.org/1", "text/html", &PAGE.len().to_string(), PAGE);
    let second = record("http://e.org/2", "text/html", PAGE);
    let head_len = FILEDESC.len() + first.len() - PAGE.len();
    let pad_offset = (head_len + PAGE.len()) as u64;
    let bytes = if gzip_members {
        concat(&[&gz(FILEDESC), &gz(&concat(&[&first, padding])), &gz(&second)])
    } else {
        concat(&[FILEDESC, &first, padding, &second])
    };
    let f = fixture(name, &bytes);

    let mut r = ArcReader::open(&f.path).unwrap();
    let mut bodies = Vec::new();
    let mut pads = Vec::new();
    let mut others = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        let mut body = Vec::new();
        r.body_reader(&rec).read_to_end(&mut body).unwrap();
        bodies.push(body);
        for a in &rec.anomalies {
            if a.kind == AnomalyKind::WhitespacePadding {
                pads.push(a.clone());
            } else {
                others.push(a.kind);
            }
        }
    }
    others.extend(r.file_anomalies().iter().map(|a| a.kind));
    let acc = r.byte_account().clone();
    assert_eq!(bodies.len(), 3, "{name}: filedesc + 2 records");
    assert_eq!(bodies[1], PAGE, "{name}: payload is the declared length, padding not in it");
    assert_eq!(bodies[2], PAGE, "{name}: the next record is framed as before");
    assert_eq!(pads.len(), 1, "{name}: one padding anomaly");
    let expected_offset = if gzip_members { first.len() as u64 } else { pad_offset };
    assert_eq!(pads[0].location.offset, expected_offset, "{name}: padding offset");
    assert!(pads[0].detail.contains(&format!("{} bytes", padding.len())), "{}", pads[0].detail);
    let multiple = AnomalyKind::MultipleRecordsPerMember;
    assert!(others.iter().all(|k| *k == multiple), "{name}: no other anomaly: {others:?}");
    assert_eq!(acc.padding_bytes, padding.len() as u64, "{name}: padding counted");
    assert!(acc.balanced(gzip_members), "{name}: byte account balanced: {acc:?}");

    let m = migrate(&f.path);
    check_with_warcio(&m);
    let acc = m.report.input_bytes.as_ref().unwrap();
    assert_eq!(acc.padding_bytes, padding.len() as u64);
    assert_eq!(m.report.anomaly_counts.get("whitespace-padding"), Some(&1));
    // warcio, reading our WARC, serves the declared body for both records.
    let o = crate::util::oracle(&m.output, false);
    let want = crate::util::hex(&sha2::Sha512::digest(PAGE_ENTITY));
    let responses: Vec<_> = o.records.iter().filter(|r| r.rec_type == "response").collect();
    assert_eq!(responses.len(), 2, "{name}");
    for rec in responses {
        assert_eq!(rec.payload_len, PAGE_ENTITY.len() as u64, "{name}: {:?}", rec.uri);
        assert_eq!(rec.payload_sha512, want, "{name}: {:?}", rec.uri);
    }
}

#[test]
fn whitespace_padding_after_the_declared_length_is_a_separator() {
    // Spaces then CR LF (the case found in the wild: the CR LF stays whole in the padding).
    check_padding("pad-spaces.arc", b"   \r\n", false);
    // A tab, a space and a lone CR before the record's own separator line end.
    check_padding("pad-tab-cr.arc", b"\t \r\n", false);
    // Mixed, over several lines.
    check_padding("pad-mixed.arc", b"\n \t\r\n\r \n\n", false);
    // CR LF split case: the declared length ends just before a CR LF that is followed by
    // spaces: today's rule (end at the next header less one LF) would end the body inside it.
    check_padding("pad-crlf.arc", b"\r\n  \r\n", false);
    // Padding at the end of a gzip member.
    check_padding("pad-gz.arc.gz", b"  \r", true);
}

#[test]
fn whitespace_padding_at_the_end_of_the_file() {
    let first = record_with_len("http://e.org/1", "text/html", &PAGE.len().to_string(), PAGE);
    let f = fixture("pad-end.arc", &concat(&[FILEDESC, &first, b" \t \r"]));
    let framed = frame(&f);
    assert_eq!(framed.records[1].2, PAGE);
    assert_eq!(framed.anomalies, vec![AnomalyKind::WhitespacePadding]);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    assert_eq!(m.report.input_bytes.as_ref().unwrap().padding_bytes, 4);
}

#[test]
fn padding_that_is_not_only_whitespace_keeps_todays_handling() {
    // `x` in the gap: the declared length is wrong, the body runs to the next record.
    let first = record_with_len("http://e.org/1", "text/html", &PAGE.len().to_string(), PAGE);
    let bytes =
        concat(&[FILEDESC, &first, b"  x\r\n", &record("http://e.org/2", "text/html", PAGE)]);
    let f = check("pad-x.arc", &bytes);
    assert_eq!(f.records[1].2, concat(&[PAGE, b"  x\r"]));
    assert!(f.anomalies.contains(&AnomalyKind::LengthMismatch));
    assert!(!f.anomalies.contains(&AnomalyKind::WhitespacePadding));
}

/// `(WARC-Type, WARC-Date, X-Webaip-Date-Source)` of every record, as warcio reads them.
fn warcio_dates(warc: &std::path::Path) -> Vec<(String, String, Option<String>)> {
    let script = "import json,sys\nfrom warcio.archiveiterator import ArchiveIterator\n\
        out=[]\n\
        with open(sys.argv[1],'rb') as f:\n\
        \x20   for r in ArchiveIterator(f):\n\
        \x20       h=r.rec_headers\n\
        \x20       out.append([r.rec_type,h.get_header('WARC-Date'),h.get_header('X-Webaip-Date-Source')])\n\
        print(json.dumps(out))\n";
    let o = std::process::Command::new(crate::util::oracle_python())
        .args(["-c", script])
        .arg(warc)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A v1 record with the given archive-date field.
fn dated(url: &str, date: &str) -> Vec<u8> {
    let mut v = format!("{url} 192.0.2.10 {date} text/html {}\n", PAGE.len()).into_bytes();
    v.extend_from_slice(PAGE);
    v.push(b'\n');
    v
}

/// The FILEDESC with another archive-date (same length).
fn filedesc_dated(date: &str) -> Vec<u8> {
    String::from_utf8(FILEDESC.to_vec()).unwrap().replace("20060503101500", date).into_bytes()
}

#[test]
fn a_bad_date_takes_the_previous_records_date_and_says_so() {
    let bytes = concat(&[
        FILEDESC,
        &dated("http://e.org/1", "20060503101600"),
        &dated("http://e.org/2", "20069999999999"),
    ]);
    let f = fixture("prev.arc", &bytes);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    let got = warcio_dates(&m.output);
    assert_eq!(got[1], ("metadata".into(), "2006-05-03T10:15:00Z".into(), None));
    assert_eq!(got[2], ("response".into(), "2006-05-03T10:16:00Z".into(), None));
    let want = ("response".into(), "2006-05-03T10:16:00Z".into(), Some("previous-record".into()));
    assert_eq!(got[3], want);
    assert_eq!(m.report.date_sources.get("previous-record"), Some(&1));
    assert_eq!(m.report.date_sources.len(), 1);
    let ex = &m.report.inferred_dates[0];
    let second_at = (FILEDESC.len() + dated("http://e.org/1", "20060503101600").len()) as u64;
    assert_eq!(ex.location.offset, second_at);
    assert_eq!(ex.date, "2006-05-03T10:16:00Z");
    assert!(m.records[3].date_source.unwrap().is_inferred());
}

#[test]
fn a_first_record_with_a_bad_date_takes_the_arc_header_date() {
    let bytes = concat(&[
        FILEDESC,
        &dated("http://e.org/1", "20069999999999"),
        &dated("http://e.org/2", "20060503101700"),
    ]);
    let f = fixture("IAH-20010101000000-00000-h.arc", &bytes);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    let got = warcio_dates(&m.output);
    let want = ("response".into(), "2006-05-03T10:15:00Z".into(), Some("arc-header".into()));
    assert_eq!(got[2], want, "the header's date, before the file name's");
    assert_eq!(got[3].2, None);
    assert_eq!(m.report.date_sources.get("arc-header"), Some(&1));
}

#[test]
fn the_file_name_timestamp_comes_after_the_header() {
    let bytes =
        concat(&[filedesc_dated("20069999999999").as_slice(), &dated("http://e.org/1", "x")]);
    let f = fixture("IAH-20010101000000-00000-h.arc", &bytes);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    let got = warcio_dates(&m.output);
    // Between the warcinfo and the rebuild record, both dated when written.
    for g in &got[1..got.len() - 1] {
        assert_eq!((g.1.as_str(), g.2.as_deref()), ("2001-01-01T00:00:00Z", Some("file-name")));
    }
    // `webaip pages` on the ARC dates the page as its package will.
    let o =
        webaip_command().args(["pages", "--json", "--all-statuses"]).arg(&f.path).output().unwrap();
    let v = report_of(&o, 0);
    let text = v.to_string();
    assert!(text.contains("2001-01-01T00:00:00"), "{text}");
    assert!(text.contains("http://e.org/1"), "{text}");
}

#[test]
fn a_file_with_no_date_anywhere_needs_a_capture_date() {
    let bytes = concat(&[
        filedesc_dated("20069999999999").as_slice(),
        &dated("http://e.org/1", "20069999999999"),
        &dated("http://e.org/2", "yesterday"),
    ]);
    let f = fixture("dateless.arc", &bytes);
    let m = migrate(&f.path);
    let err = m.report.error.clone().expect("fails");
    assert!(err.contains("--capture-date"), "{err}");
    assert!(err.contains("dateless.arc") && err.contains("offset 0"), "{err}");
    assert!(!m.output.exists(), "nothing written");

    let opts = webaip::MigrateOptions {
        capture_date: Some(
            chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2005, 1, 1, 12, 0, 0).unwrap(),
        ),
        ..Default::default()
    };
    let m = crate::util::migrate_with(&f.path, &opts);
    check_with_warcio(&m);
    let got = warcio_dates(&m.output);
    assert_eq!(got.len(), 5);
    assert_eq!(got[0].2, None, "warcinfo: dated when written");
    assert_eq!(got[4].2, None, "the rebuild record: dated when written");
    for g in &got[1..4] {
        assert_eq!((g.1.as_str(), g.2.as_deref()), ("2005-01-01T12:00:00Z", Some("capture-date")));
    }
    assert_eq!(m.report.date_sources.get("capture-date"), Some(&3));
}

#[test]
fn a_filedesc_dated_dash_takes_the_first_later_date() {
    let fd = String::from_utf8(FILEDESC.to_vec())
        .unwrap()
        .replace("0.0.0.0 20060503101500", "- -")
        .into_bytes();
    let bytes = concat(&[&fd, &dated("http://e.org/1", "20060503101800")]);
    let f = fixture("dash.arc", &bytes);
    let m = migrate(&f.path);
    check_with_warcio(&m);
    let got = warcio_dates(&m.output);
    assert_eq!(got[1].1, "2006-05-03T10:18:00Z");
    assert_eq!(got[1].2.as_deref(), Some("next-record"));
    assert_eq!(got[2].2, None);
}

/// Issue 25, item 7: a CRLF filedesc whose length field cannot be read.
const FILEDESC_CRLF_BAD_LENGTH: &[u8] =
    b"filedesc://t.arc 0.0.0.0 20060503101500 text/plain abc\r\n\
1 0 InternetArchive\r\nURL IP-address Archive-date Content-type Archive-length\r\n\r\n";

/// The blocks of the WARC's `metadata` records, as warcio reads them.
fn warcio_metadata_blocks(warc: &std::path::Path) -> Vec<Vec<u8>> {
    let script = r#"
import json, sys
from warcio.archiveiterator import ArchiveIterator
out = []
with open(sys.argv[1], "rb") as f:
    for rec in ArchiveIterator(f, no_record_parse=True):
        block = rec.raw_stream.read()
        if rec.rec_type == "metadata":
            out.append(block.hex())
json.dump(out, sys.stdout)
"#;
    let o = std::process::Command::new(crate::util::oracle_python())
        .args(["-c", script])
        .arg(warc)
        .output()
        .unwrap();
    assert!(o.status.success(), "warcio: {}", String::from_utf8_lossy(&o.stderr));
    let v: Vec<String> = serde_json::from_slice(&o.stdout).unwrap();
    v.iter().map(|h| data_encoding::HEXLOWER.decode(h.as_bytes()).unwrap()).collect()
}

/// Issue 25, item 7: an ARC whose filedesc length cannot be read is framed at the next record,
/// less one line end; in a CRLF file that line end is CR LF, whole: the filedesc block no
/// longer ends in a lone CR (its LF taken as the separator). The rest is migrated, every
/// payload intact, and every input byte is in a record or counted between records. Plain and
/// with one gzip member per record (where the member's end stands for the next record).
#[test]
fn r25_a_crlf_filedesc_with_an_unreadable_length_keeps_its_line_end_whole() {
    let crlf_record = |url: &str, body: &[u8]| {
        let mut v =
            format!("{url} 192.0.2.10 20060503101503 text/html {}\r\n", body.len()).into_bytes();
        v.extend_from_slice(body);
        v.extend_from_slice(b"\r\n");
        v
    };
    let parts = [
        FILEDESC_CRLF_BAD_LENGTH.to_vec(),
        crlf_record("http://e.org/1", PAGE),
        crlf_record("http://e.org/2", PAGE),
    ];
    // The filedesc block as it must be kept: everything but its separator line end (CR LF).
    let block = &FILEDESC_CRLF_BAD_LENGTH[..FILEDESC_CRLF_BAD_LENGTH.len() - 2];
    let header_line_len = block.iter().position(|&b| b == b'\n').unwrap() + 1;
    for (name, bytes) in [
        ("crlf-badlen.arc", parts.concat()),
        ("crlf-badlen.arc.gz", parts.iter().flat_map(|p| gz(p)).collect::<Vec<u8>>()),
    ] {
        let f = fixture(name, &bytes);
        let framed = frame(&f);
        assert!(framed.anomalies.contains(&AnomalyKind::BadLength), "{name}");
        assert_eq!(framed.records.len(), 3, "{name}: the rest is read");
        assert_eq!(framed.records[0].0, RecordKind::Filedesc);
        assert_eq!(framed.records[0].2, &block[header_line_len..], "{name}: filedesc body");
        assert!(framed.records[0].2.ends_with(b"Archive-length\r\n"), "{name}");
        for r in &framed.records[1..] {
            assert_eq!(r.2, PAGE, "{name}: {}", r.1);
        }
        let m = migrate(&f.path);
        check_with_warcio(&m);
        assert_eq!(m.records.len(), 5, "{name}: warcinfo, the ARC's records, the rebuild record");
        check_rebuild(&f.path, &m.output);
        let blocks = warcio_metadata_blocks(&m.output);
        assert_eq!(blocks.len(), 2, "{name}: the filedesc's and the rebuild record");
        assert_eq!(blocks[0], block, "{name}: the filedesc's metadata block keeps CR LF");
        // Every byte: in a record (header lines and bodies) or between records (the three
        // CR LF separators), nothing unaccounted.
        let a = m.report.input_bytes.as_ref().unwrap();
        assert!(a.balanced(name.ends_with(".gz")), "{name}: {a:?}");
        assert_eq!(a.separator_bytes, 6, "{name}: {a:?}");
        assert_eq!(a.record_bytes + a.separator_bytes, parts.concat().len() as u64, "{name}");
    }
}

/// Issue 25, item 7, for captures: a record framed at the next one gives it one line end. Where
/// the line ends were converted (its header line ends with CR LF) that is CR LF, whole; in an
/// LF file a binary body may end with a CR of its own, which stays in the payload.
#[test]
fn r25_a_record_framed_at_the_next_one_keeps_crlf_whole_and_a_binary_cr() {
    let binary: &[u8] = b"\x89PNG\x00\xff\r";
    let lf = concat(&[
        FILEDESC,
        &record_with_len("http://e.org/bin", "image/png", "x", binary),
        b"\n",
        &record("http://e.org/n", "text/html", PAGE),
    ]);
    let f = check("lf-badlen.arc", &lf);
    assert_eq!(f.records[1].2, binary, "the binary body's own CR stays");
    let mut crlf = FILEDESC.to_vec();
    crlf.extend(b"http://e.org/c 192.0.2.10 20060503101503 text/html x\r\n");
    crlf.extend(PAGE);
    crlf.extend(b"\r\n");
    crlf.extend(record("http://e.org/n", "text/html", PAGE));
    let f = check("crlf-badlen-record.arc", &crlf);
    assert_eq!(f.records[1].2, PAGE, "no lone CR at the end of the payload");
    assert!(f.anomalies.contains(&AnomalyKind::BadLength));
}
