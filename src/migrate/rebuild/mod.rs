//! Rebuilding the original ARC files from the WARC containers they were migrated to
//! (`webaip unmigrate`, `audit --deep --rebuild-arcs`; the format is `docs/arc-rebuild.md`).
//!
//! [`rebuild_arcs`] takes containers (a package's content and viral containers, or WARC files
//! written by `migrate`), pairs each container that names its ARC (`warcinfo` `source-file`)
//! with the containers holding its quarantined records, and reads each of them on a thread of
//! its own (`stream`): the records of one ARC are merged by their place in the ARC, and given,
//! in that order, to an `assemble::Assembler`, which writes the ARC's uncompressed stream or,
//! for a gzip ARC, its file (each member compressed again as the original was) to the writer an
//! [`ArcSink`] gives, and checks on the way: each record's framing bytes against its CRC-32,
//! its place against its `X-Webaip-ARC-Offset`, its block against `WARC-Block-Digest`, and the
//! whole against the digests of the ARC's rebuild record. Blocks pass in chunks: memory does
//! not grow with record sizes or counts.

mod assemble;
mod gz_file;
mod originals;
mod package;
mod stream;

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::formats::arc_rebuild::RebuildSummary;
use crate::formats::warc::WarcError;
pub use crate::stages::original_faults::{MissingOriginal, OtherPayload};
use stream::{ArcInfo, Msg, RecordStream, SummaryText};

pub use originals::StoredPayloads;
pub use package::package_statements;

/// Why a rebuild could not run to its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RebuildError {
    /// A container cannot be opened.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Open {
        /// The container.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A container cannot be read as WARC.
    #[error(transparent)]
    Warc(#[from] WarcError),
    /// A record's rebuild fields cannot be read.
    #[error("{container} at offset {offset}: {what}")]
    Record {
        /// The container.
        container: String,
        /// The record's offset in it.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// Text stored in a rebuild field does not decode.
    #[error("stored rebuild data: {0}")]
    Stored(String),
    /// Writing the rebuilt bytes failed.
    #[error("writing the rebuilt ARC: {}", crate::layout::describe_io(.0))]
    Io(#[from] io::Error),
    /// Writing the rebuilt bytes of an ARC failed (a full disk...): the rebuild stops there.
    #[error("{} while writing the rebuilt {name}", crate::layout::describe_io(source))]
    Write {
        /// The ARC's name.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The sink refused or failed an ARC.
    #[error("ARC {name:?}: {}", crate::layout::describe_io(source))]
    Sink {
        /// The ARC's name.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A package's METS cannot be read, or names a file outside the package.
    #[error("{}: {what}", mets.display())]
    Package {
        /// The METS.
        mets: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// A package's METS states no SHA-512 of a container.
    #[error(
        "{}: the METS states no SHA-512 of it: nothing is rebuilt from an unchecked container",
        container.display()
    )]
    Unstated {
        /// The container.
        container: PathBuf,
    },
    /// A package's container is not what its METS states.
    #[error(
        "{}: SHA-512 {found}, the METS states {stated}: the package is damaged (audit it); nothing rebuilt",
        container.display()
    )]
    Changed {
        /// The container.
        container: PathBuf,
        /// What the METS states.
        stated: String,
        /// What its bytes give.
        found: String,
    },
    /// The packages a revisit's payload is looked for in cannot be read.
    #[error(transparent)]
    Originals(Box<crate::stages::undedup::UndedupError>),
    /// A revisit refers to a record no package given holds.
    #[error(transparent)]
    NoOriginal(Box<MissingOriginal>),
    /// The record a revisit refers to holds another payload than the revisit states.
    #[error(transparent)]
    OriginalDiffers(Box<OtherPayload>),
    /// A state the rebuild should never reach.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl RebuildError {
    /// Whether the bytes were not given, which says nothing of them: this machine stopped the
    /// rebuild (a full disk, too many open files, memory exhausted) or the medium reported an
    /// input/output error (`layout::not_read_cause`).
    pub fn is_not_read(&self) -> bool {
        match self {
            RebuildError::Originals(e) => e.is_not_read(),
            other => crate::layout::not_read_cause(other).is_some(),
        }
    }
}

/// How to rebuild.
#[derive(Debug, Clone, Default)]
pub struct RebuildOptions {
    /// Make the file of each gzip ARC (each member compressed again) rather than only its
    /// uncompressed stream.
    pub make_file: bool,
    /// Rebuilding a package's ARCs: the SHA-512 its PREMIS objects state of each, by name
    /// (`PackageStatements::objects`); each ARC file made must have it.
    pub package_objects: Option<HashMap<String, String>>,
}

/// An ARC about to be rebuilt, as its container names it.
#[derive(Debug, Clone)]
pub struct ArcStart<'a> {
    /// The ARC's name as migrated (`source-file`): input, not to be trusted as a path.
    pub name: &'a str,
    /// A gzip ARC.
    pub gzip: bool,
}

