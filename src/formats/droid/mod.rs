//! PRONOM format identification by DROID binary signatures, in process.
//!
//! The DROID signature file (`data/pronom/`, gzipped, built into the binary) is read with a
//! streaming XML reader (`parse`), its byte sequences compiled into patterns (`syntax`,
//! `compile`), and a payload's bytes matched against them (`matcher`); DROID's priorities
//! then drop a format that another match beats (`priority`). Every surviving format is
//! reported: several when several survive, none when nothing matches.
//!
//! What is looked at: where DROID and siegfried look. A sequence at a bounded offset is
//! matched within the first or last bytes of a payload (`window`), sized from the signatures
//! (the furthest bounded offset any sequence reaches from its end of the file, at least 64 KiB,
//! at most 1 MiB). A sequence with a variable part (an unbounded offset, a `*` gap) is searched
//! over the whole payload, as siegfried does (DROID too, unless its scan is limited).
//!
//! Most payloads are decided by their windows, so the whole is kept only when needed: a payload
//! in memory is searched as it is; a stream is read once, and once its first window is read,
//! [`Signatures::needs_whole_payload`] tells whether some signature is pending (not ruled out,
//! but not decidable without bytes beyond the windows; the matcher tells "no match" from "ran
//! out of bytes"). Only then is the stream spooled (`window`: in memory up to 16 MiB, else in
//! an unlinked temporary file read back one 1 MiB page at a time, so memory stays bounded
//! whatever the payload), and only the pending signatures are matched against the whole. The
//! alternative, a chunked streaming search with overlap, cannot follow a backtracking pattern
//! with unbounded gaps across chunks; one spool can also serve other whole-payload checks.
//!
//! Bounds, all stated in [`SEARCH_SCOPE`], which the identification event records: a payload
//! over 8 GiB (`window::WHOLE_SEARCH_LIMIT`) is not spooled; an end-anchored sequence with a
//! variable part is searched whole only when the payload is spooled in memory (PRONOM V122 has
//! none); a sequence taking over 200,000 matching steps (`matcher::STEP_BUDGET`) is left
//! unresolved. A signature left unresolved by any of them is named in
//! [`Examined::incomplete`]: its format is then not ruled out, never called a non-match.
//!
//! For example an MP4 with its `moov` box at the end of a large file (fmt/199: `ftyp` at
//! offset 4, then `moov` anywhere) is identified whether held in memory or streamed.
//!
//! Multi-byte ranges (`[0000:1000]`) compare as big-endian numbers; the signature file has
//! none in a little-endian sequence.
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

use std::io::{self, BufReader, Read, Seek};
use std::sync::OnceLock;

use crate::formats::content_coding::UpToError;
use crate::formats::text::{self, TextKind};
use compile::{Key, Sequence, Signature};
pub use container::{Basis, ContainerOutcome};
pub use error::DroidError;
use matcher::{Fwd, Hay, Matcher, Rev, STEP_BUDGET, Stop, Verdict};
pub use parse::{FileFormat, Reference};
use syntax::Elem;

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
    /// When a search stopped before it could decide some signature (a bound of
    /// [`SEARCH_SCOPE`] was reached), which formats' signatures and why: a format missing
    /// from `formats` is then not ruled out by the bytes.
    pub incomplete: Option<String>,
    /// The formats whose signatures `incomplete` speaks of: the bytes rule none of them out.
    pub unresolved: Vec<&'a FileFormat>,
}

