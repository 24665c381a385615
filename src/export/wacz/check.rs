//! The deep check of a WACZ file (`webaip validate FILE.wacz`), against WACZ 1.1.1:
//!
//! - the ZIP: every member named safely (no `..`, no absolute or backslash path) and once,
//!   its local header agreeing with its central directory entry (name, method, CRC-32,
//!   sizes), its data inside the file, overlapping no other member and of the CRC-32 stated; WARCs and gzip indexes stored, not
//!   compressed again (the rule that lets a reader seek into them);
//! - the layout: `datapackage.json`, `pages/pages.jsonl`, at least one WARC under `archive/`
//!   and one index under `indexes/`;
//! - `datapackage.json`: its required fields, and every resource's `bytes` and `hash` against
//!   the member's bytes; every member listed; `datapackage-digest.json` against
//!   `datapackage.json`;
//! - every index line re-derived from the WARC record at its offset (url, date, mime,
//!   status, digest, length), every indexed record (response, revisit, resource, metadata)
//!   named by an index line, and a ZipNum index's blocks against `index.idx`;
//! - every record's `WARC-Block-Digest` and `WARC-Payload-Digest` against its bytes (hashed as
//!   they stream past, in the same read as the index line), and every revisit's original in
//!   the WACZ: a capture of the same URL key and payload digest, as pywb finds it (an error:
//!   a revisit without it cannot be replayed from the WACZ);
//! - every page's header and fields, and a capture in the index for its URL.
//!
//! Memory is bounded whatever the WACZ holds: members are read through the central
//! directory's offsets (checked to lie inside the file) and hashed in chunks; each WARC is
//! walked once, its derived lines and the index's lines sorted on disk ([`LineSorter`]) and
//! merged by (WARC, offset); pages and captures likewise by URL.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::formats::digest::hex;
use crate::formats::segment::FileRange;
use crate::formats::warc::WarcReader;
use crate::index::cdxj::{IndexEntry, json_string};
use crate::index::record::{RecordIndexError, entry_of};
use crate::index::sort::LineSorter;

/// The WACZ's resource list.
const DATAPACKAGE: &str = "datapackage.json";

/// The ZIP structure: member names, data inside the file, no overlap.
pub const RULE_ZIP: &str = "WACZ-ZIP";
/// WARCs and gzip indexes stored, not compressed again.
pub const RULE_STORED: &str = "WACZ-STORED";
/// The members a WACZ must hold, where.
pub const RULE_LAYOUT: &str = "WACZ-LAYOUT";
/// `datapackage.json`: fields, resources, sizes, hashes.
pub const RULE_DATAPACKAGE: &str = "WACZ-DATAPACKAGE";
/// `datapackage-digest.json` against `datapackage.json`.
pub const RULE_DIGEST: &str = "WACZ-DIGEST";
/// A WARC member that cannot be read to its end.
pub const RULE_WARC: &str = "WACZ-WARC";
/// A record's `WARC-Block-Digest` or `WARC-Payload-Digest` against its bytes.
pub const RULE_WARC_DIGEST: &str = "WACZ-WARC-DIGEST";
/// A revisit whose original no WARC of the WACZ holds.
pub const RULE_REVISIT: &str = "WACZ-REVISIT";
/// An index line against the record at its offset.
pub const RULE_INDEX: &str = "WACZ-INDEX";
/// A ZipNum `index.idx` against its `index.cdx.gz` blocks.
pub const RULE_ZIPNUM: &str = "WACZ-ZIPNUM";
/// `pages/*.jsonl`: header, fields, a capture for each page.
pub const RULE_PAGES: &str = "WACZ-PAGES";

/// Bytes of a JSON member (`datapackage.json`, `datapackage-digest.json`) read at most.
const MAX_JSON: u64 = 16 << 20;
/// Bytes of one line of an index or pages file read at most.
const MAX_LINE: u64 = 1 << 20;
/// Memory each on-disk sort holds before spilling.
const SORT_BUDGET: usize = 32 << 20;
/// Findings of one kind listed one by one before they are only counted.
const MAX_SAME: usize = 50;
/// Characters of a finding's message shown at most (a message may quote the input).
const MAX_MESSAGE: usize = 1000;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The WACZ breaks a rule of the specification (or cannot be replayed as it says).
    Error,
    /// A recommendation not followed.
    Warning,
}

