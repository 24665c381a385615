//! What virus checking (P5.5) says in the package, for every source: the one home of the
//! PREMIS virus-check events, of records and of containers, and of the report's scan line.
//!
//! The pipeline's scan stage gives each payload its verdict before anything is written, and
//! routes an infected one to the viral container. The rules of what is then said are here:
//! - a record whose payload is infected or was not scanned is described on its own, with an
//!   event of its own ([`verdict_outcome`]); a clean one is spoken for by its container's event;
//! - a cleaner's copy gets the `cleaned` event and a relationship to the infected original
//!   ([`cleaned_detail`], [`cleaned_relationship`]);
//! - every container gets one virus-check event ([`content_check`], [`viral_check`]), all of
//!   them built by [`clamd_event`], whose scope says what clamd read.
//!
//! Records of ARC and WARC files are described the moment they are written
//! ([`VerdictEvents`], its object identifiers `container#record-id`); captures by the capture
//! sink (`package::captures`), whose object identifiers are the same except for mirror files,
//! named by their path. Once the containers are closed, `archives` gives
//! every Heritrix container its event and counts what was found.

use std::io;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::context::{EventOutcome, PackageRun};
use super::{PackageError, PackageOptions};
use crate::ids::Ids;
use crate::mets::{ContainerWriter, MetsBuilder};
use crate::model::*;
use crate::stages::scan::ScanResult;

/// Asks clamd for its version and records the scanner as a PREMIS agent (written once per
/// package); the version goes into every virus-check event.
pub(crate) fn register_scanner(
    clamd: &crate::stages::scan::Clamd,
    mets: &mut MetsBuilder,
) -> Result<String, PackageError> {
    let version = clamd.version()?;
    mets.header_mut().agents.push(Agent {
        id_type: "local".into(),
        id: "clamd".into(),
        name: "ClamAV (clamd)".into(),
        agent_type: "software".into(),
        version: Some(version.clone()),
        note: Some(format!("VERSION reply of clamd at {}", clamd.addr())),
    });
    Ok(version)
}

/// What scanning found, over the whole package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScanSummary {
    /// Payloads sent to clamd.
    pub scanned: u64,
    /// Payloads found infected (moved to viral/).
    pub infected: u64,
    /// Payloads that could not be scanned.
    pub not_scanned: u64,
    /// Infected payloads of which a cleaner made a clean copy (kept in content/).
    pub cleaned: u64,
    /// Findings: (the container holding the infected record, in viral/; record id, signature).
    pub findings: Vec<(String, String, String)>,
    /// Not scanned: (container, record id, reason).
    pub unscanned: Vec<(String, String, String)>,
    /// Payloads not sent to clamd because an identical one (same SHA-512) of this run was:
    /// its verdict was reused.
    pub reused: u64,
    /// Infected payloads the cleaner made no clean copy of: (container, record id, why).
    pub not_cleaned: Vec<(String, String, String)>,
}

impl ScanSummary {
    /// The report's one line on the virus check.
    pub(crate) fn note(&self, version: &str) -> String {
        format!(
            "clamd {version}: {} payloads scanned, {} verdicts reused for identical payloads, {} infected (in viral/), {} not scanned",
            self.scanned, self.reused, self.infected, self.not_scanned
        )
    }
}

/// The outcome and detail of a content container's virus check: what went to viral/ instead,
/// and what could not be scanned (`with_event`: each described with its own event; `shared`:
/// in gzip members shared with other records, not described one by one).
pub(crate) fn content_check(
    opts: &PackageOptions,
    infected: u64,
    with_event: u64,
    shared: u64,
) -> EventOutcome {
    let mut detail = Vec::new();
    if infected > 0 {
        detail.push(format!("{infected} infected payload(s) written to viral/ instead"));
    }
    if with_event > 0 {
        detail.push(format!("{with_event} payload(s) not scanned, each with its own event"));
    }
    if shared > 0 {
        detail.push(format!(
            "{shared} payload(s) not scanned in gzip members shared with other records (not described one by one; listed in the package report)"
        ));
    }
    let outcome = opts.profile.virus_outcomes.clean.clone();
    EventOutcome { outcome, detail: (!detail.is_empty()).then(|| detail.join("; ")) }
}

