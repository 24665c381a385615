//! PREMIS 3 objects, events and agents, each wrapped in its METS section.

use std::io::{self, Write};

use chrono::SecondsFormat;

use super::xml::XmlOut;
use crate::model::{Agent, Event, Format, Identification, PremisObject, ReferencedPayload};

/// `<mets:techMD ID=..>` holding a PREMIS object.
pub(crate) fn write_object_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    o: &PremisObject,
) -> io::Result<()> {
    x.start("mets:techMD", &[("ID", md_id)])?;
    x.start("mets:mdWrap", &[("MDTYPE", "PREMIS:OBJECT")])?;
    x.start("mets:xmlData", &[])?;
    write_object(x, o)?;
    x.end("mets:xmlData")?;
    x.end("mets:mdWrap")?;
    x.end("mets:techMD")
}

/// A `premis:object` of type file.
pub(crate) fn write_object<W: Write>(x: &mut XmlOut<W>, o: &PremisObject) -> io::Result<()> {
    x.start("premis:object", &[("xsi:type", "premis:file"), ("version", "3.0")])?;
    x.start("premis:objectIdentifier", &[])?;
    x.text("premis:objectIdentifierType", &[], &o.id_type)?;
    x.text("premis:objectIdentifierValue", &[], &o.id)?;
    x.end("premis:objectIdentifier")?;
    for (kind, value) in &o.significant_properties {
        x.start("premis:significantProperties", &[])?;
        x.text("premis:significantPropertiesType", &[], kind)?;
        x.text("premis:significantPropertiesValue", &[], value)?;
        x.end("premis:significantProperties")?;
    }
    x.start("premis:objectCharacteristics", &[])?;
    x.text("premis:compositionLevel", &[], "0")?;
    x.start("premis:fixity", &[])?;
    x.text("premis:messageDigestAlgorithm", &[], "SHA-512")?;
    x.text("premis:messageDigest", &[], &o.sha512)?;
    x.end("premis:fixity")?;
    x.text("premis:size", &[], &o.size.to_string())?;
    match &o.identification {
        None => write_format(x, &o.format, &[])?,
        Some(id) => write_identified_formats(x, &o.format, id)?,
    }
    x.end("premis:objectCharacteristics")?;
    if let Some(n) = &o.original_name {
        x.text("premis:originalName", &[], n)?;
    }
    for r in &o.relationships {
        x.start("premis:relationship", &[])?;
        x.text("premis:relationshipType", &[], &r.relationship_type)?;
        x.text("premis:relationshipSubType", &[], &r.subtype)?;
        x.start("premis:relatedObjectIdentifier", &[])?;
        x.text("premis:relatedObjectIdentifierType", &[], &r.related_object.0)?;
        x.text("premis:relatedObjectIdentifierValue", &[], &r.related_object.1)?;
        x.end("premis:relatedObjectIdentifier")?;
        if let Some(e) = &r.related_event {
            x.start("premis:relatedEventIdentifier", &[])?;
            x.text("premis:relatedEventIdentifierType", &[], "UUID")?;
            x.text("premis:relatedEventIdentifierValue", &[], e)?;
            x.end("premis:relatedEventIdentifier")?;
        }
        x.end("premis:relationship")?;
    }
    for e in &o.events {
        x.start("premis:linkingEventIdentifier", &[])?;
        x.text("premis:linkingEventIdentifierType", &[], "UUID")?;
        x.text("premis:linkingEventIdentifierValue", &[], e)?;
        x.end("premis:linkingEventIdentifier")?;
    }
    x.end("premis:object")
}

