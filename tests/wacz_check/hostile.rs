//! Hostile WACZ files against `webaip validate`: ZIPs crafted here (a long local name behind
//! many central entries, a huge central directory, members sharing one deflate stream),
//! copies of a py-wacz WACZ with a prefix, a local entry the central directory does not list,
//! garbage in `index.idx`, and a valid WACZ of more than a thousand members; each bound (peak
//! RSS, output bytes, time) or finding asserted. A proptest pass feeds mutated bytes of a
//! small valid WACZ to the checker in a child process under an address-space limit.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::{check, errors_of, findings_on, heritrix_wacz, mutate, venv_bin};
use crate::fuzz::child::{Outcome, is_child, launch_webaip, run_child};
use crate::util::{corpus, oracle_python, webaip};

/// Peak RSS allowed to a check of a crafted ZIP.
const PEAK_RSS_LIMIT: u64 = 64 << 20;
/// Standard output allowed to a check (findings are capped per rule and severity).
const OUTPUT_LIMIT: usize = 64 << 10;

/// A ZIP written field by field: local headers and data, then the central directory.
#[derive(Default)]
struct Craft {
    bytes: Vec<u8>,
    central: Vec<u8>,
    entries: u16,
}

/// One entry as both headers state it.
struct Fields<'a> {
    name: &'a [u8],
    method: u16,
    crc: u32,
    compressed: u32,
    size: u32,
}

impl Craft {
    /// A local header and its data; returns the header's offset.
    fn local(&mut self, f: &Fields, data: &[u8]) -> u32 {
        let at = self.bytes.len() as u32;
        let b = &mut self.bytes;
        b.extend(b"PK\x03\x04");
        b.extend(20u16.to_le_bytes());
        b.extend(0u16.to_le_bytes());
        b.extend(f.method.to_le_bytes());
        b.extend([0u8; 4]);
        b.extend(f.crc.to_le_bytes());
        b.extend(f.compressed.to_le_bytes());
        b.extend(f.size.to_le_bytes());
        b.extend((f.name.len() as u16).to_le_bytes());
        b.extend(0u16.to_le_bytes());
        b.extend(f.name);
        b.extend(data);
        at
    }

    /// A central directory entry for the local header at `at`.
    fn central(&mut self, f: &Fields, at: u32) {
        let c = &mut self.central;
        c.extend(b"PK\x01\x02");
        c.extend(20u16.to_le_bytes());
        c.extend(20u16.to_le_bytes());
        c.extend(0u16.to_le_bytes());
        c.extend(f.method.to_le_bytes());
        c.extend([0u8; 4]);
        c.extend(f.crc.to_le_bytes());
        c.extend(f.compressed.to_le_bytes());
        c.extend(f.size.to_le_bytes());
        c.extend((f.name.len() as u16).to_le_bytes());
        c.extend([0u8; 12]);
        c.extend(at.to_le_bytes());
        c.extend(f.name);
        self.entries += 1;
    }

    /// The file: members, central directory, end record.
    fn finish(mut self) -> Vec<u8> {
        let (offset, size) = (self.bytes.len() as u32, self.central.len() as u32);
        self.bytes.extend(&self.central);
        self.bytes.extend(b"PK\x05\x06");
        self.bytes.extend([0u8; 4]);
        self.bytes.extend(self.entries.to_le_bytes());
        self.bytes.extend(self.entries.to_le_bytes());
        self.bytes.extend(size.to_le_bytes());
        self.bytes.extend(offset.to_le_bytes());
        self.bytes.extend(0u16.to_le_bytes());
        self.bytes
    }
}

/// `validate FILE` measured: exit code, peak RSS (a child of its own), standard output bytes
/// (a second run) and the wall time of that run.
struct Measured {
    code: Option<i32>,
    peak_rss: u64,
    output: usize,
    took: Duration,
}

fn measured(wacz: &Path, dir: &Path) -> Measured {
    let shown = wacz.display().to_string();
    let run = launch_webaip(&["validate", &shown], dir);
    let Outcome::Exited(code) = run.status else { panic!("{:?}: {}", run.status, run.stderr) };
    let started = Instant::now();
    let o = webaip(&["validate", &shown]);
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(code));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    Measured { code: Some(code), peak_rss: run.peak_rss, output: o.stdout.len(), took }
}

