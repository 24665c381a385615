//! One item packaged: its source recognised as `webaip package` recognises it
//! (`sources::detect`), then built by the same library function `package` calls for that
//! shape, with the item's own metadata and options.

use std::path::{Path, PathBuf};

use crate::metadata::{CuratorMetadata, MetadataError};
use crate::model::SerializationMode;
use crate::package::captures::build_capture_package;
use crate::package::pandas::build_pandas_package;
use crate::package::{PackageError, PackageOptions, PackageReport, build_package};
use crate::sources::capture::CaptureError;
use crate::sources::mirror::{self, MirrorError, MirrorOptions};
use crate::sources::nedlib::{NedlibDate, NedlibOptions};
use crate::sources::pandas::{self, PandasError, Zone};
use crate::sources::{Input, SourceError, detect};
use crate::stages::identify::IdentifyMode;

/// What `package` takes per source beyond [`PackageOptions`]: the run's defaults, which an
/// item's options column may change.
#[derive(Debug, Clone)]
pub struct ItemSettings {
    /// Time zone of PANDAS instance names and HTTrack log times.
    pub zone: Zone,
    /// A mirror's site URL when it has no log that says it.
    pub url_prefix: Option<String>,
    /// The date of NEDLIB records.
    pub nedlib_date: NedlibDate,
    /// How much a mirror's `.zip` may unpack to, per byte of zip.
    pub max_zip_expansion: u64,
    /// Serialization mode, when not the profile's.
    pub mode: Option<SerializationMode>,
    /// Describe every seed URL as a webpage.
    pub describe_seeds: bool,
    /// The capture date of what nothing else dates.
    pub capture_date: Option<chrono::DateTime<chrono::Utc>>,
    /// PRONOM identification.
    pub identify: IdentifyMode,
}

impl Default for ItemSettings {
    fn default() -> Self {
        ItemSettings {
            zone: Zone::Utc,
            url_prefix: None,
            nedlib_date: NedlibDate::ServerDate,
            max_zip_expansion: crate::sources::unzip::DEFAULT_ZIP_EXPANSION,
            mode: None,
            describe_seeds: false,
            capture_date: None,
            identify: IdentifyMode::Described,
        }
    }
}

/// An option of the manifest's options column that is not one.
#[derive(Debug, thiserror::Error)]
#[error(
    "option {0:?}: not one of describe-seeds, mode=minimal|full, timezone=ZONE, url-prefix=URL, \
     capture-date=DATE, nedlib-date=server|folder, identify=none|described|all"
)]
pub struct BadOption(pub String);

impl ItemSettings {
    /// These settings with an item's options applied: whitespace-separated `name` or
    /// `name=value`, with the names of `webaip package`'s flags (`describe-seeds`,
    /// `mode=full`, `timezone=Australia/Sydney`, ...); a leading `--` is allowed.
    pub fn apply(&self, options: &str) -> Result<ItemSettings, BadOption> {
        let mut s = self.clone();
        for word in options.split_whitespace() {
            let bad = || BadOption(word.to_string());
            let option = word.strip_prefix("--").unwrap_or(word);
            let (name, value) = match option.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (option, None),
            };
            match (name, value) {
                ("describe-seeds", None) => s.describe_seeds = true,
                ("mode", Some("full")) => s.mode = Some(SerializationMode::Full),
                ("mode", Some("minimal")) => s.mode = Some(SerializationMode::Minimal),
                ("timezone", Some(z)) => s.zone = Zone::parse(z).map_err(|_| bad())?,
                ("url-prefix", Some(u)) => s.url_prefix = Some(u.to_string()),
                ("capture-date", Some(d)) => {
                    s.capture_date =
                        Some(crate::metadata::parse_capture_date(d).map_err(|_| bad())?)
                }
                ("nedlib-date", Some("server")) => s.nedlib_date = NedlibDate::ServerDate,
                ("nedlib-date", Some("folder")) => s.nedlib_date = NedlibDate::FolderDate,
                ("identify", Some("none")) => s.identify = IdentifyMode::None,
                ("identify", Some("described")) => s.identify = IdentifyMode::Described,
                ("identify", Some("all")) => s.identify = IdentifyMode::All,
                _ => return Err(bad()),
            }
        }
        Ok(s)
    }
}

