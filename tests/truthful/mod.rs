//! Packages say what is so (issue 14): a record range is a gzip member only where the METS
//! states a GZIP transform (tests/audit checks that on every corpus WARC with
//! tests/oracle/check_package.py), and a copied HTTP response's payload is typed as its entity,
//! as warcio reads the HTTP header, not as `application/http`.

use std::collections::HashMap;
use std::process::Command;

use crate::util::{corpus, oracle_python, repo};

/// BEGIN of each record `<file>` -> MIMETYPE of its payload `<file>`.
fn payload_types(mets: &str) -> HashMap<u64, String> {
    let attr = |el: &str, name: &str| {
        let key = format!(" {name}=\"");
        el.find(&key).map(|i| {
            let v = &el[i + key.len()..];
            v[..v.find('"').unwrap()].to_string()
        })
    };
    let mut out = HashMap::new();
    let mut record_begin = None;
    for el in mets.split("<mets:file ").skip(1) {
        let el = format!(" {}", &el[..el.find('>').unwrap()]);
        let el = el.as_str();
        let id = attr(el, "ID").unwrap();
        if id.contains("-R") && !id.ends_with("-P") {
            record_begin = attr(el, "BEGIN").and_then(|b| b.parse::<u64>().ok());
        } else if id.ends_with("-P")
            && let Some(b) = record_begin
        {
            out.insert(b, attr(el, "MIMETYPE").unwrap());
        }
    }
    out
}

#[test]
fn copied_responses_are_typed_as_their_entity() {
    let tmp = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for name in ["pywb-example-wget-1-14.warc.gz", "nas-NAS-20100909163324-00000-mette.kb.dk.warc"]
    {
        let input = corpus().join("warc").join(name);
        let pkg = tmp.path().join(name);
        let o = Command::new(env!("CARGO_BIN_EXE_webaip"))
            .args(["package", "--quiet", "--no-virus-check", "--mode", "full", "--out"])
            .arg(&pkg)
            .arg(&input)
            .env_remove("WEBAIP_CLAMD")
            .env_remove("WEBAIP_SCHEMAS")
            .output()
            .unwrap();
        assert!(pkg.join("METS.xml").is_file(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let o = Command::new(oracle_python())
            .arg(repo().join("tests/oracle/entity_types.py"))
            .arg(&input)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let expected: HashMap<String, Option<String>> = serde_json::from_slice(&o.stdout).unwrap();
        let container = std::fs::read_dir(pkg.join("content")).unwrap().next().unwrap().unwrap();
        let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
        // The copy is byte-exact, so offsets in the input are offsets in the container.
        assert_eq!(std::fs::read(container.path()).unwrap(), std::fs::read(&input).unwrap());
        let ours = payload_types(&mets);
        assert!(!expected.is_empty(), "{name}: no HTTP responses");
        for (offset, mime) in &expected {
            let Some(got) = ours.get(&offset.parse::<u64>().unwrap()) else { continue };
            let want = mime.clone().unwrap_or_else(|| "application/octet-stream".into());
            assert_eq!(got, &want, "{name} record at {offset}");
            assert!(!got.starts_with("application/http"), "{name} at {offset}: {got}");
            compared += 1;
        }
    }
    assert!(compared >= 10, "only {compared} payloads compared");
}
