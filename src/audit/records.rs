//! Reading records inside containers: a described record's range is checked on its own
//! (seek, one gzip member, one WARC record, its bytestreams), and `--deep` walks whole spans of
//! a container record by record, verifying WARC block and payload digests as well.
//!
//! Every record is read once, streaming: the block passes through the digests and the
//! bytestream hashers together, and nothing is held but a buffer and the HTTP header.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use sha2::{Digest, Sha512};

use crate::formats::dates::is_stateable_date;
use crate::formats::digest::{DigestLabelError, LabelledDigest, hex};
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::warc::payload::{self, PayloadStart};
use crate::formats::warc::reader::{WarcError, WarcReader, WarcRecordHead};
use crate::layout::open_regular;
use crate::mets::listing::ListedFile;
use crate::mets::validate::Severity;

/// Something wrong inside one record, before it is placed in a file.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub severity: Severity,
    pub rule: &'static str,
    /// The METS `<file>` ID concerned (empty for records the METS does not describe).
    pub id: String,
    pub message: String,
}

impl Problem {
    fn error(rule: &'static str, id: &str, message: String) -> Self {
        Problem { severity: Severity::Error, rule, id: id.to_string(), message }
    }
}

/// What reading one record's block found.
#[derive(Debug, Default)]
pub(crate) struct BlockCheck {
    pub problems: Vec<Problem>,
    /// Bytestream ranges hashed.
    pub bytestreams: u64,
    /// WARC digests verified (block and payload).
    pub digests: u64,
}

/// One bytestream range being hashed, in block coordinates.
struct RangeHash<'a> {
    file: &'a ListedFile,
    from: u64,
    to: u64,
    got: u64,
    hasher: Sha512,
}

/// Reads a record's block once: the bytestreams `streams` (record coordinates, as in the METS)
/// are hashed and compared with their SIZE and CHECKSUM; with `digests`, the WARC block and
/// payload digests are verified too.
pub(crate) fn check_block(
    head: &WarcRecordHead,
    block: &mut dyn Read,
    streams: &[ListedFile],
    digests: bool,
) -> io::Result<BlockCheck> {
    let mut out = BlockCheck::default();
    let header = &head.header;
    let header_len = head.header_len;
    // A WARC-Date no W3C-DTF states (`+10000-01-01T00:00:00Z`) dates nothing.
    if let Some(d) = header.get("WARC-Date").filter(|d| !is_stateable_date(d.trim())) {
        let shown: String = d.chars().take(64).collect();
        out.problems.push(Problem {
            severity: Severity::Warning,
            rule: "warc-date",
            id: String::new(),
            message: format!(
                "WARC-Date {shown:?} is no W3C-DTF date (a four-digit year from 0001): the \
                 record's date cannot be stated"
            ),
        });
    }
    let mut ranges = Vec::new();
    for b in streams {
        let (Some(sb), Some(se)) = (b.begin, b.end) else { continue };
        if se < sb {
            continue; // validate reports END before BEGIN
        }
        if sb < header_len {
            out.problems.push(Problem::error(
                "range",
                &b.id,
                format!(
                    "bytestream {} at {sb}..={se} starts inside the WARC header ({header_len} bytes)",
                    b.id
                ),
            ));
            continue;
        }
        ranges.push(RangeHash {
            file: b,
            from: sb - header_len,
            to: se - header_len,
            got: 0,
            hasher: Sha512::new(),
        });
    }
    let (mut block_digest, mut payload_digest) = (None, None);
    if digests {
        block_digest = labelled(header.get("WARC-Block-Digest"), "WARC-Block-Digest", &mut out);
        // A revisit's payload digest names the payload of the record it revisits.
        if header.warc_type() != Some("revisit") {
            payload_digest =
                labelled(header.get("WARC-Payload-Digest"), "WARC-Payload-Digest", &mut out);
        }
    }
    let mut buf = vec![0u8; 256 * 1024];
    let mut feed = Feed { pos: 0, payload_start: 0 };
    // An HTTP message's payload starts after its header section: find it before hashing, by
    // the one rule the METS ranges were made with (formats::warc::payload).
    let http = payload::holds_http_message(header.warc_type(), header.target_uri());
    if payload_digest.is_some() && http {
        let mut prefix = Vec::new();
        loop {
            let want = (64 * 1024).min(MAX_HTTP_HEADER_LEN - prefix.len());
            let n = (&mut *block).take(want as u64).read_to_end(&mut prefix)?;
            let at_end = n == 0;
            match payload::payload_start(header.warc_type(), header.target_uri(), &prefix, at_end) {
                PayloadStart::AfterHttpHeader(k) => {
                    feed.payload_start = k;
                    break;
                }
                PayloadStart::WholeBlock => break,
                PayloadStart::Unlocated if at_end || prefix.len() >= MAX_HTTP_HEADER_LEN => {
                    out.problems.push(Problem {
                        severity: Severity::Warning,
                        rule: "warc-digest",
                        id: String::new(),
                        message: "the HTTP header section does not end, so the payload (and its \
                                  WARC-Payload-Digest) cannot be located"
                            .into(),
                    });
                    payload_digest = None;
                    break;
                }
                _ => {}
            }
        }
        feed.update(&prefix, &mut block_digest, &mut payload_digest, &mut ranges);
    }
    loop {
        let n = match block.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        feed.update(&buf[..n], &mut block_digest, &mut payload_digest, &mut ranges);
    }
    for (digest, field) in
        [(block_digest, "WARC-Block-Digest"), (payload_digest, "WARC-Payload-Digest")]
    {
        let Some(d) = digest else { continue };
        out.digests += 1;
        if let Err(mismatch) = d.verify() {
            let stated = header.get(field).unwrap_or_default();
            out.problems.push(Problem::error(
                "warc-digest",
                "",
                format!("{field} is {stated}; the bytes give {}", mismatch.found),
            ));
        }
    }
    for r in ranges {
        check_range(r, header_len, &mut out);
    }
    Ok(out)
}

