//! The checks of `webaip validate`: a METS document ([`validate_mets`]), an E-ARK package
//! ([`validate_eark`]) and a WACZ ([`validate_wacz`]).

use std::path::{Path, PathBuf};

use crate::export::eark::check::{CheckError, CheckReport, MetsPackage, check_package};
use crate::export::wacz::check::WaczReport;

/// The profile name that asks for the E-ARK CSIP rules rather than a webaip profile.
pub const EARK_CSIP_PROFILE: &str = "eark-csip";

/// Checks the METS document at `path` against the official XML schemas (built in, or
/// `options.schemas`) and the package profile (`options.profile`, else the one the document
/// names, as advice). Returns every finding by rule with its line; [`ValidationReport::valid`]
/// says whether an error was found. Fails only when the document cannot be read or the
/// schemas cannot be loaded.
pub fn validate_mets(
    path: &Path,
    options: &ValidateOptions,
) -> Result<ValidationReport, ValidateError> {
    crate::mets::validate_mets(path, options)
}

/// An E-ARK package checked by [`validate_eark`].
#[derive(Debug, Clone)]
pub struct EarkValidation {
    /// The package folder checked.
    pub package: PathBuf,
    /// When a `METS.xml` was given, which package it stands for.
    pub given_mets: Option<MetsPackage>,
    /// The rules broken (MUST: findings; SHOULD and MAY: warnings) and the files verified.
    pub report: CheckReport,
}

impl EarkValidation {
    /// True when no MUST rule is broken (warnings do not make a package invalid).
    pub fn valid(&self) -> bool {
        self.report.findings.is_empty()
    }
}

/// Checks the E-ARK package at `given` (a folder, a `.zip`, or a `METS.xml` standing for its
/// package's folder) against the CSIP 2.2 rules, each named by its identifier, and every
/// file's size and checksum. Fails when the package cannot be read.
pub fn validate_eark(given: &Path) -> Result<EarkValidation, CheckError> {
    let given_mets = crate::export::eark::check::package_around(given);
    let package = given_mets.as_ref().map_or(given, |a| a.folder.as_path()).to_path_buf();
    let report = check_package(&package)?;
    Ok(EarkValidation { package, given_mets, report })
}

/// Checks the WACZ at `path` deeply: its ZIP members, datapackage digests, WARCs, index and
/// pages. Returns the findings ([`WaczReport::valid`] is false when an error is among them);
/// fails when the file cannot be read or is no ZIP.
pub fn validate_wacz(path: &Path) -> Result<WaczReport, WaczCheckError> {
    crate::export::wacz::check::check_wacz(path)
}

pub use crate::export::eark::check::{
    CheckError as CsipCheckError, CheckReport as CsipCheckReport, CsipFinding,
    MetsPackage as EarkMetsPackage,
};
pub use crate::export::wacz::check::{WaczCheckError, WaczReport as WaczCheckReport};
pub use crate::mets::validate::{
    Severity as MetsSeverity, ValidateError, ValidateOptions, ValidationReport, XsdStatus,
};
