//! Record descriptions spilled to a temporary file while a container is written, so they can be
//! read back (twice if need be) once the container has been scanned, without holding them all.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};

use crate::model::{ByteRange, ContentFile, RecordFile};
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
        writeln!(
            self.out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            clean(&r.record_id),
            r.member.begin,
            r.member.len,
            r.compressed as u8,
            r.content.is_some() as u8,
            cb,
            cl,
            sha,
            mime,
            verdict
        )?;
        self.count += 1;
        Ok(())
    }

    /// Reads the records back in order, calling `f` for each.
    pub fn for_each(
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
