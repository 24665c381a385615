//! The one METS reader: every part of webaip that reads a METS document (`validate`, `audit`,
//! `store`) opens it here.
//!
//! [`MetsReader`] streams a document through quick-xml's namespace-aware reader and yields
//! [`Event`]s: elements with their namespace, local name and attributes (each resolved by its
//! own namespace, so `xlink:href` is found whatever prefix binds XLink), end tags, and text with
//! character references and XML's five predefined entities resolved. Every event carries a
//! [`Pos`]: its byte offset and the 1-based line it starts on, counted as the bytes pass (no
//! second read of the file), so every caller says "line N" the same way.
//!
//! What a METS package never holds is refused, never acted on: a document type declaration
//! (the entities it declares are neither expanded nor loaded), a reference to any entity but
//! the five predefined ones, and a NUL character. The reader yields each as
//! [`Event::Refused`] and goes on, so `validate` can report it with everything else;
//! [`MetsReader::strict`] readers (audit, store) stop at the first with [`MetsError::Refused`].
//!
//! Memory is bounded by what quick-xml holds for one event (one tag, one run of text) plus
//! the offsets of at most [`MAX_NEWLINES_KEPT`] line ends inside that event.

use std::io::{self, BufRead, Read};

use quick_xml::NsReader;
use quick_xml::events::{BytesRef, BytesStart, Event as XmlEvent};
use quick_xml::name::ResolveResult;

/// The METS namespace.
pub(crate) const NS_METS: &str = "http://www.loc.gov/METS/";
/// The XLink namespace (`xlink:href` of `FLocat`).
pub(crate) const NS_XLINK: &str = "http://www.w3.org/1999/xlink";
/// PREMIS 3.
pub(crate) const NS_PREMIS3: &str = "http://www.loc.gov/premis/v3";
/// PREMIS 2.
pub(crate) const NS_PREMIS2: &str = "info:lc/xmlns/premis-v2";
/// MODS.
pub(crate) const NS_MODS: &str = "http://www.loc.gov/mods/v3";

/// Line ends inside one event whose offsets are kept (to give an error inside a long comment
/// or tag its line); past this many, later offsets of that event get the last line known.
pub(crate) const MAX_NEWLINES_KEPT: usize = 1 << 16;
/// Longest event read (a tag with its attributes, a run of text): quick-xml holds an event
/// whole, so this bounds the reader's memory whatever the document.
pub(crate) const MAX_EVENT_BYTES: u64 = 8 << 20;

/// Where something is in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// Byte offset from the start of the file.
    pub offset: u64,
    /// Line (1-based) the byte is on.
    pub line: u64,
}

impl Pos {
    /// The start of the document: for findings about the whole document.
    pub(crate) const START: Pos = Pos { offset: 0, line: 1 };
}

impl Default for Pos {
    fn default() -> Self {
        Pos::START
    }
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} (byte {})", self.line, self.offset)
    }
}

/// One attribute: its namespace (empty for an unprefixed one), local and qualified name, and
/// its value with references resolved and whitespace normalized as XML 1.0 says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attr {
    pub ns: String,
    pub local: String,
    pub qname: String,
    pub value: String,
}

/// A start (or empty) tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Element {
    /// Namespace name; empty when the element is in no namespace (or its prefix is unbound).
    pub ns: String,
    pub local: String,
    pub attrs: Vec<Attr>,
}

impl Element {
    /// The value of the unprefixed attribute `local` (METS's own attributes: `ID`, `USE`...).
    pub(crate) fn attr(&self, local: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.ns.is_empty() && a.local == local).map(|a| a.value.as_str())
    }

    /// The value of attribute `local` in namespace `ns`.
    pub(crate) fn attr_ns(&self, ns: &str, local: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.ns == ns && a.local == local).map(|a| a.value.as_str())
    }

    /// `xlink:href`, by namespace.
    pub(crate) fn href(&self) -> Option<&str> {
        self.attr_ns(NS_XLINK, "href")
    }

    /// True for element `local` of namespace `ns`.
    pub(crate) fn is(&self, ns: &str, local: &str) -> bool {
        self.ns == ns && self.local == local
    }
}

/// What a METS package never holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetsRefusal {
    /// A document type declaration.
    Doctype,
    /// A reference to an entity other than XML's five predefined ones.
    Entity(String),
    /// A NUL character.
    Nul,
    /// One event (a tag with its attributes, a run of text, a comment) longer than
    /// `MAX_EVENT_BYTES`.
    TooLong,
}

