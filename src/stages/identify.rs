//! PRONOM format identification of payloads (issue 27): DROID's binary signatures
//! (`formats::droid`), matched in process, and what a package records of the result.
//!
//! An [`Identifier`] identifies one payload at a time, from bytes held in memory or from a
//! stream (only its first and last bytes are kept), and judges the result against the type
//! the harvest declared (HTTP `Content-Type`, ARC header). Every format DROID's priorities
//! leave is kept; none is a result too. A [`Tally`] counts a run's results for the one
//! `format identification` event a package gets, whose agent names the tool and the signature
//! file's version.

use std::collections::BTreeMap;
use std::io::{self, Read};

use chrono::{DateTime, Utc};

use rayon::prelude::*;
use serde::Serialize;

use super::{Item, Stage, StageError, StagedItem};
use crate::formats::droid::{DroidError, Examined, FileFormat, Signatures};
use crate::formats::text::TextKind;
use crate::ids::Ids;
use crate::model::{Agent, Event, Format, Identification};

/// The LoC event type of format identification.
pub(crate) const EVENT_TERM: &str = "format identification";
/// Its URI.
pub(crate) const EVENT_URI: &str = "http://id.loc.gov/vocabulary/preservation/eventType/for";
/// The identifier of the identification agent.
const AGENT_ID: &str = "webaip-pronom";

/// Declared types that say nothing about the bytes: never contradicted.
const GENERIC_TYPES: [&str; 9] = [
    "",
    "application/octet-stream",
    "binary/octet-stream",
    "application/unknown",
    "application/x-unknown",
    "unknown/unknown",
    "application/download",
    "application/force-download",
    "application/x-download",
];

/// Types that name the same kind of bytes: `[declared, what PRONOM lists]`.
const ALIASES: [(&str, &str); 10] = [
    ("image/jpg", "image/jpeg"),
    ("image/pjpeg", "image/jpeg"),
    ("image/x-png", "image/png"),
    ("image/x-ms-bmp", "image/bmp"),
    ("image/x-icon", "image/vnd.microsoft.icon"),
    ("audio/mp3", "audio/mpeg"),
    ("application/x-pdf", "application/pdf"),
    ("application/x-zip-compressed", "application/zip"),
    ("application/x-gzip", "application/gzip"),
    ("application/x-shockwave-flash", "application/vnd.adobe.flash-movie"),
];

/// Markup types a page may be declared as and match as another: HTML served as XHTML or XML
/// and the reverse are one kind of payload here, not a contradiction.
const MARKUP: [&str; 4] = ["text/html", "application/xhtml+xml", "application/xml", "text/xml"];

/// Why identification cannot run.
#[derive(Debug, thiserror::Error)]
pub enum IdentifyError {
    /// The built-in signature file does not load.
    #[error("PRONOM identification: {0}")]
    Signatures(&'static DroidError),
}

/// What a package records of identification (`--identify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IdentifyMode {
    /// No identification: no PUIDs, no event, no agent.
    None,
    /// Every payload is identified; the PUIDs are recorded on the bytestreams described for
    /// another reason, and a payload whose bytes contradict its declared type is described
    /// for that reason (P4.7).
    #[default]
    Described,
    /// Every payload is identified and described, with its PUIDs.
    All,
}

/// Identifies payloads with the signature file built into webaip.
#[derive(Debug, Clone, Copy)]
pub struct Identifier {
    sigs: &'static Signatures,
}

impl Identifier {
    /// The built-in signatures, compiled once; a corrupt file is an error here, at start.
    pub fn shipped() -> Result<Identifier, IdentifyError> {
        Signatures::shipped().map(|sigs| Identifier { sigs }).map_err(IdentifyError::Signatures)
    }

    /// The tool and signature file, as the PREMIS notes and the agent name them.
    pub(crate) fn method(&self) -> String {
        format!(
            "webaip {}, DROID signature file V{}, container signature file {}",
            env!("CARGO_PKG_VERSION"),
            self.sigs.version(),
            crate::formats::droid::container::SHIPPED_DATE
        )
    }

    /// A payload held in memory, declared as `declared`.
    pub(crate) fn identify_bytes(&self, declared: &str, bytes: &[u8]) -> Identification {
        self.judge(declared, self.sigs.examine_bytes(bytes))
    }

    /// A payload read to its end from `r` (only its first and last bytes are kept).
    pub(crate) fn identify_reader(
        &self,
        declared: &str,
        r: impl Read,
    ) -> io::Result<Identification> {
        Ok(self.judge(declared, self.sigs.examine_reader(r)?))
    }

