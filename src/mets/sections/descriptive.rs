//! Descriptive records: MODS and Dublin Core (simple, directly in `xmlData` as webaip writes
//! it, or inside Archivematica's `dcterms:dublincore`).

use yaserde::{YaDeserialize, YaSerialize};

/// A MODS leaf: its text and whichever of the attributes MODS puts on leaves it carries
/// (one struct for all leaves keeps the model small; which attribute belongs where is MODS's
/// schema's business, and `validate` checks it).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct ModsText {
    /// `type`.
    #[yaserde(attribute = true, rename = "type")]
    pub text_type: Option<String>,
    /// `authority`.
    #[yaserde(attribute = true, rename = "authority")]
    pub authority: Option<String>,
    /// `encoding`.
    #[yaserde(attribute = true, rename = "encoding")]
    pub encoding: Option<String>,
    /// `keyDate`.
    #[yaserde(attribute = true, rename = "keyDate")]
    pub key_date: Option<String>,
    /// `point`.
    #[yaserde(attribute = true, rename = "point")]
    pub point: Option<String>,
    /// `qualifier`.
    #[yaserde(attribute = true, rename = "qualifier")]
    pub qualifier: Option<String>,
    /// `usage`.
    #[yaserde(attribute = true, rename = "usage")]
    pub usage: Option<String>,
    /// `access`.
    #[yaserde(attribute = true, rename = "access")]
    pub access: Option<String>,
    /// `source`.
    #[yaserde(attribute = true, rename = "source")]
    pub source: Option<String>,
    /// `lang`.
    #[yaserde(attribute = true, rename = "lang")]
    pub lang: Option<String>,
    /// The text.
    #[yaserde(text = true)]
    pub value: String,
}

/// `mods:mods`: a MODS record.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "mods", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct Mods {
    /// `version`.
    #[yaserde(attribute = true, rename = "version")]
    pub version: Option<String>,
    /// `titleInfo`s.
    #[yaserde(rename = "titleInfo", prefix = "mods")]
    pub title_info: Vec<TitleInfo>,
    /// `name`s.
    #[yaserde(rename = "name", prefix = "mods")]
    pub names: Vec<ModsName>,
    /// `typeOfResource`.
    #[yaserde(rename = "typeOfResource", prefix = "mods")]
    pub type_of_resource: Vec<ModsText>,
    /// `genre`s.
    #[yaserde(rename = "genre", prefix = "mods")]
    pub genre: Vec<ModsText>,
    /// `originInfo`s (capture, publication).
    #[yaserde(rename = "originInfo", prefix = "mods")]
    pub origin_info: Vec<OriginInfo>,
    /// `language`s.
    #[yaserde(rename = "language", prefix = "mods")]
    pub language: Vec<Language>,
    /// `physicalDescription`s.
    #[yaserde(rename = "physicalDescription", prefix = "mods")]
    pub physical_description: Vec<PhysicalDescription>,
    /// `abstract`s.
    #[yaserde(rename = "abstract", prefix = "mods")]
    pub abstracts: Vec<ModsText>,
    /// `subject`s.
    #[yaserde(rename = "subject", prefix = "mods")]
    pub subjects: Vec<Subject>,
    /// `relatedItem`s.
    #[yaserde(rename = "relatedItem", prefix = "mods")]
    pub related_items: Vec<RelatedItem>,
    /// `identifier`s.
    #[yaserde(rename = "identifier", prefix = "mods")]
    pub identifiers: Vec<ModsText>,
    /// `location`s.
    #[yaserde(rename = "location", prefix = "mods")]
    pub locations: Vec<Location>,
    /// `accessCondition`s.
    #[yaserde(rename = "accessCondition", prefix = "mods")]
    pub access_conditions: Vec<ModsText>,
    /// `recordInfo`s.
    #[yaserde(rename = "recordInfo", prefix = "mods")]
    pub record_info: Vec<RecordInfo>,
}

