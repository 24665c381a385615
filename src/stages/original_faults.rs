//! The one wording of a revisit whose original cannot be given back: no package given holds
//! it, or the package holding it holds another payload. `unmigrate`, `audit --rebuild-arcs`
//! and `undedup` all report these, so they live here, below all three.

use std::path::PathBuf;

/// A revisit whose original no package given holds (the one wording of it: `unmigrate`,
/// `audit --rebuild-arcs`, `undedup`).
#[derive(Debug, thiserror::Error)]
#[error(
    "{container} at offset {offset}: the revisit {record} leaves out the payload of {refers} {}, \
     which no package given holds (give it with --with)",
    held_in(.package.as_deref())
)]
pub struct MissingOriginal {
    /// The revisit's container.
    pub container: String,
    /// Its offset there.
    pub offset: u64,
    /// Its `WARC-Record-ID`.
    pub record: String,
    /// The record it refers to.
    pub refers: String,
    /// The package holding that, by OBJID (`None`: the revisit names none, its original is
    /// in its own package).
    pub package: Option<String>,
}

/// Where a revisit says its original is, for [`MissingOriginal`].
fn held_in(package: Option<&str>) -> String {
    match package {
        Some(objid) => format!("in package {objid}"),
        None => "in its own package (it names no other)".into(),
    }
}

/// A revisit whose original holds another payload than it states: the fault is in the
/// package holding the original (the one wording of it: `unmigrate`, `audit --rebuild-arcs`,
/// `undedup`).
#[derive(Debug, thiserror::Error)]
#[error(
    "{container} at offset {offset}: the revisit {record} states the payload {stated}; the \
     record it refers to, {refers}, holds {found} in {} (damage in package {}, which holds the \
     originals){}",
    holder.display(),
    package.display(),
    also_held(others)
)]
pub struct OtherPayload {
    /// The revisit's container.
    pub container: String,
    /// Its offset there.
    pub offset: u64,
    /// Its `WARC-Record-ID`.
    pub record: String,
    /// The record it refers to.
    pub refers: String,
    /// Digest and length the revisit states.
    pub stated: String,
    /// The container holding the record referred to.
    pub holder: PathBuf,
    /// The package (folder) holding that container.
    pub package: PathBuf,
    /// Digest and length of its payload.
    pub found: String,
    /// The other records of that id found, each holding another payload too (container,
    /// digest and length).
    pub others: Vec<String>,
}

/// Other holders an [`OtherPayload`]'s message names; the rest are counted.
const OTHERS_NAMED: usize = 4;

/// The other holders of an [`OtherPayload`], for its message: the first few, then how many
/// more (a package repeating one record id does not make the message grow without bound).
fn also_held(others: &[String]) -> String {
    if others.is_empty() {
        return String::new();
    }
    let named = others.len().min(OTHERS_NAMED);
    let mut text = format!("; so do the records of that id in {}", others[..named].join(", "));
    if others.len() > named {
        text.push_str(&format!(", and {} more", others.len() - named));
    }
    text
}
