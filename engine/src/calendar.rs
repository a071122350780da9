//! NYSE trading sessions by rule.
//!
//! Holidays follow the exchange's rules (with their start years and weekend
//! observance) plus the unscheduled closures since 1990, so session lists match
//! the published NYSE calendar without a data file.

use chrono::{Datelike, Duration, NaiveDate, Weekday};

/// A full-day NYSE closure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Holiday {
    NewYearsDay,
    MlkDay,
    PresidentsDay,
    GoodFriday,
    MemorialDay,
    Juneteenth,
    IndependenceDay,
    LaborDay,
    Thanksgiving,
    Christmas,
    /// Unscheduled closure (national mourning, weather, 9/11).
    Special(&'static str),
}

impl Holiday {
    pub const RULES: [Holiday; 10] = [
        Holiday::NewYearsDay,
        Holiday::MlkDay,
        Holiday::PresidentsDay,
        Holiday::GoodFriday,
        Holiday::MemorialDay,
        Holiday::Juneteenth,
        Holiday::IndependenceDay,
        Holiday::LaborDay,
        Holiday::Thanksgiving,
        Holiday::Christmas,
    ];

    /// The name used by the seasonality endpoints (spec spelling).
    pub fn name(self) -> &'static str {
        match self {
            Holiday::NewYearsDay => "New Year's Day",
            Holiday::MlkDay => "MLK Jr. Day",
            Holiday::PresidentsDay => "President's Day",
            Holiday::GoodFriday => "Good Friday",
            Holiday::MemorialDay => "Memorial Day",
            Holiday::Juneteenth => "Juneteenth",
            Holiday::IndependenceDay => "Independence Day",
            Holiday::LaborDay => "Labor Day",
            Holiday::Thanksgiving => "Thanksgiving Day",
            Holiday::Christmas => "Christmas Day",
            Holiday::Special(name) => name,
        }
    }

    /// The weekday on which the exchange closes for this holiday in `year`, if it does.
    pub fn observed(self, year: i32) -> Option<NaiveDate> {
        let ymd = |m, d| NaiveDate::from_ymd_opt(year, m, d).expect("valid date");
        match self {
            // Saturday New Year's is not moved to Friday (the year-end close stays open).
            Holiday::NewYearsDay => match ymd(1, 1).weekday() {
                Weekday::Sat => None,
                Weekday::Sun => Some(ymd(1, 2)),
                _ => Some(ymd(1, 1)),
            },
            Holiday::MlkDay if year >= 1998 => Some(nth_weekday(year, 1, Weekday::Mon, 3)),
            Holiday::MlkDay => None,
            Holiday::PresidentsDay => Some(nth_weekday(year, 2, Weekday::Mon, 3)),
            Holiday::GoodFriday => Some(easter_sunday(year) - Duration::days(2)),
            Holiday::MemorialDay => Some(last_weekday(year, 5, Weekday::Mon)),
            Holiday::Juneteenth if year >= 2022 => Some(nearest_workday(ymd(6, 19))),
            Holiday::Juneteenth => None,
            Holiday::IndependenceDay => Some(nearest_workday(ymd(7, 4))),
            Holiday::LaborDay => Some(nth_weekday(year, 9, Weekday::Mon, 1)),
            Holiday::Thanksgiving => Some(nth_weekday(year, 11, Weekday::Thu, 4)),
            Holiday::Christmas => Some(nearest_workday(ymd(12, 25))),
            Holiday::Special(_) => None,
        }
    }
}

/// Unscheduled full-day closures since 1990.
const SPECIAL_CLOSURES: [(i32, u32, u32, &str); 10] = [
    (1994, 4, 27, "National Day of Mourning (Nixon)"),
    (2001, 9, 11, "September 11"),
    (2001, 9, 12, "September 11"),
    (2001, 9, 13, "September 11"),
    (2001, 9, 14, "September 11"),
    (2004, 6, 11, "National Day of Mourning (Reagan)"),
    (2007, 1, 2, "National Day of Mourning (Ford)"),
    (2012, 10, 29, "Hurricane Sandy"),
    (2012, 10, 30, "Hurricane Sandy"),
    (2018, 12, 5, "National Day of Mourning (G.H.W. Bush)"),
];

const SPECIAL_CLOSURES_LATE: [(i32, u32, u32, &str); 1] =
    [(2025, 1, 9, "National Day of Mourning (Carter)")];

/// All full-day closures of `year` falling on weekdays, sorted by date.
pub fn holidays(year: i32) -> Vec<(NaiveDate, Holiday)> {
    let mut out: Vec<(NaiveDate, Holiday)> = Holiday::RULES
        .iter()
        .filter_map(|h| h.observed(year).map(|d| (d, *h)))
        .collect();
    for (y, m, d, name) in SPECIAL_CLOSURES.iter().chain(SPECIAL_CLOSURES_LATE.iter()) {
        if *y == year {
            let date = NaiveDate::from_ymd_opt(*y, *m, *d).expect("valid date");
            out.push((date, Holiday::Special(name)));
        }
    }
    out.sort_by_key(|(d, _)| *d);
    out
}

