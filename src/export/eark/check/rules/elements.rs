//! The rules of single elements, judged on their attributes as they open (and the header's
//! agents when it closes).

use super::*;
use crate::export::eark::media_types;

impl Rules<'_> {
    /// CSIP1-6 of the root `mets` element.
    pub(super) fn root_rules(&mut self, el: &Element, line: u64) {
        let at = ("mets", line);
        self.need(el, at, "OBJID", "CSIP1");
        match a(el, "TYPE") {
            Some(t) if self.vocab[0].contains(t) => {
                if t == "Other" && csip(el, "OTHERTYPE").is_none() {
                    self.find(line, "CSIP3", "mets/@TYPE is Other and csip:OTHERTYPE is missing");
                }
            }
            t => self.find(
                line,
                "CSIP2",
                format!("mets/@TYPE {t:?} is not in the content category vocabulary"),
            ),
        }
        match csip(el, "CONTENTINFORMATIONTYPE") {
            Some(t) if !self.vocab[1].contains(t) => self.find(
                line,
                "CSIP4",
                format!("mets/@csip:CONTENTINFORMATIONTYPE {t:?} is not in its vocabulary"),
            ),
            None if !self.is_root => self.find(
                line,
                "CSIP4",
                "a representation METS must state mets/@csip:CONTENTINFORMATIONTYPE",
            ),
            _ => {}
        }
        self.need(el, at, "PROFILE", "CSIP6");
    }

    /// CSIP7, CSIP9 and SIP2 of the first `metsHdr`.
    pub(super) fn hdr_rules(&mut self, el: &Element, line: u64) {
        self.need(el, ("mets/metsHdr", line), "CREATEDATE", "CSIP7");
        let kind = csip(el, "OAISPACKAGETYPE");
        match kind {
            Some(k) if self.vocab[2].contains(k) => {}
            k => self.find(
                line,
                "CSIP9",
                format!("metsHdr/@csip:OAISPACKAGETYPE {k:?} is not in its vocabulary"),
            ),
        }
        let Some((root_line, _, profile)) = self.root.clone() else { return };
        let sip_profiles = [PROFILE_SIP, PROFILE_SIP_2_1];
        if self.is_root
            && kind == Some("SIP")
            && !profile.as_deref().is_some_and(|p| sip_profiles.contains(&p))
        {
            self.find(
                root_line,
                "SIP2",
                format!("mets/@PROFILE must be the E-ARK SIP profile, is {profile:?}"),
            );
        }
    }

    /// An agent of the first header: counted; the first software agent's CSIP13.
    pub(super) fn agent_role(&mut self, el: &Element, at: (&str, u64)) -> Role {
        self.agents.0 += 1;
        let creator = a(el, "ROLE") == Some("CREATOR");
        self.agents.1 |= creator;
        let software = creator && a(el, "TYPE") == Some("OTHER") && self.software.is_none();
        if software {
            self.need_value(el, at, "OTHERTYPE", "SOFTWARE", "CSIP13");
            self.software = Some(Software { line: at.1, ..Software::default() });
        }
        Role::Agent(software)
    }

    /// CSIP10-16 (bar 13): the software agent that made the package, when the header closes.
    pub(super) fn agent_rules(&mut self, hdr_line: u64) {
        if self.agents.0 == 0 {
            self.find(hdr_line, "CSIP10", "metsHdr has no agent");
            return;
        }
        let Some(s) = self.software.take() else {
            if !self.agents.1 {
                self.find(hdr_line, "CSIP11", "no metsHdr/agent has ROLE=\"CREATOR\"");
            } else {
                self.find(hdr_line, "CSIP12", "no CREATOR agent has TYPE=\"OTHER\" (the software)");
            }
            return;
        };
        if s.names != 1 || !s.first_name_text {
            self.find(s.line, "CSIP14", "the software agent must have one non-empty name");
        }
        if s.notes != 1 || !s.note_text {
            let msg =
                format!("the software agent must have one note with its version, has {}", s.notes);
            self.find(s.line, "CSIP15", msg);
        } else if !s.note_typed {
            self.find(
                s.line,
                "CSIP16",
                "the software agent's note must have csip:NOTETYPE=\"SOFTWARE VERSION\"",
            );
        }
    }

    /// A `MIMETYPE` given must be an IANA media type (CSIP26, 40, 53, 68; its absence is the
    /// same rule's `need`).
    fn mime_rule(&mut self, el: &Element, at: (&str, u64), rule: &str) {
        if let Some(m) = a(el, "MIMETYPE")
            && !media_types::is_registered(m)
        {
            let msg = format!("{}/@MIMETYPE {m:?} is not an IANA media type", at.0);
            self.find(at.1, rule, msg);
        }
    }

    pub(super) fn status_rule(&mut self, el: &Element, at: (&str, u64), rule: &str) {
        if let Some(v) = a(el, "STATUS")
            && !self.vocab[3].contains(v)
        {
            let msg = format!("{}/@STATUS {v:?} is not in the status vocabulary", at.0);
            self.find(at.1, rule, msg);
        }
    }

    /// The attribute rules of an `mdRef` (dmdSec CSIP22-30, digiprovMD CSIP36-44, rightsMD
    /// CSIP49-57: the same nine attributes, numbered from `first`).
    pub(super) fn md_ref_rules(&mut self, el: &Element, at: (&str, u64), first: u32) {
        let id = |k: u32| format!("CSIP{}", first + k);
        self.need_value(el, at, "LOCTYPE", "URL", &id(0));
        self.need_value(el, at, "xlink:type", "simple", &id(1));
        if el.href().is_none() {
            self.find(at.1, &id(2), format!("{} has no xlink:href", at.0));
        }
        self.mime_rule(el, at, &id(4));
        for (k, attr) in [
            (3, "MDTYPE"),
            (4, "MIMETYPE"),
            (5, "SIZE"),
            (6, "CREATED"),
            (7, "CHECKSUM"),
            (8, "CHECKSUMTYPE"),
        ] {
            self.need(el, at, attr, &id(k));
        }
        let rules = ListedRules { size: id(5), checksum: id(7), checksum_type: id(8) };
        let mut listed = Listed::of(el, at.1, rules);
        listed.href = el.href().map(str::to_string);
        self.files.push(listed);
    }

    /// CSIP67-72 of a `file`; it waits for its `FLocat` to be listed.
    pub(super) fn file_rules(&mut self, el: &Element, at: (&str, u64)) -> Role {
        for (attr, rule) in [
            ("ID", "CSIP67"),
            ("MIMETYPE", "CSIP68"),
            ("SIZE", "CSIP69"),
            ("CREATED", "CSIP70"),
            ("CHECKSUM", "CSIP71"),
            ("CHECKSUMTYPE", "CSIP72"),
        ] {
            self.need(el, at, attr, rule);
        }
        self.mime_rule(el, at, "CSIP68");
        let rules = ListedRules {
            size: "CSIP69".into(),
            checksum: "CSIP71".into(),
            checksum_type: "CSIP72".into(),
        };
        Role::File(Box::new(Listed::of(el, at.1, rules)), false)
    }

    /// A division of the main div (CSIP89-107), by its label.
    pub(super) fn sub_div_role(&mut self, el: &Element, at: (&str, u64)) -> Role {
        let (id_rule, fptr) = match a(el, "LABEL") {
            Some("Metadata") => ("CSIP89", None),
            Some("Documentation") => ("CSIP94", Some("CSIP116")),
            Some("Schemas") => ("CSIP98", Some("CSIP118")),
            Some("Representations") => ("CSIP102", Some("CSIP119")),
            Some(l) if l.starts_with("Representations/") => ("CSIP106", None),
            None if self.is_root => {
                self.find(at.1, "CSIP107", "a division of the main div has no LABEL");
                return Role::Other;
            }
            _ => return Role::Other,
        };
        self.need(el, at, "ID", id_rule);
        Role::SubDiv { rep: id_rule == "CSIP106", fptr, mptrs: 0 }
    }

    /// CSIP108-112 of a representation division's first `mptr`.
    pub(super) fn mptr_rules(&mut self, el: &Element, at: (&str, u64)) {
        if el.attr_ns(NS_XLINK, "title").is_none() {
            self.find(at.1, "CSIP108", "mptr has no xlink:title (the file group's ID)");
        }
        match el.href() {
            Some(h) => self.reps.push((h.to_string(), at.1)),
            None => self.find(at.1, "CSIP110", "mptr has no xlink:href"),
        }
        self.need_value(el, at, "xlink:type", "simple", "CSIP111");
        self.need_value(el, at, "LOCTYPE", "URL", "CSIP112");
    }
}
