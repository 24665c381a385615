//! SURT keys: a URL canonicalised and turned around (`http://www.Example.com/A?b=1&a=2` becomes
//! `com,example)/a?a=2&b=1`), so that the captures of one site sort together and two spellings
//! of one URL meet. pywb and cdxj-indexer take the key from PyPI's `surt` package (the Internet
//! Archive's `WaybackURLKeyMaker`): this module is that algorithm, step for step, over bytes,
//! so that an index webaip writes sorts and looks up exactly as theirs do. The tests compare it
//! with the package itself on every URL of the corpus and on the package's own cases.
//!
//! The crate `surt-rs` (0.1.3) was judged on the package's own cases and not taken: it keeps
//! the fragment (`org,archive)/index.html#foo`), keys `http://https://order.1and1.com` as
//! `https)//order.1and1.com`, keys `http://www.google.com.../` as `,,,com,google)/`, leaves a
//! `&` where it strips a session id, and fails on `mailto:` URLs and on a host with a space,
//! where `surt` gives keys: it parses through the WHATWG `url` crate, which is not surt's
//! parser.
//!
//! Where `surt` raises (a port that is not a number, an empty URL after trimming), cdxj-indexer
//! keys the record by the URL as it is; [`surt`] does the same.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::Regex;

/// The SURT key of `url`, as `surt.surt(url)` gives it (the URL itself where `surt` fails).
pub fn surt(url: &str) -> String {
    if url.is_empty() {
        return "-".to_string();
    }
    if url.starts_with("filedesc") {
        return url.to_string();
    }
    match key(url.as_bytes()) {
        Some(k) => String::from_utf8_lossy(&k).into_owned(),
        None => url.to_string(),
    }
}

/// A URL as `surt`'s `handyurl` holds it; `None` is Python's `None`.
#[derive(Debug, Default)]
struct Parts {
    scheme: Vec<u8>,
    host: Option<Vec<u8>>,
    port: Option<u32>,
    path: Option<Vec<u8>>,
    query: Option<Vec<u8>>,
}

fn key(url: &[u8]) -> Option<Vec<u8>> {
    let mut u = parse(url)?;
    google_canonicalize(&mut u);
    ia_canonicalize(&mut u);
    Some(surt_form(&u))
}

/// `handyurl.parse`: trim, drop tabs and line ends, default to `http://`, collapse repeated
/// `http(s)://`, split as RFC 2396's regular expression does. `None` where Python raises.
fn parse(url: &[u8]) -> Option<Parts> {
    let url = url.trim_ascii();
    let mut url: Vec<u8> =
        url.iter().copied().filter(|b| !matches!(b, b'\n' | b'\r' | b'\t')).collect();
    if url.is_empty() {
        return None; // `None.startswith`: surt raises
    }
    if scheme_len(&url).is_none() {
        url.splice(0..0, b"http://".iter().copied());
    }
    collapse_protocols(&mut url);
    let scheme_end = scheme_len(&url)?;
    let scheme = url[..scheme_end].to_vec();
    let rest = &url[scheme_end + 1..];
    let (before_fragment, _fragment) = split_at_byte(rest, b'#');
    let (hier, query) = split_at_byte(before_fragment, b'?');
    let (netloc, path) = match hier.strip_prefix(b"//") {
        Some(after) => {
            let end = after.iter().position(|&b| b == b'/').unwrap_or(after.len());
            (&after[..end], &after[end..])
        }
        None => (&b""[..], hier),
    };
    let netloc = if netloc.ends_with(b":") {
        let keep = netloc.iter().rposition(|&b| b != b':').map_or(0, |i| i + 1);
        &netloc[..keep]
    } else {
        netloc
    };
    let (hostname, port) = host_and_port(netloc)?;
    let mut host = (!hostname.is_empty()).then(|| lower_before_percent(hostname));
    let mut path = (!path.is_empty()).then(|| path.to_vec());
    if scheme.starts_with(b"http")
        && host.is_none()
        && let Some(p) = &path
    {
        // "http:////host/x": the host is the first segment of the path.
        let trimmed = &p[p.iter().position(|&b| b != b'/').unwrap_or(p.len())..];
        let (h, after) = split_at_byte(trimmed, b'/');
        host = Some(h.to_vec());
        path = Some([b"/", after.unwrap_or_default()].concat());
    }
    Some(Parts {
        scheme,
        host,
        port,
        path,
        query: query.filter(|q| !q.is_empty()).map(<[u8]>::to_vec),
    })
}

