//! What every rule family of the checker shares: the profile its rules come from, how serious
//! a broken rule is (required, advisory, or only compared), the findings so far, the dates no
//! WARC can state, and the cross-reference store the families fill while the document streams.

use super::crossrefs::{CrossrefError, Crossrefs};
use super::{MAX_DATE_FINDINGS, MetsFinding, Severity};
use crate::formats::dates::is_stateable_date;
use crate::mets::reader::Pos;
use crate::profile::Profile;

/// The rules' context: one per pass over a document.
pub(super) struct RuleContext {
    /// A profile the caller requires: the document's `PROFILE` does not replace it.
    pub explicit: Option<Profile>,
    /// The profile whose rules apply.
    pub profile: Profile,
    /// True when the profile's rules are requirements (errors), false when advice (warnings).
    pub required: bool,
    /// Set when the pass only reports how a document differs from this profile.
    pub comparing: bool,
    pub findings: Vec<MetsFinding>,
    /// Every ID, IDREF, PREMIS object, event and described file, on disk until the document
    /// is read; `Err(None)` once taken, `Err(Some)` when the scratch database could not be made.
    pub xref: Result<Crossrefs, Option<CrossrefError>>,
    /// Dates WARC and the METS cannot state (a year past 9999).
    bad_dates: u64,
}

impl RuleContext {
    pub fn new(explicit: Option<Profile>) -> Self {
        RuleContext {
            profile: explicit.clone().unwrap_or_else(Profile::default_profile),
            required: explicit.is_some(),
            explicit,
            comparing: false,
            findings: Vec::new(),
            xref: Crossrefs::open().map_err(Some),
            bad_dates: 0,
        }
    }

    /// The cross-reference store, while there is one.
    pub fn xref(&mut self) -> Option<&mut Crossrefs> {
        self.xref.as_mut().ok()
    }

    /// The store, taken for the checks that need the whole document: `Ok(None)` when it
    /// was never made or is already taken.
    pub fn take_xref(&mut self) -> Result<Option<Crossrefs>, CrossrefError> {
        match std::mem::replace(&mut self.xref, Err(None)) {
            Ok(x) => Ok(Some(x)),
            Err(Some(e)) => Err(e),
            Err(None) => Ok(None),
        }
    }

    /// A METS/PREMIS-level error (always an error).
    pub fn error(&mut self, rule: &str, element: &str, at: Pos, message: String) {
        self.push(Severity::Error, rule, element, at, message);
    }

    /// Something an auditor must know that is not a fault of the document.
    pub fn notice(&mut self, rule: &str, element: &str, at: Pos, message: String) {
        let severity = if self.comparing { Severity::Info } else { Severity::Warning };
        self.push(severity, rule, element, at, message);
    }

    /// A profile rule: an error when the profile is required, else a warning.
    pub fn profile_rule(&mut self, rule: &str, element: &str, at: Pos, message: String) {
        let severity = match (self.comparing, self.required) {
            (true, _) => Severity::Info,
            (false, true) => Severity::Error,
            (false, false) => Severity::Warning,
        };
        let message = format!("{} (profile {})", message, self.profile.name);
        self.push(severity, rule, element, at, message);
    }

    fn push(&mut self, severity: Severity, rule: &str, element: &str, at: Pos, message: String) {
        self.findings.push(MetsFinding {
            severity,
            rule: rule.into(),
            line: Some(at.line),
            element: element.into(),
            message,
        });
    }

    /// Reports a date WARC and the METS cannot state (W3C-DTF, `xs:dateTime`: four-digit
    /// years): a capture dated `+10000-01-01T00:00:00Z` is no capture date. The first
    /// [`MAX_DATE_FINDINGS`] are listed, the others counted.
    pub fn check_date(&mut self, element: &str, what: &str, value: &str, at: Pos) {
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

    /// The dates past the listed ones, in one finding.
    pub fn count_unlisted_dates(&mut self) {
        if self.bad_dates > MAX_DATE_FINDINGS {
            self.findings.push(MetsFinding {
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
    }
}