impl std::fmt::Display for MetsRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetsRefusal::Doctype => f.write_str(
                "a document type declaration (DOCTYPE): a METS package has none, and the entities one declares are neither expanded nor loaded",
            ),
            MetsRefusal::Entity(name) => write!(
                f,
                "entity reference &{name};: not a predefined XML entity; entities are not expanded"
            ),
            MetsRefusal::Nul => f.write_str("a NUL character: not allowed anywhere in XML"),
            MetsRefusal::TooLong => write!(
                f,
                "a tag, attribute value or run of text longer than {MAX_EVENT_BYTES} bytes: not read further (no METS of a package holds one; reading it whole would take memory in proportion)"
            ),
        }
    }
}

/// One event of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// `<x ...>`.
    Start(Element, Pos),
    /// `<x .../>`: callers that track nesting treat it as a start and an end at `Pos`.
    Empty(Element, Pos),
    /// `</x>`: namespace and local name.
    End { ns: String, local: String, pos: Pos },
    /// Character data (text, CDATA, a resolved reference), line ends normalized to LF. One
    /// run of text may come as several events.
    Text(String, Pos),
    /// Something refused (lenient readers only; a strict reader returns an error instead).
    Refused(MetsRefusal, Pos),
}

/// Why a document cannot be read further.
#[derive(Debug, thiserror::Error)]
pub enum MetsError {
    /// Not well-formed (or not readable: the I/O error is inside).
    #[error("{pos}: not well-formed XML: {source}")]
    Xml {
        /// Where the reader stopped.
        pos: Pos,
        /// What quick-xml says.
        #[source]
        source: quick_xml::Error,
    },
    /// Something a METS package never holds (strict readers).
    #[error("{pos}: {refusal}")]
    Refused {
        /// Where the refused construct starts.
        pos: Pos,
        /// What it is.
        refusal: MetsRefusal,
    },
    /// The document ends before its root element does, or has none: cut short (quick-xml
    /// stops at the end of the input without a word, libxml2 with a bare "-1").
    #[error("{pos}, column {column}: not well-formed XML: {unfinished}")]
    Unfinished {
        /// The line where the input ends.
        pos: Pos,
        /// The column where it ends.
        column: u64,
        /// What was left open.
        unfinished: Unfinished,
    },
}

/// How a document ends before it is whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfinished {
    /// No root element at all.
    #[error("the document ends without a root element")]
    NoRoot,
    /// Elements still open at the end.
    #[error(
        "the document ends with {open} element(s) not closed, the root <{root}> among them (cut short?)"
    )]
    Open {
        /// How many elements are open.
        open: u64,
        /// The root element's qualified name.
        root: String,
    },
}

impl MetsError {
    /// Where the reader stopped.
    pub(crate) fn pos(&self) -> Pos {
        match self {
            MetsError::Xml { pos, .. }
            | MetsError::Refused { pos, .. }
            | MetsError::Unfinished { pos, .. } => *pos,
        }
    }
}

/// Streams a METS document; see the module documentation.
pub(crate) struct MetsReader<R> {
    reader: NsReader<Counter<R>>,
    buf: Vec<u8>,
    strict: bool,
    /// Set after the end of the document (or an error): nothing more is read.
    done: bool,
    /// Elements open, and the root's qualified name once it has started.
    open: u64,
    root: Option<String>,
}

impl<R: BufRead> MetsReader<R> {
    /// A reader that yields refusals as [`Event::Refused`] and goes on (for `validate`).
    pub(crate) fn lenient(input: R) -> Self {
        let mut reader = NsReader::from_reader(Counter::new(input));
        reader.config_mut().check_end_names = true;
        MetsReader { reader, buf: Vec::new(), strict: false, done: false, open: 0, root: None }
    }

    /// A reader that stops at the first refusal with [`MetsError::Refused`].
    pub(crate) fn strict(input: R) -> Self {
        MetsReader { strict: true, ..Self::lenient(input) }
    }

    /// The next event; `Ok(None)` at the end of the document (and after an error).
    #[allow(clippy::should_implement_trait)]
    pub(crate) fn next(&mut self) -> Result<Option<Event>, MetsError> {
        match self.next_lenient() {
            Ok(Some(Event::Refused(refusal, pos))) if self.strict => {
                self.done = true;
                Err(MetsError::Refused { pos, refusal })
            }
            other => other,
        }
    }

