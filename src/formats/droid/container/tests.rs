//! Container identification on ZIP and OLE2 files each test builds, compared with siegfried
//! (pygfried, installed by `scripts/setup-test-env.sh`) on the same bytes.

use std::io::{Cursor, Write};
use std::process::Command;

use super::super::Signatures;
use super::{Basis, ContainerKind, ContainerOutcome, ContainerSignatures};
use crate::test_support::oracle_python;

/// A ZIP of `entries` (name, bytes), deflated, in that order (`mimetype`, as ODF and EPUB
/// write it, and names ending `.bin` are stored).
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        let method = match *name == "mimetype" || name.ends_with(".bin") {
            true => zip::CompressionMethod::Stored,
            false => zip::CompressionMethod::Deflated,
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        w.start_file(*name, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// An OLE2 compound file of `streams` (path below the root, bytes).
fn ole2_of(streams: &[(&str, &[u8])]) -> Vec<u8> {
    let mut cf = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    for (path, bytes) in streams {
        let mut s = cf.create_stream(format!("/{path}")).unwrap();
        s.write_all(bytes).unwrap();
    }
    cf.flush().unwrap();
    cf.into_inner().into_inner()
}

/// A `CompObj` stream naming `prog_id` (its length, 4 bytes, then the name) at offset 40.
fn comp_obj(prog_id: &str) -> Vec<u8> {
    let mut b = vec![0u8; 40];
    b.extend_from_slice(&(prog_id.len() as u32 + 1).to_le_bytes());
    b.extend_from_slice(prog_id.as_bytes());
    b.push(0);
    b.resize(128, 0);
    b
}

/// A `WordDocument` stream's first bytes (its FIB), encrypted when `encrypted`.
fn word_document(encrypted: bool) -> Vec<u8> {
    let mut b = vec![0u8; 4096];
    b[..4].copy_from_slice(&[0xEC, 0xA5, 0xC1, 0x00]);
    b[11] = if encrypted { 0x01 } else { 0x00 };
    b
}

const DOCX_TYPES: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types \
    xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Override \
    PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-\
    officedocument.wordprocessingml.document.main+xml\"/></Types>";
const XLSX_TYPES: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types \
    xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Override \
    PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-\
    officedocument.spreadsheetml.sheet.main+xml\"/></Types>";

const PPTX_TYPES: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types \
    xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Override \
    PartName=\"/ppt/presentation.xml\" ContentType=\"application/vnd.openxmlformats-\
    officedocument.presentationml.presentation.main+xml\"/></Types>";

fn docx() -> Vec<u8> {
    zip_of(&[
        ("[Content_Types].xml", DOCX_TYPES),
        ("_rels/.rels", b"<Relationships/>"),
        ("word/document.xml", b"<w:document/>"),
    ])
}

fn odt(version: &str) -> Vec<u8> {
    let manifest = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<manifest:manifest \
        xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\">\n \
        <manifest:file-entry manifest:full-path=\"/\" \
        manifest:media-type=\"application/vnd.oasis.opendocument.text\"/>\n</manifest:manifest>";
    let content = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<office:document-content \
         xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
         office:version=\"{version}\"><office:body/></office:document-content>"
    );
    zip_of(&[
        ("mimetype", b"application/vnd.oasis.opendocument.text"),
        ("content.xml", content.as_bytes()),
        ("META-INF/manifest.xml", manifest),
    ])
}

fn epub() -> Vec<u8> {
    zip_of(&[
        ("mimetype", b"application/epub+zip"),
        ("META-INF/container.xml", b"<container version=\"1.0\"/>"),
        ("OEBPS/content.opf", b"<package/>"),
    ])
}

fn wacz() -> Vec<u8> {
    let datapackage = b"{\"profile\": \"data-package\", \"resources\": [{\"name\": \
        \"data.warc.gz\", \"path\": \"archive/data.warc.gz\"}], \"wacz_version\": \"1.1.1\"}";
    zip_of(&[
        ("archive/data.warc.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00"),
        ("indexes/index.cdx", b"com,example)/ 20260101000000 {}\n"),
        ("pages/pages.jsonl", b"{\"format\": \"json-pages-1.0\"}\n"),
        ("datapackage.json", datapackage),
    ])
}

fn doc(encrypted: bool) -> Vec<u8> {
    ole2_of(&[
        ("WordDocument", &word_document(encrypted)),
        ("\u{1}CompObj", &comp_obj("Word.Document.8")),
        ("1Table", &[0u8; 512]),
    ])
}

fn ppt() -> Vec<u8> {
    ole2_of(&[
        ("PowerPoint Document", &[0u8; 4096]),
        ("\u{1}CompObj", &comp_obj("PowerPoint.Show.8")),
    ])
}

fn xls() -> Vec<u8> {
    let mut workbook = vec![0x09, 0x08, 0x10, 0x00, 0x00, 0x06, 0x05, 0x00];
    workbook.resize(4096, 0);
    ole2_of(&[("Workbook", &workbook), ("\u{1}CompObj", &comp_obj("Excel.Sheet.8"))])
}

/// What webaip finds in `bytes`: the PUIDs, their basis and the container outcome.
fn ours(bytes: &[u8]) -> (Vec<String>, Basis, ContainerOutcome) {
    let sigs = Signatures::shipped().expect("the shipped signature file compiles");
    let found = sigs.examine_bytes(bytes);
    let puids = found.formats.iter().map(|f| f.puid.clone()).collect();
    (puids, found.basis, found.container)
}

/// The PUIDs siegfried gives each file (written with a neutral extension, so only their
/// bytes count), in one run of pygfried.
fn siegfried(files: &[(&str, &[u8])]) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = files
        .iter()
        .map(|(name, bytes)| {
            let p = dir.path().join(format!("{name}.bin"));
            std::fs::write(&p, bytes).unwrap();
            p
        })
        .collect();
    let script = "import json, sys, pygfried\n\
        print(json.dumps([[m['id'] for m in pygfried.identify(p, detailed=True)['files'][0]\
        ['matches']] for p in sys.argv[1:]]))";
    let out = Command::new(oracle_python()).arg("-c").arg(script).args(&paths).output().unwrap();
    assert!(
        out.status.success(),
        "pygfried failed (it is installed by scripts/setup-test-env.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the oracle prints JSON")
}

