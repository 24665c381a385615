//! One line of a CDXJ index: `<SURT key> <14-digit timestamp> <JSON fields>`, as pywb and
//! cdxj-indexer write it. The JSON is written the way Python's `json.dumps` writes it (`", "`
//! and `": "` between items, every character outside printable ASCII escaped), so a line
//! webaip writes is byte-equal to cdxj-indexer's for the same record, and lines sort the same.

use std::fmt::Write as _;

/// One index line: a record of a container, reached by its URL's key and its date.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexEntry {
    /// The SURT key of `url` ([`super::surt::surt`]).
    pub key: String,
    /// The record's date as 14 digits, `YYYYMMDDhhmmss`.
    pub timestamp: String,
    /// The record's `WARC-Target-URI`.
    pub url: String,
    /// The payload's type from the HTTP `Content-Type` (its first part), `warc/revisit` for a
    /// revisit; absent when the record does not say.
    pub mime: Option<String>,
    /// The HTTP status code, when the record holds an HTTP response.
    pub status: Option<String>,
    /// The payload digest as the record states it (`sha1:BASE32`).
    pub digest: Option<String>,
    /// The record's length in its container (its gzip member, when compressed).
    pub length: u64,
    /// The record's offset in its container.
    pub offset: u64,
    /// The container's name, as the index names it (relative to where the index is used).
    pub filename: String,
    /// Fields after these, in their order, as (name, JSON value as written).
    pub extra: Vec<(String, String)>,
    /// The record's `WARC-Type`, when the entry was made from the record and it was asked
    /// for (`EntryOptions::record_types`); never written to an index line nor read from one.
    pub record_type: Option<String>,
}

/// Why a line is not a CDXJ index line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CdxjLineError {
    /// Fewer than three space-separated parts.
    #[error("not a CDXJ line (want `KEY TIMESTAMP {{JSON}}`)")]
    Shape,
    /// The JSON part does not parse as an object.
    #[error("its JSON fields do not parse: {0}")]
    Json(String),
    /// A field that must be there is not, or is not what it must be.
    #[error("field `{0}` is missing or not a number/string as required")]
    Field(&'static str),
}

impl IndexEntry {
    /// Parses one CDXJ line (without its line end). Numbers may be written as JSON numbers or
    /// strings (pywb writes strings, other indexers numbers).
    pub fn parse_cdxj(line: &str) -> Result<IndexEntry, CdxjLineError> {
        let mut parts = line.splitn(3, ' ');
        let (Some(key), Some(timestamp), Some(json)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(CdxjLineError::Shape);
        };
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(json).map_err(|e| CdxjLineError::Json(e.to_string()))?;
        let text = |name: &str| match map.get(name) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let number = |name: &'static str| -> Result<u64, CdxjLineError> {
            text(name).and_then(|s| s.parse().ok()).ok_or(CdxjLineError::Field(name))
        };
        const KNOWN: [&str; 7] =
            ["url", "mime", "status", "digest", "length", "offset", "filename"];
        Ok(IndexEntry {
            key: key.to_string(),
            timestamp: timestamp.to_string(),
            url: text("url").ok_or(CdxjLineError::Field("url"))?,
            mime: text("mime"),
            status: text("status"),
            digest: text("digest"),
            length: number("length")?,
            offset: number("offset")?,
            filename: text("filename").ok_or(CdxjLineError::Field("filename"))?,
            extra: map
                .iter()
                .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.to_string()))
                .collect(),
            record_type: None,
        })
    }

    /// The value of extra field `name` as a string, when it is one.
    pub fn extra_text(&self, name: &str) -> Option<String> {
        let (_, v) = self.extra.iter().find(|(k, _)| k == name)?;
        match serde_json::from_str::<serde_json::Value>(v).ok()? {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Appends the line (with its `\n`) to `out`, fields in cdxj-indexer's order: url, mime,
    /// status, digest, length, offset, filename, then the extra ones.
    pub fn write_cdxj(&self, out: &mut String) {
        out.push_str(&self.key);
        out.push(' ');
        out.push_str(&self.timestamp);
        out.push_str(" {");
        let mut first = true;
        let mut field = |out: &mut String, name: &str, value: &str, raw: bool| {
            if !first {
                out.push_str(", ");
            }
            first = false;
            json_string(out, name);
            out.push_str(": ");
            if raw { out.push_str(value) } else { json_string(out, value) }
        };
        field(out, "url", &self.url, false);
        for (name, value) in
            [("mime", &self.mime), ("status", &self.status), ("digest", &self.digest)]
        {
            if let Some(v) = value {
                field(out, name, v, false);
            }
        }
        field(out, "length", &self.length.to_string(), false);
        field(out, "offset", &self.offset.to_string(), false);
        field(out, "filename", &self.filename, false);
        for (name, value) in &self.extra {
            field(out, name, value, true);
        }
        out.push_str("}\n");
    }
}

impl IndexEntry {
    /// Appends the line (with its `\n`) as classic 11-field CDX (` CDX N b a m s k r M S V
    /// g`), as `cdxj-indexer -11` writes it: `-` for a field the record lacks (redirect and
    /// meta always), the digest without its `sha1:` label.
    pub fn write_cdx11(&self, out: &mut String) {
        let digest = self.digest.as_deref().map(|d| d.rsplit(':').next().unwrap_or(d));
        let fields = [
            Some(self.key.as_str()),
            Some(self.timestamp.as_str()),
            Some(self.url.as_str()),
            self.mime.as_deref(),
            self.status.as_deref(),
            digest,
            None,
            None,
        ];
        for f in fields {
            out.push_str(f.unwrap_or("-"));
            out.push(' ');
        }
        let _ = writeln!(out, "{} {} {}", self.length, self.offset, self.filename);
    }
}

/// Appends `s` as a JSON string the way Python's `json.dumps` (with `ensure_ascii`) writes it.
pub fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line cdxj-indexer wrote reads back and writes again byte for byte.
    #[test]
    fn a_cdxj_indexer_line_round_trips() {
        let line = r#"com,example)/ 20170306040348 {"url": "http://example.com/", "mime": "warc/revisit", "status": "200", "digest": "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK", "length": "586", "offset": "2621", "filename": "warcio-example.warc.gz"}"#;
        let e = IndexEntry::parse_cdxj(line).unwrap();
        assert_eq!((e.offset, e.length), (2621, 586));
        assert_eq!(e.mime.as_deref(), Some("warc/revisit"));
        let mut out = String::new();
        e.write_cdxj(&mut out);
        assert_eq!(out, format!("{line}\n"));
    }

    /// Characters outside printable ASCII are escaped as Python's `json.dumps` escapes them
    /// (its output for this string, surrogate pair included).
    #[test]
    fn json_strings_escape_as_python_does() {
        let mut out = String::new();
        json_string(&mut out, "a\"b\\c\n\u{7f}é😀\u{1}");
        assert_eq!(out, r#""a\"b\\c\n\u007f\u00e9\ud83d\ude00\u0001""#);
    }

    /// A line without its fields, or without an offset, is refused with the reason.
    #[test]
    fn broken_lines_are_refused() {
        assert_eq!(IndexEntry::parse_cdxj("com,example)/ 2017"), Err(CdxjLineError::Shape));
        let no_offset = r#"k 20170306040348 {"url": "u", "length": "1", "filename": "f"}"#;
        assert_eq!(IndexEntry::parse_cdxj(no_offset), Err(CdxjLineError::Field("offset")));
        assert!(matches!(IndexEntry::parse_cdxj("k t {"), Err(CdxjLineError::Json(_))));
    }
}