/// Whether the exchange holds a regular session on `date`.
pub fn is_session(date: NaiveDate) -> bool {
    !matches!(date.weekday(), Weekday::Sat | Weekday::Sun)
        && !holidays(date.year()).iter().any(|(d, _)| *d == date)
}

/// Every session date in `[start, end]`, in order.
pub fn sessions(start: NaiveDate, end: NaiveDate) -> Vec<NaiveDate> {
    let mut out = Vec::new();
    if end < start {
        return out;
    }
    let mut closed = std::collections::HashSet::new();
    for y in start.year()..=end.year() {
        closed.extend(holidays(y).into_iter().map(|(d, _)| d));
    }
    let mut d = start;
    while d <= end {
        if !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) && !closed.contains(&d) {
            out.push(d);
        }
        d += Duration::days(1);
    }
    out
}

/// Easter Sunday in the Gregorian calendar (anonymous Gregorian algorithm).
pub fn easter_sunday(year: i32) -> NaiveDate {
    let a = year % 19;
    let b = year / 100;
    let c = year % 100;
    let d = b / 4;
    let e = b % 4;
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let i = c / 4;
    let k = c % 4;
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    NaiveDate::from_ymd_opt(year, month as u32, day as u32).expect("valid Easter date")
}

/// The `n`th (1-based) `weekday` of a month.
pub fn nth_weekday(year: i32, month: u32, weekday: Weekday, n: u8) -> NaiveDate {
    NaiveDate::from_weekday_of_month_opt(year, month, weekday, n).expect("nth weekday exists")
}

/// The last `weekday` of a month.
pub fn last_weekday(year: i32, month: u32, weekday: Weekday) -> NaiveDate {
    let first_next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)
    }
    .expect("valid date");
    let last = first_next - Duration::days(1);
    let back = (7 + last.weekday().num_days_from_monday() - weekday.num_days_from_monday()) % 7;
    last - Duration::days(back as i64)
}

/// Saturday holidays are observed on Friday, Sunday ones on Monday.
fn nearest_workday(d: NaiveDate) -> NaiveDate {
    match d.weekday() {
        Weekday::Sat => d - Duration::days(1),
        Weekday::Sun => d + Duration::days(1),
        _ => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn easter_known_dates() {
        assert_eq!(easter_sunday(2000), d("2000-04-23"));
        assert_eq!(easter_sunday(2019), d("2019-04-21"));
        assert_eq!(easter_sunday(2024), d("2024-03-31"));
        assert_eq!(easter_sunday(2038), d("2038-04-25"));
    }

    #[test]
    fn holidays_2022_match_the_published_nyse_list() {
        let got: Vec<NaiveDate> = holidays(2022).into_iter().map(|(d, _)| d).collect();
        // New Year's 2022 was a Saturday: not observed.
        let want: Vec<NaiveDate> = [
            "2022-01-17",
            "2022-02-21",
            "2022-04-15",
            "2022-05-30",
            "2022-06-20",
            "2022-07-04",
            "2022-09-05",
            "2022-11-24",
            "2022-12-26",
        ]
        .iter()
        .map(|s| d(s))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn observance_and_start_years() {
        assert_eq!(
            Holiday::IndependenceDay.observed(2020),
            Some(d("2020-07-03"))
        );
        assert_eq!(Holiday::Christmas.observed(2021), Some(d("2021-12-24")));
        assert_eq!(Holiday::NewYearsDay.observed(2017), Some(d("2017-01-02")));
        assert_eq!(Holiday::MlkDay.observed(1997), None);
        assert_eq!(Holiday::Juneteenth.observed(2021), None);
        assert!(!is_session(d("2001-09-12")));
        assert!(!is_session(d("2025-01-09")));
        assert!(is_session(d("2021-12-31")));
    }

    #[test]
    fn session_counts_per_year() {
        // Published NYSE session counts.
        assert_eq!(sessions(d("2019-01-01"), d("2019-12-31")).len(), 252);
        assert_eq!(sessions(d("2022-01-01"), d("2022-12-31")).len(), 251);
        assert_eq!(sessions(d("2023-01-01"), d("2023-12-31")).len(), 250);
        assert!(sessions(d("2023-01-02"), d("2023-01-01")).is_empty());
    }

    #[test]
    fn last_weekday_of_month() {
        assert_eq!(last_weekday(2024, 5, Weekday::Mon), d("2024-05-27"));
        assert_eq!(last_weekday(2023, 12, Weekday::Fri), d("2023-12-29"));
    }
}
