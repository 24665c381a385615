//! METS: writing package descriptors and validating them.
//!
//! [`writer::MetsBuilder`] streams a METS 1.12 document with MODS, Dublin Core, webaip's rights
//! record and PREMIS 3 objects, events and agents, spilling the record-level sections to disk.
//! [`validate::validate_mets`] checks a document against the official schemas (through
//! libxml2) and against the package profile, naming the line and rule of every finding.
//! `reader::MetsReader` is the one reader of METS documents; `listing` the one reading of a
//! fileSec into files, groups, ranges and PREMIS statements (audit, pages, store);
//! [`sections::read_package_sections`] the package-level sections (header, descriptive
//! records, rights, package-level PREMIS) read into typed structs with yaserde.

pub(crate) mod descriptive;
pub(crate) mod listing;
pub(crate) mod premis;
pub(crate) mod reader;
pub mod schemas;
pub mod sections;
pub mod validate;
pub mod writer;
pub(crate) mod xml;

pub use validate::{ValidateOptions, validate_mets};
pub use writer::{ContainerWriter, MetsBuilder};
