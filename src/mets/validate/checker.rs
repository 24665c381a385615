//! The streaming pass: reads the document once and hands each element to the rule families
//! (structure, identifiers and references, file section, PREMIS, descriptions), each of which
//! keeps its own state; the rules that need the whole document run at its end, in the order
//! the reports have always listed them.

use std::io::BufRead;
use std::path::Path;

use super::crossrefs::CrossrefError;
use super::descriptive::Descriptive;
use super::files::FileSection;
use super::premis::PremisSections;
use super::rules::RuleContext;
use super::structure::StructureRules;
use super::{MAX_VALUE, MetsFinding, coherence, entities, premis, references};
use crate::mets::reader::{Element, Event, MetsError, MetsReader, MetsRefusal, NS_METS, Pos};
use crate::profile::Profile;

/// The text of the element a rule reads, kept to [`MAX_VALUE`] bytes.
#[derive(Default)]
struct ValueText {
    text: Option<String>,
    /// Set once the value being read was cut (reported once).
    cut: bool,
    /// Set when any value was cut: libxml2, which holds a value whole, is then not run.
    any_cut: bool,
}

impl ValueText {
    /// Appends `t`; returns true when this is where the value was first cut. Text split by
    /// comments into events under the reader's bound would otherwise gather without one
    /// (152 MB took 482 MB).
    fn push(&mut self, t: &str) -> bool {
        let Some(v) = self.text.as_mut() else { return false };
        let mut cut = MAX_VALUE.saturating_sub(v.len()).min(t.len());
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        v.push_str(&t[..cut]);
        let first_cut = cut < t.len() && !self.cut;
        if first_cut {
            self.cut = true;
            self.any_cut = true;
        }
        first_cut
    }

    /// The value read, trimmed; reading starts over.
    fn take(&mut self) -> String {
        self.cut = false;
        self.text.take().map(|t| t.trim().to_string()).unwrap_or_default()
    }
}

/// IDREF tokens (of the reference attributes the bundled schemas type IDREF or IDREFS:
/// METS's `ADMID`, `DMDID`, `FILEID`..., PREMIS's `LinkAgentXmlID`...) a document handed to
/// libxml2's schema validation may hold. libxml2 keeps each one to the document's end, about
/// 200 bytes of memory a token (16 million took 3.3 GB and 3.6 minutes). A document with more
/// is not schema-validated (a `SIZE` notice says why; the schemas are reported skipped).
pub(super) const MAX_REF_TOKENS: u64 = 1_000_000;

/// Attributes the bundled schemas (xsd/) type IDREF or IDREFS, by local name: METS (and
/// `CONTENTIDS`, a list of URIs libxml2 holds the same way), PREMIS 3 and 2 (whose `ADMID`
/// is METS's name), MODS 3.8's `IDREF`. Counted on any element whatever its namespace (an
/// element of an unknown namespace under `xmlData` is skipped by the schemas, so counting it
/// costs nothing but care); the schemas' are unqualified, and a prefixed one counts too (the
/// safe side).
const REF_ATTRIBUTES: [&str; 13] = [
    "ADMID",
    "DMDID",
    "FILEID",
    "STRUCTID",
    "CONTENTIDS",
    "TRANSFORMBEHAVIOR",
    "LinkAgentXmlID",
    "LinkEventXmlID",
    "LinkObjectXmlID",
    "LinkPermissionStatementXmlID",
    "RelEventXmlID",
    "RelObjectXmlID",
    "IDREF",
];

/// The IDREF tokens read so far, and where they first passed [`MAX_REF_TOKENS`].
#[derive(Default)]
struct RefTokens {
    count: u64,
    over_at: Option<Pos>,
}

impl RefTokens {
    /// Counts the reference attributes of element `e` (of any namespace), at `at`; true when
    /// this element is where the bound was first passed.
    fn count(&mut self, e: &Element, at: Pos) -> bool {
        let refs = e.attrs.iter().filter(|a| REF_ATTRIBUTES.contains(&&*a.local));
        let tokens: usize = refs.map(|a| a.value.split_ascii_whitespace().count()).sum();
        self.count = self.count.saturating_add(tokens as u64);
        let first = self.count > MAX_REF_TOKENS && self.over_at.is_none();
        if first {
            self.over_at = Some(at);
        }
        first
    }
}

