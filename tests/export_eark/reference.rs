//! The E-ARK check and export against the reference validators: commons-ip 2 (CSIP/SIP/AIP
//! 2.2.0) and eark-validator 1.1.3 accept what `export eark` writes, and refuse the invalid
//! packages built here as webaip does; SHOULD rules are warnings.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{export, our_check, our_check_warned, packaged_sample};
use crate::util::{commons_ip, copy_tree, eark_validator, oracle_python, repo, webaip};

#[test]
fn exports_pass_commons_ip_eark_validator_and_our_check() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let sip = export(&pkg, &tmp.path().join("sip"), "sip");
    let aip = export(&pkg, &tmp.path().join("aip"), "aip");
    let zip = export(&pkg, &tmp.path().join("aip.zip"), "aip");
    // The root folder is named by the OBJID (CSIP1), in the ZIP as in the folder.
    let mets = std::fs::read_to_string(aip.join("METS.xml")).unwrap();
    let objid = mets.split(" OBJID=\"").nth(1).unwrap().split('"').next().unwrap();
    assert_eq!(aip.file_name().unwrap().to_str(), Some(objid));
    let z = zip::ZipArchive::new(std::fs::File::open(&zip).unwrap()).unwrap();
    for name in z.file_names() {
        let name = name.unwrap();
        assert!(name.starts_with(&format!("{objid}/")), "{name}");
    }
    let verdicts = commons_ip(&[&sip, &aip, &zip]);
    for (ip, v) in [&sip, &aip, &zip].iter().zip(&verdicts) {
        assert!(v.valid && v.failed.is_empty(), "commons-ip on {}: {v:?}", ip.display());
        assert_eq!(our_check(ip), (0, vec![]), "{}", ip.display());
    }
    // eark-validator's own usage (`-s 2.1.0`), as the script's help gives it.
    let o = Command::new(oracle_python())
        .arg(repo().join("scripts/eark-validator-offline.py"))
        .args(["-s", "2.1.0"])
        .arg(&zip)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{said}{}", String::from_utf8_lossy(&o.stderr));
    assert!(said.contains("\"errors\": []") && said.contains("WellFormed"), "{said}");
}

/// One invalid package: the rule webaip reports, the rule commons-ip reports, eark-validator's
/// when it checks it, and the edit of the root METS that breaks it.
struct Broken {
    ours: &'static str,
    commons_ip: &'static str,
    eark_validator: Option<&'static str>,
    edit: fn(&str) -> String,
}

/// A second `mets:note` for the software agent (CSIP15: exactly one).
fn two_notes(s: &str) -> String {
    let start = s.find("<mets:note ").unwrap();
    let end = start + s[start..].find("</mets:note>").unwrap() + "</mets:note>".len();
    format!("{}{}{}", &s[..end], &s[start..end], &s[end..])
}

/// A rightsMD whose mdRef (to the DC record) has no MIMETYPE (CSIP53), where the METS schema
/// puts it: before the digiprovMDs.
fn rights_without_mime(s: &str) -> String {
    let at = s.find("metadata/descriptive/dc.xml").unwrap();
    let start = s[..at].rfind("<mets:mdRef ").unwrap();
    let end = at + s[at..].find("/>").unwrap() + 2;
    let md_ref = s[start..end].replace(" MIMETYPE=\"application/xml\"", "");
    let first = s.find("<mets:digiprovMD ").unwrap();
    format!("{}<mets:rightsMD ID=\"rights-1\">{md_ref}</mets:rightsMD>{}", &s[..first], &s[first..])
}

/// The first FLocat twice (CSIP76: one per file).
fn two_flocats(s: &str) -> String {
    let start = s.find("<mets:FLocat ").unwrap();
    let end = start + s[start..].find("/>").unwrap() + 2;
    format!("{}{}{}", &s[..end], &s[start..end], &s[end..])
}

/// A second structMap labelled CSIP, its IDs renamed (CSIP80: one such map).
fn two_csip_maps(s: &str) -> String {
    let start = s.find("<mets:structMap ").unwrap();
    let end = s.find("</mets:structMap>").unwrap() + "</mets:structMap>".len();
    let copy = s[start..end].replace(" ID=\"", " ID=\"second-");
    format!("{}{copy}{}", &s[..end], &s[end..])
}

