//! `webaip identify`: files, folders, WARC records, WACZ files and packages the tests build,
//! identified by the binary and compared with siegfried (pygfried) on the same bytes; the CSV
//! read by Python's csv module has siegfried's `sf -csv` header; links and FIFOs are refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{Package, json_of, oracle_python, package, repo, webaip};

/// A 1x1 PNG (PNG 1.0 to siegfried: fmt/11).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\nIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82";
/// A 1x1 GIF 89a (fmt/4).
const GIF: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
/// A PDF 1.4 head and tail (fmt/18).
const PDF: &[u8] = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n";
/// Plain ASCII text (x-fmt/111, by its characters).
const TEXT: &[u8] = b"Nothing but words here, on two lines.\nThe second one.\n";

fn text(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn said(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The files of the format tests, written into `dir`.
fn formats_folder(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let files = [("a.png", PNG), ("b.gif", GIF), ("c.pdf", PDF), ("d.txt", TEXT)];
    files
        .iter()
        .map(|(name, bytes)| {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        })
        .collect()
}

/// The items of `identify --json PATH...`, exiting `code`.
fn items(args: &[&str], code: i32) -> Vec<serde_json::Value> {
    let mut all = vec!["identify", "--json"];
    all.extend_from_slice(args);
    let o = webaip(&all);
    assert_eq!(o.status.code(), Some(code), "{}", said(&o));
    let v = json_of(&o.stdout);
    assert!(v["signatures"].as_str().unwrap().contains("DROID signature file V"), "{v}");
    v["items"].as_array().unwrap().clone()
}

/// The PUIDs of an item's matches.
fn puids(item: &serde_json::Value) -> Vec<String> {
    let matches = item["matches"].as_array().unwrap();
    matches.iter().map(|m| m["id"].as_str().unwrap().to_string()).collect()
}

/// siegfried's one PUID for each file it names by its bytes (a byte or text match).
fn siegfried(files: &[PathBuf]) -> Vec<(String, String)> {
    let script = "import json, sys, pygfried\n\
        out = []\n\
        for p in sys.argv[1:]:\n\
        \x20   m = pygfried.identify(p, detailed=True)['files'][0]['matches']\n\
        \x20   out.append([p, m[0]['id'] if len(m) == 1 and ('byte match' in m[0]['basis'] or 'text match' in m[0]['basis']) else None])\n\
        print(json.dumps(out))\n";
    let o = Command::new(oracle_python()).arg("-c").arg(script).args(files).output().unwrap();
    assert!(o.status.success(), "{}", said(&o));
    let v: Vec<(String, Option<String>)> = serde_json::from_slice(&o.stdout).unwrap();
    v.into_iter().filter_map(|(p, id)| Some((p, id?))).collect()
}

#[test]
fn built_files_get_the_puids_siegfried_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let files = formats_folder(&tmp.path().join("f"));
    let items = items(&[text(&tmp.path().join("f"))], 0);
    let ours: Vec<(String, Vec<String>)> =
        items.iter().map(|i| (i["filename"].as_str().unwrap().to_string(), puids(i))).collect();
    let want = ["fmt/11", "fmt/4", "fmt/18", "x-fmt/111"];
    assert_eq!(ours.iter().map(|(_, p)| p.join(" ")).collect::<Vec<_>>(), want, "{items:#?}");
    // siegfried's words first, so that its readers match them; webaip's checks after them.
    let basis = items[3]["matches"][0]["basis"].as_str().unwrap();
    assert!(basis.starts_with("text match ASCII"), "{basis}");
    assert_eq!(items[0]["matches"][0]["mime"], "image/png");
    assert_eq!(items[0]["filesize"], PNG.len());
    assert!(items[0]["modified"].as_str().unwrap().ends_with('Z'), "{:?}", items[0]);
    let theirs = siegfried(&files);
    assert_eq!(theirs.len(), 4, "siegfried names each by its bytes: {theirs:?}");
    for (path, id) in theirs {
        let (_, ours) = ours.iter().find(|(name, _)| *name == path).expect("listed");
        assert_eq!(ours, &vec![id], "{path}");
    }
}

#[test]
fn links_and_fifos_in_a_folder_are_refused_and_said() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("f");
    formats_folder(&dir);
    std::os::unix::fs::symlink(dir.join("a.png"), dir.join("link.png")).unwrap();
    let fifo = std::ffi::CString::new(text(&dir.join("pipe"))).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // Text: one line per item, the refusals stated; exit 1 (a FIFO opened would hang here).
    let o = webaip(&["identify", text(&dir)]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = |name: &str| out.lines().find(|l| l.contains(name)).unwrap_or_default().to_string();
    assert!(
        line("link.png").starts_with("REFUSED: ")
            && line("link.png").contains("is a symbolic link"),
        "{out}"
    );
    assert!(line("pipe").starts_with("REFUSED: ") && line("pipe").contains("is a FIFO"), "{out}");
    assert!(line("a.png").contains("fmt/11 Portable Network Graphics 1.0 (byte match)"), "{out}");
    assert!(
        out.lines().last().unwrap().contains("6 item(s)") && out.contains("2 refused"),
        "{out}"
    );
    // Quiet: nothing on standard output, the refusals on standard error.
    let o = webaip(&["identify", "-q", text(&dir)]);
    assert_eq!((o.status.code(), o.stdout.len()), (Some(1), 0), "{}", said(&o));
    assert_eq!(String::from_utf8_lossy(&o.stderr).matches("refused").count(), 2, "{}", said(&o));
}

/// A WARC record of `kind` for `uri` holding `block`.
fn record(n: usize, kind: &str, uri: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-01-02T03:04:0{n}Z\r\n\
         WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-00000000000{n}>\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// An HTTP response block declaring `declared`.
fn http(declared: &str, body: &[u8]) -> Vec<u8> {
    let mut b = format!("HTTP/1.1 200 OK\r\nContent-Type: {declared}\r\n\r\n").into_bytes();
    b.extend_from_slice(body);
    b
}

/// A WARC of five captures (a PNG, a GIF declared as a JPEG, a PDF resource, text, an empty
/// response) and a request, which is no capture.
fn built_warc(path: &Path) -> Vec<usize> {
    let response = "application/http; msgtype=response";
    let records = [
        record(1, "response", "http://e.org/a.png", response, &http("image/png", PNG)),
        record(
            2,
            "request",
            "http://e.org/a.png",
            "application/http; msgtype=request",
            b"GET / HTTP/1.1\r\n\r\n",
        ),
        record(3, "response", "http://e.org/b.jpg", response, &http("image/jpeg", GIF)),
        record(4, "resource", "file:///c.pdf", "application/pdf", PDF),
        record(5, "response", "http://e.org/d", response, &http("text/plain", TEXT)),
        record(6, "response", "http://e.org/empty", response, &http("text/html", b"")),
    ];
    let mut offsets = Vec::new();
    let mut bytes = Vec::new();
    for r in records {
        offsets.push(bytes.len());
        bytes.extend_from_slice(&r);
    }
    std::fs::write(path, bytes).unwrap();
    offsets
}

#[test]
fn each_record_payload_of_a_warc_is_named_and_identified() {
    let tmp = tempfile::tempdir().unwrap();
    let warc = tmp.path().join("w.warc");
    let offsets = built_warc(&warc);
    let items = items(&[text(&warc)], 0);
    // The file itself, then five captures; the request is none.
    assert_eq!(items.len(), 6, "{items:#?}");
    assert_eq!(items[0]["filename"], text(&warc));
    let names: Vec<&str> = items[1..].iter().map(|i| i["filename"].as_str().unwrap()).collect();
    let w = text(&warc);
    assert_eq!(
        names,
        [
            format!("{w}#20240102030401/http://e.org/a.png"),
            format!("{w}#20240102030403/http://e.org/b.jpg"),
            format!("{w}#20240102030404/file:///c.pdf"),
            format!("{w}#20240102030405/http://e.org/d"),
            format!("{w}#20240102030406/http://e.org/empty"),
        ]
    );
    let got: Vec<String> = items[1..].iter().map(|i| puids(i).join(" ")).collect();
    assert_eq!(got, ["fmt/11", "fmt/4", "fmt/18", "x-fmt/111", "UNKNOWN"]);
    assert_eq!(items[1]["offset"], offsets[0]);
    assert_eq!(items[2]["offset"], offsets[2]);
    assert_eq!(items[1]["uri"], "http://e.org/a.png");
    assert_eq!(items[1]["filesize"], PNG.len());
    assert_eq!(items[1]["verdict"], "consistent");
    assert_eq!(items[2]["declared"], "image/jpeg");
    assert!(items[2]["verdict"].as_str().unwrap().starts_with("contradicted: declared image/jpeg"));
    assert_eq!(
        (&items[5]["status"], &items[5]["errors"]),
        (&"empty".into(), &"empty source".into())
    );
    assert_eq!(items[5]["modified"], "2024-01-02T03:04:06Z");
}

#[test]
fn the_csv_has_siegfrieds_columns_for_pythons_csv_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let warc = tmp.path().join("a,b.warc");
    built_warc(&warc);
    let csv = tmp.path().join("out.csv");
    let o = webaip(&["identify", "--csv", "-o", text(&csv), text(&warc)]);
    assert_eq!((o.status.code(), o.stdout.len()), (Some(0), 0), "{}", said(&o));
    let script =
        "import csv, json, sys\nprint(json.dumps(list(csv.reader(open(sys.argv[1], newline='')))))";
    let o = Command::new(oracle_python()).arg("-c").arg(script).arg(&csv).output().unwrap();
    assert!(o.status.success(), "{}", said(&o));
    let rows: Vec<Vec<String>> = serde_json::from_slice(&o.stdout).unwrap();
    let header =
        "filename,filesize,modified,errors,namespace,id,format,version,mime,class,basis,warning";
    assert_eq!(rows[0].join(","), header);
    assert!(rows.iter().all(|r| r.len() == 12), "{rows:?}");
    // The name holding a comma survives the quoting; one row per capture here (the WARC file
    // itself comes first, one row per format it matches).
    assert_eq!(rows[1][0], text(&warc));
    let records: Vec<&Vec<String>> = rows.iter().filter(|r| r[0].contains('#')).collect();
    assert_eq!(records.len(), 5, "{rows:?}");
    assert_eq!(records[0][0], format!("{}#20240102030401/http://e.org/a.png", text(&warc)));
    assert_eq!((records[0][4].as_str(), records[0][5].as_str()), ("pronom", "fmt/11"));
    assert_eq!(records[0][1], PNG.len().to_string());
    assert_eq!(records[0][2], "2024-01-02T03:04:01Z");
    assert_eq!((records[4][3].as_str(), records[4][5].as_str()), ("empty source", "UNKNOWN"));
    // Go's encoding/csv (sf's) ends rows with LF alone.
    assert!(!std::fs::read_to_string(&csv).unwrap().contains('\r'));
}

#[test]
fn a_broken_warc_is_said_with_its_offset_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let warc = tmp.path().join("cut.warc");
    built_warc(&warc);
    let bytes = std::fs::read(&warc).unwrap();
    // The third record's header is cut off in the middle of its first line.
    let cut = bytes.windows(8).enumerate().filter(|(_, w)| w == b"WARC/1.1").nth(2).unwrap().0;
    let mut broken = bytes[..cut].to_vec();
    broken.extend_from_slice(b"WARC/1.1\r\nWARC-Type: resp\x00\x00garbage");
    std::fs::write(&warc, &broken).unwrap();
    let png = tmp.path().join("after.png");
    std::fs::write(&png, PNG).unwrap();
    let items = items(&[text(&warc), text(&png)], 1);
    let failed: Vec<&serde_json::Value> =
        items.iter().filter(|i| i["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{items:#?}");
    let why = failed[0]["errors"].as_str().unwrap();
    assert!(why.contains("cut.warc") && why.contains(&cut.to_string()), "{why}");
    assert_eq!(puids(items.last().unwrap()), ["fmt/11"], "the run went on: {items:#?}");
}

#[test]
fn a_wacz_and_a_package_give_their_captures_payloads() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = t.join("pkg");
    package(Package::new().quiet().deterministic(), &pkg, &[&repo().join("samples/nedlib")])
        .succeeded();
    let wacz = t.join("p.wacz");
    let o = webaip(&["export", "wacz", "-q", text(&pkg), "-o", text(&wacz)]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));

    let of_package = items(&[text(&pkg)], 0);
    assert!(!of_package.is_empty());
    let container = format!("{}/content/", text(&pkg));
    for item in &of_package {
        let name = item["filename"].as_str().unwrap();
        assert!(name.starts_with(&container) && name.contains(".warc.gz#"), "{name}");
        assert!(item["uri"].is_string() && item["offset"].is_u64(), "{item}");
    }
    let of_wacz = items(&[text(&wacz)], 0);
    // The WACZ itself, then the same payloads with the same PUIDs, under its archive/ member.
    assert_eq!(of_wacz[0]["filename"], text(&wacz));
    assert_eq!(of_wacz.len(), of_package.len() + 1, "{of_wacz:#?}");
    let prefix = format!("{}#archive/", text(&wacz));
    for (w, p) in of_wacz[1..].iter().zip(&of_package) {
        let name = w["filename"].as_str().unwrap();
        assert!(name.starts_with(&prefix), "{name}");
        assert_eq!((&w["uri"], puids(w)), (&p["uri"], puids(p)));
    }
    let html = of_package.iter().filter(|i| puids(i).iter().any(|p| p.starts_with("fmt/"))).count();
    assert!(html > 0, "some payload matches a signature: {of_package:#?}");

    // Containers of infected payloads, kept apart in viral/, are the package's too.
    std::fs::create_dir(pkg.join("viral")).unwrap();
    let first = of_package[0]["filename"].as_str().unwrap().split('#').next().unwrap();
    std::fs::copy(first, pkg.join("viral/v.warc.gz")).unwrap();
    let with_viral = items(&[text(&pkg)], 0);
    let viral = format!("{}/viral/v.warc.gz#", text(&pkg));
    let in_viral =
        with_viral.iter().filter(|i| i["filename"].as_str().unwrap().starts_with(&viral));
    assert!(in_viral.count() > 0, "{with_viral:#?}");
    std::fs::remove_dir_all(pkg.join("viral")).unwrap();

    // A link among the containers breaks the package's layout: that is said (exit 1), the
    // link is refused, and every payload of the real containers is still identified.
    std::os::unix::fs::symlink(&wacz, pkg.join("content/zz-link.warc.gz")).unwrap();
    let broken = items(&[text(&pkg)], 1);
    let status = |s: &str| broken.iter().filter(|i| i["status"] == s).count();
    assert_eq!((status("failed"), status("refused")), (1, 1), "{broken:#?}");
    for p in &of_package {
        assert!(broken.iter().any(|b| b["uri"] == p["uri"] && puids(b) == puids(p)), "{p}");
    }
}

#[test]
fn a_truncated_record_is_identified_with_the_caveat_that_its_end_was_not_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let warc = tmp.path().join("cut.warc");
    let whole = record(
        1,
        "response",
        "http://e.org/a.png",
        "application/http; msgtype=response",
        &http("image/png", PNG),
    );
    // The same record stored cut short, as a crawler writes one it stopped reading.
    let cut_block = http("image/png", &PNG[..PNG.len() / 2]);
    let cut = record(
        2,
        "response",
        "http://e.org/b.png",
        "application/http; msgtype=response",
        &cut_block,
    );
    let head_end = cut.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 2;
    let mut truncated = cut[..head_end].to_vec();
    truncated.extend_from_slice(b"WARC-Truncated: length\r\n");
    truncated.extend_from_slice(&cut[head_end..]);
    std::fs::write(&warc, [whole, truncated].concat()).unwrap();
    let items = items(&[text(&warc)], 0);
    let warning = |i: usize| items[i]["matches"][0]["warning"].as_str().unwrap().to_string();
    assert!(!warning(1).contains("truncated"), "{items:#?}");
    assert!(warning(2).contains("the record is truncated (WARC-Truncated: length)"), "{items:#?}");
}
