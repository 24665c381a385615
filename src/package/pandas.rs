//! A PANDAS instance becomes a package (P7, P5.7).
//!
//! Each mirror file becomes a `resource` record at its recovered original URL in a `content/`
//! container, followed by a `metadata` record (`WARC-Concurrent-To` the resource) keeping the
//! mirror path, where the URL came from and the cached HTTP header block. HTML and CSS links
//! are rewritten ([`crate::stages::rewrite`]); a file that changed goes, byte-exact as
//! harvested, into a container in `original/` (file group `Original`), and the new bytestream
//! gets a transformation event and a `derivation/transformation` relationship to its original.
//! Files that needed no change are not duplicated.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::Path;
use std::time::Instant;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::sink::ContainerSink;
use super::{PackageError, PackageOptions, Staging, VirusCheck, finish_header, io_err, new_mets};
use crate::formats::digest::hex;
use crate::formats::digest::sha512_read;
use crate::formats::warc::WrittenRecord;
use crate::formats::warc::header::warc_fields_line;
use crate::formats::warc::writer::RecordSpec;
use crate::ids::Ids;
use crate::layout;
use crate::model::*;
use crate::sources::pandas::{Instance, MirrorFile, UrlSource};
use crate::stages::rewrite::{LinkMap, html_encoding, rewrite_css, rewrite_html_stream};
use crate::stages::scan::{ScanEngine, ScanResult};

/// Files larger than this are copied, never rewritten (a page of 64 MiB is not a page).
const REWRITE_LIMIT: u64 = 64 << 20;
/// Examples listed in the report.
const MAX_EXAMPLES: usize = 100;

/// What packaging a PANDAS instance did.
#[derive(Debug, Clone, Serialize)]
pub struct PandasReport {
    /// The package directory.
    pub package: std::path::PathBuf,
    /// Its identifier.
    pub objid: String,
    /// The instance directory name, title number and time (UTC).
    pub instance: String,
    /// PANDAS title number.
    pub pi: Option<String>,
    /// Instance time in UTC.
    pub instance_time: String,
    /// What was found.
    pub found: Vec<String>,
    /// What was not.
    pub missing: Vec<String>,
    /// Mirror files packaged.
    pub files: u64,
    /// Files per URL source.
    pub url_sources: BTreeMap<String, u64>,
    /// Files whose URL is a guess (from the layout), with their URL.
    pub guessed_urls: Vec<(String, String)>,
    /// Files whose capture time came from the cache (the rest: the instance time).
    pub capture_from_cache: u64,
    /// Files rewritten (kept as originals too).
    pub transformed: u64,
    /// Links rewritten to files of the mirror.
    pub links_to_mirror: u64,
    /// Relative links to things outside the mirror, made absolute.
    pub links_to_outside: u64,
    /// Files that could not be rewritten, and why (kept as harvested).
    pub not_rewritten: Vec<(String, String)>,
    /// Files refused, and why.
    pub refused: Vec<(String, String)>,
    /// Other files of the instance (cache, logs, HTTrack artefacts) packaged in `logs/`.
    pub logs: u64,
    /// What the metadata lacked.
    pub metadata_notes: Vec<String>,
    /// How viruses were checked.
    pub virus_check: String,
    /// Virus scanning results.
    pub scan: super::ScanSummary,
    /// Whether the METS was also checked against the XML schemas.
    pub mets_xsd_checked: bool,
    /// Files and bytes in the package.
    pub package_files: u64,
    /// Leftovers of earlier runs found beside the package, and what was done with them.
    pub leftovers: Vec<String>,
    /// The webpages and associated objects described.
    pub entities: crate::pages::EntitiesReport,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// A file whose links were rewritten: a stylesheet in memory, or a page in a temporary file.
enum Rewrite {
    Memory(crate::stages::rewrite::Rewritten),
    File(crate::stages::rewrite::Rewritten, tempfile::TempPath),
}

impl Rewrite {
    fn stats(&self) -> &crate::stages::rewrite::Rewritten {
        match self {
            Rewrite::Memory(r) | Rewrite::File(r, _) => r,
        }
    }
}

/// Streams an HTML page through the link rewriter into a temporary file inside the package
/// being built (removed when dropped). `Ok(Err(why))`: the page cannot be rewritten and is kept
/// as harvested; `Ok(Ok(None))`: nothing in it changed.
fn rewrite_page_to_file(
    root: &Path,
    f: &MirrorFile,
    map: &LinkMap,
) -> Result<Result<Option<Rewrite>, String>, PackageError> {
    use std::io::Write;
    let mut head = Vec::new();
    super::open_input(&f.path)?.take(4096).read_to_end(&mut head).map_err(io_err(&f.path))?;
    let encoding = html_encoding(&head, Some(&f.mime));
    let tmp =
        tempfile::Builder::new().prefix(".rewrite-").tempfile_in(root).map_err(io_err(root))?;
    let mut out = BufWriter::with_capacity(256 * 1024, tmp.as_file());
    let input = super::open_input(&f.path)?.take(REWRITE_LIMIT);
    let r = match rewrite_html_stream(input, &mut out, encoding, &f.save_path, &f.url, map) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e.to_string())),
    };
    out.flush().map_err(io_err(root))?;
    drop(out);
    if r.count() == 0 {
        return Ok(Ok(None));
    }
    // Every link may already have been what it becomes: then nothing changed.
    let before = super::open_input(&f.path)?.take(REWRITE_LIMIT);
    let before = sha512_read(before).map_err(io_err(&f.path))?;
    let after = sha512_read(File::open(tmp.path()).map_err(io_err(root))?).map_err(io_err(root))?;
    if before == after {
        return Ok(Ok(None));
    }
    Ok(Ok(Some(Rewrite::File(r, tmp.into_temp_path()))))
}