/// The Metadata division twice (CSIP88: one).
fn two_metadata_divs(s: &str) -> String {
    let start = s.find("<mets:div ID=\"div-metadata\"").unwrap();
    let end = start + s[start..].find("/>").unwrap() + 2;
    let copy = s[start..end].replace("div-metadata", "div-metadata-2");
    format!("{}{copy}{}", &s[..end], &s[end..])
}

const BROKEN: &[Broken] = &[
    Broken {
        ours: "CSIP15",
        commons_ip: "CSIP15",
        eark_validator: Some("CSIP15"),
        edit: two_notes,
    },
    Broken {
        ours: "CSIP40",
        commons_ip: "CSIP40",
        eark_validator: Some("CSIP40"),
        edit: |s| {
            s.replace(
                "MDTYPE=\"PREMIS\" MIMETYPE=\"application/xml\"",
                "MDTYPE=\"PREMIS\" MIMETYPE=\"xml\"",
            )
        },
    },
    Broken {
        ours: "CSIP53",
        commons_ip: "CSIP53",
        eark_validator: Some("CSIP53"),
        edit: rights_without_mime,
    },
    Broken {
        ours: "CSIP68",
        commons_ip: "CSIP68",
        eark_validator: None,
        edit: |s| s.replacen("MIMETYPE=\"text/plain\"", "MIMETYPE=\"plain text\"", 1),
    },
    // commons-ip reports a second FLocat under CSIP69.
    Broken { ours: "CSIP76", commons_ip: "CSIP69", eark_validator: None, edit: two_flocats },
    Broken { ours: "CSIP80", commons_ip: "CSIP80", eark_validator: None, edit: two_csip_maps },
    // commons-ip reports a missing CSIP structMap under CSIP80.
    Broken {
        ours: "CSIP82",
        commons_ip: "CSIP80",
        eark_validator: Some("CSIP82"),
        edit: |s| s.replace("LABEL=\"CSIP\"", "LABEL=\"Physical\""),
    },
    Broken { ours: "CSIP88", commons_ip: "CSIP88", eark_validator: None, edit: two_metadata_divs },
];

#[test]
fn invalid_packages_are_refused_by_webaip_as_by_the_reference_validators() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let base = export(&pkg, &tmp.path().join("base"), "aip");
    let name = base.file_name().unwrap().to_owned();
    let mut ips: Vec<PathBuf> = Vec::new();
    for b in BROKEN {
        let ip = tmp.path().join(b.ours).join(&name);
        copy_tree(&base, &ip);
        let mets = ip.join("METS.xml");
        let text = std::fs::read_to_string(&mets).unwrap();
        let edited = (b.edit)(&text);
        assert_ne!(edited, text, "{}: the edit changed nothing", b.ours);
        std::fs::write(&mets, edited).unwrap();
        ips.push(ip);
    }
    let refs: Vec<&Path> = ips.iter().map(PathBuf::as_path).collect();
    let verdicts = commons_ip(&refs);
    for ((b, ip), cip) in BROKEN.iter().zip(&ips).zip(&verdicts) {
        let (code, findings) = our_check(ip);
        assert_eq!(code, 1, "{}: {findings:?}", b.ours);
        assert!(findings.contains(&b.ours.to_string()), "{}: ours {findings:?}", b.ours);
        assert!(!cip.valid && cip.failed.contains(&b.commons_ip.into()), "{}: {cip:?}", b.ours);
        if let Some(rule) = b.eark_validator {
            let (_, errors) = eark_validator(ip);
            assert!(errors.contains(&rule.to_string()), "{}: eark-validator {errors:?}", b.ours);
        }
    }
}

#[test]
fn should_rules_are_warnings_and_the_package_stays_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let ip = export(&pkg, &tmp.path().join("ip"), "aip");
    // A representation folder without its own METS.xml (CSIPSTR12, SHOULD) and a dmdSec STATUS
    // outside the vocabulary (CSIP20, SHOULD).
    std::fs::create_dir_all(ip.join("representations/extra")).unwrap();
    let mets = ip.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    std::fs::write(&mets, text.replacen("STATUS=\"CURRENT\"", "STATUS=\"DRAFT\"", 1)).unwrap();
    let (code, findings, mut warnings) = our_check_warned(&ip);
    warnings.sort();
    assert_eq!((code, findings, warnings), (0, vec![], vec!["CSIP20".into(), "CSIPSTR12".into()]));
    let o = webaip(&["validate", "--profile", "eark-csip", ip.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("warning [CSIPSTR12]") && said.contains(": valid ("), "{said}");
}

