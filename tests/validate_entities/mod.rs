//! `webaip validate` and `webaip audit` check the curator entities of the logical map (P2.1-P2.3):
//! WEBPAGE and ASSOCIATEDOBJECT divs are injected, as the METS writer lays them out, into real
//! packages of the sample crawl (full mode, every record and bytestream `<file>` listed); the
//! records they point at are found with warcio, not with webaip. The clean injection must pass
//! both validators and the audit; each kind of damage must fail with its rule, naming the div,
//! the URLs, the container and the offset.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::sha512_hex;

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{
    Finding, Package, Validation, corpus, oracle, package, sample, schemas, validate_mets, webaip,
};

/// The attributes of every `<mets:file>` start tag, in document order.
fn file_tags(mets: &str) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut rest = mets;
    while let Some(at) = rest.find("<mets:file ") {
        let tag = &rest[at + 11..at + rest[at..].find('>').unwrap()];
        let mut attrs = Vec::new();
        let mut t = tag;
        while let Some(eq) = t.find("=\"") {
            let key = t[..eq].trim().to_string();
            let v = &t[eq + 2..];
            let end = v.find('"').unwrap();
            attrs.push((key, v[..end].to_string()));
            t = &v[end + 1..];
        }
        out.push(attrs);
        rest = &rest[at + 11..];
    }
    out
}

fn get<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// The ID of the top-level `<file>` whose FLocat is `href`.
fn container_id(mets: &str, href: &str) -> String {
    let at = mets.find(&format!("xlink:href=\"{href}\"")).expect("container listed");
    let start = mets[..at].rfind("<mets:file ID=\"").unwrap() + 15;
    mets[start..start + mets[start..].find('"').unwrap()].to_string()
}

/// The record `<file>` of container `container` whose range starts at `begin` (where warcio
/// says the record is), with its attributes.
fn record_at(mets: &str, container: &str, begin: u64) -> Vec<(String, String)> {
    let found: Vec<_> = file_tags(mets)
        .into_iter()
        .filter(|a| {
            let id = get(a, "ID").unwrap_or_default();
            id.starts_with(&format!("{container}-R"))
                && !id.ends_with("-P")
                && get(a, "BEGIN") == Some(&begin.to_string())
        })
        .collect();
    assert_eq!(found.len(), 1, "one record of {container} at {begin}");
    found.into_iter().next().unwrap()
}

/// One injected entity: a div below the website div and its MODS dmdSec.
struct Entity<'a> {
    n: u32,
    div_type: &'a str,
    title: &'a str,
    url: &'a str,
    /// The page an associated object belongs to (`relatedItem type="host"`).
    host: Option<&'a str>,
    fileid: &'a str,
}

/// The METS with `entities` added exactly as the writer lays them out, and `extra` (undescribed
/// divs) after them.
fn inject(mets: &str, entities: &[Entity], extra: &str) -> String {
    let mut dmd = String::new();
    let mut divs = String::new();
    for e in entities {
        // The host's URL comes first, so a reader taking the first mods:url gets it wrong.
        let host = e.host.map(|h| format!(
            "          <mods:relatedItem type=\"host\"><mods:location><mods:url>{h}</mods:url></mods:location></mods:relatedItem>\n"
        )).unwrap_or_default();
        dmd.push_str(&format!(
            r#"  <mets:dmdSec ID="DMD-PAGE-{n}" CREATED="2017-08-01T00:00:00Z">
    <mets:mdWrap MDTYPE="MODS" MIMETYPE="text/xml" LABEL="Webpage (MODS)">
      <mets:xmlData>
        <mods:mods version="3.8">
          <mods:titleInfo><mods:title>{title}</mods:title></mods:titleInfo>
{host}          <mods:location><mods:url usage="primary">{url}</mods:url></mods:location>
        </mods:mods>
      </mets:xmlData>
    </mets:mdWrap>
  </mets:dmdSec>
"#,
            n = e.n,
            title = e.title,
            url = e.url,
        ));
        divs.push_str(&format!(
            "      <mets:div ID=\"DIV-PAGE-{n}\" TYPE=\"{t}\" LABEL=\"{title}\" DMDID=\"DMD-PAGE-{n}\"><mets:fptr FILEID=\"{f}\"/></mets:div>\n",
            n = e.n,
            t = e.div_type,
            title = e.title,
            f = e.fileid
        ));
    }
    divs.push_str(extra);
    let anchor = "  <mets:dmdSec ID=\"DMD-DC\"";
    assert!(mets.contains(anchor));
    let text = mets.replacen(anchor, &format!("{dmd}{anchor}"), 1);
    // The divs go last in the website div, after its fptrs.
    let logical = text.find("<mets:structMap TYPE=\"logical\"").unwrap();
    let close = logical + text[logical..].find("</mets:structMap>").unwrap();
    let div_end = text[..close].rfind("    </mets:div>").unwrap();
    format!("{}{divs}{}", &text[..div_end], &text[div_end..])
}

