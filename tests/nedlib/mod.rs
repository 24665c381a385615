//! NEDLIB harvests read as captures: the committed sample (samples/nedlib, written by
//! scripts/make_samples.py) checked against its raw bytes, read here without webaip: each
//! response's HTTP header is the `.meta` as stored minus its `Arc-*` lines, each payload the
//! data file, each quirk of INPUT_FORMATS §5.4 reported with its file and line.

use std::io::Read;
use std::path::Path;

use chrono::{TimeZone, Utc};
use webaip::capture::{Capture, CaptureKind, Quirk};
use webaip::sources::capture::{CaptureSource, SideFile};
use webaip::sources::nedlib::{NedlibDate, NedlibHarvest, NedlibOptions, is_nedlib};

use crate::util::{copy_tree, sample};

fn read(root: &Path, date_source: NedlibDate) -> (Vec<Capture>, Vec<Quirk>, Vec<SideFile>) {
    let mut h = NedlibHarvest::open(root, NedlibOptions { date_source }).unwrap();
    let caps: Vec<Capture> = h.by_ref().map(|c| c.unwrap()).collect();
    assert_eq!(h.shape_name(), "nedlib");
    (caps, h.quirks().to_vec(), h.side_files())
}

const HOME: &str = "2003-7-18/0000/450eede1f7f53e062e8625a786cc3f55";
const NEWS: &str = "2003-7-18/0000/4aafae600038c313dd4794621d00d1c5";
const MAP: &str = "2003-7-18/0000/dbb06a3b57459eca83624a07b04f30d5";
const LOGO: &str = "2003-7-18/0000/ff98a68c81b6088d74f84b1e4d88ee86";
const ARCHIVE: &str = "2003-7-19/0000/0c7f49ab481cf1ff5962ba52b58e05a7";
const CSS: &str = "2003-7-19/0000/1b5c9c1b334d73d4b4be4d55e4e0b042";
const CONTACT: &str = "2003-7-19/0000/4d25a1cea8ee1fe7dde9a297fddfc24c";

/// The `.meta` lines as stored, split after each LF: (non-Arc lines, Arc lines).
fn split_stored(meta: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut header = Vec::new();
    let mut arc = Vec::new();
    for line in meta.split_inclusive(|&b| b == b'\n') {
        if line.len() >= 4 && line[..4].eq_ignore_ascii_case(b"arc-") {
            arc.push(line.to_vec());
        } else {
            header.extend_from_slice(line);
        }
    }
    (header, arc)
}

#[test]
fn the_sample_is_a_nedlib_harvest_and_others_are_not() {
    let root = sample("nedlib");
    assert!(is_nedlib(&root));
    assert!(is_nedlib(&root.join("2003-7-18")));
    assert!(!is_nedlib(&root.join("2003-7-18/0000")));
    assert!(!is_nedlib(&sample("mirror")));
    assert!(!is_nedlib(&sample("pandas")));
}

#[test]
fn every_pair_becomes_a_response_with_the_stored_header_bytes() {
    let root = sample("nedlib");
    let (caps, quirks, sides) = read(&root, NedlibDate::ServerDate);
    let files: Vec<&str> = caps.iter().map(|c| c.provenance.file.as_str()).collect();
    let archive_meta = format!("{ARCHIVE}.meta");
    assert_eq!(files, vec![HOME, NEWS, MAP, LOGO, archive_meta.as_str(), CSS, CONTACT]);
    for c in &caps {
        let meta_rel = if c.provenance.file.ends_with(".meta") {
            c.provenance.file.clone()
        } else {
            format!("{}.meta", c.provenance.file)
        };
        let stored = std::fs::read(root.join(&meta_rel)).unwrap();
        let (header, arc) = split_stored(&stored);
        assert_eq!(c.kind, CaptureKind::Response);
        let got = c.http_header.as_deref().unwrap();
        // Byte for byte the stored non-Arc lines; an empty line appended (and reported) only
        // where the stored header has none.
        if header.ends_with(b"\n\n") || header.ends_with(b"\r\n\r\n") {
            assert_eq!(got, &header[..], "{meta_rel}");
            assert!(!quirks.iter().any(|q| q.file == meta_rel && q.kind == "no-header-end"));
        } else {
            let eol: &[u8] = if header.ends_with(b"\r\n") { b"\r\n" } else { b"\n" };
            assert_eq!(got, &[&header[..], eol].concat()[..], "{meta_rel}");
            assert!(
                quirks.iter().any(|q| q.file == meta_rel && q.kind == "no-header-end"),
                "{meta_rel}"
            );
        }
        // The Arc-* lines verbatim and the source paths in the metadata record.
        let md = c.metadata.as_deref().unwrap();
        let arc_block: Vec<u8> = arc.concat();
        assert!(md.starts_with(&arc_block), "{meta_rel}");
        let md_text = String::from_utf8_lossy(md);
        assert!(md_text.contains(&format!("nedlib-meta-path: {meta_rel}")));
        // The URL is Arc-Url as stored, :80 kept.
        let url_line = String::from_utf8(arc[0].clone()).unwrap();
        assert_eq!(format!("Arc-Url: {}", c.uri), url_line.trim_end());
        assert!(c.uri.starts_with("http://www.example.no:80/"));
        // The payload is the data file, read back through the capture.
        let data = root.join(&c.provenance.file);
        if c.provenance.file.ends_with(".meta") {
            assert!(c.payload.is_empty());
            assert!(!md_text.contains("nedlib-data-path"));
        } else {
            let bytes = std::fs::read(&data).unwrap();
            assert_eq!(c.payload.len(), bytes.len() as u64);
            let mut back = Vec::new();
            c.payload.open().unwrap().read_to_end(&mut back).unwrap();
            assert_eq!(back, bytes);
            assert!(md_text.contains(&format!("nedlib-data-path: {}", c.provenance.file)));
        }
    }
    let by_file = |f: &str| caps.iter().find(|c| c.provenance.file == f).unwrap();
    assert_eq!(by_file(HOME).content_type.as_deref(), Some("text/html"));
    assert_eq!(by_file(CONTACT).content_type.as_deref(), Some("text/html; charset=iso-8859-1"));
    assert_eq!(by_file(MAP).truncated.as_deref(), Some("length"));
    assert_eq!(by_file(&archive_meta).truncated.as_deref(), Some("length"));
    assert_eq!(by_file(CSS).truncated, None);
    assert_eq!(by_file(HOME).truncated, None);
    // The merged Content-Length line stays as stored.
    let news = String::from_utf8(by_file(NEWS).http_header.clone().unwrap()).unwrap();
    assert!(news.contains("\nContent-Length: 89Fri, 04 Apr 2003 08:36:47 GMT\n"));

    let rels: Vec<&str> = sides.iter().map(|s| s.relative.as_str()).collect();
    assert_eq!(
        rels,
        vec!["2003-7-18/0000/a63821eef50f572119564229110ad80c", "2003-7-18/0000/access0.data"]
    );
    for s in &sides {
        assert_eq!(s.path, root.join(&s.relative));
    }
}