/// `<mets:techMD ID=..>` holding the PREMIS bitstream object of a payload a revisit record
/// (`revisit_id`) refers to, stored elsewhere: its original record's id, its SHA-1 and size
/// (what the revisit's `WARC-Payload-Digest` states), where it lives (the container, the
/// original record's byte range in it and the payload's range in the decompressed record, in
/// METS's own terms: `BEGIN`/`END`, inclusive), and two relationships: it is included in the
/// package holding it (by OBJID) and is required by the revisit.
pub(crate) fn write_referenced_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    p: &ReferencedPayload,
    revisit_id: &str,
) -> io::Result<()> {
    x.start("mets:techMD", &[("ID", md_id)])?;
    x.start("mets:mdWrap", &[("MDTYPE", "PREMIS:OBJECT")])?;
    x.start("mets:xmlData", &[])?;
    x.start("premis:object", &[("xsi:type", "premis:bitstream"), ("version", "3.0")])?;
    let (id_type, id) = match &p.record_id {
        // Without its angle brackets, as `OWNERID` and every record identifier here.
        Some(id) => ("WARC-Record-ID", id.trim_start_matches('<').trim_end_matches('>').into()),
        None => ("WARC-Target-URI WARC-Date", format!("{} {}", p.uri, p.date)),
    };
    x.start("premis:objectIdentifier", &[])?;
    x.text("premis:objectIdentifierType", &[], id_type)?;
    x.text("premis:objectIdentifierValue", &[], &id)?;
    x.end("premis:objectIdentifier")?;
    x.start("premis:objectCharacteristics", &[])?;
    x.start("premis:fixity", &[])?;
    x.text("premis:messageDigestAlgorithm", &[], "SHA-1")?;
    x.text("premis:messageDigest", &[], &p.sha1)?;
    x.text("premis:messageDigestOriginator", &[], "WARC-Payload-Digest")?;
    x.end("premis:fixity")?;
    x.text("premis:size", &[], &p.len.to_string())?;
    let declared = Format { name: p.mime.clone(), version: None, pronom: None };
    write_format(x, &declared, &["declared by the harvest".into()])?;
    x.end("premis:objectCharacteristics")?;
    let mut location = |kind: &str, value: &str| -> io::Result<()> {
        x.start("premis:storage", &[])?;
        x.start("premis:contentLocation", &[])?;
        x.text("premis:contentLocationType", &[], kind)?;
        x.text("premis:contentLocationValue", &[], value)?;
        x.end("premis:contentLocation")?;
        x.end("premis:storage")
    };
    match &p.member {
        Some(m) => location(
            "record in container",
            &format!("{} BEGIN={} END={}", p.container, m.begin, m.end_inclusive()),
        )?,
        None => location("container", &p.container)?,
    }
    if let Some(r) = &p.payload {
        location(
            "payload in decompressed record",
            &format!("BEGIN={} END={}", r.begin, r.end_inclusive()),
        )?;
    }
    let mut relationship = |kind: &str, sub: &str, related: (&str, &str)| -> io::Result<()> {
        x.start("premis:relationship", &[])?;
        x.text("premis:relationshipType", &[], kind)?;
        x.text("premis:relationshipSubType", &[], sub)?;
        x.start("premis:relatedObjectIdentifier", &[])?;
        x.text("premis:relatedObjectIdentifierType", &[], related.0)?;
        x.text("premis:relatedObjectIdentifierValue", &[], related.1)?;
        x.end("premis:relatedObjectIdentifier")?;
        x.end("premis:relationship")
    };
    if let Some(objid) = &p.package {
        relationship("structural", "is included in", ("OBJID", objid))?;
    }
    relationship("dependency", "is required by", ("WARC-Record-ID", revisit_id))?;
    x.end("premis:object")?;
    x.end("mets:xmlData")?;
    x.end("mets:mdWrap")?;
    x.end("mets:techMD")
}

/// `<mets:techMD ID=..>` holding a PREMIS representation object: a package as a whole (an
/// AIP), with a derivation relationship to the package it came from, and its events.
pub(crate) fn write_representation_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    (id_type, id): (&str, &str),
    source: Option<(&str, &str)>,
    events: &[&str],
) -> io::Result<()> {
    x.start("mets:techMD", &[("ID", md_id)])?;
    x.start("mets:mdWrap", &[("MDTYPE", "PREMIS:OBJECT")])?;
    x.start("mets:xmlData", &[])?;
    x.start("premis:object", &[("xsi:type", "premis:representation"), ("version", "3.0")])?;
    x.start("premis:objectIdentifier", &[])?;
    x.text("premis:objectIdentifierType", &[], id_type)?;
    x.text("premis:objectIdentifierValue", &[], id)?;
    x.end("premis:objectIdentifier")?;
    if let Some((t, v)) = source {
        x.start("premis:relationship", &[])?;
        x.text("premis:relationshipType", &[], "derivation")?;
        x.text("premis:relationshipSubType", &[], "has source")?;
        x.start("premis:relatedObjectIdentifier", &[])?;
        x.text("premis:relatedObjectIdentifierType", &[], t)?;
        x.text("premis:relatedObjectIdentifierValue", &[], v)?;
        x.end("premis:relatedObjectIdentifier")?;
        x.end("premis:relationship")?;
    }
    for e in events {
        x.start("premis:linkingEventIdentifier", &[])?;
        x.text("premis:linkingEventIdentifierType", &[], "UUID")?;
        x.text("premis:linkingEventIdentifierValue", &[], e)?;
        x.end("premis:linkingEventIdentifier")?;
    }
    x.end("premis:object")?;
    x.end("mets:xmlData")?;
    x.end("mets:mdWrap")?;
    x.end("mets:techMD")
}

/// One `premis:format`: its designation, its PRONOM key when it has one, and notes.
fn write_format<W: Write>(x: &mut XmlOut<W>, f: &Format, notes: &[String]) -> io::Result<()> {
    x.start("premis:format", &[])?;
    x.start("premis:formatDesignation", &[])?;
    x.text("premis:formatName", &[], &f.name)?;
    if let Some(v) = &f.version {
        x.text("premis:formatVersion", &[], v)?;
    }
    x.end("premis:formatDesignation")?;
    if let Some(p) = &f.pronom {
        x.start("premis:formatRegistry", &[])?;
        x.text("premis:formatRegistryName", &[], "PRONOM")?;
        x.text("premis:formatRegistryKey", &[], p)?;
        x.end("premis:formatRegistry")?;
    }
    for n in notes {
        x.text("premis:formatNote", &[], n)?;
    }
    x.end("premis:format")
}

