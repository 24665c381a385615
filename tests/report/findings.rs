//! What the report says when the package is not what it should be: a damaged or missing
//! container still gives the page (the counts partial, naming the file and offset; the audit's
//! verdict), a verdict card is the METS's statement and never green on an invalid METS, a
//! stated failed virus check is a finding, and an AIP's identification is its packaging's.

use super::*;

/// A copy of the Heritrix sample's package, and its first container.
fn copied(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let samples = samples();
    let made = dir.join(format!("{name}-made"));
    std::fs::create_dir(&made).unwrap();
    let pkg = packaged(&made, samples[0].0, &samples[0].1);
    let copy = dir.join(name);
    crate::util::copy_tree(&pkg, &copy);
    let mut containers: Vec<PathBuf> = std::fs::read_dir(copy.join("content"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    containers.sort();
    (copy, containers.remove(0))
}

/// `report --audit` of a package whose container is damaged part-way, or missing: the page is
/// written, the counts keep the lines read before and are partial, naming the file (and the
/// offset), the audit says DAMAGED, and the run exits 1.
#[test]
fn a_damaged_or_missing_container_still_gives_the_page_and_the_audit() {
    let dir = tempfile::tempdir().unwrap();
    let (damaged, container) = copied(dir.path(), "damaged");
    let mut bytes = std::fs::read(&container).unwrap();
    let at = bytes.len() / 2;
    bytes[at..at + 8].copy_from_slice(&[0xff; 8]);
    std::fs::write(&container, &bytes).unwrap();
    let name = container.file_name().unwrap().to_str().unwrap().to_string();
    let page = dir.path().join("d.html");
    let r = report_of(&report(&damaged, &page, &["--audit"]), 1);
    assert_eq!(r["verdicts"]["audit"]["verdict"], "damaged", "{:#}", r["verdicts"]);
    let c = &r["captures"];
    let unread = c["not_read"].as_array().unwrap();
    assert_eq!(unread.len(), 1, "{c:#}");
    let why = unread[0].as_str().unwrap();
    assert!(why.contains(&name) && why.contains("offset"), "{why}");
    assert!(c["lines"].as_u64().unwrap() > 0, "the lines before are counted: {c:#}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<strong>Partial:</strong>") && html.contains("not read to its end"));

    let (missing, container) = copied(dir.path(), "missing");
    std::fs::remove_file(&container).unwrap();
    let page = dir.path().join("m.html");
    let r = report_of(&report(&missing, &page, &["--audit"]), 1);
    assert_eq!(r["verdicts"]["audit"]["verdict"], "damaged", "{:#}", r["verdicts"]);
    let unread = r["captures"]["not_read"].as_array().unwrap();
    assert!(unread.iter().any(|u| u.as_str().unwrap().contains(&name)), "{unread:?}");
    assert!(page.is_file());
}

/// The verdict cards say what the METS states, with the date and agent; a virus check the
/// METS states passed is not shown green when the METS is invalid, and one it states failed
/// makes the run exit 1.
#[test]
fn event_cards_are_statements_and_a_failed_virus_check_is_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let (pkg, _) = copied(dir.path(), "stated");
    let page = dir.path().join("s.html");
    let r = report_of(&report(&pkg, &page, &[]), 0);
    let v = &r["verdicts"]["virus_check"];
    assert!(!v["agents"].as_array().unwrap().is_empty(), "{v:#}");
    let html = std::fs::read_to_string(&page).unwrap();
    let card = &html[html.find("<h3>Virus check</h3>").unwrap()..];
    let card = &card[..card.find("</div>").unwrap()];
    assert!(card.contains("(stated by the METS)") && card.contains(", by "), "{card}");
    let outcome = v["outcome"].as_str().unwrap().to_string();

    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    let virus = text.find(">virus check</premis:eventType>").unwrap();
    let said = format!("<premis:eventOutcome>{outcome}</premis:eventOutcome>");
    let at = virus + text[virus..].find(&said).unwrap();
    let with = |outcome: &str| {
        let changed = format!("<premis:eventOutcome>{outcome}</premis:eventOutcome>");
        format!("{}{changed}{}", &text[..at], &text[at + said.len()..])
    };
    // Stated clean, in a METS that is not valid: not green.
    let broken = with("pass").replacen("<mets:metsHdr ", "<mets:metsHdr BOGUS=\"1\" ", 1);
    std::fs::write(&mets, broken).unwrap();
    let r = report_of(&report(&pkg, &page, &[]), 1);
    assert_eq!(r["verdicts"]["mets"]["valid"], false);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"<div class="card warn"><h3>Virus check</h3><p class="verdict">pass (stated by the METS)"#), "{html}");
    // Stated a virus left in: a finding (exit 1). The profile then wants the container in
    // the viral group, so the METS is not valid either: the exit status alone does not show
    // which of the two it counts.
    std::fs::write(&mets, with("viral, failed but forced")).unwrap();
    let r = report_of(&report(&pkg, &page, &[]), 1);
    assert_eq!(r["verdicts"]["virus_check"]["outcome"], "viral, failed but forced");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"<div class="card bad"><h3>Virus check</h3>"#), "{html}");
}

