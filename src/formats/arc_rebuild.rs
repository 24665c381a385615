//! What a package keeps so that each input ARC can be rebuilt byte for byte
//! (`docs/arc-rebuild.md`): the `X-Webaip-ARC-Rebuild` field of every record made from ARC
//! bytes, and the rebuild record that follows an ARC's records.
//!
//! The field is written by the migration and read by `unmigrate` and `audit --rebuild-arcs`;
//! this module is the one home of its text form, so both sides agree.

use std::fmt;
use std::str::FromStr;

/// The field on every record made from ARC bytes.
pub(crate) const FIELD_ARC_REBUILD: &str = "X-Webaip-ARC-Rebuild";

/// The URI prefix of the record that follows an ARC's records.
pub(crate) const REBUILD_URI_PREFIX: &str = "metadata://webaip/arc-rebuild?file=";

/// The longest encoded gap kept in a field; beyond it the ARC is not rebuildable.
pub(crate) const MAX_ENCODED_GAP: usize = 4096;

/// The largest record-less gzip member kept (its bytes, in hex, in a field).
pub(crate) const MAX_ORPHAN_MEMBER: usize = 4096;

/// The smallest gzip member: a header and a trailer (an intact one also has a deflate block).
/// A record-less member is one, so a shorter one is refused: an empty one repeated would make
/// nothing of the file while its count ran.
pub(crate) const MIN_GZIP_MEMBER: usize = 18;

/// Why a field or rebuild record does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RebuildFieldError {
    /// An unknown or malformed token.
    #[error("bad token {0:?}")]
    Token(String),
    /// An encoded byte string that does not decode.
    #[error("bad encoded bytes {0:?}")]
    Bytes(String),
    /// A required key is missing.
    #[error("missing {0}")]
    Missing(&'static str),
}

/// Encodes separator bytes compactly: `n` LF, `N` CR LF, `r` CR, `s` space, `t` tab, `%XX`
/// any other byte, each with an optional repeat count; `-` for none. `None` when the encoding
/// would exceed [`MAX_ENCODED_GAP`].
#[cfg(test)]
pub(crate) fn encode_gap(bytes: &[u8]) -> Option<String> {
    let mut enc = GapEncoder::default();
    enc.push(bytes);
    enc.finish()
}

/// A streaming [`encode_gap`], for gaps too long to hold.
#[derive(Default)]
pub(crate) struct GapEncoder {
    out: String,
    run: Option<(Token, u64)>,
    pending_cr: bool,
    overflow: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Token {
    Lf,
    CrLf,
    Cr,
    Space,
    Tab,
    Other(u8),
}

impl GapEncoder {
    /// Adds the next bytes of the gap.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.overflow {
                return;
            }
            if self.pending_cr {
                self.pending_cr = false;
                if b == b'\n' {
                    self.token(Token::CrLf);
                    continue;
                }
                self.token(Token::Cr);
            }
            match b {
                b'\r' => self.pending_cr = true,
                b'\n' => self.token(Token::Lf),
                b' ' => self.token(Token::Space),
                b'\t' => self.token(Token::Tab),
                other => self.token(Token::Other(other)),
            }
        }
    }

    fn token(&mut self, t: Token) {
        match &mut self.run {
            Some((cur, n)) if *cur == t => *n += 1,
            _ => {
                self.flush_run();
                self.run = Some((t, 1));
            }
        }
    }

    fn flush_run(&mut self) {
        if let Some((t, n)) = self.run.take() {
            match t {
                Token::Lf => self.out.push('n'),
                Token::CrLf => self.out.push('N'),
                Token::Cr => self.out.push('r'),
                Token::Space => self.out.push('s'),
                Token::Tab => self.out.push('t'),
                Token::Other(b) => self.out.push_str(&format!("%{b:02X}")),
            }
            if n > 1 {
                self.out.push_str(&n.to_string());
            }
            if self.out.len() > MAX_ENCODED_GAP {
                self.overflow = true;
            }
        }
    }

    /// The encoding, or `None` when it grew over [`MAX_ENCODED_GAP`].
    pub(crate) fn finish(mut self) -> Option<String> {
        if self.pending_cr {
            self.pending_cr = false;
            self.token(Token::Cr);
        }
        self.flush_run();
        if self.overflow {
            return None;
        }
        Some(if self.out.is_empty() { "-".into() } else { self.out })
    }
}

