//! PRONOM identification inside ZIP and OLE2 payloads by DROID container signatures.
//!
//! The container signature file (`data/pronom/`, gzipped, built into the binary) names, for
//! each format told apart by what a container holds (DOCX, ODF, EPUB, WACZ, Word 97...), the
//! files the container must hold and, for some of them, byte signatures their bytes must
//! match (compiled and matched by the binary signature code). A container signature matches
//! when every file it names is there and matches.
//!
//! DROID's rules: a container is looked into only when a binary format the file names as a
//! trigger (ZIP, OOXML, OLE2) matched the payload, before priorities; the formats the matching
//! container signatures map to, less those another of them beats (the binary file's
//! priorities), replace the binary result. When none matches, or the container cannot be read
//! (damaged, encrypted entries), the binary result stands and [`ContainerOutcome`] says why.
//!
//! Bounded memory and time: a ZIP's central directory is walked one entry at a time (zip's
//! `ZipIterable`, as `formats::unzip` does), looking only at entries whose path a signature
//! names, each once, and stopping when all have been seen; an OLE2 file is read with the `cfb`
//! crate. Of an entry only its first bytes are decompressed, as far as its signatures reach
//! ([`ENTRY_WINDOW`] at most); an entry a signature searches anywhere or from its end is
//! streamed keeping its first and last [`ENTRY_WINDOW`] bytes, [`ENTRY_READ_CAP`] bytes at most.

mod parse;
mod read;

use std::collections::HashMap;
use std::io::{BufReader, Read, Seek};
use std::sync::OnceLock;

use super::compile::{self, Signature};
use super::error::DroidError;
use super::parse::Reference;
use super::window::Windows;
use super::{Examined, FileFormat, Signatures};

/// The container signature file built into webaip (see `data/pronom/README.md`).
const SHIPPED: &[u8] =
    include_bytes!("../../../../data/pronom/container-signature-20260119.xml.gz");

/// The date of the shipped container signature file, as its name gives it (the file itself
/// states only a `signatureVersion`).
pub const SHIPPED_DATE: &str = "2026-01-19";

/// Most bytes of an entry kept at either end: the whole entry when it is shorter.
pub const ENTRY_WINDOW: usize = 1024 * 1024;

/// Most bytes of one entry decompressed when its signatures need its end.
pub const ENTRY_READ_CAP: u64 = 64 * 1024 * 1024;

/// Why a container could not be looked into.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContainerReadError {
    /// Not a ZIP archive that can be read.
    #[error("not a readable ZIP archive ({0})")]
    NotZip(#[source] zip::result::ZipError),
    /// A central directory entry cannot be read.
    #[error("ZIP entry {index} unreadable ({source})")]
    ZipEntry {
        index: usize,
        #[source]
        source: zip::result::ZipError,
    },
    /// Not an OLE2 compound file that can be read.
    #[error("not a readable OLE2 compound file ({0})")]
    NotOle2(#[source] std::io::Error),
    /// An entry a signature names cannot be read (an unsupported compression method, damaged
    /// data).
    #[error("{what} {name:?} cannot be read ({source})")]
    Entry {
        what: &'static str,
        name: String,
        #[source]
        source: std::io::Error,
    },
}

/// The kinds of container DROID's container signatures describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerKind {
    /// A ZIP archive.
    Zip,
    /// An OLE2 compound file (Microsoft's structured storage).
    Ole2,
}

impl std::fmt::Display for ContainerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ContainerKind::Zip => "ZIP",
            ContainerKind::Ole2 => "OLE2",
        })
    }
}

/// What gave the formats of an [`Examined`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// DROID binary signatures matched the payload's bytes.
    Signature,
    /// A container signature matched what the ZIP or OLE2 payload holds.
    Container,
}

/// What looking inside a payload gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerOutcome {
    /// No trigger format matched: not a container to look into.
    NotContainer,
    /// A container, not looked into: a streamed payload longer than the windows was not kept
    /// whole (over the limit of what is spooled, or the spool failed); it stays its container
    /// format.
    NotRead(ContainerKind),
    /// A container signature matched: its formats replaced the binary result.
    Matched(ContainerKind),
    /// Looked into; no container signature matched: the binary result stands.
    Unmatched(ContainerKind),
    /// The container could not be read: the binary result stands.
    Unreadable {
        /// The container's kind.
        kind: ContainerKind,
        /// Why (the entry and what went wrong).
        why: String,
    },
}

