//! PREMIS objects, events, agents and rights statements, as PREMIS 2 and 3 both write them.
//!
//! The structs name the PREMIS 3 namespace: yaserde matches elements by namespace URI, and the
//! reader renames PREMIS 2's namespace to PREMIS 3's before handing a section over (and back
//! when writing one), the section's [`PremisVersion`] saying which it was. Where the versions
//! differ in shape (PREMIS 2's `eventDetail` directly in the event, PREMIS 3's inside
//! `eventDetailInformation`) both shapes are fields.

use yaserde::{YaDeserialize, YaSerialize};

/// Which PREMIS a section was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum PremisVersion {
    /// `info:lc/xmlns/premis-v2`.
    V2,
    /// `http://www.loc.gov/premis/v3`.
    V3,
}

/// `premis:objectIdentifier`: an identifier of the object.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "objectIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct ObjectIdentifier {
    /// `objectIdentifierType`.
    #[yaserde(rename = "objectIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `objectIdentifierValue`.
    #[yaserde(rename = "objectIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:eventIdentifier`: the identifier of the event.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "eventIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct EventIdentifier {
    /// `eventIdentifierType`.
    #[yaserde(rename = "eventIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `eventIdentifierValue`.
    #[yaserde(rename = "eventIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:agentIdentifier`: an identifier of the agent.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "agentIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct AgentIdentifier {
    /// `agentIdentifierType`.
    #[yaserde(rename = "agentIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `agentIdentifierValue`.
    #[yaserde(rename = "agentIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:linkingAgentIdentifier`: an agent of an event or rights statement.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "linkingAgentIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct LinkingAgentIdentifier {
    /// `linkingAgentIdentifierType`.
    #[yaserde(rename = "linkingAgentIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `linkingAgentIdentifierValue`.
    #[yaserde(rename = "linkingAgentIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
    /// `linkingAgentRole`s.
    #[yaserde(rename = "linkingAgentRole", prefix = "premis")]
    pub roles: Vec<String>,
}

/// `premis:linkingObjectIdentifier`: an object of an event or rights statement.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "linkingObjectIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct LinkingObjectIdentifier {
    /// `linkingObjectIdentifierType`.
    #[yaserde(rename = "linkingObjectIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `linkingObjectIdentifierValue`.
    #[yaserde(rename = "linkingObjectIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
    /// `linkingObjectRole`s.
    #[yaserde(rename = "linkingObjectRole", prefix = "premis")]
    pub roles: Vec<String>,
}

/// `premis:linkingEventIdentifier`: an event of the object.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "linkingEventIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct LinkingEventIdentifier {
    /// `linkingEventIdentifierType`.
    #[yaserde(rename = "linkingEventIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `linkingEventIdentifierValue`.
    #[yaserde(rename = "linkingEventIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:relatedObjectIdentifier`: the object a relationship points at.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "relatedObjectIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct RelatedObjectIdentifier {
    /// `relatedObjectIdentifierType`.
    #[yaserde(rename = "relatedObjectIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `relatedObjectIdentifierValue`.
    #[yaserde(rename = "relatedObjectIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:relatedEventIdentifier`: the event behind a relationship.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "relatedEventIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct RelatedEventIdentifier {
    /// `relatedEventIdentifierType`.
    #[yaserde(rename = "relatedEventIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `relatedEventIdentifierValue`.
    #[yaserde(rename = "relatedEventIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:rightsStatementIdentifier`: the identifier of a rights statement.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "rightsStatementIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct RightsStatementIdentifier {
    /// `rightsStatementIdentifierType`.
    #[yaserde(rename = "rightsStatementIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `rightsStatementIdentifierValue`.
    #[yaserde(rename = "rightsStatementIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:object`: an object (a file, a bitstream, a representation).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "object", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct PremisObject {
    /// `xsi:type` (`premis:file`, `premis:intellectualEntity`, ...).
    #[yaserde(attribute = true, rename = "type", prefix = "xsi")]
    pub xsi_type: Option<String>,
    /// `version` (PREMIS 3: "3.0").
    #[yaserde(attribute = true, rename = "version")]
    pub version: Option<String>,
    /// `xsi:schemaLocation`, as some tools put it on each record.
    #[yaserde(attribute = true, rename = "schemaLocation", prefix = "xsi")]
    pub schema_location: Option<String>,
    /// Its identifiers.
    #[yaserde(rename = "objectIdentifier", prefix = "premis")]
    pub identifiers: Vec<ObjectIdentifier>,
    /// Significant properties.
    #[yaserde(rename = "significantProperties", prefix = "premis")]
    pub significant_properties: Vec<SignificantProperties>,
    /// Fixity, size, format, creating application.
    #[yaserde(rename = "objectCharacteristics", prefix = "premis")]
    pub characteristics: Vec<ObjectCharacteristics>,
    /// `originalName`.
    #[yaserde(rename = "originalName", prefix = "premis")]
    pub original_name: Option<String>,
    /// Relationships to other objects.
    #[yaserde(rename = "relationship", prefix = "premis")]
    pub relationships: Vec<Relationship>,
    /// Events of the object.
    #[yaserde(rename = "linkingEventIdentifier", prefix = "premis")]
    pub linking_events: Vec<LinkingEventIdentifier>,
    /// Rights statements about the object.
    #[yaserde(rename = "linkingRightsStatementIdentifier", prefix = "premis")]
    pub linking_rights_statements: Vec<LinkingRightsStatementIdentifier>,
}

