//! Seasonality statistics of one symbol's daily closes: percent close-to-close
//! returns grouped by weekday, month, calendar day, trading day, around event
//! days, and a one-dollar curve of a yearly holding window.
//!
//! Trading day N of a year (or month) is the symbol's N-th bar in it, so the
//! numbering follows the symbol's own sessions. Year ranges select returns by
//! the date of the bar that ends them.

use crate::calendar::sessions;
use chrono::{Datelike, Month, NaiveDate, Weekday};
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// Trading days of year the service reports (1-252).
pub const TRADING_DAYS: u16 = 252;

/// Summary of a group of percent returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub count: usize,
    pub mean: f64,
    pub max: f64,
    pub min: f64,
    /// Percent of returns above zero.
    pub positive_pct: f64,
}

#[derive(Debug, Clone, Copy)]
struct Acc {
    n: usize,
    sum: f64,
    max: f64,
    min: f64,
    pos: usize,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            n: 0,
            sum: 0.0,
            max: f64::NEG_INFINITY,
            min: f64::INFINITY,
            pos: 0,
        }
    }
}

impl Acc {
    fn add(&mut self, r: f64) {
        self.n += 1;
        self.sum += r;
        self.max = self.max.max(r);
        self.min = self.min.min(r);
        self.pos += usize::from(r > 0.0);
    }

    fn stats(&self) -> Stats {
        let n = self.n as f64;
        Stats {
            count: self.n,
            mean: self.sum / n,
            max: self.max,
            min: self.min,
            positive_pct: self.pos as f64 * 100.0 / n,
        }
    }
}

/// Groups returns by key and summarises each non-empty group, in key order.
fn grouped<K: Ord>(items: impl Iterator<Item = (K, f64)>) -> Vec<(K, Stats)> {
    let mut groups: BTreeMap<K, Acc> = BTreeMap::new();
    for (k, r) in items {
        groups.entry(k).or_default().add(r);
    }
    groups.into_iter().map(|(k, a)| (k, a.stats())).collect()
}

/// How `performance-by-day-of-single-month` numbers the days of a month.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayCategory {
    /// The day of the calendar month (1-31).
    Calendar,
    /// The symbol's N-th session of the month.
    Trading,
}

/// One symbol's closes prepared for every seasonality view.
#[derive(Debug, Clone)]
pub struct Seasonal {
    dates: Vec<NaiveDate>,
    close: Vec<f64>,
    /// Percent return ending at each bar; NaN at the first.
    ret: Vec<f64>,
    day_of_year: Vec<u16>,
    day_of_month: Vec<u8>,
}

impl Seasonal {
    /// `dates` ascending, one close each.
    pub fn new(dates: Vec<NaiveDate>, close: Vec<f64>) -> Seasonal {
        assert_eq!(dates.len(), close.len(), "one close per date");
        let n = dates.len();
        let mut ret = Vec::with_capacity(n);
        let mut day_of_year = Vec::with_capacity(n);
        let mut day_of_month = Vec::with_capacity(n);
        for i in 0..n {
            let (same_year, same_month) = match i.checked_sub(1).map(|p| dates[p]) {
                Some(p) => (
                    p.year() == dates[i].year(),
                    p.year() == dates[i].year() && p.month() == dates[i].month(),
                ),
                None => (false, false),
            };
            ret.push(if i == 0 {
                f64::NAN
            } else {
                (close[i] / close[i - 1] - 1.0) * 100.0
            });
            day_of_year.push(if same_year { day_of_year[i - 1] + 1 } else { 1 });
            day_of_month.push(if same_month {
                day_of_month[i - 1] + 1
            } else {
                1
            });
        }
        Seasonal {
            dates,
            close,
            ret,
            day_of_year,
            day_of_month,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.dates.len() < 2
    }

    /// Indices of bars with a return whose date lies in `years`.
    fn in_years(&self, years: &RangeInclusive<i32>) -> impl Iterator<Item = usize> + '_ {
        let (lo, hi) = (*years.start(), *years.end());
        let from = self.dates.partition_point(|d| d.year() < lo).max(1);
        let to = self.dates.partition_point(|d| d.year() <= hi);
        from..to.max(from)
    }

    /// Whether any return falls in `years`.
    pub fn has_returns(&self, years: &RangeInclusive<i32>) -> bool {
        self.in_years(years).next().is_some()
    }

    /// Daily returns by weekday, Monday to Friday (weekend bars are left out).
    pub fn by_weekday(&self, years: &RangeInclusive<i32>) -> Vec<(Weekday, Stats)> {
        grouped(
            self.in_years(years)
                .map(|i| (self.dates[i].weekday(), self.ret[i]))
                .filter(|(w, _)| !matches!(w, Weekday::Sat | Weekday::Sun))
                .map(|(w, r)| (w.num_days_from_monday(), r)),
        )
        .into_iter()
        .map(|(w, s)| (weekday_from_monday(w), s))
        .collect()
    }

