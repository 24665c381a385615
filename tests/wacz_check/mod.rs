//! `webaip validate FILE.wacz`, the deep WACZ check: WACZ files written by py-wacz (the
//! reference implementation) from corpus and sample WARCs are valid; each damage, written by
//! Python's zipfile (tests/wacz_check/mutate.py), is found with its rule and the member (and
//! line) named, where py-wacz's own `wacz validate` is recorded beside it; hostile ZIPs give a
//! clear error. The ReplayWeb.page harness (tests/export_wacz/replay.py) replays a py-wacz WACZ
//! in headless Chromium.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{corpus, json, oracle_python, repo, webaip};

mod hostile;

/// The heritrix sample's two WARCs, as `webaip package` writes them.
const HERITRIX_WARCS: [&str; 2] = [
    "IAH-20240315103000-00000-crawler.example.warc.gz",
    "IAH-20240315103000-00001-crawler.example.warc.gz",
];

fn venv_bin(name: &str) -> PathBuf {
    oracle_python().parent().expect("venv bin").join(name)
}

/// `wacz create` (py-wacz) of `warcs` into `out`, with `pages` (a pages.jsonl) or detected ones.
fn py_wacz(warcs: &[PathBuf], pages: Option<&Path>, out: &Path) {
    let mut c = Command::new(venv_bin("wacz"));
    c.arg("create").arg("-o").arg(out);
    match pages {
        Some(p) => c.arg("-p").arg(p),
        None => c.arg("--detect-pages"),
    };
    let o = c.args(warcs).output().expect("wacz runs");
    assert!(o.status.success(), "wacz create: {}", String::from_utf8_lossy(&o.stderr));
}

/// py-wacz's verdict: `wacz validate` accepts the file.
fn py_wacz_accepts(wacz: &Path) -> bool {
    let o = Command::new(venv_bin("wacz"))
        .arg("validate")
        .arg("-f")
        .arg(wacz)
        .output()
        .expect("wacz runs");
    o.status.success()
}

/// The check's JSON report and exit status.
fn check(wacz: &Path) -> (Option<i32>, serde_json::Value) {
    let o = webaip(&["validate", "--json", &wacz.display().to_string()]);
    (o.status.code(), crate::util::only_report(&json(&o)))
}

/// Error findings of `rule` in a report.
fn errors_of<'a>(report: &'a serde_json::Value, rule: &str) -> Vec<&'a serde_json::Value> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == rule && f["severity"] == "error")
        .collect()
}

/// The heritrix sample packaged, and a py-wacz WACZ of its WARCs with two pages.
fn heritrix_wacz(dir: &Path) -> PathBuf {
    let pkg = dir.join("pkg");
    let o = webaip(&[
        "package",
        "--no-virus-check",
        "--out",
        &pkg.display().to_string(),
        &repo().join("samples/heritrix-job").display().to_string(),
    ]);
    assert!(o.status.success(), "package: {}", String::from_utf8_lossy(&o.stderr));
    let pages = dir.join("pages.jsonl");
    std::fs::write(
        &pages,
        concat!(
            "{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\"}\n",
            "{\"id\": \"p1\", \"url\": \"http://www.example.org/\", \"ts\": \"2024-03-15T10:30:03Z\", \"title\": \"Example Heritage Society\"}\n",
            "{\"id\": \"p2\", \"url\": \"http://www.example.org/about.html\", \"ts\": \"2024-03-15T10:30:07Z\", \"title\": \"About - Example Heritage Society\"}\n",
        ),
    )
    .expect("pages written");
    let warcs: Vec<PathBuf> = HERITRIX_WARCS.iter().map(|w| pkg.join("content").join(w)).collect();
    let wacz = dir.join("heritrix.wacz");
    py_wacz(&warcs, Some(&pages), &wacz);
    wacz
}

/// A damaged copy of `wacz` (see mutate.py for each damage).
fn mutate(wacz: &Path, out: &Path, damage: &[&str]) -> PathBuf {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/wacz_check/mutate.py"))
        .arg(wacz)
        .arg(out)
        .args(damage)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "mutate {damage:?}: {}", String::from_utf8_lossy(&o.stderr));
    out.to_path_buf()
}