/// `premis:linkingRightsStatementIdentifier`: a rights statement about the object.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "linkingRightsStatementIdentifier", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct LinkingRightsStatementIdentifier {
    /// `linkingRightsStatementIdentifierType`.
    #[yaserde(rename = "linkingRightsStatementIdentifierType", prefix = "premis")]
    pub id_type: Option<String>,
    /// `linkingRightsStatementIdentifierValue`.
    #[yaserde(rename = "linkingRightsStatementIdentifierValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:significantProperties`: a significant property.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "significantProperties", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct SignificantProperties {
    /// `significantPropertiesType`.
    #[yaserde(rename = "significantPropertiesType", prefix = "premis")]
    pub property_type: Option<String>,
    /// `significantPropertiesValue`.
    #[yaserde(rename = "significantPropertiesValue", prefix = "premis")]
    pub value: Option<String>,
}

/// `premis:objectCharacteristics`: what the object is.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "objectCharacteristics", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct ObjectCharacteristics {
    /// `compositionLevel`.
    #[yaserde(rename = "compositionLevel", prefix = "premis")]
    pub composition_level: Option<String>,
    /// Message digests.
    #[yaserde(rename = "fixity", prefix = "premis")]
    pub fixity: Vec<Fixity>,
    /// `size` in bytes.
    #[yaserde(rename = "size", prefix = "premis")]
    pub size: Option<String>,
    /// Formats.
    #[yaserde(rename = "format", prefix = "premis")]
    pub formats: Vec<Format>,
    /// Applications that made it.
    #[yaserde(rename = "creatingApplication", prefix = "premis")]
    pub creating_applications: Vec<CreatingApplication>,
}

/// `premis:fixity`: a message digest.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "fixity", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct Fixity {
    /// `messageDigestAlgorithm`.
    #[yaserde(rename = "messageDigestAlgorithm", prefix = "premis")]
    pub algorithm: Option<String>,
    /// `messageDigest`.
    #[yaserde(rename = "messageDigest", prefix = "premis")]
    pub digest: Option<String>,
    /// `messageDigestOriginator`.
    #[yaserde(rename = "messageDigestOriginator", prefix = "premis")]
    pub originator: Option<String>,
}

/// `premis:format`: a format designation and/or registry entry.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "format", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct Format {
    /// `formatDesignation`.
    #[yaserde(rename = "formatDesignation", prefix = "premis")]
    pub designation: Option<FormatDesignation>,
    /// `formatRegistry`.
    #[yaserde(rename = "formatRegistry", prefix = "premis")]
    pub registry: Option<FormatRegistry>,
    /// `formatNote`s.
    #[yaserde(rename = "formatNote", prefix = "premis")]
    pub notes: Vec<String>,
}

/// `premis:formatDesignation`: a format by name.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "formatDesignation", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct FormatDesignation {
    /// `formatName`.
    #[yaserde(rename = "formatName", prefix = "premis")]
    pub name: Option<String>,
    /// `formatVersion`.
    #[yaserde(rename = "formatVersion", prefix = "premis")]
    pub version: Option<String>,
}

/// `premis:formatRegistry`: a format by registry key (PRONOM).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "formatRegistry", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct FormatRegistry {
    /// `formatRegistryName`.
    #[yaserde(rename = "formatRegistryName", prefix = "premis")]
    pub name: Option<String>,
    /// `formatRegistryKey`.
    #[yaserde(rename = "formatRegistryKey", prefix = "premis")]
    pub key: Option<String>,
    /// `formatRegistryRole`.
    #[yaserde(rename = "formatRegistryRole", prefix = "premis")]
    pub role: Option<String>,
}

