//! The ARC reader's account of the bytes around each record, kept so the ARC can be rebuilt
//! (`docs/arc-rebuild.md`): the separator bytes before and after a record, its header line's
//! end, a CRC-32 over those, the record-less gzip members, and the SHA-512 of the stream.
//!
//! The reader frames records; this module only looks at the bytes it already framed, so a
//! change here never changes which records are found.

use std::io;

use crate::formats::digest::Sha512;
use flate2::Crc;

use crate::formats::arc_rebuild::{GapEncoder, MAX_ORPHAN_MEMBER, OrphanMembers, RebuildField};
use crate::formats::gzip_rebuild::{DeflateParams, GzipHeader, probe};
use crate::formats::segment::Segment;

/// Problems kept in full; later ones are only counted.
const MAX_LISTED_PROBLEMS: usize = 20;

/// Bytes of pending record-less members held before the ARC is called not rebuildable.
const MAX_PENDING_ORPHAN_BYTES: usize = 64 << 10;

/// End of the run of blank lines (LF, CR LF) that starts at `from`: what the reader's
/// separator scan consumes next.
pub(crate) fn blank_run_end(data: &Segment, from: u64) -> io::Result<u64> {
    let len = data.len();
    let mut pos = from;
    let mut buf = [0u8; 4096];
    'outer: while pos < len {
        let n = data.read_at(pos, &mut buf)?;
        if n == 0 {
            break;
        }
        let mut i = 0;
        while i < n {
            match buf[i] {
                b'\n' => i += 1,
                b'\r' if i + 1 < n => {
                    if buf[i + 1] != b'\n' {
                        pos += i as u64;
                        break 'outer;
                    }
                    i += 2;
                }
                b'\r' => {
                    // The CR ends the chunk: decide with the next byte.
                    if data.byte_at(pos + i as u64 + 1)? != Some(b'\n') {
                        pos += i as u64;
                        break 'outer;
                    }
                    i += 2;
                }
                _ => {
                    pos += i as u64;
                    break 'outer;
                }
            }
        }
        pos += i as u64;
    }
    Ok(pos.min(len))
}

/// Encodes `start..end` of `data` (a lead or tail) and adds it to `crc`. `None` when the
/// encoding grows too long to keep.
fn encode_range(data: &Segment, start: u64, end: u64, crc: &mut Crc) -> io::Result<Option<String>> {
    let mut enc = GapEncoder::default();
    let mut buf = vec![0u8; (end.saturating_sub(start)).min(64 << 10) as usize];
    let mut at = start;
    while at < end {
        let want = ((end - at) as usize).min(buf.len());
        let n = data.read_full_at(at, &mut buf[..want])?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
        enc.push(&buf[..n]);
        at += n as u64;
    }
    Ok(enc.finish())
}

/// What one framed record is in the stream.
pub(crate) struct Framed<'a> {
    /// Where the bytes not yet given to any record start.
    pub claimed: u64,
    /// Where the record starts.
    pub start: u64,
    /// The header line and its end, when they are not in the block (captures).
    pub header_line: Option<(&'a [u8], u64)>,
    /// Where the block ends.
    pub block_end: u64,
    /// Where the separator scan will start (the block's end, or the end of padding).
    pub separator_from: u64,
}

/// Describes a framed record: its field and where the next unclaimed byte is. Adds a problem
/// to `problems` when a gap cannot be kept.
pub(crate) fn frame(
    data: &Segment,
    f: Framed<'_>,
    problems: &mut Problems,
    at: &dyn Fn(u64) -> String,
) -> io::Result<(RebuildField, u64)> {
    let mut crc = Crc::new();
    let mut field = RebuildField::default();
    let mut keep = |enc: Option<String>, what: &str, off: u64| -> Option<String> {
        if enc.is_none() {
            problems.add(format!("{what} at {} too irregular to keep", at(off)));
        }
        enc
    };
    if f.start > f.claimed {
        let lead = encode_range(data, f.claimed, f.start, &mut crc)?;
        field.lead = keep(lead, "blank lines", f.claimed);
    }
    if let Some((line, eol_len)) = f.header_line {
        crc.update(line);
        let eol_at = f.start + line.len() as u64;
        let eol = encode_range(data, eol_at, eol_at + eol_len, &mut crc)?;
        field.eol = keep(eol, "header line end", eol_at).filter(|e| e != "n");
    }
    let tail_end = blank_run_end(data, f.separator_from)?;
    let tail = encode_range(data, f.block_end, tail_end, &mut crc)?;
    field.tail = keep(tail, "separator", f.block_end).filter(|t| t != "n");
    field.crc = crc.sum();
    Ok((field, tail_end))
}

