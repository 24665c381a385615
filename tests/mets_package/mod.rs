//! Packages built in memory (small and larger, minimal and full mode) are written as METS and
//! validated by the independent oracle (`../shared/tools/validate-mets`: xmllint, python
//! xmlschema and an IDREF check against the official schemas) and by `webaip validate`.

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{DateTime, TimeZone, Utc};
use webaip::internals::model::*;
use webaip::internals::{MetsBuilder, Profile};

use crate::util::{Finding, repo, schemas, validate_mets};

fn t(s: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_714_550_400 + s, 0).single().unwrap()
}

fn sha(seed: u64) -> String {
    format!("{:0128x}", seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128)
}

pub fn header() -> PackageHeader {
    PackageHeader {
        objid: "urn:uuid:2b0e3f5c-8a1d-4a57-9d1e-6f0c2a4b7e91".into(),
        package_type: PackageType::Ssip,
        label: "Example Heritage Society website, 2024-05-01".into(),
        created: t(86_400),
        organisation: Organisation {
            name: "Example National Library".into(),
            code: "XX-ENL".into(),
        },
        description: Description {
            title: "Example Heritage Society & friends <website>".into(),
            description: Some("The society's site: letters, photographs, maps.".into()),
            subjects: vec!["Local history".into(), "Archives".into()],
            creator: Some("Example Heritage Society".into()),
            publisher: Some("Example Heritage Society".into()),
            urls: vec!["https://www.example.org/".into()],
            languages: vec!["eng".into()],
            capture_start: Some(t(0)),
            capture_end: Some(t(3600)),
            dc_only: vec![
                ("source".into(), "Heritrix crawl job 42".into()),
                ("coverage".into(), "2024".into()),
            ],
        },
        rights: Rights {
            access: Access::Embargoed(chrono::NaiveDate::from_ymd_opt(2030, 1, 1).unwrap()),
            statement: "Legal deposit material; reading-room access only until 2030.".into(),
        },
        agents: vec![
            Agent {
                id_type: "repository code".into(),
                id: "XX-ENL".into(),
                name: "Example National Library".into(),
                agent_type: "organization".into(),
                version: None,
                note: None,
            },
            Agent {
                id_type: "local".into(),
                id: "webaip".into(),
                name: "webaip".into(),
                agent_type: "software".into(),
                version: Some("0.1.0".into()),
                note: None,
            },
            Agent {
                id_type: "local".into(),
                id: "clamav".into(),
                name: "ClamAV (clamd)".into(),
                agent_type: "software".into(),
                version: Some("ClamAV 1.4.6".into()),
                note: Some("local signature database sha256:00ff".into()),
            },
        ],
    }
}

fn event(
    id: &str,
    profile: &Profile,
    kind: &str,
    outcome: &str,
    objects: &[(&str, &str)],
) -> Event {
    let et = match kind {
        "virus" => &profile.events.virus_check,
        "migration" => &profile.events.migration,
        _ => &profile.events.transformation,
    };
    Event {
        id: id.into(),
        event_type: et.term.clone(),
        event_type_uri: Some(et.uri.clone()),
        date_time: t(7200),
        detail: Some(match kind {
            "transformation" => {
                "transformation: HTML links made absolute; program=\"webaip\"".into()
            }
            _ => "program=\"webaip\"; version=\"0.1.0\"".into(),
        }),
        outcome: outcome.into(),
        outcome_detail: (outcome != "success" && outcome != "no virus detected")
            .then(|| "Eicar-Signature FOUND".into()),
        agents: vec![(
            "local".into(),
            if kind == "virus" { "clamav" } else { "webaip" }.into(),
            "executing program".into(),
        )],
        objects: objects
            .iter()
            .map(|(v, role)| ("local".into(), v.to_string(), role.to_string()))
            .collect(),
    }
}

fn object(id: &str, size: u64, sha512: String, name: &str, original: Option<&str>) -> PremisObject {
    PremisObject {
        id_type: "local".into(),
        id: id.into(),
        size,
        sha512,
        sha256: None,
        format: Format { name: name.into(), version: None, pronom: None },
        identification: None,
        original_name: original.map(str::to_string),
        significant_properties: vec![],
        relationships: vec![],
        events: vec![],
    }
}

