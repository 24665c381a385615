//! The curator entities of the logical map (P2.1-P2.3): every WEBPAGE or ASSOCIATEDOBJECT div
//! that has descriptions (DMDID) points at a MODS record with a primary URL, and that URL is the
//! `WARC-Target-URI` of the record its `fptr` leads to.
//!
//! The structMap comes after the fileSec and the dmdSecs, so the first pass only collects the
//! entity divs; a second pass, made only when there are some, collects the dmdSecs and `<file>`s
//! they name (and nothing else: a METS can list millions of files), and stops at the first
//! structMap. Each record named is then read from its container: a bounded read of its header.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::ops::ControlFlow;
use std::path::Path;

use super::rules::RuleContext;
use crate::formats::url::url_key;
use crate::formats::warc::reader::{MAX_HEADER_BYTES, WarcReader};
use crate::layout;
use crate::mets::reader::{Element, Event, MetsReader, NS_METS, NS_MODS, Pos};

/// Most bytes of a record's range read to find its header: a header is at most
/// [`MAX_HEADER_BYTES`] decompressed, and deflate never grows data by more than a little.
const HEADER_WINDOW: u64 = MAX_HEADER_BYTES + (64 << 10);

/// Longest MODS URL kept (a URL longer than this is cut, and then will not match).
const MAX_URL: usize = 64 << 10;

/// A WEBPAGE or ASSOCIATEDOBJECT div with descriptions, directly below the website div.
#[derive(Debug, Clone)]
pub(super) struct EntityDiv {
    pub id: String,
    pub div_type: String,
    pub dmdids: Vec<String>,
    /// The FILEIDs of its own `fptr`s.
    pub fptrs: Vec<String>,
    /// Where the div is in the METS.
    pub offset: Pos,
}

/// What the second pass keeps of a dmdSec an entity names.
#[derive(Debug, Default)]
struct DmdFacts {
    /// MDTYPE of its mdWrap.
    mdtype: Option<String>,
    /// The `mods:location/mods:url` outside any `mods:relatedItem`: the one with
    /// `usage="primary"`, else the first.
    url: Option<String>,
    primary: bool,
}

/// Where the record behind a `<file>` an entity's fptr names is.
#[derive(Debug, Clone)]
enum Target {
    /// The fptr names a top-level file (a container or a log), not a record or bytestream.
    TopLevel,
    /// The record (the named file or its parent) in its container.
    Record(RecordAt),
}

/// A record `<file>` and where its container is.
#[derive(Debug, Clone)]
struct RecordAt {
    /// FLocat of the container.
    href: Option<String>,
    /// ID of the record `<file>`.
    record: String,
    begin: Option<u64>,
    end: Option<u64>,
    /// True when the record `<file>` has a GZIP transform.
    gzip: bool,
}

/// A `<file>` open during the second pass.
#[derive(Default)]
struct OpenFile {
    id: String,
    href: Option<String>,
    begin: Option<u64>,
    end: Option<u64>,
    gzip: bool,
}

/// What the second pass found.
#[derive(Default)]
struct Collected {
    dmd: HashMap<String, DmdFacts>,
    files: HashMap<String, Target>,
}

