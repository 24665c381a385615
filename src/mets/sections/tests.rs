//! The package-level METS sections read into typed structs (yaserde) and written back: every
//! element, attribute and text of webaip's own METS comes back; of other tools' METS, what
//! the structs do not carry is named, exactly (`not_modelled`), so nothing is lost silently.

use std::path::{Path, PathBuf};

use super::tree::section_differences;
use super::{PackageSections, PremisVersion, SectionsError, read_package_sections};
use crate::model::SerializationMode;
use crate::package::PackageOptions;
use crate::test_support::{corpus, sample};

fn reference(name: &str) -> PathBuf {
    corpus().join("../xsd/examples").join(name)
}

/// Reads `path`, and checks that each section written back is a document that reads to the
/// same sections again.
fn read(path: &Path) -> PackageSections {
    let s = read_package_sections(path).unwrap_or_else(|e| panic!("{e}"));
    let written = s.written().unwrap();
    assert_eq!(
        written.len(),
        usize::from(s.header.is_some()) + s.dmd_secs.len() + s.amd_secs.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let again = dir.path().join("again.xml");
    let body: String = written.concat();
    std::fs::write(
        &again,
        format!("<mets:mets xmlns:mets=\"http://www.loc.gov/METS/\">{body}</mets:mets>"),
    )
    .unwrap();
    let t = read_package_sections(&again).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.not_modelled, Vec::<String>::new(), "what was written back reads back whole");
    assert_eq!((t.dmd_secs.len(), t.amd_secs.len()), (s.dmd_secs.len(), s.amd_secs.len()));
    for (a, b) in s.amd_secs.iter().zip(&t.amd_secs) {
        assert_eq!((&a.value, a.premis), (&b.value, b.premis));
    }
    for (a, b) in s.dmd_secs.iter().zip(&t.dmd_secs) {
        assert_eq!(a.value, b.value);
    }
    assert_eq!(s.header.as_ref().map(|h| &h.value), t.header.as_ref().map(|h| &h.value));
    s
}

#[test]
fn bl_legacy_sip_premis2() {
    let s = read(&reference("reference/bl-ukwa-sip-legal-deposit-premis2.xml"));
    // The BL's permissions record is in its own schema (wct), which is not modelled.
    assert_eq!(
        s.not_modelled,
        [
            "mets:amdSec[AMD0000]/mets:rightsMD[DP0000]/mets:mdWrap/mets:xmlData/{http://www.bl.uk/namespaces/wct}Permissions"
        ]
    );
    assert_eq!((s.objid.as_deref(), s.mets_type.as_deref()), (None, Some("webarchive_domain")));
    let h = &s.header.as_ref().unwrap().value;
    assert_eq!(h.create_date.as_deref(), Some("2014-12-19T15:34:08Z"));
    let a = &h.agents[0];
    assert_eq!(
        (a.role.as_deref(), a.agent_type.as_deref(), a.other_type.as_deref(), a.name.as_deref()),
        (Some("CREATOR"), Some("OTHER"), Some("software"), Some("create_mets;0.1682"))
    );
    assert_eq!(s.amd_secs.len(), 3);
    assert!(s.amd_secs.iter().all(|a| a.premis == Some(PremisVersion::V2)));
    let events = s.premis_events();
    assert_eq!(events.len(), 2);
    let crawl = events[0].value;
    assert_eq!(crawl.event_type.as_ref().unwrap().value, "crawlstart");
    assert_eq!(crawl.linking_agents[0].value.as_deref(), Some("AGENT0000"));
    let virus = events[1].value;
    assert_eq!(virus.outcomes[0].outcome.as_deref(), Some("no virus detected"));
    let agents = s.premis_agents();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents[0].value.names, ["heritrix-3.1.1+uk.bl.wap"]);
    let objects = s.premis_objects();
    assert_eq!(objects.len(), 2);
    let c = &objects[0].value.characteristics[0];
    assert_eq!(c.size.as_deref(), Some("380442545"));
    assert_eq!(c.fixity[0].algorithm.as_deref(), Some("SHA-512"));
    let name = c.formats[0].designation.as_ref().and_then(|d| d.name.as_deref());
    assert_eq!(name, Some("application/warc"));
}

