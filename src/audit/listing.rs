//! The fileSec as the audit needs it: top-level files with their nested record and bytestream
//! `<file>`s, and the number of WARC records each container's PREMIS object states.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use super::AuditError;
use crate::mets::reader::{Event, MetsReader, NS_METS, NS_PREMIS2, NS_PREMIS3, Pos};
use crate::model::SIGNIFICANT_WARC_RECORDS;

/// One `<file>` of the fileSec.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListedFile {
    pub id: String,
    /// Where the `<file>` element is in the METS.
    pub pos: Pos,
    /// USE of the fileGrp (or its ID), for reporting missing groups.
    pub group: String,
    pub href: Option<String>,
    pub mime: Option<String>,
    pub size: Option<u64>,
    pub checksum: Option<String>,
    pub begin: Option<u64>,
    pub end: Option<u64>,
    /// The "WARC records" significant property of the file's PREMIS object, if it states one.
    pub stated_records: Option<u64>,
    /// The size and fixity digest (lowercase) of the file's PREMIS object, if it states them:
    /// where they differ from `size` and `checksum`, bytes that match them are no damage.
    pub premis_size: Option<u64>,
    pub premis_digest: Option<String>,
    pub children: Vec<ListedFile>,
    admid: Vec<String>,
}

impl ListedFile {
    /// True for a file whose records the audit reads: a WARC container.
    pub(crate) fn is_container(&self) -> bool {
        self.mime.as_deref() == Some("application/warc")
            || !self.children.is_empty()
            || self.href.as_deref().is_some_and(crate::layout::is_warc_name)
    }
}

