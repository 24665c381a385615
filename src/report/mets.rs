//! What a package's METS says of it, read for the report in one streaming pass: the header,
//! the descriptive sections (the website's and each described webpage's title, capture dates
//! and URL), the logical structure map, the PREMIS events, agents and file objects.
//!
//! Every text is bounded ([`MAX_TEXT`]) and so is every list ([`MAX_LISTED`]): a hostile METS
//! of a million events costs a count, not a million entries; what is not listed is counted.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Serialize;

use crate::mets::reader::{Element, Event, MetsError, MetsReader, NS_METS, NS_PREMIS2, NS_PREMIS3};

/// Longest text kept of one element (longer ones are cut, marked with an ellipsis).
pub(crate) const MAX_TEXT: usize = 4096;
/// Most entries kept of one list (events, agents, pages, objects); the rest are counted.
pub(crate) const MAX_LISTED: usize = 5000;

/// One PREMIS event as the METS states it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct EventFact {
    /// `eventType`.
    pub event_type: String,
    /// `eventDateTime`, as written.
    pub date: String,
    /// `eventDetail`.
    pub detail: String,
    /// `eventOutcome`.
    pub outcome: String,
    /// Each `eventOutcomeDetailNote`.
    pub notes: Vec<String>,
    /// The linking agents: identifier value and role.
    pub agents: Vec<AgentLink>,
    /// How many objects the event links to.
    pub objects: u64,
}

/// An agent an event names, and in what role.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct AgentLink {
    /// `linkingAgentIdentifierValue`.
    pub id: String,
    /// `linkingAgentRole`.
    pub role: String,
}

/// One PREMIS agent.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct AgentFact {
    /// `agentIdentifierValue`.
    pub id: String,
    /// `agentName`.
    pub name: String,
    /// `agentType`.
    pub kind: String,
    /// `agentVersion`.
    pub version: String,
}

/// One agent of the METS header (`metsHdr/agent`).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct HeaderAgent {
    /// `ROLE`.
    pub role: String,
    /// `TYPE`, or `OTHERTYPE` when `TYPE` is `OTHER`.
    pub kind: String,
    /// `name`.
    pub name: String,
}

/// A PREMIS file object: a file of the package, or one it was made from (an ARC).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ObjectFact {
    /// `objectIdentifierValue` (the first).
    pub id: String,
    /// `size`, when stated and a number.
    pub size: Option<u64>,
    /// `formatName`.
    pub format: String,
    /// `formatRegistryKey` (a PRONOM identifier for webaip's packages).
    pub puid: String,
    /// The "WARC records" significant property, when stated and a number.
    pub warc_records: Option<u64>,
    /// Relationship `type/subtype` and the related identifier, in document order.
    pub relationships: Vec<RelationshipFact>,
}

/// A PREMIS relationship of an object.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct RelationshipFact {
    /// `relationshipType`.
    pub kind: String,
    /// `relationshipSubType`.
    pub subtype: String,
    /// `relatedObjectIdentifierValue`.
    pub related: String,
}

/// A descriptive section (MODS or Dublin Core) as far as the report uses it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Description {
    /// The first title.
    pub title: String,
    /// Capture dates: `(point, date)`, the point empty when not stated.
    pub captured: Vec<(String, String)>,
    /// The primary URL (else the first one).
    pub url: String,
    /// The declared MIME type (`internetMediaType`).
    pub mime: String,
    /// `dc:source`: where the harvest came from.
    pub source: String,
}

/// A `div` of the logical structure map.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct LogicalDiv {
    /// `TYPE` (WEBSITE, WEBPAGE, ASSOCIATEDOBJECT in webaip's packages).
    pub kind: String,
    /// `LABEL`.
    pub label: String,
    /// `DMDID`, split.
    pub dmd: Vec<String>,
}

