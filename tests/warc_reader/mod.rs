//! The WARC reader on hostile framing, read in a child process whose memory is measured, and
//! on bytes between records, through the CLI. (Its reading of the corpus, against warcio, is
//! tested beside it, in src/formats/warc/reader/corpus_tests.rs.)

mod memory;
mod resync;
