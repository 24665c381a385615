//! The streaming METS writer.
//!
//! A [`MetsBuilder`] is told about the package once ([`PackageHeader`]), then about each
//! container as it is written: [`MetsBuilder::begin_container`] gives a [`ContainerWriter`]
//! that takes the container's records one at a time, and [`MetsBuilder::finish_container`]
//! closes it with the container's final size, checksum and events. Everything that grows with
//! the number of records (record `<file>`s, their amdSecs, web-page divs) goes to spill files
//! in a temporary directory, one set per container, so several containers can be written at
//! once and memory does not grow with the record count. [`MetsBuilder::finish`] assembles the
//! document in METS order: header, dmdSecs, amdSecs, fileSec, structMap.
//!
//! Agents and shared events are written once and linked by identifier (P5.9); a record gets an
//! amdSec only when it is described (P4.7), and in minimal mode only described or referenced
//! records are listed at all.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::sync::Arc;

use chrono::SecondsFormat;
use tempfile::TempPath;

use super::descriptive::{PageMods, write_dc, write_mods, write_page_mods, write_rights};
use super::premis::{write_agent_md, write_event_md, write_object_md, write_referenced_md};
use super::xml::XmlOut;
use crate::model::{EntitiesError, TitleSource};
use crate::model::{
    GroupUse, PackageFile, PackageHeader, PageEntity, PageKind, PageRole, RecordFile,
    SerializationMode,
};
use crate::profile::Profile;

/// Namespace declarations and schema locations of the root element.
const ROOT_NAMESPACES: &[(&str, &str)] = &[
    ("xmlns:mets", "http://www.loc.gov/METS/"),
    ("xmlns:xlink", "http://www.w3.org/1999/xlink"),
    ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
    ("xmlns:premis", "http://www.loc.gov/premis/v3"),
    ("xmlns:mods", "http://www.loc.gov/mods/v3"),
    ("xmlns:dc", "http://purl.org/dc/elements/1.1/"),
    (
        "xsi:schemaLocation",
        "http://www.loc.gov/METS/ http://www.loc.gov/standards/mets/version1121/mets.xsd \
         http://www.loc.gov/premis/v3 http://www.loc.gov/standards/premis/v3/premis.xsd \
         http://www.loc.gov/mods/v3 http://www.loc.gov/standards/mods/v3/mods-3-8.xsd",
    ),
];

/// Order of the file groups in the file section.
const GROUP_ORDER: [GroupUse; 4] =
    [GroupUse::DigitalManifestation, GroupUse::Original, GroupUse::ViralFiles, GroupUse::Logfile];

/// Depth of a container `<file>` in the document (mets > fileSec > fileGrp > file).
const CONTAINER_DEPTH: usize = 3;

struct Spill {
    path: TempPath,
    out: XmlOut<BufWriter<File>>,
}

impl Spill {
    fn new(dir: &tempfile::TempDir, depth: usize) -> io::Result<Spill> {
        let (file, path) = tempfile::NamedTempFile::new_in(dir.path())?.into_parts();
        Ok(Spill { path, out: XmlOut::new(BufWriter::with_capacity(64 * 1024, file), depth) })
    }

    /// Flushes and closes the file, keeping it on disk until the path is dropped.
    fn close(self) -> io::Result<TempPath> {
        let mut w = self.out.into_inner();
        w.flush()?;
        drop(w);
        Ok(self.path)
    }
}

/// Takes one container's records as they are written.
pub struct ContainerWriter {
    index: usize,
    group: GroupUse,
    mode: SerializationMode,
    id: String,
    amd: Spill,
    files: Spill,
    divs: Spill,
    records: u64,
    listed: u64,
    /// The URL keys of the described entities ([`crate::formats::url::url_key`]).
    wanted: Arc<HashSet<String>>,
    /// Captures of those URLs, one of which each entity will point at.
    candidates: Vec<Candidate>,
}

