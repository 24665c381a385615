//! Descriptive and rights rules: the MODS and Dublin Core descriptions the profile requires
//! (P3.1, P3.2), MODS capture dates WARC can state, and rights records in webaip's rights
//! schema, with an embargo's end date (P3.3).

use super::NS_RIGHTS;
use super::rules::RuleContext;
use crate::mets::reader::{Element, NS_METS, NS_MODS, Pos};

/// A rights record in webaip's rights schema being read.
struct RightsRecord {
    access: String,
    until: String,
    at: Pos,
}

/// What the descriptive rules know of the document so far.
#[derive(Default)]
pub(super) struct Descriptive {
    /// The MDTYPE of each description's mdWrap.
    dmd_types: Vec<String>,
    /// Rights records in webaip's rights schema.
    rights_ext: u64,
    rights_current: Option<RightsRecord>,
}

impl Descriptive {
    /// `ancestors`: the local names of the open elements. Returns true when the element's text
    /// is wanted at its end.
    pub fn start(&mut self, e: &Element, at: Pos, ancestors: &[String]) -> bool {
        let local = e.local.as_str();
        if e.ns == NS_METS {
            let in_dmd = ancestors.last().is_some_and(|p| p == "mdWrap")
                || ancestors.iter().any(|l| l == "dmdSec");
            if local == "mdWrap"
                && in_dmd
                && let Some(t) = e.attr("MDTYPE")
            {
                self.dmd_types.push(t.to_string());
            }
            return false;
        }
        if e.ns == NS_MODS {
            // Only a date that says it is W3C-DTF is held to it (MODS knows other encodings).
            return local == "dateCaptured"
                && e.attr("encoding").is_some_and(|v| v.eq_ignore_ascii_case("w3cdtf"));
        }
        if e.ns != NS_RIGHTS {
            return false;
        }
        match local {
            "rights" => {
                let (access, until) = (String::new(), String::new());
                self.rights_current = Some(RightsRecord { access, until, at });
                false
            }
            "access" | "embargoUntil" => true,
            _ => false,
        }
    }

    pub fn end(&mut self, cx: &mut RuleContext, ns: &str, local: &str, text: &str, at: Pos) {
        if ns == NS_MODS && local == "dateCaptured" && !text.is_empty() {
            cx.check_date(local, "the capture date", text, at);
        }
        if ns != NS_RIGHTS {
            return;
        }
        match (local, self.rights_current.as_mut()) {
            ("access", Some(r)) => r.access = text.to_string(),
            ("embargoUntil", Some(r)) => r.until = text.to_string(),
            ("rights", Some(_)) => {
                if let Some(r) = self.rights_current.take() {
                    self.rights_ext += 1;
                    check_rights(cx, &r);
                }
            }
            _ => {}
        }
    }

    /// P3.1-P3.3: MODS and DC descriptions, and a rights record in webaip's rights schema.
    pub fn require(&self, cx: &mut RuleContext) {
        let has = |t: &str| self.dmd_types.iter().any(|d| d == t);
        if cx.profile.rules.require_descriptive && !has("MODS") {
            let what = "no MODS dmdSec for the website".into();
            cx.profile_rule("P3.1", "dmdSec", Pos::START, what);
        }
        if cx.profile.rules.require_descriptive && !has("DC") {
            cx.profile_rule("P3.2", "dmdSec", Pos::START, "no Dublin Core dmdSec".into());
        }
        if cx.profile.rules.rights_extension && self.rights_ext == 0 {
            let what = format!("no rights record in the webaip rights schema ({NS_RIGHTS})");
            cx.profile_rule("P3.3", "rightsMD", Pos::START, what);
        }
    }
}

/// P3.3: an embargo has its end date.
fn check_rights(cx: &mut RuleContext, r: &RightsRecord) {
    if cx.profile.rules.rights_extension && r.access == "embargoed" && r.until.is_empty() {
        let what = "access is embargoed but no embargoUntil date is given".into();
        cx.profile_rule("P3.3", "rights", r.at, what);
    }
}

#[cfg(test)]
mod tests {
    use super::super::checker::tests::{findings_of, package, rules_of};

    #[test]
    fn a_valid_document_has_no_descriptive_finding() {
        let found = findings_of(&package(""));
        assert!(rules_of(&found, &["P3.1", "P3.2", "P3.3", "DATE"]).is_empty(), "{found:?}");
    }

    #[test]
    fn missing_descriptions_and_rights_are_required_sections() {
        let doc = package("")
            .replace(r#"MDTYPE="MODS""#, r#"MDTYPE="OTHER""#)
            .replace(r#"MDTYPE="DC""#, r#"MDTYPE="OTHER""#)
            .replace("rights:rights>", "rights:other>");
        let found = findings_of(&doc);
        let messages: Vec<_> =
            rules_of(&found, &["P3.1", "P3.2", "P3.3"]).iter().map(|f| f.message.clone()).collect();
        assert_eq!(messages.len(), 3, "{found:?}");
        assert_eq!(messages[0], "no MODS dmdSec for the website (profile bl-webarchive)");
        assert_eq!(messages[1], "no Dublin Core dmdSec (profile bl-webarchive)");
        assert!(messages[2].starts_with("no rights record in the webaip rights schema ("));
    }

    #[test]
    fn an_embargo_without_its_end_date_breaks_p3_3() {
        let doc = package("").replace("<rights:access>open<", "<rights:access>embargoed<");
        let found = findings_of(&doc);
        let p33 = rules_of(&found, &["P3.3"]);
        assert_eq!(p33.len(), 1, "{found:?}");
        assert_eq!(
            p33[0].message,
            "access is embargoed but no embargoUntil date is given (profile bl-webarchive)"
        );
        assert_eq!(p33[0].element, "rights");
    }

    #[test]
    fn a_capture_date_past_9999_is_no_date() {
        let doc = package("")
            .replace(">2024-01-01</mods:dateCaptured>", ">+10000-01-01</mods:dateCaptured>");
        let found = findings_of(&doc);
        let dates = rules_of(&found, &["DATE"]);
        assert_eq!(dates.len(), 1, "{found:?}");
        assert!(dates[0].message.starts_with(
            "the capture date \"+10000-01-01\" is no date WARC or the METS can state"
        ));
        // A date in another encoding is not held to W3C-DTF.
        let other = findings_of(&doc.replace(r#"encoding="w3cdtf""#, r#"encoding="marc""#));
        assert!(rules_of(&other, &["DATE"]).is_empty(), "{other:?}");
    }
}
