//! `ingest --mode`: the AIP's record listing made anew, in the serialization asked for (P4.7).
//!
//! `full` lists every record of every WARC container: each container is read once, record by
//! record (`package::copy::describe_records`, the rules a copied WARC is described by), and a
//! record the submission already lists keeps its `<file>` element byte for byte (its IDs,
//! ADMIDs and the divs that point at it stay valid); the others get `<file>`s of their own,
//! with IDs numbered by their place in the container as webaip's writer numbers them (its
//! opening warcinfo record, part of the container, is not listed).
//! `minimal` keeps only the records that are described (an ADMID) or that a structMap points
//! at. The listing goes to a temporary file, never into memory whole.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::aip_mets::{ContainerSite, Edit, RecordSite, Sites};
use super::{IngestError, io_err};
use crate::mets::reader::NS_METS;
use crate::mets::xml::XmlOut;
use crate::model::SerializationMode;

/// What relisting did, for the report and the ingestion event.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Relisted {
    /// Records listed in the AIP's fileSec.
    pub listed: u64,
    /// Records the submission listed that the AIP lists too.
    pub kept: u64,
}

/// The edits that replace each container's record listing.
pub(super) fn relist(
    ssip: &Path,
    mets: &Path,
    sites: &Sites,
    mode: SerializationMode,
) -> Result<(Vec<Edit>, Relisted), IngestError> {
    let raw = File::open(mets).map_err(io_err(mets))?;
    // A document that binds METS to another prefix (or as its default namespace) gets the
    // binding on each record `<file>` written anew.
    let bind = sites.root.as_ref().is_some_and(|r| !super::aip_mets::binds(r, "mets", NS_METS));
    let mut edits = Vec::new();
    let mut done = Relisted::default();
    for c in &sites.containers {
        let Some(href) = c.href.as_deref().filter(|h| crate::layout::is_warc_name(h)) else {
            continue;
        };
        if c.end_tag == 0 {
            continue;
        }
        let spill = tempfile::NamedTempFile::new().map_err(temporary_err(&std::env::temp_dir()))?;
        let mut out = Listing { out: BufWriter::new(spill.as_file()), path: spill.path() };
        let indent = " ".repeat(c.indent + 2);
        let source = MetsSource { raw: &raw, path: mets };
        let counts = match mode {
            SerializationMode::Full => {
                let style = Style { indent: &indent, bind };
                full(ssip, href, c, source, style, &mut out)?
            }
            SerializationMode::Minimal => minimal(c, &sites.pointed, source, &indent, &mut out)?,
        };
        out.write(format_args!("\n{}", " ".repeat(c.indent)))?;
        out.out.flush().map_err(temporary_err(spill.path()))?;
        drop(out);
        done.listed += counts.listed;
        done.kept += counts.kept;
        let start = c.records.first().map_or(c.end_tag, |r| r.start);
        // The region takes in the line end and indentation before it: each record written
        // brings its own.
        let start = start - indent_before(&raw, start);
        let mut edit = Edit::new(start, c.end_tag, Vec::new());
        edit.spilled = Some(spill.into_temp_path());
        edits.push(edit);
    }
    Ok((edits, done))
}

/// A container's listing being written to its temporary file: a write that fails is the
/// temporary folder's failure (a full TMPDIR), never the submission's.
struct Listing<'a> {
    out: BufWriter<&'a File>,
    path: &'a Path,
}

impl Listing<'_> {
    fn write(&mut self, text: std::fmt::Arguments<'_>) -> Result<(), IngestError> {
        self.out.write_fmt(text).map_err(temporary_err(self.path))
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), IngestError> {
        self.out.write_all(bytes).map_err(temporary_err(self.path))
    }
}

fn temporary_err(path: &Path) -> impl Fn(io::Error) -> IngestError + '_ {
    move |source| IngestError::Temporary { path: path.to_path_buf(), source }
}

/// How many bytes before `at` are the indentation of its line and that line's start (a line
/// end), when nothing else is there.
fn indent_before(raw: &File, at: u64) -> u64 {
    let from = at.saturating_sub(256);
    let mut b = vec![0u8; (at - from) as usize];
    let n = raw.read_at(&mut b, from).unwrap_or(0);
    let spaces = b[..n].iter().rev().take_while(|c| **c == b' ').count();
    let newline = n > spaces && b[n - spaces - 1] == b'\n';
    (spaces + usize::from(newline)) as u64
}

/// The submission's METS, open for reading the `<file>` elements it keeps.
#[derive(Clone, Copy)]
struct MetsSource<'a> {
    raw: &'a File,
    path: &'a Path,
}

/// How record `<file>` elements written anew look: their line's indentation, and whether
/// each binds the METS prefix itself (the document binds it to another prefix).
#[derive(Clone, Copy)]
struct Style<'a> {
    indent: &'a str,
    bind: bool,
}

/// A record `<file>` of the submission, copied as it is, on its own line.
fn copy_site(
    mets: MetsSource<'_>,
    r: &RecordSite,
    indent: &str,
    out: &mut Listing<'_>,
) -> Result<(), IngestError> {
    let mut b = vec![0u8; (r.end - r.start) as usize];
    mets.raw.read_exact_at(&mut b, r.start).map_err(io_err(mets.path))?;
    out.write(format_args!("\n{indent}"))?;
    out.write_all(&b)
}

