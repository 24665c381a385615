//! Index entries of a WARC file read from disk (gzip per record, or plain), with offsets and
//! lengths as cdxj-indexer gives them: for a compressed file the record's gzip member (its
//! offset and whole length), for a plain one the record from its version line to the end of
//! its block (the CRLF CRLF after it and blank lines before it not counted).

use std::io::{self, Read};
use std::path::Path;

use super::cdxj::{IndexEntry, json_string};
use super::method::Pairer;
use super::record::{RecordIndexError, seen_of};
use crate::formats::warc::reader::WarcRecordHead;
use crate::formats::warc::{WarcError, WarcFault, WarcReader};

/// Why an index cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The index file would be an input, or inside an input package.
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
    /// A WARC cannot be read (the error names the file and the record's offset).
    #[error(transparent)]
    Warc(#[from] WarcError),
    /// A record cannot be indexed.
    #[error("{name}: record at offset {offset}: {source}")]
    Record {
        /// The file.
        name: String,
        /// The record's offset.
        offset: u64,
        /// Why.
        #[source]
        source: RecordIndexError,
    },
    /// A gzip member holds more than one record: no offset reaches the record alone.
    #[error(
        "{name}: record at offset {offset} shares its gzip member with the next record: an index \
         needs one gzip member per record (recompress the file, one member per record)"
    )]
    SharedMember {
        /// The file.
        name: String,
        /// The member's offset.
        offset: u64,
    },
    /// A container of a package is not a regular file reached without links, or is absent.
    #[error(transparent)]
    Refused(#[from] crate::layout::ConfineError),
    /// An ARC file given: the index reads WARC, which `migrate` makes of it.
    #[error(
        "{0}: an ARC file: `index` reads WARC files; migrate it first (`webaip migrate {0} -o \
         DIR`) and index the WARC file that makes"
    )]
    Arc(String),
    /// Two inputs would have one `filename` in the index: a line could not tell which holds
    /// its record.
    #[error(
        "{first} and {second} would both be named {name:?} in the index (a container is named \
         by its file name): rename one, or index them separately"
    )]
    SameName {
        /// The name both would have.
        name: String,
        /// The first input of that name.
        first: String,
        /// The second.
        second: String,
    },
    /// A file or folder given is neither a WARC nor a package.
    #[error("{0}: not a WARC file nor a package folder (a folder with METS.xml)")]
    NotInput(String),
    /// A ZipNum index was asked for on a stream: it is three files, which need a name.
    #[error("a ZipNum index is three files: name them with -o NAME")]
    ZipNumNeedsName,
    /// Reading a folder, or writing or sorting the index, failed.
    #[error("{path}: {why}", why = crate::layout::describe_io(source))]
    Io {
        /// The file or folder.
        path: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// Options of the entries made.
#[derive(Debug, Clone, Copy, Default)]
pub struct EntryOptions {
    /// Add each record's `WARC-Record-ID` as the extra field `recordId`.
    pub record_ids: bool,
    /// Keep each record's `WARC-Type` in `IndexEntry::record_type` (not written to the
    /// index line): for a caller that tells captures from other records.
    pub record_types: bool,
}

/// Adds to `entry` what `opts` asks of the record's `header`: its `recordId` field (when it
/// has an id) and its type.
pub(crate) fn add_record_fields(
    entry: &mut IndexEntry,
    header: &crate::formats::warc::WarcHeader,
    opts: EntryOptions,
) {
    if let (true, Some(id)) = (opts.record_ids, header.record_id()) {
        let mut v = String::new();
        json_string(&mut v, id);
        entry.extra.push(("recordId".to_string(), v));
    }
    if opts.record_types {
        entry.record_type = header.warc_type().map(str::to_string);
    }
}

/// Where and how [`streamed`] reads: the file (its path, for messages) and the name the
/// entries give it, from offset `base` to its end or (`resume`) to the end of the first gzip
/// member that ends with a record.
pub(crate) struct StreamAt<'a> {
    pub name: String,
    pub filename: &'a str,
    pub opts: EntryOptions,
    pub base: u64,
    pub resume: bool,
}

/// What a caller that needs more of each streamed record than its index entry (the WACZ
/// export's pages) is shown: the record's offset, its head, and the first `bytes` bytes of
/// its block (all of a shorter one).
pub(crate) struct BlockStart<'a> {
    pub bytes: usize,
    pub seen: &'a mut SeenBlock<'a>,
}

