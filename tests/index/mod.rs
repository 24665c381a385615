//! `webaip index` against cdxj-indexer (the indexer pywb's tools use) on every corpus WARC and
//! on the WARCs `webaip migrate` makes of the corpus ARCs; CDX 11 against `cdxj-indexer -11`;
//! ZipNum read back by pywb's own ZipNum reader; damaged input.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{corpus, corpus_arcs, migrate, repo, webaip};

mod heads;
mod post;

/// The corpus WARC that holds several records in one gzip member (gowarc writes whole files
/// so while they are open): no offset reaches a record alone, so webaip refuses to index it
/// (cdxj-indexer writes a line of negative length, then fails).
const SHARED_MEMBERS: &str = "gowarc-good-warc11.warc.gz.open";

fn corpus_warcs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus().join("warc"))
        .expect("corpus/warc readable")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| !p.ends_with(SHARED_MEMBERS))
        .collect();
    v.sort();
    v
}

/// Lines of a command's standard output, which must have succeeded.
fn lines_of(out: std::process::Output, what: &str) -> Vec<String> {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8").lines().map(str::to_string).collect()
}

/// cdxj-indexer's lines for `args`, sorted bytewise, each once (what its `--sort` does).
fn cdxj_indexer(args: &[&Path], flags: &[&str]) -> Vec<String> {
    let out = Command::new(repo().join(".venv/bin/cdxj-indexer"))
        .args(flags)
        .args(args)
        .output()
        .expect("cdxj-indexer runs (scripts/setup-test-env.sh)");
    let mut lines = lines_of(out, "cdxj-indexer");
    lines.sort();
    lines.dedup();
    lines
}

fn webaip_index(args: &[&Path], flags: &[&str]) -> Vec<String> {
    let mut argv: Vec<String> = vec!["index".into(), "-q".into()];
    argv.extend(flags.iter().map(|s| s.to_string()));
    argv.extend(args.iter().map(|p| p.display().to_string()));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    lines_of(webaip(&argv), "webaip index")
}

/// Line for line equal, told by the first difference.
fn assert_same(ours: &[String], theirs: &[String], what: &str) {
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(a, b, "{what}: line {i} differs");
    }
    assert_eq!(ours.len(), theirs.len(), "{what}: line counts differ");
}

/// Every corpus WARC (gzip per record and plain) indexes as cdxj-indexer indexes it, and its
/// lines come out sorted bytewise.
#[test]
fn every_corpus_warc_indexes_as_cdxj_indexer_does() {
    let mut lines = 0;
    for warc in corpus_warcs() {
        let ours = webaip_index(&[&warc], &[]);
        let mut sorted = ours.clone();
        sorted.sort();
        assert_eq!(ours, sorted, "{}: sorted bytewise", warc.display());
        assert_same(&ours, &cdxj_indexer(&[&warc], &[]), &warc.display().to_string());
        lines += ours.len();
    }
    assert!(lines > 600, "the corpus gives {lines} lines");
}

/// Several files in parallel give the one sorted index of them all, equal to cdxj-indexer's.
#[test]
fn several_files_in_parallel_give_one_sorted_index() {
    let warcs = corpus_warcs();
    let args: Vec<&Path> = warcs.iter().map(PathBuf::as_path).collect();
    let ours = webaip_index(&args, &["-j", "3"]);
    assert_same(&ours, &cdxj_indexer(&args, &[]), "all corpus WARCs");
}

/// The WARCs `webaip migrate` makes of every corpus ARC index as cdxj-indexer indexes them.
#[test]
fn migrated_corpus_arcs_index_as_cdxj_indexer_does() {
    let mut files = 0;
    for arc in corpus_arcs() {
        let m = migrate(&arc);
        let ours = webaip_index(&[&m.output], &[]);
        assert_same(&ours, &cdxj_indexer(&[&m.output], &[]), &arc.display().to_string());
        files += 1;
    }
    assert!(files >= 20);
}

/// CDX 11 equals `cdxj-indexer -11`: its header, then its lines sorted.
#[test]
fn cdx11_equals_cdxj_indexer_11() {
    for name in ["jwat-IAH-20080430204825-00000-blackbook.warc.gz", "pywb-dupes.warc.gz"] {
        let warc = corpus().join("warc").join(name);
        let ours = webaip_index(&[&warc], &["--format", "cdx"]);
        let theirs = cdxj_indexer(&[&warc], &["-11"]);
        assert_eq!(ours[0], " CDX N b a m s k r M S V g");
        assert_same(&ours, &theirs, name);
    }
}

