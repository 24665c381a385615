//! A PANDAS instance, or any website mirror, becomes a package (P7, P5.7), through the
//! capture pipeline ([`super::captures`]; the source is [`InstanceCaptures`]).
//!
//! Each mirror file becomes a `resource` record at its recovered original URL in a `content/`
//! container, followed by a `metadata` record (`WARC-Concurrent-To` the resource) keeping the
//! mirror path, where the URL came from and the cached HTTP header block. HTML and CSS links
//! are rewritten (`crate::stages::rewrite::RewriteStage`); a file that changed goes, byte-exact as
//! harvested, into a container in `original/` (file group `Original`), and the new bytestream
//! gets a transformation event and a `derivation/transformation` relationship to its original.
//! Files that needed no change are not duplicated.

use std::collections::BTreeMap;

use chrono::SecondsFormat;
use serde::Serialize;

use super::captures::build_capture_package;
use super::{MAX_EXAMPLES, PackageError, PackageOptions};
use crate::sources::capture::CaptureError;
use crate::sources::pandas::{Instance, InstanceCaptures};

/// What packaging a PANDAS instance did.
#[derive(Debug, Clone, Serialize)]
pub struct PandasReport {
    /// The package directory.
    pub package: std::path::PathBuf,
    /// Its identifier.
    pub objid: String,
    /// The instance directory name, title number and time (UTC).
    pub instance: String,
    /// PANDAS title number.
    pub pi: Option<String>,
    /// Instance time in UTC.
    pub instance_time: String,
    /// What was found.
    pub found: Vec<String>,
    /// What was not.
    pub missing: Vec<String>,
    /// Mirror files packaged.
    pub files: u64,
    /// Files per URL source.
    pub url_sources: BTreeMap<String, u64>,
    /// Files whose URL is a guess (from the layout), with their URL.
    pub guessed_urls: Vec<(String, String)>,
    /// Files whose capture time came from the cache (the rest: the instance time).
    pub capture_from_cache: u64,
    /// Files rewritten (kept as originals too).
    pub transformed: u64,
    /// Links rewritten to files of the mirror.
    pub links_to_mirror: u64,
    /// Relative links to things outside the mirror, made absolute.
    pub links_to_outside: u64,
    /// Files that could not be rewritten, and why (kept as harvested): the first hundred.
    pub not_rewritten: Vec<(String, String)>,
    /// How many files could not be rewritten.
    pub not_rewritten_count: u64,
    /// Files refused, and why (the first 10,000).
    pub refused: Vec<(String, String)>,
    /// How many files were refused, listed or not.
    pub refusals: u64,
    /// Other files of the instance (cache, logs, HTTrack artefacts) packaged in `logs/`.
    pub logs: u64,
    /// What the metadata lacked.
    pub metadata_notes: Vec<String>,
    /// How viruses were checked.
    pub virus_check: String,
    /// Virus scanning results.
    pub scan: super::ScanSummary,
    /// Whether the METS was also checked against the XML schemas.
    pub mets_xsd_checked: bool,
    /// Files and bytes in the package.
    pub package_files: u64,
    /// Leftovers of earlier runs found beside the package, and what was done with them.
    pub leftovers: Vec<String>,
    /// The webpages and associated objects described.
    pub entities: crate::pages::EntitiesReport,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Packages one PANDAS instance (or a mirror read into one) through the capture pipeline.
pub fn build_pandas_package(
    inst: &Instance,
    opts: &PackageOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PandasReport, PackageError> {
    let list = |e| PackageError::Capture(CaptureError::MirrorList(e));
    let mut source = InstanceCaptures::new(inst).map_err(list)?;
    let r = build_capture_package(&mut source, &inst.root, opts, progress)?;
    let rewrite = r.rewrite.unwrap_or_default();
    let (guessed, _) = inst.files.guessed(MAX_EXAMPLES).map_err(list)?;
    let capture_from_cache = inst.files.from_cache_count().map_err(list)?;
    Ok(PandasReport {
        package: r.package,
        objid: r.objid,
        instance: inst.name.clone(),
        pi: inst.pi.clone(),
        instance_time: inst.time.to_rfc3339_opts(SecondsFormat::Secs, true),
        found: inst.found.clone(),
        missing: inst.missing.clone(),
        files: r.captures,
        url_sources: inst.url_sources.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        guessed_urls: guessed,
        capture_from_cache,
        transformed: rewrite.transformed,
        links_to_mirror: rewrite.links_to_mirror,
        links_to_outside: rewrite.links_to_outside,
        not_rewritten: rewrite.not_rewritten,
        not_rewritten_count: rewrite.not_rewritten_count,
        refused: inst.refused.listed().to_vec(),
        refusals: inst.refused.count(),
        logs: r.side_files,
        metadata_notes: r.metadata_notes,
        virus_check: r.virus_check,
        scan: r.scan,
        mets_xsd_checked: r.mets_xsd_checked,
        package_files: r.package_files,
        leftovers: r.leftovers,
        entities: r.entities,
        seconds: r.seconds,
    })
}
