//! The access index: which record of which container holds a capture of a URL, and where.
//!
//! - [`surt`] turns a URL into its sort-friendly key (SURT), as the `surt` package that pywb
//!   uses does;
//! - [`cdxj`] is one index line: its model, read from and written as CDXJ (the JSON-in-a-line
//!   format of pywb and cdxj-indexer);
//! - [`digests`] is the on-disk table of stored payloads by digest that deduplication looks
//!   captures up in.
//!
//! The index is an access file (PROFILE P1.6): rebuildable from the containers, kept beside a
//! package, never inside it.

pub mod cdxj;
pub mod digests;
pub mod surt;
