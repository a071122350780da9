//! Sentiment and trend indicators computed from the simulated prices, with
//! their catalog records. Formulas are documented in docs/sample-data.md.

mod families;

pub use families::families;

use super::rng::{self, Rng};
use chrono::{Datelike, NaiveDateTime, Weekday};
use engine::Bars;
use platform::marketdata::{IndicatorMeta, IndicatorSeries};

/// Sentiment level 0-4 of a reading against its extremes: 0 extreme pessimism,
/// 1 pessimism, 2 neutral, 3 optimism, 4 extreme optimism.
pub fn sentiment_level(value: f64, opt_extreme: f64, pess_extreme: f64) -> f64 {
    let (hi, lo) = (opt_extreme.max(pess_extreme), opt_extreme.min(pess_extreme));
    let inverted = opt_extreme < pess_extreme;
    let band = (hi - lo) / 4.0;
    let raw = if value >= hi {
        4.0
    } else if value >= hi - band {
        3.0
    } else if value > lo + band {
        2.0
    } else if value > lo {
        1.0
    } else {
        0.0
    };
    if inverted { 4.0 - raw } else { raw }
}

pub(crate) fn with_levels(
    time: Vec<NaiveDateTime>,
    close: Vec<f64>,
    opt: f64,
    pess: f64,
) -> IndicatorSeries {
    let sentiment = close
        .iter()
        .map(|v| Some(sentiment_level(*v, opt, pess)))
        .collect();
    IndicatorSeries {
        time,
        close,
        sentiment,
    }
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Optix-style sentiment 0-100: a decaying sum of volatility-scaled returns
/// (crowds grow optimistic after rallies) plus persistent noise.
pub fn optix(rng: &mut Rng, bars: &Bars) -> Vec<f64> {
    let (mut z, mut noise, mut var) = (0.0f64, 0.0f64, 1e-4f64);
    let mut out = Vec::with_capacity(bars.len());
    for i in 0..bars.len() {
        let r = if i == 0 {
            0.0
        } else {
            (bars.close[i] / bars.close[i - 1]).ln()
        };
        var = 0.94 * var + 0.06 * r * r;
        z = 0.9 * z + 0.3 * r / var.sqrt().max(1e-4);
        noise = 0.8 * noise + 3.0 * rng::normal(rng);
        out.push(round2(
            (50.0 + 38.0 * (0.6 * z).tanh() + noise).clamp(0.0, 100.0),
        ));
    }
    out
}

fn sma(x: &[f64], n: usize, i: usize) -> Option<f64> {
    (i + 1 >= n).then(|| x[i + 1 - n..=i].iter().sum::<f64>() / n as f64)
}

/// Trend score 0-10: one point for each of ten trend conditions that holds
/// (price above its 10/20/50/100/200-bar averages, averages stacked, the
/// 50- and 200-bar averages rising over 10 bars). Missing averages score 0.
pub fn trend_score(x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let m = |n| sma(x, n, i);
            let prev = |n| if i >= 10 { sma(x, n, i - 10) } else { None };
            let above =
                |a: Option<f64>, b: Option<f64>| matches!((a, b), (Some(a), Some(b)) if a > b);
            let c = Some(x[i]);
            let checks = [
                above(c, m(10)),
                above(c, m(20)),
                above(c, m(50)),
                above(c, m(100)),
                above(c, m(200)),
                above(m(10), m(20)),
                above(m(20), m(50)),
                above(m(50), m(200)),
                above(m(50), prev(50)),
                above(m(200), prev(200)),
            ];
            checks.iter().filter(|b| **b).count() as f64
        })
        .collect()
}

/// Closes of `bars` divided by the benchmark's close on the same date.
pub fn relative_closes(bars: &Bars, bench: &Bars) -> Vec<f64> {
    let mut j = 0;
    bars.time
        .iter()
        .zip(&bars.close)
        .map(|(t, c)| {
            while j + 1 < bench.len() && bench.time[j + 1] <= *t {
                j += 1;
            }
            c / bench.close[j]
        })
        .collect()
}