/// Checks the entity divs the first pass found against their MODS and their records. The
/// containers are looked for next to the METS document at `path`.
pub(super) fn check(cx: &mut RuleContext, entities: &[EntityDiv], path: &Path) {
    if entities.is_empty() {
        return;
    }
    let dmd_wanted: HashSet<&str> =
        entities.iter().flat_map(|e| e.dmdids.iter().map(String::as_str)).collect();
    let file_wanted: HashSet<&str> =
        entities.iter().flat_map(|e| e.fptrs.iter().map(String::as_str)).collect();
    let collected = match layout::open_user_file(path) {
        Ok(f) => collect(BufReader::with_capacity(256 * 1024, f), &dmd_wanted, &file_wanted),
        // The first pass read it; a document gone since is not this check's to report.
        Err(_) => return,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    for e in entities {
        check_entity(cx, e, &collected, dir);
    }
}

/// One entity: its MODS record has a URL, and each record its fptrs lead to has that URL.
fn check_entity(cx: &mut RuleContext, e: &EntityDiv, c: &Collected, dir: &Path) {
    let div = if e.id.is_empty() { format!("the {} div", e.div_type) } else { e.id.clone() };
    // Dangling DMDIDs are reported with the other references (P2.2).
    let known: Vec<(&String, &DmdFacts)> =
        e.dmdids.iter().filter_map(|d| c.dmd.get(d).map(|f| (d, f))).collect();
    if known.len() < e.dmdids.len() {
        return;
    }
    let mods = known.iter().find(|(_, f)| f.mdtype.as_deref() == Some("MODS"));
    let Some((dmd_id, facts)) = mods else {
        let what = format!(
            "{div} ({}): none of its dmdSecs ({}) holds MODS; expected a MODS record describing it",
            e.div_type,
            e.dmdids.join(" ")
        );
        cx.profile_rule("P2.2", "div", e.offset, what);
        return;
    };
    let Some(url) = facts.url.as_deref().map(str::trim).filter(|u| !u.is_empty()) else {
        let what = format!(
            "{div} ({}): its MODS dmdSec {dmd_id} has no mods:location/mods:url (outside mods:relatedItem); expected the URL of the {}",
            e.div_type,
            if e.div_type == cx.profile.structure.webpage { "page" } else { "object" }
        );
        cx.profile_rule("P2.2", "div", e.offset, what);
        return;
    };
    for fileid in &e.fptrs {
        // Dangling FILEIDs are reported with the other references (P2.3).
        let Some(target) = c.files.get(fileid) else { continue };
        let entity = EntityUrl { div: &div, url, at: e.offset };
        check_target(cx, &entity, fileid, target, dir);
    }
}

/// What an entity's records are checked against.
struct EntityUrl<'a> {
    /// The div, as findings name it.
    div: &'a str,
    /// Its MODS URL.
    url: &'a str,
    at: Pos,
}

/// One fptr of an entity: it names a record whose `WARC-Target-URI` is the entity's URL.
fn check_target(cx: &mut RuleContext, e: &EntityUrl, fileid: &str, target: &Target, dir: &Path) {
    let (div, url, at) = (e.div, e.url, e.at);
    let Target::Record(r) = target else {
        let what = format!(
            "{div}: fptr {fileid} names a top-level file; expected a record or bytestream <file> whose WARC-Target-URI is {url:?}"
        );
        cx.profile_rule("P2.3", "fptr", at, what);
        return;
    };
    // Missing ranges and locations are reported by P4.2/P4.4; nothing to read then.
    let (Some(href), Some(begin), Some(end)) = (&r.href, r.begin, r.end) else { return };
    let record = &r.record;
    if end < begin || href.contains("://") || href.starts_with("file:") {
        if end >= begin {
            let what = format!(
                "{div}: not checkable here: its record {record} is in {href}, which is kept elsewhere"
            );
            cx.notice("P2.3", "div", at, what);
        }
        return;
    }
    let uri = match open_record(dir, r, href, begin, end) {
        Ok(uri) => uri,
        Err(RecordProblem::Absent) => {
            let what = format!(
                "{div}: not checkable here: container {href} is absent, so whether record {record} at byte {begin} has the URL {url:?} is not known"
            );
            return cx.notice("P2.3", "div", at, what);
        }
        Err(RecordProblem::NotRead(why)) => {
            let what = format!("{div}: not checkable here: {why}, so its URL is not known");
            return cx.notice("P2.3", "div", at, what);
        }
        Err(RecordProblem::Fault(why)) => {
            return cx.error("P2.3", "div", at, format!("{div}: {why}"));
        }
    };
    let what = match uri {
        None => format!(
            "{div}: MODS URL {url:?}, but record {record} at byte {begin} of {href} has no WARC-Target-URI"
        ),
        Some(uri) if url_key(&uri) != url_key(url) => format!(
            "{div}: MODS URL {url:?} differs from WARC-Target-URI {uri:?} of record {record} at byte {begin} of {href}"
        ),
        Some(_) => return,
    };
    cx.error("P2.3", "div", at, what);
}

