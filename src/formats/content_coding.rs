//! HTTP `Content-Encoding` of a captured payload: which coding the header names, and a
//! streaming decoder for those webaip undoes (`gzip`, `x-gzip`, `deflate`). Page titles and
//! format identification both read a payload through here, so they agree on what it holds.

use std::io::{self, BufRead, BufReader, Read};

/// The content coding an HTTP header applies to its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Coding {
    /// No `Content-Encoding`, or `identity`: the payload is the content.
    Identity,
    /// `gzip` or `x-gzip` (the name the header uses, lower case).
    Gzip(String),
    /// `deflate`: zlib-wrapped as HTTP says, or raw DEFLATE as some servers send it.
    Deflate,
    /// A coding webaip does not undo (`br`, `compress`, `zstd`, unknown), lower case.
    Other(String),
}

impl Coding {
    /// The coding of the last `Content-Encoding` field of `http_header` (the last one
    /// applied, when several are listed).
    pub(crate) fn of_header(http_header: &[u8]) -> Coding {
        match content_encoding(http_header).as_deref() {
            None | Some("identity" | "") => Coding::Identity,
            Some(name @ ("gzip" | "x-gzip")) => Coding::Gzip(name.to_string()),
            Some("deflate") => Coding::Deflate,
            Some(other) => Coding::Other(other.to_string()),
        }
    }

    /// Its name as the header gives it (`identity` when there is none).
    pub(crate) fn name(&self) -> &str {
        match self {
            Coding::Identity => "identity",
            Coding::Gzip(name) | Coding::Other(name) => name,
            Coding::Deflate => "deflate",
        }
    }

    /// A reader of the content `encoded` holds, when webaip undoes this coding (`Identity`
    /// included); `None` for a coding it does not undo.
    pub(crate) fn decoder<'a, R: Read + 'a>(&self, encoded: R) -> Option<Box<dyn Read + 'a>> {
        match self {
            Coding::Identity => Some(Box::new(encoded)),
            Coding::Gzip(_) => Some(Box::new(flate2::read::MultiGzDecoder::new(encoded))),
            Coding::Deflate => Some(deflate_decoder(encoded)),
            Coding::Other(_) => None,
        }
    }
}

/// HTTP's deflate is zlib-wrapped; some servers send raw DEFLATE: told apart by the zlib
/// header (method 8, header check a multiple of 31), as browsers do.
fn deflate_decoder<'a, R: Read + 'a>(encoded: R) -> Box<dyn Read + 'a> {
    let mut buffered = BufReader::new(encoded);
    let zlib = match buffered.fill_buf() {
        Ok([cmf, flg, ..]) => cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0,
        _ => true,
    };
    match zlib {
        true => Box::new(flate2::bufread::ZlibDecoder::new(buffered)),
        false => Box::new(flate2::bufread::DeflateDecoder::new(buffered)),
    }
}

/// The coding of the last `Content-Encoding` field of an HTTP header (lower case; the last
/// one applied, when several are listed).
fn content_encoding(http_header: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(http_header);
    text.split('\n').rev().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-encoding")
            .then(|| value.rsplit(',').next().unwrap_or("").trim().to_ascii_lowercase())
    })
}

/// A reader that ends where its inner reader fails, keeping the error: a payload whose
/// decoding breaks mid-way is identified on what decoded before the break.
pub(crate) struct UpToError<R> {
    inner: R,
    /// Decoded bytes passed on.
    pub decoded: u64,
    /// The error that ended it, if one did.
    pub error: Option<io::Error>,
}

impl<R> UpToError<R> {
    pub(crate) fn new(inner: R) -> UpToError<R> {
        UpToError { inner, decoded: 0, error: None }
    }
}

impl<R: Read> Read for UpToError<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.decoded += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                self.error = Some(e);
                Ok(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn the_last_coding_of_the_last_field_is_the_one_to_undo() {
        let h =
            b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\ncontent-encoding: identity, GZIP\r\n\r\n";
        assert_eq!(Coding::of_header(h), Coding::Gzip("gzip".into()));
        assert_eq!(Coding::of_header(b"HTTP/1.1 200 OK\r\n\r\n"), Coding::Identity);
        assert_eq!(Coding::of_header(b"HTTP/1.1 200 OK\nContent-Encoding: br\n\n").name(), "br");
    }

    #[test]
    fn zlib_and_raw_deflate_both_decode() {
        let text = b"<html><title>t</title></html>";
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(text).unwrap();
        let mut d = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        d.write_all(text).unwrap();
        for encoded in [z.finish().unwrap(), d.finish().unwrap()] {
            let mut out = Vec::new();
            Coding::Deflate.decoder(&encoded[..]).unwrap().read_to_end(&mut out).unwrap();
            assert_eq!(out, text);
        }
    }

    #[test]
    fn a_stream_cut_short_gives_what_decoded_and_the_error() {
        let content: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let encoded = gzip(&content);
        let cut = &encoded[..encoded.len() / 2];
        let mut r = UpToError::new(Coding::Gzip("gzip".into()).decoder(cut).unwrap());
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert!(r.error.is_some());
        assert!(!out.is_empty() && out.len() < content.len(), "{}", out.len());
        assert_eq!(out[..], content[..out.len()]);
        assert_eq!(r.decoded, out.len() as u64);
    }
}
