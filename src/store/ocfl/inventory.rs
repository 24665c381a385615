//! The OCFL inventory (`inventory.json`): its model, the one reader every command uses, the
//! validation it passes before anything trusts it, and how the next version's is made.
//!
//! An inventory read from a replica is hostile input: it is read whole only up to
//! [`MAX_INVENTORY`] bytes (a larger one is refused before parsing), parsed by serde_json
//! (recursion-limited), and then accepted only when it is what OCFL 1.1 allows (see
//! [`Inventory::validate`]); no name in it is used before that.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::InventoryFault;

/// The `type` of an OCFL 1.1 inventory.
pub(crate) const INVENTORY_TYPE: &str = "https://ocfl.io/1.1/spec/#inventory";
/// The digest algorithm this store writes and reads (the package manifest's).
pub(crate) const DIGEST_ALGORITHM: &str = "sha512";
/// The content directory of every version this store writes.
pub(crate) const CONTENT_DIRECTORY: &str = "content";
/// The largest inventory read (an object of many versions of many files stays far below).
pub(crate) const MAX_INVENTORY: u64 = 64 << 20;
/// The most paths and keys (digests, version names) an inventory read holds, in its
/// manifest, every version's state and its fixity together: the byte cap alone admits tens
/// of millions of short paths or empty digest entries, each a string in memory and a line in
/// a check's report.
pub(crate) const MAX_PATHS: usize = 2_000_000;
/// Longest sidecar read (a SHA-512 in hex, blanks and `inventory.json`).
pub(crate) const MAX_SIDECAR: u64 = 1024;
/// The inventory's file name, and its sidecar's.
pub(crate) const INVENTORY: &str = "inventory.json";
pub(crate) const SIDECAR: &str = "inventory.json.sha512";

/// Digest (lower-case hex) to paths: a manifest (content paths) or a version state (logical
/// paths).
pub(crate) type DigestMap = BTreeMap<String, Vec<String>>;

/// An OCFL inventory, as the specification names its keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Inventory {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(rename = "digestAlgorithm")]
    pub digest_algorithm: String,
    pub head: String,
    #[serde(rename = "contentDirectory", default, skip_serializing_if = "Option::is_none")]
    pub content_directory: Option<String>,
    #[serde(deserialize_with = "bounded::digest_map")]
    pub manifest: DigestMap,
    #[serde(deserialize_with = "bounded::versions")]
    pub versions: BTreeMap<String, Version>,
    #[serde(
        default,
        deserialize_with = "bounded::fixity",
        skip_serializing_if = "Option::is_none"
    )]
    pub fixity: Option<BTreeMap<String, DigestMap>>,
}

/// One version block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Version {
    pub created: String,
    #[serde(deserialize_with = "bounded::digest_map")]
    pub state: DigestMap,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<User>,
}

/// Who made a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct User {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// What a valid inventory's versions are: their number and the padding of their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Versions {
    /// The head's number (versions are `1..=head`).
    pub head: u32,
    /// Width of zero-padded names (`v001`: 4), 0 when not padded.
    pub padding: usize,
}

impl Versions {
    /// Whether version `n`'s name fits the padding (`v999` is the last of `v001`...).
    pub(crate) fn fits(&self, n: u32) -> bool {
        self.padding == 0 || n.to_string().len() < self.padding
    }

    /// The directory name of version `n` in this padding style.
    pub(crate) fn name(&self, n: u32) -> String {
        if self.padding == 0 { format!("v{n}") } else { format!("v{n:0>w$}", w = self.padding - 1) }
    }
}

/// A package file as a version holds it: its logical path and SHA-512.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogicalFile {
    pub path: String,
    pub sha512: String,
}

/// Who and why, for a new version.
#[derive(Debug, Clone)]
pub(crate) struct VersionMeta {
    /// RFC 3339.
    pub created: String,
    pub message: String,
    pub user: User,
}

