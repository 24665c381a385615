//! The METS sections around the records: `dmdSec`, `amdSec`, their `techMD`, `rightsMD`,
//! `sourceMD` and `digiprovMD`, `mdWrap` and `xmlData`.
//!
//! `xmlData` is where METS allows any XML: [`XmlData`] has a field for each record kind read
//! here (MODS, Dublin Core, webaip's rights, PREMIS objects, events, agents and rights), and
//! yaserde passes over any other element without a word, so the reader compares every section
//! it read with the section written back and reports what did not come back
//! ([`super::PackageSections::not_modelled`]). `mdRef` (metadata kept outside the document)
//! is one such element.

use yaserde::{YaDeserialize, YaSerialize};

use super::descriptive::{DublinCoreRecord, Mods, TypedValue};
use super::premis::{PremisAgent, PremisEvent, PremisObject, PremisRights, RightsStatement};
use super::rights::WebaipRights;

/// `mets:dmdSec`.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "dmdSec", prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/" })]
pub struct DmdSec {
    /// `ID`.
    #[yaserde(attribute = true, rename = "ID")]
    pub id: Option<String>,
    /// `CREATED`.
    #[yaserde(attribute = true, rename = "CREATED")]
    pub created: Option<String>,
    /// `STATUS`.
    #[yaserde(attribute = true, rename = "STATUS")]
    pub status: Option<String>,
    /// `GROUPID`.
    #[yaserde(attribute = true, rename = "GROUPID")]
    pub group_id: Option<String>,
    /// `ADMID`.
    #[yaserde(attribute = true, rename = "ADMID")]
    pub adm_id: Option<String>,
    /// The wrapped record.
    #[yaserde(rename = "mdWrap", prefix = "mets")]
    pub md_wrap: Option<MdWrap>,
}

/// `mets:amdSec`.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "amdSec", prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/" })]
pub struct AmdSec {
    /// `ID`.
    #[yaserde(attribute = true, rename = "ID")]
    pub id: Option<String>,
    /// `techMD`s (PREMIS objects).
    #[yaserde(rename = "techMD", prefix = "mets")]
    pub tech_md: Vec<MdSec>,
    /// `rightsMD`s.
    #[yaserde(rename = "rightsMD", prefix = "mets")]
    pub rights_md: Vec<MdSec>,
    /// `sourceMD`s.
    #[yaserde(rename = "sourceMD", prefix = "mets")]
    pub source_md: Vec<MdSec>,
    /// `digiprovMD`s (PREMIS events and agents).
    #[yaserde(rename = "digiprovMD", prefix = "mets")]
    pub digiprov_md: Vec<MdSec>,
}

/// One `techMD`, `rightsMD`, `sourceMD` or `digiprovMD`.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/" })]
pub struct MdSec {
    /// `ID`.
    #[yaserde(attribute = true, rename = "ID")]
    pub id: Option<String>,
    /// `CREATED`.
    #[yaserde(attribute = true, rename = "CREATED")]
    pub created: Option<String>,
    /// `STATUS`.
    #[yaserde(attribute = true, rename = "STATUS")]
    pub status: Option<String>,
    /// The wrapped record.
    #[yaserde(rename = "mdWrap", prefix = "mets")]
    pub md_wrap: Option<MdWrap>,
}

/// `mets:mdWrap`.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "mdWrap", prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/" })]
pub struct MdWrap {
    /// `ID`.
    #[yaserde(attribute = true, rename = "ID")]
    pub id: Option<String>,
    /// `MDTYPE` (MODS, DC, PREMIS:OBJECT, OTHER, ...).
    #[yaserde(attribute = true, rename = "MDTYPE")]
    pub md_type: Option<String>,
    /// `OTHERMDTYPE` (WEBAIP-RIGHTS, ...).
    #[yaserde(attribute = true, rename = "OTHERMDTYPE")]
    pub other_md_type: Option<String>,
    /// `MDTYPEVERSION`.
    #[yaserde(attribute = true, rename = "MDTYPEVERSION")]
    pub md_type_version: Option<String>,
    /// `MIMETYPE`.
    #[yaserde(attribute = true, rename = "MIMETYPE")]
    pub mime_type: Option<String>,
    /// `LABEL`.
    #[yaserde(attribute = true, rename = "LABEL")]
    pub label: Option<String>,
    /// The record.
    #[yaserde(rename = "xmlData", prefix = "mets")]
    pub xml_data: Option<XmlData>,
}