    /// Monthly returns (last close of the month over the last close of the
    /// month before) by month 1-12. A month counts once complete: the series
    /// continues past it, or its last bar is the month's last NYSE session.
    pub fn by_month(&self, years: &RangeInclusive<i32>) -> Vec<(u32, Stats)> {
        let n = self.dates.len();
        // Index of the last bar of each month.
        let ends: Vec<usize> = (0..n)
            .filter(|&i| i + 1 == n || self.dates[i + 1].month() != self.dates[i].month())
            .collect();
        let last_complete = |i: usize| {
            i + 1 < n || {
                let d = self.dates[i];
                let first = d.with_day(1).expect("day 1");
                sessions(first, last_day_of_month(d)).last() == Some(&d)
            }
        };
        grouped(
            ends.windows(2)
                .filter(|w| years.contains(&self.dates[w[1]].year()) && last_complete(w[1]))
                .map(|w| {
                    let (a, b) = (self.close[w[0]], self.close[w[1]]);
                    (self.dates[w[1]].month(), (b / a - 1.0) * 100.0)
                }),
        )
    }

    /// Daily returns by calendar (month, day).
    pub fn by_day_of_month(&self, years: &RangeInclusive<i32>) -> Vec<((u32, u32), Stats)> {
        grouped(
            self.in_years(years)
                .map(|i| ((self.dates[i].month(), self.dates[i].day()), self.ret[i])),
        )
    }

    /// Daily returns by trading day of year, 1-252 (later days are left out).
    pub fn by_day_of_year(&self, years: &RangeInclusive<i32>) -> Vec<(u16, Stats)> {
        grouped(
            self.in_years(years)
                .filter(|&i| self.day_of_year[i] <= TRADING_DAYS)
                .map(|i| (self.day_of_year[i], self.ret[i])),
        )
    }

    /// Daily returns of one month (1-12) by calendar day or trading day of the month.
    pub fn single_month(
        &self,
        years: &RangeInclusive<i32>,
        month: u32,
        category: DayCategory,
    ) -> Vec<(u32, Stats)> {
        grouped(
            self.in_years(years)
                .filter(|&i| self.dates[i].month() == month)
                .map(|i| {
                    let day = match category {
                        DayCategory::Calendar => self.dates[i].day(),
                        DayCategory::Trading => u32::from(self.day_of_month[i]),
                    };
                    (day, self.ret[i])
                }),
        )
    }

    /// Daily returns at each session offset from `-shift` to `shift` around
    /// the events. Offset 0 is the event's session, or the first session after
    /// it when the market is closed that day (its return spans the closure).
    pub fn around(&self, events: &[NaiveDate], shift: usize) -> Vec<(i64, Stats)> {
        let n = self.dates.len();
        let shift = shift as i64;
        let mut accs = vec![Acc::default(); (2 * shift + 1) as usize];
        for e in events {
            let zero = self.dates.partition_point(|d| d < e);
            if zero >= n {
                continue;
            }
            for k in -shift..=shift {
                let i = zero as i64 + k;
                if i >= 1 && i < n as i64 {
                    accs[(k + shift) as usize].add(self.ret[i as usize]);
                }
            }
        }
        (-shift..=shift)
            .zip(accs)
            .filter(|(_, a)| a.n > 0)
            .map(|(k, a)| (k, a.stats()))
            .collect()
    }

    /// Trading day of year of the last bar on or before `date`.
    pub fn trading_day_of(&self, date: NaiveDate) -> Option<u16> {
        let i = self.dates.partition_point(|d| *d <= date).checked_sub(1)?;
        Some(self.day_of_year[i])
    }

    /// Growth of one dollar held, every year of `years`, from the close of
    /// trading day `entry_day` for `holding_days` sessions (into the next year
    /// when the window runs past the year's end), compounding across years.
    /// One point per session held; overlapping windows hold each session once.
    pub fn one_dollar_curve(
        &self,
        years: &RangeInclusive<i32>,
        entry_day: u16,
        holding_days: usize,
    ) -> Vec<(NaiveDate, f64)> {
        let n = self.dates.len();
        let mut held = vec![false; n];
        for i in 0..n {
            if self.day_of_year[i] == entry_day && years.contains(&self.dates[i].year()) {
                let end = (i + holding_days).min(n - 1);
                held[i + 1..=end].iter_mut().for_each(|h| *h = true);
            }
        }
        let mut equity = 1.0;
        (0..n)
            .filter(|&i| held[i])
            .map(|i| {
                equity *= 1.0 + self.ret[i] / 100.0;
                (self.dates[i], equity)
            })
            .collect()
    }
}

fn weekday_from_monday(n: u32) -> Weekday {
    [
        Weekday::Mon,
        Weekday::Tue,
        Weekday::Wed,
        Weekday::Thu,
        Weekday::Fri,
    ][n as usize]
}

fn last_day_of_month(d: NaiveDate) -> NaiveDate {
    let (y, m) = if d.month() == 12 {
        (d.year() + 1, 1)
    } else {
        (d.year(), d.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1).expect("first of month") - chrono::Duration::days(1)
}

/// The English month name of 1-12.
pub fn month_name(m: u32) -> &'static str {
    u8::try_from(m)
        .ok()
        .and_then(|m| Month::try_from(m).ok())
        .map_or("", |m| m.name())
}

