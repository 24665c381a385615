//! Record descriptions spilled to a temporary file while a container is written, so they can be
//! read back (twice if need be) once the container has been scanned, without holding them all.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};

use crate::model::{ByteRange, ContentFile, RecordFile, UrlCapture};
use crate::stages::scan::ScanResult;

/// A container's record descriptions, in order, one tab-separated line each.
pub(crate) struct RecordSpill {
    out: BufWriter<File>,
    count: u64,
}

impl RecordSpill {
    pub fn new() -> io::Result<Self> {
        Ok(RecordSpill { out: BufWriter::new(tempfile::tempfile()?), count: 0 })
    }

    /// Appends a record, with its scan verdict when it was scanned on the way in.
    pub fn push(&mut self, r: &RecordFile, verdict: Option<&ScanResult>) -> io::Result<()> {
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        let (cb, cl, sha, mime) = match &r.content {
            Some(c) => (c.range.begin, c.range.len, c.sha512.clone(), clean(&c.mime)),
            None => (0, 0, String::new(), String::new()),
        };
        let verdict = match verdict {
            None => String::new(),
            Some(ScanResult::Clean) => "C".into(),
            Some(ScanResult::Infected(sig)) => format!("I{}", clean(sig)),
            Some(ScanResult::NotScanned(why)) => format!("N{}", clean(why)),
        };
        // The URI is escaped, not cleaned: it must come back exactly to match a described page.
        let (uri, date) = match &r.capture {
            Some(c) => (
                escape(&c.uri),
                format!("{}{}", clean(&c.date), if c.date_inferred { "~" } else { "" }),
            ),
            None => (String::new(), String::new()),
        };
        writeln!(
            self.out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            clean(&r.record_id),
            r.member.begin,
            r.member.len,
            r.compressed as u8,
            r.content.is_some() as u8,
            cb,
            cl,
            sha,
            mime,
            verdict,
            uri,
            date
        )?;
        self.count += 1;
        Ok(())
    }

    /// Reads the records back in order, calling `f` for each.
    pub(crate) fn for_each(
        &mut self,
        mut f: impl FnMut(u64, RecordFile, Option<ScanResult>) -> io::Result<()>,
    ) -> io::Result<()> {
        self.out.flush()?;
        let file = self.out.get_mut();
        file.seek(SeekFrom::Start(0))?;
        let mut r = BufReader::new(file.try_clone()?);
        let mut line = String::new();
        let mut i = 0;
        loop {
            line.clear();
            if r.read_line(&mut line)? == 0 {
                break;
            }
            let c: Vec<&str> = line.trim_end_matches('\n').split('\t').collect();
            let num = |k: usize| c.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            let rec = RecordFile {
                record_id: c.first().unwrap_or(&"").to_string(),
                member: ByteRange { begin: num(1), len: num(2) },
                compressed: num(3) == 1,
                content: (num(4) == 1).then(|| ContentFile {
                    range: ByteRange { begin: num(5), len: num(6) },
                    sha512: c.get(7).unwrap_or(&"").to_string(),
                    mime: c.get(8).unwrap_or(&"").to_string(),
                }),
                described: None,
                page: None,
                capture: c.get(10).filter(|u| !u.is_empty()).map(|u| {
                    // An inferred date is written with a trailing `~`.
                    let d = c.get(11).unwrap_or(&"");
                    UrlCapture {
                        uri: unescape(u),
                        date: d.trim_end_matches('~').to_string(),
                        date_inferred: d.ends_with('~'),
                    }
                }),
            };
            let verdict = c.get(9).and_then(|v| {
                let (kind, text) = v.split_at(v.len().min(1));
                match kind {
                    "C" => Some(ScanResult::Clean),
                    "I" => Some(ScanResult::Infected(text.to_string())),
                    "N" => Some(ScanResult::NotScanned(text.to_string())),
                    _ => None,
                }
            });
            f(i, rec, verdict)?;
            i += 1;
        }
        self.out.get_mut().seek(SeekFrom::End(0))?;
        Ok(())
    }
}

/// `%`, tab, CR and LF as `%25`, `%09`, `%0D`, `%0A`: one spill line, one field.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '%' => out.push_str("%25"),
            '\t' => out.push_str("%09"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i..i + 3).unwrap_or("");
        out.push(match code {
            "%09" => '\t',
            "%0D" => '\r',
            "%0A" => '\n',
            _ => '%',
        });
        rest = &rest[i + if code == "%09" || code == "%0D" || code == "%0A" || code == "%25" {
            3
        } else {
            1
        }..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_uri_comes_back_exactly() {
        let mut spill = RecordSpill::new().unwrap();
        for uri in ["http://a/b c\td%25e%09", "http://x/\r\n%"] {
            let r = RecordFile {
                record_id: "urn:uuid:1".into(),
                member: ByteRange { begin: 0, len: 10 },
                compressed: true,
                content: None,
                described: None,
                page: None,
                capture: Some(UrlCapture {
                    uri: uri.into(),
                    date: "2024-03-15T10:30:03Z".into(),
                    date_inferred: uri.ends_with('%'),
                }),
            };
            spill.push(&r, None).unwrap();
        }
        let mut back = Vec::new();
        spill
            .for_each(|_, r, _| {
                let c = r.capture.unwrap();
                back.push((c.uri, c.date, c.date_inferred));
                Ok(())
            })
            .unwrap();
        let d = || "2024-03-15T10:30:03Z".to_string();
        assert_eq!(
            back,
            [("http://a/b c\td%25e%09".into(), d(), false), ("http://x/\r\n%".into(), d(), true)]
        );
    }
}
