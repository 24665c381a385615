//! Dates as the byte formats write them, one parser per rule: the ARC archive date (digits,
//! UTC), the W3C date-time of `WARC-Date`, which dates WARC and the METS can state, and the
//! HTTP `Date` values servers wrote (tolerant of their broken forms).

use std::collections::HashSet;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, Utc, Weekday};

/// Parses an ARC archive date: 14 digits `yyyyMMddHHmmss` UTC; 12 digits (no seconds) and 8
/// (date only) occur in old files, and 15-18 digits carry fractions of a second.
pub(crate) fn parse_arc_date(s: &str) -> Option<DateTime<Utc>> {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let dt = match s.len() {
        8 => NaiveDate::parse_from_str(s, "%Y%m%d").ok()?.and_hms_opt(0, 0, 0)?,
        12 => NaiveDateTime::parse_from_str(&format!("{s}00"), "%Y%m%d%H%M%S").ok()?,
        14 => NaiveDateTime::parse_from_str(s, "%Y%m%d%H%M%S").ok()?,
        15..=18 => {
            let base = NaiveDateTime::parse_from_str(&s[..14], "%Y%m%d%H%M%S").ok()?;
            let frac = &s[14..];
            let nanos: u32 = format!("{frac:0<9}").parse().ok()?;
            base.with_nanosecond_checked(nanos)?
        }
        _ => return None,
    };
    Some(dt.and_utc())
}

trait WithNanos: Sized {
    fn with_nanosecond_checked(self, n: u32) -> Option<Self>;
}

impl WithNanos for NaiveDateTime {
    fn with_nanosecond_checked(self, n: u32) -> Option<Self> {
        use chrono::Timelike;
        self.with_nanosecond(n)
    }
}

/// An RFC 3339 date-time (`2024-03-15T10:30:06Z`, `...+02:00`, fractions of a second
/// allowed), in UTC: the form webaip writes its own dates in (`WARC-Date`, the METS) and
/// Heritrix its crawl.log timestamps. Stricter than [`parse_warc_date`], which also takes
/// WARC's less precise forms.
pub(crate) fn parse_rfc3339(s: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    DateTime::parse_from_rfc3339(s).map(|d| d.to_utc())
}

/// A W3CDTF date of a year, month or day, as a page's `date` in the metadata gives it:
/// `2024`, `2024-03`, `2024-03-15`.
pub(crate) fn is_w3cdtf_date(d: &str) -> bool {
    let ok = |f: &str, s: &str| NaiveDate::parse_from_str(s, f).is_ok();
    match d.len() {
        4 => d.bytes().all(|b| b.is_ascii_digit()),
        7 => ok("%Y-%m-%d", &format!("{d}-01")),
        10 => ok("%Y-%m-%d", d),
        _ => false,
    }
}

/// A `WARC-Date` (W3C date-time, as WARC 1.1 allows it: to the second or finer, or less
/// precise), in UTC.
pub(crate) fn parse_warc_date(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(d) = parse_rfc3339(s) {
        return Some(d);
    }
    // Less precise forms: `YYYY-MM-DDThh:mmZ`, `YYYY-MM-DD`, `YYYY-MM`, `YYYY`.
    if let Ok(d) = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%MZ") {
        return Some(d.and_utc());
    }
    let day = match s.len() {
        10 => NaiveDate::parse_from_str(s, "%Y-%m-%d").ok(),
        7 => NaiveDate::parse_from_str(&format!("{s}-01"), "%Y-%m-%d").ok(),
        4 if s.bytes().all(|b| b.is_ascii_digit()) => {
            NaiveDate::parse_from_str(&format!("{s}-01-01"), "%Y-%m-%d").ok()
        }
        _ => None,
    };
    day.and_then(|d| d.and_hms_opt(0, 0, 0)).map(|d| d.and_utc())
}

/// True when `WARC-Date` can state `d`: W3C-DTF (and the METS's `xs:dateTime`) writes years
/// with four digits, so year 0 (`0000` is no `xs:dateTime` year either) and years past 9999
/// (`+10000-01-01T00:00:00Z`, which chrono would print) cannot be stated.
pub(crate) fn warc_date_stateable(d: &chrono::DateTime<chrono::Utc>) -> bool {
    use chrono::Datelike;
    (1..=9999).contains(&d.year())
}

