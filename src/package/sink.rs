//! The container sink: one WARC container being written with its section of the METS. The
//! WARC writer in it is the only code that computes offsets; each record written goes to the
//! METS section with the ranges the writer returned. Used by the capture pipeline (every
//! capture source), every copy of a WARC (its gzip members appended byte-exact) and every ARC
//! migration in a package (`migrate::migrate_into` writes through it: `migrate::RecordSinks`).

use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::Path;

use chrono::{DateTime, Utc};

use super::{PackageError, io_err};
use crate::formats::warc::WarcWriter;
use crate::formats::warc::writer::{RecordSpec, WrittenRecord, warcinfo};
use crate::mets::ContainerWriter;
use crate::model::ByteRange;

/// A container being written.
pub(crate) struct ContainerSink {
    pub writer: WarcWriter<BufWriter<File>>,
    pub mets: ContainerWriter,
    /// Its name in the package.
    pub rel: String,
    /// The record id of its warcinfo record (empty for a copy: its warcinfo records are the
    /// input's).
    pub warcinfo: String,
}

/// The warcinfo record a container webaip writes opens with: its record id, date and what
/// it says of the container.
pub(crate) struct Warcinfo<'a> {
    pub(crate) id: String,
    pub(crate) now: DateTime<Utc>,
    pub(crate) description: &'a str,
}

/// A closed container: its METS section, name, size, SHA-512 and number of records.
pub(crate) struct ClosedContainer {
    pub mets: ContainerWriter,
    pub rel: String,
    pub size: u64,
    pub sha512: String,
    /// Its SHA-256, hashed as it was written.
    pub sha256: Option<String>,
    pub records: u64,
}

/// A container closed by [`ContainerSink::close_unhashed`].
pub(crate) struct UnhashedClose {
    pub mets: ContainerWriter,
    pub size: u64,
    pub sha256: Option<String>,
}

impl ContainerSink {
    /// Creates `rel` below `root` (its folder too; never through a link, never over a file)
    /// and writes its warcinfo record: `warcinfo` as its id, dated `now`, saying
    /// `description`.
    pub(crate) fn open(
        root: &Path,
        rel: String,
        mets: ContainerWriter,
        level: u32,
        warcinfo: Warcinfo<'_>,
    ) -> Result<ContainerSink, PackageError> {
        let mut sink = ContainerSink::create(root, rel, mets, level)?;
        sink.start(root, warcinfo)?;
        Ok(sink)
    }

    /// Writes the warcinfo record of a container made by [`ContainerSink::create`] (see
    /// [`ContainerSink::open`]), once an observer of its records may be in place.
    pub(crate) fn start(&mut self, root: &Path, info: Warcinfo<'_>) -> Result<(), PackageError> {
        self.warcinfo = info.id;
        let name = self.rel.rsplit('/').next().unwrap_or_default().to_string();
        let (spec, body) = warcinfo(&self.warcinfo, info.now, &name, info.description, &[]);
        self.write(root, &spec, &body)?;
        Ok(())
    }

    /// Creates `rel` below `root` as [`ContainerSink::open`] does, but writes nothing: for a
    /// container whose records, warcinfo included, are appended as they come (a copied WARC).
    pub(crate) fn create(
        root: &Path,
        rel: String,
        mets: ContainerWriter,
        level: u32,
    ) -> Result<ContainerSink, PackageError> {
        if let Some((dir, _)) = rel.rsplit_once('/') {
            crate::layout::create_dirs_in(root, dir)?;
        }
        let f = crate::layout::create_in(root, &rel)?;
        let mut writer = WarcWriter::new(BufWriter::with_capacity(1 << 20, f), level);
        // Its SHA-256, a second fixity in the METS (what a WACZ states), taken as the bytes
        // go out: no second read.
        writer.hash_sha256();
        Ok(ContainerSink { writer, mets, rel, warcinfo: String::new() })
    }

    /// Appends a record's bytes as they are (a gzip member, or an uncompressed record), and
    /// gives where they went.
    pub(crate) fn append_member(
        &mut self,
        root: &Path,
        member: impl Read,
        len: u64,
    ) -> Result<ByteRange, PackageError> {
        let begin =
            self.writer.append_member(member, len).map_err(io_err(&root.join(&self.rel)))?;
        Ok(ByteRange { begin, len })
    }

