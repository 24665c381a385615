//! A small indenting XML writer for METS fragments.
//!
//! Sections that grow with the number of records are written to spill files and copied into
//! the final document later, each at its own depth; this writer takes the depth it starts at.
//! Escaping is quick-xml's. Characters XML 1.0 forbids (C0 controls other than tab and line
//! ends, U+FFFE, U+FFFF), which real URLs, headers and file names do contain, are
//! percent-encoded so the METS stays well-formed and the value stays recoverable.

use std::borrow::Cow;
use std::io::{self, Write};

use quick_xml::escape::escape;

/// Writes elements with two-space indentation.
pub(crate) struct XmlOut<W: Write> {
    out: W,
    depth: usize,
}

impl<W: Write> XmlOut<W> {
    /// A writer whose first element is at `depth`.
    pub(crate) fn new(out: W, depth: usize) -> Self {
        XmlOut { out, depth }
    }

    /// The underlying writer.
    pub(crate) fn into_inner(self) -> W {
        self.out
    }

    /// Mutable access to the underlying writer (for copying spilled fragments in).
    pub(crate) fn inner_mut(&mut self) -> &mut W {
        &mut self.out
    }

    fn indent(&mut self) -> io::Result<()> {
        const SPACES: &[u8] = &[b' '; 64];
        let mut n = self.depth * 2;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.out.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    fn open_tag(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        self.indent()?;
        write!(self.out, "<{name}")?;
        for (k, v) in attrs {
            write!(self.out, " {k}=\"{}\"", escape(xml_safe(v).as_ref()))?;
        }
        Ok(())
    }

    /// `<name attrs>` and one level deeper.
    pub(crate) fn start(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        self.open_tag(name, attrs)?;
        self.out.write_all(b">\n")?;
        self.depth += 1;
        Ok(())
    }

    /// `</name>` one level up.
    pub(crate) fn end(&mut self, name: &str) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        self.indent()?;
        writeln!(self.out, "</{name}>")
    }

    /// `<name attrs/>`.
    pub(crate) fn empty(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        self.open_tag(name, attrs)?;
        self.out.write_all(b"/>\n")
    }

    /// `<name attrs>text</name>`.
    pub(crate) fn text(
        &mut self,
        name: &str,
        attrs: &[(&str, &str)],
        text: &str,
    ) -> io::Result<()> {
        self.open_tag(name, attrs)?;
        writeln!(self.out, ">{}</{name}>", escape(xml_safe(text).as_ref()))
    }

    /// Raw bytes (an XML declaration, a spilled fragment).
    pub(crate) fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)
    }
}

/// `s` with the characters XML 1.0 forbids percent-encoded.
pub(crate) fn xml_safe(s: &str) -> Cow<'_, str> {
    let bad = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}');
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_replaces_forbidden_characters() {
        let mut x = XmlOut::new(Vec::new(), 1);
        x.start("a", &[("u", "http://e.org/?a=1&b=\u{1}\"")]).unwrap();
        x.text("b", &[], "<tag> \u{7f} ok \u{ffff}").unwrap();
        x.end("a").unwrap();
        let s = String::from_utf8(x.into_inner()).unwrap();
        assert_eq!(
            s,
            "  <a u=\"http://e.org/?a=1&amp;b=%01&quot;\">\n    <b>&lt;tag&gt; \u{7f} ok %EF%BF%BF</b>\n  </a>\n"
        );
    }
}
