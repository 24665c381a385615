//! Golden packages: every committed sample (the Heritrix job in both modes, the PANDAS
//! instance, the wget mirror, the NEDLIB harvest, the Kulturarw3 archive) is packaged with `--deterministic`, and the SHA-512 of every file
//! of each package is compared with the values committed beside this file
//! (`tests/golden/<name>.sha512`, manifest line format). A restructuring of the pipeline must
//! leave them as they are; a commit that changes them on purpose says why and regenerates them
//! with `WEBAIP_BLESS=1 cargo test --profile ci --test tests golden::`.

use std::path::Path;

use crate::util::{Package, repo};

/// (name, arguments after `package --no-virus-check --deterministic --quiet`).
pub const SAMPLES: &[(&str, &[&str])] = &[
    (
        "heritrix-minimal",
        &[
            "--describe-seeds",
            "--metadata",
            "samples/heritrix-job.metadata.toml",
            "samples/heritrix-job",
        ],
    ),
    (
        "heritrix-full",
        &[
            "--mode",
            "full",
            "--metadata",
            "samples/heritrix-job.metadata.toml",
            "samples/heritrix-job",
        ],
    ),
    ("pandas", &["--describe-seeds", "samples/pandas/40123/20040517-1412"]),
    ("mirror", &["--describe-seeds", "samples/mirror"]),
    ("nedlib", &["samples/nedlib"]),
    ("kulturarw3", &["samples/kulturarw3"]),
];

/// `<sha512>  <path>` for every file under `pkg`, sorted by path.
fn digests(pkg: &Path) -> String {
    use sha2::Digest;
    let mut lines: Vec<String> = walkdir::WalkDir::new(pkg)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(pkg).unwrap().to_string_lossy().into_owned();
            let sha = sha2::Sha512::digest(std::fs::read(e.path()).unwrap());
            let hex: String = sha.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}  {rel}\n")
        })
        .collect();
    lines.sort_by(|a, b| a[130..].cmp(&b[130..]));
    lines.concat()
}

#[test]
fn committed_samples_package_to_the_committed_digests() {
    let bless = std::env::var_os("WEBAIP_BLESS").is_some();
    let mut differ = Vec::new();
    for (name, args) in SAMPLES {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("pkg");
        let run = Package::new()
            .deterministic()
            .quiet()
            .args(&["--out", out.to_str().unwrap()])
            .args(args);
        // Run from the repository root with relative paths, as a curator would; where the
        // repository sits does not change a byte of the package.
        let o = run.command_as_is().current_dir(repo()).output().unwrap();
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let got = digests(&out);
        let golden = repo().join("tests/golden").join(format!("{name}.sha512"));
        if bless {
            std::fs::write(&golden, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("{} missing: run with WEBAIP_BLESS=1", golden.display()));
        if got != want {
            let g: Vec<&str> = got.lines().collect();
            let w: Vec<&str> = want.lines().collect();
            let changed: Vec<String> = g
                .iter()
                .filter(|l| !w.contains(l))
                .map(|l| format!("{name}: now {}", &l[130..]))
                .chain(
                    w.iter()
                        .filter(|l| !g.contains(l))
                        .map(|l| format!("{name}: was {}", &l[130..])),
                )
                .collect();
            differ.extend(changed);
        }
    }
    assert!(
        differ.is_empty(),
        "package files differ from the golden digests:\n{}",
        differ.join("\n")
    );
}
