//! Where an object lives in an OCFL storage root, and the files that declare the root.
//!
//! The layout is the registered extension `0003-hash-and-id-n-tuple-storage-layout` with
//! SHA-256, three tuples of three hex digits (4096 directories at each of the first two levels
//! at most: the bounded fan-out Kulturarw3's stores kept), then the object id percent-encoded
//! as the object's directory (cut to 100 characters and the digest appended when longer).
//!
//! Why not `0004-hashed-n-tuple-storage-layout` (the same tree, with the digest as the last
//! directory): ocfl-py 2.1, the validator the tests check every replica with, does not know
//! 0004 and refuses a root that declares it (E071). 0003 gives the same fan-out, is known to
//! ocfl-py, ocfl-java and rocfl, and leaves the id readable in the path.

use sha2::{Digest, Sha256};

/// The storage root's conformance declaration (NAMASTE) and its text.
pub(crate) const ROOT_DECLARATION: (&str, &str) = ("0=ocfl_1.1", "ocfl_1.1\n");
/// The object's conformance declaration and its text.
pub(crate) const OBJECT_DECLARATION: (&str, &str) = ("0=ocfl_object_1.1", "ocfl_object_1.1\n");
/// The layout extension.
pub(crate) const EXTENSION: &str = "0003-hash-and-id-n-tuple-storage-layout";
const TUPLE_SIZE: usize = 3;
const TUPLES: usize = 3;
/// Path segments of an object's directory below the root (the tuples and the id).
pub(crate) const OBJECT_DEPTH: usize = TUPLES + 1;
/// Longest percent-encoded id kept whole as a directory name.
const MAX_ENCAPSULATION: usize = 100;

/// The files a storage root starts with: (name, bytes), the declaration last.
pub(crate) fn root_files() -> Vec<(String, Vec<u8>)> {
    let layout = serde_json::json!({
        "extension": EXTENSION,
        "description": "Hashed Truncated N-tuple Trees with Object ID Encapsulating Directory \
                        for OCFL Storage Hierarchies",
    });
    let config = serde_json::json!({
        "extensionName": EXTENSION,
        "digestAlgorithm": "sha256",
        "tupleSize": TUPLE_SIZE,
        "numberOfTuples": TUPLES,
    });
    let json = |v: serde_json::Value| {
        let mut b = serde_json::to_vec_pretty(&v).unwrap_or_default();
        b.push(b'\n');
        b
    };
    vec![
        ("ocfl_layout.json".into(), json(layout)),
        (format!("extensions/{EXTENSION}/config.json"), json(config)),
        (ROOT_DECLARATION.0.into(), ROOT_DECLARATION.1.as_bytes().to_vec()),
    ]
}

/// The object's directory below the root: `abc/def/012/<encoded id>`.
pub(crate) fn object_path(id: &str) -> String {
    let digest = crate::formats::digest::hex(&Sha256::digest(id.as_bytes()));
    let mut out = String::new();
    for i in 0..TUPLES {
        out.push_str(&digest[i * TUPLE_SIZE..(i + 1) * TUPLE_SIZE]);
        out.push('/');
    }
    let mut encoded = String::new();
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02x}"));
        }
    }
    if encoded.len() > MAX_ENCAPSULATION {
        // Only ASCII was pushed, so any byte index is a boundary.
        encoded = format!("{}-{digest}", &encoded[..MAX_ENCAPSULATION]);
    }
    out.push_str(&encoded);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extension's own examples.
    #[test]
    fn object_paths_follow_the_extension_examples() {
        assert_eq!(object_path("object-01"), "3c0/ff4/240/object-01");
        assert_eq!(object_path("..hor/rib:le-$id"), "487/326/d8c/%2e%2ehor%2frib%3ale-%24id");
        let long = "abcdefghij".repeat(11);
        let p = object_path(&long);
        let last = p.rsplit('/').next().unwrap();
        assert_eq!(last.len(), 100 + 1 + 64);
        assert!(!p.contains(".."));
    }
}