    fn next_lenient(&mut self) -> Result<Option<Event>, MetsError> {
        loop {
            if self.done {
                return Ok(None);
            }
            self.buf.clear();
            self.reader.get_mut().tally.mark();
            let before = self.reader.buffer_position();
            let result = self.reader.read_resolved_event_into(&mut self.buf);
            let (ns, ev) = match result {
                Ok((ResolveResult::Bound(ns), ev)) => (ns.as_ref().to_string(), ev),
                Ok((_, ev)) => (String::new(), ev),
                Err(source) => {
                    self.done = true;
                    return Err(read_error(&self.reader, source));
                }
            };
            let pos = event_pos(&self.reader, before);
            let event = match ev {
                XmlEvent::Start(e) => {
                    note_root(&mut self.root, &e);
                    self.open += 1;
                    Event::Start(element(&self.reader, ns, &e), pos)
                }
                XmlEvent::Empty(e) => {
                    note_root(&mut self.root, &e);
                    Event::Empty(element(&self.reader, ns, &e), pos)
                }
                XmlEvent::End(e) => {
                    self.open = self.open.saturating_sub(1);
                    Event::End { ns, local: e.local_name().as_ref().to_string(), pos }
                }
                XmlEvent::Text(t) => Event::Text(t.xml10_content().into_owned(), pos),
                XmlEvent::CData(t) => Event::Text(t.xml10_content().into_owned(), pos),
                XmlEvent::GeneralRef(r) => match reference(&r) {
                    Ok(text) => Event::Text(text, pos),
                    Err(refusal) => Event::Refused(refusal, pos),
                },
                XmlEvent::DocType(_) => Event::Refused(MetsRefusal::Doctype, pos),
                XmlEvent::Eof => {
                    self.done = true;
                    self.check_whole()?;
                    // XML 1.0 has no NUL character, and libxml2 stops at one: a document
                    // holding one is not what it seems to be, whether or not the parser noticed.
                    match self.reader.get_ref().tally.first_nul {
                        Some(nul) => Event::Refused(MetsRefusal::Nul, nul),
                        None => return Ok(None),
                    }
                }
                // Declarations, comments, processing instructions: nothing a caller needs.
                _ => continue,
            };
            return Ok(Some(event));
        }
    }

    /// At the end of the input: an error unless the root element started and ended.
    fn check_whole(&self) -> Result<(), MetsError> {
        let unfinished = match &self.root {
            None => Unfinished::NoRoot,
            Some(_) if self.open == 0 => return Ok(()),
            Some(root) => Unfinished::Open { open: self.open, root: root.clone() },
        };
        let t = &self.reader.get_ref().tally;
        let pos = Pos { offset: t.pos, line: t.line };
        Err(MetsError::Unfinished { pos, column: t.column_at(t.pos), unfinished })
    }

    /// The column (1-based, in bytes) of `offset`, an offset of the event just read or the
    /// place an error was found in it.
    pub(crate) fn column_at(&self, offset: u64) -> u64 {
        self.reader.get_ref().tally.column_at(offset)
    }

    /// The byte offset just past the last event yielded (its end tag's `>`, its text's last
    /// byte): with the event's [`Pos`], the event's whole span in the file.
    pub(crate) fn offset(&self) -> u64 {
        self.reader.get_ref().tally.pos
    }

    /// The first NUL byte read so far, if any (also reported at the end of the document, and
    /// wanted by callers that stop early on an XML error).
    pub(crate) fn first_nul(&self) -> Option<Pos> {
        self.reader.get_ref().tally.first_nul
    }
}

/// Notes the root's name when `e` is the first element.
fn note_root(root: &mut Option<String>, e: &BytesStart<'_>) {
    if root.is_none() {
        *root = Some(e.name().as_ref().to_string());
    }
}

/// An element's namespace, local name and attributes (each resolved by its own prefix: an
/// unprefixed attribute is in no namespace).
fn element<R>(reader: &NsReader<R>, ns: String, e: &BytesStart<'_>) -> Element {
    let local = e.local_name().as_ref().to_string();
    let attrs = e
        .attributes()
        .filter_map(|a| a.ok())
        .map(|a| {
            let (resolved, local) = reader.resolver().resolve_attribute(a.key);
            let ns = match resolved {
                ResolveResult::Bound(n) => n.as_ref().to_string(),
                _ => String::new(),
            };
            Attr {
                ns,
                local: local.as_ref().to_string(),
                qname: a.key.as_ref().to_string(),
                // A value with an unknown entity reference is not one webaip can know.
                value: a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map(|v| v.into_owned())
                    .unwrap_or_default(),
            }
        })
        .collect();
    Element { ns, local, attrs }
}

