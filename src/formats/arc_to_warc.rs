//! How one ARC record becomes one WARC record (`docs/profile.md` P7; `docs/formats.md`, "How
//! ARC becomes WARC").
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
use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::formats::arc::{
    Anomaly, AnomalyKind, ArcError, ArcHeader, ArcReader, ArcRecord, Location, RecordKind, Severity,
};
use crate::formats::arc_rebuild::FIELD_ARC_REBUILD;
use crate::formats::http::{HttpHead, entity_mime, response_head};
use crate::formats::warc::header::uri_text;
use crate::formats::warc::writer::RecordSpec;

/// Extension field: where the record came from in the ARC file.
pub(crate) const FIELD_ARC_OFFSET: &str = "X-Webaip-ARC-Offset";
/// Extension field: the ARC header line, verbatim (or `base64:` when it is not clean text).
pub(crate) const FIELD_ARC_HEADER: &str = "X-Webaip-ARC-Header";
/// Extension field: an anomaly met while reading this record (may repeat).
pub(crate) const FIELD_ANOMALY: &str = "X-Webaip-Anomaly";
/// Extension field: where `WARC-Date` came from when the record has no usable date of its own
/// ([`DateSource`]); absent when the date is the record's own.
pub(crate) const FIELD_DATE_SOURCE: &str = "X-Webaip-Date-Source";

/// Where a record's `WARC-Date` came from. Never the clock: a record with no date of its own
/// takes, in this order, the nearest earlier record's, the ARC header record's, the timestamp
/// in the ARC file name, the first later record's, or the date the operator gave
/// (`--capture-date`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DateSource {
    /// The record's own archive-date.
    Record,
    /// The nearest earlier record's date.
    PreviousRecord,
    /// The date of the ARC header (`filedesc://`) record.
    ArcHeader,
    /// The 14-digit timestamp in the ARC file name.
    FileName,
    /// The first later record's date, when nothing before gives one (a filedesc dated `-`).
    NextRecord,
    /// The date given by the operator (`--capture-date`).
    CaptureDate,
}

impl DateSource {
    /// The value of `X-Webaip-Date-Source` and the report's key.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DateSource::Record => "record",
            DateSource::PreviousRecord => "previous-record",
            DateSource::ArcHeader => "arc-header",
            DateSource::FileName => "file-name",
            DateSource::NextRecord => "next-record",
            DateSource::CaptureDate => "capture-date",
        }
    }

    /// True when the date is not the record's own.
    pub fn is_inferred(self) -> bool {
        self != DateSource::Record
    }
}

/// Dates a record can fall back to, known before the first record is mapped.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FallbackDates {
    /// The ARC header record's date.
    pub arc_header: Option<DateTime<Utc>>,
    /// The timestamp in the ARC file name.
    pub file_name: Option<DateTime<Utc>>,
    /// The first date a record of the file has (for records before it).
    pub next_record: Option<DateTime<Utc>>,
    /// The operator's `--capture-date`.
    pub capture_date: Option<DateTime<Utc>>,
}

/// A record with no usable date and nothing to fall back to.
#[derive(Debug, Clone)]
pub(crate) struct NoDate {
    /// Where the record is.
    pub location: Location,
    /// Its archive-date field as found (`None` for bytes that are no record).
    pub date_raw: Option<String>,
}

/// The URI scheme used for bytes that belong to no ARC record.
pub(crate) const REMAINDER_URI_PREFIX: &str = "metadata://webaip/arc-remainder";

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
    pub(crate) fn as_str(self) -> &'static str {
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
pub(crate) struct Mapped {
    /// The WARC fields (digests and length are added when the block is hashed).
    pub spec: RecordSpec,
    /// Where the payload starts inside the block.
    pub payload_offset: u64,
    /// The input classification.
    pub input_kind: InputKind,
    /// MIME type of the payload: the harvested type for HTTP responses, else the record's.
    pub payload_mime: String,
    /// Anomalies the mapping found (no HTTP header, date replaced, ...).
    pub anomalies: Vec<Anomaly>,
    /// Where `WARC-Date` came from.
    pub date_source: DateSource,
}

