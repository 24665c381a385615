//! Whether bytes are text, and in which character set family: the classes of the `file`
//! command's `encoding.c` (ASCII, UTF-8, UTF-16, ISO-8859, extended ASCII, EBCDIC), which
//! siegfried also uses (through its `characterize` port) to call a payload plain text when no
//! binary signature matches it.
//!
//! The classes are the `file` command's, applied to a payload's first [`TEXT_WINDOW`] bytes as
//! siegfried applies them, so that webaip and siegfried agree on which payloads are text. It
//! is a judgement by the characters the bytes hold, not a signature: a package records it as
//! such. Hand-written because no crate implements these classes: `content_inspector` and
//! friends decide text or binary by other rules (a NUL byte, a BOM), which would disagree with
//! siegfried on, for example, ISO-8859 pages and UTF-16 without a BOM.

use std::fmt;

/// How many of a payload's first bytes are classified (siegfried's read size).
pub const TEXT_WINDOW: usize = 4096;

/// A text class of the `file` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextKind {
    /// 7-bit ASCII text.
    Ascii,
    /// UTF-7 (a `+/v` byte order mark).
    Utf7,
    /// UTF-8 with a byte order mark.
    Utf8Bom,
    /// UTF-8 (at least one multi-byte character).
    Utf8,
    /// UTF-16, little-endian (a byte order mark).
    Utf16Le,
    /// UTF-16, big-endian (a byte order mark).
    Utf16Be,
    /// An ISO-8859 character set (bytes 0xA0-0xFF).
    Latin1,
    /// A non-ISO extended ASCII set (bytes 0x80-0x9F: Windows, Mac, IBM PC code pages).
    Extended,
    /// EBCDIC.
    Ebcdic,
    /// EBCDIC with international characters.
    EbcdicInternational,
}

impl fmt::Display for TextKind {
    /// The `file` command's (and siegfried's) name of the class.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TextKind::Ascii => "ASCII",
            TextKind::Utf7 => "UTF-7 Unicode",
            TextKind::Utf8Bom => "UTF-8 Unicode (with BOM)",
            TextKind::Utf8 => "UTF-8 Unicode",
            TextKind::Utf16Le => "Little-endian UTF-16 Unicode",
            TextKind::Utf16Be => "Big-endian UTF-16 Unicode",
            TextKind::Latin1 => "ISO-8859",
            TextKind::Extended => "Non-ISO extended-ASCII",
            TextKind::Ebcdic => "EBCDIC",
            TextKind::EbcdicInternational => "International EBCDIC",
        })
    }
}

/// Where a byte may appear, from narrowest to widest (the `file` command's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// In no text.
    Never,
    /// In plain ASCII text.
    Ascii,
    /// In ISO-8859 text.
    Iso,
    /// In non-ISO extended ASCII.
    Extended,
}

/// The class of a byte: BEL, BS, TAB, LF, VT, FF, CR and ESC are text, other controls and DEL
/// are not; 0x85 (NEL) is ASCII text, the rest of 0x80-0x9F extended, 0xA0-0xFF ISO-8859.
const fn class(b: u8) -> Class {
    match b {
        7..=13 | 27 | 0x20..=0x7e | 0x85 => Class::Ascii,
        0x80..=0x9f => Class::Extended,
        0xa0..=0xff => Class::Iso,
        _ => Class::Never,
    }
}

/// The class of the first [`TEXT_WINDOW`] bytes of a payload (`head` may be longer: only its
/// start is looked at), or `None` when they are not text, or there are none.
pub fn classify(head: &[u8]) -> Option<TextKind> {
    let buf = &head[..head.len().min(TEXT_WINDOW)];
    if buf.is_empty() {
        return None;
    }
    let bom = buf.len() > 3 && buf.starts_with(&[0xef, 0xbb, 0xbf]);
    let buf = if bom { &buf[3..] } else { buf };
    let widest = widest_class(buf);
    if widest == Class::Ascii {
        return Some(if bom {
            TextKind::Utf8Bom
        } else if utf7_bom(buf) {
            TextKind::Utf7
        } else {
            TextKind::Ascii
        });
    }
    if is_utf8(buf) {
        return Some(if bom { TextKind::Utf8Bom } else { TextKind::Utf8 });
    }
    if let Some(kind) = utf16(buf) {
        return Some(kind);
    }
    match widest {
        Class::Iso => Some(TextKind::Latin1),
        Class::Extended => Some(TextKind::Extended),
        _ => ebcdic(buf),
    }
}