fn container(
    path: &str,
    seed: u64,
    events: Vec<Event>,
    sources: Vec<PremisObject>,
    rel: Vec<Relationship>,
) -> PackageFile {
    let size = 100_000 + seed;
    let mut o = object(path, size, sha(seed), "WARC", Some(path.rsplit('/').next().unwrap()));
    o.format = Format::written_warc();
    o.events = events.iter().map(|e| e.id.clone()).collect();
    o.relationships = rel;
    PackageFile {
        path: path.into(),
        mime: "application/warc".into(),
        size,
        sha512: sha(seed),
        created: t(7200),
        object: o,
        events,
        described_sources: sources,
    }
}

/// Builds a package with `records` plain records per content container, plus a viral record,
/// a transformed record with its original, a migrated container with its ARC object, a log.
pub fn build(dir: &Path, mode: SerializationMode, records: u64, url_extra: &str) -> PathBuf {
    let profile = Profile::default_profile();
    let mut b = MetsBuilder::new(header(), profile.clone(), mode).unwrap();
    // A migrated container: ARC object described, migration + virus check events.
    let arc = object(
        "IAH-20240501000000-00000-crawler.arc.gz",
        90_000,
        sha(999),
        "ARC",
        Some("IAH-20240501000000-00000-crawler.arc.gz"),
    );
    let c1 = "content/IAH-20240501000000-00000-crawler.warc.gz";
    let mig = event(
        "0b7c4c1e-0000-4000-8000-000000000001",
        &profile,
        "migration",
        "success",
        &[(arc.id.as_str(), "source"), (c1, "outcome")],
    );
    let vir = event(
        "0b7c4c1e-0000-4000-8000-000000000002",
        &profile,
        "virus",
        "no virus detected",
        &[(c1, "source")],
    );
    let rel = Relationship {
        relationship_type: "derivation".into(),
        subtype: profile.relationships.migration.clone(),
        related_object: ("local".into(), arc.id.clone()),
        related_event: Some(mig.id.clone()),
    };
    let mut cw = b.begin_container(GroupUse::DigitalManifestation).unwrap();
    let mut offset = 500;
    for i in 0..records {
        let len = 300 + i % 700;
        let url = format!("https://www.example.org/page/{i}.html{url_extra}");
        cw.add_record(&RecordFile {
            refers: None,
            record_id: format!("<urn:uuid:00000000-0000-4000-8000-{i:012}>"),
            member: ByteRange { begin: offset, len },
            compressed: true,
            content: Some(ContentFile {
                range: ByteRange { begin: 420, len: len * 3 },
                sha512: sha(i),
                mime: "text/html".into(),
                identification: None,
            }),
            described: None,
            page: (i == 0).then(|| PageRole { kind: PageKind::Webpage, label: url.clone() }),
            capture: None,
        })
        .unwrap();
        offset += len;
    }
    b.finish_container(cw, container(c1, 1, vec![mig, vir], vec![arc], vec![rel])).unwrap();

    // The transformed page and its original.
    let orig_path = "original/pandas-original-00000.warc.gz";
    let orig_id = "original/pandas-original-00000.warc.gz#/page.html";
    let new_id = "content/pandas-00000.warc.gz#/page.html";
    let tr = event(
        "0b7c4c1e-0000-4000-8000-000000000003",
        &profile,
        "transformation",
        "success",
        &[(orig_id, "source"), (new_id, "outcome")],
    );
    let c2 = "content/pandas-00000.warc.gz";
    let vir2 = event(
        "0b7c4c1e-0000-4000-8000-000000000004",
        &profile,
        "virus",
        "no virus detected",
        &[(c2, "source")],
    );
    let mut cw = b.begin_container(GroupUse::DigitalManifestation).unwrap();
    let mut new_obj = object(
        new_id,
        2000,
        sha(50),
        "text/html",
        Some(&format!("http://www.example.org/page.html{url_extra}")),
    );
    new_obj.events = vec![tr.id.clone()];
    new_obj.relationships = vec![Relationship {
        relationship_type: "derivation".into(),
        subtype: profile.relationships.transformation.clone(),
        related_object: ("local".into(), orig_id.into()),
        related_event: Some(tr.id.clone()),
    }];
    cw.add_record(&RecordFile {
        refers: None,
        record_id: "<urn:uuid:10000000-0000-4000-8000-000000000001>".into(),
        member: ByteRange { begin: 600, len: 900 },
        compressed: true,
        content: Some(ContentFile {
            range: ByteRange { begin: 700, len: 2000 },
            sha512: sha(50),
            mime: "text/html".into(),
            identification: None,
        }),
        described: Some(DescribedBytestream { object: new_obj, events: vec![tr] }),
        page: Some(PageRole {
            kind: PageKind::Webpage,
            label: "http://www.example.org/page.html".into(),
        }),
        capture: None,
    })
    .unwrap();
    b.finish_container(cw, container(c2, 2, vec![vir2], vec![], vec![])).unwrap();

    let vir3 = event(
        "0b7c4c1e-0000-4000-8000-000000000005",
        &profile,
        "virus",
        "no virus detected",
        &[(orig_path, "source")],
    );
    let mut cw = b.begin_container(GroupUse::Original).unwrap();
    cw.add_record(&RecordFile {
        refers: None,
        record_id: "<urn:uuid:20000000-0000-4000-8000-000000000001>".into(),
        member: ByteRange { begin: 600, len: 880 },
        compressed: true,
        content: Some(ContentFile {
            range: ByteRange { begin: 700, len: 1990 },
            sha512: sha(51),
            mime: "text/html".into(),
            identification: None,
        }),
        described: Some(DescribedBytestream {
            object: object(
                orig_id,
                1990,
                sha(51),
                "text/html",
                Some("http://www.example.org/page.html"),
            ),
            events: vec![],
        }),
        page: None,
        capture: None,
    })
    .unwrap();
    b.finish_container(cw, container(orig_path, 3, vec![vir3], vec![], vec![])).unwrap();

    // A viral bytestream in quarantine.
    let vpath = "viral/viral-00000.warc.gz";
    let vbs = "viral/viral-00000.warc.gz#/eicar.com";
    let found = event(
        "0b7c4c1e-0000-4000-8000-000000000006",
        &profile,
        "virus",
        "viral, failed but forced",
        &[(vbs, "source")],
    );
    let vcont = event(
        "0b7c4c1e-0000-4000-8000-000000000007",
        &profile,
        "virus",
        "viral, failed but forced",
        &[(vpath, "source"), (vbs, "source")],
    );
    let mut cw = b.begin_container(GroupUse::ViralFiles).unwrap();
    let mut vobj = object(
        vbs,
        68,
        sha(66),
        "application/octet-stream",
        Some("http://www.example.org/eicar.com"),
    );
    vobj.events = vec![found.id.clone()];
    cw.add_record(&RecordFile {
        refers: None,
        record_id: "<urn:uuid:30000000-0000-4000-8000-000000000001>".into(),
        member: ByteRange { begin: 560, len: 400 },
        compressed: true,
        content: Some(ContentFile {
            range: ByteRange { begin: 512, len: 68 },
            sha512: sha(66),
            mime: "application/octet-stream".into(),
            identification: None,
        }),
        described: Some(DescribedBytestream { object: vobj, events: vec![found] }),
        page: None,
        capture: None,
    })
    .unwrap();
    b.finish_container(cw, container(vpath, 4, vec![vcont], vec![], vec![])).unwrap();

    let log = object("logs/crawl.log", 5000, sha(77), "text/plain", Some("crawl.log"));
    b.add_log(PackageFile {
        path: "logs/crawl.log".into(),
        mime: "text/plain".into(),
        size: 5000,
        sha512: sha(77),
        created: t(3600),
        object: log,
        events: vec![],
        described_sources: vec![],
    });
    let out = dir.join("METS.xml");
    b.finish(std::fs::File::create(&out).unwrap()).unwrap();
    out
}

