//! Hostile mirrors and mirror zips (issue 24, items 2, 3, 9, 10, 11): every input is built
//! here. Memory is measured in a fresh child (`fuzz::child::launch`), disk on a small tmpfs
//! where the test may mount one (else by what is left in the directory).

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::fuzz::child::launch;
use crate::util::{Package, SmallDisk, webaip_command};

/// The bound every run is held to.
const PEAK_RSS_LIMIT: u64 = 64 << 20;

/// Runs `webaip` with `TMPDIR` set to `tmp`.
fn webaip_in<A: AsRef<std::ffi::OsStr>>(tmp: &Path, args: &[A]) -> Output {
    webaip_command().args(args).env("TMPDIR", tmp).output().expect("webaip runs")
}

/// Runs `webaip` in a fresh child with `TMPDIR` set to `tmp`; returns (exit code, peak RSS,
/// standard error).
fn measured<A: AsRef<str>>(tmp: &Path, args: &[A], stderr: &Path) -> (Option<i32>, u64, String) {
    let mut argv = vec![crate::util::WEBAIP.to_string()];
    argv.extend(args.iter().map(|a| a.as_ref().to_string()));
    let run = launch(
        &argv,
        &[("TMPDIR", tmp.display().to_string())],
        None,
        Duration::from_secs(600),
        stderr,
    );
    let code = match run.status {
        crate::fuzz::child::Outcome::Exited(c) => Some(c),
        _ => None,
    };
    (code, run.peak_rss, run.stderr)
}

/// `package --no-virus-check --json EXTRA --out OUT SRC`.
fn package_args(out: &str, src: &str, extra: &[&str]) -> Vec<String> {
    Package::new().json().args(extra).argv(Path::new(out), &[Path::new(src)])
}

/// A zip of `entries` (deflated), as Python's zipfile or Info-ZIP would write it.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        z.start_file(*name, opts).unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

const PAGE: &[u8] =
    b"<html><head><title>Home</title></head><body><a href=\"a\">a</a></body></html>";

fn wget_log(entries: &[(&str, &str)]) -> String {
    let mut log = String::new();
    for (url, path) in entries {
        log.push_str(&format!(
            "--2024-01-02 10:11:12--  {url}\nHTTP request sent, awaiting response... 200 OK\n\
             Saving to: \u{2018}{path}\u{2019}\n\n"
        ));
    }
    log
}

/// What is left in `dir` whose name starts with `.webaip-mirror-`.
fn mirror_temporaries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".webaip-mirror-"))
        .map(|e| e.path())
        .collect()
}

/// A zip whose `n` central-directory entries all point at one local header and one deflated
/// stream of `len` zero bytes: a few KB that unpack to `n * len` bytes.
fn overlapping_zip(n: usize, len: usize) -> Vec<u8> {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![0u8; len]).unwrap();
    let data = enc.finish().unwrap();
    let mut crc = flate2::Crc::new();
    crc.update(&vec![0u8; len]);
    let crc = crc.sum();
    let first = "site/www.e.org/p0.html";
    let mut z = Vec::new();
    let le16 = |v: &mut Vec<u8>, x: u16| v.extend_from_slice(&x.to_le_bytes());
    let le32 = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
    le32(&mut z, 0x0403_4b50);
    for x in [20u16, 0, 8, 0, 0x21] {
        le16(&mut z, x);
    }
    le32(&mut z, crc);
    le32(&mut z, data.len() as u32);
    le32(&mut z, len as u32);
    le16(&mut z, first.len() as u16);
    le16(&mut z, 0);
    z.extend_from_slice(first.as_bytes());
    z.extend_from_slice(&data);
    let cd_start = z.len();
    for i in 0..n {
        let name = format!("site/www.e.org/p{i}.html");
        le32(&mut z, 0x0201_4b50);
        for x in [0x031e_u16, 20, 0, 8, 0, 0x21] {
            le16(&mut z, x);
        }
        le32(&mut z, crc);
        le32(&mut z, data.len() as u32);
        le32(&mut z, len as u32);
        le16(&mut z, name.len() as u16);
        for x in [0u16, 0, 0, 0] {
            le16(&mut z, x);
        }
        le32(&mut z, 0o100644 << 16);
        le32(&mut z, 0);
        z.extend_from_slice(name.as_bytes());
    }
    let cd_len = z.len() - cd_start;
    le32(&mut z, 0x0605_4b50);
    for x in [0u16, 0, n as u16, n as u16] {
        le16(&mut z, x);
    }
    le32(&mut z, cd_len as u32);
    le32(&mut z, cd_start as u32);
    le16(&mut z, 0);
    z
}

