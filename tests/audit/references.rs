//! `audit --with`: every revisit is followed to its original, whose payload is read and
//! hashed. WARCs written by warcio (tests/audit/make_revisits.py): an original response, and
//! revisits naming it by record id, by target URI and date, with another payload digest, and
//! naming a record that exists nowhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Package, oracle_python, repo, webaip};

/// The warcio-written WARCs, each packaged on its own (and the original with the by-id revisit
/// in one package), in a temporary folder.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let warcs = root.join("warcs");
        std::fs::create_dir(&warcs).unwrap();
        let o = Command::new(oracle_python())
            .arg(repo().join("tests/audit/make_revisits.py"))
            .arg(&warcs)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for name in ["orig", "revisit-by-id", "revisit-by-uri", "revisit-wrong", "revisit-nowhere"]
        {
            let src = warcs.join(format!("{name}.warc.gz"));
            Package::new().quiet().deterministic().succeeds(&root.join(name), &src);
        }
        let both = [warcs.join("orig.warc.gz"), warcs.join("revisit-by-id.warc.gz")];
        let o = Package::new()
            .quiet()
            .deterministic()
            .run_all(&root.join("both"), &[both[0].as_path(), both[1].as_path()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        Fixture { _dir: dir, root }
    }

    fn pkg(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

/// `audit --json ARGS... PACKAGE`: the exit status and the package's report.
fn audit(pkg: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut argv = vec!["audit", "--json"];
    argv.extend_from_slice(args);
    argv.push(pkg.to_str().unwrap());
    let o = webaip(&argv);
    let reports: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap(), reports["packages"][0].clone())
}

fn unresolved(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["references"]["unresolved"].as_array().unwrap().clone()
}

#[test]
fn revisits_resolve_to_originals_with_the_same_payload() {
    let f = Fixture::new();
    let orig = f.pkg("orig");
    let orig_arg = orig.to_str().unwrap();
    for name in ["revisit-by-id", "revisit-by-uri"] {
        let (code, r) = audit(&f.pkg(name), &["--with", orig_arg]);
        assert_eq!(code, 0, "{name}: {r:#}");
        assert_eq!(r["references"]["revisits"], 1, "{name}");
        assert_eq!(r["references"]["resolved"], 1, "{name}: {r:#}");
        assert!(unresolved(&r).is_empty());
    }
    // Within one package, no other package is needed.
    let (code, r) = audit(&f.pkg("both"), &["--references"]);
    assert_eq!((code, &r["references"]["resolved"]), (0, &serde_json::json!(1)), "{r:#}");
    // Without --with, revisits are not followed at all.
    let (code, r) = audit(&f.pkg("revisit-by-id"), &[]);
    assert_eq!(code, 0);
    assert!(r.get("references").is_none());
}

#[test]
fn each_broken_reference_is_named_with_its_container_and_offset() {
    let f = Fixture::new();
    let orig = f.pkg("orig");
    let orig_arg = orig.to_str().unwrap();
    // Alone, the revisit's original is nowhere.
    let (code, r) = audit(&f.pkg("revisit-by-id"), &["--references"]);
    assert_eq!(code, 1, "{r:#}");
    let u = unresolved(&r);
    assert_eq!(u.len(), 1);
    assert!(u[0]["file"].as_str().unwrap().starts_with("content/"), "{u:?}");
    assert!(u[0]["offset"].is_u64());
    assert_eq!(u[0]["refers_to"]["record_id"], "<urn:uuid:00000000-0000-4000-8000-000000000001>");
    assert!(u[0]["problem"].as_str().unwrap().contains("no original found"), "{u:?}");
    let finding = r["findings"].as_array().unwrap().iter().find(|x| x["rule"] == "P6.4").unwrap();
    assert_eq!((&finding["file"], &finding["offset"]), (&u[0]["file"], &u[0]["offset"]));

    // The original holds other bytes than the revisit says: the digest found is named, and it is
    // the original payload's (what warcio wrote). The original is in the other package: the
    // fault is that package's (a warning naming it), not damage of the one audited.
    let (code, r) = audit(&f.pkg("revisit-wrong"), &["--with", orig_arg]);
    assert_eq!(code, 0, "{r:#}");
    let problem = unresolved(&r)[0]["problem"].as_str().unwrap().to_string();
    assert!(problem.contains("holds other bytes"), "{problem}");
    assert!(problem.contains("sha1:NRR3JJQ7MDZFWJNO5KYMNCXQF4KXXODF"), "{problem}");
    assert_eq!(unresolved(&r)[0]["fault_in"], orig_arg, "{r:#}");

    let (code, r) = audit(&f.pkg("revisit-nowhere"), &["--with", orig_arg]);
    assert_eq!((code, unresolved(&r).len()), (1, 1));

    // The original's container removed: the reference breaks, and the container that could
    // not be searched is named, as where the fault is (the original may be there).
    let content = orig.join("content");
    for e in std::fs::read_dir(&content).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let (code, r) = audit(&f.pkg("revisit-by-id"), &["--with", orig_arg]);
    assert_eq!((code, unresolved(&r).len()), (0, 1), "{r:#}");
    let fault = unresolved(&r)[0]["fault_in"].as_str().unwrap_or_default().to_string();
    assert!(fault.contains(orig_arg) && fault.contains("content/"), "{r:#}");
    let unreadable = r["references"]["unreadable"].as_array().unwrap();
    assert!(unreadable.iter().any(|x| x.as_str().unwrap().contains("content/")), "{unreadable:?}");
}

/// A package deduplicated against another names it in its METS (PREMIS `requires` by OBJID):
/// `audit --references` without it says which package holds the originals; given, it is
/// searched, and said so.
#[test]
fn a_missing_original_names_the_package_the_mets_says_holds_it() {
    let f = Fixture::new();
    let orig = f.pkg("orig");
    let again = f.root.join("again");
    let source = f.root.join("warcs/orig.warc.gz");
    let dedup = ["--dedup-against", orig.to_str().unwrap()];
    Package::new().quiet().deterministic().args(&dedup).succeeds(&again, &source);
    let mets = std::fs::read_to_string(orig.join("METS.xml")).unwrap();
    let at = mets.find("OBJID=\"").unwrap() + 7;
    let objid = &mets[at..at + mets[at..].find('"').unwrap()];

    // Not given, the package the METS names is not searched: the revisit is unchecked (a
    // warning naming it), not damage of this package.
    let (code, r) = audit(&again, &["--references"]);
    assert_eq!((code, &r["verdict"]), (0, &serde_json::json!("partial")), "{r:#}");
    let unchecked = r["unchecked"].as_array().unwrap();
    assert!(unchecked.iter().any(|u| u["kind"] == "original_elsewhere"), "{r:#}");
    let finding = r["findings"].as_array().unwrap().iter().find(|x| x["rule"] == "P6.4").unwrap();
    assert_eq!(finding["severity"], "warning", "{r:#}");
    let u = unresolved(&r);
    assert_eq!(u.len(), 1, "{r:#}");
    let problem = u[0]["problem"].as_str().unwrap();
    assert!(
        problem.contains(&format!("the METS says the originals are in package {objid}")),
        "{problem}"
    );
    assert_eq!(r["references"]["originals_in"][0]["objid"], objid, "{r:#}");
    assert!(r["references"]["originals_in"][0]["searched"].is_null());

    let (code, r) = audit(&again, &["--with", orig.to_str().unwrap()]);
    assert_eq!((code, &r["references"]["resolved"]), (0, &serde_json::json!(1)), "{r:#}");
    assert_eq!(r["references"]["originals_in"][0]["searched"], orig.to_str().unwrap());
}