/// An ARC record's block as the migration carries it.
#[derive(Debug)]
pub(crate) enum RecordBlock {
    /// Small enough to hash and compress in memory.
    Inline(Vec<u8>),
    /// Larger: read from the ARC reader's range (the input, or a spilled gzip member) when
    /// written, streamed once (hashed while its chunks compress).
    Shared(crate::formats::arc::SharedRange),
}

/// One ARC record mapped to its WARC record, with its block and where it came from.
#[derive(Debug)]
pub(crate) struct MappedRecord {
    /// The WARC record's fields and what the mapping found.
    pub mapped: Mapped,
    /// Its block (the whole ARC record for a file header record, else its body).
    pub block: RecordBlock,
    /// Where it is in the ARC.
    pub location: Location,
    /// What the reader found odd about it.
    pub anomalies: Vec<Anomaly>,
}

impl MappedRecord {
    /// Its payload's length: the block after the payload offset.
    pub(crate) fn payload_len(&self) -> u64 {
        let block = match &self.block {
            RecordBlock::Inline(b) => b.len() as u64,
            RecordBlock::Shared(r) => r.len(),
        };
        block.saturating_sub(self.mapped.payload_offset)
    }

    /// Its payload, in memory when the block is.
    pub(crate) fn payload_bytes(&self) -> Option<&[u8]> {
        match &self.block {
            RecordBlock::Inline(b) => {
                Some(&b[(self.mapped.payload_offset as usize).min(b.len())..])
            }
            RecordBlock::Shared(_) => None,
        }
    }

    /// A reader of its payload. A block streamed from the ARC is read past its payload offset
    /// as a stored record's payload is: the offset was found in these very bytes, so a block
    /// that ends before it is an error, not an empty payload.
    pub(crate) fn payload_reader(&self) -> std::io::Result<Box<dyn std::io::Read + Send + '_>> {
        match &self.block {
            RecordBlock::Inline(_) => Ok(Box::new(self.payload_bytes().unwrap_or_default())),
            RecordBlock::Shared(range) => {
                let (begin, len) = (self.mapped.payload_offset, self.payload_len());
                let payload = crate::formats::warc::stored::payload_reader(
                    range.reader(),
                    false,
                    begin,
                    len,
                )?;
                Ok(Box::new(payload))
            }
        }
    }
}

/// What kind of WARC record a mapped record became, and where its payload starts.
struct Typed {
    input_kind: InputKind,
    payload_offset: u64,
}

/// An anomaly for a date the ARC reader let through but that could not be used. The
/// reader's own BadDate (if any) already counts the bad field.
fn date_anomaly(rec: &ArcRecord, date: DateTime<Utc>, source: DateSource) -> Option<Anomaly> {
    let reported = rec.anomalies.iter().any(|a| a.kind == AnomalyKind::BadDate);
    let h = rec.header.as_ref().filter(|_| source.is_inferred() && !reported)?;
    let detail = format!(
        "archive-date {:?} unusable; WARC-Date is {} ({})",
        h.date_raw,
        date.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        source.as_str()
    );
    Some(anomaly(rec.location, AnomalyKind::BadDate, Severity::Warning, detail))
}

/// A capture: a response when its body holds an HTTP response, else a resource (DNS, other
/// schemes, or an HTTP capture whose body has no HTTP header).
fn capture_type(
    rec: &ArcRecord,
    h: &ArcHeader,
    head: &[u8],
    spec: &mut RecordSpec,
    anomalies: &mut Vec<Anomaly>,
) -> Typed {
    spec.target_uri = Some(uri_text(&h.url));
    spec.ip_address = ip_field(&h.ip);
    spec.payload_digest = true;
    if rec.truncated {
        spec.truncated = Some("unspecified".into());
    }
    // Quirk: warcio (and pywb) parse HTTP headers only for URIs that start with lower-case
    // `http:`/`https:`; we use the same test so that the payload we describe is the one they
    // find.
    if h.url.starts_with(b"http:") || h.url.starts_with(b"https:") {
        let payload_offset = http_type(rec, h, head, spec, anomalies);
        return Typed { input_kind: InputKind::Http, payload_offset };
    }
    spec.warc_type = "resource".into();
    if scheme_of(&h.url).eq_ignore_ascii_case("dns") {
        spec.content_type = Some("text/dns".into());
        return Typed { input_kind: InputKind::Dns, payload_offset: 0 };
    }
    spec.content_type = Some(mime_field(&h.mime));
    Typed { input_kind: InputKind::Other, payload_offset: 0 }
}

