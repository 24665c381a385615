//! `webaip audit` on a clean package and on one copy per kind of damage: each damage must be
//! reported naming the right file (and, for byte damage, the record's offset), and the clean
//! package must have no finding at all.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::util::repo;

fn webaip(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webaip"))
        .args(args)
        .env_remove("WEBAIP_SCHEMAS")
        .env_remove("WEBAIP_CLAMD")
        .output()
        .expect("webaip runs")
}

fn schemas() -> String {
    crate::mets_package::schemas().display().to_string()
}

/// Packages `source` in full mode (every record and bytestream listed) into `out`.
fn build(source: &Path, out: &Path) {
    let o = webaip(&[
        "package",
        "--quiet",
        "--no-virus-check",
        "--mode",
        "full",
        "--out",
        out.to_str().unwrap(),
        source.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Audits `pkg`; returns the exit status and the JSON report of that one package.
fn audit(pkg: &Path) -> (i32, serde_json::Value) {
    let o = webaip(&["audit", "--json", "--schemas", &schemas(), pkg.to_str().unwrap()]);
    let code = o.status.code().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "no JSON: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (code, v[0].clone())
}

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            fs::create_dir_all(&dest).unwrap();
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The value of `attr` on the `<mets:file>` element with this ID.
fn file_attr(mets: &str, id: &str, attr: &str) -> String {
    let at = mets.find(&format!("<mets:file ID=\"{id}\"")).unwrap_or_else(|| panic!("{id}"));
    let element = &mets[at..at + mets[at..].find('>').unwrap()];
    let key = format!(" {attr}=\"");
    let v = &element[element.find(&key).unwrap_or_else(|| panic!("{attr} of {id}")) + key.len()..];
    v[..v.find('"').unwrap()].to_string()
}

fn href(mets: &str, id: &str) -> String {
    let at = mets.find(&format!("<mets:file ID=\"{id}\"")).unwrap();
    let v = &mets[at + mets[at..].find("xlink:href=\"").unwrap() + 12..];
    v[..v.find('"').unwrap()].to_string()
}

fn flip(path: &Path, offset: u64) {
    let mut bytes = fs::read(path).unwrap();
    bytes[offset as usize] ^= 0x10;
    fs::write(path, bytes).unwrap();
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from} not in {}", path.display());
    fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// Findings (byte level and METS level) as "rule|file|offset|message" lines, for matching.
fn findings(report: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}|{}|{}|{}",
                f["rule"].as_str().unwrap(),
                f["file"].as_str().unwrap(),
                f["offset"],
                f["message"]
            )
        })
        .collect();
    for f in report["validation"]["findings"].as_array().unwrap() {
        if f["severity"] == "error" {
            out.push(format!(
                "{}|METS.xml|{}|{}",
                f["rule"].as_str().unwrap(),
                f["line"],
                f["message"]
            ));
        }
    }
    out
}

#[test]
fn clean_packages_are_intact() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, source) in [
        ("heritrix", repo().join("samples/heritrix-job")),
        ("pandas", repo().join("samples/pandas/40123/20040517-1412")),
    ] {
        let pkg = tmp.path().join(name);
        build(&source, &pkg);
        let (code, r) = audit(&pkg);
        assert_eq!(findings(&r), Vec::<String>::new(), "{name}");
        assert_eq!(code, 0, "{name}: {r}");
        assert_eq!(r["intact"], true);
        // Every record and bytestream the METS lists was checked.
        let mets = fs::read_to_string(pkg.join("METS.xml")).unwrap();
        let records = mets.matches("MIMETYPE=\"application/gzip\"").count() as u64;
        assert!(records > 10, "{name}: {records}");
        assert_eq!(r["records_checked"], records, "{name}");
        assert!(r["bytestreams_checked"].as_u64().unwrap() > 10, "{name}");
    }
}

