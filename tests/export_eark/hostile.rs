//! Hostile input against `export eark` and the E-ARK check: crafted ZIPs (duplicate names, a
//! file and a folder of one name, deep folder chains), a full disk, killed runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{export, our_check, packaged_sample};
use crate::util::{SmallDisk, oracle_python, repo, webaip, webaip_command};

/// `craft.py` run on `zip`, writing `out`.
fn craft(zip: &Path, out: &Path, args: &[&str]) {
    let o = Command::new(oracle_python())
        .arg(repo().join("tests/export_eark/craft.py"))
        .arg(zip)
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "craft.py {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// The nedlib sample exported as an AIP ZIP in `tmp`.
fn aip_zip(tmp: &Path) -> PathBuf {
    let pkg = packaged_sample(tmp, "nedlib");
    let zip = tmp.join("aip.zip");
    export(&pkg, &zip, "aip");
    zip
}

/// The root folder of an exported ZIP (the package's OBJID).
fn zip_root(zip: &Path) -> String {
    let z = zip::ZipArchive::new(std::fs::File::open(zip).unwrap()).unwrap();
    let first = z.file_names().next().unwrap().unwrap().to_string();
    first.split('/').next().unwrap().to_string()
}

/// The check's JSON verdict and exit code, its temporary folder in `scratch`.
fn check_in(scratch: &Path, ip: &Path) -> (i32, serde_json::Value, String) {
    let o = webaip_command()
        .env("TMPDIR", scratch)
        .args(["validate", "--profile", "eark-csip", "--json", ip.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let all = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    // An unreadable package prints no object (exit 2, the error on stderr).
    let v = if all.is_null() { all } else { crate::util::only_report(&all) };
    (o.status.code().unwrap_or(-1), v, err)
}

fn findings(v: &serde_json::Value) -> Vec<(String, String, String)> {
    let all = v["findings"].as_array().cloned().unwrap_or_default();
    let s = |f: &serde_json::Value, k: &str| f[k].as_str().unwrap_or_default().to_string();
    all.iter().map(|f| (s(f, "rule"), s(f, "path"), s(f, "message"))).collect()
}

#[test]
fn duplicate_names_and_a_file_below_a_file_are_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = aip_zip(tmp.path());
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let dup = tmp.path().join("dup.zip");
    craft(&zip, &dup, &["dup"]);
    let (code, v, err) = check_in(&scratch, &dup);
    assert_eq!(code, 1, "{err}");
    let f = findings(&v);
    assert!(
        f.iter().any(|(rule, path, msg)| rule == "CSIPSTR3"
            && path.contains("/data/")
            && msg.contains("another entry of that name")),
        "{f:?}"
    );
    let root = zip_root(&zip);
    let dupdir = tmp.path().join("dupdir.zip");
    craft(&zip, &dupdir, &["dupdir"]);
    let (code, v, err) = check_in(&scratch, &dupdir);
    assert_eq!(code, 1, "{err}");
    let f = findings(&v);
    assert!(
        f.iter().any(|(rule, path, msg)| rule == "CSIPSTR3"
            && path.trim_end_matches('/').ends_with(&format!("{root}/x"))
            && msg.contains("another entry of that name")),
        "{f:?}"
    );
    let filedir = tmp.path().join("filedir.zip");
    craft(&zip, &filedir, &["filedir"]);
    let (code, v, err) = check_in(&scratch, &filedir);
    assert_eq!(code, 1, "{err}");
    let f = findings(&v);
    assert!(
        f.iter().any(|(rule, path, msg)| rule == "CSIPSTR3"
            && path.ends_with(&format!("{root}/x/y"))
            && msg.contains(&format!("\"{root}/x\""))
            && msg.contains("file")),
        "{f:?}"
    );
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0, "the temporary is left");
}

#[test]
fn long_entry_names_are_shown_clipped() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = aip_zip(tmp.path());
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    // 100 entries of one 60,000-byte name: each a finding, 6 MB of output if shown whole.
    let long = tmp.path().join("long.zip");
    craft(&zip, &long, &["longdup", "100", "60000"]);
    let (code, v, err) = check_in(&scratch, &long);
    assert_eq!(code, 1, "{err}");
    let f = findings(&v);
    let clipped = format!("ddd... ({} bytes)", zip_root(&zip).len() + 1 + 60000);
    assert!(f.iter().filter(|(_, p, _)| p.contains(&clipped)).count() >= 100, "{f:?}");
    let said = v.to_string().len() + err.len();
    assert!(said < 256 << 10, "{said} bytes of output");
}

