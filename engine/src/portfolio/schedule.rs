//! When a target-weight portfolio rebalances: the first or last session of
//! each day, week, month or quarter, read from the data's own calendar.

use chrono::{Datelike, NaiveDate};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    Day,
    Week,
    Month,
    Quarter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    First,
    Last,
}

fn period(every: Every, d: NaiveDate) -> (i32, u32) {
    match every {
        Every::Day => (d.year(), d.ordinal()),
        Every::Week => {
            let w = d.iso_week();
            (w.year(), w.week())
        }
        Every::Month => (d.year(), d.month()),
        Every::Quarter => (d.year(), (d.month() - 1) / 3),
    }
}

/// The bars from `start` on that open (`First`) or close (`Last`) their
/// period. A bar opens its period when the bar before it lies in another
/// one (the first bar of the data opens its period); it closes it when the
/// bar after it does (the last bar of the data closes nothing: its period
/// may go on).
pub fn bars(dates: &[NaiveDate], start: usize, every: Every, on: On) -> Vec<usize> {
    bars_followed_by(dates, start, every, on, None)
}

/// [`bars`] of a window cut from longer data: `next` is the data's session
/// after the last of `dates` (none when `dates` run to the data's end). The
/// window's last bar closes its period when `next` lies in another one, as
/// it would inside the data: where a window ends does not move a schedule.
pub fn bars_followed_by(
    dates: &[NaiveDate],
    start: usize,
    every: Every,
    on: On,
    next: Option<NaiveDate>,
) -> Vec<usize> {
    let n = dates.len();
    let after = |i: usize| dates.get(i + 1).copied().or(next);
    (start.min(n)..n)
        .filter(|&i| match on {
            On::First => i == 0 || period(every, dates[i - 1]) != period(every, dates[i]),
            On::Last => after(i).is_some_and(|d| period(every, d) != period(every, dates[i])),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::sessions;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn first_and_last_sessions_of_periods_on_the_nyse_calendar() {
        let days = sessions(d("2023-12-20"), d("2024-04-10"));
        let at =
            |v: Vec<usize>| -> Vec<String> { v.iter().map(|&i| days[i].to_string()).collect() };
        let start = days.iter().position(|x| *x >= d("2024-01-01")).unwrap();
        assert_eq!(
            at(bars(&days, start, Every::Month, On::First)),
            ["2024-01-02", "2024-02-01", "2024-03-01", "2024-04-01"]
        );
        // Good Friday (2024-03-29) is a holiday: March closes on the 28th.
        assert_eq!(
            at(bars(&days, start, Every::Month, On::Last)),
            ["2024-01-31", "2024-02-29", "2024-03-28"]
        );
        assert_eq!(
            at(bars(&days, start, Every::Quarter, On::First)),
            ["2024-01-02", "2024-04-01"]
        );
        let weeks = bars(&days, start, Every::Week, On::First);
        // Monday 2024-01-15 is a holiday: that week opens on Tuesday.
        assert!(at(weeks.clone()).contains(&"2024-01-16".to_string()));
        assert_eq!(weeks.len(), 15);
        assert_eq!(
            bars(&days, start, Every::Day, On::First).len(),
            days.len() - start
        );
        // A window inside one month opens no month.
        let mid = days.iter().position(|x| *x >= d("2024-01-10")).unwrap();
        let end = days.iter().position(|x| *x >= d("2024-01-25")).unwrap();
        assert!(bars(&days[..end], mid, Every::Month, On::First).is_empty());
        // The data's first bar opens its period.
        assert_eq!(bars(&days[start..], 0, Every::Month, On::First)[0], 0);
    }

    #[test]
    fn a_window_s_last_session_closes_its_period_when_the_data_goes_on_into_another() {
        let days = sessions(d("2024-01-02"), d("2024-03-28"));
        let jan31 = days.iter().position(|x| *x == d("2024-01-31")).unwrap();
        let window = &days[..=jan31];
        let at =
            |v: Vec<usize>| -> Vec<String> { v.iter().map(|&i| days[i].to_string()).collect() };
        // Cut at January 31st, the data's last session would close nothing;
        // followed by February 1st, it closes January as it does in the
        // whole data.
        assert!(bars(window, 0, Every::Month, On::Last).is_empty());
        let next = Some(days[jan31 + 1]);
        assert_eq!(
            at(bars_followed_by(window, 0, Every::Month, On::Last, next)),
            ["2024-01-31"]
        );
        assert_eq!(
            bars_followed_by(window, 0, Every::Month, On::Last, next),
            bars(&days, 0, Every::Month, On::Last)[..1]
        );
        // A window cut on January 30th: the 31st follows in the same month.
        let next = Some(days[jan31]);
        assert!(bars_followed_by(&days[..jan31], 0, Every::Month, On::Last, next).is_empty());
        // Openings do not look ahead.
        assert_eq!(
            bars_followed_by(window, 0, Every::Month, On::First, next),
            bars(window, 0, Every::Month, On::First)
        );
    }
}
