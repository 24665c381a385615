//! Web text types of payloads no PRONOM signature names and whose first bytes are text
//! (`formats::text`): HTML, CSS, JavaScript, JSON, XML/SVG, else plain text.
//!
//! PRONOM has no content signature for most of these (CSS, JavaScript and JSON have
//! extension-only entries; HTML's and XML's signatures are optional markers), and a WARC
//! payload has no extension. So the content is read as text, each check documented below, and
//! a type is named only as precisely as the checks support: HTML with no version, XML and SVG
//! by their declaration or root element, JSON only when the whole payload parses. CSS and
//! JavaScript cannot be told apart from other text by their characters alone: they are named
//! only when the harvest declared them and their syntax is seen. Every judgement carries the
//! checks that ran, for the PREMIS notes.

use std::fmt;

use regex::bytes::Regex;
use std::sync::LazyLock;

use super::text::{TEXT_WINDOW, TextKind, text_start};

/// Payloads up to this size are parsed whole as JSON; a larger one is not called JSON (its
/// bytes would have to be read twice, or held).
pub const JSON_LIMIT: usize = 1024 * 1024;

/// A web text type the content supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebKind {
    /// HTML elements at the start (WHATWG sniffing): `fmt/96`, no version claimed.
    Html,
    /// CSS syntax, declared as CSS: `x-fmt/224`.
    Css,
    /// JavaScript syntax, declared as JavaScript: `x-fmt/423`.
    JavaScript,
    /// The whole payload parses as a JSON object or array: `fmt/817`.
    Json,
    /// An XML declaration (`fmt/101`, or `fmt/1776` for version 1.1) or a root element with a
    /// namespace (`fmt/101`).
    Xml {
        /// Version 1.1 declared.
        v11: bool,
    },
    /// An `svg` root element stating its version: 1.0 `fmt/91`, 1.1 `fmt/92`, 1.2 `fmt/413`.
    Svg(&'static str),
    /// None of the above: `x-fmt/111`.
    Plain,
}

impl WebKind {
    /// The PRONOM format of this kind (see each variant).
    pub fn puid(self) -> &'static str {
        match self {
            WebKind::Html => "fmt/96",
            WebKind::Css => "x-fmt/224",
            WebKind::JavaScript => "x-fmt/423",
            WebKind::Json => "fmt/817",
            WebKind::Xml { v11: false } => "fmt/101",
            WebKind::Xml { v11: true } => "fmt/1776",
            WebKind::Svg("1.0") => "fmt/91",
            WebKind::Svg("1.2") => "fmt/413",
            WebKind::Svg(_) => "fmt/92",
            WebKind::Plain => super::droid::PLAIN_TEXT,
        }
    }
}

impl fmt::Display for WebKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WebKind::Html => "HTML",
            WebKind::Css => "CSS",
            WebKind::JavaScript => "JavaScript",
            WebKind::Json => "JSON",
            WebKind::Xml { .. } => "XML",
            WebKind::Svg(_) => "SVG",
            WebKind::Plain => "plain text",
        })
    }
}

/// What the content says of the declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// The content is consistent with it.
    Consistent,
    /// The content does not support it (why); text cannot rule a type out.
    NotConfirmed(String),
    /// The declared type is no text type: the text checks say nothing of it.
    NotText,
}

/// A text payload judged: its kind, the checks that ran (for the basis), and the fit of the
/// declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// What the content supports.
    pub kind: WebKind,
    /// The basis, e.g. `declared text/css consistent with the content (no signature matches;
    /// CSS syntax seen in the first 4096 bytes); its first bytes are ASCII text`.
    pub basis: String,
    /// The declared type against the content.
    pub fit: Fit,
}

/// A text payload to judge.
#[derive(Debug, Clone, Copy)]
pub struct Content<'a> {
    /// Its first bytes (at least the first [`TEXT_WINDOW`], or all of it).
    pub head: &'a [u8],
    /// The whole payload, when it is held and at most [`JSON_LIMIT`] bytes.
    pub whole: Option<&'a [u8]>,
    /// Its character class.
    pub class: TextKind,
}

