//! Identifiers and references: a METS element's dates, its `ID` (unique, the first element
//! with it keeps it) and its IDREF attributes (`ADMID`, `DMDID`, `FILEID`), which resolve to an
//! ID of the kind the attribute names. The logical map's references are the content model's
//! (P2.2, P2.3); the others are METS's own (`METS-IDREF`).

use super::MAX_REF_FINDINGS;
use super::crossrefs::{self, CrossrefError, Crossrefs};
use super::rules::RuleContext;
use super::structure::StructMapKind;
use crate::mets::reader::{Element, Pos};

/// Stores the dates, ID and IDREF tokens of METS element `e` (read inside structMap `map`).
pub(super) fn start(cx: &mut RuleContext, e: &Element, at: Pos, map: StructMapKind) {
    let local = e.local.as_str();
    for name in ["CREATED", "CREATEDATE", "LASTMODDATE"] {
        if let Some(v) = e.attr(name) {
            cx.check_date(local, name, v, at);
        }
    }
    if let (Some(id), Some(x)) = (e.attr("ID"), cx.xref()) {
        x.id(id, local, IdOwner::of(local).code(), at);
    }
    let logical = map == StructMapKind::Logical && matches!(local, "div" | "fptr");
    for name in ["ADMID", "DMDID", "FILEID"] {
        let rule = match name {
            "DMDID" if logical => "P2.2",
            "FILEID" if logical => "P2.3",
            _ => "METS-IDREF",
        };
        if let (Some(v), Some(x)) = (e.attr(name), cx.xref()) {
            for token in v.split_whitespace() {
                x.reference(name, token, local, rule, at);
            }
        }
    }
}

/// Every IDREF token resolves to an ID, of the kind its attribute names; every ID is used
/// once (the first element with it keeps it).
pub(super) fn check(cx: &mut RuleContext, x: &Crossrefs) -> Result<(), CrossrefError> {
    x.duplicate_ids(|id, element, at, first| {
        let what = format!("ID {id:?} is used twice (first at byte {first})");
        cx.error("METS-ID", &element, at, what)
    })?;
    // Listed one by one up to a bound, the rest counted: millions of tokens pointing at
    // nothing made millions of findings (830 MB for 4 million).
    let mut unlisted = 0u64;
    let mut last = None;
    x.references(|r| {
        if cx.findings.len() < MAX_REF_FINDINGS {
            check_ref(cx, r);
        } else if let Some(what) = wrong_ref(&r) {
            unlisted += 1;
            last = Some((r.rule, r.element, r.at, what));
        }
    })?;
    if let Some((rule, element, at, what)) = last {
        let message = format!(
            "{unlisted} more IDREF tokens point at no element of the kind their attribute names \
             (not listed past {MAX_REF_FINDINGS} findings; the last, here, at {what})"
        );
        cx.error(&rule, &element, at, message);
    }
    Ok(())
}

/// Checks one IDREF token against the IDs of the document.
fn check_ref(cx: &mut RuleContext, r: crossrefs::Reference) {
    if let Some(what) = wrong_ref(&r) {
        let (attr, value) = (&r.attr, &r.token);
        cx.error(&r.rule, &r.element, r.at, format!("{attr} {value:?} points at {what}"));
    }
}

/// What a wrong IDREF token points at instead (`None`: it is right).
fn wrong_ref(r: &crossrefs::Reference) -> Option<String> {
    let want = match r.attr.as_str() {
        "DMDID" => Some(IdOwner::DmdSec),
        "FILEID" => Some(IdOwner::File),
        _ => None,
    };
    let what = match r.owner.map(IdOwner::from_code) {
        None => match want {
            Some(w) => format!("no <{}>", w.name()),
            None => "no ID".into(),
        },
        Some(found) if want.is_some_and(|w| w != found) => {
            let w = want.map(IdOwner::name).unwrap_or_default();
            let found = match found {
                IdOwner::Other => "another element".to_string(),
                f => format!("a <{}>", f.name()),
            };
            format!("{found}; expected a <{w}>")
        }
        Some(_) => return None,
    };
    Some(what)
}

/// The kind of element an ID belongs to, as far as IDREF checks need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdOwner {
    File,
    DmdSec,
    Other,
}

impl IdOwner {
    fn of(local: &str) -> Self {
        match local {
            "file" => IdOwner::File,
            "dmdSec" => IdOwner::DmdSec,
            _ => IdOwner::Other,
        }
    }

    /// As the cross-reference tables store it.
    fn code(self) -> u8 {
        match self {
            IdOwner::File => 1,
            IdOwner::DmdSec => 2,
            IdOwner::Other => 3,
        }
    }

    fn from_code(code: u8) -> Self {
        match code {
            1 => IdOwner::File,
            2 => IdOwner::DmdSec,
            _ => IdOwner::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            IdOwner::File => "file",
            IdOwner::DmdSec => "dmdSec",
            IdOwner::Other => "element",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::checker::tests::{findings_of, package};

    #[test]
    fn a_valid_document_has_no_reference_finding() {
        let found = findings_of(&package(""));
        assert!(found.iter().all(|f| !f.rule.contains("ID")), "{found:?}");
    }

    #[test]
    fn a_duplicate_id_is_reported_with_the_first_ones_byte() {
        let doc = package(r#"<mets:dmdSec ID="dmd-web"/>"#);
        let found = findings_of(&doc);
        let dup: Vec<_> = found.iter().filter(|f| f.rule == "METS-ID").collect();
        assert_eq!(dup.len(), 1, "{found:?}");
        assert!(dup[0].message.starts_with("ID \"dmd-web\" is used twice (first at byte "));
        assert_eq!(dup[0].element, "dmdSec");
    }

    #[test]
    fn a_reference_to_the_wrong_kind_or_to_nothing_is_reported() {
        let doc = package(
            r#"<mets:dmdSec ID="odd" DMDID="file-1"/><mets:dmdSec ID="odd2" ADMID="nowhere"/>"#,
        );
        let found = findings_of(&doc);
        let wrong = found.iter().find(|f| f.message.starts_with("DMDID \"file-1\"")).unwrap();
        assert_eq!(wrong.rule, "METS-IDREF");
        assert_eq!(wrong.message, "DMDID \"file-1\" points at a <file>; expected a <dmdSec>");
        let dangling = found.iter().find(|f| f.message.starts_with("ADMID \"nowhere\"")).unwrap();
        assert_eq!(dangling.message, "ADMID \"nowhere\" points at no ID");
    }

    #[test]
    fn the_logical_maps_references_are_the_content_models_rules() {
        let doc = package("").replace(r#"FILEID="file-1""#, r#"FILEID="absent""#);
        let found = findings_of(&doc);
        let f = found.iter().find(|f| f.message.starts_with("FILEID \"absent\"")).unwrap();
        assert_eq!(
            (f.rule.as_str(), f.message.as_str()),
            ("P2.3", "FILEID \"absent\" points at no <file>")
        );
    }
}
