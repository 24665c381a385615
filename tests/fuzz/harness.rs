//! Mutation fuzzing of the ARC reader, the WARC reader, the METS validator (issue 13,
//! "Checked by"), the mirror side-file readers (wget log, HTTrack log, cache index and zip,
//! `url.map`), the NEDLIB `.meta` reader and the Kulturarw3 multipart reader (issue 24):
//! corpus and sample files mutated by a seeded mutator (bit flips, byte insertions and
//! deletions, splices between files, truncations, length-field edits, gzip member splitting
//! and empty members). Each target runs in a child process with an address-space limit, for a
//! bounded time; every case must not panic, must end, and must stay within the limit. The ARC
//! reader must also account for every input byte, and (every 16th case) the migration of the
//! mutated file must conserve every payload. The NEDLIB and Kulturarw3 readers get one
//! mutated file in a harvest of its own and must give a capture or keep the file as a side
//! file (no error, no panic, no byte lost), with every payload readable.
//!
//! Knobs (environment): `WEBAIP_FUZZ_SECONDS` (per target, default 20), `WEBAIP_FUZZ_CASES`
//! (per target, default unbounded), `WEBAIP_FUZZ_SEED` (default: the clock; always printed),
//! `WEBAIP_FUZZ_START` (first case; with the seed and `WEBAIP_FUZZ_CASES=1` it replays one
//! case), `WEBAIP_FUZZ_MEMORY` (address-space limit in bytes, default 1 GiB). A failing case's
//! input is kept in `$TMPDIR/webaip-fuzz-failures/`.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;
use webaip::internals::{ArcReader, RecordKind, ValidateOptions, WarcReader, validate_mets};

use super::child::{Outcome, is_child, run_child};
use crate::util::{Rng, corpus};

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"\r\n\r\n",
    b"\n\n\n",
    b" ",
    b"0",
    b"-1",
    b"99999999999999999999",
    b"18446744073709551615",
    b"filedesc://x.arc 0.0.0.0 20080101000000 text/plain 66\n",
    b"http://e.org/ 1.2.3.4 20080101000000 text/html 10\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
    b"WARC/1.1\r\n",
    b"Content-Length: 0\r\n",
    b"Content-Length: 99999999999\r\n",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03",
    b"\x00",
    b"<!DOCTYPE x [<!ENTITY e \"eeeeeeeeee\">]>",
    b"&e;",
    b"<",
    b"</mets:mets>",
    b" BEGIN=\"0\" END=\"18446744073709551615\"",
    b" xlink:href=\"../../etc/passwd\"",
    b"Arc-Url: ",
    b"Arc-Length: 99999999999999999999\n",
    b"HTTP://",
    b"\nHTTP-Part: Content\n\n",
    b"\n--KulturArw3_4443a33a26034bd0d1fe8db1240a35e3--\n",
    b"HTTP-URL: null\n",
    b"HTTP-Archive-Time: 253402300800\n",
    b"Content-Type: multipart/mixed; boundary=\"\"\n",
];

fn gunzip_all(bytes: &[u8], limit: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = flate2::read::MultiGzDecoder::new(bytes).take(limit).read_to_end(&mut out);
    out
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    let _ = e.write_all(bytes);
    e.finish().unwrap_or_default()
}

/// Recompresses `plain` as gzip members cut at random places, with empty members here and
/// there: the shapes of gzip input that readers get wrong.
fn split_members(rng: &mut Rng, plain: &[u8]) -> Vec<u8> {
    let mut cuts: Vec<usize> = (0..rng.below(8)).map(|_| rng.below(plain.len() + 1)).collect();
    cuts.push(0);
    cuts.push(plain.len());
    cuts.sort_unstable();
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        if rng.chance(6) {
            let empties = if rng.chance(8) { rng.below(2000) } else { 1 };
            let empty = gz(b"");
            for _ in 0..empties {
                out.extend_from_slice(&empty);
            }
        }
        out.extend_from_slice(&gz(&plain[w[0]..w[1]]));
    }
    out
}

