//! PRONOM format identification of payloads (issue 27): DROID's binary signatures
//! (`formats::droid`), matched in process, and what a package records of the result.
//!
//! An [`Identifier`] identifies one payload at a time, from bytes held in memory or from a
//! stream (only its first and last bytes are kept), and judges the result against the type
//! the harvest declared (HTTP `Content-Type`, ARC header): consistent, not confirmed (nothing
//! in the bytes supports it, nothing rules it out), or contradicted (the bytes match, by
//! signature, formats none of which PRONOM lists under it). Every format DROID's priorities
//! leave is kept; none is a result too; a text payload no signature names gets the web text
//! type its content supports (`formats::webtext`). A [`Tally`] counts a run's results (empty
//! payloads included) for the one `format identification` event a package gets, whose agent
//! names the tool and the signature file's version.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read, Seek};
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

use chrono::{DateTime, Utc};

use rayon::prelude::*;
use serde::Serialize;

use super::{Item, Stage, StageError, StagedItem};
use crate::formats::arc_to_warc::RecordBlock;
use crate::formats::content_coding::{Coding, UpToError};
use crate::formats::droid::{
    Basis, ContainerOutcome, DroidError, Examined, FileFormat, SEARCH_SCOPE, Signatures,
};
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::text::{TEXT_WINDOW, TextKind};
use crate::formats::webtext::{self, Fit, JSON_LIMIT};
use crate::ids::Ids;
use crate::model::{Agent, Event, Format, Identification, IdentificationBasis, Verdict};

/// The LoC event type of format identification.
pub(crate) const EVENT_TERM: &str = "format identification";
/// Its URI.
pub(crate) const EVENT_URI: &str = "http://id.loc.gov/vocabulary/preservation/eventType/for";
/// The identifier of the identification agent.
const AGENT_ID: &str = "webaip-pronom";

/// Declared types that say nothing about the bytes: always consistent.
const GENERIC_TYPES: [&str; 9] = [
    "",
    "application/octet-stream",
    "binary/octet-stream",
    "application/unknown",
    "application/x-unknown",
    "unknown/unknown",
    "application/download",
    "application/force-download",
    "application/x-download",
];

/// Types that name the same kind of bytes: `[declared, what PRONOM lists]`.
const ALIASES: [(&str, &str); 10] = [
    ("image/jpg", "image/jpeg"),
    ("image/pjpeg", "image/jpeg"),
    ("image/x-png", "image/png"),
    ("image/x-ms-bmp", "image/bmp"),
    ("image/x-icon", "image/vnd.microsoft.icon"),
    ("audio/mp3", "audio/mpeg"),
    ("application/x-pdf", "application/pdf"),
    ("application/x-zip-compressed", "application/zip"),
    ("application/x-gzip", "application/gzip"),
    ("application/x-shockwave-flash", "application/vnd.adobe.flash-movie"),
];

/// Markup types a page may be declared as and match as another: HTML served as XHTML or XML
/// and the reverse are one kind of payload here, not a contradiction.
const MARKUP: [&str; 4] = ["text/html", "application/xhtml+xml", "application/xml", "text/xml"];

/// Why identification cannot run.
#[derive(Debug, thiserror::Error)]
pub enum IdentifyError {
    /// The built-in signature file does not load.
    #[error("PRONOM identification: {0}")]
    Signatures(&'static DroidError),
}

/// What a package records of identification (`--identify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IdentifyMode {
    /// No identification: no PUIDs, no event, no agent.
    None,
    /// Every payload is identified; the PUIDs are recorded on the bytestreams described for
    /// another reason, and a payload whose bytes contradict its declared type is described
    /// for that reason (P4.7); one whose type they only do not confirm is not.
    #[default]
    Described,
    /// Every payload is identified and described, with its PUIDs.
    All,
}

/// Identifies payloads with the signature file built into webaip.
#[derive(Debug, Clone, Copy)]
pub struct Identifier {
    sigs: &'static Signatures,
    /// For each type (normalized), how many formats with a signature PRONOM lists under it:
    /// what a no-match verdict states, counted once instead of for every payload.
    signed_types: &'static HashMap<String, usize>,
}

impl Identifier {
    /// The built-in signatures, compiled once; a corrupt file is an error here, at start.
    pub fn shipped() -> Result<Identifier, IdentifyError> {
        static SIGNED_TYPES: OnceLock<HashMap<String, usize>> = OnceLock::new();
        let sigs = Signatures::shipped().map_err(IdentifyError::Signatures)?;
        let signed_types = SIGNED_TYPES.get_or_init(|| signed_types(sigs));
        Ok(Identifier { sigs, signed_types })
    }

    /// The tool and signature file, as the PREMIS notes and the agent name them.
    pub(crate) fn method(&self) -> String {
        format!(
            "webaip {}, DROID signature file V{}, container signature file {}",
            env!("CARGO_PKG_VERSION"),
            self.sigs.version(),
            crate::formats::droid::container::SHIPPED_DATE
        )
    }

    /// A payload held in memory, declared as `declared`.
    pub(crate) fn identify_bytes(&self, declared: &str, bytes: &[u8]) -> Identification {
        let whole = (bytes.len() <= JSON_LIMIT).then_some(bytes);
        self.judge(declared, self.sigs.examine_bytes(bytes), Held { head: bytes, whole })
    }

    /// A payload read to its end from `r` (only its first and last bytes are kept, and, for
    /// a payload that starts like JSON, up to [`JSON_LIMIT`] bytes to parse).
    pub(crate) fn identify_reader(
        &self,
        declared: &str,
        r: impl Read,
    ) -> io::Result<Identification> {
        let mut tee = HeadTee { inner: r, head: Vec::new(), total: 0, keep: true };
        let found = self.sigs.examine_reader(&mut tee)?;
        Ok(self.judge(declared, found, tee.held()))
    }

