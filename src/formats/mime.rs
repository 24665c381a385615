//! MIME types of files that come without one (mirror files the cache does not describe): by
//! name, and by content with the WHATWG MIME Sniffing Standard ("rules for identifying an
//! unknown MIME type", Servo's `mime_classifier`). Works on names and bytes only.

/// Bytes of a file the sniffer looks at (the standard's resource header is 1445 bytes).
pub const SNIFF_LEN: u64 = 1445;

/// The MIME type of a file, and where it came from: its name's extension when that is
/// known and the content has no signature of another type, else the WHATWG sniffing rules over
/// `head` (its first [`SNIFF_LEN`] bytes; `None` when it could not be read).
pub fn type_by_name_and_content(name: &str, head: Option<&[u8]>) -> (String, &'static str) {
    let name = name.rsplit('/').next().unwrap_or(name);
    let by_name = if name.contains('.') { mime_by_extension(name) } else { "" };
    let Some(head) = head else {
        return match by_name {
            "" => ("application/octet-stream".into(), "unknown (not read)"),
            m => (m.into(), "extension"),
        };
    };
    let sniffed = sniff(head);
    // A signature (image, audio, PDF, archive) outweighs a name; a name outweighs "looks like
    // text" (CSS and JavaScript sniff as text/plain).
    let signature = !matches!(sniffed.as_str(), "text/plain" | "application/octet-stream")
        && !sniffed.starts_with("text/html")
        && !sniffed.starts_with("text/xml");
    match by_name {
        "" | "application/octet-stream" => (sniffed, "sniffed"),
        m if signature && m != sniffed => (sniffed, "sniffed (its extension says otherwise)"),
        m => (m.into(), "extension"),
    }
}

/// The WHATWG "rules for identifying an unknown MIME type" over the first bytes of a resource.
pub fn sniff(head: &[u8]) -> String {
    use mime_classifier::{ApacheBugFlag, LoadContext, MimeClassifier, NoSniffFlag};
    let classifier = MimeClassifier::new();
    classifier
        .classify(LoadContext::Browsing, NoSniffFlag::Off, ApacheBugFlag::Off, &None, head)
        .essence_str()
        .to_string()
}

/// MIME type by file extension; `application/octet-stream` for any other.
pub fn mime_by_extension(path: &str) -> &'static str {
    let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" | "shtml" => "text/html",
        "css" => "text/css",
        "js" => "application/javascript",
        "png" => "image/png",
        "gif" => "image/gif",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "xml" => "text/xml",
        "json" => "application/json",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_follows_the_whatwg_rules() {
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), "text/html");
        assert_eq!(sniff(b"\n<HTML><body>"), "text/html");
        assert_eq!(sniff(b"<!-- c --><p>"), "text/html");
        assert_eq!(sniff(b"<?xml version='1.0'?><a/>"), "text/xml");
        assert_eq!(sniff(b"%PDF-1.4\n"), "application/pdf");
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), "image/png");
        assert_eq!(sniff(b"GIF89a\x01\0"), "image/gif");
        assert_eq!(sniff(b"\xff\xd8\xff\xe0\0\x10JFIF"), "image/jpeg");
        assert_eq!(sniff(b"body { color: red }"), "text/plain");
        assert_eq!(sniff(b"\0\x01\x02binary"), "application/octet-stream");
    }

    #[test]
    fn a_signature_outweighs_a_name_and_a_name_outweighs_text() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(type_by_name_and_content("a/logo.gif", Some(png)).0, "image/png");
        assert_eq!(type_by_name_and_content("a/site.css", Some(b"body {}")).0, "text/css");
        assert_eq!(type_by_name_and_content("a/about", Some(b"<html>")).1, "sniffed");
        assert_eq!(
            type_by_name_and_content("a/x.pdf", None),
            ("application/pdf".into(), "extension")
        );
    }
}
