//! PANDAS (HTTrack) instances become packages: the committed sample and the real mirror from
//! the National Library of Australia. Checked by the METS oracle, `webaip validate`, and
//! tests/oracle/check_package.py and check_pandas.py (warcio, html.parser, zlib: not webaip).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{Package, corpus, oracle_python, package, repo, sample};

/// Packages and checks the exit status (1: made, with findings such as refused files).
fn package_exiting(instance: &Path, out: &Path, extra: &[&str], code: i32) -> serde_json::Value {
    let opts = Package::new().json().schemas().args(extra);
    let run = package(opts, out, &[instance]).exited(code).run_json();
    assert_eq!(run["kind"], "pandas", "{run:#}");
    run["packages"][0].clone()
}

fn oracle(script: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle").join(script))
        .args(args)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "{script}: {v}");
    v
}

fn check_all(pkg: &Path, instance: &Path, offset_hours: &str) -> serde_json::Value {
    let (ok, text) = oracle_validate(&pkg.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&pkg.join("METS.xml"));
    oracle("check_package.py", &[pkg.to_str().unwrap()]);
    oracle(
        "check_pandas.py",
        &[
            pkg.to_str().unwrap(),
            instance.to_str().unwrap(),
            "--timezone-offset-hours",
            offset_hours,
        ],
    )
}

