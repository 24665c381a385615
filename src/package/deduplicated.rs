//! What deduplication did, as the package states it: an event and relationships on each
//! container's PREMIS object, and the run's report ([`crate::stages::dedup`] decides).

use super::DedupReport;
use super::context::PackageRun;
use crate::model::*;

/// What deduplication did in a container, stated on its PREMIS object (module
/// `stages::dedup`): an event saying which payloads were not stored again and where they are,
/// and a `dependency` / `requires` relationship to each earlier package it refers to; and
/// counted into the package's report.
pub(super) fn deduplicated(
    file: &mut PackageFile,
    t: &crate::stages::dedup::DedupTally,
    run: PackageRun<'_>,
    report: &mut Option<DedupReport>,
) {
    let Some(report) = report.as_mut() else { return };
    report.revisits += t.revisits;
    if let Some(saved) = t.bytes_saved {
        *report.bytes_saved.get_or_insert(0) += saved;
    }
    report.payload_bytes += t.payload_bytes;
    if t.revisits == 0 {
        return;
    }
    let id = run.ids.uuid().to_string();
    let mut where_ = Vec::new();
    for (holder, n) in &t.packages {
        use crate::stages::dedup::Holder;
        let package = match holder {
            Holder::Own => {
                where_.push(format!("{n} in earlier records of this package"));
                continue;
            }
            Holder::Indexed => {
                where_.push(format!("{n} in containers an index names (no package stated)"));
                continue;
            }
            Holder::Package(p) => p,
        };
        where_.push(format!("{n} in package {package}"));
        if !report.depends_on.contains(package) {
            report.depends_on.push(package.clone());
        }
        file.object.relationships.push(Relationship {
            relationship_type: "dependency".into(),
            subtype: "requires".into(),
            related_object: ("OBJID".into(), package.clone()),
            related_event: Some(id.clone()),
        });
    }
    file.object.events.push(id.clone());
    file.events.push(Event {
        id,
        event_type: "deduplication".into(),
        event_type_uri: None,
        date_time: run.now,
        detail: Some(format!(
            "program=\"webaip\"; version=\"{}\"; responses whose payload (SHA-1 and length) is stored already written as WARC revisit records (profile identical-payload-digest): each keeps its record id, date, WARC fields and HTTP header; only the payload bytes, identical to the stored ones, are not stored again",
            env!("CARGO_PKG_VERSION")
        )),
        outcome: "success".into(),
        outcome_detail: Some(format!(
            "{} revisit record(s), {} payload byte(s) not stored again ({}); the payloads are {}",
            t.revisits,
            t.payload_bytes,
            saved_text(t.bytes_saved),
            where_.join(", ")
        )),
        agents: vec![("local".into(), "webaip".into(), "executing program".into())],
        objects: vec![("local".into(), file.path.clone(), "outcome".into())],
    });
}

/// The container bytes saved, as the event and the report say them.
pub fn saved_text(saved: Option<u64>) -> String {
    match saved {
        Some(n) => format!("{n} bytes saved in the container"),
        // A capture is compressed as it is written: what its payload would have taken is never
        // computed.
        None => "container bytes saved not measured: captures are compressed as written".into(),
    }
}