    /// The result: the formats matched; or, when none is and the first bytes are text, plain
    /// text with its class (siegfried's "text match"); or nothing.
    fn judge(&self, declared: &str, found: Examined<'_>) -> Identification {
        let plain = found.text.and_then(|k| Some((k, self.sigs.plain_text()?)));
        let matches = match plain {
            Some((_, format)) => vec![pronom_format(format)],
            None => found.formats.iter().map(|f| pronom_format(f)).collect(),
        };
        let text = plain.map(|(k, _)| k);
        Identification {
            contradiction: contradiction(self.sigs, declared, &found.formats, text),
            matches,
            text,
            method: self.method(),
        }
    }

    /// The agent of the `format identification` event.
    pub(crate) fn agent(&self) -> Agent {
        Agent {
            id_type: "local".into(),
            id: AGENT_ID.into(),
            name: "webaip PRONOM identification (DROID binary and container signatures)".into(),
            agent_type: "software".into(),
            version: Some(self.method()),
            note: Some(format!(
                "DROID signature file V{}, created {}; container signature file {} (ZIP and OLE2 payloads held whole); plain text judged by the file command's character classes",
                self.sigs.version(),
                self.sigs.date_created(),
                crate::formats::droid::container::SHIPPED_DATE
            )),
        }
    }

    /// The one `format identification` event of a package: what was identified, in counts,
    /// linked to the objects that record the results.
    pub(crate) fn event(
        &self,
        ids: &Ids,
        now: DateTime<Utc>,
        tally: &Tally,
        objects: Vec<(String, String, String)>,
    ) -> Event {
        Event {
            id: ids.uuid().to_string(),
            event_type: EVENT_TERM.into(),
            event_type_uri: Some(EVENT_URI.into()),
            date_time: now,
            detail: Some(format!(
                "program=\"webaip\"; version=\"{}\"; DROID signature file V{}; binary signatures at the start and end of each payload; plain text (x-fmt/111) where none matches and the first 4096 bytes are text by the file command's character classes",
                env!("CARGO_PKG_VERSION"),
                self.sigs.version()
            )),
            outcome: "success".into(),
            outcome_detail: Some(tally.summary()),
            agents: vec![("local".into(), AGENT_ID.into(), "executing program".into())],
            objects,
        }
    }
}

/// A PRONOM format as the signature file names it.
fn pronom_format(f: &FileFormat) -> Format {
    Format {
        name: f.name.clone(),
        version: (!f.version.is_empty()).then(|| f.version.clone()),
        pronom: Some(f.puid.clone()),
    }
}

/// The declared type, lower-case, without parameters, aliases resolved.
fn normalized(declared: &str) -> String {
    let t = declared.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match ALIASES.iter().find(|(a, _)| *a == t) {
        Some((_, canonical)) => canonical.to_string(),
        None => t,
    }
}

/// Text types: their PRONOM signatures are optional markers (`<html`, `<?xml`) that real
/// pages need not carry, so no match says nothing against them.
fn is_text(t: &str) -> bool {
    t.starts_with("text/")
        || t.ends_with("+xml")
        || t.ends_with("/xml")
        || t.ends_with("json")
        || t.ends_with("javascript")
}

/// Why the bytes contradict the declared type, if they do: they match formats none of which
/// PRONOM lists under that type, or they match nothing (text or not) while formats of that
/// (binary) type have signatures that would have matched.
fn contradiction(
    sigs: &Signatures,
    declared: &str,
    found: &[&FileFormat],
    text: Option<TextKind>,
) -> Option<String> {
    let t = normalized(declared);
    if GENERIC_TYPES.contains(&t.as_str()) {
        return None;
    }
    let lists = |f: &FileFormat| f.mime_types.iter().any(|m| normalized(m) == t);
    let markup = |f: &FileFormat| f.mime_types.iter().any(|m| MARKUP.contains(&m.as_str()));
    if !found.is_empty() {
        if found.iter().any(|f| lists(f) || f.mime_types.is_empty())
            || (MARKUP.contains(&t.as_str()) && found.iter().any(|f| markup(f)))
        {
            return None;
        }
        let names: Vec<String> = found.iter().map(|f| format!("{} ({})", f.puid, f.name)).collect();
        return Some(format!("declared {t}; the bytes match {}", names.join(", ")));
    }
    if is_text(&t) {
        return None;
    }
    let of_type = sigs.formats().iter().filter(|f| lists(f) && !f.signature_ids.is_empty()).count();
    let bytes = text.map(|k| format!(" (the bytes are {k} text)")).unwrap_or_default();
    (of_type > 0).then(|| {
        format!("declared {t}; none of the {of_type} PRONOM formats of that type with a signature matches{bytes}")
    })
}

