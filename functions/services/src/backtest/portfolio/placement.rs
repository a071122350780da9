//! Where a symbol's bars fall on the universe's calendar. Most symbols of
//! a universe trade every session of the calendar from their first bar,
//! so their placement is one offset and their series are laid by copying
//! a slice; the others map bar by bar.

use chrono::NaiveDate;
use engine::Bars;
use engine::fired::Fired;

/// A symbol's bars on the calendar.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// Bars `bar..bar + len` are sessions `session..session + len`; the
    /// others fall before or after the calendar.
    Run {
        bar: usize,
        session: usize,
        len: usize,
    },
    /// Per bar, its session (None: before, after or between the calendar's).
    Scattered(Vec<Option<usize>>),
}

impl Placement {
    pub fn of(bars: &Bars, calendar: &[NaiveDate]) -> Placement {
        let (Some(first), Some(last)) = (calendar.first(), calendar.last()) else {
            return Placement::Scattered(vec![None; bars.len()]);
        };
        let bar = bars.time.partition_point(|t| t.date() < *first);
        let end = bars.time.partition_point(|t| t.date() <= *last);
        if bar == end {
            return Placement::Run {
                bar,
                session: 0,
                len: 0,
            };
        }
        let session = calendar.partition_point(|d| *d < bars.date(bar));
        let len = end - bar;
        let run = session + len <= calendar.len()
            && (0..len).all(|k| calendar[session + k] == bars.date(bar + k));
        if run {
            return Placement::Run { bar, session, len };
        }
        let mut j = 0;
        Placement::Scattered(
            (0..bars.len())
                .map(|i| {
                    let d = bars.date(i);
                    while j < calendar.len() && calendar[j] < d {
                        j += 1;
                    }
                    (j < calendar.len() && calendar[j] == d).then_some(j)
                })
                .collect(),
        )
    }

    /// Bar `i`'s session.
    pub fn session(&self, i: usize) -> Option<usize> {
        match self {
            Placement::Run { bar, session, len } => {
                (i >= *bar && i < bar + len).then(|| session + (i - bar))
            }
            Placement::Scattered(at) => at.get(i).copied().flatten(),
        }
    }

    /// A series of the symbol's bars laid on `n` sessions, NaN where it has
    /// no bar.
    pub fn lay(&self, values: &[f64], n: usize) -> Vec<f64> {
        let mut out = vec![f64::NAN; n];
        match self {
            Placement::Run { bar, session, len } => {
                out[*session..session + len].copy_from_slice(&values[*bar..bar + len]);
            }
            Placement::Scattered(at) => {
                for (v, p) in values.iter().zip(at) {
                    if let Some(p) = p {
                        out[*p] = *v;
                    }
                }
            }
        }
        out
    }

    /// Where `f` (on the symbol's bars) fires on `n` sessions.
    pub fn fired(&self, f: &Fired, n: usize) -> Fired {
        let mut b = vec![false; n];
        let mut i = 0;
        while let Some(t) = f.next_from(i) {
            if let Some(p) = self.session(t) {
                b[p] = true;
            }
            i = t + 1;
        }
        Fired::from_bools(&b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(days: &[u32]) -> Bars {
        let time = days
            .iter()
            .map(|d| {
                NaiveDate::from_ymd_opt(2024, 1, *d)
                    .unwrap()
                    .and_hms_opt(0, 0, 0)
                    .unwrap()
            })
            .collect::<Vec<_>>();
        let n = time.len();
        let v: Vec<f64> = (0..n).map(|k| 10.0 + k as f64).collect();
        Bars {
            time,
            open: v.clone(),
            high: v.clone(),
            low: v.clone(),
            close: v,
            volume: vec![0.0; n],
        }
    }

    fn calendar(days: &[u32]) -> Vec<NaiveDate> {
        days.iter()
            .map(|d| NaiveDate::from_ymd_opt(2024, 1, *d).unwrap())
            .collect()
    }

    /// Bar by bar, as a scattered placement maps it.
    fn by_bar(b: &Bars, cal: &[NaiveDate]) -> Vec<Option<usize>> {
        (0..b.len())
            .map(|i| cal.iter().position(|d| *d == b.date(i)))
            .collect()
    }

    #[test]
    fn a_symbol_on_every_session_is_a_run_and_lays_as_bar_by_bar() {
        let cal = calendar(&[3, 4, 5, 8, 9, 10]);
        for (days, run) in [
            (&[2, 3, 4, 5, 8, 9, 10, 11][..], true),
            (&[5, 8, 9][..], true),
            (&[4, 5, 9, 10][..], false),
            (&[1, 2][..], true),
            (&[3, 4, 6, 8][..], false),
        ] {
            let b = bars(days);
            let p = Placement::of(&b, &cal);
            assert_eq!(matches!(p, Placement::Run { .. }), run, "{days:?}");
            let want = by_bar(&b, &cal);
            for (i, w) in want.iter().enumerate() {
                assert_eq!(p.session(i), *w, "{days:?} bar {i}");
            }
            let laid = p.lay(&b.close, cal.len());
            for (k, v) in laid.iter().enumerate() {
                match want.iter().position(|w| *w == Some(k)) {
                    Some(i) => assert_eq!(*v, b.close[i]),
                    None => assert!(v.is_nan()),
                }
            }
        }
    }
}
