//! The rebuild record that follows an ARC's records (`docs/arc-rebuild.md`): what the whole
//! file was (length and SHA-512 of the file and of its stream) and what no record carries.

use std::io;

use super::report::ArcRebuildability;
use super::verify::{ExpectationLog, Expected};
use super::{ArcFile, End, MigratedRecord, RecordSinks, WarcinfoWritten};
use crate::formats::arc_rebuild::{REBUILD_URI_PREFIX, RebuildSummary};
use crate::formats::warc::writer::RecordSpec;
use crate::ids::Ids;

/// The summary of one migrated ARC (`file`).
pub(super) fn rebuild_summary(file: &ArcFile, end: &mut End) -> RebuildSummary {
    let (name, size, sha512) = (file.name.clone(), file.size, file.sha512.clone());
    let crate::formats::arc::RebuildEnd { post, reasons, stream, defaults, unrecovered } =
        std::mem::take(&mut end.rebuild);
    let (gzip_header, deflate) = defaults;
    // A plain file is its own stream; a gzip file's digest is missing only when it failed
    // (a reason says so).
    let (stream_length, stream_sha512) = match (end.gzip, stream) {
        (_, Some(s)) => s,
        (false, None) => (size, sha512.clone()),
        (true, None) => (0, "-".into()),
    };
    RebuildSummary {
        file_name: name,
        file_length: size,
        file_sha512: sha512,
        stream_length,
        stream_sha512,
        gzip: end.gzip,
        gzip_header,
        deflate,
        members: if end.gzip { end.bytes.members } else { 0 },
        unrecovered,
        post,
        reasons,
    }
}

/// Writes the rebuild record into the content container (after the ARC's last record, told to
/// the sinks and the conservation check like any other); returns its block's length.
pub(super) fn write_rebuild_record(
    summary: &RebuildSummary,
    warcinfo: &WarcinfoWritten,
    ids: &Ids,
    sinks: &mut dyn RecordSinks,
    log: &mut ExpectationLog,
) -> io::Result<u64> {
    let block = summary.to_text().into_bytes();
    let spec = RecordSpec {
        warc_type: "metadata".into(),
        record_id: ids.warc_record_id(),
        date: warcinfo.date.clone(),
        target_uri: Some(format!(
            "{REBUILD_URI_PREFIX}{}",
            crate::formats::arc_to_warc::uri_component(&summary.file_name)
        )),
        warcinfo_id: Some(warcinfo.id.clone()),
        concurrent_to: Some(warcinfo.id.clone()),
        content_type: Some("text/plain; charset=utf-8".into()),
        ..RecordSpec::default()
    };
    let written = sinks.content().write_record(&spec, &block, 0)?;
    log.push(&Expected::new(&written, false))?;
    let payload_mime = spec.content_type.clone().unwrap_or_default();
    sinks.written(&MigratedRecord::made_here(spec, payload_mime, written))?;
    Ok(block.len() as u64)
}

/// What the report says of the rebuild data.
pub(super) fn rebuild_report(summary: &RebuildSummary, bytes_written: u64) -> ArcRebuildability {
    ArcRebuildability {
        stream_length: summary.stream_length,
        stream_sha512: summary.stream_sha512.clone(),
        rebuildable: summary.rebuildable(),
        reasons: summary.reasons.clone(),
        deflate: summary.deflate.clone(),
        // Said only when false: reports of ARCs that come back whole stay as they were.
        gzip_file_rebuildable: summary.gzip_file_rebuildable().filter(|whole| !whole),
        members_unrecovered: summary.unrecovered.count,
        unrecovered_offsets: summary.unrecovered.offsets.clone(),
        bytes_written,
        // Known once the ARC's records are written (`Rebuild::add`).
        requires_packages: Vec::new(),
    }
}
