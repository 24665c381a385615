//! Issue 25 items 1, 5 and 6: a mirror's root is its shallowest page (not the first in sort
//! order), links through a mirrored file are made absolute like their siblings, and the two
//! raw errors are gone (a zip mirror's missing `--out` folder; `pages` of a METS whose
//! containers are URLs).

use std::io::Write;
use std::path::Path;

use super::records;
use crate::util::{Package, package, report_of, webaip};

/// A wget mirror of www.iana.org where `about/index.html` sorts before the host's own
/// `index.html`; `domains/idn-tables` is a page saved as a file, and links pass through it.
fn iana_mirror(dir: &Path) {
    let h = dir.join("www.iana.org");
    std::fs::create_dir_all(h.join("about")).unwrap();
    std::fs::create_dir_all(h.join("domains")).unwrap();
    std::fs::write(
        h.join("index.html"),
        "<html><head><title>IANA home</title></head><body><a href=\"about/\">About</a> \
         <a href=\"/domains/idn-tables\">IDN tables</a></body></html>",
    )
    .unwrap();
    std::fs::write(
        h.join("about/index.html"),
        "<html><head><title>About us</title></head><body><a href=\"../\">Home</a></body></html>",
    )
    .unwrap();
    std::fs::write(
        h.join("domains/idn-tables"),
        "<!DOCTYPE html><html><head><title>IDN tables</title></head><body>\
         <a href=\"/domains/idn-tables/db\">db</a> <a href=\"idn-tables/db\">db2</a> \
         <a href=\"/about/\">About</a> <a href=\"../domains/idn-tables/db?x=1#t\">db3</a>\
         </body></html>",
    )
    .unwrap();
}

/// The report of the one package a mirror's run made, which must succeed, with what was read
/// of the mirror beside it.
fn json(o: &std::process::Output) -> serde_json::Value {
    crate::util::with_mirror(&report_of(o, 0))
}

/// The MODS title and primary URL of the website (the first MODS of the METS).
fn website_mods(pkg: &Path) -> (String, String) {
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let between = |open: &str| {
        let at = mets.find(open).unwrap_or_else(|| panic!("no {open}"));
        let rest = &mets[at..];
        let start = rest.find('>').unwrap() + 1;
        rest[start..start + rest[start..].find('<').unwrap()].to_string()
    };
    (between("<mods:title>"), between("<mods:url usage=\"primary\""))
}

#[test]
fn a_mirrors_root_is_its_shallowest_page_whatever_sorts_first() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("site");
    iana_mirror(&src);
    let date = ["--capture-date", "2024-01-02", "--describe-seeds"];

    // No log, no --url-prefix: the host's own index.html, said to be a guess.
    let out = t.path().join("guess");
    let v = json(&package(Package::new().json().schemas().args(&date), &out, &[&src]).output);
    assert_eq!(v["mirror"]["site_url"], "http://www.iana.org/");
    assert_eq!(v["mirror"]["root_page"], "www.iana.org/index.html");
    let from = v["mirror"]["site_url_source"].as_str().unwrap();
    assert!(from.contains("root page www.iana.org/index.html") && from.contains("guess"), "{from}");
    assert_eq!(website_mods(&out), ("IANA home".into(), "http://www.iana.org/".into()));
    let seeds: Vec<&str> = v["entities"]["described"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["origin"] == "seed")
        .map(|e| e["url"].as_str().unwrap())
        .collect();
    assert_eq!(seeds, ["http://www.iana.org/"]);
    // Nothing said about sources that are not there.
    for note in v["metadata_notes"].as_array().unwrap() {
        let n = note.as_str().unwrap();
        assert!(!n.contains("seeds.txt") && !n.contains("HTTrack log"), "{n}");
    }

    // --url-prefix names the root: described, titled and said as such.
    let out = t.path().join("prefix");
    let mut args = date.to_vec();
    args.extend(["--url-prefix", "http://www.iana.org/"]);
    let v = json(&package(Package::new().json().schemas().args(&args), &out, &[&src]).output);
    assert_eq!(v["mirror"]["site_url_source"], "--url-prefix");
    assert_eq!(v["mirror"]["root_page"], "www.iana.org/index.html");
    assert_eq!(website_mods(&out), ("IANA home".into(), "http://www.iana.org/".into()));
    assert_eq!(v["entities"]["described"][0]["url"], "http://www.iana.org/");

    // The wget log's first URL names it (the log lists about/ before it on purpose).
    let mut log = String::new();
    for (t, url, path) in [
        ("10:11:12", "http://www.iana.org/", "index.html"),
        ("10:11:13", "http://www.iana.org/about/", "about/index.html"),
    ] {
        log.push_str(&format!(
            "--2024-01-02 {t}--  {url}\nSaving to: \u{2018}www.iana.org/{path}\u{2019}\n\n"
        ));
    }
    std::fs::write(src.join("wget-log"), log).unwrap();
    let out = t.path().join("log");
    let v = json(
        &package(Package::new().json().schemas().args(&["--describe-seeds"]), &out, &[&src]).output,
    );
    assert_eq!(v["mirror"]["site_url"], "http://www.iana.org/");
    assert_eq!(v["mirror"]["root_page"], "www.iana.org/index.html");
    assert_eq!(website_mods(&out), ("IANA home".into(), "http://www.iana.org/".into()));
    assert_eq!(v["entities"]["described"][0]["url"], "http://www.iana.org/");
}