/// One thing wrong, with where it is.
#[derive(Debug, Clone, Serialize)]
pub struct WaczFinding {
    /// Error or warning.
    pub severity: Severity,
    /// The rule (`WACZ-...`, see the module's text).
    pub rule: &'static str,
    /// The ZIP member (empty for the file as a whole).
    pub member: String,
    /// The line of the member (1-based), for line-based members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The byte offset inside the member, for WARC records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for WaczFinding {
    /// `MEMBER[:LINE][@OFFSET]: error|warning [RULE] message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.member)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(offset) = self.offset {
            write!(f, "@{offset}")?;
        }
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, ": {sev} [{}] {}", self.rule, self.message)
    }
}

/// What the check found.
#[derive(Debug, Serialize)]
pub struct WaczReport {
    /// The file checked.
    pub wacz: String,
    /// No error found.
    pub valid: bool,
    /// Findings that are errors.
    pub errors: usize,
    /// Findings that are warnings.
    pub warnings: usize,
    /// ZIP members.
    pub members: usize,
    /// WARC members.
    pub warcs: usize,
    /// Indexed records read from the WARCs.
    pub records: u64,
    /// Index lines checked.
    pub index_lines: u64,
    /// Pages checked.
    pub pages: u64,
    /// Every finding, in the order found.
    pub findings: Vec<WaczFinding>,
}

/// Why a WACZ cannot be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum WaczCheckError {
    /// The file cannot be opened or read.
    #[error("{path}: {why}", why = crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The file is not a ZIP (no central directory can be read).
    #[error("{path}: not a readable ZIP file: {message}")]
    NotZip {
        /// The file.
        path: String,
        /// The ZIP reader's reason.
        message: String,
    },
}

/// A ZIP member as its central directory and local header describe it.
#[derive(Debug, Clone)]
struct Member {
    name: String,
    stored: bool,
    deflated: bool,
    header_start: u64,
    data_start: u64,
    compressed: u64,
    size: u64,
    crc: u32,
    /// A data descriptor follows the data.
    descriptor: bool,
}

/// The check's state: the file, its members, the findings so far.
struct Check {
    path: String,
    file: Arc<File>,
    len: u64,
    members: Vec<Member>,
    by_name: HashMap<String, usize>,
    findings: Vec<WaczFinding>,
    /// Findings made of each rule and severity, listed or not (past [`MAX_SAME`]).
    made: BTreeMap<(&'static str, SeverityKey), usize>,
    report_counts: (u64, u64, u64),
    /// The captures and revisits of the WARCs, to find revisits without their original.
    revisits: crossref::Revisits,
}

/// A severity as a map key (errors first).
type SeverityKey = u8;

fn severity_key(s: Severity) -> SeverityKey {
    match s {
        Severity::Error => 0,
        Severity::Warning => 1,
    }
}

/// Checks the WACZ at `path`: every finding, or why it cannot be read at all.
pub fn check_wacz(path: &Path) -> Result<WaczReport, WaczCheckError> {
    let shown = path.display().to_string();
    let io_err = |source| WaczCheckError::Io { path: shown.clone(), source };
    let file = open_regular(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    let file = Arc::new(file);
    let mut check = Check {
        path: shown.clone(),
        file: Arc::clone(&file),
        len,
        members: Vec::new(),
        by_name: HashMap::new(),
        findings: Vec::new(),
        made: BTreeMap::new(),
        report_counts: (0, 0, 0),
        revisits: crossref::Revisits::new(),
    };
    let mut candidates = structure::Candidates::default();
    let dir =
        zipdir::read(&file, len, &mut |e, dir_start| check.entry(e, dir_start, &mut candidates))
            .map_err(|e| WaczCheckError::NotZip { path: shown.clone(), message: e.to_string() })?;
    check.structure(dir, candidates);
    check.layout();
    let digests = check.datapackage().map_err(io_err)?;
    check.datapackage_digest(&digests);
    let mut captures = LineSorter::new(SORT_BUDGET);
    check.index(&mut captures).map_err(io_err)?;
    check.unresolved_revisits().map_err(io_err)?;
    check.pages(captures).map_err(io_err)?;
    Ok(check.into_report())
}

/// Opens `path` if it is a regular file (not a FIFO, device or folder).
fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    File::open(path)
}

/// True when a member name leads nowhere outside the WACZ's root.
fn safe_name(name: &str) -> bool {
    let unsafe_name = name.is_empty()
        || name.starts_with('/')
        || name.contains(['\\', '\0'])
        || name.split('/').any(|part| part == "..")
        || (name.len() > 1 && name.as_bytes()[1] == b':');
    !unsafe_name
}

/// `f` with its member name and message cut to what a line can show.
fn clipped(mut f: WaczFinding) -> WaczFinding {
    if f.member.len() > crate::layout::SHOWN_NAME {
        f.member = crate::layout::clip(&f.member, crate::layout::SHOWN_NAME);
    }
    if f.message.len() > MAX_MESSAGE {
        f.message = crate::layout::clip(&f.message, MAX_MESSAGE);
    }
    f
}

impl Check {
    /// Lists `f`, unless [`MAX_SAME`] of its rule and severity are listed already: those
    /// past it are only counted, and summed up in one line at the end.
    fn push(&mut self, f: WaczFinding) {
        let made = self.made.entry((f.rule, severity_key(f.severity))).or_default();
        *made += 1;
        if *made <= MAX_SAME {
            self.findings.push(clipped(f));
        }
    }