#[test]
fn py_wacz_files_of_corpus_and_sample_warcs_are_valid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut waczs = vec![heritrix_wacz(dir.path())];
    for name in ["warcio-example.warc.gz", "jwat-IAH-20080430204825-00000-blackbook.warc.gz"] {
        let out = dir.path().join(format!("{name}.wacz"));
        py_wacz(&[corpus().join("warc").join(name)], None, &out);
        waczs.push(out);
    }
    for wacz in &waczs {
        assert!(py_wacz_accepts(wacz), "py-wacz rejects {}", wacz.display());
        let (code, report) = check(wacz);
        assert_eq!(code, Some(0), "{report:#}");
        assert_eq!(report["valid"], true);
        assert!(report["index_lines"].as_u64() > Some(0), "{report:#}");
        assert_eq!(report["index_lines"], report["records"], "{report:#}");
        assert!(report["pages"].as_u64() > Some(0), "{report:#}");
    }
    // The text form names the file and says VALID.
    let o = webaip(&["validate", &waczs[0].display().to_string()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().last().is_some_and(|l| l.contains("heritrix.wacz: VALID")), "{text}");
}

#[test]
fn a_wacz_without_pages_is_invalid_though_py_wacz_accepts_it() {
    // py-wacz writes no pages/pages.jsonl when it detects no page, which WACZ 1.1.1 requires.
    let dir = tempfile::tempdir().expect("tempdir");
    let wacz = dir.path().join("wget.wacz");
    py_wacz(&[corpus().join("warc/pywb-example-wget-1-14.warc.gz")], None, &wacz);
    assert!(py_wacz_accepts(&wacz));
    let (code, report) = check(&wacz);
    assert_eq!(code, Some(1), "{report:#}");
    let layout = errors_of(&report, "WACZ-LAYOUT");
    assert_eq!(layout.len(), 1, "{report:#}");
    assert_eq!(layout[0]["member"], "pages/pages.jsonl");
}

/// One damage: the rule, member and line the check must name, and py-wacz's verdict.
struct Damage {
    args: Vec<String>,
    rule: &'static str,
    member: &'static str,
    line: Option<u64>,
    py_wacz_accepts: bool,
}

#[test]
fn each_damage_is_found_with_its_rule_and_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wacz = heritrix_wacz(dir.path());
    let warc1 = format!("archive/{}", HERITRIX_WARCS[1]);
    let damages = [
        // Every index offset shifted by 7 bytes (index, idx and manifest made consistent).
        Damage {
            args: vec!["shift-offsets".into(), "7".into()],
            rule: "WACZ-INDEX",
            member: "indexes/index.cdx.gz",
            line: Some(1),
            py_wacz_accepts: true,
        },
        Damage {
            args: vec!["deflate".into(), warc1.clone()],
            rule: "WACZ-STORED",
            member: Box::leak(warc1.clone().into_boxed_str()),
            line: None,
            py_wacz_accepts: true,
        },
        Damage {
            args: vec!["flip-byte".into(), warc1.clone(), "1000".into()],
            rule: "WACZ-DATAPACKAGE",
            member: "datapackage.json",
            line: None,
            py_wacz_accepts: false,
        },
        // The same byte changed, the manifest rewritten to match: the records themselves tell.
        Damage {
            args: vec!["flip-byte-fixed".into(), warc1.clone(), "1000".into()],
            rule: "WACZ-WARC",
            member: Box::leak(warc1.clone().into_boxed_str()),
            line: None,
            py_wacz_accepts: false,
        },
        Damage {
            args: vec!["digest".into(), "pages/pages.jsonl".into()],
            rule: "WACZ-DATAPACKAGE",
            member: "datapackage.json",
            line: None,
            py_wacz_accepts: false,
        },
        Damage {
            args: vec!["drop-capture".into(), "http://www.example.org/about.html".into()],
            rule: "WACZ-PAGES",
            member: "pages/pages.jsonl",
            line: Some(3),
            py_wacz_accepts: true,
        },
    ];
    let mut table = Vec::new();
    for (i, d) in damages.iter().enumerate() {
        let args: Vec<&str> = d.args.iter().map(String::as_str).collect();
        let out = mutate(&wacz, &dir.path().join(format!("damage-{i}.wacz")), &args);
        let (code, report) = check(&out);
        assert_eq!(code, Some(1), "{:?}: {report:#}", d.args);
        assert_eq!(report["valid"], false);
        let found = errors_of(&report, d.rule);
        assert!(
            found.iter().any(|f| f["member"] == d.member
                && d.line.is_none_or(|l| f["line"].as_u64().is_some_and(|fl| fl >= l))),
            "{:?}: no {} error on {}: {report:#}",
            d.args,
            d.rule,
            d.member
        );
        let py = py_wacz_accepts(&out);
        assert_eq!(py, d.py_wacz_accepts, "py-wacz's verdict on {:?} changed", d.args);
        table.push(format!(
            "{:?}: webaip {} ({} errors); py-wacz {}",
            d.args[0],
            d.rule,
            report["errors"],
            if py { "accepts" } else { "rejects" }
        ));
    }
    println!("{}", table.join("\n"));
    // The shifted index: every line is named, not only the first, and every record is left
    // without a line.
    let (_, shifted) = check(&dir.path().join("damage-0.wacz"));
    let on = |member: &str| {
        errors_of(&shifted, "WACZ-INDEX").iter().filter(|f| f["member"] == member).count() as u64
    };
    assert_eq!(on("indexes/index.cdx.gz"), shifted["index_lines"].as_u64().unwrap());
    let unlisted: u64 = HERITRIX_WARCS.iter().map(|w| on(&format!("archive/{w}"))).sum();
    assert_eq!(unlisted, shifted["records"].as_u64().unwrap());
}

