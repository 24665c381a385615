//! Hand-made Kulturarw3 archives packaged and read back with warcio: the line break before
//! a delimiter is the delimiter's (RFC 2046), LF or CRLF, and what the line ends cannot place
//! is placed by the stated digest, a mismatch named. (The reader itself is tested beside it,
//! in src/sources/kulturarw3/reader_tests.rs.)

use std::path::{Path, PathBuf};

use crate::util::repo;

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn md5_hex(b: &[u8]) -> String {
    use md5::Digest;
    crate::util::hex(&md5::Md5::digest(b))
}

fn sha1_hex(b: &[u8]) -> String {
    use sha1::Digest;
    crate::util::hex(&sha1::Sha1::digest(b))
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
    // Each file alone is read to its body, whichever its line ends, with no quirk.
    let out = tmp.path().join("pkg");
    let r = package_json(&src, &out);
    assert_eq!(r["captures"], want.len(), "{r}");
    assert_eq!(r["quirk_counts"], serde_json::json!({}), "no digest mismatch: {r}");
    assert_eq!(r["quirks"], serde_json::json!([]), "{r}");
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
    // In the package (made beside the harvest, not in it): the payloads, and every quirk in the
    // report with file and offset.
    let beside = tempfile::tempdir().unwrap();
    let out = beside.path().join("pkg");
    let r = package_json(tmp.path(), &out);
    let payloads = warcio_payloads(&out);
    assert_eq!(payloads[mixed], body);
    assert_eq!(payloads[md5_cr], with_cr);
    assert_eq!(payloads[wrong], body);
    let listed = r["quirks"].as_array().unwrap();
    let by_digest = listed.iter().filter(|x| x["kind"] == "line-break-by-digest").count();
    assert_eq!(by_digest, 2, "{r:#}");
    let rel = path.strip_prefix(tmp.path()).unwrap().to_str().unwrap().to_string();
    let m = listed.iter().find(|x| x["kind"] == "content-digest-mismatch").unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let offset = find(&bytes, b"\r\nHTTP-Content-MD5:").unwrap() as u64 + 2;
    assert_eq!(
        (m["file"].as_str(), m["offset"].as_u64()),
        (Some(rel.as_str()), Some(offset)),
        "{m}"
    );
    let detail = m["detail"].as_str().unwrap();
    assert!(detail.contains(&sha1_hex(body)) && detail.contains("SHA-1"), "{detail}");
    assert_eq!(listed.len(), 3, "{r:#}");
}