/// The widest class of any byte, `Never` as soon as one is in no text. An empty slice is
/// `Never` too, as in `file`: after a BOM nothing is left to call text.
fn widest_class(buf: &[u8]) -> Class {
    let mut widest = Class::Never;
    for &b in buf {
        let c = class(b);
        if c == Class::Never {
            return Class::Never;
        }
        widest = widest.max(c);
    }
    widest
}

fn utf7_bom(b: &[u8]) -> bool {
    b.len() > 4 && b.starts_with(b"+/v") && matches!(b[3], b'8' | b'9' | b'+' | b'/')
}

/// Well-formed UTF-8 with at least one multi-byte character, ASCII bytes all text; a
/// character cut off by the end of the window counts as it went.
fn is_utf8(r: &[u8]) -> bool {
    let mut high = false;
    let mut i = 0;
    while i < r.len() {
        let b = r[i];
        if b & 0x80 == 0 {
            if class(b) != Class::Ascii {
                return false;
            }
        } else if b & 0x40 == 0 {
            return false;
        } else {
            // Up to five continuation bytes, as the `file` command (pre-RFC 3629) allows.
            let following = match (b & 0x20, b & 0x10, b & 0x08, b & 0x04, b & 0x02) {
                (0, ..) => 1,
                (_, 0, ..) => 2,
                (_, _, 0, ..) => 3,
                (_, _, _, 0, _) => 4,
                (_, _, _, _, 0) => 5,
                _ => return false,
            };
            for _ in 0..following {
                i += 1;
                let Some(&c) = r.get(i) else { return high };
                if c & 0xc0 != 0x80 {
                    return false;
                }
            }
            high = true;
        }
        i += 1;
    }
    high
}

/// UTF-16 with a byte order mark whose ASCII-range characters are all text.
fn utf16(r: &[u8]) -> Option<TextKind> {
    let big = match r {
        [0xff, 0xfe, ..] => false,
        [0xfe, 0xff, ..] => true,
        _ => return None,
    };
    for pair in r[2..].chunks_exact(2) {
        let c = if big {
            u16::from_be_bytes([pair[0], pair[1]])
        } else {
            u16::from_le_bytes([pair[0], pair[1]])
        };
        if c == 0xfffe || (c < 128 && class(c as u8) != Class::Ascii) {
            return None;
        }
    }
    Some(if big { TextKind::Utf16Be } else { TextKind::Utf16Le })
}

/// EBCDIC (code page 037 mapped to ASCII, as in `file`): every byte maps to ASCII or ISO-8859
/// text.
fn ebcdic(r: &[u8]) -> Option<TextKind> {
    let mut international = false;
    for &b in r {
        match class(EBCDIC_TO_ASCII[usize::from(b)]) {
            Class::Never | Class::Extended => return None,
            Class::Iso => international = true,
            Class::Ascii => {}
        }
    }
    Some(if international { TextKind::EbcdicInternational } else { TextKind::Ebcdic })
}

/// The `file` command's EBCDIC to ASCII table.
#[rustfmt::skip]
const EBCDIC_TO_ASCII: [u8; 256] = [
    0, 1, 2, 3, 156, 9, 134, 127, 151, 141, 142, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 157, 133, 8, 135, 24, 25, 146, 143, 28, 29, 30, 31,
    128, 129, 130, 131, 132, 10, 23, 27, 136, 137, 138, 139, 140, 5, 6, 7,
    144, 145, 22, 147, 148, 149, 150, 4, 152, 153, 154, 155, 20, 21, 158, 26,
    b' ', 160, 161, 162, 163, 164, 165, 166, 167, 168, 213, b'.', b'<', b'(', b'+', b'|',
    b'&', 169, 170, 171, 172, 173, 174, 175, 176, 177, b'!', b'$', b'*', b')', b';', b'~',
    b'-', b'/', 178, 179, 180, 181, 182, 183, 184, 185, 203, b',', b'%', b'_', b'>', b'?',
    186, 187, 188, 189, 190, 191, 192, 193, 194, b'`', b':', b'#', b'@', b'\'', b'=', b'"',
    195, b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h', b'i', 196, 197, 198, 199, 200, 201,
    202, b'j', b'k', b'l', b'm', b'n', b'o', b'p', b'q', b'r', b'^', 204, 205, 206, 207, 208,
    209, 229, b's', b't', b'u', b'v', b'w', b'x', b'y', b'z', 210, 211, 212, b'[', 214, 215,
    216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, b']', 230, 231,
    b'{', b'A', b'B', b'C', b'D', b'E', b'F', b'G', b'H', b'I', 232, 233, 234, 235, 236, 237,
    b'}', b'J', b'K', b'L', b'M', b'N', b'O', b'P', b'Q', b'R', 238, 239, 240, 241, 242, 243,
    b'\\', 159, b'S', b'T', b'U', b'V', b'W', b'X', b'Y', b'Z', 244, 245, 246, 247, 248, 249,
    b'0', b'1', b'2', b'3', b'4', b'5', b'6', b'7', b'8', b'9', 250, 251, 252, 253, 254, 255,
];

