//! PREMIS objects, events and agents as the document streams: each is stored for the rules
//! that need the whole document (module `coherence`), and what an event alone says is checked
//! here: an outcome from the profile's vocabulary for its type (P5.5-P5.7), and a virus check
//! that could not scan (P5.5). Also which PREMIS version the document is written in (P5).

use super::crossrefs::{CrossrefError, Crossrefs, PremisObjectEntry, StoredEvent};
use super::rules::RuleContext;
use super::{MAX_REF_FINDINGS, MAX_VALUE, NS_XSI};
use crate::mets::reader::{Element, NS_METS, NS_PREMIS2, NS_PREMIS3, Pos};

/// The PREMIS elements whose text a rule reads.
const VALUE_ELEMENTS: &[&str] = &[
    "objectIdentifierValue",
    "messageDigestAlgorithm",
    "messageDigest",
    "size",
    "agentIdentifierValue",
    "eventType",
    "eventOutcome",
    "eventOutcomeDetailNote",
    "relationshipType",
    "relationshipSubType",
    "relatedObjectIdentifierValue",
    "linkingAgentIdentifierValue",
    "linkingObjectIdentifierValue",
];

/// The relationship being read.
#[derive(Default)]
struct Relation {
    kind: String,
    subtype: String,
    related: String,
}

/// The PREMIS object being read: its number in document order and its facts so far.
#[derive(Default)]
struct ObjectFacts {
    seq: i64,
    id: Option<String>,
    algorithm: String,
    digest: String,
    /// Its first fixity's digest was read: later fixities are not compared with CHECKSUM.
    has_digest: bool,
    size: Option<String>,
    relation: Option<Relation>,
    /// A bitstream (`xsi:type` bitstream).
    bitstream: bool,
    /// It has a `dependency` / `is required by` relationship. A bitstream that has one is a
    /// payload a revisit needs, stored elsewhere: it does not describe the `<file>` whose
    /// ADMID names its section, and is kept out of that comparison (P5.1); any other object
    /// is compared, whatever its type says.
    required_by: bool,
}

/// The PREMIS event being read.
#[derive(Default)]
struct EventFacts {
    seq: i64,
    event_type: String,
    outcome: String,
    /// How many objects it links, and the first.
    objects: u64,
    first_object: Option<String>,
    /// The outcome detail notes, joined.
    detail: String,
    at: Pos,
}

/// What the PREMIS rules know of the document so far.
#[derive(Default)]
pub(super) struct PremisSections {
    /// The amdSec and MD section (techMD, digiprovMD...) being read.
    amd_current: Option<String>,
    md_current: Option<String>,
    object: Option<ObjectFacts>,
    event: Option<EventFacts>,
    /// The first PREMIS 2 and PREMIS 3 elements of the document: which bundle checks it, and
    /// whether it is written in the PREMIS of its profile.
    premis2_at: Option<Pos>,
    premis3_at: Option<Pos>,
}

/// True for an element of either PREMIS namespace.
fn in_premis(ns: &str) -> bool {
    ns == NS_PREMIS3 || ns == NS_PREMIS2
}

impl PremisSections {
    /// Where the first PREMIS 2 element is, when there is one.
    pub fn premis2_at(&self) -> Option<Pos> {
        self.premis2_at
    }

    /// Returns true when the element's text is wanted at its end.
    pub fn start(&mut self, cx: &mut RuleContext, e: &Element, at: Pos) -> bool {
        let local = e.local.as_str();
        if e.ns == NS_METS {
            match local {
                "amdSec" => self.amd_current = e.attr("ID").map(str::to_string),
                "techMD" | "digiprovMD" | "rightsMD" | "sourceMD" => {
                    self.md_current = e.attr("ID").map(str::to_string)
                }
                _ => {}
            }
            return false;
        }
        if !in_premis(&e.ns) {
            return false;
        }
        let first = if e.ns == NS_PREMIS2 { &mut self.premis2_at } else { &mut self.premis3_at };
        first.get_or_insert(at);
        let mut seq = || cx.xref().map_or(0, Crossrefs::next_seq);
        match local {
            "object" => {
                let kind = e.attr_ns(NS_XSI, "type").unwrap_or_default();
                let bitstream = kind.rsplit(':').next() == Some("bitstream");
                self.object = Some(ObjectFacts { seq: seq(), bitstream, ..Default::default() })
            }
            "relationship" => {
                if let Some(o) = self.object.as_mut() {
                    o.relation = Some(Relation::default());
                }
            }
            "event" => self.event = Some(EventFacts { seq: seq(), at, ..EventFacts::default() }),
            _ => return VALUE_ELEMENTS.contains(&local),
        }
        false
    }

