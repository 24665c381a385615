//! `webaip package` end to end: the sample Heritrix job and a job built from a corpus ARC are
//! packaged; each METS passes the oracle and `webaip validate`; every byte range, payload and
//! manifest line is checked by Python's own gzip and hashlib (tests/oracle/check_package.py).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{Package, corpus, gen_arc, oracle_python, repo, sample_arg, schemas, webaip};

fn check_package(pkg: &Path) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_package.py"))
        .arg(pkg)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "package check failed: {v}");
    v
}

fn sample_job() -> String {
    sample_arg("heritrix-job")
}

fn sample_metadata() -> String {
    sample_arg("heritrix-job.metadata.toml")
}

#[test]
fn the_sample_job_becomes_a_valid_package_in_both_modes() {
    for mode in ["full", "minimal"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pkg");
        let r = Package::new()
            .json()
            .schemas()
            .args(&[
                "--mode",
                mode,
                "--metadata",
                &sample_metadata(),
                "--out",
                out.to_str().unwrap(),
                &sample_job(),
            ])
            .report_as_is();
        assert_eq!(r["shape"], "heritrix1");
        assert_eq!(r["mets_xsd_checked"], true);
        // The eight files of the job (the two ARCs' migration reports are the package's own).
        assert_eq!(r["logs"], 8);
        // Its containers, and none of the parts only sources of captures have.
        assert_eq!(r["containers"].as_array().unwrap().len(), 2, "{}", r["containers"]);
        assert!(r.get("captures").is_none() && r["instance"].is_null(), "{r}");
        assert_eq!(r["crawl_log"]["fetched"], 11);
        assert_eq!(r["crawl_log"]["fetched_without_record"], 0);
        assert_eq!(r["crawl_log"]["records_without_log_line"], 0);
        assert!(r["metadata_notes"].as_array().unwrap().is_empty(), "{}", r["metadata_notes"]);
        let mets = out.join("METS.xml");
        let (ok, text) = oracle_validate(&mets);
        assert!(ok, "{text}");
        // Packaged with --no-virus-check: validate says so, once.
        let notes = assert_webaip_valid(&mets);
        assert_eq!(notes.len(), 1, "{notes:#?}");
        assert!(notes[0].message.contains("no scanner was run"), "{notes:#?}");
        let checked = check_package(&out);
        if mode == "full" {
            // 17 WARC records (two ARCs, each ending with its rebuild record), less the two
            // warcinfo records; the empty 301 has no payload file.
            assert_eq!(checked["counts"]["records"], 15);
            assert_eq!(checked["counts"]["contents"], 14);
        } else {
            // Only the records of the three pages the metadata file describes ([[page]]).
            assert_eq!(checked["counts"]["records"], 3);
            assert_eq!(checked["counts"]["contents"], 3);
        }
        // Two containers, ten logs (two of them migration reports) and the METS.
        assert_eq!(checked["counts"]["manifest"], 13);
        let text = std::fs::read_to_string(&mets).unwrap();
        for expected in [
            "<mods:title>Example Heritage Society website</mods:title>",
            "<wr:embargoUntil>2027-01-01</wr:embargoUntil>",
            "<premis:relationshipSubType>migration</premis:relationshipSubType>",
            "<premis:eventOutcome>not scanned</premis:eventOutcome>",
            "xlink:href=\"logs/crawl.log\"",
            // The first capture (dns:, 10:30:01), not the filedesc (10:30:00): issue 25 item 4.
            "<mods:dateCaptured encoding=\"w3cdtf\" point=\"start\" keyDate=\"yes\">2024-03-15T10:30:01Z</mods:dateCaptured>",
        ] {
            assert!(text.contains(expected), "{mode}: METS lacks {expected}");
        }
    }
}

