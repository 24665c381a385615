//! A file a ZIP is written to, cut off at its first error (a full disk) or when its writer is
//! abandoned: from then on every write and seek succeeds without touching the file (removed
//! anyway), so the zip crate's drop, which finalises the archive again and prints any error of
//! that to standard error, has nothing to fail on and prints nothing. The first error is the
//! one returned.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The file, buffered, and whether it is cut off.
pub(crate) struct Severable {
    file: BufWriter<File>,
    cut: Arc<AtomicBool>,
    /// Where the next byte goes, and the furthest one went: counted all along, so the
    /// archive's arithmetic still adds up once the writes go nowhere.
    pos: u64,
    end: u64,
}

/// Cuts a [`Severable`] off from outside (its owner, when dropped unfinished).
#[derive(Clone)]
pub(crate) struct Cut(Arc<AtomicBool>);

impl Cut {
    /// From now on the file is not touched.
    pub(crate) fn now(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Severable {
    /// Writes to `file` (at its start), through a buffer; the handle that cuts it off.
    pub(crate) fn new(file: File) -> (Severable, Cut) {
        let cut = Arc::new(AtomicBool::new(false));
        let file = BufWriter::new(file);
        (Severable { file, cut: cut.clone(), pos: 0, end: 0 }, Cut(cut))
    }

    /// The file, its buffer written out.
    pub(crate) fn into_file(self) -> io::Result<File> {
        self.file.into_inner().map_err(|e| e.into_error())
    }

    fn is_cut(&self) -> bool {
        self.cut.load(Ordering::Relaxed)
    }

    /// `r`, the file cut off when it is an error.
    fn cut_on_error<T>(&self, r: io::Result<T>) -> io::Result<T> {
        if r.is_err() {
            self.cut.store(true, Ordering::Relaxed);
        }
        r
    }

    fn moved_to(&mut self, pos: u64) {
        self.pos = pos;
        self.end = self.end.max(pos);
    }
}

impl Write for Severable {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = match self.is_cut() {
            true => buf.len(),
            false => {
                let r = self.file.write(buf);
                self.cut_on_error(r)?
            }
        };
        self.moved_to(self.pos + n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.is_cut() {
            return Ok(());
        }
        let r = self.file.flush();
        self.cut_on_error(r)
    }
}

impl Seek for Severable {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match (self.is_cut(), to) {
            (false, to) => {
                let r = self.file.seek(to);
                self.cut_on_error(r)?
            }
            (true, SeekFrom::Start(n)) => n,
            (true, SeekFrom::Current(d)) => self.pos.saturating_add_signed(d),
            (true, SeekFrom::End(d)) => self.end.saturating_add_signed(d),
        };
        self.moved_to(pos);
        Ok(pos)
    }
}
