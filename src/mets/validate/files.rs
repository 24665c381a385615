//! File section rules: the groups the profile names (P4.1), each `<file>`'s location inside the
//! package (P4.2), its byte range (P4.4, P4.6), checksum type, and the attributes a container,
//! a record and a bytestream each need (P4.2-P4.5). A file's PREMIS object is compared with its
//! attributes once the document is read (module `coherence`): here it is only stored.

use std::collections::HashMap;

use super::crossrefs::DescribedFile;
use super::rules::RuleContext;
use crate::mets::reader::{Element, NS_METS, Pos};

/// A `<file>` being read.
struct OpenFile {
    at: Pos,
    /// 0 for a top-level file (a container or log), 1 for a record, 2+ for a bytestream.
    depth: usize,
    id: String,
    group: String,
    /// Its unprefixed (METS) attributes.
    attrs: HashMap<String, String>,
    has_flocat: bool,
    transforms: Vec<String>,
}

impl OpenFile {
    fn get(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }

    /// The attribute is there and not empty.
    fn has(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| !v.is_empty())
    }
}

/// What the file section rules know of the document so far.
#[derive(Default)]
pub(super) struct FileSection {
    present: bool,
    current_group: String,
    /// The `<file>`s open, outermost first.
    open: Vec<OpenFile>,
}

impl FileSection {
    pub fn start(&mut self, cx: &mut RuleContext, e: &Element, at: Pos) {
        if e.ns != NS_METS {
            return;
        }
        match e.local.as_str() {
            "fileSec" => self.present = true,
            "fileGrp" => self.start_group(cx, e, at),
            "file" => self.start_file(cx, e, at),
            "FLocat" => {
                if let Some(f) = self.open.last_mut() {
                    f.has_flocat = true;
                }
                if let Some(href) = e.href() {
                    check_flocat(cx, href, at);
                }
            }
            "transformFile" => {
                if let Some(f) = self.open.last_mut() {
                    f.transforms.push(e.attr("TRANSFORMALGORITHM").unwrap_or_default().into());
                }
            }
            _ => {}
        }
    }

    pub fn end(&mut self, cx: &mut RuleContext, ns: &str, local: &str) {
        if ns != NS_METS {
            return;
        }
        match local {
            "file" => {
                if let Some(f) = self.open.pop() {
                    required_attributes(cx, &f);
                }
            }
            "fileGrp" => self.current_group.clear(),
            _ => {}
        }
    }

    /// P4.1: the document has a file section.
    pub fn require(&self, cx: &mut RuleContext) {
        if !self.present {
            cx.profile_rule("P4.1", "fileSec", Pos::START, "no fileSec".into());
        }
    }

    /// P4.1: a group the profile names.
    fn start_group(&mut self, cx: &mut RuleContext, e: &Element, at: Pos) {
        let u = e.attr("USE").unwrap_or_default();
        let groups = cx.profile.file_groups.all();
        if !groups.contains(&u) {
            let what = format!("file group USE={u:?}; expected one of {}", groups.join(", "));
            cx.profile_rule("P4.1", "fileGrp", at, what);
        }
        self.current_group = u.to_string();
    }

    fn start_file(&mut self, cx: &mut RuleContext, e: &Element, at: Pos) {
        let depth = self.open.len();
        // METS's own attributes are unprefixed.
        let attrs: HashMap<String, String> = e
            .attrs
            .iter()
            .filter(|a| a.ns.is_empty())
            .map(|a| (a.local.clone(), a.value.clone()))
            .collect();
        let id = attrs.get("ID").cloned().unwrap_or_default();
        if depth == 0
            && let (Some(id), Some(x)) = (attrs.get("ID"), cx.xref())
        {
            x.top_file(id, at);
        }
        let group = self.current_group.clone();
        let f = OpenFile { at, depth, id, group, attrs, has_flocat: false, transforms: Vec::new() };
        check_byte_range(cx, &f);
        check_checksum_type(cx, &f);
        store_described(cx, &f);
        self.open.push(f);
    }
}

