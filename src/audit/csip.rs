//! E-ARK packages in `audit`: a METS whose root claims an E-ARK profile (a DILCIS `PROFILE`
//! or CSIP attributes), or any package under `--profile eark-csip`, is judged by the E-ARK CSIP
//! rules, as `validate --profile eark-csip` judges it ([`crate::export::eark::check`]). webaip's
//! own METS rules, written for its own packages, are then advice: a CSIP structMap points its
//! `fptr` at file groups by design, which webaip's profile calls a wrong reference.

use std::io::BufReader;
use std::path::Path;

use serde::Serialize;

use super::AuditFinding;
use crate::export::eark::NS_CSIP;
use crate::export::eark::check::{CheckError, check_package};
use crate::mets::reader::{Event, MetsReader};
use crate::mets::validate::{Severity, ValidationReport};

/// What the E-ARK rules found about the description (what they found about the bytes is
/// among the audit's byte findings).
#[derive(Debug, Clone, Serialize)]
pub struct CsipCheck {
    /// Each rule broken: the file, the line in it (`mets_line`), the rule's identifier.
    pub findings: Vec<AuditFinding>,
    /// Files of every METS (root and representations) whose size and checksum were verified.
    pub files_verified: u64,
}

/// True when the root element of `mets` claims an E-ARK profile.
pub(crate) fn claims_csip(mets: &Path) -> bool {
    let Ok(file) = crate::layout::open_user_file(mets) else { return false };
    let mut reader = MetsReader::lenient(BufReader::with_capacity(64 * 1024, file));
    while let Ok(Some(event)) = reader.next() {
        let (Event::Start(e, _) | Event::Empty(e, _)) = event else { continue };
        let profile = e.attr("PROFILE").unwrap_or_default();
        return profile.contains("dilcis.eu/profile/E-ARK")
            || e.attrs.iter().any(|a| a.ns == NS_CSIP);
    }
    false
}

/// Checks the package in `dir` by the E-ARK rules: each finding about the bytes (a listed
/// file missing or changed) goes to `bytes`, the others are returned. The webaip-profile
/// errors of `validation` become warnings (XML and XML Schema errors stay errors: they hold
/// for any METS).
pub(crate) fn check(
    dir: &Path,
    validation: &mut ValidationReport,
    bytes: &mut Vec<AuditFinding>,
) -> Result<CsipCheck, CheckError> {
    let report = check_package(dir)?;
    for f in validation.findings.iter_mut() {
        let any_mets = matches!(f.rule.as_str(), "XML" | "XSD") || f.is_inconsistency();
        if f.severity == Severity::Error && !any_mets {
            f.severity = Severity::Warning;
        }
    }
    validation.valid = !validation.findings.iter().any(|f| f.severity == Severity::Error);
    validation.profile_note.push_str(
        "; an E-ARK package: judged by the E-ARK CSIP rules, webaip's profile rules are advice",
    );
    let (about_bytes, described): (Vec<_>, Vec<_>) =
        report.findings.into_iter().partition(|f| f.about_bytes);
    let audit_finding = |severity, f: crate::export::eark::check::CsipFinding| AuditFinding {
        severity,
        rule: f.rule,
        file: f.path,
        offset: None,
        mets_id: None,
        mets_line: Some(f.line),
        message: f.message,
    };
    bytes.extend(about_bytes.into_iter().map(|f| audit_finding(Severity::Error, f)));
    // SHOULD and MAY rules not followed are advice: listed, never a reason for a verdict.
    let advice = report.warnings.into_iter().map(|f| audit_finding(Severity::Warning, f));
    let findings =
        described.into_iter().map(|f| audit_finding(Severity::Error, f)).chain(advice).collect();
    Ok(CsipCheck { findings, files_verified: report.files_verified })
}
