//! Following a package's revisit records to their originals (`audit --with`): a deduplicated
//! package stores a payload once, in an earlier package, and its revisits name it (PROFILE
//! P6.4). Every `identical-payload-digest` revisit must lead to a record, in the package itself
//! or in one of the packages given, that exists and whose payload has the digest the revisit
//! states: the payload is read and hashed, not its stated digest trusted. Each revisit that
//! leads nowhere, or to other bytes, is named with its container and offset.
//!
//! An original is found by its record id (`WARC-Refers-To`) when the revisit gives one, else by
//! target URI and date (`WARC-Refers-To-Target-URI`, `WARC-Refers-To-Date`), as WARC 1.1
//! §6.7.2 identifies it. What is held while the packages are searched is the revisits of the
//! audited package (a few hundred bytes each), never the records searched.

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{AuditError, PackageAt, list_files, package_paths};
use crate::formats::digest::LabelledDigest;
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::warc::WarcReader;
use crate::formats::warc::payload::payload_start_of;
use crate::layout;

/// The revisit profile whose original must hold the same payload.
pub const IDENTICAL_PAYLOAD_DIGEST: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
/// The WARC 1.0 name of the same profile.
const IDENTICAL_PAYLOAD_DIGEST_1_0: &str =
    "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest";

/// What following the references found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReferenceReport {
    /// Revisit records of the audited package.
    pub revisits: u64,
    /// Of them, those of another profile (`server-not-modified`): they claim no payload, and
    /// are not followed.
    pub other_profile: u64,
    /// Revisits whose original was found with the same payload digest.
    pub resolved: u64,
    /// Revisits whose original is missing or holds other bytes.
    pub unresolved: Vec<UnresolvedReference>,
    /// The packages searched for originals (the audited one first).
    pub searched: Vec<PathBuf>,
    /// Containers that could not be read to the end (their name and why): originals in their
    /// unread part were not seen.
    pub unreadable: Vec<String>,
    /// Of them, those searched for originals (or a package whose containers could not be
    /// listed), by name: a revisit found nowhere, or found holding other bytes, may have its
    /// original there. The audited package's own are among them: damage there is the byte
    /// checks' to find (its SHA-512), not a reference's.
    #[serde(skip)]
    pub unread: Vec<String>,
    /// The audited package's OBJID, when its METS names one.
    #[serde(skip)]
    pub objid: Option<String>,
    /// The packages the METS says hold originals of its revisits (PREMIS `dependency` /
    /// `requires` relationships, by OBJID), and whether one of them was searched.
    pub originals_in: Vec<RequiredPackage>,
    /// The containers of the other packages holding originals found, in the order searched
    /// (what an access copy must add to replay the revisits).
    #[serde(skip)]
    pub holding: Vec<HoldingContainer>,
}

/// A container of another package that holds originals of the audited package's revisits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldingContainer {
    /// The package's folder, as given.
    pub package: PathBuf,
    /// The container's name in that package.
    pub name: String,
}

/// A package the audited METS says its revisits depend on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequiredPackage {
    /// Its OBJID.
    pub objid: String,
    /// The package given (`--with`, `--store`) that has this OBJID, when one was.
    pub searched: Option<PathBuf>,
}

/// A revisit whose original could not be confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnresolvedReference {
    /// The container holding the revisit, as its package names it.
    pub file: String,
    /// The revisit's offset in it.
    pub offset: u64,
    /// The revisit's `WARC-Record-ID`.
    pub record_id: Option<String>,
    /// The revisit's `WARC-Target-URI`.
    pub target_uri: Option<String>,
    /// What the revisit says of its original.
    pub refers_to: Reference,
    /// What is wrong.
    pub problem: String,
    /// The other package the fault is in (its folder as given), or the packages the METS
    /// says hold the originals that were not given (their OBJIDs): the audited package's
    /// bytes are not at fault, the reference is unchecked. `None`: the fault is here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault_in: Option<String>,
}

/// How a revisit names its original.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Reference {
    /// `WARC-Refers-To`: the original's record id.
    pub record_id: Option<String>,
    /// `WARC-Refers-To-Target-URI`.
    pub target_uri: Option<String>,
    /// `WARC-Refers-To-Date`.
    pub date: Option<String>,
    /// `WARC-Refers-To-Container`, when given.
    pub container: Option<String>,
    /// The revisit's `WARC-Payload-Digest`: the original payload's.
    pub digest: Option<String>,
    /// `X-Webaip-Refers-To-Package`: the OBJID of the package holding the original, when
    /// given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

