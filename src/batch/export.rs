//! Exports of a delivered package: a WACZ access copy (`export::wacz`) and an E-ARK 2.2
//! information package (`export::eark`), written where a batch (`--export-wacz DIR`,
//! `--export-eark DIR`) or `store get` asks, each complete or not there at all.
//!
//! The WACZ export writes a temporary file beside its output and renames it once complete.
//! The E-ARK export writes its folder or ZIP in place, so it is made here in a hidden folder
//! beside the output (`.NAME.eark-partial`, removed again by the next export of that name if
//! a run was killed) and renamed into place once complete: an output that looks like an
//! E-ARK package always is a whole one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::export::eark::{self, EarkError, ExportSummary, PackageType};
use crate::export::wacz::{WaczError, WaczOptions, WaczReport, export_wacz};

use super::journal::ExportKind;

/// The form of an E-ARK export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EarkForm {
    /// One `.zip` file (stored entries below one root folder).
    #[default]
    Zip,
    /// A folder.
    Folder,
}

/// The E-ARK exports of a batch.
#[derive(Debug, Clone)]
pub struct EarkExport {
    /// The folder they go to.
    pub dir: PathBuf,
    /// SIP or AIP.
    pub kind: PackageType,
    /// A ZIP or a folder each.
    pub form: EarkForm,
}

/// The exports of each package a batch delivers (none by default).
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The folder each package's WACZ goes to, as `NAME.wacz`.
    pub wacz: Option<PathBuf>,
    /// Where and how each package's E-ARK package goes (`NAME.zip` or folder `NAME`).
    pub eark: Option<EarkExport>,
}

impl ExportOptions {
    /// The exports asked for, each with where the package named `package` goes: absolute, so
    /// that what the journal records means the same from any working directory.
    pub fn targets(&self, package: &str) -> Vec<(ExportKind, PathBuf)> {
        let mut out = Vec::new();
        if let Some(dir) = &self.wacz {
            out.push((ExportKind::Wacz, absolute(dir).join(format!("{package}.wacz"))));
        }
        if let Some(e) = &self.eark {
            let name = match e.form {
                EarkForm::Zip => format!("{package}.zip"),
                EarkForm::Folder => package.to_string(),
            };
            out.push((ExportKind::Eark, absolute(&e.dir).join(name)));
        }
        out
    }

    /// Writes the export `kind` of the package at `package` to `target` (one of
    /// [`targets`](Self::targets)), replacing what is there.
    pub fn write(
        &self,
        kind: ExportKind,
        package: &Path,
        target: &Path,
    ) -> Result<Exported, ExportError> {
        match (kind, &self.eark) {
            (ExportKind::Wacz, _) => write_wacz(package, target).map(Exported::Wacz),
            (ExportKind::Eark, Some(e)) => {
                write_eark(package, target, e.kind, Replace::Yes).map(Exported::Eark)
            }
            (ExportKind::Eark, None) => Err(ExportError::NotAsked),
        }
    }
}

/// What an export wrote.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Exported {
    /// The WACZ export's report.
    Wacz(WaczReport),
    /// The E-ARK export's summary.
    Eark(ExportSummary),
}

/// Whether an E-ARK export replaces what is at its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// Replace it (a batch's own output, from a run that did not record it).
    Yes,
    /// Refuse, as `export eark` does.
    No,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The WACZ export failed.
    #[error("WACZ export: {0}")]
    Wacz(Box<WaczError>),
    /// The E-ARK export failed.
    #[error("E-ARK export: {0}")]
    Eark(Box<EarkError>),
    /// The output, or the folder it is made in, could not be made, moved or replaced.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The E-ARK output exists (and is not to be replaced).
    #[error("{}: exists; an E-ARK export is written to a new folder or .zip", .0.display())]
    Exists(PathBuf),
    /// An E-ARK export was asked for without its options.
    #[error("internal error: an E-ARK export without its options")]
    NotAsked,
}

impl From<WaczError> for ExportError {
    fn from(e: WaczError) -> Self {
        ExportError::Wacz(Box::new(e))
    }
}