    /// Appends bytes that are no record of their own (what a copied file holds between its
    /// records), and gives where they went.
    pub(crate) fn append_bytes(
        &mut self,
        root: &Path,
        bytes: &[u8],
    ) -> Result<ByteRange, PackageError> {
        let begin = self.writer.position();
        self.writer.append_bytes(bytes).map_err(io_err(&root.join(&self.rel)))?;
        Ok(ByteRange { begin, len: bytes.len() as u64 })
    }

    /// Writes a record whose block is in memory (the whole block is the payload).
    pub(crate) fn write(
        &mut self,
        root: &Path,
        spec: &RecordSpec,
        block: &[u8],
    ) -> Result<WrittenRecord, PackageError> {
        self.writer.write_record(spec, block, 0).map_err(io_err(&root.join(&self.rel)))
    }

    /// The SHA-256 of what was written so far (the whole container once closed), hex.
    pub(crate) fn sha256(&self) -> Option<String> {
        self.writer.sha256().map(|d| crate::formats::digest::hex(&d))
    }

    /// Closes the container flushed and synced, not hashed again: for a copy whose SHA-512 is
    /// known without reading it again (it is the input byte for byte). Its METS section,
    /// size and SHA-256 (hashed as it was written).
    pub(crate) fn close_unhashed(self, root: &Path) -> Result<UnhashedClose, PackageError> {
        let size = self.writer.position();
        let sha256 = self.sha256();
        let err = io_err(root);
        let mut buf = self.writer.finish().map_err(&err)?;
        std::io::Write::flush(&mut buf).map_err(&err)?;
        let file = buf.into_inner().map_err(|e| err(e.into_error()))?;
        file.sync_all().map_err(&err)?;
        Ok(UnhashedClose { mets: self.mets, size, sha256 })
    }

    /// Closes the container: flushed, synced, hashed.
    pub(crate) fn close(self, root: &Path) -> Result<ClosedContainer, PackageError> {
        let records = self.writer.records();
        let sha256 = self.sha256();
        let (size, sha512) = super::finish_written_container(self.writer, root, &self.rel)?;
        Ok(ClosedContainer { mets: self.mets, rel: self.rel, size, sha512, sha256, records })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appended bytes land at the ranges the sink gives, after what was written before, and
    /// the file holds exactly them.
    #[test]
    fn appended_members_and_bytes_land_where_the_sink_says() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let profile = crate::profile::Profile::default_profile();
        let header = crate::model::PackageHeader {
            objid: "urn:uuid:x".into(),
            package_type: crate::model::PackageType::Ssip,
            label: String::new(),
            created: Utc::now(),
            organisation: Default::default(),
            description: Default::default(),
            rights: crate::model::Rights {
                access: crate::model::Access::Restricted,
                statement: String::new(),
            },
            agents: vec![],
        };
        let mut mets = crate::mets::MetsBuilder::new(
            header,
            profile,
            crate::model::SerializationMode::Minimal,
        )
        .unwrap();
        let cw = mets.begin_container(crate::model::GroupUse::DigitalManifestation).unwrap();
        let mut sink = ContainerSink::create(root, "content/c.warc".into(), cw, 6).unwrap();
        assert!(sink.warcinfo.is_empty(), "a created sink writes no warcinfo");
        let gap = sink.append_bytes(root, b"\r\n").unwrap();
        assert_eq!(gap, ByteRange { begin: 0, len: 2 });
        let member = sink.append_member(root, &b"WARC/1.1 record, byte-exact"[..], 27).unwrap();
        assert_eq!(member, ByteRange { begin: 2, len: 27 });
        let short = sink.append_member(root, &b"too short"[..], 20);
        assert!(short.is_err(), "a member shorter than said is an error");
        let closed = sink.close_unhashed(root).unwrap();
        let size = closed.size;
        let on_disk = std::fs::read(root.join("content/c.warc")).unwrap();
        use sha2::Digest;
        let sha256 = crate::formats::digest::hex(&sha2::Sha256::digest(&on_disk));
        assert_eq!(closed.sha256, Some(sha256), "the SHA-256 is that of every byte written");
        // The short member's bytes were written before its end was found short.
        assert_eq!(&on_disk[..29], b"\r\nWARC/1.1 record, byte-exact");
        assert_eq!(size, on_disk.len() as u64);
    }
}
