//! Framing: where an ARC record starts and its body ends. The blank lines between records,
//! a header line that is no header (a remainder up to the next header), and the body-end
//! heuristics: the declared length when a record boundary follows it, whitespace padding
//! after it, else the next header or the end of the data.

use super::header_line::{find_header, header_length_field, preview};
use super::line::Line;
use super::*;
use crate::formats::http;

impl ArcReader {
    /// Reads the blank lines before the next record and judges their count against the one
    /// expected (one after a record, none after a filedesc or padding). At the segment's end
    /// reports how it ended there and returns `None`; else where the next record starts.
    pub(super) fn separators(
        &mut self,
        anomalies: &mut Vec<Anomaly>,
    ) -> Result<Option<u64>, ArcError> {
        let Some(seg) = self.seg.as_ref() else { return Ok(None) };
        let (data, start) = (&seg.data, seg.pos);
        let mut blanks = Blanks { start, end: start, newlines: 0, expected: 0 };
        while blanks.end < data.len() {
            let pos = blanks.end;
            match data.byte_at(pos).map_err(|e| self.io_err(pos, e))? {
                Some(b'\n') => {
                    blanks.newlines += 1;
                    blanks.end += 1;
                }
                Some(b'\r') if data.byte_at(pos + 1).ok().flatten() == Some(b'\n') => {
                    blanks.end += 1
                }
                _ => break,
            }
        }
        blanks.expected = seg.expected_separators;
        let (member, len, records) = (seg.member, data.len(), seg.records);
        self.account.separator_bytes += blanks.end - start;
        if blanks.end < len {
            anomalies.extend(blanks.before_record(member));
            return Ok(Some(blanks.end));
        }
        let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, len)) };
        seg.pos = len;
        if let Some(a) = blanks.at_end(member, records) {
            self.file_anomaly(a);
        }
        Ok(None)
    }

    /// What starts at `at` is not a record header (`line` is its first line): everything up
    /// to the next header, or the segment's end, is kept as a remainder record.
    pub(super) fn remainder(
        &mut self,
        data: &Segment,
        at: Location,
        line: &Line,
        mut anomalies: Vec<Anomaly>,
    ) -> Result<ArcRecord, ArcError> {
        let pos = at.offset;
        let next = find_header(data, pos + 1, self.version).map_err(|e| self.io_err(pos, e))?;
        let end = next.unwrap_or(data.len());
        let why = if line.complete {
            String::new()
        } else {
            format!("; no line end within {MAX_HEADER_LINE} bytes, so no header line")
        };
        anomalies.push(Anomaly {
            location: at,
            kind: AnomalyKind::Garbage,
            severity: Severity::Error,
            detail: format!(
                "{} bytes that are not an ARC record (starting {:?}) kept as a remainder{why}",
                end - pos,
                preview(&line.text)
            ),
        });
        self.account.record_bytes += end - pos;
        let rebuild = self.frame_record(data, pos, None, end, end)?;
        let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, pos)) };
        seg.pos = end;
        seg.expected_separators = 0;
        Ok(ArcRecord {
            kind: RecordKind::Remainder,
            header: None,
            location: at,
            header_len: 0,
            body_start: pos,
            body_end: end,
            anomalies,
            truncated: false,
            rebuild,
            raw: false,
        })
    }

    /// Judges where a record header at `at` stands in the file: a filedesc comes first and
    /// only there, and a gzip member holds one record (`earlier_records` came before it in
    /// this one).
    pub(super) fn judge_placement(
        &mut self,
        is_filedesc: bool,
        at: Location,
        earlier_records: u64,
        anomalies: &mut Vec<Anomaly>,
    ) {
        if !self.seen_header && !is_filedesc {
            self.file_anomaly(Anomaly {
                location: at,
                kind: AnomalyKind::NoFiledesc,
                severity: Severity::Warning,
                detail: "the file does not start with a filedesc:// version block".into(),
            });
        } else if self.seen_header && is_filedesc {
            anomalies.push(Anomaly {
                location: at,
                kind: AnomalyKind::FiledescNotFirst,
                severity: Severity::Warning,
                detail: "a filedesc:// record in the middle of the file".into(),
            });
        }
        if earlier_records > 0 && at.member.is_some() {
            anomalies.push(Anomaly {
                location: at,
                kind: AnomalyKind::MultipleRecordsPerMember,
                severity: Severity::Info,
                detail: "more than one record in this gzip member".into(),
            });
        }
        self.seen_header = true;
    }

    /// Moves past a record framed from `pos` to `body_end`: the bytes are accounted for, and
    /// the next record is looked for after them, or after the whitespace padding that ends
    /// at `padding_end` (which stands for the separator).
    pub(super) fn advance_past(
        &mut self,
        pos: u64,
        body_end: u64,
        padding_end: Option<u64>,
        is_filedesc: bool,
    ) -> Result<(), ArcError> {
        self.account.record_bytes += body_end - pos;
        let Some(seg) = self.seg.as_mut() else { return Err(lost_segment(&self.path, pos)) };
        seg.pos = body_end;
        seg.expected_separators = if is_filedesc { 0 } else { 1 };
        seg.records += 1;
        if let Some(p) = padding_end {
            // The padding stands for the separator: skipped here, so the next record's
            // blank-line count does not see it.
            seg.pos = p;
            seg.expected_separators = 0;
            self.account.separator_bytes += p - body_end;
            self.account.padding_bytes += p - body_end;
        }
        Ok(())
    }

    /// Decides where a record's body ends: at its declared length when what follows is a
    /// record boundary or whitespace padding up to one, else at the next record header (the
    /// length was wrong), else at the end of the data (truncated).
    pub(super) fn find_body_end(
        &self,
        body_start: u64,
        header: &ArcHeader,
        is_filedesc: bool,
        anomalies: &mut Vec<Anomaly>,
        record_pos: u64,
    ) -> io::Result<BodyEnd> {
        let Some(seg) = self.seg.as_ref() else {
            return Err(lost_segment(&self.path, record_pos).source);
        };
        let data = &seg.data;
        let loc = Location { member: seg.member, offset: record_pos };
        // A body that runs to the next header (or the data's end) gives it one line end, the
        // separator: CR LF is one line end where the block is text (the filedesc) or the line
        // ends were converted (the header line ends with CR LF), never split to leave a lone
        // CR. After a binary body in an LF file a CR may be the body's last byte, and stays.
        let crlf = is_filedesc || ends_with_crlf(data, body_start)?;
        let scan = BodyScan { data, body_start, loc, crlf };
        let declared = header.declared_length;
        if let Some(l) = declared {
            let e = body_start.saturating_add(l);
            if e <= data.len() && self.is_boundary(data, e)? {
                return Ok(BodyEnd::at(e));
            }
        }
        let next = find_header(data, body_start, self.version)?;
        let Some(l) = declared else { return scan.unparsed_length(header, next, anomalies) };
        if let Some(padded) = scan.padding_after(l, next, anomalies)? {
            return Ok(padded);
        }
        scan.wrong_length(l, next, is_filedesc, anomalies)
    }

    /// True when position `e` is a plausible record end: the data ends there, or blank lines
    /// and then a record header (or the end) follow.
    pub(super) fn is_boundary(&self, data: &Segment, e: u64) -> io::Result<bool> {
        let len = data.len();
        let mut pos = e;
        let mut lines = 0;
        while pos < len && lines < 16 {
            match data.byte_at(pos)? {
                Some(b'\n') => {
                    pos += 1;
                    lines += 1;
                }
                Some(b'\r') if data.byte_at(pos + 1)? == Some(b'\n') => pos += 1,
                _ => break,
            }
        }
        if pos >= len {
            return Ok(true);
        }
        let line = read_line_at(data, pos, MAX_HEADER_LINE)?;
        Ok(line
            .candidate()
            .is_some_and(|t| parse_header_line(t, self.version, Mode::Boundary).is_ok()))
    }
}

