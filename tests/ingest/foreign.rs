//! Issue 27: `webaip ingest` of a submission another tool wrote. A BL/UKWA SIP (PREMIS 2, no
//! manifest, no OBJID, a crawl log in its folder and its WARC and log zip kept in the BL store,
//! named by URL) becomes an AIP: the crawl log is carried (the same inode), verified against the
//! METS's CHECKSUM; the files named by URL are not copied, the AIP's METS refers to them as the
//! submission did and the report lists them; the AIP has a manifest of its own. Bytes that
//! differ from the METS refuse the submission, and so do `<file>`s that name something outside
//! it, a link or a FIFO, with nothing written.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{audit_deep, ingest, report};
use crate::audit::foreign::{LOG, bl_sip, hex, sip_files};
use crate::util::{files_in, schemas, webaip};

/// A BL SIP as a submission folder: its METS (as `METS.xml`), the crawl log it lists, and
/// another SIP's METS beside them that it does not list.
fn bl_submission(dir: &Path, mets: &str) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("METS.xml"), mets).unwrap();
    fs::write(dir.join("crawl.log"), LOG).unwrap();
    let other = bl_sip(&sip_files(b"another crawl\n")[..2], None);
    fs::write(dir.join("sip-20150101000000.xml"), other).unwrap();
    dir.to_path_buf()
}

/// Every `<mets:FLocat .../>` of a METS document, verbatim.
fn flocats(mets: &str) -> Vec<&str> {
    mets.match_indices("<mets:FLocat ")
        .map(|(at, _)| &mets[at..at + mets[at..].find("/>").unwrap() + 2])
        .collect()
}

fn strings(v: &serde_json::Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect()
}

#[test]
fn a_bl_sip_becomes_an_aip_that_carries_its_local_file_and_refers_to_those_kept_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = bl_submission(&tmp.path().join("sip"), &bl_sip(&sip_files(LOG), None));
    let aips = tmp.path().join("aips");
    let r = report(&ingest(&ssip, &aips, &[]));
    assert_eq!(r["outcome"], "created", "{r:#}");
    let aip = aips.join("sip");
    assert_eq!((r["linked"].as_u64(), r["copied"].as_u64()), (Some(1), Some(0)), "{r:#}");

    // The AIP is valid (webaip's validation, under the profile its PREMIS 2 fits, as advice).
    let o = webaip(&[
        "validate",
        "--schemas",
        schemas().to_str().unwrap(),
        aip.join("METS.xml").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("VALID under profile bl-legacy") && text.contains(": 0 errors"),
        "{text}"
    );

    // Its files: the crawl log is the submission's (the same inode), the manifest its own; the
    // SIP beside it is not taken.
    assert_eq!(
        files_in(&aip).iter().filter(|n| n.contains('.')).count(),
        3,
        "{:?}",
        files_in(&aip)
    );
    let inode = |p: &Path| fs::metadata(p).unwrap().ino();
    assert_eq!(inode(&aip.join("crawl.log")), inode(&ssip.join("crawl.log")));
    assert!(!aip.join("sip-20150101000000.xml").exists());
    let manifest = fs::read_to_string(aip.join("manifest-sha512.txt")).unwrap();
    let aip_mets = fs::read(aip.join("METS.xml")).unwrap();
    assert_eq!(
        manifest,
        format!("{}  METS.xml\n{}  crawl.log\n", hex(&aip_mets), hex(LOG)),
        "the AIP's manifest lists its METS and the file it carries"
    );

    // The files kept elsewhere: reported, and referred to in the AIP as in the submission.
    let not_carried = strings(&r["not_carried_over"]);
    for (id, seed) in [("WARC1743", "warcs/BL-1.warc.gz"), ("ZIP1744", "logs/20141209090016.zip")] {
        let href = format!(
            "http://dls.httpfs.wa.bl.uk:14000/webhdfs/v1/heritrix/output/{seed}?user.name=hadoop&op=OPEN"
        );
        let line = format!("kept elsewhere: <file> {id} at {href}: not copied");
        assert!(not_carried.iter().any(|n| n.starts_with(&line)), "{id}: {not_carried:#?}");
    }
    assert!(
        not_carried.iter().any(|n| n.contains("not listed in its METS: sip-20150101000000.xml")),
        "{not_carried:#?}"
    );
    assert_eq!(strings(&r["not_verified"]), Vec::<&str>::new());
    let before = fs::read_to_string(ssip.join("METS.xml")).unwrap();
    let after = String::from_utf8(aip_mets).unwrap();
    assert_eq!(flocats(&after), flocats(&before));
    assert_eq!(flocats(&after).len(), 3);
    assert!(after.contains("; 2 file(s) named by URL kept elsewhere, not copied"), "the event");

    // An AIP, with the submission's PREMIS 2 sections carried over, read typed in both.
    assert!(after.contains(" TYPE=\"AIP\""), "{}", &after[..400]);
    let c = &r["carried_over"];
    assert_eq!(
        (c["premis_agents"].as_u64(), c["premis_events"].as_u64(), c["premis_objects"].as_u64()),
        (Some(1), Some(3), Some(3)),
        "{c}"
    );
    assert!(after.contains("<premis:eventType>virusCheck</premis:eventType>"));

    // A deep audit finds nothing wrong in what it can check, and cannot check the two URLs.
    let a = audit_deep(&aip);
    assert_eq!(a["verdict"], "partial", "{a:#}");
    let unchecked: Vec<&str> =
        a["unchecked"].as_array().unwrap().iter().map(|u| u["kind"].as_str().unwrap()).collect();
    assert_eq!(unchecked, ["kept_elsewhere", "kept_elsewhere"], "{a:#}");
    assert_eq!((a["files_listed"].as_u64(), a["files_checked"].as_u64()), (Some(3), Some(1)));
    let errors = a["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error");
    assert_eq!(errors.count(), 0, "{a:#}");
}

