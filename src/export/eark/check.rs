//! The E-ARK CSIP 2.2 rules (and SIP 2.2's for a SIP), each reported by its identifier: the
//! package structure (CSIPSTR), the root METS and each representation METS, and the files the
//! METS documents list (present, of the size and SHA-256/SHA-512 they state).
//!
//! Each METS document streams once through the METS reader, the rules applied as it passes
//! (`check::rules`): memory grows with the number of files it lists, not with its size. A ZIP is
//! unpacked to a temporary folder first, within a cap on members and bytes (`check::unzip`).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256, Sha512};

use crate::layout;
use crate::mets::reader::Element;

mod rules;
mod unzip;

pub use unzip::Refusal;

/// One rule broken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file (inside the package) it is about.
    pub path: String,
    /// The line in that file (1 when it is about the whole file or the structure).
    pub line: u64,
    /// The rule's identifier (`CSIP71`, `CSIPSTR4`, `SIP2`).
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

impl Finding {
    /// A finding about `path` at `line`.
    fn at(path: &str, line: u64, rule: &str, message: impl Into<String>) -> Self {
        Finding { path: path.to_string(), line, rule: rule.into(), message: message.into() }
    }
}

/// The verdict on one package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    /// Rules broken.
    pub findings: Vec<Finding>,
    /// Files whose size and checksum were verified.
    pub files_verified: u64,
}

/// Why a package could not be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Reading failed.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A ZIP entry would land outside the folder, or is a link.
    #[error("{}: entry {name:?} leaves the package or is a link", path.display())]
    Unsafe {
        /// The file.
        path: PathBuf,
        /// The entry's name.
        name: String,
    },
    /// The ZIP is not unpacked: a zip bomb, or no room for it.
    #[error("{}: refused to unpack: {reason}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        reason: Refusal,
    },
    /// The ZIP cannot be read.
    #[error("{}: {source}", path.display())]
    Zip {
        /// The file.
        path: PathBuf,
        /// The error.
        source: zip::result::ZipError,
    },
}

/// A file a METS lists, to verify.
struct Listed {
    href: Option<String>,
    size: Option<String>,
    checksum: Option<String>,
    checksum_type: Option<String>,
    line: u64,
    size_rule: String,
    checksum_rule: String,
}

impl Listed {
    fn of(el: &Element, line: u64, size_rule: String, checksum_rule: String) -> Listed {
        let attr =
            |local: &str| el.attr(local).filter(|v| !v.trim().is_empty()).map(str::to_string);
        Listed {
            href: el.href().map(str::to_string),
            size: attr("SIZE"),
            checksum: attr("CHECKSUM"),
            checksum_type: attr("CHECKSUMTYPE"),
            line,
            size_rule,
            checksum_rule,
        }
    }
}

/// Findings about one document.
struct Doc<'a> {
    name: String,
    out: &'a mut Vec<Finding>,
}

impl Doc<'_> {
    fn find(&mut self, line: u64, rule: &str, message: impl Into<String>) {
        self.out.push(Finding::at(&self.name, line, rule, message));
    }
}

/// Checks that each listed file is there with its stated size and checksum.
fn verify_files(d: &mut Doc<'_>, dir: &Path, root: &Path, files: &[Listed], verified: &mut u64) {
    for f in files {
        let Some(href) = &f.href else { continue };
        let full = dir.join(href);
        let rel = full
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| href.clone());
        let file = match layout::open_in(root, &rel) {
            Ok(file) => file,
            Err(e) => {
                d.find(f.line, &f.size_rule, format!("{href}: {e}"));
                continue;
            }
        };
        let (size, sha256, sha512) = match digest(file) {
            Ok(x) => x,
            Err(e) => {
                d.find(f.line, &f.size_rule, format!("{href}: {e}"));
                continue;
            }
        };
        if f.size.as_deref().is_some_and(|s| s.parse::<u64>().ok() != Some(size)) {
            d.find(
                f.line,
                &f.size_rule,
                format!("{href}: SIZE {:?}, the file has {size} bytes", f.size),
            );
        }
        let have = match f.checksum_type.as_deref() {
            Some("SHA-256") => Some(sha256),
            Some("SHA-512") => Some(sha512),
            _ => None,
        };
        if let (Some(have), Some(stated)) = (have, &f.checksum)
            && !have.eq_ignore_ascii_case(stated)
        {
            d.find(
                f.line,
                &f.checksum_rule,
                format!("{href}: CHECKSUM {stated} does not match the file ({have})"),
            );
        }
        *verified += 1;
    }
}

