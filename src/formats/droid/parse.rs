//! Reading a DROID signature file (`FFSignatureFile`) with quick-xml's streaming reader into
//! the raw records it holds: internal signatures and file formats. Nothing is compiled here.

use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::error::DroidError;

/// Where a byte sequence is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// From the beginning of the file (`BOFoffset`).
    Bof,
    /// From the end of the file (`EOFoffset`).
    Eof,
    /// Anywhere (no reference, or `Variable`).
    Variable,
}

/// A left or right fragment of a subsequence.
#[derive(Debug, Clone)]
pub(crate) struct RawFragment {
    pub(crate) position: u32,
    pub(crate) min: usize,
    pub(crate) max: Option<usize>,
    pub(crate) value: String,
}

/// A `SubSequence`: an anchor sequence with fragments either side.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawSubSequence {
    pub(crate) position: u32,
    pub(crate) min: usize,
    pub(crate) max: Option<usize>,
    pub(crate) sequence: String,
    pub(crate) left: Vec<RawFragment>,
    pub(crate) right: Vec<RawFragment>,
}

/// A `ByteSequence`.
#[derive(Debug, Clone)]
pub(crate) struct RawByteSequence {
    pub(crate) reference: Reference,
    pub(crate) subsequences: Vec<RawSubSequence>,
}

/// An `InternalSignature`.
#[derive(Debug, Clone)]
pub(crate) struct RawSignature {
    pub(crate) id: u32,
    pub(crate) specificity: String,
    pub(crate) sequences: Vec<RawByteSequence>,
}

/// A `FileFormat` as the signature file describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFormat {
    /// The signature file's own identifier of the format (what priorities refer to).
    pub id: u32,
    /// The PRONOM identifier, e.g. `fmt/96`.
    pub puid: String,
    /// PRONOM's name of the format.
    pub name: String,
    /// The format's version (empty when it has none).
    pub version: String,
    /// MIME types, as listed (the file separates several with commas).
    pub mime_types: Vec<String>,
    /// File name extensions, without the dot.
    pub extensions: Vec<String>,
    /// The internal signatures that identify this format.
    pub signature_ids: Vec<u32>,
    /// Formats this one wins over when both match.
    pub priority_over: Vec<u32>,
}

/// Everything read from a signature file.
#[derive(Debug, Default)]
pub(crate) struct RawFile {
    pub(crate) version: u32,
    pub(crate) date_created: String,
    pub(crate) signatures: Vec<RawSignature>,
    pub(crate) formats: Vec<FileFormat>,
}

/// Which element's text is being collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextOf {
    None,
    Sequence,
    Left,
    Right,
    SignatureId,
    Extension,
    Priority,
}

/// Reads only a signature file's root element: its `Version` and `DateCreated` (the lists of
/// signatures and formats are left empty), so naming the file costs no parse of the whole.
pub(crate) fn read_root<R: BufRead>(input: R) -> Result<RawFile, DroidError> {
    let mut reader = Reader::from_reader(input);
    let mut st = State::default();
    let mut buf = Vec::new();
    loop {
        let pos = reader.buffer_position();
        let ev =
            reader.read_event_into(&mut buf).map_err(|source| DroidError::Xml { pos, source })?;
        match ev {
            Event::Start(e) | Event::Empty(e) => {
                st.start(&e, pos)?;
                return match st.file.version {
                    0 => Err(DroidError::Invalid { pos, what: "no FFSignatureFile root".into() }),
                    _ => Ok(st.file),
                };
            }
            Event::Eof => return Err(DroidError::Truncated),
            _ => buf.clear(),
        }
    }
}