/// The outcome and detail of a viral container's virus check: what was found in it.
pub(crate) fn viral_check<'s>(
    opts: &PackageOptions,
    signatures: impl Iterator<Item = &'s str>,
) -> EventOutcome {
    let sigs: Vec<&str> = signatures.collect();
    EventOutcome {
        outcome: opts.profile.virus_outcomes.forced.clone(),
        detail: Some(format!("found: {}", sigs.join(", "))),
    }
}

/// What the scan found in one container and its viral twin, counted into the package's
/// [`ScanSummary`] once every container is done, in container order.
#[derive(Debug, Default)]
pub(crate) struct ContainerScan {
    /// Records written to the viral twin: (record id, signature).
    pub infected: Vec<(String, String)>,
    /// Payloads not scanned: (record id, reason).
    pub unscanned: Vec<(String, String)>,
    /// Cleaned copies written to content.
    pub cleaned: u64,
    /// Infected records the cleaner made no clean copy of: (record id, why).
    pub not_cleaned: Vec<(String, String)>,
    /// Of the payloads not scanned, those that have no event of their own (their record shares
    /// a gzip member with others and is not described one by one).
    pub unscanned_without_event: u64,
}

/// Describes the records of one container to its METS section, or its viral twin's, the
/// moment each is written, with the virus-check events its verdict calls for.
pub(crate) struct VerdictEvents<'a> {
    /// This container's own identifiers (derived from its name): a deterministic run gives the
    /// same ones whatever order the containers are written in.
    ids: Ids,
    opts: &'a PackageOptions,
    now: DateTime<Utc>,
    /// clamd's version, named in every event.
    version: &'a str,
    rel: String,
    viral_rel: String,
    pub found: ContainerScan,
    /// The record quarantined last, (record id, signature): a cleaned copy is written right
    /// after its original.
    last_infected: Option<(String, String)>,
}

/// A container's path in the package and its viral twin's.
pub(crate) struct ContainerRels {
    pub(crate) content: String,
    pub(crate) viral: String,
}

impl<'a> VerdictEvents<'a> {
    /// `ids`: the container's own identifiers; `run` gives the options and clock.
    pub(crate) fn new(
        ids: Ids,
        run: PackageRun<'a>,
        version: &'a str,
        rels: ContainerRels,
    ) -> Self {
        VerdictEvents {
            ids,
            opts: run.opts,
            now: run.now,
            version,
            rel: rels.content,
            viral_rel: rels.viral,
            found: ContainerScan::default(),
            last_infected: None,
        }
    }

    /// The identifiers of this container's records and events.
    pub(crate) fn ids(&self) -> &Ids {
        &self.ids
    }

    fn event(&self, outcome: String, detail: Option<String>, objects: Vec<String>) -> Event {
        let run = PackageRun { ids: &self.ids, opts: self.opts, now: self.now };
        event(run, self.version, EventOutcome { outcome, detail }, objects)
    }

    /// A record written to the content container: as it is, or with an event of its own when
    /// its payload was not scanned.
    pub(crate) fn content(
        &mut self,
        cw: &mut ContainerWriter,
        rec: &RecordFile,
        verdict: Option<&ScanResult>,
    ) -> io::Result<()> {
        // (An infected payload does not come here: the scan stage routed it to the viral twin.)
        let Some((outcome, why)) = verdict.and_then(|v| verdict_outcome(self.opts, v)) else {
            return cw.add_record(rec);
        };
        self.found.unscanned.push((rec.record_id.clone(), why.clone()));
        let oid = format!("{}#{}", self.rel, rec.record_id);
        let e = self.event(outcome, Some(why), vec![oid.clone()]);
        cw.add_record(&described(rec, oid, vec![e]))
    }

    /// A payload not scanned of a record that is not described on its own (it shares its gzip
    /// member with others and stays in content): counted and named in the container's event.
    pub(crate) fn unscanned_in_shared_member(&mut self, record_id: String, why: String) {
        self.found.unscanned.push((record_id, why));
        self.found.unscanned_without_event += 1;
    }

