//! A packaged E-ARK ZIP, unpacked by the one unpacker of every ZIP webaip opens
//! (`formats::unzip`: its caps on entries, depth, overlapping entries and bytes written, new
//! folders and files counted) into a temporary folder in `TMPDIR` (`.webaip-eark-XXXXXX`,
//! locked while the check lives; the next check removes those of killed runs). An entry
//! refused alone (a second entry of a name, a file where a folder is needed, a link, a name
//! leaving the package, a damaged entry) is a CSIPSTR3 finding: the archive does not unpack
//! to one package.

use std::path::{Path, PathBuf};

use super::{CheckError, CheckReport, CsipFinding};
use crate::formats::unzip::{self, DEFAULT_ZIP_EXPANSION, Limits};
use crate::temporaries::TempName;

/// The temporary folders packages are unpacked into.
const UNPACKED: TempName = TempName { prefix: ".webaip-eark-", suffix: "", dirs: true };

/// A package unpacked: its temporary folder (removed when dropped) and its root folder.
pub(super) struct Unzipped {
    /// Held for as long as the package is checked.
    _files: unzip::Unpacked,
    /// The package's root folder.
    pub root: PathBuf,
}

/// Unpacks the ZIP at `path`; `None` when it does not hold one root folder (a CSIPSTR3
/// finding in `report`, as is each entry refused).
pub(super) fn unpack(
    path: &Path,
    report: &mut CheckReport,
) -> Result<Option<Unzipped>, CheckError> {
    let limits = Limits::of(DEFAULT_ZIP_EXPANSION, None);
    let files = unzip::unpack(path, &std::env::temp_dir(), UNPACKED, &limits)?;
    for (name, why) in &files.refused {
        report.findings.push(CsipFinding::at(name, 1, "CSIPSTR3", why.clone()));
    }
    let tops: Vec<_> = std::fs::read_dir(files.dir.path())
        .map_err(|source| CheckError::Io { path: files.dir.path().to_path_buf(), source })?
        .flatten()
        .take(2)
        .collect();
    match &tops[..] {
        [only] if only.file_type().is_ok_and(|t| t.is_dir()) => {
            let root = only.path();
            Ok(Some(Unzipped { _files: files, root }))
        }
        _ => {
            let n = std::fs::read_dir(files.dir.path()).map_or(0, |rd| rd.count());
            report.findings.push(CsipFinding::at(
                &path.display().to_string(),
                1,
                "CSIPSTR3",
                format!(
                    "the archive must unpack to one root folder, it has {n} entries at the top"
                ),
            ));
            Ok(None)
        }
    }
}