/// A number in a line near `at` replaced by another: lengths are what framing trusts.
fn edit_number(rng: &mut Rng, data: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    let from = rng.below(data.len());
    let Some(start) = data[from..].iter().position(u8::is_ascii_digit).map(|i| from + i) else {
        return;
    };
    let end =
        data[start..].iter().position(|b| !b.is_ascii_digit()).map_or(data.len(), |i| start + i);
    let old: u64 =
        std::str::from_utf8(&data[start..end]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let new = match rng.below(6) {
        0 => "0".to_string(),
        1 => old.saturating_add(1 + rng.below(100) as u64).to_string(),
        2 => old.saturating_sub(1 + rng.below(100) as u64).to_string(),
        3 => "99999999999999999999".to_string(),
        4 => "-1".to_string(),
        _ => (rng.next() % 100_000).to_string(),
    };
    data.splice(start..end, new.into_bytes());
}

/// One random mutation of `data`; `others` are the other seeds, for splices.
fn mutate_once(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>]) {
    let len = data.len();
    match rng.below(11) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = rng.next() as u8;
        }
        2 => {
            let i = rng.below(len + 1);
            let n = 1 + rng.below(32);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            data.splice(i..i, bytes);
        }
        3 | 4 => {
            let i = rng.below(len + 1);
            let t = TOKENS[rng.below(TOKENS.len())];
            data.splice(i..i, t.iter().copied());
        }
        5 if len > 0 => {
            let i = rng.below(len);
            let n = (1 + rng.below(512)).min(len - i);
            data.drain(i..i + n);
        }
        6 if len > 0 => {
            // Duplicate a range somewhere else.
            let i = rng.below(len);
            let n = (1 + rng.below(4096)).min(len - i);
            let chunk = data[i..i + n].to_vec();
            let at = rng.below(len + 1);
            data.splice(at..at, chunk);
        }
        7 if !others.is_empty() => {
            // Splice part of another file in.
            let o = &others[rng.below(others.len())];
            if !o.is_empty() {
                let i = rng.below(o.len());
                let n = (1 + rng.below(8192)).min(o.len() - i);
                let at = rng.below(len + 1);
                data.splice(at..at, o[i..i + n].iter().copied());
            }
        }
        8 => data.truncate(rng.below(len + 1)),
        9 => edit_number(rng, data),
        _ => {
            // A long run: a line that does not end, or many blank lines.
            let at = rng.below(len + 1);
            let b = [b'a', b'\n', b' ', b'\r', b'0'][rng.below(5)];
            let n = 1 << (8 + rng.below(10));
            data.splice(at..at, std::iter::repeat_n(b, n));
        }
    }
}

/// A mutated version of a seed: gzip seeds are usually mutated decompressed and recompressed
/// in random members, then perhaps damaged compressed.
fn mutated(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let seed = &seeds[rng.below(seeds.len())];
    let is_gz = seed.starts_with(&[0x1f, 0x8b]);
    let rounds = 1 + rng.below(4);
    if is_gz && !rng.chance(4) {
        let mut plain = gunzip_all(seed, 16 << 20);
        for _ in 0..rounds {
            mutate_once(rng, &mut plain, seeds);
        }
        let mut out = split_members(rng, &plain);
        if rng.chance(3) {
            mutate_once(rng, &mut out, &[]);
        }
        out
    } else {
        let mut data = seed.clone();
        for _ in 0..rounds {
            mutate_once(rng, &mut data, seeds);
        }
        if rng.chance(8) { split_members(rng, &data) } else { data }
    }
}