/// A bytestream's range, once the block has streamed past: all its bytes there, its SIZE and
/// its CHECKSUM.
fn check_range(r: RangeHash<'_>, header_len: u64, out: &mut BlockCheck) {
    out.bytestreams += 1;
    let b = r.file;
    let (sb, se) = (r.from + header_len, r.to + header_len);
    let want = r.to - r.from + 1;
    if r.got != want {
        out.problems.push(Problem::error(
            "range",
            &b.id,
            format!(
                "bytestream {} at {sb}..={se} of the record: the block ends after {} of its {want} bytes",
                b.id, r.got
            ),
        ));
        return;
    }
    if let Some(s) = b.size
        && s != want
    {
        out.problems.push(Problem::error(
            "range",
            &b.id,
            format!("bytestream {}: SIZE={s}; its range holds {want}", b.id),
        ));
    }
    let sha = hex(&r.hasher.finalize());
    if let Some(c) = &b.checksum
        && *c != sha
    {
        out.problems.push(Problem::error(
            "fixity",
            &b.id,
            format!("bytestream {} at {sb}..={se}: CHECKSUM {c}; found {sha}", b.id),
        ));
    }
}

/// A digest field to verify, or a problem saying why it cannot be.
fn labelled(value: Option<&str>, field: &str, out: &mut BlockCheck) -> Option<LabelledDigest> {
    match LabelledDigest::parse(value?) {
        Ok(d) => Some(d),
        Err(DigestLabelError::Unsupported(alg)) => {
            out.problems.push(Problem {
                severity: Severity::Info,
                rule: "warc-digest",
                id: String::new(),
                message: format!("{field} uses {alg}, which webaip does not compute; not checked"),
            });
            None
        }
        Err(DigestLabelError::Unreadable(v)) => {
            out.problems.push(Problem::error(
                "warc-digest",
                "",
                format!("{field} {v:?} is not a digest webaip can read"),
            ));
            None
        }
    }
}

/// Where the block has got to, and where its payload starts.
struct Feed {
    pos: u64,
    payload_start: u64,
}

