//! Reading records inside containers: a described record's range is checked on its own
//! (seek, one gzip member, one WARC record, its bytestreams), and `--deep` walks whole spans of
//! a container record by record, verifying WARC block and payload digests as well.
//!
//! Every record is read once, streaming, through the WARC block check `package` makes too
//! ([`crate::formats::warc::check`]); its problems become the audit's.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::formats::warc::check::{BlockProblem, BlockSeverity, StreamRange, check_block};
use crate::formats::warc::reader::{WarcError, WarcReader};
use crate::index::members::MemberInflater;
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

impl From<BlockProblem> for Problem {
    fn from(p: BlockProblem) -> Self {
        let severity = match p.severity {
            BlockSeverity::Info => Severity::Info,
            BlockSeverity::Warning => Severity::Warning,
            BlockSeverity::Error => Severity::Error,
        };
        Problem { severity, rule: p.rule, id: p.id, message: p.message }
    }
}

/// The bytestreams of a described record that have a range to check.
fn stream_ranges(children: &[ListedFile]) -> Vec<StreamRange<'_>> {
    children.iter().filter_map(stream_range).collect()
}

fn stream_range(b: &ListedFile) -> Option<StreamRange<'_>> {
    let (Some(begin), Some(end)) = (b.begin, b.end) else { return None };
    let (id, size, checksum) = (b.id.as_str(), b.size, b.checksum.as_deref());
    Some(StreamRange { id, begin, end, size, checksum })
}

/// What checking described records found.
#[derive(Default)]
pub(super) struct DescribedCheck {
    /// The problems, by offset.
    pub problems: Vec<(u64, Problem)>,
    /// Bytestreams checked.
    pub bytestreams: u64,
    /// The packages the revisits among them say hold their originals
    /// (`X-Webaip-Refers-To-Package`), by OBJID: what the METS must say the package requires.
    pub referred: BTreeSet<String>,
    /// The records whose bytes the machine or the medium did not give: not checked.
    pub not_read: Vec<RecordNotRead>,
}

/// A described record whose bytes this machine or the medium did not give
/// (`layout::not_read_cause`: an input/output error, memory or open files exhausted), which
/// says nothing of them.
#[derive(Debug)]
pub(super) struct RecordNotRead {
    /// Its BEGIN.
    pub begin: u64,
    /// Its METS ID.
    pub id: String,
    /// The cause, in words.
    pub cause: String,
}

/// Why a described record is not as the METS describes it, or not checked.
enum DescribedFault {
    Problems(Vec<(u64, Problem)>),
    NotRead(RecordNotRead),
}

impl From<Vec<(u64, Problem)>> for DescribedFault {
    fn from(p: Vec<(u64, Problem)>) -> Self {
        DescribedFault::Problems(p)
    }
}

/// Checks described records one by one: each range is exactly one gzip member (or, in an
/// uncompressed container, exactly one record) holding one WARC record, with its bytestreams.
pub(super) fn check_described(
    path: &Path,
    container_size: u64,
    records: &[&ListedFile],
) -> DescribedCheck {
    let mut out = DescribedCheck::default();
    for r in records {
        match check_one(path, container_size, r, &mut out.referred) {
            Ok(n) => out.bytestreams += n,
            Err(DescribedFault::Problems(p)) => out.problems.extend(p),
            Err(DescribedFault::NotRead(n)) => out.not_read.push(n),
        }
    }
    out
}

