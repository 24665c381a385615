//! Issue 25, item 2: packages webaip did not write. A BL/UKWA SIP METS (PREMIS 2, files kept
//! elsewhere and named by URL, no manifest, in a folder beside another SIP's METS, no PROFILE)
//! is checked under the profile its PREMIS fits, as advice, against the schema bundle that
//! knows PREMIS 2; what it lacks for not being webaip's is not damage. Bytes that differ from
//! the METS still are, and a METS whose `<file>` and PREMIS object disagree is reported as an
//! inconsistency, not as damage.

use std::fs;
use std::path::Path;

use sha2::{Digest, Sha512};

use super::audit_with;
use crate::util::{schemas, webaip};

/// One `<file>` of the SIP and what its PREMIS object says of it.
pub(crate) struct SipFile {
    pub(crate) id: &'static str,
    pub(crate) group: &'static str,
    pub(crate) href: String,
    pub(crate) mime: &'static str,
    pub(crate) size: u64,
    pub(crate) sha512: String,
    pub(crate) premis_size: u64,
    pub(crate) premis_sha512: String,
}

impl SipFile {
    /// A file kept in the BL store, named by its webhdfs URL.
    fn remote(id: &'static str, group: &'static str, mime: &'static str, seed: &str) -> Self {
        let sha512 = hex(seed.as_bytes());
        SipFile {
            id,
            group,
            href: format!(
                "http://dls.httpfs.wa.bl.uk:14000/webhdfs/v1/heritrix/output/{seed}?user.name=hadoop&amp;op=OPEN"
            ),
            mime,
            size: 380_442_545,
            premis_size: 380_442_545,
            premis_sha512: sha512.clone(),
            sha512,
        }
    }

