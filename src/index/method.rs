//! The key of a POST or PUT capture, as pywb, py-wacz and `cdxj-indexer -p` write it: a
//! response record is paired with the request record next to it (same `WARC-Target-URI`, the
//! second naming the first in `WARC-Concurrent-To`, in either order), and when that request is
//! a POST or PUT its body, turned into a query, is appended to the URL before the SURT is taken
//! (`?__wb_method=post&a=1`). pywb looks a POST up by that key, so a plain GET never gets the
//! response of a POST, and a POST replays.
//!
//! The body is turned into a query as cdxj-indexer's `postquery.py` does: a form body
//! `unquote_plus`ed, multipart parts and JSON values `urlencode`d (JSON values as Python's
//! `str()` writes them, a repeated name numbered `name.2_`), anything else base64 as
//! `__wb_post_data=`; cut at 4,096 characters. Differences: at most [`MAX_BODY`] bytes of a
//! body are read (a longer JSON body does not parse and gives no query), a body is taken as
//! stored (not de-chunked nor decompressed), and an AMF body is taken as binary.

use std::collections::HashMap;
use std::io::{self, Read};

use super::cdxj::{IndexEntry, json_string};

/// Characters of query kept (cdxj-indexer's `MAX_QUERY_LENGTH`).
pub const MAX_QUERY_LENGTH: usize = 4096;
/// Bytes of a request body read: a bound on memory whatever the request says (a request's
/// start is read within [`super::tap::HEAD_BYTES`]).
pub const MAX_BODY: usize = 48 * 1024;
/// Body bytes read when the request states no `Content-Length` (as cdxj-indexer).
const NO_LENGTH: u64 = 8192;

/// What a record gives the pairing: its entry (when indexed), and what pairs it.
#[derive(Debug, Default)]
pub struct Seen {
    /// `WARC-Type`.
    pub warc_type: String,
    /// `WARC-Record-ID`.
    pub id: Option<String>,
    /// The first `WARC-Concurrent-To`.
    pub concurrent_to: Option<String>,
    /// `WARC-Target-URI` as written.
    pub uri: Option<String>,
    /// The record's index entry, when it is indexed.
    pub entry: Option<IndexEntry>,
    /// A request's method and query, when it is a POST or PUT.
    pub method: Option<MethodQuery>,
}

/// A POST or PUT request's method and body as a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodQuery {
    /// The method as the request line writes it.
    pub written: String,
    /// The body as a query; `None` when `Content-Length` is not a number.
    pub query: Option<String>,
}

/// The HTTP fields of a request that its query needs.
#[derive(Debug, Default)]
pub struct RequestHead {
    /// The request line's first token.
    pub method: String,
    /// The first `Content-Type`.
    pub content_type: Option<String>,
    /// The first `Content-Length`, as written.
    pub content_length: Option<String>,
}

/// The method and query of a request of head `head` whose body follows in `body`; `None`
/// for a method other than POST and PUT (their key is the plain one).
pub fn method_query(head: &RequestHead, body: &mut dyn Read) -> io::Result<Option<MethodQuery>> {
    let upper = head.method.to_ascii_uppercase();
    if upper != "POST" && upper != "PUT" {
        return Ok(None);
    }
    let written = head.method.clone();
    // `int()` of Python: blanks around, an optional sign.
    let length = match head.content_length.as_deref().map(str::trim) {
        None => NO_LENGTH as i64,
        Some(l) => match l.strip_prefix('+').unwrap_or(l).parse::<i64>() {
            Ok(n) => n,
            Err(_) => return Ok(Some(MethodQuery { written, query: None })),
        },
    };
    let want = (length.max(0) as u64).min(MAX_BODY as u64);
    let mut data = Vec::new();
    body.take(want).read_to_end(&mut data)?;
    let mime = head.content_type.as_deref().unwrap_or_default();
    Ok(Some(MethodQuery { written, query: Some(query_of(mime, &data)) }))
}

/// The body as a query, by its media type (cdxj-indexer's `query_extract`), cut.
pub fn query_of(mime: &str, data: &[u8]) -> String {
    let query = if mime.starts_with("application/x-www-form-urlencoded") {
        match std::str::from_utf8(data) {
            Ok(s) => unquote_plus(s),
            Err(_) => binary(data),
        }
    } else if mime.starts_with("multipart/") {
        match mime.split("boundary=").nth(1) {
            Some(boundary) => multipart_query(data, boundary),
            None => binary(data),
        }
    } else if mime.starts_with("application/json") {
        json_query(data).unwrap_or_default()
    } else if mime.starts_with("text/plain") {
        json_query(data).unwrap_or_else(|| binary(data))
    } else {
        binary(data)
    };
    query.chars().take(MAX_QUERY_LENGTH).collect()
}

