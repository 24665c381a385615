//! How one ARC record becomes one WARC record (`PROFILE.md` P7, `INPUT_FORMATS.md` §2.7).
//!
//! | ARC record                         | WARC-Type  | Content-Type                          |
//! |------------------------------------|------------|---------------------------------------|
//! | `filedesc://` version block        | `metadata` | `text/plain` (block = whole record)   |
//! | `http(s):` with a complete header  | `response` | `application/http;msgtype=response`   |
//! | `http(s):` without one             | `resource` | the ARC's MIME type                   |
//! | `dns:`                             | `resource` | `text/dns`                            |
//! | any other scheme                   | `resource` | the ARC's MIME type                   |
//! | bytes that belong to no record     | `resource` | `application/octet-stream`            |
//!
//! Every record derived from the ARC carries its source offset and the ARC header line
//! verbatim (`X-Webaip-ARC-Offset`, `X-Webaip-ARC-Header`), so the ARC can be reconstructed.

use std::net::IpAddr;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::formats::arc::{
    Anomaly, AnomalyKind, ArcHeader, ArcRecord, Location, RecordKind, Severity,
};
use crate::formats::http::{HttpHead, response_head};
use crate::formats::warc::header::uri_text;
use crate::formats::warc::writer::RecordSpec;

/// Extension field: where the record came from in the ARC file.
pub const FIELD_ARC_OFFSET: &str = "X-Webaip-ARC-Offset";
/// Extension field: the ARC header line, verbatim (or `base64:` when it is not clean text).
pub const FIELD_ARC_HEADER: &str = "X-Webaip-ARC-Header";
/// Extension field: an anomaly met while reading this record (may repeat).
pub const FIELD_ANOMALY: &str = "X-Webaip-Anomaly";

/// The URI scheme used for bytes that belong to no ARC record.
pub const REMAINDER_URI_PREFIX: &str = "metadata://webaip/arc-remainder";

/// The input side of a record, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputKind {
    /// The `filedesc://` version block.
    Filedesc,
    /// An `http:`/`https:` capture.
    Http,
    /// A `dns:` capture.
    Dns,
    /// A capture with another scheme (`metadata:`, `ftp:`, ...).
    Other,
    /// Bytes that belong to no record.
    Remainder,
}

impl InputKind {
    /// A stable name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            InputKind::Filedesc => "filedesc",
            InputKind::Http => "http",
            InputKind::Dns => "dns",
            InputKind::Other => "other",
            InputKind::Remainder => "remainder",
        }
    }
}

/// What the mapping decided for one record.
#[derive(Debug, Clone)]
pub struct Mapped {
    /// The WARC fields (digests and length are added when the block is hashed).
    pub spec: RecordSpec,
    /// Where the payload starts inside the block.
    pub payload_offset: u64,
    /// True when the block is the whole ARC record (header line included): the filedesc.
    pub whole_record: bool,
    /// The input classification.
    pub input_kind: InputKind,
    /// MIME type of the payload: the harvested type for HTTP responses, else the record's.
    pub payload_mime: String,
    /// Anomalies the mapping found (no HTTP header, date replaced, ...).
    pub anomalies: Vec<Anomaly>,
}

/// State carried from record to record while mapping one file.
#[derive(Debug)]
pub struct MappingContext {
    /// The ARC file's name, for remainder URIs.
    pub arc_name: String,
    /// The warcinfo record every record points to.
    pub warcinfo_id: String,
    /// Date for records with no usable date of their own.
    pub fallback_date: DateTime<Utc>,
    last_date: Option<DateTime<Utc>>,
}

impl MappingContext {
    /// A context for one ARC file.
    pub fn new(arc_name: String, warcinfo_id: String, fallback_date: DateTime<Utc>) -> Self {
        MappingContext { arc_name, warcinfo_id, fallback_date, last_date: None }
    }