fn digest(file: File) -> std::io::Result<(u64, String, String)> {
    let mut r = BufReader::with_capacity(1 << 20, file);
    let (mut a, mut b) = (Sha256::new(), Sha512::new());
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        a.update(&buf[..n]);
        b.update(&buf[..n]);
        size += n as u64;
    }
    let hex = |d: &[u8]| data_encoding::HEXLOWER.encode(d);
    Ok((size, hex(&a.finalize()), hex(&b.finalize())))
}

/// Checks one METS document (`rel` below `root`); returns the representation METS it points at.
fn check_mets(
    root: &Path,
    rel: &str,
    is_root: bool,
    report: &mut CheckReport,
) -> Vec<(String, u64)> {
    let path = root.join(rel);
    let mut rules = rules::Rules::new(rel, is_root, &mut report.findings);
    let read = rules::apply(&path, &mut rules);
    let (files, reps) = (std::mem::take(&mut rules.files), std::mem::take(&mut rules.reps));
    if let Err((line, msg)) = read {
        report.findings.push(Finding {
            path: rel.into(),
            line,
            rule: "CSIP1".into(),
            message: format!("not a readable METS document: {msg}"),
        });
        return Vec::new();
    }
    let mut d = Doc { name: rel.to_string(), out: &mut report.findings };
    let dir = path.parent().unwrap_or(root).to_path_buf();
    verify_files(&mut d, &dir, root, &files, &mut report.files_verified);
    reps
}

/// The structure rules (CSIPSTR) of a package folder.
fn structure_rules(root: &Path, report: &mut CheckReport) -> bool {
    let f = |rule: &str, path: &str, m: String| Finding {
        path: path.into(),
        line: 1,
        rule: rule.into(),
        message: m,
    };
    if layout::metadata_in(root, "METS.xml").is_err() {
        report.findings.push(f("CSIPSTR4", "METS.xml", "the package root has no METS.xml".into()));
        return false;
    }
    let reps = root.join("representations");
    if let Ok(entries) = std::fs::read_dir(&reps) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir()
                && layout::metadata_in(root, &format!("representations/{name}/METS.xml")).is_err()
            {
                report.findings.push(f(
                    "CSIPSTR12",
                    &format!("representations/{name}"),
                    "the representation has no METS.xml".into(),
                ));
            }
        }
    }
    true
}

/// Checks the package at `path`: a folder, or a `.zip` holding one root folder.
pub fn check_package(path: &Path) -> Result<CheckReport, CheckError> {
    let mut report = CheckReport::default();
    let io = |source| CheckError::Io { path: path.to_path_buf(), source };
    let _tmp;
    let root = if path.is_file() {
        let tmp = tempfile::tempdir().map_err(io)?;
        let Some(root) = unzip::unpack(path, tmp.path(), &mut report)? else {
            return Ok(report);
        };
        _tmp = tmp;
        root
    } else if path.is_dir() {
        path.to_path_buf()
    } else {
        report.findings.push(Finding {
            path: path.display().to_string(),
            line: 1,
            rule: "CSIPSTR1".into(),
            message: "not a folder or an archive".into(),
        });
        return Ok(report);
    };
    if !structure_rules(&root, &mut report) {
        return Ok(report);
    }
    let reps = check_mets(&root, "METS.xml", true, &mut report);
    let mut seen = HashSet::new();
    for (href, line) in reps {
        if !seen.insert(href.clone()) {
            continue;
        }
        if layout::metadata_in(&root, &href).is_err() {
            report.findings.push(Finding {
                path: "METS.xml".into(),
                line,
                rule: "CSIP110".into(),
                message: format!("{href}: the representation METS is not there"),
            });
            continue;
        }
        check_mets(&root, &href, false, &mut report);
    }
    Ok(report)
}
