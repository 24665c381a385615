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
        (LAYOUT_FILE.into(), json(layout)),
        (extension_config(), json(config)),
        (ROOT_DECLARATION.0.into(), ROOT_DECLARATION.1.as_bytes().to_vec()),
    ]
}

/// The layout file of the root, and the extension's configuration.
pub(crate) const LAYOUT_FILE: &str = "ocfl_layout.json";

/// The extension's configuration file below the root.
pub(crate) fn extension_config() -> String {
    format!("extensions/{EXTENSION}/config.json")
}

/// The most bytes of a root file read to judge it (webaip's are under 300).
pub(crate) const MAX_ROOT_FILE: u64 = 64 * 1024;

/// How one of the files declaring a storage root stands: the one judgement `store check`
/// reports, a put making the root and `store repair` act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootFile {
    /// The declaration's exact bytes, or a layout file that is JSON naming the layout's
    /// extension (and, for its configuration, webaip's parameters).
    Sound,
    /// Not there.
    Absent,
    /// Empty, or the start of webaip's bytes: a write cut short, which webaip finishes.
    CutShort,
    /// Anything else (never overwritten), and what its bytes are.
    Foreign(String),
}

/// Judges root file `name` (one of [`root_files`]) holding `held` (`None`: absent; at most
/// [`MAX_ROOT_FILE`] bytes read: `too_large` when there were more).
pub(crate) fn judge_root_file(name: &str, held: Option<&[u8]>, too_large: bool) -> RootFile {
    let Some(held) = held else { return RootFile::Absent };
    let ours = root_files().into_iter().find(|(n, _)| n == name).map(|(_, b)| b);
    let ours = ours.unwrap_or_default();
    if too_large {
        return RootFile::Foreign(format!("larger than {MAX_ROOT_FILE} bytes"));
    }
    if held == ours.as_slice() {
        return RootFile::Sound;
    }
    if ours.starts_with(held) {
        return RootFile::CutShort;
    }
    if name == ROOT_DECLARATION.0 {
        let shown = String::from_utf8_lossy(&held[..held.len().min(64)]).into_owned();
        return RootFile::Foreign(format!(
            "{} bytes {shown:?}, not OCFL 1.1's declaration {:?}",
            held.len(),
            ROOT_DECLARATION.1
        ));
    }
    match layout_json_fault(name, held) {
        None => RootFile::Sound,
        Some(why) => RootFile::Foreign(why),
    }
}

/// Why a layout file's bytes are not a description of this root's layout, `None` when they
/// are (JSON naming [`EXTENSION`]; the configuration with webaip's parameters too, which
/// every object's place depends on).
fn layout_json_fault(name: &str, held: &[u8]) -> Option<String> {
    let v: serde_json::Value = match serde_json::from_slice(held) {
        Ok(v) => v,
        Err(e) => return Some(format!("{} bytes, not JSON: {e}", held.len())),
    };
    let field = if name == LAYOUT_FILE { "extension" } else { "extensionName" };
    let named = v.get(field).and_then(|n| n.as_str());
    if named != Some(EXTENSION) {
        return Some(format!("JSON whose {field:?} is {:?}, not {EXTENSION:?}", v.get(field)));
    }
    if name == LAYOUT_FILE {
        return None;
    }
    let expected = [
        ("digestAlgorithm", serde_json::json!("sha256")),
        ("tupleSize", serde_json::json!(TUPLE_SIZE)),
        ("numberOfTuples", serde_json::json!(TUPLES)),
    ];
    let other = expected.iter().find(|(k, want)| v.get(*k).is_some_and(|got| got != want));
    other.map(|(k, want)| format!("JSON whose {k:?} is {}, not {want} (webaip's layout)", v[*k]))
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

/// What an object directory's name tells of the id whose object it would hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdInDir {
    /// The whole id (the name kept it whole).
    Whole(String),
    /// How the id starts (a long id cut to [`MAX_ENCAPSULATION`] characters of its encoding).
    Start(String),
    /// Nothing: not a name [`object_path`] makes.
    Unknown,
}