/// A capture of a described URL, kept until the entities are resolved.
#[derive(Debug, Clone)]
struct Candidate {
    key: String,
    /// The record's number in its container (its `<file>` ID is derived from it).
    seq: u64,
    record: RecordFile,
    /// Already listed in the file section.
    listed: bool,
    /// The automatic div (of a transformed page) held back: the entity's div replaces it when
    /// the entity points at this capture.
    auto_div: Option<PageRole>,
}

impl ContainerWriter {
    /// Records seen so far.
    #[cfg(test)]
    pub(crate) fn records(&self) -> u64 {
        self.records
    }

    /// Records listed in the file section so far.
    pub(crate) fn listed(&self) -> u64 {
        self.listed
    }

    /// Adds the next record of the container (in container order).
    pub fn add_record(&mut self, r: &RecordFile) -> io::Result<()> {
        self.records += 1;
        let listed =
            self.mode == SerializationMode::Full || r.described.is_some() || r.page.is_some();
        let rid = format!("{}-R{:06}", self.id, self.records);
        let key = match &r.capture {
            Some(c) if !self.wanted.is_empty() => {
                Some(crate::formats::url::url_key(&c.uri)).filter(|k| self.wanted.contains(k))
            }
            _ => None,
        };
        let mut page = r.page.as_ref();
        if let Some(key) = key {
            self.candidates.push(Candidate {
                key,
                seq: self.records,
                record: RecordFile { described: None, ..r.clone() },
                listed,
                auto_div: page.take().cloned(),
            });
        }
        if !listed {
            return Ok(());
        }
        self.listed += 1;
        let amd_id = format!("AMD-{rid}");
        if r.described.is_some() || r.refers.is_some() {
            let x = &mut self.amd.out;
            x.start("mets:amdSec", &[("ID", &amd_id)])?;
            if let Some(d) = &r.described {
                write_object_md(x, &format!("TECH-{rid}"), &d.object)?;
                for (k, e) in d.events.iter().enumerate() {
                    write_event_md(x, &format!("DP-{rid}-E{}", k + 1), e)?;
                }
            }
            if let Some(p) = &r.refers {
                write_referenced_md(x, &format!("TECH-{rid}-REF"), p, &r.record_id)?;
            }
            x.end("mets:amdSec")?;
        }
        let admid = r.described.is_some().then_some(amd_id.as_str());
        let ref_admid = r.refers.is_some().then_some(amd_id.as_str());
        write_record_file(&mut self.files.out, &rid, r, (ref_admid, admid))?;
        if let Some(p) = page {
            write_auto_div(&mut self.divs.out, &rid, r, p)?;
        }
        Ok(())
    }
}

/// The `<file>` ID a div points at for a record: its bytestream's, or the record's own when
/// the payload is empty (P4.6: an empty payload has no content file).
fn pointed_file_id(rid: &str, r: &RecordFile) -> String {
    match r.content.as_ref().filter(|c| c.range.len > 0) {
        Some(_) => format!("FILE-{rid}-P"),
        None => format!("FILE-{rid}"),
    }
}

