//! `webaip reference` (hidden): the command reference, docs/reference.md, as Markdown
//! generated from the clap definitions, so it says what `--help` says and cannot drift
//! (scripts/gen-reference.sh rewrites the file; a test compares them).
//!
//! Written over `clap::Command` here rather than with clap-markdown: that crate fixes its own
//! layout (no grouping of options under their help headings, no links to the prose of
//! docs/commands.md), and what is needed is small.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Context;
use clap::builder::PossibleValue;
use clap::{Arg, ArgAction, Args, CommandFactory};

use super::Cli;

/// Arguments of `webaip reference`.
#[derive(Debug, Args)]
pub struct ReferenceArgs {}

/// Where docs/commands.md says more about a command: (command path, anchor there).
const DETAILS: &[(&str, &str)] = &[
    ("package", "webaip-package"),
    ("pages", "webaip-pages"),
    ("index", "webaip-index"),
    ("get", "webaip-get"),
    ("validate", "webaip-validate"),
    ("audit", "webaip-audit"),
    ("scan", "webaip-scan"),
    ("migrate", "webaip-migrate"),
    ("unmigrate", "webaip-unmigrate-and-audit---deep---rebuild-arcs"),
    ("ingest", "webaip-ingest"),
    ("batch", "webaip-batch"),
    ("store", "webaip-store"),
    (
        "dedup-table",
        "deduplication-package---dedup-against---dedup-within-webaip-dedup-table-webaip-undedup",
    ),
    (
        "undedup",
        "deduplication-package---dedup-against---dedup-within-webaip-dedup-table-webaip-undedup",
    ),
    ("export wacz", "webaip-export-wacz"),
    ("export eark", "webaip-export-eark"),
];

/// The heading of options that name none.
const DEFAULT_HEADING: &str = "Options";

/// Prints the reference; returns the exit status.
pub fn run(_args: ReferenceArgs) -> anyhow::Result<i32> {
    let text = markdown();
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).context("standard output")?;
    Ok(0)
}

/// The whole reference.
pub(crate) fn markdown() -> String {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut out = String::from(
        "<!-- Generated from the command definitions by scripts/gen-reference.sh \
         (`webaip reference`): do not edit by hand. -->\n\n# Command reference\n\n\
         Every `webaip` command with its arguments and options, as `webaip COMMAND --help` \
         prints them. What each command checks, writes and reports, and its limits, are in \
         [commands](commands.md); how the commands fit together, in the [user guide](guide.md).\n\n",
    );
    write_prose(&mut out, &root);
    let commands = visible_subcommands(&root);
    let links: Vec<String> =
        commands.iter().map(|c| format!("[{0}](#webaip-{0})", c.get_name())).collect();
    let _ = writeln!(out, "Commands: {}.\n", links.join(", "));
    write_options(&mut out, &root);
    write_after(&mut out, &root);
    for sub in commands {
        write_command(&mut out, sub, "", 2);
    }
    out
}

/// The subcommands shown in `--help`, in its order.
fn visible_subcommands(cmd: &clap::Command) -> Vec<&clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help").collect()
}

/// One command's section and those of its subcommands, a level down.
fn write_command(out: &mut String, cmd: &clap::Command, parent: &str, level: usize) {
    let path = format!("{parent}{}", cmd.get_name());
    let _ = writeln!(out, "{} `webaip {path}`\n", "#".repeat(level));
    write_prose(out, cmd);
    let usage = cmd.clone().render_usage().to_string();
    let _ = writeln!(out, "```text\n{}\n```\n", usage.trim_end());
    write_arguments(out, cmd);
    write_options(out, cmd);
    write_after(out, cmd);
    if let Some((_, anchor)) = DETAILS.iter().find(|(p, _)| *p == path) {
        let _ = writeln!(out, "More: [`webaip {path}` in commands](commands.md#{anchor}).\n");
    }
    for sub in visible_subcommands(cmd) {
        write_command(out, sub, &format!("{path} "), level + 1);
    }
}

