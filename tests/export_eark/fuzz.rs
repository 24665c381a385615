//! A small valid E-ARK ZIP, mutated (bytes overwritten, cut short, names bent), fed to the
//! check: it never panics, ends quickly, and its temporaries go.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use webaip::internals::check_eark_package as check_package;

use super::{export, packaged_sample};

/// The nedlib sample as an AIP ZIP, made once for every case.
fn valid_zip() -> &'static (tempfile::TempDir, PathBuf) {
    static ZIP: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    ZIP.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = packaged_sample(tmp.path(), "nedlib");
        let zip = tmp.path().join("aip.zip");
        export(&pkg, &zip, "aip");
        (tmp, zip)
    })
}

/// One mutation of the ZIP's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    /// Bytes written over at a fraction of the length.
    Overwrite(f64, Vec<u8>),
    /// Cut to a fraction of the length.
    Truncate(f64),
    /// A byte of an entry name (after a `/`) made `/`, `.`, or NUL.
    Bend(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0f64, prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, b)| Mutation::Overwrite(at, b)),
        (0.0..1.0f64).prop_map(Mutation::Truncate),
        (any::<usize>(), prop::sample::select(vec![b'/', b'.', 0u8]))
            .prop_map(|(i, b)| Mutation::Bend(i, b)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let at = |f: f64, len: usize| ((len as f64 * f) as usize).min(len.saturating_sub(1));
    match m {
        Mutation::Overwrite(f, b) => {
            let start = at(*f, bytes.len());
            for (i, x) in b.iter().enumerate() {
                if let Some(slot) = bytes.get_mut(start + i) {
                    *slot = *x;
                }
            }
        }
        Mutation::Truncate(f) => bytes.truncate(at(*f, bytes.len())),
        Mutation::Bend(i, b) => {
            let slashes: Vec<usize> =
                bytes.iter().enumerate().filter(|(_, c)| **c == b'/').map(|(k, _)| k).collect();
            if let Some(k) = slashes.get(i % slashes.len().max(1)).map(|k| k + 1)
                && k < bytes.len()
            {
                bytes[k] = *b;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_mutated_eark_zip_is_judged_without_panic(ms in prop::collection::vec(mutation(), 1..4)) {
        let (_, zip) = valid_zip();
        let mut bytes = std::fs::read(zip).unwrap();
        for m in &ms {
            apply(&mut bytes, m);
        }
        let dir = tempfile::tempdir().unwrap();
        let bent = dir.path().join("bent.zip");
        std::fs::write(&bent, &bytes).unwrap();
        let started = Instant::now();
        let verdict = check_package(&bent);
        prop_assert!(started.elapsed() < Duration::from_secs(10));
        if let Err(e) = &verdict {
            let text = e.to_string();
            prop_assert!(text.contains("bent.zip") && !text.contains("os error"), "{}", text);
        }
    }
}