/// Where webaip searches a payload for signatures, and every bound it sets: the identification
/// event's detail states it. `tests::the_search_scope_states_the_bounds` keeps it true to the
/// constants.
pub(crate) const SEARCH_SCOPE: &str = "DROID binary signatures searched where DROID and \
    siegfried search them: bounded offsets within the first and last 64 KiB to 1 MiB (the \
    furthest any signature reaches), variable offsets over the whole payload up to 8 GiB (kept \
    in memory up to 16 MiB, beyond that in a temporary file, where an end-anchored sequence is \
    searched within the last window only); a sequence taking over 200000 matching steps is \
    left unresolved";

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
        SHIPPED_SIGNATURES
            .get_or_init(|| {
                let sigs = Signatures::from_gzip(SHIPPED)?;
                // Without a container file (it does not compile), every binary signature
                // stays; looking inside then says why it cannot.
                Ok(match container::ContainerSignatures::shipped() {
                    Ok(set) => sigs.without_binary_signatures_of(&set.puids()),
                    Err(_) => sigs,
                })
            })
            .as_ref()
    }

    /// These signatures less the binary signatures of `puids` (the formats the container
    /// signatures identify), as siegfried builds its default signatures (no "doubles"): such
    /// a format is named only by what its container holds, so a ZIP whose contents match no
    /// container signature (an encrypted ODT) stays a ZIP instead of taking the version a
    /// generic binary signature guesses (ODF 1.1 for every ODF).
    fn without_binary_signatures_of(mut self, puids: &[&str]) -> Signatures {
        let dropped: Vec<bool> =
            self.formats.iter().map(|f| puids.contains(&f.puid.as_str())).collect();
        for formats in &mut self.formats_of {
            formats.retain(|f| !dropped[*f]);
        }
        let in_use = |i: &usize| !self.formats_of[*i].is_empty();
        for list in &mut self.by_first_byte {
            list.retain(in_use);
        }
        self.keyed_elsewhere.retain(in_use);
        self.unkeyed.retain(in_use);
        self
    }

    /// Compiles a gzipped signature file, parsed as it inflates (the 3.6 MB of XML of the
    /// shipped file are never held whole: that was most of the compile's peak memory).
    pub fn from_gzip(gz: &[u8]) -> Result<Signatures, DroidError> {
        let mut inflated = UpToError::new(flate2::read::GzDecoder::new(gz));
        let parsed = parse::read(BufReader::new(&mut inflated));
        // An inflate error ends the parse too: it is the error to report.
        if let Some(e) = inflated.error {
            return Err(DroidError::Gzip(e));
        }
        Signatures::from_raw(parsed?)
    }

    /// Compiles a signature file given uncompressed (the tests' small files).
    #[cfg(test)]
    pub fn from_xml(xml: &[u8]) -> Result<Signatures, DroidError> {
        Signatures::from_raw(parse::read(BufReader::new(xml))?)
    }

    /// Compiles a signature file as parsed.
    fn from_raw(raw: parse::RawFile) -> Result<Signatures, DroidError> {
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
        let found = self.search(&Sight::whole(bytes), |_| None);
        let mut examined = self.conclude(bytes, found, "");
        self.identify_container(&mut examined, || io::Cursor::new(bytes));
        examined
    }

    /// What a payload read from a stream to its end matches, and its text class when nothing
    /// does. The whole stream is kept (spooled) only when its start leaves a signature pending
    /// ([`Signatures::needs_whole_payload`]).
    pub fn examine_reader<R: Read>(&self, r: R) -> io::Result<Examined<'_>> {
        let w = window::from_stream(r, self.bof_window, self.eof_window, |head| {
            self.needs_whole_payload(head, None)
        })?;
        Ok(self.examine_windows(&w))
    }

    /// What the bytes from a seekable source's current position to its end match, reading only
    /// their start and end (all of them when a signature is pending), and their text class
    /// when nothing does.
    pub fn examine_seekable<R: Read + Seek>(&self, mut r: R) -> io::Result<Examined<'_>> {
        let start = r.stream_position()?;
        let w = window::from_seekable(&mut r, self.bof_window, self.eof_window)?;
        if w.whole {
            return Ok(self.examine_windows(&w));
        }
        // One search of the windows says both whether the rest is needed and, when it is not,
        // what the payload matches.
        let sight = Sight::windows(&w.head, &w.tail);
        let found = self.search(&sight, |_| None);
        if self.leaves_pending(&found, &sight) {
            r.seek(io::SeekFrom::Start(start))?;
            return self.examine_reader(r);
        }
        Ok(self.conclude(&w.head, found, &self.windows_only()))
    }

    /// Whether a payload longer than `head` (its first bytes, the start window) leaves some
    /// signature pending: not ruled out by `head`, and not decided without bytes beyond the
    /// windows. Only then is the whole payload worth keeping; most payloads are decided by
    /// their windows.
    ///
    /// A container (a signature of a trigger format such as ZIP or OLE2 not refuted by `head`)
    /// is worth keeping too: what it holds is read from the whole of it.
    ///
    /// A signature counts as pending only when a sequence anchored at the start matched or is
    /// still matching: the payload then shows the start of that format (an MP4's `ftyp`, a
    /// PDF header), and its variable part decides. One whose every anchored part fails, or that
    /// has none (DXF: `SECTION` anywhere, `EOF` at the end), is no reason to keep a payload
    /// whole: it is decided, or said to be unresolved, from the windows. `tail` (the last
    /// window, when known: a seekable source) refutes what ends otherwise.
    pub(crate) fn needs_whole_payload(&self, head: &[u8], tail: Option<&[u8]>) -> bool {
        let sight = match tail {
            Some(tail) => Sight::windows(head, tail),
            None => Sight { fwd: Fwd(head), fwd_all: false, end: None, end_all: false, tail: &[] },
        };
        self.candidates(&sight).any(|i| match self.signature_verdict(i, &sight) {
            Verdict::Open(Stop::MoreBytes) => self.starts_as(i, &sight),
            Verdict::Matched => self.container_trigger(&self.formats_of[i]).is_some(),
            _ => false,
        })
    }

    /// [`Signatures::needs_whole_payload`] on what a search of `sight` already found.
    fn leaves_pending<F: Hay>(&self, found: &Found, sight: &Sight<'_, F>) -> bool {
        self.container_trigger(&found.matched).is_some()
            || found
                .open
                .iter()
                .any(|u| u.stop == Stop::MoreBytes && self.starts_as(u.signature, sight))
    }

    /// Whether signature `i` has a sequence anchored at the start that `sight` does not refute,
    /// or, when the end is not seen yet, one anchored at the end with a variable part (which
    /// only the whole payload can decide; the signature file has none today).
    fn starts_as<F: Hay>(&self, i: usize, sight: &Sight<'_, F>) -> bool {
        self.signatures[i].sequences.iter().any(|s| match s.reference {
            Reference::Bof => sequence_verdict(s, sight) != Verdict::Refuted,
            Reference::Eof => sight.end.is_none() && s.reach.is_none(),
            Reference::Variable => false,
        })
    }

    /// The plain text format (`x-fmt/111`) a payload is when no signature matches and its
    /// first bytes are text, if the signature file has it.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn plain_text(&self) -> Option<&FileFormat> {
        self.formats.iter().find(|f| f.puid == PLAIN_TEXT)
    }

    /// Matches a payload's windows, then what they leave open against the whole payload when
    /// it was kept.
    fn examine_windows(&self, w: &window::Windows) -> Examined<'_> {
        if w.whole {
            return self.examine_bytes(&w.head);
        }
        let sight = Sight::windows(&w.head, &w.tail);
        let found = match &w.spooled {
            window::Spooled::Whole(whole) => {
                self.search(&sight, |i| Some(self.whole_verdict(i, whole, &w.tail)))
            }
            _ => self.search(&sight, |_| None),
        };
        let why = match &w.spooled {
            window::Spooled::Stopped(stop) => stop.to_string(),
            window::Spooled::Whole(_) => {
                format!("an end-anchored part lies beyond the last {} bytes", self.eof_window)
            }
            window::Spooled::NotNeeded => self.windows_only(),
        };
        let mut examined = self.conclude(&w.head, found, &why);
        match &w.spooled {
            window::Spooled::Whole(window::Whole::Memory(bytes)) => {
                self.identify_container(&mut examined, || io::Cursor::new(bytes.as_slice()))
            }
            window::Spooled::Whole(window::Whole::File { file, len }) => {
                self.identify_container(&mut examined, || window::FileAt::new(file, *len))
            }
            // Not kept: a container stays its container format (`NotRead` says so).
            _ => {}
        }
        examined
    }

    /// Why a signature left open by the windows alone stays open.
    fn windows_only(&self) -> String {
        format!(
            "only the first {} and the last {} bytes were searched",
            self.bof_window, self.eof_window
        )
    }

    /// A signature the windows left open, against the whole payload.
    fn whole_verdict(&self, i: usize, whole: &window::Whole, tail: &[u8]) -> Verdict {
        match whole {
            window::Whole::Memory(bytes) => self.signature_verdict(i, &Sight::whole(bytes)),
            window::Whole::File { file, len } => {
                let paged = window::Paged::new(file, *len);
                let sight =
                    Sight { fwd: paged, fwd_all: true, end: Some(tail), end_all: false, tail: &[] };
                let v = self.signature_verdict(i, &sight);
                if sight.fwd.failed() && v != Verdict::Matched {
                    Verdict::Open(Stop::Unreadable)
                } else {
                    v
                }
            }
        }
    }

    /// The signatures `sight` does not rule out by their key bytes.
    fn candidates<'s, F: Hay>(
        &'s self,
        sight: &'s Sight<'s, F>,
    ) -> impl Iterator<Item = usize> + 's {
        let first_byte = (sight.fwd.len() > 0).then(|| sight.fwd.at(0));
        let first = first_byte.map_or(&[][..], |b| self.by_first_byte[usize::from(b)].as_slice());
        let keyed = self
            .keyed_elsewhere
            .iter()
            .filter(move |i| self.signatures[**i].key.is_some_and(|k| key_holds(k, sight)));
        first.iter().chain(keyed).chain(&self.unkeyed).copied()
    }

    /// Every candidate signature's verdict on `sight`; `again` decides those left open for
    /// want of bytes, when it can.
    fn search<F: Hay>(
        &self,
        sight: &Sight<'_, F>,
        again: impl Fn(usize) -> Option<Verdict>,
    ) -> Found {
        let mut found = Found::default();
        for i in self.candidates(sight) {
            let mut v = self.signature_verdict(i, sight);
            if v == Verdict::Open(Stop::MoreBytes) {
                v = again(i).unwrap_or(v);
            }
            match v {
                Verdict::Matched => found.matched.extend(self.formats_of[i].iter().copied()),
                Verdict::Refuted => {}
                Verdict::Open(stop) => found.open.push(Unresolved { signature: i, stop }),
            }
        }
        found
    }

    /// One signature: refuted by any sequence, matched when all match, else open.
    fn signature_verdict<F: Hay>(&self, i: usize, sight: &Sight<'_, F>) -> Verdict {
        let mut open = None;
        for s in &self.signatures[i].sequences {
            match sequence_verdict(s, sight) {
                Verdict::Refuted => return Verdict::Refuted,
                Verdict::Matched => {}
                Verdict::Open(stop) => open = open.or(Some(stop)),
            }
        }
        open.map_or(Verdict::Matched, Verdict::Open)
    }

    /// The formats DROID's priorities leave, the text class when none, and what was left
    /// unresolved (`why_short`: why bytes were wanting, for those open for want of bytes).
    fn conclude(&self, head: &[u8], found: Found, why_short: &str) -> Examined<'_> {
        let mut matched = found.matched;
        matched.sort_unstable();
        matched.dedup();
        let formats: Vec<&FileFormat> =
            self.priorities.apply(&matched).into_iter().map(|i| &self.formats[i]).collect();
        // The head window is far longer than the text window: it holds the bytes classified.
        let text = if formats.is_empty() { text::classify(head) } else { None };
        let incomplete = self.describe_unresolved(&found.open, why_short);
        // DROID looks inside when a trigger format matched, before priorities: the caller
        // does, with the whole payload, when it has it.
        let container = match self.container_trigger(&matched) {
            Some(kind) => ContainerOutcome::NotRead(kind),
            None => ContainerOutcome::NotContainer,
        };
        let mut unresolved: Vec<&FileFormat> = found
            .open
            .iter()
            .flat_map(|u| &self.formats_of[u.signature])
            .map(|f| &self.formats[*f])
            .collect();
        unresolved.sort_unstable_by(|a, b| a.puid.cmp(&b.puid));
        unresolved.dedup_by(|a, b| a.puid == b.puid);
        Examined { formats, basis: Basis::Signature, container, text, incomplete, unresolved }
    }

    /// Which formats' signatures were left unresolved, and why.
    fn describe_unresolved(&self, open: &[Unresolved], why_short: &str) -> Option<String> {
        if open.is_empty() {
            return None;
        }
        let mut puids: Vec<&str> = open
            .iter()
            .flat_map(|u| &self.formats_of[u.signature])
            .map(|f| self.formats[*f].puid.as_str())
            .collect();
        puids.sort_unstable();
        puids.dedup();
        let mut stops: Vec<Stop> = Vec::new();
        for u in open {
            if !stops.contains(&u.stop) {
                stops.push(u.stop);
            }
        }
        let why: Vec<String> = stops
            .into_iter()
            .map(|stop| match stop {
                Stop::MoreBytes => why_short.to_string(),
                Stop::Budget => format!("a sequence took over {STEP_BUDGET} matching steps"),
                Stop::Unreadable => "the spooled payload could not be read back".to_string(),
            })
            .collect();
        let why = why.join("; ");
        Some(format!("the signatures of {} were not searched to the end: {why}", puids.join(", ")))
    }
}

