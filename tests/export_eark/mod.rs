//! `webaip export eark` and `webaip validate --profile eark-csip`: every sample package is
//! exported as a SIP and an AIP, as a folder and as a ZIP; eark-validator 1.1.3 (run offline,
//! its vocabularies served from the E-ARK-CSIP v2.2.0 copies in data/eark) and our own check
//! judge each; mutations are caught by the right rule.

use std::path::{Path, PathBuf};
use std::process::Command;

mod checksums;
mod damaged;
mod fuzz;
mod hostile;
mod reference;

use crate::fuzz::child::launch_webaip;
use crate::util::{
    EarkError, Package, eark_validator, eark_validator_located, json, oracle_python, package, repo,
    sample, webaip, webaip_command,
};

const SAMPLES: &[&str] = &["heritrix-job", "pandas/40123/20040517-1412", "nedlib", "kulturarw3"];

/// The sample `rel` packaged (deterministic, quiet) into a folder of its own below `tmp`.
fn packaged_sample(tmp: &Path, rel: &str) -> PathBuf {
    let out = tmp.join(format!("pkg-{}", rel.replace('/', "-")));
    package(Package::new().deterministic().quiet(), &out, &[&sample(rel)]).succeeded().out
}

/// Our check's findings (rule ids) and exit code.
fn our_check(ip: &Path) -> (i32, Vec<String>) {
    let (code, findings, _) = our_check_warned(ip);
    (code, findings)
}

/// Our check's exit code, findings (MUST rules) and warnings (SHOULD/MAY rules), by rule id.
fn our_check_warned(ip: &Path) -> (i32, Vec<String>, Vec<String>) {
    let o = webaip(&["validate", "--profile", "eark-csip", "--json", ip.to_str().unwrap()]);
    let v = crate::util::only_report(&json(&o));
    let ids = |k: &str| -> Vec<String> {
        let all = v[k].as_array().unwrap().iter();
        all.map(|f| f["rule"].as_str().unwrap().to_string()).collect()
    };
    (o.status.code().unwrap(), ids("findings"), ids("warnings"))
}

