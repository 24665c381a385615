//! The access index: which record of which container holds a capture of a URL, and where.
//!
//! - [`surt`] turns a URL into its sort-friendly key (SURT), as the `surt` package that pywb
//!   uses does;
//! - [`cdxj`] is one index line: its model, read from and written as CDXJ (the JSON-in-a-line
//!   format of pywb and cdxj-indexer);
//! - writing: [`record`] derives a record's line as cdxj-indexer does, [`members`] walks a gzip
//!   WARC member by member (libdeflate; one file split between threads), [`warc`] reads any WARC
//!   with the streaming reader, [`feed`] hands one read of a file on to several walkers,
//!   [`tap`] sees each record as the container writer writes it (`package --index`),
//!   [`method`] keys a POST or PUT response by its request's method and body as pywb does,
//!   [`sort`] sorts lines in bounded memory, [`build`], [`output`] and [`zipnum`] write CDXJ,
//!   CDX and ZipNum files;
//! - reading: [`lookup`] searches a sorted index file in place, [`zipnum_lookup`] a ZipNum
//!   index, [`set`] uses several as one, [`get`] fetches one record through them;
//! - [`digests`] is the on-disk table of stored payloads by digest that deduplication looks
//!   captures up in.
//!
//! The index is an access file (PROFILE P1.6): rebuildable from the containers, kept beside a
//! package, never inside it.

pub mod build;
pub mod cdxj;
pub mod digests;
pub mod feed;
pub mod get;
pub mod lookup;
pub mod members;
pub mod method;
pub mod output;
pub mod record;
pub mod set;
pub mod sort;
pub mod surt;
pub mod tap;
pub mod warc;
pub mod zipnum;
pub mod zipnum_lookup;