#[test]
fn every_quirk_is_reported_with_its_file_and_line() {
    let (_, quirks, _) = read(&sample("nedlib"), NedlibDate::ServerDate);
    let m = |f: &str| format!("{f}.meta");
    let expected: Vec<(String, &str, Option<u64>)> = vec![
        (m(HOME), "no-header-end", Some(5)),
        (m(CONTACT), "no-header-end", Some(4)),
        (m(NEWS), "lf-line-ends", Some(1)),
        (m(NEWS), "broken-year", Some(2)),
        (m(NEWS), "merged-header-line", Some(4)),
        (m(MAP), "ansi-c-with-zone", Some(2)),
        (m(MAP), "non-gmt-zone", Some(2)),
        (m(MAP), "content-length-mismatch", Some(4)),
        (m(MAP), "arc-length-mismatch", Some(6)),
        (m(LOGO), "seconds-60", Some(2)),
        (m(ARCHIVE), "no-weekday", Some(2)),
        (m(ARCHIVE), "meta-without-data", None),
        (m(CSS), "no-leading-zero", Some(2)),
        (m(CSS), "arc-length-mismatch", Some(7)),
        (m(CONTACT), "non-utf8-value", Some(2)),
        (m(CONTACT), "norwegian-date", Some(2)),
        ("2003-7-18/0000/a63821eef50f572119564229110ad80c".into(), "data-without-meta", None),
        ("2003-7-18/0000/access0.data".into(), "side-car", None),
    ];
    for (file, kind, line) in &expected {
        assert!(
            quirks.iter().any(|q| &q.file == file && q.kind == *kind && q.line == *line),
            "{kind} at {file}:{line:?} not reported; got {quirks:#?}"
        );
    }
    // The CRLF files are not reported as LF; the CSS's header ends with its own empty line.
    for f in [HOME, CSS] {
        assert!(!quirks.iter().any(|q| q.file == m(f) && q.kind == "lf-line-ends"));
    }
    assert!(!quirks.iter().any(|q| q.file == m(CSS) && q.kind == "no-header-end"));
    // No date fell back: every server Date is within a day of its folder.
    assert!(!quirks.iter().any(|q| q.kind == "date-fallback"), "{quirks:#?}");
}