    /// A file inside the folder, described as it is.
    fn local(id: &'static str, group: &'static str, name: &str, bytes: &[u8]) -> Self {
        let sha512 = hex(bytes);
        SipFile {
            id,
            group,
            href: name.to_string(),
            mime: "text/plain",
            size: bytes.len() as u64,
            premis_size: bytes.len() as u64,
            premis_sha512: sha512.clone(),
            sha512,
        }
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    crate::util::hex(&Sha512::digest(bytes))
}

/// A SIP METS as the BL wrote them in 2013-2016 (after
/// `../shared/xsd/examples/reference/bl-ukwa-sip-legal-deposit-premis2.xml`): PREMIS 2 objects,
/// events and agents in amdSecs, `virusCheck` events, a `Logfiles` group, one `uk-web-domain`
/// div, no OBJID, no PROFILE unless `profile` gives one.
pub(crate) fn bl_sip(files: &[SipFile], profile: Option<&str>) -> String {
    const PREMIS: &str = "xmlns:premis=\"info:lc/xmlns/premis-v2\"";
    let profile = profile.map(|p| format!(" PROFILE=\"{p}\"")).unwrap_or_default();
    let mut amd = String::new();
    for (i, f) in files.iter().enumerate() {
        amd.push_str(&format!(
            r#"  <mets:amdSec ID="AMD{id}">
    <mets:digiprovMD ID="DMD{id}">
      <mets:mdWrap MDTYPE="PREMIS:OBJECT"><mets:xmlData>
        <premis:object {PREMIS} xsi:type="premis:file">
          <premis:objectIdentifier><premis:objectIdentifierType>ARK</premis:objectIdentifierType><premis:objectIdentifierValue>ark:/81055/vdc_0000.0x{i:06}</premis:objectIdentifierValue></premis:objectIdentifier>
          <premis:objectCharacteristics>
            <premis:compositionLevel>1</premis:compositionLevel>
            <premis:fixity><premis:messageDigestAlgorithm>SHA-512</premis:messageDigestAlgorithm><premis:messageDigest>{sha}</premis:messageDigest></premis:fixity>
            <premis:size>{size}</premis:size>
            <premis:format><premis:formatDesignation><premis:formatName>{mime}</premis:formatName></premis:formatDesignation></premis:format>
          </premis:objectCharacteristics>
        </premis:object>
      </mets:xmlData></mets:mdWrap>
    </mets:digiprovMD>
    <mets:digiprovMD ID="EVT{id}">
      <mets:mdWrap MDTYPE="PREMIS:EVENT"><mets:xmlData>
        <premis:event {PREMIS}>
          <premis:eventIdentifier><premis:eventIdentifierType>local</premis:eventIdentifierType><premis:eventIdentifierValue>EVENT{id}</premis:eventIdentifierValue></premis:eventIdentifier>
          <premis:eventType>virusCheck</premis:eventType>
          <premis:eventDateTime>2014-12-09T14:04:40</premis:eventDateTime>
          <premis:eventOutcomeInformation><premis:eventOutcome>no virus detected</premis:eventOutcome></premis:eventOutcomeInformation>
          <premis:linkingAgentIdentifier><premis:linkingAgentIdentifierType>local</premis:linkingAgentIdentifierType><premis:linkingAgentIdentifierValue>AGENT-CLAM</premis:linkingAgentIdentifierValue></premis:linkingAgentIdentifier>
        </premis:event>
      </mets:xmlData></mets:mdWrap>
    </mets:digiprovMD>
  </mets:amdSec>
"#,
            id = f.id,
            sha = f.premis_sha512,
            size = f.premis_size,
            mime = f.mime,
        ));
    }
    let mut groups = String::new();
    for group in ["DigitalManifestation", "ViralFiles", "Logfiles"] {
        groups.push_str(&format!("    <mets:fileGrp USE=\"{group}\">\n"));
        for f in files.iter().filter(|f| f.group == group) {
            groups.push_str(&format!(
                r#"      <mets:file ID="{id}" MIMETYPE="{mime}" ADMID="AMD{id}" CHECKSUMTYPE="SHA-512" CHECKSUM="{sha}" SIZE="{size}">
        <mets:FLocat xmlns:xlink="http://www.w3.org/1999/xlink" LOCTYPE="URL" xlink:href="{href}"/>
      </mets:file>
"#,
                id = f.id,
                mime = f.mime,
                sha = f.sha512,
                size = f.size,
                href = f.href,
            ));
        }
        groups.push_str("    </mets:fileGrp>\n");
    }
    let fptrs: String =
        files.iter().map(|f| format!("      <mets:fptr FILEID=\"{}\"/>\n", f.id)).collect();
    format!(
        r#"<?xml version='1.0' encoding='UTF-8'?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" TYPE="webarchive_domain"{profile}>
  <mets:metsHdr CREATEDATE="2014-12-19T15:34:08Z">
    <mets:agent TYPE="OTHER" ROLE="CREATOR" OTHERTYPE="software"><mets:name>create_mets;0.1682</mets:name></mets:agent>
  </mets:metsHdr>
  <mets:amdSec ID="AMD0000">
    <mets:digiprovMD ID="DP0002">
      <mets:mdWrap MDTYPE="PREMIS:AGENT"><mets:xmlData>
        <premis:agent {PREMIS}>
          <premis:agentIdentifier><premis:agentIdentifierType>local</premis:agentIdentifierType><premis:agentIdentifierValue>AGENT-CLAM</premis:agentIdentifierValue></premis:agentIdentifier>
          <premis:agentName>ClamAV 0.97.4/19805/Thu Dec 18 23:48:04 2014</premis:agentName>
          <premis:agentType>software</premis:agentType>
        </premis:agent>
      </mets:xmlData></mets:mdWrap>
    </mets:digiprovMD>
  </mets:amdSec>
{amd}  <mets:fileSec>
{groups}  </mets:fileSec>
  <mets:structMap TYPE="logical">
    <mets:div ADMID="AMD0000" TYPE="uk-web-domain" ID="div0000">
{fptrs}    </mets:div>
  </mets:structMap>
</mets:mets>
"#
    )
}

/// The files of a SIP: the WARC and the log zip kept in the BL store, and a crawl log kept in
/// the folder beside the METS (so there are bytes to check).
pub(crate) fn sip_files(log: &[u8]) -> Vec<SipFile> {
    vec![
        SipFile::remote(
            "WARC1743",
            "DigitalManifestation",
            "application/warc",
            "warcs/BL-1.warc.gz",
        ),
        SipFile::remote("ZIP1744", "Logfiles", "application/zip", "logs/20141209090016.zip"),
        SipFile::local("LOG1745", "Logfiles", "crawl.log", log),
    ]
}

pub(crate) const LOG: &[u8] =
    b"2014-12-09T09:00:32.123Z   200       1234 http://www.bl.uk/ - - text/html\n";

/// A folder of SIP METS documents: this one, another SIP's, and the crawl log this one lists.
fn sip_folder(dir: &Path, mets: &str) -> std::path::PathBuf {
    fs::create_dir_all(dir).unwrap();
    let path = dir.join("sip-20141209090016.xml");
    fs::write(&path, mets).unwrap();
    let other = bl_sip(&sip_files(b"another crawl\n")[..2], None);
    fs::write(dir.join("sip-20150101000000.xml"), other).unwrap();
    fs::write(dir.join("crawl.log"), LOG).unwrap();
    path
}

/// `webaip audit --deep` in text, with the shared schemas: (exit status, stdout).
fn audit_text(mets: &Path) -> (i32, String) {
    let schemas = schemas().display().to_string();
    let o = webaip(&["audit", "--deep", "--schemas", &schemas, mets.to_str().unwrap()]);
    (o.status.code().unwrap(), String::from_utf8_lossy(&o.stdout).into_owned())
}

fn errors(r: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f.to_string())
        .collect();
    out.extend(
        r["validation"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| f.to_string()),
    );
    out
}