    /// A payload that is a whole regular file: only its first and last bytes are read, unless
    /// a signature needs the whole of it (then it is read through once).
    pub(crate) fn identify_file(&self, declared: &str, file: &File) -> io::Result<Identification> {
        let len = file.metadata()?.len();
        let mut head = read_at_most(file, TEXT_WINDOW as u64, len)?;
        if head.len() == TEXT_WINDOW && starts_like_json(&head) {
            head = read_at_most(file, JSON_LIMIT as u64 + 1, len)?;
        }
        let mut from_start = file;
        from_start.seek(io::SeekFrom::Start(0))?;
        let found = self.sigs.examine_seekable(from_start)?;
        let whole = head.len() as u64 == len && head.len() <= JSON_LIMIT;
        Ok(self.judge(declared, found, Held { head: &head, whole: whole.then_some(&head[..]) }))
    }

    /// A payload sent with `coding` (its HTTP `Content-Encoding`), read to its end from `r`:
    /// the content it decodes to is identified, and the identification says so; a decoding
    /// that breaks mid-way leaves what decoded before the break, said too. A coding webaip does
    /// not undo leaves the declared type not confirmed, the content unidentified. The one
    /// place the coding is decided on, for packages and `webaip identify` alike.
    pub(crate) fn identify_encoded(
        &self,
        declared: &str,
        coding: &Coding,
        r: impl Read,
    ) -> io::Result<Identification> {
        if *coding == Coding::Identity {
            return self.identify_reader(declared, r);
        }
        let Some(decoder) = coding.decoder(r) else {
            return Ok(self.not_decoded(declared, coding.name()));
        };
        let mut decoded = UpToError::new(decoder);
        let mut id = self.identify_reader(declared, (&mut decoded).take(MAX_DECODED))?;
        let mut note = format!("identified after undoing its {} Content-Encoding", coding.name());
        if let Some(e) = decoded.error {
            note.push_str(&format!(
                "; the decoding failed after {} decoded bytes ({e}): what decoded before was identified",
                decoded.decoded
            ));
            // The content's end was not seen: what ends it is not known.
            id.verdict = unresolved_verdict(id.verdict, "the decoding failed before the end");
        } else if decoded.decoded >= MAX_DECODED {
            // A decompression bomb costs no more than this; its end was not seen.
            let why = format!("decoding stopped after {MAX_DECODED} bytes");
            note.push_str(&format!("; {why}: the first bytes were identified"));
            id.verdict = unresolved_verdict(id.verdict, &why);
        }
        id.decoding = Some(note);
        Ok(id)
    }

    /// A payload content-encoded with `coding`, which webaip does not undo: nothing is said of
    /// its content, so the declared type is not confirmed (never contradicted).
    fn not_decoded(&self, declared: &str, coding: &str) -> Identification {
        let t = normalized(declared);
        let verdict = match GENERIC_TYPES.contains(&t.as_str()) {
            true => Verdict::Consistent,
            false => Verdict::NotConfirmed(format!(
                "declared {t}; the payload is content-encoded with {coding}, which webaip does not undo"
            )),
        };
        Identification {
            matches: Vec::new(),
            text: None,
            basis: None,
            method: self.method(),
            verdict,
            decoding: Some(format!(
                "not identified: content-encoded with {coding}, which webaip does not undo"
            )),
            caveat: None,
        }
    }

    /// The result: the formats matched (by signature); or, when none is and the first bytes
    /// are text, the web text type their content supports; or nothing. With the verdict on
    /// the declared type.
    fn judge(&self, declared: &str, found: Examined<'_>, held: Held<'_>) -> Identification {
        let t = normalized(declared);
        // An unresolved signature matters to the verdict only when its format could be the
        // declared type; the caveat states it whatever the type.
        let could_be_declared = found.unresolved.iter().any(|f| lists_type(f, &t));
        let caveat = caveat_of(&found);
        let incomplete = found.incomplete.clone().filter(|_| could_be_declared);
        let mut id = self.judge_complete(declared, found, held);
        if let Some(why) = incomplete {
            id.verdict = unresolved_verdict(id.verdict, &why);
        }
        id.caveat = caveat;
        id
    }

    /// The result as if every search had run to its end.
    fn judge_complete(
        &self,
        declared: &str,
        found: Examined<'_>,
        held: Held<'_>,
    ) -> Identification {
        let t = normalized(declared);
        if !found.formats.is_empty() {
            let verdict = signature_verdict(&t, &found.formats);
            return Identification {
                matches: found.formats.iter().map(|f| pronom_format(f)).collect(),
                text: None,
                basis: Some(match found.basis {
                    Basis::Container => IdentificationBasis::Container,
                    Basis::Signature => IdentificationBasis::Signature,
                }),
                method: self.method(),
                verdict: container_verdict(self.sigs, &t, &found.container, verdict),
                decoding: None,
                caveat: None,
            };
        }
        if let Some(class) = found.text {
            return self.judge_text(&t, class, held);
        }
        Identification {
            matches: Vec::new(),
            text: None,
            basis: None,
            method: self.method(),
            verdict: no_match_verdict(self.signed_types, &t, None),
            decoding: None,
            caveat: None,
        }
    }

    /// A text payload no signature matches: the web text type its content supports, the
    /// checks that ran as its basis.
    fn judge_text(&self, t: &str, class: TextKind, held: Held<'_>) -> Identification {
        let content = webtext::Content { head: held.head, whole: held.whole, class };
        let judged = webtext::judge(content, t);
        let puid = judged.kind.puid();
        let format = match self.sigs.formats().iter().find(|f| f.puid == puid) {
            Some(f) => pronom_format(f),
            None => {
                Format { name: judged.kind.to_string(), version: None, pronom: Some(puid.into()) }
            }
        };
        let verdict = match judged.fit {
            Fit::Consistent => Verdict::Consistent,
            Fit::NotConfirmed(why) => Verdict::NotConfirmed(why),
            Fit::NotText => no_match_verdict(self.signed_types, t, Some(class)),
        };
        Identification {
            matches: vec![format],
            text: Some(class),
            basis: Some(IdentificationBasis::Text(judged.basis)),
            method: self.method(),
            verdict,
            decoding: None,
            caveat: None,
        }
    }

    /// The agent of the `format identification` event.
    pub(crate) fn agent(&self) -> Agent {
        Agent {
            id_type: "local".into(),
            id: AGENT_ID.into(),
            name: "webaip PRONOM identification (DROID binary and container signatures)".into(),
            agent_type: "software".into(),
            version: Some(self.method()),
            note: Some(format!(
                "DROID signature file V{}, created {}; container signature file {} (ZIP and OLE2 payloads held whole); plain text judged by the file command's character classes",
                self.sigs.version(),
                self.sigs.date_created(),
                crate::formats::droid::container::SHIPPED_DATE
            )),
        }
    }

