//! One item packaged by the [`Packager`] `webaip package` uses, with the item's own metadata
//! and options (the manifest's option words set the same [`PackageOptions`] as the flags).

use std::path::Path;

use crate::api::{Packager, PackagerError};
use crate::metadata::{CuratorMetadata, MetadataError};
use crate::model::SerializationMode;
use crate::package::{PackageError, PackageOptions, PackageReport};
use crate::sources::SourceError;
use crate::sources::nedlib::NedlibDate;
use crate::sources::open::OpenError;
use crate::sources::pandas::Zone;
use crate::stages::identify::IdentifyMode;

/// An option of the manifest's options column that is not one.
#[derive(Debug, thiserror::Error)]
#[error(
    "option {0:?}: not one of describe-seeds, mode=minimal|full, timezone=ZONE, url-prefix=URL, \
     capture-date=DATE, nedlib-date=server|folder, identify=none|described|all"
)]
pub struct BadOption(pub String);

/// `opts` with an item's options applied: whitespace-separated `name` or `name=value`, with
/// the names of `webaip package`'s flags (`describe-seeds`, `mode=full`,
/// `timezone=Australia/Sydney`, ...); a leading `--` is allowed.
pub fn with_item_options(
    opts: &PackageOptions,
    options: &str,
) -> Result<PackageOptions, BadOption> {
    let mut o = opts.clone();
    for word in options.split_whitespace() {
        let option = word.strip_prefix("--").unwrap_or(word);
        let (name, value) = match option.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (option, None),
        };
        apply_option(&mut o, name, value).ok_or_else(|| BadOption(word.to_string()))?;
    }
    Ok(o)
}

/// Sets one option; `None` when it is none `package` takes in a manifest.
fn apply_option(o: &mut PackageOptions, name: &str, value: Option<&str>) -> Option<()> {
    match (name, value) {
        ("describe-seeds", None) => o.describe_seeds = true,
        ("mode", Some("full")) => o.mode = SerializationMode::Full,
        ("mode", Some("minimal")) => o.mode = SerializationMode::Minimal,
        ("timezone", Some(z)) => o.reading.zone = Zone::parse(z).ok()?,
        ("url-prefix", Some(u)) => o.reading.url_prefix = Some(u.to_string()),
        ("capture-date", Some(d)) => {
            o.capture_date = Some(crate::metadata::parse_capture_date(d).ok()?)
        }
        ("nedlib-date", Some("server")) => o.reading.nedlib_date = NedlibDate::ServerDate,
        ("nedlib-date", Some("folder")) => o.reading.nedlib_date = NedlibDate::FolderDate,
        ("identify", Some("none")) => o.identify = IdentifyMode::None,
        ("identify", Some("described")) => o.identify = IdentifyMode::Described,
        ("identify", Some("all")) => o.identify = IdentifyMode::All,
        _ => return None,
    }
    Some(())
}

/// Why an item could not be packaged.
#[derive(Debug, thiserror::Error)]
pub enum ItemError {
    /// The curator metadata file cannot be used.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// The options column holds an unknown option.
    #[error(transparent)]
    Option(#[from] BadOption),
    /// The source could not be packaged.
    #[error(transparent)]
    Packager(#[from] PackagerError),
}

/// The kind of failure of an item that failed for want of disk space, a quota or memory on
/// this machine (see `layout::is_environment`): nothing is said of its source, and a rerun
/// retries it without `--retry-failed`.
pub const ENVIRONMENT_KIND: &str = "environment";

/// `kind`, unless `error` or one of its causes is the environment's ([`ENVIRONMENT_KIND`]).
pub fn failure_kind<'a>(kind: &'a str, error: &(dyn std::error::Error + 'static)) -> &'a str {
    match crate::layout::environment_cause(error) {
        Some(_) => ENVIRONMENT_KIND,
        None => kind,
    }
}

impl ItemError {
    /// The kind of failure the journal records: environment, unrecognised, unreadable,
    /// damaged, metadata, options, exists or package.
    pub fn kind(&self) -> &'static str {
        failure_kind(self.input_kind(), self)
    }

    /// The kind of failure as a verdict on the input, its causes unlooked at.
    fn input_kind(&self) -> &'static str {
        match self {
            ItemError::Metadata(_) => "metadata",
            ItemError::Option(_) => "options",
            ItemError::Packager(p) => packager_kind(p),
        }
    }
}

/// The kind of a packaging failure: what it says of the source.
fn packager_kind(e: &PackagerError) -> &'static str {
    match e {
        PackagerError::Open(OpenError::Source(SourceError::Io { .. }))
        | PackagerError::Open(OpenError::UnzipDir { .. }) => "unreadable",
        PackagerError::Open(OpenError::Source(_)) | PackagerError::Title { .. } => "unrecognised",
        PackagerError::Open(OpenError::Unzip(_) | OpenError::Mirror(_))
        | PackagerError::Pandas(_)
        | PackagerError::Capture(_) => "damaged",
        PackagerError::Package(p) => package_kind(p),
        _ => "package",
    }
}

/// The kind of a failure of the package's making.
fn package_kind(e: &PackageError) -> &'static str {
    match e {
        PackageError::Exists(_) => "exists",
        PackageError::Metadata(_) => "metadata",
        PackageError::Migration { .. }
        | PackageError::Warc { .. }
        | PackageError::Capture(_)
        | PackageError::NoCaptures { .. }
        | PackageError::Changed { .. }
        | PackageError::PayloadChanged { .. } => "damaged",
        PackageError::Io { .. } => "unreadable",
        _ => "package",
    }
}

/// Packages `source` into `opts.out` as `webaip package SOURCE` would, with the curator
/// metadata of `metadata`; a mirror's `.zip` is unpacked in a temporary folder below `work`.
pub fn package_source(
    source: &Path,
    metadata: Option<&Path>,
    opts: &PackageOptions,
    work: &Path,
) -> Result<PackageReport, ItemError> {
    let metadata = match metadata {
        Some(p) => CuratorMetadata::load(p)?,
        None => CuratorMetadata::default(),
    };
    let options = opts.clone().metadata(metadata);
    Ok(Packager::new(source).options(options).unzip_in(work).run()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_package_flags_by_name() {
        let base = PackageOptions::default();
        let o = with_item_options(&base, "--describe-seeds mode=full timezone=+10:00").unwrap();
        assert!(o.describe_seeds);
        assert_eq!(o.mode, SerializationMode::Full);
        assert!(matches!(o.reading.zone, Zone::Fixed(_)));
        let o =
            with_item_options(&base, "nedlib-date=folder url-prefix=http://a.example/").unwrap();
        assert_eq!(o.reading.nedlib_date, NedlibDate::FolderDate);
        assert_eq!(o.reading.url_prefix.as_deref(), Some("http://a.example/"));
        for bad in ["mode=huge", "force", "timezone=Mars/Base", "describe-seeds=1"] {
            let e = with_item_options(&base, bad).unwrap_err();
            assert_eq!(e.0, bad);
        }
    }
}