#[test]
fn a_bl_sip_beside_another_is_audited_under_the_profile_its_premis_fits() {
    let tmp = tempfile::tempdir().unwrap();
    let mets = sip_folder(&tmp.path().join("sips"), &bl_sip(&sip_files(LOG), None));
    // The test input is what the BL wrote: valid under the legacy bundle, not the strict one.
    let (ok, why) = crate::mets_package::oracle_validate_with(&mets, "mets-bundle-legacy.xsd");
    assert!(ok, "{why}");
    let (ok, why) = crate::mets_package::oracle_validate_with(&mets, "mets-bundle.xsd");
    assert!(!ok, "the strict bundle accepts PREMIS 2: {why}");

    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["verdict"], "partial", "{r:#}");
    assert!(errors(&r).is_empty(), "{:#?}", errors(&r));
    let v = &r["validation"];
    assert_eq!(v["profile"], "bl-legacy");
    assert_eq!(v["profile_source"], "chosen");
    assert_eq!(v["profile_required"], false);
    assert!(v["profile_note"].as_str().unwrap().contains("--profile bl-legacy"), "{v}");
    assert!(v["xsd"]["bundle"].as_str().unwrap().ends_with("mets-bundle-legacy.xsd"), "{v}");
    assert_eq!(v["valid"], true);
    // The two files kept in the store and the manifest bl-legacy does not ask for are not
    // checkable here; the crawl log in the folder is read and matches.
    let unchecked: Vec<&str> =
        r["unchecked"].as_array().unwrap().iter().map(|u| u["file"].as_str().unwrap()).collect();
    assert_eq!(unchecked.len(), 3, "{unchecked:?}");
    assert!(unchecked.iter().filter(|u| u.starts_with("http://")).count() == 2, "{unchecked:?}");
    assert!(unchecked.contains(&"manifest-sha512.txt"), "{unchecked:?}");
    assert_eq!((r["files_listed"].as_u64(), r["files_checked"].as_u64()), (Some(3), Some(1)));
    // The other SIP's METS is a package of its own, not an unlisted file of this one.
    let other: Vec<&serde_json::Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == "sip-20150101000000.xml")
        .collect();
    assert_eq!(other.len(), 1, "{r:#}");
    assert_eq!(other[0]["severity"], "info");
    assert!(other[0]["message"].as_str().unwrap().contains("another METS document"));

    let (code, text) = audit_text(&mets);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("NO DAMAGE FOUND IN WHAT COULD BE CHECKED"), "{text}");
    assert!(text.contains("profile bl-legacy (chosen from the document, advisory)"), "{text}");
    assert!(text.contains("give --profile bl-legacy"), "{text}");
    assert!(!text.contains("DAMAGED") && !text.contains("error ["), "{text}");

    // A PROFILE naming a profile webaip does not know changes nothing but the note.
    let named = bl_sip(&sip_files(LOG), Some("http://www.bl.uk/profiles/webarchive-sip"));
    let mets = sip_folder(&tmp.path().join("named"), &named);
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (0, Some("partial")), "{r:#}");
    assert_eq!(r["validation"]["profile_source"], "chosen");
    let note = r["validation"]["profile_note"].as_str().unwrap();
    assert!(note.contains("webarchive-sip") && note.contains("does not know"), "{note}");

    // Required by --profile, it is valid too, and what bl-legacy asks for it has.
    let (code, r) = audit_with(&mets, &["--profile", "bl-legacy"]);
    assert_eq!((code, r["verdict"].as_str()), (0, Some("partial")), "{r:#}");
    assert_eq!(r["validation"]["profile_source"], "given");
}

