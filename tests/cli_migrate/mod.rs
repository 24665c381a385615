//! The `webaip migrate` command as a user runs it: exit codes, files, reports.

use std::path::Path;
use std::process::Command;

use crate::util::{Package, corpus, files_in, webaip};

mod large;
mod memory;

fn arc(name: &str) -> String {
    corpus().join("arc").join(name).display().to_string()
}

#[test]
fn migrates_several_inputs_and_writes_a_json_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let report = dir.path().join("report.json");
    let o = webaip(&[
        "migrate",
        "--out",
        out.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        &arc("warcio-example.arc"),
        &arc("warcio-example.arc.gz"),
        &arc("nas-Upload3.ARC"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // X.arc and X.arc.gz would both become X.warc.gz: each keeps its full name instead.
    assert_eq!(
        files_in(&out),
        ["nas-Upload3.warc.gz", "warcio-example.arc.gz.warc.gz", "warcio-example.arc.warc.gz"]
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["summary"]["files"], 3);
    assert_eq!(json["summary"]["files_ok"], 3);
    assert_eq!(json["summary"]["payload_bytes_in"], json["summary"]["payload_bytes_out"]);
    assert_eq!(json["files"][2]["records_out"]["response"], 3);
    assert_eq!(json["files"][2]["anomaly_counts"]["no-filedesc"], 1);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("3 file(s): 3 ok, 0 failed"), "{text}");
}

#[test]
fn failures_set_the_exit_status_and_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let warc = corpus().join("warc/warcio-example.warc.gz");
    let o =
        webaip(&["migrate", "-q", "--out", dir.path().to_str().unwrap(), warc.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty(), "--quiet prints no report");
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an ARC file"));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn existing_outputs_are_kept_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let input = arc("warcio-example.arc");
    assert!(webaip(&["migrate", "-q", "--out", d, &input]).status.success());
    let o = webaip(&["migrate", "-q", "--out", d, &input]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    assert!(webaip(&["migrate", "-q", "--force", "--out", d, &input]).status.success());
    assert_eq!(files_in(dir.path()), ["warcio-example.warc.gz"], "no temporary file left");
}

#[test]
fn output_does_not_depend_on_parallelism_in_deterministic_mode() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let inputs = [arc("jwat-IAH-20080430204825-00000-blackbook.arc.gz"), arc("jwat-small_BNF.arc")];
    for (dir, jobs) in [(&a, "1"), (&b, "2")] {
        let mut args = vec![
            "migrate",
            "-q",
            "--deterministic",
            "-j",
            jobs,
            "--out",
            dir.path().to_str().unwrap(),
        ];
        args.extend(inputs.iter().map(String::as_str));
        assert!(webaip(&args).status.success());
    }
    for name in files_in(a.path()) {
        let x = std::fs::read(a.path().join(&name)).unwrap();
        let y = std::fs::read(b.path().join(&name)).unwrap();
        assert!(x == y, "{name} differs between -j 1 and -j 2");
    }
}

#[test]
fn bad_arguments_exit_with_2() {
    assert_eq!(webaip(&["migrate", "--level", "12", "x.arc"]).status.code(), Some(2));
    assert_eq!(webaip(&["migrate", "/nonexistent/x.arc"]).status.code(), Some(2));
}

#[test]
fn committed_samples_are_what_the_generator_writes_and_migrate_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = crate::util::repo();
    let status = Command::new("python3")
        .arg(repo.join("scripts/make_samples.py"))
        .current_dir(tmp.path())
        .output()
        .expect("python3 runs");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    // Every file the generator writes is committed, byte for byte.
    let generated = tmp.path().join("samples");
    let mut count = 0;
    for entry in walkdir::WalkDir::new(&generated).sort_by_file_name() {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(&generated).unwrap();
        let committed = std::fs::read(repo.join("samples").join(rel))
            .unwrap_or_else(|_| panic!("{} not committed", rel.display()));
        assert!(
            committed == std::fs::read(entry.path()).unwrap(),
            "{}: committed sample differs from scripts/make_samples.py output",
            rel.display()
        );
        count += 1;
    }
    assert_eq!(count, 54);
    let committed = repo.join("samples/heritrix-job/arcs");
    let names = files_in(&committed);
    assert_eq!(names.len(), 2);
    for name in &names {
        let m = crate::util::migrate(&committed.join(name));
        crate::util::check_with_warcio(&m);
        let severe: Vec<_> = m
            .report
            .anomalies
            .iter()
            .filter(|a| a.severity >= webaip::internals::AnomalySeverity::Warning)
            .collect();
        assert!(severe.is_empty(), "{name}: {severe:?}");
    }
}