/// Everything read from the METS.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MetsFacts {
    /// `OBJID`.
    pub objid: String,
    /// `TYPE` (sSIP, AIP, ...).
    pub package_type: String,
    /// `PROFILE`.
    pub profile: String,
    /// `LABEL`.
    pub label: String,
    /// `metsHdr/@CREATEDATE`.
    pub created: String,
    /// `metsHdr/@LASTMODDATE`.
    pub modified: String,
    /// The header's agents.
    pub header_agents: Vec<HeaderAgent>,
    /// The descriptive sections by ID.
    pub descriptions: BTreeMap<String, Description>,
    /// The logical structure map's divisions, in order.
    pub logical: Vec<LogicalDiv>,
    /// The PREMIS events, in document order.
    pub events: Vec<EventFact>,
    /// The PREMIS agents.
    pub agents: Vec<AgentFact>,
    /// The PREMIS file objects.
    pub objects: Vec<ObjectFact>,
    /// Every event counted by type, whether listed or not (at most 256 types told apart).
    pub event_types: BTreeMap<String, EventTypeTally>,
    /// The `format identification` events, in document order, whether listed or not (at most
    /// [`MAX_IDENTIFICATIONS`]; the rest counted in `not_listed`): each has its scope (an
    /// AIP holds its packaging's, over every payload, and its ingest's, over the described
    /// bytestreams).
    pub identifications: Vec<EventFact>,
    /// What every PREMIS object states, summed whether listed or not.
    pub object_totals: ObjectTotals,
    /// The fileSec's top-level files by the first folder of their location (`content`,
    /// `logs`, ...; `(elsewhere)` for a URL, `(no location)` for a file without one).
    pub folders: BTreeMap<String, FolderCount>,
    /// The package's own logs of quirks and anomalies (`logs/webaip/*.json`), as listed.
    pub quirk_logs: Vec<String>,
    /// Entries of the lists above left out by the bound, by list.
    pub not_listed: BTreeMap<&'static str, u64>,
    /// Sums that passed the largest number held (2^64 - 1; a hostile METS's `SIZE`s or record
    /// counts) and are held there, so "at least": `bytes`, `records`.
    pub sums_capped: std::collections::BTreeSet<&'static str>,
}

/// The events of one type: how many, their outcomes, the last one.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EventTypeTally {
    /// Events of the type.
    pub count: u64,
    /// By outcome (at most 32 outcomes told apart; the rest under `(other)`).
    pub outcomes: BTreeMap<String, u64>,
    /// The last in document order.
    pub last: EventFact,
}

/// Sums over every PREMIS object of the METS.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ObjectTotals {
    /// Objects.
    pub objects: u64,
    /// Sum of the "WARC records" significant properties stated.
    pub warc_records: u64,
    /// `derivation` / `migration` relationships (one per file migrated from).
    pub migrations: u64,
    /// The OBJIDs of `dependency` / `requires` relationships (at most 1,000 kept).
    pub requires: std::collections::BTreeSet<String>,
    /// `requires` relationships past those kept.
    pub requires_not_listed: u64,
    /// Objects by format (`PUID (name)`; at most 256 formats told apart).
    pub formats: BTreeMap<String, u64>,
}

/// Most event types, outcomes of a type, and formats told apart.
const MAX_TYPES: usize = 256;
const MAX_OUTCOMES: usize = 32;
const MAX_REQUIRED: usize = 1000;
/// Most `format identification` events kept apart from the listing.
pub(crate) const MAX_IDENTIFICATIONS: usize = 64;

/// Adds 1 to `key` in `map`, or to `(other)` once `max` keys are held.
fn count_bounded(map: &mut BTreeMap<String, u64>, key: &str, max: usize) {
    let key = if map.contains_key(key) || map.len() < max { key } else { "(other)" };
    *map.entry(key.to_string()).or_default() += 1;
}

/// Adds `n` to `sum`, held at `u64::MAX` when it would pass it; true when it would.
pub(crate) fn add_capped(sum: &mut u64, n: u64) -> bool {
    let (added, passed) = sum.overflowing_add(n);
    *sum = if passed { u64::MAX } else { added };
    passed
}

