//! OHLCV bars held as columns, and resampling from daily to weekly and monthly.

use chrono::{Datelike, NaiveDate, NaiveDateTime};
use std::fmt;
use std::str::FromStr;

/// Bar frequencies the platform serves. Weekly and monthly are always derived
/// from daily bars, so one stored series answers all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Frequency {
    Min30,
    /// Hourly bars from 30-minute ones: 09:30-10:29, ..., 15:30-16:00 (7 a session).
    Hourly,
    Daily,
    Weekly,
    Monthly,
}

impl Frequency {
    /// Bars per year, used to annualise per-bar statistics.
    pub fn bars_per_year(self) -> f64 {
        match self {
            Frequency::Min30 => 252.0 * 13.0,
            Frequency::Hourly => 252.0 * 7.0,
            Frequency::Daily => 252.0,
            Frequency::Weekly => 52.0,
            Frequency::Monthly => 12.0,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Min30 => "30min",
            Frequency::Hourly => "Hourly",
            Frequency::Daily => "Daily",
            Frequency::Weekly => "Weekly",
            Frequency::Monthly => "Monthly",
        }
    }
}

impl fmt::Display for Frequency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Frequency {
    type Err = BarsError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "30min" | "min30" | "intraday" => Ok(Frequency::Min30),
            "hourly" | "h" => Ok(Frequency::Hourly),
            "daily" | "d" => Ok(Frequency::Daily),
            "weekly" | "w" => Ok(Frequency::Weekly),
            "monthly" | "m" => Ok(Frequency::Monthly),
            _ => Err(BarsError::UnknownFrequency(s.to_string())),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BarsError {
    #[error("unknown frequency '{0}' (expected Daily, Weekly, Monthly or 30min)")]
    UnknownFrequency(String),
    #[error("columns have different lengths")]
    RaggedColumns,
    #[error("bar {index} ({time}): {problem}")]
    BadBar {
        index: usize,
        time: NaiveDateTime,
        problem: &'static str,
    },
}

/// A series of bars as parallel columns. Times are exchange-local; a daily bar
/// sits at midnight of its session date. Weekly and monthly bars carry the time
/// of their last daily bar, so a resampled bar is never dated before it is known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bars {
    pub time: Vec<NaiveDateTime>,
    pub open: Vec<f64>,
    pub high: Vec<f64>,
    pub low: Vec<f64>,
    pub close: Vec<f64>,
    pub volume: Vec<f64>,
}

