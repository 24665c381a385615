//! METS writer benchmark: a full-mode METS for 1 000 000 records (time, size, peak RSS; target
//! under 100 MB), and minimal mode's size for 1 000 and 1 000 000 undescribed records (it must
//! not grow). Run with `cargo bench --bench mets` (bench/run-mets.sh also validates the result).

use std::time::Instant;

use chrono::{TimeZone, Utc};
use webaip::internals::model::*;
use webaip::internals::{MetsBuilder, Profile};

fn header() -> PackageHeader {
    PackageHeader {
        objid: "urn:uuid:7d1c2e0a-1b2c-4d3e-8f40-5a6b7c8d9e0f".into(),
        package_type: PackageType::Ssip,
        label: "benchmark".into(),
        created: Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
        organisation: Organisation {
            name: "Example National Library".into(),
            code: "XX-ENL".into(),
        },
        description: Description {
            title: "Benchmark site".into(),
            urls: vec!["https://www.example.org/".into()],
            ..Description::default()
        },
        rights: Rights { access: Access::Open, statement: "Open access.".into() },
        agents: vec![Agent {
            id_type: "local".into(),
            id: "clamav".into(),
            name: "ClamAV (clamd)".into(),
            agent_type: "software".into(),
            version: Some("ClamAV 1.4.6".into()),
            note: None,
        }],
    }
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn write(
    path: &std::path::Path,
    mode: SerializationMode,
    records: u64,
    described: u64,
) -> std::io::Result<u64> {
    let profile = Profile::default_profile();
    let mut b = MetsBuilder::new(header(), profile.clone(), mode)?;
    let per_container = records.div_ceil(10).max(1);
    // Curator-described pages spread over the containers: every record's URL is matched
    // against them as it passes (the cost this measures), and the chosen ones are listed.
    let step = records.checked_div(described).unwrap_or(0).max(1);
    b.describe_entities(
        (0..described)
            .map(|k| {
                let i = k * step;
                let url = format!(
                    "http://www.example.org/page/{}/{}.html",
                    i / per_container + 1,
                    i % per_container
                );
                PageEntity {
                    title: Some(format!("Page {k}")),
                    ..PageEntity::webpage(url, EntityOrigin::Curator)
                }
            })
            .collect(),
    );
    // Ten containers whatever the record count, so only the records differ between runs.
    let mut left = records;
    let mut c = 0;
    while left > 0 || c == 0 {
        c += 1;
        let n = left.min(per_container);
        left -= n;
        let mut cw = b.begin_container(GroupUse::DigitalManifestation)?;
        let mut offset = 400;
        for i in 0..n {
            let len = 300 + (i * 7919) % 40_000;
            cw.add_record(&RecordFile {
                refers: None,
                record_id: format!(
                    "<urn:uuid:00000000-0000-4000-8000-{:012}>",
                    c * per_container + i
                ),
                member: ByteRange { begin: offset, len },
                compressed: true,
                content: Some(ContentFile {
                    range: ByteRange { begin: 450, len: len * 3 },
                    sha512: format!("{:0128x}", (i as u128 + 1) * 0x9e37_79b9_7f4a_7c15),
                    mime: "text/html".into(),
                    identification: None,
                }),
                described: None,
                page: None,
                capture: Some(UrlCapture {
                    uri: format!("http://www.example.org/page/{c}/{i}.html"),
                    date: "2024-03-15T10:30:03Z".into(),
                    date_inferred: false,
                }),
            })?;
            offset += len;
        }
        let path = format!("content/bench-{c:05}.warc.gz");
        let object = PremisObject {
            id_type: "local".into(),
            id: path.clone(),
            size: 1_000_000_000,
            sha512: "0".repeat(128),
            sha256: None,
            format: Format {
                name: "WARC".into(),
                version: Some("1.1".into()),
                pronom: Some("fmt/1355".into()),
            },
            identification: None,
            original_name: None,
            significant_properties: vec![("WARC records".into(), (n + 1).to_string())],
            relationships: vec![],
            events: vec![format!("00000000-0000-4000-8000-{c:012}")],
        };
        let check = Event {
            id: format!("00000000-0000-4000-8000-{c:012}"),
            event_type: profile.events.virus_check.term.clone(),
            event_type_uri: Some(profile.events.virus_check.uri.clone()),
            date_time: header().created,
            detail: None,
            outcome: profile.virus_outcomes.clean.clone(),
            outcome_detail: None,
            agents: vec![("local".into(), "clamav".into(), "executing program".into())],
            objects: vec![("local".into(), path.clone(), "source".into())],
        };
        let file = PackageFile {
            path,
            mime: "application/warc".into(),
            size: 1_000_000_000,
            sha512: "0".repeat(128),
            created: header().created,
            object,
            events: vec![check],
            described_sources: vec![],
        };
        b.finish_container(cw, file)?;
        if left == 0 {
            break;
        }
    }
    if described > 0 {
        webaip::internals::resolve_entities(
            &mut b,
            path.parent().unwrap_or(std::path::Path::new(".")),
        )
        .map_err(std::io::Error::other)?;
    }
    b.finish(std::fs::File::create(path)?)?;
    Ok(std::fs::metadata(path)?.len())
}

fn main() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/work");
    std::fs::create_dir_all(&dir)?;
    let records: u64 =
        std::env::var("METS_BENCH_RECORDS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let full = dir.join("METS-full-1M.xml");
    let t = Instant::now();
    let size = write(&full, SerializationMode::Full, records, 0)?;
    let secs = t.elapsed().as_secs_f64();
    let rss = peak_rss_mb();
    println!(
        "full mode, {records} records: {secs:.2} s, {:.1} MB METS, peak RSS {rss:.1} MB (target < 100 MB)",
        size as f64 / 1e6
    );
    let small = write(&dir.join("METS-minimal-1k.xml"), SerializationMode::Minimal, 1_000, 0)?;
    let t = Instant::now();
    let large = write(&dir.join("METS-minimal-1M.xml"), SerializationMode::Minimal, records, 0)?;
    let plain = t.elapsed().as_secs_f64();
    println!(
        "minimal mode: {small} bytes for 1000 records, {large} bytes for {records} records (must not grow); {plain:.2} s"
    );
    // The same with 100 described pages: each record's URL is compared with theirs.
    let t = Instant::now();
    let pages =
        write(&dir.join("METS-minimal-1M-pages.xml"), SerializationMode::Minimal, records, 100)?;
    let with_pages = t.elapsed().as_secs_f64();
    println!(
        "minimal mode with 100 described pages: {pages} bytes, {with_pages:.2} s ({:.2}x the time without; the URL match per record)",
        with_pages / plain.max(1e-9)
    );
    // The documents differ only in the record counts the containers state (PREMIS
    // significant properties): the number of records listed does not grow.
    let same = without_counts(&dir.join("METS-minimal-1k.xml"))?
        == without_counts(&dir.join("METS-minimal-1M.xml"))?;
    println!("minimal mode documents identical but for the stated record counts: {same}");
    println!("{}", if rss < 100.0 && same { "all targets met" } else { "TARGET MISSED" });
    Ok(())
}

/// A METS document with the values of its "WARC records" significant properties blanked.
fn without_counts(path: &std::path::Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(path)?;
    let open = "<premis:significantPropertiesValue>";
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find(open) {
        out.push_str(&rest[..i + open.len()]);
        rest = &rest[i + open.len()..];
        rest = &rest[rest.find('<').unwrap_or(rest.len())..];
    }
    out.push_str(rest);
    Ok(out)
}
