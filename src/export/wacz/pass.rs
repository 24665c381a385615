//! The one read of the containers the export's second thread makes: each gzip member
//! inflated once (by the index's reader, [`crate::index::members`]) for its index line, its
//! page (an HTML page and its title) and whether it is a revisit. A member that reader does
//! not inflate whole (over [`MAX_MEMBER`], damage) is streamed from the bytes it read for it,
//! as `webaip index` reads it (faults named as it names them), and the walk goes on after it:
//! each container is read from its file once. A container of [`MIN_SPLIT`] bytes or more is
//! read by two threads, the second from a guessed member boundary past its middle, kept only
//! if the first lands on it exactly (as `webaip index -j` splits a file): the copy into the
//! ZIP takes far less than a core, and inflating is most of the export's work. A container
//! that is not gzip sends the export to [`two_passes`], whose readers name any fault as
//! `webaip index` and `webaip pages` do.

use std::path::Path;

use super::{WaczError, pages, plan};
use crate::formats::warc::reader::WarcRecordHead;
use crate::index::build::{IndexFormat, IndexInput, SORT_BUDGET, format_line, sort_inputs};
use crate::index::cdxj::IndexEntry;
use crate::index::members::{MAX_MEMBER, MIN_SPLIT, Stop, Walker, is_gzip_file};
use crate::index::sort::LineSorter;
use crate::index::warc::{BlockStart, EntryOptions, IndexError};

/// What the read of the containers gives: the index lines, the pages and the revisits met
/// (`None`: not counted, as when the containers were read in two passes).
pub(super) struct Read {
    pub sorters: Vec<LineSorter>,
    pub listing: pages::Pages,
    pub revisits: Option<u64>,
    /// The containers whose later part a second thread read (and where it started), its
    /// lines kept.
    #[cfg_attr(not(test), allow(dead_code, reason = "read by the tests"))]
    pub split: Vec<(String, u64)>,
}

/// What a walk over (part of) a container gathered.
struct Gathered {
    sorter: LineSorter,
    listing: pages::Pages,
    revisits: u64,
}

impl Gathered {
    fn new(budget: usize) -> Gathered {
        Gathered { sorter: LineSorter::new(budget), listing: pages::new_pages(), revisits: 0 }
    }

    /// Takes in what a later part of a container gathered.
    fn absorb(&mut self, mut part: Gathered) -> std::io::Result<()> {
        let sorter = &mut self.sorter;
        LineSorter::merge_into(vec![part.sorter], &mut |line| sorter.push(line))?;
        part.listing.finish();
        for page in part.listing.iter() {
            self.listing.push(page?)?;
        }
        self.revisits += part.revisits;
        Ok(())
    }
}

/// Where a walk over part of a container stopped, whether the record at its limit pairs with
/// its last (a request and its response), and its walker (holding that record while it may
/// still pair, and the bytes read ahead).
struct PartWalk {
    at: u64,
    stop: Stop,
    across: bool,
    walker: Walker,
}

/// The sizes that decide how a container is read.
#[derive(Clone, Copy)]
struct Limits {
    /// Containers of this many bytes or more are split between two threads.
    min_split: u64,
    /// Members inflating to more than this are streamed.
    max_member: usize,
}

/// The index lines, pages and revisits of the containers in one read; `None` when a container
/// is not gzip (read then by [`two_passes`]).
pub(super) fn one_pass(plan: &plan::Plan) -> Result<Option<Read>, WaczError> {
    one_pass_with(plan, Limits { min_split: MIN_SPLIT, max_member: MAX_MEMBER })
}

/// [`one_pass`] by `limits`.
fn one_pass_with(plan: &plan::Plan, limits: Limits) -> Result<Option<Read>, WaczError> {
    // Half the budget here, half for a split container's second part.
    let mut all = Gathered::new(SORT_BUDGET / 2);
    let mut split = Vec::new();
    for c in &plan.containers {
        if !is_gzip_file(&c.path) {
            return Ok(None);
        }
        if let Some(at) = read_container(c, &mut all, limits)? {
            split.push((c.name.clone(), at));
        }
    }
    all.listing.finish();
    let Gathered { sorter, listing, revisits } = all;
    Ok(Some(Read { sorters: vec![sorter], listing, revisits: Some(revisits), split }))
}

