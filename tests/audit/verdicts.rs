//! What `audit` concludes: DAMAGED (exit 1) only for bytes that differ from the METS, content
//! missing, or a METS that cannot be read to its end; a METS that breaks the rules it is judged
//! by is an INVALID DESCRIPTION (exit 3); an E-ARK package is judged by the E-ARK rules.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha512};

use crate::util::{Package, copy_tree, json, sample, schemas, webaip};

const ARCHIVEMATICA: &str = "examples/reference/archivematica-aip-premis3.xml";

/// `webaip audit --json [extra] pkg`: the exit status and the one report.
fn audit(pkg: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["audit", "--json"];
    args.extend_from_slice(extra);
    args.push(pkg.to_str().unwrap());
    let o = webaip(&args);
    (o.status.code().unwrap(), json(&o)["packages"][0].clone())
}

fn errors(r: &serde_json::Value, key: &str) -> Vec<String> {
    let all = r[key].as_array().map(|a| a.iter()).into_iter().flatten();
    all.filter(|f| f["severity"] == "error").map(|f| f["rule"].as_str().unwrap().into()).collect()
}

/// The Archivematica AIP METS cut just after its first `</mets:structMap>`.
fn cut_short(dir: &Path) -> PathBuf {
    let text = fs::read_to_string(schemas().join(ARCHIVEMATICA)).unwrap();
    let end = text.find("</mets:structMap>").unwrap() + "</mets:structMap>\n".len();
    fs::create_dir_all(dir).unwrap();
    let mets = dir.join("METS.xml");
    fs::write(&mets, &text[..end]).unwrap();
    mets
}

