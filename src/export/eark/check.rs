//! The E-ARK CSIP 2.2 rules (and SIP 2.2's for a SIP), each reported by its identifier: the
//! package structure (CSIPSTR), the root METS and each representation METS, and the files the
//! METS documents list (present, of the size and SHA-256/SHA-512 they state).
//!
//! A METS document is read once with the METS reader into a flat list of its METS elements
//! (path, attributes, line), which the rules then query; text content is kept only for
//! `agent/name` and `agent/note`.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256, Sha512};

use super::{NS_CSIP, PROFILE_SIP};
use crate::layout;
use crate::mets::reader::{Element, Event, MetsReader, NS_METS};

const VOCAB_CONTENT_CATEGORY: &str =
    include_str!("../../../data/eark/vocabularies/CSIPVocabularyContentCategory.xml");
const VOCAB_CONTENT_INFO_TYPE: &str =
    include_str!("../../../data/eark/vocabularies/CSIPVocabularyContentInformationType.xml");
const VOCAB_PACKAGE_TYPE: &str =
    include_str!("../../../data/eark/vocabularies/CSIPVocabularyOAISPackageType.xml");
const VOCAB_STATUS: &str = include_str!("../../../data/eark/vocabularies/CSIPVocabularyStatus.xml");

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
    #[error("{}: {source}", path.display())]
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
    /// The ZIP cannot be read.
    #[error("{}: {source}", path.display())]
    Zip {
        /// The file.
        path: PathBuf,
        /// The error.
        source: zip::result::ZipError,
    },
}

/// One METS element as read.
#[derive(Debug, Clone)]
struct El {
    /// Local names from the root, `mets/fileSec/fileGrp/file`.
    path: String,
    el: Element,
    line: u64,
    text: String,
    /// Index of the parent element.
    parent: Option<usize>,
    /// Its own index.
    idx: usize,
}

impl El {
    fn a(&self, local: &str) -> Option<&str> {
        self.el.attr(local).filter(|v| !v.trim().is_empty())
    }
    fn csip(&self, local: &str) -> Option<&str> {
        self.el.attr_ns(NS_CSIP, local).filter(|v| !v.trim().is_empty())
    }
}

fn terms(vocab: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for part in vocab.split("<Term").skip(1) {
        if let Some(start) = part.find('>') {
            let rest = &part[start + 1..];
            if let Some(end) = rest.find('<') {
                out.insert(rest[..end].to_string());
            }
        }
    }
    out
}

/// Reads a METS document's METS elements; Err(line, message) when it is not well-formed.
fn read_elements(path: &Path) -> Result<Vec<El>, (u64, String)> {
    let file = layout::open_regular(path).map_err(|e| (1, e.to_string()))?;
    let mut reader = MetsReader::lenient(BufReader::with_capacity(256 * 1024, file));
    let mut out: Vec<El> = Vec::new();
    let mut stack: Vec<Option<usize>> = Vec::new();
    loop {
        let event = match reader.next() {
            Ok(Some(e)) => e,
            Ok(None) => break,
            Err(e) => return Err((e.pos().line, e.to_string())),
        };
        let (el, pos, open) = match event {
            Event::Start(el, pos) => (el, pos, true),
            Event::Empty(el, pos) => (el, pos, false),
            Event::End { .. } => {
                stack.pop();
                continue;
            }
            Event::Text(t, _) => {
                if let Some(Some(i)) = stack.last()
                    && matches!(out[*i].el.local.as_str(), "name" | "note")
                    && out[*i].text.len() < 4096
                {
                    out[*i].text.push_str(&t);
                }
                continue;
            }
            Event::Refused(r, pos) => return Err((pos.line, format!("{r:?}"))),
        };
        // An empty element has no end event: only an open one goes on the stack.
        if el.ns != NS_METS {
            if open {
                stack.push(None);
            }
            continue;
        }
        let parent = stack.iter().rev().flatten().next().copied();
        let path = match parent {
            Some(p) => format!("{}/{}", out[p].path, el.local),
            None => el.local.clone(),
        };
        let idx = out.len();
        out.push(El { path, el, line: pos.line, text: String::new(), parent, idx });
        if open {
            stack.push(Some(idx));
        }
    }
    Ok(out)
}
/// Collects findings for one document.
struct Doc<'a> {
    name: String,
    els: Vec<El>,
    out: &'a mut Vec<Finding>,
}

