//! One container read on a thread of its own, as a stream of what the rebuild needs: the ARCs
//! it was migrated from (their `warcinfo`), each record made from ARC bytes (its head, then its
//! block in chunks), and each ARC's rebuild record. The channel is bounded, so a container is
//! never more than a few chunks ahead of the merge, whatever the size of its records.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::formats::arc_rebuild::{FIELD_ARC_REBUILD, REBUILD_URI_PREFIX, RebuildField};
use crate::formats::arc_to_warc::{FIELD_ARC_HEADER, FIELD_ARC_OFFSET};
use crate::formats::warc::header::FIELD_REFERS_TO_PACKAGE;
use crate::formats::warc::{WarcHeader, WarcReader};

use super::RebuildError;

/// Bytes of a block per message.
const CHUNK: usize = 256 << 10;
/// Messages in flight per container.
const IN_FLIGHT: usize = 4;
/// The largest `warcinfo` or rebuild-record block read (they are a few lines).
pub(super) const MAX_SMALL_BLOCK: u64 = 4 << 20;

/// An ARC a container's `warcinfo` record says it was migrated from.
#[derive(Debug, Clone)]
pub(crate) struct ArcInfo {
    /// The `warcinfo` record's id (the ARC's records name it in `WARC-Warcinfo-ID`).
    pub warcinfo_id: String,
    /// `source-file`: the ARC's name as it was migrated.
    pub name: String,
    /// `source-format` says gzip.
    pub gzip: bool,
}

/// Where a record's bytes were in the ARC (`X-Webaip-ARC-Offset`): `at` in a plain file or a
/// raw region, or byte `at` of the member at file offset `member`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArcOffset {
    /// The first number: a member's offset in a gzip file, else the offset.
    pub first: u64,
    /// The offset in the member (`M+N`), 0 when absent.
    pub in_member: u64,
}

impl ArcOffset {
    fn parse(text: &str) -> Option<ArcOffset> {
        let (a, b) = text.split_once('+').unwrap_or((text, "0"));
        Some(ArcOffset { first: a.trim().parse().ok()?, in_member: b.trim().parse().ok()? })
    }
}

/// The head of one record made from ARC bytes.
#[derive(Debug, Clone)]
pub(crate) struct ArcPiece {
    /// `WARC-Warcinfo-ID`: the ARC it belongs to.
    pub warcinfo_id: String,
    pub offset: ArcOffset,
    pub field: RebuildField,
    /// `X-Webaip-ARC-Header` decoded: the header line of a capture.
    pub header_line: Option<Vec<u8>>,
    /// `WARC-Block-Digest` as found.
    pub block_digest: Option<String>,
    /// `Content-Length`.
    pub block_len: u64,
    /// The container and the record's offset there, for messages.
    pub container: String,
    pub container_offset: u64,
    /// A revisit written by deduplication: the payload it leaves out.
    pub revisit: Option<RevisitOf>,
}

/// What a revisit made from ARC bytes leaves out: the payload of the record it refers to.
#[derive(Debug, Clone)]
pub(crate) struct RevisitOf {
    /// The revisit's `WARC-Record-ID`.
    pub record_id: String,
    /// `WARC-Refers-To`: the record holding the payload.
    pub refers_to: Option<String>,
    /// `X-Webaip-Refers-To-Package`: the package holding it, by OBJID (none: this one).
    pub package: Option<String>,
    /// `WARC-Refers-To-Container`: the container holding it (`file://NAME`).
    pub container: Option<String>,
    /// `WARC-Payload-Digest`: the payload's digest as stated.
    pub digest: String,
    /// The payload's length (the rebuild field's `payload`).
    pub len: u64,
}

impl ArcPiece {
    /// Merging order within an ARC (`docs/arc-rebuild.md`, "Merging order").
    pub(crate) fn key(&self) -> (u64, u8, u64) {
        (self.offset.first, u8::from(self.field.raw), self.offset.in_member)
    }
}

/// The rebuild record of an ARC.
#[derive(Debug, Clone)]
pub(crate) struct SummaryText {
    /// `WARC-Concurrent-To`: the ARC's `warcinfo` record.
    pub warcinfo_id: String,
    pub text: String,
    pub container: String,
    pub container_offset: u64,
}

