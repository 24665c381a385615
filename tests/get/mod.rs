//! `webaip get` against warcio: every record cdxj-indexer indexes in the corpus, got by URL
//! and time through the index and by container and offset, is byte for byte what warcio reads
//! at the same offset; `--at` picks the capture pywb would; several indexes work as one; a
//! line naming a missing container, a wrong offset or a hostile name is an error naming the
//! container and the offset, and never yields another record.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::CdxjLine;
use sha2::{Digest, Sha256};

use crate::util::{corpus, oracle_python, repo, webaip_command};

mod access;

/// The corpus's WARC files (by name: `.warc`, `.warc.gz`).
fn corpus_warcs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(corpus().join("warc"))
        .expect("corpus/warc readable")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".warc") || n.ends_with(".warc.gz"))
        .collect();
    v.sort();
    v
}

/// cdxj-indexer's lines for `names` (files in `dir`, named relative to it), sorted bytewise.
fn cdxj_indexer(dir: &Path, names: &[&str]) -> Vec<String> {
    let o = Command::new(repo().join(".venv/bin/cdxj-indexer"))
        .current_dir(dir)
        .args(names)
        .output()
        .expect("cdxj-indexer runs");
    assert!(o.status.success(), "cdxj-indexer: {}", String::from_utf8_lossy(&o.stderr));
    let mut lines: Vec<String> =
        String::from_utf8(o.stdout).expect("UTF-8").lines().map(str::to_string).collect();
    lines.sort();
    lines
}

fn write_index(path: &Path, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("index written");
}

fn get(args: &[&str]) -> Output {
    webaip_command().arg("get").args(args).output().expect("webaip runs")
}

fn sha256(bytes: &[u8]) -> String {
    crate::util::hex(&Sha256::digest(bytes))
}

/// What warcio reads at each line's offset.
#[derive(serde::Deserialize)]
struct AtOffset {
    #[serde(rename = "type")]
    rec_type: String,
    payload_sha256: String,
    stored_sha256: String,
}

fn warcio_at_offsets(index: &Path, root: &Path) -> Vec<AtOffset> {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/get/warcio_at_offsets.py"))
        .arg(index)
        .arg(root)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "warcio: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).expect("UTF-8");
    text.lines().map(|l| serde_json::from_str(l).expect("warcio's JSON")).collect()
}

/// Every indexed record of every corpus WARC: its payload by URL and time through the index
/// (where the key and time name one line), by container and offset, and the record with
/// `--record`, each byte-equal to what warcio reads at that offset.
#[test]
fn payloads_equal_warcio_at_every_indexed_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = corpus().join("warc");
    let warcs = corpus_warcs();
    let names: Vec<&str> = warcs.iter().map(String::as_str).collect();
    let lines = cdxj_indexer(&dir, &names);
    assert!(lines.len() > 600, "the corpus indexes to {} lines", lines.len());
    let index = tmp.path().join("corpus.cdxj");
    write_index(&index, &lines);
    let want = warcio_at_offsets(&index, &dir);
    assert_eq!(want.len(), lines.len());
    let entries: Vec<CdxjLine> = lines.iter().map(|l| CdxjLine::parse(l)).collect();
    let (index_arg, dir_arg) = (index.to_str().unwrap(), dir.to_str().unwrap());
    let zipnum = write_zipnum(&tmp.path().join("zipnum"), &lines, 5);
    let zipnum_arg = zipnum.to_str().unwrap();
    let (mut by_url, mut revisits_followed) = (0, 0);
    for (i, (e, w)) in entries.iter().zip(&want).enumerate() {
        let container = dir.join(&e.filename);
        let offset = e.offset.to_string();
        let o = get(&["--container", container.to_str().unwrap(), "--offset", &offset]);
        assert!(
            o.status.success(),
            "{} {offset}: {}",
            e.filename,
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            sha256(&o.stdout),
            w.payload_sha256,
            "{} at {offset} ({})",
            e.filename,
            w.rec_type
        );
        // By URL and time: among lines of one key and time, the first in the index, as pywb
        // picks it (a request and its response share both).
        let first = entries.iter().position(|x| x.key == e.key && x.timestamp == e.timestamp);
        if first != Some(i) {
            continue;
        }
        // The line's key is cdxj-indexer's SURT of the URL, which the lookup by URL finds
        // only where webaip's SURT agrees (src/index/surt.rs checks every corpus URL).
        let args = ["--index", index_arg, "--package", dir_arg, &e.url, "--at", &e.timestamp];
        let o = get(&args);
        // The same through a ZipNum index of the same lines (blocks of 5).
        let z = get(&["--index", zipnum_arg, "--package", dir_arg, &e.url, "--at", &e.timestamp]);
        assert_eq!((&z.status.code(), &z.stdout), (&o.status.code(), &o.stdout), "{}", e.url);
        let why = String::from_utf8_lossy(&o.stderr);
        if w.rec_type == "revisit" {
            // By URL a revisit gives its original's payload, whose SHA-1 the line states,
            // where the corpus holds the original; else an error saying it is elsewhere.
            match o.status.success() {
                true => assert_eq!(Some(sha1_label(&o.stdout)), e.digest, "{}", e.url),
                false => assert!(why.contains("is in none of the indexes"), "{why}"),
            }
            revisits_followed += u64::from(o.status.success());
        } else {
            assert!(o.status.success(), "{}: {why}", e.url);
            assert_eq!(sha256(&o.stdout), w.payload_sha256, "{} at {}", e.url, e.timestamp);
        }
        let o = get(&[&args[..], &["--record"]].concat());
        assert_eq!(sha256(&o.stdout), w.stored_sha256, "--record {}", e.url);
        by_url += 1;
    }
    assert!(by_url > 100, "only {by_url} records were got by URL");
    assert!(revisits_followed > 0, "no revisit's original was found");
}

