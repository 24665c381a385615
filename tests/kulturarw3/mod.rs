//! Kulturarw3 archives (INPUT_FORMATS.md §4) read as captures: the committed sample checked
//! against an independent split of each file written from the grammar, every quirk with its
//! file and offset, and hostile trees (links, FIFOs, a header block over the bound, a file cut
//! before its closing delimiter, bytes that are not UTF-8, a large body holding the boundary).

use std::io::Read;
use std::path::{Path, PathBuf};

use webaip::sources::capture::{Capture, CaptureKind, CaptureSource, Payload, Quirk};
use webaip::sources::kulturarw3::{
    DATE_FROM_ARCHIVE_TIME, DATE_FROM_NAME, Kulturarw3Archive, MAX_HEADER_BLOCK, is_kulturarw3,
};

use crate::util::{copy_tree, repo, sample};

/// Every capture, then the source (for its quirks and side files).
fn read_all(root: &Path) -> (Vec<Capture>, Kulturarw3Archive) {
    let mut src = Kulturarw3Archive::open(root).unwrap();
    let caps: Vec<Capture> = src.by_ref().map(|c| c.unwrap()).collect();
    (caps, src)
}

fn payload(c: &Capture) -> Vec<u8> {
    let mut out = Vec::new();
    c.payload.open().unwrap().read_to_end(&mut out).unwrap();
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// The file split independently, from the grammar of §4.2: the top block up to the first
/// empty line; the boundary from it; the Header part's body from the empty line after its
/// `HTTP-Part: Header` (or v0.01 `HTTP-part: header-info`) line to the end of the HTTP
/// header (its first CRLF CRLF), when it is HTTP; the Content part's body from the empty
/// line after its part line to the LAST `\n--boundary--` of the file.
struct Split {
    top: Vec<u8>,
    header: Option<Vec<u8>>,
    content: Option<(usize, Vec<u8>)>,
}

fn split(file: &[u8]) -> Split {
    let top_end = find(file, b"\n\n").unwrap() + 1;
    let top = file[..top_end].to_vec();
    let at = find(&top, b"boundary=").unwrap() + 9;
    let b: Vec<u8> = top[at..]
        .iter()
        .copied()
        .skip_while(|&c| c == b'"')
        .take_while(|&c| c != b'"' && c != b'\n')
        .collect();
    let body_after =
        |marks: &[&[u8]]| marks.iter().find_map(|m| find(file, m).map(|p| p + m.len()));
    let header = body_after(&[b"\nHTTP-Part: Header\n\n", b"\nHTTP-part: header-info\n\n"])
        .filter(|&s| file[s..].starts_with(b"HTTP/"))
        .map(|s| file[s..s + find(&file[s..], b"\r\n\r\n").unwrap() + 4].to_vec());
    let closing = [&b"\n--"[..], &b, b"--"].concat();
    let content = body_after(&[b"\nHTTP-Part: Content\n\n", b"\nHTTP-part: content\n\n"])
        .map(|s| (s, file[s..rfind(file, &closing).unwrap()].to_vec()));
    Split { top, header, content }
}

fn quirks_of<'a>(src: &'a Kulturarw3Archive, file_end: &str) -> Vec<&'a Quirk> {
    src.quirks().iter().filter(|q| q.file.ends_with(file_end)).collect()
}

fn kinds(qs: &[&Quirk]) -> Vec<String> {
    let mut k: Vec<String> = qs.iter().map(|q| q.kind.clone()).collect();
    k.sort();
    k
}

fn by_uri<'a>(caps: &'a [Capture], uri: &str) -> &'a Capture {
    caps.iter().find(|c| c.uri == uri).unwrap_or_else(|| panic!("no capture of {uri}"))
}

#[test]
fn detects_the_archive_and_nothing_else() {
    assert!(is_kulturarw3(&sample("kulturarw3")));
    assert!(is_kulturarw3(&sample("kulturarw3").join("archive")));
    assert!(!is_kulturarw3(&sample("mirror")));
    assert!(!is_kulturarw3(&sample("pandas")));
    assert!(!is_kulturarw3(&sample("heritrix-job")));
}

