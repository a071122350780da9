//! Custom indicators: two indicator series combined, resampled to a
//! timeframe, optionally smoothed by a moving average.

use crate::Frequency;
use crate::rules::{MaKind, moving_average};
use chrono::{Datelike, NaiveDateTime, Timelike};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    Ratio,
    Difference,
    Sum,
    Product,
    Average,
}

impl Combine {
    pub fn parse(s: &str) -> Option<Combine> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ratio" | "divide" | "/" => Some(Combine::Ratio),
            "difference" | "spread" | "subtract" | "-" => Some(Combine::Difference),
            "sum" | "add" | "+" => Some(Combine::Sum),
            "product" | "multiply" | "*" => Some(Combine::Product),
            "average" | "mean" => Some(Combine::Average),
            _ => None,
        }
    }

    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Combine::Ratio => a / b,
            Combine::Difference => a - b,
            Combine::Sum => a + b,
            Combine::Product => a * b,
            Combine::Average => (a + b) / 2.0,
        }
    }
}

/// `a` combined with `b` on `a`'s times, `b` carried forward from its latest
/// reading at or before each time; times before `b`'s first reading, and
/// non-finite results (a ratio over zero), are left out.
pub fn combine(
    a_time: &[NaiveDateTime],
    a: &[f64],
    b_time: &[NaiveDateTime],
    b: &[f64],
    how: Combine,
) -> (Vec<NaiveDateTime>, Vec<f64>) {
    let (mut time, mut value) = (Vec::with_capacity(a.len()), Vec::with_capacity(a.len()));
    let mut j = 0;
    for (t, x) in a_time.iter().zip(a) {
        while j < b_time.len() && b_time[j] <= *t {
            j += 1;
        }
        if j == 0 {
            continue;
        }
        let v = how.apply(*x, b[j - 1]);
        if v.is_finite() {
            time.push(*t);
            value.push(v);
        }
    }
    (time, value)
}

/// The last value of each week or month (daily and finer pass through).
pub fn resample_last(
    time: &[NaiveDateTime],
    value: &[f64],
    freq: Frequency,
) -> (Vec<NaiveDateTime>, Vec<f64>) {
    let key = |t: &NaiveDateTime| match freq {
        Frequency::Weekly => {
            let w = t.date().iso_week();
            (w.year(), w.week())
        }
        Frequency::Monthly => (t.year(), t.month()),
        _ => (
            t.year(),
            t.ordinal() * 100_000 + t.num_seconds_from_midnight(),
        ),
    };
    let (mut ot, mut ov) = (Vec::new(), Vec::new());
    for i in 0..time.len() {
        if i + 1 == time.len() || key(&time[i + 1]) != key(&time[i]) {
            ot.push(time[i]);
            ov.push(value[i]);
        }
    }
    (ot, ov)
}

/// The whole calculation; `ma` of 0 or 1 means no smoothing.
pub fn calculate(
    a: (&[NaiveDateTime], &[f64]),
    b: (&[NaiveDateTime], &[f64]),
    how: Combine,
    freq: Frequency,
    ma: usize,
) -> (Vec<NaiveDateTime>, Vec<f64>) {
    let (t, v) = combine(a.0, a.1, b.0, b.1, how);
    let (t, v) = resample_last(&t, &v, freq);
    if ma <= 1 {
        return (t, v);
    }
    let smooth = moving_average(&v, MaKind::Simple, ma);
    t.into_iter()
        .zip(smooth)
        .filter(|(_, s)| !s.is_nan())
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn d(s: &str) -> NaiveDateTime {
        NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
    }

    #[test]
    fn combines_carries_forward_resamples_and_smooths() {
        let at = [
            d("2024-01-01"),
            d("2024-01-02"),
            d("2024-01-03"),
            d("2024-01-08"),
            d("2024-01-09"),
        ];
        let a = [10.0, 12.0, 14.0, 16.0, 18.0];
        let bt = [d("2024-01-02"), d("2024-01-08")];
        let b = [2.0, 4.0];
        let (t, v) = combine(&at, &a, &bt, &b, Combine::Ratio);
        assert_eq!(t, at[1..].to_vec(), "no value before b's first reading");
        assert_eq!(v, vec![6.0, 7.0, 4.0, 4.5]);
        let (t, v) = resample_last(&t, &v, Frequency::Weekly);
        assert_eq!(
            (t, v.clone()),
            (vec![d("2024-01-03"), d("2024-01-09")], vec![7.0, 4.5])
        );
        let (t, v) = calculate(
            (&at, &a),
            (&bt, &b),
            Combine::Difference,
            Frequency::Daily,
            2,
        );
        // Differences 10, 12, 12, 14 -> 2-bar averages 11, 12, 13.
        assert_eq!((t.len(), v), (3, vec![11.0, 12.0, 13.0]));
        let (_, v) = combine(&at, &a, &bt, &[0.0, 4.0], Combine::Ratio);
        assert_eq!(v, vec![4.0, 4.5], "division by zero is left out");
        assert_eq!(Combine::parse("Spread"), Some(Combine::Difference));
        assert_eq!(Combine::parse("log"), None);
    }
}