impl ObjectTotals {
    /// Counts an object; true when the records stated pass what a sum holds.
    fn add(&mut self, o: &ObjectFact) -> bool {
        self.objects += 1;
        let capped = add_capped(&mut self.warc_records, o.warc_records.unwrap_or(0));
        for r in &o.relationships {
            match (r.kind.as_str(), r.subtype.as_str()) {
                ("derivation", "migration") => self.migrations += 1,
                ("dependency", "requires") if self.requires.len() < MAX_REQUIRED => {
                    self.requires.insert(r.related.clone());
                }
                ("dependency", "requires") if !self.requires.contains(&r.related) => {
                    self.requires_not_listed += 1
                }
                _ => {}
            }
        }
        let format = match (o.puid.is_empty(), o.format.is_empty()) {
            (false, false) => format!("{} ({})", o.puid, o.format),
            (false, true) => o.puid.clone(),
            (true, false) => o.format.clone(),
            (true, true) => "(not stated)".into(),
        };
        count_bounded(&mut self.formats, &format, MAX_TYPES);
        capped
    }
}

/// Counts an event in its type's tally.
fn tally_event(types: &mut BTreeMap<String, EventTypeTally>, e: &EventFact) {
    let key = if types.contains_key(&e.event_type) || types.len() < MAX_TYPES {
        e.event_type.clone()
    } else {
        "(other)".into()
    };
    let t = types.entry(key).or_default();
    t.count += 1;
    count_bounded(&mut t.outcomes, &e.outcome, MAX_OUTCOMES);
    t.last = e.clone();
}

/// Files of one folder of the fileSec.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct FolderCount {
    /// Top-level `<file>`s.
    pub files: u64,
    /// Sum of their `SIZE`s.
    pub bytes: u64,
    /// Of them, without a `SIZE`.
    pub without_size: u64,
}

/// A top-level `<file>` being read: its size and first location.
#[derive(Debug, Default)]
struct FileSeen {
    size: Option<u64>,
    href: Option<String>,
}

/// What is being read: the innermost element that collects texts.
#[derive(Debug)]
enum Collecting {
    Nothing,
    HeaderAgent(HeaderAgent),
    Description(String, Description),
    Event(EventFact),
    Agent(AgentFact),
    Object(Box<ObjectWalk>),
}

/// A PREMIS object being read: the object, its relationship and significant property open.
#[derive(Debug, Default)]
struct ObjectWalk {
    object: ObjectFact,
    relationship: RelationshipFact,
    property: String,
}

/// Reads the facts of the METS that `reader` streams. Refusals of a lenient reader (an entity,
/// a DOCTYPE) are passed over: the report's validation names them.
pub(crate) fn read_mets_facts<R: BufRead>(
    mut reader: MetsReader<R>,
) -> Result<MetsFacts, MetsError> {
    let mut facts = MetsFacts::default();
    let mut walk = Walk::default();
    while let Some(event) = reader.next()? {
        match event {
            Event::Start(e, _) => walk.start(&e, &mut facts),
            Event::Empty(e, _) => {
                walk.start(&e, &mut facts);
                walk.end(&e.ns, &e.local, &mut facts);
            }
            Event::End { ns, local, .. } => walk.end(&ns, &local, &mut facts),
            Event::Text(t, _) => walk.text(&t),
            Event::Refused(..) => {}
        }
    }
    Ok(facts)
}

fn is_premis(ns: &str) -> bool {
    ns == NS_PREMIS3 || ns == NS_PREMIS2
}

/// The reading state: what is collected, the text of the element open, and where.
#[derive(Debug)]
struct Walk {
    collecting: Collecting,
    /// Depth of the element that started `collecting`.
    depth: usize,
    /// Elements open.
    open: usize,
    /// Text of the innermost element, bounded.
    text: String,
    /// Attributes of the innermost element that matter (`point`, `usage`).
    point: String,
    usage: String,
    in_logical_map: bool,
    /// `mets:file` elements open (nested files are records and bytestreams of the first).
    files_open: usize,
    file: FileSeen,
}

impl Default for Walk {
    fn default() -> Self {
        Walk {
            collecting: Collecting::Nothing,
            depth: 0,
            open: 0,
            text: String::new(),
            point: String::new(),
            usage: String::new(),
            in_logical_map: false,
            files_open: 0,
            file: FileSeen::default(),
        }
    }
}

/// `text` cut to [`MAX_TEXT`] bytes at a character boundary, an ellipsis marking the cut.
fn bounded(text: String) -> String {
    crate::layout::cut_marked(text, MAX_TEXT, "…")
}