/// Parses and validates inventory bytes (at most [`MAX_INVENTORY`]).
pub(crate) fn parse(bytes: &[u8]) -> Result<(Inventory, Versions), InventoryFault> {
    if bytes.len() as u64 > MAX_INVENTORY {
        return Err(InventoryFault::TooLarge { limit: MAX_INVENTORY });
    }
    bounded::start();
    let inv: Inventory = serde_json::from_slice(bytes).map_err(InventoryFault::Json)?;
    let versions = inv.validate()?;
    Ok((inv, versions))
}

/// The sidecar's text for inventory bytes whose SHA-512 is `sha512`.
pub(crate) fn sidecar_text(sha512: &str) -> String {
    format!("{sha512}  {INVENTORY}\n")
}

/// The digest a sidecar names (lower-cased), or why it is not a sidecar.
pub(crate) fn sidecar_digest(bytes: &[u8]) -> Result<String, InventoryFault> {
    let text = std::str::from_utf8(bytes).map_err(|_| InventoryFault::Sidecar)?;
    let mut words = text.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(d), Some(INVENTORY), None) if is_digest(d) => Ok(d.to_ascii_lowercase()),
        _ => Err(InventoryFault::Sidecar),
    }
}

/// A SHA-512 in hex (either case: OCFL digests are case-insensitive).
fn is_digest(d: &str) -> bool {
    d.len() == 128 && d.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Inventory {
    /// The bytes this store writes for it.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// The content directory of its versions.
    pub(crate) fn content_dir(&self) -> &str {
        self.content_directory.as_deref().unwrap_or(CONTENT_DIRECTORY)
    }

    /// Accepts only what OCFL 1.1 allows: the type, `sha512`, versions `v1..vN` contiguous in
    /// one padding style with `head` the last, well-formed digests (each unique ignoring case),
    /// content paths inside a version's content directory, each state digest in the manifest,
    /// every manifest digest used by a state, and logical paths that are valid and do not
    /// conflict (no path is another's directory).
    pub(crate) fn validate(&self) -> Result<Versions, InventoryFault> {
        if self.id.is_empty() {
            return Err(InventoryFault::NoId);
        }
        if self.kind != INVENTORY_TYPE {
            return Err(InventoryFault::Type(self.kind.clone()));
        }
        if self.digest_algorithm != DIGEST_ALGORITHM {
            return Err(InventoryFault::Algorithm(self.digest_algorithm.clone()));
        }
        if let Some(c) = &self.content_directory
            && (c.is_empty() || c == "." || c == ".." || c.contains('/'))
        {
            return Err(InventoryFault::ContentDirectory(c.clone()));
        }
        let versions = version_numbers(&self.versions, &self.head)?;
        self.validate_manifest(&versions)?;
        let mut used = BTreeSet::new();
        for (name, v) in &self.versions {
            self.validate_version(name, v)?;
            used.extend(v.state.keys().map(|d| d.to_ascii_lowercase()));
        }
        if let Some(d) = self.manifest.keys().find(|d| !used.contains(&d.to_ascii_lowercase())) {
            return Err(InventoryFault::Unused(d.clone()));
        }
        if let Some(fixity) = &self.fixity {
            self.validate_fixity(fixity)?;
        }
        Ok(versions)
    }

    fn validate_manifest(&self, versions: &Versions) -> Result<(), InventoryFault> {
        let paths = check_digest_map(&self.manifest)?;
        for p in &paths {
            let mut segs = p.split('/');
            let (v, c) = (segs.next().unwrap_or_default(), segs.next());
            let in_version = v
                .strip_prefix('v')
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n >= 1 && n <= versions.head && versions.name(n) == v);
            if !in_version || c != Some(self.content_dir()) || segs.next().is_none() {
                return Err(InventoryFault::ContentPath((*p).clone()));
            }
        }
        Ok(())
    }

    fn validate_version(&self, name: &str, v: &Version) -> Result<(), InventoryFault> {
        if chrono::DateTime::parse_from_rfc3339(&v.created).is_err() {
            return Err(InventoryFault::Created {
                version: name.into(),
                created: v.created.clone(),
            });
        }
        if v.user.as_ref().is_some_and(|u| u.name.is_empty()) {
            return Err(InventoryFault::User(name.into()));
        }
        check_digest_map(&v.state)?;
        let manifest: BTreeSet<String> =
            self.manifest.keys().map(|d| d.to_ascii_lowercase()).collect();
        if let Some(d) = v.state.keys().find(|d| !manifest.contains(&d.to_ascii_lowercase())) {
            return Err(InventoryFault::NotInManifest { version: name.into(), digest: d.clone() });
        }
        Ok(())
    }

    fn validate_fixity(&self, fixity: &BTreeMap<String, DigestMap>) -> Result<(), InventoryFault> {
        let content: BTreeSet<&String> = self.manifest.values().flatten().collect();
        for map in fixity.values() {
            if let Some(p) = map.values().flatten().find(|p| !content.contains(p)) {
                return Err(InventoryFault::ContentPath(p.clone()));
            }
        }
        Ok(())
    }

    /// The files of version `n` (logical path and SHA-512), sorted by path.
    pub(crate) fn files_of(&self, versions: &Versions, n: u32) -> Vec<LogicalFile> {
        let Some(v) = self.versions.get(&versions.name(n)) else { return Vec::new() };
        let mut out: Vec<LogicalFile> = v
            .state
            .iter()
            .flat_map(|(d, paths)| {
                paths
                    .iter()
                    .map(|p| LogicalFile { path: p.clone(), sha512: d.to_ascii_lowercase() })
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// The first content path holding `sha512`.
    pub(crate) fn content_path(&self, sha512: &str) -> Option<&str> {
        self.manifest
            .iter()
            .find(|(d, _)| d.eq_ignore_ascii_case(sha512))
            .and_then(|(_, p)| p.first())
            .map(String::as_str)
    }

    /// Every content path with its digest.
    pub(crate) fn content(&self) -> impl Iterator<Item = (&str, &str)> {
        self.manifest.iter().flat_map(|(d, ps)| ps.iter().map(move |p| (p.as_str(), d.as_str())))
    }
}

/// The inventory of the next version of object `id` holding `files`, after `prev` (the head
/// inventory, if the object exists): `None` when the head holds exactly these files already.
/// Only digests the object does not hold yet get a content path (`vN/content/<path>`, the
/// first file of each); the rest keep pointing at earlier content.
pub(crate) fn next_version(
    prev: Option<(&Inventory, Versions)>,
    id: &str,
    files: &[LogicalFile],
    meta: VersionMeta,
) -> Option<(Inventory, Versions)> {
    let mut state = DigestMap::new();
    for f in files {
        state.entry(f.sha512.clone()).or_default().push(f.path.clone());
    }
    let (mut inv, versions) = match prev {
        Some((p, v)) => {
            let head = p.versions.get(&p.head);
            if head.is_some_and(|h| lower_keys(&h.state) == state) {
                return None;
            }
            (p.clone(), Versions { head: v.head + 1, padding: v.padding })
        }
        None => (first_inventory(id), Versions { head: 1, padding: 0 }),
    };
    let name = versions.name(versions.head);
    let known: BTreeSet<String> = inv.manifest.keys().map(|d| d.to_ascii_lowercase()).collect();
    let content = inv.content_dir().to_string();
    for (d, paths) in &state {
        if !known.contains(d) {
            inv.manifest.insert(d.clone(), vec![format!("{name}/{content}/{}", paths[0])]);
        }
    }
    let VersionMeta { created, message, user } = meta;
    inv.versions
        .insert(name.clone(), Version { created, state, message: Some(message), user: Some(user) });
    inv.head = name;
    Some((inv, versions))
}

fn first_inventory(id: &str) -> Inventory {
    Inventory {
        id: id.into(),
        kind: INVENTORY_TYPE.into(),
        digest_algorithm: DIGEST_ALGORITHM.into(),
        head: String::new(),
        content_directory: None,
        manifest: DigestMap::new(),
        versions: BTreeMap::new(),
        fixity: None,
    }
}

fn lower_keys(m: &DigestMap) -> DigestMap {
    let mut out = DigestMap::new();
    for (d, ps) in m {
        let mut ps = ps.clone();
        ps.sort();
        out.entry(d.to_ascii_lowercase()).or_default().extend(ps);
    }
    out
}

/// Versions `v1..vN`, contiguous, one padding style, `head` the last.
fn version_numbers(
    versions: &BTreeMap<String, Version>,
    head: &str,
) -> Result<Versions, InventoryFault> {
    let mut numbers = BTreeSet::new();
    let mut widths = BTreeSet::new();
    for name in versions.keys() {
        let digits = name
            .strip_prefix('v')
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        let Some(digits) = digits else { return Err(InventoryFault::VersionName(name.clone())) };
        let n: u32 = digits.parse().map_err(|_| InventoryFault::VersionName(name.clone()))?;
        if n == 0 {
            return Err(InventoryFault::VersionName(name.clone()));
        }
        // Padded names all have one width (v001, v002); unpadded ones start with no zero.
        widths.insert(if digits.starts_with('0') { name.len() } else { 0 });
        numbers.insert(n);
    }
    let last = numbers.len() as u32;
    if last == 0 || numbers.iter().copied().ne(1..=last) {
        return Err(InventoryFault::NotContiguous);
    }
    let padding = match widths.into_iter().collect::<Vec<_>>()[..] {
        [w] => w,
        [0, w] if versions.keys().all(|k| k.len() == w) => w,
        _ => return Err(InventoryFault::Padding),
    };
    let v = Versions { head: last, padding };
    if head != v.name(last) {
        return Err(InventoryFault::Head(head.into()));
    }
    Ok(v)
}

/// Digests well-formed and unique ignoring case; paths valid and unique, none another's
/// directory. Returns the paths.
fn check_digest_map(m: &DigestMap) -> Result<Vec<&String>, InventoryFault> {
    let mut lower = BTreeSet::new();
    for d in m.keys() {
        if !is_digest(d) || !lower.insert(d.to_ascii_lowercase()) {
            return Err(InventoryFault::Digest(d.clone()));
        }
    }
    let mut paths: Vec<&String> = m.values().flatten().collect();
    for p in &paths {
        if !valid_path(p) {
            return Err(InventoryFault::Path((*p).clone()));
        }
    }
    paths.sort();
    for w in paths.windows(2) {
        if w[0] == w[1] || w[1].strip_prefix(w[0].as_str()).is_some_and(|r| r.starts_with('/')) {
            return Err(InventoryFault::Conflict(w[1].clone()));
        }
    }
    Ok(paths)
}

/// Not empty, no leading or trailing `/`, no empty, `.` or `..` segment, no NUL or backslash.
fn valid_path(p: &str) -> bool {
    !p.is_empty()
        && !p.contains('\0')
        && !p.contains('\\')
        && p.split('/').all(|s| !s.is_empty() && s != "." && s != "..")
}

/// Digest maps and versions read with a budget of paths and keys ([`MAX_PATHS`] per
/// inventory): past it the read stops with an error, before they are in memory. A manifest or
/// state key that is not a SHA-512 in hex is refused as it is read, not after the whole
/// inventory is in memory.
mod bounded {
    use std::cell::Cell;
    use std::collections::BTreeMap;
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::{DeserializeSeed, Error, MapAccess, SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer};

    use super::{DigestMap, MAX_PATHS, Version, is_digest};

    thread_local! {
        /// Paths and keys the inventory being parsed on this thread may still hold.
        static LEFT: Cell<usize> = const { Cell::new(MAX_PATHS) };
    }

    /// A new inventory's budget.
    pub(super) fn start() {
        LEFT.with(|l| l.set(MAX_PATHS));
    }

    /// Takes one path or key from the budget.
    pub(super) fn charge<E: Error>() -> Result<(), E> {
        let left = LEFT.with(|l| l.get());
        if left == 0 {
            return Err(E::custom(format!(
                "more than {MAX_PATHS} paths and keys, the most an inventory is read with"
            )));
        }
        LEFT.with(|l| l.set(left - 1));
        Ok(())
    }

    pub(super) fn digest_map<'de, D: Deserializer<'de>>(d: D) -> Result<DigestMap, D::Error> {
        d.deserialize_map(Maps { sha512: true })
    }

    pub(super) fn versions<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<String, Version>, D::Error> {
        d.deserialize_map(Keyed::<Version>(PhantomData))
    }

    pub(super) fn fixity<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<BTreeMap<String, DigestMap>>, D::Error> {
        d.deserialize_map(Keyed::<Fixity>(PhantomData))
            .map(|m| Some(m.into_iter().map(|(k, v)| (k, v.0)).collect()))
    }

    /// A fixity block's digest map (of any algorithm: its keys are not checked as SHA-512).
    struct Fixity(DigestMap);

    impl<'de> Deserialize<'de> for Fixity {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fixity, D::Error> {
            d.deserialize_map(Maps { sha512: false }).map(Fixity)
        }
    }

    /// A map whose keys are charged (version names: `v` and digits).
    struct Keyed<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Keyed<T> {
        type Value = BTreeMap<String, T>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = m.next_key::<String>()? {
                charge()?;
                out.insert(key, m.next_value::<T>()?);
            }
            Ok(out)
        }
    }

    struct Maps {
        /// Keys must be SHA-512 digests in hex.
        sha512: bool,
    }

    impl<'de> Visitor<'de> for Maps {
        type Value = DigestMap;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map of digests to lists of paths")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<DigestMap, A::Error> {
            let mut out = DigestMap::new();
            while let Some(digest) = m.next_key::<String>()? {
                charge()?;
                if self.sha512 && !is_digest(&digest) {
                    let shown: String = digest.chars().take(140).collect();
                    return Err(A::Error::custom(format!(
                        "digest {shown:?} is not a SHA-512 in hex"
                    )));
                }
                let paths = m.next_value_seed(Paths)?;
                out.insert(digest, paths);
            }
            Ok(out)
        }
    }

    struct Paths;

    impl<'de> DeserializeSeed<'de> for Paths {
        type Value = Vec<String>;

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<String>, D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for Paths {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of paths")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(p) = s.next_element::<String>()? {
                charge()?;
                out.push(p);
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> VersionMeta {
        VersionMeta {
            created: "2026-11-30T03:00:00Z".into(),
            message: "put".into(),
            user: User { name: "tester".into(), address: Some("mailto:t@example.org".into()) },
        }
    }

    fn file(path: &str, byte: char) -> LogicalFile {
        LogicalFile { path: path.into(), sha512: byte.to_string().repeat(128) }
    }

    #[test]
    fn a_second_version_adds_only_new_digests_and_the_same_files_are_a_no_op() {
        let v1_files = [file("METS.xml", 'a'), file("content/x.warc.gz", 'b')];
        let (v1, n1) = next_version(None, "urn:x", &v1_files, meta()).unwrap();
        assert_eq!(n1.head, 1);
        assert_eq!(parse(&v1.to_bytes()).unwrap().1, n1);
        assert!(next_version(Some((&v1, n1)), "urn:x", &v1_files, meta()).is_none());
        let v2_files = [file("METS.xml", 'c'), file("content/x.warc.gz", 'b')];
        let (v2, n2) = next_version(Some((&v1, n1)), "urn:x", &v2_files, meta()).unwrap();
        assert_eq!(v2.head, "v2");
        assert_eq!(v2.manifest[&"c".repeat(128)], ["v2/content/METS.xml"]);
        assert_eq!(v2.manifest[&"b".repeat(128)], ["v1/content/content/x.warc.gz"]);
        assert_eq!(v2.files_of(&n2, 1), v1_files);
        parse(&v2.to_bytes()).unwrap();
    }

    #[test]
    fn what_ocfl_does_not_allow_is_refused() {
        let (good, _) = next_version(None, "urn:x", &[file("a", 'a')], meta()).unwrap();
        let refused = |edit: &dyn Fn(&mut Inventory)| {
            let mut inv = good.clone();
            edit(&mut inv);
            parse(&inv.to_bytes()).unwrap_err()
        };
        let d = "a".repeat(128);
        let e = refused(&|i| {
            i.manifest
                .insert(d.clone(), vec!["v1/content/../../x".into()])
                .map(|_| ())
                .unwrap_or(())
        });
        assert!(matches!(e, InventoryFault::Path(_)), "{e}");
        let e = refused(&|i| {
            i.manifest.insert(d.clone(), vec!["v2/content/a".into()]);
        });
        assert!(matches!(e, InventoryFault::ContentPath(_)), "{e}");
        let e = refused(&|i| i.head = "v2".into());
        assert!(matches!(e, InventoryFault::Head(_)), "{e}");
        let e = refused(&|i| {
            let v = i.versions["v1"].clone();
            i.versions.insert("v3".into(), v);
        });
        assert!(matches!(e, InventoryFault::NotContiguous), "{e}");
        let e = refused(&|i| i.digest_algorithm = "md5".into());
        assert!(matches!(e, InventoryFault::Algorithm(_)), "{e}");
        let e = refused(&|i| {
            i.versions.get_mut("v1").unwrap().state.insert("b".repeat(128), vec!["b".into()]);
        });
        assert!(matches!(e, InventoryFault::NotInManifest { .. }), "{e}");
        let e = refused(&|i| {
            i.versions
                .get_mut("v1")
                .unwrap()
                .state
                .insert(d.clone(), vec!["a".into(), "a/b".into()]);
        });
        assert!(matches!(e, InventoryFault::Conflict(_)), "{e}");
        let e = refused(&|i| i.versions.get_mut("v1").unwrap().created = "yesterday".into());
        assert!(matches!(e, InventoryFault::Created { .. }), "{e}");
        assert!(matches!(
            parse(&vec![b' '; MAX_INVENTORY as usize + 1]),
            Err(InventoryFault::TooLarge { .. })
        ));
        assert!(matches!(parse(b"{\"id\": 1}"), Err(InventoryFault::Json(_))));
    }

    #[test]
    fn padded_versions_keep_their_width_and_mixed_padding_is_refused() {
        let v = Versions { head: 3, padding: 4 };
        assert_eq!(v.name(3), "v003");
        let mut map = BTreeMap::new();
        let version = Version {
            created: "2026-01-01T00:00:00Z".into(),
            state: DigestMap::new(),
            message: None,
            user: None,
        };
        map.insert("v001".to_string(), version.clone());
        map.insert("v002".to_string(), version.clone());
        assert_eq!(version_numbers(&map, "v002").unwrap(), Versions { head: 2, padding: 4 });
        map.insert("v3".to_string(), version);
        assert!(matches!(version_numbers(&map, "v3"), Err(InventoryFault::Padding)));
        assert!(sidecar_digest(sidecar_text(&"A".repeat(128)).as_bytes()).is_ok());
        assert!(sidecar_digest(b"abc inventory.json").is_err());
    }

    #[test]
    fn padded_names_end_where_they_no_longer_fit() {
        let padded = Versions { head: 999, padding: 4 };
        assert!(padded.fits(999) && !padded.fits(1000));
        assert!(Versions { head: 1, padding: 0 }.fits(100_000));
    }

    #[test]
    fn keys_count_against_the_path_budget_and_a_short_digest_stops_the_read() {
        let (good, _) = next_version(None, "urn:x", &[file("a", 'a')], meta()).unwrap();
        let text = String::from_utf8(good.to_bytes()).unwrap();
        // The review's millions of `"1f": []`: refused at the first, not after all are read.
        let keys: String = (0..1000).map(|i| format!("\"{i:x}\": [], ")).collect();
        let bad = text.replacen("\"manifest\": {", &format!("\"manifest\": {{{keys}"), 1);
        let e = parse(bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("not a SHA-512"), "{e}");
        // Each key costs one from the budget, as each path does: past it, the read stops.
        bounded::start();
        for _ in 0..MAX_PATHS {
            bounded::charge::<serde_json::Error>().unwrap();
        }
        assert!(bounded::charge::<serde_json::Error>().is_err());
    }
}