#[test]
fn deep_or_many_folders_are_refused_within_a_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = aip_zip(tmp.path());
    // 60 files 1,000 folders deep (60,000 folders if unpacked): about 250 KB.
    let deep = tmp.path().join("deep.zip");
    craft(&zip, &deep, &["chains", "60", "1000"]);
    // 400 files 100 folders deep (40,000 folders, each within the depth allowed).
    let wide = tmp.path().join("wide.zip");
    craft(&zip, &wide, &["chains", "400", "100"]);
    // A temporary disk of 20,000 files and folders at most: the budget (64 MiB, a folder
    // counting 4 KiB) stops at 16,384 folders; unpacking either ZIP whole would fill it.
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let disk = SmallDisk::mount_with(&scratch, "size=262144k,nr_inodes=20000");
    for (ip, why) in [(&deep, "folders deep"), (&wide, "each new directory counts")] {
        let started = Instant::now();
        let (code, _, err) = check_in(&scratch, ip);
        let took = started.elapsed();
        let kb = std::fs::metadata(ip).unwrap().len() >> 10;
        eprintln!("{why}: {kb} KB zip, refused in {took:?}");
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(ip.to_str().unwrap()) && err.contains(why), "{err}");
        assert!(!err.contains("os error"), "{err}");
        assert!(took < Duration::from_secs(30), "{took:?}");
        let left: Vec<_> =
            std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "left: {left:?}");
    }
    drop(disk);
}

/// Starts `cmd`, kills it (SIGKILL) as soon as `dir` holds an entry not in `before`.
fn kill_once_it_writes(mut cmd: Command, dir: &Path) -> bool {
    let before: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name()).collect();
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    let killed = loop {
        let new =
            std::fs::read_dir(dir).unwrap().flatten().any(|e| !before.contains(&e.file_name()));
        if new || started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            break new;
        }
        if child.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    child.wait().unwrap();
    killed
}

#[test]
fn a_killed_checks_temporary_is_removed_by_the_next_check() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = aip_zip(tmp.path());
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mut cmd = webaip_command();
    cmd.env("TMPDIR", &scratch).args(["validate", "--profile", "eark-csip"]).arg(&zip);
    assert!(kill_once_it_writes(cmd, &scratch), "the check ended before it was killed");
    assert!(std::fs::read_dir(&scratch).unwrap().count() > 0);
    let (code, _, err) = check_in(&scratch, &zip);
    assert_eq!(code, 0, "{err}");
    let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left: {left:?}");
}

