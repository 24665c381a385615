//! POST and PUT captures keyed by method and body as pywb looks them up: `index` (plain and
//! gzip WARCs) and `package --index` equal `cdxj-indexer -p` line for line on a WARC of form,
//! JSON, multipart and binary requests (each request before or after its response); pywb
//! replays the POST through webaip's index, and a plain GET of its URL gets the GET capture.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{assert_same, cdxj_indexer, webaip_index};
use crate::dedup::replay::replay_lines;

const FORM_BODY: &str = "q=caf%C3%A9+au+lait&n=2";
const FORM_TYPE: &str = "application/x-www-form-urlencoded";

fn record(t: &str, n: u32, to: Option<u32>, uri: &str, date: &str, block: &[u8]) -> Vec<u8> {
    let id = |n: u32| format!("<urn:uuid:00000000-0000-4000-8000-{n:012}>");
    let mut h = format!(
        "WARC/1.1\r\nWARC-Type: {t}\r\nWARC-Record-ID: {}\r\nWARC-Date: {date}\r\n\
         WARC-Target-URI: {uri}\r\n",
        id(n)
    );
    if let Some(to) = to {
        h.push_str(&format!("WARC-Concurrent-To: {}\r\n", id(to)));
    }
    // Stated: `cdxj-indexer -p` computes a missing one over an emptied stream.
    if t == "response" {
        let payload = &block[block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
        let sha = <sha1::Sha1 as sha1::Digest>::digest(payload);
        h.push_str(&format!(
            "WARC-Payload-Digest: sha1:{}\r\n",
            data_encoding::BASE32.encode(&sha)
        ));
    }
    h.push_str(&format!(
        "Content-Type: application/http; msgtype={t}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    ));
    let mut v = h.into_bytes();
    v.extend_from_slice(block);
    v.extend_from_slice(b"\r\n\r\n");
    v
}

fn request(method: &str, path: &str, ctype: &str, body: &[u8]) -> Vec<u8> {
    let mut v = format!(
        "{method} {path} HTTP/1.1\r\nHost: example.com\r\nContent-Type: {ctype}\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    v.extend_from_slice(body);
    v
}

fn response(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The records: each POST/PUT paired with its response (a request before or after it), a
/// GET of the form's URL, a warcinfo between pairs.
fn records() -> Vec<Vec<u8>> {
    let binary: Vec<u8> = (0..=255u8).cycle().take(700).collect();
    let json = br#"{"id": 7, "tags": ["a", "b c"], "ok": true, "n": {"id": 1.5, "z": null}}"#;
    let multipart = b"--BND\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello world\r\n\
--BND\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n\x00\x01~*\xff\r\n--BND--\r\n";
    let (form, api) = ("http://example.com/form", "http://example.com/api?x=1");
    let (up, mp) = ("http://example.com/upload", "http://example.com/mp");
    let t = |s: u32| format!("2024-01-01T00:00:{s:02}Z");
    vec![
        record("warcinfo", 1, None, "", &t(0), b"software: test\r\n"),
        record(
            "request",
            2,
            None,
            form,
            &t(1),
            &request("POST", "/form", FORM_TYPE, FORM_BODY.as_bytes()),
        ),
        record("response", 3, Some(2), form, &t(1), &response("POST answer")),
        record("response", 4, None, api, &t(2), &response("PUT answer")),
        record(
            "request",
            5,
            Some(4),
            api,
            &t(2),
            &request("PUT", "/api?x=1", "application/json", json),
        ),
        record(
            "request",
            6,
            None,
            up,
            &t(3),
            &request("POST", "/upload", "application/octet-stream", &binary),
        ),
        record("response", 7, Some(6), up, &t(3), &response("upload answer")),
        record(
            "request",
            8,
            None,
            mp,
            &t(4),
            &request("POST", "/mp", "multipart/form-data; boundary=BND", multipart),
        ),
        record("response", 9, Some(8), mp, &t(4), &response("multipart answer")),
        record("request", 10, None, form, &t(5), &request("GET", "/form", "text/plain", b"")),
        record("response", 11, Some(10), form, &t(5), &response("GET answer")),
    ]
}

/// The WARC written plain and gzip (a member per record) in `dir`.
fn warcs(dir: &Path) -> (PathBuf, PathBuf) {
    let (plain, gz) = (dir.join("post.warc"), dir.join("post.warc.gz"));
    let mut p = std::fs::File::create(&plain).unwrap();
    let mut g = std::fs::File::create(&gz).unwrap();
    for r in records() {
        p.write_all(&r).unwrap();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&r).unwrap();
        g.write_all(&enc.finish().unwrap()).unwrap();
    }
    (plain, gz)
}

#[test]
fn post_and_put_captures_index_as_cdxj_indexer_p_does() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, gz) = warcs(dir.path());
    for warc in [&plain, &gz] {
        let theirs = cdxj_indexer(&[warc], &["-p"]);
        let ours = webaip_index(&[warc], &[]);
        assert_eq!(ours.iter().filter(|l| l.contains("__wb_method=p")).count(), 4, "{ours:#?}");
        assert_same(&ours, &theirs, &warc.display().to_string());
    }
    // `package --index` keys them the same way, as it writes the package.
    let out = dir.path().join("pkg");
    let index = dir.path().join("pkg.cdxj");
    let o = crate::util::Package::new()
        .quiet()
        .args(&["--index", index.to_str().unwrap()])
        .run(&out, &gz);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    let written: Vec<String> =
        std::fs::read_to_string(&index).unwrap().lines().map(str::to_string).collect();
    let container = std::fs::read_dir(out.join("content"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .expect("a container");
    let name = container.file_name().unwrap().to_string_lossy().to_string();
    let theirs: Vec<String> = cdxj_indexer(&[&container], &["-p"])
        .iter()
        .map(|l| {
            l.replace(
                &format!("\"filename\": \"{name}\""),
                &format!("\"filename\": \"content/{name}\""),
            )
        })
        .collect();
    assert_same(&written, &theirs, "package --index");
}

#[test]
fn pywb_replays_the_post_and_a_get_gets_the_get_capture() {
    let dir = tempfile::tempdir().unwrap();
    let (_, gz) = warcs(dir.path());
    let index = dir.path().join("post.cdxj");
    let o =
        crate::util::webaip(&["index", "-q", "-o", index.to_str().unwrap(), gz.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let url = "http://example.com/form";
    let captures = serde_json::json!([
        ["20240101000001", url, "POST", FORM_BODY, FORM_TYPE],
        ["20240101000001", url],
    ]);
    let answers = replay_lines(&index, &[dir.path()], &captures);
    let sha = |s: &str| {
        use sha2::Digest;
        data_encoding::HEXLOWER.encode(&sha2::Sha256::digest(s.as_bytes()))
    };
    assert_eq!(answers[0]["status"], 200, "{answers:?}");
    assert_eq!(answers[0]["sha256"], sha("POST answer"), "the POST replays: {answers:?}");
    assert_eq!(answers[1]["status"], 200, "{answers:?}");
    assert_eq!(answers[1]["sha256"], sha("GET answer"), "a GET never gets the POST's answer");
}