/// A run's identification results, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Payloads identified.
    pub payloads: u64,
    /// Payloads that matched no signature and are not text.
    pub unidentified: u64,
    /// Payloads that matched no signature and are plain text by their characters.
    pub text: u64,
    /// Payloads several formats survived for.
    pub several: u64,
    /// Payloads whose bytes contradict the declared type.
    pub contradicted: u64,
    /// Payloads by PUID (each match counted).
    pub by_puid: BTreeMap<String, u64>,
}

impl Tally {
    /// Counts one result.
    pub(crate) fn add(&mut self, id: &Identification) {
        self.payloads += 1;
        self.unidentified += u64::from(id.matches.is_empty());
        self.text += u64::from(id.text.is_some());
        self.several += u64::from(id.matches.len() > 1);
        self.contradicted += u64::from(id.contradiction.is_some());
        for m in &id.matches {
            if let Some(p) = &m.pronom {
                *self.by_puid.entry(p.clone()).or_default() += 1;
            }
        }
    }

    /// Adds another run's counts.
    pub(crate) fn merge(&mut self, other: &Tally) {
        self.payloads += other.payloads;
        self.unidentified += other.unidentified;
        self.text += other.text;
        self.several += other.several;
        self.contradicted += other.contradicted;
        for (p, n) in &other.by_puid {
            *self.by_puid.entry(p.clone()).or_default() += n;
        }
    }

    /// The event's outcome detail: counts, then the most frequent formats.
    pub(crate) fn summary(&self) -> String {
        let mut top: Vec<(&String, &u64)> = self.by_puid.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let shown: Vec<String> = top.iter().take(10).map(|(p, n)| format!("{p}: {n}")).collect();
        format!(
            "{} payload(s) identified: {} matched no signature and are not text, {} matched no signature and are plain text by their characters, {} matched several formats, {} contradict the type the harvest declared{}{}",
            self.payloads,
            self.unidentified,
            self.text,
            self.several,
            self.contradicted,
            if shown.is_empty() { "" } else { "; " },
            shown.join(", ")
        )
    }
}

/// The pipeline stage: every payload of a batch identified (in parallel), from the bytes held
/// when they are, else streamed from the source (only windows kept), and counted. Items with
/// no payload of their own, and records that are no capture (`warcinfo`, `metadata`,
/// `request`, `revisit`), are left alone.
pub(crate) struct IdentifyStage {
    identifier: Identifier,
    /// What this stage identified so far.
    pub tally: Tally,
}

impl IdentifyStage {
    pub(crate) fn new(identifier: Identifier) -> IdentifyStage {
        IdentifyStage { identifier, tally: Tally::default() }
    }

    /// The identifier it runs.
    pub(crate) fn identifier(&self) -> Identifier {
        self.identifier
    }
}