/// Decodes what [`encode_gap`] wrote, calling `out` with each run (bytes, repeat count), so a
/// long run is never expanded in memory.
pub(crate) fn decode_gap_runs(
    text: &str,
    mut out: impl FnMut(&[u8], u64),
) -> Result<(), RebuildFieldError> {
    if text == "-" {
        return Ok(());
    }
    let bad = || RebuildFieldError::Bytes(text.to_string());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let mut other = [0u8; 1];
        let unit: &[u8] = match b[i] {
            b'n' => b"\n",
            b'N' => b"\r\n",
            b'r' => b"\r",
            b's' => b" ",
            b't' => b"\t",
            b'%' => {
                let hex = text.get(i + 1..i + 3).ok_or_else(bad)?;
                other[0] = u8::from_str_radix(hex, 16).map_err(|_| bad())?;
                i += 2;
                &other
            }
            _ => return Err(bad()),
        };
        i += 1;
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let count = if digits == 0 {
            1
        } else {
            let n: u64 = text[i..i + digits].parse().map_err(|_| bad())?;
            if n < 2 {
                return Err(bad());
            }
            n
        };
        i += digits;
        out(unit, count);
    }
    Ok(())
}

/// The number of bytes a gap decodes to, without decoding it (`u64::MAX` when it is more): what
/// the rebuild checks against the bytes left before it gives a gap back.
pub(crate) fn gap_len(text: &str) -> Result<u64, RebuildFieldError> {
    let mut total = 0u64;
    decode_gap_runs(text, |unit, n| {
        total = total.saturating_add(n.saturating_mul(unit.len() as u64));
    })?;
    Ok(total)
}

/// Decodes a short gap (a line end) into bytes; refuses one over `max` bytes.
pub(crate) fn decode_gap(text: &str, max: u64) -> Result<Vec<u8>, RebuildFieldError> {
    let mut v = Vec::new();
    let mut total = 0u64;
    let mut over = false;
    decode_gap_runs(text, |unit, n| {
        total = total.saturating_add(n.saturating_mul(unit.len() as u64));
        if total > max {
            over = true;
        } else {
            for _ in 0..n {
                v.extend_from_slice(unit);
            }
        }
    })?;
    if over {
        return Err(RebuildFieldError::Bytes(text.to_string()));
    }
    Ok(v)
}

/// Record-less gzip members: where, their bytes as found, and how many identical ones follow
/// each other there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OrphanMembers {
    /// Offset of the first in the compressed file.
    pub offset: u64,
    /// One member's bytes.
    pub bytes: Vec<u8>,
    /// Identical members in a row (at least 1).
    pub count: u64,
}

impl fmt::Display for OrphanMembers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.offset, data_encoding::HEXLOWER.encode(&self.bytes))?;
        if self.count > 1 {
            write!(f, ":{}", self.count)?;
        }
        Ok(())
    }
}

impl FromStr for OrphanMembers {
    type Err = RebuildFieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RebuildFieldError::Token(s.to_string());
        let mut parts = s.split(':');
        let offset = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let hex = parts.next().ok_or_else(bad)?;
        if hex.len() > 2 * MAX_ORPHAN_MEMBER {
            return Err(bad());
        }
        let bytes = data_encoding::HEXLOWER_PERMISSIVE.decode(hex.as_bytes()).map_err(|_| bad())?;
        if bytes.len() < MIN_GZIP_MEMBER {
            return Err(bad());
        }
        let count = match parts.next() {
            Some(c) => c.parse::<u64>().ok().filter(|&c| c >= 1).ok_or_else(bad)?,
            None => 1,
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(OrphanMembers { offset, bytes, count })
    }
}