#[test]
fn a_job_around_a_corpus_arc_reports_crawl_log_discrepancies() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    std::fs::create_dir_all(job.join("arcs")).unwrap();
    std::fs::create_dir_all(job.join("logs")).unwrap();
    let arc = corpus().join("arc/jwat-IAH-20080430204825-00000-blackbook.arc.gz");
    std::fs::copy(&arc, job.join("arcs").join(arc.file_name().unwrap())).unwrap();
    std::fs::write(job.join("order.xml"), "<crawl-order/>\n").unwrap();
    // A crawl.log that lists two URIs of the ARC and one that no record holds.
    let lines = [
        "2008-04-30T20:48:26.000Z     1         59 dns:www.archive.org P http://www.archive.org/ text/dns #001 20080430204826000+5 - - -",
        "2008-04-30T20:48:27.000Z   200       1234 http://www.archive.org/robots.txt P http://www.archive.org/ text/plain #001 20080430204827000+5 - - -",
        "2008-04-30T20:48:28.000Z   200       4321 http://www.archive.org/never-archived.html L http://www.archive.org/ text/html #002 20080430204828000+5 - - -",
    ];
    std::fs::write(job.join("logs/crawl.log"), lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("pkg");
    let r = Package::new()
        .json()
        .schemas()
        .args(&[
            "--mode",
            "full",
            "--deterministic",
            "--out",
            out.to_str().unwrap(),
            job.to_str().unwrap(),
        ])
        .report_as_is();
    let c = &r["crawl_log"];
    assert_eq!(c["fetched_without_record"], 1, "{c}");
    assert_eq!(
        c["fetched_without_record_examples"][0],
        "http://www.archive.org/never-archived.html"
    );
    assert!(c["records_without_log_line"].as_u64().unwrap() > 250, "{c}");
    assert!(r["missing"].as_array().unwrap().iter().any(|m| m == "seeds.txt"));
    // No metadata file: what was guessed is said.
    assert!(
        r["metadata_notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("no rights"))
    );
    let (ok, text) = oracle_validate(&out.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&out.join("METS.xml"));
    let checked = check_package(&out);
    assert!(checked["counts"]["records"].as_u64().unwrap() >= 300);
}

#[test]
fn deterministic_runs_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        Package::new()
            .json()
            .schemas()
            .args(&[
                "--deterministic",
                "--mode",
                "full",
                "--metadata",
                &sample_metadata(),
                "--out",
                out.to_str().unwrap(),
                &sample_job(),
            ])
            .report_as_is();
    }
    for f in [
        "METS.xml",
        "manifest-sha512.txt",
        "content/IAH-20240315103000-00000-crawler.example.warc.gz",
    ] {
        assert!(
            std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

#[test]
fn an_existing_package_is_kept_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pkg");
    let s = schemas().display().to_string();
    let base =
        ["package", "--no-virus-check", "-q", "--schemas", &s, "--out", out.to_str().unwrap()];
    assert!(webaip(&[&base[..], &[&sample_job()]].concat()).status.success());
    let again = webaip(&[&base[..], &[&sample_job()]].concat());
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert!(webaip(&[&base[..], &["--force", &sample_job()]].concat()).status.success());
    assert_eq!(leftovers(dir.path()), vec![out.clone()], "no temporary directory left");
    assert!(
        !webaip(&["package", "--out", out.to_str().unwrap(), &sample_job()]).status.success(),
        "no scanning without --no-virus-check"
    );
}

#[test]
fn a_failure_half_way_leaves_no_package() {
    let dir = tempfile::tempdir().unwrap();
    // A good ARC and a WARC whose last record is cut off: the WARC check fails after the ARC
    // has been migrated into the package directory.
    let good = corpus().join("arc/jwat-IAH-20080430204825-00000-blackbook.arc.gz");
    let warc = std::fs::read(corpus().join("warc/warcio-example.warc.gz")).unwrap();
    let bad = dir.path().join("broken.warc");
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&warc[..]), &mut plain)
        .unwrap();
    std::fs::write(&bad, &plain[..plain.len() - 40]).unwrap();
    let out = dir.path().join("pkg");
    let o = Package::new().quiet().run_all(&out, &[&good, &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("broken.warc"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let left = leftovers(dir.path());
    assert_eq!(left, vec![bad], "nothing but the input is left");
}

#[test]
fn a_killed_run_leaves_nothing_that_looks_like_a_package() {
    let dir = tempfile::tempdir().unwrap();
    let arc = dir.path().join("IAH-20240315103000-00000-big.arc.gz");
    gen_arc("bench", &arc, &["--size", "40M"]);
    let out = dir.path().join("pkg");
    let mut child = Package::new().args(&["-q", "-j", "1"]).command(&out, &arc).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let finished_early = child.try_wait().unwrap().is_some();
    child.kill().ok();
    child.wait().unwrap();
    assert!(!finished_early, "the run ended before it could be killed; make the input larger");
    assert!(!out.exists(), "a killed run left {}", out.display());
    for p in leftovers(dir.path()) {
        if p == arc {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".pkg.") && name.ends_with(".partial"), "unexpected {name}");
        assert!(!p.join("manifest-sha512.txt").exists() && !p.join("METS.xml").exists());
    }
}

#[test]
fn a_heritrix3_job_with_warcs_is_checked_and_copied_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job3");
    let launch = job.join("20240315103000");
    std::fs::create_dir_all(launch.join("warcs")).unwrap();
    std::fs::create_dir_all(launch.join("logs")).unwrap();
    std::fs::create_dir_all(launch.join("reports")).unwrap();
    std::fs::write(job.join("crawler-beans.cxml"), "<beans/>\n").unwrap();
    std::fs::write(launch.join("reports/crawl-report.txt"), "Crawl Name: job3\n").unwrap();
    let warc = corpus().join("warc/warcio-example.warc.gz");
    let copied = launch.join("warcs/warcio-example.warc.gz");
    std::fs::copy(&warc, &copied).unwrap();
    let out = dir.path().join("pkg");
    let r = Package::new()
        .json()
        .schemas()
        .args(&["--mode", "full", "--out", out.to_str().unwrap(), job.to_str().unwrap()])
        .report_as_is();
    assert_eq!(r["shape"], "heritrix3");
    assert_eq!(r["containers"][0]["action"], "checked and copied");
    assert!(r["containers"][0]["migration"].is_null());
    assert_eq!(
        std::fs::read(out.join("content/warcio-example.warc.gz")).unwrap(),
        std::fs::read(&warc).unwrap()
    );
    assert!(out.join("logs/crawler-beans.cxml").exists());
    assert!(out.join("logs/20240315103000/reports/crawl-report.txt").exists());
    let (ok, text) = oracle_validate(&out.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&out.join("METS.xml"));
    let checked = check_package(&out);
    assert!(checked["counts"]["records"].as_u64().unwrap() >= 4, "{checked}");
    let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
    assert!(
        !mets.contains(">migration</premis:eventType>"),
        "a copied WARC has no migration event"
    );
}