/// A record `<file>` with its bytestream `<file>` nested (P4.5, P4.6). `admids`: the
/// record's own amdSec (a revisit's, stating where its payload is stored) and its
/// bytestream's (a described payload's).
pub(crate) fn write_record_file<W: Write>(
    x: &mut XmlOut<W>,
    rid: &str,
    r: &RecordFile,
    admids: (Option<&str>, Option<&str>),
) -> io::Result<()> {
    let (record_admid, admid) = admids;
    let record_file_id = format!("FILE-{rid}");
    let (begin, end, size) = (
        r.member.begin.to_string(),
        r.member.end_inclusive().to_string(),
        r.member.len.to_string(),
    );
    // A record in its own gzip member is gzip data to decompress; a record of an
    // uncompressed WARC (kept byte-exact) is the WARC record itself, with no transform.
    let mime = if r.compressed { "application/gzip" } else { "application/warc" };
    let mut attrs = vec![
        ("ID", record_file_id.as_str()),
        ("OWNERID", r.record_id.as_str()),
        ("MIMETYPE", mime),
        ("SIZE", size.as_str()),
        ("BETYPE", "BYTE"),
        ("BEGIN", begin.as_str()),
        ("END", end.as_str()),
    ];
    if let Some(a) = record_admid {
        attrs.push(("ADMID", a));
    }
    x.start("mets:file", &attrs)?;
    if r.compressed {
        x.empty(
            "mets:transformFile",
            &[
                ("TRANSFORMTYPE", "decompression"),
                ("TRANSFORMALGORITHM", "GZIP"),
                ("TRANSFORMORDER", "1"),
            ],
        )?;
    }
    if let Some(c) = r.content.as_ref().filter(|c| c.range.len > 0) {
        let content_id = format!("FILE-{rid}-P");
        let (begin, end, size) = (
            c.range.begin.to_string(),
            c.range.end_inclusive().to_string(),
            c.range.len.to_string(),
        );
        let mut attrs = vec![
            ("ID", content_id.as_str()),
            ("MIMETYPE", c.mime.as_str()),
            ("SIZE", size.as_str()),
            ("CHECKSUMTYPE", "SHA-512"),
            ("CHECKSUM", c.sha512.as_str()),
            ("BETYPE", "BYTE"),
            ("BEGIN", begin.as_str()),
            ("END", end.as_str()),
        ];
        if let Some(a) = admid {
            attrs.push(("ADMID", a));
        }
        x.empty("mets:file", &attrs)?;
    }
    x.end("mets:file")
}

/// The div TYPE of an entity (P2.1).
fn div_type(kind: PageKind) -> &'static str {
    match kind {
        PageKind::Webpage => "WEBPAGE",
        PageKind::AssociatedObject => "ASSOCIATEDOBJECT",
    }
}

/// The div a transformed page gets without a curator's description: its URL as label.
fn write_auto_div<W: Write>(
    x: &mut XmlOut<W>,
    rid: &str,
    r: &RecordFile,
    p: &PageRole,
) -> io::Result<()> {
    x.start(
        "mets:div",
        &[("ID", &format!("DIV-{rid}")), ("TYPE", div_type(p.kind)), ("LABEL", &p.label)],
    )?;
    x.empty("mets:fptr", &[("FILEID", &pointed_file_id(rid, r))])?;
    x.end("mets:div")
}

struct FinishedContainer {
    index: usize,
    group: GroupUse,
    id: String,
    file: PackageFile,
    amd: TempPath,
    files: TempPath,
    divs: TempPath,
    candidates: Vec<Candidate>,
    /// Record `<file>`s listed only because an entity points at them (written after the
    /// spilled ones), and automatic divs held back for an entity that chose another capture.
    late_files: Vec<u8>,
    late_divs: Vec<u8>,
}

/// Spill directories of the METS builder, in `TMPDIR`.
const SPILL_DIR: crate::temporaries::TempName =
    crate::temporaries::TempName { prefix: "webaip-mets-", suffix: "", dirs: true };

/// Builds one METS document, streaming.
pub struct MetsBuilder {
    header: PackageHeader,
    profile: Profile,
    mode: SerializationMode,
    dir: tempfile::TempDir,
    /// The lock that tells other runs `dir` is in use (see `crate::temporaries`).
    _dir_lock: std::fs::File,
    next_index: usize,
    containers: Vec<FinishedContainer>,
    logs: Vec<PackageFile>,
    package_events: Vec<crate::model::Event>,
    entities: Vec<PageEntity>,
    wanted: Arc<HashSet<String>>,
    resolved: Vec<ResolvedEntity>,
}

impl MetsBuilder {
    /// A builder for the package described by `header`. Spill files go to a new temporary
    /// directory (in `TMPDIR`).
    pub fn new(
        header: PackageHeader,
        profile: Profile,
        mode: SerializationMode,
    ) -> io::Result<Self> {
        // Locked while this run lives: the spill directories of killed runs are removed.
        let tmp = std::env::temp_dir();
        crate::temporaries::remove_dead(&tmp, SPILL_DIR);
        let (dir, dir_lock) = crate::temporaries::locked_dir_in(&tmp, SPILL_DIR)?;
        Ok(MetsBuilder {
            header,
            profile,
            mode,
            dir,
            _dir_lock: dir_lock,
            next_index: 0,
            containers: Vec::new(),
            logs: Vec::new(),
            package_events: Vec::new(),
            entities: Vec::new(),
            wanted: Arc::new(HashSet::new()),
            resolved: Vec::new(),
        })
    }