/// Item 2: a log of 200 `Saving to:` lines of 4,000-byte paths of 2,000 segments each (the
/// old index kept every suffix of every path: 2.48 GB), in a mirror directory (`package`) and
/// in a 3 KB zip with the mirror (`pages`): both stay under the bound and still use the log.
#[test]
fn a_wget_log_of_deep_paths_takes_flat_memory() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("site");
    std::fs::create_dir_all(site.join("www.e.org")).unwrap();
    std::fs::write(site.join("www.e.org/index.html"), PAGE).unwrap();
    let deep: Vec<(String, String)> = (0..200)
        .map(|i| (format!("http://www.e.org/x{i}"), format!("{}{i}", "a/".repeat(1990))))
        .collect();
    let mut entries: Vec<(&str, &str)> =
        deep.iter().map(|(u, p)| (u.as_str(), p.as_str())).collect();
    entries.insert(0, ("http://www.e.org/", "www.e.org/index.html"));
    let log = wget_log(&entries);
    assert!(log.len() > 800_000, "{}", log.len());
    std::fs::write(site.join("wget-log"), &log).unwrap();
    let zip = t.path().join("site.zip");
    std::fs::write(
        &zip,
        zip_of(&[("site/wget-log", log.as_bytes()), ("site/www.e.org/index.html", PAGE)]),
    )
    .unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();

    let z = zip.to_str().unwrap();
    let (code, rss, err) = measured(&tmp, &["pages", "--json", "--quiet", z], &t.path().join("e1"));
    eprintln!(
        "pages of a {} byte zip: peak RSS {} MB",
        std::fs::metadata(&zip).unwrap().len(),
        rss >> 20
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(rss < PEAK_RSS_LIMIT, "pages: peak RSS {} MB", rss >> 20);

    let out = t.path().join("pkg");
    let args = package_args(out.to_str().unwrap(), site.to_str().unwrap(), &["--quiet"]);
    let (code, rss, err) = measured(&tmp, &args, &t.path().join("e2"));
    eprintln!("package of a {} byte log: peak RSS {} MB", log.len(), rss >> 20);
    assert_eq!(code, Some(0), "{err}");
    assert!(rss < PEAK_RSS_LIMIT, "package: peak RSS {} MB", rss >> 20);

    // The log still dates and names the page it saved.
    let o = webaip_in(&tmp, &["pages", "--json", z]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["entries"][0]["url"], "http://www.e.org/", "{v}");
    assert_eq!(v["entries"][0]["captured"], "2024-01-02T10:11:12Z", "{v}");
    assert!(mirror_temporaries(&tmp).is_empty());
}

