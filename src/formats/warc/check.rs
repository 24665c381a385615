//! Checking one WARC record's block as it streams past: its date, its `WARC-Block-Digest` and
//! `WARC-Payload-Digest`, and the bytestream ranges a package describes inside it.
//!
//! `package` (on every WARC it copies), `audit` (described records and `--deep` walks) and the
//! WACZ check all call [`check_block`]: one check, so that what `package` accepts is what
//! `audit --deep` later verifies. The block is read once; nothing is held but a buffer and the
//! HTTP header section.

use std::io::{self, Read};

use crate::formats::dates::is_stateable_date;
use crate::formats::digest::{DigestLabelError, LabelledDigest, Sha512, hex};
use crate::formats::http::MAX_HTTP_HEADER_LEN;
use crate::formats::warc::header::WarcHeader;
use crate::formats::warc::payload::{self, PayloadStart};
use crate::formats::warc::reader::WarcRecordHead;

/// How much a problem in a block weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockSeverity {
    /// Something not checked (a digest algorithm webaip does not compute).
    Info,
    /// Something that cannot be stated or located, with no damage shown.
    Warning,
    /// The bytes contradict what the record or the package states.
    Error,
}

/// Something wrong inside one record's block.
#[derive(Debug, Clone)]
pub(crate) struct BlockProblem {
    pub severity: BlockSeverity,
    /// The rule family: `warc-date`, `warc-digest`, `range` or `fixity`.
    pub rule: &'static str,
    /// The bytestream concerned (empty for the record itself).
    pub id: String,
    pub message: String,
}

impl BlockProblem {
    fn error(rule: &'static str, id: &str, message: String) -> Self {
        BlockProblem { severity: BlockSeverity::Error, rule, id: id.to_string(), message }
    }
}

/// A bytestream a package describes inside a record, in record coordinates (as in the METS:
/// `begin..=end` from the record's first byte, WARC header included).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamRange<'a> {
    pub id: &'a str,
    pub begin: u64,
    pub end: u64,
    pub size: Option<u64>,
    /// The SHA-512 stated, in lower-case hexadecimal.
    pub checksum: Option<&'a str>,
}

/// What reading one record's block found.
#[derive(Debug, Default)]
pub(crate) struct BlockCheck {
    pub problems: Vec<BlockProblem>,
    /// Bytestream ranges hashed.
    pub bytestreams: u64,
    /// WARC digests verified (block and payload).
    pub digests: u64,
}

/// One bytestream range being hashed, in block coordinates.
struct RangeHash<'a> {
    stream: StreamRange<'a>,
    from: u64,
    to: u64,
    got: u64,
    hasher: Sha512,
}

/// The WARC digests a record states that webaip can verify.
struct StatedDigests {
    block: Option<LabelledDigest>,
    payload: Option<LabelledDigest>,
}

/// Reads a record's block once: the bytestreams `streams` are hashed and compared with their
/// SIZE and CHECKSUM; with `digests`, the WARC block and payload digests are verified too.
pub(crate) fn check_block(
    head: &WarcRecordHead,
    block: &mut dyn Read,
    streams: &[StreamRange<'_>],
    digests: bool,
) -> io::Result<BlockCheck> {
    let mut out = BlockCheck::default();
    let header = &head.header;
    out.problems.extend(date_problem(header));
    let mut ranges = placed_ranges(streams, head.header_len, &mut out);
    let mut stated = StatedDigests { block: None, payload: None };
    if digests {
        stated = stated_digests(header, &mut out);
    }
    let mut feed = Feed { pos: 0, payload_start: 0 };
    if stated.payload.is_some() && http_message(header) {
        let prefix = read_http_prefix(header, block, &mut feed, &mut out)?;
        if !prefix.payload_located {
            stated.payload = None;
        }
        feed.update(&prefix.bytes, &mut stated, &mut ranges);
    }
    stream_rest(block, &mut feed, &mut stated, &mut ranges)?;
    verify_digests(header, stated, &mut out);
    for r in ranges {
        check_range(r, head.header_len, &mut out);
    }
    Ok(out)
}

/// A WARC-Date no W3C-DTF states (`+10000-01-01T00:00:00Z`) dates nothing.
fn date_problem(header: &WarcHeader) -> Option<BlockProblem> {
    let d = header.get("WARC-Date").filter(|d| !is_stateable_date(d.trim()))?;
    let shown: String = d.chars().take(64).collect();
    Some(BlockProblem {
        severity: BlockSeverity::Warning,
        rule: "warc-date",
        id: String::new(),
        message: format!(
            "WARC-Date {shown:?} is no W3C-DTF date (a four-digit year from 0001): the \
             record's date cannot be stated"
        ),
    })
}

/// The ranges to hash, in block coordinates; a range starting inside the WARC header is a
/// problem and is not hashed.
fn placed_ranges<'a>(
    streams: &[StreamRange<'a>],
    header_len: u64,
    out: &mut BlockCheck,
) -> Vec<RangeHash<'a>> {
    let mut ranges = Vec::new();
    for &s in streams {
        if s.end < s.begin {
            continue; // validate reports END before BEGIN
        }
        if s.begin < header_len {
            let (sb, se) = (s.begin, s.end);
            out.problems.push(BlockProblem::error(
                "range",
                s.id,
                format!(
                    "bytestream {} at {sb}..={se} starts inside the WARC header ({header_len} bytes)",
                    s.id
                ),
            ));
            continue;
        }
        let (from, to) = (s.begin - header_len, s.end - header_len);
        ranges.push(RangeHash { stream: s, from, to, got: 0, hasher: Sha512::new() });
    }
    ranges
}

