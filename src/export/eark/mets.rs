//! The METS documents of an E-ARK package: the root METS (CSIP + SIP or AIP) and one METS per
//! representation. Everything they list has been written before, so each entry carries the
//! size and SHA-256 measured while it was copied.

use std::io;

use super::sink::Written;
use super::{PROFILE_AIP, PROFILE_SIP, PackageType};
use crate::mets::xml::XmlOut;

/// The CSIP extension namespace.
pub const NS_CSIP: &str = "https://DILCIS.eu/XML/METS/CSIPExtensionMETS";
/// The SIP extension namespace.
pub const NS_SIP: &str = "https://DILCIS.eu/XML/METS/SIPExtensionMETS";

/// A file the METS lists: its path from the document's folder, MIME type and what was measured.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub href: String,
    pub mime: String,
    pub written: Written,
}

/// A metadata record referenced from a dmdSec or amdSec.
#[derive(Debug, Clone)]
pub(crate) struct MdEntry {
    pub id: String,
    /// METS `MDTYPE`, and `OTHERMDTYPE` when that is `OTHER`.
    pub mdtype: &'static str,
    pub other_mdtype: Option<&'static str>,
    pub entry: Entry,
}

/// A representation as the root METS points at it.
#[derive(Debug, Clone)]
pub(crate) struct RepRef {
    pub name: String,
    pub mets: Entry,
    /// `csip:OTHERCONTENTINFORMATIONTYPE` of its file group.
    pub content_type: &'static str,
}

/// What both kinds of METS document share in their header.
#[derive(Clone, Copy)]
pub(crate) struct Head<'a> {
    pub objid: &'a str,
    pub label: Option<&'a str>,
    pub kind: PackageType,
    pub now: &'a str,
    pub created: &'a str,
    pub content_type: &'a str,
    /// The agent submitting a SIP (root METS only).
    pub submitter: Option<Submitter<'a>>,
}

/// The organisation or person submitting a SIP (SIP15-18).
#[derive(Clone, Copy)]
pub(crate) struct Submitter<'a> {
    /// `ORGANIZATION` or `INDIVIDUAL`.
    pub kind: &'a str,
    pub name: &'a str,
}

fn root_attrs<'a>(head: &'a Head<'a>, schemas: &'a str) -> Vec<(&'a str, &'a str)> {
    let profile = match head.kind {
        PackageType::Sip => PROFILE_SIP,
        PackageType::Aip => PROFILE_AIP,
    };
    let mut attrs = vec![
        ("xmlns:mets", "http://www.loc.gov/METS/"),
        ("xmlns:xlink", "http://www.w3.org/1999/xlink"),
        ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
        ("xmlns:csip", NS_CSIP),
        ("xmlns:sip", NS_SIP),
        ("OBJID", head.objid),
    ];
    if let Some(l) = head.label {
        attrs.push(("LABEL", l));
    }
    attrs.extend([
        ("TYPE", "Web Archives"),
        ("csip:CONTENTINFORMATIONTYPE", "OTHER"),
        ("csip:OTHERCONTENTINFORMATIONTYPE", head.content_type),
        ("PROFILE", profile),
        ("xsi:schemaLocation", schemas),
    ]);
    attrs
}

fn header<W: io::Write>(x: &mut XmlOut<W>, head: &Head<'_>) -> io::Result<()> {
    let kind = head.kind.as_str();
    x.start(
        "mets:metsHdr",
        &[
            ("CREATEDATE", head.now),
            ("LASTMODDATE", head.now),
            ("RECORDSTATUS", "NEW"),
            ("csip:OAISPACKAGETYPE", kind),
        ],
    )?;
    x.start("mets:agent", &[("ROLE", "CREATOR"), ("TYPE", "OTHER"), ("OTHERTYPE", "SOFTWARE")])?;
    x.text("mets:name", &[], "webaip")?;
    x.text("mets:note", &[("csip:NOTETYPE", "SOFTWARE VERSION")], env!("CARGO_PKG_VERSION"))?;
    x.end("mets:agent")?;
    if let Some(s) = head.submitter {
        x.start("mets:agent", &[("ROLE", "CREATOR"), ("TYPE", s.kind)])?;
        x.text("mets:name", &[], s.name)?;
        x.end("mets:agent")?;
    }
    x.end("mets:metsHdr")
}

fn size(w: &Written) -> String {
    w.size.to_string()
}

