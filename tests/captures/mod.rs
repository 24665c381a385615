//! Harvests read as captures (issue 16): the NEDLIB and Kulturarw3 samples are packaged like
//! every other source and checked by independent readers: the official schemas
//! (validate-mets), warcio (every record and digest, tests/oracle/check_captures.py: each
//! record's block is the stored header bytes and body, computed from the source files with
//! plain byte operations), Python's zlib and hashlib for every range the METS states
//! (check_package.py), and `audit --deep`.

use std::path::Path;
use std::process::Command;

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{Package, oracle_python, repo, sample, samples, webaip};

fn oracle(script: &str, args: &[&Path], extra: &[&str]) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle").join(script))
        .args(args)
        .args(extra)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{script}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "{script}: {v}");
    v
}

/// Packages a sample in both modes and runs every check; returns the minimal-mode report.
fn package_and_check(sample: &str, shape: &str) -> serde_json::Value {
    let src = samples().join(sample);
    let mut minimal = serde_json::Value::Null;
    for mode in ["full", "minimal"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pkg");
        let o = Package::new().deterministic().json().mode(mode).schemas().run(&out, &src);
        assert!(o.status.success(), "{shape}: {}", String::from_utf8_lossy(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["kind"], shape);
        let r = crate::util::only_package(&r);
        assert_eq!(r["shape"], shape);
        assert_eq!(r["mets_xsd_checked"], true);
        let (ok, text) = oracle_validate(&out.join("METS.xml"));
        assert!(ok, "{shape} {mode}: {text}");
        assert_webaip_valid(&out.join("METS.xml"));
        let checked = oracle("check_package.py", &[&out], &[]);
        let captures = oracle("check_captures.py", &[&out, &src], &[shape]);
        assert_eq!(captures["counts"]["checked"], r["captures"], "{captures}");
        // The report names every container, as the package holds it, with its records.
        let containers = r["containers"].as_array().unwrap();
        let mut in_containers = 0;
        for c in containers {
            let path = out.join(c["path"].as_str().unwrap());
            assert!(path.is_file(), "{shape}: {c}");
            assert_eq!(c["action"], "written", "{c}");
            in_containers += c["records"].as_u64().unwrap();
        }
        assert_eq!(in_containers, r["records"].as_u64().unwrap(), "{shape}: {r}");
        let written = std::fs::read_dir(out.join("content")).unwrap().count();
        assert!(written >= 1 && containers.len() >= written, "{shape}: {r}");
        if mode == "full" {
            // Every record but the warcinfo has its <file>, and warcio reads as many.
            let records = r["records"].as_u64().unwrap();
            assert_eq!(checked["counts"]["records"], records - 1, "{checked}");
            assert_eq!(captures["counts"]["records"], records, "{captures}");
        }
        let audit = webaip(&["audit", "--deep", "--json", out.to_str().unwrap()]);
        let a: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap();
        assert_eq!(audit.status.code(), Some(0), "{a}");
        assert_eq!(a[0]["verdict"], "intact", "{a}");
        // The quirks travel in the package, every one with its file and line or offset.
        let log = out.join(format!("logs/webaip/{shape}.quirks.json"));
        let q: serde_json::Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
        for quirk in q["quirks"].as_array().unwrap() {
            assert!(!quirk["file"].as_str().unwrap().is_empty(), "{quirk}");
        }
        let manifest = std::fs::read_to_string(out.join("manifest-sha512.txt")).unwrap();
        assert!(manifest.contains(&format!("logs/webaip/{shape}.quirks.json")));
        if mode == "minimal" {
            minimal = r;
        }
    }
    minimal
}

fn kinds(r: &serde_json::Value) -> Vec<String> {
    r["quirk_counts"].as_object().unwrap().keys().cloned().collect()
}

#[test]
fn a_nedlib_harvest_packages_with_every_quirk_reported() {
    let r = package_and_check("nedlib", "nedlib");
    assert_eq!(r["captures"], 7);
    let k = kinds(&r);
    for want in [
        "norwegian-date",
        "seconds-60",
        "broken-year",
        "merged-header-line",
        "lf-line-ends",
        "meta-without-data",
        "data-without-meta",
        "side-car",
    ] {
        assert!(k.iter().any(|x| x == want), "{want} not reported: {k:?}");
    }
    // Quirks of .meta files name their line.
    let q = r["quirks"].as_array().unwrap();
    let merged = q.iter().find(|x| x["kind"] == "merged-header-line").unwrap();
    assert!(merged["file"].as_str().unwrap().ends_with(".meta"), "{merged}");
    assert!(merged["line"].as_u64().is_some(), "{merged}");
    // The data file without .meta and the access file are side files under logs/.
    assert_eq!(r["logs"], 2);
}

#[test]
fn a_kulturarw3_archive_packages_with_every_quirk_reported() {
    let r = package_and_check("kulturarw3", "kulturarw3");
    assert_eq!(r["captures"], 10);
    let k = kinds(&r);
    for want in ["truncated", "v0.01-header-names", "current-snapshot", "host-port-directory"] {
        assert!(k.iter().any(|x| x == want), "{want} not reported: {k:?}");
    }
    let q = r["quirks"].as_array().unwrap();
    let t = q.iter().find(|x| x["kind"] == "truncated").unwrap();
    assert!(t["offset"].as_u64().is_some(), "{t}");
}

#[test]
fn the_nedlib_date_option_is_stated_on_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("nedlib");
    for (opt, label) in [("server", "server Date header"), ("folder", "folder date")] {
        let out = dir.path().join(opt);
        Package::new().quiet().args(&["--nedlib-date", opt]).succeeds(&out, &src);
        let script = "import glob,sys,json\nfrom warcio.archiveiterator import ArchiveIterator\nout=[]\nfor fn in glob.glob(sys.argv[1]+'/content/*.warc.gz'):\n    for r in ArchiveIterator(open(fn,'rb')):\n        if r.rec_type=='response': out.append(r.rec_headers.get_header('X-Webaip-Date-Source') or '')\nprint(json.dumps(out))";
        let o = Command::new(oracle_python())
            .args(["-c", script, out.to_str().unwrap()])
            .output()
            .unwrap();
        let sources: Vec<String> = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(sources.len(), 7);
        // Every record says where its date came from; with `folder` all are the folder's.
        assert!(sources.iter().all(|s| !s.is_empty()), "{sources:?}");
        if opt == "folder" {
            assert!(sources.iter().all(|s| s.starts_with(label)), "{sources:?}");
        } else {
            assert!(sources.iter().any(|s| s.starts_with(label)), "{sources:?}");
        }
    }
}