/// The families of declared types the checks speak of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Declared {
    Html,
    Xml,
    Svg,
    Css,
    JavaScript,
    Json,
    Plain,
    OtherText,
    NotText,
}

/// The family of a declared type (lower-case, without parameters, aliases resolved).
fn family(t: &str) -> Declared {
    match t {
        "text/html" | "application/xhtml+xml" => Declared::Html,
        "image/svg+xml" => Declared::Svg,
        "text/css" => Declared::Css,
        "application/javascript"
        | "text/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "text/ecmascript" => Declared::JavaScript,
        "application/json" | "text/json" => Declared::Json,
        "text/plain" => Declared::Plain,
        t if t.ends_with("+json") => Declared::Json,
        t if t.ends_with("+xml") || t.ends_with("/xml") => Declared::Xml,
        t if t.starts_with("text/") => Declared::OtherText,
        _ => Declared::NotText,
    }
}

/// Judges a text payload no signature matches, declared as `declared` (normalized).
pub fn judge(c: Content<'_>, declared: &str) -> Judged {
    let fam = family(declared);
    let (kind, checks) = kind_of(c, fam);
    let fit = fit(fam, kind, declared, &checks);
    let said = match fit {
        Fit::Consistent => format!("declared {declared} consistent with the content"),
        _ => format!("the content is {kind}"),
    };
    let basis =
        format!("{said} (no signature matches; {checks}); its first bytes are {} text", c.class);
    Judged { kind, basis, fit }
}

/// The kind the content supports and the checks that ran, in words.
fn kind_of(c: Content<'_>, fam: Declared) -> (WebKind, String) {
    let head = &c.head[..c.head.len().min(TEXT_WINDOW)];
    let start = text_start(head);
    let mut ran = Vec::new();
    if start.starts_with(b"{") || start.starts_with(b"[") {
        match json(c.whole) {
            Ok(n) => return (WebKind::Json, format!("parses whole as JSON ({n} bytes)")),
            Err(why) => ran.push(why.to_string()),
        }
    }
    if start.starts_with(b"<") {
        if let Some(found) = markup(start) {
            return found;
        }
        ran.push("no HTML element, XML declaration or namespaced root element at its start".into());
    }
    let window = format!("in the first {TEXT_WINDOW} bytes");
    if fam == Declared::Css {
        if css(head) {
            return (WebKind::Css, format!("CSS syntax seen {window}"));
        }
        ran.push(format!("no CSS syntax seen {window}"));
    }
    if fam == Declared::JavaScript {
        if javascript(head) {
            return (WebKind::JavaScript, format!("JavaScript syntax seen {window}"));
        }
        ran.push(format!("no JavaScript syntax seen {window}"));
    }
    if ran.is_empty() {
        ran.push("neither markup nor a JSON object or array at its start".into());
    }
    (WebKind::Plain, ran.join("; "))
}

/// Why a payload that starts like JSON is not called JSON.
#[derive(Debug, thiserror::Error)]
enum NotJson {
    /// Longer than what is parsed.
    #[error("starts like JSON but is over {JSON_LIMIT} bytes: not parsed")]
    TooLong,
    /// It does not parse.
    #[error("starts like JSON but does not parse as JSON (line {line}, column {column}: {kind})")]
    Invalid { line: usize, column: usize, kind: &'static str },
}

/// Whether the whole payload parses as JSON (its size), else why it is not called JSON. The
/// value is not built (`IgnoredAny`): memory stays that of the payload held.
fn json(whole: Option<&[u8]>) -> Result<usize, NotJson> {
    let Some(bytes) = whole else { return Err(NotJson::TooLong) };
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Ok(_) => Ok(bytes.len()),
        Err(e) => {
            Err(NotJson::Invalid { line: e.line(), column: e.column(), kind: error_kind(&e) })
        }
    }
}