/// `premis:creatingApplication`: an application that made the object.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "creatingApplication", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct CreatingApplication {
    /// `creatingApplicationName`.
    #[yaserde(rename = "creatingApplicationName", prefix = "premis")]
    pub name: Option<String>,
    /// `creatingApplicationVersion`.
    #[yaserde(rename = "creatingApplicationVersion", prefix = "premis")]
    pub version: Option<String>,
    /// `dateCreatedByApplication`.
    #[yaserde(rename = "dateCreatedByApplication", prefix = "premis")]
    pub date: Option<String>,
}

/// `premis:relationship`: a relationship to other objects.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "relationship", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct Relationship {
    /// `relationshipType`.
    #[yaserde(rename = "relationshipType", prefix = "premis")]
    pub relationship_type: Option<String>,
    /// `relationshipSubType`.
    #[yaserde(rename = "relationshipSubType", prefix = "premis")]
    pub sub_type: Option<String>,
    /// The objects.
    #[yaserde(rename = "relatedObjectIdentifier", prefix = "premis")]
    pub related_objects: Vec<RelatedObjectIdentifier>,
    /// The events.
    #[yaserde(rename = "relatedEventIdentifier", prefix = "premis")]
    pub related_events: Vec<RelatedEventIdentifier>,
}

/// `premis:event`: an event.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "event", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct PremisEvent {
    /// `version` (PREMIS 3: "3.0").
    #[yaserde(attribute = true, rename = "version")]
    pub version: Option<String>,
    /// `xsi:schemaLocation`, as some tools put it on each record.
    #[yaserde(attribute = true, rename = "schemaLocation", prefix = "xsi")]
    pub schema_location: Option<String>,
    /// `eventIdentifier`.
    #[yaserde(rename = "eventIdentifier", prefix = "premis")]
    pub identifier: Option<EventIdentifier>,
    /// `eventType`.
    #[yaserde(rename = "eventType", prefix = "premis")]
    pub event_type: Option<EventType>,
    /// `eventDateTime`.
    #[yaserde(rename = "eventDateTime", prefix = "premis")]
    pub date_time: Option<String>,
    /// PREMIS 2's `eventDetail`.
    #[yaserde(rename = "eventDetail", prefix = "premis")]
    pub detail_v2: Option<String>,
    /// PREMIS 3's `eventDetailInformation`.
    #[yaserde(rename = "eventDetailInformation", prefix = "premis")]
    pub detail_information: Vec<EventDetailInformation>,
    /// `eventOutcomeInformation`.
    #[yaserde(rename = "eventOutcomeInformation", prefix = "premis")]
    pub outcomes: Vec<EventOutcomeInformation>,
    /// The agents.
    #[yaserde(rename = "linkingAgentIdentifier", prefix = "premis")]
    pub linking_agents: Vec<LinkingAgentIdentifier>,
    /// The objects.
    #[yaserde(rename = "linkingObjectIdentifier", prefix = "premis")]
    pub linking_objects: Vec<LinkingObjectIdentifier>,
}

/// `premis:eventType`: the type, with PREMIS 3's authority attributes.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "eventType", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3" })]
pub struct EventType {
    /// `authority`.
    #[yaserde(attribute = true, rename = "authority")]
    pub authority: Option<String>,
    /// `authorityURI`.
    #[yaserde(attribute = true, rename = "authorityURI")]
    pub authority_uri: Option<String>,
    /// `valueURI`.
    #[yaserde(attribute = true, rename = "valueURI")]
    pub value_uri: Option<String>,
    /// The type.
    #[yaserde(text = true)]
    pub value: String,
}

/// `premis:eventDetailInformation`: PREMIS 3's detail of an event.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "eventDetailInformation", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct EventDetailInformation {
    /// `eventDetail`.
    #[yaserde(rename = "eventDetail", prefix = "premis")]
    pub detail: Option<String>,
}

/// `premis:eventOutcomeInformation`: an outcome.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "eventOutcomeInformation", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct EventOutcomeInformation {
    /// `eventOutcome`.
    #[yaserde(rename = "eventOutcome", prefix = "premis")]
    pub outcome: Option<String>,
    /// `eventOutcomeDetail`s.
    #[yaserde(rename = "eventOutcomeDetail", prefix = "premis")]
    pub details: Vec<EventOutcomeDetail>,
}

/// `premis:eventOutcomeDetail`: the detail of an outcome.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "eventOutcomeDetail", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct EventOutcomeDetail {
    /// `eventOutcomeDetailNote`.
    #[yaserde(rename = "eventOutcomeDetailNote", prefix = "premis")]
    pub note: Option<String>,
}

