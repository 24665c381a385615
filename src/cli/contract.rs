//! The command-line contract every subcommand keeps (written down in docs/guide.md):
//! `-o/--out` names every output, `--json` prints one JSON object, `-q/--quiet` prints nothing
//! on success but errors and the command's product, a short letter means one long option
//! everywhere. Old spellings keep working for one release: they are rewritten here, before
//! clap sees them, with a deprecation line on stderr, so `--help` shows only the current ones.

use std::ffi::OsString;

/// An option renamed by the contract, still accepted for one release.
pub(crate) struct Renamed {
    /// The subcommand path it belongs to (`["store", "get"]`); the rename applies only there.
    pub command: &'static [&'static str],
    /// The old spelling, `--output`.
    pub old: &'static str,
    /// The spelling that replaces it, `--out`.
    pub new: &'static str,
}

/// Every old spelling still accepted. A row names one subcommand path; a command keeps the row
/// until the release after the one that renamed it.
pub(crate) const RENAMED: &[Renamed] = &[
    Renamed { command: &["store", "get"], old: "--to", new: "--out" },
    Renamed { command: &["index"], old: "--output", new: "--out" },
    Renamed { command: &["get"], old: "--output", new: "--out" },
];

/// The command line with every old spelling replaced by its new one, and one deprecation line
/// per replacement for stderr.
pub(crate) struct Rewritten {
    pub args: Vec<OsString>,
    pub warnings: Vec<String>,
}

/// Rewrites old spellings in `args` (the whole command line, program name first).
pub(crate) fn rewrite_old_spellings(args: Vec<OsString>, renamed: &[Renamed]) -> Rewritten {
    let path = command_path(&args);
    let mut warnings = Vec::new();
    let mut out = Vec::with_capacity(args.len());
    let mut after_separator = false;
    for arg in args {
        let text = arg.to_str().map(str::to_owned);
        match text {
            Some(t) if !after_separator && t == "--" => {
                after_separator = true;
                out.push(arg);
            }
            Some(t) if !after_separator => match renamed_arg(&t, &path, renamed) {
                Some((new_arg, rename)) => {
                    warnings.push(format!(
                        "webaip: warning: `{}` is deprecated and will be removed; use `{}`",
                        rename.old, rename.new
                    ));
                    out.push(OsString::from(new_arg));
                }
                None => out.push(arg),
            },
            _ => out.push(arg),
        }
    }
    Rewritten { args: out, warnings }
}

/// The subcommand words, found by walking the command tree: a group's options may come
/// before its subcommand (`store --config C get`).
fn command_path(args: &[OsString]) -> Vec<String> {
    use clap::CommandFactory;
    let mut at = super::Cli::command();
    let mut path = Vec::new();
    for word in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if word == "--" || !at.has_subcommands() {
            break;
        }
        if let Some(sub) = at.find_subcommand(word).cloned() {
            path.push(sub.get_name().to_owned());
            at = sub;
        }
    }
    path
}

