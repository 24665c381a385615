//! SURT keys against the `surt` package that pywb and cdxj-indexer use: every URL of the
//! corpus (as warcio reads it) and 20,000 generated URLs that combine the cases each rule
//! handles (schemes, user parts, IDNA and numeric hosts, ports, dot segments, escapes, session
//! ids, query order, fragments).

use std::process::Command;

use crate::util::{corpus_archives, oracle_python, repo};

#[test]
fn keys_equal_the_surt_package_on_the_corpus_and_generated_urls() {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/surt/keys.py"))
        .args(corpus_archives())
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("JSON lines are UTF-8");
    let (mut checked, mut corpus_http, mut differ) = (0, 0, Vec::new());
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let (url, want) = (v["url"].as_str().unwrap(), v["key"].as_str().unwrap());
        let got = webaip::index::surt::surt(url);
        if got != want {
            differ.push(format!("{url:?}: surt {want:?}, webaip {got:?}"));
        }
        checked += 1;
        corpus_http +=
            usize::from(checked <= text.lines().count() - 20_000 && url.starts_with("http"));
    }
    assert!(
        checked > 21_000 && corpus_http > 1_000,
        "{checked} URLs, {corpus_http} from the corpus"
    );
    assert!(differ.is_empty(), "{} of {checked} keys differ:\n{}", differ.len(), differ.join("\n"));
}