    /// The webpages and associated objects to describe (P1.3). Given before the first
    /// container is begun: the containers keep the captures of these URLs as records pass, and
    /// the package chooses among them at the end (`MetsBuilder::place_entities`).
    pub fn describe_entities(&mut self, entities: Vec<PageEntity>) {
        self.wanted =
            Arc::new(entities.iter().map(|e| crate::formats::url::url_key(&e.url)).collect());
        self.entities = entities;
    }

    /// Starts a container of the given group. Containers appear in the METS in the order they
    /// were begun.
    pub fn begin_container(&mut self, group: GroupUse) -> io::Result<ContainerWriter> {
        self.next_index += 1;
        let id = format!("C{:05}", self.next_index);
        Ok(ContainerWriter {
            index: self.next_index,
            group,
            mode: self.mode,
            id,
            amd: Spill::new(&self.dir, 1)?,
            files: Spill::new(&self.dir, CONTAINER_DEPTH + 1)?,
            divs: Spill::new(&self.dir, 3)?,
            records: 0,
            listed: 0,
            wanted: self.wanted.clone(),
            candidates: Vec::new(),
        })
    }

    /// Closes a container with its final description (path, size, checksum, object, events).
    pub fn finish_container(&mut self, cw: ContainerWriter, file: PackageFile) -> io::Result<()> {
        let finished = FinishedContainer {
            index: cw.index,
            group: cw.group,
            id: cw.id,
            file,
            amd: cw.amd.close()?,
            files: cw.files.close()?,
            divs: cw.divs.close()?,
            candidates: cw.candidates,
            late_files: Vec::new(),
            late_divs: Vec::new(),
        };
        let pos = self.containers.partition_point(|c| c.index < finished.index);
        self.containers.insert(pos, finished);
        Ok(())
    }

    /// The package header, to complete once the containers are known (capture dates).
    pub(crate) fn header_mut(&mut self) -> &mut PackageHeader {
        &mut self.header
    }

    /// Adds an event that concerns several files (written once, in `AMD-PACKAGE`, linking all
    /// the objects it names).
    pub(crate) fn add_package_event(&mut self, e: crate::model::Event) {
        self.package_events.push(e);
    }

    /// Adds a log or configuration file (`Logfile` group).
    pub fn add_log(&mut self, file: PackageFile) {
        self.logs.push(file);
    }

