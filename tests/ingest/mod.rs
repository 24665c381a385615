//! Issue 27, item 1: `webaip ingest` turns each committed sample's submission package into an
//! AIP that the schema oracle (validate-mets), `webaip validate`, `audit --deep` and
//! Archivematica's metsrw accept; its containers are the submission's (the same inodes); its
//! described bytestreams carry the PRONOM identifiers siegfried gives them; a second ingest is
//! a no-op; a damaged submission is refused with nothing written; a killed ingest leaves
//! nothing that looks complete.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod corpus;

use crate::mets_package::oracle_validate;
use crate::util::{Package, oracle_python, repo, schemas, webaip_command};

/// Every committed sample, as the golden packages make them.
use crate::golden::SAMPLES;

mod foreign;
mod hostile;

fn submission(name: &str, args: &[&str], dir: &Path) -> PathBuf {
    let out = dir.join(name);
    let o = Package::new()
        .deterministic()
        .quiet()
        .args(&["--out", out.to_str().unwrap()])
        .args(args)
        .command_as_is()
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    out
}

fn ingest(ssip: &Path, out: &Path, extra: &[&str]) -> Output {
    webaip_command()
        .args(["ingest", "--json", "--quiet", "--schemas"])
        .arg(schemas())
        .arg(ssip)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn report(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "ingest failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["packages"][0].clone()
}

/// The value of attribute `name` of the first element of the text that has it.
fn attr<'a>(text: &'a str, name: &str) -> &'a str {
    let at = text.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    &text[at..at + text[at..].find('"').unwrap()]
}

/// Every `<mets:dmdSec ...>...</mets:dmdSec>` and rights amdSec, verbatim.
fn kept_sections(mets: &str) -> Vec<&str> {
    let mut v = Vec::new();
    for (open, close) in
        [("<mets:dmdSec", "</mets:dmdSec>"), ("<mets:rightsMD", "</mets:rightsMD>")]
    {
        let mut rest = mets;
        while let Some(s) = rest.find(open) {
            let e = rest[s..].find(close).unwrap() + s + close.len();
            v.push(&rest[s..e]);
            rest = &rest[e..];
        }
    }
    v
}

fn event_ids(mets: &str) -> Vec<&str> {
    mets.split("<premis:eventIdentifierValue>")
        .skip(1)
        .map(|s| &s[..s.find('<').unwrap()])
        .collect()
}

fn audit_deep(pkg: &Path) -> serde_json::Value {
    let o = webaip_command()
        .args(["audit", "--deep", "--json", "--schemas"])
        .arg(schemas())
        .arg(pkg)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["packages"][0].clone()
}

