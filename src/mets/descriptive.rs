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
    x.start("mods:titleInfo", &[])?;
    x.text("mods:title", &[], &d.title)?;
    x.end("mods:titleInfo")?;
    for (who, role) in [(&d.creator, "creator"), (&d.publisher, "publisher")] {
        if let Some(name) = who {
            x.start("mods:name", &[])?;
            x.text("mods:namePart", &[], name)?;
            x.start("mods:role", &[])?;
            x.text("mods:roleTerm", &[("type", "text"), ("authority", "marcrelator")], role)?;
            x.end("mods:role")?;
            x.end("mods:name")?;
        }
    }
    if !profile.mods.type_of_resource.is_empty() {
        x.text("mods:typeOfResource", &[], &profile.mods.type_of_resource)?;
    }
    if !profile.mods.genre.is_empty() {
        x.text("mods:genre", &[], &profile.mods.genre)?;
    }
    if d.capture_start.is_some() || d.capture_end.is_some() {
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
        x.end("mods:originInfo")?;
    }
    for lang in &d.languages {
        x.start("mods:language", &[])?;
        x.text("mods:languageTerm", &[("type", "code"), ("authority", "iso639-2b")], lang)?;
        x.end("mods:language")?;
    }
    if !profile.mods.digital_origin.is_empty() {
        x.start("mods:physicalDescription", &[])?;
        x.text("mods:digitalOrigin", &[], &profile.mods.digital_origin)?;
        x.end("mods:physicalDescription")?;
    }
    if let Some(a) = &d.description {
        x.text("mods:abstract", &[], a)?;
    }
    for s in &d.subjects {
        x.start("mods:subject", &[])?;
        x.text("mods:topic", &[], s)?;
        x.end("mods:subject")?;
    }
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
        x.start("mods:titleInfo", &[])?;
        x.text("mods:title", &[], t)?;
        x.end("mods:titleInfo")?;
    }
    if let Some(name) = &e.creator {
        x.start("mods:name", &[])?;
        x.text("mods:namePart", &[], name)?;
        x.start("mods:role", &[])?;
        x.text("mods:roleTerm", &[("type", "text"), ("authority", "marcrelator")], "creator")?;
        x.end("mods:role")?;
        x.end("mods:name")?;
    }
    let resource = match (e.kind, m.mime) {
        (PageKind::Webpage, _) => Some("text"),
        (_, Some(t)) if t.starts_with("image/") => Some("still image"),
        (_, Some(t)) if t.starts_with("audio/") => Some("sound recording"),
        (_, Some(t)) if t.starts_with("video/") => Some("moving image"),
        (_, Some(t)) if t.starts_with("text/") => Some("text"),
        _ => None,
    };
    if let Some(r) = resource {
        x.text("mods:typeOfResource", &[], r)?;
    }
    if !m.captured.is_empty() {
        x.start("mods:originInfo", &[("eventType", "capture")])?;
        let mut attrs = vec![("encoding", "w3cdtf"), ("keyDate", "yes")];
        if m.captured_inferred {
            attrs.push(("qualifier", "inferred"));
        }
        x.text("mods:dateCaptured", &attrs, m.captured)?;
        x.end("mods:originInfo")?;
    }
    if let Some(d) = &e.date {
        x.start("mods:originInfo", &[("eventType", "publication")])?;
        x.text("mods:dateIssued", &[("encoding", "w3cdtf")], d)?;
        x.end("mods:originInfo")?;
    }
    if let Some(lang) = &e.language {
        x.start("mods:language", &[])?;
        x.text("mods:languageTerm", &[("type", "code"), ("authority", "iso639-2b")], lang)?;
        x.end("mods:language")?;
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
    for s in &e.subjects {
        x.start("mods:subject", &[])?;
        x.text("mods:topic", &[], s)?;
        x.end("mods:subject")?;
    }
    if let Some(host) = &e.part_of {
        x.start("mods:relatedItem", &[("type", "host")])?;
        if let Some(t) = m.host_title {
            x.start("mods:titleInfo", &[])?;
            x.text("mods:title", &[], t)?;
            x.end("mods:titleInfo")?;
        }
        x.start("mods:location", &[])?;
        x.text("mods:url", &[], host)?;
        x.end("mods:location")?;
        x.end("mods:relatedItem")?;
    }
    x.start("mods:location", &[])?;
    x.text("mods:url", &[("usage", "primary")], m.uri)?;
    x.end("mods:location")?;
    let origin = match (e.origin, m.title_from_html) {
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
    };
    x.start("mods:recordInfo", &[])?;
    x.text("mods:recordOrigin", &[], origin)?;
    x.end("mods:recordInfo")?;
    x.end("mods:mods")
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
