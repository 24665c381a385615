//! Hostile NEDLIB harvests and Kulturarw3 archives (issue 24, items 1, 4, 6, 10 and 11), built
//! by each test: quirks by the million take flat memory and a bounded quirks log that says
//! how many it only counted; a URL without a scheme is refused, an `HTTP://` or `ftp://` one is
//! packaged so that `audit --deep` and warcio find the payload the METS states; one bad file
//! (over 1 MiB, over PATH_MAX, a link, a FIFO) is refused, listed, and the run exits 1 with
//! the rest packaged; a date no WARC can state is not used, and `validate` flags one.
//!
//! Peak RSS is the CLI's own, measured with `wait4` from a fresh launcher (`fuzz::child`).

use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::fuzz::child::{ChildRun, launch};
use crate::util::package_json as package;
use crate::util::{Package, copy_tree, oracle_python, repo, sample, webaip};

/// The bound of the issue: every command under 64 MB whatever the input's shape.
const PEAK_RSS_LIMIT: u64 = 64 << 20;

/// One day folder's running-number folder of the harvests built here.
const RUN: &str = "2003-7-18/0000";
/// The largest NEDLIB `.meta` read, as docs/security.md states it (1 MiB).
const NEDLIB_MAX_META: u64 = 1 << 20;

fn copy_sample(name: &str, to: &Path) {
    copy_tree(&sample(name), to);
}

/// `webaip pages --json`: the exit code and the listing.
fn pages(src: &Path) -> (Option<i32>, serde_json::Value) {
    let o = webaip(&["pages", "--quiet", "--json", src.to_str().unwrap()]);
    let l = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("no listing: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), l)
}

/// `audit --deep` says INTACT, and warcio (digests checked) finds every record's block to be
/// the stored header and body (tests/oracle/check_captures.py).
fn assert_intact_and_warcio_agrees(out: &Path, src: &Path, shape: &str) -> serde_json::Value {
    let audit = webaip(&["audit", "--deep", "--json", out.to_str().unwrap()]);
    let a: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap();
    assert_eq!(audit.status.code(), Some(0), "{a}");
    assert_eq!(a["packages"][0]["verdict"], "intact", "{a}");
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_captures.py"))
        .args([out, src])
        .arg(shape)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("check_captures: {}", String::from_utf8_lossy(&o.stderr)));
    assert!(o.status.success(), "warcio: {v}");
    v
}

