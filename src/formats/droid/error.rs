//! Why a signature file cannot be used.

use std::io;

use super::syntax::SyntaxError;

/// Why a signature file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DroidError {
    /// The gzip stream is corrupt or cut short.
    #[error("DROID signature file: not a readable gzip stream: {why}", why = crate::layout::describe_io(.0))]
    Gzip(#[source] io::Error),
    /// The XML is not well-formed.
    #[error("DROID signature file: not well-formed XML at byte {pos}: {source}")]
    Xml {
        /// Byte offset in the XML where the reader stopped.
        pos: u64,
        /// What the XML reader says.
        #[source]
        source: quick_xml::Error,
    },
    /// The XML stops before its root element closes.
    #[error("DROID signature file: ends before </FFSignatureFile> (truncated)")]
    Truncated,
    /// A value the format does not allow (a non-numeric identifier, an unknown reference).
    #[error("DROID signature file: at byte {pos}: {what}")]
    Invalid {
        /// Byte offset in the XML of the element.
        pos: u64,
        /// What is wrong.
        what: String,
    },
    /// A byte sequence that does not follow DROID's syntax.
    #[error("DROID signature file: signature {signature}, sequence `{text}`: {why}")]
    Syntax {
        /// The internal signature's ID.
        signature: u32,
        /// The sequence's text.
        text: String,
        /// What is wrong.
        why: SyntaxError,
    },
    /// No signature or no format at all: not a signature file.
    #[error("DROID signature file: holds no signatures or no formats")]
    Empty,
}
