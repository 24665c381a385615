//! Every ARC of the shared corpus migrates, and warcio agrees with what we wrote.

use crate::util::hex;
use sha2::{Digest, Sha512};
use webaip::internals::WarcReader;

use crate::util::{self, check_with_warcio, corpus, corpus_arcs, migrate};

#[test]
fn every_corpus_arc_migrates_and_warcio_reads_the_same_payloads() {
    let arcs = corpus_arcs();
    assert!(arcs.len() >= 20, "corpus incomplete: {} ARC files", arcs.len());
    for arc in &arcs {
        let m = migrate(arc);
        check_with_warcio(&m);
        let c = &m.report.conservation;
        assert!(c.conserved && c.payload_bytes_in == c.payload_bytes_out && c.payload_bytes_in > 0);
        // One output record per input record, plus the warcinfo and the rebuild record.
        let ins: u64 = m.report.records_in.values().sum();
        let outs: u64 = m.report.records_out.values().sum();
        assert_eq!(ins + 2, outs, "{}", arc.display());
        // Every corpus ARC can be given back: its stream, rebuilt by an independent reader.
        let v = crate::arc_tolerance::check_rebuild(arc, &m.output);
        // Every corpus ARC (the .arc.gz ones written by Heritrix/Java and Python's zlib) is
        // given back as the very same file: their deflate settings were all recovered.
        assert_eq!(v["file_identical"], true, "{}: {v}", arc.display());
        let rebuild = m.report.rebuild.as_ref().expect("rebuild data");
        assert!(rebuild.rebuildable, "{}: {:?}", arc.display(), rebuild.reasons);
    }
}

/// For the ARCs that warcio itself reads correctly, the payloads warcio finds in the ARC are the
/// payloads we wrote, record for record.
#[test]
fn warcio_reading_the_arc_finds_the_payloads_we_wrote() {
    let clean = [
        "cc-crawl-002_2009_09_17_12_1253241189984_12-4827319.arc.gz",
        "cc-crawl-002_2010_02_16_114_1266352769711_14-7060652.arc.gz",
        "jwat-1-1-20110922131213-00000-svc-VirtualBox.arc",
        "jwat-IAH-20080430204825-00000-blackbook.arc.gz",
        "ukwa-IAH-20080430204825-00000-blackbook-truncated.arc",
        "ukwa-IAH-20080430204825-00000-blackbook-truncated.arc.gz",
        "warcio-example.arc",
        "warcio-example.arc.gz",
        "nas-Upload3.ARC",
    ];
    for name in clean {
        let arc = corpus().join("arc").join(name);
        let m = migrate(&arc);
        let o = util::oracle(&arc, true);
        assert_eq!(o.error, None, "{name}");
        let theirs: Vec<_> =
            o.records.iter().filter(|r| r.http).map(|r| r.payload_sha512.clone()).collect();
        let ours: Vec<_> = m
            .records
            .iter()
            .filter(|r| r.warc_type == "response")
            .map(|r| hex(&r.written.digests.payload_sha512))
            .collect();
        assert!(!ours.is_empty(), "{name}");
        assert_eq!(theirs, ours, "{name}: HTTP payloads differ from warcio's reading of the ARC");
    }
}

fn arc(name: &str) -> std::path::PathBuf {
    corpus().join("arc").join(name)
}

