//! `webaip completions SHELL`: the shell's completion script, generated from the same clap
//! definitions as `--help`, on standard output.

use std::io::Write;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;

/// Arguments of `webaip completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    shell: Shell,
}

/// Prints the script; returns the exit status.
pub fn run(args: CompletionsArgs) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    // Written to memory first: the generator panics on a failed write, stdout says why.
    clap_complete::generate(args.shell, &mut visible_commands(), "webaip", &mut script);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&script).and_then(|()| stdout.flush()).context("standard output")?;
    Ok(0)
}

/// The command line without its hidden subcommands, which some generators (bash) would offer.
fn visible_commands() -> clap::Command {
    let all = Cli::command();
    let visible: Vec<clap::Command> =
        all.get_subcommands().filter(|s| !s.is_hide_set()).cloned().collect();
    clap::Command::new("webaip")
        .version(super::short_version())
        .propagate_version(true)
        .subcommands(visible)
}
