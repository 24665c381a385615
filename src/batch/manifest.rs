//! The items of a batch: the lines of a CSV manifest, or the entries of a folder of harvests.
//!
//! A CSV manifest has up to three columns: the source (a path, relative to the manifest's own
//! folder unless absolute), a curator metadata file (same rule; may be empty) and per-item
//! options (see `item::with_item_options`; may be empty). A first line whose first field is
//! `source` is a header; lines starting with `#` are comments. A folder given instead is
//! scanned: each of its subdirectories and each ARC, WARC or `.zip` file at its top is one
//! item (hidden entries and other files are listed as ignored).
//!
//! Every item has a stable key (its source as written, relative to the manifest's folder,
//! without `.` components; an absolute path inside that folder is made relative to it, so a
//! collection moved with its manifest keeps its keys) and a package directory name derived from it, unique within the
//! manifest (so every shard of one manifest derives the same names). A PANDAS title directory
//! stands for its instances: each is an item of its own, as `webaip package` makes one
//! package of each. A source given a second time is an item too, whose only outcome is the
//! failure "duplicate of line N".

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use super::lines::{MAX_LINE, Record, Records};

/// One item of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The stable key the journal knows it by.
    pub key: String,
    /// The key earlier versions gave it (its source as written), when not `key`: a journal
    /// row under it, and none under `key`, is its own.
    pub former_key: Option<String>,
    /// Its line in the CSV manifest (none for a scanned folder's entry).
    pub line: Option<u64>,
    /// The source, resolved against the manifest's folder.
    pub source: PathBuf,
    /// The curator metadata file, resolved likewise.
    pub metadata: Option<PathBuf>,
    /// The per-item options, as written.
    pub options: String,
    /// The package directory's name below `--out`.
    pub name: String,
    /// Why the line is not an item to package (recorded as failed, never packaged).
    pub refused: Option<LineRefusal>,
}

/// Why a manifest line is recorded failed without being packaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineRefusal {
    /// It repeats the source of an earlier line.
    Duplicate {
        /// That line.
        line: u64,
    },
    /// It has more than three fields (an unquoted comma in a path, say).
    Fields {
        /// How many.
        fields: usize,
    },
    /// It is longer than `MAX_LINE` bytes (its source is not read).
    TooLong {
        /// The line it starts on.
        line: u64,
    },
}

impl LineRefusal {
    /// The kind of failure the journal records.
    pub fn kind(&self) -> &'static str {
        match self {
            LineRefusal::Duplicate { .. } => "duplicate",
            LineRefusal::Fields { .. } | LineRefusal::TooLong { .. } => "manifest",
        }
    }

    /// Whether the item has a package directory name (a duplicate or a line not read has
    /// none: it is never packaged, and takes no name from another).
    fn named(&self) -> bool {
        matches!(self, LineRefusal::Fields { .. })
    }
}

impl std::fmt::Display for LineRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineRefusal::Duplicate { line } => write!(f, "duplicate of line {line}"),
            LineRefusal::Fields { fields } => write!(
                f,
                "{fields} fields; at most 3 (source, metadata, options): quote a path that \
                 holds a comma"
            ),
            LineRefusal::TooLong { line } => write!(
                f,
                "line {line} is longer than {} KiB: not read (a manifest line holds a source, \
                 a metadata file and options)",
                MAX_LINE >> 10
            ),
        }
    }
}

/// The items of a manifest, and the entries of a scanned folder that are none.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    /// Items, in manifest order.
    pub items: Vec<Item>,
    /// Entries of a scanned folder not taken (hidden, or files of no archive kind).
    pub ignored: Vec<String>,
}

/// Why a manifest cannot be read at all (a bad item is a failure of that item, not this).
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The manifest (file or folder) cannot be read.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The manifest.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Reads a manifest: a CSV file, or a folder scanned for harvests.
pub fn read_manifest(path: &Path) -> Result<Manifest, ManifestError> {
    let io = |source| ManifestError::Io { path: path.to_path_buf(), source };
    let meta = std::fs::metadata(path).map_err(io)?;
    let mut manifest = if meta.is_dir() { scan_folder(path)? } else { read_csv(path)? };
    name_items(&mut manifest.items);
    Ok(manifest)
}

