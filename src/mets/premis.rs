//! PREMIS 3 objects, events and agents, each wrapped in its METS section.

use std::io::{self, Write};

use chrono::SecondsFormat;

use super::xml::XmlOut;
use crate::model::{
    Agent, Event, Format, Identification, PremisObject, ReferencedPayload, Verdict,
};

/// `<mets:techMD ID=..>` holding a PREMIS object.
pub(crate) fn write_object_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    o: &PremisObject,
) -> io::Result<()> {
    open_md(x, "mets:techMD", md_id, "PREMIS:OBJECT")?;
    write_object(x, o)?;
    close_md(x, "mets:techMD")
}

/// A METS metadata section (`mets:techMD`, `mets:digiprovMD`) and its wrap, opened.
fn open_md<W: Write>(x: &mut XmlOut<W>, section: &str, id: &str, mdtype: &str) -> io::Result<()> {
    x.start(section, &[("ID", id)])?;
    x.start("mets:mdWrap", &[("MDTYPE", mdtype)])?;
    x.start("mets:xmlData", &[])
}

fn close_md<W: Write>(x: &mut XmlOut<W>, section: &str) -> io::Result<()> {
    x.end("mets:xmlData")?;
    x.end("mets:mdWrap")?;
    x.end(section)
}

/// An identifier element (`premis:objectIdentifier`...) with its type and value, the
/// children named after it.
fn write_identifier<W: Write>(
    x: &mut XmlOut<W>,
    element: &str,
    id_type: &str,
    value: &str,
) -> io::Result<()> {
    x.start(element, &[])?;
    x.text(&format!("{element}Type"), &[], id_type)?;
    x.text(&format!("{element}Value"), &[], value)?;
    x.end(element)
}

/// A relationship to the object `related` (type, value), and the event behind it if any.
fn write_relationship<W: Write>(
    x: &mut XmlOut<W>,
    kind: &str,
    subtype: &str,
    (related_type, related): (&str, &str),
    event: Option<&str>,
) -> io::Result<()> {
    x.start("premis:relationship", &[])?;
    x.text("premis:relationshipType", &[], kind)?;
    x.text("premis:relationshipSubType", &[], subtype)?;
    write_identifier(x, "premis:relatedObjectIdentifier", related_type, related)?;
    if let Some(e) = event {
        write_identifier(x, "premis:relatedEventIdentifier", "UUID", e)?;
    }
    x.end("premis:relationship")
}

fn write_linking_events<W: Write>(x: &mut XmlOut<W>, events: &[impl AsRef<str>]) -> io::Result<()> {
    for e in events {
        write_identifier(x, "premis:linkingEventIdentifier", "UUID", e.as_ref())?;
    }
    Ok(())
}

/// A `premis:object` of type file.
pub(crate) fn write_object<W: Write>(x: &mut XmlOut<W>, o: &PremisObject) -> io::Result<()> {
    x.start("premis:object", &[("xsi:type", "premis:file"), ("version", "3.0")])?;
    write_identifier(x, "premis:objectIdentifier", &o.id_type, &o.id)?;
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
    if let Some(sha256) = &o.sha256 {
        x.start("premis:fixity", &[])?;
        x.text("premis:messageDigestAlgorithm", &[], "SHA-256")?;
        x.text("premis:messageDigest", &[], sha256)?;
        x.end("premis:fixity")?;
    }
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
        let related = (r.related_object.0.as_str(), r.related_object.1.as_str());
        let event = r.related_event.as_deref();
        write_relationship(x, &r.relationship_type, &r.subtype, related, event)?;
    }
    write_linking_events(x, &o.events)?;
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
    open_md(x, "mets:techMD", md_id, "PREMIS:OBJECT")?;
    x.start("premis:object", &[("xsi:type", "premis:bitstream"), ("version", "3.0")])?;
    let (id_type, id) = match &p.record_id {
        // Without its angle brackets, as `OWNERID` and every record identifier here.
        Some(id) => ("WARC-Record-ID", id.trim_start_matches('<').trim_end_matches('>').into()),
        None => ("WARC-Target-URI WARC-Date", format!("{} {}", p.uri, p.date)),
    };
    write_identifier(x, "premis:objectIdentifier", id_type, &id)?;
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
    write_referenced_storage(x, p)?;
    if let Some(objid) = &p.package {
        write_relationship(x, "structural", "is included in", ("OBJID", objid), None)?;
    }
    let revisit = ("WARC-Record-ID", revisit_id);
    write_relationship(x, "dependency", "is required by", revisit, None)?;
    x.end("premis:object")?;
    close_md(x, "mets:techMD")
}

/// Where a referenced payload lives: its container (and the original record's range in it),
/// then the payload's range in the decompressed record.
fn write_referenced_storage<W: Write>(x: &mut XmlOut<W>, p: &ReferencedPayload) -> io::Result<()> {
    match &p.member {
        Some(m) => write_storage(
            x,
            "record in container",
            &format!("{} BEGIN={} END={}", p.container, m.begin, m.end_inclusive()),
        )?,
        None => write_storage(x, "container", &p.container)?,
    }
    if let Some(r) = &p.payload {
        let range = format!("BEGIN={} END={}", r.begin, r.end_inclusive());
        write_storage(x, "payload in decompressed record", &range)?;
    }
    Ok(())
}

