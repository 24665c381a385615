//! The `webaip` command: a thin layer over the library.

mod cli;

fn main() {
    // A closed stdout (`webaip audit ... | head`) ends the process quietly, as for other Unix
    // tools, instead of making `println!` panic: restore SIGPIPE's default, which Rust ignores.
    #[cfg(unix)]
    // SAFETY: called first thing, before any thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::main());
}