/// A month from its English name (any case, three-letter abbreviations too) or number.
pub fn parse_month(s: &str) -> Option<u32> {
    let s = s.trim();
    match s.parse::<u32>() {
        Ok(m) => (1..=12).contains(&m).then_some(m),
        Err(_) => s.parse::<Month>().ok().map(|m| m.number_from_month()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    /// Closes on the listed dates.
    fn series(points: &[(&str, f64)]) -> Seasonal {
        Seasonal::new(
            points.iter().map(|(s, _)| d(s)).collect(),
            points.iter().map(|(_, c)| *c).collect(),
        )
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn weekday_month_and_calendar_day_by_hand() {
        // Mon 2024-01-29 .. Fri 2024-02-02, then Mon 2024-02-05 .. Thu 2024-02-29, Fri 2024-03-01.
        let s = series(&[
            ("2024-01-29", 100.0),
            ("2024-01-30", 110.0), // Tue +10%
            ("2024-01-31", 99.0),  // Wed -10%
            ("2024-02-01", 99.0),  // Thu 0%
            ("2024-02-02", 108.9), // Fri +10%
            ("2024-02-05", 98.01), // Mon -10%
            ("2024-02-29", 107.811),
            ("2024-03-01", 107.811),
        ]);
        let y = 2024..=2024;
        let w = s.by_weekday(&y);
        assert_eq!(w[0].0, Weekday::Mon);
        assert!(close(w[0].1.mean, -10.0) && w[0].1.positive_pct == 0.0);
        let thu = w.iter().find(|(d, _)| *d == Weekday::Thu).unwrap().1;
        // Thursday: 0% (Feb 1) and +10% (Feb 29).
        assert!(close(thu.mean, 5.0) && close(thu.positive_pct, 50.0));
        assert!(close(thu.max, 10.0) && thu.min == 0.0 && thu.count == 2);
        // Months: February = 107.811 / 99 - 1 = 8.9%; March is incomplete (series ends Mar 1).
        let m = s.by_month(&y);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].0, 2);
        assert!(close(m[0].1.mean, 8.9));
        let dom = s.by_day_of_month(&y);
        assert_eq!(dom[0].0, (1, 30));
        assert!(close(dom[0].1.max, 10.0));
        // The trading day of year of 2024-02-05 is the 6th bar of 2024.
        assert_eq!(s.trading_day_of(d("2024-02-05")), Some(6));
        assert_eq!(s.trading_day_of(d("2024-02-04")), Some(5));
        let feb = s.single_month(&y, 2, DayCategory::Trading);
        assert_eq!(
            feb.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        let feb = s.single_month(&y, 2, DayCategory::Calendar);
        assert_eq!(
            feb.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            vec![1, 2, 5, 29]
        );
    }

    #[test]
    fn around_a_closed_day_starts_at_the_next_session() {
        // Closed on 2024-07-04 (Thursday).
        let s = series(&[
            ("2024-07-01", 100.0),
            ("2024-07-02", 101.0),
            ("2024-07-03", 102.01),
            ("2024-07-05", 100.99),
            ("2024-07-08", 100.99),
        ]);
        let a = s.around(&[d("2024-07-04")], 2);
        let offsets: Vec<i64> = a.iter().map(|(k, _)| *k).collect();
        assert_eq!(offsets, vec![-2, -1, 0, 1]);
        assert!(close(a[2].1.mean, (100.99 / 102.01 - 1.0) * 100.0));
        assert!(close(a[0].1.mean, 1.0) && close(a[1].1.mean, 1.0));
    }

    #[test]
    fn one_dollar_curve_compounds_held_sessions_into_the_next_year() {
        let s = series(&[
            ("2023-12-28", 100.0),
            ("2023-12-29", 110.0),
            ("2024-01-02", 121.0),
            ("2024-01-03", 108.9),
            ("2024-01-04", 108.9),
        ]);
        // Entry on trading day 1 of each year, held two sessions.
        let c = s.one_dollar_curve(&(2023..=2024), 1, 2);
        let dates: Vec<NaiveDate> = c.iter().map(|(d, _)| *d).collect();
        // 2023: entry 12-28 (first bar of 2023 here), holds 12-29 and 01-02;
        // 2024: entry 01-02, holds 01-03 and 01-04.
        assert_eq!(
            dates,
            vec![
                d("2023-12-29"),
                d("2024-01-02"),
                d("2024-01-03"),
                d("2024-01-04")
            ]
        );
        assert!(close(c[1].1, 1.21));
        assert!(close(c[3].1, 1.089));
    }

    #[test]
    fn month_names() {
        assert_eq!(parse_month("march"), Some(3));
        assert_eq!(parse_month("Sep"), Some(9));
        assert_eq!(parse_month("12"), Some(12));
        assert_eq!(parse_month("13"), None);
        assert_eq!(parse_month("Smarch"), None);
        assert_eq!(month_name(1), "January");
    }
}
