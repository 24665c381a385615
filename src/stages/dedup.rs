//! Deduplication: a response whose payload is already stored becomes a `revisit` record.
//!
//! The stage looks each record of a copied WARC up by its payload's SHA-1 (computed from the
//! bytes as the record was read, so a record whose `WARC-Payload-Digest` states something else
//! is looked up by what it holds) and length: in the stored payloads given with
//! `--dedup-against` ([`crate::index::digests`]), then, with `--dedup-within`, among the
//! earlier records of the same container (containers are written in parallel: within one,
//! "earlier" is the container's order; across them it would be whichever thread came first).
//! A match marks the item (`Revisit`); the writer then writes, in place of the stored
//! record, its revisit (`revisit_record`):
//!
//! - the record keeps its `WARC-Record-ID` (its concurrent `request` and `metadata` records
//!   name it in `WARC-Concurrent-To`, and stay as they were), its `WARC-Date`, target URI,
//!   IP address and every other field, in order;
//! - `WARC-Type: revisit`, `WARC-Profile` identical-payload-digest, `WARC-Refers-To` (the
//!   original's record id, when known), `WARC-Refers-To-Target-URI`, `WARC-Refers-To-Date`,
//!   `WARC-Refers-To-Container` and, for a package, `X-Webaip-Refers-To-Package` (its OBJID)
//!   are added; `WARC-Payload-Digest` states the payload's (the original's) digest;
//! - the block is the record's HTTP header as harvested, without the payload; its
//!   `Content-Length` and `WARC-Block-Digest` are the new block's; the record is written as
//!   `WARC/1.1` (the version of the fields it carries).
//!
//! `WARC-Refers-To-Container` follows Browsertrix (iipc/warc-specifications#111): `file://`
//! and the container's file name (`file://NAME.warc.gz`), a hint where to find the original;
//! the package that holds it is named by its OBJID in the revisit and in the METS.
//!
//! A migrated ARC record (`Item::Mapped`) becomes a revisit the same way
//! (`migrate::revisit`): it keeps its ARC fields, and its rebuild field states the payload's
//! length, so that `unmigrate --with` gives the ARC back with the stored payload. It does so
//! only when the original is named whole (its package's OBJID and its record id, as a
//! package given to `--dedup-against` states them) or is in the same container
//! (`--dedup-within`); a match in a CDXJ index or a digest table without both leaves the
//! record whole, since its payload could not be found again.
//!
//! Nothing of the new capture is lost but the payload's bytes, which are the stored ones; the
//! container's PREMIS object records that as an event, with a `dependency` / `requires`
//! relationship to every package it refers to.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Write};

use sha1::Digest;

use super::{Item, Stage, StageError, StagedItem};
use crate::capture::CaptureKind;
use crate::formats::digest::{BlockHasher, sha1_base32};
use crate::index::digests::{Algorithm, DedupSources, DigestKey, Found, StoredPayload};
use crate::model::{ByteRange, ReferencedPayload};

// The revisit's field names live with the WARC format, which `get` reads them with too.
use crate::formats::warc::header::{FIELD_REFERS_TO_PACKAGE, IDENTICAL_PAYLOAD};

/// What deduplication looks up: `--dedup-against` and `--dedup-within`.
pub struct Dedup {
    /// The stored payloads.
    pub against: DedupSources,
    /// Whether earlier records of the same container count as stored.
    pub within: bool,
}

impl std::fmt::Debug for Dedup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dedup {{ tables: {}, within: {} }}", self.against.tables.len(), self.within)
    }
}

/// An item to be written as a revisit of a stored payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Revisit {
    /// The original.
    pub refers: StoredPayload,
    /// The payload's digest.
    pub digest: DigestKey,
    /// The original is an earlier record of this container (`--dedup-within`).
    pub own: bool,
}