impl Feed {
    fn update(
        &mut self,
        bytes: &[u8],
        block: &mut Option<LabelledDigest>,
        payload: &mut Option<LabelledDigest>,
        ranges: &mut [RangeHash],
    ) {
        let (start, end) = (self.pos, self.pos + bytes.len() as u64);
        if let Some(d) = block.as_mut() {
            d.update(bytes);
        }
        if let Some(d) = payload.as_mut()
            && end > self.payload_start
        {
            d.update(&bytes[self.payload_start.saturating_sub(start) as usize..]);
        }
        for r in ranges.iter_mut() {
            let (from, to) = (r.from.max(start), (r.to + 1).min(end));
            if from < to {
                r.hasher.update(&bytes[(from - start) as usize..(to - start) as usize]);
                r.got += to - from;
            }
        }
        self.pos = end;
    }
}

/// Checks described records one by one: each range is exactly one gzip member (or, in an
/// uncompressed container, exactly one record) holding one WARC record, with its bytestreams.
/// Returns the problems by offset, and the number of bytestreams checked.
pub(super) fn check_described(
    path: &Path,
    container_size: u64,
    records: &[&ListedFile],
) -> (Vec<(u64, Problem)>, u64) {
    let mut out = Vec::new();
    let mut bytestreams = 0;
    for r in records {
        match check_one(path, container_size, r) {
            Ok(n) => bytestreams += n,
            Err(p) => out.extend(p),
        }
    }
    (out, bytestreams)
}

fn check_one(path: &Path, container_size: u64, r: &ListedFile) -> Result<u64, Vec<(u64, Problem)>> {
    let (Some(begin), Some(end)) = (r.begin, r.end) else {
        return Err(vec![(0, Problem::error("range", &r.id, "record has no BEGIN/END".into()))]);
    };
    let fail = |message: String| vec![(begin, Problem::error("range", &r.id, message))];
    if end < begin {
        return Err(fail(format!("END={end} is before BEGIN={begin}")));
    }
    if end >= container_size {
        return Err(fail(format!(
            "END={end} is past the end of the file ({container_size} bytes)"
        )));
    }
    let len = end - begin + 1;
    // The path was reached without links when the audit located it; the last component is
    // checked again here, since it is opened anew.
    let mut file = open_regular(path).map_err(|e| fail(format!("cannot open: {e}")))?;
    file.seek(SeekFrom::Start(begin)).map_err(|e| fail(format!("cannot seek: {e}")))?;
    let mut reader = WarcReader::new(file.take(len), format!("bytes {begin}..={end}"))
        .map_err(|e| fail(warc_message(&e)))?;
    let first = reader.next_record(|head, block| check_block(head, block, &r.children, false));
    let (_, rec_end, check) = match first {
        Ok(Some(x)) => x,
        Ok(None) => return Err(fail(format!("bytes {begin}..={end} hold no WARC record"))),
        Err(e) => return Err(fail(format!("bytes {begin}..={end}: {}", warc_message(&e)))),
    };
    let mut problems: Vec<(u64, Problem)> =
        check.problems.into_iter().map(|p| (begin, p)).collect();
    if reader.is_gzip() && !rec_end.member_ended {
        problems
            .extend(fail(format!("the gzip member at {begin} holds more than this one record")));
    } else if rec_end.end < len {
        problems.extend(fail(format!(
            "bytes {begin}..={end} hold more than one record: the record ends at {} (or trailing bytes)",
            begin + rec_end.end - 1
        )));
    }
    if !rec_end.trailer_ok {
        problems.extend(fail("the record's block is not followed by CRLF CRLF".into()));
    }
    if problems.is_empty() { Ok(check.bytestreams) } else { Err(problems) }
}

fn warc_message(e: &WarcError) -> String {
    match e.io() {
        Some(s) => format!("{}: {s}", e.fault),
        None => e.fault.to_string(),
    }
}

