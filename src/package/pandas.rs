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

use chrono::SecondsFormat;

use super::captures::build_capture_package;
use super::{InstanceReport, MAX_EXAMPLES, PackageError, PackageOptions, PackageReport};
use crate::sources::capture::CaptureError;
use crate::sources::pandas::{Instance, InstanceCaptures};

/// Packages one PANDAS instance (or a mirror read into one) through the capture pipeline.
pub fn build_pandas_package(
    inst: &Instance,
    opts: &PackageOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PackageReport, PackageError> {
    let list = |e| PackageError::Capture(CaptureError::MirrorList(e));
    let mut source = InstanceCaptures::new(inst).map_err(list)?;
    let mut r = build_capture_package(&mut source, &inst.root, opts, progress)?;
    let (guessed_urls, _) = inst.files.guessed(MAX_EXAMPLES).map_err(list)?;
    let capture_from_cache = inst.files.from_cache_count().map_err(list)?;
    r.found = inst.found.clone();
    r.missing = inst.missing.clone();
    r.refused = inst.refused.listed().to_vec();
    r.refusals = inst.refused.count();
    r.instance = Some(InstanceReport {
        name: inst.name.clone(),
        pi: inst.pi.clone(),
        time: inst.time.to_rfc3339_opts(SecondsFormat::Secs, true),
        url_sources: inst.url_sources.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        guessed_urls,
        capture_from_cache,
    });
    Ok(r)
}
