//! The METS header (`metsHdr`): dates, agents and alternative record identifiers.

use yaserde::{YaDeserialize, YaSerialize};

/// `mets:metsHdr`.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "metsHdr", prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/" })]
pub struct MetsHdr {
    /// `ID`.
    #[yaserde(attribute = true, rename = "ID")]
    pub id: Option<String>,
    /// `CREATEDATE`.
    #[yaserde(attribute = true, rename = "CREATEDATE")]
    pub create_date: Option<String>,
    /// `LASTMODDATE`.
    #[yaserde(attribute = true, rename = "LASTMODDATE")]
    pub last_mod_date: Option<String>,
    /// `RECORDSTATUS`.
    #[yaserde(attribute = true, rename = "RECORDSTATUS")]
    pub record_status: Option<String>,
    /// The agents, in document order.
    #[yaserde(rename = "agent", prefix = "mets")]
    pub agents: Vec<MetsAgent>,
    /// `altRecordID`s.
    #[yaserde(rename = "altRecordID", prefix = "mets")]
    pub alt_record_ids: Vec<AltRecordId>,
}

/// `mets:agent` of the header.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "agent", prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/" })]
pub struct MetsAgent {
    /// `ID`.
    #[yaserde(attribute = true, rename = "ID")]
    pub id: Option<String>,
    /// `ROLE` (CREATOR, ARCHIVIST, ...).
    #[yaserde(attribute = true, rename = "ROLE")]
    pub role: Option<String>,
    /// `OTHERROLE`.
    #[yaserde(attribute = true, rename = "OTHERROLE")]
    pub other_role: Option<String>,
    /// `TYPE` (ORGANIZATION, INDIVIDUAL, OTHER).
    #[yaserde(attribute = true, rename = "TYPE")]
    pub agent_type: Option<String>,
    /// `OTHERTYPE` (SOFTWARE, ...).
    #[yaserde(attribute = true, rename = "OTHERTYPE")]
    pub other_type: Option<String>,
    /// `mets:name`.
    #[yaserde(rename = "name", prefix = "mets")]
    pub name: Option<String>,
    /// `mets:note`s.
    #[yaserde(rename = "note", prefix = "mets")]
    pub notes: Vec<String>,
}

/// `mets:altRecordID`.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "altRecordID", prefix = "mets", namespaces = { "mets" = "http://www.loc.gov/METS/" })]
pub struct AltRecordId {
    /// `ID`.
    #[yaserde(attribute = true, rename = "ID")]
    pub id: Option<String>,
    /// `TYPE`.
    #[yaserde(attribute = true, rename = "TYPE")]
    pub id_type: Option<String>,
    /// The identifier.
    #[yaserde(text = true)]
    pub value: String,
}