/// A revisit being followed, and what was found of it so far.
struct Wanted {
    /// The container holding the revisit, as its package names it.
    file: String,
    /// The revisit's offset in it.
    offset: u64,
    record_id: Option<String>,
    target_uri: Option<String>,
    refers_to: Reference,
    /// `None` until an original is found (or the revisit is found to name none).
    found: Option<Found>,
}

/// What following one revisit found.
enum Found {
    /// An original with the payload digest the revisit states.
    Same,
    /// A record of the id it refers to holding other bytes, said in words, and the other
    /// package it is in (`None`: in the audited package).
    Other(String, Option<String>),
    /// A problem, said in words, and the other package it is in (`None`: in the audited
    /// package).
    Problem(String, Option<String>),
}

/// What hashing an original's payload found for one revisit's digest.
enum PayloadCheck {
    Same,
    /// The digest found, in the label's usual form.
    Other(String),
    /// The revisit's digest cannot be checked (an algorithm not computed here).
    Unchecked,
}

/// A container that could not be read to its end.
#[derive(Debug, thiserror::Error)]
enum Unsearchable {
    #[error("{0}: {1}")]
    Open(String, String),
    #[error(transparent)]
    Warc(#[from] crate::formats::warc::reader::WarcError),
}

/// Follows every revisit of the package at `package` to its original in the package itself
/// or in `with` (which holds what a store gave when `from_store`).
pub fn check_references(
    package: &Path,
    with: &[PathBuf],
    from_store: bool,
) -> Result<ReferenceReport, AuditError> {
    let mut report = ReferenceReport::default();
    let own = containers(package)?;
    let mut wanted = Vec::new();
    for c in &own {
        let read = each_record(&c.path, &c.href, |head, _| {
            if let Some(w) = revisit(&c.href, head, &mut report) {
                wanted.push(w);
            }
            Ok(())
        });
        if let Err(e) = read {
            report.unreadable.push(e.to_string());
        }
    }
    report.searched.push(package.to_path_buf());
    report.searched.extend(with.iter().cloned());
    report.objid = crate::index::digests::package_objid(package).ok();
    report.originals_in = required_packages(package, with);
    if !wanted.is_empty() {
        search(&mut wanted, package, own, with, &mut report);
    }
    for w in wanted {
        settle(w, from_store, &mut report);
    }
    Ok(report)
}

/// The revisit to follow that the record `head` of the container `href` is, counting it in
/// `report`; `None` for a record that is no revisit, or a revisit of another profile.
fn revisit(
    href: &str,
    head: &crate::formats::warc::reader::WarcRecordHead,
    report: &mut ReferenceReport,
) -> Option<Wanted> {
    let h = &head.header;
    if h.warc_type() != Some("revisit") {
        return None;
    }
    report.revisits += 1;
    let profile = h.get("WARC-Profile").map(str::trim);
    if !matches!(profile, Some(IDENTICAL_PAYLOAD_DIGEST | IDENTICAL_PAYLOAD_DIGEST_1_0)) {
        report.other_profile += 1;
        return None;
    }
    let text = |name: &str| h.get(name).map(|v| v.trim().to_string());
    Some(Wanted {
        file: href.to_string(),
        offset: head.offset,
        record_id: text("WARC-Record-ID"),
        target_uri: h.target_uri().map(str::to_string),
        refers_to: Reference {
            record_id: text("WARC-Refers-To"),
            target_uri: text("WARC-Refers-To-Target-URI"),
            date: text("WARC-Refers-To-Date"),
            container: text("WARC-Refers-To-Container"),
            digest: text("WARC-Payload-Digest"),
            package: text(crate::formats::warc::header::FIELD_REFERS_TO_PACKAGE),
        },
        found: None,
    })
}

/// Counts a followed revisit resolved, or records it unresolved with its problem.
fn settle(w: Wanted, from_store: bool, report: &mut ReferenceReport) {
    let (problem, fault_in) = match w.found {
        Some(Found::Same) => {
            report.resolved += 1;
            return;
        }
        Some(Found::Problem(why, fault_in)) => (why, fault_in),
        Some(Found::Other(why, fault_in)) => other_bytes(report, why, fault_in),
        None => nowhere(report, from_store, w.refers_to.package.as_deref()),
    };
    report.unresolved.push(UnresolvedReference {
        file: w.file,
        offset: w.offset,
        record_id: w.record_id,
        target_uri: w.target_uri,
        refers_to: w.refers_to,
        problem,
        fault_in,
    });
}

/// The packages the METS of `package` says hold its originals, each with the package of `with`
/// that has its OBJID. A METS that cannot be read names none (its validation says why).
fn required_packages(package: &Path, with: &[PathBuf]) -> Vec<RequiredPackage> {
    let Ok(PackageAt { mets, .. }) = package_paths(package) else { return Vec::new() };
    let Ok(file) = layout::open_regular(&mets) else { return Vec::new() };
    let reader = crate::mets::reader::MetsReader::strict(io::BufReader::new(file));
    let Ok(objids) = crate::store::deps::mets_dependencies(reader) else { return Vec::new() };
    let given: Vec<(String, &PathBuf)> = with
        .iter()
        .filter_map(|w| crate::index::digests::package_objid(w).ok().map(|id| (id, w)))
        .collect();
    objids
        .into_iter()
        .map(|objid| {
            let searched = given.iter().find(|(id, _)| *id == objid).map(|(_, w)| (*w).clone());
            RequiredPackage { objid, searched }
        })
        .collect()
}

/// Whose fault a revisit's original that holds other bytes than the revisit states is, when
/// it was found in the package at `holder` (the one rule of it, for rule P6.4 and the ARC
/// rebuild alike): the other package's (named: a warning, the revisit unchecked) when that is
/// not the audited one; `None`, the audited package's (damage), when it is. The audited
/// package's own bytes are checked against its METS by the deep audit: a revisit changed
/// there is damage found there, so a fault of another package never makes it DAMAGED.
pub(super) fn fault_elsewhere(audited: &Path, holder: &Path) -> Option<String> {
    let same = |a: &Path, b: &Path| a == b || a.canonicalize().ok() == b.canonicalize().ok();
    (!same(audited, holder)).then(|| holder.display().to_string())
}

/// The problem of a revisit whose every original found holds other bytes (`why`, whose fault
/// `fault_in` says by [`fault_elsewhere`]), and whose fault it is: while a container searched
/// was not read to its end, the original may be in its unread part, so the revisit is not
/// checked (the fault is that container's), never damage of the audited package.
fn other_bytes(
    report: &ReferenceReport,
    mut why: String,
    fault_in: Option<String>,
) -> (String, Option<String>) {
    if fault_in.is_some() || report.unread.is_empty() {
        return (why, fault_in);
    }
    let unread = report.unread.join(", ");
    why.push_str(&format!("; the original may be in the unread part of {unread}"));
    (why, Some(format!("{unread} (not read to its end)")))
}

/// The problem of a revisit whose original was found nowhere, and whose fault it is (the
/// same rule as [`fault_elsewhere`]'s for a revisit found nowhere): that of the containers
/// searched that were not read to their end (the original may be in their unread part), of the
/// packages the METS says hold the originals that were not given (by the operator, or by the
/// store when one was asked), or of the other package the revisit names (`named`, by OBJID),
/// given without it or not given; the audited package's when none of these is so.
fn nowhere(
    report: &ReferenceReport,
    from_store: bool,
    named: Option<&str>,
) -> (String, Option<String>) {
    let mut problem = format!("no original found in {} package(s) searched", report.searched.len());
    if !report.unread.is_empty() {
        let unread = report.unread.join(", ");
        problem.push_str(&format!("; it may be in the unread part of {unread}"));
        return (problem, Some(format!("{unread} (not read to its end)")));
    }
    let missing: Vec<&str> = report
        .originals_in
        .iter()
        .filter(|r| r.searched.is_none())
        .map(|r| r.objid.as_str())
        .collect();
    if !missing.is_empty() {
        let advice = if from_store {
            "the store given does not hold it: give it with --with"
        } else {
            "not given: give it with --with (or --store)"
        };
        problem.push_str(&format!(
            "; the METS says the originals are in package {}, {advice}",
            missing.join(", ")
        ));
        return (problem, Some(missing.join(", ")));
    }
    match named.filter(|n| Some(*n) != report.objid.as_deref()) {
        Some(objid) => {
            let given = report.originals_in.iter().find(|r| r.objid == objid);
            let holder = match given.and_then(|r| r.searched.as_ref()) {
                Some(p) => format!("{} (package {objid})", p.display()),
                None => format!("package {objid}"),
            };
            problem.push_str(&format!("; the revisit says it is in {holder}"));
            (problem, Some(holder))
        }
        None => (problem, None),
    }
}

/// The wanted revisits by how they name their original: by record id, or by target URI and
/// date.
#[derive(Default)]
struct OriginalIndex {
    by_id: HashMap<String, Vec<usize>>,
    by_uri_date: HashMap<(String, String), Vec<usize>>,
}

impl OriginalIndex {
    /// Indexes `wanted`; a revisit that names no original is settled with that problem.
    fn of(wanted: &mut [Wanted]) -> OriginalIndex {
        let mut index = OriginalIndex::default();
        for (i, w) in wanted.iter_mut().enumerate() {
            let r = &w.refers_to;
            match (&r.record_id, &r.target_uri, &r.date) {
                (Some(id), _, _) => index.by_id.entry(id.clone()).or_default().push(i),
                (None, Some(uri), Some(date)) => {
                    index.by_uri_date.entry((uri.clone(), date.clone())).or_default().push(i)
                }
                _ => w.found = Some(Found::Problem(
                    "the revisit names no original (no WARC-Refers-To, nor target URI and date)"
                        .into(),
                    None,
                )),
            }
        }
        index
    }

