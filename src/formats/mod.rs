//! Readers and writers for the byte formats webaip meets: ARC, WARC, HTTP header blocks, HTML
//! encodings, URLs, MIME types by name and content, PRONOM signatures and text classes.
//!
//! Everything here works on bytes and offsets and knows nothing of packages or METS.

pub mod arc;
pub(crate) mod arc_rebuild;
pub mod arc_to_warc;
pub(crate) mod content_coding;
pub(crate) mod counting;
pub mod dates;
pub mod digest;
pub mod droid;
pub(crate) mod gzip_member;
pub(crate) mod gzip_rebuild;
pub mod html;
pub mod http;
pub mod mime;
pub(crate) mod multipart;
pub(crate) mod nedlib_meta;
pub mod pronom;
pub(crate) mod segment;
pub(crate) mod severable;
pub mod text;
pub mod unzip;
pub mod url;
pub mod warc;
pub mod webtext;