#[test]
fn filedesc_becomes_a_metadata_record_holding_its_bytes_exactly() {
    let path = arc("ukwa-IAH-20080430204825-00000-blackbook-truncated.arc");
    let bytes = std::fs::read(&path).unwrap();
    let m = migrate(&path);
    let fd = &m.records[1];
    assert_eq!(fd.warc_type, "metadata");
    assert_eq!(
        fd.target_uri.as_deref(),
        Some("filedesc://IAH-20080430204825-00000-blackbook-truncated.arc")
    );
    // Header line + the 1300 bytes its length declares (separator included, the filedesc rule).
    let line_end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let expected = &bytes[..line_end + 1300];
    assert_eq!(hex(&fd.written.digests.payload_sha512), hex(&Sha512::digest(expected)));
    // And the WARC says it is concurrent to the warcinfo record.
    let mut r = WarcReader::open(&m.output).unwrap();
    r.next_record(|_, _| Ok(())).unwrap();
    let (head, _, block) = r
        .next_record(|_, b| {
            let mut v = Vec::new();
            b.read_to_end(&mut v)?;
            Ok(v)
        })
        .unwrap()
        .unwrap();
    assert_eq!(block, expected);
    assert_eq!(
        head.header.get("WARC-Concurrent-To"),
        Some(m.records[0].written.record_id.as_str())
    );
    assert_eq!(head.header.get("WARC-Date"), Some("2008-04-30T20:48:25Z"));
}

#[test]
fn metadata_arc_is_not_split_into_invented_records() {
    // NetarchiveSuite metadata ARC: its CDX payload holds ARC-like lines that a careless reader
    // takes for records. There are exactly two records.
    let m = migrate(&arc("nas-2-metadata-1.arc"));
    check_with_warcio(&m);
    assert_eq!(m.report.records_in.get("filedesc"), Some(&1));
    assert_eq!(m.report.records_in.get("other"), Some(&1));
    assert_eq!(m.records[2].warc_type, "resource");
    assert_eq!(m.records[2].content_type.as_deref(), Some("application/x-cdx"));
    assert_eq!(m.records[2].written.digests.payload_len, 17620);
}

#[test]
fn garbage_after_the_last_record_is_kept_as_a_remainder() {
    let path = arc("jwat-invalid-arcfile-record-then-garbage.arc");
    let m = migrate(&path);
    check_with_warcio(&m);
    // The last record of the ARC: the rebuild record follows it.
    let last = &m.records[m.records.len() - 2];
    assert_eq!(last.warc_type, "resource");
    assert!(
        last.target_uri.as_deref().unwrap().starts_with("metadata://webaip/arc-remainder?file=")
    );
    assert_eq!(
        hex(&last.written.digests.payload_sha512),
        hex(&Sha512::digest(b"http://www.bt.dk/node/100"))
    );
    assert_eq!(m.report.anomaly_counts.get("no-filedesc"), Some(&1));
    assert_eq!(m.report.anomaly_counts.get("garbage"), Some(&1));
}

#[test]
fn wrong_lengths_are_repaired_and_reported() {
    // Common Crawl 2012: the record line declares 13033 bytes, the gzip member holds 13035.
    let m = migrate(&arc("cc-crawl-2012_1341690165636_1341785606830_6-0-4421.arc.gz"));
    check_with_warcio(&m);
    assert_eq!(m.report.anomaly_counts.get("length-mismatch"), Some(&1));
    assert_eq!(m.records[2].written.block_len(), 13035);
    // WCT: line ends converted after writing; every declared length overruns the data.
    let m = migrate(&arc("wct-WCT-20070813080023-00003-skynet.arc"));
    check_with_warcio(&m);
    assert_eq!(m.report.records_in.get("http"), Some(&2));
    assert_eq!(m.report.records_in.get("dns"), Some(&1));
    assert_eq!(m.report.anomaly_counts.get("truncated"), Some(&1));
}

#[test]
fn arc_version_2_is_read() {
    let m = migrate(&arc("httrack-v2-roundtrip.arc"));
    check_with_warcio(&m);
    assert_eq!(m.report.arc_version, Some(2));
    assert_eq!(m.records[2].target_uri.as_deref(), Some("http://example.com/p.html"));
    assert_eq!(m.records[2].written.digests.payload_len, 10);
}

#[test]
fn same_input_gives_byte_identical_output_in_deterministic_mode() {
    let path = arc("warcio-example.arc.gz");
    let a = migrate(&path);
    let b = migrate(&path);
    assert_eq!(std::fs::read(&a.output).unwrap(), std::fs::read(&b.output).unwrap());
}
