//! Guard rails, through the CLI: what is not a package is refused by `audit`, `ingest` and
//! `export` with what it is and which command takes it; an output inside its input (or an
//! input inside its output) is refused, through a link too; a folder beside a harvest says
//! which path would work. Each refusal exits 2 and writes nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{Package, sample, webaip};

/// Every entry below `dir` (names and sizes), to show a refused run wrote nothing there.
fn tree(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut v: Vec<(PathBuf, u64)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .map(|e| (e.path().to_path_buf(), e.metadata().map_or(0, |m| m.len())))
        .collect();
    v.sort();
    v
}

/// The run exited 2 and its standard error holds every one of `said`.
fn refused(o: &Output, said: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}{}", String::from_utf8_lossy(&o.stdout));
    for s in said {
        assert!(err.contains(s), "{s:?} not in: {err}");
    }
    assert!(!err.contains("panicked") && !err.contains("os error"), "{err}");
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The Heritrix job sample copied to `dir` (a source the test may nest outputs in).
fn job_copy(dir: &Path) -> PathBuf {
    let from = sample("heritrix-job");
    for e in walkdir::WalkDir::new(&from) {
        let e = e.unwrap();
        let at = dir.join(e.path().strip_prefix(&from).unwrap());
        match e.file_type().is_dir() {
            true => std::fs::create_dir_all(&at).unwrap(),
            false => drop(std::fs::copy(e.path(), &at).unwrap()),
        }
    }
    dir.to_path_buf()
}

/// A PDF, a WARC, an ARC, a WACZ, a harvest, a folder without METS and nothing at all, each
/// given to audit, ingest and both exports: refused with what it is and the command that
/// takes it, exit 2, nothing written. The PDF's folder is not walked (no report at all).
#[test]
fn what_is_not_a_package_is_refused_for_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = tmp.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    let pdf = inputs.join("report.pdf");
    std::fs::write(&pdf, b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n").unwrap();
    let warc = inputs.join("crawl.warc.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"WARC/1.1\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n").unwrap();
    std::fs::write(&warc, gz.finish().unwrap()).unwrap();
    let arcs = sample("heritrix-job/arcs");
    let arc = std::fs::read_dir(&arcs).unwrap().next().unwrap().unwrap().path();
    let wacz = inputs.join("site.wacz");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&wacz).unwrap());
    zip.start_file("datapackage.json", zip::write::SimpleFileOptions::default()).unwrap();
    zip.write_all(b"{}").unwrap();
    zip.finish().unwrap();
    let empty = inputs.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let job = sample("heritrix-job");
    let missing = inputs.join("missing");
    let package = "not a package";
    let cases: [(&Path, &str, &str); 7] = [
        (&pdf, "is a PDF document", "to check a package give its folder"),
        (&warc, "is a WARC file", "webaip package"),
        (&arc, "is an ARC file", "webaip package"),
        (&wacz, "is a WACZ file", "webaip validate"),
        (&job, "is a Heritrix job", "webaip package"),
        (&empty, "is a folder without METS.xml", "to check a package give its folder"),
        (&missing, "is nothing (it does not exist)", package),
    ];
    let out = tmp.path().join("out");
    let before = tree(tmp.path());
    for (input, what, hint) in cases {
        let said = format!("{} {what}, {package}", input.display());
        let said = [said.as_str(), hint];
        let o = webaip(&["audit", "--json", arg(input)]);
        refused(&o, &said);
        assert!(!String::from_utf8_lossy(&o.stdout).contains("DAMAGED"), "not walked");
        refused(&webaip(&["ingest", "--out", arg(&out), arg(input)]), &said);
        let wacz_out = out.join("x.wacz");
        refused(&webaip(&["export", "wacz", arg(input), "-o", arg(&wacz_out)]), &said);
        refused(&webaip(&["export", "eark", arg(input), "-o", arg(&out)]), &said);
    }
    assert_eq!(tree(tmp.path()), before, "nothing written");
}

/// The forms that are packages still are: a package folder, its METS.xml, a package made
/// with `--out` beside its source; a folder of packages names one of them.
#[test]
fn packages_and_outputs_beside_their_source_are_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_copy(&tmp.path().join("job"));
    let pkg = tmp.path().join("job-package");
    Package::new().deterministic().succeeds(&pkg, &job);
    for given in [pkg.clone(), pkg.join("METS.xml")] {
        let o = webaip(&["audit", arg(&given)]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&o.stderr));
        assert!(text.contains("INTACT"), "{text}");
    }
    let o = webaip(&["audit", arg(tmp.path())]);
    refused(&o, &[&format!("did you mean {} (a package)?", pkg.display())]);
}

