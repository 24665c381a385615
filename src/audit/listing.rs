//! The fileSec as the audit needs it: top-level files with their nested record and bytestream
//! `<file>`s, and the number of WARC records each container's PREMIS object states.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use quick_xml::events::Event as XmlEvent;

use super::AuditError;
use crate::model::SIGNIFICANT_WARC_RECORDS;

/// One `<file>` of the fileSec.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListedFile {
    pub id: String,
    /// Byte offset of the `<file>` element in the METS.
    pub offset: u64,
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
    pub children: Vec<ListedFile>,
    admid: Vec<String>,
}

impl ListedFile {
    /// True for a file whose records the audit reads: a WARC container.
    pub fn is_container(&self) -> bool {
        self.mime.as_deref() == Some("application/warc")
            || !self.children.is_empty()
            || self.href.as_deref().is_some_and(|h| h.ends_with(".warc") || h.ends_with(".warc.gz"))
    }
}

/// Reads the fileSec, and the significant properties of the PREMIS objects in the amdSecs.
pub(super) fn list_files(mets: &Path) -> Result<Vec<ListedFile>, AuditError> {
    let bad = |message: String| AuditError::Mets { path: mets.to_path_buf(), message };
    let file = File::open(mets).map_err(|e| bad(e.to_string()))?;
    let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(256 * 1024, file));
    let mut buf = Vec::new();
    let mut top = Vec::new();
    let mut stack: Vec<ListedFile> = Vec::new();
    let mut group = String::new();
    // Record counts by the ID of the amdSec and of the techMD that state them.
    let mut stated: HashMap<String, u64> = HashMap::new();
    let (mut amd, mut md) = (None::<String>, None::<String>);
    let mut property: Option<(String, String)> = None;
    let mut text: Option<String> = None;
    loop {
        let pos = reader.buffer_position();
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| bad(format!("XML error near byte {pos}: {e}")))?;
        match event {
            XmlEvent::Start(ref e) | XmlEvent::Empty(ref e) => {
                let empty = matches!(event, XmlEvent::Empty(_));
                let (name, pairs) = crate::mets::validate::element_parts(e);
                // Keys by local name: FLocat's href is `xlink:href`.
                let attrs: BTreeMap<String, String> = pairs
                    .into_iter()
                    .map(|(k, v)| (k.rsplit(':').next().unwrap_or_default().to_string(), v))
                    .collect();
                let num = |k: &str| attrs.get(k).and_then(|v| v.trim().parse::<u64>().ok());
                match name.as_str() {
                    "amdSec" => amd = attrs.get("ID").cloned(),
                    "techMD" => md = attrs.get("ID").cloned(),
                    "significantProperties" => property = Some(Default::default()),
                    "significantPropertiesType" | "significantPropertiesValue" => {
                        text = Some(String::new());
                    }
                    "fileGrp" => {
                        group = attrs.get("USE").or(attrs.get("ID")).cloned().unwrap_or_default();
                    }
                    "file" => {
                        let f = ListedFile {
                            id: attrs.get("ID").cloned().unwrap_or_default(),
                            offset: pos,
                            group: group.clone(),
                            mime: attrs.get("MIMETYPE").cloned(),
                            size: num("SIZE"),
                            checksum: attrs.get("CHECKSUM").map(|c| c.to_ascii_lowercase()),
                            begin: num("BEGIN"),
                            end: num("END"),
                            admid: attrs
                                .get("ADMID")
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
                    "FLocat" => {
                        if let (Some(f), Some(h)) = (stack.last_mut(), attrs.get("href")) {
                            f.href = Some(h.clone());
                        }
                    }
                    _ => {}
                }
            }
            XmlEvent::Text(ref t) => {
                if let Some(s) = text.as_mut() {
                    s.push_str(&t.xml10_content());
                }
            }
            XmlEvent::End(ref e) => match e.local_name().into_inner() {
                "file" => {
                    if let Some(f) = stack.pop() {
                        attach(&mut stack, &mut top, f);
                    }
                }
                "amdSec" => amd = None,
                "techMD" => md = None,
                "significantPropertiesType" => {
                    if let (Some(p), Some(t)) = (property.as_mut(), text.take()) {
                        p.0 = t.trim().to_string();
                    }
                }
                "significantPropertiesValue" => {
                    if let (Some(p), Some(t)) = (property.as_mut(), text.take()) {
                        p.1 = t.trim().to_string();
                    }
                }
                "significantProperties" => {
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
            XmlEvent::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    for f in &mut top {
        f.stated_records = f.admid.iter().find_map(|a| stated.get(a).copied());
    }
    Ok(top)
}

fn attach(stack: &mut [ListedFile], top: &mut Vec<ListedFile>, f: ListedFile) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(f),
        None => top.push(f),
    }
}