/// An HTTP capture: a response after a complete HTTP header section (its payload starts
/// after it), else a resource with the whole body as payload. Returns the payload's offset.
fn http_type(
    rec: &ArcRecord,
    h: &ArcHeader,
    head: &[u8],
    spec: &mut RecordSpec,
    anomalies: &mut Vec<Anomaly>,
) -> u64 {
    let why = match response_head(head) {
        HttpHead::Complete(n) => {
            spec.warc_type = "response".into();
            spec.content_type = Some("application/http;msgtype=response".into());
            return n as u64;
        }
        _ if head.is_empty() => None,
        HttpHead::Incomplete => Some("the HTTP header section is incomplete"),
        _ => Some("the body has no HTTP status line"),
    };
    if let Some(why) = why {
        anomalies.push(anomaly(
            rec.location,
            AnomalyKind::NoHttpHeader,
            Severity::Info,
            format!("{why}; written as a resource record with the whole body as payload"),
        ));
    }
    spec.warc_type = "resource".into();
    spec.content_type = Some(mime_field(&h.mime));
    0
}

/// The payload's type. An HTTP response's payload is its entity: typed by the HTTP header's
/// Content-Type (`http_head`), whatever the ARC header line says (which may be no MIME type
/// at all: `html`, `-`); where the two differ, the ARC's value is kept in the report.
fn payload_mime(
    rec: &ArcRecord,
    spec: &RecordSpec,
    http_head: &[u8],
    anomalies: &mut Vec<Anomaly>,
) -> String {
    let h = match (&rec.header, spec.warc_type.as_str()) {
        (Some(h), "response") => h,
        _ => return spec.content_type.clone().unwrap_or_else(|| "application/octet-stream".into()),
    };
    let Some(entity) = entity_mime(http_head) else { return mime_field(&h.mime) };
    let arc_type = h.mime.trim().split(';').next().unwrap_or("").trim();
    if !arc_type.eq_ignore_ascii_case(&entity) {
        anomalies.push(anomaly(
            rec.location,
            AnomalyKind::ArcTypeNotEntityType,
            Severity::Info,
            format!(
                "ARC content type {:?}; the HTTP header says {entity:?}, which types the payload",
                h.mime
            ),
        ));
    }
    entity
}

/// State carried from record to record while mapping one file.
#[derive(Debug)]
pub(crate) struct MappingContext {
    /// The ARC file's name, for remainder URIs.
    pub arc_name: String,
    /// The warcinfo record every record points to.
    pub warcinfo_id: String,
    /// Dates for records with no usable date of their own (after the previous record's).
    pub fallback: FallbackDates,
    /// Write each record's `X-Webaip-ARC-Rebuild` field.
    pub rebuild_data: bool,
    /// Bytes of those fields written (names, values, separators and line ends).
    pub rebuild_field_bytes: u64,
    last_date: Option<DateTime<Utc>>,
}

impl MappingContext {
    /// A context for one ARC file.
    pub(crate) fn new(arc_name: String, warcinfo_id: String, fallback: FallbackDates) -> Self {
        MappingContext {
            arc_name,
            warcinfo_id,
            fallback,
            rebuild_data: true,
            rebuild_field_bytes: 0,
            last_date: None,
        }
    }