fn read_seeds(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// ARC: reads every record and body; checks coverage and the byte account; every 16th case
/// migrates and checks conservation.
fn arc_case(path: &Path, data: &[u8], case: u64, scratch: &Path) {
    let mut r = match ArcReader::open(path) {
        Ok(r) => r,
        Err(e) => panic!("open failed on a regular file: {e}"),
    };
    let gzip = r.is_gzip();
    let mut covered = 0u64;
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("I/O error: {e}")) {
        let mut body = r.body_reader(&rec);
        let n = io::copy(&mut body, &mut io::sink()).unwrap();
        assert_eq!(n, rec.body_len(), "body reader length");
        if !gzip {
            // Plain input: records tile the file, separated by line ends only (or by whitespace
            // padding after a declared length, counted in the byte account).
            let start = rec.body_start - rec.header_len;
            assert!(start >= covered, "records overlap at {start}");
            let gap = &data[covered as usize..start as usize];
            assert!(gap.iter().all(|b| b" \t\r\n".contains(b)), "bytes {covered}..{start} lost");
            if rec.kind == RecordKind::Remainder {
                assert!(rec.body_end > start);
            }
            covered = rec.body_end;
        }
    }
    if !gzip {
        let tail = &data[covered as usize..];
        assert!(tail.iter().all(|b| b" \t\r\n".contains(b)), "tail {covered}.. lost");
    }
    let account = r.byte_account();
    assert_eq!(account.input, data.len() as u64);
    assert!(account.balanced(gzip), "bytes not accounted for: {account:?}");
    if case.is_multiple_of(16) {
        let out = scratch.join("out.warc.gz");
        let _ = std::fs::remove_file(&out);
        let ids = webaip::internals::Ids::seeded("fuzz");
        let opts = webaip::MigrateOptions::default();
        let report = webaip::internals::migrate_file(path, &out, &opts, &ids, &|_| {}, &mut |_| {});
        match &report.error {
            None => assert!(
                report.conservation.conserved,
                "not conserved: {:?}",
                report.conservation.mismatches
            ),
            // Refusals are allowed: not an ARC file, or no usable date anywhere (the run then
            // asks for --capture-date instead of inventing one).
            Some(e) => {
                assert!(e.contains("ARC") || e.contains("--capture-date"), "migration failed: {e}")
            }
        }
    }
}

fn warc_case(path: &Path) {
    let Ok(mut r) = WarcReader::open(path) else { return };
    let mut records = 0u64;
    while let Ok(Some(_)) = r.next_record(|_, block| io::copy(block, &mut io::sink())) {
        records += 1;
        assert!(records < 10_000_000, "no end in sight");
    }
}

/// The name a mutated NEDLIB `.meta` or Kulturarw3 file takes in its harvest.
const NEDLIB_MD5: &str = "0123456789abcdef0123456789abcdef";
const KW3_FILE: &str = "archive/3f/www.example.se/17/4443a33a26034bd0d1fe8db1240a35e3.1136214245";

/// Reads every capture of a capture source and every payload: no error, at most one capture
/// (the harvest holds one), and when none, the mutated file kept as a side file.
fn read_capture_source(mut src: impl webaip::internals::CaptureSource, file: &str) {
    let mut captures = 0;
    for c in src.by_ref() {
        let c = c.unwrap_or_else(|e| panic!("one bad file stopped the harvest: {e}"));
        let mut payload = c.payload.open().unwrap_or_else(|e| panic!("payload: {e}"));
        let n = io::copy(&mut payload, &mut io::sink()).unwrap();
        assert_eq!(n, c.payload.len(), "payload length");
        assert!(!c.uri.is_empty(), "a capture without a URI");
        captures += 1;
    }
    assert!(captures <= 1, "{captures} captures of one file");
    assert!(src.quirks().len() <= 10_000, "quirks unbounded");
    if captures == 0 {
        let sides = src.side_files();
        let refused = src.refusals().1;
        assert!(
            refused > 0 || sides.iter().any(|s| s.relative == file),
            "{file} neither a capture nor kept: {sides:?}"
        );
    }
}

/// NEDLIB: the mutated bytes are a `.meta` beside a data file.
fn nedlib_case(data: &[u8], scratch: &Path) {
    use webaip::internals::{NedlibHarvest, NedlibOptions};
    let root = scratch.join("nedlib");
    let run = root.join("2003-7-18/0000");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join(format!("{NEDLIB_MD5}.meta")), data).unwrap();
    std::fs::write(run.join(NEDLIB_MD5), b"<html>payload</html>").unwrap();
    let h = NedlibHarvest::open(&root, NedlibOptions::default()).unwrap();
    read_capture_source(h, &format!("2003-7-18/0000/{NEDLIB_MD5}.meta"));
}

/// Kulturarw3: the mutated bytes are one `<md5url>.<epoch>` file of an archive.
fn kulturarw3_case(data: &[u8], scratch: &Path) {
    use webaip::internals::Kulturarw3Archive;
    let root = scratch.join("kw3");
    let file = root.join(KW3_FILE);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, data).unwrap();
    read_capture_source(Kulturarw3Archive::open(&root).unwrap(), KW3_FILE);
}

