//! A progress bar on stderr when it is a terminal, silence otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A byte-counting progress bar; hidden when `quiet` or when stderr is not a terminal.
pub fn bytes_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// Runs `f` with a bar counting the bytes an audit reads (it announces them before reading
/// them); hidden when `quiet` or when stderr is not a terminal.
pub fn with_audit_bar<T>(
    quiet: bool,
    f: impl FnOnce(&(dyn Fn(webaip::AuditProgress) + Sync)) -> T,
) -> T {
    use webaip::AuditProgress;
    let bar = bytes_bar(0, quiet);
    let result = f(&|p| match p {
        AuditProgress::Planned(n) => bar.inc_length(n),
        AuditProgress::Done(n) => bar.inc(n),
    });
    bar.finish_and_clear();
    result
}

/// A batch's progress: items done, failed and left, bytes of their sources, throughput and
/// time left; hidden when `quiet` or when stderr is not a terminal.
pub struct BatchBar {
    bar: ProgressBar,
    counts: std::sync::Mutex<(usize, usize, usize)>,
}

/// A [`BatchBar`], its length set once the run knows what is left.
pub fn batch_bar(quiet: bool) -> BatchBar {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(0);
        bar.set_style(batch_style(false));
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        bar
    };
    BatchBar { bar, counts: std::sync::Mutex::new((0, 0, 0)) }
}

/// The batch bar's look; the time left only once an item has finished (the bytes move only
/// then, so before it indicatif's estimate would say 0 s).
fn batch_style(with_eta: bool) -> ProgressStyle {
    let eta = if with_eta { " ETA {eta}" } else { "" };
    ProgressStyle::with_template(&format!(
        "{{spinner}} [{{elapsed_precise}}] {{prefix}} {{wide_bar}} {{bytes}}/{{total_bytes}} \
         {{binary_bytes_per_sec}}{eta} {{msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl BatchBar {
    /// The run's items and their bytes.
    pub fn plan(&self, items: usize, bytes: u64) {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner()) = (0, 0, items);
        self.bar.set_length(bytes);
        self.bar.reset_eta();
        self.bar.set_prefix(format!("0 done, 0 failed, {items} left"));
    }

    /// An item finished (`done`, or failed) with `bytes` of source.
    pub fn finished(&self, done: bool, bytes: u64, key: &str) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if done {
            c.0 += 1
        } else {
            c.1 += 1
        }
        c.2 = c.2.saturating_sub(1);
        if c.0 + c.1 == 1 && !self.bar.is_hidden() {
            self.bar.set_style(batch_style(true));
        }
        self.bar.set_prefix(format!("{} done, {} failed, {} left", c.0, c.1, c.2));
        self.bar.inc(bytes);
        self.bar.set_message(format!("{} {key}", if done { "done" } else { "FAILED" }));
    }

    /// A line on stderr, above the bar when there is one.
    pub fn say(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar.
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }
}

/// Bytes for people: `1.5 GiB`, `256 MiB`, `12 KiB`, `100 B`.
pub fn size_text(bytes: u64) -> String {
    indicatif::BinaryBytes(bytes).to_string()
}
