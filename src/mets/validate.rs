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
//! the built-in profile whose PREMIS version the document's PREMIS sections are in (PREMIS 2:
//! `bl-legacy`), else the default profile; these last two are advisory (their findings are
//! warnings: the document does not claim to follow them), and the report says which profile
//! to give to require one. PREMIS 2 sections are validated against the bundle that knows
//! PREMIS 2, whichever profile applies. Under a profile other than the default, how the
//! document differs from the default profile is reported as information.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::reader::{Element, Event, MetsError, MetsReader, Pos, Refusal};

use crate::profile::Profile;

mod crossrefs;
mod entities;

use crossrefs::{CrossrefError, Crossrefs};

use super::reader::{NS_METS, NS_MODS, NS_PREMIS2, NS_PREMIS3};
use crate::formats::dates::is_stateable_date;

/// Longest text value kept of one element (an identifier, a date, a note), and longest detail
/// gathered of one event.
const MAX_VALUE: usize = 1 << 20;

/// Dates no WARC-Date or METS date can state reported one by one; the others are counted in
/// one finding.
const MAX_DATE_FINDINGS: u64 = 100;
const NS_RIGHTS: &str = super::descriptive::RIGHTS_NS;
/// XML Schema instance (`xsi:type` of a PREMIS object).
const NS_XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

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

/// The rule of a `<file>` whose `SIZE`, `CHECKSUM` or `CHECKSUMTYPE` disagrees with its own
/// PREMIS object (P5.1).
pub const RULE_DESCRIBED_FIXITY: &str = "P5.1";

impl Finding {
    /// True for a disagreement inside the document between two statements of one file's fixity
    /// (its `<file>` attributes and its PREMIS object): the document is invalid, but that says
    /// nothing of the bytes, which an audit checks on their own.
    pub fn is_inconsistency(&self) -> bool {
        self.severity == Severity::Error && self.rule == RULE_DESCRIBED_FIXITY
    }
}

/// Whether XML Schema validation ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum XsdStatus {
    /// Validated against this bundle.
    Validated {
        /// The wrapper schema used (its file name when built in).
        bundle: PathBuf,
        /// True for the schemas built into webaip; false for a `--schemas` folder's.
        built_in: bool,
    },
    /// Not validated, and why.
    Skipped {
        /// The reason.
        reason: String,
    },
}

/// Where the profile a document was checked under comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileSource {
    /// `--profile`: its rules are requirements.
    Given,
    /// The document's `PROFILE` attribute names it: its rules are requirements.
    Named,
    /// The document names no profile webaip knows, and this one fits its PREMIS version: its
    /// rules are advice (warnings), its schema bundle is the one that checks that PREMIS.
    Chosen,
    /// Nothing in the document points at a profile: the default one, as advice.
    Advisory,
}

impl ProfileSource {
    /// How the text reports say it.
    pub fn describe(self) -> &'static str {
        match self {
            ProfileSource::Given => "required by --profile",
            ProfileSource::Named => "named by the document, required",
            ProfileSource::Chosen => "chosen from the document, advisory",
            ProfileSource::Advisory => "default, advisory",
        }
    }
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
    /// Where that profile comes from.
    pub profile_source: ProfileSource,
    /// Why that profile, in words, and which `--profile` to give to require one.
    pub profile_note: String,
    /// XML Schema validation.
    pub xsd: XsdStatus,
    /// False when the document could not be read to its end (not well-formed, cut short).
    pub well_formed: bool,
    /// The findings, in document order.
    pub findings: Vec<Finding>,
    /// True when there is no error.
    pub valid: bool,
}