impl Revisit {
    /// Where the payload is stored, as the revisit's METS entry states it: the original's
    /// member and payload ranges as the digest table gave them, or `own` (the member and the
    /// payload's offset in it) where this run wrote the original. `len` and `mime`: the
    /// payload's length and declared type.
    pub(crate) fn referenced(
        &self,
        own: Option<(ByteRange, u64)>,
        len: u64,
        mime: &str,
    ) -> ReferencedPayload {
        let stored = &self.refers;
        let (member, payload) = match own {
            Some((member, begin)) => (Some(member), Some(begin)),
            None => {
                let known = stored.length > 0;
                let member =
                    known.then_some(ByteRange { begin: stored.offset, len: stored.length });
                (member, stored.payload_offset)
            }
        };
        ReferencedPayload {
            package: stored.package.clone(),
            container: stored.container.clone(),
            record_id: stored.record_id.clone(),
            uri: stored.url.clone(),
            date: stored.date.clone(),
            member,
            payload: payload.map(|begin| ByteRange { begin, len }),
            sha1: self.digest.hex_value(),
            len,
            mime: mime.to_string(),
        }
    }
}

/// Marks the items whose payload is stored ([`Revisit`]).
pub(crate) struct DedupStage<'a> {
    dedup: &'a Dedup,
    /// The container written (its path in the package): where earlier records of this run
    /// are, for `--dedup-within`.
    container: String,
    seen: HashMap<DigestKey, (u64, StoredPayload)>,
    /// Payloads kept whole because they carry the marks of a SHA-1 collision attack.
    pub(crate) collisions: u64,
}

impl<'a> DedupStage<'a> {
    /// A stage for the container at `container` (its path in the package).
    pub(crate) fn new(dedup: &'a Dedup, container: String) -> Self {
        DedupStage { dedup, container, seen: HashMap::new(), collisions: 0 }
    }

    fn look_up(&mut self, s: &StagedItem) -> Result<Option<Revisit>, StageError> {
        let Some(candidate) = Candidate::of(s)? else { return Ok(None) };
        let Some(digest) = DigestKey::new(Algorithm::Sha1, &candidate.sha1) else {
            return Ok(None);
        };
        // A migrated ARC record comes back only from an original a revisit can name whole:
        // its package (OBJID) and record id. A hit from an index without them leaves it whole,
        // whichever source comes first.
        let mapped = matches!(s.item, Item::Mapped(_));
        let found = self
            .dedup
            .against
            .find_where(&digest, candidate.len, |f: &Found| !mapped || f.stored.names_its_record())
            .map_err(|source| StageError::Dedup { origin: s.item.origin(), source })?;
        if let Some(f) = found {
            return self.unless_collision(s, Revisit { refers: f.stored, digest, own: false });
        }
        if !self.dedup.within {
            return Ok(None);
        }
        if let Some((len, stored)) = self.seen.get(&digest)
            && *len == candidate.len
        {
            let revisit = Revisit { refers: stored.clone(), digest, own: true };
            return self.unless_collision(s, revisit);
        }
        let stored = StoredPayload {
            url: candidate.url,
            date: candidate.date,
            record_id: candidate.record_id,
            container: self.container.clone(),
            offset: 0,
            length: 0,
            package: None,
            payload_offset: None,
        };
        self.seen.insert(digest, (candidate.len, stored));
        Ok(None)
    }

    /// `revisit`, unless the payload carries the marks of a SHA-1 collision attack (SHA-1DC's
    /// detection, as Git uses): two such payloads share a SHA-1 and a length with different
    /// bytes (the SHAttered PDFs), so a revisit would lose this one's bytes. The payload is read
    /// again only here, for the few records about to become revisits.
    fn unless_collision(
        &mut self,
        s: &StagedItem,
        revisit: Revisit,
    ) -> Result<Option<Revisit>, StageError> {
        let io = |source| StageError::Io { path: s.item.origin(), source };
        let checked = match &s.item {
            Item::Stored(r) => match r.payload().map_err(io)? {
                Some(reader) => shows_collision_attack(None, || Ok(reader)),
                None => return Ok(None),
            },
            Item::Capture(c) => shows_collision_attack(s.held.as_deref(), || c.payload.open()),
            Item::Mapped(m) => shows_collision_attack(m.payload_bytes(), || m.payload_reader()),
            Item::Between(_) => return Ok(None),
        };
        if !checked.map_err(io)? {
            return Ok(Some(revisit));
        }
        log::warn!(
            "{}: the payload carries the marks of a SHA-1 collision attack: kept whole, not \
             made a revisit of a payload with the same SHA-1",
            s.item.origin()
        );
        self.collisions += 1;
        Ok(None)
    }
}

