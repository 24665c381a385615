//! A replica in a bucket of an S3-compatible object store (Garage, MinIO, AWS), through
//! `object_store`.
//!
//! Every PUT carries `x-amz-checksum-sha256` (per part for multipart uploads), which the server
//! verifies over the bytes it receives and refuses on mismatch; the package's SHA-512 travels
//! as object metadata (`x-amz-meta-sha512`) so a HEAD tells what the object should hold.
//! Garage (2.5 still) ignores `If-None-Match`, so write-once is enforced by looking before
//! writing (the conditional PUT is sent as well where webaip writes an OCFL root's files in
//! place: a store that honours it refuses the overwrite the look could miss).
//! Several endpoints of the same store are tried in order, so a node that is down is passed
//! over.

use std::io::{self, Read};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::StreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder, Checksum};
use object_store::path::Path as ObjectPath;
use object_store::{
    Attribute, Attributes, ClientOptions, GetOptions, ObjectStore, ObjectStoreExt, PutMode,
    PutMultipartOptions, PutOptions, PutPayload, RetryConfig, WriteMultipart,
};

use super::replica::{
    CLAIM, Level, ListedObject, Replica, Source, StoredObject, claim_digest, unique_suffix,
};
use super::{CopyFailure, KeyProblem, StoreError};
use crate::formats::digest::{Sha512, hex};

/// Files up to this size go in one PUT; larger ones in parts of this size (each part is held in
/// memory while it is sent, so memory is bounded by parts in flight, not file size).
const PART: usize = 8 << 20;
/// Parts of one file in flight.
const PARTS_IN_FLIGHT: usize = 2;
/// The metadata key of the SHA-512.
const SHA512_META: &str = "sha512";
/// How long a claim is left to settle before it is read back. Garage has no conditional PUT
/// (it ignores `If-None-Match`): two puts that both saw no claim both write one, and the last
/// write wins. Each reads the claim back only after this delay, longer than a small PUT takes,
/// so both read the same winner.
const CLAIM_SETTLE: Duration = Duration::from_millis(1000);
/// Longest claim object read.
const CLAIM_LIMIT: usize = 1024;

/// Why a listed key of the webaip layout that is not in object_store's encoding (another
/// program wrote it) cannot be a copy.
const FOREIGN_KEY: &str = "its key is not one webaip stores a name under (another program wrote it): webaip cannot read or delete it";

/// One runtime for every S3 replica: requests are driven from the caller's thread. Building it
/// fails only when the system refuses threads; that is an error of the store, not a panic.
fn runtime() -> Result<&'static tokio::runtime::Runtime, StoreError> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, Arc<io::Error>>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(Arc::new)
    })
    .as_ref()
    .map_err(|e| StoreError::Runtime(e.clone()))
}

/// Where an S3 replica lives, as its configuration says.
#[derive(Clone, Copy)]
pub(crate) struct Bucket<'a> {
    /// Endpoints of one store, tried in order.
    pub(crate) endpoints: &'a [String],
    pub(crate) bucket: &'a str,
    pub(crate) region: &'a str,
    /// Environment variables holding the credentials.
    pub(crate) access_key_env: &'a str,
    pub(crate) secret_key_env: &'a str,
    /// Key prefix inside the bucket.
    pub(crate) prefix: &'a str,
    /// The longest key the store takes, in bytes.
    pub(crate) max_key_bytes: usize,
}

/// A replica in a bucket.
pub(crate) struct S3Replica {
    name: String,
    bucket: String,
    prefix: String,
    /// (endpoint, client) in the order they are tried.
    stores: Vec<(String, Arc<AmazonS3>)>,
    /// Keys are taken as they are, not encoded (an OCFL root).
    raw_keys: bool,
    /// The longest key the store takes, in bytes.
    max_key: usize,
}