/// Writes `mets` as the package's METS.xml and updates the manifest line for it.
fn install(pkg: &Path, mets: &str) {
    fs::write(pkg.join("METS.xml"), mets).unwrap();
    let manifest = pkg.join("manifest-sha512.txt");
    let text = fs::read_to_string(&manifest).unwrap();
    let sha = sha512_hex(mets.as_bytes());
    let lines: Vec<String> = text
        .lines()
        .map(|l| if l.ends_with("  METS.xml") { format!("{sha}  METS.xml") } else { l.into() })
        .collect();
    assert!(lines.iter().any(|l| l.starts_with(&sha)), "the manifest lists METS.xml");
    fs::write(manifest, lines.join("\n") + "\n").unwrap();
}

fn validate(mets: &Path) -> Validation {
    validate_mets(mets, Some(&schemas()), None)
}

fn errors(r: &Validation) -> Vec<&Finding> {
    r.errors()
}

/// Replaces the first `from` (which must be there) by `to`.
fn mutate(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "mutation anchor missing: {from}");
    text.replacen(from, to, 1)
}

/// The sample crawl packaged, with a described page, an associated object, a page whose
/// capture has no payload (the fptr names the record itself) and an undescribed WEBPAGE div.
struct Described {
    _tmp: tempfile::TempDir,
    pkg: PathBuf,
    mets: String,
    /// Package-relative name of the container holding the described records.
    href: String,
    /// Offset of about.html's record in it (warcio's).
    about_at: u64,
    about_p: String,
    logo_p: String,
}

fn described() -> Described {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = package(
        Package::new().quiet().deterministic().mode("full"),
        &tmp.path().join("pkg"),
        &[&sample("heritrix-job")],
    )
    .succeeded()
    .out;
    let href = "content/IAH-20240315103000-00000-crawler.example.warc.gz".to_string();
    let base = fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let container = container_id(&base, &href);
    let records = oracle(&pkg.join(&href), false).records;
    let find = |uri: &str| {
        records
            .iter()
            .find(|r| r.rec_type == "response" && r.uri.as_deref() == Some(uri))
            .unwrap_or_else(|| panic!("warcio finds {uri}"))
    };
    let (about, logo, old) = (
        find("http://www.example.org/about.html"),
        find("http://www.example.org/img/logo.png"),
        find("http://www.example.org/old-page"),
    );
    // The bytestream `<file>` of each record holds what warcio reads as the payload.
    let bytestream = |r: &crate::util::OracleRecord| {
        let rec = record_at(&base, &container, r.offset);
        let id = format!("{}-P", get(&rec, "ID").unwrap());
        let tags = file_tags(&base);
        let p = tags.iter().find(|a| get(a, "ID") == Some(&id)).expect("bytestream listed");
        assert_eq!(get(p, "CHECKSUM"), Some(r.payload_sha512.as_str()), "{id}");
        id
    };
    let (about_p, logo_p) = (bytestream(about), bytestream(logo));
    // The redirect has no payload: its record has no bytestream, and the fptr names it.
    let old_rec = record_at(&base, &container, old.offset);
    let old_id = get(&old_rec, "ID").unwrap().to_string();
    assert_eq!(old.payload_len, 0);
    assert!(!base.contains(&format!("ID=\"{old_id}-P\"")));
    let mets = inject(
        &base,
        &[
            Entity {
                n: 1,
                div_type: "WEBPAGE",
                title: "About us",
                url: "http://www.example.org/about.html",
                host: None,
                fileid: &about_p,
            },
            Entity {
                n: 2,
                div_type: "ASSOCIATEDOBJECT",
                title: "Society logo",
                url: "http://www.example.org/img/logo.png",
                host: Some("http://www.example.org/about.html"),
                fileid: &logo_p,
            },
            Entity {
                n: 3,
                div_type: "WEBPAGE",
                title: "Old page",
                url: "http://www.example.org/old-page",
                host: None,
                fileid: &old_id,
            },
        ],
        // A transformed page's automatic div: no descriptions, so only its fptr is checked
        // (it names a record of another URL, which is not an error).
        &format!(
            "      <mets:div ID=\"DIV-AUTO-1\" TYPE=\"WEBPAGE\"><mets:fptr FILEID=\"{about_p}\"/></mets:div>\n"
        ),
    );
    assert!(mets.contains(&format!("<mets:fptr FILEID=\"{about_p}\"/></mets:div>")));
    install(&pkg, &mets);
    Described { _tmp: tmp, pkg, mets, href, about_at: about.offset, about_p, logo_p }
}