/// Bytes that differ from what the METS says are damage, whatever the profile: a byte changed
/// in the crawl log, or the log gone.
#[test]
fn a_foreign_sip_whose_local_bytes_differ_is_damaged() {
    let tmp = tempfile::tempdir().unwrap();
    let mets = sip_folder(&tmp.path().join("changed"), &bl_sip(&sip_files(LOG), None));
    let mut bytes = LOG.to_vec();
    bytes[5] ^= 0x10;
    fs::write(tmp.path().join("changed/crawl.log"), &bytes).unwrap();
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (1, Some("damaged")), "{r:#}");
    let e = errors(&r);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("\"fixity\"") && e[0].contains("crawl.log") && e[0].contains("CHECKSUM"));
    let (code, text) = audit_text(&mets);
    assert_eq!(code, 1);
    assert!(text.contains(": DAMAGED:"), "{text}");

    let mets = sip_folder(&tmp.path().join("gone"), &bl_sip(&sip_files(LOG), None));
    fs::remove_file(tmp.path().join("gone/crawl.log")).unwrap();
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (1, Some("damaged")), "{r:#}");
    assert!(errors(&r).iter().any(|e| e.contains("not in the package")), "{r:#}");
}

/// A CHECKSUM is checked by its CHECKSUMTYPE (here MD5, as older SIPs state it): the right
/// MD5 is no finding, a wrong one is damage naming the algorithm, and an algorithm webaip does
/// not compute is a warning that those bytes went unchecked.
#[test]
fn a_checksum_is_checked_by_the_algorithm_its_type_names() {
    use md5::Digest as _;
    let tmp = tempfile::tempdir().unwrap();
    let sha = format!("CHECKSUMTYPE=\"SHA-512\" CHECKSUM=\"{}\"", hex(LOG));
    let md5 = crate::util::hex(&md5::Md5::digest(LOG));
    let as_md5 = |value: &str| {
        bl_sip(&sip_files(LOG), None)
            .replace(&sha, &format!("CHECKSUMTYPE=\"MD5\" CHECKSUM=\"{value}\""))
    };
    let mets = sip_folder(&tmp.path().join("md5"), &as_md5(&md5));
    // The profile wants SHA-512 (P5.1, its validation says so); the audit checks the bytes.
    let fixity = |r: &serde_json::Value| -> Vec<String> {
        let all = r["findings"].as_array().unwrap().iter();
        all.filter(|f| f["severity"] == "error").map(|f| f.to_string()).collect()
    };
    let (_, r) = audit_with(&mets, &["--deep"]);
    assert!(fixity(&r).is_empty(), "{r:#}");
    assert_eq!(r["files_checked"].as_u64(), Some(1), "{r:#}");
    let said: Vec<String> = errors(&r);
    assert!(said.iter().all(|e| !e.contains("differs from the PREMIS fixity")), "{said:#?}");

    // A wrong MD5 beside a PREMIS SHA-512 the bytes have: the METS contradicts itself.
    let wrong = format!("{}0", &md5[..31]);
    let mets = sip_folder(&tmp.path().join("wrong"), &as_md5(&wrong));
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (3, Some("inconsistent")), "{r:#}");
    let said = format!("CHECKSUM {wrong} (MD5); found {md5}, as its PREMIS object states");
    assert!(r["findings"].to_string().contains(&said), "{r:#}");
    // Bytes that have neither digest: damage, by the MD5 the CHECKSUM states.
    let mets = sip_folder(&tmp.path().join("changed"), &as_md5(&md5));
    fs::write(tmp.path().join("changed/crawl.log"), b"other bytes").unwrap();
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (1, Some("damaged")), "{r:#}");
    let e = fixity(&r);
    assert!(e.iter().any(|e| e.contains(&format!("CHECKSUM {md5} (MD5); found "))), "{e:#?}");

    let haval =
        bl_sip(&sip_files(LOG), None).replace(&sha, "CHECKSUMTYPE=\"HAVAL\" CHECKSUM=\"ab\"");
    let mets = sip_folder(&tmp.path().join("haval"), &haval);
    let (_, r) = audit_with(&mets, &["--deep"]);
    assert!(fixity(&r).is_empty(), "{r:#}");
    let warned = r["findings"].as_array().unwrap().iter().any(|f| {
        f["severity"] == "warning"
            && f.to_string().contains("\\\"HAVAL\\\", which webaip does not compute")
    });
    assert!(warned, "{r:#}");
}

