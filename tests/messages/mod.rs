//! What the CLI says when it refuses or fails (issue 24, item 11): a path is named once, an
//! I/O error is said in words (no "(os error N)", no temporary file's "at path"), and a folder
//! of WARC files is taken as the help says.

use crate::util::{Package, corpus, webaip};

fn stderr(args: &[&str]) -> (Option<i32>, String) {
    let o = webaip(args);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A FIFO named where a file is expected is refused by every command, naming it once.
#[test]
fn a_fifo_is_refused_naming_its_path_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.warc");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let f = fifo.to_str().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    for args in [
        vec!["validate", f],
        vec!["pages", f],
        vec!["audit", f],
        vec!["package", "--quiet", "--no-virus-check", "--out", o, f],
    ] {
        let (code, err) = stderr(&args);
        assert!(matches!(code, Some(1) | Some(2)), "{args:?}: {code:?} {err}");
        assert_eq!(err.matches(f).count(), 1, "{args:?} names the path once: {err}");
        assert!(err.contains("FIFO"), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
}

/// A full disk is said in words, naming the output, and leaves no package behind.
#[test]
fn a_full_disk_is_said_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let Some(_unmount) = crate::util::SmallDisk::mount(&small, 64) else {
        eprintln!(
            "a_full_disk_is_said_in_words: no tmpfs can be mounted here (not root?): skipped"
        );
        return;
    };
    let arcs = corpus().join("arc");
    let out = small.join("p");
    let (code, err) = stderr(&[
        "package",
        "--quiet",
        "--no-virus-check",
        "--out",
        out.to_str().unwrap(),
        arcs.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no space left on device"), "{err}");
    assert!(!err.contains("os error") && !err.contains("at path"), "{err}");
    assert!(!out.exists(), "a package was left on a full disk");
}

/// A folder holding only WARC files (no crawler configuration) is packaged, as the help says.
#[test]
fn a_folder_of_warc_files_is_packaged() {
    let dir = tempfile::tempdir().unwrap();
    let warcs = dir.path().join("warcs");
    std::fs::create_dir(&warcs).unwrap();
    for name in ["warcio-example.warc.gz", "jwarc-cc.warc.gz"] {
        let from = corpus().join("warc").join(name);
        if from.exists() {
            std::fs::copy(&from, warcs.join(name)).unwrap();
        }
    }
    assert!(std::fs::read_dir(&warcs).unwrap().count() > 0, "no corpus WARC found");
    let out = dir.path().join("p");
    let o = Package::new().quiet().json().run(&out, &warcs);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let a = webaip(&["audit", "--deep", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(text.contains("INTACT"), "{text}");
}

/// What is not a harvest is said once, the same way by `package` and by `pages`: the path
/// first, then what is wrong, then what would be accepted.
#[test]
fn what_is_not_a_harvest_is_said_once_by_package_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    let job = dir.path().join("job");
    std::fs::create_dir(&empty).unwrap();
    // A Heritrix 3 job whose launch holds no ARC or WARC file.
    std::fs::create_dir_all(job.join("20240101000000/warcs")).unwrap();
    std::fs::write(job.join("crawler-beans.cxml"), "<beans/>").unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not an archive").unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let (e, j, n) = (empty.to_str().unwrap(), job.to_str().unwrap(), notes.to_str().unwrap());
    let cases: [(&[&str], &str, &str); 3] = [
        (&[e], e, "no input shape recognised"),
        (&[j], j, "the job holds no ARC or WARC file"),
        (&[n], n, "not an ARC or WARC file (by its name)"),
    ];
    for (inputs, named, why) in cases {
        let package =
            [&["package", "--quiet", "--no-virus-check", "--out", o][..], inputs].concat();
        let pages = [&["pages"][..], inputs].concat();
        for args in [package, pages] {
            let (code, err) = stderr(&args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert_eq!(err.matches(named).count(), 1, "{args:?} names the path once: {err}");
            assert_eq!(err.matches(why).count(), 1, "{args:?}: {err}");
            let path_then_why = err.find(named).unwrap() < err.find(why).unwrap();
            assert!(path_then_why, "{args:?}: {err}");
            if args[0] == "pages" {
                assert!(err.contains("neither a package"), "{err}");
            }
        }
    }
    let (code, err) = stderr(&["package", "--quiet", "--no-virus-check", "--out", o, e, n]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("give one job directory, or ARC/WARC files, not both"), "{err}");
}