/// A ZipNum index of sorted `lines` in blocks of `per_block` (`DIR/all.idx`, `.cdx.gz`,
/// `.loc`), written here as pywb's format describes it, not by webaip.
fn write_zipnum(dir: &Path, lines: &[String], per_block: usize) -> PathBuf {
    use std::io::Write;
    std::fs::create_dir_all(dir).unwrap();
    let (mut data, mut idx) = (Vec::new(), String::new());
    for (n, block) in lines.chunks(per_block).enumerate() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for l in block {
            writeln!(gz, "{l}").unwrap();
        }
        let member = gz.finish().unwrap();
        let first: Vec<&str> = block[0].splitn(3, ' ').take(2).collect();
        idx.push_str(&format!(
            "{}\tall\t{}\t{}\t{}\n",
            first.join(" "),
            data.len(),
            member.len(),
            n + 1
        ));
        data.extend(member);
    }
    std::fs::write(dir.join("all.cdx.gz"), data).unwrap();
    std::fs::write(dir.join("all.loc"), "all\tall.cdx.gz\n").unwrap();
    std::fs::write(dir.join("all.idx"), idx).unwrap();
    dir.join("all.idx")
}

/// `sha1:BASE32` of `bytes`, as an index line states a payload digest.
fn sha1_label(bytes: &[u8]) -> String {
    use sha1::Digest;
    format!("sha1:{}", data_encoding::BASE32.encode(&sha1::Sha1::digest(bytes)))
}

/// Two corpus files indexed apart, used together: `--at` picks the capture closest in time as
/// pywb reads a timestamp (a short one is the end of its period), the latest by default.
#[test]
fn at_picks_the_closest_capture_across_several_indexes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = corpus().join("warc");
    let mut args: Vec<String> = Vec::new();
    for name in ["warcio-example.warc.gz", "pywb-dupes.warc.gz"] {
        let index = tmp.path().join(format!("{name}.cdxj"));
        write_index(&index, &cdxj_indexer(&dir, &[name]));
        args.extend(["--index".into(), index.to_str().unwrap().into()]);
    }
    args.extend(["--package".into(), dir.to_str().unwrap().into(), "--record".into()]);
    // The records of com,example)/ : (date, container, offset), from the corpus's index.
    let date_of = |at: Option<&str>| {
        let mut a = args.clone();
        a.push("http://example.com/".into());
        if let Some(at) = at {
            a.extend(["--at".into(), at.into()]);
        }
        let o = webaip_command().arg("get").args(&a).output().unwrap();
        assert!(o.status.success(), "{at:?}: {}", String::from_utf8_lossy(&o.stderr));
        let mut rec = Vec::new();
        let mut gz = flate2::read::MultiGzDecoder::new(&o.stdout[..]);
        std::io::Read::read_to_end(&mut gz, &mut rec).expect("a gzip member");
        let text = String::from_utf8_lossy(&rec);
        let date = text.lines().find_map(|l| l.strip_prefix("WARC-Date: "));
        date.expect("a WARC-Date").trim().to_string()
    };
    assert_eq!(date_of(None), "2017-03-06T04:03:48Z");
    assert_eq!(date_of(Some("2014")), "2014-01-27T17:12:51Z");
    assert_eq!(date_of(Some("20140127171225")), "2014-01-27T17:12:00Z");
    assert_eq!(date_of(Some("20140127171226")), "2014-01-27T17:12:51Z");
    assert_eq!(date_of(Some("201703060403")), "2017-03-06T04:03:48Z");
    assert_eq!(date_of(Some("2017030604")), "2017-03-06T04:03:48Z");
    assert_eq!(date_of(Some("20170306040206")), "2017-03-06T04:02:06Z");
    assert_eq!(date_of(Some("1996")), "2014-01-27T17:12:00Z");
}

