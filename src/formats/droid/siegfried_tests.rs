//! webaip's DROID signature matcher against siegfried (through pygfried), an independent
//! PRONOM identifier, on every payload of every WARC and ARC file of the corpus.

use std::process::Command;

use super::Signatures;
use crate::test_support::{corpus_archives, oracle_python, repo};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Report {
    siegfried: String,
    signatures: Vec<String>,
    files: Vec<Payload>,
}

#[derive(Debug, Deserialize)]
struct Payload {
    name: String,
    source: String,
    offset: u64,
    uri: Option<String>,
    matches: Vec<Match>,
}

#[derive(Debug, Deserialize)]
struct Match {
    id: String,
    basis: String,
}

#[test]
fn agrees_with_siegfried_on_every_corpus_payload_it_identifies_by_signature() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/siegfried_payloads.py"))
        .arg(dir.path())
        .args(corpus_archives())
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "siegfried oracle failed (pygfried is installed by scripts/setup-test-env.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report = serde_json::from_slice(&out.stdout).expect("oracle prints JSON");
    let sigs = Signatures::shipped().expect("the shipped signature file compiles");
    let (mut compared, mut agreed, mut ours_only) = (0usize, 0usize, 0usize);
    let mut by_container = 0usize;
    let mut disagreements = Vec::new();
    for p in &report.files {
        let path = dir.path().join(&p.name);
        let found = sigs.examine_seekable(std::fs::File::open(&path).unwrap()).unwrap();
        let ours: Vec<String> = found.formats.iter().map(|f| f.puid.clone()).collect();
        // Only what siegfried found by bytes or by container, as one format: its text
        // sniffing and extension matches are no part of DROID signatures.
        let [m] = p.matches.as_slice() else { continue };
        if !m.basis.contains("byte match") && !m.basis.contains("container") {
            if !ours.is_empty() {
                ours_only += 1;
            }
            continue;
        }
        compared += 1;
        by_container += usize::from(m.basis.contains("container"));
        if ours == [m.id.clone()] {
            agreed += 1;
        } else {
            disagreements.push(format!(
                "{} at {} ({}): siegfried {} ({}), webaip {:?}",
                p.source,
                p.offset,
                p.uri.as_deref().unwrap_or("-"),
                m.id,
                m.basis,
                ours
            ));
        }
    }
    eprintln!(
        "siegfried {} ({}), webaip signature file v{}: {} payloads, {compared} identified by \
         siegfried's signatures ({by_container} by container), {agreed} the same by webaip; \
         {ours_only} matched by webaip only where siegfried used no signature",
        report.siegfried,
        report.signatures.join(", "),
        sigs.version(),
        report.files.len(),
    );
    for d in &disagreements {
        eprintln!("  disagreement: {d}");
    }
    assert!(compared >= 100, "too few payloads to compare ({compared}): is the corpus complete?");
    assert!(
        agreed * 100 >= compared * 99,
        "{agreed} of {compared} agree (under 99 %):\n{}",
        disagreements.join("\n")
    );
}