/// Why an item could not be packaged.
#[derive(Debug, thiserror::Error)]
pub enum ItemError {
    /// The source is of no shape `package` knows, or cannot be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The curator metadata file cannot be used.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// The options column holds an unknown option.
    #[error(transparent)]
    Option(#[from] BadOption),
    /// A PANDAS instance cannot be read.
    #[error(transparent)]
    Pandas(#[from] PandasError),
    /// A mirror (or its zip) cannot be read.
    #[error(transparent)]
    Mirror(#[from] MirrorError),
    /// A NEDLIB or Kulturarw3 harvest cannot be opened.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// The package could not be made.
    #[error(transparent)]
    Package(#[from] PackageError),
    /// A PANDAS title directory where one instance was expected (the manifest expands
    /// titles; this one appeared after it was read).
    #[error("{}: a PANDAS title directory of several instances", .0.display())]
    Title(PathBuf),
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
            ItemError::Source(SourceError::Io { .. }) => "unreadable",
            ItemError::Source(_) | ItemError::Title(_) => "unrecognised",
            ItemError::Metadata(_) => "metadata",
            ItemError::Option(_) => "options",
            ItemError::Pandas(_) | ItemError::Mirror(_) | ItemError::Capture(_) => "damaged",
            ItemError::Package(p) => match p {
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
            },
        }
    }
}

/// Packages `source` into `opts.out` as `webaip package SOURCE` would, with `metadata` and
/// `settings`; a mirror's `.zip` is unpacked in a temporary folder below `work`.
pub fn package_source(
    source: &Path,
    metadata: Option<&Path>,
    settings: &ItemSettings,
    opts: &PackageOptions,
    work: &Path,
) -> Result<PackageReport, ItemError> {
    let mut opts = opts.clone();
    opts.metadata = match metadata {
        Some(p) => CuratorMetadata::load(p)?,
        None => CuratorMetadata::default(),
    };
    if let Some(mode) = settings.mode {
        opts.mode = mode;
    }
    opts.describe_seeds = settings.describe_seeds;
    opts.capture_date = settings.capture_date;
    opts.identify = settings.identify;
    let quiet = |_: u64| {};
    match detect(&[source.to_path_buf()])? {
        Input::Archives(src) => Ok(build_package(&src, &opts, &quiet)?),
        Input::Pandas { instances, .. } => match instances.as_slice() {
            [one] => {
                let inst = pandas::read_instance(one, settings.zone)?;
                Ok(build_pandas_package(&inst, &opts, &quiet)?)
            }
            _ => Err(ItemError::Title(source.to_path_buf())),
        },
        Input::Captures(dir, shape) => {
            let nedlib = NedlibOptions { date_source: settings.nedlib_date };
            let mut harvest = crate::sources::open_captures(&dir, shape, nedlib)?;
            Ok(build_capture_package(harvest.as_mut(), &dir, &opts, &quiet)?)
        }
        Input::Mirror(dir, kind) => package_mirror(&dir, kind, None, settings, &mut opts),
        Input::MirrorZip(zip) => {
            std::fs::create_dir_all(work)
                .map_err(|source| SourceError::Io { path: work.to_path_buf(), source })?;
            let u = crate::sources::unzip::unpack_zip(&zip, work, settings.max_zip_expansion)?;
            package_mirror(&u.root, u.kind, Some((&zip, &u)), settings, &mut opts)
        }
    }
}

/// A mirror (unpacked from `zip` when given) packaged as `package` packages one.
fn package_mirror(
    dir: &Path,
    kind: mirror::MirrorKind,
    zip: Option<(&Path, &crate::sources::unzip::Unpacked)>,
    settings: &ItemSettings,
    opts: &mut PackageOptions,
) -> Result<PackageReport, ItemError> {
    let mopts = MirrorOptions {
        url_prefix: settings.url_prefix.clone(),
        capture_date: settings.capture_date,
        zone: settings.zone,
        name: zip.map(|(z, _)| crate::sources::file_text(z)),
    };
    let m = match zip {
        Some((z, u)) => u.read_mirror(z, &mopts)?,
        None => mirror::read_mirror(dir, kind, &mopts)?,
    };
    let notes = m.describe(&mut opts.metadata);
    let mut r = build_pandas_package(&m.instance, opts, &|_| {})?;
    r.metadata_notes.splice(0..0, notes);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_package_flags_by_name() {
        let s =
            ItemSettings::default().apply("--describe-seeds mode=full timezone=+10:00").unwrap();
        assert!(s.describe_seeds);
        assert_eq!(s.mode, Some(SerializationMode::Full));
        assert!(matches!(s.zone, Zone::Fixed(_)));
        for bad in ["mode=huge", "force", "timezone=Mars/Base", "describe-seeds=1"] {
            let e = ItemSettings::default().apply(bad).unwrap_err();
            assert_eq!(e.0, bad);
        }
    }
}