/// The `X-Webaip-ARC-Rebuild` field of one record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RebuildField {
    /// CRC-32 of the stream bytes that are not the block (lead, header line, line end, tail).
    pub crc: u32,
    /// Encoded lead (`None`: empty).
    pub lead: Option<String>,
    /// Encoded header line end (`None`: one LF).
    pub eol: Option<String>,
    /// Encoded tail (`None`: one LF).
    pub tail: Option<String>,
    /// The member's header bytes, when this record starts a member whose header is not the
    /// file's default.
    pub gz: Option<Vec<u8>>,
    /// The member's deflate settings when not the file's default (`?`: not recovered).
    pub z: Option<String>,
    /// Read from the decompressed start of a damaged member: skipped by the rebuild.
    pub damaged: bool,
    /// A raw region of a gzip file: the block is file bytes.
    pub raw: bool,
    /// Record-less members before this record.
    pub pre: Vec<OrphanMembers>,
    /// A revisit written by deduplication: the length of the payload it leaves out, which the
    /// rebuild takes from the record it refers to (checked against its `WARC-Payload-Digest`).
    pub payload: Option<u64>,
}

impl fmt::Display for RebuildField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "crc={:08x}", self.crc)?;
        for (k, v) in [("lead", &self.lead), ("eol", &self.eol), ("tail", &self.tail)] {
            if let Some(v) = v {
                write!(f, " {k}={v}")?;
            }
        }
        if let Some(gz) = &self.gz {
            write!(f, " gz={}", data_encoding::HEXLOWER.encode(gz))?;
        }
        if let Some(z) = &self.z {
            write!(f, " z={z}")?;
        }
        if self.damaged {
            f.write_str(" damaged")?;
        }
        if self.raw {
            f.write_str(" raw")?;
        }
        if !self.pre.is_empty() {
            let items: Vec<String> = self.pre.iter().map(ToString::to_string).collect();
            write!(f, " pre={}", items.join(","))?;
        }
        if let Some(n) = self.payload {
            write!(f, " payload={n}")?;
        }
        Ok(())
    }
}

impl FromStr for RebuildField {
    type Err = RebuildFieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut field = RebuildField::default();
        let mut crc = None;
        for tok in s.split_ascii_whitespace() {
            let bad = || RebuildFieldError::Token(tok.to_string());
            let (k, v) = tok.split_once('=').unwrap_or((tok, ""));
            let gap = |v: &str| -> Result<Option<String>, RebuildFieldError> {
                decode_gap_runs(v, |_, _| {})?;
                Ok(Some(v.to_string()))
            };
            match k {
                "crc" => crc = Some(u32::from_str_radix(v, 16).map_err(|_| bad())?),
                "lead" => field.lead = gap(v)?,
                "eol" => field.eol = gap(v)?,
                "tail" => field.tail = gap(v)?,
                "gz" => {
                    let b = data_encoding::HEXLOWER_PERMISSIVE.decode(v.as_bytes());
                    field.gz = Some(b.map_err(|_| bad())?);
                }
                "z" if !v.is_empty() => field.z = Some(v.to_string()),
                "damaged" if v.is_empty() => field.damaged = true,
                "raw" if v.is_empty() => field.raw = true,
                "payload" => field.payload = Some(v.parse().map_err(|_| bad())?),
                "pre" => {
                    for item in v.split(',') {
                        field.pre.push(item.parse()?);
                    }
                }
                _ => return Err(bad()),
            }
        }
        field.crc = crc.ok_or(RebuildFieldError::Missing("crc"))?;
        Ok(field)
    }
}

/// Gzip members whose deflate settings were not recovered (no zlib setting tried gives their
/// bytes): the ARC's stream is rebuilt byte for byte, its `.arc.gz` file is not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Unrecovered {
    /// How many.
    pub count: u64,
    /// The file offsets of the first [`MAX_UNRECOVERED_LISTED`].
    pub offsets: Vec<u64>,
}

/// Unrecovered members listed by offset; the rest are only counted.
pub(crate) const MAX_UNRECOVERED_LISTED: usize = 20;

/// The offsets listed, `, …` after them when more were counted (`40, 90, …`): what reports
/// say of unrecovered members.
pub(crate) fn listed_offsets(count: u64, offsets: &[u64]) -> String {
    let mut text = offsets.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    if count > offsets.len() as u64 {
        text.push_str(", …");
    }
    text
}

impl Unrecovered {
    /// Counts the member at `offset`.
    pub(crate) fn add(&mut self, offset: u64) {
        self.count += 1;
        if self.offsets.len() < MAX_UNRECOVERED_LISTED {
            self.offsets.push(offset);
        }
    }

