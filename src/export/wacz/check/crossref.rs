//! The cross-references of a WACZ: index lines against the WARC records they point at, a
//! ZipNum index against its blocks, pages against the index's captures. Each side is sorted
//! on disk and the two merged, so memory does not grow with the number of lines.

use super::*;
use crate::formats::digest::LabelledDigest;
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::warc::WarcHeader;
use crate::formats::warc::check::{BlockProblem, BlockSeverity, check_block};
use crate::formats::warc::reader::WarcRecordHead;
use crate::index::digests::DigestKey;
use crate::index::record::is_indexed;

/// Sort-key separator (a tab: it sorts before every printable character).
const TAB: char = '\t';

/// Findings of one kind counted past [`MAX_SAME`].
#[derive(Default)]
struct Capped {
    seen: usize,
    hidden_errors: usize,
}

impl Capped {
    /// True while error findings of this kind are still listed one by one.
    fn list(&mut self) -> bool {
        self.list_as(Severity::Error)
    }

    /// True while findings of this kind are still listed one by one.
    fn list_as(&mut self, severity: Severity) -> bool {
        self.seen += 1;
        if self.seen > MAX_SAME && severity == Severity::Error {
            self.hidden_errors += 1;
        }
        self.seen <= MAX_SAME
    }

    fn summary(&self, rule: &'static str, member: &str, what: &str) -> Option<WaczFinding> {
        (self.seen > MAX_SAME).then(|| WaczFinding {
            severity: if self.hidden_errors > 0 { Severity::Error } else { Severity::Warning },
            rule,
            member: member.to_string(),
            line: None,
            offset: None,
            message: format!("{} more {what} not listed", self.seen - MAX_SAME),
        })
    }
}

impl Check {
    /// Walks each WARC once and each index once, then merges them by (WARC, offset); the
    /// index's captures (URL keys) go to `captures` for the pages.
    pub(super) fn index(&mut self, captures: &mut LineSorter) -> io::Result<()> {
        let warcs: Vec<Member> =
            self.members.iter().filter(|m| is_warc(&m.name)).cloned().collect();
        let names: BTreeSet<String> =
            warcs.iter().map(|m| m.name["archive/".len()..].to_string()).collect();
        let mut derived = LineSorter::new(SORT_BUDGET);
        for m in &warcs {
            self.derive(m, &mut derived)?;
        }
        let indexes: Vec<Member> =
            self.members.iter().filter(|m| is_index(&m.name)).cloned().collect();
        let mut listed = LineSorter::new(SORT_BUDGET);
        for (i, m) in indexes.iter().enumerate() {
            self.read_index(i, m, &names, &mut listed, captures)?;
        }
        self.zipnum()?;
        self.compare(derived, listed, &indexes)
    }

    /// Pushes the derived line of every indexed record of WARC member `m` to `out`, keyed by
    /// (file name, offset); a record that cannot be read is a finding, and ends the walk.
    fn derive(&mut self, m: &Member, out: &mut LineSorter) -> io::Result<()> {
        let filename = &m.name["archive/".len()..];
        if filename.contains(['\t', '\n']) {
            self.error(RULE_WARC, &m.name, "WARC name holds a tab or line end".into());
            return Ok(());
        }
        let Some(mut reader) = self.open_warc(m) else { return Ok(()) };
        let gzip = reader.is_gzip();
        let mut line = String::new();
        loop {
            let read = reader.next_record(read_record);
            let (head, end, (entry, problems)) = match read {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(()),
                Err(e) => {
                    let msg = format!("cannot be read further: {}", e.fault);
                    self.error_at(RULE_WARC, &m.name, (None, Some(e.offset)), msg);
                    return Ok(());
                }
            };
            self.digest_findings(m, head.offset, problems);
            let mut entry = match entry {
                Ok(Some(entry)) => entry,
                Ok(None) => continue,
                Err(e) => {
                    let msg = format!("record cannot be indexed: {e}");
                    self.error_at(RULE_WARC, &m.name, (None, Some(head.offset)), msg);
                    continue;
                }
            };
            (entry.offset, entry.length) = if gzip {
                (head.offset, end.end - head.offset)
            } else {
                let block = head.header.content_length().unwrap_or(0);
                (head.offset + head.leading_len, head.header_len - head.leading_len + block)
            };
            entry.filename = filename.to_string();
            self.revisits.push(&head.header, &entry, &m.name)?;
            self.report_counts.0 += 1;
            line.clear();
            line.push_str(&format!("{filename}{TAB}{:020}{TAB}D{TAB}", entry.offset));
            entry.write_cdxj(&mut line);
            line.pop();
            out.push(line.as_bytes())?;
        }
    }