/// The block and payload digests to verify. A revisit's payload digest names the payload of
/// the record it revisits, so it is not checked against this block.
fn stated_digests(header: &WarcHeader, out: &mut BlockCheck) -> StatedDigests {
    let block = labelled(header.get("WARC-Block-Digest"), "WARC-Block-Digest", out);
    let payload = if header.warc_type() != Some("revisit") {
        labelled(header.get("WARC-Payload-Digest"), "WARC-Payload-Digest", out)
    } else {
        None
    };
    StatedDigests { block, payload }
}

fn http_message(header: &WarcHeader) -> bool {
    payload::holds_http_message(header.warc_type(), header.target_uri())
}

/// The first bytes of a block holding an HTTP message, read to find where its payload starts.
struct HttpPrefix {
    bytes: Vec<u8>,
    /// False when the header section does not end: no payload digest can be checked.
    payload_located: bool,
}

/// Reads the block's first bytes until the HTTP message's header section ends (by the one
/// rule the METS ranges were made with: formats::warc::payload), and sets where the payload
/// starts. The bytes read go on to the digests; a header section that does not end is a
/// warning.
fn read_http_prefix(
    header: &WarcHeader,
    block: &mut dyn Read,
    feed: &mut Feed,
    out: &mut BlockCheck,
) -> io::Result<HttpPrefix> {
    let mut prefix = Vec::new();
    loop {
        let want = (64 * 1024).min(MAX_HTTP_HEADER_LEN - prefix.len());
        let n = (&mut *block).take(want as u64).read_to_end(&mut prefix)?;
        let at_end = n == 0;
        match payload::payload_start(header.warc_type(), header.target_uri(), &prefix, at_end) {
            PayloadStart::AfterHttpHeader(k) => {
                feed.payload_start = k;
                return Ok(HttpPrefix { bytes: prefix, payload_located: true });
            }
            PayloadStart::WholeBlock => {
                return Ok(HttpPrefix { bytes: prefix, payload_located: true });
            }
            PayloadStart::Unlocated if at_end || prefix.len() >= MAX_HTTP_HEADER_LEN => {
                out.problems.push(BlockProblem {
                    severity: BlockSeverity::Warning,
                    rule: "warc-digest",
                    id: String::new(),
                    message: "the HTTP header section does not end, so the payload (and its \
                              WARC-Payload-Digest) cannot be located"
                        .into(),
                });
                return Ok(HttpPrefix { bytes: prefix, payload_located: false });
            }
            _ => {}
        }
    }
}

/// Feeds the rest of the block to the digests and the ranges.
fn stream_rest(
    block: &mut dyn Read,
    feed: &mut Feed,
    stated: &mut StatedDigests,
    ranges: &mut [RangeHash<'_>],
) -> io::Result<()> {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match block.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        feed.update(&buf[..n], stated, ranges);
    }
}

/// Compares each digest stated with what the bytes give.
fn verify_digests(header: &WarcHeader, stated: StatedDigests, out: &mut BlockCheck) {
    for (digest, field) in
        [(stated.block, "WARC-Block-Digest"), (stated.payload, "WARC-Payload-Digest")]
    {
        let Some(d) = digest else { continue };
        out.digests += 1;
        if let Err(mismatch) = d.verify() {
            let stated = header.get(field).unwrap_or_default();
            out.problems.push(BlockProblem::error(
                "warc-digest",
                "",
                format!("{field} is {stated}; the bytes give {}", mismatch.found),
            ));
        }
    }
}

