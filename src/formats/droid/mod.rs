//! PRONOM format identification by DROID binary signatures, in process.
//!
//! The DROID signature file (`data/pronom/`, gzipped, built into the binary) is read with a
//! streaming XML reader (`parse`), its byte sequences compiled into patterns (`syntax`,
//! `compile`), and a payload's bytes matched against them (`matcher`); DROID's priorities
//! then drop a format that another match beats (`priority`). Every surviving format is
//! reported: several when several survive, none when nothing matches.
//!
//! What is looked at: the first bytes of a payload and its last bytes (`window`), sized from
//! the signatures (the furthest bounded offset any sequence reaches from its end of the file,
//! at least 64 KiB, at most 1 MiB). Sequences with an unbounded offset (`*`, a variable
//! position) are searched within those windows only: the whole payload when it is no longer
//! than both together, otherwise its start and its end, never its middle. Siegfried and DROID
//! can search further; a match that only the middle of a large payload holds is missed here.
//!
//! For example a Nikon NEF skeleton of DROID's test suite (fmt/202, 517 KB, its second
//! subsequence 500 KB in, after an unbounded gap) is reported as TIFF (fmt/353) only; on the
//! other 2,234 skeletons of that suite that DROID identifies, webaip gives the PUID DROID
//! expects (checked once by hand, the suite is not part of this repository).
//!
//! Multi-byte ranges (`[0000:1000]`) compare as big-endian numbers; the signature file has
//! none in a little-endian sequence. A signature whose backtracking exceeds a step budget
//! does not match (none does on the test corpus).
//!
//! Formats told apart by what a ZIP or OLE2 file holds (DOCX, ODF, EPUB, WACZ, Word 97...) are
//! identified by DROID's container signatures (`container`), when the payload is held whole.
//! Out of scope: identification by file name extension, and XML sniffing. Plain text is judged apart from the signatures:
//! [`Signatures::examine_bytes`] gives the text class of a payload nothing matches
//! (`formats::text`, the classes siegfried's "text match" uses).
//!
//! Speed: a signature whose first sequence starts with a fixed byte at a fixed offset from
//! either end is checked only when the payload has that byte there (those at offset 0 are
//! indexed by it); literals after a gap are found with memchr's searchers.

pub(crate) mod compile;
pub(crate) mod container;
pub(crate) mod error;
pub(crate) mod matcher;
pub(crate) mod parse;
pub(crate) mod priority;
pub(crate) mod syntax;
pub(crate) mod window;

#[cfg(any(test, feature = "test-hooks"))]
use std::io::Seek;
use std::io::{self, BufReader, Read};
use std::sync::OnceLock;

use crate::formats::text::{self, TextKind};
use compile::{Key, Sequence, Signature};
pub use container::{Basis, ContainerOutcome};
pub use error::DroidError;
use matcher::{Fwd, Matcher, Rev};
pub use parse::{FileFormat, Reference};

/// PRONOM's plain text file, what a payload no signature matches is when its bytes are text.
pub const PLAIN_TEXT: &str = "x-fmt/111";

/// What the bytes of a payload match: the formats DROID's priorities leave, and, when there
/// are none, the text class of its first bytes (`formats::text`), if they are text.
#[derive(Debug)]
pub struct Examined<'a> {
    /// The formats matched.
    pub formats: Vec<&'a FileFormat>,
    /// What gave every one of `formats`: the binary signatures, or a container signature
    /// (whose formats then replaced the binary result).
    pub basis: Basis,
    /// What looking inside a ZIP or OLE2 payload gave (why the binary result stands).
    pub container: ContainerOutcome,
    /// The text class of the first bytes, looked at only when no format matched.
    pub text: Option<TextKind>,
}

/// The signature file built into webaip (see `data/pronom/README.md`).
const SHIPPED: &[u8] = include_bytes!("../../../data/pronom/DROID_SignatureFile_V122.xml.gz");

/// Which signature file is built into webaip, as its root element says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureFileVersion {
    /// `Version` of `FFSignatureFile` (the `V122` of its file name).
    pub version: u32,
    /// `DateCreated`, as the file writes it.
    pub date_created: String,
}

/// The version of the signature file built into webaip, read from its first bytes only
/// (without compiling it, which [`Signatures::shipped`] does).
pub fn shipped_version() -> Result<SignatureFileVersion, DroidError> {
    let xml = BufReader::new(flate2::read::GzDecoder::new(SHIPPED));
    let root = parse::read_root(xml)?;
    Ok(SignatureFileVersion { version: root.version, date_created: root.date_created })
}

/// Smallest and largest window read at each end of a payload.
const MIN_WINDOW: usize = 64 * 1024;
const MAX_WINDOW: usize = 1024 * 1024;