fn check_one(
    path: &Path,
    container_size: u64,
    r: &ListedFile,
    referred: &mut BTreeSet<String>,
) -> Result<u64, DescribedFault> {
    let (Some(begin), Some(end)) = (r.begin, r.end) else {
        return Err(
            vec![(0, Problem::error("range", &r.id, "record has no BEGIN/END".into()))].into()
        );
    };
    let fail = |message: String| vec![(begin, Problem::error("range", &r.id, message))];
    // A fault of the machine or the medium, not of the bytes: the record is not checked.
    let unread = |e: &(dyn std::error::Error + 'static), words: String| {
        let Some(cause) = crate::layout::not_read_cause(e) else {
            return DescribedFault::Problems(fail(words));
        };
        let cause = crate::layout::describe_io(cause);
        DescribedFault::NotRead(RecordNotRead { begin, id: r.id.clone(), cause })
    };
    if end < begin {
        return Err(fail(format!("END={end} is before BEGIN={begin}")).into());
    }
    if end >= container_size {
        return Err(fail(format!(
            "END={end} is past the end of the file ({container_size} bytes)"
        ))
        .into());
    }
    let len = end - begin + 1;
    // The path was reached without links when the audit located it; the last component is
    // checked again here, since it is opened anew.
    let mut file = open_regular(path).map_err(|e| unread(&e, format!("cannot open: {e}")))?;
    file.seek(SeekFrom::Start(begin)).map_err(|e| unread(&e, format!("cannot seek: {e}")))?;
    let mut reader = WarcReader::new(file.take(len), format!("bytes {begin}..={end}"))
        .map_err(|e| unread(&e, warc_message(&e)))?;
    let streams = stream_ranges(&r.children);
    let first = reader.next_record(|head, block| check_block(head, block, &streams, false));
    let (head, rec_end, check) = match first {
        Ok(Some(x)) => x,
        Ok(None) => return Err(fail(format!("bytes {begin}..={end} hold no WARC record")).into()),
        Err(e) => return Err(unread(&e, format!("bytes {begin}..={end}: {}", warc_message(&e)))),
    };
    referred.extend(refers_to_package(&head.header));
    let mut problems: Vec<(u64, Problem)> =
        check.problems.into_iter().map(|p| (begin, Problem::from(p))).collect();
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
    if problems.is_empty() { Ok(check.bytestreams) } else { Err(problems.into()) }
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
    /// A revisit's `X-Webaip-Refers-To-Package`: the OBJID of the package it says holds its
    /// original (what the METS must say the package requires).
    pub refers_to_package: Option<String>,
}

/// The package a revisit record says holds its original (`X-Webaip-Refers-To-Package`).
fn refers_to_package(h: &crate::formats::warc::WarcHeader) -> Option<String> {
    if h.warc_type() != Some("revisit") {
        return None;
    }
    let objid = h.get(crate::formats::warc::header::FIELD_REFERS_TO_PACKAGE)?.trim();
    (!objid.is_empty()).then(|| objid.to_string())
}