    /// Lists findings already capped by their maker.
    fn extend_listed(&mut self, found: impl IntoIterator<Item = WaczFinding>) {
        self.findings.extend(found.into_iter().map(clipped));
    }

    fn find(&mut self, severity: Severity, rule: &'static str, member: &str, message: String) {
        self.push(WaczFinding {
            severity,
            rule,
            member: member.to_string(),
            line: None,
            offset: None,
            message,
        });
    }

    fn error(&mut self, rule: &'static str, member: &str, message: String) {
        self.find(Severity::Error, rule, member, message);
    }

    fn error_at(
        &mut self,
        rule: &'static str,
        member: &str,
        at: (Option<u64>, Option<u64>),
        m: String,
    ) {
        self.push(WaczFinding {
            severity: Severity::Error,
            rule,
            member: member.to_string(),
            line: at.0,
            offset: at.1,
            message: m,
        });
    }

    fn into_report(mut self) -> WaczReport {
        let mut errors = self.findings.iter().filter(|f| f.severity == Severity::Error).count();
        let mut warnings = self.findings.len() - errors;
        for (&(rule, key), &made) in &self.made {
            let Some(hidden) = made.checked_sub(MAX_SAME).filter(|&n| n > 0) else { continue };
            let (severity, what) = match key {
                0 => (Severity::Error, "errors"),
                _ => (Severity::Warning, "warnings"),
            };
            match severity {
                Severity::Error => errors += hidden,
                Severity::Warning => warnings += hidden,
            }
            self.findings.push(WaczFinding {
                severity,
                rule,
                member: String::new(),
                line: None,
                offset: None,
                message: format!("{hidden} more {rule} {what} not listed"),
            });
        }
        WaczReport {
            wacz: self.path,
            valid: errors == 0,
            errors,
            warnings,
            members: self.members.len(),
            warcs: self.members.iter().filter(|m| is_warc(&m.name)).count(),
            records: self.report_counts.0,
            index_lines: self.report_counts.1,
            pages: self.report_counts.2,
            findings: self.findings,
        }
    }

    /// The members a WACZ must have, and how they must be stored.
    fn layout(&mut self) {
        for required in ["datapackage.json", "pages/pages.jsonl"] {
            if !self.by_name.contains_key(required) {
                self.error(RULE_LAYOUT, required, "required member is missing".into());
            }
        }
        if !self.members.iter().any(|m| is_warc(&m.name)) {
            self.error(RULE_LAYOUT, "archive/", "no WARC file under archive/".into());
        }
        if !self.members.iter().any(|m| is_index(&m.name)) {
            self.error(RULE_LAYOUT, "indexes/", "no CDXJ index under indexes/".into());
        }
        if !self.by_name.contains_key("datapackage-digest.json") {
            let msg = "no datapackage-digest.json (recommended: it fixes datapackage.json)";
            self.find(Severity::Warning, RULE_DIGEST, "datapackage-digest.json", msg.into());
        }
        // Taken out while findings are made (they never look at it), not copied.
        let members = std::mem::take(&mut self.members);
        for m in &members {
            if m.name.ends_with('/') {
                continue;
            }
            let gz = m.name.ends_with(".gz");
            if (m.name.starts_with("archive/") || (m.name.starts_with("indexes/") && gz))
                && !m.stored
            {
                let msg = "compressed in the ZIP: an already compressed or WARC file must be \
                           stored, so a reader can seek into it";
                self.error(RULE_STORED, &m.name, msg.into());
            } else if !m.stored && !m.deflated {
                let msg = "compressed with a method other than DEFLATE; it cannot be read";
                self.error(RULE_ZIP, &m.name, msg.into());
            }
            if m.name.starts_with("archive/") && !is_warc(&m.name) {
                let msg = "file under archive/ is not named .warc or .warc.gz";
                self.error(RULE_LAYOUT, &m.name, msg.into());
            }
        }
        self.members = members;
    }

