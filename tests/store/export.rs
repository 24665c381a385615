//! `webaip store get --export-wacz --export-eark`: a package fetched from a file system
//! replica, verified, then exported; py-wacz accepts the WACZ and eark-validator (offline) the
//! E-ARK AIP; an E-ARK output that exists is refused before anything is fetched.

use std::collections::HashMap;

use super::{config, objid, store};
use crate::util::{Package, eark_validator, package, repo, wacz_validate};

#[test]
fn a_fetched_package_is_exported_as_wacz_and_eark() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = t.join("pkg");
    package(Package::new().quiet(), &pkg, &[&repo().join("samples/nedlib")]).succeeded();
    let cfg = config(t, None);
    let env = HashMap::new();
    let (code, put) = store(&env, &cfg, &["put", pkg.to_str().unwrap()]);
    assert_eq!(code, 0, "{put}");
    let id = objid(&pkg);
    let (back, wacz, ip) = (t.join("back"), t.join("back.wacz"), t.join("back-aip.zip"));
    // An E-ARK output that exists: refused, and nothing fetched.
    std::fs::write(&ip, b"someone's").unwrap();
    let args = |to: &std::path::Path| {
        vec![
            "get".to_string(),
            id.clone(),
            "--out".into(),
            to.display().to_string(),
            "--export-wacz".into(),
            wacz.display().to_string(),
            "--export-eark".into(),
            ip.display().to_string(),
            "--eark-type".into(),
            "aip".into(),
        ]
    };
    let refused: Vec<String> = args(&back);
    let refused: Vec<&str> = refused.iter().map(String::as_str).collect();
    let (code, said) = store(&env, &cfg, &refused);
    assert_eq!(code, 2, "{said}");
    assert!(!back.exists() && !wacz.exists(), "fetched before refusing");
    assert_eq!(std::fs::read(&ip).unwrap(), b"someone's");
    std::fs::remove_file(&ip).unwrap();

    let (code, got) = store(&env, &cfg, &refused);
    assert_eq!(code, 0, "{got}");
    assert_eq!(got["wacz"]["objid"].as_str(), Some(id.as_str()), "{got}");
    assert_eq!(got["eark"]["objid"].as_str(), Some(id.as_str()), "{got}");
    // What was written is the output, not the staging folder it was made in.
    assert_eq!(got["eark"]["written"].as_str(), ip.to_str(), "{got}");
    assert!(!got["copies"].as_array().unwrap().is_empty());
    assert_eq!(
        std::fs::read(back.join("METS.xml")).unwrap(),
        std::fs::read(pkg.join("METS.xml")).unwrap()
    );
    let (ok, said) = wacz_validate(&wacz);
    assert!(ok, "{said}");
    let (structure, errors) = eark_validator(&ip);
    assert_eq!((structure.as_str(), errors.len()), ("WellFormed", 0), "{errors:?}");
}
