//! Auditing a stored package (`webaip audit`): the METS is validated as `webaip validate` does,
//! then every file it lists is checked against the bytes on disk: existence, SIZE and SHA-512;
//! every record range must be exactly one gzip member holding one WARC record; every bytestream
//! range inside a record must have its stated SIZE and SHA-512. `manifest-sha512.txt` must agree,
//! and files nothing lists are reported.
//!
//! Everything streams: a container is read once per record range, a record is decompressed once
//! for all of its bytestreams, and nothing is held in memory beyond a buffer.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;
use quick_xml::events::Event as XmlEvent;
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha512};

use crate::formats::digest::hex;
use crate::mets::validate::{Severity, ValidateError, ValidationReport};
use crate::mets::{ValidateOptions, validate_mets};

/// Name of the package manifest.
pub const MANIFEST: &str = "manifest-sha512.txt";
/// The message of a listed file that is absent.
const MISSING: &str = "listed in the METS but not in the package";

/// Name of the METS document.
pub const METS: &str = "METS.xml";

/// One thing wrong with the package's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditFinding {
    /// How serious.
    pub severity: Severity,
    /// The check: a PROFILE.md number or a check name (`fixity`, `range`, `manifest`, ...).
    pub rule: String,
    /// The package-relative file concerned.
    pub file: String,
    /// Byte offset in that file, when the finding is about a place in it.
    pub offset: Option<u64>,
    /// The METS `<file>` ID concerned, when there is one.
    pub mets_id: Option<String>,
    /// What was expected and what was found.
    pub message: String,
}

/// The result of auditing one package.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// The package directory.
    pub package: PathBuf,
    /// The METS validation (schemas and profile).
    pub validation: ValidationReport,
    /// Findings about the bytes, in file order.
    pub findings: Vec<AuditFinding>,
    /// Files listed at the top of the fileSec and checked.
    pub files_checked: u64,
    /// Record ranges checked.
    pub records_checked: u64,
    /// Bytestream ranges checked.
    pub bytestreams_checked: u64,
    /// True when neither the validation nor the byte checks found an error.
    pub intact: bool,
}

