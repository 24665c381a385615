//! The METS read into the package's file listing: the one interpretation of a fileSec (and of
//! the PREMIS statements about its files) that `audit`, `pages` and `store` share. The
//! validator checks the whole document and reads it through [`super::reader`] itself.
//!
//! What the listing holds:
//! - the root element: whether it is `mets:mets`, its `OBJID` and `PROFILE`;
//! - the top-level `<file>`s in document order, each with its enclosing `fileGrp` USEs, its
//!   `FLocat`, MIME type, size, checksum and byte range, and, when asked for
//!   ([`Nested::Keep`]), its nested record and bytestream `<file>`s;
//! - for each top-level file, the "WARC records" significant property and the size and fixity
//!   digest that the PREMIS object of a section its ADMID names states;
//! - every PREMIS file object's identifier and digest ([`Listing::objects`]): those of files
//!   not in the package, such as the ARCs its containers were migrated from.
//!
//! A listing of containers only ([`Nested::Skip`]) stays small whatever the number of records:
//! the nested files are passed over, except for an `FLocat` of their own (another tool's METS
//! may locate nested files), whose href is kept in [`Listing::other_hrefs`].

use std::collections::HashMap;
use std::io::BufRead;

use super::reader::{Element, Event, MetsError, MetsReader, NS_METS, NS_PREMIS2, NS_PREMIS3, Pos};
use crate::formats::digest::{FileDigests, FixityAlgorithm};
use crate::model::SIGNIFICANT_WARC_RECORDS;

/// Whether the nested `<file>`s (records, bytestreams) are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Nested {
    #[default]
    Keep,
    Skip,
}

/// The root element.
#[derive(Debug, Clone, Default)]
pub(crate) struct Root {
    /// It is `mets:mets`.
    pub is_mets: bool,
    pub objid: Option<String>,
    pub profile: Option<String>,
}

/// One `<file>` of the fileSec.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListedFile {
    pub id: String,
    /// Where the `<file>` element is in the METS.
    pub pos: Pos,
    /// USE (else ID) of the innermost enclosing fileGrp.
    pub group: String,
    /// USE (else ID) of every enclosing fileGrp, outermost first (top-level files only).
    pub groups: Vec<String>,
    pub href: Option<String>,
    pub mime: Option<String>,
    pub size: Option<u64>,
    /// The CHECKSUM attribute, in lower case.
    pub checksum: Option<String>,
    /// The CHECKSUMTYPE attribute, as written.
    pub checksum_type: Option<String>,
    pub begin: Option<u64>,
    pub end: Option<u64>,
    /// The "WARC records" significant property of the file's PREMIS object, if it states one.
    pub stated_records: Option<u64>,
    /// The size and fixity digest (lower case) of the file's PREMIS object, if it states them:
    /// where they differ from `size` and `checksum`, bytes that match them are no damage.
    pub premis_size: Option<u64>,
    pub premis_digest: Option<String>,
    /// The algorithm the PREMIS object names for that digest, as written.
    pub premis_digest_algorithm: Option<String>,
    /// The PREMIS object's further fixities (webaip states a container's SHA-256 beside its
    /// SHA-512), each a digest (lower case) and the algorithm named, as written.
    pub premis_more: Vec<OtherFixity>,
    pub children: Vec<ListedFile>,
    /// The ADMID of the `<file>`: the md sections (or amdSecs) that describe it.
    pub admid: Vec<String>,
}