/// ARC files as captures (`sources::arc_captures`): every capture of every corpus ARC is the
/// record its migration writes: the same URL and date, in the same order, and the payload bytes
/// warcio reads from the migrated WARC (SHA-512); a response's HTTP header bytes
/// plus its payload are exactly the record's block. The file header and remainders are quirks.
#[test]
fn arc_captures_are_the_records_the_migration_writes_as_warcio_reads_them() {
    use sha2::{Digest, Sha512};
    use std::io::Read;
    use webaip::migrate::InputKind;
    use webaip::sources::arc_captures::ArcCaptures;
    use webaip::sources::capture::CaptureKind;

    let mut arcs = crate::util::corpus_arcs();
    arcs.extend(std::fs::read_dir(sample("heritrix-job/arcs")).unwrap().map(|e| e.unwrap().path()));
    let mut checked = 0;
    for arc in arcs {
        let m = crate::util::migrate(&arc);
        if !m.report.ok() {
            continue; // refused by the migration too (the corpus holds a few on purpose)
        }
        let o = crate::util::oracle(&m.output, false);
        assert_eq!(o.error, None, "{}", arc.display());
        // The records migrated from captures, with warcio's view of each.
        let expected: Vec<_> = m
            .records
            .iter()
            .zip(&o.records)
            .filter(|(r, _)| {
                matches!(r.warc_type.as_str(), "response" | "resource")
                    && !matches!(r.input_kind, Some(InputKind::Remainder | InputKind::Filedesc))
            })
            .collect();
        let name = arc.file_name().unwrap().to_string_lossy().into_owned();
        let mut source = ArcCaptures::open(&arc, name.clone(), None).unwrap();
        let captures: Vec<_> =
            source.by_ref().collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{name}: {e}"));
        // The version block is no capture: said, with its offset.
        if m.records.iter().any(|r| r.input_kind == Some(InputKind::Filedesc)) {
            use webaip::sources::capture::CaptureSource;
            assert!(
                source.quirks().iter().any(|q| q.kind == "not-a-capture" && q.offset == Some(0)),
                "{name}: {:?}",
                source.quirks()
            );
        }
        assert_eq!(captures.len(), expected.len(), "{name}: captures vs migrated records");
        for (c, (ours, theirs)) in captures.iter().zip(&expected) {
            let at = format!("{name}: {}", c.uri);
            // The migration's own URI (warcio percent-encodes a space when it reads one).
            assert_eq!(Some(&c.uri), ours.target_uri.as_ref(), "{at}: URL");
            assert_eq!(c.date.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true), ours.date);
            let mut payload = Vec::new();
            c.payload.open().unwrap().read_to_end(&mut payload).unwrap();
            assert_eq!(payload.len() as u64, theirs.payload_len, "{at}: payload length");
            let sha = Sha512::digest(&payload);
            let sha: String = sha.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(sha, theirs.payload_sha512, "{at}: payload bytes");
            let header = c.http_header.as_deref().unwrap_or_default().len() as u64;
            assert_eq!(c.kind == CaptureKind::Response, theirs.rec_type == "response", "{at}");
            assert_eq!(
                header + payload.len() as u64,
                ours.written.digests.block_len,
                "{at}: header bytes and payload are the block"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} captures checked");
}

/// WARC files as captures (`sources::warc_captures`): every `response` and `resource` record
/// with a target URI of every corpus WARC, and of one whose records share a single gzip stream,
/// is a capture in warcio's order with warcio's URL and payload bytes (SHA-512), read after the
/// whole file was iterated (payloads are read again from their records, or were kept when their
/// gzip member is shared). A file warcio cannot read to its end fails here too, with its name
/// and an offset, after the same captures.
#[test]
fn warc_captures_are_the_records_warcio_reads() {
    use sha2::{Digest, Sha512};
    use std::io::{Read, Write};
    use webaip::sources::capture::{CaptureKind, Payload};
    use webaip::sources::warc_captures::WarcCaptures;

    let dir = tempfile::tempdir().unwrap();
    let mut warcs: Vec<_> = std::fs::read_dir(crate::util::corpus().join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    warcs.sort();
    // Blocks over 1 MiB (not kept in memory by their head) between small ones, written plain,
    // one gzip member per record, and as one gzip stream (every record after the first
    // shares its member); and a corpus file as one stream.
    let big = |n: usize, seed: u8| -> Vec<u8> {
        (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 9) as u8).collect()
    };
    let record = |kind: &str, uri: &str, block: &[u8]| {
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
    };
    let mut response = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n".to_vec();
    response.extend(big(1_300_000, 7));
    let records = [
        record("resource", "small", b"small"),
        record("resource", "big", &big(1_500_000, 3)),
        record("response", "big-response", &response),
        record("resource", "after", b"after"),
    ];
    let gzip = |bytes: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    };
    let generated = [
        ("big.warc", records.concat()),
        ("big-members.warc.gz", records.iter().flat_map(|r| gzip(r)).collect()),
        ("big-one-stream.warc.gz", gzip(&records.concat())),
        (
            "jwat-one-stream.warc.gz",
            gzip(
                &std::fs::read(crate::util::corpus().join("warc/jwat-valid-warcfile-utf8.warc"))
                    .unwrap(),
            ),
        ),
    ];
    for (name, bytes) in generated {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        warcs.push(dir.path().join(name));
    }
    let (mut checked, mut in_shared_member) = (0, 0);
    // Payloads by how they are held: in memory (read whole with their head), or read again
    // from their record (from the start of a shared gzip member).
    let (mut in_memory, mut again, mut again_in_member) = (0, 0, 0);
    for warc in warcs {
        let name = warc.file_name().unwrap().to_string_lossy().into_owned();
        let mut o = crate::util::oracle(&warc, false);
        // warcio refuses a gzip stream holding several records: it reads them decompressed.
        if o.error.as_deref().is_some_and(|e| e.contains("non-chunked gzip")) {
            let mut plain = Vec::new();
            let file = std::fs::File::open(&warc).unwrap();
            flate2::read::MultiGzDecoder::new(file).read_to_end(&mut plain).unwrap();
            let unzipped = dir.path().join(format!("{name}.warc"));
            std::fs::write(&unzipped, plain).unwrap();
            o = crate::util::oracle(&unzipped, false);
        }
        let expected: Vec<_> = o
            .records
            .iter()
            .filter(|r| {
                matches!(r.rec_type.as_str(), "response" | "resource")
                    && r.uri.as_deref().is_some_and(|u| !u.is_empty())
            })
            .collect();
        let mut source = WarcCaptures::open(&warc, name.clone()).unwrap();
        let mut captures = Vec::new();
        let mut failed = None;
        for c in source.by_ref() {
            match c {
                Ok(c) => captures.push(c),
                Err(e) => {
                    failed = Some(e.to_string());
                    break;
                }
            }
        }
        match (&o.error, &failed) {
            (None, None) => {}
            (Some(_), Some(e)) => {
                assert!(e.contains(&name) && e.contains("offset"), "{name}: {e}")
            }
            (theirs, ours) => panic!("{name}: warcio {theirs:?}, webaip {ours:?}"),
        }
        if failed.is_none() {
            assert_eq!(captures.len(), expected.len(), "{name}: captures vs warcio's records");
        }
        for (c, theirs) in captures.iter().zip(&expected) {
            let at = format!("{name} at {:?}: {}", c.provenance.offset, c.uri);
            assert_eq!(Some(&c.uri), theirs.uri.as_ref(), "{at}: URL");
            assert_eq!(c.kind == CaptureKind::Response, theirs.http, "{at}: HTTP or not");
            let mut payload = Vec::new();
            c.payload.open().unwrap().read_to_end(&mut payload).unwrap();
            assert_eq!(payload.len() as u64, c.payload.len(), "{at}: stated length");
            assert_eq!(payload.len() as u64, theirs.payload_len, "{at}: payload length");
            let sha: String = Sha512::digest(&payload).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(sha, theirs.payload_sha512, "{at}: payload bytes");
            in_shared_member += usize::from(c.provenance.offset_in_member.is_some());
            match &c.payload {
                Payload::Bytes(_) => in_memory += 1,
                Payload::InRecord(_) if c.provenance.offset_in_member.is_some() => {
                    again_in_member += 1
                }
                Payload::InRecord(_) => again += 1,
                other => panic!("{at}: {other:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} captures checked");
    assert!(in_shared_member > 5, "only {in_shared_member} captures in a shared gzip member");
    // The two big blocks of each generated file are read again (and any a corpus file has);
    // of the one-stream file, from the start of the stream.
    assert!(again >= 4 && again_in_member == 2, "{again} read again, {again_in_member} in member");
    assert!(in_memory > 100, "{in_memory} in memory");
}

/// A WARC record whose date is no W3C date-time is no capture: a quirk with its offset says so,
/// and the records around it are still yielded. A payload read again from its file (over 1
/// MiB) whose record is gone since fails with the file's name instead of giving other bytes.
#[test]
fn warc_captures_report_an_unreadable_date_and_a_record_gone() {
    use std::io::Read;
    use webaip::sources::capture::CaptureSource;
    use webaip::sources::warc_captures::WarcCaptures;

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
    use std::io::{Read, Write};
    use webaip::sources::warc_captures::WarcCaptures;

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
