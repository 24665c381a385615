//! Curator-described webpages and associated objects (issue 15, P1.3 / P2): the sample crawl
//! with its metadata file, `--describe-seeds`, PANDAS, several captures of one URL, and URLs
//! that were not harvested. Every div is read back by an independent reader
//! (tests/oracle/check_entities.py: ElementTree, zlib, warcio, html.parser and metsrw).

use std::path::Path;
use std::process::Command;

use crate::mets_package::{assert_webaip_valid, oracle_validate};
use crate::util::{Package, copy_tree, oracle_python, repo, sample, sample_arg, webaip};

/// The oracle's reading of the package's entity divs.
pub(crate) fn entities(pkg: &Path) -> serde_json::Value {
    let out = Command::new(oracle_python())
        .arg(repo().join("tests/oracle/check_entities.py"))
        .arg(pkg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The checks every described div passes: its MODS URL is its record's WARC-Target-URI, its
/// fptr names a bytestream whose SHA-512 is that of the payload warcio reads, metsrw reads
/// the same MODS title, and it sits directly below the website div.
fn assert_entities_sound(pkg: &Path) -> Vec<serde_json::Value> {
    let v = entities(pkg);
    assert_eq!(v["depth"], 2, "{v}");
    let list = v["entities"].as_array().unwrap().clone();
    for e in &list {
        if e["dmdid"].is_null() {
            continue;
        }
        assert_eq!(e["mods_url"], e["warc_uri"], "{e}");
        assert_eq!(e["payload_sha512_matches"], true, "{e}");
        assert_eq!(e["metsrw_title"], e["mods_title"], "{e}");
        assert_eq!(e["group"], "DigitalManifestation", "{e}");
    }
    list
}

fn by_url<'a>(list: &'a [serde_json::Value], url: &str) -> &'a serde_json::Value {
    list.iter()
        .find(|e| e["mods_url"] == url)
        .unwrap_or_else(|| panic!("no entity for {url}: {list:#?}"))
}

#[test]
fn the_sample_crawl_describes_its_pages_and_seeds_in_both_modes() {
    for mode in ["minimal", "full"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pkg");
        let r = Package::new()
            .json()
            .schemas()
            .args(&[
                "--mode",
                mode,
                "--deterministic",
                "--describe-seeds",
                "--metadata",
                &sample_arg("heritrix-job.metadata.toml"),
                "--out",
                out.to_str().unwrap(),
                &sample_arg("heritrix-job"),
            ])
            .report_as_is();
        let (ok, text) = oracle_validate(&out.join("METS.xml"));
        assert!(ok, "{mode}: {text}");
        assert_webaip_valid(&out.join("METS.xml"));
        let list = assert_entities_sound(&out);
        // Three [[page]] tables and the two seeds (the first seed is not described twice).
        assert_eq!(list.len(), 5, "{mode}: {list:#?}");
        assert_eq!(r["entities"]["described"].as_array().unwrap().len(), 5);

        let about = by_url(&list, "http://www.example.org/about.html");
        assert_eq!(about["type"], "WEBPAGE");
        assert_eq!(about["mods_title"], "About the Example Heritage Society");
        assert_eq!(about["label"], about["mods_title"]);
        // Described with a URL escaped differently: the record's own URL is in the MODS.
        let fair = by_url(&list, "http://www.example.org/events/spring fair.html");
        assert_eq!(fair["mods_title"], fair["html_title"], "title from the page: {fair}");
        assert_eq!(fair["mods_title"], "Spring fair");
        let logo = by_url(&list, "http://www.example.org/img/logo.png");
        assert_eq!(logo["type"], "ASSOCIATEDOBJECT");
        assert_eq!(logo["mods_host"], "http://www.example.org/");
        assert_eq!(logo["mods_title"], "Logo of the Example Heritage Society");
        // Seeds: titled from their own <title>, the ISO-8859-1 one decoded.
        for seed in ["http://www.example.org/", "http://www.example.org/verein.html"] {
            let e = by_url(&list, seed);
            assert!(!e["html_title"].is_null(), "{e}");
            assert_eq!(e["mods_title"], e["html_title"], "{e}");
        }
        assert_eq!(
            by_url(&list, "http://www.example.org/verein.html")["mods_title"],
            "F\u{f6}rderverein & Freunde \u{2013} Heimatgeschichte"
        );
        let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
        assert!(mets.contains("title taken from the page&apos;s HTML title element"), "{mode}");
        assert!(mets.contains("<mods:dateIssued encoding=\"w3cdtf\">2024-03</mods:dateIssued>"));
        // The described records are listed even in minimal mode, and the package audits clean.
        let audit = webaip(&["audit", "--deep", "--json", out.to_str().unwrap()]);
        assert!(audit.status.success(), "{}", String::from_utf8_lossy(&audit.stdout));
    }
}

