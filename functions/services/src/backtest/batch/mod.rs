//! Batch backtests: many strategies as one job. A batch is a list of
//! strategies, or one strategy and a grid of values for some of its fields
//! (dotted paths); every strategy is checked before anything is queued.
//! The batch is split into chunks, one task and one queue message each;
//! a chunk's rows are its task's result, so a redelivered chunk replaces
//! its rows rather than adding to them.

use crate::{Error, FieldError, Result};
use check::sent;
use platform::marketdata::MarketData;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Strategies per chunk: one queue message, run by one worker.
pub const CHUNK: usize = 250;

/// Portfolios per chunk: each is hundreds of symbols, so a chunk of them
/// is a few seconds of one worker, as a chunk of strategies is.
pub const PORTFOLIO_CHUNK: usize = 20;

/// Chunks a batch on one set of bars is split in at most: past
/// `CHUNK * MAX_CHUNKS` strategies its chunks grow instead, so a million
/// strategies make 256 chunks, not 4,000 (each a task, a message, a claim,
/// a result and a wake-up of the batch's long-polls, whose reads grow with
/// the chunks). Strategies on different bars keep `CHUNK`: each of their
/// chunks holds its strategies' raw returns at once.
pub const MAX_CHUNKS: usize = 256;

/// Where a batch's chunks start: `chunk` strategies each, of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub total: usize,
    pub chunk: usize,
}

impl Layout {
    /// The first strategy of each chunk.
    pub fn firsts(self) -> std::iter::StepBy<std::ops::Range<usize>> {
        (0..self.total).step_by(self.chunk.max(1))
    }
}

/// Strategies per chunk of the batch [`expand`] gave.
pub fn chunk_size(e: &Expanded) -> usize {
    let chunk = if e.portfolio { PORTFOLIO_CHUNK } else { CHUNK };
    if e.same_bars() {
        chunk.max(e.len().div_ceil(MAX_CHUNKS))
    } else {
        chunk
    }
}

/// Bounds on a grid, checked before any path is walked: a strategy is 5
/// fields deep, so longer paths can only build deep structures for nothing.
pub const MAX_AXES: usize = 16;
pub const MAX_KEY_BYTES: usize = 256;
pub const MAX_LINKED_PATHS: usize = 8;
pub const MAX_SEGMENTS: usize = 12;

/// The documented body of `POST /backtest/batch`: one of two shapes.
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(untagged)]
#[allow(dead_code, clippy::large_enum_variant)]
pub enum BatchBody {
    List(StrategyList),
    Grid(StrategyGrid),
    Portfolios(PortfolioGrid),
}

/// A list of strategies, each run as given.
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct StrategyList {
    /// A name to list the batch by.
    name: Option<String>,
    /// Strategies of backtest-service 2.1; at most the plan's batch size
    /// (pro 20,000, backtest 10,000, trial 100).
    #[schema(min_items = 1, max_items = 20000)]
    strategies: Vec<super::request::Strategy>,
    /// How the overfitting statistics are computed; `false` for none (no
    /// returns kept either).
    statistics: Option<StatisticsSetting>,
    /// A walk-forward analysis of the strategies (docs/batches.md#walk-forward).
    walk_forward: Option<WalkForwardParams>,
}

/// One strategy and a grid of values for some of its fields.
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct StrategyGrid {
    /// A name to list the batch by.
    name: Option<String>,
    strategy: super::request::Strategy,
    /// Dotted field paths of `strategy` to non-empty lists of values; the
    /// batch is every combination (the first path varies slowest; a number
    /// in a path indexes a list; a key of comma-separated paths sets them
    /// all to each value). Each combination must be a valid strategy. At
    /// most 16 keys, each at most 256 bytes linking at most 8 paths of at
    /// most 12 segments.
    #[schema(value_type = Option<HashMap<String, Vec<Value>>>, example = json!({"entry.condition.rule.comparison_value": ["30", "25"], "risk_control": ["//21", "-5/10/21"]}))]
    grid: Option<Value>,
    /// How the overfitting statistics are computed; `false` for none (no
    /// returns kept either).
    statistics: Option<StatisticsSetting>,
    /// A walk-forward analysis of the grid (docs/batches.md#walk-forward).
    walk_forward: Option<WalkForwardParams>,
}