/// What the signatures found in a payload: the formats (by index) matched, and the
/// signatures left unresolved.
#[derive(Debug, Default)]
struct Found {
    matched: Vec<usize>,
    open: Vec<Unresolved>,
}

/// A signature the search could not decide.
#[derive(Debug)]
struct Unresolved {
    signature: usize,
    stop: Stop,
}

/// The bytes sequences are matched against: forwards from the payload's start (`fwd`, all of
/// it when `fwd_all`), backwards from its end (`end`, all of it when `end_all`; `None`: not
/// read yet, an end-anchored sequence is taken as matching unless it has a variable part),
/// and the end window `tail`, where
/// a variable sequence the forward bytes lack may still be found.
struct Sight<'a, F: Hay> {
    fwd: F,
    fwd_all: bool,
    end: Option<&'a [u8]>,
    end_all: bool,
    tail: &'a [u8],
}

impl<'a> Sight<'a, Fwd<'a>> {
    /// A whole payload held in memory.
    fn whole(bytes: &'a [u8]) -> Self {
        Sight { fwd: Fwd(bytes), fwd_all: true, end: Some(bytes), end_all: true, tail: &[] }
    }

    /// The start and end windows of a longer payload.
    fn windows(head: &'a [u8], tail: &'a [u8]) -> Self {
        Sight { fwd: Fwd(head), fwd_all: false, end: Some(tail), end_all: false, tail }
    }
}