impl S3Replica {
    /// Hands the object `key` (the part `opts` asks for) to `sink`, from the first endpoint
    /// that has it; how many bytes there were. Not `each`: the sink is not re-entrant, and a
    /// read that failed half-way is not resumed from another endpoint into the same sink.
    fn get_into(
        &self,
        key: &str,
        opts: GetOptions,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError> {
        let path = self.path(key)?;
        let mut total = 0u64;
        let mut failures = Vec::new();
        for (endpoint, store) in &self.stores {
            let r = runtime()?.block_on(async {
                let mut stream = store.get_opts(&path, opts.clone()).await?.into_stream();
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk?;
                    sink(&chunk).map_err(|e| object_store::Error::Generic {
                        store: "sink",
                        source: Box::new(e),
                    })?;
                    total += chunk.len() as u64;
                }
                Ok::<_, object_store::Error>(())
            });
            match r {
                Ok(()) => return Ok(total),
                Err(e) if total == 0 && !matches!(e, object_store::Error::NotFound { .. }) => {
                    failures.push((endpoint.clone(), e));
                }
                Err(e) => return Err(self.err(key, e.into())),
            }
        }
        Err(self.err(key, CopyFailure::Endpoints(failures)))
    }

    /// A replica on `bucket`, reached through its endpoints, with credentials from the
    /// environment variables it names.
    pub(crate) fn new(name: &str, b: &Bucket<'_>) -> Result<Self, StoreError> {
        let Bucket { endpoints, bucket, region, access_key_env, secret_key_env, prefix, .. } = *b;
        let var = |v: &str| {
            std::env::var(v).map_err(|source| StoreError::MissingCredential {
                replica: name.into(),
                variable: v.into(),
                source,
            })
        };
        let (key, secret) = (var(access_key_env)?, var(secret_key_env)?);
        if endpoints.is_empty() {
            return Err(StoreError::NoEndpoints(name.into()));
        }
        let mut stores = Vec::new();
        for endpoint in endpoints {
            let s3 = AmazonS3Builder::new()
                .with_endpoint(endpoint)
                .with_region(region)
                .with_bucket_name(bucket)
                .with_access_key_id(&key)
                .with_secret_access_key(&secret)
                .with_virtual_hosted_style_request(false)
                .with_checksum_algorithm(Checksum::SHA256)
                // NB: client options replace the builder's, allow_http included.
                .with_client_options(
                    ClientOptions::new()
                        .with_allow_http(endpoint.starts_with("http://"))
                        .with_connect_timeout(Duration::from_secs(3))
                        .with_timeout(Duration::from_secs(120)),
                )
                .with_retry(RetryConfig {
                    max_retries: 2,
                    retry_timeout: Duration::from_secs(15),
                    ..RetryConfig::default()
                })
                .build()
                .map_err(|source| StoreError::Client {
                    replica: name.into(),
                    endpoint: endpoint.clone(),
                    source: Box::new(source),
                })?;
            stores.push((endpoint.clone(), Arc::new(s3)));
        }
        let (name, bucket, prefix) = (name.into(), bucket.into(), prefix.into());
        let max_key = b.max_key_bytes;
        Ok(S3Replica { name, bucket, prefix, stores, raw_keys: false, max_key })
    }

    /// The object path of `key`. An OCFL root's keys are taken as they are (OCFL's paths are
    /// already validated: no empty, `.` or `..` segment, no control character), so an
    /// object directory `urn%3auuid...` is that key in the bucket, as other OCFL readers
    /// expect; the webaip layout's keys keep object_store's encoding, as stored so far.
    ///
    /// A webaip-layout replica's keys all start with a two-character partition: any other
    /// key is one of the OCFL root `store migrate` writes beside them (its declaration files,
    /// its objects under three-digit tuples), taken as it is, so that the migration, and the
    /// reads meanwhile, find the objects where OCFL readers will.
    fn path(&self, key: &str) -> Result<ObjectPath, StoreError> {
        let full = format!("{}{key}", self.prefix);
        if !self.raw_keys && (key.is_empty() || in_partition(key)) {
            return Ok(ObjectPath::from(full));
        }
        ObjectPath::parse(full).map_err(|e| self.err(key, object_store::Error::from(e).into()))
    }

