//! Byte-faithful link rewriting (issue 14, item 4): a PANDAS instance of pages written every
//! way HTML allows is packaged; tests/oracle/check_pandas.py (html.parser and a tokenizer of
//! its own, not webaip's code) finds every rewritten page identical to its original once URL
//! values are masked in both, and the self-closing tags, quoting and encoding are still there.

use std::io::Read;
use std::path::Path;
use std::process::Command;

use crate::util::{Package, oracle_python, repo};

const HOST: &str = "www.bytes.example";

const INDEX: &str = "<!DOCTYPE html>\n<HTML><HEAD>\n<META HTTP-EQUIV=\"Refresh\" CONTENT=\"30; URL='sub/page.html'\" />\n\
<link rel=stylesheet href=site.css/>\n<STYLE type=\"text/css\">\nbody { background: URL( \"logo.png\" ) }\n@import 'site.css';\n</STYLE>\n\
</HEAD><BODY>\n<!-- <a href=\"sub/page.html\">commented out</a> -->\n\
<script>document.write('<a href=\"sub/page.html\">');</script>\n\
<img src=\"logo.png\"/><img src='logo.png' /><IMG SRC=logo.png ALT=\"x\">\n\
<a\n   href = \"sub/page.html\"\n\tclass='c'>page</a>\n\
<a href=\"missing.php?a=1&amp;b=2\">&amp; entity</a><a href=\"missing.php?a=1&b=2\">raw</a>\n\
<img srcset=\"logo.png 1x,  sub/logo2.png 2x\"/><div style='background:url(logo.png)'></div>\n\
<a href=\"http://elsewhere.example/?x&amp;y\">absolute</a><a href=\"#top\">fragment</a>\n\
</BODY></HTML>\n";

fn write_instance(root: &Path) -> std::path::PathBuf {
    let instance = root.join("input/888/20200101-0000");
    let host = instance.join(HOST);
    std::fs::create_dir_all(host.join("sub")).unwrap();
    std::fs::write(host.join("index.html"), INDEX).unwrap();
    std::fs::write(
        host.join("sub/page.html"),
        b"<html><head><meta http-equiv=Content-Type content=\"text/html; charset=windows-1252\">\
<title>Caf\xe9</title></head><body><p title=\"\xe9t\xe9\">caf\xe9 \x93quoted\x94</p>\
<a href='../index.html'/><A HREF=../logo.png>\xe9</A><br/></body></html>\n",
    )
    .unwrap();
    std::fs::write(
        host.join("site.css"),
        b"/* caf\xc3\xa9 */\n.x { background: url( 'logo.png' ) }\r\n@import \"sub/more.css\";\n",
    )
    .unwrap();
    std::fs::write(host.join("logo.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    std::fs::write(host.join("sub/logo2.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    instance
}

fn check_pandas(args: &[&str]) -> (bool, serde_json::Value) {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_pandas.py"))
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), v)
}

/// The payloads of the package's content WARCs, decompressed, as one byte string.
fn content_bytes(pkg: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(pkg.join("content")).unwrap() {
        let f = std::fs::File::open(e.unwrap().path()).unwrap();
        flate2::read::MultiGzDecoder::new(f).read_to_end(&mut all).unwrap();
    }
    all
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_packaged_instance_changes_only_its_url_values() {
    let dir = tempfile::tempdir().unwrap();
    let instance = write_instance(dir.path());
    let out = dir.path().join("pkg");
    Package::new().quiet().mode("full").schemas().succeeds(&out, &instance);
    let (ok, v) = check_pandas(&[
        out.to_str().unwrap(),
        instance.to_str().unwrap(),
        "--timezone-offset-hours",
        "0",
    ]);
    assert!(ok, "{v}");
    // index.html, sub/page.html and site.css are rewritten, and all three mask to the original.
    assert_eq!(v["stats"]["rewritten"], 3, "{v}");
    assert_eq!(v["stats"]["masked_identical"], 3, "{v}");
    let content = content_bytes(&out);
    let base = format!("http://{HOST}");
    for want in [
        format!(
            "<img src=\"{base}/logo.png\"/><img src='{base}/logo.png' /><IMG SRC={base}/logo.png ALT=\"x\">"
        ),
        format!("<link rel=stylesheet href={base}/site.css/>"),
        format!("<a\n   href = \"{base}/sub/page.html\"\n\tclass='c'>"),
        format!(
            "<a href=\"{base}/missing.php?a=1&amp;b=2\">&amp; entity</a><a href=\"{base}/missing.php?a=1&b=2\">raw</a>"
        ),
        format!("CONTENT=\"30; URL='{base}/sub/page.html'\" />"),
        format!("body {{ background: URL( \"{base}/logo.png\" ) }}\n@import '{base}/site.css';"),
        format!(
            "<img srcset=\"{base}/logo.png 1x,  {base}/sub/logo2.png 2x\"/><div style='background:url({base}/logo.png)'>"
        ),
        "<!-- <a href=\"sub/page.html\">commented out</a> -->".to_string(),
        "<script>document.write('<a href=\"sub/page.html\">');</script>".to_string(),
        "<a href=\"http://elsewhere.example/?x&amp;y\">absolute</a><a href=\"#top\">".to_string(),
        format!(
            ".x {{ background: url( '{base}/logo.png' ) }}\r\n@import \"{base}/sub/more.css\";"
        ),
    ] {
        assert!(contains(&content, want.as_bytes()), "missing: {want}");
    }
    let latin = format!(
        "<p title=\"\u{e9}t\u{e9}\">caf\u{e9} \u{201c}quoted\u{201d}</p><a href='{base}/'/><A HREF={base}/logo.png>\u{e9}</A><br/>"
    );
    let (latin, _, _) = encoding_rs::WINDOWS_1252.encode(&latin);
    assert!(
        contains(&content, &latin),
        "the windows-1252 page keeps its bytes: {}",
        String::from_utf8_lossy(&content)
    );
}

#[test]
fn the_oracle_refuses_a_rewrite_that_touches_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (old, good, bad) =
        (dir.path().join("old.html"), dir.path().join("good.html"), dir.path().join("bad.html"));
    std::fs::write(&old, b"<p><img src=\"a.png\"/><a href=x.html>x</a></p>").unwrap();
    std::fs::write(&good, b"<p><img src=\"http://e/a.png\"/><a href=http://e/x.html>x</a></p>")
        .unwrap();
    let compare = |new: &Path| {
        check_pandas(&[
            "--masked-compare",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
            "text/html",
        ])
    };
    assert!(compare(&good).0);
    // What lol_html's re-serialisation did: a space before "/>", quotes around a bare value.
    for changed in [
        &b"<p><img src=\"http://e/a.png\" /><a href=http://e/x.html>x</a></p>"[..],
        b"<p><img src=\"http://e/a.png\"/><a href=\"http://e/x.html\">x</a></p>",
        b"<p><img src='http://e/a.png'/><a href=http://e/x.html>x</a></p>",
        b"<P><img src=\"http://e/a.png\"/><a href=http://e/x.html>x</a></p>",
    ] {
        std::fs::write(&bad, changed).unwrap();
        let (ok, v) = compare(&bad);
        assert!(!ok, "{v}");
        assert!(v["difference"].as_str().unwrap().contains("differ"), "{v}");
    }
}