    /// The wanted revisits not yet resolved that the record with `header` may be the
    /// original of.
    fn hits(&self, header: &crate::formats::warc::WarcHeader, wanted: &[Wanted]) -> Vec<usize> {
        let mut hits: Vec<usize> = Vec::new();
        if let Some(id) = header.record_id().and_then(|id| self.by_id.get(id.trim())) {
            hits.extend(id);
        }
        if let (Some(uri), Some(date)) = (header.target_uri(), header.get("WARC-Date"))
            && let Some(v) = self.by_uri_date.get(&(uri.to_string(), date.trim().to_string()))
        {
            hits.extend(v);
        }
        hits.retain(|&i| !matches!(wanted[i].found, Some(Found::Same)));
        hits
    }
}

/// Reads every container of the audited package and of `with`, checking each record that a
/// wanted revisit names.
fn search(
    wanted: &mut [Wanted],
    audited: &Path,
    own: Vec<Container>,
    with: &[PathBuf],
    report: &mut ReferenceReport,
) {
    let index = OriginalIndex::of(wanted);
    let mut sources = vec![(None, own)];
    for p in with {
        match containers(p) {
            Ok(list) => sources.push((Some(p), list)),
            Err(e) => {
                report.unreadable.push(format!("{}: {e}", p.display()));
                report.unread.push(p.display().to_string());
            }
        }
    }
    for (package, list) in sources {
        let prefix = package.map_or(String::new(), |p| format!("{}/", p.display()));
        for c in list {
            let name = format!("{prefix}{}", c.href);
            let package_at = package.map(|p| p.as_path());
            let at = Searching { path: &c.path, name: &name, package: package_at, audited };
            let holds = search_container(&at, &index, wanted, report);
            if let (true, Some(p)) = (holds, package) {
                report.holding.push(HoldingContainer { package: p.clone(), name: c.href });
            }
        }
    }
}

/// Checks each record of the container at `path` (named `name`) that a wanted revisit names;
/// true when it holds an original with the payload its revisit states.
fn search_container(
    c: &Searching,
    index: &OriginalIndex,
    wanted: &mut [Wanted],
    report: &mut ReferenceReport,
) -> bool {
    let mut holds = false;
    let (path, name) = (c.path, c.name);
    let read = each_record(path, name, |head, block| {
        if head.header.warc_type() == Some("revisit") {
            return Ok(());
        }
        let hits = index.hits(&head.header, wanted);
        if hits.is_empty() {
            return Ok(());
        }
        let digests: Vec<Option<LabelledDigest>> =
            hits.iter().map(|&i| stated_digest(&wanted[i])).collect();
        let checked = hash_payload(head, block, digests)?;
        let at = format!("{name} at offset {}", head.offset);
        for (&i, outcome) in hits.iter().zip(checked) {
            holds |= matches!(outcome, PayloadCheck::Same);
            let fault_in = c.package.and_then(|p| fault_elsewhere(c.audited, p));
            let found = found_at(&at, fault_in, outcome, &wanted[i]);
            wanted[i].found = Some(found);
        }
        Ok(())
    });
    if let Err(e) = read {
        report.unreadable.push(e.to_string());
        report.unread.push(name.to_string());
    }
    holds
}

/// The payload digest a revisit states of its original, when it can be checked.
fn stated_digest(w: &Wanted) -> Option<LabelledDigest> {
    w.refers_to.digest.as_deref().and_then(|d| LabelledDigest::parse(d).ok())
}

/// A container searched for originals: where it is, its name in messages, the other package
/// holding it (`None`: the audited one), and the audited package.
struct Searching<'a> {
    path: &'a Path,
    name: &'a str,
    package: Option<&'a Path>,
    audited: &'a Path,
}

