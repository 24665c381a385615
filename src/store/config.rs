//! The replica configuration (TOML) and the layout of packages inside a replica.
//!
//! ```toml
//! state = "store-state.sqlite"      # relative to this file; the auxiliary state database
//! transfers = 8                     # transfers in flight (1 to 64)
//!
//! [[replica]]
//! name = "disk-a"
//! type = "fs"
//! root = "/srv/aip/replica-a"
//!
//! [[replica]]
//! name = "garage"
//! type = "s3"
//! endpoints = ["http://127.0.0.1:3900", "http://127.0.0.1:3910"]   # tried in order
//! bucket = "aip-replicas"
//! region = "garage"
//! access_key_env = "AWS_ACCESS_KEY_ID"        # the credentials come from the environment
//! secret_key_env = "AWS_SECRET_ACCESS_KEY"
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{ConfigProblem, Overlap, StoreError};

/// The whole configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// The state database (relative paths are taken from the configuration file's directory).
    #[serde(default = "default_state")]
    pub state: PathBuf,
    /// Transfers in flight (object stores want several: each request waits on the network).
    #[serde(default = "default_transfers")]
    pub transfers: usize,
    /// The replicas, in the order repairs prefer them as sources.
    #[serde(rename = "replica")]
    pub replicas: Vec<ReplicaConfig>,
    /// Who OCFL versions name as their user (default: `$USER`, `mailto:$USER@<host name>`).
    #[serde(default)]
    pub user: VersionUser,
}

/// The user an OCFL version names (`[user]` in the configuration).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionUser {
    /// A name (default: `$USER`).
    pub name: Option<String>,
    /// An address, a `mailto:` or other URI (default: `mailto:` the login at this host).
    pub address: Option<String>,
}

fn default_state() -> PathBuf {
    PathBuf::from("store-state.sqlite")
}

fn default_transfers() -> usize {
    8
}

/// Most transfers in flight a configuration may ask for: each is a thread with its own
/// buffers, and a put makes one task per copy, so a huge value only costs memory and time
/// (`transfers = 1000000` spent 71 s of CPU and 264 MB on a 62 KB package).
pub const MAX_TRANSFERS: usize = 64;

/// One replica. (No `deny_unknown_fields` here: serde cannot combine it with `flatten`; the
/// kind's own fields are checked.)
#[derive(Debug, Clone, Deserialize)]
pub struct ReplicaConfig {
    /// A short name, used in reports and the state database.
    pub name: String,
    /// How packages are laid out in it, as the configuration names it; `None`: the store's
    /// default, which [`StoreConfig::load`] and [`Store::open`](super::Store::open) resolve
    /// (see [`StoreConfig::resolve_layouts`]).
    #[serde(default)]
    pub layout: Option<ReplicaLayout>,
    /// Where it lives.
    #[serde(flatten)]
    pub kind: ReplicaKind,
}

/// A filesystem root or an S3-compatible bucket.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum ReplicaKind {
    /// A directory (a local disk, a mounted file system).
    Fs {
        /// The replica's root directory.
        root: PathBuf,
        /// With `layout = "ocfl"`: where objects are staged before they are committed (on
        /// the root's file system, outside the root; default: `ROOT.webaip-work` beside it).
        #[serde(default)]
        work: Option<PathBuf>,
    },
    /// A bucket of an S3-compatible object store.
    S3 {
        /// Endpoints of the same store (nodes, gateways), tried in order.
        endpoints: Vec<String>,
        /// The bucket.
        bucket: String,
        /// The region (Garage: `garage`).
        #[serde(default = "default_region")]
        region: String,
        /// Environment variable holding the access key id.
        #[serde(default = "default_access_env")]
        access_key_env: String,
        /// Environment variable holding the secret key.
        #[serde(default = "default_secret_env")]
        secret_key_env: String,
        /// A key prefix inside the bucket (e.g. `aip/`).
        #[serde(default)]
        prefix: String,
        /// The longest key the store takes, in bytes (the prefix included): 1024 on AWS S3
        /// and MinIO; Garage with its LMDB metadata engine takes 479. A file whose key would
        /// be longer is refused before anything of its package is written.
        #[serde(default = "default_max_key_bytes")]
        max_key_bytes: usize,
    },
}

/// How a replica lays out what it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplicaLayout {
    /// A directory per package (`<partition>/<escaped OBJID>/<file>`), write-once: the layout
    /// of stores made before OCFL was the default.
    Webaip,
    /// An OCFL 1.1 storage root: a versioned object per OBJID (what a new store gets).
    #[default]
    Ocfl,
}