fn mets_case(path: &Path, case: u64) {
    let schemas = corpus().join("../xsd");
    let with_xsd = case.is_multiple_of(16) && schemas.is_dir();
    let opts = ValidateOptions { schemas: with_xsd.then_some(schemas), profile: None };
    let _ = validate_mets(path, &opts);
}

/// The side files of a mirror the mirror target mutates, one a case: the wget log, then
/// HTTrack's log, cache index, `url.map` and cache zip; last, a mirror's own `.zip`.
const MIRROR_FILES: [&str; 6] = [
    "wget-log",
    "hts-log.txt",
    "hts-cache/new.txt",
    "url.map",
    "hts-cache/new.zip",
    "../mirror.zip",
];

/// Seeds of the mirror target, one per [`MIRROR_FILES`] name, about the files of
/// [`mirror_case`]'s mirror.
fn mirror_seeds() -> Vec<Vec<u8>> {
    let mut log = String::new();
    for (url, path) in [
        ("http://www.e.org/", "www.e.org/index.html"),
        ("http://www.e.org/a?x=1", "/home/u/dl/www.e.org/a"),
        ("http://www.e.org:8080/b", "./www.e.org:8080/b"),
    ] {
        log.push_str(&format!(
            "--2024-01-02 10:11:12--  {url}\nResolving www.e.org... 1.2.3.4\n\
             HTTP request sent, awaiting response... 200 OK\nLength: 10 [text/html]\n\
             Saving to: \u{2018}{path}\u{2019}\n\n"
        ));
    }
    let hts_log = "HTTrack3.49-2 launched on Tue, 02 Jan 2024 10:11:12 at http://www.e.org/ +*\n";
    let new_txt = "date\tsize\tflags\tstatuscode\tstatus\tMIME\tEtag|Date\tURL\tlocalfile\t(from)\n\
        10:11:12\t10/10\t---M--\t200\tadded ('OK')\ttext/html\tdate:x\thttp://www.e.org/\t\
        www.e.org/index.html\t(from )\n";
    let url_map = "http://www.e.org/a?x=1^^www.e.org/a\nhttp://www.e.org/^^www.e.org/index.html\n";
    // One local header whose extra field is HTTrack's header block, as new.zip holds them.
    let mut cache = Vec::new();
    let extra = b"X-In-Cache: 1\r\nContent-Type: text/html\r\nX-Save: www.e.org/index.html\r\n";
    let name = b"http://www.e.org/";
    cache.extend_from_slice(&[0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    cache.extend_from_slice(&[0; 4]);
    cache.extend_from_slice(&2u32.to_le_bytes());
    cache.extend_from_slice(&2u32.to_le_bytes());
    cache.extend_from_slice(&(name.len() as u16).to_le_bytes());
    cache.extend_from_slice(&(extra.len() as u16).to_le_bytes());
    cache.extend_from_slice(name);
    cache.extend_from_slice(extra);
    cache.extend_from_slice(b"ok");
    // A mirror's .zip: its folder, a log, pages, a directory entry.
    let mut z = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (name, data) in [
        ("site/wget-log", log.as_bytes()),
        ("site/www.e.org/index.html", b"<title>x</title>".as_slice()),
        ("site/www.e.org/a", b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".as_slice()),
    ] {
        z.start_file(name, opts).unwrap();
        z.write_all(data).unwrap();
    }
    z.add_directory("site/www.e.org/d/", opts).unwrap();
    let mirror_zip = z.finish().unwrap().into_inner();
    vec![log.into_bytes(), hts_log.into(), new_txt.into(), url_map.into(), cache, mirror_zip]
}

/// Mirror side files: the case's file mutated, the others as seeded, then the mirror read
/// as wget's (the wget log) or HTTrack's (the others); or a mutated mirror `.zip` unpacked
/// and read. Reading may refuse; it must not panic, and no unpacked copy may stay.
fn mirror_case(root: &Path, which: usize, data: &[u8], seeds: &[Vec<u8>]) {
    use webaip::internals::{MirrorKind, MirrorOptions, read_mirror};
    let opts = MirrorOptions {
        url_prefix: None,
        capture_date: chrono::DateTime::from_timestamp(1_700_000_000, 0),
        zone: webaip::internals::Zone::Utc,
        name: None,
    };
    if which == MIRROR_FILES.len() - 1 {
        let work = root.with_file_name("unzip");
        std::fs::create_dir_all(&work).unwrap();
        let zip = work.join("mirror.zip");
        std::fs::write(&zip, data).unwrap();
        if let Ok(u) = webaip::internals::unpack_zip(&zip, &work, 100) {
            let _ = read_mirror(&u.root, u.kind, &opts);
        }
        let left = std::fs::read_dir(&work).unwrap().count();
        assert_eq!(left, 1, "an unpacked copy is left in {}", work.display());
        return;
    }
    std::fs::create_dir_all(root.join("www.e.org")).unwrap();
    std::fs::create_dir_all(root.join("hts-cache")).unwrap();
    std::fs::write(root.join("www.e.org/index.html"), b"<title>x</title>").unwrap();
    std::fs::write(root.join("www.e.org/a"), b"a").unwrap();
    for (i, name) in MIRROR_FILES.iter().enumerate().take(MIRROR_FILES.len() - 1) {
        std::fs::write(root.join(name), if i == which { data } else { &seeds[i] }).unwrap();
    }
    let kind = if which == 0 { MirrorKind::Wget } else { MirrorKind::Httrack };
    let _ = read_mirror(root, kind, &opts);
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Arc,
    Warc,
    Mets,
    Mirror,
    Nedlib,
    Kulturarw3,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Arc => "arc",
            Target::Warc => "warc",
            Target::Mets => "mets",
            Target::Mirror => "mirror",
            Target::Nedlib => "nedlib",
            Target::Kulturarw3 => "kulturarw3",
        }
    }
    fn test(self) -> &'static str {
        match self {
            Target::Arc => "fuzz::harness::arc_reader",
            Target::Warc => "fuzz::harness::warc_reader",
            Target::Mets => "fuzz::harness::mets_validator",
            Target::Mirror => "fuzz::harness::mirror_logs",
            Target::Nedlib => "fuzz::harness::nedlib_meta_reader",
            Target::Kulturarw3 => "fuzz::harness::kulturarw3_reader",
        }
    }
}