    /// WARC member `m` opened as WARC; `None` (and a finding) when it cannot be.
    fn open_warc(&mut self, m: &Member) -> Option<WarcReader<Box<dyn Read + Send>>> {
        let reader = match self.open(m) {
            Ok(r) => r,
            Err(e) => {
                self.error(RULE_WARC, &m.name, format!("cannot be read: {e}"));
                return None;
            }
        };
        match WarcReader::new(reader, m.name.clone()) {
            Ok(r) => Some(r),
            Err(e) => {
                self.error_at(RULE_WARC, &m.name, (None, Some(e.offset)), e.fault.to_string());
                None
            }
        }
    }

    /// What the record at `offset` of `m` says of its digests that its bytes do not.
    fn digest_findings(&mut self, m: &Member, offset: u64, problems: Vec<BlockProblem>) {
        for p in problems {
            let severity = match p.severity {
                BlockSeverity::Error => Severity::Error,
                _ => Severity::Warning,
            };
            self.push(WaczFinding {
                severity,
                rule: RULE_WARC_DIGEST,
                member: m.name.clone(),
                line: None,
                offset: Some(offset),
                message: p.message,
            });
        }
    }

    /// Every revisit whose original no WARC of the WACZ holds (a revisit that cannot be
    /// replayed from the WACZ alone), as an error.
    pub(super) fn unresolved_revisits(&mut self) -> io::Result<()> {
        let sorter = std::mem::replace(&mut self.revisits, Revisits::new());
        let mut original: Option<Vec<u8>> = None;
        let mut found = Vec::new();
        let mut capped = Capped::default();
        LineSorter::merge_into(vec![sorter.sorter], &mut |line| {
            let mut parts = line.splitn(4, |&b| b == b'\t');
            let (Some(key), Some(digest), Some(tag)) = (parts.next(), parts.next(), parts.next())
            else {
                return Ok(());
            };
            let pair = [key, b"\t", digest].concat();
            if tag == b"0" {
                original = Some(pair);
                return Ok(());
            }
            if original.as_deref() == Some(&pair[..]) || !capped.list() {
                return Ok(());
            }
            let rest = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
            let mut r = rest.splitn(3, '\t');
            let (member, offset, url) = (r.next(), r.next(), r.next());
            found.push(WaczFinding {
                severity: Severity::Error,
                rule: RULE_REVISIT,
                member: member.unwrap_or_default().to_string(),
                line: None,
                offset: offset.and_then(|o| o.parse().ok()),
                message: format!(
                    "revisit of {}: no WARC of the WACZ holds its original (a capture of that \
                     URL key with payload digest {}), so it cannot be replayed",
                    url.unwrap_or("-"),
                    String::from_utf8_lossy(digest)
                ),
            });
            Ok(())
        })?;
        self.extend_listed(found);
        self.extend_listed(capped.summary(RULE_REVISIT, "archive/", "unresolved revisits"));
        Ok(())
    }