/// What a container's thread sends, in container order.
pub(crate) enum Msg {
    Info(ArcInfo),
    Piece(Box<ArcPiece>),
    Chunk(Vec<u8>),
    /// The last chunk of the piece's block was sent.
    BlockEnd,
    Summary(Box<SummaryText>),
    Failed(RebuildError),
}

/// A container being read: its messages, in order, with one looked at ahead.
pub(crate) struct RecordStream {
    rx: Receiver<Msg>,
    peeked: Option<Msg>,
}

impl RecordStream {
    /// Starts reading `path` on a thread of its own.
    pub(crate) fn open(path: &Path) -> Result<RecordStream, RebuildError> {
        let name = path.display().to_string();
        let file = crate::layout::open_regular(path).map_err(|e| RebuildError::Open {
            path: path.to_path_buf(),
            source: io::Error::other(e),
        })?;
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let owned: PathBuf = path.to_path_buf();
        let thread_name = name.clone();
        std::thread::Builder::new()
            .name("rebuild-reader".into())
            .spawn(move || {
                if let Err(e) = read_container(file, &thread_name, &tx) {
                    let _ = tx.send(Msg::Failed(e));
                }
                drop(owned);
            })
            .map_err(|e| RebuildError::Open { path: path.to_path_buf(), source: e })?;
        Ok(RecordStream { rx, peeked: None })
    }

    /// The next message without taking it; `None` at the end of the container.
    pub(crate) fn peek(&mut self) -> Option<&Msg> {
        if self.peeked.is_none() {
            self.peeked = self.rx.recv().ok();
        }
        self.peeked.as_ref()
    }

    /// Takes the next message.
    pub(crate) fn next_msg(&mut self) -> Option<Msg> {
        self.peek();
        self.peeked.take()
    }

    /// Skips the block of the piece just taken.
    pub(crate) fn skip_block(&mut self) -> Result<(), RebuildError> {
        loop {
            match self.next_msg() {
                Some(Msg::Chunk(_)) => {}
                Some(Msg::BlockEnd) => return Ok(()),
                Some(Msg::Failed(e)) => return Err(e),
                _ => return Err(RebuildError::Internal("a block without its end")),
            }
        }
    }
}

/// A `warcinfo` block's `source-file` and `source-format`.
fn arc_of_warcinfo(id: &str, block: &[u8]) -> Option<ArcInfo> {
    let text = String::from_utf8_lossy(block);
    let mut name = None;
    let mut gzip = false;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("source-file:") {
            name = Some(v.trim().to_string());
        }
        if let Some(v) = line.strip_prefix("source-format:") {
            gzip = v.contains("gzip");
        }
    }
    Some(ArcInfo { warcinfo_id: id.to_string(), name: name?, gzip })
}

/// What a record is to the rebuild, from its header alone.
enum Role {
    Warcinfo,
    Summary,
    Piece(Box<ArcPiece>),
    /// Not made from ARC bytes (a cleaned copy, anything else), or `damaged`: skipped.
    Other,
}

fn role(h: &WarcHeader, container: &str, at: u64) -> Result<Role, RebuildError> {
    if h.warc_type() == Some("warcinfo") {
        return Ok(Role::Warcinfo);
    }
    if h.target_uri().is_some_and(|u| u.starts_with(REBUILD_URI_PREFIX)) {
        return Ok(Role::Summary);
    }
    let Some(offset) = h.get(FIELD_ARC_OFFSET) else { return Ok(Role::Other) };
    let bad = |what: String| RebuildError::Record { container: container.into(), offset: at, what };
    let offset =
        ArcOffset::parse(offset).ok_or_else(|| bad(format!("{FIELD_ARC_OFFSET} {offset:?}")))?;
    let field = h.get(FIELD_ARC_REBUILD).ok_or_else(|| {
        bad(format!("no {FIELD_ARC_REBUILD} field: migrated before rebuild data was kept"))
    })?;
    let field: RebuildField =
        field.parse().map_err(|e| bad(format!("{FIELD_ARC_REBUILD}: {e}")))?;
    if field.damaged {
        return Ok(Role::Other);
    }
    let revisit = revisit_of(h, &field).map_err(|e| bad(e.to_string()))?;
    let header_line = match h.get(FIELD_ARC_HEADER) {
        Some(v) => Some(match v.strip_prefix("base64:") {
            Some(b64) => data_encoding::BASE64
                .decode(b64.as_bytes())
                .map_err(|_| bad(format!("{FIELD_ARC_HEADER}: bad base64")))?,
            None => v.as_bytes().to_vec(),
        }),
        None => None,
    };
    Ok(Role::Piece(Box::new(ArcPiece {
        warcinfo_id: h.get("WARC-Warcinfo-ID").unwrap_or_default().to_string(),
        offset,
        field,
        header_line,
        block_digest: h.get("WARC-Block-Digest").map(str::to_string),
        block_len: h.content_length().unwrap_or(0),
        container: container.into(),
        container_offset: at,
        revisit,
    })))
}