/// True when `s` is a date or date-time as WARC (W3C-DTF) and the METS (`xs:dateTime`) state
/// them: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, or `YYYY-MM-DDThh:mm[:ss[.s+]]` with `Z`, `±hh:mm`
/// or (`xs:dateTime`) no zone, the year of four digits from 0001 (no sign, no fifth digit:
/// `+10000-01-01T00:00:00Z` is none).
pub fn is_stateable_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 4 || !b[..4].iter().all(u8::is_ascii_digit) || &s[..4] == "0000" {
        return false;
    }
    let day = |t: &str| chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d").is_ok();
    match b.len() {
        4 => true,
        7 => day(&format!("{s}-01")),
        10 => day(s),
        _ if b.get(10) == Some(&b'T') && day(&s[..10]) => {
            let local = |f: &str| chrono::NaiveDateTime::parse_from_str(s, f).is_ok();
            chrono::DateTime::parse_from_rfc3339(s).is_ok()
                || chrono::DateTime::parse_from_str(s, "%Y-%m-%dT%H:%M%#z").is_ok()
                || local("%Y-%m-%dT%H:%M:%S%.f")
                || local("%Y-%m-%dT%H:%M")
        }
        _ => false,
    }
}

/// What a quirk kind [`parse_server_date`] reports means, for a reader.
pub(crate) fn describe_date_quirk(kind: &str) -> &'static str {
    match kind {
        "norwegian-date" => "Norwegian day or month names",
        "seconds-60" => "second 60, read as the next minute's first second",
        "broken-year" => "a broken year (tm_year printed as is), read as 19xx + the number",
        "ansi-c-with-zone" => "ANSI C format with a time zone",
        "no-weekday" => "no day of the week (RFC 2822 style)",
        "no-leading-zero" => "a number without its leading zero",
        "two-digit-year" => "a two-digit year outside RFC 850, read as 1970-2069",
        "non-gmt-zone" => "a zone other than GMT, converted to UTC",
        "unknown-zone" => "an unknown zone, read as UTC",
        "wrong-weekday" => "the day of the week does not match the date",
        "no-zone" => "no zone, read as UTC",
        _ => "tolerated",
    }
}

fn weekday_of(t: &str) -> Option<(Weekday, bool)> {
    let l = t.to_lowercase();
    let en = [
        ("mon", "monday", Weekday::Mon),
        ("tue", "tuesday", Weekday::Tue),
        ("wed", "wednesday", Weekday::Wed),
        ("thu", "thursday", Weekday::Thu),
        ("fri", "friday", Weekday::Fri),
        ("sat", "saturday", Weekday::Sat),
        ("sun", "sunday", Weekday::Sun),
    ];
    for (short, long, wd) in en {
        if l == short || l == long {
            return Some((wd, false));
        }
    }
    let no = [
        (["ma", "man", "mandag"], Weekday::Mon),
        (["ti", "tir", "tirsdag"], Weekday::Tue),
        (["on", "ons", "onsdag"], Weekday::Wed),
        (["to", "tor", "torsdag"], Weekday::Thu),
        (["fr", "fre", "fredag"], Weekday::Fri),
        (["lø", "lør", "lørdag"], Weekday::Sat),
        (["sø", "søn", "søndag"], Weekday::Sun),
    ];
    no.iter().find(|(names, _)| names.contains(&l.as_str())).map(|(_, wd)| (*wd, true))
}

/// A month (1-12) and whether the name is Norwegian only (`mai`, `okt`, `des`).
fn month_of(t: &str) -> Option<(u32, bool)> {
    let l = t.to_lowercase();
    let en = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let long = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    if let Some(i) = en.iter().position(|m| *m == l).or_else(|| long.iter().position(|m| *m == l)) {
        return Some((i as u32 + 1, false));
    }
    match l.as_str() {
        "mai" => Some((5, true)),
        "okt" => Some((10, true)),
        "des" => Some((12, true)),
        _ => None,
    }
}