/// One portfolio and a grid of values for some of its fields.
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct PortfolioGrid {
    /// A name to list the batch by.
    name: Option<String>,
    /// A portfolio as `POST /backtest/portfolio` takes it.
    portfolio: super::portfolio::request::PortfolioParams,
    /// Dotted field paths of `portfolio` to non-empty lists of values, as
    /// a strategy's grid (docs/portfolios.md#grids).
    #[schema(value_type = Option<HashMap<String, Vec<Value>>>, example = json!({"weights.select.k": [2, 3], "weights.select.by.momentum": [21, 63]}))]
    grid: Option<Value>,
    /// How the overfitting statistics are computed; `false` for none (no
    /// returns kept either).
    statistics: Option<StatisticsSetting>,
    /// A walk-forward analysis of the grid: each point run again from flat
    /// on every window's sessions (docs/portfolios.md#grids).
    walk_forward: Option<WalkForwardParams>,
}

/// `POST /backtest/batch`: `strategies`, or `strategy` with `grid`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct BatchRequest {
    /// A name to list the batch by.
    #[serde(default)]
    pub name: Option<String>,
    /// Strategies of backtest-service 2.1, run as they are.
    #[serde(default)]
    pub strategies: Option<Vec<Value>>,
    /// One strategy, varied by `grid`.
    #[serde(default)]
    pub strategy: Option<Value>,
    /// One portfolio (`POST /backtest/portfolio`'s body), varied by `grid`.
    #[serde(default)]
    pub portfolio: Option<Value>,
    /// Dotted field paths of `strategy` to lists of values; the batch is
    /// every combination (the first path varies slowest). A number in a
    /// path indexes a list.
    #[serde(default)]
    pub grid: Option<Map<String, Value>>,
    /// Blocks and trials of the overfitting statistics, or `false`.
    #[serde(default)]
    pub statistics: Option<StatisticsSetting>,
    /// Windows and metric of a walk-forward analysis.
    #[serde(default)]
    pub walk_forward: Option<WalkForwardParams>,
}

/// The fields of a strategy that choose its bars.
const BAR_FIELDS: [&str; 5] = ["symbol", "frequency", "start_date", "end_date", "csv_mode"];
/// The fields of a portfolio that choose its sessions.
const PORTFOLIO_BAR_FIELDS: [&str; 3] = ["universe", "start_date", "end_date"];

/// A batch's strategies with the values each one varies.
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    pub name: String,
    /// A list batch's strategies (empty for a grid).
    pub strategies: Vec<Value>,
    /// A grid's base strategy: strategy k is it with `varied.get(k)` set.
    pub base: Option<Value>,
    /// Per strategy: grid key -> value (empty for a list batch).
    pub varied: Points,
    /// Whether `base` is a portfolio rather than a strategy.
    pub portfolio: bool,
}

impl Expanded {
    pub fn len(&self) -> usize {
        self.varied.len()
    }

    pub fn is_empty(&self) -> bool {
        self.varied.is_empty()
    }

    /// Whether every strategy runs on the same bars: none of the fields
    /// that choose them (`BAR_FIELDS`) differs between strategies. Then the
    /// chunks' reductions are all the statistics need.
    pub fn same_bars(&self) -> bool {
        let fields: &[&str] = if self.portfolio {
            &PORTFOLIO_BAR_FIELDS
        } else {
            &BAR_FIELDS
        };
        let chooses_bars = |path: &str| {
            let top = path.trim().split('.').next().unwrap_or_default();
            fields.contains(&top)
        };
        match &self.base {
            Some(_) => !self
                .varied
                .paths()
                .iter()
                .any(|key| key.split(',').any(chooses_bars)),
            None => self
                .strategies
                .windows(2)
                .all(|w| BAR_FIELDS.iter().all(|f| w[0].get(f) == w[1].get(f))),
        }
    }

    /// Strategy `k` as it runs.
    pub fn strategy(&self, k: usize) -> Result<Value, FieldError> {
        match &self.base {
            Some(base) => apply(base, &self.varied.get(k)),
            None => Ok(self.strategies[k].clone()),
        }
    }
}

/// `base` with each grid key's value set; a key of several comma-separated
/// paths sets them all (linked parameters, such as one period shared by
/// the entry and the exit rule).
pub fn apply(base: &Value, varied: &Map<String, Value>) -> Result<Value, FieldError> {
    let mut s = base.clone();
    for (key, v) in varied {
        for path in key.split(',') {
            set_path(&mut s, path.trim(), v.clone())?;
        }
    }
    Ok(s)
}

