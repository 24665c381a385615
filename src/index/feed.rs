//! A file's bytes handed on by the one reader of it (the WACZ export's copy into the ZIP) to
//! the walkers that index it, each taking them from its own offset on ([`Feed`]): the file is
//! read once for all.
//!
//! The bytes are held from the lowest offset a walker still needs. A walker at work holds the
//! copy back: the copy waits while it is a given number of bytes ahead of it, so memory stays
//! bounded whatever the file's size. A walker waiting to be told whether its stretch counts
//! keeps its bytes only while the copy is less than a further reach past them: past that it is
//! *dropped* ([`Shared::claim`] says so), and the walker holding the copy back goes on.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Walkers a file's bytes are handed on to.
pub const WALKERS: usize = 2;

/// Where one walker takes the bytes from.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// The first offset it still needs.
    at: u64,
    /// Waiting: it keeps its bytes but does not hold the copy back.
    waiting: bool,
    /// Its bytes were dropped while it waited.
    dropped: bool,
}

/// The bytes held and who needs them.
struct Held {
    /// Pieces as the copy read them, the first at offset `front`.
    pieces: VecDeque<Vec<u8>>,
    front: u64,
    /// Offset past the last byte handed on.
    end: u64,
    /// The copy is done: no more bytes come.
    closed: bool,
    /// The walkers are done: no more bytes are needed.
    left: bool,
    places: [Place; WALKERS],
    /// An offset whose bytes are kept for a stretch not yet taken.
    pin: u64,
    /// Pieces emptied, to be filled again.
    spare: Vec<Vec<u8>>,
}

impl Held {
    /// The lowest offset anyone keeps.
    fn kept(&self) -> u64 {
        self.places
            .iter()
            .filter(|p| !p.dropped)
            .map(|p| p.at)
            .min()
            .unwrap_or(u64::MAX)
            .min(self.pin)
    }

    /// The lowest offset a walker at work (or the pin) needs.
    fn working(&self) -> u64 {
        let at_work = self.places.iter().filter(|p| !p.waiting && !p.dropped).map(|p| p.at);
        at_work.min().unwrap_or(u64::MAX).min(self.pin)
    }

    /// Drops the waiting walkers the copy is `reach` bytes or more past.
    fn drop_far(&mut self, reach: u64) {
        let end = self.end;
        for p in self.places.iter_mut().filter(|p| p.waiting && !p.dropped) {
            if end.saturating_sub(p.at) >= reach {
                p.dropped = true;
            }
        }
    }

    /// Lets go of the pieces nobody keeps.
    fn trim(&mut self) {
        let kept = self.kept();
        while let Some(first) = self.pieces.front() {
            let next = self.front + first.len() as u64;
            if next > kept {
                break;
            }
            self.front = next;
            if let Some(piece) = self.pieces.pop_front()
                && self.spare.len() < 4
            {
                self.spare.push(piece);
            }
        }
    }
}

/// A file's bytes as its one reader hands them on, shared by the walkers ([`Feed`]).
pub struct Shared {
    held: Mutex<Held>,
    changed: Condvar,
    /// Most bytes the copy goes past a walker at work.
    ahead: u64,
    /// Bytes the copy goes past a waiting walker before it is dropped.
    reach: u64,
}

