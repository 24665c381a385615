//! Virus checks against a real clamd started by scripts/clamd-local.sh: infected payloads
//! end up in viral/ and not in content/, with the events, outcomes, agent and relationships
//! P5.5 asks for; faults (no daemon, a daemon killed mid-run, a payload over clamd's limit)
//! are said plainly and never leave a package that claims what did not happen.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{
    Package, gen_arc, oracle_python, package, repo, sample, schemas, webaip, webaip_under,
};

/// The EICAR test string, assembled at run time so no file of the repository holds it whole.
fn eicar() -> Vec<u8> {
    let a = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-";
    let b = "STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";
    format!("{a}{b}").into_bytes()
}

/// A clamd instance a test uses. Tests started by this module share an instance by name; the
/// last one to drop its `Daemon` stops it (also when the test failed), so the suite leaves no
/// daemon of its own running.
pub(crate) struct Daemon {
    /// unix:PATH
    pub(crate) addr: String,
    /// tcp:127.0.0.1:PORT
    tcp: String,
    pid: String,
    name: String,
}

/// Tests holding each named instance.
fn users() -> &'static Mutex<HashMap<String, usize>> {
    static USERS: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    USERS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn daemon_dir(name: &str) -> String {
    format!("/tmp/webaip-clamd-test-{name}")
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let mut users = users().lock().unwrap_or_else(|p| p.into_inner());
        let n = users.entry(self.name.clone()).or_insert(1);
        *n -= 1;
        if *n == 0 {
            let _ = Command::new("bash")
                .arg(repo().join("scripts/clamd-local.sh"))
                .arg("stop")
                .env("WEBAIP_CLAMD_DIR", daemon_dir(&self.name))
                .output();
        }
    }
}

/// Starts (or reuses) a clamd instance of scripts/clamd-local.sh in its own directory.
pub(crate) fn daemon(name: &str, port: u16, stream_max: &str) -> Daemon {
    daemon_with(name, port, &[("CLAMD_STREAM_MAX", stream_max)])
}

/// The same, with other settings of clamd-local.sh (each set of settings in its own `name`:
/// a running daemon is reused as it is).
fn daemon_with(name: &str, port: u16, settings: &[(&str, &str)]) -> Daemon {
    // Held while starting, so a test that drops the last user cannot stop a daemon another
    // test is starting.
    let mut users = users().lock().unwrap_or_else(|p| p.into_inner());
    let start = || {
        Command::new("bash")
            .arg(repo().join("scripts/clamd-local.sh"))
            .env("WEBAIP_CLAMD_DIR", daemon_dir(name))
            .env("WEBAIP_CLAMD_PORT", port.to_string())
            .envs(settings.iter().copied())
            .output()
            .expect("clamd-local.sh runs")
    };
    // A daemon stopped by the test before may still be releasing its socket and port: a start
    // that fails is tried again after a pause.
    let mut out = start();
    for _ in 0..3 {
        if out.status.success() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(2));
        out = start();
    }
    assert!(
        out.status.success(),
        "clamd-local.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let vars: HashMap<String, String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    *users.entry(name.to_string()).or_insert(0) += 1;
    Daemon {
        addr: vars["WEBAIP_CLAMD"].clone(),
        tcp: vars["CLAMD_TCP"].clone(),
        pid: vars["CLAMD_PID"].clone(),
        name: name.to_string(),
    }
}

/// `package --clamd CLAMD --json --mode full --schemas ... EXTRA`.
fn package_run(clamd: &str, extra: &[&str]) -> Package {
    Package::clamd(clamd).json().mode("full").schemas().args(extra)
}

/// `package --clamd CLAMD --json --mode full --schemas ... EXTRA --out OUT INPUT`.
fn package_args(clamd: &str, input: &Path, out: &Path, extra: &[&str]) -> Vec<String> {
    package_run(clamd, extra).argv(out, &[input])
}