    /// Reads index member `m` (number `i` of the index members): each line parsed, its WARC
    /// known, the lines sorted; pushed to `out` keyed by (file name, offset), and its URL to
    /// `captures`.
    fn read_index(
        &mut self,
        i: usize,
        m: &Member,
        names: &BTreeSet<String>,
        out: &mut LineSorter,
        captures: &mut LineSorter,
    ) -> io::Result<()> {
        let raw = match self.open(m) {
            Ok(r) => BufReader::new(r),
            Err(e) => {
                self.error(RULE_INDEX, &m.name, format!("cannot be read: {e}"));
                return Ok(());
            }
        };
        let mut reader: Box<dyn BufRead> = if m.name.ends_with(".gz") {
            Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(raw)))
        } else {
            Box::new(raw)
        };
        let (mut buf, mut prev, mut no, mut bad) =
            (Vec::new(), Vec::new(), 0u64, Capped::default());
        let mut unsorted = false;
        loop {
            match read_line(&mut reader, &mut buf) {
                Ok(Some(())) => no += 1,
                Ok(None) => break,
                Err(e) => {
                    let msg = format!("cannot be read past line {no}: {e}");
                    self.error_at(RULE_INDEX, &m.name, (Some(no + 1), None), msg);
                    break;
                }
            }
            if buf.is_empty() || buf[0] == b'!' {
                continue;
            }
            if buf < prev && !unsorted {
                unsorted = true;
                let msg = "index lines are not sorted (a reader's binary search misses lines)";
                self.error_at(RULE_INDEX, &m.name, (Some(no), None), msg.into());
            }
            std::mem::swap(&mut prev, &mut buf);
            let text = String::from_utf8_lossy(&prev);
            let entry = match IndexEntry::parse_cdxj(&text) {
                Ok(e) => e,
                Err(e) => {
                    if bad.list() {
                        self.error_at(RULE_INDEX, &m.name, (Some(no), None), e.to_string());
                    }
                    continue;
                }
            };
            self.report_counts.1 += 1;
            if !names.contains(&entry.filename) {
                if bad.list() {
                    let msg =
                        format!("names WARC `{}`, which is not under archive/", entry.filename);
                    self.error_at(RULE_INDEX, &m.name, (Some(no), None), msg);
                }
                continue;
            }
            let key =
                format!("{}{TAB}{:020}{TAB}I{TAB}{i}{TAB}{no}{TAB}", entry.filename, entry.offset);
            out.push(&[key.as_bytes(), &prev].concat())?;
            let mut url = String::new();
            json_string(&mut url, &entry.url);
            captures.push(format!("{url}{TAB}0").as_bytes())?;
        }
        self.extend_listed(bad.summary(RULE_INDEX, &m.name, "bad index lines"));
        Ok(())
    }

    /// Merges the derived and the listed lines: each index line must meet a record at its
    /// (WARC, offset) whose fields it repeats, and each indexed record must have a line (a
    /// record with none cannot be replayed).
    fn compare(
        &mut self,
        derived: LineSorter,
        listed: LineSorter,
        indexes: &[Member],
    ) -> io::Result<()> {
        let mut merge = IndexMerge {
            indexes,
            last: None,
            found: Vec::new(),
            capped: Capped::default(),
            unlisted: Unlisted::default(),
        };
        LineSorter::merge_into(vec![derived, listed], &mut |line| {
            merge.line(&String::from_utf8_lossy(line));
            Ok(())
        })?;
        let IndexMerge { mut last, found, capped, mut unlisted, .. } = merge;
        unlisted.take(last.take());
        self.extend_listed(found);
        self.extend_listed(capped.summary(
            RULE_INDEX,
            "indexes/",
            "index lines that differ from their record",
        ));
        self.extend_listed(unlisted.findings);
        if unlisted.count > 0 {
            let shown = if unlisted.count > MAX_SAME as u64 {
                format!(", the first {MAX_SAME}")
            } else {
                String::new()
            };
            let what = format!(
                "{} indexed records of the WARCs have no index line (listed above{shown}): a \
                 reader cannot find them",
                unlisted.count
            );
            self.error(RULE_INDEX, "indexes/", what);
        }
        Ok(())
    }

    /// A ZipNum index (`indexes/*.idx`): each block line's offset and length inside the
    /// `.cdx.gz` it names, its digest, and the block's first key equal to the line's.
    fn zipnum(&mut self) -> io::Result<()> {
        let idxs: Vec<Member> = self
            .members
            .iter()
            .filter(|m| m.name.starts_with("indexes/") && m.name.ends_with(".idx"))
            .cloned()
            .collect();
        for idx in idxs {
            let raw = match self.open(&idx) {
                Ok(r) => BufReader::new(r),
                Err(e) => {
                    self.error(RULE_ZIPNUM, &idx.name, format!("cannot be read: {e}"));
                    continue;
                }
            };
            self.zipnum_one(&idx, Box::new(raw))?;
        }
        Ok(())
    }

    fn zipnum_one(&mut self, idx: &Member, mut reader: Box<dyn BufRead>) -> io::Result<()> {
        let default = idx.name.trim_end_matches(".idx").to_string() + ".cdx.gz";
        let mut cdx = default;
        let (mut buf, mut no, mut next_start, mut capped) =
            (Vec::new(), 0u64, 0u64, Capped::default());
        loop {
            match read_line(&mut reader, &mut buf) {
                Ok(Some(())) => no += 1,
                Ok(None) => break,
                Err(e) => {
                    self.error_at(RULE_ZIPNUM, &idx.name, (Some(no + 1), None), e.to_string());
                    break;
                }
            }
            if buf.is_empty() {
                continue;
            }
            let text = String::from_utf8_lossy(&buf).into_owned();
            let mut parts = text.splitn(3, ' ');
            let fields = match (parts.next(), parts.next(), parts.next()) {
                (Some(key), Some(ts), Some(json)) => {
                    serde_json::from_str::<serde_json::Value>(json).ok().map(|f| (key, ts, f))
                }
                _ => None,
            };
            let Some((key, ts, fields)) = fields else {
                if capped.list() {
                    let msg = "not a block line (KEY TIMESTAMP {JSON fields})".into();
                    self.error_at(RULE_ZIPNUM, &idx.name, (Some(no), None), msg);
                }
                continue;
            };
            if key == "!meta" {
                if let Some(f) = fields.get("filename").and_then(|v| v.as_str()) {
                    cdx = format!("indexes/{f}");
                }
                continue;
            }
            let num = |n: &str| {
                fields.get(n).and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
            };
            let (Some(offset), Some(length)) = (num("offset"), num("length")) else {
                if capped.list() {
                    let msg = "`offset` or `length` missing".into();
                    self.error_at(RULE_ZIPNUM, &idx.name, (Some(no), None), msg);
                }
                continue;
            };
            let digest = fields.get("digest").and_then(|v| v.as_str()).map(str::to_string);
            let misplaced = (offset != next_start)
                .then(|| format!("block starts at {offset}, the one before ends at {next_start}"));
            // A block that starts before the last one ended is not read again: each byte of
            // the cdx is read and hashed once however many lines name it.
            let why = match offset < next_start {
                true => misplaced,
                false => self
                    .zipnum_block(
                        &cdx,
                        (offset, length),
                        digest.as_deref(),
                        &format!("{key} {ts} "),
                    )
                    .or(misplaced),
            };
            next_start = next_start.max(offset.saturating_add(length));
            if let Some(why) = why
                && capped.list()
            {
                self.error_at(RULE_ZIPNUM, &idx.name, (Some(no), None), why);
            }
        }
        self.extend_listed(capped.summary(RULE_ZIPNUM, &idx.name, "bad block lines"));
        Ok(())
    }

    /// What is wrong with one ZipNum block, if anything.
    fn zipnum_block(
        &mut self,
        cdx: &str,
        (offset, length): (u64, u64),
        digest: Option<&str>,
        first: &str,
    ) -> Option<String> {
        let Some(&i) = self.by_name.get(cdx) else {
            return Some(format!("names `{cdx}`, which the WACZ does not hold"));
        };
        let m = self.members[i].clone();
        if !m.stored {
            return Some(format!("`{cdx}` is compressed in the ZIP: its blocks cannot be reached"));
        }
        if offset.checked_add(length).is_none_or(|end| end > m.size) || length > MAX_JSON {
            return Some(format!(
                "block {offset}+{length} lies outside `{cdx}` ({} bytes)",
                m.size
            ));
        }
        let mut block = vec![0u8; length as usize];
        let read = self.file.read_exact_at(&mut block, m.data_start + offset);
        if let Err(e) = read {
            return Some(format!("block {offset}+{length} cannot be read: {e}"));
        }
        if let Some(want) = digest {
            let have = format!("sha256:{}", hex(&Sha256::digest(&block)));
            if want.starts_with("sha256:") && !have.eq_ignore_ascii_case(want) {
                return Some(format!(
                    "block {offset}+{length}: digest {want}, its bytes' is {have}"
                ));
            }
        }
        let mut head = Vec::new();
        let mut gz = BufReader::new(flate2::bufread::MultiGzDecoder::new(&block[..]));
        if let Err(e) = read_line(&mut gz, &mut head) {
            return Some(format!("block {offset}+{length} does not inflate: {e}"));
        }
        (!head.starts_with(first.as_bytes())).then(|| {
            format!(
                "block {offset}+{length} starts with `{}`, not with the line's key `{}`",
                String::from_utf8_lossy(&head[..head.len().min(120)]),
                first.trim_end()
            )
        })
    }
}