/// A run of blank lines between records, and how many were expected there.
struct Blanks {
    start: u64,
    end: u64,
    newlines: u64,
    expected: u64,
}

impl Blanks {
    /// Too many or too few blank lines before a record.
    fn before_record(&self, member: Option<u64>) -> Option<Anomaly> {
        let (newlines, expected) = (self.newlines, self.expected);
        let (offset, kind, detail) = if newlines > expected {
            let detail =
                format!("{newlines} blank lines before the record where {expected} expected");
            (self.start, AnomalyKind::ExtraBlankLines, detail)
        } else if newlines < expected {
            let detail = "no blank line between the previous record and this one".to_string();
            (self.end, AnomalyKind::MissingSeparator, detail)
        } else {
            return None;
        };
        Some(Anomaly {
            location: Location { member, offset },
            kind,
            severity: Severity::Info,
            detail,
        })
    }

    /// Too many blank lines at the segment's end, or none after its last record.
    fn at_end(&self, member: Option<u64>, records: u64) -> Option<Anomaly> {
        let (newlines, expected) = (self.newlines, self.expected);
        let (kind, detail) = if newlines > expected {
            let detail = format!("{newlines} blank lines at the end where {expected} expected");
            (AnomalyKind::ExtraBlankLines, detail)
        } else if newlines < expected && records > 0 {
            (AnomalyKind::MissingSeparator, "no blank line after the last record".to_string())
        } else {
            return None;
        };
        let location = Location { member, offset: self.start };
        Some(Anomaly { location, kind, severity: Severity::Info, detail })
    }
}