fn push_bounded<T>(
    list: &mut Vec<T>,
    item: T,
    name: &'static str,
    not_listed: &mut BTreeMap<&'static str, u64>,
) {
    if list.len() < MAX_LISTED {
        list.push(item);
    } else {
        *not_listed.entry(name).or_default() += 1;
    }
}

impl Walk {
    fn start(&mut self, e: &Element, facts: &mut MetsFacts) {
        self.open += 1;
        self.text.clear();
        self.point = e.attr("point").unwrap_or_default().to_string();
        self.usage = e.attr("usage").unwrap_or_default().to_string();
        if e.ns == NS_METS {
            self.start_mets(e, facts);
        } else if is_premis(&e.ns) && matches!(self.collecting, Collecting::Nothing) {
            self.collecting = match e.local.as_str() {
                "event" => Collecting::Event(EventFact::default()),
                "agent" => Collecting::Agent(AgentFact::default()),
                "object" => Collecting::Object(Box::default()),
                _ => return,
            };
            self.depth = self.open;
        }
    }

    fn start_mets(&mut self, e: &Element, facts: &mut MetsFacts) {
        let attr = |n: &str| e.attr(n).unwrap_or_default().to_string();
        match e.local.as_str() {
            "mets" if self.open == 1 => {
                facts.objid = attr("OBJID");
                facts.package_type = attr("TYPE");
                facts.profile = attr("PROFILE");
                facts.label = attr("LABEL");
            }
            "metsHdr" => {
                facts.created = attr("CREATEDATE");
                facts.modified = attr("LASTMODDATE");
            }
            "agent" if matches!(self.collecting, Collecting::Nothing) => {
                let kind = match e.attr("TYPE") {
                    Some("OTHER") => attr("OTHERTYPE"),
                    _ => attr("TYPE"),
                };
                self.collecting = Collecting::HeaderAgent(HeaderAgent {
                    role: attr("ROLE"),
                    kind,
                    name: String::new(),
                });
                self.depth = self.open;
            }
            "dmdSec" if matches!(self.collecting, Collecting::Nothing) => {
                self.collecting = Collecting::Description(attr("ID"), Description::default());
                self.depth = self.open;
            }
            "structMap" => {
                self.in_logical_map =
                    e.attr("TYPE").is_some_and(|t| t.eq_ignore_ascii_case("logical"));
            }
            "file" => {
                if self.files_open == 0 {
                    self.file =
                        FileSeen { size: e.attr("SIZE").and_then(|v| v.parse().ok()), href: None };
                }
                self.files_open += 1;
            }
            "FLocat" if self.files_open == 1 && self.file.href.is_none() => {
                self.file.href = Some(e.href().unwrap_or_default().to_string());
            }
            "div" if self.in_logical_map => {
                let div = LogicalDiv {
                    kind: attr("TYPE"),
                    label: bounded(attr("LABEL")),
                    // A division names a few sections; a hostile one is not kept whole.
                    dmd: attr("DMDID").split_whitespace().take(16).map(str::to_string).collect(),
                };
                push_bounded(
                    &mut facts.logical,
                    div,
                    "structure map divisions",
                    &mut facts.not_listed,
                );
            }
            _ => {}
        }
    }

    fn text(&mut self, t: &str) {
        if matches!(self.collecting, Collecting::Nothing) || self.text.len() > MAX_TEXT {
            return;
        }
        self.text.push_str(t);
    }

    fn end(&mut self, ns: &str, local: &str, facts: &mut MetsFacts) {
        let text = bounded(std::mem::take(&mut self.text).trim().to_string());
        if ns == NS_METS && local == "structMap" {
            self.in_logical_map = false;
        }
        if ns == NS_METS && local == "file" {
            self.files_open = self.files_open.saturating_sub(1);
            if self.files_open == 0 {
                count_file(std::mem::take(&mut self.file), facts);
            }
        }
        self.take_text(ns, local, text);
        if self.open == self.depth && !matches!(self.collecting, Collecting::Nothing) {
            let done = std::mem::replace(&mut self.collecting, Collecting::Nothing);
            keep(done, facts);
        }
        self.open = self.open.saturating_sub(1);
    }