fn audit_json(pkg: &Path) -> (i32, serde_json::Value) {
    let s = schemas();
    let o = webaip(&["audit", "--json", "--schemas", s.to_str().unwrap(), pkg.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("no JSON: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap(), v["packages"][0].clone())
}

#[test]
fn described_entities_pass_both_validators_and_the_audit() {
    let d = described();
    let mets = d.pkg.join("METS.xml");
    assert_webaip_valid(&mets);
    let (ok, text) = oracle_validate(&mets);
    assert!(ok, "{text}");
    let s = schemas();
    let o = webaip(&["validate", "--schemas", s.to_str().unwrap(), mets.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let (code, report) = audit_json(&d.pkg);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["verdict"], "intact", "{report:#}");
}

#[test]
fn each_kind_of_entity_damage_fails_with_its_rule() {
    let d = described();
    let (about, logo) = (d.about_p.as_str(), d.logo_p.as_str());
    let about_url = "<mods:url usage=\"primary\">http://www.example.org/about.html</mods:url>";
    let logo_location = "<mods:location><mods:url usage=\"primary\">http://www.example.org/img/logo.png</mods:url></mods:location>";
    let at = format!("byte {}", d.about_at);
    let cases: Vec<(&str, String, &str, Vec<&str>)> = vec![
        (
            "MODS URL differs from the record's WARC-Target-URI",
            mutate(
                &d.mets,
                about_url,
                "<mods:url usage=\"primary\">http://www.example.org/index.html</mods:url>",
            ),
            "P2.3",
            vec![
                "DIV-PAGE-1",
                "\"http://www.example.org/index.html\"",
                "WARC-Target-URI \"http://www.example.org/about.html\"",
                &d.href,
                &at,
            ],
        ),
        (
            "fptr of the associated object leads to the page's record",
            mutate(
                &d.mets,
                &format!("DMDID=\"DMD-PAGE-2\"><mets:fptr FILEID=\"{logo}\""),
                &format!("DMDID=\"DMD-PAGE-2\"><mets:fptr FILEID=\"{about}\""),
            ),
            "P2.3",
            vec!["DIV-PAGE-2", "img/logo.png", "about.html", &d.href, &at],
        ),
        (
            "DMDID naming no dmdSec",
            mutate(&d.mets, "DMDID=\"DMD-PAGE-1\"", "DMDID=\"DMD-PAGE-9\""),
            "P2.2",
            vec!["DMDID \"DMD-PAGE-9\" points at no <dmdSec>"],
        ),
        (
            "DMDID naming a file",
            mutate(&d.mets, "DMDID=\"DMD-PAGE-1\"", "DMDID=\"FILE-C00001\""),
            "P2.2",
            vec!["DMDID \"FILE-C00001\"", "a <file>; expected a <dmdSec>"],
        ),
        (
            "a page described by Dublin Core only",
            mutate(&d.mets, "DMDID=\"DMD-PAGE-1\"", "DMDID=\"DMD-DC\""),
            "P2.2",
            vec!["DIV-PAGE-1", "holds MODS"],
        ),
        (
            "fptr naming no file",
            mutate(
                &d.mets,
                &format!(
                    "<mets:fptr FILEID=\"{about}\"/></mets:div>\n      <mets:div ID=\"DIV-PAGE-2\""
                ),
                "<mets:fptr FILEID=\"FILE-C00001-R999999-P\"/></mets:div>\n      <mets:div ID=\"DIV-PAGE-2\"",
            ),
            "P2.3",
            vec!["FILEID \"FILE-C00001-R999999-P\" points at no <file>"],
        ),
        (
            "fptr naming a dmdSec",
            mutate(
                &d.mets,
                &format!("DMDID=\"DMD-PAGE-1\"><mets:fptr FILEID=\"{about}\""),
                "DMDID=\"DMD-PAGE-1\"><mets:fptr FILEID=\"DMD-PAGE-2\"",
            ),
            "P2.3",
            vec!["FILEID \"DMD-PAGE-2\"", "a <dmdSec>; expected a <file>"],
        ),
        (
            "fptr of an undescribed div naming no file",
            mutate(
                &d.mets,
                &format!("TYPE=\"WEBPAGE\"><mets:fptr FILEID=\"{about}\""),
                "TYPE=\"WEBPAGE\"><mets:fptr FILEID=\"FILE-GONE\"",
            ),
            "P2.3",
            vec!["FILEID \"FILE-GONE\" points at no <file>"],
        ),
        (
            "a div three levels deep",
            mutate(
                &d.mets,
                &format!("<mets:fptr FILEID=\"{about}\"/></mets:div>"),
                &format!(
                    "<mets:fptr FILEID=\"{about}\"/><mets:div ID=\"DIV-DEEP\" TYPE=\"WEBPAGE\"><mets:fptr FILEID=\"{about}\"/></mets:div></mets:div>"
                ),
            ),
            "P2.1",
            vec!["DIV-DEEP is at depth 3", "deeper than two levels"],
        ),
        (
            "a page's MODS without a URL",
            mutate(&d.mets, &format!("<mods:location>{about_url}</mods:location>"), ""),
            "P2.2",
            vec!["DIV-PAGE-1", "DMD-PAGE-1", "no mods:location/mods:url"],
        ),
        (
            // Its host's URL, inside relatedItem, is not its own.
            "an associated object's MODS with only its host's URL",
            mutate(&d.mets, logo_location, ""),
            "P2.2",
            vec!["DIV-PAGE-2", "DMD-PAGE-2", "outside mods:relatedItem"],
        ),
    ];
    for (name, text, rule, fragments) in cases {
        assert_ne!(text, d.mets, "{name}: the mutation changes the METS");
        // Next to the package's METS, so that its containers are found.
        let path = d.pkg.join("METS-mutated.xml");
        fs::write(&path, &text).unwrap();
        let r = validate(&path);
        assert!(!r.valid, "{name}: accepted: {:#?}", r.findings);
        let errs = errors(&r);
        assert!(errs.iter().all(|f| f.rule == rule), "{name}: errors other than {rule}: {errs:#?}");
        assert!(
            errs.iter().any(|f| f.line.is_some_and(|l| l > 1)
                && fragments.iter().all(|frag| f.message.contains(frag))),
            "{name}: no {rule} error with {fragments:?}: {errs:#?}"
        );
    }
}

#[test]
fn audit_counts_entity_errors_toward_its_verdict() {
    let d = described();
    let bad = mutate(
        &d.mets,
        "<mods:url usage=\"primary\">http://www.example.org/about.html</mods:url>",
        "<mods:url usage=\"primary\">http://www.example.org/index.html</mods:url>",
    );
    install(&d.pkg, &bad);
    let (code, report) = audit_json(&d.pkg);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["verdict"], "invalid");
    // The bytes are intact: the only findings are the METS's.
    assert_eq!(report["findings"].as_array().unwrap().len(), 0, "{report:#}");
    let found = report["validation"]["findings"].as_array().unwrap().iter().any(|f| {
        f["severity"] == "error"
            && f["rule"] == "P2.3"
            && f["message"].as_str().unwrap().contains("DIV-PAGE-1")
            && f["message"].as_str().unwrap().contains(&d.href)
    });
    assert!(found, "{report:#}");
    let s = schemas();
    let o = webaip(&["audit", "--schemas", s.to_str().unwrap(), d.pkg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("error [P2.3] DIV-PAGE-1: MODS URL"), "{text}");
    assert!(text.contains("INVALID DESCRIPTION"), "{text}");
}

#[test]
fn absent_containers_are_a_notice_and_unreadable_records_an_error() {
    let d = described();
    // The METS alone, without its containers.
    let alone = tempfile::tempdir().unwrap();
    let mets = alone.path().join("METS.xml");
    fs::write(&mets, &d.mets).unwrap();
    let r = validate(&mets);
    assert!(r.valid, "{:#?}", r.findings);
    let notices: Vec<&Finding> = r.findings.iter().filter(|f| f.rule == "P2.3").collect();
    assert_eq!(notices.len(), 3, "one per described div: {notices:#?}");
    assert!(notices.iter().all(|f| f.severity == "warning"
        && f.message.contains("not checkable here")
        && f.message.contains(&d.href)));

    // A container removed from the package: the same.
    fs::remove_file(d.pkg.join(&d.href)).unwrap();
    let r = validate(&d.pkg.join("METS.xml"));
    assert!(r.valid, "{:#?}", r.findings);
    assert_eq!(r.findings.iter().filter(|f| f.message.contains("not checkable here")).count(), 3);

    // A container whose record is damaged where the METS says it starts: an error naming the
    // container and the offset.
    let d = described();
    let container = d.pkg.join(&d.href);
    let mut bytes = fs::read(&container).unwrap();
    bytes[d.about_at as usize] = b'X';
    fs::write(&container, bytes).unwrap();
    let r = validate(&d.pkg.join("METS.xml"));
    let errs = errors(&r);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let m = &errs[0].message;
    assert_eq!(errs[0].rule, "P2.3");
    assert!(
        m.contains("DIV-PAGE-1")
            && m.contains("cannot be read")
            && m.contains(&d.href)
            && m.contains(&format!("byte {}", d.about_at)),
        "{m}"
    );
}

#[test]
fn records_of_an_uncompressed_container_are_read_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("in");
    fs::create_dir(&src).unwrap();
    let name = "nas-NAS-20100909163324-00000-mette.kb.dk.warc";
    let input = src.join(name);
    fs::copy(corpus().join("warc").join(name), &input).unwrap();
    let pkg = package(
        Package::new().quiet().deterministic().mode("full"),
        &tmp.path().join("pkg"),
        &[&input],
    )
    .succeeded()
    .out;
    let href = format!("content/{name}");
    let base = fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let container = container_id(&base, &href);
    let records = oracle(&pkg.join(&href), false).records;
    let page = records
        .iter()
        .find(|r| {
            r.rec_type == "response"
                && r.payload_len > 0
                && r.uri.as_deref() == Some("http://netarkivet.dk/index-da.php")
        })
        .expect("the home page's response");
    let uri = page.uri.clone().unwrap();
    let rec = record_at(&base, &container, page.offset);
    // Addressed directly: no gzip member, no transform.
    assert_eq!(get(&rec, "MIMETYPE"), Some("application/warc"));
    let id = get(&rec, "ID").unwrap().to_string();
    let p = format!("{id}-P");
    assert!(base.contains(&format!("ID=\"{p}\"")));
    let after = &base[base.find(&format!("ID=\"{id}\"")).unwrap()..];
    assert!(!after[..after.find("</mets:file>").unwrap()].contains("GZIP"));
    let entity =
        Entity { n: 1, div_type: "WEBPAGE", title: "A page", url: &uri, host: None, fileid: &p };
    let mets = inject(&base, &[entity], "");
    install(&pkg, &mets);
    assert_webaip_valid(&pkg.join("METS.xml"));
    let (code, report) = audit_json(&pkg);
    assert_eq!((code, report["verdict"].as_str()), (0, Some("intact")), "{report:#}");

    let other = "http://www.example.org/not-this-page.html";
    let bad =
        mutate(&mets, &format!("usage=\"primary\">{uri}<"), &format!("usage=\"primary\">{other}<"));
    let path = pkg.join("METS-mutated.xml");
    fs::write(&path, bad).unwrap();
    let r = validate(&path);
    let errs = errors(&r);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let m = &errs[0].message;
    assert!(
        m.contains(other) && m.contains(&uri) && m.contains(&format!("byte {}", page.offset)),
        "{m}"
    );
}
