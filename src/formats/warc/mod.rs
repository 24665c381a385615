//! WARC: the container format of every package.
//!
//! [`WarcWriter`] writes WARC 1.1 with one gzip member per record and returns, for each record,
//! the byte range of its member and of its payload ([`WrittenRecord`]). [`WarcReader`] reads
//! WARC 0.17 to 1.1, plain or compressed, reporting the same offsets, so that what was written
//! can be read back and compared.

pub(crate) mod check;
pub mod header;
pub(crate) mod payload;
pub mod reader;
pub mod stored;
#[cfg(test)]
pub(crate) mod test_fixtures;
pub mod writer;

pub use header::WarcHeader;
pub use reader::{WarcError, WarcFault, WarcReader};
pub(crate) use writer::encode_record;
pub use writer::{WarcWriter, WrittenRecord};