/// Where rebuilt ARCs go.
pub trait ArcSink {
    /// The writer for an ARC's bytes; `None`: only hashed and checked.
    fn begin(&mut self, arc: &ArcStart<'_>) -> io::Result<Option<Box<dyn Write + Send>>>;
    /// The ARC is rebuilt (`report` says how well); `out` is the writer `begin` gave.
    fn end(&mut self, report: &ArcRebuild, out: Option<Box<dyn Write + Send>>) -> io::Result<()>;
}

/// Hashes and checks only ([`ArcSink`] for audits).
pub struct CheckOnly;

impl ArcSink for CheckOnly {
    fn begin(&mut self, _: &ArcStart<'_>) -> io::Result<Option<Box<dyn Write + Send>>> {
        Ok(None)
    }
    fn end(&mut self, _: &ArcRebuild, _: Option<Box<dyn Write + Send>>) -> io::Result<()> {
        Ok(())
    }
}

/// Bytes rebuilt against what the rebuild record states.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// Bytes rebuilt.
    pub bytes: u64,
    /// Their SHA-512.
    pub sha512: String,
    /// The original's length (rebuild record).
    pub expected_bytes: u64,
    /// The original's SHA-512 (rebuild record).
    pub expected_sha512: String,
    /// Same length and digest.
    pub equal: bool,
}

/// One place where the rebuild differs from what the package states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// Offset in the ARC file: of the record in a plain ARC, of its gzip member (or raw
    /// region) in a gzip ARC.
    pub offset: u64,
    /// Offset of the record in its decompressed member (gzip ARCs).
    pub in_member: Option<u64>,
    /// What differs.
    pub what: String,
}

/// The rebuild of one ARC.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ArcRebuild {
    /// The ARC's name as migrated.
    pub name: String,
    /// The container holding its records (and rebuild record).
    pub container: String,
    /// A gzip ARC.
    pub gzip: bool,
    /// Records given back.
    pub records: u64,
    /// The uncompressed stream.
    pub stream: Option<Outcome>,
    /// The file (a plain ARC's is its stream; a gzip ARC's only when made).
    pub file: Option<Outcome>,
    /// Gzip members written (record-less ones included).
    pub members: u64,
    /// Gzip members of the original (rebuild record).
    pub members_expected: Option<u64>,
    /// Members that came out as long as the original's (a member compressed with other
    /// settings does not), and record-less members (kept as found).
    pub members_reproduced: u64,
    /// Members whose deflate settings were not recovered at migration (`z=?`).
    pub members_unrecovered: u64,
    /// Where the rebuild record says such members start in the original (the first 20).
    pub unrecovered_offsets: Vec<u64>,
    /// The file's default deflate settings (`?`: not recovered).
    pub deflate: Option<String>,
    /// The SHA-512 the package's PREMIS object states of the ARC file (rebuilt from a package).
    pub package_sha512: Option<String>,
    /// What was not checked, in words (a package whose METS states no SHA-512 of the ARC).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The rebuild record's verdict at migration.
    pub rebuildable: bool,
    /// Why not, as the rebuild record says.
    pub reasons: Vec<String>,
    /// Differences found (the first 1,000).
    pub differences: Vec<Difference>,
    /// Differences found in all.
    pub differences_total: u64,
}

impl ArcRebuild {
    /// True when the file can be expected to be the original's byte for byte: a plain ARC, or
    /// a gzip ARC whose every member's deflate settings were recovered.
    pub fn file_reproducible(&self) -> bool {
        !self.gzip
            || (self.deflate.as_deref().is_some_and(|d| d != "?") && self.members_unrecovered == 0)
    }

