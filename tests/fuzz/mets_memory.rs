//! A METS document with one huge event (a 150 MB attribute value) is refused at the event,
//! with its line, in bounded memory, by validate (with and without the schemas) and audit
//! (issue 24, item 10); libxml2 is not given a document our reader could not read.

use std::io::Write;
use std::time::Duration;

use super::child::launch;
use crate::util::{Package, sample};

const PEAK_RSS_LIMIT: u64 = 64 << 20;

#[test]
fn a_150_mb_attribute_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (pkg, mets) = sample_package(dir.path());
    let at = mets.find("OBJID=\"").unwrap();
    let line = mets[..at].matches('\n').count() + 1;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(pkg.join("METS.xml")).unwrap());
        f.write_all(&mets.as_bytes()[..at]).unwrap();
        f.write_all(b"LABEL=\"").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..150 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\" ").unwrap();
        f.write_all(&mets.as_bytes()[at..]).unwrap();
    }
    let exe = crate::util::WEBAIP;
    let doc = pkg.join("METS.xml");
    let schemas = crate::util::schemas().display().to_string();
    let runs: [Vec<&str>; 3] = [
        vec![exe, "validate", doc.to_str().unwrap()],
        vec![exe, "validate", "--schemas", &schemas, doc.to_str().unwrap()],
        vec![exe, "audit", pkg.to_str().unwrap()],
    ];
    for argv in runs {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let run = launch(&argv, &[], None, Duration::from_secs(120), &dir.path().join("stderr"));
        assert!(!run.status.success(), "{argv:?} accepted the document");
        assert!(run.peak_rss < PEAK_RSS_LIMIT, "{argv:?}: peak RSS {} MB", run.peak_rss >> 20);
        // What was said, and where: the line of the huge tag.
        let said = std::process::Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&said.stdout),
            String::from_utf8_lossy(&said.stderr)
        );
        assert!(text.contains("longer than 8388608 bytes"), "{argv:?}: {text}");
        assert!(text.contains(&format!("{line}")), "{argv:?}: line {line} not named: {text}");
        assert!(!text.contains("without a diagnostic"), "{argv:?}: {text}");
    }
}

/// Review of issue 24: 150 MB of text inside one PREMIS value, cut by empty comments into
/// events under the reader's bound, is kept to 1 MiB and reported (it took 482 MB).
#[test]
fn a_150_mb_value_split_by_comments_is_checked_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mets) = sample_package(dir.path());
    let tag = "<premis:objectIdentifierValue>";
    let at = mets.find(tag).unwrap() + tag.len();
    let doc = dir.path().join("text.xml");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&doc).unwrap());
        f.write_all(&mets.as_bytes()[..at]).unwrap();
        let chunk = vec![b'x'; 4 << 20];
        for _ in 0..38 {
            f.write_all(&chunk).unwrap();
            f.write_all(b"<!---->").unwrap();
        }
        f.write_all(&mets.as_bytes()[at..]).unwrap();
    }
    let argv: Vec<String> = [crate::util::WEBAIP, "validate", doc.to_str().unwrap()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let run = launch(&argv, &[], None, Duration::from_secs(120), &dir.path().join("stderr"));
    assert!(!run.status.success(), "the document was accepted");
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB", run.peak_rss >> 20);
    let said = crate::util::webaip(&["validate", doc.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&said.stdout);
    assert!(text.contains("a value longer than 1048576 bytes"), "{text}");
}

/// IDREF tokens a METS may hold and still be handed to libxml2 (docs/security.md).
const REF_BOUND: usize = 1_000_000;

/// PREMIS's links are IDREFs too: 1,000,001 `LinkAgentXmlID`s in one event (generated, 55
/// MB) pass the bound inside PREMIS, where only METS's attributes were counted. The schemas
/// are skipped in bounded memory, a SIZE notice names the PREMIS element, and `validate -q`,
/// silent on the plainly valid sample, says the skipped verdict.
#[test]
fn premis_idrefs_past_the_bound_are_not_handed_to_libxml2() {
    let dir = tempfile::tempdir().unwrap();
    let (pkg, mets) = sample_package(dir.path());
    let sample = pkg.join("METS.xml");
    let quiet = crate::util::webaip(&["validate", "-q", sample.to_str().unwrap()]);
    assert_eq!(quiet.status.code(), Some(0));
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty(), "the sample is plainly valid");
    let id = regex::Regex::new(r#" ID="([^"]+)""#).unwrap().captures(&mets).unwrap()[1].to_string();
    let event = mets.find("<premis:event ").expect("a PREMIS event");
    let at = event + mets[event..].find('>').unwrap() + 1;
    let doc = dir.path().join("links.xml");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&doc).unwrap());
        f.write_all(&mets.as_bytes()[..at]).unwrap();
        let link = format!("<premis:linkingAgentIdentifier LinkAgentXmlID=\"{id}\"/>\n");
        for _ in 0..=REF_BOUND {
            f.write_all(link.as_bytes()).unwrap();
        }
        f.write_all(&mets.as_bytes()[at..]).unwrap();
    }
    let argv: Vec<String> = [crate::util::WEBAIP, "validate", "-q", doc.to_str().unwrap()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let run = launch(&argv, &[], None, Duration::from_secs(120), &dir.path().join("stderr"));
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB", run.peak_rss >> 20);
    assert!(run.stderr.contains("XML Schema SKIPPED"), "-q says the verdict: {}", run.stderr);
    let o = crate::util::webaip(&["validate", "--json", doc.to_str().unwrap()]);
    let v = crate::util::only_report(&crate::util::json(&o));
    assert_eq!(v["xsd"]["status"], "skipped", "{:#}", v["xsd"]);
    let size: Vec<&serde_json::Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "SIZE").collect();
    assert_eq!(size.len(), 1, "{size:#?}");
    assert_eq!(size[0]["element"], "linkingAgentIdentifier", "{:#}", size[0]);
    assert!(size[0]["message"].as_str().unwrap().contains("IDREF tokens"), "{:#}", size[0]);
}

/// The sample Heritrix job packaged in `dir`: the package and its METS text.
fn sample_package(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    let pkg = dir.join("p");
    Package::new().quiet().succeeds(&pkg, &sample("heritrix-job"));
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    (pkg, mets)
}
