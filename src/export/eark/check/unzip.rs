//! A packaged E-ARK ZIP unpacked to a temporary folder, within caps: a zip bomb (members
//! declaring far more than the file holds, or inflating past what they declare) is refused
//! before it fills the disk. The declared sizes are checked first; the bytes actually
//! written are then counted against them, never trusting a declaration.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{CheckError, CheckReport, Finding};
use crate::layout;

/// Members unpacked at most.
pub const MAX_MEMBERS: usize = 200_000;
/// Bytes unpacked at most per byte of the ZIP (DEFLATE reaches about 1,032 at best, so only
/// a bomb's overlapping or lying members go past it).
pub const MAX_RATIO: u64 = 1000;

/// Why a ZIP is not unpacked.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// More members than `MAX_MEMBERS`.
    #[error("it has {count} members, more than the {max} unpacked at most")]
    Members {
        /// Members in the central directory.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// The members' declared sizes add up to more than allowed.
    #[error("its members declare {declared} bytes unpacked, more than {max} ({why})")]
    Declared {
        /// The sum of the declared sizes.
        declared: u64,
        /// The cap.
        max: u64,
        /// Which cap.
        why: &'static str,
    },
    /// A member inflates past the size it declares.
    #[error("member {name:?} inflates past the {declared} bytes it declares")]
    Inflated {
        /// The member.
        name: String,
        /// Its declared size.
        declared: u64,
    },
}

/// Bytes free for an unprivileged user in the file system holding `dir`.
fn free_bytes(dir: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Unpacks the ZIP at `path` into `dest`; the package's root folder, or `None` when the ZIP
/// does not hold one root folder (a CSIPSTR3 finding in `report`).
pub(super) fn unpack(
    path: &Path,
    dest: &Path,
    report: &mut CheckReport,
) -> Result<Option<PathBuf>, CheckError> {
    let io = |source| CheckError::Io { path: path.to_path_buf(), source };
    let zip_err = |source| CheckError::Zip { path: path.to_path_buf(), source };
    let refused = |reason| CheckError::Refused { path: path.to_path_buf(), reason };
    let file = layout::open_regular(path).map_err(|e| io(io::Error::other(e)))?;
    let zip_len = file.metadata().map_err(io)?.len();
    let mut zip = zip::ZipArchive::new(BufReader::new(file)).map_err(zip_err)?;
    if zip.len() > MAX_MEMBERS {
        return Err(refused(Refusal::Members { count: zip.len(), max: MAX_MEMBERS }));
    }
    let mut tops = HashSet::new();
    let mut declared = 0u64;
    for i in 0..zip.len() {
        // Hostile archives: nothing outside the folder, no links.
        let entry = zip.by_index_raw(i).map_err(zip_err)?;
        let raw = entry.name().map(|n| n.to_string()).unwrap_or_default();
        // A name the crate would normalise (`a/../b`, `./a`, `/a`, `a\b`) is refused, not
        // normalised: its raw form leads elsewhere for other readers.
        let odd = raw.starts_with('/')
            || raw.contains('\\')
            || raw.split('/').any(|part| part == ".." || part == ".");
        if odd || entry.enclosed_name().is_none() || entry.is_symlink() {
            return Err(CheckError::Unsafe { path: path.to_path_buf(), name: raw });
        }
        declared = declared.saturating_add(entry.size());
        tops.insert(raw.split('/').next().unwrap_or_default().to_string());
    }
    if tops.len() != 1 {
        report.findings.push(Finding {
            path: path.display().to_string(),
            line: 1,
            rule: "CSIPSTR3".into(),
            message: format!("the archive must unpack to one root folder, it has {}", tops.len()),
        });
        return Ok(None);
    }
    let by_ratio = zip_len.saturating_mul(MAX_RATIO);
    if declared > by_ratio {
        let why = "1000 times the ZIP's size";
        return Err(refused(Refusal::Declared { declared, max: by_ratio, why }));
    }
    let free = free_bytes(dest).map_err(io)?;
    if declared > free {
        let why = "the space free for the temporary folder";
        return Err(refused(Refusal::Declared { declared, max: free, why }));
    }
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(zip_err)?;
        let Some(rel) = entry.enclosed_name() else { continue };
        let out = dest.join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(io)?;
            continue;
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let size = entry.size();
        let mut target = File::create_new(&out).map_err(io)?;
        // One byte more than declared: a member that inflates further is caught, not written.
        let written =
            io::copy(&mut (&mut entry).take(size.saturating_add(1)), &mut target).map_err(io)?;
        if written > size {
            let name = entry.name().map(|n| n.to_string()).unwrap_or_default();
            return Err(refused(Refusal::Inflated { name, declared: size }));
        }
    }
    let top = tops.into_iter().next().unwrap_or_default();
    Ok(Some(dest.join(top)))
}