/// What reading one record's block gives: its index entry (or why it has none), and what
/// its `WARC-Block-Digest` and `WARC-Payload-Digest` say of its bytes.
type RecordRead = (Result<Option<IndexEntry>, RecordIndexError>, Vec<BlockProblem>);

/// Reads a record's block once, for its index entry and its WARC digests (streamed: nothing
/// is held but the HTTP header's bytes). The index reads a payload only to compute a digest
/// the record does not state; then only the block digest is there to check.
fn read_record(head: &WarcRecordHead, block: &mut dyn Read) -> io::Result<RecordRead> {
    let h = &head.header;
    let stated = h.get("WARC-Payload-Digest").is_some_and(|d| !d.is_empty());
    if stated || h.warc_type() == Some("revisit") || !is_indexed(h) {
        let mut tee = Kept { inner: block, kept: Vec::new() };
        let checked = check_block(head, &mut tee, &[], true)?;
        let entry = entry_of(h, &mut &tee.kept[..]);
        return Ok((entry, digest_problems(checked.problems)));
    }
    let mut digest = h.get("WARC-Block-Digest").and_then(|d| LabelledDigest::parse(d).ok());
    let mut tee = Hashed { inner: block, digest: digest.as_mut() };
    let entry = entry_of(h, &mut tee);
    io::copy(&mut tee, &mut io::sink())?;
    let mut problems = Vec::new();
    if let Some(Err(m)) = digest.map(LabelledDigest::verify) {
        let stated = h.get("WARC-Block-Digest").unwrap_or_default();
        problems.push(BlockProblem {
            severity: BlockSeverity::Error,
            rule: "warc-digest",
            id: String::new(),
            message: format!("WARC-Block-Digest is {stated}; the bytes give {}", m.found),
        });
    }
    Ok((entry, problems))
}

