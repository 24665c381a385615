//! Submissions of real ARC and WARC files written by other tools (the shared corpus): a copied
//! WARC and a migrated ARC become AIPs the schema oracle and a deep audit accept, in both
//! listing modes.

use std::path::Path;

use super::{audit_deep, ingest, report};
use crate::mets_package::oracle_validate;
use crate::util::{Package, corpus};

#[test]
fn copied_warcs_and_migrated_arcs_become_aips() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = [
        corpus().join("warc/jwarc-cc.warc.gz"),
        corpus().join("warc/pywb-example-wget-1-14.warc.gz"),
        corpus().join("arc/jwat-1-1-20110922131213-00000-svc-VirtualBox.arc"),
    ];
    for (i, input) in inputs.iter().enumerate() {
        let ssip = tmp.path().join(format!("ssip-{i}"));
        Package::new().quiet().succeeds(&ssip, input);
        for mode in ["full", "minimal"] {
            let out = tmp.path().join(format!("aips-{mode}"));
            let r = report(&ingest(&ssip, &out, &["--mode", mode]));
            let aip = out.join(format!("ssip-{i}"));
            assert_eq!(Path::new(r["aip"].as_str().unwrap()), aip);
            let a = audit_deep(&aip);
            assert_eq!(a["verdict"], "intact", "{}: {mode}: {a}", input.display());
            let (ok, text) = oracle_validate(&aip.join("METS.xml"));
            assert!(ok, "{}: {mode}: {text}", input.display());
        }
    }
}
