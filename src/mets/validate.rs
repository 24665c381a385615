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

use std::fs::File;
use std::io::{self, BufReader};

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::reader::{Event, MetsReader, NS_METS, NS_PREMIS2, NS_PREMIS3};
use crate::profile::Profile;

mod checker;
mod coherence;
mod crossrefs;
mod descriptive;
mod entities;
mod files;
mod premis;
mod references;
mod rules;
mod structure;

use checker::{Checker, PassOutcome};
use crossrefs::CrossrefError;

/// Longest text value kept of one element (an identifier, a date, a note), and longest detail
/// gathered of one event.
const MAX_VALUE: usize = 1 << 20;

/// Dates no WARC-Date or METS date can state reported one by one; the others are counted in
/// one finding.
const MAX_DATE_FINDINGS: u64 = 100;

/// Findings past which wrong references (and event links to undescribed entities) are
/// counted, not listed.
const MAX_REF_FINDINGS: usize = 10_000;
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
pub struct MetsFinding {
    /// How serious.
    pub severity: Severity,
    /// The rule: a docs/profile.md rule number (`P4.6`), `XSD`, `XML` or a METS/PREMIS check name.
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

impl MetsFinding {
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
    pub findings: Vec<MetsFinding>,
    /// True when there is no error.
    pub valid: bool,
}

/// Options for `validate_mets`.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// Directory holding the schema bundle to use instead of the built-in schemas
    /// (`super::schemas`); `None`: the built-in ones.
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
    let file = open_document(path)?;
    let choice = ProfileChoice::of(path, opts);
    let mut checker = Checker::new(opts.profile.clone());
    if let Some(p) = choice.advised.clone() {
        checker.advise(p);
    }
    checker.run(BufReader::with_capacity(256 * 1024, file));
    checker.finish().map_err(scratch(path))?;
    checker.check_entities(path);
    // Its cross-reference state is not kept while the comparison and libxml2 run.
    let mut pass = checker.outcome();
    let (source, profile_note) = choice.confirmed(&pass);
    if pass.profile.name != crate::profile::DEFAULT_PROFILE && !pass.xml_error {
        let differences = differences_from_default(path)?;
        pass.findings.extend(differences);
    }
    let xsd = schema_status(path, opts, &mut pass)?;
    let mut findings = pass.findings;
    findings.sort_by(|a, b| a.line.cmp(&b.line).then(b.severity.cmp(&a.severity)));
    findings.dedup();
    let valid = !findings.iter().any(|f| f.severity == Severity::Error);
    Ok(ValidationReport {
        file: path.to_path_buf(),
        profile: pass.profile.name,
        profile_required: pass.required,
        profile_source: source,
        profile_note,
        xsd,
        well_formed: !pass.xml_error,
        findings,
        valid,
    })
}

/// The document, when it is a regular file: a FIFO or device named as the METS would block or
/// never end.
fn open_document(path: &Path) -> Result<File, ValidateError> {
    let unreadable = |source| ValidateError::Unreadable { path: path.to_path_buf(), source };
    crate::layout::open_user_file(path).map_err(|e| match e {
        crate::layout::ConfineError::Io { source, .. } => unreadable(source),
        other => unreadable(io::Error::new(io::ErrorKind::InvalidInput, other)),
    })
}

/// The scratch database of `path`'s cross-references failed.
fn scratch(path: &Path) -> impl Fn(CrossrefError) -> ValidateError + '_ {
    move |source| ValidateError::Scratch { path: path.to_path_buf(), source }
}

/// Which profile a document is checked under, before it is read, and why.
struct ProfileChoice {
    source: ProfileSource,
    /// A profile chosen from what the document declares (`None`: the given or default one).
    advised: Option<Profile>,
    note: String,
}

impl ProfileChoice {
    fn of(path: &Path, opts: &ValidateOptions) -> Self {
        match &opts.profile {
            Some(p) => ProfileChoice {
                source: ProfileSource::Given,
                advised: None,
                note: format!("profile {} required by --profile", p.name),
            },
            None => {
                let (source, advised, note) = Declared::read(path).choice();
                ProfileChoice { source, advised, note }
            }
        }
    }

    /// The checker reads the root's PROFILE too; it has the last word.
    fn confirmed(self, pass: &PassOutcome) -> (ProfileSource, String) {
        match self.source {
            ProfileSource::Chosen | ProfileSource::Advisory if pass.required => {
                let note = format!("profile {} named by the document", pass.profile.name);
                (ProfileSource::Named, note)
            }
            source => (source, self.note),
        }
    }
}

