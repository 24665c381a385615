//! The index of a package made while its containers are written (`package --index`): an
//! observer of the container writer ([`MemberTap`]) sees each record's bytes as they are
//! stored and where they went, and derives the record's line as `webaip index` does from the
//! finished container ([`super::record`]). For the records the writer makes, it reads the
//! record as the writer shows it before compressing it (its header and the start of its block,
//! [`MemberTap::start`]): nothing is inflated. Only when that start is not enough (an HTTP header
//! longer than it, a payload digest to compute) or for members copied as they are, the start of
//! the gzip member is inflated (the first [`HEAD_BYTES`] of the record; the whole payload for a
//! record without `WARC-Payload-Digest`, whose digest must be computed). Nothing is read back
//! from disk.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use flate2::write::GzDecoder;

use super::build::{IndexFormat, format_line};
use super::cdxj::IndexEntry;
use super::method::{Pairer, Seen};
use super::record::{RecordIndexError, Start, is_cut, seen_of};
use super::sort::LineSorter;
use super::warc::{EntryOptions, IndexError, add_record_fields};
use crate::formats::warc::writer::MemberTap;
use crate::formats::warc::{WarcError, WarcReader};

/// Bytes of a record's start looked at (the WARC and HTTP headers of nearly every record).
pub const HEAD_BYTES: usize = 64 * 1024;

/// The lines of a package's index, gathered from every container written, and the first
/// error met (a record that cannot be indexed fails the index, not the package).
#[derive(Debug)]
pub struct PackageIndex {
    sorter: LineSorter,
    error: Option<IndexError>,
    opts: EntryOptions,
}

/// A package's index, shared by its containers' taps.
pub type SharedIndex = Arc<Mutex<PackageIndex>>;

impl PackageIndex {
    /// An empty index, sorted in `budget` bytes of memory.
    pub fn shared(opts: EntryOptions, budget: usize) -> SharedIndex {
        Arc::new(Mutex::new(PackageIndex { sorter: LineSorter::new(budget), error: None, opts }))
    }

    /// The sorted lines, or the first error met.
    pub fn into_sorter(self) -> Result<LineSorter, IndexError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.sorter),
        }
    }
}

/// The tap of one container, named `filename` in the index.
pub struct IndexTap {
    index: SharedIndex,
    filename: String,
    opts: EntryOptions,
    /// What the record's uncompressed start, shown by the writer, gave; `None` when the writer
    /// showed none or it was not enough (the member is inflated instead).
    known: Option<Result<Derived, IndexError>>,
    /// The current record's start, inflated (`Some` decoder) or as written.
    inflate: Option<GzDecoder<Collect>>,
    plain: Collect,
    /// The last record, while it may still pair with the next.
    pairer: Pairer,
    started: bool,
    gzip: bool,
    line: String,
}

/// What a record's bytes give its index line, before its place is known.
enum Derived {
    /// The record is not indexed.
    NotIndexed,
    /// What it gives (its entry, if indexed), with what places an uncompressed record.
    Entry { seen: Box<Seen>, leading_len: u64, header_len: u64, block_len: u64 },
}

/// The line fields of the record starting `bytes` (cut short of its end when `cut`), read as
/// `webaip index` reads them from the finished container; `Ok(None)` when they need bytes past
/// the cut. Errors name offset 0 (the caller knows the record's offset).
fn derive(
    bytes: &[u8],
    cut: bool,
    name: &str,
    opts: EntryOptions,
) -> Result<Option<Derived>, IndexError> {
    let warc_error = |e: WarcError| match e.io().is_some_and(is_cut) {
        true => Ok(None),
        false => Err(IndexError::Warc(e)),
    };
    let start = Start { bytes, cut };
    let mut reader = match WarcReader::with_capacity(start, name.to_string(), 32 * 1024) {
        Ok(r) => r,
        Err(e) => return warc_error(e),
    };
    let mut got = None;
    // A block cut short of its end makes the reader complain after the callback: what the
    // entry needed was read before it.
    let read = reader.next_record(|head, block| {
        got = Some((head.clone(), seen_of(&head.header, block)));
        Ok(())
    });
    let Some((head, entry)) = got else {
        return match read {
            Err(e) => warc_error(e),
            Ok(_) => Ok(Some(Derived::NotIndexed)),
        };
    };
    let mut seen = match entry {
        Err(RecordIndexError::Read(e)) if is_cut(&e) => return Ok(None),
        other => other.map_err(|source| IndexError::Record {
            name: name.to_string(),
            offset: 0,
            source,
        })?,
    };
    if let Some(entry) = &mut seen.entry {
        entry.filename = name.to_string();
        add_record_fields(entry, &head.header, opts);
    }
    Ok(Some(Derived::Entry {
        seen: Box::new(seen),
        leading_len: head.leading_len,
        header_len: head.header_len,
        block_len: head.header.content_length().unwrap_or(0),
    }))
}