/// `mets:file` with its `FLocat`; its `ID` starts with `ID`, as E-ARK AIP9 asks of an AIP.
fn file<W: io::Write>(x: &mut XmlOut<W>, id: &str, e: &Entry, created: &str) -> io::Result<()> {
    let size = size(&e.written);
    x.start(
        "mets:file",
        &[
            ("ID", id),
            ("MIMETYPE", &e.mime),
            ("SIZE", &size),
            ("CREATED", created),
            ("CHECKSUM", &e.written.sha256),
            ("CHECKSUMTYPE", "SHA-256"),
        ],
    )?;
    x.empty(
        "mets:FLocat",
        &[("LOCTYPE", "URL"), ("xlink:type", "simple"), ("xlink:href", &e.href)],
    )?;
    x.end("mets:file")
}

fn md_ref<W: io::Write>(x: &mut XmlOut<W>, md: &MdEntry, created: &str) -> io::Result<()> {
    let size = size(&md.entry.written);
    let mut attrs = vec![
        ("LOCTYPE", "URL"),
        ("xlink:type", "simple"),
        ("xlink:href", md.entry.href.as_str()),
        ("MDTYPE", md.mdtype),
    ];
    if let Some(o) = md.other_mdtype {
        attrs.push(("OTHERMDTYPE", o));
    }
    attrs.extend([
        ("MIMETYPE", md.entry.mime.as_str()),
        ("SIZE", size.as_str()),
        ("CREATED", created),
        ("CHECKSUM", md.entry.written.sha256.as_str()),
        ("CHECKSUMTYPE", "SHA-256"),
    ]);
    x.empty("mets:mdRef", &attrs)
}

/// Everything the root METS lists.
pub(crate) struct RootContent<'a> {
    pub dmd: &'a [MdEntry],
    pub digiprov: &'a [MdEntry],
    pub documentation: &'a [Entry],
    pub schemas: &'a [Entry],
    pub reps: &'a [RepRef],
}

/// Where the METS finds its schemas, inside the package (`prefix` leads to `schemas/`).
fn schema_locations(prefix: &str) -> String {
    format!(
        "http://www.loc.gov/METS/ {prefix}schemas/mets.xsd \
         http://www.w3.org/1999/xlink {prefix}schemas/xlink.xsd \
         {NS_CSIP} {prefix}schemas/DILCISExtensionMETS.xsd \
         {NS_SIP} {prefix}schemas/DILCISExtensionSIPMETS.xsd"
    )
}

