//! The AIP's METS: the submission's document, byte for byte, with a few edits (P8.1).
//!
//! One streaming pass ([`scan`]) finds where the edits go: the root start tag (new `OBJID`,
//! `TYPE="AIP"`), the `metsHdr` (`LASTMODDATE`, the ingesting software as an agent, the
//! submission's OBJID as an `altRecordID`), the start of the `fileSec` (the AIP's own amdSec is
//! put before it), and the `premis:format` of each described bytestream identified at ingest.
//! A second pass ([`apply`]) copies the document with those edits: every other byte, the
//! submission's descriptive, rights and PREMIS sections and its whole fileSec, is copied as it
//! is, however large, without being parsed again or held.

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use crate::mets::reader::{Element, Event, MetsError, MetsReader, NS_METS, NS_PREMIS3};
use crate::mets::xml::{XmlOut, xml_safe};
use crate::model::{Format, Identification};

/// A start tag's place in the file and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct Tag {
    /// Offset of its `<`.
    pub start: u64,
    /// Offset just past its `>`.
    pub end: u64,
    /// Its qualified name, as written.
    pub qname: String,
    /// Its attributes: qualified name and value (references resolved).
    pub attrs: Vec<(String, String)>,
    /// `<x/>`: no content, no end tag.
    pub empty: bool,
}

/// A top-level `<file>` of the fileSec and its record `<file>`s.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContainerSite {
    /// Its ID.
    pub id: String,
    /// Its FLocat.
    pub href: Option<String>,
    /// Offset of its end tag (0 for an empty element).
    pub end_tag: u64,
    /// Its indentation, in spaces.
    pub indent: usize,
    /// Its nested `<file>`s, in document order.
    pub records: Vec<RecordSite>,
}

/// A record `<file>` nested in a container's.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordSite {
    /// Its BEGIN.
    pub begin: Option<u64>,
    /// Its span, start tag to end tag.
    pub start: u64,
    pub end: u64,
    /// It or a `<file>` inside it has an ADMID: a described record.
    pub described: bool,
    /// Its ID and the IDs of the `<file>`s inside it.
    pub ids: Vec<String>,
}

/// A `premis:format` of a described bytestream, to replace with what identification found.
#[derive(Debug, Clone)]
pub(crate) struct FormatSite {
    /// The element's span (`<premis:format>` to `</premis:format>`).
    pub start: u64,
    pub end: u64,
    /// The md section or amdSec ID the bytestream's ADMID names.
    pub section: String,
    /// The format as the submission states it (the declared type).
    pub declared: Format,
    /// The submission already states what identification found (a PRONOM key, or the note
    /// that no signature matched): left as it is.
    pub has_pronom: bool,
    /// The prefix the document binds PREMIS 3 to there (`premis` in webaip's METS).
    pub prefix: String,
    /// Its indentation, in levels of two spaces (0 when it does not start a line).
    pub depth: usize,
}

/// Where the edits go, and what the submission says that the AIP needs.
#[derive(Debug, Default)]
pub(crate) struct Sites {
    pub root: Option<Tag>,
    pub objid: Option<String>,
    pub package_type: Option<String>,
    pub hdr: Option<Tag>,
    /// Offset just past the metsHdr's last `agent` (else past its start tag).
    pub after_agents: Option<u64>,
    /// Offset of the `fileSec` start tag (else of the first `structMap`).
    pub before_filesec: Option<u64>,
    pub formats: Vec<FormatSite>,
    /// PREMIS agent identifier values the submission already defines.
    pub agent_ids: HashSet<String>,
    /// The top div of the physical structMap (P2.5): the AIP's amdSec is added to its ADMID,
    /// where METS tools that read a package by its folders find package-level metadata.
    pub physical_top: Option<Tag>,
    /// The container `<file>`s (top-level `<file>`s), with their records (`Wanted::records`).
    pub containers: Vec<ContainerSite>,
    /// The FILEIDs that `fptr` and `area` elements point at (`Wanted::records`).
    pub pointed: HashSet<String>,
    /// The content of the package-level amdSec asked for: just past its start tag, and its end
    /// tag's offset.
    pub package_amd: Option<(u64, u64)>,
    /// PREMIS 2 sections seen: identification results are not written into them.
    pub premis2: bool,
    /// The `altRecordID` of an AIP webaip made that names the submission it came from: its
    /// TYPE ([`SSIP_OBJID`] or [`SSIP_METS_SHA512`]) and value.
    pub ssip_ref: Option<(String, String)>,
    /// The metsHdr's `LASTMODDATE`, when it has a valid one.
    pub last_modified: Option<chrono::DateTime<chrono::Utc>>,
}