/// How the document differs from the default profile, as information.
fn differences_from_default(path: &Path) -> Result<Vec<MetsFinding>, ValidateError> {
    let mut compare = Checker::comparing(Profile::default_profile());
    let unreadable = |source| ValidateError::Unreadable { path: path.to_path_buf(), source };
    compare.run(BufReader::with_capacity(256 * 1024, File::open(path).map_err(unreadable)?));
    compare.finish().map_err(scratch(path))?;
    let findings = compare.outcome().findings;
    Ok(findings.into_iter().filter(|f| f.severity == Severity::Info).collect())
}

/// PREMIS 2 sections are checked against PREMIS 2, whichever profile applies: the strict
/// bundle does not know its namespace and would call every `xsi:type="premis:file"` absent.
fn bundle_for(pass: &PassOutcome) -> String {
    let profile = &pass.profile;
    match (pass.premis2, profile.premis_major()) {
        (true, Some(m)) if m != '2' => Profile::by_premis_major('2')
            .map(|p| p.schema_bundle)
            .unwrap_or_else(|| profile.schema_bundle.clone()),
        _ => profile.schema_bundle.clone(),
    }
}

/// XML Schema validation, its findings added to the pass's.
fn schema_status(
    path: &Path,
    opts: &ValidateOptions,
    pass: &mut PassOutcome,
) -> Result<XsdStatus, ValidateError> {
    if pass.xml_error {
        // libxml2 is not given what our reader could not read whole: a document that is not
        // well-formed says so above, and one with a 150 MB attribute would take libxml2's
        // memory and end in "status -1 without a diagnostic".
        let reason = "the document could not be read to its end (see the XML error)".into();
        return Ok(XsdStatus::Skipped { reason });
    }
    if pass.value_cut {
        // libxml2 holds a text value whole to check its type: 150 MB of it took 169 MB.
        let reason = format!("a value is longer than {MAX_VALUE} bytes (see the SIZE error)");
        return Ok(XsdStatus::Skipped { reason });
    }
    if let Some(at) = pass.refs_over {
        // libxml2 keeps every IDREF token to the end: 16 million took 3.3 GB.
        let reason = format!(
            "{}: more than {} IDREF tokens, passed at line {} (byte {}): not checked, to bound memory (see the SIZE notice)",
            path.display(),
            checker::MAX_REF_TOKENS,
            at.line,
            at.offset
        );
        return Ok(XsdStatus::Skipped { reason });
    }
    let bundle_name = bundle_for(pass);
    let dir = opts.schemas.as_deref();
    check_bundle(path, dir, &bundle_name, &pass.profile.name, pass.premis2)?;
    Ok(match xsd::validate(path, dir, &bundle_name) {
        Ok(mut f) => {
            pass.findings.append(&mut f);
            let (bundle, built_in) = match dir {
                Some(d) => (d.join(&bundle_name), false),
                None => (PathBuf::from(&bundle_name), true),
            };
            XsdStatus::Validated { bundle, built_in }
        }
        Err(why) => XsdStatus::Skipped { reason: why.to_string() },
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

#[cfg(feature = "xsd")]
mod xsd {
    //! XML Schema validation through libxml2.

    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use libxml::schemas::{SchemaParserContext, SchemaValidationContext};

    use super::{MetsFinding, SchemaError, Severity};
    use crate::mets::schemas;

    /// libxml2 keeps error handlers in global state; one validation at a time.
    static LIBXML: Mutex<()> = Mutex::new(());

    /// Validates `doc` against `bundle` (a file of `dir`, or of the built-in schemas when
    /// `dir` is `None`) plus webaip's rights schema.
    pub(crate) fn validate(
        doc: &Path,
        dir: Option<&Path>,
        bundle: &str,
    ) -> Result<Vec<MetsFinding>, SchemaError> {
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
            Err(errs) if errs.is_empty() => vec![MetsFinding {
                severity: Severity::Error,
                rule: "XSD".into(),
                line: None,
                element: String::new(),
                message: "libxml2 could not validate the document and gave no diagnostic".into(),
            }],
            Err(errs) => errs
                .into_iter()
                .map(|e| MetsFinding {
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
    ) -> Result<Vec<super::MetsFinding>, super::SchemaError> {
        Err(super::SchemaError::NotBuilt)
    }
}