/// A year as servers of 2003 wrote it: four digits; two (RFC 850; elsewhere reported);
/// `103` and `:3` (C's `tm_year`, years since 1900, printed without the 1900 added, the second
/// as `'0' + 10` then `3`), reported as broken.
fn year_of(t: &str, dashed: bool, q: &mut Vec<&'static str>) -> Option<i32> {
    let b = t.as_bytes();
    let all_digits = b.iter().all(u8::is_ascii_digit);
    match b.len() {
        4 if all_digits => t.parse().ok(),
        2 if all_digits => {
            if !dashed {
                q.push("two-digit-year");
            }
            let y: i32 = t.parse().ok()?;
            Some(if y < 70 { 2000 + y } else { 1900 + y })
        }
        3 if all_digits && b[0] == b'1' => {
            q.push("broken-year");
            Some(1900 + t.parse::<i32>().ok()?)
        }
        2 if b[0] == b':' && b[1].is_ascii_digit() => {
            q.push("broken-year");
            Some(2000 + i32::from(b[1] - b'0'))
        }
        _ => None,
    }
}

/// `H:M:S`, each one or two digits (a missing leading zero reported).
fn time_of(t: &str, q: &mut Vec<&'static str>) -> Option<(u32, u32, u32)> {
    let mut parts = t.split(':');
    let mut next = || -> Option<u32> {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if p.len() == 1 {
            q.push("no-leading-zero");
        }
        p.parse().ok()
    };
    let hms = (next()?, next()?, next()?);
    if parts.next().is_some() {
        return None;
    }
    Some(hms)
}

/// A zone's offset east of UTC in seconds (numeric, or one of the names 2003 servers used).
fn zone_of(t: &str) -> Option<i32> {
    if let Some(sign) =
        t.strip_prefix('+').map(|r| (1, r)).or_else(|| t.strip_prefix('-').map(|r| (-1, r)))
    {
        let (s, r) = sign;
        if r.len() == 4 && r.bytes().all(|b| b.is_ascii_digit()) {
            let h: i32 = r[..2].parse().ok()?;
            let m: i32 = r[2..].parse().ok()?;
            return (h < 24 && m < 60).then_some(s * (h * 3600 + m * 60));
        }
        return None;
    }
    let h = match t.to_uppercase().as_str() {
        "GMT" | "UT" | "UTC" | "Z" | "WET" => 0,
        "CET" | "MET" | "MEZ" | "WEST" | "BST" => 1,
        // CES: CEST cut to three letters by the server.
        "CEST" | "MEST" | "MESZ" | "CES" | "EET" => 2,
        "EEST" => 3,
        "EST" => -5,
        "EDT" => -4,
        "CST" => -6,
        "CDT" => -5,
        "MST" => -7,
        "MDT" => -6,
        "PST" => -8,
        "PDT" => -7,
        _ => return None,
    };
    Some(h * 3600)
}

/// Parses a server `Date` value the way 2002–2003 servers wrote it (INPUT_FORMATS.md §5.4.1):
/// RFC 1123, RFC 850 and ANSI C, and their broken forms: Norwegian day and month names
/// (`lø, 19 jul 2003 04:45:41 CET`), missing leading zeros, second 60, broken years
/// (`Jul-103`, `Jul-:3`, `31 Jul 103`), ANSI C with a zone, RFC 2822 without a weekday.
/// Returns the instant in UTC and the quirk kinds met (empty for a conforming date).
pub(crate) fn parse_server_date(s: &str) -> Option<(DateTime<Utc>, Vec<&'static str>)> {
    let mut q: Vec<&'static str> = Vec::new();
    let mut tokens: Vec<&str> =
        s.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()).collect();
    if tokens.is_empty() || tokens.len() > 7 {
        return None;
    }
    let mut weekday = None;
    if let Some((wd, nor)) = weekday_of(tokens[0]) {
        weekday = Some(wd);
        if nor {
            q.push("norwegian-date");
        }
        tokens.remove(0);
    } else {
        q.push("no-weekday");
    }
    let parts = DateParts::of(&tokens)?;
    let (month, month_nor) = parts.month?;
    if month_nor && !q.contains(&"norwegian-date") {
        q.push("norwegian-date");
    }
    let (day_text, year_text) = parts.day_and_year(&mut q)?;
    let year = year_of(year_text, parts.dashed, &mut q)?;
    let (h, mi, sec) = time_of(parts.time?, &mut q)?;
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    if sec == 60 {
        q.push("seconds-60");
    }
    let date = NaiveDate::from_ymd_opt(year, month, day_text.parse().ok()?)?;
    let offset = zone_offset(parts.zone, parts.ansi, &mut q);
    let local: NaiveDateTime = date.and_hms_opt(h, mi, sec.min(59))?;
    let t = local.and_utc() - Duration::seconds(i64::from(offset))
        + Duration::seconds(i64::from(sec == 60));
    if weekday.is_some_and(|wd| wd != date.weekday()) {
        q.push("wrong-weekday");
    }
    let mut seen = HashSet::new();
    q.retain(|k| seen.insert(*k));
    Some((t, q))
}