/// Record URIs per WARC file of the package, read with warcio.
fn warc_uris(pkg: &Path) -> HashMap<String, Vec<String>> {
    let script = "import glob,json,sys\nfrom warcio.archiveiterator import ArchiveIterator\nout={}\nfor fn in sorted(glob.glob(sys.argv[1]+'/*/*.warc.gz')):\n    out[fn.split(sys.argv[1]+'/')[1]]=[r.rec_headers.get_header('WARC-Target-URI') or '' for r in ArchiveIterator(open(fn,'rb')) if r.rec_type in ('response','resource')]\nprint(json.dumps(out))";
    let o =
        Command::new(oracle_python()).args(["-c", script, pkg.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn write_arc(path: &Path, records: &[(&str, &[u8])]) {
    let mut out = b"filedesc://x.arc 0.0.0.0 20240101000000 text/plain 77\n1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n\n".to_vec();
    for (url, body) in records {
        let mut block = format!("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        block.extend_from_slice(body);
        out.extend(
            format!("{url} 192.0.2.1 20240101000001 application/octet-stream {}\n", block.len())
                .as_bytes(),
        );
        out.extend(block);
        out.push(b'\n');
    }
    std::fs::write(path, out).unwrap();
}

/// The ARC at `plain` as an `.arc.gz` at `gz`, one member per record (Python's gzip at
/// zlib's level 6: madler zlib, which `unmigrate` can reproduce).
fn gzip_per_record(plain: &Path, gz: &Path) {
    let script = "import sys, gzip, re\n\
        data = open(sys.argv[1], 'rb').read()\n\
        out, pos = b'', 0\n\
        while pos < len(data):\n\
        \x20   line_end = data.index(b'\\n', pos)\n\
        \x20   n = int(data[pos:line_end].split(b' ')[-1])\n\
        \x20   end = line_end + 1 + n + 1\n\
        \x20   out += gzip.compress(data[pos:end], compresslevel=6, mtime=0)\n\
        \x20   pos = end\n\
        open(sys.argv[2], 'wb').write(out)\n";
    let o =
        Command::new(oracle_python()).arg("-c").arg(script).arg(plain).arg(gz).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn assert_valid_package(pkg: &Path) -> String {
    let (ok, text) = oracle_validate(&pkg.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&pkg.join("METS.xml"));
    let check = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_package.py"))
        .arg(pkg)
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
    std::fs::read_to_string(pkg.join("METS.xml")).unwrap()
}

/// ARCs whose infected record went to the viral container are given back byte for byte from
/// the package (content and viral containers merged), plain and gzip alike.
#[test]
fn an_arc_with_a_quarantined_record_is_given_back_whole() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let arcs = dir.path().join("job/arcs");
    std::fs::create_dir_all(&arcs).unwrap();
    let plain = arcs.join("IAH-20240101000000-00000-eicar.arc");
    let body = b"<html>a page long enough to be compressed at all, a page long enough</html>";
    write_arc(
        &plain,
        &[
            ("http://e.org/eicar.com", &eicar()),
            ("http://e.org/between.html", body),
            ("http://e.org/again.com", &eicar()),
            ("http://e.org/after.html", b"<p>after</p>"),
        ],
    );
    let gz = arcs.join("IAH-20240101000000-00001-eicar.arc.gz");
    gzip_per_record(&plain, &gz);
    let out = dir.path().join("pkg");
    let o = package(package_run(&d.addr, &[]), &out, &[&dir.path().join("job")]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(r["scan"]["infected"], 4);
    let back = dir.path().join("back");
    let o = webaip(&["unmigrate", "--json", "-o", back.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    for arc in [&plain, &gz] {
        let name = arc.file_name().unwrap();
        assert!(
            std::fs::read(back.join(name)).unwrap() == std::fs::read(arc).unwrap(),
            "{} is not given back byte for byte",
            name.to_string_lossy()
        );
    }
    // The same from the content container alone: the quarantined records are missing.
    let content = out.join("content/IAH-20240101000000-00000-eicar.warc.gz");
    let alone = dir.path().join("alone");
    let o = webaip(&["unmigrate", "-q", "-o", alone.to_str().unwrap(), content.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!alone.join(plain.file_name().unwrap()).exists(), "an incomplete ARC was written");
}

#[test]
fn an_infected_arc_payload_is_quarantined_and_described() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("job/arcs")).unwrap();
    let arc = dir.path().join("job/arcs/IAH-20240101000000-00000-eicar.arc");
    write_arc(
        &arc,
        &[
            ("http://e.org/clean.com", b"a clean twin of the same size, or near it....."),
            ("http://e.org/eicar.com", &eicar()),
            ("http://e.org/after.html", b"<p>after</p>"),
        ],
    );
    let out = dir.path().join("pkg");
    let o = package(package_run(&d.addr, &[]), &out, &[&dir.path().join("job")]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(r["scan"]["infected"], 1);
    assert_eq!(r["scan"]["not_scanned"], 0);
    let uris = warc_uris(&out);
    let content = &uris["content/IAH-20240101000000-00000-eicar.warc.gz"];
    assert!(
        content.contains(&"http://e.org/clean.com".to_string())
            && content.contains(&"http://e.org/after.html".to_string())
    );
    assert!(
        !content.contains(&"http://e.org/eicar.com".to_string()),
        "infected payload still in content/"
    );
    assert_eq!(
        uris["viral/IAH-20240101000000-00000-eicar.viral.warc.gz"],
        vec!["http://e.org/eicar.com".to_string()]
    );
    let mets = assert_valid_package(&out);
    assert!(mets.contains("USE=\"ViralFiles\""));
    assert!(mets.contains("<premis:eventOutcome>viral, failed but forced</premis:eventOutcome>"));
    assert!(mets.contains("<premis:eventOutcomeDetailNote>Webaip.Test.EICAR"));
    assert!(mets.contains("<premis:eventOutcome>no virus detected</premis:eventOutcome>"));
    assert_eq!(
        mets.matches("<premis:agentName>ClamAV (clamd)</premis:agentName>").count(),
        1,
        "the scanner agent is written once"
    );
    assert!(mets.contains("<premis:relationshipSubType>migration</premis:relationshipSubType>"));
    // `webaip scan` on the package finds exactly the quarantined record.
    let s = webaip(&["scan", "--json", "--clamd", &d.addr, out.to_str().unwrap()]);
    assert_eq!(s.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v}");
    assert!(findings[0]["file"].as_str().unwrap().contains("/viral/"));
    assert_eq!(findings[0]["verdict"], "INFECTED");
}

/// `webaip scan` of a package made without scanning: small blocks scanned in parallel batches,
/// a large one streamed, findings in file order at the offsets warcio gives the records.
#[test]
fn scan_names_every_infected_record_by_offset_in_file_order() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let arc = dir.path().join("IAH-20240101000000-00000-mixed.arc");
    let mut big = vec![b'z'; 5 << 20];
    big.extend_from_slice(&eicar());
    let small: Vec<Vec<u8>> = (0..40).map(|i| format!("page {i}").into_bytes()).collect();
    let mut records: Vec<(String, Vec<u8>)> = small
        .iter()
        .enumerate()
        .map(|(i, b)| (format!("http://e.org/{i}.html"), b.clone()))
        .collect();
    records.insert(10, ("http://e.org/big.bin".into(), big));
    records.insert(30, ("http://e.org/eicar.com".into(), eicar()));
    let refs: Vec<(&str, &[u8])> =
        records.iter().map(|(u, b)| (u.as_str(), b.as_slice())).collect();
    write_arc(&arc, &refs);
    let out = dir.path().join("pkg");
    let o = Package::new().quiet().run(&out, &arc);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = webaip(&["scan", "--json", "--clamd", &d.addr, out.to_str().unwrap()]);
    assert_eq!(s.status.code(), Some(1), "{}", String::from_utf8_lossy(&s.stderr));
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let findings = v["findings"].as_array().unwrap();
    // The offsets warcio gives the two infected records.
    let script = "import glob,json,sys\nfrom warcio.archiveiterator import ArchiveIterator\nfn=glob.glob(sys.argv[1]+'/content/*.warc.gz')[0]\nit=ArchiveIterator(open(fn,'rb'))\nout=[]\nfor r in it:\n    if (r.rec_headers.get_header('WARC-Target-URI') or '').endswith(('big.bin','eicar.com')) and r.rec_type=='response':\n        out.append(it.get_record_offset())\nprint(json.dumps(out))";
    let w =
        Command::new(oracle_python()).args(["-c", script, out.to_str().unwrap()]).output().unwrap();
    assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
    let offsets: Vec<u64> = serde_json::from_slice(&w.stdout).unwrap();
    assert_eq!(offsets.len(), 2);
    let found: Vec<u64> = findings.iter().map(|f| f["offset"].as_u64().unwrap()).collect();
    assert_eq!(found, offsets, "{v}");
    assert!(findings.iter().all(|f| f["verdict"] == "INFECTED"), "{v}");
    assert!(v["scanned"].as_u64().unwrap() >= 42, "{v}");
}

#[test]
fn an_infected_pandas_file_is_quarantined_as_harvested() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("555/20240101-1200/www.e.org");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(
        host.join("index.html"),
        b"<a href=\"eicar.com\">x</a> <a href=\"clean.txt\">y</a>",
    )
    .unwrap();
    std::fs::write(host.join("eicar.com"), eicar()).unwrap();
    std::fs::write(host.join("clean.txt"), b"clean twin").unwrap();
    let out = dir.path().join("pkg");
    let o =
        package(package_run(&d.addr, &[]), &out, &[&dir.path().join("555/20240101-1200")]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::json_of(&o.stdout)["packages"].clone();
    assert_eq!(r[0]["scan"]["infected"], 1);
    let uris = warc_uris(&out);
    let content: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("content/")).flat_map(|(_, v)| v).collect();
    assert!(content.iter().any(|u| u.ends_with("/clean.txt")));
    assert!(!content.iter().any(|u| u.ends_with("/eicar.com")), "infected file in content/");
    let viral: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("viral/")).flat_map(|(_, v)| v).collect();
    assert_eq!(viral.len(), 1);
    assert!(viral[0].ends_with("/eicar.com"));
    let mets = assert_valid_package(&out);
    assert!(mets.contains("<premis:eventOutcome>viral, failed but forced</premis:eventOutcome>"));
    assert!(
        mets.contains("<premis:relationshipSubType>transformation</premis:relationshipSubType>")
    );
}

#[test]
fn clean_inputs_get_no_virus_detected_on_every_container() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pkg");
    let o = package(package_run(&d.addr, &[]), &out, &[&sample("heritrix-job")]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mets = assert_valid_package(&out);
    assert_eq!(
        mets.matches("<premis:eventOutcome>no virus detected</premis:eventOutcome>").count(),
        2,
        "one per container"
    );
    assert!(!mets.contains("ViralFiles"));
}

#[test]
fn a_wrong_socket_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pkg");
    let o = webaip(&[
        "package",
        "--clamd",
        "unix:/nonexistent/clamd.sock",
        "--out",
        out.to_str().unwrap(),
        sample("heritrix-job").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does not answer"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    let none = webaip(&[
        "package",
        "--out",
        out.to_str().unwrap(),
        sample("heritrix-job").to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&none.stderr).contains("no clamd to scan with"));
}

/// A payload over clamd's limits is "not scanned", with clamd's reason, whichever way it was
/// sent: over TCP (INSTREAM) the limit is `StreamMaxLength`, over the Unix socket (FILDES) it
/// is `MaxFileSize`, reported through `AlertExceedsMax`.
#[test]
fn a_payload_over_clamds_limits_is_recorded_as_not_scanned() {
    let d = daemon_with("limits", 3325, &[("CLAMD_STREAM_MAX", "1K"), ("CLAMD_MAX_FILE", "1K")]);
    for (addr, reason) in
        [(&d.tcp, "size limit"), (&d.addr, "Heuristics.Limits.Exceeded.MaxFileSize")]
    {
        let dir = tempfile::tempdir().unwrap();
        let arc = dir.path().join("IAH-20240101000000-00000-big.arc");
        write_arc(
            &arc,
            &[("http://e.org/big.bin", &vec![b'a'; 8192]), ("http://e.org/small.txt", b"fits")],
        );
        let out = dir.path().join("pkg");
        let o = package(package_run(addr, &[]), &out, &[&arc]).output;
        assert_eq!(
            o.status.code(),
            Some(1),
            "{addr}: not scanned is a finding: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
        assert_eq!(r["scan"]["not_scanned"], 1, "{addr}: {}", r["scan"]);
        assert!(
            r["scan"]["unscanned"][0][2].as_str().unwrap().contains(reason),
            "{addr}: {}",
            r["scan"]
        );
        let mets = assert_valid_package(&out);
        assert!(mets.contains("<premis:eventOutcome>not scanned</premis:eventOutcome>"));
        // validate (and so audit) reports the unscanned payload by its object, with the reason.
        let notes = assert_webaip_valid(&out.join("METS.xml"));
        assert_eq!(notes.len(), 1, "{addr}: {notes:#?}");
        assert!(notes[0].message.contains("#urn:uuid:"), "{notes:#?}");
        assert!(notes[0].message.contains(reason), "{notes:#?}");
    }
}

/// A mirror page clamd cannot scan (over its limit) whose links are rewritten: the not-scanned
/// event is said of both bytestreams, the harvested one in original/ and the rewritten one in
/// content/ (it was dropped for rewritten files), and validate reports it.
#[test]
fn a_rewritten_page_that_could_not_be_scanned_says_so_of_both_bytestreams() {
    let d = daemon_with("limits", 3325, &[("CLAMD_STREAM_MAX", "1K"), ("CLAMD_MAX_FILE", "1K")]);
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("557/20240101-1200/www.e.org");
    std::fs::create_dir_all(&host).unwrap();
    let mut page = b"<a href=\"small.html\">x</a>".to_vec();
    page.extend(std::iter::repeat_n(b' ', 4096));
    std::fs::write(host.join("index.html"), &page).unwrap();
    std::fs::write(host.join("small.html"), b"<p>fits</p>").unwrap();
    let out = dir.path().join("pkg");
    let o =
        package(package_run(&d.addr, &[]), &out, &[&dir.path().join("557/20240101-1200")]).output;
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::json_of(&o.stdout)["packages"].clone();
    assert_eq!(r[0]["scan"]["not_scanned"], 1, "{}", r[0]["scan"]);
    assert_eq!(r[0]["rewrite"]["transformed"], 1, "{}", r[0]);
    let mets = assert_valid_package(&out);
    // One not-scanned event naming both objects.
    let event = mets
        .split("<premis:event>")
        .find(|e| e.contains("<premis:eventOutcome>not scanned</premis:eventOutcome>"))
        .expect("a not-scanned event");
    for group in ["content/", "original/"] {
        let named = format!("{group}pandas-557-20240101-1200");
        assert!(event.contains(&named), "{group}: {event}");
    }
    let notes = assert_webaip_valid(&out.join("METS.xml"));
    assert!(
        notes.iter().any(|n| n.message.contains("2 objects") && n.message.contains("not scanned")),
        "{notes:#?}"
    );
}

/// In-memory payloads go over pooled sessions (FILDES on the Unix socket, INSTREAM over TCP),
/// streamed ones over a connection each: all give clamd's verdict on the same bytes, and a
/// session clamd has closed for idleness is replaced, not an error.
#[test]
fn every_transport_gives_the_same_verdicts_and_stale_sessions_are_replaced() {
    use webaip::internals::{Clamd, ScanResult};
    let d = daemon_with("idle", 3324, &[("CLAMD_IDLE_TIMEOUT", "1")]);
    // EICAR alone, and inside 3 MiB (more than one INSTREAM chunk), and clean twins.
    let mut big = vec![b'x'; 3 << 20];
    big.extend_from_slice(&eicar());
    big.extend_from_slice(&vec![b'y'; 1 << 20]);
    let mut big_clean = big.clone();
    let at = 3 << 20;
    big_clean[at] = b'#';
    let cases: [(&[u8], bool); 5] =
        [(b"hello", false), (&eicar(), true), (&big, true), (&big_clean, false), (b"", false)];
    for addr in [&d.addr, &d.tcp] {
        let clamd = Clamd::new(addr.parse().unwrap());
        for round in 0..2 {
            for (bytes, infected) in cases {
                let expected = |v: &ScanResult| match v {
                    ScanResult::Infected(sig) => infected && sig.contains("EICAR"),
                    ScanResult::Clean => !infected,
                    ScanResult::NotScanned(_) => false,
                };
                let pooled = clamd.scan_bytes(bytes).unwrap();
                assert!(expected(&pooled), "{addr} pooled, {} bytes: {pooled:?}", bytes.len());
                let streamed = clamd.scan(bytes, bytes.len() as u64).unwrap();
                assert!(
                    expected(&streamed),
                    "{addr} streamed, {} bytes: {streamed:?}",
                    bytes.len()
                );
            }
            if round == 0 {
                // clamd closes the pooled sessions (IdleTimeout 1 s); the next scans reconnect.
                std::thread::sleep(std::time::Duration::from_millis(2500));
            }
        }
    }
}

/// A generated 30 MB crawl ARC: long enough a run to interrupt clamd during it.
fn crawl_arc_30m(dir: &Path) -> std::path::PathBuf {
    let arc = dir.join("IAH-20240315103000-00000-big.arc.gz");
    gen_arc("bench", &arc, &["--size", "30M"]);
    arc
}

#[test]
fn clamd_killed_during_a_run_fails_it_without_a_package() {
    let d = daemon("victim", 3323, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let arc = crawl_arc_30m(dir.path());
    let out = dir.path().join("pkg");
    let child =
        Package::clamd(&d.addr).args(&["-q", "-j", "1"]).command(&out, &arc).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    Command::new("kill").arg("-9").arg(&d.pid).status().unwrap();
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(2), "the run must fail");
    assert!(!out.exists(), "no package after clamd died");
}

/// A clamd that stops answering (SIGSTOP) mid-run: the run gives up after --clamd-timeout,
/// once, with a message saying so, and leaves no package.
#[test]
fn clamd_hanging_during_a_run_fails_it_after_the_timeout() {
    let d = daemon("hang", 3326, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let arc = crawl_arc_30m(dir.path());
    hanging_before_the_run_is_said_alike(&d, &arc, dir.path());
    let out = dir.path().join("pkg");
    let child = Package::clamd(&d.addr)
        .args(&["-q", "--clamd-timeout", "3"])
        .command(&out, &arc)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    Command::new("kill").args(["-STOP", &d.pid]).status().unwrap();
    let started = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    let waited = started.elapsed();
    Command::new("kill").args(["-CONT", &d.pid]).status().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "the run must fail: {stderr}");
    assert!(stderr.contains("no answer within 3 s"), "{stderr}");
    assert!(!out.exists(), "no package after clamd hung");
    // One timeout (3 s), not one per retry or per payload.
    assert!(waited < std::time::Duration::from_secs(8), "gave up after {waited:?}");
}

/// A clamd already hung when the run starts (it accepts connections, the kernel queues them,
/// but answers nothing) fails the run with the same words as one that hangs mid-run.
fn hanging_before_the_run_is_said_alike(d: &Daemon, arc: &Path, dir: &Path) {
    let out = dir.join("pkg-before");
    Command::new("kill").args(["-STOP", &d.pid]).status().unwrap();
    let o =
        Package::clamd(&d.addr).args(&["-q", "--clamd-timeout", "3"]).command(&out, arc).output();
    Command::new("kill").args(["-CONT", &d.pid]).status().unwrap();
    let o = o.unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "the run must fail: {stderr}");
    assert!(stderr.contains("no answer within 3 s"), "{stderr}");
    assert!(!out.exists(), "no package when clamd hung before the run");
}

#[test]
fn a_cleaner_copy_that_scans_clean_goes_to_content_as_viral_cleaned() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("556/20240101-1200/www.e.org");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("index.html"), b"<a href=\"eicar.com\">x</a>").unwrap();
    std::fs::write(host.join("eicar.com"), eicar()).unwrap();
    // A "cleaner" that breaks the test signature.
    let cleaner = dir.path().join("clean.sh");
    std::fs::write(&cleaner, "tr 'E' 'e' < \"$1\" > \"$2\"\n").unwrap();
    let out = dir.path().join("pkg");
    let cmd = format!("sh {}", cleaner.display());
    let instance = dir.path().join("556/20240101-1200");
    let o = package(package_run(&d.addr, &["--cleaner", &cmd]), &out, &[&instance]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::json_of(&o.stdout)["packages"].clone();
    assert_eq!(r[0]["scan"]["infected"], 1);
    assert_eq!(r[0]["scan"]["cleaned"], 1);
    let uris = warc_uris(&out);
    let content: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("content/")).flat_map(|(_, v)| v).collect();
    assert!(content.iter().any(|u| u.ends_with("/eicar.com")), "the cleaned copy is in content/");
    let viral: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("viral/")).flat_map(|(_, v)| v).collect();
    assert!(viral.iter().any(|u| u.ends_with("/eicar.com")), "the original stays in viral/");
    let mets = assert_valid_package(&out);
    assert!(mets.contains("<premis:eventOutcome>viral, cleaned</premis:eventOutcome>"));
    assert!(mets.contains("<premis:relationshipSubType>cleanedFile</premis:relationshipSubType>"));
}