/// What a character reference or one of XML's five predefined entities stands for; any other
/// entity is refused, by name (never expanded).
fn reference(r: &BytesRef<'_>) -> Result<String, MetsRefusal> {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return Ok(c.to_string());
    }
    let name = r.xml10_content();
    match name.as_ref() {
        "amp" => Ok("&".into()),
        "lt" => Ok("<".into()),
        "gt" => Ok(">".into()),
        "quot" => Ok("\"".into()),
        "apos" => Ok("'".into()),
        _ => Err(MetsRefusal::Entity(name.into_owned())),
    }
}

/// Where an event read from `before` (quick-xml's position) starts. quick-xml counts offsets
/// without a byte order mark; the counter counts every byte.
fn event_pos<R>(reader: &NsReader<Counter<R>>, before: u64) -> Pos {
    let counter = &reader.get_ref().tally;
    let bom = counter.pos.saturating_sub(reader.buffer_position());
    let offset = before.saturating_add(bom).max(counter.mark);
    Pos { offset, line: counter.line_at(offset) }
}

/// The error quick-xml stopped with, placed: an event past the bound is refused as too long.
fn read_error<R>(reader: &NsReader<Counter<R>>, source: quick_xml::Error) -> MetsError {
    let t = &reader.get_ref().tally;
    if t.too_long {
        let pos = Pos { offset: t.mark, line: t.mark_line };
        return MetsError::Refused { pos, refusal: MetsRefusal::TooLong };
    }
    // A namespace error leaves quick-xml's error offset stale: the event that failed is where
    // it is.
    let bom = t.pos.saturating_sub(reader.buffer_position());
    let at = reader.error_position().saturating_add(bom).max(t.mark);
    MetsError::Xml { pos: Pos { offset: at, line: t.line_at(at) }, source }
}

/// Passes the document through, counting bytes and lines as quick-xml consumes them and
/// noting the first NUL.
struct Counter<R> {
    inner: R,
    tally: Tally,
}

/// What the counter knows. Keeps the offsets of the line ends inside the current event (since
/// [`Tally::mark`]) so that an offset inside it has a line.
struct Tally {
    /// Bytes consumed.
    pos: u64,
    /// Line of the next byte.
    line: u64,
    /// Where the current event started, and its line.
    mark: u64,
    mark_line: u64,
    /// Offset of the first byte of the line the mark is on, and of the current line.
    mark_line_start: u64,
    line_start: u64,
    /// Offsets of the line ends consumed since `mark` (at most [`MAX_NEWLINES_KEPT`]).
    newlines: Vec<u64>,
    first_nul: Option<Pos>,
    /// Set when an event ran past [`MAX_EVENT_BYTES`].
    too_long: bool,
}

impl<R> Counter<R> {
    fn new(inner: R) -> Self {
        let tally = Tally {
            pos: 0,
            line: 1,
            mark: 0,
            mark_line: 1,
            mark_line_start: 0,
            line_start: 0,
            newlines: Vec::new(),
            first_nul: None,
            too_long: false,
        };
        Counter { inner, tally }
    }
}

impl Tally {
    /// A new event starts at the current position.
    fn mark(&mut self) {
        self.mark = self.pos;
        self.mark_line = self.line;
        self.mark_line_start = self.line_start;
        self.newlines.clear();
    }

    fn column_at(&self, offset: u64) -> u64 {
        let start = if offset >= self.pos {
            self.line_start
        } else {
            let k = self.newlines.partition_point(|&n| n < offset);
            if k > 0 { self.newlines[k - 1] + 1 } else { self.mark_line_start }
        };
        offset.saturating_sub(start) + 1
    }

    /// The line of `offset`, for an offset at or after the mark (earlier ones get the mark's
    /// line: callers keep the `Pos` of the events they need later).
    fn line_at(&self, offset: u64) -> u64 {
        if offset >= self.pos {
            return self.line;
        }
        self.mark_line + self.newlines.partition_point(|&n| n < offset) as u64
    }

    fn count(&mut self, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\n' => {
                    if self.newlines.len() < MAX_NEWLINES_KEPT {
                        self.newlines.push(self.pos + i as u64);
                    }
                    self.line += 1;
                    self.line_start = self.pos + i as u64 + 1;
                }
                0 if self.first_nul.is_none() => {
                    self.first_nul = Some(Pos { offset: self.pos + i as u64, line: self.line });
                }
                _ => {}
            }
        }
        self.pos += bytes.len() as u64;
    }
}