impl Bars {
    pub fn with_capacity(n: usize) -> Self {
        Bars {
            time: Vec::with_capacity(n),
            open: Vec::with_capacity(n),
            high: Vec::with_capacity(n),
            low: Vec::with_capacity(n),
            close: Vec::with_capacity(n),
            volume: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    pub fn push(&mut self, time: NaiveDateTime, o: f64, h: f64, l: f64, c: f64, v: f64) {
        self.time.push(time);
        self.open.push(o);
        self.high.push(h);
        self.low.push(l);
        self.close.push(c);
        self.volume.push(v);
    }

    /// Session date of bar `i`.
    pub fn date(&self, i: usize) -> NaiveDate {
        self.time[i].date()
    }

    /// Checks the invariants every stored series keeps: equal column lengths,
    /// strictly increasing times, finite positive prices, `low <= open, close <= high`,
    /// non-negative volume.
    pub fn validate(&self) -> Result<(), BarsError> {
        let n = self.time.len();
        if [&self.open, &self.high, &self.low, &self.close, &self.volume]
            .iter()
            .any(|c| c.len() != n)
        {
            return Err(BarsError::RaggedColumns);
        }
        for i in 0..n {
            let bad = |problem| BarsError::BadBar {
                index: i,
                time: self.time[i],
                problem,
            };
            if i > 0 && self.time[i] <= self.time[i - 1] {
                return Err(bad("time is not after the previous bar"));
            }
            let (o, h, l, c, v) = (
                self.open[i],
                self.high[i],
                self.low[i],
                self.close[i],
                self.volume[i],
            );
            if ![o, h, l, c, v].iter().all(|x| x.is_finite()) {
                return Err(bad("value is not a finite number"));
            }
            if o <= 0.0 || h <= 0.0 || l <= 0.0 || c <= 0.0 {
                return Err(bad("price is not positive"));
            }
            if h < l {
                return Err(bad("high is below low"));
            }
            if h < o.max(c) || l > o.min(c) {
                return Err(bad("open or close outside the high-low range"));
            }
            if v < 0.0 {
                return Err(bad("volume is negative"));
            }
        }
        Ok(())
    }

    /// Bars whose session date lies in `[start, end]` (either bound optional).
    pub fn slice_dates(&self, start: Option<NaiveDate>, end: Option<NaiveDate>) -> Bars {
        let lo = match start {
            Some(s) => self.time.partition_point(|t| t.date() < s),
            None => 0,
        };
        let hi = match end {
            Some(e) => self.time.partition_point(|t| t.date() <= e),
            None => self.len(),
        };
        let hi = hi.max(lo);
        Bars {
            time: self.time[lo..hi].to_vec(),
            open: self.open[lo..hi].to_vec(),
            high: self.high[lo..hi].to_vec(),
            low: self.low[lo..hi].to_vec(),
            close: self.close[lo..hi].to_vec(),
            volume: self.volume[lo..hi].to_vec(),
        }
    }

    /// Resamples daily bars to weekly or monthly, and 30-minute bars to hourly
    /// (hours counted from the 09:30 open). Other targets pass through.
    pub fn resample(&self, freq: Frequency) -> Bars {
        match freq {
            Frequency::Weekly => self.group_by(|t| {
                let w = t.date().iso_week();
                (w.year(), w.week(), 0)
            }),
            Frequency::Monthly => self.group_by(|t| (t.year(), t.month(), 0)),
            Frequency::Hourly => self.group_by(|t| {
                let minutes = (t.time()
                    - chrono::NaiveTime::from_hms_opt(9, 30, 0).expect("valid"))
                .num_minutes();
                (t.year(), t.ordinal(), minutes.div_euclid(60) as u32)
            }),
            Frequency::Daily | Frequency::Min30 => self.clone(),
        }
    }

    /// Aggregates consecutive bars sharing a period key: first open, max high,
    /// min low, last close, summed volume, time of the last bar.
    fn group_by<K: PartialEq>(&self, key: impl Fn(NaiveDateTime) -> K) -> Bars {
        let mut out = Bars::default();
        let mut i = 0;
        while i < self.len() {
            let k = key(self.time[i]);
            let mut j = i;
            let (mut h, mut l, mut v) = (self.high[i], self.low[i], 0.0);
            while j < self.len() && key(self.time[j]) == k {
                h = h.max(self.high[j]);
                l = l.min(self.low[j]);
                v += self.volume[j];
                j += 1;
            }
            out.push(self.time[j - 1], self.open[i], h, l, self.close[j - 1], v);
            i = j;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDateTime {
        NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
    }

    fn sample() -> Bars {
        let mut b = Bars::default();
        // Thu, Fri of ISO week 52 of 2020; Mon..Wed of week 53; Mon 2021-01-04 of week 1.
        b.push(day("2020-12-24"), 10.0, 11.0, 9.0, 10.5, 100.0);
        b.push(day("2020-12-28"), 10.5, 12.0, 10.0, 11.5, 200.0);
        b.push(day("2020-12-29"), 11.5, 11.8, 10.9, 11.0, 50.0);
        b.push(day("2020-12-31"), 11.0, 11.2, 8.0, 9.0, 25.0);
        b.push(day("2021-01-04"), 9.0, 9.5, 8.5, 9.2, 10.0);
        b
    }

    #[test]
    fn weekly_groups_by_iso_week_and_keeps_last_date() {
        let w = sample().resample(Frequency::Weekly);
        assert_eq!(w.len(), 3);
        assert_eq!(
            w.time,
            vec![day("2020-12-24"), day("2020-12-31"), day("2021-01-04")]
        );
        assert_eq!(w.open[1], 10.5);
        assert_eq!(w.high[1], 12.0);
        assert_eq!(w.low[1], 8.0);
        assert_eq!(w.close[1], 9.0);
        assert_eq!(w.volume[1], 275.0);
    }

    #[test]
    fn monthly_groups_by_calendar_month() {
        let m = sample().resample(Frequency::Monthly);
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m.open[0], m.high[0], m.low[0], m.close[0]),
            (10.0, 12.0, 8.0, 9.0)
        );
        assert_eq!(m.volume[0], 375.0);
        assert_eq!(m.time[1], day("2021-01-04"));
    }

    #[test]
    fn slice_is_inclusive_on_both_ends() {
        let s = sample();
        let d = |x: &str| Some(NaiveDate::parse_from_str(x, "%Y-%m-%d").unwrap());
        let sl = s.slice_dates(d("2020-12-28"), d("2020-12-31"));
        assert_eq!(sl.len(), 3);
        assert_eq!(s.slice_dates(d("2021-02-01"), None).len(), 0);
        assert_eq!(s.slice_dates(d("2021-01-05"), d("2020-01-01")).len(), 0);
    }

    #[test]
    fn validate_names_the_broken_invariant() {
        let mut b = sample();
        assert_eq!(b.validate(), Ok(()));
        b.high[2] = 10.0; // below low 10.9
        let err = b.validate().unwrap_err().to_string();
        assert!(err.contains("high is below low"), "{err}");
        let mut b = sample();
        b.time.swap(0, 1);
        assert!(b.validate().unwrap_err().to_string().contains("not after"));
    }

    #[test]
    fn hourly_pairs_half_hours_from_the_open() {
        let mut b = Bars::default();
        let d = NaiveDate::from_ymd_opt(2024, 3, 1).unwrap();
        for k in 0..13 {
            let t = d.and_hms_opt(9, 30, 0).unwrap() + chrono::TimeDelta::minutes(30 * k);
            let p = 100.0 + k as f64;
            b.push(t, p, p + 0.5, p - 0.5, p + 0.25, 10.0);
        }
        let h = b.resample(Frequency::Hourly);
        assert_eq!(h.len(), 7);
        assert_eq!(
            h.time[0],
            d.and_hms_opt(10, 0, 0).unwrap(),
            "dated by its last half hour"
        );
        assert_eq!(
            (h.open[0], h.high[0], h.low[0], h.close[0], h.volume[0]),
            (100.0, 101.5, 99.5, 101.25, 20.0)
        );
        assert_eq!(
            (h.time[6], h.open[6], h.volume[6]),
            (d.and_hms_opt(15, 30, 0).unwrap(), 112.0, 10.0)
        );
    }

    #[test]
    fn frequency_parses_case_insensitively() {
        assert_eq!("WEEKLY".parse::<Frequency>(), Ok(Frequency::Weekly));
        assert!("yearly".parse::<Frequency>().is_err());
    }
}
