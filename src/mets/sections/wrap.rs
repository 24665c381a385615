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

use super::descriptive::{DcElements, DublinCoreRecord, Mods};
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
    /// Simple Dublin Core directly in `xmlData` (webaip's DC dmdSec).
    #[yaserde(flatten = true)]
    pub dc: DcElements,
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
        let mut elements = self.dc.pairs();
        for r in &self.dublincore {
            elements.extend(r.elements.pairs());
        }
        (!elements.is_empty()).then_some(DublinCore { elements })
    }
}