/// A report that cannot be written whole (the disk is full) leaves the previous report as it
/// was, not an empty or short file. Needs a small tmpfs (root); skipped where none can be made.
#[test]
fn a_failed_report_write_leaves_the_old_report() {
    let tmp = tempfile::tempdir().unwrap();
    let small = tmp.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let Some(_guard) = crate::util::SmallDisk::mount(&small, 64) else {
        eprintln!("skipped: cannot mount a small tmpfs here");
        return;
    };
    let report = small.join("report.json");
    std::fs::write(&report, "{\"previous\": true}\n").unwrap();
    // Fill what is left.
    let mut filler = std::fs::File::create(small.join("filler")).unwrap();
    let chunk = vec![0u8; 4096];
    while std::io::Write::write_all(&mut filler, &chunk).is_ok() {}
    drop(filler);
    let out = tmp.path().join("out");
    let o = webaip(&[
        "migrate",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        &arc("warcio-example.arc"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write"));
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "{\"previous\": true}\n");
    let left: Vec<String> = std::fs::read_dir(&small)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
}

const FILEDESC_BAD_DATE: &[u8] = b"filedesc://t.arc 0.0.0.0 20069999999999 text/plain 77\n\
1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n\n";

const PAGE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 26\r\n\r\n<html><p>Hello</p></html>\n";

fn dated(url: &str, date: &str) -> Vec<u8> {
    let mut v = format!("{url} 192.0.2.10 {date} text/html {}\n", PAGE.len()).into_bytes();
    v.extend_from_slice(PAGE);
    v.push(b'\n');
    v
}

#[test]
fn a_dateless_arc_needs_capture_date_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("dateless.arc");
    let bytes = [
        FILEDESC_BAD_DATE,
        &dated("http://e.org/1", "20069999999999"),
        &dated("http://e.org/2", "-"),
    ]
    .concat();
    std::fs::write(&input, bytes).unwrap();
    let out = dir.path().join("out");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    let r = webaip(&["migrate", "--out", o, i]);
    assert_eq!(r.status.code(), Some(1));
    let said =
        format!("{}{}", String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    assert!(said.contains("--capture-date"), "{said}");
    assert!(files_in(&out).is_empty(), "nothing written: {:?}", files_in(&out));

    let r = webaip(&["migrate", "--out", o, "--capture-date", "2005-01-01T12:00:00Z", i]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("capture-date 3"), "{text}");
    let r = webaip(&["migrate", "--out", o, "--capture-date", "yesterday", i]);
    assert_eq!(r.status.code(), Some(2), "a bad date is a usage error");
}

/// The `mods:dateCaptured` values of a package's METS, in order.
fn date_captured(mets: &str) -> Vec<String> {
    mets.split("<mods:dateCaptured")
        .skip(1)
        .map(|s| s[s.find('>').unwrap() + 1..s.find('<').unwrap()].to_string())
        .collect()
}

#[test]
fn inferred_dates_do_not_widen_the_packages_capture_range() {
    let dir = tempfile::tempdir().unwrap();
    // The name's timestamp (2001) stands in for the filedesc's and the first capture's dates:
    // it must not become the start of the range.
    let input = dir.path().join("IAH-20010101000000-00000-h.arc");
    let bytes = [
        FILEDESC_BAD_DATE,
        &dated("http://e.org/1", "20069999999999"),
        &dated("http://e.org/2", "20060503101700"),
        &dated("http://e.org/3", "bad"),
        &dated("http://e.org/4", "20060504000000"),
    ]
    .concat();
    std::fs::write(&input, bytes).unwrap();
    let out = dir.path().join("pkg");
    let r = Package::new().quiet().run(&out, &input);
    assert!(
        r.status.code().is_some_and(|c| c <= 1),
        "{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
    let mets = walk(&out).into_iter().find(|p| p.ends_with("METS.xml")).expect("a METS");
    let mets = std::fs::read_to_string(mets).unwrap();
    assert_eq!(date_captured(&mets), ["2006-05-03T10:17:00Z", "2006-05-04T00:00:00Z"]);
    assert!(!mets.contains("<dc:date>2001"), "DC date not widened either");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// An ARC cut short while it is migrated: the run must not state the size and SHA-512 the file
/// had when opened, nor call the shorter copy conserved. The cut is made from the progress
/// callback, which the reader calls after each record (so after the first record and before
/// the rest is read): deterministic, no race with a thread of the test.
#[test]
fn an_arc_cut_short_while_migrated_fails_naming_both_sizes() {
    use webaip::MigrateOptions;
    use webaip::internals::{migrate_file, output_name};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("IAH-20240101000000-00000-cut.arc");
    let mut arc = b"filedesc://x.arc 0.0.0.0 20240101000000 text/plain 77\n1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n\n".to_vec();
    for n in 0..64 {
        let body = vec![b'a' + (n % 26) as u8; 64 << 10];
        arc.extend(
            format!("http://e.org/{n} 192.0.2.1 20240101000001 text/plain {}\n", body.len())
                .bytes(),
        );
        arc.extend(body);
        arc.push(b'\n');
    }
    std::fs::write(&input, &arc).unwrap();
    let output = dir.path().join(output_name(&input));
    let cut = std::sync::Once::new();
    let cut_short = |_| {
        cut.call_once(|| {
            let f = std::fs::OpenOptions::new().write(true).open(&input).unwrap();
            f.set_len(100_000).unwrap();
        })
    };
    let ids = webaip::internals::Ids::seeded("test");
    let opts = MigrateOptions::default();
    let report = migrate_file(&input, &output, &opts, &ids, &cut_short, &mut |_| {});
    assert!(cut.is_completed(), "the progress callback was never called");
    let error = report.error.as_deref().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "changed while being read ({} bytes when opened, 100000 bytes at the end",
            arc.len()
        )),
        "{report:?}"
    );
    assert!(report.output.is_none(), "no output claimed");
    assert!(!output.exists(), "no WARC left that looks complete");
    assert!(
        files_in(dir.path()).iter().all(|f| !f.contains(".warc")),
        "{:?}",
        files_in(dir.path())
    );
}

/// An empty input: `migrate` names it once (the report line adds it to an error that already
/// did).
#[test]
fn an_empty_input_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.arc");
    std::fs::write(&empty, b"").unwrap();
    let e = empty.to_str().unwrap();
    let o = webaip(&["migrate", "-q", "--out", dir.path().join("out").to_str().unwrap(), e]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("empty.arc").count(), 1, "names the path once: {err}");
    assert!(err.starts_with(&format!("webaip: {e}: ")), "{err}");
    // The text report too: the path on its status line, the error after it.
    let o = webaip(&["migrate", "--out", dir.path().join("out").to_str().unwrap(), e]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert_eq!(text.matches("empty.arc").count(), 1, "names the path once: {text}");
    assert!(text.starts_with(&format!("{e}: FAILED\n  error: ")), "{text}");
}
