//! Reading a DROID container signature file (`ContainerSignatureMapping`) with the same
//! streaming walk as the binary signature file: container signatures (the files each names,
//! with their byte signatures), the formats each maps to, and the binary formats that trigger
//! a look inside. The byte signatures inside `BinarySignatures` are read by the binary
//! signature file's own reader (`droid::parse`).

use std::io::BufRead;

use super::super::error::DroidError;
use super::super::parse::{self, RawSignature, XmlEvent};
use super::ContainerKind;

/// A `File` of a container signature: a path the container must hold, and the byte
/// signatures (any one of them) its bytes must match (none: the name is enough).
#[derive(Debug, Default)]
pub(crate) struct RawPart {
    pub(crate) path: String,
    pub(crate) signatures: Vec<RawSignature>,
}

/// A `ContainerSignature` (`kind` is `None` for a container type webaip does not read).
#[derive(Debug)]
pub(crate) struct RawContainer {
    pub(crate) id: u32,
    pub(crate) kind: Option<ContainerKind>,
    pub(crate) parts: Vec<RawPart>,
}

/// Everything read from a container signature file.
#[derive(Debug, Default)]
pub(crate) struct RawContainerFile {
    /// `signatureVersion` of the root element.
    pub(crate) version: u32,
    pub(crate) signatures: Vec<RawContainer>,
    /// (container signature ID, PUID) of every `FileFormatMapping`.
    pub(crate) mappings: Vec<(u32, String)>,
    /// (container type, PUID) of every `TriggerPuid` of a type webaip reads.
    pub(crate) triggers: Vec<(ContainerKind, String)>,
}

/// Reads a whole container signature file.
pub(crate) fn read<R: BufRead>(input: R) -> Result<RawContainerFile, DroidError> {
    let mut st = State::default();
    parse::walk(input, |ev, pos| st.on(ev, pos))?;
    if !st.finished {
        return Err(DroidError::Truncated);
    }
    Ok(st.file)
}

#[derive(Default)]
struct State {
    file: RawContainerFile,
    finished: bool,
    text: String,
    /// Inside `BinarySignatures`: the binary reader's state, whose signatures are taken at
    /// its end.
    binary: Option<parse::State>,
    container: Option<RawContainer>,
    part: Option<RawPart>,
}

fn kind(text: Option<String>) -> Option<ContainerKind> {
    match text?.trim() {
        "ZIP" => Some(ContainerKind::Zip),
        "OLE2" => Some(ContainerKind::Ole2),
        _ => None,
    }
}

impl State {
    fn on(&mut self, ev: XmlEvent<'_>, pos: u64) -> Result<(), DroidError> {
        if let Some(binary) = &mut self.binary
            && !matches!(ev, XmlEvent::End("BinarySignatures"))
        {
            return binary.on(ev, pos);
        }
        match ev {
            XmlEvent::Start(e) => self.start(e, pos),
            XmlEvent::End(name) => self.end(name, pos),
            XmlEvent::Text(t) => {
                self.text.push_str(t);
                Ok(())
            }
        }
    }

    fn start(&mut self, e: &quick_xml::events::BytesStart<'_>, pos: u64) -> Result<(), DroidError> {
        let attr = |name: &str| parse::attribute(e, name, pos);
        let number = |name: &str| -> Result<u32, DroidError> {
            let v = attr(name)?.unwrap_or_default();
            v.trim()
                .parse()
                .map_err(|_| DroidError::Invalid { pos, what: format!("{name}=\"{v}\"") })
        };
        self.text.clear();
        match e.local_name().as_ref() {
            "ContainerSignatureMapping" => self.file.version = number("signatureVersion")?,
            "ContainerSignature" => {
                let (id, kind) = (number("Id")?, kind(attr("ContainerType")?));
                self.container = Some(RawContainer { id, kind, parts: Vec::new() });
            }
            "File" => self.part = Some(RawPart::default()),
            "BinarySignatures" => self.binary = Some(parse::State::default()),
            "FileFormatMapping" => {
                let puid = attr("Puid")?.unwrap_or_default();
                self.file.mappings.push((number("signatureId")?, puid.trim().to_string()));
            }
            "TriggerPuid" => {
                if let Some(k) = kind(attr("ContainerType")?) {
                    let puid = attr("Puid")?.unwrap_or_default();
                    self.file.triggers.push((k, puid.trim().to_string()));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, name: &str, pos: u64) -> Result<(), DroidError> {
        let misplaced = |what: &str| DroidError::Invalid { pos, what: format!("misplaced {what}") };
        match name {
            "ContainerSignatureMapping" => self.finished = true,
            "Path" => {
                let part = self.part.as_mut().ok_or_else(|| misplaced("Path"))?;
                part.path = self.text.trim().to_string();
            }
            "BinarySignatures" => {
                let binary = self.binary.take().ok_or_else(|| misplaced("BinarySignatures"))?;
                // One outside any File (signature 39510 of the 2026-01-19 file has one) is
                // ignored, as DROID's reader ignores it.
                if let Some(part) = self.part.as_mut() {
                    part.signatures.extend(binary.into_signatures());
                }
            }
            "File" => {
                let part = self.part.take().ok_or_else(|| misplaced("File"))?;
                let c = self.container.as_mut().ok_or_else(|| misplaced("File"))?;
                c.parts.push(part);
            }
            "ContainerSignature" => {
                let c = self.container.take().ok_or_else(|| misplaced("ContainerSignature"))?;
                self.file.signatures.push(c);
            }
            _ => {}
        }
        self.text.clear();
        Ok(())
    }
}