pub struct Generated {
    pub meta: IndicatorMeta,
    pub series: IndicatorSeries,
    pub intraday: Option<IndicatorSeries>,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn meta(
    url: &str,
    chart_name: &str,
    market: &str,
    kind: &str,
    updated: &str,
    description: &str,
    opt: f64,
    pess: f64,
    contrary: bool,
    premium: bool,
    groups: &[&str],
    subtype: &str,
    last: f64,
) -> IndicatorMeta {
    IndicatorMeta {
        url: url.into(),
        chart_name: chart_name.into(),
        market_symbol: market.into(),
        kind: kind.into(),
        updated: updated.into(),
        sentiment: format!("{}", sentiment_level(last, opt, pess) as i64),
        description: format!("<p>{description}</p>"),
        opt_extreme: opt,
        pess_extreme: pess,
        contrary,
        premium,
        chart_type: "line".into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        subtype: subtype.into(),
        internal: false,
        intraday: false,
    }
}

/// Optix, trend and (for non-stocks) relative-trend indicators of one symbol.
#[allow(clippy::too_many_arguments)]
pub fn for_symbol(
    seed: u64,
    symbol: &str,
    name: &str,
    group: &str,
    bars: &Bars,
    spx: &Bars,
    intraday: Option<&Bars>,
    stock: bool,
) -> Vec<Generated> {
    let mut rng = rng::stream(seed, &format!("optix-{symbol}"));
    let mut out = Vec::new();
    let o = optix(&mut rng, bars);
    let last = *o.last().unwrap_or(&50.0);
    let mut m = meta(
        &format!("{symbol}_OPTIX"),
        &format!("{name} Optix"),
        symbol,
        "optix",
        "Daily",
        &format!(
            "Optix sentiment of {name}: 0 is extreme pessimism, 100 extreme optimism. Contrary: extremes tend to precede reversals."
        ),
        75.0,
        25.0,
        true,
        stock,
        &[group],
        "",
        last,
    );
    let intraday_series = intraday.map(|ib| {
        let mut irng = rng::stream(seed, &format!("optix-intraday-{symbol}"));
        with_levels(ib.time.clone(), optix(&mut irng, ib), 75.0, 25.0)
    });
    m.intraday = intraday_series.is_some();
    out.push(Generated {
        meta: m,
        series: with_levels(bars.time.clone(), o, 75.0, 25.0),
        intraday: intraday_series,
    });

    let t = trend_score(&bars.close);
    let last = *t.last().unwrap_or(&5.0);
    out.push(Generated {
        meta: meta(
            &format!("{symbol}_TREND"), &format!("{name} Trend Score"), symbol, "trend", "Daily",
            &format!("Trend score of {name}, 0-10: one point per trend condition met (price above its 10/20/50/100/200-day averages, averages stacked and rising)."),
            8.0, 2.0, false, stock, &[group], "", last,
        ),
        series: with_levels(bars.time.clone(), t, 8.0, 2.0),
        intraday: None,
    });
    if !stock && symbol != "SPX" {
        let r = trend_score(&relative_closes(bars, spx));
        let last = *r.last().unwrap_or(&5.0);
        out.push(Generated {
            meta: meta(
                &format!("{symbol}_RELTREND"), &format!("{name} Relative Trend Score"), symbol, "reltrend", "Daily",
                &format!("Trend score 0-10 of {name} relative to the S&P 500 (the ratio of the two closes)."),
                8.0, 2.0, false, false, &[group], "", last,
            ),
            series: with_levels(bars.time.clone(), r, 8.0, 2.0),
            intraday: None,
        });
    }
    out
}

/// One session per ISO week: the one on `day`, or when that is a holiday the
/// last session before it in the week, or else the week's first session.
fn weekly(bars: &Bars, day: Weekday) -> Vec<usize> {
    let target = day.num_days_from_monday();
    let mut idx = Vec::new();
    let mut i = 0;
    while i < bars.len() {
        let week = bars.date(i).iso_week();
        let mut j = i;
        while j < bars.len() && bars.date(j).iso_week() == week {
            j += 1;
        }
        let on_or_before = (i..j)
            .rev()
            .find(|k| bars.date(*k).weekday().num_days_from_monday() <= target);
        idx.push(on_or_before.unwrap_or(i));
        i = j;
    }
    idx
}

fn monthly(bars: &Bars) -> Vec<usize> {
    (0..bars.len())
        .filter(|&i| i + 1 == bars.len() || bars.date(i + 1).month() != bars.date(i).month())
        .collect()
}

/// Catalog records of the market-wide indicators: a table, since they
/// differ only in their values.
const MARKET_WIDE: &str = include_str!("market_wide.tsv");

fn market_wide_meta(code: &str) -> IndicatorMeta {
    let row: Vec<&str> = MARKET_WIDE
        .lines()
        .skip(1)
        .map(|line| line.split('\t').collect::<Vec<_>>())
        .find(|fields| fields[0] == code)
        .unwrap_or_else(|| panic!("{code} is not in market_wide.tsv"));
    let number = |i: usize| -> f64 { row[i].parse().expect("a number in market_wide.tsv") };
    let groups: Vec<&str> = row[7].split(',').collect();
    let mut m = meta(
        row[0],
        row[1],
        "SPX",
        "other",
        row[2],
        row[10],
        number(3),
        number(4),
        row[5] == "true",
        row[6] == "true",
        &groups,
        row[8],
        0.0,
    );
    m.internal = row[9] == "true";
    m
}

/// Market-wide sentiment surveys, ratios and model readings, derived from SPX.
pub fn market_wide(seed: u64, spx: &Bars) -> Vec<Generated> {
    let mut rng = rng::stream(seed, "market-wide");
    let base = optix(&mut rng, spx);
    let mut out = Vec::new();
    let mut push = |code: &str, idx: &[usize], values: Vec<f64>| {
        let mut meta = market_wide_meta(code);
        let time = idx.iter().map(|i| spx.time[*i]).collect();
        let series = with_levels(time, values, meta.opt_extreme, meta.pess_extreme);
        if let Some(last) = series.sentiment.last().copied().flatten() {
            meta.sentiment = format!("{}", last as i64);
        }
        out.push(Generated {
            meta,
            series,
            intraday: None,
        });
    };
    let all: Vec<usize> = (0..spx.len()).collect();
    let mut noise = 0.0;
    let put_call: Vec<f64> = base
        .iter()
        .map(|o| {
            noise = 0.7 * noise + 0.05 * rng::normal(&mut rng);
            ((1.25 - 0.007 * o + noise).clamp(0.35, 1.6) * 1000.0).round() / 1000.0
        })
        .collect();
    push("PUT_CALL", &all, put_call.clone());
    let rank: Vec<f64> = (0..put_call.len())
        .map(|i| {
            let w = &put_call[i.saturating_sub(251)..=i];
            let (lo, hi) = w
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
            if hi > lo {
                round2(100.0 * (put_call[i] - lo) / (hi - lo))
            } else {
                50.0
            }
        })
        .collect();
    push("PUT_CALL_RANK", &all, rank);
    let fear_greed: Vec<f64> = base
        .iter()
        .map(|o| round2((0.8 * o + 10.0 + 4.0 * rng::normal(&mut rng)).clamp(0.0, 100.0)))
        .collect();
    push("FEAR_GREED", &all, fear_greed);
    let swing: Vec<f64> = base
        .iter()
        .map(|o| round2((100.0 - o + 6.0 * rng::normal(&mut rng)).clamp(0.0, 100.0)))
        .collect();
    push("SPX_MODEL_SWING", &all, swing);
    let mid = trend_score(&spx.close)
        .iter()
        .zip(&base)
        .map(|(t, o)| round2((t * 7.0 + (100.0 - o) * 0.3).clamp(0.0, 100.0)))
        .collect();
    push("SPX_MODEL_MIDTERM", &all, mid);

    let wk = weekly(spx, Weekday::Thu);
    let aaii = wk
        .iter()
        .map(|i| round2((15.0 + 0.5 * base[*i] + 5.0 * rng::normal(&mut rng)).clamp(10.0, 70.0)))
        .collect();
    push("AAII_BULL", &wk, aaii);
    let wk = weekly(spx, Weekday::Wed);
    let naaim = wk
        .iter()
        .map(|i| round2((10.0 + 0.9 * base[*i] + 8.0 * rng::normal(&mut rng)).clamp(0.0, 110.0)))
        .collect();
    push("NAAIM", &wk, naaim);
    let wk = weekly(spx, Weekday::Tue);
    let ii = wk
        .iter()
        .map(|i| round2((0.6 + 0.035 * base[*i] + 0.2 * rng::normal(&mut rng)).clamp(0.4, 4.5)))
        .collect();
    push("II_BULL_BEAR", &wk, ii);
    let mo = monthly(spx);
    let mut level = 95.0;
    let conf = mo
        .iter()
        .map(|i| {
            let yr = if *i >= 252 {
                spx.close[*i] / spx.close[i - 252] - 1.0
            } else {
                0.0
            };
            level = (0.85 * level + 0.15 * (95.0 + 120.0 * yr) + 3.0 * rng::normal(&mut rng))
                .clamp(25.0, 145.0);
            round2(level)
        })
        .collect();
    push("CONS_CONF", &mo, conf);
    let breadth: Vec<f64> = base
        .iter()
        .map(|o| round2((o + 10.0 * rng::normal(&mut rng)).clamp(0.0, 100.0)))
        .collect();
    push("SPX_BREADTH_RAW", &all, breadth);
    out
}

/// Monthly returns (percent, close of each month's last session over the
/// previous month's) of a symbol: the series behind the data service's
/// seasonality-month records.
pub fn seasonality_month(symbol: &str, name: &str, bars: &Bars) -> Generated {
    let idx = monthly(bars);
    let mut time = Vec::new();
    let mut close = Vec::new();
    for w in idx.windows(2) {
        time.push(bars.time[w[1]]);
        close.push(
            ((bars.close[w[1]] / bars.close[w[0]] - 1.0) * 100.0 * 10_000.0).round() / 10_000.0,
        );
    }
    let mut m = meta(
        &format!("{symbol}_SEASON_MONTH"),
        &format!("{name} Monthly Seasonality"),
        symbol,
        "other",
        "Monthly",
        &format!(
            "Monthly returns of {name} with each calendar month's average and deviation to date."
        ),
        3.0,
        -3.0,
        false,
        false,
        &["Seasonality"],
        "seasonality_month",
        0.0,
    );
    m.sentiment = "2".into();
    Generated {
        meta: m,
        series: IndicatorSeries {
            sentiment: vec![None; close.len()],
            time,
            close,
        },
        intraday: None,
    }
}

/// Commercial hedgers' net position (weekly, Tuesdays): hedgers sell into
/// rallies, so the position falls as the price rises.
pub fn hedger(seed: u64, symbol: &str, name: &str, bars: &Bars) -> Generated {
    let mut rng = rng::stream(seed, &format!("cot-{symbol}"));
    let wk = weekly(bars, Weekday::Tue);
    let mut pos = 0.0;
    let mut prev = bars.close[wk.first().copied().unwrap_or(0)];
    let values: Vec<f64> = wk
        .iter()
        .map(|i| {
            let r = (bars.close[*i] / prev).ln();
            prev = bars.close[*i];
            pos = 0.97 * pos - 400_000.0 * r + 6_000.0 * rng::normal(&mut rng);
            pos.round()
        })
        .collect();
    let time = wk.iter().map(|i| bars.time[*i]).collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    let (opt, pess) = (hi * 0.8, lo * 0.8);
    let last = *values.last().unwrap_or(&0.0);
    Generated {
        meta: meta(
            &format!("{symbol}_COT_HEDGER"),
            &format!("{name} Hedger Net Position"),
            symbol,
            "other",
            "Weekly",
            &format!("Net futures position of commercial hedgers in {name} (contracts)."),
            opt,
            pess,
            false,
            false,
            &["Hedgers", "Commodities"],
            "",
            last,
        ),
        series: with_levels(time, values, opt, pess),
        intraday: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trend_score_counts_conditions() {
        let up: Vec<f64> = (1..=300).map(|v| v as f64).collect();
        let s = trend_score(&up);
        assert_eq!(s[299], 10.0);
        assert_eq!(s[0], 0.0);
        let down: Vec<f64> = up.iter().rev().cloned().collect();
        assert_eq!(trend_score(&down)[299], 0.0);
    }

    #[test]
    fn every_market_wide_record_is_generated_once() {
        let rows: Vec<Vec<&str>> = MARKET_WIDE
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect())
            .collect();
        assert!(rows.iter().all(|r| r.len() == 11), "11 columns a row");
        let start = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        let days: Vec<NaiveDateTime> = (0..400)
            .map(|d| (start + chrono::Days::new(d)).and_hms_opt(0, 0, 0).unwrap())
            .filter(|t| t.weekday().num_days_from_monday() < 5)
            .collect();
        let close: Vec<f64> = (0..days.len()).map(|i| 100.0 + (i % 17) as f64).collect();
        let spx = Bars {
            time: days,
            open: close.clone(),
            high: close.clone(),
            low: close.clone(),
            volume: vec![1.0; close.len()],
            close,
        };
        let made: Vec<String> = market_wide(7, &spx)
            .into_iter()
            .map(|g| g.meta.url)
            .collect();
        let listed: Vec<&str> = rows.iter().map(|r| r[0]).collect();
        assert_eq!(made, listed);
        let raw = market_wide_meta("SPX_BREADTH_RAW");
        assert!(raw.internal && raw.groups == ["Core"]);
        assert_eq!((raw.opt_extreme, raw.pess_extreme), (80.0, 20.0));
    }

    #[test]
    fn sentiment_levels() {
        assert_eq!(sentiment_level(80.0, 75.0, 25.0), 4.0);
        assert_eq!(sentiment_level(20.0, 75.0, 25.0), 0.0);
        assert_eq!(sentiment_level(50.0, 75.0, 25.0), 2.0);
        // Put/call style: low values are optimism.
        assert_eq!(sentiment_level(0.45, 0.5, 1.0), 4.0);
    }
}