impl Doc<'_> {
    fn find(&mut self, line: u64, rule: &str, message: impl Into<String>) {
        self.out.push(Finding {
            path: self.name.clone(),
            line,
            rule: rule.into(),
            message: message.into(),
        });
    }
    fn all(&self, path: &str) -> Vec<El> {
        self.els.iter().filter(|e| e.path == path).cloned().collect()
    }
    fn children(&self, parent: &El, local: &str) -> Vec<El> {
        self.els
            .iter()
            .filter(|e| e.parent == Some(parent.idx) && e.el.local == local)
            .cloned()
            .collect()
    }
    /// `rule` when `el` lacks attribute `attr` (or it is empty).
    fn need(&mut self, el: &El, attr: &str, rule: &str) {
        if el.a(attr).is_none() {
            let msg = format!("{} has no {attr}", el.path);
            self.find(el.line, rule, msg);
        }
    }
    fn need_value(&mut self, el: &El, attr: &str, want: &str, rule: &str) {
        let got = match attr.strip_prefix("xlink:") {
            Some(l) => el.el.attr_ns(crate::mets::reader::NS_XLINK, l),
            None => el.el.attr(attr),
        };
        if got != Some(want) {
            let msg = format!("{}/@{attr} is {got:?}, must be \"{want}\"", el.path);
            self.find(el.line, rule, msg);
        }
    }
}

/// Rules of the root element and header, shared by the root and representation METS.
fn root_rules(d: &mut Doc<'_>, is_root: bool, sip: &mut bool) {
    let Some(root) = d.els.first().cloned().filter(|e| e.el.local == "mets") else {
        d.find(1, "CSIP1", "the document has no mets:mets root element");
        return;
    };
    d.need(&root, "OBJID", "CSIP1");
    match root.a("TYPE") {
        Some(t) if terms(VOCAB_CONTENT_CATEGORY).contains(t) => {
            if t == "Other" && root.csip("OTHERTYPE").is_none() {
                d.find(root.line, "CSIP3", "mets/@TYPE is Other and csip:OTHERTYPE is missing");
            }
        }
        t => d.find(
            root.line,
            "CSIP2",
            format!("mets/@TYPE {t:?} is not in the content category vocabulary"),
        ),
    }
    match root.csip("CONTENTINFORMATIONTYPE") {
        Some(t) if !terms(VOCAB_CONTENT_INFO_TYPE).contains(t) => d.find(
            root.line,
            "CSIP4",
            format!("mets/@csip:CONTENTINFORMATIONTYPE {t:?} is not in its vocabulary"),
        ),
        None if !is_root => d.find(
            root.line,
            "CSIP4",
            "a representation METS must state mets/@csip:CONTENTINFORMATIONTYPE",
        ),
        _ => {}
    }
    d.need(&root, "PROFILE", "CSIP6");
    let hdrs = d.all("mets/metsHdr");
    let Some(hdr) = hdrs.first().cloned() else {
        d.find(root.line, "CSIP117", "mets has no metsHdr");
        return;
    };
    d.need(&hdr, "CREATEDATE", "CSIP7");
    let kind = hdr.csip("OAISPACKAGETYPE");
    match kind {
        Some(k) if terms(VOCAB_PACKAGE_TYPE).contains(k) => {}
        k => d.find(
            hdr.line,
            "CSIP9",
            format!("metsHdr/@csip:OAISPACKAGETYPE {k:?} is not in its vocabulary"),
        ),
    }
    *sip = kind == Some("SIP");
    if is_root
        && *sip
        && root.a("PROFILE") != Some(PROFILE_SIP)
        && root.a("PROFILE") != Some("https://earksip.dilcis.eu/profile/E-ARK-SIP-v2-2-0.xml")
    {
        d.find(
            root.line,
            "SIP2",
            format!("mets/@PROFILE must be the E-ARK SIP profile, is {:?}", root.a("PROFILE")),
        );
    }
    agent_rules(d, &hdr);
}

