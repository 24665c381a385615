//! `webaip validate`: one or more METS documents against the schemas and the profile.

use std::path::PathBuf;

use clap::Args;

use webaip::mets::validate::{Severity, ValidateError, ValidationReport, XsdStatus};
use webaip::mets::{ValidateOptions, validate_mets};
use webaip::profile::Profile;

use super::{EXIT_ERROR, EXIT_FINDINGS};

/// Arguments of `webaip validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// METS documents; or WACZ files (`.wacz`); or, with `--profile eark-csip`, E-ARK packages
    /// (folders or `.zip`).
    #[arg(required = true)]
    mets: Vec<PathBuf>,
    #[command(flatten)]
    check: MetsCheckArgs,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// The profile name that asks for the E-ARK CSIP rules.
const EARK_CSIP: &str = "eark-csip";

/// How a METS is checked: shared by `validate` and `audit`.
#[derive(Debug, Args)]
pub struct MetsCheckArgs {
    /// Directory whose schema bundle (mets-bundle.xsd ...) replaces the official schemas built
    /// into webaip; default: $WEBAIP_SCHEMAS, else the built-in ones.
    #[arg(long, env = "WEBAIP_SCHEMAS")]
    schemas: Option<PathBuf>,
    /// Profile to require (bl-webarchive, bl-legacy, or a .toml file). Default: the profile the
    /// document's PROFILE names; if it names none webaip knows, the one its PREMIS version fits
    /// (PREMIS 2: bl-legacy; else bl-webarchive), as advice (warnings only). eark-csip: the
    /// E-ARK CSIP rules (validate, audit).
    #[arg(long)]
    profile: Option<String>,
}

impl MetsCheckArgs {
    /// True for `--profile eark-csip`: the E-ARK rules, not a webaip profile.
    pub fn is_eark(&self) -> bool {
        self.profile.as_deref() == Some(EARK_CSIP)
    }

    /// The validation options these arguments ask for (loading the profile; none for
    /// `eark-csip`, whose rules the caller applies).
    pub fn options(&self) -> anyhow::Result<ValidateOptions> {
        let profile = match &self.profile {
            Some(p) if p != EARK_CSIP => Some(Profile::load(p)?),
            _ => None,
        };
        Ok(ValidateOptions { schemas: self.schemas.clone(), profile })
    }
}

/// Runs the command; returns the exit status: 0 valid, 1 invalid, 2 unreadable. A `.wacz`
/// gets the WACZ check, and `--profile eark-csip` the E-ARK rules, instead of a METS check.
pub fn run(args: ValidateArgs) -> anyhow::Result<i32> {
    if args.check.is_eark() || args.mets.iter().any(|p| is_wacz(p)) {
        return validate_packages(&args);
    }
    let opts = args.check.options()?;
    let mut reports = Vec::new();
    let mut code = 0;
    for path in &args.mets {
        match validate_mets(path, &opts) {
            Ok(r) => {
                if !r.valid {
                    code = code.max(EXIT_FINDINGS);
                }
                reports.push(r);
            }
            Err(
                e @ (ValidateError::Unreadable { .. }
                | ValidateError::NoBundle { .. }
                | ValidateError::NoBuiltInBundle { .. }
                | ValidateError::Scratch { .. }),
            ) => {
                eprintln!("webaip: {e}");
                code = EXIT_ERROR;
            }
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
        return Ok(code);
    }
    reports.iter().for_each(print_report);
    Ok(code)
}

fn is_wacz(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("wacz"))
}

/// Validates packages rather than METS documents: WACZ files, or E-ARK packages with
/// `--profile eark-csip`.
fn validate_packages(args: &ValidateArgs) -> anyhow::Result<i32> {
    let eark = args.check.is_eark();
    let mut code = 0;
    for path in &args.mets {
        let c = match eark {
            true => super::validate_eark::run(path, args.json)?,
            false if is_wacz(path) => super::validate_wacz::run(path, args.json)?,
            false => anyhow::bail!("{}: give WACZ files and METS documents apart", path.display()),
        };
        code = code.max(c);
    }
    Ok(code)
}

/// One METS document's validation as text: each finding, the schema check, the profile and a
/// summary line.
fn print_report(r: &ValidationReport) {
    let name = r.file.display();
    for f in &r.findings {
        let sev = f.severity;
        let line = f.line.map(|l| l.to_string()).unwrap_or_else(|| "-".into());
        let element =
            if f.element.is_empty() { String::new() } else { format!(" <{}>", f.element) };
        println!("{name}:{line}: {sev} [{}]{element} {}", f.rule, f.message);
    }
    match &r.xsd {
        XsdStatus::Validated { bundle, built_in } => {
            let whose = if *built_in { " (built in)" } else { "" };
            println!("{name}: XML Schema: validated against {}{whose}", bundle.display())
        }
        XsdStatus::Skipped { reason } => println!("{name}: XML Schema: SKIPPED ({reason})"),
    }
    println!("{name}: profile: {}", r.profile_note);
    let count = |s| r.findings.iter().filter(|f| f.severity == s).count();
    println!(
        "{name}: {} under profile {} ({}): {} errors, {} warnings, {} notes",
        if r.valid { "VALID" } else { "INVALID" },
        r.profile,
        r.profile_source.describe(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info)
    );
}
