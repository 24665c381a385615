//! The files a METS lists, each opened inside the package and its SIZE and CHECKSUM compared
//! with the bytes. Every algorithm of the METS `CHECKSUMTYPE` vocabulary is known: those a
//! well-kept crate computes are compared; the others (HAVAL, MNP) leave the
//! file "not checked", never "verified"; a name outside the vocabulary (`sha-256`, `NONE`)
//! is a finding.

use std::path::Path;

use serde::Serialize;

use super::{Doc, Listed};
use crate::formats::digest::{FixityAlgorithm, digests_read};
use crate::layout;

/// The METS `CHECKSUMTYPE` values webaip has no crate for.
const NOT_COMPUTED: [&str; 2] = ["HAVAL", "MNP"];

/// A file whose checksum was not compared: webaip does not compute its algorithm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotChecked {
    /// The file, as the METS names it.
    pub path: String,
    /// The METS listing it.
    pub mets: String,
    /// The line of its entry.
    pub line: u64,
    /// Its `CHECKSUMTYPE`.
    pub checksum_type: String,
}

/// What a stated `CHECKSUMTYPE` asks for.
enum Stated {
    /// Compared by this algorithm.
    Computed(FixityAlgorithm),
    /// In the vocabulary, not computed.
    NotComputed(&'static str),
    /// None stated (a finding of its own rule already), or one outside the vocabulary.
    Nothing,
}

/// The algorithm `name` stands for, spelled exactly as the METS vocabulary spells it; a name
/// outside it is a finding on `f`'s checksum type rule.
fn stated(d: &mut Doc<'_>, f: &Listed, href: &str) -> Stated {
    let Some(name) = f.checksum_type.as_deref() else { return Stated::Nothing };
    if let Some(a) = FixityAlgorithm::ALL.into_iter().find(|a| a.mets_name() == name) {
        return Stated::Computed(a);
    }
    if let Some(n) = NOT_COMPUTED.into_iter().find(|n| *n == name) {
        return Stated::NotComputed(n);
    }
    let known: Vec<&str> = FixityAlgorithm::ALL.iter().map(|a| a.mets_name()).collect();
    let msg = format!(
        "{href}: CHECKSUMTYPE {name:?} is not in the METS vocabulary ({}, {})",
        known.join(", "),
        NOT_COMPUTED.join(", ")
    );
    d.find(f.line, &f.rules.checksum_type, msg);
    Stated::Nothing
}

/// What the checks of the files found, besides findings.
#[derive(Default)]
pub(super) struct Tally {
    /// Files whose size (when stated) and checksum match.
    pub verified: u64,
    /// Files whose checksum was not compared.
    pub not_checked: Vec<NotChecked>,
}

/// Checks that each listed file is there with its stated size and checksum.
pub(super) fn verify_files(
    d: &mut Doc<'_>,
    dir: &Path,
    root: &Path,
    files: &[Listed],
    tally: &mut Tally,
) {
    for f in files {
        let Some(href) = &f.href else { continue };
        let full = dir.join(href);
        let rel = full
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| href.clone());
        let algorithm = match stated(d, f, href) {
            Stated::Computed(a) => Some(a),
            Stated::NotComputed(n) => {
                let (path, mets) = (href.clone(), d.name.clone());
                let checksum_type = n.to_string();
                tally.not_checked.push(NotChecked { path, mets, line: f.line, checksum_type });
                None
            }
            Stated::Nothing => None,
        };
        if verify_one(d, root, &rel, f, algorithm) {
            tally.verified += 1;
        }
    }
}

/// Opens one file and compares its size and checksum; true when both were compared and match.
fn verify_one(
    d: &mut Doc<'_>,
    root: &Path,
    rel: &str,
    f: &Listed,
    algorithm: Option<FixityAlgorithm>,
) -> bool {
    let href = f.href.as_deref().unwrap_or(rel);
    let read = layout::open_in(root, rel).map_err(|e| e.to_string()).and_then(|file| {
        digests_read(file, &Vec::from_iter(algorithm)).map_err(|e| layout::describe_io(&e))
    });
    let digests = match read {
        Ok(d) => d,
        Err(e) => {
            d.find_damage(f.line, &f.rules.size, format!("{href}: {e}"));
            return false;
        }
    };
    let size = digests.size;
    let size_ok = f.size.as_deref().is_none_or(|s| s.parse::<u64>().ok() == Some(size));
    if !size_ok {
        let msg = format!("{href}: SIZE {:?}, the file has {size} bytes", f.size);
        d.find_damage(f.line, &f.rules.size, msg);
    }
    let (Some(a), Some(stated)) = (algorithm, &f.checksum) else { return false };
    let have = digests.by(a).unwrap_or_default();
    if !have.eq_ignore_ascii_case(stated) {
        let msg =
            format!("{href}: CHECKSUM {stated} does not match the file ({} {have})", a.mets_name());
        d.find_damage(f.line, &f.rules.checksum, msg);
        return false;
    }
    size_ok
}
