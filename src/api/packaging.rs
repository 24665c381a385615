//! What a caller of [`super::Packager`] names beside it: the options' parts, the report's
//! parts, the defaults.

// What an audit tells as it reads (the progress of [`super::audit_package`]'s runs).
pub use crate::audit::AuditProgress;

pub use crate::formats::unzip::DEFAULT_ZIP_EXPANSION;
pub use crate::index::digests::DedupSources;
pub use crate::metadata::{CuratorMetadata, parse_capture_date};
pub use crate::migrate::DEFAULT_LEVEL;
pub use crate::model::{EntityOrigin, PageKind, SerializationMode, TitleSource};
pub use crate::package::captures::QUIRKS_KEPT;
pub use crate::package::{
    CaptureCounts, ContainerReport, CrawlLogComparison, InstanceReport, dedup_saved_text,
};
pub use crate::pages::EntitiesReport;
pub use crate::profile::{DEFAULT_PROFILE, Profile};
pub use crate::sources::mirror::{Mirror, MirrorKind};
pub use crate::sources::nedlib::NedlibDate;
pub use crate::sources::open::ReadOptions;
pub use crate::sources::pandas::Zone;
pub use crate::stages::dedup::Dedup;
pub use crate::stages::identify::IdentifyMode;
pub use crate::stages::scan::{Clamd, ClamdAddr, Cleaner};
