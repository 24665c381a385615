//! `webaip validate`: a METS document against the official schemas and the package profile.
//!
//! The first pass streams the document through `mets::reader::MetsReader` (which also
//! refuses DOCTYPEs, entity references and NULs, and gives every finding its line) and checks
//! what XML Schema cannot see:
//! unique IDs, IDREFs that resolve (to the right kind of element), byte ranges
//! (`BEGIN <= END`, `SIZE = END - BEGIN + 1`), checksum types, PREMIS fixity and size against
//! the `<file>` attributes, events that link existing objects and agents, outcomes from the
//! profile's vocabulary, and the profile's required sections. When the logical map has
//! curator entities (WEBPAGE and ASSOCIATEDOBJECT divs with descriptions), a bounded second
//! pass and a read of each pointed-at record's header check that the MODS URL is the record's
//! `WARC-Target-URI` (module `entities`). Last, the document is validated against the XSD bundle
//! (METS, PREMIS, MODS, DC, XLink, plus webaip's rights schema) in-process through libxml2,
//! non-recovering and without network. Every finding names the line, the element, the rule
//! (P-number) and what was expected.
//!
//! Which profile applies: `--profile`, else the one the root `PROFILE` attribute names, else
//! the default profile in advisory mode (its findings are warnings: the document does not
//! claim to follow it). Under a profile other than the default, how the document differs
//! from the default profile is reported as information.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::rc::Rc;

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::reader::{Element, Event, MetsError, MetsReader, Pos, Refusal};

use crate::profile::Profile;

mod entities;

use super::reader::{NS_METS, NS_MODS, NS_PREMIS2, NS_PREMIS3};
use crate::formats::warc::header::is_stateable_date;

/// Dates no WARC-Date or METS date can state reported one by one; the others are counted in
/// one finding.
const MAX_DATE_FINDINGS: u64 = 100;
const NS_RIGHTS: &str = super::descriptive::RIGHTS_NS;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// How the document differs from the default profile (under another profile).
    Info,
    /// A rule of a profile the document does not claim to follow.
    Warning,
    /// The document is invalid.
    Error,
}

impl std::fmt::Display for Severity {
    /// The lowercase name, as in the JSON reports.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// One thing found wrong (or different).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// How serious.
    pub severity: Severity,
    /// The rule: a PROFILE.md number (`P4.6`), `XSD`, `XML` or a METS/PREMIS check name.
    pub rule: String,
    /// Line in the document (1-based), when known.
    pub line: Option<u64>,
    /// The element concerned.
    pub element: String,
    /// What was expected and what was found.
    pub message: String,
}

/// Whether XML Schema validation ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum XsdStatus {
    /// Validated against this bundle.
    Validated {
        /// The wrapper schema used.
        bundle: PathBuf,
    },
    /// Not validated, and why.
    Skipped {
        /// The reason.
        reason: String,
    },
}

/// The result of validating one document.
#[derive(Debug, Clone, Serialize)]
pub struct ValidationReport {
    /// The document.
    pub file: PathBuf,
    /// The profile applied.
    pub profile: String,
    /// True when the profile's rules are requirements; false when advisory (warnings).
    pub profile_required: bool,
    /// XML Schema validation.
    pub xsd: XsdStatus,
    /// The findings, in document order.
    pub findings: Vec<Finding>,
    /// True when there is no error.
    pub valid: bool,
}

/// Options for [`validate_mets`].
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// Directory holding the schema bundle; `None` skips XSD validation.
    pub schemas: Option<PathBuf>,
    /// A profile to require; `None`: the one the document names, else the default, advisory.
    pub profile: Option<Profile>,
}

/// A document that could not be validated at all.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The document cannot be read.
    #[error("cannot read {}: {}", path.display(), crate::layout::describe_io(source))]
    Unreadable {
        /// The document.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The schema directory has no usable bundle.
    #[error("{0}")]
    Schemas(String),
}

/// Validates the METS document at `path`.
pub fn validate_mets(
    path: &Path,
    opts: &ValidateOptions,
) -> Result<ValidationReport, ValidateError> {
    let unreadable = |source| ValidateError::Unreadable { path: path.to_path_buf(), source };
    // A FIFO or device named as the METS would block or never end: only a regular file is read.
    let file = crate::layout::open_user_file(path).map_err(|e| match e {
        crate::layout::ConfineError::Io { source, .. } => unreadable(source),
        other => unreadable(io::Error::new(io::ErrorKind::InvalidInput, other)),
    })?;
    let mut checker = Checker::new(opts.profile.clone());
    checker.run(BufReader::with_capacity(256 * 1024, file));
    checker.finish();
    checker.check_entities(path);
    let profile = checker.profile.clone();
    let mut findings = std::mem::take(&mut checker.findings);
    if profile.name != crate::profile::DEFAULT_PROFILE && !checker.xml_error {
        // How the document differs from the current profile, as information.
        let mut compare = Checker::new(Some(Profile::default_profile()));
        compare.comparing = true;
        compare.run(BufReader::with_capacity(256 * 1024, File::open(path).map_err(unreadable)?));
        compare.finish();
        findings.extend(compare.findings.into_iter().filter(|f| f.severity == Severity::Info));
    }
    let xsd = match &opts.schemas {
        None => XsdStatus::Skipped {
            reason: "no schema directory given (--schemas or WEBAIP_SCHEMAS)".into(),
        },
        // libxml2 is not given what our reader could not read whole: a document that is not
        // well-formed says so above, and one with a 150 MB attribute would take libxml2's
        // memory and end in "status -1 without a diagnostic".
        Some(_) if checker.xml_error => XsdStatus::Skipped {
            reason: "the document could not be read to its end (see the XML error)".into(),
        },
        Some(dir) => {
            let bundle = dir.join(&profile.schema_bundle);
            if !bundle.is_file() {
                return Err(ValidateError::Schemas(format!(
                    "{}: no schema bundle {} there",
                    dir.display(),
                    profile.schema_bundle
                )));
            }
            match xsd::validate(path, dir, &bundle) {
                Ok(mut f) => {
                    findings.append(&mut f);
                    XsdStatus::Validated { bundle }
                }
                Err(reason) => XsdStatus::Skipped { reason },
            }
        }
    };
    findings.sort_by(|a, b| a.line.cmp(&b.line).then(b.severity.cmp(&a.severity)));
    findings.dedup();
    let valid = !findings.iter().any(|f| f.severity == Severity::Error);
    Ok(ValidationReport {
        file: path.to_path_buf(),
        profile: profile.name.clone(),
        profile_required: checker.required,
        xsd,
        findings,
        valid,
    })
}

