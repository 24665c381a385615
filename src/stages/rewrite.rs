//! Link rewriting for PANDAS (HTTrack) and other website mirrors (`RewriteStage`): relative links between mirror files become the
//! original absolute URLs again (P5.7).
//!
//! Rewriting is byte-faithful: only the bytes of a rewritten attribute value or CSS URL change.
//! lol_html, in the page's own encoding, is used only as a parser: it says where each attribute
//! value and `<style>` block lies in the input, and the new values are spliced into the input
//! bytes (had lol_html set the attribute, it would re-serialise the tag: `"/>` became `" />`,
//! bare values gained quotes). A new value keeps the page's quoting (a quote in it becomes a
//! character reference) and its way of writing `&`. The attributes that carry URLs (`href`,
//! `src`, `srcset`, `action`, `background`, `poster`, `data`, `longdesc`, `cite`,
//! `formaction`), `<meta http-equiv=refresh>`, inline `style` and HTML `<style>` blocks are
//! rewritten; CSS (`url()`, `@import`) is scanned by hand, on the bytes.
//!
//! A link is rewritten when it is relative: to the original URL of the mirror file it names
//! (through the reverse map of save paths), or, when it names nothing in the mirror, resolved
//! against the page's original URL. Absolute links, fragments and `mailto:`/`javascript:` links
//! are left alone.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read, Write};
use std::ops::Range;
use std::rc::Rc;

use encoding_rs::Encoding;
use lol_html::{AsciiCompatibleEncoding, HtmlRewriter, MemorySettings, Settings, element};
use url::Url;

use super::{Item, Replacement, Route, Stage, StageError, StagedItem};
use crate::capture::{CaptureKind, Payload};
use crate::formats::html::html_encoding;
pub use crate::sources::mirror_files::LinkMap;

/// What rewriting did to one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// The new bytes.
    pub bytes: Vec<u8>,
    /// Links made to point at a file of the mirror, by its original URL.
    pub to_mirror: u64,
    /// Relative links to things not in the mirror, resolved against the page's URL.
    pub to_outside: u64,
    /// The first [`MAX_LISTED_CHANGES`] changes: (old value, new value).
    pub changes: Vec<(String, String)>,
}

/// Changes listed one by one in [`Rewritten::changes`]; more are only counted, so a page of
/// millions of links does not keep millions of strings.
pub const MAX_LISTED_CHANGES: usize = 1000;

/// Bytes read from the input and handed to lol_html at a time.
pub(crate) const CHUNK: usize = 64 * 1024;

/// lol_html's own buffers (a start tag split across chunks) may not grow past this: a page
/// holding one tag of hundreds of megabytes is refused, not buffered. The input bytes kept for
/// splicing are those of that tag too, plus a chunk.
pub const MAX_REWRITER_MEMORY: usize = 16 << 20;

/// CSS of a `<style>` element is rewritten in pieces cut after a `}` once this much is held.
const STYLE_FLUSH: usize = 64 * 1024;

/// A `<style>` block with no `}` is cut anywhere once this much is held.
const STYLE_HOLD_MAX: usize = 1 << 20;

/// Why a page could not be rewritten.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    /// Reading the page or writing the result failed.
    #[error("{why}", why = crate::layout::describe_io(.0))]
    Io(#[from] io::Error),
    /// The page's encoding is not one lol_html can parse in (UTF-16 and the like: ASCII bytes
    /// do not stand for ASCII characters).
    #[error("encoding is not ASCII-compatible")]
    Encoding(&'static Encoding),
    /// lol_html refused the page (its memory bound, a parsing ambiguity).
    #[error(transparent)]
    Html(#[from] lol_html::errors::RewritingError),
    /// What lol_html passed through differs from the input at this byte: the splice of edits
    /// into the original bytes would be wrong from there on.
    #[error("the HTML parser changed the input at byte {at}")]
    Diverged {
        /// The offset in the page.
        at: usize,
    },
}

impl Rewritten {
    /// Links rewritten in all.
    pub(crate) fn count(&self) -> u64 {
        self.to_mirror + self.to_outside
    }
}

/// How one link is rewritten, or `None` to leave it.
struct Resolver<'a> {
    map: &'a LinkMap,
    /// The page's save path directory ("host/dir/").
    dir: String,
    page_url: Option<Url>,
}

enum Target {
    Mirror(String),
    Outside(String),
}

impl Resolver<'_> {
    fn resolve(&self, raw: &str) -> Option<Target> {
        let link = decode_entities(raw.trim());
        if link.is_empty() || link.starts_with('#') || link.starts_with("//") || has_scheme(&link) {
            return None;
        }
        let (no_frag, frag) = match link.split_once('#') {
            Some((a, f)) => (a.to_string(), Some(f.to_string())),
            None => (link.clone(), None),
        };
        let (path, query) = match no_frag.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (no_frag.clone(), None),
        };
        let joined = if let Some(abs) = path.strip_prefix('/') {
            // Root-relative: the host part of the save path is the first segment.
            let host = self.dir.split('/').next().unwrap_or("");
            format!("{host}/{abs}")
        } else {
            format!("{}{}", self.dir, path)
        };
        let decoded = percent_decode(&joined);
        if let Some(norm) = normalize(&decoded) {
            let hit = self.map.get(&norm).or_else(|| {
                if norm.is_empty() || norm.ends_with('/') {
                    self.map.get(&format!("{norm}index.html"))
                } else {
                    None
                }
            });
            if let Some(url) = hit {
                let mut out = url.to_string();
                if let (Some(q), false) = (&query, out.contains('?')) {
                    out.push('?');
                    out.push_str(q);
                }
                if let Some(f) = &frag {
                    out.push('#');
                    out.push_str(f);
                }
                return Some(Target::Mirror(out));
            }
        }
        let base = self.page_url.as_ref()?;
        base.join(&link).ok().map(|u| Target::Outside(u.to_string()))
    }
}

fn has_scheme(s: &str) -> bool {
    crate::layout::uri_scheme(s).is_some()
}

/// `a/b/../c/./d` -> `a/c/d`; `None` if it climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let trailing = path.ends_with('/');
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    let mut out = parts.join("/");
    if trailing && !out.is_empty() {
        out.push('/');
    }
    Some(out)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The character references a URL value holds in practice (`&amp;` above all); others stay.
fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = s.to_string();
    for (entity, c) in [
        ("&amp;", "&"),
        ("&#38;", "&"),
        ("&#x26;", "&"),
        ("&quot;", "\""),
        ("&#34;", "\""),
        ("&apos;", "'"),
        ("&#39;", "'"),
        ("&lt;", "<"),
        ("&gt;", ">"),
    ] {
        out = out.replace(entity, c);
    }
    out
}

struct State {
    to_mirror: u64,
    to_outside: u64,
    changes: Vec<(String, String)>,
}

impl State {
    fn new() -> Self {
        State { to_mirror: 0, to_outside: 0, changes: Vec::new() }
    }

    fn apply(&mut self, r: &Resolver<'_>, old: &str) -> Option<String> {
        let t = r.resolve(old)?;
        let new = match t {
            Target::Mirror(u) => {
                self.to_mirror += 1;
                u
            }
            Target::Outside(u) => {
                self.to_outside += 1;
                u
            }
        };
        if self.changes.len() < MAX_LISTED_CHANGES {
            self.changes.push((old.to_string(), new.clone()));
        }
        Some(new)
    }
}

const URL_ATTRS: [&str; 9] =
    ["href", "src", "action", "background", "poster", "data", "longdesc", "cite", "formaction"];