/// A SIP whose `<file>` SIZE and CHECKSUM differ from its PREMIS object's (as in one real BL
/// SIP) contradicts itself: an inconsistency, a verdict of its own, not damage.
#[test]
fn a_sip_whose_file_and_premis_object_disagree_is_inconsistent_not_damaged() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = sip_files(LOG);
    files[0].premis_size = 380_442_546;
    files[0].premis_sha512 = hex(b"what the PREMIS object says");
    let mets = sip_folder(&tmp.path().join("sips"), &bl_sip(&files, None));
    let (ok, why) = crate::mets_package::oracle_validate_with(&mets, "mets-bundle-legacy.xsd");
    assert!(ok, "the disagreement is no schema matter: {why}");

    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(r["verdict"], "inconsistent", "{r:#}");
    let inc = r["inconsistencies"].as_array().unwrap();
    assert_eq!(inc.len(), 2, "{inc:#?}");
    assert!(inc.iter().all(|f| f["rule"] == "P5.1"), "{inc:#?}");
    assert!(inc.iter().any(|f| f["message"].as_str().unwrap().starts_with("SIZE 380442545")));
    assert!(inc.iter().any(|f| f["message"].as_str().unwrap().starts_with("CHECKSUM ")));
    // Nothing else is wrong: no byte finding, no other METS error.
    let others: Vec<String> = errors(&r).into_iter().filter(|e| !e.contains("\"P5.1\"")).collect();
    assert!(others.is_empty(), "{others:#?}");
    assert_eq!(r["validation"]["profile"], "bl-legacy");

    let (code, text) = audit_text(&mets);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("INCONSISTENT DESCRIPTION"), "{text}");
    assert!(text.contains("inconsistent description [P5.1] SIZE 380442545"), "{text}");
    assert!(!text.contains("DAMAGED"), "{text}");
    assert!(text.contains("2 inconsistencies, 0 byte findings"), "{text}");

    // Damaged bytes beside it still make the package damaged.
    fs::write(tmp.path().join("sips/crawl.log"), b"changed").unwrap();
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (1, Some("damaged")), "{r:#}");

    // A local file whose <file> attributes are wrong but whose PREMIS object states its bytes:
    // the METS contradicts itself, the bytes are what one of its statements says.
    let mut files = sip_files(LOG);
    files[2].size += 1;
    files[2].sha512 = hex(b"what the METS attribute says");
    let mets = sip_folder(&tmp.path().join("local"), &bl_sip(&files, None));
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (3, Some("inconsistent")), "{r:#}");
    assert_eq!(r["inconsistencies"].as_array().unwrap().len(), 2, "{r:#}");
    let fixity: Vec<&serde_json::Value> =
        r["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "fixity").collect();
    assert_eq!(fixity.len(), 2, "{r:#}");
    for f in fixity {
        assert_eq!(f["severity"], "warning", "{f}");
        assert_eq!(f["file"], "crawl.log");
        assert!(f["message"].as_str().unwrap().contains("as its PREMIS object states"), "{f}");
    }
    // Bytes that match neither statement are damage.
    fs::write(tmp.path().join("local/crawl.log"), b"neither").unwrap();
    let (code, r) = audit_with(&mets, &["--deep"]);
    assert_eq!((code, r["verdict"].as_str()), (1, Some("damaged")), "{r:#}");
}