/// A package folder holding one corpus container, its index beside it.
struct Fixture {
    _tmp: tempfile::TempDir,
    package: PathBuf,
    lines: Vec<String>,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().join("pkg");
    std::fs::create_dir_all(package.join("content")).unwrap();
    let name = "content/warcio-example.warc.gz";
    std::fs::copy(corpus().join("warc/warcio-example.warc.gz"), package.join(name)).unwrap();
    // cdxj-indexer names the file without its folder; a package's index names it in the package.
    let lines = cdxj_indexer(&package, &[name])
        .into_iter()
        .map(|l| l.replace("\"warcio-example.warc.gz\"", &format!("\"{name}\"")))
        .collect();
    Fixture { _tmp: tmp, package, lines }
}

impl Fixture {
    /// `webaip get http://example.com/ --at 20170306040206` through an index of `lines`,
    /// writing to `-o`; the output, and whether the output file exists after.
    fn get_with(&self, lines: &[String]) -> (Output, bool) {
        let index = self.package.with_extension("cdxj");
        write_index(&index, lines);
        let out = self.package.with_extension("out");
        let _ = std::fs::remove_file(&out);
        let o = get(&[
            "--index",
            index.to_str().unwrap(),
            "--package",
            self.package.to_str().unwrap(),
            "http://example.com/",
            "--at",
            "20170306040206",
            "-o",
            out.to_str().unwrap(),
        ]);
        (o, out.exists())
    }

    /// The error `lines` give: the run fails with exit status 2, writes no file, and says.
    fn refusal(&self, lines: &[String]) -> String {
        let (o, written) = self.get_with(lines);
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
        assert!(!written, "an output file was left");
        String::from_utf8_lossy(&o.stderr).into_owned()
    }
}

/// The first line (the response at 2017-03-06T04:02:06Z) with `from` replaced by `to`.
fn edited(f: &Fixture, from: &str, to: &str) -> Vec<String> {
    assert!(f.lines[0].contains(from), "{} lacks {from}", f.lines[0]);
    vec![f.lines[0].replacen(from, to, 1)]
}