    /// The one `format identification` event of a package: what was identified, in counts,
    /// linked to the objects that record the results.
    pub(crate) fn event(
        &self,
        ids: &Ids,
        now: DateTime<Utc>,
        tally: &Tally,
        objects: Vec<(String, String, String)>,
    ) -> Event {
        Event {
            id: ids.uuid().to_string(),
            event_type: EVENT_TERM.into(),
            event_type_uri: Some(EVENT_URI.into()),
            date_time: now,
            detail: Some(format!(
                "program=\"webaip\"; version=\"{}\"; DROID signature file V{}; {}; {TEXT_CHECKS}; empty payloads counted, not identified; a declared type is contradicted only when the bytes match, by signature, formats none of which PRONOM lists under it, else not confirmed when nothing supports it",
                env!("CARGO_PKG_VERSION"),
                self.sigs.version(),
                SEARCH_SCOPE
            )),
            outcome: "success".into(),
            outcome_detail: Some(tally.summary()),
            agents: vec![("local".into(), AGENT_ID.into(), "executing program".into())],
            objects,
        }
    }
}

/// Most bytes of a content-encoded payload decoded for identification (gzip inflates up to
/// about 1,000 times): a decompression bomb costs no more time than this.
const MAX_DECODED: u64 = 1 << 30;

/// The text checks, as the event detail states them.
const TEXT_CHECKS: &str = concat!(
    "where no signature matches and the first 4096 bytes are text by the file command's character classes, ",
    "the web text type the content supports: HTML (fmt/96) by HTML elements at its start (WHATWG sniffing rules), ",
    "XML (fmt/101, fmt/1776) by an XML declaration or a namespaced root element, SVG (fmt/91, fmt/92, fmt/413) by an svg root element stating its version, ",
    "JSON (fmt/817) when the whole payload (up to 1048576 bytes) parses, ",
    "CSS (x-fmt/224) and JavaScript (x-fmt/423) when so declared and their syntax is seen in the first 4096 bytes, ",
    "else plain text (x-fmt/111) with its character class; ",
    "a payload with a gzip or deflate HTTP Content-Encoding identified on its decoded content, at most 1073741824 bytes of it"
);

/// What a payload's bytes hold for the text checks: its first bytes, and all of it when it is
/// no longer than [`JSON_LIMIT`] and was kept.
#[derive(Debug, Clone, Copy)]
struct Held<'a> {
    head: &'a [u8],
    whole: Option<&'a [u8]>,
}

/// A reader that keeps what it passes on of a payload's first bytes: [`TEXT_WINDOW`] of them,
/// and up to [`JSON_LIMIT`] + 1 when they start like JSON (`{` or `[`); and counts them all.
struct HeadTee<R> {
    inner: R,
    head: Vec<u8>,
    total: u64,
    keep: bool,
}

impl<R> HeadTee<R> {
    /// What it kept: the whole payload when it kept every byte and they are no more than
    /// [`JSON_LIMIT`].
    fn held(&self) -> Held<'_> {
        let all = self.head.len() as u64 == self.total && self.head.len() <= JSON_LIMIT;
        Held { head: &self.head, whole: all.then_some(self.head.as_slice()) }
    }
}

impl<R: Read> Read for HeadTee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.total += n as u64;
        if self.keep {
            let room = (JSON_LIMIT + 1).saturating_sub(self.head.len());
            self.head.extend_from_slice(&buf[..n.min(room)]);
            self.keep = self.head.len() <= JSON_LIMIT
                && (self.head.len() < TEXT_WINDOW || starts_like_json(&self.head));
        }
        Ok(n)
    }
}

/// The first `want` bytes of `file` (fewer when it is shorter than that: `len` bytes).
fn read_at_most(file: &File, want: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut head = vec![0; usize::try_from(want.min(len)).unwrap_or(usize::MAX)];
    file.read_exact_at(&mut head, 0)?;
    Ok(head)
}

/// Whether text starts, after a byte order mark and white space, with `{` or `[`.
fn starts_like_json(head: &[u8]) -> bool {
    matches!(crate::formats::text::text_start(head).first(), Some(b'{' | b'['))
}

/// A PRONOM format as the signature file names it.
fn pronom_format(f: &FileFormat) -> Format {
    Format {
        name: f.name.clone(),
        version: (!f.version.is_empty()).then(|| f.version.clone()),
        pronom: Some(f.puid.clone()),
    }
}

/// The declared type, lower-case, without parameters, aliases resolved.
fn normalized(declared: &str) -> String {
    let t = declared.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match ALIASES.iter().find(|(a, _)| *a == t) {
        Some((_, canonical)) => canonical.to_string(),
        None => t,
    }
}

/// Text types: their PRONOM signatures are optional markers (`<html`, `<?xml`) that real
/// pages need not carry, so no match says nothing against them.
fn is_text(t: &str) -> bool {
    t.starts_with("text/")
        || t.ends_with("+xml")
        || t.ends_with("/xml")
        || t.ends_with("json")
        || t.ends_with("javascript")
}

/// Whether PRONOM lists `f` under the (normalized) type `t`, or lists no type for it at all.
fn lists_type(f: &FileFormat, t: &str) -> bool {
    f.mime_types.is_empty() || f.mime_types.iter().any(|m| normalized(m) == t)
}

