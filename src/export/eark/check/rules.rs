//! The CSIP rules of one METS document, applied as the document streams past: each METS
//! element is judged when it opens (its attributes) and when it closes (its children, counted
//! on the way), and only what a rule needs later is kept: the files the document lists (to
//! verify), the representation METS it points at, and a few flags. Memory is bounded by the
//! number of files listed, not by the number of elements or attributes.

use std::collections::HashSet;
use std::io::BufReader;
use std::path::Path;

use super::{CsipFinding, Listed, ListedRules};
use crate::export::eark::{NS_CSIP, PROFILE_SIP, PROFILE_SIP_2_1};
use crate::layout;
use crate::mets::reader::{Element, Event, MetsReader, NS_METS, NS_XLINK};

const VOCAB_CONTENT_CATEGORY: &str =
    include_str!("../../../../data/eark/vocabularies/CSIPVocabularyContentCategory.xml");
const VOCAB_CONTENT_INFO_TYPE: &str =
    include_str!("../../../../data/eark/vocabularies/CSIPVocabularyContentInformationType.xml");
const VOCAB_PACKAGE_TYPE: &str =
    include_str!("../../../../data/eark/vocabularies/CSIPVocabularyOAISPackageType.xml");
const VOCAB_STATUS: &str =
    include_str!("../../../../data/eark/vocabularies/CSIPVocabularyStatus.xml");

/// Elements open at once, at most: deeper is refused (the stack would grow with the input).
const MAX_DEPTH: usize = 4096;

fn terms(vocab: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for part in vocab.split("<Term").skip(1) {
        if let Some(start) = part.find('>') {
            let rest = &part[start + 1..];
            if let Some(end) = rest.find('<') {
                out.insert(rest[..end].to_string());
            }
        }
    }
    out
}

/// A non-empty unprefixed attribute.
fn a<'e>(el: &'e Element, local: &str) -> Option<&'e str> {
    el.attr(local).filter(|v| !v.trim().is_empty())
}

/// A non-empty `csip:` attribute.
fn csip<'e>(el: &'e Element, local: &str) -> Option<&'e str> {
    el.attr_ns(NS_CSIP, local).filter(|v| !v.trim().is_empty())
}

/// What an open METS element is to the rules, with what they count inside it.
enum Role {
    Other,
    Root,
    /// The first `metsHdr`.
    Hdr,
    /// An agent of the first `metsHdr`: true for the first software agent.
    Agent(bool),
    /// `name` / `note` of the first software agent.
    AgentName,
    AgentNote,
    /// `fileSec/fileGrp`, with its `file` children counted.
    FileGrp(u64),
    /// `fileSec/fileGrp/file`, waiting for its first `FLocat`.
    File(Box<Listed>, bool),
    /// The structMap labelled CSIP, with its `div` children counted.
    CsipMap(u64),
    /// Its first `div`, with its `div LABEL="Metadata"` children counted.
    MainDiv(u64),
    /// A division of the main div: whether it is a representation's, the rule its `fptr`s
    /// follow, and its `mptr`s counted.
    SubDiv {
        rep: bool,
        fptr: Option<&'static str>,
        mptrs: u64,
    },
}

/// The parent's role, as far as a child's rules depend on it.
#[derive(Clone, Copy)]
enum Parent {
    Other,
    Hdr,
    Software,
    FileGrp,
    FileWithoutLoc,
    FileWithLoc,
    CsipMap(u64),
    MainDiv,
    SubDiv(bool, Option<&'static str>, u64),
}

/// One open element: its path of METS local names from the root, line and role.
struct Frame {
    path: String,
    line: u64,
    role: Role,
}

/// The software agent's parts, as read.
#[derive(Default)]
struct Software {
    line: u64,
    names: u64,
    first_name_text: bool,
    notes: u64,
    note_text: bool,
    note_typed: bool,
}

/// The state of the rules over one document.
pub(super) struct Rules<'a> {
    name: String,
    is_root: bool,
    out: &'a mut Vec<CsipFinding>,
    vocab: [HashSet<String>; 4],
    /// Open elements; `None` for those outside the METS namespace.
    stack: Vec<Option<Frame>>,
    /// The root element's line, whether it is `mets`, and its `PROFILE`.
    root: Option<(u64, bool, Option<String>)>,
    hdr_seen: bool,
    agents: (u64, bool),
    software: Option<Software>,
    file_sec: Option<u64>,
    groups_use: [bool; 3],
    maps: Option<u64>,
    csip_map_seen: bool,
    /// Whether a dmdSec or amdSec was met (CSIP88 then asks for a Metadata division).
    has_md: bool,
    /// Files the document lists, to verify.
    pub(super) files: Vec<Listed>,
    /// The representation METS it points at (href, line).
    pub(super) reps: Vec<(String, u64)>,
}