/// A cleaner that fails, or whose copy still holds the virus, makes no cleaned copy: the
/// report says which record, where it stays and why (a mirror's capture here; ARC and WARC
/// records in the hanging-cleaner test).
#[test]
fn a_cleaner_that_fails_is_reported_with_the_record_it_failed_on() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("556/20240101-1200/www.e.org");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("eicar.com"), eicar()).unwrap();
    let instance = dir.path().join("556/20240101-1200");
    for (script, why) in [
        ("exit 3\n", "the cleaner failed (exit status: 3)"),
        ("cp \"$1\" \"$2\"\n", "the cleaned copy is still infected ("),
    ] {
        let cleaner = dir.path().join("clean.sh");
        std::fs::write(&cleaner, script).unwrap();
        let out = dir.path().join("pkg");
        let cmd = format!("sh {}", cleaner.display());
        let o = package(package_run(&d.addr, &["--cleaner", &cmd, "--force"]), &out, &[&instance])
            .output;
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = crate::util::json_of(&o.stdout)["packages"].clone();
        let scan = &r[0]["scan"];
        assert_eq!((scan["infected"].as_u64(), scan["cleaned"].as_u64()), (Some(1), Some(0)));
        let not_cleaned = scan["not_cleaned"].as_array().unwrap();
        assert_eq!(not_cleaned.len(), 1, "{scan}");
        assert!(not_cleaned[0][0].as_str().unwrap().starts_with("viral/"), "{scan}");
        assert!(not_cleaned[0][1].as_str().unwrap().ends_with("eicar.com"), "{scan}");
        assert!(not_cleaned[0][2].as_str().unwrap().starts_with(why), "{scan}");
        let mets = assert_valid_package(&out);
        assert!(!mets.contains("viral, cleaned"), "no cleaned copy claimed");
    }
}