/// What limits a result: signatures left unresolved, a container not looked into or
/// unreadable.
fn caveat_of(found: &Examined<'_>) -> Option<String> {
    let container = match &found.container {
        ContainerOutcome::NotRead(kind) => {
            Some(format!("what the {kind} holds was not looked into"))
        }
        ContainerOutcome::Unreadable { kind, why } => {
            Some(format!("the {kind} is unreadable: {why}"))
        }
        _ => None,
    };
    let parts: Vec<String> = found.incomplete.iter().cloned().chain(container).collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The verdict on the declared type `t` (normalized) when the bytes match `found` by
/// signature: contradicted when PRONOM lists none of them under it (a format that lists no
/// type at all, and markup for markup, count as listing it).
fn signature_verdict(t: &str, found: &[&FileFormat]) -> Verdict {
    if GENERIC_TYPES.contains(&t) {
        return Verdict::Consistent;
    }
    let lists = |f: &FileFormat| f.mime_types.iter().any(|m| normalized(m) == t);
    let markup = |f: &FileFormat| f.mime_types.iter().any(|m| MARKUP.contains(&m.as_str()));
    if found.iter().any(|f| lists(f) || f.mime_types.is_empty())
        || (MARKUP.contains(&t) && found.iter().any(|f| markup(f)))
    {
        return Verdict::Consistent;
    }
    let names: Vec<String> = found.iter().map(|f| format!("{} ({})", f.puid, f.name)).collect();
    let why = format!("declared {t}; the bytes match {}", names.join(", "));
    // HTML and XML signatures are markers (`<html`, `<?xml`) a JSON or JavaScript payload may
    // hold in a string: they do not rule a text type out.
    if is_text(t) && found.iter().all(|f| markup(f)) {
        return Verdict::NotConfirmed(format!(
            "{why}, whose signatures a text of another kind can hold"
        ));
    }
    Verdict::Contradicted(why)
}

/// The verdict on the declared type `t` of a container (ZIP, OOXML, OLE2), given what looking
/// inside it gave: a DOCX declared as `application/zip` is one (consistent); a ZIP whose
/// contents were not read, or matched no container signature, does not rule out the format
/// declared for it (not confirmed, never contradicted).
fn container_verdict(
    sigs: &Signatures,
    t: &str,
    container: &ContainerOutcome,
    verdict: Verdict,
) -> Verdict {
    let Verdict::Contradicted(why) = verdict else { return verdict };
    let lists = |f: &&FileFormat| f.mime_types.iter().any(|m| normalized(m) == t);
    let why_open = match container {
        ContainerOutcome::NotContainer => return Verdict::Contradicted(why),
        ContainerOutcome::Matched(kind) => {
            return match sigs.container_formats(*kind).iter().any(lists) {
                true => Verdict::Consistent,
                false => Verdict::Contradicted(why),
            };
        }
        ContainerOutcome::NotRead(kind) => format!("what the {kind} holds was not looked into"),
        ContainerOutcome::Unmatched(kind) => {
            format!("what the {kind} holds matches no container signature")
        }
        ContainerOutcome::Unreadable { kind, why } => format!("the {kind} is unreadable: {why}"),
    };
    Verdict::NotConfirmed(format!("{why}; {why_open}"))
}

/// A verdict when some signature was left unresolved (a search bound was reached, `why`): the
/// bytes cannot then rule the declared type out, since the unresolved format might be it.
fn unresolved_verdict(verdict: Verdict, why: &str) -> Verdict {
    match verdict {
        Verdict::Consistent => Verdict::Consistent,
        Verdict::Contradicted(c) | Verdict::NotConfirmed(c) => {
            Verdict::NotConfirmed(format!("{c}; not ruled out: {why}"))
        }
    }
}

/// The verdict on the declared type `t` (normalized) when no signature matches (`text`: the
/// bytes' character class, when they are text): never contradicted, since a search that finds
/// nothing rules nothing out; not confirmed, and why, unless the type claims nothing.
fn no_match_verdict(
    signed_types: &HashMap<String, usize>,
    t: &str,
    text: Option<TextKind>,
) -> Verdict {
    if GENERIC_TYPES.contains(&t) {
        return Verdict::Consistent;
    }
    if is_text(t) {
        return Verdict::NotConfirmed(format!(
            "declared {t}; no signature matches and the bytes are not text"
        ));
    }
    let of_type = signed_types.get(t).copied().unwrap_or(0);
    let bytes = text.map(|k| format!(" (the bytes are {k} text)")).unwrap_or_default();
    Verdict::NotConfirmed(match of_type {
        0 => format!("declared {t}; no PRONOM format of that type has a signature{bytes}"),
        n => format!(
            "declared {t}; none of the {n} PRONOM formats of that type with a signature matches{bytes}"
        ),
    })
}

/// For each type (normalized), how many of the formats with a signature list it (a format
/// counted once per type, however many of its MIME types normalize to it).
fn signed_types(sigs: &Signatures) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for f in sigs.formats().iter().filter(|f| !f.signature_ids.is_empty()) {
        let mut types: Vec<String> = f.mime_types.iter().map(|m| normalized(m)).collect();
        types.sort_unstable();
        types.dedup();
        for t in types {
            *counts.entry(t).or_insert(0) += 1;
        }
    }
    counts
}

/// A run's identification results, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Payloads identified.
    pub payloads: u64,
    /// Payloads that matched no signature and are not text.
    pub unidentified: u64,
    /// Payloads that matched no signature and are text: named by their content
    /// (`formats::webtext`).
    pub text: u64,
    /// Payloads several formats survived for.
    pub several: u64,
    /// Payloads whose bytes contradict the declared type.
    pub contradicted: u64,
    /// Payloads whose bytes do not confirm the declared type (and do not rule it out).
    pub not_confirmed: u64,
    /// Empty payloads (0 bytes) of records identification looks at: counted, not identified.
    pub empty: u64,
    /// Payloads by PUID (each match counted).
    pub by_puid: BTreeMap<String, u64>,
}

impl Tally {
    /// Counts one result.
    pub(crate) fn add(&mut self, id: &Identification) {
        self.payloads += 1;
        self.unidentified += u64::from(id.matches.is_empty());
        self.text += u64::from(id.text.is_some());
        self.several += u64::from(id.matches.len() > 1);
        self.contradicted += u64::from(id.verdict.contradiction().is_some());
        self.not_confirmed += u64::from(id.verdict.not_confirmed().is_some());
        for m in &id.matches {
            if let Some(p) = &m.pronom {
                *self.by_puid.entry(p.clone()).or_default() += 1;
            }
        }
    }