/// Reads the container `c` into `all`, split between two threads when it is large: where the
/// second thread started, when its part was kept.
fn read_container(
    c: &plan::Container,
    all: &mut Gathered,
    limits: Limits,
) -> Result<Option<u64>, WaczError> {
    let open = || Walker::open_inflating(&c.path, &c.name, OPTIONS, limits.max_member);
    let mut guessed = open()?;
    let Some(second) = split_point(c, &mut guessed, limits.min_split)? else {
        walk_on(c, guessed, 0, all)?;
        return Ok(None);
    };
    let (first, later) = std::thread::scope(|s| {
        let later = s.spawn(|| {
            let mut part = Gathered::new(SORT_BUDGET / 2);
            let walked = walk_part(c, guessed, (second, u64::MAX), &mut part, false);
            (part, walked)
        });
        let first = open().map_err(WaczError::from);
        let first = first.and_then(|w| walk_part(c, w, (0, second), all, true));
        (first, later.join())
    });
    let first = first?;
    if first.stop != Stop::Limit || first.at != second || first.across {
        // A guess inside a payload, or a pair across it: the lines of the second thread are
        // dropped, and the first goes on alone.
        walk_on(c, first.walker, first.at, all)?;
        return Ok(None);
    }
    let mut first = first.walker;
    first.pairer.finish(&mut |e| push_line(&mut all.sorter, e)).map_err(io_err(c))?;
    let (mut part, walked) =
        later.map_err(|_| WaczError::Internal("a thread reading a container"))?;
    let later = walked?;
    // The second thread stops at a member it does not inflate whole (it might lie inside a
    // payload): now that its start is known to be a member's, the walk goes on from there.
    walk_on(c, later.walker, later.at, &mut part)?;
    all.absorb(part).map_err(io_err(c))?;
    Ok(Some(second))
}

/// Where a second thread starts on `c` (read by `walker`): a guessed member boundary past its
/// middle, for a container of `min_split` bytes or more.
fn split_point(
    c: &plan::Container,
    walker: &mut Walker,
    min_split: u64,
) -> Result<Option<u64>, WaczError> {
    let len = walker.file_len();
    if len < min_split {
        return Ok(None);
    }
    walker.guess_boundary(len / 2).map_err(io_err(c))
}

/// Walks `c` from `at` (after the records `walker` holds) to its end into `all`.
fn walk_on(
    c: &plan::Container,
    walker: Walker,
    at: u64,
    all: &mut Gathered,
) -> Result<(), WaczError> {
    let mut walked = walk_part(c, walker, (at, u64::MAX), all, true)?;
    let sorter = &mut all.sorter;
    walked.walker.pairer.finish(&mut |e| push_line(sorter, e)).map_err(io_err(c))?;
    Ok(())
}

/// Walks the members of `c` from `start` up to the first boundary at or past `limit`, into
/// `into`. A member the fast way does not take is streamed when `stream_slow`, else ends the
/// walk (a second thread's start may lie inside a payload: its bytes are no records to warn
/// of).
fn walk_part(
    c: &plan::Container,
    mut walker: Walker,
    (start, limit): (u64, u64),
    into: &mut Gathered,
    stream_slow: bool,
) -> Result<PartWalk, WaczError> {
    let mut at = start;
    let stop = loop {
        let (reached, stop) = walk_members(c, &mut walker, (at, limit), into)?;
        at = reached;
        if stop != Stop::Slow || !stream_slow {
            break stop;
        }
        match stream_member(c, &mut walker, at, into)? {
            Some(next) if next > at => at = next,
            _ => {
                at = walker.file_len();
                break Stop::End;
            }
        }
    };
    // A request and its response on both sides of the limit are paired by reading on.
    let across = match stop {
        Stop::Limit if at == limit => walker.pairs_across(at).map_err(io_err(c))?,
        _ => false,
    };
    Ok(PartWalk { at, stop, across, walker })
}

/// Walks the members the fast way takes from `start`, up to the first boundary at or past
/// `limit`: each member inflated once, for its index line, its page and whether it is a
/// revisit.
fn walk_members(
    c: &plan::Container,
    walker: &mut Walker,
    (start, limit): (u64, u64),
    into: &mut Gathered,
) -> Result<(u64, Stop), WaczError> {
    let Gathered { sorter, listing, revisits } = into;
    let mut emit = |e: IndexEntry| push_line(sorter, e);
    let mut seen =
        |at: u64, member: &[u8]| take(listing, revisits, pages::read_member(member, at, &c.rel));
    Ok(walker.walk_seeing(start, limit, &mut emit, &mut seen)?)
}

/// Streams the member at `at` of `c`, one too large (or odd) to inflate whole, as `webaip
/// index` does, keeping of each record only the start its page is read from; where the
/// member ends (`None`: the file ended first).
fn stream_member(
    c: &plan::Container,
    walker: &mut Walker,
    at: u64,
    into: &mut Gathered,
) -> Result<Option<u64>, WaczError> {
    let Gathered { sorter, listing, revisits } = into;
    let mut emit = |e: IndexEntry| push_line(sorter, e);
    let mut seen = |offset: u64, head: &WarcRecordHead, block: &[u8]| {
        take(listing, revisits, pages::read_streamed(head, block, offset, &c.rel))
    };
    let start = BlockStart { bytes: pages::BLOCK_START, seen: &mut seen };
    Ok(walker.stream_member(at, &mut emit, Some(start))?)
}