/// The package folder an export made: the ZIP itself, or the one folder (named by the OBJID)
/// in the folder `out`.
pub(crate) fn root_of(out: &Path) -> PathBuf {
    if out.extension().is_some_and(|e| e == "zip") {
        return out.to_path_buf();
    }
    let mut inside: Vec<_> = std::fs::read_dir(out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(inside.len(), 1, "{inside:?}");
    inside.pop().unwrap()
}

/// Exports `pkg` to `out`; returns the package made (the ZIP, or its root folder in `out`).
fn export(pkg: &Path, out: &Path, kind: &str) -> PathBuf {
    let o = webaip(&[
        "export",
        "eark",
        pkg.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--type",
        kind,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    root_of(out)
}

/// What eark-validator 1.1.3 (SIP 2.1.0 rules) says of every SIP 2.2: its SIP14 asks for an
/// unprefixed `NOTETYPE` on every CREATOR agent's note, which the METS schema forbids; its SIP2
/// wants the SIP 2.1 profile URL.
const SIP_2_1_ONLY: &[&str] = &["SIP14", "SIP2"];

/// The software agent's rules (CSIP12-16), which eark-validator 1.1.3 also applies to the
/// submitting agent SIP 2.2 requires (SIP15-18): excused there only, not on the software agent.
const SOFTWARE_AGENT_RULES: &[&str] = &["CSIP12", "CSIP13", "CSIP15", "CSIP16"];

/// Where eark-validator locates an error on the root METS's second agent: the submitting
/// agent, which the export writes after the software agent.
const SUBMITTER_AT: &str =
    "*[local-name()='agent' and namespace-uri()='http://www.loc.gov/METS/'][2]";

/// eark-validator's errors on `kind`'s package but those of its SIP 2.1 rules.
fn errors_but_sip_2_1(errors: &[EarkError], kind: &str) -> Vec<String> {
    let only_2_1 = |e: &EarkError| {
        let at_submitter =
            SOFTWARE_AGENT_RULES.contains(&e.rule.as_str()) && e.location.ends_with(SUBMITTER_AT);
        kind == "sip" && (SIP_2_1_ONLY.contains(&e.rule.as_str()) || at_submitter)
    };
    errors.iter().filter(|e| !only_2_1(e)).map(|e| e.rule.clone()).collect()
}

#[test]
fn a_broken_software_agent_of_a_sip_is_not_excused() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let ip = export(&pkg, &tmp.path().join("sip"), "sip");
    let (_, errors) = eark_validator_located(&ip);
    assert_eq!(errors_but_sip_2_1(&errors, "sip"), Vec::<String>::new(), "{errors:?}");
    // The software agent (the first) loses its one note (CSIP15).
    let mets = ip.join("METS.xml");
    let s = std::fs::read_to_string(&mets).unwrap();
    let start = s.find("<mets:note").unwrap();
    let end = start + s[start..].find("</mets:note>").unwrap() + "</mets:note>".len();
    std::fs::write(&mets, format!("{}{}", &s[..start], &s[end..])).unwrap();
    let (_, errors) = eark_validator_located(&ip);
    assert!(errors_but_sip_2_1(&errors, "sip").contains(&"CSIP15".into()), "{errors:?}");
}

#[test]
fn every_sample_exports_as_sip_and_aip_that_both_validators_accept() {
    let tmp = tempfile::tempdir().unwrap();
    for rel in SAMPLES {
        let pkg = packaged_sample(tmp.path(), rel);
        for kind in ["sip", "aip"] {
            for form in ["dir", "zip"] {
                let name = format!("{}-{kind}", rel.replace('/', "-"));
                let out = match form {
                    "zip" => tmp.path().join(format!("{name}.zip")),
                    _ => tmp.path().join(name),
                };
                let ip = export(&pkg, &out, kind);
                let (structure, errors) = eark_validator_located(&ip);
                assert_eq!(structure, "WellFormed", "{rel} {kind} {form}");
                assert!(
                    errors_but_sip_2_1(&errors, kind).is_empty(),
                    "{rel} {kind} {form}: {errors:?}"
                );
                let (code, findings) = our_check(&ip);
                assert_eq!((code, findings), (0, vec![]), "{rel} {kind} {form}");
            }
        }
    }
}

#[test]
fn export_copies_the_containers_and_leaves_no_viral_file() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "heritrix-job");
    let out = export(&pkg, &tmp.path().join("ip"), "sip");
    let mut n = 0;
    for e in std::fs::read_dir(pkg.join("content")).unwrap() {
        let e = e.unwrap();
        let copied = out.join("representations/warc/data").join(e.file_name());
        assert_eq!(std::fs::read(e.path()).unwrap(), std::fs::read(&copied).unwrap());
        n += 1;
    }
    assert!(n > 0);
    for d in [
        "metadata/descriptive/mods.xml",
        "metadata/descriptive/dc.xml",
        "metadata/preservation/premis.xml",
        "metadata/other/package-mets.xml",
        "representations/warc/METS.xml",
        "schemas/DILCISExtensionMETS.xsd",
    ] {
        assert!(out.join(d).is_file(), "{d}");
    }
    assert_eq!(
        std::fs::read(pkg.join("METS.xml")).unwrap(),
        std::fs::read(out.join("metadata/other/package-mets.xml")).unwrap()
    );
    // The METS documents are valid against the METS schema (xmllint, offline copies).
    for m in ["METS.xml", "representations/warc/METS.xml"] {
        let st = Command::new("xmllint")
            .args(["--noout", "--nonet", "--schema"])
            .arg(repo().join("data/eark/schemas/mets.xsd"))
            .arg(out.join(m))
            .output()
            .unwrap();
        assert!(st.status.success(), "{m}: {}", String::from_utf8_lossy(&st.stderr));
    }
}

fn mutated(tmp: &Path, name: &str, f: impl FnOnce(&Path)) -> PathBuf {
    let pkg = packaged_sample(tmp, "nedlib");
    let out = export(&pkg, &tmp.join(name), "aip");
    f(&out);
    out
}

#[test]
fn a_missing_required_attribute_is_caught_by_both() {
    let tmp = tempfile::tempdir().unwrap();
    let out = mutated(tmp.path(), "no-objid", |ip| {
        let p = ip.join("METS.xml");
        let s = std::fs::read_to_string(&p).unwrap();
        let start = s.find(" OBJID=\"").unwrap();
        let end = start + 8 + s[start + 8..].find('"').unwrap() + 1;
        std::fs::write(&p, format!("{}{}", &s[..start], &s[end..])).unwrap();
    });
    let (code, findings) = our_check(&out);
    assert_eq!((code, findings), (1, vec!["CSIP1".to_string()]));
    assert!(eark_validator(&out).1.contains(&"CSIP1".to_string()));
}

