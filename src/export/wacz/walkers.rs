//! Two walkers make a container's index lines and pages from its bytes as the copy into the
//! ZIP hands them on ([`Shared`]): the container is read from its file once, and its members
//! are inflated on two cores.
//!
//! The container is cut into stretches of [`STRETCH`] bytes. One walker walks *the truth*:
//! from a member's known start to the first member boundary at or past the next stretch. The
//! other walks that stretch *ahead*, from a member start it guessed in its bytes (a gzip
//! header whose first bytes inflate to `WARC/`). When the truth reaches its boundary, the two
//! are checked in order: if it is the guessed start (and no request and response pair across
//! it), the stretch walked ahead is the container's, its walker takes on the truth, and the
//! other walks the next stretch ahead; if not (the guess lay inside a payload), what was
//! walked ahead is dropped and the truth walks on from the true boundary, over the stretch
//! again (at most one stretch, plus the member it stopped in, is walked twice). The lines
//! and pages are the same in every case, and what a stretch walked ahead gives is kept apart
//! until it is known to count.
//!
//! A walker walking ahead streams no member (one too large to inflate whole, or damage): it
//! stops there, and streams it once it walks the truth.

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::{WaczError, pages, plan};
use crate::formats::warc::reader::WarcRecordHead;
use crate::index::build::{IndexFormat, format_line};
use crate::index::cdxj::IndexEntry;
use crate::index::feed::Shared;
use crate::index::members::{Stop, Walker};
use crate::index::method::Pairer;
use crate::index::sort::LineSorter;
use crate::index::warc::{BlockStart, EntryOptions, IndexError};
use crate::pages::list::PageEntry;

/// Bytes of a container one walker walks while the other walks the next ones.
pub(super) const STRETCH: u64 = 4 << 20;

/// Most bytes a member may inflate to and be inflated whole (by libdeflate, the fastest way);
/// a larger one is streamed once. Inflating whole needs all of a member's compressed bytes at
/// once: a large member would hold tens of MiB in memory, read ahead of the copy, and one cut
/// short by what was read so far was inflated again from its start with more.
pub(super) const MAX_WHOLE: usize = 1 << 20;

/// The index entries the export makes (no record ids: a WACZ's index has none).
pub(super) const OPTIONS: EntryOptions = EntryOptions { record_ids: false, record_types: false };

/// The sizes that decide how a container is walked.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Members inflating to more than this are streamed.
    pub max_whole: usize,
    /// Bytes of a stretch; a container of fewer than two is walked by one walker.
    pub stretch: u64,
}

impl Limits {
    /// The limits in use.
    pub(super) const IN_USE: Limits = Limits { max_whole: MAX_WHOLE, stretch: STRETCH };

    /// The container's bytes handed on for walkers by these limits: the copy goes at most
    /// two stretches and a read past a walker at work (one walking ahead starts a stretch
    /// past the truth), and drops a waiting walker it is far enough past that the walker
    /// on the truth cannot have stopped before it.
    pub(super) fn shared(self) -> Arc<Shared> {
        let ahead = 2 * self.stretch + (2 << 20);
        Shared::new(ahead, ahead + (8 << 20))
    }
}

/// What the walks over the containers gathered.
pub(super) struct Gathered {
    pub sorter: LineSorter,
    pub listing: pages::Pages,
    pub revisits: u64,
}

/// How a container was walked: stretches walked ahead that counted, and those walked again
/// from the true boundary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Walked {
    pub kept: u64,
    pub redone: u64,
}

/// What a walk gathered, kept apart until it is known to count.
#[derive(Default)]
struct Part {
    lines: Vec<String>,
    pages: Vec<PageEntry>,
    revisits: u64,
}

impl Part {
    /// Adds the CDXJ line of `e`.
    fn push_line(&mut self, e: &IndexEntry) {
        self.lines.push(line_of(e));
    }

    /// Moves what was gathered into `all`: it counts.
    fn flush(&mut self, all: &Mutex<Gathered>) -> io::Result<()> {
        let mut all = all.lock().unwrap_or_else(PoisonError::into_inner);
        for line in self.lines.drain(..) {
            all.sorter.push(line.as_bytes())?;
        }
        for page in self.pages.drain(..) {
            all.listing.push(page)?;
        }
        all.revisits += std::mem::take(&mut self.revisits);
        Ok(())
    }

