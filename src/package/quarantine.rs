//! Virus checking of the Heritrix path (P5.5), before anything is written.
//!
//! Migrated ARC records are scanned inside the migration (the engine sees each batch before it
//! is written) and infected ones are written to the container's viral twin instead
//! (`crate::migrate::Quarantine`). Copied WARC records pass the pipeline's scan stage and are
//! appended where it routed them (`package::copy`). No container is rewritten after it is
//! written; the container writer counts every offset.
//!
//! Every record is described to its container's METS section the moment it is written
//! ([`VerdictEvents`]): an infected or unscanned payload with its own PREMIS event, a cleaner's
//! copy with the event and the relationship to the original written just before it. Once the
//! containers are closed, [`add_container_virus_checks`] gives every container its virus-check
//! event and counts what was found.

use std::io;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{ContainerResult, PackageError, PackageOptions, io_err};
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
    /// Findings: (container, record id, signature).
    pub findings: Vec<(String, String, String)>,
    /// Not scanned: (container, record id, reason).
    pub unscanned: Vec<(String, String, String)>,
    /// Payloads not sent to clamd because an identical one (same SHA-512) of this run was:
    /// its verdict was reused.
    pub reused: u64,
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
) -> (String, Option<String>) {
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
    (outcome, (!detail.is_empty()).then(|| detail.join("; ")))
}