fn refused(r: &serde_json::Value) -> Vec<(String, String)> {
    r["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
        .collect()
}

fn assert_refused(r: &serde_json::Value, path: &str, why: &str) {
    let list = refused(r);
    assert!(
        list.iter().any(|(p, w)| p == path && w.contains(why)),
        "{path} not refused with {why:?}: {list:?}"
    );
}

/// The CLI with `args`, measured: its status, peak RSS and standard error.
fn measured<A: AsRef<str>>(args: &[A], dir: &Path, name: &str) -> ChildRun {
    let mut argv = vec![crate::util::WEBAIP.to_string()];
    argv.extend(args.iter().map(|s| s.as_ref().to_string()));
    let err = dir.join(format!("{name}.stderr"));
    launch(&argv, &[], None, Duration::from_secs(600), &err)
}

/// Packages `src` and lists its pages, both measured; both must stay under the bound. Returns
/// the package's quirks log.
fn package_and_list_measured(src: &Path, dir: &Path, shape: &str) -> serde_json::Value {
    let out = dir.join("pkg");
    let s = src.to_str().unwrap();
    let run = measured(&Package::new().quiet().argv(&out, &[src]), dir, "package");
    assert!(run.status.success(), "package: {:?} {}", run.status, run.stderr);
    eprintln!("{shape} package: peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "package: peak RSS {} MB", run.peak_rss >> 20);
    let run = measured(&["pages", "--quiet", "--json", s], dir, "pages");
    assert!(run.status.success(), "pages: {:?} {}", run.status, run.stderr);
    eprintln!("{shape} pages: peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "pages: peak RSS {} MB", run.peak_rss >> 20);
    let (code, l) = pages(src);
    assert_eq!(code, Some(0), "{}", l["counts"]);
    assert!(l["quirks"].as_array().unwrap().len() <= 100, "the listing names the first 100");
    let log = out.join(format!("logs/webaip/{shape}.quirks.json"));
    let size = std::fs::metadata(&log).unwrap().len();
    eprintln!("{shape} quirks log: {size} bytes");
    assert!(size < 16 << 20, "quirks log of {size} bytes");
    let q: serde_json::Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
    assert!(q["quirks"].as_array().unwrap().len() <= 10_000, "the log keeps 10,000");
    // Every quirk is counted, in the listing as in the log.
    let logged = q["quirks"].as_array().unwrap().len() as u64 + q["dropped"].as_u64().unwrap();
    assert_eq!(l["counts"]["quirks"].as_u64().unwrap(), logged, "{}", l["counts"]);
    q
}

/// A `.meta` of `size` bytes: a status line, `x` lines (each a malformed header line), its
/// Arc-Url and Arc-Length. Returns it and the number of `x` lines.
fn odd_meta(url: &str, size: usize) -> (Vec<u8>, usize) {
    let head = b"HTTP/1.0 200 OK\n";
    let tail = format!("Arc-Url: {url}\nArc-Length: 1\n");
    let n = (size - head.len() - tail.len()) / 2;
    let mut m = head.to_vec();
    m.extend(b"x\n".repeat(n));
    m.extend(tail.as_bytes());
    (m, n)
}

/// Item 1: eight 1 MiB `.meta` files of 524,000 short odd lines each (293 MB and a 123 MB
/// quirks log for one, 2.0 GB for eight before) take flat memory in `package` and `pages`,
/// and the quirks log keeps 10,000 and says how many it only counted.
#[test]
fn eight_metas_of_odd_lines_take_flat_memory_and_a_bounded_quirks_log() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("h");
    copy_sample("nedlib", &src);
    let mut lines = 0;
    for i in 0..8 {
        let md5 = format!("{i:032x}");
        let (meta, n) = odd_meta(&format!("http://odd.example/{i}"), 1 << 20);
        assert!(meta.len() as u64 <= NEDLIB_MAX_META);
        std::fs::write(src.join(RUN).join(format!("{md5}.meta")), meta).unwrap();
        std::fs::write(src.join(RUN).join(&md5), b"z").unwrap();
        lines += n as u64;
    }
    let q = package_and_list_measured(&src, tmp.path(), "nedlib");
    // Past 100 of a kind in one file, and past 10,000 in all, quirks are only counted.
    let dropped = q["dropped"].as_u64().unwrap();
    assert!(dropped >= lines - 8 * 100, "{dropped} of {lines} odd lines counted only");
    // The counts by kind are exact, the ones only counted included.
    assert_eq!(q["counts"]["malformed-header-line"].as_u64(), Some(lines), "{}", q["counts"]);
}

/// Item 1: eight Kulturarw3 files with 500,000 odd header lines each (2.3 GB before).
#[test]
fn eight_kulturarw3_files_of_odd_header_lines_take_flat_memory_and_a_bounded_quirks_log() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("k");
    copy_sample("kulturarw3", &src);
    let dir = src.join("archive/3f/www.example.se/17");
    let home = std::fs::read(dir.join("4443a33a26034bd0d1fe8db1240a35e3.1136214245")).unwrap();
    let at = find(&home, b"HTTP-Part: ArchiveInfo\n").unwrap() + 23;
    for i in 0..8 {
        let mut f = home[..at].to_vec();
        f.extend(b"x\n".repeat(500_000));
        f.extend(&home[at..]);
        std::fs::write(dir.join(format!("{i:032x}.1136214245")), f).unwrap();
    }
    let q = package_and_list_measured(&src, tmp.path(), "kulturarw3");
    let dropped = q["dropped"].as_u64().unwrap();
    assert!(dropped >= 8 * (500_000 - 100), "{dropped} odd lines counted only");
    assert_eq!(q["counts"]["malformed-header-line"].as_u64(), Some(8 * 500_000), "{}", q["counts"]);
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A NEDLIB pair in the sample's running-number folder.
fn pair(src: &Path, md5: &str, url: &str, body: &[u8]) {
    let meta = format!(
        "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\nArc-Url: {url}\r\nArc-Length: {}\r\n",
        body.len(),
        body.len()
    );
    std::fs::write(src.join(RUN).join(format!("{md5}.meta")), meta).unwrap();
    std::fs::write(src.join(RUN).join(md5), body).unwrap();
}

/// Item 4: a NEDLIB `Arc-Url` of `HTTP://...` or `ftp://...` was packaged with its header split
/// off where the payload rule read the whole block (DAMAGED). Now the scheme is written in
/// lower case and the payload found by the one rule; a URL with no scheme is refused.
#[test]
fn nedlib_urls_of_any_scheme_package_as_audit_and_warcio_read_them() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("h");
    copy_sample("nedlib", &src);
    let body = b"<html><title>t</title>\r\n\r\nbody</html>";
    pair(&src, &"1".repeat(32), "HTTP://www.example.no:80/UPPER.html", body);
    pair(&src, &"2".repeat(32), "ftp://ftp.example.no/pub/file.html", body);
    pair(&src, &"3".repeat(32), "null", body);
    pair(&src, &"4".repeat(32), "/relative/path.html", body);
    let out = tmp.path().join("pkg");
    let (code, r) = package(&src, &out);
    assert_eq!(code, Some(1), "refusals make a run with findings: {r}");
    assert_eq!(r["captures"], 7 + 2, "{r}");
    for n in ["3", "4"] {
        assert_refused(&r, &format!("{RUN}/{}.meta", n.repeat(32)), "no absolute URI");
    }
    let v = assert_intact_and_warcio_agrees(&out, &src, "nedlib");
    assert_eq!(v["counts"]["checked"], 9, "{v}");
    let warc = content_warc(&out);
    assert!(warc.contains("WARC-Target-URI: http://www.example.no:80/UPPER.html\r\n"));
    assert!(!warc.contains("WARC-Target-URI: \r\n") && !warc.contains("WARC-Target-URI: null"));
    // The refused files are kept, byte-exact, as side files.
    assert!(out.join("logs").join(RUN).join("3".repeat(32) + ".meta").is_file());
}

/// The decompressed text of the package's content WARC.
fn content_warc(pkg: &Path) -> String {
    let dir = pkg.join("content");
    let path = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    String::from_utf8_lossy(&text).into_owned()
}

const KW3_DIR: &str = "archive/3f/www.example.se/17";
const KW3_HOME: &str = "4443a33a26034bd0d1fe8db1240a35e3.1136214245";

/// A Kulturarw3 file like the sample's home page, its `HTTP-URL` line replaced and its name's
/// epoch `epoch`.
fn kw3_file(src: &Path, md5: &str, epoch: &str, url_line: &str, archive_time: &str) -> String {
    let home = std::fs::read_to_string(src.join(KW3_DIR).join(KW3_HOME)).unwrap();
    let text = home
        .replace("HTTP-URL: http://www.example.se/\n", url_line)
        .replace("HTTP-Archive-Time: 1136214246\n", archive_time);
    let name = format!("{md5}.{epoch}");
    std::fs::write(src.join(KW3_DIR).join(&name), text).unwrap();
    format!("{KW3_DIR}/{name}")
}

/// Item 4: a Kulturarw3 `HTTP-URL` that is empty, `null` or a path was written as
/// `WARC-Target-URI: ` (or worse) with an HTTP header split off: now refused (listed, kept as
/// a side file), and `HTTP://` packaged as audit and warcio read it.
#[test]
fn kulturarw3_urls_without_a_scheme_are_refused_the_rest_audits_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("k");
    copy_sample("kulturarw3", &src);
    let t = "HTTP-Archive-Time: 1136214246\n";
    let empty = kw3_file(&src, &"a".repeat(32), "1136214245", "HTTP-URL: \n", t);
    let null = kw3_file(&src, &"b".repeat(32), "1136214245", "HTTP-URL: null\n", t);
    let path = kw3_file(&src, &"c".repeat(32), "1136214245", "HTTP-URL: /index.html\n", t);
    kw3_file(&src, &"e".repeat(32), "1136214245", "HTTP-URL: HTTP://www.example.se/UP\n", t);
    let out = tmp.path().join("pkg");
    let (code, r) = package(&src, &out);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["captures"], 10 + 1, "{r}");
    assert_refused(&r, &empty, "empty");
    assert_refused(&r, &null, "no absolute URI");
    assert_refused(&r, &path, "no absolute URI");
    assert_intact_and_warcio_agrees(&out, &src, "kulturarw3");
    let warc = content_warc(&out);
    assert!(warc.contains("WARC-Target-URI: http://www.example.se/UP\r\n"));
    assert!(!warc.contains("WARC-Target-URI: \r\n"));
}

