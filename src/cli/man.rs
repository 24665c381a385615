//! `webaip man`: the manual pages, generated from the same clap definitions as `--help`:
//! `webaip.1` on standard output, or with `-o DIR` that and one page per subcommand
//! (`webaip-package.1`, `webaip-store-put.1`, ...) written into DIR.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_mangen::Man;

use super::Cli;

/// Arguments of `webaip man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Folder for webaip.1 and one page per subcommand (made if missing; pages already there
    /// are replaced). Without it, webaip.1 is printed on standard output.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Prints or writes the pages; returns the exit status.
pub fn run(args: ManArgs) -> anyhow::Result<i32> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let Some(dir) = args.out else {
        let page = render(&root)?;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&page).and_then(|()| stdout.flush()).context("standard output")?;
        return Ok(0);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot make it", dir.display()))?;
    write_pages(&root, &dir)?;
    Ok(0)
}

/// The page of `cmd` (a built command, so subcommands know their `webaip-...` names).
fn render(cmd: &clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut page = Vec::new();
    Man::new(cmd.clone()).render(&mut page).context("rendering a manual page")?;
    Ok(page)
}

/// Writes the page of `cmd` and of every visible subcommand below it into `dir`.
fn write_pages(cmd: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(Man::new(cmd.clone()).get_filename());
    write_whole(&path, &render(cmd)?).with_context(|| format!("{}", path.display()))?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        write_pages(sub, dir)?;
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed into place once
/// complete: a failed or killed run leaves the old page or none, never a short one.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".webaip-man-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