/// A bytestream's range, once the block has streamed past: all its bytes there, its SIZE and
/// its CHECKSUM.
fn check_range(r: RangeHash<'_>, header_len: u64, out: &mut BlockCheck) {
    out.bytestreams += 1;
    let s = r.stream;
    let (sb, se) = (r.from + header_len, r.to + header_len);
    let want = r.to - r.from + 1;
    if r.got != want {
        out.problems.push(BlockProblem::error(
            "range",
            s.id,
            format!(
                "bytestream {} at {sb}..={se} of the record: the block ends after {} of its {want} bytes",
                s.id, r.got
            ),
        ));
        return;
    }
    if let Some(size) = s.size
        && size != want
    {
        out.problems.push(BlockProblem::error(
            "range",
            s.id,
            format!("bytestream {}: SIZE={size}; its range holds {want}", s.id),
        ));
    }
    let sha = hex(&r.hasher.finalize());
    if let Some(c) = s.checksum
        && c != sha
    {
        out.problems.push(BlockProblem::error(
            "fixity",
            s.id,
            format!("bytestream {} at {sb}..={se}: CHECKSUM {c}; found {sha}", s.id),
        ));
    }
}

/// A digest field to verify, or a problem saying why it cannot be.
fn labelled(value: Option<&str>, field: &str, out: &mut BlockCheck) -> Option<LabelledDigest> {
    match LabelledDigest::parse(value?) {
        Ok(d) => Some(d),
        Err(DigestLabelError::Unsupported(alg)) => {
            out.problems.push(BlockProblem {
                severity: BlockSeverity::Info,
                rule: "warc-digest",
                id: String::new(),
                message: format!("{field} uses {alg}, which webaip does not compute; not checked"),
            });
            None
        }
        Err(DigestLabelError::Unreadable(v)) => {
            out.problems.push(BlockProblem::error(
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
    fn update(&mut self, bytes: &[u8], stated: &mut StatedDigests, ranges: &mut [RangeHash]) {
        let (start, end) = (self.pos, self.pos + bytes.len() as u64);
        if let Some(d) = stated.block.as_mut() {
            d.update(bytes);
        }
        if let Some(d) = stated.payload.as_mut()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::digest::{sha1_base32, sha1_of, sha512_hex};
    use crate::formats::warc::WarcReader;

    const HTTP_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";

    fn sha1(bytes: &[u8]) -> String {
        sha1_base32(&sha1_of(bytes).unwrap().1)
    }

    /// A response record whose block is `block`, with `fields` added; returns the record and
    /// the length of its WARC header.
    fn record(fields: &[(&str, String)], block: &[u8]) -> (Vec<u8>, u64) {
        let mut h = String::from("WARC/1.1\r\nWARC-Type: response\r\n");
        h += "WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n";
        h += "WARC-Target-URI: http://example.org/\r\n";
        for (k, v) in fields {
            h += &format!("{k}: {v}\r\n");
        }
        h += &format!("Content-Length: {}\r\n\r\n", block.len());
        let header_len = h.len() as u64;
        let mut out = h.into_bytes();
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
        (out, header_len)
    }

    fn check(bytes: &[u8], streams: &[StreamRange<'_>], digests: bool) -> BlockCheck {
        let mut reader = WarcReader::new(bytes, "test.warc").unwrap();
        let read = reader.next_record(|head, block| check_block(head, block, streams, digests));
        read.unwrap().unwrap().2
    }

    fn http_block(payload: &[u8]) -> Vec<u8> {
        [HTTP_HEAD, payload].concat()
    }

    fn digest_fields(block: &[u8], payload: &[u8]) -> Vec<(&'static str, String)> {
        vec![
            ("WARC-Date", "2020-01-02T03:04:05Z".into()),
            ("WARC-Block-Digest", sha1(block)),
            ("WARC-Payload-Digest", sha1(payload)),
        ]
    }

    #[test]
    fn true_digests_pass_and_a_changed_payload_byte_fails_both() {
        let block = http_block(b"hello world");
        let (bytes, _) = record(&digest_fields(&block, b"hello world"), &block);
        let good = check(&bytes, &[], true);
        assert!(good.problems.is_empty(), "{:?}", good.problems);
        assert_eq!(good.digests, 2);
        let tampered: Vec<u8> = String::from_utf8(bytes).unwrap().replace("world", "w0rld").into();
        let bad = check(&tampered, &[], true);
        let fields: Vec<&str> =
            bad.problems.iter().map(|p| p.message.split(' ').next().unwrap()).collect();
        assert_eq!(fields, ["WARC-Block-Digest", "WARC-Payload-Digest"]);
        assert!(bad.problems.iter().all(|p| p.severity == BlockSeverity::Error));
    }

    #[test]
    fn a_revisit_payload_digest_is_not_checked_against_its_block() {
        let block = http_block(b"");
        let mut fields = digest_fields(&block, b"another payload");
        fields.push(("WARC-Type", "revisit".into()));
        let (bytes, _) = record(&fields, &block);
        let text = String::from_utf8(bytes).unwrap().replacen("WARC-Type: response\r\n", "", 1);
        let got = check(text.as_bytes(), &[], true);
        assert!(got.problems.is_empty(), "{:?}", got.problems);
        assert_eq!(got.digests, 1);
    }

    #[test]
    fn an_endless_http_header_leaves_the_payload_digest_unchecked() {
        // No blank line within the first MAX_HTTP_HEADER_LEN bytes. (One that runs to the
        // block's end ends there: warcio reads an empty payload.)
        let field = format!("X-A: {}\r\n", "a".repeat(MAX_HTTP_HEADER_LEN));
        let block = format!("HTTP/1.1 200 OK\r\n{field}\r\nbody").into_bytes();
        let (bytes, _) = record(&digest_fields(&block, b""), &block);
        let got = check(&bytes, &[], true);
        assert_eq!(got.digests, 1);
        assert_eq!(got.problems.len(), 1, "{:?}", got.problems);
        assert_eq!(got.problems[0].severity, BlockSeverity::Warning);
        assert!(got.problems[0].message.contains("cannot be located"));
    }

    #[test]
    fn unknown_and_unreadable_digests_are_said_so() {
        let block = http_block(b"x");
        let fields = vec![
            ("WARC-Block-Digest", "md2:abcd".to_string()),
            ("WARC-Payload-Digest", "sha1:not base32!".to_string()),
        ];
        let (bytes, _) = record(&fields, &block);
        let got = check(&bytes, &[], true);
        let severities: Vec<BlockSeverity> = got.problems.iter().map(|p| p.severity).collect();
        assert_eq!(severities, [BlockSeverity::Info, BlockSeverity::Error], "{:?}", got.problems);
        assert_eq!(got.digests, 0);
    }

    #[test]
    fn an_unstateable_date_is_a_warning() {
        let block = http_block(b"x");
        let (bytes, _) = record(&[("WARC-Date", "+10000-01-01T00:00:00Z".into())], &block);
        let got = check(&bytes, &[], false);
        assert_eq!(got.problems.len(), 1);
        assert_eq!(
            (got.problems[0].rule, got.problems[0].severity),
            ("warc-date", BlockSeverity::Warning)
        );
    }

    #[test]
    fn bytestream_ranges_are_hashed_sized_and_placed() {
        let payload = b"the payload bytes";
        let block = http_block(payload);
        let (bytes, header_len) = record(&[], &block);
        let begin = header_len + HTTP_HEAD.len() as u64;
        let end = begin + payload.len() as u64 - 1;
        let sum = sha512_hex(payload);
        let stream =
            |id, begin, end, size, checksum| StreamRange { id, begin, end, size, checksum };
        let good = stream("ok", begin, end, Some(payload.len() as u64), Some(sum.as_str()));
        let got = check(&bytes, &[good], false);
        assert!(got.problems.is_empty(), "{:?}", got.problems);
        assert_eq!(got.bytestreams, 1);
        let wrong = [
            stream("size", begin, end, Some(3), None),
            stream("sum", begin, end - 1, None, Some(sum.as_str())),
            stream("head", header_len - 1, end, None, None),
            stream("past", begin, end + 10, None, None),
        ];
        let got = check(&bytes, &wrong, false);
        let found: Vec<(&str, &str)> =
            got.problems.iter().map(|p| (p.id.as_str(), p.rule)).collect();
        assert_eq!(
            found,
            [("head", "range"), ("size", "range"), ("sum", "fixity"), ("past", "range")]
        );
        assert_eq!(got.bytestreams, 3);
    }
}