#[test]
fn dates_follow_the_option_and_say_where_they_came_from() {
    let at = |d, h, mi, s| Utc.with_ymd_and_hms(2003, 7, d, h, mi, s).unwrap();
    let (caps, _, _) = read(&sample("nedlib"), NedlibDate::ServerDate);
    let dates: Vec<_> = caps.iter().map(|c| c.date).collect();
    assert_eq!(
        dates,
        vec![
            at(18, 9, 39, 49), // Fri, 18 Jul 2003 09:39:49 GMT
            at(18, 9, 41, 2),  // Friday, 18-Jul-103 09:41:02 GMT
            at(18, 9, 2, 3),   // Fri Jul 18 11:02:03 2003 CEST
            at(18, 12, 16, 0), // Fri, 18 Jul 2003 12:15:60 GMT
            at(19, 5, 2, 3),   // 19 Jul 2003 05:02:03 GMT
            at(19, 6, 7, 8),   // Sat, 19 Jul 2003 6:07:08 GMT
            at(19, 3, 45, 41), // lø, 19 jul 2003 04:45:41 CET
        ]
    );
    for c in &caps {
        assert_eq!(c.date_source.label, "server Date header");
        assert!(c.date_source.inferred);
    }
    let (caps, _, _) = read(&sample("nedlib"), NedlibDate::FolderDate);
    for c in &caps {
        let day = &c.provenance.file[..9];
        assert_eq!(c.date_source.label, format!("folder date {day} at 12:00 UTC"));
        assert!(c.date_source.inferred);
        assert_eq!(c.date, at(if day == "2003-7-18" { 18 } else { 19 }, 12, 0, 0));
    }
    // Read from one day folder, names still start with the day.
    let (caps, _, sides) = read(&sample("nedlib").join("2003-7-19"), NedlibDate::FolderDate);
    assert_eq!(caps.len(), 3);
    assert!(caps.iter().all(|c| c.provenance.file.starts_with("2003-7-19/0000/")));
    assert!(sides.is_empty());
}

fn copy_sample(to: &Path) {
    copy_tree(&sample("nedlib"), to);
}

#[test]
fn a_wrong_server_clock_falls_back_to_the_folder_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    copy_sample(tmp.path());
    let meta = tmp.path().join(format!("{HOME}.meta"));
    let text = std::fs::read(&meta).unwrap();
    let text = String::from_utf8(text).unwrap().replace("18 Jul 2003", "18 Jul 1999");
    std::fs::write(&meta, text).unwrap();
    let (caps, quirks, _) = read(tmp.path(), NedlibDate::ServerDate);
    let home = &caps[0];
    assert_eq!(home.provenance.file, HOME);
    assert_eq!(home.date, Utc.with_ymd_and_hms(2003, 7, 18, 12, 0, 0).unwrap());
    assert!(home.date_source.label.starts_with("folder date 2003-7-18 at 12:00 UTC ("));
    assert!(quirks.iter().any(|q| q.file == format!("{HOME}.meta")
        && q.kind == "date-fallback"
        && q.line == Some(2)));
}

#[test]
fn hostile_trees_are_refused_file_by_file() {
    let tmp = tempfile::tempdir().unwrap();
    copy_sample(tmp.path());
    let root = tmp.path();
    // The home page's .meta becomes a link to another .meta; the logo's data a link to a
    // file outside the harvest.
    std::fs::write(root.join("outside"), b"not to be read").unwrap();
    std::fs::remove_file(root.join(format!("{HOME}.meta"))).unwrap();
    std::os::unix::fs::symlink(
        root.join(format!("{NEWS}.meta")),
        root.join(format!("{HOME}.meta")),
    )
    .unwrap();
    std::fs::remove_file(root.join(LOGO)).unwrap();
    std::os::unix::fs::symlink(root.join("outside"), root.join(LOGO)).unwrap();
    // A .meta over the bound.
    let big = root.join(format!("{CSS}.meta"));
    let f = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
    f.set_len(webaip::sources::nedlib::MAX_META + 1).unwrap();

    let mut h = NedlibHarvest::open(root, NedlibOptions::default()).unwrap();
    let mut caps = Vec::new();
    let mut errs = Vec::new();
    for c in h.by_ref() {
        match c {
            Ok(c) => caps.push(c),
            Err(e) => errs.push(e.to_string()),
        }
    }
    let quirks = h.quirks().to_vec();
    let has = |file: &str, kind: &str| quirks.iter().any(|q| q.file == file && q.kind == kind);
    assert!(has(&format!("{HOME}.meta"), "refused"));
    assert!(has(HOME, "data-without-meta"));
    assert!(!caps.iter().any(|c| c.provenance.file == HOME));
    assert_eq!(caps.iter().filter(|c| c.uri.ends_with("/nyheter.html")).count(), 1);
    assert!(has(LOGO, "refused"));
    let logo = caps.iter().find(|c| c.uri.ends_with("/logo.gif")).unwrap();
    assert!(logo.payload.is_empty());
    assert!(has(&format!("{CSS}.meta"), "meta-too-large"));
    // Each refused file is listed and counted (the run exits 1); none stops the harvest.
    assert!(errs.is_empty(), "{errs:?}");
    let (refused, n) = h.refusals();
    assert_eq!(n, 3, "{refused:?}");
    assert!(
        refused.iter().any(|(f, why)| *f == format!("{CSS}.meta") && why.contains("larger than")),
        "{refused:?}"
    );
    // What was not a capture is kept: the unpaired home page, the big .meta and its data.
    let rels: Vec<String> = h.side_files().into_iter().map(|s| s.relative).collect();
    for f in [HOME.to_string(), CSS.to_string(), format!("{CSS}.meta")] {
        assert!(rels.contains(&f), "{f} not kept: {rels:?}");
    }
}
