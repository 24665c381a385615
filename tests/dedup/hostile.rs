//! `undedup --with PKG` and `package --dedup-against PKG` on hostile packages built here: a
//! container that is a link to a file outside (its first line must never be shown) or a FIFO
//! (which must not block the run) is refused; a `--with` package of many records is looked up
//! without holding a map of every record id (peak RSS of the CLI, measured with `wait4`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::fuzz::child::{ChildRun, Outcome, launch_webaip, launch_webaip_limited};
use crate::util::{Package, corpus};

/// The first line of the file outside the packages that links point at.
const SECRET: &str = "SECRET-FIRST-LINE root:x:0:0";
/// A run on these tiny inputs that takes longer is blocked.
const DEADLINE: Duration = Duration::from_secs(30);

/// A WARC record of `kind` with `fields` and `block`.
fn record(kind: &str, id: &str, fields: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: {id}\r\n\
         WARC-Date: 2024-01-01T00:00:00Z\r\n{fields}Content-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// A folder `dir/name` with `content/` and a METS that has an OBJID (what `--dedup-against`
/// needs of a package), `content/good.warc` a small WARC.
fn package_dir(dir: &Path, name: &str) -> PathBuf {
    let pkg = dir.join(name);
    std::fs::create_dir_all(pkg.join("content")).unwrap();
    std::fs::write(
        pkg.join("METS.xml"),
        format!(
            "<mets:mets xmlns:mets=\"http://www.loc.gov/METS/\" OBJID=\"{name}\">\n</mets:mets>\n"
        ),
    )
    .unwrap();
    let warc = record("resource", "<urn:uuid:good>", "WARC-Target-URI: http://e.org/\r\n", b"x");
    std::fs::write(pkg.join("content/good.warc"), warc).unwrap();
    pkg
}

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(rustix::fs::CWD, path, rustix::fs::Mode::from(0o600)).unwrap();
}

/// Runs `webaip args` with a deadline; it must fail (exit 2) in time, saying `why`, without
/// the secret.
fn refused(args: &[&str], dir: &Path, why: &str) {
    let started = Instant::now();
    let run: ChildRun = launch_webaip_limited(args, dir, None, DEADLINE);
    assert_ne!(run.status, Outcome::TimedOut, "{args:?} blocked: {}", run.stderr);
    assert_eq!(run.status, Outcome::Exited(2), "{args:?}: {}", run.stderr);
    assert!(run.stderr.contains(why), "{args:?}: {}", run.stderr);
    assert!(!run.stderr.contains("SECRET"), "{args:?} shows the linked file: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(started.elapsed() < DEADLINE);
}

/// A container that is a link to a file outside the package, or a FIFO: `package
/// --dedup-against` refuses it, and `undedup --with` stops naming it when no other package
/// gives the payload, never opening what it points at.
#[test]
fn undedup_and_dedup_against_refuse_linked_and_fifo_containers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, format!("{SECRET}\n")).unwrap();
    // Its revisit's original is in no package: each source is searched, and the hostile
    // one's container, never opened, is named.
    let pkg = package_dir(dir, "deduplicated");
    let fields = "WARC-Target-URI: http://e.org/r\r\n\
                  WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\n\
                  WARC-Refers-To: <urn:uuid:elsewhere>\r\n\
                  WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n\
                  Content-Type: application/http; msgtype=response\r\n";
    let revisit = record("revisit", "<urn:uuid:revisit>", fields, b"HTTP/1.1 200 OK\r\n\r\n");
    std::fs::write(pkg.join("content/revisit.warc"), revisit).unwrap();
    let linked = package_dir(dir, "linked");
    std::os::unix::fs::symlink(&secret, linked.join("content/evil.warc")).unwrap();
    let fifo = package_dir(dir, "fifo");
    mkfifo(&fifo.join("content/pipe.warc.gz"));
    let source = corpus().join("warc/pywb-dupes.warc.gz");
    let s = |p: &Path| p.to_str().unwrap().to_string();

    for (hostile, why) in
        [(&linked, "evil.warc: a symbolic link"), (&fifo, "pipe.warc.gz: is a FIFO")]
    {
        let out = dir.join("out");
        let undedup = ["undedup", &s(&pkg), "--with", &s(hostile), "--out", &s(&out)];
        refused(&undedup, dir, why);
        assert!(!out.exists(), "no package after a refusal");
        let argv =
            Package::new().quiet().args(&["--dedup-against", &s(hostile)]).argv(&out, &[&source]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        refused(&argv, dir, why);
        assert!(!out.join("METS.xml").exists(), "no package after a refusal");
    }
    // A listed container the package lacks is refused too, not skipped.
    let lacking = package_dir(dir, "lacking");
    std::fs::write(
        lacking.join("manifest-sha512.txt"),
        format!("{}  content/gone.warc.gz\n", "0".repeat(128)),
    )
    .unwrap();
    let out = dir.join("out");
    refused(&["undedup", &s(&pkg), "--with", &s(&lacking), "--out", &s(&out)], dir, "gone.warc.gz");
}

