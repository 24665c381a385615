//! `webaip package` on hostile input (issue 13): links, FIFOs, devices, huge sparse side files,
//! paths over PATH_MAX, forged file names, WARCs whose digests lie, kills between the renames
//! of `--force`. Every input is built here in a tempdir; runs have a time limit (a FIFO must
//! not hang them) and, where strace exists, are traced to show that nothing outside the output's
//! directory and the run's TMPDIR is opened for writing, and nothing is read through a link.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{
    Package, copy_tree, corpus, files_in, json, oracle_python, repo, sample, webaip,
    webaip_command, webaip_under,
};

/// The longest a packaging run of these tiny inputs may take before it counts as hung.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// A scratch area: `input/` (the harvest), `outdir/` (where the package goes), `tmp/` (the
/// run's TMPDIR) and `secret` (a file links point at; it must never be opened).
struct Area {
    dir: tempfile::TempDir,
}

impl Area {
    fn new() -> Area {
        let dir = tempfile::tempdir().unwrap();
        for d in ["input", "outdir", "tmp"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("secret"), b"not for packaging\n").unwrap();
        Area { dir }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn out(&self) -> PathBuf {
        self.path("outdir/pkg")
    }
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// A character device (the same as /dev/null), when this process may make one.
fn mkchar(path: &Path) -> bool {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o644),
        rustix::fs::makedev(1, 3),
    )
    .is_ok()
}

