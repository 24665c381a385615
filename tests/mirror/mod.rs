//! wget mirrors become packages: a mirror built here (extension-less pages, a `?query` page as
//! wget saves it, an image without extension, a stylesheet, a wget log), read back by warcio.

mod roots_and_links;

use std::path::Path;
use std::process::Command;

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{Package, oracle_python, package};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\x0f\0\0\x01\x01\0\x05\x18\xd8N\0\0\0\0IEND\xaeB`\x82";

/// A wget -r -x mirror of http://www.example.org/, with its log when `log` is true.
pub(crate) fn make_mirror(dir: &Path, log: bool) {
    let h = dir.join("www.example.org");
    std::fs::create_dir_all(h.join("img")).unwrap();
    std::fs::write(
        h.join("index.html"),
        "<!DOCTYPE html>\n<html><head><title>Example  Home</title>\
         <link rel=\"stylesheet\" href=\"/site.css\"></head><body>\
         <a href=\"about\">About</a> <a href=\"/?p=1\">Page 1</a> <img src=\"img/logo\"/></body></html>\n",
    )
    .unwrap();
    std::fs::write(
        h.join("about"),
        "\n  <HTML><BODY><a href=\"/\">Home</a> <a href=\"./?p=1\">Page 1</a></BODY></HTML>\n",
    )
    .unwrap();
    std::fs::write(h.join("index.html?p=1"), "<div><a href=\"about\">About</a></div>\n").unwrap();
    std::fs::write(h.join("site.css"), "body { background: url(img/logo) }\n").unwrap();
    std::fs::write(h.join("img/logo"), PNG).unwrap();
    if log {
        let mut text = String::new();
        for (t, url, path) in [
            ("10:11:12", "http://www.example.org/", "index.html"),
            ("10:11:13", "http://www.example.org/site.css", "site.css"),
            ("10:11:14", "http://www.example.org/about", "about"),
            ("10:11:15", "http://www.example.org/?p=1", "index.html?p=1"),
            ("10:11:16", "http://www.example.org/img/logo", "img/logo"),
        ] {
            text.push_str(&format!(
                "--2024-01-02 {t}--  {url}\nResolving www.example.org... 93.184.216.34\n\
                 HTTP request sent, awaiting response... 200 OK\nLength: 10 [text/html]\n\
                 Saving to: \u{2018}www.example.org/{path}\u{2019}\n\n\
                 2024-01-02 {t} (1 MB/s) - \u{2018}www.example.org/{path}\u{2019} saved [10/10]\n\n"
            ));
        }
        std::fs::write(dir.join("wget-log"), text).unwrap();
    }
}

/// Every resource record of the package's content container: (URL, date, type, body).
fn records(pkg: &Path) -> serde_json::Value {
    let script = r#"
import json, sys, glob
from warcio.archiveiterator import ArchiveIterator
out = []
for p in sorted(glob.glob(sys.argv[1] + '/content/*.warc.gz')):
    with open(p, 'rb') as f:
        for r in ArchiveIterator(f):
            if r.rec_type == 'resource':
                h = r.rec_headers
                out.append({'url': h.get_header('WARC-Target-URI'), 'date': h.get_header('WARC-Date'),
                            'type': h.get_header('Content-Type'),
                            'body': r.content_stream().read().decode('latin-1')})
            elif r.rec_type == 'metadata':
                out.append({'meta': h.get_header('WARC-Target-URI') if False else r.rec_headers.get_header('WARC-Target-URI'),
                            'fields': r.content_stream().read().decode('utf-8')})
print(json.dumps(out))
"#;
    let o =
        Command::new(oracle_python()).args(["-c", script, pkg.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_wget_mirror_with_its_log_becomes_a_package() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("site");
    make_mirror(&src, true);
    let out = t.path().join("pkg");
    let o = package(Package::new().json().schemas(), &out, &[&src]).output;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["kind"], "mirror", "{v:#}");
    let r = &crate::util::with_mirror(&v);
    assert_eq!(r["mirror"]["kind"], "wget");
    assert_eq!(r["mirror"]["site_url"], "http://www.example.org/");
    assert!(r["mirror"]["site_url_source"].as_str().unwrap().contains("wget log wget-log"), "{r}");
    assert_eq!(r["mirror"]["capture_date"], "2024-01-02T10:11:12+00:00");
    assert!(r["mirror"]["capture_date_source"].as_str().unwrap().starts_with("wget log"));
    assert_eq!(r["mirror"]["root_title"], "Example Home");
    let notes = r["metadata_notes"].to_string();
    assert!(
        notes.contains(
            "title from the <title> of the mirror's root page www.example.org/index.html"
        ),
        "{notes}"
    );
    assert!(notes.contains("target URL http://www.example.org/ from wget log"), "{notes}");
    assert!(!notes.contains("seeds"), "{notes}");

    let (ok, text) = oracle_validate(&out.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&out.join("METS.xml"));

    let recs = records(&out);
    let rec = |url: &str| {
        recs.as_array()
            .unwrap()
            .iter()
            .find(|x| x["url"] == url)
            .unwrap_or_else(|| panic!("no record at {url}: {recs}"))
            .clone()
    };
    for (url, date) in [
        ("http://www.example.org/", "2024-01-02T10:11:12Z"),
        ("http://www.example.org/site.css", "2024-01-02T10:11:13Z"),
        ("http://www.example.org/about", "2024-01-02T10:11:14Z"),
        ("http://www.example.org/?p=1", "2024-01-02T10:11:15Z"),
        ("http://www.example.org/img/logo", "2024-01-02T10:11:16Z"),
    ] {
        assert_eq!(rec(url)["date"], date, "{url}");
    }
    assert_eq!(recs.as_array().unwrap().iter().filter(|x| x["url"].is_string()).count(), 5);
    assert_eq!(rec("http://www.example.org/about")["type"], "text/html");
    assert_eq!(rec("http://www.example.org/?p=1")["type"], "text/html");
    assert_eq!(rec("http://www.example.org/img/logo")["type"], "image/png");
    assert_eq!(rec("http://www.example.org/site.css")["type"], "text/css");
    // Extension-less pages are rewritten: links absolute, at the records' URLs.
    let about = rec("http://www.example.org/about")["body"].as_str().unwrap().to_string();
    assert!(about.contains("href=\"http://www.example.org/\""), "{about}");
    assert!(about.contains("href=\"http://www.example.org/?p=1\""), "{about}");
    let p1 = rec("http://www.example.org/?p=1")["body"].as_str().unwrap().to_string();
    assert!(p1.contains("href=\"http://www.example.org/about\""), "{p1}");
    let home = rec("http://www.example.org/")["body"].as_str().unwrap().to_string();
    assert!(home.contains("src=\"http://www.example.org/img/logo\""), "{home}");
    assert!(home.contains("href=\"http://www.example.org/site.css\""), "{home}");
    // The metadata records say where the type, URL and time came from.
    let meta = recs
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["meta"] == "http://www.example.org/img/logo")
        .unwrap();
    let fields = meta["fields"].as_str().unwrap();
    assert!(fields.contains("mime-source: sniffed"), "{fields}");
    assert!(fields.contains("url-source: wget log"), "{fields}");
    assert!(fields.contains("capture-time-source: wget log"), "{fields}");
}

#[test]
fn a_mirror_without_a_log_needs_the_operator_and_uses_what_it_says() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("site");
    make_mirror(&src, false);
    let o = package(Package::new().json().schemas(), &t.path().join("none"), &[&src]).output;
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("records no capture date") && err.contains("--capture-date"), "{err}");
    assert!(!t.path().join("none/METS.xml").exists());

    let out = t.path().join("pkg");
    let o = package(
        Package::new().json().schemas().args(&[
            "--url-prefix",
            "https://www.example.org/",
            "--capture-date",
            "2023-05-06T07:08:09Z",
        ]),
        &out,
        &[&src],
    )
    .output;
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mirror"]["capture_date_source"], "--capture-date");
    assert_eq!(v["mirror"]["site_url_source"], "--url-prefix");
    assert_webaip_valid(&out.join("METS.xml"));
    let recs = records(&out);
    let urls: Vec<&str> =
        recs.as_array().unwrap().iter().filter_map(|x| x["url"].as_str()).collect();
    for u in [
        "https://www.example.org/",
        "https://www.example.org/about",
        "https://www.example.org/?p=1",
        "https://www.example.org/img/logo",
    ] {
        assert!(urls.contains(&u), "{u} not in {urls:?}");
    }
    assert!(
        recs.as_array()
            .unwrap()
            .iter()
            .filter(|x| x["url"].is_string())
            .all(|x| x["date"] == "2023-05-06T07:08:09Z")
    );
}

#[test]
fn an_unrecognised_directory_is_told_every_accepted_shape() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("notes.txt"), "hello").unwrap();
    let beside = tempfile::tempdir().unwrap();
    let out = beside.path().join("pkg");
    let o = package(Package::new().json().schemas(), &out, &[t.path()]).output;
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    for shape in [
        "Heritrix 1.x job",
        "Heritrix 3.x job",
        "ARC/WARC files",
        "PANDAS instance",
        "PANDAS title",
        "wget or HTTrack mirror",
    ] {
        assert!(err.contains(shape), "{shape} not in {err}");
    }
}

#[test]
fn a_zip_of_a_mirror_is_unpacked_confined_and_packaged() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("site");
    make_mirror(&src, true);
    let zip = t.path().join("site.zip");
    // Written by Python's zipfile: the mirror's folder, a link entry and a name leaving it.
    let script = r#"
import os, sys, zipfile
src, zp = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(zp, 'w', zipfile.ZIP_DEFLATED) as z:
    for d, _, fs in os.walk(src):
        for f in fs:
            p = os.path.join(d, f)
            z.write(p, os.path.join('site', os.path.relpath(p, src)))
    link = zipfile.ZipInfo('site/www.example.org/passwd')
    link.external_attr = (0o120777 << 16)
    z.writestr(link, '/etc/passwd')
    z.writestr('../escaped.html', '<p>out</p>')
"#;
    let o = Command::new(oracle_python())
        .args(["-c", script, src.to_str().unwrap(), zip.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = t.path().join("pkg");
    let o = package(Package::new().json().schemas(), &out, &[&zip]).output;
    // Made, with findings: the two refused entries.
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let refused = v["packages"][0]["refused"].to_string();
    assert!(refused.contains("passwd") && refused.contains("symbolic link"), "{refused}");
    assert!(refused.contains("escaped.html"), "{refused}");
    assert!(!t.path().join("escaped.html").exists());
    assert_eq!(v["mirror"]["site_url"], "http://www.example.org/");
    assert_webaip_valid(&out.join("METS.xml"));
    let recs = records(&out);
    assert_eq!(recs.as_array().unwrap().iter().filter(|x| x["url"].is_string()).count(), 5);
    // The unpacked copy is gone.
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".webaip-mirror-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_httrack_mirror_takes_its_start_and_seed_from_hts_log_and_the_title_from_the_curator() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("mysite");
    let h = src.join("www.example.org");
    std::fs::create_dir_all(&h).unwrap();
    std::fs::write(
        src.join("hts-log.txt"),
        "HTTrack3.49-2+htsswf+htsjava launched on Tue, 02 Jan 2024 10:11:12 at http://www.example.org/ +*.png\n\
         (httrack http://www.example.org/ -O mysite )\n",
    )
    .unwrap();
    std::fs::write(h.join("index.html"), "<html><title>Root</title><a href=\"data\">d</a></html>")
        .unwrap();
    std::fs::write(h.join("data"), PNG).unwrap();
    let md = t.path().join("md.toml");
    std::fs::write(&md, "title = \"The Curator's Title\"\n").unwrap();
    let out = t.path().join("pkg");
    let o = package(
        Package::new().json().schemas().args(&[
            "--timezone",
            "+10:00",
            "--metadata",
            md.to_str().unwrap(),
        ]),
        &out,
        &[&src],
    )
    .output;
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &v["mirror"];
    assert_eq!(m["kind"], "httrack");
    assert_eq!(m["capture_date"], "2024-01-02T00:11:12+00:00");
    assert_eq!(m["site_url"], "http://www.example.org/");
    let notes = v["packages"][0]["metadata_notes"].to_string();
    assert!(notes.contains("title from the curator's metadata"), "{notes}");
    assert!(notes.contains("target URL http://www.example.org/ from hts-log.txt"), "{notes}");
    assert!(
        std::fs::read_to_string(out.join("METS.xml")).unwrap().contains("The Curator&apos;s Title")
            || std::fs::read_to_string(out.join("METS.xml"))
                .unwrap()
                .contains("The Curator's Title")
    );
    assert_webaip_valid(&out.join("METS.xml"));
    let recs = records(&out);
    let data = recs
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["url"] == "http://www.example.org/data")
        .unwrap();
    assert_eq!(data["type"], "image/png");
    assert_eq!(data["date"], "2024-01-02T00:11:12Z");
}
