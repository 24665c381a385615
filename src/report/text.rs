//! How the page writes text and numbers: HTML-escaped text, grouped counts, byte sizes.

use std::fmt::Write as _;

/// `text` safe as HTML text or attribute value; control characters shown as `\xNN`, the
/// bidirectional controls that reorder text as `\u{NNNN}`.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            // Bidirectional embeddings, overrides and isolates would reorder the text after
            // them (a title turned around): shown, not obeyed.
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
                let _ = write!(out, "\\u{{{:04X}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `n` with thousands separated by commas.
pub(crate) fn number(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` bytes in SI units (`2.5 MB`), exact below 1 kB.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["kB", "MB", "GB", "TB", "PB", "EB"];
    if n < 1000 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_grouped() {
        assert_eq!(escape("<a href='x'>&\"\u{1b}"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;\\x1B");
        assert_eq!(escape("ab\u{202E}cd\u{2066}e"), "ab\\u{202E}cd\\u{2066}e");
        assert_eq!(escape("\u{2029}\u{200F}é"), "\u{2029}\u{200F}é", "not a reordering control");
        assert_eq!(number(0), "0");
        assert_eq!(number(1234567), "1,234,567");
        assert_eq!(number(999), "999");
        assert_eq!(bytes(999), "999 bytes");
        assert_eq!(bytes(2_474_000), "2.5 MB");
    }
}