/// Options for [`validate_mets`].
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// Directory holding the schema bundle to use instead of the built-in schemas
    /// ([`super::schemas`]); `None`: the built-in ones.
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
    /// The schema directory has no bundle for the document.
    #[error(
        "{}: no schema bundle {bundle} there{}",
        dir.display(),
        if *premis2 { " (the bundle that validates the document's PREMIS 2 sections)" } else { "" }
    )]
    NoBundle {
        /// The schema directory.
        dir: PathBuf,
        /// The bundle's file name.
        bundle: String,
        /// Whether it is the bundle for PREMIS 2 sections.
        premis2: bool,
    },
    /// The profile names a schema bundle webaip does not carry, and no folder was given.
    #[error(
        "{}: profile {profile} validates against schema bundle {bundle}, which is not built in; give --schemas DIR (or WEBAIP_SCHEMAS) holding it",
        path.display()
    )]
    NoBuiltInBundle {
        /// The document.
        path: PathBuf,
        /// The profile.
        profile: String,
        /// The bundle's file name.
        bundle: String,
    },
    /// The cross-references could not be kept on disk while the document was read.
    #[error(
        "cannot check the cross-references of {}: its scratch database (in TMPDIR) failed: {source}",
        path.display()
    )]
    Scratch {
        /// The document.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
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
    let (source, profile_note) = match &opts.profile {
        Some(p) => (ProfileSource::Given, format!("profile {} required by --profile", p.name)),
        None => {
            let declared = Declared::read(path);
            let (source, chosen, note) = declared.choice();
            if let Some(p) = chosen {
                checker.profile = p;
            }
            (source, note)
        }
    };
    checker.run(BufReader::with_capacity(256 * 1024, file));
    let scratch = |source| ValidateError::Scratch { path: path.to_path_buf(), source };
    checker.finish().map_err(scratch)?;
    checker.check_entities(path);
    let profile = checker.profile.clone();
    let mut findings = std::mem::take(&mut checker.findings);
    let (xml_error, required, value_cut) = (checker.xml_error, checker.required, checker.value_cut);
    // The checker reads the root's PROFILE too; it has the last word.
    let (source, profile_note) = match source {
        ProfileSource::Chosen | ProfileSource::Advisory if required => {
            let note = format!("profile {} named by the document", profile.name);
            (ProfileSource::Named, note)
        }
        _ => (source, profile_note),
    };
    // PREMIS 2 sections are checked against PREMIS 2, whichever profile applies: the strict
    // bundle does not know its namespace and would call every `xsi:type="premis:file"` absent.
    let premis2 = checker.premis2_at.is_some();
    let bundle_name = match (premis2, profile.premis_major()) {
        (true, Some(m)) if m != '2' => Profile::by_premis_major('2')
            .map(|p| p.schema_bundle)
            .unwrap_or_else(|| profile.schema_bundle.clone()),
        _ => profile.schema_bundle.clone(),
    };
    // Its cross-reference state is not kept while the comparison and libxml2 run.
    drop(checker);
    if profile.name != crate::profile::DEFAULT_PROFILE && !xml_error {
        // How the document differs from the current profile, as information.
        let mut compare = Checker::new(Some(Profile::default_profile()));
        compare.comparing = true;
        compare.run(BufReader::with_capacity(256 * 1024, File::open(path).map_err(unreadable)?));
        compare.finish().map_err(scratch)?;
        findings.extend(compare.findings.into_iter().filter(|f| f.severity == Severity::Info));
    }
    let xsd = if xml_error {
        // libxml2 is not given what our reader could not read whole: a document that is not
        // well-formed says so above, and one with a 150 MB attribute would take libxml2's
        // memory and end in "status -1 without a diagnostic".
        XsdStatus::Skipped {
            reason: "the document could not be read to its end (see the XML error)".into(),
        }
    } else if value_cut {
        // libxml2 holds a text value whole to check its type: 150 MB of it took 169 MB.
        XsdStatus::Skipped {
            reason: format!("a value is longer than {MAX_VALUE} bytes (see the SIZE error)"),
        }
    } else {
        let dir = opts.schemas.as_deref();
        check_bundle(path, dir, &bundle_name, &profile.name, premis2)?;
        match xsd::validate(path, dir, &bundle_name) {
            Ok(mut f) => {
                findings.append(&mut f);
                let (bundle, built_in) = match dir {
                    Some(d) => (d.join(&bundle_name), false),
                    None => (PathBuf::from(&bundle_name), true),
                };
                XsdStatus::Validated { bundle, built_in }
            }
            Err(why) => XsdStatus::Skipped { reason: why.to_string() },
        }
    };
    findings.sort_by(|a, b| a.line.cmp(&b.line).then(b.severity.cmp(&a.severity)));
    findings.dedup();
    let valid = !findings.iter().any(|f| f.severity == Severity::Error);
    Ok(ValidationReport {
        file: path.to_path_buf(),
        profile: profile.name.clone(),
        profile_required: required,
        profile_source: source,
        profile_note,
        xsd,
        well_formed: !xml_error,
        findings,
        valid,
    })
}

/// The bundle is there: in `dir` (a `--schemas` folder), else among the built-in schemas.
fn check_bundle(
    path: &Path,
    dir: Option<&Path>,
    bundle: &str,
    profile: &str,
    premis2: bool,
) -> Result<(), ValidateError> {
    match dir {
        Some(dir) if !dir.join(bundle).is_file() => Err(ValidateError::NoBundle {
            dir: dir.to_path_buf(),
            bundle: bundle.to_string(),
            premis2,
        }),
        None if !super::schemas::is_built_in(bundle) => Err(ValidateError::NoBuiltInBundle {
            path: path.to_path_buf(),
            profile: profile.to_string(),
            bundle: bundle.to_string(),
        }),
        _ => Ok(()),
    }
}

/// What a document says about its profile, read before it is checked: the root's `PROFILE`
/// attribute and the PREMIS namespace of its first PREMIS element. PREMIS sits in the dmdSecs
/// and amdSecs, which METS puts before the fileSec: reading stops there, or at the root when its
/// `PROFILE` names a profile webaip knows.
#[derive(Debug, Default)]
struct Declared {
    profile_attr: Option<String>,
    named: Option<Profile>,
    premis_major: Option<char>,
}