#[test]
fn every_sample_file_is_one_capture_with_its_parts_byte_exact() {
    let (caps, src) = read_all(&sample("kulturarw3"));
    assert_eq!(src.shape_name(), "kulturarw3");
    assert_eq!(caps.len(), 10);
    assert!(src.side_files().is_empty());
    // In name order.
    let files: Vec<&str> = caps.iter().map(|c| c.provenance.file.as_str()).collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted);
    for c in &caps {
        let path = sample("kulturarw3").join(&c.provenance.file);
        let bytes = std::fs::read(&path).unwrap();
        let s = split(&bytes);
        assert_eq!(c.http_header, s.header, "{}: header", c.provenance.file);
        assert_eq!(
            c.kind,
            if s.header.is_some() { CaptureKind::Response } else { CaptureKind::Resource }
        );
        match (&c.payload, &s.content) {
            (Payload::Segment { path: p, offset, len }, Some((start, body))) => {
                assert_eq!(p, &path);
                assert_eq!(*offset as usize, *start, "{}", c.provenance.file);
                assert_eq!(*len as usize, body.len(), "{}", c.provenance.file);
                assert_eq!(&payload(c), body, "{}", c.provenance.file);
            }
            (p, None) => assert!(p.is_empty(), "{}", c.provenance.file),
            (p, Some(_)) => panic!("{}: payload {p:?}", c.provenance.file),
        }
        // The ArchiveInfo lines verbatim (CRLF-ended as warc-fields), and where the file was.
        let meta = c.metadata.as_ref().unwrap();
        for line in s.top.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n') {
            let want = [line, b"\r\n"].concat();
            assert!(
                find(meta, &want).is_some(),
                "{}: {:?} not in the metadata",
                c.provenance.file,
                String::from_utf8_lossy(line)
            );
        }
        let rel = c.provenance.file.strip_prefix("archive/").unwrap();
        assert!(find(meta, format!("kw3-path: {rel}\r\n").as_bytes()).is_some());
        let snapshot = rel.split('/').nth(2).unwrap();
        assert!(find(meta, format!("kw3-snapshot: {snapshot}\r\n").as_bytes()).is_some());
    }
}