/// The lines of a CSV manifest, each an item (a PANDAS title directory, its instances).
fn read_csv(path: &Path) -> Result<Manifest, ManifestError> {
    let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let io = |source| ManifestError::Io { path: path.to_path_buf(), source };
    let folder = ManifestFolder::of(&base);
    let file = std::fs::File::open(path).map_err(io)?;
    let mut records = Records::new(std::io::BufReader::new(file));
    let mut items = Vec::new();
    let mut first_key: HashMap<String, u64> = HashMap::new();
    while let Some(record) = records.next_record().map_err(io)? {
        let (line, fields) = match record {
            Record::Fields { line, fields } => (line, fields),
            // Its source is not read: the item is known by its line alone.
            Record::TooLong { line } => {
                items.push(too_long(line));
                continue;
            }
        };
        let Some(item) = line_item(line, &fields, &base, &folder) else { continue };
        // The first line may name the columns.
        if items.is_empty() && first_key.is_empty() && is_header(&fields) {
            continue;
        }
        match first_key.get(&item.key) {
            Some(&first) => items.push(Item {
                key: format!("{} (line {line})", item.key),
                former_key: None,
                refused: Some(LineRefusal::Duplicate { line: first }),
                ..item
            }),
            // A line that says more than it may is not guessed at: it fails, the batch goes on.
            None if fields.len() > 3 => {
                first_key.insert(item.key.clone(), line);
                let refused = Some(LineRefusal::Fields { fields: fields.len() });
                items.push(Item { refused, ..item });
            }
            None => {
                first_key.insert(item.key.clone(), line);
                items.extend(expand_title(item));
            }
        }
    }
    Ok(Manifest { items, ignored: Vec::new() })
}

/// Whether a line is the column header (its source field is `source`).
fn is_header(fields: &[Vec<u8>]) -> bool {
    fields.first().is_some_and(|f| f.eq_ignore_ascii_case(b"source"))
}

/// The item of the manifest line `line` (source, metadata, options, paths relative to
/// `base`), not yet named; `None` for a line without a source.
fn line_item(line: u64, fields: &[Vec<u8>], base: &Path, folder: &ManifestFolder) -> Option<Item> {
    let field = |i: usize| fields.get(i).map(Vec::as_slice).filter(|f| !f.is_empty());
    let written = Path::new(OsStr::from_bytes(field(0)?));
    let key = key_of(&under_folder(written, folder));
    let former = key_of(written);
    Some(Item {
        former_key: (former != key).then_some(former),
        key,
        line: Some(line),
        source: base.join(written),
        metadata: field(1).map(|m| base.join(OsStr::from_bytes(m))),
        options: field(2).map(|o| String::from_utf8_lossy(o).into_owned()).unwrap_or_default(),
        name: String::new(),
        refused: None,
    })
}

/// The item of a line over [`MAX_LINE`]: refused, known by its line number.
fn too_long(line: u64) -> Item {
    Item {
        key: format!("(line {line})"),
        former_key: None,
        line: Some(line),
        source: PathBuf::new(),
        metadata: None,
        options: String::new(),
        name: String::new(),
        refused: Some(LineRefusal::TooLong { line }),
    }
}