/// Runs the independent oracle; returns (success, output).
pub fn oracle_validate(mets: &Path) -> (bool, String) {
    oracle_validate_with(mets, "mets-bundle.xsd")
}

/// Runs the independent oracle against one schema bundle of `../shared/xsd`
/// (`mets-bundle-legacy.xsd` knows PREMIS 2); returns (success, output).
pub fn oracle_validate_with(mets: &Path, bundle: &str) -> (bool, String) {
    let script = repo().join("../shared/tools/validate-mets");
    let out = Command::new("bash")
        .arg(script)
        .arg(mets)
        .env("METS_BUNDLE", bundle)
        .env("XSD_PYTHON", repo().join(".venv/bin/python"))
        .env("REQUIRE_XMLSCHEMA", "1")
        .output()
        .expect("validate-mets runs");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// `webaip validate` with the shared schemas; asserts no finding except the P5.5 warnings
/// that report a `not scanned` virus-check outcome, which it returns.
pub fn assert_webaip_valid(mets: &Path) -> Vec<Finding> {
    let r = validate_mets(mets, Some(&schemas()), None);
    assert_eq!(r.xsd["status"], "validated", "{:?}", r.xsd);
    assert!(r.profile_required, "the METS names its profile");
    let not_scanned = |f: &Finding| {
        f.severity == "warning" && f.rule == "P5.5" && f.message.contains("\"not scanned\"")
    };
    assert!(r.valid && r.findings.iter().all(not_scanned), "{:#?}", r.findings);
    r.findings
}

#[test]
fn small_and_larger_packages_in_both_modes_validate() {
    for (mode, records) in [
        (SerializationMode::Minimal, 3),
        (SerializationMode::Full, 3),
        (SerializationMode::Minimal, 2000),
        (SerializationMode::Full, 2000),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mets = build(dir.path(), mode, records, "");
        let (ok, out) = oracle_validate(&mets);
        assert!(ok, "{mode:?} {records}: oracle rejected:\n{out}");
        assert_webaip_valid(&mets);
        let text = std::fs::read_to_string(&mets).unwrap();
        let record_files = text.matches("TRANSFORMALGORITHM=\"GZIP\"").count() as u64;
        match mode {
            // Described records (transformed, original, viral) plus the page the structMap names.
            SerializationMode::Minimal => assert_eq!(record_files, 4),
            SerializationMode::Full => assert_eq!(record_files, records + 3),
        }
        // Agents and events are written once.
        assert_eq!(text.matches("<premis:agentName>ClamAV (clamd)</premis:agentName>").count(), 1);
        assert_eq!(
            text.matches("<premis:eventIdentifierValue>0b7c4c1e-0000-4000-8000-000000000001<")
                .count(),
            1
        );
    }
}

#[test]
fn minimal_mets_does_not_grow_with_undescribed_records() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let small =
        std::fs::metadata(build(a.path(), SerializationMode::Minimal, 10, "")).unwrap().len();
    let large =
        std::fs::metadata(build(b.path(), SerializationMode::Minimal, 20_000, "")).unwrap().len();
    assert_eq!(small, large);
}