/// A copied WARC is read once per run: the report counts the bytes read from it, which equal
/// its size, and the package's copy is the input byte for byte (compressed record by record,
/// and uncompressed; also a WARC whose digests do not all match, kept as received).
#[test]
fn a_copied_warc_is_read_once_and_copied_byte_exact() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let plain = corpus().join("warc").join(
        std::fs::read_dir(corpus().join("warc"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|n| n.ends_with(".warc"))
            .expect("an uncompressed corpus WARC"),
    );
    let bad_digests = corpus().join("warc/jwat-invalid-warcfile-digest-fields.warc");
    for input in [corpus().join("warc/pywb-dupes.warc.gz"), plain, bad_digests] {
        let out = dir.path().join(format!("pkg-{}", input.file_name().unwrap().to_string_lossy()));
        let o = Package::new().json().run(&out, &input);
        // Digest findings make it a run with findings (exit 1); it still packages.
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
        let r = crate::util::only_package(&r);
        let size = std::fs::metadata(&input).unwrap().len();
        let c = &r["containers"][0];
        assert_eq!(c["bytes_read"], size, "{}: {c}", input.display());
        let copy = out.join(c["path"].as_str().unwrap());
        let digest = |p: &Path| sha2::Sha512::digest(std::fs::read(p).unwrap());
        assert_eq!(digest(&copy), digest(&input), "{}", input.display());
    }
}

/// A failure is said once, with its file and every cause: an output below a regular file, and a
/// WARC with bytes after its last gzip member that are no gzip member (offset and the
/// decompressor's own words). Errors that quote their cause are not followed by it again.
#[test]
fn errors_name_the_file_and_say_each_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    // Fails: exit status 2; what it said.
    let refused = |out: &Path, input: &str| {
        let o = Package::new().quiet().run(out, Path::new(input));
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let err = refused(&file.join("pkg"), &sample_job());
    assert!(err.contains("a-file"), "{err}");
    // Said once, in words (issue 24: no raw "(os error 17)").
    assert_eq!(err.matches("it already exists").count(), 1, "{err}");
    assert!(!err.contains("os error"), "{err}");
    let warc = dir.path().join("junk.warc.gz");
    let mut bytes = std::fs::read(corpus().join("warc/warcio-example.warc.gz")).unwrap();
    let end = bytes.len();
    bytes.extend_from_slice(b"trailing junk\n");
    std::fs::write(&warc, bytes).unwrap();
    let out = dir.path().join("pkg");
    let err = refused(&out, warc.to_str().unwrap());
    assert!(err.contains(&format!("junk.warc.gz: record at offset {end}")), "{err}");
    assert_eq!(err.matches("cannot read the record header").count(), 1, "{err}");
    assert!(err.contains("invalid gzip header"), "{err}");
    assert!(!out.exists(), "no package");
}