/// CSIP10-16: the software agent that made the package.
fn agent_rules(d: &mut Doc<'_>, hdr: &El) {
    let agents = d.children(hdr, "agent");
    if agents.is_empty() {
        d.find(hdr.line, "CSIP10", "metsHdr has no agent");
        return;
    }
    let software: Vec<El> = agents
        .iter()
        .filter(|a| a.a("ROLE") == Some("CREATOR") && a.a("TYPE") == Some("OTHER"))
        .cloned()
        .collect();
    let Some(a) = software.first() else {
        if !agents.iter().any(|a| a.a("ROLE") == Some("CREATOR")) {
            d.find(hdr.line, "CSIP11", "no metsHdr/agent has ROLE=\"CREATOR\"");
        } else {
            d.find(hdr.line, "CSIP12", "no CREATOR agent has TYPE=\"OTHER\" (the software)");
        }
        return;
    };
    d.need_value(a, "OTHERTYPE", "SOFTWARE", "CSIP13");
    let names = d.children(a, "name");
    if names.len() != 1 || names[0].text.trim().is_empty() {
        d.find(a.line, "CSIP14", "the software agent must have one non-empty name");
    }
    let notes = d.children(a, "note");
    if notes.is_empty() || notes.iter().all(|n| n.text.trim().is_empty()) {
        d.find(a.line, "CSIP15", "the software agent must have a note with its version");
    } else if !notes.iter().any(|n| n.csip("NOTETYPE") == Some("SOFTWARE VERSION")) {
        d.find(
            a.line,
            "CSIP16",
            "the software agent's note must have csip:NOTETYPE=\"SOFTWARE VERSION\"",
        );
    }
}

/// The attribute rules of an `mdRef` (dmdSec CSIP22-30, digiprovMD CSIP36-44, rightsMD
/// CSIP49-57: the same nine attributes, numbered from `first`).
fn md_ref_rules(d: &mut Doc<'_>, r: &El, first: u32, files: &mut Vec<Listed>) {
    let id = |k: u32| format!("CSIP{}", first + k);
    d.need_value(r, "LOCTYPE", "URL", &id(0));
    d.need_value(r, "xlink:type", "simple", &id(1));
    if r.el.href().is_none() {
        d.find(r.line, &id(2), format!("{} has no xlink:href", r.path));
    }
    for (k, attr) in [
        (3, "MDTYPE"),
        (4, "MIMETYPE"),
        (5, "SIZE"),
        (6, "CREATED"),
        (7, "CHECKSUM"),
        (8, "CHECKSUMTYPE"),
    ] {
        d.need(r, attr, &id(k));
    }
    files.push(Listed::of(r, id(5), id(7)));
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
    fn of(el: &El, size_rule: String, checksum_rule: String) -> Listed {
        Listed {
            href: el.el.href().map(str::to_string),
            size: el.a("SIZE").map(str::to_string),
            checksum: el.a("CHECKSUM").map(str::to_string),
            checksum_type: el.a("CHECKSUMTYPE").map(str::to_string),
            line: el.line,
            size_rule,
            checksum_rule,
        }
    }
}

fn section_rules(d: &mut Doc<'_>, files: &mut Vec<Listed>) {
    // CSIP17 (a dmdSec) is a SHOULD: not reported.
    for s in d.all("mets/dmdSec") {
        d.need(&s, "ID", "CSIP18");
        d.need(&s, "CREATED", "CSIP19");
        status_rule(d, &s, "CSIP20");
    }
    for r in d.all("mets/dmdSec/mdRef") {
        md_ref_rules(d, &r, 22, files);
    }
    for s in d.all("mets/amdSec/digiprovMD") {
        d.need(&s, "ID", "CSIP33");
        status_rule(d, &s, "CSIP34");
    }
    for r in d.all("mets/amdSec/digiprovMD/mdRef") {
        md_ref_rules(d, &r, 36, files);
    }
    for s in d.all("mets/amdSec/rightsMD") {
        d.need(&s, "ID", "CSIP46");
        status_rule(d, &s, "CSIP47");
    }
    for r in d.all("mets/amdSec/rightsMD/mdRef") {
        md_ref_rules(d, &r, 49, files);
    }
}

