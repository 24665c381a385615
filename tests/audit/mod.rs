//! `webaip audit` on a clean package and on one copy per kind of damage: each damage must be
//! reported naming the right file (and, for byte damage, the record's offset), and the clean
//! package must have no finding at all.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::util::{Package, copy_tree, gen_arc, repo, sample, schemas, webaip, webaip_under};

pub(crate) mod foreign;
mod machine_faults;
mod references;
mod verdicts;

/// Packages `source` in full mode (every record and bytestream listed) into `out`.
fn build(source: &Path, out: &Path) {
    let o = package_full(source, out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn package_full(source: &Path, out: &Path) -> Output {
    Package::new().quiet().mode("full").run(out, source)
}

/// Audits `pkg`; returns the exit status and the JSON report of that one package.
fn audit(pkg: &Path) -> (i32, serde_json::Value) {
    audit_with(pkg, &[])
}

/// Audits `pkg` with extra arguments (`--deep`, `-j 1`).
fn audit_with(pkg: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["audit", "--json", "--schemas"];
    let schemas = schemas().display().to_string();
    args.push(&schemas);
    args.extend_from_slice(extra);
    args.push(pkg.to_str().unwrap());
    let o = webaip(&args);
    let code = o.status.code().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "no JSON: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (code, v["packages"][0].clone())
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
    for (name, source) in
        [("heritrix", sample("heritrix-job")), ("pandas", sample("pandas/40123/20040517-1412"))]
    {
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

        // --deep reads the records the METS does not list too (warcinfo), and verifies their
        // WARC digests; it reads as many records as the containers' PREMIS objects state.
        let (code, d) = audit_with(&pkg, &["--deep"]);
        assert_eq!(findings(&d), Vec::<String>::new(), "{name}");
        assert_eq!(code, 0, "{name}: {d}");
        assert_eq!(d["deep"], true);
        let read = d["records_read"].as_u64().unwrap();
        assert_eq!(read, stated_records(&mets), "{name}");
        assert!(read > records, "{name}: {read} read, {records} listed");
        assert!(d["warc_digests_checked"].as_u64().unwrap() >= read, "{name}: {d}");
    }
}

/// A second METS document inside a package that claims webaip's profile is one more unlisted
/// file (an error): only beside a document that does not claim it is another METS a package of
/// its own (`foreign.rs`).
#[test]
fn a_stray_mets_inside_a_webaip_package_is_unlisted() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    build(&sample("heritrix-job"), &pkg);
    fs::copy(pkg.join("METS.xml"), pkg.join("METS-copy.xml")).unwrap();
    let (code, r) = audit(&pkg);
    assert_eq!(code, 1, "{r:#}");
    let f = findings(&r);
    assert!(f.iter().any(|f| f.starts_with("unlisted|METS-copy.xml|")), "{f:#?}");
}

/// The sum of the "WARC records" significant properties of the METS.
fn stated_records(mets: &str) -> u64 {
    mets.split("<premis:significantPropertiesType>WARC records</premis:significantPropertiesType>")
        .skip(1)
        .map(|rest| {
            let v = &rest[rest.find("Value>").unwrap() + 6..];
            v[..v.find('<').unwrap()].parse::<u64>().unwrap()
        })
        .sum()
}

#[test]
fn every_kind_of_damage_is_reported_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    build(&sample("heritrix-job"), &clean);
    let mets = fs::read_to_string(clean.join("METS.xml")).unwrap();
    let c1 = href(&mets, "FILE-C00001");
    let c2 = href(&mets, "FILE-C00002");
    let r2 = "FILE-C00001-R000002";
    let r2_begin: u64 = file_attr(&mets, r2, "BEGIN").parse().unwrap();
    let r2_end: u64 = file_attr(&mets, r2, "END").parse().unwrap();
    let c1_sum = file_attr(&mets, "FILE-C00001", "CHECKSUM");

    let last = last_record(&mets, "FILE-C00001");
    let last_begin: u64 = file_attr(&mets, &last, "BEGIN").parse().unwrap();

    type Damage = Box<dyn Fn(&Path)>;
    // (name, damage, substrings one finding must hold: rule, file, offset or words). Every
    // case is audited with and without --deep; cases named "deep: ..." only with --deep, which
    // alone can see them.
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
            // The warcinfo record has no <file>: only a deep walk places the damage in it.
            "deep: bit flipped in the warcinfo record, located",
            Box::new({
                let c1 = c1.clone();
                move |p: &Path| flip(&p.join(&c1), 200)
            }),
            vec![format!("|{c1}|0|")],
        ),
        (
            "deep: record count stated in PREMIS changed",
            Box::new(|p: &Path| {
                let path = p.join("METS.xml");
                let text = fs::read_to_string(&path).unwrap();
                let key = "<premis:significantPropertiesValue>";
                let at = text.find(key).unwrap() + key.len();
                let end = at + text[at..].find('<').unwrap();
                let n: u64 = text[at..end].parse().unwrap();
                fs::write(&path, format!("{}{}{}", &text[..at], n + 1, &text[end..])).unwrap();
            }),
            vec![format!("records|{c1}|null|"), "states".into()],
        ),
        (
            // Well-formed gzip, a well-formed record, every METS and manifest checksum updated
            // to match: only the WARC block digest inside the record tells.
            "deep: WARC-Block-Digest rewritten, METS and manifest updated to match",
            Box::new({
                let (c1, last) = (c1.clone(), last.clone());
                move |p: &Path| rewrite_block_digest(p, &c1, &last)
            }),
            vec![format!("warc-digest|{c1}|{last_begin}|"), "WARC-Block-Digest".into()],
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
            // The SHA-256 webaip states of a content container, beside its SHA-512, is checked
            // in the same read.
            "changed SHA-256 in a container's PREMIS object",
            Box::new({
                let c1 = c1.clone();
                move |p: &Path| {
                    let path = p.join("METS.xml");
                    let text = fs::read_to_string(&path).unwrap();
                    let object = text.find(&format!(">{c1}</premis:objectIdentifierValue>"));
                    let object = object.unwrap_or_else(|| panic!("no object of {c1}"));
                    let algorithm = ">SHA-256</premis:messageDigestAlgorithm>";
                    let at = object + text[object..].find(algorithm).expect("its SHA-256");
                    let key = "<premis:messageDigest>";
                    let at = at + text[at..].find(key).unwrap() + key.len();
                    let first = if text[at..].starts_with('0') { "1" } else { "0" };
                    fs::write(&path, format!("{}{first}{}", &text[..at], &text[at + 1..])).unwrap();
                }
            }),
            vec![format!("fixity|{c1}|null|\"PREMIS messageDigest"), "(SHA-256)".into()],
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
    assert!(cases.len() >= 15);
    let mut failures = Vec::new();
    for (i, (name, damage, expect)) in cases.iter().enumerate() {
        let pkg = tmp.path().join(format!("damage-{i}"));
        copy_tree(&clean, &pkg);
        damage(&pkg);
        let modes: &[&[&str]] =
            if name.starts_with("deep:") { &[&["--deep"]] } else { &[&[], &["--deep"]] };
        for mode in modes {
            let (code, r) = audit_with(&pkg, mode);
            let found = findings(&r);
            // A finding about a METS <file> names the line of that element.
            let mets_lines: Vec<String> = fs::read_to_string(pkg.join("METS.xml"))
                .unwrap()
                .lines()
                .map(String::from)
                .collect();
            for f in r["findings"].as_array().unwrap() {
                if let (Some(id), Some(line)) = (f["mets_id"].as_str(), f["mets_line"].as_u64()) {
                    let text = &mets_lines[line as usize - 1];
                    if !text.contains(&format!("ID=\"{id}\"")) {
                        failures.push(format!("{name}: line {line} is not <file {id}>: {text}"));
                    }
                }
            }
            if code != 1 || r["intact"] != false {
                failures.push(format!("{name} {mode:?}: exit {code}, intact {}", r["intact"]));
            }
            for e in expect {
                if !found.iter().any(|f| f.contains(e.as_str())) {
                    failures.push(format!("{name} {mode:?}: no finding with {e:?} in {found:#?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The ID of the record `<file>` with the highest BEGIN inside container `container`.
fn last_record(mets: &str, container: &str) -> String {
    let prefix = format!("<mets:file ID=\"{container}-R");
    let mut best = (0u64, String::new());
    for (at, _) in mets.match_indices(&prefix) {
        let id_start = at + "<mets:file ID=\"".len();
        let id = &mets[id_start..id_start + mets[id_start..].find('"').unwrap()];
        if id.ends_with("-P") {
            continue;
        }
        let begin: u64 = file_attr(mets, id, "BEGIN").parse().unwrap();
        if begin >= best.0 {
            best = (begin, id.to_string());
        }
    }
    best.1
}

/// Rewrites the last record of `container` with a different (wrong) WARC-Block-Digest,
/// recompressed, and updates everything outside the record to match: the record's END, the
/// container's SIZE and CHECKSUM (METS and PREMIS), the SHA-256 its PREMIS object states and
/// the manifest.
fn rewrite_block_digest(pkg: &Path, container: &str, record: &str) {
    use std::io::{Read, Write};
    let mets_path = pkg.join("METS.xml");
    let mets = fs::read_to_string(&mets_path).unwrap();
    let begin: usize = file_attr(&mets, record, "BEGIN").parse().unwrap();
    let end: usize = file_attr(&mets, record, "END").parse().unwrap();
    let path = pkg.join(container);
    let bytes = fs::read(&path).unwrap();
    assert_eq!(end + 1, bytes.len(), "the last record ends the container");
    let mut record_bytes = Vec::new();
    flate2::read::GzDecoder::new(&bytes[begin..]).read_to_end(&mut record_bytes).unwrap();
    let text = String::from_utf8_lossy(&record_bytes).into_owned();
    let key = "WARC-Block-Digest: sha1:";
    let at = text.find(key).expect("a block digest") + key.len();
    let mut changed = record_bytes.clone();
    changed[at] = if changed[at] == b'A' { b'B' } else { b'A' };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    gz.write_all(&changed).unwrap();
    let member = gz.finish().unwrap();
    let mut out = bytes[..begin].to_vec();
    out.extend_from_slice(&member);
    fs::write(&path, &out).unwrap();

    let old_sum = file_attr(&mets, &container_id(&mets, container), "CHECKSUM");
    let new_sum = crate::util::sha512_hex(&out);
    let (old_size, new_size) = (bytes.len(), out.len());
    let sha256 = |b: &[u8]| crate::util::hex(&<sha2::Sha256 as sha2::Digest>::digest(b));
    let mets = mets
        .replace(&old_sum, &new_sum)
        .replace(&sha256(&bytes), &sha256(&out))
        .replacen(
            &format!("BEGIN=\"{begin}\" END=\"{end}\""),
            &format!("BEGIN=\"{begin}\" END=\"{}\"", out.len() - 1),
            1,
        )
        .replace(&format!("SIZE=\"{old_size}\""), &format!("SIZE=\"{new_size}\""))
        .replace(
            &format!("<premis:size>{old_size}</premis:size>"),
            &format!("<premis:size>{new_size}</premis:size>"),
        );
    fs::write(&mets_path, &mets).unwrap();
    // The manifest line of the METS changes too.
    let manifest = fs::read_to_string(pkg.join("manifest-sha512.txt")).unwrap();
    let old_mets_sum =
        manifest.lines().find(|l| l.ends_with("  METS.xml")).map(|l| l[..128].to_string()).unwrap();
    let manifest = manifest
        .replace(&old_sum, &new_sum)
        .replace(&old_mets_sum, &crate::util::sha512_hex(mets.as_bytes()));
    fs::write(pkg.join("manifest-sha512.txt"), manifest).unwrap();
}

/// The ID of the top-level `<file>` whose FLocat is `href`.
fn container_id(mets: &str, href: &str) -> String {
    let at = mets.find(&format!("xlink:href=\"{href}\"")).unwrap();
    let open = mets[..at].rfind("<mets:file ID=\"").unwrap() + "<mets:file ID=\"".len();
    mets[open..open + mets[open..].find('"').unwrap()].to_string()
}

/// A container big enough to be read as several spans in parallel (`--deep`): a clean one is
/// intact; with every record's BEGIN off by one, every walk but the first starts on a wrong
/// offset, and the first must read on through the whole container so no record goes unread;
/// a damaged record in a middle span stops only that span.
#[test]
fn deep_reads_every_record_of_a_container_split_into_spans() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("IAH-20240315103000-00000-spans.arc.gz");
    gen_arc("bench", &arc, &["--size", "12M"]);
    let clean = tmp.path().join("clean");
    build(&arc, &clean);
    let mets = fs::read_to_string(clean.join("METS.xml")).unwrap();
    let stated = stated_records(&mets);
    let c1 = href(&mets, "FILE-C00001");
    let size = fs::metadata(clean.join(&c1)).unwrap().len();
    assert!(size > 12 << 20, "{size}: at least three spans");
    for jobs in ["1", "2"] {
        let (code, r) = audit_with(&clean, &["--deep", "-j", jobs]);
        assert_eq!((code, findings(&r)), (0, vec![]), "-j {jobs}");
        assert_eq!(r["records_read"], stated, "-j {jobs}");
    }

    // Every BEGIN moved by one.
    let shifted = tmp.path().join("shifted");
    copy_tree(&clean, &shifted);
    let mut text = mets.clone();
    let mut described = 0;
    let mut begins = Vec::new();
    for (at, _) in mets.match_indices("<mets:file ID=\"FILE-C00001-R") {
        let id_start = at + "<mets:file ID=\"".len();
        let id = &mets[id_start..id_start + mets[id_start..].find('"').unwrap()];
        if id.ends_with("-P") {
            continue;
        }
        described += 1;
        begins.push(file_attr(&mets, id, "BEGIN").parse::<u64>().unwrap());
    }
    for b in &begins {
        text = text.replacen(
            &format!(" BEGIN=\"{b}\" END="),
            &format!(" BEGIN=\"{}\" END=", b + 1),
            1,
        );
    }
    fs::write(shifted.join("METS.xml"), &text).unwrap();
    let (code, r) = audit_with(&shifted, &["--deep"]);
    assert_eq!(code, 1);
    assert_eq!(r["records_read"], stated, "the first walk read on through every wrong boundary");
    let found = findings(&r);
    let ranges = found
        .iter()
        .filter(|f| f.starts_with("range|") && f.contains("no WARC record starts there"))
        .count();
    assert_eq!(ranges, described, "{found:#?}");
    assert!(
        !found.iter().any(|f| f.contains("not checked") || f.starts_with("records|")),
        "{found:#?}"
    );

    // Only the BEGIN where the second span starts is wrong (spans are 4 MiB with -j 2 on this
    // container): the first walk reads on past it to the third span's start, and every record
    // is still read.
    let mut span_start = None;
    for &b in &begins {
        if b >= 4 << 20 {
            span_start = Some(b);
            break;
        }
    }
    let second = span_start.expect("a second span");
    let one = tmp.path().join("one-wrong-boundary");
    copy_tree(&clean, &one);
    let text = mets.replacen(
        &format!(" BEGIN=\"{second}\" END="),
        &format!(" BEGIN=\"{}\" END=", second + 1),
        1,
    );
    fs::write(one.join("METS.xml"), &text).unwrap();
    let (code, r) = audit_with(&one, &["--deep", "-j", "2"]);
    assert_eq!(code, 1);
    assert_eq!(r["records_read"], stated, "no record lost behind the wrong boundary");
    // (The METS itself also fails: the record's SIZE no longer matches, nor the manifest.)
    let found: Vec<String> =
        findings(&r).into_iter().filter(|f| f.contains(&format!("|{c1}|"))).collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with(&format!("range|{c1}|{}|", second + 1)), "{found:#?}");

    // A damaged member in the middle of the container costs that record only: reading
    // resumes where the METS says the next record begins.
    let damaged = tmp.path().join("damaged");
    copy_tree(&clean, &damaged);
    let middle = begins[begins.len() / 2];
    let next = begins[begins.len() / 2 + 1];
    flip(&damaged.join(&c1), middle + 2); // the gzip method byte
    let (code, r) = audit_with(&damaged, &["--deep"]);
    assert_eq!(code, 1);
    let found = findings(&r);
    assert!(
        found.iter().any(|f| f.starts_with(&format!("range|{c1}|{middle}|"))
            && f.contains(&format!("bytes {middle}..={} are not checked", next - 1))),
        "{found:#?}"
    );
    assert_eq!(r["records_read"], stated - 1);
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
        &schemas().display().to_string(),
        bl.to_str().unwrap(),
    ]);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &r["packages"][0];
    assert_eq!(r["validation"]["valid"], true, "{}", r["validation"]);
    // Its two files are kept elsewhere (URLs) and it has no manifest, which its profile does
    // not ask for: three things not checkable here, nothing damaged, a verdict of its own.
    assert_eq!(o.status.code(), Some(0), "{r}");
    assert_eq!(r["verdict"], "partial", "{r}");
    assert_eq!(r["intact"], false);
    assert_eq!(r["findings"].as_array().unwrap().len(), 0, "{r}");
    let unchecked = r["unchecked"].as_array().unwrap();
    assert_eq!(unchecked.len(), 3, "{r}");
    assert_eq!(
        unchecked.iter().filter(|u| u["reason"].as_str().unwrap().contains("URL")).count(),
        2
    );
    assert!(unchecked.iter().any(|u| u["file"] == "manifest-sha512.txt"));
    // Counts are of what was checked: two files listed, none read.
    assert_eq!((r["files_listed"].as_u64(), r["files_checked"].as_u64()), (Some(2), Some(0)));
    let text = webaip(&["audit", "--profile", "bl-legacy", bl.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("NO DAMAGE FOUND IN WHAT COULD BE CHECKED"), "{text}");
    assert!(text.contains("not checkable here"), "{text}");
}

/// The METS document itself may be named: its folder is the package. Paths that are no
/// package get a sentence naming them, not an OS error number.
#[test]
fn a_mets_path_audits_its_package_and_bad_paths_get_sentences() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    build(&sample("heritrix-job"), &pkg);
    let (code, r) = audit(&pkg.join("METS.xml"));
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["verdict"], "intact");
    assert_eq!(r["files_checked"], r["files_listed"]);
    assert!(r["files_checked"].as_u64().unwrap() >= 3);

    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    for (path, words) in [
        (empty.clone(), "is a folder without METS.xml"),
        (tmp.path().join("nothing-here"), "does not exist"),
    ] {
        let o = webaip(&["audit", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(path.to_str().unwrap()) && err.contains(words), "{err}");
        assert!(!err.contains("os error"), "{err}");
    }
}

/// Real WARCs written by other tools (gowarc, jwarc, JWAT, NetarchiveSuite, pywb, wget, warcio),
/// packaged (copied byte-exact) and audited with `--deep`: webaip reads as many records as
/// `warcio check` does, and the records whose WARC digests it rejects are exactly those
/// warcio rejects.
#[test]
fn deep_audit_agrees_with_warcio_check_on_corpus_warcs() {
    let tmp = tempfile::tempdir().unwrap();
    let warcio = crate::util::oracle_python().with_file_name("warcio");
    let mut inputs: Vec<_> = fs::read_dir(repo().join("../shared/corpus/warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".warc"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 10);
    let mut rejected = 0;
    for input in &inputs {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let pkg = tmp.path().join(&name);
        // A WARC whose records audit --deep will reject is packaged as received, reported,
        // and the run exits 1 (issue 13: accepting means agreeing); the package is made.
        let o = package_full(input, &pkg);
        assert!(
            matches!(o.status.code(), Some(0 | 1)) && pkg.join("METS.xml").is_file(),
            "{}: {}",
            input.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        // The METS says what each record range is (a gzip member, or a plain record of an
        // uncompressed WARC), and Python's zlib agrees (issue 14).
        let oracle = Command::new(crate::util::oracle_python())
            .arg(repo().join("tests/oracle/check_package.py"))
            .arg(&pkg)
            .output()
            .unwrap();
        assert!(
            oracle.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&oracle.stdout),
            String::from_utf8_lossy(&oracle.stderr)
        );
        let (code, r) = audit_with(&pkg, &["--deep"]);

        let o = Command::new(&warcio).args(["check", "-v"]).arg(input).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let (mut records, mut failed) = (0u64, std::collections::BTreeSet::new());
        let mut at = 0u64;
        for line in text.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("offset ") {
                at = rest.split(' ').next().unwrap().parse().unwrap();
                records += 1;
            } else if line.contains("failed") || line.contains("unknown hash") {
                failed.insert(at);
            }
        }
        let ours: std::collections::BTreeSet<u64> = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "warc-digest" && f["severity"] == "error")
            .map(|f| f["offset"].as_u64().unwrap())
            .collect();
        assert_eq!(ours, failed, "{name}: digests webaip rejects vs warcio: {text}");
        // warcio stops at a WARC compressed as one gzip stream (gowarc's); webaip reads on.
        let warcio_gave_up = text.contains("non-chunked gzip")
            || String::from_utf8_lossy(&o.stderr).contains("non-chunked gzip");
        let read = r["records_read"].as_u64().unwrap();
        if warcio_gave_up {
            assert!(read > records, "{name}: {read} read, warcio {records}");
        } else {
            assert_eq!(read, records, "{name}");
        }
        let others: Vec<&serde_json::Value> = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error" && f["rule"] != "warc-digest")
            .collect();
        assert!(others.is_empty(), "{name}: {others:#?}");
        assert_eq!(code, if failed.is_empty() { 0 } else { 1 }, "{name}");
        rejected += failed.len();
    }
    assert!(rejected >= 4, "the corpus holds a file with bad digests");
}

/// A PANDAS package keeps the harvested originals of the pages it rewrote (group `Original`):
/// damage to an original is found and named, with or without --deep, as its own bytestream.
#[test]
fn a_damaged_original_of_a_transformed_page_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pandas");
    build(&sample("pandas/40123/20040517-1412"), &pkg);
    let mets = fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let at = mets.find("<mets:fileGrp USE=\"Original\"").expect("an Original group");
    let group = &mets[at..];
    let first = &group[group.find("<mets:file ID=\"").unwrap() + 15..];
    let container_id = &first[..first.find('"').unwrap()];
    let original = href(&mets, container_id);
    let record = format!("{container_id}-R000001");
    let begin: u64 = file_attr(&mets, &record, "BEGIN").parse().unwrap();
    let end: u64 = file_attr(&mets, &record, "END").parse().unwrap();
    flip(&pkg.join(&original), (begin + end) / 2);
    for mode in [&[][..], &["--deep"][..]] {
        let (code, r) = audit_with(&pkg, mode);
        assert_eq!(code, 1, "{mode:?}");
        let found = findings(&r);
        assert!(
            found.iter().any(|f| f.contains(&format!("|{original}|{begin}|"))),
            "{mode:?}: {found:#?}"
        );
    }
}

/// Runs `webaip` under `strace -f` (when the machine has strace) and returns its exit code, its
/// stdout and the trace of every call that names a file.
fn webaip_traced(args: &[&str], trace: &Path) -> (Option<i32>, Vec<u8>, Option<String>) {
    let has_strace = Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success());
    let o = if has_strace {
        let mut strace = Command::new("strace");
        strace.args(["-f", "-qq", "-e", "trace=%file,%desc", "-o"]).arg(trace);
        webaip_under(strace).args(args).output().unwrap()
    } else {
        webaip(args)
    };
    let log = has_strace.then(|| fs::read_to_string(trace).unwrap());
    (o.status.code(), o.stdout, log)
}

/// Manifest lines are input: a line naming `../` or an absolute path, `/dev/zero` or a file
/// no `<file>` of the METS lists is a finding, and audit opens none of them (seen by strace):
/// it neither prints the SHA-512 of a file outside the package nor calls the package INTACT.
#[test]
fn manifest_lines_that_leave_the_package_are_findings_and_never_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    build(&sample("heritrix-job"), &pkg);
    let secret = tmp.path().join("secret.txt");
    fs::write(&secret, "not for the audit\n").unwrap();
    let secret_sum = crate::util::sha512_hex(b"not for the audit\n");
    fs::write(pkg.join("stray.txt"), "in the package but not in the METS\n").unwrap();
    let manifest = pkg.join("manifest-sha512.txt");
    let mut text = fs::read_to_string(&manifest).unwrap();
    for name in [
        "../secret.txt",
        &secret.display().to_string(),
        "/dev/zero",
        "logs/../../secret.txt",
        "stray.txt",
    ] {
        text.push_str(&format!("{secret_sum}  {name}\n"));
    }
    fs::write(&manifest, text).unwrap();

    let schemas = schemas().display().to_string();
    let args = ["audit", "--json", "--schemas", &schemas, pkg.to_str().unwrap()];
    let (code, stdout, trace) = webaip_traced(&args, &tmp.path().join("trace"));
    assert_eq!(code, Some(1));
    let r: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let r = &r["packages"][0];
    assert_eq!(r["intact"], false);
    let f = findings(r);
    for (name, words) in [
        ("\\\"../secret.txt\\\"", "\\\"..\\\" segment"),
        (&format!("\\\"{}\\\"", secret.display()), "is an absolute path"),
        ("\\\"/dev/zero\\\"", "is an absolute path"),
        ("\\\"logs/../../secret.txt\\\"", "\\\"..\\\" segment"),
        ("\\\"stray.txt\\\"", "no <file> of the METS lists"),
    ] {
        assert!(
            f.iter().any(|x| x.starts_with("manifest|manifest-sha512.txt|")
                && x.contains(name)
                && x.contains(words)),
            "{name}: {f:#?}"
        );
    }
    let shown = String::from_utf8_lossy(&stdout);
    assert_eq!(shown.matches(&secret_sum).count(), 0, "a hash of a file outside was printed");
    if let Some(trace) = trace {
        for outside in ["secret.txt", "/dev/zero"] {
            assert!(!trace.contains(outside), "audit touched {outside}:\n{trace}");
        }
    }
}

