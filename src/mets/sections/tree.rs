//! Comparing a section as read with the section written back, as XML trees.

use std::collections::BTreeMap;

use quick_xml::NsReader;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;

/// One element: namespace URI and local name, attributes (namespace declarations aside),
/// trimmed text, children.
#[derive(Debug, PartialEq)]
struct Node {
    name: (String, String),
    attrs: BTreeMap<(String, String), String>,
    text: String,
    children: Vec<Node>,
}

/// What `original` holds that `written` does not, by element path (`.../@attr` for an
/// attribute, `.../text()` for text), then (with a leading `+`) what `written` holds that
/// `original` does not. Prefixes, whitespace around text and the order of siblings are not
/// compared. An empty list means the two are the same tree.
pub fn section_differences(
    original: &[u8],
    written: &[u8],
) -> Result<Vec<String>, quick_xml::Error> {
    let (a, b) = (parse(original)?, parse(written)?);
    let mut out = Vec::new();
    let path = label(&a);
    diff(&a, &b, &path, &mut out);
    Ok(out)
}

fn parse(bytes: &[u8]) -> Result<Node, quick_xml::Error> {
    let mut reader = NsReader::from_reader(bytes);
    let mut buf = Vec::new();
    let mut stack: Vec<Node> = Vec::new();
    loop {
        buf.clear();
        let (ns, event) = reader.read_resolved_event_into(&mut buf)?;
        let ns = match ns {
            ResolveResult::Bound(n) => n.0.to_string(),
            _ => String::new(),
        };
        let empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let node = element_node(&reader, &e, ns);
                if empty {
                    if let Some(done) = close(&mut stack, node) {
                        return Ok(done);
                    }
                } else {
                    stack.push(node);
                }
            }
            Event::End(_) => {
                if let Some(mut node) = stack.pop() {
                    node.text = node.text.trim().to_string();
                    if let Some(done) = close(&mut stack, node) {
                        return Ok(done);
                    }
                }
            }
            Event::Text(t) => push_text(&mut stack, &t.xml10_content()),
            Event::CData(t) => push_text(&mut stack, &t.xml10_content()),
            Event::GeneralRef(r) => push_text(&mut stack, &reference_text(&r)),
            Event::Eof => {
                let e = quick_xml::errors::SyntaxError::UnclosedTag;
                return Err(quick_xml::Error::Syntax(e));
            }
            _ => {}
        }
    }
}

/// An element's name and attributes (namespace declarations left out), by namespace.
fn element_node(reader: &NsReader<&[u8]>, e: &BytesStart<'_>, ns: String) -> Node {
    let mut attrs = BTreeMap::new();
    for a in e.attributes().flatten() {
        let key = a.key.as_ref();
        if key == "xmlns" || key.starts_with("xmlns:") {
            continue;
        }
        let (r, local) = reader.resolver().resolve_attribute(a.key);
        let ans = match r {
            ResolveResult::Bound(n) => n.0.to_string(),
            _ => String::new(),
        };
        let value = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map(|v| v.into_owned())
            .unwrap_or_default();
        attrs.insert((ans, local.as_ref().to_string()), value);
    }
    let name = (ns, e.local_name().as_ref().to_string());
    Node { name, attrs, text: String::new(), children: Vec::new() }
}

/// The text a character or entity reference stands for; an unknown entity is kept as written.
fn reference_text(r: &BytesRef<'_>) -> String {
    match r.resolve_char_ref() {
        Ok(Some(c)) => c.to_string(),
        _ => match r.xml10_content().as_ref() {
            "amp" => "&".into(),
            "lt" => "<".into(),
            "gt" => ">".into(),
            "quot" => "\"".into(),
            "apos" => "'".into(),
            other => format!("&{other};"),
        },
    }
}

fn push_text(stack: &mut [Node], s: &str) {
    if let Some(top) = stack.last_mut() {
        top.text.push_str(s);
    }
}

/// Adds `node` to its parent; returns it when it is the root.
fn close(stack: &mut [Node], node: Node) -> Option<Node> {
    match stack.last_mut() {
        Some(parent) => {
            parent.children.push(node);
            None
        }
        None => Some(node),
    }
}

/// The usual prefix of a namespace, or the URI in braces.
fn prefixed(name: &(String, String)) -> String {
    let prefix = match name.0.as_str() {
        "http://www.loc.gov/METS/" => "mets",
        "http://www.loc.gov/premis/v3" | "info:lc/xmlns/premis-v2" => "premis",
        "http://www.loc.gov/mods/v3" => "mods",
        "http://purl.org/dc/elements/1.1/" => "dc",
        "http://purl.org/dc/terms/" => "dcterms",
        "http://www.w3.org/2001/XMLSchema-instance" => "xsi",
        "http://www.w3.org/1999/xlink" => "xlink",
        "urn:webaip:xmlns:rights:1" => "wr",
        "" => return name.1.clone(),
        uri => return format!("{{{uri}}}{}", name.1),
    };
    format!("{prefix}:{}", name.1)
}

/// An element's name in a path, with its `ID` when it has one.
fn label(n: &Node) -> String {
    match n.attrs.get(&(String::new(), "ID".to_string())) {
        Some(id) => format!("{}[{id}]", prefixed(&n.name)),
        None => prefixed(&n.name),
    }
}

fn diff(a: &Node, b: &Node, path: &str, out: &mut Vec<String>) {
    for (k, v) in &a.attrs {
        if b.attrs.get(k) != Some(v) {
            out.push(format!("{path}/@{}", prefixed(k)));
        }
    }
    for k in b.attrs.keys().filter(|k| !a.attrs.contains_key(*k)) {
        out.push(format!("+{path}/@{}", prefixed(k)));
    }
    if a.text != b.text {
        let sign = if a.text.is_empty() { "+" } else { "" };
        out.push(format!("{sign}{path}/text()"));
    }
    let mut used = vec![false; b.children.len()];
    for c in &a.children {
        let same_name = |(i, d): &(usize, &Node)| !used[*i] && d.name == c.name;
        let exact = b.children.iter().enumerate().filter(same_name).find(|(_, d)| equal(c, d));
        let pick = exact.or_else(|| b.children.iter().enumerate().find(same_name));
        let child_path = format!("{path}/{}", label(c));
        match pick {
            Some((i, d)) => {
                used[i] = true;
                diff(c, d, &child_path, out);
            }
            None => out.push(child_path),
        }
    }
    for (d, _) in b.children.iter().zip(&used).filter(|(_, u)| !**u) {
        out.push(format!("+{path}/{}", label(d)));
    }
}

fn equal(a: &Node, b: &Node) -> bool {
    let mut out = Vec::new();
    diff(a, b, "", &mut out);
    out.is_empty()
}