/// The length of a leading scheme (`[a-zA-Z][a-zA-Z0-9+.-]*` followed by `:`).
fn scheme_len(url: &[u8]) -> Option<usize> {
    if !url.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = url
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (url[n] == b':').then_some(n)
}

/// `^(https?://)+` becomes its last repetition ("http://https://x" is "https://x").
fn collapse_protocols(url: &mut Vec<u8>) {
    let mut at = 0;
    let mut last = None;
    loop {
        let len = if url[at..].starts_with(b"http://") {
            7
        } else if url[at..].starts_with(b"https://") {
            8
        } else {
            break;
        };
        last = Some(at);
        at += len;
    }
    if let Some(last) = last {
        url.drain(..last);
    }
}

/// The bytes before the first `sep`, and those after it (`None` when there is none).
fn split_at_byte(s: &[u8], sep: u8) -> (&[u8], Option<&[u8]>) {
    match s.iter().position(|&b| b == sep) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

/// Python's `SplitResultBytes.hostname` and `.port` (the user part dropped); `None` where
/// `.port` raises (not digits, over 65535). Port 0 is no port (`o.port or None`).
fn host_and_port(netloc: &[u8]) -> Option<(&[u8], Option<u32>)> {
    let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
        Some(i) => &netloc[i + 1..],
        None => netloc,
    };
    let (hostname, port) = match split_at_byte(hostinfo, b'[') {
        (_, Some(bracketed)) => {
            let (h, after) = split_at_byte(bracketed, b']');
            (h, after.and_then(|a| split_at_byte(a, b':').1))
        }
        (_, None) => split_at_byte(hostinfo, b':'),
    };
    let port = match port.filter(|p| !p.is_empty()) {
        None => None,
        Some(p) => {
            if !p.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let n: u64 = std::str::from_utf8(p).ok()?.parse().ok().filter(|n| *n <= 65535)?;
            (n != 0).then_some(n as u32)
        }
    };
    Some((hostname, port))
}

/// Python's `hostname`: lower-cased, except a scoped IPv6 zone after `%`.
fn lower_before_percent(h: &[u8]) -> Vec<u8> {
    let cut = h.iter().position(|&b| b == b'%').unwrap_or(h.len());
    let mut out = h[..cut].to_ascii_lowercase();
    out.extend_from_slice(&h[cut..]);
    out
}

/// `GoogleURLCanonicalizer.canonicalize`: unescape, IDNA, dots, numeric hosts, path segments,
/// escape once.
fn google_canonicalize(u: &mut Parts) {
    if let Some(q) = &u.query {
        u.query = Some(escape_once(&unescape_repeatedly(q)));
    }
    if let Some(h) = u.host.take().filter(|h| !h.is_empty()) {
        let mut host = unescape_repeatedly(&h);
        if !host.is_ascii()
            && let Some(ascii) = idna_to_ascii(&drop_invalid_utf8(&host))
        {
            host = ascii;
        }
        let host = replace_double_dots(&host);
        let host = trim_dots(&host);
        u.host = Some(match attempt_ip_formats(host) {
            Some(ip) => ip.into_bytes(),
            None => escape_once(&host.to_ascii_lowercase()),
        });
    }
    let path = u.path.as_deref().map(unescape_repeatedly);
    let path = if u.host.as_ref().is_some_and(|h| !h.is_empty()) {
        Some(normalize_path(path.as_deref()))
    } else {
        path
    };
    u.path = path.map(|p| escape_once(&p));
}