/// The digest problems among a block's (a WARC-Date webaip cannot state is no WACZ matter).
fn digest_problems(problems: Vec<BlockProblem>) -> Vec<BlockProblem> {
    use BlockSeverity as S;
    problems
        .into_iter()
        .filter(|p| p.rule == "warc-digest" && matches!(p.severity, S::Error | S::Warning))
        .collect()
}

/// A block reader keeping its first bytes (as many as the index reads of an HTTP header).
struct Kept<'a> {
    inner: &'a mut dyn Read,
    kept: Vec<u8>,
}

impl Read for Kept<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let room = MAX_HTTP_HEADER_LEN.saturating_sub(self.kept.len()).min(n);
        self.kept.extend_from_slice(&buf[..room]);
        Ok(n)
    }
}

/// A block reader passing every byte read to a digest.
struct Hashed<'a, 'd> {
    inner: &'a mut dyn Read,
    digest: Option<&'d mut LabelledDigest>,
}

impl Read for Hashed<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(d) = self.digest.as_mut() {
            d.update(&buf[..n]);
        }
        Ok(n)
    }
}

/// The captures and revisits of the WARCs by (URL key, payload digest), sorted on disk, to
/// find the revisits whose original the WACZ does not hold: pywb resolves a revisit by a
/// capture of the same key and digest that is no revisit.
pub(super) struct Revisits {
    sorter: LineSorter,
}