impl From<EarkError> for ExportError {
    fn from(e: EarkError) -> Self {
        ExportError::Eark(Box::new(e))
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io { path: path.to_path_buf(), source }
}

/// Writes the WACZ of the package at `package` to `out` (every container checked against the
/// SHA-256 its METS states, or its SHA-512 when it states none, as it is copied; `out`
/// replaced once the WACZ is complete).
pub fn write_wacz(package: &Path, out: &Path) -> Result<WaczReport, ExportError> {
    Ok(export_wacz(package, out, &WaczOptions::default(), &|_| {})?)
}

/// Refuses an E-ARK output that exists (before anything is fetched or made for it).
pub fn eark_target_free(out: &Path) -> Result<(), ExportError> {
    match std::fs::symlink_metadata(out) {
        Ok(_) => Err(ExportError::Exists(out.to_path_buf())),
        Err(_) => Ok(()),
    }
}

/// Writes the E-ARK package (`kind`) of the package at `package` to `out`, a folder or, named
/// `*.zip`, a ZIP: made in a hidden folder beside `out` and renamed into place once complete.
/// What is at `out` already is replaced (`Replace::Yes`, only once the new one is complete)
/// or refused.
pub fn write_eark(
    package: &Path,
    out: &Path,
    kind: PackageType,
    replace: Replace,
) -> Result<ExportSummary, ExportError> {
    if replace == Replace::No {
        eark_target_free(out)?;
    }
    let name = out.file_name().ok_or_else(|| ExportError::Exists(out.to_path_buf()))?;
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let mut hidden = std::ffi::OsString::from(".");
    hidden.push(name);
    hidden.push(".eark-partial");
    let stage = dir.join(hidden);
    // What a killed export of this name left.
    remove_any(&stage)?;
    std::fs::create_dir(&stage).map_err(io(&stage))?;
    // Made under its final name: a folder output is the package's root folder itself, named
    // after the item (by which a rerun finds it), not by the OBJID; a ZIP's one folder is the
    // OBJID.
    let made = stage.join(name);
    let summary = match eark::export(package, &made, kind) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&stage);
            return Err(e.into());
        }
    };
    let placed = place(&made, out, &stage, replace);
    let _ = std::fs::remove_dir_all(&stage);
    placed.map(|()| ExportSummary { written: out.to_path_buf(), ..summary })
}

/// Moves the complete export `made` to `out`; an `out` there already is first moved into
/// `stage` (a folder cannot be renamed over), then removed with it.
fn place(made: &Path, out: &Path, stage: &Path, replace: Replace) -> Result<(), ExportError> {
    let mut moved_away = None;
    if let Ok(meta) = std::fs::symlink_metadata(out) {
        if replace == Replace::No {
            return Err(ExportError::Exists(out.to_path_buf()));
        }
        if meta.is_dir() {
            let away = stage.join("replaced");
            std::fs::rename(out, &away).map_err(io(out))?;
            moved_away = Some(away);
        }
    }
    std::fs::rename(made, out).map_err(io(out)).inspect_err(|_| {
        // The old one back where it was, rather than removed with the stage.
        if let Some(away) = &moved_away {
            let _ = std::fs::rename(away, out);
        }
    })
}

/// Removes a file or folder (never following a link) when there is one.
fn remove_any(path: &Path) -> Result<(), ExportError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).map_err(io(path)),
        Ok(_) => std::fs::remove_file(path).map_err(io(path)),
        Err(_) => Ok(()),
    }
}

/// `path` made absolute against the working directory (unchanged when that is unknown).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_absolute_and_named_after_the_package() {
        let opts = ExportOptions {
            wacz: Some("w".into()),
            eark: Some(EarkExport {
                dir: "/e".into(),
                kind: PackageType::Aip,
                form: EarkForm::Zip,
            }),
        };
        let t = opts.targets("pkg");
        assert_eq!(t[0].0, ExportKind::Wacz);
        assert!(t[0].1.is_absolute() && t[0].1.ends_with("w/pkg.wacz"), "{:?}", t[0].1);
        assert_eq!(t[1], (ExportKind::Eark, PathBuf::from("/e/pkg.zip")));
        let folder = ExportOptions {
            wacz: None,
            eark: Some(EarkExport {
                dir: "/e".into(),
                kind: PackageType::Sip,
                form: EarkForm::Folder,
            }),
        };
        assert_eq!(folder.targets("pkg"), [(ExportKind::Eark, PathBuf::from("/e/pkg"))]);
        assert!(ExportOptions::default().targets("pkg").is_empty());
    }

    #[test]
    fn a_failed_eark_export_leaves_nothing_and_an_existing_output_is_refused_when_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let not_a_package = tmp.path().join("empty");
        std::fs::create_dir(&not_a_package).unwrap();
        let out = tmp.path().join("x.zip");
        let err = write_eark(&not_a_package, &out, PackageType::Sip, Replace::Yes).unwrap_err();
        assert!(matches!(err, ExportError::Eark(_)), "{err}");
        let left: Vec<_> =
            std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("empty")]);
        std::fs::write(&out, b"someone's").unwrap();
        let err = write_eark(&not_a_package, &out, PackageType::Sip, Replace::No).unwrap_err();
        assert!(matches!(err, ExportError::Exists(_)), "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), b"someone's");
    }
}