impl ListedFile {
    /// The digest the METS states of the file's bytes and its algorithm: the `CHECKSUM` by its
    /// `CHECKSUMTYPE`, else the PREMIS object's digest by its algorithm; an algorithm not
    /// named is the one whose digests have the value's length. `Err` for an algorithm webaip
    /// does not compute.
    pub(crate) fn stated_fixity(&self) -> Option<Result<StatedFixity<'_>, UnknownAlgorithm>> {
        let (value, named, source) = match (&self.checksum, &self.premis_digest) {
            (Some(c), _) => (c, self.checksum_type.as_deref(), FixitySource::Checksum),
            (None, Some(d)) => (d, self.premis_digest_algorithm.as_deref(), FixitySource::Premis),
            (None, None) => return None,
        };
        let algorithm = match named {
            Some(n) => FixityAlgorithm::from_name(n).ok_or_else(|| UnknownAlgorithm(n.to_string())),
            None => FixityAlgorithm::from_hex_len(value.len())
                .ok_or_else(|| UnknownAlgorithm("(none named)".to_string())),
        };
        Some(algorithm.map(|algorithm| StatedFixity { value, algorithm, source }))
    }

    /// The SHA-512 (lower-case hex) the METS states of the file's bytes, if it states one.
    pub(crate) fn stated_sha512(&self) -> Option<String> {
        match self.stated_fixity() {
            Some(Ok(s)) if s.algorithm == FixityAlgorithm::Sha512 => Some(s.value.to_string()),
            _ => None,
        }
    }

    /// The PREMIS object's digest and its algorithm, when it states one webaip computes.
    pub(crate) fn premis_fixity(&self) -> Option<(FixityAlgorithm, &str)> {
        let d = self.premis_digest.as_deref()?;
        let a = match self.premis_digest_algorithm.as_deref() {
            Some(n) => FixityAlgorithm::from_name(n)?,
            None => FixityAlgorithm::from_hex_len(d.len())?,
        };
        Some((a, d))
    }

    /// The PREMIS object's further fixities by algorithms webaip computes.
    pub(crate) fn more_fixities(&self) -> impl Iterator<Item = (FixityAlgorithm, &str)> {
        self.premis_more.iter().filter_map(|o| {
            let a = match o.algorithm.as_deref() {
                Some(n) => FixityAlgorithm::from_name(n)?,
                None => FixityAlgorithm::from_hex_len(o.digest.len())?,
            };
            Some((a, o.digest.as_str()))
        })
    }

    /// The SHA-256 (lower-case hex) the METS states of the file's bytes, in its CHECKSUM or
    /// in a fixity of its PREMIS object.
    pub(crate) fn stated_sha256(&self) -> Option<String> {
        let checksum = self.stated_fixity().and_then(Result::ok).map(|s| (s.algorithm, s.value));
        let found =
            checksum.and_then(sha256_only).or_else(|| self.premis_fixity().and_then(sha256_only));
        found.or_else(|| self.more_fixities().find_map(sha256_only)).map(str::to_string)
    }

    /// The algorithms whose digests check the file's bytes against the METS: the stated
    /// digest's ([`Self::stated_fixity`]) and the PREMIS object's, when webaip computes them.
    pub(crate) fn checked_algorithms(&self) -> Vec<FixityAlgorithm> {
        let stated = self.stated_fixity().and_then(Result::ok).map(|f| f.algorithm);
        let premis = self.premis_fixity().map(|(a, _)| a);
        let mut all: Vec<_> =
            stated.into_iter().chain(premis).chain(self.more_fixities().map(|(a, _)| a)).collect();
        all.sort();
        all.dedup();
        all
    }

    /// The first of the PREMIS object's further fixities the bytes read (`d`) do not have.
    pub(crate) fn more_damage(&self, d: &FileDigests) -> Option<Damage> {
        self.more_fixities().find_map(|(a, stated)| {
            let found = d.by(a)?;
            (found != stated).then(|| Damage {
                what: a.mets_name().to_string(),
                stated: stated.to_string(),
                found: found.to_string(),
            })
        })
    }

    /// How the bytes read (`d`, digested by [`Self::checked_algorithms`]) differ from what the
    /// METS states of the file, as the audit judges them: its digest (the CHECKSUM by its
    /// CHECKSUMTYPE, else the PREMIS object's), its PREMIS object's further fixities, then
    /// its SIZE. `None` when they agree, when a
    /// digest is by an algorithm webaip does not compute (not checked), and for bytes that
    /// differ from the `<file>` attributes but are what the file's PREMIS object states (the
    /// METS contradicts itself, which the audit warns of: no damage).
    pub(crate) fn damage(&self, d: &FileDigests) -> Option<Damage> {
        let premis_agrees = self.premis_fixity().is_some_and(|(a, v)| d.by(a) == Some(v));
        if let Some(Ok(stated)) = self.stated_fixity() {
            let found = d.by(stated.algorithm).unwrap_or_default();
            let excused = stated.source == FixitySource::Checksum && premis_agrees;
            if found != stated.value && !excused {
                return Some(Damage {
                    what: stated.algorithm.mets_name().to_string(),
                    stated: stated.value.to_string(),
                    found: found.to_string(),
                });
            }
        }
        if let Some(more) = self.more_damage(d) {
            return Some(more);
        }
        match self.size {
            Some(size) if size != d.size && self.premis_size != Some(d.size) => Some(Damage {
                what: "SIZE".to_string(),
                stated: size.to_string(),
                found: d.size.to_string(),
            }),
            _ => None,
        }
    }

    /// True for a file whose records can be read: a WARC container.
    pub(crate) fn is_container(&self) -> bool {
        self.mime.as_deref() == Some("application/warc")
            || !self.children.is_empty()
            || self.href.as_deref().is_some_and(crate::layout::is_warc_name)
    }
}