#[test]
fn archivematica_aip_premis3() {
    let s = read(&reference("reference/archivematica-aip-premis3.xml"));
    // Archivematica's tool outputs (ffprobe, ExifTool, MediaInfo) are not modelled.
    let ext = "mets:mdWrap/mets:xmlData/premis:object/premis:objectCharacteristics/premis:objectCharacteristicsExtension";
    assert_eq!(
        s.not_modelled,
        [
            format!("mets:amdSec[amdSec_1]/mets:techMD[techMD_1]/{ext}"),
            format!("mets:amdSec[amdSec_3]/mets:techMD[techMD_3]/{ext}"),
        ]
    );
    assert_eq!((s.dmd_secs.len(), s.amd_secs.len()), (2, 4));
    assert!(s.amd_secs.iter().all(|a| a.premis == Some(PremisVersion::V3)));
    assert_eq!((s.premis_events().len(), s.premis_agents().len()), (18, 12));
    let objects = s.premis_objects();
    assert_eq!(objects.len(), 5);
    assert_eq!(objects[0].value.xsi_type.as_deref(), Some("premis:intellectualEntity"));
    let dc = s.dublin_core();
    assert_eq!(
        dc[0].elements,
        [
            ("title", "Pictures with DublinCore".to_string()),
            ("type", "Archival Information Package".to_string())
        ]
    );
}

#[test]
fn hand_written_example() {
    let s = read(&reference("webarchive-sip-example.xml"));
    assert_eq!(s.not_modelled, Vec::<String>::new());
    assert_eq!(s.objid.as_deref(), Some("urn:uuid:020bbd6e-9dab-526e-b23a-568a48bd45f3"));
    let h = &s.header.as_ref().unwrap().value;
    assert_eq!(h.alt_record_ids[0].id_type.as_deref(), Some("harvest-job"));
    assert_eq!(
        (s.premis_events().len(), s.premis_agents().len(), s.premis_objects().len()),
        (7, 6, 8)
    );
    assert_eq!(s.premis_rights_statements().len(), 1);
    assert_eq!(s.mods().len(), 2);
}

/// webaip's own METS, minimal and full, with transformation events (PANDAS) and without
/// (Heritrix): everything comes back.
#[test]
fn webaip_own_packages() {
    use SerializationMode::{Full, Minimal};
    for (src, mode) in [
        ("pandas/40123/20040517-1412", Full),
        ("pandas/40123/20040517-1412", Minimal),
        ("heritrix-job", Minimal),
        ("heritrix-job", Full),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pkg");
        let options = PackageOptions::default().deterministic(true).mode(mode);
        let packaged = crate::Packager::new(sample(src)).out(&out).options(options).run();
        packaged.unwrap_or_else(|e| panic!("{src} {mode:?}: {e}"));
        let s = read(&out.join("METS.xml"));
        assert_eq!(s.not_modelled, Vec::<String>::new(), "{src} {mode:?}");
        assert!(s.objid.as_deref().is_some_and(|o| o.starts_with("urn:uuid:")), "{src}");
        assert!(s.profile.is_some(), "{src}");
        let rights = s.webaip_rights().unwrap();
        assert!(rights.access.is_some() && rights.statement.is_some());
        assert!(s.mods().iter().any(|m| !m.title_info.is_empty()));
        assert!(!s.dublin_core().is_empty());
        assert!(!s.premis_agents().is_empty(), "{src} {mode:?}");
        assert!(s.premis_objects().iter().all(|o| o.version == PremisVersion::V3));
        if src.starts_with("pandas") {
            // The rewritten pages' modification events are on their records, whose amdSecs
            // are passed over; read as package-level (IDs no longer of the record form),
            // they come back whole too.
            assert_eq!(event_types(&s), ["virus check", "format identification"]);
            assert!(s.record_amd_secs_skipped >= 4, "{}", s.record_amd_secs_skipped);
            let text = std::fs::read_to_string(out.join("METS.xml")).unwrap();
            let renamed = dir.path().join("renamed.xml");
            let text = text
                .replace("amdSec ID=\"AMD-C00001-R", "amdSec ID=\"AMD-C00001-Q")
                .replace("amdSec ID=\"AMD-C00002-R", "amdSec ID=\"AMD-C00002-Q");
            std::fs::write(&renamed, text).unwrap();
            let r = read(&renamed);
            assert_eq!(r.not_modelled, Vec::<String>::new());
            let types = event_types(&r);
            assert_eq!(types.iter().filter(|t| **t == "modification").count(), 4, "{types:?}");
            let linked =
                r.premis_events().iter().filter(|e| !e.value.linking_objects.is_empty()).count();
            assert!(linked >= 4);
        }
    }
}