#[test]
fn a_cleaned_arc_record_is_appended_to_content_and_points_at_its_original() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let arc = dir.path().join("IAH-20240101000000-00000-clean.arc");
    write_arc(
        &arc,
        &[
            ("http://e.org/a.txt", b"first"),
            ("http://e.org/eicar.com", &eicar()),
            ("http://e.org/b.txt", b"last"),
        ],
    );
    let cleaner = dir.path().join("clean.sh");
    std::fs::write(&cleaner, "tr 'E' 'e' < \"$1\" > \"$2\"\n").unwrap();
    let out = dir.path().join("pkg");
    let cmd = format!("sh {}", cleaner.display());
    let o = package(package_run(&d.addr, &["--cleaner", &cmd]), &out, &[&arc]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(
        (r["scan"]["infected"].as_u64(), r["scan"]["cleaned"].as_u64()),
        (Some(1), Some(1)),
        "{}",
        r["scan"]
    );
    let uris = warc_uris(&out);
    assert_eq!(
        uris["content/IAH-20240101000000-00000-clean.warc.gz"]
            .iter()
            .filter(|u| u.ends_with("/eicar.com"))
            .count(),
        1,
        "one cleaned copy in content/"
    );
    assert_eq!(
        uris["viral/IAH-20240101000000-00000-clean.viral.warc.gz"],
        vec!["http://e.org/eicar.com".to_string()]
    );
    let mets = assert_valid_package(&out);
    assert!(mets.contains("<premis:eventOutcome>viral, cleaned</premis:eventOutcome>"));
    assert!(mets.contains("<premis:relationshipSubType>cleanedFile</premis:relationshipSubType>"));
}

/// A clamd that cannot take descriptors (built without fd passing, or confined): the first
/// FILDES is refused, and that payload and every later one go by INSTREAM, with clamd's
/// verdicts. A fake daemon speaks the protocol, so the refusal is certain.
#[test]
fn a_clamd_that_refuses_fildes_gets_instream_instead() {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use webaip::internals::{Clamd, ScanResult};

    fn read_command(c: &mut impl Read) -> Option<String> {
        let mut cmd = Vec::new();
        let mut b = [0u8; 1];
        loop {
            if c.read(&mut b).ok()? == 0 {
                return None;
            }
            if b[0] == 0 {
                return Some(String::from_utf8_lossy(&cmd).into_owned());
            }
            cmd.push(b[0]);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("fake.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    let (fildes, instream) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (f, i) = (fildes.clone(), instream.clone());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { return };
            let (f, i) = (f.clone(), i.clone());
            std::thread::spawn(move || {
                if read_command(&mut c).as_deref() != Some("zIDSESSION") {
                    return;
                }
                let mut id = 0;
                while let Some(cmd) = read_command(&mut c) {
                    id += 1;
                    if cmd == "zFILDES" {
                        f.fetch_add(1, Ordering::SeqCst);
                        let mut dummy = [0u8; 1];
                        let _ = c.read(&mut dummy);
                        let _ = c.write_all(
                            format!("{id}: FILDES support not compiled in. ERROR\0").as_bytes(),
                        );
                        return;
                    }
                    assert_eq!(cmd, "zINSTREAM");
                    i.fetch_add(1, Ordering::SeqCst);
                    loop {
                        let mut len = [0u8; 4];
                        c.read_exact(&mut len).unwrap();
                        let n = u32::from_be_bytes(len) as usize;
                        if n == 0 {
                            break;
                        }
                        let mut data = vec![0u8; n];
                        c.read_exact(&mut data).unwrap();
                    }
                    c.write_all(format!("{id}: stream: OK\0").as_bytes()).unwrap();
                }
            });
        }
    });
    let clamd = Clamd::new(format!("unix:{}", sock.display()).parse().unwrap());
    for _ in 0..3 {
        assert_eq!(clamd.scan_bytes(b"payload").unwrap(), ScanResult::Clean);
    }
    assert_eq!(fildes.load(Ordering::SeqCst), 1, "FILDES is tried once");
    assert_eq!(instream.load(Ordering::SeqCst), 3, "every payload is then sent by INSTREAM");
}