/// The digest of a fixity by SHA-256, none of one by another algorithm.
fn sha256_only((algorithm, digest): (FixityAlgorithm, &str)) -> Option<&str> {
    (algorithm == FixityAlgorithm::Sha256).then_some(digest)
}

/// What a file's bytes have that the METS does not state of them ([`ListedFile::damage`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Damage {
    /// What differs: the digest's algorithm (`SHA-512`, as `CHECKSUMTYPE` spells it) or `SIZE`.
    pub what: String,
    /// What the METS states (lower-case hex, or bytes).
    pub stated: String,
    /// What the bytes have.
    pub found: String,
}

/// A METS document's listing; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// `None` when the document has no root element.
    pub root: Option<Root>,
    pub files: Vec<ListedFile>,
    /// The FLocat hrefs that are no listed file's `href`: a file's second and later ones, and
    /// those of nested files with [`Nested::Skip`].
    pub other_hrefs: Vec<String>,
    /// The PREMIS file objects (not bitstreams) that state an identifier and a digest.
    pub objects: Vec<ListedObject>,
    /// The nested `<file>`s (records, bytestreams) passed over with [`Nested::Skip`].
    pub nested_skipped: u64,
}

/// A PREMIS file object: its identifier and the first digest it states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedObject {
    /// `objectIdentifierValue` (the first).
    pub id: String,
    /// The digest, lower case.
    pub digest: String,
    /// Its algorithm as named.
    pub algorithm: Option<String>,
}

impl ListedObject {
    /// The SHA-512 the object states, if its digest is one.
    pub(crate) fn sha512(&self) -> Option<&str> {
        let a = match self.algorithm.as_deref() {
            Some(n) => FixityAlgorithm::from_name(n)?,
            None => FixityAlgorithm::from_hex_len(self.digest.len())?,
        };
        (a == FixityAlgorithm::Sha512).then_some(self.digest.as_str())
    }
}

/// The root element only: the document is read no further than its start tag.
pub(crate) fn read_root<R: BufRead>(mut reader: MetsReader<R>) -> Result<Option<Root>, MetsError> {
    loop {
        match reader.next()? {
            Some(Event::Start(e, _) | Event::Empty(e, _)) => return Ok(Some(root_of(&e))),
            None => return Ok(None),
            Some(_) => {}
        }
    }
}

/// The `altRecordID` TYPE under which an AIP webaip made names its submission's OBJID.
pub(crate) const SUBMISSION_OBJID: &str = "sSIP OBJID";
/// The one under which it gives the SHA-512 of its submission's METS.
pub(crate) const SUBMISSION_METS_SHA512: &str = "sSIP METS SHA-512";

/// The root and what its `metsHdr` says of the package: its TYPE, and the OBJID of the
/// submission an AIP was made from (the first `altRecordID` of TYPE [`SUBMISSION_OBJID`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Header {
    pub root: Root,
    /// The root's `TYPE` (`sSIP`, `AIP`...).
    pub package_type: Option<String>,
    pub submission_objid: Option<String>,
    /// The SHA-512 of the submission's METS (the first `altRecordID` of TYPE
    /// [`SUBMISSION_METS_SHA512`]), lower case.
    pub submission_mets_sha512: Option<String>,
}

/// Which of the header's `altRecordID`s is being read.
#[derive(Clone, Copy)]
enum Wanted {
    Objid,
    MetsSha512,
}