impl Revisits {
    pub(super) fn new() -> Revisits {
        Revisits { sorter: LineSorter::new(SORT_BUDGET / 2) }
    }

    /// Notes the record of `header` (indexed as `entry`, in WARC member `member`).
    fn push(&mut self, header: &WarcHeader, entry: &IndexEntry, member: &str) -> io::Result<()> {
        let Some(digest) = entry.digest.as_deref().filter(|d| !d.is_empty()) else {
            return Ok(());
        };
        let digest = DigestKey::parse(digest).map_or_else(|| digest.to_string(), |k| k.to_warc());
        let clean = |s: &str| s.replace(['\t', '\n'], " ");
        if header.warc_type() != Some("revisit") {
            let line = format!("{}\t{}\t0", clean(&entry.key), clean(&digest));
            return self.sorter.push(line.as_bytes());
        }
        let profile = header.get("WARC-Profile").unwrap_or_default().trim();
        if !profile.ends_with("/revisit/identical-payload-digest") {
            return Ok(());
        }
        let key = match header.get("WARC-Refers-To-Target-URI") {
            Some(uri) => crate::index::surt::surt(uri.trim().trim_matches(['<', '>'])),
            None => entry.key.clone(),
        };
        let line = format!(
            "{}\t{}\t1\t{}\t{}\t{}",
            clean(&key),
            clean(&digest),
            clean(member),
            entry.offset,
            clean(&entry.url)
        );
        self.sorter.push(line.as_bytes())
    }
}

/// The merge of derived and listed index lines, in (WARC, offset) order: each listed line
/// meets the record derived at its place, or none.
struct IndexMerge<'a> {
    indexes: &'a [Member],
    /// The record derived last, and whether a line has met it.
    last: Option<Derived>,
    found: Vec<WaczFinding>,
    capped: Capped,
    unlisted: Unlisted,
}

impl IndexMerge<'_> {
    fn line(&mut self, line: &str) {
        let mut parts = line.splitn(4, TAB);
        let (Some(file), Some(offset), Some(tag), Some(rest)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        let place = format!("{file}{TAB}{offset}");
        if tag == "D" {
            self.unlisted.take(self.last.take());
            let entry = IndexEntry::parse_cdxj(rest).ok();
            self.last = Some(Derived { place, entry, listed: false });
        } else {
            self.listed(&place, file, rest);
        }
    }

    /// A listed line `I<TAB>member<TAB>line number<TAB>text` at `place`.
    fn listed(&mut self, place: &str, file: &str, rest: &str) {
        let mut p = rest.splitn(3, TAB);
        let (Some(i), Some(no), Some(text)) = (p.next(), p.next(), p.next()) else { return };
        let member = i.parse::<usize>().ok().and_then(|i| self.indexes.get(i));
        let (Some(member), Ok(listed)) = (member, IndexEntry::parse_cdxj(text)) else { return };
        let why = match &mut self.last {
            Some(d) if d.place == place => {
                d.listed = true;
                d.entry.as_ref().and_then(|record| differences(&listed, record))
            }
            _ => Some((
                Severity::Error,
                format!("no indexed record starts at offset {} of `{file}`", listed.offset),
            )),
        };
        if let Some((severity, why)) = why
            && self.capped.list_as(severity)
        {
            self.found.push(WaczFinding {
                severity,
                rule: RULE_INDEX,
                member: member.name.clone(),
                line: no.parse().ok(),
                offset: None,
                message: why,
            });
        }
    }
}