impl Stage for IdentifyStage {
    fn run(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError> {
        let identifier = self.identifier;
        let results: Vec<Result<Option<Identification>, StageError>> =
            batch.par_iter().map(|s| identify_staged(&identifier, s)).collect();
        for (s, r) in batch.iter_mut().zip(results) {
            s.identification = r?;
            if let Some(id) = &s.identification {
                self.tally.add(id);
            }
        }
        Ok(())
    }
}

/// The declared type of an item's payload, when it is one identification looks at: a capture,
/// or a `response` or `resource` record with a payload.
fn declared_type(item: &Item) -> Option<String> {
    let capture = |t: &str| t == "response" || t == "resource";
    match item {
        _ if item.payload_len() == 0 => None,
        Item::Capture(c) => Some(c.payload_mime()),
        Item::Stored(r) if capture(&r.warc_type) => r.file.content.as_ref().map(|c| c.mime.clone()),
        Item::Mapped(m) if capture(&m.mapped.spec.warc_type) => Some(m.mapped.payload_mime.clone()),
        _ => None,
    }
}

/// One item's identification, from its held bytes, its record in memory or its stream.
fn identify_staged(i: &Identifier, s: &StagedItem) -> Result<Option<Identification>, StageError> {
    let Some(declared) = declared_type(&s.item) else { return Ok(None) };
    let in_memory = match &s.item {
        Item::Mapped(m) => s.held.as_deref().or_else(|| m.payload_bytes()),
        _ => s.held.as_deref(),
    };
    if let Some(bytes) = in_memory {
        return Ok(Some(i.identify_bytes(&declared, bytes)));
    }
    let io = |source| StageError::Io { path: s.item.origin(), source };
    let Some(r) = s.item.open_payload().map_err(io)? else { return Ok(None) };
    i.identify_reader(&declared, r).map(Some).map_err(io)
}

/// Records what identification found of a record's payload (`id`) in its METS description
/// (`mode`): on its payload, on its bytestream object when it is described anyway, and, where
/// the mode or a contradiction calls for it, by describing it (as `oid`, with no events of its
/// own).
pub(crate) fn record_identified(
    mut rf: crate::model::RecordFile,
    oid: impl FnOnce(&crate::model::RecordFile) -> String,
    id: Option<Identification>,
    mode: IdentifyMode,
) -> crate::model::RecordFile {
    use crate::model::{DescribedBytestream, PremisObject};
    let Some(id) = id else { return rf };
    let describe = mode == IdentifyMode::All || id.contradiction.is_some();
    let object_id = match (&rf.described, describe && mode != IdentifyMode::None) {
        (None, true) => Some(oid(&rf)),
        _ => None,
    };
    let Some(content) = rf.content.as_mut() else { return rf };
    content.identification = Some(id.clone());
    match (rf.described.as_mut(), object_id) {
        (Some(d), _) => d.object.identification = Some(id),
        (None, Some(object_id)) => {
            let object = PremisObject {
                id_type: "local".into(),
                id: object_id,
                size: content.range.len,
                sha512: content.sha512.clone(),
                format: Format { name: content.mime.clone(), version: None, pronom: None },
                identification: Some(id),
                original_name: rf.capture.as_ref().map(|c| c.uri.clone()),
                significant_properties: vec![],
                relationships: vec![],
                events: vec![],
            };
            rf.described = Some(DescribedBytestream { object, events: vec![] });
        }
        (None, None) => {}
    }
    rf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identifier() -> Identifier {
        Identifier::shipped().unwrap()
    }

    const GIF: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";

    #[test]
    fn a_gif_declared_as_a_gif_is_identified_and_not_contradicted() {
        let id = identifier().identify_bytes("image/gif", GIF);
        assert_eq!(id.matches.len(), 1, "{id:?}");
        assert_eq!(id.matches[0].pronom.as_deref(), Some("fmt/4"));
        assert_eq!(id.contradiction, None);
        assert!(id.method.contains("DROID signature file V"), "{}", id.method);
    }

    #[test]
    fn a_gif_declared_as_a_jpeg_contradicts_it() {
        let id = identifier().identify_bytes("image/JPEG; charset=x", GIF);
        let c = id.contradiction.unwrap();
        assert!(
            c.starts_with(
                "declared image/jpeg; the bytes match fmt/4 (Graphics Interchange Format)"
            ),
            "{c}"
        );
    }

    #[test]
    fn plain_text_declared_as_a_jpeg_is_text_by_its_characters_and_contradicts_it() {
        // What a 2004 ARC holds for 189 redacted payloads declared image/jpeg.
        let id = identifier().identify_bytes("image/jpeg", b"This file has been removed.\n");
        assert_eq!(id.matches.len(), 1, "{id:?}");
        assert_eq!(id.matches[0].pronom.as_deref(), Some("x-fmt/111"));
        assert_eq!(id.text, Some(TextKind::Ascii));
        let c = id.contradiction.unwrap();
        assert!(c.starts_with("declared image/jpeg; none of the "), "{c}");
        assert!(c.ends_with("(the bytes are ASCII text)"), "{c}");
    }

    #[test]
    fn bytes_that_are_neither_a_format_nor_text_match_nothing() {
        let id = identifier().identify_bytes("image/jpeg", b"\x00\x01\x02 not text");
        assert!(id.matches.is_empty() && id.text.is_none(), "{id:?}");
        assert!(id.contradiction.unwrap().starts_with("declared image/jpeg; none of the "));
        // A signature match is never second-guessed by the characters: HTML is ASCII too.
        let page = b"<!DOCTYPE html><html><head><title>x</title></head></html>";
        let id = identifier().identify_bytes("text/html", page);
        assert!(id.text.is_none() && !id.matches.is_empty(), "{id:?}");
    }

    #[test]
    fn text_and_generic_types_are_not_contradicted_by_no_match() {
        let i = identifier();
        for t in
            ["text/html", "text/plain", "application/javascript", "application/octet-stream", ""]
        {
            assert_eq!(i.identify_bytes(t, b"hello").contradiction, None, "{t}");
        }
        // HTML served as XHTML matches HTML's signatures: the same kind of payload.
        let page = b"<!DOCTYPE html><html><head><title>x</title></head></html>";
        let id = i.identify_bytes("application/xhtml+xml", page);
        assert!(!id.matches.is_empty());
        assert_eq!(id.contradiction, None, "{id:?}");
    }

    #[test]
    fn a_streamed_payload_gets_what_the_same_bytes_in_memory_get() {
        let i = identifier();
        let mut big = GIF.to_vec();
        big.resize(3 << 20, 0);
        big.extend_from_slice(b"\x00;");
        let held = i.identify_bytes("image/gif", &big);
        let streamed = i.identify_reader("image/gif", &big[..]).unwrap();
        assert_eq!(held, streamed);
    }

    fn record(id: &str) -> crate::model::RecordFile {
        use crate::model::{ByteRange, ContentFile, RecordFile, UrlCapture};
        RecordFile {
            refers: None,
            record_id: id.into(),
            member: ByteRange { begin: 0, len: 10 },
            compressed: true,
            content: Some(ContentFile {
                range: ByteRange { begin: 5, len: 28 },
                sha512: "ab".into(),
                mime: "image/jpeg".into(),
                identification: None,
            }),
            described: None,
            page: None,
            capture: Some(UrlCapture {
                uri: "http://e.org/a.jpg".into(),
                date: "2004-01-01T00:00:00Z".into(),
                date_inferred: false,
            }),
        }
    }

    #[test]
    fn what_each_mode_records_of_a_record() {
        let i = identifier();
        let oid = |r: &crate::model::RecordFile| format!("c#{}", r.record_id);
        let redacted = || Some(i.identify_bytes("image/jpeg", b"This file has been removed.\n"));
        let gif = || Some(i.identify_bytes("image/gif", GIF));
        // A contradiction is a reason to describe (P4.7), with both types and no events.
        let r = record_identified(record("r1"), oid, redacted(), IdentifyMode::Described);
        let d = r.described.expect("described for its contradiction");
        assert_eq!(d.object.id, "c#r1");
        assert_eq!(d.object.original_name.as_deref(), Some("http://e.org/a.jpg"));
        assert_eq!(d.object.format.name, "image/jpeg");
        assert!(d.object.identification.unwrap().contradiction.is_some());
        assert!(d.events.is_empty() && d.object.events.is_empty());
        // Nothing to say: not described by default; described with its PUID under `all`.
        let r = record_identified(record("r2"), oid, gif(), IdentifyMode::Described);
        assert!(r.described.is_none());
        assert!(r.content.unwrap().identification.is_some(), "kept for a later description");
        let r = record_identified(record("r3"), oid, gif(), IdentifyMode::All);
        let puid = r.described.unwrap().object.identification.unwrap().matches[0].pronom.clone();
        assert_eq!(puid.as_deref(), Some("fmt/4"));
        // Described for another reason: the identification joins that description.
        let mut described = record_identified(record("r4"), oid, gif(), IdentifyMode::All);
        described.described.as_mut().unwrap().object.id = "other".into();
        let r = record_identified(described, oid, redacted(), IdentifyMode::Described);
        let o = r.described.unwrap().object;
        assert_eq!(o.id, "other");
        assert_eq!(o.identification.unwrap().text, Some(TextKind::Ascii));
        // Not identified: left as it is.
        assert_eq!(record_identified(record("r5"), oid, None, IdentifyMode::All), record("r5"));
    }

    #[test]
    fn the_tally_counts_and_summarises() {
        let i = identifier();
        let mut t = Tally::default();
        t.add(&i.identify_bytes("image/gif", GIF));
        t.add(&i.identify_bytes("image/jpeg", b"removed"));
        t.add(&i.identify_bytes("image/jpeg", b"\x00removed"));
        let mut u = Tally::default();
        u.merge(&t);
        assert_eq!((u.payloads, u.unidentified, u.text, u.contradicted), (3, 1, 1, 2));
        assert_eq!(
            u.summary(),
            "3 payload(s) identified: 1 matched no signature and are not text, 1 matched no signature and are plain text by their characters, 0 matched several formats, 2 contradict the type the harvest declared; fmt/4: 1, x-fmt/111: 1"
        );
    }
}
