//! ARC files as captures: each capture record, mapped as the migration maps it to a WARC record
//! (`formats::arc_to_warc`: the URL, the date and where it came from, the server's
//! address, the HTTP header bytes as stored, the payload's type), its payload a byte range of
//! the record's body read only when asked for.
//!
//! Used by `webaip pages`. `package` migrates ARC files as `webaip migrate` does (parallel
//! compression, the conservation proof), through its container sinks, rather than from this
//! source: README, design section. The ARC's file header record and unframed remainders are no captures: they
//! are reported as quirks, with their offsets, as is every anomaly the reader found.

use std::path::{Path, PathBuf};

use super::capture::{CaptureError, CaptureSource, NOT_A_CAPTURE, QuirkLog, SideFile};
use crate::capture::{Capture, CaptureKind, DateSource, Payload, Provenance, Quirk};
use crate::formats::arc::{ArcReader, RecordKind};
use crate::formats::arc_to_warc::{FallbackDates, MappingContext};
use crate::formats::dates::parse_rfc3339;
use crate::formats::http::MAX_HTTP_HEADER_LEN;

/// The captures of one ARC file, in order. Each capture's payload keeps its record's bytes
/// alive (a decompressed gzip member: up to 8 MiB in memory, else a temporary file) until the
/// capture is dropped: hold few at a time.
pub struct ArcCaptures {
    path: PathBuf,
    name: String,
    arc: ArcReader,
    ctx: MappingContext,
    first: bool,
    quirks: QuirkLog,
}

impl ArcCaptures {
    /// Opens `path` (named `name` in quirks and provenance). Records with no usable date of
    /// their own get the migration's fallbacks (file name, ARC header, neighbours), then
    /// `capture_date`.
    pub fn open(
        path: &Path,
        name: String,
        capture_date: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<ArcCaptures, CaptureError> {
        let arc = ArcReader::open(path)?;
        let fallback = crate::formats::arc_to_warc::fallback_dates(path, capture_date)?
            .unwrap_or(FallbackDates { capture_date, ..Default::default() });
        let ctx = MappingContext::new(name.clone(), String::new(), fallback);
        Ok(ArcCaptures {
            path: path.to_path_buf(),
            name,
            arc,
            ctx,
            first: true,
            quirks: QuirkLog::default(),
        })
    }

    fn quirk(&mut self, offset: u64, kind: &str, detail: String) {
        self.quirks.at_offset(&self.name, offset, kind, detail);
    }

    fn next_capture(&mut self) -> Result<Option<Capture>, CaptureError> {
        while let Some(rec) = self.arc.next_record()? {
            let at = rec.location.member.unwrap_or(rec.location.offset);
            for a in &rec.anomalies {
                self.quirk(at, "arc-anomaly", format!("{:?}: {}", a.kind, a.detail));
            }
            // The ARC header record's date stands in for records before the first dated one.
            if std::mem::take(&mut self.first) && rec.kind == RecordKind::Filedesc {
                self.ctx.fallback.arc_header = rec.header.as_ref().and_then(|h| h.date);
            }
            if rec.kind != RecordKind::Capture {
                let what = match rec.kind {
                    RecordKind::Filedesc => "the file header record (filedesc)",
                    _ => "bytes no record frames (a remainder)",
                };
                let detail = format!("{what}, {} bytes: no capture", rec.body_len());
                self.quirk(at, NOT_A_CAPTURE, detail);
                continue;
            }
            // The mapping reads the head of HTTP captures only (their HTTP header).
            let http = rec
                .header
                .as_ref()
                .is_some_and(|h| h.url.starts_with(b"http:") || h.url.starts_with(b"https:"));
            let body = self.arc.shared_body(&rec);
            let io = |source| CaptureError::Io { path: self.path.clone(), source };
            let head = if http { body.prefix(MAX_HTTP_HEADER_LEN).map_err(io)? } else { vec![] };
            let mapped =
                self.ctx.map(&rec, &head, String::new()).map_err(|e| CaptureError::NoDate {
                    path: self.path.clone(),
                    offset: e.location.member.unwrap_or(e.location.offset),
                    date: e.date_raw.unwrap_or_default(),
                })?;
            let spec = mapped.spec;
            let (Some(uri), "response" | "resource") =
                (spec.target_uri.clone(), spec.warc_type.as_str())
            else {
                let detail = format!("mapped to a {} record: no capture", spec.warc_type);
                self.quirk(at, NOT_A_CAPTURE, detail);
                continue;
            };
            let date = parse_rfc3339(&spec.date).map_err(|source| CaptureError::BadDate {
                path: self.path.clone(),
                offset: at,
                date: spec.date.clone(),
                source,
            })?;
            let offset = mapped.payload_offset;
            let (kind, http_header) = if offset > 0 {
                let end = (offset as usize).min(head.len());
                (CaptureKind::Response, Some(head[..end].to_vec()))
            } else {
                (CaptureKind::Resource, None)
            };
            let in_member = rec.location.member.is_some() && rec.location.offset > 0;
            return Ok(Some(Capture {
                uri,
                date,
                date_source: DateSource {
                    label: mapped.date_source.as_str().to_string(),
                    inferred: mapped.date_source.is_inferred(),
                },
                ip: spec.ip_address.clone(),
                kind,
                http_header,
                content_type: Some(mapped.payload_mime),
                payload: Payload::Shared(body.skip(offset)),
                truncated: spec.truncated.clone(),
                provenance: Provenance {
                    file: self.name.clone(),
                    offset: Some(at),
                    offset_in_member: in_member.then_some(rec.location.offset),
                },
                warc_fields: Vec::new(),
                metadata: None,
            }));
        }
        Ok(None)
    }
}

super::capture::one_file_source!(ArcCaptures, "arc");

#[cfg(test)]
mod capture_tests;
