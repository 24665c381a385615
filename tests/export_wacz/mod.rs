//! `webaip export wacz`: every sample package and corpus WARCs packaged, exported, and read
//! back without webaip (`check_wacz.py`: zipfile, hashlib, cdxj-indexer) and by py-wacz's
//! `wacz validate`; a damaged container is refused, leaving no WACZ.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Package, corpus, oracle_python, package, repo, sample, wacz_validate, webaip};

/// `webaip export wacz PKG -o WACZ --json EXTRA`: its exit code and output.
fn export(pkg: &Path, wacz: &Path, extra: &[&str]) -> std::process::Output {
    let mut argv = vec!["export", "wacz", pkg.to_str().unwrap(), "-o", wacz.to_str().unwrap()];
    argv.push("--json");
    argv.extend_from_slice(extra);
    webaip(&argv)
}

/// What `check_wacz.py` finds in `wacz`, exported from `pkg`.
fn check(wacz: &Path, pkg: &Path) -> serde_json::Value {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/export_wacz/check_wacz.py"))
        .args([wacz, pkg])
        .output()
        .expect("the reader runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("its JSON")
}

/// The sample inputs and corpus WARCs, each with the options it is packaged with.
fn inputs() -> Vec<(PathBuf, Vec<String>)> {
    let metadata = sample("heritrix-job.metadata.toml").display().to_string();
    vec![
        (sample("heritrix-job"), vec!["--metadata".into(), metadata]),
        (sample("pandas/40123/20040517-1412"), vec![]),
        (sample("mirror"), vec![]),
        (sample("nedlib"), vec![]),
        (sample("kulturarw3"), vec![]),
        (corpus().join("warc/pywb-example-wget-1-14.warc.gz"), vec![]),
        (corpus().join("warc/warcio-example.warc.gz"), vec![]),
    ]
}

/// Every sample package exports to a WACZ whose members are stored and listed with their
/// digests, whose archive is the package's containers byte for byte, whose index is
/// cdxj-indexer's, whose pages are captures of it; py-wacz accepts each. The curator's
/// described webpages come first.
#[test]
fn every_sample_package_exports_a_wacz_others_read() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (input, extra)) in inputs().into_iter().enumerate() {
        let pkg = dir.path().join(format!("p{i}"));
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        package(Package::new().deterministic().args(&extra), &pkg, &[&input]).succeeded();
        let wacz = dir.path().join(format!("p{i}.wacz"));
        let o = export(&pkg, &wacz, &[]);
        let what = input.display();
        assert_eq!(o.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let found = check(&wacz, &pkg);
        assert_eq!(found["problems"], serde_json::json!([]), "{what}");
        assert_eq!(found["index_lines"], r["index_lines"], "{what}");
        assert_eq!(
            r["pages"]["pages"].as_u64(),
            Some(found["pages"].as_array().unwrap().len() as u64)
        );
        let containers = std::fs::read_dir(pkg.join("content")).unwrap().count();
        assert_eq!(r["verified"], containers as u64, "{what}: each checked against the METS");
        // Every way a content container is written (copied WARC, migrated ARC, captures)
        // states its SHA-256 in the METS: the digest the datapackage gives, checked in its read.
        assert_eq!(r["verified_sha256"], containers as u64, "{what}: by the SHA-256 it states");
        let (ok, said) = wacz_validate(&wacz);
        assert!(ok, "{what}: wacz validate: {said}");
        // And webaip's own deep check (every index line re-derived from the WARCs).
        let o = webaip(&["validate", wacz.to_str().unwrap()]);
        let said = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{what}: webaip validate: {said}");
        assert!(said.contains("VALID (0 errors, 0 warnings"), "{what}: {said}");
        same_pages_as_the_listing(&wacz, &pkg);
        // The package's logs stay in the package, each named.
        let left: Vec<&str> =
            r["left_out"].as_array().unwrap().iter().map(|l| l["file"].as_str().unwrap()).collect();
        assert!(left.iter().all(|f| !f.starts_with("content/")), "{what}: {left:?}");
        if i == 0 {
            // The sample job's curator describes two webpages: listed first, in METS order.
            assert_eq!(r["pages"]["described"], 2);
            let urls: Vec<&str> = found["pages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["url"].as_str().unwrap())
                .collect();
            assert_eq!(
                urls[..2],
                [
                    "http://www.example.org/about.html",
                    "http://www.example.org/events/spring%20fair.html"
                ]
            );
            assert!(left.contains(&"logs/crawl.log"));
        }
        if i == 1 {
            // PANDAS: the harvested bytes of rewritten pages stay out, said so.
            assert!(left.iter().any(|f| f.starts_with("original/")), "{left:?}");
        }
    }
}

/// A container whose bytes are not those its METS states is not exported (the error names it
/// and both digests: SHA-256, or SHA-512 for a METS that states no SHA-256, as packages made
/// before did) and no WACZ is left, not even a partial one; with `--no-verify` the
/// bytes go as they are where they can still be indexed (a changed gzip MTIME), and a record
/// that cannot be read is still refused, naming its offset.
#[test]
fn a_damaged_container_is_not_exported() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("p");
    package(Package::new().deterministic(), &pkg, &[&sample("nedlib")]).succeeded();
    let container = std::fs::read_dir(pkg.join("content")).unwrap().next().unwrap().unwrap().path();
    let original = std::fs::read(&container).unwrap();
    let mut bytes = original.clone();
    bytes[4] ^= 0x20; // the first member's MTIME: nothing a reader needs
    std::fs::write(&container, &bytes).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let wacz = out.join("x.wacz");
    let o = export(&pkg, &wacz, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let name = container.file_name().unwrap().to_string_lossy();
    assert!(err.contains(&*name) && err.contains("the METS states"), "{err}");
    assert!(err.contains("SHA-256"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "nothing left in the folder");
    // A METS stating no SHA-256 (its algorithm renamed): the container's SHA-512 is checked.
    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    let sha256 = "<premis:messageDigestAlgorithm>SHA-256<";
    assert!(text.contains(sha256), "the METS states the container's SHA-256");
    std::fs::write(&mets, text.replace(sha256, "<premis:messageDigestAlgorithm>MD5<")).unwrap();
    let o = export(&pkg, &wacz, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&*name) && err.contains("SHA-512"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "nothing left in the folder");
    let o = export(&pkg, &wacz, &["--no-verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["verified"], 0);
    let mut bytes = original;
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(&container, &bytes).unwrap();
    std::fs::remove_file(&wacz).unwrap();
    let o = export(&pkg, &wacz, &["--no-verify"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("record at offset"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "nothing left in the folder");
}

/// A link where the METS names a container is refused, as every package file is.
#[test]
fn a_container_that_is_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("p");
    package(Package::new().deterministic(), &pkg, &[&sample("nedlib")]).succeeded();
    let container = std::fs::read_dir(pkg.join("content")).unwrap().next().unwrap().unwrap().path();
    let moved = dir.path().join("elsewhere.warc.gz");
    std::fs::rename(&container, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &container).unwrap();
    let o = export(&pkg, &dir.path().join("x.wacz"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("x.wacz").exists());
    // A FIFO in its place is refused too, at once (a reader that opened it would block).
    std::fs::remove_file(&container).unwrap();
    rustix::fs::mkfifoat(rustix::fs::CWD, &container, rustix::fs::Mode::from(0o600)).unwrap();
    let o = export(&pkg, &dir.path().join("x.wacz"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains(&*container.file_name().unwrap().to_string_lossy())
    );
}

/// The WACZ is never written into the package (over its METS, a container, or beside them).
#[test]
fn the_output_never_goes_into_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("p");
    package(Package::new().deterministic(), &pkg, &[&sample("nedlib")]).succeeded();
    let mets = std::fs::read(pkg.join("METS.xml")).unwrap();
    for out in [pkg.join("METS.xml"), pkg.join("x.wacz"), pkg.join("content/x.wacz")] {
        let o = export(&pkg, &out, &[]);
        assert_eq!(o.status.code(), Some(2), "{}", out.display());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("is inside the input {}", pkg.display())), "{err}");
    }
    assert_eq!(std::fs::read(pkg.join("METS.xml")).unwrap(), mets);
    assert_eq!(crate::util::files_in(&pkg), ["METS.xml", "content", "logs", "manifest-sha512.txt"]);
}

/// pywb imports the exported WACZ (`wb-manager add --unpack-wacz`) and replays every capture
/// of its index as it replays them from the package through `webaip index`; a WACZ with one
/// `index.cdxj` is not imported (pywb looks for `.cdx`/`.cdx.gz` indexes only), which is why
/// the compressed index is the default.
#[test]
fn pywb_imports_the_wacz_and_replays_every_capture() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("p");
    let metadata = sample("heritrix-job.metadata.toml");
    package(
        Package::new().deterministic().args(&["--metadata", metadata.to_str().unwrap()]),
        &pkg,
        &[&sample("heritrix-job")],
    )
    .succeeded();
    let wacz = dir.path().join("site.wacz");
    assert_eq!(export(&pkg, &wacz, &[]).status.code(), Some(0));
    let manager = |args: &[&str]| {
        let o = Command::new(repo().join(".venv/bin/wb-manager"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("wb-manager runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    manager(&["init", "c"]);
    manager(&["add", "--unpack-wacz", "c", wacz.to_str().unwrap()]);
    let coll = dir.path().join("collections/c");
    let own = dir.path().join("own.cdxj");
    let o = webaip(&["index", "-q", pkg.to_str().unwrap(), "-o", own.to_str().unwrap()]);
    assert!(o.status.success());
    let captures: Vec<(String, String)> = std::fs::read_to_string(&own)
        .unwrap()
        .lines()
        .map(crate::util::CdxjLine::parse)
        .filter(|e| e.url.starts_with("http"))
        .map(|e| (e.timestamp, e.url))
        .collect();
    assert!(captures.len() >= 8, "{captures:?}");
    let imported = crate::dedup::replay::replay(
        &coll.join("indexes/index.cdxj"),
        &[&coll.join("archive")],
        &captures,
    );
    let from_package = crate::dedup::replay::replay(&own, &[&pkg], &captures);
    assert_eq!(imported.len(), from_package.len());
    for (url, want) in &from_package {
        let got = &imported[url];
        assert_eq!((&got["status"], &got["sha256"]), (&want["status"], &want["sha256"]), "{url}");
    }
    assert!(imported.values().any(|r| r["status"] == 200));
    let plain = dir.path().join("plain.wacz");
    assert_eq!(export(&pkg, &plain, &["--index", "cdxj"]).status.code(), Some(0));
    manager(&["init", "d"]);
    let said = manager(&["add", "--unpack-wacz", "d", plain.to_str().unwrap()]);
    assert!(said.contains("does not contain any indices"), "{said}");
}

/// The pages of `wacz` (read with the index in one pass) are those `webaip pages` lists of
/// `pkg` (its own reader of the containers), with the same titles.
fn same_pages_as_the_listing(wacz: &Path, pkg: &Path) {
    let o = webaip(&["pages", "--json", pkg.to_str().unwrap()]);
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let key = |url: &serde_json::Value, ts: &serde_json::Value| {
        (url.as_str().unwrap().replace(' ', "%20"), ts.as_str().unwrap().to_string())
    };
    let want: std::collections::BTreeMap<_, _> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (key(&e["url"], &e["captured"]), e["title"].as_str().map(str::to_string)))
        .collect();
    let got: std::collections::BTreeMap<_, _> = wacz_pages(wacz)
        .iter()
        .map(|p| (key(&p["url"], &p["ts"]), p["title"].as_str().map(str::to_string)))
        .collect();
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{pkg:?}");
    for (k, title) in &want {
        if title.is_some() {
            assert_eq!(&got[k], title, "{pkg:?}: {k:?}");
        }
    }
}

/// The pages of `wacz`'s `pages/pages.jsonl` (the header line left out).
fn wacz_pages(wacz: &Path) -> Vec<serde_json::Value> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(wacz).unwrap()).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("pages/pages.jsonl").unwrap(), &mut text)
        .unwrap();
    text.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Every described page of the exported sample WACZs replays in ReplayWeb.page (headless
/// Chromium, served by a local static server: `replay.py`), its `<title>` read from the DOM
/// equal to the page's title; a screenshot of the replayed sample home page is kept in
/// target/test-artefacts/.
#[test]
fn every_described_page_replays_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let metadata = sample("heritrix-job.metadata.toml");
    let seeds = ["--describe-seeds"];
    let with_metadata = ["--describe-seeds", "--metadata", metadata.to_str().unwrap()];
    let samples: [(&str, &[&str]); 2] =
        [("heritrix-job", &with_metadata), ("pandas/40123/20040517-1412", &seeds)];
    let artefacts = repo().join("target/test-artefacts");
    std::fs::create_dir_all(&artefacts).unwrap();
    for (i, (name, extra)) in samples.iter().enumerate() {
        let pkg = dir.path().join(format!("p{i}"));
        package(Package::new().deterministic().args(extra), &pkg, &[&sample(name)]).succeeded();
        let wacz = dir.path().join(format!("p{i}.wacz"));
        let o = export(&pkg, &wacz, &[]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let described = r["pages"]["described"].as_u64().unwrap() as usize;
        assert!(described > 0, "{name}: no described page");
        let mut pages: Vec<(String, String)> = wacz_pages(&wacz)[..described]
            .iter()
            .map(|p| (p["url"].as_str().unwrap().into(), p["title"].as_str().unwrap().into()))
            .collect();
        // The home page first: its screenshot is the one kept.
        pages.sort_by_key(|(url, _)| url.matches('/').count());
        let shot = artefacts.join(format!("wacz-{}.png", name.split('/').next().unwrap()));
        let _ = std::fs::remove_file(&shot);
        let o = Command::new(oracle_python())
            .arg(repo().join("tests/export_wacz/replay.py"))
            .arg(&wacz)
            .arg(serde_json::to_string(&pages).unwrap())
            .arg(&shot)
            .output()
            .expect("replay.py runs");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{name}: {out} {}", String::from_utf8_lossy(&o.stderr));
        let replayed: serde_json::Value = serde_json::from_str(&out).unwrap();
        for ((url, title), got) in pages.iter().zip(replayed["pages"].as_array().unwrap()) {
            assert_eq!(
                (got["url"].as_str(), got["title"].as_str()),
                (Some(url.as_str()), Some(title.as_str())),
                "{name}"
            );
        }
        let png = std::fs::read(&shot).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 1000, "{name}: a screenshot");
    }
}

/// A temporary a killed export left (`.wacz-XXXXXX`, unlocked: its maker is gone) is removed
/// by the next export into that folder; one a live export holds (locked) and files of other
/// names are left; the WACZ gets the mode the umask gives, as any new file.
#[test]
fn a_killed_exports_temporary_goes_and_the_wacz_honours_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("p");
    package(Package::new().deterministic(), &pkg, &[&sample("nedlib")]).succeeded();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join(".wacz-dead01"), b"PK\x03\x04 half a WACZ").unwrap();
    std::fs::write(out.join(".wacz-notours"), b"kept").unwrap();
    let live = std::fs::File::create(out.join(".wacz-live01")).unwrap();
    rustix::fs::flock(&live, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let wacz = out.join("x.wacz");
    let o = crate::util::webaip_with_umask(
        &["export", "wacz", pkg.to_str().unwrap(), "-o", wacz.to_str().unwrap()],
        0o027,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(crate::util::files_in(&out), [".wacz-live01", ".wacz-notours", "x.wacz"]);
    let mode = std::fs::metadata(&wacz).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "mode {mode:o}");
}

#[test]
fn an_export_to_a_full_disk_says_so_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("p");
    package(Package::new().deterministic(), &pkg, &[&sample("nedlib")]).succeeded();
    // A file size limit fails every write past 8 KiB, the central directory's too.
    let wacz = dir.path().join("x.wacz");
    let o = Command::new("bash")
        .args(["-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\""])
        .args([crate::util::WEBAIP, "export", "wacz", pkg.to_str().unwrap(), "-o"])
        .arg(&wacz)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("file too large") && err.contains("x.wacz"), "{err}");
    assert!(!err.contains("os error") && !err.contains("ZipWriter::drop"), "{err}");
    assert_eq!(crate::util::files_in(dir.path()), ["p"], "{err}");
    let whole = dir.path().join("whole.wacz");
    assert!(export(&pkg, &whole, &[]).status.success());
    let size_kib = std::fs::metadata(&whole).unwrap().len() >> 10;
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let Some(_disk) = crate::util::SmallDisk::mount(&small, size_kib / 2) else {
        eprintln!("no tmpfs (mount needs privileges here): full disk not tried");
        return;
    };
    let wacz = small.join("x.wacz");
    let o = export(&pkg, &wacz, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    // The output named, never the temporary it is written to.
    assert!(err.contains("no space left on device") && err.contains("x.wacz"), "{err}");
    assert!(!err.contains("os error") && !err.contains("ZipWriter::drop"), "{err}");
    assert_eq!(crate::util::files_in(&small), Vec::<String>::new(), "{err}");
}

/// A package deduplicated against an earlier one: its WACZ alone would hold revisits that
/// cannot replay, so the export refuses, naming the first and how many, and leaves no WACZ;
/// with `--with` the earlier package, the container holding the originals goes in too, the
/// WACZ is valid (webaip and py-wacz) and pywb replays every capture as it replays the crawl
/// packaged whole. `webaip validate` names each revisit of a WACZ made of the second crawl
/// alone (py-wacz, which accepts it).
#[test]
fn a_deduplicated_package_exports_with_the_originals_of_its_revisits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::dedup::crawls(d);
    let (c1, c2) = (d.join("crawl1/crawl1.warc.gz"), d.join("crawl2/crawl2.warc.gz"));
    let (p1, p2, plain) = (d.join("p1"), d.join("p2"), d.join("plain"));
    package(Package::new().deterministic(), &p1, &[&c1]).succeeded();
    package(
        Package::new().deterministic().args(&["--dedup-against", p1.to_str().unwrap()]),
        &p2,
        &[&c2],
    )
    .succeeded();
    package(Package::new().deterministic(), &plain, &[&c2]).succeeded();
    let alone = d.join("alone.wacz");
    let o = export(&p2, &alone, &[]);
    let why = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{why}");
    assert!(why.contains("revisit(s) of the package have no original") && why.contains("--with"));
    assert!(why.contains("content/crawl2.warc.gz at offset"), "{why}");
    assert!(!crate::util::files_in(d).iter().any(|f| f.contains(".wacz")), "no WACZ is left");

    let wacz = d.join("with.wacz");
    let o = export(&p2, &wacz, &["--with", p1.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let from_p1 = format!("{}/content/crawl1.warc.gz", p1.display());
    assert_eq!(r["originals"], serde_json::json!([from_p1]));
    assert_eq!(r["verified"], 2, "the original's container checked against its METS too");
    let o = webaip(&["validate", wacz.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}");
    let (ok, said) = wacz_validate(&wacz);
    assert!(ok, "{said}");

    // pywb replays every capture of the second crawl from the WACZ as from the whole crawl.
    let manager = |args: &[&str]| {
        let o = Command::new(repo().join(".venv/bin/wb-manager"))
            .args(args)
            .current_dir(d)
            .output()
            .expect("wb-manager runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    manager(&["init", "c"]);
    manager(&["add", "--unpack-wacz", "c", wacz.to_str().unwrap()]);
    let own = d.join("plain.cdxj");
    let o = webaip(&["index", "-q", plain.to_str().unwrap(), "-o", own.to_str().unwrap()]);
    assert!(o.status.success());
    let captures: Vec<(String, String)> = std::fs::read_to_string(&own)
        .unwrap()
        .lines()
        .map(crate::util::CdxjLine::parse)
        .map(|e| (e.timestamp, e.url))
        .collect();
    let coll = d.join("collections/c");
    let imported = crate::dedup::replay::replay(
        &coll.join("indexes/index.cdxj"),
        &[&coll.join("archive")],
        &captures,
    );
    let whole = crate::dedup::replay::replay(&own, &[&plain], &captures);
    assert_eq!(whole.len(), captures.len());
    for (url, want) in &whole {
        let got = &imported[url];
        assert_eq!(got["status"], 200, "{url}: {got}");
        assert_eq!((&got["status"], &got["sha256"]), (&want["status"], &want["sha256"]), "{url}");
    }

    // A WACZ of the second crawl alone: each revisit named, by member and offset.
    let py = d.join("py.wacz");
    let o = Command::new(repo().join(".venv/bin/wacz"))
        .args(["create", "--detect-pages", "-o"])
        .arg(&py)
        .arg(p2.join("content/crawl2.warc.gz"))
        .output()
        .expect("wacz runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(wacz_validate(&py).0, "py-wacz accepts it");
    let o = webaip(&["validate", "--json", py.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let report = crate::util::only_report(&all);
    let named: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "WACZ-REVISIT")
        .collect();
    let index = d.join("p2-own.cdxj");
    let o = webaip(&["index", "-q", p2.to_str().unwrap(), "-o", index.to_str().unwrap()]);
    assert!(o.status.success());
    let revisits: Vec<u64> = std::fs::read_to_string(&index)
        .unwrap()
        .lines()
        .map(crate::util::CdxjLine::parse)
        .filter(|e| e.mime.as_deref() == Some("warc/revisit"))
        .map(|e| e.offset)
        .collect();
    assert!(revisits.len() > 10, "{revisits:?}");
    assert_eq!(named.len(), revisits.len(), "{report:#}");
    for f in named {
        assert_eq!(f["severity"], "error");
        assert_eq!(f["member"], "archive/crawl2.warc.gz");
        assert!(revisits.contains(&f["offset"].as_u64().unwrap()), "{f}");
    }
}

/// A gzip member holding one response record of `uri` whose HTTP payload is `body`, sent
/// with `Content-Encoding: encoding`.
fn encoded_response(uri: &str, encoding: &str, body: &[u8], date: &str) -> Vec<u8> {
    let http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: {encoding}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let block = [http.as_bytes(), body].concat();
    let record = [
        format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{}>\r\nWARC-Date: {date}\r\nWARC-Target-URI: {uri}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
            uuid::Uuid::new_v4(),
            block.len()
        )
        .as_bytes(),
        &block,
        b"\r\n\r\n",
    ]
    .concat();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &record).unwrap();
    gz.finish().unwrap()
}

/// pages.jsonl gives the title of a page sent gzip- or deflate-encoded (as a browser shows
/// it, decoded), as `webaip pages` lists it; a page in a coding webaip does not undo has
/// none, rather than one read from compressed bytes.
#[test]
fn encoded_html_pages_get_their_titles() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let html = |t: &str| {
        format!("<html><head><title>{t}</title></head><body>{}</body></html>", "word ".repeat(400))
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(html("Gzip page").as_bytes()).unwrap();
    let mut zl = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    zl.write_all(html("Deflate page").as_bytes()).unwrap();
    let warc = [
        encoded_response(
            "http://e.example/gz",
            "gzip",
            &gz.finish().unwrap(),
            "2024-01-01T00:00:00Z",
        ),
        encoded_response(
            "http://e.example/deflate",
            "deflate",
            &zl.finish().unwrap(),
            "2024-01-01T00:00:01Z",
        ),
        encoded_response(
            "http://e.example/br",
            "br",
            b"\x1b\x2d\x00\xf8<title>No</title>",
            "2024-01-01T00:00:02Z",
        ),
    ]
    .concat();
    let src = dir.path().join("encoded.warc.gz");
    std::fs::write(&src, warc).unwrap();
    let pkg = dir.path().join("p");
    package(Package::new().deterministic(), &pkg, &[&src]).succeeded();
    let wacz = dir.path().join("e.wacz");
    let o = export(&pkg, &wacz, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let titles: std::collections::BTreeMap<String, Option<String>> = wacz_pages(&wacz)
        .iter()
        .map(|p| (p["url"].as_str().unwrap().to_string(), p["title"].as_str().map(str::to_string)))
        .collect();
    let want = |t: Option<&str>| t.map(str::to_string);
    assert_eq!(titles["http://e.example/gz"], want(Some("Gzip page")), "{titles:?}");
    assert_eq!(titles["http://e.example/deflate"], want(Some("Deflate page")), "{titles:?}");
    assert_eq!(titles["http://e.example/br"], None, "{titles:?}");
    same_pages_as_the_listing(&wacz, &pkg);
}