/// Packages one PANDAS instance.
pub fn build_pandas_package(
    inst: &Instance,
    opts: &PackageOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PandasReport, PackageError> {
    let started = Instant::now();
    let staging = Staging::new(&opts.out, opts.force)?;
    let root = staging.root.clone();
    let ids = if opts.deterministic {
        let files: Vec<(String, &Path)> = inst
            .files
            .iter()
            .map(|f| (f.save_path.clone(), f.path.as_path()))
            .chain(
                inst.aux
                    .iter()
                    .map(|a| (layout::in_dir(layout::LOGS_DIR, &a.relative), a.path.as_path())),
            )
            .collect();
        let kind = format!("webaip-pandas/{}/{}", inst.pi.as_deref().unwrap_or(""), inst.name);
        Ids::seeded(super::input_seed(&kind, &files)?)
    } else {
        Ids::random()
    };
    let now = ids.now();
    let objid = format!("urn:uuid:{}", ids.uuid());
    let stem = &inst.stem;
    let mut map = LinkMap::default();
    for f in &inst.files {
        map.insert(&f.save_path, &f.url);
    }
    let mut mets = new_mets(&objid, now, opts, &root)?;
    mets.describe_entities(super::entities_to_describe(opts, &seed_urls(inst))?);
    let content_mets =
        mets.begin_container(GroupUse::DigitalManifestation).map_err(io_err(&root))?;
    let original_mets = mets.begin_container(GroupUse::Original).map_err(io_err(&root))?;
    let date = |t: &DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
    let info_id = ids.warc_record_id();
    let description =
        format!("{}: mirror files at their original URLs, links made absolute", inst.label);
    let orig_info_id = ids.warc_record_id();
    let mut content = ContainerSink::open(
        &root,
        layout::container_name(layout::CONTENT_DIR, stem, 0),
        content_mets,
        opts.level,
        (info_id.clone(), now, &description),
    )?;
    let mut original = ContainerSink::open(
        &root,
        layout::container_name(layout::ORIGINAL_DIR, &format!("{stem}-original"), 0),
        original_mets,
        opts.level,
        (orig_info_id.clone(), now, &description),
    )?;

    // The scanner, when there is one: its identity becomes a PREMIS agent, written once.
    let clamd = match &opts.virus_check {
        VirusCheck::Clamd(c) => {
            let version = super::quarantine::register_scanner(c, &mut mets)?;
            Some((ScanEngine::new(c.clone())?, version))
        }
        VirusCheck::Disabled => None,
    };
    let mut viral: Option<ContainerSink> = None;
    let mut scan = super::ScanSummary::default();
    let scan_event = |version: &str,
                      outcome: String,
                      detail: Option<String>,
                      objects: Vec<String>| {
        let what = format!(
            "program=\"ClamAV (clamd)\"; version=\"{version}\"; scope=\"each file, as harvested\""
        );
        super::virus_check_event(&ids, opts, now, "clamd", what, (outcome, detail), objects)
    };
    let tr_type = &opts.profile.events.transformation;
    let mut report_rewrites = (0u64, 0u64, 0u64);
    let mut not_rewritten = Vec::new();
    let mut guessed = Vec::new();
    let (mut first, mut last): (Option<DateTime<Utc>>, Option<DateTime<Utc>>) = (None, None);
    for f in &inst.files {
        first = Some(first.map_or(f.capture, |x| x.min(f.capture)));
        last = Some(last.map_or(f.capture, |x| x.max(f.capture)));
        if f.url_source == UrlSource::Layout && guessed.len() < MAX_EXAMPLES {
            guessed.push((f.save_path.clone(), f.url.clone()));
        }
        let rewritable = f.size <= REWRITE_LIMIT
            && (f.mime.starts_with("text/html")
                || f.mime.starts_with("text/css")
                || f.mime.starts_with("application/xhtml"));
        let is_css = f.mime.starts_with("text/css");
        // Stylesheets are rewritten in memory; HTML pages stream through the rewriter into a
        // temporary file, so memory is a chunk whatever the size of the page. Opened without
        // following links, a regular file only, and read no further than the limit the walk
        // saw it under (it may have grown since).
        let original_bytes = if rewritable && is_css {
            let mut b = Vec::new();
            super::open_input(&f.path)?
                .take(REWRITE_LIMIT)
                .read_to_end(&mut b)
                .map_err(io_err(&f.path))?;
            Some(b)
        } else {
            None
        };
        let rewritten = match &original_bytes {
            Some(bytes) => {
                let r = rewrite_css(bytes, &f.save_path, &f.url, &map);
                (r.count() > 0 && &r.bytes != bytes).then_some(Rewrite::Memory(r))
            }
            None if rewritable => match rewrite_page_to_file(&root, f, &map)? {
                Ok(r) => r,
                Err(e) => {
                    not_rewritten.push((f.save_path.clone(), e));
                    None
                }
            },
            None => None,
        };
        progress(f.size);
        let verdict = match &clamd {
            Some((c, _)) => Some(match &original_bytes {
                Some(b) => c.scan_bytes(None, b),
                None => c.scan_one(None, super::open_input(&f.path)?, f.size),
            }?),
            None => None,
        };
        if let (Some(ScanResult::Infected(sig)), Some((_, version))) = (&verdict, &clamd) {
            // Quarantined as harvested: never rewritten, never in content/.
            scan.infected += 1;
            let v = match viral.as_mut() {
                Some(v) => v,
                None => {
                    let vcw = mets.begin_container(GroupUse::ViralFiles).map_err(io_err(&root))?;
                    viral.insert(ContainerSink::open(
                        &root,
                        layout::container_name(layout::VIRAL_DIR, &format!("{stem}-viral"), 0),
                        vcw,
                        opts.level,
                        (
                            ids.warc_record_id(),
                            now,
                            "files of the instance in which clamd found a virus, kept as harvested",
                        ),
                    )?)
                }
            };
            scan.findings.push((v.rel.clone(), f.save_path.clone(), sig.clone()));
            let spec = resource_spec(ids.warc_record_id(), f, None);
            let w = match &original_bytes {
                Some(b) => v.write(&root, &spec, b)?,
                None => {
                    let p = f.path.clone();
                    v.writer
                        .write_streamed(&spec, || super::open_input_io(&p), 0)
                        .map_err(io_err(&f.path))?
                }
            };
            let oid = format!("{}#{}", v.rel, f.save_path);
            let e = scan_event(
                version,
                opts.profile.virus_outcomes.forced.clone(),
                Some(sig.clone()),
                vec![oid.clone()],
            );
            let obj = PremisObject {
                significant_properties: vec![],
                relationships: vec![],
                events: vec![e.id.clone()],
                ..bytestream_object(oid.clone(), &w, f)
            };
            v.mets
                .add_record(&record(
                    &w,
                    f,
                    Some(DescribedBytestream { object: obj, events: vec![e] }),
                    None,
                ))
                .map_err(io_err(&root))?;
            // A cleaner may make a clean copy: rescanned, it goes to content/ (P5.5).
            if let (Some(cmd), Some((c, _))) = (&opts.cleaner, &clamd)
                && let Some(cleaned) = crate::stages::scan::clean_copy(cmd, &f.path, c)?
            {
                let spec = resource_spec(ids.warc_record_id(), f, Some(&info_id));
                let cw = content.write(&root, &spec, &cleaned)?;
                let cid = format!("{}#{}", content.rel, f.save_path);
                let ce = scan_event(
                    version,
                    opts.profile.virus_outcomes.cleaned.clone(),
                    Some(format!(
                        "{sig} removed by the cleaner ({cmd}); the cleaned copy was rescanned: no virus detected"
                    )),
                    vec![oid.clone(), cid.clone()],
                );
                let cobj = PremisObject {
                    id_type: "local".into(),
                    id: cid,
                    size: cw.digests.payload_len,
                    sha512: hex(&cw.digests.payload_sha512),
                    format: Format { name: f.mime.clone(), version: None, pronom: None },
                    original_name: Some(f.url.clone()),
                    significant_properties: vec![],
                    relationships: vec![Relationship {
                        relationship_type: opts.profile.relationships.relationship_type.clone(),
                        subtype: opts.profile.relationships.cleaned.clone(),
                        related_object: ("local".into(), oid),
                        related_event: Some(ce.id.clone()),
                    }],
                    events: vec![ce.id.clone()],
                };
                scan.cleaned += 1;
                content
                    .mets
                    .add_record(&record(
                        &cw,
                        f,
                        Some(DescribedBytestream { object: cobj, events: vec![ce] }),
                        None,
                    ))
                    .map_err(io_err(&root))?;
            }
            continue;
        }
        let unscanned_event = match (&verdict, &clamd) {
            (Some(ScanResult::NotScanned(why)), Some((_, version))) => {
                scan.not_scanned += 1;
                scan.unscanned.push((content.rel.clone(), f.save_path.clone(), why.clone()));
                Some(scan_event(
                    version,
                    opts.profile.virus_outcomes.not_scanned.clone(),
                    Some(why.clone()),
                    vec![format!("{}#{}", content.rel, f.save_path)],
                ))
            }
            _ => None,
        };
        let resource_id = ids.warc_record_id();
        let mut spec = resource_spec(resource_id.clone(), f, Some(&info_id));
        let written = match (&rewritten, &original_bytes) {
            (Some(Rewrite::Memory(r)), _) => content.write(&root, &spec, &r.bytes)?,
            (Some(Rewrite::File(_, tmp)), _) => {
                let p = tmp.to_path_buf();
                content.writer.write_streamed(&spec, || File::open(&p), 0).map_err(io_err(&root))?
            }
            (None, Some(b)) => content.write(&root, &spec, b)?,
            (None, None) => {
                let path = f.path.clone();
                content
                    .writer
                    .write_streamed(&spec, || super::open_input_io(&path), 0)
                    .map_err(io_err(&f.path))?
            }
        };
        // The metadata record beside it: mirror path, URL source, cached headers.
        // Every value from input goes through warc_fields_line: a name holding CR LF cannot
        // add a line to the block.
        let mut fields = [
            warc_fields_line("mirror-path", &f.save_path),
            warc_fields_line("url-source", source_name(f.url_source)),
            warc_fields_line(
                "capture-time-source",
                f.capture_source.as_deref().unwrap_or(if f.capture_from_cache {
                    "hts-cache/new.txt"
                } else {
                    "instance directory name"
                }),
            ),
            warc_fields_line("mime-source", &f.mime_source),
            warc_fields_line(
                "transformed",
                if rewritten.is_some() { "yes (original in the Original group)" } else { "no" },
            ),
        ]
        .concat();
        if let Some(h) = &f.cache_headers {
            for line in h.split("\r\n").filter(|l| !l.is_empty()) {
                fields.push_str(&warc_fields_line("cache-header", line));
            }
        }
        spec = RecordSpec {
            warc_type: "metadata".into(),
            record_id: ids.warc_record_id(),
            date: date(&f.capture),
            target_uri: Some(f.url.clone()),
            warcinfo_id: Some(info_id.clone()),
            concurrent_to: Some(resource_id.clone()),
            content_type: Some("application/warc-fields".into()),
            ..RecordSpec::default()
        };
        let meta_written = content.write(&root, &spec, fields.as_bytes())?;

        match &rewritten {
            Some(rw) => {
                let r = rw.stats();
                report_rewrites.0 += 1;
                report_rewrites.1 += r.to_mirror;
                report_rewrites.2 += r.to_outside;
                let orig_spec = resource_spec(ids.warc_record_id(), f, Some(&orig_info_id));
                let ow = match &original_bytes {
                    Some(orig) => original.write(&root, &orig_spec, orig)?,
                    None => {
                        let p = f.path.clone();
                        original
                            .writer
                            .write_streamed(&orig_spec, || super::open_input_io(&p), 0)
                            .map_err(io_err(&f.path))?
                    }
                };
                let orig_obj_id = format!("{}#{}", original.rel, f.save_path);
                let new_obj_id = format!("{}#{}", content.rel, f.save_path);
                let event = Event {
                    id: ids.uuid().to_string(),
                    event_type: tr_type.term.clone(),
                    event_type_uri: Some(tr_type.uri.clone()).filter(|u| !u.is_empty()),
                    date_time: now,
                    detail: Some(format!(
                        "{}: HTML/CSS link rewriting; {} links to mirror files made their original URLs, {} relative links resolved against the page URL; program=\"webaip\"; version=\"{}\"",
                        tr_type.detail_word.clone().unwrap_or_else(|| "transformation".into()),
                        r.to_mirror,
                        r.to_outside,
                        env!("CARGO_PKG_VERSION")
                    )),
                    outcome: "success".into(),
                    outcome_detail: None,
                    agents: vec![("local".into(), "webaip".into(), "executing program".into())],
                    objects: vec![
                        ("local".into(), orig_obj_id.clone(), "source".into()),
                        ("local".into(), new_obj_id.clone(), "outcome".into()),
                    ],
                };
                let new_obj = PremisObject {
                    id_type: "local".into(),
                    id: new_obj_id,
                    size: written.digests.payload_len,
                    sha512: hex(&written.digests.payload_sha512),
                    format: Format { name: f.mime.clone(), version: None, pronom: None },
                    original_name: Some(f.url.clone()),
                    significant_properties: vec![],
                    relationships: vec![Relationship {
                        relationship_type: opts.profile.relationships.relationship_type.clone(),
                        subtype: opts.profile.relationships.transformation.clone(),
                        related_object: ("local".into(), orig_obj_id.clone()),
                        related_event: Some(event.id.clone()),
                    }],
                    events: vec![event.id.clone()],
                };
                let orig_obj = PremisObject {
                    significant_properties: vec![],
                    relationships: vec![],
                    events: vec![event.id.clone()],
                    ..bytestream_object(orig_obj_id, &ow, f)
                };
                let page = f
                    .mime
                    .starts_with("text/html")
                    .then(|| PageRole { kind: PageKind::Webpage, label: f.url.clone() });
                content
                    .mets
                    .add_record(&record(
                        &written,
                        f,
                        Some(DescribedBytestream { object: new_obj, events: vec![event] }),
                        page,
                    ))
                    .map_err(io_err(&root))?;
                original
                    .mets
                    .add_record(&record(
                        &ow,
                        f,
                        Some(DescribedBytestream { object: orig_obj, events: vec![] }),
                        None,
                    ))
                    .map_err(io_err(&root))?;
            }
            _ => {
                let described = unscanned_event.clone().map(|e| DescribedBytestream {
                    object: PremisObject {
                        significant_properties: vec![],
                        relationships: vec![],
                        events: vec![e.id.clone()],
                        ..bytestream_object(format!("{}#{}", content.rel, f.save_path), &written, f)
                    },
                    events: vec![e],
                });
                content
                    .mets
                    .add_record(&record(&written, f, described, None))
                    .map_err(io_err(&root))?;
            }
        }
        let meta_file = MirrorFile { mime: "application/warc-fields".into(), ..f.clone() };
        content
            .mets
            .add_record(&RecordFile {
                capture: None,
                ..record(&meta_written, &meta_file, None, None)
            })
            .map_err(io_err(&root))?;
    }

    // Close the containers and describe them.
    let mut manifest = Vec::new();
    let mut container_objects = Vec::new();
    let mut finished = Vec::new();
    let mut containers = vec![content, original];
    containers.extend(viral);
    for c in containers {
        let c = c.close(&root)?;
        manifest.push((c.rel.clone(), c.sha512.clone()));
        container_objects.push(("local".to_string(), c.rel.clone(), "source".to_string()));
        finished.push((c.mets, c.rel, c.size, c.sha512, c.records, Vec::<Event>::new()));
    }
    let virus_note = match (&opts.virus_check, &clamd) {
        (VirusCheck::Clamd(_), Some((engine, version))) => {
            // Cleaned copies are rescanned, and counted: the engine's count is clamd's work.
            scan.scanned = engine.counts().scanned;
            for (_, rel, _, _, _, events) in finished.iter_mut() {
                let viral_container = rel.starts_with("viral/");
                let (outcome, detail) = if viral_container {
                    let sigs: Vec<&str> =
                        scan.findings.iter().map(|(_, _, s)| s.as_str()).collect();
                    (
                        opts.profile.virus_outcomes.forced.clone(),
                        Some(format!("found: {}", sigs.join(", "))),
                    )
                } else {
                    let moved = (scan.infected > 0 && rel.starts_with("content/")).then(|| {
                        format!("{} infected file(s) kept in viral/ instead", scan.infected)
                    });
                    (opts.profile.virus_outcomes.clean.clone(), moved)
                };
                events.push(scan_event(version, outcome, detail, vec![rel.clone()]));
            }
            format!(
                "clamd {version}: {} files scanned, {} infected (in viral/), {} not scanned",
                scan.scanned, scan.infected, scan.not_scanned
            )
        }
        _ => {
            let objects = container_objects.into_iter().map(|(_, o, _)| o).collect();
            mets.add_package_event(super::no_scan_event(&ids, opts, now, objects));
            super::NO_SCAN_NOTE.to_string()
        }
    };
    for (cw, rel, size, sha, records, events) in finished {
        let name = inst.name.clone();
        let file = super::written_container_file(rel, (size, sha), records, events, name, now);
        mets.finish_container(cw, file).map_err(io_err(&root))?;
    }

    let mut logs = 0u64;
    for aux in &inst.aux {
        let (rel, sha, _) =
            super::add_log(&mut mets, &root, &aux.path, &aux.relative, now, progress)?;
        manifest.push((rel, sha));
        logs += 1;
    }

    let seeds = seed_urls(inst);
    let (description, rights, organisation, metadata_notes) =
        opts.metadata.resolve(&seeds, (first, last));
    finish_header(&mut mets, description, rights, organisation);
    let entities = mets.resolve_entities(&root)?;
    let (_, mets_xsd_checked, package_files, _) = staging.write_mets(mets, &mut manifest, opts)?;
    let leftovers = staging.leftovers.clone();
    let out = staging.commit()?;
    Ok(PandasReport {
        package: out,
        objid,
        instance: inst.name.clone(),
        pi: inst.pi.clone(),
        instance_time: date(&inst.time),
        found: inst.found.clone(),
        missing: inst.missing.clone(),
        files: inst.files.len() as u64,
        url_sources: inst.url_sources.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        guessed_urls: guessed,
        capture_from_cache: inst.files.iter().filter(|f| f.capture_from_cache).count() as u64,
        transformed: report_rewrites.0,
        links_to_mirror: report_rewrites.1,
        links_to_outside: report_rewrites.2,
        not_rewritten,
        refused: inst.refused.clone(),
        logs,
        metadata_notes,
        virus_check: virus_note,
        scan,
        mets_xsd_checked,
        package_files,
        leftovers,
        entities,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The PREMIS object of a mirror file's bytestream as written at `w`.
fn bytestream_object(id: String, w: &WrittenRecord, f: &MirrorFile) -> PremisObject {
    PremisObject {
        id_type: "local".into(),
        id,
        size: w.digests.payload_len,
        sha512: hex(&w.digests.payload_sha512),
        format: Format { name: f.mime.clone(), version: None, pronom: None },
        original_name: Some(f.url.clone()),
        significant_properties: vec![],
        relationships: vec![],
        events: vec![],
    }
}

/// A `resource` record for a mirror file at its original URL.
fn resource_spec(id: String, f: &MirrorFile, warcinfo: Option<&str>) -> RecordSpec {
    RecordSpec {
        warc_type: "resource".into(),
        record_id: id,
        date: f.capture.to_rfc3339_opts(SecondsFormat::Secs, true),
        target_uri: Some(f.url.clone()),
        warcinfo_id: warcinfo.map(str::to_string),
        content_type: Some(f.mime.clone()),
        payload_digest: true,
        extra: vec![("X-Webaip-Mirror-Path".into(), f.save_path.clone())],
        ..RecordSpec::default()
    }
}

fn source_name(s: UrlSource) -> &'static str {
    match s {
        UrlSource::Cache => "hts-cache/new.zip",
        UrlSource::UrlMap => "url.map",
        UrlSource::NewTxt => "hts-cache/new.txt",
        UrlSource::Comment => "HTTrack 'Mirrored from' comment",
        UrlSource::Layout => "host/path layout (a guess)",
        UrlSource::WgetLog => "wget log",
        UrlSource::UrlPrefix => "--url-prefix and the host/path layout",
    }
}

/// The seed: `hts-log.txt`'s "launched on ... at URL", else the first file's URL.
fn seed_urls(inst: &Instance) -> Vec<String> {
    let log = inst.root.join("hts-log.txt");
    let mut text = String::new();
    if let Ok(mut f) = crate::layout::open_regular(&log) {
        let mut buf = vec![0u8; 4096];
        let n = f.read(&mut buf).unwrap_or(0);
        text = String::from_utf8_lossy(&buf[..n]).into_owned();
    }
    if let Some(line) = text.lines().find(|l| l.contains(" launched on "))
        && let Some(url) = line.rsplit(" at ").next()
    {
        let url = url.trim();
        if url.contains("://") {
            return vec![url.to_string()];
        }
    }
    inst.files
        .iter()
        .find(|f| f.save_path.ends_with("index.html"))
        .or(inst.files.first())
        .map(|f| vec![f.url.clone()])
        .unwrap_or_default()
}

fn record(
    w: &WrittenRecord,
    f: &MirrorFile,
    described: Option<DescribedBytestream>,
    page: Option<PageRole>,
) -> RecordFile {
    // Every record made through here is the `resource` capture of a mirror file (the
    // metadata record beside it is no capture: its caller clears this).
    let capture = UrlCapture {
        uri: f.url.clone(),
        date: f.capture.to_rfc3339_opts(SecondsFormat::Secs, true),
        // Own times come from the cache or the file's log line; the instance directory's
        // time, a crawl's start or --capture-date stand in for one.
        date_inferred: !f.capture_from_cache
            && f.capture_source
                .as_deref()
                .is_none_or(|s| s.contains("inferred") || s == "--capture-date"),
    };
    RecordFile { page, ..super::written_record_file(w, f.mime.clone(), described, Some(capture)) }
}