/// The new spelling of `arg` (with any `=value` kept) when it is an old one on this path.
fn renamed_arg<'r>(
    arg: &str,
    path: &[String],
    renamed: &'r [Renamed],
) -> Option<(String, &'r Renamed)> {
    renamed.iter().find_map(|rename| {
        let on_path = path.len() >= rename.command.len()
            && rename.command.iter().zip(path).all(|(want, have)| want == have);
        if !on_path {
            return None;
        }
        if arg == rename.old {
            return Some((rename.new.to_owned(), rename));
        }
        let value = arg.strip_prefix(rename.old)?.strip_prefix('=')?;
        Some((format!("{}={value}", rename.new), rename))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;
    use std::collections::BTreeMap;

    /// Every leaf subcommand with its space-separated path (`store put`).
    fn leaves() -> Vec<(String, clap::Command)> {
        fn walk(prefix: &str, cmd: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                let path = format!("{prefix}{}", sub.get_name()).trim().to_owned();
                match sub.has_subcommands() {
                    true => walk(&format!("{path} "), sub, out),
                    false => out.push((path, sub.clone())),
                }
            }
        }
        let mut out = Vec::new();
        let mut cli = Cli::command();
        cli.build();
        walk("", &cli, &mut out);
        out
    }

    /// Commands whose only output is their product on standard output or in `-o`'s folder (a
    /// completion script, manual pages, the Markdown reference): no report to put in JSON,
    /// nothing to quieten.
    const PRODUCT_ONLY: &[&str] = &["completions", "man", "reference"];

    #[test]
    fn every_command_has_json_and_quiet() {
        let mut broken = Vec::new();
        let leaves = leaves().into_iter().filter(|(p, _)| !PRODUCT_ONLY.contains(&p.as_str()));
        for (path, cmd) in leaves {
            let json = cmd.get_arguments().any(|a| a.get_long() == Some("json"));
            let quiet = cmd
                .get_arguments()
                .any(|a| a.get_long() == Some("quiet") && a.get_short() == Some('q'));
            if !json || !quiet {
                broken.push(format!("{path}: --json {json}, -q/--quiet {quiet}"));
            }
        }
        assert!(broken.is_empty(), "{broken:#?}");
    }

    #[test]
    fn every_output_is_dash_o_out() {
        let mut broken = Vec::new();
        for (path, cmd) in leaves() {
            for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                let long = arg.get_long().unwrap_or_default();
                if matches!(long, "output" | "to" | "out-dir" | "output-dir") {
                    broken.push(format!(
                        "{path}: --{long} names an output; the contract says -o/--out"
                    ));
                }
                if long == "out" && arg.get_short() != Some('o') {
                    broken.push(format!("{path}: --out has no -o"));
                }
            }
        }
        assert!(broken.is_empty(), "{broken:#?}");
    }

    #[test]
    fn a_short_letter_means_one_long_option_everywhere() {
        let mut meaning: BTreeMap<char, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for (path, cmd) in leaves() {
            for arg in cmd.get_arguments() {
                if let (Some(short), Some(long)) = (arg.get_short(), arg.get_long()) {
                    let users = meaning.entry(short).or_default().entry(long.to_owned());
                    users.or_default().push(path.clone());
                }
            }
        }
        let clashes: Vec<_> = meaning.iter().filter(|(_, longs)| longs.len() > 1).collect();
        assert!(clashes.is_empty(), "{clashes:#?}");
    }

    #[test]
    fn long_option_lists_are_grouped_under_headings() {
        let mut broken = Vec::new();
        for (path, cmd) in leaves() {
            let options: Vec<_> =
                cmd.get_arguments().filter(|a| !a.is_positional() && !a.is_hide_set()).collect();
            let headings: std::collections::BTreeSet<_> =
                options.iter().filter_map(|a| a.get_help_heading()).collect();
            if options.len() > 10 && headings.len() < 2 {
                broken.push(format!(
                    "{path}: {} options, {} headings",
                    options.len(),
                    headings.len()
                ));
            }
        }
        assert!(broken.is_empty(), "{broken:#?}");
    }

    #[test]
    fn every_renamed_row_names_a_command_and_its_new_option() {
        let leaves = leaves();
        for rename in RENAMED {
            let path = rename.command.join(" ");
            let (_, cmd) = leaves
                .iter()
                .find(|(p, _)| *p == path)
                .unwrap_or_else(|| panic!("{path} is not a command"));
            let new = rename.new.trim_start_matches("--");
            assert!(
                cmd.get_arguments().any(|a| a.get_long() == Some(new)),
                "{path} has no {}",
                rename.new
            );
        }
    }

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    const SAMPLE: &[Renamed] = &[Renamed { command: &["store", "get"], old: "--to", new: "--out" }];

    #[test]
    fn an_old_spelling_is_rewritten_only_on_its_command_with_a_warning() {
        let done = rewrite_old_spellings(os(&["webaip", "store", "get", "x", "--to", "d"]), SAMPLE);
        assert_eq!(done.args, os(&["webaip", "store", "get", "x", "--out", "d"]));
        assert_eq!(done.warnings.len(), 1);
        assert!(done.warnings[0].contains("`--to` is deprecated"), "{:?}", done.warnings);

        let joined = rewrite_old_spellings(os(&["webaip", "store", "get", "--to=d"]), SAMPLE);
        assert_eq!(joined.args, os(&["webaip", "store", "get", "--out=d"]));

        let other = rewrite_old_spellings(os(&["webaip", "store", "put", "--to", "d"]), SAMPLE);
        assert_eq!(other.args, os(&["webaip", "store", "put", "--to", "d"]));
        assert!(other.warnings.is_empty());

        let literal = rewrite_old_spellings(os(&["webaip", "store", "get", "--", "--to"]), SAMPLE);
        assert_eq!(literal.args, os(&["webaip", "store", "get", "--", "--to"]));
        let prefix = rewrite_old_spellings(os(&["webaip", "store", "get", "--tox"]), SAMPLE);
        assert_eq!(prefix.args, os(&["webaip", "store", "get", "--tox"]));

        // The group's own options may come before the subcommand.
        let grouped = os(&["webaip", "store", "--config", "c.toml", "get", "x", "--to", "d"]);
        let grouped = rewrite_old_spellings(grouped, SAMPLE);
        assert_eq!(grouped.args[6], "--out");
        // A value that spells a subcommand after the leaf is not one.
        let leaf = rewrite_old_spellings(os(&["webaip", "store", "put", "get", "--to"]), SAMPLE);
        assert!(leaf.warnings.is_empty(), "{:?}", leaf.warnings);
    }
}