/// What hashing the original at `at` of the revisit `w` found; other bytes are the fault of
/// the other package `fault_in` when one is named.
fn found_at(at: &str, fault_in: Option<String>, outcome: PayloadCheck, w: &Wanted) -> Found {
    match outcome {
        PayloadCheck::Same => Found::Same,
        PayloadCheck::Other(found) => Found::Other(
            format!("the original at {at} holds other bytes: its payload digest is {found}"),
            fault_in,
        ),
        PayloadCheck::Unchecked => Found::Problem(
            format!(
                "the original was found at {at}, but the revisit's payload digest {:?} cannot be checked",
                w.refers_to.digest.as_deref().unwrap_or("")
            ),
            None,
        ),
    }
}

/// Hashes the payload of the record being read with each digest (`None` for a digest that
/// cannot be checked); the outcome of each: `Ok`, or the digest found.
fn hash_payload(
    head: &crate::formats::warc::reader::WarcRecordHead,
    block: &mut dyn Read,
    mut digests: Vec<Option<LabelledDigest>>,
) -> io::Result<Vec<PayloadCheck>> {
    let mut prefix = Vec::new();
    block.take(MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut prefix)?;
    let start = payload_start_of(&head.header, &prefix).offset() as usize;
    let mut feed = |bytes: &[u8]| digests.iter_mut().flatten().for_each(|d| d.update(bytes));
    feed(&prefix[start.min(prefix.len())..]);
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = block.read(&mut buf)?;
        if n == 0 {
            break;
        }
        feed(&buf[..n]);
    }
    Ok(digests
        .into_iter()
        .map(|d| match d.map(LabelledDigest::verify) {
            Some(Ok(())) => PayloadCheck::Same,
            Some(Err(m)) => PayloadCheck::Other(m.found),
            None => PayloadCheck::Unchecked,
        })
        .collect())
}

