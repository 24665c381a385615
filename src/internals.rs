//! Not part of webaip's API: the few internal items that the fuzz and property harnesses, the
//! migration harness the integration tests share (tests/util) and the benchmarks drive from
//! outside the crate. It exists only with the `test-hooks` feature, and may change at any
//! time; everything else a caller needs is at the crate root.

// The ARC and WARC readers, fed mutated and generated files by the fuzz and property
// harnesses and read back by the migration harness.
pub use crate::formats::arc::{AnomalyKind, ArcReader, RecordKind, Severity as AnomalySeverity};
pub use crate::formats::warc::WarcReader;

// One migration with seeded identifiers and every record written reported as it is written,
// which the migration harness checks against warcio record by record.
pub use crate::ids::Ids;
pub use crate::migrate::{MigratedRecord, migrate_file, output_name};

// The METS builder over the package model, and the validator: the METS fuzz target, its
// seeds and the METS benchmark.
pub use crate::mets::{MetsBuilder, ValidateOptions, validate_mets};
pub use crate::package::entities::resolve_entities;
pub use crate::profile::Profile;

/// The package model the METS builder takes.
pub mod model {
    pub use crate::model::*;
}

// The capture sources and the unpacker the fuzz harness reads mutated input with.
pub use crate::sources::capture::CaptureSource;
pub use crate::sources::kulturarw3::Kulturarw3Archive;
pub use crate::sources::mirror::{MirrorKind, MirrorOptions, read_mirror};
pub use crate::sources::nedlib::{NedlibHarvest, NedlibOptions};
pub use crate::sources::pandas::Zone;
pub use crate::sources::unzip::unpack_zip;

// Link rewriting, measured for memory on hostile HTML.
pub use crate::formats::html::html_encoding;
pub use crate::stages::rewrite::{LinkMap, rewrite_html, rewrite_html_stream};

// The E-ARK and WACZ checkers, fed mutated packages.
pub use crate::export::eark::check::check_package as check_eark_package;
pub use crate::export::wacz::check::check_wacz;

// The DROID signature matcher, timed by the identification benchmark.
pub use crate::formats::droid::{PLAIN_TEXT, Signatures};

// The clamd client, driven over each transport against a real and a refusing daemon.
pub use crate::stages::scan::{Clamd, ScanResult};

/// The primitives webaip's long jobs are made of, computed by the very code the jobs run: the
/// floor benchmark (examples/floor.rs) times them per core.
pub mod floor {
    use std::io::Read;

    pub use crate::formats::digest::Sha512;

    /// SHA-1, as the WARC block and payload digests are computed.
    pub fn sha1(bytes: &[u8]) -> [u8; 20] {
        use sha1::Digest;
        sha1::Sha1::digest(bytes).into()
    }

    /// SHA-256, as WACZ export computes it.
    pub fn sha256(bytes: &[u8]) -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::digest(bytes).into()
    }

    /// CRC-32, as gzip trailers and the rebuild data need it.
    pub fn crc32(bytes: &[u8]) -> u32 {
        crc32fast::hash(bytes)
    }

    /// One gzip member, as migrate compresses a record held in memory.
    pub fn gzip_member(bytes: &[u8], level: u32) -> std::io::Result<Vec<u8>> {
        crate::formats::warc::writer::gzip_member(bytes, level)
    }

    /// The length of one gzip member compressed as migrate streams a large record: chunks
    /// deflated on the current rayon pool, spooled, then written.
    pub fn gzip_member_streamed(bytes: &[u8], level: u32) -> std::io::Result<u64> {
        let body = crate::formats::gzip_member::deflate_body(bytes, level, |_| {})?;
        Ok(body.write_member(&[], &[], &mut std::io::sink())?.member_len)
    }

    /// The bytes inflated from a gzip member, read as the WARC and ARC readers read.
    pub fn inflate(member: &[u8]) -> std::io::Result<u64> {
        let mut dec = flate2::bufread::GzDecoder::new(member);
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0u64;
        loop {
            match dec.read(&mut buf)? {
                0 => return Ok(total),
                n => total += n as u64,
            }
        }
    }
}