/// `IAURLCanonicalizer.canonicalize` with its defaults: host lower-cased and without `www`,
/// default port dropped, path and query lower-cased and without session ids, the trailing
/// slash dropped, query arguments sorted.
fn ia_canonicalize(u: &mut Parts) {
    if let Some(h) = u.host.as_mut().filter(|h| !h.is_empty()) {
        h.make_ascii_lowercase();
        if u.scheme != b"dns" {
            let www = WWW_DIGITS.find(h).map_or(0, |m| m.end());
            h.drain(..www);
        }
    }
    let default_port = match u.scheme.to_ascii_lowercase().as_slice() {
        b"http" => 80,
        b"https" => 443,
        _ => 0,
    };
    if u.port == Some(default_port) {
        u.port = None;
    }
    if let Some(p) = u.path.as_mut().filter(|p| !p.is_empty()) {
        p.make_ascii_lowercase();
        *p = strip_path_session_id(p);
        if p.len() > 1 && p.ends_with(b"/") {
            p.pop();
        }
    }
    if let Some(q) = u.query.take().filter(|q| !q.is_empty()) {
        let q = strip_query_session_id(&q).to_ascii_lowercase();
        let q = alpha_reorder_query(&q);
        u.query = (!q.is_empty()).then_some(q);
    }
}

/// `geturl_bytes(surt=True, with_scheme=False)`.
fn surt_form(u: &Parts) -> Vec<u8> {
    let mut s = Vec::new();
    match u.host.as_ref().filter(|h| !h.is_empty()) {
        None => {
            s.extend_from_slice(&u.scheme);
            s.push(b':');
        }
        Some(h) => {
            let labels: Vec<&[u8]> = h.split(|&b| b == b'.').rev().collect();
            s.extend_from_slice(&labels.join(&b","[..]));
            if let Some(port) = u.port {
                s.extend_from_slice(format!(":{port}").as_bytes());
            }
            s.push(b')');
        }
    }
    match &u.path {
        Some(p) if !p.is_empty() => s.extend_from_slice(p),
        _ if u.query.is_some() => s.push(b'/'),
        _ => {}
    }
    if let Some(q) = &u.query {
        s.push(b'?');
        s.extend_from_slice(q);
    }
    s
}