#[derive(Default, Clone)]
struct ObjectFacts {
    id: String,
    algorithm: String,
    digest: String,
    size: Option<String>,
    /// (type, subtype, related object identifier).
    relationships: Vec<(String, String, String)>,
}

#[derive(Default)]
struct EventFacts {
    event_type: String,
    outcome: String,
    detail: String,
    agents: Vec<String>,
    objects: Vec<String>,
    offset: Pos,
}

#[derive(Default)]
struct FileFacts {
    element_offset: Pos,
    depth: usize,
    id: String,
    group: String,
    attrs: HashMap<String, String>,
    has_flocat: bool,
    transforms: Vec<String>,
}

/// What the streaming pass knows and checks.
struct Checker {
    explicit: Option<Profile>,
    profile: Profile,
    required: bool,
    /// Set when the checker only reports how a document differs from this profile.
    comparing: bool,
    findings: Vec<Finding>,
    stack: Vec<(String, String)>,
    /// Every ID, with the offset and kind of its element.
    ids: HashMap<String, (Pos, IdOwner)>,
    /// Every IDREF token: (attribute, token, element, offset, rule named when it fails).
    refs: Vec<(&'static str, String, String, Pos, &'static str)>,
    /// The curator entities of the logical map, checked against their MODS and records after
    /// the pass ([`entities`]); `entity_open` while inside one.
    entities: Vec<entities::EntityDiv>,
    entity_open: bool,
    root_seen: bool,
    mets_hdr: bool,
    dmd_types: Vec<String>,
    rights_mds: u64,
    rights_ext: Vec<(String, String, Pos)>,
    rights_current: Option<(String, String, Pos)>,
    file_sec: bool,
    groups: Vec<String>,
    current_group: String,
    struct_logical: bool,
    struct_physical: bool,
    /// The structMap being read.
    map: StructMapKind,
    /// Top-level `<file>` IDs with their offsets, and the FILEIDs the physical map points at.
    top_files: Vec<(String, Pos)>,
    physical_fptrs: HashSet<String>,
    website_div: bool,
    div_depth: usize,
    amd_current: Option<String>,
    md_current: Option<String>,
    /// PREMIS objects by the amdSec or MD section holding them (shared with `object_facts`:
    /// one copy of each object's facts, however many keys find it).
    amd_objects: HashMap<String, Rc<ObjectFacts>>,
    amd_event_types: HashMap<String, Vec<String>>,
    agents: HashSet<String>,
    events: Vec<EventFacts>,
    object: Option<ObjectFacts>,
    event: Option<EventFacts>,
    text: Option<String>,
    files: Vec<FileFacts>,
    /// Every `<file>` that points at an amdSec: (group, depth, ID, offset, ADMID tokens), for
    /// the PREMIS coherence checks that need the whole document.
    described_files: Vec<(String, usize, String, Pos, Vec<String>)>,
    /// PREMIS objects by identifier.
    object_facts: HashMap<String, Rc<ObjectFacts>>,
    xml_error: bool,
    /// Dates WARC and the METS cannot state (a year past 9999).
    bad_dates: u64,
}

impl Checker {
    fn new(explicit: Option<Profile>) -> Self {
        let required = explicit.is_some();
        Checker {
            profile: explicit.clone().unwrap_or_else(Profile::default_profile),
            explicit,
            required,
            comparing: false,
            findings: Vec::new(),
            stack: Vec::new(),
            ids: HashMap::new(),
            refs: Vec::new(),
            entities: Vec::new(),
            entity_open: false,
            root_seen: false,
            mets_hdr: false,
            dmd_types: Vec::new(),
            rights_mds: 0,
            rights_ext: Vec::new(),
            rights_current: None,
            bad_dates: 0,
            file_sec: false,
            groups: Vec::new(),
            current_group: String::new(),
            struct_logical: false,
            struct_physical: false,
            map: StructMapKind::None,
            top_files: Vec::new(),
            physical_fptrs: HashSet::new(),
            website_div: false,
            div_depth: 0,
            amd_current: None,
            md_current: None,
            amd_objects: HashMap::new(),
            amd_event_types: HashMap::new(),
            agents: HashSet::new(),
            events: Vec::new(),
            object: None,
            event: None,
            text: None,
            files: Vec::new(),
            described_files: Vec::new(),
            object_facts: HashMap::new(),
            xml_error: false,
        }
    }

    /// A METS/PREMIS-level error (always an error).
    fn error(&mut self, rule: &str, element: &str, at: Pos, message: String) {
        self.findings.push(Finding {
            severity: Severity::Error,
            rule: rule.into(),
            line: Some(at.line),
            element: element.into(),
            message,
        });
    }

    /// Something an auditor must know that is not a fault of the document.
    fn notice(&mut self, rule: &str, element: &str, at: Pos, message: String) {
        self.findings.push(Finding {
            severity: if self.comparing { Severity::Info } else { Severity::Warning },
            rule: rule.into(),
            line: Some(at.line),
            element: element.into(),
            message,
        });
    }

    /// A profile rule: an error when the profile is required, else a warning.
    fn profile_rule(&mut self, rule: &str, element: &str, at: Pos, message: String) {
        let severity = match (self.comparing, self.required) {
            (true, _) => Severity::Info,
            (false, true) => Severity::Error,
            (false, false) => Severity::Warning,
        };
        self.findings.push(Finding {
            severity,
            rule: rule.into(),
            line: Some(at.line),
            element: element.into(),
            message: format!("{} (profile {})", message, self.profile.name),
        });
    }

    /// P4.2: a file's FLocat is a relative path that stays inside the package. A URL is what
    /// profiles of packages kept elsewhere allow (`local_files = false`); an absolute path or a
    /// `..` segment never is.
    fn check_flocat(&mut self, href: &str, offset: Pos) {
        let is_url = href.contains("://") || href.starts_with("file:");
        if is_url {
            if self.profile.rules.local_files {
                self.profile_rule(
                    "P4.2",
                    "FLocat",
                    offset,
                    format!("href {href:?} is a URL; expected a relative path inside the package"),
                );
            }
            return;
        }
        if let Err(reason) = crate::layout::confined_name(href) {
            self.error(
                "P4.2",
                "FLocat",
                offset,
                format!("href {href:?} {reason}; expected a relative path inside the package"),
            );
        }
    }