    /// For a gzip ARC whose file cannot be given back identical: why, and what is given
    /// instead (the unmigrate report, the audit).
    pub fn not_identical_gzip(&self) -> Option<String> {
        if self.file_reproducible() {
            return None;
        }
        let (count, listed) = (self.members_unrecovered, &self.unrecovered_offsets);
        let at = crate::formats::arc_rebuild::listed_offsets(count, listed);
        let members = match count {
            0 => "its gzip members were".to_string(),
            _ if listed.is_empty() => format!("{count} of its gzip members were"),
            1 => format!("the gzip member at offset {at} was"),
            _ => format!("the {count} gzip members at offsets {at} were"),
        };
        Some(format!(
            "the original .arc.gz cannot be given back identical: {members} compressed with \
             deflate settings webaip did not recover; its uncompressed content comes back identical, \
             compressed again"
        ))
    }

    /// [`Self::not_identical_gzip`] when what it says of the content is so: the stream came
    /// back equal and nothing differed.
    pub fn content_identical_gzip_not(&self) -> Option<String> {
        let stream = self.stream.as_ref().is_some_and(|s| s.equal);
        let content = stream && self.differences_total == 0 && self.differences.is_empty();
        content.then(|| self.not_identical_gzip()).flatten()
    }

    /// True when everything that should be identical is: the stream always, the file when it
    /// was made and [`Self::file_reproducible`], and nothing else differed.
    pub fn as_expected(&self) -> bool {
        let stream = self.stream.as_ref().is_some_and(|s| s.equal);
        let file = match &self.file {
            Some(f) => f.equal || !self.file_reproducible(),
            None => true,
        };
        stream && file && self.differences_total == 0
    }
}

/// Rebuilds every ARC the containers hold, in the order of the containers naming them; the
/// first fault stops it. The payloads revisits leave out are taken from `payloads` (one for a
/// whole run: each of its containers is read once). `progress` hears of container bytes done.
pub fn rebuild_arcs(
    containers: &[PathBuf],
    opts: &RebuildOptions,
    payloads: &mut StoredPayloads,
    sink: &mut dyn ArcSink,
    progress: &dyn Fn(u64),
) -> Result<Vec<ArcRebuild>, RebuildError> {
    let mut reports = Vec::new();
    for pair in pairs(containers)? {
        reports.extend(rebuild_container(&pair.container, &pair.twins, opts, payloads, sink)?);
        progress(std::fs::metadata(&pair.container).map_or(0, |m| m.len()));
    }
    Ok(reports)
}

/// The ARCs of one container rebuilt, or the fault that stopped them.
#[derive(Debug)]
pub struct ContainerRebuild {
    /// The container naming the ARCs.
    pub container: PathBuf,
    /// Its ARCs, or why they were not all rebuilt.
    pub outcome: Result<Vec<ArcRebuild>, RebuildError>,
}

/// [`rebuild_arcs`] that goes on past a container whose rebuild fails (an audit: every
/// other ARC is still checked); fails only when the containers cannot be paired.
pub fn rebuild_each(
    containers: &[PathBuf],
    opts: &RebuildOptions,
    payloads: &mut StoredPayloads,
    sink: &mut dyn ArcSink,
) -> Result<Vec<ContainerRebuild>, RebuildError> {
    let mut each = Vec::new();
    for pair in pairs(containers)? {
        let outcome = rebuild_container(&pair.container, &pair.twins, opts, payloads, sink);
        each.push(ContainerRebuild { container: pair.container, outcome });
    }
    Ok(each)
}

/// A container naming ARCs, and the containers holding their quarantined records.
struct Paired {
    container: PathBuf,
    twins: Vec<PathBuf>,
}

/// Each container naming ARCs (its first record), with the other containers (viral ones)
/// holding records of its ARCs.
fn pairs(containers: &[PathBuf]) -> Result<Vec<Paired>, RebuildError> {
    let mut content = Vec::new();
    let mut others = Vec::new();
    for c in containers {
        match first_arc(c)? {
            Some(info) => content.push((c.clone(), info)),
            None => others.push(c.clone()),
        }
    }
    let mut holds: Vec<(PathBuf, HashSet<String>)> = Vec::new();
    for o in &others {
        holds.push((o.clone(), warcinfo_ids(o)?));
    }
    Ok(content
        .into_iter()
        .map(|(container, info)| {
            let twins = holds
                .iter()
                .filter(|(_, ids)| ids.contains(&info.warcinfo_id))
                .map(|(p, _)| p.clone())
                .collect();
            Paired { container, twins }
        })
        .collect())
}