fn default_max_key_bytes() -> usize {
    1024
}
fn default_region() -> String {
    "us-east-1".into()
}
fn default_access_env() -> String {
    "AWS_ACCESS_KEY_ID".into()
}
fn default_secret_env() -> String {
    "AWS_SECRET_ACCESS_KEY".into()
}

impl ReplicaConfig {
    /// Its layout: as named, else OCFL (the default of a new store; a configuration that
    /// [`StoreConfig::resolve_layouts`] went through names every replica's).
    pub fn layout(&self) -> ReplicaLayout {
        self.layout.unwrap_or_default()
    }
}

impl StoreConfig {
    /// Gives every replica whose configuration names no layout the store's default: OCFL,
    /// unless the state database records packages put in the webaip layout that no finished
    /// `store migrate` has moved (a store made before OCFL was the default keeps working as
    /// it was), or, with no database, a file system replica holds the webaip layout (a store
    /// whose database was lost). The database is read only when some replica names none, and
    /// never made.
    pub fn resolve_layouts(&mut self) -> Result<(), StoreError> {
        if self.replicas.iter().all(|r| r.layout.is_some()) {
            return Ok(());
        }
        let unnamed = unnamed_layout(&self.state, &self.replicas)?;
        for r in &mut self.replicas {
            r.layout.get_or_insert(unnamed);
        }
        Ok(())
    }

    /// Reads a configuration file; the state path is resolved against its directory.
    pub fn load(path: &Path) -> Result<Self, StoreError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| StoreError::ConfigUnreadable { path: path.into(), source })?;
        let mut c: StoreConfig = toml::from_str(&text)
            .map_err(|e| StoreError::ConfigSyntax { path: path.into(), source: Box::new(e) })?;
        let refuse = |problem| StoreError::ConfigRefused { path: path.into(), problem };
        if c.state.is_relative() {
            c.state = path.parent().unwrap_or(Path::new(".")).join(&c.state);
        }
        if c.replicas.is_empty() {
            return Err(refuse(ConfigProblem::NoReplica));
        }
        let mut names = std::collections::HashSet::new();
        for r in &c.replicas {
            if !names.insert(&r.name) {
                return Err(refuse(ConfigProblem::NameTwice(r.name.clone())));
            }
        }
        if c.transfers > MAX_TRANSFERS {
            return Err(refuse(ConfigProblem::TooManyTransfers(c.transfers)));
        }
        c.transfers = c.transfers.max(1);
        c.resolve_layouts()?;
        refuse_overlapping_replicas(&c.replicas).map_err(refuse)?;
        refuse_unsupported_ocfl(&c.replicas).map_err(refuse)?;
        Ok(c)
    }
}

/// The layout of a replica whose configuration names none (see
/// [`StoreConfig::resolve_layouts`]).
fn unnamed_layout(state: &Path, replicas: &[ReplicaConfig]) -> Result<ReplicaLayout, StoreError> {
    if !state.exists() {
        // No records (a new store, or a database lost): a file system root holding files
        // but no OCFL declaration is a webaip-layout replica, never taken for a new OCFL
        // root (buckets are not listed here: loading a configuration asks no network).
        return Ok(if replicas.iter().any(holds_webaip_layout) {
            ReplicaLayout::Webaip
        } else {
            ReplicaLayout::Ocfl
        });
    }
    let reader = super::state::StateReader::open(state)?;
    Ok(if reader.holds_unmigrated_packages()? {
        ReplicaLayout::Webaip
    } else {
        ReplicaLayout::Ocfl
    })
}

/// Whether `r` is a file system root holding the webaip layout: no OCFL storage root
/// declaration, and a package partition directory (two hex digits, see [`package_dir`]) among
/// its first entries.
fn holds_webaip_layout(r: &ReplicaConfig) -> bool {
    let ReplicaKind::Fs { root, .. } = &r.kind else { return false };
    let declared = root.join(super::ocfl::layout::ROOT_DECLARATION.0);
    if std::fs::symlink_metadata(declared).is_ok() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(root) else { return false };
    let partition = |e: &std::fs::DirEntry| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.len() == 2
            && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            && e.file_type().is_ok_and(|t| t.is_dir())
    };
    entries.take(1024).flatten().any(|e| partition(&e))
}

