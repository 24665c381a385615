//! MIME multipart framing (RFC 2046) as archives store it: the `boundary` parameter of a
//! `Content-Type` and the delimiter lines it makes.

/// The `boundary` parameter of a `Content-Type` value, unquoted.
pub(crate) fn boundary_param(ct: &[u8]) -> Option<Vec<u8>> {
    let lower = ct.to_ascii_lowercase();
    let at = find(&lower, b"boundary=")? + b"boundary=".len();
    let rest = &ct[at..];
    let b = match rest.strip_prefix(b"\"") {
        Some(q) => &q[..q.iter().position(|&b| b == b'"')?],
        None => {
            let end = rest
                .iter()
                .position(|&b| b == b';' || b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            &rest[..end]
        }
    };
    (!b.is_empty()).then(|| b.to_vec())
}

/// A delimiter line: where it starts, where it ends (after its LF), whether it is the closing
/// one (`--boundary--`).
pub(crate) struct Delim {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) closing: bool,
}

/// The first delimiter line for `boundary` at or after `from`: `--boundary` or
/// `--boundary--` at the start of a line, then only blanks to the line's end.
pub(crate) fn find_delimiter(
    buf: &[u8],
    from: usize,
    boundary: &[u8],
    complete: bool,
) -> Option<Delim> {
    let pat = [&b"--"[..], boundary].concat();
    let mut i = from;
    while let Some(pos) = buf.get(i..).and_then(|rest| find(rest, &pat)) {
        let s = i + pos;
        i = s + 1;
        if s > 0 && buf[s - 1] != b'\n' {
            continue;
        }
        let mut j = s + pat.len();
        let closing = buf[j..].starts_with(b"--");
        if closing {
            j += 2;
        }
        while j < buf.len() && (buf[j] == b' ' || buf[j] == b'\t') {
            j += 1;
        }
        if buf.get(j) == Some(&b'\r') {
            j += 1;
        }
        match buf.get(j) {
            Some(b'\n') => return Some(Delim { start: s, end: j + 1, closing }),
            None if complete => return Some(Delim { start: s, end: j, closing }),
            _ => {}
        }
    }
    None
}

/// The first occurrence of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let last = hay.len().checked_sub(needle.len())?;
    let mut i = 0;
    while i <= last {
        let p = i + hay[i..=last].iter().position(|&b| b == first)?;
        if &hay[p + 1..p + needle.len()] == rest {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_from_content_types() {
        assert_eq!(
            boundary_param(b"multipart/mixed; boundary=KulturArw3_ab"),
            Some(b"KulturArw3_ab".to_vec())
        );
        assert_eq!(
            boundary_param(b"multipart/mixed; BOUNDARY=\"a b;c\"; x=y"),
            Some(b"a b;c".to_vec())
        );
        assert_eq!(
            boundary_param(b"multipart/mixed; boundary=ab; charset=x"),
            Some(b"ab".to_vec())
        );
        assert_eq!(boundary_param(b"multipart/mixed"), None);
        assert_eq!(boundary_param(b"multipart/mixed; boundary=\"unclosed"), None);
    }

    #[test]
    fn delimiters_only_at_line_starts_and_whole() {
        let buf = b"x--ab\n--abc\n--ab \r\nbody\n--ab--\n";
        let d = find_delimiter(buf, 0, b"ab", true).unwrap();
        assert_eq!(
            (d.start, d.end, d.closing),
            (12, 19, false),
            "not mid-line, not a longer boundary"
        );
        let d = find_delimiter(buf, d.end, b"ab", true).unwrap();
        assert_eq!((d.start, d.end, d.closing), (24, 31, true));
        // At the end of what was read: a delimiter only if the file ends there.
        assert!(find_delimiter(b"\n--ab", 0, b"ab", false).is_none());
        assert!(find_delimiter(b"\n--ab", 0, b"ab", true).is_some());
        assert_eq!(find(b"abcabd", b"abd"), Some(3));
        assert_eq!(find(b"ab", b"abc"), None);
    }
}
