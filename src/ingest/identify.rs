//! PRONOM identification of a submission's described bytestreams, read from its containers
//! by the ranges its METS states (after the audit has verified them).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use rayon::prelude::*;

use super::IngestError;
use crate::formats::segment::FileRange;
use crate::mets::listing::{ListedFile, Nested, read_listing};
use crate::mets::reader::MetsReader;
use crate::model::Identification;
use crate::stages::identify::Identifier;

/// What identification found, by the md section or amdSec that describes each bytestream.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub by_section: HashMap<String, Identification>,
    /// Described bytestreams that could not be identified, and why.
    pub not_identified: Vec<String>,
}

impl Found {
    /// The sections whose `premis:format` the AIP's METS edits.
    pub(super) fn sections(&self) -> HashSet<String> {
        self.by_section.keys().cloned().collect()
    }
}

/// A described bytestream: where its payload is.
struct Job<'a> {
    container: &'a str,
    record: &'a ListedFile,
    payload: &'a ListedFile,
}

/// Identifies every described bytestream (a payload `<file>` with an ADMID) of the package.
pub(super) fn described(
    ssip: &Path,
    mets: &Path,
    identifier: Identifier,
) -> Result<Found, IngestError> {
    let file = File::open(mets).map_err(super::io_err(mets))?;
    let reader = MetsReader::strict(BufReader::with_capacity(256 * 1024, file));
    let listing = read_listing(reader, Nested::Keep)
        .map_err(|source| IngestError::Mets { path: mets.to_path_buf(), source })?;
    let mut found = Found::default();
    let jobs = jobs(&listing.files, &mut found);
    let results: Vec<Result<(&Job, Identification), IngestError>> = jobs
        .par_iter()
        .map(|j| {
            let declared = j.payload.mime.as_deref().unwrap_or_default();
            let path = ssip.join(j.container);
            let begin = j.record.begin.unwrap_or(0);
            let read = payload(ssip, j).and_then(|r| identifier.identify_reader(declared, r));
            read.map(|id| (j, id)).map_err(|source| IngestError::Payload {
                path,
                offset: begin,
                source,
            })
        })
        .collect();
    for r in results {
        let (j, id) = r?;
        for section in &j.payload.admid {
            found.by_section.insert(section.clone(), id.clone());
        }
    }
    Ok(found)
}

/// The described bytestreams of the containers in `files` that are in the package; those of a
/// container kept elsewhere are noted in `found` as not identified.
fn jobs<'a>(files: &'a [ListedFile], found: &mut Found) -> Vec<Job<'a>> {
    let mut jobs = Vec::new();
    for c in files {
        let Some(href) = c.href.as_deref() else { continue };
        if crate::layout::uri_scheme(href).is_some() {
            // Kept elsewhere: its bytestreams are not here to read (the report lists the file).
            let described = c.children.iter().flat_map(|r| &r.children);
            let n = described.filter(|p| !p.admid.is_empty()).count();
            if n > 0 {
                found.not_identified.push(format!(
                    "{n} described bytestream(s) of {href}: kept elsewhere, not identified"
                ));
            }
            continue;
        }
        for r in &c.children {
            for p in r.children.iter().filter(|p| !p.admid.is_empty()) {
                jobs.push(Job { container: href, record: r, payload: p });
            }
        }
    }
    jobs
}

/// The payload of a described bytestream: its record's range of the container, inflated when
/// it is a gzip member, from the payload's offset inside the record, its length.
fn payload<'a>(ssip: &Path, j: &Job<'a>) -> io::Result<Box<dyn Read + Send + 'a>> {
    let range = |f: &ListedFile| -> io::Result<(u64, u64)> {
        match (f.begin, f.end) {
            (Some(b), Some(e)) if e >= b => Ok((b, e - b + 1)),
            _ => {
                Err(io::Error::new(io::ErrorKind::InvalidData, format!("{}: no byte range", f.id)))
            }
        }
    };
    let (rb, rlen) = range(j.record)?;
    let (pb, plen) = range(j.payload)?;
    let file = crate::layout::open_in(ssip, j.container).map_err(io::Error::other)?;
    let member = FileRange::new(file, rb, rlen);
    let mut record: Box<dyn Read + Send> = match j.record.mime.as_deref() {
        Some("application/gzip") => Box::new(flate2::read::GzDecoder::new(member)),
        _ => Box::new(member),
    };
    let skipped = io::copy(&mut (&mut record).take(pb), &mut io::sink())?;
    if skipped < pb {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the record ends before its payload's stated offset",
        ));
    }
    Ok(Box::new(record.take(plen)))
}
