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
use std::path::Path;

use super::Checker;
use crate::formats::url::url_key;
use crate::formats::warc::reader::{MAX_HEADER_BYTES, WarcReader};
use crate::layout;
use crate::mets::reader::{Event, MetsReader, NS_METS, NS_MODS, Pos};

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
    Record {
        /// FLocat of the container.
        href: Option<String>,
        /// ID of the record `<file>`.
        record: String,
        begin: Option<u64>,
        end: Option<u64>,
        /// True when the record `<file>` has a GZIP transform.
        gzip: bool,
    },
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

impl Checker {
    /// Checks the entity divs the first pass found against their MODS and their records. The
    /// containers are looked for next to the METS document at `path`.
    pub(super) fn check_entities(&mut self, path: &Path) {
        if self.xml_error || self.comparing || self.entities.is_empty() {
            return;
        }
        let entities = std::mem::take(&mut self.entities);
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
        for e in &entities {
            self.check_entity(e, &collected, dir);
        }
    }

    fn check_entity(&mut self, e: &EntityDiv, c: &Collected, dir: &Path) {
        let div = if e.id.is_empty() { format!("the {} div", e.div_type) } else { e.id.clone() };
        // Dangling DMDIDs are reported with the other references (P2.2).
        let known: Vec<(&String, &DmdFacts)> =
            e.dmdids.iter().filter_map(|d| c.dmd.get(d).map(|f| (d, f))).collect();
        if known.len() < e.dmdids.len() {
            return;
        }
        let mods = known.iter().find(|(_, f)| f.mdtype.as_deref() == Some("MODS"));
        let Some((dmd_id, facts)) = mods else {
            self.profile_rule(
                "P2.2",
                "div",
                e.offset,
                format!(
                    "{div} ({}): none of its dmdSecs ({}) holds MODS; expected a MODS record describing it",
                    e.div_type,
                    e.dmdids.join(" ")
                ),
            );
            return;
        };
        let Some(url) = facts.url.as_deref().map(str::trim).filter(|u| !u.is_empty()) else {
            self.profile_rule(
                "P2.2",
                "div",
                e.offset,
                format!(
                    "{div} ({}): its MODS dmdSec {dmd_id} has no mods:location/mods:url (outside mods:relatedItem); expected the URL of the {}",
                    e.div_type,
                    if e.div_type == self.profile.structure.webpage { "page" } else { "object" }
                ),
            );
            return;
        };
        for fileid in &e.fptrs {
            // Dangling FILEIDs are reported with the other references (P2.3).
            let Some(target) = c.files.get(fileid) else { continue };
            self.check_target(&div, url, fileid, target, dir, e.offset);
        }
    }