    fn run(&mut self, input: impl BufRead) {
        let mut reader = MetsReader::lenient(input);
        loop {
            match reader.next() {
                Ok(Some(event)) => self.event(event),
                Ok(None) => break,
                Err(e) => {
                    self.xml_error = true;
                    let message = match &e {
                        MetsError::Xml { source, .. } => format!("not well-formed XML: {source}"),
                        MetsError::Refused { refusal, .. } => refusal.to_string(),
                    };
                    self.error("XML", "", e.pos(), message);
                    // A NUL before the point the parser stopped at is reported too.
                    if let Some(nul) = reader.first_nul() {
                        self.error("XML", "", nul, Refusal::Nul.to_string());
                    }
                    return;
                }
            }
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Start(e, at) => self.start(&e, at),
            Event::Empty(e, at) => {
                self.start(&e, at);
                self.end(&e.ns, &e.local, at);
            }
            Event::End { ns, local, pos } => self.end(&ns, &local, pos),
            Event::Text(t, _) => {
                if let Some(s) = self.text.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::Refused(r, at) => self.error("XML", "", at, r.to_string()),
        }
    }

    fn in_premis(ns: &str) -> bool {
        ns == NS_PREMIS3 || ns == NS_PREMIS2
    }

    /// Reports a date WARC and the METS cannot state (W3C-DTF, `xs:dateTime`: four-digit
    /// years): a capture dated `+10000-01-01T00:00:00Z` is no capture date.
    fn check_date(&mut self, element: &str, what: &str, value: &str, at: Pos) {
        if is_stateable_date(value.trim()) {
            return;
        }
        self.bad_dates += 1;
        if self.bad_dates <= MAX_DATE_FINDINGS {
            let shown: String = value.chars().take(64).collect();
            self.error(
                "DATE",
                element,
                at,
                format!(
                    "{what} {shown:?} is no date WARC or the METS can state (W3C-DTF or \
                     xs:dateTime with a four-digit year from 0001)"
                ),
            );
        }
    }

    fn start(&mut self, e: &Element, offset: Pos) {
        let (ns, local) = (e.ns.as_str(), e.local.as_str());
        let attr = |name: &str| e.attr(name).map(str::to_string);
        if ns == NS_METS {
            for name in ["CREATED", "CREATEDATE", "LASTMODDATE"] {
                if let Some(v) = e.attr(name) {
                    self.check_date(local, name, v, offset);
                }
            }
            if let Some(id) = attr("ID") {
                if let Some(&(first, _)) = self.ids.get(&id) {
                    self.error(
                        "METS-ID",
                        local,
                        offset,
                        format!("ID {id:?} is used twice (first at byte {})", first.offset),
                    );
                } else {
                    self.ids.insert(id, (offset, IdOwner::of(local)));
                }
            }
            // The logical map's references are the content model's (P2.2, P2.3).
            let logical = self.map == StructMapKind::Logical && matches!(local, "div" | "fptr");
            for name in ["ADMID", "DMDID", "FILEID"] {
                let rule = match name {
                    "DMDID" if logical => "P2.2",
                    "FILEID" if logical => "P2.3",
                    _ => "METS-IDREF",
                };
                if let Some(v) = attr(name) {
                    for token in v.split_whitespace() {
                        // A reference to an ID already seen is checked now (the first element
                        // with an ID keeps it): only forward references wait for the end, so
                        // a document's thousands of ADMIDs and FILEIDs are not all kept.
                        if self.ids.contains_key(token) {
                            self.check_ref(name, token, local, offset, rule);
                        } else {
                            self.refs.push((name, token.into(), local.into(), offset, rule));
                        }
                    }
                }
            }
        }
        if !self.root_seen {
            self.root_seen = true;
            self.root(e, offset);
        }
        let parent = self.stack.last().map(|(_, l)| l.clone()).unwrap_or_default();
        self.stack.push((ns.to_string(), local.to_string()));
        if ns == NS_METS {
            match local {
                "metsHdr" => self.mets_hdr = true,
                "mdWrap" if parent == "mdWrap" || self.stack.iter().any(|(_, l)| l == "dmdSec") => {
                    if let Some(t) = attr("MDTYPE") {
                        self.dmd_types.push(t);
                    }
                }
                "amdSec" => self.amd_current = attr("ID"),
                "techMD" | "digiprovMD" | "rightsMD" | "sourceMD" => {
                    self.md_current = attr("ID");
                    if local == "rightsMD" {
                        self.rights_mds += 1;
                    }
                }
                "fileSec" => self.file_sec = true,
                "fileGrp" => {
                    let u = attr("USE").unwrap_or_default();
                    if !self.profile.file_groups.all().contains(&u.as_str()) {
                        let expected = self.profile.file_groups.all().join(", ");
                        self.profile_rule(
                            "P4.1",
                            local,
                            offset,
                            format!("file group USE={u:?}; expected one of {expected}"),
                        );
                    }
                    self.groups.push(u.clone());
                    self.current_group = u;
                }
                "file" => self.start_file(e, offset),
                "FLocat" => {
                    if let Some(f) = self.files.last_mut() {
                        f.has_flocat = true;
                    }
                    if let Some(href) = e.href() {
                        self.check_flocat(href, offset);
                    }
                }
                "transformFile" => {
                    if let Some(f) = self.files.last_mut() {
                        f.transforms.push(attr("TRANSFORMALGORITHM").unwrap_or_default());
                    }
                }
                "structMap" => {
                    self.map = match attr("TYPE").as_deref() {
                        Some("logical") => {
                            self.struct_logical = true;
                            StructMapKind::Logical
                        }
                        Some("physical") => {
                            self.struct_physical = true;
                            StructMapKind::Physical
                        }
                        _ => StructMapKind::Other,
                    };
                }
                "fptr" if self.map == StructMapKind::Physical => {
                    if let Some(id) = attr("FILEID") {
                        self.physical_fptrs.insert(id);
                    }
                }
                "fptr" if self.entity_open && self.div_depth == 2 => {
                    if let (Some(id), Some(e)) = (attr("FILEID"), self.entities.last_mut()) {
                        e.fptrs.push(id);
                    }
                }
                "div" => self.start_div(e, offset),
                _ => {}
            }
        } else if Self::in_premis(ns) {
            match local {
                "object" => self.object = Some(ObjectFacts::default()),
                "relationship" => {
                    if let Some(o) = self.object.as_mut() {
                        o.relationships.push(Default::default());
                    }
                }
                "event" => self.event = Some(EventFacts { offset, ..EventFacts::default() }),
                "objectIdentifierValue"
                | "messageDigestAlgorithm"
                | "messageDigest"
                | "size"
                | "agentIdentifierValue"
                | "eventType"
                | "eventOutcome"
                | "eventOutcomeDetailNote"
                | "relationshipType"
                | "relationshipSubType"
                | "relatedObjectIdentifierValue"
                | "linkingAgentIdentifierValue"
                | "linkingObjectIdentifierValue" => self.text = Some(String::new()),
                _ => {}
            }
        } else if ns == NS_MODS
            && local == "dateCaptured"
            && e.attr("encoding").is_some_and(|v| v.eq_ignore_ascii_case("w3cdtf"))
        {
            // Only a date that says it is W3C-DTF is held to it (MODS knows other encodings).
            self.text = Some(String::new());
        } else if ns == NS_RIGHTS {
            match local {
                "rights" => self.rights_current = Some((String::new(), String::new(), offset)),
                "access" | "embargoUntil" => self.text = Some(String::new()),
                _ => {}
            }
        }
    }

    fn end(&mut self, ns: &str, local: &str, offset: Pos) {
        let text = self.text.take().unwrap_or_default();
        let text = text.trim().to_string();
        self.stack.pop();
        if ns == NS_METS {
            match local {
                "amdSec" => self.amd_current = None,
                "techMD" | "digiprovMD" | "rightsMD" | "sourceMD" => self.md_current = None,
                "file" => self.end_file(offset),
                "div" => {
                    if self.div_depth == 2 {
                        self.entity_open = false;
                    }
                    self.div_depth = self.div_depth.saturating_sub(1);
                }
                "structMap" => self.map = StructMapKind::None,
                "fileGrp" => self.current_group.clear(),
                _ => {}
            }
        } else if Self::in_premis(ns) {
            let in_object = self.object.is_some();
            match local {
                "objectIdentifierValue" if in_object => {
                    if let Some(o) = self.object.as_mut()
                        && o.id.is_empty()
                    {
                        o.id = text;
                    }
                }
                "messageDigestAlgorithm" => {
                    if let Some(o) = self.object.as_mut() {
                        o.algorithm = text;
                    }
                }
                "messageDigest" => {
                    if let Some(o) = self.object.as_mut() {
                        o.digest = text;
                    }
                }
                "size" => {
                    if let Some(o) = self.object.as_mut() {
                        o.size = Some(text);
                    }
                }
                "relationshipType" | "relationshipSubType" | "relatedObjectIdentifierValue" => {
                    if let Some(r) = self.object.as_mut().and_then(|o| o.relationships.last_mut()) {
                        match local {
                            "relationshipType" => r.0 = text,
                            "relationshipSubType" => r.1 = text,
                            _ => r.2 = text,
                        }
                    }
                }
                "object" => {
                    if let Some(o) = self.object.take() {
                        let o = Rc::new(o);
                        self.object_facts.entry(o.id.clone()).or_insert_with(|| Rc::clone(&o));
                        for key in [self.amd_current.clone(), self.md_current.clone()]
                            .into_iter()
                            .flatten()
                        {
                            self.amd_objects.entry(key).or_insert_with(|| Rc::clone(&o));
                        }
                    }
                }
                "agentIdentifierValue" if self.event.is_none() => {
                    self.agents.insert(text);
                }
                "eventType" => {
                    if let Some(e) = self.event.as_mut() {
                        e.event_type = text;
                    }
                }
                "eventOutcome" => {
                    if let Some(e) = self.event.as_mut() {
                        e.outcome = text;
                    }
                }
                "eventOutcomeDetailNote" => {
                    if let Some(e) = self.event.as_mut() {
                        if !e.detail.is_empty() {
                            e.detail.push_str("; ");
                        }
                        e.detail.push_str(&text);
                    }
                }
                "linkingAgentIdentifierValue" => {
                    if let Some(e) = self.event.as_mut() {
                        e.agents.push(text);
                    }
                }
                "linkingObjectIdentifierValue" => {
                    if let Some(e) = self.event.as_mut() {
                        e.objects.push(text);
                    }
                }
                "event" => {
                    if let Some(e) = self.event.take() {
                        if let Some(a) = &self.amd_current {
                            self.amd_event_types
                                .entry(a.clone())
                                .or_default()
                                .push(e.event_type.clone());
                        }
                        self.events.push(e);
                    }
                }
                _ => {}
            }
        } else if ns == NS_MODS && local == "dateCaptured" && !text.is_empty() {
            self.check_date(local, "the capture date", &text, offset);
        } else if ns == NS_RIGHTS {
            match local {
                "access" => {
                    if let Some(r) = self.rights_current.as_mut() {
                        r.0 = text;
                    }
                }
                "embargoUntil" => {
                    if let Some(r) = self.rights_current.as_mut() {
                        r.1 = text;
                    }
                }
                "rights" => {
                    if let Some(r) = self.rights_current.take() {
                        self.rights_ext.push(r);
                    }
                }
                _ => {}
            }
        }
    }

    fn root(&mut self, e: &Element, offset: Pos) {
        let (ns, local) = (e.ns.as_str(), e.local.as_str());
        let attr = |name: &str| e.attr(name).map(str::to_string);
        if ns != NS_METS || local != "mets" {
            self.error(
                "METS",
                local,
                offset,
                format!("root element is {{{ns}}}{local}; expected mets:mets"),
            );
            return;
        }
        let named = attr("PROFILE");
        if self.explicit.is_none()
            && let Some(p) = named.as_deref().and_then(Profile::by_uri)
        {
            self.profile = p;
            self.required = true;
        }
        if self.profile.rules.require_objid && attr("OBJID").is_none_or(|v| v.trim().is_empty()) {
            self.profile_rule(
                "P1.2",
                local,
                offset,
                "the root has no OBJID; expected a unique package identifier".into(),
            );
        }
        let types = self.profile.package_types.clone();
        if !types.is_empty() {
            let t = attr("TYPE").unwrap_or_default();
            if !types.contains(&t) {
                self.profile_rule(
                    "P1.2",
                    local,
                    offset,
                    format!("TYPE={t:?}; expected one of {}", types.join(", ")),
                );
            }
        }
        if named.as_deref() != Some(self.profile.uri.as_str())
            && self.required
            && self.explicit.is_none()
        {
            self.profile_rule(
                "P1.2",
                local,
                offset,
                format!("PROFILE={named:?}; expected {:?}", self.profile.uri),
            );
        }
    }

    fn start_div(&mut self, e: &Element, offset: Pos) {
        let attr = |name: &str| e.attr(name).map(str::to_string);
        self.div_depth += 1;
        let website = self.profile.structure.website.clone();
        // The content model (P2.1) is the logical map's; the physical map lists files by folder.
        if website.is_empty() || self.map != StructMapKind::Logical {
            return;
        }
        let t = attr("TYPE").unwrap_or_default();
        if self.div_depth == 1 && t == website {
            self.website_div = true;
            if attr("DMDID").is_none() || attr("ADMID").is_none() {
                self.profile_rule(
                    "P2.2",
                    "div",
                    offset,
                    "the website div needs DMDID (descriptions) and ADMID (rights)".into(),
                );
            }
        } else if self.div_depth == 2 {
            let allowed =
                [&self.profile.structure.webpage, &self.profile.structure.associated_object];
            // A div with descriptions is a curator entity; one without (a transformed page's
            // automatic div) has only its fptrs checked.
            if allowed.iter().any(|a| **a == t)
                && let Some(dmdid) = attr("DMDID")
                && !self.comparing
            {
                self.entities.push(entities::EntityDiv {
                    id: attr("ID").unwrap_or_default(),
                    div_type: t.clone(),
                    dmdids: dmdid.split_whitespace().map(str::to_string).collect(),
                    fptrs: Vec::new(),
                    offset,
                });
                self.entity_open = true;
            }
            if !allowed.iter().any(|a| **a == t) {
                self.profile_rule(
                    "P2.1",
                    "div",
                    offset,
                    format!(
                        "div TYPE={t:?} below the website; expected WEBPAGE or ASSOCIATEDOBJECT"
                    ),
                );
            }
        } else if self.div_depth > 2 {
            let id = attr("ID").map(|i| format!(" {i}")).unwrap_or_default();
            let depth = self.div_depth;
            self.profile_rule(
                "P2.1",
                "div",
                offset,
                format!("div{id} is at depth {depth}: divs nest deeper than two levels (website, then webpage or associated object)"),
            );
        }
    }

    fn start_file(&mut self, e: &Element, offset: Pos) {
        let depth = self.files.len();
        // METS's own attributes are unprefixed.
        let map: HashMap<String, String> = e
            .attrs
            .iter()
            .filter(|a| a.ns.is_empty())
            .map(|a| (a.local.clone(), a.value.clone()))
            .collect();
        if depth == 0
            && let Some(id) = map.get("ID")
        {
            self.top_files.push((id.clone(), offset));
        }
        let f = FileFacts {
            element_offset: offset,
            depth,
            id: map.get("ID").cloned().unwrap_or_default(),
            group: self.current_group.clone(),
            attrs: map,
            has_flocat: false,
            transforms: Vec::new(),
        };
        // Byte ranges (P4.4, P4.6).
        let get = |k: &str| f.attrs.get(k).cloned();
        let (begin, end, size, betype) = (get("BEGIN"), get("END"), get("SIZE"), get("BETYPE"));
        if begin.is_some() || end.is_some() {
            if betype.as_deref() != Some("BYTE") {
                self.error(
                    "P4.4",
                    "file",
                    offset,
                    format!("BETYPE={betype:?} with BEGIN/END; expected \"BYTE\""),
                );
            }
            let num = |v: &Option<String>| v.as_deref().and_then(|s| s.trim().parse::<u64>().ok());
            match (num(&begin), num(&end)) {
                (Some(b), Some(e)) if b > e => {
                    self.error(
                        "P4.6",
                        "file",
                        offset,
                        format!("BEGIN={b} is after END={e}; expected BEGIN <= END"),
                    );
                }
                (Some(b), Some(e)) => match (e - b).checked_add(1) {
                    // END = 2^64-1 with BEGIN = 0 names more bytes than a file can hold.
                    None => self.error(
                        "P4.6",
                        "file",
                        offset,
                        format!(
                            "BEGIN={b} END={e}: END - BEGIN + 1 does not fit in 64 bits; expected a range inside a file"
                        ),
                    ),
                    Some(len) => {
                        if let Some(s) = num(&size)
                            && s != len
                        {
                            self.error(
                                "P4.6",
                                "file",
                                offset,
                                format!("SIZE={s}; expected END - BEGIN + 1 = {len}"),
                            );
                        }
                    }
                },
                _ => self.error(
                    "P4.6",
                    "file",
                    offset,
                    format!("BEGIN={begin:?} END={end:?}; expected both, as byte offsets"),
                ),
            }
        }
        if let Some(ct) = get("CHECKSUMTYPE") {
            if ct != self.profile.checksum_algorithm {
                let alg = self.profile.checksum_algorithm.clone();
                self.profile_rule(
                    "P4.2",
                    "file",
                    offset,
                    format!("CHECKSUMTYPE={ct:?}; expected {alg:?}"),
                );
            }
        } else if get("CHECKSUM").is_some() {
            self.error("METS-CHECKSUM", "file", offset, "CHECKSUM without CHECKSUMTYPE".into());
        }
        // PREMIS object of the file agrees with its attributes (P5.1).
        if let Some(admid) = get("ADMID") {
            for token in admid.split_whitespace() {
                let Some(o) = self.amd_objects.get(token).cloned() else { continue };
                if let (Some(sum), false) = (get("CHECKSUM"), o.digest.is_empty()) {
                    if !sum.eq_ignore_ascii_case(&o.digest) {
                        self.error(
                            "P5.1",
                            "file",
                            offset,
                            format!(
                                "CHECKSUM {sum} differs from the PREMIS fixity {} of {token}",
                                o.digest
                            ),
                        );
                    }
                    if let Some(ct) = get("CHECKSUMTYPE")
                        && !o.algorithm.is_empty()
                        && !ct.eq_ignore_ascii_case(&o.algorithm)
                    {
                        self.error(
                            "P5.1",
                            "file",
                            offset,
                            format!("CHECKSUMTYPE {ct} but PREMIS fixity uses {}", o.algorithm),
                        );
                    }
                }
                if let (Some(s), Some(os)) = (get("SIZE"), o.size.as_ref())
                    && s.trim() != os.trim()
                {
                    self.error(
                        "P5.1",
                        "file",
                        offset,
                        format!("SIZE {s} differs from the PREMIS size {os} of {token}"),
                    );
                }
            }
        }
        self.files.push(f);
    }

    fn end_file(&mut self, _offset: Pos) {
        let Some(f) = self.files.pop() else { return };
        let o = f.element_offset;
        if let Some(admid) = f.attrs.get("ADMID") {
            let tokens = admid.split_whitespace().map(str::to_string).collect();
            self.described_files.push((f.group.clone(), f.depth, f.id.clone(), o, tokens));
        }
        let g = &self.profile.file_groups;
        let container_group = [&g.content, &g.original, &g.viral].iter().any(|n| **n == f.group);
        let has = |k: &str| f.attrs.get(k).is_some_and(|v| !v.is_empty());
        match f.depth {
            0 => {
                let mut missing: Vec<&str> =
                    ["MIMETYPE", "SIZE", "CHECKSUM", "CHECKSUMTYPE", "ADMID"]
                        .into_iter()
                        .filter(|k| !has(k))
                        .collect();
                if !f.has_flocat {
                    missing.push("FLocat");
                }
                if container_group
                    && self.profile.premis_version.starts_with('3')
                    && !has("CREATED")
                {
                    missing.push("CREATED");
                }
                if !missing.is_empty() {
                    let id = f.id.clone();
                    self.profile_rule(
                        "P4.2",
                        "file",
                        o,
                        format!("file {id} lacks {}", missing.join(", ")),
                    );
                }
                if container_group
                    && self.profile.rules.container_transform_file
                    && !f.transforms.iter().any(|t| t == "WARC")
                {
                    self.profile_rule(
                        "P4.3",
                        "file",
                        o,
                        format!(
                            "container {} has no transformFile TRANSFORMALGORITHM=\"WARC\"",
                            f.id
                        ),
                    );
                }
                if container_group && self.profile.rules.virus_check_per_container {
                    let term = self.profile.events.virus_check.term.clone();
                    // An event in the container's amdSec, or one anywhere that links the
                    // container's object (a shared event linking several containers).
                    let checked = f.attrs.get("ADMID").is_some_and(|admid| {
                        admid.split_whitespace().any(|a| {
                            self.amd_event_types.get(a).is_some_and(|t| t.contains(&term))
                                || self.amd_objects.get(a).is_some_and(|o| {
                                    self.events
                                        .iter()
                                        .any(|e| e.event_type == term && e.objects.contains(&o.id))
                                })
                        })
                    });
                    if !checked {
                        self.profile_rule(
                            "P5.5",
                            "file",
                            o,
                            format!("container {} has no {term:?} event", f.id),
                        );
                    }
                }
            }
            1 => {
                // An uncompressed container's records are addressed directly (no transform).
                let plain = f.attrs.get("MIMETYPE").is_some_and(|m| m == "application/warc");
                if (!plain && !f.transforms.iter().any(|t| t == "GZIP")) || !has("BEGIN") {
                    self.profile_rule(
                        "P4.4",
                        "file",
                        o,
                        format!("record {} needs BETYPE/BEGIN/END and transformFile GZIP", f.id),
                    );
                }
            }
            _ => {
                if !has("BEGIN") || !has("SIZE") || !has("CHECKSUM") {
                    self.profile_rule(
                        "P4.5",
                        "file",
                        o,
                        format!("bytestream {} needs BEGIN/END, SIZE and CHECKSUM", f.id),
                    );
                }
            }
        }
    }

    /// PREMIS coherence across objects, events, relationships and file groups (P5.5-P5.7):
    /// migrated containers carry their migration event and relationship, transformed and
    /// cleaned bytestreams point at originals kept in the right group, viral bytestreams are
    /// only in the viral group, and every `not scanned` outcome is reported.
    fn check_premis_coherence(&mut self) {
        let p = self.profile.clone();
        let rel_type = &p.relationships.relationship_type;
        // Object identifier -> the (group, depth, ID, offset) of the <file> it describes.
        let mut file_of: HashMap<String, (String, usize, String, Pos)> = HashMap::new();
        for (group, depth, id, offset, tokens) in &self.described_files {
            for t in tokens {
                if let Some(o) = self.amd_objects.get(t) {
                    file_of.entry(o.id.clone()).or_insert((
                        group.clone(),
                        *depth,
                        id.clone(),
                        *offset,
                    ));
                }
            }
        }
        // (event type, object) of every link an event makes, looked up once per object: a scan
        // of every event per object made a package of n pages take O(n^2).
        let links: HashSet<(&str, &str)> = self
            .events
            .iter()
            .flat_map(|e| e.objects.iter().map(move |o| (e.event_type.as_str(), o.as_str())))
            .collect();
        let linked_by = |term: &str, object: &str| links.contains(&(term, object));
        let mut found: Vec<(&'static str, &'static str, Pos, String)> = Vec::new();
        let mut objects: Vec<&ObjectFacts> = self.object_facts.values().map(|o| &**o).collect();
        objects.sort_by(|a, b| a.id.cmp(&b.id));
        for o in objects {
            let Some((_, depth, file_id, offset)) = file_of.get(&o.id) else { continue };
            let related = |subtype: &str| {
                o.relationships
                    .iter()
                    .filter(|r| r.0 == *rel_type && r.1 == subtype)
                    .map(|r| r.2.as_str())
                    .collect::<Vec<_>>()
            };
            // P5.6: a migrated container has both the event and the relationship.
            if *depth == 0 {
                let from = related(&p.relationships.migration);
                let event = linked_by(&p.events.migration.term, &o.id);
                if !from.is_empty() && !event {
                    found.push(("P5.6", "file", *offset, format!(
                        "container {file_id} is derived by migration from {:?}, but no {:?} event links it",
                        from[0], p.events.migration.term
                    )));
                }
                if event && from.is_empty() {
                    found.push(("P5.6", "file", *offset, format!(
                        "container {file_id} has a {:?} event but no {rel_type}/{} relationship to its source",
                        p.events.migration.term, p.relationships.migration
                    )));
                }
                for r in from {
                    if !self.object_facts.contains_key(r) {
                        found.push((
                            "P5.6",
                            "file",
                            *offset,
                            format!(
                                "container {file_id} is migrated from {r:?}, which is not described"
                            ),
                        ));
                    }
                }
            }
            // P5.7: a transformed bytestream's original is kept, in the original group.
            for r in related(&p.relationships.transformation) {
                if !linked_by(&p.events.transformation.term, &o.id) {
                    found.push(("P5.7", "file", *offset, format!(
                        "bytestream {file_id} is transformed from {r:?}, but no {:?} event links it",
                        p.events.transformation.term
                    )));
                }
                match file_of.get(r) {
                    Some((g, ..)) if *g == p.file_groups.original => {}
                    Some((g, _, id, _)) => found.push(("P5.7", "file", *offset, format!(
                        "the original of bytestream {file_id} ({id}) is in group {g:?}, not {:?}",
                        p.file_groups.original
                    ))),
                    None => found.push(("P5.7", "file", *offset, format!(
                        "the original {r:?} of bytestream {file_id} is not in the file section"
                    ))),
                }
            }
            // P5.5: a cleaned copy points at its viral original, kept in the viral group.
            for r in related(&p.relationships.cleaned) {
                match file_of.get(r) {
                    Some((g, ..)) if *g == p.file_groups.viral => {}
                    _ => found.push(("P5.5", "file", *offset, format!(
                        "bytestream {file_id} is cleaned from {r:?}, which is not a file of group {:?}",
                        p.file_groups.viral
                    ))),
                }
            }
        }
        // P5.5: what a virus was found in and not cleaned stays out of the other groups.
        let term = &p.events.virus_check.term;
        let mut notices = Vec::new();
        for e in self.events.iter().filter(|e| e.event_type == *term) {
            if e.outcome == p.virus_outcomes.forced {
                for o in &e.objects {
                    if let Some((g, _, id, offset)) = file_of.get(o)
                        && *g != p.file_groups.viral
                    {
                        found.push((
                            "P5.5",
                            "file",
                            *offset,
                            format!(
                                "{id} is {:?} ({}) but is in group {g:?}, not {:?}",
                                e.outcome, e.detail, p.file_groups.viral
                            ),
                        ));
                    }
                }
            }
            if e.outcome == p.virus_outcomes.not_scanned {
                let what = match e.objects.as_slice() {
                    [one] => one.clone(),
                    many => format!("{} objects", many.len()),
                };
                notices.push((
                    e.offset,
                    format!("{what}: virus check outcome {:?}: {}", e.outcome, e.detail),
                ));
            }
        }
        for (rule, element, offset, message) in found {
            self.profile_rule(rule, element, offset, message);
        }
        for (offset, message) in notices {
            self.notice("P5.5", "event", offset, message);
        }
    }

    /// Checks that need the whole document.
    /// Checks one IDREF token against the IDs seen (all of them, at the end of the document).
    fn check_ref(&mut self, attr: &str, value: &str, element: &str, offset: Pos, rule: &str) {
        let want = match attr {
            "DMDID" => Some(IdOwner::DmdSec),
            "FILEID" => Some(IdOwner::File),
            _ => None,
        };
        match self.ids.get(value) {
            None => {
                let what = match want {
                    Some(w) => format!("no <{}>", w.name()),
                    None => "no ID".into(),
                };
                self.error(rule, element, offset, format!("{attr} {value:?} points at {what}"))
            }
            Some(&(_, found)) if want.is_some_and(|w| w != found) => {
                let w = want.map(IdOwner::name).unwrap_or_default();
                let what = match found {
                    IdOwner::Other => "another element".to_string(),
                    f => format!("a <{}>", f.name()),
                };
                self.error(
                    rule,
                    element,
                    offset,
                    format!("{attr} {value:?} points at {what}; expected a <{w}>"),
                )
            }
            Some(_) => {}
        }
    }

    fn finish(&mut self) {
        if self.xml_error {
            return;
        }
        if self.bad_dates > MAX_DATE_FINDINGS {
            self.findings.push(Finding {
                severity: Severity::Error,
                rule: "DATE".into(),
                line: None,
                element: String::new(),
                message: format!(
                    "{} more dates that WARC and the METS cannot state, not listed one by one",
                    self.bad_dates - MAX_DATE_FINDINGS
                ),
            });
        }
        let refs = std::mem::take(&mut self.refs);
        for (attr, value, element, offset, rule) in refs {
            self.check_ref(attr, &value, &element, offset, rule);
        }
        let events = std::mem::take(&mut self.events);
        for e in &events {
            for o in &e.objects {
                if !self.object_facts.contains_key(o) {
                    self.error(
                        "P5.3",
                        "event",
                        e.offset,
                        format!(
                            "event {:?} links object {o:?}, which is not described",
                            e.event_type
                        ),
                    );
                }
            }
            for a in &e.agents {
                if !self.agents.contains(a) {
                    self.error(
                        "P5.3",
                        "event",
                        e.offset,
                        format!(
                            "event {:?} links agent {a:?}, which is not described",
                            e.event_type
                        ),
                    );
                }
            }
            if let Some(t) = self.profile.events.by_term(&e.event_type)
                && !t.outcomes.contains(&e.outcome)
            {
                let rule = if *t == self.profile.events.virus_check {
                    "P5.5"
                } else if *t == self.profile.events.migration {
                    "P5.6"
                } else {
                    "P5.7"
                };
                let allowed = t.outcomes.join("\", \"");
                self.profile_rule(
                    rule,
                    "event",
                    e.offset,
                    format!(
                        "outcome {:?} of {:?}; expected one of \"{allowed}\"",
                        e.outcome, e.event_type
                    ),
                );
            }
        }
        self.events = events;
        self.check_premis_coherence();
        if !self.mets_hdr {
            self.profile_rule("P1.2", "mets", Pos::START, "no metsHdr".into());
        }
        if self.profile.rules.require_descriptive && !self.dmd_types.iter().any(|t| t == "MODS") {
            self.profile_rule(
                "P3.1",
                "dmdSec",
                Pos::START,
                "no MODS dmdSec for the website".into(),
            );
        }
        if self.profile.rules.require_descriptive && !self.dmd_types.iter().any(|t| t == "DC") {
            self.profile_rule("P3.2", "dmdSec", Pos::START, "no Dublin Core dmdSec".into());
        }
        if self.profile.rules.rights_extension {
            if self.rights_ext.is_empty() {
                self.profile_rule(
                    "P3.3",
                    "rightsMD",
                    Pos::START,
                    format!("no rights record in the webaip rights schema ({NS_RIGHTS})"),
                );
            }
            for (access, until, offset) in self.rights_ext.clone() {
                if access == "embargoed" && until.is_empty() {
                    self.profile_rule(
                        "P3.3",
                        "rights",
                        offset,
                        "access is embargoed but no embargoUntil date is given".into(),
                    );
                }
            }
        }
        if !self.file_sec {
            self.profile_rule("P4.1", "fileSec", Pos::START, "no fileSec".into());
        }
        if self.profile.rules.physical_map {
            if !self.struct_physical {
                self.profile_rule(
                    "P2.5",
                    "structMap",
                    Pos::START,
                    "no structMap TYPE=\"physical\"".into(),
                );
            } else {
                let unlisted: Vec<(String, Pos)> = self
                    .top_files
                    .iter()
                    .filter(|(id, _)| !self.physical_fptrs.contains(id))
                    .cloned()
                    .collect();
                for (id, at) in unlisted {
                    let what = format!("file {id} is not in the physical structMap");
                    self.profile_rule("P2.5", "file", at, what);
                }
            }
        }
        if !self.struct_logical {
            self.profile_rule(
                "P2.1",
                "structMap",
                Pos::START,
                "no structMap TYPE=\"logical\"".into(),
            );
        } else if !self.profile.structure.website.is_empty() && !self.website_div {
            let w = self.profile.structure.website.clone();
            self.profile_rule(
                "P2.1",
                "structMap",
                Pos::START,
                format!("no top-level div TYPE={w:?}"),
            );
        }
    }
}

/// The kind of element an ID belongs to, as far as IDREF checks need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdOwner {
    File,
    DmdSec,
    Other,
}

