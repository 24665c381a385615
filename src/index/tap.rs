//! The index of a package made while its containers are written (`package --index`): an
//! observer of the container writer ([`MemberTap`]) sees each record's bytes as they are
//! stored and where they went, inflates the start of each gzip member (the WARC header and the
//! HTTP header, the first [`HEAD_BYTES`] of the record) and derives the record's line as
//! `webaip index` does from the finished container ([`super::record`]). Nothing is read back
//! from disk; the payload is inflated only for a record without `WARC-Payload-Digest`, whose
//! digest must be computed (webaip's own records always carry one).

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use flate2::write::GzDecoder;

use super::build::{IndexFormat, format_line};
use super::cdxj::IndexEntry;
use super::record::entry_of;
use super::sort::LineSorter;
use super::warc::{EntryOptions, IndexError, add_record_id};
use crate::formats::warc::WarcReader;
use crate::formats::warc::writer::MemberTap;

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
    /// The current record's start, inflated (`Some` decoder) or as written.
    inflate: Option<GzDecoder<Collect>>,
    plain: Collect,
    started: bool,
    gzip: bool,
    line: String,
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
        IndexTap {
            index,
            filename,
            inflate: None,
            plain: Collect::default(),
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

    /// The entry of the record just written, `len` bytes at `offset`.
    fn entry(&mut self, offset: u64, len: u64) -> Result<Option<IndexEntry>, IndexError> {
        let bytes = self.record_bytes();
        // The reader sees the record alone: its errors are placed at the record's offset.
        let at = |mut e: crate::formats::warc::WarcError| {
            e.offset = offset;
            IndexError::Warc(e)
        };
        let mut reader = WarcReader::new(&bytes[..], self.filename.clone()).map_err(at)?;
        let mut got = None;
        // The block may be cut at HEAD_BYTES: the reader's complaint about its end is expected;
        // what the entry needed was read before it.
        let read = reader.next_record(|head, block| {
            got = Some((head.clone(), entry_of(&head.header, block)));
            Ok(())
        });
        let Some((head, entry)) = got else {
            return match read {
                Err(e) => Err(at(e)),
                Ok(_) => Ok(None),
            };
        };
        let entry = entry.map_err(|source| IndexError::Record {
            name: self.filename.clone(),
            offset,
            source,
        })?;
        let Some(mut entry) = entry else { return Ok(None) };
        (entry.offset, entry.length) = if self.gzip {
            (offset, len)
        } else {
            let block = head.header.content_length().unwrap_or(0);
            (offset + head.leading_len, head.header_len - head.leading_len + block)
        };
        entry.filename = self.filename.clone();
        let opts = self.index.lock().map(|i| i.opts).unwrap_or_default();
        add_record_id(&mut entry, head.header.record_id(), opts);
        Ok(Some(entry))
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
    fn bytes(&mut self, bytes: &[u8]) {
        if !self.started {
            self.started = true;
            self.gzip = bytes.starts_with(&[0x1f, 0x8b]);
            if self.gzip {
                self.inflate = Some(GzDecoder::new(Collect::default()));
            } else {
                self.plain = Collect::default();
            }
        }
        match &mut self.inflate {
            // Past the headers of a record with a digest, the rest is not inflated at all.
            Some(d) if d.get_ref().full() => {}
            // A damaged member shows in the entry (its header does not parse).
            Some(d) => drop(d.write_all(bytes)),
            None if self.plain.full() => {}
            None => drop(self.plain.write_all(bytes)),
        }
    }

    fn end(&mut self, offset: u64, len: u64) {
        let entry = self.entry(offset, len);
        self.started = false;
        let Ok(mut index) = self.index.lock() else { return };
        match entry {
            Ok(Some(e)) => {
                self.line.clear();
                format_line(&e, IndexFormat::Cdxj, &mut self.line);
                if let Err(err) = index.sorter.push(self.line.as_bytes()) {
                    let path = "(the index's temporary runs)".to_string();
                    index.error.get_or_insert(IndexError::Io { path, source: err });
                }
            }
            Ok(None) => {}
            Err(err) => {
                index.error.get_or_insert(err);
            }
        }
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
