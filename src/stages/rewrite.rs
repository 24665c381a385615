//! Link rewriting for PANDAS (HTTrack) mirrors: relative links between mirror files become the
//! original absolute URLs again (P5.7).
//!
//! HTML is streamed through lol_html in the page's own encoding, so bytes outside the rewritten
//! attribute values pass through unchanged. The attributes that carry URLs (`href`, `src`,
//! `srcset`, `action`, `background`, `poster`, `data`, `longdesc`, `cite`), `<meta
//! http-equiv=refresh>`, `<base>`, inline `style` and `<style>` blocks are rewritten; CSS
//! (`url()`, `@import`) is scanned by hand, since no CSS crate rewrites values in place.
//!
//! A link is rewritten when it is relative: to the original URL of the mirror file it names
//! (through the reverse map of save paths), or, when it names nothing in the mirror, resolved
//! against the page's original URL. Absolute links, fragments and `mailto:`/`javascript:` links
//! are left alone.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Read, Write};

use encoding_rs::Encoding;
use lol_html::html_content::ContentType;
use lol_html::{AsciiCompatibleEncoding, HtmlRewriter, MemorySettings, Settings, element, text};
use url::Url;

/// Save path (relative to the instance, decoded) -> original URL.
#[derive(Debug, Default, Clone)]
pub struct LinkMap {
    by_path: HashMap<String, String>,
}

impl LinkMap {
    /// Adds a mirror file.
    pub fn insert(&mut self, save_path: &str, url: &str) {
        self.by_path.insert(save_path.to_string(), url.to_string());
    }

    /// The original URL of a save path.
    pub fn get(&self, save_path: &str) -> Option<&str> {
        self.by_path.get(save_path).map(String::as_str)
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }
}

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
pub const CHUNK: usize = 64 * 1024;

/// lol_html's own buffers (a start tag or text split across chunks) may not grow past this: a
/// page holding one tag of hundreds of megabytes is refused, not buffered.
pub const MAX_REWRITER_MEMORY: usize = 16 << 20;

/// CSS of a `<style>` element is rewritten in pieces cut after a `}` once this much is held.
const STYLE_FLUSH: usize = 64 * 1024;

/// Why a page could not be rewritten.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    /// Reading the page or writing the result failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// lol_html refused the page (its memory bound, an encoding it cannot handle, ...).
    #[error("{0}")]
    Html(String),
}

impl Rewritten {
    /// Links rewritten in all.
    pub fn count(&self) -> u64 {
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
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => return false,
    }
    for c in chars {
        if c == ':' {
            return true;
        }
        if !(c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.') {
            return false;
        }
    }
    false
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

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&amp;", "&")
        .replace("&#38;", "&")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

/// Values written into attributes: `&` escaped (lol_html escapes only `"`).
fn attr_escape(s: &str) -> String {
    s.replace('&', "&amp;")
}

struct State {
    to_mirror: u64,
    to_outside: u64,
    changes: Vec<(String, String)>,
}

impl State {
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