/// Item 2: a log written with `wget -P dl` names `dl/www.e.org/...`; the mirror's files are
/// found below the prefix (one look-up each, from the URL's host directory).
#[test]
fn a_wget_log_below_a_prefix_still_names_the_files() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("site");
    std::fs::create_dir_all(site.join("www.e.org")).unwrap();
    std::fs::write(site.join("www.e.org/index.html"), PAGE).unwrap();
    std::fs::write(site.join("www.e.org/a"), "<p>a</p>").unwrap();
    let log = wget_log(&[
        ("http://www.e.org/", "/home/u/dl/www.e.org/index.html"),
        ("http://www.e.org/a?x=1", "dl/www.e.org/a"),
    ]);
    std::fs::write(site.join("wget-log"), log).unwrap();
    let o = crate::util::webaip(&["pages", "--json", site.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let urls: Vec<&str> =
        v["entries"].as_array().unwrap().iter().map(|e| e["url"].as_str().unwrap()).collect();
    assert_eq!(urls, ["http://www.e.org/", "http://www.e.org/a?x=1"], "{v}");
}

/// Item 3: 2,000 central-directory entries sharing one compressed stream (the 146 KB zip that
/// wrote 2.05 GB): refused before anything is written, naming the zip and the entries, exit 2,
/// nothing left in TMPDIR or beside the package.
#[test]
fn a_zip_of_overlapping_entries_is_refused_unopened() {
    let t = tempfile::tempdir().unwrap();
    let zip = t.path().join("bomb.zip");
    std::fs::write(&zip, overlapping_zip(2000, 1 << 20)).unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let z = zip.to_str().unwrap();
    let out = t.path().join("pkg");
    let pages = ["pages", "--json", z].map(String::from).to_vec();
    for args in [pages, package_args(out.to_str().unwrap(), z, &[])] {
        let o = webaip_in(&tmp, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("bomb.zip") && err.contains("overlaps"), "{err}");
        assert!(err.contains("site/www.e.org/p"), "{err}");
        assert!(mirror_temporaries(&tmp).is_empty());
        assert!(mirror_temporaries(t.path()).is_empty());
    }
    assert!(!out.exists());
}

/// A zip of a mirror with one entry of `big` zero bytes (deflated to a thousandth of that).
fn high_ratio_zip(big: usize) -> Vec<u8> {
    let log = wget_log(&[("http://www.e.org/", "www.e.org/index.html")]);
    zip_of(&[
        ("site/wget-log", log.as_bytes()),
        ("site/www.e.org/index.html", PAGE),
        ("site/www.e.org/zeros.bin", &vec![0u8; big]),
    ])
}

/// Sets the declared uncompressed size of the entry `name` (local and central headers) to
/// `size`: a header that lies about what the entry unpacks to.
fn lie_about_size(zip: &mut [u8], name: &str, size: u32) {
    let mut i = 0;
    while i + 4 <= zip.len() {
        // (where the size is, where the name is)
        let at = match &zip[i..i + 4] {
            [0x50, 0x4b, 0x03, 0x04] => Some((i + 22, i + 30)),
            [0x50, 0x4b, 0x01, 0x02] => Some((i + 24, i + 46)),
            _ => None,
        };
        if let Some((at, n)) = at
            && zip.get(n..n + name.len()) == Some(name.as_bytes())
        {
            zip[at..at + 4].copy_from_slice(&size.to_le_bytes());
        }
        i += 1;
    }
}

/// Item 3: an entry of 200 MB of zeros in a 200 KB zip (budget: 64 MiB), on a 96 MiB disk
/// where one may be mounted. Its headers saying its size, it is refused before anything is
/// written (exit 2, the zip named, nothing left); its headers lying (1,000 bytes), no more
/// than that is unpacked: the entry is refused as damaged and the rest listed and packaged
/// (bytes are counted as written, too, against the budget). `--max-zip-expansion` lets an
/// honest zip of that ratio through.
#[test]
fn a_high_ratio_zip_is_refused_within_its_budget() {
    let t = tempfile::tempdir().unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let disk = SmallDisk::mount(&tmp, 96 << 10);
    eprintln!("TMPDIR on a 96 MiB tmpfs: {}", disk.is_some());
    let honest = high_ratio_zip(200 << 20);
    let zip = t.path().join("honest.zip");
    std::fs::write(&zip, &honest).unwrap();
    let o = webaip_in(&tmp, &["pages", "--json", zip.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("honest.zip") && err.contains("budget") && err.contains("declare"));
    assert!(err.contains("--max-zip-expansion"), "{err}");
    assert!(mirror_temporaries(&tmp).is_empty(), "left in TMPDIR");

    let mut lying = honest.clone();
    lie_about_size(&mut lying, "site/www.e.org/zeros.bin", 1000);
    let zip = t.path().join("lying.zip");
    std::fs::write(&zip, &lying).unwrap();
    let z = zip.to_str().unwrap();
    // A refused entry is listed and makes the listing a run with findings, as for package.
    let o = webaip_in(&tmp, &["pages", "--json", z]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let quirks = v["quirks"].to_string();
    assert!(quirks.contains("site/www.e.org/zeros.bin") && quirks.contains("damaged"), "{v}");
    assert_eq!(v["entries"][0]["url"], "http://www.e.org/", "{v}");
    let out = t.path().join("lying-pkg");
    let o = webaip_in(&tmp, &package_args(out.to_str().unwrap(), z, &[]));
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("zeros.bin"));
    assert!(mirror_temporaries(&tmp).is_empty(), "left in TMPDIR");

    // The honest one is let through with a ratio that covers it, and packaged.
    let small = high_ratio_zip(8 << 20);
    let zip = t.path().join("small.zip");
    std::fs::write(&zip, &small).unwrap();
    let ratio = ((8u64 << 20) / small.len() as u64 + 10).to_string();
    let z = zip.to_str().unwrap();
    let o = webaip_in(&tmp, &["pages", "--json", z]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    drop(disk);
    let out = t.path().join("pkg");
    let o =
        webaip_in(&tmp, &package_args(out.to_str().unwrap(), z, &["--max-zip-expansion", &ratio]));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("METS.xml").exists());
    assert!(mirror_temporaries(t.path()).is_empty());
}

/// Item 11: a zip holding both `a` and `a/x` (and `b/` after a file `b`): the entry in the
/// way is refused and listed, the rest packaged (exit 1); `pages` lists the rest too.
#[test]
fn a_file_in_the_way_of_an_entry_refuses_that_entry_only() {
    let t = tempfile::tempdir().unwrap();
    let log = wget_log(&[("http://www.e.org/", "www.e.org/index.html")]);
    let zip = t.path().join("clash.zip");
    std::fs::write(
        &zip,
        zip_of(&[
            ("site/wget-log", log.as_bytes()),
            ("site/www.e.org/index.html", PAGE),
            ("site/www.e.org/a", b"<p>file a</p>"),
            ("site/www.e.org/a/x", b"<p>x below a</p>"),
            ("site/www.e.org/c/y", b"<p>y</p>"),
            ("site/www.e.org/c", b"<p>file c</p>"),
        ]),
    )
    .unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = t.path().join("pkg");
    let z = zip.to_str().unwrap();
    let o = webaip_in(&tmp, &package_args(out.to_str().unwrap(), z, &[]));
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let refused = v["packages"][0]["refused"].to_string();
    assert!(refused.contains("site/www.e.org/a/x"), "{refused}");
    assert!(refused.contains("site/www.e.org/c\""), "{refused}");
    assert!(!refused.contains("File exists"), "{refused}");
    assert!(out.join("METS.xml").exists());
    let o = webaip_in(&tmp, &["pages", "--json", z]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["counts"]["captures"], 3, "{v}");
    assert!(v["quirks"].to_string().contains("site/www.e.org/a/x"), "{v}");
    assert!(mirror_temporaries(&tmp).is_empty());
}

/// Item 11: an HTTrack mirror whose `hts-cache/new.zip` is no zip is not read as an empty
/// cache without a word: it is refused (listed, exit 1) and the mirror packaged.
#[test]
fn a_garbage_httrack_cache_is_refused_not_read_as_empty() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("mysite");
    std::fs::create_dir_all(site.join("www.e.org")).unwrap();
    std::fs::create_dir_all(site.join("hts-cache")).unwrap();
    std::fs::write(
        site.join("hts-log.txt"),
        "HTTrack3.49-2 launched on Tue, 02 Jan 2024 10:11:12 at http://www.e.org/\n",
    )
    .unwrap();
    std::fs::write(site.join("www.e.org/index.html"), PAGE).unwrap();
    std::fs::write(site.join("hts-cache/new.zip"), b"this is not a zip at all\n").unwrap();
    let out = t.path().join("pkg");
    let o = Package::new().json().run(&out, &site);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let refused = v["packages"][0]["refused"].to_string();
    assert!(refused.contains("hts-cache/new.zip") && refused.contains("not an HTTrack cache"));
    assert!(out.join("METS.xml").exists());
}

/// Holds an exclusive `flock` on a directory, as a live run holds its temporary's.
fn hold_lock(dir: &Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(dir).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    f
}

/// Item 9: what a killed run left (`.webaip-mirror-XXXXXX` beside `--out`, and in TMPDIR
/// after `pages`) is removed by the next run, and said to be; a live run's (locked) is left.
#[test]
fn a_killed_runs_unpacked_zip_is_removed_by_the_next_run() {
    let t = tempfile::tempdir().unwrap();
    let log = wget_log(&[("http://www.e.org/", "www.e.org/index.html")]);
    let zip = t.path().join("site.zip");
    std::fs::write(
        &zip,
        zip_of(&[("site/wget-log", log.as_bytes()), ("site/www.e.org/index.html", PAGE)]),
    )
    .unwrap();
    let z = zip.to_str().unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let leave = |dir: &Path, name: &str| {
        let d = dir.join(name);
        std::fs::create_dir_all(d.join("site/www.e.org")).unwrap();
        for i in 0..50 {
            std::fs::write(d.join(format!("site/www.e.org/p{i}.html")), PAGE).unwrap();
        }
        d
    };
    // A real kill: a run stopped while unpacking leaves its directory, unlocked.
    let dead_pkg = leave(t.path(), ".webaip-mirror-aB3dE9");
    let live_pkg = leave(t.path(), ".webaip-mirror-Live01");
    let dead_tmp = leave(&tmp, ".webaip-mirror-x1Y2z3");
    let live_tmp = leave(&tmp, ".webaip-mirror-Live02");
    let not_ours = leave(&tmp, ".webaip-mirror-toolongname");
    let _l1 = hold_lock(&live_pkg);
    let _l2 = hold_lock(&live_tmp);

    let out = t.path().join("pkg");
    let o = webaip_in(&tmp, &package_args(out.to_str().unwrap(), z, &[]));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!dead_pkg.exists() && live_pkg.exists());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let notes = v["mirror"]["notes"].to_string();
    assert!(notes.contains(".webaip-mirror-aB3dE9") && notes.contains("died"), "{notes}");

    let o = webaip_in(&tmp, &["pages", "--json", z]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!dead_tmp.exists() && live_tmp.exists() && not_ours.exists());
    let left = mirror_temporaries(&tmp);
    assert_eq!(left.len(), 2, "{left:?}");
}