/// Each subdirectory and each ARC, WARC or `.zip` file at the top of `dir`, in name order.
fn scan_folder(dir: &Path) -> Result<Manifest, ManifestError> {
    let io = |source| ManifestError::Io { path: dir.to_path_buf(), source };
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).map_err(io)?.collect::<Result<_, _>>().map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    let mut manifest = Manifest::default();
    for e in entries {
        let name = e.file_name();
        let text = crate::sources::file_text(Path::new(&name));
        let path = e.path();
        // A link is followed (the operator put it there); a FIFO or device is not an item.
        let is_dir = path.is_dir();
        let archive = path.is_file()
            && (crate::sources::archive_kind(&path).is_some()
                || path.extension().is_some_and(|x| x.eq_ignore_ascii_case("zip")));
        if name.as_bytes().starts_with(b".") || !(is_dir || archive) {
            manifest.ignored.push(text);
            continue;
        }
        let item = Item {
            key: key_of(Path::new(&name)),
            former_key: None,
            line: None,
            source: path,
            metadata: None,
            options: String::new(),
            name: String::new(),
            refused: None,
        };
        manifest.items.extend(expand_title(item));
    }
    Ok(manifest)
}

/// A PANDAS title directory's instances, each an item; any other item as it is. The order of
/// `sources::detect` is kept: a NEDLIB or Kulturarw3 root is never taken for a title.
fn expand_title(item: Item) -> Vec<Item> {
    let dir = &item.source;
    let sources = crate::sources::pandas::is_instance;
    if !dir.is_dir()
        || sources(dir)
        || crate::sources::nedlib::is_nedlib(dir)
        || crate::sources::kulturarw3::is_kulturarw3(dir)
    {
        return vec![item];
    }
    let mut instances: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| sources(p)).collect())
        .unwrap_or_default();
    if instances.is_empty() {
        return vec![item];
    }
    instances.sort();
    instances
        .into_iter()
        .map(|p| {
            let name = crate::sources::file_text(&p);
            Item {
                key: format!("{}/{name}", item.key),
                former_key: item.former_key.as_ref().map(|k| format!("{k}/{name}")),
                source: p,
                ..item.clone()
            }
        })
        .collect()
}

/// The manifest's folder, as the absolute paths of its lines may name it: made absolute as
/// given, and with its links resolved.
struct ManifestFolder {
    spellings: Vec<PathBuf>,
}

impl ManifestFolder {
    fn of(base: &Path) -> ManifestFolder {
        // A manifest named bare (`m.csv`) has the parent "", which neither call takes.
        let base = if base.as_os_str().is_empty() { Path::new(".") } else { base };
        let mut spellings = Vec::new();
        if let Ok(p) = std::path::absolute(base) {
            spellings.push(p);
        }
        if let Ok(p) = base.canonicalize()
            && !spellings.contains(&p)
        {
            spellings.push(p);
        }
        ManifestFolder { spellings }
    }
}

/// A source written as an absolute path inside the manifest's folder, relative to that folder
/// (so a collection moved with its manifest keeps its keys, its journal and its shards); any
/// other source as written.
fn under_folder(written: &Path, folder: &ManifestFolder) -> PathBuf {
    if !written.is_absolute() {
        return written.to_path_buf();
    }
    // Lexically: `.` components dropped, so `/coll/./a` is inside `/coll`.
    let plain: PathBuf = written.components().filter(|c| *c != Component::CurDir).collect();
    folder
        .spellings
        .iter()
        .find_map(|f| plain.strip_prefix(f).ok())
        .filter(|rel| {
            !rel.as_os_str().is_empty() && rel.components().all(|c| c != Component::ParentDir)
        })
        .map_or_else(|| written.to_path_buf(), Path::to_path_buf)
}

/// The key of a source as written: its components joined by `/`, without `.` components.
fn key_of(written: &Path) -> String {
    let mut parts = Vec::new();
    for c in written.components() {
        match c {
            Component::RootDir => parts.push(String::new()),
            Component::CurDir => {}
            Component::ParentDir => parts.push("..".into()),
            Component::Prefix(p) => parts.push(p.as_os_str().to_string_lossy().into_owned()),
            Component::Normal(n) => parts.push(crate::sources::file_text(Path::new(n))),
        }
    }
    match parts.as_slice() {
        [] => ".".into(),
        [root] if root.is_empty() => "/".into(),
        _ => parts.join("/"),
    }
}