/// A package that could not be audited at all.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The METS cannot be read or validated.
    #[error(transparent)]
    Validate(#[from] ValidateError),
    /// The METS is not well-formed enough to list its files.
    #[error("{path}: {message}")]
    Mets {
        /// The METS document.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// One `<file>` of the fileSec.
#[derive(Debug, Clone, Default)]
struct ListedFile {
    id: String,
    /// USE of the fileGrp (or its ID), for reporting missing groups.
    group: String,
    href: Option<String>,
    size: Option<u64>,
    checksum: Option<String>,
    begin: Option<u64>,
    end: Option<u64>,
    children: Vec<ListedFile>,
}

/// Audits the package in `dir`; `progress` is told the size of each file once it is checked.
pub fn audit_package(
    dir: &Path,
    opts: &ValidateOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<AuditReport, AuditError> {
    let mets_path = dir.join(METS);
    let validation = validate_mets(&mets_path, opts)?;
    let files = list_files(&mets_path)?;
    let mut findings = Vec::new();
    let mut listed: BTreeSet<String> = BTreeSet::new();
    for f in &files {
        if let Some(h) = &f.href {
            listed.insert(h.clone());
        }
    }

    // Each top-level file, with its records, in parallel: files are independent.
    let results: Vec<(Vec<AuditFinding>, Option<String>, u64, u64)> =
        files.par_iter().map(|f| check_file(dir, f, progress)).collect();
    let mut hashes: BTreeMap<String, String> = BTreeMap::new();
    let (mut records, mut bytestreams) = (0, 0);
    for (f, (mut found, sha, r, b)) in files.iter().zip(results) {
        findings.append(&mut found);
        if let (Some(h), Some(sha)) = (&f.href, sha) {
            hashes.insert(h.clone(), sha);
        }
        records += r;
        bytestreams += b;
    }
    collapse_missing_groups(&files, &mut findings);
    check_manifest(dir, &listed, &mut hashes, &mut findings);
    check_unlisted(dir, &listed, &mut findings);

    findings.sort_by(|a, b| a.file.cmp(&b.file).then(a.offset.cmp(&b.offset)));
    let intact = validation.valid && !findings.iter().any(|f| f.severity == Severity::Error);
    Ok(AuditReport {
        package: dir.to_path_buf(),
        validation,
        findings,
        files_checked: files.len() as u64,
        records_checked: records,
        bytestreams_checked: bytestreams,
        intact,
    })
}

fn finding(rule: &str, file: &str, offset: Option<u64>, id: &str, message: String) -> AuditFinding {
    AuditFinding {
        severity: Severity::Error,
        rule: rule.into(),
        file: file.into(),
        offset,
        mets_id: (!id.is_empty()).then(|| id.to_string()),
        message,
    }
}

/// A METS that travelled without its files (a reference package, a METS-only copy) would give
/// one finding per file; a group none of whose files is present gets one finding instead.
fn collapse_missing_groups(files: &[ListedFile], findings: &mut Vec<AuditFinding>) {
    let mut groups: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for f in files {
        let g = groups.entry(f.group.as_str()).or_default();
        g.0 += 1;
        let missing = findings.iter().any(|x| {
            x.message == MISSING && x.mets_id.as_deref() == Some(f.id.as_str()) && !f.id.is_empty()
        });
        if missing {
            g.1 += 1;
        }
    }
    for (group, (total, missing)) in groups {
        if missing > 0 && missing == total {
            let in_group: BTreeSet<&str> =
                files.iter().filter(|f| f.group == group).map(|f| f.id.as_str()).collect();
            findings.retain(|x| {
                !(x.message == MISSING
                    && x.mets_id.as_deref().is_some_and(|i| in_group.contains(i)))
            });
            let first = files.iter().find(|f| f.group == group).and_then(|f| f.href.clone());
            findings.push(finding(
                "fixity",
                &first.unwrap_or_default(),
                None,
                "",
                format!(
                    "file group {group:?}: none of its {total} file(s) is in the package (this is the first)"
                ),
            ));
        }
    }
}

/// Reads the fileSec: top-level files with their nested record and bytestream files.
fn list_files(mets: &Path) -> Result<Vec<ListedFile>, AuditError> {
    let bad = |message: String| AuditError::Mets { path: mets.to_path_buf(), message };
    let file = File::open(mets).map_err(|e| bad(e.to_string()))?;
    let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(256 * 1024, file));
    let mut buf = Vec::new();
    let mut top = Vec::new();
    let mut stack: Vec<ListedFile> = Vec::new();
    let mut group = String::new();
    loop {
        let pos = reader.buffer_position();
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| bad(format!("XML error near byte {pos}: {e}")))?;
        match event {
            XmlEvent::Start(ref e) | XmlEvent::Empty(ref e) => {
                let empty = matches!(event, XmlEvent::Empty(_));
                let (name, pairs) = crate::mets::validate::element_parts(e);
                // Keys by local name: FLocat's href is `xlink:href`.
                let attrs: BTreeMap<String, String> = pairs
                    .into_iter()
                    .map(|(k, v)| (k.rsplit(':').next().unwrap_or_default().to_string(), v))
                    .collect();
                let num = |k: &str| attrs.get(k).and_then(|v| v.trim().parse::<u64>().ok());
                match name.as_str() {
                    "fileGrp" => {
                        group = attrs.get("USE").or(attrs.get("ID")).cloned().unwrap_or_default();
                    }
                    "file" => {
                        let f = ListedFile {
                            id: attrs.get("ID").cloned().unwrap_or_default(),
                            group: group.clone(),
                            href: None,
                            size: num("SIZE"),
                            checksum: attrs.get("CHECKSUM").map(|c| c.to_ascii_lowercase()),
                            begin: num("BEGIN"),
                            end: num("END"),
                            children: Vec::new(),
                        };
                        if empty {
                            attach(&mut stack, &mut top, f);
                        } else {
                            stack.push(f);
                        }
                    }
                    "FLocat" => {
                        if let (Some(f), Some(h)) = (stack.last_mut(), attrs.get("href")) {
                            f.href = Some(h.clone());
                        }
                    }
                    _ => {}
                }
            }
            XmlEvent::End(ref e) if e.local_name().as_ref() == "file" => {
                if let Some(f) = stack.pop() {
                    attach(&mut stack, &mut top, f);
                }
            }
            XmlEvent::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(top)
}

fn attach(stack: &mut [ListedFile], top: &mut Vec<ListedFile>, f: ListedFile) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(f),
        None => top.push(f),
    }
}

/// Checks one top-level file and its records; returns findings, the file's SHA-512 (when it
/// could be read), and the numbers of records and bytestreams checked.
fn check_file(
    dir: &Path,
    f: &ListedFile,
    progress: &(dyn Fn(u64) + Sync),
) -> (Vec<AuditFinding>, Option<String>, u64, u64) {
    let mut out = Vec::new();
    let Some(href) = &f.href else {
        // Reference packages list files by other means; the validation reports the FLocat rule.
        return (out, None, 0, 0);
    };
    if href.contains("://") || href.starts_with('/') || href.split('/').any(|p| p == "..") {
        let what = "its FLocat points outside the package; not checked".to_string();
        out.push(AuditFinding {
            severity: Severity::Warning,
            ..finding("location", href, None, &f.id, what)
        });
        return (out, None, 0, 0);
    }
    let path = dir.join(href);
    let (size, sha) = match hash_whole(&path) {
        Ok(v) => v,
        Err(e) => {
            let what = if e.kind() == io::ErrorKind::NotFound {
                MISSING.to_string()
            } else {
                format!("cannot be read: {e}")
            };
            out.push(finding("fixity", href, None, &f.id, what));
            return (out, None, 0, 0);
        }
    };
    if let Some(s) = f.size
        && s != size
    {
        out.push(finding("fixity", href, None, &f.id, format!("SIZE={s}; found {size} bytes")));
    }
    if let Some(c) = &f.checksum
        && *c != sha
    {
        out.push(finding("fixity", href, None, &f.id, format!("CHECKSUM {c}; found {sha}")));
    }
    let (mut records, mut bytestreams) = (0, 0);
    for r in &f.children {
        records += 1;
        bytestreams += r.children.len() as u64;
        if let Err(found) = check_record(&path, href, size, r) {
            out.push(found);
        }
    }
    progress(size);
    (out, Some(sha), records, bytestreams)
}

fn hash_whole(path: &Path) -> io::Result<(u64, String)> {
    let mut file = File::open(path)?;
    let mut hasher = Sha512::new();
    let n = hash_into(&mut file, &mut hasher, u64::MAX)?;
    Ok((n, hex(&hasher.finalize())))
}

/// Feeds up to `limit` bytes of `from` to `hasher`; returns how many there were.
fn hash_into(from: &mut impl Read, hasher: &mut Sha512, limit: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut from = from.take(limit);
    let mut n = 0u64;
    loop {
        match from.read(&mut buf) {
            Ok(0) => return Ok(n),
            Ok(k) => {
                hasher.update(&buf[..k]);
                n += k as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Checks that a record range is one gzip member holding one WARC record, and that each of
/// its bytestreams has its stated size and digest inside the decompressed record.
fn check_record(
    path: &Path,
    href: &str,
    container_size: u64,
    r: &ListedFile,
) -> Result<(), AuditFinding> {
    let fail =
        |offset: Option<u64>, message: String| finding("range", href, offset, &r.id, message);
    let (Some(begin), Some(end)) = (r.begin, r.end) else {
        return Err(fail(None, "record has no BEGIN/END".into()));
    };
    if end >= container_size {
        return Err(fail(
            Some(begin),
            format!("END={end} is past the end of the file ({container_size} bytes)"),
        ));
    }
    let io_fail = |e: io::Error| fail(Some(begin), format!("cannot read the range: {e}"));
    let mut file = File::open(path).map_err(io_fail)?;
    file.seek(SeekFrom::Start(begin)).map_err(io_fail)?;
    let len = end - begin + 1;
    let mut range = BufReader::new(file.take(len));
    let mut record = Decompressed { inner: GzDecoder::new(&mut range), at: 0 };
    let head = read_warc_head(&mut record)
        .map_err(|m| fail(Some(begin), format!("bytes {begin}..={end}: {m}")))?;

    // Bytestreams in order of their offset; each hashed as the record streams past.
    let mut streams: Vec<&ListedFile> = r.children.iter().collect();
    streams.sort_by_key(|b| b.begin);
    for b in streams {
        let (Some(sb), Some(se)) = (b.begin, b.end) else { continue };
        if sb < record.at {
            return Err(fail(Some(begin), format!("bytestream {} overlaps another", b.id)));
        }
        let skip = sb - record.at;
        io::copy(&mut (&mut record).take(skip), &mut io::sink())
            .map_err(|e| gz(&fail, begin, e))?;
        let want = se - sb + 1;
        let mut hasher = Sha512::new();
        let got = hash_into(&mut record, &mut hasher, want).map_err(|e| gz(&fail, begin, e))?;
        let sha = hex(&hasher.finalize());
        if got != want {
            return Err(fail(
                Some(begin),
                format!(
                    "bytestream {} at {sb}..={se} of the record: the record ends after {got} of its {want} bytes",
                    b.id
                ),
            ));
        }
        if let Some(s) = b.size
            && s != want
        {
            return Err(fail(
                Some(begin),
                format!("bytestream {}: SIZE={s}; its range holds {want}", b.id),
            ));
        }
        if let Some(c) = &b.checksum
            && *c != sha
        {
            return Err(AuditFinding {
                rule: "fixity".into(),
                ..fail(
                    Some(begin),
                    format!("bytestream {} at {sb}..={se}: CHECKSUM {c}; found {sha}", b.id),
                )
            });
        }
    }
    // The rest of the record, then nothing: the range must be exactly this one member.
    let total = head.block_end;
    if record.at < total {
        let rest = total - record.at;
        io::copy(&mut (&mut record).take(rest), &mut io::sink())
            .map_err(|e| gz(&fail, begin, e))?;
    }
    if record.at < total {
        return Err(fail(
            Some(begin),
            format!("the record is cut short: {} of {total} bytes", record.at),
        ));
    }
    let mut tail = Vec::new();
    record.read_to_end(&mut tail).map_err(|e| gz(&fail, begin, e))?;
    if tail != b"\r\n\r\n" {
        return Err(fail(
            Some(begin),
            format!(
                "after its {} block bytes the record has {} byte(s), not CRLF CRLF",
                head.length,
                tail.len()
            ),
        ));
    }
    let rest = range.fill_buf().map_err(io_fail)?.len();
    if rest > 0 {
        return Err(fail(
            Some(begin),
            format!("bytes {begin}..={end} hold more than one gzip member (or trailing bytes)"),
        ));
    }
    Ok(())
}

fn gz(
    fail: &impl Fn(Option<u64>, String) -> AuditFinding,
    begin: u64,
    e: io::Error,
) -> AuditFinding {
    fail(Some(begin), format!("the gzip member does not decompress: {e}"))
}

/// A decompressing reader that counts the bytes it has delivered.
struct Decompressed<R> {
    inner: R,
    at: u64,
}

impl<R: Read> Read for Decompressed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

struct WarcHead {
    length: u64,
    /// Offset just past the block, in the decompressed record.
    block_end: u64,
}

/// Reads a WARC header (version line, fields, blank line) and its Content-Length.
fn read_warc_head<R: Read>(record: &mut Decompressed<R>) -> Result<WarcHead, String> {
    const MAX_HEAD: usize = 64 * 1024;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte through a buffered decoder: the head is small and must not overshoot the block.
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return Err("no end of WARC header in the first 64 KiB".into());
        }
        match record.read(&mut byte) {
            Ok(0) => return Err("the member ends inside the WARC header".into()),
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(format!("not a gzip member that decompresses: {e}")),
        }
    }
    if !head.starts_with(b"WARC/") {
        return Err("the decompressed bytes do not start with a WARC version line".into());
    }
    let text = String::from_utf8_lossy(&head);
    let length = text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("Content-Length"))
        .and_then(|(_, v)| v.trim().parse::<u64>().ok())
        .ok_or("the WARC header has no Content-Length")?;
    Ok(WarcHead { length, block_end: head.len() as u64 + length })
}

/// Compares `manifest-sha512.txt` with the files: every line's file exists with that digest,
/// and every listed file has a line.
fn check_manifest(
    dir: &Path,
    listed: &BTreeSet<String>,
    hashes: &mut BTreeMap<String, String>,
    findings: &mut Vec<AuditFinding>,
) {
    let text = match std::fs::read_to_string(dir.join(MANIFEST)) {
        Ok(t) => t,
        Err(e) => {
            findings.push(finding("manifest", MANIFEST, None, "", format!("cannot be read: {e}")));
            return;
        }
    };
    let mut seen = BTreeSet::new();
    let mut offset = 0u64;
    for line in text.split_inclusive('\n') {
        let here = offset;
        offset += line.len() as u64;
        let l = line.trim_end_matches(['\n', '\r']);
        if l.is_empty() {
            continue;
        }
        let Some((sum, name)) = l.split_once("  ") else {
            findings.push(finding(
                "manifest",
                MANIFEST,
                Some(here),
                "",
                format!("line {l:?} is not \"<sha512>  <path>\""),
            ));
            continue;
        };
        let sum = sum.to_ascii_lowercase();
        seen.insert(name.to_string());
        let actual = match hashes.get(name) {
            Some(h) => Some(h.clone()),
            None => hash_whole(&dir.join(name)).ok().map(|(_, h)| h),
        };
        match actual {
            None => findings.push(finding(
                "manifest",
                MANIFEST,
                Some(here),
                "",
                format!("{name} is in the manifest but not in the package"),
            )),
            Some(h) if h != sum => findings.push(finding(
                "manifest",
                MANIFEST,
                Some(here),
                "",
                format!("{name}: manifest says {sum}; the file's SHA-512 is {h}"),
            )),
            Some(h) => {
                hashes.insert(name.to_string(), h);
            }
        }
    }
    for name in listed.iter().chain(std::iter::once(&METS.to_string())) {
        if !seen.contains(name) {
            findings.push(finding(
                "manifest",
                MANIFEST,
                None,
                "",
                format!("{name} has no line in the manifest"),
            ));
        }
    }
}

/// Reports files in the package that neither the METS nor the package layout accounts for.
fn check_unlisted(dir: &Path, listed: &BTreeSet<String>, findings: &mut Vec<AuditFinding>) {
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                findings.push(finding(
                    "unlisted",
                    "",
                    None,
                    "",
                    format!("cannot list the package: {e}"),
                ));
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir) else { continue };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel == METS || rel == MANIFEST || listed.contains(&rel) {
            continue;
        }
        findings.push(finding(
            "unlisted",
            &rel,
            None,
            "",
            "in the package, but no <file> of the METS lists it".into(),
        ));
    }
}