/// A grid key's size, its linked paths and their segments, within bounds.
fn check_key(key: &str) -> Result<(), FieldError> {
    let shown = || {
        let mut end = key.len().min(60);
        while !key.is_char_boundary(end) {
            end -= 1;
        }
        if end < key.len() {
            format!("{}...", &key[..end])
        } else {
            key.to_string()
        }
    };
    if key.len() > MAX_KEY_BYTES {
        return Err(FieldError::new(
            format!("grid.{}", shown()),
            format!("is a key of {} bytes; at most {MAX_KEY_BYTES}", key.len()),
        ));
    }
    let paths = key.split(',').count();
    if paths > MAX_LINKED_PATHS {
        return Err(FieldError::new(
            format!("grid.{}", shown()),
            format!("links {paths} paths; at most {MAX_LINKED_PATHS}"),
        ));
    }
    if let Some(long) = key.split(',').find(|p| p.split('.').count() > MAX_SEGMENTS) {
        return Err(FieldError::new(
            format!("grid.{}", shown()),
            format!(
                "the path '{}' has {} segments; at most {MAX_SEGMENTS}",
                long.trim(),
                long.split('.').count()
            ),
        ));
    }
    Ok(())
}

/// Sets `path` (dotted; numbers index lists) in `v`, creating objects on the way.
fn set_path(v: &mut Value, path: &str, value: Value) -> Result<(), FieldError> {
    let wrong = |reason: String| FieldError::new(format!("grid.{path}"), reason);
    let mut at = v;
    let parts: Vec<&str> = path.split('.').collect();
    if parts.len() > MAX_SEGMENTS {
        return Err(wrong(format!("has more than {MAX_SEGMENTS} segments")));
    }
    for (k, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(wrong("has an empty segment".into()));
        }
        let last = k + 1 == parts.len();
        at = match at {
            Value::Array(a) => {
                let i: usize = part.parse().map_err(|_| {
                    wrong(format!("'{part}' indexes a list, so it must be a number"))
                })?;
                let n = a.len();
                a.get_mut(i)
                    .ok_or_else(|| wrong(format!("index {i} is past the list's {n} items")))?
            }
            Value::Object(o) => {
                if !o.contains_key(*part) {
                    o.insert(
                        part.to_string(),
                        if last {
                            Value::Null
                        } else {
                            Value::Object(Map::new())
                        },
                    );
                }
                o.get_mut(*part).expect("inserted")
            }
            _ => {
                return Err(wrong(format!(
                    "'{part}' is inside a value that is not an object"
                )));
            }
        };
    }
    *at = value;
    Ok(())
}

/// The batch's strategies, at most `cap` (the caller's plan).
pub fn expand(body: &Value, cap: usize) -> Result<Expanded> {
    let req: BatchRequest = crate::error::from_json(body.clone())?;
    if let Some(p) = req.statistics.and_then(StatisticsSetting::settings) {
        p.check()?;
    }
    if let Some(w) = &req.walk_forward {
        w.check()?;
    }
    let name = req.name.clone().unwrap_or_default();
    let too_many = |field: &str, n: usize| {
        Error::invalid(
            field,
            format!("the batch has {n} strategies; the plan allows at most {cap}"),
        )
    };
    let (base, portfolio) = match (req.strategy, req.portfolio) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                "portfolio",
                "give 'strategy' or 'portfolio', not both",
            ));
        }
        (None, Some(_)) if req.strategies.is_some() => {
            return Err(Error::invalid(
                "portfolio",
                "give 'strategies' or 'portfolio', not both",
            ));
        }
        (strategy, None) => (strategy, false),
        (None, Some(p)) => (Some(p), true),
    };
    match (req.strategies, base, req.grid) {
        (Some(list), None, None) => {
            if list.is_empty() {
                return Err(Error::invalid("strategies", "must not be empty"));
            }
            if list.len() > cap {
                return Err(too_many("strategies", list.len()));
            }
            let n = list.len();
            Ok(Expanded {
                name,
                strategies: list,
                base: None,
                varied: Points::List(n),
                portfolio: false,
            })
        }
        (None, Some(base), grid) => {
            let grid = grid.unwrap_or_default();
            let mut axes: Vec<(&String, &Vec<Value>)> = Vec::new();
            if grid.len() > MAX_AXES {
                return Err(Error::invalid(
                    "grid",
                    format!("has {} paths; at most {MAX_AXES} may vary", grid.len()),
                ));
            }
            for (path, values) in &grid {
                check_key(path)?;
                let values = values.as_array().filter(|v| !v.is_empty()).ok_or_else(|| {
                    FieldError::new(format!("grid.{path}"), "must be a non-empty list of values")
                })?;
                let mut listed = std::collections::HashSet::new();
                if let Some((k, v)) = values
                    .iter()
                    .enumerate()
                    .find(|(_, v)| !listed.insert(v.to_string()))
                {
                    return Err(Error::invalid(
                        format!("grid.{path}"),
                        format!(
                            "lists {} twice (item {k}): each value must give a different strategy",
                            sent(v)
                        ),
                    ));
                }
                axes.push((path, values));
            }
            let total = axes
                .iter()
                .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
                .unwrap_or(usize::MAX);
            if total > cap {
                return Err(too_many("grid", total));
            }
            let varied = Points::Grid(
                axes.into_iter()
                    .map(|(path, values)| (path.clone(), values.clone()))
                    .collect(),
            );
            // Every path must be settable; the first combination shows it.
            apply(&base, &varied.get(0))?;
            Ok(Expanded {
                name,
                strategies: Vec::new(),
                base: Some(base),
                varied,
                portfolio,
            })
        }
        (Some(_), Some(_), _) => Err(Error::invalid(
            "strategy",
            "give 'strategies' or 'strategy', not both",
        )),
        (Some(_), None, Some(_)) => Err(Error::invalid(
            "grid",
            "varies 'strategy'; a list of 'strategies' takes none",
        )),
        (None, None, _) => Err(Error::invalid(
            "strategies",
            "is required, or 'strategy' or 'portfolio' with a 'grid'",
        )),
    }
}

