//! What the export makes of the containers' bytes as the copy into the ZIP reads them
//! (handed on through a [`Shared`]): each gzip member inflated once (by the index's reader,
//! [`crate::index::members`]) for its index line, its page (an HTML page and its title) and
//! whether it is a revisit, by two walkers on a large container ([`walkers`]). A member that
//! inflates to more than [`walkers::MAX_WHOLE`] (or that reader does not take: damage) is
//! streamed from the bytes already handed on, as `webaip index` reads it (faults named as it
//! names them), and the walk goes on after it: each container is read from its file once, by
//! the copy. A container that is not gzip sends the export to [`two_passes`], whose readers
//! name any fault as `webaip index` and `webaip pages` do.

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, PoisonError};

use super::walkers::{self, Gathered, Limits, OPTIONS, Walked};
use super::{WaczError, pages, plan};
use crate::index::build::{IndexFormat, IndexInput, SORT_BUDGET, sort_inputs};
use crate::index::feed::Shared;
use crate::index::members::is_gzip_file;
use crate::index::sort::LineSorter;

/// A container's bytes, as the copy reads them.
pub(super) struct Fed {
    /// Its length, as the copy found it when opening it.
    pub len: u64,
    /// Its bytes.
    pub shared: Arc<Shared>,
}

impl Drop for Fed {
    /// Walked, or never to be (the containers are read otherwise, or the walk failed): the
    /// copy hands on nothing more, and never waits for walkers that will not come.
    fn drop(&mut self) {
        self.shared.leave();
    }
}

/// What the read of the containers gives: the index lines, the pages and the revisits met
/// (`None`: not counted, as when the containers were read in two passes).
pub(super) struct Read {
    pub sorters: Vec<LineSorter>,
    pub listing: pages::Pages,
    pub revisits: Option<u64>,
    /// How each container was walked.
    #[cfg_attr(not(test), allow(dead_code, reason = "read by the tests"))]
    pub walked: Vec<Walked>,
}

/// The index lines, pages and revisits of the containers, from their bytes as `fed` hands
/// them on, one container after another in the plan's order; `None` when a container is not
/// gzip (read then by [`two_passes`]; `fed` is dropped, so the copy hands on nothing more).
pub(super) fn one_pass(plan: &plan::Plan, fed: Receiver<Fed>) -> Result<Option<Read>, WaczError> {
    one_pass_with(plan, fed, Limits::IN_USE)
}