/// `--out` inside the source, the source inside `--out`, and `--out` reached through a link
/// into the source: refused by package, ingest, both exports, undedup, unmigrate and batch,
/// naming both paths, exit 2, the source and its folder unchanged.
#[test]
fn outputs_nested_with_their_source_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_copy(&tmp.path().join("job"));
    let pkg = tmp.path().join("pkg");
    Package::new().deterministic().succeeds(&pkg, &job);
    std::os::unix::fs::symlink(&job, tmp.path().join("link")).unwrap();
    let before = tree(tmp.path());
    let inside = |out: &Path, input: &Path| {
        format!("the output {} is inside the input {}", out.display(), input.display())
    };
    let around = |input: &Path, out: &Path| {
        format!("the input {} is inside the output {}", input.display(), out.display())
    };
    let in_job = job.join("pkg");
    refused(&Package::new().run(&in_job, &job), &[&inside(&in_job, &job)]);
    refused(&Package::new().run(tmp.path(), &job), &[&around(&job, tmp.path())]);
    let linked = tmp.path().join("link/pkg");
    refused(&Package::new().run(&linked, &job), &[&inside(&linked, &job)]);
    let aips = pkg.join("aips");
    refused(&webaip(&["ingest", "--out", arg(&aips), arg(&pkg)]), &[&inside(&aips, &pkg)]);
    let wacz = pkg.join("x.wacz");
    refused(&webaip(&["export", "wacz", arg(&pkg), "-o", arg(&wacz)]), &[&inside(&wacz, &pkg)]);
    let eark = pkg.join("x.zip");
    refused(&webaip(&["export", "eark", arg(&pkg), "-o", arg(&eark)]), &[&inside(&eark, &pkg)]);
    let full = pkg.join("full");
    let undedup = ["undedup", arg(&pkg), "--with", arg(&pkg), "-o", arg(&full)];
    refused(&webaip(&undedup), &["is inside the input", &pkg.display().to_string()]);
    let arcs = pkg.join("arcs");
    refused(&webaip(&["unmigrate", arg(&pkg), "-o", arg(&arcs)]), &[&inside(&arcs, &pkg)]);
    assert_eq!(tree(tmp.path()), before, "nothing written");
    let manifest = tmp.path().join("m.csv");
    std::fs::write(&manifest, format!("{}\n", job.display())).unwrap();
    let before = tree(tmp.path());
    let in_job = job.join("batch");
    let batch = ["batch", "run", "--no-virus-check", "--out", arg(&in_job), arg(&manifest)];
    refused(&webaip(&batch), &[&inside(&in_job, &job)]);
    assert_eq!(tree(tmp.path()), before, "nothing written");
}

/// A file output (an index, a digest table, a migration report, a package's index, a got
/// record) that is an input, or lies inside an input package, is refused before anything is
/// written: the input is unchanged.
#[test]
fn file_outputs_never_land_on_or_in_their_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_copy(&tmp.path().join("job"));
    let pkg = tmp.path().join("pkg");
    Package::new().deterministic().succeeds(&pkg, &job);
    let arc = std::fs::read_dir(job.join("arcs")).unwrap().next().unwrap().unwrap().path();
    let before = tree(tmp.path());
    let mets = pkg.join("METS.xml");
    let inside = |out: &Path, input: &Path| {
        format!("the output {} is inside the input {}", out.display(), input.display())
    };
    refused(&webaip(&["dedup-table", arg(&pkg), "-o", arg(&mets)]), &[&inside(&mets, &pkg)]);
    let cdxj = pkg.join("content/x.cdxj");
    refused(&webaip(&["index", arg(&pkg), "-o", arg(&cdxj)]), &[&inside(&cdxj, &pkg)]);
    let migrated = tmp.path().join("migrated");
    let migrate = ["migrate", arg(&arc), "-o", arg(&migrated), "--report", arg(&arc)];
    refused(&webaip(&migrate), &[&inside(&arc, &arc)]);
    let fresh = tmp.path().join("fresh");
    let index_onto = ["package", arg(&arc), "-o", arg(&fresh), "--no-virus-check", "--index"];
    let o = webaip(&[&index_onto[..], &[arg(&arc)]].concat());
    refused(&o, &[&inside(&arc, &arc)]);
    let got = pkg.join("content/got");
    let get = ["get", "http://example.com/", "--package", arg(&pkg)];
    refused(&webaip(&[&get[..], &["-o", arg(&got)]].concat()), &[&inside(&got, &pkg)]);
    assert_eq!(tree(tmp.path()), before, "nothing written");
}

/// Outputs made inside a folder that also holds the input (`-o .` beside the package) are
/// taken: what they make lands beside the input. A package named through a link audits
/// INTACT.
#[test]
fn an_output_folder_holding_the_input_is_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let job = job_copy(&tmp.path().join("job"));
    let pkg = tmp.path().join("pkg");
    Package::new().deterministic().succeeds(&pkg, &job);
    let pkg_before = tree(&pkg);
    let unmigrate = webaip(&["unmigrate", arg(&pkg), "-o", arg(tmp.path()), "-q"]);
    assert_eq!(unmigrate.status.code(), Some(0), "{}", String::from_utf8_lossy(&unmigrate.stderr));
    let eark = webaip(&["export", "eark", arg(&pkg), "-o", arg(tmp.path()), "-q"]);
    assert_eq!(eark.status.code(), Some(0), "{}", String::from_utf8_lossy(&eark.stderr));
    assert_eq!(tree(&pkg), pkg_before, "the package is unchanged");
    std::os::unix::fs::symlink(&pkg, tmp.path().join("link")).unwrap();
    let o = webaip(&["audit", arg(&tmp.path().join("link"))]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("INTACT"), "{text}");
}

/// A folder holding a harvest, or one inside a harvest, names the harvest the user may have
/// meant, for `package` and `pages` alike.
#[test]
fn a_folder_beside_a_harvest_says_which_path_would_work() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let samples = sample("heritrix-job").parent().unwrap().to_path_buf();
    let host = sample("mirror/www.example.net");
    let mirror = std::fs::canonicalize(sample("mirror")).unwrap();
    let cases = [
        (
            samples.clone(),
            format!("did you mean {} (a Heritrix job)?", sample("heritrix-job").display()),
        ),
        (host, format!("did you mean {} (a wget or HTTrack mirror)?", mirror.display())),
    ];
    for (given, said) in cases {
        refused(&Package::new().run(&out, &given), &[&said]);
        refused(&webaip(&["pages", arg(&given)]), &[&said]);
    }
    assert!(!out.exists());
}