    fn check_target(
        &mut self,
        div: &str,
        url: &str,
        fileid: &str,
        target: &Target,
        dir: &Path,
        at: Pos,
    ) {
        let Target::Record { href, record, begin, end, gzip } = target else {
            self.profile_rule(
                "P2.3",
                "fptr",
                at,
                format!(
                    "{div}: fptr {fileid} names a top-level file; expected a record or bytestream <file> whose WARC-Target-URI is {url:?}"
                ),
            );
            return;
        };
        // Missing ranges and locations are reported by P4.2/P4.4; nothing to read then.
        let (Some(href), Some(begin), Some(end)) = (href, begin, end) else { return };
        if end < begin || href.contains("://") || href.starts_with("file:") {
            if end >= begin {
                self.notice(
                    "P2.3",
                    "div",
                    at,
                    format!(
                        "{div}: not checkable here: its record {record} is in {href}, which is kept elsewhere"
                    ),
                );
            }
            return;
        }
        let file = match layout::open_in(dir, href) {
            Ok(f) => f,
            Err(err) if err.is_not_found() => {
                self.notice(
                    "P2.3",
                    "div",
                    at,
                    format!(
                        "{div}: not checkable here: container {href} is absent, so whether record {record} at byte {begin} has the URL {url:?} is not known"
                    ),
                );
                return;
            }
            Err(err) => {
                self.error(
                    "P2.3",
                    "div",
                    at,
                    format!("{div}: container {href} of record {record} cannot be opened: {err}"),
                );
                return;
            }
        };
        let uri = match record_target_uri(file, *begin, *end, *gzip) {
            Ok(u) => u,
            Err(why) => {
                self.error(
                    "P2.3",
                    "div",
                    at,
                    format!(
                        "{div}: record {record} at byte {begin} of {href} cannot be read: {why}"
                    ),
                );
                return;
            }
        };
        match uri {
            None => self.error(
                "P2.3",
                "div",
                at,
                format!(
                    "{div}: MODS URL {url:?}, but record {record} at byte {begin} of {href} has no WARC-Target-URI"
                ),
            ),
            Some(uri) if url_key(&uri) != url_key(url) => self.error(
                "P2.3",
                "div",
                at,
                format!(
                    "{div}: MODS URL {url:?} differs from WARC-Target-URI {uri:?} of record {record} at byte {begin} of {href}"
                ),
            ),
            Some(_) => {}
        }
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
    let mut out = Collected::default();
    let mut reader = MetsReader::lenient(input);
    let mut open: Vec<OpenFile> = Vec::new();
    // The dmdSec being read (when wanted), how deep in mods:relatedItem and mods:location the
    // reader is, and the text of a mods:url being read with its `usage`.
    let mut dmd_id: Option<String> = None;
    let (mut related, mut location) = (0usize, 0usize);
    let mut url: Option<(String, bool)> = None;
    while let Ok(Some(event)) = reader.next() {
        let (start, empty) = match &event {
            Event::Start(e, _) => (Some(e), false),
            Event::Empty(e, _) => (Some(e), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            let attr = |n: &str| e.attr(n).map(str::to_string);
            if e.ns == NS_METS {
                match e.local.as_str() {
                    "structMap" => break,
                    "dmdSec" => {
                        dmd_id = attr("ID").filter(|i| dmd.contains(i.as_str()));
                        if let Some(i) = &dmd_id {
                            out.dmd.entry(i.clone()).or_default();
                        }
                    }
                    "mdWrap" => {
                        if let Some(f) = dmd_id.as_ref().and_then(|i| out.dmd.get_mut(i))
                            && f.mdtype.is_none()
                        {
                            f.mdtype = attr("MDTYPE");
                        }
                    }
                    "file" => {
                        let num = |k: &str| attr(k).and_then(|v| v.trim().parse::<u64>().ok());
                        open.push(OpenFile {
                            id: attr("ID").unwrap_or_default(),
                            begin: num("BEGIN"),
                            end: num("END"),
                            ..OpenFile::default()
                        });
                    }
                    "FLocat" => {
                        if let Some(f) = open.last_mut()
                            && f.href.is_none()
                        {
                            f.href = e.href().map(str::to_string);
                        }
                    }
                    "transformFile" => {
                        if let Some(f) = open.last_mut()
                            && attr("TRANSFORMALGORITHM").as_deref() == Some("GZIP")
                        {
                            f.gzip = true;
                        }
                    }
                    _ => {}
                }
            } else if e.ns == NS_MODS && dmd_id.is_some() {
                match e.local.as_str() {
                    "relatedItem" if !empty => related += 1,
                    "location" if !empty => location += 1,
                    "url" if related == 0 && location > 0 && !empty => {
                        url = Some((String::new(), attr("usage").as_deref() == Some("primary")));
                    }
                    _ => {}
                }
            }
            if !empty {
                continue;
            }
        }
        if let Event::Text(t, _) = &event
            && let Some((s, _)) = url.as_mut()
            && s.len() < MAX_URL
        {
            s.push_str(t);
        }
        // The end of an element (an empty one ends where it starts).
        let ended = match &event {
            Event::End { ns, local, .. } => Some((ns.as_str(), local.as_str())),
            Event::Empty(e, _) => Some((e.ns.as_str(), e.local.as_str())),
            _ => None,
        };
        if let Some((ns, local)) = ended {
            if ns == NS_METS {
                match local {
                    "dmdSec" => dmd_id = None,
                    "file" => end_file(&mut open, files, &mut out.files),
                    _ => {}
                }
            } else if ns == NS_MODS && dmd_id.is_some() {
                match local {
                    "relatedItem" => related = related.saturating_sub(1),
                    "location" => location = location.saturating_sub(1),
                    "url" => {
                        if let (Some((text, primary)), Some(f)) =
                            (url.take(), dmd_id.as_ref().and_then(|i| out.dmd.get_mut(i)))
                            && (f.url.is_none() || (primary && !f.primary))
                        {
                            f.url = Some(text.trim().to_string());
                            f.primary = primary;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// At the end of a `<file>`: when it is one an entity names, where its record is.
fn end_file(open: &mut Vec<OpenFile>, wanted: &HashSet<&str>, out: &mut HashMap<String, Target>) {
    if let Some(last) = open.last()
        && wanted.contains(last.id.as_str())
    {
        let target = match open.as_slice() {
            [] | [_] => Target::TopLevel,
            [container, record, ..] => Target::Record {
                href: container.href.clone(),
                record: record.id.clone(),
                begin: record.begin,
                end: record.end,
                gzip: record.gzip,
            },
        };
        out.entry(last.id.clone()).or_insert(target);
    }
    open.pop();
}