/// A local `<file>` with no CHECKSUM is verified by its PREMIS object's digest; with neither,
/// it is carried as it is, and the report says its bytes were checked against nothing.
#[test]
fn a_local_file_whose_mets_states_no_checksum_is_checked_by_premis_or_reported_unverified() {
    let tmp = tempfile::tempdir().unwrap();
    let stated = format!(" CHECKSUMTYPE=\"SHA-512\" CHECKSUM=\"{}\"", hex(LOG));
    let mets = bl_sip(&sip_files(LOG), None).replace(&stated, "");
    let ssip = bl_submission(&tmp.path().join("sip"), &mets);
    let aips = tmp.path().join("aips");
    let r = report(&ingest(&ssip, &aips, &[]));
    assert!(strings(&r["not_verified"]).is_empty(), "{r:#}");

    let fixity = format!(
        "<premis:fixity><premis:messageDigestAlgorithm>SHA-512</premis:messageDigestAlgorithm><premis:messageDigest>{}</premis:messageDigest></premis:fixity>",
        hex(LOG)
    );
    assert!(mets.contains(&fixity));
    let ssip = bl_submission(&tmp.path().join("bare"), &mets.replace(&fixity, ""));
    let r = report(&ingest(&ssip, &aips, &[]));
    assert_eq!(strings(&r["not_verified"]), ["crawl.log"], "{r:#}");
    let manifest = fs::read_to_string(aips.join("bare/manifest-sha512.txt")).unwrap();
    assert!(manifest.contains(&format!("{}  crawl.log\n", hex(LOG))), "{manifest}");
}

/// The output directory holds nothing after a refused ingest.
fn nothing_written(out: &Path) {
    assert!(!out.exists() || files_in(out).is_empty(), "{:?}", files_in(out));
}

#[test]
fn a_foreign_sip_whose_local_bytes_differ_from_its_mets_is_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = bl_submission(&tmp.path().join("sip"), &bl_sip(&sip_files(LOG), None));
    let mut bytes = LOG.to_vec();
    bytes[5] ^= 0x10;
    fs::write(ssip.join("crawl.log"), &bytes).unwrap();
    let out = tmp.path().join("aips");
    let o = ingest(&ssip, &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("refused: the audit finds it DAMAGED"), "{err}");
    assert!(err.contains("crawl.log: [fixity] CHECKSUM"), "names the file: {err}");
    nothing_written(&out);
}