    /// The key `stored` (a listed location, the prefix taken off) stands for: the inverse of
    /// `path`, so listed keys compare with names and go back to `delete` or `read` as they
    /// are. A webaip-layout key is decoded; `None` for one `path` would not store so.
    fn logical(&self, stored: &str) -> Option<String> {
        if self.raw_keys || !in_partition(stored) {
            return Some(stored.to_string());
        }
        decoded(stored)
    }

    /// A listed object from its stored key (see `logical`); one webaip cannot address is
    /// listed as it is stored, with why it cannot be a copy.
    fn listed(&self, stored: String, size: u64) -> ListedObject {
        match self.logical(&stored) {
            Some(key) => ListedObject { key, size, problem: None },
            None => ListedObject { key: stored, size, problem: Some(FOREIGN_KEY.into()) },
        }
    }

    /// A replica whose keys are an OCFL root's, taken as they are (see `path`).
    pub(crate) fn ocfl(mut self) -> Self {
        self.raw_keys = true;
        self
    }

    fn err(&self, key: &str, source: CopyFailure) -> StoreError {
        StoreError::Replica {
            replica: self.name.clone(),
            key: key.into(),
            source: Box::new(source),
        }
    }

    /// Runs `op` against each endpoint in turn until one answers; "not found" is an answer.
    fn each<T, F, Fut>(&self, key: &str, op: F) -> Result<T, StoreError>
    where
        F: Fn(Arc<AmazonS3>) -> Fut,
        Fut: Future<Output = Result<T, object_store::Error>>,
    {
        let mut failures = Vec::new();
        for (endpoint, store) in &self.stores {
            match runtime()?.block_on(op(store.clone())) {
                Ok(v) => return Ok(v),
                Err(e @ object_store::Error::NotFound { .. }) => {
                    return Err(self.err(key, CopyFailure::NotFound(e)));
                }
                Err(e) => failures.push((endpoint.clone(), e)),
            }
        }
        Err(self.err(key, CopyFailure::Endpoints(failures)))
    }

    /// Uploads `source` to `key`. With `verify`, the bytes are hashed as they are sent and
    /// published only when their SHA-512 is `sha512`: a single PUT is not sent, a multipart
    /// upload is aborted (its parts never become an object).
    fn upload(&self, key: &str, up: Upload) -> Result<(), StoreError> {
        let Upload { source, size, sha512, verify } = up;
        let path = self.path(key)?;
        let mut attributes = Attributes::new();
        attributes.insert(Attribute::Metadata(SHA512_META.into()), sha512.to_string().into());
        let wrong = |found: String| CopyFailure::Digest { found, expected: sha512.into() };
        let r = self.each(key, |store| {
            let (path, attributes) = (path.clone(), attributes.clone());
            async move {
                let io = |e: io::Error| object_store::Error::Generic {
                    store: "file",
                    source: Box::new(e),
                };
                let mut hash = verify.then(Sha512::new);
                let mismatch = |h: Option<Sha512>| {
                    let found = hex(&h?.finalize());
                    (found != sha512).then_some(found)
                };
                let mut file = source.open().map_err(io)?;
                if size <= PART as u64 {
                    let mut bytes = Vec::with_capacity(size as usize);
                    file.read_to_end(&mut bytes).map_err(io)?;
                    if let Some(h) = hash.as_mut() {
                        h.update(&bytes);
                    }
                    if let Some(found) = mismatch(hash) {
                        return Ok(Some(found));
                    }
                    let opts = PutOptions { attributes, ..PutOptions::default() };
                    store.put_opts(&path, PutPayload::from(bytes), opts).await?;
                    return Ok(None);
                }
                let opts = PutMultipartOptions { attributes, ..PutMultipartOptions::default() };
                let upload = store.put_multipart_opts(&path, opts).await?;
                let mut writer = WriteMultipart::new_with_chunk_size(upload, PART);
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = match file.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            let _ = writer.abort().await;
                            return Err(io(e));
                        }
                    };
                    if let Some(h) = hash.as_mut() {
                        h.update(&buf[..n]);
                    }
                    writer.wait_for_capacity(PARTS_IN_FLIGHT).await?;
                    writer.write(&buf[..n]);
                }
                if let Some(found) = mismatch(hash) {
                    writer.abort().await?;
                    return Ok(Some(found));
                }
                writer.finish().await?;
                Ok(None)
            }
        })?;
        match r {
            None => Ok(()),
            Some(found) => Err(self.err(key, wrong(found))),
        }
    }
}

