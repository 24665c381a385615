//! The IANA media types register, as eark-validator ships it (`data/eark/vocabularies`): CSIP
//! asks every `MIMETYPE` to be an IANA media type (CSIP26, 40, 53, 68), and both reference
//! validators refuse one that is not registered, such as `application/warc`.

use std::collections::HashSet;
use std::sync::LazyLock;

const REGISTER: &str = include_str!("../../../data/eark/vocabularies/IANA-media-types.txt");

/// The registered types, lower-cased (media types are case-insensitive).
static REGISTERED: LazyLock<HashSet<String>> =
    LazyLock::new(|| REGISTER.lines().map(|l| l.trim().to_ascii_lowercase()).collect());

/// Whether `mime` (parameters after `;` aside) is a registered media type.
pub fn is_registered(mime: &str) -> bool {
    let bare = mime.split(';').next().unwrap_or("").trim();
    REGISTERED.contains(&bare.to_ascii_lowercase())
}

/// The media type an exported file is listed under: its own when registered; otherwise what its
/// bytes are to the register (`application/gzip` for a `.gz` file: a `.warc.gz`, whose
/// `application/warc` is not registered), or `application/octet-stream`.
pub fn registered_for(mime: &str, name: &str) -> String {
    if is_registered(mime) {
        mime.to_string()
    } else if name.to_ascii_lowercase().ends_with(".gz") {
        "application/gzip".into()
    } else {
        "application/octet-stream".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_types_are_known_and_warc_is_not() {
        assert!(is_registered("application/xml"));
        assert!(is_registered("Text/Plain; charset=utf-8"));
        assert!(!is_registered("application/warc"));
        assert!(!is_registered("plain text"));
        assert_eq!(registered_for("application/warc", "a.warc.gz"), "application/gzip");
        assert_eq!(registered_for("application/warc", "a.warc"), "application/octet-stream");
        assert_eq!(registered_for("text/html", "a.html"), "text/html");
    }
}