fn write_storage<W: Write>(x: &mut XmlOut<W>, kind: &str, value: &str) -> io::Result<()> {
    x.start("premis:storage", &[])?;
    x.start("premis:contentLocation", &[])?;
    x.text("premis:contentLocationType", &[], kind)?;
    x.text("premis:contentLocationValue", &[], value)?;
    x.end("premis:contentLocation")?;
    x.end("premis:storage")
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
    open_md(x, "mets:techMD", md_id, "PREMIS:OBJECT")?;
    x.start("premis:object", &[("xsi:type", "premis:representation"), ("version", "3.0")])?;
    write_identifier(x, "premis:objectIdentifier", id_type, id)?;
    if let Some(source) = source {
        write_relationship(x, "derivation", "has source", source, None)?;
    }
    write_linking_events(x, events)?;
    x.end("premis:object")?;
    close_md(x, "mets:techMD")
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

/// What identification found, then what the harvest declared: every PRONOM match with its
/// basis (several when DROID's priorities leave several, each saying so), or a note that none
/// matched; the declared type keeps its own `format`, noted as declared and, when the bytes
/// contradict it or do not confirm it, why.
pub(crate) fn write_identified_formats<W: Write>(
    x: &mut XmlOut<W>,
    declared: &Format,
    id: &Identification,
) -> io::Result<()> {
    let n = id.matches.len();
    for m in &id.matches {
        let mut note = format!("identified by {}", id.method);
        if n > 1 {
            note.push_str(&format!("; one of {n} formats the signatures match"));
        }
        // Before the basis, which ends the note (readers split it off there).
        if let Some(d) = &id.decoding {
            note.push_str(&format!("; {d}"));
        }
        if let Some(c) = &id.caveat {
            note.push_str(&format!("; caveat: {c}"));
        }
        if let Some(b) = &id.basis {
            note.push_str(&format!("; basis: {b}"));
        }
        write_format(x, m, &[note])?;
    }
    let mut notes = vec!["declared by the harvest".to_string()];
    if n == 0 {
        notes.push(format!("no PRONOM signature matches ({})", id.method));
        notes.extend(id.decoding.clone());
        notes.extend(id.caveat.as_ref().map(|c| format!("caveat: {c}")));
    }
    match &id.verdict {
        Verdict::Consistent => {}
        Verdict::NotConfirmed(why) => notes.push(format!("not confirmed by the bytes: {why}")),
        Verdict::Contradicted(why) => notes.push(format!("contradicted by the bytes: {why}")),
    }
    write_format(x, declared, &notes)
}

/// `<mets:digiprovMD ID=..>` holding a PREMIS event.
pub(crate) fn write_event_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    e: &Event,
) -> io::Result<()> {
    open_md(x, "mets:digiprovMD", md_id, "PREMIS:EVENT")?;
    x.start("premis:event", &[("version", "3.0")])?;
    write_identifier(x, "premis:eventIdentifier", "UUID", &e.id)?;
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
        write_link(x, "premis:linkingAgent", (t.as_str(), v.as_str()), role)?;
    }
    for (t, v, role) in &e.objects {
        write_link(x, "premis:linkingObject", (t.as_str(), v.as_str()), role)?;
    }
    x.end("premis:event")?;
    close_md(x, "mets:digiprovMD")
}

/// An event's link to an agent or object (`premis:linkingAgent`, `premis:linkingObject`):
/// its identifier and its role.
fn write_link<W: Write>(
    x: &mut XmlOut<W>,
    link: &str,
    (id_type, id): (&str, &str),
    role: &str,
) -> io::Result<()> {
    let element = format!("{link}Identifier");
    x.start(&element, &[])?;
    x.text(&format!("{element}Type"), &[], id_type)?;
    x.text(&format!("{element}Value"), &[], id)?;
    x.text(&format!("{link}Role"), &[], role)?;
    x.end(&element)
}