/// The ARC a container's first record (its `warcinfo`) names, if any.
fn first_arc(path: &Path) -> Result<Option<ArcInfo>, RebuildError> {
    let mut s = RecordStream::open(path)?;
    Ok(match s.next_msg() {
        Some(Msg::Info(info)) => Some(info),
        Some(Msg::Failed(e)) => return Err(e),
        _ => None,
    })
}

/// The `WARC-Warcinfo-ID`s of the ARC records a container holds.
fn warcinfo_ids(path: &Path) -> Result<HashSet<String>, RebuildError> {
    let mut s = RecordStream::open(path)?;
    let mut ids = HashSet::new();
    while let Some(m) = s.next_msg() {
        match m {
            Msg::Piece(p) => {
                ids.insert(p.warcinfo_id.clone());
                s.skip_block()?;
            }
            Msg::Failed(e) => return Err(e),
            _ => {}
        }
    }
    Ok(ids)
}

/// The ARC being rebuilt.
struct Current {
    info: ArcInfo,
    asm: assemble::Assembler,
    /// Its rebuild record, read ahead (what bounds the rebuild).
    ahead: Option<RebuildSummary>,
}

/// The merge of one content container with its twins.
struct Merge<'a> {
    main: RecordStream,
    twins: Vec<RecordStream>,
    opts: &'a RebuildOptions,
    sink: &'a mut dyn ArcSink,
    container: &'a Path,
    /// The container's rebuild records, read ahead.
    summaries: Option<Vec<SummaryText>>,
    /// `summaries` were read from the whole container (not only its tail).
    summaries_whole: bool,
    /// ARCs finished (their twins' records are passed over).
    finished: HashSet<String>,
    reports: Vec<ArcRebuild>,
    /// Where the payloads of revisits are taken from.
    payloads: &'a mut StoredPayloads,
}

fn rebuild_container(
    c: &Path,
    twins: &[PathBuf],
    opts: &RebuildOptions,
    payloads: &mut StoredPayloads,
    sink: &mut dyn ArcSink,
) -> Result<Vec<ArcRebuild>, RebuildError> {
    let mut m = Merge {
        main: RecordStream::open(c)?,
        twins: twins.iter().map(|t| RecordStream::open(t)).collect::<Result<_, _>>()?,
        opts,
        sink,
        container: c,
        summaries: None,
        summaries_whole: false,
        finished: HashSet::new(),
        reports: Vec::new(),
        payloads,
    };
    let mut current: Option<Current> = None;
    while let Some(msg) = m.main.next_msg() {
        match msg {
            Msg::Info(info) => {
                if let Some(cur) = current.take() {
                    m.end_arc(cur, None)?;
                }
                current = Some(m.begin_arc(info)?);
            }
            Msg::Piece(p) => match &mut current {
                Some(cur) if cur.info.warcinfo_id == p.warcinfo_id => {
                    m.twins_before(cur, Some(p.key()))?;
                    // Checked before a byte of the record is given back.
                    let mut payload = m.payloads.payload_of(&p)?;
                    let mut stored =
                        payload.as_mut().map(|v| move || v.next_chunk().map_err(originals::boxed));
                    let stored = stored.as_mut().map(|f| f as &mut dyn FnMut() -> _);
                    let main = &mut m.main;
                    cur.asm
                        .piece_with_payload(&p, || block_chunk(main), stored)
                        .map_err(named(&cur.info.name))?;
                }
                // A record of no ARC this container names: not the rebuild's.
                _ => m.main.skip_block()?,
            },
            Msg::Summary(s) => match current.take() {
                Some(cur) if cur.info.warcinfo_id == s.warcinfo_id => m.end_arc(cur, Some(&s))?,
                // A rebuild record of no ARC being rebuilt.
                other => current = other,
            },
            Msg::Failed(e) => return Err(e),
            Msg::Chunk(_) | Msg::BlockEnd => return Err(RebuildError::Internal("a stray chunk")),
        }
    }
    if let Some(cur) = current.take() {
        m.end_arc(cur, None)?;
    }
    Ok(m.reports)
}

