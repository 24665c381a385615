//! The package model: plain data for what a package contains, independent of XML.
//!
//! A [`PackageHeader`] carries what is said once (identifier, type, description, rights,
//! agents). Containers, their records and the bytestreams inside them are handed to the METS
//! writer one at a time ([`PackageFile`], [`RecordFile`]), so a package of ten million records
//! never has to be held in memory. Preservation metadata follows PREMIS 3: [`PremisObject`],
//! [`Event`], [`Agent`], [`Relationship`].

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

pub(crate) mod entities;
pub use entities::{EntitiesError, PageProblem, TitleSource};

/// Submission or archival package (P1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PackageType {
    /// A standardized submission information package.
    #[serde(rename = "sSIP")]
    Ssip,
    /// An archival information package.
    #[serde(rename = "AIP")]
    Aip,
}

impl PackageType {
    /// The value of the METS root `TYPE` attribute.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PackageType::Ssip => "sSIP",
            PackageType::Aip => "AIP",
        }
    }
}

/// What the package as a whole says: written once, at the top of the METS.
#[derive(Debug, Clone)]
pub struct PackageHeader {
    /// The package identifier (METS `OBJID`), e.g. `urn:uuid:...`.
    pub objid: String,
    /// sSIP or AIP.
    pub package_type: PackageType,
    /// A human label (METS `LABEL`).
    pub label: String,
    /// When the METS was made.
    pub created: DateTime<Utc>,
    /// The organisation responsible for the package.
    pub organisation: Organisation,
    /// Descriptive metadata of the website (P3).
    pub description: Description,
    /// Rights (P3.3).
    pub rights: Rights,
    /// Every agent the events refer to, written once (P5.9).
    pub agents: Vec<Agent>,
}

/// The organisation that makes or holds the package.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Organisation {
    /// Its name.
    pub name: String,
    /// A short code (ISIL or repository code), used as its agent identifier.
    pub code: String,
}

/// The fifteen Dublin Core elements; only these may appear in the DC section.
pub const DC_ELEMENTS: [&str; 15] = [
    "title",
    "creator",
    "subject",
    "description",
    "publisher",
    "contributor",
    "date",
    "type",
    "format",
    "identifier",
    "source",
    "language",
    "relation",
    "coverage",
    "rights",
];

/// Descriptive metadata of the website (one target instance), mapped to MODS and DC (P3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Description {
    /// Title of the website.
    pub title: String,
    /// Free-text description.
    pub description: Option<String>,
    /// Subject terms.
    pub subjects: Vec<String>,
    /// Creator (person or body responsible for the site).
    pub creator: Option<String>,
    /// Publisher.
    pub publisher: Option<String>,
    /// The website's URLs (seeds, target URLs).
    pub urls: Vec<String>,
    /// Language codes (ISO 639-2/B in MODS, as given in DC).
    pub languages: Vec<String>,
    /// When the harvest began.
    pub capture_start: Option<DateTime<Utc>>,
    /// When the harvest ended.
    pub capture_end: Option<DateTime<Utc>>,
    /// DC-only elements with broad meaning (P3.2): `source`, `relation`, `coverage`, ...
    pub dc_only: Vec<(String, String)>,
}

/// Public access to the harvested website.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "access", content = "until")]
pub enum Access {
    /// Public access allowed.
    Open,
    /// Access restricted (e.g. reading room only).
    Restricted,
    /// No public access until the date.
    Embargoed(NaiveDate),
}

/// The rights record (P3.3), written in the project's own extension schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rights {
    /// Public access.
    pub access: Access,
    /// Free-text rights statement.
    pub statement: String,
}

/// A PREMIS agent (P5.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Identifier type (`local`, `repository code`, ...).
    pub id_type: String,
    /// Identifier value, referenced by events.
    pub id: String,
    /// Name.
    pub name: String,
    /// `software`, `organization` or `person`.
    pub agent_type: String,
    /// Version (software: engine and signature database for a virus scanner).
    pub version: Option<String>,
    /// A note (e.g. a digest of a local signature database).
    pub note: Option<String>,
}

/// A PREMIS event (P5.3), linking the agents and objects it concerns by identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Identifier value (a UUID).
    pub id: String,
    /// The event type term, e.g. `virus check`.
    pub event_type: String,
    /// The event type's URI in the LoC vocabulary, where there is one.
    pub event_type_uri: Option<String>,
    /// When it happened.
    pub date_time: DateTime<Utc>,
    /// What was done, in words (`program="..."; version="..."`).
    pub detail: Option<String>,
    /// The outcome, from the profile's vocabulary.
    pub outcome: String,
    /// More about the outcome (e.g. the signature found).
    pub outcome_detail: Option<String>,
    /// Agents by identifier (type, value) with their role.
    pub agents: Vec<(String, String, String)>,
    /// Objects by identifier (type, value) with their role (`source`, `outcome`).
    pub objects: Vec<(String, String, String)>,
}