/// A described page whose capture is infected: verdicts are known before the METS is written,
/// so its div points at the quarantined bytestream in viral/ (the report says so), and a page
/// after it in the same ARC points at its record at the offset it has once the infected one has
/// left the container; an independent reader checks both.
#[test]
fn a_described_page_whose_capture_is_infected_points_into_viral() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("job/arcs")).unwrap();
    let arc = dir.path().join("job/arcs/IAH-20240101000000-00000-eicar.arc");
    write_arc(
        &arc,
        &[
            ("http://e.org/eicar.com", &eicar()),
            ("http://e.org/after.html", b"<html><title>After</title></html>"),
        ],
    );
    let meta = dir.path().join("m.toml");
    std::fs::write(
        &meta,
        "[[page]]\nurl = \"http://e.org/eicar.com\"\nkind = \"associated-object\"\n\
         part_of = \"http://e.org/after.html\"\ntitle = \"Test file\"\n\
         [[page]]\nurl = \"http://e.org/after.html\"\n",
    )
    .unwrap();
    let out = dir.path().join("pkg");
    let s = schemas().display().to_string();
    let o = webaip(&[
        "package",
        "--json",
        "--clamd",
        &d.addr,
        "--schemas",
        &s,
        "--metadata",
        meta.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        dir.path().join("job").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(r["scan"]["infected"], 1);
    assert_eq!(r["entities"]["viral"][0], "http://e.org/eicar.com");
    assert_valid_package(&out);
    let v = crate::entities::entities(&out);
    let list = v["entities"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{v}");
    for e in list {
        assert_eq!(e["mods_url"], e["warc_uri"], "{e}");
        assert_eq!(e["payload_sha512_matches"], true, "{e}");
    }
    assert_eq!(list[0]["group"], "ViralFiles");
    assert!(list[0]["container"].as_str().unwrap().starts_with("viral/"));
    assert_eq!(list[1]["group"], "DigitalManifestation");
    // Served as application/octet-stream: not read as HTML, so no title is made up.
    assert!(list[1]["mods_title"].is_null(), "{v}");
    assert_eq!(list[1]["label"], "http://e.org/after.html");
}

/// A harvest read as captures (NEDLIB): verdicts are known before a record is written, so an
/// infected payload goes straight to viral/ and no container is rewritten; a payload identical
/// to one already scanned in the run (same SHA-512) takes its verdict without a second scan,
/// and the report counts them.
#[test]
fn capture_sources_scan_before_writing_and_reuse_verdicts_of_identical_payloads() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let day = dir.path().join("harvest/2003-7-20/0000");
    std::fs::create_dir_all(&day).unwrap();
    let pair = |name: &str, url: &str, body: &[u8]| {
        let meta = format!(
            "HTTP/1.1 200 OK\r\nDate: Sun, 20 Jul 2003 10:00:00 GMT\r\nContent-Type: application/octet-stream\r\n\
             Content-Length: {n}\r\nArc-Url: {url}\r\nArc-Length: {n}\r\n\r\n",
            n = body.len()
        );
        std::fs::write(day.join(format!("{name}.meta")), meta).unwrap();
        std::fs::write(day.join(name), body).unwrap();
    };
    let page = b"<html><title>Same page</title></html>\n";
    pair("00000000000000000000000000000001", "http://e.no:80/a.html", page);
    pair("00000000000000000000000000000002", "http://e.no:80/b.html", page);
    pair("00000000000000000000000000000003", "http://e.no:80/eicar1.com", &eicar());
    pair("00000000000000000000000000000004", "http://e.no:80/eicar2.com", &eicar());
    pair("00000000000000000000000000000005", "http://e.no:80/c.html", b"<p>other</p>");
    let out = dir.path().join("pkg");
    let o = package(package_run(&d.addr, &[]), &out, &[&dir.path().join("harvest")]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(r["shape"], "nedlib");
    // Three distinct payloads went to clamd; two were identical to one already scanned.
    assert_eq!(r["scan"]["scanned"], 3, "{r}");
    assert_eq!(r["scan"]["reused"], 2, "{r}");
    assert_eq!(r["scan"]["infected"], 2, "{r}");
    let uris = warc_uris(&out);
    let viral: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("viral/")).flat_map(|(_, v)| v).collect();
    assert_eq!(viral.len(), 2, "{uris:?}");
    assert!(viral.iter().all(|u| u.contains("eicar")), "{uris:?}");
    let content: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("content/")).flat_map(|(_, v)| v).collect();
    assert_eq!(content.len(), 3, "{uris:?}");
    let mets = assert_valid_package(&out);
    assert!(mets.contains("<premis:eventOutcome>viral, failed but forced</premis:eventOutcome>"));
    let a = webaip(&["audit", "--deep", out.to_str().unwrap()]);
    assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stdout));
}

/// The cleaner works for every source of captures, not only mirrors: a NEDLIB payload found
/// infected goes to viral/ as harvested (its HTTP header with it), and the cleaner's copy,
/// rescanned, goes to content/ as a resource at the same URL, related to its original.
#[test]
fn a_capture_source_cleaned_copy_goes_to_content_related_to_its_viral_original() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let day = dir.path().join("harvest/2003-7-21/0000");
    std::fs::create_dir_all(&day).unwrap();
    let body = eicar();
    let meta = format!(
        "HTTP/1.1 200 OK\r\nDate: Mon, 21 Jul 2003 10:00:00 GMT\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {n}\r\nArc-Url: http://e.no:80/eicar.com\r\nArc-Length: {n}\r\n\r\n",
        n = body.len()
    );
    std::fs::write(day.join("00000000000000000000000000000009.meta"), meta).unwrap();
    std::fs::write(day.join("00000000000000000000000000000009"), &body).unwrap();
    // The cleaner notes which file it was given: a copy, never the harvest's own file.
    let cleaner = dir.path().join("clean.sh");
    let given = dir.path().join("given.txt");
    std::fs::write(
        &cleaner,
        format!("echo \"$1\" >> {}\ntr 'E' 'e' < \"$1\" > \"$2\"\n", given.display()),
    )
    .unwrap();
    let cmd = format!("sh {}", cleaner.display());
    let out = dir.path().join("pkg");
    let o =
        package(package_run(&d.addr, &["--cleaner", &cmd]), &out, &[&dir.path().join("harvest")])
            .output;
    let given = std::fs::read_to_string(&given).unwrap();
    assert_eq!(given.lines().count(), 1, "{given}");
    assert!(!given.contains("harvest/"), "the cleaner was given the harvest's file: {given}");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::json_of(&o.stdout)["packages"].clone();
    let r = if r.is_array() { r[0].clone() } else { r };
    assert_eq!(r["shape"], "nedlib", "{r}");
    assert_eq!(r["scan"]["infected"], 1, "{r}");
    assert_eq!(r["scan"]["cleaned"], 1, "{r}");
    // The cleaned copy is the cleaner's output, byte for byte, as warcio reads it.
    let cleaned: Vec<u8> = body.iter().map(|&b| if b == b'E' { b'e' } else { b }).collect();
    let uris = warc_uris(&out);
    let in_content: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("content/")).flat_map(|(_, v)| v).collect();
    assert!(in_content.iter().any(|u| u.ends_with("/eicar.com")), "{uris:?}");
    let in_viral: Vec<&String> =
        uris.iter().filter(|(k, _)| k.starts_with("viral/")).flat_map(|(_, v)| v).collect();
    assert!(in_viral.iter().any(|u| u.ends_with("/eicar.com")), "{uris:?}");
    // It names its original in viral/ by record id, as Heritrix cleaned copies do.
    let py = "import glob,sys\nfrom warcio.archiveiterator import ArchiveIterator\n\
         ids={}\n\
         for f in sorted(glob.glob(sys.argv[1]+'/viral/*.warc.gz')):\n\
         \tfor r in ArchiveIterator(open(f,'rb')):\n\
         \t\tif r.rec_type=='response': ids['viral']=r.rec_headers.get_header('WARC-Record-ID')\n\
         for f in sorted(glob.glob(sys.argv[1]+'/content/*.warc.gz')):\n\
         \tfor r in ArchiveIterator(open(f,'rb')):\n\
         \t\tif r.rec_type=='resource':\n\
         \t\t\tassert r.rec_headers.get_header('X-Webaip-Cleaned-From')==ids['viral'], ids\n\
         \t\t\tsys.stdout.buffer.write(r.content_stream().read())\n";
    let w = Command::new(oracle_python()).args(["-c", py, out.to_str().unwrap()]).output().unwrap();
    assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
    assert_eq!(w.stdout, cleaned);
    let mets = assert_valid_package(&out);
    assert!(mets.contains("<premis:eventOutcome>viral, cleaned</premis:eventOutcome>"));
    assert!(mets.contains("<premis:relationshipSubType>cleanedFile</premis:relationshipSubType>"));
    let a = webaip(&["audit", "--deep", out.to_str().unwrap()]);
    assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stdout));
}

