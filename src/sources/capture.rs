//! What a source is: it yields [`Capture`]s in order (their types are on the ground floor,
//! [`crate::capture`]), then reports the oddities of its input ([`Quirk`],
//! bounded by a `QuirkLog`), the files it refused and the files it holds that are no capture
//! ([`SideFile`], kept byte-exact under `logs/`).

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::capture::{Capture, Quirk};

/// The quirk kind of what a source holds that is no capture by design (an ARC's version block,
/// a record that maps to no capture): reported, but no oddity.
pub(crate) const NOT_A_CAPTURE: &str = "not-a-capture";

/// The files that seed a `--deterministic` run's identifiers, (name, path), as they come.
pub type SeedFiles<'a> = Box<dyn Iterator<Item = Result<(String, PathBuf), CaptureError>> + 'a>;

/// Files refused (not read at all: a link, a FIFO, a path over `PATH_MAX`, a file over a
/// bound), with why: the first `QuirkLog::LIMIT` listed, every one counted. A mirror of
/// 100,000 links held every name twice and compared each new one with all before (22 s).
#[derive(Debug, Clone, Default)]
pub struct Refused {
    listed: Vec<(String, String)>,
    count: u64,
}

impl Refused {
    /// Refuses `file`.
    pub fn push(&mut self, file: String, why: String) {
        self.count += 1;
        if self.listed.len() < QuirkLog::LIMIT {
            self.listed.push((file, why));
        }
    }

    /// Refuses `file` unless it is listed already (a fixed name met by the walk, then opened).
    pub fn push_once(&mut self, file: &str, why: String) {
        if !self.listed.iter().any(|(f, _)| f == file) {
            self.push(file.to_string(), why);
        }
    }

    /// The refusals listed, (file, why).
    pub fn listed(&self) -> &[(String, String)] {
        &self.listed
    }

    /// How many files were refused, listed or not.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True when nothing was refused.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl Extend<(String, String)> for Refused {
    fn extend<I: IntoIterator<Item = (String, String)>>(&mut self, iter: I) {
        for (file, why) in iter {
            self.push(file, why);
        }
    }
}

/// Quirks as a source meets them: the first `QuirkLog::LIMIT` kept, the others only counted,
/// so that a file with millions of oddities does not fill memory. Refusals (a file or entry
/// not read at all: a link, a FIFO, a path over `PATH_MAX`, a file over a bound) are quirks
/// too, and are also listed on their own (up to `QuirkLog::LIMIT` more) and counted
/// exactly: they make the run one with findings, as in every source.
#[derive(Debug, Default)]
pub(crate) struct QuirkLog {
    kept: Vec<Quirk>,
    dropped: u64,
    /// Every quirk met by kind, kept or not (kinds are the code's: a few dozen).
    counts: BTreeMap<String, u64>,
    refused: Vec<(String, String)>,
    refusals: u64,
}

impl QuirkLog {
    /// Quirks kept one by one.
    pub(crate) const LIMIT: usize = 10_000;

    /// Longest detail kept: one from the input (a header value) may be a MiB long.
    const DETAIL_MAX: usize = 1024;

    /// Most kinds counted one by one (the rest as `other`).
    const KINDS_MAX: usize = 256;

    /// Keeps a quirk at a byte offset of `file`, or counts it past the limit (what is [`NOT_A_CAPTURE`]
    /// by design is only kept, never counted: it is no oddity).
    pub(crate) fn at_offset(&mut self, file: &str, offset: u64, kind: &str, detail: String) {
        self.note(file, None, Some(offset), kind, detail);
    }

    /// Keeps a quirk of `file` at a line, an offset or neither, or counts it past the limit.
    pub(crate) fn note(
        &mut self,
        file: &str,
        line: Option<u64>,
        offset: Option<u64>,
        kind: &str,
        detail: String,
    ) {
        self.count(kind, 1);
        self.keep(file, line, offset, kind, detail);
    }