fn event_types(s: &PackageSections) -> Vec<&str> {
    s.premis_events()
        .iter()
        .filter_map(|e| Some(e.value.event_type.as_ref()?.value.as_str()))
        .collect()
}

/// An element the structs do not name is reported, not dropped: one more PREMIS element in
/// an event of the BL SIP, and one more attribute.
#[test]
fn an_unknown_element_is_reported_not_dropped() {
    let text =
        std::fs::read_to_string(reference("reference/bl-ukwa-sip-legal-deposit-premis2.xml"))
            .unwrap();
    let text = text
        .replacen(
            "<premis:eventType>crawlstart</premis:eventType>",
            "<premis:eventType>crawlstart</premis:eventType><premis:eventNote>late</premis:eventNote>",
            1,
        )
        .replacen("<mets:amdSec ID=\"AMDZIP1744\">", "<mets:amdSec ID=\"AMDZIP1744\" STATUS=\"x\">", 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.xml");
    std::fs::write(&path, text).unwrap();
    let s = read_package_sections(&path).unwrap();
    assert_eq!(
        &s.not_modelled[1..],
        [
            "mets:amdSec[AMD0000]/mets:digiprovMD[DP0001]/mets:mdWrap/mets:xmlData/premis:event/premis:eventNote",
            "mets:amdSec[AMDZIP1744]/@STATUS",
        ]
    );
}

/// The comparison sees a changed text, a lost attribute and a lost repeated element.
#[test]
fn differences_are_named() {
    let a = br#"<r xmlns="u" ID="1"><t a="1">x</t><t>y</t><t>y</t></r>"#;
    let b = br#"<p:r xmlns:p="u" ID="1"><p:t>x</p:t><p:t>z</p:t></p:r>"#;
    assert_eq!(
        section_differences(a, b).unwrap(),
        ["{u}r[1]/{u}t/@a", "{u}r[1]/{u}t/text()", "{u}r[1]/{u}t"]
    );
    assert_eq!(section_differences(a, a).unwrap(), Vec::<String>::new());
}

/// A section over the bound is an error naming where it starts, not an allocation.
#[test]
fn an_oversized_section_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.xml");
    let note = "<mets:note>0123456789abcdef0123456789abcdef</mets:note>".repeat(600_000);
    let doc = format!(
        "<mets:mets xmlns:mets=\"http://www.loc.gov/METS/\"><mets:metsHdr><mets:agent ROLE=\"CREATOR\">{note}</mets:agent></mets:metsHdr></mets:mets>"
    );
    std::fs::write(&path, &doc).unwrap();
    match read_package_sections(&path) {
        Err(SectionsError::SectionTooLarge { offset, .. }) => {
            assert_eq!(Some(offset as usize), doc.find("<mets:metsHdr"));
        }
        other => panic!("{other:?}"),
    }
}

/// The PREMIS version of a section is that of its elements, not of the declarations in scope:
/// a root binding both PREMIS 2 and 3 leaves the BL's sections PREMIS 2, and its header none.
#[test]
fn the_premis_version_is_that_of_the_elements() {
    let text =
        std::fs::read_to_string(reference("reference/bl-ukwa-sip-legal-deposit-premis2.xml"))
            .unwrap();
    let text = text.replacen(
        "<mets:mets ",
        "<mets:mets xmlns:p3=\"http://www.loc.gov/premis/v3\" xmlns:p2=\"info:lc/xmlns/premis-v2\" ",
        1,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.xml");
    std::fs::write(&path, text).unwrap();
    let s = read(&path);
    assert_eq!(s.header.as_ref().unwrap().premis, None);
    assert!(s.amd_secs.iter().all(|a| a.premis == Some(PremisVersion::V2)));
    assert_eq!(s.not_modelled.len(), 1, "{:?}", s.not_modelled);
    assert_eq!(s.premis_events().len(), 2);
}