#[test]
fn forbidden_characters_from_input_keep_the_mets_well_formed() {
    let dir = tempfile::tempdir().unwrap();
    let mets = build(dir.path(), SerializationMode::Full, 3, "?q=\u{1}\u{1b}&x=<\"'>");
    let (ok, out) = oracle_validate(&mets);
    assert!(ok, "{out}");
    assert_webaip_valid(&mets);
    let text = std::fs::read_to_string(&mets).unwrap();
    assert!(
        text.contains("?q=%01%1B&amp;x=&lt;&quot;&apos;&gt;")
            || text.contains("?q=%01%1B&amp;x=&lt;&quot;'&gt;")
    );
}

#[test]
fn reference_documents() {
    let x = schemas();
    // The hand-written example and the real Archivematica AIP are valid METS/PREMIS; they do
    // not claim our profile, so its rules come as warnings only.
    for name in
        ["examples/webarchive-sip-example.xml", "examples/reference/archivematica-aip-premis3.xml"]
    {
        let r = validate_mets(&x.join(name), Some(&x), None);
        assert!(r.valid, "{name}: {:#?}", r.errors());
        assert!(!r.profile_required);
    }
    // The real BL SIP under the legacy profile: valid, and its differences from the current
    // profile are reported (PREMIS 2 events, "Logfiles", no website div, no MODS).
    let bl = x.join("examples/reference/bl-ukwa-sip-legal-deposit-premis2.xml");
    let r = validate_mets(&bl, Some(&x), Some("bl-legacy"));
    assert!(r.valid, "{:#?}", r.findings);
    let notes: Vec<_> =
        r.findings.iter().filter(|f| f.severity == "info").map(|f| f.rule.as_str()).collect();
    for rule in ["P4.1", "P2.1", "P3.1", "P5.5"] {
        assert!(notes.contains(&rule), "difference {rule} not reported: {notes:?}");
    }
    // Under the current profile, the same document is invalid (it is PREMIS 2).
    let r = validate_mets(&bl, Some(&x), Some("bl-webarchive"));
    assert!(!r.valid);
}