    pub fn end(&mut self, cx: &mut RuleContext, ns: &str, local: &str, text: &str) {
        if ns == NS_METS {
            match local {
                "amdSec" => self.amd_current = None,
                "techMD" | "digiprovMD" | "rightsMD" | "sourceMD" => self.md_current = None,
                _ => {}
            }
            return;
        }
        if !in_premis(ns) {
            return;
        }
        let text = text.to_string();
        let Some(text) = self.object_part(local, text) else { return };
        match local {
            "relationshipType" | "relationshipSubType" | "relatedObjectIdentifierValue" => {
                // The last relationship's, as they were read (a relationship's parts after
                // its end, in a hostile document, amend it).
                if let Some(r) = self.object.as_mut().and_then(|o| o.relation.as_mut()) {
                    match local {
                        "relationshipType" => r.kind = text,
                        "relationshipSubType" => r.subtype = text,
                        _ => r.related = text,
                    }
                }
            }
            "object" => self.end_object(cx),
            "agentIdentifierValue" if self.event.is_none() => {
                if let Some(x) = cx.xref() {
                    x.agent(&text);
                }
            }
            _ => self.end_event_part(cx, local, text),
        }
    }

    /// A fact of the object being read: its identifier (the first), fixity or size. Gives the
    /// text back when `local` is none of these or no object is open.
    fn object_part(&mut self, local: &str, text: String) -> Option<String> {
        let Some(o) = self.object.as_mut() else { return Some(text) };
        match local {
            "objectIdentifierValue" => {
                o.id.get_or_insert(text);
            }
            // The first fixity is the one the METS CHECKSUM repeats (webaip states a
            // container's SHA-256 in a second one).
            "messageDigest" if !o.has_digest => {
                o.digest = text;
                o.has_digest = true;
            }
            "messageDigestAlgorithm" if !o.has_digest => o.algorithm = text,
            "messageDigest" | "messageDigestAlgorithm" => {}
            "size" => o.size = Some(text),
            _ => return Some(text),
        }
        None
    }

    /// The end of a PREMIS object: it is stored, found by its identifier and by the amdSec and
    /// MD section holding it (the first of each keeps the key), with its last relationship.
    fn end_object(&mut self, cx: &mut RuleContext) {
        let Some(mut o) = self.object.take() else { return };
        end_relationship(cx, &mut o);
        let payload_elsewhere = o.bitstream && o.required_by;
        let Some(x) = cx.xref() else { return };
        x.object(&PremisObjectEntry {
            seq: o.seq,
            id: o.id.as_deref().unwrap_or(""),
            algorithm: &o.algorithm,
            digest: &o.digest,
            size: o.size.as_deref(),
            amd: self.amd_current.as_deref().filter(|_| !payload_elsewhere),
            md: self.md_current.as_deref().filter(|_| !payload_elsewhere),
        });
    }

    /// The end of an element inside a PREMIS event (or of the event), or of a relationship.
    fn end_event_part(&mut self, cx: &mut RuleContext, local: &str, text: String) {
        if local == "relationship" {
            if let Some(o) = self.object.as_mut() {
                end_relationship(cx, o);
            }
            return;
        }
        let Some(e) = self.event.as_mut() else { return };
        match local {
            // Gathered to MAX_VALUE: the notes of one event are never longer in a package.
            "eventOutcomeDetailNote" if e.detail.len() + text.len() + 2 <= MAX_VALUE => {
                if !e.detail.is_empty() {
                    e.detail.push_str("; ");
                }
                e.detail.push_str(&text);
            }
            "eventType" => e.event_type = text,
            "eventOutcome" => e.outcome = text,
            "linkingAgentIdentifierValue" => {
                if let Some(x) = cx.xref() {
                    x.event_agent(e.seq, &text);
                }
            }
            "linkingObjectIdentifierValue" => {
                e.objects += 1;
                if let Some(x) = cx.xref() {
                    x.event_object(e.seq, &text);
                }
                e.first_object.get_or_insert(text);
            }
            "event" => self.end_event(cx),
            _ => {}
        }
    }

    /// The end of a PREMIS event: it is stored, and what it alone says is checked.
    fn end_event(&mut self, cx: &mut RuleContext) {
        let Some(e) = self.event.take() else { return };
        let is_virus_check = e.event_type == cx.profile.events.virus_check.term;
        if let Some(x) = cx.xref() {
            x.event(&StoredEvent {
                seq: e.seq,
                event_type: &e.event_type,
                outcome: &e.outcome,
                // The detail is quoted by the virus-check findings only.
                detail: if is_virus_check { &e.detail } else { "" },
                amd: self.amd_current.as_deref(),
                at: e.at,
            });
        }
        if is_virus_check && e.outcome == cx.profile.virus_outcomes.not_scanned {
            let what = match (&e.first_object, e.objects) {
                (Some(one), 1) => one.clone(),
                (_, many) => format!("{many} objects"),
            };
            let message = format!("{what}: virus check outcome {:?}: {}", e.outcome, e.detail);
            cx.notice("P5.5", "event", e.at, message);
        }
        check_outcome(cx, &e);
    }

    /// P5: the profile says which PREMIS its packages are written in.
    pub fn check_version(&self, cx: &mut RuleContext) {
        for (major, ns, at) in
            [('2', NS_PREMIS2, self.premis2_at), ('3', NS_PREMIS3, self.premis3_at)]
        {
            if let Some(at) = at
                && cx.profile.premis_major() != Some(major)
            {
                let v = &cx.profile.premis_version;
                let what = format!("PREMIS {major} ({ns}); expected PREMIS {v}");
                cx.profile_rule("P5", "premis", at, what);
            }
        }
    }
}