/// Item 3 and 10: `pages` and `package` of a zip of 100,000 small files (2,000 of them pages)
/// stay under the bound (`pages` took 105 MB, `package` 165 MB, then 73 MB before a mirror
/// file stopped holding its full path and its own copy of its MIME type).
#[test]
fn a_zip_of_100000_entries_is_read_in_bounded_memory() {
    let t = tempfile::tempdir().unwrap();
    let log = wget_log(&[("http://www.e.org/", "www.e.org/index.html")]);
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("site/wget-log", opts).unwrap();
    z.write_all(log.as_bytes()).unwrap();
    z.start_file("site/www.e.org/index.html", opts).unwrap();
    z.write_all(PAGE).unwrap();
    for i in 0..100_000 {
        let html = i % 50 == 0;
        let name =
            format!("site/www.e.org/d{}/f{i}.{}", i / 1000, if html { "html" } else { "txt" });
        z.start_file(name, opts).unwrap();
        if html {
            write!(z, "<html><title>page {i}</title></html>").unwrap();
        } else {
            write!(z, "text {i}").unwrap();
        }
    }
    let zip = t.path().join("many.zip");
    std::fs::write(&zip, z.finish().unwrap().into_inner()).unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let zp = zip.to_str().unwrap();
    let (code, rss, err) =
        measured(&tmp, &["pages", "--json", "--quiet", zp], &t.path().join("e1"));
    eprintln!("pages of 100,000 entries: peak RSS {} MB", rss >> 20);
    assert_eq!(code, Some(0), "{err}");
    assert!(rss < PEAK_RSS_LIMIT, "pages: peak RSS {} MB", rss >> 20);
    let out = t.path().join("pkg");
    let args = package_args(out.to_str().unwrap(), zp, &["--quiet"]);
    let (code, rss, err) = measured(&tmp, &args, &t.path().join("e2"));
    eprintln!("package of 100,000 entries: peak RSS {} MB", rss >> 20);
    assert_eq!(code, Some(0), "{err}");
    assert!(rss < PEAK_RSS_LIMIT, "package: peak RSS {} MB", rss >> 20);
    assert!(mirror_temporaries(&tmp).is_empty() && mirror_temporaries(t.path()).is_empty());
}