/// Rewrites the links of an HTML page saved at `save_path` whose original URL is `page_url`.
///
/// A wrapper of [`rewrite_html_stream`] for a page in memory: the result is in memory too.
#[cfg(any(test, feature = "test-hooks"))]
pub fn rewrite_html(
    input: &[u8],
    save_path: &str,
    page_url: &str,
    map: &LinkMap,
    content_type: Option<&str>,
) -> Result<Rewritten, RewriteError> {
    let encoding = html_encoding(input, content_type);
    let mut bytes = Vec::with_capacity(input.len() + 256);
    let r = rewrite_html_stream(input, &mut bytes, encoding, save_path, page_url, map)?;
    Ok(Rewritten { bytes, ..r })
}

/// How a value is written back: the quote that encloses it in the page (none: unquoted),
/// whether `&` is written `&amp;` (as the old value did, or because it had none), and the
/// page's encoding.
#[derive(Clone, Copy)]
struct ValueStyle {
    quote: Option<u8>,
    escape_amp: bool,
    encoding: &'static Encoding,
}

impl ValueStyle {
    /// The style of an attribute value whose raw bytes are `raw`, preceded in the page by
    /// `before` (the quote, or `=`/whitespace when unquoted).
    fn of(raw: &[u8], before: Option<u8>, encoding: &'static Encoding) -> Self {
        let quote = before.filter(|b| *b == b'"' || *b == b'\'');
        let lower = raw.to_ascii_lowercase();
        let has_raw_amp = raw.contains(&b'&');
        let has_entity_amp = [&b"&amp;"[..], b"&#38;", b"&#x26;"]
            .iter()
            .any(|e| lower.windows(e.len()).any(|w| w == *e));
        ValueStyle { quote, escape_amp: has_entity_amp || !has_raw_amp, encoding }
    }

    /// `new` as bytes of an attribute value in this style: only characters that would end or
    /// change the value are written as character references.
    fn encode(&self, new: &str) -> Vec<u8> {
        let mut s = String::with_capacity(new.len() + 8);
        for c in new.chars() {
            match c {
                '&' if self.escape_amp => s.push_str("&amp;"),
                '"' if self.quote != Some(b'\'') => s.push_str("&#34;"),
                '\'' if self.quote != Some(b'"') => s.push_str("&#39;"),
                ' ' | '\t' | '\n' | '\r' | '\x0c' | '<' | '>' | '=' | '`'
                    if self.quote.is_none() =>
                {
                    s.push_str(&format!("&#{};", c as u32))
                }
                c => s.push(c),
            }
        }
        encode_in(self.encoding, &s)
    }
}

fn encode_in(encoding: &'static Encoding, s: &str) -> Vec<u8> {
    // encoding_rs writes characters the encoding lacks as numeric character references.
    encoding.encode(s).0.into_owned()
}

fn decode_in(encoding: &'static Encoding, b: &[u8]) -> String {
    encoding.decode_without_bom_handling(b).0.into_owned()
}

/// The input bytes not yet written, and the changes to splice into them.
///
/// lol_html is only a parser here: it reports where each attribute value and `<style>` block
/// sits in the input, and its own output (the input, unchanged, since nothing is modified
/// through it) tells how far it has parsed. Bytes it has passed are written out with the
/// changes spliced in, so every other byte is the input's.
struct Splice {
    /// Input bytes from `base` on.
    buf: Vec<u8>,
    base: usize,
    /// Bytes lol_html has passed to its output (all parsed, all handlers run).
    parsed: usize,
    /// start -> (end, new bytes), absolute input offsets.
    edits: BTreeMap<usize, (usize, Vec<u8>)>,
    /// `<style>` contents not yet scanned: (start, end once its end tag is seen).
    styles: VecDeque<(usize, Option<usize>)>,
    /// Where lol_html's output first differed from its input (it must not).
    diverged: Option<usize>,
}

impl Splice {
    fn bytes(&self, range: Range<usize>) -> Option<&[u8]> {
        self.buf.get(range.start.checked_sub(self.base)?..range.end.checked_sub(self.base)?)
    }

    fn byte_before(&self, at: usize) -> Option<u8> {
        let i = at.checked_sub(1)?.checked_sub(self.base)?;
        self.buf.get(i).copied()
    }

    /// Records a change; one that overlaps another (CSS of an SVG `<style>` holding a tag that
    /// was rewritten already) or changes nothing is dropped.
    fn edit(&mut self, range: Range<usize>, new: Vec<u8>) {
        if self.bytes(range.clone()).is_none_or(|old| old == new.as_slice()) {
            return;
        }
        let before = self.edits.range(..=range.start).next_back();
        let after = self.edits.range(range.start..).next();
        if before.is_some_and(|(_, (end, _))| *end > range.start)
            || after.is_some_and(|(start, _)| *start < range.end)
        {
            return;
        }
        self.edits.insert(range.start, (range.end, new));
    }

    /// Writes the input up to `upto` (absolute), changes spliced in, and forgets it.
    fn flush(&mut self, mut upto: usize, out: &mut impl Write) -> io::Result<()> {
        let mut pos = self.base;
        while let Some(entry) = self.edits.first_entry() {
            let start = *entry.key();
            if start >= upto {
                break;
            }
            if entry.get().0 > upto {
                upto = start;
                break;
            }
            let (end, new) = entry.remove();
            out.write_all(&self.buf[pos - self.base..start - self.base])?;
            out.write_all(&new)?;
            pos = end;
        }
        let upto = upto.max(pos);
        out.write_all(&self.buf[pos - self.base..upto - self.base])?;
        self.buf.drain(..upto - self.base);
        self.base = upto;
        Ok(())
    }
}

/// Rewrites the links of an HTML page read from `input` in `encoding` (see [`html_encoding`])
/// into `output`, chunk by chunk: memory is a chunk, lol_html's buffers (at most
/// [`MAX_REWRITER_MEMORY`]) and the first [`MAX_LISTED_CHANGES`] changes, whatever the size
/// of the page. The returned [`Rewritten`] has no `bytes` (they went to `output`).
///
/// Only the bytes of rewritten attribute values and CSS URLs change; every other byte
/// (quoting, case, whitespace, self-closing slashes, entities, comments) is the input's.
pub fn rewrite_html_stream(
    input: impl Read,
    mut output: impl Write,
    encoding: &'static Encoding,
    save_path: &str,
    page_url: &str,
    map: &LinkMap,
) -> Result<Rewritten, RewriteError> {
    let enc = AsciiCompatibleEncoding::new(encoding).ok_or(RewriteError::Encoding(encoding))?;
    let page = PageRewrite {
        resolver: Resolver { map, dir: dir_of(save_path), page_url: Url::parse(page_url).ok() },
        encoding,
        state: RefCell::new(State::new()),
        splice: RefCell::new(Splice {
            buf: Vec::with_capacity(2 * CHUNK),
            base: 0,
            parsed: 0,
            edits: BTreeMap::new(),
            styles: VecDeque::new(),
            diverged: None,
        }),
        style_ends: Rc::default(),
    };
    page.feed(input, &mut output, enc)?;
    page.step(true, &mut output)?;
    output.flush()?;
    let s = page.state.into_inner();
    Ok(Rewritten {
        bytes: Vec::new(),
        to_mirror: s.to_mirror,
        to_outside: s.to_outside,
        changes: s.changes,
    })
}

