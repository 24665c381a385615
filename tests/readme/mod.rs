//! The user documents stay true: the README's quick start and every command block of the
//! guide run top to bottom on the committed samples with the built binary and make packages
//! `webaip validate` calls VALID; every
//! relative link of README.md and docs/*.md reaches a file and heading that exist; every
//! profile rule they cite (P5.3) is a heading of docs/profile.md; and none of them names an
//! internal issue or a folder beside the repository.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

use crate::util::{WEBAIP, copy_tree, repo, samples, webaip};

/// Settings a quick-start command must not take from the test's environment.
const ENVIRONMENT_SETTINGS: [&str; 3] = ["WEBAIP_SCHEMAS", "WEBAIP_CLAMD", "WEBAIP_STORE_CONFIG"];

/// A command (or a block of commands, run as one script) of a user document, with the line
/// it starts on.
struct DocCommand {
    file: &'static str,
    line: usize,
    text: String,
}

/// The commands of the fenced block that follows `marker` in README.md: comment lines left
/// out, lines ending in `\` joined to the next.
fn quick_start(marker: &str) -> Vec<DocCommand> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == marker)
        .unwrap_or_else(|| panic!("README.md has no {marker} line"));
    assert!(lines[at + 1].starts_with("```"), "{marker} is not followed by a fenced block");
    let mut commands = Vec::new();
    let mut pending: Option<DocCommand> = None;
    for (i, line) in lines.iter().enumerate().skip(at + 2) {
        if line.starts_with("```") {
            break;
        }
        let t = line.trim();
        if pending.is_none() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        let cmd = pending.get_or_insert(DocCommand {
            file: "README.md",
            line: i + 1,
            text: String::new(),
        });
        match t.strip_suffix('\\') {
            Some(part) => cmd.text.push_str(part),
            None => {
                cmd.text.push_str(t);
                commands.extend(pending.take());
            }
        }
    }
    assert!(!commands.is_empty(), "the {marker} block holds no command");
    commands
}

/// Every `sh` block of docs/guide.md, in order, but those a `<!-- not run: WHY -->` line
/// precedes, each run as one script.
fn guide_blocks() -> Vec<DocCommand> {
    let guide = std::fs::read_to_string(repo().join("docs/guide.md")).unwrap();
    let lines: Vec<&str> = guide.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "```sh" {
            let end = i + 1 + lines[i + 1..].iter().position(|l| l.starts_with("```")).unwrap();
            if !(i > 0 && lines[i - 1].starts_with("<!-- not run:")) {
                let text = lines[i + 1..end].join("\n");
                blocks.push(DocCommand { file: "docs/guide.md", line: i + 2, text });
            }
            i = end;
        }
        i += 1;
    }
    blocks
}

/// A scratch folder holding a copy of the samples, as the README's set-up line makes it.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&samples(), &dir.path().join("samples"));
    dir
}