#[test]
fn sample_fields_dates_truncation_and_types() {
    let (caps, _) = read_all(&sample("kulturarw3"));
    let home = by_uri(&caps, "http://www.example.se/");
    assert_eq!(home.date.timestamp(), 1136214245);
    assert_eq!(home.date_source.label, DATE_FROM_NAME);
    assert!(!home.date_source.inferred);
    assert_eq!(home.ip.as_deref(), Some("192.0.2.77"));
    assert_eq!(home.content_type.as_deref(), Some("text/html"));
    assert_eq!(payload(home), b"<html>Hello Sweden</html>");
    assert_eq!(home.truncated, None);
    assert_eq!(
        home.provenance.file,
        "archive/3f/www.example.se/17/4443a33a26034bd0d1fe8db1240a35e3.1136214245"
    );

    let redirect = by_uri(&caps, "http://www.example.se/about.html");
    assert!(redirect.payload.is_empty());
    assert_eq!(redirect.truncated, None);
    assert!(redirect.http_header.as_ref().unwrap().starts_with(b"HTTP/1.1 301 "));

    let png = by_uri(&caps, "http://www.example.se/logo.png");
    assert!(payload(png).starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(png.content_type.as_deref(), Some("image/png"));

    let pdf = by_uri(&caps, "http://www.example.se/report.pdf");
    assert_eq!(pdf.truncated.as_deref(), Some("length"));
    assert_eq!(pdf.payload.len(), 1000);

    // The body quotes both delimiter lines; it is read whole, to the real closing one.
    let quoting = by_uri(&caps, "http://www.example.se/format.html");
    let body = payload(quoting);
    let b = "KulturArw3_d26ee5ec1bbf8a437b6d41431e3a6d00";
    assert!(find(&body, format!("\n--{b}\n").as_bytes()).is_some());
    assert!(find(&body, format!("\n--{b}--\n").as_bytes()).is_some());
    assert!(body.ends_with(b"</pre></html>"));
    assert_eq!(quoting.truncated, None);

    let old = by_uri(&caps, "http://www.kb.se/");
    assert_eq!(old.ip.as_deref(), Some("192.0.2.33"), "HTTP-IP-addr read");
    assert_eq!(old.kind, CaptureKind::Response);
    assert_eq!(old.date.timestamp(), 874310400);
    // The LF before the next delimiter is the delimiter's, not the header's.
    assert!(old.http_header.as_ref().unwrap().ends_with(b"text/html\r\n\r\n"));
    assert_eq!(payload(old).last(), Some(&b'\n'), "the body's own last LF stays");

    let ftp = by_uri(&caps, "ftp://ftp.example.se/pub/README");
    assert_eq!(ftp.kind, CaptureKind::Resource);
    assert_eq!(ftp.http_header, None);
    assert_eq!(ftp.content_type.as_deref(), Some("text/plain"));
    assert_eq!(ftp.date.timestamp(), 874310410);
    assert_eq!(ftp.date_source.label, DATE_FROM_ARCHIVE_TIME);
    assert!(ftp.date_source.inferred);
    // The non-HTTP Header part is kept in the metadata.
    let meta = ftp.metadata.as_ref().unwrap();
    let b64 = data_encoding_base64(b"226 Transfer complete.\r\n\n");
    assert!(find(meta, b64.as_bytes()).is_some(), "{}", String::from_utf8_lossy(meta));

    let port = by_uri(&caps, "http://www.example.se:8080/page.html");
    assert!(port.provenance.file.starts_with("archive/02/www.example.se:8080/17/"));
    let css = by_uri(&caps, "http://www.example.se/style.css");
    assert!(find(css.metadata.as_ref().unwrap(), b"kw3-snapshot: current\r\n").is_some());
}

/// Base64 as RFC 4648 writes it (written here, not taken from the crate under test).
fn data_encoding_base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n =
            chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn every_sample_quirk_is_reported_with_file_and_offset() {
    let (_, src) = read_all(&sample("kulturarw3"));
    let news = "f5a925697224fe10d629b1ae180f0d56.1136214255";
    assert_eq!(
        kinds(&quirks_of(&src, news)),
        [
            "archive-time-before-fetch",
            "bytes-outside-parts",
            "content-digest-mismatch",
            "header-md5-mismatch"
        ]
    );
    let bytes = std::fs::read(sample("kulturarw3").join("archive/3f/www.example.se/17").join(news))
        .unwrap();
    let epilogue = b"stray bytes after the end\n";
    let q = quirks_of(&src, news).into_iter().find(|q| q.kind == "bytes-outside-parts").unwrap();
    assert_eq!(q.offset, Some((bytes.len() - epilogue.len()) as u64));
    assert!(q.detail.starts_with(&format!("{} bytes", epilogue.len())));
    // A quirk about a field points at its line.
    for (kind, field) in [
        ("header-md5-mismatch", "\nHTTP-Header-MD5:"),
        ("content-digest-mismatch", "\nHTTP-Content-MD5:"),
        ("archive-time-before-fetch", "\nHTTP-Archive-Time:"),
    ] {
        let q = quirks_of(&src, news).into_iter().find(|q| q.kind == kind).unwrap();
        assert_eq!(q.offset, Some(find(&bytes, field.as_bytes()).unwrap() as u64 + 1), "{kind}");
    }
    let (caps, _) = read_all(&sample("kulturarw3"));
    let meta = by_uri(&caps, "http://www.example.se/news.html").metadata.clone().unwrap();
    let line = format!(
        "kw3-unparted: {} {} {}\r\n",
        bytes.len() - epilogue.len(),
        epilogue.len(),
        data_encoding_base64(epilogue)
    );
    assert!(find(&meta, line.as_bytes()).is_some());

    let pdf = "d915bff63be18a008e64b2d986755c66.1136214251";
    let q = quirks_of(&src, pdf);
    assert_eq!(kinds(&q), ["truncated"]);
    let bytes =
        std::fs::read(sample("kulturarw3").join("archive/3f/www.example.se/17").join(pdf)).unwrap();
    assert_eq!(q[0].offset, Some(split(&bytes).content.unwrap().0 as u64));
    assert!(
        q[0].detail.contains("1000 bytes stored") && q[0].detail.contains("4096"),
        "{}",
        q[0].detail
    );

    assert_eq!(
        kinds(&quirks_of(&src, "4943ce9eebd77a8d4a5b01a123d6b209.1136214247")),
        ["no-content-digest"]
    );
    let old = "01598f14e59a3fc4bef99f070218ee1b.874310400";
    assert_eq!(kinds(&quirks_of(&src, old)), ["bytes-outside-parts", "v0.01-header-names"]);
    let bytes =
        std::fs::read(sample("kulturarw3").join("archive/53/www.kb.se/1").join(old)).unwrap();
    let pre = quirks_of(&src, old).into_iter().find(|q| q.kind == "bytes-outside-parts").unwrap();
    assert_eq!(pre.offset, Some(find(&bytes, b"This is a multi-part").unwrap() as u64));
    let v = quirks_of(&src, old).into_iter().find(|q| q.kind == "v0.01-header-names").unwrap();
    for n in ["HTTP-www-archiver", "HTTP-archiver-version", "HTTP-IP-addr", "HTTP-part"] {
        assert!(v.detail.contains(n), "{}", v.detail);
    }
    assert_eq!(
        kinds(&quirks_of(&src, "11397fa3592c52d29f7f7033408a9036")),
        ["bytes-outside-parts", "no-epoch-in-name", "not-http-header", "v0.01-header-names"]
    );
    assert_eq!(kinds(&quirks_of(&src, "archive/3f/www.example.se/current")), ["current-snapshot"]);
    assert_eq!(kinds(&quirks_of(&src, "archive/02/www.example.se:8080")), ["host-port-directory"]);
    // Nothing else: the clean files have no quirk.
    assert_eq!(src.quirks().len(), 4 + 1 + 1 + 2 + 4 + 1 + 1, "{:#?}", src.quirks());
}

/// A copy of the sample to spoil.
fn copy_sample() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&sample("kulturarw3"), tmp.path());
    tmp
}

