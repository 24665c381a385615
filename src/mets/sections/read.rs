//! Cutting the package-level sections out of a METS document, and reading each with yaserde.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::writer::Writer;
use quick_xml::{NsReader, XmlVersion};
use yaserde::YaSerialize;

use super::premis::PremisVersion;
use super::{
    AmdSec, DmdSec, MAX_SECTION_BYTES, MAX_SECTIONS, MetsHdr, PackageSections, Section,
    SectionsError, tree,
};
use crate::mets::reader::{NS_METS, NS_PREMIS2, NS_PREMIS3};

/// Reads the package-level sections of the METS document at `path` (see the module
/// documentation for which sections, and the bounds).
pub fn read_package_sections(path: &Path) -> Result<PackageSections, SectionsError> {
    let io = |source| SectionsError::Io { path: path.to_path_buf(), source };
    let file = File::open(path).map_err(io)?;
    read_package_sections_from(path, file)
}

/// Reads the package-level sections, as [`read_package_sections`], from `file`, opened by the
/// caller (as a regular file inside its package), `path` naming it.
pub fn read_package_sections_from(
    path: &Path,
    file: File,
) -> Result<PackageSections, SectionsError> {
    let mut cut = Cutter { path, reader: NsReader::from_reader(BufReader::new(file)) };
    let mut out = PackageSections::default();
    let root_decls = cut.root(&mut out)?;
    let mut buf = Vec::new();
    let mut kept = 0usize;
    loop {
        buf.clear();
        let offset = cut.reader.buffer_position();
        let (in_mets, event) = cut
            .reader
            .read_resolved_event_into(&mut buf)
            .map(|(ns, event)| (is_mets(&ns), event))
            .map_err(|source| xml_error(path, offset, source))?;
        let (start, empty) = match event {
            Event::Start(e) => (e.into_owned(), false),
            Event::Empty(e) => (e.into_owned(), true),
            Event::End(_) | Event::Eof => break,
            Event::DocType(_) => return Err(cut.refused(offset, "a document type declaration")),
            _ => continue,
        };
        let local = start.local_name().as_ref().to_string();
        // METS order puts every package-level section before the fileSec: what follows
        // (fileSec, structMaps, structLink, behaviorSec) is left unread.
        if !in_mets || !matches!(local.as_str(), "metsHdr" | "dmdSec" | "amdSec") {
            break;
        }
        if local == "amdSec" && is_record_amd(&start) {
            out.record_amd_secs_skipped += 1;
            if !empty {
                let end = start.to_end().into_owned();
                cut.reader.read_to_end_into(end.name(), &mut buf).map_err(|e| cut.xml(e))?;
            }
            continue;
        }
        kept += 1;
        if kept > MAX_SECTIONS {
            return Err(SectionsError::TooManySections { path: path.to_path_buf(), offset });
        }
        let captured = cut.capture(&start, empty, &root_decls, offset)?;
        cut.model(&local, &captured, offset, &mut out)?;
    }
    Ok(out)
}

/// Reads only the root's identity (`OBJID`, `TYPE`, `PROFILE`, `LABEL`, references resolved)
/// of the METS document in `input`, `path` naming it: the one reader of the root's attributes.
pub fn read_root_identity(path: &Path, input: impl Read) -> Result<PackageSections, SectionsError> {
    let mut cut = Cutter { path, reader: NsReader::from_reader(BufReader::new(input)) };
    let mut out = PackageSections::default();
    cut.root(&mut out)?;
    Ok(out)
}

/// True when a name resolved to the METS namespace.
fn is_mets(ns: &ResolveResult<'_>) -> bool {
    matches!(ns, ResolveResult::Bound(n) if n.0 == NS_METS)
}

fn xml_error(path: &Path, offset: u64, source: quick_xml::Error) -> SectionsError {
    SectionsError::Xml { path: path.to_path_buf(), offset, source }
}

/// True for the amdSec of one record webaip writes (`AMD-<container>-R<n>`).
fn is_record_amd(start: &BytesStart<'_>) -> bool {
    let id = start.attributes().flatten().find(|a| a.key.as_ref() == "ID");
    let Some(id) = id else { return false };
    let Some(rest) = id.value.strip_prefix("AMD-") else { return false };
    rest.rsplit_once("-R").is_some_and(|(c, n)| {
        !c.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    })
}

struct Cutter<'p, R> {
    path: &'p Path,
    reader: NsReader<R>,
}

