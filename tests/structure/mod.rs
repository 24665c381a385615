//! The house's shape, checked on every run: no import cycle between source files, no
//! library function longer than [`MAX_FN_LINES`] lines beyond those listed in
//! `tests/structure/long_functions.txt` (each at most as long as listed: the list only
//! shrinks, and is empty now), at least 97 % of library functions at 50 lines or
//! fewer, and no `Result` whose error is text. Read from the text of `src/` alone,
//! comments, strings and test modules left out. And the tests, examples and benchmarks reach
//! the library through its crate root only (the harnesses through `webaip::internals`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::repo;

/// A function a reader can hold: longer ones are listed, and few.
const MAX_FN_LINES: usize = 100;
/// The length most functions keep to ...
const SHORT_FN_LINES: usize = 50;
/// ... as this share of them at least (ripgrep's shape: a function does one thing).
const MIN_SHORT_SHARE: f64 = 0.97;
/// How many may stay over [`MAX_FN_LINES`] (the list in long_functions.txt): none is left, so
/// none may come back.
const MAX_LONG_FNS: usize = 0;

/// The source with comments, string and char literals blanked (newlines kept), so braces and
/// paths inside them count for nothing.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend(bytes.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }))
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, 2);
            while j < rest.len() && depth > 0 {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if !prev_ident && (rest.starts_with(b"r\"") || rest.starts_with(b"r#")) {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| body + p + close.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'"' || (!prev_ident && rest.starts_with(b"b\"")) {
            let mut j = if rest[0] == b'"' { 1 } else { 2 };
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(4)]).ok())
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(3)]).ok())
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(2)]).ok())
                    .and_then(|s| s.chars().next());
                ch.map(char::len_utf8).filter(|&n| rest.get(1 + n) == Some(&b'\'')).map(|n| n + 2)
            };
            match len {
                Some(n) => {
                    blank(&mut out, &rest[..n]);
                    i += n;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The end of the block whose `{` is at `open` (code already free of strings and comments).
fn matching_brace(code: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in code.bytes().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The code with its `#[cfg(test)]` modules blanked: what tests import or define is no part of
/// the library's shape.
fn library_only(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    for (at, _) in code.match_indices("#[cfg(test)]") {
        let after = &code[at..];
        if let Some(m) = after.find("mod ")
            && after[..m].trim_start_matches("#[cfg(test)]").trim().is_empty()
            && let Some(open) = after[m..].find('{')
        {
            let end = matching_brace(code, at + m + open).min(out.len().saturating_sub(1));
            for b in &mut out[at..=end] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every `.rs` file under `src/`, by its module path (`crate::a::b`).
fn modules() -> BTreeMap<String, PathBuf> {
    let src = repo().join("src");
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let e = e.unwrap();
        let p = e.path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = p.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
            parts.pop();
        }
        if parts.first().map(String::as_str) == Some("main") || rel == Path::new("main") {
            continue;
        }
        let name = std::iter::once("crate".to_string()).chain(parts).collect::<Vec<_>>().join("::");
        out.insert(name, p.to_path_buf());
    }
    let tests: Vec<String> = out.iter().flat_map(|(m, p)| test_children(m, p)).collect();
    out.retain(|m, _| !tests.iter().any(|t| m == t || m.starts_with(&format!("{t}::"))));
    out
}

/// The modules `module` declares in files of their own under `#[cfg(test)]` (`mod tests;`):
/// unit tests, no part of the library's shape.
fn test_children(module: &str, path: &Path) -> Vec<String> {
    let code = code_only(&std::fs::read_to_string(path).unwrap());
    let mut out = Vec::new();
    for (at, _) in code.match_indices("#[cfg(test)]") {
        let after = code[at + "#[cfg(test)]".len()..].trim_start();
        let Some(rest) = after.strip_prefix("mod ") else { continue };
        let name: String =
            rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if rest[name.len()..].trim_start().starts_with(';') {
            out.push(format!("{module}::{name}"));
        }
    }
    out
}

/// The modules a file's code names through `crate::` or `super::` paths.
fn imports(module: &str, code: &str, known: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let parent: Vec<&str> = module.split("::").collect();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        for (at, _) in code.match_indices(start) {
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut segs: Vec<String> =
                path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
            if segs.first().map(String::as_str) == Some("super") {
                // `super` is the parent module (of `a/b.rs`, `a`; of `a/mod.rs`, the crate).
                let supers = segs.iter().take_while(|s| *s == "super").count();
                let base = &parent[..parent.len().saturating_sub(supers)];
                segs = base
                    .iter()
                    .map(|s| s.to_string())
                    .chain(segs.into_iter().skip(supers))
                    .collect();
            }
            // The longest prefix that is a module file.
            while !segs.is_empty() {
                let m = segs.join("::");
                if known.contains_key(&m) {
                    if m != module && m != "crate" {
                        out.insert(m);
                    }
                    break;
                }
                segs.pop();
            }
        }
    }
    out
}

/// The import graph's cycles (strongly connected components of more than one module).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then components on its reverse.
    fn visit<'a>(
        n: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<&'a str>,
        order: &mut Vec<&'a str>,
    ) {
        if !seen.insert(n) {
            return;
        }
        for m in g.get(n).into_iter().flatten() {
            visit(m, g, seen, order);
        }
        order.push(n);
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in graph.keys() {
        visit(n, graph, &mut seen, &mut order);
    }
    let mut reverse: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in graph {
        for b in bs {
            reverse.entry(b.clone()).or_default().insert(a.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for n in order.into_iter().rev() {
        let mut component = Vec::new();
        visit(n, &reverse, &mut assigned, &mut component);
        if component.len() > 1 {
            component.sort();
            out.push(component.into_iter().map(str::to_string).collect());
        }
    }
    out
}

/// Every function of the code: (name, first line, lines).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let line_of = {
        let mut starts = vec![0];
        starts.extend(code.match_indices('\n').map(|(i, _)| i + 1));
        move |at: usize| starts.partition_point(|&s| s <= at)
    };
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let name: String =
            code[at + 3..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` before any `;` (a trait method without a body).
        let sig_end = code[at..].find(['{', ';']).map(|p| at + p);
        let Some(open) = sig_end.filter(|&p| bytes[p] == b'{') else { continue };
        let close = matching_brace(code, open);
        let (first, last) = (line_of(at), line_of(close));
        out.push((name, first, last - first + 1));
    }
    out
}

fn listed_long_functions() -> BTreeMap<(String, String), usize> {
    let text = std::fs::read_to_string(repo().join("tests/structure/long_functions.txt")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "long_functions.txt: {l:?} is not `path function lines`");
            ((f[0].to_string(), f[1].to_string()), f[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn no_source_file_imports_itself_through_others() {
    let known = modules();
    let mut graph = BTreeMap::new();
    for (m, path) in &known {
        let code = library_only(&code_only(&std::fs::read_to_string(path).unwrap()));
        graph.insert(m.clone(), imports(m, &code, &known));
    }
    // The check sees real imports (so an empty graph cannot pass it).
    assert!(graph["crate::sources::pandas"].contains("crate::sources::capture"), "{graph:#?}");
    let found = cycles(&graph);
    assert!(found.is_empty(), "import cycles between source files: {found:#?}");
}

#[test]
fn no_library_function_is_longer_than_listed() {
    let listed = listed_long_functions();
    let mut long = BTreeMap::new();
    for path in modules().values() {
        let rel = path.strip_prefix(repo()).unwrap().to_string_lossy().into_owned();
        let code = library_only(&code_only(&std::fs::read_to_string(path).unwrap()));
        for (name, line, n) in functions(&code) {
            if n > MAX_FN_LINES {
                long.insert((rel.clone(), name), (line, n));
            }
        }
    }
    let mut wrong = Vec::new();
    for ((file, name), (line, n)) in &long {
        match listed.get(&(file.clone(), name.clone())) {
            None => wrong.push(format!("{file}:{line} {name}: {n} lines (over {MAX_FN_LINES})")),
            Some(&max) if *n > max => {
                wrong.push(format!("{file}:{line} {name}: {n} lines, listed at {max}"))
            }
            Some(_) => {}
        }
    }
    for ((file, name), max) in &listed {
        if !long.contains_key(&(file.clone(), name.clone())) {
            wrong.push(format!(
                "{file} {name} (listed at {max}) is no longer over {MAX_FN_LINES} lines: take it \
                 off tests/structure/long_functions.txt"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn library_functions_are_shaped_for_reading() {
    let mut lengths = Vec::new();
    for path in modules().values() {
        let code = library_only(&code_only(&std::fs::read_to_string(path).unwrap()));
        lengths.extend(functions(&code).into_iter().map(|(_, _, n)| n));
    }
    // The count sees the whole library (so an empty or truncated read cannot pass it).
    assert!(lengths.len() > 1000, "only {} functions found", lengths.len());
    let short = lengths.iter().filter(|&&n| n <= SHORT_FN_LINES).count();
    let share = short as f64 / lengths.len() as f64;
    assert!(
        share >= MIN_SHORT_SHARE,
        "{short} of {} library functions ({:.1} %) are at most {SHORT_FN_LINES} lines: at least \
         {:.0} % should be; split the longest along what they decide",
        lengths.len(),
        share * 100.0,
        MIN_SHORT_SHARE * 100.0
    );
    let listed = listed_long_functions().len();
    let beyond_cap = listed.saturating_sub(MAX_LONG_FNS);
    assert_eq!(beyond_cap, 0, "{listed} functions listed over {MAX_FN_LINES} lines");
}

/// The error type of every two-argument `Result<T, E>` written in `code`, with its line: the
/// arguments are split at the top level, so `Result<Vec<(A, B)>, E>` gives `E`, and
/// `io::Result<T>` gives nothing.
fn result_error_types(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        let b = code.as_bytes();
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let args = &code[at + "Result<".len()..];
        let (mut depth, mut last_comma, mut end) = (0i32, None, None);
        let mut prev = ' ';
        for (i, c) in args.char_indices() {
            match c {
                '>' if prev == '-' => {}
                '<' | '(' | '[' => depth += 1,
                '>' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => last_comma = Some(i),
                _ => {}
            }
            prev = c;
        }
        if let (Some(comma), Some(end)) = (last_comma, end) {
            let line = code[..at].matches('\n').count() + 1;
            out.push((line, args[comma + 1..end].trim().to_string()));
        }
    }
    out
}

#[test]
fn no_library_result_has_text_for_its_error() {
    let text = ["String", "&str", "&'static str", "Box<str>", "Vec<String>"];
    let mut seen = 0;
    let mut found = Vec::new();
    for path in modules().values() {
        let rel = path.strip_prefix(repo()).unwrap().to_string_lossy().into_owned();
        let code = library_only(&code_only(&std::fs::read_to_string(path).unwrap()));
        for (line, error) in result_error_types(&code) {
            seen += 1;
            if text.contains(&error.as_str()) {
                found.push(format!("{rel}:{line}: Result<_, {error}>"));
            }
        }
    }
    // The check reads real signatures (so a reading that finds none cannot pass it).
    assert!(seen > 100, "only {seen} Result<T, E> found in src/");
    assert!(found.is_empty(), "errors are typed enums, not text:\n{}", found.join("\n"));
}

#[test]
fn result_error_types_are_read_at_the_top_level_of_the_arguments() {
    let code = "fn a() -> Result<Vec<(u8, String)>, String> {}\n\
                fn b() -> io::Result<BTreeMap<String, String>> {}\n\
                fn c() -> Result<Box<dyn Fn(u8) -> u8>, StoreError> {}\n\
                let r: Result<DateTime<Utc>, String> = x;\n";
    assert_eq!(
        result_error_types(code),
        [(1, "String".to_string()), (3, "StoreError".to_string()), (4, "String".to_string())]
    );
}

#[test]
fn the_reading_of_code_skips_strings_comments_and_test_modules() {
    let src = "fn a() {\n    let s = \"}{ crate::x\";\n    // }\n    let c = '}';\n}\n\
               #[cfg(test)]\nmod tests {\n    fn b() {\n    }\n}\n";
    let code = library_only(&code_only(src));
    assert!(!code.contains("crate::x") && !code.contains("'}'"), "{code}");
    assert_eq!(functions(&code), vec![("a".to_string(), 1, 5)]);
}

/// The library's modules other than `internals`, as src/lib.rs declares them.
fn library_modules() -> BTreeSet<String> {
    let lib = code_only(&std::fs::read_to_string(repo().join("src/lib.rs")).unwrap());
    let declared = lib.lines().filter_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("pub mod ").or(l.strip_prefix("pub(crate) mod "))?;
        rest.strip_suffix(';').map(str::to_string)
    });
    declared.filter(|m| m != "internals").collect()
}

/// Every path of `code` that reaches into one of `modules` through `webaip::` (`webaip::mets`,
/// `webaip::mets::X`, `webaip::{mets::X, Y}`), with its line.
fn internal_paths(code: &str, modules: &BTreeSet<String>) -> Vec<(usize, String)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let ident = |s: &str| -> String {
        s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
    };
    let mut out = Vec::new();
    for (at, _) in code.match_indices("webaip::") {
        let prev = code[..at].chars().next_back();
        if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "webaip::".len()..];
        let firsts: Vec<String> = match rest.strip_prefix('{') {
            // A group: the first segment of each of its top-level items.
            Some(group) => {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                inner.split(',').map(|item| ident(item.trim())).collect()
            }
            None => vec![ident(rest)],
        };
        out.extend(
            firsts
                .into_iter()
                .filter(|m| modules.contains(m))
                .map(|m| (line_of(at), format!("webaip::{m}"))),
        );
    }
    out
}

#[test]
fn tests_examples_and_benches_reach_only_the_facade_and_internals() {
    let modules = library_modules();
    assert!(modules.contains("mets") && modules.contains("formats"), "{modules:?}");
    let mut files = 0;
    let mut found = Vec::new();
    for dir in ["tests", "examples", "benches", "src/cli"] {
        for e in walkdir::WalkDir::new(repo().join(dir)).sort_by_file_name() {
            let e = e.unwrap();
            if e.path().extension().is_none_or(|x| x != "rs") {
                continue;
            }
            files += 1;
            let code = code_only(&std::fs::read_to_string(e.path()).unwrap());
            let rel = e.path().strip_prefix(repo()).unwrap().display().to_string();
            for (line, path) in internal_paths(&code, &modules) {
                found.push(format!("{rel}:{line}: {path}"));
            }
        }
    }
    assert!(files > 50, "only {files} files read");
    assert!(
        found.is_empty(),
        "outside the crate, the library is its crate root (harnesses: webaip::internals):\n{}",
        found.join("\n")
    );
}

/// The public surface is the facade (`api`, re-exported at the root) and, with the test-hooks
/// feature only, `internals`: every other module of src/lib.rs is crate-private.
#[test]
fn only_the_facade_is_public() {
    let text = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let lib = code_only(&text);
    let public: Vec<&str> = lib
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("pub mod ") || l.starts_with("pub use "))
        .collect();
    assert_eq!(public, ["pub use api::*;", "pub mod internals;"], "{lib}");
    let gated = text.find("#[cfg(feature = \"test-hooks\")]");
    let internals = text.find("pub mod internals;");
    assert!(gated.zip(internals).is_some_and(|(g, i)| g < i), "internals only with test-hooks");
}

#[test]
fn internal_paths_are_found_alone_in_groups_and_in_uses_of_a_module() {
    let modules: BTreeSet<String> = ["mets", "formats"].map(String::from).into();
    let code = "use webaip::mets;\nuse webaip::{Packager, formats::warc::WarcReader};\n\
                let x = webaip::audit_package(p);\nuse webaip::internals::ArcReader;\n\
                let y = my_webaip::mets::x;\nlet z = webaip::formats::digest::hex(b);\n";
    assert_eq!(
        internal_paths(code, &modules),
        [
            (1, "webaip::mets".to_string()),
            (2, "webaip::formats".to_string()),
            (6, "webaip::formats".to_string())
        ]
    );
}
