//! The official XML schemas (METS, PREMIS 3 and 2.2, MODS, Dublin Core, XLink, xml.xsd), the
//! bundles that import them and webaip's rights schema, built into the binary from the
//! top-level `xsd/` (origins and licences in `xsd/SOURCES.md`).
//!
//! libxml2 compiles schemas from files and resolves each `schemaLocation` beside the file that
//! names it; every import of these files names a sibling. So a validation writes them to a
//! private temporary folder of its own (mode 0700, locked while it lives: one a killed run left
//! is removed by the next, see [`crate::temporaries`]) and compiles from there: no schema
//! folder, flag or network is needed.

use std::io;
use std::path::Path;

use crate::temporaries::TempName;

/// One built-in schema document: its file name and bytes.
#[derive(Debug, Clone, Copy)]
pub struct SchemaFile {
    /// The file name (as the imports name it).
    pub name: &'static str,
    /// Its content.
    pub bytes: &'static [u8],
}

macro_rules! schema {
    ($name:literal) => {
        SchemaFile { name: $name, bytes: include_bytes!(concat!("../../xsd/", $name)) }
    };
}

/// Every built-in schema document.
pub const BUILT_IN: [SchemaFile; 13] = [
    schema!("mets-bundle.xsd"),
    schema!("mets-bundle-legacy.xsd"),
    schema!("mets.xsd"),
    schema!("xlink.xsd"),
    schema!("xml.xsd"),
    schema!("premis.xsd"),
    schema!("premis-v2-2.xsd"),
    schema!("mods-3-8.xsd"),
    schema!("dc.xsd"),
    schema!("dcterms.xsd"),
    schema!("dcmitype.xsd"),
    schema!("webaip-rights.xsd"),
    schema!("catalog.xml"),
];

/// The folders the built-in schemas are written to, in `TMPDIR`.
pub(crate) const SCHEMA_DIR: TempName = TempName { prefix: "webaip-xsd-", suffix: "", dirs: true };

/// True when `name` is one of the built-in schema documents.
pub fn is_built_in(name: &str) -> bool {
    BUILT_IN.iter().any(|f| f.name == name)
}

/// Writes every built-in schema document into `dir`.
pub(crate) fn write_into(dir: &Path) -> io::Result<()> {
    for f in BUILT_IN {
        std::fs::write(dir.join(f.name), f.bytes)?;
    }
    Ok(())
}

/// The built-in schemas are byte for byte the files in `xsd/`, and those the official copies
/// the tests' oracle uses (`../shared/xsd`).
#[cfg(test)]
mod copies_tests {
    use crate::test_support::{corpus, repo};

    #[test]
    fn the_built_in_schemas_are_the_official_copies() {
        for f in super::BUILT_IN {
            let shipped = std::fs::read(repo().join("xsd").join(f.name)).unwrap();
            assert_eq!(f.bytes, shipped.as_slice(), "{}", f.name);
            if f.name != "webaip-rights.xsd" {
                assert_eq!(
                    shipped,
                    std::fs::read(corpus().join("../xsd").join(f.name)).unwrap(),
                    "{}",
                    f.name
                );
            }
        }
        let sources = std::fs::read_to_string(repo().join("xsd/SOURCES.md")).unwrap();
        for needle in ["CC BY 4.0", "W3C Software and Document License", "Library of Congress"] {
            assert!(sources.contains(needle), "{needle}");
        }
    }
}