impl<R: BufRead> Cutter<'_, R> {
    fn xml(&self, source: quick_xml::Error) -> SectionsError {
        xml_error(self.path, self.reader.error_position(), source)
    }

    fn refused(&self, offset: u64, what: &str) -> SectionsError {
        SectionsError::Refused { path: self.path.to_path_buf(), offset, what: what.to_string() }
    }

    /// Reads up to the root's start tag: its identity into `out`, and its namespace
    /// declarations, which every section cut out must carry to be read on its own.
    fn root(&mut self, out: &mut PackageSections) -> Result<Vec<(String, String)>, SectionsError> {
        let mut buf = Vec::new();
        loop {
            let offset = self.reader.buffer_position();
            let path = self.path;
            let (in_mets, event) = self
                .reader
                .read_resolved_event_into(&mut buf)
                .map(|(ns, event)| (is_mets(&ns), event))
                .map_err(|source| xml_error(path, offset, source))?;
            let e = match event {
                Event::Start(e) => e,
                Event::DocType(_) => {
                    return Err(self.refused(offset, "a document type declaration"));
                }
                Event::Eof | Event::Empty(_) | Event::End(_) => {
                    return Err(SectionsError::NotMets {
                        path: self.path.to_path_buf(),
                        found: "no element with content".into(),
                    });
                }
                _ => continue,
            };
            let is_mets = in_mets && e.local_name().as_ref() == "mets";
            if !is_mets {
                let found = e.name().as_ref().to_string();
                return Err(SectionsError::NotMets { path: self.path.to_path_buf(), found });
            }
            let mut decls = Vec::new();
            for a in e.attributes().flatten() {
                let key = a.key.as_ref();
                // `a&amp;b` is the OBJID `a&b`; a reference that is not XML's is refused.
                let value = a.normalized_value(XmlVersion::Implicit1_0).map_err(|source| {
                    let what = format!("a malformed reference in the root's {key} attribute");
                    SectionsError::Refused {
                        path: self.path.to_path_buf(),
                        offset,
                        what: format!("{what} ({source})"),
                    }
                })?;
                let value = value.into_owned();
                if key == "xmlns" || key.starts_with("xmlns:") {
                    decls.push((key.to_string(), value));
                    continue;
                }
                match key {
                    "OBJID" => out.objid = Some(value),
                    "TYPE" => out.mets_type = Some(value),
                    "PROFILE" => out.profile = Some(value),
                    "LABEL" => out.label = Some(value),
                    _ => {}
                }
            }
            return Ok(decls);
        }
    }

    /// The bytes of the section starting with `start`, as a document of its own: the root's
    /// namespace declarations on its first tag (its own win), PREMIS 2's namespace renamed to
    /// PREMIS 3's.
    fn capture(
        &mut self,
        start: &BytesStart<'_>,
        empty: bool,
        root_decls: &[(String, String)],
        offset: u64,
    ) -> Result<Captured, SectionsError> {
        let first = first_tag(start, root_decls);
        let mut w = Writer::new(Vec::new());
        let write_err =
            |e: std::io::Error| SectionsError::Io { path: self.path.to_path_buf(), source: e };
        if empty {
            w.write_event(Event::Empty(first)).map_err(write_err)?;
            return Ok(Captured { bytes: w.into_inner(), premis2: false, premis3: false });
        }
        let (mut premis2, mut premis3) = (false, false);
        w.write_event(Event::Start(first)).map_err(write_err)?;
        let mut depth = 1usize;
        let mut buf = Vec::new();
        while depth > 0 {
            buf.clear();
            let at = self.reader.buffer_position();
            let path = self.path;
            let (ns, event) = self
                .reader
                .read_resolved_event_into(&mut buf)
                .map(|(ns, event)| (premis_of(&ns), event))
                .map_err(|source| xml_error(path, at, source))?;
            if matches!(event, Event::Start(_) | Event::Empty(_)) {
                premis2 |= ns == Some(PremisVersion::V2);
                premis3 |= ns == Some(PremisVersion::V3);
            }
            match &event {
                Event::Start(_) => depth += 1,
                Event::End(_) => depth -= 1,
                _ => self.check_event(&event, at)?,
            }
            w.write_event(event)
                .map_err(|e| SectionsError::Io { path: self.path.to_path_buf(), source: e })?;
            if w.get_ref().len() > MAX_SECTION_BYTES {
                return Err(SectionsError::SectionTooLarge {
                    path: self.path.to_path_buf(),
                    offset,
                });
            }
        }
        Ok(Captured { bytes: w.into_inner(), premis2, premis3 })
    }

    /// An event a section never holds, or the end of the document inside a section.
    fn check_event(&self, event: &Event<'_>, at: u64) -> Result<(), SectionsError> {
        match event {
            Event::Eof => {
                let source = quick_xml::Error::Syntax(quick_xml::errors::SyntaxError::UnclosedTag);
                Err(SectionsError::Xml { path: self.path.to_path_buf(), offset: at, source })
            }
            Event::DocType(_) => Err(self.refused(at, "a document type declaration")),
            Event::GeneralRef(r) if !is_predefined(r) => {
                let what = format!("the entity reference &{};", r.xml10_content());
                Err(self.refused(at, &what))
            }
            _ => Ok(()),
        }
    }

    /// Reads one section's bytes into its struct, writes it back and records what did not
    /// come back.
    fn model(
        &self,
        local: &str,
        captured: &Captured,
        offset: u64,
        out: &mut PackageSections,
    ) -> Result<(), SectionsError> {
        let bytes = captured.bytes.as_slice();
        let (text, premis) = canonical(captured)
            .map_err(|()| SectionsError::MixedPremis { path: self.path.to_path_buf(), offset })?;
        let model_err = |e: yaserde::Error| SectionsError::Model {
            path: self.path.to_path_buf(),
            offset,
            element: format!("mets:{local}"),
            source: e,
        };
        let written = match local {
            "metsHdr" => {
                let value: MetsHdr = yaserde::de::from_str(&text).map_err(model_err)?;
                let w = write_section(&value, premis)?;
                out.header = Some(Section { offset, premis, value });
                w
            }
            "dmdSec" => {
                let value: DmdSec = yaserde::de::from_str(&text).map_err(model_err)?;
                let w = write_section(&value, premis)?;
                out.dmd_secs.push(Section { offset, premis, value });
                w
            }
            _ => {
                let value: AmdSec = yaserde::de::from_str(&text).map_err(model_err)?;
                let w = write_section(&value, premis)?;
                out.amd_secs.push(Section { offset, premis, value });
                w
            }
        };
        let differences =
            tree::section_differences(bytes, written.as_bytes()).map_err(|source| {
                SectionsError::Xml { path: self.path.to_path_buf(), offset, source }
            })?;
        for d in differences {
            if !out.not_modelled.contains(&d) {
                out.not_modelled.push(d);
            }
        }
        Ok(())
    }
}