/// Whether every sequence of `sig` matches the windows `w` of a container's entry (a sequence
/// that would need bytes the windows lack does not match).
pub(crate) fn windows_match(sig: &Signature, w: &window::Windows) -> bool {
    let sight = if w.whole { Sight::whole(&w.head) } else { Sight::windows(&w.head, &w.tail) };
    sig.sequences.iter().all(|q| sequence_verdict(q, &sight) == Verdict::Matched)
}

/// Whether a signature's key byte is where it must be, or lies where `sight` cannot see.
fn key_holds<F: Hay>(k: Key, sight: &Sight<'_, F>) -> bool {
    if k.from_end {
        let Some(end) = sight.end else { return true };
        match end.len().checked_sub(k.offset + 1) {
            Some(at) => end[at] == k.byte,
            None => !sight.end_all,
        }
    } else if k.offset < sight.fwd.len() {
        sight.fwd.at(k.offset) == k.byte
    } else {
        !sight.fwd_all
    }
}

/// What one byte sequence's match against `sight` says.
fn sequence_verdict<F: Hay>(s: &Sequence, sight: &Sight<'_, F>) -> Verdict {
    match s.reference {
        Reference::Bof => run(s, &sight.fwd, sight.fwd_all),
        Reference::Eof => match sight.end {
            Some(end) => run(s, &Rev(end), sight.end_all),
            // Not read yet: only a sequence with a variable part may need more than the tail.
            None if s.reach.is_none() => Verdict::Open(Stop::MoreBytes),
            None => Verdict::Matched,
        },
        Reference::Variable => match run(s, &sight.fwd, sight.fwd_all) {
            Verdict::Matched => Verdict::Matched,
            v if sight.tail.is_empty() => v,
            v => {
                let tail = Fwd(sight.tail);
                let anywhere = has_required(s, &tail, true) == Some(true)
                    && Matcher::new(&tail).matches_anywhere(&s.pat);
                if anywhere { Verdict::Matched } else { v }
            }
        },
    }
}