    fn count(&mut self, kind: &str, n: u64) {
        let room = self.counts.len() < Self::KINDS_MAX;
        match self.counts.get_mut(kind) {
            Some(c) => *c += n,
            None if room => {
                self.counts.insert(kind.to_string(), n);
            }
            None => *self.counts.entry("other".into()).or_default() += n,
        }
    }

    fn keep(&mut self, file: &str, line: Option<u64>, offset: Option<u64>, kind: &str, d: String) {
        if self.kept.len() >= Self::LIMIT {
            self.dropped += u64::from(kind != NOT_A_CAPTURE);
            return;
        }
        let detail = cut(d, Self::DETAIL_MAX);
        let (file, kind) = (file.to_string(), kind.to_string());
        self.kept.push(Quirk { detail, file, kind, line, offset });
    }

    /// Refuses `file` (not read, or not read as a capture): a quirk of `kind`, listed among
    /// the refusals and counted.
    pub(crate) fn refuse(&mut self, file: &str, offset: Option<u64>, kind: &str, why: String) {
        self.refusals += 1;
        if self.refused.len() < Self::LIMIT {
            self.refused.push((file.to_string(), cut(why.clone(), Self::DETAIL_MAX)));
        }
        self.note(file, None, offset, kind, why);
    }

    /// Takes the quirks one file's parser met (`line`: their positions are line numbers, else
    /// byte offsets), and counts those it only counted.
    pub(crate) fn take_file(&mut self, file: &str, quirks: FileQuirks, line: bool) {
        let FileQuirks { kept, dropped, per_kind } = quirks;
        for (kind, n) in per_kind {
            self.count(kind, n as u64);
        }
        for (at, kind, detail) in kept {
            let (l, o) = if line { (at, None) } else { (None, at) };
            self.keep(file, l, o, kind, detail);
        }
        self.dropped += dropped;
    }

    /// Every quirk met, by kind (those only counted included).
    pub(crate) fn counts(&self) -> &BTreeMap<String, u64> {
        &self.counts
    }

    /// The quirks kept.
    pub(crate) fn kept(&self) -> &[Quirk] {
        &self.kept
    }

    /// The oddities met past the limit.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The refusals listed (file, why) and how many there were.
    pub(crate) fn refusals(&self) -> (&[(String, String)], u64) {
        (&self.refused, self.refusals)
    }
}

/// `detail` cut to at most `max` bytes (on a character boundary), marked when cut.
fn cut(detail: String, max: usize) -> String {
    crate::layout::cut_marked(detail, max, " [cut]")
}

/// A quirk as one file's parser meets it: where (a line or an offset), its kind, the detail.
pub(crate) type FileQuirk = (Option<u64>, &'static str, String);

/// The quirks of one file while it is parsed: at most [`FileQuirks::PER_KIND`] of each kind
/// kept, the others counted, so that a 1 MiB file of 500,000 odd lines holds no 500,000
/// entries (then [`QuirkLog::take_file`] bounds the whole run).
#[derive(Debug, Default, Clone)]
pub(crate) struct FileQuirks {
    kept: Vec<FileQuirk>,
    /// Quirks met by kind, kept or not.
    per_kind: Vec<(&'static str, usize)>,
    dropped: u64,
}

impl crate::formats::nedlib_meta::QuirkSink for FileQuirks {
    fn push(&mut self, q: FileQuirk) {
        FileQuirks::push(self, q);
    }
}

impl FileQuirks {
    /// Quirks of one kind kept per file (as the ARC reader keeps its anomalies).
    pub(crate) const PER_KIND: usize = 100;

    /// Keeps a quirk, or counts it when its kind has [`Self::PER_KIND`] already.
    pub(crate) fn push(&mut self, q: FileQuirk) {
        let i = match self.per_kind.iter().position(|(k, _)| *k == q.1) {
            Some(i) => i,
            None => {
                self.per_kind.push((q.1, 0));
                self.per_kind.len() - 1
            }
        };
        let n = &mut self.per_kind[i].1;
        *n += 1;
        if *n > Self::PER_KIND {
            self.dropped += 1;
            return;
        }
        self.kept.push(q);
    }

    /// The quirks kept, in the order met.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> &[FileQuirk] {
        &self.kept
    }
}

/// A file of the source that is no capture (a log, an opaque side-car): packaged byte-exact
/// under `logs/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SideFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its path under the package's `logs/`.
    pub relative: String,
}