impl<R: BufRead> Read for Counter<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counter<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        // An event is given no more than MAX_EVENT_BYTES: past that, reading fails.
        let allowed = MAX_EVENT_BYTES.saturating_sub(self.tally.pos - self.tally.mark);
        if allowed == 0 {
            self.tally.too_long = true;
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                MetsRefusal::TooLong.to_string(),
            ));
        }
        let buf = self.inner.fill_buf()?;
        Ok(&buf[..buf.len().min(allowed as usize)])
    }

    fn consume(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        // The bytes consumed are the ones fill_buf last gave (BufRead's contract), still in
        // the inner buffer: counted without a copy.
        let seen = match self.inner.fill_buf() {
            Ok(buf) => {
                let k = n.min(buf.len());
                self.tally.count(&buf[..k]);
                k
            }
            Err(_) => 0,
        };
        self.tally.pos += (n - seen) as u64;
        self.inner.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event of `doc`, read through a small buffer so that events span refills.
    fn events(doc: &[u8], strict: bool) -> (Vec<Event>, Option<MetsError>) {
        let input = io::BufReader::with_capacity(7, doc);
        let mut r = if strict { MetsReader::strict(input) } else { MetsReader::lenient(input) };
        let mut out = Vec::new();
        loop {
            match r.next() {
                Ok(Some(e)) => out.push(e),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    /// The position of each start tag, by local name.
    fn starts(evs: &[Event]) -> Vec<(String, Pos)> {
        evs.iter()
            .filter_map(|e| match e {
                Event::Start(el, p) | Event::Empty(el, p) => Some((el.local.clone(), *p)),
                _ => None,
            })
            .collect()
    }

    /// The line of `offset` counted independently from the bytes.
    fn line_of(doc: &[u8], offset: u64) -> u64 {
        1 + doc[..offset as usize].iter().filter(|&&b| b == b'\n').count() as u64
    }

    const DOC: &str = "<?xml version=\"1.0\"?>\n<mets:mets xmlns:mets=\"http://www.loc.gov/METS/\"\n  xmlns:x=\"http://www.w3.org/1999/xlink\" OBJID=\"o\">\n<mets:fileSec>\n\n  <mets:file ID=\"F1\"><mets:FLocat x:href=\"content/a.warc.gz\" href=\"no\"/></mets:file>\n</mets:fileSec>\n<!-- a\ncomment -->\n<t>a&amp;b&#65;<![CDATA[<c>]]></t>\n</mets:mets>\n";

    #[test]
    fn offsets_and_lines_on_lf_and_crlf() {
        for doc in [DOC.to_string(), DOC.replace('\n', "\r\n")] {
            let bytes = doc.as_bytes();
            let (evs, err) = events(bytes, true);
            assert!(err.is_none(), "{err:?}");
            let s = starts(&evs);
            let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["mets", "fileSec", "file", "FLocat", "t"]);
            for (name, pos) in &s {
                // Each offset is where the tag's `<` is, and the line is that byte's.
                assert_eq!(bytes[pos.offset as usize], b'<', "{name}");
                assert!(doc[pos.offset as usize + 1..].contains(name.as_str()));
                assert_eq!(pos.line, line_of(bytes, pos.offset), "{name}");
            }
            assert_eq!(s.iter().map(|(_, p)| p.line).collect::<Vec<_>>(), [2, 4, 6, 6, 10]);
            for e in &evs {
                if let Event::End { local, pos, .. } = e {
                    assert_eq!(&bytes[pos.offset as usize..pos.offset as usize + 2], b"</");
                    assert_eq!(pos.line, line_of(bytes, pos.offset), "{local}");
                }
            }
        }
    }

    #[test]
    fn a_byte_order_mark_counts_in_offsets() {
        let doc = [b"\xef\xbb\xbf".as_slice(), DOC.as_bytes()].concat();
        let (evs, err) = events(&doc, true);
        assert!(err.is_none(), "{err:?}");
        let (_, mets) = &starts(&evs)[0];
        assert_eq!(doc[mets.offset as usize], b'<');
        assert_eq!(mets.line, 2);
    }

    #[test]
    fn namespaces_resolve_by_binding_not_prefix() {
        let (evs, _) = events(DOC.as_bytes(), true);
        let flocat = evs
            .iter()
            .find_map(|e| match e {
                Event::Empty(el, _) if el.local == "FLocat" => Some(el.clone()),
                _ => None,
            })
            .unwrap();
        assert!(flocat.is(NS_METS, "FLocat"));
        // `x:` is bound to XLink here; the unprefixed `href` is in no namespace.
        assert_eq!(flocat.href(), Some("content/a.warc.gz"));
        assert_eq!(flocat.attr("href"), Some("no"));
        let t = evs.iter().find_map(|e| match e {
            Event::Start(el, _) if el.local == "t" => Some(el.clone()),
            _ => None,
        });
        assert_eq!(t.map(|t| t.ns), Some(String::new()));
        let text: String = evs
            .iter()
            .filter_map(|e| match e {
                Event::Text(t, _) if !t.trim().is_empty() => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "a&bA<c>");
        let ends: Vec<&str> = evs
            .iter()
            .filter_map(|e| match e {
                Event::End { ns, local, .. } if ns == NS_METS => Some(local.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ends, ["file", "fileSec", "mets"]);
    }

    #[test]
    fn doctype_entities_and_nul_are_refused() {
        let doc =
            "<?xml version=\"1.0\"?>\n<!DOCTYPE m [<!ENTITY x \"EXPANDED\">]>\n<m>&x;\0</m>\n";
        let (evs, err) = events(doc.as_bytes(), false);
        assert!(err.is_none(), "{err:?}");
        let refused: Vec<(MetsRefusal, Pos)> = evs
            .iter()
            .filter_map(|e| match e {
                Event::Refused(r, p) => Some((r.clone(), *p)),
                _ => None,
            })
            .collect();
        let nul = doc.find('\0').unwrap() as u64;
        let amp = doc.find("&x;").unwrap() as u64;
        assert_eq!(
            refused,
            [
                (MetsRefusal::Doctype, Pos { offset: 22, line: 2 }),
                (MetsRefusal::Entity("x".into()), Pos { offset: amp, line: 3 }),
                (MetsRefusal::Nul, Pos { offset: nul, line: 3 }),
            ]
        );
        // Never expanded.
        assert!(!evs.iter().any(|e| matches!(e, Event::Text(t, _) if t.contains("EXPANDED"))));
        // A strict reader stops at the DOCTYPE.
        let (evs, err) = events(doc.as_bytes(), true);
        assert!(evs.iter().all(|e| !matches!(e, Event::Start(..))));
        match err {
            Some(MetsError::Refused { refusal: MetsRefusal::Doctype, pos }) => {
                assert_eq!(pos.line, 2)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_truncated_document_is_an_error_with_its_offset() {
        for doc in [DOC.to_string(), DOC.replace('\n', "\r\n")] {
            // Cut inside the FLocat tag.
            let cut = doc.find("<mets:FLocat").unwrap() + 20;
            let (evs, err) = events(&doc.as_bytes()[..cut], true);
            assert!(starts(&evs).iter().any(|(n, _)| n == "file"));
            let err = err.expect("an error");
            let at = doc.find("<mets:FLocat").unwrap() as u64;
            assert!(matches!(err, MetsError::Xml { .. }), "{err}");
            assert_eq!(err.pos(), Pos { offset: at, line: 6 });
            assert!(err.to_string().starts_with(&format!("line 6 (byte {at}): ")), "{err}");
        }
        // An end tag that closes the wrong element.
        let (_, err) = events(b"<a>\n<b>\n</a>", true);
        assert_eq!(err.map(|e| e.pos()), Some(Pos { offset: 8, line: 3 }));
    }

    #[test]
    fn an_error_inside_a_long_tag_has_its_own_line() {
        // quick-xml places a nameless DOCTYPE's error at its `>`, three lines into the tag.
        let doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE\n\n\n>\n<a/>";
        let (_, err) = events(doc.as_bytes(), false);
        let err = err.expect("a DOCTYPE without a name");
        assert_eq!(err.pos(), Pos { offset: doc.find('>').unwrap() as u64 + 14, line: 5 });
    }

    #[test]
    fn an_unbound_prefix_is_in_no_namespace() {
        let (evs, err) = events(b"<a>\n\n<p:b p:c=\"1\"/></a>", true);
        assert!(err.is_none(), "{err:?}");
        let b = starts(&evs).into_iter().find(|(n, _)| n == "b").unwrap();
        assert_eq!(b.1.line, 3);
        assert!(evs.iter().any(
            |e| matches!(e, Event::Empty(el, _) if el.ns.is_empty() && el.attrs[0].ns.is_empty())
        ));
    }
}