/// What lol_html's element handler, its output sink and each step of one page's rewrite
/// share (the handler and the sink are closures lol_html holds, hence the cells).
struct PageRewrite<'a> {
    resolver: Resolver<'a>,
    encoding: &'static Encoding,
    state: RefCell<State>,
    splice: RefCell<Splice>,
    /// The end of a `<style>` element, reported by an end-tag handler (which must be 'static).
    style_ends: Rc<RefCell<Vec<usize>>>,
}

impl PageRewrite<'_> {
    /// Passes the page through lol_html chunk by chunk, writing out what is done after each.
    fn feed(
        &self,
        mut input: impl Read,
        output: &mut impl Write,
        enc: AsciiCompatibleEncoding,
    ) -> Result<(), RewriteError> {
        let handler = element!("*", move |el| self.on_element(el));
        let memory = MemorySettings::new().with_max_allowed_memory_usage(MAX_REWRITER_MEMORY);
        let settings = Settings::new()
            .with_encoding(enc)
            .with_strict(false)
            .with_memory_settings(memory)
            .append_element_content_handler(handler);
        let sink = |c: &[u8]| {
            let mut sp = self.splice.borrow_mut();
            let at = sp.parsed;
            if sp.diverged.is_none() && sp.bytes(at..at + c.len()) != Some(c) {
                sp.diverged = Some(at);
            }
            sp.parsed += c.len();
        };
        let mut rewriter = HtmlRewriter::new(settings, sink);
        let mut chunk = vec![0u8; CHUNK];
        loop {
            let n = match input.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            self.splice.borrow_mut().buf.extend_from_slice(&chunk[..n]);
            rewriter.write(&chunk[..n])?;
            self.step(false, output)?;
        }
        rewriter.end()?;
        Ok(())
    }

    /// An element: its link attributes are rewritten; an HTML `<style>`'s content is queued
    /// for its CSS to be scanned once lol_html has passed it.
    fn on_element(
        &self,
        el: &mut lol_html::html_content::Element<'_, '_>,
    ) -> lol_html::HandlerResult {
        let mut sp = self.splice.borrow_mut();
        let refresh = el.tag_name() == "meta"
            && el.get_attribute("http-equiv").is_some_and(|v| v.eq_ignore_ascii_case("refresh"));
        for a in el.attributes() {
            self.rewrite_attribute(&mut sp, a, refresh);
        }
        // An HTML <style> is raw text that only `</style` (or the end of the page) ends;
        // an SVG one may hold tags and end unseen, so its CSS is left as it is.
        if el.tag_name() == "style"
            && el.namespace_uri() == "http://www.w3.org/1999/xhtml"
            && let Some(handlers) = el.end_tag_handlers()
        {
            let ends = Rc::clone(&self.style_ends);
            let on_end: lol_html::EndTagHandler<'static> = Box::new(move |end| {
                ends.borrow_mut().push(end.source_location().bytes().start);
                Ok(())
            });
            handlers.push(on_end);
            sp.styles.push_back((el.source_location().bytes().end, None));
        }
        Ok(())
    }

    /// Rewrites the links of one attribute's value in place (URL attributes, `srcset`, a
    /// refresh's `content`, CSS in `style`), each in the value's own quoting and encoding.
    fn rewrite_attribute(
        &self,
        sp: &mut Splice,
        a: &lol_html::html_content::Attribute<'_>,
        refresh: bool,
    ) {
        let (encoding, r) = (self.encoding, &self.resolver);
        let mut st = self.state.borrow_mut();
        let name = a.name();
        let wanted = URL_ATTRS.contains(&name.as_str())
            || matches!(name.as_str(), "srcset" | "style")
            || (refresh && name == "content");
        let Some(loc) = a.value_source_location().filter(|_| wanted) else { return };
        let loc = loc.bytes();
        let Some(raw) = sp.bytes(loc.clone()).map(<[u8]>::to_vec) else { return };
        let vs = ValueStyle::of(&raw, sp.byte_before(loc.start), encoding);
        // Parts of the value that are links, relative to the value's start.
        let parts: Vec<Range<usize>> = match name.as_str() {
            n if URL_ATTRS.contains(&n) => std::iter::once(0..raw.len()).collect(),
            "srcset" => srcset_urls(&raw),
            "content" if refresh => refresh_url(&raw).into_iter().collect(),
            "style" => {
                for (part, new) in css_edits(&raw, encoding, &mut st, r) {
                    let at = loc.start + part.start..loc.start + part.end;
                    sp.edit(at, vs.encode(&new));
                }
                return;
            }
            _ => return,
        };
        for part in parts {
            let old = decode_in(encoding, &raw[part.clone()]);
            if let Some(new) = st.apply(r, &old) {
                sp.edit(loc.start + part.start..loc.start + part.end, vs.encode(&new));
            }
        }
    }

    /// After lol_html has taken a chunk: scans the `<style>` contents it has passed (whole
    /// once ended, else in pieces cut after a `}`), then writes out everything before the
    /// first content still to scan.
    fn step(&self, at_end: bool, output: &mut impl Write) -> Result<(), RewriteError> {
        let mut sp = self.splice.borrow_mut();
        if let Some(at) = sp.diverged {
            return Err(RewriteError::Diverged { at });
        }
        for end in self.style_ends.borrow_mut().drain(..) {
            if let Some(open) = sp.styles.iter_mut().find(|s| s.1.is_none()) {
                open.1 = Some(end);
            }
        }
        let total = sp.base + sp.buf.len();
        while let Some(&(start, end)) = sp.styles.front() {
            let Some((cut, done)) = style_cut(&sp, start, end, at_end) else { break };
            let css = sp.bytes(start..cut).map(<[u8]>::to_vec).unwrap_or_default();
            let mut st = self.state.borrow_mut();
            for (part, new) in css_edits(&css, self.encoding, &mut st, &self.resolver) {
                sp.edit(start + part.start..start + part.end, encode_in(self.encoding, &new));
            }
            if !done {
                sp.styles[0].0 = cut;
                break;
            }
            sp.styles.pop_front();
        }
        let upto = match sp.styles.front() {
            Some(&(start, _)) => start.min(sp.parsed),
            None if at_end => total,
            None => sp.parsed,
        };
        let upto = upto.max(sp.base);
        sp.flush(upto, output)?;
        Ok(())
    }
}

/// How much of the `<style>` content from `start` (ending at `end` once its end tag is seen)
/// to scan now, and whether that is all of it: the whole once ended (or at the page's end),
/// else, when enough is held, up to its last `}` (or anyway, past [`STYLE_HOLD_MAX`] bytes
/// without one: a URL split there is left as it is); `None`: wait for more.
fn style_cut(sp: &Splice, start: usize, end: Option<usize>, at_end: bool) -> Option<(usize, bool)> {
    match end {
        Some(end) => Some((end, true)),
        None if at_end => Some((sp.base + sp.buf.len(), true)),
        None if sp.parsed.saturating_sub(start) >= STYLE_FLUSH => {
            let held = sp.bytes(start..sp.parsed).unwrap_or_default();
            match held.iter().rposition(|b| *b == b'}') {
                Some(i) => Some((start + i + 1, false)),
                None if held.len() >= STYLE_HOLD_MAX => Some((sp.parsed, false)),
                None => None,
            }
        }
        None => None,
    }
}

