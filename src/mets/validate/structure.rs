//! Structure rules: the root element (P1.2), the header, the structMaps and the divs of the
//! logical map (P2.1, P2.2), the physical map listing every top-level file (P2.5), and the
//! curator entities the logical map holds (checked after the pass, module `entities`).

use super::crossrefs::{CrossrefError, Crossrefs};
use super::entities::EntityDiv;
use super::rules::RuleContext;
use crate::mets::reader::{Element, NS_METS, Pos};
use crate::profile::Profile;

/// Which kind of structMap the reader is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum StructMapKind {
    #[default]
    None,
    Logical,
    Physical,
    Other,
}

/// What the structure rules know of the document so far.
#[derive(Default)]
pub(super) struct StructureRules {
    root_seen: bool,
    mets_hdr: bool,
    struct_logical: bool,
    struct_physical: bool,
    /// The structMap being read.
    map: StructMapKind,
    website_div: bool,
    div_depth: usize,
    /// The curator entities of the logical map; `entity_open` while inside one.
    entities: Vec<EntityDiv>,
    entity_open: bool,
}

impl StructureRules {
    /// The structMap being read (its references follow the content model's rules).
    pub fn map(&self) -> StructMapKind {
        self.map
    }

    /// The entity divs found, for the check that reads their MODS and records.
    pub fn take_entities(&mut self) -> Vec<EntityDiv> {
        std::mem::take(&mut self.entities)
    }

    pub fn start(&mut self, cx: &mut RuleContext, e: &Element, at: Pos) {
        if !self.root_seen {
            self.root_seen = true;
            root(cx, e, at);
        }
        if e.ns != NS_METS {
            return;
        }
        match e.local.as_str() {
            "metsHdr" => self.mets_hdr = true,
            "structMap" => self.start_map(e),
            "fptr" if self.map == StructMapKind::Physical => {
                if let (Some(id), Some(x)) = (e.attr("FILEID"), cx.xref()) {
                    x.physical_fptr(id);
                }
            }
            "fptr" if self.entity_open && self.div_depth == 2 => {
                if let (Some(id), Some(entity)) = (e.attr("FILEID"), self.entities.last_mut()) {
                    entity.fptrs.push(id.to_string());
                }
            }
            "div" => self.start_div(cx, e, at),
            _ => {}
        }
    }

    pub fn end(&mut self, ns: &str, local: &str) {
        if ns != NS_METS {
            return;
        }
        match local {
            "div" => {
                if self.div_depth == 2 {
                    self.entity_open = false;
                }
                self.div_depth = self.div_depth.saturating_sub(1);
            }
            "structMap" => self.map = StructMapKind::None,
            _ => {}
        }
    }

    fn start_map(&mut self, e: &Element) {
        self.map = match e.attr("TYPE") {
            Some("logical") => {
                self.struct_logical = true;
                StructMapKind::Logical
            }
            Some("physical") => {
                self.struct_physical = true;
                StructMapKind::Physical
            }
            _ => StructMapKind::Other,
        };
    }

    /// The content model (P2.1) is the logical map's; the physical map lists files by folder.
    fn start_div(&mut self, cx: &mut RuleContext, e: &Element, at: Pos) {
        self.div_depth += 1;
        if cx.profile.structure.website.is_empty() || self.map != StructMapKind::Logical {
            return;
        }
        let t = e.attr("TYPE").unwrap_or_default();
        match self.div_depth {
            1 if t == cx.profile.structure.website => {
                self.website_div = true;
                if e.attr("DMDID").is_none() || e.attr("ADMID").is_none() {
                    let what = "the website div needs DMDID (descriptions) and ADMID (rights)";
                    cx.profile_rule("P2.2", "div", at, what.into());
                }
            }
            1 => {}
            2 => self.start_entity_div(cx, e, t, at),
            depth => {
                let id = e.attr("ID").map(|i| format!(" {i}")).unwrap_or_default();
                cx.profile_rule(
                    "P2.1",
                    "div",
                    at,
                    format!("div{id} is at depth {depth}: divs nest deeper than two levels (website, then webpage or associated object)"),
                );
            }
        }
    }

    /// A div below the website: a webpage or associated object. One with descriptions is a
    /// curator entity; one without (a transformed page's automatic div) has only its fptrs
    /// checked.
    fn start_entity_div(&mut self, cx: &mut RuleContext, e: &Element, t: &str, at: Pos) {
        let s = &cx.profile.structure;
        if t != s.webpage && t != s.associated_object {
            let what =
                format!("div TYPE={t:?} below the website; expected WEBPAGE or ASSOCIATEDOBJECT");
            cx.profile_rule("P2.1", "div", at, what);
            return;
        }
        if let Some(dmdid) = e.attr("DMDID")
            && !cx.comparing
        {
            self.entities.push(EntityDiv {
                id: e.attr("ID").unwrap_or_default().to_string(),
                div_type: t.to_string(),
                dmdids: dmdid.split_whitespace().map(str::to_string).collect(),
                fptrs: Vec::new(),
                offset: at,
            });
            self.entity_open = true;
        }
    }

    /// P1.2: the document has a metsHdr.
    pub fn require_header(&self, cx: &mut RuleContext) {
        if !self.mets_hdr {
            cx.profile_rule("P1.2", "mets", Pos::START, "no metsHdr".into());
        }
    }