/// Why an ARC cannot be rebuilt: the first few in full, then a count.
#[derive(Debug, Default, Clone)]
pub(crate) struct Problems {
    pub listed: Vec<String>,
    pub more: u64,
}

impl Problems {
    pub(crate) fn add(&mut self, what: String) {
        if self.listed.len() < MAX_LISTED_PROBLEMS {
            self.listed.push(what);
        } else {
            self.more += 1;
        }
    }

    /// The reasons as the rebuild record states them.
    pub(crate) fn reasons(&self) -> Vec<String> {
        let mut r = self.listed.clone();
        if self.more > 0 {
            r.push(format!("{} more", self.more));
        }
        r
    }
}

/// Record-less gzip members met since the last record, identical neighbours counted once.
#[derive(Default)]
pub(crate) struct Orphans {
    pending: Vec<OrphanMembers>,
    pending_bytes: usize,
    overflowed: bool,
}

impl Orphans {
    /// Notes the member at `offset` whose bytes are `bytes`.
    pub(crate) fn push(&mut self, offset: u64, bytes: Vec<u8>, problems: &mut Problems) {
        if let Some(last) = self.pending.last_mut()
            && last.bytes == bytes
            && last.offset + last.count * bytes.len() as u64 == offset
        {
            last.count += 1;
            return;
        }
        if bytes.len() > MAX_ORPHAN_MEMBER
            || self.pending_bytes + bytes.len() > MAX_PENDING_ORPHAN_BYTES
        {
            if !self.overflowed || bytes.len() > MAX_ORPHAN_MEMBER {
                problems.add(format!(
                    "record-less gzip member at offset {offset} ({} bytes) not kept",
                    bytes.len()
                ));
            }
            self.overflowed = true;
            return;
        }
        self.pending_bytes += bytes.len();
        self.pending.push(OrphanMembers { offset, bytes, count: 1 });
    }

    /// The members met since the last call.
    pub(crate) fn take(&mut self) -> Vec<OrphanMembers> {
        self.pending_bytes = 0;
        self.overflowed = false;
        std::mem::take(&mut self.pending)
    }
}

/// Segments queued for the digest thread at most: each is at most a spooled member (memory
/// or a spill file), so the queue bounds the memory held for it.
const DIGEST_QUEUE: usize = 4;

/// The SHA-512 and length of the stream (`docs/arc-rebuild.md`: intact members decompressed,
/// other regions as found), computed on a thread of its own: the reader's thread is the
/// migration's busiest, and the digest costs as much as a second pass over the stream.
pub(crate) struct StreamDigest {
    tx: Option<std::sync::mpsc::SyncSender<(std::sync::Arc<Segment>, u64, u64)>>,
    thread: Option<std::thread::JoinHandle<io::Result<Digested>>>,
}

/// Length and SHA-512 of what the digest thread read.
type Digested = (u64, [u8; 64]);

impl Default for StreamDigest {
    fn default() -> Self {
        let (tx, rx) =
            std::sync::mpsc::sync_channel::<(std::sync::Arc<Segment>, u64, u64)>(DIGEST_QUEUE);
        let thread = std::thread::spawn(move || {
            let mut hasher = Sha512::new();
            let mut len = 0u64;
            let mut buf = Vec::new();
            for (seg, start, end) in rx {
                if let Some(all) = seg.slice(start, end) {
                    hasher.update(all);
                    len += all.len() as u64;
                    continue;
                }
                buf.resize(1 << 20, 0);
                let mut at = start;
                while at < end {
                    let want = ((end - at) as usize).min(buf.len());
                    let n = seg.read_full_at(at, &mut buf[..want])?;
                    if n == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!("stream digest: bytes {at}..{end} could not be read"),
                        ));
                    }
                    hasher.update(&buf[..n]);
                    len += n as u64;
                    at += n as u64;
                }
            }
            Ok((len, hasher.finalize()))
        });
        StreamDigest { tx: Some(tx), thread: Some(thread) }
    }
}

