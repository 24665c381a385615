//! The migration report: what went in, what came out, what was odd, and the proof that every
//! payload byte was conserved. Printed for humans, serialized as JSON for machines.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::formats::arc::{Anomaly, AnomalyKind, ByteAccount, Severity};

/// Anomalies listed one by one per file; beyond this only their counts are kept, so a badly
/// damaged file cannot make the report (or memory) grow without bound.
pub const MAX_LISTED_ANOMALIES: usize = 1000;

/// The conservation check of one file: every payload read back from the WARC on disk compared
/// with the payload read from the ARC.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Conservation {
    /// WARC records read back and compared.
    pub records_compared: u64,
    /// Payload bytes read from the ARC.
    pub payload_bytes_in: u64,
    /// Payload bytes read back from the WARC (records derived from the ARC only).
    pub payload_bytes_out: u64,
    /// Every disagreement found (empty when conserved).
    pub mismatches: Vec<String>,
    /// True when every record's payload SHA-512 and size agree and the totals are equal.
    pub conserved: bool,
}

/// What happened to one input file.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FileReport {
    /// The ARC file.
    pub input: PathBuf,
    /// What PRONOM identification found in its payloads, when they were identified (the
    /// package's report and event say it; the migration report does not).
    #[serde(skip)]
    pub identified: crate::stages::identify::Tally,
    /// What deduplication wrote (in a package: its report and PREMIS event say it).
    #[serde(skip)]
    pub(crate) dedup: crate::stages::dedup::DedupTally,
    /// Its size in bytes.
    pub input_size: u64,
    /// Its SHA-512 (hex).
    pub input_sha512: String,
    /// True for gzip input.
    pub compressed: bool,
    /// ARC version from the filedesc record (`1` or `2`), when there was one.
    pub arc_version: Option<u8>,
    /// The format version the filedesc version block states ("1.0", "1.1", "2").
    pub arc_format_version: Option<String>,
    /// The WARC written (absent when the migration failed).
    pub output: Option<PathBuf>,
    /// Its size in bytes.
    pub output_size: u64,
    /// Its SHA-512 (hex).
    pub output_sha512: Option<String>,
    /// Records read from the ARC, by kind (`filedesc`, `http`, `dns`, `other`, `remainder`).
    pub records_in: BTreeMap<String, u64>,
    /// Records written, by WARC-Type.
    pub records_out: BTreeMap<String, u64>,
    /// Anomalies by kind.
    pub anomaly_counts: BTreeMap<String, u64>,
    /// Anomalies by severity.
    pub anomaly_severities: BTreeMap<String, u64>,
    /// The anomalies, with offsets (at most `MAX_LISTED_ANOMALIES`).
    pub anomalies: Vec<Anomaly>,
    /// Anomalies counted but not listed.
    pub anomalies_not_listed: u64,
    /// Where every byte of the input went (records, separators, gzip members, empty members,
    /// raw remainders): the totals balance the input size even when the anomalies are only
    /// counted.
    pub input_bytes: Option<ByteAccount>,
    /// Records whose `WARC-Date` is not their own, by where it came from (`previous-record`,
    /// `arc-header`, `file-name`, `capture-date`).
    pub date_sources: BTreeMap<String, u64>,
    /// The first of them (at most `MAX_DATE_EXAMPLES`), with offsets.
    pub inferred_dates: Vec<InferredDate>,
    /// The conservation check (of the output and the quarantine's container together).
    pub conservation: Conservation,
    /// Records written to the quarantine instead of the output (their payload is infected).
    #[serde(skip_serializing_if = "is_zero")]
    pub quarantined: u64,
    /// Quarantined records the cleaner made no clean copy of: (record id, why).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_cleaned: Vec<(String, String)>,
    /// The quarantine's viral container, when a record went there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantine: Option<QuarantineReport>,
    /// What the package keeps to rebuild the ARC (`docs/arc-rebuild.md`); absent when the
    /// migration failed or was run without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<ArcRebuildability>,
    /// Wall-clock seconds spent on this file.
    pub seconds: f64,
    /// Why the file could not be migrated, if it could not.
    pub error: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The viral container a migration wrote infected records to.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QuarantineReport {
    /// Its path.
    pub path: PathBuf,
    /// The infected records in it (besides its warcinfo record).
    pub records: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-512 (hex).
    pub sha512: String,
}