/// One layout for every replica; each file system root's work directory outside the root.
fn refuse_unsupported_ocfl(replicas: &[ReplicaConfig]) -> Result<(), ConfigProblem> {
    let ocfl = |r: &&ReplicaConfig| r.layout() == ReplicaLayout::Ocfl;
    let n = replicas.iter().filter(ocfl).count();
    if n == 0 {
        return Ok(());
    }
    if n != replicas.len() {
        return Err(ConfigProblem::MixedLayouts);
    }
    for r in replicas {
        match &r.kind {
            ReplicaKind::Fs { root, work } => {
                let work =
                    work.clone().unwrap_or_else(|| super::ocfl::fs::FsRoot::default_work(root));
                if resolved(&work).starts_with(resolved(root)) {
                    return Err(ConfigProblem::WorkInsideRoot(r.name.clone()));
                }
            }
            // A bucket root has no work directory inside it: its locks and quarantine are
            // local, beside the state database.
            ReplicaKind::S3 { .. } => {}
        }
    }
    Ok(())
}

/// Refuses two replicas that are one place, or one inside the other: every copy would be
/// counted twice, so a store that holds one copy would look replicated, and a copy lost there
/// would be lost on "both" (unrepairable). File system roots are compared as canonical paths
/// (links resolved; a root not made yet by its nearest existing ancestor) and, where both
/// exist, by device and inode along the way (bind mounts); buckets by endpoint, bucket and
/// key prefix.
fn refuse_overlapping_replicas(replicas: &[ReplicaConfig]) -> Result<(), ConfigProblem> {
    let places: Vec<Place> = replicas.iter().map(|r| Place::of(&r.kind)).collect();
    for (i, a) in places.iter().enumerate() {
        for (j, b) in places.iter().enumerate().skip(i + 1) {
            if let Some(how) = a.overlap(b) {
                return Err(ConfigProblem::Overlap {
                    first: replicas[i].name.clone(),
                    second: replicas[j].name.clone(),
                    how,
                });
            }
        }
    }
    Ok(())
}

/// Where a replica keeps its copies, in a form that can be compared.
enum Place {
    /// A canonical root, and the (device, inode) of it and of every existing ancestor.
    Fs { root: PathBuf, ids: Vec<(u64, u64)> },
    /// Normalised endpoints, the bucket and the key prefix.
    S3 { endpoints: Vec<String>, bucket: String, prefix: String },
}

impl Place {
    fn of(kind: &ReplicaKind) -> Place {
        match kind {
            ReplicaKind::Fs { root, .. } => {
                let root = resolved(root);
                let ids = root
                    .ancestors()
                    .filter_map(|a| std::fs::metadata(a).ok())
                    .map(|m| {
                        use std::os::unix::fs::MetadataExt;
                        (m.dev(), m.ino())
                    })
                    .collect();
                Place::Fs { root, ids }
            }
            ReplicaKind::S3 { endpoints, bucket, prefix, .. } => Place::S3 {
                endpoints: endpoints
                    .iter()
                    .map(|e| e.trim().trim_end_matches('/').to_ascii_lowercase())
                    .collect(),
                bucket: bucket.clone(),
                // Keys are the prefix and the key side by side: "" holds every other prefix.
                prefix: prefix.split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("/")
                    + if prefix.ends_with('/') { "/" } else { "" },
            },
        }
    }