impl StreamDigest {
    /// Adds `start..end` of `data`, in order.
    pub(crate) fn segment(&mut self, data: &std::sync::Arc<Segment>, start: u64, end: u64) {
        // A closed channel means the thread failed; `finish` reports why.
        if let Some(tx) = &self.tx {
            let _ = tx.send((std::sync::Arc::clone(data), start, end));
        }
    }

    /// Length and hex digest.
    pub(crate) fn finish(mut self) -> io::Result<(u64, String)> {
        self.tx = None;
        let thread = self.thread.take().ok_or_else(|| io::Error::other("digest finished twice"))?;
        let (len, digest) =
            thread.join().map_err(|_| io::Error::other("the stream digest thread panicked"))??;
        Ok((len, crate::formats::digest::hex(&digest)))
    }
}

impl Drop for StreamDigest {
    fn drop(&mut self) {
        // Closing the queue ends the thread; it is not waited for.
        self.tx = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_runs_end_where_the_separator_scan_stops() {
        let cases: [(&[u8], u64); 6] = [
            (b"\n\nx", 2),
            (b"\r\n\r\nx", 4),
            (b"\r\rx", 0),
            (b"\n\r", 1),
            (b"", 0),
            (b"\n\r\n", 3),
        ];
        for (bytes, end) in cases {
            let seg = Segment::Mem(bytes.to_vec());
            assert_eq!(blank_run_end(&seg, 0).unwrap(), end, "{bytes:?}");
        }
    }

    #[test]
    fn framing_tiles_the_bytes_and_covers_them_with_the_crc() {
        let bytes = b"\nhttp://a 1.2.3.4 20240101000000 text/plain 3\r\nabc\n\nnext".to_vec();
        let seg = Segment::Mem(bytes.clone());
        let line_end = bytes.iter().position(|&b| b == b'\r').unwrap();
        let line = &bytes[1..line_end];
        let block_end = (line_end + 5) as u64;
        let f = Framed {
            claimed: 0,
            start: 1,
            header_line: Some((line, 2)),
            block_end,
            separator_from: block_end,
        };
        let mut problems = Problems::default();
        let (field, end) = frame(&seg, f, &mut problems, &|o| o.to_string()).unwrap();
        assert_eq!(end, block_end + 2);
        assert_eq!(field.lead.as_deref(), Some("n"));
        assert_eq!(field.eol.as_deref(), Some("N"));
        assert_eq!(field.tail.as_deref(), Some("n2"));
        let mut crc = Crc::new();
        crc.update(b"\n");
        crc.update(line);
        crc.update(b"\r\n\n\n");
        assert_eq!(field.crc, crc.sum());
        assert!(problems.listed.is_empty());
    }

    #[test]
    fn identical_empty_members_in_a_row_are_counted_once() {
        let mut o = Orphans::default();
        let mut p = Problems::default();
        for i in 0..1000 {
            o.push(100 + i * 20, vec![7; 20], &mut p);
        }
        o.push(100 + 1000 * 20, vec![8; 20], &mut p);
        let got = o.take();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].count, 1000);
        assert!(p.listed.is_empty());
    }
}

/// Members whose deflate settings are probed, at most: the first few tell a file's writer; a
/// probe costs up to a few compressions of the member.
const MAX_PROBED_MEMBERS: u32 = 4;

/// Members larger than this (compressed) are not probed.
const MAX_PROBED_MEMBER_BYTES: u64 = 8 << 20;

/// Members probed besides the first few because their header's XFL or OS byte is not the
/// default header's, at most: a sign of another writer or another level (zlib's gzip writers
/// set XFL 2 at level 9 and 4 at level 1), as where ARCs of several tools were concatenated.
/// Past this, such a member is given the settings last found for its XFL and OS.
const MAX_PROBED_OTHER_WRITER: u32 = 64;