    /// Adds another run's counts.
    pub(crate) fn merge(&mut self, other: &Tally) {
        self.payloads += other.payloads;
        self.unidentified += other.unidentified;
        self.text += other.text;
        self.several += other.several;
        self.contradicted += other.contradicted;
        self.not_confirmed += other.not_confirmed;
        self.empty += other.empty;
        for (p, n) in &other.by_puid {
            *self.by_puid.entry(p.clone()).or_default() += n;
        }
    }

    /// The event's outcome detail: counts, then the most frequent formats.
    pub(crate) fn summary(&self) -> String {
        let mut top: Vec<(&String, &u64)> = self.by_puid.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let shown: Vec<String> = top.iter().take(10).map(|(p, n)| format!("{p}: {n}")).collect();
        format!(
            "{} payload(s) identified: {} matched no signature and are not text, {} matched no signature and are text named by their content, {} matched several formats, {} contradict the type the harvest declared, {} do not confirm it; {} empty payload(s) (0 bytes) counted, not identified{}{}",
            self.payloads,
            self.unidentified,
            self.text,
            self.several,
            self.contradicted,
            self.not_confirmed,
            self.empty,
            if shown.is_empty() { "" } else { "; " },
            shown.join(", ")
        )
    }

    /// The counts a [`Tally::summary`] states, read back: the formats it lists are the ten most
    /// frequent only. `None` unless `note` is exactly what `summary` writes for them (a note
    /// edited by hand or written by another version is shown as it is, not half read).
    pub(crate) fn from_summary(note: &str) -> Option<Tally> {
        let mut parts = note.split("; ");
        let counts: Vec<u64> =
            parts.next()?.split([':', ',']).map(leading_number).collect::<Option<_>>()?;
        let [payloads, unidentified, text, several, contradicted, not_confirmed] = counts[..]
        else {
            return None;
        };
        let empty = leading_number(parts.next()?)?;
        let mut by_puid = BTreeMap::new();
        for entry in parts.next().map(|l| l.split(", ").collect::<Vec<_>>()).unwrap_or_default() {
            let (puid, n) = entry.rsplit_once(": ")?;
            by_puid.insert(puid.to_string(), n.parse().ok()?);
        }
        let tally = Tally {
            payloads,
            unidentified,
            text,
            several,
            contradicted,
            not_confirmed,
            empty,
            by_puid,
        };
        (parts.next().is_none() && tally.summary() == note).then_some(tally)
    }
}

/// The number a clause of a [`Tally::summary`] starts with.
fn leading_number(clause: &str) -> Option<u64> {
    clause.trim_start().split(' ').next()?.parse().ok()
}

/// The pipeline stage: every payload of a batch identified (in parallel), from the bytes held
/// when they are, else streamed from the source (only windows kept), and counted. Items with
/// no payload of their own, and records that are no capture (`warcinfo`, `metadata`,
/// `request`, `revisit`), are left alone.
pub(crate) struct IdentifyStage {
    identifier: Identifier,
    /// What this stage identified so far.
    pub tally: Tally,
}

impl IdentifyStage {
    pub(crate) fn new(identifier: Identifier) -> IdentifyStage {
        IdentifyStage { identifier, tally: Tally::default() }
    }

    /// The identifier it runs.
    pub(crate) fn identifier(&self) -> Identifier {
        self.identifier
    }
}