/// The text `--help` ends with (a command's `--json` example), as it prints it.
fn write_after(out: &mut String, cmd: &clap::Command) {
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        let _ = writeln!(out, "```text\n{}\n```\n", after.to_string().trim_end());
    }
}

/// The long description, else the short one.
fn write_prose(out: &mut String, cmd: &clap::Command) {
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(out, "{}\n", about.to_string().trim_end());
    }
}

/// The positional arguments.
fn write_arguments(out: &mut String, cmd: &clap::Command) {
    let positionals: Vec<&Arg> = cmd.get_positionals().filter(|a| !a.is_hide_set()).collect();
    if positionals.is_empty() {
        return;
    }
    out.push_str("**Arguments**\n\n");
    for arg in positionals {
        let names =
            arg.get_value_names().map(|n| n.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>());
        let name = names.map_or_else(|| format!("<{}>", arg.get_id()), |n| n.join(" "));
        let many = matches!(arg.get_num_args(), Some(r) if r.max_values() > 1);
        write_item(out, &format!("{name}{}", if many { "..." } else { "" }), arg);
    }
    out.push('\n');
}

/// The options, grouped under their help headings in the order they first appear.
fn write_options(out: &mut String, cmd: &clap::Command) {
    let options: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .filter(|a| {
            !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
        })
        .collect();
    let mut headings: Vec<&str> = Vec::new();
    for arg in &options {
        let heading = arg.get_help_heading().unwrap_or(DEFAULT_HEADING);
        if !headings.contains(&heading) {
            headings.push(heading);
        }
    }
    for heading in headings {
        let _ = writeln!(out, "**{heading}**\n");
        let under =
            options.iter().filter(|a| a.get_help_heading().unwrap_or(DEFAULT_HEADING) == heading);
        for arg in under {
            write_item(out, &flag_name(arg), arg);
        }
        out.push('\n');
    }
}

/// `-o, --out <DIR>`.
fn flag_name(arg: &Arg) -> String {
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    let mut name = names.join(", ");
    if arg.get_action().takes_values() {
        let values = arg.get_value_names().map(|n| n.to_vec()).unwrap_or_default();
        let values = match values.is_empty() {
            true => vec![arg.get_id().as_str().to_uppercase()],
            false => values.iter().map(|v| v.to_string()).collect(),
        };
        for value in values {
            let _ = write!(name, " <{value}>");
        }
    }
    name
}

/// One list item: the name in code, then what the help says, whether it is required, its
/// default, its environment variable and its possible values.
fn write_item(out: &mut String, name: &str, arg: &Arg) {
    let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
    let mut item = format!("- `{name}`");
    if arg.is_required_set() {
        item.push_str(" (required)");
    }
    if !help.trim().is_empty() {
        let _ = write!(item, ": {}", indent(help.trim()));
    }
    let defaults: Vec<String> =
        arg.get_default_values().iter().map(|v| format!("`{}`", v.to_string_lossy())).collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        let _ = write!(item, " [default: {}]", defaults.join(", "));
    }
    if let Some(env) = arg.get_env() {
        let _ = write!(item, " [env: `{}`]", env.to_string_lossy());
    }
    let values: Vec<PossibleValue> =
        arg.get_possible_values().into_iter().filter(|v| !v.is_hide_set()).collect();
    if !values.is_empty() && arg.get_action().takes_values() {
        let listed: Vec<String> = values.iter().map(possible_value).collect();
        let _ = write!(item, " [possible values: {}]", listed.join("; "));
    }
    let _ = writeln!(out, "{item}");
}

/// `` `full` `` or `` `full` (every record) ``.
fn possible_value(value: &PossibleValue) -> String {
    match value.get_help() {
        Some(help) => {
            format!("`{}` ({})", value.get_name(), help.to_string().trim_end_matches('.'))
        }
        None => format!("`{}`", value.get_name()),
    }
}

/// Help text of several lines, continued inside its list item.
fn indent(text: &str) -> String {
    text.lines()
        .map(|l| if l.is_empty() { String::new() } else { l.to_owned() })
        .collect::<Vec<_>>()
        .join("\n  ")
        .replace("\n  \n", "\n\n")
}
