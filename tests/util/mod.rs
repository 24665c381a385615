//! Shared helpers: where the corpus and the oracle are, and running a migration end to end.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use webaip::formats::digest::hex;
use webaip::ids::Ids;
use webaip::migrate::report::FileReport;
use webaip::migrate::{MigrateOptions, MigratedRecord, migrate_file, output_name};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpus`, the real files written by other tools.
pub fn corpus() -> PathBuf {
    let dir = repo().join("../shared/corpus");
    assert!(dir.is_dir(), "the shared corpus is missing at {}", dir.display());
    dir
}

/// Every ARC file of the corpus.
pub fn corpus_arcs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus().join("arc"))
        .expect("corpus/arc readable")
        .map(|e| e.expect("dir entry").path())
        .collect();
    v.sort();
    v
}

/// The Python of the test venv (made by scripts/setup-test-env.sh).
pub fn oracle_python() -> PathBuf {
    if let Some(p) = std::env::var_os("WEBAIP_ORACLE_PYTHON") {
        return p.into();
    }
    let p = repo().join(".venv/bin/python");
    assert!(p.exists(), "{} missing: run scripts/setup-test-env.sh first", p.display());
    p
}

/// One record as warcio sees it.
#[derive(Debug, Deserialize)]
pub struct OracleRecord {
    #[serde(rename = "type")]
    pub rec_type: String,
    pub uri: Option<String>,
    pub content_type: Option<String>,
    pub offset: u64,
    pub length: i64,
    pub payload_sha512: String,
    pub payload_len: u64,
    pub http: bool,
    pub digest_problems: Vec<serde_json::Value>,
    pub member_ok: Option<bool>,
}

/// What warcio made of a file.
#[derive(Debug, Deserialize)]
pub struct Oracle {
    pub records: Vec<OracleRecord>,
    pub error: Option<String>,
}

/// Reads `path` with warcio (`arc`: as an ARC file).
pub fn oracle(path: &Path, arc: bool) -> Oracle {
    let mut cmd = Command::new(oracle_python());
    cmd.arg(repo().join("tests/oracle/warc_oracle.py")).arg(path);
    if arc {
        cmd.arg("--arc");
    }
    let out = cmd.output().expect("oracle runs");
    assert!(out.status.success(), "oracle failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

/// A migration's results.
pub struct Migrated {
    pub report: FileReport,
    pub records: Vec<MigratedRecord>,
    pub output: PathBuf,
    pub dir: tempfile::TempDir,
}

/// Migrates `input` into a fresh temporary directory, deterministically.
pub fn migrate(input: &Path) -> Migrated {
    migrate_with(input, &MigrateOptions::default())
}

/// Migrates with the given options.
pub fn migrate_with(input: &Path, opts: &MigrateOptions) -> Migrated {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = dir.path().join(output_name(input));
    let mut records = Vec::new();
    let ids = Ids::seeded("test");
    let report =
        migrate_file(input, &output, opts, &ids, &|_| {}, &mut |r| records.push(r.clone()));
    Migrated { report, records, output, dir }
}

/// Checks a migrated WARC against warcio: readable without error or digest problem, the same
/// records at the same offsets, every gzip member decompressing alone, every payload with the
/// bytes read from the ARC.
pub fn check_with_warcio(m: &Migrated) {
    let name = m.report.input.display();
    assert!(m.report.ok(), "{name}: {:?} {:?}", m.report.error, m.report.conservation.mismatches);
    let o = oracle(&m.output, false);
    assert_eq!(o.error, None, "{name}: warcio could not read the output");
    let out_total: u64 = m.report.records_out.values().sum();
    assert_eq!(o.records.len() as u64, out_total, "{name}: record count vs report");
    assert_eq!(o.records.len(), m.records.len(), "{name}: record count vs written");
    for (i, (ours, theirs)) in m.records.iter().zip(&o.records).enumerate() {
        let at = format!("{name}: record {i} ({:?})", ours.target_uri);
        assert_eq!(theirs.rec_type, ours.warc_type, "{at}: type");
        assert_eq!(theirs.offset, ours.written.member_offset, "{at}: offset");
        assert_eq!(theirs.length, ours.written.member_len as i64, "{at}: member length");
        assert_eq!(theirs.member_ok, Some(true), "{at}: gzip member does not stand alone");
        assert!(
            theirs.digest_problems.is_empty(),
            "{at}: warcio digest check: {:?}",
            theirs.digest_problems
        );
        assert_eq!(theirs.payload_len, ours.written.digests.payload_len, "{at}: payload length");
        assert_eq!(
            theirs.payload_sha512,
            hex(&ours.written.digests.payload_sha512),
            "{at}: payload SHA-512"
        );
    }
}

/// Runs the `webaip` binary with `args`, without the environment's schema directory or clamd
/// (each test says what it uses).
pub fn webaip(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_webaip"))
        .args(args)
        .env_remove("WEBAIP_SCHEMAS")
        .env_remove("WEBAIP_CLAMD")
        .output()
        .expect("webaip runs")
}

/// `webaip package --no-virus-check --deterministic --json` of `src` into `out`: the exit
/// code and the report.
pub fn package_json(src: &Path, out: &Path) -> (Option<i32>, serde_json::Value) {
    let o = webaip(&[
        "package",
        "--no-virus-check",
        "--deterministic",
        "--json",
        "--out",
        out.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    let r = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("no report: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), r)
}

/// The names in `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A tmpfs of `kib` KiB mounted on `dir` (root only), unmounted when dropped; `None` where
/// mounting is not allowed (the caller skips, or measures what is left instead).
pub struct SmallDisk(PathBuf);

impl SmallDisk {
    pub fn mount(dir: &Path, kib: u64) -> Option<SmallDisk> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}