/// The name a stored key of the webaip layout was written from: `path` percent-encodes each
/// segment (object_store's `PathPart`: `%`, `#`, `~`, brackets, braces, `^`, `|`, `<`, `>`,
/// `"`, `\\`, backquote, `*`, `?`, control characters and every non-ASCII byte), so a listing
/// gives `page %232.warc.gz` for `page #2.warc.gz`. `None` when decoding and encoding again
/// does not give `stored` back: no name of webaip's is stored so (another program wrote it).
fn decoded(stored: &str) -> Option<String> {
    let bytes = stored.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = stored.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let name = String::from_utf8(out).ok()?;
    (ObjectPath::from(name.as_str()).as_ref() == stored).then_some(name)
}

/// Whether `key` is below a two-character partition (the webaip layout's keys all are; an
/// OCFL root's never: its tuples have three digits).
fn in_partition(key: &str) -> bool {
    key.split('/').next().is_some_and(|p| p.len() == 2)
}

/// What [`S3Replica::upload`] sends.
struct Upload<'a> {
    source: Source<'a>,
    size: u64,
    sha512: &'a str,
    /// Hash the bytes as they are sent; publish only when they are `sha512`.
    verify: bool,
}

impl Replica for S3Replica {
    fn name(&self) -> &str {
        &self.name
    }

