//! WACZ 1.1.1 (Webrecorder): one ZIP holding a package's WARC containers (stored, not
//! recompressed), its CDXJ index, `pages/pages.jsonl`, `datapackage.json` with every file's
//! SHA-256 and `datapackage-digest.json`; and the deep check of a WACZ ([`check`]).

pub mod check;