impl Expanded {
    /// The longest estimated engine time of its strategies, for the
    /// compute it reserves (a grid's base stands for its strategies).
    pub fn strategy_us(&self, today: chrono::NaiveDate) -> u64 {
        match &self.base {
            Some(base) if self.portfolio => crate::compute::portfolio_us(base, today),
            Some(base) => crate::compute::strategy_us(base, today),
            None => self
                .strategies
                .iter()
                .map(|s| crate::compute::strategy_us(s, today))
                .max()
                .unwrap_or(0),
        }
    }
}

/// A batch request made ready to submit: every strategy checked, the grid's
/// paths named and its compute estimated, for the HTTP submit and the
/// batch-file inbox alike.
pub async fn submission(
    market: &dyn MarketData,
    request: Value,
    cap: usize,
) -> Result<BatchParams> {
    let expanded = expand(&request, cap)?;
    let defaults = check(market, &expanded).await?;
    let paths = expanded.varied.paths();
    Ok(BatchParams {
        total: expanded.len(),
        chunk: chunk_size(&expanded),
        paths,
        strategy_us: expanded.strategy_us(chrono::Utc::now().date_naive()),
        reserved: true,
        warnings: defaults.warnings(),
        defaults_applied: defaults.applied,
        request,
    })
}

mod check;
mod chunk;
mod export;
mod gather;
mod jobs;
mod points;
mod portfolio_walk;
mod portfolios;
mod rows;
pub mod statistics;
mod stored;
mod strategies;
pub mod typed;
pub mod walk_forward;