/// The `minimal` listing of a container: its records that are described or pointed at.
fn minimal(
    c: &ContainerSite,
    pointed: &HashSet<String>,
    mets: MetsSource<'_>,
    indent: &str,
    out: &mut Listing<'_>,
) -> Result<Relisted, IngestError> {
    let mut kept = 0;
    for r in &c.records {
        if r.described || r.ids.iter().any(|i| pointed.contains(i)) {
            copy_site(mets, r, indent, out)?;
            kept += 1;
        }
    }
    Ok(Relisted { listed: kept, kept })
}

/// The `full` listing of one container, record by record as the container is read.
struct FullListing<'a> {
    mets: MetsSource<'a>,
    style: Style<'a>,
    /// The submission's record `<file>`s by BEGIN.
    by_begin: HashMap<u64, &'a RecordSite>,
    /// The IDs the submission's record `<file>`s have: a new one takes none of them.
    taken: HashSet<&'a str>,
    /// The container's ID without `FILE-`: new record IDs start with it.
    stem: String,
    /// The place of the last record listed in the container.
    seq: u64,
    counts: Relisted,
    /// The BEGINs of the submission's records written.
    emitted: HashSet<u64>,
    /// True until the container's first record is read.
    first: bool,
}

impl FullListing<'_> {
    /// Lists the record `r` (of type `warc_type`): the submission's `<file>` for it, else one
    /// written anew.
    fn record(
        &mut self,
        warc_type: &str,
        r: &crate::model::RecordFile,
        out: &mut Listing<'_>,
    ) -> Result<(), IngestError> {
        // A container's own warcinfo record opens it and is no record of the harvest: webaip's
        // writer neither numbers nor lists it, and neither does this listing.
        let own_warcinfo = self.first && warc_type == "warcinfo";
        self.first = false;
        if own_warcinfo && !self.by_begin.contains_key(&r.member.begin) {
            return Ok(());
        }
        self.seq += 1;
        self.counts.listed += 1;
        if let Some(site) = self.by_begin.get(&r.member.begin) {
            self.counts.kept += 1;
            self.emitted.insert(r.member.begin);
            return copy_site(self.mets, site, self.style.indent, out);
        }
        let text = self.new_record_file(r)?;
        out.write(format_args!("\n{}{text}", self.style.indent))
    }

    /// A `<file>` for the record `r`, with an ID numbered by its place that no `<file>` of the
    /// submission has.
    fn new_record_file(&self, r: &crate::model::RecordFile) -> Result<String, IngestError> {
        let mut rid = format!("{}-R{:06}", self.stem, self.seq);
        while self.taken.contains(format!("FILE-{rid}").as_str()) {
            rid.push_str("-L");
        }
        let mut x = XmlOut::new(Vec::new(), 0);
        // Written into memory: it cannot fail.
        crate::mets::writer::write_record_file(&mut x, &rid, r, (None, None))
            .map_err(io_err(self.mets.path))?;
        let indent = self.style.indent;
        let text =
            String::from_utf8_lossy(&x.into_inner()).trim().replace('\n', &format!("\n{indent}"));
        Ok(match self.style.bind {
            true => {
                text.replacen("<mets:file ", &format!("<mets:file xmlns:mets=\"{NS_METS}\" "), 1)
            }
            false => text,
        })
    }
}

/// The `full` listing of the container `c` at `href`: every record of it.
fn full(
    ssip: &Path,
    href: &str,
    c: &ContainerSite,
    mets: MetsSource<'_>,
    style: Style<'_>,
    out: &mut Listing<'_>,
) -> Result<Relisted, IngestError> {
    let path = ssip.join(
        crate::layout::confined_name(href)
            .map_err(|e| IngestError::Io { path: ssip.join(href), source: io::Error::other(e) })?,
    );
    let mut listing = FullListing {
        mets,
        style,
        by_begin: c.records.iter().filter_map(|r| Some((r.begin?, r))).collect(),
        taken: c.records.iter().flat_map(|r| r.ids.iter().map(|s| s.as_str())).collect(),
        stem: c.id.strip_prefix("FILE-").unwrap_or(&c.id).to_string(),
        seq: 0,
        counts: Relisted::default(),
        emitted: HashSet::new(),
        first: true,
    };
    let mut failed: Option<IngestError> = None;
    let mut each = |warc_type: &str, r: crate::model::RecordFile| {
        if failed.is_none() {
            failed = listing.record(warc_type, &r, out).err();
        }
    };
    crate::package::copy::describe_records(&path, &mut each).map_err(|e| IngestError::Payload {
        path: path.clone(),
        offset: e.offset,
        source: io::Error::other(e),
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    // A listed record the reading did not meet (the audit verified every range, so none is
    // expected) is kept all the same: nothing the submission says is dropped.
    let mut counts = listing.counts;
    for r in c.records.iter().filter(|r| r.begin.is_none_or(|b| !listing.emitted.contains(&b))) {
        copy_site(mets, r, style.indent, out)?;
        counts.listed += 1;
        counts.kept += 1;
    }
    Ok(counts)
}
