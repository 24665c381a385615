//! Running part of a test in a child process of its own: the test binary runs itself with
//! `--exact NAME`, so the child's peak RSS (from `wait4`) and its limits (`RLIMIT_AS`) are its
//! own, not those of the tests running in parallel in this process.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Set in the child: the name of the test it must run the child part of.
pub const CHILD_ENV: &str = "WEBAIP_TEST_CHILD";

/// True in the child process started by [`run_child`] for the test `name`.
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD_ENV).is_ok_and(|v| v == name)
}

/// How a child ended.
pub struct ChildRun {
    /// Its exit status; `None` when it was killed for running past the deadline.
    pub status: Option<ExitStatus>,
    /// Its peak resident set size in bytes.
    pub peak_rss: u64,
    /// What it wrote to standard error.
    pub stderr: String,
}

/// Runs the test `name` (its full path, e.g. `fuzz::arc_reader`) in a child with `env`, an
/// address-space limit of `limit_as` bytes when given, and a deadline.
pub fn run_child(
    name: &str,
    env: &[(&str, String)],
    limit_as: Option<u64>,
    deadline: Duration,
    stderr_file: &Path,
) -> ChildRun {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--test-threads=1", "--nocapture", "--quiet"])
        .env(CHILD_ENV, name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr_file).expect("stderr file"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(limit) = limit_as {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls between fork and exec (setrlimit).
        unsafe {
            cmd.pre_exec(move || {
                let rl = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let child = cmd.spawn().expect("test binary runs");
    let (status, peak_rss) = wait_with_deadline(child, deadline);
    let stderr = std::fs::read_to_string(stderr_file).unwrap_or_default();
    ChildRun { status, peak_rss, stderr }
}

/// Waits for `child` (killing it at the deadline); returns its status and peak RSS.
fn wait_with_deadline(child: Child, deadline: Duration) -> (Option<ExitStatus>, u64) {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    let mut killed = false;
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 fills it for this pid.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if killed { 0 } else { libc::WNOHANG };
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if r == pid {
            // Linux reports ru_maxrss in KiB.
            let rss = usage.ru_maxrss as u64 * 1024;
            return ((!killed).then(|| ExitStatus::from_raw(status)), rss);
        }
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if started.elapsed() > deadline {
            // SAFETY: pid is our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
            continue;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