/// An AIP holds its packaging's identification (every payload) and its ingest's (the
/// described bytestreams): the card and the counts are the packaging's, and both events are
/// listed with what they state.
#[test]
fn an_aip_shows_its_package_wide_identification() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let pkg = packaged(dir.path(), samples[0].0, &samples[0].1);
    let before = report_of(&report(&pkg, &dir.path().join("p.html"), &[]), 0);
    let packaged_payloads = before["identification"]["stated"]["payloads"].as_u64().unwrap();
    assert!(packaged_payloads > 0, "{:#}", before["identification"]);
    let aips = dir.path().join("aips");
    let schemas = crate::util::schemas();
    let o = webaip(&[
        "ingest",
        "--quiet",
        "--schemas",
        schemas.to_str().unwrap(),
        "--out",
        aips.to_str().unwrap(),
        pkg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let aip = std::fs::read_dir(&aips).unwrap().next().unwrap().unwrap().path();
    let page = dir.path().join("aip.html");
    let r = report_of(&report(&aip, &page, &[]), 0);
    let id = &r["identification"];
    let events = id["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "{id:#}");
    let shown: Vec<&Value> = events.iter().filter(|e| e["shown"] == true).collect();
    assert_eq!(shown.len(), 1, "{id:#}");
    assert_eq!(shown[0]["payloads"].as_u64(), Some(packaged_payloads), "{id:#}");
    assert_eq!(id["stated"]["payloads"].as_u64(), Some(packaged_payloads), "{id:#}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<caption>Format identification events</caption>"));
    // A collection's row of the AIP shows the same package-wide event, not the ingest's (the
    // last), and its formats are that event's payloads.
    let other: Vec<&Value> = events.iter().filter(|e| e["shown"] != true).collect();
    assert_ne!(other[0]["payloads"], shown[0]["payloads"], "the two events tell apart: {id:#}");
    let rows =
        report_of(&webaip(&["report", "--json", pkg.to_str().unwrap(), aip.to_str().unwrap()]), 0);
    let row = &rows["packages"][1];
    assert_eq!(row["identification"]["date"], shown[0]["date"], "{row:#}");
    assert_eq!(row["identification"]["outcome"], shown[0]["outcome"], "{row:#}");
    assert_eq!(row["identification"]["events"], 2, "{row:#}");
    assert_eq!(row["formats_of"], "payloads", "{row:#}");
    let formats: serde_json::Map<String, Value> = row["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["key"].as_str().unwrap().to_string(), c["count"].clone()))
        .collect();
    assert_eq!(Value::Object(formats), id["stated"]["by_puid"], "{row:#}");
}