/// Reads the METS document at `path` and applies the rules; Err(line, message) when it is not
/// well-formed (the findings up to there are kept).
pub(super) fn apply(path: &Path, rules: &mut Rules<'_>) -> Result<(), (u64, String)> {
    let file = layout::open_regular(path).map_err(|e| (1, e.to_string()))?;
    let mut reader = MetsReader::lenient(BufReader::with_capacity(256 * 1024, file));
    loop {
        let event = match reader.next() {
            Ok(Some(e)) => e,
            Ok(None) => break,
            Err(e) => return Err((e.pos().line, e.to_string())),
        };
        match event {
            Event::Start(el, pos) => rules.open(&el, pos.line, true)?,
            Event::Empty(el, pos) => rules.open(&el, pos.line, false)?,
            Event::End { .. } => rules.close(),
            Event::Text(t, _) => rules.text(&t),
            Event::Refused(r, pos) => return Err((pos.line, format!("{r:?}"))),
        }
    }
    rules.finish();
    Ok(())
}

impl<'a> Rules<'a> {
    pub(super) fn new(name: &str, is_root: bool, out: &'a mut Vec<CsipFinding>) -> Self {
        Rules {
            name: name.to_string(),
            is_root,
            out,
            vocab: [
                terms(VOCAB_CONTENT_CATEGORY),
                terms(VOCAB_CONTENT_INFO_TYPE),
                terms(VOCAB_PACKAGE_TYPE),
                terms(VOCAB_STATUS),
            ],
            stack: Vec::new(),
            root: None,
            hdr_seen: false,
            agents: (0, false),
            software: None,
            file_sec: None,
            groups_use: [false; 3],
            maps: None,
            csip_map_seen: false,
            has_md: false,
            files: Vec::new(),
            reps: Vec::new(),
        }
    }

    fn find(&mut self, line: u64, rule: &str, message: impl Into<String>) {
        self.out.push(CsipFinding::at(&self.name, line, rule, message));
    }

    /// `rule` when `el` (at `path`, `line`) lacks attribute `attr` (or it is empty).
    fn need(&mut self, el: &Element, at: (&str, u64), attr: &str, rule: &str) {
        if a(el, attr).is_none() {
            self.find(at.1, rule, format!("{} has no {attr}", at.0));
        }
    }

    fn need_value(&mut self, el: &Element, at: (&str, u64), attr: &str, want: &str, rule: &str) {
        let got = match attr.strip_prefix("xlink:") {
            Some(l) => el.attr_ns(NS_XLINK, l),
            None => el.attr(attr),
        };
        if got != Some(want) {
            let msg = format!("{}/@{attr} is {got:?}, must be \"{want}\"", at.0);
            self.find(at.1, rule, msg);
        }
    }

    /// The nearest open METS element.
    fn parent(&mut self) -> Option<&mut Frame> {
        self.stack.iter_mut().rev().flatten().next()
    }

    fn open(&mut self, el: &Element, line: u64, open: bool) -> Result<(), (u64, String)> {
        if self.stack.len() >= MAX_DEPTH {
            return Err((line, format!("elements nested deeper than {MAX_DEPTH}")));
        }
        if el.ns != NS_METS {
            if open {
                self.stack.push(None);
            }
            return Ok(());
        }
        let path = match self.parent() {
            Some(p) => format!("{}/{}", p.path, el.local),
            None => el.local.clone(),
        };
        let role = self.role_of(el, &path, line);
        self.stack.push(Some(Frame { path, line, role }));
        if !open {
            self.close();
        }
        Ok(())
    }

    fn text(&mut self, t: &str) {
        let Some(Some(frame)) = self.stack.last() else { return };
        let named = matches!(frame.role, Role::AgentName);
        let noted = matches!(frame.role, Role::AgentNote);
        if let Some(s) = self.software.as_mut()
            && !t.trim().is_empty()
        {
            s.first_name_text |= named && s.names == 1;
            s.note_text |= noted;
        }
    }