impl IdOwner {
    fn of(local: &str) -> Self {
        match local {
            "file" => IdOwner::File,
            "dmdSec" => IdOwner::DmdSec,
            _ => IdOwner::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            IdOwner::File => "file",
            IdOwner::DmdSec => "dmdSec",
            IdOwner::Other => "element",
        }
    }
}

/// Which kind of structMap the reader is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StructMapKind {
    None,
    Logical,
    Physical,
    Other,
}

#[cfg(feature = "xsd")]
mod xsd {
    //! XML Schema validation through libxml2.

    use std::path::Path;
    use std::sync::Mutex;

    use libxml::schemas::{SchemaParserContext, SchemaValidationContext};

    use super::{Finding, Severity};

    /// libxml2 keeps error handlers in global state; one validation at a time.
    static LIBXML: Mutex<()> = Mutex::new(());

    /// The project's rights schema, shipped inside the binary.
    const RIGHTS_XSD: &str = include_str!("../../xsd/webaip-rights.xsd");

    /// Validates `doc` against `bundle` plus webaip's rights schema.
    pub(crate) fn validate(doc: &Path, dir: &Path, bundle: &Path) -> Result<Vec<Finding>, String> {
        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let wrapper = wrapper_schema(dir, bundle, tmp.path())?;
        let _guard = LIBXML.lock().unwrap_or_else(|p| p.into_inner());
        let mut parser = SchemaParserContext::from_file(&wrapper);
        let mut ctx = SchemaValidationContext::from_parser(&mut parser).map_err(|errs| {
            let first = errs.first().and_then(|e| e.message.clone()).unwrap_or_default();
            format!("the schema bundle {} does not compile: {first}", bundle.display())
        })?;
        let doc_path = doc.to_str().ok_or("document path is not UTF-8")?;
        Ok(match ctx.validate_file(doc_path) {
            Ok(()) => Vec::new(),
            Err(errs) => errs
                .into_iter()
                .map(|e| Finding {
                    severity: Severity::Error,
                    rule: "XSD".into(),
                    line: e.line.map(|l| l.max(0) as u64),
                    element: String::new(),
                    message: e.message.as_deref().unwrap_or("").trim().to_string(),
                })
                .collect(),
        })
    }

