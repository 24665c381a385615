//! A METS whose reference attributes hold more IDREF tokens than libxml2 is handed (a hostile
//! review's `DMDID`s of 4,000,000 tokens took 3.3 GB in its schema validation): `validate`,
//! `audit` and `report --validate` say the schemas were not checked, why and where (the file,
//! the line and byte of the element that passed the bound) in a SIZE warning; a METS whose
//! references all resolve is not called invalid for its size alone.

use std::path::Path;

use serde_json::Value;

use super::{packaged, samples};
use crate::util::{only_report, webaip};

/// IDREF tokens a METS may hold and still be handed to libxml2 (docs/security.md).
const BOUND: usize = 1_000_000;

/// The attributes whose tokens count (METS's IDREF and IDREFS attributes).
const REFS: [&str; 5] = ["ADMID", "DMDID", "FILEID", "STRUCTID", "CONTENTIDS"];

/// The package's METS with each `ADMID` its first ID repeated, past `BOUND` tokens in all
/// (each tag stays under the reader's 8 MiB): the line and byte of the first METS tag at which
/// the document's reference tokens pass `BOUND`, counted here over the tags in order.
fn hostile(pkg: &Path) -> (usize, usize) {
    let path = pkg.join("METS.xml");
    let mets = std::fs::read_to_string(&path).unwrap();
    let admid = regex::Regex::new(r#" ADMID="([^" ]+)[^"]*""#).unwrap();
    let each = BOUND / admid.find_iter(&mets).count() + 1;
    let longer = admid.replace_all(&mets, |c: &regex::Captures| {
        format!(r#" ADMID="{}""#, vec![&c[1]; each].join(" "))
    });
    std::fs::write(&path, longer.as_bytes()).unwrap();
    let tag = regex::Regex::new(r"<mets:[A-Za-z]+(\s[^>]*)?>").unwrap();
    let attr = regex::Regex::new(r#"\s([A-Z]+)="([^"]*)""#).unwrap();
    let mut tokens = 0;
    for t in tag.find_iter(&longer) {
        for a in attr.captures_iter(t.as_str()) {
            if REFS.contains(&&a[1]) {
                tokens += a[2].split_whitespace().count();
            }
        }
        if tokens > BOUND {
            return (longer[..t.start()].matches('\n').count() + 1, t.start());
        }
    }
    panic!("only {tokens} reference tokens");
}

#[test]
fn a_mets_with_more_idref_tokens_than_the_bound_is_not_schema_checked_and_not_invalid_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = packaged(dir.path(), samples()[1].0, &samples()[1].1);
    let (line, byte) = hostile(&pkg);
    let mets = pkg.join("METS.xml");
    let o = webaip(&["validate", "--json", mets.to_str().unwrap()]);
    let all: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    let v = only_report(&all);
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    assert_eq!(v["valid"], true, "{v:#}");
    assert_eq!(v["xsd"]["status"], "skipped", "{:#}", v["xsd"]);
    let reason = v["xsd"]["reason"].as_str().unwrap();
    let at = format!("line {line} (byte {byte})");
    assert!(reason.contains(mets.to_str().unwrap()) && reason.contains(&at), "{reason} / {at}");
    let size: Vec<&Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "SIZE").collect();
    assert_eq!(size.len(), 1, "{v:#}");
    assert_eq!(size[0]["line"].as_u64(), Some(line as u64));
    assert_eq!(size[0]["severity"], "warning", "{v:#}");
    // Quiet drops detail, never a verdict that is not plainly VALID: the skipped schemas
    // are said, on standard error, and nothing else.
    let q = webaip(&["validate", "-q", mets.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&q.stderr);
    assert_eq!(q.status.code(), Some(0), "{said}");
    assert!(q.stdout.is_empty(), "{}", String::from_utf8_lossy(&q.stdout));
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("VALID, XML Schema SKIPPED, under profile"), "{said}");
    assert!(said.contains(mets.to_str().unwrap()), "{said}");
    let text = webaip(&["validate", mets.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.lines().last(), said.lines().next(), "the verdict of the full report");
    let r =
        webaip(&["report", "--json", "--validate", pkg.to_str().unwrap(), pkg.to_str().unwrap()]);
    let r: Value = serde_json::from_slice(&r.stdout).unwrap();
    let row = &r["packages"][0];
    assert_eq!(row["mets_valid"], true, "{row:#}");
    assert_eq!(r["totals"]["mets_invalid"], 0, "{:#}", r["totals"]);
}

/// Event links to an agent no PREMIS entity describes are P5.3 findings listed to 10,000,
/// the rest counted in one (a million made a million findings: 312 MB).
#[test]
fn event_links_to_undescribed_agents_are_listed_to_a_bound_and_counted() {
    const LISTED: usize = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let pkg = packaged(dir.path(), samples()[1].0, &samples()[1].1);
    let path = pkg.join("METS.xml");
    let mets = std::fs::read_to_string(&path).unwrap();
    let at = mets.find("<premis:linkingAgentIdentifier").expect("an event links an agent");
    let links = LISTED + 2_000;
    let many: String = (0..links)
        .map(|i| format!("<premis:linkingAgentIdentifier><premis:linkingAgentIdentifierType>local</premis:linkingAgentIdentifierType><premis:linkingAgentIdentifierValue>nobody-{i}</premis:linkingAgentIdentifierValue></premis:linkingAgentIdentifier>\n"))
        .collect();
    std::fs::write(&path, format!("{}{many}{}", &mets[..at], &mets[at..])).unwrap();
    let o = webaip(&["validate", "--json", path.to_str().unwrap()]);
    let all: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    let v = only_report(&all);
    let p53: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "P5.3")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(p53.len() <= LISTED + 1, "{} P5.3 findings", p53.len());
    let (counted, listed) = p53.split_last().unwrap();
    assert!(counted.contains("more event links") && counted.contains("nobody-"), "{counted}");
    assert!(listed.iter().all(|m| m.contains("links agent \"nobody-")), "{listed:?}");
    let told: usize = counted.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(listed.len() + told, links, "every link listed or counted: {counted}");
}
