//! The source's quirks and anomalies as the package's own logs record them: the migration
//! reports of ARC files (`logs/webaip/NAME.migration.json`: `anomaly_counts`, `anomalies`) and
//! the quirk lists of mirrors and other sources (`logs/webaip/SHAPE.quirks.json`: `counts`,
//! `quirks`). Counted by kind over every log, with a few examples of each.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

/// Largest log read (a migration report lists at most a few thousand anomalies).
const MAX_LOG_BYTES: u64 = 64 << 20;
/// Examples kept per kind.
const EXAMPLES: usize = 3;
/// Most kinds counted apart (kinds are a closed vocabulary; a hostile log gets a bound).
const MAX_KINDS: usize = 1000;

/// One example of a quirk: what it is and where.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct QuirkExample {
    /// Where: a file and offset or line, as the log says it.
    pub place: String,
    /// The log's sentence.
    pub detail: String,
}

/// The quirks of a kind.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct QuirkKind {
    /// The kind's name as the log gives it.
    pub kind: String,
    /// How many, by the logs' counts.
    pub count: u64,
    /// A few of them.
    pub examples: Vec<QuirkExample>,
}

/// The quirks of all the logs read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Quirks {
    /// The logs read.
    pub logs: Vec<String>,
    /// By kind, most frequent first.
    pub kinds: Vec<QuirkKind>,
    /// Logs that could not be read or are not JSON, with why.
    pub unread: Vec<String>,
    /// The source's shape as a quirk log names it (`wget`, `httrack`, `nedlib`, ...).
    pub shape: Option<String>,
}

/// The quirks the logs `names` (package-relative) of the package at `root` record.
pub(crate) fn read_quirks(root: &Path, names: &[String]) -> Quirks {
    let mut q = Quirks::default();
    let mut kinds: BTreeMap<String, QuirkKind> = BTreeMap::new();
    for name in names {
        match read_log(root, name) {
            Ok(v) => {
                q.logs.push(name.clone());
                if q.shape.is_none() {
                    q.shape =
                        v.get("shape").and_then(Value::as_str).map(|s| crate::layout::clip(s, 100));
                }
                add_log(&v, &mut kinds);
            }
            Err(why) => q.unread.push(format!("{name}: {why}")),
        }
    }
    q.kinds = kinds.into_values().collect();
    q.kinds.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)));
    q
}

/// Why a quirk log was not read.
#[derive(Debug, thiserror::Error)]
enum LogUnread {
    #[error("{}", .0.reason())]
    Open(#[from] crate::layout::ConfineError),
    #[error("{}", crate::layout::describe_io(.0))]
    Read(#[from] std::io::Error),
    #[error("larger than {MAX_LOG_BYTES} bytes, not read")]
    TooLarge,
    #[error("not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
}

fn read_log(root: &Path, name: &str) -> Result<Value, LogUnread> {
    use std::io::Read;
    let file = crate::layout::open_in(root, name)?;
    let mut bytes = Vec::new();
    file.take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_LOG_BYTES {
        return Err(LogUnread::TooLarge);
    }
    Ok(serde_json::from_slice(&bytes)?)
}

/// Adds one log's counts and examples.
fn add_log(v: &Value, kinds: &mut BTreeMap<String, QuirkKind>) {
    let counts = v.get("anomaly_counts").or_else(|| v.get("counts"));
    for (kind, n) in counts.and_then(Value::as_object).into_iter().flatten() {
        let Some(n) = n.as_u64() else { continue };
        if let Some(k) = kind_entry(kinds, kind) {
            k.count += n;
        }
    }
    let listed = v.get("anomalies").or_else(|| v.get("quirks"));
    for item in listed.and_then(Value::as_array).into_iter().flatten() {
        let Some(kind) = item.get("kind").and_then(Value::as_str) else { continue };
        if let Some(k) = kind_entry(kinds, kind).filter(|k| k.examples.len() < EXAMPLES) {
            k.examples.push(example(item));
        }
    }
}

fn kind_entry<'a>(
    kinds: &'a mut BTreeMap<String, QuirkKind>,
    kind: &str,
) -> Option<&'a mut QuirkKind> {
    if !kinds.contains_key(kind) && kinds.len() >= MAX_KINDS {
        return None;
    }
    let kind = crate::layout::clip(kind, 200);
    Some(kinds.entry(kind.clone()).or_insert(QuirkKind { kind, count: 0, examples: Vec::new() }))
}

/// An example's place and sentence, from either log's shape.
fn example(item: &Value) -> QuirkExample {
    let text = |k: &str| {
        item.get(k).map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        })
    };
    let mut place = text("location").or_else(|| text("file")).unwrap_or_default();
    for (key, label) in [("offset", "offset"), ("line", "line")] {
        if let Some(n) = item.get(key).and_then(Value::as_u64) {
            place.push_str(&format!(", {label} {n}"));
        }
    }
    QuirkExample {
        place: crate::layout::clip(&place, 500),
        detail: crate::layout::clip(&text("detail").unwrap_or_default(), 1000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_log_shapes_are_counted_with_examples() {
        let mut kinds = BTreeMap::new();
        let migration = serde_json::json!({"anomaly_counts": {"bad-length": 5},
            "anomalies": [{"kind": "bad-length", "location": "x.arc offset 10", "detail": "d1", "severity": "warn"}]});
        let source = serde_json::json!({"counts": {"bad-length": 1, "lf-line-ends": 2},
            "quirks": [{"kind": "lf-line-ends", "file": "a/b", "line": 3, "offset": null, "detail": "d2"}]});
        add_log(&migration, &mut kinds);
        add_log(&source, &mut kinds);
        assert_eq!(kinds["bad-length"].count, 6);
        assert_eq!(kinds["bad-length"].examples[0].place, "x.arc offset 10");
        assert_eq!(
            kinds["lf-line-ends"].examples[0],
            QuirkExample { place: "a/b, line 3".into(), detail: "d2".into() }
        );
    }
}