/// Where a record's body ends, as framing decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BodyEnd {
    pub(super) end: u64,
    /// The data ends before the declared length.
    pub(super) truncated: bool,
    /// Where whitespace padding after the body stops (it stands for the separator).
    pub(super) padding_end: Option<u64>,
}

impl BodyEnd {
    fn at(end: u64) -> Self {
        BodyEnd { end, truncated: false, padding_end: None }
    }
}

/// A body being framed: its data, where it starts, its record's place (for anomalies), and
/// whether its separator is CR LF.
struct BodyScan<'a> {
    data: &'a Segment,
    body_start: u64,
    loc: Location,
    crlf: bool,
}

impl BodyScan<'_> {
    /// Where the separator before `stop` starts.
    fn before_separator(&self, stop: u64) -> io::Result<u64> {
        separator_start(self.data, self.body_start, stop, self.crlf)
    }

    /// The end when no header follows: the data's end, less one separator line end.
    fn end_of_data(&self) -> io::Result<u64> {
        self.before_separator(self.data.len())
    }

    fn in_member(&self) -> bool {
        self.loc.member.is_some()
    }

    /// No length parses: the body runs to the next header, or the data's end.
    fn unparsed_length(
        &self,
        header: &ArcHeader,
        next: Option<u64>,
        anomalies: &mut Vec<Anomaly>,
    ) -> io::Result<BodyEnd> {
        let end = self.before_separator(next.unwrap_or(self.data.len()))?;
        anomalies.push(Anomaly {
            location: self.loc,
            kind: AnomalyKind::BadLength,
            severity: Severity::Warning,
            detail: format!(
                "length {:?} does not parse; the record ends where the next one starts ({} bytes)",
                header_length_field(&header.raw_line),
                end - self.body_start
            ),
        });
        Ok(BodyEnd::at(end))
    }

    /// The declared length `l` ends the body when only whitespace padding stands between it
    /// and the next header (or the data's end): the padding stands for the separator.
    fn padding_after(
        &self,
        l: u64,
        next: Option<u64>,
        anomalies: &mut Vec<Anomaly>,
    ) -> io::Result<Option<BodyEnd>> {
        let (e, len) = (self.body_start.saturating_add(l), self.data.len());
        if e >= len || matches!(next, Some(n) if n <= e) {
            return Ok(None);
        }
        let stop = next.unwrap_or(len);
        let Some(pad) = whitespace_padding(self.data, e, stop)? else { return Ok(None) };
        anomalies.push(Anomaly {
            location: Location { member: self.loc.member, offset: e },
            kind: AnomalyKind::WhitespacePadding,
            severity: Severity::Info,
            detail: format!(
                "{} bytes of whitespace padding ({}) after the declared length {l}, at \
                 offset {e}{}: kept as a separator, not in the payload",
                stop - e,
                pad,
                if self.in_member() { " of the gzip member" } else { "" }
            ),
        });
        Ok(Some(BodyEnd { end: e, truncated: false, padding_end: Some(stop) }))
    }

    /// The declared length `l` is no record boundary: the body ends before the next header,
    /// or at the data's end (truncated when the length runs past it).
    fn wrong_length(
        &self,
        l: u64,
        next: Option<u64>,
        is_filedesc: bool,
        anomalies: &mut Vec<Anomaly>,
    ) -> io::Result<BodyEnd> {
        let (e, len) = (self.body_start.saturating_add(l), self.data.len());
        let end = match next {
            Some(n) if n <= e => self.before_separator(n)?,
            // Quirk: the ARC length overruns the file, but the HTTP Content-Length says the
            // body is whole: the length was wrong (line ends converted after writing, a URL
            // edited by hand), not the record cut short.
            _ if e > len
                && http_body_complete(self.data, self.body_start, self.end_of_data()?)? =>
            {
                self.end_of_data()?
            }
            _ if e > len => return Ok(self.truncated(l, anomalies)),
            // The record is complete as declared; what follows its separator is garbage and
            // becomes a remainder record of its own.
            _ if self.data.byte_at(e)? == Some(b'\n') && !is_filedesc => return Ok(BodyEnd::at(e)),
            Some(n) => self.before_separator(n)?,
            None => self.end_of_data()?,
        };
        anomalies.push(Anomaly {
            location: self.loc,
            kind: AnomalyKind::LengthMismatch,
            severity: Severity::Warning,
            detail: format!(
                "declared length {l}, but the record ends after {} bytes",
                end - self.body_start
            ),
        });
        Ok(BodyEnd::at(end))
    }

    /// The declared length runs past the data: the record was cut short.
    fn truncated(&self, l: u64, anomalies: &mut Vec<Anomaly>) -> BodyEnd {
        let len = self.data.len();
        anomalies.push(Anomaly {
            location: self.loc,
            kind: AnomalyKind::Truncated,
            severity: Severity::Error,
            detail: format!(
                "declared length {l}, but only {} bytes remain{}",
                len - self.body_start,
                if self.in_member() { " in the gzip member" } else { " in the file" }
            ),
        });
        BodyEnd { end: len, truncated: true, padding_end: None }
    }
}