    /// Writes the whole document to `out`.
    pub fn finish(self, out: impl Write) -> io::Result<()> {
        let mut x = XmlOut::new(BufWriter::with_capacity(256 * 1024, out), 0);
        x.raw(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")?;
        let h = &self.header;
        let mut root: Vec<(&str, &str)> = ROOT_NAMESPACES.to_vec();
        root.extend([
            ("OBJID", h.objid.as_str()),
            ("TYPE", h.package_type.as_str()),
            ("PROFILE", self.profile.uri.as_str()),
            ("LABEL", h.label.as_str()),
        ]);
        x.start("mets:mets", &root)?;
        let created = h.created.to_rfc3339_opts(SecondsFormat::Secs, true);
        self.write_header(&mut x, &created)?;
        self.write_descriptive(&mut x, &created)?;
        self.write_administrative(&mut x)?;
        self.write_file_sec(&mut x)?;
        self.write_logical_map(&mut x)?;
        self.write_physical_map(&mut x)?;
        x.end("mets:mets")?;
        x.into_inner().flush()
    }

    /// The metsHdr: when, and who made the package (the organisation and webaip).
    fn write_header<W: Write>(&self, x: &mut XmlOut<W>, created: &str) -> io::Result<()> {
        let h = &self.header;
        x.start("mets:metsHdr", &[("CREATEDATE", created)])?;
        x.start("mets:agent", &[("ROLE", "CREATOR"), ("TYPE", "ORGANIZATION")])?;
        x.text("mets:name", &[], &h.organisation.name)?;
        x.end("mets:agent")?;
        x.start(
            "mets:agent",
            &[("ROLE", "CREATOR"), ("TYPE", "OTHER"), ("OTHERTYPE", "SOFTWARE")],
        )?;
        x.text("mets:name", &[], &format!("webaip {}", env!("CARGO_PKG_VERSION")))?;
        x.end("mets:agent")?;
        x.end("mets:metsHdr")?;
        Ok(())
    }

    /// The website's MODS and DC, then the described entities' records.
    fn write_descriptive<W: Write>(&self, x: &mut XmlOut<W>, created: &str) -> io::Result<()> {
        let h = &self.header;
        x.start("mets:dmdSec", &[("ID", "DMD-MODS"), ("CREATED", created)])?;
        x.start(
            "mets:mdWrap",
            &[("MDTYPE", "MODS"), ("MIMETYPE", "text/xml"), ("LABEL", "Website (MODS)")],
        )?;
        x.start("mets:xmlData", &[])?;
        write_mods(x, &h.description, &self.profile)?;
        x.end("mets:xmlData")?;
        x.end("mets:mdWrap")?;
        x.end("mets:dmdSec")?;
        x.start("mets:dmdSec", &[("ID", "DMD-DC"), ("CREATED", created)])?;
        x.start(
            "mets:mdWrap",
            &[("MDTYPE", "DC"), ("MIMETYPE", "text/xml"), ("LABEL", "Website (Dublin Core)")],
        )?;
        x.start("mets:xmlData", &[])?;
        write_dc(x, &h.description, &h.rights)?;
        x.end("mets:xmlData")?;
        x.end("mets:mdWrap")?;
        x.end("mets:dmdSec")?;
        self.write_entity_dmd(x, created)
    }

    /// The rights, the package's own events and agents, and each file's technical record.
    fn write_administrative<W: Write>(&self, x: &mut XmlOut<W>) -> io::Result<()> {
        let h = &self.header;
        x.start("mets:amdSec", &[("ID", "AMD-RIGHTS")])?;
        x.start("mets:rightsMD", &[("ID", "RIGHTS-1")])?;
        x.start("mets:mdWrap", &[("MDTYPE", "OTHER"), ("OTHERMDTYPE", "WEBAIP-RIGHTS")])?;
        x.start("mets:xmlData", &[])?;
        write_rights(x, &h.rights)?;
        x.end("mets:xmlData")?;
        x.end("mets:mdWrap")?;
        x.end("mets:rightsMD")?;
        x.end("mets:amdSec")?;

        if !h.agents.is_empty() || !self.package_events.is_empty() {
            x.start("mets:amdSec", &[("ID", "AMD-PACKAGE")])?;
            for (i, e) in self.package_events.iter().enumerate() {
                write_event_md(x, &format!("DP-PACKAGE-E{}", i + 1), e)?;
            }
            for (i, a) in h.agents.iter().enumerate() {
                write_agent_md(x, &format!("AGENT-{}", i + 1), a)?;
            }
            x.end("mets:amdSec")?;
        }

        for c in &self.containers {
            write_file_amd(x, &c.id, &c.file)?;
            copy_into(x, &c.amd)?;
        }
        for (i, l) in self.logs.iter().enumerate() {
            write_file_amd(x, &format!("L{:03}", i + 1), l)?;
        }
        Ok(())
    }

    /// The fileSec: each group's containers and logs, in the profile's order.
    fn write_file_sec<W: Write>(&self, x: &mut XmlOut<W>) -> io::Result<()> {
        x.start("mets:fileSec", &[])?;
        for group in GROUP_ORDER {
            let containers: Vec<&FinishedContainer> =
                self.containers.iter().filter(|c| c.group == group).collect();
            let logs = if group == GroupUse::Logfile { &self.logs[..] } else { &[] };
            if containers.is_empty() && logs.is_empty() {
                continue;
            }
            x.start("mets:fileGrp", &[("USE", self.profile.file_groups.name(group))])?;
            for c in containers {
                write_file_start(x, &c.id, &c.file)?;
                x.empty(
                    "mets:transformFile",
                    &[
                        ("TRANSFORMTYPE", "decompression"),
                        ("TRANSFORMALGORITHM", "WARC"),
                        ("TRANSFORMORDER", "1"),
                    ],
                )?;
                copy_into(x, &c.files)?;
                x.raw(&c.late_files)?;
                x.end("mets:file")?;
            }
            for (i, l) in logs.iter().enumerate() {
                write_file_start(x, &format!("L{:03}", i + 1), l)?;
                x.end("mets:file")?;
            }
            x.end("mets:fileGrp")?;
        }
        x.end("mets:fileSec")
    }

    /// The logical structMap: the website, its entities and each container's divs.
    fn write_logical_map<W: Write>(&self, x: &mut XmlOut<W>) -> io::Result<()> {
        let h = &self.header;
        x.start("mets:structMap", &[("TYPE", "logical"), ("LABEL", "Website")])?;
        x.start(
            "mets:div",
            &[
                ("ID", "DIV-WEBSITE"),
                ("TYPE", "WEBSITE"),
                ("LABEL", &h.description.title),
                ("DMDID", "DMD-MODS DMD-DC"),
                ("ADMID", "AMD-RIGHTS"),
            ],
        )?;
        for c in self.containers.iter().filter(|c| c.group == GroupUse::DigitalManifestation) {
            x.empty("mets:fptr", &[("FILEID", &format!("FILE-{}", c.id))])?;
        }
        self.write_entity_divs(x)?;
        for c in &self.containers {
            copy_into(x, &c.divs)?;
            x.raw(&c.late_divs)?;
        }
        x.end("mets:div")?;
        x.end("mets:structMap")
    }
}

/// An entity placed on one capture: what its dmdSec and div say. Chosen outside the writer
/// (`package::entities`), which reads the containers for titles; the writer only writes it.
#[derive(Debug, Clone)]
pub(crate) struct PlacedEntity {
    /// The entity described.
    pub entity: PageEntity,
    /// Its capture: (container, candidate) as [`MetsBuilder::entity_candidates`] numbers them.
    pub at: (usize, usize),
    /// The capture's `WARC-Target-URI` and `WARC-Date`.
    pub uri: String,
    pub date: String,
    pub date_inferred: bool,
    pub mime: Option<String>,
    pub title: Option<String>,
    pub title_source: TitleSource,
    /// The described page an associated object belongs to: its title, if it has one.
    pub host_title: Option<String>,
}

/// A capture of a described URL, as the entity resolution sees it.
pub(crate) struct EntityCandidate<'a> {
    /// (container, candidate): where [`PlacedEntity::at`] points.
    pub at: (usize, usize),
    /// The container's group and its path in the package.
    pub group: GroupUse,
    pub container_path: &'a str,
    /// The URL key of the capture.
    pub key: &'a str,
    /// The record.
    pub record: &'a RecordFile,
    /// The `<file>` ID an entity placed on it points at.
    pub file_id: String,
}