const HOME: &str = "archive/3f/www.example.se/17/4443a33a26034bd0d1fe8db1240a35e3.1136214245";

#[test]
fn links_and_fifos_are_refused_and_named() {
    let tmp = copy_sample();
    let dir = tmp.path().join("archive/3f/www.example.se/17");
    let link = dir.join("00000000000000000000000000000000.1136214245");
    std::os::unix::fs::symlink(tmp.path().join(HOME), &link).unwrap();
    std::os::unix::fs::symlink("/etc", tmp.path().join("archive/3f/www.example.se/18")).unwrap();
    let fifo = dir.join("11111111111111111111111111111111.1136214245");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (caps, src) = read_all(tmp.path());
    assert_eq!(caps.len(), 10, "neither link nor FIFO read");
    for name in [
        "archive/3f/www.example.se/17/00000000000000000000000000000000.1136214245",
        "archive/3f/www.example.se/18",
        "archive/3f/www.example.se/17/11111111111111111111111111111111.1136214245",
    ] {
        let q = src
            .quirks()
            .iter()
            .find(|q| q.file == name)
            .unwrap_or_else(|| panic!("{name} not reported"));
        assert_eq!(q.kind, "refused-entry");
    }
    assert!(src.side_files().is_empty());
}

#[test]
fn a_header_block_over_the_bound_is_refused_naming_the_file_and_kept() {
    let tmp = copy_sample();
    let name = "archive/3f/www.example.se/17/22222222222222222222222222222222.1136214245";
    let mut big = Vec::new();
    while big.len() <= MAX_HEADER_BLOCK {
        big.extend(b"HTTP-Filler: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
    }
    std::fs::write(tmp.path().join(name), &big).unwrap();
    let (caps, src) = read_all(tmp.path());
    assert_eq!(caps.len(), 10, "the other files are still read");
    let q = src.quirks().iter().find(|q| q.file == name).unwrap();
    assert_eq!(q.kind, "refused-file");
    assert_eq!(q.offset, Some(MAX_HEADER_BLOCK as u64));
    let side = src.side_files();
    assert_eq!(side.len(), 1);
    assert_eq!(side[0].relative, name);
}

#[test]
fn a_file_cut_before_its_closing_delimiter_is_read_to_its_end_and_reported() {
    let tmp = copy_sample();
    let path = tmp.path().join(HOME);
    let bytes = std::fs::read(&path).unwrap();
    let cut = find(&bytes, b"Sweden").unwrap();
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let (caps, src) = read_all(tmp.path());
    let c = by_uri(&caps, "http://www.example.se/");
    assert_eq!(payload(c), b"<html>Hello ");
    assert_eq!(c.truncated.as_deref(), Some("unspecified"));
    let q = src.quirks().iter().find(|q| q.file == HOME).unwrap();
    assert_eq!(q.kind, "missing-closing-delimiter");
    assert_eq!(q.offset, Some(cut as u64));
}

#[test]
fn bytes_that_are_not_utf8_in_headers_do_not_panic_and_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("archive/aa/host/1");
    std::fs::create_dir_all(&dir).unwrap();
    let b = "KulturArw3_x";
    // Written as chars U+0000..U+00FF, then each taken as the byte it numbers: Latin-1 and
    // a NUL in ArchiveInfo values, a C1 byte in the HTTP header, bytes that are not UTF-8.
    let text = format!(
        "MIME-version: 1.1\nContent-Type: multipart/mixed; boundary={b}\nHTTP-URL: http://host/\u{ff}\n\
         HTTP-Note: caf\u{e9} \u{0} end\nHTTP-Archive-Time: 1000000000\n\n\
         --{b}\nHTTP-Part: Header\n\nHTTP/1.0 200 OK\r\nX-Name: \u{81}\u{fe}\r\n\r\n\
         --{b}\nContent-Type: \u{ff}/\u{fe}\nHTTP-Part: Content\n\n"
    );
    let mut f: Vec<u8> = text.chars().map(|c| c as u32 as u8).collect();
    f.extend(b"\xff\xfe body");
    f.extend(format!("\n--{b}--\n").as_bytes());
    let name = dir.join("0123456789abcdef0123456789abcdef.1000000001");
    std::fs::write(&name, &f).unwrap();
    let (caps, src) = read_all(tmp.path());
    assert_eq!(caps.len(), 1);
    let c = &caps[0];
    assert_eq!(c.uri, "http://host/%FF");
    assert_eq!(c.http_header.as_deref(), Some(&b"HTTP/1.0 200 OK\r\nX-Name: \x81\xfe\r\n\r\n"[..]));
    assert_eq!(payload(c), b"\xff\xfe body");
    let meta = c.metadata.as_ref().unwrap();
    // Verbatim where it cannot end a field, base64 where a control byte could.
    assert!(find(meta, b"HTTP-URL: http://host/\xff\r\n").is_some());
    assert!(
        find(
            meta,
            format!(
                "kw3-line-base64: {}\r\n",
                data_encoding_base64(b"HTTP-Note: caf\xe9 \x00 end")
            )
            .as_bytes()
        )
        .is_some()
    );
    let mut k: Vec<&str> = src.quirks().iter().map(|q| q.kind.as_str()).collect();
    k.sort();
    assert_eq!(
        k,
        ["archive-time-before-fetch", "hh-mismatch", "url-md5-mismatch"],
        "{:#?}",
        src.quirks()
    );
}