/// True when the line ending at `pos` (the bytes just before it) ends with CR LF.
pub(super) fn ends_with_crlf(data: &Segment, pos: u64) -> io::Result<bool> {
    Ok(pos >= 2 && data.byte_at(pos - 2)? == Some(b'\r') && data.byte_at(pos - 1)? == Some(b'\n'))
}

/// Where the separator before `stop` starts, for a body from `body_start`: one line end (LF,
/// or CR LF when `crlf`) taken off, never reaching into the header line.
pub(super) fn separator_start(
    data: &Segment,
    body_start: u64,
    stop: u64,
    crlf: bool,
) -> io::Result<u64> {
    if stop <= body_start || data.byte_at(stop - 1)? != Some(b'\n') {
        return Ok(stop.max(body_start));
    }
    if crlf && stop - 1 > body_start && data.byte_at(stop - 2)? == Some(b'\r') {
        return Ok(stop - 2);
    }
    Ok(stop - 1)
}

/// When `start..stop` holds only spaces, tabs, CR and LF, and is not just blank lines (which
/// the separator logic handles), a description of it (`"3 spaces, 1 CR, 1 LF"`).
pub(super) fn whitespace_padding(
    data: &Segment,
    start: u64,
    stop: u64,
) -> io::Result<Option<String>> {
    let mut counts = [0u64; 4]; // spaces, tabs, CR, LF
    let mut lone_cr_or_blank = false;
    let mut prev_cr = false;
    let mut chunk = vec![0u8; 64 * 1024];
    let mut at = start;
    while at < stop {
        let want = ((stop - at) as usize).min(chunk.len());
        let n = data.read_full_at(at, &mut chunk[..want])?;
        if n == 0 {
            return Ok(None);
        }
        for &b in &chunk[..n] {
            match b {
                b' ' => counts[0] += 1,
                b'\t' => counts[1] += 1,
                b'\r' => counts[2] += 1,
                b'\n' => counts[3] += 1,
                _ => return Ok(None),
            }
            if (prev_cr && b != b'\n') || b == b' ' || b == b'\t' {
                lone_cr_or_blank = true;
            }
            prev_cr = b == b'\r';
        }
        at += n as u64;
    }
    if prev_cr {
        lone_cr_or_blank = true;
    }
    if !lone_cr_or_blank {
        return Ok(None);
    }
    let names = ["spaces", "tabs", "CR", "LF"];
    let parts: Vec<String> = counts
        .iter()
        .zip(names)
        .filter(|(c, _)| **c > 0)
        .map(|(c, name)| format!("{c} {name}"))
        .collect();
    Ok(Some(parts.join(", ")))
}