/// Makes `dir/<d...>/` whose path is 4080 bytes long (under PATH_MAX), through directory
/// descriptors, and in it a NEDLIB pair (its `.meta` path over PATH_MAX), and a sub-folder
/// whose own path is over PATH_MAX holding another. Returns the deep folder relative to `dir`.
fn over_path_max(dir: &Path) -> String {
    use rustix::fs::{Mode, OFlags};
    let open = |fd: &rustix::fd::OwnedFd, name: &str| {
        rustix::fs::mkdirat(fd, name, Mode::from_raw_mode(0o755)).unwrap();
        rustix::fs::openat(fd, name, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap()
    };
    let write = |fd: &rustix::fd::OwnedFd, name: &str, bytes: &[u8]| {
        let f = rustix::fs::openat(
            fd,
            name,
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        rustix::io::write(&f, bytes).unwrap();
    };
    let mut len = dir.as_os_str().len();
    let mut fd = rustix::fs::open(dir, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
    let mut rel = Vec::new();
    while len < 4080 {
        let seg = "d".repeat((4080 - len - 1).min(200));
        fd = open(&fd, &seg);
        len += 1 + seg.len();
        rel.push(seg);
    }
    let meta = b"HTTP/1.0 200 OK\nArc-Url: http://deep.example/\nArc-Length: 4\n";
    write(&fd, &format!("{}.meta", "5".repeat(32)), meta);
    write(&fd, &"5".repeat(32), b"deep");
    let sub = open(&fd, "0001-over-path-max");
    write(&sub, &format!("{}.meta", "6".repeat(32)), meta);
    rel.join("/")
}

/// Item 6: a `.meta` over 1 MiB, a path over PATH_MAX, a link and a FIFO each cost
/// themselves: listed, the run exits 1 (`package` and `pages`), the rest is packaged and
/// audits INTACT. (Before, the first two made both exit 2 with nothing, the others exit 0.)
#[test]
fn one_bad_nedlib_file_costs_itself_only_and_the_run_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("h");
    copy_sample("nedlib", &src);
    let run = src.join(RUN);
    let big = format!("{RUN}/{}.meta", "7".repeat(32));
    let mut m = b"HTTP/1.0 200 OK\nArc-Url: http://big.example/\n".to_vec();
    m.resize(NEDLIB_MAX_META as usize + 1, b'x');
    std::fs::write(src.join(&big), m).unwrap();
    std::fs::write(run.join("7".repeat(32)), b"big").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", run.join(format!("{}.meta", "8".repeat(32))))
        .unwrap();
    let fifo = run.join(format!("{}.meta", "9".repeat(32)));
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let deep = over_path_max(&src.join("2003-7-18"));
    let out = tmp.path().join("pkg");
    let (code, r) = package(&src, &out);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["captures"], 7, "the rest of the harvest is packaged: {r}");
    assert_refused(&r, &big, "larger than");
    assert_refused(&r, &format!("{RUN}/{}.meta", "8".repeat(32)), "symbolic link");
    assert_refused(&r, &format!("{RUN}/{}.meta", "9".repeat(32)), "FIFO");
    assert_refused(&r, &format!("2003-7-18/{deep}/{}.meta", "5".repeat(32)), "longer than");
    assert_refused(&r, &format!("2003-7-18/{deep}/0001-over-path-max"), "PATH_MAX");
    assert_eq!(r["refusals"], 6, "{:?}", refused(&r));
    assert_intact_and_warcio_agrees(&out, &src, "nedlib");
    // The big .meta and its data are kept byte-exact under logs/.
    assert!(out.join("logs").join(&big).is_file());
    let (code, l) = pages(&src);
    assert_eq!(code, Some(1), "{l}");
    assert_eq!(l["counts"]["refused"], 6, "{}", l["counts"]);
    assert_eq!(l["counts"]["captures"], 7, "{}", l["counts"]);
}

/// Item 6: links and FIFOs refused by a Kulturarw3 archive make a run with findings too.
#[test]
fn kulturarw3_links_and_fifos_make_the_run_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("k");
    copy_sample("kulturarw3", &src);
    let dir = src.join(KW3_DIR);
    let link = format!("{KW3_DIR}/{}.1136214245", "0".repeat(32));
    std::os::unix::fs::symlink(dir.join(KW3_HOME), src.join(&link)).unwrap();
    let fifo = format!("{KW3_DIR}/{}.1136214245", "1".repeat(32));
    assert!(Command::new("mkfifo").arg(src.join(&fifo)).status().unwrap().success());
    let out = tmp.path().join("pkg");
    let (code, r) = package(&src, &out);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["captures"], 10, "{r}");
    assert_refused(&r, &link, "symbolic link");
    assert_refused(&r, &fifo, "FIFO");
    assert_intact_and_warcio_agrees(&out, &src, "kulturarw3");
    let (code, _) = pages(&src);
    assert_eq!(code, Some(1));
}