    /// A reader of member `m`'s bytes (inflated when it is deflated), at most its declared
    /// size plus one byte (so a longer one is seen).
    fn open(&self, m: &Member) -> io::Result<Box<dyn Read + Send>> {
        // Positioned reads: readers of several members never move each other's offset.
        let range = FileRange::new(Arc::clone(&self.file), m.data_start, m.compressed);
        let raw = BufReader::with_capacity(1 << 16, range);
        if m.stored {
            Ok(Box::new(raw))
        } else if m.deflated {
            Ok(Box::new(flate2::bufread::DeflateDecoder::new(raw).take(m.size.saturating_add(1))))
        } else {
            Err(io::Error::new(io::ErrorKind::Unsupported, "compression method not supported"))
        }
    }

    /// SHA-256, length and CRC-32 of member `m`'s bytes, read in chunks.
    fn hash(&self, m: &Member) -> io::Result<(Sha256Sum, u64, u32)> {
        let mut reader = self.open(m)?;
        let mut hasher = Sha256::new();
        let mut crc = flate2::Crc::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                return Ok((hasher.finalize().into(), total, crc.sum()));
            }
            hasher.update(&buf[..n]);
            crc.update(&buf[..n]);
            total += n as u64;
        }
    }

    /// The bytes of a small JSON member, parsed.
    fn json_member(&mut self, name: &str, rule: &'static str) -> Option<serde_json::Value> {
        let m = self.members[*self.by_name.get(name)?].clone();
        let mut bytes = Vec::new();
        let read = self.open(&m).and_then(|r| r.take(MAX_JSON + 1).read_to_end(&mut bytes));
        if let Err(e) = read {
            self.error(rule, name, format!("cannot be read: {e}"));
            return None;
        }
        if bytes.len() as u64 > MAX_JSON {
            self.error(rule, name, format!("larger than {MAX_JSON} bytes"));
            return None;
        }
        match serde_json::from_slice(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                self.error_at(rule, name, (Some(e.line() as u64), None), format!("not JSON: {e}"));
                None
            }
        }
    }

    /// `datapackage.json` against the members; the hashes of every member (by its place in
    /// the members: no second copy of the names).
    fn datapackage(&mut self) -> io::Result<Vec<Option<Sha256Sum>>> {
        let digests = self.member_digests();
        let Some(dp) = self.json_member(DATAPACKAGE, RULE_DATAPACKAGE) else { return Ok(digests) };
        if dp.get("profile").and_then(|v| v.as_str()) != Some("data-package") {
            self.error(RULE_DATAPACKAGE, DATAPACKAGE, "`profile` is not \"data-package\"".into());
        }
        if dp.get("wacz_version").and_then(|v| v.as_str()).is_none() {
            self.error(RULE_DATAPACKAGE, DATAPACKAGE, "`wacz_version` is missing".into());
        }
        let Some(resources) = dp.get("resources").and_then(|v| v.as_array()) else {
            let what = "`resources` is missing or not a list".into();
            self.error(RULE_DATAPACKAGE, DATAPACKAGE, what);
            return Ok(digests);
        };
        let mut listed = BTreeSet::new();
        for (i, r) in resources.iter().enumerate() {
            let path = r.get("path").and_then(|v| v.as_str()).unwrap_or("");
            listed.insert(path.to_string());
            self.resource(i, path, r, &digests);
        }
        self.unlisted_members(&listed);
        Ok(digests)
    }

    /// Every member's SHA-256, read through: a member whose data is not what the central
    /// directory says (length, CRC-32) is reported.
    fn member_digests(&mut self) -> Vec<Option<Sha256Sum>> {
        let members = std::mem::take(&mut self.members);
        let mut digests = vec![None; members.len()];
        for (i, m) in members.iter().enumerate() {
            if m.name.ends_with('/') {
                continue;
            }
            match self.hash(m) {
                Ok((h, n, crc)) if n == m.size => {
                    if crc != m.crc {
                        let msg = format!(
                            "the data's CRC-32 is {crc:08x}, the central directory says {:08x}",
                            m.crc
                        );
                        self.error(RULE_ZIP, &m.name, msg);
                    }
                    digests[i] = Some(h);
                }
                Ok((_, n, _)) => {
                    let msg =
                        format!("inflates to {} bytes or more, not the {} declared", n, m.size);
                    self.error(RULE_ZIP, &m.name, msg);
                }
                Err(e) => self.error(RULE_ZIP, &m.name, format!("cannot be read: {e}")),
            }
        }
        self.members = members;
        digests
    }

    /// One entry of `resources`: a member, with its size and hash.
    fn resource(
        &mut self,
        i: usize,
        path: &str,
        r: &serde_json::Value,
        digests: &[Option<Sha256Sum>],
    ) {
        const DP: &str = DATAPACKAGE;
        let at = format!("resources[{i}] (`{path}`)");
        let Some(&idx) = self.by_name.get(path) else {
            self.error(RULE_DATAPACKAGE, DP, format!("{at}: no such member in the WACZ"));
            return;
        };
        let size = self.members[idx].size;
        match r.get("bytes").and_then(|v| v.as_u64()) {
            Some(b) if b == size => {}
            Some(b) => {
                self.error(RULE_DATAPACKAGE, DP, format!("{at}: bytes {b}, the member has {size}"))
            }
            None => self.error(RULE_DATAPACKAGE, DP, format!("{at}: `bytes` is missing")),
        }
        let want = r.get("hash").and_then(|v| v.as_str()).unwrap_or("");
        if let Some(have) = digests.get(idx).copied().flatten().map(|h| sha256_text(&h))
            && !have.eq_ignore_ascii_case(want)
        {
            let msg = format!("{at}: hash {want:?}, the member's is {have}");
            self.error(RULE_DATAPACKAGE, DP, msg);
        }
    }

    /// Members (other than the two descriptors and folders) `resources` does not list.
    fn unlisted_members(&mut self, listed: &BTreeSet<String>) {
        let members = std::mem::take(&mut self.members);
        for m in &members {
            let own = m.name == DATAPACKAGE || m.name == "datapackage-digest.json";
            if !own && !m.name.ends_with('/') && !listed.contains(&m.name) {
                let msg = "member is not listed in datapackage.json's resources".into();
                self.error(RULE_DATAPACKAGE, &m.name, msg);
            }
        }
        self.members = members;
    }

    /// `datapackage-digest.json`: names `datapackage.json` and holds its hash.
    fn datapackage_digest(&mut self, digests: &[Option<Sha256Sum>]) {
        const DD: &str = "datapackage-digest.json";
        let Some(dd) = self.json_member(DD, RULE_DIGEST) else { return };
        if dd.get("path").and_then(|v| v.as_str()) != Some("datapackage.json") {
            self.error(RULE_DIGEST, DD, "`path` is not \"datapackage.json\"".into());
        }
        let want = dd.get("hash").and_then(|v| v.as_str()).unwrap_or("");
        let have = self.by_name.get("datapackage.json").and_then(|&i| digests.get(i).copied());
        if let Some(have) = have.flatten().map(|h| sha256_text(&h))
            && !have.eq_ignore_ascii_case(want)
        {
            self.error(RULE_DIGEST, DD, format!("hash {want:?}, datapackage.json's is {have}"));
        }
    }
}

/// A SHA-256 digest.
type Sha256Sum = [u8; 32];

/// A SHA-256 as datapackage.json writes it (`sha256:HEX`).
fn sha256_text(h: &Sha256Sum) -> String {
    format!("sha256:{}", hex(h))
}

/// A WARC member: under `archive/`, named `.warc` or `.warc.gz`.
fn is_warc(name: &str) -> bool {
    name.starts_with("archive/") && (name.ends_with(".warc") || name.ends_with(".warc.gz"))
}

/// An index member holding CDXJ lines (plain or gzip).
fn is_index(name: &str) -> bool {
    name.starts_with("indexes/")
        && [".cdxj", ".cdx", ".cdxj.gz", ".cdx.gz"].iter().any(|e| name.ends_with(e))
}

/// Reads one line (without its end) of at most [`MAX_LINE`] bytes; `None` at the end. A
/// longer line is an error.
fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<Option<()>> {
    buf.clear();
    let n = reader.take(MAX_LINE + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    } else if n as u64 > MAX_LINE {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "line longer than 1 MiB"));
    }
    Ok(Some(()))
}

mod crossref;
mod structure;
mod zipdir;
