//! Descriptive and rights metadata: MODS and simple Dublin Core (P3.1, P3.2) and the rights
//! record in webaip's own extension schema (P3.3, `xsd/webaip-rights.xsd`).

use std::io::{self, Write};

use chrono::SecondsFormat;

use super::xml::XmlOut;
use crate::model::DC_ELEMENTS;
use crate::model::{Access, Description, EntityOrigin, PageEntity, PageKind, Rights};
use crate::profile::Profile;

/// Namespace of the rights extension schema.
pub(crate) const RIGHTS_NS: &str = "urn:webaip:xmlns:rights:1";

/// The website's MODS record (P3.1): title, names, subjects, URLs, capture dates and the values
/// the profile fixes.
pub(crate) fn write_mods<W: Write>(
    x: &mut XmlOut<W>,
    d: &Description,
    profile: &Profile,
) -> io::Result<()> {
    x.start("mods:mods", &[("version", "3.8")])?;
    write_title(x, &d.title)?;
    for (who, role) in [(&d.creator, "creator"), (&d.publisher, "publisher")] {
        if let Some(name) = who {
            write_name(x, name, role)?;
        }
    }
    if !profile.mods.type_of_resource.is_empty() {
        x.text("mods:typeOfResource", &[], &profile.mods.type_of_resource)?;
    }
    if !profile.mods.genre.is_empty() {
        x.text("mods:genre", &[], &profile.mods.genre)?;
    }
    write_capture_span(x, d)?;
    for lang in &d.languages {
        write_language(x, lang)?;
    }
    if !profile.mods.digital_origin.is_empty() {
        x.start("mods:physicalDescription", &[])?;
        x.text("mods:digitalOrigin", &[], &profile.mods.digital_origin)?;
        x.end("mods:physicalDescription")?;
    }
    if let Some(a) = &d.description {
        x.text("mods:abstract", &[], a)?;
    }
    write_subjects(x, &d.subjects)?;
    if !d.urls.is_empty() {
        x.start("mods:location", &[])?;
        for (i, u) in d.urls.iter().enumerate() {
            let attrs: &[(&str, &str)] = if i == 0 { &[("usage", "primary")] } else { &[] };
            x.text("mods:url", attrs, u)?;
        }
        x.end("mods:location")?;
    }
    x.end("mods:mods")
}

/// The first and last capture dates of the website, the first its key date.
fn write_capture_span<W: Write>(x: &mut XmlOut<W>, d: &Description) -> io::Result<()> {
    if d.capture_start.is_none() && d.capture_end.is_none() {
        return Ok(());
    }
    x.start("mods:originInfo", &[("eventType", "capture")])?;
    for (date, point) in [(&d.capture_start, "start"), (&d.capture_end, "end")] {
        if let Some(t) = date {
            let mut attrs = vec![("encoding", "w3cdtf"), ("point", point)];
            if point == "start" {
                attrs.push(("keyDate", "yes"));
            }
            x.text("mods:dateCaptured", &attrs, &t.to_rfc3339_opts(SecondsFormat::Secs, true))?;
        }
    }
    x.end("mods:originInfo")
}

fn write_title<W: Write>(x: &mut XmlOut<W>, title: &str) -> io::Result<()> {
    x.start("mods:titleInfo", &[])?;
    x.text("mods:title", &[], title)?;
    x.end("mods:titleInfo")
}

/// A name with its MARC relator role (`creator`, `publisher`).
fn write_name<W: Write>(x: &mut XmlOut<W>, name: &str, role: &str) -> io::Result<()> {
    x.start("mods:name", &[])?;
    x.text("mods:namePart", &[], name)?;
    x.start("mods:role", &[])?;
    x.text("mods:roleTerm", &[("type", "text"), ("authority", "marcrelator")], role)?;
    x.end("mods:role")?;
    x.end("mods:name")
}

/// An ISO 639-2/B language code.
fn write_language<W: Write>(x: &mut XmlOut<W>, lang: &str) -> io::Result<()> {
    x.start("mods:language", &[])?;
    x.text("mods:languageTerm", &[("type", "code"), ("authority", "iso639-2b")], lang)?;
    x.end("mods:language")
}

fn write_subjects<W: Write>(x: &mut XmlOut<W>, subjects: &[String]) -> io::Result<()> {
    for s in subjects {
        x.start("mods:subject", &[])?;
        x.text("mods:topic", &[], s)?;
        x.end("mods:subject")?;
    }
    Ok(())
}

/// What the MODS record of a described webpage or associated object says.
pub(crate) struct PageMods<'a> {
    /// The curator's (or the seed's) entity.
    pub entity: &'a PageEntity,
    /// The capture's `WARC-Target-URI`: the record's URL, which a validator compares.
    pub uri: &'a str,
    /// The capture's `WARC-Date`.
    pub captured: &'a str,
    /// True when that date is inferred (written with `qualifier="inferred"`).
    pub captured_inferred: bool,
    /// The payload's MIME type.
    pub mime: Option<&'a str>,
    /// Its title, if it has one.
    pub title: Option<&'a str>,
    /// True when the title was read from the page's HTML `<title>`, not given by a curator.
    pub title_from_html: bool,
    /// The title of the page an associated object belongs to, when the package describes it.
    pub host_title: Option<&'a str>,
}