/// A PREMIS relationship from one object to another (P5.6, P5.7, P5.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relationship {
    /// `derivation`.
    pub relationship_type: String,
    /// `migration`, `transformation`, `cleanedFile`.
    pub subtype: String,
    /// The related object (identifier type, value).
    pub related_object: (String, String),
    /// The event that made the relationship.
    pub related_event: Option<String>,
}

/// A format designation, with its PRONOM identifier where known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// Format name (a MIME type, or a registry name such as `WARC`).
    pub name: String,
    /// Format version.
    pub version: Option<String>,
    /// PRONOM identifier.
    pub pronom: Option<String>,
}

impl From<crate::formats::pronom::PronomFormat> for Format {
    fn from(f: crate::formats::pronom::PronomFormat) -> Self {
        Format {
            name: f.name.to_string(),
            version: (!f.version.is_empty()).then_some(f.version),
            pronom: f.puid.map(str::to_string),
        }
    }
}

impl Format {
    /// The WARC containers webaip writes (WARC 1.1, `fmt/1281`).
    pub fn written_warc() -> Format {
        let version = crate::formats::warc::header::WARC_VERSION.trim_start_matches("WARC/");
        crate::formats::pronom::warc(version).into()
    }
}

/// What PRONOM identification said of an object's bytes (issue 27). Written as PREMIS
/// `format` elements beside the declared one: each match with its PUID and the basis it rests
/// on, or a note that none matched, and the verdict on what the harvest declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identification {
    /// The formats the bytes match, as DROID's priorities leave them: several when several
    /// survive, none when no signature matches. When no signature matches and the first bytes
    /// are text, the web text type the content supports (`formats::webtext`): then `text` says
    /// which character class.
    pub matches: Vec<Format>,
    /// The text class the one match rests on, when it is a text type by its content and not
    /// by a signature (a judgement, recorded as one).
    pub text: Option<crate::formats::text::TextKind>,
    /// What every match rests on; `None` when nothing matched.
    pub basis: Option<IdentificationBasis>,
    /// The tool and signature file, e.g. `webaip 0.1.0, DROID signature file V122`.
    pub method: String,
    /// What the bytes say of the type the harvest declared.
    pub verdict: Verdict,
    /// For a payload sent with an HTTP `Content-Encoding`: how its content was reached
    /// ("identified after undoing its gzip Content-Encoding"), or why it was not.
    pub decoding: Option<String>,
    /// What limits the result, when something does: a search a bound cut short, a container
    /// not looked into or unreadable. The bytes rule none of the formats it names out.
    pub caveat: Option<String>,
}

impl Identification {
    /// The same result of a payload stored shorter than it was sent (`WARC-Truncated`,
    /// `reason`): its bytes end before the payload did, so what lies at its end (where
    /// end-anchored signatures look) was not seen, and the caveat says so.
    pub fn of_truncated_payload(mut self, reason: &str) -> Identification {
        let why = format!(
            "the record is truncated (WARC-Truncated: {reason}): the bytes identified end \
             before the payload sent did"
        );
        self.caveat = Some(match self.caveat.take() {
            Some(before) => format!("{before}; {why}"),
            None => why,
        });
        self
    }
}

/// What the matches of an identification rest on (written into PREMIS and the reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentificationBasis {
    /// DROID binary signatures.
    Signature,
    /// DROID container signatures (what a ZIP or OLE2 container holds).
    Container,
    /// The content read as text, no signature matching: which checks ran and what they saw.
    /// (No identification rests on a file name's extension: a payload has none, and a name
    /// says what someone called the bytes, not what they are.)
    Text(String),
}

impl std::fmt::Display for IdentificationBasis {
    /// `signature`, `container`, `text: <the checks>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdentificationBasis::Signature => f.write_str("signature"),
            IdentificationBasis::Container => f.write_str("container"),
            IdentificationBasis::Text(checks) => write!(f, "text: {checks}"),
        }
    }
}

