//! A package whose files are not what its METS states is not exported: `export eark` checks
//! each file's size and digest against the package METS as it copies it, as `export wacz`
//! does, and a damaged package ends with exit 2, the file and both digests named, and no
//! output (not even a partial one) left.

use std::path::Path;

use sha2::Digest;

use super::packaged_sample;
use crate::util::webaip;

/// The SHA-512 of `b`, lower-case hex, as the METS states it.
fn sha512(b: &[u8]) -> String {
    data_encoding::HEXLOWER.encode(&sha2::Sha512::digest(b))
}

/// What `export eark PKG -o OUT` says (exit code, stderr).
fn export_eark(pkg: &Path, out: &Path) -> (Option<i32>, String) {
    let o = webaip(&["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_damaged_package_is_not_exported() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "heritrix-job");
    let mut files: Vec<_> =
        std::fs::read_dir(pkg.join("content")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let container = &files[0];
    let rel = format!("content/{}", container.file_name().unwrap().to_string_lossy());
    let original = std::fs::read(container).unwrap();
    let mut appended = original.clone();
    appended.push(b'\n');
    let mut changed = original.clone();
    let mid = changed.len() / 2;
    changed[mid] ^= 0x20;
    assert_eq!(changed.len(), original.len());
    for (how, bytes) in [("a byte appended", &appended), ("a byte changed", &changed)] {
        std::fs::write(container, bytes).unwrap();
        for name in ["ip.zip", "ip"] {
            let dir = tmp.path().join(format!("out-{}-{name}", bytes.len()));
            std::fs::create_dir(&dir).unwrap();
            let (code, err) = export_eark(&pkg, &dir.join(name));
            assert_eq!(code, Some(2), "{how}, {name}: {err}");
            assert!(err.contains(&rel), "{how}, {name}: the file is named: {err}");
            assert!(err.contains("the package is damaged (audit it)"), "{how}, {name}: {err}");
            let (stated, found) = (sha512(&original), sha512(bytes));
            assert!(err.contains(&stated) && err.contains(&found), "{how}, {name}: {err}");
            let left: Vec<_> =
                std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
            assert!(left.is_empty(), "{how}, {name}: a failed export left {left:?}");
        }
    }
    // Repaired, it is exported.
    std::fs::write(container, &original).unwrap();
    let (code, err) = export_eark(&pkg, &tmp.path().join("repaired.zip"));
    assert_eq!(code, Some(0), "{err}");
}