/// Item 10: 55 MB of `hts-cache/new.txt` and `url.map` lines about files that are not in the
/// mirror (107 MB before): only lines about walked files are kept.
#[test]
fn httrack_cache_indexes_about_absent_files_take_flat_memory() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("mysite");
    std::fs::create_dir_all(site.join("www.e.org")).unwrap();
    std::fs::create_dir_all(site.join("hts-cache")).unwrap();
    std::fs::write(
        site.join("hts-log.txt"),
        "HTTrack3.49-2 launched on Tue, 02 Jan 2024 10:11:12 at http://www.e.org/\n",
    )
    .unwrap();
    std::fs::write(site.join("www.e.org/index.html"), PAGE).unwrap();
    let mut new_txt =
        std::io::BufWriter::new(std::fs::File::create(site.join("hts-cache/new.txt")).unwrap());
    let mut url_map = std::io::BufWriter::new(std::fs::File::create(site.join("url.map")).unwrap());
    writeln!(new_txt, "date\tsize'/'remotesize\tflags(request:Update,Range state:File response:Modified,Chunked,gZipped)\tstatuscode\tstatus ('servermsg')\tMIME\tEtag|Date\tURL\tlocalfile\t(from URL)").unwrap();
    writeln!(
        new_txt,
        "10:11:12\t10/10\t---M--\t200\tadded ('OK')\ttext/html\tdate:x\thttp://www.e.org/\twww.e.org/index.html\t(from )"
    )
    .unwrap();
    let mut written = 0usize;
    let mut i = 0u64;
    while written < 55 << 20 {
        let a = format!(
            "10:11:12\t10/10\t---M--\t200\tadded ('OK')\ttext/html\tdate:x\thttp://www.e.org/absent/{i}.html\twww.e.org/absent/{i}.html\t(from )\n"
        );
        let b = format!("http://www.e.org/absent/{i}.html^^www.e.org/absent/{i}.html\n");
        new_txt.write_all(a.as_bytes()).unwrap();
        url_map.write_all(b.as_bytes()).unwrap();
        written += a.len() + b.len();
        i += 1;
    }
    drop((new_txt, url_map));
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let (code, rss, err) = measured(
        &tmp,
        &["pages", "--json", "--quiet", site.to_str().unwrap()],
        &t.path().join("e1"),
    );
    eprintln!("pages with {} MB of new.txt and url.map: peak RSS {} MB", written >> 20, rss >> 20);
    assert_eq!(code, Some(0), "{err}");
    assert!(rss < PEAK_RSS_LIMIT, "pages: peak RSS {} MB", rss >> 20);
    let o = crate::util::webaip(&["pages", "--json", site.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["entries"][0]["url"], "http://www.e.org/", "{v}");
}