/// A source of captures: yields them in order, then says what it found odd and what else it
/// holds. Implemented by each source module.
pub trait CaptureSource: Iterator<Item = Result<Capture, CaptureError>> + Send {
    /// A short name of the shape (`nedlib`, `kulturarw3`), for file names and reports.
    fn shape_name(&self) -> &'static str;
    /// The oddities met so far (all of them once the iterator is exhausted, unless there were
    /// more than a source keeps: [`CaptureSource::quirks_dropped`]).
    fn quirks(&self) -> &[Quirk];
    /// Oddities met beyond those kept, only counted (what is no capture by design is not
    /// counted).
    fn quirks_dropped(&self) -> u64 {
        0
    }
    /// Every quirk met, by kind, those only counted included; `None`: count [`Self::quirks`].
    fn quirk_counts(&self) -> Option<&BTreeMap<String, u64>> {
        None
    }
    /// The files refused (not read, or not read as a capture), with why, as far as the source
    /// lists them, and how many there were: a run with any is one with findings (exit 1), as
    /// for every source.
    fn refusals(&self) -> (&[(String, String)], u64) {
        (&[], 0)
    }
    /// The files that are no capture.
    fn side_files(&self) -> Vec<SideFile>;
    /// The seed or site URLs, where the source knows them.
    fn seeds(&self) -> Vec<String> {
        Vec::new()
    }
    /// Where [`CaptureSource::seeds`] came from, in words (the package report says it).
    fn seeds_from(&self) -> String {
        "the source".into()
    }
    /// What the containers hold, in words (their warcinfo description).
    fn description(&self) -> String {
        format!("converted from a {} harvest: headers and payloads as stored", self.shape_name())
    }
    /// The stem of the container names; `None`: the shape and the first capture's date.
    fn container_stem(&self) -> Option<String> {
        None
    }
    /// The source's name as the container objects give it (`originalName`); `None`: its root.
    fn source_name(&self) -> Option<String> {
        None
    }
    /// What seeds the identifiers of a `--deterministic` run: a name of the source and its
    /// files (name, path), in any order. `None`: `webaip-<shape>` and every regular file under
    /// its root.
    fn id_seed(&self) -> Option<(String, SeedFiles<'_>)> {
        None
    }
    /// When the source's files link to each other by local paths (a mirror): each file's
    /// path in the mirror and its original URL, so the pipeline rewrites the links
    /// (`crate::stages::rewrite::RewriteStage`).
    fn link_map(&self) -> Option<super::mirror_files::LinkMap> {
        None
    }
}

/// The `Iterator` and [`CaptureSource`] of a source that reads one file (ARC, WARC): captures
/// from its `next_capture`, oddities from its `quirks` ([`QuirkLog`]), no side files.
macro_rules! one_file_source {
    ($source:ty, $shape:literal) => {
        impl Iterator for $source {
            type Item = Result<$crate::capture::Capture, CaptureError>;

            fn next(&mut self) -> Option<Self::Item> {
                self.next_capture().transpose()
            }
        }

        impl CaptureSource for $source {
            fn shape_name(&self) -> &'static str {
                $shape
            }

            fn quirks(&self) -> &[Quirk] {
                self.quirks.kept()
            }

            fn quirks_dropped(&self) -> u64 {
                self.quirks.dropped()
            }

            fn quirk_counts(&self) -> Option<&std::collections::BTreeMap<String, u64>> {
                Some(self.quirks.counts())
            }

            fn side_files(&self) -> Vec<SideFile> {
                Vec::new()
            }
        }
    };
}
pub(crate) use one_file_source;