/// The tokens of a server date after its weekday, by what each looks like.
#[derive(Default)]
struct DateParts<'a> {
    day: Option<&'a str>,
    /// The month, and whether its name was Norwegian.
    month: Option<(u32, bool)>,
    year: Option<&'a str>,
    time: Option<&'a str>,
    zone: Option<&'a str>,
    /// ANSI C's order: the month before the day.
    ansi: bool,
    /// Bare numbers (day and year, unless the date is dashed).
    nums: Vec<&'a str>,
    /// RFC 850's `18-Jul-03`.
    dashed: bool,
}

impl<'a> DateParts<'a> {
    /// Sorts the tokens; `None` for a token that is nothing a date holds.
    fn of(tokens: &[&'a str]) -> Option<Self> {
        let mut p = DateParts::default();
        for &t in tokens {
            let parts: Vec<&str> = t.split('-').collect();
            if parts.len() == 3 && !parts[0].is_empty() && month_of(parts[1]).is_some() {
                p.dashed = true;
                (p.day, p.month, p.year) = (Some(parts[0]), month_of(parts[1]), Some(parts[2]));
            } else if let Some(m) = month_of(t).filter(|_| p.month.is_none()) {
                p.ansi = p.nums.is_empty() && p.day.is_none();
                p.month = Some(m);
            } else if t.len() > 2 && t.contains(':') && p.time.is_none() {
                p.time = Some(t);
            } else if t.bytes().all(|b| b.is_ascii_digit()) || (t.starts_with(':') && t.len() == 2)
            {
                p.nums.push(t);
            } else if p.zone.is_none() && p.month.is_some() {
                p.zone = Some(t);
            } else {
                return None;
            }
        }
        Some(p)
    }

    /// The day (one or two digits) and the year's text.
    fn day_and_year(&self, q: &mut Vec<&'static str>) -> Option<(&'a str, &'a str)> {
        let (day, year) = match (self.dashed, &self.nums[..]) {
            (false, [day, year]) => (*day, *year),
            (true, []) => (self.day?, self.year?),
            _ => return None,
        };
        if day.is_empty() || day.len() > 2 || !day.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // ANSI C pads the day with a space; elsewhere a one-digit day lacks its zero.
        if day.len() == 1 && !self.ansi {
            q.push("no-leading-zero");
        }
        Some((day, year))
    }
}

/// The zone's offset east of UTC in seconds, noting what is odd about it (none stated, a zone
/// after an ANSI C date, a zone not GMT, an unknown one, taken as GMT).
fn zone_offset(zone: Option<&str>, ansi: bool, q: &mut Vec<&'static str>) -> i32 {
    let Some(z) = zone else {
        if !ansi {
            q.push("no-zone");
        }
        return 0;
    };
    if ansi {
        q.push("ansi-c-with-zone");
    }
    match zone_of(z) {
        Some(0) => 0,
        Some(o) => {
            q.push("non-gmt-zone");
            o
        }
        None => {
            q.push("unknown-zone");
            0
        }
    }
}

/// A UTC time, for tests.
#[cfg(test)]
pub(crate) fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    use chrono::TimeZone;
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_several_lengths() {
        assert!(parse_arc_date("20140401000000").is_some());
        assert!(parse_arc_date("201404010000").is_some());
        assert_eq!(
            parse_arc_date("201404010000001234").unwrap().to_rfc3339(),
            "2014-04-01T00:00:00.123400+00:00"
        );
        assert!(parse_arc_date("20141301000000").is_none());
        assert!(parse_arc_date("-").is_none());
    }

