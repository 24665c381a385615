//! `webaip validate`: one or more METS documents against the schemas and the profile.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use webaip::{
    EARK_CSIP_PROFILE, MetsSeverity, Profile, ValidateError, ValidateOptions, ValidationReport,
    XsdStatus, validate_mets,
};

use super::checked::Checked;
use super::{EXIT_ERROR, EXIT_FINDINGS};

/// `validate --json`, abbreviated, for `--help`.
const JSON_EXAMPLE: &str = r#"Output of --json (abbreviated; "kind" is mets, wacz or eark-csip):
  {"kind": "mets", "valid": true,
   "reports": [{"file": "p/METS.xml", "profile": "bl-webarchive", "valid": true,
                "xsd": {...}, "findings": [], ...}]}"#;

/// Arguments of `webaip validate`.
#[derive(Debug, Args)]
#[command(after_long_help = JSON_EXAMPLE)]
pub struct ValidateArgs {
    /// METS documents; or WACZ files (`.wacz`); or, with `--profile eark-csip`, E-ARK packages
    /// (folders or `.zip`).
    #[arg(required = true)]
    mets: Vec<PathBuf>,
    #[command(flatten)]
    check: MetsCheckArgs,
    /// Print the reports as one JSON object on standard output (no text).
    #[arg(long)]
    json: bool,
    /// Print nothing when every document is valid with every check run; the verdict of any
    /// other (invalid, or valid with the XML Schema check skipped) on standard error.
    #[arg(long, short)]
    quiet: bool,
}

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
        self.profile.as_deref() == Some(EARK_CSIP_PROFILE)
    }

    /// The validation options these arguments ask for (loading the profile; none for
    /// `eark-csip`, whose rules the caller applies).
    pub fn options(&self) -> anyhow::Result<ValidateOptions> {
        let profile = match &self.profile {
            Some(p) if p != EARK_CSIP_PROFILE => Some(Profile::load(p)?),
            _ => None,
        };
        Ok(ValidateOptions { schemas: self.schemas.clone(), profile })
    }
}

/// What `validate` checks: METS documents, WACZ files or E-ARK packages (the JSON's `kind`).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Mets,
    Wacz,
    Eark,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Mets => "mets",
            Kind::Wacz => "wacz",
            Kind::Eark => EARK_CSIP_PROFILE,
        }
    }
}

/// Runs the command; returns the exit status: 0 valid, 1 invalid, 2 unreadable. A `.wacz`
/// gets the WACZ check, and `--profile eark-csip` the E-ARK rules, instead of a METS check.
pub fn run(args: ValidateArgs) -> anyhow::Result<i32> {
    let kind = kind_of(&args)?;
    let opts = match kind {
        Kind::Mets => Some(args.check.options()?),
        _ => None,
    };
    let chatty = !args.json && !args.quiet;
    let mut reports = Vec::new();
    let mut code = 0;
    for path in &args.mets {
        let checked = match (kind, &opts) {
            (Kind::Eark, _) => super::validate_eark::check(path, chatty)?,
            (Kind::Wacz, _) => super::validate_wacz::check(path)?,
            (Kind::Mets, Some(opts)) => check_mets(path, opts)?,
            (Kind::Mets, None) => unreachable!("METS options are made for METS documents"),
        };
        let Some(checked) = checked else {
            code = EXIT_ERROR;
            continue;
        };
        if !checked.valid {
            code = code.max(EXIT_FINDINGS);
        }
        if chatty {
            print!("{}", checked.text);
        } else if args.quiet && !args.json && !checked.plain {
            eprintln!("{}", checked.verdict);
        }
        reports.push(checked.json);
    }
    // An input that could not be read is an error: said on stderr, nothing on stdout.
    if args.json && code != EXIT_ERROR {
        let all = serde_json::json!({"kind": kind.name(), "valid": code == 0, "reports": reports});
        println!("{}", serde_json::to_string_pretty(&all)?);
    }
    Ok(code)
}

/// What the inputs are: E-ARK packages with `--profile eark-csip`, else WACZ files when one
/// is, else METS documents; WACZ files and METS documents are not checked together.
fn kind_of(args: &ValidateArgs) -> anyhow::Result<Kind> {
    if args.check.is_eark() {
        return Ok(Kind::Eark);
    }
    match args.mets.iter().find(|p| !is_wacz(p)) {
        Some(other) if args.mets.iter().any(|p| is_wacz(p)) => {
            anyhow::bail!("{}: give WACZ files and METS documents apart", other.display())
        }
        Some(_) => Ok(Kind::Mets),
        None => Ok(Kind::Wacz),
    }
}

fn is_wacz(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("wacz"))
}

/// One METS document checked; None (the error said on stderr) when it cannot be.
fn check_mets(path: &Path, opts: &ValidateOptions) -> anyhow::Result<Option<Checked>> {
    let r = match validate_mets(path, opts) {
        Ok(r) => r,
        Err(
            e @ (ValidateError::Unreadable { .. }
            | ValidateError::NoBundle { .. }
            | ValidateError::NoBuiltInBundle { .. }
            | ValidateError::Scratch { .. }),
        ) => {
            eprintln!("webaip: {e}");
            return Ok(None);
        }
    };
    let text = report_text(&r);
    let verdict = text.lines().last().unwrap_or_default().to_owned();
    let plain = r.valid && matches!(r.xsd, XsdStatus::Validated { .. });
    Ok(Some(Checked { valid: r.valid, plain, json: serde_json::to_value(&r)?, text, verdict }))
}

/// One METS document's validation as text: each finding, the schema check, the profile and a
/// summary line.
fn report_text(r: &ValidationReport) -> String {
    let mut out = String::new();
    let name = r.file.display();
    for f in &r.findings {
        let sev = f.severity;
        let line = f.line.map(|l| l.to_string()).unwrap_or_else(|| "-".into());
        let element =
            if f.element.is_empty() { String::new() } else { format!(" <{}>", f.element) };
        let _ = writeln!(out, "{name}:{line}: {sev} [{}]{element} {}", f.rule, f.message);
    }
    let _ = match &r.xsd {
        XsdStatus::Validated { bundle, built_in } => {
            let whose = if *built_in { " (built in)" } else { "" };
            writeln!(out, "{name}: XML Schema: validated against {}{whose}", bundle.display())
        }
        XsdStatus::Skipped { reason } => writeln!(out, "{name}: XML Schema: SKIPPED ({reason})"),
    };
    let _ = writeln!(out, "{name}: profile: {}", r.profile_note);
    let count = |s| r.findings.iter().filter(|f| f.severity == s).count();
    let _ = writeln!(
        out,
        "{name}: {} under profile {} ({}): {} errors, {} warnings, {} notes",
        match (&r.xsd, r.valid) {
            (_, false) => "INVALID",
            // Valid by webaip's own checks only: never said as a plain VALID.
            (XsdStatus::Skipped { .. }, true) => "VALID, XML Schema SKIPPED,",
            (XsdStatus::Validated { .. }, true) => "VALID",
        },
        r.profile,
        r.profile_source.describe(),
        count(MetsSeverity::Error),
        count(MetsSeverity::Warning),
        count(MetsSeverity::Info)
    );
    out
}
