//! The link rewriter streams (issue 13, item 3): rewriting a 60 MB page with two million links
//! takes memory in proportion to its chunk, not to the page.

use std::io::Write;
use std::time::Duration;

use webaip::internals::{LinkMap, html_encoding, rewrite_html, rewrite_html_stream};

use super::child::{is_child, run_child};

const PAGE_BYTES: u64 = 60 << 20;
/// The bound: the page is 60 MB; the rewriter may hold a chunk and lol_html's state.
const PEAK_RSS_LIMIT: u64 = 64 << 20;

fn map() -> LinkMap {
    let pairs: Vec<(String, String)> = (0..100)
        .map(|i| (format!("www.e.org/p/{i}.html"), format!("http://www.e.org/page.php?id={i}")))
        .collect();
    LinkMap::of_pairs(pairs.iter().map(|(p, u)| (p.as_str(), u.as_str()))).unwrap()
}

const TEST: &str = "fuzz::rewrite_memory::a_60_mb_page_is_rewritten_in_flat_memory";

#[test]
fn a_60_mb_page_is_rewritten_in_flat_memory() {
    if is_child(TEST) {
        let input = std::env::var("WEBAIP_REWRITE_INPUT").unwrap();
        let output = std::env::var("WEBAIP_REWRITE_OUTPUT").unwrap();
        let map = map();
        let (save, url) = ("www.e.org/news/index.html", "http://www.e.org/news/");
        let stats = if std::env::var("WEBAIP_REWRITE_API").is_ok_and(|v| v == "slice") {
            // The whole-page API, for the before/after figures.
            let bytes = std::fs::read(&input).unwrap();
            let r = rewrite_html(&bytes, save, url, &map, Some("text/html")).unwrap();
            std::fs::write(&output, &r.bytes).unwrap();
            (r.to_mirror, r.to_outside)
        } else {
            let enc = html_encoding(b"", Some("text/html; charset=utf-8"));
            let inp = std::fs::File::open(&input).unwrap();
            let out = std::io::BufWriter::new(std::fs::File::create(&output).unwrap());
            let r = rewrite_html_stream(inp, out, enc, save, url, &map).unwrap();
            (r.to_mirror, r.to_outside)
        };
        eprintln!("links {} {}", stats.0, stats.1);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("page.html");
    let output = dir.path().join("out.html");
    let mut links = 0u64;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
        f.write_all(b"<html><head><style>.a{background:url(../p/1.html)}</style></head><body>\n")
            .unwrap();
        let mut written = 0u64;
        while written < PAGE_BYTES {
            let i = links % 200;
            let line = format!("<a href=\"../p/{i}.html\">link {links}</a>\n");
            f.write_all(line.as_bytes()).unwrap();
            written += line.len() as u64;
            links += 1;
        }
        f.write_all(b"</body></html>\n").unwrap();
        f.flush().unwrap();
    }
    let env = [
        ("WEBAIP_REWRITE_INPUT", input.display().to_string()),
        ("WEBAIP_REWRITE_OUTPUT", output.display().to_string()),
        (
            "WEBAIP_REWRITE_API",
            std::env::var("WEBAIP_REWRITE_API").unwrap_or_else(|_| "stream".into()),
        ),
    ];
    let run =
        run_child(TEST, &env, None, Duration::from_secs(600), &dir.path().join("child.stderr"));
    assert!(run.status.success(), "child failed ({:?}): {}", run.status, run.stderr);
    eprintln!("rewrite of a {} MB page: peak RSS {} MB", PAGE_BYTES >> 20, run.peak_rss >> 20);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB", run.peak_rss >> 20);
    // Half the links name mirror files (ids 0-99), half do not; the style's one names one.
    let (cycles, rest) = (links / 200, links % 200);
    let to_mirror = cycles * 100 + rest.min(100) + 1;
    let to_outside = cycles * 100 + rest.saturating_sub(100);
    let expect = format!("links {to_mirror} {to_outside}");
    assert!(run.stderr.contains(&expect), "{expect} not in {}", run.stderr);
    let out = std::fs::read(&output).unwrap();
    assert!(out.len() as u64 > PAGE_BYTES);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("<a href=\"http://www.e.org/page.php?id=7\">"));
    assert!(text.contains("<a href=\"http://www.e.org/p/150.html\">"));
    assert!(text.contains("url(http://www.e.org/page.php?id=1)"));
    assert!(text.ends_with("</body></html>\n"));
}

/// `webaip package` of a PANDAS instance whose page is 60 MB with two links a line: the page
/// streams through the rewriter into a temporary file and from there into the container, so
/// the run's peak RSS stays far below the page's size (it was 571 MB before, 15 MB after).
#[test]
fn packaging_a_60_mb_page_stays_in_flat_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let instance = tmp.path().join("12345/20040101-1200");
    let news = instance.join("www.e.org/news");
    std::fs::create_dir_all(&news).unwrap();
    std::fs::create_dir_all(instance.join("www.e.org/p")).unwrap();
    for i in 0..100 {
        std::fs::write(instance.join(format!("www.e.org/p/{i}.html")), "<html>x</html>").unwrap();
    }
    let mut page = std::io::BufWriter::new(std::fs::File::create(news.join("index.html")).unwrap());
    page.write_all(b"<html><head><title>big</title></head><body>\n").unwrap();
    let mut written = 0u64;
    let mut i = 0u64;
    while written < PAGE_BYTES {
        let line = format!("<a href=\"../p/{}.html\">l</a> <img src=\"img{i}.png\"/>\n", i % 100);
        page.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        i += 1;
    }
    page.write_all(b"</body></html>\n").unwrap();
    drop(page);
    let out = tmp.path().join("pkg");
    let args = crate::util::Package::new().quiet().argv(&out, &[&instance]);
    let run = super::child::launch_webaip(&args, tmp.path());
    assert!(run.status.success(), "package failed: {:?} {}", run.status, run.stderr);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB for a 60 MB page", run.peak_rss >> 20);
    // The page was rewritten: its original is kept in original/.
    let originals: Vec<_> = std::fs::read_dir(out.join("original")).unwrap().collect();
    assert_eq!(originals.len(), 1);
}