impl Declared {
    /// Reads what `path` declares; a document that cannot be read declares nothing (the
    /// checks that follow report why).
    fn read(path: &Path) -> Declared {
        let mut d = Declared::default();
        let Ok(file) = crate::layout::open_user_file(path) else { return d };
        let mut reader = MetsReader::lenient(BufReader::with_capacity(64 * 1024, file));
        let mut root = true;
        while let Ok(Some(event)) = reader.next() {
            let (Event::Start(e, _) | Event::Empty(e, _)) = event else { continue };
            if root {
                root = false;
                d.profile_attr = e.attr("PROFILE").map(str::to_string);
                d.named = d.profile_attr.as_deref().and_then(Profile::by_uri);
                if d.named.is_some() {
                    break;
                }
            }
            d.premis_major = match e.ns.as_str() {
                NS_PREMIS2 => Some('2'),
                NS_PREMIS3 => Some('3'),
                _ => None,
            };
            let past_metadata =
                e.ns == NS_METS && matches!(e.local.as_str(), "fileSec" | "structMap");
            if d.premis_major.is_some() || past_metadata {
                break;
            }
        }
        d
    }

    /// The profile to check the document under (`None`: the default), where it comes from, and
    /// why, saying which `--profile` would require one.
    fn choice(&self) -> (ProfileSource, Option<Profile>, String) {
        if let Some(p) = &self.named {
            let note = format!("profile {} named by the document (PROFILE={:?})", p.name, p.uri);
            return (ProfileSource::Named, Some(p.clone()), note);
        }
        let names = match &self.profile_attr {
            Some(uri) => format!("the document names profile {uri:?}, which webaip does not know"),
            None => "the document names no profile".to_string(),
        };
        let default = crate::profile::DEFAULT_PROFILE;
        let fits = self.premis_major.and_then(Profile::by_premis_major);
        match (fits, self.premis_major) {
            (Some(p), Some(major)) if p.name != default => {
                let name = &p.name;
                let note = format!(
                    "{names}; its PREMIS sections are PREMIS {major}, as in profile {name}'s \
                     packages: checked under {name} as advice (warnings); give --profile \
                     {name} to require it"
                );
                (ProfileSource::Chosen, Some(p), note)
            }
            _ => {
                let note = format!(
                    "{names}; profile {default} applies as advice (warnings); give --profile \
                     NAME (bl-webarchive, bl-legacy for the BL's PREMIS 2 SIPs, or a .toml \
                     file) to require one"
                );
                (ProfileSource::Advisory, None, note)
            }
        }
    }
}

