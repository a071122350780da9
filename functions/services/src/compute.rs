//! What a task is expected to count against its owner's monthly compute:
//! reserved when it is submitted, while the month's ledger is below the
//! plan's limit, and settled by the worker attempt by attempt
//! (`platform::metering`). Estimates are worked out from the task's kind and
//! parameters alone, so the worker finds again exactly what the submit
//! reserved without storing it.
//!
//! Every attempt counts at least [`MIN_ATTEMPT_COMPUTE_MS`], so most tasks
//! are estimated at that floor; the terms below take over for work that is
//! longer than a second (docs/usage.md#monthly-compute).

use chrono::{Datelike, NaiveDate};
use platform::metering::{MIN_ATTEMPT_COMPUTE_MS, Reserved};
use platform::tasks::TaskKind;
use serde_json::Value;

/// Engine time per strategy and bar, with room (a grid runs at 10-20 ns).
pub const NS_PER_STRATEGY_BAR: u64 = 100;
/// A universe pattern search per ticker, its first reads included (1,500
/// cold symbols take 0.94 s on two cores).
pub const MS_PER_SEARCHED_TICKER: u64 = 1;
/// A scanner backtest per session of its range.
pub const MS_PER_SCANNER_SESSION: u64 = 4;
/// Dates before this count no bars (no market data is older).
const FIRST_BAR: NaiveDate = NaiveDate::from_ymd_opt(1900, 1, 1).expect("a date");

/// An attempt of `ms` of work, as counted.
fn attempt(ms: u64) -> u64 {
    ms.max(MIN_ATTEMPT_COMPUTE_MS)
}

/// Weekdays from `start` to `end` (both given as request text; `start`
/// absent is the spec's 1800-10-01, `end` absent the task's day `today`).
pub fn sessions(start: Option<&Value>, end: Option<&Value>, today: NaiveDate) -> u64 {
    let day = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .and_then(|s| NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok())
    };
    let start = day(start).unwrap_or(FIRST_BAR).max(FIRST_BAR);
    let end = day(end).unwrap_or(today).min(today.max(FIRST_BAR));
    if end < start {
        return 0;
    }
    let days = (end - start).num_days() as u64 + 1;
    // Five of every seven days, and the weekdays of the last partial week.
    let (weeks, rest) = (days / 7, days % 7);
    let first = start.weekday().num_days_from_monday() as u64;
    weeks * 5 + (0..rest).filter(|k| (first + k) % 7 < 5).count() as u64
}

/// A strategy's estimated engine time, in microseconds.
pub fn strategy_us(strategy: &Value, today: NaiveDate) -> u64 {
    let bars = sessions(strategy.get("start_date"), strategy.get("end_date"), today);
    bars * NS_PER_STRATEGY_BAR / 1_000
}

/// A batch chunk of `n` strategies of `strategy_us` each, as counted.
pub fn chunk_ms(n: usize, strategy_us: u64) -> u64 {
    attempt((n as u64 * strategy_us).div_ceil(1_000))
}

