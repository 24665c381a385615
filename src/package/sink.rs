//! The container sink: one WARC container being written with its section of the METS. The
//! WARC writer in it is the only code that computes offsets; each record written goes to the
//! METS section with the ranges the writer returned. Used by the capture pipeline and the
//! PANDAS/mirror packager (the Heritrix path pairs its writers with their sections itself:
//! README, design section).

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use chrono::{DateTime, Utc};

use super::{PackageError, io_err};
use crate::formats::warc::WarcWriter;
use crate::formats::warc::writer::{RecordSpec, WrittenRecord, warcinfo};
use crate::mets::ContainerWriter;

/// A container being written.
pub(crate) struct ContainerSink {
    pub writer: WarcWriter<BufWriter<File>>,
    pub mets: ContainerWriter,
    /// Its name in the package.
    pub rel: String,
    /// The record id of its warcinfo record.
    pub warcinfo: String,
}

/// A closed container: its METS section, name, size, SHA-512 and number of records.
pub(crate) struct ClosedContainer {
    pub mets: ContainerWriter,
    pub rel: String,
    pub size: u64,
    pub sha512: String,
    pub records: u64,
}

impl ContainerSink {
    /// Creates `rel` below `root` (its folder too; never through a link, never over a file)
    /// and writes its warcinfo record: `warcinfo` as its id, dated `now`, saying
    /// `description`.
    pub fn open(
        root: &Path,
        rel: String,
        mets: ContainerWriter,
        level: u32,
        (warcinfo_id, now, description): (String, DateTime<Utc>, &str),
    ) -> Result<ContainerSink, PackageError> {
        if let Some((dir, _)) = rel.rsplit_once('/') {
            crate::layout::create_dirs_in(root, dir)?;
        }
        let f = crate::layout::create_in(root, &rel)?;
        let writer = WarcWriter::new(BufWriter::with_capacity(1 << 20, f), level);
        let mut sink = ContainerSink { writer, mets, rel, warcinfo: warcinfo_id };
        let name = sink.rel.rsplit('/').next().unwrap_or_default().to_string();
        let (spec, body) = warcinfo(&sink.warcinfo, now, &name, description, &[]);
        sink.write(root, &spec, &body)?;
        Ok(sink)
    }

    /// Writes a record whose block is in memory (the whole block is the payload).
    pub fn write(
        &mut self,
        root: &Path,
        spec: &RecordSpec,
        block: &[u8],
    ) -> Result<WrittenRecord, PackageError> {
        self.writer.write_record(spec, block, 0).map_err(io_err(&root.join(&self.rel)))
    }

    /// Closes the container: flushed, synced, hashed.
    pub fn close(self, root: &Path) -> Result<ClosedContainer, PackageError> {
        let records = self.writer.records();
        let (size, sha512) = super::finish_written_container(self.writer, root, &self.rel)?;
        Ok(ClosedContainer { mets: self.mets, rel: self.rel, size, sha512, records })
    }
}