/// The MODS record of a webpage or associated object (P1.3): title, names, dates, language,
/// type, subjects, the URL of its capture and, for an associated object, the page it belongs
/// to (`relatedItem type="host"`). What webaip inferred rather than was told is stated in
/// `recordInfo`.
pub(crate) fn write_page_mods<W: Write>(x: &mut XmlOut<W>, m: &PageMods<'_>) -> io::Result<()> {
    let e = m.entity;
    x.start("mods:mods", &[("version", "3.8")])?;
    if let Some(t) = m.title {
        write_title(x, t)?;
    }
    if let Some(name) = &e.creator {
        write_name(x, name, "creator")?;
    }
    if let Some(r) = resource_type(e.kind, m.mime) {
        x.text("mods:typeOfResource", &[], r)?;
    }
    write_page_dates(x, m)?;
    if let Some(lang) = &e.language {
        write_language(x, lang)?;
    }
    if let Some(t) = m.mime {
        x.start("mods:physicalDescription", &[])?;
        x.text("mods:internetMediaType", &[], t)?;
        x.text("mods:digitalOrigin", &[], "born digital")?;
        x.end("mods:physicalDescription")?;
    }
    if let Some(a) = &e.description {
        x.text("mods:abstract", &[], a)?;
    }
    write_subjects(x, &e.subjects)?;
    if let Some(host) = &e.part_of {
        write_host(x, host, m.host_title)?;
    }
    x.start("mods:location", &[])?;
    x.text("mods:url", &[("usage", "primary")], m.uri)?;
    x.end("mods:location")?;
    x.start("mods:recordInfo", &[])?;
    x.text("mods:recordOrigin", &[], record_origin(e.origin, m.title_from_html))?;
    x.end("mods:recordInfo")?;
    x.end("mods:mods")
}

/// The MODS type of resource of an entity: a webpage is text; an associated object is what
/// its MIME type says, when MODS has a word for it.
fn resource_type(kind: PageKind, mime: Option<&str>) -> Option<&'static str> {
    match (kind, mime) {
        (PageKind::Webpage, _) => Some("text"),
        (_, Some(t)) if t.starts_with("image/") => Some("still image"),
        (_, Some(t)) if t.starts_with("audio/") => Some("sound recording"),
        (_, Some(t)) if t.starts_with("video/") => Some("moving image"),
        (_, Some(t)) if t.starts_with("text/") => Some("text"),
        _ => None,
    }
}

/// The capture date (marked when inferred) and the curator's publication date.
fn write_page_dates<W: Write>(x: &mut XmlOut<W>, m: &PageMods<'_>) -> io::Result<()> {
    if !m.captured.is_empty() {
        x.start("mods:originInfo", &[("eventType", "capture")])?;
        let mut attrs = vec![("encoding", "w3cdtf"), ("keyDate", "yes")];
        if m.captured_inferred {
            attrs.push(("qualifier", "inferred"));
        }
        x.text("mods:dateCaptured", &attrs, m.captured)?;
        x.end("mods:originInfo")?;
    }
    if let Some(d) = &m.entity.date {
        x.start("mods:originInfo", &[("eventType", "publication")])?;
        x.text("mods:dateIssued", &[("encoding", "w3cdtf")], d)?;
        x.end("mods:originInfo")?;
    }
    Ok(())
}

/// The page an associated object belongs to: its URL, and its title when described.
fn write_host<W: Write>(x: &mut XmlOut<W>, host: &str, title: Option<&str>) -> io::Result<()> {
    x.start("mods:relatedItem", &[("type", "host")])?;
    if let Some(t) = title {
        write_title(x, t)?;
    }
    x.start("mods:location", &[])?;
    x.text("mods:url", &[], host)?;
    x.end("mods:location")?;
    x.end("mods:relatedItem")
}

/// Who made the record, and where its title came from.
fn record_origin(origin: EntityOrigin, title_from_html: bool) -> &'static str {
    match (origin, title_from_html) {
        (EntityOrigin::Curator, false) => "described by a curator",
        (EntityOrigin::Curator, true) => {
            "described by a curator; title taken by webaip from the page's HTML title element"
        }
        (EntityOrigin::Seed, true) => {
            "made by webaip for a seed URL (--describe-seeds); title taken from the page's HTML title element"
        }
        (EntityOrigin::Seed, false) => {
            "made by webaip for a seed URL (--describe-seeds); the page has no HTML title"
        }
    }
}