/// Which container signature file is built into webaip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerFileVersion {
    /// `signatureVersion` of the root element.
    pub version: u32,
    /// The date its file name gives (`container-signature-YYYYMMDD.xml`).
    pub date: &'static str,
}

/// One file a container signature names: which signature, and which of its parts.
#[derive(Debug)]
struct Part {
    /// The part's index among all parts (see `ContainerSignatures::parts_of`).
    index: usize,
    /// Byte signatures, any one of which the file's bytes must match (none: its name is
    /// enough).
    signatures: Vec<Signature>,
}

/// How much of an entry its signatures need.
#[derive(Debug, Clone, Copy, Default)]
struct Need {
    /// Bytes from its start.
    head: usize,
    /// Whether its last bytes are needed too (sequences searched anywhere or from the end).
    tail: bool,
}

/// Every part naming one path, in one kind of container.
#[derive(Debug)]
struct PathParts {
    parts: Vec<Part>,
    need: Need,
}

/// A compiled container signature file.
#[derive(Debug)]
pub(crate) struct ContainerSignatures {
    version: u32,
    /// For each container signature: its kind, its parts (a range of part indices), the
    /// PUIDs it maps to.
    signatures: Vec<Compiled>,
    /// For each kind (`Zip`, `Ole2`): the path of every part, to its index in `paths`.
    by_path: [HashMap<String, usize>; 2],
    paths: Vec<PathParts>,
    part_count: usize,
    triggers: Vec<(ContainerKind, String)>,
}

#[derive(Debug)]
struct Compiled {
    kind: ContainerKind,
    parts: std::ops::Range<usize>,
    puids: Vec<String>,
}

fn slot(kind: ContainerKind) -> usize {
    match kind {
        ContainerKind::Zip => 0,
        ContainerKind::Ole2 => 1,
    }
}

/// The version of the container signature file built into webaip.
pub fn shipped_version() -> Result<ContainerFileVersion, &'static DroidError> {
    let set = ContainerSignatures::shipped()?;
    Ok(ContainerFileVersion { version: set.version, date: SHIPPED_DATE })
}

impl ContainerSignatures {
    /// The container signature file built into webaip, compiled once.
    pub(crate) fn shipped() -> Result<&'static ContainerSignatures, &'static DroidError> {
        static COMPILED: OnceLock<Result<ContainerSignatures, DroidError>> = OnceLock::new();
        COMPILED.get_or_init(|| ContainerSignatures::from_gzip(SHIPPED)).as_ref()
    }

    /// Every PUID a container signature identifies.
    pub(crate) fn puids(&self) -> Vec<&str> {
        let mut puids: Vec<&str> =
            self.signatures.iter().flat_map(|c| c.puids.iter().map(String::as_str)).collect();
        puids.sort_unstable();
        puids.dedup();
        puids
    }

    /// Compiles a gzipped container signature file.
    pub(crate) fn from_gzip(gz: &[u8]) -> Result<ContainerSignatures, DroidError> {
        let mut xml = Vec::new();
        flate2::read::GzDecoder::new(gz).read_to_end(&mut xml).map_err(DroidError::Gzip)?;
        ContainerSignatures::from_xml(&xml)
    }

    /// Compiles a container signature file.
    pub(crate) fn from_xml(xml: &[u8]) -> Result<ContainerSignatures, DroidError> {
        let raw = parse::read(BufReader::new(xml))?;
        if raw.signatures.is_empty() || raw.mappings.is_empty() {
            return Err(DroidError::Empty);
        }
        let mut puids: HashMap<u32, Vec<String>> = HashMap::new();
        for (id, puid) in raw.mappings {
            puids.entry(id).or_default().push(puid);
        }
        let mut set = ContainerSignatures {
            version: raw.version,
            signatures: Vec::new(),
            by_path: Default::default(),
            paths: Vec::new(),
            part_count: 0,
            triggers: raw.triggers,
        };
        for c in raw.signatures {
            // A signature of a container type webaip does not read, or mapped to no format,
            // can never give a result.
            let (Some(kind), Some(puids)) = (c.kind, puids.remove(&c.id)) else { continue };
            let first = set.part_count;
            for p in &c.parts {
                set.add_part(kind, p)?;
            }
            set.signatures.push(Compiled { kind, parts: first..set.part_count, puids });
        }
        Ok(set)
    }