#[test]
fn a_large_body_holding_the_boundary_is_found_without_the_stated_length() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("archive/aa/host/1");
    std::fs::create_dir_all(&dir).unwrap();
    let b = "KulturArw3_big";
    let mut f = format!(
        "MIME-version: 1.1\nContent-Type: multipart/mixed; boundary={b}\nHTTP-URL: http://host/big\n\
         HTTP-Content-Length: 99\n\n--{b}\nHTTP-Part: Header\n\nHTTP/1.1 200 OK\r\n\r\n--{b}\n\
         Content-Type: application/octet-stream\nHTTP-Part: Content\n\n"
    )
    .into_bytes();
    let start = f.len();
    // 3 MiB (beyond what is read into memory), false closing delimiters inside, one across
    // the backward scan's 64 KiB chunk edge.
    let mut body = vec![b'x'; 3 << 20];
    let fake = format!("\n--{b}--\n");
    for at in [100, 1 << 20, (3 << 20) - (64 << 10) - 5] {
        body[at..at + fake.len()].copy_from_slice(fake.as_bytes());
    }
    f.extend(&body);
    f.extend(fake.as_bytes());
    std::fs::write(dir.join("0123456789abcdef0123456789abcdef.1000000000"), &f).unwrap();
    let (caps, src) = read_all(tmp.path());
    match &caps[0].payload {
        Payload::Segment { offset, len, .. } => {
            assert_eq!(*offset as usize, start);
            assert_eq!(*len as usize, body.len());
        }
        p => panic!("{p:?}"),
    }
    assert!(src.quirks().iter().any(|q| q.kind == "content-length-mismatch"));
}