/// `mets:xmlData`: the records read here.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "xmlData", prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/", "mods" = "http://www.loc.gov/mods/v3", "premis" = "http://www.loc.gov/premis/v3", "dc" = "http://purl.org/dc/elements/1.1/", "dcterms" = "http://purl.org/dc/terms/", "wr" = "urn:webaip:xmlns:rights:1" })]
pub struct XmlData {
    /// MODS records.
    #[yaserde(rename = "mods", prefix = "mods")]
    pub mods: Vec<Mods>,
    /// Dublin Core inside Archivematica's container.
    #[yaserde(rename = "dublincore", prefix = "dcterms")]
    pub dublincore: Vec<DublinCoreRecord>,
    /// `dc:title`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "title", prefix = "dc")]
    pub title: Vec<String>,
    /// `dc:creator`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "creator", prefix = "dc")]
    pub creator: Vec<String>,
    /// `dc:subject`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "subject", prefix = "dc")]
    pub subject: Vec<String>,
    /// `dc:description`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "description", prefix = "dc")]
    pub description: Vec<String>,
    /// `dc:publisher`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "publisher", prefix = "dc")]
    pub publisher: Vec<String>,
    /// `dc:contributor`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "contributor", prefix = "dc")]
    pub contributor: Vec<String>,
    /// `dc:date`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "date", prefix = "dc")]
    pub date: Vec<String>,
    /// `dc:type`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "type", prefix = "dc")]
    pub dc_type: Vec<String>,
    /// `dc:format`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "format", prefix = "dc")]
    pub format: Vec<String>,
    /// `dc:identifier`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "identifier", prefix = "dc")]
    pub identifier: Vec<String>,
    /// `dc:source`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "source", prefix = "dc")]
    pub source: Vec<String>,
    /// `dc:language`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "language", prefix = "dc")]
    pub language: Vec<String>,
    /// `dc:relation`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "relation", prefix = "dc")]
    pub relation: Vec<String>,
    /// `dc:coverage`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "coverage", prefix = "dc")]
    pub coverage: Vec<String>,
    /// `dc:rights`s (simple Dublin Core directly in `xmlData`).
    #[yaserde(rename = "rights", prefix = "dc")]
    pub dc_rights: Vec<String>,
    /// `dcterms:created`s.
    #[yaserde(rename = "created", prefix = "dcterms")]
    pub terms_created: Vec<TypedValue>,
    /// `dcterms:issued`s.
    #[yaserde(rename = "issued", prefix = "dcterms")]
    pub terms_issued: Vec<TypedValue>,
    /// `dcterms:modified`s.
    #[yaserde(rename = "modified", prefix = "dcterms")]
    pub terms_modified: Vec<TypedValue>,
    /// `dcterms:available`s.
    #[yaserde(rename = "available", prefix = "dcterms")]
    pub terms_available: Vec<TypedValue>,
    /// webaip's rights records.
    #[yaserde(rename = "rights", prefix = "wr")]
    pub webaip_rights: Vec<WebaipRights>,
    /// PREMIS objects.
    #[yaserde(rename = "object", prefix = "premis")]
    pub premis_objects: Vec<PremisObject>,
    /// PREMIS events.
    #[yaserde(rename = "event", prefix = "premis")]
    pub premis_events: Vec<PremisEvent>,
    /// PREMIS agents.
    #[yaserde(rename = "agent", prefix = "premis")]
    pub premis_agents: Vec<PremisAgent>,
    /// PREMIS 3 `rights` containers.
    #[yaserde(rename = "rights", prefix = "premis")]
    pub premis_rights: Vec<PremisRights>,
    /// PREMIS rights statements directly in `xmlData` (PREMIS 2, and Archivematica's).
    #[yaserde(rename = "rightsStatement", prefix = "premis")]
    pub premis_rights_statements: Vec<RightsStatement>,
}

/// Simple Dublin Core as one list: (element, value) in the order of the fifteen elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DublinCore {
    /// (`title`, "Example"), ...
    pub elements: Vec<(&'static str, String)>,
}

impl XmlData {
    /// The simple Dublin Core of this `xmlData`, direct or inside `dcterms:dublincore`; None
    /// when it holds none.
    pub fn dublin_core(&self) -> Option<DublinCore> {
        let mut elements = Vec::new();
        elements.extend(self.title.iter().map(|v| ("title", v.clone())));
        elements.extend(self.creator.iter().map(|v| ("creator", v.clone())));
        elements.extend(self.subject.iter().map(|v| ("subject", v.clone())));
        elements.extend(self.description.iter().map(|v| ("description", v.clone())));
        elements.extend(self.publisher.iter().map(|v| ("publisher", v.clone())));
        elements.extend(self.contributor.iter().map(|v| ("contributor", v.clone())));
        elements.extend(self.date.iter().map(|v| ("date", v.clone())));
        elements.extend(self.dc_type.iter().map(|v| ("type", v.clone())));
        elements.extend(self.format.iter().map(|v| ("format", v.clone())));
        elements.extend(self.identifier.iter().map(|v| ("identifier", v.clone())));
        elements.extend(self.source.iter().map(|v| ("source", v.clone())));
        elements.extend(self.language.iter().map(|v| ("language", v.clone())));
        elements.extend(self.relation.iter().map(|v| ("relation", v.clone())));
        elements.extend(self.coverage.iter().map(|v| ("coverage", v.clone())));
        elements.extend(self.dc_rights.iter().map(|v| ("rights", v.clone())));
        for r in &self.dublincore {
            elements.extend(r.title.iter().map(|v| ("title", v.clone())));
            elements.extend(r.creator.iter().map(|v| ("creator", v.clone())));
            elements.extend(r.subject.iter().map(|v| ("subject", v.clone())));
            elements.extend(r.description.iter().map(|v| ("description", v.clone())));
            elements.extend(r.publisher.iter().map(|v| ("publisher", v.clone())));
            elements.extend(r.contributor.iter().map(|v| ("contributor", v.clone())));
            elements.extend(r.date.iter().map(|v| ("date", v.clone())));
            elements.extend(r.dc_type.iter().map(|v| ("type", v.clone())));
            elements.extend(r.format.iter().map(|v| ("format", v.clone())));
            elements.extend(r.identifier.iter().map(|v| ("identifier", v.clone())));
            elements.extend(r.source.iter().map(|v| ("source", v.clone())));
            elements.extend(r.language.iter().map(|v| ("language", v.clone())));
            elements.extend(r.relation.iter().map(|v| ("relation", v.clone())));
            elements.extend(r.coverage.iter().map(|v| ("coverage", v.clone())));
            elements.extend(r.rights.iter().map(|v| ("rights", v.clone())));
        }
        (!elements.is_empty()).then_some(DublinCore { elements })
    }
}