/// What the bytes say of the type the harvest declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The bytes support it, or it claims nothing (`application/octet-stream`).
    Consistent,
    /// Nothing in the bytes supports it, and nothing rules it out (no signature matched, or a
    /// search stopped early): why.
    NotConfirmed(String),
    /// The bytes rule it out: why.
    Contradicted(String),
}

impl Verdict {
    /// Why the bytes rule the declared type out, when they do.
    pub fn contradiction(&self) -> Option<&str> {
        match self {
            Verdict::Contradicted(why) => Some(why),
            _ => None,
        }
    }

    /// Why the declared type is not confirmed, when it is not (and not ruled out either).
    pub fn not_confirmed(&self) -> Option<&str> {
        match self {
            Verdict::NotConfirmed(why) => Some(why),
            _ => None,
        }
    }
}

/// A PREMIS object (P5.1) for a container, a log file, a bytestream, or a file that is not in
/// the package but is described (the ARC a container was migrated from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PremisObject {
    /// Identifier type.
    pub id_type: String,
    /// Identifier value.
    pub id: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-512, lower-case hex (the same value as the METS `CHECKSUM`).
    pub sha512: String,
    /// SHA-256, lower-case hex: a second fixity, stated of the content containers webaip
    /// writes (hashed as they are written), what a WACZ states of each member.
    pub sha256: Option<String>,
    /// The format: the container format, or the type the harvest declared for a bytestream.
    pub format: Format,
    /// What PRONOM identification found in the bytes, when they were identified.
    pub identification: Option<Identification>,
    /// The harvested URL (bytestream), ARC name (migrated container) or log name.
    pub original_name: Option<String>,
    /// PREMIS significant properties as (type, value): a container states how many WARC
    /// records it holds ([`SIGNIFICANT_WARC_RECORDS`]), so an audit can count them.
    pub significant_properties: Vec<(String, String)>,
    /// Relationships to other objects.
    pub relationships: Vec<Relationship>,
    /// Events that concern the object, by identifier value.
    pub events: Vec<String>,
}

/// The significant-property type under which a container states its number of WARC records.
pub const SIGNIFICANT_WARC_RECORDS: &str = "WARC records";

/// File groups by purpose (P4.1); their names come from the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GroupUse {
    /// Everything needed to render the website.
    DigitalManifestation,
    /// Bytestreams that were transformed, kept as harvested.
    Original,
    /// Infected bytestreams, never shown to end users.
    ViralFiles,
    /// Crawl logs, error logs, crawler configuration.
    Logfile,
}

/// A byte range, `begin` inclusive, `len` bytes (METS `END` = begin + len - 1, P4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    /// Offset of the first byte.
    pub begin: u64,
    /// Number of bytes.
    pub len: u64,
}

impl ByteRange {
    /// The offset of the last byte (METS `END`), for a non-empty range.
    pub(crate) fn end_inclusive(&self) -> u64 {
        self.begin + self.len.saturating_sub(1)
    }
}

/// A file of the package: a WARC container or a log (P4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFile {
    /// Path relative to the package root (METS `FLocat`).
    pub path: String,
    /// MIME type (`application/warc` for containers).
    pub mime: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-512, hex.
    pub sha512: String,
    /// When the file was made.
    pub created: DateTime<Utc>,
    /// Its PREMIS object.
    pub object: PremisObject,
    /// Events recorded on it (virus check, migration), written once in its amdSec.
    pub events: Vec<Event>,
    /// Objects described alongside it that are not in the package (the source ARC).
    pub described_sources: Vec<PremisObject>,
}

/// One WARC record of a container, to be listed in the file section when there is a reason
/// (P4.7) or in full mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordFile {
    /// `WARC-Record-ID` (METS `OWNERID`).
    pub record_id: String,
    /// The record's gzip member in the container (or the record itself in an uncompressed
    /// container).
    pub member: ByteRange,
    /// True when the range is a gzip member (written with `transformFile` GZIP).
    pub compressed: bool,
    /// Its payload, if it has one (P4.6: an empty payload has no content file).
    pub content: Option<ContentFile>,
    /// Why it is described individually; `None` means only full mode lists it.
    pub described: Option<DescribedBytestream>,
    /// Where it appears in the logical structure.
    pub page: Option<PageRole>,
    /// The URL capture it holds, for records that are one (`response`, `resource`): what a
    /// described webpage or associated object ([`PageEntity`]) is matched against.
    pub capture: Option<UrlCapture>,
    /// For a revisit written by deduplication: where its payload is stored.
    pub refers: Option<Box<ReferencedPayload>>,
}

