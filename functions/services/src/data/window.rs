//! What of an indicator's history an account may read: a trial account
//! only its last [`TRIAL_RECORDS`] readings. History answers are written from
//! [`Records`], and only a [`Readable`] makes them, so every route that
//! answers readings (full history, limited days, one date, snapshots, bulk,
//! intraday, custom indicators) is held to the trial's window by
//! construction rather than by each remembering to clip.

use chrono::NaiveDate;
use platform::accounts::Account;
use platform::marketdata::IndicatorSeries;
use std::ops::Range;
use std::sync::Arc;

/// Trial accounts read at most this many of any series' latest readings.
pub const TRIAL_RECORDS: usize = 90;

// A trial's window lies within the readings kept per indicator, so answers
// over every indicator read only those.
const _: () = assert!(platform::marketdata::TAIL >= TRIAL_RECORDS);

/// A series as one account may read it.
#[derive(Debug, Clone)]
pub struct Readable {
    series: Arc<IndicatorSeries>,
    /// The first reading the account may see.
    first: usize,
}

/// Readings of a [`Readable`], in order; always within what the account may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Records(Range<usize>);

impl Records {
    pub fn range(&self) -> Range<usize> {
        self.0.clone()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Readable {
    pub fn new(account: &Account, series: Arc<IndicatorSeries>) -> Self {
        let len = series.time.len();
        let first = if account.plan.trial {
            len.saturating_sub(TRIAL_RECORDS)
        } else {
            0
        };
        Readable { series, first }
    }

    /// The whole series, for running statistics that start before the
    /// readings answered (a month's average return to date).
    pub fn series(&self) -> &IndicatorSeries {
        &self.series
    }

    fn len(&self) -> usize {
        self.series.time.len()
    }

    /// Every reading the account may see.
    pub fn all(&self) -> Records {
        Records(self.first..self.len())
    }

    /// The latest `n` of them.
    pub fn last(&self, n: usize) -> Records {
        Records(self.len().saturating_sub(n).max(self.first)..self.len())
    }

    /// Those from index `start` on.
    pub fn from(&self, start: usize) -> Records {
        Records(start.clamp(self.first, self.len())..self.len())
    }

    /// The reading on `d`, if there is one the account may see.
    pub fn on(&self, d: NaiveDate) -> Records {
        let t = &self.series.time;
        let i = self.first + t[self.first..].partition_point(|t| t.date() < d);
        if i < t.len() && t[i].date() == d {
            Records(i..i + 1)
        } else {
            Records(i..i)
        }
    }

    /// The latest reading's index.
    pub fn latest(&self) -> Option<usize> {
        self.all().0.last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform::accounts::plan;

    fn account(code: &str) -> Account {
        Account {
            email: "a@b.test".into(),
            plan: plan(code).unwrap(),
            selected_indicators: vec![],
            custom_indicators: vec![],
        }
    }

    fn series(n: usize) -> Arc<IndicatorSeries> {
        let day0 = NaiveDate::from_ymd_opt(2000, 1, 3).unwrap();
        let time = (0..n)
            .map(|k| {
                (day0 + chrono::TimeDelta::days(k as i64))
                    .and_hms_opt(0, 0, 0)
                    .unwrap()
            })
            .collect();
        Arc::new(IndicatorSeries {
            time,
            close: (0..n).map(|k| k as f64).collect(),
            sentiment: vec![None; n],
        })
    }

    #[test]
    fn a_trial_reads_the_last_ninety_whatever_it_asks() {
        let (trial, pro) = (account("trial"), account("pro"));
        let s = series(1000);
        let t = Readable::new(&trial, s.clone());
        assert_eq!(t.all().range(), 910..1000);
        assert_eq!(t.last(100_000).range(), 910..1000);
        assert_eq!(t.last(30).range(), 970..1000);
        assert_eq!(t.from(0).range(), 910..1000);
        assert_eq!(t.from(950).range(), 950..1000);
        let day =
            |k: i64| NaiveDate::from_ymd_opt(2000, 1, 3).unwrap() + chrono::TimeDelta::days(k);
        assert!(
            t.on(day(10)).is_empty(),
            "an old date is outside the window"
        );
        assert_eq!(t.on(day(950)).range(), 950..951);
        assert_eq!(t.latest(), Some(999));
        let p = Readable::new(&pro, s);
        assert_eq!(p.all().range(), 0..1000);
        assert_eq!(p.on(day(10)).range(), 10..11);
        assert_eq!(p.last(5).range(), 995..1000);
        let short = Readable::new(&trial, series(40));
        assert_eq!(short.all().range(), 0..40);
        assert_eq!(Readable::new(&trial, series(0)).latest(), None);
    }
}