/// Makes `dir/<name>/<name>/.../<file>` whose full path is just over PATH_MAX while its
/// directory's path is not, through directory descriptors (the kernel refuses the long path
/// itself). Returns the file's name relative to `dir`.
fn over_path_max(dir: &Path) -> String {
    use rustix::fs::{Mode, OFlags};
    let seg = "d".repeat(200);
    let mut len = dir.as_os_str().len();
    let mut fd = rustix::fs::open(dir, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
    let mut rel = String::new();
    while len + 1 + seg.len() < 4050 {
        rustix::fs::mkdirat(&fd, seg.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        fd = rustix::fs::openat(
            &fd,
            seg.as_str(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
        len += 1 + seg.len();
        rel.push_str(&seg);
        rel.push('/');
    }
    let name = format!("{}.html", "f".repeat(4100 - len));
    let f = rustix::fs::openat(
        &fd,
        name.as_str(),
        OFlags::CREATE | OFlags::WRONLY,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::io::write(&f, b"<p>deep</p>").unwrap();
    assert!(len + 1 + name.len() > 4096);
    rel.push_str(&name);
    rel
}

/// Runs the CLI with a time limit (killed and failed past it), under strace when there is
/// one: returns its output and the strace log, if traced.
fn run(area: &Area, args: &[String], env: &[(&str, &str)]) -> (Output, Option<String>) {
    let strace = Path::new("/usr/bin/strace").exists();
    let log = area.path("strace.log");
    let mut cmd = if strace {
        let mut c = Command::new("/usr/bin/strace");
        c.args(["-f", "-y", "-s", "8192", "-e", "trace=file,desc", "-o"]).arg(&log);
        webaip_under(c)
    } else {
        webaip_command()
    };
    cmd.args(args).env("TMPDIR", area.path("tmp")).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("webaip {args:?} did not finish in {RUN_LIMIT:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let log = strace.then(|| std::fs::read_to_string(&log).unwrap_or_default());
    (out, log)
}

/// Paths a traced run created or opened for writing (successful calls only), and paths it
/// opened at all (any mode), resolved through strace's `-y` descriptor decorations.
fn traced_paths(log: &str) -> (Vec<String>, Vec<String>) {
    let mut written = Vec::new();
    let mut opened = Vec::new();
    for line in log.lines() {
        let Some(call_at) = line.find(|c: char| c.is_ascii_alphabetic()) else { continue };
        let call = &line[call_at..];
        let name = call.split('(').next().unwrap_or("");
        let Some((_, result)) = call.rsplit_once(") = ") else { continue };
        if result.starts_with('-') || result.starts_with('?') {
            continue;
        }
        let is_open = matches!(name, "open" | "openat" | "openat2" | "creat");
        if is_open {
            // The returned descriptor carries the resolved path: `= 4</abs/path>`.
            if let Some(p) = result.split_once('<').and_then(|(_, r)| r.rsplit_once('>')) {
                let p = p.0.to_string();
                let writes = name == "creat"
                    || call.contains("O_WRONLY")
                    || call.contains("O_RDWR")
                    || call.contains("O_CREAT");
                if writes {
                    written.push(p.clone());
                }
                opened.push(p);
            }
            continue;
        }
        let creates = name.starts_with("mkdir")
            || name.starts_with("rename")
            || name.starts_with("link")
            || name.starts_with("symlink")
            || name.starts_with("unlink")
            || name.starts_with("rmdir");
        if !creates {
            continue;
        }
        // Arguments: `dirfd</dir>, "rel"` or `"/abs"`.
        let args = &call[name.len() + 1..];
        let mut dir: Option<String> = None;
        let mut rest = args;
        while let Some(q) = rest.find('"') {
            let before = &rest[..q];
            if let Some((_, d)) = before.rsplit_once('<') {
                dir = d.split_once('>').map(|(d, _)| d.to_string());
            }
            let after = &rest[q + 1..];
            let Some(end) = after.find('"') else { break };
            let p = &after[..end];
            let full = if p.starts_with('/') {
                p.to_string()
            } else {
                format!("{}/{p}", dir.clone().unwrap_or_default())
            };
            written.push(full);
            rest = &after[end + 1..];
            dir = None;
        }
    }
    (written, opened)
}

/// Asserts a traced run wrote only below `allowed` and never opened `secret`.
fn assert_confined(log: Option<&str>, allowed: &[PathBuf], secret: &Path) {
    let Some(log) = log else {
        eprintln!("strace not available: the file-system checks stand alone");
        return;
    };
    assert!(log.contains("execve"), "strace ran: {}", &log[..log.len().min(500)]);
    let (written, opened) = traced_paths(log);
    assert!(!written.is_empty(), "the trace shows the package being written");
    for w in &written {
        assert!(
            allowed.iter().any(|a| Path::new(w).starts_with(a)),
            "written outside {allowed:?}: {w}"
        );
    }
    let secret = secret.display().to_string();
    for o in &opened {
        assert!(*o != secret && o != "/etc/passwd", "opened through a link: {o}");
    }
}

fn refused_paths(report: &serde_json::Value) -> Vec<(String, String)> {
    report["refused"]
        .as_array()
        .unwrap_or_else(|| panic!("no refused list: {report}"))
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_str().unwrap().to_string()))
        .collect()
}

fn assert_refused(refused: &[(String, String)], path: &str, why: &str) {
    assert!(
        refused.iter().any(|(p, w)| p == path && w.contains(why)),
        "{path} not refused with {why:?}: {refused:?}"
    );
}

/// `package --no-virus-check --json --schemas ... EXTRA --out OUT INPUT`.
fn package_args(out: &Path, input: &Path, extra: &[&str]) -> Vec<String> {
    Package::new().json().schemas().args(extra).argv(out, &[input])
}

fn assert_valid_package(pkg: &Path) {
    let (ok, text) = oracle_validate(&pkg.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&pkg.join("METS.xml"));
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_package.py"))
        .arg(pkg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_pandas_instance_of_links_fifos_and_devices_is_packaged_without_reading_them() {
    let area = Area::new();
    let inst = area.path("input/40123/20040517-1412");
    copy_tree(&sample("pandas/40123/20040517-1412"), &inst);
    let secret = area.path("secret");
    // The fixed names HTTrack and PANDAS use, each replaced by something hostile.
    std::fs::remove_file(inst.join("hts-cache/new.txt")).unwrap();
    mkfifo(&inst.join("hts-cache/new.txt"));
    std::fs::remove_file(inst.join("hts-cache/new.zip")).unwrap();
    std::os::unix::fs::symlink(&secret, inst.join("hts-cache/new.zip")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", inst.join("url.map")).unwrap();
    std::fs::remove_file(inst.join("hts-log.txt")).unwrap();
    mkfifo(&inst.join("hts-log.txt"));
    let host = inst.join("www.example.gov.au");
    mkfifo(&host.join(".panaccess-mime.types"));
    mkfifo(&host.join("fifo.html"));
    std::os::unix::fs::symlink(&secret, host.join("secret.html")).unwrap();
    std::os::unix::fs::symlink(area.path(""), inst.join("www.link.example")).unwrap();
    let device = mkchar(&host.join("null.html"));
    let deep = over_path_max(&host);

    let out = area.out();
    let args = package_args(&out, &inst, &["--mode", "full"]);
    let (o, log) = run(&area, &args, &[]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "refusals are findings: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = json(&o)["packages"][0].clone();
    let refused = refused_paths(&r);
    assert_refused(&refused, "hts-cache/new.txt", "a FIFO");
    assert_refused(&refused, "hts-cache/new.zip", "symbolic link");
    assert_refused(&refused, "url.map", "symbolic link");
    assert_refused(&refused, "hts-log.txt", "a FIFO");
    assert_refused(&refused, "www.example.gov.au/.panaccess-mime.types", "a FIFO");
    assert_refused(&refused, "www.example.gov.au/fifo.html", "a FIFO");
    assert_refused(&refused, "www.example.gov.au/secret.html", "symbolic link");
    assert_refused(&refused, "www.link.example", "symbolic link");
    assert_refused(&refused, &format!("www.example.gov.au/{deep}"), "PATH_MAX");
    if device {
        assert_refused(&refused, "www.example.gov.au/null.html", "a character device");
    }
    // The regular files of the mirror are all there.
    assert_eq!(r["captures"], 7, "{r}");
    assert_valid_package(&out);
    assert_confined(log.as_deref(), &[area.path("outdir"), area.path("tmp")], &secret);
    let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
    assert!(!mets.contains("not for packaging") && !mets.contains("secret.html"));
}

#[test]
fn a_heritrix_job_of_links_and_fifos_is_packaged_without_reading_them() {
    let area = Area::new();
    let job = area.path("input/job");
    let secret = area.path("secret");
    std::fs::create_dir_all(job.join("warcs")).unwrap();
    std::fs::create_dir_all(job.join("logs")).unwrap();
    std::fs::write(job.join("crawler-beans.cxml"), b"<beans/>").unwrap();
    std::fs::copy(corpus().join("warc/warcio-example.warc.gz"), job.join("warcs/a.warc.gz"))
        .unwrap();
    mkfifo(&job.join("logs/crawl.log"));
    mkfifo(&job.join("warcs/b.warc.gz"));
    std::os::unix::fs::symlink("/etc/passwd", job.join("seeds.txt")).unwrap();
    std::os::unix::fs::symlink(&secret, job.join("warcs/c.warc.gz")).unwrap();
    std::os::unix::fs::symlink(&secret, job.join("logs/progress-statistics.log")).unwrap();
    let deep = over_path_max(&job);

    let out = area.out();
    let args = package_args(&out, &job, &[]);
    let (o, log) = run(&area, &args, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&json(&o));
    let refused = refused_paths(&r);
    assert_refused(&refused, "logs/crawl.log", "a FIFO");
    assert_refused(&refused, "warcs/b.warc.gz", "a FIFO");
    assert_refused(&refused, "seeds.txt", "symbolic link");
    assert_refused(&refused, "warcs/c.warc.gz", "symbolic link");
    assert_refused(&refused, "logs/progress-statistics.log", "symbolic link");
    assert_refused(&refused, &deep, "PATH_MAX");
    assert_eq!(r["containers"].as_array().unwrap().len(), 1, "{r}");
    assert!(r["crawl_log"].is_null());
    assert_valid_package(&out);
    assert_confined(log.as_deref(), &[area.path("outdir"), area.path("tmp")], &secret);
}

/// A WARC whose first record's block is followed by one CRLF instead of two.
fn warc_without_record_end() -> Vec<u8> {
    let record = |n: u8, body: &str, end: &str| {
        format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-00000000000{n}>\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://e.org/{n}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}{end}",
            body.len()
        )
    };
    format!("{}{}", record(1, "hello", "\r\n"), record(2, "world", "\r\n\r\n")).into_bytes()
}

#[test]
fn a_copied_warc_that_audit_would_reject_is_reported_and_kept_as_received() {
    let area = Area::new();
    let job = area.path("input/job");
    std::fs::create_dir_all(job.join("warcs")).unwrap();
    std::fs::write(job.join("crawler-beans.cxml"), b"<beans/>").unwrap();
    let bad_digests = corpus().join("warc/jwat-invalid-warcfile-digest-fields.warc");
    std::fs::copy(&bad_digests, job.join("warcs/digests.warc")).unwrap();
    std::fs::write(job.join("warcs/no-end.warc"), warc_without_record_end()).unwrap();
    std::fs::copy(corpus().join("warc/warcio-example.warc.gz"), job.join("warcs/good.warc.gz"))
        .unwrap();

    let out = area.out();
    let args = package_args(&out, &job, &["--mode", "full"]);
    let (o, _) = run(&area, &args, &[]);
    assert_eq!(o.status.code(), Some(1), "findings: {}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&json(&o));
    let mut ours = Vec::new();
    for c in r["containers"].as_array().unwrap() {
        let path = c["path"].as_str().unwrap();
        assert_eq!(
            c["warc_findings"].as_u64().unwrap() as usize,
            c["warc_finding_examples"].as_array().unwrap().len()
        );
        if path.ends_with("good.warc.gz") {
            assert_eq!(c["warc_findings"], 0, "{c}");
        } else {
            assert!(c["warc_findings"].as_u64().unwrap() > 0, "{c}");
        }
        for f in c["warc_finding_examples"].as_array().unwrap() {
            ours.push((
                path.to_string(),
                f["offset"].as_u64().unwrap(),
                f["message"].as_str().unwrap().to_string(),
            ));
        }
    }
    assert!(ours.iter().any(|(p, _, m)| p == "content/no-end.warc" && m.contains("CRLF CRLF")));
    assert!(
        ours.iter()
            .any(|(p, _, m)| p == "content/digests.warc" && m.contains("WARC-Block-Digest is"))
    );
    // Kept byte-exact, with a PREMIS validation event saying what is wrong.
    assert_eq!(
        std::fs::read(out.join("content/digests.warc")).unwrap(),
        std::fs::read(&bad_digests).unwrap()
    );
    assert_eq!(std::fs::read(out.join("content/no-end.warc")).unwrap(), warc_without_record_end());
    let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
    assert_eq!(
        mets.matches(">validation</premis:eventType>").count(),
        2,
        "one event per bad container"
    );
    assert!(mets.contains(">failure</premis:eventOutcome>"));
    assert!(mets.contains("is not followed by CRLF CRLF"));
    // (check_package.py reads gzip members only; these WARCs are uncompressed.)
    let (ok, text) = oracle_validate(&out.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&out.join("METS.xml"));
    // Text report too.
    let text = webaip_text(&area, job.to_str().unwrap());
    assert!(text.contains("WARC FINDINGS") && text.contains("content/no-end.warc"), "{text}");

    // What the package declared is exactly what the deep audit finds.
    let audit = webaip(&["audit", "--deep", "--json", out.to_str().unwrap()]);
    let a: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap();
    let mut theirs: Vec<(String, u64, String)> = a["packages"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error" && (f["rule"] == "warc-digest" || f["rule"] == "warc"))
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["offset"].as_u64().unwrap(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs, "package and audit --deep agree");
}

/// The text report of packaging `input` into a fresh directory.
fn webaip_text(area: &Area, input: &str) -> String {
    let out = area.path("outdir/text-pkg");
    let o = Package::new()
        .command(&out, Path::new(input))
        .env("TMPDIR", area.path("tmp"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The OBJID of a package's METS.
fn objid(pkg: &Path) -> String {
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let at = mets.find("OBJID=\"").unwrap() + 7;
    mets[at..at + mets[at..].find('"').unwrap()].to_string()
}

/// Packages the sample job into `out` (quietly); returns the exit status (None: killed).
#[cfg(feature = "test-hooks")]
fn package_sample(area: &Area, extra: &[&str], env: &[(&str, &str)]) -> Option<i32> {
    let out = area.out();
    let job = sample("heritrix-job");
    let o = Package::new()
        .quiet()
        .args(extra)
        .command(&out, &job)
        .envs(env.iter().copied())
        .env("TMPDIR", area.path("tmp"))
        .output()
        .unwrap();
    o.status.code()
}

// Needs the failure points of a `test-hooks` build.
#[cfg(feature = "test-hooks")]
#[test]
fn a_kill_between_the_renames_of_force_leaves_a_whole_package_and_the_next_run_cleans_up() {
    for hook in ["between-renames", "no-exchange,between-renames"] {
        let area = Area::new();
        let out = area.out();
        let outdir = area.path("outdir");
        assert_eq!(package_sample(&area, &[], &[]), Some(0));
        let first = objid(&out);
        // Killed (abort) after the first of the two steps.
        assert_eq!(package_sample(&area, &["--force"], &[("WEBAIP_FAIL_AT", hook)]), None);
        let left = files_in(&outdir);
        if hook == "between-renames" {
            // Exchanged in one step: the name holds the new package, whole.
            assert_ne!(objid(&out), first, "{hook}");
            assert!(out.join("manifest-sha512.txt").is_file());
            assert_eq!(left.len(), 2, "{left:?}");
        } else {
            // Two steps: the old package is aside, the new one still partial.
            assert!(!out.exists(), "{hook}");
            assert!(left.iter().any(|n| n.starts_with(".pkg.") && n.ends_with(".old")), "{left:?}");
        }
        // The next run finds the leftovers: a whole package is under the name again and
        // nothing else is left beside it.
        let code = package_sample(&area, &[], &[]);
        assert_eq!(code, Some(2), "{hook}: the package exists again, so no --force, no run");
        assert_eq!(files_in(&outdir), vec!["pkg".to_string()], "{hook}");
        if hook != "between-renames" {
            assert_eq!(objid(&out), first, "{hook}: the old package was put back");
        }
        assert!(out.join("manifest-sha512.txt").is_file());
        // And --force then replaces it in one step, leaving nothing beside it.
        assert_eq!(package_sample(&area, &["--force"], &[]), Some(0));
        assert_eq!(files_in(&outdir), vec!["pkg".to_string()], "{hook}");
    }
}

#[test]
fn a_live_runs_partial_directory_is_left_alone_and_a_dead_ones_removed() {
    use rustix::fs::{FlockOperation, Mode, OFlags};
    let area = Area::new();
    let outdir = area.path("outdir");
    let live = outdir.join(".pkg.AAAAAA.partial");
    let dead = outdir.join(".pkg.BBBBBB.partial");
    let other = outdir.join(".pkg.x.CCCCCC.partial"); // another output's (pkg.x)
    let file = outdir.join(".pkg.DDDDDD.partial"); // not a directory: not ours
    for d in [&live, &dead, &other] {
        std::fs::create_dir_all(d.join("content")).unwrap();
    }
    std::fs::write(&file, b"x").unwrap();
    let fd = rustix::fs::open(&live, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).unwrap();

    let out = area.out();
    let job = sample("heritrix-job");
    let args = package_args(&out, &job, &[]);
    let (o, log) = run(&area, &args, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&json(&o));
    let notes: Vec<&str> =
        r["leftovers"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(
        notes.iter().any(|n| n.contains(".pkg.BBBBBB.partial") && n.contains("removed")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains(".pkg.AAAAAA.partial") && n.contains("another run")),
        "{notes:?}"
    );
    assert!(live.is_dir() && other.is_dir() && file.is_file() && !dead.exists());
    assert_eq!(
        files_in(&outdir),
        vec![".pkg.AAAAAA.partial", ".pkg.DDDDDD.partial", ".pkg.x.CCCCCC.partial", "pkg"]
    );
    assert_confined(log.as_deref(), &[outdir.clone(), area.path("tmp")], &area.path("secret"));
    drop(fd);
}

/// Packages `input` with `--deterministic` into `out`; returns the OBJID.
fn deterministic_objid(area: &Area, input: &Path, out: &str) -> String {
    let out = area.path(out);
    let o = Package::new()
        .quiet()
        .deterministic()
        .command(&out, input)
        .env("TMPDIR", area.path("tmp"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    objid(&out)
}

#[test]
fn deterministic_identifiers_come_from_the_input() {
    let area = Area::new();
    let job = sample("heritrix-job");
    let (a, b, c) = (area.path("input/a/job"), area.path("input/b/job"), area.path("input/c/job"));
    for d in [&a, &b, &c] {
        copy_tree(&job, d);
    }
    // One byte of one log differs in c.
    let log = c.join("logs/progress-statistics.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&log, bytes).unwrap();
    let ida = deterministic_objid(&area, &a, "outdir/a");
    assert_eq!(ida, deterministic_objid(&area, &b, "outdir/b"), "same input, same OBJID");
    assert_ne!(ida, deterministic_objid(&area, &c, "outdir/c"), "one byte differs");
    // A renamed file is a different input too.
    std::fs::rename(b.join("seeds.txt"), b.join("seeds2.txt")).unwrap();
    assert_ne!(ida, deterministic_objid(&area, &b, "outdir/b2"), "one name differs");

    // PANDAS: instances of the same name in two titles, and a changed mirror file.
    let sample = sample("pandas/40123/20040517-1412");
    let (p1, p2, p3) = (
        area.path("input/p/1/20040517-1412"),
        area.path("input/p/2/20040517-1412"),
        area.path("input/q/1/20040517-1412"),
    );
    for d in [&p1, &p2, &p3] {
        copy_tree(&sample, d);
    }
    std::fs::write(p3.join("www.example.gov.au/misc/notes.txt"), b"changed").unwrap();
    let id1 = deterministic_objid(&area, &p1, "outdir/p1");
    assert_eq!(id1, deterministic_objid(&area, &p1, "outdir/p1-again"));
    assert_ne!(id1, deterministic_objid(&area, &p2, "outdir/p2"), "another title");
    assert_ne!(id1, deterministic_objid(&area, &p3, "outdir/p3"), "another file");
}

/// A file name that tries to add a WARC field: CR LF, a field, ESC.
const FORGED: &[u8] = b"x\r\nWARC-Type: evil\x1b";

/// Reads every WARC of a package with warcio: each record's header fields and, for
/// `application/warc-fields` blocks, their lines. Prints JSON.
const WARCIO_FIELDS: &str = r#"
import json, os, sys
from warcio.archiveiterator import ArchiveIterator
out = []
for d in ("content", "original", "viral"):
    p = os.path.join(sys.argv[1], d)
    if not os.path.isdir(p):
        continue
    for name in sorted(os.listdir(p)):
        with open(os.path.join(p, name), "rb") as f:
            for r in ArchiveIterator(f, check_digests=True):
                fields = [[k, v] for k, v in r.rec_headers.headers]
                lines = []
                if r.rec_headers.get_header("Content-Type") == "application/warc-fields":
                    body = r.content_stream().read().decode("utf-8", "replace")
                    lines = [l for l in body.split("\r\n") if l]
                out.append({"file": name, "fields": fields, "lines": lines})
print(json.dumps(out))
"#;

/// Asserts no record of the package has an injected field: one WARC-Type each, no field or
/// warc-fields line named after the forged one, no control character in any value or line.
fn assert_no_injected_field(pkg: &Path) -> serde_json::Value {
    let o = Command::new(oracle_python()).arg("-c").arg(WARCIO_FIELDS).arg(pkg).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let records: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!records.as_array().unwrap().is_empty());
    for r in records.as_array().unwrap() {
        let fields = r["fields"].as_array().unwrap();
        let types =
            fields.iter().filter(|f| f[0].as_str().unwrap().eq_ignore_ascii_case("WARC-Type"));
        assert_eq!(types.count(), 1, "{r}");
        for f in fields {
            let v = f[1].as_str().unwrap();
            assert!(!v.chars().any(|c| c.is_control()), "control character in {r}");
            assert_ne!(v, "evil", "{r}");
        }
        for l in r["lines"].as_array().unwrap() {
            let l = l.as_str().unwrap();
            assert!(
                !l.starts_with("WARC-Type") && !l.chars().any(|c| c.is_control()),
                "line {l:?} in {r}"
            );
            assert!(l.split_once(": ").is_some(), "line {l:?} in {r}");
        }
    }
    records
}

#[test]
fn forged_file_names_cannot_add_a_warc_field() {
    use std::os::unix::ffi::OsStrExt;
    let named = |prefix: &[u8], suffix: &[u8]| {
        std::ffi::OsString::from(std::ffi::OsStr::from_bytes(&[prefix, FORGED, suffix].concat()))
    };
    let area = Area::new();
    // PANDAS: a page, a file and a directory with the forged name.
    let inst = area.path("input/40123/20040517-1412");
    copy_tree(&sample("pandas/40123/20040517-1412"), &inst);
    let host = inst.join("www.example.gov.au");
    std::fs::write(host.join(named(b"page", b".html")), b"<a href=\"index.html\">home</a>")
        .unwrap();
    std::fs::create_dir_all(host.join(named(b"dir", b""))).unwrap();
    std::fs::write(host.join(named(b"dir", b"")).join("f.txt"), b"in a forged directory").unwrap();
    std::fs::write(inst.join(named(b"log", b".txt")), b"a log").unwrap();
    let out = area.path("outdir/pandas");
    let args = package_args(&out, &inst, &["--mode", "full"]);
    let (o, log) = run(&area, &args, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let records = assert_no_injected_field(&out);
    let escaped = "x%0D%0AWARC-Type: evil%1B";
    let text = records.to_string();
    assert!(
        text.contains(&format!("mirror-path: www.example.gov.au/page{escaped}.html")),
        "{text}"
    );
    assert!(text.contains(&format!("www.example.gov.au/dir{escaped}/f.txt")), "{text}");
    assert!(out.join(format!("logs/log{escaped}.txt")).is_file());
    assert_valid_package(&out);
    assert_confined(log.as_deref(), &[area.path("outdir"), area.path("tmp")], &area.path("secret"));

    // Heritrix 3: a WARC and a log with the forged name.
    let job = area.path("input/job");
    std::fs::create_dir_all(job.join("warcs")).unwrap();
    std::fs::create_dir_all(job.join("logs")).unwrap();
    std::fs::write(job.join("crawler-beans.cxml"), b"<beans/>").unwrap();
    std::fs::copy(
        corpus().join("warc/warcio-example.warc.gz"),
        job.join("warcs").join(named(b"w", b".warc.gz")),
    )
    .unwrap();
    std::fs::write(job.join("logs").join(named(b"crawl", b".log")), b"not a crawl log\n").unwrap();
    let out = area.path("outdir/heritrix");
    let args = package_args(&out, &job, &["--mode", "full"]);
    let (o, _) = run(&area, &args, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r = crate::util::only_package(&json(&o));
    assert_eq!(r["containers"][0]["path"], format!("content/w{escaped}.warc.gz"));
    assert!(out.join(format!("content/w{escaped}.warc.gz")).is_file());
    assert!(out.join(format!("logs/crawl{escaped}.log")).is_file());
    for e in walkdir::WalkDir::new(&out) {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.chars().any(|c| c.is_control()), "{name:?} in the package");
    }
    let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
    assert!(!mets.contains('\u{1b}') && !mets.contains("\r\nWARC-Type"));
    assert_valid_package(&out);
}

/// Address space a run is given where it might read without bound: the run aborts at the
/// limit instead of filling the machine's memory.
const ADDRESS_SPACE: u64 = 2 << 30;
/// A run refused at once that takes longer is blocked.
const HANG_LIMIT: Duration = Duration::from_secs(30);

/// `--metadata` naming `/dev/zero` or a FIFO: refused at once, naming the file and what it is
/// (before: `/dev/zero` was read until memory ran out, a FIFO was waited on for ever).
#[test]
fn metadata_that_is_a_device_or_a_fifo_is_refused_without_reading_it() {
    use crate::fuzz::child::{Outcome, launch_webaip_limited};
    let area = Area::new();
    let fifo = area.path("metadata.toml");
    mkfifo(&fifo);
    let source = sample("heritrix-job");
    for (metadata, why) in
        [(Path::new("/dev/zero"), "is a character device"), (fifo.as_path(), "is a FIFO")]
    {
        let args = Package::new()
            .quiet()
            .args(&["--metadata", metadata.to_str().unwrap()])
            .argv(&area.out(), &[&source]);
        let started = Instant::now();
        let run = launch_webaip_limited(&args, &area.path("tmp"), Some(ADDRESS_SPACE), HANG_LIMIT);
        assert_ne!(run.status, Outcome::TimedOut, "{metadata:?}: blocked");
        assert_eq!(run.status, Outcome::Exited(2), "{metadata:?}: {}", run.stderr);
        let said = format!("{}: {why}", metadata.display());
        assert!(run.stderr.contains(&said), "{metadata:?}: {}", run.stderr);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{metadata:?}: {:?}",
            started.elapsed()
        );
        assert!(!area.out().exists(), "{metadata:?}: no package");
    }
}