pub use check::{CHECK_EVERY, Defaults, check};
pub use chunk::{ChunkParams, Item};
pub use export::{Kind, export, kind_of_rows, table, typed_paths};
pub use gather::Gather;
pub use jobs::*;
pub use points::Points;
pub use rows::*;
pub use statistics::{BatchStatistics, StatisticsParams, StatisticsSetting};
pub use stored::ChunkResult;
pub use strategies::*;
pub use walk_forward::{WalkForwardParams, WalkForwardResult};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chunks_grow_past_256_only_for_strategies_on_one_set_of_bars() {
        let base = json!({"symbol": "SPY", "start_date": "2010-01-04"});
        let grid = |axis: &str, n: usize| {
            let values: Vec<Value> = (0..n).map(|k| json!(k.to_string())).collect();
            let request = json!({"strategy": base, "grid": {axis: values}});
            expand(&request, usize::MAX).unwrap()
        };
        let periods = "entry.condition.rule.period";
        assert_eq!(chunk_size(&grid(periods, 1_000)), CHUNK);
        assert_eq!(chunk_size(&grid(periods, CHUNK * MAX_CHUNKS)), CHUNK);
        let million = grid(periods, 1_000_000);
        let size = chunk_size(&million);
        assert_eq!(size, 3_907);
        let layout = Layout {
            total: million.len(),
            chunk: size,
        };
        let firsts: Vec<usize> = layout.firsts().collect();
        assert_eq!(firsts.len(), MAX_CHUNKS);
        assert_eq!(firsts[1], 3_907);
        assert!(*firsts.last().unwrap() < 1_000_000);
        // Different bars: each chunk holds its raw returns, so they stay small.
        assert_eq!(chunk_size(&grid("symbol", 100_000)), CHUNK);
    }

    #[test]
    fn strategies_share_their_bars_unless_a_field_choosing_them_differs() {
        let base = json!({"symbol": "SPY", "start_date": "2010-01-04", "risk_control": "//21"});
        let grid = |varied: Value| expand(&json!({"strategy": base, "grid": varied}), 100).unwrap();
        assert!(grid(json!({"risk_control": ["//10", "//21"]})).same_bars());
        assert!(!grid(json!({"symbol": ["SPY", "QQQ"]})).same_bars());
        assert!(
            !grid(json!({"risk_control,start_date": ["2011-01-03", "2012-01-03"]})).same_bars()
        );
        let list = |other: Value| {
            expand(&json!({"strategies": [base, other]}), 100)
                .unwrap()
                .same_bars()
        };
        assert!(list(
            json!({"symbol": "SPY", "start_date": "2010-01-04", "risk_control": "//5"})
        ));
        assert!(!list(json!({"symbol": "SPY", "risk_control": "//21"})));
        assert!(!list(
            json!({"symbol": "SPY", "start_date": "2010-01-04", "risk_control": "//21", "frequency": "Weekly"})
        ));
    }

    #[test]
    fn a_grid_is_every_combination_first_path_slowest() {
        let body = json!({"strategy": {"symbol": "SPY", "entry": {"condition": {"rule": {"comparison_value": 10}}}},
            "grid": {"entry.condition.rule.comparison_value": [20, 25, 30], "risk_control": ["//21", "-5/10/21"]}});
        let e = expand(&body, 100).unwrap();
        assert_eq!(e.len(), 6);
        let all: Vec<Value> = (0..6).map(|k| e.strategy(k).unwrap()).collect();
        let e = Expanded {
            strategies: all,
            ..e
        };
        assert_eq!(
            e.strategies[0]["entry"]["condition"]["rule"]["comparison_value"],
            20
        );
        assert_eq!(e.strategies[1]["risk_control"], "-5/10/21");
        assert_eq!(
            e.strategies[5]["entry"]["condition"]["rule"]["comparison_value"],
            30
        );
        assert_eq!(
            e.varied.get(3),
            json!({"entry.condition.rule.comparison_value": 25, "risk_control": "-5/10/21"})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(e.strategies[2]["symbol"], "SPY");
        // Lists are indexed by number.
        let e = expand(
            &json!({"strategy": {"rules": [{"x": 1}, {"x": 2}]}, "grid": {"rules.1.x": [5]}}),
            10,
        )
        .unwrap();
        assert_eq!(e.strategy(0).unwrap()["rules"], json!([{"x": 1}, {"x": 5}]));
        // Comma-separated paths vary together.
        let e = expand(
            &json!({"strategy": {"a": {"p": 1}, "b": {"p": 1}}, "grid": {"a.p, b.p": [5, 7], "c": [0, 1]}}),
            10,
        )
        .unwrap();
        assert_eq!(e.len(), 4);
        assert_eq!(
            e.strategy(2).unwrap(),
            json!({"a": {"p": 7}, "b": {"p": 7}, "c": 0})
        );
    }

    #[test]
    fn refusals_name_the_field() {
        for (body, want) in [
            (
                json!({"strategy": {}, "grid": {"a": [1, 2, 3], "b": [1, 2, 3, 4]}}),
                "at most 10",
            ),
            (json!({"strategies": []}), "'strategies': must not be empty"),
            (json!({"strategy": {}, "grid": {"a": []}}), "grid.a"),
            (
                json!({"strategy": {"rules": [1]}, "grid": {"rules.x": [1]}}),
                "rules.x",
            ),
            (
                json!({"strategy": {"rules": [1]}, "grid": {"rules.3": [1]}}),
                "index 3",
            ),
            (json!({"strategies": [{}], "strategy": {}}), "not both"),
            (
                json!({"strategy": {}, "grid": {vec!["a"; 4500].join("."): [1]}}),
                "'grid.a.a.a",
            ),
            (
                json!({"strategy": {}, "grid": {["a"; 13].join("."): [1]}}),
                "13 segments; at most 12",
            ),
            (
                json!({"strategy": {}, "grid": {["a"; 9].join(","): [1]}}),
                "links 9 paths",
            ),
            (
                json!({"strategy": {}, "grid": (0..17).map(|k| (format!("p{k}"), json!([1]))).collect::<Map<String, Value>>()}),
                "at most 16 may vary",
            ),
            (json!({"name": "x"}), "required"),
        ] {
            match expand(&body, 10) {
                Err(Error::Invalid(m)) => assert!(m.to_string().contains(want), "{body}: {m}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }
}