/// The bounds every crafted file must keep; prints what was measured.
fn assert_bounded(what: &str, m: &Measured) {
    eprintln!(
        "{what}: exit {:?}, peak RSS {} KiB, {} bytes of output, {:?}",
        m.code,
        m.peak_rss >> 10,
        m.output,
        m.took
    );
    assert_eq!(m.code, Some(1), "{what}");
    assert!(m.peak_rss < PEAK_RSS_LIMIT, "{what}: peak RSS {} MiB", m.peak_rss >> 20);
    assert!(m.output < OUTPUT_LIMIT, "{what}: {} bytes of output", m.output);
}

/// True when the report counts findings past the cap in a summary line.
fn summed_up(report: &serde_json::Value, rule: &str) -> bool {
    errors_of(report, rule).iter().any(|f| f["message"].as_str().unwrap().contains("not listed"))
}

/// One local header of a 65,535-byte name behind 5,000 short central entries: each entry
/// differs from it (its name) and overlaps it; the findings are capped and no message carries
/// the name whole.
#[test]
fn a_long_local_name_behind_many_entries_keeps_memory_and_output_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let long = vec![b'a'; 65_535];
    let mut z = Craft::default();
    let local = Fields { name: &long, method: 0, crc: 0, compressed: 0, size: 0 };
    z.local(&local, b"");
    for i in 0..5_000 {
        let name = format!("m{i}");
        z.central(&Fields { name: name.as_bytes(), ..local }, 0);
    }
    let path = dir.path().join("long-name.wacz");
    std::fs::write(&path, z.finish()).unwrap();
    let m = measured(&path, dir.path());
    assert_bounded("long local name, 5,000 entries", &m);
    let (_, report) = check(&path);
    assert!(summed_up(&report, "WACZ-ZIP"), "{report:#}");
    let text = report.to_string();
    assert!(text.len() < OUTPUT_LIMIT * 2, "{} bytes of JSON", text.len());
    assert!(!text.contains(&"a".repeat(1_000)), "a message carries the long name");
    let listed = errors_of(&report, "WACZ-ZIP").len();
    assert!(listed <= 51, "{listed} WACZ-ZIP errors listed");
}

/// 60,000 central entries, each its own empty member under `archive/` that is no WARC: a
/// finding each, listed up to the cap and counted past it.
#[test]
fn a_huge_central_directory_prints_a_bounded_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut z = Craft::default();
    for i in 0..60_000u32 {
        let name = format!("archive/{i}");
        let f = Fields { name: name.as_bytes(), method: 0, crc: 0, compressed: 0, size: 0 };
        let at = z.local(&f, b"");
        z.central(&f, at);
    }
    let path = dir.path().join("many-entries.wacz");
    std::fs::write(&path, z.finish()).unwrap();
    let m = measured(&path, dir.path());
    assert_bounded("60,000 central entries", &m);
    // About 16 MiB for the program itself; each entry is kept small, once (formerly 44 MiB).
    assert!(m.peak_rss < 36 << 20, "60,000 entries: peak RSS {} KiB", m.peak_rss >> 10);
    assert!(m.took < Duration::from_secs(30), "{:?}", m.took);
    let (_, report) = check(&path);
    assert!(summed_up(&report, "WACZ-LAYOUT"), "{report:#}");
}