/// A compiled signature file.
#[derive(Debug)]
pub struct Signatures {
    version: u32,
    date_created: String,
    formats: Vec<FileFormat>,
    signatures: Vec<Signature>,
    /// For each signature (by index), the formats (by index) it identifies.
    formats_of: Vec<Vec<usize>>,
    /// Signatures keyed by their first byte at offset 0, by that byte.
    by_first_byte: Vec<Vec<usize>>,
    /// Signatures keyed elsewhere (checked by their key, one byte each).
    keyed_elsewhere: Vec<usize>,
    /// Signatures without a key: always tried.
    unkeyed: Vec<usize>,
    priorities: priority::Priorities,
    bof_window: usize,
    eof_window: usize,
}

impl Signatures {
    /// The signature file built into webaip, compiled once.
    pub fn shipped() -> Result<&'static Signatures, &'static DroidError> {
        static SHIPPED_SIGNATURES: OnceLock<Result<Signatures, DroidError>> = OnceLock::new();
        SHIPPED_SIGNATURES.get_or_init(|| Signatures::from_gzip(SHIPPED)).as_ref()
    }

    /// Compiles a gzipped signature file.
    pub fn from_gzip(gz: &[u8]) -> Result<Signatures, DroidError> {
        let mut xml = Vec::new();
        flate2::read::GzDecoder::new(gz).read_to_end(&mut xml).map_err(DroidError::Gzip)?;
        Signatures::from_xml(&xml)
    }

    /// Compiles a signature file.
    pub fn from_xml(xml: &[u8]) -> Result<Signatures, DroidError> {
        let raw = parse::read(BufReader::new(xml))?;
        if raw.signatures.is_empty() || raw.formats.is_empty() {
            return Err(DroidError::Empty);
        }
        let signatures =
            raw.signatures.iter().map(compile::signature).collect::<Result<Vec<_>, _>>()?;
        let index_of: std::collections::HashMap<u32, usize> =
            signatures.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        let mut formats_of = vec![Vec::new(); signatures.len()];
        for (fi, f) in raw.formats.iter().enumerate() {
            for sid in &f.signature_ids {
                // A link to a signature the file lacks can never match; DROID ignores it too.
                if let Some(si) = index_of.get(sid) {
                    formats_of[*si].push(fi);
                }
            }
        }
        let mut by_first_byte = vec![Vec::new(); 256];
        let (mut keyed_elsewhere, mut unkeyed) = (Vec::new(), Vec::new());
        for (i, s) in signatures.iter().enumerate() {
            if formats_of[i].is_empty() {
                continue;
            }
            match s.key {
                Some(Key { from_end: false, offset: 0, byte }) => {
                    by_first_byte[usize::from(byte)].push(i)
                }
                Some(_) => keyed_elsewhere.push(i),
                None => unkeyed.push(i),
            }
        }
        let reach = |r: Reference| {
            signatures
                .iter()
                .flat_map(|s| &s.sequences)
                .filter(|q| q.reference == r)
                .filter_map(|q| q.reach)
                .max()
                .unwrap_or(0)
                .clamp(MIN_WINDOW, MAX_WINDOW)
        };
        let (bof_window, eof_window) = (reach(Reference::Bof), reach(Reference::Eof));
        Ok(Signatures {
            version: raw.version,
            date_created: raw.date_created,
            priorities: priority::Priorities::new(&raw.formats),
            formats: raw.formats,
            signatures,
            formats_of,
            by_first_byte,
            keyed_elsewhere,
            unkeyed,
            bof_window,
            eof_window,
        })
    }

    /// The signature file's version (`Version` of `FFSignatureFile`).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// When the signature file was made, as it says.
    pub fn date_created(&self) -> &str {
        &self.date_created
    }

    /// Every format the file describes, with or without a signature.
    pub fn formats(&self) -> &[FileFormat] {
        &self.formats
    }