/// What a case does to the submission folder before the ingest.
type Prepare<'a> = dyn Fn(&Path) + 'a;

/// `<file>`s that name something the AIP may not take: the ingest names the `<file>` and why,
/// and writes nothing.
#[test]
fn hostile_hrefs_are_refused_naming_the_file_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    // The same bytes outside the submission: only where they are is at stake.
    let outside = tmp.path().join("outside.log");
    fs::write(&outside, LOG).unwrap();
    let cases: [(&str, &str, &Prepare); 4] = [
        ("dotdot", "../outside.log", &|_| ()),
        ("absolute", outside.to_str().unwrap(), &|_| ()),
        ("symlink", "crawl.log", &|d| {
            fs::remove_file(d.join("crawl.log")).unwrap();
            std::os::unix::fs::symlink(&outside, d.join("crawl.log")).unwrap();
        }),
        ("fifo", "crawl.log", &|d| {
            fs::remove_file(d.join("crawl.log")).unwrap();
            let made = std::process::Command::new("mkfifo").arg(d.join("crawl.log")).status();
            assert!(made.unwrap().success());
        }),
    ];
    for (name, href, make) in cases {
        let mets = bl_sip(&sip_files(LOG), None).replace(
            "xlink:href=\"crawl.log\"",
            &format!("xlink:href=\"{}\"", href.replace('&', "&amp;")),
        );
        let ssip = bl_submission(&tmp.path().join(name), &mets);
        make(&ssip);
        let out = tmp.path().join(format!("aips-{name}"));
        let o = ingest(&ssip, &out, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains("refused: <file> \"LOG1745\""), "{name}: {err}");
        let why = match name {
            "dotdot" => "has a \"..\" segment",
            "absolute" => "is an absolute path",
            "symlink" => "a symbolic link",
            _ => "is a FIFO",
        };
        assert!(err.contains(why), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        nothing_written(&out);
    }
}

/// The Archivematica reference METS in a folder with a file at each of its four hrefs, each
/// holding `the bytes of HREF`; with `matching`, each file's PREMIS digest (SHA-256, in the
/// amdSec its ADMID names) is rewritten to those bytes' digest.
fn archivematica_submission(dir: &Path, matching: bool) -> (PathBuf, Vec<String>) {
    use sha2::{Digest, Sha256};
    let reference = crate::util::repo().join("../shared/xsd/examples/reference");
    let mut mets = fs::read_to_string(reference.join("archivematica-aip-premis3.xml")).unwrap();
    let ssip = dir.join("am");
    fs::create_dir(&ssip).unwrap();
    let hrefs: Vec<String> = flocats(&mets)
        .iter()
        .map(|f| f.split("xlink:href=\"").nth(1).unwrap().split('"').next().unwrap().to_string())
        .collect();
    assert_eq!(hrefs.len(), 4, "{hrefs:?}");
    for h in &hrefs {
        let path = ssip.join(h);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = format!("the bytes of {h}");
        fs::write(&path, &bytes).unwrap();
        if !matching {
            continue;
        }
        let file = &mets[..mets.find(&format!("xlink:href=\"{h}\"")).unwrap()];
        let file = &file[file.rfind("<mets:file ").unwrap()..];
        let admid = file.split("ADMID=\"").nth(1).unwrap().split('"').next().unwrap();
        let amd = mets.find(&format!("<mets:amdSec ID=\"{admid}\"")).unwrap();
        let start = amd + mets[amd..].find("<premis:messageDigest>").unwrap() + 22;
        let end = start + mets[start..].find('<').unwrap();
        mets.replace_range(start..end, &hex_of(&Sha256::digest(bytes.as_bytes())));
    }
    fs::write(ssip.join("METS.xml"), &mets).unwrap();
    (ssip, hrefs)
}