    /// Drops what was gathered: it does not count.
    fn clear(&mut self) {
        *self = Part::default();
    }
}

/// The CDXJ line of `e`.
fn line_of(e: &IndexEntry) -> String {
    let mut line = String::new();
    format_line(e, IndexFormat::Cdxj, &mut line);
    line
}

/// Takes in what the export reads of one record: its page, and whether it is a revisit.
fn take(found: &mut Vec<PageEntry>, revisits: &mut u64, read: pages::MemberRead) {
    *revisits += u64::from(read.revisit);
    found.extend(read.page);
}

/// What a walker is told when the stretch it walked ahead is judged.
#[derive(Debug, Clone, Copy)]
enum Told {
    /// The stretch counts: walk the truth on from where it stopped.
    Truth,
    /// It does not: walk the stretch from this offset ahead.
    Next(u64),
    /// The container is walked.
    Over,
}

/// The stretch walked ahead.
#[derive(Debug, Clone, Copy)]
struct Ahead {
    walker: usize,
    /// Where the stretch starts (its start is looked for from there).
    from: u64,
    /// The member start guessed (`Some(None)`: none in the stretch), once looked for.
    start: Option<Option<u64>>,
}

/// Which walker does what.
struct Relay {
    /// Where the stretch after the one walked ahead starts.
    next: u64,
    ahead: Option<Ahead>,
    told: [Option<Told>; 2],
    /// The container is walked, or a walker failed.
    over: bool,
    walked: Walked,
}

/// What a walker does next.
enum Role {
    /// Walks the truth from this member start.
    Truth(u64),
    /// Walks the stretch from this offset ahead.
    Ahead(u64),
    Done,
}

/// One container's walk, shared by its walkers.
struct Walk<'a> {
    c: &'a plan::Container,
    len: u64,
    shared: &'a Arc<Shared>,
    limits: Limits,
    relay: Mutex<Relay>,
    changed: Condvar,
    all: &'a Mutex<Gathered>,
}

impl Walk<'_> {
    fn lock(&self) -> MutexGuard<'_, Relay> {
        self.relay.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, relay: MutexGuard<'a, Relay>) -> MutexGuard<'a, Relay> {
        self.changed.wait(relay).unwrap_or_else(PoisonError::into_inner)
    }

    /// A walker over the container's bytes as `shared` hands them on to walker `id`.
    fn walker(&self, id: usize) -> Result<Walker, WaczError> {
        let feed = self.shared.feed(id);
        let c = self.c;
        Ok(Walker::over_feed(feed, (&c.path, self.len), &c.name, OPTIONS, self.limits.max_whole)?)
    }
}

/// Walks the container `c` (`len` bytes, as `shared` hands them on) into `all`: by two
/// walkers when it holds two stretches or more.
pub(super) fn walk_container(
    c: &plan::Container,
    len: u64,
    shared: &Arc<Shared>,
    all: &Mutex<Gathered>,
    limits: Limits,
) -> Result<Walked, WaczError> {
    let two = len >= 2 * limits.stretch;
    let ahead = two.then_some(Ahead { walker: 1, from: limits.stretch, start: None });
    let next = if two { 2 * limits.stretch } else { u64::MAX };
    let relay = Relay { next, ahead, told: [None, None], over: false, walked: Walked::default() };
    let walk =
        Walk { c, len, shared, limits, relay: Mutex::new(relay), changed: Condvar::new(), all };
    let walked = if two {
        std::thread::scope(|s| {
            let second = s.spawn(|| work(&walk, 1, Role::Ahead(limits.stretch)));
            let first = work(&walk, 0, Role::Truth(0));
            let second = second.join().map_err(|_| WaczError::Internal("a container's walker"));
            first.and(second.and_then(|r| r))
        })
    } else {
        shared.done(1);
        work(&walk, 0, Role::Truth(0))
    };
    shared.leave();
    walked?;
    Ok(walk.lock().walked)
}