/// `e`, placed at the record's offset.
fn at_offset(e: IndexError, offset: u64) -> IndexError {
    match e {
        IndexError::Warc(mut w) => {
            w.offset = offset;
            IndexError::Warc(w)
        }
        IndexError::Record { name, source, .. } => IndexError::Record { name, offset, source },
        other => other,
    }
}

/// Where a record's bytes go: kept up to [`HEAD_BYTES`], or whole once its header shows that
/// its payload digest must be computed.
#[derive(Default)]
struct Collect {
    buf: Vec<u8>,
    /// Whether the whole record is needed, once its header is complete.
    all: Option<bool>,
}

impl Collect {
    /// True when no more bytes are wanted.
    fn full(&self) -> bool {
        self.all == Some(false) && self.buf.len() >= HEAD_BYTES
    }
}

impl Write for Collect {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let room = match self.all {
            Some(true) => b.len(),
            _ => HEAD_BYTES.saturating_sub(self.buf.len()).min(b.len()),
        };
        self.buf.extend_from_slice(&b[..room]);
        if self.all.is_none() {
            self.all = needs_payload(&self.buf);
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl IndexTap {
    /// A tap adding the records of container `filename` to `index`.
    pub fn new(index: SharedIndex, filename: String) -> IndexTap {
        let opts = index.lock().map(|i| i.opts).unwrap_or_default();
        IndexTap {
            index,
            filename,
            opts,
            known: None,
            inflate: None,
            plain: Collect::default(),
            pairer: Pairer::default(),
            started: false,
            gzip: false,
            line: String::new(),
        }
    }

    /// The record's bytes as the index reads them (inflated for a member).
    fn record_bytes(&mut self) -> Vec<u8> {
        match self.inflate.take() {
            Some(mut d) => {
                let _ = d.try_finish();
                std::mem::take(&mut d.get_mut().buf)
            }
            None => std::mem::take(&mut self.plain.buf),
        }
    }

    /// What the record just written, `len` bytes at `offset`, gives.
    fn seen(&mut self, offset: u64, len: u64) -> Result<Option<Seen>, IndexError> {
        let derived = match self.known.take() {
            Some(d) => d,
            None => {
                let bytes = self.record_bytes();
                derive(&bytes, false, &self.filename, self.opts)
                    .map(|d| d.unwrap_or(Derived::NotIndexed))
            }
        };
        match derived.map_err(|e| at_offset(e, offset))? {
            Derived::NotIndexed => Ok(None),
            Derived::Entry { mut seen, leading_len, header_len, block_len } => {
                if let Some(entry) = &mut seen.entry {
                    (entry.offset, entry.length) = if self.gzip {
                        (offset, len)
                    } else {
                        (offset + leading_len, header_len - leading_len + block_len)
                    };
                }
                Ok(Some(*seen))
            }
        }
    }
}

/// Once the record's header is complete in `buf`: whether its digest must be computed (no
/// `WARC-Payload-Digest`, and a type whose digest cdxj-indexer computes), so that its whole
/// payload is needed.
fn needs_payload(buf: &[u8]) -> Option<bool> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let header = &buf[..end];
    let has = |name: &[u8]| {
        header.split(|&b| b == b'\n').any(|l| {
            let l = l.trim_ascii();
            l.len() >= name.len() && l[..name.len()].eq_ignore_ascii_case(name)
        })
    };
    let indexed_type =
        [&b"WARC-Type: response"[..], b"WARC-Type: resource", b"WARC-Type: metadata"];
    Some(!has(b"WARC-Payload-Digest:") && indexed_type.iter().any(|t| has(t)))
}

impl MemberTap for IndexTap {
    fn start(&mut self, plain: &[u8], whole: bool) {
        self.known = derive(plain, !whole, &self.filename, self.opts).transpose();
    }

    fn bytes(&mut self, bytes: &[u8]) {
        if !self.started {
            self.started = true;
            self.gzip = bytes.starts_with(&[0x1f, 0x8b]);
            if self.known.is_some() {
                // The writer showed the record before compressing it: nothing to inflate.
                self.inflate = None;
            } else if self.gzip {
                self.inflate = Some(GzDecoder::new(Collect::default()));
            } else {
                self.plain = Collect::default();
            }
        }
        match &mut self.inflate {
            _ if self.known.is_some() => {}
            // Past the headers of a record with a digest, the rest is not inflated at all.
            Some(d) if d.get_ref().full() => {}
            // A damaged member shows in the entry (its header does not parse).
            Some(d) => drop(d.write_all(bytes)),
            None if self.plain.full() => {}
            None => drop(self.plain.write_all(bytes)),
        }
    }