/// An entity placed, as written.
#[derive(Debug, Clone)]
struct ResolvedEntity {
    placed: PlacedEntity,
    file_id: String,
}

impl MetsBuilder {
    /// The webpages and associated objects to describe, as given.
    pub(crate) fn entities(&self) -> &[PageEntity] {
        &self.entities
    }

    /// The kept captures of described URLs, container by container in METS order.
    pub(crate) fn entity_candidates(&self) -> impl Iterator<Item = EntityCandidate<'_>> {
        self.containers.iter().enumerate().flat_map(|(ci, c)| {
            c.candidates.iter().enumerate().map(move |(k, cand)| EntityCandidate {
                at: (ci, k),
                group: c.group,
                container_path: &c.file.path,
                key: &cand.key,
                record: &cand.record,
                file_id: pointed_file_id(&format!("{}-R{:06}", c.id, cand.seq), &cand.record),
            })
        })
    }

    /// Writes the entities placed (P2.3): the chosen records not listed yet are listed in the
    /// file section even in minimal mode (P4.7), and the automatic divs of the captures no
    /// entity took are given back. Returns the records listed now, per container path.
    pub(crate) fn place_entities(
        &mut self,
        placed: Vec<PlacedEntity>,
    ) -> Result<std::collections::BTreeMap<String, u64>, EntitiesError> {
        let mut listed = std::collections::BTreeMap::new();
        let chosen: HashSet<(usize, usize)> = placed.iter().map(|p| p.at).collect();
        for (ci, c) in self.containers.iter_mut().enumerate() {
            let mut files = XmlOut::new(Vec::new(), CONTAINER_DEPTH + 1);
            let mut divs = XmlOut::new(Vec::new(), 3);
            let mut listed_now: HashSet<u64> = HashSet::new();
            for (k, cand) in c.candidates.iter().enumerate() {
                let rid = format!("{}-R{:06}", c.id, cand.seq);
                let taken = chosen.contains(&(ci, k));
                if taken && !cand.listed && listed_now.insert(cand.seq) {
                    *listed.entry(c.file.path.clone()).or_default() += 1;
                    write_record_file(&mut files, &rid, &cand.record, (None, None)).map_err(
                        |source| EntitiesError::Io { path: c.file.path.clone(), source },
                    )?;
                }
                if !taken && let Some(p) = &cand.auto_div {
                    write_auto_div(&mut divs, &rid, &cand.record, p).map_err(|source| {
                        EntitiesError::Io { path: c.file.path.clone(), source }
                    })?;
                }
            }
            c.late_files = files.into_inner();
            c.late_divs = divs.into_inner();
        }
        self.resolved = placed
            .into_iter()
            .map(|p| {
                let (ci, k) = p.at;
                let c = &self.containers[ci];
                let cand = &c.candidates[k];
                let file_id = pointed_file_id(&format!("{}-R{:06}", c.id, cand.seq), &cand.record);
                ResolvedEntity { placed: p, file_id }
            })
            .collect();
        Ok(listed)
    }

    /// The dmdSecs of the described entities (P1.3): one MODS record each.
    fn write_entity_dmd<W: Write>(&self, x: &mut XmlOut<W>, created: &str) -> io::Result<()> {
        for (i, r) in self.resolved.iter().enumerate() {
            let label = match r.placed.entity.kind {
                PageKind::Webpage => "Webpage (MODS)",
                PageKind::AssociatedObject => "Associated object (MODS)",
            };
            x.start(
                "mets:dmdSec",
                &[("ID", &format!("DMD-PAGE-{}", i + 1)), ("CREATED", created)],
            )?;
            x.start(
                "mets:mdWrap",
                &[("MDTYPE", "MODS"), ("MIMETYPE", "text/xml"), ("LABEL", label)],
            )?;
            x.start("mets:xmlData", &[])?;
            write_page_mods(
                x,
                &PageMods {
                    entity: &r.placed.entity,
                    uri: &r.placed.uri,
                    captured: &r.placed.date,
                    captured_inferred: r.placed.date_inferred,
                    mime: r.placed.mime.as_deref(),
                    title: r.placed.title.as_deref(),
                    title_from_html: r.placed.title_source == TitleSource::Html,
                    host_title: r.placed.host_title.as_deref(),
                },
            )?;
            x.end("mets:xmlData")?;
            x.end("mets:mdWrap")?;
            x.end("mets:dmdSec")?;
        }
        Ok(())
    }

    /// The entities' divs, directly below the website div (P2.1).
    fn write_entity_divs<W: Write>(&self, x: &mut XmlOut<W>) -> io::Result<()> {
        for (i, r) in self.resolved.iter().enumerate() {
            let div_type = div_type(r.placed.entity.kind);
            let label = r.placed.title.as_deref().unwrap_or(&r.placed.uri);
            x.start(
                "mets:div",
                &[
                    ("ID", &format!("DIV-PAGE-{}", i + 1)),
                    ("TYPE", div_type),
                    ("LABEL", label),
                    ("DMDID", &format!("DMD-PAGE-{}", i + 1)),
                ],
            )?;
            x.empty("mets:fptr", &[("FILEID", &r.file_id)])?;
            x.end("mets:div")?;
        }
        Ok(())
    }
}

