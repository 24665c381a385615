//! WARC files as captures: each `response` or `resource` record with a target URI, as its
//! record states it (the URL, `WARC-Date` and where it came from, the server's address, the
//! HTTP header bytes as stored, the payload's type), its payload read from the record's own
//! bytes only when asked for.
//!
//! The records keep their bytes: a capture describes a record, it does not re-encode it.
//! `package` copies a WARC through the pipeline as stored records, each carrying its own bytes
//! (`package::copy`, read once, byte-exact), rather than re-writing it from these captures:
//! reading a capture's payload again would be a second read of the file (README, design
//! section). Used by `webaip pages` for package containers and source WARC files alike.
//!
//! Where a payload starts is the one rule of `formats::warc::payload`. A block of up to 1 MiB
//! is in memory once its head is read: its payload is kept. A larger one is read again from
//! its record when asked for, never copied: for a record sharing its gzip member with records
//! before it (a file compressed as one stream) that means decompressing the member from its
//! start again, a cost paid only for the payloads read.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use super::capture::{CaptureError, CaptureSource, QuirkLog, SideFile};
use crate::capture::{Capture, CaptureKind, DateSource, Payload, Provenance, Quirk};
use crate::formats::arc::header_line_mime;
use crate::formats::arc_to_warc::{FIELD_ARC_HEADER, FIELD_DATE_SOURCE};
use crate::formats::dates::parse_warc_date;
use crate::formats::http::{MAX_HTTP_HEADER_LEN, entity_mime};
use crate::formats::warc::WarcReader;
use crate::formats::warc::payload;
use crate::formats::warc::reader::WarcRecordHead;
use crate::formats::warc::stored::MemberSlot;
pub use crate::formats::warc::stored::RecordPayload;

/// The captures of one WARC file (plain or gzip), in order.
pub struct WarcCaptures {
    name: String,
    file: Arc<File>,
    reader: WarcReader<File>,
    quirks: QuirkLog,
    /// Shared by the payloads it yields: see [`MemberSlot`].
    cursor: MemberSlot,
}

/// What the record callback keeps of a capture record.
struct Seen {
    http_header: Option<Vec<u8>>,
    /// Bytes of the block before the payload.
    payload_offset: u64,
    /// The payload, when its whole block was read with the head.
    kept: Option<Vec<u8>>,
}

impl WarcCaptures {
    /// Opens `path` (named `name` in quirks and provenance); a link, FIFO or device is refused.
    pub fn open(path: &Path, name: String) -> Result<WarcCaptures, CaptureError> {
        let io = |source| CaptureError::Io { path: path.to_path_buf(), source };
        let file = crate::layout::open_regular(path).map_err(|e| io(io::Error::other(e)))?;
        WarcCaptures::from_file(file, path, name)
    }

    /// Reads `file`, already opened (a package's container, confined to the package), as
    /// `path` (named `name` in quirks and provenance).
    pub fn from_file(file: File, path: &Path, name: String) -> Result<WarcCaptures, CaptureError> {
        let io = |source| CaptureError::Io { path: path.to_path_buf(), source };
        let own = file.try_clone().map_err(io)?;
        let reader = WarcReader::new(own, name.as_str()).map_err(CaptureError::Warc)?;
        Ok(WarcCaptures {
            file: Arc::new(file),
            name,
            reader,
            quirks: QuirkLog::default(),
            cursor: MemberSlot::default(),
        })
    }

    fn quirk(&mut self, offset: u64, kind: &str, detail: String) {
        self.quirks.at_offset(&self.name, offset, kind, detail);
    }