#[test]
fn a_file_whose_checksum_is_wrong_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let out = mutated(tmp.path(), "bad-sum", |ip| {
        let data = ip.join("representations/warc/data");
        let f = std::fs::read_dir(&data).unwrap().next().unwrap().unwrap().path();
        let mut b = std::fs::read(&f).unwrap();
        let last = b.len() - 1;
        b[last] ^= 0xff; // same size, other bytes
        std::fs::write(&f, b).unwrap();
    });
    let (code, findings) = our_check(&out);
    assert_eq!((code, findings), (1, vec!["CSIP71".to_string()]));
}

#[test]
fn a_missing_representation_mets_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let out = mutated(tmp.path(), "no-rep-mets", |ip| {
        std::fs::remove_file(ip.join("representations/warc/METS.xml")).unwrap();
    });
    // CSIPSTR12 is a SHOULD (a warning); the root METS pointing at nothing breaks CSIP110.
    let (code, findings, warnings) = our_check_warned(&out);
    assert_eq!((code, warnings), (1, vec!["CSIPSTR12".to_string()]), "{findings:?}");
    assert!(findings.contains(&"CSIP110".to_string()), "{findings:?}");
}

/// `bomb.py` run on `zip`, writing `out`.
fn bomb(zip: &Path, out: &Path, args: &[&str]) {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/export_eark/bomb.py"))
        .arg(zip)
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "bomb.py {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_zip_bomb_is_refused_before_it_is_unpacked() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let zip = tmp.path().join("aip.zip");
    export(&pkg, &zip, "aip");
    // 40 members of 64 MiB each (2.5 GiB) sharing one compressed copy: refused unopened.
    let overlap = tmp.path().join("overlap.zip");
    bomb(&zip, &overlap, &["overlap", "40", "64"]);
    // A member that declares 1,000 bytes and inflates to 64 MiB: counted as written, refused.
    let liar = tmp.path().join("liar.zip");
    bomb(&zip, &liar, &["liar", "64"]);
    let scratch = tmp.path().join("scratch");
    // The overlap refuses the ZIP whole (exit 2); the liar's entry alone, as damaged (a
    // finding, exit 1): either way the bytes past the declared size are never written.
    for (bomb, code, why) in [(&overlap, 2, "overlaps entry"), (&liar, 1, "damaged")] {
        std::fs::create_dir(&scratch).unwrap();
        let o = webaip_command()
            .env("TMPDIR", &scratch)
            .args(["validate", "--profile", "eark-csip", bomb.to_str().unwrap()])
            .output()
            .unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(code), "{text}");
        assert!(text.contains(bomb.to_str().unwrap()) && text.contains(why), "{text}");
        let left: u64 = walkdir::WalkDir::new(&scratch)
            .into_iter()
            .filter_map(|e| e.ok()?.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        assert_eq!(left, 0, "the temporary folder is left behind");
        std::fs::remove_dir_all(&scratch).unwrap();
    }
    // The package itself still unpacks and passes.
    assert_eq!(our_check(&zip), (0, vec![]));
}

#[test]
fn a_large_mets_is_checked_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = mutated(tmp.path(), "large-mets", |ip| {
        // 480,000 pointers into the Documentation division (about 30 MB): each a METS
        // element with an attribute, none of them a file to verify.
        let p = ip.join("METS.xml");
        let s = std::fs::read_to_string(&p).unwrap();
        let end = s.find("LABEL=\"Documentation\">").unwrap() + 22;
        let mut big = String::with_capacity(s.len() + 32_000_000);
        big.push_str(&s[..end]);
        for i in 0..480_000 {
            big.push_str(&format!(
                "\n<mets:fptr FILEID=\"uuid-pointer-number-{i:08}-of-the-test\"/>"
            ));
        }
        big.push_str(&s[end..]);
        std::fs::write(&p, big).unwrap();
    });
    let size = std::fs::metadata(out.join("METS.xml")).unwrap().len();
    assert!(size > 28_000_000, "{size} bytes");
    let run =
        launch_webaip(&["validate", "--profile", "eark-csip", out.to_str().unwrap()], tmp.path());
    eprintln!("METS of {} MB: peak RSS {} MB", size >> 20, run.peak_rss >> 20);
    assert!(run.status.success(), "{:?} {}", run.status, run.stderr);
    assert!(run.peak_rss < 64 << 20, "peak RSS {} MB", run.peak_rss >> 20);
}