/// A NEDLIB harvest of `pairs` tiny pairs in folders of 2,000 (as NEDLIB filled them).
fn many_pairs(root: &Path, pairs: usize) {
    for i in 0..pairs {
        let dir = root.join(format!("2003-7-16/{:04}", i / 2000));
        if i % 2000 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let body = format!("<html><title>p{i}</title></html>\n");
        let meta = format!(
            "HTTP/1.0 200 OK\nDate: Wed, 16 Jul 2003 07:41:29 GMT\nContent-Type: text/html\nContent-Length: {}\nArc-Url: http://www.example.no:80/p{i}.html\nArc-Length: {}\n",
            body.len(),
            body.len()
        );
        let md5 = format!("{i:032x}");
        std::fs::write(dir.join(format!("{md5}.meta")), meta).unwrap();
        std::fs::write(dir.join(md5), body).unwrap();
    }
}

/// Item 10: 100,000 NEDLIB files took 73 MB (every capture's quirks, every path kept); now
/// 20 MB, flat (measured by hand: 20.3 MB for 10,000 files, 20.7 MB for 40,000 and 100,000;
/// `pages --json` 37 MB for 100,000, its listing of 50,000 pages). Here 6,000 and 30,000
/// files: both under the bound, and packaging grows by under 200 bytes a file.
#[test]
fn thirty_thousand_nedlib_files_take_flat_memory() {
    let mut peaks = Vec::new();
    for pairs in [3_000, 15_000] {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("h");
        many_pairs(&src, pairs);
        let args = Package::new().quiet().argv(&tmp.path().join("pkg"), &[&src]);
        let run = measured(&args, tmp.path(), "package");
        assert!(run.status.success(), "{:?} {}", run.status, run.stderr);
        eprintln!("{} NEDLIB files: peak RSS {} MB", pairs * 2, run.peak_rss >> 20);
        assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB", run.peak_rss >> 20);
        peaks.push(run.peak_rss);
        // pages holds its listing (one entry a page, sorted) but streams its output.
        let run =
            measured(&["pages", "--quiet", "--json", src.to_str().unwrap()], tmp.path(), "pages");
        assert!(run.status.success(), "{:?} {}", run.status, run.stderr);
        eprintln!("{} NEDLIB files: pages peak RSS {} MB", pairs * 2, run.peak_rss >> 20);
        assert!(run.peak_rss < PEAK_RSS_LIMIT, "pages: peak RSS {} MB", run.peak_rss >> 20);
    }
    let growth = peaks[1].saturating_sub(peaks[0]);
    assert!(growth < 24_000 * 200, "{growth} bytes more for 24,000 more files");
}