/// P4.2: a file's FLocat is a relative path that stays inside the package. A URL is what
/// profiles of packages kept elsewhere allow (`local_files = false`); an absolute path or a
/// `..` segment never is.
fn check_flocat(cx: &mut RuleContext, href: &str, at: Pos) {
    let is_url = href.contains("://") || href.starts_with("file:");
    if is_url {
        if cx.profile.rules.local_files {
            let what =
                format!("href {href:?} is a URL; expected a relative path inside the package");
            cx.profile_rule("P4.2", "FLocat", at, what);
        }
        return;
    }
    if let Err(reason) = crate::layout::confined_name(href) {
        let what = format!("href {href:?} {reason}; expected a relative path inside the package");
        cx.error("P4.2", "FLocat", at, what);
    }
}

/// P4.4 and P4.6: a range is in bytes, begins before it ends, and its SIZE is its length.
fn check_byte_range(cx: &mut RuleContext, f: &OpenFile) {
    let (begin, end) = (f.get("BEGIN"), f.get("END"));
    if begin.is_none() && end.is_none() {
        return;
    }
    let betype = f.get("BETYPE");
    if betype != Some("BYTE") {
        let what = format!("BETYPE={betype:?} with BEGIN/END; expected \"BYTE\"");
        cx.error("P4.4", "file", f.at, what);
    }
    let num = |v: Option<&str>| v.and_then(|s| s.trim().parse::<u64>().ok());
    let what = match (num(begin), num(end)) {
        (Some(b), Some(e)) if b > e => format!("BEGIN={b} is after END={e}; expected BEGIN <= END"),
        (Some(b), Some(e)) => match (e - b).checked_add(1) {
            // END = 2^64-1 with BEGIN = 0 names more bytes than a file can hold.
            None => format!(
                "BEGIN={b} END={e}: END - BEGIN + 1 does not fit in 64 bits; expected a range inside a file"
            ),
            Some(len) => match num(f.get("SIZE")) {
                Some(s) if s != len => format!("SIZE={s}; expected END - BEGIN + 1 = {len}"),
                _ => return,
            },
        },
        _ => format!("BEGIN={begin:?} END={end:?}; expected both, as byte offsets"),
    };
    cx.error("P4.6", "file", f.at, what);
}

/// P4.2: the profile's checksum algorithm, and a CHECKSUM says which.
fn check_checksum_type(cx: &mut RuleContext, f: &OpenFile) {
    if let Some(ct) = f.get("CHECKSUMTYPE") {
        if ct != cx.profile.checksum_algorithm {
            let what = format!("CHECKSUMTYPE={ct:?}; expected {:?}", cx.profile.checksum_algorithm);
            cx.profile_rule("P4.2", "file", f.at, what);
        }
    } else if f.get("CHECKSUM").is_some() {
        cx.error("METS-CHECKSUM", "file", f.at, "CHECKSUM without CHECKSUMTYPE".into());
    }
}

/// A file with ADMID is stored, for the comparison with its PREMIS object (P5.1) and the
/// P5.5-P5.7 coherence rules that need the object and its events.
fn store_described(cx: &mut RuleContext, f: &OpenFile) {
    let Some(admid) = f.get("ADMID") else { return };
    let g = &cx.profile.file_groups;
    let container = f.depth == 0
        && [&g.content, &g.original, &g.viral].iter().any(|n| **n == f.group)
        && cx.profile.rules.virus_check_per_container;
    let Some(x) = cx.xref() else { return };
    x.file(&DescribedFile {
        id: &f.id,
        group: &f.group,
        depth: f.depth,
        at: f.at,
        checksum: f.get("CHECKSUM"),
        checksumtype: f.get("CHECKSUMTYPE"),
        size: f.get("SIZE"),
        container_virus: container,
        admid,
    });
}

