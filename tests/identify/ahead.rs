//! A migration identifies each batch of records on a thread of its own, ahead of the writer,
//! and the results travel with their records: each must reach the METS entry of its own
//! record, batch after batch, the last one too, and a failure of identification must stop the
//! run cleanly, saying where, never hang it.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::{Payload, identified, oracle};
use crate::util::{Package, SmallDisk, files_in, gen_arc};

/// Records of the scaled crawl: redacted notices, real JPEGs, pages, 3 MiB JPEGs.
const SCALE: usize = 10;
const BIG: usize = 2;
const REDACTED: usize = 189 * SCALE;
const JPEGS: usize = 12 * SCALE;
const PAGES: usize = 20 * SCALE;

/// The 2004 crawl ten times over (`gen_arc.py redacted --scale 10 --big 2`), shuffled: 2,212
/// payloads, more than four batches of a migration (512 records at most each), with two
/// records too large to hold streamed alone among them.
fn scaled_arc(dir: &Path) -> std::path::PathBuf {
    let arc = dir.join("IAH-20041012093000-00000-scaled.arc.gz");
    let (scale, big) = (SCALE.to_string(), BIG.to_string());
    gen_arc("redacted", &arc, &["--scale", &scale, "--big", &big]);
    arc
}

/// What a payload's URI says it is: the generator names each kind apart.
fn kind(p: &Payload) -> &'static str {
    let uri = p.uri.as_deref().unwrap_or_default();
    let kinds = [("/foto/DSCN", "redacted"), ("/foto/IMG_", "jpeg"), ("/foto/BIG_", "big")];
    let found = kinds.into_iter().chain([("/album/", "page")]).find(|(k, _)| uri.contains(k));
    found.map(|(_, kind)| kind).unwrap_or_else(|| panic!("no kind the generator makes: {p:?}"))
}

/// `--identify all` of the scaled crawl: every payload's METS entry, cut out of the container
/// at its METS ranges by the independent reader, holds the PUIDs siegfried gives those bytes,
/// and what the generator made at its URI. Results attached one record off, or a batch's
/// lost at the end, would fail here: the kinds are shuffled, and each is counted.
#[test]
fn each_record_of_every_batch_gets_its_own_identification() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = scaled_arc(tmp.path());
    let pkg = tmp.path().join("pkg");
    let report = identified(&pkg, &[&arc], "all");
    let got = oracle(&pkg);
    let total = REDACTED + JPEGS + PAGES + BIG;
    assert_eq!(got.payloads.len(), total);
    assert_eq!(report["identification"]["payloads"], total as u64);
    assert_eq!(report["identification"]["not_confirmed"], REDACTED as u64);

    let mut counted = std::collections::BTreeMap::new();
    for p in &got.payloads {
        assert!(p.sha512_ok, "{p:?}");
        let k = kind(p);
        *counted.entry(k).or_insert(0usize) += 1;
        // siegfried, on this record's bytes, agrees with what the METS says of them.
        let [m] = p.siegfried.as_slice() else { panic!("{p:?}") };
        assert_eq!(p.puids, std::slice::from_ref(&m.id), "{p:?}");
        match k {
            "redacted" => {
                assert_eq!(p.puids, ["x-fmt/111"], "{p:?}");
                assert!(p.not_confirmed.is_some(), "{p:?}");
            }
            "jpeg" | "big" => {
                assert!(m.basis.contains("byte match"), "{p:?}");
                assert!(p.not_confirmed.is_none() && p.contradiction.is_none(), "{p:?}");
            }
            _ => assert!(p.not_confirmed.is_none() && p.contradiction.is_none(), "{p:?}"),
        }
    }
    let expected = [("big", BIG), ("jpeg", JPEGS), ("page", PAGES), ("redacted", REDACTED)];
    assert_eq!(counted, expected.into_iter().collect());
}

/// How long a failed run may take here before it is taken to hang.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Runs `cmd`, killing it (and failing) past [`RUN_LIMIT`].
fn within_limit(mut cmd: Command) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish in {RUN_LIMIT:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// An error of identification mid-run (the test hook fails every batch after the first, as
/// an unreadable payload would) stops `package` with an error naming the ARC, the record's
/// offset and identification; nothing that looks complete is left.
#[cfg(feature = "test-hooks")]
#[test]
fn a_failure_of_identification_mid_run_stops_the_run_saying_where() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = scaled_arc(tmp.path());
    let name = arc.file_name().unwrap().to_str().unwrap();
    let out = tmp.path().join("packages");
    std::fs::create_dir(&out).unwrap();
    let mut cmd = Package::new().quiet().command(&out.join("pkg"), &arc);
    cmd.env("WEBAIP_FAIL_AT", "identify");
    let o = within_limit(cmd);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(name), "names the ARC: {err}");
    assert!(err.contains(": at offset "), "names the record: {err}");
    assert!(err.contains("format identification: identification failed (test hook)"), "{err}");
    assert!(files_in(&out).is_empty(), "{:?}", files_in(&out));
}

/// The writer stopping early (the disk is full) while identification runs ahead: the run ends
/// with the writer's error, and the threads ahead of it end too (no hang).
#[test]
fn a_writer_that_stops_early_ends_identification_ahead_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = scaled_arc(tmp.path());
    let out = tmp.path().join("small");
    std::fs::create_dir(&out).unwrap();
    // The container alone is larger than the disk.
    let Some(_disk) = SmallDisk::mount(&out, 2 << 10) else {
        eprintln!("skipped: no tmpfs can be mounted here");
        return;
    };
    let o = within_limit(Package::new().quiet().command(&out.join("pkg"), &arc));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("no space left on device"), "{err}");
    assert!(!out.join("pkg").exists());
}