/// What a revisit record made from ARC bytes leaves out; `None` for any other record (one
/// `undedup` made whole again keeps the payload length in its field, and its payload in its
/// block). A revisit without a payload length or digest is an error.
fn revisit_of(h: &WarcHeader, field: &RebuildField) -> Result<Option<RevisitOf>, RevisitFault> {
    let text = |name: &str| h.get(name).map(str::to_string);
    match (h.warc_type() == Some("revisit"), field.payload) {
        (false, _) => Ok(None),
        (true, None) => Err(RevisitFault::NoPayloadLength),
        (true, Some(len)) => Ok(Some(RevisitOf {
            record_id: h.record_id().unwrap_or_default().to_string(),
            refers_to: text("WARC-Refers-To"),
            package: text(FIELD_REFERS_TO_PACKAGE),
            container: text("WARC-Refers-To-Container"),
            digest: text("WARC-Payload-Digest").ok_or(RevisitFault::NoPayloadDigest)?,
            len,
        })),
    }
}

/// Why a revisit made from ARC bytes cannot be given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum RevisitFault {
    #[error("a revisit whose {FIELD_ARC_REBUILD} states no payload length")]
    NoPayloadLength,
    #[error("a revisit with no WARC-Payload-Digest")]
    NoPayloadDigest,
}

fn read_small(block: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut v = Vec::new();
    block.take(MAX_SMALL_BLOCK).read_to_end(&mut v)?;
    io::copy(block, &mut io::sink())?;
    Ok(v)
}

/// The error that stops a reader whose merge went away.
fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the rebuild stopped")
}