/// `mods:titleInfo`: a title.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "titleInfo", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct TitleInfo {
    /// `type`.
    #[yaserde(attribute = true, rename = "type")]
    pub title_type: Option<String>,
    /// `title`s.
    #[yaserde(rename = "title", prefix = "mods")]
    pub titles: Vec<ModsText>,
    /// `subTitle`s.
    #[yaserde(rename = "subTitle", prefix = "mods")]
    pub sub_titles: Vec<ModsText>,
}

/// `mods:name`: a name with its roles.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "name", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct ModsName {
    /// `type`.
    #[yaserde(attribute = true, rename = "type")]
    pub name_type: Option<String>,
    /// `namePart`s.
    #[yaserde(rename = "namePart", prefix = "mods")]
    pub name_parts: Vec<ModsText>,
    /// `role`s.
    #[yaserde(rename = "role", prefix = "mods")]
    pub roles: Vec<Role>,
}

/// `mods:role`: a role.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "role", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct Role {
    /// `roleTerm`s.
    #[yaserde(rename = "roleTerm", prefix = "mods")]
    pub terms: Vec<ModsText>,
}

/// `mods:originInfo`: dates of an event (capture, publication).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "originInfo", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct OriginInfo {
    /// `eventType`.
    #[yaserde(attribute = true, rename = "eventType")]
    pub event_type: Option<String>,
    /// `publisher`s.
    #[yaserde(rename = "publisher", prefix = "mods")]
    pub publishers: Vec<ModsText>,
    /// `dateIssued`s.
    #[yaserde(rename = "dateIssued", prefix = "mods")]
    pub dates_issued: Vec<ModsText>,
    /// `dateCreated`s.
    #[yaserde(rename = "dateCreated", prefix = "mods")]
    pub dates_created: Vec<ModsText>,
    /// `dateCaptured`s.
    #[yaserde(rename = "dateCaptured", prefix = "mods")]
    pub dates_captured: Vec<ModsText>,
}

/// `mods:language`: a language.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "language", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct Language {
    /// `languageTerm`s.
    #[yaserde(rename = "languageTerm", prefix = "mods")]
    pub terms: Vec<ModsText>,
}

/// `mods:physicalDescription`: the digital form.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "physicalDescription", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct PhysicalDescription {
    /// `internetMediaType`s.
    #[yaserde(rename = "internetMediaType", prefix = "mods")]
    pub internet_media_types: Vec<ModsText>,
    /// `digitalOrigin`s.
    #[yaserde(rename = "digitalOrigin", prefix = "mods")]
    pub digital_origins: Vec<ModsText>,
}

/// `mods:subject`: a subject.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "subject", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct Subject {
    /// `topic`s.
    #[yaserde(rename = "topic", prefix = "mods")]
    pub topics: Vec<ModsText>,
}

/// `mods:relatedItem`: a related item (the host of a page).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "relatedItem", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct RelatedItem {
    /// `type`.
    #[yaserde(attribute = true, rename = "type")]
    pub item_type: Option<String>,
    /// `titleInfo`s.
    #[yaserde(rename = "titleInfo", prefix = "mods")]
    pub title_info: Vec<TitleInfo>,
    /// `location`s.
    #[yaserde(rename = "location", prefix = "mods")]
    pub locations: Vec<Location>,
}

/// `mods:location`: where the resource is.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "location", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct Location {
    /// `url`s.
    #[yaserde(rename = "url", prefix = "mods")]
    pub urls: Vec<ModsText>,
}

/// `mods:recordInfo`: about the record.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "recordInfo", prefix = "mods", namespaces = { "mods" = "http://www.loc.gov/mods/v3" })]
pub struct RecordInfo {
    /// `recordContentSource`s.
    #[yaserde(rename = "recordContentSource", prefix = "mods")]
    pub content_sources: Vec<ModsText>,
    /// `recordCreationDate`s.
    #[yaserde(rename = "recordCreationDate", prefix = "mods")]
    pub creation_dates: Vec<ModsText>,
    /// `recordIdentifier`s.
    #[yaserde(rename = "recordIdentifier", prefix = "mods")]
    pub identifiers: Vec<ModsText>,
    /// `recordOrigin`s.
    #[yaserde(rename = "recordOrigin", prefix = "mods")]
    pub origins: Vec<ModsText>,
}

