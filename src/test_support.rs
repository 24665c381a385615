//! Where the unit tests find what lies outside the crate: the repository, its samples, the
//! shared corpus next to it (`../shared/corpus`) and the Python of the test venv that runs
//! the independent readers.

use std::path::{Path, PathBuf};

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `samples/<rel>` of the repository.
pub(crate) fn sample(rel: &str) -> PathBuf {
    repo().join("samples").join(rel)
}

/// `../shared/corpus`, the real files written by other tools.
pub(crate) fn corpus() -> PathBuf {
    let dir = repo().join("../shared/corpus");
    assert!(dir.is_dir(), "the shared corpus is missing at {}", dir.display());
    dir
}

/// Every WARC and ARC file of the corpus, sorted.
pub(crate) fn corpus_archives() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["warc", "arc"]
        .iter()
        .flat_map(|d| std::fs::read_dir(corpus().join(d)).expect("corpus dir readable"))
        .map(|e| e.expect("dir entry").path())
        .collect();
    v.sort();
    v
}

/// The Python of the test venv (made by scripts/setup-test-env.sh).
pub(crate) fn oracle_python() -> PathBuf {
    if let Some(p) = std::env::var_os("WEBAIP_ORACLE_PYTHON") {
        return p.into();
    }
    let p = repo().join(".venv/bin/python");
    assert!(p.exists(), "{} missing: run scripts/setup-test-env.sh first", p.display());
    p
}

/// Copies the tree at `from` to `to` (a link is copied as the file it points at).
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// One record as warcio reads it (tests/oracle/warc_oracle.py).
#[derive(Debug, serde::Deserialize)]
pub(crate) struct WarcioRecord {
    #[serde(rename = "type")]
    pub rec_type: String,
    pub uri: Option<String>,
    pub offset: u64,
    pub length: i64,
    pub payload_sha512: String,
    pub payload_len: u64,
    pub http: bool,
}

/// What warcio made of a file: its records, and the error that stopped it.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Warcio {
    pub records: Vec<WarcioRecord>,
    pub error: Option<String>,
}

/// Reads the WARC at `path` with warcio.
pub(crate) fn warcio(path: &Path) -> Warcio {
    let out = std::process::Command::new(oracle_python())
        .arg(repo().join("tests/oracle/warc_oracle.py"))
        .arg(path)
        .output()
        .expect("oracle runs");
    assert!(out.status.success(), "oracle failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}