fn metsrw(mets: &Path) -> serde_json::Value {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_metsrw.py"))
        .arg(mets)
        .output()
        .unwrap();
    assert!(o.status.success(), "metsrw: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn every_sample_becomes_an_aip_every_reader_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let aips = tmp.path().join("aips");
    for (name, args) in SAMPLES {
        let ssip = submission(name, args, tmp.path());
        let r = report(&ingest(&ssip, &aips, &[]));
        assert_eq!(r["outcome"], "created", "{name}: {r}");
        let aip = aips.join(name);
        assert_eq!(Path::new(r["aip"].as_str().unwrap()), aip);

        // The schema oracle, webaip's own validation and a deep audit accept it.
        let (ok, text) = oracle_validate(&aip.join("METS.xml"));
        assert!(ok, "{name}: validate-mets: {text}");
        crate::mets_package::assert_webaip_valid(&aip.join("METS.xml"));
        let a = audit_deep(&aip);
        assert_eq!(a["verdict"], "intact", "{name}: {a}");

        // What the AIP's METS says, and what it kept.
        let before = fs::read_to_string(ssip.join("METS.xml")).unwrap();
        let after = fs::read_to_string(aip.join("METS.xml")).unwrap();
        assert_eq!(attr(&after, "TYPE"), "AIP");
        assert_ne!(attr(&after, "OBJID"), attr(&before, "OBJID"));
        assert_eq!(r["objid"], attr(&after, "OBJID"));
        assert!(
            after.contains(&format!(
                "<mets:altRecordID TYPE=\"sSIP OBJID\">{}</mets:altRecordID>",
                attr(&before, "OBJID")
            )),
            "{name}"
        );
        // And by its METS's digest, which ties the AIP to the submission's bytes.
        let sha = crate::util::hex(&<sha2::Sha512 as sha2::Digest>::digest(before.as_bytes()));
        let by_digest =
            format!("<mets:altRecordID TYPE=\"sSIP METS SHA-512\">{sha}</mets:altRecordID>");
        assert!(after.contains(&by_digest), "{name}");
        for s in kept_sections(&before) {
            assert!(
                after.contains(s),
                "{name}: section not kept verbatim: {}",
                &s[..80.min(s.len())]
            );
        }
        // Read typed (yaserde) in both documents, the submission's package-level sections are
        // all in the AIP, field by field.
        // Packaged with identification (the default), every described bytestream already
        // states its result: ingest keeps it, and counts it.
        let i = &r["identification"];
        assert_eq!(i["already_identified"], i["payloads"], "{name}: {i}");
        let carried = &r["carried_over"];
        assert!(carried["descriptive"].as_u64().unwrap() >= 2, "{name}: {carried}");
        assert_eq!(carried["rights"], 1, "{name}: {carried}");
        assert_eq!(carried["not_modelled"], serde_json::json!([]), "{name}: {carried}");
        let (old, new) = (event_ids(&before), event_ids(&after));
        assert!(old.iter().all(|e| new.contains(e)), "{name}: the submission's events are kept");
        assert_eq!(new.len(), old.len() + 4, "{name}: four events of its own");
        for term in ["ingestion", "fixity check", "format identification", "validation"] {
            assert!(after.contains(&format!(">{term}</premis:eventType>")), "{name}: {term}");
        }

        // metsrw finds every file and the package-level events and agents, old and new.
        let m = metsrw(&aip.join("METS.xml"));
        let files = m["files"].as_array().unwrap().len();
        assert_eq!(files, after.matches("<mets:FLocat").count(), "{name}: {m}");
        let events: Vec<&str> =
            m["package_events"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
        for term in ["ingestion", "fixity check", "format identification", "validation"] {
            assert!(events.contains(&term), "{name}: metsrw misses {term}: {events:?}");
        }

        // Every file but the METS and manifest is the submission's own: the same inode.
        let manifest = fs::read_to_string(aip.join("manifest-sha512.txt")).unwrap();
        let mut linked = 0;
        for line in manifest.lines() {
            let rel = &line[130..];
            if rel == "METS.xml" {
                continue;
            }
            let (a, b) =
                (fs::metadata(ssip.join(rel)).unwrap(), fs::metadata(aip.join(rel)).unwrap());
            assert_eq!(
                (a.dev(), a.ino()),
                (b.dev(), b.ino()),
                "{name}: {rel} is not the same file"
            );
            linked += 1;
        }
        assert_eq!(r["linked"], linked, "{name}");
        assert_eq!(r["copied"], 0, "{name}");
    }
}

#[test]
fn described_bytestreams_carry_the_puids_siegfried_gives_them() {
    let tmp = tempfile::tempdir().unwrap();
    let aips = tmp.path().join("aips");
    let mut compared = 0;
    for (name, args) in SAMPLES.iter().filter(|(n, _)| matches!(*n, "pandas" | "mirror")) {
        // Made without identification: the PUIDs in the AIP are ingest's own.
        let args = [args, &["--identify", "none"][..]].concat();
        let ssip = submission(name, &args, tmp.path());
        let r = report(&ingest(&ssip, &aips, &[]));
        let o = Command::new(oracle_python())
            .arg(repo().join("tests/oracle/check_aip_formats.py"))
            .arg(aips.join(name))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let found: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(found.len() as u64, r["identification"]["payloads"].as_u64().unwrap());
        assert!(!found.is_empty(), "{name}: no described bytestream to identify");
        for f in &found {
            assert!(f["declared_note"].as_bool().unwrap(), "{name}: {f}");
            let ours: Vec<&str> =
                f["mets"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
            // Where nothing matched, the object says so.
            assert_eq!(ours.is_empty(), f["unidentified_note"].as_bool().unwrap(), "{name}: {f}");
            let sf = f["siegfried"].as_array().unwrap();
            if let [m] = sf.as_slice() {
                // By its signatures the same PUID; text by its characters (siegfried's plain
                // text) is plain text or the web text type its content supports.
                let basis = m["basis"].as_str().unwrap();
                if m["id"] != "UNKNOWN" && !basis.contains("container") {
                    compared += 1;
                    if basis.starts_with("text match") {
                        let [puid] = ours.as_slice() else { panic!("{name}: {f}") };
                        assert!(crate::identify::WEB_TEXT.contains(puid), "{name}: {f}");
                    } else {
                        assert_eq!(ours, [m["id"].as_str().unwrap()], "{name}: {f}");
                    }
                }
            }
        }
    }
    assert!(compared >= 4, "too few bytestreams identified by siegfried: {compared}");
}

#[test]
fn a_second_ingest_says_it_exists_and_deterministic_ingests_are_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission("pandas", SAMPLES[2].1, tmp.path());
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    let first = report(&ingest(&ssip, &one, &["--deterministic"]));
    let mets = fs::read(one.join("pandas/METS.xml")).unwrap();
    let again = report(&ingest(&ssip, &one, &["--deterministic"]));
    assert_eq!(again["outcome"], "exists");
    assert_eq!(again["objid"], first["objid"]);
    assert_eq!(fs::read(one.join("pandas/METS.xml")).unwrap(), mets, "nothing was rewritten");
    // In words, too.
    let o = webaip_command().arg("ingest").arg(&ssip).arg("--out").arg(&one).output().unwrap();
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(": exists: "),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The same submission, ingested elsewhere with --deterministic: the same AIP, byte for byte.
    report(&ingest(&ssip, &two, &["--deterministic"]));
    assert_eq!(fs::read(two.join("pandas/METS.xml")).unwrap(), mets);
    assert_eq!(
        fs::read(two.join("pandas/manifest-sha512.txt")).unwrap(),
        fs::read(one.join("pandas/manifest-sha512.txt")).unwrap()
    );
    // Something else of that name is not taken for the AIP.
    let other = tmp.path().join("three");
    fs::create_dir_all(other.join("pandas")).unwrap();
    let o = ingest(&ssip, &other, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists and is not the AIP of"));
}

/// Names of the entries in `dir` (none when it does not exist).
fn entries(dir: &Path) -> Vec<String> {
    let Ok(rd) = fs::read_dir(dir) else { return vec![] };
    rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn a_damaged_submission_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission("heritrix", SAMPLES[0].1, tmp.path());
    let container = fs::read_dir(ssip.join("content")).unwrap().next().unwrap().unwrap().path();
    let mut bytes = fs::read(&container).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    fs::write(&container, bytes).unwrap();
    let out = tmp.path().join("aips");
    let o = ingest(&ssip, &out, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("refused: the audit finds it DAMAGED"), "{err}");
    assert!(
        err.contains(container.file_name().unwrap().to_str().unwrap()),
        "names the file: {err}"
    );
    assert!(err.contains(" at byte "), "names the offset: {err}");
    assert!(entries(&out).is_empty(), "{:?}", entries(&out));
}

// Needs the failure points of a `test-hooks` build.
#[cfg(feature = "test-hooks")]
#[test]
fn a_killed_ingest_leaves_nothing_that_looks_complete_and_the_next_one_recovers() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission("mirror", SAMPLES[3].1, tmp.path());
    let out = tmp.path().join("aips");
    let o = webaip_command()
        .args(["ingest", "--quiet"])
        .arg(&ssip)
        .arg("--out")
        .arg(&out)
        .env("WEBAIP_FAIL_AT", "before-commit")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let left = entries(&out);
    assert!(left.iter().all(|e| e.starts_with('.') && e.ends_with(".partial")), "{left:?}");
    assert!(!out.join("mirror").exists());
    let r = report(&ingest(&ssip, &out, &[]));
    assert_eq!(r["outcome"], "created");
    assert_eq!(entries(&out), ["mirror"], "the killed run's partial directory is gone");
}

#[test]
fn an_aip_on_another_file_system_is_copied_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission("nedlib", SAMPLES[4].1, tmp.path());
    let mnt = tmp.path().join("other");
    fs::create_dir_all(&mnt).unwrap();
    let Some(_disk) = crate::util::SmallDisk::mount(&mnt, 64 * 1024) else {
        eprintln!("skipped: no tmpfs can be mounted here");
        return;
    };
    let r = report(&ingest(&ssip, &mnt, &[]));
    assert_eq!(r["linked"], 0);
    assert!(r["copied"].as_u64().unwrap() > 0, "{r}");
    let a = audit_deep(&mnt.join("nedlib"));
    assert_eq!(a["verdict"], "intact", "{a}");
}

/// A full TMPDIR is said as what it is, a fault of this machine, never blamed on the
/// submission's METS; nothing is left that looks like an AIP.
#[test]
fn a_full_tmpdir_is_not_blamed_on_the_submission() {
    let tmp = tempfile::tempdir().unwrap();
    // Records enough that the listing is written out before its end (over 8 KiB).
    let warc = crate::util::corpus().join("warc/nas-NAS-20100909163324-00000-mette.kb.dk.warc");
    let ssip = submission("minimal", &[warc.to_str().unwrap()], tmp.path());
    let small = tmp.path().join("tmpdir");
    fs::create_dir_all(&small).unwrap();
    let Some(_disk) = crate::util::SmallDisk::mount(&small, 4) else {
        eprintln!("skipped: no tmpfs can be mounted here");
        return;
    };
    let out = tmp.path().join("aips");
    let o = webaip_command()
        .args(["ingest", "--quiet", "--mode", "full", "--schemas"])
        .arg(schemas())
        .arg(&ssip)
        .arg("--out")
        .arg(&out)
        .env("TMPDIR", &small)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("(TMPDIR): no space left on device"), "{err}");
    assert!(err.contains(small.to_str().unwrap()), "names the temporary file: {err}");
    assert!(!err.contains("METS.xml"), "blames the submission: {err}");
    assert!(!err.contains("os error"), "{err}");
    assert!(!out.join("minimal").exists());
}