/// Gives every item its package directory name: its source's last name without an archive
/// extension, in safe characters; a name two items would share gets a part of its key's
/// SHA-256 (so each shard of a manifest derives the same names).
fn name_items(items: &mut [Item]) {
    let bases: Vec<String> = items.iter().map(|i| base_name(&i.key)).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (item, b) in items.iter().zip(&bases) {
        if item.refused.as_ref().is_none_or(LineRefusal::named) {
            *counts.entry(b.as_str()).or_default() += 1;
        }
    }
    for (item, base) in items.iter_mut().zip(&bases) {
        // A duplicate or a line not read is never packaged: it has no directory.
        if item.refused.as_ref().is_some_and(|r| !r.named()) {
            continue;
        }
        item.name = match counts.get(base.as_str()) {
            Some(1) => base.clone(),
            _ => format!("{base}-{}", &key_hash_hex(&item.key)[..12]),
        };
    }
}

/// The last name of a key, its archive extension dropped, in `[A-Za-z0-9._+-]`, not hidden.
fn base_name(key: &str) -> String {
    let last = key.rsplit('/').find(|p| !p.is_empty() && *p != "..").unwrap_or("item");
    let lower = last.to_ascii_lowercase();
    let cut = [".arc.gz", ".warc.gz", ".arc", ".warc", ".zip"]
        .iter()
        .find(|x| lower.ends_with(*x) && lower.len() > x.len())
        .map_or(0, |x| x.len());
    let stem = &last[..last.len() - cut];
    let mut name: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._+-".contains(c) { c } else { '_' })
        .take(120)
        .collect();
    if name.starts_with('.') {
        name.replace_range(0..1, "_");
    }
    if name.is_empty() { "item".into() } else { name }
}

/// SHA-256 of a key, in hex: what names and shards are derived from.
pub(crate) fn key_hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn key_hash_hex(key: &str) -> String {
    key_hash(key).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_drop_dot_components_and_names_drop_archive_extensions() {
        assert_eq!(key_of(Path::new("./a/./b/")), "a/b");
        assert_eq!(key_of(Path::new("/x/y")), "/x/y");
        assert_eq!(key_of(Path::new("../y")), "../y");
        assert_eq!(base_name("dir/IAH-1.arc.gz"), "IAH-1");
        assert_eq!(base_name("dir/.hidden job"), "_hidden_job");
        assert_eq!(base_name(".arc"), "_arc");
    }

    #[test]
    fn an_absolute_source_inside_the_manifests_folder_is_keyed_relative_to_it() {
        let tmp = tempfile::tempdir().unwrap();
        let csv = tmp.path().join("m.csv");
        let abs = tmp.path().join("harvests/./job");
        let outside = "/elsewhere/job2";
        let text = format!("{}\nharvests/job\n{outside}\n", abs.display());
        std::fs::write(&csv, text).unwrap();
        let m = read_manifest(&csv).unwrap();
        let keys: Vec<&str> = m.items.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["harvests/job", "harvests/job (line 2)", outside]);
        assert_eq!(m.items[0].source, abs, "the source itself is read where it is written");
    }

    #[test]
    fn a_repeated_source_is_a_duplicate_and_shared_names_are_made_unique() {
        let tmp = tempfile::tempdir().unwrap();
        let csv = tmp.path().join("m.csv");
        std::fs::write(
            &csv,
            "source,metadata,options\na/job\n# comment\nb/job,md.toml\n./a/job/\nc,d,e,f\n",
        )
        .unwrap();
        let m = read_manifest(&csv).unwrap();
        let keys: Vec<&str> = m.items.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["a/job", "b/job", "a/job (line 5)", "c"]);
        assert_eq!(m.items[3].refused, Some(LineRefusal::Fields { fields: 4 }));
        assert_eq!(m.items[2].refused, Some(LineRefusal::Duplicate { line: 2 }));
        assert_eq!(m.items[1].metadata, Some(tmp.path().join("md.toml")));
        assert!(m.items[0].name.starts_with("job-") && m.items[1].name.starts_with("job-"));
        assert_ne!(m.items[0].name, m.items[1].name);
        assert_eq!(m.items[2].name, "");
    }
}