/// At a file's end: what a container (P4.2, P4.3, P5.5), a record (P4.4) and a bytestream
/// (P4.5) each need.
fn required_attributes(cx: &mut RuleContext, f: &OpenFile) {
    match f.depth {
        0 => container_attributes(cx, f),
        1 => {
            // An uncompressed container's records are addressed directly (no transform).
            let plain = f.get("MIMETYPE") == Some("application/warc");
            if (!plain && !f.transforms.iter().any(|t| t == "GZIP")) || !f.has("BEGIN") {
                let what = format!("record {} needs BETYPE/BEGIN/END and transformFile GZIP", f.id);
                cx.profile_rule("P4.4", "file", f.at, what);
            }
        }
        _ => {
            if !f.has("BEGIN") || !f.has("SIZE") || !f.has("CHECKSUM") {
                let what = format!("bytestream {} needs BEGIN/END, SIZE and CHECKSUM", f.id);
                cx.profile_rule("P4.5", "file", f.at, what);
            }
        }
    }
}

/// A top-level file has its fixity, type, location and PREMIS (P4.2); a container in the
/// content, original or viral group also its WARC transform (P4.3) and virus check (P5.5).
fn container_attributes(cx: &mut RuleContext, f: &OpenFile) {
    let p = &cx.profile;
    let g = &p.file_groups;
    let container = [&g.content, &g.original, &g.viral].iter().any(|n| **n == f.group);
    let mut missing: Vec<&str> = ["MIMETYPE", "SIZE", "CHECKSUM", "CHECKSUMTYPE", "ADMID"]
        .into_iter()
        .filter(|k| !f.has(k))
        .collect();
    if !f.has_flocat {
        missing.push("FLocat");
    }
    if container && p.premis_version.starts_with('3') && !f.has("CREATED") {
        missing.push("CREATED");
    }
    let no_warc =
        container && p.rules.container_transform_file && !f.transforms.iter().any(|t| t == "WARC");
    // A container without ADMID has no event; one with is checked at the end.
    let no_event = container && p.rules.virus_check_per_container && f.get("ADMID").is_none();
    let term = p.events.virus_check.term.clone();
    if !missing.is_empty() {
        let what = format!("file {} lacks {}", f.id, missing.join(", "));
        cx.profile_rule("P4.2", "file", f.at, what);
    }
    if no_warc {
        let what = format!("container {} has no transformFile TRANSFORMALGORITHM=\"WARC\"", f.id);
        cx.profile_rule("P4.3", "file", f.at, what);
    }
    if no_event {
        let what = format!("container {} has no {term:?} event", f.id);
        cx.profile_rule("P5.5", "file", f.at, what);
    }
}

#[cfg(test)]
mod tests {
    use super::super::checker::tests::{findings_of, package, rules_of};

    const RULES: &[&str] = &["P4.1", "P4.2", "P4.3", "P4.4", "P4.5", "P4.6", "METS-CHECKSUM"];

    /// The package with its container's `<file>` start tag replaced.
    fn with_file(tag: &str) -> String {
        let start = r#"<mets:file ID="file-1" MIMETYPE="application/warc" SIZE="10" CHECKSUM="SUM" CHECKSUMTYPE="SHA-512" ADMID="amd-1" CREATED="2024-01-01T00:00:00Z">"#;
        let doc = package("");
        assert!(doc.contains(start));
        doc.replace(start, tag)
    }

    #[test]
    fn a_valid_document_has_no_file_section_finding() {
        let found = findings_of(&package(""));
        assert!(rules_of(&found, RULES).is_empty(), "{found:?}");
    }