/// The URL of each `srcset` candidate (what precedes its descriptors).
fn srcset_urls(v: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let end = v[i..].iter().position(|b| *b == b',').map_or(v.len(), |p| i + p);
        let mut s = i;
        while s < end && v[s].is_ascii_whitespace() {
            s += 1;
        }
        let e = v[s..end].iter().position(u8::is_ascii_whitespace).map_or(end, |p| s + p);
        if e > s {
            out.push(s..e);
        }
        i = end + 1;
    }
    out
}

/// The URL in a `<meta http-equiv=refresh content="5; url=...">` value, without its quotes.
fn refresh_url(v: &[u8]) -> Option<Range<usize>> {
    let lower = v.to_ascii_lowercase();
    let mut s = lower.windows(4).position(|w| w == b"url=")? + 4;
    while s < v.len() && v[s].is_ascii_whitespace() {
        s += 1;
    }
    let mut e = v.len();
    if let Some(q) = v.get(s).copied().filter(|b| *b == b'"' || *b == b'\'') {
        s += 1;
        e = v[s..].iter().position(|b| *b == q).map_or(v.len(), |p| s + p);
    }
    while e > s && v[e - 1].is_ascii_whitespace() {
        e -= 1;
    }
    (e > s).then_some(s..e)
}

/// The links of CSS bytes to change: (range of the URL in `css`, new URL written for CSS).
fn css_edits(
    css: &[u8],
    encoding: &'static Encoding,
    st: &mut State,
    r: &Resolver<'_>,
) -> Vec<(Range<usize>, String)> {
    let mut out = Vec::new();
    for (range, quote) in css_link_spans(css) {
        let old = decode_in(encoding, &css[range.clone()]);
        if let Some(new) = st.apply(r, &old) {
            out.push((range, css_escape(&new, quote)));
        }
    }
    out
}

/// A URL written into CSS: inside quotes only that quote and `\` need escaping; unquoted,
/// also whitespace, quotes and parentheses. `<` is escaped so no `</style` can appear.
fn css_escape(url: &str, quote: Option<u8>) -> String {
    let mut s = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '<' => s.push_str("%3C"),
            '\\' => s.push_str("\\\\"),
            '"' | '\'' if quote.is_none() || quote == Some(c as u8) => {
                s.push('\\');
                s.push(c);
            }
            '(' | ')' if quote.is_none() => {
                s.push('\\');
                s.push(c);
            }
            c if c.is_whitespace() && quote.is_none() => s.push_str(&format!("%{:02X}", c as u32)),
            '\n' | '\r' | '\x0c' => s.push_str(&format!("%{:02X}", c as u32)),
            c => s.push(c),
        }
    }
    s
}

/// Rewrites the links of a stylesheet saved at `save_path`: only the bytes of rewritten URLs
/// change.
pub(crate) fn rewrite_css(
    input: &[u8],
    save_path: &str,
    page_url: &str,
    map: &LinkMap,
) -> Rewritten {
    let resolver = Resolver { map, dir: dir_of(save_path), page_url: Url::parse(page_url).ok() };
    let mut state = State::new();
    // CSS is ASCII for its syntax; a stylesheet that is not UTF-8 is read as windows-1252.
    let encoding = if std::str::from_utf8(input).is_ok() {
        encoding_rs::UTF_8
    } else {
        encoding_rs::WINDOWS_1252
    };
    let mut bytes = Vec::with_capacity(input.len() + 256);
    let mut pos = 0;
    for (range, new) in css_edits(input, encoding, &mut state, &resolver) {
        bytes.extend_from_slice(&input[pos..range.start]);
        bytes.extend_from_slice(&encode_in(encoding, &new));
        pos = range.end;
    }
    bytes.extend_from_slice(&input[pos..]);
    Rewritten {
        bytes,
        to_mirror: state.to_mirror,
        to_outside: state.to_outside,
        changes: state.changes,
    }
}

fn dir_of(save_path: &str) -> String {
    match save_path.rfind('/') {
        Some(i) => save_path[..=i].to_string(),
        None => String::new(),
    }
}

/// Where the `url(...)` and `@import "..."` values of CSS bytes are (inside their quotes and
/// surrounding whitespace), with their quote. Only ASCII bytes are matched, so this holds for
/// every ASCII-compatible encoding.
fn css_link_spans(css: &[u8]) -> Vec<(Range<usize>, Option<u8>)> {
    let mut out = Vec::new();
    let at = |i: usize, word: &[u8]| {
        css.get(i..i + word.len()).is_some_and(|b| b.eq_ignore_ascii_case(word))
    };
    let mut i = 0;
    while i < css.len() {
        if at(i, b"url(") {
            let start = i + 4;
            let Some(close) = css[start..].iter().position(|b| *b == b')') else { break };
            let (mut s, mut e) = (start, start + close);
            while s < e && css[s].is_ascii_whitespace() {
                s += 1;
            }
            while e > s && css[e - 1].is_ascii_whitespace() {
                e -= 1;
            }
            let quote = css.get(s).copied().filter(|b| *b == b'"' || *b == b'\'');
            if let Some(q) = quote {
                s += 1;
                if e > s && css[e - 1] == q {
                    e -= 1;
                }
            }
            out.push((s..e, quote));
            i = start + close + 1;
            continue;
        }
        if at(i, b"@import") {
            let mut q_at = i + 7;
            while q_at < css.len() && css[q_at].is_ascii_whitespace() {
                q_at += 1;
            }
            if let Some(q) = css.get(q_at).copied().filter(|b| *b == b'"' || *b == b'\'')
                && let Some(end) = css[q_at + 1..].iter().position(|b| *b == q)
            {
                out.push((q_at + 1..q_at + 1 + end, Some(q)));
                i = q_at + 1 + end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Finds `url(...)` and `@import "..."` values in CSS and replaces those `f` rewrites; all other
/// characters are copied unchanged. The stage edits CSS through [`rewrite_css`] (encoding and
/// resolution included); this form with a plain callback tests link finding and escaping alone.
#[cfg(test)]
pub(crate) fn rewrite_css_links(css: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(css.len());
    let mut pos = 0;
    for (range, quote) in css_link_spans(css.as_bytes()) {
        if let Some(new) = f(&css[range.clone()]) {
            out.push_str(&css[pos..range.start]);
            out.push_str(&css_escape(&new, quote));
            pos = range.end;
        }
    }
    out.push_str(&css[pos..]);
    out
}

/// Files larger than this are copied, never rewritten (a page of 64 MiB is not a page).
pub const REWRITE_LIMIT: u64 = 64 << 20;

/// Files listed one by one as not rewritten in [`RewriteSummary::not_rewritten`]; more are
/// only counted.
const MAX_LISTED_FAILURES: usize = 100;

/// New bytes of one file kept in memory; a larger result goes to a temporary file.
const PAGE_IN_MEMORY: usize = 1 << 20;

/// New bytes kept in memory for one batch in all (the batch holds its harvested payloads as
/// well, up to the same amount): past this every result goes to a temporary file.
const BATCH_IN_MEMORY: usize = 16 << 20;

/// Where a rewritten payload is written: memory up to `limit` bytes, then a temporary file in
/// `dir` (what was held moved there first). A page of a few kilobytes then costs no file to
/// create and remove (a mirror of 20,000 pages made and removed 20,000, ext4 taking longer to
/// allocate each inode among the deleted ones), and a large page no large buffer.
struct SpillWriter<'a> {
    dir: &'a std::path::Path,
    limit: usize,
    held: Vec<u8>,
    file: Option<(io::BufWriter<std::fs::File>, tempfile::TempPath)>,
    len: u64,
}

impl<'a> SpillWriter<'a> {
    fn new(dir: &'a std::path::Path, limit: usize) -> Self {
        SpillWriter { dir, limit, held: Vec::new(), file: None, len: 0 }
    }

    /// The payload written, and the temporary file holding it if it spilled.
    fn finish(self) -> io::Result<(Payload, Option<tempfile::TempPath>)> {
        match self.file {
            Some((mut w, path)) => {
                w.flush()?;
                Ok((Payload::File { path: path.to_path_buf(), len: self.len }, Some(path)))
            }
            None => Ok((Payload::Bytes(self.held), None)),
        }
    }
}

impl Write for SpillWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.held.len() + buf.len() > self.limit {
            let (file, path) =
                tempfile::Builder::new().prefix(".rewrite-").tempfile_in(self.dir)?.into_parts();
            let mut w = io::BufWriter::with_capacity(256 * 1024, file);
            w.write_all(&self.held)?;
            self.held = Vec::new();
            self.file = Some((w, path));
        }
        match &mut self.file {
            Some((w, _)) => w.write_all(buf)?,
            None => self.held.extend_from_slice(buf),
        }
        self.len += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some((w, _)) => w.flush(),
            None => Ok(()),
        }
    }
}