/// Shown a streamed record's offset, head and block start.
pub(crate) type SeenBlock<'a> = dyn FnMut(u64, &WarcRecordHead, &[u8]) -> io::Result<()> + 'a;

/// Indexes the WARC at `path` from its start with the streaming reader, to its end.
pub(crate) fn streamed_file(
    path: &Path,
    filename: &str,
    opts: EntryOptions,
    pairer: &mut Pairer,
    emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
) -> Result<(), IndexError> {
    let name = path.display().to_string();
    let file = crate::layout::open_user_file(path).map_err(|e| WarcError {
        name: name.clone(),
        offset: 0,
        fault: WarcFault::Open(io::Error::other(e)),
    })?;
    let from = StreamAt { name, filename, opts, base: 0, resume: false };
    streamed(file, &from, pairer, emit, None).map(|_| ())
}

/// Indexes the records of `input` (the file's bytes from `from.base`) with the streaming
/// reader: to its end, or (`resume`) to the end of the first gzip member that ends with a
/// record, whose end it then returns. Entries go through `pairer` (the records before and
/// after are the caller's); `block_start` is shown each record's start.
pub(crate) fn streamed(
    input: impl Read,
    from: &StreamAt,
    pairer: &mut Pairer,
    emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
    mut block_start: Option<BlockStart<'_>>,
) -> Result<Option<u64>, IndexError> {
    let (name, base) = (from.name.clone(), from.base);
    let io_err = |e| IndexError::Io { path: name.clone(), source: e };
    let rebase = |mut e: WarcError| {
        e.offset += base;
        e
    };
    // Bytes no record frames are skipped to the next record, as warcio does, and named.
    let mut reader = WarcReader::new(input, name.clone()).map_err(rebase)?.resynchronise(true);
    let gzip = reader.is_gzip();
    let want = block_start.as_ref().map_or(0, |b| b.bytes);
    loop {
        let mut start = Vec::new();
        let read = reader
            .next_record(|head, block| {
                let mut kept = Keeping { inner: block, kept: &mut start, want };
                let seen = match seen_of(&head.header, &mut kept) {
                    Err(RecordIndexError::Read(e)) => return Err(e),
                    other => other,
                };
                kept.read_to_want()?;
                Ok(seen)
            })
            .map_err(rebase)?;
        if let Some(mut gap) = reader.take_gap() {
            gap.offset += base;
            eprintln!("warning: {gap}");
        }
        let Some((head, end, seen)) = read else { return Ok(None) };
        let offset = base + head.offset;
        if gzip && !end.member_ended {
            return Err(IndexError::SharedMember { name, offset });
        }
        let mut seen =
            seen.map_err(|source| IndexError::Record { name: name.clone(), offset, source })?;
        if let Some(entry) = &mut seen.entry {
            (entry.offset, entry.length) = if gzip {
                (offset, end.end - head.offset)
            } else {
                let block = head.header.content_length().unwrap_or(0);
                (offset + head.leading_len, head.header_len - head.leading_len + block)
            };
            entry.filename = from.filename.to_string();
            add_record_fields(entry, &head.header, from.opts);
        }
        pairer.push(seen, emit).map_err(io_err)?;
        if let Some(b) = &mut block_start {
            (b.seen)(offset, &head, &start).map_err(io_err)?;
        }
        if from.resume && gzip {
            return Ok(Some(base + end.end));
        }
    }
}

/// A record's block read through it keeps its first `want` bytes.
struct Keeping<'a> {
    inner: &'a mut dyn Read,
    kept: &'a mut Vec<u8>,
    want: usize,
}

impl Keeping<'_> {
    /// Reads on until `want` bytes are kept or the block ends.
    fn read_to_want(&mut self) -> io::Result<()> {
        let more = self.want.saturating_sub(self.kept.len()) as u64;
        if more > 0 {
            (&mut *self.inner).take(more).read_to_end(self.kept)?;
        }
        Ok(())
    }
}

impl Read for Keeping<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let keep = n.min(self.want.saturating_sub(self.kept.len()));
        self.kept.extend_from_slice(&buf[..keep]);
        Ok(n)
    }
}