    /// `N OFFSET,OFFSET...`, as the rebuild record writes it.
    fn to_text(&self) -> String {
        let offsets: Vec<String> = self.offsets.iter().map(u64::to_string).collect();
        format!("{} {}", self.count, offsets.join(","))
    }

    fn parse(v: &str) -> Result<Self, RebuildFieldError> {
        let bad = || RebuildFieldError::Token(v.into());
        let (count, list) = v.split_once(' ').unwrap_or((v, ""));
        let count = count.parse().map_err(|_| bad())?;
        let offsets = list
            .split(',')
            .filter(|o| !o.is_empty())
            .map(|o| o.parse().map_err(|_| bad()))
            .collect::<Result<Vec<u64>, _>>()?;
        if offsets.len() as u64 > count || offsets.len() > MAX_UNRECOVERED_LISTED {
            return Err(bad());
        }
        Ok(Unrecovered { count, offsets })
    }
}

/// The rebuild record's block: what the whole ARC was and how to make it again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RebuildSummary {
    pub file_name: String,
    pub file_length: u64,
    pub file_sha512: String,
    pub stream_length: u64,
    pub stream_sha512: String,
    pub gzip: bool,
    /// The default member header (gzip).
    pub gzip_header: Option<Vec<u8>>,
    /// The default deflate settings (gzip; `?` when not recovered).
    pub deflate: Option<String>,
    /// Gzip members in the file, empty ones included.
    pub members: u64,
    /// Members whose deflate settings were not recovered.
    pub unrecovered: Unrecovered,
    /// Record-less members after the last record.
    pub post: Vec<OrphanMembers>,
    /// Why it cannot be rebuilt (empty: it can).
    pub reasons: Vec<String>,
}

impl RebuildSummary {
    /// True when nothing stands in the way of a rebuild.
    pub(crate) fn rebuildable(&self) -> bool {
        self.reasons.is_empty()
    }

    /// For a gzip ARC, whether its file can be made again byte for byte: rebuildable, and
    /// every member's deflate settings recovered.
    pub(crate) fn gzip_file_rebuildable(&self) -> Option<bool> {
        let recovered = self.deflate.as_deref().is_some_and(|d| d != "?");
        self.gzip.then(|| self.rebuildable() && recovered && self.unrecovered.count == 0)
    }

    /// The block's text.
    pub(crate) fn to_text(&self) -> String {
        // Version 2 only adds `unrecovered-members`: a record without it stays version 1, which
        // readers of version 1 read.
        let version = if self.unrecovered.count > 0 { 2 } else { 1 };
        let mut s = format!("webaip-arc-rebuild {version}\n");
        let mut line = |k: &str, v: &str| {
            s.push_str(k);
            s.push(' ');
            s.push_str(v);
            s.push('\n');
        };
        line("file-name", &self.file_name);
        line("file-length", &self.file_length.to_string());
        line("file-sha512", &self.file_sha512);
        line("stream-length", &self.stream_length.to_string());
        line("stream-sha512", &self.stream_sha512);
        line("compression", if self.gzip { "gzip" } else { "none" });
        if let Some(h) = &self.gzip_header {
            line("gzip-header", &data_encoding::HEXLOWER.encode(h));
        }
        if let Some(d) = &self.deflate {
            line("deflate", d);
        }
        if self.gzip {
            line("members", &self.members.to_string());
        }
        if self.unrecovered.count > 0 {
            line("unrecovered-members", &self.unrecovered.to_text());
        }
        for p in &self.post {
            line("post", &p.to_string());
        }
        line("rebuildable", if self.rebuildable() { "yes" } else { "no" });
        for r in &self.reasons {
            line("reason", &r.replace(['\n', '\r'], " "));
        }
        s
    }

