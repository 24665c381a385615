//! What `webaip package` made: one report for every shape of source, printed by the CLI as
//! text or JSON. Parts that only some sources have are absent (JSON `null`, or no keys for
//! the capture counts) rather than zero, so a reader can tell "none" from "not applicable".

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::ScanSummary;
use crate::capture::Quirk;
use crate::migrate::report::FileReport;
use crate::stages::rewrite::RewriteSummary;

/// What a package run made, whatever the source.
#[derive(Debug, Clone, Serialize)]
pub struct PackageReport {
    /// The package directory.
    pub package: PathBuf,
    /// Its identifier (METS OBJID).
    pub objid: String,
    /// The source's shape: `heritrix1`, `heritrix3`, `file-list`, `archive-folder`, or the
    /// capture source's name (`pandas`, `httrack`, `wget`, `nedlib`, `kulturarw3`, ...).
    pub shape: String,
    /// What the source held.
    pub found: Vec<String>,
    /// What a source of its shape usually has but this one lacks.
    pub missing: Vec<String>,
    /// Entries of the source not packaged, and why (links, FIFOs, devices, over-long names,
    /// files over a bound): the first of them.
    pub refused: Vec<(String, String)>,
    /// How many entries were refused, listed or not.
    pub refusals: u64,
    /// The WARC containers written, with what each came from.
    pub containers: Vec<ContainerReport>,
    /// Sources that yield captures: what they yielded (absent for ARC and WARC files).
    #[serde(flatten)]
    pub captures: Option<CaptureCounts>,
    /// A PANDAS instance: what the instance said.
    pub instance: Option<InstanceReport>,
    /// Link rewriting, for sources whose files link by local paths (mirrors).
    pub rewrite: Option<RewriteSummary>,
    /// crawl.log against the records, when the source has a crawl.log.
    pub crawl_log: Option<CrawlLogComparison>,
    /// Log, configuration and other side files packaged under `logs/` (the package's own
    /// reports not counted).
    pub logs: u64,
    /// What the metadata lacked or what was taken from the source.
    pub metadata_notes: Vec<String>,
    /// The webpages and associated objects described.
    pub entities: crate::pages::EntitiesReport,
    /// How viruses were checked.
    pub virus_check: String,
    /// PRONOM identification of the payloads (absent with `--identify none`).
    pub identification: Option<IdentificationReport>,
    /// Virus scanning results.
    pub scan: ScanSummary,
    /// Seconds spent waiting for clamd's verdicts.
    pub scan_seconds: f64,
    /// Whether the METS was checked against the XML schemas too (it always passed the
    /// profile's own checks, or there would be no package).
    pub mets_xsd_checked: bool,
    /// Files in the package.
    pub files: u64,
    /// Bytes in the package.
    pub bytes: u64,
    /// Leftovers of earlier runs found beside the package, and what was done with them.
    pub leftovers: Vec<String>,
    /// Deduplication, when asked for (`--dedup-against`, `--dedup-within`).
    pub dedup: Option<DedupReport>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// What deduplication did in a package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DedupReport {
    /// Revisit records written in place of records whose payload is stored already.
    pub revisits: u64,
    /// Payload bytes not stored again.
    pub payload_bytes: u64,
    /// Bytes the containers are smaller by (records replaced less their revisits); `None`
    /// for captures, which are compressed as they are written: what a payload not written
    /// would have taken is never computed.
    pub bytes_saved: Option<u64>,
    /// The earlier packages referred to, by OBJID.
    pub depends_on: Vec<String>,
}

impl PackageReport {
    /// Whether the run has findings a curator has to look at, so that the command exits with
    /// status 1 although a package was made: a payload not scanned, an entry of the source
    /// left out, or a copied WARC record `audit --deep` would reject.
    pub fn has_findings(&self) -> bool {
        self.scan.not_scanned > 0
            || self.refusals > 0
            || !self.refused.is_empty()
            || self.containers.iter().any(|c| c.warc_findings > 0)
    }
}

/// What PRONOM identification found in a package's payloads (its event says the same).
#[derive(Debug, Clone, Serialize)]
pub struct IdentificationReport {
    /// The tool and signature file.
    pub method: String,
    /// The counts in a sentence, as the event's outcome detail.
    pub summary: String,
    /// The counts: payloads, unidentified, several matches, contradictions, by PUID.
    #[serde(flatten)]
    pub tally: crate::stages::identify::Tally,
}

/// What a source of captures yielded.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CaptureCounts {
    /// Captures packaged.
    pub captures: u64,
    /// WARC records written (warcinfo, captures, their metadata records).
    pub records: u64,
    /// Bytes of payload read from the source.
    pub payload_bytes: u64,
    /// Quirks by kind (every one met, those only counted included).
    pub quirk_counts: BTreeMap<String, u64>,
    /// The first quirks, with file and line or offset (the package's quirks log has the
    /// first [`super::captures::QUIRKS_KEPT`]).
    pub quirks: Vec<Quirk>,
    /// Quirks only counted: met past the number a source keeps.
    pub quirks_dropped: u64,
}

/// What a PANDAS instance (or a mirror read as one) said about itself.
#[derive(Debug, Clone, Serialize)]
pub struct InstanceReport {
    /// The instance directory name.
    pub name: String,
    /// PANDAS title number.
    pub pi: Option<String>,
    /// Instance time in UTC.
    pub time: String,
    /// Files per source of their original URL.
    pub url_sources: BTreeMap<String, u64>,
    /// Files whose URL is a guess (from the layout), with their URL.
    pub guessed_urls: Vec<(String, String)>,
    /// Files whose capture time came from the cache (the rest: the instance time).
    pub capture_from_cache: u64,
}

/// One container of the package.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerReport {
    /// The ARC or WARC it came from (control characters and bytes that are not UTF-8 escaped).
    pub input: String,
    /// Its path in the package.
    pub path: String,
    /// Migrated (ARC) or copied (WARC).
    pub action: String,
    /// Records in the container.
    pub records: u64,
    /// Records listed in the METS.
    pub listed: u64,
    /// The migration report (ARC inputs).
    pub migration: Option<FileReport>,
    /// Records of a copied WARC that `audit --deep` would reject: a WARC-Block-Digest or
    /// WARC-Payload-Digest that does not match the bytes, or a block not followed by CRLF CRLF.
    pub warc_findings: u64,
    /// The first of them, with the record and its offset.
    pub warc_finding_examples: Vec<WarcFinding>,
    /// Bytes read from the input (a copied WARC is read once: its size).
    pub bytes_read: Option<u64>,
}

/// A record of a copied WARC that does not agree with its own header.
#[derive(Debug, Clone, Serialize)]
pub struct WarcFinding {
    /// Offset of the record (of its gzip member) in the file.
    pub offset: u64,
    /// Its WARC-Record-ID.
    pub record_id: String,
    /// What is wrong, in the words `audit --deep` uses.
    pub message: String,
}

impl std::fmt::Display for WarcFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "record {} at offset {}: {}", self.record_id, self.offset, self.message)
    }
}

/// crawl.log against the records.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CrawlLogComparison {
    /// Lines in the log.
    pub lines: u64,
    /// Lines that did not parse.
    pub unparsed: u64,
    /// Distinct URIs the log says were fetched.
    pub fetched: u64,
    /// Fetched according to the log, but no record holds them.
    pub fetched_without_record: u64,
    /// Examples.
    pub fetched_without_record_examples: Vec<String>,
    /// Records whose URI the log does not list as fetched.
    pub records_without_log_line: u64,
    /// Examples.
    pub records_without_log_line_examples: Vec<String>,
}