/// Item 11: a Kulturarw3 epoch of 253402300800 became `WARC-Date: +10000-01-01T00:00:00Z`,
/// which validate and audit passed. Now the date is not used (a quirk): HTTP-Archive-Time
/// dates the capture, said inferred in `X-Webaip-Date-Source`; with no usable date at all the
/// file is refused. And `validate` reports such a date in a METS.
#[test]
fn a_date_past_9999_is_not_used_and_validate_flags_one() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("k");
    copy_sample("kulturarw3", &src);
    let u = "HTTP-URL: http://www.example.se/\n";
    let far = "HTTP-Archive-Time: 253402300801\n";
    let dated =
        kw3_file(&src, &"a".repeat(32), "253402300800", u, "HTTP-Archive-Time: 1136214246\n");
    let undated = kw3_file(&src, &"b".repeat(32), "253402300800", u, far);
    let out = tmp.path().join("pkg");
    let (code, r) = package(&src, &out);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["captures"], 10 + 1, "{r}");
    assert_refused(&r, &undated, "gives a date");
    assert_intact_and_warcio_agrees(&out, &src, "kulturarw3");
    let log = std::fs::read_to_string(out.join("logs/webaip/kulturarw3.quirks.json")).unwrap();
    let q: serde_json::Value = serde_json::from_str(&log).unwrap();
    let out_of_range = q["quirks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "date-out-of-range" && x["file"] == dated.as_str())
        .count();
    assert_eq!(out_of_range, 1, "{log}");
    let warc = content_warc(&out);
    assert!(!warc.contains("+10000"), "no WARC-Date past 9999");
    let at = warc.find("WARC-Date: 2006-01-02T15:04:06Z\r\n").expect("dated by HTTP-Archive-Time");
    let record = &warc[at..at + 2000.min(warc.len() - at)];
    assert!(record.contains("X-Webaip-Date-Source: HTTP-Archive-Time"), "{record}");
    let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
    assert!(!mets.contains("+10000"));
    // validate: the package passes; a METS stating such a date does not.
    let valid = webaip(&["validate", out.join("METS.xml").to_str().unwrap()]);
    assert_eq!(valid.status.code(), Some(0), "{}", String::from_utf8_lossy(&valid.stdout));
    let bad = tmp.path().join("bad.xml");
    let created = find_attr(&mets, "CREATEDATE=\"").unwrap();
    std::fs::write(&bad, mets.replacen(&created, "+10000-01-01T00:00:00Z", 1)).unwrap();
    let o = webaip(&["validate", bad.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("DATE") && text.contains("+10000-01-01T00:00:00Z"), "{text}");
}

/// The value of the first `name"...` attribute in `xml`.
fn find_attr(xml: &str, name: &str) -> Option<String> {
    let at = xml.find(name)? + name.len();
    let end = xml[at..].find('"')?;
    Some(xml[at..at + end].to_string())
}

/// Item 4: a Kulturarw3 HTTP header longer than the payload rule's bound (1 MiB) was packaged
/// as a response whose payload no reader locates (audit warned, warcio split it elsewhere):
/// now it is a resource, its header bytes kept, and every reader agrees.
#[test]
fn a_kulturarw3_header_over_a_mib_is_a_resource_every_reader_agrees_on() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("k");
    copy_sample("kulturarw3", &src);
    let home = std::fs::read(src.join(KW3_DIR).join(KW3_HOME)).unwrap();
    let at = find(&home, b"HTTP/1.1 200 OK\r\n").unwrap() + 17;
    let pad = [b"X-Pad: ".as_slice(), &[b'y'; 100], b"\r\n"].concat();
    let big = [&home[..at], &pad.repeat(11_000), &home[at..]].concat();
    std::fs::write(src.join(KW3_DIR).join(KW3_HOME), big).unwrap();
    let out = tmp.path().join("pkg");
    let (code, r) = package(&src, &out);
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["captures"], 10, "{r}");
    assert!(r["quirk_counts"]["not-http-header"].as_u64().is_some(), "{r}");
    assert_intact_and_warcio_agrees(&out, &src, "kulturarw3");
    let audit = webaip(&["audit", "--deep", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&audit.stdout);
    assert!(!text.contains("cannot be located"), "{text}");
}