    /// Judges an opening element by its attributes; its role for what follows inside.
    fn role_of(&mut self, el: &Element, path: &str, line: u64) -> Role {
        let at = (path, line);
        if self.root.is_none() {
            let is_mets = el.local == "mets";
            self.root = Some((line, is_mets, a(el, "PROFILE").map(str::to_string)));
            if !is_mets {
                self.find(1, "CSIP1", "the document has no mets:mets root element");
                return Role::Other;
            }
            self.root_rules(el, line);
            return Role::Root;
        }
        match path {
            "mets/metsHdr" if !self.hdr_seen => {
                self.hdr_seen = true;
                self.hdr_rules(el, line);
                Role::Hdr
            }
            "mets/dmdSec" => {
                self.has_md = true;
                self.need(el, at, "ID", "CSIP18");
                self.need(el, at, "CREATED", "CSIP19");
                self.status_rule(el, at, "CSIP20");
                Role::Other
            }
            "mets/amdSec/digiprovMD" | "mets/amdSec/rightsMD" => {
                self.has_md = true;
                let (id, status) = if el.local == "rightsMD" {
                    ("CSIP46", "CSIP47")
                } else {
                    ("CSIP33", "CSIP34")
                };
                self.need(el, at, "ID", id);
                self.status_rule(el, at, status);
                Role::Other
            }
            "mets/dmdSec/mdRef" => {
                self.md_ref_rules(el, at, 22);
                Role::Other
            }
            "mets/amdSec/digiprovMD/mdRef" => {
                self.md_ref_rules(el, at, 36);
                Role::Other
            }
            "mets/amdSec/rightsMD/mdRef" => {
                self.md_ref_rules(el, at, 49);
                Role::Other
            }
            _ => self.inner_role(el, at),
        }
    }

    /// Roles below the header and sections: agents, files, the structMap's divisions.
    fn inner_role(&mut self, el: &Element, at: (&str, u64)) -> Role {
        match (self.parent_kind(), el.local.as_str()) {
            (Parent::Hdr, "agent") => self.agent_role(el, at),
            (Parent::Software, "name" | "note") => self.software_part(el),
            (Parent::FileGrp, "file") => {
                if let Some(Role::FileGrp(n)) = self.parent().map(|p| &mut p.role) {
                    *n += 1;
                }
                self.file_rules(el, at)
            }
            (Parent::FileWithoutLoc, "FLocat") => self.flocat_rules(el, at),
            (Parent::FileWithLoc, "FLocat") => {
                self.find(at.1, "CSIP76", "file has more than one FLocat");
                Role::Other
            }
            (Parent::CsipMap(n), "div") => self.map_div_role(el, at, n),
            (Parent::MainDiv, "div") => {
                if let Some(Role::MainDiv(metadata)) = self.parent().map(|p| &mut p.role) {
                    *metadata += u64::from(a(el, "LABEL") == Some("Metadata"));
                }
                self.sub_div_role(el, at)
            }
            (Parent::SubDiv(_, Some(rule), _), "fptr") => {
                self.need(el, at, "FILEID", rule);
                Role::Other
            }
            (Parent::SubDiv(true, _, mptrs), "mptr") => {
                if let Some(Role::SubDiv { mptrs, .. }) = self.parent().map(|p| &mut p.role) {
                    *mptrs += 1;
                }
                if mptrs == 0 {
                    self.mptr_rules(el, at);
                }
                Role::Other
            }
            _ => self.section_role(el, at),
        }
    }

    /// What the open element is, as far as its children's roles depend on it.
    fn parent_kind(&mut self) -> Parent {
        match self.parent().map(|p| &p.role) {
            Some(Role::Hdr) => Parent::Hdr,
            Some(Role::Agent(true)) => Parent::Software,
            Some(Role::FileGrp(_)) => Parent::FileGrp,
            Some(Role::File(_, false)) => Parent::FileWithoutLoc,
            Some(Role::File(_, true)) => Parent::FileWithLoc,
            Some(Role::CsipMap(n)) => Parent::CsipMap(*n),
            Some(Role::MainDiv(_)) => Parent::MainDiv,
            Some(Role::SubDiv { rep, fptr, mptrs }) => Parent::SubDiv(*rep, *fptr, *mptrs),
            _ => Parent::Other,
        }
    }

    /// A software agent's name or note, counted (and the note's type kept) for its rules.
    fn software_part(&mut self, el: &Element) -> Role {
        let is_name = el.local == "name";
        if let Some(s) = self.software.as_mut() {
            if is_name {
                s.names += 1;
            } else {
                s.notes += 1;
                s.note_typed |= csip(el, "NOTETYPE") == Some("SOFTWARE VERSION");
            }
        }
        if is_name { Role::AgentName } else { Role::AgentNote }
    }