/// One sequence against one haystack; `all`: the haystack is the whole payload, so running
/// out of bytes refutes.
fn run<H: Hay>(s: &Sequence, hay: &H, all: bool) -> Verdict {
    // A sequence whose fixed start is not there is refuted before its required literal is
    // looked for: that literal may lie after an unbounded gap, a search of the whole payload
    // (an XML signature's namespace on every page starting with `<`), where the start's bytes
    // are one comparison. The matcher would refute it the same way, at its first element.
    if fixed_start_absent(&s.pat, hay) {
        return Verdict::Refuted;
    }
    // Without its required literal a sequence is refuted when the haystack holds all the
    // literal could reach; otherwise the pattern itself tells a refuted start from a pending
    // one.
    if has_required(s, hay, all) == Some(false) {
        return Verdict::Refuted;
    }
    let m = Matcher::new(hay);
    let matched = m.matches(&s.pat);
    match m.verdict(matched) {
        Verdict::Open(Stop::MoreBytes) if all => Verdict::Refuted,
        v => v,
    }
}

/// Whether `pat` starts with a literal at a fixed offset (after a gap of exactly that many
/// bytes, or none) whose bytes `hay` holds and which differ there: no match can start, and no
/// byte beyond `hay` could change that.
fn fixed_start_absent<H: Hay>(pat: &syntax::Pat, hay: &H) -> bool {
    let (at, lit) = match pat.0.as_slice() {
        [Elem::Gap { min, max: Some(max) }, Elem::Lit(l), ..] if min == max => (*min, l),
        [Elem::Lit(l), ..] => (0, l),
        _ => return false,
    };
    at.saturating_add(lit.bytes.len()) <= hay.len() && !hay.has(at, &lit.bytes)
}

/// Whether the sequence's required literal is within its reach (or it has none): `None` when
/// it is not in the haystack but could lie beyond it.
fn has_required<H: Hay>(s: &Sequence, hay: &H, all: bool) -> Option<bool> {
    let Some(lit) = &s.required else { return Some(true) };
    let reach = s.reach.unwrap_or(usize::MAX);
    let last = reach.min(hay.len());
    if hay.find(lit, 0, last).is_some() {
        Some(true)
    } else if all || reach.saturating_add(lit.bytes.len()) <= hay.len() {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod siegfried_tests;
