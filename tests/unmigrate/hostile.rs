//! `unmigrate` and `audit --deep --rebuild-arcs` on containers edited by an attacker: repeat
//! counts of the rebuild fields bounded by what the rebuild record states (refused before
//! anything is written, in bounded time and memory), a package's containers checked against
//! its METS and the ARC rebuilt against its PREMIS object, output names confined, temporaries
//! of killed runs removed, files made as the umask says.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::python;
use crate::fuzz::child::{Outcome, launch};
use crate::util::{SmallDisk, WEBAIP, files_in, sample, webaip, webaip_command};

const PLAIN: &str = "IAH-20240315103000-00001-crawler.example.arc";
const GZIP: &str = "IAH-20240315103000-00000-crawler.example.arc.gz";

/// Edits the first record of a WARC container (one gzip member per record) that holds
/// `select` and `old`: `old` replaced by `new` in its header, else in its block, then its
/// `Content-Length` and `WARC-Block-Digest` made to agree with its block (a consistent
/// edit). `old` = `FIELD` appends `new` to the record's `X-Webaip-ARC-Rebuild` field.
/// Arguments are Python bytes literals.
const EDIT: &str = r#"
import sys, zlib, gzip, hashlib, base64, re, ast
path = sys.argv[1]
select, old, new = (ast.literal_eval(a) for a in sys.argv[2:5])
data = open(path, 'rb').read()
pos, out, done = 0, bytearray(), False
while pos < len(data):
    d = zlib.decompressobj(31)
    text = d.decompress(data[pos:])
    end = len(data) - len(d.unused_data)
    field = b'\r\nX-Webaip-ARC-Rebuild: '
    want = field if old == b'FIELD' else old
    if not done and select in text and want in text:
        head, rest = text.split(b'\r\n\r\n', 1)
        block = rest[:-4]
        if old == b'FIELD':
            i = head.index(field) + len(field)
            j = head.find(b'\r\n', i)
            j = len(head) if j < 0 else j
            head = head[:j] + b' ' + new + head[j:]
        elif old in head:
            head = head.replace(old, new, 1)
        else:
            block = block.replace(old, new, 1)
        head = re.sub(rb'Content-Length: \d+', b'Content-Length: %d' % len(block), head)
        digest = b'sha1:' + base64.b32encode(hashlib.sha1(block).digest())
        head = re.sub(rb'WARC-Block-Digest: \S+', digest, head)
        out += gzip.compress(head + b'\r\n\r\n' + block + b'\r\n\r\n', mtime=0)
        done = True
    else:
        out += data[pos:end]
    pos = end
if not done:
    sys.exit('nothing to edit')
open(path, 'wb').write(out)
"#;