    /// Maps `rec`; `head` holds the first bytes of its body (enough to find HTTP headers).
    pub fn map(&mut self, rec: &ArcRecord, head: &[u8], record_id: String) -> Mapped {
        let mut anomalies = Vec::new();
        let mut extra = vec![(FIELD_ARC_OFFSET.to_string(), offset_field(&rec.location))];
        let (date, date_note) = self.date_for(rec.header.as_ref());
        if let Some(detail) = date_note {
            anomalies.push(anomaly(rec.location, AnomalyKind::BadDate, Severity::Warning, detail));
        }
        let mut spec = RecordSpec {
            record_id,
            date: date.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            warcinfo_id: Some(self.warcinfo_id.clone()),
            ..RecordSpec::default()
        };
        let mut payload_offset = 0;
        let input_kind;
        let mut whole_record = false;
        match (&rec.kind, &rec.header) {
            (RecordKind::Filedesc, Some(h)) => {
                input_kind = InputKind::Filedesc;
                whole_record = true;
                spec.warc_type = "metadata".into();
                spec.target_uri = Some(uri_text(&h.url));
                spec.concurrent_to = Some(self.warcinfo_id.clone());
                spec.content_type = Some("text/plain".into());
            }
            (RecordKind::Capture, Some(h)) => {
                extra.push((FIELD_ARC_HEADER.to_string(), header_line_field(&h.raw_line)));
                spec.target_uri = Some(uri_text(&h.url));
                spec.ip_address = ip_field(&h.ip);
                spec.payload_digest = true;
                let scheme = scheme_of(&h.url);
                // Quirk: warcio (and pywb) parse HTTP headers only for URIs that start with
                // lower-case `http:`/`https:`; we use the same test so that the payload we
                // describe is the one they find.
                let http = h.url.starts_with(b"http:") || h.url.starts_with(b"https:");
                if http {
                    input_kind = InputKind::Http;
                    match response_head(head) {
                        HttpHead::Complete(n) => {
                            spec.warc_type = "response".into();
                            spec.content_type = Some("application/http;msgtype=response".into());
                            payload_offset = n as u64;
                        }
                        _ if head.is_empty() => {
                            spec.warc_type = "resource".into();
                            spec.content_type = Some(mime_field(&h.mime));
                        }
                        other => {
                            let why = match other {
                                HttpHead::Incomplete => "the HTTP header section is incomplete",
                                _ => "the body has no HTTP status line",
                            };
                            anomalies.push(anomaly(
                                rec.location,
                                AnomalyKind::NoHttpHeader,
                                Severity::Info,
                                format!("{why}; written as a resource record with the whole body as payload"),
                            ));
                            spec.warc_type = "resource".into();
                            spec.content_type = Some(mime_field(&h.mime));
                        }
                    }
                } else if scheme.eq_ignore_ascii_case("dns") {
                    input_kind = InputKind::Dns;
                    spec.warc_type = "resource".into();
                    spec.content_type = Some("text/dns".into());
                } else {
                    input_kind = InputKind::Other;
                    spec.warc_type = "resource".into();
                    spec.content_type = Some(mime_field(&h.mime));
                }
                if rec.truncated {
                    spec.truncated = Some("unspecified".into());
                }
            }
            _ => {
                input_kind = InputKind::Remainder;
                spec.warc_type = "resource".into();
                spec.target_uri = Some(remainder_uri(&self.arc_name, &rec.location));
                spec.content_type = Some("application/octet-stream".into());
                spec.payload_digest = true;
            }
        }
        for a in rec.anomalies.iter().chain(&anomalies) {
            if a.severity >= Severity::Warning {
                extra.push((
                    FIELD_ANOMALY.to_string(),
                    format!("{}: {}", kind_name(a.kind), a.detail),
                ));
            }
        }
        spec.extra = extra;
        let payload_mime = match (&rec.header, spec.warc_type.as_str()) {
            (Some(h), "response") => mime_field(&h.mime),
            _ => spec.content_type.clone().unwrap_or_else(|| "application/octet-stream".into()),
        };
        Mapped { spec, payload_offset, whole_record, input_kind, payload_mime, anomalies }
    }

    /// The record's date, or a stand-in (with a note saying which) when it has none.
    fn date_for(&mut self, header: Option<&ArcHeader>) -> (DateTime<Utc>, Option<String>) {
        match header {
            Some(ArcHeader { date: Some(d), .. }) => {
                self.last_date = Some(*d);
                (*d, None)
            }
            Some(h) => {
                let (d, from) = match self.last_date {
                    Some(d) => (d, "the previous record's date"),
                    None => (self.fallback_date, "the fallback date"),
                };
                (d, Some(format!("archive-date {:?} unusable; WARC-Date is {from}", h.date_raw)))
            }
            None => (self.last_date.unwrap_or(self.fallback_date), None),
        }
    }
}

fn anomaly(location: Location, kind: AnomalyKind, severity: Severity, detail: String) -> Anomaly {
    Anomaly { location, kind, severity, detail }
}

/// `1234` for a plain file, `1234+56` for byte 56 of the gzip member at 1234.
pub fn offset_field(loc: &Location) -> String {
    match loc.member {
        Some(m) if loc.offset == 0 => m.to_string(),
        Some(m) => format!("{m}+{}", loc.offset),
        None => loc.offset.to_string(),
    }
}

/// The URI naming bytes at `loc` of `arc_name` that belong to no record.
pub fn remainder_uri(arc_name: &str, loc: &Location) -> String {
    let name: String = arc_name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("{REMAINDER_URI_PREFIX}?file={name}&offset={}", offset_field(loc))
}

fn header_line_field(line: &[u8]) -> String {
    match std::str::from_utf8(line) {
        Ok(s) if !s.chars().any(|c| c.is_control()) => s.to_string(),
        _ => format!("base64:{}", data_encoding::BASE64.encode(line)),
    }
}

fn ip_field(ip: &str) -> Option<String> {
    match ip.parse::<IpAddr>() {
        Ok(a) if !a.is_unspecified() => Some(a.to_string()),
        _ => None,
    }
}

fn mime_field(mime: &str) -> String {
    let m = mime.trim();
    if m.is_empty() || m == "-" || m.eq_ignore_ascii_case("no-type") || !m.contains('/') {
        "application/octet-stream".into()
    } else {
        m.to_string()
    }
}

fn scheme_of(url: &[u8]) -> String {
    let end = url.iter().position(|&b| b == b':').unwrap_or(0);
    String::from_utf8_lossy(&url[..end]).into_owned()
}

fn kind_name(kind: AnomalyKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{kind:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_and_mime_fields() {
        assert_eq!(ip_field("0.0.0.0"), None);
        assert_eq!(ip_field("-"), None);
        assert_eq!(ip_field("207.241.229.39").as_deref(), Some("207.241.229.39"));
        assert_eq!(mime_field("no-type"), "application/octet-stream");
        assert_eq!(mime_field("html"), "application/octet-stream");
        assert_eq!(mime_field("text/html"), "text/html");
    }

    #[test]
    fn remainder_uri_escapes_the_name() {
        let loc = Location { member: Some(10), offset: 5 };
        assert_eq!(
            remainder_uri("a b.arc", &loc),
            "metadata://webaip/arc-remainder?file=a%20b.arc&offset=10+5"
        );
    }
}