/// A record derived from a WARC, while the merge meets the index lines at its place.
struct Derived {
    /// `FILE<TAB>OFFSET`, as the sort keys hold it.
    place: String,
    entry: Option<IndexEntry>,
    /// An index line names this record.
    listed: bool,
}

/// The indexed records no index line names: the first [`MAX_SAME`] as findings, the rest
/// counted.
#[derive(Default)]
struct Unlisted {
    count: u64,
    findings: Vec<WaczFinding>,
}

impl Unlisted {
    /// Counts `record` when it was left without an index line.
    fn take(&mut self, record: Option<Derived>) {
        let Some(d) = record.filter(|d| !d.listed) else { return };
        self.count += 1;
        if self.findings.len() >= MAX_SAME {
            return;
        }
        let (file, offset) = d.place.split_once(TAB).unwrap_or((&d.place, ""));
        let url = d.entry.as_ref().map_or("-", |e| e.url.as_str());
        self.findings.push(WaczFinding {
            severity: Severity::Error,
            rule: RULE_INDEX,
            member: format!("archive/{file}"),
            line: None,
            offset: offset.parse().ok(),
            message: format!("record of {url} has no index line"),
        });
    }
}

/// SHA-1 of no bytes, as an index line's digest: what py-wacz's indexer writes for a record
/// whose payload it does not read (a metadata record, say).
const EMPTY_SHA1: &str = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";

/// The fields of index line `listed` that differ from those derived from its record: an error,
/// or a warning when only the digest differs and the line's is that of no payload (the record
/// is still reached, and replays).
fn differences(listed: &IndexEntry, record: &IndexEntry) -> Option<(Severity, String)> {
    let mut out = Vec::new();
    let mut cmp = |name: &str, a: Option<&str>, b: Option<&str>| {
        if a != b {
            out.push(format!(
                "{name} {:?} but the record's is {:?}",
                a.unwrap_or("-"),
                b.unwrap_or("-")
            ));
        }
    };
    cmp("url", Some(&listed.url), Some(&record.url));
    cmp("timestamp", Some(&listed.timestamp), Some(&record.timestamp));
    cmp("mime", listed.mime.as_deref(), record.mime.as_deref());
    cmp("status", listed.status.as_deref(), record.status.as_deref());
    cmp("digest", listed.digest.as_deref(), record.digest.as_deref());
    let (a, b) = (listed.length.to_string(), record.length.to_string());
    cmp("length", Some(&a), Some(&b));
    if out.is_empty() {
        return None;
    }
    let empty = out.len() == 1
        && listed.digest.as_deref() == Some(EMPTY_SHA1)
        && listed.digest != record.digest;
    let severity = if empty { Severity::Warning } else { Severity::Error };
    let mut msg = format!("record at offset {}: {}", listed.offset, out.join("; "));
    if empty {
        msg.push_str(" (the line's digest is that of no payload)");
    }
    Some((severity, msg))
}

