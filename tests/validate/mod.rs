//! Broken METS documents, one kind of damage each, must be rejected by `webaip validate` with
//! the right rule named and a line number.

use std::process::Command;

use webaip::internals::model::SerializationMode;

use crate::mets_package::build;
use crate::util::{schemas, validate_mets, webaip_command};

mod built_in;

fn sha(seed: u64) -> String {
    format!("{:0128x}", seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128)
}

/// Replaces the first occurrence of `from` (which must exist) by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "mutation anchor missing: {from}");
    text.replacen(from, to, 1)
}

/// Removes the first `<tag ...>...</tag>` block that contains `marker`.
fn cut_block(text: &str, open: &str, close: &str, marker: &str) -> (String, String) {
    let at = text.find(marker).expect("marker");
    let start = text[..at + marker.len()].rfind(open).expect("open");
    let end = text[at..].find(close).expect("close") + at + close.len();
    let block = text[start..end].to_string();
    (format!("{}{}", &text[..start], &text[end..]), block)
}

fn mutations(base: &str) -> Vec<(&'static str, &'static str, String)> {
    let mut v = vec![
        ("bad BETYPE", "P4.4", replace_once(base, "BETYPE=\"BYTE\"", "BETYPE=\"BITS\"")),
        (
            "END before BEGIN",
            "P4.6",
            replace_once(base, "BEGIN=\"600\" END=\"1499\"", "BEGIN=\"1499\" END=\"600\""),
        ),
        (
            "SIZE disagreeing",
            "P4.6",
            replace_once(base, "SIZE=\"900\" BETYPE=\"BYTE\"", "SIZE=\"901\" BETYPE=\"BYTE\""),
        ),
        (
            "dangling ADMID",
            "METS-IDREF",
            replace_once(base, "ADMID=\"AMD-C00002-R000001\"", "ADMID=\"AMD-NOWHERE\""),
        ),
        ("duplicate ID", "METS-ID", replace_once(base, "ID=\"DMD-DC\"", "ID=\"DMD-MODS\"")),
        (
            "wrong checksum type",
            "P4.2",
            replace_once(base, "CHECKSUMTYPE=\"SHA-512\"", "CHECKSUMTYPE=\"MD5\""),
        ),
        (
            "PREMIS fixity differs from CHECKSUM",
            "P5.1",
            replace_once(
                base,
                &format!("<premis:messageDigest>{}<", sha(66)),
                &format!("<premis:messageDigest>{}<", sha(67)),
            ),
        ),
        (
            "event links a missing object",
            "P5.3",
            replace_once(
                base,
                "<premis:linkingObjectIdentifierValue>viral/viral-00000.warc.gz#/eicar.com<",
                "<premis:linkingObjectIdentifierValue>viral/elsewhere.warc.gz#/eicar.com<",
            ),
        ),
        (
            "event links a missing agent",
            "P5.3",
            replace_once(
                base,
                "<premis:linkingAgentIdentifierValue>clamav<",
                "<premis:linkingAgentIdentifierValue>nobody<",
            ),
        ),
        (
            "outcome outside the vocabulary",
            "P5.5",
            replace_once(
                base,
                "<premis:eventOutcome>no virus detected<",
                "<premis:eventOutcome>clean<",
            ),
        ),
        ("migration relationship removed", "P5.6", {
            let (t, _) = cut_block(
                base,
                "<premis:relationship>",
                "</premis:relationship>",
                ">migration</premis:relationshipSubType>",
            );
            t
        }),
        ("migration event removed", "P5.6", {
            let (t, _) = cut_block(
                base,
                "<mets:digiprovMD",
                "</mets:digiprovMD>",
                ">migration</premis:eventType>",
            );
            t
        }),
        (
            "transformed bytestream without its original",
            "P5.7",
            replace_once(
                base,
                "<premis:relatedObjectIdentifierValue>original/pandas-original-00000.warc.gz#/page.html<",
                "<premis:relatedObjectIdentifierValue>original/pandas-original-00000.warc.gz#/gone.html<",
            ),
        ),
        (
            "viral bytestream outside the viral group",
            "P5.5",
            replace_once(base, "USE=\"ViralFiles\"", "USE=\"DigitalManifestation\""),
        ),
        ("malformed XML", "XML", replace_once(base, "</mets:fileSec>", "")),
        ("embargo without a date", "P3.3", {
            let (t, _) =
                cut_block(base, "<wr:embargoUntil>", "</wr:embargoUntil>", "<wr:embargoUntil>");
            t
        }),
        (
            "rights value outside the rights schema",
            "XSD",
            replace_once(base, "<wr:access>embargoed<", "<wr:access>secret<"),
        ),
        ("missing required section (DC)", "P3.2", {
            let (t, _) = cut_block(base, "<mets:dmdSec", "</mets:dmdSec>", "ID=\"DMD-DC\"");
            t.replace("DMDID=\"DMD-MODS DMD-DC\"", "DMDID=\"DMD-MODS\"")
        }),
    ];
    // Element out of order: the structMap moved before the fileSec.
    let (without, block) =
        cut_block(base, "<mets:structMap", "</mets:structMap>", "<mets:structMap");
    v.push((
        "element out of order",
        "XSD",
        without.replacen("  <mets:fileSec>", &format!("{block}\n  <mets:fileSec>"), 1),
    ));
    v
}