/// Record ids are added as the last field only when asked.
#[test]
fn record_ids_are_the_last_field_when_asked() {
    let warc = corpus().join("warc/warcio-example.warc.gz");
    let plain = webaip_index(&[&warc], &[]);
    let with = webaip_index(&[&warc], &["--record-ids"]);
    assert_eq!(plain.len(), with.len());
    for (p, w) in plain.iter().zip(&with) {
        let stem = p.strip_suffix('}').expect("a CDXJ line");
        let rest = w.strip_prefix(stem).expect("the same line first");
        assert!(rest.starts_with(", \"recordId\": \"<urn:uuid:"), "{rest}");
        assert!(!p.contains("recordId"));
    }
}

/// pywb's own ZipNum reader finds every line of the index by its key, across blocks.
#[test]
fn pywb_reads_the_zipnum_index() {
    let dir = tempfile::tempdir().unwrap();
    let warc = corpus().join("warc/jwat-IAH-20080430204825-00000-blackbook.warc.gz");
    let base = dir.path().join("all");
    let o = webaip(&[
        "index",
        "-q",
        "--format",
        "zipnum",
        "--zipnum-lines",
        "50",
        "-o",
        base.to_str().unwrap(),
        warc.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cdxj = webaip_index(&[&warc], &[]);
    let idx = std::fs::read_to_string(dir.path().join("all.idx")).unwrap();
    assert_eq!(idx.lines().count(), cdxj.len().div_ceil(50), "one summary line per block");
    assert_eq!(std::fs::read_to_string(dir.path().join("all.loc")).unwrap(), "all\tall.cdx.gz\n");
    // A key of each block's start, middle and end, looked up through the summary.
    let mut keys: Vec<String> = (0..cdxj.len())
        .step_by(17)
        .map(|i| cdxj[i].split(' ').next().unwrap().to_string())
        .collect();
    keys.dedup();
    let script = r#"
import sys
from pywb.warcserver.index.zipnum import ZipNumIndexSource
from pywb.warcserver.index.query import CDXQuery
src = ZipNumIndexSource(sys.argv[1], None)
src.loc_resolver.load_loc()
for key in sys.argv[2:]:
    q = CDXQuery({'url': 'http://x/'})
    q.set_key(key.encode(), key.encode() + b' ~')
    for cdx in src._do_load_cdx(src.summary, q):
        t = cdx.to_text()
        sys.stdout.write(t.decode() if isinstance(t, bytes) else t)
"#;
    let out = Command::new(repo().join(".venv/bin/python"))
        .arg("-c")
        .arg(script)
        .arg(dir.path().join("all.idx"))
        .args(&keys)
        .output()
        .unwrap();
    let got = lines_of(out, "pywb zipnum");
    let want: Vec<String> = keys
        .iter()
        .flat_map(|k| cdxj.iter().filter(move |l| l.split(' ').next() == Some(k.as_str())))
        .cloned()
        .collect();
    assert!(want.len() > 30);
    assert_eq!(got, want);
}

/// A truncated WARC is an error naming the file and the record's offset, and `-o` leaves no
/// file; a WARC whose gzip members hold several records is refused, naming the member.
#[test]
fn damaged_input_names_file_and_offset_and_leaves_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let src = corpus().join("warc/warcio-example.warc.gz");
    let bytes = std::fs::read(&src).unwrap();
    let cut = dir.path().join("cut.warc.gz");
    // Inside the second record's member (the response at 784, see the CDXJ tests).
    std::fs::write(&cut, &bytes[..1500]).unwrap();
    let out = dir.path().join("out.cdxj");
    let o = webaip(&["index", "-q", "-o", out.to_str().unwrap(), cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.warc.gz: record at offset 784"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == 1, "only the input is left");

    let shared = corpus().join("warc").join(SHARED_MEMBERS);
    let o = webaip(&["index", "-q", "-o", out.to_str().unwrap(), shared.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("record at offset 0 shares its gzip member"), "{err}");
    assert!(!out.exists());
    let theirs = Command::new(repo().join(".venv/bin/cdxj-indexer")).arg(&shared).output().unwrap();
    assert!(!theirs.status.success(), "cdxj-indexer fails on it too");
}

/// `package --index` writes, while the records are written, the index `webaip index` makes
/// of the finished package, line for line: for copied WARCs (gzip and plain), migrated ARCs
/// (the Heritrix sample) and the capture pipeline (NEDLIB, a wget mirror).
#[test]
fn package_index_equals_the_index_of_the_written_package() {
    let dir = tempfile::tempdir().unwrap();
    let warcs = corpus().join("warc");
    let sources: Vec<(&str, Vec<PathBuf>)> = vec![
        (
            "warcs",
            vec![
                warcs.join("jwat-IAH-20080430204825-00000-blackbook.warc.gz"),
                warcs.join("nas-NAS-20100909163324-00000-mette.kb.dk.warc"),
                warcs.join("pywb-dupes.warc.gz"),
            ],
        ),
        ("heritrix", vec![crate::util::sample("heritrix-job")]),
        ("nedlib", vec![crate::util::sample("nedlib")]),
        ("mirror", vec![crate::util::sample("mirror")]),
    ];
    for (name, srcs) in sources {
        let out = dir.path().join(name);
        let index = dir.path().join(format!("{name}.cdxj"));
        let srcs: Vec<&Path> = srcs.iter().map(PathBuf::as_path).collect();
        let o = crate::util::Package::new()
            .quiet()
            .args(&["--index", index.to_str().unwrap()])
            .run_all(&out, &srcs);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let written = std::fs::read_to_string(&index).unwrap();
        let written: Vec<String> = written.lines().map(str::to_string).collect();
        let read = webaip_index(&[&out], &[]);
        assert!(!read.is_empty(), "{name}: the package has indexed records");
        assert!(read.iter().all(|l| l.contains("\"filename\": \"content/")), "{name}");
        assert_same(&written, &read, name);
    }
}

/// A package that fails leaves no index file (here: its folder exists, without `--force`).
#[test]
fn a_failed_package_leaves_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("p.cdxj");
    let pkg = dir.path().join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("METS.xml"), "not ours").unwrap();
    let o = crate::util::Package::new()
        .quiet()
        .args(&["--index", index.to_str().unwrap()])
        .run(&pkg, &corpus().join("warc/pywb-dupes.warc.gz"));
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!index.exists(), "no index after a failed run");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing beside the package");
}

/// `index PKG` of a package whose container is a link to a file outside, a FIFO, or absent
/// (its manifest lists it): the run fails naming the container (no index that silently lacks
/// it), in time (the FIFO is not waited on), and writes no index file.
#[test]
fn a_linked_fifo_or_missing_container_fails_the_index() {
    use crate::fuzz::child::{Outcome, launch_webaip_limited};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pkg = dir.join("pkg");
    let src = corpus().join("warc/pywb-dupes.warc.gz");
    let o = crate::util::Package::new().quiet().run(&pkg, &src);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let name = crate::util::files_in(&pkg.join("content")).into_iter().next().unwrap();
    let outside = dir.join("outside.warc.gz");
    std::fs::copy(pkg.join("content").join(&name), &outside).unwrap();
    let cases =
        [("link", "a symbolic link"), ("fifo", "is a FIFO"), ("missing", "it does not exist")];
    for (case, why) in cases {
        let variant = dir.join(case);
        crate::util::copy_tree(&pkg, &variant);
        let container = variant.join("content").join(&name);
        std::fs::remove_file(&container).unwrap();
        match case {
            "link" => std::os::unix::fs::symlink(&outside, &container).unwrap(),
            "fifo" => {
                rustix::fs::mkfifoat(rustix::fs::CWD, &container, rustix::fs::Mode::from(0o600))
                    .unwrap()
            }
            _ => {}
        }
        let index = dir.join(format!("{case}.cdxj"));
        let args = ["index", "-q", "-o", index.to_str().unwrap(), variant.to_str().unwrap()];
        let run = launch_webaip_limited(&args, dir, None, std::time::Duration::from_secs(30));
        assert_eq!(run.status, Outcome::Exited(2), "{case}: {}", run.stderr);
        assert!(run.stderr.contains(&format!("content/{name}")), "{case}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{case}: {}", run.stderr);
        assert!(!index.exists(), "{case}: no index written");
    }
}