/// A `serde_json` error's kind in words, for a note that does not quote the payload.
fn error_kind(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Syntax => "a syntax error",
        serde_json::error::Category::Eof => "it ends early",
        serde_json::error::Category::Data => "unexpected data",
        serde_json::error::Category::Io => "a read error",
    }
}

/// HTML by the WHATWG sniffing rules (an HTML element or `<!DOCTYPE html` at the start), else
/// XML or SVG by a declaration or the root element.
fn markup(start: &[u8]) -> Option<(WebKind, String)> {
    let mut after_comments = start;
    while let Some(rest) = after_comments.strip_prefix(b"<!--") {
        let end = memchr::memmem::find(rest, b"-->").map_or(rest.len(), |i| i + 3);
        after_comments = text_start(&rest[end..]);
    }
    // The WHATWG rules call a leading comment HTML: only an element counts here.
    if !after_comments.is_empty() && super::mime::sniff(after_comments) == "text/html" {
        return Some((WebKind::Html, "HTML elements at its start (WHATWG sniffing rules)".into()));
    }
    let declaration = start.starts_with(b"<?xml");
    let v11 = declaration && XML_11.is_match(&start[..start.len().min(100)]);
    let root = ROOT.captures(start);
    let tag = root.as_ref().and_then(|r| r.get(1)).map_or(&b""[..], |m| m.as_bytes());
    let name = root.as_ref().and_then(|r| r.get(2)).map(|m| m.as_bytes());
    let decl = if declaration { "an XML declaration, " } else { "" };
    if name == Some(b"svg") {
        // Only a stated version names an SVG format; without one it is XML, as far as it goes.
        let version = SVG_VERSION.captures(tag).and_then(|c| c.get(1)).map(|m| m.as_bytes());
        let known = match version {
            Some(b"1.0") => Some("1.0"),
            Some(b"1.1") => Some("1.1"),
            Some(b"1.2") => Some("1.2"),
            _ => None,
        };
        return Some(match known {
            Some(v) => (WebKind::Svg(v), format!("{decl}an svg root element of version {v}")),
            None => (
                WebKind::Xml { v11 },
                format!("{decl}an svg root element without a known version: XML, no SVG version"),
            ),
        });
    }
    if declaration {
        return Some((WebKind::Xml { v11 }, "an XML declaration".into()));
    }
    (name.is_some() && XMLNS.is_match(tag))
        .then(|| (WebKind::Xml { v11: false }, "a root element with an XML namespace".into()))
}

/// An XML declaration of version 1.1.
static XML_11: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^<\?xml\s+version\s*=\s*["']1\.1["']"#).expect("regex"));

/// The root element's start tag: after the declaration, processing instructions, comments and
/// a DOCTYPE: the tag and its local name captured.
static ROOT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*(?:(?:<\?[^>]*\?>|<!--(?s:.*?)-->|<!DOCTYPE[^>]*>)\s*)*(<(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)[^>]*>)"#)
        .expect("regex")
});

/// An SVG root's `version` attribute.
static SVG_VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\sversion\s*=\s*["']([0-9.]+)["']"#).expect("regex"));

/// A namespace declaration in a start tag.
static XMLNS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\sxmlns(?::[\w.-]+)?\s*=\s*["']"#).expect("regex"));

/// CSS: an at-rule written as CSS writes it (`@import url(` or a quoted name, `@charset "`, a
/// block at-rule opening its `{`), or a rule with a selector and at least one
/// `property: value` declaration closed by `}`. A word such as `@media` in prose is not enough.
fn css(head: &[u8]) -> bool {
    static CSS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r#"@(?:import|namespace)\s+(?:[\w-]+\s+)?(?:url\(|["'])|@charset\s+""#,
            r"|@(?:media|font-face|keyframes|-webkit-keyframes|supports|page)\b[^{};]{0,200}\{",
            r"|[\w.#*\]):>+~,\s-]+\{\s*-?[A-Za-z][\w-]*\s*:[^{};]*(?:;[^{}]*)?\}"
        ))
        .expect("regex")
    });
    CSS.is_match(head)
}