/// What identification found, then what the harvest declared: every PRONOM match (several
/// when DROID's priorities leave several, each saying so), or a note that none matched; the
/// declared type keeps its own `format`, noted as declared and, when the bytes contradict it,
/// why.
pub(crate) fn write_identified_formats<W: Write>(
    x: &mut XmlOut<W>,
    declared: &Format,
    id: &Identification,
) -> io::Result<()> {
    let n = id.matches.len();
    for m in &id.matches {
        let mut note = format!("identified by {}", id.method);
        if let Some(k) = id.text {
            note.push_str(&format!(
                "; by its characters, not by a signature: no binary signature matches, and its first bytes are {k} text"
            ));
        }
        if n > 1 {
            note.push_str(&format!("; one of {n} formats the signatures match"));
        }
        write_format(x, m, &[note])?;
    }
    let mut notes = vec!["declared by the harvest".to_string()];
    if n == 0 {
        notes.push(format!("no PRONOM signature matches ({})", id.method));
    }
    if let Some(c) = &id.contradiction {
        notes.push(format!("contradicted by the bytes: {c}"));
    }
    write_format(x, declared, &notes)
}

/// `<mets:digiprovMD ID=..>` holding a PREMIS event.
pub(crate) fn write_event_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    e: &Event,
) -> io::Result<()> {
    x.start("mets:digiprovMD", &[("ID", md_id)])?;
    x.start("mets:mdWrap", &[("MDTYPE", "PREMIS:EVENT")])?;
    x.start("mets:xmlData", &[])?;
    x.start("premis:event", &[("version", "3.0")])?;
    x.start("premis:eventIdentifier", &[])?;
    x.text("premis:eventIdentifierType", &[], "UUID")?;
    x.text("premis:eventIdentifierValue", &[], &e.id)?;
    x.end("premis:eventIdentifier")?;
    match &e.event_type_uri {
        Some(uri) if !uri.is_empty() => x.text(
            "premis:eventType",
            &[
                ("authority", "eventType"),
                ("authorityURI", "http://id.loc.gov/vocabulary/preservation/eventType"),
                ("valueURI", uri),
            ],
            &e.event_type,
        )?,
        _ => x.text("premis:eventType", &[], &e.event_type)?,
    }
    x.text("premis:eventDateTime", &[], &e.date_time.to_rfc3339_opts(SecondsFormat::Secs, true))?;
    if let Some(d) = &e.detail {
        x.start("premis:eventDetailInformation", &[])?;
        x.text("premis:eventDetail", &[], d)?;
        x.end("premis:eventDetailInformation")?;
    }
    x.start("premis:eventOutcomeInformation", &[])?;
    x.text("premis:eventOutcome", &[], &e.outcome)?;
    if let Some(d) = &e.outcome_detail {
        x.start("premis:eventOutcomeDetail", &[])?;
        x.text("premis:eventOutcomeDetailNote", &[], d)?;
        x.end("premis:eventOutcomeDetail")?;
    }
    x.end("premis:eventOutcomeInformation")?;
    for (t, v, role) in &e.agents {
        x.start("premis:linkingAgentIdentifier", &[])?;
        x.text("premis:linkingAgentIdentifierType", &[], t)?;
        x.text("premis:linkingAgentIdentifierValue", &[], v)?;
        x.text("premis:linkingAgentRole", &[], role)?;
        x.end("premis:linkingAgentIdentifier")?;
    }
    for (t, v, role) in &e.objects {
        x.start("premis:linkingObjectIdentifier", &[])?;
        x.text("premis:linkingObjectIdentifierType", &[], t)?;
        x.text("premis:linkingObjectIdentifierValue", &[], v)?;
        x.text("premis:linkingObjectRole", &[], role)?;
        x.end("premis:linkingObjectIdentifier")?;
    }
    x.end("premis:event")?;
    x.end("mets:xmlData")?;
    x.end("mets:mdWrap")?;
    x.end("mets:digiprovMD")
}

/// `<mets:digiprovMD ID=..>` holding a PREMIS agent.
pub(crate) fn write_agent_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    a: &Agent,
) -> io::Result<()> {
    x.start("mets:digiprovMD", &[("ID", md_id)])?;
    x.start("mets:mdWrap", &[("MDTYPE", "PREMIS:AGENT")])?;
    x.start("mets:xmlData", &[])?;
    x.start("premis:agent", &[("version", "3.0")])?;
    x.start("premis:agentIdentifier", &[])?;
    x.text("premis:agentIdentifierType", &[], &a.id_type)?;
    x.text("premis:agentIdentifierValue", &[], &a.id)?;
    x.end("premis:agentIdentifier")?;
    x.text("premis:agentName", &[], &a.name)?;
    x.text("premis:agentType", &[], &a.agent_type)?;
    if let Some(v) = &a.version {
        x.text("premis:agentVersion", &[], v)?;
    }
    if let Some(n) = &a.note {
        x.text("premis:agentNote", &[], n)?;
    }
    x.end("premis:agent")?;
    x.end("mets:xmlData")?;
    x.end("mets:mdWrap")?;
    x.end("mets:digiprovMD")
}