/// What one deep walk over a span of a container found.
#[derive(Debug, Default)]
pub(super) struct Walk {
    /// Records by (offset of their member, offset inside the member).
    pub records: BTreeMap<(u64, u64), SeenRecord>,
    /// The byte spans read, each from where reading started to where it stopped.
    pub covered: Vec<(u64, u64)>,
    /// Where and why reading stopped short.
    pub errors: Vec<(u64, ReadStop)>,
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

/// Most bytes a member may inflate to on the fast way of a deep walk (a larger one is
/// streamed, so that each thread's buffers stay small).
const MAX_FAST_MEMBER: usize = 4 << 20;

/// One stretch of a walk: from `from` until `stop` says so or a record cannot be read.
/// Returns the offset reached and, when reading failed, where and why.
///
/// Members that plainly hold one whole record are inflated whole by libdeflate (faster than
/// the streaming inflater); one that does not (damage, several records in one member, a large
/// one) is read by the streaming reader, which finds and names what it finds as it always did,
/// up to the end of the member it reads into; the fast way takes over again after it. A file
/// that is not gzip is streamed to the end, as is the rest of a walk once reading failed.
fn walk_from(
    path: &Path,
    from: u64,
    stop: &dyn Fn(u64) -> bool,
    described: &HashMap<u64, &ListedFile>,
    records: &mut BTreeMap<(u64, u64), SeenRecord>,
) -> (u64, Option<(u64, ReadStop)>) {
    let mut members = MemberInflater::open(path, MAX_FAST_MEMBER).ok();
    let mut at = from;
    loop {
        if let Some(members) = members.as_mut() {
            while !stop(at) {
                let Some(seen) = whole_member_record(members, at, described) else { break };
                let next = seen.end;
                records.insert((at, 0), seen);
                at = next;
            }
        }
        let stretch = stream_stretch(path, at, stop, described, records, members.is_some());
        // Back to the fast way only after progress, so that no member is tried twice.
        if stretch.error.is_some() || !stretch.at_member_end || stretch.reached <= at {
            return (stretch.reached, stretch.error);
        }
        at = stretch.reached;
    }
}

/// The record of the gzip member at `at`, read from the member inflated whole; `None` when the
/// member is not plainly one whole record followed by its CRLF CRLF.
fn whole_member_record(
    members: &mut MemberInflater,
    at: u64,
    described: &HashMap<u64, &ListedFile>,
) -> Option<SeenRecord> {
    let (used, made) = members.inflate_at(at).ok()??;
    let member = members.inflated(made);
    // Anything before the version line (or a gzip member inside) is the streaming reader's.
    if !member.starts_with(b"WARC/") {
        return None;
    }
    let mut reader = WarcReader::with_capacity(member, String::new(), 64 << 10).ok()?;
    let streams = described.get(&at).map(|f| stream_ranges(&f.children)).unwrap_or_default();
    let read = reader.next_record(|head, block| check_block(head, block, &streams, true));
    let (head, end, check) = read.ok()??;
    if head.offset != 0 || end.end != made as u64 || !end.trailer_ok {
        return None;
    }
    Some(SeenRecord {
        end: at + used as u64,
        member_ended: true,
        problems: check.problems.into_iter().map(Problem::from).collect(),
        bytestreams: check.bytestreams,
        digests: check.digests,
        refers_to_package: refers_to_package(&head.header),
    })
}

/// [`walk_from`] by the streaming reader alone.
#[cfg(test)]
fn stream_from(
    path: &Path,
    from: u64,
    stop: &dyn Fn(u64) -> bool,
    described: &HashMap<u64, &ListedFile>,
    records: &mut BTreeMap<(u64, u64), SeenRecord>,
) -> (u64, Option<(u64, ReadStop)>) {
    let stretch = stream_stretch(path, from, stop, described, records, false);
    (stretch.reached, stretch.error)
}

/// Where a stretch of the streaming reader ended.
struct Stretch {
    /// The offset reached.
    reached: u64,
    /// Where and why reading failed, when it did.
    error: Option<(u64, ReadStop)>,
    /// True when it stopped after a record that ended its gzip member (`to_member_end`).
    at_member_end: bool,
}

/// Reads records with the streaming reader from `from` until `stop` says so, reading fails,
/// the file ends or, with `to_member_end`, a record ends its gzip member.
fn stream_stretch(
    path: &Path,
    from: u64,
    stop: &dyn Fn(u64) -> bool,
    described: &HashMap<u64, &ListedFile>,
    records: &mut BTreeMap<(u64, u64), SeenRecord>,
    to_member_end: bool,
) -> Stretch {
    let ended = |reached: u64, error: Option<(u64, ReadStop)>| Stretch {
        reached,
        error,
        at_member_end: false,
    };
    let mut reader = match reader_at(path, from) {
        Ok(r) => r,
        Err(why) => return ended(from, Some((from, why))),
    };
    loop {
        let at = from + reader.position();
        if stop(at) {
            return ended(at, None);
        }
        let next = reader.next_record(|head, block| {
            let d = (head.offset_in_member == 0).then(|| described.get(&(from + head.offset)));
            let streams = d.flatten().map(|f| stream_ranges(&f.children)).unwrap_or_default();
            check_block(head, block, &streams, true)
        });
        let (head, end, check) = match next {
            Ok(None) => return ended(from + reader.position(), None),
            Ok(Some(read)) => read,
            Err(e) => return ended(from + e.offset, Some((from + e.offset, ReadStop::Warc(e)))),
        };
        let gzip = reader.is_gzip();
        let member_ended = end.member_ended || !gzip;
        let seen = seen_record(&head.header, check, from + end.end, member_ended, end.trailer_ok);
        records.insert((from + head.offset, head.offset_in_member), seen);
        if to_member_end && end.member_ended && gzip {
            let reached = from + reader.position();
            return Stretch { reached, error: None, at_member_end: true };
        }
    }
}

/// The streaming reader over the file at `path` from `from`; why it cannot be had.
fn reader_at(path: &Path, from: u64) -> Result<WarcReader<std::fs::File>, ReadStop> {
    let opened = open_regular(path)
        .map_err(io::Error::other)
        .and_then(|mut f| f.seek(SeekFrom::Start(from)).map(|_| f));
    let file = opened.map_err(ReadStop::Open)?;
    WarcReader::new(file, path.display().to_string()).map_err(ReadStop::Warc)
}

/// Why a walk stopped reading a container at a place (the finding's text). The cause is kept
/// as it came, not as words, so that the audit tells damage from bytes this machine or its
/// medium did not give (`layout::not_read_cause`: an I/O error, memory or open files exhausted).
#[derive(Debug, thiserror::Error)]
pub(super) enum ReadStop {
    /// The file could not be opened or sought.
    #[error("cannot read: {0}")]
    Open(#[source] io::Error),
    /// The WARC reader stopped.
    #[error("{}", warc_message(.0))]
    Warc(#[source] WarcError),
}

/// What reading a container's records whole found of its revisits: the packages they say
/// hold their originals (`X-Webaip-Refers-To-Package`), and where the reading stopped when it
/// could not reach the container's end (the revisits after that place are not known).
#[derive(Debug, Default)]
pub(super) struct RevisitsRead {
    pub packages: BTreeSet<String>,
    pub stopped: Option<RevisitsStopped>,
}

/// Where, and why, the reading of a container's revisit headers stopped.
#[derive(Debug)]
pub(super) struct RevisitsStopped {
    /// The offset of the record (gzip member) that could not be read.
    pub offset: u64,
    /// Why (the reader's words).
    pub why: String,
}

/// The size and digests of the container `file` and the packages its revisits name, in one
/// read of its bytes: the WARC reader reads through the hashing reader, and what it leaves
/// unread (after a record it cannot read) is hashed after it, so the digests are always the
/// whole file's. A read error of the file itself is the `Err` (the fixity check reports it).
pub(super) fn digests_and_revisits(
    file: impl io::Read,
    also: &[crate::formats::digest::FixityAlgorithm],
    name: &str,
) -> io::Result<(crate::formats::digest::FileDigests, RevisitsRead)> {
    let mut hashed = crate::formats::digest::DigestsReader::new(file, also);
    let revisits = revisit_packages(&mut hashed, name);
    io::copy(&mut hashed, &mut io::sink())?;
    Ok((hashed.finish(), revisits))
}

/// The packages the revisits read from `input` say hold their originals, their blocks passed
/// over, up to the first record that cannot be read (named, with its offset).
fn revisit_packages(input: impl Read, name: &str) -> RevisitsRead {
    let mut out = RevisitsRead::default();
    let stop = |e: WarcError| Some(RevisitsStopped { offset: e.offset, why: warc_message(&e) });
    let mut r = match WarcReader::with_capacity(input, name, 1 << 20) {
        Ok(r) => r,
        Err(e) => {
            out.stopped = stop(e);
            return out;
        }
    };
    loop {
        match r.next_record(|_, block| io::copy(block, &mut io::sink()).map(drop)) {
            Ok(Some((head, _, ()))) => out.packages.extend(refers_to_package(&head.header)),
            Ok(None) => return out,
            Err(e) => {
                out.stopped = stop(e);
                return out;
            }
        }
    }
}

/// What a deep walk keeps of a record it streamed: its block check's findings, with a block
/// not followed by CRLF CRLF (`trailer_ok` false) among them, where it ends, and the package
/// its header says a revisit's original is in.
fn seen_record(
    header: &crate::formats::warc::WarcHeader,
    check: crate::formats::warc::check::BlockCheck,
    end: u64,
    member_ended: bool,
    trailer_ok: bool,
) -> SeenRecord {
    let mut problems: Vec<Problem> = check.problems.into_iter().map(Problem::from).collect();
    if !trailer_ok {
        let message = "the record's block is not followed by CRLF CRLF".into();
        problems.push(Problem::error("warc", "", message));
    }
    SeenRecord {
        end,
        member_ended,
        problems,
        bytestreams: check.bytestreams,
        digests: check.digests,
        refers_to_package: refers_to_package(header),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The container `file` walked (whole members where it can) and streamed from its start:
    /// the records the two find must be the same. The walk, and where the streaming stopped.
    fn walked_as_streamed(file: &[u8]) -> (Walk, (u64, Option<(u64, ReadStop)>)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.warc.gz");
        std::fs::write(&path, file).unwrap();
        let size = file.len() as u64;
        let (starts, described) = (BTreeSet::from([0]), HashMap::new());
        let walked = walk(&path, (0, size), size, &starts, &BTreeSet::new(), &described);
        let mut streamed = BTreeMap::new();
        let stop = |at: u64| at >= size;
        let reached = stream_from(&path, 0, &stop, &described, &mut streamed);
        assert_eq!(format!("{:?}", walked.records), format!("{streamed:?}"));
        (walked, reached)
    }
    use std::io::Write;

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// A resource record whose block digest is that of `digested` (its body when they agree).
    fn record(n: usize, body: &[u8], digested: &[u8]) -> Vec<u8> {
        let (_, sha) = crate::formats::digest::sha1_of(digested).unwrap();
        let digest = crate::formats::digest::sha1_base32(&sha);
        let head = format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:{n}>\r\n\
             WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Target-URI: http://e.org/{n}\r\n\
             WARC-Block-Digest: {digest}\r\nContent-Type: text/plain\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        );
        [head.as_bytes(), body, b"\r\n\r\n"].concat()
    }

    /// A deep walk reads members that hold one whole record by inflating them whole, and hands
    /// the rest to the streaming reader from there: what it finds is what the streaming reader
    /// alone finds, record by record (a wrong digest, two records in one member, a line end
    /// after a record, a member cut short at the end).
    #[test]
    fn whole_member_reading_finds_what_streaming_finds() {
        let body = |n: usize| format!("line {n} of a text\n").repeat(50 + n * 7).into_bytes();
        let mut file = Vec::new();
        for n in 0..40 {
            let member = match n {
                7 => gz(&record(n, &body(n), b"other bytes")),
                12 => gz(&[record(n, &body(n), &body(n)), record(99, b"b", b"b")].concat()),
                20 => gz(&[record(n, &body(n), &body(n)), b"\r\n".to_vec()].concat()),
                _ => gz(&record(n, &body(n), &body(n))),
            };
            file.extend(member);
        }
        let last = gz(&record(40, &body(40), &body(40)));
        file.extend(&last[..last.len() - 9]);
        let (walked, reached) = walked_as_streamed(&file);
        assert_eq!(walked.covered, vec![(0, reached.0)]);
        assert_eq!(walked.errors.first().map(|e| e.0), reached.1.as_ref().map(|e| e.0));
        assert_eq!(walked.records.len(), 41);
        let wrong: Vec<u64> = walked
            .records
            .values()
            .filter(|r| r.problems.iter().any(|p| p.rule == "warc-digest"))
            .map(|r| r.digests)
            .collect();
        assert_eq!(wrong, vec![1]);
        assert_eq!(walked.records.keys().filter(|(_, in_member)| *in_member > 0).count(), 1);
    }

    /// After a member too large for the fast way, the streaming reader reads only that member
    /// and the fast way takes over again: the findings are the streaming reader's, record by
    /// record, wherever the large members are (first, between small ones, last).
    #[test]
    fn a_large_member_is_streamed_alone_and_the_small_ones_after_it_are_read_whole() {
        let large = "a line of a large text record\n".repeat(MAX_FAST_MEMBER / 30 + 1).into_bytes();
        let body = |n: usize| format!("line {n} of a text\n").repeat(20 + n).into_bytes();
        let mut file = Vec::new();
        for n in 0..30 {
            let member = match n {
                0 | 15 | 29 => gz(&record(n, &large, &large)),
                3 => gz(&record(n, &body(n), b"other bytes")),
                16 => gz(&[record(n, &body(n), &body(n)), record(99, b"b", b"b")].concat()),
                17 => gz(&record(n, &large, b"other bytes")),
                _ => gz(&record(n, &body(n), &body(n))),
            };
            file.extend(member);
        }
        let (walked, reached) = walked_as_streamed(&file);
        let size = file.len() as u64;
        assert_eq!(walked.covered, vec![(0, size)]);
        assert_eq!(reached.0, size);
        assert!(reached.1.is_none(), "{:?}", reached.1);
        assert!(walked.errors.is_empty());
        assert_eq!(walked.records.len(), 31);
        let wrong: Vec<u64> = walked
            .records
            .iter()
            .filter(|(_, r)| r.problems.iter().any(|p| p.rule == "warc-digest"))
            .map(|(k, _)| k.0)
            .collect();
        assert_eq!(wrong.len(), 2, "{wrong:?}");
    }
}