/// Item 11: `audit --deep` warns of a `WARC-Date` no W3C-DTF states, as validate reports such a
/// METS date. The date is changed in place in a package made with stored (level 0) gzip
/// members, their CRCs made right again; the manifest then no longer matches, but the deep
/// pass reads the record and names its date.
#[test]
fn audit_warns_of_a_warc_date_past_9999() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("pkg");
    let src = sample("kulturarw3");
    Package::new().quiet().args(&["--level", "0"]).succeeds(&out, &src);
    let warc = std::fs::read_dir(out.join("content")).unwrap().next().unwrap().unwrap().path();
    let mut raw = std::fs::read(&warc).unwrap();
    let at = find(&raw, b"WARC-Type: response").unwrap();
    let date = at + find(&raw[at..], b"WARC-Date: ").unwrap() + 11;
    // Same length: the stored deflate blocks keep their framing.
    raw[date..date + 20].copy_from_slice(b"10000-01-01T00:00:00");
    // Make every member's CRC right again.
    let mut pos = 0;
    while pos < raw.len() {
        let rest = &raw[pos..];
        let mut d = flate2::bufread::GzDecoder::new(rest);
        let mut plain = Vec::new();
        let _ = d.read_to_end(&mut plain);
        let len = rest.len() - d.into_inner().len();
        let mut crc = flate2::Crc::new();
        crc.update(&plain);
        raw[pos + len - 8..pos + len - 4].copy_from_slice(&crc.sum().to_le_bytes());
        pos += len;
    }
    std::fs::write(&warc, &raw).unwrap();
    let audit = webaip(&["audit", "--deep", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&audit.stdout);
    assert!(text.contains("[warc-date]") && text.contains("10000-01-01T00:00:00"), "{text}");
}