/// The root and the `metsHdr` (the document is read no further than the header's end, or the
/// first element after the root that is not one).
pub(crate) fn read_header<R: BufRead>(mut reader: MetsReader<R>) -> Result<Header, MetsError> {
    let mut out = Header::default();
    let mut depth = 0usize;
    let mut in_ref: Option<(Wanted, String)> = None;
    while let Some(event) = reader.next()? {
        match event {
            Event::Start(e, _) | Event::Empty(e, _) if depth == 0 => {
                out.package_type = e.attr("TYPE").map(str::to_string);
                out.root = root_of(&e);
                depth = 1;
            }
            Event::Start(e, _) if depth == 1 && !e.is(NS_METS, "metsHdr") => break,
            Event::Start(e, _) => {
                depth += 1;
                let wanted = match e.attr("TYPE") {
                    _ if depth != 3 || !e.is(NS_METS, "altRecordID") => None,
                    Some(SUBMISSION_OBJID) if out.submission_objid.is_none() => Some(Wanted::Objid),
                    Some(SUBMISSION_METS_SHA512) if out.submission_mets_sha512.is_none() => {
                        Some(Wanted::MetsSha512)
                    }
                    _ => None,
                };
                in_ref = wanted.map(|w| (w, String::new()));
            }
            Event::Text(t, _) => {
                if let Some((_, text)) = in_ref.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::End { .. } => {
                if let Some((wanted, text)) = in_ref.take() {
                    let text = Some(text.trim().to_string()).filter(|t| !t.is_empty());
                    match wanted {
                        Wanted::Objid => out.submission_objid = text,
                        Wanted::MetsSha512 => {
                            out.submission_mets_sha512 = text.map(|t| t.to_ascii_lowercase())
                        }
                    }
                }
                depth = depth.saturating_sub(1);
                if depth <= 1 {
                    break;
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

fn root_of(e: &Element) -> Root {
    Root {
        is_mets: e.is(NS_METS, "mets"),
        objid: e.attr("OBJID").map(str::to_string),
        profile: e.attr("PROFILE").map(str::to_string),
    }
}

/// Reads the listing. What a lenient reader passes over (a DOCTYPE, an entity) is passed over
/// here too; a strict reader's refusal is an error.
pub(crate) fn read_listing<R: BufRead>(
    mut reader: MetsReader<R>,
    nested: Nested,
) -> Result<Listing, MetsError> {
    let mut state = State { nested, ..State::default() };
    while let Some(event) = reader.next()? {
        match event {
            Event::Start(ref e, pos) => state.start(e, pos, false),
            Event::Empty(ref e, pos) => state.start(e, pos, true),
            Event::Text(t, _) => state.text(&t),
            Event::End { ns, local, .. } => state.end(&ns, &local),
            Event::Refused(..) => {}
        }
    }
    Ok(state.finish())
}

/// What the listing's pass keeps while it reads.
#[derive(Default)]
struct State {
    nested: Nested,
    listing: Listing,
    /// Open fileGrps' USE (else ID).
    groups: Vec<String>,
    /// Open `<file>`s, outermost first.
    stack: Vec<ListedFile>,
    /// Open `<file>`s below a top-level one, when they are not kept.
    skipped_depth: usize,
    /// Record counts by the ID of the amdSec and of the techMD that state them.
    stated: HashMap<String, u64>,
    /// PREMIS objects' size and digest by the IDs of the amdSec and MD section holding them.
    fixity: HashMap<String, PremisFixity>,
    object: Option<PremisFixity>,
    value: Option<String>,
    amd: Option<String>,
    md: Option<String>,
    property: Option<(String, String)>,
    text: Option<String>,
}

/// A fixity algorithm a METS names that webaip does not compute (or none, for a value of no
/// digest's length).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}")]
pub(crate) struct UnknownAlgorithm(pub String);

/// A digest the METS states of a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatedFixity<'a> {
    /// The value, lower-case.
    pub value: &'a str,
    pub algorithm: FixityAlgorithm,
    /// Where it is stated.
    pub source: FixitySource,
}

/// Where a file's digest is stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FixitySource {
    /// The `<file>` CHECKSUM.
    Checksum,
    /// Its PREMIS object's `messageDigest` (no CHECKSUM).
    Premis,
}

/// A PREMIS fixity after an object's first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OtherFixity {
    /// The algorithm named, as written.
    pub algorithm: Option<String>,
    /// The digest, lower case.
    pub digest: String,
}

/// What a PREMIS object states of its bytes: the first size and digest it gives, and its
/// further fixities.
#[derive(Debug, Clone, Default)]
struct PremisFixity {
    size: Option<u64>,
    digest: Option<String>,
    algorithm: Option<String>,
    more: Vec<OtherFixity>,
    /// The algorithm of a further fixity, until its digest comes.
    more_algorithm: Option<String>,
    id: Option<String>,
    bitstream: bool,
}

fn premis(ns: &str) -> bool {
    ns == NS_PREMIS3 || ns == NS_PREMIS2
}

impl State {
    fn start(&mut self, e: &Element, pos: Pos, empty: bool) {
        if self.listing.root.is_none() {
            self.listing.root = Some(root_of(e));
        }
        let attr = |k: &str| e.attr(k).map(str::to_string);
        match (e.ns.as_str(), e.local.as_str()) {
            (NS_METS, "amdSec") => self.amd = attr("ID"),
            (NS_METS, "techMD" | "digiprovMD") => self.md = attr("ID"),
            (ns, "object") if premis(ns) => {
                let kind = e.attrs.iter().find(|a| a.local == "type").map(|a| a.value.as_str());
                let bitstream = kind.is_some_and(|t| t.ends_with("bitstream"));
                self.object = Some(PremisFixity { bitstream, ..Default::default() });
            }
            (ns, "size" | "messageDigest" | "messageDigestAlgorithm" | "objectIdentifierValue")
                if premis(ns) && self.object.is_some() =>
            {
                self.value = Some(String::new());
            }
            (ns, "significantProperties") if premis(ns) => self.property = Some(Default::default()),
            (ns, "significantPropertiesType" | "significantPropertiesValue") if premis(ns) => {
                self.text = Some(String::new());
            }
            (NS_METS, "fileGrp") if !empty => {
                self.groups.push(attr("USE").or(attr("ID")).unwrap_or_default());
            }
            (NS_METS, "file") => self.start_file(e, pos, empty),
            (NS_METS, "FLocat") => {
                let Some(h) = e.href() else { return };
                match self.stack.last_mut() {
                    Some(f) if self.skipped_depth == 0 && f.href.is_none() => {
                        f.href = Some(h.to_string())
                    }
                    _ => self.listing.other_hrefs.push(h.to_string()),
                }
            }
            _ => {}
        }
    }

    fn start_file(&mut self, e: &Element, pos: Pos, empty: bool) {
        if self.nested == Nested::Skip && !self.stack.is_empty() {
            self.listing.nested_skipped += 1;
            if !empty {
                self.skipped_depth += 1;
            }
            return;
        }
        let num = |k: &str| e.attr(k).and_then(|v| v.trim().parse::<u64>().ok());
        let top = self.stack.is_empty();
        let f = ListedFile {
            id: e.attr("ID").unwrap_or_default().to_string(),
            pos,
            group: self.groups.last().cloned().unwrap_or_default(),
            groups: if top { self.groups.clone() } else { Vec::new() },
            mime: e.attr("MIMETYPE").map(str::to_string),
            size: num("SIZE"),
            checksum: e.attr("CHECKSUM").map(|c| c.to_ascii_lowercase()),
            checksum_type: e.attr("CHECKSUMTYPE").map(str::to_string),
            begin: num("BEGIN"),
            end: num("END"),
            admid: e
                .attr("ADMID")
                .map(|a| a.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
            ..ListedFile::default()
        };
        if empty {
            self.attach(f);
        } else {
            self.stack.push(f);
        }
    }

    fn attach(&mut self, f: ListedFile) {
        match self.stack.last_mut() {
            Some(parent) => parent.children.push(f),
            None => self.listing.files.push(f),
        }
    }

    fn text(&mut self, t: &str) {
        if let Some(s) = self.text.as_mut() {
            s.push_str(t);
        }
        // A size or digest is short; a longer text is none (and is not gathered).
        if let Some(v) = self.value.as_mut().filter(|v| v.len() + t.len() <= 1024) {
            v.push_str(t);
        }
    }

    fn end(&mut self, ns: &str, local: &str) {
        match (ns, local) {
            (NS_METS, "file") if self.skipped_depth > 0 => self.skipped_depth -= 1,
            (NS_METS, "file") => {
                if let Some(f) = self.stack.pop() {
                    self.attach(f);
                }
            }
            (NS_METS, "fileGrp") => {
                self.groups.pop();
            }
            (NS_METS, "amdSec") => self.amd = None,
            (NS_METS, "techMD" | "digiprovMD") => self.md = None,
            (ns, "object") if premis(ns) => self.end_object(),
            (ns, "significantPropertiesType" | "significantPropertiesValue") if premis(ns) => {
                if let (Some(p), Some(t)) = (self.property.as_mut(), self.text.take()) {
                    let part = if local.ends_with("Type") { &mut p.0 } else { &mut p.1 };
                    *part = t.trim().to_string();
                }
            }
            (ns, "significantProperties") if premis(ns) => self.end_property(),
            (ns, _) if premis(ns) => self.end_object_value(local),
            _ => {}
        }
    }

    /// A fact of the PREMIS object being read: its size, fixity or identifier.
    fn end_object_value(&mut self, local: &str) {
        if !matches!(
            local,
            "size" | "messageDigestAlgorithm" | "messageDigest" | "objectIdentifierValue"
        ) {
            return;
        }
        let (Some(o), Some(v)) = (self.object.as_mut(), self.value.take()) else { return };
        match local {
            "size" => o.size = o.size.or(v.trim().parse().ok()),
            // The algorithm comes before its digest in both PREMIS versions: the pair is the
            // first fixity's, unless a later algorithm arrives before the first digest.
            "messageDigestAlgorithm" if o.digest.is_none() => {
                o.algorithm = Some(v.trim().to_string())
            }
            "messageDigestAlgorithm" => o.more_algorithm = Some(v.trim().to_string()),
            "messageDigest" if o.digest.is_some() => o.more.push(OtherFixity {
                algorithm: o.more_algorithm.take(),
                digest: v.trim().to_ascii_lowercase(),
            }),
            "messageDigest" => o.digest = Some(v.trim().to_ascii_lowercase()),
            _ => o.id = o.id.take().or(Some(v.trim().to_string())),
        }
    }

    /// A PREMIS object is listed (unless a bitstream), and kept for the sections holding it.
    fn end_object(&mut self) {
        let Some(o) = self.object.take() else { return };
        if let (Some(id), Some(digest), false) = (&o.id, &o.digest, o.bitstream) {
            self.listing.objects.push(ListedObject {
                id: id.clone(),
                digest: digest.clone(),
                algorithm: o.algorithm.clone(),
            });
        }
        for id in [&self.amd, &self.md].into_iter().flatten() {
            self.fixity.entry(id.clone()).or_insert_with(|| o.clone());
        }
    }

    /// The number of WARC records a significant property states, for the sections holding it.
    fn end_property(&mut self) {
        if let Some((kind, value)) = self.property.take()
            && kind == SIGNIFICANT_WARC_RECORDS
            && let Ok(n) = value.parse::<u64>()
        {
            for id in [&self.amd, &self.md].into_iter().flatten() {
                self.stated.insert(id.clone(), n);
            }
        }
    }

    /// The PREMIS statements joined to the top-level files that name their sections.
    fn finish(mut self) -> Listing {
        for f in &mut self.listing.files {
            f.stated_records = f.admid.iter().find_map(|a| self.stated.get(a).copied());
            if let Some(o) = f.admid.iter().find_map(|a| self.fixity.get(a)) {
                f.premis_size = o.size;
                f.premis_digest = o.digest.clone();
                f.premis_digest_algorithm = o.algorithm.clone();
                f.premis_more = o.more.clone();
            }
        }
        self.listing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/"
      xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:premis="http://www.loc.gov/premis/v3"
      OBJID="pkg-1" PROFILE="urn:x">
      <mets:amdSec ID="A1"><mets:techMD ID="T1"><mets:mdWrap><mets:xmlData><premis:object>
        <premis:objectCharacteristics><premis:fixity><premis:messageDigest>ABC</premis:messageDigest></premis:fixity>
        <premis:size>10</premis:size></premis:objectCharacteristics>
        <premis:significantProperties><premis:significantPropertiesType>WARC records</premis:significantPropertiesType>
        <premis:significantPropertiesValue>2</premis:significantPropertiesValue></premis:significantProperties>
      </premis:object></mets:xmlData></mets:mdWrap></mets:techMD></mets:amdSec>
      <mets:fileSec><mets:fileGrp USE="Outer"><mets:fileGrp USE="Content">
        <mets:file ID="F1" MIMETYPE="application/warc" SIZE="10" CHECKSUM="AB" ADMID="A1">
          <mets:FLocat xlink:href="content/a.warc.gz"/>
          <mets:file ID="R1" BEGIN="0" END="4"/>
          <mets:file ID="R2" BEGIN="5" END="9"><mets:FLocat xlink:href="nested"/></mets:file>
        </mets:file>
      </mets:fileGrp></mets:fileGrp>
      <mets:fileGrp ID="Logs"><mets:file ID="F2"><mets:FLocat xlink:href="logs/x"/></mets:file></mets:fileGrp>
      </mets:fileSec></mets:mets>"#;

    fn read(nested: Nested) -> Listing {
        read_listing(MetsReader::strict(DOC.as_bytes()), nested).unwrap()
    }

    #[test]
    fn files_their_groups_ranges_and_premis_statements() {
        let l = read(Nested::Keep);
        let root = l.root.unwrap();
        assert!(root.is_mets);
        assert_eq!(
            (root.objid.as_deref(), root.profile.as_deref()),
            (Some("pkg-1"), Some("urn:x"))
        );
        let [f1, f2] = &l.files[..] else { panic!("{:?}", l.files) };
        assert_eq!(f1.groups, ["Outer", "Content"]);
        assert_eq!(f1.group, "Content");
        assert_eq!(f1.href.as_deref(), Some("content/a.warc.gz"));
        assert_eq!(f1.checksum.as_deref(), Some("ab"));
        assert_eq!((f1.stated_records, f1.premis_size), (Some(2), Some(10)));
        assert_eq!(f1.premis_digest.as_deref(), Some("abc"));
        assert_eq!(f1.children.len(), 2);
        assert_eq!((f1.children[1].begin, f1.children[1].end), (Some(5), Some(9)));
        assert_eq!(f1.children[1].href.as_deref(), Some("nested"));
        assert_eq!((f2.group.as_str(), f2.groups.as_slice()), ("Logs", &["Logs".to_string()][..]));
        assert!(l.other_hrefs.is_empty());
    }

    #[test]
    fn containers_only_keep_no_nested_file_but_their_hrefs() {
        let l = read(Nested::Skip);
        assert_eq!(l.files.len(), 2);
        assert!(l.files[0].children.is_empty());
        assert_eq!(l.files[0].href.as_deref(), Some("content/a.warc.gz"));
        assert_eq!(l.other_hrefs, ["nested"]);
    }

    #[test]
    fn the_header_names_the_submission_only_in_its_own_alt_record_id() {
        let doc = |hdr: &str, after: &str| {
            format!(
                r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/" OBJID="aip-1" TYPE="AIP">
<mets:metsHdr><mets:agent ROLE="CREATOR"><mets:name>x</mets:name></mets:agent>{hdr}</mets:metsHdr>
{after}</mets:mets>"#
            )
        };
        let header = |text: &str| read_header(MetsReader::strict(text.as_bytes())).unwrap();
        let h = header(&doc(
            r#"<mets:altRecordID TYPE="other">no</mets:altRecordID><mets:altRecordID TYPE="sSIP OBJID"> ssip-1 </mets:altRecordID>"#,
            "",
        ));
        assert_eq!(h.root.objid.as_deref(), Some("aip-1"));
        assert_eq!(h.package_type.as_deref(), Some("AIP"));
        assert_eq!(h.submission_objid.as_deref(), Some("ssip-1"));
        assert_eq!(h.submission_mets_sha512, None);
        let both = header(&doc(
            r#"<mets:altRecordID TYPE="sSIP OBJID">s</mets:altRecordID><mets:altRecordID TYPE="sSIP METS SHA-512"> AB12 </mets:altRecordID>"#,
            "",
        ));
        let refs = (both.submission_objid.as_deref(), both.submission_mets_sha512.as_deref());
        assert_eq!(refs, (Some("s"), Some("ab12")));
        // Outside the header, or empty, it names nothing.
        let outside = r#"<mets:dmdSec ID="d"><mets:altRecordID TYPE="sSIP OBJID">x</mets:altRecordID></mets:dmdSec>"#;
        assert_eq!(header(&doc("", outside)).submission_objid, None);
        let empty = r#"<mets:altRecordID TYPE="sSIP OBJID"> </mets:altRecordID>"#;
        assert_eq!(header(&doc(empty, "")).submission_objid, None);
    }

    #[test]
    fn the_root_alone() {
        let root = read_root(MetsReader::strict(DOC.as_bytes())).unwrap().unwrap();
        assert_eq!(root.objid.as_deref(), Some("pkg-1"));
        // A document without a root element is not well-formed: an error, not an empty answer.
        let none = read_root(MetsReader::strict(&b"<?xml version='1.0'?>"[..]));
        assert!(
            matches!(
                none,
                Err(MetsError::Unfinished {
                    unfinished: crate::mets::reader::Unfinished::NoRoot,
                    ..
                })
            ),
            "{none:?}"
        );
    }
}