    /// A record written to the viral twin (`vcw` its section), its payload infected with `sig`.
    pub(crate) fn infected(
        &mut self,
        vcw: &mut ContainerWriter,
        rec: &RecordFile,
        sig: &str,
    ) -> io::Result<()> {
        let oid = format!("{}#{}", self.viral_rel, rec.record_id);
        let verdict = ScanResult::Infected(sig.to_string());
        let (outcome, detail) = verdict_outcome(self.opts, &verdict).unwrap_or_default();
        let e = self.event(outcome, Some(detail), vec![oid.clone()]);
        self.found.infected.push((rec.record_id.clone(), sig.to_string()));
        self.last_infected = Some((rec.record_id.clone(), sig.to_string()));
        vcw.add_record(&described(rec, oid, vec![e]))
    }

    /// A cleaner's copy written to content right after `original`, the infected record it
    /// replaces: the cleaned event, and the relationship to the original in the viral twin.
    pub(crate) fn cleaned(
        &mut self,
        cw: &mut ContainerWriter,
        rec: &RecordFile,
        original: &str,
    ) -> io::Result<()> {
        let sig = match &self.last_infected {
            Some((id, sig)) if id == original => sig.clone(),
            _ => String::new(),
        };
        let viral_oid = format!("{}#{original}", self.viral_rel);
        let cid = format!("{}#{}", self.rel, rec.record_id);
        let cleaner = self.opts.cleaner.as_ref().map_or("", |c| c.command.as_str());
        let e = self.event(
            self.opts.profile.virus_outcomes.cleaned.clone(),
            Some(cleaned_detail(&sig, cleaner)),
            vec![viral_oid.clone(), cid.clone()],
        );
        let mut d = described(rec, cid, vec![e.clone()]);
        if let Some(db) = d.described.as_mut() {
            db.object.relationships.push(cleaned_relationship(self.opts, viral_oid, e.id.clone()));
        }
        self.found.cleaned += 1;
        cw.add_record(&d)
    }
}

/// A record's own virus-check event, from its payload's verdict: (outcome, detail) for an
/// infected payload (the signature) or one not scanned (why); `None` for a clean one, which
/// its container's event speaks for.
pub(crate) fn verdict_outcome(
    opts: &PackageOptions,
    verdict: &ScanResult,
) -> Option<(String, String)> {
    let outcomes = &opts.profile.virus_outcomes;
    match verdict {
        ScanResult::Infected(sig) => Some((outcomes.forced.clone(), sig.clone())),
        ScanResult::NotScanned(why) => Some((outcomes.not_scanned.clone(), why.to_string())),
        ScanResult::Clean => None,
    }
}

/// The detail of a cleaned event: what was removed, by which cleaner, and that its copy
/// scanned clean.
pub(crate) fn cleaned_detail(sig: &str, cleaner: &str) -> String {
    format!(
        "{sig} removed by the cleaner ({cleaner}); the cleaned copy was rescanned: no virus detected"
    )
}

/// A cleaned copy's relationship to the infected original (`viral_oid`) through the cleaned
/// event (`event_id`).
pub(crate) fn cleaned_relationship(
    opts: &PackageOptions,
    viral_oid: String,
    event_id: String,
) -> Relationship {
    Relationship {
        relationship_type: opts.profile.relationships.relationship_type.clone(),
        subtype: opts.profile.relationships.cleaned.clone(),
        related_object: ("local".into(), viral_oid),
        related_event: Some(event_id),
    }
}

/// The viral twin's name of a copied WARC: compressed as the input is.
pub(crate) fn copy_viral_rel(rel: &str, gzip: bool) -> String {
    let v = crate::layout::viral_twin(rel);
    match (gzip, v.strip_suffix(".gz")) {
        (false, Some(plain)) => plain.to_string(),
        (true, None) => format!("{v}.gz"),
        _ => v,
    }
}