#[test]
fn hostile_zips_give_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wacz = heritrix_wacz(dir.path());
    // A member named ../evil.txt: named, never read outside.
    let evil = mutate(&wacz, &dir.path().join("evil.wacz"), &["evil-name"]);
    let (code, report) = check(&evil);
    assert_eq!(code, Some(1), "{report:#}");
    assert!(
        errors_of(&report, "WACZ-ZIP").iter().any(|f| f["member"] == "../evil.txt"),
        "{report:#}"
    );
    // Truncated: no central directory; exit 2 with the reason.
    let bytes = std::fs::read(&wacz).expect("wacz read");
    for cut in [bytes.len() / 2, bytes.len() - 10, 10] {
        let t = dir.path().join("trunc.wacz");
        std::fs::write(&t, &bytes[..cut]).expect("written");
        let o = webaip(&["validate", &t.display().to_string()]);
        assert_eq!(o.status.code(), Some(2), "cut at {cut}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("trunc.wacz") && err.contains("not a readable ZIP"), "{err}");
    }
    // Central directory declaring a member far past the file's end.
    let mut big = bytes.clone();
    let cd = memchr_last(&big, b"PK\x01\x02").expect("a central directory entry");
    big[cd + 20..cd + 24].copy_from_slice(&u32::MAX.to_le_bytes()); // compressed size
    big[cd + 24..cd + 28].copy_from_slice(&u32::MAX.to_le_bytes()); // size
    let huge = dir.path().join("huge.wacz");
    std::fs::write(&huge, &big).expect("written");
    let o = webaip(&["validate", "--json", &huge.display().to_string()]);
    assert!(matches!(o.status.code(), Some(1 | 2)), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}

fn memchr_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

#[test]
fn replay_harness_replays_a_py_wacz_file_in_chromium() {
    let browser = repo().join(".browser/replaywebpage/sw.js");
    assert!(browser.exists(), "run scripts/setup-browser.sh first");
    let dir = tempfile::tempdir().expect("tempdir");
    let wacz = heritrix_wacz(dir.path());
    let pairs = serde_json::json!([
        ["http://www.example.org/", "Example Heritage Society"],
        ["http://www.example.org/about.html", "About - Example Heritage Society"],
    ]);
    let png = dir.path().join("first.png");
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/export_wacz/replay.py"))
        .arg(&wacz)
        .arg(pairs.to_string())
        .arg(&png)
        .output()
        .expect("replay.py runs");
    let out = json(&o);
    assert_eq!(o.status.code(), Some(0), "{out:#} {}", String::from_utf8_lossy(&o.stderr));
    for page in out["pages"].as_array().expect("pages") {
        assert_eq!(page["ok"], true, "{out:#}");
    }
    let shot = std::fs::read(&png).expect("screenshot");
    assert!(shot.starts_with(b"\x89PNG") && shot.len() > 5_000, "{} bytes", shot.len());
}

/// Findings of `rule` on `member` whose message holds `text`.
fn findings_on<'a>(
    report: &'a serde_json::Value,
    rule: &str,
    member: &str,
    text: &str,
) -> Vec<&'a serde_json::Value> {
    errors_of(report, rule)
        .into_iter()
        .filter(|f| {
            f["member"] == member && f["message"].as_str().is_some_and(|m| m.contains(text))
        })
        .collect()
}