/// `premis:agent`: an agent (software, organisation, person).
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "agent", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct PremisAgent {
    /// `version` (PREMIS 3: "3.0").
    #[yaserde(attribute = true, rename = "version")]
    pub schema_version: Option<String>,
    /// `xsi:schemaLocation`, as some tools put it on each record.
    #[yaserde(attribute = true, rename = "schemaLocation", prefix = "xsi")]
    pub schema_location: Option<String>,
    /// Its identifiers.
    #[yaserde(rename = "agentIdentifier", prefix = "premis")]
    pub identifiers: Vec<AgentIdentifier>,
    /// `agentName`s.
    #[yaserde(rename = "agentName", prefix = "premis")]
    pub names: Vec<String>,
    /// `agentType`.
    #[yaserde(rename = "agentType", prefix = "premis")]
    pub agent_type: Option<String>,
    /// `agentVersion` (PREMIS 3).
    #[yaserde(rename = "agentVersion", prefix = "premis")]
    pub version: Option<String>,
    /// `agentNote`s.
    #[yaserde(rename = "agentNote", prefix = "premis")]
    pub notes: Vec<String>,
}

/// `premis:rights`: PREMIS 3's container of rights statements.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "rights", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct PremisRights {
    /// `version` (PREMIS 3: "3.0").
    #[yaserde(attribute = true, rename = "version")]
    pub version: Option<String>,
    /// `xsi:schemaLocation`, as some tools put it on each record.
    #[yaserde(attribute = true, rename = "schemaLocation", prefix = "xsi")]
    pub schema_location: Option<String>,
    /// The statements.
    #[yaserde(rename = "rightsStatement", prefix = "premis")]
    pub statements: Vec<RightsStatement>,
}

/// `premis:rightsStatement`: one rights statement.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "rightsStatement", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct RightsStatement {
    /// `rightsStatementIdentifier`.
    #[yaserde(rename = "rightsStatementIdentifier", prefix = "premis")]
    pub identifier: Option<RightsStatementIdentifier>,
    /// `rightsBasis` (copyright, license, statute, other).
    #[yaserde(rename = "rightsBasis", prefix = "premis")]
    pub basis: Option<String>,
    /// `statuteInformation`.
    #[yaserde(rename = "statuteInformation", prefix = "premis")]
    pub statutes: Vec<StatuteInformation>,
    /// `rightsGranted`.
    #[yaserde(rename = "rightsGranted", prefix = "premis")]
    pub granted: Vec<RightsGranted>,
    /// The objects.
    #[yaserde(rename = "linkingObjectIdentifier", prefix = "premis")]
    pub linking_objects: Vec<LinkingObjectIdentifier>,
    /// The agents.
    #[yaserde(rename = "linkingAgentIdentifier", prefix = "premis")]
    pub linking_agents: Vec<LinkingAgentIdentifier>,
}

/// `premis:statuteInformation`: the statute a right rests on.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "statuteInformation", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct StatuteInformation {
    /// `statuteJurisdiction`.
    #[yaserde(rename = "statuteJurisdiction", prefix = "premis")]
    pub jurisdiction: Option<String>,
    /// `statuteCitation`.
    #[yaserde(rename = "statuteCitation", prefix = "premis")]
    pub citation: Option<String>,
    /// `statuteInformationDeterminationDate`.
    #[yaserde(rename = "statuteInformationDeterminationDate", prefix = "premis")]
    pub determination_date: Option<String>,
    /// `statuteNote`s.
    #[yaserde(rename = "statuteNote", prefix = "premis")]
    pub notes: Vec<String>,
}

/// `premis:rightsGranted`: an act granted.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "rightsGranted", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct RightsGranted {
    /// `act`.
    #[yaserde(rename = "act", prefix = "premis")]
    pub act: Option<String>,
    /// `restriction`s.
    #[yaserde(rename = "restriction", prefix = "premis")]
    pub restrictions: Vec<String>,
    /// `termOfGrant`.
    #[yaserde(rename = "termOfGrant", prefix = "premis")]
    pub term: Option<TermOfGrant>,
    /// `rightsGrantedNote`s.
    #[yaserde(rename = "rightsGrantedNote", prefix = "premis")]
    pub notes: Vec<String>,
}

/// `premis:termOfGrant`: when a grant holds.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "termOfGrant", prefix = "premis", namespaces = { "premis" = "http://www.loc.gov/premis/v3", "xsi" = "http://www.w3.org/2001/XMLSchema-instance" })]
pub struct TermOfGrant {
    /// `startDate`.
    #[yaserde(rename = "startDate", prefix = "premis")]
    pub start: Option<String>,
    /// `endDate`.
    #[yaserde(rename = "endDate", prefix = "premis")]
    pub end: Option<String>,
}