impl Shared {
    /// Bytes handed on from the file's start, the copy at most `ahead` bytes past a walker at
    /// work, and `reach` (more than `ahead`) past a waiting one before it is dropped. Every
    /// walker starts at offset 0.
    pub fn new(ahead: u64, reach: u64) -> Arc<Shared> {
        let place = Place { at: 0, waiting: false, dropped: false };
        let held = Held {
            pieces: VecDeque::new(),
            front: 0,
            end: 0,
            closed: false,
            left: false,
            places: [place; WALKERS],
            pin: u64::MAX,
            spare: Vec::new(),
        };
        Arc::new(Shared { held: Mutex::new(held), changed: Condvar::new(), ahead, reach })
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, held: MutexGuard<'a, Held>) -> MutexGuard<'a, Held> {
        self.changed.wait(held).unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands on the next bytes of the file, once the walkers at work are near enough: false
    /// when no walker needs more (they are done, or failed).
    pub fn push(&self, bytes: &[u8]) -> bool {
        let mut held = self.lock();
        loop {
            if held.left {
                return false;
            }
            held.drop_far(self.reach);
            if held.end.saturating_sub(held.working()) < self.ahead {
                break;
            }
            held = self.wait(held);
        }
        let mut piece = held.spare.pop().unwrap_or_default();
        piece.clear();
        piece.extend_from_slice(bytes);
        held.end += bytes.len() as u64;
        held.pieces.push_back(piece);
        held.trim();
        drop(held);
        self.changed.notify_all();
        true
    }

    /// The copy is done with the file (whole, or failed): walkers get what was handed on.
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    /// The walkers are done with the file: the copy hands on nothing more.
    pub fn leave(&self) {
        let mut held = self.lock();
        held.left = true;
        held.pieces.clear();
        drop(held);
        self.changed.notify_all();
    }

    /// Keeps the bytes from `at` on, or from the first still held if later, for a stretch a
    /// walker is yet to take: where they are kept from.
    pub fn pin_from(&self, at: u64) -> u64 {
        let mut held = self.lock();
        held.pin = at.max(held.front);
        held.pin
    }

    /// Keeps the bytes from `at` on for a stretch a walker is yet to take (`None`: lets go).
    pub fn pin(&self, at: Option<u64>) {
        let mut held = self.lock();
        held.pin = at.unwrap_or(u64::MAX);
        held.trim();
        drop(held);
        self.changed.notify_all();
    }

    /// Walker `walker` waits: it no longer holds the copy back, and its bytes may be dropped.
    pub fn wait_told(&self, walker: usize) {
        self.lock().places[walker].waiting = true;
        self.changed.notify_all();
    }

    /// Walker `walker`, told to take another stretch (whose bytes are pinned), works again:
    /// the bytes from its place on are kept again (what was dropped of them is gone).
    pub fn take_stretch(&self, walker: usize) {
        let mut held = self.lock();
        let front = held.front;
        let place = &mut held.places[walker];
        if place.dropped {
            place.at = place.at.max(front);
        }
        (place.waiting, place.dropped) = (false, false);
    }

    /// Walker `walker`, waiting, is to go on where it stopped: false when its bytes were
    /// dropped (it cannot), else it works again.
    pub fn claim(&self, walker: usize) -> bool {
        let mut held = self.lock();
        let place = &mut held.places[walker];
        if place.dropped {
            return false;
        }
        place.waiting = false;
        true
    }

    /// Walker `walker` needs nothing more of the file.
    pub fn done(&self, walker: usize) {
        let mut held = self.lock();
        held.places[walker] = Place { at: u64::MAX, waiting: false, dropped: false };
        held.trim();
        drop(held);
        self.changed.notify_all();
    }

    /// The bytes for walker `walker`, from the file's start.
    pub fn feed(self: &Arc<Shared>, walker: usize) -> Feed {
        Feed { shared: Arc::clone(self), walker, at: 0 }
    }
}

/// One walker's way to the bytes of a [`Shared`] file, read in order from an offset.
pub struct Feed {
    shared: Arc<Shared>,
    walker: usize,
    /// File offset of the next byte taken.
    at: u64,
}

impl Feed {
    /// Appends at most `more` bytes from the feed's offset to `buf`, waiting for the copy to
    /// hand them on: fewer only at the end of the bytes handed on.
    pub fn read_onto(&mut self, buf: &mut Vec<u8>, more: u64) -> io::Result<usize> {
        let shared = Arc::clone(&self.shared);
        let mut held = shared.lock();
        let mut n = 0u64;
        while n < more {
            if self.at < held.front {
                return Err(self.gone(held.front));
            }
            if held.left {
                break;
            }
            if self.at < held.end {
                let k = copy_out(&held, self.at, buf, more - n);
                if k == 0 {
                    return Err(self.gone(held.front));
                }
                (n, self.at) = (n + k, self.at + k);
                held.places[self.walker].at = self.at;
                held.trim();
                // The copy may be waiting for this walker to take on.
                shared.changed.notify_all();
                continue;
            }
            if held.closed || held.left {
                break;
            }
            held = shared.wait(held);
        }
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The feed's offset, `at` from now on; bytes behind it may be let go.
    pub fn seek(&mut self, at: u64) -> io::Result<()> {
        let shared = Arc::clone(&self.shared);
        let mut held = shared.lock();
        if at < held.front {
            return Err(self.gone(held.front));
        }
        self.at = at;
        let place = &mut held.places[self.walker];
        (place.at, place.dropped) = (at, false);
        held.trim();
        drop(held);
        shared.changed.notify_all();
        Ok(())
    }

    /// The fault of a walker going back to bytes let go (a fault of webaip's own).
    fn gone(&self, front: u64) -> io::Error {
        io::Error::other(format!(
            "offset {} wanted again, the bytes before {front} are gone: the file is read once",
            self.at
        ))
    }
}

/// Appends the held bytes from `at` (at most `most`) to `buf`: how many.
fn copy_out(held: &Held, at: u64, buf: &mut Vec<u8>, most: u64) -> u64 {
    let mut offset = held.front;
    let mut n = 0u64;
    for piece in &held.pieces {
        let piece_end = offset + piece.len() as u64;
        if piece_end > at + n && n < most {
            let from = usize::try_from(at + n - offset).unwrap_or(usize::MAX);
            let k = (piece.len() - from).min(usize::try_from(most - n).unwrap_or(usize::MAX));
            buf.extend_from_slice(&piece[from..from + k]);
            n += k as u64;
        }
        offset = piece_end;
    }
    n
}
