//! Running part of a test, or the CLI, in a child process of its own, with its own limits
//! (`RLIMIT_AS`), a deadline, and its own peak RSS.
//!
//! Peak RSS needs care: Linux carries the RSS high-water mark of the process that calls
//! `exec` into the new program's `ru_maxrss`, and a child forked (or vforked) straight from
//! this test process starts from the test process's own high-water mark, which the other
//! tests running in parallel make large. So the command is started by a launcher: this test
//! binary run afresh (small, its own address space after `exec`), which forks the command,
//! waits for it with `wait4` and writes the command's status and `ru_maxrss` to a file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child: the name of the test it must run the child part of.
pub const CHILD_ENV: &str = "WEBAIP_TEST_CHILD";
const LAUNCH_ENV: &str = "WEBAIP_TEST_LAUNCH";
const LAUNCH_RESULT_ENV: &str = "WEBAIP_TEST_LAUNCH_RESULT";
const LAUNCH_AS_ENV: &str = "WEBAIP_TEST_LAUNCH_AS";
const LAUNCH_DEADLINE_ENV: &str = "WEBAIP_TEST_LAUNCH_DEADLINE";

/// True in the child process started by [`run_child`] for the test `name`.
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD_ENV).is_ok_and(|v| v == name)
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it (an abort on a failed allocation under `RLIMIT_AS`, a crash).
    Signalled(i32),
    /// It was killed at the deadline.
    TimedOut,
}

impl Outcome {
    /// True for exit code 0.
    pub fn success(self) -> bool {
        self == Outcome::Exited(0)
    }
}

/// How a command ended, its peak RSS, what it wrote to standard error.
pub struct ChildRun {
    pub status: Outcome,
    /// Peak resident set size in bytes.
    pub peak_rss: u64,
    pub stderr: String,
}

/// Runs the test `name` (its full path, e.g. `fuzz::harness::arc_reader`) in a child with
/// `env` (and [`CHILD_ENV`] set), an address-space limit when given, and a deadline.
pub fn run_child(
    name: &str,
    env: &[(&str, String)],
    limit_as: Option<u64>,
    deadline: Duration,
    stderr_file: &Path,
) -> ChildRun {
    let exe = std::env::current_exe().expect("test binary path").display().to_string();
    let argv: Vec<String> =
        [exe.as_str(), name, "--exact", "--test-threads=1", "--nocapture", "--quiet"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let mut env = env.to_vec();
    env.push((CHILD_ENV, name.to_string()));
    launch(&argv, &env, limit_as, deadline, stderr_file)
}

/// Runs `argv` through the launcher; see the module documentation.
pub fn launch(
    argv: &[String],
    env: &[(&str, String)],
    limit_as: Option<u64>,
    deadline: Duration,
    stderr_file: &Path,
) -> ChildRun {
    let exe = std::env::current_exe().expect("test binary path");
    let result = PathBuf::from(format!("{}.launch", stderr_file.display()));
    let mut cmd = Command::new(exe);
    cmd.args(["fuzz::child::launcher", "--exact", "--test-threads=1", "--nocapture", "--quiet"])
        .env(LAUNCH_ENV, serde_json::to_string(argv).unwrap())
        .env(LAUNCH_RESULT_ENV, &result)
        .env(LAUNCH_DEADLINE_ENV, deadline.as_secs().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr_file).expect("stderr file"));
    if let Some(limit) = limit_as {
        cmd.env(LAUNCH_AS_ENV, limit.to_string());
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().expect("launcher runs");
    let stderr = std::fs::read_to_string(stderr_file).unwrap_or_default();
    let text = std::fs::read_to_string(&result)
        .unwrap_or_else(|_| panic!("launcher failed ({status}): {stderr}"));
    let mut fields = text.split_whitespace();
    let (kind, value, rss) = (fields.next(), fields.next(), fields.next());
    let value: i32 = value.and_then(|v| v.parse().ok()).unwrap_or(-1);
    let status = match kind {
        Some("exited") => Outcome::Exited(value),
        Some("signalled") => Outcome::Signalled(value),
        _ => Outcome::TimedOut,
    };
    let peak_rss = rss.and_then(|v| v.parse().ok()).unwrap_or(u64::MAX);
    ChildRun { status, peak_rss, stderr }
}

/// The launcher (a no-op unless started by [`launch`]): forks the command, applies the
/// address-space limit, enforces the deadline, and writes `exited|signalled|timeout CODE RSS`.
#[test]
fn launcher() {
    let Ok(spec) = std::env::var(LAUNCH_ENV) else { return };
    let argv: Vec<String> = serde_json::from_str(&spec).expect("argv as JSON");
    let result = std::env::var(LAUNCH_RESULT_ENV).expect("result file");
    let deadline: u64 =
        std::env::var(LAUNCH_DEADLINE_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(600);
    let limit: Option<u64> = std::env::var(LAUNCH_AS_ENV).ok().and_then(|v| v.parse().ok());
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).env_remove(LAUNCH_ENV).stdin(Stdio::null());
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls between fork and exec (setrlimit). Setting a
        // pre_exec hook also makes std fork rather than vfork.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(limit) = limit {
                    let rl = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                    if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
    // Reaped below by wait4, which std's `wait` would not give the rusage of.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("command starts");
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    let mut killed = false;
    let line = loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 fills it for this pid.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if killed { 0 } else { libc::WNOHANG };
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if r == pid {
            // Linux reports ru_maxrss in KiB.
            let rss = usage.ru_maxrss as u64 * 1024;
            break if killed {
                format!("timeout -1 {rss}")
            } else if libc::WIFEXITED(status) {
                format!("exited {} {rss}", libc::WEXITSTATUS(status))
            } else {
                format!("signalled {} {rss}", libc::WTERMSIG(status))
            };
        }
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if started.elapsed() > Duration::from_secs(deadline) {
            // SAFETY: pid is our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
            continue;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::write(result, line).expect("result written");
}

/// Runs the `webaip` binary with `args` through the launcher (no address-space limit, ten
/// minutes at most), its standard error kept in `dir/stderr`: for peak-RSS bounds of the CLI.
pub fn launch_webaip<A: AsRef<str>>(args: &[A], dir: &Path) -> ChildRun {
    launch_webaip_limited(args, dir, None, Duration::from_secs(600))
}

/// [`launch_webaip`] with an address-space limit (a run that reads without bound aborts
/// instead of filling the machine's memory) and a deadline (one that blocks is killed).
pub fn launch_webaip_limited<A: AsRef<str>>(
    args: &[A],
    dir: &Path,
    limit_as: Option<u64>,
    deadline: Duration,
) -> ChildRun {
    let argv: Vec<String> = std::iter::once(crate::util::WEBAIP)
        .chain(args.iter().map(AsRef::as_ref))
        .map(str::to_string)
        .collect();
    launch(&argv, &[], limit_as, deadline, &dir.join("stderr"))
}