    /// How `self` and `other` overlap, if they do.
    fn overlap(&self, other: &Place) -> Option<Overlap> {
        match (self, other) {
            (Place::Fs { root: a, ids: ia }, Place::Fs { root: b, ids: ib }) => {
                // ids[0] is the root itself when it exists.
                let own = |root: &Path, ids: &[(u64, u64)]| {
                    root.exists().then(|| ids.first().copied()).flatten()
                };
                if a == b || (own(a, ia).is_some() && own(a, ia) == own(b, ib)) {
                    Some(Overlap::SameRoot)
                } else if b.starts_with(a) || own(a, ia).is_some_and(|id| ib.contains(&id)) {
                    Some(Overlap::SecondInsideFirst)
                } else if a.starts_with(b) || own(b, ib).is_some_and(|id| ia.contains(&id)) {
                    Some(Overlap::FirstInsideSecond)
                } else {
                    None
                }
            }
            (
                Place::S3 { endpoints: ea, bucket: ba, prefix: pa },
                Place::S3 { endpoints: eb, bucket: bb, prefix: pb },
            ) => {
                if ba != bb || !ea.iter().any(|e| eb.contains(e)) {
                    None
                } else if pa == pb {
                    Some(Overlap::SameBucketAndPrefix)
                } else if pb.starts_with(pa.as_str()) || pa.starts_with(pb.as_str()) {
                    Some(Overlap::NestedPrefixes)
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// `path` made absolute with every link resolved; the part that does not exist yet (a root
/// made on first write) is appended to its nearest existing ancestor's canonical form, with
/// `.` and `..` taken lexically.
fn resolved(path: &Path) -> PathBuf {
    resolved_within(path, 0)
}

/// Links followed at most while resolving (as the kernel's own limit).
const MAX_LINKS: usize = 40;

fn resolved_within(path: &Path, links: usize) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let mut existing = absolute.as_path();
    let base = loop {
        if let Ok(c) = std::fs::canonicalize(existing) {
            break c;
        }
        // A link that leads nowhere yet (its target made on first write) stands for its
        // target: `b -> a` with `a` absent is the place `a` (both replicas would write there).
        if links < MAX_LINKS
            && let Ok(target) = std::fs::read_link(existing)
        {
            let mut p = existing.parent().unwrap_or(Path::new("/")).join(target);
            for part in rest.iter().rev() {
                p.push(part);
            }
            return resolved_within(&p, links + 1);
        }
        let (Some(parent), Some(last)) = (existing.parent(), existing.components().next_back())
        else {
            break existing.to_path_buf(); // the root
        };
        rest.push(last.as_os_str().to_os_string());
        existing = parent;
    };
    let mut out = base;
    for part in rest.iter().rev() {
        if part == ".." {
            out.pop();
        } else if part != "." {
            out.push(part);
        }
    }
    out
}

/// The directory of a package inside a replica (Kulturarw3-style, so no directory grows
/// without bound): two hex digits of the SHA-256 of the package identifier (256 partitions),
/// then the identifier made safe for any file system and object key, e.g.
/// `5c/urn_3Auuid_3Acc6256de-10c5-48e3-ad1c-e00354099eb2`. The package's own files go below.
pub fn package_dir(identifier: &str) -> String {
    let digest = Sha256::digest(identifier.as_bytes());
    format!("{:02x}/{}", digest[0], safe_name(identifier))
}

/// Letters, digits, `.` and `-` stay; every other byte becomes `_` and two hex digits, so the
/// mapping is reversible ([`unsafe_name`]) and the result is a single path segment.
pub(crate) fn safe_name(identifier: &str) -> String {
    let mut out = String::with_capacity(identifier.len());
    for b in identifier.bytes() {
        if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("_{b:02X}"));
        }
    }
    if out.starts_with('.') {
        // "." and ".." are not names; a leading dot hides the directory.
        out = format!("_2E{}", &out[1..]);
    }
    out
}

/// The identifier a [`safe_name`] was made from (`None` if it is not one).
pub(crate) fn unsafe_name(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'_' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_dirs_are_partitioned_and_reversible() {
        for id in ["urn:uuid:cc6256de-10c5-48e3-ad1c-e00354099eb2", "..", ".hidden", "a/b c_d%"] {
            let dir = package_dir(id);
            let (part, name) = dir.split_once('/').unwrap();
            assert_eq!(part.len(), 2);
            assert!(!name.contains('/') && !name.starts_with('.'), "{name}");
            assert_eq!(unsafe_name(name).as_deref(), Some(id));
        }
        assert_eq!(safe_name("urn:uuid:x"), "urn_3Auuid_3Ax");
        // 256 partitions, spread.
        let parts: std::collections::HashSet<String> =
            (0..2000).map(|i| package_dir(&format!("urn:uuid:{i}"))[..2].to_string()).collect();
        assert!(parts.len() > 250, "{}", parts.len());
    }

    /// A caller tells the refusals apart by variant, with the replicas and the file named.
    #[test]
    fn overlapping_replicas_and_other_refusals_are_variants() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("store.toml");
        let fs_replica = |name: &str, root: &str| {
            format!("[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nroot = \"{root}\"\n")
        };
        let load = |text: String| {
            std::fs::write(&p, text).unwrap();
            StoreConfig::load(&p).unwrap_err()
        };
        let root = dir.path().join("r");
        let (outer, inner) = (root.display().to_string(), root.join("in").display().to_string());
        let err = load(fs_replica("one", &outer) + &fs_replica("two", &inner));
        match &err {
            StoreError::ConfigRefused {
                path,
                problem: ConfigProblem::Overlap { first, second, how },
            } => {
                assert_eq!((path, first.as_str(), second.as_str()), (&p, "one", "two"));
                assert_eq!(*how, Overlap::SecondInsideFirst);
            }
            e => panic!("not an overlap: {e:?}"),
        }
        assert!(err.to_string().contains("replicas \"one\" and \"two\" nest"), "{err}");
        let err = load(fs_replica("one", &outer) + &fs_replica("two", &outer));
        assert!(matches!(
            err,
            StoreError::ConfigRefused {
                problem: ConfigProblem::Overlap { how: Overlap::SameRoot, .. },
                ..
            }
        ));
        let err = load(fs_replica("one", &outer) + &fs_replica("one", &inner));
        assert!(matches!(
            err,
            StoreError::ConfigRefused { problem: ConfigProblem::NameTwice(ref n), .. } if n == "one"
        ));
        let err = load(format!("transfers = 65\n{}", fs_replica("one", &outer)));
        assert!(matches!(
            err,
            StoreError::ConfigRefused { problem: ConfigProblem::TooManyTransfers(65), .. }
        ));
        assert!(matches!(load("state = [".into()), StoreError::ConfigSyntax { .. }));
        std::fs::remove_file(&p).unwrap();
        let err = StoreConfig::load(&p).unwrap_err();
        assert!(
            matches!(&err, StoreError::ConfigUnreadable { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound),
            "{err:?}"
        );
    }

    #[test]
    fn a_config_reads_both_kinds_of_replica() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("store.toml");
        std::fs::write(
            &p,
            "[[replica]]\nname = \"a\"\ntype = \"fs\"\nroot = \"/x\"\n\n[[replica]]\nname = \"g\"\ntype = \"s3\"\nendpoints = [\"http://127.0.0.1:3900\"]\nbucket = \"b\"\nregion = \"garage\"\n",
        )
        .unwrap();
        let c = StoreConfig::load(&p).unwrap();
        assert_eq!(c.replicas.len(), 2);
        assert_eq!(c.state, dir.path().join("store-state.sqlite"));
        assert!(matches!(c.replicas[1].kind, ReplicaKind::S3 { .. }));
        std::fs::write(&p, "[[replica]]\nname = \"a\"\ntype = \"tape\"\n").unwrap();
        assert!(StoreConfig::load(&p).is_err());
    }

    /// Two bucket replicas that share an endpoint and a bucket: refused when their key prefixes
    /// are one or nest, accepted when they are apart or the buckets differ.
    #[test]
    fn buckets_that_alias_or_nest_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("store.toml");
        let s3 = |name: &str, endpoint: &str, bucket: &str, prefix: &str| {
            format!(
                "[[replica]]\nname = \"{name}\"\ntype = \"s3\"\nendpoints = [\"{endpoint}\"]\nbucket = \"{bucket}\"\nprefix = \"{prefix}\"\n\n"
            )
        };
        let load = |text: String| {
            std::fs::write(&p, text).unwrap();
            StoreConfig::load(&p).map(|_| ()).map_err(|e| e.to_string())
        };
        for (b, why) in [
            (s3("b", "http://h:3900/", "x", "aip/"), "same bucket and prefix"),
            (s3("b", "HTTP://H:3900", "x", "aip/sub/"), "nest"),
            (s3("b", "http://h:3900", "x", ""), "nest"),
        ] {
            let e = load(s3("a", "http://h:3900", "x", "aip/") + &b).unwrap_err();
            assert!(e.contains("replicas \"a\" and \"b\"") && e.contains(why), "{e}");
        }
        for b in [s3("b", "http://h:3900", "y", "aip/"), s3("b", "http://h:3900", "x", "web/")] {
            load(s3("a", "http://h:3900", "x", "aip/") + &b).unwrap();
        }
    }

    #[test]
    fn transfers_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("store.toml");
        let replica = "[[replica]]\nname = \"a\"\ntype = \"fs\"\nroot = \"/x\"\n";
        std::fs::write(&p, format!("transfers = 1000000\n{replica}")).unwrap();
        let e = StoreConfig::load(&p).unwrap_err().to_string();
        assert!(e.contains("transfers = 1000000") && e.contains("64"), "{e}");
        std::fs::write(&p, format!("transfers = {MAX_TRANSFERS}\n{replica}")).unwrap();
        assert_eq!(StoreConfig::load(&p).unwrap().transfers, MAX_TRANSFERS);
        std::fs::write(&p, format!("transfers = 0\n{replica}")).unwrap();
        assert_eq!(StoreConfig::load(&p).unwrap().transfers, 1);
    }
}