    fn add_part(&mut self, kind: ContainerKind, raw: &parse::RawPart) -> Result<(), DroidError> {
        let signatures =
            raw.signatures.iter().map(compile::signature).collect::<Result<Vec<_>, _>>()?;
        let next = self.paths.len();
        let at = *self.by_path[slot(kind)].entry(raw.path.clone()).or_insert(next);
        if at == next {
            self.paths.push(PathParts { parts: Vec::new(), need: Need::default() });
        }
        let entry = &mut self.paths[at];
        for s in &signatures {
            entry.need = entry.need.with(s);
        }
        entry.parts.push(Part { index: self.part_count, signatures });
        self.part_count += 1;
        Ok(())
    }

    /// The PUIDs of every container signature of `kind` that `whole` (the container's bytes)
    /// matches, or why the container cannot be read.
    pub(crate) fn matching_puids<R: Read + Seek>(
        &self,
        kind: ContainerKind,
        open: impl Fn() -> R,
    ) -> Result<Vec<&str>, ContainerReadError> {
        let mut m = Matching {
            set: self,
            kind,
            seen: vec![false; self.paths.len()],
            unseen: self.by_path[slot(kind)].len(),
            done: vec![false; self.part_count],
            unread: None,
        };
        match kind {
            ContainerKind::Zip => read::walk_zip(open, &mut m)?,
            ContainerKind::Ole2 => read::walk_ole2(open, &mut m)?,
        }
        let puids: Vec<&str> = self
            .signatures
            .iter()
            .filter(|c| c.kind == kind && c.parts.clone().all(|p| m.done[p]))
            .flat_map(|c| c.puids.iter().map(String::as_str))
            .collect();
        match m.unread {
            Some(why) if puids.is_empty() => Err(why),
            _ => Ok(puids),
        }
    }
}

impl Need {
    /// This need widened to what `s`'s sequences reach.
    fn with(self, s: &Signature) -> Need {
        s.sequences.iter().fold(self, |n, q| {
            let reach = q.reach.unwrap_or(ENTRY_WINDOW).min(ENTRY_WINDOW);
            match q.reference {
                Reference::Bof => Need { head: n.head.max(reach), ..n },
                Reference::Eof => Need { tail: true, ..n },
                Reference::Variable => Need { head: ENTRY_WINDOW, tail: true },
            }
        })
    }
}

/// One look into one container: which paths were seen, which parts are satisfied.
pub(crate) struct Matching<'s> {
    set: &'s ContainerSignatures,
    kind: ContainerKind,
    seen: Vec<bool>,
    /// Paths of this kind not seen yet: the walk stops at none.
    unseen: usize,
    done: Vec<bool>,
    /// The first entry a signature names that could not be read, and why.
    unread: Option<ContainerReadError>,
}

impl Matching<'_> {
    /// The index of the paths entry `name` is, when a signature names it and no entry of
    /// that name was looked at yet.
    pub(crate) fn wanted(&self, name: &str) -> Option<usize> {
        self.set.by_path[slot(self.kind)].get(name).copied().filter(|p| !self.seen[*p])
    }

    /// Whether every path a signature names has been seen.
    pub(crate) fn all_seen(&self) -> bool {
        self.unseen == 0
    }

    /// Entry `p` could not be read (`why`): it meets none of its parts, and is remembered as
    /// the reason should no signature match.
    pub(crate) fn unread(&mut self, p: usize, why: ContainerReadError) {
        if !self.seen[p] {
            self.seen[p] = true;
            self.unseen -= 1;
        }
        self.unread.get_or_insert(why);
    }

    /// A storage (an OLE2 directory) named `p`: the parts that need only its name are met.
    pub(crate) fn name_only(&mut self, p: usize) {
        for part in &self.set.paths[p].parts {
            if part.signatures.is_empty() {
                self.done[part.index] = true;
            }
        }
    }

    /// Entry `p`, whose bytes `r` reads: each part naming it is met when it needs only the
    /// name or one of its signatures matches the bytes. Each path is looked at once.
    pub(crate) fn examine(&mut self, p: usize, r: &mut dyn Read) -> std::io::Result<()> {
        if self.seen[p] {
            return Ok(());
        }
        self.seen[p] = true;
        self.unseen -= 1;
        let entry = &self.set.paths[p];
        let windows = match entry.parts.iter().any(|part| !part.signatures.is_empty()) {
            true => Some(read_windows(r, entry.need)?),
            false => None,
        };
        for part in &entry.parts {
            let met = part.signatures.is_empty()
                || windows
                    .as_ref()
                    .is_some_and(|w| part.signatures.iter().any(|s| super::windows_match(s, w)));
            if met {
                self.done[part.index] = true;
            }
        }
        Ok(())
    }
}