/// One record a deep walk read.
#[derive(Debug, Clone)]
pub(super) struct SeenRecord {
    /// Offset just past the record (past its gzip member when it ended with it).
    pub end: u64,
    /// True when the record's gzip member ended with it.
    pub member_ended: bool,
    /// Problems in the record, at its offset.
    pub problems: Vec<Problem>,
    /// Bytestreams and WARC digests checked.
    pub bytestreams: u64,
    pub digests: u64,
}

/// What one deep walk over a span of a container found.
#[derive(Debug, Default)]
pub(super) struct Walk {
    /// Records by (offset of their member, offset inside the member).
    pub records: BTreeMap<(u64, u64), SeenRecord>,
    /// The byte spans read, each from where reading started to where it stopped.
    pub covered: Vec<(u64, u64)>,
    /// Where and why reading stopped short.
    pub errors: Vec<(u64, String)>,
}

/// Reads every record from `start` until a record boundary at or after `nominal_end` that is
/// in `span_starts` (where another walk takes over), or the end of the file.
///
/// A walk whose span ends at an offset that is not a record boundary (a damaged BEGIN in the
/// METS) reads on to the next span start it lands on, so no byte goes unread because of a
/// wrong offset in the METS. After damage, reading resumes at the next offset where the METS
/// says a record begins (`begins`), so one broken record costs only itself.
pub(super) fn walk(
    path: &Path,
    (start, nominal_end): (u64, u64),
    file_size: u64,
    span_starts: &BTreeSet<u64>,
    begins: &BTreeSet<u64>,
    described: &HashMap<u64, &ListedFile>,
) -> Walk {
    let mut out = Walk::default();
    let mut from = start;
    loop {
        let stop = |at: u64| at >= file_size || (at >= nominal_end && span_starts.contains(&at));
        let (reached, error) = walk_from(path, from, &stop, described, &mut out.records);
        out.covered.push((from, reached));
        let Some((at, why)) = error else { break };
        out.errors.push((at, why));
        match begins.range(at + 1..).next() {
            Some(&next) if !stop(next) => from = next,
            _ => break,
        }
    }
    out
}

/// One stretch of a walk: from `from` until `stop` says so or a record cannot be read.
/// Returns the offset reached and, when reading failed, where and why.
fn walk_from(
    path: &Path,
    from: u64,
    stop: &dyn Fn(u64) -> bool,
    described: &HashMap<u64, &ListedFile>,
    records: &mut BTreeMap<(u64, u64), SeenRecord>,
) -> (u64, Option<(u64, String)>) {
    let opened = open_regular(path)
        .map_err(io::Error::other)
        .and_then(|mut f| f.seek(SeekFrom::Start(from)).map(|_| f));
    let file = match opened {
        Ok(f) => f,
        Err(e) => return (from, Some((from, format!("cannot read: {e}")))),
    };
    let mut reader = match WarcReader::new(file, path.display().to_string()) {
        Ok(r) => r,
        Err(e) => return (from, Some((from, warc_message(&e)))),
    };
    loop {
        let at = from + reader.position();
        if stop(at) {
            return (at, None);
        }
        let next = reader.next_record(|head, block| {
            let d = (head.offset_in_member == 0).then(|| described.get(&(from + head.offset)));
            let streams = d.flatten().map(|f| f.children.as_slice()).unwrap_or_default();
            check_block(head, block, streams, true)
        });
        match next {
            Ok(None) => return (from + reader.position(), None),
            Ok(Some((head, end, check))) => {
                let mut problems = check.problems;
                if !end.trailer_ok {
                    problems.push(Problem::error(
                        "warc",
                        "",
                        "the record's block is not followed by CRLF CRLF".into(),
                    ));
                }
                records.insert(
                    (from + head.offset, head.offset_in_member),
                    SeenRecord {
                        end: from + end.end,
                        member_ended: end.member_ended || !reader.is_gzip(),
                        problems,
                        bytestreams: check.bytestreams,
                        digests: check.digests,
                    },
                );
            }
            Err(e) => return (from + e.offset, Some((from + e.offset, warc_message(&e)))),
        }
    }
}