/// Walker `id`'s work on the container, from `role` on.
fn work(walk: &Walk<'_>, id: usize, mut role: Role) -> Result<(), WaczError> {
    let mut part = Part::default();
    let result = walk.walker(id).and_then(|mut walker| {
        loop {
            role = match role {
                Role::Truth(at) => truth(walk, id, &mut walker, at, &mut part)?,
                Role::Ahead(from) => ahead(walk, id, &mut walker, from, &mut part)?,
                Role::Done => return Ok(()),
            };
        }
    });
    walk.shared.done(id);
    let Err(e) = result else { return Ok(()) };
    let mut relay = walk.lock();
    // The other walker failed first: this one met what its failure left (the bytes stopped).
    let first = !relay.over;
    relay.over = true;
    drop(relay);
    walk.changed.notify_all();
    walk.shared.leave();
    if first { Err(e) } else { Ok(()) }
}

/// Walks the truth from the member start `at` to the boundary the stretch walked ahead
/// is judged by (or the container's end); what walker `id` does next.
fn truth(
    walk: &Walk<'_>,
    id: usize,
    walker: &mut Walker,
    at: u64,
    part: &mut Part,
) -> Result<Role, WaczError> {
    let c = walk.c;
    // What was walked ahead from here on counts.
    part.flush(walk.all).map_err(io_err(c))?;
    let limit = walk.lock().ahead.map_or(u64::MAX, |a| a.from);
    let (end, stop) = walk_part(c, walker, (at, limit), part, true)?;
    if stop != Stop::Limit {
        finish_pair(walker, part).map_err(io_err(c))?;
        part.flush(walk.all).map_err(io_err(c))?;
        let mut relay = walk.lock();
        relay.over = true;
        relay.told[1 - id] = Some(Told::Over);
        drop(relay);
        walk.changed.notify_all();
        return Ok(Role::Done);
    }
    part.flush(walk.all).map_err(io_err(c))?;
    // A request and its response on both sides of the boundary are paired by walking on.
    let across = walker.pairs_across(end).map_err(io_err(c))?;
    let mut relay = walk.lock();
    let ahead = loop {
        if relay.over {
            return Ok(Role::Done);
        }
        match relay.ahead {
            Some(ahead) if ahead.start.is_some() => break ahead,
            _ => relay = walk.wait(relay),
        }
    };
    let counts = ahead.start == Some(Some(end)) && !across && walk.shared.claim(ahead.walker);
    let role = if counts {
        finish_pair(walker, part).map_err(io_err(c))?;
        part.flush(walk.all).map_err(io_err(c))?;
        hand_on(walk, &mut relay, id)
    } else {
        walk_again(walk, &mut relay, id, end)
    };
    drop(relay);
    walk.changed.notify_all();
    Ok(role)
}

/// Hands on the entry of the last record walked: the records it could pair with are walked.
fn finish_pair(walker: &mut Walker, part: &mut Part) -> io::Result<()> {
    walker.pairer.finish(&mut |e| {
        part.push_line(&e);
        Ok(())
    })
}

/// The stretch walked ahead counts: its walker walks the truth on, and walker `id` the next
/// stretch ahead.
fn hand_on(walk: &Walk<'_>, relay: &mut Relay, id: usize) -> Role {
    relay.walked.kept += 1;
    relay.told[1 - id] = Some(Told::Truth);
    let from = relay.next;
    relay.next = from.saturating_add(walk.limits.stretch);
    if from >= walk.len {
        relay.ahead = None;
        return Role::Done;
    }
    relay.ahead = Some(Ahead { walker: id, from, start: None });
    Role::Ahead(from)
}

/// The stretch walked ahead does not count: walker `id` walks the truth on from `end`, the
/// other the next stretch ahead.
fn walk_again(walk: &Walk<'_>, relay: &mut Relay, id: usize, end: u64) -> Role {
    relay.walked.redone += 1;
    // Its bytes are kept until the other walker takes the stretch (from past those this
    // walker's reading ahead let go).
    let from = walk.shared.pin_from(relay.next.max(end + 1));
    relay.next = from.saturating_add(walk.limits.stretch);
    if from < walk.len {
        relay.ahead = Some(Ahead { walker: 1 - id, from, start: None });
        relay.told[1 - id] = Some(Told::Next(from));
    } else {
        walk.shared.pin(None);
        relay.ahead = None;
        relay.told[1 - id] = Some(Told::Over);
    }
    Role::Truth(end)
}