/// One WARC record (an HTTP response), as bytes.
fn warc_response(uri: &str, body: &[u8], n: usize) -> Vec<u8> {
    let mut block = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    block.extend_from_slice(body);
    let mut rec = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{n:012}>\r\nWARC-Date: 2024-01-01T00:00:0{n}Z\r\nWARC-Target-URI: {uri}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    rec.extend(block);
    rec.extend_from_slice(b"\r\n\r\n");
    rec
}

/// Traces `webaip` with strace and returns every line that opens, renames or truncates a file
/// under the package's content/ or viral/ folders.
fn container_syscalls(args: &[&str], trace: &Path) -> (Output, Vec<String>) {
    let mut strace = Command::new("strace");
    strace
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=open,openat,openat2,rename,renameat,renameat2,truncate,ftruncate",
            "-o",
        ])
        .arg(trace);
    let o = webaip_under(strace)
        .args(args)
        .output()
        .expect("strace runs (scripts/setup-test-env.sh installs it)");
    let log = std::fs::read_to_string(trace).unwrap();
    let containers = |l: &str| l.contains("content/") || l.contains("viral/");
    // The descriptors of the containers (a truncate names its file by descriptor only; the
    // memfds clamd is handed payloads through are truncated too, and are no container).
    let fds: Vec<String> = log
        .lines()
        .filter(|l| containers(l))
        .filter_map(|l| l.rsplit("= ").next())
        .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect();
    let lines = log
        .lines()
        .filter(|l| {
            containers(l)
                || l.split_once("ftruncate(").is_some_and(|(_, rest)| {
                    fds.iter().any(|fd| rest.starts_with(&format!("{fd},")))
                })
        })
        .map(str::to_string)
        .collect();
    (o, lines)
}

/// A copied WARC (gzip per record, and uncompressed): its infected record goes, byte-exact, to
/// the viral twin before anything is written, the rest to content byte-exact, an identical
/// payload takes the verdict given once; no container is opened for writing twice, renamed or
/// truncated (strace), and the package passes the oracle, validate and audit --deep.
#[test]
fn an_infected_record_of_a_copied_warc_goes_to_viral_before_anything_is_written() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    // A payload too large to hold for the scan (over 4 MiB) is streamed to clamd from the
    // queue the input waits in, and routed like the others.
    let mut big = vec![b'z'; 5 << 20];
    big.extend_from_slice(&eicar());
    // A record with a blank line before it (tolerated): its payload is where its range says,
    // so the virus at the very end of a payload streamed to clamd is seen.
    let mut shifted = b"\r\n".to_vec();
    let mut big2 = vec![b'y'; 5 << 20];
    big2.extend_from_slice(&eicar());
    shifted.extend(warc_response("http://e.org/shifted.bin", &big2, 7));
    // A warcinfo record is a payload like any other: scanned, and moved when infected.
    let mut warcinfo = format!(
        "WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000006>\r\nWARC-Date: 2024-01-01T00:00:06Z\r\nContent-Type: application/warc-fields\r\nContent-Length: {}\r\n\r\n",
        eicar().len()
    )
    .into_bytes();
    warcinfo.extend(eicar());
    warcinfo.extend_from_slice(b"\r\n\r\n");
    let recs = [
        warc_response("http://e.org/a.txt", b"a clean payload", 1),
        warc_response("http://e.org/eicar.com", &eicar(), 2),
        warc_response("http://e.org/copy-of-a.txt", b"a clean payload", 3),
        warc_response("http://e.org/big.bin", &big, 4),
        warc_response("http://e.org/b.txt", b"last", 5),
        warcinfo,
        shifted,
    ];
    for gzip in [true, false] {
        let name = if gzip { "crawl.warc.gz" } else { "crawl.warc" };
        let input = dir.path().join(name);
        let members: Vec<Vec<u8>> = recs
            .iter()
            .map(|r| {
                if gzip {
                    let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
                    std::io::Write::write_all(&mut e, r).unwrap();
                    e.finish().unwrap()
                } else {
                    r.clone()
                }
            })
            .collect();
        std::fs::write(&input, members.concat()).unwrap();
        let out = dir.path().join(format!("pkg-{gzip}"));
        let trace = dir.path().join(format!("trace-{gzip}"));
        let args = package_args(&d.addr, &input, &out, &[]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (o, calls) = container_syscalls(&args, &trace);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
        assert_eq!(r["scan"]["infected"], 4, "{}", r["scan"]);
        // The copy of a.txt, and the warcinfo's payload (the EICAR string again).
        assert_eq!(r["scan"]["reused"], 2, "{}", r["scan"]);
        assert_eq!(r["scan"]["scanned"], 5, "{}", r["scan"]);
        assert_eq!(r["containers"][0]["bytes_read"], members.concat().len(), "read once");
        // Byte-exact on both sides.
        let content = std::fs::read(out.join("content").join(name)).unwrap();
        let expected: Vec<u8> = [&members[0][..], &members[2][..], &members[4][..]].concat();
        assert_eq!(content, expected, "content/ holds the other records, byte for byte");
        let viral_name = if gzip { "crawl.viral.warc.gz" } else { "crawl.viral.warc" };
        // The report says where each infected record is: in the viral twin.
        let places: Vec<&str> = r["scan"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f[0].as_str().unwrap())
            .collect();
        assert_eq!(places, vec![format!("viral/{viral_name}"); 4], "{}", r["scan"]);
        let viral = std::fs::read(out.join("viral").join(viral_name)).unwrap();
        let infected =
            [&members[1][..], &members[3][..], &members[5][..], &members[6][..]].concat();
        assert!(viral.ends_with(&infected), "the infected records, byte-exact, in order");
        if gzip {
            // warcio does not read the record with a blank line before it in its gzip member
            // (it takes the line for a record of its own, with no type it lists): the twin is
            // checked byte for byte above.
            let uris = warc_uris(&out);
            assert_eq!(
                uris[&format!("viral/{viral_name}")],
                vec!["http://e.org/eicar.com", "http://e.org/big.bin"]
            );
        }
        assert_valid_package(&out);
        let a = webaip(&["audit", "--deep", out.to_str().unwrap()]);
        assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stdout));
        // Each container opened for writing once, never renamed or truncated.
        let writes = |f: &str| {
            calls
                .iter()
                .filter(|l| l.contains(f) && (l.contains("O_WRONLY") || l.contains("O_RDWR")))
                .count()
        };
        assert_eq!(writes(&format!("content/{name}\"")), 1, "{calls:#?}");
        assert_eq!(writes(&format!("viral/{viral_name}\"")), 1, "{calls:#?}");
        let changed: Vec<&String> =
            calls.iter().filter(|l| l.contains("rename") || l.contains("truncate")).collect();
        assert!(changed.is_empty(), "a container renamed or truncated: {changed:#?}");
    }
    // An ARC: migrated records are scanned before they are written too.
    let arc = dir.path().join("IAH-20240101000000-00000-x.arc");
    write_arc(
        &arc,
        &[
            ("http://e.org/a", b"first"),
            ("http://e.org/eicar.com", &eicar()),
            ("http://e.org/a-again", b"first"),
        ],
    );
    let out = dir.path().join("pkg-arc");
    let trace = dir.path().join("trace-arc");
    let args = ["package", "--json", "--clamd", &d.addr, "--out", out.to_str().unwrap()];
    let (o, calls) = container_syscalls(&[&args[..], &[arc.to_str().unwrap()]].concat(), &trace);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(r["scan"]["infected"], 1, "{}", r["scan"]);
    assert_eq!(r["scan"]["reused"], 1, "the second \"first\": {}", r["scan"]);
    let q = &r["containers"][0]["migration"]["quarantine"];
    assert_eq!(q["records"], 1, "{r}");
    // The report names the containers where they are now, not where they were built.
    let output = r["containers"][0]["migration"]["output"].as_str().unwrap();
    for path in [output, q["path"].as_str().unwrap()] {
        assert!(Path::new(path).starts_with(&out) && Path::new(path).is_file(), "{path}: {r}");
    }
    let conservation = &r["containers"][0]["migration"]["conservation"];
    assert_eq!(conservation["conserved"], true, "{conservation}");
    assert_eq!(conservation["payload_bytes_in"], conservation["payload_bytes_out"]);
    // The migration writes through the package's container sinks: each container opened for
    // writing once, in place, never renamed or truncated.
    let writes = |f: &str| {
        calls
            .iter()
            .filter(|l| l.contains(f) && (l.contains("O_WRONLY") || l.contains("O_RDWR")))
            .count()
    };
    let stem = "IAH-20240101000000-00000-x";
    assert_eq!(writes(&format!("content/{stem}.warc.gz\"")), 1, "{calls:#?}");
    assert_eq!(writes(&format!("viral/{stem}.viral.warc.gz\"")), 1, "{calls:#?}");
    let changed: Vec<&String> = calls
        .iter()
        .filter(|l| l.contains("truncate") || (l.contains("rename") && l.contains("warc")))
        .collect();
    assert!(changed.is_empty(), "a container renamed or truncated: {changed:#?}");
    let a = webaip(&["audit", "--deep", out.to_str().unwrap()]);
    assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stdout));
}