/// What the rewrite stage did over a whole run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RewriteSummary {
    /// Files rewritten (their originals kept too).
    pub transformed: u64,
    /// Links rewritten to files of the mirror.
    pub links_to_mirror: u64,
    /// Relative links to things outside the mirror, made absolute.
    pub links_to_outside: u64,
    /// Files that could not be rewritten, with why (kept as harvested); the first
    /// hundred.
    pub not_rewritten: Vec<(String, String)>,
    /// How many could not be rewritten in all.
    pub not_rewritten_count: u64,
}

/// Link rewriting as a stage of the capture pipeline, for sources whose files link to each
/// other by local paths (mirrors). An HTML or CSS `resource` capture whose links change gets a
/// [`Replacement`]: a stylesheet's new bytes in memory, a page's in a temporary file in the
/// package being built (streamed through the rewriter, so memory is a chunk whatever the size
/// of the page). A capture routed to the viral container is never rewritten, and a response
/// never is (its HTTP header states the payload's length).
pub(crate) struct RewriteStage {
    map: LinkMap,
    temp_dir: std::path::PathBuf,
    summary: RewriteSummary,
    /// New bytes the current batch may still hold in memory.
    memory_left: usize,
}

impl RewriteStage {
    /// Rewrites links by `map` (save path -> original URL); pages in work go to `temp_dir`.
    pub(crate) fn new(map: LinkMap, temp_dir: &std::path::Path) -> Self {
        RewriteStage {
            map,
            temp_dir: temp_dir.to_path_buf(),
            summary: RewriteSummary::default(),
            memory_left: BATCH_IN_MEMORY,
        }
    }

    /// A writer for one file's new bytes, held in memory as far as the batch's budget goes.
    fn spill(&self) -> SpillWriter<'_> {
        SpillWriter::new(&self.temp_dir, self.memory_left.min(PAGE_IN_MEMORY))
    }

    /// Counts a replacement held in memory against the batch's budget.
    fn charge(&mut self, payload: &Payload) {
        if let Payload::Bytes(b) = payload {
            self.memory_left = self.memory_left.saturating_sub(b.len());
        }
    }

    /// What was done so far.
    pub(crate) fn summary(&self) -> &RewriteSummary {
        &self.summary
    }

    fn note_failure(&mut self, file: &str, why: String) {
        self.summary.not_rewritten_count += 1;
        if self.summary.not_rewritten.len() < MAX_LISTED_FAILURES {
            self.summary.not_rewritten.push((file.to_string(), why));
        }
    }

    /// `bytes` kept as they are if the batch's budget allows, else in a temporary file of the
    /// stage's folder.
    fn keep(&self, bytes: Vec<u8>) -> Result<(Payload, Option<tempfile::TempPath>), StageError> {
        let tmp_io = |source| StageError::Io { path: self.temp_dir.display().to_string(), source };
        if bytes.len() <= self.memory_left.min(PAGE_IN_MEMORY) {
            return Ok((Payload::Bytes(bytes), None));
        }
        let mut out = SpillWriter::new(&self.temp_dir, 0);
        out.write_all(&bytes).map_err(tmp_io)?;
        out.finish().map_err(tmp_io)
    }

    /// The new payload of one capture, if its links change.
    fn rewrite(&mut self, s: &StagedItem) -> Result<Option<(Replacement, Rewritten)>, StageError> {
        // Only captures are written anew; a stored record keeps its bytes.
        let Item::Capture(c) = &s.item else { return Ok(None) };
        let mime = c.content_type.as_deref().unwrap_or_default();
        let is_css = mime.starts_with("text/css");
        let is_html = mime.starts_with("text/html") || mime.starts_with("application/xhtml");
        if c.kind != CaptureKind::Resource
            || !(is_css || is_html)
            || c.payload.len() > REWRITE_LIMIT
            || c.payload.is_empty()
        {
            return Ok(None);
        }
        let file = &c.provenance.file;
        let io = |source| StageError::Io { path: file.clone(), source };
        if is_css {
            let read;
            let bytes = match &s.held {
                Some(b) => &b[..],
                None => {
                    let mut b = Vec::new();
                    c.payload
                        .open()
                        .and_then(|r| r.take(REWRITE_LIMIT).read_to_end(&mut b))
                        .map_err(io)?;
                    read = b;
                    &read[..]
                }
            };
            let r = rewrite_css(bytes, file, &c.uri, &self.map);
            if r.count() == 0 || r.bytes == bytes {
                return Ok(None);
            }
            // In memory within the batch's budget, else in a file, as a page's new bytes.
            let mut r = r;
            let (payload, temp) = self.keep(std::mem::take(&mut r.bytes))?;
            return Ok(Some((Replacement { payload, detail: detail(&r), temp }, r)));
        }
        let open = || -> io::Result<Box<dyn Read + Send + '_>> {
            match &s.held {
                Some(b) => Ok(Box::new(&b[..])),
                None => c.payload.open(),
            }
        };
        let mut head = Vec::new();
        open().and_then(|r| r.take(4096).read_to_end(&mut head)).map_err(io)?;
        let encoding = html_encoding(&head, Some(mime));
        let tmp_io = |source| StageError::Io { path: self.temp_dir.display().to_string(), source };
        // Both sides are hashed as they pass through the rewriter: no second read of either.
        use crate::formats::digest::{Sha512Reader, Sha512Writer};
        let mut out = Sha512Writer::new(self.spill());
        let mut input = Sha512Reader::new(open().map_err(io)?.take(REWRITE_LIMIT));
        let r = match rewrite_html_stream(&mut input, &mut out, encoding, file, &c.uri, &self.map) {
            Ok(r) => r,
            Err(e) => {
                drop(out);
                self.note_failure(file, e.to_string());
                return Ok(None);
            }
        };
        out.flush().map_err(tmp_io)?;
        let (spill, _, after) = out.finish();
        // Every link may already have been what it becomes: then nothing changed.
        if r.count() == 0 || input.finish() == after {
            return Ok(None);
        }
        let (payload, temp) = spill.finish().map_err(tmp_io)?;
        Ok(Some((Replacement { payload, detail: detail(&r), temp }, r)))
    }
}

/// The transformation event's words for one file.
fn detail(r: &Rewritten) -> String {
    format!(
        "HTML/CSS link rewriting; {} links to mirror files made their original URLs, {} relative links resolved against the page URL",
        r.to_mirror, r.to_outside
    )
}