/// The curator's Dublin Core, directly in `xmlData` (dc.xsd declares no container element).
pub(crate) fn write_dc<W: Write>(
    x: &mut XmlOut<W>,
    d: &Description,
    rights: &Rights,
) -> io::Result<()> {
    x.text("dc:title", &[], &d.title)?;
    if let Some(c) = &d.creator {
        x.text("dc:creator", &[], c)?;
    }
    for s in &d.subjects {
        x.text("dc:subject", &[], s)?;
    }
    if let Some(s) = &d.description {
        x.text("dc:description", &[], s)?;
    }
    if let Some(p) = &d.publisher {
        x.text("dc:publisher", &[], p)?;
    }
    if let Some(t) = &d.capture_start {
        x.text("dc:date", &[], &t.format("%Y-%m-%d").to_string())?;
    }
    x.text("dc:type", &[], "InteractiveResource")?;
    x.text("dc:format", &[], "application/warc")?;
    for u in &d.urls {
        x.text("dc:identifier", &[], u)?;
    }
    for l in &d.languages {
        x.text("dc:language", &[], l)?;
    }
    for (k, v) in &d.dc_only {
        if DC_ELEMENTS.contains(&k.as_str()) {
            x.text(&format!("dc:{k}"), &[], v)?;
        }
    }
    x.text("dc:rights", &[], &rights.statement)
}

/// The rights record in webaip's extension schema.
pub(crate) fn write_rights<W: Write>(x: &mut XmlOut<W>, r: &Rights) -> io::Result<()> {
    x.start("wr:rights", &[("xmlns:wr", RIGHTS_NS)])?;
    match &r.access {
        Access::Open => x.text("wr:access", &[], "open")?,
        Access::Restricted => x.text("wr:access", &[], "restricted")?,
        Access::Embargoed(until) => {
            x.text("wr:access", &[], "embargoed")?;
            x.text("wr:embargoUntil", &[], &until.format("%Y-%m-%d").to_string())?;
        }
    }
    x.text("wr:statement", &[], &r.statement)?;
    x.end("wr:rights")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record as one line: each element's indentation and line end removed.
    fn compact(x: XmlOut<Vec<u8>>) -> String {
        String::from_utf8(x.into_inner()).unwrap().lines().map(str::trim).collect()
    }

    #[test]
    fn an_associated_objects_record_names_its_host_page_and_inferred_date() {
        let mut entity = PageEntity::webpage("http://o.example/a.png", EntityOrigin::Curator);
        entity.kind = PageKind::AssociatedObject;
        entity.creator = Some("Ann".into());
        entity.date = Some("2024".into());
        entity.language = Some("eng".into());
        entity.subjects = vec!["maps".into()];
        entity.part_of = Some("http://o.example/".into());
        let m = PageMods {
            entity: &entity,
            uri: "http://o.example/a.png",
            captured: "2024-01-01T00:00:00Z",
            captured_inferred: true,
            mime: Some("image/png"),
            title: Some("A map"),
            title_from_html: false,
            host_title: Some("Home"),
        };
        let mut x = XmlOut::new(Vec::new(), 0);
        write_page_mods(&mut x, &m).unwrap();
        assert_eq!(
            compact(x),
            concat!(
                r#"<mods:mods version="3.8"><mods:titleInfo><mods:title>A map</mods:title></mods:titleInfo>"#,
                r#"<mods:name><mods:namePart>Ann</mods:namePart><mods:role><mods:roleTerm type="text" authority="marcrelator">creator</mods:roleTerm></mods:role></mods:name>"#,
                r#"<mods:typeOfResource>still image</mods:typeOfResource>"#,
                r#"<mods:originInfo eventType="capture"><mods:dateCaptured encoding="w3cdtf" keyDate="yes" qualifier="inferred">2024-01-01T00:00:00Z</mods:dateCaptured></mods:originInfo>"#,
                r#"<mods:originInfo eventType="publication"><mods:dateIssued encoding="w3cdtf">2024</mods:dateIssued></mods:originInfo>"#,
                r#"<mods:language><mods:languageTerm type="code" authority="iso639-2b">eng</mods:languageTerm></mods:language>"#,
                r#"<mods:physicalDescription><mods:internetMediaType>image/png</mods:internetMediaType><mods:digitalOrigin>born digital</mods:digitalOrigin></mods:physicalDescription>"#,
                r#"<mods:subject><mods:topic>maps</mods:topic></mods:subject>"#,
                r#"<mods:relatedItem type="host"><mods:titleInfo><mods:title>Home</mods:title></mods:titleInfo><mods:location><mods:url>http://o.example/</mods:url></mods:location></mods:relatedItem>"#,
                r#"<mods:location><mods:url usage="primary">http://o.example/a.png</mods:url></mods:location>"#,
                r#"<mods:recordInfo><mods:recordOrigin>described by a curator</mods:recordOrigin></mods:recordInfo></mods:mods>"#,
            )
        );
    }

    #[test]
    fn a_webpage_is_text_and_an_object_is_what_its_type_says() {
        assert_eq!(resource_type(PageKind::Webpage, Some("image/png")), Some("text"));
        assert_eq!(
            resource_type(PageKind::AssociatedObject, Some("video/mp4")),
            Some("moving image")
        );
        assert_eq!(resource_type(PageKind::AssociatedObject, Some("application/pdf")), None);
        assert_eq!(resource_type(PageKind::AssociatedObject, None), None);
    }
}