fn hex_of(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// An Archivematica METS states its files' digests in their PREMIS objects only (SHA-256), no
/// `<file>` CHECKSUM: those digests are checked by their algorithm, so bytes that have them are
/// carried as verified, and the PREMIS extensions the typed reading does not model are
/// reported.
#[test]
fn an_archivematica_package_is_carried_with_its_files_verified_by_their_premis_sha256() {
    let tmp = tempfile::tempdir().unwrap();
    let (ssip, _) = archivematica_submission(tmp.path(), true);
    let aips = tmp.path().join("aips");
    let r = report(&ingest(&ssip, &aips, &[]));
    assert_eq!(r["linked"].as_u64(), Some(4), "{r:#}");
    assert!(strings(&r["not_verified"]).is_empty(), "{r:#}");
    let not_carried = strings(&r["not_carried_over"]);
    assert!(
        not_carried
            .iter()
            .any(|n| n.contains("not compared")
                && n.contains("premis:objectCharacteristicsExtension")),
        "{not_carried:#?}"
    );
    let manifest = fs::read_to_string(aips.join("am/manifest-sha512.txt")).unwrap();
    assert_eq!(manifest.lines().count(), 5, "{manifest}");
}

/// Bytes that are not what their PREMIS SHA-256 says are damage: refused, nothing written.
#[test]
fn an_archivematica_package_whose_bytes_miss_their_premis_sha256_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (ssip, hrefs) = archivematica_submission(tmp.path(), false);
    let aips = tmp.path().join("aips");
    let o = ingest(&ssip, &aips, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("refused: the audit finds it DAMAGED"), "{err}");
    assert!(err.contains("PREMIS messageDigest") && err.contains("(SHA-256); found "), "{err}");
    assert!(hrefs.iter().any(|h| err.contains(h.as_str())), "{err}");
    nothing_written(&aips);
}

/// A submission with no OBJID (every BL SIP) is named in its AIP by its METS's SHA-512: a
/// second ingest finds that AIP and says it exists; a different SIP in its place is refused.
#[test]
fn a_foreign_sip_ingested_twice_exists_the_second_time() {
    let tmp = tempfile::tempdir().unwrap();
    let mets = bl_sip(&sip_files(LOG), None);
    let ssip = bl_submission(&tmp.path().join("sip"), &mets);
    let aips = tmp.path().join("aips");
    let first = report(&ingest(&ssip, &aips, &[]));
    assert_eq!(first["outcome"], "created", "{first:#}");
    let aip = fs::read_to_string(aips.join("sip/METS.xml")).unwrap();
    let sha = crate::util::sha512_hex(mets.as_bytes());
    assert!(aip.contains(&format!("TYPE=\"sSIP METS SHA-512\">{sha}</mets:altRecordID>")), "{aip}");
    let second = report(&ingest(&ssip, &aips, &[]));
    assert_eq!(second["outcome"], "exists", "{second:#}");
    assert_eq!(second["objid"], first["objid"]);

    // Another SIP of the same folder name is not this AIP's submission.
    let other = bl_submission(&tmp.path().join("b/sip"), &mets.replace("2014-12-19", "2014-12-20"));
    let o = ingest(&other, &aips, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A submission whose files are all kept elsewhere: the AIP is made (the audit found no damage
/// in what it could check), but nothing was read, so the AIP records no fixity check and no
/// format identification (a "success" over nothing would say what was not done); the
/// ingestion event counts the files not copied.
#[test]
fn a_submission_whose_files_are_all_elsewhere_records_no_fixity_check() {
    let tmp = tempfile::tempdir().unwrap();
    let ssip = tmp.path().join("sip");
    fs::create_dir_all(&ssip).unwrap();
    fs::write(ssip.join("METS.xml"), bl_sip(&sip_files(LOG)[..2], None)).unwrap();
    let aips = tmp.path().join("aips");
    let r = report(&ingest(&ssip, &aips, &[]));
    assert_eq!(r["outcome"], "created", "{r:#}");
    let mets = fs::read_to_string(aips.join("sip/METS.xml")).unwrap();
    assert!(mets.contains("; 2 file(s) named by URL kept elsewhere, not copied"), "the event");
    assert!(mets.contains(">ingestion</premis:eventType>"));
    assert!(!mets.contains(">fixity check</premis:eventType>"), "a fixity check over no file");
    let identification = ">format identification</premis:eventType>";
    assert!(!mets.contains(identification), "an identification of no payload");
    assert!(mets.contains(">validation</premis:eventType>"));
}