#[test]
fn the_shipped_container_file_compiles_with_its_triggers() {
    let set = ContainerSignatures::shipped().expect("the shipped container file compiles");
    assert_eq!(set.version, 40);
    assert!(set.signatures.len() >= 300, "{} container signatures", set.signatures.len());
    let triggers: Vec<&str> = set.triggers.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(triggers, ["fmt/111", "fmt/189", "x-fmt/263"]);
    assert_eq!(super::shipped_version().unwrap().date, "2026-01-19");
}

#[test]
fn zip_and_ole2_formats_are_those_siegfried_names() {
    let cases: Vec<(&str, Vec<u8>, &str, ContainerKind)> = vec![
        ("docx", docx(), "fmt/412", ContainerKind::Zip),
        ("xlsx", zip_of(&[("[Content_Types].xml", XLSX_TYPES)]), "fmt/214", ContainerKind::Zip),
        ("odt12", odt("1.2"), "fmt/291", ContainerKind::Zip),
        ("odt11", odt("1.1"), "fmt/290", ContainerKind::Zip),
        ("odt13", odt("1.3"), "fmt/1756", ContainerKind::Zip),
        ("pptx", zip_of(&[("[Content_Types].xml", PPTX_TYPES)]), "fmt/215", ContainerKind::Zip),
        ("epub", epub(), "fmt/483", ContainerKind::Zip),
        ("wacz", wacz(), "fmt/1840", ContainerKind::Zip),
        ("doc", doc(false), "fmt/40", ContainerKind::Ole2),
        ("doc-encrypted", doc(true), "fmt/754", ContainerKind::Ole2),
        ("xls", xls(), "fmt/61", ContainerKind::Ole2),
        ("ppt", ppt(), "fmt/126", ContainerKind::Ole2),
    ];
    let files: Vec<(&str, &[u8])> = cases.iter().map(|(n, b, ..)| (*n, b.as_slice())).collect();
    let theirs = siegfried(&files);
    for ((name, bytes, want, kind), theirs) in cases.iter().zip(theirs) {
        let (puids, basis, outcome) = ours(bytes);
        assert_eq!(puids, [*want], "{name}: webaip {puids:?} ({outcome:?})");
        assert_eq!(basis, Basis::Container, "{name}");
        assert_eq!(outcome, ContainerOutcome::Matched(*kind), "{name}");
        assert_eq!(puids, theirs, "{name}: webaip {puids:?}, siegfried {theirs:?}");
    }
}

#[test]
fn a_plain_zip_stays_zip_and_says_no_container_signature_matched() {
    let plain = zip_of(&[("readme.txt", b"hello"), ("data/x.csv", b"a,b\n1,2\n")]);
    let (puids, basis, outcome) = ours(&plain);
    assert_eq!(puids, ["x-fmt/263"]);
    assert_eq!(
        (basis, outcome),
        (Basis::Signature, ContainerOutcome::Unmatched(ContainerKind::Zip))
    );
    assert_eq!(siegfried(&[("plain", &plain)]), [["x-fmt/263"]]);
}