/// Whether `held` bytes, else what `open` gives, carry the marks of one half of a SHA-1
/// collision attack (SHA-1DC's detection).
fn shows_collision_attack<R: Read>(
    held: Option<&[u8]>,
    open: impl FnOnce() -> io::Result<R>,
) -> io::Result<bool> {
    use sha1_checked::Digest;
    let mut hasher = sha1_checked::Sha1::new();
    match held {
        Some(bytes) => hasher.update(bytes),
        None => {
            let mut reader = open()?;
            let mut buf = vec![0u8; 256 << 10];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => hasher.update(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(hasher.try_finalize().has_collision())
}

/// A response that may be a revisit: its payload's SHA-1 and length, and what a revisit of it
/// would state of it as the original.
struct Candidate {
    sha1: [u8; 20],
    len: u64,
    url: String,
    date: String,
    /// Known for a stored record; a capture's is given when it is written.
    record_id: Option<String>,
}

impl Candidate {
    /// The response `s` holds, if deduplication can make a revisit of it: an HTTP response
    /// (a header of its own to keep) with a payload. A capture counts only when written as
    /// harvested to the content container: not infected or unscanned (its verdict needs its
    /// bytes), not given a new payload by a stage (the harvested one goes elsewhere).
    fn of(s: &StagedItem) -> Result<Option<Candidate>, StageError> {
        match &s.item {
            Item::Stored(r) => {
                let (Some(sha1), Some(c), Some(_)) = (&r.payload_sha1, &r.file.content, &r.bytes)
                else {
                    return Ok(None);
                };
                // Only an HTTP response keeps something of its own: its header.
                let http = c.range.begin > r.header_len;
                if r.warc_type != "response" || c.range.len == 0 || !http {
                    return Ok(None);
                }
                Ok(Some(Candidate {
                    sha1: *sha1,
                    len: c.range.len,
                    url: r.target_uri.clone().unwrap_or_default(),
                    date: r.date.clone(),
                    record_id: Some(format!("<{}>", r.file.record_id)),
                }))
            }
            Item::Capture(c) => {
                let http = c.http_header.as_ref().is_some_and(|h| !h.is_empty());
                let as_harvested = s.replacement.is_none()
                    && s.route == super::Route::Content
                    && s.findings.is_empty();
                let len = s.held.as_ref().map_or(c.payload.len(), |b| b.len() as u64);
                if c.kind != CaptureKind::Response || !http || !as_harvested || len == 0 {
                    return Ok(None);
                }
                let sha1 = payload_sha1(s, s.held.as_deref(), || c.payload.open())?;
                Ok(Some(Candidate {
                    sha1,
                    len,
                    url: c.uri.clone(),
                    date: c.date.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    record_id: None,
                }))
            }
            Item::Mapped(m) => Candidate::of_mapped(s, m),
            Item::Between(_) => Ok(None),
        }
    }

    /// A migrated ARC record that may be a revisit: an HTTP response with a header of its own
    /// and a whole payload (a truncated one is not the stored payload, whatever it holds),
    /// written as harvested to the content container. The ARC comes back from the revisit's
    /// fields and the stored payload (`migrate::revisit`).
    fn of_mapped(
        s: &StagedItem,
        m: &crate::formats::arc_to_warc::MappedRecord,
    ) -> Result<Option<Candidate>, StageError> {
        let spec = &m.mapped.spec;
        let len = m.payload_len();
        let http = spec.warc_type == "response" && m.mapped.payload_offset > 0;
        let as_harvested = s.route == super::Route::Content && s.findings.is_empty();
        if !http || !as_harvested || len == 0 || spec.truncated.is_some() {
            return Ok(None);
        }
        let sha1 = payload_sha1(s, m.payload_bytes(), || m.payload_reader())?;
        Ok(Some(Candidate {
            sha1,
            len,
            url: spec.target_uri.clone().unwrap_or_default(),
            date: spec.date.clone(),
            record_id: Some(spec.record_id.clone()),
        }))
    }
}

/// The SHA-1 of `held` bytes, else of what `open` gives (the CPU's SHA instructions; the
/// collision check is [`shows_collision_attack`], for revisits only).
fn payload_sha1<R: Read>(
    s: &StagedItem,
    held: Option<&[u8]>,
    open: impl FnOnce() -> io::Result<R>,
) -> Result<[u8; 20], StageError> {
    let io = |source| StageError::Io { path: s.item.origin(), source };
    match held {
        Some(b) => Ok(sha1::Sha1::digest(b).into()),
        None => Ok(crate::formats::digest::sha1_of(open().map_err(io)?).map_err(io)?.1),
    }
}

impl Stage for DedupStage<'_> {
    fn run(&mut self, batch: &mut [StagedItem]) -> Result<(), StageError> {
        for s in batch.iter_mut() {
            s.revisit = self.look_up(s)?.map(Box::new);
        }
        Ok(())
    }
}

/// What deduplication did in one container: revisits written, bytes saved, and the stored
/// payloads referred to by package (OBJID; "" for this package's own).
#[derive(Debug, Default, Clone)]
pub(crate) struct DedupTally {
    /// Revisit records written.
    pub revisits: u64,
    /// Stored bytes of the records they replace, less their own; `None` where not measured
    /// (captures are compressed as they are written).
    pub bytes_saved: Option<u64>,
    /// Payload bytes not stored again.
    pub payload_bytes: u64,
    /// Revisits by where their originals are.
    pub packages: BTreeMap<Holder, u64>,
}

/// Where the original of a revisit is, as far as deduplication knows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Holder {
    /// Earlier in this package's own container (`--dedup-within`).
    Own,
    /// An earlier package, by OBJID.
    Package(String),
    /// A container an index names, in no package known (`--dedup-against INDEX`).
    Indexed,
}

impl Holder {
    /// Where the original of `revisit` is.
    pub(crate) fn of(revisit: &Revisit) -> Holder {
        match (&revisit.refers.package, revisit.own) {
            (Some(objid), _) => Holder::Package(objid.clone()),
            (None, true) => Holder::Own,
            (None, false) => Holder::Indexed,
        }
    }
}

/// The bytes of the revisit record of a stored record: `record` is its header and HTTP
/// header (`header_len` bytes of WARC header), as stored, without the payload.
pub(crate) fn revisit_record(head: &[u8], header_len: usize, revisit: &Revisit) -> Option<Vec<u8>> {
    let header = std::str::from_utf8(head.get(..header_len)?).ok()?;
    let block = &head[header_len..];
    let mut lines = header.split("\r\n").filter(|l| !l.is_empty());
    lines.next()?; // the version line
    let d = BlockHasher::digest(block, block.len() as u64);
    let mut out = String::from("WARC/1.1\r\n");
    for line in lines {
        let name = line.split(':').next().unwrap_or("").trim();
        let is = |n: &str| name.eq_ignore_ascii_case(n);
        if is("WARC-Type") {
            out.push_str("WARC-Type: revisit\r\n");
        } else if is("Content-Length")
            || is("WARC-Block-Digest")
            || is("WARC-Payload-Digest")
            || is("WARC-Profile")
            || name.to_ascii_lowercase().starts_with("warc-refers-to")
        {
            continue;
        } else {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    for (name, value) in revisit_fields(revisit) {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("WARC-Block-Digest: {}\r\n", sha1_base32(&d.block_sha1)));
    out.push_str(&format!("Content-Length: {}\r\n", block.len()));
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(block);
    bytes.extend_from_slice(crate::formats::warc::writer::RECORD_END);
    Some(bytes)
}

/// The fields a revisit adds (module comment), in order: the profile, the references and the
/// payload's digest.
pub(crate) fn revisit_fields(revisit: &Revisit) -> Vec<(String, String)> {
    let r = &revisit.refers;
    let mut fields = Vec::new();
    let mut field = |name: &str, value: &str| {
        // A value taken from an index or another package: no line break gets into the header.
        fields.push((name.to_string(), value.chars().filter(|c| !c.is_control()).collect()));
    };
    field("WARC-Profile", IDENTICAL_PAYLOAD);
    if let Some(id) = &r.record_id {
        field("WARC-Refers-To", id);
    }
    field("WARC-Refers-To-Target-URI", &r.url);
    field("WARC-Refers-To-Date", &r.date);
    field("WARC-Refers-To-Container", &refers_to_container(&r.container));
    if let Some(p) = &r.package {
        field(FIELD_REFERS_TO_PACKAGE, p);
    }
    field("WARC-Payload-Digest", &revisit.digest.to_warc());
    fields
}

/// `WARC-Refers-To-Container` of a container (module comment).
pub fn refers_to_container(container: &str) -> String {
    format!("file://{}", container.rsplit('/').next().unwrap_or(container))
}

/// A record's bytes as one gzip member at `level`.
pub(crate) fn gzip_member(record: &[u8], level: u32) -> io::Result<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    gz.write_all(record)?;
    gz.finish()
}

#[cfg(test)]
mod tests {
    /// The SHAttered pair (Stevens et al., 2017): the two PDFs differ only in their first 320
    /// bytes, which collide under SHA-1, and stay colliding with any common tail. Both halves
    /// are seen as attacks; an ordinary payload is not.
    #[test]
    fn a_sha1_collision_attack_is_seen_in_either_half() {
        let hex = include_str!("../../tests/data/shattered-prefixes.hex");
        let halves: Vec<Vec<u8>> = hex
            .split_whitespace()
            .map(|h| data_encoding::HEXLOWER.decode(h.as_bytes()).unwrap())
            .collect();
        let tail = b"the same tail after both halves".repeat(1000);
        let (one, two) = ([&halves[0][..], &tail].concat(), [&halves[1][..], &tail].concat());
        assert_ne!(one, two);
        assert_eq!(sha1::Sha1::digest(&one), sha1::Sha1::digest(&two), "the pair collides");
        let none = || Ok(io::empty());
        assert!(shows_collision_attack(Some(&one), none).unwrap());
        assert!(shows_collision_attack(None, || Ok(&two[..])).unwrap());
        assert!(!shows_collision_attack(Some(&tail), none).unwrap());
    }

    use super::*;

    /// The revisit keeps every field of the record but its type, length and digests, adds the
    /// references, and its block is the HTTP header.
    #[test]
    fn a_revisit_keeps_the_record_but_the_payload() {
        let warc = "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:2>\r\nWARC-Date: 2024-05-01T00:00:00Z\r\nWARC-Target-URI: http://a/new\r\nContent-Type: application/http; msgtype=response\r\nWARC-Payload-Digest: sha1:X\r\nWARC-Block-Digest: sha1:Y\r\nContent-Length: 50\r\n\r\n";
        let http = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
        let head = format!("{warc}{http}");
        let digest = DigestKey::parse("sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK").unwrap();
        let refers = StoredPayload {
            url: "http://a/old".into(),
            date: "2024-01-01T00:00:00Z".into(),
            record_id: Some("<urn:uuid:1>".into()),
            container: "content/first.warc.gz".into(),
            package: Some("urn:uuid:p".into()),
            ..StoredPayload::default()
        };
        let r =
            revisit_record(head.as_bytes(), warc.len(), &Revisit { refers, digest, own: false })
                .unwrap();
        let text = String::from_utf8(r).unwrap();
        let block_digest = sha1_base32(&BlockHasher::digest(http.as_bytes(), 0).block_sha1);
        let want = format!(
            "WARC/1.1\r\nWARC-Type: revisit\r\nWARC-Record-ID: <urn:uuid:2>\r\nWARC-Date: 2024-05-01T00:00:00Z\r\nWARC-Target-URI: http://a/new\r\nContent-Type: application/http; msgtype=response\r\nWARC-Profile: {IDENTICAL_PAYLOAD}\r\nWARC-Refers-To: <urn:uuid:1>\r\nWARC-Refers-To-Target-URI: http://a/old\r\nWARC-Refers-To-Date: 2024-01-01T00:00:00Z\r\nWARC-Refers-To-Container: file://first.warc.gz\r\nX-Webaip-Refers-To-Package: urn:uuid:p\r\nWARC-Payload-Digest: sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK\r\nWARC-Block-Digest: {block_digest}\r\nContent-Length: {}\r\n\r\n{http}\r\n\r\n",
            http.len()
        );
        assert_eq!(text, want);
    }
}