/// What a scan looks for beyond the root, header and fileSec.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted<'a> {
    /// The md section and amdSec IDs of the described bytestreams whose `premis:format` is
    /// wanted.
    pub sections: &'a HashSet<String>,
    /// The ID of the package-level amdSec (the physical map's top div names it first), whose
    /// content span is wanted.
    pub package_amd: Option<&'a str>,
    /// The container `<file>`s with their record `<file>`s' spans, and the FILEIDs the
    /// structMaps point at (to list the records anew).
    pub records: bool,
}

/// Finds the edit sites of the document at `path`.
pub(crate) fn scan(path: &Path, wanted: &Wanted<'_>) -> Result<Sites, MetsError> {
    let (sections, package_amd) = (wanted.sections, wanted.package_amd);
    let io_error = |e: io::Error| MetsError::Xml { pos: Default::default(), source: e.into() };
    let file = std::fs::File::open(path).map_err(io_error)?;
    // A second handle reads the few start tags whose prefix the edits need, by position.
    let raw = std::fs::File::open(path).map_err(io_error)?;
    let mut r = MetsReader::strict(BufReader::with_capacity(256 * 1024, file));
    let mut s = Scan {
        sections,
        raw: &raw,
        sites: Sites::default(),
        stack: Vec::new(),
        md: Vec::new(),
        format: None,
        field: None,
        physical: false,
        package_amd,
        records: wanted.records,
        container: None,
        record: None,
        file_depth: 0,
    };
    while let Some(ev) = r.next()? {
        let end = r.offset();
        match ev {
            Event::Start(e, pos) => s.start(&e, pos.offset, end, false),
            Event::Empty(e, pos) => {
                s.start(&e, pos.offset, end, true);
                s.end(&e.ns, &e.local, end, end);
            }
            Event::Text(t, _) => s.text(&t),
            Event::End { ns, local, pos } => s.end(&ns, &local, pos.offset, end),
            Event::Refused(..) => {}
        }
    }
    Ok(s.sites)
}

/// The state of [`scan`].
struct Scan<'a> {
    sections: &'a HashSet<String>,
    raw: &'a std::fs::File,
    sites: Sites,
    /// Open elements' (namespace, local name).
    stack: Vec<(String, String)>,
    /// IDs of the enclosing amdSec and md sections.
    md: Vec<String>,
    format: Option<FormatSite>,
    field: Option<Field>,
    /// Inside a structMap of TYPE physical.
    physical: bool,
    package_amd: Option<&'a str>,
    /// Whether container and record spans are collected.
    records: bool,
    /// The container `<file>` open, and the record `<file>` open in it.
    container: Option<ContainerSite>,
    record: Option<RecordSite>,
    /// Open `<file>` elements.
    file_depth: usize,
}

/// A text of a `premis:format` or agent that the scan keeps.
#[derive(Clone, Copy)]
enum Field {
    Name,
    Version,
    Key,
    AgentId,
    SsipRef,
}

/// The `altRecordID` TYPE under which an AIP names its submission's OBJID.
pub(crate) const SSIP_OBJID: &str = crate::mets::listing::SUBMISSION_OBJID;
/// The one under which it names a submission without an OBJID (another tool's, such as a BL
/// SIP): the SHA-512 of the submission's METS, the one thing that tells it from another.
pub(crate) const SSIP_METS_SHA512: &str = crate::mets::listing::SUBMISSION_METS_SHA512;

const MD_SECTIONS: [&str; 5] = ["amdSec", "techMD", "digiprovMD", "sourceMD", "rightsMD"];