/// Tickers a universe search reads.
fn universe_size(universe: &Value) -> u64 {
    let names: Vec<String> = match universe {
        Value::String(s) => s.split(',').map(|t| t.trim().to_lowercase()).collect(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(|t| t.trim().to_lowercase())
            .collect(),
        _ => return 0,
    };
    let named = |n: &str| match n {
        "nasdaq100" => Some(100),
        "sp400" => Some(400),
        "sp500" => Some(500),
        "sp600" => Some(600),
        "sp1500" => Some(1_500),
        "russell3000" | "etf" | "commodity" => Some(3_000),
        _ => None,
    };
    match names.as_slice() {
        [one] => named(one).unwrap_or(1),
        many => many.len() as u64,
    }
}

/// A batch's or chunk's parameters, if its submit reserved compute for it.
fn reserved_for<T: serde::de::DeserializeOwned>(
    params: &Value,
    reserved: fn(&T) -> bool,
) -> Option<T> {
    serde_json::from_value(params.clone()).ok().filter(reserved)
}

/// What a task of `kind` with `params`, created on `today`, reserves: the
/// estimate its kind registered ([`crate::jobs::KINDS`]).
pub fn reserved(kind: TaskKind, params: &Value, today: NaiveDate) -> Reserved {
    crate::jobs::KINDS
        .iter()
        .find(|k| k.kind == kind)
        .map_or_else(Reserved::default, |k| (k.reserved)(params, today))
}

/// A task that starts no other: its own attempt only.
fn own(ms: u64) -> Reserved {
    Reserved {
        own_ms: attempt(ms),
        children_ms: 0,
    }
}

/// A strategy backtest: its engine time over the requested range.
pub fn strategy_backtest(params: &Value, today: NaiveDate) -> Reserved {
    own(strategy_us(params, today).div_ceil(1_000))
}

/// A pattern backtest: one symbol's search, at the floor.
pub fn cpm_backtest(_: &Value, _: NaiveDate) -> Reserved {
    own(0)
}

/// A pattern scan: each ticker of its universe.
pub fn cpm_scan(params: &Value, _: NaiveDate) -> Reserved {
    own(params.get("universe").map_or(0, universe_size) * MS_PER_SEARCHED_TICKER)
}

/// A scanner backtest: each session of its range.
pub fn scanner_backtest(params: &Value, today: NaiveDate) -> Reserved {
    let (start, end) = (params.get("start_date"), params.get("end_date"));
    own(sessions(start, end, today) * MS_PER_SCANNER_SESSION)
}

/// A portfolio: its engine time over each symbol of its universe and each
/// session of its range.
pub fn portfolio_backtest(params: &Value, today: NaiveDate) -> Reserved {
    own(portfolio_us(params, today).div_ceil(1_000))
}

/// A portfolio's estimated engine time, in microseconds.
pub fn portfolio_us(params: &Value, today: NaiveDate) -> u64 {
    let symbols = params
        .get("universe")
        .and_then(Value::as_array)
        .map_or(1, |u| u.len().max(1)) as u64;
    let (start, end) = (params.get("start_date"), params.get("end_date"));
    (symbols * sessions(start, end, today) * NS_PER_STRATEGY_BAR).div_ceil(1_000)
}

/// A batch: its own fan-out at the floor, and every chunk it will create.
pub fn batch_backtest(params: &Value, _: NaiveDate) -> Reserved {
    let Some(p) = reserved_for::<crate::backtest::batch::BatchParams>(params, |p| p.reserved)
    else {
        return Reserved::default();
    };
    let chunk = p.chunk.max(1);
    let (full, rest) = (p.total / chunk, p.total % chunk);
    let mut children = full as u64 * chunk_ms(chunk, p.strategy_us);
    if rest > 0 {
        children += chunk_ms(rest, p.strategy_us);
    }
    Reserved {
        own_ms: MIN_ATTEMPT_COMPUTE_MS,
        children_ms: children,
    }
}

/// A batch's chunk: its strategies, which its batch reserved (nothing when
/// the batch reserved nothing).
pub fn batch_chunk(params: &Value, _: NaiveDate) -> Reserved {
    let Some(p) = reserved_for::<crate::backtest::batch::ChunkParams>(params, |p| p.reserved)
    else {
        return Reserved::default();
    };
    own(chunk_ms(p.len(), p.strategy_us))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn sessions_are_weekdays_of_the_range() {
        let today = d("2026-11-25");
        // 2024-01-01 is a Monday: two whole weeks.
        assert_eq!(
            sessions(
                Some(&json!("2024-01-01")),
                Some(&json!("2024-01-14")),
                today
            ),
            10
        );
        assert_eq!(
            sessions(
                Some(&json!("2024-01-06")),
                Some(&json!("2024-01-07")),
                today
            ),
            0
        );
        assert_eq!(
            sessions(
                Some(&json!("2024-01-05")),
                Some(&json!("2024-01-08")),
                today
            ),
            2
        );
        assert_eq!(
            sessions(
                Some(&json!("2024-02-01")),
                Some(&json!("2024-01-01")),
                today
            ),
            0
        );
        // Defaults: from 1900 (nothing older) to the task's day.
        let all = sessions(None, None, today);
        assert!((33_000..33_500).contains(&all), "{all}");
        assert_eq!(
            sessions(
                Some(&json!("2026-11-23")),
                Some(&json!("2099-01-01")),
                today
            ),
            3,
            "no later than the task's day"
        );
    }

    #[test]
    fn short_tasks_reserve_the_floor_and_long_ones_their_size() {
        let today = d("2026-11-25");
        let one = reserved(TaskKind::StrategyBacktest, &json!({"symbol": "SPX"}), today);
        assert_eq!(
            one,
            Reserved {
                own_ms: 1_000,
                children_ms: 0
            }
        );
        let scan = |u: Value| reserved(TaskKind::CpmScan, &json!({"universe": u}), today).own_ms;
        assert_eq!(scan(json!("sp500")), 1_000);
        assert_eq!(scan(json!("russell3000")), 3_000);
        assert_eq!(scan(json!(vec!["A"; 1_800])), 1_800);
        let scanner = reserved(
            TaskKind::ScannerBacktest,
            &json!({"start_date": "2020-01-01", "end_date": "2024-12-31"}),
            today,
        );
        assert_eq!(scanner.own_ms, 1_305 * 4);
    }

    #[test]
    fn a_batch_reserves_its_fan_out_and_every_chunk_and_a_chunk_finds_its_share() {
        let today = d("2026-11-25");
        let strategy_us = strategy_us(&json!({"start_date": "1990-01-01"}), today);
        assert_eq!(strategy_us, 9_628 * 100 / 1_000);
        let batch = json!({"request": {}, "total": 4_000, "paths": [], "strategy_us": strategy_us, "reserved": true});
        let r = reserved(TaskKind::BatchBacktest, &batch, today);
        // 16 chunks of 250: 250 x 962 us = 241 ms each, counted as 1 s.
        assert_eq!(
            r,
            Reserved {
                own_ms: 1_000,
                children_ms: 16_000
            }
        );
        let long = json!({"request": {}, "total": 260, "paths": [], "strategy_us": 10_000, "reserved": true});
        let r = reserved(TaskKind::BatchBacktest, &long, today);
        assert_eq!(
            r.children_ms,
            2_500 + 1_000,
            "a chunk of 250 x 10 ms, one of 10"
        );
        let chunk = json!({"batch": "b", "first": 250, "varied": vec![json!({}); 10], "strategy_us": 10_000, "reserved": true});
        assert_eq!(reserved(TaskKind::BatchChunk, &chunk, today).own_ms, 1_000);
        // A batch no submit reserved for (the inbox's) settles nothing.
        let unreserved = json!({"request": {}, "total": 4_000, "paths": []});
        assert_eq!(
            reserved(TaskKind::BatchBacktest, &unreserved, today),
            Reserved::default()
        );
    }
}