/// JavaScript: a construct written as code (`function (`, `var x =` or `;`, `let x =`,
/// `const x =`, `) =>`, `return ...;`, `typeof x`, `"use strict"`, `import ... from "`,
/// `export default`) or a browser object's member (`document.title`, `window.location`).
/// Words such as `return` or `window.` in prose are not enough.
fn javascript(head: &[u8]) -> bool {
    static JS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"\bfunction\s*[\w$]*\s*\([^)]{0,200}\)\s*\{|\bvar\s+[\w$]+\s*[=;,]",
            r"|\b(?:let|const)\s+[\w$]+\s*=|(?:\)|\b[\w$]+)\s*=>",
            r#"|\breturn\b[^;\n]{0,200};|\btypeof\s+[\w$]+|["']use strict["']"#,
            r#"|\bimport\s[^;]*\bfrom\s*["']|\bexport\s+(?:default|function|const|class)\s"#,
            r"|\b(?:document|window)\.[A-Za-z_$][\w$]*\s*[.(=\[;]"
        ))
        .expect("regex")
    });
    JS.is_match(head)
}

/// The declared family against the kind found.
fn fit(fam: Declared, kind: WebKind, declared: &str, checks: &str) -> Fit {
    use WebKind as K;
    let consistent = match (fam, kind) {
        (Declared::NotText, _) => return Fit::NotText,
        (Declared::Plain, _) => true,
        (Declared::Html, K::Html | K::Xml { .. } | K::Svg(_)) => true,
        (Declared::Xml, K::Xml { .. } | K::Svg(_) | K::Html) => true,
        // SVG is XML: an XML payload is consistent with it, the version left open.
        (Declared::Svg, K::Svg(_) | K::Xml { .. }) => true,
        (Declared::Css, K::Css) => true,
        (Declared::JavaScript, K::JavaScript | K::Json) => true,
        (Declared::Json, K::Json) => true,
        _ => false,
    };
    if consistent {
        return Fit::Consistent;
    }
    let why = match fam {
        Declared::OtherText => format!("webaip has no check for {declared}"),
        _ => checks.to_string(),
    };
    Fit::NotConfirmed(format!("declared {declared}; the content is {kind}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(bytes: &[u8], declared: &str) -> Judged {
        let class = super::super::text::classify(bytes).expect("text");
        judge(Content { head: bytes, whole: Some(bytes), class }, declared)
    }

    #[test]
    fn css_and_javascript_are_named_when_declared_and_their_syntax_is_seen() {
        let css = judged(b"body { margin: 0; }\n.nav a:hover{color:#fff}", "text/css");
        assert_eq!((css.kind, &css.fit), (WebKind::Css, &Fit::Consistent));
        assert_eq!(
            css.basis,
            "declared text/css consistent with the content (no signature matches; CSS syntax seen in the first 4096 bytes); its first bytes are ASCII text"
        );
        let js = judged(b"(function(){ var a = document.title; })();", "application/javascript");
        assert_eq!((js.kind, js.kind.puid()), (WebKind::JavaScript, "x-fmt/423"));
        // Not declared: the same bytes are only plain text.
        assert_eq!(judged(b"body { margin: 0; }", "text/plain").kind, WebKind::Plain);
        // Declared, but prose that only names their words: not confirmed.
        for (prose, declared) in [
            (&b"Look out of the window. I will return. Read about @media queries."[..], "text/css"),
            (b"Look out of the window. I will return the book, var and all.", "text/javascript"),
        ] {
            assert_eq!(judged(prose, declared).kind, WebKind::Plain, "{declared}");
        }
        let media = judged(b"@media screen and (min-width: 40em) { p { margin: 0 } }", "text/css");
        assert_eq!(media.kind, WebKind::Css);
        let arrow = judged(b"export default (a) => a + 1;", "text/javascript");
        assert_eq!(arrow.kind, WebKind::JavaScript);
        // Declared CSS, but prose: not confirmed, and said why.
        let prose = judged(b"Hello there, nothing to style.", "text/css");
        assert_eq!(prose.kind, WebKind::Plain);
        let Fit::NotConfirmed(why) = prose.fit else { panic!("{prose:?}") };
        assert!(why.contains("no CSS syntax seen in the first 4096 bytes"), "{why}");
    }

    #[test]
    fn json_only_when_it_parses_whole() {
        let ok = judged(b" {\"a\": [1, 2, {\"b\": null}]}\n", "application/json");
        assert_eq!((ok.kind, &ok.fit), (WebKind::Json, &Fit::Consistent));
        assert!(ok.basis.contains("parses whole as JSON (28 bytes)"), "{}", ok.basis);
        let bad = judged(b"{\"a\": [1, 2", "application/json");
        assert_eq!(bad.kind, WebKind::Plain);
        let Fit::NotConfirmed(why) = bad.fit else { panic!("{bad:?}") };
        assert!(why.contains("does not parse as JSON (line 1, column 11: it ends early)"), "{why}");
        // Too big to be held: not parsed, not called JSON.
        let head = b"[1, 2, 3";
        let class = TextKind::Ascii;
        let big = judge(Content { head, whole: None, class }, "application/json");
        assert_eq!(big.kind, WebKind::Plain);
        assert!(big.basis.contains("over 1048576 bytes: not parsed"), "{}", big.basis);
    }

    #[test]
    fn markup_is_html_xml_or_svg_by_what_its_start_says() {
        let page = judged(b"\n<div class=x>hi</div>", "text/html");
        assert_eq!(
            (page.kind, page.kind.puid(), &page.fit),
            (WebKind::Html, "fmt/96", &Fit::Consistent)
        );
        let svg = br#"<?xml version="1.0"?><!-- x --><svg xmlns="http://www.w3.org/2000/svg" version="1.1"></svg>"#;
        assert_eq!(judged(svg, "image/svg+xml").kind.puid(), "fmt/92");
        let tiny = br#"<svg version="1.2" baseProfile="tiny" xmlns="http://www.w3.org/2000/svg"/>"#;
        assert_eq!(judged(tiny, "image/svg+xml").kind.puid(), "fmt/413");
        // No version stated: XML, never a guessed SVG version; consistent with its type.
        let bare = judged(br#"<svg xmlns="http://www.w3.org/2000/svg"/>"#, "image/svg+xml");
        assert_eq!((bare.kind, &bare.fit), (WebKind::Xml { v11: false }, &Fit::Consistent));
        assert!(bare.basis.contains("an svg root element without a known version"), "{bare:?}");
        let feed = br#"<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title></feed>"#;
        let f = judged(feed, "application/atom+xml");
        assert_eq!((f.kind, &f.fit), (WebKind::Xml { v11: false }, &Fit::Consistent));
        // A bare tag that is neither HTML nor namespaced: plain text.
        assert_eq!(judged(b"<foo>bar</foo>", "text/plain").kind, WebKind::Plain);
    }

    #[test]
    fn plain_text_keeps_its_class_and_a_binary_declared_type_is_no_text_checks_business() {
        let latin = judged(b"Caf\xe9 ferm\xe9 le lundi.\n", "text/plain");
        assert_eq!((latin.kind, &latin.fit), (WebKind::Plain, &Fit::Consistent));
        assert!(latin.basis.ends_with("its first bytes are ISO-8859 text"), "{}", latin.basis);
        assert_eq!(judged(b"removed", "image/jpeg").fit, Fit::NotText);
    }
}