/// Every regular file under `dir` whose name `keep` accepts, read.
fn sample_files(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<Vec<u8>> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file() && keep(&e.file_name().to_string_lossy()))
        .map(|e| e.into_path())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no seeds in {}", dir.display());
    v.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn seeds(target: Target, scratch: &Path) -> Vec<Vec<u8>> {
    let samples = crate::util::samples();
    match target {
        Target::Nedlib => sample_files(&samples.join("nedlib"), |n| n.ends_with(".meta")),
        Target::Kulturarw3 => sample_files(&samples.join("kulturarw3"), |n| n.contains('.')),
        Target::Arc => read_seeds(&corpus().join("arc")),
        Target::Warc => read_seeds(&corpus().join("warc")),
        Target::Mets => {
            use webaip::internals::model::SerializationMode;
            let mut v = Vec::new();
            for (i, mode) in
                [SerializationMode::Minimal, SerializationMode::Full].iter().enumerate()
            {
                let dir = scratch.join(format!("mets-seed-{i}"));
                std::fs::create_dir_all(&dir).unwrap();
                let p = crate::mets_package::build(&dir, *mode, 3, "");
                v.push(std::fs::read(p).unwrap());
            }
            v
        }
        Target::Mirror => mirror_seeds(),
    }
}

/// The child: mutates and runs cases until the time or case budget is spent.
fn child_loop(target: Target) {
    let seed = env_u64("WEBAIP_FUZZ_SEED").expect("seed given by the parent");
    let seconds = env_u64("WEBAIP_FUZZ_SECONDS").unwrap_or(20);
    let cases = env_u64("WEBAIP_FUZZ_CASES").unwrap_or(u64::MAX);
    let start = env_u64("WEBAIP_FUZZ_START").unwrap_or(0);
    let scratch = PathBuf::from(std::env::var("WEBAIP_FUZZ_DIR").expect("work directory"));
    let progress = scratch.join("case");
    let seeds = seeds(target, &scratch);
    let ext = match target {
        Target::Arc => "arc",
        Target::Warc => "warc",
        Target::Mets => "xml",
        Target::Mirror => "txt",
        Target::Nedlib => "meta",
        Target::Kulturarw3 => "kw3",
    };
    let input = scratch.join(format!("input.{ext}"));
    let began = Instant::now();
    let mut done = 0u64;
    while done < cases && began.elapsed() < Duration::from_secs(seconds) {
        let case = start + done;
        let mut rng = Rng::for_case(seed, case);
        // The mirror target mutates one side file a case, from its own seed.
        let which = (case % seeds.len() as u64) as usize;
        let data = match target {
            Target::Mirror => mutated(&mut rng, &seeds[which..=which]),
            _ => mutated(&mut rng, &seeds),
        };
        std::fs::write(&input, &data).unwrap();
        std::fs::write(&progress, case.to_string()).unwrap();
        match target {
            Target::Arc => arc_case(&input, &data, case, &scratch),
            Target::Warc => warc_case(&input),
            Target::Mets => mets_case(&input, case),
            Target::Mirror => mirror_case(&scratch.join("mirror"), which, &data, &seeds),
            Target::Nedlib => nedlib_case(&data, &scratch),
            Target::Kulturarw3 => kulturarw3_case(&data, &scratch),
        }
        done += 1;
    }
    eprintln!("fuzz {}: {done} cases", target.name());
}

