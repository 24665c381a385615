//! `webaip pages` lists a harvest of many pages in memory that does not grow with their
//! number (issue 24, item 10): entries are sorted in runs spilled to temporary files and merged
//! as they are printed. 150,000 pages took about 130 MB when every entry was held to be sorted.

use std::io::Write;
use std::time::Duration;

use super::child::launch;

const PEAK_RSS_LIMIT: u64 = 64 << 20;
const PAGES: u64 = 150_000;

#[test]
fn a_listing_of_150000_pages_takes_flat_memory() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("pages.warc");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&warc).unwrap());
        // Written in an order that is not the listing's (by URL), so the runs must be merged.
        for i in 0..PAGES {
            let n = (i * 7919) % PAGES;
            let body = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>Page {n} of a site with a longish title</title>"
            );
            write!(
                f,
                "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{i}>\r\n\
                 WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://e.org/s/{n:06}.html\r\n\
                 Content-Type: application/http;msgtype=response\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
                body.len()
            )
            .unwrap();
        }
        f.flush().unwrap();
    }
    for json in [false, true] {
        let mut argv = vec![crate::util::WEBAIP.to_string(), "pages".into()];
        if json {
            argv.push("--json".into());
        }
        argv.push(warc.display().to_string());
        let run = launch(&argv, &[], None, Duration::from_secs(300), &dir.path().join("stderr"));
        assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
        eprintln!("pages (json: {json}) of {PAGES} pages: peak RSS {} MB", run.peak_rss >> 20);
        assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB", run.peak_rss >> 20);
    }
    // What is listed: every page once, in URL order.
    let o = crate::util::webaip(&["pages", warc.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    let urls: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|u| u.starts_with("http"))
        .collect();
    assert_eq!(urls.len() as u64, PAGES);
    assert!(urls.windows(2).all(|w| w[0] < w[1]), "not in URL order");
    assert!(
        text.trim_end()
            .ends_with(&format!("{PAGES} page(s) at {PAGES} URL(s), of {PAGES} capture(s) read")),
        "{}",
        &text[text.len() - 200..]
    );
}