/// Item 3: `pages` writes only what it reads of each file of a zip (its first MiB; the rest
/// a hole): a zip of two 30 MB files is listed on a 16 MiB TMPDIR, with their true sizes and
/// the big page's title.
#[test]
fn pages_of_a_zip_writes_only_the_heads_of_its_files() {
    let t = tempfile::tempdir().unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let disk = SmallDisk::mount(&tmp, 16 << 10);
    eprintln!("TMPDIR on a 16 MiB tmpfs: {}", disk.is_some());
    let log = wget_log(&[("http://www.e.org/", "www.e.org/index.html")]);
    let mut big_page = b"<html><head><title>Big one</title></head><body>".to_vec();
    big_page.resize(30 << 20, b' ');
    let zip = t.path().join("big.zip");
    std::fs::write(
        &zip,
        zip_of(&[
            ("site/wget-log", log.as_bytes()),
            ("site/www.e.org/index.html", &big_page),
            ("site/www.e.org/zeros.bin", &vec![0u8; 30 << 20]),
        ]),
    )
    .unwrap();
    let o = webaip_in(&tmp, &["pages", "--json", zip.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["entries"][0]["title"], "Big one", "{v}");
    assert_eq!(v["entries"][0]["size"], 30 << 20, "{v}");
    assert_eq!(v["counts"]["captures"], 2, "{v}");
    assert!(mirror_temporaries(&tmp).is_empty());
}

/// Review of issue 24: 200,000 entries refused one by one (`../N`) are listed up to 1,000 and
/// counted beyond, in bounded memory (each was held, twice: 466 MB at 900,000); a name too
/// long for the file system refuses that entry only; directories nested deep on no data byte
/// are counted against the budget (a 769 KB zip made 700 MB of directories).
#[test]
fn refused_entries_long_names_and_empty_directories_are_bounded() {
    use zip::write::SimpleFileOptions;
    let t = tempfile::tempdir().unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);

    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let log = wget_log(&[("http://www.e.org/", "www.e.org/index.html")]);
    for (name, data) in [("wget-log", log.as_bytes()), ("www.e.org/index.html", PAGE)] {
        z.start_file(name, opts).unwrap();
        z.write_all(data).unwrap();
    }
    z.start_file(format!("www.e.org/{}.html", "n".repeat(300)), opts).unwrap();
    z.write_all(PAGE).unwrap();
    for i in 0..200_000 {
        z.start_file(format!("../{i}"), opts).unwrap();
    }
    let zip = t.path().join("refused.zip");
    std::fs::write(&zip, z.finish().unwrap().into_inner()).unwrap();
    let out = t.path().join("p");
    let (z, o) = (zip.to_str().unwrap(), out.to_str().unwrap());
    let args = package_args(o, z, &["--capture-date", "2024-01-02", "--quiet"]);
    let (code, rss, err) = measured(&tmp, &args, &t.path().join("stderr"));
    assert_eq!(code, Some(1), "{err}");
    assert!(rss < PEAK_RSS_LIMIT, "package: peak RSS {} MB", rss >> 20);
    assert!(out.join("METS.xml").exists());
    let o = webaip_in(&tmp, &["pages", "--json", "--capture-date", "2024-01-02", z]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let quirks = v["quirks"].to_string();
    assert!(quirks.contains("too long for the file system"), "{quirks}");
    // Listed up to 1,000 (with the long name), the rest counted in one line.
    let refused = &v["counts"]["refused"];
    assert!(refused.as_u64().is_some_and(|n| (1000..=1003).contains(&n)), "{refused}");
    let report = webaip_in(
        &tmp,
        &package_args(t.path().join("p2").to_str().unwrap(), z, &["--capture-date", "2024-01-02"]),
    );
    let text = String::from_utf8_lossy(&report.stdout);
    // The long name and 999 of the others listed, 199,001 counted.
    assert!(text.contains("\"199001 more entries\""), "not counted");

    // 40 entries, each a chain of 1,000 new directories: refused for their depth; 200 of
    // 100 (each within the depth allowed): 80 MB of directory cost.
    for (chains, depth, why) in
        [(40, 1000, "folders deep"), (200, 100, "each new directory counts")]
    {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for i in 0..chains {
            z.add_directory(format!("x{i}{}", "/a".repeat(depth - 1)), opts).unwrap();
        }
        z.start_file("www.e.org/index.html", opts).unwrap();
        z.write_all(PAGE).unwrap();
        let zip = t.path().join("dirs.zip");
        std::fs::write(&zip, z.finish().unwrap().into_inner()).unwrap();
        let o = webaip_in(&tmp, &["pages", "--capture-date", "2024-01-02", zip.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(mirror_temporaries(&tmp).is_empty(), "left in TMPDIR");
    }
}

/// A mirror of 30,000 links (and one page): each link is refused, the first 10,000 listed and
/// all counted, in time linear in their number (each new one was compared with every one
/// before: 100,000 links took 22 s and 72 MB) and bounded memory.
#[test]
fn thirty_thousand_links_are_refused_counted_and_listed_up_to_a_bound() {
    const LINKS: u64 = 30_000;
    let t = tempfile::tempdir().unwrap();
    let instance = t.path().join("999/20240101-1200");
    let host = instance.join("www.e.org");
    std::fs::create_dir_all(host.join("s")).unwrap();
    std::fs::write(host.join("index.html"), PAGE).unwrap();
    for i in 0..LINKS {
        std::os::unix::fs::symlink("../index.html", host.join(format!("s/l{i:06}.html"))).unwrap();
    }
    let out = t.path().join("pkg");
    let args = package_args(out.to_str().unwrap(), instance.to_str().unwrap(), &[]);
    let (code, rss, err) = measured(t.path(), &args, &t.path().join("stderr"));
    eprintln!("package of {LINKS} links: peak RSS {} MB", rss >> 20);
    assert_eq!(code, Some(1), "{err}");
    assert!(rss < PEAK_RSS_LIMIT, "peak RSS {} MB", rss >> 20);
    let o = webaip_command().args(&args).arg("--force").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["kind"], "pandas", "{v:#}");
    let r = &v["packages"][0]; // one report per PANDAS instance
    assert_eq!(r["refusals"], LINKS, "{}", r["refusals"]);
    let listed = r["refused"].as_array().unwrap();
    assert_eq!(listed.len(), 10_000);
    assert_eq!(listed[0][0], "www.e.org/s/l000000.html");
    assert!(listed[0][1].as_str().unwrap().contains("link"), "{}", listed[0][1]);
    assert_eq!(r["captures"], 1, "the page is packaged");
}

/// An error about the mirror inside a zip (here: no capture date anywhere) names the zip and
/// the entry, not the hidden temporary directory it was unpacked into; `package` and `pages`.
#[test]
fn an_error_about_a_zipped_mirror_names_the_zip_and_its_entry() {
    let t = tempfile::tempdir().unwrap();
    let zip = t.path().join("undated.zip");
    std::fs::write(&zip, zip_of(&[("site/www.e.org/index.html", PAGE)])).unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let z = zip.to_str().unwrap();
    let out = t.path().join("pkg");
    let package = package_args(out.to_str().unwrap(), z, &[]);
    for args in [package, vec!["pages".into(), z.into()]] {
        let o = webaip_in(&tmp, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("{z} (entry site): the mirror records no capture date")));
        assert!(!err.contains(".webaip-mirror-"), "{args:?}: {err}");
    }
    assert!(mirror_temporaries(&tmp).is_empty() && mirror_temporaries(t.path()).is_empty());
}