/// A WARC gzipped as one stream: its records cannot be moved one by one, but every payload is
/// still scanned. An infected one cannot be quarantined alone and the profile allows none in
/// content: the run fails saying which record, where, and how to repackage, and leaves no
/// package (it used to say "no virus detected" without having scanned any of them). The
/// same file recompressed one member per record packages, the infected record in viral/.
#[test]
fn an_infected_record_sharing_a_gzip_member_fails_the_run_with_the_way_out() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let recs = [
        warc_response("http://e.org/a.txt", b"a clean payload", 1),
        warc_response("http://e.org/eicar.com", &eicar(), 2),
        warc_response("http://e.org/b.txt", b"last", 3),
    ];
    let gzip = |b: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        std::io::Write::write_all(&mut e, b).unwrap();
        e.finish().unwrap()
    };
    let input = dir.path().join("one-stream.warc.gz");
    std::fs::write(&input, gzip(&recs.concat())).unwrap();
    let out = dir.path().join("pkg");
    let o = package(package_run(&d.addr, &[]), &out, &[&input]).output;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("urn:uuid:00000000-0000-4000-8000-000000000002"), "{err}");
    assert!(err.contains("offset 0") && err.contains("Webaip.Test.EICAR"), "{err}");
    assert!(err.contains("one gzip member per record"), "{err}");
    assert!(!out.exists(), "no package");
    // One member per record: packaged, the infected record quarantined.
    let members: Vec<u8> = recs.iter().flat_map(|r| gzip(r)).collect();
    std::fs::write(&input, members).unwrap();
    let o = package(package_run(&d.addr, &[]), &out, &[&input]).output;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(r["scan"]["infected"], 1, "{}", r["scan"]);
    assert!(out.join("viral/one-stream.viral.warc.gz").is_file());
}

/// Several infected containers of one run, with a cleaner: a gzip WARC, an uncompressed WARC
/// and an ARC, each with an infected record. The cleaned copies land in content/ in each
/// container's own form (an uncompressed WARC gets an uncompressed record, not a gzip member
/// in its middle), the containers state the records they hold, `audit --deep` finds the
/// package intact, and a `--deterministic` run repeated gives the same bytes in every file
/// although the containers are scanned in parallel.
#[test]
fn infected_containers_with_a_cleaner_audit_intact_and_repeat_byte_for_byte() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    let recs = [
        warc_response("http://e.org/a.txt", b"a clean payload", 1),
        warc_response("http://e.org/eicar.com", &eicar(), 2),
        warc_response("http://e.org/b.txt", b"last", 3),
    ];
    let gz: Vec<u8> = recs
        .iter()
        .flat_map(|r| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
            std::io::Write::write_all(&mut e, r).unwrap();
            e.finish().unwrap()
        })
        .collect();
    std::fs::write(input.join("one.warc.gz"), gz).unwrap();
    std::fs::write(input.join("two.warc"), recs.concat()).unwrap();
    write_arc(
        &input.join("IAH-20240101000000-00000-x.arc"),
        &[("http://e.org/c", b"clean"), ("http://e.org/eicar2.com", &eicar())],
    );
    // Records too large to compress in memory go alone, between infected ones: the writer's
    // identifiers (the viral warcinfo, cleaned copies) must not depend on how far ahead the
    // ARC reader runs.
    let large: Vec<Vec<u8>> = (0..3u8).map(|i| vec![b'a' + i; 3 << 20]).collect();
    let infected: Vec<Vec<u8>> = (0..3u8).map(|i| [eicar(), vec![b'0' + i]].concat()).collect();
    write_arc(
        &input.join("IAH-20240101000000-00001-mixed.arc"),
        &[
            ("http://e.org/m0", &infected[0]),
            ("http://e.org/big0", &large[0]),
            ("http://e.org/m1", &infected[1]),
            ("http://e.org/big1", &large[1]),
            ("http://e.org/small", b"small"),
            ("http://e.org/m2", &infected[2]),
            ("http://e.org/big2", &large[2]),
        ],
    );
    let cleaner = dir.path().join("clean.sh");
    std::fs::write(&cleaner, "tr 'E' 'e' < \"$1\" > \"$2\"\n").unwrap();
    let cmd = format!("sh {}", cleaner.display());
    let files = |pkg: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(pkg)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(pkg).unwrap().display().to_string();
                (rel, std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let mut runs = Vec::new();
    for run in 0..3 {
        let out = dir.path().join(format!("pkg{run}"));
        let o =
            package(package_run(&d.addr, &["--cleaner", &cmd, "--deterministic"]), &out, &[&input])
                .output;
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
        assert_eq!(r["scan"]["infected"], 6, "{}", r["scan"]);
        assert_eq!(r["scan"]["cleaned"], 6, "{}", r["scan"]);
        assert_valid_package(&out);
        let a = webaip(&["audit", "--deep", out.to_str().unwrap()]);
        assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stdout));
        // The uncompressed WARC stays uncompressed, its cleaned copy included.
        let two = std::fs::read(out.join("content/two.warc")).unwrap();
        assert!(two.starts_with(b"WARC/1.1\r\n"), "uncompressed");
        assert!(!two.windows(2).any(|w| w == [0x1f, 0x8b]), "no gzip member inside");
        runs.push(files(&out));
    }
    let names: Vec<&String> = runs[0].iter().map(|(n, _)| n).collect();
    for other in &runs[1..] {
        assert_eq!(names, other.iter().map(|(n, _)| n).collect::<Vec<_>>());
    }
    for ((name, a), (_, b)) in runs.iter().skip(1).flat_map(|r| runs[0].iter().zip(r)) {
        assert!(a == b, "{name} differs between --deterministic runs");
    }
}

/// A payload clamd cannot scan in a WARC compressed as one stream: it is counted, and the
/// container's event says it has no event of its own (its record is not described one by
/// one), instead of claiming "each with its own event".
#[test]
fn an_unscanned_payload_in_a_shared_gzip_member_is_said_to_have_no_event_of_its_own() {
    let d = daemon_with("limits", 3325, &[("CLAMD_STREAM_MAX", "1K"), ("CLAMD_MAX_FILE", "1K")]);
    let dir = tempfile::tempdir().unwrap();
    let recs = [
        warc_response("http://e.org/a.txt", b"fits", 1),
        warc_response("http://e.org/big.bin", &vec![b'a'; 8192], 2),
    ];
    let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    std::io::Write::write_all(&mut e, &recs.concat()).unwrap();
    let input = dir.path().join("one-stream.warc.gz");
    std::fs::write(&input, e.finish().unwrap()).unwrap();
    let out = dir.path().join("pkg");
    let o = package(package_run(&d.addr, &[]), &out, &[&input]).output;
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&crate::util::json_of(&o.stdout));
    assert_eq!(r["scan"]["not_scanned"], 1, "{}", r["scan"]);
    let mets = assert_valid_package(&out);
    assert!(mets.contains("1 payload(s) not scanned in gzip members shared"), "{mets}");
    assert!(!mets.contains("each with its own event"), "{mets}");
}