    /// Maps `rec`; `head` holds the first bytes of its body (enough to find HTTP headers).
    /// Fails only when the record has no usable date and nothing gives one.
    pub(crate) fn map(
        &mut self,
        rec: &ArcRecord,
        head: &[u8],
        record_id: String,
    ) -> Result<Mapped, NoDate> {
        let mut anomalies = Vec::new();
        let mut extra = self.arc_fields(rec);
        let (date, date_source) = self.date_for(rec)?;
        if date_source.is_inferred() {
            extra.push((FIELD_DATE_SOURCE.to_string(), date_source.as_str().to_string()));
        }
        anomalies.extend(date_anomaly(rec, date, date_source));
        let mut spec = RecordSpec {
            record_id,
            date: date.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            warcinfo_id: Some(self.warcinfo_id.clone()),
            ..RecordSpec::default()
        };
        let typed = match (&rec.kind, &rec.header) {
            (RecordKind::Filedesc, Some(h)) => self.filedesc_type(h, &mut spec),
            (RecordKind::Capture, Some(h)) => {
                extra.push((FIELD_ARC_HEADER.to_string(), header_line_field(&h.raw_line)));
                capture_type(rec, h, head, &mut spec, &mut anomalies)
            }
            _ => self.remainder_type(rec, &mut spec),
        };
        for a in rec.anomalies.iter().chain(&anomalies) {
            if a.severity >= Severity::Warning {
                extra.push((
                    FIELD_ANOMALY.to_string(),
                    format!("{}: {}", kind_name(a.kind), a.detail),
                ));
            }
        }
        spec.extra = extra;
        let payload_offset = typed.payload_offset;
        let payload_mime = payload_mime(
            rec,
            &spec,
            &head[..(payload_offset as usize).min(head.len())],
            &mut anomalies,
        );
        let input_kind = typed.input_kind;
        Ok(Mapped { spec, payload_offset, input_kind, payload_mime, anomalies, date_source })
    }

    /// The fields every mapped record carries: where it was in the ARC, and (unless off)
    /// what rebuilding the ARC needs.
    fn arc_fields(&mut self, rec: &ArcRecord) -> Vec<(String, String)> {
        let mut extra = vec![(FIELD_ARC_OFFSET.to_string(), offset_field(&rec.location))];
        if self.rebuild_data {
            let value = rec.rebuild.to_string();
            self.rebuild_field_bytes += (FIELD_ARC_REBUILD.len() + 4 + value.len()) as u64;
            extra.push((FIELD_ARC_REBUILD.to_string(), value));
        }
        extra
    }

    /// The filedesc version block becomes a metadata record about the warcinfo.
    fn filedesc_type(&self, h: &ArcHeader, spec: &mut RecordSpec) -> Typed {
        spec.warc_type = "metadata".into();
        spec.target_uri = Some(uri_text(&h.url));
        spec.concurrent_to = Some(self.warcinfo_id.clone());
        spec.content_type = Some("text/plain".into());
        Typed { input_kind: InputKind::Filedesc, payload_offset: 0 }
    }

    /// Bytes that are no ARC record are kept as a resource named after their place.
    fn remainder_type(&self, rec: &ArcRecord, spec: &mut RecordSpec) -> Typed {
        spec.warc_type = "resource".into();
        spec.target_uri = Some(remainder_uri(&self.arc_name, &rec.location));
        spec.content_type = Some("application/octet-stream".into());
        spec.payload_digest = true;
        Typed { input_kind: InputKind::Remainder, payload_offset: 0 }
    }

    /// The record's own date, or the first stand-in of [`DateSource`]'s order.
    fn date_for(&mut self, rec: &ArcRecord) -> Result<(DateTime<Utc>, DateSource), NoDate> {
        let is_filedesc = rec.kind == RecordKind::Filedesc;
        if let Some(ArcHeader { date: Some(d), .. }) = &rec.header {
            // The header record's date is a fallback of its own, not a "previous record".
            if !is_filedesc {
                self.last_date = Some(*d);
            }
            return Ok((*d, DateSource::Record));
        }
        let f = &self.fallback;
        let found = [
            (self.last_date, DateSource::PreviousRecord),
            (f.arc_header, DateSource::ArcHeader),
            (f.file_name, DateSource::FileName),
            (f.next_record, DateSource::NextRecord),
            (f.capture_date, DateSource::CaptureDate),
        ]
        .into_iter()
        .find_map(|(d, s)| d.map(|d| (d, s)));
        found.ok_or_else(|| NoDate {
            location: rec.location,
            date_raw: rec.header.as_ref().map(|h| h.date_raw.clone()),
        })
    }
}

fn anomaly(location: Location, kind: AnomalyKind, severity: Severity, detail: String) -> Anomaly {
    Anomaly { location, kind, severity, detail }
}