/// A schema folder without the bundle that knows PREMIS 2 cannot check a PREMIS 2 SIP: the
/// audit says which bundle it needs (exit 2), rather than validating it against PREMIS 3.
#[test]
fn without_the_legacy_bundle_a_premis2_sip_names_the_bundle_it_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let mets = sip_folder(&tmp.path().join("sips"), &bl_sip(&sip_files(LOG), None));
    let strict = tmp.path().join("xsd");
    fs::create_dir(&strict).unwrap();
    for e in fs::read_dir(schemas()).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if e.path().is_file() && name != "mets-bundle-legacy.xsd" {
            fs::copy(e.path(), strict.join(name)).unwrap();
        }
    }
    let o = webaip(&["audit", "--schemas", strict.to_str().unwrap(), mets.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no schema bundle mets-bundle-legacy.xsd") && err.contains("PREMIS 2"));
}

/// The audit reads the package's identity and package-level PREMIS typed: a BL SIP has a TYPE
/// and no OBJID; an event linking an agent the package does not hold is a warning.
#[test]
fn the_identity_and_package_level_premis_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let mets = sip_folder(&tmp.path().join("sips"), &bl_sip(&sip_files(LOG), None));
    let (_, r) = audit_with(&mets, &[]);
    let i = &r["identity"];
    assert_eq!(i["objid"], serde_json::Value::Null, "{i}");
    assert_eq!(i["mets_type"], "webarchive_domain");
    assert_eq!(
        (i["premis_agents"].as_u64(), i["premis_events"].as_u64()),
        (Some(1), Some(3)),
        "{i}"
    );
    let unlinked = |r: &serde_json::Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "premis-agents")
            .map(|f| f["message"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(unlinked(&r), Vec::<String>::new());
    let (_, text) = audit_text(&mets);
    assert!(text.contains("OBJID -, TYPE webarchive_domain, PROFILE -; 1 PREMIS agents and 3 events at package level"), "{text}");

    let gone = bl_sip(&sip_files(LOG), None).replacen(
        "AGENT-CLAM</premis:linkingAgentIdentifierValue>",
        "AGENT-GONE</premis:linkingAgentIdentifierValue>",
        1,
    );
    let mets = sip_folder(&tmp.path().join("gone"), &gone);
    let (_, r) = audit_with(&mets, &[]);
    let first = r["identity"]["premis_events"].as_u64();
    assert_eq!(first, Some(3));
    let messages = unlinked(&r);
    assert_eq!(messages.len(), 1, "{r:#}");
    assert!(messages[0].contains("links agent AGENT-GONE"), "{messages:?}");
}