#[test]
fn the_sample_instance_becomes_a_package_with_links_made_absolute() {
    let instance = sample("pandas/40123/20040517-1412");
    for mode in ["full", "minimal"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pkg");
        let r = package_exiting(
            &instance,
            &out,
            &["--mode", mode, "--timezone", "Australia/Sydney"],
            0,
        );
        assert_eq!(r["instance"]["time"], "2004-05-17T04:12:00Z");
        assert_eq!(r["instance"]["pi"], "40123");
        let sources = &r["instance"]["url_sources"];
        assert_eq!(
            (
                sources["cache"].as_u64(),
                sources["new-txt"].as_u64(),
                sources["comment"].as_u64(),
                sources["layout"].as_u64()
            ),
            (Some(4), Some(1), Some(1), Some(1)),
            "{sources}"
        );
        assert_eq!(r["instance"]["guessed_urls"][0][0], "www.example.gov.au/misc/notes.txt");
        assert_eq!(r["rewrite"]["transformed"], 4);
        assert!(r["rewrite"]["links_to_outside"].as_u64().unwrap() >= 2);
        let checked = check_all(&out, &instance, "10");
        assert_eq!(checked["stats"]["rewritten"], 4);
        // Every rewritten page and stylesheet differs from its original only in URL values.
        assert_eq!(checked["stats"]["masked_identical"], 4, "{checked}");
        // The windows-1252 page keeps its bytes outside the links.
        let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
        assert!(
            mets.contains(
                "<premis:relationshipSubType>transformation</premis:relationshipSubType>"
            )
        );
        assert!(mets.contains("USE=\"Original\""));
        // A date that is the instance's, not the file's own, says so on its record (warcio
        // reads the record and the metadata record that says where the time came from).
        let script = r#"
import glob, json, sys
from warcio.archiveiterator import ArchiveIterator
marked, source = {}, {}
for p in sorted(glob.glob(sys.argv[1] + '/content/*.warc.gz')):
    for r in ArchiveIterator(open(p, 'rb')):
        h = r.rec_headers
        if r.rec_type == 'resource':
            marked[h.get_header('X-Webaip-Mirror-Path')] = h.get_header('X-Webaip-Date-Source')
        elif r.rec_type == 'metadata':
            f = dict(l.split(': ', 1) for l in r.content_stream().read().decode().splitlines())
            source[f['mirror-path']] = f['capture-time-source']
print(json.dumps([marked, source]))
"#;
        let o = Command::new(oracle_python())
            .args(["-c", script, out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let (marked, source) = (v[0].as_object().unwrap(), &v[1]);
        assert_eq!(marked.len(), 7, "{v}");
        for (path, mark) in marked {
            let from_instance = source[path] == "instance directory name";
            assert_eq!(mark.as_str() == Some("instance directory name"), from_instance, "{v}");
            assert_eq!(mark.is_null(), !from_instance, "{v}");
        }
        assert!(marked.values().any(|m| !m.is_null()), "{v}");
        // The URL guessed from the layout is a quirk of the instance, in the package's log.
        let quirks: serde_json::Value = serde_json::from_slice(
            &std::fs::read(out.join("logs/webaip/pandas.quirks.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(quirks["counts"]["url-from-layout"], 1, "{quirks}");
        assert_eq!(quirks["quirks"][0]["file"], "www.example.gov.au/misc/notes.txt");
    }
}

#[test]
fn the_real_nla_mirror_recovers_urls_and_dates_from_its_cache() {
    let dir = tempfile::tempdir().unwrap();
    let unzip = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(corpus().join("mirror/pandas4-httrack-testcrawl.zip"))
        .arg(dir.path().join("mirror"))
        .output()
        .unwrap();
    assert!(unzip.status.success());
    let instance = dir.path().join("mirror/12345/20210223-0954");
    let out = dir.path().join("pkg");
    let r = package_exiting(&instance, &out, &["--mode", "full"], 0);
    assert_eq!(r["instance"]["url_sources"]["cache"], 5, "{}", r["instance"]);
    assert_eq!(r["instance"]["capture_from_cache"], 5);
    let checked = check_all(&out, &instance, "0");
    assert_eq!(checked["stats"]["cache_checked"], 5);
    assert!(checked["stats"]["rewritten"].as_u64().unwrap() >= 3);
    assert_eq!(checked["stats"]["masked_identical"], checked["stats"]["rewritten"], "{checked}");
    // A title directory holding the instance: one package per instance.
    let several = dir.path().join("per-instance");
    let o = Package::new().quiet().schemas().run(&several, &dir.path().join("mirror/12345"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(several.join("20210223-0954/METS.xml").exists());
}

#[test]
fn hostile_names_and_links_are_handled_without_writing_outside() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let instance = dir.path().join("input/777/20200101-0000");
    let host = instance.join("www.hostile.example");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(
        host.join("index.html"),
        b"<a href=\"../../../../etc/passwd\">x</a><a href=\"empty.html\">e</a>",
    )
    .unwrap();
    std::fs::write(host.join("empty.html"), b"").unwrap();
    std::fs::write(host.join("ctl\u{1}name.txt"), b"control character in the name").unwrap();
    std::fs::write(host.join(std::ffi::OsStr::from_bytes(b"latin1-\xe9.txt")), b"not UTF-8 name")
        .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", host.join("passwd.txt")).unwrap();
    let out = dir.path().join("pkg");
    // A refused file is a finding: the package is made, the exit status says so.
    let r = package_exiting(&instance, &out, &["--mode", "full"], 1);
    let refused = r["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0][0].as_str().unwrap().ends_with("passwd.txt"));
    assert_eq!(r["captures"], 4);
    let (ok, text) = oracle_validate(&out.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&out.join("METS.xml"));
    oracle("check_package.py", &[out.to_str().unwrap()]);
    let mut names: Vec<PathBuf> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    assert_eq!(
        names,
        vec![dir.path().join("input"), out.clone()],
        "nothing written beside the package"
    );
    let warc = std::fs::read_dir(out.join("content")).unwrap().next().unwrap().unwrap().path();
    let mut text = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(warc).unwrap()),
        &mut text,
    )
    .unwrap();
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.contains("WARC-Target-URI: http://www.hostile.example/latin1-%E9.txt"),
        "non-UTF-8 name escaped"
    );
    assert!(
        text.contains("WARC-Target-URI: http://www.hostile.example/ctl%01name.txt"),
        "control character escaped"
    );
}