/// What a pass concluded, for the report.
pub(super) struct PassOutcome {
    /// The profile that applied (the root's `PROFILE` may have named it).
    pub profile: Profile,
    pub findings: Vec<MetsFinding>,
    /// True when that profile's rules are requirements.
    pub required: bool,
    /// The document could not be read to its end.
    pub xml_error: bool,
    /// A value was longer than [`MAX_VALUE`].
    pub value_cut: bool,
    /// Where the IDREF tokens passed [`MAX_REF_TOKENS`] (the element that passed it).
    pub refs_over: Option<Pos>,
    /// The document has PREMIS 2 sections.
    pub premis2: bool,
}

/// The streaming pass and its rule families.
pub(super) struct Checker {
    cx: RuleContext,
    /// The local names of the open elements.
    ancestors: Vec<String>,
    value: ValueText,
    refs: RefTokens,
    structure: StructureRules,
    files: FileSection,
    premis: PremisSections,
    descriptive: Descriptive,
    xml_error: bool,
}

impl Checker {
    /// A pass under `explicit` (required), else under the profile the document names, else
    /// the default profile as advice.
    pub fn new(explicit: Option<Profile>) -> Self {
        Checker {
            cx: RuleContext::new(explicit),
            ancestors: Vec::new(),
            value: ValueText::default(),
            refs: RefTokens::default(),
            structure: StructureRules::default(),
            files: FileSection::default(),
            premis: PremisSections::default(),
            descriptive: Descriptive::default(),
            xml_error: false,
        }
    }

    /// A pass that only reports how a document differs from `profile`, as information.
    pub fn comparing(profile: Profile) -> Self {
        let mut c = Checker::new(Some(profile));
        c.cx.comparing = true;
        c
    }

    /// Applies `profile` (chosen from what the document declares), as advice.
    pub fn advise(&mut self, profile: Profile) {
        self.cx.profile = profile;
    }

    pub fn run(&mut self, input: impl BufRead) {
        let mut reader = MetsReader::lenient(input);
        loop {
            match reader.next() {
                Ok(Some(event)) => self.event(event),
                Ok(None) => break,
                Err(e) => return self.not_well_formed(&reader, &e),
            }
        }
    }