#[test]
fn the_root_mets_of_a_folder_package_stands_for_the_package() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let ip = export(&pkg, &tmp.path().join("ip"), "aip");
    let o = webaip(&["validate", "--profile", "eark-csip", ip.join("METS.xml").to_str().unwrap()]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("checking the package folder"), "{err}");
    assert!(out.contains(": valid (") && !out.contains("Zip"), "{out}");
}

#[test]
fn an_objid_that_cannot_name_a_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    let start = text.find(" OBJID=\"").unwrap() + 8;
    let end = start + text[start..].find('"').unwrap();
    let long = "a".repeat(256);
    std::fs::write(&mets, format!("{}{long}{}", &text[..start], &text[end..])).unwrap();
    let out = tmp.path().join("out");
    let o = webaip(&["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("cannot name the E-ARK root folder"), "{err}");
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
}

/// `pkg` with its METS's OBJID attribute replaced by `raw` (as written in the XML).
fn set_objid(pkg: &Path, raw: &str) {
    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    let start = text.find(" OBJID=\"").unwrap() + 8;
    let end = start + text[start..].find('"').unwrap();
    std::fs::write(&mets, format!("{}{raw}{}", &text[..start], &text[end..])).unwrap();
}

#[test]
fn a_hostile_objid_names_no_folder_and_reaches_no_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let hostile = ["..\\..\\evil\u{1b}[2J", "a&lt;b", "C:x", "x.", "a\u{202e}b", "a|b"];
    for (n, objid) in hostile.iter().enumerate() {
        set_objid(&pkg, objid);
        for out in [tmp.path().join(format!("out{n}")), tmp.path().join(format!("out{n}.zip"))] {
            let o = webaip(&["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            let (said, err) =
                (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            assert!(!o.status.success(), "{objid:?}: {said}{err}");
            assert!(err.contains("cannot name the E-ARK root folder"), "{objid:?}: {err}");
            assert!(!err.contains(['\u{1b}', '\u{202e}']), "{err:?}");
            assert!(!out.exists(), "{objid:?}: {}", out.display());
        }
    }
    assert!(!tmp.path().join("evil").exists());
}

#[test]
fn an_escaped_objid_is_read_unescaped_and_a_malformed_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    set_objid(&pkg, "a&amp;b&#x41;");
    let ip = export(&pkg, &tmp.path().join("ip"), "aip");
    assert_eq!(ip.file_name().unwrap().to_str(), Some("a&bA"));
    let mets = std::fs::read_to_string(ip.join("METS.xml")).unwrap();
    assert!(mets.contains(" OBJID=\"a&amp;bA\""), "{}", &mets[..600.min(mets.len())]);
    set_objid(&pkg, "a&bogus;b");
    let out = tmp.path().join("bad");
    let o = webaip(&["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("METS.xml: byte ") && err.contains("OBJID"),
        "{err}"
    );
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
}

#[test]
fn a_representation_mets_stands_for_the_package_around_it() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let ip = export(&pkg, &tmp.path().join("ip"), "aip");
    let rep = ip.join("representations/warc/METS.xml");
    let o = webaip(&["validate", "--profile", "eark-csip", rep.to_str().unwrap()]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("a representation METS.xml: checking the package folder"), "{err}");
}

#[test]
fn several_packages_export_into_one_folder_never_over_one() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let other = tmp.path().join("other");
    copy_tree(&pkg, &other);
    set_objid(&other, "other-package");
    let out = tmp.path().join("out");
    let names = || {
        let mut n: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        n.sort();
        n
    };
    for p in [&pkg, &other] {
        let o = webaip(&["export", "eark", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let made = names();
    assert!(made.len() == 2 && made.contains(&"other-package".into()), "{made:?}");
    let o = webaip(&["export", "eark", other.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("other-package: exists already"), "{err}");
    assert_eq!(names(), made);
    assert_eq!(our_check(&out.join("other-package")), (0, vec![]));
}