    #[test]
    fn rfc3339_in_utc_and_nothing_less_precise() {
        assert_eq!(parse_rfc3339("2024-03-15T12:30:06+02:00"), Ok(utc(2024, 3, 15, 10, 30, 6)));
        let heritrix = parse_rfc3339("2024-03-15T10:30:06.123Z").unwrap();
        assert_eq!(heritrix.timestamp_subsec_millis(), 123);
        for other in ["2024-03-15T10:30Z", "2024-03-15", "20240315103006", "2024-03-15T10:30:06"] {
            assert!(parse_rfc3339(other).is_err(), "{other}");
        }
        // WARC's less precise forms are parse_warc_date's rule, not this one's.
        assert!(parse_warc_date("2024-03-15T10:30Z").is_some());
        assert!(parse_warc_date("2024-03-15").is_some());
    }

    #[test]
    fn w3cdtf_years_months_and_days_only() {
        for good in ["2024", "2024-03", "2024-02-29"] {
            assert!(is_w3cdtf_date(good), "{good}");
        }
        for bad in ["24", "2024-13", "2023-02-29", "2024-3-1", "2024-03-15T10:30:06Z", "20xx"] {
            assert!(!is_w3cdtf_date(bad), "{bad}");
        }
    }

    #[test]
    fn warc_dates_to_the_second_finer_and_less_precise() {
        let d =
            |s| parse_warc_date(s).map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
        assert_eq!(d("2024-03-15T10:30:06Z").as_deref(), Some("2024-03-15T10:30:06Z"));
        assert_eq!(
            d("2024-03-15T10:30:06.123456Z").as_deref(),
            Some("2024-03-15T10:30:06.123456Z")
        );
        assert_eq!(d("2024-03-15T10:30Z").as_deref(), Some("2024-03-15T10:30:00Z"));
        assert_eq!(d("2024-03-15").as_deref(), Some("2024-03-15T00:00:00Z"));
        assert_eq!(d("2024-03").as_deref(), Some("2024-03-01T00:00:00Z"));
        assert_eq!(d("2024").as_deref(), Some("2024-01-01T00:00:00Z"));
        for bad in ["", "yesterday", "2024-13-01", "20240315103006", "2024-03-15T25:00:00Z"] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_warc_and_mets_can_state() {
        use chrono::TimeZone;
        for ok in ["2003", "2003-07", "2003-07-18", "2003-07-18T09:39:49Z", "2003-07-18T09:39Z"] {
            assert!(is_stateable_date(ok), "{ok}");
        }
        for ok in ["2003-07-18T09:39:49.25+02:00", "0001-01-01T00:00:00Z", "2024-04-29T03:51:08"] {
            assert!(is_stateable_date(ok), "{ok}");
        }
        for bad in [
            "+10000-01-01T00:00:00Z",
            "10000-01-01T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "-0001-01-01T00:00:00Z",
            "2003-13-01",
            "2003-07-18T25:00:00Z",
            "2003-07-18 09:39:49Z",
            "",
            "x",
        ] {
            assert!(!is_stateable_date(bad), "{bad}");
        }
        let d = chrono::Utc.timestamp_opt(253_402_300_800, 0).unwrap();
        assert!(!warc_date_stateable(&d), "{d}");
        let d = chrono::Utc.timestamp_opt(253_402_300_799, 0).unwrap();
        assert!(warc_date_stateable(&d) && is_stateable_date(&d.to_rfc3339()), "{d}");
    }

    #[test]
    fn server_dates_of_2003_parse_with_their_quirks() {
        let cases: &[(&str, DateTime<Utc>, &[&str])] = &[
            ("Fri, 18 Jul 2003 09:39:49 GMT", utc(2003, 7, 18, 9, 39, 49), &[]),
            ("Monday, 04-Aug-03 12:46:57 GMT", utc(2003, 8, 4, 12, 46, 57), &[]),
            ("Mon Jul 21 05:41:16 2003", utc(2003, 7, 21, 5, 41, 16), &[]),
            ("Fri Aug  1 23:39:52 2003", utc(2003, 8, 1, 23, 39, 52), &[]),
            (
                "lø, 19 jul 2003 04:45:41 CET",
                utc(2003, 7, 19, 3, 45, 41),
                &["norwegian-date", "non-gmt-zone"],
            ),
            (
                "on, 16 jul 2003 07:41:29 CET",
                utc(2003, 7, 16, 6, 41, 29),
                &["norwegian-date", "non-gmt-zone"],
            ),
            ("fr, 01 aug 2003 05:31:12 GMT", utc(2003, 8, 1, 5, 31, 12), &["norwegian-date"]),
            ("ma, 01 des 2003 05:31:12 GMT", utc(2003, 12, 1, 5, 31, 12), &["norwegian-date"]),
            ("Thu, 17 Jul 2003 12:15:60 GMT", utc(2003, 7, 17, 12, 16, 0), &["seconds-60"]),
            ("Friday, 18-Jul-103 09:39:49 GMT", utc(2003, 7, 18, 9, 39, 49), &["broken-year"]),
            (
                "Wednesday, 24-Jul-:3 03:33:15 GMT",
                utc(2003, 7, 24, 3, 33, 15),
                &["broken-year", "wrong-weekday"],
            ),
            ("Thu, 31 Jul 103 13:00:03 GMT", utc(2003, 7, 31, 13, 0, 3), &["broken-year"]),
            (
                "Fri Aug  1 23:39:52 2003 CEST",
                utc(2003, 8, 1, 21, 39, 52),
                &["ansi-c-with-zone", "non-gmt-zone"],
            ),
            ("16 Jul 2003 21:41:40", utc(2003, 7, 16, 21, 41, 40), &["no-weekday", "no-zone"]),
            (
                "17 Jul 2003 01:53:56 CET",
                utc(2003, 7, 17, 0, 53, 56),
                &["no-weekday", "non-gmt-zone"],
            ),
            (
                "9 Jan 2003 09:23:40",
                utc(2003, 1, 9, 9, 23, 40),
                &["no-weekday", "no-leading-zero", "no-zone"],
            ),
            ("Mon, 4 Aug 2003 23:29:21 GMT", utc(2003, 8, 4, 23, 29, 21), &["no-leading-zero"]),
            ("Sat, 19 Jul 2003 6:07:08 GMT", utc(2003, 7, 19, 6, 7, 8), &["no-leading-zero"]),
            ("Mon, 04 Aug 2003 21:15:58 +0200", utc(2003, 8, 4, 19, 15, 58), &["non-gmt-zone"]),
            (
                "Thu, 7 Aug 2003 02:18:01 CES",
                utc(2003, 8, 7, 0, 18, 1),
                &["no-leading-zero", "non-gmt-zone"],
            ),
            ("Thu, 07 Aug 2003 02:18:01 XYZ", utc(2003, 8, 7, 2, 18, 1), &["unknown-zone"]),
            ("Sun, 06 Nov 94 08:49:37 GMT", utc(1994, 11, 6, 8, 49, 37), &["two-digit-year"]),
        ];
        for (text, want, kinds) in cases {
            let (got, q) = parse_server_date(text).unwrap_or_else(|| panic!("{text} not parsed"));
            assert_eq!(got, *want, "{text}");
            assert_eq!(&q, kinds, "{text}");
        }
        for bad in [
            "",
            "yesterday",
            "Fri, 18 Jul 2003",
            "Fri, 32 Jul 2003 09:39:49 GMT",
            "Fri, 18 Jul 2003 24:00:00 GMT",
            "Fri, 18 Jul 2003 23:59:61 GMT",
            "Fri, 18 Xyz 2003 09:39:49 GMT",
            "Fri, 18 Jul 20033 09:39:49 GMT",
            "Fri, 18 Jul 203 09:39:49 GMT",
            "9726Fri, 04 Apr 2003 08:36:47 GMT",
        ] {
            assert!(parse_server_date(bad).is_none(), "{bad:?} parsed");
        }
    }
}
