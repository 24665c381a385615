//! The package-level sections of a METS document, read into typed structs with yaserde.
//!
//! [`read_package_sections`] streams the document with quick-xml, cuts out the bytes of each
//! package-level section and hands only those to yaserde (derive-based; no schema is compiled).
//! Package-level means, among the root's children before the `fileSec`:
//!
//! * the `metsHdr` (dates, agents, `altRecordID`s);
//! * every `dmdSec` (MODS, Dublin Core, a PREMIS intellectual entity);
//! * every `amdSec` except webaip's per-record ones (ID `AMD-<container>-R<n>`, one per
//!   described record, possibly millions): those are skipped unread, as everything from the
//!   `fileSec` on (the fileSec, the structMaps), which stays with the streaming readers
//!   (`listing`, `reader`). In webaip's METS the amdSecs kept are `AMD-RIGHTS`,
//!   `AMD-PACKAGE` and those of the containers and logs; in other tools' METS, whatever
//!   amdSecs precede the fileSec (the BL SIP's rights, crawl event and agents; Archivematica's
//!   per-file objects, events and agents).
//!
//! Memory is bounded: a section over [`MAX_SECTION_BYTES`] or more than [`MAX_SECTIONS`]
//! sections is an error naming the byte offset, never an allocation without end.
//!
//! yaserde passes over elements a struct does not name without a word, so every section read
//! is written back with yaserde and compared with the bytes read, as XML trees (namespace URI
//! and local name, attributes, trimmed text; prefixes, whitespace and sibling order aside).
//! What did not come back is listed in [`PackageSections::not_modelled`] by element path:
//! nothing is dropped silently. Where yaserde falls short it is worked around here: it
//! matches elements by namespace URI, so PREMIS 2 is renamed to PREMIS 3 on the way in and
//! back on the way out (see `premis.rs`); it reads no mixed content (text between child
//! elements), which none of these records use and which the comparison would report; a
//! section cut out of the document gets the root's namespace declarations, its prefixes being
//! bound there.

mod descriptive;
mod header;
mod premis;
mod read;
mod rights;
mod tree;
mod wrap;

use std::path::PathBuf;

pub use descriptive::Mods;
pub use header::MetsHdr;
pub use premis::{PremisAgent, PremisEvent, PremisObject, PremisVersion, RightsStatement};
pub use read::{read_package_sections, read_package_sections_from, read_root_identity};
pub use rights::WebaipRights;
pub use wrap::{AmdSec, DmdSec, DublinCore, XmlData};

/// Largest package-level section read (bytes as written in the document).
pub const MAX_SECTION_BYTES: usize = 16 << 20;
/// Most package-level sections read from one document.
pub const MAX_SECTIONS: usize = 10_000;

/// One section as read: where it starts, its PREMIS version, and its content.
#[derive(Debug, Clone, PartialEq)]
pub struct Section<T> {
    /// Byte offset of its start tag in the document.
    pub offset: u64,
    /// The PREMIS it holds (None when it holds no PREMIS).
    pub premis: Option<PremisVersion>,
    /// The section.
    pub value: T,
}

/// The package-level sections of a METS document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PackageSections {
    /// The root's `OBJID`.
    pub objid: Option<String>,
    /// The root's `TYPE`.
    pub mets_type: Option<String>,
    /// The root's `PROFILE`.
    pub profile: Option<String>,
    /// The root's `LABEL`.
    pub label: Option<String>,
    /// The `metsHdr`.
    pub header: Option<Section<MetsHdr>>,
    /// The `dmdSec`s, in document order.
    pub dmd_secs: Vec<Section<DmdSec>>,
    /// The package-level `amdSec`s, in document order.
    pub amd_secs: Vec<Section<AmdSec>>,
    /// webaip per-record `amdSec`s passed over.
    pub record_amd_secs_skipped: u64,
    /// What the sections hold and the structs do not carry over, by element path
    /// (`mets:amdSec[AMD0000]/mets:rightsMD/.../{uri}Permissions`, `.../@attr`, `.../text()`;
    /// a leading `+` marks something written back that was not read).
    pub not_modelled: Vec<String>,
}

/// A PREMIS entity of the package with the version of the section it came from.
#[derive(Debug, Clone, Copy)]
pub struct Versioned<'a, T> {
    /// PREMIS 2 or 3.
    pub version: PremisVersion,
    /// The entity.
    pub value: &'a T,
}

impl PackageSections {
    /// Every `xmlData` of the dmdSecs and amdSecs, with its section's PREMIS version.
    fn xml_data(&self) -> impl Iterator<Item = (PremisVersion, &XmlData)> {
        let dmd = self.dmd_secs.iter().filter_map(|s| {
            let x = s.value.md_wrap.as_ref()?.xml_data.as_ref()?;
            Some((s.premis.unwrap_or(PremisVersion::V3), x))
        });
        let amd = self.amd_secs.iter().flat_map(|s| {
            let v = s.premis.unwrap_or(PremisVersion::V3);
            let a = &s.value;
            a.tech_md
                .iter()
                .chain(&a.rights_md)
                .chain(&a.source_md)
                .chain(&a.digiprov_md)
                .filter_map(move |m| Some((v, m.md_wrap.as_ref()?.xml_data.as_ref()?)))
        });
        dmd.chain(amd)
    }