/// The id object directory `dir` holds, read back from its last segment (the inverse of
/// [`object_path`]'s encoding; whether `dir` is that id's place is the caller's to compare).
pub(crate) fn id_in_dir(dir: &str) -> IdInDir {
    let name = dir.rsplit('/').next().unwrap_or(dir);
    if name.len() <= MAX_ENCAPSULATION {
        return match percent_decoded(name) {
            Some(bytes) => String::from_utf8(bytes).map_or(IdInDir::Unknown, IdInDir::Whole),
            None => IdInDir::Unknown,
        };
    }
    let Some(start) = name.get(..MAX_ENCAPSULATION) else { return IdInDir::Unknown };
    // The cut may fall inside an escape, or inside a character's bytes: both are dropped.
    let start = match start.rfind('%') {
        Some(i) if i + 3 > start.len() => &start[..i],
        _ => start,
    };
    let Some(bytes) = percent_decoded(start) else { return IdInDir::Unknown };
    let valid = match std::str::from_utf8(&bytes) {
        Ok(s) => s.len(),
        Err(e) => e.valid_up_to(),
    };
    IdInDir::Start(String::from_utf8_lossy(&bytes[..valid]).into_owned())
}

/// The bytes `%xx` escapes stand for; `None` when an escape is broken.
fn percent_decoded(name: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(name.len());
    let mut bytes = name.bytes();
    while let Some(b) = bytes.next() {
        if b != b'%' {
            out.push(b);
            continue;
        }
        let pair = [bytes.next()?, bytes.next()?];
        out.push(u8::from_str_radix(std::str::from_utf8(&pair).ok()?, 16).ok()?);
    }
    Some(out)
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

    /// Every id is read back from its directory: whole, or its start when cut.
    #[test]
    fn ids_are_read_back_from_their_directories() {
        for id in ["object-01", "..hor/rib:le-$id", "urn:x:é/ü", "a%2fb"] {
            assert_eq!(id_in_dir(&object_path(id)), IdInDir::Whole(id.into()), "{id}");
        }
        let long = format!("{}{}", "a".repeat(98), "é".repeat(40));
        let IdInDir::Start(start) = id_in_dir(&object_path(&long)) else { panic!("not cut") };
        assert!(long.starts_with(&start) && start.len() >= 98, "{start}");
        let long = "abcdefghij".repeat(11);
        assert_eq!(id_in_dir(&object_path(&long)), IdInDir::Start(long[..100].into()));
        assert_eq!(id_in_dir("abc/def/012/%zz"), IdInDir::Unknown);
        assert_eq!(id_in_dir("abc/def/012/%ff"), IdInDir::Unknown);
    }

    /// Each root file as webaip writes it is sound; absent, empty and cut short are webaip's
    /// to finish; other bytes are foreign, a layout file of another extension too.
    #[test]
    fn root_files_are_judged_by_their_bytes() {
        for (name, ours) in root_files() {
            assert_eq!(judge_root_file(&name, Some(&ours), false), RootFile::Sound, "{name}");
            assert_eq!(judge_root_file(&name, None, false), RootFile::Absent);
            assert_eq!(judge_root_file(&name, Some(b""), false), RootFile::CutShort);
            let cut = &ours[..ours.len() - 1];
            assert_eq!(judge_root_file(&name, Some(cut), false), RootFile::CutShort, "{name}");
            assert!(matches!(
                judge_root_file(&name, Some(b"ocfl_1.0\n"), false),
                RootFile::Foreign(_)
            ));
            assert!(matches!(judge_root_file(&name, Some(&ours), true), RootFile::Foreign(_)));
        }
        let other = br#"{"extension": "0004-hashed-n-tuple-storage-layout"}"#;
        assert!(matches!(judge_root_file(LAYOUT_FILE, Some(other), false), RootFile::Foreign(_)));
        let ours = format!(r#"{{"extension": "{EXTENSION}", "description": "other words"}}"#);
        assert_eq!(judge_root_file(LAYOUT_FILE, Some(ours.as_bytes()), false), RootFile::Sound);
        let tuples = format!(r#"{{"extensionName": "{EXTENSION}", "numberOfTuples": 2}}"#);
        let judged = judge_root_file(&extension_config(), Some(tuples.as_bytes()), false);
        assert!(matches!(judged, RootFile::Foreign(ref why) if why.contains("numberOfTuples")));
    }
}