/// What a migration kept so that its ARC can be rebuilt.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ArcRebuildability {
    /// Length of the ARC's stream (the decompressed members and raw regions of an `.arc.gz`;
    /// the file itself otherwise).
    pub stream_length: u64,
    /// Its SHA-512 (hex).
    pub stream_sha512: String,
    /// True when everything needed to rebuild the stream is kept (in this package, and in
    /// the packages of `requires_packages`).
    pub rebuildable: bool,
    /// The packages (OBJIDs) holding the payloads the ARC's revisits leave out
    /// (deduplication): the ARC comes back only with them (`unmigrate --with`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires_packages: Vec<String>,
    /// Why not, when it is not (with offsets).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The deflate settings recovered for the gzip members (`zlib:6`), `?` when none
    /// reproduced the first members, absent for an uncompressed ARC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deflate: Option<String>,
    /// `false` for a gzip ARC whose `.arc.gz` `unmigrate` cannot give back byte for byte (a
    /// member's deflate settings were not recovered: the stream still comes back identical,
    /// the file compressed again does not); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gzip_file_rebuildable: Option<bool>,
    /// Gzip members whose deflate settings were not recovered: no zlib setting tried reproduces
    /// them, or no setting was tried (past the members probed, none assumed).
    #[serde(skip_serializing_if = "is_zero")]
    pub members_unrecovered: u64,
    /// Their offsets in the ARC file (the first 20).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unrecovered_offsets: Vec<u64>,
    /// Bytes of rebuild data written, before compression: the `X-Webaip-ARC-Rebuild` fields
    /// and the rebuild record.
    pub bytes_written: u64,
}

impl ArcRebuildability {
    /// What can be given back, in words (the text report, the migration event).
    pub fn text(&self) -> String {
        if !self.rebuildable {
            return format!("NOT rebuildable: {}", self.reasons.join("; "));
        }
        let with = match self.requires_packages.is_empty() {
            true => String::new(),
            false => format!(" with package(s) {}", self.requires_packages.join(", ")),
        };
        if self.byte_for_byte() {
            return match with.is_empty() {
                true => "rebuildable from the container byte for byte (webaip unmigrate)".into(),
                false => format!("rebuildable byte for byte{with} (webaip unmigrate --with)"),
            };
        }
        let offsets = crate::formats::arc_rebuild::listed_offsets(
            self.members_unrecovered,
            &self.unrecovered_offsets,
        );
        let needs = match with.is_empty() {
            true => String::new(),
            false => format!(" (only{with}: webaip unmigrate --with)"),
        };
        format!(
            "the ARC's uncompressed stream is rebuildable byte for byte{needs}, its gzip file is not: \
             {} gzip member(s) (at offset {offsets}) have deflate settings webaip did not \
             recover (none it tried reproduces them, or they were past the members probed); unmigrate gives back the identical stream, compressed again",
            self.members_unrecovered,
        )
    }

    /// Whether the ARC file itself comes back byte for byte.
    pub fn byte_for_byte(&self) -> bool {
        self.rebuildable && self.gzip_file_rebuildable != Some(false)
    }
}

/// Inferred dates listed one by one per file; the rest are only counted.
pub const MAX_DATE_EXAMPLES: usize = 20;

/// A record whose `WARC-Date` was inferred.
#[derive(Debug, Clone, Serialize)]
pub struct InferredDate {
    /// Where the record is in the ARC.
    pub location: crate::formats::arc::Location,
    /// Where its date came from.
    pub source: crate::formats::arc_to_warc::DateSource,
    /// The `WARC-Date` written.
    pub date: String,
}

impl FileReport {
    /// Records a record whose date was inferred: counted always, listed while under the cap.
    pub(crate) fn add_inferred_date(
        &mut self,
        source: crate::formats::arc_to_warc::DateSource,
        location: crate::formats::arc::Location,
        date: &str,
    ) {
        *self.date_sources.entry(source.as_str().into()).or_default() += 1;
        if self.inferred_dates.len() < MAX_DATE_EXAMPLES {
            self.inferred_dates.push(InferredDate { location, source, date: date.into() });
        }
    }

    /// Records an anomaly: counted always, listed while under the cap.
    pub(crate) fn add_anomaly(&mut self, a: Anomaly) {
        self.count(a.kind, a.severity, 1);
        if self.anomalies.len() < MAX_LISTED_ANOMALIES {
            self.anomalies.push(a);
        } else {
            self.anomalies_not_listed += 1;
        }
    }

    /// Records `n` anomalies that the reader counted without listing them.
    pub(crate) fn count_unlisted(&mut self, kind: AnomalyKind, severity: Severity, n: u64) {
        self.count(kind, severity, n);
        self.anomalies_not_listed += n;
    }