fn status_rule(d: &mut Doc<'_>, s: &El, rule: &str) {
    if let Some(v) = s.a("STATUS")
        && !terms(VOCAB_STATUS).contains(v)
    {
        d.find(s.line, rule, format!("{}/@STATUS {v:?} is not in the status vocabulary", s.path));
    }
}

/// CSIP59-79 (and 113, 114 for the root METS).
fn file_sec_rules(d: &mut Doc<'_>, is_root: bool, files: &mut Vec<Listed>) {
    let secs = d.all("mets/fileSec");
    let Some(sec) = secs.first().cloned() else { return };
    d.need(&sec, "ID", "CSIP59");
    let groups = d.all("mets/fileSec/fileGrp");
    if is_root {
        for (use_, rule) in [("Documentation", "CSIP60"), ("Schemas", "CSIP113")] {
            if !groups.iter().any(|g| g.a("USE") == Some(use_)) {
                d.find(sec.line, rule, format!("no fileGrp with USE=\"{use_}\""));
            }
        }
        if !groups.iter().any(|g| g.a("USE").is_some_and(|u| u.starts_with("Representations"))) {
            d.find(sec.line, "CSIP114", "no fileGrp whose USE starts with \"Representations\"");
        }
    }
    for g in &groups {
        d.need(g, "USE", "CSIP64");
        d.need(g, "ID", "CSIP65");
        if d.children(g, "file").is_empty() {
            d.find(g.line, "CSIP66", "fileGrp lists no file");
        }
    }
    for f in d.all("mets/fileSec/fileGrp/file") {
        for (attr, rule) in [
            ("ID", "CSIP67"),
            ("MIMETYPE", "CSIP68"),
            ("SIZE", "CSIP69"),
            ("CREATED", "CSIP70"),
            ("CHECKSUM", "CSIP71"),
            ("CHECKSUMTYPE", "CSIP72"),
        ] {
            d.need(&f, attr, rule);
        }
        let locs = d.children(&f, "FLocat");
        let Some(loc) = locs.first() else {
            d.find(f.line, "CSIP76", "file has no FLocat");
            continue;
        };
        d.need_value(loc, "LOCTYPE", "URL", "CSIP77");
        d.need_value(loc, "xlink:type", "simple", "CSIP78");
        if loc.el.href().is_none() {
            d.find(loc.line, "CSIP79", "FLocat has no xlink:href");
        }
        let mut l = Listed::of(&f, "CSIP69".into(), "CSIP71".into());
        l.href = loc.el.href().map(str::to_string);
        files.push(l);
    }
}