/// Walks the stretch from `from` ahead, from the member start guessed in it; what walker
/// `id` does once told whether it counts.
fn ahead(
    walk: &Walk<'_>,
    id: usize,
    walker: &mut Walker,
    from: u64,
    part: &mut Part,
) -> Result<Role, WaczError> {
    let c = walk.c;
    part.clear();
    walker.pairer = Pairer::default();
    let stretch = walk.limits.stretch;
    let guess = walker.guess_boundary_within(from, stretch).map_err(io_err(c))?;
    walk.shared.pin(None);
    let mut relay = walk.lock();
    if let Some(ahead) = relay.ahead.as_mut().filter(|a| a.walker == id && a.from == from) {
        ahead.start = Some(guess);
    }
    drop(relay);
    walk.changed.notify_all();
    let stopped = match guess {
        Some(start) => walk_part(c, walker, (start, from.saturating_add(stretch)), part, false)?.0,
        None => from,
    };
    let mut relay = walk.lock();
    // Waits without holding the copy back, unless already told (under the relay's lock, so
    // that the walker on the truth, claiming it, finds it waiting or already told).
    if relay.told[id].is_none() && !relay.over {
        walk.shared.wait_told(id);
    }
    let told = loop {
        if let Some(told) = relay.told[id].take() {
            break told;
        }
        if relay.over {
            break Told::Over;
        }
        relay = walk.wait(relay);
    };
    drop(relay);
    Ok(match told {
        Told::Truth => Role::Truth(stopped),
        Told::Next(next) => {
            walk.shared.take_stretch(id);
            Role::Ahead(next)
        }
        Told::Over => Role::Done,
    })
}

/// Walks the members of `c` from `start` up to the first boundary at or past `limit`, into
/// `into`: where it stopped, and why. A member the fast way does not take is streamed when
/// `stream_slow`, else ends the walk (a stretch walked ahead may start inside a payload: its
/// bytes are no records to stream).
fn walk_part(
    c: &plan::Container,
    walker: &mut Walker,
    (start, limit): (u64, u64),
    into: &mut Part,
    stream_slow: bool,
) -> Result<(u64, Stop), WaczError> {
    let mut at = start;
    loop {
        let (reached, stop) = walk_members(c, walker, (at, limit), into)?;
        if stop != Stop::Slow || !stream_slow {
            return Ok((reached, stop));
        }
        match stream_member(c, walker, reached, into)? {
            Some(next) if next > reached => at = next,
            _ => return Ok((walker.file_len(), Stop::End)),
        }
    }
}

/// Walks the members the fast way takes from `start`, up to the first boundary at or past
/// `limit`: each member inflated once, for its index line, its page and whether it is a
/// revisit.
fn walk_members(
    c: &plan::Container,
    walker: &mut Walker,
    (start, limit): (u64, u64),
    into: &mut Part,
) -> Result<(u64, Stop), WaczError> {
    let Part { lines, pages: found, revisits } = into;
    let mut emit = |e: IndexEntry| {
        lines.push(line_of(&e));
        Ok(())
    };
    let mut seen = |at: u64, member: &[u8]| {
        take(found, revisits, pages::read_member(member, at, &c.rel));
        Ok(())
    };
    Ok(walker.walk_seeing(start, limit, &mut emit, &mut seen)?)
}

/// Streams the member at `at` of `c`, one too large (or odd) to inflate whole, as `webaip
/// index` does, keeping of each record only the start its page is read from; where the
/// member ends (`None`: the file ended first).
fn stream_member(
    c: &plan::Container,
    walker: &mut Walker,
    at: u64,
    into: &mut Part,
) -> Result<Option<u64>, WaczError> {
    let Part { lines, pages: found, revisits } = into;
    let mut emit = |e: IndexEntry| {
        lines.push(line_of(&e));
        Ok(())
    };
    let mut seen = |offset: u64, head: &WarcRecordHead, block: &[u8]| {
        take(found, revisits, pages::read_streamed(head, block, offset, &c.rel));
        Ok(())
    };
    let start = BlockStart { bytes: pages::BLOCK_START, seen: &mut seen };
    Ok(walker.stream_member(at, &mut emit, Some(start))?)
}

/// An I/O failure reading the container `c`.
pub(super) fn io_err(c: &plan::Container) -> impl Fn(io::Error) -> WaczError + '_ {
    move |source| WaczError::Index(IndexError::Io { path: c.path.display().to_string(), source })
}