    #[test]
    fn byte_ranges_are_checked_in_order_and_length() {
        let records = r#"<mets:file ID="r1" BETYPE="BYTE" BEGIN="9" END="3"><mets:transformFile TRANSFORMALGORITHM="GZIP"/></mets:file><mets:file ID="r2" BETYPE="BYTE" BEGIN="0" END="18446744073709551615"><mets:transformFile TRANSFORMALGORITHM="GZIP"/></mets:file><mets:file ID="r3" BEGIN="0" END="9" SIZE="11"><mets:transformFile TRANSFORMALGORITHM="GZIP"/></mets:file><mets:file ID="r4" BETYPE="BYTE" BEGIN="x"/>"#;
        let doc = package("").replace(
            r#"<mets:transformFile TRANSFORMORDER="1""#,
            &format!("{records}<mets:transformFile TRANSFORMORDER=\"1\""),
        );
        let found = findings_of(&doc);
        let messages: Vec<_> =
            rules_of(&found, &["P4.4", "P4.6"]).iter().map(|f| f.message.clone()).collect();
        assert_eq!(
            messages,
            [
                "BEGIN=9 is after END=3; expected BEGIN <= END",
                "BEGIN=0 END=18446744073709551615: END - BEGIN + 1 does not fit in 64 bits; expected a range inside a file",
                "BETYPE=None with BEGIN/END; expected \"BYTE\"",
                "SIZE=11; expected END - BEGIN + 1 = 10",
                "BEGIN=Some(\"x\") END=None; expected both, as byte offsets",
                "record r4 needs BETYPE/BEGIN/END and transformFile GZIP (profile bl-webarchive)",
            ]
        );
    }

    #[test]
    fn a_container_lacking_its_attributes_transform_and_event_is_named() {
        let found = findings_of(
            &with_file(r#"<mets:file ID="file-1" CHECKSUM="SUM">"#)
                .replace("TRANSFORMALGORITHM=\"WARC\"", "TRANSFORMALGORITHM=\"ZIP\""),
        );
        let messages: Vec<_> =
            rules_of(&found, RULES).iter().map(|f| (f.rule.clone(), f.message.clone())).collect();
        assert!(
            messages.contains(&("METS-CHECKSUM".into(), "CHECKSUM without CHECKSUMTYPE".into())),
            "{messages:?}"
        );
        assert!(messages.contains(&(
            "P4.2".into(),
            "file file-1 lacks MIMETYPE, SIZE, CHECKSUMTYPE, ADMID, CREATED (profile bl-webarchive)".into()
        )), "{messages:?}");
        assert!(messages.contains(&(
            "P4.3".into(),
            "container file-1 has no transformFile TRANSFORMALGORITHM=\"WARC\" (profile bl-webarchive)".into()
        )), "{messages:?}");
        assert!(
            rules_of(&found, &["P5.5"])
                .iter()
                .any(|f| f.message.starts_with("container file-1 has no \"virus check\" event"))
        );
    }

    #[test]
    fn locations_outside_the_package_and_unknown_groups_are_refused() {
        let doc = package("")
            .replace("data/a.warc.gz", "../a.warc.gz")
            .replace(r#"USE="DigitalManifestation""#, r#"USE="Elsewhere""#);
        let found = findings_of(&doc);
        let p41 = rules_of(&found, &["P4.1"]);
        assert!(
            p41[0]
                .message
                .starts_with("file group USE=\"Elsewhere\"; expected one of DigitalManifestation"),
            "{found:?}"
        );
        let p42 = rules_of(&found, &["P4.2"]);
        assert_eq!(p42.len(), 1, "{found:?}");
        assert!(p42[0].message.starts_with("href \"../a.warc.gz\" "), "{found:?}");
        let url =
            findings_of(&package("").replace("data/a.warc.gz", "http://example.org/a.warc.gz"));
        assert!(
            rules_of(&url, &["P4.2"])[0]
                .message
                .starts_with("href \"http://example.org/a.warc.gz\" is a URL")
        );
    }

    #[test]
    fn a_bytestream_needs_its_range_size_and_checksum() {
        let nested = r#"<mets:file ID="rec" BETYPE="BYTE" BEGIN="0" END="9"><mets:transformFile TRANSFORMALGORITHM="GZIP"/><mets:file ID="bs" BETYPE="BYTE" BEGIN="1" END="2"/></mets:file>"#;
        let doc = package("").replace(
            r#"<mets:transformFile TRANSFORMORDER="1""#,
            &format!("{nested}<mets:transformFile TRANSFORMORDER=\"1\""),
        );
        let found = findings_of(&doc);
        let p45 = rules_of(&found, &["P4.5"]);
        assert_eq!(p45.len(), 1, "{found:?}");
        assert_eq!(
            p45[0].message,
            "bytestream bs needs BEGIN/END, SIZE and CHECKSUM (profile bl-webarchive)"
        );
    }
}