/// A WARC container of a package.
struct Container {
    /// Its name in the package (confined to it).
    href: String,
    /// Where it is.
    path: PathBuf,
}

/// The WARC containers a package's METS lists and holds (names confined to the package).
fn containers(package: &Path) -> Result<Vec<Container>, AuditError> {
    let PackageAt { dir, mets } = package_paths(package)?;
    let files = list_files(&mets)?;
    Ok(files
        .iter()
        .filter(|f| f.is_container())
        .filter_map(|f| f.href.as_deref())
        .filter(|h| layout::uri_scheme(h).is_none())
        .filter_map(|h| layout::confined_name(h).ok())
        .map(|href| Container { path: dir.join(&href), href })
        .collect())
}

/// Reads every record of the container at `path` (named `name` in messages), handing each to
/// `f`; a container that cannot be read to its end is an `Err` naming it and the offset.
fn each_record(
    path: &Path,
    name: &str,
    mut f: impl FnMut(&crate::formats::warc::reader::WarcRecordHead, &mut dyn Read) -> io::Result<()>,
) -> Result<(), Unsearchable> {
    let file =
        layout::open_regular(path).map_err(|e| Unsearchable::Open(name.to_string(), e.reason()))?;
    let mut reader = WarcReader::new(io::BufReader::with_capacity(1 << 20, file), name)?;
    while reader.next_record(|head, block| f(head, block))?.is_some() {}
    Ok(())
}