/// Archivematica's `dcterms:dublincore` container around simple Dublin Core.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "dublincore", prefix = "dcterms", namespaces = { "dc" = "http://purl.org/dc/elements/1.1/", "dcterms" = "http://purl.org/dc/terms/", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct DublinCoreRecord {
    /// `xsi:schemaLocation`.
    #[yaserde(attribute = true, rename = "schemaLocation", prefix = "xsi")]
    pub schema_location: Option<String>,
    /// Its elements.
    #[yaserde(flatten = true)]
    pub elements: DcElements,
}

/// The fifteen simple Dublin Core elements and the DCMI date terms, wherever they stand (in
/// `xmlData` itself, or in Archivematica's container).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(namespaces = { "dc" = "http://purl.org/dc/elements/1.1/", "dcterms" = "http://purl.org/dc/terms/", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct DcElements {
    /// `dc:title`s.
    #[yaserde(rename = "title", prefix = "dc")]
    pub title: Vec<String>,
    /// `dc:creator`s.
    #[yaserde(rename = "creator", prefix = "dc")]
    pub creator: Vec<String>,
    /// `dc:subject`s.
    #[yaserde(rename = "subject", prefix = "dc")]
    pub subject: Vec<String>,
    /// `dc:description`s.
    #[yaserde(rename = "description", prefix = "dc")]
    pub description: Vec<String>,
    /// `dc:publisher`s.
    #[yaserde(rename = "publisher", prefix = "dc")]
    pub publisher: Vec<String>,
    /// `dc:contributor`s.
    #[yaserde(rename = "contributor", prefix = "dc")]
    pub contributor: Vec<String>,
    /// `dc:date`s.
    #[yaserde(rename = "date", prefix = "dc")]
    pub date: Vec<String>,
    /// `dc:type`s.
    #[yaserde(rename = "type", prefix = "dc")]
    pub dc_type: Vec<String>,
    /// `dc:format`s.
    #[yaserde(rename = "format", prefix = "dc")]
    pub format: Vec<String>,
    /// `dc:identifier`s.
    #[yaserde(rename = "identifier", prefix = "dc")]
    pub identifier: Vec<String>,
    /// `dc:source`s.
    #[yaserde(rename = "source", prefix = "dc")]
    pub source: Vec<String>,
    /// `dc:language`s.
    #[yaserde(rename = "language", prefix = "dc")]
    pub language: Vec<String>,
    /// `dc:relation`s.
    #[yaserde(rename = "relation", prefix = "dc")]
    pub relation: Vec<String>,
    /// `dc:coverage`s.
    #[yaserde(rename = "coverage", prefix = "dc")]
    pub coverage: Vec<String>,
    /// `dc:rights`s.
    #[yaserde(rename = "rights", prefix = "dc")]
    pub rights: Vec<String>,
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
}

impl DcElements {
    /// The simple Dublin Core elements, (element, value), in the order of the fifteen.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let lists: [(&'static str, &Vec<String>); 15] = [
            ("title", &self.title),
            ("creator", &self.creator),
            ("subject", &self.subject),
            ("description", &self.description),
            ("publisher", &self.publisher),
            ("contributor", &self.contributor),
            ("date", &self.date),
            ("type", &self.dc_type),
            ("format", &self.format),
            ("identifier", &self.identifier),
            ("source", &self.source),
            ("language", &self.language),
            ("relation", &self.relation),
            ("coverage", &self.coverage),
            ("rights", &self.rights),
        ];
        lists.iter().flat_map(|(n, vs)| vs.iter().map(move |v| (*n, v.clone()))).collect()
    }
}

/// A DCMI term's value with its encoding scheme (`xsi:type="dcterms:W3CDTF"`).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(prefix = "dcterms", namespaces = { "dc" = "http://purl.org/dc/elements/1.1/", "dcterms" = "http://purl.org/dc/terms/", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct TypedValue {
    /// `xsi:type`.
    #[yaserde(attribute = true, rename = "type", prefix = "xsi")]
    pub xsi_type: Option<String>,
    /// The value.
    #[yaserde(text = true)]
    pub value: String,
}