impl Scan<'_> {
    fn start(&mut self, e: &Element, start: u64, end: u64, empty: bool) {
        let depth = self.stack.len();
        self.note_structure(e, depth, start, end, empty);
        self.sites.premis2 |= e.ns == crate::mets::reader::NS_PREMIS2;
        if e.ns == NS_METS && MD_SECTIONS.contains(&e.local.as_str()) {
            let id = e.attr("ID").unwrap_or_default();
            if e.local == "amdSec"
                && !empty
                && Some(id) == self.package_amd
                && self.sites.package_amd.is_none()
            {
                self.sites.package_amd = Some((end, 0));
            }
            self.md.push(id.to_string());
        }
        if self.records {
            self.note_file_start(e, start, end, empty);
        }
        self.note_format(e, start, end, empty);
        self.field = self.field_of(e);
        if !empty {
            self.stack.push((e.ns.clone(), e.local.clone()));
        }
    }

    /// The places of the root, the metsHdr, the first fileSec or structMap, and the physical
    /// structMap's top div, for an element at `depth` from `start` to `end`.
    fn note_structure(&mut self, e: &Element, depth: usize, start: u64, end: u64, empty: bool) {
        if depth == 0 {
            self.sites.objid = e.attr("OBJID").map(str::to_string);
            self.sites.package_type = e.attr("TYPE").map(str::to_string);
            self.sites.root = Some(self.tag(e, start, end, empty));
        } else if depth == 1 && e.is(NS_METS, "metsHdr") {
            self.sites.hdr = Some(self.tag(e, start, end, empty));
            self.sites.after_agents = Some(end);
            self.sites.last_modified =
                e.attr("LASTMODDATE").and_then(|d| crate::formats::dates::parse_rfc3339(d).ok());
        } else if depth == 1
            && self.sites.before_filesec.is_none()
            && (e.is(NS_METS, "fileSec") || e.is(NS_METS, "structMap"))
        {
            self.sites.before_filesec = Some(start);
        }
        if depth == 1 && e.is(NS_METS, "structMap") {
            self.physical = e.attr("TYPE") == Some("physical");
        }
        if depth == 2 && self.physical && e.is(NS_METS, "div") && self.sites.physical_top.is_none()
        {
            self.sites.physical_top = Some(self.tag(e, start, end, empty));
        }
    }

    /// A PREMIS `format` inside a section whose bytestream was identified: a site of its own.
    fn note_format(&mut self, e: &Element, start: u64, end: u64, empty: bool) {
        let section = self.md.iter().rev().find(|id| self.sections.contains(*id)).cloned();
        let (true, Some(section)) = (e.is(NS_PREMIS3, "format"), section) else { return };
        let qname = self.tag(e, start, end, empty).qname;
        let depth = self.indentation(start) / 2;
        self.format = Some(FormatSite {
            depth,
            start,
            end,
            section,
            declared: Format { name: String::new(), version: None, pronom: None },
            has_pronom: false,
            prefix: qname.split_once(':').map(|(p, _)| p.to_string()).unwrap_or_default(),
        });
    }

    /// The field whose text the element `e` holds, if the scan reads it.
    fn field_of(&mut self, e: &Element) -> Option<Field> {
        let in_format = self.format.is_some() && e.ns == NS_PREMIS3;
        match e.local.as_str() {
            "formatName" if in_format => Some(Field::Name),
            "formatVersion" if in_format => Some(Field::Version),
            "formatRegistryKey" | "formatNote" if in_format => Some(Field::Key),
            "agentIdentifierValue" => Some(Field::AgentId),
            "altRecordID"
                if e.ns == NS_METS
                    && matches!(e.attr("TYPE"), Some(SSIP_OBJID | SSIP_METS_SHA512))
                    && self.sites.ssip_ref.is_none() =>
            {
                let kind = e.attr("TYPE").unwrap_or_default().to_string();
                self.sites.ssip_ref = Some((kind, String::new()));
                Some(Field::SsipRef)
            }
            _ => None,
        }
    }

    fn text(&mut self, t: &str) {
        match (self.field, self.format.as_mut()) {
            (Some(Field::AgentId), _) => {
                self.sites.agent_ids.insert(t.trim().to_string());
            }
            (Some(Field::Name), Some(f)) => f.declared.name.push_str(t),
            (Some(Field::Version), Some(f)) => {
                f.declared.version.get_or_insert_default().push_str(t)
            }
            // A registry key, or a note of an identification that found nothing.
            (Some(Field::Key), Some(f)) => {
                f.has_pronom |= !t.trim().is_empty() && !t.trim().starts_with("declared by")
            }
            (Some(Field::SsipRef), _) => {
                if let Some((_, v)) = self.sites.ssip_ref.as_mut() {
                    v.push_str(t.trim());
                }
            }
            _ => {}
        }
    }

    /// An element's end (or an empty element's).
    fn end(&mut self, ns: &str, local: &str, start: u64, end: u64) {
        if self.stack.last().is_some_and(|(n, l)| n == ns && l == local) {
            self.stack.pop();
        }
        if self.records && ns == NS_METS && local == "file" {
            self.note_file_end(start, end);
        }
        self.field = None;
        let depth = self.stack.len();
        if ns == NS_METS && local == "agent" && depth == 2 && self.sites.hdr.is_some() {
            self.sites.after_agents = Some(end);
        }
        if ns == NS_METS && MD_SECTIONS.contains(&local) {
            let id = self.md.pop();
            if local == "amdSec"
                && id.is_some()
                && id.as_deref() == self.package_amd
                && let Some((_, inner_end)) = self.sites.package_amd.as_mut()
                && *inner_end == 0
            {
                *inner_end = start;
            }
        }
        if ns == NS_PREMIS3
            && local == "format"
            && let Some(mut f) = self.format.take()
        {
            f.end = end;
            f.declared.name = f.declared.name.trim().to_string();
            f.declared.version = f.declared.version.map(|v| v.trim().to_string());
            self.sites.formats.push(f);
        }
    }

    /// A `<file>`, an `FLocat` of a container, or a pointer into the fileSec.
    fn note_file_start(&mut self, e: &Element, start: u64, end: u64, empty: bool) {
        if e.ns != NS_METS {
            return;
        }
        let id = || e.attr("ID").unwrap_or_default().to_string();
        match (e.local.as_str(), self.file_depth) {
            ("fptr" | "area", _) => {
                if let Some(f) = e.attr("FILEID") {
                    self.sites.pointed.insert(f.to_string());
                }
            }
            ("FLocat", 1) => {
                if let Some(c) = self.container.as_mut() {
                    c.href.get_or_insert_with(|| e.href().unwrap_or_default().to_string());
                }
            }
            ("file", 0) => {
                let indent = self.indentation(start);
                self.container = Some(ContainerSite { id: id(), indent, ..Default::default() });
            }
            ("file", 1) => {
                self.record = Some(RecordSite {
                    begin: e.attr("BEGIN").and_then(|b| b.trim().parse().ok()),
                    start,
                    end,
                    described: e.attr("ADMID").is_some(),
                    ids: vec![id()],
                });
            }
            ("file", _) => {
                if let Some(r) = self.record.as_mut() {
                    r.described |= e.attr("ADMID").is_some();
                    r.ids.push(id());
                }
            }
            _ => return,
        }
        if e.local == "file" {
            // An empty `<file/>` ends where it starts: `end` undoes this.
            self.file_depth += 1;
            let _ = empty;
        }
    }

    /// The end of a `<file>` (or an empty one).
    fn note_file_end(&mut self, start: u64, end: u64) {
        self.file_depth = self.file_depth.saturating_sub(1);
        match self.file_depth {
            0 => {
                if let Some(mut c) = self.container.take() {
                    c.end_tag = start;
                    self.sites.containers.push(c);
                }
            }
            1 => {
                if let (Some(mut r), Some(c)) = (self.record.take(), self.container.as_mut()) {
                    r.end = end;
                    c.records.push(r);
                }
            }
            _ => {}
        }
    }

    /// The spaces between the line's start and `at`, when nothing else is there.
    fn indentation(&self, at: u64) -> usize {
        use std::os::unix::fs::FileExt;
        let from = at.saturating_sub(128);
        let mut raw = vec![0u8; (at - from) as usize];
        let n = self.raw.read_at(&mut raw, from).unwrap_or(0);
        let line = raw[..n].rsplit(|b| *b == b'\n').next().unwrap_or(&[]);
        if n == raw.len() && line.iter().all(|b| *b == b' ') { line.len() } else { 0 }
    }

    /// A start tag with its qualified name as written (the reader resolves names to namespace
    /// and local name; an edit writes the name back as the document spells it).
    fn tag(&self, e: &Element, start: u64, end: u64, empty: bool) -> Tag {
        use std::os::unix::fs::FileExt;
        let mut raw = vec![0u8; (end - start).min(512) as usize];
        let n = self.raw.read_at(&mut raw, start).unwrap_or(0);
        let qname: String = raw[..n]
            .iter()
            .skip(1)
            .take_while(|b| !b.is_ascii_whitespace() && **b != b'>' && **b != b'/')
            .map(|b| *b as char)
            .collect();
        let attrs = e.attrs.iter().map(|a| (a.qname.clone(), a.value.clone())).collect();
        Tag { start, end, qname, attrs, empty }
    }
}