    /// The internal signatures (ID and specificity) that identify the format `puid`.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn signatures_of(&self, puid: &str) -> Vec<(u32, &str)> {
        let Some(f) = self.formats.iter().find(|f| f.puid == puid) else { return Vec::new() };
        self.signatures
            .iter()
            .filter(|s| f.signature_ids.contains(&s.id))
            .map(|s| (s.id, s.specificity.as_str()))
            .collect()
    }

    /// How many internal signatures the file holds.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn signature_count(&self) -> usize {
        self.signatures.len()
    }

    /// Bytes read at the start and at the end of a payload.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn windows(&self) -> (usize, usize) {
        (self.bof_window, self.eof_window)
    }

    /// The formats a whole payload held in memory matches.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn identify_bytes(&self, bytes: &[u8]) -> Vec<&FileFormat> {
        self.examine_bytes(bytes).formats
    }

    /// The formats a payload read from a stream matches (the stream is read to its end; only
    /// its start and end are kept).
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn identify_reader<R: Read>(&self, r: R) -> io::Result<Vec<&FileFormat>> {
        Ok(self.examine_reader(r)?.formats)
    }

    /// The formats the bytes from a seekable source's current position to its end match,
    /// reading only their start and end.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn identify_seekable<R: Read + Seek>(&self, r: R) -> io::Result<Vec<&FileFormat>> {
        Ok(self.examine_seekable(r)?.formats)
    }

    /// What a whole payload held in memory matches, and its text class when nothing does.
    pub fn examine_bytes(&self, bytes: &[u8]) -> Examined<'_> {
        self.examine_view(window::View { head: bytes, tail: &[], whole: true })
    }

    /// What a payload read from a stream to its end matches, and its text class when nothing
    /// does.
    pub fn examine_reader<R: Read>(&self, r: R) -> io::Result<Examined<'_>> {
        let w = window::from_stream(r, self.bof_window, self.eof_window)?;
        Ok(self.examine_view(w.view()))
    }

    /// What the bytes from a seekable source's current position to its end match, reading only
    /// their start and end, and their text class when nothing does.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn examine_seekable<R: Read + Seek>(&self, r: R) -> io::Result<Examined<'_>> {
        let w = window::from_seekable(r, self.bof_window, self.eof_window)?;
        Ok(self.examine_view(w.view()))
    }

    /// The plain text format (`x-fmt/111`) a payload is when no signature matches and its
    /// first bytes are text, if the signature file has it.
    pub fn plain_text(&self) -> Option<&FileFormat> {
        self.formats.iter().find(|f| f.puid == PLAIN_TEXT)
    }

    fn examine_view(&self, w: window::View<'_>) -> Examined<'_> {
        let matched = self.matched(w);
        let formats = self.priorities.apply(&matched).into_iter().map(|i| &self.formats[i]);
        let mut found = Examined {
            formats: formats.collect(),
            basis: Basis::Signature,
            container: ContainerOutcome::NotContainer,
            text: None,
        };
        // DROID looks inside when a trigger format matched, before priorities. A payload
        // streamed and longer than the windows stays NotRead (its container format) until
        // the caller hands the whole payload to `identify_container`.
        if let Some(kind) = self.container_trigger(&matched) {
            found.container = ContainerOutcome::NotRead(kind);
            if w.whole {
                self.identify_container(&mut found, w.head);
            }
        }
        // The head window is far longer than the text window: it holds the bytes classified.
        if found.formats.is_empty() {
            found.text = text::classify(w.head);
        }
        found
    }

    /// The formats (by index) whose signatures match, before priorities.
    fn matched(&self, w: window::View<'_>) -> Vec<usize> {
        let (head, end) = (w.head, w.end());
        let first =
            head.first().map(|b| self.by_first_byte[usize::from(*b)].as_slice()).unwrap_or(&[]);
        let keyed = self.keyed_elsewhere.iter().filter(|i| {
            self.signatures[**i].key.is_some_and(|k| {
                let (buf, at) = if k.from_end {
                    (end, end.len().checked_sub(k.offset + 1))
                } else {
                    (head, Some(k.offset))
                };
                at.and_then(|a| buf.get(a)) == Some(&k.byte)
            })
        });
        let mut matched: Vec<usize> = first
            .iter()
            .chain(keyed)
            .chain(&self.unkeyed)
            .filter(|i| self.signatures[**i].sequences.iter().all(|s| sequence_matches(s, &w)))
            .flat_map(|i| self.formats_of[*i].iter().copied())
            .collect();
        matched.sort_unstable();
        matched.dedup();
        matched
    }
}

/// Whether one byte sequence matches the payload's windows.
fn sequence_matches(s: &Sequence, w: &window::View<'_>) -> bool {
    match s.reference {
        Reference::Bof => {
            has_required(s, &Fwd(w.head)) && Matcher::new(&Fwd(w.head)).matches(&s.pat)
        }
        Reference::Eof => {
            has_required(s, &Rev(w.end())) && Matcher::new(&Rev(w.end())).matches(&s.pat)
        }
        Reference::Variable => {
            (has_required(s, &Fwd(w.head)) && Matcher::new(&Fwd(w.head)).matches(&s.pat))
                || (!w.whole
                    && has_required(s, &Fwd(w.tail))
                    && Matcher::new(&Fwd(w.tail)).matches_anywhere(&s.pat))
        }
    }
}

/// Whether the sequence's required literal is within its reach (or it has none).
fn has_required<H: matcher::Hay>(s: &Sequence, hay: &H) -> bool {
    let Some(lit) = &s.required else { return true };
    let last = s.reach.unwrap_or(usize::MAX).min(hay.len());
    hay.find(lit, 0, last).is_some()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod siegfried_tests;