    /// Puts the text of the element ending (`local`) where the collected item keeps it.
    fn take_text(&mut self, ns: &str, local: &str, text: String) {
        if text.is_empty() {
            return;
        }
        let (point, usage) = (std::mem::take(&mut self.point), std::mem::take(&mut self.usage));
        match &mut self.collecting {
            Collecting::Nothing => {}
            Collecting::HeaderAgent(a) => {
                if ns == NS_METS && local == "name" && a.name.is_empty() {
                    a.name = text;
                }
            }
            Collecting::Description(_, d) => describe(d, local, text, &point, &usage),
            Collecting::Event(ev) => event_text(ev, local, text),
            Collecting::Agent(a) => agent_text(a, local, text),
            Collecting::Object(o) => object_text(o, local, text),
        }
    }
}

/// Counts a top-level file in its folder; keeps the name of a quirk log.
fn count_file(file: FileSeen, facts: &mut MetsFacts) {
    let folder = match file.href.as_deref() {
        None | Some("") => "(no location)".to_string(),
        Some(h) if crate::layout::uri_scheme(h).is_some() => "(elsewhere)".to_string(),
        Some(h) => match crate::layout::confined_name(h) {
            Ok(name) => {
                let is_log = name.starts_with("logs/webaip/") && name.ends_with(".json");
                if is_log {
                    push_bounded(
                        &mut facts.quirk_logs,
                        name.clone(),
                        "quirk logs",
                        &mut facts.not_listed,
                    );
                }
                name.split_once('/').map_or(".", |(dir, _)| dir).to_string()
            }
            Err(_) => "(outside the package)".to_string(),
        },
    };
    if facts.folders.len() >= 64 && !facts.folders.contains_key(&folder) {
        *facts.not_listed.entry("folders").or_default() += 1;
        return;
    }
    let count = facts.folders.entry(crate::layout::clip(&folder, 200)).or_default();
    count.files += 1;
    count.without_size += u64::from(file.size.is_none());
    if add_capped(&mut count.bytes, file.size.unwrap_or(0)) {
        facts.sums_capped.insert("bytes");
    }
}

/// Files a finished item in the facts.
fn keep(done: Collecting, facts: &mut MetsFacts) {
    let n = &mut facts.not_listed;
    match done {
        Collecting::Nothing => {}
        Collecting::HeaderAgent(a) => push_bounded(&mut facts.header_agents, a, "header agents", n),
        Collecting::Description(id, d) => {
            if facts.descriptions.len() < MAX_LISTED {
                facts.descriptions.insert(id, d);
            } else {
                *n.entry("descriptive sections").or_default() += 1;
            }
        }
        Collecting::Event(e) => {
            tally_event(&mut facts.event_types, &e);
            if e.event_type == "format identification" {
                if facts.identifications.len() < MAX_IDENTIFICATIONS {
                    facts.identifications.push(e.clone());
                } else {
                    *n.entry("identification events").or_default() += 1;
                }
            }
            push_bounded(&mut facts.events, e, "events", n)
        }
        Collecting::Agent(a) => push_bounded(&mut facts.agents, a, "agents", n),
        Collecting::Object(o) => {
            if facts.object_totals.add(&o.object) {
                facts.sums_capped.insert("records");
            }
            push_bounded(&mut facts.objects, o.object, "objects", n)
        }
    }
}

fn set_first(field: &mut String, text: String) {
    if field.is_empty() {
        *field = text;
    }
}

fn describe(d: &mut Description, local: &str, text: String, point: &str, usage: &str) {
    match local {
        "title" => set_first(&mut d.title, text),
        "dateCaptured" if d.captured.len() < 16 => d.captured.push((point.to_string(), text)),
        // `dc:identifier` holds the URL in a Dublin Core section; MODS has `location/url`.
        "url" | "identifier"
            if (d.url.is_empty() || usage == "primary")
                && (local == "url" || text.contains("://")) =>
        {
            d.url = text;
        }
        "internetMediaType" => set_first(&mut d.mime, text),
        "source" => set_first(&mut d.source, text),
        _ => {}
    }
}