/// Records in the `--with` package: before, `undedup` held every record id in a map (about
/// 300 bytes each: 90 MB here, 156 MB for 500 000).
const RECORDS: usize = 300_000;
/// The bound every command keeps (issue 24).
const PEAK_RSS_LIMIT: u64 = 64 << 20;

/// `undedup --with` a package of 300 000 records restores the revisit that refers to its last
/// record in bounded memory: the record ids are looked up on disk.
#[test]
fn undedup_with_a_package_of_many_records_stays_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let with = package_dir(dir, "with");
    {
        let file = std::fs::File::create(with.join("content/many.warc")).unwrap();
        let mut w = std::io::BufWriter::new(file);
        for n in 0..RECORDS {
            let id = format!("<urn:uuid:00000000-0000-0000-0000-{n:012}>");
            w.write_all(&record("resource", &id, "", b"")).unwrap();
        }
        let http = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello";
        let fields = "WARC-Target-URI: http://e.org/hello\r\n\
                      Content-Type: application/http;msgtype=response\r\n";
        w.write_all(&record("response", "<urn:uuid:original>", fields, http)).unwrap();
    }
    let pkg = package_dir(dir, "deduplicated");
    // sha1:... is the SHA-1 of "hello", in base 32.
    let fields = "WARC-Target-URI: http://e.org/hello\r\n\
                  WARC-Refers-To: <urn:uuid:original>\r\n\
                  WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\n\
                  WARC-Payload-Digest: sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N\r\n\
                  Content-Type: application/http;msgtype=response\r\n";
    let revisit = record("revisit", "<urn:uuid:revisit>", fields, b"HTTP/1.1 200 OK\r\n\r\n");
    std::fs::write(pkg.join("content/good.warc"), revisit).unwrap();

    let out = dir.join("back");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let args = [
        "undedup",
        &s(&pkg),
        "--with",
        &s(&with),
        "--out",
        &s(&out),
        "--",
        "--no-virus-check",
        "--quiet",
    ];
    let started = Instant::now();
    let run = launch_webaip(&args, dir);
    eprintln!(
        "undedup --with {RECORDS} records: peak RSS {} MB, {:.1} s",
        run.peak_rss >> 20,
        started.elapsed().as_secs_f64()
    );
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    assert!(run.stderr.contains("1 revisit record(s) restored"), "{}", run.stderr);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB", run.peak_rss >> 20);
    // The revisit is a response again, its payload the original's.
    let restored = std::fs::read(out.join("content/good.warc")).unwrap();
    let restored = String::from_utf8_lossy(&restored);
    assert!(restored.contains("WARC-Type: response\r\n"), "{restored}");
    assert!(restored.ends_with("HTTP/1.1 200 OK\r\n\r\nhello\r\n\r\n"), "{restored}");
}

/// `undedup` keeps the restored containers in a `.webaip-undedup-XXXXXX` folder beside the new
/// package: the one a killed run left (nobody holds its lock) is removed by the next run, a
/// live run's (locked) is left alone, and the run leaves none of its own.
#[test]
fn undedup_removes_a_killed_runs_scratch_folder_and_keeps_a_live_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pkg = package_dir(dir, "plain");
    // The folder of the new package, apart from the one the run's output is kept in.
    let outs = dir.join("outs");
    std::fs::create_dir(&outs).unwrap();
    let dead = outs.join(".webaip-undedup-Dead01");
    let live = outs.join(".webaip-undedup-Live01");
    for d in [&dead, &live] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join("good.warc"), b"half a WARC").unwrap();
    }
    let held = std::fs::File::open(&live).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let out = outs.join("back");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let args = [
        "undedup",
        &s(&pkg),
        "--with",
        &s(&pkg),
        "--out",
        &s(&out),
        "--",
        "--no-virus-check",
        "--quiet",
    ];
    let run = launch_webaip_limited(&args, dir, None, DEADLINE);
    assert_eq!(run.status, Outcome::Exited(0), "{}", run.stderr);
    assert!(!dead.exists(), "a killed run's scratch folder survived");
    assert!(live.join("good.warc").exists(), "a live run's scratch folder was touched");
    let mut left: Vec<String> = std::fs::read_dir(&outs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [".webaip-undedup-Live01", "back"]);
}
