//! The one read of the containers the export's second thread makes: each gzip member
//! inflated once (by the index's reader, [`crate::index::members`]) for its index line, its
//! page (an HTML page and its title) and whether it is a revisit. A container of
//! [`MIN_SPLIT`] bytes or more is read by two threads, the second from a guessed member
//! boundary past its middle, kept only if the first lands on it exactly (as `webaip index -j`
//! splits a file): the copy into the ZIP takes far less than a core, and inflating is most of
//! the export's work. A container that reader does not take to its end (not gzip, a member
//! holding several records, damage) sends the export to [`two_passes`], whose readers name any
//! fault as `webaip index` and `webaip pages` do.

use std::path::Path;

use super::{WaczError, pages, plan};
use crate::index::build::{IndexFormat, IndexInput, SORT_BUDGET, format_line, sort_inputs};
use crate::index::cdxj::IndexEntry;
use crate::index::members::{MIN_SPLIT, Stop, Walker, is_gzip_file};
use crate::index::method::Pairer;
use crate::index::sort::LineSorter;
use crate::index::warc::{EntryOptions, IndexError};

/// What the read of the containers gives: the index lines, the pages and the revisits met
/// (`None`: not counted, as when the containers were read in two passes).
pub(super) struct Read {
    pub sorters: Vec<LineSorter>,
    pub listing: pages::Pages,
    pub revisits: Option<u64>,
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
/// its last (a request and its response), and that record while it may still pair.
struct PartWalk {
    at: u64,
    stop: Stop,
    across: bool,
    pairer: Pairer,
}

/// The index lines, pages and revisits of the containers in one read; `None` when a container
/// is not read that way to its end.
pub(super) fn one_pass(plan: &plan::Plan) -> Result<Option<Read>, WaczError> {
    one_pass_splitting(plan, MIN_SPLIT)
}

/// [`one_pass`], splitting the containers of `min_split` bytes or more.
fn one_pass_splitting(plan: &plan::Plan, min_split: u64) -> Result<Option<Read>, WaczError> {
    // Half the budget here, half for a split container's second part.
    let mut all = Gathered::new(SORT_BUDGET / 2);
    for c in &plan.containers {
        if !is_gzip_file(&c.path) || !read_container(c, &mut all, min_split)? {
            return Ok(None);
        }
    }
    all.listing.finish();
    let Gathered { sorter, listing, revisits } = all;
    Ok(Some(Read { sorters: vec![sorter], listing, revisits: Some(revisits) }))
}

/// Reads the container `c` into `all`, split between two threads when it is large; false
/// when the fast reader does not take it to its end.
fn read_container(
    c: &plan::Container,
    all: &mut Gathered,
    min_split: u64,
) -> Result<bool, WaczError> {
    let Some(second) = split_point(c, min_split)? else {
        return walk_on(c, 0, Pairer::default(), all);
    };
    let (first, later) = std::thread::scope(|s| {
        let later = s.spawn(|| {
            let mut part = Gathered::new(SORT_BUDGET / 2);
            let walked = walk_part(c, (second, u64::MAX), Pairer::default(), &mut part);
            (part, walked)
        });
        let first = walk_part(c, (0, second), Pairer::default(), all);
        (first, later.join())
    });
    let mut first = first?;
    let landed = first.stop == Stop::Limit && first.at == second && !first.across;
    if !landed {
        // A guess inside a payload, or a pair across it: the lines of the second thread are
        // dropped, and the first goes on alone.
        return match first.stop {
            Stop::Slow => Ok(false),
            _ => walk_on(c, first.at, first.pairer, all),
        };
    }
    first.pairer.finish(&mut |e| push_line(&mut all.sorter, e)).map_err(io_err(c))?;
    let (mut part, walked) =
        later.map_err(|_| WaczError::Internal("a thread reading a container"))?;
    let mut later = walked?;
    if later.stop != Stop::End {
        return Ok(false);
    }
    later.pairer.finish(&mut |e| push_line(&mut part.sorter, e)).map_err(io_err(c))?;
    all.absorb(part).map_err(io_err(c))?;
    Ok(true)
}

/// Where a second thread starts on `c`: a guessed member boundary past its middle, for a
/// container of `min_split` bytes or more.
fn split_point(c: &plan::Container, min_split: u64) -> Result<Option<u64>, WaczError> {
    let mut walker = Walker::open(&c.path, &c.name, OPTIONS)?;
    let len = walker.file_len();
    if len < min_split {
        return Ok(None);
    }
    walker.guess_boundary(len / 2).map_err(io_err(c))
}

/// Walks `c` from `at` (after the records `pairer` holds) to its end into `all`; false when
/// it stops before its end.
fn walk_on(
    c: &plan::Container,
    at: u64,
    pairer: Pairer,
    all: &mut Gathered,
) -> Result<bool, WaczError> {
    let mut walked = walk_part(c, (at, u64::MAX), pairer, all)?;
    if walked.stop != Stop::End {
        return Ok(false);
    }
    walked.pairer.finish(&mut |e| push_line(&mut all.sorter, e)).map_err(io_err(c))?;
    Ok(true)
}

/// Walks the members of `c` from `start` up to the first boundary at or past `limit`, into
/// `into`.
fn walk_part(
    c: &plan::Container,
    (start, limit): (u64, u64),
    pairer: Pairer,
    into: &mut Gathered,
) -> Result<PartWalk, WaczError> {
    let mut walker = Walker::open(&c.path, &c.name, OPTIONS)?;
    walker.pairer = pairer;
    let Gathered { sorter, listing, revisits } = into;
    let mut emit = |e: IndexEntry| push_line(sorter, e);
    let mut seen = |at: u64, member: &[u8]| {
        let read = pages::read_member(member, at, &c.rel);
        *revisits += u64::from(read.revisit);
        match read.page {
            Some(page) => listing.push(page),
            None => Ok(()),
        }
    };
    let (at, stop) = walker.walk_seeing(start, limit, &mut emit, &mut seen)?;
    // A request and its response on both sides of the limit are paired by reading on.
    let across = match stop {
        Stop::Limit if at == limit => walker.pairs_across(at).map_err(io_err(c))?,
        _ => false,
    };
    Ok(PartWalk { at, stop, across, pairer: std::mem::take(&mut walker.pairer) })
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
    Ok(Read { sorters, listing: listing.entries, revisits: None })
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

    /// The lines, pages and revisits one pass reads, splitting files of `min_split` bytes.
    fn read(plan: &plan::Plan, min_split: u64) -> (Vec<String>, Vec<PageEntry>, Option<u64>) {
        let read = one_pass_splitting(plan, min_split).unwrap().expect("read to the end");
        let mut lines = Vec::new();
        LineSorter::merge_into(read.sorters, &mut |l| {
            lines.push(String::from_utf8_lossy(l).into_owned());
            Ok(())
        })
        .unwrap();
        let pages = read.listing.iter().map(Result::unwrap).collect();
        (lines, pages, read.revisits)
    }

    /// A container read by two threads gives the index lines, pages (with their titles) and
    /// revisits one thread gives, which are `webaip index`'s lines: when the guessed boundary
    /// is a member's start, and when it is a gzip member of a fake record stored inside a
    /// payload past the middle (the walk from the start never lands on it, and goes on alone).
    #[test]
    fn a_container_read_by_two_threads_gives_what_one_reads() {
        let built = crate::formats::warc::test_fixtures::trapped_containers(&record, &page);
        let (fake, dir) = (built.fake, tempfile::tempdir().unwrap());
        for (name, bytes) in [("plain.warc.gz", built.plain), ("trap.warc.gz", built.trapped)] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let plan = plan_of(&path);
            let guess = split_point(&plan.containers[0], 0).unwrap().unwrap();
            let fake_at = memchr::memmem::find(&bytes[bytes.len() / 2..], &fake);
            assert_eq!(
                name == "trap.warc.gz",
                fake_at.map(|i| (i + bytes.len() / 2) as u64) == Some(guess),
                "{name}: the guess is the fake member only in the trapped file"
            );
            let one = read(&plan, u64::MAX);
            let two = read(&plan, 0);
            assert_eq!(two, one, "{name}");
            let (lines, pages, revisits) = one;
            assert_eq!(revisits, Some(8), "{name}");
            assert_eq!(pages.len(), 392 + usize::from(name == "trap.warc.gz"), "{name}");
            assert_eq!(pages[0].title.as_deref(), Some("Page 0"), "{name}");
            let input = IndexInput { path: path.clone(), filename: name.into() };
            let sorters =
                sort_inputs(&[input], IndexFormat::Cdxj, OPTIONS, 1, 1 << 20, &|_| ()).unwrap();
            let mut index = Vec::new();
            LineSorter::merge_into(sorters, &mut |l| {
                index.push(String::from_utf8_lossy(l).into_owned());
                Ok(())
            })
            .unwrap();
            assert_eq!(lines, index, "{name}: webaip index's lines");
        }
    }
}
