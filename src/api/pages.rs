//! [`list_pages`]: the HTML pages of a package or a source.

use std::path::Path;

use crate::pages::list::{ListError, ListOptions, resolve};

/// What [`list_pages`] tells as it reads.
#[derive(Debug, Clone, Copy)]
pub enum PagesProgress {
    /// About this many more bytes will be read (0 when not known beforehand).
    Planned(u64),
    /// This many more bytes were read.
    Read(u64),
}

/// Lists the HTML pages of `path`: a package (a folder holding `METS.xml`, or its METS) or
/// any source `package` takes (Heritrix job, ARC/WARC files, PANDAS instance or title, wget
/// or HTTrack mirror or its `.zip`, NEDLIB, Kulturarw3), read as packaging reads it.
///
/// Returns the listing: the pages by URL then capture date (merged from sorted runs, so
/// 50,000 pages are not all held at once), their counts and the source's quirks. Fails when
/// `path` is neither a package nor a source (the error says what was expected) or cannot be
/// read.
pub fn list_pages(
    path: &Path,
    options: &ListOptions,
    progress: &dyn Fn(PagesProgress),
) -> Result<PageListing, ListError> {
    let harvest = resolve(path, options)?;
    progress(PagesProgress::Planned(harvest.bytes()));
    harvest.list(options, &|n| progress(PagesProgress::Read(n)))
}

pub use crate::pages::list::{
    ListError as PageListError, ListOptions as PageListOptions, PageEntry, PageListing,
};