    /// Parses the block's text.
    pub(crate) fn parse(text: &str) -> Result<Self, RebuildFieldError> {
        let mut lines = text.lines();
        let version = match lines.next() {
            Some("webaip-arc-rebuild 1") => 1,
            Some("webaip-arc-rebuild 2") => 2,
            _ => return Err(RebuildFieldError::Missing("webaip-arc-rebuild 1 or 2")),
        };
        let mut s = RebuildSummary::default();
        let num = |v: &str| v.parse::<u64>().map_err(|_| RebuildFieldError::Token(v.into()));
        for l in lines {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            match k {
                "file-name" => s.file_name = v.into(),
                "file-length" => s.file_length = num(v)?,
                "file-sha512" => s.file_sha512 = v.into(),
                "stream-length" => s.stream_length = num(v)?,
                "stream-sha512" => s.stream_sha512 = v.into(),
                "compression" => s.gzip = v == "gzip",
                "gzip-header" => {
                    let b = data_encoding::HEXLOWER_PERMISSIVE.decode(v.as_bytes());
                    s.gzip_header = Some(b.map_err(|_| RebuildFieldError::Token(v.into()))?);
                }
                "deflate" => s.deflate = Some(v.into()),
                "members" => s.members = num(v)?,
                "unrecovered-members" if version >= 2 => s.unrecovered = Unrecovered::parse(v)?,
                "post" => s.post.push(v.parse()?),
                "rebuildable" => {}
                "reason" => s.reasons.push(v.into()),
                _ => return Err(RebuildFieldError::Token(l.into())),
            }
        }
        if s.file_sha512.is_empty() || s.stream_sha512.is_empty() {
            return Err(RebuildFieldError::Missing("file-sha512 / stream-sha512"));
        }
        Ok(s)
    }
}

/// The one byte whose change explains a framing CRC-32 that is not the one stated: its index
/// in `framing` (the record's framing bytes as rebuilt, in the order the CRC covers them) and
/// the original's value there. `None` when no change of a single byte gives `stated`, or more
/// than one does.
///
/// The CRC is linear: for messages of one length, `crc(a) ^ crc(b)` is the CRC without its
/// initial and final inversion of `a ^ b`. A change of byte `k` to `b ^ e` thus leaves the
/// syndrome `crc(framing) ^ stated` equal to that CRC of `e` followed by `n - 1 - k` zero
/// bytes, which is followed here for every `e` a zero byte at a time: 255 steps a byte, at
/// most a few MiB of them for the longest framing kept.
pub(crate) fn locate_byte_change(framing: &[u8], stated: u32) -> Option<(usize, u8)> {
    let table = crc32_table();
    let mut c = flate2::Crc::new();
    c.update(framing);
    let syndrome = c.sum() ^ stated;
    if syndrome == 0 || framing.is_empty() {
        return None;
    }
    let mut values: Vec<u32> = (0..256).map(|e| table[e]).collect();
    let mut found = None;
    for zeros in 0..framing.len() {
        for (e, v) in values.iter().enumerate().skip(1) {
            if *v == syndrome {
                if found.is_some() {
                    return None;
                }
                let k = framing.len() - 1 - zeros;
                found = Some((k, framing[k] ^ e as u8));
            }
        }
        for v in values.iter_mut() {
            *v = table[(*v & 0xff) as usize] ^ (*v >> 8);
        }
    }
    found
}