/// The PREMIS object being read: its number in document order and its facts so far.
#[derive(Default)]
struct ObjectFacts {
    seq: i64,
    id: Option<String>,
    algorithm: String,
    digest: String,
    size: Option<String>,
    /// The relationship being read: [type, subtype, related object].
    relation: Option<[String; 3]>,
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
    /// Every ID, IDREF, PREMIS object, event and described file, on disk until the document
    /// is read ([`crossrefs`]); `None` when the scratch database could not be made.
    xref: Result<Crossrefs, Option<CrossrefError>>,
    /// The curator entities of the logical map, checked against their MODS and records after
    /// the pass ([`entities`]); `entity_open` while inside one.
    entities: Vec<entities::EntityDiv>,
    entity_open: bool,
    root_seen: bool,
    mets_hdr: bool,
    dmd_types: Vec<String>,
    rights_mds: u64,
    /// Rights records in webaip's rights schema.
    rights_ext: u64,
    rights_current: Option<(String, String, Pos)>,
    file_sec: bool,
    groups: Vec<String>,
    current_group: String,
    struct_logical: bool,
    struct_physical: bool,
    /// The structMap being read.
    map: StructMapKind,
    website_div: bool,
    div_depth: usize,
    amd_current: Option<String>,
    md_current: Option<String>,
    object: Option<ObjectFacts>,
    event: Option<EventFacts>,
    /// The outcome detail notes of the open event.
    event_detail: String,
    text: Option<String>,
    /// Set once the value being read was cut at [`MAX_VALUE`] (reported once).
    text_cut: bool,
    /// Set when any value was cut: libxml2, which holds a value whole, is then not run.
    value_cut: bool,
    files: Vec<FileFacts>,
    xml_error: bool,
    /// Dates WARC and the METS cannot state (a year past 9999).
    bad_dates: u64,
    /// The first PREMIS 2 and PREMIS 3 elements of the document: which bundle checks it, and
    /// whether it is written in the PREMIS of its profile.
    premis2_at: Option<Pos>,
    premis3_at: Option<Pos>,
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
            xref: Crossrefs::open().map_err(Some),
            entities: Vec::new(),
            entity_open: false,
            root_seen: false,
            mets_hdr: false,
            dmd_types: Vec::new(),
            rights_mds: 0,
            rights_ext: 0,
            rights_current: None,
            bad_dates: 0,
            file_sec: false,
            groups: Vec::new(),
            current_group: String::new(),
            struct_logical: false,
            struct_physical: false,
            map: StructMapKind::None,
            website_div: false,
            div_depth: 0,
            amd_current: None,
            md_current: None,
            object: None,
            event: None,
            event_detail: String::new(),
            text: None,
            text_cut: false,
            value_cut: false,
            files: Vec::new(),
            xml_error: false,
            premis2_at: None,
            premis3_at: None,
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
                        MetsError::Xml { source, pos } => {
                            let column = reader.column_at(pos.offset);
                            format!("not well-formed XML (column {column}): {source}")
                        }
                        MetsError::Refused { refusal, .. } => refusal.to_string(),
                        MetsError::Unfinished { column, unfinished, .. } => {
                            format!("not well-formed XML (column {column}): {unfinished}")
                        }
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
            Event::Text(t, at) => {
                // A value is kept to MAX_VALUE: text split by comments into events under the
                // reader's bound would otherwise gather without one (152 MB took 482 MB).
                if let Some(v) = self.text.as_mut() {
                    let room = MAX_VALUE.saturating_sub(v.len());
                    let mut cut = room.min(t.len());
                    while !t.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    v.push_str(&t[..cut]);
                    if cut < t.len() && !self.text_cut {
                        self.text_cut = true;
                        self.value_cut = true;
                        let what = format!(
                            "a value longer than {MAX_VALUE} bytes: only its start is checked (no METS value of a package is that long)"
                        );
                        self.error("SIZE", "", at, what);
                    }
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

    /// A METS element's dates, its ID (unique) and its IDREF attributes.
    fn mets_ids_and_refs(&mut self, e: &Element, local: &str, offset: Pos) {
        for name in ["CREATED", "CREATEDATE", "LASTMODDATE"] {
            if let Some(v) = e.attr(name) {
                self.check_date(local, name, v, offset);
            }
        }
        if let (Some(id), Some(x)) = (e.attr("ID"), self.xref.as_mut().ok()) {
            x.id(id, local, IdOwner::of(local).code(), offset);
        }
        // The logical map's references are the content model's (P2.2, P2.3).
        let logical = self.map == StructMapKind::Logical && matches!(local, "div" | "fptr");
        for name in ["ADMID", "DMDID", "FILEID"] {
            let rule = match name {
                "DMDID" if logical => "P2.2",
                "FILEID" if logical => "P2.3",
                _ => "METS-IDREF",
            };
            if let (Some(v), Some(x)) = (e.attr(name), self.xref.as_mut().ok()) {
                for token in v.split_whitespace() {
                    x.reference(name, token, local, rule, offset);
                }
            }
        }
    }

    fn start(&mut self, e: &Element, offset: Pos) {
        let (ns, local) = (e.ns.as_str(), e.local.as_str());
        let attr = |name: &str| e.attr(name).map(str::to_string);
        if ns == NS_METS {
            self.mets_ids_and_refs(e, local, offset);
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
                    if let (Some(id), Some(x)) = (e.attr("FILEID"), self.xref.as_mut().ok()) {
                        x.physical_fptr(id);
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
            let first = if ns == NS_PREMIS2 { &mut self.premis2_at } else { &mut self.premis3_at };
            first.get_or_insert(offset);
            match local {
                "object" => {
                    let seq = self.xref.as_mut().map_or(0, Crossrefs::next_seq);
                    let kind = e.attr_ns(NS_XSI, "type").unwrap_or_default();
                    let bitstream = kind.rsplit(':').next() == Some("bitstream");
                    self.object = Some(ObjectFacts { seq, bitstream, ..Default::default() })
                }
                "relationship" => {
                    if let Some(o) = self.object.as_mut() {
                        o.relation = Some(Default::default());
                    }
                }
                "event" => {
                    self.event_detail.clear();
                    let seq = self.xref.as_mut().map_or(0, Crossrefs::next_seq);
                    self.event = Some(EventFacts { seq, offset, ..EventFacts::default() })
                }
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
        self.text_cut = false;
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
                    if let Some(o) = self.object.as_mut() {
                        o.id.get_or_insert(text);
                    }
                }
                "messageDigest" | "messageDigestAlgorithm" | "size" if in_object => {
                    if let Some(o) = self.object.as_mut() {
                        match local {
                            "messageDigest" => o.digest = text,
                            "messageDigestAlgorithm" => o.algorithm = text,
                            _ => o.size = Some(text),
                        }
                    }
                }
                "relationshipType" | "relationshipSubType" | "relatedObjectIdentifierValue" => {
                    // The last relationship's, as they were read (a relationship's
                    // parts after its end, in a hostile document, amend it).
                    if let Some(r) = self.object.as_mut().and_then(|o| o.relation.as_mut()) {
                        match local {
                            "relationshipType" => r[0] = text,
                            "relationshipSubType" => r[1] = text,
                            _ => r[2] = text,
                        }
                    }
                }
                "object" => self.end_object(),
                "agentIdentifierValue" if self.event.is_none() => {
                    if let Ok(x) = self.xref.as_mut() {
                        x.agent(&text);
                    }
                }
                _ => self.end_event_part(local, text),
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
                    if let Some((access, until, at)) = self.rights_current.take() {
                        self.rights_ext += 1;
                        self.check_rights(&access, &until, at);
                    }
                }
                _ => {}
            }
        }
    }

    /// The end of a PREMIS object: it is stored, found by its identifier and by the amdSec and
    /// MD section holding it (the first of each keeps the key), with its last relationship.
    fn end_object(&mut self) {
        let Some(mut o) = self.object.take() else { return };
        self.end_relationship(&mut o);
        let Ok(x) = self.xref.as_mut() else { return };
        x.object(
            o.seq,
            o.id.as_deref().unwrap_or(""),
            &o.algorithm,
            &o.digest,
            o.size.as_deref(),
            self.amd_current.as_deref().filter(|_| !(o.bitstream && o.required_by)),
            self.md_current.as_deref().filter(|_| !(o.bitstream && o.required_by)),
        );
    }

    /// The relationship being read is complete: it is stored.
    fn end_relationship(&mut self, o: &mut ObjectFacts) {
        if let Some(r) = &o.relation {
            o.required_by |= r[0] == "dependency" && r[1] == "is required by";
        }
        if let (Some(r), Ok(x)) = (o.relation.take(), self.xref.as_mut()) {
            x.relation(o.seq, &r);
        }
    }

    /// The end of an element inside a PREMIS event (or of the event).
    fn end_event_part(&mut self, local: &str, text: String) {
        if local == "relationship" {
            if let Some(mut o) = self.object.take() {
                self.end_relationship(&mut o);
                self.object = Some(o);
            }
            return;
        }
        let Some(e) = self.event.as_mut() else { return };
        match local {
            // Gathered to MAX_VALUE: the notes of one event are never longer in a package.
            "eventOutcomeDetailNote" if self.event_detail.len() + text.len() + 2 <= MAX_VALUE => {
                if !self.event_detail.is_empty() {
                    self.event_detail.push_str("; ");
                }
                self.event_detail.push_str(&text);
            }
            "eventOutcomeDetailNote" => {}
            "eventType" => e.event_type = text,
            "eventOutcome" => e.outcome = text,
            "linkingAgentIdentifierValue" => {
                let seq = e.seq;
                if let Ok(x) = self.xref.as_mut() {
                    x.event_agent(seq, &text);
                }
            }
            "linkingObjectIdentifierValue" => {
                e.objects += 1;
                let seq = e.seq;
                if e.first_object.is_none() {
                    e.first_object = Some(text.clone());
                }
                if let Ok(x) = self.xref.as_mut() {
                    x.event_object(seq, &text);
                }
            }
            "event" => self.end_event(),
            _ => {}
        }
    }

    /// The end of a PREMIS event: it is stored, and what it alone says is checked: an outcome
    /// from the profile's vocabulary for its type (P5.5-P5.7), and a virus check that could not
    /// scan reported (P5.5).
    fn end_event(&mut self) {
        let Some(e) = self.event.take() else { return };
        let virus_term = self.profile.events.virus_check.term.clone();
        // The detail is quoted by the virus-check findings only.
        let detail = if e.event_type == virus_term { self.event_detail.as_str() } else { "" };
        if let Ok(x) = self.xref.as_mut() {
            let amd = self.amd_current.as_deref();
            x.event(e.seq, (&e.event_type, &e.outcome, detail), amd, e.offset);
        }
        if e.event_type == virus_term && e.outcome == self.profile.virus_outcomes.not_scanned {
            let what = match (&e.first_object, e.objects) {
                (Some(one), 1) => one.clone(),
                (_, many) => format!("{many} objects"),
            };
            let (outcome, detail) = (&e.outcome, &self.event_detail);
            let message = format!("{what}: virus check outcome {outcome:?}: {detail}");
            self.notice("P5.5", "event", e.offset, message);
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
            let (outcome, event_type) = (&e.outcome, &e.event_type);
            let message =
                format!("outcome {outcome:?} of {event_type:?}; expected one of \"{allowed}\"");
            self.profile_rule(rule, "event", e.offset, message);
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
            && let (Some(id), Ok(x)) = (map.get("ID"), self.xref.as_mut())
        {
            x.top_file(id, offset);
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
        // Its PREMIS object is to agree with its attributes (P5.1): checked once the document
        // is read, with the P5.5-P5.7 coherence rules that need the object and its events.
        if let Some(admid) = get("ADMID") {
            let g = &self.profile.file_groups;
            let container = depth == 0
                && [&g.content, &g.original, &g.viral].iter().any(|n| **n == f.group)
                && self.profile.rules.virus_check_per_container;
            let attrs = (get("CHECKSUM"), get("CHECKSUMTYPE"), get("SIZE"));
            if let Ok(x) = self.xref.as_mut() {
                let (sum, sum_type, size) = (&attrs.0, &attrs.1, &attrs.2);
                x.file(
                    (&f.id, &f.group, depth),
                    offset,
                    (sum.as_deref(), sum_type.as_deref(), size.as_deref()),
                    container,
                    &admid,
                );
            }
        }
        self.files.push(f);
    }

    fn end_file(&mut self, _offset: Pos) {
        let Some(f) = self.files.pop() else { return };
        let o = f.element_offset;
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
                // A container without ADMID has no event; one with is checked at the end.
                if container_group
                    && self.profile.rules.virus_check_per_container
                    && !f.attrs.contains_key("ADMID")
                {
                    let term = &self.profile.events.virus_check.term;
                    let message = format!("container {} has no {term:?} event", f.id);
                    self.profile_rule("P5.5", "file", o, message);
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

    /// P5.1 and P5.5-P5.7, across objects, events, relationships and file groups: a file's
    /// attributes agree with its PREMIS object, containers have their virus check, migrated
    /// containers carry their migration event and relationship, transformed and cleaned
    /// bytestreams point at originals kept in the right group, and viral bytestreams are only
    /// in the viral group.
    fn check_premis_coherence(&mut self, x: &Crossrefs) -> Result<(), CrossrefError> {
        let p = self.profile.clone();
        x.described(|d| self.check_described(d))?;
        let term = &p.events.virus_check.term;
        x.containers_unchecked(term, |id, at| {
            self.profile_rule("P5.5", "file", at, format!("container {id} has no {term:?} event"))
        })?;
        let rels = &p.relationships;
        let terms = (
            rels.relationship_type.as_str(),
            rels.migration.as_str(),
            p.events.migration.term.as_str(),
        );
        // P5.6: a migrated container has both the event and the relationship.
        x.described_objects(terms, |o| {
            if o.depth != 0 {
                return;
            }
            let event = &p.events.migration.term;
            let id = &o.file_id;
            match (&o.migrated_from, o.migration_event) {
                (Some(from), false) => self.profile_rule("P5.6", "file", o.at, format!(
                    "container {id} is derived by migration from {from:?}, but no {event:?} event links it"
                )),
                (None, true) => self.profile_rule("P5.6", "file", o.at, format!(
                    "container {id} has a {event:?} event but no {}/{} relationship to its source",
                    rels.relationship_type, rels.migration
                )),
                _ => {}
            }
        })?;
        let transformation = p.events.transformation.term.as_str();
        x.relations((terms.0, transformation), |r| self.check_related(r))?;
        // P5.5: what a virus was found in and not cleaned stays out of the other groups.
        let outcome = &p.virus_outcomes.forced;
        let viral = &p.file_groups.viral;
        x.forced_outside((term, outcome, viral), |id, group, at, detail| {
            self.profile_rule(
                "P5.5",
                "file",
                at,
                format!("{id} is {outcome:?} ({detail}) but is in group {group:?}, not {viral:?}"),
            )
        })
    }

    /// P5.1: a `<file>`'s CHECKSUM, CHECKSUMTYPE and SIZE agree with the PREMIS object its
    /// ADMID token names.
    fn check_described(&mut self, d: crossrefs::Described) {
        let token = &d.token;
        if let (Some(sum), false) = (&d.checksum, d.digest.is_empty()) {
            let digest = &d.digest;
            // Digests by two algorithms say nothing of each other: only the types disagree.
            let same_algorithm = match (&d.checksumtype, d.algorithm.is_empty()) {
                (Some(ct), false) => {
                    let named = |n: &str| crate::formats::digest::FixityAlgorithm::from_name(n);
                    ct.eq_ignore_ascii_case(&d.algorithm)
                        || named(ct).is_some_and(|a| named(&d.algorithm) == Some(a))
                }
                _ => true,
            };
            if same_algorithm && !sum.eq_ignore_ascii_case(digest) {
                let what =
                    format!("CHECKSUM {sum} differs from the PREMIS fixity {digest} of {token}");
                self.error(RULE_DESCRIBED_FIXITY, "file", d.at, what);
            }
            if let Some(ct) = &d.checksumtype
                && !d.algorithm.is_empty()
                && !same_algorithm
            {
                let what = format!("CHECKSUMTYPE {ct} but PREMIS fixity uses {}", d.algorithm);
                self.error(RULE_DESCRIBED_FIXITY, "file", d.at, what);
            }
        }
        if let (Some(s), Some(os)) = (&d.size, &d.object_size)
            && s.trim() != os.trim()
        {
            let what = format!("SIZE {s} differs from the PREMIS size {os} of {token}");
            self.error(RULE_DESCRIBED_FIXITY, "file", d.at, what);
        }
    }

    /// P5.6, P5.7 and P5.5 on one relationship of a described object: a container migrated
    /// from a described source; a transformed bytestream with its event and its original in
    /// the original group; a cleaned copy's original in the viral group.
    fn check_related(&mut self, r: crossrefs::Related) {
        let p = &self.profile;
        let (rels, groups) = (&p.relationships, &p.file_groups);
        let (file_id, target) = (&r.file_id, &r.target);
        let mut found = Vec::new();
        if r.subtype == rels.migration && r.depth == 0 && !r.target_described {
            found.push((
                "P5.6",
                format!("container {file_id} is migrated from {target:?}, which is not described"),
            ));
        }
        if r.subtype == rels.transformation {
            let term = &p.events.transformation.term;
            if !r.transformation_event {
                found.push(("P5.7", format!(
                    "bytestream {file_id} is transformed from {target:?}, but no {term:?} event links it"
                )));
            }
            match &r.target_file {
                Some((g, _)) if *g == groups.original => {}
                Some((g, id)) => found.push((
                    "P5.7",
                    format!(
                        "the original of bytestream {file_id} ({id}) is in group {g:?}, not {:?}",
                        groups.original
                    ),
                )),
                None => found.push((
                    "P5.7",
                    format!(
                        "the original {target:?} of bytestream {file_id} is not in the file section"
                    ),
                )),
            }
        }
        if r.subtype == rels.cleaned
            && r.target_file.as_ref().is_none_or(|(g, _)| *g != groups.viral)
        {
            found.push(("P5.5", format!(
                "bytestream {file_id} is cleaned from {target:?}, which is not a file of group {:?}",
                groups.viral
            )));
        }
        for (rule, message) in found {
            self.profile_rule(rule, "file", r.at, message);
        }
    }

    /// Every IDREF token resolves to an ID, of the kind its attribute names; every ID is used
    /// once (the first element with it keeps it).
    fn check_ids(&mut self, x: &Crossrefs) -> Result<(), CrossrefError> {
        x.duplicate_ids(|id, element, at, first| {
            let what = format!("ID {id:?} is used twice (first at byte {first})");
            self.error("METS-ID", &element, at, what)
        })?;
        x.references(|r| self.check_ref(r))
    }

    /// Checks one IDREF token against the IDs of the document.
    fn check_ref(&mut self, r: crossrefs::Reference) {
        let (attr, value) = (&r.attr, &r.token);
        let want = match attr.as_str() {
            "DMDID" => Some(IdOwner::DmdSec),
            "FILEID" => Some(IdOwner::File),
            _ => None,
        };
        match r.owner.map(IdOwner::from_code) {
            None => {
                let what = match want {
                    Some(w) => format!("no <{}>", w.name()),
                    None => "no ID".into(),
                };
                let message = format!("{attr} {value:?} points at {what}");
                self.error(&r.rule, &r.element, r.at, message)
            }
            Some(found) if want.is_some_and(|w| w != found) => {
                let w = want.map(IdOwner::name).unwrap_or_default();
                let what = match found {
                    IdOwner::Other => "another element".to_string(),
                    f => format!("a <{}>", f.name()),
                };
                let message = format!("{attr} {value:?} points at {what}; expected a <{w}>");
                self.error(&r.rule, &r.element, r.at, message)
            }
            Some(_) => {}
        }
    }

    /// Checks that need the whole document.
    fn finish(&mut self) -> Result<(), CrossrefError> {
        if self.xml_error {
            return Ok(());
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
        let mut x = match std::mem::replace(&mut self.xref, Err(None)) {
            Ok(x) => x,
            Err(Some(e)) => return Err(e),
            Err(None) => return Ok(()),
        };
        x.index()?;
        self.check_ids(&x)?;
        self.check_events(&x)?;
        self.check_premis_coherence(&x)?;
        // P5: the profile says which PREMIS its packages are written in.
        for (major, ns, at) in
            [('2', NS_PREMIS2, self.premis2_at), ('3', NS_PREMIS3, self.premis3_at)]
        {
            if let Some(at) = at
                && self.profile.premis_major() != Some(major)
            {
                let v = self.profile.premis_version.clone();
                let what = format!("PREMIS {major} ({ns}); expected PREMIS {v}");
                self.profile_rule("P5", "premis", at, what);
            }
        }
        self.check_required_sections(&x)
    }

    /// Every event links described objects and agents (P5.3): a rule of the profile, not of
    /// PREMIS, which lets an event link an agent or object described elsewhere.
    fn check_events(&mut self, x: &Crossrefs) -> Result<(), CrossrefError> {
        x.undescribed_event_links(|what, event_type, id, at| {
            let what = format!("event {event_type:?} links {what} {id:?}, which is not described");
            self.profile_rule("P5.3", "event", at, what)
        })
    }

    /// A rights record in webaip's rights schema: an embargo has its end date (P3.3).
    fn check_rights(&mut self, access: &str, until: &str, at: Pos) {
        if self.profile.rules.rights_extension && access == "embargoed" && until.is_empty() {
            let what = "access is embargoed but no embargoUntil date is given".into();
            self.profile_rule("P3.3", "rights", at, what);
        }
    }

    /// The sections the profile requires: metsHdr, MODS and DC, the rights record, the file
    /// section, the physical map listing every top-level file and the logical map's website.
    fn check_required_sections(&mut self, x: &Crossrefs) -> Result<(), CrossrefError> {
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
        if self.profile.rules.rights_extension && self.rights_ext == 0 {
            self.profile_rule(
                "P3.3",
                "rightsMD",
                Pos::START,
                format!("no rights record in the webaip rights schema ({NS_RIGHTS})"),
            );
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
                x.unlisted_files(|id, at| {
                    let what = format!("file {id} is not in the physical structMap");
                    self.profile_rule("P2.5", "file", at, what);
                })?;
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
        Ok(())
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

    /// As the cross-reference tables store it.
    fn code(self) -> u8 {
        match self {
            IdOwner::File => 1,
            IdOwner::DmdSec => 2,
            IdOwner::Other => 3,
        }
    }

    fn from_code(code: u8) -> Self {
        match code {
            1 => IdOwner::File,
            2 => IdOwner::DmdSec,
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

    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use libxml::schemas::{SchemaParserContext, SchemaValidationContext};

    use super::{Finding, SchemaError, Severity};
    use crate::mets::schemas;

    /// libxml2 keeps error handlers in global state; one validation at a time.
    static LIBXML: Mutex<()> = Mutex::new(());

    /// Validates `doc` against `bundle` (a file of `dir`, or of the built-in schemas when
    /// `dir` is `None`) plus webaip's rights schema.
    pub(crate) fn validate(
        doc: &Path,
        dir: Option<&Path>,
        bundle: &str,
    ) -> Result<Vec<Finding>, SchemaError> {
        let tmp_root = std::env::temp_dir();
        crate::temporaries::remove_dead(&tmp_root, schemas::SCHEMA_DIR);
        let (tmp, _lock) = crate::temporaries::locked_dir_in(&tmp_root, schemas::SCHEMA_DIR)
            .map_err(SchemaError::Scratch)?;
        schemas::write_into(tmp.path()).map_err(SchemaError::Scratch)?;
        let dir: PathBuf = dir.unwrap_or(tmp.path()).to_path_buf();
        let bundle = dir.join(bundle);
        let wrapper = wrapper_schema(&dir, &bundle, tmp.path())?;
        let _guard = LIBXML.lock().unwrap_or_else(|p| p.into_inner());
        let mut parser = SchemaParserContext::from_file(&wrapper);
        let mut ctx = SchemaValidationContext::from_parser(&mut parser).map_err(|errs| {
            let first = errs.first().and_then(|e| e.message.clone()).unwrap_or_default();
            SchemaError::Compile { bundle: bundle.clone(), first }
        })?;
        let doc_path = doc.to_str().ok_or(SchemaError::NotUtf8)?;
        Ok(match ctx.validate_file(doc_path) {
            Ok(()) => Vec::new(),
            // libxml2 failed without saying why: never taken for a pass.
            Err(errs) if errs.is_empty() => vec![Finding {
                severity: Severity::Error,
                rule: "XSD".into(),
                line: None,
                element: String::new(),
                message: "libxml2 could not validate the document and gave no diagnostic".into(),
            }],
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
    /// schema (written to `tmp` with the built-in schemas), so one compiled schema covers all.
    fn wrapper_schema(dir: &Path, bundle: &Path, tmp: &Path) -> Result<String, SchemaError> {
        let unreadable = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SchemaError::Unreadable { path, source }
        };
        let text = std::fs::read_to_string(bundle).map_err(unreadable(bundle))?;
        let dir = dir.canonicalize().map_err(unreadable(dir))?;
        let rights = tmp.join("webaip-rights.xsd");
        let mut imports = String::new();
        for line in text.lines().filter(|l| l.trim_start().starts_with("<xs:import")) {
            let ns = attr(line, "namespace").ok_or(SchemaError::Import("namespace"))?;
            let loc = attr(line, "schemaLocation").ok_or(SchemaError::Import("schemaLocation"))?;
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
        std::fs::write(&path, wrapper).map_err(SchemaError::Scratch)?;
        Ok(path.to_string_lossy().into_owned())
    }

    fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
        let start = line.find(&format!("{name}=\""))? + name.len() + 2;
        let end = line[start..].find('"')? + start;
        Some(&line[start..end])
    }
}

/// Why the XML Schema validation was skipped (said in the report).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SchemaError {
    /// A scratch file for the compiled schema cannot be made or written.
    #[error("{why}", why = crate::layout::describe_io(.0))]
    Scratch(io::Error),
    /// The bundle or its directory cannot be read.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Unreadable {
        /// The bundle or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An import of the bundle lacks an attribute.
    #[error("bundle import without {0}")]
    Import(&'static str),
    /// The bundle does not compile (libxml2's first message).
    #[error("the schema bundle {} does not compile: {first}", bundle.display())]
    Compile {
        /// The bundle.
        bundle: PathBuf,
        /// The first message.
        first: String,
    },
    /// The document's path cannot be given to libxml2.
    #[error("document path is not UTF-8")]
    NotUtf8,
    /// This build has no XML Schema support.
    #[cfg(not(feature = "xsd"))]
    #[error("this webaip was built without XML Schema support (feature \"xsd\")")]
    NotBuilt,
}

#[cfg(not(feature = "xsd"))]
mod xsd {
    use std::path::Path;

    pub(crate) fn validate(
        _doc: &Path,
        _dir: Option<&Path>,
        _bundle: &str,
    ) -> Result<Vec<super::Finding>, super::SchemaError> {
        Err(super::SchemaError::NotBuilt)
    }
}