/// One edit: the bytes `start..end` of the submission's METS become `spilled` (a temporary
/// file's content, for a replacement as large as a record listing), then `bytes`.
#[derive(Debug, Default)]
pub(crate) struct Edit {
    pub start: u64,
    pub end: u64,
    pub bytes: Vec<u8>,
    pub spilled: Option<tempfile::TempPath>,
}

impl Edit {
    /// `start..end` becomes `bytes`.
    pub(crate) fn new(start: u64, end: u64, bytes: Vec<u8>) -> Edit {
        Edit { start, end, bytes, spilled: None }
    }
}

/// A start tag written anew with `set` attributes replaced (or added, in order).
pub(crate) fn retag(t: &Tag, set: &[(&str, &str)]) -> Vec<u8> {
    let mut s = format!("<{}", t.qname);
    let mut done: HashSet<&str> = HashSet::new();
    for (k, v) in &t.attrs {
        let v = match set.iter().find(|(n, _)| n == k) {
            Some((n, nv)) => {
                done.insert(n);
                *nv
            }
            None => v.as_str(),
        };
        s.push_str(&format!(" {k}=\"{}\"", attr_escape(v)));
    }
    for (k, v) in set.iter().filter(|(k, _)| !done.contains(k)) {
        s.push_str(&format!(" {k}=\"{}\"", attr_escape(v)));
    }
    s.push_str(if t.empty { "/>" } else { ">" });
    s.into_bytes()
}

