//! What a front end needs beside the calls: an I/O error in words, text made safe to print on
//! one line, and the identification signatures compiled ahead of the work.

pub use crate::formats::warc::header::escape_controls;
pub use crate::layout::{ConfineError, describe_io, refuse_nesting, refuse_output_in_input};

/// Compiles the PRONOM signatures built into webaip now, once for the process, instead of in
/// the first identification. A front end calls it on its main thread: compiled on a worker
/// thread, glibc grows that thread's arena a page at a time (thousands of system calls, a third
/// of a small package's run). An error is left for the identification to report.
pub fn prepare_identification() {
    let _ = crate::formats::droid::Signatures::shipped();
}