/// [`one_pass`] by `limits`.
fn one_pass_with(
    plan: &plan::Plan,
    fed: Receiver<Fed>,
    limits: Limits,
) -> Result<Option<Read>, WaczError> {
    if !plan.containers.iter().all(|c| is_gzip_file(&c.path)) {
        return Ok(None);
    }
    let all = Mutex::new(Gathered {
        sorter: LineSorter::new(SORT_BUDGET),
        listing: pages::new_pages(),
        revisits: 0,
    });
    let mut walked = Vec::new();
    for c in &plan.containers {
        // The copy stopped (its error is the export's).
        let Ok(one) = fed.recv() else {
            return Err(WaczError::Internal("the copy handing on the containers"));
        };
        walked.push(walkers::walk_container(c, one.len, &one.shared, &all, limits)?);
    }
    let Gathered { sorter, mut listing, revisits } =
        all.into_inner().unwrap_or_else(PoisonError::into_inner);
    listing.finish();
    Ok(Some(Read { sorters: vec![sorter], listing, revisits: Some(revisits), walked }))
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
    Ok(Read { sorters, listing: listing.entries, revisits: None, walked: Vec::new() })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::formats::warc::writer::{RecordSpec, WarcWriter};
    use crate::pages::list::PageEntry;

    /// Record `n`: an HTML page titled by its number, or (every 50th) a revisit of it.
    pub(in super::super) fn record(w: &mut WarcWriter<Vec<u8>>, n: usize, body: &[u8]) {
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

    pub(in super::super) fn page(n: usize) -> Vec<u8> {
        format!("<title>Page {n}</title>{}", "line of a page\n".repeat(20 + n % 50)).into_bytes()
    }

    /// A plan of the one container at `path`.
    pub(in super::super) fn plan_of(path: &Path) -> plan::Plan {
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

    /// What one pass reads: the lines, pages and revisits.
    #[derive(Debug, PartialEq)]
    pub(in super::super) struct Got {
        pub lines: Vec<String>,
        pub pages: Vec<PageEntry>,
        pub revisits: Option<u64>,
    }

    impl Got {
        pub(in super::super) fn of(read: Read) -> Got {
            let lines = merged(read.sorters);
            let pages = read.listing.iter().map(Result::unwrap).collect();
            Got { lines, pages, revisits: read.revisits }
        }
    }

    /// The containers of `plan` handed on in pieces of 64 KiB, as the copy hands them on
    /// (read here without being counted), for walkers by `limits`.
    fn fed(plan: &plan::Plan, limits: Limits) -> Receiver<Fed> {
        let (send, fed) = std::sync::mpsc::channel();
        let paths: Vec<_> = plan.containers.iter().map(|c| c.path.clone()).collect();
        std::thread::spawn(move || {
            for path in paths {
                let bytes = std::fs::read(&path).unwrap();
                let shared = limits.shared();
                let len = bytes.len() as u64;
                send.send(Fed { len, shared: Arc::clone(&shared) }).unwrap();
                for piece in bytes.chunks(64 << 10) {
                    if !shared.push(piece) {
                        break;
                    }
                }
                shared.close();
            }
        });
        fed
    }

    /// What one pass reads by `limits`, and how each container was walked.
    fn read_walked(plan: &plan::Plan, limits: Limits) -> (Got, Vec<Walked>) {
        let read = one_pass_with(plan, fed(plan, limits), limits).unwrap().expect("gzip");
        let walked = read.walked.clone();
        (Got::of(read), walked)
    }

    /// What one pass reads, inflating whole members of at most `max_whole` bytes, one walker
    /// on each container.
    fn read(plan: &plan::Plan, max_whole: usize) -> Got {
        read_walked(plan, Limits { max_whole, stretch: u64::MAX / 4 }).0
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

    /// cdxj-indexer's lines for the file at `path`, sorted.
    pub(in super::super) fn cdxj_indexer_lines(path: &Path) -> Vec<String> {
        let indexer = crate::test_support::repo().join(".venv/bin/cdxj-indexer");
        let out = std::process::Command::new(indexer)
            .arg(path)
            .output()
            .expect("cdxj-indexer runs (scripts/setup-test-env.sh)");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut theirs: Vec<String> =
            String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
        theirs.sort();
        theirs
    }

    /// A gzip member of a fake record stored inside a payload is read as the payload's bytes,
    /// not as a record: the pass gives the lines, pages (with their titles) and revisits of
    /// `webaip index` and `webaip pages`, with and without the trap, by one walker and by two,
    /// with stretches of many sizes: where a stretch starts a little before the fake member
    /// (the walker ahead takes it for a member start; the truth walks past it, and the stretch
    /// is walked again from the true boundary), and inside its gzip header.
    #[test]
    fn a_fake_member_inside_a_payload_is_payload() {
        let built = crate::formats::warc::test_fixtures::trapped_containers(&record, &page);
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [("plain.warc.gz", built.plain), ("trap.warc.gz", built.trapped)] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let fake_at = memchr::memmem::find(&bytes, &built.fake).map(|at| at as u64);
            let trapped = name == "trap.warc.gz";
            assert_eq!(fake_at.is_some(), trapped);
            let plan = plan_of(&path);
            let one = read(&plan, walkers::MAX_WHOLE);
            assert_eq!(one.revisits, Some(8), "{name}");
            assert_eq!(one.pages.len(), 392 + usize::from(trapped), "{name}");
            assert_eq!(one.pages[0].title.as_deref(), Some("Page 0"), "{name}");
            assert!(one.pages.iter().all(|p| p.title.as_deref() != Some("Not of this file")));
            assert_eq!(one.lines, index_lines(&path), "{name}: webaip index's lines");
            let len = bytes.len() as u64;
            let near_fake = fake_at.map_or(vec![], |at| vec![(at - 1000) / 2, (at + 3) / 2]);
            for stretch in [len / 2, len / 7, 20_000, 4096].into_iter().chain(near_fake) {
                let limits = Limits { max_whole: walkers::MAX_WHOLE, stretch };
                let (two, walked) = read_walked(&plan, limits);
                assert_eq!(two, one, "{name}, stretches of {stretch}");
                // With many stretches, some walked ahead count (with few, the middle may lie
                // inside the trap's record).
                if stretch <= 20_000 {
                    assert!(walked[0].kept >= 1, "{name}, stretches of {stretch}: {walked:?}");
                }
                if fake_at.is_some_and(|at| stretch == (at - 1000) / 2) {
                    assert!(walked[0].redone >= 1, "{name}: the fake member guessed: {walked:?}");
                }
            }
        }
    }

    /// A container of one member (a record of 3 MiB of noise, larger than two stretches) is
    /// walked whole by the truth: the walker ahead finds no member start in its stretches,
    /// and none counts; the lines are cdxj-indexer's, the page `webaip pages`'.
    #[test]
    fn a_container_of_one_member() {
        let dir = tempfile::tempdir().unwrap();
        for level in [0, 6] {
            let mut w = WarcWriter::new(Vec::new(), level);
            record(&mut w, 0, &noise_page(3 << 20));
            let bytes = w.finish().unwrap();
            let path = dir.path().join(format!("one-{level}.warc.gz"));
            std::fs::write(&path, &bytes).unwrap();
            let plan = plan_of(&path);
            let limits = Limits { max_whole: walkers::MAX_WHOLE, stretch: 256 << 10 };
            let (got, walked) = read_walked(&plan, limits);
            // The truth streams the one member to the end: no stretch walked ahead counts.
            assert_eq!(walked[0].kept, 0, "{walked:?}");
            assert_eq!(got.lines, cdxj_indexer_lines(&path), "cdxj-indexer's lines");
            assert_eq!(got.pages.len(), 1);
            assert_eq!(got.pages[0].title.as_deref(), Some("A large page"));
            assert_eq!(got, read(&plan, walkers::MAX_WHOLE));
        }
    }

    /// Bytes that do not deflate, as a media file's: a title, then noise.
    pub(in super::super) fn noise_page(len: usize) -> Vec<u8> {
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

    /// A member larger than the most inflated whole is streamed from the bytes handed on, and
    /// the walk goes on the fast way after it, wherever it is (first, among others, last):
    /// the walk never reads the file itself, and gives cdxj-indexer's lines, `webaip pages`'
    /// listing (the large pages with their titles), and the lines, pages and revisits of every
    /// member inflated whole and of every member streamed.
    #[test]
    fn a_member_too_large_to_inflate_whole_is_streamed_from_the_bytes_handed_on() {
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
        let streamed = read(&plan, walkers::MAX_WHOLE);
        let all_streamed = read(&plan, 0);
        let none_streamed = read(&plan, 64 << 20);
        for stretch in [64 << 10, 1 << 20] {
            let limits = Limits { max_whole: walkers::MAX_WHOLE, stretch };
            assert_eq!(read_walked(&plan, limits).0, streamed, "two walkers, stretch {stretch}");
        }
        assert_eq!(crate::index::members::tally::read(&path), 0, "the file itself never read");
        assert_eq!(streamed, all_streamed);
        assert_eq!(streamed, none_streamed);
        assert_eq!(streamed.pages.len(), 118);
        let titled = streamed.pages.iter().filter(|p| p.title.as_deref() == Some("A large page"));
        assert_eq!(titled.count(), 4);
        let listing = crate::pages::list::list_pages(&path, &Default::default()).unwrap();
        let mut listed: Vec<PageEntry> = listing.entries.iter().map(Result::unwrap).collect();
        listed.iter_mut().for_each(|p| p.place.file = "large.warc.gz".into());
        assert_eq!(streamed.pages, listed, "webaip pages' listing");
        assert_eq!(streamed.lines, cdxj_indexer_lines(&path), "cdxj-indexer's lines");
    }
}