/// The relationship being read is complete: it is stored.
fn end_relationship(cx: &mut RuleContext, o: &mut ObjectFacts) {
    let Some(r) = o.relation.take() else { return };
    o.required_by |= r.kind == "dependency" && r.subtype == "is required by";
    if let Some(x) = cx.xref() {
        x.relation(o.seq, [r.kind.as_str(), &r.subtype, &r.related]);
    }
}

/// P5.5-P5.7: an outcome from the profile's vocabulary for the event's type.
fn check_outcome(cx: &mut RuleContext, e: &EventFacts) {
    let events = &cx.profile.events;
    let Some(t) = events.by_term(&e.event_type) else { return };
    if t.outcomes.contains(&e.outcome) {
        return;
    }
    let rule = if *t == events.virus_check {
        "P5.5"
    } else if *t == events.migration {
        "P5.6"
    } else {
        "P5.7"
    };
    let allowed = t.outcomes.join("\", \"");
    let (outcome, event_type) = (&e.outcome, &e.event_type);
    let message = format!("outcome {outcome:?} of {event_type:?}; expected one of \"{allowed}\"");
    cx.profile_rule(rule, "event", e.at, message);
}

/// P5.3: every event links described objects and agents: a rule of the profile, not of
/// PREMIS, which lets an event link an agent or object described elsewhere.
pub(super) fn check_event_links(cx: &mut RuleContext, x: &Crossrefs) -> Result<(), CrossrefError> {
    // Listed to a bound, the rest counted: a million links to an agent nothing describes
    // made a million findings (312 MB), as wrong references did.
    let mut unlisted = 0u64;
    let mut last = None;
    x.undescribed_event_links(|what, event_type, id, at| {
        let what = format!("event {event_type:?} links {what} {id:?}, which is not described");
        if cx.findings.len() < MAX_REF_FINDINGS {
            cx.profile_rule("P5.3", "event", at, what);
        } else {
            unlisted += 1;
            last = Some((at, what));
        }
    })?;
    if let Some((at, what)) = last {
        let message = format!(
            "{unlisted} more event links to entities no PREMIS entity describes (not listed past {MAX_REF_FINDINGS} findings; the last, here: {what})"
        );
        cx.profile_rule("P5.3", "event", at, message);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::checker::tests::{findings_of, package, rules_of};

    #[test]
    fn a_valid_document_has_no_premis_finding() {
        let found = findings_of(&package(""));
        assert!(rules_of(&found, &["P5", "P5.3", "P5.5", "P5.6", "P5.7"]).is_empty(), "{found:?}");
    }

    #[test]
    fn an_outcome_outside_the_vocabulary_and_an_unscanned_container_are_reported() {
        let doc = package("").replace(
            "<premis:eventOutcome>no virus detected</premis:eventOutcome>",
            "<premis:eventOutcome>not scanned</premis:eventOutcome></premis:eventOutcomeInformation><premis:eventOutcomeInformation><premis:eventOutcomeDetail><premis:eventOutcomeDetailNote>clamd down</premis:eventOutcomeDetailNote></premis:eventOutcomeDetail>",
        );
        let found = findings_of(&doc);
        let p55 = rules_of(&found, &["P5.5"]);
        assert_eq!(p55.len(), 1, "{found:?}");
        assert_eq!(p55[0].message, "obj-1: virus check outcome \"not scanned\": clamd down");
        let odd = findings_of(&package("").replace(">no virus detected<", ">fine<"));
        let p55 = rules_of(&odd, &["P5.5"]);
        assert!(
            p55[0].message.starts_with(
                "outcome \"fine\" of \"virus check\"; expected one of \"no virus detected\", "
            ),
            "{odd:?}"
        );
    }

    #[test]
    fn an_event_linking_an_undescribed_agent_breaks_p5_3() {
        let doc = package("").replace(
            "<premis:linkingAgentIdentifierValue>agent-1<",
            "<premis:linkingAgentIdentifierValue>agent-2<",
        );
        let found = findings_of(&doc);
        let p53 = rules_of(&found, &["P5.3"]);
        assert_eq!(p53.len(), 1, "{found:?}");
        assert!(
            p53[0].message.starts_with(
                "event \"virus check\" links agent \"agent-2\", which is not described"
            ),
            "{found:?}"
        );
    }

    #[test]
    fn premis_2_under_a_premis_3_profile_breaks_p5() {
        let doc = package("").replace("http://www.loc.gov/premis/v3", "info:lc/xmlns/premis-v2");
        let found = findings_of(&doc);
        let p5 = rules_of(&found, &["P5"]);
        assert_eq!(p5.len(), 1, "{found:?}");
        assert!(
            p5[0].message.starts_with("PREMIS 2 (info:lc/xmlns/premis-v2); expected PREMIS 3.0")
        );
    }
}