#[test]
fn links_through_a_mirrored_file_are_made_absolute_like_their_siblings() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("site");
    iana_mirror(&src);
    // The same site saved with --adjust-extension: the page is idn-tables.html beside a
    // folder idn-tables/ holding another file.
    let e = t.path().join("site-e");
    iana_mirror(&e);
    let d = e.join("www.iana.org/domains");
    std::fs::rename(d.join("idn-tables"), d.join("idn-tables.html")).unwrap();
    std::fs::create_dir(d.join("idn-tables")).unwrap();
    std::fs::write(d.join("idn-tables/other.txt"), "other").unwrap();
    for (name, src) in [("plain", &src), ("adjusted", &e)] {
        let out = t.path().join(name);
        json(
            &package(
                Package::new().json().schemas().args(&["--capture-date", "2024-01-02"]),
                &out,
                &[src],
            )
            .output,
        );
        let recs = records(&out);
        let page = recs
            .as_array()
            .unwrap()
            .iter()
            // Without a log the adjusted page's URL keeps its .html (nothing says otherwise).
            .find(|r| r["body"].as_str().is_some_and(|b| b.contains("<title>IDN tables")))
            .unwrap_or_else(|| panic!("{name}: no idn-tables page in {recs:#}"));
        let body = page["body"].as_str().unwrap();
        for want in [
            "href=\"http://www.iana.org/domains/idn-tables/db\"",
            "href=\"http://www.iana.org/domains/idn-tables/db?x=1#t\"",
            "href=\"http://www.iana.org/about/\"",
        ] {
            assert!(body.contains(want), "{name}: {want} not in {body}");
        }
        let hrefs: Vec<&str> = body.split("href=\"").skip(1).collect();
        assert_eq!(hrefs.len(), 4, "{body}");
        assert!(hrefs.iter().all(|h| h.starts_with("http://www.iana.org/")), "{name}: {body}");
    }
}

#[test]
fn a_zip_mirror_makes_the_folder_of_its_out_as_other_inputs_do() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("site");
    iana_mirror(&src);
    let zip_path = t.path().join("site.zip");
    let mut z = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    let opts = zip::write::SimpleFileOptions::default();
    for f in ["www.iana.org/index.html", "www.iana.org/about/index.html"] {
        z.start_file(format!("site/{f}"), opts).unwrap();
        z.write_all(&std::fs::read(src.join(f)).unwrap()).unwrap();
    }
    z.finish().unwrap();
    let out = t.path().join("not/yet/made/pkg");
    let o = package(
        Package::new().json().schemas().args(&["--capture-date", "2024-01-02"]),
        &out,
        &[&zip_path],
    )
    .output;
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("METS.xml").is_file());
    // Nothing of the unpacking is left beside the package.
    assert_eq!(crate::util::files_in(&t.path().join("not/yet/made")), ["pkg"]);
}

#[test]
fn pages_of_a_mets_whose_containers_are_urls_says_so_without_an_os_error() {
    let t = tempfile::tempdir().unwrap();
    // A real British Library SIP METS: its WARC is located by a WebHDFS URL.
    let bl = crate::util::repo()
        .join("../shared/xsd/examples/reference/bl-ukwa-sip-legal-deposit-premis2.xml");
    let mets = t.path().join("bl-sip.xml");
    std::fs::copy(&bl, &mets).unwrap();
    let m = mets.to_str().unwrap();
    let o = webaip(&["pages", m]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(!err.contains("os error") && !out.contains("http:/dls"), "{out}{err}");
    assert!(
        out.contains("not listed: http://dls.httpfs.wa.bl.uk:14000/webhdfs/")
            && out.contains("kept outside the package"),
        "{out}"
    );
    let o = webaip(&["pages", "--json", m]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let quirks = v["quirks"].as_array().unwrap();
    assert_eq!(quirks.len(), 1, "{v:#}");
    assert_eq!(quirks[0]["kind"], "container-outside-package");
    assert!(quirks[0]["file"].as_str().unwrap().starts_with("http://dls.httpfs.wa.bl.uk"));
    assert_eq!(v["counts"]["pages"], 0);
}