impl MetsBuilder {
    /// The physical structMap (P2.5): every file of the package, by folder, for METS tools that
    /// read a package through such a map (Archivematica's metsrw builds its file tree from the
    /// `Directory` and `Item` divs). The top div points at the package-level amdSec, so the
    /// events and agents shared by the whole package are reached from the map too.
    fn write_physical_map<W: Write>(&self, x: &mut XmlOut<W>) -> io::Result<()> {
        x.start("mets:structMap", &[("TYPE", "physical"), ("LABEL", "Package files")])?;
        let h = &self.header;
        let mut top =
            vec![("ID", "DIV-PACKAGE"), ("TYPE", "Directory"), ("LABEL", h.objid.as_str())];
        if !h.agents.is_empty() || !self.package_events.is_empty() {
            top.push(("ADMID", "AMD-PACKAGE"));
        }
        x.start("mets:div", &top)?;
        // (folder, file name, FILEID) in fileSec order; a folder's div holds its files.
        let mut entries: Vec<(&str, &str, String)> = Vec::new();
        for group in GROUP_ORDER {
            for c in self.containers.iter().filter(|c| c.group == group) {
                let (folder, name) = c.file.path.split_once('/').unwrap_or(("", &c.file.path));
                entries.push((folder, name, format!("FILE-{}", c.id)));
            }
            if group == GroupUse::Logfile {
                for (i, l) in self.logs.iter().enumerate() {
                    let (folder, name) = l.path.split_once('/').unwrap_or(("", &l.path));
                    entries.push((folder, name, format!("FILE-L{:03}", i + 1)));
                }
            }
        }
        let mut folders: Vec<&str> = Vec::new();
        for e in &entries {
            if !folders.contains(&e.0) {
                folders.push(e.0);
            }
        }
        for folder in folders {
            if !folder.is_empty() {
                x.start("mets:div", &[("TYPE", "Directory"), ("LABEL", folder)])?;
            }
            for (_, name, id) in entries.iter().filter(|e| e.0 == folder) {
                x.start("mets:div", &[("TYPE", "Item"), ("LABEL", name)])?;
                x.empty("mets:fptr", &[("FILEID", id)])?;
                x.end("mets:div")?;
            }
            if !folder.is_empty() {
                x.end("mets:div")?;
            }
        }
        x.end("mets:div")?;
        x.end("mets:structMap")
    }
}