/// The exported package's files, a content file grown to `mb` MiB so an export takes a while
/// (its METS SIZE and CHECKSUM restated: an export refuses a file that is not what they state).
fn large_package(tmp: &Path, mb: u64) -> PathBuf {
    let pkg = packaged_sample(tmp, "nedlib");
    let content = std::fs::read_dir(pkg.join("content")).unwrap().next().unwrap().unwrap().path();
    let f = std::fs::OpenOptions::new().append(true).open(&content).unwrap();
    let mut w = std::io::BufWriter::new(f);
    let chunk: Vec<u8> =
        (0..1u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    for _ in 0..mb {
        std::io::Write::write_all(&mut w, &chunk).unwrap();
    }
    std::io::Write::flush(&mut w).unwrap();
    drop(w);
    restate(&pkg, &content);
    pkg
}

/// Sets the SIZE and CHECKSUM (SHA-512) the package METS states of `file`, and the SHA-256
/// its PREMIS object states, to its bytes'.
fn restate(pkg: &Path, file: &Path) {
    use sha2::Digest;
    let bytes = std::fs::read(file).unwrap();
    let sum = data_encoding::HEXLOWER.encode(&sha2::Sha512::digest(&bytes));
    let href = format!("content/{}", file.file_name().unwrap().to_string_lossy());
    let p = pkg.join("METS.xml");
    let s = std::fs::read_to_string(&p).unwrap();
    let at = s.find(&format!("xlink:href=\"{href}\"")).unwrap();
    let start = s[..at].rfind("<mets:file ").unwrap();
    let set = |el: &str, attr: &str, value: &str| {
        let at = el.find(&format!(" {attr}=\"")).unwrap() + attr.len() + 3;
        let end = at + el[at..].find('"').unwrap();
        format!("{}{value}{}", &el[..at], &el[end..])
    };
    let el = set(&s[start..at], "SIZE", &bytes.len().to_string());
    let el = set(&el, "CHECKSUM", &sum);
    let mut s = format!("{}{el}{}", &s[..start], &s[at..]);
    let object = s.find(&format!(">{href}</premis:objectIdentifierValue>")).unwrap();
    let sha256 = object + s[object..].find(">SHA-256</premis:messageDigestAlgorithm>").unwrap();
    let at = sha256 + s[sha256..].find("<premis:messageDigest>").unwrap() + 22;
    s.replace_range(at..at + 64, &data_encoding::HEXLOWER.encode(&sha2::Sha256::digest(&bytes)));
    std::fs::write(&p, s).unwrap();
}

#[test]
fn a_killed_export_leaves_nothing_under_its_name_and_a_rerun_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = large_package(tmp.path(), 48);
    for name in ["ip.zip", "ip"] {
        let outdir = tmp.path().join(format!("out-{name}"));
        std::fs::create_dir(&outdir).unwrap();
        let out = outdir.join(name);
        // A folder output holds the package root, staged inside it.
        let watched = match name {
            "ip" => {
                std::fs::create_dir(&out).unwrap();
                out.clone()
            }
            _ => outdir.clone(),
        };
        let mut cmd = webaip_command();
        cmd.args(["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert!(kill_once_it_writes(cmd, &watched), "{name}: the export ended first");
        let names = std::fs::read_dir(&watched).unwrap().flatten().map(|e| e.file_name());
        let complete: Vec<_> = names.filter(|n| !n.to_string_lossy().starts_with('.')).collect();
        assert!(complete.is_empty(), "{name}: a killed export left {complete:?}");
        let ip = export(&pkg, &out, "sip");
        let left: Vec<_> =
            std::fs::read_dir(&outdir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, [name], "{name}");
        assert_eq!(our_check(&ip), (0, vec![]), "{name}");
    }
}

#[test]
fn an_export_to_a_full_disk_says_so_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    let full = tmp.path().join("full.zip");
    export(&pkg, &full, "aip");
    let size_kib = std::fs::metadata(&full).unwrap().len() >> 10;
    let small = tmp.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let Some(disk) = SmallDisk::mount(&small, size_kib / 2) else {
        eprintln!("no tmpfs: skipped");
        return;
    };
    for name in ["ip.zip", "ip"] {
        let out = small.join(name);
        let o = webaip(&["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}");
        assert!(err.contains("no space left on device while writing"), "{name}: {err}");
        assert!(!err.contains("os error") && !err.contains("ZipWriter"), "{name}: {err}");
        let left: Vec<_> = std::fs::read_dir(&small).unwrap().flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "{name}: left {left:?}");
    }
    disk.resize(size_kib * 4);
    for name in ["ip.zip", "ip"] {
        let out = small.join(name);
        let ip = export(&pkg, &out, "aip");
        assert_eq!(our_check(&ip), (0, vec![]), "{name}");
    }
}

/// An exported ZIP is made as any file the user makes (0666 less the umask: 0644 under 022,
/// 0640 under 027), not private as the temporary it is staged in would be.
#[test]
fn an_exported_zip_honours_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let pkg = packaged_sample(tmp.path(), "nedlib");
    for (mask, mode) in [(0o022, 0o644), (0o027, 0o640)] {
        let out = tmp.path().join(format!("ip-{mask:o}.zip"));
        let args = ["export", "eark", pkg.to_str().unwrap(), "-o", out.to_str().unwrap()];
        let o = crate::util::webaip_with_umask(&args, mask);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(got, mode, "umask {mask:o}: mode {got:o}");
    }
}