#[test]
fn a_mets_cut_short_is_never_valid_nor_undamaged() {
    let tmp = tempfile::tempdir().unwrap();
    let mets = cut_short(&tmp.path().join("cut"));
    let lines = fs::read_to_string(&mets).unwrap().lines().count() as u64;
    let (ok, _) = crate::mets_package::oracle_validate_with(&mets, "mets-bundle.xsd");
    assert!(!ok, "the oracle rejects it too");
    let s = schemas().display().to_string();
    for extra in [&[][..], &["--schemas", &s][..]] {
        let mut args = vec!["validate"];
        args.extend_from_slice(extra);
        args.push(mets.to_str().unwrap());
        let o = webaip(&args);
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{text}");
        let said = format!("METS.xml:{}: error [XML] not well-formed XML (column 1)", lines + 1);
        assert!(text.contains(&said), "{text}");
        assert!(text.contains("<mets:mets>") && text.contains("INVALID"), "{text}");
        assert!(!text.contains("validated against"), "{text}");
    }
    // No root element at all.
    let empty = tmp.path().join("empty.xml");
    fs::write(&empty, "<?xml version=\"1.0\"?>\n").unwrap();
    let o = webaip(&["validate", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("without a root element"));

    let (code, r) = audit(mets.parent().unwrap(), &[]);
    assert_eq!((code, r["verdict"].as_str()), (1, Some("damaged")), "{r:#}");
    assert_eq!(r["validation"]["well_formed"], false);
    let xml = &r["findings"][0];
    assert_eq!((&xml["rule"], &xml["mets_line"]), (&"XML".into(), &(lines + 1).into()), "{r:#}");
}

/// `pkg`'s METS with `from` replaced by `to`, its manifest line updated: only the description
/// changes.
fn edit_mets(pkg: &Path, from: &str, to: &str) {
    let path = pkg.join("METS.xml");
    let old = fs::read(&path).unwrap();
    let text = String::from_utf8(old.clone()).unwrap();
    assert!(text.contains(from), "{from}");
    let new = text.replacen(from, to, 1);
    fs::write(&path, &new).unwrap();
    let hex = |b: &[u8]| crate::util::hex(&Sha512::digest(b));
    let manifest = pkg.join("manifest-sha512.txt");
    let m = fs::read_to_string(&manifest).unwrap().replace(&hex(&old), &hex(new.as_bytes()));
    fs::write(&manifest, m).unwrap();
}

#[test]
fn a_broken_profile_rule_is_an_invalid_description_not_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    Package::new().deterministic().quiet().succeeds(&pkg, &sample("nedlib"));
    let (code, r) = audit(&pkg, &[]);
    assert_eq!((code, r["verdict"].as_str()), (0, Some("intact")), "{r:#}");
    // An event that links an agent the package does not describe (P5.3 of its own profile).
    let text = fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let key = "<premis:linkingAgentIdentifierValue>";
    let at = text.find(key).unwrap() + key.len();
    let agent = &text[at..at + text[at..].find('<').unwrap()];
    edit_mets(&pkg, &format!("{key}{agent}<"), &format!("{key}nobody-described<"));
    let (code, r) = audit(&pkg, &[]);
    assert_eq!((code, r["verdict"].as_str()), (3, Some("invalid")), "{r:#}");
    assert!(errors(&r, "findings").is_empty(), "{r:#}");
    assert!(errors(&r["validation"], "findings").contains(&"P5.3".to_string()), "{r:#}");

    // PREMIS lets an event link an agent described elsewhere: in a METS that claims no
    // profile of webaip's, that is advice.
    let mets = tmp.path().join("am.xml");
    let am = fs::read_to_string(schemas().join(ARCHIVEMATICA)).unwrap();
    let link = "<premis:linkingAgentIdentifierValue>Archivematica-1.15.1<";
    fs::write(&mets, am.replacen(link, "<premis:linkingAgentIdentifierValue>elsewhere<", 1))
        .unwrap();
    let o = webaip(&["validate", "--json", mets.to_str().unwrap()]);
    let v = &crate::util::only_report(&json(&o));
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    let p53 = v["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "P5.3");
    assert_eq!(p53.map(|f| &f["severity"]), Some(&"warning".into()), "{v:#}");
}

#[test]
fn an_eark_package_is_judged_by_the_eark_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    Package::new().deterministic().quiet().succeeds(&pkg, &sample("nedlib"));
    let out = tmp.path().join("ip");
    let o = webaip(&["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ip = crate::export_eark::root_of(&out);
    // Its structMap points fptr at file groups, as CSIP says: no damage, no METS error.
    let (code, r) = audit(&ip, &[]);
    assert_eq!((code, r["verdict"].as_str()), (0, Some("partial")), "{r:#}");
    assert!(errors(&r["eark"], "findings").is_empty(), "{r:#}");
    assert!(r["eark"]["files_verified"].as_u64().unwrap() > 0, "{r:#}");
    assert!(errors(&r["validation"], "findings").is_empty(), "{r:#}");

    // A broken E-ARK rule: an invalid description.
    let broken = tmp.path().join("broken");
    copy_tree(&ip, &broken);
    let root = fs::read_to_string(broken.join("METS.xml")).unwrap();
    let objid = root.find(" OBJID=\"").unwrap();
    let end = objid + 8 + root[objid + 8..].find('"').unwrap() + 1;
    fs::write(broken.join("METS.xml"), format!("{}{}", &root[..objid], &root[end..])).unwrap();
    let (code, r) = audit(&broken, &[]);
    assert_eq!((code, r["verdict"].as_str()), (3, Some("invalid")), "{r:#}");
    assert_eq!(errors(&r["eark"], "findings"), ["CSIP1"], "{r:#}");

    // A changed byte of a file a representation METS lists: damage.
    let changed = tmp.path().join("changed");
    copy_tree(&ip, &changed);
    let data = fs::read_dir(changed.join("representations/warc/data")).unwrap();
    let file = data.map(|e| e.unwrap().path()).next().unwrap();
    let mut bytes = fs::read(&file).unwrap();
    bytes[100] ^= 1;
    fs::write(&file, bytes).unwrap();
    let (code, r) = audit(&changed, &[]);
    assert_eq!((code, r["verdict"].as_str()), (1, Some("damaged")), "{r:#}");
    assert!(errors(&r, "findings").contains(&"CSIP71".to_string()), "{r:#}");

    // --profile eark-csip on a package that is not one: judged by the E-ARK rules all the same.
    let (code, r) = audit(&pkg, &["--profile", "eark-csip"]);
    assert_eq!((code, r["verdict"].as_str()), (3, Some("invalid")), "{r:#}");
    assert!(!errors(&r["eark"], "findings").is_empty(), "{r:#}");
}