/// Why a record's URL could not be read.
enum RecordProblem {
    /// Its container is not there (said as a notice: the check cannot be made here).
    Absent,
    /// The machine or the medium did not give the bytes (an I/O error, memory, descriptors:
    /// `layout::is_not_read`): what they hold is not known, so this is no fault of the METS.
    NotRead(String),
    /// The container or the record cannot be read, in words.
    Fault(String),
}

/// The `WARC-Target-URI` of record `r` at `begin..=end` of container `href` in `dir`.
fn open_record(
    dir: &Path,
    r: &RecordAt,
    href: &str,
    begin: u64,
    end: u64,
) -> Result<Option<String>, RecordProblem> {
    let record = &r.record;
    let file = match layout::open_in(dir, href) {
        Ok(f) => f,
        Err(err) if err.is_not_found() => return Err(RecordProblem::Absent),
        Err(err) => {
            let why = format!("container {href} of record {record} cannot be opened: {err}");
            return Err(problem(&err, why));
        }
    };
    record_target_uri(file, begin, end, r.gzip).map_err(|err| {
        let why = format!("record {record} at byte {begin} of {href} cannot be read: {err}");
        problem(&err, why)
    })
}

/// A read that failed for the machine or the medium is not read; any other is a fault.
fn problem(err: &(dyn std::error::Error + 'static), why: String) -> RecordProblem {
    match layout::not_read_cause(err) {
        Some(_) => RecordProblem::NotRead(why),
        None => RecordProblem::Fault(why),
    }
}

/// The `WARC-Target-URI` of the record at `begin..=end` of `file`, reading at most its header.
fn record_target_uri(
    mut file: std::fs::File,
    begin: u64,
    end: u64,
    gzip: bool,
) -> Result<Option<String>, UnreadableRecord> {
    let len = (end - begin).saturating_add(1);
    let size = file.metadata()?.len();
    if end >= size {
        return Err(UnreadableRecord::PastEnd { end, size });
    }
    file.seek(SeekFrom::Start(begin))?;
    let mut input = BufReader::new(file.take(len.min(HEADER_WINDOW)));
    let magic = input.fill_buf()?;
    let is_gzip = magic.starts_with(&[0x1f, 0x8b]);
    match (gzip, is_gzip) {
        (true, false) => return Err(UnreadableRecord::NotGzip),
        (false, true) => return Err(UnreadableRecord::UnexpectedGzip),
        _ => {}
    }
    let mut reader = WarcReader::new(input, format!("bytes {begin}..={end}"))?;
    // Only the header is wanted: the closure keeps it, and reading stops within the window.
    let mut header = None;
    let read = reader.next_record(|head, _| {
        header = Some(head.header.clone());
        Err::<(), _>(io::Error::other("header read"))
    });
    match (header, read) {
        (Some(h), _) => Ok(h.target_uri().map(str::to_string)),
        (None, Ok(_)) => Err(UnreadableRecord::NoRecord),
        (None, Err(e)) => Err(e.into()),
    }
}

/// Why the record a `div` points at cannot be read (said in the finding, after its place).
#[derive(Debug, thiserror::Error)]
enum UnreadableRecord {
    /// The container cannot be read.
    #[error("{}", layout::describe_io(.0))]
    Io(#[from] io::Error),
    /// The record would end past the container's end.
    #[error("END={end} is past the end of the container ({size} bytes)")]
    PastEnd { end: u64, size: u64 },
    /// The METS says GZIP; the bytes are not a gzip member.
    #[error("the METS says GZIP, but the bytes there are not a gzip member")]
    NotGzip,
    /// The bytes are a gzip member the METS does not declare.
    #[error("the bytes there are a gzip member, but the METS gives no GZIP transform")]
    UnexpectedGzip,
    /// The bytes hold no WARC record.
    #[error("no WARC record there")]
    NoRecord,
    /// The WARC reader stopped.
    #[error("{}", warc_text(.0))]
    Warc(#[from] crate::formats::warc::WarcError),
}

/// What the WARC reader said, with its I/O cause in words.
fn warc_text(e: &crate::formats::warc::WarcError) -> String {
    match e.io() {
        Some(s) => format!("{}: {}", e.fault, layout::describe_io(s)),
        None => e.fault.to_string(),
    }
}

/// Streams the METS once more, keeping the dmdSecs and `<file>`s named; stops at the first
/// structMap (both come before it). A document that stops being well-formed gives what was
/// collected so far (the first pass has reported it, and what it refused).
fn collect(input: impl BufRead, dmd: &HashSet<&str>, files: &HashSet<&str>) -> Collected {
    let mut pass = SecondPass::new(dmd, files);
    let mut reader = MetsReader::lenient(input);
    while let Ok(Some(event)) = reader.next() {
        let flow = match &event {
            Event::Start(e, _) => pass.start(e, false),
            Event::Empty(e, _) => {
                let flow = pass.start(e, true);
                // An empty element ends where it starts.
                pass.end(&e.ns, &e.local);
                flow
            }
            Event::Text(t, _) => {
                pass.text(t);
                ControlFlow::Continue(())
            }
            Event::End { ns, local, .. } => {
                pass.end(ns, local);
                ControlFlow::Continue(())
            }
            _ => ControlFlow::Continue(()),
        };
        if flow.is_break() {
            break;
        }
    }
    pass.out
}

/// The second pass's state.
struct SecondPass<'a> {
    dmd_wanted: &'a HashSet<&'a str>,
    files_wanted: &'a HashSet<&'a str>,
    out: Collected,
    open: Vec<OpenFile>,
    /// The dmdSec being read, when wanted.
    dmd_id: Option<String>,
    /// How deep in mods:relatedItem and mods:location the reader is.
    related: usize,
    location: usize,
    /// The text of a mods:url being read, and whether its `usage` is primary.
    url: Option<(String, bool)>,
}

impl<'a> SecondPass<'a> {
    fn new(dmd_wanted: &'a HashSet<&'a str>, files_wanted: &'a HashSet<&'a str>) -> Self {
        SecondPass {
            dmd_wanted,
            files_wanted,
            out: Collected::default(),
            open: Vec::new(),
            dmd_id: None,
            related: 0,
            location: 0,
            url: None,
        }
    }

    /// Breaks at the first structMap.
    fn start(&mut self, e: &Element, empty: bool) -> ControlFlow<()> {
        if e.ns == NS_METS {
            if e.local == "structMap" {
                return ControlFlow::Break(());
            }
            self.start_mets(e);
        } else if e.ns == NS_MODS && self.dmd_id.is_some() && !empty {
            match e.local.as_str() {
                "relatedItem" => self.related += 1,
                "location" => self.location += 1,
                "url" if self.related == 0 && self.location > 0 => {
                    self.url = Some((String::new(), e.attr("usage") == Some("primary")));
                }
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn start_mets(&mut self, e: &Element) {
        let attr = |n: &str| e.attr(n).map(str::to_string);
        match e.local.as_str() {
            "dmdSec" => {
                self.dmd_id = attr("ID").filter(|i| self.dmd_wanted.contains(i.as_str()));
                if let Some(i) = &self.dmd_id {
                    self.out.dmd.entry(i.clone()).or_default();
                }
            }
            "mdWrap" => {
                if let Some(f) = self.dmd_facts()
                    && f.mdtype.is_none()
                {
                    f.mdtype = attr("MDTYPE");
                }
            }
            "file" => {
                let num = |k: &str| e.attr(k).and_then(|v| v.trim().parse::<u64>().ok());
                self.open.push(OpenFile {
                    id: attr("ID").unwrap_or_default(),
                    begin: num("BEGIN"),
                    end: num("END"),
                    ..OpenFile::default()
                });
            }
            "FLocat" => {
                if let Some(f) = self.open.last_mut()
                    && f.href.is_none()
                {
                    f.href = e.href().map(str::to_string);
                }
            }
            "transformFile" => {
                if let Some(f) = self.open.last_mut()
                    && e.attr("TRANSFORMALGORITHM") == Some("GZIP")
                {
                    f.gzip = true;
                }
            }
            _ => {}
        }
    }

    /// The facts of the wanted dmdSec being read.
    fn dmd_facts(&mut self) -> Option<&mut DmdFacts> {
        self.dmd_id.as_ref().and_then(|i| self.out.dmd.get_mut(i))
    }

    fn text(&mut self, t: &str) {
        if let Some((s, _)) = self.url.as_mut()
            && s.len() < MAX_URL
        {
            s.push_str(t);
        }
    }

    fn end(&mut self, ns: &str, local: &str) {
        if ns == NS_METS {
            match local {
                "dmdSec" => self.dmd_id = None,
                "file" => end_file(&mut self.open, self.files_wanted, &mut self.out.files),
                _ => {}
            }
        } else if ns == NS_MODS && self.dmd_id.is_some() {
            match local {
                "relatedItem" => self.related = self.related.saturating_sub(1),
                "location" => self.location = self.location.saturating_sub(1),
                "url" => self.end_url(),
                _ => {}
            }
        }
    }

    /// The primary URL wins over the first.
    fn end_url(&mut self) {
        let Some((text, primary)) = self.url.take() else { return };
        if let Some(f) = self.dmd_facts()
            && (f.url.is_none() || (primary && !f.primary))
        {
            f.url = Some(text.trim().to_string());
            f.primary = primary;
        }
    }
}

/// At the end of a `<file>`: when it is one an entity names, where its record is.
fn end_file(open: &mut Vec<OpenFile>, wanted: &HashSet<&str>, out: &mut HashMap<String, Target>) {
    if let Some(last) = open.last()
        && wanted.contains(last.id.as_str())
    {
        let target = match open.as_slice() {
            [] | [_] => Target::TopLevel,
            [container, record, ..] => Target::Record(RecordAt {
                href: container.href.clone(),
                record: record.id.clone(),
                begin: record.begin,
                end: record.end,
                gzip: record.gzip,
            }),
        };
        out.entry(last.id.clone()).or_insert(target);
    }
    open.pop();
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"<?xml version="1.0"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:mods="http://www.loc.gov/mods/v3" xmlns:xlink="http://www.w3.org/1999/xlink">
<mets:dmdSec ID="d1"><mets:mdWrap MDTYPE="MODS"><mets:xmlData><mods:mods>
<mods:relatedItem><mods:location><mods:url usage="primary">http://host.example/</mods:url></mods:location></mods:relatedItem>
<mods:location><mods:url>http://first.example/</mods:url><mods:url usage="primary">http://page.example/</mods:url></mods:location>
</mods:mods></mets:xmlData></mets:mdWrap></mets:dmdSec>
<mets:dmdSec ID="d2"><mets:mdWrap MDTYPE="DC"/></mets:dmdSec>
<mets:fileSec><mets:fileGrp USE="DigitalManifestation">
<mets:file ID="c1"><mets:FLocat xlink:href="content/a.warc.gz"/>
<mets:file ID="r1" BEGIN="10" END="99"><mets:transformFile TRANSFORMALGORITHM="GZIP"/>
<mets:file ID="b1" BEGIN="5" END="9"/></mets:file></mets:file>
</mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="logical"><mets:div/></mets:structMap>
<mets:dmdSec ID="late"/>
</mets:mets>"#;

    #[test]
    fn the_second_pass_keeps_the_primary_url_and_the_record_behind_a_bytestream() {
        let dmd: HashSet<&str> = ["d1", "d2", "late"].into();
        let files: HashSet<&str> = ["c1", "b1"].into();
        let c = collect(DOC.as_bytes(), &dmd, &files);
        let d1 = &c.dmd["d1"];
        assert_eq!(d1.mdtype.as_deref(), Some("MODS"));
        // The related item's URL is the host's, not the page's; the primary one wins.
        assert_eq!(d1.url.as_deref(), Some("http://page.example/"));
        assert_eq!(c.dmd["d2"].mdtype.as_deref(), Some("DC"));
        // Reading stops at the structMap.
        assert!(!c.dmd.contains_key("late"));
        assert!(matches!(c.files["c1"], Target::TopLevel));
        let Target::Record(r) = &c.files["b1"] else { panic!("{:?}", c.files["b1"]) };
        assert_eq!(r.href.as_deref(), Some("content/a.warc.gz"));
        assert_eq!((r.record.as_str(), r.begin, r.end, r.gzip), ("r1", Some(10), Some(99), true));
    }
}