/// Python's `unquote_to_bytes`, repeated until nothing changes.
fn unescape_repeatedly(input: &[u8]) -> Vec<u8> {
    let mut cur = input.to_vec();
    loop {
        let next = unquote(&cur);
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

/// One pass of `%XX` decoding; a `%` not followed by two hex digits stays.
fn unquote(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%'
            && let (Some(h), Some(l)) = (s.get(i + 1).and_then(hex), s.get(i + 2).and_then(hex))
        {
            out.push(h << 4 | l);
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

fn hex(b: &u8) -> Option<u8> {
    (*b as char).to_digit(16).map(|d| d as u8)
}

/// `escapeOnce`: `quote_from_bytes` with surt's safe set: every byte outside printable ASCII,
/// space, `#` and `%` becomes `%XX`.
fn escape_once(s: &[u8]) -> Vec<u8> {
    const SAFE: &[u8] = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~";
    let mut out = Vec::with_capacity(s.len());
    for &b in s {
        if b.is_ascii_alphanumeric() || SAFE.contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out
}

/// `bytes.decode('utf-8', 'ignore')`: invalid sequences dropped.
fn drop_invalid_utf8(s: &[u8]) -> Cow<'_, str> {
    let mut out = String::new();
    for chunk in s.utf8_chunks() {
        out.push_str(chunk.valid());
    }
    Cow::Owned(out)
}

/// Python's `str.encode('idna')` (IDNA 2003: nameprep, then punycode per label); `None` where
/// it raises (`surt` then keeps the host as it was).
fn idna_to_ascii(host: &str) -> Option<Vec<u8>> {
    if host.is_empty() {
        return Some(Vec::new());
    }
    if host.is_ascii() {
        let labels: Vec<&str> = host.split('.').collect();
        let (last, rest) = labels.split_last()?;
        let ok = rest.iter().all(|l| (1..64).contains(&l.len())) && last.len() < 64;
        return ok.then(|| host.as_bytes().to_vec());
    }
    let mut labels: Vec<&str> = host.split(['.', '\u{3002}', '\u{ff0e}', '\u{ff61}']).collect();
    let trailing_dot = labels.last().is_some_and(|l| l.is_empty());
    if trailing_dot {
        labels.pop();
    }
    let mut out = Vec::new();
    for label in labels {
        if !out.is_empty() {
            out.push(b'.');
        }
        out.extend_from_slice(&label_to_ascii(label)?);
    }
    if trailing_dot {
        out.push(b'.');
    }
    Some(out)
}

/// IDNA 2003 ToASCII of one label (RFC 3490), as Python's `encodings.idna.ToASCII`.
fn label_to_ascii(label: &str) -> Option<Vec<u8>> {
    let fits = |l: &[u8]| (1..64).contains(&l.len());
    if label.is_ascii() {
        return fits(label.as_bytes()).then(|| label.as_bytes().to_vec());
    }
    let prepared = nameprep(label)?;
    if prepared.is_ascii() {
        return fits(prepared.as_bytes()).then(|| prepared.into_bytes());
    }
    if prepared.starts_with("xn--") {
        return None;
    }
    let ace = format!("xn--{}", idna::punycode::encode_str(&prepared)?);
    fits(ace.as_bytes()).then(|| ace.into_bytes())
}

/// Nameprep (RFC 3491) as Python's `encodings.idna.nameprep` does it: map, NFKC, refuse the
/// prohibited characters and bad bidirectional text. Unassigned code points are allowed
/// (Python does not check them, so `stringprep::nameprep`, which refuses them, is not used);
/// the normalisation tables are today's Unicode where Python's are 3.2's, which differs only
/// for characters assigned since.
fn nameprep(label: &str) -> Option<String> {
    use stringprep::tables as t;
    use unicode_normalization::UnicodeNormalization;
    let mapped: String = label
        .chars()
        .filter(|&c| !t::commonly_mapped_to_nothing(c))
        .flat_map(t::case_fold_for_nfkc)
        .collect();
    let label: String = mapped.nfkc().collect();
    let prohibited = |c: char| {
        t::non_ascii_space_character(c)
            || t::non_ascii_control_character(c)
            || t::private_use(c)
            || t::non_character_code_point(c)
            || t::surrogate_code(c)
            || t::inappropriate_for_plain_text(c)
            || t::inappropriate_for_canonical_representation(c)
            || t::change_display_properties_or_deprecated(c)
            || t::tagging_character(c)
    };
    if label.chars().any(prohibited) {
        return None;
    }
    if label.chars().any(t::bidi_r_or_al) {
        let first_last = label.chars().next().is_some_and(t::bidi_r_or_al)
            && label.chars().last().is_some_and(t::bidi_r_or_al);
        if label.chars().any(t::bidi_l) || !first_last {
            return None;
        }
    }
    Some(label)
}

/// Python's `bytes.replace(b'..', b'.')`: one pass, left to right.
fn replace_double_dots(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(b"..") {
            out.push(b'.');
            i += 2;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

fn trim_dots(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| b != b'.').unwrap_or(s.len());
    let end = s.iter().rposition(|&b| b != b'.').map_or(start, |i| i + 1);
    &s[start..end]
}

static DECIMAL_IP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$").expect("a valid pattern")
});
static OCTAL_IP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$").expect("a valid pattern")
});
static WWW_DIGITS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^www\d*\.").expect("a valid pattern"));

/// `attemptIPFormats`: a host of digits alone is a 32-bit address (masked, as the Wayback
/// machine's live-web ARCs need); dotted decimal or octal forms are read as the C library's
/// `inet_aton` reads them (which `gethostbyname` does before any name look-up).
fn attempt_ip_formats(host: &[u8]) -> Option<String> {
    if !host.is_empty() && host.iter().all(u8::is_ascii_digit) {
        let mut n: u32 = 0;
        for &d in host {
            n = n.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
        }
        return Some(dotted(n));
    }
    if DECIMAL_IP.is_match(host) || OCTAL_IP.is_match(host) {
        return inet_aton(host).map(dotted);
    }
    None
}

fn dotted(n: u32) -> String {
    let [a, b, c, d] = n.to_be_bytes();
    format!("{a}.{b}.{c}.{d}")
}

/// glibc's `inet_aton`: one to four parts, each decimal, octal (leading 0) or hex (0x); the
/// last fills the bytes the others leave.
fn inet_aton(s: &[u8]) -> Option<u32> {
    let parts: Vec<&[u8]> = s.split(|&b| b == b'.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut values = Vec::with_capacity(parts.len());
    for p in &parts {
        let p: &[u8] = p;
        let (digits, radix): (&[u8], u32) = match p {
            [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
            [b'0', _, ..] => (&p[1..], 8),
            _ => (p, 10),
        };
        let v = if digits.is_empty() {
            if radix == 10 { return None } else { 0 }
        } else {
            u64::from_str_radix(std::str::from_utf8(digits).ok()?, radix).ok()?
        };
        values.push(v);
    }
    let (last, first) = values.split_last()?;
    if first.iter().any(|&v| v > 0xff) || *last >= 1u64 << (8 * (4 - first.len())) {
        return None;
    }
    let mut n: u64 = *last;
    for (i, v) in first.iter().enumerate() {
        n |= v << (8 * (3 - i));
    }
    u32::try_from(n).ok()
}

/// `normalizePath`: `.` and `..` segments resolved, empty segments dropped (but the last).
fn normalize_path(path: Option<&[u8]>) -> Vec<u8> {
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return b"/".to_vec();
    };
    let mut kept: Vec<&[u8]> = Vec::new();
    for p in path.split(|&b| b == b'/').skip(1) {
        match p {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(p);
                }
            }
            _ => kept.push(p),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, rest)) = kept.split_last() {
        for p in rest.iter().filter(|p| !p.is_empty()) {
            out.extend_from_slice(p);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

static PATH_SESSION_IDS: LazyLock<[Regex; 2]> = LazyLock::new(|| {
    [
        r"(?i-u)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$",
        r"(?i-u)^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$",
    ]
    .map(|p| Regex::new(p).expect("a valid pattern"))
});

static QUERY_SESSION_IDS: LazyLock<[Regex; 5]> = LazyLock::new(|| {
    [
        r"(?i-u)^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"(?i-u)^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"(?i-u)^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"(?i-u)^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$",
        r"(?i-u)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$",
    ]
    .map(|p| Regex::new(p).expect("a valid pattern"))
});

fn strip_path_session_id(path: &[u8]) -> Vec<u8> {
    let mut path = path.to_vec();
    for re in PATH_SESSION_IDS.iter() {
        if let Some(c) = re.captures(&path) {
            path = [&c[1], &c[3]].concat();
        }
    }
    path
}

fn strip_query_session_id(query: &[u8]) -> Vec<u8> {
    let mut query = query.to_vec();
    for re in QUERY_SESSION_IDS.iter() {
        if let Some(c) = re.captures(&query) {
            query = match c.get(2).filter(|m| !m.is_empty()) {
                Some(rest) => [&c[1], rest.as_bytes()].concat(),
                None => c[1].to_vec(),
            };
        }
    }
    query
}

/// `alphaReorderQuery`: arguments sorted as Python sorts `(name,)` and `(name, value)`
/// tuples (an argument without `=` before the same name with one).
fn alpha_reorder_query(q: &[u8]) -> Vec<u8> {
    if q.len() <= 1 {
        return q.to_vec();
    }
    let mut args: Vec<(&[u8], Option<&[u8]>)> =
        q.split(|&b| b == b'&').map(|a| split_at_byte(a, b'=')).collect();
    args.sort();
    let mut out = Vec::with_capacity(q.len());
    for (i, (name, value)) in args.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(name);
        if let Some(v) = value {
            out.push(b'=');
            out.extend_from_slice(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases from the `surt` package's own tests, with the keys it gives.
    #[test]
    fn keys_as_the_surt_package_gives_them() {
        for (url, want) in [
            ("http://www.archive.org/index.html#foo", "org,archive)/index.html"),
            (
                "http://www.archive.org:8080/index.html?query#foo",
                "org,archive:8080)/index.html?query",
            ),
            ("http:////////////////www.vikings.com", "com,vikings)/"),
            ("http://https://order.1and1.com", "com,1and1,order)/"),
            (
                "http://mineral.galleries.com:/minerals/x.htm",
                "com,galleries,mineral)/minerals/x.htm",
            ),
            ("mailto:bot@archive.org", "mailto:bot@archive.org"),
            ("http://archive.org/index.html?b=a&b=b&a=b", "org,archive)/index.html?a=b&b=a&b=b"),
            ("http://www34.archive.org/", "org,archive)/"),
            ("http://host/%25%32%35", "host)/%25"),
            ("http://3279880203/blah", "11,0,127,195)/blah"),
            ("http://www.google.com/blah/..", "com,google)/"),
            ("http://www.google.com.../", "com,google)/"),
            ("http://www.google.com/foo\tbar\rbaz\n2", "com,google)/foobarbaz2"),
            ("B\u{fc}cher.ch:8080", "ch,xn--bcher-kva:8080)/"),
            ("http://B\u{fc}cher.ch:8080/", "ch,xn--bcher-kva:8080)/"),
            ("http://\u{2603}.com/", "com,xn--n3h)/"),
            ("http://\u{1}\u{80}.com/", "com,%01%c2%80)/"),
            ("http:// leadingspace.com/", "com,%20leadingspace)/"),
            ("http://host.com//twoslashes?more//slashes", "com,host)/twoslashes?more//slashes"),
            ("https://www.archive.org:443/big/", "org,archive)/big"),
            ("http://www.archive.org:443/", "org,archive:443)/"),
            ("dns:www.archive.org", "dns:www.archive.org"),
            ("http://10.0.258/", "2,1,0,10)/"),
            ("http://017.0.0.1/", "1,0,0,15)/"),
            ("http://1.2.3.256/", "256,3,2,1)/"),
            ("http://x.com/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx", "com,x)/mileg.aspx"),
            (
                "http://x.com/?a=1&jsessionid=0123456789abcdefghijklmnopqrstuv&b=2",
                "com,x)/?a=1&b=2",
            ),
            ("http://x.com:80x/", "http://x.com:80x/"),
            ("", "-"),
            ("filedesc://x.arc", "filedesc://x.arc"),
        ] {
            assert_eq!(surt(url), want, "{url:?}");
        }
    }

    /// `inet_aton` forms: parts fill the bytes the earlier ones leave; too large is no address.
    #[test]
    fn numeric_hosts_read_as_inet_aton() {
        assert_eq!(inet_aton(b"10.0.258"), Some(0x0a00_0102));
        assert_eq!(inet_aton(b"017.0.0.1"), Some(0x0f00_0001));
        assert_eq!(inet_aton(b"1.2.3.256"), None);
        assert_eq!(inet_aton(b"08.1.1.1"), None);
        assert_eq!(attempt_ip_formats(b"39024579298").as_deref(), Some("22.11.210.226"));
    }
}

/// SURT keys against the `surt` package that pywb and cdxj-indexer use: every URL of the
/// corpus (as warcio reads it) and 20,000 generated URLs that combine the cases each rule
/// handles (schemes, user parts, IDNA and numeric hosts, ports, dot segments, escapes, session
/// ids, query order, fragments).
#[cfg(test)]
mod oracle_tests {
    use std::process::Command;

    use crate::test_support::{corpus_archives, oracle_python, repo};

    #[test]
    fn keys_equal_the_surt_package_on_the_corpus_and_generated_urls() {
        let out = Command::new(oracle_python())
            .arg(repo().join("tests/oracle/surt_keys.py"))
            .args(corpus_archives())
            .output()
            .expect("python runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).expect("JSON lines are UTF-8");
        let (mut checked, mut corpus_http, mut differ) = (0, 0, Vec::new());
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let (url, want) = (v["url"].as_str().unwrap(), v["key"].as_str().unwrap());
            let got = super::surt(url);
            if got != want {
                differ.push(format!("{url:?}: surt {want:?}, webaip {got:?}"));
            }
            checked += 1;
            corpus_http +=
                usize::from(checked <= text.lines().count() - 20_000 && url.starts_with("http"));
        }
        assert!(
            checked > 21_000 && corpus_http > 1_000,
            "{checked} URLs, {corpus_http} from the corpus"
        );
        assert!(
            differ.is_empty(),
            "{} of {checked} keys differ:\n{}",
            differ.len(),
            differ.join("\n")
        );
    }
}
