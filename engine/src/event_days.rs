//! The days seasonality studies look around: the 16 named events of the
//! analytics service (exchange holidays, option expirations, US Election Day,
//! FOMC decision days from a data table).

use crate::calendar::{Holiday, is_session, nth_weekday};
use chrono::{Datelike, Duration, NaiveDate, Weekday};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventDay {
    Holiday(Holiday),
    /// Third Friday of every month, moved to the previous session on a holiday.
    MonthlyExpiration,
    /// The expiration of March, June, September or December.
    QuadExpiration(u32),
    /// Tuesday after the first Monday of November, every year.
    ElectionDay,
    /// Days of the FOMC table.
    FomcDecision,
}

/// The 16 names of `get-predefined-holidays`, in the service's order.
pub const NAMES: [(&str, EventDay); 16] = [
    ("Christmas Day", EventDay::Holiday(Holiday::Christmas)),
    (
        "December Quad Option Expiration",
        EventDay::QuadExpiration(12),
    ),
    ("Election Day(US)", EventDay::ElectionDay),
    ("FOMC Decision Day", EventDay::FomcDecision),
    ("Good Friday", EventDay::Holiday(Holiday::GoodFriday)),
    (
        "Independence Day",
        EventDay::Holiday(Holiday::IndependenceDay),
    ),
    ("June Quad Option Expiration", EventDay::QuadExpiration(6)),
    ("Labor Day", EventDay::Holiday(Holiday::LaborDay)),
    ("MLK Jr. Day", EventDay::Holiday(Holiday::MlkDay)),
    ("March Quad Option Expiration", EventDay::QuadExpiration(3)),
    ("Memorial Day", EventDay::Holiday(Holiday::MemorialDay)),
    ("Monthly Option Expiration", EventDay::MonthlyExpiration),
    ("New Year's Day", EventDay::Holiday(Holiday::NewYearsDay)),
    ("President's Day", EventDay::Holiday(Holiday::PresidentsDay)),
    (
        "September Quad Option Expiration",
        EventDay::QuadExpiration(9),
    ),
    ("Thanksgiving Day", EventDay::Holiday(Holiday::Thanksgiving)),
];

/// A name of [`NAMES`], case-insensitive; both spellings of Election Day.
pub fn parse(name: &str) -> Option<EventDay> {
    let squeeze = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_lowercase()
    };
    let wanted = squeeze(name);
    NAMES
        .iter()
        .find(|(n, _)| squeeze(n) == wanted)
        .map(|(_, e)| *e)
}

/// The session on or before `d`.
fn session_on_or_before(mut d: NaiveDate) -> NaiveDate {
    while !is_session(d) {
        d -= Duration::days(1);
    }
    d
}

/// The monthly option expiration: the third Friday, or the session before it
/// when that Friday is a holiday.
pub fn monthly_expiration(year: i32, month: u32) -> NaiveDate {
    session_on_or_before(nth_weekday(year, month, Weekday::Fri, 3))
}

pub fn election_day(year: i32) -> NaiveDate {
    nth_weekday(year, 11, Weekday::Mon, 1) + Duration::days(1)
}

/// The calendar date of a holiday by its rule, before weekend observance
/// and whether or not the exchange closed that year (MLK Day traded until
/// 1998): seasonality measures the sessions around the day itself.
fn holiday_date(h: Holiday, year: i32) -> Option<NaiveDate> {
    let ymd = |m, d| NaiveDate::from_ymd_opt(year, m, d);
    match h {
        Holiday::NewYearsDay => ymd(1, 1),
        Holiday::IndependenceDay => ymd(7, 4),
        Holiday::Christmas => ymd(12, 25),
        Holiday::Juneteenth => ymd(6, 19),
        Holiday::MlkDay => Some(nth_weekday(year, 1, Weekday::Mon, 3)),
        other => other.observed(year),
    }
}