    fn rewrite_css(&mut self, r: &Resolver<'_>, css: &str) -> String {
        rewrite_css_links(css, |link| self.apply(r, link))
    }
}

/// The encoding of an HTML page: a `charset` in the HTTP Content-Type, else a `<meta charset>`
/// in the first KiB, else UTF-8 if the bytes are valid UTF-8, else windows-1252 (which maps
/// every byte, so nothing is lost).
pub fn html_encoding(bytes: &[u8], content_type: Option<&str>) -> &'static Encoding {
    let from_label =
        |label: &str| Encoding::for_label(label.trim().trim_matches(['"', '\'']).as_bytes());
    if let Some(ct) = content_type
        && let Some(cs) = ct.to_ascii_lowercase().split("charset=").nth(1)
        && let Some(e) = from_label(cs.split(';').next().unwrap_or(""))
    {
        return ascii_compatible(e);
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    if let Some(pos) = head.find("charset=") {
        let rest = &head[pos + 8..];
        let label: String = rest
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        if let Some(e) = from_label(&label) {
            return ascii_compatible(e);
        }
    }
    if std::str::from_utf8(bytes).is_ok() { encoding_rs::UTF_8 } else { encoding_rs::WINDOWS_1252 }
}

fn ascii_compatible(e: &'static Encoding) -> &'static Encoding {
    if AsciiCompatibleEncoding::new(e).is_some() { e } else { encoding_rs::WINDOWS_1252 }
}

const URL_ATTRS: [&str; 9] =
    ["href", "src", "action", "background", "poster", "data", "longdesc", "cite", "formaction"];

/// Rewrites the links of an HTML page saved at `save_path` whose original URL is `page_url`.
///
/// A wrapper of [`rewrite_html_stream`] for a page in memory: the result is in memory too.
pub fn rewrite_html(
    input: &[u8],
    save_path: &str,
    page_url: &str,
    map: &LinkMap,
    content_type: Option<&str>,
) -> Result<Rewritten, String> {
    let encoding = html_encoding(input, content_type);
    let mut bytes = Vec::with_capacity(input.len() + 256);
    let r = rewrite_html_stream(input, &mut bytes, encoding, save_path, page_url, map)
        .map_err(|e| e.to_string())?;
    Ok(Rewritten { bytes, ..r })
}

/// Rewrites the links of an HTML page read from `input` in `encoding` (see [`html_encoding`])
/// into `output`, chunk by chunk: memory is a chunk, lol_html's buffers (at most
/// [`MAX_REWRITER_MEMORY`]) and the first [`MAX_LISTED_CHANGES`] changes, whatever the size
/// of the page. The returned [`Rewritten`] has no `bytes` (they went to `output`).
pub fn rewrite_html_stream(
    mut input: impl Read,
    mut output: impl Write,
    encoding: &'static Encoding,
    save_path: &str,
    page_url: &str,
    map: &LinkMap,
) -> Result<Rewritten, RewriteError> {
    let resolver = Resolver { map, dir: dir_of(save_path), page_url: Url::parse(page_url).ok() };
    let state = RefCell::new(State { to_mirror: 0, to_outside: 0, changes: Vec::new() });
    let style_buf = RefCell::new(String::new());
    // lol_html's sink cannot fail: the first write error is kept and ends the rewrite.
    let mut write_error: Option<io::Error> = None;
    {
        let mut handlers = Vec::new();
        for attr in URL_ATTRS {
            let sel = format!("*[{attr}]");
            let st = &state;
            let r = &resolver;
            handlers.push(element!(sel, move |el| {
                if let Some(v) = el.get_attribute(attr)
                    && let Some(new) = st.borrow_mut().apply(r, &v)
                {
                    el.set_attribute(attr, &attr_escape(&new))?;
                }
                Ok(())
            }));
        }
        let st = &state;
        let r = &resolver;
        handlers.push(element!("*[srcset]", move |el| {
            if let Some(v) = el.get_attribute("srcset") {
                let mut changed = false;
                let parts: Vec<String> = v
                    .split(',')
                    .map(|cand| {
                        let t = cand.trim_start();
                        let lead = &cand[..cand.len() - t.len()];
                        let (u, rest) = t.split_at(t.find(char::is_whitespace).unwrap_or(t.len()));
                        match st.borrow_mut().apply(r, u) {
                            Some(new) => {
                                changed = true;
                                format!("{lead}{new}{rest}")
                            }
                            None => cand.to_string(),
                        }
                    })
                    .collect();
                if changed {
                    el.set_attribute("srcset", &attr_escape(&parts.join(",")))?;
                }
            }
            Ok(())
        }));
        handlers.push(element!("meta[http-equiv][content]", move |el| {
            let is_refresh =
                el.get_attribute("http-equiv").is_some_and(|v| v.eq_ignore_ascii_case("refresh"));
            if let (true, Some(c)) = (is_refresh, el.get_attribute("content")) {
                let lower = c.to_ascii_lowercase();
                if let Some(pos) = lower.find("url=") {
                    let url = c[pos + 4..].trim().trim_matches(['"', '\'']);
                    if let Some(new) = st.borrow_mut().apply(r, url) {
                        el.set_attribute(
                            "content",
                            &attr_escape(&format!("{}{}", &c[..pos + 4], new)),
                        )?;
                    }
                }
            }
            Ok(())
        }));
        handlers.push(element!("*[style]", move |el| {
            if let Some(v) = el.get_attribute("style") {
                let new = st.borrow_mut().rewrite_css(r, &v);
                if new != v {
                    el.set_attribute("style", &attr_escape(&new))?;
                }
            }
            Ok(())
        }));
        let sb = &style_buf;
        handlers.push(text!("style", move |t| {
            let mut buf = sb.borrow_mut();
            buf.push_str(t.as_str());
            // The CSS is held until the element ends, or cut after its last `}` once large, so
            // that a url() is never split and a huge <style> is not held whole.
            let cut = if t.last_in_text_node() {
                Some(buf.len())
            } else if buf.len() >= STYLE_FLUSH {
                buf.rfind('}').map(|i| i + 1)
            } else {
                None
            };
            match cut {
                Some(at) => {
                    let rest = buf.split_off(at);
                    let css = std::mem::replace(&mut *buf, rest);
                    let new = st.borrow_mut().rewrite_css(r, &css);
                    t.replace(&new, ContentType::Html);
                }
                None => t.remove(),
            }
            Ok(())
        }));
        let enc = AsciiCompatibleEncoding::new(encoding)
            .ok_or_else(|| RewriteError::Html("encoding is not ASCII-compatible".into()))?;
        let memory = MemorySettings::new().with_max_allowed_memory_usage(MAX_REWRITER_MEMORY);
        let mut settings =
            Settings::new().with_encoding(enc).with_strict(false).with_memory_settings(memory);
        for h in handlers {
            settings = settings.append_element_content_handler(h);
        }
        let sink = |c: &[u8]| {
            if write_error.is_none()
                && let Err(e) = output.write_all(c)
            {
                write_error = Some(e);
            }
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
            rewriter.write(&chunk[..n]).map_err(|e| RewriteError::Html(e.to_string()))?;
        }
        rewriter.end().map_err(|e| RewriteError::Html(e.to_string()))?;
    }
    if let Some(e) = write_error {
        return Err(e.into());
    }
    output.flush()?;
    let s = state.into_inner();
    Ok(Rewritten {
        bytes: Vec::new(),
        to_mirror: s.to_mirror,
        to_outside: s.to_outside,
        changes: s.changes,
    })
}

/// Rewrites the links of a stylesheet saved at `save_path`.
pub fn rewrite_css(input: &[u8], save_path: &str, page_url: &str, map: &LinkMap) -> Rewritten {
    let resolver = Resolver { map, dir: dir_of(save_path), page_url: Url::parse(page_url).ok() };
    let mut state = State { to_mirror: 0, to_outside: 0, changes: Vec::new() };
    // CSS is ASCII for its syntax; decode as windows-1252 when not UTF-8 so every byte
    // survives the round trip.
    let (text, utf8) = match std::str::from_utf8(input) {
        Ok(s) => (s.to_string(), true),
        Err(_) => (encoding_rs::WINDOWS_1252.decode(input).0.into_owned(), false),
    };
    let out = state.rewrite_css(&resolver, &text);
    let bytes =
        if utf8 { out.into_bytes() } else { encoding_rs::WINDOWS_1252.encode(&out).0.into_owned() };
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

/// Finds `url(...)` and `@import "..."` values in CSS and replaces those `f` rewrites; all other
/// characters are copied unchanged.
pub fn rewrite_css_links(css: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(css.len());
    // Compared in place, case-insensitively: no lowercase copy of the whole stylesheet.
    let at = |i: usize, word: &str| {
        css.as_bytes()
            .get(i..i + word.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(word.as_bytes()))
    };
    let mut i = 0;
    while i < css.len() {
        if at(i, "url(") {
            let start = i + 4;
            let Some(close) = css[start..].find(')') else { break };
            let inner = &css[start..start + close];
            let trimmed = inner.trim();
            let quote = trimmed.chars().next().filter(|c| *c == '"' || *c == '\'');
            let value = match quote {
                Some(q) => trimmed.trim_matches(q),
                None => trimmed,
            };
            out.push_str(&css[i..start]);
            match f(value) {
                Some(new) => {
                    let lead = &inner[..inner.len() - inner.trim_start().len()];
                    let trail = &inner[inner.trim_end().len()..];
                    let q = quote.map(String::from).unwrap_or_default();
                    out.push_str(&format!("{lead}{q}{new}{q}{trail}"));
                }
                None => out.push_str(inner),
            }
            out.push(')');
            i = start + close + 1;
            continue;
        }
        if at(i, "@import") {
            let after = i + 7;
            let ws = css[after..].len() - css[after..].trim_start().len();
            let q_at = after + ws;
            if let Some(q) = css[q_at..].chars().next().filter(|c| *c == '"' || *c == '\'')
                && let Some(end) = css[q_at + 1..].find(q)
            {
                let value = &css[q_at + 1..q_at + 1 + end];
                out.push_str(&css[i..q_at + 1]);
                out.push_str(&f(value).unwrap_or_else(|| value.to_string()));
                out.push(q);
                i = q_at + 1 + end + 1;
                continue;
            }
        }
        let ch = css[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    if i < css.len() {
        out.push_str(&css[i..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> LinkMap {
        let mut m = LinkMap::default();
        m.insert("www.e.org/index.html", "http://www.e.org/");
        m.insert("www.e.org/news/itemd708.html", "http://www.e.org/news/item.php?id=3");
        m.insert("www.e.org/img/logo.gif", "http://www.e.org/img/logo.gif");
        m.insert("www.e.org/a b.html", "http://www.e.org/a%20b.html");
        m
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
        assert!(err.to_lowercase().contains("memory"), "{err}");
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
}