/// Reads the fileSec, and the significant properties of the PREMIS objects in the amdSecs.
/// What the METS reader refuses (a DOCTYPE, an entity) is passed over here: the validation
/// the audit starts with reports it, and the audit goes on with what the document lists.
pub(super) fn list_files(mets: &Path) -> Result<Vec<ListedFile>, AuditError> {
    let file = File::open(mets)
        .map_err(|source| AuditError::MetsUnreadable { path: mets.to_path_buf(), source })?;
    let mut reader = MetsReader::lenient(BufReader::with_capacity(256 * 1024, file));
    let mut top = Vec::new();
    let mut stack: Vec<ListedFile> = Vec::new();
    let mut group = String::new();
    // Record counts by the ID of the amdSec and of the techMD that state them.
    let mut stated: HashMap<String, u64> = HashMap::new();
    // PREMIS objects' (size, digest) by the IDs of the amdSec and MD section holding them.
    let mut fixity: HashMap<String, (Option<u64>, Option<String>)> = HashMap::new();
    let mut object: Option<(Option<u64>, Option<String>)> = None;
    let mut value: Option<String> = None;
    let (mut amd, mut md) = (None::<String>, None::<String>);
    let mut property: Option<(String, String)> = None;
    let mut text: Option<String> = None;
    let premis = |ns: &str| ns == NS_PREMIS3 || ns == NS_PREMIS2;
    let bad = |source| AuditError::Mets { path: mets.to_path_buf(), source };
    while let Some(event) = reader.next().map_err(bad)? {
        match event {
            Event::Start(ref e, pos) | Event::Empty(ref e, pos) => {
                let empty = matches!(event, Event::Empty(..));
                let attr = |k: &str| e.attr(k).map(str::to_string);
                let num = |k: &str| e.attr(k).and_then(|v| v.trim().parse::<u64>().ok());
                match (e.ns.as_str(), e.local.as_str()) {
                    (NS_METS, "amdSec") => amd = attr("ID"),
                    (NS_METS, "techMD" | "digiprovMD") => md = attr("ID"),
                    (ns, "object") if premis(ns) => object = Some(Default::default()),
                    (ns, "size" | "messageDigest") if premis(ns) && object.is_some() => {
                        value = Some(String::new());
                    }
                    (ns, "significantProperties") if premis(ns) => {
                        property = Some(Default::default())
                    }
                    (ns, "significantPropertiesType" | "significantPropertiesValue")
                        if premis(ns) =>
                    {
                        text = Some(String::new());
                    }
                    (NS_METS, "fileGrp") => {
                        group = attr("USE").or(attr("ID")).unwrap_or_default();
                    }
                    (NS_METS, "file") => {
                        let f = ListedFile {
                            id: attr("ID").unwrap_or_default(),
                            pos,
                            group: group.clone(),
                            mime: attr("MIMETYPE"),
                            size: num("SIZE"),
                            checksum: e.attr("CHECKSUM").map(|c| c.to_ascii_lowercase()),
                            begin: num("BEGIN"),
                            end: num("END"),
                            admid: e
                                .attr("ADMID")
                                .map(|a| a.split_whitespace().map(str::to_string).collect())
                                .unwrap_or_default(),
                            ..ListedFile::default()
                        };
                        if empty {
                            attach(&mut stack, &mut top, f);
                        } else {
                            stack.push(f);
                        }
                    }
                    (NS_METS, "FLocat") => {
                        if let (Some(f), Some(h)) = (stack.last_mut(), e.href()) {
                            f.href = Some(h.to_string());
                        }
                    }
                    _ => {}
                }
            }
            Event::Text(t, _) => {
                if let Some(s) = text.as_mut() {
                    s.push_str(&t);
                }
                // A size or digest is short; a longer text is none (and is not gathered).
                if let Some(v) = value.as_mut().filter(|v| v.len() + t.len() <= 1024) {
                    v.push_str(&t);
                }
            }
            Event::End { ns, local, .. } => match (ns.as_str(), local.as_str()) {
                (NS_METS, "file") => {
                    if let Some(f) = stack.pop() {
                        attach(&mut stack, &mut top, f);
                    }
                }
                (NS_METS, "amdSec") => amd = None,
                (NS_METS, "techMD" | "digiprovMD") => md = None,
                (ns, "size") if premis(ns) => {
                    if let (Some(o), Some(v)) = (object.as_mut(), value.take()) {
                        o.0 = o.0.or(v.trim().parse().ok());
                    }
                }
                (ns, "messageDigest") if premis(ns) => {
                    if let (Some(o), Some(v)) = (object.as_mut(), value.take()) {
                        o.1 = o.1.take().or(Some(v.trim().to_ascii_lowercase()));
                    }
                }
                (ns, "object") if premis(ns) => {
                    if let Some(o) = object.take() {
                        for id in [&amd, &md].into_iter().flatten() {
                            fixity.entry(id.clone()).or_insert_with(|| o.clone());
                        }
                    }
                }
                (ns, "significantPropertiesType") if premis(ns) => {
                    if let (Some(p), Some(t)) = (property.as_mut(), text.take()) {
                        p.0 = t.trim().to_string();
                    }
                }
                (ns, "significantPropertiesValue") if premis(ns) => {
                    if let (Some(p), Some(t)) = (property.as_mut(), text.take()) {
                        p.1 = t.trim().to_string();
                    }
                }
                (ns, "significantProperties") if premis(ns) => {
                    if let Some((kind, value)) = property.take()
                        && kind == SIGNIFICANT_WARC_RECORDS
                        && let Ok(n) = value.parse::<u64>()
                    {
                        for id in [&amd, &md].into_iter().flatten() {
                            stated.insert(id.clone(), n);
                        }
                    }
                }
                _ => {}
            },
            Event::Refused(..) => {}
        }
    }
    for f in &mut top {
        f.stated_records = f.admid.iter().find_map(|a| stated.get(a).copied());
        if let Some((size, digest)) = f.admid.iter().find_map(|a| fixity.get(a)) {
            (f.premis_size, f.premis_digest) = (*size, digest.clone());
        }
    }
    Ok(top)
}

fn attach(stack: &mut [ListedFile], top: &mut Vec<ListedFile>, f: ListedFile) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(f),
        None => top.push(f),
    }
}
