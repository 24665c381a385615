//! HTML as bytes: which encoding a page is in (the link rewriter, page titles and mirror
//! type sniffing all decode pages by this one rule).

use encoding_rs::Encoding;
use lol_html::AsciiCompatibleEncoding;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http_charset_wins_then_meta_then_utf8_then_windows_1252() {
        let latin = b"<meta charset=iso-8859-1><p>caf\xe9";
        assert_eq!(html_encoding(latin, Some("text/html; charset=utf-8")), encoding_rs::UTF_8);
        assert_eq!(html_encoding(latin, Some("text/html")).name(), "windows-1252");
        assert_eq!(html_encoding("<p>caf\u{e9}".as_bytes(), None), encoding_rs::UTF_8);
        assert_eq!(html_encoding(b"<p>caf\xe9", None), encoding_rs::WINDOWS_1252);
        // UTF-16 cannot be rewritten byte-wise: read as windows-1252, which loses nothing.
        assert_eq!(
            html_encoding(b"<p>x", Some("text/html; charset=utf-16")),
            encoding_rs::WINDOWS_1252
        );
        assert_eq!(html_encoding(b"<meta charset=\"shift_jis\">", None), encoding_rs::SHIFT_JIS);
    }
}
