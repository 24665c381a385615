//! Captures: what every source yields, in order, and what stages, sinks and listings consume
//! (ARCHITECTURE.md: the ground floor).
//!
//! A [`Capture`] is one harvested thing with the provenance the METS needs: the URL, the date
//! and where that date came from, the server's address, the kind of record it becomes, the
//! headers exactly as harvested, the payload (bytes in memory or a byte segment of a file,
//! read only when written), and the file and offset it came from. A source also reports the
//! oddities of its input ([`Quirk`], with file and line or offset). The machinery of sources
//! (the `CaptureSource` trait, quirk logs, errors) is in `crate::sources::capture`.

use std::io::{self, Read};
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// The WARC record a capture becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaptureKind {
    /// An HTTP response: [`Capture::http_header`] then the payload (`application/http;
    /// msgtype=response`).
    Response,
    /// A payload with no protocol header, typed by [`Capture::content_type`].
    Resource,
}

/// Where a capture's date came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DateSource {
    /// What the date was read from, in words a report can print (`file name epoch`, `server
    /// Date header`, `folder date 2003-1-11 at 12:00 UTC`).
    pub label: String,
    /// True when it is not the time of this capture's own fetch (a folder's date, a server's
    /// clock): written as `X-Webaip-Date-Source` and said in descriptions.
    pub inferred: bool,
}

/// The payload of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// Bytes already in memory (small payloads).
    Bytes(Vec<u8>),
    /// A whole file of `len` bytes: read when the record is written, never held. Opening it
    /// fails if it is no longer `len` bytes long (bytes appended since it was measured would
    /// otherwise be in no record).
    File {
        /// The file.
        path: PathBuf,
        /// Its length when the source measured it.
        len: u64,
    },
    /// A range of an ARC record's body as the ARC reader framed it (the input file, or the
    /// record's decompressed gzip member, in memory or spilled): read when asked for.
    Shared(crate::formats::arc::SharedRange),
    /// `len` bytes of `path` from `offset`: read when the record is written, never held.
    Segment {
        /// The file.
        path: PathBuf,
        /// Where the payload starts.
        offset: u64,
        /// Its length.
        len: u64,
    },
    /// A payload inside a WARC record of a file opened once by its source: read again from
    /// the record (decompressing its gzip member) when asked for, never held.
    InRecord(crate::formats::warc::stored::RecordPayload),
}

impl Payload {
    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Payload::Bytes(b) => b.len() as u64,
            Payload::File { len, .. } | Payload::Segment { len, .. } => *len,
            Payload::InRecord(r) => r.len(),
            Payload::Shared(r) => r.len(),
        }
    }

    /// True when it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A reader over the payload. A file or segment is opened through
    /// `crate::layout::open_regular` (no links, FIFOs or devices); a file must still be as
    /// long as it was when the source measured it, a segment's file at least as long.
    pub fn open(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        match self {
            Payload::Bytes(b) => Ok(Box::new(&b[..])),
            Payload::Shared(r) => Ok(Box::new(r.reader())),
            Payload::InRecord(r) => r.reader(),
            Payload::File { path, len } => {
                let f = crate::layout::open_regular(path).map_err(io::Error::other)?;
                let size = f.metadata()?.len();
                if size != *len {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{}: {len} bytes when the harvest was read, {size} now: changed while being packaged",
                            path.display()
                        ),
                    ));
                }
                Ok(Box::new(f.take(*len)))
            }
            Payload::Segment { path, offset, len } => {
                use std::io::{Seek, SeekFrom};
                let mut f = crate::layout::open_regular(path).map_err(io::Error::other)?;
                let size = f.metadata()?.len();
                if offset.checked_add(*len).is_none_or(|end| end > size) {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "{}: {len} bytes at offset {offset} asked, the file has {size}",
                            path.display()
                        ),
                    ));
                }
                f.seek(SeekFrom::Start(*offset))?;
                Ok(Box::new(f.take(*len)))
            }
        }
    }
}

/// Where a capture came from in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// The file, relative to the source root (`2003-7-16/0042/b4ef...`), as the package's
    /// metadata records name it.
    pub file: String,
    /// The byte offset of the capture in that file, when the file holds more than one thing
    /// (for a gzip file, of the member holding it).
    pub offset: Option<u64>,
    /// For a capture inside a gzip member shared with others: its offset in the decompressed
    /// member.
    pub offset_in_member: Option<u64>,
}

/// One harvested thing, as a source yields it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The URL as harvested (`WARC-Target-URI`).
    pub uri: String,
    /// When it was captured (`WARC-Date`).
    pub date: DateTime<Utc>,
    /// Where the date came from.
    pub date_source: DateSource,
    /// The server's IP address (`WARC-IP-Address`).
    pub ip: Option<String>,
    /// The record it becomes.
    pub kind: CaptureKind,
    /// For a response: the status line and header fields exactly as stored, with the empty
    /// line that ends them (the record block starts with these bytes).
    pub http_header: Option<Vec<u8>>,
    /// For a resource: its MIME type. For a response: the entity's `Content-Type` as the
    /// header states it (what the payload `<file>` is typed as), if it states one.
    pub content_type: Option<String>,
    /// The payload.
    pub payload: Payload,
    /// `WARC-Truncated` (`length`, ...) when the stored payload is shorter than what was
    /// served.
    pub truncated: Option<String>,
    /// Where it came from. For a mirror file, `file` is its path in the mirror, against which
    /// its relative links are resolved.
    pub provenance: Provenance,
    /// WARC header fields the source adds to the record (`X-Webaip-Mirror-Path`).
    pub warc_fields: Vec<(String, String)>,
    /// A `metadata` record written right after this one, `WARC-Concurrent-To` it
    /// (`application/warc-fields`): what the source says about the capture beyond the record
    /// (harvester fields, source path), verbatim.
    pub metadata: Option<Vec<u8>>,
}

impl Capture {
    /// The payload's type as the METS states it: the entity's `Content-Type`, else unknown.
    pub(crate) fn payload_mime(&self) -> String {
        self.content_type
            .as_deref()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "application/octet-stream".into())
    }
}

/// An oddity of the input a source tolerated, reported with where it is. (Fields in
/// alphabetical order: the quirks log lists them so.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quirk {
    /// What was found and what was done.
    pub detail: String,
    /// The file, relative to the source root.
    pub file: String,
    /// A short stable name (`norwegian-date`, `merged-header-line`, `meta-without-data`).
    pub kind: String,
    /// The line (1-based), for line-oriented files.
    pub line: Option<u64>,
    /// The byte offset, where a line means nothing.
    pub offset: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_changed_since_it_was_measured_is_refused_a_segment_is_read_as_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"hello").unwrap();
        let read = |p: &Payload| -> io::Result<Vec<u8>> {
            let mut b = Vec::new();
            p.open()?.read_to_end(&mut b)?;
            Ok(b)
        };
        let file = Payload::File { path: path.clone(), len: 5 };
        assert_eq!(read(&file).unwrap(), b"hello");
        // Appended to while being packaged: the new bytes would be in no record.
        std::fs::write(&path, b"hello, more").unwrap();
        let err = read(&file).unwrap_err().to_string();
        assert!(err.contains("5 bytes") && err.contains("11 now"), "{err}");
        // A segment is a part of its file by design: the rest is someone else's.
        let seg = Payload::Segment { path: path.clone(), offset: 7, len: 4 };
        assert_eq!(read(&seg).unwrap(), b"more");
        let past = Payload::Segment { path, offset: 8, len: 4 };
        assert!(read(&past).is_err(), "a segment past the end of its file");
    }
}