#[test]
fn records_without_an_index_line_are_named_by_member_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wacz = heritrix_wacz(dir.path());
    // One line of a URL that is no page removed: py-wacz's index names the record's place.
    let out = dir.path().join("dropped.wacz");
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/wacz_check/mutate.py"))
        .args([&wacz, &out])
        .arg("drop-unpaged")
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dropped: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let (code, report) = check(&out);
    assert_eq!(code, Some(1), "{report:#}");
    let member = format!("archive/{}", dropped["filename"].as_str().expect("filename"));
    let found = findings_on(&report, "WACZ-INDEX", &member, "has no index line");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["offset"], dropped["offset"], "{report:#}");
    // The same record count as the valid WACZ, one line fewer.
    let (_, whole) = check(&wacz);
    assert_eq!(report["records"], whole["records"]);
    assert_eq!(report["index_lines"].as_u64(), whole["index_lines"].as_u64().map(|n| n - 1));

    // The index emptied (and the pages with it, so only the index can tell).
    let empty = mutate(&wacz, &dir.path().join("empty.wacz"), &["empty-index"]);
    let (code, report) = check(&empty);
    assert_eq!(code, Some(1), "{report:#}");
    let records = report["records"].as_u64().expect("records");
    assert!(records > 0 && records <= 50, "{report:#}");
    let unlisted: Vec<_> = errors_of(&report, "WACZ-INDEX")
        .into_iter()
        .filter(|f| f["message"].as_str().is_some_and(|m| m.ends_with("has no index line")))
        .collect();
    assert_eq!(unlisted.len() as u64, records, "{report:#}");
    assert!(
        unlisted.iter().all(|f| f["offset"].is_u64()
            && f["member"].as_str().is_some_and(|m| m.starts_with("archive/")))
    );
    let total =
        findings_on(&report, "WACZ-INDEX", "indexes/", &format!("{records} indexed records"));
    assert_eq!(total.len(), 1, "{report:#}");
    println!(
        "py-wacz on the emptied index: {}",
        if py_wacz_accepts(&empty) { "accepts" } else { "rejects" }
    );
}

#[test]
fn duplicate_names_and_local_headers_unlike_the_directory_are_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wacz = heritrix_wacz(dir.path());
    // The same name twice (the same bytes too): each later one is named.
    let dup = mutate(&wacz, &dir.path().join("dup.wacz"), &["duplicate", "pages/pages.jsonl"]);
    let (code, report) = check(&dup);
    assert_eq!(code, Some(1), "{report:#}");
    let found = findings_on(&report, "WACZ-ZIP", "pages/pages.jsonl", "appears again");
    assert_eq!(found.len(), 1, "{report:#}");
    let o = webaip(&["validate", &dup.display().to_string()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines()
            .any(|l| l
                .starts_with(&format!("{}:pages/pages.jsonl: error [WACZ-ZIP]", dup.display()))),
        "{text}"
    );
    // A local header whose name differs from the central directory's.
    let renamed =
        mutate(&wacz, &dir.path().join("local-name.wacz"), &["local-name", "pages/pages.jsonl"]);
    let (code, report) = check(&renamed);
    assert_eq!(code, Some(1), "{report:#}");
    let found =
        findings_on(&report, "WACZ-ZIP", "pages/pages.jsonl", "its name is `pages/pages.jsonX`");
    assert_eq!(found.len(), 1, "{report:#}");
    // A local header whose CRC-32 differs (the data and the directory agree).
    let crc = mutate(&wacz, &dir.path().join("local-crc.wacz"), &["local-crc", "datapackage.json"]);
    let (code, report) = check(&crc);
    assert_eq!(code, Some(1), "{report:#}");
    let found = findings_on(&report, "WACZ-ZIP", "datapackage.json", "CRC-32");
    assert_eq!(found.len(), 1, "{report:#}");
    // Python's zipfile, which compares the local name too, refuses the renamed member.
    let o = Command::new(oracle_python())
        .args(["-c", "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in z.namelist(): z.read(n)"])
        .arg(&renamed)
        .output()
        .expect("python runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("differ"), "{err}");
}

/// `sha1:BASE32` of `bytes`, as WARC digest fields write it.
fn sha1_field(bytes: &[u8]) -> String {
    use sha1::Digest;
    format!("sha1:{}", data_encoding::BASE32.encode(&sha1::Sha1::digest(bytes)))
}

/// A WARC of two records, uncompressed: an HTTP response whose payload is `payload` (both
/// digests stated) and a `resource` stating only its block digest (the index computes its
/// payload's); and where each one's payload starts in the file.
fn two_record_warc(payload: &[u8]) -> (Vec<u8>, [usize; 2]) {
    let http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
        payload.len()
    );
    let block = [http.as_bytes(), payload].concat();
    let mut warc = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:11111111-1111-1111-1111-111111111111>\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://example.com/\r\nContent-Type: application/http; msgtype=response\r\nWARC-Payload-Digest: {}\r\nWARC-Block-Digest: {}\r\nContent-Length: {}\r\n\r\n",
        sha1_field(payload),
        sha1_field(&block),
        block.len()
    )
    .into_bytes();
    let first = warc.len() + http.len();
    warc.extend_from_slice(&block);
    warc.extend_from_slice(b"\r\n\r\n");
    let note = b"a note kept beside the page".repeat(8);
    warc.extend_from_slice(
        format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:22222222-2222-2222-2222-222222222222>\r\nWARC-Date: 2024-01-01T00:00:01Z\r\nWARC-Target-URI: http://example.com/note.txt\r\nContent-Type: text/plain\r\nWARC-Block-Digest: {}\r\nContent-Length: {}\r\n\r\n",
            sha1_field(&note),
            note.len()
        )
        .as_bytes(),
    );
    let second = warc.len();
    warc.extend_from_slice(&note);
    warc.extend_from_slice(b"\r\n\r\n");
    (warc, [first, second])
}