    fn count(&mut self, kind: AnomalyKind, severity: Severity, n: u64) {
        let kind = serde_json::to_value(kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *self.anomaly_counts.entry(kind).or_default() += n;
        let sev = match severity {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        *self.anomaly_severities.entry(sev.into()).or_default() += n;
    }

    /// True when the file was migrated and every payload conserved.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.conservation.conserved
    }
}

/// The report of a whole `migrate` run.
#[derive(Debug, Clone, Serialize)]
pub struct MigrationReport {
    /// `webaip`.
    pub tool: String,
    /// The tool's version.
    pub version: String,
    /// One entry per input, in the order given.
    pub files: Vec<FileReport>,
    /// Totals over all files.
    pub summary: Summary,
}

/// Totals over all files of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Inputs given.
    pub files: u64,
    /// Inputs migrated with every payload conserved.
    pub files_ok: u64,
    /// Inputs that failed or whose conservation check failed.
    pub files_failed: u64,
    /// Bytes read.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Records read, by kind.
    pub records_in: BTreeMap<String, u64>,
    /// Records written, by WARC-Type.
    pub records_out: BTreeMap<String, u64>,
    /// Payload bytes read from the ARCs.
    pub payload_bytes_in: u64,
    /// Payload bytes read back from the WARCs.
    pub payload_bytes_out: u64,
    /// Anomalies by severity.
    pub anomalies: BTreeMap<String, u64>,
    /// Wall-clock seconds for the run.
    pub seconds: f64,
}

impl MigrationReport {
    /// Builds the report and its totals.
    pub fn new(files: Vec<FileReport>, seconds: f64) -> Self {
        let mut s = Summary { files: files.len() as u64, seconds, ..Summary::default() };
        for f in &files {
            if f.ok() {
                s.files_ok += 1;
            } else {
                s.files_failed += 1;
            }
            s.bytes_in += f.input_size;
            s.bytes_out += f.output_size;
            s.payload_bytes_in += f.conservation.payload_bytes_in;
            s.payload_bytes_out += f.conservation.payload_bytes_out;
            for (k, v) in &f.records_in {
                *s.records_in.entry(k.clone()).or_default() += v;
            }
            for (k, v) in &f.records_out {
                *s.records_out.entry(k.clone()).or_default() += v;
            }
            for (k, v) in &f.anomaly_severities {
                *s.anomalies.entry(k.clone()).or_default() += v;
            }
        }
        MigrationReport {
            tool: "webaip".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            files,
            summary: s,
        }
    }

    /// True when every file was migrated and conserved.
    pub fn ok(&self) -> bool {
        self.summary.files_failed == 0
    }

    /// The report as text for a terminal. `verbose` lists info-level anomalies too.
    pub fn render_text(&self, verbose: bool) -> String {
        let mut o = String::new();
        for f in &self.files {
            f.write_text(&mut o, verbose);
        }
        let s = &self.summary;
        let _ = writeln!(
            o,
            "{} file(s): {} ok, {} failed; {} bytes in, {} bytes out; payload bytes in {} / out {}; {:.2} s",
            s.files,
            s.files_ok,
            s.files_failed,
            s.bytes_in,
            s.bytes_out,
            s.payload_bytes_in,
            s.payload_bytes_out,
            s.seconds
        );
        o
    }
}

impl FileReport {
    /// This file's part of the text report.
    fn write_text(&self, o: &mut String, verbose: bool) {
        self.write_outcome(o);
        let _ = writeln!(o, "  records in:  {}", counts(&self.records_in));
        let _ = writeln!(o, "  records out: {}", counts(&self.records_out));
        if let Some(b) = &self.input_bytes {
            let _ = writeln!(o, "  input bytes: {}", account(b, self.compressed));
        }
        // Said when the original cannot come back whole.
        let told = |r: &&ArcRebuildability| !r.byte_for_byte() || !r.requires_packages.is_empty();
        if let Some(r) = self.rebuild.as_ref().filter(told) {
            let _ = writeln!(o, "  rebuild: {}", r.text());
        }
        self.write_conservation(o);
        self.write_anomalies(o, verbose);
        self.write_inferred_dates(o, verbose);
    }

    /// The status line, the error, and where the records went.
    fn write_outcome(&self, o: &mut String) {
        let status = match (&self.error, self.conservation.conserved) {
            (Some(_), _) => "FAILED",
            (None, true) => "ok",
            (None, false) => "NOT CONSERVED",
        };
        let _ = writeln!(o, "{}: {status}", self.input.display());
        if let Some(e) = &self.error {
            // Most errors name the input already, which the line above names.
            let input = format!("{}: ", self.input.display());
            let _ = writeln!(o, "  error: {}", e.strip_prefix(&input).unwrap_or(e));
        }
        if let Some(out) = &self.output {
            let _ = writeln!(o, "  -> {} ({} bytes)", out.display(), self.output_size);
        }
        if let Some(q) = &self.quarantine {
            let _ = writeln!(o, "  infected: {} record(s) -> {}", q.records, q.path.display());
        }
        for (id, why) in &self.not_cleaned {
            let _ = writeln!(o, "    NOT CLEANED {id}: {why}");
        }
    }