    fn next_capture(&mut self) -> Result<Option<Capture>, CaptureError> {
        loop {
            let gzip = self.reader.is_gzip();
            let next = self.reader.next_record(see);
            let (head, _end, seen) = match next {
                Ok(Some(x)) => x,
                Ok(None) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let h = &head.header;
            let Some(seen) = seen else { continue };
            let raw_date = h.get("WARC-Date").unwrap_or("");
            let Some(date) = parse_warc_date(raw_date) else {
                // Quoted in part: a header value may be up to a MiB long.
                let shown: String = raw_date.chars().take(80).collect();
                let cut = if shown.len() < raw_date.len() { " (cut)" } else { "" };
                let within = match (gzip, head.offset_in_member) {
                    (true, n) if n > 0 => format!(" (at offset {n} of its gzip member)"),
                    _ => String::new(),
                };
                let detail =
                    format!("WARC-Date {shown:?}{cut} is no W3C date-time{within}: no capture");
                self.quirk(head.offset, "unreadable-warc-date", detail);
                continue;
            };
            let date_source = match h.get(FIELD_DATE_SOURCE) {
                Some(s) => DateSource { label: s.to_string(), inferred: true },
                None => DateSource { label: "WARC-Date".into(), inferred: false },
            };
            let declared = h.content_length().unwrap_or(0);
            let len = declared.saturating_sub(seen.payload_offset);
            let payload = match seen.kept {
                Some(bytes) => Payload::Bytes(bytes),
                None => Payload::InRecord(RecordPayload {
                    file: Arc::clone(&self.file),
                    name: self.name.clone(),
                    at: head.offset,
                    gzip,
                    in_member: if gzip { head.offset_in_member } else { 0 },
                    skip: head.header_len + seen.payload_offset,
                    len,
                    cursor: self.cursor.clone(),
                }),
            };
            let (kind, content_type) = match &seen.http_header {
                Some(head_bytes) => (
                    CaptureKind::Response,
                    entity_mime(head_bytes).or_else(|| {
                        h.get(FIELD_ARC_HEADER).and_then(|l| header_line_mime(l.as_bytes()))
                    }),
                ),
                None => (CaptureKind::Resource, h.get("Content-Type").map(str::to_string)),
            };
            let in_member = gzip && head.offset_in_member > 0;
            return Ok(Some(Capture {
                uri: h.target_uri().unwrap_or_default().to_string(),
                date,
                date_source,
                ip: h.get("WARC-IP-Address").map(str::to_string),
                kind,
                http_header: seen.http_header,
                content_type,
                payload,
                truncated: h.get("WARC-Truncated").map(str::to_string),
                provenance: Provenance {
                    file: self.name.clone(),
                    offset: Some(head.offset),
                    offset_in_member: in_member.then_some(head.offset_in_member),
                },
                warc_fields: Vec::new(),
                metadata: None,
            }));
        }
    }
}

/// Reads what a capture needs from a record's block: `None` when the record is no capture.
fn see(head: &WarcRecordHead, block: &mut dyn Read) -> io::Result<Option<Seen>> {
    let h = &head.header;
    let kind = h.warc_type();
    if !matches!(kind, Some("response" | "resource")) || h.target_uri().is_none_or(str::is_empty) {
        return Ok(None);
    }
    // The one rule for where a payload starts (formats::warc::payload), as package uses it.
    // The head of every block is read (HTTP headers are at most this long): a block no longer
    // is then in memory whole, and its payload is kept rather than read again.
    let mut prefix = Vec::new();
    block.take(MAX_HTTP_HEADER_LEN as u64).read_to_end(&mut prefix)?;
    let offset = match payload::holds_http_message(kind, h.target_uri()) {
        true => payload::payload_start_of(h, &prefix).offset() as usize,
        false => 0,
    };
    let whole = h.content_length() == Some(prefix.len() as u64);
    // The header leaves the buffer; what stays is the payload, kept without another copy.
    let header: Vec<u8> = prefix.drain(..offset).collect();
    let http_header = (offset > 0).then_some(header);
    let kept = whole.then_some(prefix);
    Ok(Some(Seen { http_header, payload_offset: offset as u64, kept }))
}

super::capture::one_file_source!(WarcCaptures, "warc");

#[cfg(test)]
mod capture_tests;