/// A line naming a container that is not there, or an offset where no record or another record
/// starts, or a digest the payload does not have: an error naming the container and the
/// offset, and no output.
#[test]
fn missing_containers_and_wrong_offsets_are_errors_naming_both() {
    let f = fixture();
    let (o, written) = f.get_with(&f.lines);
    assert!(o.status.success() && written, "{}", String::from_utf8_lossy(&o.stderr));
    let name = "content/warcio-example.warc.gz";
    let missing = f.refusal(&edited(&f, name, "content/gone.warc.gz"));
    assert!(missing.contains("container content/gone.warc.gz, offset 784: "), "{missing}");
    assert!(missing.contains("does not exist"), "{missing}");
    // The offset of the other record (the revisit): its URI agrees, its date does not.
    let other = f.refusal(&edited(&f, "\"offset\": \"784\"", "\"offset\": \"2621\""));
    assert!(other.contains(&format!("container {name}, offset 2621: the record there is not the one the index names: its date")), "{other}");
    // Inside a gzip member: no record there.
    let inside = f.refusal(&edited(&f, "\"offset\": \"784\"", "\"offset\": \"800\""));
    assert!(
        inside.contains(&format!("container {name}, offset 800: no WARC record there")),
        "{inside}"
    );
    let past = f.refusal(&edited(&f, "\"offset\": \"784\"", "\"offset\": \"99999\""));
    assert!(past.contains("offset 99999: the offset is past the container's end"), "{past}");
    // A length that cuts the record short.
    let short = f.refusal(&edited(&f, "\"length\": \"1228\"", "\"length\": \"600\""));
    assert!(short.contains(&format!("container {name}, offset 784: ")), "{short}");
    let digest = "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK";
    let wrong = f.refusal(&edited(&f, digest, "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    assert!(wrong.contains(&format!("offset 784: the payload's digest is {digest}")), "{wrong}");
}

/// Container names from an index are hostile: absolute names, `..` and symbolic links out of
/// the package are refused, naming the container and the offset.
#[test]
fn hostile_container_names_are_refused() {
    let f = fixture();
    let name = "content/warcio-example.warc.gz";
    let outside = f.package.parent().unwrap().join("outside.warc.gz");
    std::fs::copy(f.package.join(name), &outside).unwrap();
    let absolute = f.refusal(&edited(&f, name, outside.to_str().unwrap()));
    assert!(absolute.contains("offset 784: ") && absolute.contains("absolute"), "{absolute}");
    let up = f.refusal(&edited(&f, name, "../outside.warc.gz"));
    assert!(up.contains("container ../outside.warc.gz, offset 784: "), "{up}");
    assert!(up.contains("\"..\""), "{up}");
    std::os::unix::fs::symlink(&outside, f.package.join("content/link.warc.gz")).unwrap();
    let link = f.refusal(&edited(&f, name, "content/link.warc.gz"));
    assert!(link.contains("container content/link.warc.gz, offset 784: "), "{link}");
    assert!(link.contains("symbolic link"), "{link}");
}

/// Asked by record id, an index without ids says so; one with them finds the record.
#[test]
fn record_ids_are_found_where_the_index_carries_them() {
    let f = fixture();
    let index = f.package.with_extension("cdxj");
    write_index(&index, &f.lines);
    let id = "<urn:uuid:a9c51e3e-0221-11e7-bf66-0242ac120005>";
    let args = ["--index", index.to_str().unwrap(), "--package", f.package.to_str().unwrap()];
    let o = get(&[&args[..], &["--id", id]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the index carries no record ids"), "{err}");
    // The id on the line of its record only (two records of one id are refused).
    let mut with_id = f.lines.clone();
    with_id[0] = with_id[0].replacen("}", &format!(", \"recordId\": \"{id}\"}}"), 1);
    write_index(&index, &with_id);
    let o = get(&[&args[..], &["--id", id]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let container = f.package.join("content/warcio-example.warc.gz");
    let at = get(&["--container", container.to_str().unwrap(), "--offset", "784"]);
    assert!(at.status.success() && o.stdout.len() > 500 && o.stdout == at.stdout);
    // A line whose id is not its record's is refused.
    let other = "<urn:uuid:a9c51e3e-0221-11e7-bf66-0242ac120099>";
    write_index(&index, &[with_id[0].replace(id, other)]);
    let o = get(&[&args[..], &["--id", other]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("offset 784: the record there is not the one the index names: its record id"),
        "{err}"
    );
    let o = get(&[&args[..], &["--id", "<urn:uuid:other>"]].concat());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no record <urn:uuid:other> in the index"));
}

/// From the store: a package put to a file-system replica, its local folder removed, gives
/// through its index (by identifier) the same payloads the folder gave, reading only the
/// records' byte ranges; a wrong offset is refused as from a folder.
#[test]
fn records_come_from_the_store_by_package_identifier() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = t.join("pkg");
    crate::util::Package::new()
        .quiet()
        .args(&["--deterministic"])
        .succeeds(&pkg, &repo().join("samples/heritrix-job"));
    let mets = std::fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let id = mets.split("OBJID=\"").nth(1).and_then(|v| v.split('"').next()).unwrap().to_string();
    let containers: Vec<String> = std::fs::read_dir(pkg.join("content"))
        .unwrap()
        .map(|e| format!("content/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".warc.gz"))
        .collect();
    let names: Vec<&str> = containers.iter().map(String::as_str).collect();
    let mut lines = cdxj_indexer(&pkg, &names);
    for l in &mut lines {
        for n in &containers {
            let base = n.trim_start_matches("content/");
            *l = l.replace(&format!("\"filename\": \"{base}\""), &format!("\"filename\": \"{n}\""));
        }
    }
    let index = t.join("pkg.cdxj");
    write_index(&index, &lines);
    let config = t.join("store.toml");
    let cfg = format!(
        "state = \"{}\"\n\n[[replica]]\nname = \"disk\"\ntype = \"fs\"\nroot = \"{}\"\n",
        t.join("state.sqlite").display(),
        t.join("disk").display()
    );
    std::fs::write(&config, cfg).unwrap();
    let put = webaip_command()
        .args(["store", "--config", config.to_str().unwrap(), "--json", "put"])
        .arg(&pkg)
        .output()
        .unwrap();
    assert!(put.status.success(), "{}", String::from_utf8_lossy(&put.stdout));
    let entries: Vec<CdxjLine> = lines.iter().map(|l| CdxjLine::parse(l)).collect();
    let local: Vec<Vec<u8>> = entries
        .iter()
        .map(|e| {
            let args = ["--index", index.to_str().unwrap(), "--package", pkg.to_str().unwrap()];
            let o = get(&[&args[..], &[&e.url, "--at", &e.timestamp]].concat());
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        })
        .collect();
    std::fs::remove_dir_all(&pkg).unwrap();
    let store_args =
        ["--index", index.to_str().unwrap(), "--store", config.to_str().unwrap(), "--package", &id];
    for (e, want) in entries.iter().zip(&local) {
        let o = get(&[&store_args[..], &[&e.url, "--at", &e.timestamp]].concat());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(&o.stdout, want, "{} at {}", e.url, e.timestamp);
    }
    assert!(entries.len() >= 3, "{} lines", entries.len());
    let e = &entries[0];
    let moved = lines[0].replace(&format!("\"offset\": \"{}\"", e.offset), "\"offset\": \"1\"");
    write_index(&index, &[moved]);
    let o = get(&[&store_args[..], &[&e.url, "--at", &e.timestamp]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("container {}, offset 1: ", e.filename)), "{err}");
}

/// `get -o` writes its output with the mode the umask gives (as any new file), and removes a
/// temporary a killed run left beside it (unlocked: its maker is gone).
#[test]
fn get_output_honours_the_umask_and_a_killed_runs_temporary_goes() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let index = f.package.with_extension("cdxj");
    write_index(&index, &f.lines);
    let outdir = f.package.with_extension("outdir");
    std::fs::create_dir(&outdir).unwrap();
    std::fs::write(outdir.join(".webaip-get-dead01"), b"half a record").unwrap();
    let out = outdir.join("record.bin");
    let o = crate::util::webaip_with_umask(
        &[
            "get",
            "--index",
            index.to_str().unwrap(),
            "--package",
            f.package.to_str().unwrap(),
            "http://example.com/",
            "-o",
            out.to_str().unwrap(),
        ],
        0o027,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(crate::util::files_in(&outdir), ["record.bin"]);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "mode {mode:o}");
}

/// A cheap deterministic generator of filler text.
fn filler(state: &mut u64, len: usize) -> String {
    (0..len)
        .map(|_| {
            *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            b"abcdefghijklmnopqrstuvwxyz234567"[(*state >> 59) as usize] as char
        })
        .collect()
}

/// A block of 48 MiB of lines (about 30 MiB compressed) is inflated as its lines are read:
/// `get`'s peak RSS stays far below the block's size.
#[test]
fn a_large_block_is_streamed_in_bounded_memory() {
    use std::io::Write;
    let f = fixture();
    let dir = f.package.with_extension("zipnum");
    std::fs::create_dir_all(&dir).unwrap();
    let mut state = 11u64;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut inflated = 0;
    for i in 0.. {
        let line = format!(
            "com,aaaa)/{i:08} 20170101000000 {{\"url\": \"http://aaaa.com/{}\"}}\n",
            filler(&mut state, 100)
        );
        gz.write_all(line.as_bytes()).unwrap();
        inflated += line.len();
        if inflated > 48 << 20 {
            break;
        }
    }
    for l in f.lines.iter().filter(|l| l.starts_with("com,example)/ ")) {
        writeln!(gz, "{l}").unwrap();
    }
    let block = gz.finish().unwrap();
    std::fs::write(dir.join("all.cdx.gz"), &block).unwrap();
    std::fs::write(dir.join("all.loc"), "all\tall.cdx.gz\n").unwrap();
    let line = format!("com,aaaa)/00000000 20170101000000\tall\t0\t{}\t1\n", block.len());
    std::fs::write(dir.join("all.idx"), line).unwrap();
    let idx = dir.join("all.idx");
    let out = dir.join("record.bin");
    let args = [
        "get",
        "--index",
        idx.to_str().unwrap(),
        "--package",
        f.package.to_str().unwrap(),
        "http://example.com/",
        "-o",
        out.to_str().unwrap(),
    ];
    let run = crate::fuzz::child::launch_webaip(&args, &dir);
    eprintln!(
        "{} MiB block ({} MiB inflated): {:?}, peak RSS {} KiB",
        block.len() >> 20,
        inflated >> 20,
        run.status,
        run.peak_rss >> 10
    );
    assert!(run.status.success(), "{}", run.stderr);
    assert!(out.exists());
    assert!(run.peak_rss < 40 << 20, "peak RSS {} MiB", run.peak_rss >> 20);
}