#[test]
fn every_kind_of_damage_is_rejected_with_its_rule() {
    let dir = tempfile::tempdir().unwrap();
    let good = build(dir.path(), SerializationMode::Minimal, 3, "");
    let base = std::fs::read_to_string(&good).unwrap();
    let schemas = schemas();
    assert!(validate_mets(&good, Some(&schemas), None).findings.is_empty());
    let all = mutations(&base);
    assert!(all.len() >= 12);
    for (what, rule, text) in all {
        let path = dir.path().join("broken.xml");
        std::fs::write(&path, &text).unwrap();
        let r = validate_mets(&path, Some(&schemas), None);
        assert!(!r.valid, "{what}: accepted");
        let errors = r.errors();
        let hit = errors.iter().find(|f| f.rule == rule);
        assert!(hit.is_some(), "{what}: no {rule} error among {errors:#?}");
        assert!(hit.unwrap().line.is_some(), "{what}: finding without a line");
    }
}

#[test]
fn the_cli_exits_1_on_invalid_2_on_unreadable_and_says_when_xsd_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let good = build(dir.path(), SerializationMode::Minimal, 3, "");
    let schemas = schemas();
    let ok =
        webaip_command().args(["validate", "--schemas"]).arg(&schemas).arg(&good).output().unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    // Without --schemas: the built-in schemas; skipped only for a document not read whole.
    let built_in = webaip_command().args(["validate"]).arg(&good).output().unwrap();
    let said = String::from_utf8_lossy(&built_in.stdout);
    assert!(said.contains("XML Schema: validated against mets-bundle.xsd (built in)"), "{said}");
    let cut = dir.path().join("cut.xml");
    let whole = std::fs::read_to_string(&good).unwrap();
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let skipped = webaip_command().args(["validate"]).arg(&cut).output().unwrap();
    assert!(String::from_utf8_lossy(&skipped.stdout).contains("XML Schema: SKIPPED"));
    let text =
        std::fs::read_to_string(&good).unwrap().replacen("BETYPE=\"BYTE\"", "BETYPE=\"BITS\"", 1);
    let bad = dir.path().join("bad.xml");
    std::fs::write(&bad, text).unwrap();
    let o = webaip_command()
        .args(["validate", "--json", "--schemas"])
        .arg(&schemas)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(all["kind"], "mets");
    let json = crate::util::only_report(&all);
    assert_eq!(json["valid"], false);
    assert!(
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "P4.4" && f["line"].is_u64())
    );
    let missing = webaip_command().args(["validate", "/nonexistent/METS.xml"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

/// Hostile METS documents (issue 13): names that leave the package, ranges that overflow, a
/// DOCTYPE with entities, NUL characters. Each is reported with its rule; nothing wraps around,
/// nothing is expanded or loaded, nothing passes as VALID for want of `--schemas`.
#[test]
fn hostile_documents_are_reported_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let good = build(dir.path(), SerializationMode::Minimal, 3, "");
    let base = std::fs::read_to_string(&good).unwrap();
    let href_at = base.find("xlink:href=\"").expect("an FLocat") + "xlink:href=\"".len();
    let href = &base[href_at..href_at + base[href_at..].find('"').unwrap()];
    let flocat = |to: &str| {
        replace_once(&base, &format!("xlink:href=\"{href}\""), &format!("xlink:href=\"{to}\""))
    };
    let doctype = |decl: &str, body_from: &str, body_to: &str| {
        let text = replace_once(&base, body_from, body_to);
        let root = text.find("<mets:mets").unwrap();
        format!("{}{decl}\n{}", &text[..root], &text[root..])
    };
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-LINE\n").unwrap();
    let title = base.find("<mods:title>").expect("a MODS title");
    let title_text = &base[title..title + base[title..].find("</mods:title>").unwrap()];
    let cases: Vec<(&str, &str, &str, String)> = vec![
        ("absolute FLocat", "P4.2", "is an absolute path", flocat("/etc/passwd")),
        ("FLocat with ..", "P4.2", "\"..\" segment", flocat("content/../../../x.warc.gz")),
        ("FLocat URL", "P4.2", "is a URL", flocat("http://example.org/x.warc.gz")),
        (
            "END = 2^64-1",
            "P4.6",
            "does not fit in 64 bits",
            replace_once(
                &base,
                "BEGIN=\"600\" END=\"1499\"",
                "BEGIN=\"0\" END=\"18446744073709551615\"",
            ),
        ),
        ("DOCTYPE", "XML", "document type declaration", doctype("<!DOCTYPE mets:mets>", "", "")),
        (
            "internal entity",
            "XML",
            "&x;",
            doctype(
                "<!DOCTYPE mets:mets [<!ENTITY x \"EXPANDED\">]>",
                title_text,
                &format!("{title_text}&x;"),
            ),
        ),
        (
            "external entity",
            "XML",
            "&xxe;",
            doctype(
                &format!(
                    "<!DOCTYPE mets:mets [<!ENTITY xxe SYSTEM \"file://{}\">]>",
                    secret.display()
                ),
                title_text,
                &format!("{title_text}&xxe;"),
            ),
        ),
        ("NUL character", "XML", "NUL", replace_once(&base, "<mods:title>", "<mods:title>\u{0}")),
    ];
    for schemas in [None, Some(schemas())] {
        for (what, rule, words, text) in &cases {
            let path = dir.path().join("hostile.xml");
            std::fs::write(&path, text).unwrap();
            let r = validate_mets(&path, schemas.as_deref(), None);
            let with = if schemas.is_some() { "with schemas" } else { "without schemas" };
            assert!(!r.valid, "{what} ({with}): accepted");
            let shown = format!("{:#?}", r.findings);
            assert!(
                r.findings.iter().any(|f| f.severity == "error"
                    && f.rule == *rule
                    && f.message.contains(words)
                    && f.line.is_some()),
                "{what} ({with}): no {rule} error saying {words:?}: {shown}"
            );
            assert!(
                !shown.contains("TOP-SECRET") && !shown.contains("EXPANDED"),
                "{what}: {shown}"
            );
        }
    }
}

/// `webaip validate` given a FIFO instead of a METS file refuses it at once (exit 2) instead of
/// waiting for a writer that never comes.
#[test]
fn a_fifo_named_as_the_mets_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("METS.xml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child = webaip_command()
        .args(["validate"])
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("webaip validate waited on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("FIFO"));
}
