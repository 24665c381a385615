//! What killed runs leave behind is recognised as dead and removed by the next run (issue 24,
//! item 9), while what a live run is writing is left alone. A run holds an exclusive `flock`
//! on each temporary it makes; the kernel drops it when the process dies. Here a dead run's
//! temporary is one nobody holds a lock on, and a live run's one this test holds locked.

use std::fs::File;
use std::path::Path;

use rustix::fs::FlockOperation;

use crate::util::{Package, files_in, sample, webaip};

/// Holds `path` (a file or directory) locked as a live run would.
fn hold_lock(path: &Path) -> File {
    let f = File::open(path).unwrap();
    rustix::fs::flock(&f, FlockOperation::NonBlockingLockExclusive).unwrap();
    f
}

/// `webaip migrate` removes `.NAME.XXXXXX.partial` files of the same output name that no run
/// holds, with or without `--force`, and keeps a locked one and other names.
#[test]
fn migrate_removes_a_killed_runs_partial_output_and_keeps_a_live_one() {
    let arc = sample("heritrix-job/arcs/IAH-20240315103000-00001-crawler.example.arc");
    let dir = tempfile::tempdir().unwrap();
    let name = "IAH-20240315103000-00001-crawler.example.warc.gz";
    for force in [false, true] {
        let dead = dir.path().join(format!(".{name}.Dead01.partial"));
        let live = dir.path().join(format!(".{name}.Live01.partial"));
        let other = dir.path().join(".OTHER.warc.gz.Dead02.partial");
        for p in [&dead, &live, &other] {
            std::fs::write(p, b"half a WARC").unwrap();
        }
        let _held = hold_lock(&live);
        let mut args = vec!["migrate", "--quiet", "--out", dir.path().to_str().unwrap()];
        if force {
            args.push("--force");
        }
        args.push(arc.to_str().unwrap());
        let r = webaip(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert!(!dead.exists(), "a dead run's partial output survived (force: {force})");
        assert!(live.exists() && other.exists(), "{:?}", files_in(dir.path()));
        std::fs::remove_file(&live).unwrap();
        std::fs::remove_file(&other).unwrap();
        assert_eq!(files_in(dir.path()), [name], "force: {force}");
    }
}

/// `webaip package` removes the METS spill directories (`TMPDIR/webaip-mets-XXXXXX`) of killed
/// runs, keeps a live run's, and leaves none of its own.
#[test]
fn package_removes_a_killed_runs_mets_spill_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dead = tmp.path().join("webaip-mets-Dead01");
    let live = tmp.path().join("webaip-mets-Live01");
    for d in [&dead, &live] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join("container-0.xml"), b"<mets:file/>").unwrap();
    }
    let _held = hold_lock(&live);
    let out = tempfile::tempdir().unwrap();
    let r = Package::new()
        .quiet()
        .command(&out.path().join("p"), &sample("heritrix-job"))
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(files_in(tmp.path()), ["webaip-mets-Live01"]);
}