/// CRC-32 (IEEE 802.3, reflected), a byte at a time: what `locate_byte_change` steps with
/// (crc32fast, behind flate2, computes the CRC but does not expose this).
fn crc32_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    for (n, entry) in t.iter_mut().enumerate() {
        let mut c = n as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *entry = c;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(text: &str) -> Vec<u8> {
        decode_gap(text, 1 << 20).unwrap()
    }

    #[test]
    fn gaps_round_trip() {
        for gap in
            [&b""[..], b"\n", b"\r\n", b"\n\n\n\n\n", b"\r\n\r\n\r", b"  \t\r\r\n \x00\xff", b"\rn"]
        {
            let enc = encode_gap(gap).unwrap();
            assert_eq!(expand(&enc), gap, "{enc}");
        }
        assert_eq!(encode_gap(b"\n").unwrap(), "n");
        assert_eq!(encode_gap(b"").unwrap(), "-");
        assert_eq!(encode_gap(&[b'\n'; 1000]).unwrap(), "n1000");
    }

    #[test]
    fn irregular_long_gaps_are_refused_not_kept() {
        let gap: Vec<u8> = (0..10_000).map(|i| if i % 2 == 0 { b' ' } else { b'\t' }).collect();
        assert_eq!(encode_gap(&gap), None);
    }

    #[test]
    fn decoding_refuses_what_encoding_never_writes() {
        for bad in ["x", "%G0", "%4", "n1", "n0", "%"] {
            assert!(decode_gap(bad, 100).is_err(), "{bad}");
        }
        assert!(decode_gap("n1000", 10).is_err());
    }

    #[test]
    fn fields_round_trip() {
        let f = RebuildField {
            crc: 0xdeadbeef,
            lead: Some("n2".into()),
            eol: Some("N".into()),
            tail: Some("-".into()),
            gz: Some(vec![0x1f, 0x8b, 8, 0]),
            z: Some("zlib:9".into()),
            damaged: true,
            raw: false,
            pre: vec![OrphanMembers { offset: 7, bytes: vec![1; MIN_GZIP_MEMBER], count: 3 }],
            payload: Some(12345),
        };
        let text = f.to_string();
        assert_eq!(text.parse::<RebuildField>().unwrap(), f);
        assert_eq!("crc=00000001".parse::<RebuildField>().unwrap().crc, 1);
        assert!("lead=n".parse::<RebuildField>().is_err());
        assert!("crc=1 what".parse::<RebuildField>().is_err());
        assert!("crc=1 payload=-1".parse::<RebuildField>().is_err());
        // A record-less member shorter than any gzip member is none.
        assert!("crc=1 pre=0:1f8b0800:5".parse::<RebuildField>().is_err());
    }

    #[test]
    fn summaries_round_trip() {
        let s = RebuildSummary {
            file_name: "a b.arc.gz".into(),
            file_length: 10,
            file_sha512: "ab".into(),
            stream_length: 20,
            stream_sha512: "cd".into(),
            gzip: true,
            gzip_header: Some(vec![0x1f, 0x8b]),
            deflate: Some("zlib:6".into()),
            members: 4,
            unrecovered: Unrecovered { count: 3, offsets: vec![40, 90, 140] },
            post: vec![OrphanMembers { offset: 9, bytes: vec![3; 20], count: 1 }],
            reasons: vec!["x".into()],
        };
        assert_eq!(RebuildSummary::parse(&s.to_text()).unwrap(), s);
        // More offsets listed than counted is no summary webaip wrote.
        let listed_more = s.to_text().replace("unrecovered-members 3 ", "unrecovered-members 2 ");
        assert!(RebuildSummary::parse(&listed_more).is_err());
    }

    /// A record with unrecovered members says version 2 (a reader of version 1 refuses it
    /// rather than misread it); one without stays version 1, and version 1 is still read.
    #[test]
    fn the_version_says_whether_unrecovered_members_may_be_there() {
        let mut s = RebuildSummary {
            file_sha512: "ab".into(),
            stream_sha512: "cd".into(),
            unrecovered: Unrecovered { count: 1, offsets: vec![7] },
            ..RebuildSummary::default()
        };
        assert!(s.to_text().starts_with("webaip-arc-rebuild 2\n"), "{}", s.to_text());
        assert_eq!(RebuildSummary::parse(&s.to_text()).unwrap(), s);
        let as_one = s.to_text().replacen("rebuild 2", "rebuild 1", 1);
        assert!(RebuildSummary::parse(&as_one).is_err());
        s.unrecovered = Unrecovered::default();
        assert!(s.to_text().starts_with("webaip-arc-rebuild 1\n"), "{}", s.to_text());
        assert_eq!(RebuildSummary::parse(&s.to_text()).unwrap(), s);
    }

    /// Every one-byte change of a header line and its framing is found, with the original
    /// byte; two changes are not taken for one, and an unchanged framing is not a change.
    #[test]
    fn a_changed_framing_byte_is_located_from_the_crc() {
        let framing =
            b"\nhttp://example.com/a 192.0.2.1 20240315103000 text/html 1234\r\n\n".to_vec();
        let mut c = flate2::Crc::new();
        c.update(&framing);
        let stated = c.sum();
        assert_eq!(locate_byte_change(&framing, stated), None);
        for k in 0..framing.len() {
            for e in [0x01u8, 0x20, 0x80, 0xff] {
                let mut changed = framing.clone();
                changed[k] ^= e;
                assert_eq!(locate_byte_change(&changed, stated), Some((k, framing[k])), "{k} {e}");
            }
        }
        let mut two = framing.clone();
        two[3] ^= 1;
        two[30] ^= 4;
        assert_eq!(locate_byte_change(&two, stated), None);
        assert_eq!(locate_byte_change(b"", 5), None);
    }
}