/// Where the payload of a revisit record written by deduplication is stored: what a listed
/// revisit's METS entry states (a PREMIS bitstream object with the container and byte ranges,
/// and its relationships to the package holding it and to the revisit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferencedPayload {
    /// The package holding it, by OBJID; `None`: this package (`--dedup-within`).
    pub package: Option<String>,
    /// Its container: the path inside that package (or the index's `filename`).
    pub container: String,
    /// The original record's `WARC-Record-ID`, when known.
    pub record_id: Option<String>,
    /// The original record's `WARC-Target-URI`.
    pub uri: String,
    /// The original record's `WARC-Date`.
    pub date: String,
    /// The original record in its container (its gzip member when compressed), when known.
    pub member: Option<ByteRange>,
    /// The payload inside the decompressed original record, when known.
    pub payload: Option<ByteRange>,
    /// The payload's SHA-1, lower-case hex (what the revisit's `WARC-Payload-Digest` states).
    pub sha1: String,
    /// The payload's length.
    pub len: u64,
    /// Its MIME type as the revisit's capture declared it.
    pub mime: String,
}

/// The URL a record captured, and when (its `WARC-Target-URI` and `WARC-Date`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlCapture {
    /// `WARC-Target-URI`, as written.
    pub uri: String,
    /// `WARC-Date`, as written (W3C date-time).
    pub date: String,
    /// True when the date is not the capture's own but inferred (`X-Webaip-Date-Source`, a
    /// mirror file dated by its crawl's start): a description then says so.
    pub date_inferred: bool,
}

/// A payload inside a decompressed record (P4.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentFile {
    /// Range inside the decompressed record.
    pub range: ByteRange,
    /// SHA-512, hex.
    pub sha512: String,
    /// MIME type as harvested.
    pub mime: String,
    /// What PRONOM identification found in it, when it was identified: a description of the
    /// payload ([`DescribedBytestream`]) records it.
    pub identification: Option<Identification>,
}

/// The preservation record of an individually described bytestream (viral, transformed,
/// cleaned, product of a changing migration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedBytestream {
    /// Its PREMIS object.
    pub object: PremisObject,
    /// Events that concern only it.
    pub events: Vec<Event>,
}

/// A webpage or associated object in the logical structure (P2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRole {
    /// `WEBPAGE` or `ASSOCIATEDOBJECT`.
    pub kind: PageKind,
    /// Its label (the URL).
    pub label: String,
}

/// The kinds of div below the website div.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageKind {
    /// A web page.
    Webpage,
    /// An associated object (image, stylesheet, ...).
    AssociatedObject,
}

/// A webpage or associated object described below the website (P1.3, P2.1): by a curator
/// (`[[page]]` in the metadata file) or made for a seed (`--describe-seeds`). It is matched
/// against the package's captures of its URL; the METS gets a div with its own MODS record
/// and a pointer to the capture's bytestream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageEntity {
    /// Webpage or associated object.
    pub kind: PageKind,
    /// The URL as harvested.
    pub url: String,
    /// Chooses among several captures of the URL: the closest one is described.
    pub captured: Option<DateTime<Utc>>,
    /// Title; `None`: the page's own HTML `<title>`, else none.
    pub title: Option<String>,
    /// Free-text description.
    pub description: Option<String>,
    /// Subject terms.
    pub subjects: Vec<String>,
    /// Person or body responsible for its content.
    pub creator: Option<String>,
    /// Its date (of publication or content), W3CDTF (`2024`, `2024-03`, `2024-03-15`).
    pub date: Option<String>,
    /// Language (ISO 639-2/B code).
    pub language: Option<String>,
    /// For an associated object: the URL of the page it belongs to.
    pub part_of: Option<String>,
    /// Who asked for it.
    pub origin: EntityOrigin,
}

impl PageEntity {
    /// A webpage at `url` with nothing said about it yet but who asks for it.
    pub fn webpage(url: impl Into<String>, origin: EntityOrigin) -> PageEntity {
        PageEntity {
            kind: PageKind::Webpage,
            url: url.into(),
            captured: None,
            title: None,
            description: None,
            subjects: vec![],
            creator: None,
            date: None,
            language: None,
            part_of: None,
            origin,
        }
    }
}

/// Why an entity is described.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntityOrigin {
    /// A `[[page]]` entry of the curator's metadata file.
    Curator,
    /// A seed URL, described by `--describe-seeds`.
    Seed,
}

/// How much of the record level the METS lists (P4.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SerializationMode {
    /// Only records and bytestreams with a reason to be described.
    Minimal,
    /// Every record and bytestream.
    Full,
}
