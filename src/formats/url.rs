//! URLs as webaip compares them.
//!
//! `url_key` is the one rule by which a described URL (a curator's `[[page]]`, a seed) matches
//! a captured one (a record's `WARC-Target-URI`): used by the metadata reader, the METS writer
//! and validator, the package builder and `pages`.

/// The form in which a described URL is compared with captured ones: scheme and host in lower
/// case, an empty path as `/`, the fragment dropped; everything else (path, query, their
/// escapes) as written. URLs that do not parse are compared as written.
pub fn url_key(url: &str) -> String {
    let t = url.trim();
    match url::Url::parse(t) {
        Ok(mut u) if u.has_host() => {
            u.set_fragment(None);
            // `url` lower-cases scheme and host and writes an empty path as `/`; it also
            // percent-encodes what WHATWG says to, so a harvested `a b` and a described `a%20b`
            // meet.
            u.to_string()
        }
        _ => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_keys() {
        assert_eq!(url_key("HTTP://WWW.Example.org"), "http://www.example.org/");
        assert_eq!(
            url_key("http://www.example.org/a b.html#x"),
            "http://www.example.org/a%20b.html"
        );
        assert_eq!(
            url_key("http://www.example.org/a%20b.html"),
            "http://www.example.org/a%20b.html"
        );
        assert_ne!(url_key("http://www.example.org/A"), url_key("http://www.example.org/a"));
        assert_eq!(url_key("dns:www.example.org"), "dns:www.example.org");
    }
}