const REDIRECT: &str = "archive/3f/www.example.se/17/4943ce9eebd77a8d4a5b01a123d6b209.1136214247";

#[test]
fn a_missing_content_part_with_a_stated_length_is_truncation() {
    let tmp = copy_sample();
    let path = tmp.path().join(REDIRECT);
    let bytes = std::fs::read(&path).unwrap();
    let at = find(&bytes, b"HTTP-Content-Length: 0\n").unwrap();
    let spoilt = [&bytes[..at], b"HTTP-Content-Length: 9\n", &bytes[at + 23..]].concat();
    std::fs::write(&path, spoilt).unwrap();
    let (caps, src) = read_all(tmp.path());
    let c = by_uri(&caps, "http://www.example.se/about.html");
    assert!(c.payload.is_empty());
    assert_eq!(c.truncated.as_deref(), Some("length"));
    let k: Vec<&str> =
        src.quirks().iter().filter(|q| q.file == REDIRECT).map(|q| q.kind.as_str()).collect();
    assert_eq!(k, ["missing-content-part", "no-content-digest"]);
}

#[test]
fn a_large_epilogue_keeps_the_whole_file_beside_the_capture() {
    let tmp = copy_sample();
    let path = tmp.path().join(HOME);
    let mut bytes = std::fs::read(&path).unwrap();
    let end = bytes.len();
    bytes.extend(vec![b'e'; 70 << 10]);
    std::fs::write(&path, &bytes).unwrap();
    let (caps, src) = read_all(tmp.path());
    let c = by_uri(&caps, "http://www.example.se/");
    assert_eq!(payload(c), b"<html>Hello Sweden</html>");
    let meta = c.metadata.as_ref().unwrap();
    assert!(find(meta, format!("kw3-unparted: {end} {}\r\n", 70 << 10).as_bytes()).is_some());
    assert!(find(meta, format!("kw3-original-file: {HOME}\r\n").as_bytes()).is_some());
    let side = src.side_files();
    assert_eq!(side.len(), 1);
    assert_eq!((side[0].path.as_path(), side[0].relative.as_str()), (path.as_path(), HOME));
    let q = src.quirks().iter().find(|q| q.file == HOME).unwrap();
    assert_eq!((q.kind.as_str(), q.offset), ("bytes-outside-parts", Some(end as u64)));
}

// Issue 25, item 3: the line break before a delimiter is the delimiter's (RFC 2046), LF or
// CRLF; a CRLF file's payloads gained its CR.

fn md5_hex(b: &[u8]) -> String {
    use md5::Digest;
    webaip::formats::digest::hex(&md5::Md5::digest(b))
}

fn sha1_hex(b: &[u8]) -> String {
    use sha1::Digest;
    webaip::formats::digest::hex(&sha1::Sha1::digest(b))
}

/// How a hand-made Kulturarw3 file is written.
struct Kw3<'a> {
    url: &'a str,
    /// The line end of every MIME line (the HTTP header is CRLF whatever it is).
    eol: &'a str,
    /// The line break before the closing delimiter (`eol` in a file that does not mix them).
    last_break: &'a str,
    body: &'a [u8],
    stated_len: bool,
    /// `HTTP-Content-MD5`'s value.
    digest: String,
}