#[test]
fn a_page_that_was_not_harvested_stops_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let meta = dir.path().join("m.toml");
    std::fs::write(
        &meta,
        "[[page]]\nurl = \"http://www.example.org/about.html\"\n\
         [[page]]\nurl = \"http://www.example.org/never-crawled.html\"\n\
         [[page]]\nurl = \"http://elsewhere.example/\"\n",
    )
    .unwrap();
    let out = dir.path().join("pkg");
    let o = Package::new()
        .args(&["--metadata", meta.to_str().unwrap()])
        .run(&out, &sample("heritrix-job"));
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    for url in ["http://www.example.org/never-crawled.html", "http://elsewhere.example/"] {
        assert!(err.contains(url), "{err}");
    }
    assert!(!err.contains("about.html"), "{err}");
    // Nothing that looks like a package is left.
    assert!(!out.exists());
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

/// An uncompressed WARC/1.0 response record.
fn response(uri: &str, date: &str, body: &str) -> Vec<u8> {
    let http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let id = format!("{:x}", sha2_hex(&(uri.to_string() + date)));
    let head = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{}-{}-{}-{}-{}>\r\nWARC-Date: {date}\r\n\
         WARC-Target-URI: {uri}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        &id[0..8],
        &id[8..12],
        &id[12..16],
        &id[16..20],
        &id[20..32],
        http.len()
    );
    [head.as_bytes(), http.as_bytes(), b"\r\n\r\n"].concat()
}

fn sha2_hex(s: &str) -> u128 {
    use sha2::Digest;
    let d = sha2::Sha256::digest(s.as_bytes());
    u128::from_be_bytes(d[..16].try_into().unwrap())
}

#[test]
fn several_captures_need_captured_and_the_closest_is_described() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("two-crawls.warc");
    let page = |t: &str| format!("<html><head><title>{t}</title></head><body>{t}</body></html>");
    let records = [
        response("http://news.example/", "2024-01-10T08:00:00Z", &page("January news")),
        response("http://news.example/", "2024-02-10T08:00:00Z", &page("February news")),
        response("http://news.example/", "2024-03-10T08:00:00Z", &page("March news")),
    ]
    .concat();
    std::fs::write(&warc, records).unwrap();
    let meta = dir.path().join("m.toml");
    let out = dir.path().join("pkg");

    // No `captured`: an error that names the URL and the three dates.
    std::fs::write(&meta, "[[page]]\nurl = \"http://news.example/\"\ntitle = \"News\"\n").unwrap();
    let o = Package::new().args(&["--metadata", meta.to_str().unwrap()]).run(&out, &warc);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    for want in ["http://news.example/", "3 captures", "2024-01-10T08:00:00Z", "captured"] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert!(!out.exists());

    // `captured` chooses the closest; --describe-seeds would take the latest (none here: a
    // WARC alone has no seeds), so a second table at another time describes a second capture.
    std::fs::write(
        &meta,
        "[[page]]\nurl = \"http://news.example/\"\ncaptured = \"2024-02-09\"\n\
         [[page]]\nurl = \"http://news.example\"\ncaptured = \"2024-03-31\"\ntitle = \"Spring news\"\n",
    )
    .unwrap();
    for mode in ["minimal", "full"] {
        let out = dir.path().join(format!("pkg-{mode}"));
        let r = Package::new()
            .json()
            .schemas()
            .args(&[
                "--mode",
                mode,
                "--metadata",
                meta.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                warc.to_str().unwrap(),
            ])
            .report_as_is();
        let list = assert_entities_sound(&out);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["warc_date"], "2024-02-10T08:00:00Z");
        assert_eq!(list[0]["mods_title"], "February news");
        assert_eq!(list[1]["warc_date"], "2024-03-10T08:00:00Z");
        assert_eq!(list[1]["mods_title"], "Spring news");
        assert_eq!(r["entities"]["described"][0]["captures"], 3);
        // An uncompressed WARC is copied as it is: its records are described as such.
        let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
        assert!(mets.contains("MIMETYPE=\"application/warc\" SIZE"), "{mode}");
        assert_webaip_valid(&out.join("METS.xml"));
    }
}