/// A fake clamd on a Unix socket that answers PING and VERSION, takes a scan command and a
/// little of what follows, then stops reading without closing: a daemon hung mid-stream.
/// Returns its address (unix:PATH); the socket lives in `dir`.
fn clamd_that_stops_reading(dir: &Path) -> String {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    let sock = dir.join("hung.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { return };
            let mut cmd = Vec::new();
            let mut b = [0u8; 1];
            while c.read(&mut b).is_ok_and(|n| n == 1) && b[0] != 0 {
                cmd.push(b[0]);
            }
            match cmd.as_slice() {
                b"zPING" => drop(c.write_all(b"PONG\0")),
                b"zVERSION" => drop(c.write_all(b"ClamAV 1.0.0/27000/Mon Jan  1 00:00:00 2024\0")),
                _ => {
                    let mut some = [0u8; 65536];
                    let _ = c.read(&mut some);
                    held.push(c);
                }
            }
        }
    });
    format!("unix:{}", sock.display())
}

/// A clamd that stops reading while a large record is streamed to it: the write that cannot
/// go on is a silent clamd, said once as such ("no answer within N s"), naming the file, and
/// the run gives up after about one timeout, not one for the send and more for the reply and a
/// retry. Both an ARC (migrated) and a WARC (copied, its large payload streamed on its own).
#[test]
fn clamd_that_stops_reading_mid_stream_fails_the_run_after_one_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let addr = clamd_that_stops_reading(dir.path());
    // Larger than a payload held in memory, and than the socket buffers: streamed.
    let large: Vec<u8> = (0..12u32 << 20).map(|i| (i % 251) as u8).collect();
    let arc = dir.path().join("IAH-20240101000000-00000-large.arc");
    write_arc(&arc, &[("http://e.org/large.bin", &large)]);
    let warc = dir.path().join("large.warc");
    std::fs::write(&warc, warc_response("http://e.org/large.bin", &large, 1)).unwrap();
    for (input, name) in [(&arc, "IAH-20240101000000-00000-large.arc"), (&warc, "large.warc")] {
        let out = dir.path().join(format!("pkg-{name}"));
        let started = std::time::Instant::now();
        let o = Package::clamd(&addr).args(&["-q", "--clamd-timeout", "2"]).run(&out, input);
        let waited = started.elapsed();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "the run must fail: {stderr}");
        assert!(stderr.contains("no answer within 2 s"), "{stderr}");
        assert!(!stderr.contains("refused"), "{stderr}");
        assert_eq!(stderr.matches(name).count(), 1, "names the file once: {stderr}");
        // The record too: a copied WARC's by its id, an ARC's by its offset.
        let record = match name.ends_with(".warc") {
            true => "record urn:uuid:00000000-0000-4000-8000-000000000001: virus scan",
            false => "the ARC record at offset ",
        };
        assert!(stderr.contains(record), "names the record: {stderr}");
        assert!(!out.exists(), "no package after clamd hung");
        // Loose bound: one timeout plus the run's own work, well under the three or four it
        // took when the send's timeout was followed by a wait for the reply.
        assert!(waited < std::time::Duration::from_secs(5), "{name}: gave up after {waited:?}");
    }
}

/// A cleaner that hangs: stopped after --cleaner-timeout with what it started (its group),
/// the infected record stays quarantined with no cleaned copy claimed, the run goes on to a
/// valid package, and a warning names the record and the timeout. An ARC (migrated) and a WARC
/// (copied).
#[test]
fn a_cleaner_that_hangs_is_stopped_and_the_record_stays_quarantined() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let arc = dir.path().join("IAH-20240101000000-00000-hang.arc");
    write_arc(&arc, &[("http://e.org/a.txt", b"first"), ("http://e.org/eicar.com", &eicar())]);
    let warc = dir.path().join("hang.warc.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    std::io::Write::write_all(&mut gz, &warc_response("http://e.org/eicar.com", &eicar(), 7))
        .unwrap();
    std::fs::write(&warc, gz.finish().unwrap()).unwrap();
    let pids = dir.path().join("pids");
    let cleaner = dir.path().join("hang.sh");
    std::fs::write(&cleaner, format!("sleep 300 &\necho $! >> {}\nwait\n", pids.display()))
        .unwrap();
    let cmd = format!("sh {}", cleaner.display());
    for (input, record) in [(&arc, "urn:uuid:"), (&warc, "00000000-0000-4000-8000-000000000007")] {
        let out = dir.path().join(format!("pkg-{}", input.file_name().unwrap().to_str().unwrap()));
        let started = std::time::Instant::now();
        let o = package(
            package_run(&d.addr, &["--cleaner", &cmd, "--cleaner-timeout", "2"]),
            &out,
            &[input],
        )
        .output;
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{stderr}");
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "the run waited");
        let r = crate::util::json_of(&o.stdout)["packages"].clone();
        let scan = if r["scan"].is_null() { &r[0]["scan"] } else { &r["scan"] };
        assert_eq!((scan["infected"].as_u64(), scan["cleaned"].as_u64()), (Some(1), Some(0)));
        // The report says which record got no cleaned copy, where it is, and why.
        let not_cleaned = scan["not_cleaned"].as_array().unwrap();
        assert_eq!(not_cleaned.len(), 1, "{scan}");
        let [container, id, why] = [0, 1, 2].map(|i| not_cleaned[0][i].as_str().unwrap());
        assert!(container.starts_with("viral/") && id.contains(record), "{scan}");
        assert!(why.contains("within 2 s (--cleaner-timeout)"), "{why}");
        let uris = warc_uris(&out);
        let placed = |dir: &str| {
            uris.iter()
                .filter(|(k, _)| k.starts_with(dir))
                .flat_map(|(_, v)| v)
                .any(|u| u.ends_with("/eicar.com"))
        };
        assert!(!placed("content/"), "no cleaned copy in content/");
        assert!(placed("viral/"), "the original stays in viral/");
        let mets = assert_valid_package(&out);
        assert!(!mets.contains("viral, cleaned"), "no cleaned copy claimed");
    }
    // Every process the cleaner started was stopped with it.
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
        assert!(matches!(state, None | Some('Z')), "the cleaner's sleep {pid} still runs");
    }
}

/// A batch scans every item through one engine (its clamd sessions and scan threads made
/// once, not per item), and each package still says what was scanned for it alone: the METS
/// of a batch item is the one `package` alone makes of it.
#[test]
fn a_batch_scans_all_its_items_through_one_engine() {
    let d = daemon("main", 3321, "2000M");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    let items = ["nedlib", "kulturarw3", "pandas/40123/20040517-1412"];
    let lines: Vec<String> = items.iter().map(|i| sample(i).display().to_string()).collect();
    std::fs::write(&csv, lines.join("\n")).unwrap();
    let out = dir.path().join("out");
    let o = webaip(&[
        "batch",
        "run",
        "--deterministic",
        "--json",
        "-j",
        "2",
        "--clamd",
        &d.addr,
        "--out",
        out.to_str().unwrap(),
        csv.to_str().unwrap(),
    ]);
    let r = crate::util::report_of(&o, 0);
    assert_eq!(r["packaged"], 3, "{r}");
    assert_eq!(r["scan_engine_packages"], 3, "one engine scanned every package: {r}");
    let alone = dir.path().join("alone");
    let p = Package::clamd(&d.addr).json().deterministic().run(&alone, &sample("nedlib"));
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let batch_mets = std::fs::read(out.join("nedlib/METS.xml")).unwrap();
    assert!(batch_mets == std::fs::read(alone.join("METS.xml")).unwrap());
    assert!(String::from_utf8_lossy(&batch_mets).contains("ClamAV (clamd)"));
}