#[test]
fn a_damaged_zip_keeps_its_binary_result_and_says_why() {
    let mut bytes = docx();
    // Flip bytes of [Content_Types].xml's compressed data (its local header is 30 bytes and
    // its 19-byte name): the entry no longer inflates, or fails its CRC.
    for b in &mut bytes[60..90] {
        *b ^= 0x5a;
    }
    let (puids, basis, outcome) = ours(&bytes);
    assert_eq!(basis, Basis::Signature);
    assert!(!puids.is_empty(), "the binary result stands");
    match outcome {
        ContainerOutcome::Unreadable { kind: ContainerKind::Zip, why } => {
            assert!(why.contains("[Content_Types].xml"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Cut short before its central directory: not a readable ZIP at all.
    let cut = &docx()[..100];
    let found = Signatures::shipped().unwrap().examine_bytes(cut);
    assert!(!matches!(found.container, ContainerOutcome::Matched(_)), "{:?}", found.container);
}

#[test]
fn a_zip_of_100000_entries_is_identified_quickly() {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..100_000 {
        w.start_file(format!("f/{i}"), stored).unwrap();
    }
    // The entry that tells what it is comes last: every entry is walked.
    w.start_file("[Content_Types].xml", stored).unwrap();
    w.write_all(DOCX_TYPES).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let start = std::time::Instant::now();
    let (puids, basis, _) = ours(&bytes);
    let took = start.elapsed();
    assert_eq!((puids, basis), (vec!["fmt/412".to_string()], Basis::Container));
    assert!(took.as_secs_f64() < 2.0, "{took:?} for {} bytes", bytes.len());
    eprintln!("100,000-entry ZIP ({} bytes) identified in {took:?}", bytes.len());
}

#[test]
fn a_streamed_container_longer_than_the_windows_is_looked_into_whole() {
    let sigs = Signatures::shipped().unwrap();
    let (bof, eof) = sigs.windows();
    // A DOCX whose stored filler makes it longer than both windows.
    let filler = vec![b'x'; bof + eof];
    let big = zip_of(&[("[Content_Types].xml", DOCX_TYPES), ("word/media/a.bin", &filler)]);
    assert!(sigs.needs_whole_payload(&big[..bof], None), "a ZIP's start asks for the whole");
    // Streamed: the whole is spooled in memory (under 16 MiB) and looked into.
    let found = sigs.examine_reader(&big[..]).unwrap();
    let puids: Vec<&str> = found.formats.iter().map(|f| f.puid.as_str()).collect();
    assert_eq!((puids, found.basis), (vec!["fmt/412"], Basis::Container));
    // Past the in-memory spool: a temporary file, read back with positioned reads.
    let huge_filler = vec![b'y'; 17 << 20];
    let huge = zip_of(&[("[Content_Types].xml", DOCX_TYPES), ("word/media/b.bin", &huge_filler)]);
    let found = sigs.examine_reader(&huge[..]).unwrap();
    let puids: Vec<&str> = found.formats.iter().map(|f| f.puid.as_str()).collect();
    assert_eq!((puids, found.basis), (vec!["fmt/412"], Basis::Container), "{:?}", found.container);
}

#[test]
fn damaged_ole2_and_zip_files_never_panic_and_keep_a_binary_result() {
    let sigs = Signatures::shipped().unwrap();
    // Cut short: the header promises sectors that are not there.
    let doc = doc(false);
    let found = sigs.examine_bytes(&doc[..1536]);
    assert!(!matches!(found.container, ContainerOutcome::Matched(_)), "{:?}", found.container);
    // Every 97th byte flipped in turn, in a DOC and a DOCX: whatever each reader makes of it,
    // the result is a binary one or a container one, never a panic.
    for original in [doc, docx()] {
        for at in (0..original.len()).step_by(97) {
            let mut bytes = original.clone();
            bytes[at] ^= 0xff;
            let found = sigs.examine_bytes(&bytes);
            if let ContainerOutcome::Unreadable { why, .. } = &found.container {
                assert!(found.basis == Basis::Signature && !why.is_empty());
            }
        }
    }
}

#[test]
fn an_entry_that_cannot_be_read_does_not_hide_what_the_others_show() {
    let sigs = Signatures::shipped().unwrap();
    let mut bytes = zip_of(&[
        ("mimetype", b"application/epub+zip"),
        ("content.xml", b"<office:document-content/>"),
        ("META-INF/container.xml", b"<container version=\"1.0\"/>"),
    ]);
    // content.xml (a name ODF's signatures look for) says it is bzip2-compressed (method 12),
    // which webaip does not read: in its local header and in the central directory.
    let name = b"content.xml";
    let at: Vec<usize> =
        (0..bytes.len() - name.len()).filter(|i| bytes[*i..].starts_with(name)).collect();
    for pos in at {
        let (local, central) = (pos.checked_sub(30), pos.checked_sub(46));
        if let Some(h) = local.filter(|h| bytes[*h..].starts_with(b"PK\x03\x04")) {
            bytes[h + 8] = 12;
        } else if let Some(h) = central.filter(|h| bytes[*h..].starts_with(b"PK\x01\x02")) {
            bytes[h + 10] = 12;
        }
    }
    let found = sigs.examine_bytes(&bytes);
    let puids: Vec<&str> = found.formats.iter().map(|f| f.puid.as_str()).collect();
    assert_eq!((puids, found.basis), (vec!["fmt/483"], Basis::Container), "{:?}", found.container);
    assert_eq!(found.container, ContainerOutcome::Matched(ContainerKind::Zip));
}