/// Where text starts: after a UTF-8 byte order mark and leading ASCII white space (what a
/// look at its first character, `{`, `<`, should see).
pub(crate) fn text_start(bytes: &[u8]) -> &[u8] {
    let b = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_utf8_and_latin1_are_told_apart() {
        assert_eq!(classify(b"This file has been removed.\r\n"), Some(TextKind::Ascii));
        assert_eq!(classify("caf\u{e9}\n".as_bytes()), Some(TextKind::Utf8));
        assert_eq!(classify(b"caf\xe9\n"), Some(TextKind::Latin1));
        assert_eq!(classify(b"smart \x93quotes\x94"), Some(TextKind::Extended));
        assert_eq!(classify(b"\xef\xbb\xbfhello"), Some(TextKind::Utf8Bom));
        assert_eq!(classify(b"+/v8 hello"), Some(TextKind::Utf7));
    }

    #[test]
    fn control_bytes_and_empty_input_are_not_text() {
        assert_eq!(classify(b""), None);
        assert_eq!(classify(b"GIF89a\x01\x00\x01\x00\x00"), None);
        assert_eq!(classify(b"text with a NUL\0"), None);
        assert_eq!(classify(b"DEL \x7f"), None);
        // A BOM and nothing after it: nothing is text (as in `file`).
        assert_eq!(classify(b"\xef\xbb\xbf\x00"), None);
    }

    #[test]
    fn utf16_needs_its_byte_order_mark() {
        assert_eq!(classify(b"\xff\xfeh\0i\0\n\0"), Some(TextKind::Utf16Le));
        assert_eq!(classify(b"\xfe\xff\0h\0i"), Some(TextKind::Utf16Be));
        assert_eq!(classify(b"\xff\xfeh\0\x01\0"), None);
    }

    #[test]
    fn ebcdic_maps_through_its_table() {
        // "HELLO WORLD" in EBCDIC 037 reads as ISO-8859 (every byte is), as in `file`...
        let mut hello = vec![0xc8, 0xc5, 0xd3, 0xd3, 0xd6, 0x40, 0xe6, 0xd6, 0xd9, 0xd3, 0xc4];
        assert_eq!(classify(&hello), Some(TextKind::Latin1));
        // ...until a byte no ASCII text holds, EBCDIC's newline (0x15), says otherwise.
        hello.push(0x15);
        assert_eq!(classify(&hello), Some(TextKind::Ebcdic));
    }

    #[test]
    fn only_the_first_window_counts_and_a_cut_character_is_forgiven() {
        let mut long = vec![b'a'; TEXT_WINDOW];
        long.push(0);
        assert_eq!(classify(&long), Some(TextKind::Ascii));
        // One whole character before the cut one: the cut one counts as it went.
        let mut cut = "\u{e9}".as_bytes().to_vec();
        cut.resize(TEXT_WINDOW - 1, b'a');
        cut.extend_from_slice("\u{e9}".as_bytes());
        assert_eq!(classify(&cut), Some(TextKind::Utf8));
        // A cut character and no whole one before it: not UTF-8, its lead byte ISO-8859.
        cut[..2].copy_from_slice(b"aa");
        assert_eq!(classify(&cut), Some(TextKind::Latin1));
    }

    #[test]
    fn the_byte_table_is_the_file_commands() {
        let never: Vec<u8> = (0..=255u8).filter(|b| class(*b) == Class::Never).collect();
        let mut want: Vec<u8> = (0..7).chain(14..27).chain(28..32).collect();
        want.push(0x7f);
        assert_eq!(never, want);
    }
}