    fn end(&mut self, offset: u64, len: u64) {
        let seen = self.seen(offset, len);
        self.started = false;
        match seen {
            Ok(Some(seen)) => self.pair(Some(seen)),
            Ok(None) => {}
            Err(err) => {
                if let Ok(mut index) = self.index.lock() {
                    index.error.get_or_insert(err);
                }
            }
        }
    }
}

impl IndexTap {
    /// Pairs the record with the one before it, or (`None`: the container is complete) hands
    /// on the last; the entries settled go to the index.
    fn pair(&mut self, seen: Option<Seen>) {
        let Ok(mut index) = self.index.lock() else { return };
        let line = &mut self.line;
        let mut emit = |e: IndexEntry| {
            line.clear();
            format_line(&e, IndexFormat::Cdxj, line);
            index.sorter.push(line.as_bytes())
        };
        let pushed = match seen {
            Some(seen) => self.pairer.push(seen, &mut emit),
            None => self.pairer.finish(&mut emit),
        };
        if let Err(err) = pushed {
            let path = "(the index's temporary runs)".to_string();
            index.error.get_or_insert(IndexError::Io { path, source: err });
        }
    }
}

impl Drop for IndexTap {
    /// The container is complete: its last record is not paired with any other.
    fn drop(&mut self) {
        self.pair(None);
    }
}

/// Writes the index gathered while a package was written to `path` (CDXJ, sorted),
/// atomically. The taps must be gone (the package's writers closed).
pub fn write_package_index(index: SharedIndex, path: &std::path::Path) -> Result<(), IndexError> {
    let err = |e: &str| IndexError::Io {
        path: path.display().to_string(),
        source: io::Error::other(e.to_string()),
    };
    let index = Arc::try_unwrap(index)
        .map_err(|_| err("the index is still being written"))?
        .into_inner()
        .map_err(|_| err("a thread writing the index failed"))?;
    let sorter = index.into_sorter()?;
    super::build::write_index(vec![sorter], IndexFormat::Cdxj, path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::warc::writer::{RecordSpec, START_OF_BLOCK, WarcWriter};

    fn spec(warc_type: &str, n: u32, payload_digest: bool) -> RecordSpec {
        RecordSpec {
            warc_type: warc_type.into(),
            record_id: format!("<urn:uuid:{n}>"),
            date: "2024-01-02T03:04:05Z".into(),
            target_uri: Some(format!("http://e.org/{n}")),
            content_type: Some("application/http; msgtype=response".into()),
            payload_digest,
            ..RecordSpec::default()
        }
    }

    fn http(pad: usize, body: usize) -> Vec<u8> {
        let (pad, body) = ("p".repeat(pad), "b".repeat(body));
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Pad: {pad}\r\n\r\n{body}")
            .into_bytes()
    }

    /// The lines the tap makes equal the lines read back from the finished container, whether
    /// the start the writer shows is enough (a small record, a large one), not enough (an HTTP
    /// header longer than it; a payload whose digest must be computed: the member is inflated)
    /// or absent (a member copied as it is).
    #[test]
    fn tap_lines_equal_the_lines_read_back() {
        let opts = EntryOptions { record_ids: true, ..EntryOptions::default() };
        let index = PackageIndex::shared(opts, 1 << 20);
        let mut w = WarcWriter::new(Vec::new(), 6);
        w.set_tap(Box::new(IndexTap::new(Arc::clone(&index), "c.warc.gz".into())));
        let (small, big) = (http(10, 100), http(10, 3 * START_OF_BLOCK));
        w.write_record(&spec("response", 1, true), &small, 0).unwrap();
        w.write_record(&spec("response", 2, true), &http(START_OF_BLOCK + 9, 10), 0).unwrap();
        w.write_record(&spec("response", 3, false), &big, 0).unwrap();
        w.write_streamed(&spec("response", 4, true), &big[..], 0).unwrap();
        w.write_record(&spec("resource", 5, false), b"plain text", 0).unwrap();
        w.write_record(&spec("request", 6, true), &small, 0).unwrap();
        let mut other = WarcWriter::new(Vec::new(), 6);
        other.write_record(&spec("response", 7, true), &small, 0).unwrap();
        let member = other.finish().unwrap();
        w.append_member(&member[..], member.len() as u64).unwrap();
        let bytes = w.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (warc, out) = (dir.path().join("c.warc.gz"), dir.path().join("tap.cdxj"));
        std::fs::write(&warc, &bytes).unwrap();
        write_package_index(index, &out).unwrap();
        let tapped = std::fs::read_to_string(&out).unwrap();
        let mut read = Vec::new();
        super::super::members::index_warc(&warc, "c.warc.gz", opts, &mut |e| {
            let mut line = String::new();
            format_line(&e, IndexFormat::Cdxj, &mut line);
            read.push(line);
            Ok(())
        })
        .unwrap();
        read.sort();
        assert_eq!(read.len(), 6, "every record but the request");
        assert_eq!(tapped.lines().collect::<Vec<_>>(), read);
    }
}