/// The root METS document.
pub(crate) fn root_mets(head: &Head<'_>, c: &RootContent<'_>) -> io::Result<Vec<u8>> {
    let mut x = XmlOut::new(Vec::new(), 0);
    x.inner_mut().extend_from_slice(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let schemas = schema_locations("");
    x.start("mets:mets", &root_attrs(head, &schemas))?;
    header(&mut x, head)?;
    for md in c.dmd {
        x.start(
            "mets:dmdSec",
            &[("ID", &md.id), ("CREATED", head.created), ("STATUS", "CURRENT")],
        )?;
        md_ref(&mut x, md, head.created)?;
        x.end("mets:dmdSec")?;
    }
    if !c.digiprov.is_empty() {
        x.start("mets:amdSec", &[("ID", "amdsec")])?;
        for md in c.digiprov {
            x.start("mets:digiprovMD", &[("ID", &md.id), ("STATUS", "CURRENT")])?;
            md_ref(&mut x, md, head.created)?;
            x.end("mets:digiprovMD")?;
        }
        x.end("mets:amdSec")?;
    }
    root_file_sec(&mut x, head, c)?;
    root_struct_map(&mut x, head, c)?;
    x.end("mets:mets")?;
    Ok(x.into_inner())
}

fn root_file_sec<W: io::Write>(
    x: &mut XmlOut<W>,
    head: &Head<'_>,
    c: &RootContent<'_>,
) -> io::Result<()> {
    x.start("mets:fileSec", &[("ID", "filesec")])?;
    for (gid, use_, files, prefix) in [
        ("filegrp-documentation", "Documentation", c.documentation, "file-doc"),
        ("filegrp-schemas", "Schemas", c.schemas, "file-schema"),
    ] {
        // eark-validator 1.1.3 wants these two attributes on every file group (its CSIP63).
        x.start(
            "mets:fileGrp",
            &[
                ("ID", gid),
                ("USE", use_),
                ("csip:CONTENTINFORMATIONTYPE", "OTHER"),
                ("csip:OTHERCONTENTINFORMATIONTYPE", head.content_type),
            ],
        )?;
        for (i, e) in files.iter().enumerate() {
            file(x, &format!("ID-{prefix}-{:04}", i + 1), e, head.created)?;
        }
        x.end("mets:fileGrp")?;
    }
    for r in c.reps {
        let gid = format!("filegrp-rep-{}", r.name);
        let use_ = format!("Representations/{}", r.name);
        x.start(
            "mets:fileGrp",
            &[
                ("ID", &gid),
                ("USE", &use_),
                ("csip:CONTENTINFORMATIONTYPE", "OTHER"),
                ("csip:OTHERCONTENTINFORMATIONTYPE", r.content_type),
            ],
        )?;
        file(x, &format!("ID-file-rep-{}-mets", r.name), &r.mets, head.created)?;
        x.end("mets:fileGrp")?;
    }
    x.end("mets:fileSec")
}

fn root_struct_map<W: io::Write>(
    x: &mut XmlOut<W>,
    head: &Head<'_>,
    c: &RootContent<'_>,
) -> io::Result<()> {
    x.start(
        "mets:structMap",
        &[("ID", "structmap-csip"), ("TYPE", "PHYSICAL"), ("LABEL", "CSIP")],
    )?;
    x.start("mets:div", &[("ID", "div-root"), ("LABEL", head.objid)])?;
    let dmdid: Vec<&str> = c.dmd.iter().map(|m| m.id.as_str()).collect();
    let admid: Vec<&str> = c.digiprov.iter().map(|m| m.id.as_str()).collect();
    let (dmdid, admid) = (dmdid.join(" "), admid.join(" "));
    let mut attrs = vec![("ID", "div-metadata"), ("LABEL", "Metadata")];
    if !admid.is_empty() {
        attrs.push(("ADMID", &admid));
    }
    if !dmdid.is_empty() {
        attrs.push(("DMDID", &dmdid));
    }
    x.empty("mets:div", &attrs)?;
    for (id, label, gid) in [
        ("div-documentation", "Documentation", "filegrp-documentation"),
        ("div-schemas", "Schemas", "filegrp-schemas"),
    ] {
        x.start("mets:div", &[("ID", id), ("LABEL", label)])?;
        x.empty("mets:fptr", &[("FILEID", gid)])?;
        x.end("mets:div")?;
    }
    // The content division (CSIP101-104, 0..1 in CSIP 2.2), which eark-validator 1.1.3
    // requires (its CSIP103): it points at every representation's file group.
    x.start("mets:div", &[("ID", "div-representations"), ("LABEL", "Representations")])?;
    for r in c.reps {
        x.empty("mets:fptr", &[("FILEID", &format!("filegrp-rep-{}", r.name))])?;
    }
    x.end("mets:div")?;
    for r in c.reps {
        let (id, label) = (format!("div-rep-{}", r.name), format!("Representations/{}", r.name));
        let gid = format!("filegrp-rep-{}", r.name);
        x.start("mets:div", &[("ID", &id), ("LABEL", &label)])?;
        x.empty(
            "mets:mptr",
            &[
                ("LOCTYPE", "URL"),
                ("xlink:type", "simple"),
                ("xlink:href", &r.mets.href),
                ("xlink:title", &gid),
            ],
        )?;
        x.end("mets:div")?;
    }
    x.end("mets:div")?;
    x.end("mets:structMap")
}

/// The METS of one representation: its `data/` files in one file group `Data`.
pub(crate) fn rep_mets(head: &Head<'_>, files: &[Entry]) -> io::Result<Vec<u8>> {
    let mut x = XmlOut::new(Vec::new(), 0);
    x.inner_mut().extend_from_slice(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let schemas = schema_locations("../../");
    x.start("mets:mets", &root_attrs(head, &schemas))?;
    header(&mut x, head)?;
    x.start("mets:fileSec", &[("ID", "filesec")])?;
    x.start(
        "mets:fileGrp",
        &[
            ("ID", "filegrp-data"),
            ("USE", "Data"),
            ("csip:CONTENTINFORMATIONTYPE", "OTHER"),
            ("csip:OTHERCONTENTINFORMATIONTYPE", head.content_type),
        ],
    )?;
    for (i, e) in files.iter().enumerate() {
        file(&mut x, &format!("ID-file-data-{:06}", i + 1), e, head.created)?;
    }
    x.end("mets:fileGrp")?;
    x.end("mets:fileSec")?;
    x.start(
        "mets:structMap",
        &[("ID", "structmap-csip"), ("TYPE", "PHYSICAL"), ("LABEL", "CSIP")],
    )?;
    x.start("mets:div", &[("ID", "div-root"), ("LABEL", head.objid)])?;
    x.start("mets:div", &[("ID", "div-data"), ("LABEL", "Data")])?;
    x.empty("mets:fptr", &[("FILEID", "filegrp-data")])?;
    x.end("mets:div")?;
    x.end("mets:div")?;
    x.end("mets:structMap")?;
    x.end("mets:mets")?;
    Ok(x.into_inner())
}