/// Dates of an event in `years`, sorted; FOMC days come from `fomc`.
pub fn dates(
    event: EventDay,
    years: std::ops::RangeInclusive<i32>,
    fomc: &[NaiveDate],
) -> Vec<NaiveDate> {
    let mut out: Vec<NaiveDate> = match event {
        EventDay::Holiday(h) => years.filter_map(|y| holiday_date(h, y)).collect(),
        EventDay::MonthlyExpiration => years
            .flat_map(|y| (1..=12).map(move |m| monthly_expiration(y, m)))
            .collect(),
        EventDay::QuadExpiration(m) => years.map(|y| monthly_expiration(y, m)).collect(),
        EventDay::ElectionDay => years.map(election_day).collect(),
        EventDay::FomcDecision => fomc
            .iter()
            .copied()
            .filter(|d| years.contains(&d.year()))
            .collect(),
    };
    out.sort();
    out
}

/// The first event day strictly after `after`, and its name (the default
/// holiday of the seasonality endpoints).
pub fn next_event(after: NaiveDate, fomc: &[NaiveDate]) -> (&'static str, NaiveDate) {
    NAMES
        .iter()
        .filter_map(|(name, e)| {
            dates(*e, after.year()..=after.year() + 1, fomc)
                .into_iter()
                .find(|d| *d > after)
                .map(|d| (*name, d))
        })
        .min_by_key(|(_, d)| *d)
        .expect("holidays recur every year")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn expirations_move_back_from_holidays() {
        // Good Friday fell on the third Friday of April in 2019 and 2022.
        assert_eq!(monthly_expiration(2019, 4), d("2019-04-18"));
        assert_eq!(monthly_expiration(2022, 4), d("2022-04-14"));
        assert_eq!(monthly_expiration(2024, 1), d("2024-01-19"));
        assert_eq!(
            dates(EventDay::QuadExpiration(3), 2024..=2025, &[]),
            vec![d("2024-03-15"), d("2025-03-21")]
        );
        assert_eq!(
            dates(EventDay::MonthlyExpiration, 2023..=2023, &[]).len(),
            12
        );
        // Juneteenth 2026 is a Friday and the third Friday of June: moved to Thursday.
        assert_eq!(monthly_expiration(2026, 6), d("2026-06-18"));
    }

    #[test]
    fn election_days() {
        assert_eq!(election_day(2020), d("2020-11-03"));
        assert_eq!(election_day(2024), d("2024-11-05"));
        assert_eq!(election_day(2022), d("2022-11-08"));
        assert_eq!(election_day(2026), d("2026-11-03"));
    }

    #[test]
    fn names_parse_in_every_spelling() {
        assert_eq!(parse("Election Day(US)"), Some(EventDay::ElectionDay));
        assert_eq!(parse("Election Day (US)"), Some(EventDay::ElectionDay));
        assert_eq!(
            parse("thanksgiving day"),
            Some(EventDay::Holiday(Holiday::Thanksgiving))
        );
        assert_eq!(parse("Boxing Day"), None);
        assert_eq!(NAMES.len(), 16);
    }

    #[test]
    fn holidays_use_their_calendar_dates_and_fomc_comes_from_the_table() {
        // Christmas 2021 was a Saturday: the day studied is the 25th itself.
        assert_eq!(
            dates(EventDay::Holiday(Holiday::Christmas), 2021..=2021, &[]),
            vec![d("2021-12-25")]
        );
        // MLK Day was a trading day before 1998; the day is still the third Monday.
        assert_eq!(
            dates(EventDay::Holiday(Holiday::MlkDay), 1995..=1995, &[]),
            vec![d("1995-01-16")]
        );
        assert_eq!(
            dates(EventDay::Holiday(Holiday::Thanksgiving), 2026..=2026, &[]),
            vec![d("2026-11-26")]
        );
        let fomc = [d("2025-12-10"), d("2026-01-28"), d("2026-03-18")];
        assert_eq!(
            dates(EventDay::FomcDecision, 2026..=2026, &fomc),
            vec![d("2026-01-28"), d("2026-03-18")]
        );
        // After the sample set's last day, 2026-11-20, the next event is Thanksgiving.
        assert_eq!(
            next_event(d("2026-11-20"), &fomc),
            ("Thanksgiving Day", d("2026-11-26"))
        );
        assert_eq!(next_event(d("2026-12-31"), &fomc).0, "New Year's Day");
    }
}