/// Sends a piece's head, then its block in chunks; an error when the merge went away.
fn send_block(tx: &SyncSender<Msg>, piece: Box<ArcPiece>, block: &mut dyn Read) -> io::Result<()> {
    tx.send(Msg::Piece(piece)).map_err(|_| gone())?;
    loop {
        let mut chunk = vec![0u8; CHUNK];
        let mut filled = 0;
        while filled < CHUNK {
            let n = block.read(&mut chunk[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            break;
        }
        chunk.truncate(filled);
        tx.send(Msg::Chunk(chunk)).map_err(|_| gone())?;
        if filled < CHUNK {
            break;
        }
    }
    tx.send(Msg::BlockEnd).map_err(|_| gone())
}

fn read_container(file: File, name: &str, tx: &SyncSender<Msg>) -> Result<(), RebuildError> {
    let mut r = WarcReader::new(file, name)?;
    loop {
        let mut role_err = None;
        let got = r.next_record(|head, block| {
            let h = &head.header;
            match role(h, name, head.offset) {
                Ok(Role::Warcinfo) => {
                    let body = read_small(block)?;
                    if let Some(info) = arc_of_warcinfo(h.record_id().unwrap_or_default(), &body) {
                        tx.send(Msg::Info(info)).map_err(|_| gone())?;
                    }
                }
                Ok(Role::Summary) => {
                    let body = read_small(block)?;
                    let s = SummaryText {
                        warcinfo_id: h.get("WARC-Concurrent-To").unwrap_or_default().to_string(),
                        text: String::from_utf8_lossy(&body).into_owned(),
                        container: name.to_string(),
                        container_offset: head.offset,
                    };
                    tx.send(Msg::Summary(Box::new(s))).map_err(|_| gone())?;
                }
                Ok(Role::Piece(p)) => send_block(tx, p, block)?,
                Ok(Role::Other) => drop(io::copy(block, &mut io::sink())?),
                Err(e) => {
                    role_err = Some(e);
                    io::copy(block, &mut io::sink())?;
                }
            }
            Ok(())
        });
        if let Some(e) = role_err {
            return Err(e);
        }
        match got {
            Ok(Some(_)) => {}
            Ok(None) => return Ok(()),
            // The merge went away: nothing to report.
            Err(e) if e.io().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe) => {
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The rebuild records of a container, read from its last `tail` bytes when they hold them
/// (the usual case: one ARC per container, its rebuild record last; `whole`: not enough),
/// else from the whole.
pub(crate) fn summaries_of(path: &Path, whole: bool) -> Result<Vec<SummaryText>, RebuildError> {
    let found =
        if whole { Vec::new() } else { summaries_in_tail(path, 1 << 20).unwrap_or_default() };
    if !found.is_empty() {
        return Ok(found);
    }
    let mut s = RecordStream::open(path)?;
    let mut out = Vec::new();
    while let Some(m) = s.next_msg() {
        match m {
            Msg::Summary(t) => out.push(*t),
            Msg::Piece(_) => s.skip_block()?,
            Msg::Failed(e) => return Err(e),
            _ => {}
        }
    }
    Ok(out)
}

/// Rebuild records found by trying each gzip member start among the last `tail` bytes.
fn summaries_in_tail(path: &Path, tail: u64) -> io::Result<Vec<SummaryText>> {
    use std::io::Seek;
    let mut f = crate::layout::open_regular(path).map_err(io::Error::other)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(tail);
    f.seek(io::SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    f.take(tail).read_to_end(&mut buf)?;
    let name = path.display().to_string();
    let mut out: Vec<SummaryText> = Vec::new();
    for i in 0..buf.len().saturating_sub(3) {
        if buf[i..i + 3] != [0x1f, 0x8b, 0x08] {
            continue;
        }
        let Ok(mut r) = WarcReader::with_capacity(&buf[i..], name.as_str(), 4096) else {
            continue;
        };
        let got = r.next_record(|head, block| {
            let h = &head.header;
            let ours = h.target_uri().is_some_and(|u| u.starts_with(REBUILD_URI_PREFIX));
            let body = if ours { Some(read_small(block)?) } else { None };
            Ok(body.map(|b| (h.get("WARC-Concurrent-To").unwrap_or_default().to_string(), b)))
        });
        if let Ok(Some((_, end, Some((id, body))))) = got
            && end.member_ended
        {
            out.push(SummaryText {
                warcinfo_id: id,
                text: String::from_utf8_lossy(&body).into_owned(),
                container: name.clone(),
                container_offset: start + i as u64,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_parse_in_both_forms() {
        assert_eq!(ArcOffset::parse("10"), Some(ArcOffset { first: 10, in_member: 0 }));
        assert_eq!(ArcOffset::parse("10+5"), Some(ArcOffset { first: 10, in_member: 5 }));
        assert_eq!(ArcOffset::parse("x"), None);
        assert_eq!(ArcOffset::parse("1+"), None);
    }

    /// A revisit needs its payload's length and digest; a full record (a revisit `undedup`
    /// made whole) keeps its payload in its block, whatever its field says.
    #[test]
    fn only_a_revisit_leaves_its_payload_out() {
        let header = |kind: &str, digest: bool| {
            let mut h = WarcHeader::new("WARC/1.1");
            h.push("WARC-Type", kind);
            h.push("WARC-Record-ID", "<urn:uuid:2>");
            h.push("WARC-Refers-To", "<urn:uuid:1>");
            if digest {
                h.push("WARC-Payload-Digest", "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK");
            }
            h
        };
        let field = |payload| RebuildField { payload, ..RebuildField::default() };
        let r = revisit_of(&header("revisit", true), &field(Some(7))).unwrap().unwrap();
        assert_eq!((r.len, r.refers_to.as_deref()), (7, Some("<urn:uuid:1>")));
        assert!(revisit_of(&header("response", true), &field(Some(7))).unwrap().is_none());
        let fault = |h, f| revisit_of(&h, &f).err();
        assert_eq!(
            fault(header("revisit", true), field(None)),
            Some(RevisitFault::NoPayloadLength)
        );
        assert_eq!(
            fault(header("revisit", false), field(Some(7))),
            Some(RevisitFault::NoPayloadDigest)
        );
    }

    #[test]
    fn warcinfo_names_the_arc() {
        let info = arc_of_warcinfo(
            "<id>",
            b"software: x\r\nsource-file: a.arc.gz\r\nsource-format: ARC, gzip-compressed\r\n",
        )
        .unwrap();
        assert_eq!(info.name, "a.arc.gz");
        assert!(info.gzip);
        assert!(arc_of_warcinfo("<id>", b"software: x\r\n").is_none());
    }
}