/// The outcome and detail of a viral container's virus check: what was found in it.
pub(crate) fn viral_check<'s>(
    opts: &PackageOptions,
    signatures: impl Iterator<Item = &'s str>,
) -> (String, Option<String>) {
    let sigs: Vec<&str> = signatures.collect();
    (opts.profile.virus_outcomes.forced.clone(), Some(format!("found: {}", sigs.join(", "))))
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

impl<'a> VerdictEvents<'a> {
    pub(crate) fn new(
        ids: Ids,
        opts: &'a PackageOptions,
        now: DateTime<Utc>,
        version: &'a str,
        (rel, viral_rel): (String, String),
    ) -> Self {
        VerdictEvents {
            ids,
            opts,
            now,
            version,
            rel,
            viral_rel,
            found: ContainerScan::default(),
            last_infected: None,
        }
    }

    /// The identifiers of this container's records and events.
    pub(crate) fn ids(&self) -> &Ids {
        &self.ids
    }

    fn event(
        &self,
        outcome: String,
        outcome_detail: Option<String>,
        objects: Vec<String>,
    ) -> Event {
        event(&self.ids, self.opts, self.now, self.version, outcome, outcome_detail, objects)
    }

    /// A record written to the content container: as it is, or with an event of its own when
    /// its payload was not scanned.
    pub(crate) fn content(
        &mut self,
        cw: &mut ContainerWriter,
        rec: &RecordFile,
        verdict: Option<&ScanResult>,
    ) -> io::Result<()> {
        let Some(ScanResult::NotScanned(why)) = verdict else { return cw.add_record(rec) };
        self.found.unscanned.push((rec.record_id.clone(), why.to_string()));
        let oid = format!("{}#{}", self.rel, rec.record_id);
        let outcome = self.opts.profile.virus_outcomes.not_scanned.clone();
        let e = self.event(outcome, Some(why.to_string()), vec![oid.clone()]);
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
        let forced = self.opts.profile.virus_outcomes.forced.clone();
        let e = self.event(forced, Some(sig.to_string()), vec![oid.clone()]);
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
        let e = self.event(
            self.opts.profile.virus_outcomes.cleaned.clone(),
            Some(format!(
                "{sig} removed by the cleaner; the cleaned copy was rescanned: no virus detected"
            )),
            vec![viral_oid.clone(), cid.clone()],
        );
        let mut d = described(rec, cid, vec![e.clone()]);
        if let Some(db) = d.described.as_mut() {
            db.object.relationships.push(Relationship {
                relationship_type: self.opts.profile.relationships.relationship_type.clone(),
                subtype: self.opts.profile.relationships.cleaned.clone(),
                related_object: ("local".into(), viral_oid),
                related_event: Some(e.id.clone()),
            });
        }
        self.found.cleaned += 1;
        cw.add_record(&d)
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
    (ids, opts, now): (&Ids, &PackageOptions, DateTime<Utc>),
    (version, scope): (&str, &str),
    (outcome, outcome_detail): (String, Option<String>),
    objects: Vec<String>,
) -> Event {
    let detail = format!("program=\"ClamAV (clamd)\"; version=\"{version}\"; scope=\"{scope}\"");
    super::virus_check_event(ids, opts, now, "clamd", detail, (outcome, outcome_detail), objects)
}

/// A Heritrix container's clamd event.
fn event(
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    version: &str,
    outcome: String,
    outcome_detail: Option<String>,
    objects: Vec<String>,
) -> Event {
    clamd_event((ids, opts, now), (version, SCOPE_RECORDS), (outcome, outcome_detail), objects)
}

/// A record whose payload has events of its own, described as a bytestream object.
fn described(r: &RecordFile, id: String, events: Vec<Event>) -> RecordFile {
    let c = r.content.clone();
    let object = PremisObject {
        id_type: "local".into(),
        id,
        size: c.as_ref().map_or(0, |c| c.range.len),
        sha512: c.as_ref().map(|c| c.sha512.clone()).unwrap_or_default(),
        format: Format {
            name: c.as_ref().map(|c| c.mime.clone()).unwrap_or_default(),
            version: None,
            pronom: None,
        },
        original_name: None,
        significant_properties: vec![],
        relationships: vec![],
        events: events.iter().map(|e| e.id.clone()).collect(),
    };
    RecordFile { described: Some(DescribedBytestream { object, events }), ..r.clone() }
}

/// Once a container and its viral twin are closed (their records described as they were
/// written): the twin's section finished with its virus-check event and listed in
/// `extra_files` (path, SHA-512, size), the content container's virus-check event, and what
/// the scan found counted into `summary`.
#[allow(clippy::too_many_arguments)]
pub(super) fn add_container_virus_checks(
    version: &str,
    r: &mut ContainerResult,
    mets: &mut MetsBuilder,
    root: &Path,
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    summary: &mut super::ScanSummary,
    extra_files: &mut Vec<(String, String, u64)>,
) -> Result<(), PackageError> {
    let rel = r.file.path.clone();
    let found = std::mem::take(&mut r.scan);
    if let Some(v) = r.viral.take() {
        let objects = std::iter::once(v.rel.clone())
            .chain(found.infected.iter().map(|(id, _)| format!("{}#{id}", v.rel)))
            .collect();
        let (outcome, detail) = viral_check(opts, found.infected.iter().map(|(_, s)| s.as_str()));
        let cev = event(ids, opts, now, version, outcome, detail, objects);
        let name = rel.rsplit('/').next().unwrap_or_default().to_string();
        let vfile = super::written_container_file(
            v.rel.clone(),
            (v.size, v.sha512.clone()),
            v.records,
            vec![cev],
            name,
            now,
        );
        mets.finish_container(v.mets, vfile).map_err(io_err(root))?;
        extra_files.push((v.rel, v.sha512, v.size));
        r.report.records -= v.records.saturating_sub(1).min(r.report.records);
    }
    let (infected, unscanned) = (found.infected.len(), found.unscanned.len());
    let shared = found.unscanned_without_event as usize;
    summary.infected += infected as u64;
    summary.findings.extend(found.infected.into_iter().map(|(id, sig)| (rel.clone(), id, sig)));
    summary.not_scanned += unscanned as u64;
    summary.unscanned.extend(found.unscanned.into_iter().map(|(id, why)| (rel.clone(), id, why)));
    summary.cleaned += found.cleaned;

    // The container-level virus check.
    let with_event = unscanned.saturating_sub(shared) as u64;
    let (outcome, detail) = content_check(opts, infected as u64, with_event, shared as u64);
    let e = event(ids, opts, now, version, outcome, detail, vec![rel.clone()]);
    r.file.object.events.push(e.id.clone());
    r.file.events.push(e);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::scan::Unscanned;

    fn record(id: &str, payload: &str) -> RecordFile {
        RecordFile {
            record_id: id.into(),
            member: ByteRange { begin: 100, len: 50 },
            compressed: true,
            content: Some(ContentFile {
                range: ByteRange { begin: 20, len: payload.len() as u64 },
                sha512: "ab".repeat(64),
                mime: "text/html".into(),
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
        };
        let ids = Ids::seeded("t");
        let now = ids.now();
        let dir = tempfile::tempdir().unwrap();
        let mut mets = super::super::new_mets("urn:uuid:x", now, &opts, dir.path()).unwrap();
        let mut cw = mets.begin_container(GroupUse::DigitalManifestation).unwrap();
        let mut vcw = mets.begin_container(GroupUse::ViralFiles).unwrap();
        let (rel, viral) = ("content/a.warc.gz", "viral/a.viral.warc.gz");
        let mut ev =
            VerdictEvents::new(ids.derive("a"), &opts, now, "9.9", (rel.into(), viral.into()));
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
                (1, "cd".repeat(64)),
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