/// A body that is not read as fields: base64 of it.
fn binary(data: &[u8]) -> String {
    format!("__wb_post_data={}", data_encoding::BASE64.encode(data))
}

/// Python's `unquote_plus`: `+` is a space, `%XX` a byte, bytes read as UTF-8 (replaced
/// where they are not).
pub fn unquote_plus(s: &str) -> String {
    let s = s.replace('+', " ");
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).and_then(|&c| hex(c)), b.get(i + 2).and_then(|&c| hex(c))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Python's `quote_plus` of UTF-8 bytes: letters, digits and `_.-~` kept, space as `+`.
pub fn quote_plus(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for &c in b {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(c as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{c:02X}")),
        }
    }
    out
}

/// Python's `urlencode` of (name, value) pairs.
fn urlencode(pairs: &[(String, Vec<u8>)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", quote_plus(k.as_bytes()), quote_plus(v)))
        .collect();
    parts.join("&")
}

/// The fields of a multipart body: a text part's value, a file part's bytes.
fn multipart_query(data: &[u8], boundary: &str) -> String {
    let delimiter = format!("--{boundary}");
    let mut pairs = Vec::new();
    let mut parts = memchr::memmem::find_iter(data, delimiter.as_bytes()).peekable();
    while let Some(start) = parts.next() {
        let Some(&next) = parts.peek() else { break };
        let part = &data[start + delimiter.len()..next];
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let Some(split) = memchr::memmem::find(part, b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&part[..split]);
        let Some(name) = disposition_param(&head, "name") else { continue };
        let value = part[split + 4..].to_vec();
        let value = match disposition_param(&head, "filename") {
            Some(_) => value,
            None => String::from_utf8_lossy(&value).into_owned().into_bytes(),
        };
        pairs.push((name, value));
    }
    urlencode(&pairs)
}

/// A parameter of a part's `Content-Disposition`, unquoted.
fn disposition_param(head: &str, param: &str) -> Option<String> {
    let line = head.lines().find(|l| {
        l.split_once(':').is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("content-disposition"))
    })?;
    let (_, value) = line.split_once(':')?;
    value.split(';').skip(1).find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        let v = v.trim();
        let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(v);
        k.trim().eq_ignore_ascii_case(param).then(|| v.replace("\\\"", "\""))
    })
}

/// A JSON body as a query (cdxj-indexer's `json_parse`): every scalar under its nearest
/// member name; a body of several JSON lines read line by line. `None` when it does not parse.
fn json_query(data: &[u8]) -> Option<String> {
    let mut fields = Fields::default();
    match serde_json::from_slice::<Py>(data) {
        Ok(v) => fields.walk(&v, ""),
        Err(_) if data.contains(&b'\n') => {
            for line in data.split(|&b| b == b'\n') {
                fields.walk(&serde_json::from_slice::<Py>(line).ok()?, "");
            }
        }
        Err(_) => return None,
    }
    let pairs: Vec<(String, Vec<u8>)> =
        fields.pairs.into_iter().map(|(k, v)| (k, v.into_bytes())).collect();
    Some(urlencode(&pairs))
}

/// The fields gathered from JSON, in Python's dict order.
#[derive(Default)]
struct Fields {
    pairs: Vec<(String, String)>,
    at: HashMap<String, usize>,
    dupes: HashMap<String, u32>,
}

impl Fields {
    fn walk(&mut self, v: &Py, name: &str) {
        match v {
            Py::Obj(members) => members.iter().for_each(|(n, v)| self.walk(v, n)),
            Py::List(items) => items.iter().for_each(|v| self.walk(v, name)),
            Py::Scalar(s) if !name.is_empty() => self.set(name, s),
            Py::Scalar(_) => {}
        }
    }

    /// `data[get_key(name)] = value`: a name seen before becomes `name.N_`.
    fn set(&mut self, name: &str, value: &str) {
        let key = if self.at.contains_key(name) {
            let n = self.dupes.entry(name.to_string()).or_insert(1);
            *n += 1;
            format!("{name}.{n}_")
        } else {
            name.to_string()
        };
        match self.at.get(&key) {
            Some(&i) => self.pairs[i].1 = value.to_string(),
            None => {
                self.at.insert(key.clone(), self.pairs.len());
                self.pairs.push((key, value.to_string()));
            }
        }
    }
}

/// A JSON value as Python holds it: objects in order (a repeated member keeps its first place
/// and its last value), scalars as `str()` writes them.
enum Py {
    Obj(Vec<(String, Py)>),
    List(Vec<Py>),
    Scalar(String),
}