/// One event of a signature file's XML, as the readers of both DROID files use it.
pub(crate) enum XmlEvent<'a> {
    /// An element opens (an empty element opens, then closes).
    Start(&'a BytesStart<'a>),
    /// An element closes: its local name.
    End(&'a str),
    /// Text, entities resolved.
    Text(&'a str),
}

/// Reads a signature file's XML to its end, handing each event to `on` with its byte offset.
pub(crate) fn walk<R: BufRead>(
    input: R,
    mut on: impl FnMut(XmlEvent<'_>, u64) -> Result<(), DroidError>,
) -> Result<(), DroidError> {
    let mut reader = Reader::from_reader(input);
    reader.config_mut().check_end_names = true;
    let mut buf = Vec::new();
    loop {
        let pos = reader.buffer_position();
        let ev =
            reader.read_event_into(&mut buf).map_err(|source| DroidError::Xml { pos, source })?;
        match ev {
            Event::Start(e) => on(XmlEvent::Start(&e), pos)?,
            Event::Empty(e) => {
                on(XmlEvent::Start(&e), pos)?;
                on(XmlEvent::End(e.local_name().as_ref()), pos)?;
            }
            Event::End(e) => on(XmlEvent::End(e.local_name().as_ref()), pos)?,
            Event::Text(t) => on(XmlEvent::Text(&t.xml10_content()), pos)?,
            Event::GeneralRef(r) => {
                let name = r.xml10_content();
                let c = match name.as_ref() {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    _ => match r.resolve_char_ref() {
                        Ok(Some(c)) => c,
                        _ => {
                            return Err(DroidError::Invalid {
                                pos,
                                what: format!("entity &{name};"),
                            });
                        }
                    },
                };
                on(XmlEvent::Text(c.encode_utf8(&mut [0; 4])), pos)?;
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
        buf.clear();
    }
}

/// Reads a whole signature file.
pub(crate) fn read<R: BufRead>(input: R) -> Result<RawFile, DroidError> {
    let mut st = State::default();
    walk(input, |ev, pos| st.on(ev, pos))?;
    if !st.finished {
        return Err(DroidError::Truncated);
    }
    Ok(st.file)
}

/// The reader's state; the container signature file's reader uses it for the byte signatures
/// it holds.
#[derive(Default)]
pub(crate) struct State {
    file: RawFile,
    finished: bool,
    text: String,
    text_of: Option<TextOf>,
    /// The fragment whose text is being read (its attributes).
    fragment: Option<RawFragment>,
    subsequence: Option<RawSubSequence>,
    sequence: Option<RawByteSequence>,
    signature: Option<RawSignature>,
    format: Option<FileFormat>,
}

impl State {
    /// Takes one event of [`walk`].
    pub(crate) fn on(&mut self, ev: XmlEvent<'_>, pos: u64) -> Result<(), DroidError> {
        match ev {
            XmlEvent::Start(e) => self.start(e, pos),
            XmlEvent::End(name) => self.end(name, pos),
            XmlEvent::Text(t) => {
                self.text.push_str(t);
                Ok(())
            }
        }
    }

    /// The internal signatures read so far.
    pub(crate) fn into_signatures(self) -> Vec<RawSignature> {
        self.file.signatures
    }

    fn start(&mut self, e: &BytesStart<'_>, pos: u64) -> Result<(), DroidError> {
        let attr = |name: &str| -> Result<Option<String>, DroidError> { attribute(e, name, pos) };
        let num = |name: &str| -> Result<Option<usize>, DroidError> {
            attr(name)?
                .filter(|v| !v.trim().is_empty())
                .map(|v| {
                    v.trim()
                        .parse::<usize>()
                        .map_err(|_| DroidError::Invalid { pos, what: format!("{name}=\"{v}\"") })
                })
                .transpose()
        };
        let id = |name: &str| -> Result<u32, DroidError> {
            let v = num(name)?
                .ok_or_else(|| DroidError::Invalid { pos, what: format!("no {name}") })?;
            u32::try_from(v).map_err(|_| DroidError::Invalid { pos, what: format!("{name}={v}") })
        };
        self.text.clear();
        match e.local_name().as_ref() {
            "FFSignatureFile" => {
                self.file.version = id("Version")?;
                self.file.date_created = attr("DateCreated")?.unwrap_or_default();
            }
            "InternalSignature" => {
                self.signature = Some(RawSignature {
                    id: id("ID")?,
                    specificity: attr("Specificity")?.unwrap_or_default(),
                    sequences: Vec::new(),
                });
            }
            "ByteSequence" => {
                let reference = match attr("Reference")?.as_deref() {
                    Some("BOFoffset") => Reference::Bof,
                    Some("EOFoffset") => Reference::Eof,
                    Some("Variable") | Some("") | None => Reference::Variable,
                    Some(other) => {
                        return Err(DroidError::Invalid {
                            pos,
                            what: format!("Reference=\"{other}\""),
                        });
                    }
                };
                self.sequence = Some(RawByteSequence { reference, subsequences: Vec::new() });
            }
            "SubSequence" => {
                // The container file has subsequences without a Position (as siegfried does,
                // they are ordered as written).
                let position = num("Position")?.unwrap_or(0);
                self.subsequence = Some(RawSubSequence {
                    position: u32::try_from(position).unwrap_or(u32::MAX),
                    min: num("SubSeqMinOffset")?.unwrap_or(0),
                    max: num("SubSeqMaxOffset")?,
                    ..RawSubSequence::default()
                });
            }
            "Sequence" => self.text_of = Some(TextOf::Sequence),
            tag @ ("LeftFragment" | "RightFragment") => {
                self.fragment = Some(RawFragment {
                    position: id("Position")?,
                    min: num("MinOffset")?.unwrap_or(0),
                    max: num("MaxOffset")?,
                    value: String::new(),
                });
                let left = tag == "LeftFragment";
                self.text_of = Some(if left { TextOf::Left } else { TextOf::Right });
            }
            "FileFormat" => {
                let mime = attr("MIMEType")?.unwrap_or_default();
                self.format = Some(FileFormat {
                    id: id("ID")?,
                    puid: attr("PUID")?.unwrap_or_default(),
                    name: attr("Name")?.unwrap_or_default(),
                    version: attr("Version")?.unwrap_or_default(),
                    mime_types: mime
                        .split(',')
                        .map(|m| m.trim().to_string())
                        .filter(|m| !m.is_empty())
                        .collect(),
                    extensions: Vec::new(),
                    signature_ids: Vec::new(),
                    priority_over: Vec::new(),
                });
            }
            "InternalSignatureID" => self.text_of = Some(TextOf::SignatureId),
            "Extension" => self.text_of = Some(TextOf::Extension),
            "HasPriorityOverFileFormatID" => self.text_of = Some(TextOf::Priority),
            _ => self.text_of = Some(TextOf::None),
        }
        Ok(())
    }

    fn end(&mut self, name: &str, pos: u64) -> Result<(), DroidError> {
        let text = std::mem::take(&mut self.text);
        let text = text.trim();
        let misplaced = |what: &str| DroidError::Invalid { pos, what: format!("misplaced {what}") };
        let number = |t: &str| -> Result<u32, DroidError> {
            t.parse().map_err(|_| DroidError::Invalid { pos, what: format!("identifier \"{t}\"") })
        };
        match name {
            "FFSignatureFile" => self.finished = true,
            "InternalSignature" => {
                let s = self.signature.take().ok_or_else(|| misplaced("InternalSignature"))?;
                self.file.signatures.push(s);
            }
            "ByteSequence" => {
                let b = self.sequence.take().ok_or_else(|| misplaced("ByteSequence"))?;
                let sig = self.signature.as_mut().ok_or_else(|| misplaced("ByteSequence"))?;
                sig.sequences.push(b);
            }
            "SubSequence" => {
                let s = self.subsequence.take().ok_or_else(|| misplaced("SubSequence"))?;
                let seq = self.sequence.as_mut().ok_or_else(|| misplaced("SubSequence"))?;
                seq.subsequences.push(s);
            }
            "Sequence" => {
                let s = self.subsequence.as_mut().ok_or_else(|| misplaced("Sequence"))?;
                s.sequence = text.to_string();
            }
            "LeftFragment" | "RightFragment" => {
                let mut f = self.fragment.take().ok_or_else(|| misplaced("Fragment"))?;
                f.value = text.to_string();
                let s = self.subsequence.as_mut().ok_or_else(|| misplaced("Fragment"))?;
                if self.text_of == Some(TextOf::Left) {
                    s.left.push(f);
                } else {
                    s.right.push(f);
                }
            }
            "FileFormat" => {
                let f = self.format.take().ok_or_else(|| misplaced("FileFormat"))?;
                self.file.formats.push(f);
            }
            "InternalSignatureID" | "Extension" | "HasPriorityOverFileFormatID" => {
                let f = self.format.as_mut().ok_or_else(|| misplaced("format field"))?;
                match self.text_of {
                    Some(TextOf::SignatureId) => f.signature_ids.push(number(text)?),
                    Some(TextOf::Priority) => f.priority_over.push(number(text)?),
                    Some(TextOf::Extension) => f.extensions.push(text.to_string()),
                    _ => {}
                }
            }
            _ => {}
        }
        self.text_of = None;
        Ok(())
    }
}

/// An attribute's value, unescaped.
pub(crate) fn attribute(
    e: &BytesStart<'_>,
    name: &str,
    pos: u64,
) -> Result<Option<String>, DroidError> {
    for a in e.attributes() {
        let a = a.map_err(|err| DroidError::Invalid { pos, what: format!("attribute: {err}") })?;
        if a.key.local_name().as_ref() == name {
            let v = a
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|source| DroidError::Xml { pos, source })?;
            return Ok(Some(v.into_owned()));
        }
    }
    Ok(None)
}
