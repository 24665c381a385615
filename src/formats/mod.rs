//! Readers and writers for the byte formats webaip meets: ARC, WARC and HTTP header blocks.
//!
//! Everything here works on bytes and offsets and knows nothing of packages or METS.

pub mod arc;
pub mod digest;
pub mod http;
pub mod pronom;
pub(crate) mod segment;
pub mod warc;