impl<'de> serde::Deserialize<'de> for Py {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Py, D::Error> {
        d.deserialize_any(PyVisitor)
    }
}

struct PyVisitor;

impl<'de> serde::de::Visitor<'de> for PyVisitor {
    type Value = Py;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Py, E> {
        Ok(Py::Scalar(if v { "True" } else { "False" }.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Py, E> {
        Ok(Py::Scalar(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Py, E> {
        Ok(Py::Scalar(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Py, E> {
        Ok(Py::Scalar(py_float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Py, E> {
        Ok(Py::Scalar(v.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Py, E> {
        Ok(Py::Scalar("None".into()))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Py, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Py::List(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Py, A::Error> {
        let mut members: Vec<(String, Py)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Py>()? {
            match members.iter_mut().find(|(n, _)| *n == k) {
                Some(slot) => slot.1 = v,
                None => members.push((k, v)),
            }
        }
        Ok(Py::Obj(members))
    }
}

/// Python's `repr()` of a float: the shortest digits that read back, positional for
/// exponents from -4 to 15, else `d.ddde+XX`.
pub fn py_float(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// Pairs each request with the response next to it as cdxj-indexer does (the records taken
/// two by two, a pair's records never paired again), keying a POST or PUT response by its
/// method key, and hands the entries on in the records' order, one record late.
#[derive(Debug, Default)]
pub struct Pairer {
    prev: Option<Seen>,
}

impl Pairer {
    /// Takes the next record; hands on the entries now settled.
    pub fn push(
        &mut self,
        seen: Seen,
        emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some(prev) = self.prev.take() else {
            self.prev = Some(seen);
            return Ok(());
        };
        if !concurrent(&prev, &seen) {
            self.prev = Some(seen);
            return hand_on(prev, emit);
        }
        let (mut first, mut second) = (prev, seen);
        let (request, response) = match first.warc_type.as_str() {
            "request" => (&first, &mut second),
            _ => (&second, &mut first),
        };
        if let (Some(mq), Some(entry)) = (&request.method, &mut response.entry) {
            keyed_by_method(entry, request.uri.as_deref().unwrap_or_default(), mq);
        }
        hand_on(first, emit)?;
        hand_on(second, emit)
    }

    /// Whether `next` would pair with the record held (a file split between threads is read
    /// on in order where a pair falls across a split).
    pub fn pairs_with(&self, next: &Seen) -> bool {
        self.prev.as_ref().is_some_and(|prev| concurrent(prev, next))
    }

    /// Hands on the last record's entry: the records have ended.
    pub fn finish(&mut self, emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>) -> io::Result<()> {
        match self.prev.take() {
            Some(prev) => hand_on(prev, emit),
            None => Ok(()),
        }
    }
}

fn hand_on(seen: Seen, emit: &mut dyn FnMut(IndexEntry) -> io::Result<()>) -> io::Result<()> {
    match seen.entry {
        Some(e) => emit(e),
        None => Ok(()),
    }
}

/// Whether `second` is the request or response of `first` (cdxj-indexer's
/// `concur_req_resp`, absent fields compared as Python compares `None`).
fn concurrent(first: &Seen, second: &Seen) -> bool {
    let types = (first.warc_type.as_str(), second.warc_type.as_str());
    matches!(types, ("request", "response") | ("response", "request"))
        && first.uri == second.uri
        && second.concurrent_to == first.id
}

/// Keys `entry` by `url` and the request's method and query, with the `requestBody` and
/// `method` fields cdxj-indexer adds.
fn keyed_by_method(entry: &mut IndexEntry, url: &str, mq: &MethodQuery) {
    let mut key_url =
        format!("{url}{}__wb_method={}", if url.contains('?') { '&' } else { '?' }, mq.written);
    if let Some(q) = mq.query.as_deref().filter(|q| !q.is_empty()) {
        key_url.push('&');
        key_url.push_str(q);
    }
    entry.key = super::surt::surt(&key_url);
    let mut body = String::new();
    match &mq.query {
        Some(q) => json_string(&mut body, q),
        None => body.push_str("null"),
    }
    entry.extra.push(("requestBody".to_string(), body));
    let mut method = String::new();
    json_string(&mut method, &mq.written.to_ascii_uppercase());
    entry.extra.push(("method".to_string(), method));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(method: &str, ct: &str, len: Option<&str>) -> RequestHead {
        RequestHead {
            method: method.into(),
            content_type: Some(ct.into()),
            content_length: len.map(Into::into),
        }
    }

    fn query(method: &str, ct: &str, body: &[u8]) -> Option<String> {
        let len = body.len().to_string();
        method_query(&head(method, ct, Some(&len)), &mut &body[..]).unwrap()?.query
    }

    /// Each kind of body becomes the query cdxj-indexer makes of it (values from running
    /// `cdxj_indexer.postquery.query_extract` on the same bytes).
    #[test]
    fn bodies_become_queries_as_cdxj_indexer_makes_them() {
        let form = "application/x-www-form-urlencoded";
        assert_eq!(query("POST", form, b"a=1+2&b=%C3%A9%zz").as_deref(), Some("a=1 2&b=é%zz"));
        let json = br#"{"a": 1, "b": [true, null, 1.5e-7, 1e16, 2.0], "c": {"a": "x y"}}"#;
        assert_eq!(
            query("PUT", "application/json", json).as_deref(),
            Some("a=1&b=True&b.2_=None&b.3_=1.5e-07&b.4_=1e%2B16&b.5_=2.0&a.2_=x+y")
        );
        assert_eq!(query("POST", "application/json", b"{no").as_deref(), Some(""));
        assert_eq!(query("POST", "text/plain", b"{no").as_deref(), Some("__wb_post_data=e25v"));
        assert_eq!(query("POST", "image/png", b"\x00\xff").as_deref(), Some("__wb_post_data=AP8="));
        let mp = b"--XX\r\nContent-Disposition: form-data; name=\"t\"\r\n\r\na b~*\r\n--XX\r\n\
Content-Disposition: form-data; name=\"f\"; filename=\"x.bin\"\r\n\r\n\x01\xfe\r\n--XX--\r\n";
        assert_eq!(
            query("POST", "multipart/form-data; boundary=XX", mp).as_deref(),
            Some("t=a+b~%2A&f=%01%FE")
        );
    }

    /// GET is not keyed by method; a bad length keys by method alone; long queries are cut.
    #[test]
    fn methods_lengths_and_cuts() {
        assert_eq!(method_query(&head("GET", "", Some("0")), &mut &b""[..]).unwrap(), None);
        let bad = method_query(&head("post", "", Some("x")), &mut &b""[..]).unwrap().unwrap();
        assert_eq!(bad, MethodQuery { written: "post".into(), query: None });
        let long = vec![b'a'; 10_000];
        let q = query("POST", "application/x-www-form-urlencoded", &long).unwrap();
        assert_eq!(q.chars().count(), MAX_QUERY_LENGTH);
    }

    /// Python's float repr.
    #[test]
    fn floats_as_python_writes_them() {
        for (v, s) in [(0.1, "0.1"), (1e16, "1e+16"), (1e15, "1000000000000000.0"), (-0.0, "-0.0")]
        {
            assert_eq!(py_float(v), s);
        }
        assert_eq!(py_float(0.0001), "0.0001");
        assert_eq!(py_float(0.00001), "1e-05");
        assert_eq!(py_float(123.456), "123.456");
    }

    fn seen(t: &str, id: &str, to: Option<&str>, entry: bool) -> Seen {
        Seen {
            warc_type: t.into(),
            id: Some(id.into()),
            concurrent_to: to.map(Into::into),
            uri: Some("http://e.org/p".into()),
            entry: entry.then(|| IndexEntry { key: "org,e)/p".into(), ..IndexEntry::default() }),
            method: (t == "request")
                .then(|| MethodQuery { written: "POST".into(), query: Some("a=1".into()) }),
        }
    }

    fn run(records: Vec<Seen>) -> Vec<IndexEntry> {
        let mut out = Vec::new();
        let mut emit = |e| {
            out.push(e);
            Ok(())
        };
        let mut p = Pairer::default();
        for s in records {
            p.push(s, &mut emit).unwrap();
        }
        p.finish(&mut emit).unwrap();
        out
    }

    /// A response after or before its request is keyed by method; one not next to it is not.
    #[test]
    fn pairs_are_next_to_each_other_in_either_order() {
        let after =
            run(vec![seen("request", "r", None, false), seen("response", "s", Some("r"), true)]);
        assert_eq!(after[0].key, "org,e)/p?__wb_method=post&a=1");
        assert_eq!(after[0].extra.len(), 2);
        let before =
            run(vec![seen("response", "s", None, true), seen("request", "r", Some("s"), false)]);
        assert_eq!(before[0].key, "org,e)/p?__wb_method=post&a=1");
        let apart = run(vec![
            seen("request", "r", None, false),
            seen("metadata", "m", None, false),
            seen("response", "s", Some("r"), true),
        ]);
        assert_eq!(apart[0].key, "org,e)/p");
    }
}