impl Kw3<'_> {
    /// The file, after §4.2 with `eol` for its line ends and the body's part closed by the
    /// RFC 2046 delimiter (line break, `--boundary--`, line break). Its place in the archive.
    fn write(&self, root: &Path) -> PathBuf {
        let (eol, b) = (self.eol, format!("KulturArw3_{}", md5_hex(self.url.as_bytes())));
        let http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
        let mut top = vec![
            "MIME-version: 1.1".to_string(),
            format!("Content-Type: multipart/mixed; boundary={b}"),
            "HTTP-Part: ArchiveInfo".into(),
            format!("HTTP-URL: {}", self.url),
            "HTTP-IP-Address: 192.0.2.77".into(),
            format!("HTTP-Header-Length: {}", http.len()),
            format!("HTTP-Header-MD5: {}", md5_hex(http)),
        ];
        if self.stated_len {
            top.push(format!("HTTP-Content-Length: {}", self.body.len()));
        }
        top.push(format!("HTTP-Content-MD5: {}", self.digest));
        top.push("HTTP-Archive-Time: 1136214246".into());
        top.push("HTTP-Status-Code: 200".into());
        let mut f = format!("{}{eol}{eol}", top.join(eol)).into_bytes();
        f.extend(
            format!("--{b}{eol}Content-Type: text/plain{eol}HTTP-Part: Header{eol}{eol}").bytes(),
        );
        f.extend(http);
        f.extend(
            format!("{eol}--{b}{eol}Content-Type: text/html{eol}HTTP-Part: Content{eol}{eol}")
                .bytes(),
        );
        f.extend(self.body);
        f.extend(format!("{}--{b}--{eol}", self.last_break).bytes());
        let host = self.url.split('/').nth(2).unwrap();
        let dir = root.join("archive").join(&md5_hex(host.as_bytes())[..2]).join(host).join("1");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}.1136214245", md5_hex(self.url.as_bytes())));
        std::fs::write(&path, f).unwrap();
        path
    }
}

/// Bodies whose ends a wrong split would change: no final line break, the body's own CRLF,
/// a binary body whose last byte is a CR.
const BODIES: [&[u8]; 3] =
    [b"<html>Hej\r\nSverige</html>", b"line one\r\nline two\r\n", b"bin\x00\xff\r"];

/// The payload of every response record of the package's content WARCs, as warcio reads
/// them (digests checked): URI to payload.
fn warcio_payloads(pkg: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let script = r#"
import glob, json, sys
from warcio.archiveiterator import ArchiveIterator
out = {}
for path in sorted(glob.glob(sys.argv[1] + "/content/*.warc.gz")):
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, check_digests=True):
            payload = rec.raw_stream.read()
            assert rec.digest_checker.passed is not False, rec.digest_checker.problems
            if rec.rec_type == "response":
                out[rec.rec_headers.get_header("WARC-Target-URI")] = payload.hex()
json.dump(out, sys.stdout)
"#;
    let o = std::process::Command::new(crate::util::oracle_python())
        .args(["-c", script])
        .arg(pkg)
        .output()
        .unwrap();
    assert!(o.status.success(), "warcio: {}", String::from_utf8_lossy(&o.stderr));
    let m: std::collections::BTreeMap<String, String> = serde_json::from_slice(&o.stdout).unwrap();
    m.into_iter().map(|(k, v)| (k, data_encoding::HEXLOWER.decode(v.as_bytes()).unwrap())).collect()
}

/// The report of a package of `src` the run must make (exit 0).
fn package_json(src: &Path, out: &Path) -> serde_json::Value {
    let (code, r) = crate::util::package_json(src, out);
    assert_eq!(code, Some(0), "{r:#}");
    r
}

#[test]
fn r25_crlf_files_give_the_body_their_own_sha1_names_and_lf_files_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("k");
    let mut want = Vec::new();
    for (e, eol) in ["\n", "\r\n"].into_iter().enumerate() {
        for stated_len in [true, false] {
            for (i, body) in BODIES.into_iter().enumerate() {
                let url = format!("http://www.example.se/e{e}-l{}-b{i}", stated_len as u8);
                let digest = sha1_hex(body);
                Kw3 { url: &url, eol, last_break: eol, body, stated_len, digest }.write(&src);
                want.push((url, body));
            }
        }
    }
    // Each file alone is read to its body, whichever its line ends.
    let (caps, kw3) = read_all(&src);
    assert_eq!(caps.len(), want.len());
    for c in &caps {
        let (_, body) = want.iter().find(|(u, _)| *u == c.uri).unwrap();
        assert_eq!(payload(c), *body, "{}", c.uri);
    }
    assert!(kw3.quirks().is_empty(), "{:#?}", kw3.quirks());

    let out = tmp.path().join("pkg");
    let r = package_json(&src, &out);
    assert_eq!(r["captures"], want.len(), "{r}");
    assert_eq!(r["quirk_counts"], serde_json::json!({}), "no digest mismatch: {r}");
    let payloads = warcio_payloads(&out);
    assert_eq!(payloads.len(), want.len());
    for (url, body) in &want {
        let got = &payloads[url];
        assert_eq!(got, body, "{url}: the WARC payload is the body");
        assert_eq!(sha1_hex(got), sha1_hex(body), "{url}: the file's own SHA-1");
    }
    // The CRLF files give the payloads of the LF ones.
    for (e0, e1) in want[..6].iter().zip(&want[6..]) {
        assert_eq!(payloads[&e0.0], payloads[&e1.0], "{} / {}", e0.0, e1.0);
    }
    let captures = std::process::Command::new(crate::util::oracle_python())
        .arg(repo().join("tests/oracle/check_captures.py"))
        .args([&out, &src])
        .arg("kulturarw3")
        .output()
        .unwrap();
    assert!(captures.status.success(), "{}", String::from_utf8_lossy(&captures.stdout));
}

