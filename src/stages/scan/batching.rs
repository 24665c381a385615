//! How payloads are gathered into batches for the scan: the one set of limits every path that
//! scans reads by (`package` of stored WARC records and of captures, `webaip scan`). A batch's
//! held payloads go to the engine together (scanned in parallel over pooled sessions, identical
//! ones once); a payload too large to hold is streamed to clamd on its own.

/// A stored record's payload up to this size is held in memory for the scan. The batch also
/// holds the record's stored (compressed) bytes until they are written, so a record costs up
/// to about twice its size; a larger payload is read again from the stored record (and one
/// that shares its gzip member with other records cannot be, and is not scanned:
/// [`super::Unscanned::SharedMember`]).
pub(crate) const HELD_PAYLOAD: u64 = 4 << 20;

/// A capture's payload up to this size is read into memory once: hashed, scanned and written
/// from there. A capture holds no stored bytes beside it, and reading it again means opening
/// its source file once per pass (hash, scan, write), so it is held up to a larger size than a
/// stored record's payload.
pub(crate) const HELD_CAPTURE: u64 = 16 << 20;

/// A batch is closed at this many items: enough for clamd's threads to work in parallel and
/// for the verdicts of identical payloads to be reused within it, few enough that the
/// per-item bookkeeping of a batch of tiny records stays small.
pub(crate) const BATCH_ITEMS: usize = 512;

/// ... or once it holds this many bytes (payloads held for the scan, and the stored bytes
/// waiting to be written): what bounds a run's memory whatever the sizes of its records. Two
/// batches are in flight when the scan overlaps writing.
pub(crate) const BATCH_BYTES: u64 = 16 << 20;

// A held payload never exceeds a batch's bytes on its own.
const _: () = assert!(HELD_PAYLOAD <= BATCH_BYTES && HELD_CAPTURE <= BATCH_BYTES);

/// Whether a batch holding `items` items and `bytes` bytes takes no more.
pub(crate) fn batch_full(items: usize, bytes: u64) -> bool {
    items >= BATCH_ITEMS || bytes >= BATCH_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_closes_at_either_bound() {
        assert!(!batch_full(0, 0));
        assert!(!batch_full(BATCH_ITEMS - 1, BATCH_BYTES - 1));
        assert!(batch_full(BATCH_ITEMS, 0));
        assert!(batch_full(1, BATCH_BYTES));
    }
}