/// A PREMIS virus-check event of clamd's.
/// What clamd scanned, as a virus-check event says it: each record's payload of a Heritrix
/// container (decompressed), or each payload of a capture source as harvested.
pub(crate) const SCOPE_RECORDS: &str = "each record payload, decompressed";
/// See [`SCOPE_RECORDS`].
pub(crate) const SCOPE_CAPTURES: &str = "each payload, as harvested";

/// A PREMIS virus-check event of clamd's (`version`), over `scope`: the one builder of them.
pub(crate) fn clamd_event(
    run: PackageRun<'_>,
    version: &str,
    scope: &str,
    outcome: EventOutcome,
    objects: Vec<String>,
) -> Event {
    let detail = format!("program=\"ClamAV (clamd)\"; version=\"{version}\"; scope=\"{scope}\"");
    super::virus_check_event(run, "clamd", detail, outcome, objects)
}

/// A clamd event on records of ARC and WARC files (or their containers).
pub(super) fn event(
    run: PackageRun<'_>,
    version: &str,
    outcome: EventOutcome,
    objects: Vec<String>,
) -> Event {
    clamd_event(run, version, SCOPE_RECORDS, outcome, objects)
}

/// A record whose payload has events of its own, described as a bytestream object.
fn described(r: &RecordFile, id: String, events: Vec<Event>) -> RecordFile {
    let c = r.content.clone();
    let object = PremisObject {
        id_type: "local".into(),
        id,
        size: c.as_ref().map_or(0, |c| c.range.len),
        sha512: c.as_ref().map(|c| c.sha512.clone()).unwrap_or_default(),
        sha256: None,
        format: Format {
            name: c.as_ref().map(|c| c.mime.clone()).unwrap_or_default(),
            version: None,
            pronom: None,
        },
        identification: c.as_ref().and_then(|c| c.identification.clone()),
        original_name: None,
        significant_properties: vec![],
        relationships: vec![],
        events: events.iter().map(|e| e.id.clone()).collect(),
    };
    RecordFile { described: Some(DescribedBytestream { object, events }), ..r.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::scan::Unscanned;

    fn record(id: &str, payload: &str) -> RecordFile {
        RecordFile {
            refers: None,
            record_id: id.into(),
            member: ByteRange { begin: 100, len: 50 },
            compressed: true,
            content: Some(ContentFile {
                range: ByteRange { begin: 20, len: payload.len() as u64 },
                sha512: "ab".repeat(64),
                mime: "text/html".into(),
                identification: None,
            }),
            described: None,
            page: None,
            capture: None,
        }
    }

    /// Each record goes to the section it is given, with the event its verdict calls for,
    /// at once: clean as it is, not scanned with its own event, infected in the viral twin's
    /// section with the forced event, a cleaned copy with the cleaned event and the
    /// relationship to the original quarantined just before it.
    #[test]
    fn records_are_described_where_they_went_with_their_verdicts_events() {
        let opts = PackageOptions {
            index: None,
            out: std::path::PathBuf::new(),
            metadata: crate::metadata::CuratorMetadata::default(),
            profile: crate::profile::Profile::default_profile(),
            mode: SerializationMode::Minimal,
            level: 6,
            force: false,
            deterministic: true,
            virus_check: super::super::VirusCheck::Disabled,
            schemas: None,
            cleaner: None,
            capture_date: None,
            describe_seeds: false,
            identify: crate::stages::identify::IdentifyMode::None,
            dedup: None,
            reading: Default::default(),
        };
        let ids = Ids::seeded("t");
        let now = ids.now();
        let dir = tempfile::tempdir().unwrap();
        let mut mets = super::super::new_mets("urn:uuid:x", now, &opts, dir.path()).unwrap();
        let mut cw = mets.begin_container(GroupUse::DigitalManifestation).unwrap();
        let mut vcw = mets.begin_container(GroupUse::ViralFiles).unwrap();
        let (rel, viral) = ("content/a.warc.gz", "viral/a.viral.warc.gz");
        let run = PackageRun { ids: &ids, opts: &opts, now };
        let rels = ContainerRels { content: rel.into(), viral: viral.into() };
        let mut ev = VerdictEvents::new(ids.derive("a"), run, "9.9", rels);
        ev.content(&mut cw, &record("urn:uuid:clean", "ok"), Some(&ScanResult::Clean)).unwrap();
        let big = ScanResult::NotScanned(Unscanned::Refused { reply: "over the limit".into() });
        ev.content(&mut cw, &record("urn:uuid:big", "big"), Some(&big)).unwrap();
        ev.infected(&mut vcw, &record("urn:uuid:bad", "x5o"), "Test.Sig").unwrap();
        ev.cleaned(&mut cw, &record("urn:uuid:copy", "ok"), "urn:uuid:bad").unwrap();
        assert_eq!(ev.found.infected, [("urn:uuid:bad".to_string(), "Test.Sig".to_string())]);
        let why = "clamd: over the limit";
        assert_eq!(ev.found.unscanned, [("urn:uuid:big".into(), why.into())]);
        assert_eq!(ev.found.cleaned, 1);
        assert_eq!((cw.records(), cw.listed(), vcw.records(), vcw.listed()), (3, 2, 1, 1));
        for (w, r) in [(cw, rel), (vcw, viral)] {
            let file = super::super::written_container_file(
                r.into(),
                super::super::WrittenFile { size: 1, sha512: "cd".repeat(64) },
                1,
                vec![],
                "a".into(),
                now,
            );
            mets.finish_container(w, file).unwrap();
        }
        let mut xml = Vec::new();
        mets.finish(&mut xml).unwrap();
        let xml = String::from_utf8(xml).unwrap();
        let o = &opts.profile.virus_outcomes;
        // Minimal mode lists only described records: the clean one is not.
        assert!(!xml.contains("OWNERID=\"urn:uuid:clean\""));
        let at = |s: &str| xml.find(s).unwrap_or_else(|| panic!("{s} missing:\n{xml}"));
        let group = |s: &str| xml[..at(s)].rfind("<mets:fileGrp USE=").map(|i| &xml[i..i + 40]);
        assert!(group("OWNERID=\"urn:uuid:big\"").unwrap().contains("DigitalManifestation"));
        assert!(group("OWNERID=\"urn:uuid:copy\"").unwrap().contains("DigitalManifestation"));
        assert!(group("OWNERID=\"urn:uuid:bad\"").unwrap().contains("ViralFiles"));
        // Each event is in the amdSec of its object (the record described).
        let after = |object: &str, text: &str| {
            let from = at(&format!("<premis:objectIdentifierValue>{object}<"));
            let end = from + xml[from..].find("</mets:amdSec>").unwrap();
            assert!(xml[from..end].contains(text), "{object}: no {text}:\n{}", &xml[from..end]);
        };
        after("content/a.warc.gz#urn:uuid:big", &format!(">{}<", o.not_scanned));
        after("content/a.warc.gz#urn:uuid:big", ">clamd: over the limit<");
        after("viral/a.viral.warc.gz#urn:uuid:bad", &format!(">{}<", o.forced));
        after("viral/a.viral.warc.gz#urn:uuid:bad", ">Test.Sig<");
        let copy = "content/a.warc.gz#urn:uuid:copy";
        after(copy, &format!(">{}<", o.cleaned));
        after(copy, "Test.Sig removed by the cleaner");
        after(copy, ">viral/a.viral.warc.gz#urn:uuid:bad<");
    }

    #[test]
    fn viral_names() {
        use crate::layout::viral_twin;
        assert_eq!(viral_twin("content/a.warc.gz"), "viral/a.viral.warc.gz");
        assert_eq!(viral_twin("content/b.warc"), "viral/b.viral.warc");
        // A copy's twin is compressed as its input is, whatever its name says.
        assert_eq!(copy_viral_rel("content/a.warc.gz", true), "viral/a.viral.warc.gz");
        assert_eq!(copy_viral_rel("content/a.warc.gz", false), "viral/a.viral.warc");
        assert_eq!(copy_viral_rel("content/b.warc", true), "viral/b.viral.warc.gz");
        assert_eq!(copy_viral_rel("content/b.warc", false), "viral/b.viral.warc");
    }
}
