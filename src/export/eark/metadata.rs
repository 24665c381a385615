//! The metadata folder: the package's MODS and DC records (`metadata/descriptive`), its PREMIS
//! (`metadata/preservation`) and the package METS itself (`metadata/other/package-mets.xml`:
//! a file named `METS.xml` would be taken for an E-ARK METS by commons-ip), each written as a
//! file of its own from the sections `read_package_sections` read.

use std::path::Path;

use yaserde::YaSerialize;

use super::mets::{Entry, MdEntry};
use super::sink::Sink;
use super::{EarkError, copy_in};
use crate::mets::sections::{PackageSections, XmlData};
use crate::mets::xml::XmlOut;

const DECL: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

fn ser<T: YaSerialize>(value: &T) -> Result<String, EarkError> {
    let config = yaserde::ser::Config {
        perform_indent: false,
        write_document_declaration: false,
        indent_string: None,
    };
    yaserde::ser::to_string_with_config(value, &config)
        .map_err(|e| EarkError::io(Path::new("metadata"), std::io::Error::other(e)))
}

fn add(
    sink: &mut Sink,
    href: &str,
    text: &str,
    id: &str,
    mdtype: &'static str,
    other: Option<&'static str>,
) -> Result<MdEntry, EarkError> {
    let written = sink.add_bytes(href, text.as_bytes())?;
    let entry = Entry { href: href.to_string(), mime: "application/xml".into(), written };
    Ok(MdEntry { id: id.to_string(), mdtype, other_mdtype: other, entry })
}

fn all_xml_data(s: &PackageSections) -> impl Iterator<Item = &XmlData> {
    let dmd = s.dmd_secs.iter().filter_map(|d| d.value.md_wrap.as_ref()?.xml_data.as_ref());
    let amd = s.amd_secs.iter().flat_map(|a| {
        let a = &a.value;
        a.tech_md
            .iter()
            .chain(&a.rights_md)
            .chain(&a.source_md)
            .chain(&a.digiprov_md)
            .filter_map(|m| m.md_wrap.as_ref()?.xml_data.as_ref())
    });
    dmd.chain(amd)
}

/// Writes the metadata files; returns the dmdSec and digiprovMD entries.
pub(super) fn write_metadata(
    pkg: &Path,
    sections: &PackageSections,
    sink: &mut Sink,
) -> Result<(Vec<MdEntry>, Vec<MdEntry>), EarkError> {
    let mut dmd = Vec::new();
    let mods: Vec<_> = all_xml_data(sections).flat_map(|x| &x.mods).collect();
    for (i, m) in mods.iter().enumerate() {
        let name = match mods.len() {
            1 => "metadata/descriptive/mods.xml".to_string(),
            _ => format!("metadata/descriptive/mods-{}.xml", i + 1),
        };
        let text = format!("{DECL}{}\n", ser(*m)?);
        dmd.push(add(sink, &name, &text, &format!("dmd-mods-{}", i + 1), "MODS", None)?);
    }
    if let Some(dc) = all_xml_data(sections).find_map(|x| x.dublin_core()) {
        let mut x = XmlOut::new(Vec::new(), 0);
        x.inner_mut().extend_from_slice(DECL.as_bytes());
        let io = |e| EarkError::io(Path::new("metadata/descriptive/dc.xml"), e);
        x.start("metadata", &[("xmlns:dc", "http://purl.org/dc/elements/1.1/")]).map_err(io)?;
        for (element, value) in &dc.elements {
            x.text(&format!("dc:{element}"), &[], value).map_err(io)?;
        }
        x.end("metadata").map_err(io)?;
        let text = String::from_utf8_lossy(&x.into_inner()).into_owned();
        dmd.push(add(sink, "metadata/descriptive/dc.xml", &text, "dmd-dc", "DC", None)?);
    }
    let mut digiprov = Vec::new();
    let premis = premis_document(sections)?;
    if let Some(text) = premis {
        let href = "metadata/preservation/premis.xml";
        digiprov.push(add(sink, href, &text, "digiprov-premis", "PREMIS", None)?);
    }
    // The package METS as it is, for what the records above do not carry.
    let name = "metadata/other/package-mets.xml";
    let written = copy_in(pkg, "METS.xml", sink, name, None)?;
    let entry = Entry { href: name.into(), mime: "application/xml".into(), written };
    digiprov.push(MdEntry {
        id: "digiprov-package-mets".into(),
        mdtype: "OTHER",
        other_mdtype: Some("METS"),
        entry,
    });
    Ok((dmd, digiprov))
}

/// One PREMIS 3 document with every object, event, agent and rights of the package-level
/// sections; None when there are none.
fn premis_document(sections: &PackageSections) -> Result<Option<String>, EarkError> {
    let mut body = String::new();
    // PREMIS orders objects, events, agents, rights.
    for x in all_xml_data(sections) {
        for o in &x.premis_objects {
            body.push_str(&ser(o)?);
            body.push('\n');
        }
    }
    for x in all_xml_data(sections) {
        for e in &x.premis_events {
            body.push_str(&ser(e)?);
            body.push('\n');
        }
    }
    for x in all_xml_data(sections) {
        for a in &x.premis_agents {
            body.push_str(&ser(a)?);
            body.push('\n');
        }
    }
    for x in all_xml_data(sections) {
        for r in &x.premis_rights {
            body.push_str(&ser(r)?);
            body.push('\n');
        }
    }
    if body.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "{DECL}<premis:premis xmlns:premis=\"http://www.loc.gov/premis/v3\" \
         xmlns:xlink=\"http://www.w3.org/1999/xlink\" version=\"3.0\">\n{body}</premis:premis>\n"
    )))
}