#[test]
fn pandas_pages_are_described_as_transformed_and_seeds_from_the_httrack_log() {
    let dir = tempfile::tempdir().unwrap();
    let meta = dir.path().join("m.toml");
    std::fs::write(
        &meta,
        "[[page]]\nurl = \"http://www.example.gov.au/about/\"\nlanguage = \"ger\"\n\
         [[page]]\nurl = \"http://www.example.gov.au/images/logo.png\"\nkind = \"associated-object\"\n\
         part_of = \"http://www.example.gov.au/about/\"\ntitle = \"Agency logo\"\n",
    )
    .unwrap();
    let out = dir.path().join("pkg");
    Package::new()
        .json()
        .schemas()
        .args(&[
            "--deterministic",
            "--describe-seeds",
            "--metadata",
            meta.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            &sample_arg("pandas/40123/20040517-1412"),
        ])
        .report_as_is();
    let (ok, text) = oracle_validate(&out.join("METS.xml"));
    assert!(ok, "{text}");
    assert_webaip_valid(&out.join("METS.xml"));
    let list = assert_entities_sound(&out);
    let described: Vec<_> = list.iter().filter(|e| !e["dmdid"].is_null()).collect();
    // The two tables and the seed the HTTrack log names.
    assert_eq!(described.len(), 3, "{list:#?}");
    let about = by_url(&list, "http://www.example.gov.au/about/");
    // The windows-1252 page, titled from its <title>; the div points at the rewritten page
    // (the content group's capture), and replaces the automatic div of that page.
    assert_eq!(about["mods_title"], "\u{dc}ber uns");
    assert_eq!(about["mods_title"], about["html_title"]);
    let divs_for_about = list.iter().filter(|e| e["file_id"] == about["file_id"]).count();
    assert_eq!(divs_for_about, 1, "{list:#?}");
    // The other rewritten pages keep their automatic divs (no DMDID).
    assert!(list.iter().any(|e| e["dmdid"].is_null() && e["type"] == "WEBPAGE"), "{list:#?}");
    let logo = by_url(&list, "http://www.example.gov.au/images/logo.png");
    assert_eq!(logo["mods_host"], "http://www.example.gov.au/about/");
    let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
    // The host page is described too, so the logo's relatedItem carries its title.
    assert!(mets.contains("<mods:relatedItem type=\"host\">\n            <mods:titleInfo>\n              <mods:title>\u{dc}ber uns</mods:title>"), "{mets}");
    // PANDAS files dated by the cache are the captures' own dates; none is marked inferred.
    assert!(!mets.contains("qualifier=\"inferred\""));
}

#[test]
fn seeds_that_were_not_harvested_are_reported_not_invented() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    let src = sample("heritrix-job");
    copy_tree(&src, &job);
    std::fs::write(job.join("seeds.txt"), "http://www.example.org/\nhttp://not-crawled.example/\n")
        .unwrap();
    let out = dir.path().join("pkg");
    let r = Package::new()
        .json()
        .schemas()
        .args(&["--describe-seeds", "--out", out.to_str().unwrap(), job.to_str().unwrap()])
        .report_as_is();
    assert_eq!(r["entities"]["described"].as_array().unwrap().len(), 1, "{}", r["entities"]);
    assert_eq!(r["entities"]["seeds_not_harvested"][0], "http://not-crawled.example/");
    let list = assert_entities_sound(&out);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["mods_title"], "Example Heritage Society");
}

#[test]
fn a_mirror_without_a_log_describes_pages_with_inferred_dates_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("site");
    crate::mirror::make_mirror(&src, false);
    let meta = dir.path().join("m.toml");
    std::fs::write(
        &meta,
        "[[page]]\nurl = \"http://www.example.org/about\"\nsubjects = [\"Contact\"]\n",
    )
    .unwrap();
    for mode in ["minimal", "full"] {
        let out = dir.path().join(format!("pkg-{mode}"));
        let r = Package::new()
            .json()
            .schemas()
            .args(&[
                "--mode",
                mode,
                "--describe-seeds",
                "--url-prefix",
                "http://www.example.org/",
                "--capture-date",
                "2024-01-02",
                "--metadata",
                meta.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                src.to_str().unwrap(),
            ])
            .report_as_is();
        assert_webaip_valid(&out.join("METS.xml"));
        let (ok, text) = oracle_validate(&out.join("METS.xml"));
        assert!(ok, "{text}");
        let list = assert_entities_sound(&out);
        let described: Vec<_> = list.iter().filter(|e| !e["dmdid"].is_null()).collect();
        assert_eq!(described.len(), 2, "{mode}: {list:#?}");
        // The about page has no <title>: no MODS title, the div is labelled with the URL.
        let about = by_url(&list, "http://www.example.org/about");
        assert!(about["mods_title"].is_null(), "{about}");
        assert!(about["html_title"].is_null(), "{about}");
        assert_eq!(about["label"], "http://www.example.org/about");
        let home = by_url(&list, "http://www.example.org/");
        assert_eq!(home["mods_title"], "Example Home");
        // Every file is dated by --capture-date: the descriptions say the date is inferred.
        let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
        assert_eq!(mets.matches("qualifier=\"inferred\"").count(), 2, "{mode}");
        let rep = &r["entities"]["described"];
        assert_eq!(rep[0]["captured_inferred"], true, "{r}");
    }
}