/// One payload byte changed in a WARC of a WACZ whose manifest (sizes, hashes) is made to
/// match: its index lines and pages still agree, only the records' `WARC-Block-Digest` and
/// `WARC-Payload-Digest` tell. Each is an error naming the member and the record's offset;
/// `warcio check` finds the same records; py-wacz accepts the file.
#[test]
fn a_changed_payload_byte_fails_the_records_digests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (warc, [page_at, note_at]) = two_record_warc(b"<html><title>A page</title><p>text</p>");
    let warc_path = dir.path().join("t.warc");
    std::fs::write(&warc_path, &warc).unwrap();
    let pages = dir.path().join("pages.jsonl");
    std::fs::write(
        &pages,
        concat!(
            "{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\"}\n",
            "{\"id\": \"p1\", \"url\": \"http://example.com/\", \"ts\": \"2024-01-01T00:00:00Z\"}\n",
        ),
    )
    .unwrap();
    let wacz = dir.path().join("t.wacz");
    py_wacz(&[warc_path], Some(&pages), &wacz);
    let (code, report) = check(&wacz);
    assert_eq!(code, Some(0), "{report:#}");
    let once = dir.path().join("once.wacz");
    let at = (page_at + 8).to_string();
    mutate(&wacz, &once, &["flip-byte-fixed", "archive/t.warc", &at]);
    let twice = dir.path().join("twice.wacz");
    mutate(&once, &twice, &["flip-byte-fixed", "archive/t.warc", &(note_at + 3).to_string()]);
    let (code, report) = check(&twice);
    assert_eq!(code, Some(1), "{report:#}");
    let found = errors_of(&report, "WACZ-WARC-DIGEST");
    let at = |offset: u64, field: &str| {
        found.iter().any(|f| {
            f["member"] == "archive/t.warc"
                && f["offset"] == offset
                && f["message"].as_str().unwrap().starts_with(field)
        })
    };
    let resource = b"WARC/1.1\r\nWARC-Type: resource";
    let second = warc.windows(resource.len()).position(|w| w == resource).unwrap() as u64;
    assert!(at(0, "WARC-Block-Digest") && at(0, "WARC-Payload-Digest"), "{report:#}");
    assert!(at(second, "WARC-Block-Digest"), "{report:#}");
    assert_eq!(found.len(), 3, "{report:#}");
    // Besides: the resource's index digest (computed by py-wacz from its payload) is no
    // longer its payload's.
    let others: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] != "WACZ-WARC-DIGEST")
        .collect();
    assert!(others.iter().all(|f| f["rule"] == "WACZ-INDEX"), "{report:#}");
    assert!(py_wacz_accepts(&twice), "py-wacz reads no record digest");
    // warcio agrees, on the member as the ZIP holds it.
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&twice).unwrap()).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut zip.by_name("archive/t.warc").unwrap(), &mut bytes).unwrap();
    let member = dir.path().join("member.warc");
    std::fs::write(&member, bytes).unwrap();
    let o = Command::new(venv_bin("warcio")).arg("check").arg("-v").arg(&member).output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert_eq!(said.matches("digest failed").count(), 3, "{said}");
}