/// A character reference or one of XML's five entities.
fn is_predefined(r: &quick_xml::events::BytesRef<'_>) -> bool {
    r.is_char_ref() || matches!(r.xml10_content().as_ref(), "amp" | "lt" | "gt" | "quot" | "apos")
}

/// A section cut out of the document, and the PREMIS versions its elements are in.
struct Captured {
    bytes: Vec<u8>,
    premis2: bool,
    premis3: bool,
}

/// The PREMIS version a resolved element name is in, if any.
fn premis_of(ns: &ResolveResult<'_>) -> Option<PremisVersion> {
    match ns {
        ResolveResult::Bound(n) if n.0 == NS_PREMIS2 => Some(PremisVersion::V2),
        ResolveResult::Bound(n) if n.0 == NS_PREMIS3 => Some(PremisVersion::V3),
        _ => None,
    }
}

/// The section as text for yaserde, with PREMIS 2's namespace renamed to PREMIS 3's (the
/// structs name PREMIS 3's: yaserde matches by namespace URI); Err when elements of both occur.
fn canonical(c: &Captured) -> Result<(String, Option<PremisVersion>), ()> {
    let text = String::from_utf8_lossy(&c.bytes).into_owned();
    match (c.premis2, c.premis3) {
        (true, true) => Err(()),
        (true, false) => Ok((rename_ns(&text, NS_PREMIS2, NS_PREMIS3), Some(PremisVersion::V2))),
        (false, true) => Ok((text, Some(PremisVersion::V3))),
        (false, false) => Ok((text, None)),
    }
}

/// `text` with every attribute value equal to `from` (a namespace URI, in a declaration)
/// changed to `to`. A namespace URI is unlikely as the full value of any other attribute, and
/// the comparison with what was read would show it if it were.
fn rename_ns(text: &str, from: &str, to: &str) -> String {
    text.replace(&format!("=\"{from}\""), &format!("=\"{to}\""))
        .replace(&format!("='{from}'"), &format!("='{to}'"))
}

/// A section written back with yaserde, PREMIS 2 sections in PREMIS 2's namespace.
pub(super) fn write_section<T: YaSerialize>(
    value: &T,
    premis: Option<PremisVersion>,
) -> Result<String, SectionsError> {
    let config = yaserde::ser::Config {
        perform_indent: false,
        write_document_declaration: false,
        indent_string: None,
    };
    let text = yaserde::ser::to_string_with_config(value, &config).map_err(SectionsError::Write)?;
    Ok(match premis {
        Some(PremisVersion::V2) => rename_ns(&text, NS_PREMIS3, NS_PREMIS2),
        _ => text,
    })
}
/// A section's first tag as a document's root: the METS root's namespace declarations
/// first (the section's own win), then its own attributes.
fn first_tag(start: &BytesStart<'_>, root_decls: &[(String, String)]) -> BytesStart<'static> {
    let own: Vec<String> =
        start.attributes().flatten().map(|a| a.key.as_ref().to_string()).collect();
    let mut first = BytesStart::new(start.name().as_ref().to_string());
    for (k, v) in root_decls.iter().filter(|(k, _)| !own.contains(k)) {
        first.push_attribute((k.as_str(), v.as_str()));
    }
    for a in start.attributes().flatten() {
        first.push_attribute(a);
    }
    first
}