impl Stage for RewriteStage {
    fn run(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError> {
        // The replacements of the previous batch were written and dropped before this one.
        self.memory_left = BATCH_IN_MEMORY;
        for s in batch.iter_mut().filter(|s| s.route == Route::Content) {
            let rewritten = self.rewrite(s)?;
            // A link the map could not answer would be left as it was: the page fails instead.
            if let Some(source) = self.map.failure() {
                return Err(StageError::LinkMap { file: s.item.origin(), source });
            }
            if let Some((replacement, r)) = rewritten {
                self.charge(&replacement.payload);
                self.summary.transformed += 1;
                self.summary.links_to_mirror += r.to_mirror;
                self.summary.links_to_outside += r.to_outside;
                s.replacement = Some(replacement);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lol_html::errors::RewritingError;

    /// A `<style>`'s CSS is scanned whole once ended, else in pieces cut after its last `}`
    /// once enough is held, or anyway past the most held without one.
    #[test]
    fn style_content_is_cut_after_a_rule() {
        let splice = |buf: Vec<u8>, parsed: usize| Splice {
            buf,
            base: 0,
            parsed,
            edits: BTreeMap::new(),
            styles: VecDeque::new(),
            diverged: None,
        };
        let mut css = b"<style>".to_vec();
        let start = css.len();
        while css.len() < start + STYLE_FLUSH {
            css.extend_from_slice(b"a{b:url(x)}");
        }
        let last_rule_end = css.len();
        css.extend_from_slice(b"c{d:url(y");
        let sp = splice(css.clone(), css.len());
        assert_eq!(style_cut(&sp, start, Some(42), false), Some((42, true)));
        assert_eq!(style_cut(&sp, start, None, true), Some((css.len(), true)));
        assert_eq!(style_cut(&sp, start, None, false), Some((last_rule_end, false)));
        // Not enough held yet: wait.
        assert_eq!(style_cut(&splice(css.clone(), start + 10), start, None, false), None);
        // No `}` at all: wait, until the most held without one is reached.
        let open = [&b"<style>"[..], &vec![b'x'; STYLE_FLUSH]].concat();
        assert_eq!(style_cut(&splice(open.clone(), open.len()), start, None, false), None);
        let long = [&b"<style>"[..], &vec![b'x'; STYLE_HOLD_MAX]].concat();
        let cut = style_cut(&splice(long.clone(), long.len()), start, None, false);
        assert_eq!(cut, Some((long.len(), false)));
    }

    /// A mirror file's capture, its payload held in memory.
    fn staged(path: &str, url: &str, mime: &str, body: &[u8]) -> StagedItem {
        let c = crate::capture::Capture {
            uri: url.into(),
            date: chrono::DateTime::UNIX_EPOCH,
            date_source: crate::capture::DateSource { label: "t".into(), inferred: false },
            ip: None,
            kind: CaptureKind::Resource,
            http_header: None,
            content_type: Some(mime.into()),
            payload: Payload::Bytes(body.to_vec()),
            truncated: None,
            provenance: crate::capture::Provenance {
                file: path.into(),
                offset: None,
                offset_in_member: None,
            },
            warc_fields: vec![],
            metadata: None,
        };
        StagedItem::new(Item::Capture(c), Some(body.to_vec()), None)
    }

    /// Replaced payloads read back.
    fn replaced(s: &StagedItem) -> Option<Vec<u8>> {
        let r = s.replacement.as_ref()?;
        let mut b = Vec::new();
        r.payload.open().unwrap().read_to_end(&mut b).unwrap();
        Some(b)
    }

    #[test]
    fn the_stage_replaces_what_changes_and_leaves_the_rest_as_harvested() {
        let dir = tempfile::tempdir().unwrap();
        let mut stage = RewriteStage::new(map(), dir.path());
        let page = b"<a href=\"about.html\">x</a> <a href=\"http://www.e.org/\">y</a>";
        let mut batch = vec![
            staged("www.e.org/index.html", "http://www.e.org/", "text/html", page),
            staged(
                "www.e.org/s.css",
                "http://www.e.org/s.css",
                "text/css",
                b"a{background:url(index.html)}",
            ),
            // Already absolute: nothing to change.
            staged(
                "www.e.org/abs.html",
                "http://www.e.org/abs.html",
                "text/html",
                b"<a href=\"http://x.org/\">z</a>",
            ),
            // Infected: never rewritten.
            staged("www.e.org/v.html", "http://www.e.org/v.html", "text/html", page),
            // A response states its payload's length in its header: never rewritten.
            staged("www.e.org/r.html", "http://www.e.org/r.html", "text/html", page),
            // Not a page.
            staged("www.e.org/t.txt", "http://www.e.org/t.txt", "text/plain", page),
        ];
        // A stylesheet too large to hold is read from its source.
        let mut unheld = staged(
            "www.e.org/big.css",
            "http://www.e.org/big.css",
            "text/css",
            b"b{background:url(index.html)}",
        );
        unheld.held = None;
        batch.push(unheld);
        batch[3].route = Route::Viral;
        if let Item::Capture(c) = &mut batch[4].item {
            c.kind = CaptureKind::Response;
        }
        stage.run(&mut batch).unwrap();
        let new_page = replaced(&batch[0]).expect("the page's relative link changes");
        assert_eq!(
            String::from_utf8(new_page).unwrap(),
            "<a href=\"http://www.e.org/about.html\">x</a> <a href=\"http://www.e.org/\">y</a>"
        );
        assert!(batch[0].replacement.as_ref().unwrap().temp.is_none(), "a small page: memory");
        assert_eq!(
            replaced(&batch[1]).as_deref(),
            Some(&b"a{background:url(http://www.e.org/)}"[..])
        );
        assert_eq!(
            replaced(&batch[6]).as_deref(),
            Some(&b"b{background:url(http://www.e.org/)}"[..])
        );
        assert!(batch[1].replacement.as_ref().unwrap().temp.is_none(), "in memory");
        for (i, s) in batch.iter().enumerate().take(6).skip(2) {
            assert!(s.replacement.is_none(), "capture {i} was replaced");
        }
        let sum = stage.summary();
        // The stylesheets' links name a mirror file; the page's names nothing in the mirror.
        assert_eq!((sum.transformed, sum.links_to_mirror, sum.links_to_outside), (3, 2, 1));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no temporary file");
    }

    /// New bytes stay in memory up to a page's and a batch's budget; past either they go to a
    /// temporary file in the folder given, removed with its replacement.
    #[test]
    fn large_pages_and_full_batches_spill_to_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut stage = RewriteStage::new(map(), dir.path());
        let page = |n: usize| {
            let mut p = b"<a href=\"about.html\">x</a>".to_vec();
            p.resize(n, b' ');
            p
        };
        let big = page(PAGE_IN_MEMORY + 10);
        let mut batch =
            vec![staged("www.e.org/big.html", "http://www.e.org/big.html", "text/html", &big)];
        // Enough pages of 600 KB to pass the batch's budget.
        let n = BATCH_IN_MEMORY / 600_000 + 3;
        for i in 0..n {
            let name = format!("www.e.org/p{i}.html");
            batch.push(staged(&name, &format!("http://{name}"), "text/html", &page(600_000)));
        }
        stage.run(&mut batch).unwrap();
        let big_temp = batch[0].replacement.as_ref().unwrap().temp.as_ref().unwrap().to_path_buf();
        assert!(big_temp.starts_with(dir.path()) && big_temp.exists());
        assert_eq!(replaced(&batch[0]).unwrap().len(), big.len() + "http://www.e.org/".len());
        let held: usize = batch
            .iter()
            .filter_map(|s| match &s.replacement.as_ref()?.payload {
                Payload::Bytes(b) => Some(b.len()),
                _ => None,
            })
            .sum();
        let spilled = batch.iter().filter(|s| s.replacement.as_ref().unwrap().temp.is_some());
        assert!(held > 0 && held <= BATCH_IN_MEMORY, "{held}");
        assert!(spilled.count() >= 2);
        for s in &batch {
            assert!(replaced(s).unwrap().starts_with(b"<a href=\"http://www.e.org/about.html\">"));
        }
        batch.clear();
        assert!(!big_temp.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    const MAP: [(&str, &str); 4] = [
        ("www.e.org/index.html", "http://www.e.org/"),
        ("www.e.org/news/itemd708.html", "http://www.e.org/news/item.php?id=3"),
        ("www.e.org/img/logo.gif", "http://www.e.org/img/logo.gif"),
        ("www.e.org/a b.html", "http://www.e.org/a%20b.html"),
    ];

    fn map() -> LinkMap {
        LinkMap::of_pairs(MAP).unwrap()
    }

    #[test]
    fn relative_links_become_original_urls_and_other_bytes_stay() {
        let page = b"<html><!-- keep  me --><a href=\"../index.html#top\">home</a> <img src='../img/logo.gif' alt=x>\n<a href=\"itemd708.html?id=3\">x</a><a href=\"http://elsewhere.org/\">out</a><a href=\"nothere.html\">n</a><a href=\"../a%20b.html\">s</a></html>";
        let r = rewrite_html(
            page,
            "www.e.org/news/itemd708.html",
            "http://www.e.org/news/item.php?id=3",
            &map(),
            None,
        )
        .unwrap();
        let out = String::from_utf8(r.bytes.clone()).unwrap();
        assert!(out.contains("href=\"http://www.e.org/#top\""), "{out}");
        assert!(
            out.contains("src='http://www.e.org/img/logo.gif'")
                || out.contains("src=\"http://www.e.org/img/logo.gif\""),
            "{out}"
        );
        assert!(out.contains("href=\"http://www.e.org/news/item.php?id=3\""), "{out}");
        assert!(out.contains("href=\"http://elsewhere.org/\""));
        assert!(out.contains("href=\"http://www.e.org/news/nothere.html\""), "{out}");
        assert!(out.contains("href=\"http://www.e.org/a%20b.html\""), "{out}");
        assert!(out.starts_with("<html><!-- keep  me --><a "));
        assert_eq!((r.to_mirror, r.to_outside), (4, 1));
        assert_eq!(percent_decode("a%20b%zz%é%4"), "a b%zz%é%4");
    }

    #[test]
    fn css_urls_and_imports() {
        let css = "@import \"a.css\";\n.x { background: url( '../img/logo.gif' ) }\n.y{b:url(data:image/png;base64,AA)}";
        let out = rewrite_css_links(css, |l| (!l.starts_with("data:")).then(|| format!("[{l}]")));
        assert_eq!(
            out,
            "@import \"[a.css]\";\n.x { background: url( '[../img/logo.gif]' ) }\n.y{b:url(data:image/png;base64,AA)}"
        );
    }

    #[test]
    fn a_tag_larger_than_the_rewriter_bound_is_refused_not_buffered() {
        let mut page = b"<html><a href=\"".to_vec();
        page.resize(page.len() + MAX_REWRITER_MEMORY + CHUNK, b'a');
        page.extend_from_slice(b"\">x</a></html>");
        let err = rewrite_html(&page, "www.e.org/x.html", "http://www.e.org/x.html", &map(), None)
            .unwrap_err();
        assert!(
            matches!(err, RewriteError::Html(RewritingError::MemoryLimitExceeded(_))),
            "{err:?}"
        );
        assert!(err.to_string().to_lowercase().contains("memory"), "{err}");
    }

    #[test]
    fn a_page_in_an_encoding_lol_html_cannot_parse_is_refused_with_it() {
        let page = "<a href=\"x.html\">x</a>".encode_utf16().flat_map(u16::to_le_bytes);
        let page: Vec<u8> = page.collect();
        let (save, url) = ("www.e.org/x.html", "http://www.e.org/x.html");
        let err =
            rewrite_html_stream(&page[..], Vec::new(), encoding_rs::UTF_16LE, save, url, &map())
                .unwrap_err();
        assert!(matches!(err, RewriteError::Encoding(e) if e == encoding_rs::UTF_16LE), "{err:?}");
        assert_eq!(err.to_string(), "encoding is not ASCII-compatible");
    }

    #[test]
    fn style_blocks_are_rewritten_in_pieces_without_splitting_a_url() {
        let mut css = String::from("<style>");
        for i in 0..5000 {
            css.push_str(&format!(".c{i} {{ background: url(../img/logo.gif) }}\n"));
        }
        css.push_str("</style>");
        let r = rewrite_html(
            css.as_bytes(),
            "www.e.org/news/x.html",
            "http://www.e.org/news/x.html",
            &map(),
            None,
        )
        .unwrap();
        assert_eq!(r.to_mirror, 5000);
        assert_eq!(r.changes.len(), MAX_LISTED_CHANGES);
        let out = String::from_utf8(r.bytes).unwrap();
        assert_eq!(out.matches("url(http://www.e.org/img/logo.gif)").count(), 5000);
    }

    #[test]
    fn windows_1252_pages_keep_their_bytes() {
        let page = b"<html><meta charset=windows-1252><p>caf\xe9</p><a href=\"../index.html\">h</a></html>";
        let r = rewrite_html(
            page,
            "www.e.org/news/x.html",
            "http://www.e.org/news/x.html",
            &map(),
            None,
        )
        .unwrap();
        assert!(r.bytes.windows(4).any(|w| w == b"caf\xe9"));
        assert_eq!(r.to_mirror, 1);
    }

    /// Rewrites a page saved at www.e.org/news/x.html, with a few more mirror files.
    fn rw(page: &[u8]) -> Vec<u8> {
        let more = [
            ("www.e.org/q.html", "http://www.e.org/it's.html"),
            ("www.e.org/sp.html", "http://www.e.org/a b.html"),
            ("www.e.org/news/m.html", "http://www.e.org/m.php?a=1&b=2"),
        ];
        let m = LinkMap::of_pairs(MAP.into_iter().chain(more)).unwrap();
        rewrite_html(page, "www.e.org/news/x.html", "http://www.e.org/news/x.html", &m, None)
            .unwrap()
            .bytes
    }

    fn same(page: &str, want: &str) {
        let got = rw(page.as_bytes());
        assert_eq!(String::from_utf8_lossy(&got), want);
    }

    #[test]
    fn self_closing_tags_keep_their_slash_and_spacing() {
        same(
            "<img src=\"../img/logo.gif\"/><br/><img src=\"../img/logo.gif\" /><link href=\"../index.html\"/>",
            "<img src=\"http://www.e.org/img/logo.gif\"/><br/><img src=\"http://www.e.org/img/logo.gif\" /><link href=\"http://www.e.org/\"/>",
        );
    }

    #[test]
    fn quoting_is_kept_and_a_quote_in_the_new_value_is_escaped() {
        same("<a href='../index.html'>", "<a href='http://www.e.org/'>");
        same("<a href='../q.html'>", "<a href='http://www.e.org/it&#39;s.html'>");
        same("<a href=\"../q.html\">", "<a href=\"http://www.e.org/it's.html\">");
        same("<a href=../index.html>", "<a href=http://www.e.org/>");
        same("<a href=../sp.html class=x>", "<a href=http://www.e.org/a&#32;b.html class=x>");
        same("<a href=../q.html>", "<a href=http://www.e.org/it&#39;s.html>");
    }

    #[test]
    fn case_and_whitespace_inside_tags_are_kept() {
        same(
            "<A HREF=\"../index.html\" CLASS=x>Home</A>",
            "<A HREF=\"http://www.e.org/\" CLASS=x>Home</A>",
        );
        same(
            "<a\n  href = \"../index.html\"\n\ttitle='t' >x</a\n>",
            "<a\n  href = \"http://www.e.org/\"\n\ttitle='t' >x</a\n>",
        );
        same(
            "<IMG\r\nSrc='../img/logo.gif'\r\n/>",
            "<IMG\r\nSrc='http://www.e.org/img/logo.gif'\r\n/>",
        );
    }

    #[test]
    fn entities_in_values_are_read_and_written_as_the_page_did() {
        same(
            "<a href=\"nothere.php?a=1&amp;b=2\">&amp;</a>",
            "<a href=\"http://www.e.org/news/nothere.php?a=1&amp;b=2\">&amp;</a>",
        );
        same(
            "<a href=\"nothere.php?a=1&b=2\">",
            "<a href=\"http://www.e.org/news/nothere.php?a=1&b=2\">",
        );
        same("<a href=\"m.html\">", "<a href=\"http://www.e.org/m.php?a=1&amp;b=2\">");
        // An absolute value is not touched, entities and all.
        same("<a href=\"http://x.org/?a&amp;b\">", "<a href=\"http://x.org/?a&amp;b\">");
    }

    #[test]
    fn comments_scripts_and_cdata_are_not_rewritten() {
        let keep = "<!-- <a href=\"../index.html\"> --><script>var s = '<a href=\"../index.html\">';</script><![CDATA[<a href=\"../index.html\">]]><textarea><a href=\"../index.html\"></textarea>";
        same(keep, keep);
        same(
            &format!("{keep}<a href=\"../index.html\">"),
            &format!("{keep}<a href=\"http://www.e.org/\">"),
        );
    }

    #[test]
    fn a_windows_1252_page_keeps_every_other_byte() {
        let page = b"<meta charset=windows-1252><p title=\"caf\xe9\">caf\xe9</p><a href=\"../index.html\" title=\"\xe9t\xe9\"/><a href=\"caf\xe9.html\">";
        let want = b"<meta charset=windows-1252><p title=\"caf\xe9\">caf\xe9</p><a href=\"http://www.e.org/\" title=\"\xe9t\xe9\"/><a href=\"http://www.e.org/news/caf%C3%A9.html\">";
        assert_eq!(String::from_utf8_lossy(&rw(page)), String::from_utf8_lossy(want));
        assert_eq!(rw(page), want.to_vec());
        // Bytes that are not valid UTF-8 in a page read as UTF-8 pass through too.
        let bad = b"<p>\xff\xfe</p><style>.a{b:url(../img/logo.gif)} \xff</style><a href=\"../index.html\">";
        let r = rewrite_html(
            bad,
            "www.e.org/news/x.html",
            "http://www.e.org/news/x.html",
            &map(),
            Some("text/html; charset=utf-8"),
        )
        .unwrap();
        assert_eq!(
            r.bytes,
            b"<p>\xff\xfe</p><style>.a{b:url(http://www.e.org/img/logo.gif)} \xff</style><a href=\"http://www.e.org/\">".to_vec()
        );
    }

    #[test]
    fn css_in_style_elements_and_attributes_changes_only_its_urls() {
        same(
            "<STYLE type=text/css>\n.a { background: URL( \"../img/logo.gif\" ) }\n@import '../index.html';\n</STYLE ><div style='background:url(../img/logo.gif); color:red'/>",
            "<STYLE type=text/css>\n.a { background: URL( \"http://www.e.org/img/logo.gif\" ) }\n@import 'http://www.e.org/';\n</STYLE ><div style='background:url(http://www.e.org/img/logo.gif); color:red'/>",
        );
        same(
            "<style>a{b:url(../sp.html)}</style>",
            "<style>a{b:url(http://www.e.org/a%20b.html)}</style>",
        );
    }

    #[test]
    fn refresh_and_srcset_change_only_their_urls() {
        same(
            "<meta http-equiv=\"Refresh\" content=\"0; URL='../index.html'\" />",
            "<meta http-equiv=\"Refresh\" content=\"0; URL='http://www.e.org/'\" />",
        );
        same(
            "<img srcset=\"../img/logo.gif 1x,  ../index.html 2x\"/>",
            "<img srcset=\"http://www.e.org/img/logo.gif 1x,  http://www.e.org/ 2x\"/>",
        );
    }

    #[test]
    fn an_unterminated_style_and_an_svg_style_do_not_swallow_the_page() {
        same(
            "<svg><style>.a{b:url(../img/logo.gif)}</svg><p>url(../index.html)</p><a href=\"../index.html\">",
            "<svg><style>.a{b:url(../img/logo.gif)}</svg><p>url(../index.html)</p><a href=\"http://www.e.org/\">",
        );
        same("<style>a{b:url(../index.html)}", "<style>a{b:url(http://www.e.org/)}");
    }

    /// A reader handing out a few bytes at a time.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn tags_and_style_blocks_split_across_reads_come_out_the_same() {
        let page = "<html><!-- c --><STYLE>\n.a{x:url(../img/logo.gif)}\n</STYLE><a\nHREF='../index.html'/><img src=../img/logo.gif><script>'<a href=\"../x\">'</script><p style=\"b:url('../index.html')\">&amp;</p>";
        let want = rw(page.as_bytes());
        assert!(String::from_utf8_lossy(&want).contains("HREF='http://www.e.org/'/>"));
        for step in [1, 2, 3, 7, 64] {
            let mut out = Vec::new();
            rewrite_html_stream(
                Trickle(page.as_bytes(), step),
                &mut out,
                encoding_rs::UTF_8,
                "www.e.org/news/x.html",
                "http://www.e.org/news/x.html",
                &map(),
            )
            .unwrap();
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&want), "{step}");
        }
        // A tag across the boundary of the rewriter's own chunks.
        for pad in CHUNK - 20..CHUNK + 2 {
            let page = format!("{}<img src=\"../img/logo.gif\"/>x", " ".repeat(pad));
            let want = page.replace("../img/logo.gif", "http://www.e.org/img/logo.gif");
            assert_eq!(String::from_utf8(rw(page.as_bytes())).unwrap(), want, "{pad}");
        }
    }

    #[test]
    fn stylesheets_keep_their_bytes_around_urls() {
        let css = b"/* caf\xe9 */\n.a { background: url( '../img/logo.gif' ) }\n@import \"../index.html\";\r\n";
        let r = rewrite_css(css, "www.e.org/news/x.css", "http://www.e.org/news/x.css", &map());
        assert_eq!(
            r.bytes,
            b"/* caf\xe9 */\n.a { background: url( 'http://www.e.org/img/logo.gif' ) }\n@import \"http://www.e.org/\";\r\n".to_vec()
        );
        assert_eq!(r.to_mirror, 2);
    }
}
