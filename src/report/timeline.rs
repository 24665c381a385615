//! The capture timeline's periods: days for a crawl of up to two months, months up to ten
//! years, years beyond; every period between the first and the last is shown, empty ones too,
//! so the chart's axis is time.

use chrono::{Datelike, NaiveDate};

use super::captures::Count;

/// Longest run of days shown day by day.
const MAX_DAYS: i64 = 62;
/// Longest run of months shown month by month.
const MAX_MONTHS: i32 = 120;
/// Longest run of years shown with the empty ones (beyond: only years with captures).
const MAX_YEARS: i32 = 200;

/// The timeline: its unit and a count a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Periods {
    /// "day", "month" or "year".
    pub unit: &'static str,
    /// The periods in order; dates that are no calendar day last, as `(not a date)`.
    pub bins: Vec<Count>,
}

/// The periods of captures counted by day (`YYYY-MM-DD`, in order).
pub(crate) fn periods(by_day: &[Count]) -> Periods {
    let mut days = Vec::new();
    let mut invalid = 0;
    for c in by_day {
        match NaiveDate::parse_from_str(&c.key, "%Y-%m-%d") {
            Ok(d) => days.push((d, c.count)),
            Err(_) => invalid += c.count,
        }
    }
    let mut p = match (days.first(), days.last()) {
        (Some(first), Some(last)) => binned(&days, first.0, last.0),
        _ => Periods { unit: "day", bins: Vec::new() },
    };
    if invalid > 0 {
        p.bins.push(Count { key: "(not a date)".into(), count: invalid });
    }
    p
}

fn binned(days: &[(NaiveDate, u64)], first: NaiveDate, last: NaiveDate) -> Periods {
    if (last - first).num_days() < MAX_DAYS {
        let bins = first
            .iter_days()
            .take_while(|d| *d <= last)
            .map(|d| Count { key: d.format("%Y-%m-%d").to_string(), count: sum(days, |x| x == d) })
            .collect();
        return Periods { unit: "day", bins };
    }
    let month = |d: NaiveDate| d.year() * 12 + d.month0() as i32;
    if month(last) - month(first) < MAX_MONTHS {
        let bins = (month(first)..=month(last))
            .map(|m| Count {
                key: format!("{:04}-{:02}", m.div_euclid(12), m.rem_euclid(12) + 1),
                count: sum(days, |d| month(d) == m),
            })
            .collect();
        return Periods { unit: "month", bins };
    }
    let years: Vec<i32> = if last.year() - first.year() < MAX_YEARS {
        (first.year()..=last.year()).collect()
    } else {
        let mut present: Vec<i32> = days.iter().map(|(d, _)| d.year()).collect();
        present.dedup();
        present
    };
    let bins = years
        .into_iter()
        .map(|y| Count { key: format!("{y:04}"), count: sum(days, |d| d.year() == y) })
        .collect();
    Periods { unit: "year", bins }
}

fn sum(days: &[(NaiveDate, u64)], pick: impl Fn(NaiveDate) -> bool) -> u64 {
    days.iter().filter(|(d, _)| pick(*d)).map(|(_, n)| n).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(key: &str, count: u64) -> Count {
        Count { key: key.into(), count }
    }

    #[test]
    fn a_short_crawl_is_shown_by_day_with_empty_days() {
        let p = periods(&[day("2024-03-15", 3), day("2024-03-17", 1)]);
        assert_eq!(p.unit, "day");
        assert_eq!(p.bins, vec![day("2024-03-15", 3), day("2024-03-16", 0), day("2024-03-17", 1)]);
    }

    #[test]
    fn longer_spans_are_shown_by_month_then_year_and_bad_dates_last() {
        // Two months and a day are still shown by day; three months by month.
        let p = periods(&[day("2023-10-31", 2), day("2024-01-01", 1), day("2024-13-01", 4)]);
        assert_eq!(p.unit, "month");
        let months = [day("2023-10", 2), day("2023-11", 0), day("2023-12", 0), day("2024-01", 1)];
        assert_eq!(p.bins[..4], months);
        assert_eq!(p.bins[4], day("(not a date)", 4));
        let p = periods(&[day("1996-01-01", 1), day("2024-01-01", 1)]);
        assert_eq!((p.unit, p.bins.len()), ("year", 29));
        let p = periods(&[day("0001-01-01", 1), day("9999-01-01", 1)]);
        assert_eq!(p.bins.len(), 2, "a hostile span lists only the years with captures");
    }
}