/// `<mets:digiprovMD ID=..>` holding a PREMIS agent.
pub(crate) fn write_agent_md<W: Write>(
    x: &mut XmlOut<W>,
    md_id: &str,
    a: &Agent,
) -> io::Result<()> {
    open_md(x, "mets:digiprovMD", md_id, "PREMIS:AGENT")?;
    x.start("premis:agent", &[("version", "3.0")])?;
    write_identifier(x, "premis:agentIdentifier", &a.id_type, &a.id)?;
    x.text("premis:agentName", &[], &a.name)?;
    x.text("premis:agentType", &[], &a.agent_type)?;
    if let Some(v) = &a.version {
        x.text("premis:agentVersion", &[], v)?;
    }
    if let Some(n) = &a.note {
        x.text("premis:agentNote", &[], n)?;
    }
    x.end("premis:agent")?;
    close_md(x, "mets:digiprovMD")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ByteRange;

    /// The output as one line: each element's indentation and line end removed.
    fn compact(x: XmlOut<Vec<u8>>) -> String {
        String::from_utf8(x.into_inner()).unwrap().lines().map(str::trim).collect()
    }

    /// True when `parts` occur in `text` in this order.
    fn in_order(text: &str, parts: &[&str]) -> bool {
        let mut from = 0;
        parts.iter().all(|p| match text[from..].find(p) {
            Some(i) => {
                from += i + p.len();
                true
            }
            None => false,
        })
    }

    #[test]
    fn a_referenced_payload_says_where_it_lives_and_what_needs_it() {
        let p = ReferencedPayload {
            package: Some("pkg-0".into()),
            container: "content/a.warc.gz".into(),
            record_id: Some("<urn:uuid:1>".into()),
            uri: "http://e.example/".into(),
            date: "2024-01-01T00:00:00Z".into(),
            member: Some(ByteRange { begin: 100, len: 50 }),
            payload: Some(ByteRange { begin: 10, len: 5 }),
            sha1: "abc".into(),
            len: 5,
            mime: "text/html".into(),
        };
        let mut x = XmlOut::new(Vec::new(), 0);
        write_referenced_md(&mut x, "tech-9", &p, "urn:uuid:2").unwrap();
        let out = compact(x);
        assert!(out.starts_with(r#"<mets:techMD ID="tech-9"><mets:mdWrap MDTYPE="PREMIS:OBJECT"><mets:xmlData><premis:object xsi:type="premis:bitstream" version="3.0"><premis:objectIdentifier><premis:objectIdentifierType>WARC-Record-ID</premis:objectIdentifierType><premis:objectIdentifierValue>urn:uuid:1</premis:objectIdentifierValue></premis:objectIdentifier>"#), "{out}");
        assert!(
            in_order(
                &out,
                &[
                    "<premis:contentLocationType>record in container</premis:contentLocationType><premis:contentLocationValue>content/a.warc.gz BEGIN=100 END=149</premis:contentLocationValue>",
                    "<premis:contentLocationType>payload in decompressed record</premis:contentLocationType><premis:contentLocationValue>BEGIN=10 END=14</premis:contentLocationValue>",
                    "<premis:relationship><premis:relationshipType>structural</premis:relationshipType><premis:relationshipSubType>is included in</premis:relationshipSubType><premis:relatedObjectIdentifier><premis:relatedObjectIdentifierType>OBJID</premis:relatedObjectIdentifierType><premis:relatedObjectIdentifierValue>pkg-0</premis:relatedObjectIdentifierValue></premis:relatedObjectIdentifier></premis:relationship>",
                    "<premis:relationshipType>dependency</premis:relationshipType><premis:relationshipSubType>is required by</premis:relationshipSubType><premis:relatedObjectIdentifier><premis:relatedObjectIdentifierType>WARC-Record-ID</premis:relatedObjectIdentifierType><premis:relatedObjectIdentifierValue>urn:uuid:2</premis:relatedObjectIdentifierValue>",
                ]
            ),
            "{out}"
        );
        assert!(
            out.ends_with("</premis:object></mets:xmlData></mets:mdWrap></mets:techMD>"),
            "{out}"
        );
    }

    #[test]
    fn an_event_links_its_agents_then_its_objects_with_their_roles() {
        let e = Event {
            id: "ev-1".into(),
            event_type: "virus check".into(),
            event_type_uri: None,
            date_time: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            detail: None,
            outcome: "no virus detected".into(),
            outcome_detail: None,
            agents: vec![("UUID".into(), "ag-1".into(), "executing program".into())],
            objects: vec![("UUID".into(), "ob-1".into(), "source".into())],
        };
        let mut x = XmlOut::new(Vec::new(), 0);
        write_event_md(&mut x, "prov-1", &e).unwrap();
        let out = compact(x);
        assert!(
            in_order(
                &out,
                &[
                    r#"<mets:digiprovMD ID="prov-1"><mets:mdWrap MDTYPE="PREMIS:EVENT">"#,
                    "<premis:eventIdentifier><premis:eventIdentifierType>UUID</premis:eventIdentifierType><premis:eventIdentifierValue>ev-1</premis:eventIdentifierValue></premis:eventIdentifier>",
                    "<premis:linkingAgentIdentifier><premis:linkingAgentIdentifierType>UUID</premis:linkingAgentIdentifierType><premis:linkingAgentIdentifierValue>ag-1</premis:linkingAgentIdentifierValue><premis:linkingAgentRole>executing program</premis:linkingAgentRole></premis:linkingAgentIdentifier>",
                    "<premis:linkingObjectIdentifier><premis:linkingObjectIdentifierType>UUID</premis:linkingObjectIdentifierType><premis:linkingObjectIdentifierValue>ob-1</premis:linkingObjectIdentifierValue><premis:linkingObjectRole>source</premis:linkingObjectRole></premis:linkingObjectIdentifier>",
                    "</premis:event></mets:xmlData></mets:mdWrap></mets:digiprovMD>",
                ]
            ),
            "{out}"
        );
    }
}