/// Python bytes literal of `s`.
fn lit(s: &[u8]) -> String {
    let mut out = String::from("b'");
    for &b in s {
        match b {
            b'\'' | b'\\' => out.push_str(&format!("\\x{b:02x}")),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

fn edit(container: &Path, select: &[u8], old: &[u8], new: &[u8]) {
    let args = [lit(select), lit(old), lit(new)];
    let a: Vec<&Path> = args.iter().map(Path::new).collect();
    python(EDIT, &[container, a[0], a[1], a[2]]);
}

/// The WARC container `migrate` makes of the sample ARC `name`, in `dir`.
fn migrated(dir: &Path, name: &str) -> PathBuf {
    let arc = sample(&format!("heritrix-job/arcs/{name}"));
    let w = dir.join("w");
    let o = webaip(&["migrate", "-q", "-o", w.to_str().unwrap(), arc.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_dir(&w).unwrap().next().unwrap().unwrap().path()
}

/// A run of `webaip` measured: its outcome, peak RSS, standard error and time.
struct Run {
    status: Outcome,
    peak_rss: u64,
    stderr: String,
    seconds: f64,
}

fn measured(args: &[&str], dir: &Path) -> Run {
    let mut argv = vec![WEBAIP.to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let started = Instant::now();
    let r = launch(&argv, &[], None, Duration::from_secs(60), &dir.join("stderr"));
    let seconds = started.elapsed().as_secs_f64();
    Run { status: r.status, peak_rss: r.peak_rss, stderr: r.stderr, seconds }
}

/// Bytes of every file below `dir`.
fn bytes_in(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// An edit of a container (see [`EDIT`]).
struct Edit<'a> {
    container: &'a Path,
    select: &'a [u8],
    old: &'a [u8],
    new: Vec<u8>,
}

/// Each edit of the issue, made to the container of a plain or a gzip ARC: `unmigrate`
/// (file and stream) refuses it with the container and record named, before writing it, in
/// seconds and under 100 MB, and leaves nothing in the output directory (a tmpfs of 32 MiB
/// where one can be mounted: what a run that wrote on would fill).
#[test]
fn repeat_counts_past_the_rebuild_record_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = migrated(&tmp.path().join("p"), PLAIN);
    let gzip = migrated(&tmp.path().join("g"), GZIP);
    let member = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut e, &vec![b'\n'; 3 << 20]).unwrap();
        data_encoding::HEXLOWER.encode(&e.finish().unwrap())
    };
    let empty = {
        let e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        data_encoding::HEXLOWER.encode(&e.finish().unwrap())
    };
    let summary = b"metadata://webaip/arc-rebuild".as_slice();
    let field = |new: &[u8]| Edit {
        container: &plain,
        select: b"X-Webaip-ARC-Header",
        old: b"FIELD",
        new: new.to_vec(),
    };
    let post = |item: &str| Edit {
        container: &gzip,
        select: summary,
        old: b"\nrebuildable",
        new: format!("\npost {item}\nrebuildable").into(),
    };
    let cases = [
        field(b"lead=n999999999999"),
        field(b"tail=n18446744073709551615"),
        Edit { container: &gzip, ..field(format!("pre=0:{member}:10000000000").as_bytes()) },
        post(&format!("0:{empty}:99999999999")),
        post("0::99999999999"),
    ];
    for (i, Edit { container, select, old, new }) in cases.iter().enumerate() {
        let case = tmp.path().join(format!("case{i}"));
        std::fs::create_dir_all(&case).unwrap();
        let edited = case.join(container.file_name().unwrap());
        std::fs::copy(container, &edited).unwrap();
        edit(&edited, select, old, new);
        for stream in [false, true] {
            let out = case.join(format!("out{stream}"));
            std::fs::create_dir_all(&out).unwrap();
            let _disk = SmallDisk::mount(&out, 32 << 10);
            let mut args = vec!["unmigrate", "-q", "-o", out.to_str().unwrap()];
            if stream {
                args.push("--stream");
            }
            args.push(edited.to_str().unwrap());
            let run = measured(&args, &case);
            let edit = String::from_utf8_lossy(&new[..new.len().min(40)]).replace('\n', " ");
            let what = format!("case {i} ({edit}), stream {stream}");
            eprintln!(
                "{what}: {:?}, {:.1} s, peak RSS {} MB",
                run.status,
                run.seconds,
                run.peak_rss >> 20
            );
            assert_eq!(run.status, Outcome::Exited(2), "{what}: {}", run.stderr);
            assert!(run.seconds < 20.0, "{what}: {:.1} s", run.seconds);
            assert!(run.peak_rss < 100 << 20, "{what}: peak RSS {} MB", run.peak_rss >> 20);
            let named = edited.display().to_string();
            assert!(
                run.stderr.contains(&named) && run.stderr.contains("offset"),
                "{what}: {}",
                run.stderr
            );
            eprintln!("  {}", run.stderr.trim());
            assert!(!run.stderr.contains("os error"), "{what}: {}", run.stderr);
            assert_eq!(files_in(&out), Vec::<String>::new(), "{what}");
            assert_eq!(bytes_in(&out), 0, "{what}");
        }
    }
}

/// `audit --deep --rebuild-arcs` of a package whose container holds an edited lead: ends in
/// seconds with the refusal as a finding.
#[test]
fn audit_rebuild_of_an_edited_count_ends_in_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = package_of_plain(tmp.path());
    let container = pkg.join("content/IAH-20240315103000-00001-crawler.example.warc.gz");
    edit(&container, b"X-Webaip-ARC-Header", b"FIELD", b"lead=n999999999999");
    let args = ["audit", "--json", "--deep", "--rebuild-arcs", pkg.to_str().unwrap()];
    let run = measured(&args, tmp.path());
    eprintln!(
        "audit: {:?} in {:.1} s, peak RSS {} MB",
        run.status,
        run.seconds,
        run.peak_rss >> 20
    );
    assert_eq!(run.status, Outcome::Exited(1), "{}", run.stderr);
    assert!(run.seconds < 20.0, "{:.1} s", run.seconds);
    let report = crate::util::json(&webaip(&args));
    let findings = report["packages"][0]["findings"].as_array().unwrap();
    let refused = findings
        .iter()
        .any(|f| f["rule"] == "arc-rebuild" && f["message"].as_str().unwrap().contains("refused"));
    assert!(refused, "{findings:#?}");
}

/// Changes one block byte of the first `response` record of a container (its digest made to
/// agree) and, in its rebuild record, the original ARC's SHA-512 (the second argument) to that
/// of the ARC with the same byte changed: an edit every check inside the container accepts.
/// Prints the container's SHA-512 before and after, and the ARC offset of the byte.
const CHANGE_BLOCK: &str = r#"
import sys, zlib, gzip, hashlib, base64, re
container, arc = sys.argv[1], sys.argv[2]
orig = open(arc, 'rb').read()
data = open(container, 'rb').read()
pos, members = 0, []
while pos < len(data):
    d = zlib.decompressobj(31)
    members.append(d.decompress(data[pos:]))
    pos = len(data) - len(d.unused_data)
def fix(text, change):
    head, rest = text.split(b'\r\n\r\n', 1)
    block = change(rest[:-4])
    head = re.sub(rb'Content-Length: \d+', b'Content-Length: %d' % len(block), head)
    digest = b'sha1:' + base64.b32encode(hashlib.sha1(block).digest())
    head = re.sub(rb'WARC-Block-Digest: \S+', digest, head)
    return head + b'\r\n\r\n' + block + b'\r\n\r\n'
found = None
for i, t in enumerate(members):
    if found is None and b'WARC-Type: response' in t:
        block = t.split(b'\r\n\r\n', 1)[1][:-4]
        for k in range(len(block) - 32, 0, -1):
            w = block[k:k + 32]
            if orig.count(w) == 1:
                nw = w[:16] + bytes([w[16] ^ 1]) + w[17:]
                members[i] = fix(t, lambda b: b.replace(w, nw, 1))
                found = (w, nw, orig.index(w) + 16)
                break
w, nw, at = found
old_sha = hashlib.sha512(orig).hexdigest().encode()
new_sha = hashlib.sha512(orig.replace(w, nw, 1)).hexdigest().encode()
for i, t in enumerate(members):
    if b'metadata://webaip/arc-rebuild' in t:
        members[i] = fix(t, lambda b: b.replace(old_sha, new_sha))
out = b''.join(gzip.compress(t, mtime=0) for t in members)
open(container, 'wb').write(out)
print(hashlib.sha512(data).hexdigest(), hashlib.sha512(out).hexdigest(), at)
"#;

/// A package of the plain sample ARC, in `dir/pkg`.
fn package_of_plain(dir: &Path) -> PathBuf {
    let pkg = dir.join("pkg");
    let arc = sample(&format!("heritrix-job/arcs/{PLAIN}"));
    let o = webaip(&[
        "package",
        "-q",
        "--no-virus-check",
        "--deterministic",
        "--out",
        pkg.to_str().unwrap(),
        arc.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    pkg
}

/// A container edited consistently inside (a block byte, its digest, the rebuild record's
/// SHA-512s): `unmigrate PACKAGE` refuses it against the METS; with the METS's digests of the
/// container edited too, the ARC rebuilt is refused against its PREMIS object. Neither run
/// writes an ARC.
#[test]
fn a_consistently_edited_container_is_caught_by_the_mets() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = package_of_plain(tmp.path());
    let container = pkg.join("content/IAH-20240315103000-00001-crawler.example.warc.gz");
    let arc = sample(&format!("heritrix-job/arcs/{PLAIN}"));
    let printed = python(CHANGE_BLOCK, &[&container, &arc]);
    let [before, after, at] = printed.split_whitespace().collect::<Vec<_>>()[..] else {
        panic!("{printed}")
    };
    eprintln!("block byte at ARC offset {at} changed");
    let out = tmp.path().join("out");
    let p = pkg.to_str().unwrap();
    let o = webaip(&["unmigrate", "-q", "-o", out.to_str().unwrap(), p]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}: SHA-512 {after}, the METS states {before}",
            container.display()
        )),
        "{err}"
    );
    assert_eq!(files_in(&out), Vec::<String>::new());

    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    assert!(text.contains(before));
    std::fs::write(&mets, text.replace(before, after)).unwrap();
    let o = webaip(&["unmigrate", "--json", "-o", out.to_str().unwrap(), p]);
    let r = &crate::util::json(&o)["arcs"][0];
    assert_eq!(o.status.code(), Some(1), "{r}");
    // The rebuild record was made to agree: only the PREMIS object tells.
    assert_eq!(r["stream"]["equal"], true, "{r}");
    let premis = r["differences"].as_array().unwrap().iter().any(|d| {
        d["what"].as_str().unwrap().contains("is not the ARC the package's PREMIS object states")
    });
    assert!(premis, "{r}");
    assert_eq!(files_in(&out), Vec::<String>::new());
}