/// A package holding a symbolic link (listed or not), a FIFO or a linked METS is not
/// self-contained: each is reported by path, nothing is read through the link (strace), the
/// FIFO does not block the audit, and the package is not INTACT.
#[test]
fn links_and_fifos_in_a_package_are_refused_by_path() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    build(&sample("heritrix-job"), &pkg);
    let mets = fs::read_to_string(pkg.join("METS.xml")).unwrap();
    // A listed log replaced by a link to an identical copy outside the package.
    let log = mets
        .split("xlink:href=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .find(|h| h.starts_with("logs/"))
        .expect("a listed log")
        .to_string();
    let outside = tmp.path().join("outside-copy.log");
    fs::copy(pkg.join(&log), &outside).unwrap();
    fs::remove_file(pkg.join(&log)).unwrap();
    std::os::unix::fs::symlink(&outside, pkg.join(&log)).unwrap();
    // An unlisted FIFO and an unlisted link to /etc/passwd.
    assert!(Command::new("mkfifo").arg(pkg.join("logs/pipe")).status().unwrap().success());
    std::os::unix::fs::symlink("/etc/passwd", pkg.join("passwd")).unwrap();

    let schemas = schemas().display().to_string();
    let args = ["audit", "--json", "--schemas", &schemas, pkg.to_str().unwrap()];
    let (code, stdout, trace) = webaip_traced(&args, &tmp.path().join("trace"));
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&stdout));
    let r: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let r = &r["packages"][0];
    assert_eq!(r["intact"], false);
    let f = findings(r);
    let has = |file: &str, words: &str| {
        f.iter().any(|x| x.contains(&format!("|{file}|")) && x.contains(words))
    };
    assert!(has(&log, "symbolic link"), "{f:#?}");
    assert!(has("logs/pipe", "is a FIFO"), "{f:#?}");
    assert!(has("passwd", "is a symbolic link"), "{f:#?}");
    if let Some(trace) = trace {
        assert!(!trace.contains("outside-copy.log"), "read through the link:\n{trace}");
        assert!(!trace.contains("/etc/passwd"), "read through the link:\n{trace}");
    }

    // A METS that is itself a link: the package cannot be audited (exit 2), and says why.
    let linked = tmp.path().join("linked");
    fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(pkg.join("METS.xml"), linked.join("METS.xml")).unwrap();
    let o = webaip(&["audit", linked.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("symbolic link"), "{o:?}");
}