/// The first bytes of an entry as far as `need` says, and its last bytes when it says so.
fn read_windows(r: &mut dyn Read, need: Need) -> std::io::Result<Windows> {
    let r = r.take(ENTRY_READ_CAP);
    if need.tail {
        return super::window::from_stream(r, need.head.max(1), ENTRY_WINDOW, |_| false);
    }
    let mut head = Vec::new();
    r.take(need.head as u64).read_to_end(&mut head)?;
    let whole = head.len() < need.head;
    Ok(Windows { head, whole, ..Windows::default() })
}

impl Signatures {
    /// The container kind one of `matched` (binary format indices, before priorities) is a
    /// trigger of.
    pub(super) fn container_trigger(&self, matched: &[usize]) -> Option<ContainerKind> {
        let set = ContainerSignatures::shipped().ok()?;
        matched.iter().find_map(|i| {
            let puid = &self.formats[*i].puid;
            set.triggers.iter().find(|(_, t)| t == puid).map(|(k, _)| *k)
        })
    }

    /// The trigger formats of `kind` (ZIP; OOXML; OLE2): what a container of that kind is at
    /// least, whatever it holds.
    pub(crate) fn container_formats(&self, kind: ContainerKind) -> Vec<&FileFormat> {
        let Ok(set) = ContainerSignatures::shipped() else { return Vec::new() };
        let puids: Vec<&str> =
            set.triggers.iter().filter(|(k, _)| *k == kind).map(|(_, p)| p.as_str()).collect();
        self.formats.iter().filter(|f| puids.contains(&f.puid.as_str())).collect()
    }

    /// Looks inside the container `found` is (when it is one not yet looked into), reading
    /// its whole payload through the readers `open` makes (two at once: a ZIP's directory and
    /// its entries are read apart): a matching container signature's formats replace the
    /// binary result.
    pub(crate) fn identify_container<'s, R: Read + Seek>(
        &'s self,
        found: &mut Examined<'s>,
        open: impl Fn() -> R,
    ) {
        let ContainerOutcome::NotRead(kind) = found.container else { return };
        let set = match ContainerSignatures::shipped() {
            Ok(set) => set,
            Err(e) => {
                found.container = ContainerOutcome::Unreadable { kind, why: e.to_string() };
                return;
            }
        };
        found.container = match set.matching_puids(kind, open) {
            Err(why) => ContainerOutcome::Unreadable { kind, why: why.to_string() },
            Ok(puids) => self.replace_by_container(found, kind, &puids),
        };
    }

    /// The binary result replaced by the formats of the matching container signatures that
    /// the priorities leave, when there are any.
    fn replace_by_container<'s>(
        &'s self,
        found: &mut Examined<'s>,
        kind: ContainerKind,
        puids: &[&str],
    ) -> ContainerOutcome {
        let mut found_ix: Vec<usize> =
            puids.iter().filter_map(|p| self.formats.iter().position(|f| f.puid == *p)).collect();
        found_ix.sort_unstable();
        found_ix.dedup();
        let best = self.priorities.apply(&found_ix);
        if best.is_empty() {
            return ContainerOutcome::Unmatched(kind);
        }
        found.formats = best.into_iter().map(|i| &self.formats[i]).collect();
        found.basis = Basis::Container;
        ContainerOutcome::Matched(kind)
    }
}

#[cfg(test)]
mod tests;