/// The amdSec of a container or log: its object, described sources, and events.
fn write_file_amd<W: Write>(x: &mut XmlOut<W>, id: &str, f: &PackageFile) -> io::Result<()> {
    x.start("mets:amdSec", &[("ID", &format!("AMD-{id}"))])?;
    write_object_md(x, &format!("TECH-{id}"), &f.object)?;
    for (i, s) in f.described_sources.iter().enumerate() {
        write_object_md(x, &format!("TECH-{id}-S{}", i + 1), s)?;
    }
    for (i, e) in f.events.iter().enumerate() {
        write_event_md(x, &format!("DP-{id}-E{}", i + 1), e)?;
    }
    x.end("mets:amdSec")
}

fn write_file_start<W: Write>(x: &mut XmlOut<W>, id: &str, f: &PackageFile) -> io::Result<()> {
    let created = f.created.to_rfc3339_opts(SecondsFormat::Secs, true);
    let size = f.size.to_string();
    x.start(
        "mets:file",
        &[
            ("ID", &format!("FILE-{id}")),
            ("MIMETYPE", &f.mime),
            ("SIZE", &size),
            ("CREATED", &created),
            ("CHECKSUMTYPE", "SHA-512"),
            ("CHECKSUM", &f.sha512),
            ("ADMID", &format!("AMD-{id}")),
        ],
    )?;
    x.empty("mets:FLocat", &[("LOCTYPE", "URL"), ("xlink:type", "simple"), ("xlink:href", &f.path)])
}

fn copy_into<W: Write>(x: &mut XmlOut<W>, path: &TempPath) -> io::Result<()> {
    let mut r = BufReader::with_capacity(256 * 1024, File::open(path)?);
    io::copy(&mut r, x.inner_mut())?;
    Ok(())
}