/// 200 entries sharing one deflate stream of 32 MiB: each later one is named as overlapping
/// the first, and only the first is inflated (each inflated would take tens of seconds).
#[test]
fn members_sharing_one_stream_are_named_and_inflated_once() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let plain = vec![0u8; 32 << 20];
    let mut gz = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&plain).unwrap();
    let data = gz.finish().unwrap();
    let crc = {
        let mut c = flate2::Crc::new();
        c.update(&plain);
        c.sum()
    };
    let mut z = Craft::default();
    let first = Fields {
        name: b"notes/0.txt",
        method: 8,
        crc,
        compressed: data.len() as u32,
        size: plain.len() as u32,
    };
    z.local(&first, &data);
    for i in 0..200 {
        let name = format!("notes/{i}.txt");
        z.central(&Fields { name: name.as_bytes(), ..first }, 0);
    }
    let path = dir.path().join("shared-stream.wacz");
    std::fs::write(&path, z.finish()).unwrap();
    let m = measured(&path, dir.path());
    assert_bounded("200 entries on one 32 MiB stream", &m);
    assert!(m.took < Duration::from_secs(10), "{:?}", m.took);
    let (_, report) = check(&path);
    let overlaps = findings_on(&report, "WACZ-ZIP", "notes/1.txt", "overlaps `notes/0.txt`");
    assert_eq!(overlaps.len(), 1, "{report:#}");
    assert_eq!(report["members"], 1, "{report:#}");
}

/// A valid WACZ of more than 1,200 members (py-wacz's and 1,200 notes listed in its manifest)
/// is read whole and VALID, as py-wacz and Python's zipfile read it.
#[test]
fn a_valid_wacz_of_more_than_a_thousand_members_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let wacz = heritrix_wacz(dir.path());
    let many = mutate(&wacz, &dir.path().join("many.wacz"), &["many", "1200"]);
    let members = python_reads(&wacz) + 1200;
    let (code, report) = check(&many);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["members"], members, "{report:#}");
    assert_eq!(report["valid"], true);
    let o = Command::new(venv_bin("wacz")).args(["validate", "-f"]).arg(&many).output().unwrap();
    assert!(o.status.success(), "py-wacz: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(python_reads(&many), members);
}

/// The number of members Python's zipfile reads (each one read whole).
fn python_reads(zip: &Path) -> u64 {
    let o = Command::new(oracle_python())
        .args([
            "-c",
            "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in z.namelist(): z.read(n)\nprint(len(z.namelist()))",
        ])
        .arg(zip)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

/// A prefix its offsets do not count is read as Python reads it, every member checked, and
/// is an error (a reader taking the offsets as written finds nothing); a prefix the offsets
/// count (`zip -A`) is a warning only.
#[test]
fn a_prefix_is_read_as_python_reads_it_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let wacz = heritrix_wacz(dir.path());
    let members = python_reads(&wacz);
    let cat = mutate(&wacz, &dir.path().join("prefix.wacz"), &["prefix", "100"]);
    assert_eq!(python_reads(&cat), members);
    let (code, report) = check(&cat);
    assert_eq!(code, Some(1), "{report:#}");
    let errors: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{report:#}");
    assert!(errors[0]["message"].as_str().unwrap().contains("starts with 100 bytes"), "{report:#}");
    assert_eq!(report["members"], members);
    assert_eq!(report["index_lines"], report["records"]);
    assert!(report["records"].as_u64().unwrap() > 0, "{report:#}");
    let adjusted = mutate(&wacz, &dir.path().join("adjusted.wacz"), &["prefix-adjusted", "100"]);
    assert_eq!(python_reads(&adjusted), members);
    let (code, report) = check(&adjusted);
    assert_eq!(code, Some(0), "{report:#}");
    let warnings: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "warning" && f["rule"] == "WACZ-ZIP")
        .collect();
    assert_eq!(warnings.len(), 1, "{report:#}");
    assert!(warnings[0]["message"].as_str().unwrap().contains("100 bytes at byte 0"), "{report:#}");
}

/// A local entry left out of the central directory (a streaming reader sees a member a
/// seeking one does not) is an error naming it; a line of `index.idx` that is no block line
/// is an error naming its line.
#[test]
fn a_local_entry_outside_the_directory_and_idx_garbage_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let wacz = heritrix_wacz(dir.path());
    let hidden = mutate(&wacz, &dir.path().join("hidden.wacz"), &["hidden-local"]);
    let (code, report) = check(&hidden);
    assert_eq!(code, Some(1), "{report:#}");
    let found = findings_on(&report, "WACZ-ZIP", "", "`notes/hidden.txt`, is in no central");
    assert_eq!(found.len(), 1, "{report:#}");
    let garbage = mutate(&wacz, &dir.path().join("garbage.wacz"), &["idx-garbage"]);
    let (code, report) = check(&garbage);
    assert_eq!(code, Some(1), "{report:#}");
    let found = findings_on(&report, "WACZ-ZIPNUM", "indexes/index.idx", "not a block line");
    assert_eq!(found.len(), 1, "{report:#}");
    assert!(found[0]["line"].as_u64().is_some(), "{report:#}");
}