/// The parent: runs the child under the limits and reports a failure with what replays it.
fn run(target: Target) {
    if is_child(target.test()) {
        child_loop(target);
        return;
    }
    let seed = env_u64("WEBAIP_FUZZ_SEED").unwrap_or_else(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        t.as_nanos() as u64
    });
    let seconds = env_u64("WEBAIP_FUZZ_SECONDS").unwrap_or(20);
    let memory = env_u64("WEBAIP_FUZZ_MEMORY").unwrap_or(1 << 30);
    let dir = tempfile::tempdir().unwrap();
    let mut env = vec![
        ("WEBAIP_FUZZ_SEED", seed.to_string()),
        ("WEBAIP_FUZZ_SECONDS", seconds.to_string()),
        ("WEBAIP_FUZZ_DIR", dir.path().display().to_string()),
    ];
    for k in ["WEBAIP_FUZZ_CASES", "WEBAIP_FUZZ_START"] {
        if let Ok(v) = std::env::var(k) {
            env.push((k, v));
        }
    }
    eprintln!("fuzz {}: WEBAIP_FUZZ_SEED={seed}, {seconds} s", target.name());
    // A case that hangs shows as the child outliving its budget by a wide margin.
    let deadline = Duration::from_secs(seconds + 60);
    let run = run_child(target.test(), &env, Some(memory), deadline, &dir.path().join("stderr"));
    let ok = run.status.success();
    if !ok {
        let case = std::fs::read_to_string(dir.path().join("case")).unwrap_or_default();
        let kept = std::env::temp_dir().join("webaip-fuzz-failures");
        let _ = std::fs::create_dir_all(&kept);
        let name = format!("{}-seed{seed}-case{case}.bin", target.name());
        let input = std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("input.")));
        if let Some(input) = input {
            let _ = std::fs::copy(input, kept.join(&name));
        }
        let why = match run.status {
            Outcome::TimedOut => "did not end in time (hang?)".to_string(),
            s => format!("ended with {s:?}"),
        };
        panic!(
            "fuzz {}: case {case} {why}; input kept as {}; replay with WEBAIP_FUZZ_SEED={seed} \
             WEBAIP_FUZZ_START={case} WEBAIP_FUZZ_CASES=1\n{}",
            target.name(),
            kept.join(&name).display(),
            run.stderr
        );
    }
    eprintln!("{} peak RSS {} MB", run.stderr.trim(), run.peak_rss >> 20);
    assert!(run.peak_rss < memory, "peak RSS {} MB", run.peak_rss >> 20);
}

#[test]
fn arc_reader() {
    run(Target::Arc);
}

#[test]
fn warc_reader() {
    run(Target::Warc);
}

#[test]
fn mets_validator() {
    run(Target::Mets);
}

#[test]
fn mirror_logs() {
    run(Target::Mirror);
}

#[test]
fn nedlib_meta_reader() {
    run(Target::Nedlib);
}

#[test]
fn kulturarw3_reader() {
    run(Target::Kulturarw3);
}