/// A capture that cannot be read at all (a quirk that can be tolerated is a [`Quirk`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// A file could not be read.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// An ARC file cannot be read further.
    #[error(transparent)]
    Arc(#[from] crate::formats::arc::ArcError),
    /// A WARC file cannot be read further.
    #[error(transparent)]
    Warc(#[from] crate::formats::warc::WarcError),
    /// An ARC record has no usable date and nothing gives one (as in packaging).
    #[error(
        "{}: record at offset {offset}: no usable date (archive-date {date:?}); give --capture-date",
        path.display()
    )]
    NoDate {
        /// The ARC file.
        path: PathBuf,
        /// Offset of the record.
        offset: u64,
        /// Its archive-date field as found.
        date: String,
    },
    /// The root of a source that is a directory tree is not a directory.
    #[error("{}: not a directory: {layout}", path.display())]
    NotADirectory {
        /// The root given.
        path: PathBuf,
        /// What the source's root is instead (`a NEDLIB harvest is a folder of day folders`).
        layout: &'static str,
    },
    /// A record's date, as mapped from its ARC header, is no RFC 3339 date-time.
    #[error("{} at offset {offset}: date {date:?}: {source}", path.display())]
    BadDate {
        /// The ARC file.
        path: PathBuf,
        /// Offset of the record.
        offset: u64,
        /// The date as mapped.
        date: String,
        /// What the parser said.
        #[source]
        source: chrono::ParseError,
    },
    /// A mirror's file list could not be read back.
    #[error(transparent)]
    MirrorList(#[from] super::mirror_files::ScratchError),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory stays bounded whatever the input: a detail taken from a header value is cut, and
    /// past the limit quirks are only counted, except what is no capture by design.
    #[test]
    fn the_quirk_log_is_bounded_in_count_and_in_detail() {
        let mut log = QuirkLog::default();
        // One byte, then two-byte characters: the cut falls inside one and moves back.
        log.at_offset("f.warc", 7, "unreadable-warc-date", format!("x{}", "é".repeat(600_000)));
        let kept = &log.kept()[0];
        assert!(
            kept.detail.len() <= QuirkLog::DETAIL_MAX + " [cut]".len(),
            "{}",
            kept.detail.len()
        );
        assert!(kept.detail.ends_with(" [cut]"));
        assert_eq!((kept.file.as_str(), kept.offset), ("f.warc", Some(7)));
        for i in 1..QuirkLog::LIMIT as u64 + 5 {
            log.at_offset("f.warc", i, "odd", "short".into());
        }
        log.at_offset("f.warc", 0, NOT_A_CAPTURE, "the version block".into());
        assert_eq!(log.kept().len(), QuirkLog::LIMIT);
        assert_eq!(log.dropped(), 5, "oddities past the limit, not the version block");
        // Counted by kind, all of them; a file's own bound counts what it drops too.
        assert_eq!(log.counts()["odd"], QuirkLog::LIMIT as u64 + 4);
        let mut file = FileQuirks::default();
        for i in 0..FileQuirks::PER_KIND as u64 + 7 {
            file.push((Some(i), "line", "odd".into()));
        }
        file.push((Some(0), "other-kind", "kept: its kind has room".into()));
        assert_eq!(file.kept().len(), FileQuirks::PER_KIND + 1);
        let mut log = QuirkLog::default();
        log.take_file("f.meta", file, true);
        assert_eq!(log.counts()["line"], FileQuirks::PER_KIND as u64 + 7);
        assert_eq!(log.dropped(), 7);
        assert_eq!(log.kept()[0].line, Some(0));
        assert!(log.kept().iter().any(|q| q.kind == "other-kind"));
    }
}