/// Takes in what the export reads of one record: its page, and whether it is a revisit.
fn take(
    listing: &mut pages::Pages,
    revisits: &mut u64,
    read: pages::MemberRead,
) -> std::io::Result<()> {
    *revisits += u64::from(read.revisit);
    match read.page {
        Some(page) => listing.push(page),
        None => Ok(()),
    }
}

/// The index entries the export makes (no record ids: a WACZ's index has none).
const OPTIONS: EntryOptions = EntryOptions { record_ids: false };

/// Adds the CDXJ line of `e` to `sorter`.
fn push_line(sorter: &mut LineSorter, e: IndexEntry) -> std::io::Result<()> {
    let mut line = String::new();
    format_line(&e, IndexFormat::Cdxj, &mut line);
    sorter.push(line.as_bytes())
}

/// An I/O failure reading the container `c`.
fn io_err(c: &plan::Container) -> impl Fn(std::io::Error) -> WaczError + '_ {
    move |source| WaczError::Index(IndexError::Io { path: c.path.display().to_string(), source })
}

/// The index lines and the pages of the containers, by `webaip index`'s reader and then
/// `webaip pages`'s.
pub(super) fn two_passes(package: &Path, plan: &plan::Plan) -> Result<Read, WaczError> {
    let inputs: Vec<IndexInput> = plan
        .containers
        .iter()
        .map(|c| IndexInput { path: c.path.clone(), filename: c.name.clone() })
        .collect();
    let sorters = sort_inputs(&inputs, IndexFormat::Cdxj, OPTIONS, 1, SORT_BUDGET, &|_| {})?;
    let listing = crate::pages::list::list_pages(package, &Default::default())?;
    Ok(Read { sorters, listing: listing.entries, revisits: None, split: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::warc::writer::{RecordSpec, WarcWriter};
    use crate::pages::list::PageEntry;

    /// Record `n`: an HTML page titled by its number, or (every 50th) a revisit of it.
    fn record(w: &mut WarcWriter<Vec<u8>>, n: usize, body: &[u8]) {
        let revisit = n % 50 == 49;
        let spec = RecordSpec {
            warc_type: if revisit { "revisit" } else { "response" }.into(),
            record_id: format!("<urn:uuid:{n}>"),
            date: "2024-01-02T03:04:05Z".into(),
            target_uri: Some(format!("http://e.org/{n}")),
            content_type: Some("application/http; msgtype=response".into()),
            payload_digest: true,
            ..RecordSpec::default()
        };
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
        let body = if revisit { &b""[..] } else { body };
        w.write_record(&spec, &[head.as_bytes(), body].concat(), head.len() as u64).unwrap();
    }

    fn page(n: usize) -> Vec<u8> {
        format!("<title>Page {n}</title>{}", "line of a page\n".repeat(20 + n % 50)).into_bytes()
    }

    /// A plan of the one container at `path`.
    fn plan_of(path: &Path) -> plan::Plan {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let root = path.parent().unwrap().to_path_buf();
        let container = plan::Container {
            root,
            rel: name.clone(),
            path: path.to_path_buf(),
            name,
            sha512: None,
            sha256: None,
        };
        plan::Plan {
            objid: String::new(),
            containers: vec![container],
            left_out: vec![],
            described: vec![],
            originals: vec![],
        }
    }

    /// What one pass reads: the lines, pages, revisits and the parts a second thread read.
    #[derive(Debug, PartialEq)]
    struct Got {
        lines: Vec<String>,
        pages: Vec<PageEntry>,
        revisits: Option<u64>,
        split: Vec<(String, u64)>,
    }

    /// Splitting files of `min_split` bytes, every member inflated whole.
    fn whole(min_split: u64) -> Limits {
        Limits { min_split, max_member: MAX_MEMBER }
    }

    /// What one pass reads by `limits`.
    fn read(plan: &plan::Plan, limits: Limits) -> Got {
        let read = one_pass_with(plan, limits).unwrap().expect("read to the end");
        let lines = merged(read.sorters);
        let pages = read.listing.iter().map(Result::unwrap).collect();
        Got { lines, pages, revisits: read.revisits, split: read.split }
    }

    fn merged(sorters: Vec<LineSorter>) -> Vec<String> {
        let mut lines = Vec::new();
        LineSorter::merge_into(sorters, &mut |l| {
            lines.push(String::from_utf8_lossy(l).into_owned());
            Ok(())
        })
        .unwrap();
        lines
    }

    /// `webaip index`'s lines for the file at `path`.
    fn index_lines(path: &Path) -> Vec<String> {
        let filename = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = IndexInput { path: path.to_path_buf(), filename };
        merged(sort_inputs(&[input], IndexFormat::Cdxj, OPTIONS, 1, 1 << 20, &|_| ()).unwrap())
    }

    /// A container read by two threads gives the index lines, pages (with their titles) and
    /// revisits one thread gives, which are `webaip index`'s lines: when the guessed boundary
    /// is a member's start (the second thread's part is kept: the split is used), and when it
    /// is a gzip member of a fake record stored inside a payload past the middle (the walk
    /// from the start never lands on it, and goes on alone).
    #[test]
    fn a_container_read_by_two_threads_gives_what_one_reads() {
        let built = crate::formats::warc::test_fixtures::trapped_containers(&record, &page);
        let (fake, dir) = (built.fake, tempfile::tempdir().unwrap());
        for (name, bytes) in [("plain.warc.gz", built.plain), ("trap.warc.gz", built.trapped)] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let plan = plan_of(&path);
            let c = &plan.containers[0];
            let mut walker = Walker::open(&c.path, &c.name, OPTIONS).unwrap();
            let guess = split_point(c, &mut walker, 0).unwrap().unwrap();
            let fake_at = memchr::memmem::find(&bytes[bytes.len() / 2..], &fake);
            let trapped = name == "trap.warc.gz";
            assert_eq!(
                trapped,
                fake_at.map(|i| (i + bytes.len() / 2) as u64) == Some(guess),
                "{name}: the guess is the fake member only in the trapped file"
            );
            let one = read(&plan, whole(u64::MAX));
            let mut two = read(&plan, whole(0));
            let kept = if trapped { vec![] } else { vec![(name.to_string(), guess)] };
            assert_eq!(two.split, kept, "{name}: the second thread's part");
            assert!(one.split.is_empty());
            two.split.clear();
            assert_eq!(two, one, "{name}");
            assert_eq!(one.revisits, Some(8), "{name}");
            assert_eq!(one.pages.len(), 392 + usize::from(trapped), "{name}");
            assert_eq!(one.pages[0].title.as_deref(), Some("Page 0"), "{name}");
            assert_eq!(one.lines, index_lines(&path), "{name}: webaip index's lines");
        }
    }

    /// Bytes that do not deflate, as a media file's: a title, then noise.
    fn noise_page(len: usize) -> Vec<u8> {
        let mut body = b"<title>A large page</title>".to_vec();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        while body.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            body.extend_from_slice(&x.to_le_bytes());
        }
        body
    }

    /// A member too large to inflate whole (over a limit lowered to 1 MiB here; 64 MiB in
    /// use) is streamed from the bytes the walk read for it, and the walk goes on the fast way
    /// after it, wherever it is (first, among others, last): the container is read from its
    /// file once, to its end, giving cdxj-indexer's lines, `webaip pages`' listing (the large
    /// pages with their titles), and the lines, pages and revisits of every member inflated
    /// whole and of every member streamed.
    #[test]
    fn a_member_too_large_to_inflate_whole_is_streamed_and_the_container_read_once() {
        let large = noise_page(3 << 20);
        let mut w = WarcWriter::new(Vec::new(), 6);
        for n in 0..120 {
            let body = if matches!(n, 0 | 60 | 61 | 119) { large.clone() } else { page(n) };
            record(&mut w, n, &body);
        }
        let bytes = w.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("large.warc.gz");
        std::fs::write(&path, &bytes).unwrap();
        let plan = plan_of(&path);
        let len = bytes.len() as u64;
        let streamed = read(&plan, Limits { min_split: u64::MAX, max_member: 1 << 20 });
        let read_from_file = || crate::index::members::tally::read(&path);
        assert_eq!(read_from_file(), len, "read from the file once");
        let all_streamed = read(&plan, Limits { min_split: u64::MAX, max_member: 0 });
        assert_eq!(read_from_file(), 2 * len, "read once more, every member streamed");
        assert_eq!(streamed, all_streamed);
        assert_eq!(streamed, read(&plan, whole(u64::MAX)));
        assert_eq!(streamed.pages.len(), 118);
        let titled = streamed.pages.iter().filter(|p| p.title.as_deref() == Some("A large page"));
        assert_eq!(titled.count(), 4);
        let listing = crate::pages::list::list_pages(&path, &Default::default()).unwrap();
        let mut listed: Vec<PageEntry> = listing.entries.iter().map(Result::unwrap).collect();
        listed.iter_mut().for_each(|p| p.place.file = "large.warc.gz".into());
        assert_eq!(streamed.pages, listed, "webaip pages' listing");
        let indexer = crate::test_support::repo().join(".venv/bin/cdxj-indexer");
        let out = std::process::Command::new(indexer)
            .arg(&path)
            .output()
            .expect("cdxj-indexer runs (scripts/setup-test-env.sh)");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut theirs: Vec<String> =
            String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
        theirs.sort();
        assert_eq!(streamed.lines, theirs, "cdxj-indexer's lines");
    }
}
