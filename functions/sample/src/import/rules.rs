//! The rules an import checks: on each row (errors, except a bar on a
//! closed day), on the series the file makes with what is stored (sessions
//! missing against the exchange calendar, unexplained jumps), and on the
//! sessions both hold (they must agree).

use super::RawRow;
use super::report::{Finding, Report, Severity, rule};
use chrono::NaiveDate;
use engine::Bars;
use std::collections::HashMap;

/// A close-to-close move by more than this factor (up or down) that no
/// recorded split explains is reported: 40%, past which a daily move is far
/// more often a missing split than news.
pub const JUMP: f64 = 1.4;

/// Stored and imported prices of one session agree within this relative
/// difference (a vendor's rounding in its last digit, not a correction).
pub const AGREE: f64 = 1e-9;

fn finding(
    severity: Severity,
    rule: &'static str,
    symbol: Option<&str>,
    line: usize,
    column: Option<&str>,
    message: String,
) -> Finding {
    Finding {
        severity,
        rule,
        symbol: symbol.map(str::to_string),
        line,
        column: column.map(str::to_string),
        message,
    }
}

/// Checks each row and builds the bars of those without errors.
pub(crate) fn check_rows(symbol: Option<&str>, rows: &[RawRow], report: &mut Report) -> Bars {
    let unit = if report.file.ends_with(".parquet") {
        "row"
    } else {
        "line"
    };
    let mut error = |line, column: &str, rule, message| {
        report.add(finding(
            Severity::Error,
            rule,
            symbol,
            line,
            Some(column),
            message,
        ))
    };
    let mut bars = Bars::with_capacity(rows.len());
    let mut seen: HashMap<NaiveDate, usize> = HashMap::new();
    let mut prev: Option<NaiveDate> = None;
    let mut closed = Vec::new();
    for r in rows {
        let [o, h, l, c, v] = r.ohlcv;
        let mut bad = false;
        for (i, x) in r.ohlcv.iter().enumerate() {
            if !x.is_finite() {
                error(
                    r.line,
                    super::COLUMNS[i],
                    rule::NOT_FINITE,
                    format!("{x} is not a finite number"),
                );
                bad = true;
            } else if i < 4 && *x <= 0.0 {
                error(
                    r.line,
                    super::COLUMNS[i],
                    rule::NON_POSITIVE,
                    format!("price {x} is not positive"),
                );
                bad = true;
            }
        }
        if bad {
            continue;
        }
        if v < 0.0 {
            error(
                r.line,
                "Volume",
                rule::NEGATIVE_VOLUME,
                format!("volume {v} is negative"),
            );
            bad = true;
        }
        if h < l {
            error(
                r.line,
                "High",
                rule::HIGH_BELOW_LOW,
                format!("High {h} is below Low {l}"),
            );
            bad = true;
        } else {
            if o > h || o < l {
                error(
                    r.line,
                    "Open",
                    rule::OUTSIDE_RANGE,
                    format!("Open {o} is outside the Low-High range {l}-{h}"),
                );
                bad = true;
            }
            if c > h || c < l {
                error(
                    r.line,
                    "Close",
                    rule::OUTSIDE_RANGE,
                    format!("Close {c} is outside the Low-High range {l}-{h}"),
                );
                bad = true;
            }
        }
        if let Some(first) = seen.get(&r.date) {
            error(
                r.line,
                "Date",
                rule::DUPLICATE_DATE,
                format!("duplicate date {} (first on {unit} {first})", r.date),
            );
            continue;
        }
        if let Some(p) = prev
            && r.date < p
        {
            error(
                r.line,
                "Date",
                rule::OUT_OF_ORDER,
                format!(
                    "{} is before the previous row's {p}; rows must be in ascending date order",
                    r.date
                ),
            );
            continue;
        }
        seen.insert(r.date, r.line);
        prev = Some(r.date);
        if bad {
            continue;
        }
        if !engine::calendar::is_session(r.date) {
            closed.push((r.line, r.date));
        }
        bars.push(
            r.date.and_hms_opt(0, 0, 0).expect("midnight"),
            o,
            h,
            l,
            c,
            v,
        );
    }
    for (line, date) in closed {
        report.add(finding(
            Severity::Warning,
            rule::NOT_A_SESSION,
            symbol,
            line,
            Some("Date"),
            format!("{date} is not a session of the exchange calendar"),
        ));
    }
    bars
}

fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > AGREE * a.abs().max(b.abs())
}

/// `stored` with the sessions of `new` after it; each session both hold
/// must agree, or it is an error naming the row, the column and both values.
/// `lines`: the file line of each bar of `new`.
pub(crate) fn merge(
    symbol: &str,
    stored: &Bars,
    new: &Bars,
    lines: &[usize],
    report: &mut Report,
) -> Bars {
    let index: HashMap<NaiveDate, usize> = (0..stored.len()).map(|i| (stored.date(i), i)).collect();
    let mut out = stored.clone();
    let mut added = Vec::new();
    for k in 0..new.len() {
        let date = new.date(k);
        match index.get(&date) {
            Some(&i) => {
                let pairs = [
                    ("Open", stored.open[i], new.open[k]),
                    ("High", stored.high[i], new.high[k]),
                    ("Low", stored.low[i], new.low[k]),
                    ("Close", stored.close[i], new.close[k]),
                    ("Volume", stored.volume[i], new.volume[k]),
                ];
                for (column, was, now) in pairs {
                    if differs(was, now) {
                        report.add(finding(
                            Severity::Error,
                            rule::OVERLAP_DIFFERS,
                            Some(symbol),
                            lines.get(k).copied().unwrap_or(0),
                            Some(column),
                            format!("{date}: the file has {now}, the stored session has {was}"),
                        ));
                    }
                }
            }
            None => added.push(k),
        }
    }
    if added.is_empty() {
        return out;
    }
    // New sessions usually follow the stored ones; anywhere else, sort.
    let appended = stored.is_empty() || new.date(added[0]) > stored.date(stored.len() - 1);
    for &k in &added {
        out.push(
            new.time[k],
            new.open[k],
            new.high[k],
            new.low[k],
            new.close[k],
            new.volume[k],
        );
    }
    if !appended {
        let mut order: Vec<usize> = (0..out.len()).collect();
        order.sort_by_key(|&i| out.time[i]);
        let mut sorted = Bars::with_capacity(out.len());
        for i in order {
            sorted.push(
                out.time[i],
                out.open[i],
                out.high[i],
                out.low[i],
                out.close[i],
                out.volume[i],
            );
        }
        out = sorted;
    }
    out
}

/// Series rules over `bars` (stored and imported together) from `from` on:
/// sessions of the exchange calendar with no bar, and close-to-close moves
/// past [`JUMP`] that no split in `splits` (date, new shares per old)
/// explains.
pub(crate) fn check_series(
    symbol: &str,
    bars: &Bars,
    from: NaiveDate,
    splits: &[(NaiveDate, f64)],
    report: &mut Report,
) {
    if bars.is_empty() {
        return;
    }
    let dates: Vec<NaiveDate> = (0..bars.len()).map(|i| bars.date(i)).collect();
    let start = dates.partition_point(|d| *d < from);
    // Missing sessions: from the last bar before `from` (or `from`) on.
    let first = if start > 0 {
        dates[start - 1].succ_opt().unwrap_or(from)
    } else {
        from
    };
    let last = dates[dates.len() - 1];
    let held: std::collections::HashSet<NaiveDate> =
        dates[start.saturating_sub(1)..].iter().copied().collect();
    for session in engine::calendar::sessions(first, last) {
        if !held.contains(&session) {
            report.add(finding(
                Severity::Warning,
                rule::MISSING_SESSION,
                Some(symbol),
                0,
                None,
                format!("no bar for the session of {session}"),
            ));
        }
    }
    for i in start.max(1)..bars.len() {
        let ratio = bars.close[i] / bars.close[i - 1];
        if (1.0 / JUMP..=JUMP).contains(&ratio) {
            continue;
        }
        let split: f64 = splits
            .iter()
            .filter(|(d, _)| *d > dates[i - 1] && *d <= dates[i])
            .map(|(_, r)| r)
            .product();
        let adjusted = ratio * split;
        if (1.0 / JUMP..=JUMP).contains(&adjusted) {
            continue;
        }
        report.add(finding(
            Severity::Warning,
            rule::UNEXPLAINED_JUMP,
            Some(symbol),
            0,
            Some("Close"),
            format!(
                "{}: close {} after {} on {} ({:+.1}%), and no recorded split explains it",
                dates[i],
                bars.close[i],
                bars.close[i - 1],
                dates[i - 1],
                (ratio - 1.0) * 100.0
            ),
        ));
    }
}