/// Compares the ARC file rebuilt with the SHA-512 the package's PREMIS object states of it
/// (the file of a gzip ARC only when it was made). A METS that describes no file migrated
/// from at all (that of a package `undedup` made of restored containers: they are its files,
/// not the ARC) states nothing to compare: the ARC is checked against its rebuild record only
/// (in the container, whose SHA-512 the METS states), and the report says so. A METS that
/// describes other files migrated from, but not this ARC, describes another package: the ARC
/// differs from it.
fn against_package(r: &mut ArcRebuild, objects: &HashMap<String, String>) {
    let what = match objects.get(&r.name) {
        None if !objects.is_empty() => {
            format!("the package's METS describes no ARC named {:?}", r.name)
        }
        None => {
            r.notes.push(format!(
                "the package's METS states no SHA-512 of the ARC {:?}: it is checked against \
                 the rebuild record of its container only",
                r.name
            ));
            return;
        }
        Some(stated) => {
            r.package_sha512 = Some(stated.clone());
            match &r.file {
                // A file compressed with settings not recovered is not expected to be it.
                Some(f) if f.sha512 != *stated && r.file_reproducible() => format!(
                    "the file rebuilt (SHA-512 {}) is not the ARC the package's PREMIS object \
                     states (SHA-512 {stated})",
                    f.sha512
                ),
                _ => return,
            }
        }
    };
    r.differences_total += 1;
    r.differences.insert(0, Difference { offset: 0, in_member: None, what });
}

/// A write error of the ARC `name`, named.
fn named(name: &str) -> impl FnOnce(RebuildError) -> RebuildError + '_ {
    move |e| match e {
        RebuildError::Io(source) => RebuildError::Write { name: name.to_string(), source },
        other => other,
    }
}

/// The next chunk of the block of the piece just taken from `s`; `None` at its end.
fn block_chunk(s: &mut RecordStream) -> Result<Option<Vec<u8>>, RebuildError> {
    match s.next_msg() {
        Some(Msg::Chunk(c)) => Ok(Some(c)),
        Some(Msg::BlockEnd) => Ok(None),
        Some(Msg::Failed(e)) => Err(e),
        _ => Err(RebuildError::Internal("a block without its end")),
    }
}