/// CSIP80-112 and 116-119 of the root METS; returns the representation METS it points at.
fn struct_map_rules(d: &mut Doc<'_>, is_root: bool) -> Vec<(String, u64)> {
    let maps = d.all("mets/structMap");
    let root_line = d.els.first().map_or(1, |e| e.line);
    let Some(map) = maps.iter().find(|m| m.a("LABEL") == Some("CSIP")).cloned() else {
        match maps.first() {
            None => d.find(root_line, "CSIP80", "mets has no structMap"),
            Some(m) => d.find(m.line, "CSIP82", "no structMap has LABEL=\"CSIP\""),
        }
        return Vec::new();
    };
    d.need_value(&map, "TYPE", "PHYSICAL", "CSIP81");
    d.need(&map, "ID", "CSIP83");
    let divs = d.children(&map, "div");
    let Some(main) = divs.first().cloned() else {
        d.find(map.line, "CSIP84", "structMap has no div");
        return Vec::new();
    };
    d.need(&main, "ID", "CSIP85");
    let subs = d.children(&main, "div");
    let mut mets = Vec::new();
    if is_root && !subs.iter().any(|s| s.a("LABEL") == Some("Metadata")) {
        d.find(main.line, "CSIP88", "the main div has no div LABEL=\"Metadata\"");
    }
    for s in &subs {
        let (id_rule, fptr_rule) = match s.a("LABEL") {
            Some("Metadata") => ("CSIP89", None),
            Some("Documentation") => ("CSIP94", Some("CSIP116")),
            Some("Schemas") => ("CSIP98", Some("CSIP118")),
            Some("Representations") => ("CSIP102", Some("CSIP119")),
            Some(l) if l.starts_with("Representations/") => ("CSIP106", None),
            None if is_root => {
                d.find(s.line, "CSIP107", "a division of the main div has no LABEL");
                continue;
            }
            _ => continue,
        };
        d.need(s, "ID", id_rule);
        if let Some(rule) = fptr_rule {
            for p in d.children(s, "fptr") {
                d.need(&p, "FILEID", rule);
            }
        }
        if id_rule == "CSIP106" {
            let ptrs = d.children(s, "mptr");
            let Some(p) = ptrs.first() else {
                d.find(s.line, "CSIP109", "representation division has no mptr");
                continue;
            };
            if p.el.attr_ns(crate::mets::reader::NS_XLINK, "title").is_none() {
                d.find(p.line, "CSIP108", "mptr has no xlink:title (the file group's ID)");
            }
            match p.el.href() {
                Some(h) => mets.push((h.to_string(), p.line)),
                None => d.find(p.line, "CSIP110", "mptr has no xlink:href"),
            }
            d.need_value(p, "xlink:type", "simple", "CSIP111");
            d.need_value(p, "LOCTYPE", "URL", "CSIP112");
        }
    }
    mets
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
    let els = match read_elements(&path) {
        Ok(els) => els,
        Err((line, msg)) => {
            report.findings.push(Finding {
                path: rel.into(),
                line,
                rule: "CSIP1".into(),
                message: format!("not a readable METS document: {msg}"),
            });
            return Vec::new();
        }
    };
    let mut files = Vec::new();
    let mut d = Doc { name: rel.to_string(), els, out: &mut report.findings };
    let mut sip = false;
    root_rules(&mut d, is_root, &mut sip);
    section_rules(&mut d, &mut files);
    file_sec_rules(&mut d, is_root, &mut files);
    let reps = struct_map_rules(&mut d, is_root);
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
        let file = layout::open_regular(path).map_err(|e| io(std::io::Error::other(e)))?;
        let mut zip = zip::ZipArchive::new(BufReader::new(file))
            .map_err(|source| CheckError::Zip { path: path.to_path_buf(), source })?;
        let mut tops = HashSet::new();
        for i in 0..zip.len() {
            // Hostile archives: nothing outside the folder, no links.
            let entry = zip
                .by_index(i)
                .map_err(|source| CheckError::Zip { path: path.to_path_buf(), source })?;
            let raw = entry.name().map(|n| n.to_string()).unwrap_or_default();
            // A name the crate would normalise (`a/../b`, `./a`, `/a`, `a\b`) is refused, not
            // normalised: its raw form leads elsewhere for other readers.
            let odd = raw.starts_with('/')
                || raw.contains('\\')
                || raw.split('/').any(|part| part == ".." || part == ".");
            if odd || entry.enclosed_name().is_none() || entry.is_symlink() {
                let name = raw;
                return Err(CheckError::Unsafe { path: path.to_path_buf(), name });
            }
            drop(entry);
            let name = zip
                .name_for_index(i)
                .and_then(|n| n.ok())
                .map(|n| n.to_string())
                .unwrap_or_default();
            tops.insert(name.split('/').next().unwrap_or_default().to_string());
        }
        if tops.len() != 1 {
            report.findings.push(Finding {
                path: path.display().to_string(),
                line: 1,
                rule: "CSIPSTR3".into(),
                message: format!(
                    "the archive must unpack to one root folder, it has {}",
                    tops.len()
                ),
            });
            return Ok(report);
        }
        zip.extract(tmp.path())
            .map_err(|source| CheckError::Zip { path: path.to_path_buf(), source })?;
        let top = tops.into_iter().next().unwrap_or_default();
        let root = tmp.path().join(top);
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
    let mut seen: HashMap<String, ()> = HashMap::new();
    for (href, line) in reps {
        if seen.insert(href.clone(), ()).is_some() {
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