const FUZZ: &str = "wacz_check::hostile::mutated_waczs_are_checked_within_bounds";
/// The small valid WACZ the child mutates.
const FUZZ_WACZ_ENV: &str = "WEBAIP_TEST_WACZ";
/// Address space of the child (all cases).
const FUZZ_MEMORY: u64 = 1 << 30;
/// JSON report bytes allowed to one case.
const FUZZ_REPORT_LIMIT: usize = 256 << 10;

/// An edit of the WACZ's bytes: where (a fraction of the length, or of its last 512 bytes:
/// the central directory and end record), and what.
#[derive(Debug, Clone)]
enum Edit {
    Set { at: prop::sample::Index, tail: bool, byte: u8 },
    Word { at: prop::sample::Index, tail: bool, value: u32 },
    Cut { at: prop::sample::Index },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), any::<bool>(), any::<u8>())
            .prop_map(|(at, tail, byte)| Edit::Set { at, tail, byte }),
        4 => (any::<prop::sample::Index>(), any::<bool>(), prop_oneof![Just(0u32), Just(u32::MAX), Just(0xFFFF), any::<u32>()])
            .prop_map(|(at, tail, value)| Edit::Word { at, tail, value }),
        1 => any::<prop::sample::Index>().prop_map(|at| Edit::Cut { at }),
    ]
}

fn apply(bytes: &mut Vec<u8>, e: &Edit) {
    if bytes.len() < 4 {
        return;
    }
    let place = |at: &prop::sample::Index, tail: bool, len: usize| {
        let from = if tail { len.saturating_sub(512) } else { 0 };
        from + at.index(len - from)
    };
    match e {
        Edit::Set { at, tail, byte } => {
            let i = place(at, *tail, bytes.len());
            bytes[i] = *byte;
        }
        Edit::Word { at, tail, value } => {
            let i = place(at, *tail, bytes.len().saturating_sub(3));
            bytes[i..i + 4].copy_from_slice(&value.to_le_bytes());
        }
        Edit::Cut { at } => bytes.truncate(at.index(bytes.len()).max(1)),
    }
}

/// The child's cases: each mutated WACZ checked in process; no panic, and a bounded report.
fn fuzz_cases() {
    let base = std::fs::read(std::env::var(FUZZ_WACZ_ENV).expect("the WACZ")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("case.wacz");
    let config = ProptestConfig { cases: 160, failure_persistence: None, ..Default::default() };
    proptest!(config, |(edits in prop::collection::vec(edit(), 1..8))| {
        let mut bytes = base.clone();
        for e in &edits {
            apply(&mut bytes, e);
        }
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(report) = webaip::internals::check_wacz(&path) {
            let json = serde_json::to_string(&report).unwrap();
            prop_assert!(json.len() < FUZZ_REPORT_LIMIT, "{} bytes of report", json.len());
        }
    });
}

/// Mutated bytes of a small valid WACZ (py-wacz's, of a corpus WARC) checked in a child
/// process under a 1 GiB address-space limit: no panic, every case ends, each report
/// bounded, and the child's peak RSS under the crafted files' bound.
#[test]
fn mutated_waczs_are_checked_within_bounds() {
    if is_child(FUZZ) {
        fuzz_cases();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let wacz = dir.path().join("small.wacz");
    let warc: PathBuf = corpus().join("warc/warcio-example.warc.gz");
    super::py_wacz(&[warc], None, &wacz);
    let env = [(FUZZ_WACZ_ENV, wacz.display().to_string())];
    let run = run_child(
        FUZZ,
        &env,
        Some(FUZZ_MEMORY),
        Duration::from_secs(300),
        &dir.path().join("stderr"),
    );
    eprintln!("fuzz: {:?}, peak RSS {} KiB", run.status, run.peak_rss >> 10);
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MiB", run.peak_rss >> 20);
}