    /// P2.5 and P2.1: the physical map listing every top-level file, and the logical map
    /// with its website div.
    pub fn require_maps(&self, cx: &mut RuleContext, x: &Crossrefs) -> Result<(), CrossrefError> {
        if cx.profile.rules.physical_map {
            if !self.struct_physical {
                let what = "no structMap TYPE=\"physical\"".into();
                cx.profile_rule("P2.5", "structMap", Pos::START, what);
            } else {
                x.unlisted_files(|id, at| {
                    let what = format!("file {id} is not in the physical structMap");
                    cx.profile_rule("P2.5", "file", at, what);
                })?;
            }
        }
        if !self.struct_logical {
            let what = "no structMap TYPE=\"logical\"".into();
            cx.profile_rule("P2.1", "structMap", Pos::START, what);
        } else if !cx.profile.structure.website.is_empty() && !self.website_div {
            let what = format!("no top-level div TYPE={:?}", cx.profile.structure.website);
            cx.profile_rule("P2.1", "structMap", Pos::START, what);
        }
        Ok(())
    }
}

/// The root is `mets:mets`; its `PROFILE` names the profile that applies (unless the caller
/// gave one), and it has the OBJID and TYPE that profile asks for (P1.2).
fn root(cx: &mut RuleContext, e: &Element, at: Pos) {
    let (ns, local) = (e.ns.as_str(), e.local.as_str());
    if !e.is(NS_METS, "mets") {
        let what = format!("root element is {{{ns}}}{local}; expected mets:mets");
        cx.error("METS", local, at, what);
        return;
    }
    let named = e.attr("PROFILE");
    if cx.explicit.is_none()
        && let Some(p) = named.and_then(Profile::by_uri)
    {
        cx.profile = p;
        cx.required = true;
    }
    if cx.profile.rules.require_objid && e.attr("OBJID").is_none_or(|v| v.trim().is_empty()) {
        let what = "the root has no OBJID; expected a unique package identifier".into();
        cx.profile_rule("P1.2", local, at, what);
    }
    let types = &cx.profile.package_types;
    let t = e.attr("TYPE").unwrap_or_default();
    if !types.is_empty() && !types.iter().any(|k| k == t) {
        let what = format!("TYPE={t:?}; expected one of {}", types.join(", "));
        cx.profile_rule("P1.2", local, at, what);
    }
    if named != Some(cx.profile.uri.as_str()) && cx.required && cx.explicit.is_none() {
        let what = format!("PROFILE={named:?}; expected {:?}", cx.profile.uri);
        cx.profile_rule("P1.2", local, at, what);
    }
}

#[cfg(test)]
mod tests {
    use super::super::checker::tests::{findings_of, package, rules_of};

    #[test]
    fn a_valid_document_has_no_structure_finding() {
        let found = findings_of(&package(""));
        assert!(
            rules_of(&found, &["P1.2", "P2.1", "P2.2", "P2.5", "METS"]).is_empty(),
            "{found:?}"
        );
    }

    #[test]
    fn a_root_other_than_mets_is_named() {
        let found =
            findings_of("<?xml version=\"1.0\"?>\n<mods xmlns=\"http://www.loc.gov/mods/v3\"/>");
        assert_eq!(found[0].rule, "METS");
        assert_eq!(
            found[0].message,
            "root element is {http://www.loc.gov/mods/v3}mods; expected mets:mets"
        );
    }

    #[test]
    fn the_root_lacking_objid_and_type_breaks_p1_2() {
        let doc = package("").replace(r#"OBJID="pkg-1" TYPE="AIP""#, r#"TYPE="box""#);
        let found = findings_of(&doc);
        let p12 = rules_of(&found, &["P1.2"]);
        assert_eq!(p12.len(), 2, "{found:?}");
        assert!(p12[0].message.starts_with("the root has no OBJID"));
        assert!(p12[1].message.starts_with("TYPE=\"box\"; expected one of sSIP, AIP"));
    }

    #[test]
    fn divs_too_deep_or_of_a_foreign_type_break_p2_1() {
        let deep = r#"<mets:div TYPE="SOMETHING"><mets:div ID="d3" TYPE="WEBPAGE"/></mets:div>"#;
        let doc = package("").replace(
            r#"<mets:fptr FILEID="file-1"/></mets:div></mets:structMap>
<mets:structMap TYPE="physical">"#,
            &format!(
                r#"<mets:fptr FILEID="file-1"/>{deep}</mets:div></mets:structMap>
<mets:structMap TYPE="physical">"#
            ),
        );
        let found = findings_of(&doc);
        let p21 = rules_of(&found, &["P2.1"]);
        assert_eq!(p21.len(), 2, "{found:?}");
        assert!(p21[0].message.starts_with("div TYPE=\"SOMETHING\" below the website"));
        assert!(p21[1].message.starts_with("div d3 is at depth 3"));
    }

    #[test]
    fn missing_maps_and_header_are_required_sections() {
        let doc = package("")
            .replace(r#"<mets:metsHdr CREATEDATE="2024-01-01T00:00:00Z"/>"#, "")
            .replace(r#"TYPE="physical""#, r#"TYPE="other""#);
        let found = findings_of(&doc);
        let messages: Vec<_> =
            rules_of(&found, &["P1.2", "P2.5"]).iter().map(|f| f.message.clone()).collect();
        assert_eq!(
            messages,
            [
                "no metsHdr (profile bl-webarchive)",
                "no structMap TYPE=\"physical\" (profile bl-webarchive)"
            ]
        );
    }

    #[test]
    fn a_file_missing_from_the_physical_map_breaks_p2_5() {
        let doc = package("")
            .replace(r#"<mets:div><mets:fptr FILEID="file-1"/></mets:div>"#, "<mets:div/>");
        let found = findings_of(&doc);
        let p25 = rules_of(&found, &["P2.5"]);
        assert_eq!(p25.len(), 1, "{found:?}");
        assert_eq!(
            p25[0].message,
            "file file-1 is not in the physical structMap (profile bl-webarchive)"
        );
    }
}