#[test]
fn an_aip_is_not_ingested_again_and_a_folder_without_mets_is_no_submission() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission("kulturarw3", SAMPLES[5].1, tmp.path());
    let aips = tmp.path().join("aips");
    report(&ingest(&ssip, &aips, &[]));
    let o = ingest(&aips.join("kulturarw3"), &tmp.path().join("again"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("it is already an AIP"));
    let o = ingest(tmp.path(), &tmp.path().join("x"), &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is a folder without METS.xml, not a package"), "{err}");
}

/// The fileSec, from its start tag to its end tag.
fn file_sec(mets: &str) -> &str {
    &mets[mets.find("<mets:fileSec").unwrap()..mets.find("</mets:fileSec>").unwrap()]
}

#[test]
fn mode_lists_the_records_as_packaging_in_that_mode_would() {
    let tmp = tempfile::tempdir().unwrap();
    let minimal = submission("minimal", SAMPLES[0].1, tmp.path());
    let full = submission("full", &[&["--mode", "full"], SAMPLES[0].1].concat(), tmp.path());
    let aips = tmp.path().join("aips");
    let up = report(&ingest(&minimal, &aips, &["--mode", "full"]));
    let down = report(&ingest(&full, &aips, &["--mode", "minimal"]));
    let read = |p: &Path| fs::read_to_string(p.join("METS.xml")).unwrap();
    // Byte for byte the fileSec that packaging the same harvest in that mode writes: the
    // records the submission lists kept as they are, the others described as the writer would.
    assert_eq!(file_sec(&read(&aips.join("minimal"))), file_sec(&read(&full)));
    assert_eq!(file_sec(&read(&aips.join("full"))), file_sec(&read(&minimal)));
    // Record <file>s are those with an OWNERID (the WARC-Record-ID).
    let owned = file_sec(&read(&full)).matches(" OWNERID=").count();
    assert_eq!(up["records_listed"], owned);
    assert!(down["records_listed"].as_u64().unwrap() < up["records_listed"].as_u64().unwrap());
    for aip in [aips.join("minimal"), aips.join("full")] {
        let a = audit_deep(&aip);
        assert_eq!(a["verdict"], "intact", "{a}");
        let (ok, text) = oracle_validate(&aip.join("METS.xml"));
        assert!(ok, "{text}");
    }
}

#[test]
fn store_puts_the_aip_to_every_replica() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = submission("nedlib", SAMPLES[4].1, tmp.path());
    let mut text = String::from("state = \"state.sqlite\"\n");
    for name in ["one", "two"] {
        let root = tmp.path().join(name);
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
            root.display()
        ));
    }
    let config = tmp.path().join("store.toml");
    fs::write(&config, text).unwrap();
    let aips = tmp.path().join("aips");
    let r = report(&ingest(&ssip, &aips, &["--store", config.to_str().unwrap()]));
    let stored = &r["stored"];
    assert_eq!(stored["accepted"], true, "{r}");
    assert_eq!(stored["package"], r["objid"], "stored under the AIP's OBJID");
    // Each replica holds the AIP's METS, byte for byte.
    let mets = fs::read(aips.join("nedlib/METS.xml")).unwrap();
    for name in ["one", "two"] {
        let dir = tmp.path().join(name).join(stored["dir"].as_str().unwrap());
        assert_eq!(fs::read(dir.join("METS.xml")).unwrap(), mets, "{name}");
    }
}