fn attr_escape(v: &str) -> String {
    xml_safe(v)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
        .replace('\t', "&#9;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
}

/// The `premis:format` elements that replace a described bytestream's declared one.
pub(crate) fn format_edit(site: &FormatSite, id: &Identification) -> io::Result<Edit> {
    let mut x = XmlOut::new(Vec::new(), site.depth);
    crate::mets::premis::write_identified_formats(&mut x, &site.declared, id)?;
    // The indentation before the element is the document's; the last line end is its too.
    let text = String::from_utf8_lossy(&x.into_inner()).trim().to_string();
    let mut bytes = text.into_bytes();
    if site.prefix != "premis" {
        // The document binds PREMIS 3 to another prefix here: bind ours on each `format` (its
        // children inherit it; `<premis:formatName` and the like must not be touched).
        let decl = format!("<premis:format xmlns:premis=\"{NS_PREMIS3}\">");
        bytes = String::from_utf8_lossy(&bytes).replace("<premis:format>", &decl).into_bytes();
    }
    Ok(Edit::new(site.start, site.end, bytes))
}

/// Copies `src` to `out` with the edits (sorted, not overlapping) in place of their spans.
pub(crate) fn apply(src: &Path, edits: &mut [Edit], out: &mut impl Write) -> io::Result<()> {
    edits.sort_by_key(|e| (e.start, e.end));
    let mut input = BufReader::with_capacity(256 * 1024, std::fs::File::open(src)?);
    let mut at = 0u64;
    for e in edits.iter() {
        if e.start < at {
            return Err(io::Error::other(format!("overlapping METS edits at byte {}", e.start)));
        }
        copy_n(&mut input, e.start - at, out)?;
        skip_n(&mut input, e.end - e.start)?;
        if let Some(p) = &e.spilled {
            io::copy(&mut std::fs::File::open(p)?, out)?;
        }
        out.write_all(&e.bytes)?;
        at = e.end;
    }
    io::copy(&mut input, out)?;
    Ok(())
}

fn copy_n(r: &mut impl BufRead, n: u64, out: &mut impl Write) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), out)?;
    if copied < n {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the METS changed while read"));
    }
    Ok(())
}

fn skip_n(r: &mut impl BufRead, n: u64) -> io::Result<()> {
    copy_n(r, n, &mut io::sink())
}

/// What the AIP's metsHdr gains: an agent for the ingesting software, and the submission's
/// references (its OBJID and its METS's SHA-512, or the digest alone: `(TYPE, value)`) as
/// alternative record identifiers. `bind` declares the METS namespace on them, for a document
/// that binds it to another prefix.
pub(crate) fn hdr_insert(
    software: &str,
    ssip_refs: &[(&str, &str)],
    bind: bool,
) -> io::Result<Vec<u8>> {
    let ns: &[(&str, &str)] = if bind { &[("xmlns:mets", NS_METS)] } else { &[] };
    let mut x = XmlOut::new(Vec::new(), 2);
    let agent = [("ROLE", "PRESERVATION"), ("TYPE", "OTHER"), ("OTHERTYPE", "SOFTWARE")];
    x.start("mets:agent", &[ns, &agent[..]].concat())?;
    x.text("mets:name", &[], software)?;
    x.text("mets:note", &[], "ingest: the submission became this AIP")?;
    x.end("mets:agent")?;
    for (kind, value) in ssip_refs {
        x.text("mets:altRecordID", &[ns, &[("TYPE", *kind)][..]].concat(), value)?;
    }
    Ok(x.into_inner())
}