impl IdentifyStage {
    /// [`Stage::run`] on the calling thread alone, not the worker pool: for a thread of its
    /// own that identifies while the pool's threads do other work (a migration's, which
    /// compress).
    pub(crate) fn run_here(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError> {
        let identifier = self.identifier;
        let results = batch.iter().map(|s| identify_staged(&identifier, s)).collect();
        self.attach(batch, results)
    }

    /// Each result to its item, in order, and counted; the first failure, in order, fails the
    /// batch.
    fn attach(
        &mut self,
        batch: &mut [StagedItem],
        results: Vec<Result<Option<Identification>, StageError>>,
    ) -> Result<(), StageError> {
        for (s, r) in batch.iter_mut().zip(results) {
            s.identification = r?;
            self.tally.empty += u64::from(is_empty_payload(&s.item));
            if let Some(id) = &s.identification {
                self.tally.add(id);
            }
        }
        Ok(())
    }
}

impl Stage for IdentifyStage {
    fn run(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError> {
        let identifier = self.identifier;
        let results = batch.par_iter().map(|s| identify_staged(&identifier, s)).collect();
        self.attach(batch, results)
    }
}

/// The declared type of an item's payload, when it is one identification looks at: a capture,
/// or a `response` or `resource` record with a payload.
fn declared_type(item: &Item) -> Option<String> {
    let capture = |t: &str| t == "response" || t == "resource";
    match item {
        Item::Capture(c) => Some(c.payload_mime()),
        Item::Stored(r) if capture(&r.warc_type) => r.file.content.as_ref().map(|c| c.mime.clone()),
        Item::Mapped(m) if capture(&m.mapped.spec.warc_type) => Some(m.mapped.payload_mime.clone()),
        _ => None,
    }
}

/// Whether an item's payload is one identification looks at but empty: counted, there being
/// nothing to identify.
fn is_empty_payload(item: &Item) -> bool {
    item.payload_len() == 0 && declared_type(item).is_some()
}

/// One item's identification, from its held bytes, its record in memory or its stream; its
/// content, when its HTTP response sent it content-encoded.
fn identify_staged(i: &Identifier, s: &StagedItem) -> Result<Option<Identification>, StageError> {
    let id = identify_whole_or_cut(i, s)?;
    Ok(match truncation(&s.item) {
        Some(reason) => id.map(|id| id.of_truncated_payload(reason)),
        None => id,
    })
}

/// Why an item's payload is stored shorter than it was sent (`WARC-Truncated`), when it is.
fn truncation(item: &Item) -> Option<&str> {
    match item {
        Item::Capture(c) => c.truncated.as_deref(),
        Item::Stored(r) => r.truncated.as_deref(),
        Item::Mapped(m) => m.mapped.spec.truncated.as_deref(),
        Item::Between(_) => None,
    }
}

/// [`identify_staged`] of the bytes stored, whole or not.
fn identify_whole_or_cut(
    i: &Identifier,
    s: &StagedItem,
) -> Result<Option<Identification>, StageError> {
    let Some(declared) = declared_type(&s.item) else { return Ok(None) };
    if s.item.payload_len() == 0 {
        return Ok(None);
    }
    let io = |source| StageError::Io { path: s.item.origin(), source };
    let coding = payload_coding(&s.item).map_err(io)?;
    let in_memory = match &s.item {
        Item::Mapped(m) => s.held.as_deref().or_else(|| m.payload_bytes()),
        _ => s.held.as_deref(),
    };
    if let Some(bytes) = in_memory {
        return match coding {
            Coding::Identity => Ok(Some(i.identify_bytes(&declared, bytes))),
            _ => i.identify_encoded(&declared, &coding, bytes).map(Some).map_err(io),
        };
    }
    let Some(r) = s.item.open_payload().map_err(io)? else { return Ok(None) };
    i.identify_encoded(&declared, &coding, r).map(Some).map_err(io)
}

/// The `Content-Encoding` an item's HTTP response header applies to its payload (`Identity`
/// for an item with no HTTP header, or whose header cannot be read on its own).
fn payload_coding(item: &Item) -> io::Result<Coding> {
    let header = match item {
        Item::Capture(c) => {
            return Ok(c.http_header.as_deref().map_or(Coding::Identity, Coding::of_header));
        }
        Item::Stored(r) => stored_http_header(r)?,
        Item::Mapped(m) => mapped_http_header(m)?,
        Item::Between(_) => None,
    };
    Ok(header.as_deref().map_or(Coding::Identity, Coding::of_header))
}

/// The HTTP header of a stored `response` record: the bytes between its WARC header and its
/// payload (`None` when the record shares its gzip member, or is no response).
fn stored_http_header(r: &super::StoredRecord) -> io::Result<Option<Vec<u8>>> {
    let (Some(bytes), Some(c)) = (&r.bytes, &r.file.content) else { return Ok(None) };
    if r.warc_type != "response" || c.range.begin <= r.header_len {
        return Ok(None);
    }
    let stored = bytes.reader(0, bytes.len());
    let end = c.range.begin.min(r.header_len + MAX_HTTP_HEADER_LEN as u64);
    let head = crate::formats::warc::stored::record_head(stored, r.file.compressed, end)?;
    Ok(Some(head.get(r.header_len as usize..).unwrap_or_default().to_vec()))
}

/// The HTTP header of a mapped ARC record: its block before the payload.
fn mapped_http_header(
    m: &crate::formats::arc_to_warc::MappedRecord,
) -> io::Result<Option<Vec<u8>>> {
    let len = m.mapped.payload_offset.min(MAX_HTTP_HEADER_LEN as u64);
    if len == 0 {
        return Ok(None);
    }
    match &m.block {
        RecordBlock::Inline(b) => Ok(Some(b[..(len as usize).min(b.len())].to_vec())),
        RecordBlock::Shared(range) => {
            let mut head = Vec::new();
            range.reader().take(len).read_to_end(&mut head)?;
            Ok(Some(head))
        }
    }
}

/// Records what identification found of a record's payload (`id`) in its METS description
/// (`mode`): on its payload, on its bytestream object when it is described anyway, and, where
/// the mode or a contradiction calls for it, by describing it (as `oid`, with no events of its
/// own).
pub(crate) fn record_identified(
    mut rf: crate::model::RecordFile,
    oid: impl FnOnce(&crate::model::RecordFile) -> String,
    id: Option<Identification>,
    mode: IdentifyMode,
) -> crate::model::RecordFile {
    use crate::model::{DescribedBytestream, PremisObject};
    let Some(id) = id else { return rf };
    let describe = mode == IdentifyMode::All || id.verdict.contradiction().is_some();
    let object_id = match (&rf.described, describe && mode != IdentifyMode::None) {
        (None, true) => Some(oid(&rf)),
        _ => None,
    };
    let Some(content) = rf.content.as_mut() else { return rf };
    content.identification = Some(id.clone());
    match (rf.described.as_mut(), object_id) {
        (Some(d), _) => d.object.identification = Some(id),
        (None, Some(object_id)) => {
            let object = PremisObject {
                id_type: "local".into(),
                id: object_id,
                size: content.range.len,
                sha512: content.sha512.clone(),
                sha256: None,
                format: Format { name: content.mime.clone(), version: None, pronom: None },
                identification: Some(id),
                original_name: rf.capture.as_ref().map(|c| c.uri.clone()),
                significant_properties: vec![],
                relationships: vec![],
                events: vec![],
            };
            rf.described = Some(DescribedBytestream { object, events: vec![] });
        }
        (None, None) => {}
    }
    rf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identifier() -> Identifier {
        Identifier::shipped().unwrap()
    }

    const GIF: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";

    #[test]
    fn a_gif_declared_as_a_gif_is_identified_by_signature_and_consistent() {
        let id = identifier().identify_bytes("image/gif", GIF);
        assert_eq!(id.matches.len(), 1, "{id:?}");
        assert_eq!(id.matches[0].pronom.as_deref(), Some("fmt/4"));
        assert_eq!(id.basis, Some(IdentificationBasis::Signature));
        assert_eq!(id.verdict, Verdict::Consistent);
        assert!(id.method.contains("DROID signature file V"), "{}", id.method);
    }

    #[test]
    fn markup_inside_json_or_javascript_never_contradicts_the_declared_type() {
        let json = br#"{"body": "<html><head><title>t</title></head><body></body></html>"}"#;
        let js = b"var t = \"<html><body></body></html>\"; document.write(t);";
        for (declared, bytes) in [("application/json", &json[..]), ("application/javascript", js)] {
            let id = identifier().identify_bytes(declared, bytes);
            assert!(id.verdict.contradiction().is_none(), "{declared}: {:?}", id.verdict);
        }
        // Markup declared as an image still is a contradiction.
        let id = identifier().identify_bytes("image/png", &json[9..]);
        assert!(id.verdict.contradiction().is_some() || id.matches.is_empty(), "{id:?}");
    }

    #[test]
    fn a_gif_declared_as_a_png_or_a_jpeg_is_contradicted() {
        for (declared, t) in [("image/png", "image/png"), ("image/JPEG; charset=x", "image/jpeg")] {
            let id = identifier().identify_bytes(declared, GIF);
            let c = id.verdict.contradiction().expect("contradicted");
            let want = format!("declared {t}; the bytes match fmt/4 (Graphics Interchange Format)");
            assert!(c.starts_with(&want), "{c}");
        }
    }

    #[test]
    fn no_match_never_contradicts_it_only_does_not_confirm() {
        // A declared PNG that no signature matches: nothing rules PNG out (a search may stop
        // early), so it is not confirmed, and the note says why.
        let id = identifier().identify_bytes("image/png", b"\x00\x01\x02 not text");
        assert!(id.matches.is_empty() && id.text.is_none() && id.basis.is_none(), "{id:?}");
        let why = id.verdict.not_confirmed().expect("not confirmed");
        assert!(why.starts_with("declared image/png; none of the "), "{why}");
        assert!(why.ends_with("with a signature matches"), "{why}");
        // What a 2004 ARC holds for 189 redacted payloads declared image/jpeg: plain text.
        let id = identifier().identify_bytes("image/jpeg", b"This file has been removed.\n");
        assert_eq!(id.matches[0].pronom.as_deref(), Some("x-fmt/111"));
        assert_eq!(id.text, Some(TextKind::Ascii));
        let why = id.verdict.not_confirmed().expect("not confirmed");
        assert!(why.starts_with("declared image/jpeg; none of the "), "{why}");
        assert!(why.ends_with("(the bytes are ASCII text)"), "{why}");
        // A signature match is never second-guessed by the characters: HTML is ASCII too.
        let page = b"<!DOCTYPE html><html><head><title>x</title></head></html>";
        let id = identifier().identify_bytes("text/html", page);
        assert!(id.text.is_none() && !id.matches.is_empty(), "{id:?}");
    }

    #[test]
    fn the_types_counted_once_give_what_a_count_per_payload_gave() {
        // The count a no-match verdict states, made once for every type: for every type the
        // signature file lists (and aliases, parameters and case), what counting the formats
        // for each payload gave.
        let sigs = Signatures::shipped().unwrap();
        let once = signed_types(sigs);
        let mut types: Vec<String> = sigs
            .formats()
            .iter()
            .flat_map(|f| f.mime_types.iter().map(|m| normalized(m)))
            .collect();
        types.extend(["image/jpg", "IMAGE/PNG; q=1", "application/x-pdf"].map(normalized));
        types.sort_unstable();
        types.dedup();
        assert!(types.len() > 100, "{}", types.len());
        for t in &types {
            let lists = |f: &FileFormat| f.mime_types.iter().any(|m| normalized(m) == *t);
            let per_payload =
                sigs.formats().iter().filter(|f| lists(f) && !f.signature_ids.is_empty()).count();
            assert_eq!(once.get(t).copied().unwrap_or(0), per_payload, "{t}");
        }
        assert!(once["image/jpeg"] > 1 && once["application/pdf"] > 1);
    }

    #[test]
    fn text_and_generic_types_are_never_contradicted_by_text() {
        let i = identifier();
        for t in
            ["text/html", "text/plain", "application/javascript", "application/octet-stream", ""]
        {
            assert_eq!(i.identify_bytes(t, b"hello").verdict.contradiction(), None, "{t}");
        }
        assert_eq!(i.identify_bytes("text/plain", b"hello").verdict, Verdict::Consistent);
        // HTML served as XHTML matches HTML's signatures: the same kind of payload.
        let page = b"<!DOCTYPE html><html><head><title>x</title></head></html>";
        let id = i.identify_bytes("application/xhtml+xml", page);
        assert!(!id.matches.is_empty());
        assert_eq!(id.verdict, Verdict::Consistent, "{id:?}");
    }

    /// The PUID, basis and verdict of a payload without a name, held and streamed alike.
    fn web(declared: &str, bytes: &[u8]) -> (String, String, Verdict) {
        let i = identifier();
        let held = i.identify_bytes(declared, bytes);
        assert_eq!(held, i.identify_reader(declared, bytes).unwrap(), "{declared}");
        let Some(IdentificationBasis::Text(basis)) = held.basis else { panic!("{held:?}") };
        (held.matches[0].pronom.clone().unwrap(), basis, held.verdict)
    }

    #[test]
    fn web_text_payloads_are_named_by_their_content_as_far_as_it_goes() {
        let (puid, basis, verdict) = web("text/css", b"a:hover { color: red; }\n");
        assert_eq!((puid.as_str(), &verdict), ("x-fmt/224", &Verdict::Consistent));
        assert_eq!(
            basis,
            "declared text/css consistent with the content (no signature matches; CSS syntax seen in the first 4096 bytes); its first bytes are ASCII text"
        );
        let js = web("text/javascript", b"window.onload = function () { return 1; };");
        assert_eq!((js.0.as_str(), &js.2), ("x-fmt/423", &Verdict::Consistent));
        let json = web("application/json", b"{\"k\": [true, 1.5, \"v\"]}");
        assert_eq!((json.0.as_str(), &json.2), ("fmt/817", &Verdict::Consistent));
        // JSON that does not parse is plain text; the declared type is not confirmed.
        let (puid, basis, verdict) = web("application/json", b"{\"k\": [true,");
        assert_eq!(puid, "x-fmt/111");
        assert!(basis.contains("does not parse as JSON"), "{basis}");
        assert!(matches!(verdict, Verdict::NotConfirmed(_)), "{verdict:?}");
        let html = web("text/html", b"<p>Hello <b>world</b></p>");
        assert_eq!((html.0.as_str(), &html.2), ("fmt/96", &Verdict::Consistent));
        let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" version="1.0"><g/></svg>"#;
        assert_eq!(web("image/svg+xml", svg).0, "fmt/91");
        let (puid, basis, verdict) = web("text/plain", b"Vi ses p\xe5 l\xf8rdag.\n");
        assert_eq!((puid.as_str(), &verdict), ("x-fmt/111", &Verdict::Consistent));
        assert!(basis.ends_with("its first bytes are ISO-8859 text"), "{basis}");
    }

    #[test]
    fn a_streamed_json_payload_is_parsed_whole_up_to_the_limit() {
        let i = identifier();
        let mut big = b"[".to_vec();
        big.extend(std::iter::repeat_n(&b"1,"[..], JSON_LIMIT / 2).flatten());
        big.extend_from_slice(b"1]");
        assert!(big.len() > JSON_LIMIT);
        let streamed = i.identify_reader("application/json", &big[..]).unwrap();
        assert_eq!(streamed.matches[0].pronom.as_deref(), Some("x-fmt/111"));
        assert_eq!(streamed, i.identify_bytes("application/json", &big));
        let small = &big[big.len() - 1000..];
        let small = [b"[".as_slice(), small].concat();
        let streamed = i.identify_reader("application/json", &small[..]).unwrap();
        assert_eq!(streamed.matches[0].pronom.as_deref(), Some("fmt/817"), "{streamed:?}");
    }

    #[test]
    fn a_streamed_payload_gets_what_the_same_bytes_in_memory_get() {
        let i = identifier();
        let mut big = GIF.to_vec();
        big.resize(3 << 20, 0);
        big.extend_from_slice(b"\x00;");
        let held = i.identify_bytes("image/gif", &big);
        let streamed = i.identify_reader("image/gif", &big[..]).unwrap();
        assert_eq!(held, streamed);
    }

    fn record(id: &str) -> crate::model::RecordFile {
        use crate::model::{ByteRange, ContentFile, RecordFile, UrlCapture};
        RecordFile {
            refers: None,
            record_id: id.into(),
            member: ByteRange { begin: 0, len: 10 },
            compressed: true,
            content: Some(ContentFile {
                range: ByteRange { begin: 5, len: 28 },
                sha512: "ab".into(),
                mime: "image/jpeg".into(),
                identification: None,
            }),
            described: None,
            page: None,
            capture: Some(UrlCapture {
                uri: "http://e.org/a.jpg".into(),
                date: "2004-01-01T00:00:00Z".into(),
                date_inferred: false,
            }),
        }
    }

    #[test]
    fn what_each_mode_records_of_a_record() {
        let i = identifier();
        let oid = |r: &crate::model::RecordFile| format!("c#{}", r.record_id);
        let redacted = || Some(i.identify_bytes("image/jpeg", b"This file has been removed.\n"));
        let contradicted = || Some(i.identify_bytes("image/jpeg", GIF));
        let gif = || Some(i.identify_bytes("image/gif", GIF));
        // A contradiction is a reason to describe (P4.7), with both types and no events.
        let r = record_identified(record("r1"), oid, contradicted(), IdentifyMode::Described);
        let d = r.described.expect("described for its contradiction");
        assert_eq!(d.object.id, "c#r1");
        assert_eq!(d.object.original_name.as_deref(), Some("http://e.org/a.jpg"));
        assert_eq!(d.object.format.name, "image/jpeg");
        assert!(d.object.identification.unwrap().verdict.contradiction().is_some());
        assert!(d.events.is_empty() && d.object.events.is_empty());
        // A type only not confirmed is no such reason.
        let r = record_identified(record("r0"), oid, redacted(), IdentifyMode::Described);
        assert!(r.described.is_none());
        // Nothing to say: not described by default; described with its PUID under `all`.
        let r = record_identified(record("r2"), oid, gif(), IdentifyMode::Described);
        assert!(r.described.is_none());
        assert!(r.content.unwrap().identification.is_some(), "kept for a later description");
        let r = record_identified(record("r3"), oid, gif(), IdentifyMode::All);
        let puid = r.described.unwrap().object.identification.unwrap().matches[0].pronom.clone();
        assert_eq!(puid.as_deref(), Some("fmt/4"));
        // Described for another reason: the identification joins that description.
        let mut described = record_identified(record("r4"), oid, gif(), IdentifyMode::All);
        described.described.as_mut().unwrap().object.id = "other".into();
        let r = record_identified(described, oid, redacted(), IdentifyMode::Described);
        let o = r.described.unwrap().object;
        assert_eq!(o.id, "other");
        assert_eq!(o.identification.unwrap().text, Some(TextKind::Ascii));
        // Not identified: left as it is.
        assert_eq!(record_identified(record("r5"), oid, None, IdentifyMode::All), record("r5"));
    }

    #[test]
    fn the_tally_counts_and_summarises() {
        let i = identifier();
        let mut t = Tally::default();
        t.add(&i.identify_bytes("image/gif", GIF));
        t.add(&i.identify_bytes("image/jpeg", b"removed"));
        t.add(&i.identify_bytes("image/jpeg", b"\x00removed"));
        t.add(&i.identify_bytes("image/png", GIF));
        t.empty += 1;
        let mut u = Tally::default();
        u.merge(&t);
        let counts = (u.payloads, u.unidentified, u.text, u.contradicted, u.not_confirmed, u.empty);
        assert_eq!(counts, (4, 1, 1, 1, 2, 1));
        assert_eq!(
            u.summary(),
            "4 payload(s) identified: 1 matched no signature and are not text, 1 matched no signature and are text named by their content, 0 matched several formats, 1 contradict the type the harvest declared, 2 do not confirm it; 1 empty payload(s) (0 bytes) counted, not identified; fmt/4: 2, x-fmt/111: 1"
        );
    }

    #[test]
    fn a_summary_reads_back_only_when_exactly_as_written() {
        let mut t = Tally {
            payloads: 14,
            unidentified: 1,
            text: 2,
            several: 0,
            contradicted: 3,
            not_confirmed: 4,
            empty: 5,
            ..Default::default()
        };
        for i in 0..12 {
            t.by_puid.insert(format!("fmt/{i}"), 12 - i);
        }
        let note = t.summary();
        let back = Tally::from_summary(&note).unwrap();
        assert_eq!(
            (back.payloads, back.contradicted, back.not_confirmed, back.empty),
            (14, 3, 4, 5)
        );
        assert_eq!(back.by_puid.len(), 10, "the note lists the ten most frequent");
        assert_eq!(back.summary(), note);
        let none = Tally { payloads: 1, ..Default::default() };
        assert_eq!(Tally::from_summary(&none.summary()).unwrap().by_puid.len(), 0);
        assert!(Tally::from_summary(&note.replace("several formats", "many formats")).is_none());
        assert!(Tally::from_summary(&format!("{note} (edited)")).is_none());
        assert!(Tally::from_summary("").is_none());
    }
}