#[test]
fn every_kind_of_damage_is_reported_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    build(&repo().join("samples/heritrix-job"), &clean);
    let mets = fs::read_to_string(clean.join("METS.xml")).unwrap();
    let c1 = href(&mets, "FILE-C00001");
    let c2 = href(&mets, "FILE-C00002");
    let r2 = "FILE-C00001-R000002";
    let r2_begin: u64 = file_attr(&mets, r2, "BEGIN").parse().unwrap();
    let r2_end: u64 = file_attr(&mets, r2, "END").parse().unwrap();
    let c1_sum = file_attr(&mets, "FILE-C00001", "CHECKSUM");

    type Damage = Box<dyn Fn(&Path)>;
    // (name, damage, substrings one finding must hold: rule, file, offset or words)
    let cases: Vec<(&str, Damage, Vec<String>)> = vec![
        (
            "bit flipped inside a record's compressed data",
            Box::new({
                let c1 = c1.clone();
                move |p: &Path| flip(&p.join(&c1), (r2_begin + r2_end) / 2)
            }),
            // A flip in literal payload bits shows first as a bytestream digest mismatch
            // ("fixity"), elsewhere as a gzip/deflate error ("range"): both at the record.
            vec![format!("|{c1}|{r2_begin}|")],
        ),
        (
            "bit flipped in a gzip header",
            Box::new({
                let c1 = c1.clone();
                move |p: &Path| flip(&p.join(&c1), r2_begin + 1)
            }),
            vec![format!("range|{c1}|{r2_begin}|")],
        ),
        (
            "bit flipped in the warcinfo record",
            Box::new({
                let c1 = c1.clone();
                move |p: &Path| flip(&p.join(&c1), 200)
            }),
            vec![format!("fixity|{c1}|null|"), "CHECKSUM".into()],
        ),
        (
            "truncated container",
            Box::new({
                let c1 = c1.clone();
                move |p: &Path| {
                    let f = fs::OpenOptions::new().write(true).open(p.join(&c1)).unwrap();
                    f.set_len(r2_begin + 10).unwrap();
                }
            }),
            vec![format!("fixity|{c1}|null|\"SIZE="), format!("range|{c1}|{r2_begin}|")],
        ),
        (
            "deleted container",
            Box::new({
                let c2 = c2.clone();
                move |p: &Path| fs::remove_file(p.join(&c2)).unwrap()
            }),
            vec![
                format!("fixity|{c2}|null|\"listed in the METS but not in the package"),
                format!("manifest|manifest-sha512.txt|"),
            ],
        ),
        (
            "extra unlisted file",
            Box::new(|p: &Path| fs::write(p.join("content/stray.bin"), b"x").unwrap()),
            vec!["unlisted|content/stray.bin|".into()],
        ),
        (
            "changed CHECKSUM in the METS",
            Box::new({
                let c1_sum = c1_sum.clone();
                move |p: &Path| {
                    let mut other = c1_sum.clone();
                    other.replace_range(0..1, if c1_sum.starts_with('0') { "1" } else { "0" });
                    edit(
                        &p.join("METS.xml"),
                        &format!("CHECKSUM=\"{c1_sum}\""),
                        &format!("CHECKSUM=\"{other}\""),
                    )
                }
            }),
            vec![format!("fixity|{c1}|null|\"CHECKSUM"), "manifest|manifest-sha512.txt|".into()],
        ),
        (
            "END moved by one",
            Box::new(move |p: &Path| {
                edit(
                    &p.join("METS.xml"),
                    &format!("BEGIN=\"{r2_begin}\" END=\"{r2_end}\""),
                    &format!("BEGIN=\"{r2_begin}\" END=\"{}\"", r2_end - 1),
                )
            }),
            vec![format!("range|{c1}|{r2_begin}|")],
        ),
        (
            "duplicated ID",
            Box::new(|p: &Path| {
                edit(&p.join("METS.xml"), "ID=\"FILE-C00002\"", "ID=\"FILE-C00001\"")
            }),
            vec!["|METS.xml|".into()],
        ),
        (
            "removed virus-check event",
            Box::new(|p: &Path| {
                let path = p.join("METS.xml");
                let text = fs::read_to_string(&path).unwrap();
                let at = text.find(">virus check</premis:eventType>").unwrap();
                let start = text[..at].rfind("<mets:digiprovMD").unwrap();
                let end = at + text[at..].find("</mets:digiprovMD>").unwrap() + 18;
                fs::write(&path, format!("{}{}", &text[..start], &text[end..])).unwrap();
            }),
            vec!["P5.5|METS.xml|".into()],
        ),
        (
            "manifest line changed",
            Box::new({
                let c1_sum = c1_sum.clone();
                move |p: &Path| edit(&p.join("manifest-sha512.txt"), &c1_sum[..20], &"0".repeat(20))
            }),
            vec![format!("manifest|manifest-sha512.txt|"), c1.clone()],
        ),
        (
            "swapped pair of containers",
            Box::new({
                let (c1, c2) = (c1.clone(), c2.clone());
                move |p: &Path| {
                    let t = p.join("swap.tmp");
                    fs::rename(p.join(&c1), &t).unwrap();
                    fs::rename(p.join(&c2), p.join(&c1)).unwrap();
                    fs::rename(&t, p.join(&c2)).unwrap();
                }
            }),
            vec![format!("fixity|{c1}|"), format!("fixity|{c2}|")],
        ),
    ];
    let mut failures = Vec::new();
    for (i, (name, damage, expect)) in cases.iter().enumerate() {
        let pkg = tmp.path().join(format!("damage-{i}"));
        copy_dir(&clean, &pkg);
        damage(&pkg);
        let (code, r) = audit(&pkg);
        let found = findings(&r);
        if code != 1 || r["intact"] != false {
            failures.push(format!("{name}: exit {code}, intact {}", r["intact"]));
        }
        for e in expect {
            if !found.iter().any(|f| f.contains(e.as_str())) {
                failures.push(format!("{name}: no finding with {e:?} in {found:#?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_unreadable_package_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let o = webaip(&["audit", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("METS.xml"));
}

/// Packages webaip did not write travel here as METS alone: they are audited at the METS and
/// PREMIS level, and their absent files become one finding per file group, not a crash.
#[test]
fn reference_packages_from_other_tools_are_audited_without_their_files() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = repo().join("../shared/xsd/examples/reference");
    let am = tmp.path().join("archivematica");
    fs::create_dir_all(&am).unwrap();
    fs::copy(reference.join("archivematica-aip-premis3.xml"), am.join("METS.xml")).unwrap();
    let (code, r) = audit(&am);
    assert_eq!(code, 1);
    let groups: Vec<String> =
        findings(&r).into_iter().filter(|f| f.contains("file group")).collect();
    // Three groups list files (original: 2, preservation: 1, submissionDocumentation: 1).
    assert_eq!(groups.len(), 3, "{groups:#?}");
    assert!(
        groups.iter().any(|g| g.contains("\\\"original\\\": none of its 2 file(s)")),
        "{groups:#?}"
    );
    assert!(!findings(&r).iter().any(|f| f.contains("not in the package")), "{r}");

    let bl = tmp.path().join("bl");
    fs::create_dir_all(&bl).unwrap();
    fs::copy(reference.join("bl-ukwa-sip-legal-deposit-premis2.xml"), bl.join("METS.xml")).unwrap();
    let o = webaip(&[
        "audit",
        "--json",
        "--profile",
        "bl-legacy",
        "--schemas",
        &schemas(),
        bl.to_str().unwrap(),
    ]);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &r[0];
    assert_eq!(r["validation"]["valid"], true, "{}", r["validation"]);
    let outside: Vec<&serde_json::Value> =
        r["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "location").collect();
    assert_eq!(outside.len(), 2, "{r}");
    assert!(outside.iter().all(|f| f["severity"] == "warning"));
}