    /// The conservation line and every mismatch.
    fn write_conservation(&self, o: &mut String) {
        let c = &self.conservation;
        let _ = writeln!(
            o,
            "  conservation: {} records compared, payload bytes in {} / out {}{}",
            c.records_compared,
            c.payload_bytes_in,
            c.payload_bytes_out,
            if c.conserved { ", all SHA-512 equal" } else { "" }
        );
        for m in &c.mismatches {
            let _ = writeln!(o, "    MISMATCH {m}");
        }
    }

    /// The anomalies by kind, then those listed (info-level ones only when `verbose`).
    fn write_anomalies(&self, o: &mut String, verbose: bool) {
        if !self.anomaly_counts.is_empty() {
            let _ = writeln!(o, "  anomalies: {}", counts(&self.anomaly_counts));
        }
        for a in &self.anomalies {
            if verbose || a.severity >= Severity::Warning {
                let sev = format!("{:?}", a.severity).to_lowercase();
                let _ = writeln!(o, "    {sev}: {a}");
            }
        }
        if self.anomalies_not_listed > 0 {
            let _ =
                writeln!(o, "    ... and {} more (see the JSON report)", self.anomalies_not_listed);
        }
    }

    /// Where dates that are not the records' own came from, and the first of them (all when
    /// `verbose`).
    fn write_inferred_dates(&self, o: &mut String, verbose: bool) {
        if self.date_sources.is_empty() {
            return;
        }
        let _ = writeln!(
            o,
            "  dates not the record's own (X-Webaip-Date-Source): {}",
            counts(&self.date_sources)
        );
        for d in self.inferred_dates.iter().take(if verbose { usize::MAX } else { 3 }) {
            let _ = writeln!(o, "    {}: {} from {}", d.location, d.date, d.source.as_str());
        }
    }
}

/// Where the input bytes went, in one line.
fn account(b: &ByteAccount, gzip: bool) -> String {
    let padding = if b.padding_bytes > 0 {
        format!(" ({} of them whitespace padding after declared lengths)", b.padding_bytes)
    } else {
        String::new()
    };
    if gzip {
        format!(
            "{} = {} in {} gzip members ({} of them empty, {} bytes) + {} kept raw; \
             decompressed {} = {} in records + {} between records{}",
            b.input,
            b.member_bytes,
            b.members,
            b.empty_members,
            b.empty_member_bytes,
            b.raw_bytes,
            b.decompressed_bytes,
            b.record_bytes,
            b.separator_bytes,
            padding
        )
    } else {
        format!(
            "{} = {} in records + {} between records{}",
            b.input, b.record_bytes, b.separator_bytes, padding
        )
    }
}

fn counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's text names its outcome first, strips the input's name from its error, and
    /// says where infected records went and what was not conserved.
    #[test]
    fn a_file_that_failed_conservation_says_why_in_its_lines() {
        let mut f = FileReport { input: "in/a.arc".into(), ..Default::default() };
        f.error = Some("in/a.arc: truncated record at offset 42".into());
        f.quarantine = Some(QuarantineReport {
            path: "viral/a.warc.gz".into(),
            records: 2,
            ..Default::default()
        });
        f.not_cleaned.push(("<urn:uuid:1>".into(), "cleaner exited 3".into()));
        f.conservation.records_compared = 5;
        f.conservation.mismatches.push("record 3: payload differs".into());
        f.rebuild = Some(ArcRebuildability {
            rebuildable: false,
            reasons: vec!["member at 0 unreadable".into()],
            ..Default::default()
        });
        let mut o = String::new();
        f.write_text(&mut o, false);
        let lines: Vec<&str> = o.lines().collect();
        assert_eq!(lines[0], "in/a.arc: FAILED");
        assert_eq!(lines[1], "  error: truncated record at offset 42");
        assert_eq!(lines[2], "  infected: 2 record(s) -> viral/a.warc.gz");
        assert_eq!(lines[3], "    NOT CLEANED <urn:uuid:1>: cleaner exited 3");
        assert!(o.contains("  rebuild: NOT rebuildable: member at 0 unreadable\n"), "{o}");
        assert!(o.contains("  conservation: 5 records compared, payload bytes in 0 / out 0\n"));
        assert!(o.ends_with("    MISMATCH record 3: payload differs\n"), "{o}");
    }

    /// A conserved file says so, and the run's summary line closes the report.
    #[test]
    fn a_conserved_file_says_every_digest_was_equal() {
        let mut f = FileReport { input: "b.arc".into(), ..Default::default() };
        f.conservation.conserved = true;
        f.conservation.records_compared = 1;
        let mut o = String::new();
        f.write_text(&mut o, true);
        assert!(o.starts_with("b.arc: ok\n"), "{o}");
        assert!(o.contains(", all SHA-512 equal\n"), "{o}");
        assert!(!o.contains("rebuild:"), "{o}");
    }
}