impl Check {
    /// Every `pages/*.jsonl`: its header line, each page's `url` and `ts`, and a capture of
    /// each page's URL in the index.
    pub(super) fn pages(&mut self, captures: LineSorter) -> io::Result<()> {
        let pages: Vec<Member> = self
            .members
            .iter()
            .filter(|m| m.name.starts_with("pages/") && m.name.ends_with(".jsonl"))
            .cloned()
            .collect();
        let mut listed = LineSorter::new(SORT_BUDGET);
        for (i, m) in pages.iter().enumerate() {
            let reader = match self.open(m) {
                Ok(r) => BufReader::new(r),
                Err(e) => {
                    self.error(RULE_PAGES, &m.name, format!("cannot be read: {e}"));
                    continue;
                }
            };
            self.read_pages(i, m, Box::new(reader), &mut listed)?;
        }
        let mut capture: Option<Vec<u8>> = None;
        let mut found = Vec::new();
        let mut capped = Capped::default();
        LineSorter::merge_into(vec![captures, listed], &mut |line| {
            let mut parts = line.rsplitn(4, |&b| b == b'\t');
            let fields: Vec<&[u8]> = parts.by_ref().collect();
            match fields.as_slice() {
                [b"0", url] => capture = Some(url.to_vec()),
                [no, i, b"1", url] if capture.as_deref() != Some(*url) => {
                    let i: usize = String::from_utf8_lossy(i).parse().unwrap_or(usize::MAX);
                    if let Some(m) = pages.get(i)
                        && capped.list()
                    {
                        found.push(WaczFinding {
                            severity: Severity::Error,
                            rule: RULE_PAGES,
                            member: m.name.clone(),
                            line: String::from_utf8_lossy(no).parse().ok(),
                            offset: None,
                            message: format!(
                                "page {} has no capture in the index",
                                String::from_utf8_lossy(url)
                            ),
                        });
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        self.extend_listed(found);
        self.extend_listed(capped.summary(RULE_PAGES, "pages/", "pages without a capture"));
        Ok(())
    }

    fn read_pages(
        &mut self,
        i: usize,
        m: &Member,
        mut reader: Box<dyn BufRead>,
        out: &mut LineSorter,
    ) -> io::Result<()> {
        let (mut buf, mut no, mut capped) = (Vec::new(), 0u64, Capped::default());
        loop {
            match read_line(&mut reader, &mut buf) {
                Ok(Some(())) => no += 1,
                Ok(None) => break,
                Err(e) => {
                    self.error_at(RULE_PAGES, &m.name, (Some(no + 1), None), e.to_string());
                    break;
                }
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let why = match serde_json::from_slice::<serde_json::Value>(&buf) {
                Err(e) => Some(format!("not JSON: {e}")),
                Ok(v) if no == 1 => (v.get("format").and_then(|f| f.as_str())
                    != Some("json-pages-1.0"))
                .then(|| {
                    "the first line is not the header {\"format\": \"json-pages-1.0\", ...}"
                        .to_string()
                }),
                Ok(v) => self.page(&v, (i, no), out)?,
            };
            if let Some(why) = why
                && capped.list()
            {
                self.error_at(RULE_PAGES, &m.name, (Some(no), None), why);
            }
        }
        if no == 0 {
            self.error(RULE_PAGES, &m.name, "empty: the header line is missing".into());
        }
        self.extend_listed(capped.summary(RULE_PAGES, &m.name, "bad pages"));
        Ok(())
    }

    /// One page line: what is wrong with it, or its URL pushed to `out`.
    fn page(
        &mut self,
        v: &serde_json::Value,
        (i, no): (usize, u64),
        out: &mut LineSorter,
    ) -> io::Result<Option<String>> {
        let Some(url) = v.get("url").and_then(|u| u.as_str()) else {
            return Ok(Some("page has no `url` string".into()));
        };
        let Some(ts) = v.get("ts").and_then(|t| t.as_str()) else {
            return Ok(Some("page has no `ts` string".into()));
        };
        self.report_counts.2 += 1;
        let mut key = String::new();
        json_string(&mut key, url);
        out.push(format!("{key}{TAB}1{TAB}{i}{TAB}{no}").as_bytes())?;
        Ok(chrono::DateTime::parse_from_rfc3339(ts)
            .is_err()
            .then(|| format!("`ts` {ts:?} is not an RFC 3339 date")))
    }
}