/// The gzip header and deflate settings of a file's members: the first member's are the file's
/// defaults; a member that differs says so in its first record's field.
#[derive(Default)]
pub(crate) struct MemberSettings {
    default_header: Option<Vec<u8>>,
    /// `None` until the first probe; then its outcome (`None`: nothing reproduced it).
    default_deflate: Option<Option<DeflateParams>>,
    probed: u32,
    probed_other: u32,
    /// The settings last found for a header's XFL and OS bytes other than the default's.
    other_writers: Vec<((u8, u8), Option<DeflateParams>)>,
    /// Members given no settings that reproduce them.
    unrecovered: crate::formats::arc_rebuild::Unrecovered,
}

impl MemberSettings {
    /// For the intact member `start..end` of `file` decompressed into `data`: its header when
    /// it is not the default, and its deflate settings when they are not (`?` when a probe
    /// found none).
    pub(crate) fn member(
        &mut self,
        file: &std::fs::File,
        (start, end): (u64, u64),
        data: &Segment,
        problems: &mut Problems,
    ) -> io::Result<(Option<Vec<u8>>, Option<String>)> {
        use std::os::unix::fs::FileExt;
        let mut head = vec![0u8; (end - start).min(64 << 10) as usize];
        let n = file.read_at(&mut head, start)?;
        head.truncate(n);
        let (header, header_len) = match GzipHeader::parse(&head) {
            Ok(h) => h,
            Err(e) => {
                problems.add(format!("gzip member at offset {start}: {e}"));
                return Ok((None, None));
            }
        };
        let gz = match &self.default_header {
            None => {
                self.default_header = Some(header.bytes().to_vec());
                None
            }
            Some(d) if d == header.bytes() => None,
            Some(_) => Some(header.bytes().to_vec()),
        };
        let deflate_start = start + header_len as u64;
        let deflate_len = end.saturating_sub(8).saturating_sub(deflate_start);
        let writer = (header.extra_flags(), header.os());
        let other = self.default_header.as_ref().is_some_and(|d| (d[8], d[9]) != writer);
        let probe_it = deflate_len <= MAX_PROBED_MEMBER_BYTES
            && data.slice(0, data.len()).is_some()
            && (self.probed < MAX_PROBED_MEMBERS
                || (other && self.probed_other < MAX_PROBED_OTHER_WRITER));
        if !probe_it {
            let known = self.other_writers.iter().find(|(w, _)| other && *w == writer);
            // Not probed: the settings of its writer, else the file's default, are assumed.
            let assumed = known.map_or(self.default_deflate.flatten(), |(_, found)| *found);
            let token = known.and_then(|(_, found)| self.unless_default(*found));
            if assumed.is_none() {
                self.unrecovered.add(start);
            }
            return Ok((gz, token));
        }
        if self.probed < MAX_PROBED_MEMBERS {
            self.probed += 1;
        } else {
            self.probed_other += 1;
        }
        let mut compressed = vec![0u8; deflate_len as usize];
        let n = file.read_at(&mut compressed, deflate_start)?;
        compressed.truncate(n);
        let decompressed = data.slice(0, data.len()).unwrap_or_default();
        let first = self.default_deflate.flatten();
        let found = probe(&compressed, decompressed, first);
        if found.is_none() {
            self.unrecovered.add(start);
        }
        if other {
            self.other_writers.retain(|(w, _)| *w != writer);
            // A few writers at most in a file; more is not worth remembering.
            if self.other_writers.len() < 16 {
                self.other_writers.push((writer, found));
            }
        }
        if self.default_deflate.is_none() {
            self.default_deflate = Some(found);
            return Ok((gz, None));
        }
        Ok((gz, self.unless_default(found)))
    }

    /// The `z` token for settings `found` (`?`: none), `None` when they are the default.
    fn unless_default(&self, found: Option<DeflateParams>) -> Option<String> {
        match self.default_deflate {
            Some(d) if d == found => None,
            _ => Some(found.map_or_else(|| "?".to_string(), |p| p.to_string())),
        }
    }

    /// The members no settings were recovered for.
    pub(crate) fn unrecovered(&self) -> crate::formats::arc_rebuild::Unrecovered {
        self.unrecovered.clone()
    }

    /// The file's default header and deflate settings (`?`: not recovered).
    pub(crate) fn defaults(&self) -> (Option<Vec<u8>>, Option<String>) {
        let deflate = self.default_deflate.map(|d| d.map_or_else(|| "?".into(), |p| p.to_string()));
        (self.default_header.clone(), deflate)
    }
}