    /// A wrapper importing every namespace of the bundle (with absolute paths) and the rights
    /// schema, so one compiled schema covers all of them.
    fn wrapper_schema(dir: &Path, bundle: &Path, tmp: &Path) -> Result<String, String> {
        let text =
            std::fs::read_to_string(bundle).map_err(|e| format!("{}: {e}", bundle.display()))?;
        let dir = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
        let rights = tmp.join("webaip-rights.xsd");
        std::fs::write(&rights, RIGHTS_XSD).map_err(|e| e.to_string())?;
        let mut imports = String::new();
        for line in text.lines().filter(|l| l.trim_start().starts_with("<xs:import")) {
            let ns = attr(line, "namespace").ok_or("bundle import without namespace")?;
            let loc = attr(line, "schemaLocation").ok_or("bundle import without schemaLocation")?;
            let abs = dir.join(loc);
            imports.push_str(&format!(
                "  <xs:import namespace=\"{ns}\" schemaLocation=\"{}\"/>\n",
                abs.display()
            ));
        }
        imports.push_str(&format!(
            "  <xs:import namespace=\"{}\" schemaLocation=\"{}\"/>\n",
            super::NS_RIGHTS,
            rights.display()
        ));
        let wrapper = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" elementFormDefault=\"qualified\">\n{imports}</xs:schema>\n"
        );
        let path = tmp.join("wrapper.xsd");
        std::fs::write(&path, wrapper).map_err(|e| e.to_string())?;
        Ok(path.to_string_lossy().into_owned())
    }

    fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
        let start = line.find(&format!("{name}=\""))? + name.len() + 2;
        let end = line[start..].find('"')? + start;
        Some(&line[start..end])
    }
}

#[cfg(not(feature = "xsd"))]
mod xsd {
    use std::path::Path;

    pub(crate) fn validate(
        _doc: &Path,
        _dir: &Path,
        _bundle: &Path,
    ) -> Result<Vec<super::Finding>, String> {
        Err("this webaip was built without XML Schema support (feature \"xsd\")".into())
    }
}