fn event_text(ev: &mut EventFact, local: &str, text: String) {
    match local {
        "eventType" => ev.event_type = text,
        "eventDateTime" => ev.date = text,
        "eventDetail" => set_first(&mut ev.detail, text),
        "eventOutcome" => set_first(&mut ev.outcome, text),
        "eventOutcomeDetailNote" if ev.notes.len() < 16 => ev.notes.push(text),
        "linkingAgentIdentifierValue" if ev.agents.len() < 16 => {
            ev.agents.push(AgentLink { id: text, role: String::new() })
        }
        "linkingAgentRole" => {
            if let Some(last) = ev.agents.last_mut() {
                last.role = text;
            }
        }
        "linkingObjectIdentifierValue" => ev.objects += 1,
        _ => {}
    }
}

fn agent_text(a: &mut AgentFact, local: &str, text: String) {
    match local {
        "agentIdentifierValue" => set_first(&mut a.id, text),
        "agentName" => set_first(&mut a.name, text),
        "agentType" => set_first(&mut a.kind, text),
        "agentVersion" => set_first(&mut a.version, text),
        _ => {}
    }
}

fn object_text(w: &mut ObjectWalk, local: &str, text: String) {
    let (o, rel) = (&mut w.object, &mut w.relationship);
    match local {
        "objectIdentifierValue" => set_first(&mut o.id, text),
        "size" => o.size = o.size.or(text.parse().ok()),
        "formatName" => set_first(&mut o.format, text),
        "formatRegistryKey" => set_first(&mut o.puid, text),
        "significantPropertiesType" => w.property = text,
        "significantPropertiesValue" if w.property == crate::model::SIGNIFICANT_WARC_RECORDS => {
            o.warc_records = o.warc_records.or(text.parse().ok());
        }
        "relationshipType" => {
            *rel = RelationshipFact { kind: text, ..Default::default() };
        }
        "relationshipSubType" => rel.subtype = text,
        "relatedObjectIdentifierValue" if o.relationships.len() < 64 => {
            o.relationships.push(RelationshipFact { related: text, ..rel.clone() });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(xml: &str) -> MetsFacts {
        read_mets_facts(MetsReader::lenient(xml.as_bytes())).unwrap()
    }

    #[test]
    fn header_description_and_events_are_read() {
        let xml = r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:premis="http://www.loc.gov/premis/v3" xmlns:mods="http://www.loc.gov/mods/v3" OBJID="urn:x" TYPE="AIP" LABEL="Site">
<mets:metsHdr CREATEDATE="2024-01-01T00:00:00Z"><mets:agent ROLE="CREATOR" TYPE="OTHER" OTHERTYPE="SOFTWARE"><mets:name>webaip 1.0</mets:name></mets:agent></mets:metsHdr>
<mets:dmdSec ID="D1"><mets:mdWrap><mets:xmlData><mods:mods><mods:titleInfo><mods:title>A &amp; B</mods:title></mods:titleInfo>
<mods:originInfo><mods:dateCaptured point="start">2024-01-01</mods:dateCaptured><mods:dateCaptured point="end">2024-02-01</mods:dateCaptured></mods:originInfo>
<mods:location><mods:url>http://other/</mods:url><mods:url usage="primary">http://primary/</mods:url></mods:location></mods:mods></mets:xmlData></mets:mdWrap></mets:dmdSec>
<mets:amdSec><mets:digiprovMD><mets:mdWrap><mets:xmlData><premis:event><premis:eventType>virus check</premis:eventType><premis:eventDateTime>2024</premis:eventDateTime>
<premis:eventOutcomeInformation><premis:eventOutcome>pass</premis:eventOutcome><premis:eventOutcomeDetail><premis:eventOutcomeDetailNote>n1</premis:eventOutcomeDetailNote></premis:eventOutcomeDetail></premis:eventOutcomeInformation>
<premis:linkingAgentIdentifier><premis:linkingAgentIdentifierValue>clamav</premis:linkingAgentIdentifierValue><premis:linkingAgentRole>executing program</premis:linkingAgentRole></premis:linkingAgentIdentifier>
<premis:linkingObjectIdentifier><premis:linkingObjectIdentifierValue>a</premis:linkingObjectIdentifierValue></premis:linkingObjectIdentifier></premis:event></mets:xmlData></mets:mdWrap></mets:digiprovMD></mets:amdSec>
<mets:structMap TYPE="logical"><mets:div TYPE="WEBSITE" LABEL="Site" DMDID="D1"><mets:div TYPE="WEBPAGE" LABEL="P" DMDID="D2"/></mets:div></mets:structMap>
<mets:structMap TYPE="physical"><mets:div TYPE="Directory" LABEL="content"/></mets:structMap></mets:mets>"#;
        let f = facts(xml);
        assert_eq!(
            (f.objid.as_str(), f.package_type.as_str(), f.label.as_str()),
            ("urn:x", "AIP", "Site")
        );
        assert_eq!(f.header_agents[0].kind, "SOFTWARE");
        assert_eq!(f.header_agents[0].name, "webaip 1.0");
        let d = &f.descriptions["D1"];
        assert_eq!(d.title, "A & B");
        assert_eq!(d.url, "http://primary/");
        assert_eq!(d.captured[1], ("end".to_string(), "2024-02-01".to_string()));
        assert_eq!(f.events.len(), 1);
        let e = &f.events[0];
        assert_eq!(
            (e.event_type.as_str(), e.outcome.as_str(), e.objects),
            ("virus check", "pass", 1)
        );
        assert_eq!(
            e.agents[0],
            AgentLink { id: "clamav".into(), role: "executing program".into() }
        );
        assert_eq!(e.notes, vec!["n1".to_string()]);
        assert_eq!(f.folders.len(), 0);
        // The physical map's divisions are not the logical structure.
        assert_eq!(f.logical.len(), 2);
        assert_eq!(f.logical[1].dmd, vec!["D2".to_string()]);
    }

    #[test]
    fn top_level_files_are_counted_by_folder() {
        let xml = r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><mets:fileSec><mets:fileGrp>
<mets:file ID="a" SIZE="10"><mets:FLocat xlink:href="content/a.warc.gz"/><mets:file ID="r" SIZE="3"><mets:FLocat xlink:href="other/r"/></mets:file></mets:file>
<mets:file ID="b" SIZE="5"><mets:FLocat xlink:href="logs/webaip/a.migration.json"/></mets:file>
<mets:file ID="c"><mets:FLocat xlink:href="../escape"/></mets:file>
<mets:file ID="d" SIZE="1"><mets:FLocat xlink:href="http://x/y"/></mets:file><mets:file ID="e"/>
</mets:fileGrp></mets:fileSec></mets:mets>"#;
        let f = facts(xml);
        assert_eq!(f.folders["content"], FolderCount { files: 1, bytes: 10, without_size: 0 });
        assert_eq!(f.folders["logs"].files, 1);
        assert_eq!(f.folders["(outside the package)"].without_size, 1);
        assert_eq!(f.folders["(elsewhere)"].bytes, 1);
        assert_eq!(f.folders["(no location)"].files, 1);
        assert!(!f.folders.contains_key("other"), "a nested file is a record, not a file");
        assert_eq!(f.quirk_logs, vec!["logs/webaip/a.migration.json".to_string()]);
    }

    #[test]
    fn lists_and_texts_are_bounded() {
        let mut xml = String::from(
            r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:premis="http://www.loc.gov/premis/v3">"#,
        );
        for _ in 0..MAX_LISTED + 7 {
            xml.push_str("<premis:event><premis:eventType>x</premis:eventType></premis:event>");
        }
        xml.push_str(&format!(
            "<premis:agent><premis:agentName>{}</premis:agentName></premis:agent>",
            "n".repeat(3 * MAX_TEXT)
        ));
        xml.push_str("</mets:mets>");
        let f = facts(&xml);
        assert_eq!(f.events.len(), MAX_LISTED);
        assert_eq!(f.not_listed["events"], 7);
        assert_eq!(f.event_types["x"].count, MAX_LISTED as u64 + 7, "every event is counted");
        assert!(f.agents[0].name.len() <= MAX_TEXT + '…'.len_utf8());
        assert!(f.agents[0].name.ends_with('…'));
    }
}