/// `1234` for a plain file, `1234+56` for byte 56 of the gzip member at 1234.
pub(crate) fn offset_field(loc: &Location) -> String {
    match loc.member {
        Some(m) if loc.offset == 0 => m.to_string(),
        Some(m) => format!("{m}+{}", loc.offset),
        None => loc.offset.to_string(),
    }
}

/// The URI naming bytes at `loc` of `arc_name` that belong to no record.
pub(crate) fn remainder_uri(arc_name: &str, loc: &Location) -> String {
    let name = uri_component(arc_name);
    format!("{REMAINDER_URI_PREFIX}?file={name}&offset={}", offset_field(loc))
}

/// `text` percent-encoded for a URI query value (unreserved characters kept).
pub(crate) fn uri_component(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The ARC header line as a WARC field value: as it is, unless a reader would not give it
/// back so (WARC readers trim a value's outer whitespace, and a value starting `base64:` is
/// read as encoded): then base64, like one with control characters.
fn header_line_field(line: &[u8]) -> String {
    match std::str::from_utf8(line) {
        Ok(s)
            if !s.chars().any(|c| c.is_control()) && s.trim() == s && !s.starts_with("base64:") =>
        {
            s.to_string()
        }
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

/// The dates a record without its own falls back to, in the migration's order (see
/// [`FallbackDates`]); `None` when the file holds no ARC record. Reads the file once.
pub(crate) fn fallback_dates(
    input: &Path,
    capture_date: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<Option<FallbackDates>, ArcError> {
    Ok(prescan_dates(input)?.map(|(arc_header, first_date)| FallbackDates {
        arc_header,
        next_record: first_date,
        file_name: file_name_date(input),
        capture_date,
    }))
}

/// Read ahead to the first record with a date of its own: the ARC header (`filedesc://`)
/// record's date, when the first record is one and its date parses, and that first date (for
/// records before it, such as a filedesc dated `-`). `None` when the file has no record at all.
/// Reads the whole file only when no record has a date.
#[allow(clippy::type_complexity)]
fn prescan_dates(
    input: &Path,
) -> Result<
    Option<(Option<chrono::DateTime<chrono::Utc>>, Option<chrono::DateTime<chrono::Utc>>)>,
    ArcError,
> {
    let mut arc = ArcReader::open(input)?;
    let mut seen = None;
    while let Some(rec) = arc.next_record()? {
        let Some(h) = rec.header else { continue };
        let header =
            *seen.get_or_insert(if rec.kind == RecordKind::Filedesc { h.date } else { None });
        if h.date.is_some() {
            return Ok(Some((header, h.date)));
        }
    }
    Ok(seen.map(|header| (header, None)))
}

/// The timestamp in a Heritrix-style ARC name, when there is one.
fn file_name_date(input: &Path) -> Option<chrono::DateTime<chrono::Utc>> {
    let name = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Quirk: ARC names are prefix-timestamp-serial-host, and prefixes and hosts hold dashes,
    // so look for a 14- or 17-digit run followed by a 5-digit serial (INPUT_FORMATS.md §2.4).
    let parts: Vec<&str> = name.split('-').collect();
    for w in parts.windows(2) {
        let (ts, serial) = (w[0], w[1]);
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (ts.len() == 14 || ts.len() == 17)
            && digits(ts)
            && serial.len() >= 5
            && digits(&serial[..5])
            && let Some(d) = crate::formats::dates::parse_arc_date(&ts[..14])
        {
            return Some(d);
        }
    }
    None
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

    #[test]
    fn file_name_date_from_heritrix_name() {
        let d = file_name_date(Path::new("IAH-20080430204825-00000-blackbook.arc.gz")).unwrap();
        assert_eq!(d.to_rfc3339(), "2008-04-30T20:48:25+00:00");
        let name = "BNF-CRAWL-003-20071013163428-02639-crawling04.us.archive.org.arc.gz";
        let d = file_name_date(Path::new(name)).unwrap();
        assert_eq!(d.to_rfc3339(), "2007-10-13T16:34:28+00:00");
        assert_eq!(file_name_date(Path::new("x.arc")), None, "never the clock");
    }
}