impl Merge<'_> {
    /// Starts the rebuild of `info`'s ARC, its rebuild record read ahead: the gzip file's
    /// defaults, and the lengths and counts nothing rebuilt may exceed.
    fn begin_arc(&mut self, info: ArcInfo) -> Result<Current, RebuildError> {
        let file = self.opts.make_file;
        if self.summaries.is_none() {
            self.summaries = Some(stream::summaries_of(self.container, false)?);
        }
        // Those of the container's tail are the last ARC's: an earlier one's is looked for
        // in the whole container, once.
        let mut defaults = self.summary_for(&info);
        if defaults.is_none() && !self.summaries_whole {
            self.summaries = Some(stream::summaries_of(self.container, true)?);
            self.summaries_whole = true;
            defaults = self.summary_for(&info);
        }
        let start = ArcStart { name: &info.name, gzip: info.gzip };
        let out = self
            .sink
            .begin(&start)
            .map_err(|source| RebuildError::Sink { name: info.name.clone(), source })?;
        let report = ArcRebuild {
            name: info.name.clone(),
            container: self.container.display().to_string(),
            gzip: info.gzip,
            ..Default::default()
        };
        let asm = assemble::Assembler::new(report, out, file, defaults.as_ref())?;
        Ok(Current { info, asm, ahead: defaults })
    }

    /// The rebuild record of `info`'s ARC, read ahead.
    fn summary_for(&self, info: &ArcInfo) -> Option<RebuildSummary> {
        let all = self.summaries.as_ref()?;
        let t = all.iter().find(|s| s.warcinfo_id == info.warcinfo_id)?;
        RebuildSummary::parse(&t.text).ok()
    }

    /// Gives the current ARC the twins' records that come before `bound` (all with `None`).
    fn twins_before(
        &mut self,
        cur: &mut Current,
        bound: Option<(u64, u8, u64)>,
    ) -> Result<(), RebuildError> {
        loop {
            let mut best: Option<(usize, (u64, u8, u64))> = None;
            for (i, t) in self.twins.iter_mut().enumerate() {
                if let Some(key) = next_twin_piece(t, &cur.info.warcinfo_id, &self.finished)? {
                    let below = bound.is_none_or(|b| key < b);
                    if below && best.is_none_or(|(_, k)| key < k) {
                        best = Some((i, key));
                    }
                }
            }
            let Some((i, _)) = best else { return Ok(()) };
            let t = &mut self.twins[i];
            let Some(Msg::Piece(p)) = t.next_msg() else {
                return Err(RebuildError::Internal("a twin's piece went away"));
            };
            cur.asm.piece(&p, || block_chunk(t)).map_err(named(&cur.info.name))?;
        }
    }

    fn end_arc(
        &mut self,
        mut cur: Current,
        summary: Option<&SummaryText>,
    ) -> Result<(), RebuildError> {
        self.twins_before(&mut cur, None)?;
        let parsed = match summary {
            Some(s) => Some(RebuildSummary::parse(&s.text).map_err(|e| RebuildError::Record {
                container: s.container.clone(),
                offset: s.container_offset,
                what: format!("rebuild record: {e}"),
            })?),
            None => None,
        };
        if let Some(s) = summary {
            cur.asm.place =
                assemble::Place { container: s.container.clone(), offset: s.container_offset };
            // The one read ahead bounded the rebuild: another one is not what it is checked by.
            if parsed != cur.ahead {
                return Err(RebuildError::Record {
                    container: s.container.clone(),
                    offset: s.container_offset,
                    what: "a second, different rebuild record of this ARC".into(),
                });
            }
        }
        let (mut report, out) = cur.asm.finish(parsed.as_ref()).map_err(named(&cur.info.name))?;
        if let Some(objects) = &self.opts.package_objects {
            against_package(&mut report, objects);
        }
        self.sink
            .end(&report, out)
            .map_err(|source| RebuildError::Sink { name: report.name.clone(), source })?;
        self.finished.insert(cur.info.warcinfo_id);
        self.reports.push(report);
        Ok(())
    }
}

/// The merge key of a twin's next record of the ARC `id`, passing over what is not one (its
/// `warcinfo`, records of ARCs already rebuilt); `None` when it has none (now).
fn next_twin_piece(
    t: &mut RecordStream,
    id: &str,
    finished: &HashSet<String>,
) -> Result<Option<(u64, u8, u64)>, RebuildError> {
    loop {
        match t.peek() {
            None => return Ok(None),
            Some(Msg::Piece(p)) if p.warcinfo_id == id => return Ok(Some(p.key())),
            Some(Msg::Piece(p)) if finished.contains(&p.warcinfo_id) => {
                t.next_msg();
                t.skip_block()?;
            }
            // A record of an ARC still to come: it waits.
            Some(Msg::Piece(_)) => return Ok(None),
            Some(Msg::Failed(_)) => match t.next_msg() {
                Some(Msg::Failed(e)) => return Err(e),
                _ => return Err(RebuildError::Internal("a failure went away")),
            },
            Some(_) => {
                t.next_msg();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More unrecovered members than listed: the reports say how many, and `…` after the
    /// offsets listed.
    #[test]
    fn unrecovered_members_past_the_listed_are_counted_and_marked() {
        let offsets: Vec<u64> = (0..20).map(|i| i * 100).collect();
        let r = ArcRebuild {
            gzip: true,
            deflate: Some("zlib:6".into()),
            members_unrecovered: 25,
            unrecovered_offsets: offsets.clone(),
            ..ArcRebuild::default()
        };
        let why = r.not_identical_gzip().unwrap();
        assert!(why.contains("the 25 gzip members at offsets 0, 100, "), "{why}");
        assert!(why.contains("1900, … were"), "{why}");
        let report = crate::migrate::report::ArcRebuildability {
            rebuildable: true,
            gzip_file_rebuildable: Some(false),
            members_unrecovered: 25,
            unrecovered_offsets: offsets,
            ..Default::default()
        };
        let text = report.text();
        assert!(text.contains("25 gzip member(s) (at offset 0, 100, "), "{text}");
        assert!(text.contains("1900, …)"), "{text}");
    }
}