    /// A file's first FLocat: its location is kept, and its attributes checked.
    fn flocat_rules(&mut self, el: &Element, at: (&str, u64)) -> Role {
        if let Some(Role::File(listed, has_loc)) = self.parent().map(|p| &mut p.role) {
            *has_loc = true;
            listed.href = el.href().map(str::to_string);
        }
        self.need_value(el, at, "LOCTYPE", "URL", "CSIP77");
        self.need_value(el, at, "xlink:type", "simple", "CSIP78");
        if el.href().is_none() {
            self.find(at.1, "CSIP79", "FLocat has no xlink:href");
        }
        Role::Other
    }

    /// A div of the CSIP structMap: the first is the package's main div (`seen` before it).
    fn map_div_role(&mut self, el: &Element, at: (&str, u64), seen: u64) -> Role {
        if let Some(Role::CsipMap(n)) = self.parent().map(|p| &mut p.role) {
            *n += 1;
        }
        if seen > 0 {
            return Role::Other;
        }
        self.need(el, at, "ID", "CSIP85");
        Role::MainDiv(0)
    }

    /// `fileSec`, `fileGrp` and `structMap`, by path.
    fn section_role(&mut self, el: &Element, at: (&str, u64)) -> Role {
        match at.0 {
            "mets/fileSec" => {
                if self.file_sec.is_none() {
                    self.file_sec = Some(at.1);
                    self.need(el, at, "ID", "CSIP59");
                }
                Role::Other
            }
            "mets/fileSec/fileGrp" => {
                let use_ = a(el, "USE");
                self.groups_use[0] |= use_ == Some("Documentation");
                self.groups_use[1] |= use_ == Some("Schemas");
                self.groups_use[2] |= use_.is_some_and(|u| u.starts_with("Representations"));
                self.need(el, at, "USE", "CSIP64");
                self.need(el, at, "ID", "CSIP65");
                Role::FileGrp(0)
            }
            "mets/structMap" => {
                self.maps.get_or_insert(at.1);
                if a(el, "LABEL") != Some("CSIP") {
                    return Role::Other;
                }
                if self.csip_map_seen {
                    self.find(
                        at.1,
                        "CSIP80",
                        "a second structMap LABEL=\"CSIP\": there must be one",
                    );
                    return Role::Other;
                }
                self.csip_map_seen = true;
                self.need_value(el, at, "TYPE", "PHYSICAL", "CSIP81");
                self.need(el, at, "ID", "CSIP83");
                Role::CsipMap(0)
            }
            _ => Role::Other,
        }
    }

    /// Judges a closing element by what was counted inside it.
    fn close(&mut self) {
        let Some(Some(frame)) = self.stack.pop() else { return };
        match frame.role {
            Role::Hdr => self.agent_rules(frame.line),
            Role::FileGrp(0) => self.find(frame.line, "CSIP66", "fileGrp lists no file"),
            Role::File(listed, true) => self.files.push(*listed),
            Role::File(_, false) => self.find(frame.line, "CSIP76", "file has no FLocat"),
            Role::CsipMap(0) => self.find(frame.line, "CSIP84", "structMap has no div"),
            Role::MainDiv(0) if self.is_root || self.has_md => {
                self.find(frame.line, "CSIP88", "the main div has no div LABEL=\"Metadata\"")
            }
            Role::MainDiv(n) if n > 1 => self.find(
                frame.line,
                "CSIP88",
                format!("the main div has {n} div LABEL=\"Metadata\""),
            ),
            Role::SubDiv { rep: true, mptrs: 0, .. } => {
                self.find(frame.line, "CSIP109", "representation division has no mptr")
            }
            _ => {}
        }
    }

    /// What can only be judged at the document's end.
    fn finish(&mut self) {
        let root_line = match self.root {
            None => {
                self.find(1, "CSIP1", "the document has no mets:mets root element");
                return;
            }
            Some((_, false, _)) => return,
            Some((line, true, _)) => line,
        };
        if !self.hdr_seen {
            self.find(root_line, "CSIP117", "mets has no metsHdr");
        }
        if let Some(line) = self.file_sec
            && self.is_root
        {
            let [doc, schemas, reps] = self.groups_use;
            for (have, use_, rule) in
                [(doc, "Documentation", "CSIP60"), (schemas, "Schemas", "CSIP113")]
            {
                if !have {
                    self.find(line, rule, format!("no fileGrp with USE=\"{use_}\""));
                }
            }
            if !reps {
                self.find(line, "CSIP114", "no fileGrp whose USE starts with \"Representations\"");
            }
        }
        if !self.csip_map_seen {
            match self.maps {
                None => self.find(root_line, "CSIP80", "mets has no structMap"),
                Some(line) => self.find(line, "CSIP82", "no structMap has LABEL=\"CSIP\""),
            }
        }
    }
}

mod elements;
