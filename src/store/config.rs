//! The replica configuration (TOML) and the layout of packages inside a replica.
//!
//! ```toml
//! state = "store-state.sqlite"      # relative to this file; the auxiliary state database
//! transfers = 8                     # transfers in flight
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

use super::StoreError;

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
}

fn default_state() -> PathBuf {
    PathBuf::from("store-state.sqlite")
}

fn default_transfers() -> usize {
    8
}

/// One replica. (No `deny_unknown_fields` here: serde cannot combine it with `flatten`; the
/// kind's own fields are checked.)
#[derive(Debug, Clone, Deserialize)]
pub struct ReplicaConfig {
    /// A short name, used in reports and the state database.
    pub name: String,
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
    },
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

impl StoreConfig {
    /// Reads a configuration file; the state path is resolved against its directory.
    pub fn load(path: &Path) -> Result<Self, StoreError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| StoreError::Config(format!("{}: {e}", path.display())))?;
        let mut c: StoreConfig = toml::from_str(&text)
            .map_err(|e| StoreError::Config(format!("{}: {e}", path.display())))?;
        if c.state.is_relative() {
            c.state = path.parent().unwrap_or(Path::new(".")).join(&c.state);
        }
        if c.replicas.is_empty() {
            return Err(StoreError::Config(format!("{}: no [[replica]]", path.display())));
        }
        let mut names = std::collections::HashSet::new();
        for r in &c.replicas {
            if !names.insert(&r.name) {
                return Err(StoreError::Config(format!("replica name {:?} used twice", r.name)));
            }
        }
        c.transfers = c.transfers.max(1);
        Ok(c)
    }
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
}