/// ARC names (from the container's `warcinfo`) that are no plain file name are refused, with
/// the name shown escaped; nothing is written.
#[test]
fn unsafe_arc_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = migrated(&tmp.path().join("p"), PLAIN);
    for (i, name) in ["a\rb.arc", "x\x1b[31m.arc", "..", "../x.arc", ".webaip-unmigrate-abc123"]
        .iter()
        .enumerate()
    {
        let edited = tmp.path().join(format!("n{i}.warc.gz"));
        std::fs::copy(&plain, &edited).unwrap();
        let old = format!("source-file: {PLAIN}");
        edit(
            &edited,
            b"WARC-Type: warcinfo",
            old.as_bytes(),
            format!("source-file: {name}").as_bytes(),
        );
        let out = tmp.path().join(format!("out{i}"));
        let o = webaip(&["unmigrate", "-q", "-o", out.to_str().unwrap(), edited.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name:?}: {err}");
        assert!(err.contains("refused ARC name"), "{name:?}: {err}");
        assert!(!err.contains('\r') && !err.contains('\x1b'), "{name:?}: {err:?}");
        assert_eq!(files_in(&out), Vec::<String>::new(), "{name:?}");
        assert!(!tmp.path().join("x.arc").exists());
    }
}

/// A killed run's temporary is removed by the next run, a live one's is not; the ARC written
/// has the mode the umask gives (0644 under 022, 0640 under 027).
#[test]
fn dead_temporaries_are_removed_and_the_umask_is_honoured() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = migrated(&tmp.path().join("p"), PLAIN);
    for (umask, mode) in [(0o022, 0o644), (0o027, 0o640)] {
        let out = tmp.path().join(format!("out{umask:o}"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(".webaip-unmigrate-dead01"), b"partial").unwrap();
        let live = out.join(".webaip-unmigrate-live01");
        let held = std::fs::File::create(&live).unwrap();
        rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        let mut c = webaip_command();
        c.args(["unmigrate", "-q", "-o", out.to_str().unwrap(), plain.to_str().unwrap()]);
        // SAFETY: umask is async-signal-safe and cannot fail.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, move || {
                libc::umask(umask);
                Ok(())
            });
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(files_in(&out), [".webaip-unmigrate-live01", PLAIN]);
        let got = std::fs::metadata(out.join(PLAIN)).unwrap().permissions().mode() & 0o777;
        assert_eq!(got, mode, "umask {umask:o}: mode {got:o}");
    }
}

/// A container the METS does not describe (beside those it does), or a METS that describes
/// none: `unmigrate PACKAGE` refuses the package rather than rebuild from what it lists, or
/// say "0 ARC(s) rebuilt" and succeed.
#[test]
fn containers_the_mets_does_not_describe_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = package_of_plain(tmp.path());
    let container = pkg.join("content/IAH-20240315103000-00001-crawler.example.warc.gz");
    let extra = pkg.join("content/extra.warc.gz");
    std::fs::copy(&container, &extra).unwrap();
    let out = tmp.path().join("out");
    let unmigrate =
        || webaip(&["unmigrate", "-q", "-o", out.to_str().unwrap(), pkg.to_str().unwrap()]);
    let o = unmigrate();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("does not describe the container content/extra.warc.gz"), "{err}");
    std::fs::remove_file(&extra).unwrap();

    let mets = pkg.join("METS.xml");
    let text = std::fs::read_to_string(&mets).unwrap();
    std::fs::write(&mets, text.replace("\"content/", "\"elsewhere/")).unwrap();
    let o = unmigrate();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("describes no WARC container"), "{err}");
    assert_eq!(files_in(&out), Vec::<String>::new());
}