    fn stat(&self, key: &str) -> Result<Option<StoredObject>, StoreError> {
        let path = self.path(key)?;
        let r = self.each(key, |store| {
            let path = path.clone();
            async move {
                match store.get_opts(&path, GetOptions::default().with_head(true)).await {
                    Ok(r) => Ok(Some(r)),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            }
        })?;
        Ok(r.map(|r| StoredObject {
            size: r.meta.size,
            sha512: r
                .attributes
                .get(&Attribute::Metadata(SHA512_META.into()))
                .map(|v| v.as_ref().to_string()),
        }))
    }

    fn claim_order(&self) -> (u8, String) {
        let endpoint = self.stores.first().map(|(e, _)| e.as_str()).unwrap_or_default();
        (1, format!("{endpoint} {}{}", self.bucket, self.prefix))
    }

    fn create(&self, key: &str, source: Source, size: u64, sha512: &str) -> Result<(), StoreError> {
        // Garage ignores If-None-Match on PUT: look first.
        if self.stat(key)?.is_some() {
            return Err(StoreError::Exists { replica: self.name.clone(), key: key.into() });
        }
        self.upload(key, Upload { source, size, sha512, verify: false })
    }

    fn replace(
        &self,
        key: &str,
        source: Source,
        size: u64,
        sha512: &str,
    ) -> Result<(), StoreError> {
        self.upload(key, Upload { source, size, sha512, verify: false })
    }

    fn write_verified(
        &self,
        key: &str,
        source: Source,
        size: u64,
        sha512: &str,
    ) -> Result<(), StoreError> {
        self.upload(key, Upload { source, size, sha512, verify: true })
    }

    fn write_bytes(&self, key: &str, bytes: &[u8], create: bool) -> Result<(), StoreError> {
        // Garage (2.5) ignores If-None-Match, so a create looks first; the conditional PUT is
        // still sent, for stores that honour it (AWS S3, MinIO), where it closes the window
        // between the look and the write.
        if create && self.stat(key)?.is_some() {
            return Err(StoreError::Exists { replica: self.name.clone(), key: key.into() });
        }
        let path = self.path(key)?;
        let mut attributes = Attributes::new();
        let sha = {
            let mut h = Sha512::new();
            h.update(bytes);
            hex(&h.finalize())
        };
        attributes.insert(Attribute::Metadata(SHA512_META.into()), sha.into());
        let mode = if create { PutMode::Create } else { PutMode::Overwrite };
        let r = self.each(key, |store| {
            let (path, attributes) = (path.clone(), attributes.clone());
            let body = PutPayload::from(bytes.to_vec());
            let opts = PutOptions { attributes, mode: mode.clone(), ..PutOptions::default() };
            async move { store.put_opts(&path, body, opts).await.map(|_| ()) }
        });
        match r {
            Err(StoreError::Replica { source, .. })
                if matches!(
                    *source,
                    CopyFailure::Endpoints(ref f) if f.iter().any(|(_, e)| matches!(
                        e,
                        object_store::Error::AlreadyExists { .. }
                            | object_store::Error::Precondition { .. }
                    ))
                ) =>
            {
                Err(StoreError::Exists { replica: self.name.clone(), key: key.into() })
            }
            r => r,
        }
    }

    fn read(
        &self,
        key: &str,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError> {
        self.get_into(key, GetOptions::new(), sink)
    }

    fn read_range(
        &self,
        key: &str,
        range: std::ops::Range<u64>,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, StoreError> {
        self.get_into(key, GetOptions::new().with_range(Some(range)), sink)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ListedObject>, StoreError> {
        let path = self.path(prefix)?;
        let skip = self.prefix.len();
        let claim = format!("{prefix}/{CLAIM}");
        let listed = self.each(prefix, |store| {
            let path = path.clone();
            async move {
                let mut out = Vec::new();
                let mut s = store.list(Some(&path));
                while let Some(m) = s.next().await {
                    let m = m?;
                    let stored = m.location.as_ref().get(skip..).unwrap_or_default().to_string();
                    out.push((stored, m.size));
                }
                Ok(out)
            }
        })?;
        let mut out: Vec<ListedObject> =
            listed.into_iter().map(|(stored, size)| self.listed(stored, size)).collect();
        out.retain(|o| o.key != claim);
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn packages(&self) -> Result<Vec<String>, StoreError> {
        let root = (!self.prefix.is_empty()).then(|| ObjectPath::from(self.prefix.as_str()));
        let skip = self.prefix.len();
        self.each("", |store| {
            let root = root.clone();
            async move {
                let mut out = Vec::new();
                let parts = store.list_with_delimiter(root.as_ref()).await?;
                // Only the layout's partitions: an OCFL root `store migrate` is writing
                // beside them has its tuples and its extensions there too.
                let partitions = parts
                    .common_prefixes
                    .into_iter()
                    .filter(|p| p.parts().next_back().is_some_and(|l| l.as_ref().len() == 2));
                for part in partitions {
                    let pkgs = store.list_with_delimiter(Some(&part)).await?;
                    for p in pkgs.common_prefixes {
                        out.push(p.as_ref().get(skip..).unwrap_or_default().to_string());
                    }
                }
                out.sort();
                Ok(out)
            }
        })
    }

    fn claim(&self, dir: &str, digest: &str) -> Result<(String, bool), StoreError> {
        if let Some(holder) = self.claim_holder(dir)? {
            return Ok((holder, false));
        }
        // Look, write, wait, read back: see CLAIM_SETTLE.
        let key = format!("{dir}/{CLAIM}");
        let mine = format!("{digest} {}\n", unique_suffix());
        let path = self.path(&key)?;
        self.each(&key, |store| {
            let (path, body) = (path.clone(), mine.clone().into_bytes());
            async move { store.put(&path, PutPayload::from(body)).await.map(|_| ()) }
        })?;
        std::thread::sleep(CLAIM_SETTLE);
        let now = self.read_claim(&key)?;
        if now.as_deref() == Some(mine.as_bytes()) {
            return Ok((digest.to_string(), true));
        }
        let holder =
            now.as_deref().and_then(claim_digest).unwrap_or_else(|| "an unreadable claim".into());
        Ok((holder, false))
    }

    fn claim_holder(&self, dir: &str) -> Result<Option<String>, StoreError> {
        let key = format!("{dir}/{CLAIM}");
        Ok(self
            .read_claim(&key)?
            .map(|b| claim_digest(&b).unwrap_or_else(|| "an unreadable claim".into())))
    }

    fn key_problem(&self, key: &str) -> Option<KeyProblem> {
        let Ok(path) = self.path(key) else {
            return Some(match key.chars().find(char::is_ascii_control) {
                Some(c) => KeyProblem::Control(c),
                None => KeyProblem::Refused(format!("{}{key}", self.prefix)),
            });
        };
        let (length, limit) = (path.as_ref().len(), self.max_key);
        (length > limit).then_some(KeyProblem::TooLong { length, limit })
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.each(key, |store| {
            let path = path.clone();
            async move {
                match store.delete(&path).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(e),
                }
            }
        })
    }

    fn copy_within(&self, from: &str, to: &str) -> Result<bool, StoreError> {
        let (source, target) = (self.path(from)?, self.path(to)?);
        crate::hooks::write_point();
        self.each(from, |store| {
            let (source, target) = (source.clone(), target.clone());
            async move { store.copy(&source, &target).await }
        })?;
        Ok(true)
    }

    fn list_level(&self, prefix: &str) -> Result<Level, StoreError> {
        let path = (!format!("{}{prefix}", self.prefix).is_empty()).then(|| self.path(prefix));
        let path = path.transpose()?;
        let skip = self.prefix.len();
        // Keys as `list` gives them (a webaip-layout key decoded; one it could not have
        // written as it is stored).
        let key = |p: &ObjectPath| {
            let stored = p.as_ref().get(skip..).unwrap_or_default();
            self.logical(stored).unwrap_or_else(|| stored.to_string())
        };
        self.each(prefix, |store| {
            let path = path.clone();
            async move {
                let listed = store.list_with_delimiter(path.as_ref()).await?;
                let keys = listed.objects.iter().map(|o| key(&o.location)).collect();
                let dirs = listed.common_prefixes.iter().map(key).collect();
                Ok(Level { keys, dirs })
            }
        })
    }

    fn unclaim(&self, dir: &str) -> Result<(), StoreError> {
        let key = format!("{dir}/{CLAIM}");
        let path = self.path(&key)?;
        self.each(&key, |store| {
            let path = path.clone();
            async move {
                match store.delete(&path).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(e),
                }
            }
        })
    }
}

impl S3Replica {
    /// The claim object's bytes (at most CLAIM_LIMIT), or `None` when there is none.
    fn read_claim(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if self.stat(key)?.is_none() {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        self.read(key, &mut |c| {
            if bytes.len() + c.len() > CLAIM_LIMIT {
                return Err(io::Error::other("the claim is larger than a claim can be"));
            }
            bytes.extend_from_slice(c);
            Ok(())
        })?;
        Ok(Some(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name webaip stores in the webaip layout comes back from its stored key, whatever
    /// object_store encoded on the way in.
    #[test]
    fn stored_keys_decode_to_the_names_they_were_stored_from() {
        let names = [
            "ab/pkg/content/page #2.warc.gz",
            "ab/pkg/logs/a%b ~{c}^|<>\"\\`*?[x].log",
            "ab/pkg/é/ü 漢.log",
            "ab/pkg/line\nbreak\r\u{1}\u{7f}.log",
            "ab/pkg/plain-name_1.txt",
            "ab/pkg/%2523",
        ];
        for name in names {
            let stored = ObjectPath::from(name).as_ref().to_string();
            assert_eq!(decoded(&stored).as_deref(), Some(name), "{stored}");
        }
        assert_eq!(
            ObjectPath::from("ab/pkg/page #2.warc.gz").as_ref(),
            "ab/pkg/page %232.warc.gz",
            "the encoding this undoes"
        );
    }

    /// A stored key object_store would not have written from any name is no name's.
    #[test]
    fn keys_not_in_the_encoding_are_no_names() {
        for stored in [
            "ab/pkg/a#b",
            "ab/pkg/a%2Fb",
            "ab/pkg/%zz",
            "ab/pkg/%+1",
            "ab/pkg/%C3",
            "ab/pkg/%",
            "ab/pkg/a%2eb",
        ] {
            assert_eq!(decoded(stored), None, "{stored}");
        }
    }
}