    fn not_well_formed<R: BufRead>(&mut self, reader: &MetsReader<R>, e: &MetsError) {
        self.xml_error = true;
        let message = match e {
            MetsError::Xml { source, pos } => {
                let column = reader.column_at(pos.offset);
                format!("not well-formed XML (column {column}): {source}")
            }
            MetsError::Refused { refusal, .. } => refusal.to_string(),
            MetsError::Unfinished { column, unfinished, .. } => {
                format!("not well-formed XML (column {column}): {unfinished}")
            }
        };
        self.cx.error("XML", "", e.pos(), message);
        // A NUL before the point the parser stopped at is reported too.
        if let Some(nul) = reader.first_nul() {
            self.cx.error("XML", "", nul, MetsRefusal::Nul.to_string());
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
                if self.value.push(&t) {
                    let what = format!(
                        "a value longer than {MAX_VALUE} bytes: only its start is checked (no METS value of a package is that long)"
                    );
                    self.cx.error("SIZE", "", at, what);
                }
            }
            Event::Refused(r, at) => self.cx.error("XML", "", at, r.to_string()),
        }
    }

    fn start(&mut self, e: &Element, at: Pos) {
        let cx = &mut self.cx;
        if e.ns == NS_METS {
            references::start(cx, e, at, self.structure.map());
        }
        // PREMIS's links are IDREFs too, whatever element holds them: one bound over every
        // attribute the schemas type so.
        if self.refs.count(e, at) {
            let what = format!(
                "more than {MAX_REF_TOKENS} IDREF tokens (METS ADMID, DMDID, FILEID..., PREMIS LinkAgentXmlID...) from here on (byte {}): the XML Schemas are not checked (libxml2 would keep every one, about 200 bytes each)",
                at.offset
            );
            // A notice, not an error: a package of a million files is not invalid for
            // its size; the skipped schemas are reported as such.
            cx.notice("SIZE", &e.local, at, what);
        }
        self.structure.start(cx, e, at);
        self.files.start(cx, e, at);
        let premis_text = self.premis.start(cx, e, at);
        let descriptive_text = self.descriptive.start(e, at, &self.ancestors);
        self.ancestors.push(e.local.clone());
        if premis_text || descriptive_text {
            self.value.text = Some(String::new());
        }
    }

    fn end(&mut self, ns: &str, local: &str, at: Pos) {
        let text = self.value.take();
        self.ancestors.pop();
        let cx = &mut self.cx;
        self.structure.end(ns, local);
        self.files.end(cx, ns, local);
        self.premis.end(cx, ns, local, &text);
        self.descriptive.end(cx, ns, local, &text, at);
    }

    /// The rules that need the whole document.
    pub fn finish(&mut self) -> Result<(), CrossrefError> {
        if self.xml_error {
            return Ok(());
        }
        let cx = &mut self.cx;
        cx.count_unlisted_dates();
        let Some(mut x) = cx.take_xref()? else { return Ok(()) };
        x.index()?;
        references::check(cx, &x)?;
        premis::check_event_links(cx, &x)?;
        coherence::check(cx, &x)?;
        self.premis.check_version(cx);
        // The sections the profile requires.
        self.structure.require_header(cx);
        self.descriptive.require(cx);
        self.files.require(cx);
        self.structure.require_maps(cx, &x)
    }

    /// Checks the curator entities the pass found against their MODS and their records; the
    /// containers are looked for next to the METS document at `path`.
    pub fn check_entities(&mut self, path: &Path) {
        if self.xml_error || self.cx.comparing {
            return;
        }
        let found = self.structure.take_entities();
        entities::check(&mut self.cx, &found, path);
    }

    pub fn outcome(self) -> PassOutcome {
        PassOutcome {
            premis2: self.premis.premis2_at().is_some(),
            profile: self.cx.profile,
            findings: self.cx.findings,
            required: self.cx.required,
            xml_error: self.xml_error,
            value_cut: self.value.any_cut,
            refs_over: self.refs.over_at,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::mets::descriptive::RIGHTS_NS;

    /// A small package under the default profile that breaks no rule, with `extra` METS
    /// elements after its package-level amdSec.
    pub(crate) fn package(extra: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:premis="http://www.loc.gov/premis/v3" xmlns:mods="http://www.loc.gov/mods/v3" xmlns:rights="{RIGHTS_NS}" OBJID="pkg-1" TYPE="AIP" PROFILE="urn:webaip:profile:bl-webarchive:1.0">
<mets:metsHdr CREATEDATE="2024-01-01T00:00:00Z"/>
<mets:dmdSec ID="dmd-web"><mets:mdWrap MDTYPE="MODS"><mets:xmlData><mods:mods><mods:originInfo><mods:dateCaptured encoding="w3cdtf">2024-01-01</mods:dateCaptured></mods:originInfo></mods:mods></mets:xmlData></mets:mdWrap></mets:dmdSec>
<mets:dmdSec ID="dmd-dc"><mets:mdWrap MDTYPE="DC"/></mets:dmdSec>
<mets:amdSec ID="amd-pkg"><mets:rightsMD ID="rights-1"><mets:mdWrap MDTYPE="OTHER"><mets:xmlData><rights:rights><rights:access>open</rights:access></rights:rights></mets:xmlData></mets:mdWrap></mets:rightsMD></mets:amdSec>
{extra}
<mets:amdSec ID="amd-1"><mets:techMD ID="tech-1"><mets:mdWrap MDTYPE="PREMIS:OBJECT"><mets:xmlData><premis:object xsi:type="premis:file"><premis:objectIdentifier><premis:objectIdentifierValue>obj-1</premis:objectIdentifierValue></premis:objectIdentifier><premis:objectCharacteristics><premis:fixity><premis:messageDigestAlgorithm>SHA-512</premis:messageDigestAlgorithm><premis:messageDigest>SUM</premis:messageDigest></premis:fixity><premis:size>10</premis:size></premis:objectCharacteristics></premis:object></mets:xmlData></mets:mdWrap></mets:techMD>
<mets:digiprovMD ID="prov-1"><mets:mdWrap MDTYPE="PREMIS:EVENT"><mets:xmlData><premis:event><premis:eventType>virus check</premis:eventType><premis:eventOutcomeInformation><premis:eventOutcome>no virus detected</premis:eventOutcome></premis:eventOutcomeInformation><premis:linkingAgentIdentifier><premis:linkingAgentIdentifierValue>agent-1</premis:linkingAgentIdentifierValue></premis:linkingAgentIdentifier><premis:linkingObjectIdentifier><premis:linkingObjectIdentifierValue>obj-1</premis:linkingObjectIdentifierValue></premis:linkingObjectIdentifier></premis:event></mets:xmlData></mets:mdWrap></mets:digiprovMD>
<mets:digiprovMD ID="agent-md"><mets:mdWrap MDTYPE="PREMIS:AGENT"><mets:xmlData><premis:agent><premis:agentIdentifier><premis:agentIdentifierValue>agent-1</premis:agentIdentifierValue></premis:agentIdentifier></premis:agent></mets:xmlData></mets:mdWrap></mets:digiprovMD></mets:amdSec>
<mets:fileSec><mets:fileGrp USE="DigitalManifestation"><mets:file ID="file-1" MIMETYPE="application/warc" SIZE="10" CHECKSUM="SUM" CHECKSUMTYPE="SHA-512" ADMID="amd-1" CREATED="2024-01-01T00:00:00Z"><mets:FLocat LOCTYPE="URL" xlink:href="data/a.warc.gz"/><mets:transformFile TRANSFORMORDER="1" TRANSFORMTYPE="decompression" TRANSFORMALGORITHM="WARC"/></mets:file></mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="logical"><mets:div TYPE="WEBSITE" DMDID="dmd-web dmd-dc" ADMID="amd-pkg"><mets:fptr FILEID="file-1"/></mets:div></mets:structMap>
<mets:structMap TYPE="physical"><mets:div><mets:fptr FILEID="file-1"/></mets:div></mets:structMap>
</mets:mets>
"#
        )
    }

    /// The findings of the streaming pass and the whole-document rules, in the order found.
    pub(crate) fn findings_of(doc: &str) -> Vec<MetsFinding> {
        let mut c = Checker::new(None);
        c.run(doc.as_bytes());
        c.finish().unwrap();
        c.outcome().findings
    }

    /// The findings of these rules.
    pub(crate) fn rules_of<'a>(found: &'a [MetsFinding], rules: &[&str]) -> Vec<&'a MetsFinding> {
        found.iter().filter(|f| rules.contains(&f.rule.as_str())).collect()
    }

    #[test]
    fn the_sample_package_breaks_no_rule() {
        assert_eq!(findings_of(&package("")), []);
    }

    #[test]
    fn a_value_past_the_bound_is_cut_and_reported_once() {
        let long = "9".repeat(MAX_VALUE + 10);
        let doc = package("").replace("<premis:size>10<", &format!("<premis:size>{long}<"));
        let mut c = Checker::new(None);
        c.run(doc.as_bytes());
        c.finish().unwrap();
        let out = c.outcome();
        let size: Vec<_> = out.findings.iter().filter(|f| f.rule == "SIZE").collect();
        assert_eq!(size.len(), 1, "{:?}", out.findings.len());
        assert!(out.value_cut);
    }

    #[test]
    fn a_document_cut_short_is_not_well_formed_and_has_no_whole_document_rules() {
        let doc = package("");
        let mut c = Checker::new(None);
        c.run(&doc.as_bytes()[..doc.len() / 2]);
        c.finish().unwrap();
        let out = c.outcome();
        assert!(out.xml_error);
        assert_eq!(out.findings.len(), 1, "{:?}", out.findings);
        assert_eq!(out.findings[0].rule, "XML");
        assert!(out.findings[0].message.starts_with("not well-formed XML"), "{:?}", out.findings);
    }
}