/// Generated elements placed where the document had `indent` before the next element: on a
/// line of their own, the next element keeping its indentation.
pub(crate) fn on_own_lines(bytes: &[u8], indent: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    format!("{}\n{indent}", text.trim()).into_bytes()
}

/// True when the root binds `prefix` to `ns` (so inserted elements need not declare it).
pub(crate) fn binds(root: &Tag, prefix: &str, ns: &str) -> bool {
    root.attrs.iter().any(|(k, v)| k == &format!("xmlns:{prefix}") && v == ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:premis="http://www.loc.gov/premis/v3" OBJID="urn:a" TYPE="sSIP" LABEL="a &amp; b">
  <mets:metsHdr CREATEDATE="2020-01-01T00:00:00Z">
    <mets:agent ROLE="CREATOR" TYPE="ORGANIZATION"><mets:name>BL</mets:name></mets:agent>
  </mets:metsHdr>
  <mets:amdSec ID="AMD-1"><mets:techMD ID="T1"><mets:mdWrap MDTYPE="PREMIS:OBJECT"><mets:xmlData>
    <premis:object><premis:objectCharacteristics><premis:format><premis:formatDesignation><premis:formatName>image/jpeg</premis:formatName></premis:formatDesignation></premis:format></premis:objectCharacteristics></premis:object>
  </mets:xmlData></mets:mdWrap></mets:techMD></mets:amdSec>
  <mets:fileSec/>
</mets:mets>
"#;

    fn doc() -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(DOC.as_bytes()).unwrap();
        f
    }

    #[test]
    fn sites_are_found_and_an_empty_edit_list_copies_the_document_exactly() {
        let f = doc();
        let wanted: HashSet<String> = ["AMD-1".to_string()].into();
        let s = scan(f.path(), &Wanted { sections: &wanted, package_amd: None, records: false })
            .unwrap();
        assert_eq!(s.objid.as_deref(), Some("urn:a"));
        let root = s.root.as_ref().unwrap();
        assert_eq!(root.qname, "mets:mets");
        assert_eq!(
            &DOC[root.start as usize..root.end as usize],
            &DOC[39..39 + (root.end - root.start) as usize]
        );
        let after = s.after_agents.unwrap() as usize;
        assert!(DOC[..after].ends_with("</mets:agent>"), "{}", &DOC[..after]);
        assert!(DOC[s.before_filesec.unwrap() as usize..].starts_with("<mets:fileSec/>"));
        assert_eq!(s.formats.len(), 1);
        let fs = &s.formats[0];
        assert_eq!(fs.declared.name, "image/jpeg");
        assert!(DOC[fs.start as usize..fs.end as usize].starts_with("<premis:format>"));
        assert!(DOC[fs.start as usize..fs.end as usize].ends_with("</premis:format>"));
        let mut out = Vec::new();
        apply(f.path(), &mut [], &mut out).unwrap();
        assert_eq!(out, DOC.as_bytes());
    }

    #[test]
    fn the_root_is_retagged_and_a_format_replaced_everything_else_kept() {
        let f = doc();
        let wanted: HashSet<String> = ["AMD-1".to_string()].into();
        let s = scan(f.path(), &Wanted { sections: &wanted, package_amd: None, records: false })
            .unwrap();
        let root = s.root.as_ref().unwrap();
        let id = Identification {
            matches: vec![],
            text: None,
            basis: None,
            method: "webaip test".into(),
            verdict: crate::model::Verdict::Contradicted("declared image/jpeg; no".into()),
            decoding: None,
            caveat: None,
        };
        let mut edits = vec![
            Edit::new(root.start, root.end, retag(root, &[("OBJID", "urn:b"), ("TYPE", "AIP")])),
            format_edit(&s.formats[0], &id).unwrap(),
        ];
        let mut out = Vec::new();
        apply(f.path(), &mut edits, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#"OBJID="urn:b" TYPE="AIP" LABEL="a &amp; b">"#), "{text}");
        assert!(
            text.contains(
                "<premis:formatNote>no PRONOM signature matches (webaip test)</premis:formatNote>"
            ),
            "{text}"
        );
        assert!(text.contains("contradicted by the bytes: declared image/jpeg; no"), "{text}");
        assert!(text.ends_with("<mets:fileSec/>\n</mets:mets>\n"));
    }
}