/// Runs each command with bash in `dir` (stopping at the first that fails, inside a block
/// too), `webaip` being the built binary; each must exit 0.
fn run_all(dir: &Path, commands: &[DocCommand], clamd: Option<&str>) {
    let bin = Path::new(WEBAIP).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    for c in commands {
        let mut cmd = Command::new("bash");
        cmd.args(["-euo", "pipefail", "-c"]).arg(&c.text).current_dir(dir).env("PATH", &path);
        for name in ENVIRONMENT_SETTINGS {
            cmd.env_remove(name);
        }
        if let Some(addr) = clamd {
            cmd.env("WEBAIP_CLAMD", addr);
        }
        let o = cmd.output().expect("bash runs");
        assert!(
            o.status.success(),
            "{}:{}: `{}` exited {:?}\n{}{}",
            c.file,
            c.line,
            c.text,
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Every METS.xml the commands made in `dir` (the samples' copy aside).
fn packages_made(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.path() != dir.join("samples"))
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.file_name().is_some_and(|n| n == "METS.xml"))
        .collect();
    found.sort();
    found
}

/// Each METS is VALID by `webaip validate`.
fn assert_valid(mets: &[PathBuf]) {
    for m in mets {
        let o = webaip(&["validate", &m.display().to_string()]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && out.contains(": VALID"),
            "{} is not VALID:\n{out}{}",
            m.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn the_quick_start_runs_top_to_bottom_and_its_packages_are_valid() {
    let dir = scratch();
    run_all(dir.path(), &quick_start("<!-- quick-start -->"), None);
    let mets = packages_made(dir.path());
    // The package, its AIP, and one package per sample shape from the batch.
    let names: Vec<String> = mets
        .iter()
        .map(|m| m.parent().unwrap().strip_prefix(dir.path()).unwrap().display().to_string())
        .collect();
    for expected in ["pkg", "aips/pkg", "packages/heritrix-job", "packages/nedlib"] {
        assert!(names.iter().any(|n| n == expected), "no package at {expected}: {names:?}");
    }
    assert_eq!(mets.len(), 7, "{names:?}");
    assert_valid(&mets);
}

#[test]
fn the_quick_start_with_clamd_runs_where_a_clamd_can_start() {
    if !Path::new("/usr/sbin/clamd").exists() {
        eprintln!("no clamd in this environment: the quick start's clamd block is not run");
        return;
    }
    let d = crate::scan::daemon("main", 3321, "2000M");
    let dir = scratch();
    run_all(dir.path(), &quick_start("<!-- quick-start-clamd -->"), Some(&d.addr));
    let mets = packages_made(dir.path());
    assert_eq!(mets.len(), 1, "{mets:?}");
    let text = std::fs::read_to_string(&mets[0]).unwrap();
    assert!(text.contains("no virus detected"), "the package records no virus check");
    assert_valid(&mets);
}

#[test]
fn every_command_block_of_the_guide_runs_in_order_and_its_packages_are_valid() {
    if !Path::new("/usr/sbin/clamd").exists() {
        eprintln!("no clamd in this environment: the guide, which scans, is not run");
        return;
    }
    let blocks = guide_blocks();
    assert!(blocks.len() >= 10, "{} blocks", blocks.len());
    let d = crate::scan::daemon("main", 3321, "2000M");
    let dir = scratch();
    run_all(dir.path(), &blocks, Some(&d.addr));
    let mets = packages_made(dir.path());
    let made = |rel: &str| mets.iter().any(|m| m.parent().unwrap() == dir.path().join(rel));
    for rel in ["sip/site-2024", "sip/site-2025", "aip/site-2024", "back", "packages/heritrix-job"]
    {
        assert!(made(rel), "no package at {rel}: {mets:?}");
    }
    assert_valid(&mets);
}

/// README.md and every docs/*.md, with their text.
fn user_documents() -> Vec<(PathBuf, String)> {
    let mut docs = vec![repo().join("README.md")];
    for e in std::fs::read_dir(repo().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    docs.sort();
    docs.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// The text outside fenced code blocks and inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    Regex::new("`[^`\n]*`").unwrap().replace_all(&out, "").into_owned()
}

/// The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as
/// hyphens, a repeated anchor numbered.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !fenced) else { continue };
        let title = title.trim_start_matches('#').trim();
        let base: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

#[test]
fn every_relative_link_of_the_user_documents_reaches_a_file_and_heading() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    for (doc, text) in user_documents() {
        for m in link.captures_iter(&prose(&text)) {
            let target = &m[1];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let path = if file.is_empty() { doc.clone() } else { doc.parent().unwrap().join(file) };
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", doc.display()));
            } else if !anchor.is_empty() {
                let heads = anchors(&std::fs::read_to_string(&path).unwrap());
                if !heads.contains(anchor) {
                    broken.push(format!("{}: {target}: no such heading", doc.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_profile_rule_the_documents_cite_is_a_heading_of_the_profile() {
    let profile = std::fs::read_to_string(repo().join("docs/profile.md")).unwrap();
    let heading = Regex::new(r"(?m)^#+ (P\d+(?:\.\d+)?)\b").unwrap();
    let rules: HashSet<String> =
        heading.captures_iter(&profile).map(|c| c[1].to_string()).collect();
    assert!(rules.contains("P5.3") && rules.contains("P8"), "{rules:?}");
    let cited = Regex::new(r"(?:^|[^A-Za-z0-9_/.-])(P\d+(?:\.\d+)?)\b").unwrap();
    let mut missing = Vec::new();
    for (doc, text) in user_documents() {
        for c in cited.captures_iter(&text) {
            if !rules.contains(&c[1]) {
                missing.push(format!("{}: {}", doc.display(), &c[1]));
            }
        }
    }
    assert!(missing.is_empty(), "rules cited but not in docs/profile.md:\n{}", missing.join("\n"));
}

#[test]
fn no_user_document_names_an_issue_or_a_folder_beside_the_repository() {
    let internal = Regex::new(r"(?i)\bissues? #?\d|(?:^|\s)#\d|\.\./shared").unwrap();
    let mut found = Vec::new();
    for (doc, text) in user_documents() {
        for (i, line) in text.lines().enumerate() {
            if let Some(m) = internal.find(line) {
                found.push(format!("{}:{}: {}", doc.display(), i + 1, m.as_str().trim()));
            }
        }
    }
    assert!(found.is_empty(), "internal references in user documents:\n{}", found.join("\n"));
}