/// True when `start..end` holds an HTTP response whose body has exactly its Content-Length.
pub(super) fn http_body_complete(data: &Segment, start: u64, end: u64) -> io::Result<bool> {
    let mut head = vec![0u8; (end - start).min(64 * 1024) as usize];
    let n = data.read_full_at(start, &mut head)?;
    head.truncate(n);
    Ok(match http::response_head(&head) {
        http::HttpHead::Complete(h) => {
            http::content_length(&head[..h]).is_some_and(|cl| h as u64 + cl == end - start)
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "http://e.org/ 1.2.3.4 20200101000000 text/plain";

    /// Each record's body, its anomalies' kinds, and whether it is truncated.
    fn framed(arc: &str) -> Vec<(String, Vec<AnomalyKind>, bool)> {
        let mut r = ArcReader::from_reader(arc.as_bytes(), "t.arc").unwrap();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            let mut body = Vec::new();
            r.body_reader(&rec).read_to_end(&mut body).unwrap();
            let kinds = rec.anomalies.iter().map(|a| a.kind).collect();
            out.push((String::from_utf8(body).unwrap(), kinds, rec.truncated));
        }
        out
    }

    fn body(
        text: &str,
        kinds: &[AnomalyKind],
        truncated: bool,
    ) -> (String, Vec<AnomalyKind>, bool) {
        (text.to_string(), kinds.to_vec(), truncated)
    }

    #[test]
    fn blank_lines_are_counted_against_the_one_expected() {
        let got = framed(&format!("{H} 5\nhello\n\n\n{H} 3\nbye\n"));
        assert_eq!(got[1], body("bye", &[AnomalyKind::ExtraBlankLines], false));
        let mut r = ArcReader::from_reader(format!("{H} 5\nhello").as_bytes(), "t.arc").unwrap();
        while r.next_record().unwrap().is_some() {}
        let kinds: Vec<AnomalyKind> = r.file_anomalies().iter().map(|a| a.kind).collect();
        assert!(kinds.contains(&AnomalyKind::MissingSeparator), "{kinds:?}");
    }

    #[test]
    fn a_true_length_ends_the_body() {
        let got = framed(&format!("{H} 5\nhello\n{H} 3\nbye\n"));
        assert_eq!(got, [body("hello", &[], false), body("bye", &[], false)]);
    }

    #[test]
    fn a_wrong_length_ends_the_body_before_the_next_header() {
        let got = framed(&format!("{H} 3\nhello\n{H} 3\nbye\n"));
        assert_eq!(got[0], body("hello", &[AnomalyKind::LengthMismatch], false));
        let got = framed(&format!("{H} abc\nhello\n{H} 3\nbye\n"));
        assert_eq!(got[0], body("hello", &[AnomalyKind::BadLength], false));
        assert_eq!(got[1], body("bye", &[], false));
    }

    #[test]
    fn a_length_past_the_data_is_a_truncated_record() {
        let got = framed(&format!("{H} 50\nhello\n"));
        assert_eq!(got, [body("hello\n", &[AnomalyKind::Truncated], true)]);
    }

    #[test]
    fn whitespace_after_the_length_is_padding_not_payload() {
        let got = framed(&format!("{H} 5\nhello  \n\n{H} 3\nbye\n"));
        assert_eq!(got[0], body("hello", &[AnomalyKind::WhitespacePadding], false));
        assert_eq!(got[1], body("bye", &[], false));
    }

    #[test]
    fn bytes_after_a_complete_record_are_a_remainder() {
        let mut r =
            ArcReader::from_reader(format!("{H} 5\nhello\ngarbage").as_bytes(), "t.arc").unwrap();
        let first = r.next_record().unwrap().unwrap();
        assert_eq!((first.kind, first.body_len()), (RecordKind::Capture, 5));
        let rest = r.next_record().unwrap().unwrap();
        assert_eq!((rest.kind, rest.body_len()), (RecordKind::Remainder, 7));
        assert!(r.next_record().unwrap().is_none());
        assert!(r.byte_account().balanced(false));
    }
}