    /// The PREMIS agents of the package-level sections.
    pub fn premis_agents(&self) -> Vec<Versioned<'_, PremisAgent>> {
        self.xml_data()
            .flat_map(|(version, x)| {
                x.premis_agents.iter().map(move |value| Versioned { version, value })
            })
            .collect()
    }

    /// The PREMIS events of the package-level sections.
    pub fn premis_events(&self) -> Vec<Versioned<'_, PremisEvent>> {
        self.xml_data()
            .flat_map(|(version, x)| {
                x.premis_events.iter().map(move |value| Versioned { version, value })
            })
            .collect()
    }

    /// The PREMIS objects of the package-level sections (containers, logs, an intellectual
    /// entity in a dmdSec).
    pub fn premis_objects(&self) -> Vec<Versioned<'_, PremisObject>> {
        self.xml_data()
            .flat_map(|(version, x)| {
                x.premis_objects.iter().map(move |value| Versioned { version, value })
            })
            .collect()
    }

    /// The PREMIS rights statements, in `premis:rights` or directly in `xmlData`.
    pub fn premis_rights_statements(&self) -> Vec<Versioned<'_, RightsStatement>> {
        self.xml_data()
            .flat_map(|(version, x)| {
                x.premis_rights
                    .iter()
                    .flat_map(|r| &r.statements)
                    .chain(&x.premis_rights_statements)
                    .map(move |value| Versioned { version, value })
            })
            .collect()
    }

    /// The MODS records of the dmdSecs.
    pub fn mods(&self) -> Vec<&Mods> {
        self.xml_data().flat_map(|(_, x)| &x.mods).collect()
    }

    /// The Dublin Core records of the dmdSecs.
    pub fn dublin_core(&self) -> Vec<DublinCore> {
        self.xml_data().filter_map(|(_, x)| x.dublin_core()).collect()
    }

    /// webaip's rights record, when the document has one.
    pub fn webaip_rights(&self) -> Option<&WebaipRights> {
        self.xml_data().flat_map(|(_, x)| &x.webaip_rights).next()
    }

    /// Every section written back with yaserde, in document order (header, dmdSecs,
    /// amdSecs), PREMIS 2 sections in PREMIS 2's namespace.
    #[cfg(test)]
    pub(crate) fn written(&self) -> Result<Vec<String>, SectionsError> {
        let mut out = Vec::new();
        if let Some(h) = &self.header {
            out.push(read::write_section(&h.value, h.premis)?);
        }
        for s in &self.dmd_secs {
            out.push(read::write_section(&s.value, s.premis)?);
        }
        for s in &self.amd_secs {
            out.push(read::write_section(&s.value, s.premis)?);
        }
        Ok(out)
    }
}

/// Why the package-level sections cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SectionsError {
    /// The document cannot be opened or read.
    #[error("{}: {why}", path.display(), why = crate::layout::describe_io(source))]
    Io {
        /// The document.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The document is not well-formed XML where the reader went.
    #[error("{}: byte {offset}: {source}", path.display())]
    Xml {
        /// The document.
        path: PathBuf,
        /// Where reading stopped.
        offset: u64,
        /// The cause.
        #[source]
        source: quick_xml::Error,
    },
    /// The root is not `mets:mets`.
    #[error("{}: the root element is {found}, not mets:mets", path.display())]
    NotMets {
        /// The document.
        path: PathBuf,
        /// The root's qualified name.
        found: String,
    },
    /// Something a METS document never holds: a document type declaration, or a reference
    /// to an entity other than XML's five.
    #[error("{}: byte {offset}: {what} refused", path.display())]
    Refused {
        /// The document.
        path: PathBuf,
        /// Where.
        offset: u64,
        /// What.
        what: String,
    },
    /// A section is larger than `MAX_SECTION_BYTES`.
    #[error("{}: byte {offset}: the section starting here is larger than {} MiB", path.display(), MAX_SECTION_BYTES >> 20)]
    SectionTooLarge {
        /// The document.
        path: PathBuf,
        /// The section's start tag.
        offset: u64,
    },
    /// More than `MAX_SECTIONS` package-level sections.
    #[error("{}: byte {offset}: more than {MAX_SECTIONS} package-level sections", path.display())]
    TooManySections {
        /// The document.
        path: PathBuf,
        /// The start tag of the first section over the bound.
        offset: u64,
    },
    /// One section declares both PREMIS 2 and PREMIS 3.
    #[error("{}: byte {offset}: the section starting here mixes PREMIS 2 and PREMIS 3", path.display())]
    MixedPremis {
        /// The document.
        path: PathBuf,
        /// The section's start tag.
        offset: u64,
    },
    /// yaserde cannot read a section into its struct.
    #[error("{}: byte {offset}: {element} cannot be read: {source}", path.display())]
    Model {
        /// The document.
        path: PathBuf,
        /// The section's start tag.
        offset: u64,
        /// The section's element.
        element: String,
        /// yaserde's error.
        #[source]
        source: yaserde::Error,
    },
    /// yaserde cannot write a section back.
    #[error("a section cannot be written back: {0}")]
    Write(#[source] yaserde::Error),
}

#[cfg(test)]
mod tests;