#[test]
fn r25_a_cr_the_line_ends_cannot_place_is_placed_by_the_digest_and_a_mismatch_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let body: &[u8] = b"<html>mixed</html>";
    let with_cr = [body, b"\r"].concat();
    // LF delimiter lines but a CRLF before the closing one, no stated length: the CR would be
    // the body's, but the SHA-1 is of the body without it.
    let mixed = "http://www.example.se/mixed";
    Kw3 {
        url: mixed,
        eol: "\n",
        last_break: "\r\n",
        body,
        stated_len: false,
        digest: sha1_hex(body),
    }
    .write(tmp.path());
    // CRLF lines but a bare LF before the closing delimiter after a body ending in CR, and an
    // MD5 of the body with that CR: the CR is the body's.
    let md5_cr = "http://www.example.se/md5-cr";
    let digest = md5_hex(&with_cr);
    Kw3 { url: md5_cr, eol: "\r\n", last_break: "\n", body: &with_cr, stated_len: false, digest }
        .write(tmp.path());
    // A CRLF file whose SHA-1 is of other bytes: checked, and the mismatch named.
    let wrong = "http://www.example.se/wrong";
    let path = Kw3 {
        url: wrong,
        eol: "\r\n",
        last_break: "\r\n",
        body,
        stated_len: true,
        digest: sha1_hex(b"other"),
    }
    .write(tmp.path());
    let (caps, src) = read_all(tmp.path());
    assert_eq!(payload(by_uri(&caps, mixed)), body);
    assert_eq!(payload(by_uri(&caps, md5_cr)), with_cr);
    assert_eq!(payload(by_uri(&caps, wrong)), body);
    let by_digest: Vec<&Quirk> =
        src.quirks().iter().filter(|q| q.kind == "line-break-by-digest").collect();
    assert_eq!(by_digest.len(), 2, "{:#?}", src.quirks());
    let rel = path.strip_prefix(tmp.path()).unwrap().to_str().unwrap().to_string();
    let q = src.quirks().iter().find(|q| q.kind == "content-digest-mismatch").unwrap();
    assert_eq!(q.file, rel);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(q.offset, Some(find(&bytes, b"\r\nHTTP-Content-MD5:").unwrap() as u64 + 2));
    assert!(q.detail.contains(&sha1_hex(body)) && q.detail.contains("SHA-1"), "{}", q.detail);
    assert_eq!(src.quirks().len(), 3, "{:#?}", src.quirks());

    // In the package (made beside the harvest, not in it): the same payloads, the mismatch in
    // the report with file and offset.
    let beside = tempfile::tempdir().unwrap();
    let out = beside.path().join("pkg");
    let r = package_json(tmp.path(), &out);
    let payloads = warcio_payloads(&out);
    assert_eq!(payloads[mixed], body);
    assert_eq!(payloads[md5_cr], with_cr);
    assert_eq!(payloads[wrong], body);
    let listed = r["quirks"].as_array().unwrap();
    let m = listed.iter().find(|x| x["kind"] == "content-digest-mismatch").unwrap();
    assert_eq!((m["file"].as_str(), m["offset"].as_u64()), (Some(rel.as_str()), q.offset), "{m}");
}
