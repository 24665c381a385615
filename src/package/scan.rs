//! Virus checking of a written container (P5.5): every record payload is streamed to clamd;
//! infected records move, byte-exact, to a container of their own in `viral/` (group
//! `ViralFiles`); payloads clamd could not scan are described with a `not scanned` event; every
//! container gets a container-level virus-check event.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use rayon::prelude::*;
use serde::Serialize;

use super::{ContainerResult, PackageError, PackageOptions, hash_file, io_err};
use crate::formats::segment::FileRange;
use crate::formats::warc::writer::RecordSpec;
use crate::formats::warc::{WarcReader, WarcWriter};
use crate::ids::Ids;
use crate::mets::MetsBuilder;
use crate::model::*;
use crate::stages::scan::{Clamd, ScanResult};

/// Records scanned in parallel at a time.
const CHUNK: usize = 256;

/// Asks clamd for its version and records the scanner as a PREMIS agent (written once per
/// package); the version goes into every virus-check event.
pub(crate) fn register_scanner(
    clamd: &Clamd,
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
    /// Payloads scanned.
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

/// Streams one record's payload to clamd.
fn scan_record(
    clamd: &Clamd,
    file: &File,
    container: &str,
    r: &RecordFile,
) -> Result<Option<ScanResult>, PackageError> {
    let Some(c) = r.content.as_ref().filter(|c| c.range.len > 0) else { return Ok(None) };
    let range = FileRange::new(file, r.member.begin, r.member.len);
    let mut record: Box<dyn Read> =
        if r.compressed { Box::new(flate2::read::GzDecoder::new(range)) } else { Box::new(range) };
    let unreadable = |e: io::Error| PackageError::RecordUnreadable {
        container: container.to_string(),
        record_id: r.record_id.clone(),
        reason: format!("reading it to scan it: {e}"),
    };
    io::copy(&mut record.by_ref().take(c.range.begin), &mut io::sink()).map_err(unreadable)?;
    let mut payload = record.take(c.range.len);
    let verdict = if c.range.len <= IN_MEMORY_SCAN {
        let mut bytes = Vec::with_capacity(c.range.len as usize);
        payload.read_to_end(&mut bytes).map_err(unreadable)?;
        clamd.scan_bytes(&bytes)
    } else {
        clamd.scan(payload, c.range.len)
    };
    Ok(Some(verdict?))
}

/// Payloads up to this size are read into memory and sent over a pooled clamd session.
const IN_MEMORY_SCAN: u64 = 4 << 20;

fn event(
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    version: &str,
    outcome: String,
    outcome_detail: Option<String>,
    objects: Vec<String>,
) -> Event {
    let detail = format!(
        "program=\"ClamAV (clamd)\"; version=\"{version}\"; scope=\"each record payload, decompressed\""
    );
    super::virus_check_event(ids, opts, now, "clamd", detail, (outcome, outcome_detail), objects)
}

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

/// Runs the cleaner on each infected record's payload; every copy that then scans clean is
/// appended to the container at `path` as a `resource` record at the same URI. Returns the
/// appended records with the index of the infected record each comes from.
fn clean_records(
    cmd: &str,
    clamd: &Clamd,
    old: &File,
    path: &Path,
    infected: &[(u64, RecordFile, String)],
    ids: &Ids,
    opts: &PackageOptions,
) -> Result<Vec<(RecordFile, usize)>, PackageError> {
    let mut out = Vec::new();
    let len = std::fs::metadata(path).map_err(io_err(path))?.len();
    let f = std::fs::OpenOptions::new().append(true).open(path).map_err(io_err(path))?;
    let mut w = WarcWriter::starting_at(BufWriter::new(f), opts.level, len);
    for (k, (_, rec, _)) in infected.iter().enumerate() {
        let Some(c) = &rec.content else { continue };
        let tmp = tempfile::NamedTempFile::new().map_err(io_err(path))?;
        let unreadable = |reason: String| PackageError::RecordUnreadable {
            container: path.display().to_string(),
            record_id: rec.record_id.clone(),
            reason,
        };
        let mut reader = WarcReader::new(
            FileRange::new(old, rec.member.begin, rec.member.len),
            "infected record",
        )
        .map_err(|e| unreadable(e.to_string()))?;
        let head = reader
            .next_record(|head, block| {
                let skip = c.range.begin.saturating_sub(head.header_len);
                io::copy(&mut block.take(skip), &mut io::sink())?;
                io::copy(block, &mut tmp.as_file().try_clone()?)?;
                Ok(())
            })
            .map_err(|e| unreadable(e.to_string()))?
            .map(|(h, _, _)| h.header)
            .ok_or_else(|| unreadable("no record at its stated offset".into()))?;
        let Some(bytes) = super::clean_copy(cmd, tmp.path(), clamd)? else { continue };
        let spec = RecordSpec {
            warc_type: "resource".into(),
            record_id: ids.warc_record_id(),
            date: head.get("WARC-Date").unwrap_or("").to_string(),
            target_uri: head.target_uri().map(str::to_string),
            content_type: Some(c.mime.clone()),
            payload_digest: true,
            extra: vec![(
                "X-Webaip-Cleaned-From".into(),
                format!("<urn:uuid:{}>", rec.record_id.trim_start_matches("urn:uuid:")),
            )],
            ..RecordSpec::default()
        };
        let wr = w.write_record(&spec, &bytes, 0).map_err(io_err(path))?;
        out.push((
            RecordFile {
                record_id: wr.record_id.trim_matches(['<', '>']).to_string(),
                member: ByteRange { begin: wr.member_offset, len: wr.member_len },
                compressed: true,
                content: Some(ContentFile {
                    range: ByteRange { begin: wr.payload_offset, len: wr.digests.payload_len },
                    sha512: crate::formats::digest::hex(&wr.digests.payload_sha512),
                    mime: c.mime.clone(),
                }),
                described: None,
                page: None,
                capture: super::url_capture(
                    "resource",
                    spec.target_uri.as_deref(),
                    &spec.date,
                    rec.capture.as_ref().is_some_and(|c| c.date_inferred),
                ),
            },
            k,
        ));
    }
    let mut b = w.finish().map_err(io_err(path))?;
    b.flush().map_err(io_err(path))?;
    b.into_inner().map_err(|e| io_err(path)(e.into_error()))?.sync_all().map_err(io_err(path))?;
    Ok(out)
}

/// Scans a container's payloads, quarantines infected records, and describes the container's
/// records to the METS.
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_and_describe(
    clamd: &Clamd,
    version: &str,
    r: &mut ContainerResult,
    mets: &mut MetsBuilder,
    root: &Path,
    ids: &Ids,
    opts: &PackageOptions,
    now: DateTime<Utc>,
    summary: &mut ScanSummary,
    extra_files: &mut Vec<(String, String, u64)>,
) -> Result<(), PackageError> {
    let rel = r.file.path.clone();
    let path = root.join(&rel);
    let file = File::open(&path).map_err(io_err(&path))?;
    // Pass 1: scan, in parallel chunks. Each thread reads a record back and then waits on
    // clamd, so twice as many threads as sessions keep both sides busy.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2 * crate::stages::scan::scan_sessions())
        .build()?;
    let mut infected: Vec<(u64, RecordFile, String)> = Vec::new();
    let mut unscanned: Vec<(u64, String)> = Vec::new();
    let mut chunk: Vec<(u64, RecordFile, Option<ScanResult>)> = Vec::with_capacity(CHUNK);
    let mut failure: Option<PackageError> = None;
    let mut flush = |chunk: &mut Vec<(u64, RecordFile, Option<ScanResult>)>,
                     summary: &mut ScanSummary|
     -> Result<(), PackageError> {
        // Records scanned on their way in (migration) carry their verdict; the rest (copied
        // WARCs) are read back from the container and scanned now.
        // Collected into a Result: the first failure stops the other scans of the chunk.
        let results: Vec<_> = pool.install(|| {
            chunk
                .par_iter()
                .map(|(_, rec, known)| match known {
                    Some(v) => Ok(Some(v.clone())),
                    None => scan_record(clamd, &file, &rel, rec),
                })
                .collect::<Result<_, _>>()
        })?;
        for ((i, rec, _), res) in chunk.drain(..).zip(results) {
            match res {
                None => {}
                Some(ScanResult::Clean) => summary.scanned += 1,
                Some(ScanResult::Infected(sig)) => {
                    summary.scanned += 1;
                    summary.infected += 1;
                    summary.findings.push((rel.clone(), rec.record_id.clone(), sig.clone()));
                    infected.push((i, rec, sig));
                }
                Some(ScanResult::NotScanned(why)) => {
                    summary.not_scanned += 1;
                    summary.unscanned.push((rel.clone(), rec.record_id.clone(), why.clone()));
                    unscanned.push((i, why));
                }
            }
        }
        Ok(())
    };
    r.spill
        .for_each(|i, rec, known| {
            chunk.push((i, rec, known));
            if chunk.len() >= CHUNK
                && let Err(e) = flush(&mut chunk, summary)
            {
                failure = Some(e);
                return Err(io::Error::other("scan failed"));
            }
            Ok(())
        })
        .map_err(|e| failure.take().unwrap_or_else(|| io_err(&path)(e)))?;
    flush(&mut chunk, summary)?;

    // Quarantine: infected members leave the container, byte-exact, for viral/.
    let mut removed: Vec<(u64, u64)> =
        infected.iter().map(|(_, rec, _)| (rec.member.begin, rec.member.len)).collect();
    removed.sort();
    let mut viral_records = Vec::new();
    let mut cleaned: Vec<(RecordFile, usize)> = Vec::new();
    if !removed.is_empty() {
        let name = rel.rsplit('/').next().unwrap_or("container.warc.gz").to_string();
        let viral_rel = format!("viral/{}", name.replace(".warc.gz", ".viral.warc.gz"));
        let viral_path = root.join(&viral_rel);
        std::fs::create_dir_all(root.join("viral")).map_err(io_err(root))?;
        let mut vw = WarcWriter::new(
            BufWriter::new(File::create(&viral_path).map_err(io_err(&viral_path))?),
            opts.level,
        );
        use crate::formats::warc::header::warc_fields_line;
        let info = [
            warc_fields_line("software", &format!("webaip/{}", env!("CARGO_PKG_VERSION"))),
            warc_fields_line("format", "WARC File Format 1.1"),
            warc_fields_line(
                "description",
                &format!(
                    "records quarantined from {rel} because clamd found a virus in their payload; each record is the original gzip member, byte-exact"
                ),
            ),
        ]
        .concat();
        let spec = RecordSpec {
            warc_type: "warcinfo".into(),
            record_id: ids.warc_record_id(),
            date: now.to_rfc3339_opts(SecondsFormat::Secs, true),
            filename: Some(viral_rel.rsplit('/').next().unwrap_or("").to_string()),
            content_type: Some("application/warc-fields".into()),
            ..RecordSpec::default()
        };
        vw.write_record(&spec, info.as_bytes(), 0).map_err(io_err(&viral_path))?;
        let mut pos = vw.position();
        let mut out = vw.finish().map_err(io_err(&viral_path))?;
        for (_, rec, sig) in &infected {
            let mut range = FileRange::new(&file, rec.member.begin, rec.member.len);
            io::copy(&mut range, &mut out).map_err(io_err(&viral_path))?;
            let moved =
                RecordFile { member: ByteRange { begin: pos, len: rec.member.len }, ..rec.clone() };
            pos += rec.member.len;
            viral_records.push((moved, sig.clone()));
        }
        out.flush().map_err(io_err(&viral_path))?;
        out.into_inner()
            .map_err(|e| io_err(&viral_path)(e.into_error()))?
            .sync_all()
            .map_err(io_err(&viral_path))?;
        // The container without them.
        let tmp = path.with_extension("gz.split");
        {
            let mut w = BufWriter::new(File::create(&tmp).map_err(io_err(&tmp))?);
            let len = file.metadata().map_err(io_err(&path))?.len();
            let mut at = 0;
            for &(b, l) in removed.iter().chain(std::iter::once(&(len, 0))) {
                let mut keep = FileRange::new(&file, at, b - at);
                io::copy(&mut keep, &mut w).map_err(io_err(&tmp))?;
                at = b + l;
            }
            w.flush().map_err(io_err(&tmp))?;
            w.into_inner()
                .map_err(|e| io_err(&tmp)(e.into_error()))?
                .sync_all()
                .map_err(io_err(&tmp))?;
        }
        std::fs::rename(&tmp, &path).map_err(io_err(&path))?;
        if let Some(cmd) = &opts.cleaner {
            cleaned = clean_records(cmd, clamd, &file, &path, &infected, ids, opts)?;
        }
        let (size, sha) = hash_file(&path)?;
        r.file.size = size;
        r.file.sha512 = sha.clone();
        r.file.object.size = size;
        r.file.object.sha512 = sha;

        // The viral container and its own description.
        let (vsize, vsha) = hash_file(&viral_path)?;
        let mut vcw = mets.begin_container(GroupUse::ViralFiles).map_err(io_err(root))?;
        let mut objects = vec![viral_rel.clone()];
        let forced = opts.profile.virus_outcomes.forced.clone();
        for (rec, sig) in &viral_records {
            let oid = format!("{viral_rel}#{}", rec.record_id);
            objects.push(oid.clone());
            let e = event(
                ids,
                opts,
                now,
                version,
                forced.clone(),
                Some(sig.clone()),
                vec![oid.clone()],
            );
            vcw.add_record(&described(rec, oid, vec![e])).map_err(io_err(root))?;
        }
        let sigs: Vec<&str> = viral_records.iter().map(|(_, s)| s.as_str()).collect();
        let cev = event(
            ids,
            opts,
            now,
            version,
            forced,
            Some(format!("found: {}", sigs.join(", "))),
            objects,
        );
        let vobj = PremisObject {
            id_type: "local".into(),
            id: viral_rel.clone(),
            size: vsize,
            sha512: vsha.clone(),
            format: Format::written_warc(),
            original_name: Some(name),
            // The warcinfo record and the quarantined ones.
            significant_properties: vec![(
                SIGNIFICANT_WARC_RECORDS.into(),
                (viral_records.len() + 1).to_string(),
            )],
            relationships: vec![],
            events: vec![cev.id.clone()],
        };
        let vfile = PackageFile {
            path: viral_rel.clone(),
            mime: "application/warc".into(),
            size: vsize,
            sha512: vsha.clone(),
            created: now,
            object: vobj,
            events: vec![cev],
            described_sources: vec![],
        };
        mets.finish_container(vcw, vfile).map_err(io_err(root))?;
        extra_files.push((viral_rel, vsha, vsize));
    }

    // Pass 2: describe the records that stay, at their new offsets.
    let shift = |b: u64| removed.iter().filter(|(rb, _)| *rb < b).map(|(_, l)| l).sum::<u64>();
    let infected_at: std::collections::HashSet<u64> = infected.iter().map(|(i, _, _)| *i).collect();
    let unscanned_at: std::collections::HashMap<u64, String> = unscanned.into_iter().collect();
    let not_scanned = opts.profile.virus_outcomes.not_scanned.clone();
    let writer = &mut r.writer;
    r.spill
        .for_each(|i, rec, _| {
            if infected_at.contains(&i) {
                return Ok(());
            }
            let moved = RecordFile {
                member: ByteRange {
                    begin: rec.member.begin - shift(rec.member.begin),
                    len: rec.member.len,
                },
                ..rec
            };
            match unscanned_at.get(&i) {
                Some(why) => {
                    let oid = format!("{rel}#{}", moved.record_id);
                    let e = event(
                        ids,
                        opts,
                        now,
                        version,
                        not_scanned.clone(),
                        Some(why.clone()),
                        vec![oid.clone()],
                    );
                    writer.add_record(&described(&moved, oid, vec![e]))
                }
                None => writer.add_record(&moved),
            }
        })
        .map_err(io_err(root))?;
    // Cleaned copies, appended at the end of the container, point at their viral originals.
    let name = rel.rsplit('/').next().unwrap_or("container.warc.gz").to_string();
    let viral_rel = format!("viral/{}", name.replace(".warc.gz", ".viral.warc.gz"));
    for (rec, k) in &cleaned {
        let (_, orig, sig) = &infected[*k];
        let viral_oid = format!("{viral_rel}#{}", orig.record_id);
        let cid = format!("{rel}#{}", rec.record_id);
        let e = event(
            ids,
            opts,
            now,
            version,
            opts.profile.virus_outcomes.cleaned.clone(),
            Some(format!(
                "{sig} removed by the cleaner; the cleaned copy was rescanned: no virus detected"
            )),
            vec![viral_oid.clone(), cid.clone()],
        );
        let mut d = described(rec, cid, vec![e.clone()]);
        if let Some(db) = d.described.as_mut() {
            db.object.relationships.push(Relationship {
                relationship_type: opts.profile.relationships.relationship_type.clone(),
                subtype: opts.profile.relationships.cleaned.clone(),
                related_object: ("local".into(), viral_oid),
                related_event: Some(e.id.clone()),
            });
        }
        summary.cleaned += 1;
        r.writer.add_record(&d).map_err(io_err(root))?;
    }
    r.report.listed = r.writer.listed();
    r.report.records = r.report.records - infected.len() as u64 + cleaned.len() as u64;

    // The container-level virus check.
    let mut detail = Vec::new();
    if !infected.is_empty() {
        detail.push(format!("{} infected payload(s) moved to viral/", infected.len()));
    }
    if !unscanned_at.is_empty() {
        detail.push(format!(
            "{} payload(s) not scanned, each with its own event",
            unscanned_at.len()
        ));
    }
    let e = event(
        ids,
        opts,
        now,
        version,
        opts.profile.virus_outcomes.clean.clone(),
        (!detail.is_empty()).then(|| detail.join("; ")),
        vec![rel.clone()],
    );
    r.file.object.events.push(e.id.clone());
    r.file.events.push(e);
    Ok(())
}
